"""SameLDA: topic recovery, variance in m, determinism, API and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from same.data.split import make_split
from same.data.synthetic import lda_corpus
from same.model import evaluate as ev
from same.model.sampler import SameLDA

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
    model = SameLDA(n_components=K, n_copies=m, doc_topic_prior=0.1, topic_word_prior=0.05,
                    max_iter=20, prior_scale=prior_scale, sampler=sampler,
                    random_state=1).fit(syn.counts)
    tv, _ = matched_tv(syn.topic_word, model.topic_word_)
    assert tv.max() < RECOVERY_TV, tv
    uniform_tv, _ = matched_tv(syn.topic_word, np.full((K, W), 1 / W))
    assert uniform_tv.min() > 0.5


def test_samplers_agree_in_distribution(syn):
    """One minibatch step from the same φ (same.model.algorithm.minibatch_step): the means over
    stream keys of φ and of the carried θ (keep_doc_topic) are the same for the per-nonzero and
    the summed sampler (12 keys each; per entry with mean above a floor, |z| < 6 standard
    errors of the difference: z is about t with 22 degrees of freedom, P(|t| > 6) ≈ 5e-6, so
    over the ≈ 3,750 entries a false alarm has probability ≈ 2%; and the mean |z| below 1.2,
    that of |N(0,1)| being 0.8)."""
    from dataclasses import replace

    from same.model import algorithm

    word_counts = np.asarray(syn.counts.sum(axis=0), dtype=np.float64).ravel()
    start = algorithm.init_state(word_counts, K, seed=0)  # same φ init for every draw
    block = syn.counts.astype(np.float32)

    def draws(sampler):
        settings = algorithm.StepSettings(
            n_samples=3.0, prior_scale=1.0, doc_topic_prior=0.1, topic_word_prior=0.1,
            n_inner=3, sampler=sampler, learning_rate=lambda step, seen, first: 0.5,
            keep_doc_topic=True)
        phi, theta = [], []
        for key in range(12):  # ... but a different random stream per draw
            state, th, _ = algorithm.minibatch_step(replace(start, key=key + 1000), block,
                                                    settings)
            phi.append(state.topic_word_t.T.astype(np.float64))
            theta.append(th.astype(np.float64))
        return np.stack(phi), np.stack(theta)

    for a, b, floor in zip(draws("nonzero"), draws("summed"), (0.01, 0.5)):
        se = np.sqrt(a.var(axis=0, ddof=1) / len(a) + b.var(axis=0, ddof=1) / len(b))
        big = (a.mean(axis=0) > floor) & (se > 0)
        z = (a.mean(axis=0) - b.mean(axis=0))[big] / se[big]
        assert big.sum() > 100
        assert np.abs(z).max() < 6
        assert np.abs(z).mean() < 1.2


def test_minibatch_step_is_pure_and_counts_calls(syn):
    """minibatch_step leaves its input state untouched and advances the stream counter by
    n_inner; the same state and block give the same result."""
    from same.model import algorithm

    word_counts = np.asarray(syn.counts.sum(axis=0), dtype=np.float64).ravel()
    state = algorithm.init_state(word_counts, K, seed=3)
    phi0 = state.topic_word_t.copy()
    settings = algorithm.StepSettings(
        n_samples=5.0, prior_scale=1.0, doc_topic_prior=0.1, topic_word_prior=0.1, n_inner=4,
        sampler="nonzero", learning_rate=lambda step, seen, first: 0.99)
    block = syn.counts[:100].astype(np.float32)
    a, theta, rho = algorithm.minibatch_step(state, block, settings)
    b, _, _ = algorithm.minibatch_step(state, block, settings)
    np.testing.assert_array_equal(state.topic_word_t, phi0)
    assert (a.n_calls, a.n_steps, a.n_docs_seen, a.first_docs) == (4, 1, 100, 100)
    assert rho == 0.99 and theta.shape == (100, K)
    np.testing.assert_array_equal(a.topic_word_t, b.topic_word_t)
    np.testing.assert_allclose(a.topic_word_t.sum(axis=0), 1, rtol=1e-5)


def test_larger_m_gives_lower_variance_across_seeds(syn):
    """φ from m = 100 varies less across seeds than φ from m = 1 (paper §3: more samples,
    lower-variance estimates). Topics are aligned to the true ones before comparing."""
    def spread(m):
        phis = []
        for seed in range(4):
            model = SameLDA(n_components=K, n_copies=m, doc_topic_prior=0.1,
                            topic_word_prior=0.05, max_iter=5, random_state=seed)
            phi = model.fit(syn.counts).topic_word_
            _, cols = matched_tv(syn.topic_word, phi)
            phis.append(phi[cols])
        return np.stack(phis).var(axis=0).sum()

    assert spread(100.0) < 0.5 * spread(1.0)


@pytest.mark.parametrize("sampler", ["nonzero", "summed"])
def test_same_seed_same_topics(syn, sampler):
    def fit(seed):
        return SameLDA(n_components=K, n_copies=20, max_iter=3, sampler=sampler,
                       random_state=seed).fit(syn.counts)

    a, b, c = fit(7), fit(7), fit(8)
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)
    assert np.abs(a.topic_word_ - c.topic_word_).max() > 1e-4


def test_fitted_attributes_and_trace(syn):
    model = SameLDA(n_components=K, n_copies=10, max_iter=3, batch_size=100, random_state=0)
    rows = [dict(info) for info in model.iter_fit(syn.counts, every="step")]
    phi = model.topic_word_
    assert phi.shape == (K, W) and model.components_ is phi
    np.testing.assert_allclose(phi.sum(axis=1), 1, rtol=1e-12)
    assert model.n_iter_ == 3 and model.n_batch_iter_ == 18 and model.n_features_in_ == W
    assert model.n_docs_seen_ == 3 * 600
    assert model.n_tokens_seen_ == 3 * syn.counts.sum()
    assert model.samples_per_word_ == pytest.approx(30.0)
    assert len(rows) == 18
    assert [r["step"] for r in rows] == list(range(1, 19))
    assert [r["end_of_pass"] for r in rows].count(True) == 3
    assert [r["pass"] for r in rows if r["end_of_pass"]] == [1, 2, 3]
    assert all(b["train_seconds"] >= a["train_seconds"] for a, b in zip(rows, rows[1:]))
    assert rows[0]["learning_rate"] == pytest.approx(0.99)
    assert rows[5]["learning_rate"] == pytest.approx((100 / 600) ** 0.3)


def test_consumer_time_is_excluded(syn):
    import time

    model = SameLDA(n_components=K, n_copies=1, max_iter=1, random_state=0)
    t0 = time.perf_counter()
    for _ in model.iter_fit(syn.counts, every="step"):
        time.sleep(0.05)
    wall = time.perf_counter() - t0
    assert wall - model.train_seconds_ >= 20 * 0.05 * 0.9


def test_training_improves_heldout_ll(syn):
    split = make_split(syn.counts, 0.2, seed=0)
    model = SameLDA(n_components=K, n_copies=50, doc_topic_prior=0.1, topic_word_prior=0.05,
                    max_iter=10, random_state=0).fit(split.train)
    trained = model.score(split.test_observed, split.test_heldout)
    truth = ev.heldout_loglik(syn.topic_word, 0.1, split.test_observed, split.test_heldout)
    assert trained > ev.heldout_loglik(np.full((K, W), 1 / W), 0.1, split.test_observed,
                                       split.test_heldout) + 1.0
    assert trained == pytest.approx(truth, abs=0.05)  # within 0.05 nats/token of the truth
    assert model.score(split.test_full) == pytest.approx(
        ev.bidmach_loglik(model.topic_word_, 0.1, split.test_full))


def test_transform_rows_sum_to_one(syn):
    model = SameLDA(n_components=K, n_copies=10, max_iter=2, random_state=0).fit(syn.counts)
    theta = model.transform(syn.counts[:10])
    assert theta.shape == (10, K)
    np.testing.assert_allclose(theta.sum(axis=1), 1, rtol=1e-10)


def test_partial_fit_stream(syn):
    """total_samples (documents, scikit-learn's meaning) gives each minibatch its share."""
    model = SameLDA(n_components=K, n_copies=20, total_samples=600, random_state=0)
    blocks = [syn.counts[a:a + 100] for a in range(0, 600, 100)]
    for block in blocks:
        model.partial_fit(block)
    model.partial_fit(blocks[0][:50])
    assert model.n_batch_iter_ == 7 and model.n_iter_ == 0
    assert model.samples_per_word_ == pytest.approx(20 * (1 + 50 / 600))
    with pytest.raises(ValueError, match=r"X has 10 features, but SameLDA is expecting 150"):
        model.partial_fit(sp.csr_matrix(np.ones((2, 10))))
    with pytest.raises(ValueError, match=r"m_schedule='linear' needs schedule_steps"):
        SameLDA(n_components=K, m_schedule="linear").partial_fit(blocks[0])


def test_partial_fit_equals_fit_for_one_pass(syn):
    """fit is a loop over the same step as partial_fit: one pass, same minibatches, same φ."""
    a = SameLDA(n_components=K, n_copies=5, max_iter=1, batch_size=150, random_state=2)
    a.fit(syn.counts)
    b = SameLDA(n_components=K, n_copies=5, batch_size=150, random_state=2)
    # partial_fit initialises φ from its first block's word counts, fit from the whole corpus'
    b.partial_fit(syn.counts)  # one step over everything, to compare the machinery
    c = SameLDA(n_components=K, n_copies=5, max_iter=1, batch_size=600, random_state=2)
    c.fit(syn.counts)
    np.testing.assert_array_equal(b.topic_word_, c.topic_word_)
    assert a.n_batch_iter_ == 4


def test_keep_doc_topic_carries_theta(syn):
    model = SameLDA(n_components=K, n_copies=10, max_iter=2, random_state=0).fit(syn.counts)
    assert model.keep_doc_topic  # BIDMach 2014 default (putBack = 1)
    assert model.doc_topic_.shape == (600, K)
    assert not np.allclose(model.doc_topic_, 1.0)
    other = SameLDA(n_components=K, n_copies=10, max_iter=2, keep_doc_topic=False,
                    random_state=0).fit(syn.counts)
    assert other.doc_topic_ is None
    assert np.abs(model.topic_word_ - other.topic_word_).max() > 0


@pytest.mark.parametrize("sampler", ["nonzero", "summed"])
def test_file_backed_theta_gives_the_same_fit(syn, sampler, monkeypatch):
    """θ above THETA_MMAP_BYTES lives in a mapped temporary file: same numbers bit for bit,
    and doc_topic_ is a read-only view of it, not a copy."""
    import same.model.backend as backend_module

    def fit():
        return SameLDA(n_components=K, n_copies=7, max_iter=2, sampler=sampler,
                       random_state=1).fit(syn.counts)

    ref = fit()
    monkeypatch.setattr(backend_module, "THETA_MMAP_BYTES", 0)
    mapped = fit()
    assert isinstance(mapped._doc_topic, np.memmap) and not isinstance(ref._doc_topic, np.memmap)
    np.testing.assert_array_equal(mapped.topic_word_, ref.topic_word_)
    np.testing.assert_array_equal(mapped.doc_topic_, ref.doc_topic_)
    assert np.shares_memory(mapped.doc_topic_, mapped._doc_topic)
    assert not mapped.doc_topic_.flags.writeable and not ref.doc_topic_.flags.writeable
    np.testing.assert_array_equal(mapped.transform(syn.counts[:20]), ref.transform(syn.counts[:20]))


@pytest.mark.parametrize("sampler", ["nonzero", "summed"])
def test_bidmach_default_theta_starts_at_one_then_is_carried(syn, sampler):
    """BIDMach LDAgibbs (2014, putBack = 1): θ = 1 for every document in the first pass, then
    each document starts from its own θ of the previous pass. Rebuilt here from
    same.model.algorithm.minibatch_step and compared bit for bit with the estimator."""
    from same.model import algorithm
    from same.model.params import step_settings

    X = syn.counts
    model = SameLDA(n_components=K, n_copies=7, max_iter=2, batch_size=200, sampler=sampler,
                    random_state=5)
    phis = [model.topic_word_.copy() for _ in model.iter_fit(X)]
    word_counts = np.asarray(X.sum(axis=0), dtype=np.float64).ravel()
    state = algorithm.init_state(word_counts, K, seed=5)
    theta = np.ones((600, K), dtype=np.float32)
    for p in range(2):
        for a in range(0, 600, 200):
            block = X[a:a + 200].astype(np.float32)
            settings = step_settings(model, 7.0, (float(block.sum()), float(X.sum())))
            start = None if p == 0 else theta[a:a + 200].copy()
            if p == 0:
                np.testing.assert_array_equal(theta[a:a + 200], 1.0)
            state, th, _ = algorithm.minibatch_step(state, block, settings, start)
            theta[a:a + 200] = th
        phi = state.topic_word_t.T.astype(np.float64)
        np.testing.assert_array_equal(phi / phi.sum(axis=1, keepdims=True), phis[p])
    np.testing.assert_array_equal(model.doc_topic_, theta)


def test_shuffle_is_one_seeded_order(syn):
    X = syn.counts
    a = SameLDA(n_components=K, n_copies=5, max_iter=2, shuffle=True, random_state=4).fit(X)
    order = np.random.default_rng(4 ^ 0x5EED).permutation(600)
    b = SameLDA(n_components=K, n_copies=5, max_iter=2, random_state=4).fit(X[order])
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)
    np.testing.assert_array_equal(a.doc_topic_[order], b.doc_topic_)  # rows in corpus order
    c = SameLDA(n_components=K, n_copies=5, max_iter=2, random_state=4).fit(X)
    assert np.abs(a.topic_word_ - c.topic_word_).max() > 1e-4


