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

from same.io.outputs import OutputError

from .artefact import ArtefactError, csr_from_parts, npz_memmap, open_npz, remedied, save_npz
from .docword import CorpusFormatError, CorpusNotFoundError, read_docword, read_vocab
from .download import cache_dir, fetch
from .registry import REGISTRY, CorpusInfo, _registry_entry

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

_PARSER_VERSION = 1  # bump when the cached arrays' meaning changes
_CACHE_REMEDY = "delete it: the next load rebuilds it"




class CacheWarning(UserWarning):
    """A parsed-corpus cache was unreadable or stale and has been rebuilt."""


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
    meta : dict
        Provenance; ``meta["order"]`` (:func:`same.data.order.order_record`) says whether the
        rows are in file order or one seeded shuffle (absent: not recorded).
    labels : ndarray of str, length n_docs, or None
        Each document's label: its category folder (a folder corpus, 20 Newsgroups), a
        table's ``label`` column; None when the corpus has none.
    file_positions : ndarray of int64, length n_docs, or None
        Each row's position in file order (sorting by it restores file order); None: the
        rows are in file order.
    """

    name: str
    counts: sp.csr_matrix
    vocab: list[str] | None = None
    source: str = ""
    meta: dict = field(default_factory=dict)
    labels: np.ndarray | None = None
    file_positions: np.ndarray | None = None

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
    structural checks (:mod:`same.data.artefact`).

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
    except (ArtefactError, OSError) as exc:  # damaged, or unreadable: rebuilt over it
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
                  meta={"vocab_source": str(vocab_path) if vocab_path else None,
                        "order": {"shuffled": False, "seed": None, "on_purpose": False}})
