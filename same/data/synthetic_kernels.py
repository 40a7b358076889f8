"""Per-document code of :func:`same.data.synthetic.shaped_corpus`: one source for the CPU
(``prange`` over documents, here) and the GPU (a thread per document,
:mod:`same.data.synthetic_cuda`, which numba-cuda compiles from these same ``@njit`` functions).

Random numbers are counter-based, so a document's draws depend only on (seed, document, draw
index), never on the thread that makes them: the uniform for counter ``ctr`` of stream ``key`` is
``splitmix64(key + ctr·γ)`` (the generator of :mod:`same.model.kernels.elements`, copied here in
ten lines because the data layer may not import the model layer).  Streams: the document sizes
are ``key ^ SIZE_SALT`` at counter d; document d's words and counts are keyed by
``doc_key(key, d)`` (words at counters 0, 1, … in draw order, the count of its j-th nonzero at
counter j of the ``^ COUNT_SALT`` stream).

Every draw is an inversion by binary search of a table computed once on the host (the Zipf
cumulative weights, the two Poisson CDFs: their λ is the same for every document), so the
device runs no libm function and no rounding can differ between CPU and GPU: the two paths give
the same matrix bit for bit.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = ["mix64", "uniform", "doc_key", "search", "draw", "doc_size", "fill_doc",
           "sizes_cpu", "fill_cpu", "SIZE_SALT", "COUNT_SALT"]

#: SplitMix64's increment γ (the golden ratio · 2^64) and finaliser multipliers.
GOLDEN, _M1, _M2 = (np.uint64(c) for c in (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9,
                                           0x94D049BB133111EB))
_S30, _S27, _S31, _S11 = (np.uint64(s) for s in (30, 27, 31, 11))
SIZE_SALT = np.uint64(0x5A3E_51DE_0D0C_5123)  #: keys the document sizes' stream
COUNT_SALT = np.uint64(0xC0_4E75_D1B5_4A33)  #: keys a document's counts' stream
_TWO_M53 = 2.0 ** -53


@njit(inline="always", cache=True)
def mix64(z):  # pragma: no cover - compiled
    """SplitMix64 finaliser (Steele, Lea, Flood 2014); uint64 → uint64."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(inline="always", cache=True)
def uniform(key, ctr):  # pragma: no cover - compiled
    """Uniform in (0, 1) with 53 random bits, for counter ``ctr`` (uint64) of stream ``key``."""
    x = mix64(key + ctr * GOLDEN)
    return (np.float64(np.int64(x >> _S11)) + 0.5) * _TWO_M53


@njit(inline="always", cache=True)
def doc_key(key, d):  # pragma: no cover - compiled
    """Stream key of document d's words (its counts: this ``^ COUNT_SALT``)."""
    return mix64(key + (np.uint64(d) + np.uint64(1)) * GOLDEN)


@njit(inline="always", cache=True)
def search(table, lo, hi, x):  # pragma: no cover - compiled
    """First i in [lo, hi) with table[i] > x (hi if none); table non-decreasing."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if table[mid] > x:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(inline="always", cache=True)
def draw(table, offset, u):  # pragma: no cover - compiled
    """Inverse-CDF draw at uniform u from a CDF table whose entry i is P(X ≤ offset + i)
    (last entry 1.0)."""
    n = table.shape[0]
    return offset + min(search(table, 0, n, u), n - 1)


@njit(cache=True)
def doc_size(d, size_cdf, size_offset, n_words, key):  # pragma: no cover - compiled
    """Nonzeros of document d: a Poisson draw (table ``size_cdf``) clipped to [1, W]."""
    k = draw(size_cdf, size_offset, uniform(key ^ SIZE_SALT, np.uint64(d)))
    return min(max(k, 1), n_words)


@njit(cache=True)
def fill_doc(d, start, k, word_cdf, count_cdf, count_offset, key, indices,
             data):  # pragma: no cover - compiled
    """Document d's ``k`` nonzeros into ``indices[start:start + k]`` and ``data[...]``.

    Words: Zipf draws (inversion of ``word_cdf``), a word already in the document drawn again,
    kept sorted by insertion (binary search, then a shift).  Counts: 1 + a Poisson draw
    (table ``count_cdf``), the j-th (in word order) at counter j.
    """
    dkey = doc_key(key, d)
    n_words = word_cdf.shape[0]
    end = start
    ctr = np.uint64(0)
    while end < start + k:
        w = min(search(word_cdf, 0, n_words, uniform(dkey, ctr)), n_words - 1)
        ctr += np.uint64(1)
        pos = start
        hi = end
        while pos < hi:  # first position with indices[pos] >= w
            mid = (pos + hi) >> 1
            if indices[mid] < w:
                pos = mid + 1
            else:
                hi = mid
        if pos < end and indices[pos] == w:
            continue
        for i in range(end, pos, -1):
            indices[i] = indices[i - 1]
        indices[pos] = w
        end += 1
    ckey = dkey ^ COUNT_SALT
    for j in range(k):
        data[start + j] = 1 + draw(count_cdf, count_offset, uniform(ckey, np.uint64(j)))


@njit(parallel=True, cache=True)
def sizes_cpu(n_docs, size_cdf, size_offset, n_words, key):  # pragma: no cover - compiled
    """Every document's nonzero count (int64), in parallel over documents."""
    out = np.empty(n_docs, dtype=np.int64)
    for d in prange(n_docs):
        out[d] = doc_size(d, size_cdf, size_offset, n_words, key)
    return out


@njit(parallel=True, cache=True)
def fill_cpu(indptr, word_cdf, count_cdf, count_offset, key, indices,
             data):  # pragma: no cover - compiled
    """Every document's nonzeros (:func:`fill_doc`), in parallel over documents."""
    for d in prange(indptr.shape[0] - 1):
        fill_doc(d, indptr[d], indptr[d + 1] - indptr[d], word_cdf, count_cdf, count_offset,
                 key, indices, data)