def test_paper_prior_scale_scales_beta_to_the_minibatch_share():
    from same.model.params import step_settings

    est = SameLDA(n_copies=50, topic_word_prior=0.2, prior_scale="paper")
    st = step_settings(est, 50.0, (1000.0, 20000.0))
    assert st.prior_scale == 50.0 and st.topic_word_prior == pytest.approx(0.2 / 20)
    old = step_settings(est.set_params(prior_scale="paper_unscaled"), 50.0, (1000.0, 20000.0))
    assert old.prior_scale == 50.0 and old.topic_word_prior == 0.2
    bid = step_settings(est.set_params(prior_scale="bidmach"), 50.0, (1000.0, 20000.0))
    assert bid.prior_scale == 1.0 and bid.topic_word_prior == 0.2
    with pytest.raises(ValueError, match=r"prior_scale='paper' scales β .* give "
                                         r"SameLDA\(total_samples=<documents in the stream>\)"):
        SameLDA(n_components=2, prior_scale="paper").partial_fit(X_OK)


def test_counts_that_could_overflow_int32_are_refused():
    X = sp.csr_matrix(np.array([[5_000_000, 1], [3, 4]]))
    with pytest.raises(ValueError, match=r"n_copies=500 is too large for int32 counts: a word "
                                         r"occurs 5e\+06 times in one minibatch"):
        SameLDA(n_components=2, n_copies=500).fit(X)


