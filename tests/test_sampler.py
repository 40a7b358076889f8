"""SameLDA: topic recovery, variance in m, determinism, API and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from same import evaluate as ev
from same.sampler import SameLDA
from same.split import make_split
from same.synthetic import lda_corpus

K, W = 5, 150


@pytest.fixture(scope="module")
def syn():
    return lda_corpus(n_docs=600, n_words=W, n_topics=K, doc_length=100,
                      doc_topic_prior=0.1, topic_word_prior=0.05, seed=0)


def matched_tv(true, learned):
    """Total-variation distance of each true topic to its Hungarian-matched learned topic."""
    d = 0.5 * np.abs(true[:, None, :] - learned[None, :, :]).sum(-1)
    r, c = linear_sum_assignment(d)
    return d[r, c], c


# Sampling noise floor: a topic estimated from N_k ≈ 60,000 / 5 = 12,000 tokens over W = 150
# words has E[TV] ≈ ½ Σ_w √(2 p_w / (π N_k)) ≤ ½ √(2 W / (π N_k)) ≈ 0.045. A threshold of 0.1
# allows twice that; a uniform φ sits at TV ≈ 0.85 from these sparse topics, so failing to learn
# cannot pass.
RECOVERY_TV = 0.1


@pytest.mark.parametrize("m", [1.0, 100.0])
@pytest.mark.parametrize("prior_scale", ["paper", "bidmach"])
@pytest.mark.parametrize("sampler", ["nonzero", "summed"])
def test_recovers_known_topics(syn, m, prior_scale, sampler):
    model = SameLDA(n_topics=K, n_samples=m, doc_topic_prior=0.1, topic_word_prior=0.05,
                    max_iter=20, prior_scale=prior_scale, sampler=sampler,
                    random_state=1).fit(syn.counts)
    tv, _ = matched_tv(syn.topic_word, model.topic_word_)
    assert tv.max() < RECOVERY_TV, tv
    uniform_tv, _ = matched_tv(syn.topic_word, np.full((K, W), 1 / W))
    assert uniform_tv.min() > 0.5


def test_samplers_agree_in_distribution(syn):
    """One minibatch step from the same φ: the mean of φ over seeds is the same for the
    per-nonzero and the summed sampler (both are exact; 12 seeds each, tolerance 5 standard
    errors of the difference, per entry with mean > 0.01)."""
    def phis(sampler):
        out = []
        for seed in range(12):
            model = SameLDA(n_topics=K, n_samples=3, n_inner=3, batch_size=600, max_iter=1,
                            sampler=sampler, random_state=0)
            model._init_state(syn.counts, 600)  # same φ init (seed 0) for every draw
            model._key = seed + 1000  # ... but a different random stream per draw
            model._corpus_tokens = float(syn.counts.sum())
            model._step(syn.counts, 3.0, None)
            out.append(model.topic_word_)
        return np.stack(out)

    a, b = phis("nonzero"), phis("summed")
    se = np.sqrt(a.var(axis=0, ddof=1) / len(a) + b.var(axis=0, ddof=1) / len(b))
    big = (a.mean(axis=0) > 0.01) & (se > 0)
    z = (a.mean(axis=0) - b.mean(axis=0))[big] / se[big]
    assert np.abs(z).max() < 5
    assert np.abs(z).mean() < 1.2  # |N(0,1)| has mean 0.8


def test_larger_m_gives_lower_variance_across_seeds(syn):
    """φ from m = 100 varies less across seeds than φ from m = 1 (paper §3: more samples,
    lower-variance estimates). Topics are aligned to the true ones before comparing."""
    def spread(m):
        phis = []
        for seed in range(4):
            model = SameLDA(n_topics=K, n_samples=m, doc_topic_prior=0.1,
                            topic_word_prior=0.05, max_iter=5, random_state=seed)
            phi = model.fit(syn.counts).topic_word_
            _, cols = matched_tv(syn.topic_word, phi)
            phis.append(phi[cols])
        return np.stack(phis).var(axis=0).sum()

    assert spread(100.0) < 0.5 * spread(1.0)


@pytest.mark.parametrize("sampler", ["nonzero", "summed"])
def test_same_seed_same_topics(syn, sampler):
    def fit(seed):
        return SameLDA(n_topics=K, n_samples=20, max_iter=3, sampler=sampler,
                       random_state=seed).fit(syn.counts)

    a, b, c = fit(7), fit(7), fit(8)
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)
    assert np.abs(a.topic_word_ - c.topic_word_).max() > 1e-4


def test_fitted_attributes_and_trace(syn):
    rows = []
    model = SameLDA(n_topics=K, n_samples=10, max_iter=3, batch_size=100, random_state=0,
                    callback=lambda mdl, info: rows.append(dict(info)))
    model.fit(syn.counts)
    phi = model.topic_word_
    assert phi.shape == (K, W)
    np.testing.assert_allclose(phi.sum(axis=1), 1, rtol=1e-12)
    assert model.n_passes_ == 3 and model.n_steps_ == 18
    assert model.n_docs_seen_ == 3 * 600
    assert model.n_tokens_seen_ == 3 * syn.counts.sum()
    assert model.samples_per_word_ == pytest.approx(30.0)
    assert len(rows) == 18
    assert [r["step"] for r in rows] == list(range(1, 19))
    assert [r["end_of_pass"] for r in rows].count(True) == 3
    assert all(b["train_seconds"] >= a["train_seconds"] for a, b in zip(rows, rows[1:]))
    assert rows[0]["learning_rate"] == pytest.approx(0.99)
    assert rows[5]["learning_rate"] == pytest.approx((100 / 600) ** 0.3)


def test_callback_time_is_excluded(syn):
    import time

    model = SameLDA(n_topics=K, n_samples=1, max_iter=1, random_state=0,
                    callback=lambda m, i: time.sleep(0.05))
    t0 = time.perf_counter()
    model.fit(syn.counts)
    wall = time.perf_counter() - t0
    assert wall - model.train_seconds_ >= 20 * 0.05 * 0.9


def test_training_improves_heldout_ll(syn):
    split = make_split(syn.counts, 0.2, seed=0)
    model = SameLDA(n_topics=K, n_samples=50, doc_topic_prior=0.1, topic_word_prior=0.05,
                    max_iter=10, random_state=0).fit(split.train)
    trained = model.score(split.test_observed, split.test_heldout)
    truth = ev.heldout_loglik(syn.topic_word, 0.1, split.test_observed, split.test_heldout)
    assert trained > ev.heldout_loglik(np.full((K, W), 1 / W), 0.1, split.test_observed,
                                       split.test_heldout) + 1.0
    assert trained == pytest.approx(truth, abs=0.05)  # within 0.05 nats/token of the truth
    assert model.score(split.test_full) == pytest.approx(
        ev.bidmach_loglik(model.topic_word_, 0.1, split.test_full))


def test_transform_rows_sum_to_one(syn):
    model = SameLDA(n_topics=K, n_samples=10, max_iter=2, random_state=0).fit(syn.counts)
    theta = model.transform(syn.counts[:10])
    assert theta.shape == (10, K)
    np.testing.assert_allclose(theta.sum(axis=1), 1, rtol=1e-10)


def test_partial_fit_stream(syn):
    model = SameLDA(n_topics=K, n_samples=20, random_state=0)
    blocks = [syn.counts[a:a + 100] for a in range(0, 600, 100)]
    model.partial_fit(iter(blocks), corpus_tokens=syn.counts.sum())
    model.partial_fit(blocks[0])
    assert model.n_steps_ == 7
    assert model.samples_per_word_ == pytest.approx(20 * (1 + blocks[0].sum() / syn.counts.sum()))
    with pytest.raises(ValueError, match=r"X has 10 words, the model was initialised with 150"):
        model.partial_fit(sp.csr_matrix(np.ones((2, 10))))
    with pytest.raises(ValueError, match=r"m_schedule='linear' needs schedule_steps"):
        SameLDA(n_topics=K, m_schedule="linear").partial_fit(blocks[0])


def test_keep_doc_topic_carries_theta(syn):
    model = SameLDA(n_topics=K, n_samples=10, max_iter=2, keep_doc_topic=True,
                    random_state=0).fit(syn.counts)
    assert model.doc_topic_.shape == (600, K)
    assert not np.allclose(model.doc_topic_, 1.0)
    other = SameLDA(n_topics=K, n_samples=10, max_iter=2, random_state=0).fit(syn.counts)
    assert other.doc_topic_ is None
    assert np.abs(model.topic_word_ - other.topic_word_).max() > 0


@pytest.mark.parametrize("schedule", ["linear", "log", "invlinear"])
def test_annealing_schedules_run(syn, schedule):
    ms = []
    model = SameLDA(n_topics=K, n_samples=10, max_iter=2, batch_size=200, m_schedule=schedule,
                    random_state=0, callback=lambda mdl, i: ms.append(i["n_samples"]))
    model.fit(syn.counts)
    assert len(ms) == 6
    assert np.mean(ms) == pytest.approx(10.0)
    assert model.samples_per_word_ == pytest.approx(20.0)


def test_paper_learning_rate(syn):
    rates = []
    SameLDA(n_topics=K, max_iter=1, batch_size=300, learning_rate="paper", learning_offset=4,
            learning_decay=0.5, random_state=0,
            callback=lambda m, i: rates.append(i["learning_rate"])).fit(syn.counts)
    assert rates == pytest.approx([4 ** -0.5, 5 ** -0.5])


def test_unfitted_model():
    with pytest.raises(RuntimeError, match="not fitted yet"):
        SameLDA().transform(sp.csr_matrix(np.ones((2, 3))))


X_OK = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 1]]))


@pytest.mark.parametrize("params, pattern", [
    ({"n_topics": 0}, r"n_topics must be a positive integer, got 0"),
    ({"n_topics": 2.5}, r"n_topics must be a positive integer, got 2.5"),
    ({"n_samples": 0}, r"n_samples must be a positive finite number, got 0"),
    ({"n_samples": -1.0}, r"n_samples must be a positive finite number, got -1.0"),
    ({"doc_topic_prior": 0}, r"doc_topic_prior must be a positive finite number"),
    ({"topic_word_prior": -0.1}, r"topic_word_prior must be a positive finite number"),
    ({"batch_size": 0}, r"batch_size must be a positive integer, got 0"),
    ({"n_inner": 0}, r"n_inner must be a positive integer"),
    ({"m_schedule": "cosine"}, r"m_schedule must be one of \('constant', 'linear', 'log', "
                               r"'invlinear'\), got 'cosine'"),
    ({"learning_rate": "adam"}, r"learning_rate must be one of \('bidmach', 'paper'\)"),
    ({"prior_scale": "both"}, r"prior_scale must be 'paper' or 'bidmach', got 'both'"),
    ({"backend": "jax"}, r"backend must be one of \('numpy', 'cupy'\), got 'jax'"),
])
def test_bad_parameters(params, pattern):
    with pytest.raises(ValueError, match=pattern):
        SameLDA(**params).fit(X_OK)


@pytest.mark.parametrize("X, pattern", [
    (np.ones((2, 3)), r"X must be a scipy.sparse matrix of counts"),
    (sp.csr_matrix(np.array([[1.0, -1.0]])), r"X contains negative counts"),
    (sp.csr_matrix(np.array([[1.0, np.nan]])), r"X contains NaN or infinite counts"),
    (sp.csr_matrix((0, 3)), r"X is empty"),
])
def test_bad_counts(X, pattern):
    with pytest.raises(ValueError, match=pattern):
        SameLDA(n_topics=2).fit(X)


def test_cupy_backend_without_gpu():
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            pytest.skip("a GPU is present")
    except Exception:
        pass
    with pytest.raises(RuntimeError, match=r"backend='cupy' needs"):
        SameLDA(n_topics=2, backend="cupy").fit(X_OK)


def test_get_set_params():
    m = SameLDA(n_topics=3)
    assert m.get_params()["n_topics"] == 3
    m.set_params(n_samples=5.5)
    assert m.n_samples == 5.5
    with pytest.raises(ValueError, match=r"invalid parameter 'alpha'"):
        m.set_params(alpha=1)
