"""Launch configurations of the CUDA kernels, as pure functions (no GPU, no CUDA import).

:mod:`same.model.kernels.cuda` takes every grid and block from here, so :func:`launch_shapes` --
each launch of one minibatch step with its grid, block and the serial work of its threads --
is computed from the launch code itself and can be checked at paper scale without a GPU
(tests/model/test_launch.py).

Every sampling kernel runs blocks of one warp (:data:`WARP` threads) whose lanes share an
item's K topics (:mod:`same.model.kernels.cuda_warp`).  Serial work is counted in *topic
iterations*: one pass of a lane over its topics of one item counts ⌈K / 32⌉ (a lane's share of
a dot product, an axpy, a pass of the cooperative draw); a Poisson draw counts 1.  The bound
this module states, and the tests check at NYTimes' and PubMed's shapes: **no thread runs
more than** :data:`ITEM_PASSES` **· ⌈K / 32⌉ topic iterations per item** (a nonzero, a
chunk entry, a document's or a word's draw) -- no thread loops over the K topics of an item
while the others of its warp wait.  ``Launch.serial`` is the whole launch's worst case per
thread (at most :data:`CHUNK` or :data:`NZ_CHUNK` items a block, in order); the pooled events
of a draw are spread over the 32 lanes (⌈n / 32⌉ binary searches of ⌈log₂ K⌉ steps each) and
not counted, their number being random (mean m·c at most).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["THREADS", "WARP", "MIN_BLOCKS", "DRAW_PASSES", "ITEM_PASSES", "CHUNK", "NZ_CHUNK",
           "Launch", "sddmm", "sample_accumulate", "poisson", "flat", "chunks_bound",
           "parts_bound", "summed_partial", "summed_draw", "summed_ratio", "launch_shapes",
           "paper_shapes", "topics_per_lane", "SM90", "blocks_per_sm"]

#: Threads per block of the elementwise Poisson kernel.
THREADS = 256
#: Threads per block of the sampling kernels: one warp.
WARP = 32
#: Blocks that fill an H100 SXM: two per SM, 132 SMs (NVIDIA H100 Tensor Core GPU
#: Architecture whitepaper, 2022: 132 SMs on the SXM5 part).
MIN_BLOCKS = 2 * 132
#: Passes of a lane over its topics inside one cooperative draw
#: (:func:`~same.model.kernels.cuda_warp.warp_draw`): the rates, listing the topics drawn alone;
#: the Poisson draws, 32 at a time (the topics drawn alone and the pooled count: at most
#: ⌈(K + 1)/32⌉ ≤ ⌈K/32⌉ + 1 a lane, the 1 counted apart); the cumulative rates -- 3, the
#: pooled events aside.  The callers' passes (rows in, draws out) are counted by the callers.
DRAW_PASSES = 3
#: The most passes of a lane over its topics per item in any kernel (the bound of the module
#: docstring): a nonzero of the per-nonzero sampler reads θ_d and φ_w, draws (3 passes and
#: one more draw) and adds its draws to T_d and P_w -- 7, and the draw's 1 (≤ ⌈K/32⌉);
#: a chunk entry of the T sweep reads its row twice (μ, then the axpy).
ITEM_PASSES = 8
#: Most blocks of the elementwise Poisson kernel (then a grid-stride loop).
POISSON_BLOCKS = 4096
#: Entries of one segment per block of the summed sampler's partial sums (a warp walks them
#: in order: 2·⌈K/32⌉ topic iterations each).
CHUNK = 256
#: Nonzeros per block of the SDDMM, the ratios and the per-nonzero sampler (a warp walks
#: them in order).
NZ_CHUNK = 32


@dataclass(frozen=True)
class Launch:
    """One kernel launch: ``grid`` blocks of ``block`` threads; ``serial``: the most topic
    iterations one thread runs in it; ``per_item``: the most per item (see the module
    docstring)."""
    kernel: str
    grid: int
    block: int
    serial: int
    per_item: int = 0


def _cdiv(a: int, b: int) -> int:
    return -(-int(a) // int(b))


def topics_per_lane(n_topics: int) -> int:
    """⌈K / 32⌉: the topics of one lane in a pass over an item's K topics."""
    return _cdiv(n_topics, WARP)


def flat(n: int) -> tuple[int, int]:
    """(grid, block) of a thread per element (:data:`THREADS` a block)."""
    return max(1, _cdiv(n, THREADS)), THREADS


def _per_warp(nnz: int) -> tuple[int, int]:
    return max(1, _cdiv(nnz, NZ_CHUNK)), WARP


def sddmm(nnz: int) -> tuple[int, int]:
    """(grid, block) of ``sddmm``: a warp per :data:`NZ_CHUNK` nonzeros."""
    return _per_warp(nnz)


def summed_ratio(nnz: int) -> tuple[int, int]:
    """(grid, block) of ``summed_ratio``: a warp per :data:`NZ_CHUNK` nonzeros."""
    return _per_warp(nnz)


def sample_accumulate(nnz: int) -> tuple[int, int]:
    """(grid, block) of ``sample_accumulate``: a warp per :data:`NZ_CHUNK` nonzeros."""
    return _per_warp(nnz)


def poisson(n: int) -> tuple[int, int]:
    """(grid, block) of ``poisson_dense`` over ``n`` elements: :data:`THREADS` threads, at
    most :data:`POISSON_BLOCKS` blocks (a grid-stride loop beyond)."""
    return max(1, min(_cdiv(n, THREADS), POISSON_BLOCKS)), THREADS


