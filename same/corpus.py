"""UCI "Bag of Words" corpora: registry, fetch (pooch), parse (pyarrow), validate, cache.

The five corpora of the UCI collection (Newman 2008) are described in
:data:`REGISTRY`.  A corpus is found, in order, in

1. the ``data_dir`` argument,
2. each directory listed in ``$SAME_DATA_DIR`` (``os.pathsep``-separated; a
   read-only mirror is fine: nothing is ever written there),
3. the cache directory (:func:`cache_dir`: ``$SAME_CACHE_DIR`` or the user cache),

and otherwise downloaded from UCI into the cache directory with pooch
(hash-checked where the hash is known, with a progress bar).

Parsing uses pyarrow's multi-threaded C++ CSV reader (never a Python loop);
the parsed matrix is cached as ``.npz`` beside the download so the second load
only reads the arrays.  Every malformed input raises :class:`CorpusFormatError`
naming the file and, where there is one, the 1-based line.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import tempfile
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = [
    "REGISTRY",
    "CorpusInfo",
    "Corpus",
    "CorpusFormatError",
    "CorpusNotFoundError",
    "CacheWarning",
    "cache_dir",
    "fetch",
    "load",
    "read_docword",
    "read_vocab",
]

UCI_BASE_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/bag-of-words/"
_PARSER_VERSION = 1  # bump when the cached arrays' meaning changes


class CorpusFormatError(ValueError):
    """A corpus file is malformed; the message names the file and, where known, the line."""


class CorpusNotFoundError(FileNotFoundError):
    """A corpus file is neither present locally nor downloadable (e.g. offline)."""


class CacheWarning(UserWarning):
    """A parsed-corpus cache was unreadable or stale and has been rebuilt."""


@dataclass(frozen=True)
class CorpusInfo:
    """Registry entry for one UCI bag-of-words corpus (official figures).

    ``*_sha256`` is the SHA-256 of the file as distributed by UCI, or None
    where no verified hash is known (then pooch downloads without a check and
    the parsed header is still validated against ``n_docs, n_words, nnz``).
    """

    name: str
    n_docs: int
    n_words: int
    nnz: int
    n_tokens: int | None
    docword_bytes: int | None
    docword_sha256: str | None
    vocab_bytes: int | None
    vocab_sha256: str | None

    @property
    def docword_file(self) -> str:
        return f"docword.{self.name}.txt.gz"

    @property
    def vocab_file(self) -> str:
        return f"vocab.{self.name}.txt"

    def url(self, filename: str) -> str:
        return UCI_BASE_URL + filename


#: The UCI collection; figures from the UCI page and ../shared/datasets/uci/README.md.
REGISTRY: dict[str, CorpusInfo] = {
    info.name: info
    for info in [
        CorpusInfo("kos", 3430, 6906, 353160, 467714, 1053803,
                   "6439c39f2fccb4876563e4b4c9628974d8ccbeada43d661292a5024911389e30",
                   55467, "623b7b969793b32c4ea7d1ae8cd2e9ed99038bf51628f33f52349f9485aeab8e"),
        CorpusInfo("nips", 1500, 12419, 746316, 1932365, 2288169,
                   "d45f9f7ceeadf118117e14346f018273007b765593a4dbe02915d37a1faa58b7",
                   100807, "be3f6337e3406ddc24837118e203da57c4c898ad5f6c9280908cd08a2609cf91"),
        CorpusInfo("enron", 39861, 28102, 3710420, None, None, None,
                   236180, "16ebfa3155516f5129aaedc978297dbe741f628dd7663eaf026c657c09bab011"),
        CorpusInfo("nytimes", 300000, 102660, 69679427, None, None, None,
                   1345665, "e92598bca61f4fc4eb3f954d813d21552ef058a0bfe129eb52cc3ae8214858ef"),
        CorpusInfo("pubmed", 8200000, 141043, 483450157, None, None, None,
                   1460677, "ca84c971366b1599227d645b4e8128b20826f45ed1af388372252668e1462f13"),
    ]
}


@dataclass
class Corpus:
    """A parsed bag-of-words corpus.

    Attributes
    ----------
    name : str
    counts : scipy.sparse.csr_matrix of shape (n_docs, n_words), dtype int32
        c_dw, the count of word w in document d; sorted indices, no explicit zeros.
    vocab : list of str, length n_words, or None when no vocabulary was given
    source : str
        The docword file it was parsed from.
    """

    name: str
    counts: sp.csr_matrix
    vocab: list[str] | None = None
    source: str = ""
    meta: dict = field(default_factory=dict)

    @property
    def n_docs(self) -> int:
        return self.counts.shape[0]

    @property
    def n_words(self) -> int:
        return self.counts.shape[1]

    @property
    def nnz(self) -> int:
        return self.counts.nnz

    @property
    def n_tokens(self) -> int:
        """Total token count Σ c_dw."""
        return int(self.counts.data.sum(dtype=np.int64))

    def vocab_checksum(self) -> str:
        """SHA-256 of the vocabulary (newline-joined), or of W when there is none."""
        return vocab_checksum(self.vocab, self.n_words)

    def __repr__(self) -> str:
        return (f"Corpus({self.name!r}, n_docs={self.n_docs}, n_words={self.n_words}, "
                f"nnz={self.nnz}, n_tokens={self.n_tokens})")


def vocab_checksum(vocab: list[str] | None, n_words: int) -> str:
    h = hashlib.sha256()
    if vocab is None:
        h.update(f"<no vocab: W={n_words}>".encode())
    else:
        h.update("\n".join(vocab).encode("utf-8"))
    return h.hexdigest()


# --------------------------------------------------------------------------- locations

def cache_dir() -> Path:
    """Directory for downloads and parsed caches.

    ``$SAME_CACHE_DIR`` when set (the workflow points it at the project's
    ``datasets/``), else the platform user cache (``~/.cache/same-lda`` on Linux).
    """
    env = os.environ.get("SAME_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("same-lda"))


def _search_dirs(data_dir: str | os.PathLike | None) -> list[Path]:
    dirs: list[Path] = []
    if data_dir is not None:
        dirs.append(Path(data_dir).expanduser())
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


def _registry_entry(name: str) -> CorpusInfo:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown corpus {name!r}; known: {', '.join(REGISTRY)}") from None


def fetch(name: str, kind: str = "docword", data_dir: str | os.PathLike | None = None,
          download: bool = True) -> Path:
    """Return the local path of one file of a UCI corpus, downloading it if needed.

    Parameters
    ----------
    name : str
        A key of :data:`REGISTRY` ("kos", "nips", "enron", "nytimes", "pubmed").
    kind : {"docword", "vocab"}
    data_dir : path, optional
        Extra directory searched first (read-only use).
    download : bool
        When False, never touch the network.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ValueError
        Unknown corpus or kind.
    CorpusFormatError
        A local copy whose SHA-256 differs from the registry's.
    CorpusNotFoundError
        No local copy and the download failed (or ``download=False``); the
        message names the URL and the directory to put the file in.
    """
    info = _registry_entry(name)
    if kind == "docword":
        filename, sha = info.docword_file, info.docword_sha256
    elif kind == "vocab":
        filename, sha = info.vocab_file, info.vocab_sha256
    else:
        raise ValueError(f"kind must be 'docword' or 'vocab', got {kind!r}")

    for d in _search_dirs(data_dir):
        path = d / filename
        if path.is_file():
            if sha is not None and _sha256(path) != sha:
                raise CorpusFormatError(
                    f"{path}: SHA-256 does not match the UCI file (expected {sha}); "
                    "the copy is corrupted or not the original, delete or replace it")
            return path

    url = info.url(filename)
    target = cache_dir()
    if download:
        import pooch

        try:
            target.mkdir(parents=True, exist_ok=True)
            got = pooch.retrieve(url, known_hash=None if sha is None else f"sha256:{sha}",
                                 fname=filename, path=target, progressbar=True)
            return Path(got)
        except Exception as exc:  # network errors come in many types (requests, OSError, ...)
            reason = f"download failed ({type(exc).__name__}: {exc})"
    else:
        reason = "downloading disabled"
    raise CorpusNotFoundError(
        f"{filename} for corpus {name!r} not found locally and {reason}. "
        f"Download {url} and put it in {target} or in a directory named by $SAME_DATA_DIR "
        f"(searched: {', '.join(str(d) for d in _search_dirs(data_dir))})")


# --------------------------------------------------------------------------- parsing

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


def read_docword(path: str | os.PathLike, allow_recount: bool = False,
                 expected: CorpusInfo | None = None) -> sp.csr_matrix:
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
                f"{path}: header says NNZ={nnz} but the body has {len(doc)} entries "
                f"(truncated or excerpted file; pass allow_recount=True to load it anyway)")
        nnz = len(doc)
    if nnz == 0:
        raise CorpusFormatError(f"{path}: the body holds no entries")
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

    # UCI files are sorted by (doc, word); unsorted input is legal, duplicates are not
    if not _in_order(doc, word):
        key = doc.astype(np.int64) * n_words + word
        order = np.argsort(key, kind="stable")
        dup = np.flatnonzero(np.diff(key[order]) == 0)
        del key
        if dup.size:
            i = int(order[dup[0] + 1])
            raise CorpusFormatError(
                f"{path}, line {i + 4}: duplicate entry for docID {doc[i] + 1}, "
                f"wordID {word[i] + 1}")
        doc, word, count = doc[order], word[order], count[order]

    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(doc, minlength=n_docs), out=indptr[1:])
    idx_dtype = np.int32 if nnz < np.iinfo(np.int32).max else np.int64
    return sp.csr_matrix(
        (count, word.astype(idx_dtype, copy=False), indptr.astype(idx_dtype)),
        shape=(n_docs, n_words))


def read_vocab(path: str | os.PathLike, n_words: int | None = None) -> list[str]:
    """Read ``vocab.X.txt`` (one word per line, line i = word id i).

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
    words = text.splitlines()
    if n_words is not None and len(words) != n_words:
        raise CorpusFormatError(
            f"{path}: vocabulary has {len(words)} lines but the docword header says W={n_words}")
    return words


