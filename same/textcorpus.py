"""Corpora named by their files: raw text vectorized by scikit-learn, a user's UCI files, 20 Newsgroups.

A corpus is data, not a registry name.  The workflow's ``corpora:`` section (and
``same-lda split --corpus-spec``) describes each one by a *spec*, a mapping with a ``source``:

``uci``
    a UCI ``docword`` file (and optionally its ``vocab``) anywhere on disk
    (:func:`same.corpus.load`, its parsed cache included).
``folder``
    raw text in :func:`sklearn.datasets.load_files` layout: ``path/<category>/<document>``.
``csv`` / ``jsonl``
    one document per row, the text in ``column`` (read with pyarrow).
``20newsgroups``
    Lang's 20 Newsgroups, "bydate" version (train and test folders together, 18,846 posts):
    the archive from ``$SAME_DATA_DIR`` (its members checked against the
    ``20news-bydate.SHA256SUMS`` manifest beside it) or downloaded from the public copy
    scikit-learn's ``fetch_20newsgroups`` uses (pooch, SHA-256 checked, progress bar), then
    extracted into the cache (:func:`newsgroups_folders`).

Raw text becomes counts by :class:`sklearn.feature_extraction.text.CountVectorizer` with the
spec's ``vectorizer`` settings (:data:`VECTORIZER_DEFAULTS`), then words occurring at most
``min_count - 1`` times in the whole corpus are dropped (the UCI collection's convention:
"words that occurred more than ten times" is ``min_count: 11``).  Newsgroup headers, signature
blocks and quoted replies are removed, when asked (``strip``), by the functions behind
scikit-learn's ``fetch_20newsgroups(remove=...)``: the standard this follows.

The vectorized corpus is cached in :func:`same.download.cache_dir` as a sealed ``.npz`` with its
vocabulary, keyed by the SHA-256 of the text and the settings (and scikit-learn's version):
changing a setting or a byte of text builds a new one; changing nothing reads it back.

Every bad input ends in one :class:`TextCorpusError` line naming the file and the setting
(``corpora.<name>.<key>``): a file not in the encoding, an empty document (unless
``drop_empty``), a folder without documents, a vocabulary the settings reduce to nothing, a
missing column.  Nothing is written before the corpus is complete.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import json
import os
import re
import secrets
import shutil
import tarfile
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .artefact import ArtefactError, csr_from_parts, open_npz, remedied, save_npz
from .corpus import CacheWarning, Corpus
from .docword import CorpusFormatError, CorpusNotFoundError
from .download import _search_dirs, _sha256, cache_dir
from .outputs import OutputError

__all__ = ["SOURCES", "VECTORIZER_DEFAULTS", "TextCorpusError", "NEWSGROUPS",
           "check_corpus_spec", "check_corpus_paths", "load_corpus", "vectorize", "read_texts",
           "newsgroups_folders"]

#: The kinds of ``source`` a corpus spec may name, and the keys each takes beside
#: ``source``, ``vectorizer`` and ``n_components``.
SOURCES = {"uci": {"docword", "vocab"}, "folder": {"path"}, "csv": {"path", "column"},
           "jsonl": {"path", "column"}, "20newsgroups": set()}

#: CountVectorizer settings (scikit-learn's names) and ours, with their defaults: lowercase
#: words of two or more letters (no digits), scikit-learn's English stop words, every word
#: kept; UTF-8 text, nothing stripped, an empty document refused.
VECTORIZER_DEFAULTS = {
    "lowercase": True,
    "token_pattern": r"(?u)\b[^\W\d_][^\W\d_]+\b",
    "stop_words": "english",
    "min_df": 1,          # CountVectorizer: documents (int) or fraction of them (float)
    "max_df": 1.0,        # CountVectorizer: documents (int) or fraction of them (float)
    "min_count": 1,       # ours: occurrences in the whole corpus (UCI: 11, "more than ten")
    "strip": [],          # any of headers, footers, quotes (fetch_20newsgroups' remove=)
    "encoding": "utf-8",  # of every file; a byte outside it is an error
    "drop_empty": False,  # drop documents left with no word (else: an error naming one)
}
_STRIP = ("headers", "footers", "quotes")
_CACHE_VERSION = 1  # bump when the cached arrays' meaning changes
_CACHE_REMEDY = "delete it: the next load rebuilds it"


class TextCorpusError(CorpusFormatError):
    """A corpus spec or its text cannot make a corpus (one line: the file and the setting)."""


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


# --------------------------------------------------------------------------- the spec

NAME_PATTERN = re.compile(r"[a-z0-9]+")


def check_corpus_spec(name: str, spec: dict, *, check_paths: bool = False) -> dict:
    """The spec with its vectorizer's defaults filled in.

    Every value is checked here, before any file is read: each key's type, CountVectorizer's
    own parameter checks, a token pattern that compiles, has at most one group and matches no
    empty word; with ``check_paths`` (the workflow's config check, before any job) also that
    the named files or folders exist.

    Raises
    ------
    TextCorpusError
        One line naming ``corpora.<name>.<key>`` and what is wrong.
    """
    where = f"corpora.{name}"
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise TextCorpusError(f"{where}: a corpus name is lowercase letters and digits only "
                              "(it names folders: results/<name>/, the cache)")
    if not isinstance(spec, dict):
        raise TextCorpusError(f"{where}: must be a mapping with a source")
    source = spec.get("source")
    if not isinstance(source, str) or source not in SOURCES:
        raise TextCorpusError(f"{where}.source: must be one of {', '.join(SOURCES)}")
    allowed = SOURCES[source] | {"source", "vectorizer", "n_components"}
    extra = sorted(map(str, set(spec) - allowed))
    if extra:
        raise TextCorpusError(f"{where}.{extra[0]}: not a key of a {source} corpus "
                              f"(keys: {', '.join(sorted(allowed))})")
    needed = {"uci": {"docword"}, "csv": {"path", "column"}, "jsonl": {"path", "column"},
              "folder": {"path"}}.get(source, set())
    missing = sorted(needed - set(spec))
    if missing:
        raise TextCorpusError(f"{where}.{missing[0]}: required for a {source} corpus")
    for key in ("path", "docword", "vocab", "column"):
        if key in spec and not (isinstance(spec[key], str) and spec[key].strip()):
            raise TextCorpusError(f"{where}.{key}: must be a non-empty string")
    if check_paths:
        for key, kind in (("path", "folder" if source == "folder" else "file"),
                          ("docword", "file"), ("vocab", "file")):
            if key in spec and not (Path(spec[key]).expanduser().is_dir() if kind == "folder"
                                    else Path(spec[key]).expanduser().is_file()):
                raise TextCorpusError(f"{where}.{key}: {spec[key]}: no such {kind}")
    vec = spec.get("vectorizer") or {}
    if not isinstance(vec, dict):
        raise TextCorpusError(f"{where}.vectorizer: must be a mapping of settings")
    if source == "uci":
        if vec:
            raise TextCorpusError(f"{where}.vectorizer: a uci corpus is counts already")
        return dict(spec)
    unknown = sorted(map(str, set(vec) - set(VECTORIZER_DEFAULTS)))
    if unknown:
        raise TextCorpusError(f"{where}.vectorizer.{unknown[0]}: unknown setting (settings: "
                              f"{', '.join(VECTORIZER_DEFAULTS)})")
    settings = VECTORIZER_DEFAULTS | vec
    _check_settings(f"{where}.vectorizer", settings)
    return {**spec, "vectorizer": settings}


def check_corpus_paths(config: dict) -> None:
    """The workflow's check before any job that each ``corpora:`` entry's files exist (paths
    relative to the folder snakemake runs in); :func:`same.config.check_config` checks the
    rest of each entry.

    Raises
    ------
    ValueError
        ``config corpora.<name>.<key>: <path>: no such file`` (one line).
    """
    for name, spec in (config.get("corpora") or {}).items():
        try:
            check_corpus_spec(name, spec, check_paths=True)
        except ValueError as exc:
            raise ValueError(f"config {exc}") from None


def _check_settings(where: str, s: dict) -> None:
    """Each vectorizer setting's type and value (see :func:`check_corpus_spec`)."""
    for key in ("lowercase", "drop_empty"):
        if not isinstance(s[key], bool):
            raise TextCorpusError(f"{where}.{key}: must be true or false")
    if not isinstance(s["strip"], list) or not all(isinstance(p, str) for p in s["strip"]):
        raise TextCorpusError(f"{where}.strip: must be a list of {', '.join(_STRIP)}")
    bad = [p for p in s["strip"] if p not in _STRIP]
    if bad:
        raise TextCorpusError(f"{where}.strip: {bad[0]!r} is not one of {', '.join(_STRIP)}")
    if not isinstance(s["encoding"], str):
        raise TextCorpusError(f"{where}.encoding: must be the name of a text encoding")
    try:
        codecs.lookup(s["encoding"]).decode(b"")
        b"".decode(s["encoding"])
    except (LookupError, TypeError):
        raise TextCorpusError(f"{where}.encoding: unknown text encoding "
                              f"{s['encoding']!r}") from None
    if isinstance(s["min_count"], bool) or not isinstance(s["min_count"], int) \
            or s["min_count"] < 1:
        raise TextCorpusError(f"{where}.min_count: must be an integer >= 1")
    for key in ("min_df", "max_df"):
        if isinstance(s[key], bool):
            raise TextCorpusError(f"{where}.{key}: must be a number, not {s[key]}")
    pattern = s["token_pattern"]
    if not isinstance(pattern, str):
        raise TextCorpusError(f"{where}.token_pattern: must be a regular expression")
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise TextCorpusError(f"{where}.token_pattern: not a regular expression ({exc})") \
            from None
    if compiled.groups > 1:
        raise TextCorpusError(f"{where}.token_pattern: has {compiled.groups} groups; "
                              "CountVectorizer takes at most one (the word)")
    if compiled.fullmatch("") is not None:
        raise TextCorpusError(f"{where}.token_pattern: matches the empty string, so it would "
                              "count empty words")
    try:
        _vectorizer(s)._validate_params()
    except ValueError as exc:  # sklearn's InvalidParameterError: names the parameter
        raise TextCorpusError(f"{where}: {str(exc).splitlines()[0]}") from None
    low, high = s["min_df"], s["max_df"]
    if type(low) is type(high) and low > high:
        raise TextCorpusError(f"{where}.min_df: {low} is above max_df ({high}): no word "
                              "could be kept")


def _vectorizer(settings: dict):
    """scikit-learn's CountVectorizer with ``settings``' parameters (counts as int64)."""
    from sklearn.feature_extraction.text import CountVectorizer

    return CountVectorizer(lowercase=settings["lowercase"],
                           token_pattern=settings["token_pattern"],
                           stop_words=settings["stop_words"], min_df=settings["min_df"],
                           max_df=settings["max_df"], dtype=np.int64)


# --------------------------------------------------------------------------- reading text

def read_texts(name: str, spec: dict, data_dir=None, download: bool = True
               ) -> tuple[list[str], list[bytes], str]:
    """(document names, raw bytes of each document, their encoding) of a checked text corpus
    spec (:func:`check_corpus_spec`), in a fixed order (load_files' sorted categories and
    files; a table's row order).  A folder's files are returned as they are, in the spec's
    encoding; a table is decoded whole in that encoding and its cells returned as UTF-8.

    Raises
    ------
    TextCorpusError
        No documents, an unreadable file or table, a missing column or one not of text, a
        table not in the encoding.
    CorpusNotFoundError
        A path that does not exist; 20 Newsgroups neither found nor downloadable.
    """
    source, encoding = spec["source"], spec["vectorizer"]["encoding"]
    if source == "20newsgroups":
        folders = newsgroups_folders(data_dir, download=download)
        setting = f"corpora.{name}.source: the archive extracted into {folders[0].parent}"
    elif source == "folder":
        folders = [Path(spec["path"]).expanduser()]
        setting = f"corpora.{name}.path"
    else:
        return _read_table(name, spec, encoding) + ("utf-8",)
    from sklearn.datasets import load_files

    names, texts = [], []
    for folder in folders:
        if not folder.is_dir():
            raise CorpusNotFoundError(f"{folder}: no such folder ({setting})")
        try:
            bunch = load_files(folder, load_content=True, shuffle=False, encoding=None)
            names += [os.fsdecode(f) for f in bunch.filenames]
            "".join(names).encode("utf-8")  # a file name that is not text: named below
        except (OSError, UnicodeError) as exc:
            what = f"{exc.strerror}: {exc.filename}" if isinstance(exc, OSError) else \
                "a file name that is not UTF-8"
            raise TextCorpusError(f"{folder}: cannot read its documents ({what}); {setting} "
                                  "holds one folder per category, one file per document"
                                  ) from None
        texts += list(bunch.data)
    if not texts:
        raise TextCorpusError(f"{', '.join(map(str, folders))}: no documents ({setting}: a "
                              "folder of category folders, one file per document, as "
                              "sklearn.datasets.load_files reads)")
    return names, texts, encoding


def _read_table(name: str, spec: dict, encoding: str) -> tuple[list[str], list[bytes]]:
    import pyarrow as pa
    import pyarrow.csv
    import pyarrow.json

    path, column = Path(spec["path"]).expanduser(), spec["column"]
    if not path.is_file():
        raise CorpusNotFoundError(f"{path}: no such file (corpora.{name}.path)")
    text = _decode(name, str(path), path.read_bytes(), encoding)
    data = io.BytesIO(text.encode("utf-8"))  # pyarrow reads UTF-8 only
    try:
        if spec["source"] == "csv":
            table = pa.csv.read_csv(data, convert_options=pa.csv.ConvertOptions(
                column_types={column: pa.string()}))
        else:
            table = pa.json.read_json(data)
    except (pa.ArrowInvalid, pa.ArrowKeyError, KeyError, UnicodeError) as exc:
        why = str(exc).strip("'\"").splitlines()[0] if str(exc) else type(exc).__name__
        raise TextCorpusError(f"{path}: not a readable {spec['source']} table ({why}); "
                              f"see corpora.{name}.path") from None
    if table.column_names.count(column) > 1:
        raise TextCorpusError(f"{path}: {table.column_names.count(column)} columns are named "
                              f"{column!r}; see corpora.{name}.column")
    if column not in table.column_names:
        raise TextCorpusError(f"{path}: no column {column!r} (columns: "
                              f"{', '.join(table.column_names) or 'none'}); see "
                              f"corpora.{name}.column")
    kind = table.schema.field(column).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or
            pa.types.is_null(kind)):
        raise TextCorpusError(f"{path}: column {column!r} holds {kind}, not text; see "
                              f"corpora.{name}.column")
    values = table.column(column).to_pylist()
    if not values:
        raise TextCorpusError(f"{path}: no documents (no rows; corpora.{name}.path)")
    names = [f"{path.name}:row {i + 1}" for i in range(len(values))]
    return names, [("" if v is None else v).encode("utf-8") for v in values]


