"""The left-to-right estimator (same.model.lefttoright): unbiased against exact enumeration, exact on
one token, deterministic and thread-independent, gated, and wired into evaluate() and traces."""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import gammaln, logsumexp

from same.data.split import make_split
from same.data.synthetic import lda_corpus
from same.model import evaluate as ev
from same.model.lefttoright import (
    DEFAULT_PARTICLES,
    DEFAULT_SEED,
    left_to_right,
    left_to_right_docs,
    relative_se,
)

# --------------------------------------------------------------------------- exact enumeration

N_CASES = 24
#: Particles per exact case: the Monte Carlo standard error of the mean weight is then at most
#: about 2 % of p for the cases below, so a bias of ~8 % or more would fail every case.
EXACT_PARTICLES = 4000
#: Each case must lie within 3 Monte Carlo standard errors of the exact p (issue 37's bound;
#: 0.27 % two-sided per case for an unbiased estimator, ~6 % that some one of 24 independent
#: cases would miss under a fresh choice of seeds: a Bonferroni bound at 1 % overall would be
#: z ≈ 3.53). The draws are seeded, so the test is deterministic, and its seeds give a largest
#: |z| of 2.25 over the 24 cases.  The standard error is the exact one, sd(W)/√R with sd(W)
#: enumerated (:func:`exact_moments`), not the sample sd: a rare path of large weight that no
#: particle happened to take leaves a sample sd of 0 (seen on a φ with entries ~1e-14).
Z = 3.0


def exact_log_p(phi: np.ndarray, alpha: float, tokens: np.ndarray) -> float:
    """log p(w | φ, α) = log Σ_z Π_n φ_{z_n, w_n} · DirMult(z | α), over all K^N assignments,
    DirMult(z | α) = Γ(Kα)/Γ(N + Kα) Π_k Γ(n_k + α)/Γ(α) (θ integrated out)."""
    n_topics, n = phi.shape[0], len(tokens)
    z = np.array(list(itertools.product(range(n_topics), repeat=n)), dtype=np.int64)  # (K^N, N)
    log_lik = np.log(phi[z, tokens[None, :]]).sum(axis=1)
    nk = (z[:, :, None] == np.arange(n_topics)).sum(axis=1)  # (K^N, K)
    log_prior = (gammaln(n_topics * alpha) - gammaln(n + n_topics * alpha)
                 + (gammaln(nk + alpha) - gammaln(alpha)).sum(axis=1))
    return float(logsumexp(log_lik + log_prior))


def exact_moments(phi: np.ndarray, alpha: float, tokens: np.ndarray) -> tuple[float, float]:
    """(E[W], E[W²]) of one particle's weight, by enumerating the sampler's own paths: each
    assignment z has proposal probability Π_n φ_{z_n,w_n}(n_{z_n} + α)/s_n and weight
    W(z) = Π_n s_n/(n − 1 + Kα), s_n = Σ_k φ_{k,w_n}(n_k + α)."""
    n_topics, n = phi.shape[0], len(tokens)
    z = np.array(list(itertools.product(range(n_topics), repeat=n)), dtype=np.int64)
    rows = np.arange(len(z))
    nk = np.full((len(z), n_topics), alpha)
    q, w = np.ones(len(z)), np.ones(len(z))
    for i, word in enumerate(tokens):
        s = nk @ phi[:, word]
        q *= phi[z[:, i], word] * nk[rows, z[:, i]] / s
        w *= s / (i + n_topics * alpha)
        nk[rows, z[:, i]] += 1
    assert q.sum() == pytest.approx(1.0, rel=1e-12)
    return float((q * w).sum()), float((q * w * w).sum())


def _case(i: int):
    rng = np.random.default_rng(1000 + i)
    n_topics = int(rng.integers(2, 4))  # K = 1 and N = 1 are exact: tested apart
    n_words = int(rng.integers(2, 7))
    n_tokens = int(rng.integers(2, 9))
    alpha = float(rng.uniform(0.05, 2.0))
    phi = rng.dirichlet(np.full(n_words, float(rng.uniform(0.1, 1.0))), size=n_topics)
    doc = np.bincount(rng.integers(0, n_words, size=n_tokens), minlength=n_words)
    return phi, alpha, doc


def test_exact_cases_cover_the_settings():
    cases = [_case(i) for i in range(N_CASES)]
    assert {phi.shape[0] for phi, _, _ in cases} == {2, 3}
    assert max(doc.sum() for _, _, doc in cases) == 8


