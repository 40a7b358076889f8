"""CUDA kernels (numba-cuda) behind the same wrappers as the CPU ones.

Every kernel here calls the per-element functions of :mod:`same.model.kernels.elements` -- the
counter-based uniform, the exact Poisson draw, the draws of one (nonzero, topic) row with
small-λ pooling, the μ of one nonzero -- which the CPU kernels (:mod:`same.model.kernels.cpu`)
call too: one source, one algorithm and the same counter streams, so the counts are equal in
distribution to the CPU's and identical except where rounding flips a draw: NVVM contracts
multiply-adds into ``fma`` (the PTX of the summed sweeps holds them) and libdevice's
exp/log/lgamma are not glibc's, so μ and λ may differ in the last bits.  Under numba-cuda's
simulator (Python arithmetic, as the CPU's) the counts are bit-identical to the CPU kernels'.
How they are added up differs and is exact both ways: per-thread buffers on the CPU, integer
atomics here.

Kernels (signatures in :func:`signatures`, compiled to PTX for sm_80 and sm_90 and run under
numba-cuda's simulator in the test suite):

Grids and blocks come from :mod:`same.model.kernels.launch` (checked at paper scale by
tests/model/test_launch.py).  Every sampling kernel is a warp whose lanes share an item's K
topics (:mod:`same.model.kernels.cuda_warp`); a warp's run of nonzeros finds its first document by
binary search of the row pointers (:func:`same.model.kernels.segments.row_of`) and walks on
(:func:`~same.model.kernels.segments.advance`), so no kernel's work follows a document's length.

- ``sddmm``: a warp per :data:`~same.model.kernels.launch.NZ_CHUNK` nonzeros; μ_j in float64
  (as the CPU), the lanes' partial sums over their topics added by a butterfly of shuffles,
  stored as float32 or float64.
- ``sample_accumulate``: a warp per :data:`~same.model.kernels.launch.NZ_CHUNK` nonzeros, drawn
  one after another by the warp together, counts added to T once per document and to P with
  int32 ``atomicAdd`` (:mod:`same.model.kernels.cuda_sample`).
- ``poisson_dense``: a grid-stride loop, element i from counter i·2^20.
- the summed sampler's ``summed_t_partial`` / ``summed_t_draw`` (a pair per T sweep),
  ``summed_ratio`` (c/μ, a warp per NZ_CHUNK nonzeros; on a GPU fit the P sweep computes c/μ
  itself) and ``summed_p_partial`` / ``summed_p_draw``: chunked partial sums, then a warp per
  document or word (:mod:`same.model.kernels.cuda_summed`).

Launches go on CuPy's current stream (:func:`stream_handle`); under the simulator the same
kernels run on host arrays (:func:`same.model.kernels.cuda_on_host`).  Importing this module never
initialises CUDA.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, float64  # importing touches no driver
from numba.core import config

from . import launch
from .cuda_host import (
    MAX_TOPICS,
    _csr,
    _f32,
    _topics,
    _xp,
    jit_kernel,
    launch_kernel,
    python_twins,
    stream_handle,
)
from .cuda_warp import WARP, shared_bytes, warp_dots
from .elements import element_counter
from .elements import poisson as poisson_draw
from .launch import THREADS

__all__ = ["sddmm", "sample_accumulate", "poisson", "MAX_TOPICS", "THREADS",
           "signatures", "kernel_functions", "python_twins", "stream_handle"]


# The kernels as plain Python functions; :func:`kernel_functions` JIT-compiles them for the
# device and same.model.kernels.ptx compiles them to PTX.  They use the module-level ``cuda`` so that
# numba-cuda's simulator can substitute its own.
def sddmm_kernel(indptr, indices, theta, phi_t, nz_chunk, out):  # pragma: no cover - device code
    # μ in float64 (dot_f64's sums), whatever out's dtype; out[:0]: no counts, μ itself
    warp_dots(indptr, indices, out[:0], theta, phi_t, cuda.blockIdx.x * nz_chunk, nz_chunk,
              np.float64(0.0), out, cuda.shared.array(0, float64)[:WARP])


def poisson_kernel(lam, key, out):  # pragma: no cover - device code
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, lam.shape[0], stride):
        out[i] = poisson_draw(lam[i], key, element_counter(i))


if config.ENABLE_CUDASIM:  # pragma: no cover - only in the simulator's process
    _twins = python_twins()
    element_counter, poisson_draw = _twins["element_counter"], _twins["poisson"]




def _kernel_sources() -> dict:
    """kernel name → its Python function (for :func:`kernel_functions` and PTX compilation)."""
    from . import cuda_sample, cuda_summed

    return {"sddmm": sddmm_kernel, "sample_accumulate": cuda_sample.sample_kernel,
            "poisson_dense": poisson_kernel, **cuda_summed.kernel_sources()}


def signatures() -> dict:
    """kernel name → the argument types it is launched with (every one is compiled to PTX)."""
    from numba import types as t

    from . import cuda_sample, cuda_summed

    csr = (t.int64[::1], t.int32[::1])
    f32m, f64m = t.float32[:, ::1], t.float64[:, ::1]
    return {
        "sddmm": [(*csr, f32m, f32m, t.int64, t.float32[::1]),
                  (*csr, f64m, f64m, t.int64, t.float64[::1])],
        **cuda_sample.signatures(),
        "poisson_dense": [(t.float32[::1], t.uint64, t.int32[::1]),
                          (t.float64[::1], t.uint64, t.int32[::1])],
        **cuda_summed.signatures(),
    }


@functools.lru_cache(maxsize=None)
def kernel_functions() -> dict:
    """kernel name → ``numba.cuda.jit`` kernel (compiled lazily, per signature, at launch); the
    summed sampler's are :func:`same.model.kernels.cuda_summed.kernel_functions`' own."""
    from . import cuda_summed

    own = {name: jit_kernel(name, f) for name, f in _kernel_sources().items()
           if name not in cuda_summed.kernel_sources()}
    return {**own, **cuda_summed.kernel_functions()}


def _launch(name: str, grid: int, block: int, *args, shared: int = 0):
    launch_kernel(kernel_functions()[name], grid, block, *args, shared=shared)


def sddmm(indptr, indices, doc_topic, topic_word_t, out):
    """CUDA SDDMM: μ_j = Σ_k θ_dk φ_kw_j, float32 or float64 (see :func:`same.model.kernels.sddmm`)."""
    indptr, indices = _csr(indptr, indices)
    xp = _xp((doc_topic,))
    theta = xp.ascontiguousarray(doc_topic)
    phi_t = xp.ascontiguousarray(topic_word_t)
    if indices.shape[0]:
        _launch("sddmm", *launch.sddmm(indices.shape[0]), indptr, indices, theta, phi_t,
                np.int64(launch.NZ_CHUNK), out, shared=shared_bytes(0, theta.shape[1]))
    return out


def sample_accumulate(indptr, indices, data, doc_topic, topic_word_t, mu, n_samples, key,
                      doc_topic_out, topic_word_out, pool_max):
    """CUDA Poisson sweep with accumulation (see :func:`same.model.kernels.sample_accumulate`).

    doc_topic_out, topic_word_out : int32, zeroed here; ``topic_word_out`` None: no P.

    Raises
    ------
    ValueError
        K above :data:`MAX_TOPICS`, or not-float32 inputs.
    """
    from . import cuda_sample

    indptr, indices = _csr(indptr, indices)
    xp = _xp((doc_topic,))
    theta = _f32("doc_topic", doc_topic)
    phi_t = _f32("topic_word_t", topic_word_t)
    n_docs, n_topics = _topics(theta)
    accumulate = topic_word_out is not None
    doc_topic_out[...] = 0
    p_out = topic_word_out if accumulate else xp.zeros((1, n_topics), dtype=xp.int32)
    p_out[...] = 0
    if n_docs and indices.shape[0]:
        _launch("sample_accumulate", *launch.sample_accumulate(indices.shape[0]), indptr,
                indices, _f32("data", data), theta, phi_t, _f32("mu", mu),
                np.float64(n_samples), np.uint64(key), doc_topic_out, p_out,
                np.bool_(accumulate), np.float64(pool_max), np.int64(launch.NZ_CHUNK),
                shared=shared_bytes(cuda_sample.ROWS, n_topics, cuda_sample.ROWS32))
    return doc_topic_out, topic_word_out


def poisson(lam, key, out):
    """Elementwise Poisson draws (see :func:`same.model.kernels.poisson`); out int32, lam's shape."""
    xp = _xp((lam,))
    flat = xp.ascontiguousarray(lam).reshape(-1)
    flat_out = out.reshape(-1)
    n = flat.shape[0]
    if n:
        _launch("poisson_dense", *launch.poisson(n), flat, np.uint64(key), flat_out)
    return out
