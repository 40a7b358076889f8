"""Synthetic LDA corpora of a UCI corpus's shape (scale profile) and topic recovery."""

import contextlib
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from same.data.corpus import REGISTRY
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
    ({"like": "kos", "fraction": 0.1}, "synthetic dataset 'x': 'n_topics' is a required property"),
    ({"like": "kos", "fraction": 0.1, "n_topics": 4, "topics": 3},
     "synthetic dataset 'x': Additional properties are not allowed ('topics' was unexpected)"),
    ({"like": "reuters", "fraction": 0.1, "n_topics": 4},
     "synthetic dataset 'x': like: 'reuters' is not one of ['kos', 'nips', 'enron', 'nytimes', "
     "'pubmed']"),
    ({"like": "kos", "fraction": 1.5, "n_topics": 4},
     "synthetic dataset 'x': fraction: 1.5 is greater than the maximum of 1"),
    ({"like": "kos", "fraction": 0.1, "n_topics": 0},
     "synthetic dataset 'x': n_topics: 0 is less than the minimum of 1"),
])
def test_bad_specs_name_the_key(spec, message):
    with pytest.raises(ValueError) as e:
        synthetic_corpus("x", spec)
    assert str(e.value) == message


# ------------------------------------------------ issue 51 item 1: the spec's one declarative check

def synthesize(spec, folder: Path) -> tuple[int, str]:
    """``same-lda synthesize --name toy --spec <spec as JSON> --out folder/c.npz`` in this
    process: (exit status, stderr)."""
    from same.experiments.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = main(["synthesize", "--name", "toy", "--spec", json.dumps(spec),
                   "--out", str(folder / "c.npz")])
    return rc, err.getvalue()


GOOD = {"like": "kos", "fraction": 0.01, "n_topics": 3}


@pytest.mark.parametrize("key, value, message", [
    ("like", ["kos"], "like: ['kos'] is not of type 'string'"),
    ("like", {}, "like: {} is not of type 'string'"),
    ("zipf_exponent", {}, "zipf_exponent: {} is not of type 'number'"),
    ("zipf_exponent", "1.1", "zipf_exponent: '1.1' is not of type 'number'"),
    ("zipf_exponent", -200, "zipf_exponent: -200 is less than the minimum of 0"),
    ("zipf_exponent", float("nan"), "zipf_exponent: nan is not a finite number"),
    ("topic_word_concentration", float("inf"),
     "topic_word_concentration: inf is not a finite number"),
    ("n_topics", 3.0, "n_topics: 3.0 is not of type 'integer'"),
    ("fraction", True, "fraction: True is not of type 'number'"),
    ("seed", 2**64, "seed: 18446744073709551616 is greater than the maximum of "
                    "9223372036854775807"),
])
def test_synthesize_refuses_a_bad_spec_value_in_one_line(tmp_path, key, value, message):
    """A list or an object for ``like`` or ``zipf_exponent`` was a TypeError traceback; a
    number given as a string was read as the number; ``zipf_exponent: -200`` (or NaN) sealed a
    corpus whose true topics were all NaN.  Each is one line naming the key, exit status 2,
    nothing written; the library raises the same text."""
    rc, err = synthesize({**GOOD, key: value}, tmp_path)
    assert (rc, err) == (2, f"same-lda: error: synthetic dataset 'toy': {message}\n")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError) as e:
        synthetic_corpus("toy", {**GOOD, key: value})
    assert str(e.value) == f"synthetic dataset 'toy': {message}"