@pytest.mark.parametrize("schedule", ["linear", "log", "invlinear"])
def test_annealing_schedules_run(syn, schedule):
    model = SameLDA(n_components=K, n_copies=10, max_iter=2, batch_size=200, m_schedule=schedule,
                    random_state=0)
    ms = [i["n_copies"] for i in model.iter_fit(syn.counts, every="step")]
    assert len(ms) == 6
    assert np.mean(ms) == pytest.approx(10.0)
    assert model.samples_per_word_ == pytest.approx(20.0)


def test_paper_learning_rate(syn):
    model = SameLDA(n_components=K, max_iter=1, batch_size=300, learning_rate="paper",
                    learning_offset=4, learning_decay=0.5, random_state=0)
    rates = [i["learning_rate"] for i in model.iter_fit(syn.counts, every="step")]
    assert rates == pytest.approx([4 ** -0.5, 5 ** -0.5])


def test_unfitted_model():
    from sklearn.exceptions import NotFittedError

    for method in ("transform", "score"):
        with pytest.raises(NotFittedError, match="This SameLDA instance is not fitted yet"):
            getattr(SameLDA(), method)(sp.csr_matrix(np.ones((2, 3))))


X_OK = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 1]]))


@pytest.mark.parametrize("params, pattern", [
    ({"n_components": 0}, r"The 'n_components' parameter of SameLDA must be an int in the range "
                      r"\[1, inf\). Got 0 instead"),
    ({"n_components": 2.5}, r"'n_components' parameter of SameLDA must be an int .* Got 2.5 instead"),
    ({"n_copies": 0}, r"The 'n_copies' parameter of SameLDA must be a float in the range "
                       r"\(0.0, inf\). Got 0 instead"),
    ({"n_copies": -1.0}, r"'n_copies' parameter of SameLDA must be .* Got -1.0 instead"),
    ({"doc_topic_prior": 0}, r"'doc_topic_prior' parameter of SameLDA must be a float"),
    ({"topic_word_prior": -0.1}, r"'topic_word_prior' parameter of SameLDA must be a float"),
    ({"batch_size": 0}, r"'batch_size' parameter of SameLDA must be an int in the range "
                        r"\[1, inf\), a float in the range \(0.0, 1.0\] or None. Got 0 "
                        r"instead"),
    ({"batch_size": 1.5}, r"'batch_size' parameter of SameLDA must be an int in the range "
                          r"\[1, inf\), a float in the range \(0.0, 1.0\] or None. Got 1.5 "
                          r"instead"),
    ({"n_inner": 0}, r"'n_inner' parameter of SameLDA must be an int"),
    ({"m_schedule": "cosine"}, r"'m_schedule' parameter of SameLDA must be a str among "
                               r"\{.*'invlinear'.*\}. Got 'cosine' instead"),
    ({"learning_rate": "adam"}, r"'learning_rate' parameter of SameLDA must be a str among"),
    ({"prior_scale": "both"}, r"'prior_scale' parameter of SameLDA must be a str among "
                              r"\{.*'paper'.*\}. Got 'both' instead"),
    ({"backend": "jax"}, r"'backend' parameter of SameLDA must be a str among \{.*'cupy'.*\}"),
    ({"random_state": "seven"}, r"'random_state' parameter of SameLDA must be"),
])
def test_bad_parameters(params, pattern):
    with pytest.raises(ValueError, match=pattern):
        SameLDA(**params).fit(X_OK)


