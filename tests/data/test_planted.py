"""Synthetic LDA corpora of a UCI corpus's shape (scale profile) and topic recovery."""

import json
import subprocess
import sys

import numpy as np
import pytest

from same.data.planted import (
    describe,
    lda_sparse_corpus,
    load_synthetic,
    save_synthetic,
    synthetic_corpus,
)
from same.data.split import load_split
from same.model.topic_recovery import topic_recovery, tv_matrix


def test_lda_sparse_corpus_shape_lengths_and_normalisation():
    n_docs, mean, shape = 400, 150, 2.0
    syn = lda_sparse_corpus(n_docs, 3000, n_docs * mean, 8, length_shape=shape, seed=1)
    X = syn.counts
    assert X.shape == (n_docs, 3000) and X.dtype == np.int32 and X.has_sorted_indices
    assert X.getnnz(axis=1).min() >= 1  # no empty document
    np.testing.assert_allclose(syn.topic_word.sum(axis=1), 1)
    np.testing.assert_allclose(syn.doc_topic.sum(axis=1), 1)
    # n_d ~ Poisson(Gamma(shape, mean / shape)): E = mean, Var = mean + mean² / shape; the total
    # over documents is within 5 standard deviations of n_docs · mean (CLT)
    sd = np.sqrt(n_docs * (mean + mean**2 / shape))
    assert abs(X.sum() - n_docs * mean) < 5 * sd
    again = lda_sparse_corpus(n_docs, 3000, n_docs * mean, 8, length_shape=shape, seed=1)
    assert (again.counts != X).nnz == 0  # seeded


def test_word_counts_follow_the_true_topics():
    """Given each document's length, E[c_dw] = n_d (θ_d φ)_w; summed over documents, every
    word's count is within 5 Poisson-binomial standard deviations of its expectation."""
    syn = lda_sparse_corpus(300, 400, 300 * 200, 5, doc_topic_prior=0.3,
                            topic_word_concentration=50.0, seed=4)
    X = syn.counts
    n_d = np.asarray(X.sum(axis=1)).ravel()
    p = syn.doc_topic @ syn.topic_word  # (D, W)
    expected = (n_d[:, None] * p).sum(axis=0)
    var = (n_d[:, None] * p * (1 - p)).sum(axis=0)
    observed = np.asarray(X.sum(axis=0)).ravel()
    z = (observed - expected) / np.sqrt(np.maximum(var, 1e-12))
    assert np.abs(z).max() < 5
    # and a wrong truth is rejected: permuting the topics' words breaks the fit
    wrong = syn.doc_topic @ syn.topic_word[:, ::-1]
    z_wrong = (observed - (n_d[:, None] * wrong).sum(axis=0)) / np.sqrt(np.maximum(var, 1e-12))
    assert np.abs(z_wrong).max() > 5


def test_smaller_concentration_gives_more_distinct_topics():
    def mutual(c):
        phi = lda_sparse_corpus(50, 2000, 5000, 6, topic_word_concentration=c, seed=0).topic_word
        tv = tv_matrix(phi, phi)
        return tv[~np.eye(6, dtype=bool)].mean()

    assert mutual(30.0) > mutual(3000.0) + 0.2


def test_synthetic_corpus_takes_the_shape_of_a_uci_corpus():
    syn = synthetic_corpus("tiny", {"like": "kos", "fraction": 0.1, "n_topics": 4})
    assert syn.counts.shape == (343, 6906)  # round(3430 · 0.1), W kept
    assert syn.topic_word.shape == (4, 6906)
    assert "SYNTHETIC" in describe("tiny", {"like": "kos", "fraction": 0.1, "n_topics": 4})


@pytest.mark.parametrize("spec, message", [
    ({"like": "kos", "fraction": 0.1}, "synthetic dataset 'x': missing key 'n_topics'"),
    ({"like": "kos", "fraction": 0.1, "n_topics": 4, "topics": 3},
     "synthetic dataset 'x': unknown key 'topics'"),
    ({"like": "reuters", "fraction": 0.1, "n_topics": 4},
     "synthetic dataset 'x': like='reuters' is not a UCI corpus"),
    ({"like": "kos", "fraction": 1.5, "n_topics": 4},
     r"synthetic dataset 'x': fraction must be in \(0, 1\], got 1.5"),
    ({"like": "kos", "fraction": 0.1, "n_topics": 0}, "n_topics must be > 0, got 0"),
])
def test_bad_specs_name_the_key(spec, message):
    with pytest.raises(ValueError, match=message):
        synthetic_corpus("x", spec)


def test_save_load_round_trip(tmp_path):
    syn = lda_sparse_corpus(30, 100, 900, 3, seed=2)
    save_synthetic(tmp_path / "c.npz", syn, "toy", {"like": "kos"})
    corpus, phi = load_synthetic(tmp_path / "c.npz")
    assert corpus.name == "toy" and (corpus.counts != syn.counts).nnz == 0
    np.testing.assert_allclose(phi, syn.topic_word, rtol=1e-6)  # stored as float32
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"bad.npz: not a sealed synthetic corpus file \(no "
                                         r"SHA-256 seal"):
        load_synthetic(tmp_path / "bad.npz")


def test_cli_synthesize_then_split(tmp_path):
    spec = json.dumps({"like": "kos", "fraction": 0.05, "n_topics": 3, "seed": 1})
    run = [sys.executable, "-m", "same"]
    res = subprocess.run([*run, "synthesize", "--name", "toy", "--spec", spec, "--out",
                          str(tmp_path / "corpus.npz")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["n_docs"] == 172
    res = subprocess.run([*run, "split", "--corpus", str(tmp_path / "corpus.npz"), "--out",
                          str(tmp_path / "split.npz")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    split = load_split(tmp_path / "split.npz")
    assert split.corpus == "toy" and split.train.shape[1] == 6906
    res = subprocess.run([*run, "synthesize", "--name", "toy", "--spec", "{", "--out",
                          str(tmp_path / "x.npz")], capture_output=True, text=True)
    assert res.returncode == 2 and "same: error: --spec: not JSON" in res.stderr
    assert not (tmp_path / "x.npz").exists()


def test_tv_matrix_known_values():
    a = np.array([[1.0, 0.0], [0.5, 0.5]])
    np.testing.assert_allclose(tv_matrix(a, a), [[0, 0.5], [0.5, 0]])
    np.testing.assert_allclose(tv_matrix(2 * a, a), tv_matrix(a, a))  # rows renormalised
    with pytest.raises(ValueError, match="same W"):
        tv_matrix(a, np.ones((2, 3)))


def test_recovery_is_zero_for_permuted_truth_and_finds_the_matching():
    phi = lda_sparse_corpus(20, 500, 1000, 6, topic_word_concentration=20.0, seed=3).topic_word
    perm = np.array([3, 0, 5, 1, 4, 2])
    rec = topic_recovery(phi[perm], phi)
    assert rec.mean_tv == pytest.approx(0, abs=1e-12)
    np.testing.assert_array_equal(perm[rec.learned_topic], rec.true_topic)
    assert 0 < rec.true_pairwise_tv <= 1
    # uniform topics recover nothing: their matched TV is about the truth's own spread
    rec_u = topic_recovery(np.ones_like(phi), phi)
    assert rec_u.mean_tv > 0.5 * rec.true_pairwise_tv