def _decode(name: str, doc: str, raw: bytes, encoding: str) -> str:
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise TextCorpusError(f"{doc}: not {encoding} text (byte {exc.start}: "
                              f"{raw[exc.start:exc.start + 1]!r}); see corpora.{name}."
                              "vectorizer.encoding") from None


def _strip(text: str, strip) -> str:
    from sklearn.datasets._twenty_newsgroups import (
        strip_newsgroup_footer,
        strip_newsgroup_header,
        strip_newsgroup_quoting,
    )

    for part, fn in (("headers", strip_newsgroup_header), ("footers", strip_newsgroup_footer),
                     ("quotes", strip_newsgroup_quoting)):
        if part in strip:
            text = fn(text)
    return text


# --------------------------------------------------------------------------- vectorizing

def vectorize(name: str, doc_names: list[str], texts: list[str], settings: dict
              ) -> tuple[sp.csr_matrix, list[str], list[str]]:
    """(counts, vocabulary, names of the documents kept) of ``texts`` under ``settings``.

    counts : csr_matrix (n_docs, n_words) int32, sorted indices; the vocabulary in
    CountVectorizer's order (sorted), less words under ``min_count`` occurrences.

    Raises
    ------
    TextCorpusError
        The settings leave no word, or a document with no word (without ``drop_empty``).
    """
    cv = _vectorizer(settings)
    where = f"corpora.{name}.vectorizer"
    try:
        X = cv.fit_transform(texts).tocsr()
    except ValueError as exc:  # "empty vocabulary", "max_df corresponds to < documents than min_df"
        raise TextCorpusError(f"{_origin(doc_names)}: {exc} (settings {where}: "
                              f"{_settings_text(settings)})") from None
    vocab = cv.get_feature_names_out().tolist()
    keep = np.flatnonzero(np.asarray(X.sum(axis=0)).ravel() >= settings["min_count"])
    if keep.size == 0:
        raise TextCorpusError(f"{_origin(doc_names)}: no word occurs "
                              f"{settings['min_count']} times ({where}.min_count)")
    X, vocab = X[:, keep].tocsr(), [vocab[i] for i in keep]
    lengths = np.diff(X.indptr)
    empty = np.flatnonzero(lengths == 0)
    if empty.size and not settings["drop_empty"]:
        raise TextCorpusError(f"{doc_names[empty[0]]}: no word left by the settings "
                              f"({empty.size} such documents); set {where}.drop_empty: true "
                              "to drop them")
    kept = np.flatnonzero(lengths > 0)
    if kept.size < 2:
        raise TextCorpusError(f"{_origin(doc_names)}: {kept.size} document(s) with a word "
                              f"left by the settings ({where}: {_settings_text(settings)}); a "
                              "split needs at least 2")
    X = X[kept]
    X.sort_indices()
    return X.astype(np.int32), vocab, [doc_names[i] for i in kept]


