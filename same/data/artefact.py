"""The binary artefacts same-lda writes and reads back, sealed and checked before use.

Every ``.npz`` we write (parsed-corpus cache, synthetic corpus, held-out split, model) is
written by :func:`save_npz`: by one rename of a complete new file (:mod:`same.io.outputs`; never
truncated in place, so a reader's memory map of the old file stays valid) and *sealed*: the SHA-256 of
the file's bytes, up to its zip comment, is stored as the archive's comment (64 hex digits).
:func:`open_npz` recomputes it before numpy parses anything, so a changed, missing or added
byte anywhere in the file is refused with one line naming the file.  The arrays then pass
structural checks (:func:`csr_from_parts`, :func:`check_array`) before any numba code sees
them: a CSR matrix with a non-monotone ``indptr`` or an index ≥ W crashes compiled code
(heap corruption, seen as ``free(): invalid next size``), it does not raise.

A file changed in place by another program while a process has it memory-mapped is outside
what a check at load time can see: the kernel then signals SIGBUS on the next touch of a
page beyond the new end of the file.  Only splits larger than :data:`MMAP_MIN_BYTES` are
mapped (:func:`same.data.split.load_split`); smaller ones are read into memory.
"""

from __future__ import annotations

import hashlib
import os
import struct
import zipfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = ["ArtefactError", "save_npz", "open_npz", "npz_memmap", "csr_from_parts",
           "check_array", "remedied", "file_sha256", "MMAP_MIN_BYTES"]

#: Artefacts at least this large are memory-mapped instead of read (when the caller allows
#: it): a paper-scale split need not fit in RAM.  Smaller ones are read into memory, so that
#: an outside in-place change of the file cannot pull pages from under a running fit.
MMAP_MIN_BYTES = 1 << 30

_EOCD = b"PK\x05\x06"  # zip end-of-central-directory record, 22 bytes + comment
_EOCD_LEN = 22
_DIGEST_LEN = 64  # hex SHA-256
_BLOCK = 1 << 22


class ArtefactError(ValueError):
    """An artefact is unreadable, fails its SHA-256 seal, or holds malformed arrays.

    The message is one line: the file, what is wrong, and what rewrites the file."""


def file_sha256(f, stop: int | None = None) -> str:
    """SHA-256 (hex) of an open binary file's bytes ``[0, stop)`` (default: to the end),
    read in 4 MiB blocks."""
    h = hashlib.sha256()
    f.seek(0)
    left = stop
    while left is None or left > 0:
        block = f.read(_BLOCK if left is None else min(_BLOCK, left))
        if not block:
            break
        h.update(block)
        if left is not None:
            left -= len(block)
    return h.hexdigest()


def _seal(f) -> None:
    """Store the SHA-256 of a just-written zip file (opened ``w+b``) as its comment."""
    f.flush()
    f.seek(-_EOCD_LEN, os.SEEK_END)
    eocd = f.read(_EOCD_LEN)
    if eocd[:4] != _EOCD or eocd[20:22] != b"\0\0":
        raise RuntimeError("zip archive does not end in a comment-less end record")
    f.seek(-2, os.SEEK_END)
    f.write(struct.pack("<H", _DIGEST_LEN))
    f.flush()
    digest = file_sha256(f)
    f.seek(0, os.SEEK_END)
    f.write(digest.encode("ascii"))


def save_npz(path: str | os.PathLike, arrays: dict, *, compress: bool = False, inputs=(),
             option: str | None = None) -> None:
    """Write ``arrays`` as a sealed ``.npz`` at ``path`` by :mod:`same.io.outputs`'s rules.

    ``compress=False`` (``np.savez``) keeps the members memory-mappable; ``True`` uses
    ``np.savez_compressed``.  Nothing is left at ``path`` (nor a temporary file) when
    writing fails.  ``path`` may be replaced only when it is a sealed ``.npz`` of the same
    kind (:func:`same.io.outputs.kind_of_arrays`, told by the member names) and none of
    ``inputs``; ``option`` names ``path`` in messages ("--out").

    Raises
    ------
    same.io.outputs.OutputError
        ``path`` exists and is not ours of this kind, or is (or holds) an input.
    OSError
        The folder cannot be created or written.
    """
    from same.io.outputs import kind_of_arrays, write_file

    save = np.savez_compressed if compress else np.savez

    def write(f):
        save(f, **arrays)
        _seal(f)

    write_file(path, write, kind_of_arrays(arrays), inputs=inputs, option=option)


def _verify(f, path: Path, what: str, remedy: str) -> None:
    size = os.fstat(f.fileno()).st_size
    f.seek(max(0, size - _EOCD_LEN - _DIGEST_LEN))
    tail = f.read()
    if (len(tail) < _EOCD_LEN + _DIGEST_LEN or tail[:4] != _EOCD
            or tail[20:22] != struct.pack("<H", _DIGEST_LEN)):
        raise ArtefactError(f"{path}: not a sealed {what} (no SHA-256 seal at its end: "
                            f"truncated, or not written by this version of same-lda); {remedy}")
    if file_sha256(f, size - _DIGEST_LEN).encode("ascii") != tail[-_DIGEST_LEN:]:
        raise ArtefactError(f"{path}: {what} does not match its SHA-256 seal (changed or "
                            f"damaged since it was written); {remedy}")


