"""Paper Algorithm 3 as plain functions over an explicit state (Zhao, Jiang, Canny 2014; BIDMach ``LDAgibbs.scala``).

The estimator (:class:`same.model.sampler.SameLDA`) is a loop over these; tests and
benchmarks call them directly.  Everything is array-generic: the arrays of a
:class:`SameState` live on one backend (NumPy or CuPy) and the hot steps go
through :mod:`same.model.kernels`.

One minibatch t (``minibatch_step``):

1. θ_dk = 1 for the batch's documents, or a carried θ (BIDMach ``putBack``);
2. ``n_inner`` sweeps (``sample_minibatch``): μ = SDDMM(θ, φ),
   z_dwk ~ Poisson(m_t c_dw θ_dk φ_kw / μ_dw), T = Σ_w z, P = Σ_d z,
   θ = T / s + α (Alg. 3 lines 3–11);
3. φ̂ = P / s + β from the last sweep, IncNorm (``incnorm_update``): rows divided by a
   moving average of their totals, φ = (1 − ρ_t) φ + ρ_t φ̂, rows renormalised
   (BIDMach ``updaters/IncNorm.scala``).

Random streams are counter-based: every sampling call gets its own 64-bit key,
derived from the state's base key and a call counter (``next_key``), so results
do not depend on the thread count (BIDMach reseeded every call with the same
seed, reusing one stream; we do not).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from . import kernels
from .backend import array_module, to_backend
from .kernels import elements

__all__ = ["SAMPLERS", "SameState", "StepSettings", "init_state", "state_on", "next_key", "mix64",
           "sweep_nonzero", "sample_minibatch", "incnorm_update",
           "minibatch_step"]

SAMPLERS = ("nonzero", "summed")

_GOLDEN = int(elements.GOLDEN)
#: salt of the carried-θ T draw of the summed sampler's last sweep
_T_SALT = 0x7E57A7E5D0C70BAC
_KEY_SALT = 0x5A3E5A3E5A3E5A3E


def mix64(z: int) -> int:
    """SplitMix64 finaliser on Python ints, modulo 2^64 (derives per-call stream keys): the
    kernels' one definition, :func:`same.model.kernels.elements.mix64`."""
    return int(elements.mix64(kernels.as_key(z)))


@dataclass(frozen=True)
class SameState:
    """Everything SAME carries from one minibatch to the next.

    Attributes
    ----------
    topic_word_t : array of shape (n_words, n_topics), float32, columns sum to 1 — φᵀ (the
        layout every kernel reads: one word's K topics are contiguous)
    row_total : array of shape (n_topics,), float32 — IncNorm's moving average of φ̂'s row sums
    key : int — base 64-bit stream key (from the seed)
    n_calls : int — sampling calls so far (the stream counter)
    n_steps : int — minibatch steps done
    n_docs_seen : int — documents processed, over all steps
    first_docs : int — documents of the first step (IncNorm's t_first)
    """

    topic_word_t: object
    row_total: object
    key: int
    n_calls: int = 0
    n_steps: int = 0
    n_docs_seen: int = 0
    first_docs: int = 0


@dataclass(frozen=True)
class StepSettings:
    """Settings of one minibatch step (the estimator builds them from its parameters).

    n_samples : float — m_t of this step (> 0)
    prior_scale : float — s in θ = T/s + α and φ̂ = P/s + β (m_t for "paper", 1 for "bidmach")
    doc_topic_prior, topic_word_prior : float — α, β
    n_inner : int — sweeps per minibatch
    sampler : "nonzero" | "summed"
    learning_rate : callable(step, docs_seen, first_docs) -> ρ (see :mod:`same.model.schedules`)
    keep_doc_topic : bool — the caller keeps θ after the minibatch (BIDMach ``putBack``)
    """

    n_samples: float
    prior_scale: float
    doc_topic_prior: float
    topic_word_prior: float
    n_inner: int
    sampler: str
    learning_rate: Callable[[int, int, int], float]
    keep_doc_topic: bool = False


