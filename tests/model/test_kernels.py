"""Hot-step kernels: the random generator and the Poisson sample-and-accumulate sweep."""

from __future__ import annotations

import os

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from same.model import kernels
from same.model.kernels import cpu


def test_uniforms_are_uniform_and_keyed():
    u = cpu.uniform_draws(200_000, np.uint64(2024))
    assert 0 < u.min() and u.max() < 1
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    v = cpu.uniform_draws(200_000, np.uint64(2025))
    assert abs(np.corrcoef(u, v)[0, 1]) < 5 / np.sqrt(len(u))  # independent streams
    np.testing.assert_array_equal(u, cpu.uniform_draws(200_000, np.uint64(2024)))


@pytest.mark.parametrize("lam", [0.02, 0.7, 3.0, 9.5, 10.0, 12.5, 37.0, 600.0, 5000.0])
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


def test_categorical_choice_is_the_first_prefix_sum_above_x():
    """The pooled events' topic: first k with cum[k] > x, capped at K − 1, on prefix sums
    with plateaus (topics drawn alone add 0), at the plateaus' exact values and beyond."""
    from numba import njit

    from same.model.kernels.elements import _categorical

    @njit
    def choose(xs, cum):
        return np.array([_categorical(x, cum, cum.shape[0]) for x in xs])

    rng = np.random.default_rng(5)
    lam = rng.exponential(size=64) * (rng.random(64) < 0.6)
    cum = np.cumsum(lam)
    xs = np.r_[rng.random(2000) * cum[-1], cum, 0.0, cum[-1] * 1.5]
    expected = np.minimum(np.searchsorted(cum, xs, side="right"), 63)
    np.testing.assert_array_equal(choose(xs, cum), expected)


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
    T = np.empty(theta.shape, dtype=np.int32)
    P = np.empty(phi_t.shape, dtype=np.int32)
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
        T = np.empty(theta.shape, dtype=np.int32)
        kernels.sample_accumulate(counts.indptr, counts.indices, counts.data, theta, phi_t, mu,
                                  20.0, key, T)
        outs.append(T)
    np.testing.assert_array_equal(outs[0], outs[1])
    assert np.abs(outs[0] - outs[2]).sum() > 0


def test_sweep_does_not_depend_on_thread_count():
    counts, theta, phi_t = _problem(2, n_docs=300)
    mu = kernels.sddmm(counts.indptr, counts.indices, theta, phi_t)

    def sweep():
        T = np.empty(theta.shape, dtype=np.int32)
        P = np.empty(phi_t.shape, dtype=np.int32)
        kernels.sample_accumulate(counts.indptr, counts.indices, counts.data, theta, phi_t,
                                  mu, 30.0, 99, T, P)
        return T, P

    assert_same_at_one_and_all_threads(sweep)


def assert_same_at_one_and_all_threads(f):
    """f() gives bit-identical arrays with 1 numba thread and with all of them."""
    before = cpu.set_threads(None)
    try:
        res = []
        for n in (1, before):
            cpu.set_threads(n)
            res.append(f())
    finally:
        cpu.set_threads(before)
    for a, b in zip(*res):
        np.testing.assert_array_equal(a, b)


def test_sample_accumulate_rejects_bad_arguments():
    counts, theta, phi_t = _problem()
    mu = kernels.sddmm(counts.indptr, counts.indices, theta, phi_t)
    T = np.empty(theta.shape, dtype=np.int32)
    with pytest.raises(ValueError, match=r"doc_topic_out has dtype float32, expected kind 'i'"):
        kernels.sample_accumulate(counts.indptr, counts.indices, counts.data, theta, phi_t, mu,
                                  1.0, 1, T.astype(np.float32))
    with pytest.raises(ValueError, match=r"n_samples must be a positive finite number, got 0"):
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


