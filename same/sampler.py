"""``SameLDA``: the SAME Gibbs LDA sampler as a scikit-learn estimator (paper Algorithm 3).

The estimator is a loop over the pure functions of :mod:`same.algorithm` (paper Algorithm 3
with BIDMach's details); its parameters (:mod:`same.params`) are the single source of their
defaults and valid values (the workflow schema and the runner are checked against them).

References: Zhao, Jiang, Canny, "SAME but Different" (arXiv 1409.5402), Alg. 3;
BIDMach ``models/LDAgibbs.scala``, ``updaters/IncNorm.scala``, ``Samplers.cu``.
"""

from __future__ import annotations

import time
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    TransformerMixin,
)
from sklearn.utils.validation import check_is_fitted, check_random_state

from . import algorithm
from .algorithm import SAMPLERS, StepSettings
from .backend import DeviceBatches, doc_topic_host, doc_topic_store, get_xp, to_backend, to_numpy
from .counts import check_count_bound, check_counts, doc_totals, validate_counts, word_totals
from .inference import FoldInMixin
from .kernels import raise_if_not_finite
from .memory import check_fit_memory
from .params import PARAMETER_CONSTRAINTS, m_at_step, minibatch_ranges, step_settings

__all__ = ["SameLDA", "SAMPLERS", "validate_counts"]

