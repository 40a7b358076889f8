"""Launch configurations of the CUDA kernels, as pure functions (no GPU, no CUDA import).

:mod:`same.model.kernels.cuda` takes every grid and block from here, so :func:`launch_shapes` --
each launch of one minibatch step with its grid, block and the longest serial loop any of its
threads runs -- is computed from the launch code itself and can be checked at paper scale
without a GPU (tests/model/test_launch.py).

Serial loops are counted in *topic iterations*: one pass of a loop over the K topics of one
item (a dot product, an axpy, a pass of :func:`same.model.kernels.elements.draw_nonzero`) counts K;
a Poisson draw of :func:`poisson` counts 1.  They are worst-case bounds over every corpus of
the shape: a document may hold every word of the vocabulary (``min(W, nnz)`` nonzeros) and a
word may occur in every document of the minibatch; the pooled events of a draw are counted
on the few-events path (fewer than K/4, binary searches), not on the guide table's, whose
number is random (its mean is below K · ``pool_max``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["THREADS", "MIN_BLOCKS", "DRAW_PASSES", "CHUNK", "NZ_CHUNK", "Launch", "sddmm",
           "sample_accumulate", "poisson", "flat", "chunks_bound", "parts_bound", "summed_partial",
           "summed_draw", "launch_shapes", "paper_shapes"]

#: Threads per block of the kernels.
THREADS = 128
#: Blocks that fill an H100 SXM: two per SM, 132 SMs (NVIDIA H100 Tensor Core GPU
#: Architecture whitepaper, 2022: 132 SMs on the SXM5 part).
MIN_BLOCKS = 2 * 132
#: K-long passes of one :func:`~same.model.kernels.elements.draw_nonzero` call that draws (z and
#: cum, the list of topics drawn alone, the prefix sums, the guide table, the topics drawn
#: alone at most K) -- 5, the pooled events aside.
DRAW_PASSES = 5
#: Most blocks of the elementwise Poisson kernel (then a grid-stride loop).
POISSON_BLOCKS = 4096
#: Entries of one segment per block of the summed sampler's partial sums (at most
#: ⌈CHUNK / THREADS⌉·K + CHUNK·⌈K / THREADS⌉ topic iterations per thread); also the length
#: of those kernels' shared ratio array, so lower it only.
CHUNK = 1024
#: Nonzeros per block of the per-nonzero sampler (each ≤ K + 3·⌈K / THREADS⌉ topic
#: iterations of its first thread, and ⌈⌈K/4⌉ / THREADS⌉·⌈log₂ K⌉ binary-search steps of
#: the fewer than K/4 pooled events a thread places on the few-events path; the guide
#: table's walks, whose count is random, aside).
NZ_CHUNK = 32


@dataclass(frozen=True)
class Launch:
    """One kernel launch: ``grid`` blocks of ``block`` threads; ``serial``: the most topic
    iterations one thread runs in it (see the module docstring)."""
    kernel: str
    grid: int
    block: int
    serial: int


def _cdiv(a: int, b: int) -> int:
    return -(-int(a) // int(b))


def flat(nnz: int) -> tuple[int, int]:
    """(grid, block) of a thread per nonzero (``sddmm``, ``summed_ratio``)."""
    return max(1, _cdiv(nnz, THREADS)), THREADS


def sddmm(nnz: int) -> tuple[int, int]:
    """(grid, block) of ``sddmm``: a thread per nonzero (:func:`flat`)."""
    return flat(nnz)


def sample_accumulate(nnz: int) -> tuple[int, int]:
    """(grid, block) of ``sample_accumulate``: a block per :data:`NZ_CHUNK` nonzeros."""
    return max(1, _cdiv(nnz, NZ_CHUNK)), THREADS


def poisson(n: int) -> tuple[int, int]:
    """(grid, block) of ``poisson_dense`` over ``n`` elements: 256 threads, at most
    :data:`POISSON_BLOCKS` blocks (a grid-stride loop beyond)."""
    return max(1, min(_cdiv(n, 256), POISSON_BLOCKS)), 256


def chunks_bound(n_segments: int, nnz: int) -> int:
    """At most this many chunks (:mod:`same.model.kernels.segments`) of :data:`CHUNK` entries:
    ⌈len_s / CHUNK⌉ ≤ len_s / CHUNK + 1 summed over the segments."""
    return _cdiv(nnz, CHUNK) + int(n_segments)


def parts_bound(nnz: int) -> int:
    """Rows of partial sums a launch may write: only segments of more than one chunk keep
    theirs (the rest are drawn in their block), ⌈len / CHUNK⌉ < 2·len / CHUNK of those."""
    return max(1, 2 * _cdiv(nnz, CHUNK))


def summed_partial(n_segments: int, nnz: int) -> tuple[int, int]:
    """(grid, block) of ``summed_t_partial`` / ``summed_p_partial``: a block per chunk (blocks
    past the last chunk return), its threads over the chunk's entries, then over topics; a
    segment of one chunk is drawn there too."""
    return max(1, chunks_bound(n_segments, nnz)), THREADS


def summed_draw(n_segments: int) -> tuple[int, int]:
    """(grid, block) of ``summed_t_draw`` / ``summed_p_draw``: a block per segment (document
    or word; those of one chunk return), its threads over topics adding the chunks' partial
    sums, one thread drawing."""
    return max(1, int(n_segments)), THREADS


def launch_shapes(n_docs: int, n_words: int, nnz: int, n_topics: int,
                  n_inner: int = 5) -> dict[str, list[Launch]]:
    """Every CUDA launch of one minibatch step, by sampler ("nonzero", "summed", "poisson").

    n_docs, nnz : documents and nonzeros of the minibatch; n_words : W; n_topics : K;
    n_inner : sweeps per step (the summed sampler: n_inner − 1 T sweeps of two launches each,
    the ratios, the P sweep's two launches).
    Serial loops are the worst-case bounds of the module docstring.
    """
    K = int(n_topics)
    doc_nnz = min(n_words, nnz)  # a document holding every word
    word_docs = n_docs  # a word in every document
    g, b = sddmm(nnz)
    sd = Launch("sddmm", g, b, K)
    ktop = _cdiv(K, THREADS)  # topics of one thread in a block across topics
    few = _cdiv(_cdiv(K, 4), THREADS) * max(1, math.ceil(math.log2(K)))  # few-events path
    sa = Launch("sample_accumulate", *sample_accumulate(nnz), NZ_CHUNK * (K + 3 * ktop + few))
    partial = _cdiv(CHUNK, THREADS) * K + CHUNK * ktop  # the T side's dots, then the sums
    draw = DRAW_PASSES * K + K  # the draw and θ's update, by one thread
    t_part = Launch("summed_t_partial", *summed_partial(n_docs, nnz), partial + draw)
    t_draw = Launch("summed_t_draw", *summed_draw(n_docs), _cdiv(doc_nnz, CHUNK) * ktop + draw)
    ratio = Launch("summed_ratio", *flat(nnz), K)
    p_part = Launch("summed_p_partial", *summed_partial(n_words, nnz),
                    CHUNK * ktop + DRAW_PASSES * K)
    p_draw = Launch("summed_p_draw", *summed_draw(n_words), _cdiv(word_docs, CHUNK) * ktop
                    + DRAW_PASSES * K)
    g, b = poisson(n_docs * K)
    po = Launch("poisson_dense", g, b, _cdiv(n_docs * K, g * b))
    summed = [t_part, t_draw] * max(n_inner - 1, 0) + [ratio, p_part, p_draw]
    return {"nonzero": [sd, sa], "summed": summed, "poisson": [po]}


def paper_shapes() -> dict[str, dict]:
    """The paper's minibatches (Zhao, Jiang, Canny §5): NYTimes and PubMed of the corpus
    registry (:data:`same.data.corpus.REGISTRY`), 1/:data:`same.data.protocol.PAPER_MINIBATCHES` of the
    documents per minibatch with the mean share of nonzeros, at K = 256 and 1024.

    Returns {"nytimes K=256": {n_docs, n_words, nnz, n_topics}, ...}.
    """
    from same.data.corpus import REGISTRY
    from same.data.protocol import paper_batch_size

    out = {}
    for name in ("nytimes", "pubmed"):
        info = REGISTRY[name]
        docs = paper_batch_size(info.n_docs)
        nnz = math.ceil(info.nnz * docs / info.n_docs)
        for k in (256, 1024):
            out[f"{name} K={k}"] = {"n_docs": docs, "n_words": info.n_words, "nnz": nnz,
                                    "n_topics": k}
    return out
