"""scikit-learn's LatentDirichletAllocation as a baseline (baselines.sklearn_vb): its settings
used as given or refused, φ over the full vocabulary every pass, training time without the
consumer's, nothing added to scikit-learn's own updates, and topics recovered."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from sklearn.decomposition import LatentDirichletAllocation

from baselines.sklearn_vb import (
    SKLEARN_DECAY,
    SKLEARN_OFFSET,
    SKLEARN_SEED_MAX,
    check_sklearn_params,
    fit_sklearn,
    iter_sklearn,
)
from same.data.synthetic import lda_corpus
from same.model.params import paper_batch_size

K, W_USED, W = 4, 100, 130  # words 100..129 never occur in training
PRIORS = dict(n_topics=K, doc_topic_prior=0.1, topic_word_prior=0.1)


@pytest.fixture(scope="module")
def counts():
    syn = lda_corpus(n_docs=300, n_words=W_USED, n_topics=K, doc_length=80, seed=5)
    return sp.hstack([syn.counts, sp.csr_matrix((300, W - W_USED), dtype=np.int32)]).tocsr()


def check_phi(phi):
    assert phi.shape == (K, W) and phi.dtype == np.float64
    assert np.all(np.isfinite(phi)) and phi.min() > 0
    np.testing.assert_allclose(phi.sum(axis=1), 1, rtol=1e-12)


@pytest.mark.parametrize("mode", ["online", "batch"])
def test_full_vocabulary_every_pass(counts, mode):
    seen = []
    phi = fit_sklearn(counts, **PRIORS, random_state=0, passes=3, mode=mode,
                      checkpoint=lambda p, i: seen.append((p.copy(), i)))
    check_phi(phi)
    assert [i["pass"] for _, i in seen] == [1, 2, 3]
    np.testing.assert_array_equal(seen[-1][0], phi)
    n_tokens = float(counts.sum())
    for p, info in seen:
        check_phi(p)
        assert set(info) == {"pass", "iteration", "samples_per_word", "train_seconds",
                             "tokens_seen", "native_score"}
        assert info["iteration"] == info["pass"]
        assert info["tokens_seen"] == info["pass"] * n_tokens
        assert info["samples_per_word"] is None and info["native_score"] is None
    assert all(b[1]["train_seconds"] > a[1]["train_seconds"] > 0 for a, b in zip(seen, seen[1:]))
    assert not np.array_equal(seen[0][0], seen[1][0])  # every pass trains
    # deterministic per seed (one worker)
    np.testing.assert_array_equal(
        phi, fit_sklearn(counts, **PRIORS, random_state=0, passes=3, mode=mode))


def test_train_seconds_exclude_a_slow_consumer(counts):
    nap, seconds = 0.4, []
    t0 = time.perf_counter()
    for _, info in iter_sklearn(counts, **PRIORS, random_state=0, passes=3):
        seconds.append(info["train_seconds"])
        time.sleep(nap)
    wall = time.perf_counter() - t0
    assert seconds[-1] <= wall - 3 * nap + 0.05, (seconds, wall)
    assert seconds[-1] < 2 * nap  # a pass over 300 short documents takes milliseconds


def _hand_online(X, passes, size, seed=0):
    """scikit-learn's own partial_fit, one call per minibatch of ``size`` documents."""
    lda = LatentDirichletAllocation(
        n_components=K, doc_topic_prior=0.1, topic_word_prior=0.1, learning_method="online",
        learning_decay=0.7, learning_offset=10.0, total_samples=X.shape[0],
        evaluate_every=-1, n_jobs=1, random_state=seed)
    for _ in range(passes):
        for a in range(0, X.shape[0], size):
            lda.partial_fit(X[a:a + size])
    return lda.components_ / lda.components_.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("batch_size, passes", [(None, 1), (40, 2)])
def test_online_is_sklearns_partial_fit(counts, batch_size, passes):
    """The wrapper adds nothing: φ equals a hand-made partial_fit loop over the same
    minibatches (default ceil(D/20) = 15 documents) with scikit-learn's κ = 0.7, τ0 = 10."""
    assert (SKLEARN_DECAY, SKLEARN_OFFSET) == (0.7, 10.0)
    size = paper_batch_size(counts.shape[0]) if batch_size is None else batch_size
    assert size == (15 if batch_size is None else 40)
    phi = fit_sklearn(counts, **PRIORS, random_state=0, passes=passes, batch_size=batch_size)
    np.testing.assert_allclose(phi, _hand_online(counts, passes, size), rtol=0, atol=1e-12)


