"""Parsing and validating UCI ``docword`` and ``vocab`` files (pyarrow's C++ CSV reader).

Every malformed input raises :class:`CorpusFormatError` naming the file and,
where there is one, the 1-based line.
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = ["CorpusFormatError", "CorpusNotFoundError", "read_docword", "read_vocab"]


class CorpusFormatError(ValueError):
    """A corpus file is malformed; the message names the file and, where known, the line."""


class CorpusNotFoundError(FileNotFoundError):
    """A corpus file is neither present locally nor downloadable (e.g. offline)."""


def _read_header(path: Path) -> tuple[int, int, int]:
    """Return (D, W, NNZ) from the three header lines."""
    names = ("D (number of documents)", "W (vocabulary size)", "NNZ (number of entries)")
    values = []
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as f:
            for lineno, what in enumerate(names, start=1):
                raw = f.readline()
                text = raw.decode("ascii", errors="replace").strip()
                if not re.fullmatch(r"[0-9]+", text):
                    raise CorpusFormatError(
                        f"{path}, line {lineno}: header must hold {what} as a positive integer, "
                        f"got {text!r}")
                v = int(text)
                if v <= 0:
                    raise CorpusFormatError(f"{path}, line {lineno}: {what} must be > 0, got {v}")
                values.append(v)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise CorpusFormatError(f"{path}: unreadable gzip stream in the header ({exc})") from exc
    return values[0], values[1], values[2]


_LINE_RE = re.compile(rb"[ \t]*[0-9]+[ \t]+[0-9]+[ \t]+[0-9]+[ \t]*\r?\n?")


def _locate_bad_line(path: Path) -> tuple[int, str] | None:
    """Diagnostics only (after the fast parser failed): first body line that is not 3 integers."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rb") as f:
            for lineno, raw in enumerate(f, start=1):
                if lineno <= 3:
                    continue
                if not _LINE_RE.fullmatch(raw):
                    return lineno, raw.decode("ascii", errors="replace").rstrip("\n")
    except (EOFError, zlib.error, gzip.BadGzipFile):
        return None
    return None