def init_state(word_counts: np.ndarray, n_topics: int, seed: int, xp=np,
               dtype=np.float32) -> SameState:
    """φ uniform random × (corpus word count + 1), rows normalised (BIDMach LDAgibbs init).

    Parameters
    ----------
    word_counts : ndarray of shape (n_words,) — token count of each word in the training data
    n_topics : int — K
    seed : int — seeds φ and the base stream key
    xp : numpy or cupy — where the state lives
    """
    rng = np.random.default_rng(seed)
    phi = rng.random((n_topics, word_counts.shape[0])) * (word_counts + 1.0)
    phi /= phi.sum(axis=1, keepdims=True)
    return SameState(topic_word_t=xp.ascontiguousarray(to_backend(phi, xp, dtype=dtype).T),
                     row_total=xp.ones(n_topics, dtype=dtype),
                     key=mix64(seed ^ _KEY_SALT))


def state_on(state: SameState, xp) -> SameState:
    """The state with its arrays on backend ``xp`` (no copy when they are there already)."""
    if array_module(state.topic_word_t) is xp:
        return state
    if xp is np:
        from .backend import to_numpy

        return replace(state, topic_word_t=to_numpy(state.topic_word_t),
                       row_total=to_numpy(state.row_total))
    return replace(state, topic_word_t=to_backend(state.topic_word_t, xp),
                   row_total=to_backend(state.row_total, xp))


def next_key(state: SameState) -> tuple[int, SameState]:
    """The stream key of the next sampling call, and the state with the counter advanced."""
    calls = state.n_calls + 1
    return mix64(state.key + calls * _GOLDEN), replace(state, n_calls=calls)


def sweep_nonzero(block, theta, phi_t, n_samples: float, key: int, mu, doc_topic_out,
                  topic_word_out=None):
    """One sweep of Algorithm 3 as written: one Poisson draw per (nonzero, topic).

    Parameters
    ----------
    block : CSR matrix (n_docs, n_words) on the backend, float32 counts c
    theta : (n_docs, K) θ; phi_t : (n_words, K) φᵀ, C-contiguous
    mu : (nnz,) buffer, overwritten with μ = SDDMM(θ, φ)
    doc_topic_out : (n_docs, K) int32, overwritten with T; topic_word_out : (n_words, K) int32
        or None, overwritten with Pᵀ when given

    Returns
    -------
    (T, Pᵀ or None)
    """
    kernels.sddmm(block.indptr, block.indices, theta, phi_t, out=mu)
    return kernels.sample_accumulate(block.indptr, block.indices, block.data, theta, phi_t, mu,
                                     n_samples, key, doc_topic_out, topic_word_out)


def _keys(state: SameState, n: int):
    keys = []
    for _ in range(n):
        key, state = next_key(state)
        keys.append(key)
    return keys, state


def sample_minibatch(state: SameState, block, theta, settings: StepSettings):
    """The ``n_inner`` sweeps of one minibatch (Alg. 3 lines 3–11).

    Parameters
    ----------
    block : CSR (n_docs, n_words) on the state's backend, float32 counts
    theta : (n_docs, K) starting θ (ones, or carried); not modified
    settings : :class:`StepSettings`

    Returns
    -------
    (state with the stream counter advanced by ``n_inner``, θ after the last sweep or None
    when the summed sampler did not need it, Pᵀ of the last sweep: (n_words, K) int32)

    ``sampler="nonzero"``: every sweep draws per (nonzero, topic).  ``"summed"``: sweeps
    before the last draw T directly (:func:`same.model.kernels.summed_t_sweeps`, fused on the CPU)
    and the last draws P directly (:func:`same.model.kernels.summed_p_sweep`), which is equal in
    distribution to Algorithm 3's P given θ and φ.  A carried θ (``keep_doc_topic``) takes T
    of the last sweep from one more direct T draw on the same θ (a key derived from the last
    sweep's): T and P each have Algorithm 3's distribution, but are drawn independently
    rather than coupled through the per-nonzero counts Z -- the summed sampler's one
    departure, which touches only the θ that the next pass starts from.  Sweep i uses the
    i-th key of the state's stream in both samplers.
    """
    xp = array_module(theta)
    dt = theta.dtype
    n_docs, K = theta.shape
    phi_t = state.topic_word_t
    m, s, alpha = settings.n_samples, settings.prior_scale, settings.doc_topic_prior
    keys, state = _keys(state, settings.n_inner)
    P_t = xp.empty(phi_t.shape, dtype=xp.int32)
    if settings.sampler == "summed":
        theta = theta.copy()
        carried = xp.empty_like(theta) if settings.keep_doc_topic else None
        # c/μ with the last θ: from the T sweeps, or computed inside the P sweep (GPU)
        ratio = (None if kernels.fuses_ratio(xp)
                 else xp.empty(block.indices.shape[0], dtype=dt))
        kernels.summed_t_sweeps(block, theta, phi_t, m, s, alpha, keys[:-1], ratio,
                                carry_key=(mix64(keys[-1] ^ _T_SALT) if settings.keep_doc_topic
                                           else None), carry_out=carried)
        kernels.summed_p_sweep(block, ratio, theta, phi_t, m, keys[-1], P_t)
        return state, carried, P_t
    mu = xp.empty(block.indices.shape[0], dtype=dt)
    T = xp.empty((n_docs, K), dtype=xp.int32)
    for i, key in enumerate(keys):
        last = i == len(keys) - 1
        sweep_nonzero(block, theta, phi_t, m, key, mu, T, P_t if last else None)
        theta = T.astype(dt) / dt.type(s) + dt.type(alpha)
    return state, theta, P_t


