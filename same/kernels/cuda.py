"""CUDA kernels (numba-cuda) behind the same wrappers as the CPU ones.

Every kernel here calls the per-element functions of :mod:`same.kernels.elements` -- the
counter-based uniform, the exact Poisson draw, the draws of one (nonzero, topic) row with
small-λ pooling, the μ of one nonzero -- which the CPU kernels (:mod:`same.kernels.cpu`)
call too: one source, one algorithm and the same counter streams, so the counts are equal in
distribution to the CPU's and identical except where rounding flips a draw: NVVM contracts
multiply-adds into ``fma`` (the PTX of the summed sweeps holds them) and libdevice's
exp/log/lgamma are not glibc's, so μ and λ may differ in the last bits.  Under numba-cuda's
simulator (Python arithmetic, as the CPU's) the counts are bit-identical to the CPU kernels'.
How they are added up differs and is exact both ways: per-thread buffers on the CPU, integer
atomics here.

Kernels (signatures in :func:`signatures`, compiled to PTX for sm_80 and sm_90 and run under
numba-cuda's simulator in the test suite):

- ``sddmm``: one block per document, its threads striding over the document's nonzeros;
  μ_j in float64 (as the CPU), stored as float32 or float64.  Cost on a GPU: each thread
  reads a φ row of K values (coalesced only across topics of one thread: a warp reads 32
  rows), and θ_d from L1; no reduction across threads, so no warp shuffles are needed.
- ``sample_accumulate``: a block per document (blocks striding over documents once the grid
  is capped by :data:`SCRATCH_BYTES`), a thread per nonzero (striding), each drawing its K
  counts into its column of a global scratch array and adding the nonzero ones to T and P
  with ``atomicAdd`` on int32 (≤ 2 per (nonzero, topic) pair with a positive draw; for a
  trained model most λ are tiny and the early exit skips them).
- ``poisson_dense``: a grid-stride loop, element i from counter i·2^20.
- ``summed_t_sweeps`` / ``summed_p_sweep``: the summed sampler, a thread per document (its
  T sweeps and θ updates, then c/μ) and a thread per word (P, over the block's CSC order:
  no atomics), running :func:`~same.kernels.elements.summed_t_doc` and
  :func:`~same.kernels.elements.summed_p_word` as the CPU does.  One thread walks a whole
  document's nonzeros K-wide: simple, not the fastest GPU layout (a warp per document with
  shared-memory accumulation would be; see the performance model in the README).

Launches go on CuPy's current stream (:func:`stream_handle`); under the simulator the same
kernels run on host arrays (:func:`same.kernels.cuda_on_host`).  Importing this module never
initialises CUDA.
"""

from __future__ import annotations

import functools
import types

import numpy as np
from numba import cuda  # importing touches no driver
from numba.core import config

from . import launch
from .elements import dot_f64, draw_at, element_counter, summed_p_word, summed_t_doc
from .elements import poisson as poisson_draw
from .launch import SCRATCH, SCRATCH_BYTES, THREADS, scratch_threads

#: Largest K the GPU sampling kernels support.
MAX_TOPICS = 1024
__all__ = ["sddmm", "sample_accumulate", "poisson", "summed_t_sweeps", "summed_p_sweep",
           "word_order", "MAX_TOPICS", "THREADS", "SCRATCH_BYTES", "SCRATCH", "scratch_threads",
           "signatures", "kernel_functions", "python_twins", "stream_handle"]


# The kernels as plain Python functions; :func:`kernel_functions` JIT-compiles them for the
# device and same.kernels.ptx compiles them to PTX.  They use the module-level ``cuda`` so that
# numba-cuda's simulator can substitute its own.
def sddmm_kernel(indptr, indices, theta, phi_t, out):  # pragma: no cover - device code
    d = cuda.blockIdx.x
    for j in range(indptr[d] + cuda.threadIdx.x, indptr[d + 1], cuda.blockDim.x):
        out[j] = dot_f64(theta[d], phi_t[indices[j]])


