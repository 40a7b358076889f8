"""Array backends: NumPy (CPU) and CuPy (GPU) behind one ``xp`` namespace.

Algorithm code is written once against ``xp``; only ``same.kernels`` holds
backend-specific code.  CuPy is imported lazily so CPU-only use never touches CUDA.
"""

from __future__ import annotations

import types

import numpy as np
import scipy.sparse as sp

__all__ = ["get_xp", "array_module", "sparse_module", "to_backend", "to_numpy", "BACKENDS"]

BACKENDS = ("numpy", "cupy")


def get_xp(backend: str) -> types.ModuleType:
    """Return ``numpy`` or ``cupy`` for a backend name.

    Raises
    ------
    ValueError
        Unknown backend name.
    RuntimeError
        ``"cupy"`` requested but CuPy is not installed or no CUDA device is visible.
    """
    if backend == "numpy":
        return np
    if backend == "cupy":
        try:
            import cupy
        except ImportError as exc:
            raise RuntimeError(
                "backend='cupy' needs CuPy: pip install 'same-lda[cuda12]' (or [cuda13])") from exc
        try:
            n = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:  # CUDARuntimeError when no driver
            raise RuntimeError(f"backend='cupy' needs a CUDA device: {exc}") from exc
        if n < 1:
            raise RuntimeError("backend='cupy' needs a CUDA device: none visible")
        return cupy
    raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")


def array_module(*arrays) -> types.ModuleType:
    """``cupy`` if any argument is a CuPy (sparse) array, else ``numpy``."""
    for a in arrays:
        mod = type(a).__module__
        if mod.startswith("cupy") or mod.startswith("cupyx"):
            import cupy

            return cupy
    return np


def sparse_module(xp: types.ModuleType) -> types.ModuleType:
    """``scipy.sparse`` for NumPy, ``cupyx.scipy.sparse`` for CuPy."""
    if xp is np:
        return sp
    import cupyx.scipy.sparse as csp

    return csp


def to_backend(a, xp: types.ModuleType, dtype=None):
    """Move a dense or sparse array to ``xp`` (no copy when already there)."""
    if xp is np:
        if array_module(a) is not np:
            a = a.get()
        if sp.issparse(a):
            return a.astype(dtype) if dtype is not None and a.dtype != dtype else a
        return np.asarray(a, dtype=dtype)
    csp = sparse_module(xp)
    if sp.issparse(a):
        a = csp.csr_matrix(a.tocsr().astype(dtype or a.dtype))
        return a
    if csp.issparse(a):
        return a.astype(dtype) if dtype is not None and a.dtype != dtype else a
    return xp.asarray(a, dtype=dtype)


def to_numpy(a):
    """Return a NumPy (or SciPy sparse) copy/view of a backend array."""
    return a.get() if array_module(a) is not np else a