# --------------------------------------------------------------------------- cache

def _fingerprint(path: Path) -> str:
    st = path.stat()
    return f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|v{_PARSER_VERSION}"


def atomic_write(path: Path, write) -> None:
    """Call ``write(file_object)`` on a temporary file beside ``path``, then rename it.

    Nothing is left at ``path`` (nor a temporary) if ``write`` raises.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _save_cache(path: Path, counts: sp.csr_matrix, fingerprint: str) -> None:
    def write(f):
        np.savez(f, data=counts.data, indices=counts.indices, indptr=counts.indptr,
                 shape=np.asarray(counts.shape, dtype=np.int64),
                 fingerprint=np.asarray(fingerprint))

    atomic_write(path, write)


def _load_cache(path: Path, fingerprint: str) -> sp.csr_matrix | None:
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            if str(z["fingerprint"]) != fingerprint:
                return None
            shape = tuple(int(s) for s in z["shape"])
            counts = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=shape)
        counts.check_format(full_check=False)
        return counts
    except Exception as exc:  # any unreadable cache is rebuilt, never trusted
        warnings.warn(f"{path}: unreadable parsed-corpus cache ({type(exc).__name__}: {exc}); "
                      "rebuilding it", CacheWarning, stacklevel=3)
        return None


# --------------------------------------------------------------------------- public loader

def load(name: str, data_dir: str | os.PathLike | None = None, *, docword: str | os.PathLike |
         None = None, vocab: str | os.PathLike | None = None, allow_recount: bool = False,
         use_cache: bool = True, download: bool = True) -> Corpus:
    """Load a UCI corpus as a :class:`Corpus` (CSR counts + vocabulary).

    Parameters
    ----------
    name : str
        Registry name, or any label when ``docword`` is given explicitly.
    data_dir : path, optional
        Extra directory searched before ``$SAME_DATA_DIR`` and the cache.
    docword, vocab : path, optional
        Explicit files (skip the registry lookup).  ``vocab`` may be omitted
        with an explicit ``docword`` only when no ``vocab.<name>.txt`` is found.
    allow_recount : bool
        Accept a body whose NNZ/D disagree with the header (see :func:`read_docword`).
    use_cache : bool
        Read/write the parsed ``.npz`` in :func:`cache_dir` (never in a mirror).
    download : bool
        Allow downloading missing registry files from UCI.

    Raises
    ------
    ValueError, CorpusFormatError, CorpusNotFoundError
        See :func:`fetch`, :func:`read_docword`, :func:`read_vocab`.
    """
    info = REGISTRY.get(name)
    if docword is None:
        if info is None:
            _registry_entry(name)
        docword_path = fetch(name, "docword", data_dir, download=download)
    else:
        docword_path = Path(docword)
        if not docword_path.is_file():
            raise CorpusNotFoundError(f"{docword_path}: no such file")
    if vocab is None and info is not None:
        vocab_path = fetch(name, "vocab", data_dir, download=download)
    else:
        vocab_path = Path(vocab) if vocab is not None else None

    counts = None
    cache_file = cache_dir() / f"{docword_path.name.split('.txt')[0]}{'.recount' if allow_recount else ''}.npz"
    fp = _fingerprint(docword_path)
    if use_cache:
        counts = _load_cache(cache_file, fp)
    if counts is None:
        expected = info if (info is not None and docword is None) else None
        counts = read_docword(docword_path, allow_recount=allow_recount, expected=expected)
        if use_cache:
            try:
                _save_cache(cache_file, counts, fp)
            except OSError as exc:
                warnings.warn(f"{cache_file}: cannot write the parsed cache ({exc})", CacheWarning,
                              stacklevel=2)
    words = read_vocab(vocab_path, counts.shape[1]) if vocab_path is not None else None
    return Corpus(name=name, counts=counts, vocab=words, source=str(docword_path),
                  meta={"vocab_source": str(vocab_path) if vocab_path else None})
