"""CPU kernels (numba) for the two hot steps of SAME Gibbs LDA.

Both loop over the nonzeros of a CSR block of documents, parallel over
contiguous document ranges (``prange`` over ranges, one per thread), and
never build an nnz × K temporary.

Random numbers come from a counter-based generator: the uniform for
(nonzero j, slot k, attempt r) of one call is ``splitmix64(key + ctr·γ)`` with
``ctr = (j·(K+1) + k)·2^20 + r`` and ``key`` fresh for every call (derived from the
estimator's seed and a call counter).  Results therefore do not depend on the
number of threads, and no random stream is ever reused across calls (unlike
BIDMach, which reset its GPU generator with the same seed on every call).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit, prange

__all__ = ["sddmm_csr", "sample_accumulate_csr", "poisson_dense", "poisson_draws", "uniform_draws", "set_threads",
           "doc_ranges"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11, _S20 = (np.uint64(s) for s in (30, 27, 31, 11, 20))
#: Second stream (category choices of pooled events) is keyed by key ^ _CAT_SALT.
_CAT_SALT = np.uint64(0xD1B54A32D192ED03)
_TWO_M53 = 2.0 ** -53
#: λ below which Poisson draws use inversion (above: PTRS, Hörmann 1993, as NumPy).
_INVERSION_MAX = 10.0
_RECIP = np.array([0.0] + [1.0 / i for i in range(1, 64)])
#: Bound on log2(K) used to choose between binary search and a guide table.
_LOG2_TOPICS_BOUND = 8


@njit(inline="always", cache=True)
def _mix64(z):  # pragma: no cover - compiled
    """SplitMix64 finaliser (Steele, Lea, Flood 2014); uint64 → uint64."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(inline="always", cache=True)
def _uniform(key, ctr):  # pragma: no cover - compiled
    """Uniform in (0, 1) with 53 random bits, for counter ``ctr`` of stream ``key``."""
    x = _mix64(key + ctr * _GOLDEN)
    return (np.float64(np.int64(x >> _S11)) + 0.5) * _TWO_M53


@njit(inline="always", cache=True)
def _poisson(lam, key, base):  # pragma: no cover - compiled
    """Exact Poisson(λ) draw using the uniforms at counters base, base+1, ...

    λ < 10: inversion from one uniform; when u < 1 − λ (≤ e^−λ = P(0)) the
    draw is 0 without evaluating exp: the common case for the small λ of a
    trained model.  λ ≥ 10: PTRS transformed rejection (as NumPy).
    """
    if lam <= 0.0:
        return 0
    if lam < _INVERSION_MAX:
        u = _uniform(key, base)
        if u < 1.0 - lam:
            return 0
        p = math.exp(-lam)
        cdf = p
        k = 0
        while u > cdf and p > 0.0:
            k += 1
            p *= lam * _RECIP[k] if k < 64 else lam / k
            cdf += p
        return k
    slam = math.sqrt(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2.0)
    r = np.uint64(0)
    while True:
        uu = _uniform(key, base + r) - 0.5
        v = _uniform(key, base + r + np.uint64(1))
        r += np.uint64(2)
        us = 0.5 - abs(uu)
        k = math.floor((2.0 * a / us + b) * uu + lam + 0.43)
        if us >= 0.07 and v <= vr:
            return int(k)
        if k < 0 or (us < 0.013 and v > us):
            continue
        if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                <= -lam + k * math.log(lam) - math.lgamma(k + 1.0)):
            return int(k)


@njit(parallel=True, cache=True, nogil=True)
def sddmm_csr(indptr, indices, theta, phi_t, out):  # pragma: no cover - compiled
    """μ_j = Σ_k θ[d, k] φᵀ[w_j, k] for every nonzero j of document d (SDDMM).

    indptr : (D+1,) int; indices : (nnz,) int word ids; theta : (D, K);
    phi_t : (W, K) C-contiguous (φ transposed); out : (nnz,) written in place.
    """
    n_docs = indptr.shape[0] - 1
    n_topics = theta.shape[1]
    for d in prange(n_docs):
        for j in range(indptr[d], indptr[d + 1]):
            w = indices[j]
            s = 0.0
            for k in range(n_topics):
                s += theta[d, k] * phi_t[w, k]
            out[j] = s
    return out