@pytest.mark.parametrize("X, pattern", [
    (sp.csr_matrix(np.array([[1.0, -1.0]])), r"Negative values in data passed to SameLDA \(X\)"),
    (np.array([[1.0, -1.0]]), r"Negative values in data passed to SameLDA \(X\)"),
    (sp.csr_matrix(np.array([[1.0, np.nan]])), r"Input X contains NaN"),
    (np.array([[1.0, np.inf]]), r"Input X contains infinity"),
    (sp.csr_matrix((0, 3)), r"Found array with 0 sample\(s\)"),
    (sp.csr_matrix((3, 4)), r"X holds no tokens: every count is zero \(shape 3 documents × 4 "
                            r"words\)"),
    (np.zeros((2, 2)), r"X holds no tokens"),
    (np.ones(3), r"Expected 2D array, got 1D array instead"),
    # issue 36: the input gate (same.data.count_matrix.validate_counts), before any compiled code
    (sp.csr_matrix((np.array([1, 2]), np.array([0, 5]), np.array([0, 1, 2])), shape=(2, 3)),
     r"^X: word index 5 out of range 0\.\.2$"),
    (sp.csr_matrix((np.array([1, 2]), np.array([0, 1]), np.array([0, 2, 1])), shape=(2, 3)),
     r"^X: indptr decreases at row 1$"),
    (np.array([[1 + 1j, 0]]), r"^X: Complex data not supported$"),
    (np.array([[2**60, 1]]), r"^X: count 1152921504606846976 of document 0, word 0 exceeds "
                             r"2\^53 = 9007199254740992, the largest whole number held exactly "
                             r"in float64$"),
    (sp.coo_array(np.array([1, 2])), r"^X: expected a 2-D count matrix \(documents × words\), "
                                     r"got shape \(2,\)$"),
])
def test_bad_counts(X, pattern):
    with pytest.raises(ValueError, match=pattern) as caught:
        SameLDA(n_components=2).fit(X)
    assert "\n" not in str(caught.value)  # one line, scikit-learn's messages included


