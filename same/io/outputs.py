"""The one write discipline of every file and folder same-lda writes.

Used by every writer: a fit's output folder (:mod:`same.experiments.rundir`), ``split``, ``synthesize``,
model.npz and the parsed-corpus cache (:func:`same.data.artefact.save_npz`), tuning.{csv,md,json},
the report's tables, figures and claims.md, :func:`same.experiments.provenance.write_json` (scaling,
benchmark results).  The rules:

1. A target that exists and is not recognisably our own earlier output *of the same kind* is
   refused with one line (:class:`OutputError`) before any work (:func:`check_target`, which
   the commands call first), and again right before the rename.  A symbolic link is refused
   (we write none), so are the working folder and a folder holding it.
2. An output never replaces one of its inputs: the same file (by device and inode, so through
   a symbolic or a hard link too) or a folder holding one.
3. A temporary is ``.NAME.tmp-<16 hex digits>`` beside the target, created exclusively
   (``O_EXCL``, ``mkdir``) under a new random name, where NAME is the target's name cut to
   the longest prefix of whole characters whose bytes (in the file system's encoding) leave
   the temporary's name within the folder's ``NAME_MAX`` (``os.pathconf``, else 255 bytes):
   the 22 bytes of ``.``, ``.tmp-`` and the digits fit.  Its writer holds an ``flock`` on
   it (file or folder) from its creation until the output is renamed into place (a folder
   is created and locked under an ``flock`` on its parent; a file is locked, then replaced by
   another if it was removed before the lock).  The next writer of the same target removes
   the temporaries a killed writer left (SIGKILL, a crash): those whose name matches that
   exact pattern for this target, whose lock is free (their writer is gone), and which are
   a regular file (for a file target) or a folder holding only regular files of our names
   (for a folder target; any folder, removed whole, for a tree of files not of our naming,
   an archive extracted into the cache).  A live writer's temporary, a look-alike name, a
   link, and another target's temporary are kept.
4. A replace is one rename of the complete new output: ``os.replace`` for a file; for a
   folder, an atomic exchange of the two names (Linux ``renameat2(RENAME_EXCHANGE)``), then
   the old folder is removed; where a file system cannot exchange, the old folder is renamed
   aside, the new one in, and the old one back if that fails.
5. Files and folders are created with modes 0666 / 0777 less the user's umask (a setgid
   folder's group passes on as the kernel decides); nothing is ``chmod``-ed.
6. A target's text that names a folder (ends in ``/``, or its last part is ``.`` or ``..``)
   is refused for a file (pathlib would drop the ``/`` or ``.`` and write a file there), and
   ``..`` for a folder too.
7. A write that fails for its disk (:data:`DISK_ERRNOS`: full, over quota, read-only,
   failing) is the disk's fault: :class:`DiskError`, one line naming the folder being
   written and the OS error (:func:`disk_error`), never blamed on a file.

What counts as "ours, of the same kind": :mod:`same.io.outputkinds`.

Snakemake removes a job's outputs before running it, so the workflow never meets a refusal;
the rules protect direct calls.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import re
import secrets
import shutil
from contextlib import contextmanager, suppress
from pathlib import Path

__all__ = ["OutputError", "DiskError", "DISK_ERRNOS", "Kind", "NEW_FILE", "NPZ_KINDS",
           "check_target", "check_option", "write_file", "write_text", "writing_folder",
           "npz_kind", "kind_of_arrays", "json_kind", "text_kind", "prefix_kind", "figure_kind",
           "is_temporary_of", "disk_error"]

from .outputkinds import (  # re-exported: every writer imports them from here
    NEW_FILE,
    NPZ_KINDS,
    Kind,
    OutputError,
    figure_kind,
    json_kind,
    kind_of_arrays,
    npz_kind,
    prefix_kind,
    text_kind,
)

#: errno values that are the disk's (or its file system's) fault, not a file's.
DISK_ERRNOS = frozenset(getattr(errno, n) for n in ("ENOSPC", "EDQUOT", "EROFS", "EIO",
                                                    "EFBIG") if hasattr(errno, n))


class DiskError(OSError):
    """A folder could not be written for its disk (:data:`DISK_ERRNOS`): one line naming the
    folder and the OS error (``str()`` is that line, without ``[Errno N]``)."""

    def __str__(self) -> str:
        return self.strerror


def disk_error(exc: BaseException, folder, remedy: str = "free space there or write elsewhere"
               ) -> DiskError | None:
    """``exc`` as the disk's fault while writing into ``folder`` (None: it is not a disk
    error): ``<folder>: cannot write there: <OS error> (<ERRNO>); <remedy>``."""
    if not isinstance(exc, OSError) or exc.errno not in DISK_ERRNOS:
        return None
    return DiskError(exc.errno, f"{folder}: cannot write there: {os.strerror(exc.errno)} "
                                f"({errno.errorcode[exc.errno]}); {remedy}")


def _folder_tail(text: str) -> str | None:
    """How the text of a path names a folder ("/", "/.", "/..", ".", ".."), if it does."""
    seps = os.sep + (os.altsep or "")
    if text.endswith(tuple(seps)):
        return os.sep
    last = text.rpartition(os.sep)[2]
    if last in (".", ".."):
        return (os.sep if text != last else "") + last
    return None


def _clash(path: Path, real: str, inp) -> str | None:
    """How ``path`` (real path ``real``) would replace the input ``inp``, if it would."""
    if os.path.lexists(path):
        try:
            if os.path.samefile(path, inp):
                return "is the input"
        except OSError:
            pass
    real_in = os.path.realpath(inp)
    if real_in != real and Path(real_in).is_relative_to(real):
        return "holds the input"
    if path.is_dir():
        try:
            st = os.stat(inp)
            for entry in os.scandir(path):
                est = entry.stat(follow_symlinks=False)
                if (est.st_dev, est.st_ino) == (st.st_dev, st.st_ino):
                    return "holds (a hard link to) the input"
        except OSError:
            pass
    return None


def check_target(path, kind: Kind = NEW_FILE, inputs=(), *, option: str | None = None) -> Path:
    """Refuse a target that :mod:`same.io.outputs`'s rules forbid writing; returns it as a Path.

    Parameters
    ----------
    inputs : iterable of paths (None ignored)
        What the writer reads: never replaced.
    option : str, optional
        The command-line option naming ``path`` ("--out"), to name it in messages.

    Raises
    ------
    OutputError (or ``kind.error``)
        ``"{option} {path}: <why>; <what to do>"`` on one line.
    """
    text, path = os.fspath(path), Path(path)
    name = f"{option} {text}" if option else text
    tail = _folder_tail(text)
    if tail is not None and not kind.folder:
        raise kind.error(f"{name}: ends in {tail}, which names a folder; give the path of a "
                         f"{kind.what} file")
    blocked = next((p for p in path.absolute().parents if os.path.lexists(p)
                    and not p.is_dir()), None)
    if blocked is not None:
        raise kind.error(f"{name}: {blocked} is a file, not a folder; {kind.fresh}")
    if path.is_symlink():
        raise kind.error(f"{name}: is a symbolic link; {kind.fresh}")
    real = os.path.realpath(path)
    cwd = os.path.realpath(os.getcwd())
    if real == cwd or Path(cwd).is_relative_to(real):
        raise kind.error(f"{name}: is the working folder or holds it; {kind.fresh}")
    if tail is not None and tail.endswith(".."):  # a folder named by the one above it
        raise kind.error(f"{name}: ends in {tail}, which names the folder above; give the "
                         "folder's own path")
    for inp in inputs:
        why = None if inp is None else _clash(path, real, inp)
        if why:
            raise kind.error(f"{name}: {why} {inp}; {kind.fresh}")
    if os.path.lexists(path):
        why = kind.why_not_ours(path)
        if why:
            raise kind.error(f"{name}: {why}")
    return path


def check_option(path, kind: Kind, prog: str, option: str = "--out") -> None:
    """:func:`check_target` for a script's option, before its work: a refusal ends the
    process with one line ``{prog}: error: ...`` on stderr and exit status 2."""
    import sys

    try:
        check_target(path, kind, option=option)
    except OutputError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


_TMP_BYTES = len(".") + len(".tmp-") + 16  # what a temporary's name adds to the cut NAME


def _name_max(folder) -> int:
    """The longest file name (bytes) ``folder``'s file system takes (255 if it cannot say)."""
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX")) if folder is not None else 255
    except (OSError, ValueError, TypeError):
        return 255