@pytest.mark.parametrize("i", range(N_CASES))
def test_mean_weight_is_unbiased_against_exact_enumeration(i):
    """E[W] = p(w | φ, α) (checked exactly by enumerating the sampler's paths), and the mean
    of R sampled weights lies within Z Monte Carlo standard errors sd(W)/√R of the exact p;
    log p̂ correspondingly close to log p."""
    phi, alpha, doc = _case(i)
    tokens = np.repeat(np.arange(len(doc)), doc)  # the estimator's order: words ascending
    log_p = exact_log_p(phi, alpha, tokens)
    mean_w, mean_w2 = exact_moments(phi, alpha, tokens)
    assert math.log(mean_w) == pytest.approx(log_p, abs=1e-12)  # the sampler's identity
    se = math.sqrt(max(mean_w2 / mean_w ** 2 - 1.0, 0.0) / EXACT_PARTICLES)  # relative SE
    assert se < 0.025  # the test has power: a bias of 8 % would be > Z SE in every case
    est, log_w = left_to_right_docs(phi, alpha, sp.csr_matrix(doc[None, :]),
                                    n_particles=EXACT_PARTICLES, seed=i)
    w = np.exp(log_w[0] - log_p)  # weights in units of the exact p
    assert abs(w.mean() - 1.0) <= Z * se, (i, w.mean(), se)
    # log p̂ − log p = log(mean w), within the same bound to first order
    assert abs(est[0] - log_p) <= Z * se + (Z * se) ** 2 + 1e-12
    assert relative_se(log_w)[0] == pytest.approx(w.std(ddof=1) / math.sqrt(EXACT_PARTICLES)
                                                  / w.mean(), rel=1e-9, abs=1e-15)


def test_one_topic_is_exact():
    """K = 1: every weight is Π_n φ_{w_n}, the exact p, whatever R."""
    phi = np.array([[0.1, 0.2, 0.3, 0.4]])
    doc = np.array([[2, 0, 1, 3]])
    log_p, log_w = left_to_right_docs(phi, 0.7, sp.csr_matrix(doc), n_particles=7, seed=3)
    exact = float((doc[0] * np.log(phi[0])).sum())
    assert np.all(log_w == log_w[0, 0])
    assert log_p[0] == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize("n_particles", [1, 2, 13])
def test_single_token_document_is_exact(n_particles):
    """One token w: q_1 = Σ_k φ_kw (0 + α)/(0 + Kα) = mean_k φ_kw = p(w), for every particle."""
    rng = np.random.default_rng(5)
    phi = rng.dirichlet(np.full(9, 0.3), size=4)
    counts = sp.csr_matrix(([1, 1], ([0, 1], [2, 7])), shape=(2, 9))
    log_p, log_w = left_to_right_docs(phi, 0.37, counts, n_particles=n_particles, seed=11)
    assert np.all(log_w == log_w[:, :1])  # every particle's weight equal, bit for bit
    np.testing.assert_allclose(log_p, np.log(phi[:, [2, 7]].mean(axis=0)), rtol=1e-13)
    np.testing.assert_allclose(log_w[:, 0], log_p, rtol=1e-13)


def test_uniform_topics_score_minus_log_w(rng):
    """φ uniform: every q_n = 1/W whatever the assignments, so ll_l2r = −log W."""
    counts = sp.random(20, 30, density=0.3, random_state=2, format="csr")
    counts.data = np.ceil(counts.data * 4)
    ll = left_to_right(np.full((3, 30), 1 / 30), 0.2, counts, n_particles=5)
    assert ll == pytest.approx(-math.log(30), rel=1e-12)


def test_per_token_ll_is_the_documents_sum_over_tokens():
    """ll = Σ_d log p̂_d / N; an empty document contributes log 1 = 0."""
    syn = lda_corpus(n_docs=30, n_words=40, n_topics=3, doc_length=20, seed=4)
    counts = sp.vstack([syn.counts, sp.csr_matrix((1, 40))]).tocsr()  # a last empty document
    log_p, log_w = left_to_right_docs(syn.topic_word, 0.3, counts, n_particles=6, seed=2)
    assert log_p[-1] == 0.0 and np.all(log_w[-1] == 0.0)
    np.testing.assert_allclose(log_p, logsumexp(log_w, axis=1) - math.log(6), rtol=1e-12)
    ll, log_w2 = left_to_right(syn.topic_word, 0.3, counts, n_particles=6, seed=2,
                               return_weights=True)
    assert ll == pytest.approx(log_p.sum() / counts.sum(), rel=1e-12)
    np.testing.assert_array_equal(log_w2, log_w)


# --------------------------------------------------------------------------- determinism


@pytest.fixture(scope="module")
def syn():
    return lda_corpus(n_docs=300, n_words=100, n_topics=5, doc_length=60,
                      doc_topic_prior=0.2, topic_word_prior=0.05, seed=11)