@njit(parallel=True, cache=True, nogil=True)
def sample_accumulate_csr(indptr, indices, data, theta, phi_t, mu, n_samples, key, bounds,
                          doc_topic_out, topic_word_out, accumulate_topic_word, pool_max):  # pragma: no cover
    """Factored SAME Poisson sweep (paper Alg. 3 lines 4–11; BIDMach ``__LDA_Gibbs``).

    For every nonzero j = (d, w) with count c and every topic k:
    z ~ Poisson(λ_k = m · c · θ_dk φ_kw / μ_j); T[d, k] += z; P_r[w, k] += z.

    Exact, and cheaper than K independent draws: topics with λ_k ≥ ``pool_max`` are
    drawn one by one; the rest are pooled: n ~ Poisson(Σ_small λ), and each of
    the n events picks topic k with probability λ_k / Σ_small λ (Poisson
    splitting), so the common case of a peaked model costs K multiply-adds,
    one uniform and a few draws.

    bounds : (n_ranges+1,) document boundaries; range r accumulates into
    ``topic_word_out[r]`` (shape (n_ranges, W, K)), summed by the caller.
    doc_topic_out : (D, K) zeroed by the caller.
    """
    n_topics = theta.shape[1]
    n_ranges = bounds.shape[0] - 1
    slots = np.uint64(n_topics + 1)
    pool_slot = np.uint64(n_topics)
    cat_key = key ^ _CAT_SALT
    n_guide = n_topics
    for r in prange(n_ranges):
        cum = np.empty(n_topics, dtype=np.float64)  # prefix sums of pooled λ
        guide = np.empty(n_guide, dtype=np.int64)  # guide table (Chen & Asau 1974)
        for d in range(bounds[r], bounds[r + 1]):
            for j in range(indptr[d], indptr[d + 1]):
                w = indices[j]
                if mu[j] <= 0.0:
                    continue
                scale = n_samples * data[j] / mu[j]
                base = np.uint64(j) * slots
                pooled = 0.0
                for k in range(n_topics):
                    lam = scale * theta[d, k] * phi_t[w, k]
                    if lam >= pool_max:
                        z = _poisson(lam, key, (base + np.uint64(k)) << _S20)
                        if z > 0:
                            doc_topic_out[d, k] += z
                            if accumulate_topic_word:
                                topic_word_out[r, w, k] += z
                    else:
                        pooled += lam
                    cum[k] = pooled
                if pooled <= 0.0:
                    continue
                ctr = (base + pool_slot) << _S20
                n = _poisson(pooled, key, ctr)
                if n == 0:
                    continue
                if n * _LOG2_TOPICS_BOUND < 2 * n_topics:
                    # few events: binary search of the prefix sums per event, O(n log K)
                    for e in range(n):
                        x = _uniform(cat_key, ctr + np.uint64(e)) * pooled
                        lo, hi = 0, n_topics - 1
                        while lo < hi:  # first k with cum[k] > x
                            mid = (lo + hi) >> 1
                            if cum[mid] > x:
                                hi = mid
                            else:
                                lo = mid + 1
                        doc_topic_out[d, lo] += 1
                        if accumulate_topic_word:
                            topic_word_out[r, w, lo] += 1
                    continue
                # many events: guide table (Chen & Asau 1974), O(K + n);
                # guide[i] = first topic whose cumulative pooled λ exceeds i/G of the total
                k = 0
                step = pooled / n_guide
                for i in range(n_guide):
                    x = step * i
                    while k < n_topics - 1 and cum[k] <= x:
                        k += 1
                    guide[i] = k
                for e in range(n):
                    u = _uniform(cat_key, ctr + np.uint64(e))
                    x = u * pooled
                    i = int(u * n_guide)
                    k = guide[i]
                    while k < n_topics - 1 and cum[k] <= x:
                        k += 1
                    doc_topic_out[d, k] += 1
                    if accumulate_topic_word:
                        topic_word_out[r, w, k] += 1


@njit(parallel=True, cache=True, nogil=True)
def poisson_dense(lam, key, out):  # pragma: no cover - compiled
    """out.flat[i] ~ Poisson(lam.flat[i]) from counter i of stream ``key`` (C-contiguous)."""
    flat_lam = lam.ravel()
    flat_out = out.ravel()
    for i in prange(flat_lam.shape[0]):
        flat_out[i] = _poisson(flat_lam[i], key, np.uint64(i) << _S20)
    return out


@njit(cache=True)
def poisson_draws(lam, key):  # pragma: no cover - compiled
    """Draw Poisson(lam[i]) with the kernel's generator (counter i); for tests."""
    out = np.empty(lam.shape[0], dtype=np.int64)
    for i in range(lam.shape[0]):
        out[i] = _poisson(lam[i], key, np.uint64(i) << _S20)
    return out


@njit(cache=True)
def uniform_draws(n, key):  # pragma: no cover - compiled
    """n uniforms from counters 0..n-1 of stream ``key``; for tests."""
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        out[i] = _uniform(key, np.uint64(i))
    return out


def doc_ranges(indptr: np.ndarray, n_ranges: int) -> np.ndarray:
    """Split documents into ``n_ranges`` contiguous ranges of about equal nonzeros."""
    n_docs = len(indptr) - 1
    targets = np.linspace(0, indptr[-1], n_ranges + 1)
    bounds = np.searchsorted(indptr, targets, side="left").astype(np.int64)
    bounds[0], bounds[-1] = 0, n_docs
    return np.maximum.accumulate(np.minimum(bounds, n_docs))


def set_threads(n: int | None) -> int:
    """Pin numba's thread count (None = leave as is); returns the count in force."""
    if n is not None:
        numba.set_num_threads(int(n))
    return numba.get_num_threads()
