"""Per-element code shared by every sampling kernel: counter-based uniforms, exact Poisson
draws, the draws of one nonzero, μ of one nonzero.  Plain ``@numba.njit`` functions called by
the CPU kernels (``prange``) and the CUDA kernels (numba-cuda compiles njit callees for the
device; its simulator runs this source as Python, :func:`same.model.kernels.cuda.python_twins`,
hence the explicit NumPy types of scalars whose type matters).

Random numbers come from a counter-based generator: the uniform for counter ``ctr`` of stream
``key`` is ``splitmix64(key + ctr·γ)``.  Every sampling call gets a fresh key (derived from the
estimator's seed and a call counter, :func:`same.model.algorithm.next_key`), and each element of a
call its own counters, so results do not depend on the number of threads, and no random stream
is ever reused across calls (unlike BIDMach, which reset its GPU generator with the same seed on
every call).  Counter layout: element i of a call owns the counters ``i·2^20 + r``,
r = 0, 1, … (attempts of a rejection sampler).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["mix64", "GOLDEN", "uniform", "poisson", "log_factorial", "element_counter", "dot_f64",
           "dot_seq", "mu_columns", "axpy", "ratio", "draw_nonzero", "draw_at", "doc_tokens",
           "summed_t_draw", "summed_t_doc", "summed_p_word", "INVERSION_MAX", "CAT_SALT"]

#: SplitMix64's increment γ (the golden ratio · 2^64) and finaliser multipliers.
GOLDEN, _M1, _M2 = (np.uint64(c) for c in (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9,
                                           0x94D049BB133111EB))
_S30, _S27, _S31, _S11, _S20 = (np.uint64(s) for s in (30, 27, 31, 11, 20))
CAT_SALT = np.uint64(0xD1B54A32D192ED03)  #: keys the pooled events' categories: key ^ CAT_SALT
_TWO_M53 = 2.0 ** -53
#: λ below which Poisson draws use inversion (above: PTRS, Hörmann 1993, as NumPy).
INVERSION_MAX = 10.0
_RECIP = np.array([0.0] + [1.0 / i for i in range(1, 64)])
#: log k! for k < 1024 (PTRS's squeeze; λ up to ~900 stays in the table)
_LOG_FACTORIAL = np.array([math.lgamma(k + 1.0) for k in range(1024)])
#: Pooled events: a guide table once there is an event per this many topics (n ≥ K / 4).
_TOPICS_PER_EVENT_GUIDE = 4


@njit(inline="always", cache=True)
def mix64(z):  # pragma: no cover - compiled
    """SplitMix64 finaliser (Steele, Lea, Flood 2014); uint64 → uint64."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(inline="always", cache=True)
def uniform(key, ctr):  # pragma: no cover - compiled
    """Uniform in (0, 1) with 53 random bits, for counter ``ctr`` of stream ``key``."""
    x = mix64(key + ctr * GOLDEN)
    return (np.float64(np.int64(x >> _S11)) + 0.5) * _TWO_M53


@njit(cache=True)
def _inversion(lam, u):  # pragma: no cover - compiled
    """Poisson(λ) by inversion of the CDF at uniform u (λ < 10)."""
    p = math.exp(-lam)
    cdf = p
    k = 0
    while u > cdf and p > 0.0:
        k += 1
        p *= lam * _RECIP[k] if k < 64 else lam / k
        cdf += p
    return k


@njit(inline="always", cache=True)
def log_factorial(k):  # pragma: no cover - compiled
    """log k! = lgamma(k + 1), tabulated below ``len(_LOG_FACTORIAL)`` (no libm call in PTRS)."""
    if k < _LOG_FACTORIAL.shape[0]:
        return _LOG_FACTORIAL[int(k)]
    return math.lgamma(k + 1.0)