@pytest.mark.parametrize("param", ["batch_size", "n_components", "n_copies", "n_inner", "max_iter",
                                   "schedule_steps", "doc_topic_prior", "topic_word_prior",
                                   "learning_decay", "learning_offset", "learning_power",
                                   "random_state"])
def test_booleans_are_not_numbers(param):
    """Item 10: ``SameLDA(batch_size=True)`` was read as one document per minibatch (True is
    an Integral in Python), ``SameLDA(random_state=True)`` as seed 1.  No numeric parameter
    takes a bool."""
    with pytest.raises(ValueError, match=rf"The '{param}' parameter of SameLDA must be .* Got "
                                         r"True instead\."):
        SameLDA(**{param: True}).fit(X_OK)


def test_values_that_are_not_counts_warn():
    """Item 13: ``SameLDA().fit(1e-6 * X)`` returned a uniform φ without a word: SAME reads
    each value as a number of tokens, so 1e-6 · X holds almost none.  Non-integer values warn
    (CountsWarning, naming the total and the tokens per document); integer-valued counts, in
    any dtype, do not."""
    import warnings

    from same.data.count_matrix import CountsWarning

    X = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 1], [4, 0, 0]]))
    with pytest.warns(CountsWarning, match=r"^X holds non-integer values \(e\.g\. 1e-06\): "
                                           r"SameLDA reads each as a number of tokens, so X holds "
                                           r"1.1e-05 tokens in 3 documents \(3.67e-06 per "
                                           r"document\); pass word counts$") as caught:
        SameLDA(n_components=2, max_iter=1, random_state=0).fit(1e-6 * X)
    assert caught[0].filename == __file__  # the warning names the user's line, not ours
    with warnings.catch_warnings():
        warnings.simplefilter("error", CountsWarning)
        for counts in (X, X.astype(np.float32), X.toarray().astype(float)):
            SameLDA(n_components=2, max_iter=1, random_state=0).fit(counts)


