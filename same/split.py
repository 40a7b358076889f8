"""Held-out split for document-completion evaluation (SPEC §3).

A seeded fraction of documents is held out.  Each held-out document's tokens
are split in two halves binomially per count: for every nonzero c_dw,
``observed ~ Binomial(c_dw, 1/2)`` and ``heldout = c_dw - observed``.  The
evaluator folds θ in on the observed half and scores the held-out half.

The split is an ``.npz`` artifact with a SHA-256 of its content, so every
method in a comparison is trained and scored on exactly the same tokens.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .corpus import Corpus, atomic_write, npz_memmap, vocab_checksum

__all__ = ["HeldOutSplit", "SplitIntegrityError", "make_split", "load_split", "train_subset"]

#: Salt of the permutation that picks a fraction of the training documents.
_SUBSET_SALT = 0x5CA1E
#: Entries hashed at a time (bounded temporaries when checksumming a paper-scale split).
_HASH_BLOCK = 1 << 20


class SplitIntegrityError(ValueError):
    """A split artifact is unreadable, or its content does not match its checksum."""



@dataclass
class HeldOutSplit:
    """Training documents and the two halves of the test documents.

    Attributes
    ----------
    train : csr_matrix, shape (n_train, n_words), int32
    test_observed : csr_matrix, shape (n_test, n_words), int32
        Half of each test document's tokens, used to fold θ in.
    test_heldout : csr_matrix, shape (n_test, n_words), int32
        The other half, scored.  ``test_observed + test_heldout`` is the
        test documents' full counts.
    train_docs, test_docs : ndarray of int64
        Row indices of the documents in the source corpus.
    corpus, seed, test_fraction, vocab_sha256 : provenance
    """

    train: sp.csr_matrix
    test_observed: sp.csr_matrix
    test_heldout: sp.csr_matrix
    train_docs: np.ndarray
    test_docs: np.ndarray
    corpus: str
    seed: int
    test_fraction: float
    vocab_sha256: str

    @property
    def n_words(self) -> int:
        return self.train.shape[1]

    @cached_property
    def test_full(self) -> sp.csr_matrix:
        """Full counts of the test documents (observed + held-out); computed once per split."""
        return (self.test_observed + self.test_heldout).tocsr()

    def checksum(self) -> str:
        """SHA-256 over every array and the provenance fields."""
        h = hashlib.sha256()
        h.update(f"{self.corpus}|{self.seed}|{self.test_fraction!r}|{self.vocab_sha256}".encode())
        for m in (self.train, self.test_observed, self.test_heldout):
            h.update(np.asarray(m.shape, dtype=np.int64).tobytes())
            for a in (m.indptr, m.indices, m.data):
                _hash_int64(h, a)
        for a in (self.train_docs, self.test_docs):
            _hash_int64(h, a)
        return h.hexdigest()

    def save(self, path: str | os.PathLike) -> str:
        """Write the split atomically as an uncompressed ``.npz`` (so that
        :func:`load_split` can memory-map it); returns its checksum."""
        digest = self.checksum()
        arrays: dict[str, np.ndarray] = {
            "train_docs": self.train_docs, "test_docs": self.test_docs,
            "meta": np.asarray([self.corpus, str(self.seed), repr(self.test_fraction),
                                self.vocab_sha256, digest]),
        }
        for name in ("train", "test_observed", "test_heldout"):
            m = getattr(self, name)
            arrays[f"{name}_data"] = m.data
            arrays[f"{name}_indices"] = m.indices
            arrays[f"{name}_indptr"] = m.indptr
            arrays[f"{name}_shape"] = np.asarray(m.shape, dtype=np.int64)
        atomic_write(Path(path), lambda f: np.savez(f, **arrays))
        return digest


def make_split(corpus: Corpus | sp.spmatrix, test_fraction: float = 0.1, seed: int = 0,
               name: str | None = None) -> HeldOutSplit:
    """Hold out ``test_fraction`` of the documents and halve their tokens.

    Parameters
    ----------
    corpus : Corpus or sparse matrix of shape (n_docs, n_words), non-negative integer counts
    test_fraction : float in (0, 1)
        Fraction of documents held out (rounded, at least 1, at most n_docs - 1).
    seed : int
        Seeds both the document choice and the binomial halves (NumPy PCG64).

    Raises
    ------
    ValueError
        ``test_fraction`` outside (0, 1); fewer than 2 documents; non-integer
        or negative counts.
    """
    if not (isinstance(test_fraction, (int, float)) and 0 < test_fraction < 1):
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
    if isinstance(corpus, Corpus):
        counts, label, vsha = corpus.counts, corpus.name, corpus.vocab_checksum()
    else:
        counts = sp.csr_matrix(corpus)
        label, vsha = name or "<matrix>", vocab_checksum(None, counts.shape[1])
    counts = counts.tocsr()
    n_docs = counts.shape[0]
    if n_docs < 2:
        raise ValueError(f"need at least 2 documents to split, got {n_docs}")
    if counts.nnz and (counts.data.min() < 0 or not np.all(np.mod(counts.data, 1) == 0)):
        raise ValueError("counts must be non-negative integers")

    rng = np.random.default_rng(seed)
    n_test = min(max(int(round(test_fraction * n_docs)), 1), n_docs - 1)
    test_docs = np.sort(rng.choice(n_docs, size=n_test, replace=False)).astype(np.int64)
    is_test = np.zeros(n_docs, dtype=bool)
    is_test[test_docs] = True
    train_docs = np.flatnonzero(~is_test).astype(np.int64)

    def as_int32(m):
        m = sp.csr_matrix(m, dtype=np.int32)
        m.eliminate_zeros()
        m.sort_indices()
        return m

    test = counts[test_docs]
    observed = test.copy()
    observed.data = rng.binomial(test.data.astype(np.int64), 0.5)
    heldout = test.copy()
    heldout.data = test.data.astype(np.int64) - observed.data
    return HeldOutSplit(
        train=as_int32(counts[train_docs]), test_observed=as_int32(observed),
        test_heldout=as_int32(heldout), train_docs=train_docs, test_docs=test_docs,
        corpus=label, seed=int(seed), test_fraction=float(test_fraction), vocab_sha256=vsha)


def _hash_int64(h, a: np.ndarray) -> None:
    """Feed ``a`` as int64 bytes to ``h`` block by block (the digest of the whole array)."""
    a = np.asarray(a).ravel()
    for lo in range(0, a.size, _HASH_BLOCK):
        h.update(np.ascontiguousarray(a[lo:lo + _HASH_BLOCK], dtype=np.int64).tobytes())


def load_split(path: str | os.PathLike, mmap: bool = False) -> HeldOutSplit:
    """Read a split written by :meth:`HeldOutSplit.save` and verify its checksum.

    ``mmap=True`` memory-maps the arrays instead of reading them (splits written before
    splits were stored uncompressed are read as before); training then reads each minibatch
    from disk, so the corpus need not fit in RAM.

    Raises
    ------
    FileNotFoundError
        No such file.
    SplitIntegrityError
        Unreadable file, missing arrays, or content not matching the stored checksum.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such split file")
    try:
        mapped = npz_memmap(path) if mmap else None
        with np.load(path, allow_pickle=False) as z:
            if mapped is not None:
                z = mapped
            corpus, seed, frac, vsha, digest = (str(x) for x in z["meta"])
            mats = {}
            for name in ("train", "test_observed", "test_heldout"):
                shape = tuple(int(s) for s in z[f"{name}_shape"])
                mats[name] = sp.csr_matrix(
                    (z[f"{name}_data"], z[f"{name}_indices"], z[f"{name}_indptr"]), shape=shape)
            split = HeldOutSplit(train_docs=z["train_docs"], test_docs=z["test_docs"],
                                 corpus=corpus, seed=int(seed), test_fraction=float(frac),
                                 vocab_sha256=vsha, **mats)
    except Exception as exc:
        raise SplitIntegrityError(f"{path}: unreadable split artifact ({type(exc).__name__}: "
                                  f"{exc})") from exc
    if split.checksum() != digest:
        raise SplitIntegrityError(f"{path}: content does not match its checksum {digest}")
    return split


