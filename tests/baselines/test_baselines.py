"""Baselines export φ over the full vocabulary, scored by the shared evaluator."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

from baselines.cgs import checkpoints_upto, fit_cgs
from baselines.vb import fit_vb
from same.data.split import make_split
from same.data.synthetic import lda_corpus
from same.model import evaluate as ev

K, W_USED, W = 4, 100, 130  # words 100..129 never occur in training


@pytest.fixture(scope="module")
def data():
    syn = lda_corpus(n_docs=300, n_words=W_USED, n_topics=K, doc_length=80, seed=5)
    counts = sp.hstack([syn.counts, sp.csr_matrix((300, W - W_USED), dtype=np.int32)]).tocsr()
    return syn, counts


def check_phi(phi):
    assert phi.shape == (K, W)
    assert np.all(np.isfinite(phi)) and phi.min() > 0
    np.testing.assert_allclose(phi.sum(axis=1), 1, rtol=1e-10)


def test_cgs_full_vocabulary_and_checkpoints(data):
    _, counts = data
    seen = []
    phi = fit_cgs(counts, n_topics=K, doc_topic_prior=0.1, topic_word_prior=0.1,
                  random_state=0, iterations=20, checkpoints=[1, 5, 20],
                  checkpoint=lambda p, i: seen.append((i["iteration"], p.copy(), i)))
    check_phi(phi)
    assert [s[0] for s in seen] == [1, 5, 20]
    for _, p, info in seen:
        check_phi(p)
        assert info["samples_per_word"] == info["iteration"]
        assert info["native_score"] < 0
    # unseen words get exactly β / (n_k + W β), i.e. n_kw = 0
    unseen = phi[:, W_USED:]
    assert np.allclose(unseen, unseen[:, :1])
    # φ's row totals match a proper count matrix: Σ_w n_kw = tokens
    n_k = 0.1 / unseen[:, 0] - W * 0.1
    assert n_k.sum() == pytest.approx(counts.sum(), rel=1e-6)


def test_cgs_deterministic_single_thread(data):
    _, counts = data
    a = fit_cgs(counts, n_topics=K, doc_topic_prior=0.1, topic_word_prior=0.1, random_state=3,
                iterations=10)
    b = fit_cgs(counts, n_topics=K, doc_topic_prior=0.1, topic_word_prior=0.1, random_state=3,
                iterations=10)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("mode", ["online", "batch"])
def test_vb_full_vocabulary_every_pass(data, mode):
    _, counts = data
    seen = []
    phi = fit_vb(counts, n_topics=K, doc_topic_prior=0.1, topic_word_prior=0.1,
                 random_state=0, passes=3, mode=mode,
                 checkpoint=lambda p, i: seen.append((i["pass"], i["train_seconds"])))
    check_phi(phi)
    assert [s[0] for s in seen] == [1, 2, 3]
    assert all(b[1] >= a[1] for a, b in zip(seen, seen[1:]))


def test_baselines_learn(data):
    """Each baseline beats a uniform φ by far on held-out data from the true model."""
    syn, counts = data
    split = make_split(counts, 0.2, seed=0)
    uniform = ev.evaluate(np.full((K, W), 1 / W), 0.1, split).ll
    cgs = fit_cgs(split.train, n_topics=K, doc_topic_prior=0.1, topic_word_prior=0.1,
                  random_state=0, iterations=100)
    online = fit_vb(split.train, n_topics=K, doc_topic_prior=0.1, topic_word_prior=0.1,
                    random_state=0, passes=10, mode="online")
    for phi in (cgs, online):
        assert ev.evaluate(phi, 0.1, split).ll > uniform + 0.5


def test_bad_settings(data):
    _, counts = data
    with pytest.raises(ValueError, match=r"mode must be 'online' or 'batch', got 'hybrid'"):
        fit_vb(counts, n_topics=K, doc_topic_prior=0.1, topic_word_prior=0.1, random_state=0,
               mode="hybrid")
    with pytest.raises(ValueError, match=r"iterations must be a positive integer \(Gibbs "
                                         r"sweeps\), got 0"):
        fit_cgs(counts, n_topics=K, doc_topic_prior=0.1, topic_word_prior=0.1, random_state=0,
                iterations=0)


@pytest.mark.parametrize("params, message", [
    ({"chunksize": 0}, "chunksize must be a positive integer (documents per chunk), got 0"),
    ({"chunksize": -3}, "chunksize must be a positive integer (documents per chunk), got -3"),
    ({"chunksize": True}, "chunksize must be a positive integer (documents per chunk), got True"),
    ({"chunksize": 2.5}, "chunksize must be a positive integer (documents per chunk), got 2.5"),
    ({"iterations": "50"},
     "iterations must be a positive integer (E-step iterations per document), got '50'"),
])
def test_vb_settings_are_used_as_given_or_refused(data, params, message):
    """Item 11: VB ``chunksize: 0`` silently became the default (meta.json recorded 0),
    ``chunksize: -3`` failed in islice without naming chunksize, ``iterations: "50"`` failed
    deep in gensim.  Each is refused naming the parameter, by the spec check and by iter_vb."""
    from baselines.vb import check_vb_params
    from same.experiments.runs import RunSpec

    _, counts = data
    with pytest.raises(ValueError, match=re.escape(message)):
        check_vb_params(params)
    with pytest.raises(ValueError, match=re.escape(message)):
        fit_vb(counts, n_topics=K, doc_topic_prior=0.1, topic_word_prior=0.1, random_state=0,
               passes=1, **params)
    with pytest.raises(ValueError, match=re.escape(message)):
        RunSpec(method="vb_online", n_components=K, doc_topic_prior=0.1, topic_word_prior=0.1,
                seed=0, budget=1, params=params).validate()


def test_cgs_seed_is_used_whole_or_refused(data):
    """Item 12: CGS seeds 0, 2**32 and 2**33 gave identical φ (taken modulo 2**31).  tomotopy
    uses all 64 bits of its seed, so seeds are passed whole (those below 2**31, the committed
    runs' 0, 1, 2, are unchanged: s % 2**31 == s) and those beyond its range are refused."""
    from baselines.cgs import SEED_MAX
    from same.experiments.runs import RunSpec

    _, counts = data

    def phi(seed):
        return fit_cgs(counts, n_topics=K, doc_topic_prior=0.1, topic_word_prior=0.1,
                       random_state=seed, iterations=3)

    phis = [phi(s) for s in (0, 2**32, 2**33)]
    assert not np.array_equal(phis[0], phis[1]) and not np.array_equal(phis[1], phis[2])
    np.testing.assert_array_equal(phi(2**32), phis[1])  # still deterministic
    for bad in (SEED_MAX + 1, -1):
        msg = f"seed {bad} is outside tomotopy's seed range 0..{SEED_MAX} (2**63 - 1)"
        with pytest.raises(ValueError, match=re.escape(msg)):
            phi(bad)
    with pytest.raises(ValueError, match=re.escape(f"seed {SEED_MAX + 1} is outside")):
        RunSpec(method="cgs", n_components=K, doc_topic_prior=0.1, topic_word_prior=0.1,
                seed=SEED_MAX + 1, budget=1).validate()


def test_vb_seed_is_used_whole_or_refused(data):
    """gensim takes its seed through numpy's RandomState (0..2**32 - 1): a larger seed failed in
    gensim with ``Seed must be between 0 and 2**32 - 1`` naming no parameter, and ``True`` was
    seed 1.  Both are refused naming the seed and the range; 2**32 - 1 is used whole."""
    from baselines.vb import VB_SEED_MAX, check_vb_params

    _, counts = data
    assert VB_SEED_MAX == 2**32 - 1
    for bad in (2**32, -1, True, 1.0):
        msg = f"seed {bad!r} is outside gensim's seed range 0..4294967295 (numpy RandomState)"
        with pytest.raises(ValueError, match=re.escape(msg)):
            check_vb_params({}, seed=bad)
        with pytest.raises(ValueError, match=re.escape(msg)):
            fit_vb(counts, n_topics=K, doc_topic_prior=0.1, topic_word_prior=0.1,
                   random_state=bad, passes=1)
    check_vb_params({}, seed=VB_SEED_MAX)
    check_vb_params({"chunksize": None})  # seed not given: the spec's own check covers it


def test_cgs_trains_every_iteration_and_only_yields_checkpoints_within_it(data):
    """``fit_cgs(iterations=6, checkpoints=[2])`` stopped after 2 sweeps and returned that φ
    (the last checkpoint), and a checkpoint beyond ``iterations`` was dropped without a word.
    ``iterations`` is always the last checkpoint; one beyond it is refused."""
    _, counts = data
    common = dict(n_topics=K, doc_topic_prior=0.1, topic_word_prior=0.1, random_state=0)
    seen = []
    phi = fit_cgs(counts, iterations=6, checkpoints=[2],
                  checkpoint=lambda p, i: seen.append(i["iteration"]), **common)
    assert seen == [2, 6]
    np.testing.assert_array_equal(phi, fit_cgs(counts, iterations=6, checkpoints=[6], **common))
    with pytest.raises(ValueError, match=re.escape(
            "checkpoints must lie in 1..iterations=5 (Gibbs sweeps), got 10")):
        fit_cgs(counts, iterations=5, checkpoints=[2, 10], **common)


def test_checkpoints_upto():
    assert checkpoints_upto(30) == [1, 2, 5, 10, 20, 30]
    assert checkpoints_upto(1000)[-3:] == [200, 500, 1000]


def test_vb_streams_the_corpus_instead_of_materialising_it():
    """gensim gets the CSR rows one document at a time: setting up the corpus and a full pass
    over it allocate a small fraction of what a list of (id, count) lists would hold."""
    import tracemalloc

    import numpy as np
    import scipy.sparse as sp

    from baselines.vb import _bow

    X = sp.random(3000, 800, density=0.05, format="csr", random_state=0,
                  data_rvs=lambda n: np.random.default_rng(0).integers(1, 5, n)).astype(np.float64)
    tracemalloc.start()
    as_lists = [list(zip(X.indices[X.indptr[d]:X.indptr[d + 1]].tolist(),
                         X.data[X.indptr[d]:X.indptr[d + 1]].tolist())) for d in range(3000)]
    _, list_peak = tracemalloc.get_traced_memory()
    del as_lists
    tracemalloc.stop()
    tracemalloc.start()
    corpus = _bow(X)
    seen = sum(len(doc) for doc in corpus)
    _, stream_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert seen == X.nnz and len(corpus) == 3000
    assert list_peak > 80 * X.nnz  # ~ 96 bytes per nonzero as lists
    assert stream_peak < list_peak / 50, (stream_peak, list_peak)


def test_gensim_step_sizes_are_used_or_refused(data, monkeypatch):
    """Online VB's κ (``decay``) and τ0 (``offset``), gensim's names, reach LdaModel (tuning's
    grid varies them); the defaults are gensim's own; out of range or in batch mode they are
    refused, naming the parameter."""
    import gensim.models

    from baselines.vb import VB_DECAY, VB_OFFSET, check_vb_params
    from same.experiments.runs import RunSpec

    _, counts = data
    seen = []

    class Spy(gensim.models.LdaModel):
        def __init__(self, *args, **kwargs):
            seen.append({k: kwargs[k] for k in ("decay", "offset")})
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(gensim.models, "LdaModel", Spy)
    common = dict(n_topics=K, doc_topic_prior=0.1, topic_word_prior=0.1, random_state=0,
                  passes=2)
    default = fit_vb(counts, **common)
    same = fit_vb(counts, decay=VB_DECAY, offset=VB_OFFSET, **common)
    other = fit_vb(counts, decay=0.9, offset=10.0, **common)
    fit_vb(counts, mode="batch", **common)
    assert seen == [{"decay": 0.5, "offset": 1.0}, {"decay": 0.5, "offset": 1.0},
                    {"decay": 0.9, "offset": 10.0}, {"decay": 0.0, "offset": 1.0}]
    np.testing.assert_array_equal(default, same)
    assert np.abs(default - other).max() > 1e-6
    for params, mode, message in (
            ({"decay": 1.5}, "online", "decay must be a number in [0, 1] (κ, the step size's "
                                       "decay), got 1.5"),
            ({"offset": 0.5}, "online", "offset must be a number in [1, inf] (τ0, the step "
                                        "size's offset), got 0.5"),
            ({"decay": 0.7}, "batch", "decay has no effect in batch mode (ρ = 1), got 0.7")):
        with pytest.raises(ValueError, match=re.escape(message)):
            check_vb_params(params, mode=mode)
        with pytest.raises(ValueError, match=re.escape(message)):
            RunSpec(method=f"vb_{mode}", n_components=K, doc_topic_prior=0.1,
                    topic_word_prior=0.1, seed=0, budget=1, params=params).validate()
