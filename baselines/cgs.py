"""Collapsed Gibbs sampling (Griffiths & Steyvers 2004) with tomotopy.

Fixed symmetric α, β (hyper-parameter optimisation off), ``threads`` workers
(default 1: single-threaded, ParallelScheme.NONE), trained in chunks so that
φ_kw = (n_kw + β) / (n_k + W β) over the full vocabulary can be exported at
chosen iterations.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from . import Checkpoint, Stopwatch

__all__ = ["CHECKPOINTS", "fit_cgs", "checkpoints_upto"]

#: Iterations at which φ is exported by default (1-2-5 steps up to 2000).
CHECKPOINTS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000)


def checkpoints_upto(budget: int) -> list[int]:
    """The default checkpoints not beyond ``budget``, plus ``budget`` itself."""
    pts = [c for c in CHECKPOINTS if c < budget]
    return pts + [budget]


def fit_cgs(X: sp.csr_matrix, *, n_topics: int, doc_topic_prior: float, topic_word_prior: float,
            random_state: int, iterations: int = 1000, checkpoints: list[int] | None = None,
            threads: int = 1, checkpoint: Checkpoint | None = None) -> np.ndarray:
    """Train tomotopy's LDAModel on count matrix X; returns the final φ (K × W, float64).

    Parameters
    ----------
    X : csr_matrix (n_docs, n_words), integer counts
    n_topics, doc_topic_prior, topic_word_prior : K, α, β (fixed)
    random_state : int, tomotopy seed
    iterations : int, total Gibbs sweeps
    checkpoints : iterations at which ``checkpoint`` is called (default: 1-2-5 steps)
    threads : int, tomotopy workers (1 = ParallelScheme.NONE, deterministic)

    Raises
    ------
    ValueError
        iterations < 1 or a document-less X.
    """
    import tomotopy as tp

    if iterations < 1:
        raise ValueError(f"iterations must be >= 1, got {iterations}")
    X = sp.csr_matrix(X)
    n_words = X.shape[1]
    model = tp.LDAModel(k=n_topics, alpha=doc_topic_prior, eta=topic_word_prior,
                        seed=int(random_state) % (2**31), tw=tp.TermWeight.ONE)
    model.optim_interval = 0  # keep α, β fixed (tomotopy optimises α every 10 iterations by default)
    words = np.arange(n_words).astype(str)
    added = 0
    for d in range(X.shape[0]):
        row = slice(X.indptr[d], X.indptr[d + 1])
        tokens = np.repeat(words[X.indices[row]], X.data[row].astype(np.int64))
        if tokens.size:
            model.add_doc(tokens.tolist())
            added += 1
    if added == 0:
        raise ValueError("X holds no tokens")
    parallel = tp.ParallelScheme.NONE if threads == 1 else tp.ParallelScheme.DEFAULT
    points = sorted(set(checkpoints or checkpoints_upto(iterations)))
    n_tokens = float(X.sum())

    watch = Stopwatch()
    model.train(0, workers=threads, parallel=parallel)  # random initial assignment
    vocab_ids = np.array([int(v) for v in model.used_vocabs])
    done = 0
    phi = None
    for target in points:
        if target > iterations:
            break
        model.train(target - done, workers=threads, parallel=parallel)
        done = target
        seconds = watch.elapsed()
        with watch.pause():
            counts = np.zeros((n_topics, n_words))
            for k in range(n_topics):
                raw = np.asarray(model.get_topic_word_dist(k, normalize=False), dtype=np.float64)
                counts[k, vocab_ids] = raw - topic_word_prior  # tomotopy adds η to n_kw
            counts = np.maximum(counts, 0.0)
            phi = (counts + topic_word_prior) / (counts.sum(axis=1, keepdims=True)
                                                 + n_words * topic_word_prior)
            if checkpoint is not None:
                checkpoint(phi, {"pass": done, "iteration": done, "samples_per_word": float(done),
                                 "train_seconds": seconds, "tokens_seen": done * n_tokens,
                                 "native_score": float(model.ll_per_word)})
    return phi
