"""Kinds of output and how an existing one of ours is told: the half of :mod:`same.io.outputs`'s
write discipline that recognises a target before it is replaced.

What counts as "ours, of the same kind" (no committed output under results/ needed changing):

- ``.npz``: a zip archive sealed as :mod:`same.data.artefact` seals (its comment is 64 hex digits)
  whose member names say the kind (:data:`NPZ_KINDS`: split ``train_indptr``, model
  ``split_sha256``, synthetic corpus ``topic_word``, parsed cache ``fingerprint``,
  vectorized-text cache ``doc_names``).  A cache (:data:`CACHE_KINDS`) in same-lda's cache
  folder is replaced whatever regular file it is (its loader found it damaged or stale:
  derived data is rebuilt, never trusted); a link or a folder there is kept (refused) as
  anywhere else, and the loader carries on without writing its cache.
- Asking "is it ours?" never fails: whatever a damaged file makes zipfile or json raise
  (NotImplementedError for a zip version 6.7, RecursionError for deep nesting, ...) means
  "not ours".
- a fit's output folder: :func:`same.experiments.rundir.check_out_dir`.
- JSON: an object with the same value of the first of ``artefact``, ``benchmark``, ``model``
  that the new object has (tuning.json, meta.json, benchmark and scaling results).
- CSV and Markdown: a text file whose first line (the header row; the ``# title``) equals the
  first line about to be written.
- figures: a PNG, PDF or SVG file of the same format made by Matplotlib (its stamp).
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["OutputError", "Kind", "NEW_FILE", "NPZ_KINDS", "CACHE_KINDS", "npz_kind",
           "kind_of_arrays", "json_kind", "text_kind", "prefix_kind", "figure_kind"]

_FRESH_PATH = "give a new path"
#: npz kind → the member that tells it (checked in this order: a model also holds topic_word).
NPZ_KINDS = {"split": "train_indptr", "model": "split_sha256",
             "synthetic corpus": "topic_word", "parsed-corpus cache": "fingerprint",
             "vectorized-corpus cache": "doc_names"}
#: Kinds of derived data → their folder in same-lda's cache folder (rebuilt there whatever
#: regular file they find).
CACHE_KINDS = {"parsed-corpus cache": ".", "vectorized-corpus cache": "text"}
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
    ``fresh`` is the remedy ending a refusal, ``error`` the ValueError subclass raised.
    ``tree``: a folder whose entries are not of our naming (an archive extracted into the
    cache): a dead writer's temporary of it, and the folder it replaces, are removed whole."""

    what: str
    ours: Callable[[Path], bool] = lambda path: False
    refusal: Callable[[Path], str | None] | None = None
    entry_ours: Callable[[str], bool] = lambda name: False
    fresh: str = _FRESH_PATH
    error: type = OutputError
    tree: bool = False

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
    except Exception:  # BadZipFile, NotImplementedError (zip version 6.7), OSError, ...: damaged
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
        if what not in CACHE_KINDS:
            return False
        from .cache import cache_dir  # a damaged cache in our cache folder is rebuilt

        return os.path.realpath(path.parent) == os.path.realpath(cache_dir() / CACHE_KINDS[what])

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
        except Exception:  # OSError, ValueError, RecursionError (deep nesting): not ours
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


def prefix_kind(what: str, prefix: bytes) -> Kind:
    """A file recognised by the bytes it begins with (a compiler's banner, a log's header
    line; at most :data:`_PEEK` of them)."""

    def ours(path: Path) -> bool:
        return _ends(path)[0].startswith(prefix)

    return Kind(what, ours)


def figure_kind(fmt: str) -> Kind:
    """A figure of format ``fmt`` (png, pdf, svg) recognised by Matplotlib's stamp."""
    magic, stamp = _MATPLOTLIB.get(fmt, (None, None))

    def ours(path: Path) -> bool:
        head, tail = _ends(path)
        return magic is not None and head.startswith(magic) and (stamp in head or stamp in tail)

    return Kind(f"{fmt.upper()} figure", ours)