def sample_kernel(indptr, indices, data, theta, phi_t, mu, n_samples, key, t_out, p_out,
                  accumulate, pool_max, cum, guide, z):  # pragma: no cover - device code
    n_topics = theta.shape[1]
    t = cuda.grid(1)  # this thread's column of the scratch arrays
    for d in range(cuda.blockIdx.x, indptr.shape[0] - 1, cuda.gridDim.x):
        for j in range(indptr[d] + cuda.threadIdx.x, indptr[d + 1], cuda.blockDim.x):
            if mu[j] > 0.0:
                w = indices[j]
                if draw_at(j, data[j], n_samples, mu[j], theta[d], phi_t[w], key, pool_max,
                           cum[:n_topics, t], guide[:n_topics, t], z[:n_topics, t]):
                    for k in range(n_topics):
                        if z[k, t] > 0:
                            cuda.atomic.add(t_out, (d, k), z[k, t])
                            if accumulate:
                                cuda.atomic.add(p_out, (w, k), z[k, t])


def poisson_kernel(lam, key, out):  # pragma: no cover - device code
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, lam.shape[0], stride):
        out[i] = poisson_draw(lam[i], key, element_counter(i))


def summed_t_kernel(indptr, indices, data, theta, phi_t, n_samples, prior_scale,
                    doc_topic_prior, keys, ratio_out, pool_max, acc, cum, guide,
                    t_row):  # pragma: no cover - device code
    n_topics = theta.shape[1]
    t = cuda.grid(1)
    for d in range(t, indptr.shape[0] - 1, cuda.gridsize(1)):
        summed_t_doc(d, indptr, indices, data, theta, phi_t, n_samples, prior_scale,
                     doc_topic_prior, keys, ratio_out, pool_max, acc[:n_topics, t],
                     cum[:n_topics, t], guide[:n_topics, t], t_row[:n_topics, t])


def summed_p_kernel(col_ptr, col_doc, col_nz, ratio, counts, theta, phi_t, n_samples, key, p_out,
                    pool_max, acc, cum, guide):  # pragma: no cover - device code
    n_topics = theta.shape[1]
    t = cuda.grid(1)
    for w in range(t, col_ptr.shape[0] - 1, cuda.gridsize(1)):
        summed_p_word(w, col_ptr, col_doc, col_nz, ratio, counts, theta, phi_t, n_samples, key,
                      p_out, pool_max, acc[:n_topics, t], cum[:n_topics, t], guide[:n_topics, t])


def python_twins() -> dict:
    """The per-element functions of :mod:`same.kernels.elements` as plain Python, calling one
    another (their ``py_func`` code with shared globals).

    numba-cuda's simulator runs kernels as Python and hands them wrapped arrays that compiled
    njit functions cannot take; the simulated kernels call these twins instead: the same
    source, so the simulator tests the code a GPU compiles.
    """
    from numba.core.registry import CPUDispatcher

    from . import elements

    shared = dict(vars(elements))
    for name, obj in vars(elements).items():
        if isinstance(obj, CPUDispatcher):
            f = obj.py_func
            shared[name] = types.FunctionType(f.__code__, shared, f.__name__, f.__defaults__,
                                              f.__closure__)
    return shared


if config.ENABLE_CUDASIM:  # pragma: no cover - only in the simulator's process
    _twins = python_twins()
    dot_f64, draw_at = _twins["dot_f64"], _twins["draw_at"]
    element_counter, poisson_draw = _twins["element_counter"], _twins["poisson"]
    summed_t_doc, summed_p_word = _twins["summed_t_doc"], _twins["summed_p_word"]


def _kernel_sources() -> dict:
    """kernel name → its Python function (for :func:`kernel_functions` and PTX compilation)."""
    return {"sddmm": sddmm_kernel, "sample_accumulate": sample_kernel,
            "poisson_dense": poisson_kernel, "summed_t_sweeps": summed_t_kernel,
            "summed_p_sweep": summed_p_kernel}


