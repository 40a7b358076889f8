"""Backend dispatch for the hot steps.

``sddmm`` and ``sample_accumulate`` take arrays of one backend (NumPy or
CuPy) and route them to that backend's fused kernel: numba on CPU
(:mod:`same.kernels.cpu`), CUDA sources on GPU (:mod:`same.kernels.cuda`).
Importing this module never initialises CUDA.
"""

from __future__ import annotations

import numpy as np

from ..backend import array_module

__all__ = ["sddmm"]


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
