"""20 Newsgroups, "bydate" (Lang 1995; Rennie's split): the archive found in ``$SAME_DATA_DIR``
(members checked against its manifest) or downloaded (pooch, SHA-256), extracted into the cache
once per archive (:func:`newsgroups_folders`; :mod:`same.data.textcorpus` reads the posts).
"""

from __future__ import annotations

import os
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from same.io.outputs import Kind

from .docword import CorpusFormatError, CorpusNotFoundError
from .download import CACHE_DISK_REMEDY, _search_dirs, _sha256, cache_dir

__all__ = ["Archive", "NEWSGROUPS", "EXTRACTION", "newsgroups_folders"]


@dataclass(frozen=True)
class Archive:
    """A public archive: its URL (``$SAME_20NEWS_URL`` overrides it), SHA-256 and file name."""

    filename: str
    url: str
    sha256: str
    manifest: str
    members: tuple[str, ...]
    env: str

    def source(self) -> str:
        return os.environ.get(self.env) or self.url


#: 20 Newsgroups "bydate" (Lang 1995; Rennie's split): the copy scikit-learn downloads.
NEWSGROUPS = Archive(
    "20news-bydate.tar.gz", "https://ndownloader.figshare.com/files/5975967",
    "8f1b2514ca22a5ade8fbb9cfa5727df95fa587f4c87b786e15c759fa66d95610",
    "20news-bydate.SHA256SUMS", ("20news-bydate-train", "20news-bydate-test"),
    "SAME_20NEWS_URL")
#: An archive's extraction in the cache, ``20news-bydate-<SHA-256>/``: a folder there is our
#: own (complete, or an earlier extraction cut short) and is replaced whole.
EXTRACTION = Kind("20 Newsgroups extraction", refusal=lambda path: None, tree=True)


def newsgroups_folders(data_dir=None, *, download: bool = True, archive: Archive = NEWSGROUPS
                       ) -> list[Path]:
    """The train and test folders of 20 Newsgroups, extracted into the cache once per archive.

    The archive is looked for in ``data_dir``, ``$SAME_DATA_DIR`` and the cache, else
    downloaded into the cache with pooch (SHA-256 checked: a wrong hash leaves nothing).  A
    copy whose SHA-256 is the public archive's is used as it is, any other only with the
    ``20news-bydate.SHA256SUMS`` manifest beside it (every member checked, none missing or
    extra).  Its members are extracted into a temporary folder of the cache and renamed into
    place, ``20news-bydate-<its SHA-256>/``, only once checked and complete (both folders
    there): another archive never reads an earlier one's text.

    Raises
    ------
    CorpusFormatError
        A local copy that is neither the public archive nor matches its manifest; an archive
        that is not a readable tar.gz or lacks a folder (one line naming it).
    CorpusNotFoundError
        No local copy and the download failed (or ``download=False``).
    same.io.outputs.DiskError
        The cache folder's disk is full, over quota, read-only or failing while the archive
        is downloaded or extracted there (one line naming the folder and the OS error).
    """
    local = next((d / archive.filename for d in _search_dirs(data_dir)
                  if (d / archive.filename).is_file()), None)
    if local is None:
        local = _download(archive, download, data_dir)
    sha = _sha256(local)
    target = cache_dir() / f"{archive.filename.removesuffix('.tar.gz')}-{sha[:16]}"
    if not (target / ".complete").is_file():
        manifest = None
        if sha != archive.sha256:
            manifest = local.parent / archive.manifest
            if not manifest.is_file():
                raise CorpusFormatError(
                    f"{local}: not the public archive (SHA-256 {archive.sha256}) and no "
                    f"{archive.manifest} beside it to check its members; delete or replace it")
        _extract(local, target, archive, manifest)
    return [target / m for m in archive.members]


