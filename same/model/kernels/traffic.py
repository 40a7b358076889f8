"""Global-memory accesses of the CUDA kernels, counted from their loops (no GPU).

:func:`accesses` gives, for each kernel of a minibatch step and each array it touches, the
element reads and writes its threads issue (named as the kernel's parameters), from the kernels' loops
(:mod:`same.model.kernels.cuda`, :mod:`same.model.kernels.cuda_sample`, :mod:`same.model.kernels.cuda_summed`)
and the launch shapes of :mod:`same.model.kernels.launch`.  Every sampling kernel is a warp
(:data:`~same.model.kernels.launch.WARP` lanes) whose lanes share an item's K topics, so a row
of K values costs K reads, and a value every lane needs (a nonzero's μ, c and word, a chunk's
bounds) costs one read per lane; :func:`broadcast` names those arrays, so a model
(``benchmarks/gpu_model.py``) can count them once per warp.  Shared memory is not counted.
tests/model/sim_cases.py counts the same accesses under numba-cuda's simulator on a tiny block
and requires them equal (binary searches within their ⌊log2⌋…⌈log2⌉ steps).

Data-dependent inputs (:class:`Block`): the nonzeros that pass the per-nonzero sampler's early
exit (``drawn``), its (nonzero, topic) pairs with a positive draw (``positive``: an int32
atomicAdd on P each, read and write), the runs of one document among a warp's drawn nonzeros
(``doc_runs``: θ_d read once a run) and their topics with a positive count (``t_positive``: an
atomicAdd on T each), and the documents a warp of :data:`~same.model.kernels.launch.NZ_CHUNK`
nonzeros walks past (``doc_advances``: one row-pointer read each).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import launch

__all__ = ["Block", "accesses", "broadcast", "search_steps", "ITEMSIZE"]

#: Bytes per element of each array (float32 θ, φ, μ, counts and ratios; int64 pointers).
ITEMSIZE = {"indptr": 8, "indices": 4, "data": 4, "theta": 4, "phi_t": 4, "mu": 4, "out": 4,
            "t_out": 4, "p_out": 4, "cptr": 8, "part": 4, "tokens": 8, "ratio_out": 4,
            "ratios": 4, "col_ptr": 8, "col_doc": 8, "col_nz": 8, "counts": 8, "mptr": 8}


@dataclass(frozen=True)
class Block:
    """One minibatch block as the kernels see it.

    n_docs, n_words, nnz, n_topics : D, W, nonzeros, K;
    doc_chunks, word_chunks : Σ ⌈len / CHUNK⌉ over documents and over words (the partial
    sums' real blocks); doc_single, word_single : documents and words of exactly one chunk
    (drawn in their partial-sum block); words_present : words with a nonzero; drawn,
    positive, doc_runs, t_positive, doc_advances : see the module docstring; accumulate :
    whether the per-nonzero sampler adds to P.
    """
    n_docs: int
    n_words: int
    nnz: int
    n_topics: int
    doc_chunks: int
    word_chunks: int
    doc_single: int
    word_single: int
    words_present: int
    drawn: int
    positive: int
    doc_runs: int = 0
    t_positive: int = 0
    doc_advances: int = 0
    accumulate: bool = True


def search_steps(n_segments: int, bound: str) -> int:
    """Reads of one :func:`same.model.kernels.segments.row_of` over ``n_segments`` segments: each
    step halves the range, so ⌊log2 n⌋ (``bound`` "low") to ⌈log2 n⌉ ("high")."""
    if n_segments <= 1:
        return 0
    log = math.log2(n_segments)
    return math.floor(log) if bound == "low" else math.ceil(log)


def broadcast() -> dict[str, set]:
    """kernel → arrays whose reads are the same element for every lane of a warp."""
    walk = {"indptr", "indices"}
    return {"sddmm": walk, "summed_ratio": walk,
            "sample_accumulate": walk | {"data", "mu"},
            "summed_t_partial": {"cptr", "indptr", "mptr", "indices", "data", "tokens"},
            "summed_t_draw": {"cptr", "mptr", "tokens"},
            "summed_p_partial": {"cptr", "col_ptr", "mptr", "col_nz", "col_doc", "ratios",
                                 "counts"},
            "summed_p_draw": {"cptr", "mptr", "counts"}}


def accesses(b: Block, bound: str = "high") -> dict[str, dict[str, tuple[int, int]]]:
    """kernel → array → (element reads, element writes) of one launch each of ``sddmm``,
    ``sample_accumulate`` and the summed sampler's five kernels (one T sweep; the P sweep
    given the ratios) on block ``b``; binary searches at ``bound`` (:func:`search_steps`)."""
    K, N, D, W = b.n_topics, b.nnz, b.n_docs, b.n_words
    T = launch.WARP
    sd, sw = search_steps(D, bound), search_steps(W, bound)
    g_n = launch.sddmm(N)[0]  # warps of NZ_CHUNK nonzeros (sddmm, ratios, per-nonzero draws)
    walk = (T * (g_n * sd + N + b.doc_advances), 0)  # each lane: a search, then the walk
    g_t = launch.summed_partial(D, N)[0]
    g_p = launch.summed_partial(W, N)[0]
    mt, mp = b.doc_chunks - b.doc_single, b.word_chunks - b.word_single  # partial-sum rows
    dn, wn = D - b.doc_single, W - b.word_single  # drawn by the draw kernels
    return {
        "sddmm": {"indptr": walk, "indices": (T * N, 0), "theta": (N * K, 0),
                  "phi_t": (N * K, 0), "out": (0, N)},
        "sample_accumulate": {
            "indptr": walk, "mu": (T * N, 0), "data": (T * N, 0), "indices": (T * b.drawn, 0),
            "theta": (b.doc_runs * K, 0), "phi_t": (b.drawn * K, 0),
            "t_out": (b.t_positive, b.t_positive),
            "p_out": (b.positive, b.positive) if b.accumulate else (0, 0)},
        "summed_t_partial": {
            "cptr": (g_t * T + b.doc_chunks * T * (sd + 3) + mt * T, 0), "mptr": (mt * T, 0),
            "indptr": (b.doc_chunks * T * 2, 0), "data": (T * N, 0), "indices": (T * N, 0),
            "theta": (b.doc_chunks * K + b.doc_single * K, b.doc_single * K),
            "phi_t": (2 * N * K, 0), "part": (0, mt * K), "tokens": (T * b.doc_single, 0)},
        "summed_t_draw": {"cptr": (2 * T * D, 0), "mptr": (dn * T, 0),
                          "theta": (dn * K, dn * K), "part": (mt * K, 0), "tokens": (T * dn, 0)},
        "summed_ratio": {"indptr": walk, "indices": (T * N, 0), "data": (N, 0),
                         "theta": (N * K, 0), "phi_t": (N * K, 0), "ratio_out": (0, N)},
        "summed_p_partial": {
            "cptr": (g_p * T + b.word_chunks * T * (sw + 3) + mp * T, 0), "mptr": (mp * T, 0),
            "col_ptr": (b.word_chunks * T * 2, 0), "col_nz": (T * N, 0), "ratios": (T * N, 0),
            "col_doc": (T * N, 0), "theta": (N * K, 0), "part": (0, mp * K),
            "phi_t": (b.word_chunks * K + b.word_single * K, 0),
            "p_out": (0, b.word_single * K), "counts": (T * b.word_single, 0)},
        "summed_p_draw": {"cptr": (2 * T * W, 0), "mptr": (wn * T, 0), "phi_t": (wn * K, 0),
                          "part": (mp * K, 0), "p_out": (0, wn * K),
                          "counts": (T * (b.words_present - b.word_single), 0)},
    }
