"""SAME Gibbs LDA: paper Algorithm 3 with the BIDMach details (SPEC §2).

One array-generic implementation (``xp`` = NumPy or CuPy); the two hot steps,
SDDMM and Poisson sample-and-accumulate, are fused kernels in
:mod:`same.kernels`.

Per minibatch t (``batch_size`` documents, taken in corpus order):

1. θ_dk = 1 for the batch's documents (or the carried θ, ``keep_doc_topic``);
2. ``n_inner`` times: μ = SDDMM(θ, φ); z_dwk ~ Poisson(m_t c_dw θ_dk φ_kw / μ_dw);
   T_dk = Σ_w z; P_kw = Σ_d z; θ = T / s + α, with s = m_t (``prior_scale="paper"``,
   paper eq. 7) or s = 1 (``"bidmach"``, BIDMach LDAgibbs.scala);
3. φ̂ = P / s + β from the last sweep, each row divided by a moving average of
   its row total (BIDMach IncNorm), φ = (1 − ρ_t) φ + ρ_t φ̂, rows renormalised.

References: Zhao, Jiang, Canny, "SAME but Different" (arXiv 1409.5402), Alg. 3;
BIDMach ``models/LDAgibbs.scala``, ``updaters/IncNorm.scala``, ``Samplers.cu``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from . import kernels
from .backend import BACKENDS, DeviceBatches, get_xp, sparse_module, to_backend, to_numpy
from .schedules import LEARNING_RATES, M_SCHEDULES, learning_rate_at, n_samples_at

__all__ = ["SameLDA", "validate_counts", "SAMPLERS"]

SAMPLERS = ("nonzero", "summed")

_MASK64 = (1 << 64) - 1


def _mix64(z: int) -> int:
    """SplitMix64 finaliser on Python ints (derives per-call stream keys)."""
    z &= _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def validate_counts(X, name: str = "X") -> sp.csr_matrix:
    """Check a document-word count matrix and return it as CSR (sorted indices).

    Raises
    ------
    ValueError
        ``X`` is not a SciPy/CuPy sparse matrix, is empty, or holds counts that
        are negative, NaN or infinite.
    """
    if not sp.issparse(X):
        try:
            import cupyx.scipy.sparse as csp

            if csp.issparse(X):
                X = X.get()
        except ImportError:
            pass
    if not sp.issparse(X):
        raise ValueError(f"{name} must be a scipy.sparse matrix of counts (documents × words), "
                        f"got {type(X).__name__}")
    X = sp.csr_matrix(X)
    if X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"{name} is empty (shape {X.shape})")
    if X.nnz:
        if not np.all(np.isfinite(X.data)):
            raise ValueError(f"{name} contains NaN or infinite counts")
        if X.data.min() < 0:
            raise ValueError(f"{name} contains negative counts")
    X.sum_duplicates()
    X.eliminate_zeros()
    X.sort_indices()
    return X


class SameLDA:
    """SAME (State Augmentation for Marginal Estimation) Gibbs sampler for LDA.

    Parameters
    ----------
    n_topics : int, default 256
        K, the number of topics (paper experiments: 256).
    n_samples : float, default 100.0
        m, SAME replicas per latent variable (inverse temperature); may be < 1.
    doc_topic_prior : float, default 0.1
        α, symmetric Dirichlet prior on θ (BIDMach Nov 2014 default).
    topic_word_prior : float, default 0.1
        β, symmetric Dirichlet prior on φ.
    batch_size : int or None, default None
        Documents per minibatch; None = ceil(D / 20), the paper's 1/20 of the corpus.
    n_inner : int, default 5
        Sampling sweeps per minibatch (BIDMach ``uiter``).
    max_iter : int, default 20
        Passes over the data in :meth:`fit`.
    learning_rate : {"bidmach", "paper"}, default "bidmach"
        ρ_t schedule: BIDMach IncNorm (0.99, then (t_first/t)^learning_power) or
        the paper's (learning_offset + t)^−learning_decay.
    learning_decay, learning_offset : float, default 0.7, 10.0
        γ and τ0 of the "paper" schedule (scikit-learn's defaults and names).
    learning_power : float, default 0.3
        Exponent of the "bidmach" schedule (IncNorm ``power``).
    prior_scale : {"paper", "bidmach"}, default "bidmach"
        s in θ = T/s + α, φ̂ = P/s + β: s = m (paper eq. 7) or s = 1 (BIDMach's
        LDAgibbs.scala, the code that produced the paper's experiments; there the
        priors act at 1/m strength).  Note that β is added to each minibatch's
        counts, not to corpus-level counts, so with small minibatches s = m
        smooths φ̂ strongly.
    m_schedule : {"constant", "linear", "log", "invlinear"}, default "constant"
        Annealing of m over the run's minibatch steps (:func:`same.schedules.n_samples_at`).
    schedule_steps : int or None
        t_max for a non-constant ``m_schedule`` under :meth:`partial_fit`
        (:meth:`fit` sets it to max_iter × batches).
    keep_doc_topic : bool, default False
        Carry each document's θ across passes instead of restarting from 1.
    sampler : {"nonzero", "summed"}, default "nonzero"
        "nonzero": Algorithm 3 as written, one Poisson draw per (nonzero, topic),
        accumulated into T and P.  "summed": draw the sums directly, which is
        equal in distribution: given θ and φ the z_dwk are independent, so
        T_dk ~ Poisson(m θ_dk Σ_w c_dw φ_kw / μ_dw) and P_kw ~ Poisson(m φ_kw
        Σ_d c_dw θ_dk / μ_dw), each computed with one sparse × dense product.
        Sweeps before the last need only T, the last only P (θ is discarded
        after the minibatch), so the output φ has exactly the distribution of
        Algorithm 3 at a cost independent of m.  With ``keep_doc_topic`` the
        last sweep needs T and P jointly and uses the per-nonzero kernel.
    backend : {"numpy", "cupy"}, default "numpy"
    random_state : int or None
        Seeds φ's initialisation and every sampling call's random stream.
    callback : callable(model, info) or None
        Called after every minibatch with a dict: pass, step, docs_seen,
        tokens_seen, samples_per_word, train_seconds, n_samples (m_t),
        learning_rate (ρ_t), end_of_pass.  Its own time is excluded from
        ``train_seconds``.
    verbose : bool, default False
        Progress bar over passes (tqdm).

    Attributes
    ----------
    topic_word_ : ndarray of shape (n_topics, n_words), float64, rows sum to 1
        φ on the host (the backend copy is ``topic_word_device_``).
    n_passes_, n_steps_ : int
    n_docs_seen_, n_tokens_seen_ : int
    samples_per_word_ : float
        Σ_t m_t · tokens_t / corpus tokens (= passes × m for constant m).
    train_seconds_ : float
        Training wall time, excluding callbacks (synchronised on GPU).
    row_total_ : ndarray of shape (n_topics,)
        IncNorm's moving average of the row totals of φ̂.
    doc_topic_ : ndarray (n_docs, n_topics) or None
        Unnormalised θ per training document when ``keep_doc_topic``.
    random_state_ : int
        The seed used (drawn when ``random_state`` is None).
    """

    def __init__(self, n_topics: int = 256, n_samples: float = 100.0,
                 doc_topic_prior: float = 0.1, topic_word_prior: float = 0.1,
                 batch_size: int | None = None, n_inner: int = 5, max_iter: int = 20,
                 learning_rate: str = "bidmach", learning_decay: float = 0.7,
                 learning_offset: float = 10.0, learning_power: float = 0.3,
                 prior_scale: str = "bidmach", m_schedule: str = "constant",
                 schedule_steps: int | None = None, keep_doc_topic: bool = False,
                 sampler: str = "nonzero", backend: str = "numpy", random_state: int | None = None,
                 callback: Callable | None = None, verbose: bool = False):
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
        self.sampler = sampler
        self.backend = backend
        self.random_state = random_state
        self.callback = callback
        self.verbose = verbose

    # ------------------------------------------------------------------ parameters
    def get_params(self, deep: bool = True) -> dict:
        """Constructor parameters (scikit-learn convention)."""
        import inspect

        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {n: getattr(self, n) for n in names}

    def set_params(self, **params) -> SameLDA:
        valid = self.get_params()
        for k, v in params.items():
            if k not in valid:
                raise ValueError(f"invalid parameter {k!r} for SameLDA")
            setattr(self, k, v)
        return self

    def _validate_params(self) -> None:
        def positive(name, integer=False, allow_none=False):
            v = getattr(self, name)
            if v is None and allow_none:
                return
            kind = Integral if integer else Real
            if isinstance(v, bool) or not isinstance(v, kind) or not math.isfinite(v) or v <= 0:
                what = "a positive integer" if integer else "a positive finite number"
                raise ValueError(f"{name} must be {what}, got {v!r}")

        positive("n_topics", integer=True)
        positive("n_samples")
        positive("doc_topic_prior")
        positive("topic_word_prior")
        positive("batch_size", integer=True, allow_none=True)
        positive("n_inner", integer=True)
        positive("max_iter", integer=True)
        positive("learning_decay")
        positive("learning_power")
        positive("schedule_steps", integer=True, allow_none=True)
        if not (isinstance(self.learning_offset, Real) and self.learning_offset >= 0):
            raise ValueError(f"learning_offset must be >= 0, got {self.learning_offset!r}")
        if self.learning_rate not in LEARNING_RATES:
            raise ValueError(f"learning_rate must be one of {LEARNING_RATES}, "
                             f"got {self.learning_rate!r}")
        if self.prior_scale not in ("paper", "bidmach"):
            raise ValueError(f"prior_scale must be 'paper' or 'bidmach', got {self.prior_scale!r}")
        if self.m_schedule not in M_SCHEDULES:
            raise ValueError(f"m_schedule must be one of {M_SCHEDULES}, got {self.m_schedule!r}")
        if self.sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {SAMPLERS}, got {self.sampler!r}")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {self.backend!r}")
        if self.callback is not None and not callable(self.callback):
            raise ValueError("callback must be callable or None")

    # ------------------------------------------------------------------ state
    def _init_state(self, X: sp.csr_matrix, n_docs_total: int) -> None:
        self._validate_params()
        self._xp = get_xp(self.backend)  # RuntimeError for cupy without a GPU
        xp = self._xp
        if self.random_state is None:
            self.random_state_ = int(np.random.SeedSequence().entropy % (1 << 63))
        else:
            self.random_state_ = int(self.random_state)
        K, W = int(self.n_topics), X.shape[1]
        rng = np.random.default_rng(self.random_state_)
        # init φ: uniform random × (corpus word count + 1), rows normalised (BIDMach)
        word_counts = np.asarray(X.sum(axis=0)).ravel()
        phi = rng.random((K, W)) * (word_counts + 1.0)
        phi /= phi.sum(axis=1, keepdims=True)
        self._dtype = np.float32
        self.topic_word_device_ = to_backend(phi, xp, dtype=self._dtype)
        self.row_total_ = xp.ones(K, dtype=self._dtype)
        self._key = _mix64(self.random_state_ ^ 0x5A3E5A3E5A3E5A3E)
        self._calls = 0
        self.n_words_ = W
        self.n_steps_ = 0
        self.n_passes_ = 0
        self.n_docs_seen_ = 0
        self.n_tokens_seen_ = 0
        self.samples_per_word_ = 0.0
        self.train_seconds_ = 0.0
        self._first_docs = 0
        self._corpus_tokens = None
        self.doc_topic_ = (xp.ones((n_docs_total, K), dtype=self._dtype)
                           if self.keep_doc_topic else None)

    def _sync(self) -> None:
        if self._xp is not np:
            self._xp.cuda.get_current_stream().synchronize()

    @property
    def topic_word_(self) -> np.ndarray:
        """φ as a float64 NumPy array, rows exactly normalised."""
        phi = to_numpy(self.topic_word_device_).astype(np.float64)
        return phi / phi.sum(axis=1, keepdims=True)

    # ------------------------------------------------------------------ one minibatch
    def _step(self, block, m_t: float, doc_offset: int | None, tokens: float | None = None
              ) -> float:
        """Algorithm 3 on one CSR block (host, or already on the backend); returns ρ_t."""
        xp = self._xp
        K, dt = int(self.n_topics), self._dtype
        alpha, beta = float(self.doc_topic_prior), float(self.topic_word_prior)
        s = m_t if self.prior_scale == "paper" else 1.0
        n_docs = block.shape[0]

        on_device = xp is not np and not sp.issparse(block)
        dev = block if on_device else to_backend(block.astype(dt, copy=False), xp)
        indptr, indices, data = dev.indptr, dev.indices, dev.data
        phi_t = xp.ascontiguousarray(self.topic_word_device_.T)
        if self.keep_doc_topic and doc_offset is not None:
            theta = xp.ascontiguousarray(self.doc_topic_[doc_offset:doc_offset + n_docs])
        else:
            theta = xp.ones((n_docs, K), dtype=dt)
        mu = xp.empty(indices.shape[0], dtype=dt)
        T = xp.empty((n_docs, K), dtype=dt)
        P_t = xp.empty(phi_t.shape, dtype=dt)
        summed = self.sampler == "summed"
        if summed:
            csp = sparse_module(xp)
        for i in range(int(self.n_inner)):
            last = i == int(self.n_inner) - 1
            kernels.sddmm(indptr, indices, theta, phi_t, out=mu)
            self._calls += 1
            key = _mix64(self._key + self._calls * 0x9E3779B97F4A7C15)
            if summed and not (last and self.keep_doc_topic):
                ratio = csp.csr_matrix((data / xp.maximum(mu, dt(1e-30)), indices, indptr),
                                       shape=dev.shape)
                if last:  # P_kw ~ Poisson(m φ_kw Σ_d c_dw θ_dk / μ_dw); θ is not needed
                    lam = dt(m_t) * phi_t * (ratio.T @ theta)
                    kernels.poisson(xp.ascontiguousarray(lam, dtype=dt), key, out=P_t)
                    break
                lam = dt(m_t) * theta * (ratio @ phi_t)  # T_dk ~ Poisson(m θ_dk Σ_w c_dw φ_kw/μ_dw)
                kernels.poisson(xp.ascontiguousarray(lam, dtype=dt), key, out=T)
            else:
                kernels.sample_accumulate(indptr, indices, data, theta, phi_t, mu, m_t, key, T,
                                          P_t if last else None)
            theta = T / dt(s) + dt(alpha)
        if self.keep_doc_topic and doc_offset is not None:
            self.doc_topic_[doc_offset:doc_offset + n_docs] = theta

        # φ̂ = P/s + β, IncNorm: divide rows by a moving average of their totals, blend
        docs_seen = self.n_docs_seen_ + n_docs
        if self.n_steps_ == 0:
            self._first_docs = docs_seen
        rho = learning_rate_at(self.learning_rate, self.n_steps_, docs_seen, self._first_docs,
                               decay=self.learning_decay, offset=self.learning_offset,
                               power=self.learning_power)
        phi_hat = P_t.T / dt(s) + dt(beta)
        self.row_total_ = (1 - rho) * self.row_total_ + rho * phi_hat.sum(axis=1)
        phi_hat /= self.row_total_[:, None]
        phi = (1 - rho) * self.topic_word_device_ + rho * phi_hat
        phi /= phi.sum(axis=1, keepdims=True)
        self.topic_word_device_ = phi.astype(dt, copy=False)

        if tokens is None:
            tokens = float(block.data.sum())
        self.n_steps_ += 1
        self.n_docs_seen_ = docs_seen
        self.n_tokens_seen_ += int(tokens)
        if self._corpus_tokens:
            self.samples_per_word_ += m_t * tokens / self._corpus_tokens
        return rho

    # ------------------------------------------------------------------ public API
    def _batches(self, n_docs: int) -> list[tuple[int, int]]:
        size = self.batch_size or math.ceil(n_docs / 20)
        return [(a, min(a + size, n_docs)) for a in range(0, n_docs, size)]

    def _notify(self, info: dict) -> None:
        if self.callback is not None:
            self.callback(self, info)

    def fit(self, X, y=None) -> SameLDA:
        """Train on X for ``max_iter`` passes of minibatches (in document order).

        Parameters
        ----------
        X : scipy.sparse matrix of shape (n_docs, n_words), non-negative counts

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Bad X (see :func:`validate_counts`) or parameters (named).
        RuntimeError
            backend="cupy" without CuPy or a GPU.
        """
        X = validate_counts(X)
        self._init_state(X, X.shape[0])
        batches = self._batches(X.shape[0])
        t_max = int(self.max_iter) * len(batches)
        self._corpus_tokens = float(X.data.sum())
        passes = range(int(self.max_iter))
        if self.verbose:
            from tqdm.auto import tqdm

            passes = tqdm(passes, desc="SAME passes", unit="pass")
        tokens = np.add.reduceat(np.asarray(X.sum(axis=1)).ravel(), [a for a, _ in batches])
        for p in passes:
            # minibatches reach the backend through DeviceBatches: on a GPU the next one is
            # copied from pinned host memory while this one is processed
            feed = iter(DeviceBatches(X, batches, self._xp, self._dtype))
            for i in range(len(batches)):
                t0 = time.perf_counter()
                a, _, block = next(feed)
                self.train_seconds_ += time.perf_counter() - t0  # staging counts as training
                self._run_step(block, t_max, a, pass_index=p, end_of_pass=i == len(batches) - 1,
                               tokens=float(tokens[i]))
            self.n_passes_ = p + 1
        return self

    def _run_step(self, block, t_max: int | None, doc_offset: int | None, pass_index: int,
                  end_of_pass: bool, tokens: float | None = None) -> None:
        t = self.n_steps_ + 1
        if self.m_schedule == "constant":
            m_t = float(self.n_samples)
        else:
            if t_max is None:
                raise ValueError(f"m_schedule={self.m_schedule!r} needs schedule_steps "
                                 "(t_max) when training with partial_fit")
            m_t = n_samples_at(self.m_schedule, float(self.n_samples), min(t, t_max), t_max)
        t0 = time.perf_counter()
        rho = self._step(block, m_t, doc_offset, tokens)
        self._sync()
        self.train_seconds_ += time.perf_counter() - t0
        self._notify({"pass": pass_index + (1 if end_of_pass else 0), "pass_index": pass_index,
                      "step": self.n_steps_, "docs_seen": self.n_docs_seen_,
                      "tokens_seen": self.n_tokens_seen_,
                      "samples_per_word": self.samples_per_word_,
                      "train_seconds": self.train_seconds_, "n_samples": m_t,
                      "learning_rate": rho, "end_of_pass": end_of_pass})

    def partial_fit(self, X, y=None, *, corpus_tokens: float | None = None) -> SameLDA:
        """Update the model with one minibatch X, or with each CSR block of an iterable.

        The first call initialises φ from X's word counts.  ``corpus_tokens``
        (the whole stream's token count) makes ``samples_per_word_`` meaningful.
        ``keep_doc_topic`` does not apply (documents of a stream have no identity).
        """
        blocks: Iterable = [X] if sp.issparse(X) or not isinstance(X, Iterable) else X
        for block in blocks:
            block = validate_counts(block)
            if not hasattr(self, "topic_word_device_"):
                self._init_state(block, block.shape[0])
            elif block.shape[1] != self.n_words_:
                raise ValueError(f"X has {block.shape[1]} words, the model was initialised "
                                 f"with {self.n_words_}")
            if corpus_tokens:
                self._corpus_tokens = float(corpus_tokens)
            self._run_step(block, self.schedule_steps, None, pass_index=self.n_passes_,
                           end_of_pass=False)
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "topic_word_device_"):
            raise RuntimeError("this SameLDA instance is not fitted yet; call fit or partial_fit")

    def transform(self, X) -> np.ndarray:
        """θ̄ for documents X with φ fixed (shared evaluator's fold-in), rows sum to 1.

        Returns
        -------
        ndarray of shape (n_docs, n_topics), float64, on the host.
        """
        from .evaluate import fold_in

        self._check_fitted()
        X = validate_counts(X)
        phi = to_backend(self.topic_word_, self._xp, dtype=np.float64)
        return to_numpy(fold_in(phi, X, float(self.doc_topic_prior)))

    def score(self, X, heldout=None) -> float:
        """Held-out log-likelihood in nats/token (higher is better), by the shared evaluator.

        With ``heldout``: document completion (θ folded in on X, ``heldout`` scored).
        Without: BIDMach-style ll of X (θ fitted on the scored tokens).
        """
        from .evaluate import bidmach_loglik, heldout_loglik

        self._check_fitted()
        X = validate_counts(X)
        phi = to_backend(self.topic_word_, self._xp, dtype=np.float64)
        if heldout is None:
            return bidmach_loglik(phi, float(self.doc_topic_prior), X)
        return heldout_loglik(phi, float(self.doc_topic_prior), X,
                              validate_counts(heldout, "heldout"))
