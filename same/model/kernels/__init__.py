"""Backend dispatch for the hot steps.

Each function routes arrays of one backend (NumPy or CuPy) to its kernel: numba on CPU (:mod:`.cpu`,
per-element code :mod:`.elements`), CUDA on GPU (:mod:`.cuda`); importing it never initialises CUDA.
Counts T and P are int32: exact while m × (occurrences of one word in one minibatch) stays
well below 2^31 (PubMed, m = 100: about 4·10^7 for its top word in a 1/20 minibatch).
"""

from __future__ import annotations

import contextlib

import numpy as np

from same.model.backend import array_module

from . import _cache  # noqa: F401  (first: every kernel module's cache is stamped by it)
from .finite import check_finite, deferred_checks, raise_if_not_finite
from .inputs import _check, _check_block

#: CPU sweep: topics with λ below this are pooled into one Poisson(Σλ) count split
#: categorically; above it they are drawn one by one. Both are exact; the threshold only
#: sets the speed (1.0 was fastest on KOS, K=64, m=100, among 0.5 … 32).
POOL = 1.0

__all__ = ["sddmm", "sample_accumulate", "poisson", "summed_t_sweeps", "summed_p_sweep", "incnorm",
           "fuses_ratio",
           "as_key", "check_finite", "deferred_checks", "raise_if_not_finite", "cuda_on_host",
           "POOL"]

_WORKSPACE: dict = {}  # reusable per-range P buffers of the CPU sweep, by shape
_HOST_CUDA = False  # route NumPy arrays to the CUDA kernels (numba-cuda's simulator)


@contextlib.contextmanager
def cuda_on_host():
    """Within this block NumPy arrays go to the CUDA kernels instead of the CPU ones.

    For the GPU path without a GPU: under numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``
    before numba is imported) a whole SameLDA fit runs the CUDA kernels on host arrays
    (tests/model/sim_cases.py); with a GPU the kernels copy host arrays over.
    """
    global _HOST_CUDA
    before, _HOST_CUDA = _HOST_CUDA, True
    try:
        yield
    finally:
        _HOST_CUDA = before


def as_key(k) -> np.uint64:
    """A Python integer key as the kernels' uint64, reduced modulo 2^64 (the one place)."""
    return np.uint64(int(k) & ((1 << 64) - 1))


def _cpu(xp) -> bool:
    """Whether arrays of ``xp`` go to the CPU kernels (else the CUDA ones)."""
    return xp is np and not _HOST_CUDA


def sddmm(indptr, indices, doc_topic, topic_word_t, out=None):
    """Sampled dense-dense product over a CSR pattern: μ_j = Σ_k θ_dk φ_kw_j.

    Parameters
    ----------
    indptr : (D+1,) int array; indices : (nnz,) int array of word ids
    doc_topic : (D, K) float array, θ rows of the block's documents
    topic_word_t : (W, K) float array, φᵀ (C-contiguous)
    out : (nnz,) array, optional

    Returns
    -------
    (nnz,) array of doc_topic's dtype (paper Alg. 3 line 3; BIDMach ``DDS``).

    Raises
    ------
    ValueError
        Mismatched shapes or dtypes; on the CPU a malformed CSR pattern (``indptr`` not
        from 0 to nnz or decreasing, a word index outside [0, W)): ``_check_block``.
    """
    _check_block("sddmm", indptr, indices, doc_topic, topic_word_t,
                 **({} if out is None else {"out": out}))
    if topic_word_t.dtype != doc_topic.dtype:
        raise ValueError(f"dtype mismatch: doc_topic {doc_topic.dtype}, "
                         f"topic_word_t {topic_word_t.dtype}")
    xp = array_module(doc_topic)
    if out is None:
        out = xp.empty(indices.shape[0], dtype=doc_topic.dtype)
    if _cpu(xp):
        from .cpu import sddmm_csr

        return sddmm_csr(indptr, indices, np.ascontiguousarray(doc_topic),
                         np.ascontiguousarray(topic_word_t), out)
    from .cuda import sddmm as cuda_sddmm

    return cuda_sddmm(indptr, indices, doc_topic, topic_word_t, out)