def test_online_settings_are_passed(counts):
    kw = dict(**PRIORS, random_state=0, passes=1)
    base = fit_sklearn(counts, **kw)
    for setting in ({"learning_decay": 0.5}, {"learning_offset": 1.0}, {"batch_size": 40},
                    {"max_doc_update_iter": 5}):
        assert not np.allclose(fit_sklearn(counts, **kw, **setting), base), setting


def test_batch_is_sklearns_batch_fit(counts):
    """Batch mode, continued pass by pass, is scikit-learn's batch fit(max_iter=passes)."""
    phi = fit_sklearn(counts, **PRIORS, random_state=1, passes=3, mode="batch")
    lda = LatentDirichletAllocation(n_components=K, doc_topic_prior=0.1, topic_word_prior=0.1,
                                    learning_method="batch", max_iter=3, evaluate_every=-1,
                                    n_jobs=1, random_state=1).fit(counts)
    ref = lda.components_ / lda.components_.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(phi, ref, rtol=0, atol=1e-12)


def _matched_tv(true, learned):
    d = 0.5 * np.abs(true[:, None, :] - learned[None, :, :]).sum(-1)
    r, c = linear_sum_assignment(d)
    return d[r, c]


@pytest.mark.parametrize("mode", ["online", "batch"])
def test_recovers_true_topics(mode):
    """Learned topics match the true ones (Hungarian-matched total variation; 0.1 allows twice
    the sampling noise floor, see tests/model/test_sampler.py; a uniform φ is at ≈ 0.85).  VB is a
    local method: on this corpus some seeds merge two topics into one (measured max matched
    TV, 10 passes, seeds 0-2: online 0.018, 0.92, 0.94; batch 0.018, 0.020, 0.98), so the best
    of three seeds is asserted, and every seed must recover some topics."""
    syn = lda_corpus(n_docs=600, n_words=150, n_topics=5, doc_length=100,
                     doc_topic_prior=0.1, topic_word_prior=0.05, seed=0)
    tvs = [_matched_tv(syn.topic_word, fit_sklearn(
        syn.counts, n_topics=5, doc_topic_prior=0.1, topic_word_prior=0.05, random_state=seed,
        passes=10, mode=mode)) for seed in range(3)]
    assert min(tv.max() for tv in tvs) < 0.1, tvs
    assert all(tv.min() < 0.1 for tv in tvs), tvs


