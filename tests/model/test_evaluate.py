"""The shared evaluator against brute force, and its invariances."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from same.data.split import make_split
from same.data.synthetic import lda_corpus
from same.model import evaluate as ev
from same.model.kernels import sddmm


def random_phi(rng, k, w):
    phi = rng.random((k, w)) + 0.01
    return phi / phi.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def syn():
    return lda_corpus(n_docs=600, n_words=120, n_topics=5, doc_length=80,
                      doc_topic_prior=0.2, topic_word_prior=0.05, seed=11)


@pytest.fixture(scope="module")
def syn_split(syn):
    return make_split(syn.counts, 0.2, seed=0)


def test_sddmm_matches_dense(rng):
    counts = sp.random(30, 40, density=0.2, random_state=1, format="csr")
    theta = rng.random((30, 6))
    phi = rng.random((6, 40))
    mu = sddmm(counts.indptr, counts.indices, theta, np.ascontiguousarray(phi.T))
    rows = np.repeat(np.arange(30), np.diff(counts.indptr))
    np.testing.assert_allclose(mu, (theta @ phi)[rows, counts.indices], rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sddmm_is_dot_f64_bit_for_bit(rng, dtype):
    """Documents of 0..11 nonzeros (the kernel takes them four at a time, then one by one):
    every μ_j equals the per-element dot_f64 (the CUDA kernel's and evaluator's) exactly."""
    from same.model.kernels.elements import dot_f64

    n_docs, n_words, n_topics = 12, 30, 37
    rows = [rng.choice(n_words, size=d, replace=False) for d in range(n_docs)]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    indices = np.concatenate(rows).astype(np.int32)
    theta = (rng.random((n_docs, n_topics)) * 50 + 0.1).astype(dtype)
    phi_t = rng.dirichlet(np.full(n_words, 0.2), size=n_topics).T.astype(dtype)
    phi_t = np.ascontiguousarray(phi_t)
    mu = sddmm(indptr, indices, theta, phi_t)
    doc = np.repeat(np.arange(n_docs), np.diff(indptr))
    expected = np.array([dot_f64(theta[d], phi_t[w]) for d, w in zip(doc, indices)])
    np.testing.assert_array_equal(mu, expected.astype(mu.dtype))


def test_sddmm_rejects_bad_shapes(rng):
    counts = sp.random(3, 4, density=0.5, random_state=1, format="csr")
    with pytest.raises(ValueError, match=r"doc_topic has 2 rows, indptr describes 3 documents"):
        sddmm(counts.indptr, counts.indices, rng.random((2, 5)), rng.random((4, 5)))
    with pytest.raises(ValueError, match=r"doc_topic has K=5, topic_word_t has K=4"):
        sddmm(counts.indptr, counts.indices, rng.random((3, 5)), rng.random((4, 4)))
    with pytest.raises(ValueError, match=r"dtype mismatch"):
        sddmm(counts.indptr, counts.indices, rng.random((3, 5)),
              rng.random((4, 5)).astype(np.float32))


def test_log_likelihood_brute_force(rng):
    """Σ c log Σ θ̄φ / N by explicit loops over a tiny dense corpus."""
    dense = np.array([[2, 0, 1, 0, 3], [0, 1, 0, 4, 0], [1, 1, 1, 1, 1]])
    phi = random_phi(rng, 3, 5)
    theta = rng.random((3, 3))
    total, n = 0.0, 0
    for d in range(3):
        tb = theta[d] / theta[d].sum()
        for w in range(5):
            if dense[d, w]:
                total += dense[d, w] * math.log(sum(tb[k] * phi[k, w] for k in range(3)))
                n += dense[d, w]
    got = ev.log_likelihood(phi, theta, sp.csr_matrix(dense))
    assert got == pytest.approx(total / n, rel=1e-12)


def test_fold_in_is_the_posterior_mode_k2(rng):
    """For K=2 the fold-in fixed point maximises Σ c log(θφ) + α Σ log θ (EM for the mode
    under Dir(α+1)); exact enumeration over a fine grid of the simplex finds the same θ."""
    phi = random_phi(rng, 2, 6)
    doc = sp.csr_matrix(np.array([[3, 0, 1, 5, 2, 1]]))
    alpha = 0.3
    theta = ev.fold_in(phi, doc, alpha, n_iter=5000)[0]
    grid = np.linspace(1e-6, 1 - 1e-6, 200001)
    t = np.stack([grid, 1 - grid], axis=1)
    obj = (doc.toarray()[0] * np.log(t @ phi)).sum(axis=1) + alpha * np.log(t).sum(axis=1)
    best = grid[np.argmax(obj)]
    assert theta[0] == pytest.approx(best, abs=2e-5)
    assert theta.sum() == pytest.approx(1.0)


def test_heldout_loglik_brute_force(syn, syn_split):
    """The held-out ll is the direct formula applied to fold-in θ on the observed half."""
    phi = syn.topic_word
    s = syn_split
    theta = ev.fold_in(phi, s.test_observed, 0.2)
    held = s.test_heldout.toarray()
    direct = (held * np.log(np.where(held > 0, theta @ phi, 1.0))).sum() / held.sum()
    got = ev.heldout_loglik(phi, 0.2, s.test_observed, s.test_heldout)
    assert got == pytest.approx(direct, rel=1e-10)


def test_bidmach_zero_sweeps_is_uniform_theta(syn, syn_split):
    """With no sweeps θ stays uniform, so the score is log of the topic-averaged φ."""
    phi = syn.topic_word
    full = syn_split.test_full
    got = ev.bidmach_loglik(phi, 0.2, full, n_inner=0)
    mix = phi.mean(axis=0)
    dense = full.toarray()
    assert got == pytest.approx((dense * np.log(mix)).sum() / dense.sum(), rel=1e-12)


def test_topic_permutation_changes_nothing(syn, syn_split, rng):
    phi = random_phi(rng, 5, 120)
    perm = rng.permutation(5)
    a = ev.evaluate(phi, 0.1, syn_split)
    b = ev.evaluate(phi[perm], 0.1, syn_split)
    assert b.ll == pytest.approx(a.ll, rel=1e-12)
    assert b.ll_bidmach == pytest.approx(a.ll_bidmach, rel=1e-12)


def test_chunking_changes_nothing(syn, syn_split):
    a = ev.evaluate(syn.topic_word, 0.2, syn_split)
    b = ev.evaluate(syn.topic_word, 0.2, syn_split, chunk_nnz=64)
    assert b.ll == pytest.approx(a.ll, rel=1e-12)
    assert b.ll_bidmach == pytest.approx(a.ll_bidmach, rel=1e-12)


def test_true_topics_beat_uniform_and_random(syn, syn_split, rng):
    true = ev.evaluate(syn.topic_word, 0.2, syn_split)
    uniform = ev.evaluate(np.full((5, 120), 1 / 120), 0.2, syn_split)
    noise = ev.evaluate(random_phi(rng, 5, 120), 0.2, syn_split)
    assert uniform.ll == pytest.approx(-math.log(120), rel=1e-12)
    assert uniform.perplexity == pytest.approx(120, rel=1e-9)
    assert true.ll > noise.ll + 0.5
    assert true.ll > uniform.ll + 0.5
    assert true.perplexity == pytest.approx(math.exp(-true.ll))


def test_float32_phi_accepted(syn, syn_split):
    a = ev.evaluate(syn.topic_word, 0.2, syn_split)
    b = ev.evaluate(syn.topic_word.astype(np.float32), 0.2, syn_split)
    assert b.ll == pytest.approx(a.ll, abs=1e-5)


@pytest.mark.parametrize("mutate, pattern", [
    (lambda p: p * 1.1, r"rows must sum to 1; row 0 sums to 1.1"),
    (lambda p: np.where(np.arange(p.size).reshape(p.shape) == 3, -0.1, p), r"negative entries"),
    (lambda p: np.where(np.arange(p.size).reshape(p.shape) == 3, np.nan, p), r"NaN or inf"),
    (lambda p: p[0], r"must be 2-D"),
])
def test_bad_topic_word(syn, syn_split, mutate, pattern):
    with pytest.raises(ValueError, match=pattern):
        ev.evaluate(mutate(syn.topic_word), 0.2, syn_split)


def test_bad_inputs(syn, syn_split):
    with pytest.raises(ValueError, match=r"topic_word has 119 words but split '<matrix>' has 120"):
        phi = syn.topic_word[:, :119]
        ev.evaluate(phi / phi.sum(1, keepdims=True), 0.2, syn_split)
    for alpha in (0, -1, float("nan"), True, "0.2", 10**400, np.array([0.2])):
        with pytest.raises(ValueError, match=r"doc_topic_prior must be a positive finite number"):
            ev.evaluate(syn.topic_word, alpha, syn_split)
    with pytest.raises(ValueError) as err:  # one short line, even past str()'s 4300 digits
        ev.evaluate(syn.topic_word, -10**5000, syn_split)
    assert str(err.value) == ("doc_topic_prior must be a positive finite number, got "
                              "-an integer of about 5001 digits")
    # a whole number is a number, of any size numpy's isfinite would refuse
    assert ev.evaluate(syn.topic_word, 2**64, syn_split) == ev.evaluate(
        syn.topic_word, float(2**64), syn_split)
    with pytest.raises(TypeError, match=r"counts must be a sparse \(CSR\) matrix, got ndarray"):
        ev.bidmach_loglik(syn.topic_word, 0.2, syn.counts.toarray())
    empty = sp.csr_matrix((3, 120))
    with pytest.raises(ValueError, match=r"heldout holds no tokens"):
        ev.heldout_loglik(syn.topic_word, 0.2, empty, empty)
