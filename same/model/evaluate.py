"""The one held-out evaluator of every method: document completion, BIDMach-style ll, left-to-right.

Every method exports ``topic_word`` φ (K × W, rows sum to 1) and its α; this
module, never the library that trained φ, turns them into a score.

Document completion (primary)
    θ of each test document is fitted on its *observed* half with φ fixed, by
    ``FOLD_IN_ITERS`` iterations of the expected-count update

        θ_dk ← α + Σ_w c_dw θ_dk φ_kw / Σ_j θ_dj φ_jw

    (the m → ∞ mean of the SAME θ update, BIDMach ``uupdate`` with s = 1; it is
    EM for the posterior mode of θ under a Dirichlet(α + 1) prior), starting
    from uniform θ.  With θ̄ = θ / Σ_k θ_k the held-out half is scored:

        ll = Σ_{d,w ∈ held-out} c_dw log Σ_k θ̄_dk φ_kw  /  N_held-out   [nats/token]

    perplexity = exp(−ll).

BIDMach-style ll (for comparing with the paper's plots)
    θ fitted with ``n_inner`` (default 5) of the same sweeps from θ = 1 on the
    *full* test documents, which are then scored with that θ (BIDMach
    ``LDAgibbs.evalfun``).  Optimistic: the scored tokens also fitted θ.

Left-to-right: log p(w_d | φ, α) of each *full* test document, θ integrated out, by seeded
    sequential importance sampling (:mod:`same.model.lefttoright`), per test token [nats/token].

The first two work on NumPy and CuPy arrays (left-to-right copies φ to the host).  Memory is
bounded: documents go in chunks of at most ``chunk_nnz`` nonzeros, and no nnz × K array is
ever formed (the SDDMM is a fused kernel).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .backend import array_module, sparse_module, to_numpy
from .heldout_inputs import (
    _as_csr,
    check_doc_topic_prior,
    check_heldout_split,
    check_prior_totals,
    check_topic_word,
)
from .kernels import sddmm
from .lefttoright import DEFAULT_PARTICLES, DEFAULT_SEED, left_to_right

__all__ = ["FOLD_IN_ITERS", "BIDMACH_INNER", "L2R_PARTICLES", "L2R_SEED", "Evaluation", "fold_in",
           "log_likelihood", "heldout_loglik", "bidmach_loglik", "evaluate", "check_topic_word"]

#: Fold-in iterations for document completion (fixed for every method and run).
FOLD_IN_ITERS = 50
#: Sweeps for the BIDMach-style ll (BIDMach ``uiter`` default).
BIDMACH_INNER = 5
#: Particles per document of the left-to-right estimate (:data:`~.lefttoright.DEFAULT_PARTICLES`).
L2R_PARTICLES = DEFAULT_PARTICLES
#: Seed of the left-to-right particles (fixed for every method and run).
L2R_SEED = DEFAULT_SEED
#: Default bound on nonzeros per document chunk (θ rows, μ and c/μ per chunk).
DEFAULT_CHUNK_NNZ = 1 << 22


@dataclass(frozen=True)
class Evaluation:
    """Scores of one φ on one split (all in nats/token unless stated)."""

    ll: float  #: document-completion held-out log-likelihood per token
    perplexity: float  #: exp(−ll)
    ll_bidmach: float  #: BIDMach-style ll (θ fitted on the scored tokens)
    ll_l2r: float  #: left-to-right estimate of log p(w_d | φ, α) of the full test documents
    n_heldout_tokens: int
    n_test_tokens: int
    fold_in_iters: int
    bidmach_inner: int
    l2r_particles: int  #: particles per document of ``ll_l2r``
    l2r_seed: int  #: seed of ``ll_l2r``'s particles

    def as_dict(self) -> dict:
        return asdict(self)


def _chunks(indptr: np.ndarray, chunk_nnz: int):
    """Yield (start, stop) document ranges with at most ``chunk_nnz`` nonzeros (≥ 1 doc)."""
    n_docs = len(indptr) - 1
    start = 0
    while start < n_docs:
        stop = int(np.searchsorted(indptr, indptr[start] + chunk_nnz, side="right")) - 1
        stop = min(max(stop, start + 1), n_docs)
        yield start, stop
        start = stop


def _fold_in_block(counts, phi_t, alpha: float, n_iter: int, theta=None):
    """Run ``n_iter`` expected-count sweeps on one CSR block; returns unnormalised θ (D, K)."""
    xp = array_module(phi_t)
    csp = sparse_module(xp)
    n_docs, n_topics = counts.shape[0], phi_t.shape[1]
    if theta is None:
        theta = xp.ones((n_docs, n_topics), dtype=phi_t.dtype)
    mu = xp.empty(counts.nnz, dtype=phi_t.dtype)
    tiny = np.finfo(phi_t.dtype).tiny
    data = counts.data.astype(phi_t.dtype)
    for _ in range(n_iter):
        sddmm(counts.indptr, counts.indices, theta, phi_t, out=mu)
        ratio = csp.csr_matrix((data / xp.maximum(mu, tiny), counts.indices, counts.indptr),
                               shape=counts.shape)
        theta = theta * (ratio @ phi_t) + alpha
    return theta


def _loglik_block(counts, theta, phi_t, first_doc: int = 0) -> float:
    """Σ c_dw log Σ_k θ̄_dk φ_kw over a block's nonzeros (θ̄ = row-normalised θ).

    Raises
    ------
    ValueError
        A scored word with probability 0 (its log would be −inf), naming the document (row
        ``first_doc`` + i) and the word: never a silent −inf in a trace.
    """
    xp = array_module(phi_t)
    theta_bar = theta / theta.sum(axis=1, keepdims=True)
    mu = sddmm(counts.indptr, counts.indices, xp.ascontiguousarray(theta_bar), phi_t)
    if not bool(xp.all(mu > 0)):
        j = int(to_numpy(xp.nonzero(~(mu > 0))[0])[0])
        d = int(np.searchsorted(to_numpy(counts.indptr), j, side="right")) - 1
        raise ValueError(
            f"topic_word gives word {int(counts.indices[j])} of document {first_doc + d} "
            "probability 0 under the document's topics: its log-likelihood would be -inf. "
            "Smooth φ (a topic-word prior β > 0) before scoring")
    return float((counts.data.astype(phi_t.dtype) * xp.log(mu)).sum())


def _prepare(topic_word, doc_topic_prior, dtype, n_iter=1, chunk_nnz=1):
    """φᵀ (W, K) after φ, α and the iteration and chunk sizes are checked."""
    check_doc_topic_prior(doc_topic_prior)
    for name, value, low in (("n_iter", n_iter, 0), ("chunk_nnz", chunk_nnz, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    check_topic_word(topic_word)
    check_prior_totals(topic_word.shape[0], doc_topic_prior)
    xp = array_module(topic_word)
    return xp, xp.ascontiguousarray(topic_word.T, dtype=dtype)


def fold_in(topic_word, counts, doc_topic_prior: float, n_iter: int = FOLD_IN_ITERS,
            chunk_nnz: int = DEFAULT_CHUNK_NNZ, dtype=np.float64):
    """θ̄ (normalised doc-topic weights) of new documents with φ fixed.

    Parameters
    ----------
    topic_word : ndarray (NumPy or CuPy) of shape (n_topics, n_words), rows sum to 1
    counts : sparse matrix of shape (n_docs, n_words), non-negative counts
    doc_topic_prior : float, α > 0
    n_iter : int, expected-count sweeps (see module docstring)

    Returns
    -------
    ndarray of shape (n_docs, n_topics), rows sum to 1, on topic_word's backend.

    Raises
    ------
    TypeError
        ``counts`` is not a sparse matrix.
    ValueError
        Bad φ or α; ``counts`` with another vocabulary size than φ, or failing the input
        gate (:func:`same.data.count_matrix.validate_counts`), one line naming ``counts``.
    """
    xp, phi_t = _prepare(topic_word, doc_topic_prior, dtype, n_iter, chunk_nnz)
    counts = _as_csr(counts, xp, phi_t.shape[0], "counts")
    indptr = to_numpy(counts.indptr)
    out = []
    for a, b in _chunks(indptr, chunk_nnz):
        theta = _fold_in_block(counts[a:b], phi_t, float(doc_topic_prior), n_iter)
        out.append(theta / theta.sum(axis=1, keepdims=True))
    return xp.concatenate(out, axis=0) if out else xp.zeros((0, phi_t.shape[1]), dtype=dtype)


def log_likelihood(topic_word, doc_topic, counts, dtype=np.float64) -> float:
    """Per-token log-likelihood Σ c_dw log Σ_k θ̄_dk φ_kw / Σ c_dw for given θ, φ (nats/token)

    Raises
    ------
    TypeError
        ``counts`` is not a sparse matrix.
    ValueError
        ``counts`` with another vocabulary size than φ, failing the input gate
        (:func:`same.data.count_matrix.validate_counts`, one line naming ``counts``) or holding no
        tokens; φ refused by :func:`check_topic_word`; θ not finite and non-negative, or of
        another shape than (documents, topics).
    """
    check_topic_word(topic_word)
    xp = array_module(topic_word)
    phi_t = xp.ascontiguousarray(topic_word.T, dtype=dtype)
    counts = _as_csr(counts, xp, phi_t.shape[0], "counts")
    n_tokens = float(counts.data.sum())
    if n_tokens <= 0:
        raise ValueError("counts hold no tokens")
    theta = xp.asarray(doc_topic, dtype=dtype)
    if theta.ndim != 2 or not bool(xp.all(xp.isfinite(theta))) or bool(xp.any(theta < 0)):
        raise ValueError("doc_topic must be a 2-D array (documents, topics) of finite, "
                         "non-negative weights")
    return _loglik_block(counts, theta, phi_t) / n_tokens


def heldout_loglik(topic_word, doc_topic_prior: float, observed, heldout,
                   n_iter: int = FOLD_IN_ITERS, chunk_nnz: int = DEFAULT_CHUNK_NNZ,
                   dtype=np.float64) -> float:
    """Document-completion held-out log-likelihood in nats/token (Wallach et al. 2009, document completion).

    Parameters
    ----------
    topic_word : (n_topics, n_words) array, rows sum to 1
    doc_topic_prior : α used to fold θ in
    observed, heldout : sparse (n_test, n_words) counts of the two halves

    Raises
    ------
    TypeError
        ``observed`` or ``heldout`` is not a sparse matrix.
    ValueError
        Bad φ or α; either matrix with another vocabulary size than φ or failing the input
        gate (:func:`same.data.count_matrix.validate_counts`, one line naming it); mismatched shapes,
        or no held-out tokens.
    """
    xp, phi_t = _prepare(topic_word, doc_topic_prior, dtype, n_iter, chunk_nnz)
    observed = _as_csr(observed, xp, phi_t.shape[0], "observed")
    heldout = _as_csr(heldout, xp, phi_t.shape[0], "heldout")
    if observed.shape != heldout.shape:
        raise ValueError(f"observed {observed.shape} and heldout {heldout.shape} differ in shape")
    n_tokens = float(heldout.data.sum())
    if n_tokens <= 0:
        raise ValueError("heldout holds no tokens")
    indptr = to_numpy(observed.indptr) + to_numpy(heldout.indptr)  # chunk on both halves' size
    total = 0.0
    for a, b in _chunks(indptr, chunk_nnz):
        theta = _fold_in_block(observed[a:b], phi_t, float(doc_topic_prior), n_iter)
        total += _loglik_block(heldout[a:b], theta, phi_t, a)
    return total / n_tokens


def bidmach_loglik(topic_word, doc_topic_prior: float, counts, n_inner: int = BIDMACH_INNER,
                   chunk_nnz: int = DEFAULT_CHUNK_NNZ, dtype=np.float64) -> float:
    """BIDMach-style ll in nats/token: θ fitted on the scored tokens (BIDMach ``LDAgibbs.scala`` evalfun).

    ``n_inner`` expected-count sweeps from θ = 1 (BIDMach ``uupdate``), then
    the same tokens are scored (BIDMach ``evalfun``).

    Raises
    ------
    TypeError
        ``counts`` is not a sparse matrix.
    ValueError
        Bad φ or α; ``counts`` with another vocabulary size than φ, failing the input gate
        (:func:`same.data.count_matrix.validate_counts`, one line naming ``counts``), or without tokens.
    """
    xp, phi_t = _prepare(topic_word, doc_topic_prior, dtype, n_inner, chunk_nnz)
    counts = _as_csr(counts, xp, phi_t.shape[0], "counts")
    n_tokens = float(counts.data.sum())
    if n_tokens <= 0:
        raise ValueError("counts hold no tokens")
    total = 0.0
    for a, b in _chunks(to_numpy(counts.indptr), chunk_nnz):
        block = counts[a:b]
        theta = _fold_in_block(block, phi_t, float(doc_topic_prior), n_inner)
        total += _loglik_block(block, theta, phi_t, a)
    return total / n_tokens


def evaluate(topic_word, doc_topic_prior: float, split, n_iter: int = FOLD_IN_ITERS,
             n_inner: int = BIDMACH_INNER, chunk_nnz: int = DEFAULT_CHUNK_NNZ,
             n_particles: int = L2R_PARTICLES, l2r_seed: int = L2R_SEED) -> Evaluation:
    """Score φ on a :class:`~same.data.split.HeldOutSplit` with the three measures.

    topic_word : (n_topics, n_words) float64/float32 array (NumPy or CuPy), rows summing to 1;
    split : its test_observed, test_heldout and test_full are scored; n_iter, n_inner: sweeps of
    document completion and of the BIDMach-style ll; n_particles, l2r_seed: of left-to-right.
    Returns an Evaluation: ll, ll_bidmach, ll_l2r in nats/token, the token counts, settings.

    Raises
    ------
    TypeError
        φ not a dense NumPy or CuPy array (a SciPy sparse matrix: ``toarray()`` it);
        ``split`` not a :class:`~same.data.split.HeldOutSplit` (a path: load it with
        :func:`same.data.split.load_split`).
    ValueError
        φ's vocabulary size differs from the split's, or φ/α invalid (K·α above 2^127:
        :func:`~same.model.heldout_inputs.check_prior_totals`); ``n_particles`` or
        ``l2r_seed`` invalid (one line naming ``n_particles`` or ``seed``); a matrix of the
        split failing the input gate (:func:`same.data.count_matrix.validate_counts`: one line naming
        ``observed``, ``heldout`` or ``counts``, the test documents in full).
    """
    check_topic_word(topic_word)
    check_heldout_split(split)
    if topic_word.shape[1] != split.n_words:
        raise ValueError(f"topic_word has {topic_word.shape[1]} words but split "
                         f"{split.corpus!r} has {split.n_words}: vocabularies do not match")
    ll = heldout_loglik(topic_word, doc_topic_prior, split.test_observed, split.test_heldout,
                        n_iter=n_iter, chunk_nnz=chunk_nnz)
    full = split.test_full
    ll_b = bidmach_loglik(topic_word, doc_topic_prior, full, n_inner=n_inner,
                          chunk_nnz=chunk_nnz)
    ll_l = left_to_right(topic_word, doc_topic_prior, full, n_particles=n_particles,
                         seed=l2r_seed)
    return Evaluation(ll=ll, perplexity=float(np.exp(-ll)), ll_bidmach=ll_b, ll_l2r=ll_l,
                      n_heldout_tokens=int(split.test_heldout.data.sum()),
                      n_test_tokens=int(full.data.sum()), fold_in_iters=n_iter,
                      bidmach_inner=n_inner, l2r_particles=int(n_particles),
                      l2r_seed=int(l2r_seed))
