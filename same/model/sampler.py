"""``SameLDA``: the SAME Gibbs LDA sampler as a scikit-learn estimator (paper Algorithm 3).

The estimator is a loop over the pure functions of :mod:`same.model.algorithm` (paper Algorithm 3
with BIDMach's details); its parameters (:mod:`same.model.params`) are the single source of their
defaults and valid values (the workflow schema and the runner are checked against them).

References: Zhao, Jiang, Canny, "SAME but Different" (arXiv 1409.5402), Alg. 3;
BIDMach ``models/LDAgibbs.scala``, ``updaters/IncNorm.scala``, ``Samplers.cu``.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, _fit_context
from sklearn.utils.validation import check_is_fitted

from same.data.count_matrix import check_count_bound, check_counts, doc_totals, validate_counts

from .algorithm import SAMPLERS
from .backend import DeviceBatches, get_xp, to_backend
from .inference import FoldInMixin
from .params import (
    ITER_FIT_CONSTRAINTS,
    PARAMETER_CONSTRAINTS,
    PARTIAL_FIT_CONSTRAINTS,
    check_method_params,
    m_at_step,
    minibatch_ranges,
    param,
)
from .training import TrainingMixin

__all__ = ["SameLDA", "SAMPLERS", "validate_counts"]

class SameLDA(TrainingMixin, FoldInMixin, BaseEstimator):
    """SAME (State Augmentation for Marginal Estimation) Gibbs sampler for LDA.

    Parameters
    ----------
    n_components : int, default=256
        K, the number of topics (paper experiments: 256; scikit-learn's name).
    n_copies : float, default=100.0
        m, the copies of the latent state SAME samples (paper §3: "m copies of the original
        system"; BIDMach's ``nsamps``), an inverse temperature; may be < 1.
    doc_topic_prior : float, default=0.1
        α, symmetric Dirichlet prior on θ (BIDMach Nov 2014 default).
    topic_word_prior : float, default=0.1
        β, symmetric Dirichlet prior on φ.
    batch_size : int, float or None, default=None
        Documents per minibatch: an int is a count, a float in (0, 1] a fraction of the D
        training documents (ceil(fraction · D)); None = the paper's minibatch
        (:func:`same.data.protocol.paper_batch_size`).
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
        s in θ = T/s + α, φ̂ = P/s + β' (:func:`same.model.params.step_settings`).  "bidmach": s = 1,
        β' = β (LDAgibbs.scala, behind the paper's figures; priors at 1/m strength).  "paper":
        s = m (eq. 7), β' = β · N_t / N (minibatch tokens over corpus tokens: eq. 7 adds β once
        to corpus-level counts).  "paper_unscaled": s = m, β' = β (≈ N/N_t times too strong;
        kept only to show that artefact).
    m_schedule : {"constant", "linear", "log", "invlinear"}, default="constant"
        Annealing of m over the minibatch steps (:func:`same.model.schedules.n_samples_at`).
    schedule_steps : int or None, default=None
        t_max of a non-constant ``m_schedule`` under :meth:`partial_fit`
        (:meth:`fit` uses max_iter × minibatches).
    total_samples : int or None, default=None
        Documents in the whole stream (scikit-learn's name and meaning), used only by
        :meth:`partial_fit`: a minibatch's share of the corpus is its documents over this
        (:meth:`fit` knows the corpus: its share is in tokens).
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
        of m (:func:`same.model.algorithm.sample_minibatch`).
    backend : {"numpy", "cupy"}, default="numpy"
    n_jobs : int or None, default=None
        CPU threads of the sampling kernels during fit/partial_fit (-1: all usable CPUs;
        None: numba's current setting).
    random_state : int, RandomState instance or None, default=None
        Seeds φ's initialisation and every sampling call's counter-based stream; an int
        is used as the seed itself.
    verbose : int, default=0
        Progress bar over passes (tqdm) when > 0.
    n_topics, n_samples : deprecated
        The old names of ``n_components`` and ``n_copies``, accepted until 0.2
        (FutureWarning).

    Attributes
    ----------
    topic_word_ : ndarray of shape (n_components, n_features_in_), float64, rows sum to 1
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
    row_total_ : ndarray of shape (n_components,)
        IncNorm's moving average of φ̂'s row totals.
    doc_topic_ : ndarray of shape (n_docs, n_components) or None
        Unnormalised θ per training document when ``keep_doc_topic``, on the host (read-only;
        on the NumPy backend a view of the sampler's θ, which is file-backed above 1 GiB; on
        CuPy copied from the GPU when read, never between passes).
    random_state_ : int
        The seed used.
    """

    _parameter_constraints: dict = PARAMETER_CONSTRAINTS

    def __init__(self, n_components=256, *, n_copies=100.0, doc_topic_prior=0.1,
                 topic_word_prior=0.1, batch_size=None, n_inner=5, max_iter=20,
                 learning_rate="bidmach", learning_decay=0.7, learning_offset=10.0,
                 learning_power=0.3, prior_scale="bidmach", m_schedule="constant",
                 schedule_steps=None, total_samples=None, keep_doc_topic=True, shuffle=False,
                 sampler="nonzero", backend="numpy", n_jobs=None, random_state=None, verbose=0,
                 n_topics="deprecated", n_samples="deprecated"):
        self.n_components = n_components
        self.n_copies = n_copies
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
        self.total_samples = total_samples
        self.keep_doc_topic = keep_doc_topic
        self.shuffle = shuffle
        self.sampler = sampler
        self.backend = backend
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.n_topics = n_topics
        self.n_samples = n_samples

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        return tags

    @property
    def components_(self) -> np.ndarray:
        """φ (same array as ``topic_word_``); scikit-learn's name for the learned factors."""
        check_is_fitted(self)
        return self.topic_word_

    @property
    def _n_features_out(self) -> int:
        return self.topic_word_.shape[0]

    def batches(self, n_docs: int) -> list[tuple[int, int]]:
        """Document ranges [start, stop) of the minibatches of a pass over ``n_docs`` documents."""
        return minibatch_ranges(self.batch_size, n_docs)

    def iter_fit(self, X, y=None, *, every: str = "pass"):
        """Train like :meth:`fit`, yielding after every pass (or minibatch step).

        At each yield ``topic_word_`` is current and the dict yielded holds: pass (passes
        completed), step, docs_seen, tokens_seen, samples_per_word, train_seconds, n_copies
        (m_t), learning_rate (ρ_t), end_of_pass.  Time spent by the consumer between yields
        is not training time.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_docs, n_words), non-negative counts
        every : {"pass", "step"}

        Raises
        ------
        ValueError
            X fails the input gate (:func:`same.data.count_matrix.validate_counts`: malformed sparse
            structure, an index out of range, NaN/inf, negative or complex counts, empty, no
            tokens; one line naming X), or bad parameters, naming them; K·α or W·β (X's
            words) above 2^127, beyond float32 totals
            (:func:`same.model.heldout_inputs.check_prior_totals`), naming the prior.
        RuntimeError
            backend="cupy" without CuPy or a GPU.
        """
        check_method_params(self, "iter_fit", ITER_FIT_CONSTRAINTS, every=every)
        X = check_counts(self, X, reset=True)
        self._begin(X, bool(self.keep_doc_topic))
        corpus_tokens = float(X.data.sum())
        if self.shuffle:  # one seeded order for the whole fit (a reordered copy of X)
            self._order = np.random.default_rng(self.random_state_ ^ 0x5EED).permutation(
                X.shape[0])
            X = X[self._order]
        bounds = self.batches(X.shape[0])
        check_count_bound(X, bounds, float(param(self, "n_copies")), self.m_schedule)
        t_max = int(self.max_iter) * len(bounds)
        tokens = np.add.reduceat(doc_totals(X), [a for a, _ in bounds])
        passes = range(int(self.max_iter))
        if self.verbose:
            from tqdm.auto import tqdm

            passes = tqdm(passes, desc="SAME passes", unit="pass")
        with self._threads():
            for p in passes:
                # on a GPU the next minibatch is copied from pinned host memory meanwhile
                feed = iter(DeviceBatches(X, bounds, get_xp(self.backend), np.float32))
                for i in range(len(bounds)):
                    t0 = time.perf_counter()
                    a, b, block = next(feed)
                    self.train_seconds_ += time.perf_counter() - t0  # staging is training
                    share = (float(tokens[i]), corpus_tokens)
                    info = self._train_step(block, m_at_step(self, t_max), float(tokens[i]),
                                            share, (a, b))
                    end = i == len(bounds) - 1
                    if end:
                        self.n_iter_ = p + 1
                    if end or every == "step":
                        self._export()
                        yield {"pass": self.n_iter_, **info, "end_of_pass": end}

    @_fit_context(prefer_skip_nested_validation=True)
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

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, *, corpus_tokens: float | None = None):
        """One minibatch step on X (the first call initialises φ from X's word counts).

        ``total_samples`` (documents in the stream) gives each minibatch its share of the
        corpus: ``samples_per_word_`` and prior_scale="paper"'s β.  ``keep_doc_topic`` does
        not apply (stream documents have no identity).  ``corpus_tokens`` (the stream's
        tokens: a token share) is deprecated for total_samples and removed in 0.2.

        Raises
        ------
        ValueError
            X fails the input gate (:func:`same.data.count_matrix.validate_counts`, one line naming X),
            has another vocabulary size than the first call's, or counts too large for m
            (:func:`same.data.count_matrix.check_count_bound`, as in fit); a non-constant
            ``m_schedule`` without ``schedule_steps``, prior_scale="paper" without a share;
            K·α or W·β above 2^127 (:func:`same.model.heldout_inputs.check_prior_totals`);
            ``corpus_tokens`` not a positive finite number or None (scikit-learn's
            ``InvalidParameterError``, naming it), or fewer than the minibatch's tokens,
            before anything is trained.
        """
        check_method_params(self, "partial_fit", PARTIAL_FIT_CONSTRAINTS,
                            corpus_tokens=corpus_tokens)
        first = not hasattr(self, "_state")
        X = check_counts(self, X, reset=first)
        if not first:  # the first call's are checked by _begin; a set_params since, here
            self._check_priors(X.shape[1])
        check_count_bound(X, [(0, X.shape[0])], float(param(self, "n_copies")), self.m_schedule)
        if corpus_tokens is not None and float(corpus_tokens) < float(X.data.sum()):
            # the minibatch's share of the stream would pass 1 (at 2e-308, overflow β's scale)
            raise ValueError("The 'corpus_tokens' parameter of SameLDA.partial_fit must be a "
                             "float in the range (0.0, inf) or None. It counts the stream's "
                             f"tokens, so at least this minibatch's {float(X.data.sum()):,g}; "
                             f"got {corpus_tokens!r}.")
        if corpus_tokens is not None:
            warnings.warn("partial_fit's corpus_tokens is deprecated in 0.1 and will be removed "
                          "in 0.2: give SameLDA(total_samples=<documents in the stream>)",
                          FutureWarning, stacklevel=3)
            self._stream_tokens = float(corpus_tokens)
        if first:
            self._begin(X, keep=False)
        if getattr(self, "_stream_tokens", None):
            share = (float(X.data.sum()), self._stream_tokens)
        else:
            share = None if self.total_samples is None else (float(X.shape[0]),
                                                                 float(self.total_samples))
        block = to_backend(X.astype(np.float32), get_xp(self.backend))
        with self._threads():
            self._train_step(block, m_at_step(self, self.schedule_steps), float(X.data.sum()),
                             share)
        self._export()
        return self