def test_same_seed_same_result_other_seed_differs(syn):
    a = left_to_right_docs(syn.topic_word, 0.2, syn.counts, n_particles=8, seed=5)
    b = left_to_right_docs(syn.topic_word, 0.2, syn.counts, n_particles=8, seed=5)
    c = left_to_right_docs(syn.topic_word, 0.2, syn.counts, n_particles=8, seed=6)
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[1], c[1])
    assert left_to_right(syn.topic_word, 0.2, syn.counts, seed=5) == \
        left_to_right(syn.topic_word, 0.2, syn.counts, seed=5)
    assert left_to_right(syn.topic_word, 0.2, syn.counts, seed=5) != \
        left_to_right(syn.topic_word, 0.2, syn.counts, seed=6)


def test_thread_count_changes_nothing(syn):
    import numba

    from same.model.kernels.cpu import set_threads

    before = set_threads(None)
    out = []
    try:
        for n in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            set_threads(n)
            out.append(left_to_right_docs(syn.topic_word, 0.2, syn.counts, n_particles=9,
                                          seed=1))
    finally:
        set_threads(before)
    np.testing.assert_array_equal(out[0][1], out[1][1])
    np.testing.assert_array_equal(out[0][0], out[1][0])


def test_float32_phi_and_float_counts_accepted(syn):
    a = left_to_right(syn.topic_word, 0.2, syn.counts, n_particles=4)
    b = left_to_right(syn.topic_word.astype(np.float32), 0.2, syn.counts, n_particles=4)
    c = left_to_right(syn.topic_word, 0.2, syn.counts.astype(np.float64), n_particles=4)
    assert b == pytest.approx(a, abs=1e-3)
    assert c == a


# --------------------------------------------------------------------------- the input gate

ONE = sp.csr_matrix(np.array([[1, 0, 2]]))
PHI = np.full((2, 3), 1 / 3)


@pytest.mark.parametrize("kwargs, message", [
    ({"doc_topic_prior": -1.0}, "doc_topic_prior must be a positive finite number, got -1.0"),
    ({"doc_topic_prior": float("nan")}, "doc_topic_prior must be a positive finite number, "
                                        "got nan"),
    ({"topic_word": PHI * 1.1}, "topic_word rows must sum to 1; row 0 sums to 1.1"),
    ({"topic_word": np.array([[0.5, 0.7, -0.2], [1 / 3] * 3])},
     "topic_word contains negative entries"),
    ({"counts": sp.csr_matrix(np.array([[1, -1, 2]]))},
     "Negative values in data passed to the count matrix counts."),
    ({"counts": sp.csr_matrix(np.array([[1.0, 0.5, 2.0]]))},
     "counts must hold whole numbers for the left-to-right estimate; document 0, word 1 has "
     "0.5"),
    ({"counts": sp.csr_matrix(np.ones((1, 4)))}, "counts has 4 words but topic_word has 3"),
    ({"counts": sp.csr_matrix((2, 3))}, "counts hold no tokens"),
    ({"topic_word": np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])},
     "topic_word gives word 2 of document 0 probability 0 under every topic: its "
     "log-likelihood would be -inf. Smooth φ (a topic-word prior β > 0) before scoring"),
    ({"n_particles": 0}, "n_particles must be an integer >= 1, got 0"),
    ({"n_particles": 2.0}, "n_particles must be an integer >= 1, got 2.0"),
    ({"n_particles": True}, "n_particles must be an integer >= 1, got True"),
    ({"seed": 1.5}, "seed must be an integer, got 1.5"),
    ({"seed": None}, "seed must be an integer, got None"),
])
def test_bad_input_one_line_naming_the_parameter(kwargs, message):
    args = {"topic_word": PHI, "doc_topic_prior": 0.1, "counts": ONE, **kwargs}
    with pytest.raises(ValueError) as info:
        left_to_right(**args)
    assert str(info.value) == message
    assert "\n" not in str(info.value)


def test_bad_types():
    with pytest.raises(TypeError, match=r"^counts must be a sparse \(CSR\) matrix, got ndarray$"):
        left_to_right(PHI, 0.1, ONE.toarray())
    with pytest.raises(TypeError, match=r"^topic_word must be a NumPy or CuPy array"):
        left_to_right(PHI.tolist(), 0.1, ONE)


def test_document_too_long_for_the_counters():
    counts = sp.csr_matrix(np.array([[1, 0, 0], [2 ** 31, 2 ** 31, 0]], dtype=np.int64))
    with pytest.raises(ValueError, match=r"^counts: document 1 holds 4294967296 tokens; the "
                                         r"left-to-right estimate takes fewer than 2\^32 per "
                                         r"document$"):
        left_to_right(PHI, 0.1, counts)


