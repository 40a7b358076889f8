"""The GPU path of :func:`same.data.synthetic.shaped_corpus`: numba-cuda kernels, a thread per
document (grid-stride), running the per-document functions of
:mod:`same.data.synthetic_kernels` that the CPU path runs under ``prange``; same counters, same
tables, so the same matrix bit for bit.

On a GPU the arrays are CuPy's and the launches go on CuPy's current stream; under numba-cuda's
simulator (``NUMBA_ENABLE_CUDASIM=1`` before numba is imported) the same kernels run on NumPy
arrays, calling the per-document functions as plain Python (their ``py_func`` source: the
simulator hands kernels wrapped arrays that compiled functions cannot take).  Importing this
module never initialises CUDA.
"""

from __future__ import annotations

import functools
import types

import numpy as np
from numba import cuda  # importing touches no driver
from numba.core import config

from . import synthetic_kernels as _sk

__all__ = ["generate", "kernel_sources", "signatures", "THREADS", "MAX_BLOCKS"]

#: Threads per block, and the most blocks a launch uses (a grid-stride loop covers the rest).
THREADS, MAX_BLOCKS = 256, 1 << 16

doc_size, fill_doc = _sk.doc_size, _sk.fill_doc


def python_twins(module=_sk) -> dict:
    """``module``'s ``@njit`` functions as plain Python calling one another (their ``py_func``
    code with shared globals), for the simulator."""
    from numba.core.registry import CPUDispatcher

    shared = dict(vars(module))
    for name, obj in vars(module).items():
        if isinstance(obj, CPUDispatcher):
            f = obj.py_func
            shared[name] = types.FunctionType(f.__code__, shared, f.__name__, f.__defaults__,
                                              f.__closure__)
    return shared


if config.ENABLE_CUDASIM:  # pragma: no cover - only in the simulator's process
    _twins = python_twins()
    doc_size, fill_doc = _twins["doc_size"], _twins["fill_doc"]


# The kernels as plain Python functions (cuda.jit'd by _kernels, compiled to PTX by the tests);
# they use the module-level names so that the simulator's substitutes are the ones called.
def sizes_kernel(size_cdf, size_offset, n_words, key, out):  # pragma: no cover - device code
    for d in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[d] = doc_size(d, size_cdf, size_offset, n_words, key)


def fill_kernel(indptr, word_cdf, count_cdf, count_offset, key, indices,
                data):  # pragma: no cover - device code
    for d in range(cuda.grid(1), indptr.shape[0] - 1, cuda.gridsize(1)):
        fill_doc(d, indptr[d], indptr[d + 1] - indptr[d], word_cdf, count_cdf, count_offset, key,
                 indices, data)


def kernel_sources() -> dict:
    """kernel name → its Python function."""
    return {"sizes": sizes_kernel, "fill": fill_kernel}


def signatures() -> dict:
    """kernel name → the argument types it is launched with."""
    from numba import types as t

    f64 = t.float64[::1]
    return {"sizes": (f64, t.int64, t.int64, t.uint64, t.int64[::1]),
            "fill": (t.int64[::1], f64, f64, t.int64, t.uint64, t.int32[::1], t.int32[::1])}


@functools.lru_cache(maxsize=None)
def _kernels() -> dict:
    return {name: cuda.jit(f) for name, f in kernel_sources().items()}


def _launch(name: str, n: int, xp, *args):
    if n == 0:
        return
    block = min(THREADS, n)
    grid = min(MAX_BLOCKS, -(-n // block))
    kernel = _kernels()[name]
    if xp is np:  # the simulator
        kernel[grid, block](*args)
        return
    # CuPy's legacy default stream is pointer 0, which DLPack forbids; 1 is the same stream
    stream = cuda.external_stream(int(xp.cuda.get_current_stream().ptr) or 1)
    kernel[grid, block, stream](*args)


def generate(n_docs: int, n_words: int, size_cdf, size_offset: int, word_cdf, count_cdf,
             count_offset: int, key) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(indptr int64, indices int32, data int32) on the host, made on the GPU (or simulator).

    Raises
    ------
    RuntimeError
        No simulator and no CuPy.
    """
    if config.ENABLE_CUDASIM:
        xp = np
    else:
        try:
            import cupy as xp
        except ImportError as e:
            raise RuntimeError("device='cuda' needs CuPy and a CUDA GPU (or numba-cuda's "
                               "simulator, NUMBA_ENABLE_CUDASIM=1)") from e
    size_cdf, word_cdf, count_cdf = (xp.asarray(a, dtype=xp.float64)
                                     for a in (size_cdf, word_cdf, count_cdf))
    key = np.uint64(key)
    sizes = xp.empty(n_docs, dtype=xp.int64)
    _launch("sizes", n_docs, xp, size_cdf, np.int64(size_offset), np.int64(n_words), key, sizes)
    indptr = xp.zeros(n_docs + 1, dtype=xp.int64)
    xp.cumsum(sizes, out=indptr[1:])
    del sizes
    total = int(indptr[-1])
    indices = xp.empty(total, dtype=xp.int32)
    data = xp.empty(total, dtype=xp.int32)
    _launch("fill", n_docs, xp, indptr, word_cdf, count_cdf, np.int64(count_offset), key,
            indices, data)
    if xp is np:
        return indptr, indices, data
    return indptr.get(), indices.get(), data.get()
