"""Host-side helpers of the CUDA kernels, shared by :mod:`same.model.kernels.cuda`,
:mod:`~same.model.kernels.cuda_sample` and :mod:`~same.model.kernels.cuda_summed`: the launch
on CuPy's stream, argument coercion and the simulator's Python twins of the per-element code.
Importing it never initialises CUDA."""

from __future__ import annotations

import functools
import types

import numpy as np
from numba import cuda  # importing touches no driver

__all__ = ["MAX_TOPICS", "MAX_REGISTERS", "CAP_ONLY_ON", "register_cap", "jit_kernel", "launch_kernel", "python_twins",
           "stream_handle", "incnorm"]

#: Largest K the GPU sampling kernels support.
MAX_TOPICS = 1024


#: Register caps by kernel (ptxas 12.9 of the test extra; blocks an H100 SM holds:
#: :func:`same.model.kernels.launch.blocks_per_sm`). The per-nonzero sampler's inlined Poisson
#: draws take 186 registers uncapped on sm_90, 8 one-warp blocks an SM; at 96 an SM holds 20
#: (its shared rows allow 22 at K = 256), the rest spilled to L1-cached local memory. The
#: summed T sweep takes 98 on sm_90, 16 blocks an SM (a warp's registers round up to 104);
#: capped at 96 it takes 95 and spills nothing: 20 blocks. On sm_80 it takes 92 and a cap of
#: 96 would spill 60 bytes, so its cap applies only where :data:`CAP_ONLY_ON` says.
MAX_REGISTERS = {"sample_accumulate": 96, "summed_t_partial": 96}
#: The compute capabilities a kernel's cap applies to, where not every one.
CAP_ONLY_ON = {"summed_t_partial": ((9, 0),)}


def register_cap(name: str, cc: tuple[int, int] | None) -> int | None:
    """Kernel ``name``'s register cap on a GPU of compute capability ``cc`` (None: unknown,
    only the caps of every capability apply); None: uncapped."""
    only = CAP_ONLY_ON.get(name)
    return MAX_REGISTERS.get(name) if only is None or (cc is not None and tuple(cc) in only) \
        else None


def _device_capability() -> tuple[int, int] | None:
    """The current CUDA device's compute capability; None without a driver or a device."""
    try:
        return tuple(cuda.get_current_device().compute_capability) if cuda.is_available() \
            else None
    except Exception:  # CudaSupportError, CudaDriverError: no device to compile for
        return None


def jit_kernel(name: str, f):
    """``cuda.jit`` of kernel ``name`` (every kernel of :mod:`~same.model.kernels.cuda` and
    :mod:`~same.model.kernels.cuda_summed`), its register cap on this GPU
    (:func:`register_cap`) applied (numba-cuda's simulator takes no cap)."""
    from numba.core import config

    cap = None if config.ENABLE_CUDASIM else register_cap(name, _device_capability())
    return cuda.jit(f, max_registers=cap) if cap else cuda.jit(f)


def python_twins(module=None) -> dict:
    """The per-element functions of :mod:`same.model.kernels.elements` (or of ``module``) as plain
    Python, calling one another (their ``py_func`` code with shared globals).

    numba-cuda's simulator runs kernels as Python and hands them wrapped arrays that compiled
    njit functions cannot take; the simulated kernels call these twins instead: the same
    source, so the simulator tests the code a GPU compiles.
    """
    from numba.core.registry import CPUDispatcher

    from . import elements

    module = module or elements
    shared = dict(vars(module))
    for name, obj in vars(module).items():
        if isinstance(obj, CPUDispatcher):
            f = obj.py_func
            shared[name] = types.FunctionType(f.__code__, shared, f.__name__, f.__defaults__,
                                              f.__closure__)
    return shared


def launch_kernel(kernel, grid: int, block: int, *args, shared: int = 0):
    """Launch a compiled ``kernel`` on CuPy's current stream, or on host arrays under the
    simulator, with ``shared`` bytes of dynamic shared memory per block."""
    xp = _xp(args)
    if xp is np:  # host arrays: the CUDA simulator (same.model.kernels.cuda_on_host)
        kernel[grid, block, 0, shared](*args)
        return
    stream = cuda.external_stream(stream_handle(xp.cuda.get_current_stream().ptr))
    kernel[grid, block, stream, shared](*args)


def stream_handle(ptr: int) -> int:
    """The stream handle for a launch on CuPy's current stream of pointer ``ptr``.

    numba-cuda exports each CuPy argument with ``__dlpack__(stream=<the launch's handle>)``.
    CuPy gives its legacy default stream as pointer 0, which DLPack forbids for CUDA (0 is
    ambiguous; 1 is the legacy default stream, 2 the per-thread one) and CuPy warns about at
    every export.  So 0 becomes ``CU_STREAM_LEGACY`` (1), the same stream to the driver."""
    return int(ptr) or 1


def _xp(args):
    from same.model.backend import array_module

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


@functools.lru_cache(maxsize=None)
def _incnorm_kernels():
    """CuPy's elementwise kernels of :func:`incnorm`, built on first use.  Round-to-nearest
    intrinsics throughout, so no multiply-add is contracted: each operation rounds as the
    CPU's (:func:`same.model.kernels.cpu.incnorm_t`)."""
    import cupy

    blend = cupy.ElementwiseKernel(
        "float32 phi, int32 p, float64 total, float64 rho, float64 s, float64 beta",
        "float32 out",
        "out = (float)__dadd_rn(__dmul_rn(1.0 - rho, (double)phi),"
        " __ddiv_rn(__dmul_rn(rho, __dadd_rn(__ddiv_rn((double)p, s), beta)), total))",
        "same_incnorm_blend")
    scale = cupy.ElementwiseKernel("float32 phi, float64 total", "float32 out",
                                   "out = (float)__ddiv_rn((double)phi, total)",
                                   "same_incnorm_scale")
    return blend, scale


def incnorm(phi_t, p_t, row_total, prior_scale: float, topic_word_prior: float, rho: float):
    """IncNorm on CuPy arrays, in place (see :func:`same.model.kernels.incnorm`): the column
    sums Σ_w as matrix-vector products in float64 (cuBLAS; CuPy's own reduction over the W
    rows took 2.5 ms each at NYTimes' W × K = 256 on an H100; Σ_w P is exact, its terms
    integers), the totals in float64 (K values), the blend and the renormalisation each one
    fused pass over φᵀ; returns (phi_t, row_total)."""
    import cupy

    blend, scale = _incnorm_kernels()
    ones = cupy.ones(phi_t.shape[0], dtype=cupy.float64)
    total = (1.0 - rho) * row_total.astype(cupy.float64) + rho * (
        ones @ p_t.astype(cupy.float64) / prior_scale + phi_t.shape[0] * topic_word_prior)
    row_total[...] = total
    blend(phi_t, p_t, total, rho, prior_scale, topic_word_prior, phi_t)
    scale(phi_t, ones @ phi_t.astype(cupy.float64), phi_t)
    return phi_t, row_total
