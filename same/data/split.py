"""Held-out split for document-completion evaluation (Wallach et al. 2009, document completion).

A seeded fraction of documents is held out; for every nonzero c_dw of a held-out document
``observed ~ Binomial(c_dw, 1/2)`` and ``heldout = c_dw - observed``.  The evaluator folds θ
in on the observed half and scores the held-out half.  :func:`validation_split` carves
validation documents out of the training documents the same way.  The split is an ``.npz``
with a SHA-256 of its content: every method is trained and scored on the same tokens.

A split of a :class:`same.data.corpus.Corpus` also records the order its training documents are
stored in (``order``: "file", "shuffled:<seed>", "file:on_purpose", "unknown"), their labels
and their positions in file order (:mod:`same.data.order`: SAME and online VB learn in this
order; the runner refuses one grouped by label).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import zipfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from same.io.values import check_fraction, check_seed

from .artefact import ArtefactError, check_array, csr_from_parts, open_npz, remedied, save_npz
from .corpus import Corpus, vocab_checksum
from .order import split_order

__all__ = ["HeldOutSplit", "SplitIntegrityError", "ValidationSplit", "make_split", "load_split",
           "train_subset", "validation_split"]

#: Salt of the permutation that picks a fraction of the training documents.
_SUBSET_SALT = 0x5CA1E
#: Salt of the generator that picks and halves validation documents (a stream apart from
#: the split's own and from :func:`train_subset`'s).
_VALIDATION_SALT = 0x7A11D
#: Entries hashed at a time (bounded temporaries when checksumming a paper-scale split).
_HASH_BLOCK = 1 << 20


class SplitIntegrityError(ArtefactError):
    """A split artifact is unreadable, fails its seal or checksum, or holds malformed arrays."""


_REMEDY = "rerun `same-lda split` to rewrite it"
_MATRICES = ("train", "test_observed", "test_heldout")
_KEYS = ("meta", "train_docs", "test_docs",
         *(f"{m}_{p}" for m in _MATRICES for p in ("data", "indices", "indptr", "shape")))
#: Optional members (absent in a split written before them: order "unknown", no labels, the
#: documents dropped as empty not recorded).
_ORDER_KEYS = ("order", "train_labels", "label_names", "train_file_positions",
               "n_dropped_empty")
_ORDER = re.compile(r"file|file:on_purpose|unknown|shuffled:\d+")


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
    order : str
        How the source corpus stored its rows: "file", "shuffled:<seed>", "file:on_purpose"
        (``shuffle: false`` given), "unknown" (a bare matrix, a split written before).
    train_labels : ndarray of int32 or None
        Each training document's label, a code into ``label_names``.
    label_names : tuple of str or None
    train_file_positions : ndarray of int64 or None
        Each training document's position in the corpus's file order (None: the stored
        order is file order, or unknown).
    n_dropped_empty : int or None
        Documents of the corpus the vectorizer's settings left with no word, dropped
        (``vectorizer.drop_empty``) before the split; None: not recorded (a UCI corpus, a
        matrix, a split written before).
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
    order: str = "unknown"
    train_labels: np.ndarray | None = None
    label_names: tuple[str, ...] | None = None
    train_file_positions: np.ndarray | None = None
    n_dropped_empty: int | None = None
    _digest: str | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def n_words(self) -> int:
        return self.train.shape[1]

    @cached_property
    def test_full(self) -> sp.csr_matrix:
        """Full counts of the test documents (observed + held-out); computed once per split."""
        return (self.test_observed + self.test_heldout).tocsr()

    def checksum(self) -> str:
        """SHA-256 over every array and the provenance fields, computed once per split; the
        order, labels and file positions enter only when there are any beyond file order
        (the checksum of a UCI corpus's split is as before they were recorded).  What is
        trained and scored, nothing else: ``n_dropped_empty`` (a count of documents that are
        in neither part) does not enter, so the runs' recorded checksum stays that of the
        same documents however the count is recorded."""
        if getattr(self, "_digest", None) is None:
            h = hashlib.sha256()
            h.update(self._provenance().encode())
            for m in (self.train, self.test_observed, self.test_heldout):
                h.update(np.asarray(m.shape, dtype=np.int64).tobytes())
                for a in (m.indptr, m.indices, m.data):
                    _hash_int64(h, a)
            for a in (self.train_docs, self.test_docs):
                _hash_int64(h, a)
            _hash_order(self, h)
            self._digest = h.hexdigest()
        return self._digest

    def _provenance(self) -> str:
        """The provenance fields as hashed by :meth:`checksum`."""
        return f"{self.corpus}|{self.seed}|{self.test_fraction!r}|{self.vocab_sha256}"

    def save(self, path: str | os.PathLike, *, inputs=(), option: str | None = None) -> str:
        """Write the split as a sealed, uncompressed ``.npz`` (:func:`same.data.artefact.save_npz`;
        :func:`load_split` can memory-map it); returns its checksum.

        ``path`` may replace only an earlier split, never one of ``inputs`` (the corpus it
        was made from); ``option`` names it in messages (:mod:`same.io.outputs`).

        Raises
        ------
        same.io.outputs.OutputError
            ``path`` exists and is not a split written by same-lda, or is (holds) an input.
        """
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
        arrays["order"] = np.asarray(self.order)
        if self.train_labels is not None:
            arrays["train_labels"] = np.asarray(self.train_labels, dtype=np.int32)
            arrays["label_names"] = np.asarray(self.label_names, dtype=str)
        if self.train_file_positions is not None:
            arrays["train_file_positions"] = np.asarray(self.train_file_positions, np.int64)
        if self.n_dropped_empty is not None:
            arrays["n_dropped_empty"] = np.asarray(self.n_dropped_empty, np.int64)
        save_npz(Path(path), arrays, inputs=inputs, option=option)
        return digest


def make_split(corpus: Corpus | sp.spmatrix, test_fraction: float = 0.1, seed: int = 0,
               name: str | None = None) -> HeldOutSplit:
    """Hold out ``test_fraction`` of the documents and halve their tokens.

    Parameters
    ----------
    corpus : Corpus or sparse matrix of shape (n_docs, n_words), non-negative integer counts
    test_fraction : float in (0, 1), documents held out (rounded, 1 to n_docs - 1)
    seed : int ≥ 0, seeds the document choice and the binomial halves (NumPy PCG64)

    A Corpus's ``meta["order"]``, ``labels``, ``file_positions`` and
    ``meta["n_dropped_empty"]`` are carried into the split's ``order``, ``train_labels`` /
    ``label_names``, ``train_file_positions`` and ``n_dropped_empty``.

    Raises
    ------
    ValueError
        ``test_fraction`` not a number in (0, 1), ``seed`` not an integer ≥ 0 (a bool is
        neither; :mod:`same.io.values`); fewer than 2 documents; counts refused by the
        input gate (:func:`same.data.count_matrix.validate_counts`, naming ``corpus``).
    """
    test_fraction = check_fraction(test_fraction, "test_fraction")
    seed = check_seed(seed)
    order = {}
    if isinstance(corpus, Corpus):
        counts, label, vsha = corpus.counts, corpus.name, corpus.vocab_checksum()
        order = _corpus_order(corpus)
    else:
        from .count_matrix import validate_counts  # the input gate, before any indexing

        counts = validate_counts(corpus, "corpus", require_tokens=False)
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
    observed, heldout = _halve(counts[test_docs], rng)
    if order.get("train_labels") is not None:
        order["train_labels"] = order["train_labels"][train_docs]
    if order.get("train_file_positions") is not None:
        order["train_file_positions"] = order["train_file_positions"][train_docs]
    return HeldOutSplit(
        train=_as_int32(counts[train_docs]), test_observed=observed, test_heldout=heldout,
        train_docs=train_docs, test_docs=test_docs,
        corpus=label, seed=int(seed), test_fraction=float(test_fraction), vocab_sha256=vsha,
        **order)


def _corpus_order(corpus: Corpus) -> dict:
    """The split's order fields of a whole corpus (label codes and positions of every row)."""
    out = {"order": split_order(corpus.meta.get("order"))}
    if corpus.meta.get("n_dropped_empty") is not None:  # a text corpus's (drop_empty)
        out["n_dropped_empty"] = int(corpus.meta["n_dropped_empty"])
    for name, a in (("labels", corpus.labels), ("file_positions", corpus.file_positions)):
        if a is not None and len(a) != corpus.n_docs:
            raise ValueError(f"corpus {corpus.name!r}: {len(a)} {name} for {corpus.n_docs} "
                             "documents")
    if corpus.labels is not None:
        names, codes = np.unique(np.asarray(corpus.labels, dtype=str), return_inverse=True)
        out["label_names"] = tuple(str(n) for n in names)
        out["train_labels"] = codes.ravel().astype(np.int32)
    if corpus.file_positions is not None:
        out["train_file_positions"] = np.asarray(corpus.file_positions, dtype=np.int64)
    return out


def _as_int32(m) -> sp.csr_matrix:
    """``m`` as an int32 CSR matrix without explicit zeros, indices sorted."""
    m = sp.csr_matrix(m, dtype=np.int32)
    m.eliminate_zeros()
    m.sort_indices()
    return m


def _halve(docs: sp.csr_matrix, rng: np.random.Generator) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """The two halves of held-out documents ``docs`` (CSR counts): per nonzero count c,
    observed ~ Binomial(c, 1/2) drawn from ``rng`` and held-out = c - observed (int32 CSR,
    same shape).  The one halving, of test and of validation documents alike."""
    observed = docs.copy()
    observed.data = rng.binomial(docs.data.astype(np.int64), 0.5)
    heldout = docs.copy()
    heldout.data = docs.data.astype(np.int64) - observed.data
    return _as_int32(observed), _as_int32(heldout)


def _hash_order(split, h) -> None:
    """Feed a split's order, labels and file positions to ``h``, only when it has any beyond
    file order (a split without them, whatever holds its fields, hashes as before)."""
    order = getattr(split, "order", "unknown")
    labels = getattr(split, "train_labels", None)
    positions = getattr(split, "train_file_positions", None)
    if labels is None and positions is None and order in ("file", "unknown"):
        return
    names = None if labels is None else list(split.label_names)
    h.update(json.dumps({"order": order, "label_names": names,
                         "positions": positions is not None}).encode())
    for a in (labels, positions):
        if a is not None:
            _hash_int64(h, a)


def _hash_int64(h, a: np.ndarray) -> None:
    """Feed ``a`` as int64 bytes to ``h`` block by block (the digest of the whole array)."""
    a = np.asarray(a).ravel()
    for lo in range(0, a.size, _HASH_BLOCK):
        h.update(np.ascontiguousarray(a[lo:lo + _HASH_BLOCK], dtype=np.int64).tobytes())


def load_split(path: str | os.PathLike, mmap: bool = False) -> HeldOutSplit:
    """Read a split written by :meth:`HeldOutSplit.save`, checked before use.

    Checked, in order: the file's SHA-256 seal (:func:`same.data.artefact.open_npz`), the structure
    of its three CSR matrices (:func:`same.data.artefact.csr_from_parts`: monotone ``indptr``,
    indices < W, sorted rows, counts ≥ 0), that they share W and that the document index
    arrays match their rows, and the content checksum stored in its metadata.

    ``mmap=True`` memory-maps the arrays of a split of at least
    :data:`same.data.artefact.MMAP_MIN_BYTES` instead of reading them (training then reads each
    minibatch from disk, so the corpus need not fit in RAM); a smaller split is read.

    Raises
    ------
    FileNotFoundError
        No such file.
    SplitIntegrityError
        Unsealed, seal or checksum mismatch, unreadable, missing arrays, or malformed
        arrays: one line naming the file and the fault.
    """
    path = Path(path)
    with remedied(_REMEDY, SplitIntegrityError):
        z = open_npz(path, "split file", _REMEDY, _KEYS + _order_members(path), mmap=mmap)
        where = str(path)
        meta = check_array(z["meta"], "meta", where, ndim=1, kind="U")
        if meta.size != 5:
            raise ArtefactError(f"{where}: meta holds {meta.size} fields, expected 5")
        corpus, seed, frac, vsha, digest = (str(x) for x in meta)
        try:
            seed, frac = int(seed), float(frac)
        except ValueError as exc:
            raise ArtefactError(f"{where}: unreadable split metadata ({exc})") from None
        mats = {name: csr_from_parts(z[f"{name}_data"], z[f"{name}_indices"],
                                     z[f"{name}_indptr"], z[f"{name}_shape"],
                                     f"{where}: {name}") for name in _MATRICES}
        docs = {name: check_array(z[name], name, where, ndim=1, kind="i")
                for name in ("train_docs", "test_docs")}
        if len({m.shape[1] for m in mats.values()}) != 1:
            raise ArtefactError(f"{where}: the matrices disagree on the number of words "
                                f"({', '.join(str(m.shape[1]) for m in mats.values())})")
        if (mats["test_observed"].shape != mats["test_heldout"].shape
                or docs["test_docs"].size != mats["test_observed"].shape[0]
                or docs["train_docs"].size != mats["train"].shape[0]):
            raise ArtefactError(f"{where}: document lists and matrix rows disagree")
        split = HeldOutSplit(train_docs=docs["train_docs"], test_docs=docs["test_docs"],
                             corpus=corpus, seed=seed, test_fraction=frac,
                             vocab_sha256=vsha, **mats, **_read_order(z, where, docs))
    if split.checksum() != digest:
        raise SplitIntegrityError(f"{path}: content does not match its checksum {digest}; "
                                  f"{_REMEDY}")
    return split


def _order_members(path: Path) -> tuple[str, ...]:
    """The optional order members the file holds (none when it cannot be read as a zip:
    :func:`same.data.artefact.open_npz` then checks the seal and names what is wrong)."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = {n.removesuffix(".npy") for n in zf.namelist()}
    except Exception:  # any damage (zipfile raises many kinds): the seal check reports it
        return ()
    return tuple(k for k in _ORDER_KEYS if k in names)


def _read_order(z: dict, where: str, docs: dict) -> dict:
    """The order fields of a split file's members, checked (absent: "unknown", None)."""
    out = {}
    if "order" in z:
        out["order"] = str(check_array(z["order"], "order", where, ndim=0, kind="U"))
        if not _ORDER.fullmatch(out["order"]):
            raise ArtefactError(f"{where}: order {out['order']!r} is not file, "
                                "file:on_purpose, unknown or shuffled:<seed>")
    n_train, n_docs = docs["train_docs"].size, docs["train_docs"].size + docs["test_docs"].size
    if ("train_labels" in z) != ("label_names" in z):
        raise ArtefactError(f"{where}: train_labels and label_names come together")
    if "train_labels" in z:
        codes = check_array(z["train_labels"], "train_labels", where, ndim=1, kind="i")
        names = check_array(z["label_names"], "label_names", where, ndim=1, kind="U")
        if codes.size != n_train or (codes.size and codes.max() >= names.size):
            raise ArtefactError(f"{where}: train_labels do not match the training documents "
                                f"and {names.size} label names")
        out["train_labels"] = np.asarray(codes, dtype=np.int32)
        out["label_names"] = tuple(str(n) for n in names)
    if "train_file_positions" in z:
        pos = check_array(z["train_file_positions"], "train_file_positions", where, ndim=1,
                          kind="i")
        if pos.size != n_train or (pos.size and (pos.max() >= n_docs
                                                 or np.unique(pos).size != pos.size)):
            raise ArtefactError(f"{where}: train_file_positions are not distinct positions "
                                f"of {n_docs} documents, one per training document")
        out["train_file_positions"] = np.asarray(pos, dtype=np.int64)
    if "n_dropped_empty" in z:
        dropped = check_array(z["n_dropped_empty"], "n_dropped_empty", where, ndim=0,
                              kind="i")
        if dropped < 0:
            raise ArtefactError(f"{where}: n_dropped_empty is {int(dropped)}, not a number of "
                                "documents")
        out["n_dropped_empty"] = int(dropped)
    return out


def _rows_of(split: HeldOutSplit, rows) -> dict:
    """The order fields of ``split`` for its training rows ``rows`` (a subset or reorder)."""
    return {"order": split.order, "label_names": split.label_names,
            "train_labels": None if split.train_labels is None else split.train_labels[rows],
            "train_file_positions": None if split.train_file_positions is None
            else split.train_file_positions[rows],
            "n_dropped_empty": split.n_dropped_empty}


def train_subset(split: HeldOutSplit, fraction: float) -> HeldOutSplit:
    """The split with only a seeded ``fraction`` of its training documents (test halves kept).

    The documents are the first ⌈fraction · n_train⌉ of one permutation seeded by the split's
    seed, so smaller fractions are subsets of larger ones (nested), and they keep corpus order.
    Used by the crossover study to vary training tokens per φ parameter with the same held-out
    documents and evaluator.  ``fraction`` = 1 returns ``split`` itself.

    Raises
    ------
    ValueError
        ``fraction`` not a number in (0, 1] (named ``train_fraction``).
    """
    fraction = check_fraction(fraction, "train_fraction", include_one=True)
    if fraction == 1:
        return split
    n = split.train.shape[0]
    order = np.random.default_rng([split.seed, _SUBSET_SALT]).permutation(n)
    keep = np.sort(order[:max(1, int(np.ceil(fraction * n)))])
    return HeldOutSplit(train=split.train[keep], test_observed=split.test_observed,
                        test_heldout=split.test_heldout, train_docs=split.train_docs[keep],
                        test_docs=split.test_docs, corpus=split.corpus, seed=split.seed,
                        test_fraction=split.test_fraction, vocab_sha256=split.vocab_sha256,
                        **_rows_of(split, keep))


@dataclass(kw_only=True)
class ValidationSplit(HeldOutSplit):
    """Validation documents carved out of a split's training documents (:func:`validation_split`).

    A :class:`HeldOutSplit` whose ``train`` is the remaining training documents and whose
    ``test_observed`` / ``test_heldout`` are the validation documents' halves, so the one
    evaluator scores on it; ``test_docs`` are the validation documents' rows in the source
    corpus; ``seed`` and ``test_fraction`` are the validation's (its fraction is of the
    training documents).  ``parent_sha256`` is the parent split's checksum, hashed into this
    split's own :meth:`checksum`.  Derived in memory, never saved (:meth:`save` refuses).
    """

    parent_sha256: str

    def _provenance(self) -> str:
        return f"{super()._provenance()}|validation of {self.parent_sha256}"

    def save(self, path):
        raise TypeError("a validation split is not saved: derive it again with "
                        "validation_split(load_split(path), fraction, seed)")


def validation_split(split: HeldOutSplit, fraction: float = 0.1,
                     seed: int | None = None) -> ValidationSplit:
    """Carve a seeded ``fraction`` of ``split``'s training documents as validation documents.

    The validation documents are halved per count exactly as test documents are
    (:func:`make_split`'s halving); the other training documents stay training documents in
    corpus order.  ``split``'s test documents never enter the result, and ``split`` is not
    changed.

    Parameters
    ----------
    split : HeldOutSplit (``n_train`` ≥ 2 training documents)
    fraction : float in (0, 1)
        Share of the training documents for validation (rounded, at least 1, at most
        ``n_train`` - 1).
    seed : int ≥ 0 or None
        Seeds the choice and the halves (NumPy PCG64, salted apart from the split's own
        stream); None = the split's seed.  The same (split, fraction, seed) gives the same
        validation split.

    Returns a :class:`ValidationSplit`: its own checksum, its parent's in ``parent_sha256``.

    Raises
    ------
    ValueError
        ``fraction`` not a number in (0, 1) (named ``validation_fraction``), ``seed`` not a
        non-negative integer (``validation_seed``), or fewer than 2 training documents.
    """
    fraction = check_fraction(fraction, "validation_fraction")
    seed = check_seed(split.seed if seed is None else seed, "validation_seed")
    n_train = split.train.shape[0]
    if n_train < 2:
        raise ValueError(f"need at least 2 training documents to carve validation documents, "
                         f"got {n_train}")
    rng = np.random.default_rng([int(seed), _VALIDATION_SALT])
    n_val = min(max(int(round(fraction * n_train)), 1), n_train - 1)
    val = np.sort(rng.choice(n_train, size=n_val, replace=False))
    keep = np.ones(n_train, dtype=bool)
    keep[val] = False
    observed, heldout = _halve(split.train[val], rng)
    return ValidationSplit(
        train=split.train[keep], test_observed=observed, test_heldout=heldout,
        train_docs=np.asarray(split.train_docs[keep], dtype=np.int64),
        test_docs=np.asarray(split.train_docs[val], dtype=np.int64), corpus=split.corpus,
        seed=int(seed), test_fraction=float(fraction), vocab_sha256=split.vocab_sha256,
        parent_sha256=split.checksum(), **_rows_of(split, keep))