def _cpu_buffers(n_ranges: int, shape: tuple, accumulate: bool) -> np.ndarray:
    """Per-range int32 P buffers, allocated once per shape and reused (zeroed here)."""
    key = (n_ranges,) + (shape if accumulate else (1, shape[1]))
    buf = _WORKSPACE.get(key)
    if buf is None:
        _WORKSPACE.clear()  # one shape at a time: a new minibatch shape replaces the old
        buf = _WORKSPACE[key] = np.zeros(key, dtype=np.int32)
    elif accumulate:
        buf.fill(0)
    return buf


def sample_accumulate(indptr, indices, data, doc_topic, topic_word_t, mu, n_samples: float,
                      key: int, doc_topic_out, topic_word_out=None):
    """Factored SAME Poisson sweep with accumulation (paper Alg. 3 lines 4–11).

    For every nonzero j = (d, w) with count c_j and every topic k draws
    z ~ Poisson(m · c_j · θ_dk φ_kw / μ_j) and adds it to ``doc_topic_out[d, k]``
    (T, D × K) and, when given, ``topic_word_out[w, k]`` (Pᵀ, W × K).

    Parameters
    ----------
    indptr, indices, data : CSR block (D docs); data are the counts c (float)
    doc_topic : (D, K) θ; topic_word_t : (W, K) φᵀ; mu : (nnz,) from :func:`sddmm`
    n_samples : float, m > 0 (may be fractional)
    key : int, 64-bit stream key; must differ between calls
    doc_topic_out : (D, K) int32 array, overwritten
    topic_word_out : (W, K) int32 array or None, overwritten when given

    Raises
    ------
    ValueError
        Mismatched shapes or dtypes, m ≤ 0, NaN/inf in θ, φ or μ; on the CPU a malformed
        CSR pattern (``indptr`` not from 0 to nnz or decreasing, a word index outside
        [0, W)): ``_check_block``.
    """
    _check_block("sample_accumulate", indptr, indices, doc_topic, topic_word_t, data=data,
                 mu=mu)
    _check("doc_topic_out", doc_topic_out, 2, "i")
    n_docs, n_topics = doc_topic.shape
    if doc_topic_out.shape != (n_docs, n_topics):
        raise ValueError(f"doc_topic_out must have shape {(n_docs, n_topics)}, "
                         f"got {doc_topic_out.shape}")
    if topic_word_out is not None and (topic_word_out.shape != topic_word_t.shape
                                       or topic_word_out.dtype.kind != "i"):
        raise ValueError(f"topic_word_out must be an integer array of shape "
                         f"{topic_word_t.shape}, got {topic_word_out.dtype} {topic_word_out.shape}")
    if not n_samples > 0 or not np.isfinite(n_samples):
        raise ValueError(f"n_samples must be a positive finite number, got {n_samples!r}")
    check_finite(doc_topic=doc_topic, topic_word=topic_word_t, mu=mu)
    xp = array_module(doc_topic)
    key = as_key(key)
    if not _cpu(xp):
        from .cuda import sample_accumulate as cuda_sample

        return cuda_sample(indptr, indices, data, doc_topic, topic_word_t, mu, n_samples, key,
                           doc_topic_out, topic_word_out, POOL)
    from . import cpu

    n_ranges = max(1, min(cpu.set_threads(None), n_docs))
    bounds = cpu.doc_ranges(np.asarray(indptr), n_ranges)
    accumulate = topic_word_out is not None
    local = _cpu_buffers(n_ranges, topic_word_t.shape, accumulate)
    doc_topic_out[...] = 0
    cpu.sample_accumulate_csr(indptr, indices, data, doc_topic, topic_word_t, mu,
                              float(n_samples), key, bounds, doc_topic_out, local, accumulate,
                              POOL)
    if accumulate:
        np.sum(local, axis=0, out=topic_word_out)
    return doc_topic_out, topic_word_out


