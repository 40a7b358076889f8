"""numba's on-disk cache for the kernels, invalidated by an edit of any kernel source file.

numba keys a cached function on the source of the file that defines it (a hash of that file
in numba ≥ 0.61, its mtime and size before), not on the files of the functions it calls.  The
CPU kernels (:mod:`same.model.kernels.cpu`) inline the per-element code of
:mod:`same.model.kernels.elements`, so after an edit of ``elements.py`` alone numba would keep
loading the kernels compiled from the old per-element code: a stale sampler, silently (seen
here: a kernel whose Poisson draws had been removed returned the old draws bit for bit).

Importing this module puts, in front of numba's own cache locators, subclasses of them that
serve only the functions defined in this package directory and whose source stamp is numba's
stamp of the function's file together with one hash of every ``*.py`` file here.  Where the
cache goes is unchanged.  Imported by the package's ``__init__``, so before any module here
defines a ``cache=True`` function (numba picks the locator when the decorator runs).
"""

from __future__ import annotations

import functools
import hashlib
import warnings
from pathlib import Path

import numba
from numba.core import caching

__all__ = ["kernel_sources_hash", "KERNEL_DIR"]

#: The directory whose ``*.py`` files make up every kernel's source stamp.
KERNEL_DIR = Path(__file__).resolve().parent


def kernel_sources_hash() -> bytes:
    """SHA-256 over the names and contents of every ``*.py`` file in :data:`KERNEL_DIR`,
    in name order (read anew whenever a file's mtime or size changes)."""
    files = sorted(KERNEL_DIR.glob("*.py"))
    return _hash_files(tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in files))


@functools.lru_cache(maxsize=8)
def _hash_files(stamps) -> bytes:
    h = hashlib.sha256()
    for path, _, _ in stamps:
        h.update(Path(path).name.encode() + b"\0" + Path(path).read_bytes() + b"\0")
    return h.digest()


class _KernelSourcesMixin:
    """A locator that serves only functions defined in :data:`KERNEL_DIR`, stamped with
    :func:`kernel_sources_hash` as well as numba's own stamp of the defining file."""

    def get_source_stamp(self):
        return (super().get_source_stamp(), kernel_sources_hash())

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            if Path(py_file).resolve().parent != KERNEL_DIR:
                return None
        except OSError:
            return None
        return super().from_function(py_func, py_file)


def _register() -> None:
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    names = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")
    bases = [getattr(caching, n, None) or getattr(caching, "_" + n, None) for n in names]
    if impl is None or not hasattr(impl, "_locator_classes") or None in bases:
        warnings.warn(f"numba {numba.__version__}: unknown cache internals; the kernels' "
                      "cache may outlive an edit of same/model/kernels/elements.py (clear "
                      "same/model/kernels/__pycache__ after editing it)", RuntimeWarning, stacklevel=2)
        return
    if any(issubclass(c, _KernelSourcesMixin) for c in impl._locator_classes):
        return
    ours = [type(f"KernelSources{base.__name__.lstrip('_')}", (_KernelSourcesMixin, base), {})
            for base in bases]
    impl._locator_classes = ours + list(impl._locator_classes)


_register()