def _origin(doc_names: list[str]) -> str:
    """The folder or table the documents come from, for a message about all of them."""
    if ":row " in doc_names[0]:
        return doc_names[0].split(":row ")[0]
    return os.path.commonpath([str(Path(n).parent) for n in doc_names])


def _settings_text(settings: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in settings.items())


def _text_sha256(doc_names: list[str], raw: list[bytes]) -> str:
    h = hashlib.sha256()
    for n, b in zip(doc_names, raw):  # a document's name within its corpus: not where it lies
        for part in ("/".join(Path(n).parts[-3:]).encode("utf-8"), b):
            h.update(len(part).to_bytes(8, "little"))
            h.update(part)
    return h.hexdigest()


def _cache_key(text_sha: str, settings: dict) -> str:
    import sklearn

    blob = json.dumps({"text": text_sha, "settings": settings, "sklearn": sklearn.__version__,
                       "version": _CACHE_VERSION}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def _cache_file(name: str, key: str) -> Path:
    return cache_dir() / "text" / f"{name}-{key[:16]}.npz"


def _read_cache(path: Path, key: str) -> tuple[sp.csr_matrix, list[str], list[str]] | None:
    if not path.is_file():
        return None
    try:
        z = open_npz(path, "vectorized-corpus cache", _CACHE_REMEDY,
                     ("key", "data", "indices", "indptr", "shape", "vocab", "doc_names"))
        with remedied(_CACHE_REMEDY):
            if str(z["key"]) != key:
                return None
            X = csr_from_parts(z["data"], z["indices"], z["indptr"], z["shape"], str(path))
            return X, z["vocab"].tolist(), z["doc_names"].tolist()
    except ArtefactError as exc:  # ours (our cache folder, our name): rebuilt, not trusted
        warnings.warn(f"{path}: unreadable vectorized-corpus cache ({exc}); rebuilding it",
                      CacheWarning, stacklevel=3)
        path.unlink(missing_ok=True)
        return None


def load_corpus(name: str, spec: dict, data_dir=None, *, download: bool = True,
                use_cache: bool = True) -> Corpus:
    """The :class:`same.corpus.Corpus` a corpus spec names (see the module docstring).

    Parameters
    ----------
    name : str
        The corpus's name (labels it; names the settings in messages: ``corpora.<name>``).
    spec : dict
        ``source`` and its keys, ``vectorizer`` settings (:data:`VECTORIZER_DEFAULTS`).
    data_dir : path, optional
        Extra directory searched for a registry archive before ``$SAME_DATA_DIR``.

    Returns
    -------
    Corpus
        counts (n_docs, n_words) int32 CSR; ``vocab``; ``meta`` with the settings, the text's
        SHA-256, the cache file and the number of documents dropped as empty.

    Raises
    ------
    TextCorpusError, CorpusNotFoundError
    """
    spec = check_corpus_spec(name, spec)
    if spec["source"] == "uci":
        from .corpus import load

        try:
            return load(name, docword=spec["docword"], vocab=spec.get("vocab"))
        except (CorpusFormatError, OSError) as exc:  # CorpusNotFoundError is an OSError
            key = "vocab" if spec.get("vocab") and spec["vocab"] in str(exc) else "docword"
            raise type(exc)(f"{str(exc).rstrip('.')} (corpora.{name}.{key})") from None
    settings = spec["vectorizer"]
    doc_names, raw, encoding = read_texts(name, spec, data_dir, download)
    text_sha = _text_sha256(doc_names, raw)
    key = _cache_key(text_sha, settings)
    path = _cache_file(name, key)
    cached = _read_cache(path, key) if use_cache else None
    if cached is None:
        texts = [_strip(_decode(name, d, b, encoding), settings["strip"])
                 for d, b in zip(doc_names, raw)]
        X, vocab, kept = vectorize(name, doc_names, texts, settings)
        if use_cache:
            try:
                save_npz(path, {"key": np.asarray(key), "data": X.data, "indices": X.indices,
                                "indptr": X.indptr, "shape": np.asarray(X.shape, np.int64),
                                "vocab": np.asarray(vocab), "doc_names": np.asarray(kept)})
            except (OSError, OutputError) as exc:
                warnings.warn(f"{path}: cannot write the vectorized-corpus cache ({exc})",
                              CacheWarning, stacklevel=2)
    else:
        X, vocab, kept = cached
    return Corpus(name=name, counts=X, vocab=vocab, source=spec.get("path") or spec["source"],
                  meta={"settings": settings, "text_sha256": text_sha, "cache": str(path),
                        "n_dropped_empty": len(doc_names) - len(kept)})


# --------------------------------------------------------------------------- 20 Newsgroups

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
        target.mkdir(parents=True, exist_ok=True)
        try:
            return Path(pooch.retrieve(url, known_hash=f"sha256:{archive.sha256}",
                                       fname=archive.filename, path=target, progressbar=True))
        except Exception as exc:  # network errors come in many types; a hash mismatch too
            reason = f"download failed ({url}: {type(exc).__name__}: {str(exc).splitlines()[0]})"
    else:
        reason = "downloading disabled"
    raise CorpusNotFoundError(
        f"{archive.filename} not found locally and {reason}; download {archive.url} "
        f"(SHA-256 {archive.sha256}) into {target} or a directory named by $SAME_DATA_DIR "
        f"(searched: {', '.join(str(d) for d in _search_dirs(data_dir))})")


def _extract(local: Path, target: Path, archive: Archive, manifest: Path | None) -> None:
    """Extract ``archive``'s folders of ``local`` into ``target`` by one rename, checked
    against ``manifest`` when given; nothing is left behind on any failure."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.part-{os.getpid()}-{secrets.token_hex(4)}"
    os.mkdir(tmp, 0o777)  # under the user's umask (mkdtemp would make it 0700)
    try:
        try:
            with tarfile.open(local) as tf:
                members = [m for m in tf.getmembers()
                           if m.name.split("/", 1)[0] in archive.members]
                tf.extractall(tmp, members=members, filter="data")
        except (tarfile.TarError, EOFError, OSError, zlib.error) as exc:
            raise CorpusFormatError(f"{local}: not a readable tar.gz archive "
                                    f"({type(exc).__name__}: {exc})") from None
        if manifest is not None:
            _check_members(tmp, local, manifest)
        absent = [m for m in archive.members if not (tmp / m).is_dir()]
        if absent:
            raise CorpusFormatError(f"{local}: holds no folder {absent[0]}/ (an archive of "
                                    f"{archive.filename} holds {', '.join(archive.members)})")
        (tmp / ".complete").write_text(f"{local}\n")
        if target.exists():  # our own earlier, incomplete extraction (no .complete)
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


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