@njit(cache=True)
def _ptrs(lam, key, base):  # pragma: no cover - compiled
    """Poisson(λ ≥ 10) by PTRS transformed rejection (Hörmann 1993, as NumPy); a non-finite λ
    gives 0 (callers reject it before sampling; this only prevents a hang)."""
    if not lam < math.inf:
        return 0
    slam = math.sqrt(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    two_a = 2.0 * a
    b_2 = b - 2.0
    vr_b = 0.9277 * b_2 - 3.6224  # v ≤ vr = 0.9277 − 3.6224/(b − 2), without the division
    inv_alpha, log_lam = -1.0, 0.0  # the squeeze's, set on first use (rarely reached)
    r = np.uint64(0)
    while True:
        uu = uniform(key, base + r) - 0.5
        v = uniform(key, base + r + np.uint64(1))
        r += np.uint64(2)
        us = 0.5 - abs(uu)
        k = math.floor((two_a / us + b) * uu + lam + 0.43)
        if us >= 0.07 and v * b_2 <= vr_b:
            return int(k)
        if k < 0 or (us < 0.013 and v > us):
            continue
        if inv_alpha < 0.0:  # 1.1239 + … > 0 once set
            inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
            log_lam = math.log(lam)
        # log v + log(1/α) − log(a/us² + b), as one log
        if math.log(v * inv_alpha / (a / (us * us) + b)) <= -lam + k * log_lam - log_factorial(k):
            return int(k)


@njit(inline="always", cache=True)
def poisson(lam, key, base):  # pragma: no cover - compiled
    """Exact Poisson(λ) draw using the uniforms at counters base, base+1, ...

    λ < 10: inversion from one uniform; when u < 1 − λ (≤ e^−λ = P(0)) the draw is 0
    without evaluating exp: the common case for the small λ of a trained model, kept inline;
    the rest are calls.  λ ≥ 10: PTRS transformed rejection (as NumPy).  λ ≤ 0 and NaN give 0.
    """
    if lam < INVERSION_MAX:
        if not lam > 0.0:
            return 0
        u = uniform(key, base)
        if u < 1.0 - lam:
            return 0
        return _inversion(lam, u)
    return _ptrs(lam, key, base)


@njit(inline="always", cache=True)
def element_counter(i):  # pragma: no cover - compiled
    """First counter owned by element i of a call (i·2^20)."""
    return np.uint64(i) << _S20


@njit(inline="always", cache=True)
def dot_f64(a, b):  # pragma: no cover - compiled
    """Σ_k a_k b_k, each product in the arrays' precision, summed in float64 in order k = 0..K−1
    (μ of one nonzero: the SDDMM of the CPU and CUDA kernels and of the evaluator)."""
    s = np.float64(0.0)  # explicit, so NumPy's scalar rules agree when run as Python
    for k in range(a.shape[0]):
        s += a[k] * b[k]
    return s


@njit(inline="always", cache=True)
def _categorical(x, cum, n_topics):  # pragma: no cover - compiled
    """First k with cum[k] > x, at most K − 1 (cum non-decreasing): the number of k < K − 1
    with cum[k] ≤ x, counted without branches (a binary search mispredicts half its steps)."""
    c = 0
    for k in range(n_topics - 1):
        c += cum[k] <= x
    return c


@njit(inline="always", cache=True)
def _split_pooled(n, pooled, cum, guide, cat_key, ctr, z):  # pragma: no cover - compiled
    """Add ``n`` pooled events to z, topic k with probability ∝ its λ (Poisson splitting).

    Few events: a branch-free count per event (:func:`_categorical`); many: a guide table
    (Chen & Asau 1974), O(K + n).  Event e uses uniform ``ctr + e`` of stream ``cat_key``.
    """
    n_topics = cum.shape[0]
    if n * _TOPICS_PER_EVENT_GUIDE < n_topics:
        for e in range(n):
            z[_categorical(uniform(cat_key, ctr + np.uint64(e)) * pooled, cum, n_topics)] += 1
        return
    k = 0
    step = pooled / n_topics
    for i in range(n_topics):  # guide[i] = first topic whose cumulative λ exceeds i/K of it
        while k < n_topics - 1 and cum[k] <= step * i:
            k += 1
        guide[i] = k
    for e in range(n):
        u = uniform(cat_key, ctr + np.uint64(e))
        x = u * pooled
        k = guide[int(u * n_topics)]
        while k < n_topics - 1 and cum[k] <= x:
            k += 1
        z[k] += 1


@njit(inline="always", cache=True)
def draw_nonzero(j, rate, scale, theta_row, phi_row, key, pool_max, cum, guide,
                 z):  # pragma: no cover - compiled
    """The K Poisson draws of element j: z_k ~ Poisson(scale · θ_k φ_k), written to z (int).

    Returns False (z untouched) when nothing was drawn by the early exit below, else True.
    Exact, and cheaper than K independent draws: topics with λ_k ≥ ``pool_max`` are drawn one
    by one (counter (j·(K+1) + k)·2^20); the rest are pooled, n ~ Poisson(Σ_small λ) (counter
    (j·(K+1) + K)·2^20), and each event picks topic k with probability λ_k / Σ_small λ.  When
    the total rate ``rate`` = Σ_k λ_k is below ``pool_max`` every topic is pooled, and the
    pooled draw's own first uniform decides first whether anything is drawn at all:
    u < 1 − rate (1 + 1e-6) implies u ≤ exp(−Σλ), the inversion's zero, so the K
    multiply-adds are skipped without changing any result.  cum, guide: scratch of length K
    (guide first lists the topics drawn alone).
    """
    n_topics = theta_row.shape[0]
    base = np.uint64(j) * np.uint64(n_topics + 1)
    if rate < pool_max:
        if uniform(key, element_counter(base + np.uint64(n_topics))) < 1.0 - rate * (1 + 1e-6):
            return False
    # Branch-free (a branch on λ ≥ pool_max mispredicts): pooled λ (0 if drawn alone), the
    # topics drawn alone (listed in guide), prefix sums in order k (adding 0.0 changes none).
    for k in range(n_topics):
        z[k] = 0
        lam = scale * theta_row[k] * phi_row[k]
        cum[k] = 0.0 if lam >= pool_max else lam
    n_alone = 0
    for k in range(n_topics):
        guide[n_alone] = k
        n_alone += scale * theta_row[k] * phi_row[k] >= pool_max
    pooled = np.float64(0.0)
    for k in range(n_topics):
        pooled += cum[k]
        cum[k] = pooled
    for i in range(n_alone):
        k = guide[i]
        z[k] = poisson(scale * theta_row[k] * phi_row[k], key,
                       element_counter(base + np.uint64(k)))
    if pooled > 0.0:
        ctr = element_counter(base + np.uint64(n_topics))
        n = poisson(pooled, key, ctr)
        if n > 0:
            _split_pooled(n, pooled, cum, guide, key ^ CAT_SALT, ctr, z)
    return True


@njit(inline="always", cache=True)
def draw_at(j, count, n_samples, mu_j, theta_row, phi_row, key, pool_max, cum, guide,
            z):  # pragma: no cover - compiled
    """Algorithm 3's draws for nonzero j = (d, w) with count c and μ_j:
    z_k ~ Poisson(m c θ_dk φ_kw / μ_j) (:func:`draw_nonzero`, rate m·c)."""
    rate = n_samples * count
    return draw_nonzero(j, rate, rate / mu_j, theta_row, phi_row, key, pool_max, cum, guide, z)


@njit(inline="always", cache=True)
def dot_seq(a, b):  # pragma: no cover - compiled
    """Σ_k a_k b_k in the arrays' precision, in order k = 0..K−1 (μ of one nonzero in the
    summed sampler, float32 for θ·φ: K positive terms, relative error ~K·2^-24).

    The CPU computes many nonzeros at once (:func:`mu_columns`), the GPU one per call, in the
    same order: the CPU (no fast-math) and the CUDA simulator agree bit for bit; on a GPU NVVM
    fuses multiply-adds (``fma``), so μ may differ in the last bits and a draw may flip.
    """
    s = a.dtype.type(0.0)  # explicit, so NumPy's scalar rules agree when run as Python
    for k in range(a.shape[0]):
        s += a[k] * b[k]
    return s


@njit(inline="always", cache=True)
def mu_columns(theta_row, cols, n, mu):  # pragma: no cover - compiled
    """mu[i] = Σ_k θ_k cols[k, i] for i < n, each summed in order k = 0..K−1: the values of
    :func:`dot_seq` for n nonzeros whose φ rows are the columns of ``cols`` (K × ≥ n), with
    the inner loop running across nonzeros so that a CPU's vector units compute n of them at
    once in exactly :func:`dot_seq`'s order."""
    for i in range(n):
        mu[i] = 0.0
    for k in range(theta_row.shape[0]):
        t = theta_row[k]
        ck = cols[k]
        for i in range(n):
            mu[i] += t * ck[i]


@njit(inline="always", cache=True)
def axpy(acc, r, x):  # pragma: no cover - compiled
    """acc_k += r · x_k in acc's dtype (r, a float64, rounded to it first; a GPU fuses it)."""
    rr = acc.dtype.type(r)
    for k in range(acc.shape[0]):
        acc[k] += rr * x[k]


@njit(inline="always", cache=True)
def ratio(c, mu):  # pragma: no cover - compiled
    """c / μ in float64, μ floored at 1e-30."""
    return np.float64(c) / max(np.float64(mu), 1e-30)


@njit(inline="always", cache=True)
def doc_tokens(d, indptr, data):  # pragma: no cover - compiled
    """Σ_w c_dw of document d (float64)."""
    tokens = np.float64(0.0)
    for j in range(indptr[d], indptr[d + 1]):
        tokens += data[j]
    return tokens


@njit(inline="always", cache=True)
def summed_t_draw(d, tokens, acc, th, n_samples, prior_scale, doc_topic_prior, key, pool_max,
                  cum, guide, t_row):  # pragma: no cover - compiled
    """One T draw of the summed sampler for document d, θ_d updated in place:
    T_dk ~ Poisson(m θ_dk acc_k) as element d of ``key`` (:func:`draw_nonzero`; the total
    rate is exactly m · tokens_d), then θ_d ← T_d / s + α.  acc_k = Σ_w c_dw φ_kw / μ_dw."""
    n_topics = th.shape[0]
    for k in range(n_topics):
        t_row[k] = 0
    draw_nonzero(d, n_samples * tokens, n_samples, th, acc, key, pool_max, cum, guide, t_row)
    for k in range(n_topics):
        th[k] = t_row[k] / prior_scale + doc_topic_prior


@njit(inline="always", cache=True)
def summed_t_doc(d, indptr, indices, data, theta, phi_t, n_samples, prior_scale,
                 doc_topic_prior, keys, ratio_out, pool_max, acc, cum, guide,
                 t_row):  # pragma: no cover - compiled
    """The summed sampler's T sweeps for document d (one per key), θ_d updated in place; a
    nonzero at a time (the GPU's form; the CPU's is :func:`same.model.kernels.cpu.summed_t_block`,
    the same values).

    Per sweep i: acc_k = Σ_w c_dw φ_kw / μ_dw (μ by :func:`dot_seq`), then
    :func:`summed_t_draw` with ``keys[i]``.  Finally ``ratio_out[j] = c_j / μ_j`` with the
    last θ for the P sweep.  acc, cum, guide, t_row: scratch of length K (acc in θ's dtype,
    cum float64, guide int64, t_row int32).
    """
    th = theta[d]
    n_topics = th.shape[0]
    tokens = doc_tokens(d, indptr, data)
    for i in range(keys.shape[0]):
        for k in range(n_topics):
            acc[k] = 0.0
        for j in range(indptr[d], indptr[d + 1]):
            ph = phi_t[indices[j]]
            axpy(acc, ratio(data[j], dot_seq(th, ph)), ph)
        summed_t_draw(d, tokens, acc, th, n_samples, prior_scale, doc_topic_prior, keys[i],
                      pool_max, cum, guide, t_row)
    for j in range(indptr[d], indptr[d + 1]):
        ratio_out[j] = ratio(data[j], dot_seq(th, phi_t[indices[j]]))


@njit(inline="always", cache=True)
def summed_p_word(w, col_ptr, col_doc, col_nz, ratios, counts, theta, phi_t, n_samples, key,
                  p_out, pool_max, acc, cum, guide):  # pragma: no cover - compiled
    """The summed sampler's P draws for word w: P_wk ~ Poisson(m φ_kw Σ_d c_dw θ_dk / μ_dw).

    Sums over the word's documents in the block's CSC order (col_ptr, col_doc, col_nz), then
    the K draws as element w of ``key`` (:func:`draw_nonzero`; total rate m · counts[w]).
    p_out[w] is fully written (zero for a word absent from the block).
    """
    n_topics = acc.shape[0]
    pw = p_out[w]
    for k in range(n_topics):
        pw[k] = 0
        acc[k] = 0.0
    if col_ptr[w] == col_ptr[w + 1]:
        return
    for e in range(col_ptr[w], col_ptr[w + 1]):
        axpy(acc, np.float64(ratios[col_nz[e]]), theta[col_doc[e]])
    draw_nonzero(w, n_samples * counts[w], n_samples, acc, phi_t[w], key, pool_max, cum, guide,
                 pw)