def incnorm_update(topic_word_t, row_total, P_t, prior_scale: float, topic_word_prior: float,
                   rho: float):
    """φ̂ = P/s + β, divided by IncNorm's moving average of its row totals, blended into φ.

    Returns
    -------
    (φᵀ, row_total): new arrays (the inputs are not modified): the (n_words, n_topics) φᵀ,
    each topic renormalised, and the updated (n_topics,) row totals.  BIDMach
    ``updaters/IncNorm.scala``; :func:`same.model.kernels.incnorm` (fused on the CPU).
    """
    return kernels.incnorm(topic_word_t.copy(), P_t, row_total.copy(), prior_scale,
                           topic_word_prior, rho)


def minibatch_step(state: SameState, block, settings: StepSettings, theta=None):
    """One minibatch of Algorithm 3: sample, then the IncNorm blend of φ.

    Parameters
    ----------
    state : :class:`SameState`
    block : CSR (n_docs, n_words) on the state's backend, float32 counts
    settings : :class:`StepSettings`
    theta : (n_docs, K) carried θ, or None for θ = 1

    Returns
    -------
    (new state, θ after the last sweep (None if the summed sampler did not need it), ρ_t)
    """
    xp = array_module(state.topic_word_t)
    n_docs, K = block.shape[0], state.topic_word_t.shape[1]
    dtype = state.topic_word_t.dtype
    if theta is None:
        theta = xp.ones((n_docs, K), dtype=dtype)
    state, theta, P_t = sample_minibatch(state, block, theta, settings)
    docs_seen = state.n_docs_seen + n_docs
    first_docs = docs_seen if state.n_steps == 0 else state.first_docs
    rho = settings.learning_rate(state.n_steps, docs_seen, first_docs)
    phi_t, row_total = incnorm_update(state.topic_word_t, state.row_total, P_t,
                                      settings.prior_scale, settings.topic_word_prior, rho)
    state = replace(state, topic_word_t=phi_t, row_total=row_total, n_steps=state.n_steps + 1,
                    n_docs_seen=docs_seen, first_docs=first_docs)
    return state, theta, rho


def warm_up(xp, n_topics: int, settings: StepSettings, carry_theta: bool) -> None:
    """One step of the kernels ``settings`` select on a tiny 2 × 3 block (θ carried or
    not), so that JIT compilation happens before any timed step."""
    import scipy.sparse as sp

    tiny = sp.csr_matrix(np.array([[1, 2, 0], [0, 1, 3]], dtype=np.float32))
    state = init_state(np.asarray(tiny.sum(axis=0)).ravel().astype(np.float64), n_topics, 0, xp)
    theta = xp.ones((2, n_topics), dtype=np.float32) if carry_theta else None
    minibatch_step(state, to_backend(tiny, xp), settings, theta)
