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
   (``O_EXCL``, ``mkdir``) under a new random name.  Only a fit's temporary folders are ever
   cleaned by another process: those whose name matches that exact pattern, whose writer died
   (its ``flock`` is free) and which hold only regular files of our names.  A killed writer's
   temporary *file* is left for the user to remove.
4. A replace is one rename of the complete new output: ``os.replace`` for a file; for a
   folder, an atomic exchange of the two names (Linux ``renameat2(RENAME_EXCHANGE)``), then
   the old folder is removed; where a file system cannot exchange, the old folder is renamed
   aside, the new one in, and the old one back if that fails.
5. Files and folders are created with modes 0666 / 0777 less the user's umask (a setgid
   folder's group passes on as the kernel decides); nothing is ``chmod``-ed.

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

__all__ = ["OutputError", "Kind", "NEW_FILE", "NPZ_KINDS", "check_target", "check_option",
           "write_file", "write_text", "writing_folder", "npz_kind", "kind_of_arrays",
           "json_kind", "text_kind", "figure_kind", "is_temporary_of"]

from .outputkinds import (  # re-exported: every writer imports them from here
    NEW_FILE,
    NPZ_KINDS,
    Kind,
    OutputError,
    figure_kind,
    json_kind,
    kind_of_arrays,
    npz_kind,
    text_kind,
)


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
    if not kind.folder and text.endswith(os.sep):
        raise kind.error(f"{name}: ends in {os.sep}, which names a folder; give the path of a "
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


def _temporary_name(name: str) -> str:
    return f".{name[:200]}.tmp-{secrets.token_hex(8)}"


def is_temporary_of(entry: str, name: str) -> bool:
    """Whether ``entry`` is a temporary name this module makes for target ``name``."""
    return re.fullmatch(rf"\.{re.escape(name[:200])}\.tmp-[0-9a-f]{{16}}", entry) is not None


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
    OSError
        The folder cannot be created or written.
    """
    path = check_target(path, kind, inputs, option=option)
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = path.parent / _temporary_name(path.name)
        try:
            fd = os.open(tmp, flags, mode)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "w+b") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        check_target(path, kind, inputs, option=option)
        os.replace(tmp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
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
    """Remove a folder of ours: only when it holds nothing but regular files of our names."""
    try:
        entries = list(os.scandir(folder))
        if all(kind.entry_ours(e.name) and e.is_file(follow_symlinks=False) for e in entries):
            for e in entries:
                os.unlink(e.path)
            os.rmdir(folder)
    except OSError:
        pass


def _remove_dead_temporaries(out: Path, kind: Kind) -> None:
    """Remove temporary folders of ``out`` (exact :func:`is_temporary_of` names) whose writer
    died (lock free) and which hold only regular files of our names."""
    for entry in os.scandir(out.parent):
        if is_temporary_of(entry.name, out.name) and entry.is_dir(follow_symlinks=False):
            with _flock(Path(entry.path), blocking=False) as free:
                if free:
                    _discard(Path(entry.path), kind)


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
        old = out.parent / _temporary_name(out.name)
        os.rename(out, old)
        try:
            os.replace(tmp, out)
        except BaseException:
            os.rename(old, out)
            raise
    _discard(old, kind)


@contextmanager
def writing_folder(path, kind: Kind, inputs=(), *, option: str | None = None):
    """Yield a new, locked temporary folder; on normal exit it replaces ``path`` by one rename.

    ``path`` is checked (:func:`check_target`) before, and again under a lock on its parent
    (which every writer of the folder takes) just before the rename, so two writers to one
    folder never interleave: the last to finish wins, each output complete.  Each writer holds
    an ``flock`` on its temporary folder for its whole life, so a later writer removes only
    temporaries whose writer died (:func:`_remove_dead_temporaries`).  On an exception
    (SIGTERM and Ctrl-C included) the temporary folder is removed and ``path`` is untouched.

    Raises
    ------
    OutputError (or ``kind.error``)
        ``path`` may not be written.
    OSError
        The parent cannot be created or written.
    """
    out = check_target(path, kind, inputs, option=option)
    out.parent.mkdir(parents=True, exist_ok=True)
    with _flock(out.parent):
        _remove_dead_temporaries(out, kind)
        while True:
            tmp = out.parent / _temporary_name(out.name)
            try:
                os.mkdir(tmp, 0o777)
                break
            except FileExistsError:
                continue
        lock = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(lock, fcntl.LOCK_EX)  # held until this writer is done or dead
    try:
        yield tmp
        with _flock(out.parent):
            check_target(out, kind, inputs, option=option)
            _swap_in(tmp, out, kind)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        os.close(lock)