def train_subset(split: HeldOutSplit, fraction: float) -> HeldOutSplit:
    """The split with only a seeded ``fraction`` of its training documents (test halves kept).

    The documents are the first ⌈fraction · n_train⌉ of one permutation seeded by the split's
    seed, so smaller fractions are subsets of larger ones (nested), and they keep corpus order.
    Used by the scale study to vary training tokens per φ parameter with the same held-out
    documents and evaluator.  ``fraction`` = 1 returns ``split`` itself.

    Raises
    ------
    ValueError
        ``fraction`` not in (0, 1].
    """
    if isinstance(fraction, bool) or not (isinstance(fraction, (int, float)) and 0 < fraction <= 1):
        raise ValueError(f"train_fraction must be in (0, 1], got {fraction!r}")
    if fraction == 1:
        return split
    n = split.train.shape[0]
    order = np.random.default_rng([split.seed, _SUBSET_SALT]).permutation(n)
    keep = np.sort(order[:max(1, int(np.ceil(fraction * n)))])
    return HeldOutSplit(train=split.train[keep], test_observed=split.test_observed,
                        test_heldout=split.test_heldout, train_docs=split.train_docs[keep],
                        test_docs=split.test_docs, corpus=split.corpus, seed=split.seed,
                        test_fraction=split.test_fraction, vocab_sha256=split.vocab_sha256)
