"""Backend dispatch for the hot steps.

``sddmm`` and ``sample_accumulate`` take arrays of one backend (NumPy or
CuPy) and route them to that backend's fused kernel: numba on CPU
(:mod:`same.kernels.cpu`), CUDA sources on GPU (:mod:`same.kernels.cuda`).
Importing this module never initialises CUDA.
"""

from __future__ import annotations

import numpy as np

#: CPU sweep: topics with λ below this are pooled into one Poisson(Σλ) count split
#: categorically; above it they are drawn one by one. Both are exact; the threshold only
#: sets the speed (1.0 was fastest on KOS, K=64, m=100, among 0.5 … 32).
POOL = 1.0

from ..backend import array_module

__all__ = ["sddmm", "sample_accumulate", "poisson"]


def _check(name, a, ndim, dtype_kind=None):
    if a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {a.shape}")
    if dtype_kind is not None and a.dtype.kind not in dtype_kind:
        raise ValueError(f"{name} has dtype {a.dtype}, expected kind {dtype_kind!r}")


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
        Mismatched shapes or dtypes.
    """
    _check("indptr", indptr, 1, "iu")
    _check("indices", indices, 1, "iu")
    _check("doc_topic", doc_topic, 2, "f")
    _check("topic_word_t", topic_word_t, 2, "f")
    if doc_topic.shape[0] != indptr.shape[0] - 1:
        raise ValueError(f"doc_topic has {doc_topic.shape[0]} rows, indptr describes "
                         f"{indptr.shape[0] - 1} documents")
    if doc_topic.shape[1] != topic_word_t.shape[1]:
        raise ValueError(f"doc_topic has K={doc_topic.shape[1]}, topic_word_t has "
                         f"K={topic_word_t.shape[1]}")
    if topic_word_t.dtype != doc_topic.dtype:
        raise ValueError(f"dtype mismatch: doc_topic {doc_topic.dtype}, "
                         f"topic_word_t {topic_word_t.dtype}")
    xp = array_module(doc_topic)
    if out is None:
        out = xp.empty(indices.shape[0], dtype=doc_topic.dtype)
    if xp is np:
        from .cpu import sddmm_csr

        return sddmm_csr(indptr, indices, np.ascontiguousarray(doc_topic),
                         np.ascontiguousarray(topic_word_t), out)
    from .cuda import sddmm as cuda_sddmm

    return cuda_sddmm(indptr, indices, doc_topic, topic_word_t, out)


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
    doc_topic_out : (D, K) float array, overwritten
    topic_word_out : (W, K) float array or None, overwritten when given

    Raises
    ------
    ValueError
        Mismatched shapes, or m ≤ 0.
    """
    _check("indptr", indptr, 1, "iu")
    _check("doc_topic", doc_topic, 2, "f")
    n_docs, n_topics = doc_topic.shape
    if doc_topic_out.shape != (n_docs, n_topics):
        raise ValueError(f"doc_topic_out must have shape {(n_docs, n_topics)}, "
                         f"got {doc_topic_out.shape}")
    if topic_word_out is not None and topic_word_out.shape != topic_word_t.shape:
        raise ValueError(f"topic_word_out must have shape {topic_word_t.shape}, "
                         f"got {topic_word_out.shape}")
    if mu.shape != indices.shape or data.shape != indices.shape:
        raise ValueError("mu, data and indices must have one entry per nonzero")
    if not n_samples > 0:
        raise ValueError(f"n_samples must be > 0, got {n_samples!r}")
    xp = array_module(doc_topic)
    key = np.uint64(int(key) & 0xFFFFFFFFFFFFFFFF)
    if xp is np:
        from . import cpu

        n_ranges = max(1, min(cpu.set_threads(None), n_docs))
        bounds = cpu.doc_ranges(np.asarray(indptr), n_ranges)
        accumulate = topic_word_out is not None
        local = np.zeros((n_ranges if accumulate else 1,) + (topic_word_t.shape if accumulate
                                                              else (1, 1)),
                         dtype=doc_topic_out.dtype)
        doc_topic_out[...] = 0
        cpu.sample_accumulate_csr(indptr, indices, data, doc_topic, topic_word_t, mu,
                                  float(n_samples), key, bounds, doc_topic_out, local, accumulate,
                                  POOL)
        if accumulate:
            np.sum(local, axis=0, out=topic_word_out)
        return doc_topic_out, topic_word_out
    from .cuda import sample_accumulate as cuda_sample

    return cuda_sample(indptr, indices, data, doc_topic, topic_word_t, mu, n_samples, key,
                       doc_topic_out, topic_word_out)


def poisson(lam, key: int, out=None):
    """Elementwise Poisson draws: out[i] ~ Poisson(lam[i]) (same generator as the sweep).

    Parameters
    ----------
    lam : float array (any shape, C-contiguous), rates ≥ 0
    key : int, 64-bit stream key; must differ between calls
    out : float array of lam's shape, optional

    Raises
    ------
    ValueError
        ``out`` of another shape.
    """
    xp = array_module(lam)
    if out is None:
        out = xp.empty_like(lam)
    if out.shape != lam.shape:
        raise ValueError(f"out has shape {out.shape}, lam has {lam.shape}")
    key = np.uint64(int(key) & 0xFFFFFFFFFFFFFFFF)
    if xp is np:
        from .cpu import poisson_dense

        return poisson_dense(np.ascontiguousarray(lam), key, out)
    from .cuda import poisson as cuda_poisson

    return cuda_poisson(lam, key, out)