@pytest.mark.parametrize("m", [1e-6, 1e-300])
def test_an_m_far_below_one_draw_per_token_warns(m):
    """``SameLDA(n_copies=1e-6)`` trained a uniform φ without a word (std 3.7e-09): each token
    draws m samples, so X's 261 tokens drew 0.00026 in a pass.  The class of item 13 (1e-6 ·
    X, the same near-uniform φ): the same CountsWarning, from fit and partial_fit, naming
    n_copies; m = 0.01 and the default do not warn."""
    import re
    import warnings

    from same.data.count_matrix import CountsWarning

    X = np.random.default_rng(0).poisson(2, (12, 10))
    assert X.sum() == 261
    message = (f"^n_copies={m:g} draws {m:g} samples per token on average: X's 261 tokens "
               f"draw {m * 261:.3g} samples in a pass over them, so φ barely moves from its "
               "start; give n_copies of at least 0.01$")
    with pytest.warns(CountsWarning, match=re.escape(message[1:-1])) as caught:
        phi = SameLDA(n_components=3, max_iter=5, random_state=0, n_copies=m).fit(X).components_
    assert [str(w.message) for w in caught] == [message[1:-1]]
    assert caught[0].filename == __file__
    assert phi.std() < 1e-6  # what it warns of: φ stays (next to) uniform
    with pytest.warns(CountsWarning, match=re.escape(message[1:-1])):
        SameLDA(n_components=3, random_state=0, n_copies=m).partial_fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CountsWarning)
        for ok in (0.01, 100.0):
            phi = SameLDA(n_components=3, max_iter=5, random_state=0,
                          n_copies=ok).fit(X).components_
            assert phi.std() > 1e-3