def _cut(name: str, folder) -> str:
    """The longest prefix of whole characters of ``name`` that, with :data:`_TMP_BYTES`, fits
    ``folder``'s NAME_MAX in the file system's encoding (a character is never split)."""
    budget, size = _name_max(folder) - _TMP_BYTES, 0
    for i, ch in enumerate(name):
        size += len(os.fsencode(ch))
        if size > budget:
            return name[:i]
    return name


def _temporary_name(name: str, folder) -> str:
    return f".{_cut(name, folder)}.tmp-{secrets.token_hex(8)}"


def is_temporary_of(entry: str, name: str, folder=None) -> bool:
    """Whether ``entry`` is a temporary name this module makes for target ``name`` in
    ``folder`` (its NAME_MAX decides the cut; 255 bytes when not given)."""
    return re.fullmatch(rf"\.{re.escape(_cut(name, folder))}\.tmp-[0-9a-f]{{16}}",
                        entry) is not None


def write_file(path, write, kind: Kind = NEW_FILE, *, inputs=(), option: str | None = None,
               mode: int = 0o666) -> Path:
    """Write a file by :mod:`same.io.outputs`'s rules: ``write(f)`` on a new temporary file
    beside ``path`` (opened ``w+b``, so a writer may read back what it wrote; created with
    ``mode`` less the umask), then one rename.  Nothing is left (no temporary) if ``write``
    raises; ``path`` is never truncated in place, so a reader's mapping of the old file
    stays valid.

    Raises
    ------
    OutputError
        ``path`` may not be written (:func:`check_target`), checked before and after ``write``.
    DiskError
        The folder's disk is full, over quota, read-only or failing (:func:`disk_error`).
    OSError
        The folder cannot be created or written otherwise.
    """
    path = check_target(path, kind, inputs, option=option)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        _remove_dead_temporaries(path, kind)
        while True:
            tmp = path.parent / _temporary_name(path.name, path.parent)
            try:
                fd = os.open(tmp, flags, mode)
            except FileExistsError:
                continue
            fcntl.flock(fd, fcntl.LOCK_EX)  # held until renamed into place, or dead
            if os.fstat(fd).st_nlink:
                break
            os.close(fd)  # a cleaner took it for dead before it was locked: another name
    except OSError as exc:
        raise disk_error(exc, path.parent) or exc from None
    try:
        with os.fdopen(fd, "w+b") as f:  # closing it (after the rename) releases the lock
            write(f)
            f.flush()
            os.fsync(f.fileno())
            check_target(path, kind, inputs, option=option)
            os.replace(tmp, path)
    except BaseException as exc:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        disk = disk_error(exc, path.parent)
        if disk is not None:
            raise disk from None
        raise
    return path


