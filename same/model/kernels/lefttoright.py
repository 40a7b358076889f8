"""CPU kernel (numba) of the left-to-right importance sampler for log p(w_d | φ, α).

The estimator, its gate and its documentation are :mod:`same.model.lefttoright`; this module holds
only the compiled loop, here so that numba's cache of it is stamped with every kernel source
file (:mod:`same.model.kernels._cache`): it inlines the counter-based uniforms of
:mod:`same.model.kernels.elements`, and an edit of those must recompile it.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .elements import GOLDEN, mix64, uniform

__all__ = ["l2r_docs", "doc_key", "particle_counter"]

_S32 = np.uint64(32)


@njit(inline="always", cache=True)
def doc_key(base_key, d):  # pragma: no cover - compiled
    """Stream key of document d: ``mix64(base_key + d·γ)`` (uint64)."""
    return mix64(base_key + np.uint64(d) * GOLDEN)


@njit(inline="always", cache=True)
def particle_counter(r, i):  # pragma: no cover - compiled
    """Counter of token i (0-based) of particle r in its document's stream: r·2^32 + i."""
    return (np.uint64(r) << _S32) + np.uint64(i)


@njit(inline="always", cache=True)
def _draw(cum, r, x, s):  # pragma: no cover - compiled
    """Topic of particle r: the first k with cum[k, r] > x (cum[:, r] non-decreasing, its last
    entry s), by binary search; when u·s rounded up to s, the last topic of positive weight."""
    n_topics = cum.shape[0]
    if x < s:
        lo, hi = 0, n_topics - 1
        while lo < hi:
            mid = (lo + hi) >> 1
            if cum[mid, r] > x:
                hi = mid
            else:
                lo = mid + 1
        return lo
    z = n_topics - 1
    while z > 0 and cum[z - 1, r] == s:
        z -= 1
    return z


@njit(parallel=True, cache=True, nogil=True)
def l2r_docs(indptr, indices, data, phi_t, alpha, n_particles, base_key, log_p,
             log_w):  # pragma: no cover - compiled
    """Left-to-right sequential importance sampling of every document of a CSR matrix.

    Parameters
    ----------
    indptr, indices : CSR structure (int32 or int64), word ids ascending within a row
    data : (nnz,) int64 whole counts ≥ 1
    phi_t : (n_words, K) float64 φᵀ, C-contiguous
    alpha : float64 α > 0; n_particles : int R ≥ 1; base_key : uint64 stream key
    log_p : (n_docs,) float64, overwritten with log p̂(w_d) = logsumexp_r(log weight) − log R
    log_w : (n_docs, R) float64, overwritten with each particle's log weight, or (0, R): not
        kept

    Each document's tokens are its nonzeros in order, each word repeated by its count.  Per
    particle r and token i = 0..N−1 (word w): s = Σ_k φ_kw (n_k + α) summed in order
    k = 0..K−1, log weight += log(s / (i + Kα)), then z ~ φ_kw (n_k + α) / s by the uniform
    at counter :func:`particle_counter` (r, i) of stream :func:`doc_key` (base_key, d), and
    n_z += 1.  The R particles walk a document in step (n_k + α and the running sums stored
    K × R, the inner loop across particles, which the CPU's vector units take several at a
    time; each particle's arithmetic is exactly as if it walked alone).  Documents are
    independent (parallel over documents), so the result does not depend on the number of
    threads.  A document without tokens gets log p̂ = 0.
    """
    n_docs = indptr.shape[0] - 1
    n_topics = phi_t.shape[1]
    k_alpha = n_topics * alpha
    keep = log_w.shape[0] > 0
    for d in prange(n_docs):
        nk = np.full((n_topics, n_particles), alpha)  # n_k + α, a column per particle
        cum = np.empty((n_topics, n_particles), dtype=np.float64)
        s = np.empty(n_particles, dtype=np.float64)
        lw = np.zeros(n_particles, dtype=np.float64)
        key = doc_key(base_key, d)
        i = 0
        for j in range(indptr[d], indptr[d + 1]):
            ph = phi_t[indices[j]]
            for _ in range(data[j]):
                for r in range(n_particles):
                    s[r] = 0.0
                for k in range(n_topics):
                    pk = ph[k]
                    nk_k = nk[k]
                    cum_k = cum[k]
                    for r in range(n_particles):
                        s[r] += pk * nk_k[r]
                        cum_k[r] = s[r]
                den = i + k_alpha
                for r in range(n_particles):
                    lw[r] += math.log(s[r] / den)
                    z = _draw(cum, r, uniform(key, particle_counter(r, i)) * s[r], s[r])
                    nk[z, r] += 1.0
                i += 1
        m = lw[0]
        for r in range(n_particles):
            m = max(m, lw[r])
            if keep:
                log_w[d, r] = lw[r]
        acc = 0.0
        for r in range(n_particles):
            acc += math.exp(lw[r] - m)
        log_p[d] = m + math.log(acc) - math.log(n_particles)