def test_memory_check_counts_theta_only_when_it_is_kept_in_ram(monkeypatch):
    """Item 16: the fit's memory is checked before allocation against what is available; θ
    (D × K float32) counts only when it is kept and held in RAM, not when it is file-backed
    (beyond THETA_MMAP_BYTES) or not kept."""
    from types import SimpleNamespace

    import psutil

    import same.model.backend
    from same.model.fit_memory import fit_memory_lower_bound

    X = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 1], [4, 0, 0]]))
    phi_only = fit_memory_lower_bound("same", 4, 3)
    assert fit_memory_lower_bound("same", 4, 3, 3) == phi_only + 3 * 4 * 4
    monkeypatch.setattr(psutil, "virtual_memory", lambda: SimpleNamespace(available=phi_only))
    with pytest.raises(MemoryError, match=r"^same with n_components=4 × 3 words: its φ arrays and θ "
                                          r"of 3 documents need at least 0\.0 GiB, more than the "
                                          r"0\.0 GiB available; use fewer topics or a smaller "
                                          r"vocabulary$"):
        SameLDA(n_components=4, max_iter=1, keep_doc_topic=True).fit(X)
    SameLDA(n_components=4, max_iter=1, keep_doc_topic=False).fit(X)
    monkeypatch.setattr(same.model.backend, "THETA_MMAP_BYTES", 0)  # θ of any size: file-backed
    m = SameLDA(n_components=4, max_iter=1, keep_doc_topic=True).fit(X)
    assert isinstance(m._doc_topic, np.memmap)


def test_dense_and_sparse_input_agree():
    dense = np.array([[1, 0, 2], [0, 3, 1], [4, 0, 0]])
    a = SameLDA(n_components=2, max_iter=2, random_state=0).fit(dense)
    b = SameLDA(n_components=2, max_iter=2, random_state=0).fit(sp.csr_matrix(dense))
    c = SameLDA(n_components=2, max_iter=2, random_state=0).fit(sp.coo_matrix(dense.astype(float)))
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)
    np.testing.assert_array_equal(a.topic_word_, c.topic_word_)


def test_cupy_backend_without_gpu():
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            pytest.skip("a GPU is present")
    except Exception:
        pass
    with pytest.raises(RuntimeError, match=r"backend='cupy' needs"):
        SameLDA(n_components=2, backend="cupy").fit(X_OK)


def test_get_set_params_and_repr():
    m = SameLDA(n_components=3)
    assert m.get_params()["n_components"] == 3
    m.set_params(n_copies=5.5)
    assert m.n_copies == 5.5
    assert repr(m) == "SameLDA(n_components=3, n_copies=5.5)"
    with pytest.raises(ValueError, match=r"Invalid parameter 'alpha' for estimator SameLDA"):
        m.set_params(alpha=1)


