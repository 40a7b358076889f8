"""The order documents are stored and trained in, and a check that it is not grouped by label.

SAME and online VB learn from minibatches in the order the training documents are stored;
CGS and batch VB do not depend on it.  A folder corpus read in ``load_files`` order (or 20
Newsgroups, two such folders) is grouped by category, so each minibatch is about one
category.  Hence:

- a text corpus is stored in one seeded random order unless its spec says ``shuffle:
  false`` (:func:`shuffled_indices`: exactly scikit-learn's ``load_files(shuffle=True,
  random_state=seed)`` permutation); what was done is recorded in ``Corpus.meta["order"]``
  (:func:`order_record`) and in the split (:func:`split_order`: ``"file"``,
  ``"shuffled:<seed>"``, ``"file:on_purpose"``, ``"unknown"``);
- :func:`grouped_run` tells an order grouped by label: some run of L ≥ 3 documents of label
  c with ``n · p_c^L ≤ 1e-6`` (n documents, p_c the share of c): by the union bound over
  the n places a run may start, a uniformly random order has such a run with probability
  at most 1e-6;
- a run's ``document_order`` (:data:`DOCUMENT_ORDERS`, :func:`training_permutation`) picks
  the training order: as stored, one shuffle seeded by the run's seed, or file order; "other"
  (the order-fragility twins) is always that seeded shuffle, never file order, which may be
  the grouped order the stored shuffle exists to avoid (20 Newsgroups: one newsgroup per
  minibatch).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["GROUPED_BOUND", "MIN_GROUPED_RUN", "DOCUMENT_ORDERS", "LabelRun", "shuffled_indices",
           "spec_order", "order_record", "split_order", "order_description", "label_runs",
           "longest_run", "grouped_run", "resolve_document_order", "training_permutation"]

#: An order is grouped when a uniformly random one would have one of its runs with at most
#: this probability (union bound), and the run is at least :data:`MIN_GROUPED_RUN` long.
GROUPED_BOUND = 1e-6
MIN_GROUPED_RUN = 3
#: A run's ``document_order``: as the split stores them, one permutation seeded by the run's
#: seed, file order (the split's ``train_file_positions``), or "other": the seeded shuffle
#: whatever the stored order (a second, independent shuffle of a shuffled corpus).
DOCUMENT_ORDERS = ("stored", "shuffled", "file", "other")
#: Salt of the permutation of ``document_order: "shuffled"`` (apart from every other stream).
_ORDER_SALT = 0x0D0C5


def shuffled_indices(n: int, seed: int) -> np.ndarray:
    """The permutation ``sklearn.datasets.load_files(shuffle=True, random_state=seed)``
    applies to ``n`` documents (int64): row i of the stored corpus is document
    ``indices[i]`` in file order."""
    from sklearn.utils import check_random_state

    indices = np.arange(n, dtype=np.int64)
    check_random_state(seed).shuffle(indices)
    return indices


def spec_order(spec: dict) -> tuple[bool, int, bool]:
    """(shuffle, seed, on purpose) of a corpus spec: ``shuffle`` defaults to true for raw
    text and 20 Newsgroups, false for ``uci`` (the file's order, as the paper's code read
    it); ``shuffle_seed`` to 0; on purpose when the spec says ``shuffle: false``."""
    shuffle = spec.get("shuffle", spec.get("source") != "uci")
    return bool(shuffle), int(spec.get("shuffle_seed", 0)), spec.get("shuffle") is False


def order_record(shuffled: bool, seed: int | None = None, on_purpose: bool = False) -> dict:
    """``Corpus.meta["order"]``: whether the stored order is one seeded shuffle, its seed,
    and whether file order was asked for explicitly."""
    return {"shuffled": bool(shuffled), "seed": int(seed) if shuffled else None,
            "on_purpose": bool(on_purpose) and not shuffled}


def split_order(record: dict | None) -> str:
    """A split's ``order`` from a corpus's ``meta["order"]`` (None: ``"unknown"``)."""
    if not isinstance(record, dict):
        return "unknown"
    if record.get("shuffled"):
        return f"shuffled:{record.get('seed')}"
    return "file:on_purpose" if record.get("on_purpose") else "file"


def order_description(what) -> str:
    """A caption's phrase for the order documents are stored in: "file order", "one seeded
    shuffle (seed 0)", "file order (shuffle: false)", "file order (UCI)" (a registry name
    such as "kos", or a uci spec left at its default), "order not recorded".

    ``what``: a corpus spec (dict), a :class:`same.data.corpus.Corpus`, a held-out split
    (its ``order``), a split's order string, or a UCI registry name.
    """
    from .registry import REGISTRY

    if isinstance(what, str):
        if what in REGISTRY:
            return "file order (UCI)"
        order = what
    elif isinstance(what, dict):
        shuffle, seed, on_purpose = spec_order(what)
        if not shuffle and not on_purpose and what.get("source") == "uci":
            return "file order (UCI)"
        order = split_order(order_record(shuffle, seed, on_purpose))
    elif hasattr(what, "order") and isinstance(what.order, str):
        order = what.order
    else:
        order = split_order(getattr(what, "meta", {}).get("order"))
    if order.startswith("shuffled:"):
        return f"one seeded shuffle (seed {order.split(':', 1)[1]})"
    return {"file": "file order", "file:on_purpose": "file order (shuffle: false)"}.get(
        order, "order not recorded")


@dataclass(frozen=True)
class LabelRun:
    """``length`` documents of ``label`` in a row from position ``start``; ``bound`` is
    n · p^length, the union bound on a random order holding such a run."""

    label: str
    length: int
    start: int
    bound: float

    @property
    def grouped(self) -> bool:
        return self.length >= MIN_GROUPED_RUN and self.bound <= GROUPED_BOUND

    def describe(self, names=None) -> str:
        """``30 documents of 'a' in a row, at positions 0–29`` (``names``: the label names
        when the labels are codes into them)."""
        label = names[int(self.label)] if names is not None else self.label
        return (f"{self.length} documents of {label!r} in a row, at positions "
                f"{self.start}–{self.start + self.length - 1}")


def _runs(labels):
    """(label values, each run's label code, start, length, log of its bound n · p^L)."""
    labels = np.asarray(labels).ravel()
    n = labels.size
    values, codes, counts = np.unique(labels, return_inverse=True, return_counts=True)
    codes = codes.ravel()
    starts = np.concatenate([[0], np.flatnonzero(codes[1:] != codes[:-1]) + 1]).astype(np.int64)
    lengths = np.diff(np.concatenate([starts, [n]]))
    run_codes = codes[starts]
    log_p = np.log(counts[run_codes] / n)
    return values, run_codes, starts, lengths, math.log(n) + lengths * log_p


def _run(runs, i: int) -> LabelRun:
    values, codes, starts, lengths, log_bound = runs
    return LabelRun(str(values[codes[i]]), int(lengths[i]), int(starts[i]),
                    math.exp(max(float(log_bound[i]), -745.0)))


def label_runs(labels) -> list[LabelRun]:
    """Every maximal run of one label in ``labels`` (a sequence of labels or codes), in
    order, each with its union bound n · p^L."""
    if np.asarray(labels).size == 0:
        return []
    runs = _runs(labels)
    return [_run(runs, i) for i in range(runs[2].size)]


def longest_run(labels) -> LabelRun | None:
    """The longest run of one label (the first of equal ones); None for no documents."""
    if np.asarray(labels).size == 0:
        return None
    runs = _runs(labels)
    return _run(runs, int(np.argmax(runs[3])))


def grouped_run(labels) -> LabelRun | None:
    """The longest run that makes the order grouped by label (see the module docstring), or
    None when the order is not grouped (a single label never is)."""
    if np.asarray(labels).size == 0:
        return None
    runs = _runs(labels)
    lengths, log_bound = runs[3], runs[4]
    flagged = np.flatnonzero((lengths >= MIN_GROUPED_RUN)
                             & (log_bound <= math.log(GROUPED_BOUND)))
    if flagged.size == 0:
        return None
    best = flagged[np.lexsort((log_bound[flagged], -lengths[flagged]))[0]]
    return _run(runs, int(best))


def resolve_document_order(document_order: str) -> str:
    """"stored", "shuffled" or "file": a run's ``document_order`` with "other" resolved to
    "shuffled" whatever order the split stores (its ``order``).  The other order is one
    shuffle seeded by the run's seed: for a corpus stored in one seeded shuffle a second,
    independent one (a uniform permutation composed with any fixed one is uniform), never
    the corpus's file order, which a folder corpus holds grouped by category."""
    if document_order not in DOCUMENT_ORDERS:
        raise ValueError(f"document_order must be one of {', '.join(DOCUMENT_ORDERS)}, got "
                         f"{document_order!r}")
    return "shuffled" if document_order == "other" else document_order


def training_permutation(resolved: str, n: int, seed: int,
                         file_positions: np.ndarray | None = None) -> np.ndarray | None:
    """The rows of the training documents in the order ``resolved`` says (None: as
    stored): one permutation from ``numpy.random.default_rng([seed, salt])``, or the stored
    rows sorted by their position in file order (none recorded: the stored order is file
    order)."""
    if resolved == "shuffled":
        return np.random.default_rng([int(seed), _ORDER_SALT]).permutation(n)
    if resolved == "file" and file_positions is not None:
        perm = np.argsort(np.asarray(file_positions), kind="stable")
        return None if np.array_equal(perm, np.arange(n)) else perm
    return None
