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

import hashlib
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .artefact import ArtefactError, csr_from_parts, npz_memmap, open_npz, remedied, save_npz
from .docword import CorpusFormatError, CorpusNotFoundError, read_docword, read_vocab
from .download import cache_dir, fetch
from .outputs import OutputError

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
    "npz_memmap",
    "read_cache",
    "read_docword",
    "read_vocab",
]

UCI_BASE_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/bag-of-words/"
#: UCI's static archive of the whole collection (dataset 164, "Bag of Words"; about 2 GB with
#: PubMed), the second source of every file: members are extracted after the download.
UCI_ARCHIVE_URL = "https://archive.ics.uci.edu/static/public/164/bag+of+words.zip"
_PARSER_VERSION = 1  # bump when the cached arrays' meaning changes
_CACHE_REMEDY = "delete it: the next load rebuilds it"




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
    n_tokens: int
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
        """Download URL: ``$SAME_UCI_URL`` (a mirror; tests use a loopback server) or UCI's."""
        base = os.environ.get("SAME_UCI_URL") or UCI_BASE_URL
        return base.rstrip("/") + "/" + filename

    def sources(self, filename: str) -> list[tuple[str, str | None]]:
        """Where ``filename`` is downloaded from, in the order tried: (URL, None) for the file
        itself, then (archive URL, member) for UCI's archive of the collection
        (``$SAME_UCI_ARCHIVE_URL`` overrides it)."""
        archive = os.environ.get("SAME_UCI_ARCHIVE_URL") or UCI_ARCHIVE_URL
        return [(self.url(filename), None), (archive, filename)]


#: The UCI collection; D, W, NNZ from the files' headers (UCI page, ../shared/datasets/uci/
#: README.md); tokens (Σ counts) of KOS and NIPS counted from the files, of NYTimes and PubMed
#: as counted in the literature (UCI gives ~100M, ~730M), of Enron UCI's ~6.4M (not verified
#: here). The one source of these shapes: synthetic corpora, benchmarks and reports read them.
REGISTRY: dict[str, CorpusInfo] = {
    info.name: info
    for info in [
        CorpusInfo("kos", 3430, 6906, 353160, 467714, 1053803,
                   "6439c39f2fccb4876563e4b4c9628974d8ccbeada43d661292a5024911389e30",
                   55467, "623b7b969793b32c4ea7d1ae8cd2e9ed99038bf51628f33f52349f9485aeab8e"),
        CorpusInfo("nips", 1500, 12419, 746316, 1932365, 2288169,
                   "d45f9f7ceeadf118117e14346f018273007b765593a4dbe02915d37a1faa58b7",
                   100807, "be3f6337e3406ddc24837118e203da57c4c898ad5f6c9280908cd08a2609cf91"),
        CorpusInfo("enron", 39861, 28102, 3710420, 6_400_000, None, None,
                   236180, "16ebfa3155516f5129aaedc978297dbe741f628dd7663eaf026c657c09bab011"),
        CorpusInfo("nytimes", 300000, 102660, 69679427, 99542125, None, None,
                   1345665, "e92598bca61f4fc4eb3f954d813d21552ef058a0bfe129eb52cc3ae8214858ef"),
        CorpusInfo("pubmed", 8200000, 141043, 483450157, 737869083, None, None,
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


def _registry_entry(name: str) -> CorpusInfo:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown corpus {name!r}; known: {', '.join(REGISTRY)}") from None


# --------------------------------------------------------------------------- cache

def _fingerprint(path: Path) -> str:
    st = path.stat()
    return f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|v{_PARSER_VERSION}"


def _save_cache(path: Path, counts: sp.csr_matrix, fingerprint: str) -> None:
    save_npz(path, {"data": counts.data, "indices": counts.indices, "indptr": counts.indptr,
                    "shape": np.asarray(counts.shape, dtype=np.int64),
                    "fingerprint": np.asarray(fingerprint)})


def read_cache(path: str | os.PathLike, mmap: bool = False) -> tuple[str, sp.csr_matrix]:
    """(fingerprint of its source file, counts) of a parsed-corpus cache, after its seal and
    structural checks (:mod:`same.artefact`).

    Raises
    ------
    ArtefactError
        Unsealed, seal mismatch, unreadable or malformed (one line naming the file).
    """
    z = open_npz(path, "parsed-corpus cache", _CACHE_REMEDY,
                 ("fingerprint", "data", "indices", "indptr", "shape"), mmap=mmap)
    with remedied(_CACHE_REMEDY):
        return str(z["fingerprint"]), csr_from_parts(z["data"], z["indices"], z["indptr"],
                                                     z["shape"], str(path))


def _load_cache(path: Path, fingerprint: str, mmap: bool = False) -> sp.csr_matrix | None:
    """The parsed counts of a cache file, or None when it is absent, stale (another source
    file) or fails any check (seal, structure): derived data is rebuilt, never trusted."""
    if not path.is_file():
        return None
    try:
        cached_fp, counts = read_cache(path, mmap)
    except ArtefactError as exc:
        msg = str(exc).removeprefix(f"{path}: ").removesuffix(f"; {_CACHE_REMEDY}")
        warnings.warn(f"{path}: unreadable parsed-corpus cache ({msg}); rebuilding it",
                      CacheWarning, stacklevel=3)
        return None
    return counts if cached_fp == fingerprint else None


# --------------------------------------------------------------------------- public loader

def load(name: str, data_dir: str | os.PathLike | None = None, *, docword: str | os.PathLike |
         None = None, vocab: str | os.PathLike | None = None, allow_recount: bool = False,
         use_cache: bool = True, download: bool = True, mmap: bool = False) -> Corpus:
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
    mmap : bool
        Memory-map the parsed cache instead of reading it (a corpus larger than RAM; the
        first load still parses into memory).

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
        counts = _load_cache(cache_file, fp, mmap)
    if counts is None:
        expected = info if (info is not None and docword is None) else None
        counts = read_docword(docword_path, allow_recount=allow_recount, expected=expected)
        if use_cache:
            try:
                _save_cache(cache_file, counts, fp)
            except (OSError, OutputError) as exc:  # unwritable, or a link or folder there
                warnings.warn(f"{cache_file}: cannot write the parsed cache ({exc})", CacheWarning,
                              stacklevel=2)
    words = read_vocab(vocab_path, counts.shape[1]) if vocab_path is not None else None
    return Corpus(name=name, counts=counts, vocab=words, source=str(docword_path),
                  meta={"vocab_source": str(vocab_path) if vocab_path else None})
