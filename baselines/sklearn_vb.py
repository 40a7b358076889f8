"""Variational Bayes for LDA with scikit-learn's LatentDirichletAllocation: online
(Hoffman, Blei, Bach 2010) and batch (Blei, Ng, Jordan 2003); the source is
``sklearn/decomposition/_lda.py``.  A second VB implementation beside gensim's
(:mod:`baselines.vb`), run at the same α, β, K.

- online: one pass = one ``partial_fit`` over all documents, i.e. ⌈D / batch_size⌉ online
  M-steps on minibatches of ``batch_size`` documents in corpus order (default
  :func:`same.data.protocol.paper_batch_size`, the paper's 1/20 of the documents), each with
  ρ_t = (τ0 + t)^−κ, t = 1, 2, ... counted over minibatches across passes, and
  ``total_samples`` = D; κ = ``learning_decay``, τ0 = ``learning_offset`` with
  scikit-learn's defaults 0.7 and 10 (not gensim's 0.5 and 1);
- batch: one full E-step over all documents and λ = β + sufficient statistics per pass.
  scikit-learn's batch ``fit`` cannot be continued (it re-initialises λ on every call and
  has no ``warm_start``), so a pass is one ``partial_fit`` with a single minibatch of all D
  documents and κ = 0: ρ = 1 and the online update λ ← 0·λ + 1·(β + (D/D)·stats) is the
  batch M-step bit for bit (a test checks it against ``fit(max_iter=passes)``).  Only the
  public ``partial_fit`` is used, never the private ``_em_step``.

Both use fixed symmetric α (``doc_topic_prior``) and β (``topic_word_prior``); scikit-learn
accepts them only in (0, 1].  The E-step runs at most ``max_doc_update_iter`` iterations per
document (scikit-learn's default 100; gensim's is 50) and stops early at scikit-learn's
``mean_change_tol`` 1e-3; perplexity evaluation is off (``evaluate_every=-1``); arithmetic is
float64 (X is converted once).  ``threads`` is scikit-learn's ``n_jobs`` (joblib workers
over documents in the E-step; default 1, deterministic; more workers each restart the same
random stream, so φ differs from one worker's).  φ is the row-normalised λ
(``components_``) over the full vocabulary, exported after every pass.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from same.data.protocol import paper_batch_size

from . import Checkpoint, Stopwatch, drain, number_in, positive_int

__all__ = ["iter_sklearn", "fit_sklearn", "check_sklearn_params", "SKLEARN_DECAY",
           "SKLEARN_OFFSET", "SKLEARN_SEED_MAX"]

#: scikit-learn's defaults for κ (``learning_decay``) and τ0 (``learning_offset``).
SKLEARN_DECAY = 0.7
SKLEARN_OFFSET = 10.0
#: scikit-learn's largest seed: an int seeds numpy's RandomState (0..2**32 - 1).  Seeds are
#: passed whole; beyond this (or negative, or a bool) they are refused.
SKLEARN_SEED_MAX = 2**32 - 1
#: Online-only settings: refused in batch mode, where ρ = 1 and one minibatch is all documents.
_ONLINE_ONLY = ("batch_size", "learning_decay", "learning_offset")


def check_sklearn_params(params: dict, seed=None, *, mode: str | None = None,
                         doc_topic_prior=None, topic_word_prior=None) -> None:
    """Check the scikit-learn VB settings a run spec gives (``batch_size``, ``learning_decay``,
    ``learning_offset``, ``max_doc_update_iter``, ``threads``; other keys are checked by the
    spec) and, when given, the seed, the mode and α, β.  The one check, used by
    :func:`iter_sklearn` (and meant for :meth:`same.experiments.spec.RunSpec.validate`).

    ``batch_size`` None or a positive integer (documents per minibatch); ``learning_decay``
    (κ) in [0, 1] and ``learning_offset`` (τ0) in [1, ∞), scikit-learn's ranges;
    ``max_doc_update_iter`` and ``threads`` positive integers; ``seed`` an integer in
    0..:data:`SKLEARN_SEED_MAX`; in ``mode`` "batch" none of ``batch_size``,
    ``learning_decay``, ``learning_offset`` (they would have no effect); α and β in (0, 1].
    A value None counts as not given.

    Raises
    ------
    ValueError
        Naming the parameter and the value, e.g. ``seed 4294967296 is outside scikit-learn's
        seed range 0..4294967295 (numpy RandomState)``, ``learning_decay must be a number in
        [0, 1] (κ, the step size's decay), got 1.5``, ``learning_decay has no effect in batch
        mode (ρ = 1, one minibatch of all documents), got 0.7``.
    """
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, Integral)
                             or not 0 <= seed <= SKLEARN_SEED_MAX):
        raise ValueError(f"seed {seed!r} is outside scikit-learn's seed range "
                         f"0..{SKLEARN_SEED_MAX} (numpy RandomState)")
    given = {k: v for k, v in params.items() if v is not None}
    if mode == "batch" and (online := [k for k in _ONLINE_ONLY if k in given]):
        raise ValueError(f"{online[0]} has no effect in batch mode (ρ = 1, one minibatch of "
                         f"all documents), got {given[online[0]]!r}")
    if "batch_size" in given:
        positive_int("batch_size", given["batch_size"], "documents per minibatch")
    if "learning_decay" in given:
        number_in("learning_decay", given["learning_decay"], 0.0, 1.0, "κ, the step size's decay")
    if "learning_offset" in given:
        number_in("learning_offset", given["learning_offset"], 1.0, float("inf"),
                "τ0, the step size's offset")
    if "max_doc_update_iter" in given:
        positive_int("max_doc_update_iter", given["max_doc_update_iter"],
                     "E-step iterations per document")
    if "threads" in given:
        positive_int("threads", given["threads"], "scikit-learn n_jobs")
    for name, prior in (("doc_topic_prior", doc_topic_prior),
                        ("topic_word_prior", topic_word_prior)):
        if prior is not None and (isinstance(prior, bool) or not isinstance(prior, Real)
                                  or not 0 < prior <= 1):
            raise ValueError(f"{name} must be in (0, 1] for scikit-learn's "
                             f"LatentDirichletAllocation, got {prior!r}")


def iter_sklearn(X: sp.csr_matrix, *, n_topics: int, doc_topic_prior: float,
                 topic_word_prior: float, random_state: int, passes: int = 20,
                 mode: str = "online", batch_size: int | None = None,
                 learning_decay: float | None = None, learning_offset: float | None = None,
                 max_doc_update_iter: int = 100, threads: int = 1):
    """Train scikit-learn's LatentDirichletAllocation (``mode`` "online" or "batch"), yielding
    (φ, info) after each pass.

    Parameters
    ----------
    X : csr_matrix (n_docs, n_words) counts
    n_topics, doc_topic_prior, topic_word_prior : K, α, β (fixed; α, β in (0, 1])
    random_state : int in 0..SKLEARN_SEED_MAX, scikit-learn's seed (used whole)
    passes : passes over the documents
    batch_size : documents per online minibatch; default ceil(D/20)
        (:func:`same.data.protocol.paper_batch_size`); online only
    learning_decay, learning_offset : κ, τ0 of ρ_t = (τ0 + t)^−κ; default 0.7, 10
        (:data:`SKLEARN_DECAY`, :data:`SKLEARN_OFFSET`); online only
    max_doc_update_iter : E-step iterations per document at most (scikit-learn default 100)
    threads : scikit-learn's ``n_jobs`` (1: deterministic)

    Yields
    ------
    (φ of shape (n_topics, n_words), float64, rows sum to 1; info dict: pass, iteration
    (= pass), samples_per_word (None), train_seconds (time between yields excluded),
    tokens_seen (passes × tokens of X), native_score (None: scikit-learn's bound costs another
    E-step over every document))

    Raises
    ------
    ValueError
        Unknown mode, passes < 1, or a bad setting, seed, α or β
        (:func:`check_sklearn_params`).
    """
    if mode not in ("online", "batch"):
        raise ValueError(f"mode must be 'online' or 'batch', got {mode!r}")
    positive_int("passes", passes)
    check_sklearn_params({"batch_size": batch_size, "learning_decay": learning_decay,
                          "learning_offset": learning_offset,
                          "max_doc_update_iter": max_doc_update_iter, "threads": threads},
                         random_state, mode=mode, doc_topic_prior=doc_topic_prior,
                         topic_word_prior=topic_word_prior)
    from same.data.count_matrix import validate_counts  # the input gate, before any C code

    X = sp.csr_matrix(validate_counts(X, "X", require_tokens=False),
                      dtype=np.float64)  # once, not per partial_fit call
    model = _estimator(X.shape[0], n_topics, doc_topic_prior, topic_word_prior, random_state,
                       mode, batch_size, learning_decay, learning_offset, max_doc_update_iter,
                       threads)
    n_tokens = float(X.sum())
    watch = Stopwatch()  # construction (no data: no training) is not timed
    for p in range(1, passes + 1):
        model.partial_fit(X)  # λ and the random stream carry over between calls
        seconds = watch.elapsed()
        with watch.pause():
            phi = np.array(model.components_, dtype=np.float64)
            phi /= phi.sum(axis=1, keepdims=True)
            yield phi, {"pass": p, "iteration": p, "samples_per_word": None,
                        "train_seconds": seconds, "tokens_seen": p * n_tokens,
                        "native_score": None}


def _estimator(n_docs, n_topics, doc_topic_prior, topic_word_prior, random_state, mode,
               batch_size, learning_decay, learning_offset, max_doc_update_iter, threads):
    """The LatentDirichletAllocation :func:`iter_sklearn` drives, one pass per partial_fit."""
    from sklearn.decomposition import LatentDirichletAllocation

    online = mode == "online"
    return LatentDirichletAllocation(
        n_components=n_topics, doc_topic_prior=doc_topic_prior,
        topic_word_prior=topic_word_prior, learning_method=mode,
        learning_decay=(SKLEARN_DECAY if learning_decay is None else learning_decay)
        if online else 0.0,  # batch: ρ = (τ0 + t)^0 = 1
        learning_offset=SKLEARN_OFFSET if learning_offset is None else learning_offset,
        batch_size=(paper_batch_size(n_docs) if batch_size is None else int(batch_size))
        if online else n_docs,
        total_samples=n_docs, evaluate_every=-1, max_doc_update_iter=max_doc_update_iter,
        n_jobs=threads, random_state=int(random_state))


def fit_sklearn(X: sp.csr_matrix, *, checkpoint: Checkpoint | None = None,
                **kwargs) -> np.ndarray:
    """:func:`iter_sklearn` to the end, calling ``checkpoint(φ, info)`` at each pass; returns
    the last φ."""
    return drain(iter_sklearn(X, **kwargs), checkpoint)