def write_text(path, text: str, kind: Kind, *, inputs=(), option: str | None = None) -> Path:
    """:func:`write_file` of UTF-8 ``text``."""
    data = text.encode()
    return write_file(path, lambda f: f.write(data), kind, inputs=inputs, option=option)


@contextmanager
def _flock(path: Path, blocking: bool = True):
    """An exclusive ``flock`` on a folder; yields False (and holds nothing) if ``blocking`` is
    False and another process holds it."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # releases the lock


def _discard(folder: Path, kind: Kind) -> None:
    """Remove a folder of ours: only when it holds nothing but regular files of our names,
    or whole for a tree kind (links inside are removed, never followed)."""
    if kind.tree:
        shutil.rmtree(folder, ignore_errors=True)
        return
    try:
        entries = list(os.scandir(folder))
        if all(kind.entry_ours(e.name) and e.is_file(follow_symlinks=False) for e in entries):
            for e in entries:
                os.unlink(e.path)
            os.rmdir(folder)
    except OSError:
        pass


def _remove_dead_temporaries(out: Path, kind: Kind) -> None:
    """Remove the temporaries of ``out`` (exact :func:`is_temporary_of` names) whose writer
    died (its lock free): a regular file for a file target; for a folder target, a folder
    holding only regular files of our names (under the parent's lock, as a folder's writer
    creates its temporary).  A file's writer locks its new temporary, then makes a new one if
    a cleaner removed it in between (:func:`write_file`)."""
    try:
        entries = list(os.scandir(out.parent))
    except OSError:  # a folder we may write but not list: nothing of ours is found there
        return
    for entry in entries:
        if not is_temporary_of(entry.name, out.name, out.parent):
            continue
        if kind.folder and entry.is_dir(follow_symlinks=False):
            with _flock(Path(entry.path), blocking=False) as free:
                if free:
                    _discard(Path(entry.path), kind)
        elif not kind.folder and entry.is_file(follow_symlinks=False):
            _unlink_if_dead(entry.path)


def _unlink_if_dead(path: str) -> None:
    """Remove a temporary file whose writer's ``flock`` is free (the writer is gone)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.unlink(path)
    except OSError:  # BlockingIOError: its writer is alive
        pass
    finally:
        os.close(fd)


