"""Priors whose float32 totals overflow (K·α, W·β above 2^127) are refused naming them, by the
estimator, the runner's spec and run, the CLI and the evaluator (one check:
same.model.heldout_inputs.check_prior_totals)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from same.data.split import load_split
from same.model.evaluate import evaluate
from same.model.sampler import SameLDA

BETA_LINE = ("topic_word_prior=1e+38 is too large for 80 words: 80 × 1e+38 is above 2^127 ≈ "
             "1.7e+38, beyond what float32 totals hold; give topic_word_prior of at most "
             "2.126e+36")
ALPHA_LINE = ("doc_topic_prior=1e+308 is too large for 4 topics: 4 × 1e+308 is above 2^127 ≈ "
              "1.7e+38, beyond what float32 totals hold; give doc_topic_prior of at most "
              "4.253e+37")


def test_a_prior_whose_float32_total_overflows_is_refused_naming_it(split_path):
    """β = 1e38 over 80 words made IncNorm's float32 row totals inf: φ kept its random start,
    exit 0; α = 1e308 trained, then failed on NaN naming no prior (fit and partial_fit,
    after set_params too)."""
    X = load_split(split_path).train
    with pytest.raises(ValueError) as e:
        SameLDA(n_components=3, n_copies=2, max_iter=2, topic_word_prior=1e38).fit(X)
    assert str(e.value) == BETA_LINE
    with pytest.raises(ValueError, match=r"^doc_topic_prior=1e\+38 is too large for 3 topics"):
        SameLDA(n_components=3, doc_topic_prior=1e38).partial_fit(X)
    est = SameLDA(n_components=3, n_copies=2).partial_fit(X)
    before = est.topic_word_.copy()
    est.set_params(topic_word_prior=1e38)
    with pytest.raises(ValueError) as e:
        est.partial_fit(X)
    assert str(e.value) == BETA_LINE and np.array_equal(est.topic_word_, before)
    # just below the bound trains a distribution
    phi = SameLDA(n_components=3, n_copies=2, max_iter=1, topic_word_prior=2e36).fit(X)
    assert np.allclose(phi.topic_word_.sum(axis=1), 1)


def test_the_cli_refuses_such_a_prior_in_one_line_writing_nothing(split_path, tmp_path,
                                                                  monkeypatch, capsys):
    from same.experiments import cli

    monkeypatch.chdir(tmp_path)
    base = '"method": "{m}", "n_components": 4, "seed": 0, "budget": 1'
    for method, priors, line in (
            ("same", '"doc_topic_prior": 0.1, "topic_word_prior": 1e308',
             BETA_LINE.replace("1e+38", "1e+308")),
            ("same", '"doc_topic_prior": 1e308, "topic_word_prior": 0.1', ALPHA_LINE),
            ("cgs", '"doc_topic_prior": 0.1, "topic_word_prior": 1e38', BETA_LINE)):
        spec = "{" + base.format(m=method) + ", " + priors + "}"
        assert cli.main(["fit", "--spec", spec, "--split", str(split_path), "--out",
                         "run"]) == 2
        assert capsys.readouterr().err == f"same-lda: error: {line}\n"
    assert list(tmp_path.iterdir()) == []


def test_evaluate_names_alpha_phi_and_split(split_path):
    """evaluate(φ, 1e308, split) blamed φ (probability 0); a sparse φ was isfinite's
    TypeError, a path or None for the split an AttributeError."""
    split = load_split(split_path)
    phi = np.full((4, split.n_words), 1 / split.n_words)
    with pytest.raises(ValueError) as e:
        evaluate(phi, 1e308, split)
    assert str(e.value) == ALPHA_LINE
    with pytest.raises(TypeError) as e:
        evaluate(sp.csr_matrix(phi), 0.1, split)
    assert str(e.value) == ("topic_word must be a dense NumPy or CuPy array (n_topics, "
                            "n_words), got a sparse csr_matrix; pass topic_word.toarray()")
    for bad, kind in ((str(split_path), "str"), (None, "NoneType")):
        with pytest.raises(TypeError) as e:
            evaluate(phi, 0.1, bad)
        assert str(e.value) == ("split must be a HeldOutSplit (load it with "
                                f"same.data.split.load_split), got {kind}")