def _summed_expectations(counts, theta, phi_t, m):
    mu = counts.multiply(0).tocsr()
    mu = kernels.sddmm(counts.indptr, counts.indices, theta, phi_t)
    ratio = sp.csr_matrix((counts.data / mu, counts.indices, counts.indptr), shape=counts.shape)
    return m * theta * (ratio @ phi_t), m * phi_t * (ratio.T @ theta), ratio


@pytest.mark.parametrize("m", [0.3, 20.0, 400.0])
def test_summed_kernels_match_expectation(m):
    """One T sweep and one P sweep of the fused summed kernels: each count is Poisson with the
    summed rate (5.5 standard deviations per entry); the θ update is T/s + α exactly."""
    counts, theta, phi_t = _problem(3, n_docs=80)
    ET, _, _ = _summed_expectations(counts, theta, phi_t, m)
    th = theta.copy()
    ratio = np.empty(counts.nnz, dtype=np.float32)
    kernels.summed_t_sweeps(counts, th, phi_t, m, 2.0, 0.1, [77], ratio)
    T = (th - 0.1) * 2.0
    np.testing.assert_allclose(T, np.round(T), atol=1e-3)
    z = (T - ET) / np.sqrt(np.maximum(ET, 1e-12))
    assert np.abs(z[ET > 0.5]).max() < 5.5
    # ratio holds c/μ with the updated θ; the P sweep uses it
    _, EP, r = _summed_expectations(counts, th, phi_t, m)
    np.testing.assert_allclose(ratio, r.data, rtol=1e-5)
    P = np.empty(phi_t.shape, dtype=np.int32)
    kernels.summed_p_sweep(counts, ratio, th, phi_t, m, 78, P)
    z = (P - EP) / np.sqrt(np.maximum(EP, 1e-12))
    assert np.abs(z[EP > 0.5]).max() < 5.5
    assert abs(P.sum() - m * counts.data.sum()) < 5 * np.sqrt(m * counts.data.sum())


def test_summed_kernels_do_not_depend_on_thread_count():
    counts, theta, phi_t = _problem(4, n_docs=300)

    def sweeps():
        th = theta.copy()
        ratio = np.empty(counts.nnz, dtype=np.float32)
        P = np.empty(phi_t.shape, dtype=np.int32)
        kernels.summed_t_sweeps(counts, th, phi_t, 50.0, 1.0, 0.1, [5, 6], ratio)
        kernels.summed_p_sweep(counts, ratio, th, phi_t, 50.0, 7, P)
        return th, P

    assert_same_at_one_and_all_threads(sweeps)


def test_summed_t_block_equals_the_per_nonzero_form_for_any_ranges():
    """The CPU's blocked T sweeps (μ for all of a document's nonzeros at once) give the very
    θ and c/μ of the per-nonzero form the GPU runs (elements.summed_t_doc, called here as a
    compiled loop), for any split of the documents into ranges; μ equals dot_seq bit for bit."""
    from numba import njit

    from same.model.kernels import elements

    @njit
    def per_nonzero(indptr, indices, data, theta, phi_t, keys, ratio_out):
        K = theta.shape[1]
        acc, cum = np.empty(K, np.float32), np.empty(K)
        guide, t_row = np.empty(K, np.int64), np.empty(K, np.int32)
        for d in range(indptr.shape[0] - 1):
            elements.summed_t_doc(d, indptr, indices, data, theta, phi_t, 30.0, 1.0, 0.1, keys,
                                  ratio_out, kernels.POOL, acc, cum, guide, t_row)

    counts, theta, phi_t = _problem(5, n_docs=120)
    keys = np.array([11, 12, 13], dtype=np.uint64)
    want_th, want_r = theta.copy(), np.empty(counts.nnz, dtype=np.float32)
    per_nonzero(counts.indptr, counts.indices, counts.data, want_th, phi_t, keys, want_r)
    for n_ranges in (1, 3, 120):
        th, r = theta.copy(), np.empty(counts.nnz, dtype=np.float32)
        cpu.summed_t_sweeps_csr(counts.indptr, counts.indices, counts.data, th, phi_t, 30.0, 1.0,
                                0.1, keys, r, kernels.POOL, cpu.doc_ranges(counts.indptr, n_ranges),
                                np.empty(0, dtype=np.uint64), th)
        assert np.array_equal(th, want_th) and np.array_equal(r, want_r)
    mu = np.empty(counts.indptr[1], dtype=np.float32)
    row = counts.indices[:counts.indptr[1]]
    elements.mu_columns(theta[0], np.ascontiguousarray(phi_t[row].T), len(row), mu)
    assert np.array_equal(mu, [elements.dot_seq(theta[0], phi_t[w]) for w in row])


