"""The structure of a compressed sparse matrix, checked before any compiled code reads it.

A CSR matrix whose ``indptr`` decreases or whose index is ≥ W does not raise in SciPy's
C++ or our numba kernels: it reads or writes out of bounds (SIGSEGV, or heap corruption seen
as SIGABRT).  :func:`check_compressed` is the one check of that structure, with vectorised
NumPy: the input gate of a user's matrix (:func:`same.data.count_matrix.validate_counts`), our own
``.npz`` artefacts (:func:`same.data.artefact.csr_from_parts`) and the kernels' dispatch
(:mod:`same.model.kernels`) call it.  NumPy only, so that importing it costs nothing.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CountsError", "check_compressed", "check_part", "check_range"]

_KIND_NAMES = {"b": "booleans", "i": "signed integers", "u": "unsigned integers",
               "f": "floats", "U": "text"}


class CountsError(ValueError):
    """A count matrix is malformed: one line naming the argument and the first fault."""


def check_part(a, name: str, where: str, ndim: int, kind: str | None, error=CountsError):
    """``a`` (as an array; a CuPy array is left on its device) after its rank and dtype kind
    (any of ``"b"``, ``"i"``, ``"u"``, ``"f"``, ``"U"``; None: any) are checked: metadata only.

    Raises
    ------
    ``error``
        ``"{where}: {name} has ..."`` naming the rank or dtype found and the one expected.
    """
    a = a if hasattr(a, "ndim") and hasattr(a, "dtype") else np.asarray(a)
    if a.ndim != ndim:
        raise error(f"{where}: {name} has {a.ndim} dimensions, expected {ndim}")
    if kind is not None and a.dtype.kind not in kind:
        raise error(f"{where}: {name} has dtype {a.dtype}, expected "
                    + " or ".join(_KIND_NAMES[k] for k in kind))
    return a


def check_range(idx, n: int, what: str, where: str, error) -> None:
    """Every entry of the integer array ``idx`` in [0, n), else ``error`` naming the first."""
    if idx.shape[0] == 0:
        return
    if int(idx.min()) < 0 or int(idx.max()) >= n:
        j = int(np.argmax((idx < 0) | (idx >= n)))
        span = f"0..{n - 1}" if n else "(there are none)"
        raise error(f"{where}: {what} index {int(idx[j])} out of range {span}")


def check_compressed(indptr, indices, n_major: int, n_minor: int, where: str, *,
                     nnz: int | None = None, axes=("row", "word"), values: bool = True,
                     error=CountsError) -> None:
    """The structure of a compressed sparse matrix, before any compiled code reads it.

    CSR: ``axes=("row", "word")``, ``n_major`` documents and ``n_minor`` words; CSC:
    ``("column", "document")`` with the two counts swapped; BSR: block rows and columns.
    Checked: ``indptr`` and ``indices`` 1-D integer arrays; ``indptr`` of ``n_major + 1``
    entries, starting at 0, non-decreasing, ending at len(indices) = ``nnz`` (the length of
    the values, when given); every index in [0, ``n_minor``).  ``values=False`` checks only
    ranks, dtypes and lengths (nothing that reads a CuPy array's memory, so no device
    synchronisation).  Vectorised NumPy: no temporary larger than ``indptr`` unless it fails.

    Raises
    ------
    ``error`` (default :class:`CountsError`, a ValueError)
        One line ``"{where}: ..."`` naming the first fault, e.g. ``X: indptr decreases at
        row 2`` or ``X: word index 7 out of range 0..4``.
    """
    major, minor = axes
    indptr = check_part(indptr, "indptr", where, 1, "iu", error)
    indices = check_part(indices, "indices", where, 1, "iu", error)
    if indptr.shape[0] != n_major + 1:
        raise error(f"{where}: indptr has {indptr.shape[0]} entries, expected {major}s + 1 = "
                    f"{n_major + 1}")
    n = indices.shape[0]
    nnz = n if nnz is None else nnz
    if not values:
        if nnz != n:
            raise error(f"{where}: {n} indices but {nnz} values")
        return
    start, end = int(indptr[0]), int(indptr[-1])
    if start != 0 or end != n or nnz != n:
        raise error(f"{where}: indptr runs {start}..{end} but there are {n} indices and "
                    f"{nnz} values")
    if n_major > 1:
        down = indptr[1:] < indptr[:-1]
        if down.any():
            raise error(f"{where}: indptr decreases at {major} {int(np.argmax(down))}")
    check_range(indices, n_minor, minor, where, error)
