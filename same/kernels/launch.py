"""Launch configurations of the CUDA kernels, as pure functions (no GPU, no CUDA import).

:mod:`same.kernels.cuda` takes every grid and block from here, so :func:`launch_shapes` --
each launch of one minibatch step with its grid, block and the longest serial loop any of its
threads runs -- is computed from the launch code itself and can be checked at paper scale
without a GPU (tests/test_launch.py).

Serial loops are counted in *topic iterations*: one pass of a loop over the K topics of one
item (a dot product, an axpy, a pass of :func:`same.kernels.elements.draw_nonzero`) counts K;
a Poisson draw of :func:`poisson` counts 1.  They are worst-case bounds over every corpus of
the shape: a document may hold every word of the vocabulary (``min(W, nnz)`` nonzeros) and a
word may occur in every document of the minibatch; the random number of pooled events of a
draw is not counted (its mean is below K · ``pool_max``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["THREADS", "SCRATCH_BYTES", "SCRATCH", "MIN_BLOCKS", "DRAW_PASSES", "Launch",
           "scratch_threads", "sddmm", "sample_accumulate", "poisson", "per_thread",
           "launch_shapes", "paper_shapes"]

#: Threads per block of the kernels.
THREADS = 128
#: Global memory for the sampling kernels' per-thread scratch (K values of each array of
#: :data:`SCRATCH` per thread); grids are capped to stay under it whatever K. (Local arrays
#: of K values are reserved for every thread an SM can hold: ~6 GiB on an H100 at K = 1024.)
SCRATCH_BYTES = 256 << 20
#: kernel → dtypes of its scratch arrays, (K, threads) each, column t for thread t (coalesced).
SCRATCH = {"sample_accumulate": (np.float64, np.int64, np.int32),
           "summed_t_sweeps": (np.float32, np.float64, np.int64, np.int32),
           "summed_p_sweep": (np.float32, np.float64, np.int64)}
#: Blocks that fill an H100 SXM: two per SM, 132 SMs (NVIDIA H100 Tensor Core GPU
#: Architecture whitepaper, 2022: 132 SMs on the SXM5 part).
MIN_BLOCKS = 2 * 132
#: K-long passes of one :func:`~same.kernels.elements.draw_nonzero` call that draws (z and
#: cum, the list of topics drawn alone, the prefix sums, the guide table, the topics drawn
#: alone at most K) -- 5, the pooled events aside.
DRAW_PASSES = 5
#: Most blocks of the elementwise Poisson kernel (then a grid-stride loop).
POISSON_BLOCKS = 4096


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


def scratch_threads(kernel: str, n_topics: int) -> int:
    """Most threads a launch of ``kernel`` may have for its scratch to fit in
    :data:`SCRATCH_BYTES` (a multiple of :data:`THREADS`, at least one block)."""
    per_thread = n_topics * sum(np.dtype(d).itemsize for d in SCRATCH[kernel])
    return max(1, SCRATCH_BYTES // max(per_thread, 1) // THREADS) * THREADS


def sddmm(n_docs: int) -> tuple[int, int]:
    """(grid, block) of ``sddmm``: a block per document, threads striding over its nonzeros."""
    return max(int(n_docs), 1), THREADS


def sample_accumulate(n_docs: int, n_topics: int) -> tuple[int, int]:
    """(grid, block) of ``sample_accumulate``: a block per document, the grid capped by the
    scratch (:func:`scratch_threads`), blocks striding over documents."""
    return max(1, min(int(n_docs), scratch_threads("sample_accumulate", n_topics) // THREADS)), THREADS


def poisson(n: int) -> tuple[int, int]:
    """(grid, block) of ``poisson_dense`` over ``n`` elements: 256 threads, at most
    :data:`POISSON_BLOCKS` blocks (a grid-stride loop beyond)."""
    return max(1, min(_cdiv(n, 256), POISSON_BLOCKS)), 256


def per_thread(n: int, kernel: str, n_topics: int) -> tuple[int, int]:
    """(grid, block) for a grid-stride loop over ``n`` items, one thread per item up to the
    scratch cap of :func:`scratch_threads` (the summed sampler's kernels)."""
    threads = min(THREADS, max(n, 1))
    cap = max(1, scratch_threads(kernel, n_topics) // threads)
    return max(1, min(_cdiv(n, threads), 65535, cap)), threads


def launch_shapes(n_docs: int, n_words: int, nnz: int, n_topics: int,
                  n_inner: int = 5) -> dict[str, list[Launch]]:
    """Every CUDA launch of one minibatch step, by sampler ("nonzero", "summed", "poisson").

    n_docs, nnz : documents and nonzeros of the minibatch; n_words : W; n_topics : K;
    n_inner : sweeps per step (the summed sampler runs n_inner − 1 T sweeps in one launch).
    Serial loops are the worst-case bounds of the module docstring.
    """
    K = int(n_topics)
    doc_nnz = min(n_words, nnz)  # a document holding every word
    word_docs = n_docs  # a word in every document
    g, b = sddmm(n_docs)
    sd = Launch("sddmm", g, b, _cdiv(doc_nnz, b) * K)
    g, b = sample_accumulate(n_docs, K)  # a block's documents hold at most nnz nonzeros
    per = min(_cdiv(n_docs, g) * _cdiv(doc_nnz, b), _cdiv(nnz, b) + _cdiv(n_docs, g))
    sa = Launch("sample_accumulate", g, b, per * (DRAW_PASSES + 1) * K)
    g, b = per_thread(n_docs, "summed_t_sweeps", K)
    per = min(_cdiv(n_docs, g * b) * doc_nnz, nnz)  # nonzeros of one thread's documents
    st = Launch("summed_t_sweeps", g, b, (max(n_inner - 1, 1) * (2 * per + DRAW_PASSES + 1)
                                          + per) * K)
    g, b = per_thread(n_words, "summed_p_sweep", K)
    per = min(_cdiv(n_words, g * b) * word_docs, nnz)  # documents of one thread's words
    sp = Launch("summed_p_sweep", g, b, (per + DRAW_PASSES) * K)
    g, b = poisson(n_docs * K)
    po = Launch("poisson_dense", g, b, _cdiv(n_docs * K, g * b))
    return {"nonzero": [sd, sa], "summed": [st, sp], "poisson": [po]}


def paper_shapes() -> dict[str, dict]:
    """The paper's minibatches (Zhao, Jiang, Canny §5): NYTimes and PubMed of the corpus
    registry (:data:`same.corpus.REGISTRY`), 1/:data:`same.params.PAPER_MINIBATCHES` of the
    documents per minibatch with the mean share of nonzeros, at K = 256 and 1024.

    Returns {"nytimes K=256": {n_docs, n_words, nnz, n_topics}, ...}.
    """
    from ..corpus import REGISTRY
    from ..params import paper_batch_size

    out = {}
    for name in ("nytimes", "pubmed"):
        info = REGISTRY[name]
        docs = paper_batch_size(info.n_docs)
        nnz = math.ceil(info.nnz * docs / info.n_docs)
        for k in (256, 1024):
            out[f"{name} K={k}"] = {"n_docs": docs, "n_words": info.n_words, "nnz": nnz,
                                    "n_topics": k}
    return out