def test_incnorm_matches_its_definition():
    rng = np.random.default_rng(0)
    phi_t = rng.dirichlet(np.full(50, 0.5), size=6).T.astype(np.float32).copy()
    P = rng.poisson(3.0, size=phi_t.shape).astype(np.int32)
    row_total = np.full(6, 40.0, dtype=np.float32)
    s, beta, rho = 2.0, 0.1, 0.3
    hat = P / s + beta
    rt = (1 - rho) * 40.0 + rho * hat.sum(axis=0)
    want = (1 - rho) * phi_t + rho * hat / rt
    want /= want.sum(axis=0)
    got_phi, got_rt = kernels.incnorm(phi_t.copy(), P, row_total, s, beta, rho)
    np.testing.assert_allclose(got_rt, rt, rtol=1e-6)
    np.testing.assert_allclose(got_phi, want, rtol=1e-5)
    np.testing.assert_allclose(got_phi.sum(axis=0), 1, rtol=1e-5)


def test_incnorm_on_an_array_library_computes_as_the_cpu_kernel(monkeypatch):
    """Issue 40 item 7: the CuPy path of IncNorm (run here on NumPy, the path taken where the
    fused CPU kernel is not) computes as cpu.incnorm_t: exact Σ P, float64 blend and
    normalisations. Only the float64 sums' order differs (≈1e-16 relative), which can flip
    a float32 rounding; so every cell is within one float32 ulp of the CPU's, and almost all
    are equal (in float32 arithmetic, as before, every cell differed: ≤ 5.2e-6 relative)."""
    rng = np.random.default_rng(3)
    W, K = 2000, 64
    phi_t = rng.dirichlet(np.full(W, 0.05), size=K).T.astype(np.float32).copy()
    P = rng.poisson(rng.gamma(0.3, 4.0, size=(W, K))).astype(np.int32)
    row_total = rng.uniform(50, 500, size=K).astype(np.float32)
    args = (100.0, 0.1, 0.37)
    cpu_phi, cpu_rt = kernels.incnorm(phi_t.copy(), P, row_total.copy(), *args)
    monkeypatch.setattr(kernels, "_cpu", lambda xp: False)
    lib_phi, lib_rt = kernels.incnorm(phi_t.copy(), P, row_total.copy(), *args)
    assert lib_phi.dtype == np.float32 and lib_rt.dtype == np.float32
    np.testing.assert_array_equal(lib_rt, cpu_rt)
    ulps = np.abs(lib_phi.view(np.int32).astype(np.int64) - cpu_phi.view(np.int32))
    assert ulps.max() <= 1
    assert (ulps == 0).mean() >= 0.999, (ulps != 0).sum()


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_rates_raise_instead_of_hanging(bad):
    counts, theta, phi_t = _problem()
    phi_t = phi_t.copy()
    phi_t[3, 2] = bad
    mu = np.ones(counts.nnz, dtype=np.float32)
    T = np.empty(theta.shape, dtype=np.int32)
    with pytest.raises(ValueError, match=r"topic_word contains NaN or infinite values: refusing"):
        kernels.sample_accumulate(counts.indptr, counts.indices, counts.data, theta, phi_t, mu,
                                  5.0, 1, T)
    with pytest.raises(ValueError, match=r"topic_word contains NaN or infinite values"):
        kernels.summed_t_sweeps(counts, theta.copy(), phi_t, 5.0, 1.0, 0.1, [1],
                                np.empty(counts.nnz, dtype=np.float32))
    with pytest.raises(ValueError, match=r"lam contains NaN or infinite values"):
        kernels.poisson(np.array([1.0, np.nan]), 3)
    # and the per-element sampler itself returns (0) instead of looping on a NaN rate
    assert cpu.poisson_draws(np.array([np.nan, np.inf, -1.0]), np.uint64(1)).tolist() == [0, 0, 0]


