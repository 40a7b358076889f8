"""The training state behind :class:`same.model.sampler.SameLDA`: a fresh state, the warm-up, one
timed minibatch step, the host export and pickling.  A mixin, so that the estimator's module
holds its parameters and public methods (fit, partial_fit, iter_fit) and this one the rest."""

from __future__ import annotations

import contextlib
import time
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_random_state

from same.data.count_matrix import word_totals

from . import algorithm
from .algorithm import StepSettings
from .backend import doc_topic_host, doc_topic_store, get_xp, to_numpy
from .fit_memory import check_fit_memory
from .heldout_inputs import check_prior_totals
from .kernels import deferred_checks
from .params import param, renamed_values, step_settings

__all__ = ["TrainingMixin"]

#: (backend, sampler, keep_doc_topic) whose kernels this process has compiled already
_WARMED: set = set()


class TrainingMixin:
    """SameLDA's state machinery (private methods; the estimator's parameters are read)."""

    @property
    def doc_topic_(self):
        if "_state" not in self.__dict__:
            raise AttributeError("doc_topic_ is set by fit")
        return doc_topic_host(self.__dict__.get("_doc_topic"), self.__dict__.get("_order"))

    def _settings(self, m_t: float, share) -> StepSettings:
        return step_settings(self, m_t, share)

    @contextlib.contextmanager
    def _threads(self):
        """numba's thread count set to ``n_jobs`` while training, restored after."""
        from .kernels.cpu import set_threads, usable_threads

        before = set_threads(None)
        if self.n_jobs is not None and self.backend == "numpy":
            set_threads(usable_threads(self.n_jobs))
        try:
            yield
        finally:
            set_threads(before)

    def _check_priors(self, n_words: int) -> None:
        """K·α and W·β within float32 (:func:`same.model.heldout_inputs.check_prior_totals`),
        before any state exists: both backends keep θ, μ and φ̂'s row totals in float32."""
        check_prior_totals(int(param(self, "n_components")), self.doc_topic_prior, n_words,
                           self.topic_word_prior)

    def _begin(self, X: sp.csr_matrix, keep: bool) -> None:
        """Fresh state (memory checked first): φ from X's word counts, θ if ``keep``, counters 0."""
        self._validate_params()
        self._renamed = renamed_values(self)  # FutureWarning for an old parameter name
        k = int(param(self, "n_components"))
        xp = get_xp(self.backend)  # RuntimeError for cupy without a GPU
        check_fit_memory("same", k, X.shape[1], X.shape[0] if keep else 0, xp)
        self._check_priors(X.shape[1])
        rs = self.random_state
        self.random_state_ = (int(rs) if isinstance(rs, Integral) else
                              int(check_random_state(rs).randint(np.iinfo(np.int32).max)))
        word_counts = word_totals(X)
        self._state = algorithm.init_state(word_counts, k, self.random_state_, xp)
        self._doc_topic = doc_topic_store(X.shape[0], k, xp) if keep else None
        self._order = None
        self.n_iter_ = self.n_batch_iter_ = self.n_docs_seen_ = self.n_tokens_seen_ = 0
        self.samples_per_word_ = self.train_seconds_ = 0.0
        self.compile_seconds_ = self._warm_up(xp)

    def _warm_up(self, xp) -> float:
        """One untimed step on a tiny block, so JIT compilation never counts as training."""
        if (key := (self.backend, self.sampler, bool(self.keep_doc_topic))) in _WARMED:
            return 0.0
        t0 = time.perf_counter()
        algorithm.warm_up(xp, int(param(self, "n_components")), self._settings(1.0, (1.0, 1.0)),
                          self.keep_doc_topic)
        _WARMED.add(key)
        return time.perf_counter() - t0

    def _train_step(self, block, m_t: float, tokens: float, share, doc_range=None) -> dict:
        """One timed minibatch step on a backend block of ``tokens`` tokens, ``share`` = (its
        amount, the corpus's) or None (:func:`same.model.params.step_settings`); returns its info."""
        xp = get_xp(self.backend)
        state = algorithm.state_on(self._state, xp)  # moves it only after unpickling
        theta = None
        if self._doc_topic is not None and doc_range is not None:
            theta = xp.ascontiguousarray(self._doc_topic[doc_range[0]:doc_range[1]])
        t0 = time.perf_counter()
        with deferred_checks() as checks:  # this step's own device checks, no one else's
            state, theta, rho = algorithm.minibatch_step(state, block,
                                                         self._settings(m_t, share), theta)
            if xp is not np:
                xp.cuda.get_current_stream().synchronize()
                checks.raise_if_not_finite()  # read after the step's sync
        self.train_seconds_ += time.perf_counter() - t0
        if theta is not None and doc_range is not None and self._doc_topic is not None:
            self._doc_topic[doc_range[0]:doc_range[1]] = theta
        self._state = state
        self.n_batch_iter_ = state.n_steps
        self.n_docs_seen_ = state.n_docs_seen
        self.n_tokens_seen_ += int(tokens)
        if share is not None:
            self.samples_per_word_ += m_t * share[0] / share[1]
        return {"step": self.n_batch_iter_, "docs_seen": self.n_docs_seen_,
                "tokens_seen": self.n_tokens_seen_, "samples_per_word": self.samples_per_word_,
                "train_seconds": self.train_seconds_, "n_copies": m_t, "learning_rate": rho,
                "compile_seconds": self.compile_seconds_}

    def _export(self) -> None:
        """Host copies of the fitted state (outside the timed region)."""
        phi = to_numpy(self._state.topic_word_t).T.astype(np.float64)
        self.topic_word_ = phi / phi.sum(axis=1, keepdims=True)
        self.row_total_ = to_numpy(self._state.row_total).astype(np.float64)

    def __getstate__(self):
        """Backend arrays go to the host, so a fitted model pickles and deep-copies anywhere."""
        state = super().__getstate__()
        if "_state" in state:
            state["_state"] = algorithm.state_on(state["_state"], np)
        if state.get("_doc_topic") is not None:
            state["_doc_topic"] = to_numpy(state["_doc_topic"])
        return state

