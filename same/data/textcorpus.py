"""Corpora named by their files: raw text vectorized by scikit-learn, a user's UCI files, 20 Newsgroups.

A corpus is data, not a registry name.  The workflow's ``corpora:`` section (and
``same-lda split --corpus-spec``) describes each one by a *spec*, a mapping with a ``source``:

``uci``
    a UCI ``docword`` file (and optionally its ``vocab``) anywhere on disk
    (:func:`same.data.corpus.load`, its parsed cache included).
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

The vectorized corpus is cached in :func:`same.data.download.cache_dir` as a sealed ``.npz`` with its
vocabulary, keyed by the SHA-256 of the text and the settings (and scikit-learn's version):
changing a setting or a byte of text builds a new one; changing nothing reads it back.

Every bad input ends in one :class:`TextCorpusError` line naming the file and the setting
(``corpora.<name>.<key>``): a file not in the encoding, an empty document (unless
``drop_empty``), a folder without documents, a vocabulary the settings reduce to nothing, a
missing column.  Nothing is written before the corpus is complete.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from same.io.outputs import OutputError

from .artefact import ArtefactError, csr_from_parts, open_npz, remedied, save_npz
from .corpus import CacheWarning, Corpus
from .corpusspec import (
    SOURCES,
    VECTORIZER_DEFAULTS,
    TextCorpusError,
    _vectorizer,
    check_corpus_paths,
    check_corpus_spec,
)
from .docword import CorpusFormatError, CorpusNotFoundError
from .download import cache_dir
from .newsgroups import NEWSGROUPS, newsgroups_folders

__all__ = ["SOURCES", "VECTORIZER_DEFAULTS", "TextCorpusError", "NEWSGROUPS",
           "check_corpus_spec", "check_corpus_paths", "load_corpus", "vectorize", "read_texts",
           "newsgroups_folders"]

_CACHE_VERSION = 1  # bump when the cached arrays' meaning changes
_CACHE_REMEDY = "delete it: the next load rebuilds it"


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
    """The :class:`same.data.corpus.Corpus` a corpus spec names (see the module docstring).

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
