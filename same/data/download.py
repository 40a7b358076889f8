"""Where corpus files are found, and their download from UCI (pooch), hash-checked.

A file is looked for, in order, in the ``data_dir`` argument, each directory of
``$SAME_DATA_DIR`` (read-only), and the cache directory (:func:`cache_dir`);
otherwise it is downloaded into the cache with pooch (progress bar, SHA-256
checked where known) from each source of :meth:`same.data.corpus.CorpusInfo.sources` in turn: the
file's own URL, then UCI's archive of the collection (the member extracted).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from same.io.cache import cache_dir, usable_cache_dir
from same.io.outputs import Kind, write_file

from .docword import CorpusFormatError, CorpusNotFoundError
from .registry import _registry_entry

__all__ = ["cache_dir", "find_local", "fetch"]

#: What to do when the cache folder's disk fails a write (:func:`same.io.outputs.disk_error`).
CACHE_DISK_REMEDY = "free space there or set $SAME_CACHE_DIR to another folder, then rerun"
#: A corpus file extracted from UCI's archive into the cache: a file already there is another
#: copy's of the same member, checked as this one is (fetch refuses a damaged one before).
UCI_FILE = Kind("UCI corpus file", ours=lambda path: True)


def _search_dirs(data_dir: str | os.PathLike | None) -> list[Path]:
    """Where a corpus file is looked for: ``data_dir`` (given, it must be a directory: a
    mistyped one is an error, not silently skipped), each directory of ``$SAME_DATA_DIR`` (a
    path list; those that do not exist are skipped), then the cache.

    Raises
    ------
    CorpusNotFoundError
        ``data_dir`` given and not a directory.
    """
    dirs: list[Path] = []
    if data_dir is not None:
        given = Path(data_dir).expanduser()
        if not given.is_dir():
            raise CorpusNotFoundError(f"{given}: the data directory (data_dir, --data-dir) "
                                      f"{'is not a directory' if given.exists() else 'does not exist'}")
        dirs.append(given)
    for part in os.environ.get("SAME_DATA_DIR", "").split(os.pathsep):
        if part:
            dirs.append(Path(part).expanduser())
    dirs.append(cache_dir())
    return dirs


def _sha256(path: Path, chunk: int = 1 << 22) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def find_local(filename: str, sha: str | None, data_dir=None) -> Path | None:
    """First copy of ``filename`` in the search directories, hash-checked; None if absent.

    Raises
    ------
    CorpusFormatError
        A copy whose SHA-256 differs from ``sha``.
    """
    for d in _search_dirs(data_dir):
        path = d / filename
        if path.is_file():
            if sha is not None and _sha256(path) != sha:
                raise CorpusFormatError(
                    f"{path}: SHA-256 does not match the UCI file (expected {sha}); "
                    "the copy is corrupted or not the original, delete or replace it")
            return path
    return None


def fetch(name: str, kind: str = "docword", data_dir: str | os.PathLike | None = None,
          download: bool = True) -> Path:
    """The local path (pathlib.Path) of one file of a UCI corpus, downloading it if needed.

    Parameters
    ----------
    name : str
        A key of :data:`REGISTRY` ("kos", "nips", "enron", "nytimes", "pubmed").
    kind : {"docword", "vocab"}
    data_dir : path, optional
        Extra directory searched first (read-only use).
    download : bool
        When False, never touch the network.  The base URL is UCI's, or ``$SAME_UCI_URL``.

    Raises
    ------
    ValueError
        Unknown corpus or kind.
    CorpusFormatError
        A local copy whose SHA-256 differs from the registry's.
    CorpusNotFoundError
        No local copy and the download failed (or ``download=False``); the message names
        the URL, the expected SHA-256 and the directory to put the file in.
    same.io.outputs.DiskError
        The cache folder's disk is full, over quota, read-only or failing while a download
        is written there (one line naming the folder and the OS error).
    """

    info = _registry_entry(name)
    if kind == "docword":
        filename, sha = info.docword_file, info.docword_sha256
    elif kind == "vocab":
        filename, sha = info.vocab_file, info.vocab_sha256
    else:
        raise ValueError(f"kind must be 'docword' or 'vocab', got {kind!r}")

    local = find_local(filename, sha, data_dir)
    if local is not None:
        return local

    target = cache_dir()
    failures = []
    if download:
        target = usable_cache_dir()  # a file there: one line naming it, not one per source
        for url, member in info.sources(filename):
            try:
                return _retrieve(url, member, filename, sha, target)
            except Exception as exc:  # network errors come in many types (requests, OSError, ...)
                from same.io.outputs import disk_error

                disk = disk_error(exc, target, CACHE_DISK_REMEDY)
                if disk is not None:  # the cache's disk, not this source
                    raise disk from None
                failures.append(f"{url}: {type(exc).__name__}: {exc}")
        reason = (f"download failed from every source ({'; '.join(failures)}; "
                  f"{f'expected SHA-256 {sha}' if sha else 'no SHA-256 known'})")
    else:
        reason = "downloading disabled"
    raise CorpusNotFoundError(
        f"{filename} for corpus {name!r} not found locally and {reason}. "
        f"Download {info.url(filename)} and put it in {target} or in a directory named by "
        f"$SAME_DATA_DIR (searched: {', '.join(str(d) for d in _search_dirs(data_dir))})")


def _retrieve(url: str, member: str | None, filename: str, sha: str | None,
              target: Path) -> Path:
    """Download ``url`` into ``target`` with pooch (progress bar); for an archive
    (``member`` given) then extract the member named ``filename`` (at any depth) next to it,
    SHA-256 checked and renamed into place only when it matches
    (:func:`same.io.outputs.write_file`).  The archive is kept in ``target`` (it holds the
    other corpora too).

    Raises
    ------
    Whatever pooch raises for the download (HTTP errors, a hash mismatch); zipfile.BadZipFile;
    FileNotFoundError when the archive lacks the member; CorpusFormatError on a hash mismatch.
    """
    import pooch

    target.mkdir(parents=True, exist_ok=True)
    if member is None:
        return Path(pooch.retrieve(url, known_hash=None if sha is None else f"sha256:{sha}",
                                   fname=filename, path=target, progressbar=True))
    import urllib.parse
    import zipfile

    archive = Path(pooch.retrieve(url, known_hash=None, path=target, progressbar=True,
                                  fname=urllib.parse.unquote(url.rsplit("/", 1)[-1])))
    with zipfile.ZipFile(archive) as zf:
        names = [n for n in zf.namelist() if n.rsplit("/", 1)[-1] == member]
        if not names:
            raise FileNotFoundError(f"{member} is not in the archive {archive.name}")
        def copy(f) -> None:  # the member, SHA-256 checked as it is copied
            digest = hashlib.sha256()
            with zf.open(names[0]) as src:
                while chunk := src.read(1 << 22):
                    digest.update(chunk)
                    f.write(chunk)
            if sha is not None and digest.hexdigest() != sha:
                raise CorpusFormatError(f"{member} of {archive.name}: SHA-256 does not match "
                                        f"the UCI file (expected {sha})")

        # through a locked temporary: a copy cut short by a kill is removed by the next one
        write_file(target / filename, copy, UCI_FILE)
    return target / filename