#: (backend, sampler, keep_doc_topic) whose kernels this process has compiled already
_WARMED: set = set()
class SameLDA(FoldInMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """SAME (State Augmentation for Marginal Estimation) Gibbs sampler for LDA.

    Parameters
    ----------
    n_topics : int, default=256
        K, the number of topics (paper experiments: 256).
    n_samples : float, default=100.0
        m, SAME replicas per latent variable (inverse temperature); may be < 1.
    doc_topic_prior : float, default=0.1
        α, symmetric Dirichlet prior on θ (BIDMach Nov 2014 default).
    topic_word_prior : float, default=0.1
        β, symmetric Dirichlet prior on φ.
    batch_size : int, float or None, default=None
        Documents per minibatch: an int is a count, a float in (0, 1] a fraction of the D
        training documents (ceil(fraction · D)); None = the paper's minibatch
        (:func:`same.params.paper_batch_size`).
    n_inner : int, default=5
        Sampling sweeps per minibatch (BIDMach ``uiter``).
    max_iter : int, default=20
        Passes over the data in :meth:`fit`.
    learning_rate : {"bidmach", "paper"}, default="bidmach"
        ρ_t: BIDMach IncNorm (0.99, then (t_first/t)^learning_power) or the paper's
        (learning_offset + t)^−learning_decay.
    learning_decay, learning_offset : float, default=0.7, 10.0
        γ and τ0 of the "paper" schedule (scikit-learn's names).
    learning_power : float, default=0.3
        Exponent of the "bidmach" schedule (IncNorm ``power``).
    prior_scale : {"bidmach", "paper", "paper_unscaled"}, default="bidmach"
        s in θ = T/s + α, φ̂ = P/s + β' (:func:`same.params.step_settings`).  "bidmach": s = 1,
        β' = β (LDAgibbs.scala, behind the paper's figures; priors at 1/m strength).  "paper":
        s = m (eq. 7), β' = β · N_t / N (minibatch tokens over corpus tokens: eq. 7 adds β once
        to corpus-level counts).  "paper_unscaled": s = m, β' = β (≈ N/N_t times too strong;
        kept only to show that artefact).
    m_schedule : {"constant", "linear", "log", "invlinear"}, default="constant"
        Annealing of m over the minibatch steps (:func:`same.schedules.n_samples_at`).
    schedule_steps : int or None, default=None
        t_max of a non-constant ``m_schedule`` under :meth:`partial_fit`
        (:meth:`fit` uses max_iter × minibatches).
    keep_doc_topic : bool, default=True
        Carry each training document's θ across passes (θ = 1 in the first pass), as
        BIDMach's LDAgibbs did in 2014 (``putBack = 1``; the reset, ``putBack = -1``, came in
        2016) and as Algorithm 3 keeps θ global.  False restarts θ from 1 every minibatch.
    shuffle : bool, default=False
        Visit the training documents in one seeded random order (drawn once per fit, the
        same in every pass) instead of corpus order.  Default False: BIDMach took
        minibatches in corpus order, and the paper does not mention shuffling.
    sampler : {"nonzero", "summed"}, default="nonzero"
        "nonzero": Algorithm 3 as written, one Poisson draw per (nonzero, topic).
        "summed": draws T and P directly, equal in distribution at a cost independent
        of m (:func:`same.algorithm.sample_minibatch`).
    backend : {"numpy", "cupy"}, default="numpy"
    random_state : int, RandomState instance or None, default=None
        Seeds φ's initialisation and every sampling call's counter-based stream; an int
        is used as the seed itself.
    verbose : int, default=0
        Progress bar over passes (tqdm) when > 0.

    Attributes
    ----------
    topic_word_ : ndarray of shape (n_topics, n_features_in_), float64, rows sum to 1
        φ, on the host.  ``components_`` is the same array.
    n_features_in_ : int
        W, the vocabulary size.
    feature_names_in_ : ndarray of str
        Set when X has string column names.
    n_iter_ : int
        Passes done by :meth:`fit`.
    n_batch_iter_ : int
        Minibatch steps done (fit and partial_fit).
    n_docs_seen_, n_tokens_seen_ : int
    samples_per_word_ : float
        Σ_t m_t · tokens_t / corpus tokens (= passes × m for constant m).
    train_seconds_ : float
        Training wall time in seconds (minibatch staging included, everything done
        between yields of :meth:`iter_fit` excluded; synchronised on GPU).  JIT compilation
        is excluded: it happens in a warm-up step on a tiny block before the clock starts.
    compile_seconds_ : float
        Seconds of that warm-up in this fit (0 when this process had compiled the kernels
        for the same sampler and backend already; numba's on-disk cache makes it short).
    row_total_ : ndarray of shape (n_topics,)
        IncNorm's moving average of φ̂'s row totals.
    doc_topic_ : ndarray of shape (n_docs, n_topics) or None
        Unnormalised θ per training document when ``keep_doc_topic``, on the host (read-only;
        on the NumPy backend a view of the sampler's θ, which is file-backed above 1 GiB; on
        CuPy copied from the GPU when read, never between passes).
    random_state_ : int
        The seed used.
    """

    _parameter_constraints: dict = PARAMETER_CONSTRAINTS

    def __init__(self, n_topics=256, *, n_samples=100.0, doc_topic_prior=0.1,
                 topic_word_prior=0.1, batch_size=None, n_inner=5, max_iter=20,
                 learning_rate="bidmach", learning_decay=0.7, learning_offset=10.0,
                 learning_power=0.3, prior_scale="bidmach", m_schedule="constant",
                 schedule_steps=None, keep_doc_topic=True, shuffle=False, sampler="nonzero",
                 backend="numpy", random_state=None, verbose=0):
        self.n_topics = n_topics
        self.n_samples = n_samples
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.batch_size = batch_size
        self.n_inner = n_inner
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.learning_decay = learning_decay
        self.learning_offset = learning_offset
        self.learning_power = learning_power
        self.prior_scale = prior_scale
        self.m_schedule = m_schedule
        self.schedule_steps = schedule_steps
        self.keep_doc_topic = keep_doc_topic
        self.shuffle = shuffle
        self.sampler = sampler
        self.backend = backend
        self.random_state = random_state
        self.verbose = verbose

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        return tags

    @property
    def doc_topic_(self):
        if "_state" not in self.__dict__:
            raise AttributeError("doc_topic_ is set by fit")
        return doc_topic_host(self.__dict__.get("_doc_topic"), self.__dict__.get("_order"))

    @property
    def components_(self) -> np.ndarray:
        """φ (same array as ``topic_word_``); scikit-learn's name for the learned factors."""
        check_is_fitted(self)
        return self.topic_word_

    @property
    def _n_features_out(self) -> int:
        return self.topic_word_.shape[0]

    # ------------------------------------------------------------------ settings
    def _settings(self, m_t: float, tokens: float) -> StepSettings:
        return step_settings(self, m_t, tokens, self._corpus_tokens)

    def batches(self, n_docs: int) -> list[tuple[int, int]]:
        """Document ranges [start, stop) of the minibatches of a pass over ``n_docs`` documents."""
        return minibatch_ranges(self.batch_size, n_docs)

    # ------------------------------------------------------------------ training
    def _begin(self, X: sp.csr_matrix, corpus_tokens: float | None, keep: bool) -> None:
        """Fresh state (memory checked first): φ from X's word counts, θ if ``keep``, counters 0."""
        self._validate_params()
        xp = get_xp(self.backend)  # RuntimeError for cupy without a GPU
        check_fit_memory("same", int(self.n_topics), X.shape[1], X.shape[0] if keep else 0, xp)
        rs = self.random_state
        self.random_state_ = (int(rs) if isinstance(rs, Integral) else
                              int(check_random_state(rs).randint(np.iinfo(np.int32).max)))
        word_counts = word_totals(X)
        self._state = algorithm.init_state(word_counts, int(self.n_topics), self.random_state_, xp)
        self._doc_topic = doc_topic_store(X.shape[0], int(self.n_topics), xp) if keep else None
        self._corpus_tokens = corpus_tokens
        self._order = None
        self.n_iter_ = self.n_batch_iter_ = self.n_docs_seen_ = self.n_tokens_seen_ = 0
        self.samples_per_word_ = self.train_seconds_ = 0.0
        self.compile_seconds_ = self._warm_up(xp)

    def _warm_up(self, xp) -> float:
        """One untimed step on a tiny block, so JIT compilation never counts as training."""
        if (key := (self.backend, self.sampler, bool(self.keep_doc_topic))) in _WARMED:
            return 0.0
        t0 = time.perf_counter()
        algorithm.warm_up(xp, int(self.n_topics), self._settings(1.0, 7.0), self.keep_doc_topic)
        _WARMED.add(key)
        return time.perf_counter() - t0

    def _train_step(self, block, m_t: float, tokens: float, doc_range=None) -> dict:
        """One timed minibatch step on a backend block; returns the step's info."""
        xp = get_xp(self.backend)
        state = algorithm.state_on(self._state, xp)  # moves it only after unpickling
        theta = None
        if self._doc_topic is not None and doc_range is not None:
            theta = xp.ascontiguousarray(self._doc_topic[doc_range[0]:doc_range[1]])
        t0 = time.perf_counter()
        state, theta, rho = algorithm.minibatch_step(state, block, self._settings(m_t, tokens),
                                                     theta)
        if xp is not np:
            xp.cuda.get_current_stream().synchronize()
            raise_if_not_finite()  # the step's deferred checks, read after its sync
        self.train_seconds_ += time.perf_counter() - t0
        if theta is not None and doc_range is not None and self._doc_topic is not None:
            self._doc_topic[doc_range[0]:doc_range[1]] = theta
        self._state = state
        self.n_batch_iter_ = state.n_steps
        self.n_docs_seen_ = state.n_docs_seen
        self.n_tokens_seen_ += int(tokens)
        if self._corpus_tokens:
            self.samples_per_word_ += m_t * tokens / self._corpus_tokens
        return {"step": self.n_batch_iter_, "docs_seen": self.n_docs_seen_,
                "tokens_seen": self.n_tokens_seen_, "samples_per_word": self.samples_per_word_,
                "train_seconds": self.train_seconds_, "n_samples": m_t, "learning_rate": rho,
                "compile_seconds": self.compile_seconds_}

    def _export(self) -> None:
        """Host copies of the fitted state (outside the timed region)."""
        phi = to_numpy(self._state.topic_word_t).T.astype(np.float64)
        self.topic_word_ = phi / phi.sum(axis=1, keepdims=True)
        self.row_total_ = to_numpy(self._state.row_total).astype(np.float64)

    def iter_fit(self, X, y=None, *, every: str = "pass"):
        """Train like :meth:`fit`, yielding after every pass (or minibatch step).

        At each yield ``topic_word_`` is current and the dict yielded holds: pass (passes
        completed), step, docs_seen, tokens_seen, samples_per_word, train_seconds, n_samples
        (m_t), learning_rate (ρ_t), end_of_pass.  Time spent by the consumer between yields
        is not training time.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_docs, n_words), non-negative counts
        every : {"pass", "step"}

        Raises
        ------
        ValueError
            Bad X (negative, NaN/inf, empty, no tokens) or parameters, naming them.
        RuntimeError
            backend="cupy" without CuPy or a GPU.
        """
        if every not in ("pass", "step"):
            raise ValueError(f"every must be 'pass' or 'step', got {every!r}")
        X = check_counts(self, X, reset=True)
        self._begin(X, float(X.data.sum()), bool(self.keep_doc_topic))
        if self.shuffle:  # one seeded order for the whole fit (a reordered copy of X)
            self._order = np.random.default_rng(self.random_state_ ^ 0x5EED).permutation(
                X.shape[0])
            X = X[self._order]
        bounds = self.batches(X.shape[0])
        check_count_bound(X, bounds, float(self.n_samples), self.m_schedule)
        t_max = int(self.max_iter) * len(bounds)
        tokens = np.add.reduceat(doc_totals(X), [a for a, _ in bounds])
        passes = range(int(self.max_iter))
        if self.verbose:
            from tqdm.auto import tqdm

            passes = tqdm(passes, desc="SAME passes", unit="pass")
        for p in passes:
            # on a GPU the next minibatch is copied from pinned host memory meanwhile
            feed = iter(DeviceBatches(X, bounds, get_xp(self.backend), np.float32))
            for i in range(len(bounds)):
                t0 = time.perf_counter()
                a, b, block = next(feed)
                self.train_seconds_ += time.perf_counter() - t0  # staging is training
                info = self._train_step(block, m_at_step(self, t_max), float(tokens[i]), (a, b))
                end = i == len(bounds) - 1
                if end:
                    self.n_iter_ = p + 1
                if end or every == "step":
                    self._export()
                    yield {"pass": self.n_iter_, **info, "end_of_pass": end}

    def fit(self, X, y=None):
        """Train on X for ``max_iter`` passes of minibatches in document order.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_docs, n_words), non-negative counts
        y : ignored

        Returns
        -------
        self
        """
        for _ in self.iter_fit(X):
            pass
        return self

    def partial_fit(self, X, y=None, *, corpus_tokens: float | None = None):
        """One minibatch step on X (the first call initialises φ from X's word counts).

        ``corpus_tokens`` (the whole stream's token count) makes ``samples_per_word_``
        meaningful.  ``keep_doc_topic`` does not apply (stream documents have no identity).

        Raises
        ------
        ValueError
            Bad X, X with another vocabulary size than the first call's, or a non-constant
            ``m_schedule`` without ``schedule_steps``.
        """
        first = not hasattr(self, "_state")
        X = check_counts(self, X, reset=first)
        if corpus_tokens:  # before the first call's warm-up, whose settings may need it
            self._corpus_tokens = float(corpus_tokens)
        if first:
            self._begin(X, getattr(self, "_corpus_tokens", None), keep=False)
        xp = get_xp(self.backend)
        block = to_backend(X.astype(np.float32), xp)
        self._train_step(block, m_at_step(self, self.schedule_steps), float(X.data.sum()))
        self._export()
        return self

    # ------------------------------------------------------------------ pickling
    def __getstate__(self):
        """Backend arrays go to the host, so a fitted model pickles and deep-copies anywhere."""
        state = super().__getstate__()
        if "_state" in state:
            state["_state"] = algorithm.state_on(state["_state"], np)
        if state.get("_doc_topic") is not None:
            state["_doc_topic"] = to_numpy(state["_doc_topic"])
        return state