def poisson(lam, key: int, out=None):
    """Elementwise Poisson draws: out[i] ~ Poisson(lam[i]) (same generator as the sweep).

    Parameters
    ----------
    lam : float array (any shape, C-contiguous), rates ≥ 0
    key : int, 64-bit stream key; must differ between calls
    out : array of lam's shape (int32 for counts), optional

    Raises
    ------
    ValueError
        ``out`` of another shape, or NaN/inf rates.
    """
    xp = array_module(lam)
    if out is None:
        out = xp.empty(lam.shape, dtype=xp.int32)
    if out.shape != lam.shape:
        raise ValueError(f"out has shape {out.shape}, lam has {lam.shape}")
    check_finite(lam=lam)
    key = as_key(key)
    if _cpu(xp):
        from .cpu import poisson_dense

        return poisson_dense(np.ascontiguousarray(lam), key, out)
    from .cuda import poisson as cuda_poisson

    if out.dtype != np.int32 or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous int32 array for the CUDA kernel, got "
                         f"{out.dtype}")
    return cuda_poisson(lam, key, out)


def summed_t_sweeps(block, theta, phi_t, n_samples: float, prior_scale: float,
                    doc_topic_prior: float, keys, ratio_out, carry_key=None, carry_out=None):
    """The summed sampler's T sweeps (one per key), θ updated in place; then c/μ per nonzero.

    Per sweep: T_dk ~ Poisson(m θ_dk Σ_w c_dw φ_kw / μ_dw), θ ← T/s + α; finally
    ``ratio_out[j] = c_j / μ_j`` with the last θ (``ratio_out`` None: not needed, and on a GPU
    not computed).  With ``carry_key``, one more T draw from
    that last θ with that key is written to ``carry_out`` ((n_docs, K), θ's dtype) and θ is
    left as it was after the last sweep: the θ a kept document starts its next pass from,
    while θ and the ratios go to the P sweep (the same values as a second call with
    ``keys=[carry_key]`` on a copy of θ).  A document at a time (CPU
    :func:`same.model.kernels.cpu.summed_t_sweeps_csr`; GPU :func:`same.model.kernels.cuda_summed.summed_t_sweeps`,
    long documents summed in chunks): the same draws up to float32 rounding of long documents'
    sums, the same counts in the simulator.

    Raises
    ------
    ValueError
        NaN/inf in θ or φ; ``carry_key`` without a ``carry_out`` of θ's shape; mismatched
        shapes, or on the CPU a malformed CSR block (``_check_block``).
    """
    _check_block("summed_t_sweeps", block.indptr, block.indices, theta, phi_t,
                 data=block.data, **({} if ratio_out is None else {"ratio_out": ratio_out}))
    check_finite(doc_topic=theta, topic_word=phi_t)
    if carry_key is not None and (carry_out is None or carry_out.shape != theta.shape):
        raise ValueError(f"carry_out must be an array of shape {theta.shape} with carry_key")
    xp = array_module(theta)
    keys = np.asarray([as_key(k) for k in keys], dtype=np.uint64)
    carry = np.asarray([] if carry_key is None else [as_key(carry_key)],
                       dtype=np.uint64)
    if _cpu(xp):
        from .cpu import doc_ranges, set_threads, summed_t_sweeps_csr

        n_docs = theta.shape[0]
        ratios = (np.empty(block.indices.shape[0], dtype=np.float32) if ratio_out is None
                  else ratio_out)
        bounds = doc_ranges(np.asarray(block.indptr), max(1, min(4 * set_threads(None), n_docs)))
        summed_t_sweeps_csr(block.indptr, block.indices, block.data, theta, phi_t,
                            float(n_samples), float(prior_scale), float(doc_topic_prior), keys,
                            ratios, POOL, bounds, carry,
                            theta if carry_out is None else carry_out)
        return theta, ratio_out
    from .cuda_summed import summed_t_sweeps as cuda_t_sweeps

    cuda_t_sweeps(block.indptr, block.indices, block.data, theta, phi_t, n_samples,
                  prior_scale, doc_topic_prior, keys, ratio_out, POOL)
    if carry_key is not None:
        carry_out[...] = theta
        cuda_t_sweeps(block.indptr, block.indices, block.data, carry_out, phi_t, n_samples,
                      prior_scale, doc_topic_prior, carry, None, POOL)
    return theta, ratio_out


def fuses_ratio(xp) -> bool:
    """Whether the P sweep of arrays of ``xp`` computes c/μ itself (the CUDA kernels: the
    summed sampler then passes no ratios from its T sweeps)."""
    return not _cpu(xp)