def _parse_body(path: Path, nnz_hint: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stream the body through pyarrow's CSV reader into preallocated int32 arrays.

    Returns 0-based (doc, word) ids and counts.  Only one record batch of
    Arrow data is alive at a time, so peak memory is ~12 bytes per entry.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    cols = [np.empty(nnz_hint, dtype=np.int32) for _ in range(3)]
    extra: list[list[np.ndarray]] = [[], [], []]  # rows beyond the header's NNZ
    n = 0
    try:
        reader = pacsv.open_csv(
            str(path),  # pyarrow decompresses .gz itself
            read_options=pacsv.ReadOptions(column_names=["doc", "word", "count"],
                                           skip_rows=3, block_size=1 << 22),
            parse_options=pacsv.ParseOptions(delimiter=" "),
            convert_options=pacsv.ConvertOptions(
                column_types={"doc": pa.int32(), "word": pa.int32(), "count": pa.int32()}),
        )
        for batch in reader:
            rows = batch.num_rows
            for i in range(3):
                c = batch.column(i)
                if c.null_count:
                    first = n + int(np.argmax(c.is_null().to_numpy(zero_copy_only=False)))
                    raise CorpusFormatError(
                        f"{path}, line {first + 4}: missing field (expected 'docID wordID count')")
                values = c.to_numpy()
                fit = max(0, min(rows, nnz_hint - n))
                cols[i][n:n + fit] = values[:fit]
                if fit < rows:
                    extra[i].append(values[fit:].copy())
            n += rows
    except (pa.ArrowInvalid, ValueError) as exc:
        if isinstance(exc, CorpusFormatError):
            raise
        bad = _locate_bad_line(path)
        if bad is not None:
            lineno, text = bad
            raise CorpusFormatError(
                f"{path}, line {lineno}: expected 'docID wordID count' (three integers), "
                f"got {text!r}") from exc
        raise CorpusFormatError(f"{path}: cannot parse body ({exc})") from exc
    except (OSError, EOFError, zlib.error) as exc:
        raise CorpusFormatError(
            f"{path}: truncated or corrupt gzip stream ({type(exc).__name__}: {exc})") from exc
    if n > nnz_hint:
        cols = [np.concatenate([c] + e) for c, e in zip(cols, extra)]
    else:
        cols = [c[:n] for c in cols]
    doc, word, count = cols
    doc -= 1  # 0-based ids from here on
    word -= 1
    return doc, word, count


_BLOCK = 1 << 20  # validation works on slices of this many entries (bounded temporaries)


def _find_first(pred, *arrays) -> int | None:
    """Index of the first entry where ``pred(*slices)`` holds, scanning in blocks; None if none."""
    n = len(arrays[0])
    for lo in range(0, n, _BLOCK):
        hit = pred(*(a[lo:lo + _BLOCK] for a in arrays))
        if hit.any():
            return lo + int(np.argmax(hit))
    return None


def _in_order(doc: np.ndarray, word: np.ndarray) -> bool:
    """True when (doc, word) pairs are strictly increasing (the UCI order), blockwise."""
    n = len(doc)
    for lo in range(0, max(n - 1, 0), _BLOCK):
        hi = min(lo + _BLOCK + 1, n)
        dd = np.diff(doc[lo:hi])
        if not ((dd > 0) | ((dd == 0) & (np.diff(word[lo:hi]) > 0))).all():
            return False
    return True


def _check_ids(path: Path, doc, word, count, n_docs: int, n_words: int,
               allow_recount: bool) -> int:
    """Range checks of the 0-based ids and counts (reported 1-based, line = index + 4);
    returns D (the largest docID when ``allow_recount``)."""
    # ids are 0-based from here on; report them 1-based as in the file (line = index + 4)
    if (i := _find_first(lambda w: (w < 0) | (w >= n_words), word)) is not None:
        raise CorpusFormatError(
            f"{path}, line {i + 4}: wordID {word[i] + 1} out of range 1..{n_words} (header W)")
    if (i := _find_first(lambda d: d < 0, doc)) is not None:
        raise CorpusFormatError(f"{path}, line {i + 4}: docID {doc[i] + 1} out of range 1..{n_docs}")
    max_doc = int(doc.max()) + 1
    if max_doc > n_docs and not allow_recount:
        i = _find_first(lambda d: d >= n_docs, doc)
        raise CorpusFormatError(
            f"{path}, line {i + 4}: docID {doc[i] + 1} out of range 1..{n_docs} (header D)")
    if allow_recount:
        n_docs = max_doc
    if (i := _find_first(lambda c: c < 1, count)) is not None:
        raise CorpusFormatError(f"{path}, line {i + 4}: count {count[i]} must be >= 1")

    return n_docs


def _sorted_unique(path: Path, doc, word, count, n_words: int):
    """(doc, word, count) in (doc, word) order: UCI files are sorted already; unsorted input is
    legal, duplicate (doc, word) pairs are not (CorpusFormatError naming the line)."""
    if _in_order(doc, word):
        return doc, word, count
    key = doc.astype(np.int64) * n_words + word
    order = np.argsort(key, kind="stable")
    dup = np.flatnonzero(np.diff(key[order]) == 0)
    del key
    if dup.size:
        i = int(order[dup[0] + 1])
        raise CorpusFormatError(
            f"{path}, line {i + 4}: duplicate entry for docID {doc[i] + 1}, "
            f"wordID {word[i] + 1}")
    return doc[order], word[order], count[order]


def read_docword(path: str | os.PathLike, allow_recount: bool = False,
                 expected=None) -> sp.csr_matrix:
    """Parse and validate a UCI ``docword`` file into a CSR count matrix.

    Parameters
    ----------
    path : path to ``docword.X.txt[.gz]``
    allow_recount : bool
        If the header's D or NNZ disagrees with the body, take the body's
        figures (NNZ = entries read, D = largest docID) instead of raising.
        Meant for excerpts such as the 10-document NYTimes sample.
    expected : CorpusInfo, optional
        When given (and ``allow_recount`` is False), the header must match it.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (D, W), dtype int32, sorted indices.

    Raises
    ------
    CorpusFormatError
        Header not three positive integers; a body line that is not three
        integers; docID/wordID out of 1..D / 1..W; count < 1; a duplicate
        (doc, word) pair; header NNZ or D not matching the body; truncated or
        corrupt gzip. The message names the file and the line.
    """
    path = Path(path)
    if not path.is_file():
        raise CorpusNotFoundError(f"{path}: no such file")
    n_docs, n_words, nnz = _read_header(path)
    if expected is not None and not allow_recount:
        for what, got, want in (("D", n_docs, expected.n_docs), ("W", n_words, expected.n_words),
                                ("NNZ", nnz, expected.nnz)):
            if got != want:
                raise CorpusFormatError(
                    f"{path}: header {what}={got} but corpus {expected.name!r} has {what}={want}")
    doc, word, count = _parse_body(path, min(nnz, np.iinfo(np.int32).max))

    if len(doc) != nnz:
        if not allow_recount:
            raise CorpusFormatError(
                f"{path}, line 3: header says NNZ={nnz} but the body has {len(doc)} entries "
                f"(a truncated or excerpted file); to read the entries it has, make line 3 "
                f"say {len(doc)}")
        nnz = len(doc)
    if nnz == 0:
        raise CorpusFormatError(f"{path}: the body holds no entries")
    n_docs = _check_ids(path, doc, word, count, n_docs, n_words, allow_recount)

    doc, word, count = _sorted_unique(path, doc, word, count, n_words)

    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(doc, minlength=n_docs), out=indptr[1:])
    idx_dtype = np.int32 if nnz < np.iinfo(np.int32).max else np.int64
    return sp.csr_matrix(
        (count, word.astype(idx_dtype, copy=False), indptr.astype(idx_dtype)),
        shape=(n_docs, n_words))


def read_vocab(path: str | os.PathLike, n_words: int | None = None) -> list[str]:
    """Read ``vocab.X.txt`` (one word per line, line i = word id i).

    Lines end at ``\n`` only (a ``\r`` before it is dropped): a word may hold any other
    character, U+2028 or a form feed included, which :meth:`str.splitlines` would take as a
    line break and so shift every later word id.

    Raises
    ------
    CorpusFormatError
        Not UTF-8 or, when ``n_words`` is given, a line count other than W.
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise CorpusFormatError(f"{path}, line {line}: not valid UTF-8") from exc
    words = text.split("\n")
    if words and words[-1] == "":  # the file's final newline ends the last line
        words.pop()
    words = [w.removesuffix("\r") for w in words]
    if n_words is not None and len(words) != n_words:
        raise CorpusFormatError(
            f"{path}: vocabulary has {len(words)} lines but the docword header says W={n_words}")
    return words
