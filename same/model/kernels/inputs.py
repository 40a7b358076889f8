"""Shape and dtype checks of the hot steps' inputs (:mod:`same.model.kernels`), made before any
kernel sees an array."""

from __future__ import annotations

from same.data.csr_structure import check_compressed
from same.model.backend import array_module

__all__ = ["_check", "_check_block"]


def _check(name, a, ndim, dtype_kind=None):
    if a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {a.shape}")
    if dtype_kind is not None and a.dtype.kind not in dtype_kind:
        raise ValueError(f"{name} has dtype {a.dtype}, expected kind {dtype_kind!r}")


def _check_block(fn, indptr, indices, doc_topic, topic_word_t, **per_nonzero):
    """What a kernel's reads of a CSR block depend on: ranks, dtypes, θ's rows and K, one
    entry per nonzero in each ``per_nonzero`` array; on the CPU also the structure
    (:func:`same.data.csr_structure.check_compressed`, ~8 µs for 18k nonzeros).  On CuPy nothing
    that reads device memory: its blocks come from a host matrix that passed the input
    gate.  ValueError."""
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
    nnz = indices.shape[0]
    for name, a in per_nonzero.items():
        if a.shape != (nnz,):
            raise ValueError(f"{fn}: {name} has shape {a.shape}, expected ({nnz},): one entry "
                             "per nonzero")
    check_compressed(indptr, indices, doc_topic.shape[0], topic_word_t.shape[0], fn,
                     values=_on_cpu(array_module(doc_topic)))


def _on_cpu(xp) -> bool:
    from . import _cpu

    return _cpu(xp)
