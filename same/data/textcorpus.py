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

import csv
import hashlib
import io
import itertools
import json
import os
import re
import sys
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
    _is_unicode,
    _vectorizer,
    at_line,
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
from .textclean import MAX_JSON_DEPTH, check_lines, strip_parts

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
        names, texts, labels = _read_table(name, spec, encoding)
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


def _read_table(name: str, spec: dict, encoding: str
                ) -> tuple[list[str], list[bytes], list[str] | None]:
    """(names, UTF-8 text, labels or None) of a csv or jsonl corpus's rows, read by pyarrow;
    each row named ``<path>: line <n>`` (:func:`at_line`), as every message about it is."""
    import pyarrow as pa
    import pyarrow.csv
    import pyarrow.json

    column, label = spec["column"], spec.get("label")
    path = regular_file(spec["path"], f"corpora.{name}.path")
    if not _is_unicode(path.name):  # it names the documents (<path>: line n)
        raise TextCorpusError(f"{path}: a file name that is not UTF-8 (it names the documents); "
                              f"rename the file corpora.{name}.path names")
    text = _decode(name, str(path), path.read_bytes(), encoding)
    try:
        data = text.encode("utf-8")  # pyarrow reads UTF-8 only
    except UnicodeEncodeError as exc:  # a codec that makes lone surrogates (unicode_escape)
        raise TextCorpusError(f"{path}: decodes under {encoding} to a lone surrogate "
                              f"(character {exc.start}), not Unicode text; see corpora."
                              f"{name}.vectorizer.encoding") from None
    limit = spec.get("max_line_bytes", TABLE_DEFAULTS["max_line_bytes"])
    jsonl = spec["source"] == "jsonl"
    check_lines(name, path, data, limit, jsonl)
    block = max(limit + 1, 1 << 20)  # a line and its newline fit one block
    text_columns = {c: pa.string() for c in (column, label) if c}
    try:
        if not jsonl:
            table = pa.csv.read_csv(
                io.BytesIO(data),
                read_options=pa.csv.ReadOptions(block_size=block, use_threads=False),
                convert_options=pa.csv.ConvertOptions(column_types=text_columns))
        else:  # the text columns as text (a record lacking one: null); others not read
            table = pa.json.read_json(
                io.BytesIO(data),
                read_options=pa.json.ReadOptions(block_size=block, use_threads=False),
                parse_options=pa.json.ParseOptions(explicit_schema=pa.schema(
                    list(text_columns.items())), unexpected_field_behavior="ignore"))
    except (pa.ArrowInvalid, pa.ArrowKeyError, KeyError, UnicodeError) as exc:
        if "straddl" in str(exc):  # a row over several lines, longer than a block
            raise TextCorpusError(f"{path}: a row spanning lines is longer than corpora.{name}"
                                  f".max_line_bytes ({limit}); raise it to read this file"
                                  ) from None
        raise _unreadable(name, spec, path, text, exc) from None
    lines = _row_lines(text, jsonl, table.num_rows)
    values = _text_column(name, path, table, column, "column")
    if not values:
        raise TextCorpusError(f"{path}: no documents (no rows; corpora.{name}.path)")
    missing = next((i for i, v in enumerate(values) if v is None), None)
    if missing is not None:  # a jsonl record without the column or with null there
        wrong = _not_text(_json_record(text, missing), column) if jsonl else None
        raise TextCorpusError(f"{at_line(path, lines[missing])}: "
                              f"{wrong or 'a null cell, not text'}; see corpora.{name}.column")
    labels = None
    if label:
        labels = _text_column(name, path, table, label, "label")
        missing = next((i for i, v in enumerate(labels) if v is None or not v.strip()), None)
        if missing is not None:
            raise TextCorpusError(f"{at_line(path, lines[missing])}: no label (column "
                                  f"{label!r}); see corpora.{name}.label")
    return [at_line(path, n) for n in lines], [v.encode("utf-8") for v in values], labels


def _row_lines(text: str, jsonl: bool, n_rows: int) -> list[int]:
    """The line (from 1, as an editor counts) where each of a table's ``n_rows`` rows starts:
    located by the standard library's readers (:func:`_json_records`, :func:`csv.reader`),
    which read what pyarrow reads (blank lines skipped, a quoted cell or a JSON value over
    several lines); if they could not, one row a line after the csv header."""
    try:
        if jsonl:
            found = [line for line, _ in _json_records(text)]
        else:
            found = _csv_record_lines(text)[1:]  # the header: its first record
    except (ValueError, RecursionError, csv.Error):
        found = []
    return found if len(found) == n_rows else list(range(2 - jsonl, n_rows + 2 - jsonl))