def signatures() -> dict:
    """kernel name → the argument types it is launched with (every one is compiled to PTX)."""
    from numba import types as t
    from numba.np.numpy_support import from_dtype

    csr = (t.int64[::1], t.int32[::1])
    f32m, f64m = t.float32[:, ::1], t.float64[:, ::1]
    scratch = {name: tuple(from_dtype(np.dtype(d))[:, ::1] for d in dtypes)
               for name, dtypes in SCRATCH.items()}
    return {
        "sddmm": [(*csr, f32m, f32m, t.float32[::1]), (*csr, f64m, f64m, t.float64[::1])],
        "sample_accumulate": [(*csr, t.float32[::1], f32m, f32m, t.float32[::1], t.float64,
                               t.uint64, t.int32[:, ::1], t.int32[:, ::1], t.boolean,
                               t.float64, *scratch["sample_accumulate"])],
        "poisson_dense": [(t.float32[::1], t.uint64, t.int32[::1]),
                          (t.float64[::1], t.uint64, t.int32[::1])],
        "summed_t_sweeps": [(*csr, t.float32[::1], f32m, f32m, t.float64, t.float64, t.float64,
                             t.uint64[::1], t.float32[::1], t.float64,
                             *scratch["summed_t_sweeps"])],
        "summed_p_sweep": [(t.int64[::1], t.int64[::1], t.int64[::1], t.float32[::1],
                            t.float64[::1], f32m, f32m, t.float64, t.uint64, t.int32[:, ::1],
                            t.float64, *scratch["summed_p_sweep"])],
    }


@functools.lru_cache(maxsize=None)
def kernel_functions() -> dict:
    """kernel name → ``numba.cuda.jit`` kernel (compiled lazily, per signature, at launch)."""
    return {name: cuda.jit(f) for name, f in _kernel_sources().items()}


def _launch(name: str, grid: int, block: int, *args):
    kernel = kernel_functions()[name]
    xp = _xp(args)
    if xp is np:  # host arrays: the CUDA simulator (same.kernels.cuda_on_host)
        kernel[grid, block](*args)
        return
    stream = cuda.external_stream(stream_handle(xp.cuda.get_current_stream().ptr))
    kernel[grid, block, stream](*args)


def stream_handle(ptr: int) -> int:
    """The stream handle for a launch on CuPy's current stream of pointer ``ptr``.

    numba-cuda exports each CuPy argument with ``__dlpack__(stream=<the launch's handle>)``.
    CuPy gives its legacy default stream as pointer 0, which DLPack forbids for CUDA (0 is
    ambiguous; 1 is the legacy default stream, 2 the per-thread one) and CuPy warns about at
    every export.  So 0 becomes ``CU_STREAM_LEGACY`` (1), the same stream to the driver."""
    return int(ptr) or 1


def _xp(args):
    from ..backend import array_module

    for a in args:
        if hasattr(a, "shape") and getattr(a, "ndim", 0) > 0:
            return array_module(a)
    return np


def _csr(indptr, indices):
    xp = _xp((indptr,))
    return (xp.ascontiguousarray(indptr, dtype=xp.int64),
            xp.ascontiguousarray(indices, dtype=xp.int32))


def _topics(theta) -> tuple[int, int]:
    """θ's (rows, K), K checked against :data:`MAX_TOPICS`."""
    if theta.shape[1] > MAX_TOPICS:
        raise ValueError(f"the CUDA sampler supports K <= {MAX_TOPICS} topics, got {theta.shape[1]}")
    return theta.shape


def _f32(name, a):
    if a.dtype != np.float32:
        raise ValueError(f"{name} must be float32 for the CUDA kernels, got {a.dtype}")
    return _xp((a,)).ascontiguousarray(a)


def sddmm(indptr, indices, doc_topic, topic_word_t, out):
    """CUDA SDDMM: μ_j = Σ_k θ_dk φ_kw_j, float32 or float64 (see :func:`same.kernels.sddmm`)."""
    indptr, indices = _csr(indptr, indices)
    xp = _xp((doc_topic,))
    theta = xp.ascontiguousarray(doc_topic)
    phi_t = xp.ascontiguousarray(topic_word_t)
    if theta.shape[0]:
        _launch("sddmm", *launch.sddmm(theta.shape[0]), indptr, indices, theta, phi_t, out)
    return out