def test_nan_in_model_state_raises_from_the_estimator():
    from same.model.sampler import SameLDA

    counts, _, _ = _problem()
    model = SameLDA(n_components=3, n_copies=5, max_iter=1, random_state=0).fit(counts)
    model._state.topic_word_t[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        model.partial_fit(counts)


def test_fused_carry_draw_equals_a_second_call():
    """The carried θ drawn inside the T sweeps' call (carry_key) is the θ a second call with
    that key on a copy of the last θ gives, and θ and the ratios are left as without it."""
    counts, theta, phi_t = _problem(6, n_docs=90)
    th, r = theta.copy(), np.empty(counts.nnz, dtype=np.float32)
    kernels.summed_t_sweeps(counts, th, phi_t, 40.0, 1.0, 0.1, [3, 4], r)
    want_carry = th.copy()
    kernels.summed_t_sweeps(counts, want_carry, phi_t, 40.0, 1.0, 0.1, [99],
                            np.empty_like(r))
    th2, r2, carry = theta.copy(), np.empty_like(r), np.empty_like(theta)
    kernels.summed_t_sweeps(counts, th2, phi_t, 40.0, 1.0, 0.1, [3, 4], r2, carry_key=99,
                            carry_out=carry)
    assert np.array_equal(th2, th) and np.array_equal(r2, r)
    assert np.array_equal(carry, want_carry) and not np.array_equal(carry, th)
    with pytest.raises(ValueError, match=r"carry_out must be an array of shape \(90, 6\)"):
        kernels.summed_t_sweeps(counts, th2, phi_t, 40.0, 1.0, 0.1, [3], r2, carry_key=1)


def test_kernel_cache_follows_an_edit_of_the_per_element_code(tmp_path):
    """numba stamps a cached function with its own file only; cpu.py's kernels inline
    elements.py's code, so an edit of elements.py alone must still invalidate them
    (same.model.kernels._cache). A copy of the package: compile, reload from cache, edit the
    generator's constant in elements.py, and the cached cpu.py kernel must follow."""
    import json
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    import same

    pkg = tmp_path / "same"
    shutil.copytree(Path(same.__file__).parent, pkg,
                    ignore=shutil.ignore_patterns("__pycache__"))
    code = ("import json, numpy as np\nfrom same.model.kernels import cpu\n"
            "u = cpu.uniform_draws(4, np.uint64(7))\n"
            "print(json.dumps({'u': u.tolist(), "
            "'hits': sum(cpu.uniform_draws.stats.cache_hits.values())}))")

    def draws():
        out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                             text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)})
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    first, again = draws(), draws()
    assert (first["hits"], again["hits"]) == (0, 1)  # compiled, then loaded from the cache
    assert again["u"] == first["u"]
    src = pkg / "model" / "kernels" / "elements.py"
    text = src.read_text()
    assert text.count("0x9E3779B97F4A7C15") == 1  # SplitMix64's γ, defined once
    src.write_text(text.replace("0x9E3779B97F4A7C15", "0x9E3779B97F4A7C17"))
    edited = draws()
    assert edited["hits"] == 0 and edited["u"] != first["u"]  # recompiled from the new code