def _csv_record_lines(text: str) -> list[int]:
    """The line each record of a csv text starts on, header included, blank lines skipped
    (as pyarrow's reader skips them), by :func:`csv.reader` (no limit on a cell's size)."""
    old = csv.field_size_limit(sys.maxsize)
    try:
        reader = csv.reader(io.StringIO(text, newline=""))
        starts, end = [], 0
        for record in reader:
            if record:
                starts.append(end + 1)
            end = reader.line_num
        return starts
    finally:
        csv.field_size_limit(old)


_JSON_SPACE = re.compile(r"[ \t\r\n]*")


def _json_records(text: str):
    """(line, value) of each JSON value of a jsonl text in turn, by the standard library's
    decoder (the line its first character is on, from 1).

    Raises
    ------
    json.JSONDecodeError
        At the first record that is not JSON (its ``lineno``: the line the record starts on).
    """
    decoder = json.JSONDecoder()
    i, line, counted = _JSON_SPACE.match(text).end(), 1, 0
    while i < len(text):
        line += text.count("\n", counted, i)
        counted = i
        try:
            value, i = decoder.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            exc.lineno = line  # the record's line, where its decoder saw the fault later
            raise
        yield line, value
        i = _JSON_SPACE.match(text, i).end()


def _json_record(text: str, row: int):
    """The value of record ``row`` (from 0) of a jsonl text."""
    return next(itertools.islice(_json_records(text), row, None))[1]


def _not_text(record: dict, column: str) -> str | None:
    """What a jsonl record holds in place of ``column``'s text (one phrase), or None when it
    is text."""
    if column not in record:
        return f"the record has no {column!r} (its keys: {', '.join(record) or 'none'})"
    value = record[column]
    return None if isinstance(value, str) else f"{column!r} is {_json_kind(value)}, not text"


def _json_kind(value) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "a list", dict: "an object", type(None): "null"}[type(value)]


def _unreadable(name: str, spec: dict, path: Path, text: str, exc: Exception
                ) -> TextCorpusError:
    """The one line for a table pyarrow refused, at its line: a csv's ``Row #n`` (pyarrow
    counts records, the header first) made a line; in a jsonl file the first record that is
    not JSON, not an object, or holds no text in the column or label (pyarrow counts rows
    from 0 within a block), found by the standard library's decoder."""
    why = str(exc).strip("'\"").splitlines()[0] if str(exc) else type(exc).__name__
    key, line = "path", None
    if spec["source"] == "csv":
        found = re.search(r"Row #(\d+): ", why)
        if found:
            why = why.replace(found.group(0), "")
            try:
                starts = _csv_record_lines(text)
                line = starts[int(found.group(1)) - 1]
            except (csv.Error, IndexError):
                pass
    else:
        why = re.sub(r" in row \d+$", "", why)
        try:
            for at, record in _json_records(text):
                if not isinstance(record, dict):
                    return TextCorpusError(f"{at_line(path, at)}: {_json_kind(record)} where "
                                           "a record (a JSON object) belongs; see "
                                           f"corpora.{name}.path")
                for k in ("column", "label"):  # null or absent: read (and refused) as null
                    if spec.get(k) and record.get(spec[k]) is not None:
                        wrong = _not_text(record, spec[k])
                        if wrong:
                            return TextCorpusError(f"{at_line(path, at)}: {wrong}; see "
                                                   f"corpora.{name}.{k}")
        except json.JSONDecodeError as bad:
            why, line = f"not JSON: {bad.msg}", bad.lineno
        except RecursionError:
            pass
    where = path if line is None else at_line(path, line)
    return TextCorpusError(f"{where}: not a readable {spec['source']} table ({why}); see "
                           f"corpora.{name}.{key}")


def _text_column(name: str, path: Path, table, column: str, key: str) -> list:
    """The cells of a table's text ``column`` (``corpora.<name>.<key>`` names it)."""
    import pyarrow as pa

    if table.column_names.count(column) > 1:
        raise TextCorpusError(f"{path}: {table.column_names.count(column)} columns are named "
                              f"{column!r}; see corpora.{name}.{key}")
    if column not in table.column_names:
        raise TextCorpusError(f"{path}: no column {column!r} (columns: "
                              f"{', '.join(table.column_names) or 'none'}); see "
                              f"corpora.{name}.{key}")
    kind = table.schema.field(column).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or
            pa.types.is_null(kind)):
        raise TextCorpusError(f"{path}: column {column!r} holds {kind}, not text; see "
                              f"corpora.{name}.{key}")
    return table.column(column).to_pylist()


def _decode(name: str, doc: str, raw: bytes, encoding: str) -> str:
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise TextCorpusError(f"{doc}: not {encoding} text (byte {exc.start}: "
                              f"{raw[exc.start:exc.start + 1]!r}); see corpora.{name}."
                              "vectorizer.encoding") from None


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
        texts = [strip_parts(_decode(name, d, b, stored["encoding"]), settings["strip"])
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