def chunks_bound(n_segments: int, nnz: int) -> int:
    """At most this many chunks (:mod:`same.model.kernels.segments`) of :data:`CHUNK` entries:
    ⌈len_s / CHUNK⌉ ≤ len_s / CHUNK + 1 summed over the segments."""
    return _cdiv(nnz, CHUNK) + int(n_segments)


def parts_bound(nnz: int) -> int:
    """Rows of partial sums a launch may write: only segments of more than one chunk keep
    theirs (the rest are drawn in their block), ⌈len / CHUNK⌉ < 2·len / CHUNK of those."""
    return max(1, 2 * _cdiv(nnz, CHUNK))


def summed_partial(n_segments: int, nnz: int) -> tuple[int, int]:
    """(grid, block) of ``summed_t_partial`` / ``summed_p_partial``: a warp per chunk (blocks
    past the last chunk return), walking the chunk's entries with its lanes across topics; a
    segment of one chunk is drawn there too."""
    return max(1, chunks_bound(n_segments, nnz)), WARP


def summed_draw(n_segments: int) -> tuple[int, int]:
    """(grid, block) of ``summed_t_draw`` / ``summed_p_draw``: a warp per segment (document
    or word; those of one chunk return), adding the chunks' partial sums, then drawing."""
    return max(1, int(n_segments)), WARP


#: An H100's SM (compute capability 9.0) as its occupancy is computed (CUDA C++ Programming
#: Guide, "Compute Capabilities", table 21; Nsight Compute's "Block Limit" rows for our kernels
#: on an H100, results/gpu/h100_2026-11-27c/ncu.txt, agree): shared memory configured for
#: 233,472 bytes, 1,024 of them reserved per block, a block's allocated in units of 128;
#: 65,536 registers in 4 partitions, a warp's allocated in units of 256 within one partition;
#: at most 32 blocks and 64 warps.
SM90 = {"shared": 233_472, "reserved": 1_024, "shared_unit": 128, "registers": 65_536,
        "partitions": 4, "register_unit": 256, "blocks": 32, "warps": 64}


def blocks_per_sm(registers: int, shared: int, block: int = WARP, sm: dict = SM90) -> dict:
    """How many blocks of ``block`` threads, ``registers`` registers a thread (ptxas) and
    ``shared`` bytes of shared memory, an SM holds at once, by each limit: {"registers",
    "shared", "warps", "blocks" (the SM's own), "active" (the least: blocks resident)}.

    Source: the CUDA occupancy calculation (a warp's registers rounded up to the unit and
    placed whole in one of the partitions; a block's shared memory plus the reserve, rounded
    up to the unit).
    """
    warps = _cdiv(block, WARP)
    per_warp = _cdiv(registers * WARP, sm["register_unit"]) * sm["register_unit"]
    in_partition = (sm["registers"] // sm["partitions"]) // per_warp if per_warp else \
        sm["warps"] // sm["partitions"]
    per_block = _cdiv(shared + sm["reserved"], sm["shared_unit"]) * sm["shared_unit"]
    limits = {"registers": (in_partition * sm["partitions"]) // warps,
              "shared": sm["shared"] // per_block,
              "warps": sm["warps"] // warps, "blocks": sm["blocks"]}
    return limits | {"active": min(limits.values())}


def launch_shapes(n_docs: int, n_words: int, nnz: int, n_topics: int,
                  n_inner: int = 5) -> dict[str, list[Launch]]:
    """Every CUDA launch of one minibatch step, by sampler ("nonzero", "summed", "poisson").

    n_docs, nnz : documents and nonzeros of the minibatch; n_words : W; n_topics : K;
    n_inner : sweeps per step (the summed sampler: n_inner − 1 T sweeps of two launches each,
    the ratios, the P sweep's two launches).  Worst-case bounds: a document holding every
    word, a word in every document of the minibatch.
    """
    kt = topics_per_lane(n_topics)
    draw = DRAW_PASSES * kt + 1  # warp_draw's passes and its one more draw
    # a segment's draw: the row read and the draws zeroed, the draw, the row written
    seg_draw = kt + draw + kt
    doc_chunks = _cdiv(min(n_words, nnz), CHUNK)  # a document holding every word
    word_chunks = _cdiv(n_docs, CHUNK)  # a word in every document
    sd = Launch("sddmm", *sddmm(nnz), NZ_CHUNK * kt, kt)
    # per nonzero: θ_d (when the document changes) and φ_w in, the draw, the draws added;
    # T_d out when the document changes
    sa_item = 2 * kt + draw + 2 * kt
    sa = Launch("sample_accumulate", *sample_accumulate(nnz), NZ_CHUNK * sa_item, sa_item)
    t_part = Launch("summed_t_partial", *summed_partial(n_docs, nnz),
                    kt + CHUNK * 2 * kt + seg_draw, max(2 * kt, seg_draw))
    t_draw = Launch("summed_t_draw", *summed_draw(n_docs), doc_chunks * kt + seg_draw,
                    seg_draw)
    ratio = Launch("summed_ratio", *summed_ratio(nnz), NZ_CHUNK * kt, kt)
    # per entry of a word: θ_d read for μ (c/μ computed here on a GPU) and for the sum
    p_part = Launch("summed_p_partial", *summed_partial(n_words, nnz),
                    kt + CHUNK * 2 * kt + seg_draw, max(2 * kt, seg_draw))
    p_draw = Launch("summed_p_draw", *summed_draw(n_words), word_chunks * kt + seg_draw,
                    seg_draw)
    g, b = poisson(n_docs * n_topics)
    po = Launch("poisson_dense", g, b, _cdiv(n_docs * n_topics, g * b), 1)
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
