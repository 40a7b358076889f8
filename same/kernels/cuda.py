"""CUDA kernels (``same_lda.cu``) behind the same wrappers as the CPU ones.

The module is compiled lazily with ``cupy.RawModule`` once per device
(``functools.lru_cache`` on the device id), so importing :mod:`same` on a
machine without CUDA never touches it.  Everything is float32 with int32
word ids and int64 row pointers.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).with_name("same_lda.cu")
THREADS = 128  # 4 warps per document block


@functools.lru_cache(maxsize=None)
def _module(device_id: int):
    import cupy as cp

    with cp.cuda.Device(device_id):
        return cp.RawModule(code=SOURCE.read_text(), options=("--std=c++17",),
                            name_expressions=None)


def _kernel(name: str):
    import cupy as cp

    return _module(cp.cuda.Device().id).get_function(name)


def _csr(indptr, indices):
    import cupy as cp

    return (cp.ascontiguousarray(indptr, dtype=cp.int64),
            cp.ascontiguousarray(indices, dtype=cp.int32))


def _f32(name, a):
    import cupy as cp

    if a.dtype != cp.float32:
        raise ValueError(f"{name} must be float32 on the GPU, got {a.dtype}")
    return cp.ascontiguousarray(a)


def sddmm(indptr, indices, doc_topic, topic_word_t, out):
    """GPU SDDMM: μ_j = Σ_k θ_dk φ_kw_j, float32 or float64 (see :func:`same.kernels.sddmm`)."""
    import cupy as cp

    indptr, indices = _csr(indptr, indices)
    if doc_topic.dtype not in (cp.float32, cp.float64):
        raise ValueError(f"doc_topic must be float32 or float64, got {doc_topic.dtype}")
    theta = cp.ascontiguousarray(doc_topic)
    phi_t = cp.ascontiguousarray(topic_word_t)
    n_docs, n_topics = theta.shape
    name = "same_sddmm_f32" if theta.dtype == cp.float32 else "same_sddmm_f64"
    if n_docs:
        _kernel(name)((n_docs,), (THREADS,),
                      (indptr, indices, theta, phi_t, out, np.int32(n_docs), np.int32(n_topics)),
                      shared_mem=theta.dtype.itemsize * n_topics)
    return out


def sample_accumulate(indptr, indices, data, doc_topic, topic_word_t, mu, n_samples, key,
                      doc_topic_out, topic_word_out=None):
    """GPU Poisson sweep with accumulation (see :func:`same.kernels.sample_accumulate`)."""
    import cupy as cp

    indptr, indices = _csr(indptr, indices)
    theta = _f32("doc_topic", doc_topic)
    phi_t = _f32("topic_word_t", topic_word_t)
    n_docs, n_topics = theta.shape
    accumulate = topic_word_out is not None
    if accumulate:
        topic_word_out[...] = 0
    p_out = topic_word_out if accumulate else cp.empty((1,), dtype=cp.float32)
    if n_docs:
        _kernel("same_sample_accumulate")(
            (n_docs,), (THREADS,),
            (indptr, indices, _f32("data", data), theta, phi_t, _f32("mu", mu),
             np.float64(n_samples), np.uint64(key), doc_topic_out, p_out, np.int32(accumulate),
             np.int32(n_docs), np.int32(n_topics)),
            shared_mem=8 * n_topics)
    return doc_topic_out, topic_word_out


def poisson(lam, key, out):
    """Elementwise Poisson draws on the GPU (see :func:`same.kernels.poisson`)."""
    lam = _f32("lam", lam)
    n = lam.size
    if n:
        blocks = min((n + 255) // 256, 65535)
        _kernel("same_poisson_dense")((blocks,), (256,), (lam, np.uint64(key), out, np.int64(n)))
    return out
