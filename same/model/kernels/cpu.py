"""CPU kernels (numba) for the hot steps of SAME Gibbs LDA.

All loop over the nonzeros of a CSR block of documents, parallel over documents
(or words), and never build an nnz × K temporary.  The per-element code
(uniforms, Poisson draws, the draws of one nonzero, μ of one nonzero) lives in
:mod:`same.model.kernels.elements`, which the CUDA kernels (:mod:`same.model.kernels.cuda`) call
too.  Counts (T, P) are int32: exact, so sums over threads do not
depend on how documents are split among them (float32 would lose integers above
2^24 per cell).  Rates and row totals are computed in float64; φ and θ are stored
as float32.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange

from .elements import (
    axpy,
    doc_tokens,
    dot_f64,
    draw_at,
    element_counter,
    mu_columns,
    poisson,
    ratio,
    summed_p_word,
    summed_t_draw,
    uniform,
)

__all__ = ["sddmm_csr", "sample_accumulate_csr", "summed_t_block", "summed_t_sweeps_csr", "summed_p_sweep_csr",
           "word_order", "incnorm_t", "poisson_dense", "poisson_draws", "uniform_draws",
           "set_threads", "doc_ranges"]

@njit(parallel=True, cache=True, nogil=True)
def sddmm_csr(indptr, indices, theta, phi_t, out):  # pragma: no cover - compiled
    """μ_j = Σ_k θ[d, k] φᵀ[w_j, k] for every nonzero j of document d (SDDMM).

    indptr : (D+1,) int; indices : (nnz,) int word ids; theta : (D, K);
    phi_t : (W, K) C-contiguous (φ transposed); out : (nnz,) written in place.
    Each μ_j is :func:`~same.model.kernels.elements.dot_f64`'s value bit for bit (the evaluator's,
    and the CUDA kernel's under the simulator; on a GPU NVVM may fuse its multiply-adds);
    four nonzeros of a document at a time (:func:`_dot_f64_4`).
    """
    for d in prange(indptr.shape[0] - 1):
        th = theta[d]
        j, end = indptr[d], indptr[d + 1]
        while j + 4 <= end:
            out[j], out[j + 1], out[j + 2], out[j + 3] = _dot_f64_4(
                th, phi_t[indices[j]], phi_t[indices[j + 1]], phi_t[indices[j + 2]],
                phi_t[indices[j + 3]])
            j += 4
        while j < end:
            out[j] = dot_f64(th, phi_t[indices[j]])
            j += 1
    return out


@njit(inline="always", cache=True)
def _dot_f64_4(a, b0, b1, b2, b3):  # pragma: no cover - compiled
    """Four :func:`~same.model.kernels.elements.dot_f64` (Σ_k a_k b_k, products in the arrays'
    precision, float64 sums in order k) interleaved: each sum is the same chain of additions,
    but four independent chains hide the add latency that bounds one (about 2× faster)."""
    s0, s1, s2, s3 = np.float64(0.0), np.float64(0.0), np.float64(0.0), np.float64(0.0)
    for k in range(a.shape[0]):
        t = a[k]
        s0 += t * b0[k]
        s1 += t * b1[k]
        s2 += t * b2[k]
        s3 += t * b3[k]
    return s0, s1, s2, s3


@njit(parallel=True, cache=True, nogil=True)
def sample_accumulate_csr(indptr, indices, data, theta, phi_t, mu, n_samples, key, bounds,
                          doc_topic_out, topic_word_out, accumulate_topic_word,
                          pool_max):  # pragma: no cover - compiled
    """Factored SAME Poisson sweep (paper Alg. 3 lines 4–11; BIDMach ``__LDA_Gibbs``).

    For every nonzero j = (d, w) with count c and every topic k:
    z ~ Poisson(λ_k = m · c · θ_dk φ_kw / μ_j) (:func:`same.model.kernels.elements.draw_at`, the
    same per-element code as the CUDA kernel); T[d, k] += z; P_r[w, k] += z.
    bounds : (n_ranges+1,) document boundaries; range r accumulates into
    ``topic_word_out[r]`` (int32, shape (n_ranges, W, K), zeroed and summed by the caller).
    doc_topic_out : (D, K) int32, zeroed by the caller.
    """
    n_topics = theta.shape[1]
    for r in prange(bounds.shape[0] - 1):
        cum = np.empty(n_topics, dtype=np.float64)
        guide = np.empty(n_topics, dtype=np.int64)
        z = np.empty(n_topics, dtype=np.int32)
        p_all = topic_word_out[r]
        for d in range(bounds[r], bounds[r + 1]):
            t_row = doc_topic_out[d]
            for j in range(indptr[d], indptr[d + 1]):
                if mu[j] <= 0.0:
                    continue
                w = indices[j]
                if draw_at(j, data[j], n_samples, mu[j], theta[d], phi_t[w], key, pool_max,
                           cum, guide, z):
                    p_row = p_all[w if accumulate_topic_word else 0]
                    for k in range(n_topics):
                        t_row[k] += z[k]
                        if accumulate_topic_word:
                            p_row[k] += z[k]


@njit(cache=True, nogil=True)
def summed_t_block(lo, hi, indptr, indices, data, theta, phi_t, n_samples, prior_scale,
                   doc_topic_prior, keys, ratio_out, pool_max, carry_keys,
                   carry_out):  # pragma: no cover - compiled
    """The summed sampler's T sweeps for documents lo..hi−1, the CPU's form of
    :func:`~same.model.kernels.elements.summed_t_doc` (the same values, bit for bit).

    Each document's φ rows are gathered once into two scratch layouts, rows (n_d × K) for the
    (c/μ)·φ accumulation and columns (K × n_d) for μ, which :func:`~.elements.mu_columns`
    computes for all n_d nonzeros at once in :func:`~.elements.dot_seq`'s order; every sweep
    then reads the scratch (in cache) instead of gathering φ again.  The draws are
    :func:`~.elements.summed_t_draw`, shared with the GPU.

    ``carry_keys`` (length 0 or 1): with a key, one more T draw from the last θ with that key
    (its acc from the ratios just computed) goes to ``carry_out[d]``, θ being left as the P
    sweep needs it: the values of a second call with that key on a copy of θ, without
    gathering φ and computing μ again.
    """
    n_topics = theta.shape[1]
    n_max = 1
    for d in range(lo, hi):
        n_max = max(n_max, indptr[d + 1] - indptr[d])
    cols = np.empty((n_topics, n_max), dtype=theta.dtype)
    mu = np.empty(n_max, dtype=theta.dtype)
    acc = np.empty(n_topics, dtype=theta.dtype)
    cum = np.empty(n_topics, dtype=np.float64)
    guide = np.empty(n_topics, dtype=np.int64)
    t_row = np.empty(n_topics, dtype=np.int32)
    for d in range(lo, hi):
        j0, n = indptr[d], indptr[d + 1] - indptr[d]
        th = theta[d]
        for i in range(n):
            ph = phi_t[indices[j0 + i]]
            for k in range(n_topics):
                cols[k, i] = ph[k]
        tokens = doc_tokens(d, indptr, data)
        for s in range(keys.shape[0]):
            mu_columns(th, cols, n, mu)
            _t_draw_from_mu(d, j0, n, indices, data, phi_t, mu, tokens, th, n_samples,
                            prior_scale, doc_topic_prior, keys[s], pool_max, acc, cum, guide,
                            t_row)
        mu_columns(th, cols, n, mu)
        for i in range(n):
            ratio_out[j0 + i] = ratio(data[j0 + i], mu[i])
        if carry_keys.shape[0] > 0:
            co = carry_out[d]
            co[:] = th
            _t_draw_from_mu(d, j0, n, indices, data, phi_t, mu, tokens, co, n_samples,
                            prior_scale, doc_topic_prior, carry_keys[0], pool_max, acc, cum,
                            guide, t_row)


@njit(inline="always", cache=True)
def _t_draw_from_mu(d, j0, n, indices, data, phi_t, mu, tokens, row, n_samples, prior_scale,
                    doc_topic_prior, key, pool_max, acc, cum, guide,
                    t_row):  # pragma: no cover - compiled
    """One T draw of document d (its n nonzeros from j0) given μ of its nonzeros:
    acc_k = Σ_i c_i φ_k,w_i / μ_i, then :func:`~.elements.summed_t_draw` into ``row``."""
    for k in range(acc.shape[0]):
        acc[k] = 0.0
    for i in range(n):
        axpy(acc, ratio(data[j0 + i], mu[i]), phi_t[indices[j0 + i]])
    summed_t_draw(d, tokens, acc, row, n_samples, prior_scale, doc_topic_prior, key, pool_max,
                  cum, guide, t_row)


@njit(parallel=True, cache=True, nogil=True)
def summed_t_sweeps_csr(indptr, indices, data, theta, phi_t, n_samples, prior_scale,
                        doc_topic_prior, keys, ratio_out, pool_max, bounds, carry_keys,
                        carry_out):  # pragma: no cover - compiled
    """``len(keys)`` summed-sampler sweeps drawing T, each document on its own, fused
    (:func:`summed_t_block` over the document ranges ``bounds``, in parallel).

    A document's θ depends on its own nonzeros only, so every sweep runs while they are in
    cache, and the result does not depend on ``bounds`` (nor the thread count); no
    nnz-sized temporaries.  Finally ``ratio_out[j] = c_j / μ_j`` with the last θ, and with a
    carry key the carried θ in ``carry_out`` (:func:`summed_t_block`).
    """
    for r in prange(bounds.shape[0] - 1):
        summed_t_block(bounds[r], bounds[r + 1], indptr, indices, data, theta, phi_t,
                       n_samples, prior_scale, doc_topic_prior, keys, ratio_out, pool_max,
                       carry_keys, carry_out)


@njit(cache=True, nogil=True)
def word_order(indptr, indices, n_words, col_ptr, col_doc, col_nz):  # pragma: no cover
    """Counting sort of a CSR block's nonzeros by word (its CSC order), documents ascending.

    col_ptr : (W+1,) int64; col_doc, col_nz : (nnz,) int64, written in place.
    """
    col_ptr[:] = 0
    for j in range(indices.shape[0]):
        col_ptr[indices[j] + 1] += 1
    for w in range(n_words):
        col_ptr[w + 1] += col_ptr[w]
    fill = col_ptr[:-1].copy()
    for d in range(indptr.shape[0] - 1):
        for j in range(indptr[d], indptr[d + 1]):
            w = indices[j]
            col_doc[fill[w]] = d
            col_nz[fill[w]] = j
            fill[w] += 1


#: word chunks of the P sweep (each allocates its scratch once; words are independent
#: elements, so the chunking changes no result)
_P_CHUNKS = 256


@njit(parallel=True, cache=True, nogil=True)
def summed_p_sweep_csr(col_ptr, col_doc, col_nz, ratio, counts, theta, phi_t, n_samples, key,
                       p_out, pool_max):  # pragma: no cover - compiled
    """The summed sampler's last sweep: P_wk ~ Poisson(m φ_kw Σ_d c_dw θ_dk / μ_dw), word-major
    (:func:`~same.model.kernels.elements.summed_p_word`, the CUDA kernel's code too).

    Each word's sum runs over its documents in the block's CSC order (:func:`word_order`) on
    one thread: no atomics, no per-thread buffers, independent of the thread count.
    p_out : (W, K) int32, fully written.
    """
    n_topics = theta.shape[1]
    n_words = col_ptr.shape[0] - 1
    n_chunks = min(n_words, _P_CHUNKS)
    for c in prange(n_chunks):  # scratch once per chunk of words, not per word
        acc = np.empty(n_topics, dtype=theta.dtype)
        cum = np.empty(n_topics, dtype=np.float64)
        guide = np.empty(n_topics, dtype=np.int64)
        for w in range(c * n_words // n_chunks, (c + 1) * n_words // n_chunks):
            summed_p_word(w, col_ptr, col_doc, col_nz, ratio, counts, theta, phi_t, n_samples,
                          key, p_out, pool_max, acc, cum, guide)


@njit(parallel=True, cache=True, nogil=True)
def incnorm_t(phi_t, p_t, row_total, prior_scale, topic_word_prior, rho):  # pragma: no cover
    """IncNorm on φᵀ in place (BIDMach ``updaters/IncNorm.scala``), fused.

    φ̂_kw = P_kw / s + β; row_total_k ← (1 − ρ) row_total_k + ρ Σ_w φ̂_kw;
    φ_kw ← (1 − ρ) φ_kw + ρ φ̂_kw / row_total_k; then each topic renormalised to sum 1.
    phi_t, p_t : (W, K) (float32, int32); row_total : (K,) float32, updated in place.
    Row sums in float64 (Σ_w P is an exact integer sum).
    """
    n_words, n_topics = phi_t.shape
    p_sum = np.zeros(n_topics, dtype=np.int64)
    for w in range(n_words):  # column sums, exact
        for k in range(n_topics):
            p_sum[k] += p_t[w, k]
    total = np.empty(n_topics, dtype=np.float64)
    for k in range(n_topics):
        hat = p_sum[k] / prior_scale + n_words * topic_word_prior
        total[k] = (1.0 - rho) * np.float64(row_total[k]) + rho * hat
        row_total[k] = total[k]
    for w in prange(n_words):
        for k in range(n_topics):
            phi_t[w, k] = ((1.0 - rho) * phi_t[w, k]
                           + rho * (p_t[w, k] / prior_scale + topic_word_prior) / total[k])
    new_sum = np.zeros(n_topics, dtype=np.float64)
    for w in range(n_words):
        for k in range(n_topics):
            new_sum[k] += phi_t[w, k]
    for w in prange(n_words):
        for k in range(n_topics):
            phi_t[w, k] = phi_t[w, k] / new_sum[k]


@njit(parallel=True, cache=True, nogil=True)
def poisson_dense(lam, key, out):  # pragma: no cover - compiled
    """out.flat[i] ~ Poisson(lam.flat[i]) from counter i·2^20 of stream ``key`` (C-contiguous)."""
    flat_lam = lam.ravel()
    flat_out = out.ravel()
    for i in prange(flat_lam.shape[0]):
        flat_out[i] = poisson(flat_lam[i], key, element_counter(i))
    return out


@njit(cache=True)
def poisson_draws(lam, key):  # pragma: no cover - compiled
    """Draw Poisson(lam[i]) with the kernels' generator (counter i); for tests."""
    out = np.empty(lam.shape[0], dtype=np.int64)
    for i in range(lam.shape[0]):
        out[i] = poisson(lam[i], key, element_counter(i))
    return out


@njit(cache=True)
def uniform_draws(n, key):  # pragma: no cover - compiled
    """n uniforms from counters 0..n-1 of stream ``key``; for tests."""
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        out[i] = uniform(key, np.uint64(i))
    return out


def doc_ranges(indptr: np.ndarray, n_ranges: int) -> np.ndarray:
    """Split documents into ``n_ranges`` contiguous ranges of about equal nonzeros."""
    n_docs = len(indptr) - 1
    targets = np.linspace(0, indptr[-1], n_ranges + 1)
    bounds = np.searchsorted(indptr, targets, side="left").astype(np.int64)
    bounds[0], bounds[-1] = 0, n_docs
    return np.maximum.accumulate(np.minimum(bounds, n_docs))


def usable_threads(requested: int) -> int:
    """Threads a run gets: ``requested`` (-1: all), at most the CPUs this process may run on
    (``os.sched_getaffinity``), so that BLAS, numba and tomotopy never oversubscribe."""
    import os

    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return cpus if int(requested) == -1 else max(1, min(int(requested), cpus))


def set_threads(n: int | None) -> int:
    """Pin numba's thread count (None = leave as is); returns the count in force."""
    if n is not None:
        numba.set_num_threads(int(n))
    return numba.get_num_threads()
