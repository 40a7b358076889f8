"""Collapsed Gibbs sampling (Griffiths & Steyvers 2004) with tomotopy.

Fixed symmetric α, β (hyper-parameter optimisation off), ``threads`` workers
(default 1: single-threaded, ParallelScheme.NONE), trained in chunks so that
φ_kw = (n_kw + β) / (n_k + W β) over the full vocabulary can be exported at
chosen iterations.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from same.data.protocol import CHECKPOINTS

from . import Checkpoint, Stopwatch, drain, positive_int

__all__ = ["CHECKPOINTS", "iter_cgs", "fit_cgs", "checkpoints_upto", "check_cgs_params",
           "SEED_MAX"]

#: tomotopy's largest seed (a signed 64-bit integer; it uses all 64 bits: seeds 0 and 2**32
#: train differently).  Seeds are passed whole; beyond this they are refused.
SEED_MAX = 2**63 - 1



def checkpoints_upto(budget: int) -> list[int]:
    """The default checkpoints not beyond ``budget``, plus ``budget`` itself."""
    pts = [c for c in CHECKPOINTS if c < budget]
    return pts + [budget]


def _model_with_docs(X: sp.csr_matrix, n_topics: int, doc_topic_prior: float,
                     topic_word_prior: float, random_state: int):
    """A tomotopy LDAModel (fixed α, β) holding X's documents as tokens named by word id."""
    import tomotopy as tp

    model = tp.LDAModel(k=n_topics, alpha=doc_topic_prior, eta=topic_word_prior,
                        seed=int(random_state), tw=tp.TermWeight.ONE)
    model.optim_interval = 0  # keep α, β fixed (tomotopy optimises α every 10 iterations by default)
    words = np.arange(X.shape[1]).astype(str)
    added = 0
    for d in range(X.shape[0]):
        row = slice(X.indptr[d], X.indptr[d + 1])
        tokens = np.repeat(words[X.indices[row]], X.data[row].astype(np.int64))
        if tokens.size:
            model.add_doc(tokens.tolist())
            added += 1
    if added == 0:
        raise ValueError("X holds no tokens")
    return model


def _topic_word(model, vocab_ids: np.ndarray, n_words: int, topic_word_prior: float):
    """φ_kw = (n_kw + β) / (n_k + W β) over the full vocabulary."""
    counts = np.zeros((model.k, n_words))
    for k in range(model.k):
        raw = np.asarray(model.get_topic_word_dist(k, normalize=False), dtype=np.float64)
        counts[k, vocab_ids] = raw - topic_word_prior  # tomotopy adds η to n_kw
    counts = np.maximum(counts, 0.0)
    return (counts + topic_word_prior) / (counts.sum(axis=1, keepdims=True)
                                          + n_words * topic_word_prior)


def check_cgs_params(params: dict, seed) -> None:
    """Check a CGS run's seed and the settings its spec gives (``iterations``,
    ``checkpoints``, ``threads``; other keys are checked by the spec).  The one check, used by
    :func:`iter_cgs` and by :meth:`same.experiments.spec.RunSpec.validate`.

    Raises
    ------
    ValueError
        A seed outside tomotopy's range 0..:data:`SEED_MAX` (it would otherwise be changed,
        not used whole), a parameter that is not a positive integer (list), or a checkpoint
        beyond ``iterations`` (it would never be reached), naming it.
    """
    import numbers

    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not (
            0 <= seed <= SEED_MAX):
        raise ValueError(f"seed {seed!r} is outside tomotopy's seed range 0..{SEED_MAX} "
                         "(2**63 - 1)")
    if "iterations" in params:
        positive_int("iterations", params["iterations"], "Gibbs sweeps")
    if "threads" in params:
        positive_int("threads", params["threads"], "tomotopy workers")
    if params.get("checkpoints") is not None:
        pts = params["checkpoints"]
        if isinstance(pts, (str, bytes)) or not hasattr(pts, "__iter__"):
            raise ValueError(f"checkpoints must be a list of positive integers, got {pts!r}")
        for p in pts:
            positive_int("each of checkpoints", p)
        n_iter = params.get("iterations")
        if n_iter is not None and (beyond := [p for p in pts if p > n_iter]):
            raise ValueError(f"checkpoints must lie in 1..iterations={n_iter} (Gibbs sweeps), "
                             f"got {beyond[0]!r}")


def iter_cgs(X: sp.csr_matrix, *, n_topics: int, doc_topic_prior: float, topic_word_prior: float,
             random_state: int, iterations: int = 1000, checkpoints: list[int] | None = None,
             threads: int = 1):
    """Train tomotopy's LDAModel on count matrix X, yielding (φ, info) at each checkpoint.

    Parameters
    ----------
    X : csr_matrix (n_docs, n_words), integer counts
    n_topics, doc_topic_prior, topic_word_prior : K, α, β (fixed)
    random_state : int in 0..SEED_MAX, tomotopy seed (used whole)
    iterations : int, total Gibbs sweeps
    checkpoints : iterations at which φ is yielded, each at most ``iterations``, which is
        always the last (default: 1-2-5 steps and ``iterations``)
    threads : int, tomotopy workers (1 = ParallelScheme.NONE, deterministic)

    Yields
    ------
    (φ of shape (n_topics, n_words), float64, rows sum to 1; info dict: pass, iteration,
    samples_per_word, train_seconds (time between yields excluded), tokens_seen,
    native_score = tomotopy's ll per word)

    Raises
    ------
    ValueError
        A bad seed or setting (:func:`check_cgs_params`) or an X without tokens.
    """
    import tomotopy as tp

    check_cgs_params({"iterations": iterations, "checkpoints": checkpoints, "threads": threads},
                     random_state)
    from same.data.count_matrix import validate_counts  # the input gate, before any C code

    X = validate_counts(X, "X", require_tokens=False)
    model = _model_with_docs(X, n_topics, doc_topic_prior, topic_word_prior, random_state)
    parallel = tp.ParallelScheme.NONE if threads == 1 else tp.ParallelScheme.DEFAULT
    # training always runs the full budget: φ after ``iterations`` sweeps is the last yield
    points = (sorted(set(checkpoints) | {iterations}) if checkpoints
              else checkpoints_upto(iterations))
    n_tokens = float(X.sum())

    watch = Stopwatch()
    model.train(0, workers=threads, parallel=parallel)  # random initial assignment
    vocab_ids = np.array([int(v) for v in model.used_vocabs])
    done = 0
    for target in points:
        model.train(target - done, workers=threads, parallel=parallel)
        done = target
        seconds = watch.elapsed()
        with watch.pause():
            phi = _topic_word(model, vocab_ids, X.shape[1], topic_word_prior)
            yield phi, {"pass": done, "iteration": done, "samples_per_word": float(done),
                        "train_seconds": seconds, "tokens_seen": done * n_tokens,
                        "native_score": float(model.ll_per_word)}


def fit_cgs(X: sp.csr_matrix, *, checkpoint: Checkpoint | None = None, **kwargs) -> np.ndarray:
    """:func:`iter_cgs` to the end, calling ``checkpoint(φ, info)`` at each checkpoint; returns the
    last φ."""
    return drain(iter_cgs(X, **kwargs), checkpoint)
