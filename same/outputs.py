"""The one write discipline of every file and folder same-lda writes.

Used by every writer: a fit's output folder (:mod:`same.rundir`), ``split``, ``synthesize``,
model.npz and the parsed-corpus cache (:func:`same.artefact.save_npz`), tuning.{csv,md,json},
the report's tables, figures and claims.md, :func:`same.provenance.write_json` (scaling,
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

What counts as "ours, of the same kind" (no committed output under results/ needed changing):

- ``.npz``: a zip archive sealed as :mod:`same.artefact` seals (its comment is 64 hex digits)
  whose member names say the kind (:data:`NPZ_KINDS`: split ``train_indptr``, model
  ``split_sha256``, synthetic corpus ``topic_word``, parsed cache ``fingerprint``).  A
  parsed-corpus cache in same-lda's cache folder is replaced whatever it holds (the loader
  found it damaged or stale: derived data is rebuilt, never trusted).
- a fit's output folder: :func:`same.rundir.check_out_dir`.
- JSON: an object with the same value of the first of ``artefact``, ``benchmark``, ``model``
  that the new object has (tuning.json, meta.json, benchmark and scaling results).
- CSV and Markdown: a text file whose first line (the header row; the ``# title``) equals the
  first line about to be written.
- figures: a PNG, PDF or SVG file of the same format made by Matplotlib (its stamp).

Snakemake removes a job's outputs before running it, so the workflow never meets a refusal;
the rules protect direct calls.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import re
import secrets
import shutil
import zipfile
from collections.abc import Callable, Iterable
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

__all__ = ["OutputError", "Kind", "NEW_FILE", "NPZ_KINDS", "check_target", "check_option",
           "write_file", "write_text", "writing_folder", "npz_kind", "kind_of_arrays",
           "json_kind", "text_kind", "figure_kind", "is_temporary_of"]

_FRESH_PATH = "give a new path"
#: npz kind → the member that tells it (checked in this order: a model also holds topic_word).
NPZ_KINDS = {"split": "train_indptr", "model": "split_sha256",
             "synthetic corpus": "topic_word", "parsed-corpus cache": "fingerprint"}
_JSON_IDS = ("artefact", "benchmark", "model")
_SEAL = re.compile(rb"[0-9a-f]{64}")
_PEEK = 1 << 16  # bytes read from each end of a file to recognise it
_JSON_MAX = 1 << 26  # a larger JSON file is not one of ours


class OutputError(ValueError):
    """A target same-lda may not write (one line naming it, why, and what to do)."""


@dataclass(frozen=True)
class Kind:
    """A kind of output (``what``, for messages) and how an existing one of ours is told:
    ``ours(path)`` for a regular file; for a folder, ``refusal(path)`` says why it may not be
    replaced (None: it may) and ``entry_ours(name)`` which entries its writer leaves.
    ``fresh`` is the remedy ending a refusal, ``error`` the ValueError subclass raised."""

    what: str
    ours: Callable[[Path], bool] = lambda path: False
    refusal: Callable[[Path], str | None] | None = None
    entry_ours: Callable[[str], bool] = lambda name: False
    fresh: str = _FRESH_PATH
    error: type = OutputError

    @property
    def folder(self) -> bool:
        return self.refusal is not None

    def why_not_ours(self, path: Path) -> str | None:
        """Why the existing ``path`` (not a link) may not be replaced; None if it may."""
        if self.folder:
            return "is a file, not a folder" if not path.is_dir() else self.refusal(path)
        if path.is_file() and self.ours(path):
            return None
        return f"exists and is not a {self.what} written by same-lda; {self.fresh} or remove it"


#: A file that may only be created (any existing target is refused).
NEW_FILE = Kind("file")


def _ends(path: Path) -> tuple[bytes, bytes]:
    """The first and last :data:`_PEEK` bytes of a file (b"" when unreadable)."""
    try:
        with open(path, "rb") as f:
            head = f.read(_PEEK)
            f.seek(max(0, os.fstat(f.fileno()).st_size - _PEEK))
            return head, f.read(_PEEK)
    except OSError:
        return b"", b""


def _npz_members(path: Path) -> set[str] | None:
    """Member names of a zip archive sealed as we seal (None: not one)."""
    try:
        with zipfile.ZipFile(path) as zf:
            sealed = _SEAL.fullmatch(zf.comment)
            return {n.removesuffix(".npy") for n in zf.namelist()} if sealed else None
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return None


def _npz_kind_name(members: Iterable[str]) -> str | None:
    return next((k for k, m in NPZ_KINDS.items() if m in set(members)), None)


def npz_kind(what: str, members: Iterable[str] = ()) -> Kind:
    """The kind of a sealed ``.npz``: one of :data:`NPZ_KINDS`, or for any other ``what``
    an archive holding exactly ``members``."""
    exact = frozenset(members)

    def ours(path: Path) -> bool:
        names = _npz_members(path)
        if names is not None and (_npz_kind_name(names) == what if what in NPZ_KINDS
                                  else names == exact):
            return True
        if what != "parsed-corpus cache":
            return False
        from .download import cache_dir  # a damaged cache in our cache folder is rebuilt

        return os.path.realpath(path.parent) == os.path.realpath(cache_dir())

    return Kind(what, ours)


def kind_of_arrays(names: Iterable[str]) -> Kind:
    """The kind of an ``.npz`` about to be written, from its member names."""
    names = list(names)
    return npz_kind(_npz_kind_name(names) or "same-lda .npz", names)


def json_kind(obj: dict) -> Kind:
    """The kind of a JSON object about to be written: its first of ``artefact``,
    ``benchmark``, ``model`` (an existing file is ours when it holds the same value)."""
    key = next((k for k in _JSON_IDS if k in obj), None)
    if key is None:
        return Kind("JSON file")
    value = obj[key]

    def ours(path: Path) -> bool:
        try:
            old = json.loads(path.read_bytes()) if path.stat().st_size < _JSON_MAX else None
        except (OSError, ValueError):  # UnicodeDecodeError and JSONDecodeError included
            return False
        return isinstance(old, dict) and old.get(key) == value

    what = str(value).removeprefix("same-lda ") if key == "artefact" else f"result of this {key}"
    return Kind(what, ours)


def text_kind(what: str, text: str) -> Kind:
    """A text file recognised by its first line (a CSV's header row, a Markdown title)."""
    first = text.split("\n", 1)[0].encode()

    def ours(path: Path) -> bool:
        head, _ = _ends(path)
        return head.split(b"\n", 1)[0] == first

    return Kind(what, ours)


_MATPLOTLIB = {"png": (b"\x89PNG\r\n\x1a\n", b"Software\x00Matplotlib"),
               "pdf": (b"%PDF-", b"/Producer (Matplotlib"),
               "svg": (b"<?xml", b"Created with matplotlib")}


def figure_kind(fmt: str) -> Kind:
    """A figure of format ``fmt`` (png, pdf, svg) recognised by Matplotlib's stamp."""
    magic, stamp = _MATPLOTLIB.get(fmt, (None, None))

    def ours(path: Path) -> bool:
        head, tail = _ends(path)
        return magic is not None and head.startswith(magic) and (stamp in head or stamp in tail)

    return Kind(f"{fmt.upper()} figure", ours)


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
    """Refuse a target that :mod:`same.outputs`'s rules forbid writing; returns it as a Path.

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
    """Write a file by :mod:`same.outputs`'s rules: ``write(f)`` on a new temporary file
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