_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def _exchange(a: Path, b: Path) -> None:
    """Swap two names atomically (Linux ``renameat2(RENAME_EXCHANGE)``); OSError ENOSYS
    without renameat2, EINVAL where the file system cannot exchange."""
    fn = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if fn is None:
        raise OSError(errno.ENOSYS, "renameat2 is not available")
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), str(b))


def _swap_in(tmp: Path, out: Path, kind: Kind) -> None:
    """Put the complete folder ``tmp`` at ``out`` by one rename; remove the old ``out``."""
    if not os.path.lexists(out):
        os.replace(tmp, out)
        return
    try:
        _exchange(tmp, out)
        old = tmp
    except OSError as exc:
        if exc.errno not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
        old = out.parent / _temporary_name(out.name, out.parent)
        os.rename(out, old)
        try:
            os.replace(tmp, out)
        except BaseException:
            os.rename(old, out)
            raise
    _discard(old, kind)


@contextmanager
def writing_folder(path, kind: Kind, inputs=(), *, option: str | None = None,
                   remedy: str | None = None):
    """Yield a new, locked temporary folder; on normal exit it replaces ``path`` by one rename.

    ``path`` is checked (:func:`check_target`) before, and again under a lock on its parent
    (which every writer of the folder takes) just before the rename, so two writers to one
    folder never interleave: the last to finish wins, each output complete.  Each writer holds
    an ``flock`` on its temporary folder for its whole life, so a later writer removes only
    temporaries whose writer died (:func:`_remove_dead_temporaries`).  On an exception
    (SIGTERM and Ctrl-C included) the temporary folder is removed and ``path`` is untouched.
    ``remedy`` ends a disk error's line (:func:`disk_error`'s default when None).

    Raises
    ------
    OutputError (or ``kind.error``)
        ``path`` may not be written.
    DiskError
        The disk is full, over quota, read-only or failing (:func:`disk_error`).
    OSError
        The parent cannot be created or written otherwise.
    """
    out = check_target(path, kind, inputs, option=option)
    fix = () if remedy is None else (remedy,)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with _flock(out.parent):
            _remove_dead_temporaries(out, kind)
            while True:
                tmp = out.parent / _temporary_name(out.name, out.parent)
                try:
                    os.mkdir(tmp, 0o777)
                    break
                except FileExistsError:
                    continue
            lock = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY)
            fcntl.flock(lock, fcntl.LOCK_EX)  # held until this writer is done or dead
    except OSError as exc:
        raise disk_error(exc, out.parent, *fix) or exc from None
    try:
        yield tmp
        with _flock(out.parent):
            check_target(out, kind, inputs, option=option)
            _swap_in(tmp, out, kind)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        disk = disk_error(exc, out.parent, *fix)
        if disk is not None:
            raise disk from None
        raise
    finally:
        os.close(lock)