@pytest.mark.filterwarnings("ignore::same.data.count_matrix.CountsWarning")  # its checks draw floats
def test_scikit_learn_estimator_checks():
    """Every check of sklearn.utils.estimator_checks.check_estimator passes but one expected
    to fail: check_dtype_object wants numpy's ``TypeError: float() argument must be a string or
    a real number, not 'dict'`` for a dict in an object array, where the input gate gives its
    one line (issue 51 item 2; the check's numeric object arrays pass);
    check_array_api_input is skipped by scikit-learn itself unless SCIPY_ARRAY_API=1."""
    from sklearn.utils.estimator_checks import check_estimator

    gate = "X: holds {'foo': 'bar'} (dict), not a number of tokens"
    results = check_estimator(SameLDA(n_components=3, max_iter=2, n_inner=2), on_fail=None,
                              on_skip=None, expected_failed_checks={"check_dtype_object": gate})
    failed = [(r["check_name"], repr(r["exception"])) for r in results
              if r["status"] == "failed"]
    assert not failed
    xfail = [(r["check_name"], str(r["exception"])) for r in results if r["status"] == "xfail"]
    assert xfail == [("check_dtype_object", gate)]
    assert sum(r["status"] == "passed" for r in results) >= 45
    assert {r["check_name"] for r in results if r["status"] == "skipped"} <= {
        "check_array_api_input"}


@pytest.mark.parametrize("keep_doc_topic", [False, True])
def test_fitted_model_pickles_and_copies(syn, tmp_path, keep_doc_topic):
    import copy
    import pickle

    import joblib

    model = SameLDA(n_components=K, n_copies=5, max_iter=2, keep_doc_topic=keep_doc_topic,
                    random_state=0).fit(syn.counts)
    expected = model.transform(syn.counts[:20])
    joblib.dump(model, tmp_path / "m.joblib")
    for other in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model),
                  joblib.load(tmp_path / "m.joblib")):
        np.testing.assert_array_equal(other.transform(syn.counts[:20]), expected)
        np.testing.assert_array_equal(other.topic_word_, model.topic_word_)
    # training continues from the unpickled state exactly as from the original
    a = pickle.loads(pickle.dumps(model)).partial_fit(syn.counts[:100])
    b = model.partial_fit(syn.counts[:100])
    np.testing.assert_array_equal(a.topic_word_, b.topic_word_)


def test_clone_of_fitted_model_in_pipeline(syn):
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer

    pipe = make_pipeline(SameLDA(n_components=K, max_iter=1, random_state=0), Normalizer())
    pipe.fit(syn.counts)
    fresh = clone(pipe)
    assert not hasattr(fresh[0], "topic_word_")
    np.testing.assert_array_equal(fresh.fit(syn.counts).transform(syn.counts[:5]),
                                  pipe.transform(syn.counts[:5]))


@pytest.mark.parametrize("batch_size, sizes", [(None, [5] * 19 + [5]), (0.1, [10] * 10),
                                                (0.025, [3] * 33 + [1]), (7, [7] * 14 + [2]),
                                                (1.0, [100])])
def test_batch_size_count_or_fraction(batch_size, sizes):
    """An int is a document count, a float in (0, 1] a fraction of the documents (ceil)."""
    ranges = SameLDA(batch_size=batch_size).batches(100)
    assert [b - a for a, b in ranges] == sizes
    assert ranges[0][0] == 0 and ranges[-1][1] == 100


def test_partial_fit_with_paper_prior_scale_in_a_fresh_process():
    """corpus_tokens reaches the first call's warm-up (issue 29: it was applied after it, so
    prior_scale='paper' failed in a process that had not compiled the kernels yet)."""
    import subprocess
    import sys

    code = ("from same.model.sampler import SameLDA; from same.data.synthetic import lda_corpus\n"
            "X = lda_corpus(n_docs=60, n_words=40, n_topics=3, doc_length=30, seed=0).counts\n"
            "m = SameLDA(n_components=3, n_copies=5, prior_scale='paper', total_samples=60,\n"
            "            random_state=0)\n"
            "m.partial_fit(X[:30]).partial_fit(X[30:])\n"
            "assert m.n_batch_iter_ == 2 and abs(m.samples_per_word_ - 5.0) < 1e-9\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