def summed_p_sweep(block, ratio, theta, phi_t, n_samples: float, key: int, p_out):
    """The summed sampler's P sweep: P_wk ~ Poisson(m φ_kw Σ_d c_dw θ_dk / μ_dw).

    ``ratio`` = c/μ per nonzero (from :func:`summed_t_sweeps`), or None: computed here from
    θ and φ (on a GPU inside the P sweep, no pass of its own: :func:`fuses_ratio`); word w
    is element w of
    ``key`` (:func:`same.model.kernels.elements.draw_nonzero`).  p_out : (W, K) int32, overwritten.
    Word-major over the block's CSC order, no atomics (:func:`~.elements.summed_p_word` on
    the CPU; the GPU sums long words in chunks, :mod:`same.model.kernels.cuda_summed`).

    Raises
    ------
    ValueError
        NaN/inf in θ or φ; mismatched shapes (``p_out`` not φᵀ's), or on the CPU a
        malformed CSR block (``_check_block``).
    """
    _check_block("summed_p_sweep", block.indptr, block.indices, theta, phi_t,
                 data=block.data, **({} if ratio is None else {"ratio": ratio}))
    if p_out.shape != phi_t.shape:
        raise ValueError(f"p_out has shape {p_out.shape}, expected {phi_t.shape}")
    check_finite(doc_topic=theta, topic_word=phi_t)
    xp = array_module(theta)
    if _cpu(xp):
        from . import cpu

        n_words = phi_t.shape[0]
        col_ptr = np.empty(n_words + 1, dtype=np.int64)
        col_doc = np.empty(block.indices.shape[0], dtype=np.int64)
        col_nz = np.empty_like(col_doc)
        cpu.word_order(block.indptr, block.indices, n_words, col_ptr, col_doc, col_nz)
        counts = np.bincount(block.indices, weights=block.data, minlength=n_words)
        if ratio is None:
            ratio = np.empty(block.indices.shape[0], dtype=np.float32)
            summed_t_sweeps(block, theta.copy(), phi_t, 1.0, 1.0, 0.0, [], ratio)
        cpu.summed_p_sweep_csr(col_ptr, col_doc, col_nz, ratio, counts, theta, phi_t,
                               float(n_samples), as_key(key), p_out,
                               POOL)
        return p_out
    from .cuda_summed import summed_p_sweep as cuda_p_sweep

    return cuda_p_sweep(block.indptr, block.indices, block.data, ratio, theta, phi_t, n_samples,
                        as_key(key), p_out, POOL)


def incnorm(phi_t, p_t, row_total, prior_scale: float, topic_word_prior: float, rho: float):
    """IncNorm blend of φ̂ = P/s + β into φᵀ, in place (BIDMach ``updaters/IncNorm.scala``).

    phi_t : (W, K) float32 φᵀ; p_t : (W, K) int32 Pᵀ; row_total : (K,) float32 moving average of
    φ̂'s row totals, updated in place.  Returns (phi_t, row_total).  On CuPy computed as
    cpu.incnorm_t: Σ_w P exact (int64), blend and normalisations in float64, φ stored in φᵀ's
    dtype after each (only the float64 sums' order differs), in two fused elementwise kernels
    (:func:`same.model.kernels.cuda_host.incnorm`).  Raises ValueError: ``p_t`` not
    of φᵀ's shape, or ``row_total`` not of shape (K,).
    """
    _check("phi_t", phi_t, 2, "f")
    if p_t.shape != phi_t.shape or row_total.shape != phi_t.shape[1:]:
        raise ValueError(f"incnorm: p_t {p_t.shape} and row_total {row_total.shape} do not "
                         f"match phi_t {phi_t.shape}")
    xp = array_module(phi_t)
    if _cpu(xp) or xp is np:  # the CPU, and the CUDA simulator's host arrays
        from .cpu import incnorm_t

        incnorm_t(phi_t, p_t, row_total, float(prior_scale), float(topic_word_prior),
                  float(rho))
        return phi_t, row_total
    from .cuda_host import incnorm as cupy_incnorm

    return cupy_incnorm(phi_t, p_t, row_total, float(prior_scale), float(topic_word_prior),
                        float(rho))