def test_synthesize_refuses_a_spec_beyond_memory_naming_its_keys(tmp_path, monkeypatch):
    """``{"like": "pubmed", "fraction": 1, "n_topics": 1000}`` ended in numpy's "Unable to
    allocate 61.1 GiB" (no key named) deep in the draws; its lower bound is now checked
    against the memory available before anything is allocated, as a fit's is (row 86)."""
    from types import SimpleNamespace

    import psutil

    from same.data.planted import draw_memory_lower_bound

    info = REGISTRY["pubmed"]
    need = draw_memory_lower_bound(info.n_docs, info.n_words, 1000, info.n_tokens)
    assert need > 61.1 * 2**30  # numpy's first array, θ, alone
    monkeypatch.setattr(psutil, "virtual_memory",
                        lambda: SimpleNamespace(available=need - 1, total=need))
    rc, err = synthesize({"like": "pubmed", "fraction": 1, "n_topics": 1000}, tmp_path)
    assert (rc, err) == (2, "same-lda: error: synthetic dataset 'toy': like='pubmed', "
                            "fraction=1 and n_topics=1000 make 8200000 documents × 141043 words, "
                            f"whose draws need at least {need / 2**30:.1f} GiB, more than the "
                            f"{(need - 1) / 2**30:.1f} GiB available; use a smaller fraction or "
                            "fewer n_topics\n")
    assert list(tmp_path.iterdir()) == []
    small = draw_memory_lower_bound(max(2, round(REGISTRY["kos"].n_docs * 0.01)),
                                    REGISTRY["kos"].n_words, 3,
                                    round(REGISTRY["kos"].n_tokens * 0.01))
    monkeypatch.setattr(psutil, "virtual_memory",
                        lambda: SimpleNamespace(available=small, total=small))
    assert synthetic_corpus("toy", GOOD).topic_word.shape == (3, REGISTRY["kos"].n_words)


_WRONG_TYPE = st.one_of(st.none(), st.booleans(), st.text(max_size=4),
                        st.lists(st.integers(), max_size=2),
                        st.dictionaries(st.text(max_size=2), st.integers(), max_size=2))
_NON_FINITE = st.sampled_from([float("nan"), float("inf"), float("-inf")])
_NOT_POSITIVE = st.one_of(st.integers(max_value=0), st.floats(max_value=0))
_NOT_AN_INT = st.floats(allow_nan=False, allow_infinity=False)
_OUT_OF_INT64 = st.integers(min_value=2**63)
#: Each key's values that are no value of it: of a wrong type, not finite, out of range.
BAD_VALUES = {
    "like": st.one_of(_WRONG_TYPE, st.text(max_size=8).filter(lambda t: t not in REGISTRY),
                      _NON_FINITE, st.integers()),
    "fraction": st.one_of(_WRONG_TYPE, _NON_FINITE, _NOT_POSITIVE, st.integers(min_value=2),
                          st.floats(min_value=1, exclude_min=True, allow_infinity=False)),
    "n_topics": st.one_of(_WRONG_TYPE, _NON_FINITE, st.integers(max_value=0), _NOT_AN_INT,
                          _OUT_OF_INT64),
    "doc_topic_prior": st.one_of(_WRONG_TYPE, _NON_FINITE, _NOT_POSITIVE),
    "topic_word_concentration": st.one_of(_WRONG_TYPE, _NON_FINITE, _NOT_POSITIVE),
    "zipf_exponent": st.one_of(_WRONG_TYPE, _NON_FINITE, st.integers(max_value=-1),
                               st.floats(max_value=0, exclude_max=True)),
    "length_shape": st.one_of(_WRONG_TYPE, _NON_FINITE, _NOT_POSITIVE),
    "seed": st.one_of(_WRONG_TYPE, _NON_FINITE, st.integers(max_value=-1), _NOT_AN_INT,
                      _OUT_OF_INT64),
}


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_synthesize_refuses_every_bad_spec_value_in_one_line_writing_nothing(data):
    """Any key of the spec given a value of a wrong type, not finite or out of range: exit
    status 2, one line naming the dataset and the key, nothing written."""
    key = data.draw(st.sampled_from(sorted(BAD_VALUES)), label="key")
    value = data.draw(BAD_VALUES[key], label="value")
    with tempfile.TemporaryDirectory() as d:
        rc, err = synthesize({**GOOD, key: value}, Path(d))
        assert rc == 2, err
        assert err.count("\n") == 1 and err.startswith(
            f"same-lda: error: synthetic dataset 'toy': {key}: "), err
        assert list(Path(d).iterdir()) == []