@pytest.mark.parametrize("params, message", [
    ({"batch_size": 0}, "batch_size must be a positive integer (documents per minibatch), got 0"),
    ({"batch_size": True},
     "batch_size must be a positive integer (documents per minibatch), got True"),
    ({"batch_size": 2.5},
     "batch_size must be a positive integer (documents per minibatch), got 2.5"),
    ({"learning_decay": 1.5},
     "learning_decay must be a number in [0, 1] (κ, the step size's decay), got 1.5"),
    ({"learning_decay": "0.7"},
     "learning_decay must be a number in [0, 1] (κ, the step size's decay), got '0.7'"),
    ({"learning_offset": 0.5},
     "learning_offset must be a number in [1, inf] (τ0, the step size's offset), got 0.5"),
    ({"learning_offset": True},
     "learning_offset must be a number in [1, inf] (τ0, the step size's offset), got True"),
    ({"max_doc_update_iter": 0},
     "max_doc_update_iter must be a positive integer (E-step iterations per document), got 0"),
    ({"threads": -1}, "threads must be a positive integer (scikit-learn n_jobs), got -1"),
])
def test_settings_are_used_as_given_or_refused(counts, params, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        check_sklearn_params(params)
    with pytest.raises(ValueError, match=re.escape(message)):
        fit_sklearn(counts, **PRIORS, random_state=0, passes=1, **params)


@pytest.mark.parametrize("setting", ["batch_size", "learning_decay", "learning_offset"])
def test_online_settings_refused_in_batch_mode(counts, setting):
    value = {"batch_size": 40, "learning_decay": 0.7, "learning_offset": 10.0}[setting]
    msg = (f"{setting} has no effect in batch mode (ρ = 1, one minibatch of all documents), "
           f"got {value!r}")
    with pytest.raises(ValueError, match=re.escape(msg)):
        check_sklearn_params({setting: value}, mode="batch")
    with pytest.raises(ValueError, match=re.escape(msg)):
        fit_sklearn(counts, **PRIORS, random_state=0, passes=1, mode="batch", **{setting: value})
    check_sklearn_params({setting: value}, mode="online")
    check_sklearn_params({setting: None}, mode="batch")


def test_seed_is_used_whole_or_refused(counts):
    """scikit-learn seeds numpy's RandomState (0..2**32 - 1); beyond it, a bool or a float
    is refused naming the seed and the range."""
    assert SKLEARN_SEED_MAX == 2**32 - 1
    for bad in (2**32, -1, True, 1.0):
        msg = (f"seed {bad!r} is outside scikit-learn's seed range 0..4294967295 "
               "(numpy RandomState)")
        with pytest.raises(ValueError, match=re.escape(msg)):
            check_sklearn_params({}, seed=bad)
        with pytest.raises(ValueError, match=re.escape(msg)):
            fit_sklearn(counts, **PRIORS, random_state=bad, passes=1)
    check_sklearn_params({}, seed=SKLEARN_SEED_MAX)
    a = fit_sklearn(counts, **PRIORS, random_state=SKLEARN_SEED_MAX, passes=1)
    assert not np.array_equal(a, fit_sklearn(counts, **PRIORS, random_state=0, passes=1))


def test_priors_mode_and_passes_refused(counts):
    for name in ("doc_topic_prior", "topic_word_prior"):
        for bad in (1.5, 0.0):
            msg = f"{name} must be in (0, 1] for scikit-learn's LatentDirichletAllocation, " \
                  f"got {bad!r}"
            with pytest.raises(ValueError, match=re.escape(msg)):
                check_sklearn_params({}, **{name: bad})
            with pytest.raises(ValueError, match=re.escape(msg)):
                fit_sklearn(counts, **{**PRIORS, name: bad}, random_state=0, passes=1)
    check_sklearn_params({}, doc_topic_prior=1.0, topic_word_prior=0.01)
    with pytest.raises(ValueError, match=re.escape("mode must be 'online' or 'batch', "
                                                   "got 'hybrid'")):
        fit_sklearn(counts, **PRIORS, random_state=0, mode="hybrid")
    with pytest.raises(ValueError, match=re.escape("passes must be a positive integer, got 0")):
        fit_sklearn(counts, **PRIORS, random_state=0, passes=0)


def test_sklearn_methods_run_through_the_runner_and_their_specs_are_checked(tmp_path):
    """sklearn_online / sklearn_batch are methods of the runner (issue 30 item 3): same split,
    evaluator, α, β, K as every other; their settings are checked when the spec is read."""
    import csv

    from same.data.split import make_split
    from same.experiments.runner import run
    from same.experiments.spec import RunSpec

    syn = lda_corpus(n_docs=120, n_words=60, n_topics=3, doc_length=40, seed=1)
    split = make_split(syn.counts, 0.2, seed=0)
    for method in ("sklearn_online", "sklearn_batch"):
        spec = RunSpec(method=method, n_components=3, doc_topic_prior=0.1, topic_word_prior=0.1,
                       seed=0, budget=2)
        rows = list(csv.DictReader(open(run(spec, split, tmp_path / method, progress=False)
                                        / "trace.csv")))
        assert [r["pass"] for r in rows] == ["1", "2"] and float(rows[-1]["ll"]) < 0
    with pytest.raises(ValueError, match=r"learning_decay has no effect in batch mode"):
        RunSpec(method="sklearn_batch", n_components=3, doc_topic_prior=0.1,
                topic_word_prior=0.1, seed=0, budget=2,
                params={"learning_decay": 0.7}).validate()
    with pytest.raises(ValueError, match=r"doc_topic_prior must be in \(0, 1\] for "
                                         r"scikit-learn's LatentDirichletAllocation, got 2.0"):
        RunSpec(method="sklearn_online", n_components=3, doc_topic_prior=2.0,
                topic_word_prior=0.1, seed=0, budget=2).validate()