def _download(archive: Archive, download: bool, data_dir) -> Path:
    import pooch

    url, target = archive.source(), cache_dir()
    if download:
        from same.io.cache import usable_cache_dir

        target = usable_cache_dir()  # a file there: one line naming it
        target.mkdir(parents=True, exist_ok=True)
        try:
            return Path(pooch.retrieve(url, known_hash=f"sha256:{archive.sha256}",
                                       fname=archive.filename, path=target, progressbar=True))
        except Exception as exc:  # network errors come in many types; a hash mismatch too
            from same.io.outputs import disk_error

            disk = disk_error(exc, target, CACHE_DISK_REMEDY)
            if disk is not None:  # the cache's disk, not the download
                raise disk from None
            reason = f"download failed ({url}: {type(exc).__name__}: {str(exc).splitlines()[0]})"
    else:
        reason = "downloading disabled"
    raise CorpusNotFoundError(
        f"{archive.filename} not found locally and {reason}; download {archive.url} "
        f"(SHA-256 {archive.sha256}) into {target} or a directory named by $SAME_DATA_DIR "
        f"(searched: {', '.join(str(d) for d in _search_dirs(data_dir))})")


class _ReadFailed(Exception):
    """An OSError reading the archive (its own disk's, so the archive's fault), told apart
    from one writing the extraction (:func:`same.io.outputs.disk_error`)."""


class _Reading:
    """The archive's file, its read errors raised as :class:`_ReadFailed`."""

    def __init__(self, f):
        self._f = f

    def read(self, *args):
        try:
            return self._f.read(*args)
        except OSError as exc:
            raise _ReadFailed(exc) from exc

    def __getattr__(self, name):
        return getattr(self._f, name)


def _extract(local: Path, target: Path, archive: Archive, manifest: Path | None) -> None:
    """Extract ``archive``'s folders of ``local`` into ``target`` by one rename, checked
    against ``manifest`` when given; nothing is left behind on any failure.  The temporary
    folder is :func:`same.io.outputs.writing_folder`'s: locked by its writer, so the next
    extraction removes what a killed one left (whole: :data:`EXTRACTION` is a tree), and a
    concurrent one of the same archive swaps in its own identical copy atomically.  A disk
    error writing the extraction (full, over quota, read-only, failing) is the cache folder's
    (:class:`same.io.outputs.DiskError`), not the archive's."""
    from same.io.outputs import disk_error, writing_folder

    remedy = CACHE_DISK_REMEDY
    with writing_folder(target, EXTRACTION, remedy=remedy) as tmp:
        try:
            with open(local, "rb") as raw, tarfile.open(fileobj=_Reading(raw)) as tf:
                members = [m for m in tf.getmembers()
                           if m.name.split("/", 1)[0] in archive.members]
                tf.extractall(tmp, members=members, filter="data")
        except _ReadFailed as exc:
            cause = exc.args[0]
            raise CorpusFormatError(f"{local}: not a readable tar.gz archive "
                                    f"({type(cause).__name__}: {cause})") from None
        except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
            disk = disk_error(exc, target.parent, remedy)
            if disk is not None:
                raise disk from None
            raise CorpusFormatError(f"{local}: not a readable tar.gz archive "
                                    f"({type(exc).__name__}: {exc})") from None
        if manifest is not None:
            _check_members(tmp, local, manifest)
        absent = [m for m in archive.members if not (tmp / m).is_dir()]
        if absent:
            raise CorpusFormatError(f"{local}: holds no folder {absent[0]}/ (an archive of "
                                    f"{archive.filename} holds {', '.join(archive.members)})")
        try:
            (tmp / ".complete").write_text(f"{local}\n")
        except OSError as exc:
            raise disk_error(exc, target.parent, remedy) or exc from None


def _check_members(folder: Path, local: Path, manifest: Path) -> None:
    expected = {}
    try:
        lines = manifest.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeError) as exc:
        raise CorpusFormatError(f"{manifest}: unreadable manifest ({exc})") from None
    for line in lines:
        sha, _, member = line.partition("  ")
        if line.strip():
            expected[member] = sha
    if not expected:
        raise CorpusFormatError(f"{manifest}: lists no member; it cannot vouch for {local}")
    found = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    missing, extra = sorted(set(expected) - found), sorted(found - set(expected))
    if missing or extra:
        which = f"lacks {missing[0]}" if missing else f"holds {extra[0]}, not in it"
        raise CorpusFormatError(f"{local}: does not match {manifest} ({which}; "
                                f"{len(missing)} missing, {len(extra)} extra)")
    for member, sha in expected.items():
        if _sha256(folder / member) != sha:
            raise CorpusFormatError(f"{local}: member {member} differs from {manifest}")
