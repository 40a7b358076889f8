"""Corpora named by their files: raw text vectorized by scikit-learn, a user's UCI files, 20 Newsgroups.

A corpus is data, not a registry name.  The workflow's ``corpora:`` section (and
``same-lda split --corpus-spec``) describes each one by a *spec*, a mapping with a ``source``:

``uci``
    a UCI ``docword`` file (and optionally its ``vocab``) anywhere on disk
    (:func:`same.data.corpus.load`, its parsed cache included).
``folder``
    raw text in :func:`sklearn.datasets.load_files` layout: ``path/<category>/<document>``.
``csv`` / ``jsonl``
    one document per row, the text in ``column`` (read with pyarrow), each document's label
    in ``label`` (optional).  Read within limits checked before pyarrow sees a byte: no line
    longer than ``max_line_bytes`` (:data:`TABLE_DEFAULTS`: 16 MiB; pyarrow's block size is
    set from it), no JSON nested deeper than :data:`MAX_JSON_DEPTH` levels (deeper nesting
    crashed pyarrow's parser); each refused in one line naming the file, the line and the key.
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

The documents are stored in one seeded random order (``shuffle``, default true; ``shuffle_seed``,
default 0: the permutation of ``load_files(shuffle=True, random_state=shuffle_seed)``), since
SAME and online VB learn in the stored order and a folder's file order is grouped by category
(:mod:`same.data.order`); ``shuffle: false`` keeps file order.  A uci spec keeps file order
unless it says ``shuffle: true``.  The corpus records its labels (the category folder, the
``label`` column), each row's position in file order and ``meta["order"]``.

The vectorized corpus is cached in :func:`same.data.download.cache_dir` as a sealed ``.npz`` with its
vocabulary, labels and file positions, keyed by the SHA-256 of the text, the settings and the
order (and scikit-learn's version):
changing a setting or a byte of text builds a new one; changing nothing reads it back.

Every bad input ends in one :class:`TextCorpusError` line naming the file and the setting
(``corpora.<name>.<key>``): a file not in the encoding, an empty document (unless
``drop_empty``), a folder without documents, a vocabulary the settings reduce to nothing, a
missing column, a jsonl record without its text (no such key, null, a number, a list or an
object: never an empty document), a path that is not a regular file (a FIFO would block the
reader).  A table's row is named, in every message and as a document, by the path as the
spec gives it and the line it starts on, from 1 as an editor counts (a csv header is line 1):
``data/posts.csv: line 8`` (:func:`same.data.corpusspec.at_line`).  Nothing is written
before the corpus is complete.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from same.io.outputs import OutputError

from .artefact import (
    ArtefactError,
    check_array,
    csr_from_parts,
    open_npz,
    remedied,
    save_npz,
)
from .corpus import CacheWarning, Corpus
from .corpusspec import (
    SOURCES,
    TABLE_DEFAULTS,
    VECTORIZER_DEFAULTS,
    TextCorpusError,
    _vectorizer,
    check_corpus_paths,
    check_corpus_spec,
    check_outside_corpus,
    empty_word_message,
    folder_path,
    regular_file,
)
from .docword import CorpusFormatError, CorpusNotFoundError
from .download import cache_dir
from .newsgroups import NEWSGROUPS, newsgroups_folders
from .order import order_record, shuffled_indices, spec_order
from .textclean import MAX_JSON_DEPTH, strip_parts
from .texttable import decode_document, read_table

__all__ = ["SOURCES", "VECTORIZER_DEFAULTS", "TABLE_DEFAULTS", "MAX_JSON_DEPTH", "read_vectorized_cache",
           "TextCorpusError", "NEWSGROUPS",
           "check_corpus_spec", "check_corpus_paths", "load_corpus", "vectorize", "read_texts",
           "stored_texts", "newsgroups_folders"]

_CACHE_VERSION = 2  # bump when the cached arrays' meaning changes (2: order, labels, positions)
_CACHE_REMEDY = "delete it: the next load rebuilds it"


# --------------------------------------------------------------------------- reading text

def read_texts(name: str, spec: dict, data_dir=None, download: bool = True
               ) -> tuple[list[str], list[bytes], str]:
    """(document names, raw bytes of each document, their encoding) of a checked text corpus
    spec (:func:`check_corpus_spec`), in file order (load_files' sorted categories and
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
    return _read(name, spec, data_dir, download)[:3]


def stored_texts(name: str, spec: dict, data_dir=None, download: bool = True) -> dict:
    """The documents of a checked text corpus spec in the order the corpus stores them:
    ``names``, ``raw``, ``encoding`` as :func:`read_texts`, ``labels`` (list of str, or None),
    ``file_index`` (int64: row i is document ``file_index[i]`` in file order) and ``order``
    (``Corpus.meta["order"]``).  With the spec's ``shuffle`` (default true) the order is
    one seeded shuffle, exactly ``load_files(shuffle=True, random_state=shuffle_seed)``'s.

    Raises
    ------
    TextCorpusError, CorpusNotFoundError
        As :func:`read_texts`; a ``label`` column missing, not text, or with an empty cell.
    """
    names, raw, encoding, labels = _read(name, spec, data_dir, download)
    shuffle, seed, on_purpose = spec_order(spec)
    index = shuffled_indices(len(names), seed) if shuffle else np.arange(len(names))
    return {"names": [names[i] for i in index], "raw": [raw[i] for i in index],
            "encoding": encoding, "file_index": index.astype(np.int64),
            "labels": None if labels is None else [labels[i] for i in index],
            "order": order_record(shuffle, seed, on_purpose)}


def _read(name: str, spec: dict, data_dir, download: bool):
    """(names, raw bytes, encoding, labels or None) in file order: see :func:`read_texts`."""
    source, encoding = spec["source"], spec["vectorizer"]["encoding"]
    if source == "20newsgroups":
        folders = newsgroups_folders(data_dir, download=download)
        setting = f"corpora.{name}.source: the archive extracted into {folders[0].parent}"
    elif source == "folder":
        folders = [Path(spec["path"]).expanduser()]
        setting = f"corpora.{name}.path"
    else:
        names, texts, labels = read_table(name, spec, encoding)
        return names, texts, "utf-8", labels
    from sklearn.datasets import load_files

    names, texts, labels = [], [], []
    for folder in folders:
        folder_path(folder, setting)
        _refuse_special_files(folder, setting)
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
        labels += [bunch.target_names[t] for t in bunch.target]  # the category folder
    if not texts:
        raise TextCorpusError(f"{', '.join(map(str, folders))}: no documents ({setting}: a "
                              "folder of category folders, one file per document, as "
                              "sklearn.datasets.load_files reads)")
    return names, texts, encoding, labels


def _refuse_special_files(folder: Path, setting: str) -> None:
    """Refuse a FIFO, socket or device where load_files opens a document (every entry of
    every category folder): it would block the reader, or never end."""
    hint = f"{setting} holds one folder per category, one file per document"
    try:
        for category in sorted(os.scandir(folder), key=lambda e: e.name):
            if not category.is_dir():  # load_files reads folders only (links followed)
                continue
            for entry in sorted(os.scandir(category.path), key=lambda e: e.name):
                if not entry.is_dir():  # a folder: load_files' own error names it
                    try:
                        regular_file(entry.path, setting, hint)
                    except CorpusNotFoundError:  # a dangling link: load_files names it
                        pass
    except OSError as exc:
        raise TextCorpusError(f"{folder}: cannot read its documents ({exc.strerror}: "
                              f"{exc.filename}); {hint}") from None


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
    if vocab and vocab[0] == "":  # sorted first: a pattern the spec's sample did not catch
        row = int(X[:, 0].nonzero()[0][0])
        raise TextCorpusError(f"{doc_names[row]}: "
                              f"{empty_word_message(where, settings['token_pattern'])}")
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
    table, at, line = doc_names[0].rpartition(": line ")
    if at and line.isdigit():  # a table's row (at_line)
        return table
    return os.path.commonpath([str(Path(n).parent) for n in doc_names])


def _settings_text(settings: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in settings.items())


def _text_sha256(doc_names: list[str], raw: list[bytes], table: bool) -> str:
    h = hashlib.sha256()
    for n, b in zip(doc_names, raw):  # a document's name within its corpus: not where it lies
        name = Path(n).name if table else "/".join(Path(n).parts[-3:])  # a table's: file: line
        for part in (name.encode("utf-8"), b):
            h.update(len(part).to_bytes(8, "little"))
            h.update(part)
    return h.hexdigest()


def _cache_key(text_sha: str, settings: dict, order: dict | None = None,
               labels: list[str] | None = None) -> str:
    """The cache's key: the text, the settings, the stored order, the labels (a table's
    label column may change without its text), scikit-learn's version, the cache's."""
    import sklearn

    label_sha = None if labels is None else hashlib.sha256(
        json.dumps(labels).encode("utf-8")).hexdigest()
    blob = json.dumps({"text": text_sha, "settings": settings, "sklearn": sklearn.__version__,
                       "order": order, "labels": label_sha, "version": _CACHE_VERSION},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def _cache_file(name: str, key: str) -> Path:
    return cache_dir() / "text" / f"{name}-{key[:16]}.npz"


_CACHE_KEYS = ("key", "data", "indices", "indptr", "shape", "vocab", "doc_names", "labels",
               "file_positions")


def read_vectorized_cache(path: str | os.PathLike):
    """The vectorized-corpus cache at ``path``, checked whole (its seal, every array, their
    agreement): (key, counts, vocabulary, kept documents' names, labels or None, file
    positions).  The one reader of the cache (:func:`load_corpus` and ``same-lda check``).

    Raises
    ------
    ArtefactError
        Unsealed, damaged or inconsistent (one line naming the file).
    FileNotFoundError
        No such file.
    """
    path = Path(path)
    z = open_npz(path, "vectorized-corpus cache", _CACHE_REMEDY, _CACHE_KEYS)
    with remedied(_CACHE_REMEDY):
        X = csr_from_parts(z["data"], z["indices"], z["indptr"], z["shape"], str(path))
        labels = check_array(z["labels"], "labels", str(path), ndim=1, kind="U")
        positions = check_array(z["file_positions"], "file_positions", str(path), ndim=1,
                                kind="i")
        names = z["doc_names"].tolist()
        if (labels.size not in (0, X.shape[0]) or len(names) != X.shape[0]
                or not np.array_equal(np.sort(positions), np.arange(X.shape[0]))):
            raise ArtefactError(f"{path}: labels, names or file positions do not match "
                                f"its {X.shape[0]} documents")
        return (str(z["key"]), X, z["vocab"].tolist(), names,
                labels.tolist() if labels.size else None, positions.astype(np.int64))


def _read_cache(path: Path, key: str):
    """(counts, vocabulary, kept documents' names, labels or None, file positions) of the
    cache at ``path``, or None when absent, of another key, or damaged (then rebuilt over it
    by :func:`same.io.outputs.write_file`; a link or a folder there is kept)."""
    if not path.is_file():
        return None
    try:
        found = read_vectorized_cache(path)
    except (ArtefactError, OSError) as exc:  # rebuilt, not trusted: the write discipline
        # replaces it (an unreadable one too)
        warnings.warn(f"{path}: unreadable vectorized-corpus cache ({exc}); rebuilding it",
                      CacheWarning, stacklevel=3)
        return None
    return found[1:] if found[0] == key else None


def _kept_positions(stored: dict, kept: list[str]) -> tuple[np.ndarray, list[str] | None]:
    """(each kept document's position in file order among the kept ones, their labels)."""
    row = {n: i for i, n in enumerate(stored["names"])}  # a corpus's document names are unique
    rows = np.fromiter((row[n] for n in kept), np.int64, len(kept))
    in_file = stored["file_index"][rows]
    labels = stored["labels"]
    return (np.searchsorted(np.sort(in_file), in_file).astype(np.int64),
            None if labels is None else [labels[i] for i in rows])


def load_corpus(name: str, spec: dict, data_dir=None, *, download: bool = True,
                use_cache: bool = True) -> Corpus:
    """The :class:`same.data.corpus.Corpus` a corpus spec names (see the module docstring).

    Parameters
    ----------
    name : str
        The corpus's name (labels it; names the settings in messages: ``corpora.<name>``).
    spec : dict
        ``source`` and its keys, ``vectorizer`` settings (:data:`VECTORIZER_DEFAULTS`),
        ``shuffle`` and ``shuffle_seed`` (the stored order).
    data_dir : path, optional
        Extra directory searched for a registry archive before ``$SAME_DATA_DIR``.

    Returns
    -------
    Corpus
        counts (n_docs, n_words) int32 CSR in the stored order; ``vocab``; ``labels`` (the
        category folder or the ``label`` column; None without one); ``file_positions`` (each
        row's position in file order; None when the rows are in file order); ``meta`` with
        the settings, the text's SHA-256 (in file order), the cache file, the number of
        documents dropped as empty and the ``order`` (:func:`same.data.order.order_record`).

    Raises
    ------
    TextCorpusError, CorpusNotFoundError
    """
    spec = check_corpus_spec(name, spec)
    if spec["source"] == "uci":
        return _uci_corpus(name, spec)
    settings = spec["vectorizer"]
    if use_cache:  # the cache written inside the folder would be read as a document next
        check_outside_corpus(spec, cache_dir(), "SAME_CACHE_DIR", f"corpora.{name}")
    stored = stored_texts(name, spec, data_dir, download)
    doc_names, raw = stored["names"], stored["raw"]
    in_file = np.argsort(stored["file_index"])
    text_sha = _text_sha256([doc_names[i] for i in in_file], [raw[i] for i in in_file],
                            spec["source"] in ("csv", "jsonl"))
    key = _cache_key(text_sha, settings, stored["order"], stored["labels"])
    path = _cache_file(name, key)
    cached = _read_cache(path, key) if use_cache else None
    if cached is None:
        texts = [strip_parts(decode_document(name, d, b, stored["encoding"]), settings["strip"])
                 for d, b in zip(doc_names, raw)]
        X, vocab, kept = vectorize(name, doc_names, texts, settings)
        positions, labels = _kept_positions(stored, kept)
        if use_cache:
            try:
                save_npz(path, {"key": np.asarray(key), "data": X.data, "indices": X.indices,
                                "indptr": X.indptr, "shape": np.asarray(X.shape, np.int64),
                                "vocab": np.asarray(vocab), "doc_names": np.asarray(kept),
                                "labels": np.asarray(labels if labels is not None else [],
                                                     dtype=str),
                                "file_positions": positions})
            except (OSError, OutputError) as exc:
                warnings.warn(f"{path}: cannot write the vectorized-corpus cache ({exc})",
                              CacheWarning, stacklevel=2)
    else:
        X, vocab, kept, labels, positions = cached
    if np.array_equal(positions, np.arange(len(kept))):
        positions = None
    return Corpus(name=name, counts=X, vocab=vocab, source=spec.get("path") or spec["source"],
                  meta={"settings": settings, "text_sha256": text_sha, "cache": str(path),
                        "n_dropped_empty": len(doc_names) - len(kept),
                        "order": stored["order"]},
                  labels=None if labels is None else np.asarray(labels, dtype=str),
                  file_positions=positions)


def _uci_corpus(name: str, spec: dict) -> Corpus:
    """A uci spec's corpus (:func:`same.data.corpus.load`), its rows in one seeded shuffle
    when the spec says ``shuffle: true`` (file order by default)."""
    from .corpus import load

    for key in ("docword", "vocab"):  # a FIFO would block the reader
        if spec.get(key):
            regular_file(spec[key], f"corpora.{name}.{key}")
    try:
        corpus = load(name, docword=spec["docword"], vocab=spec.get("vocab"))
    except (CorpusFormatError, OSError) as exc:  # CorpusNotFoundError is an OSError
        key = "vocab" if spec.get("vocab") and spec["vocab"] in str(exc) else "docword"
        raise type(exc)(f"{str(exc).rstrip('.')} (corpora.{name}.{key})") from None
    shuffle, seed, on_purpose = spec_order(spec)
    if shuffle:
        index = shuffled_indices(corpus.n_docs, seed)
        corpus.counts = corpus.counts[index].tocsr()
        corpus.file_positions = index
    corpus.meta["order"] = order_record(shuffle, seed, on_purpose)
    return corpus