def open_npz(path: str | os.PathLike, what: str, remedy: str, keys, *,
             mmap: bool = False) -> dict[str, np.ndarray]:
    """Read the arrays ``keys`` of a sealed ``.npz`` after checking its seal.

    Parameters
    ----------
    what : str
        What the file is, for messages ("split", "model file", ...).
    remedy : str
        What rewrites the file (ends every message).
    mmap : bool
        Memory-map the members (uncompressed files of at least :data:`MMAP_MIN_BYTES`)
        instead of reading them; the mapping is of the file whose seal was checked.

    Raises
    ------
    FileNotFoundError
        No such file.
    ArtefactError
        Unsealed, seal mismatch, unreadable, or a key missing (one line naming the file).
    """
    path = Path(path)
    if not path.is_file():
        if path.exists():
            raise ArtefactError(f"{path}: is not a regular file, so not a {what}; {remedy}")
        raise FileNotFoundError(f"{path}: no such {what}")
    with open(path, "rb") as f:
        _verify(f, path, what, remedy)
        try:
            mapped = (npz_memmap(f) if mmap and os.fstat(f.fileno()).st_size
                      >= MMAP_MIN_BYTES else None)
            if mapped is not None:
                missing = [k for k in keys if k not in mapped]
                if missing:
                    raise KeyError(missing[0])
                return {k: mapped[k] for k in keys}
            f.seek(0)
            with np.load(f, allow_pickle=False) as z:
                return {k: z[k] for k in keys}
        except Exception as exc:  # zipfile, zlib, npy header, KeyError: all mean "unreadable"
            raise ArtefactError(f"{path}: unreadable {what} ({type(exc).__name__}: "
                                f"{str(exc).splitlines()[0] if str(exc) else ''}); "
                                f"{remedy}") from None


def npz_memmap(file) -> dict[str, np.ndarray] | None:
    """Memory-map every array of an uncompressed ``.npz`` (as written by ``np.savez``).

    ``file``: a path, or a binary file object open for reading (then the mapping is of that
    open file, whatever its path names by now).  Returns {name: read-only np.memmap}, or
    None when a member is compressed (then it must be read instead).  Pages are read from
    disk on first touch and can be dropped by the kernel, so a corpus larger than RAM can be
    trained on in document order.
    """
    if not hasattr(file, "read"):
        with open(file, "rb") as f:
            return npz_memmap(f)
    f, out = file, {}
    zf = zipfile.ZipFile(f)
    for info in zf.infolist():
        if info.compress_type != zipfile.ZIP_STORED or not info.filename.endswith(".npy"):
            return None
        f.seek(info.header_offset)
        local = f.read(30)
        name_len, extra_len = struct.unpack("<HH", local[26:30])
        f.seek(info.header_offset + 30 + name_len + extra_len)
        version = np.lib.format.read_magic(f)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        shape, fortran, dtype = read_header(f)
        if dtype.hasobject:
            return None
        name = info.filename[:-4]
        if int(np.prod(shape)) == 0 or dtype.itemsize == 0:
            out[name] = np.zeros(shape, dtype=dtype)
        else:
            out[name] = np.memmap(f, dtype=dtype, mode="r", offset=f.tell(), shape=shape,
                                  order="F" if fortran else "C")
    return out


@contextmanager
def remedied(remedy: str, error: type[ArtefactError] = ArtefactError):
    """Re-raise an :class:`ArtefactError` from the block as ``error`` ending in ``remedy``."""
    try:
        yield
    except ArtefactError as exc:
        msg = str(exc)
        raise error(msg if msg.endswith(remedy) else f"{msg}; {remedy}") from None


def check_array(a, name: str, where: str, *, ndim: int, kind: str = "iuf",
                nonnegative: bool = True, finite: bool = True) -> np.ndarray:
    """Check one array's rank, dtype kind (``"i"``, ``"u"``, ``"f"``, ``"U"``), finiteness
    and sign (rank and kind by :func:`same.data.csr_structure.check_part`, the input gate's check).

    Raises
    ------
    ArtefactError
        ``"{where}: {name} ..."`` naming what is wrong.
    """
    from .csr_structure import check_part

    a = check_part(np.asarray(a), name, where, ndim, kind, ArtefactError)
    if a.size and a.dtype.kind == "f" and finite and not np.isfinite(a).all():
        raise ArtefactError(f"{where}: {name} holds NaN or infinite values")
    if a.size and nonnegative and a.dtype.kind in "iuf" and a.min() < 0:
        raise ArtefactError(f"{where}: {name} holds negative values (min {a.min()})")
    return a


def csr_from_parts(data, indices, indptr, shape, where: str, *,
                   integer: bool = True) -> sp.csr_matrix:
    """A CSR matrix from its parts, after every check compiled code relies on.

    Checked: shape two integers ≥ 0 (≥ 1 row and column); data 1-D, finite and ≥ 0,
    integers when ``integer``; the structure by :func:`same.data.csr_structure.check_compressed` (the
    input gate's own check of a user's matrix): ``indptr`` and ``indices`` 1-D integer
    arrays, ``indptr`` of length rows + 1, starting at 0, non-decreasing, ending at nnz =
    len(indices) = len(data), every index in [0, W); then each row's indices strictly
    increasing (sorted, no duplicates: an artefact we wrote is canonical).

    Raises
    ------
    ArtefactError
        ``"{where}: ..."`` naming the first check that fails.
    """
    from .csr_structure import check_compressed

    shape = check_array(shape, "shape", where, ndim=1, kind="i")
    if shape.size != 2 or shape.min() < 1:
        raise ArtefactError(f"{where}: shape {shape.tolist()} is not (documents ≥ 1, words ≥ 1)")
    n_rows, n_cols = (int(s) for s in shape)
    data = check_array(data, "data", where, ndim=1, kind="iu" if integer else "iuf")
    check_compressed(indptr, indices, n_rows, n_cols, where, nnz=data.size,
                     error=ArtefactError)
    m = sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_cols), copy=False)
    if not m.has_canonical_format:
        raise ArtefactError(f"{where}: a row's word indices are not strictly increasing "
                            "(unsorted or duplicated entries)")
    return m