def test_the_spec_schema_declares_the_spec_keys_and_the_uci_corpora():
    """The one declaration: its keys are SPEC_KEYS' (required: those without a default), its
    corpora the registry's, and the workflow config's schema refers to it for ``synthetic:``."""
    import yaml

    from same.data.planted import SPEC_KEYS, SPEC_SCHEMA

    schema = json.loads(SPEC_SCHEMA.read_text())
    assert list(schema["properties"]) == list(SPEC_KEYS)
    assert schema["required"] == [k for k, v in SPEC_KEYS.items() if v is None]
    assert schema["properties"]["like"]["enum"] == list(REGISTRY)
    config = yaml.safe_load((Path(__file__).parents[2] / "config/config.schema.yaml").read_text())
    ref = config["properties"]["synthetic"]["additionalProperties"]["$ref"]
    assert (Path(__file__).parents[2] / "config" / ref).resolve() == SPEC_SCHEMA.resolve()


@pytest.mark.parametrize("key, value", [("doc_topic_prior", 1e308), ("zipf_exponent", 1e308)])
def test_extreme_values_the_schema_admits_draw_true_topics(key, value):
    """A prior whose Gamma draws sum beyond float64 gave all-zero topic shares (an overflow
    warning on stderr, then sealed); a steep Zipf law warned of an overflow.  Each draws
    distributions now, without a warning."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        syn = synthetic_corpus("toy", {**GOOD, key: value})
    assert np.isfinite(syn.topic_word).all() and np.isfinite(syn.doc_topic).all()
    np.testing.assert_allclose(syn.topic_word.sum(axis=1), 1)
    np.testing.assert_allclose(syn.doc_topic.sum(axis=1), 1)


def test_a_length_shape_too_small_to_draw_is_one_line_naming_it(tmp_path):
    """``length_shape: 1e-310`` ended in numpy's ``lam value too large``, naming nothing."""
    rc, err = synthesize({**GOOD, "length_shape": 1e-310}, tmp_path)
    assert (rc, err) == (2, "same-lda: error: synthetic dataset 'toy': length_shape=1e-310 is too "
                            "small: the Poisson rate of a document's length, Gamma(length_shape, "
                            "137.559 / length_shape), is beyond what can be drawn; give a larger "
                            "length_shape\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fault, message", [
    (np.nan, "topic_word holds NaN or infinite values"),
    (-1.0, "topic_word holds negative values (min -1.0)"),
    (0.0, "topic_word of shape (3, 100) does not fit 100 words with positive rows"),
])
def test_the_generator_refuses_to_seal_topics_that_are_no_distribution(tmp_path, fault, message):
    """``zipf_exponent: -200`` sealed a corpus whose 13,812 true topic weights were NaN, which
    ``same-lda check`` then refused; the writer refuses them itself now, writing nothing."""
    syn = lda_sparse_corpus(30, 100, 900, 3, seed=2)
    syn.topic_word[1] = fault
    with pytest.raises(ValueError) as e:
        save_synthetic(tmp_path / "c.npz", syn, "toy", GOOD)
    assert str(e.value) == f"synthetic dataset 'toy': {message}; {tmp_path / 'c.npz'} is not written"
    assert list(tmp_path.iterdir()) == []


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


@pytest.mark.parametrize("name", ["", "a/b", "Toy Name", "../x"])
def test_synthesize_refuses_a_name_split_refuses(tmp_path, name):
    """``synthesize --name ''`` (``a/b``, ``Toy Name``) exited 0, the empty name sealed into
    the corpus and carried into its split, while ``split --name`` refused them: one rule,
    same.data.registry.check_own_name, lowercase letters and digits."""
    from same.experiments.cli import main

    line = (f"synthetic dataset {name!r}: a synthetic dataset name is lowercase letters and "
            "digits only (it names folders: results/<name>/, the cache)")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = main(["synthesize", "--name", name, "--spec", json.dumps(GOOD),
                   "--out", str(tmp_path / "c.npz")])
    assert (rc, err.getvalue()) == (2, f"same-lda: error: {line}\n")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError) as e:
        synthetic_corpus(name, GOOD)
    assert str(e.value) == line
