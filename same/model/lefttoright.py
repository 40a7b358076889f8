"""Left-to-right estimate of log p(w_d | φ, α) for whole test documents (nats/token).

The third held-out measure of :mod:`same.model.evaluate` (``ll_l2r``), beside document completion
and the BIDMach-style ll.  Unlike those it fits no θ: it estimates the marginal likelihood of
each whole document under LDA with φ fixed, θ_d ~ Dirichlet(α, …, α) integrated out,

    p(w_d | φ, α) = ∫ Π_n Σ_k θ_k φ_{k,w_n} dDir(θ | α),

and reports Σ_d log p̂(w_d) / Σ_d N_d  [nats/token].

The estimator: unbiased sequential importance sampling
    Each document's bag of words is laid out as a token sequence in a fixed order (its CSR
    row: word ids ascending, each word repeated by its count), w_1 … w_N.  Each of R
    independent particles walks it left to right; at token n, with n_k its earlier
    assignments to topic k,

        q_n = Σ_k φ_{k,w_n} (n_k + α) / (n − 1 + Kα)        (the predictive p(w_n | z_<n))
        z_n ~ φ_{k,w_n} (n_k + α)                            (the sequential conditional)

    and the particle's weight is W_r = Π_n q_n.  Because the proposal of z_n is exactly
    p(z_n | w_≤n, z_<n), W_r is the importance weight p(w, z) / q(z), so E[W_r] = p(w_d | φ, α)
    exactly and the mean of the R weights is unbiased for p(w_d); its Monte Carlo standard
    error is sd(W) / √R.  We report log p̂(w_d) = logsumexp_r(log W_r) − log R, which is
    biased low (Jensen), and by much more than var(W)/(2 R E[W]²) suggests: on documents of
    ~100 tokens the weights are heavy-tailed (one particle carries most of the sum), and the
    per-token ll rises slowly with R, by ~0.015 nats/token per doubling (see
    :data:`DEFAULT_PARTICLES`).  A fixed R scores every φ with a similar shortfall (0.049 to
    0.059 nats/token at R = 20 for three φ on KOS), so differences between φ well above
    ~0.01 nats/token rank them; the level itself is a lower estimate.  (A particle
    filter that resamples on q_n when the effective sample size falls below R/2, also
    unbiased for p(w_d), gave about the same values at equal R on KOS: the shortfall is the
    proposal's, not the weights' degeneracy alone.)

    This is Buntine's unbiased form of the left-to-right algorithm.  Wallach et al.'s
    original resamples the earlier assignments z_<n at every position and averages the
    predictive over particles position by position, Π_n (1/R Σ_r q_n^r); Buntine (2009)
    showed that this product of averages is not an unbiased estimator of p(w).  The sampler
    here keeps each particle's assignments and averages the products.

Randomness: counter-based (:mod:`same.model.kernels.elements`).  Document d's stream key is
``mix64(mix64(seed ^ salt) + d·γ)`` and token i of particle r uses counter r·2^32 + i, so the
result is bit-identical for the same inputs and seed whatever the number of threads (the
kernel, :func:`same.model.kernels.lefttoright.l2r_docs`, is parallel over documents; per-document
results are summed in document order afterwards).

Cost: O(R · N · K) per document and no memory beyond φᵀ in float64 (W × K), R · K per
thread, and one float per document (R per document with ``return_weights``).  φ on the GPU
(CuPy) is copied to the host: the estimator always runs on the CPU.

Source
------
H. M. Wallach, I. Murray, R. Salakhutdinov, D. Mimno, "Evaluation methods for topic models",
ICML 2009 (the left-to-right algorithm); W. Buntine, "Estimating likelihoods for topic
models", ACML 2009 (the sequential sampler without resampling is unbiased; Wallach et al.'s
per-position averaging is not).
"""

from __future__ import annotations

import numpy as np

from .backend import to_numpy
from .heldout_inputs import check_doc_topic_prior
from .kernels import as_key
from .kernels.elements import mix64
from .kernels.lefttoright import l2r_docs

__all__ = ["DEFAULT_PARTICLES", "DEFAULT_SEED", "left_to_right", "left_to_right_docs",
           "relative_se"]