def sample_accumulate(indptr, indices, data, doc_topic, topic_word_t, mu, n_samples, key,
                      doc_topic_out, topic_word_out, pool_max):
    """CUDA Poisson sweep with accumulation (see :func:`same.kernels.sample_accumulate`).

    doc_topic_out, topic_word_out : int32, zeroed here; ``topic_word_out`` None: no P.

    Raises
    ------
    ValueError
        K above :data:`MAX_TOPICS`, or not-float32 inputs.
    """
    indptr, indices = _csr(indptr, indices)
    xp = _xp((doc_topic,))
    theta = _f32("doc_topic", doc_topic)
    phi_t = _f32("topic_word_t", topic_word_t)
    n_docs, n_topics = _topics(theta)
    accumulate = topic_word_out is not None
    doc_topic_out[...] = 0
    p_out = topic_word_out if accumulate else xp.zeros((1, n_topics), dtype=xp.int32)
    p_out[...] = 0
    if n_docs:
        grid, block = launch.sample_accumulate(n_docs, n_topics)
        _launch("sample_accumulate", grid, block, indptr, indices, _f32("data", data),
                theta, phi_t, _f32("mu", mu), np.float64(n_samples), np.uint64(key),
                doc_topic_out, p_out, np.bool_(accumulate), np.float64(pool_max),
                *_scratch(xp, "sample_accumulate", n_topics, grid * block))
    return doc_topic_out, topic_word_out


def poisson(lam, key, out):
    """Elementwise Poisson draws (see :func:`same.kernels.poisson`); out int32, lam's shape."""
    xp = _xp((lam,))
    flat = xp.ascontiguousarray(lam).reshape(-1)
    flat_out = out.reshape(-1)
    n = flat.shape[0]
    if n:
        _launch("poisson_dense", *launch.poisson(n), flat, np.uint64(key), flat_out)
    return out


def _scratch(xp, kernel: str, n_topics: int, n_threads: int) -> list:
    """The scratch arrays of one launch: (K, threads) per dtype of :data:`SCRATCH`."""
    return [xp.empty((n_topics, n_threads), dtype=d) for d in SCRATCH[kernel]]


def summed_t_sweeps(indptr, indices, data, theta, phi_t, n_samples, prior_scale,
                    doc_topic_prior, keys, ratio_out, pool_max):
    """The summed sampler's T sweeps, a thread per document (see
    :func:`same.kernels.summed_t_sweeps`); θ (float32) updated in place, then c/μ."""
    indptr, indices = _csr(indptr, indices)
    xp = _xp((theta,))
    n_topics = _topics(theta)[1]
    grid, block = launch.per_thread(theta.shape[0], "summed_t_sweeps", n_topics)
    _launch("summed_t_sweeps", grid, block, indptr, indices, _f32("data", data),
            _f32("doc_topic", theta), _f32("topic_word_t", phi_t), np.float64(n_samples),
            np.float64(prior_scale), np.float64(doc_topic_prior),
            xp.asarray(keys, dtype=xp.uint64), ratio_out, np.float64(pool_max),
            *_scratch(xp, "summed_t_sweeps", n_topics, grid * block))
    return theta, ratio_out


def word_order(indptr, indices, n_words: int):
    """(col_ptr, col_doc, col_nz, per-word counts) of a CSR block in CSC order, documents
    ascending within a word (a stable sort: the order of the CPU's counting sort)."""
    xp = _xp((indices,))
    indptr = xp.asarray(indptr, dtype=xp.int64)
    col_nz = xp.argsort(xp.asarray(indices), kind="stable").astype(xp.int64)
    nnz = int(indices.shape[0])
    docs = xp.searchsorted(indptr, xp.arange(nnz, dtype=xp.int64), side="right") - 1
    col_ptr = xp.zeros(n_words + 1, dtype=xp.int64)
    col_ptr[1:] = xp.cumsum(xp.bincount(xp.asarray(indices), minlength=n_words))
    return col_ptr, docs[col_nz], col_nz


def summed_p_sweep(indptr, indices, data, ratio, theta, phi_t, n_samples, key, p_out,
                   pool_max):
    """The summed sampler's P sweep, a thread per word (see :func:`same.kernels.summed_p_sweep`)."""
    xp = _xp((theta,))
    n_words = phi_t.shape[0]
    col_ptr, col_doc, col_nz = word_order(indptr, indices, n_words)
    counts = xp.bincount(xp.asarray(indices), weights=xp.asarray(data, dtype=xp.float64),
                         minlength=n_words)
    n_topics = theta.shape[1]
    grid, block = launch.per_thread(n_words, "summed_p_sweep", n_topics)
    _launch("summed_p_sweep", grid, block, col_ptr, col_doc, col_nz, _f32("ratio", ratio),
            counts, _f32("doc_topic", theta), _f32("topic_word_t", phi_t),
            np.float64(n_samples), np.uint64(key), p_out, np.float64(pool_max),
            *_scratch(xp, "summed_p_sweep", n_topics, grid * block))
    return p_out
