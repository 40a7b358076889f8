"""A host stand-in for CuPy, so the cupy backend's host-side logic runs in CPU CI.

:func:`install` puts modules named ``cupy``, ``cupyx`` and ``cupyx.scipy.sparse`` in
``sys.modules``.  Their arrays are NumPy arrays of a subclass whose module says ``cupy``, so
``same.model.backend.array_module`` takes them for CuPy arrays; the kernels are routed to the CPU
ones (numba takes the subclass), so whole fits run.  What they check is what CuPy (14.x)
does and a GPU would punish:

- ``cupyx.scipy.sparse.csr_matrix`` refuses every dtype but bool, float32, float64,
  complex64 and complex128, with CuPy's message (cupy#3650); its 3-tuple constructor reads
  ``indptr[0]`` and ``indptr[-1]`` at construction, as CuPy 14.2 does.
- Streams and events record what happens in order (:data:`LOG`): asynchronous copies,
  event records and waits, CSR constructions and host synchronisations (``bool``, ``int``,
  ``float``, ``.get()``, ``.item()`` of a device array, ``Stream.synchronize``).
"""

from __future__ import annotations

import sys
import types

import numpy as np
import scipy.sparse as sp

#: (operation, detail) in the order they happened.
LOG: list = []
#: The device's free memory (``cupy.cuda.runtime.memGetInfo()[0]``) and what CuPy's pool holds
#: free, in bytes: an 80 GiB device unless a test sets them (install() resets them).
DEVICE_FREE, POOL_FREE = [80 * 2**30], [0]
_SPARSE_DTYPES = tuple(np.dtype(t) for t in ("bool", "float32", "float64", "complex64",
                                              "complex128"))


class ndarray(np.ndarray):  # noqa: N801 - CuPy's name
    """A "device" array: host memory, but reading it on the host is logged as a sync."""

    def get(self, stream=None, order="C", out=None):
        LOG.append(("sync", "get"))
        if out is None:
            return np.asarray(self).copy()
        np.copyto(out, np.asarray(self))
        return out

    def set(self, host, stream=None):
        LOG.append(("copy", id(self), getattr(stream, "name", "current")))
        np.copyto(np.asarray(self), host)

    def _host_read(self, how):
        LOG.append(("sync", how))
        return np.asarray(self)

    def __bool__(self):
        return bool(self._host_read("bool"))

    def __int__(self):
        return int(self._host_read("int"))

    def __float__(self):
        return float(self._host_read("float"))

    def __index__(self):
        return int(self)

    def item(self, *args):
        return self._host_read("item").item(*args)

    def tolist(self):
        return self._host_read("tolist").tolist()


ndarray.__module__ = "cupy"


def _wrap(x):
    if isinstance(x, np.ndarray) and not isinstance(x, ndarray):
        return x.view(ndarray)
    if isinstance(x, tuple):
        return tuple(_wrap(v) for v in x)
    return x


def _device(f):
    def g(*args, **kwargs):
        return _wrap(f(*args, **kwargs))
    return g


class csr_matrix(sp.csr_matrix):  # noqa: N801 - CuPy's name
    """cupyx.scipy.sparse.csr_matrix's dtype rule and its construction-time reads."""

    def __init__(self, arg, shape=None, dtype=None, copy=False):
        if isinstance(arg, tuple) and len(arg) == 3:
            data, indices, indptr = arg
            LOG.append(("csr", id(data)))
            LOG.append(("sync", "csr indptr"))
            if int(indptr[0]) != 0:  # CuPy 14.2 reads both ends on the current stream
                raise ValueError("index pointer should start with 0")
            data = data[:int(indptr[-1])]
            arg = (np.asarray(data), np.asarray(indices), np.asarray(indptr))
        elif sp.issparse(arg):
            LOG.append(("csr", "from scipy"))
        dt = np.dtype(dtype) if dtype is not None else (
            arg[0].dtype if isinstance(arg, tuple) else arg.dtype)
        if dt not in _SPARSE_DTYPES:
            raise ValueError("Only bool, float32, float64, complex64 and complex128 are "
                             "supported")
        super().__init__(arg, shape=shape, dtype=dtype, copy=copy)

    def get(self, stream=None):
        LOG.append(("sync", "get"))
        return sp.csr_matrix(self)


csr_matrix.__module__ = "cupyx.scipy.sparse"


class Event:
    def __init__(self, stream):
        self.stream = stream
        LOG.append(("record", id(self), stream.name))

    def synchronize(self):
        LOG.append(("sync", "event"))


class Stream:
    def __init__(self, non_blocking=False, name=None):
        self.name = name or ("copy" if non_blocking else "stream")
        self.ptr = 0 if name == "null" else id(self)

    def record(self):
        return Event(self)

    def wait_event(self, event):
        LOG.append(("wait", id(event), self.name))

    def synchronize(self):
        LOG.append(("sync", "stream"))

    def use(self):
        return self


_NULL = Stream(name="null")


def install(monkeypatch):
    """Install the stand-in for one test (``monkeypatch``: pytest's fixture); clears LOG and
    routes the stand-in's arrays to the CPU kernels."""
    LOG.clear()
    DEVICE_FREE[0], POOL_FREE[0] = 80 * 2**30, 0
    cupy = types.ModuleType("cupy")
    for name in ("float32", "float64", "int32", "int64", "uint64", "bool_", "finfo", "iinfo",
                 "dtype", "newaxis"):
        setattr(cupy, name, getattr(np, name))
    cupy.ndarray = ndarray
    cupy.__getattr__ = lambda name: _device(getattr(np, name))
    cupy.asnumpy = lambda a, stream=None: a.get() if hasattr(a, "get") else np.asarray(a)
    cupy.cuda = types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDeviceCount=lambda: 1,
                                      memGetInfo=lambda: (DEVICE_FREE[0], 80 * 2**30)),
        Stream=Stream, Event=Event, get_current_stream=lambda: _NULL)
    cupy.get_default_memory_pool = lambda: types.SimpleNamespace(free_bytes=lambda: POOL_FREE[0])
    cupyx = types.ModuleType("cupyx")
    cupyx.empty_pinned = lambda n, dtype: np.empty(n, dtype=dtype)
    sparse = types.ModuleType("cupyx.scipy.sparse")
    sparse.csr_matrix = csr_matrix
    sparse.issparse = lambda a: isinstance(a, csr_matrix)
    scipy_ = types.ModuleType("cupyx.scipy")
    scipy_.sparse = sparse
    cupyx.scipy = scipy_
    for name, mod in (("cupy", cupy), ("cupyx", cupyx), ("cupyx.scipy", scipy_),
                      ("cupyx.scipy.sparse", sparse)):
        monkeypatch.setitem(sys.modules, name, mod)
    import same.model.kernels

    monkeypatch.setattr(same.model.kernels, "_cpu", lambda xp: True)
    return cupy