#: Particles per document.  Measured on KOS (K = 64, test fraction 0.1, split seed 0: 343
#: test documents, 45,893 tokens, median 112 per document; φ of a 20-pass SAME fit, α = 0.1;
#: one thread, AMD EPYC): 44 ms per evaluation at R = 20 (28, 100, 180 ms at R = 10, 50,
#: 100), beside 54 ms for evaluate()'s document completion and BIDMach-style ll together.
#: Monte Carlo spread at R = 20: the per-token ll varies by sd 1.7·10⁻³ nats/token over 50
#: seeds; one document's log p̂ by sd ~3.4 nats (median; ~0.03 nats/token), and the relative
#: standard error of its p̂, sd(W)/(√R·W̄), has median ~0.9 (~0.6 even at R = 1000).  The
#: per-token ll still rises with R (mean over seeds: −7.500, −7.483, −7.468, −7.453, −7.444
#: at R = 5, 10, 20, 50, 100; −7.412 at R = 5000), so no affordable R removes the shortfall
#: of log p̂; at R = 20 it is 0.049–0.059 nats/token against R = 2000 for three φ of
#: different smoothness (a 1-pass fit, a 20-pass fit, the latter smoothed), and the gap
#: between the 1- and 20-pass φ is the same at R = 20 and R = 5000 within 0.003.  R = 20
#: keeps the measure cheaper than the other two on every checkpoint; R = 50 would gain
#: ~0.015 nats/token of level at 2.3× the time.
DEFAULT_PARTICLES = 20
#: Default seed of the particles' random stream (the evaluator's, fixed for every run).
DEFAULT_SEED = 0
#: Tokens a document may hold: token i of particle r uses counter r·2^32 + i.
_MAX_DOC_TOKENS = 2 ** 32
#: Salt of the stream key: key = mix64(seed ^ salt), then per document mix64(key + d·γ).
_SEED_SALT = 0x1EF72A1D5EED0C0D


def _check_settings(doc_topic_prior, n_particles, seed) -> None:
    """α, R and the seed, each refused with one line naming it (as :mod:`same.model.evaluate`)."""
    check_doc_topic_prior(doc_topic_prior)
    if isinstance(n_particles, bool) or not isinstance(n_particles, (int, np.integer)) \
            or n_particles < 1:
        raise ValueError(f"n_particles must be an integer >= 1, got {n_particles!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an integer, got {seed!r}")


def _gate(topic_word, doc_topic_prior, counts, n_particles, seed):
    """(φᵀ float64 (W, K) C-contiguous on the host, canonical CSR counts with int64 data) after
    every argument has passed its check; nothing reaches numba before."""
    from .heldout_inputs import _as_csr, check_prior_totals, check_topic_word

    _check_settings(doc_topic_prior, n_particles, seed)
    check_topic_word(topic_word)
    check_prior_totals(topic_word.shape[0], doc_topic_prior)
    phi = to_numpy(topic_word)
    counts = _as_csr(counts, np, phi.shape[1], "counts")
    data = counts.data
    if data.dtype.kind == "f" and not bool(np.all(data == np.floor(data))):
        j = int(np.argmax(data != np.floor(data)))
        d = int(np.searchsorted(counts.indptr, j, side="right")) - 1
        raise ValueError(f"counts must hold whole numbers for the left-to-right estimate; "
                         f"document {d}, word {int(counts.indices[j])} has {float(data[j])!r}")
    total = np.concatenate(([0.0], np.cumsum(data, dtype=np.float64)))
    lengths = total[counts.indptr[1:]] - total[counts.indptr[:-1]]  # tokens per document
    if lengths.size and lengths.max() >= _MAX_DOC_TOKENS:
        d = int(np.argmax(lengths))
        raise ValueError(f"counts: document {d} holds {int(lengths[d])} tokens; the "
                         f"left-to-right estimate takes fewer than 2^32 per document")
    phi_t = np.ascontiguousarray(phi.T, dtype=np.float64)
    if counts.nnz:
        dead = ~(phi_t.max(axis=1) > 0)  # a word no topic can emit
        bad = dead[counts.indices]
        if bool(bad.any()):
            j = int(np.argmax(bad))
            d = int(np.searchsorted(counts.indptr, j, side="right")) - 1
            raise ValueError(
                f"topic_word gives word {int(counts.indices[j])} of document {d} probability 0 "
                "under every topic: its log-likelihood would be -inf. Smooth φ (a topic-word "
                "prior β > 0) before scoring")
    return phi_t, counts, data.astype(np.int64, copy=False)