def test_relative_se_checks_its_input():
    assert relative_se(np.zeros((3, 1))).tolist() == [0.0, 0.0, 0.0]
    assert relative_se(np.log([[1.0, 1.0, 1.0]]))[0] == 0.0
    with pytest.raises(ValueError, match="log_weights must be a finite 2-D array"):
        relative_se(np.zeros(3))


# --------------------------------------------------------------------------- evaluate, traces


def test_evaluate_adds_ll_l2r_and_leaves_the_others_unchanged(syn):
    split = make_split(syn.counts, 0.2, seed=0)
    phi, alpha = syn.topic_word, 0.2
    e = ev.evaluate(phi, alpha, split)
    assert e.ll == ev.heldout_loglik(phi, alpha, split.test_observed, split.test_heldout)
    assert e.ll_bidmach == ev.bidmach_loglik(phi, alpha, split.test_full)
    assert e.ll_l2r == left_to_right(phi, alpha, split.test_full, n_particles=DEFAULT_PARTICLES,
                                     seed=DEFAULT_SEED)
    assert (e.l2r_particles, e.l2r_seed) == (ev.L2R_PARTICLES, ev.L2R_SEED) == (
        DEFAULT_PARTICLES, DEFAULT_SEED)
    assert e.as_dict()["ll_l2r"] == e.ll_l2r
    # the true topics beat uniform ones under this measure too
    assert e.ll_l2r > ev.evaluate(np.full_like(phi, 1 / phi.shape[1]), alpha, split).ll_l2r
    f = ev.evaluate(phi, alpha, split, n_particles=3, l2r_seed=9)
    assert (f.ll, f.ll_bidmach) == (e.ll, e.ll_bidmach)
    assert f.ll_l2r == left_to_right(phi, alpha, split.test_full, n_particles=3, seed=9)
    assert (f.l2r_particles, f.l2r_seed) == (3, 9)
    with pytest.raises(ValueError, match=r"^n_particles must be an integer >= 1, got 0$"):
        ev.evaluate(phi, alpha, split, n_particles=0)


def test_runner_writes_ll_l2r(tmp_path, split_path):
    """A fit's trace.csv has the ll_l2r column after ll_bidmach, each value the evaluator's
    left-to-right ll of that checkpoint; meta.json records the particles and seed; the
    checked reader accepts it, and still accepts a trace written before the column."""
    from same.experiments.rundir import LEGACY_TRACE_COLUMNS, TRACE_COLUMNS, check_trace, seal_meta
    from same.experiments.runner import RunSpec, run, score_model

    spec = RunSpec(method="same", n_components=3, doc_topic_prior=0.1, topic_word_prior=0.1,
                   seed=0, budget=2, params={"n_copies": 5})
    out = run(spec, split_path, tmp_path / "run", progress=False)
    text = (out / "trace.csv").read_text()
    rows = list(csv.DictReader(io.StringIO(text)))
    header = text.splitlines()[0].split(",")
    assert header == list(TRACE_COLUMNS)
    assert header.index("ll_l2r") == header.index("ll_bidmach") + 1
    for r in rows:
        assert -math.log(80) - 1 < float(r["ll_l2r"]) < 0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["evaluator"]["l2r_particles"] == DEFAULT_PARTICLES
    assert meta["evaluator"]["l2r_seed"] == DEFAULT_SEED
    _, checked = check_trace(out / "trace.csv")
    assert checked == text
    # the stored (float32) model scores like the last row
    assert score_model(out / "model.npz", split_path).ll_l2r == pytest.approx(
        float(rows[-1]["ll_l2r"]), abs=0.05)

    # a trace of the header before ll_l2r, sealed as a fit wrote it: still read
    old = io.StringIO()
    writer = csv.DictWriter(old, fieldnames=LEGACY_TRACE_COLUMNS, lineterminator="\n",
                            extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    (out / "trace.csv").write_text(old.getvalue())
    meta["trace_sha256"] = hashlib.sha256(old.getvalue().encode()).hexdigest()
    (out / "meta.json").write_text(json.dumps(seal_meta(meta)))
    assert check_trace(out / "trace.csv")[1] == old.getvalue()

    # a header with ll_l2r elsewhere is refused
    moved = [c for c in TRACE_COLUMNS if c != "ll_l2r"] + ["ll_l2r"]
    bad = io.StringIO()
    writer = csv.DictWriter(bad, fieldnames=moved, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    (out / "trace.csv").write_text(bad.getvalue())
    meta["trace_sha256"] = hashlib.sha256(bad.getvalue().encode()).hexdigest()
    (out / "meta.json").write_text(json.dumps(seal_meta(meta)))
    from same.experiments.rundir import RunDirError

    with pytest.raises(RunDirError, match="header is not"):
        check_trace(out / "trace.csv")
