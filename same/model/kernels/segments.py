"""Segments and chunks of a compressed index, for the CUDA kernels.

A *segment* is a row of a compressed index ``ptr`` (a document's nonzeros in CSR order, a
word's documents in CSC order): entries ``ptr[s] … ptr[s+1] − 1``.  A *chunk* is a run of at
most ``chunk`` consecutive entries of one segment: segment s has ⌈len_s / chunk⌉ chunks,
numbered from ``chunk_ptr[s]`` (:func:`chunk_ptr`), so the chunks of a block number at most
⌈nnz / chunk⌉ + n_segments (:func:`same.model.kernels.launch.chunks_bound`).  The device functions
are ``@njit`` (numba-cuda compiles them into the kernels; the simulator calls their
``py_func``).
"""

from __future__ import annotations

from numba import njit

__all__ = ["row_of", "advance", "span", "chunk_bounds", "chunk_ptr", "multi_ptr", "rows", "segment_sums", "word_order"]


@njit(inline="always", cache=True)
def row_of(ptr, j):  # pragma: no cover - compiled
    """The segment holding entry j: the largest s < len(ptr) − 1 with ptr[s] ≤ j (ptr
    non-decreasing, ptr[0] ≤ j < ptr[-1]); empty segments are skipped.  Binary search,
    ⌈log2 len(ptr)⌉ steps."""
    lo = 0
    hi = ptr.shape[0] - 2
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ptr[mid] <= j:
            lo = mid
        else:
            hi = mid - 1
    return lo


@njit(inline="always", cache=True)
def advance(ptr, j, s):  # pragma: no cover - compiled
    """The segment of entry j, from a segment s at or before it (entries visited in order):
    s moved past every segment that ends at or before j (one read of ptr per step)."""
    while j >= ptr[s + 1]:
        s += 1
    return s


@njit(inline="always", cache=True)
def span(ptr, first, count, n):  # pragma: no cover - compiled
    """(lo, hi, segment of entry lo) of the ``count`` entries from ``first`` (at most to n):
    a warp's run of nonzeros, its first segment by :func:`row_of` (0 when the run is empty)."""
    hi = min(first + count, n)
    return first, hi, row_of(ptr, first) if first < hi else 0


@njit(inline="always", cache=True)
def chunk_bounds(cptr, ptr, b, chunk):  # pragma: no cover - compiled
    """(segment s, first entry, end entry) of chunk b (b < cptr[-1]): entries
    ptr[s] + i·chunk … min(ptr[s] + (i+1)·chunk, ptr[s+1]) − 1, i = b − cptr[s]."""
    s = row_of(cptr, b)
    lo = ptr[s] + (b - cptr[s]) * chunk
    return s, lo, min(lo + chunk, ptr[s + 1])


def chunk_ptr(xp, ptr, chunk: int):
    """(len(ptr),) int64 on ``xp``: the first chunk of each segment, then the total.
    Computed on the device (no synchronisation)."""
    ptr = xp.asarray(ptr, dtype=xp.int64)
    out = xp.zeros(ptr.shape[0], dtype=xp.int64)
    if ptr.shape[0] > 1:
        out[1:] = xp.cumsum((ptr[1:] - ptr[:-1] + (chunk - 1)) // chunk)
    return out


def multi_ptr(xp, cptr):
    """(len(cptr) − 1,) int64 on ``xp``: for each segment of more than one chunk, the first
    row of its partial sums in a compact array holding only such segments' chunks (at most
    :func:`same.model.kernels.launch.parts_bound` rows); the rest are never read."""
    n = cptr[1:] - cptr[:-1]
    multi = xp.where(n > 1, n, 0)
    return xp.cumsum(multi) - multi


def rows(xp, ptr, n: int):
    """(n,) int64: the segment of each of the n entries (empty segments skipped)."""
    ptr = xp.asarray(ptr, dtype=xp.int64)
    return xp.searchsorted(ptr, xp.arange(n, dtype=xp.int64), side="right") - 1


def segment_sums(xp, ptr, values):
    """(len(ptr) − 1,) float64: Σ of ``values`` over each segment of ``ptr``, as differences of
    one float64 running sum (exact for counts: integers below 2^53); no host synchronisation
    (CuPy's ``bincount`` reads its input's maximum on the host)."""
    ptr = xp.asarray(ptr, dtype=xp.int64)
    run = xp.zeros(values.shape[0] + 1, dtype=xp.float64)
    if values.shape[0]:
        xp.cumsum(values, dtype=xp.float64, out=run[1:])
    return run[ptr[1:]] - run[ptr[:-1]]


def word_order(indptr, indices, n_words: int):
    """(col_ptr, col_doc, col_nz) of a CSR block in CSC order, documents ascending within a
    word (a stable sort: the order of the CPU's counting sort); int64 arrays, computed
    without a host synchronisation."""
    from .cuda_host import _xp

    xp = _xp((indices,))
    indices = xp.asarray(indices)
    col_nz = xp.argsort(indices, kind="stable").astype(xp.int64)
    docs = rows(xp, indptr, int(indices.shape[0]))
    col_ptr = xp.searchsorted(indices[col_nz], xp.arange(n_words + 1, dtype=indices.dtype),
                              side="left").astype(xp.int64)
    return col_ptr, docs[col_nz], col_nz
