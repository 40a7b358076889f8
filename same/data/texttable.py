"""A csv or jsonl corpus's documents read by pyarrow (:mod:`same.data.textcorpus`'s tables).

Each row's text (and label) column is read as text, with pyarrow's block size set from the
spec's ``max_line_bytes`` and JSON nesting bounded (:data:`same.data.textclean.MAX_JSON_DEPTH`);
every row is named by the path as the spec gives it and the line it starts on, counted from 1
as an editor does (:func:`same.data.corpusspec.at_line`; pyarrow's own row numbers are
replaced), and every fault of a row, a column or the file is one :class:`TextCorpusError`
line naming the file and the setting.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
import sys
from pathlib import Path

from .corpusspec import TABLE_DEFAULTS, TextCorpusError, _is_unicode, at_line, regular_file
from .textclean import check_lines

__all__ = ["read_table", "decode_document"]


def read_table(name: str, spec: dict, encoding: str
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
    text = decode_document(name, str(path), path.read_bytes(), encoding)
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


def decode_document(name: str, doc: str, raw: bytes, encoding: str) -> str:
    """Document ``doc``'s bytes as text in ``encoding``; else one line naming it, the byte and
    ``corpora.<name>.vectorizer.encoding``."""
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise TextCorpusError(f"{doc}: not {encoding} text (byte {exc.start}: "
                              f"{raw[exc.start:exc.start + 1]!r}); see corpora.{name}."
                              "vectorizer.encoding") from None