def left_to_right_docs(topic_word, doc_topic_prior: float, counts,
                       n_particles: int = DEFAULT_PARTICLES, seed: int = DEFAULT_SEED):
    """Per-document left-to-right estimates log p̂(w_d | φ, α) and each particle's log weight.

    Parameters
    ----------
    topic_word : ndarray (NumPy or CuPy), shape (n_topics, n_words), float64 or float32, rows
        sum to 1 (± 1e-4, :func:`same.model.evaluate.check_topic_word`)
    doc_topic_prior : float, symmetric Dirichlet α > 0 of the documents' topic proportions
    counts : sparse matrix (SciPy, or CuPy with CuPy φ), shape (n_docs, n_words), whole
        non-negative counts; the documents scored in full
    n_particles : int R ≥ 1, particles per document (see :data:`DEFAULT_PARTICLES`)
    seed : int, seed of the particles' stream (any integer, taken modulo 2^64)

    Returns
    -------
    log_p : ndarray (n_docs,) float64, nats per document: log of the mean of the R weights
        (0 for a document without tokens)
    log_weights : ndarray (n_docs, R) float64, nats: log W_r of each particle, whose mean
        E[W_r] = p(w_d | φ, α) exactly

    Raises
    ------
    TypeError
        ``topic_word`` is not an array, or ``counts`` not a sparse matrix.
    ValueError
        One line naming the parameter: α not positive and finite (``doc_topic_prior``);
        ``n_particles`` not an integer ≥ 1; ``seed`` not an integer; φ refused by
        :func:`same.model.evaluate.check_topic_word` (``topic_word``); ``counts`` with another
        vocabulary size than φ, failing the input gate (:func:`same.data.count_matrix.validate_counts`)
        or holding a fractional count; a word of ``counts`` that every topic gives
        probability 0 (its log-likelihood would be −inf).

    Source
    ------
    Wallach, Murray, Salakhutdinov, Mimno (ICML 2009); Buntine (ACML 2009): the unbiased
    sequential form (see the module docstring).
    """
    phi_t, counts, data = _gate(topic_word, doc_topic_prior, counts, n_particles, seed)
    n_docs = counts.shape[0]
    log_p = np.empty(n_docs, dtype=np.float64)
    log_w = np.empty((n_docs, int(n_particles)), dtype=np.float64)
    _run(phi_t, counts, data, doc_topic_prior, n_particles, seed, log_p, log_w)
    return log_p, log_w


def _run(phi_t, counts, data, doc_topic_prior, n_particles, seed, log_p, log_w) -> None:
    base = np.uint64(mix64(as_key(int(seed) ^ _SEED_SALT)))
    l2r_docs(counts.indptr, counts.indices, data, phi_t, np.float64(doc_topic_prior),
             int(n_particles), base, log_p, log_w)


def left_to_right(topic_word, doc_topic_prior: float, counts,
                  n_particles: int = DEFAULT_PARTICLES, seed: int = DEFAULT_SEED,
                  return_weights: bool = False):
    """Left-to-right held-out log-likelihood of whole documents in nats/token:
    Σ_d log p̂(w_d | φ, α) / Σ_d N_d (Buntine's unbiased sequential sampler, module docstring).

    Parameters
    ----------
    topic_word : ndarray (NumPy or CuPy), shape (n_topics, n_words), float64 or float32, rows
        sum to 1
    doc_topic_prior : float, symmetric Dirichlet α > 0
    counts : sparse matrix, shape (n_docs, n_words), whole non-negative counts (the test
        documents in full: :attr:`same.data.split.HeldOutSplit.test_full`)
    n_particles : int R ≥ 1 (default :data:`DEFAULT_PARTICLES`)
    seed : int (default :data:`DEFAULT_SEED`); same inputs and seed, bit-identical result
        whatever the number of threads
    return_weights : bool, also return the particles' log weights

    Returns
    -------
    float, nats/token; with ``return_weights``, (that float, log_weights: ndarray (n_docs, R)
    float64 of each particle's log weight, nats)

    Raises
    ------
    TypeError
        ``topic_word`` is not an array, or ``counts`` not a sparse matrix.
    ValueError
        As :func:`left_to_right_docs` (one line naming the parameter), or ``counts`` holds
        no tokens.

    Source
    ------
    Wallach, Murray, Salakhutdinov, Mimno (ICML 2009); Buntine (ACML 2009).
    """
    phi_t, counts, data = _gate(topic_word, doc_topic_prior, counts, n_particles, seed)
    n_tokens = int(data.sum())
    if n_tokens <= 0:
        raise ValueError("counts hold no tokens")
    n_docs = counts.shape[0]
    log_p = np.empty(n_docs, dtype=np.float64)
    log_w = np.empty((n_docs if return_weights else 0, int(n_particles)), dtype=np.float64)
    _run(phi_t, counts, data, doc_topic_prior, n_particles, seed, log_p, log_w)
    ll = float(np.add.reduce(log_p) / n_tokens)  # in document order: thread-independent
    return (ll, log_w) if return_weights else ll


def relative_se(log_weights) -> np.ndarray:
    """Per-document relative Monte Carlo standard error of p̂ = mean of the weights:
    sd(W) / (√R · W̄) (sample sd, ddof = 1; 0 when R = 1), from log weights.

    Parameters
    ----------
    log_weights : array (n_docs, R) float64, nats (from :func:`left_to_right_docs`)

    Returns
    -------
    ndarray (n_docs,) float64, dimensionless

    Raises
    ------
    ValueError
        ``log_weights`` not 2-D with at least one particle, or not finite.
    """
    lw = np.asarray(log_weights, dtype=np.float64)
    if lw.ndim != 2 or lw.shape[1] < 1 or not bool(np.all(np.isfinite(lw))):
        raise ValueError("log_weights must be a finite 2-D array (documents, particles)")
    n = lw.shape[1]
    if n == 1:
        return np.zeros(lw.shape[0])
    w = np.exp(lw - lw.max(axis=1, keepdims=True))  # scaled by a per-document constant
    return w.std(axis=1, ddof=1) / (np.sqrt(n) * w.mean(axis=1))
