"""Hot-step kernels: the random generator and the Poisson sample-and-accumulate sweep."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from same import kernels
from same.kernels import cpu


def test_uniforms_are_uniform_and_keyed():
    u = cpu.uniform_draws(200_000, np.uint64(2024))
    assert 0 < u.min() and u.max() < 1
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    v = cpu.uniform_draws(200_000, np.uint64(2025))
    assert abs(np.corrcoef(u, v)[0, 1]) < 5 / np.sqrt(len(u))  # independent streams
    np.testing.assert_array_equal(u, cpu.uniform_draws(200_000, np.uint64(2024)))


@pytest.mark.parametrize("lam", [0.02, 0.7, 3.0, 9.5, 10.0, 37.0, 600.0])
def test_poisson_draws_match_the_pmf(lam):
    """Chi-square goodness of fit over both code paths (inversion < 10 ≤ PTRS)."""
    n = 200_000
    z = cpu.poisson_draws(np.full(n, lam), np.uint64(int(lam * 1000) + 17))
    lo, hi = stats.poisson.ppf([1e-6, 1 - 1e-6], lam).astype(int)
    edges = np.arange(lo, hi + 2)
    observed = np.histogram(z, bins=np.r_[-np.inf, edges[1:-1] - 0.5, np.inf])[0]
    expected = np.diff(np.r_[0.0, stats.poisson.cdf(edges[1:-1] - 1, lam), 1.0]) * n
    keep = expected >= 5
    obs = np.r_[observed[keep], observed[~keep].sum()]
    exp = np.r_[expected[keep], expected[~keep].sum()]
    if exp[-1] < 5:  # fold a tiny remainder into the last kept cell
        obs, exp = obs[:-1], exp[:-1]
        obs[-1] += observed[~keep].sum()
        exp[-1] += expected[~keep].sum()
    assert stats.chisquare(obs, exp).pvalue > 1e-4
    # mean within 5 standard errors
    assert abs(z.mean() - lam) < 5 * np.sqrt(lam / n)


def _problem(seed=0, n_docs=40, n_words=30, n_topics=6):
    rng = np.random.default_rng(seed)
    counts = sp.random(n_docs, n_words, density=0.3, random_state=seed, format="csr",
                       data_rvs=lambda k: rng.integers(1, 5, size=k)).astype(np.float32)
    counts.sort_indices()
    theta = rng.dirichlet(np.full(n_topics, 0.5), size=n_docs).astype(np.float32) + 0.01
    phi = rng.dirichlet(np.full(n_words, 0.3), size=n_topics)
    phi_t = np.ascontiguousarray(phi.T.astype(np.float32))
    return counts, theta, phi_t


@pytest.mark.parametrize("pool", [0.0, kernels.POOL, 1e9], ids=["direct", "mixed", "pooled"])
@pytest.mark.parametrize("m", [0.5, 7.0, 100.0])
def test_accumulated_counts_match_expectation(monkeypatch, pool, m):
    """E[T_dk] = m Σ_w c_dw θ_dk φ_kw / μ_dw and E[P_kw] = m Σ_d (same); each entry is a sum
    of independent Poissons, hence Poisson: |T − E T| ≤ 5.5 √E T for every entry
    (per-entry two-sided p < 4e-8; a few hundred entries). The grand total is
    Poisson(m · tokens)."""
    monkeypatch.setattr(kernels, "POOL", pool)
    counts, theta, phi_t = _problem()
    mu = kernels.sddmm(counts.indptr, counts.indices, theta, phi_t)
    T = np.empty_like(theta)
    P = np.empty_like(phi_t)
    kernels.sample_accumulate(counts.indptr, counts.indices, counts.data, theta, phi_t, mu, m,
                              key=12345 + int(m), doc_topic_out=T, topic_word_out=P)
    ratio = sp.csr_matrix((counts.data / mu, counts.indices, counts.indptr), shape=counts.shape)
    ET = m * theta * (ratio @ phi_t)
    EP = m * phi_t * (ratio.T @ theta)
    assert np.all(T == np.round(T)) and T.min() >= 0
    for got, exp in ((T, ET), (P, EP)):
        z = (got - exp) / np.sqrt(np.maximum(exp, 1e-12))
        assert np.abs(z[exp > 0.5]).max() < 5.5
    tokens = counts.data.sum()
    assert T.sum() == P.sum()
    assert abs(T.sum() - m * tokens) < 5 * np.sqrt(m * tokens)


def test_sweep_is_deterministic_per_key_and_fresh_across_keys():
    counts, theta, phi_t = _problem(1)
    mu = kernels.sddmm(counts.indptr, counts.indices, theta, phi_t)
    outs = []
    for key in (7, 7, 8):
        T = np.empty_like(theta)
        kernels.sample_accumulate(counts.indptr, counts.indices, counts.data, theta, phi_t, mu,
                                  20.0, key, T)
        outs.append(T)
    np.testing.assert_array_equal(outs[0], outs[1])
    assert np.abs(outs[0] - outs[2]).sum() > 0


def test_sweep_does_not_depend_on_thread_count():
    counts, theta, phi_t = _problem(2, n_docs=300)
    mu = kernels.sddmm(counts.indptr, counts.indices, theta, phi_t)
    res = []
    before = cpu.set_threads(None)
    try:
        for n in (1, before):
            cpu.set_threads(n)
            T, P = np.empty_like(theta), np.empty_like(phi_t)
            kernels.sample_accumulate(counts.indptr, counts.indices, counts.data, theta, phi_t,
                                      mu, 30.0, 99, T, P)
            res.append((T, P))
    finally:
        cpu.set_threads(before)
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])


def test_sample_accumulate_rejects_bad_arguments():
    counts, theta, phi_t = _problem()
    mu = kernels.sddmm(counts.indptr, counts.indices, theta, phi_t)
    T = np.empty_like(theta)
    with pytest.raises(ValueError, match=r"n_samples must be > 0, got 0"):
        kernels.sample_accumulate(counts.indptr, counts.indices, counts.data, theta, phi_t, mu,
                                  0, 1, T)
    with pytest.raises(ValueError, match=r"doc_topic_out must have shape"):
        kernels.sample_accumulate(counts.indptr, counts.indices, counts.data, theta, phi_t, mu,
                                  1.0, 1, T[1:])
    with pytest.raises(ValueError, match=r"one entry per nonzero"):
        kernels.sample_accumulate(counts.indptr, counts.indices, counts.data, theta, phi_t,
                                  mu[1:], 1.0, 1, T)


def test_doc_ranges_cover_all_documents():
    indptr = np.array([0, 5, 5, 9, 30, 31, 40])
    for n in (1, 2, 3, 6):
        b = cpu.doc_ranges(indptr, n)
        assert b[0] == 0 and b[-1] == 6 and len(b) == n + 1
        assert np.all(np.diff(b) >= 0)
