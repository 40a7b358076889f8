"""Bad or colliding workflow configs end in one line naming the key (issue 27).

The checks run in :func:`same.config.check_config` (and :func:`same.runs.plan_runs`, for the
run table itself); the workflow calls them at parse time, before any job
(``tests/test_workflow.py::test_config_errors_are_one_line_before_any_job`` runs Snakemake).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from same.config import check_config
from same.runs import plan_runs, sensitivity_runs

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "config/config.schema.yaml"


def config(**sections):
    """The default config with ``sections`` merged over it key by key (as Snakemake does)."""
    cfg = yaml.safe_load((REPO / "config/config.yaml").read_text())
    for key, value in sections.items():
        if isinstance(value, dict) and isinstance(cfg.get(key), dict):
            cfg[key] = {**cfg[key], **value}
        else:
            cfg[key] = value
    return cfg


def test_the_shipped_profiles_pass():
    for delta in ("ci.yaml", "paper.yaml", "scale.yaml"):
        cfg = config(**yaml.safe_load((REPO / "config" / delta).read_text()))
        assert "same" in check_config(cfg, SCHEMA), delta


def test_synthetic_dataset_named_like_a_uci_corpus_is_refused():
    """It would write results/kos/, where the committed real-KOS outputs are."""
    cfg = config(synthetic={"kos": {"like": "kos", "fraction": 0.5, "n_topics": 8}})
    with pytest.raises(ValueError) as e:
        check_config(cfg, SCHEMA)
    assert str(e.value) == ("config synthetic dataset 'kos': 'kos' is the name of a UCI corpus "
                            "(kos, nips, enron, nytimes, pubmed); give the synthetic dataset "
                            "another name")


@pytest.mark.parametrize("sections, message", [
    ({"seeds": [0, 0]}, "config seeds: 0 is given twice ([0, 0]); give each value once"),
    ({"seeds": [0, 1, 2, 1]},
     "config seeds: 1 is given twice ([0, 1, 2, 1]); give each value once"),
    ({"same": {"m_values": [1, 5, 5.0]}},
     "config same.m_values: 5.0 is given twice ([1, 5, 5.0]); give each value once"),
    ({"same": {"schedules": ["constant", "log", "log"]}},
     "config same.schedules: 'log' is given twice (['constant', 'log', 'log']); give each "
     "value once"),
    ({"sensitivity": {"batch_size": [0.1, 0.1]}},
     "config sensitivity.batch_size: 0.1 is given twice ([0.1, 0.1]); give each value once"),
    ({"sensitivity": {"shuffle": [True, True]}},
     "config sensitivity.shuffle: True is given twice ([True, True]); give each value once"),
    ({"scale_study": {"n_components": [8, 8], "train_fractions": [1.0]}},
     "config scale_study.n_components: 8 is given twice ([8, 8]); give each value once"),
    ({"scale_study": {"n_components": [8], "train_fractions": [0.5, 0.5]}},
     "config scale_study.train_fractions: 0.5 is given twice ([0.5, 0.5]); give each value "
     "once"),
])
def test_repeated_values_are_refused(sections, message):
    with pytest.raises(ValueError) as e:
        plan_runs(config(**sections))
    assert str(e.value) == message


def test_two_runs_with_one_label_are_refused():
    """m = 5 and m = 5.0000001 both print as same_m5: one run would silently vanish."""
    with pytest.raises(ValueError) as e:
        plan_runs(config(same={"m_values": [5, 5.0000001]}))
    assert str(e.value) == (
        "config same.m_values: 5.0000001 and same.m_values: 5 give one run label 'same_m5' "
        "(labels show numbers to 6 significant digits); make them differ")
    with pytest.raises(ValueError) as e:
        plan_runs(config(scale_study={"n_components": [8], "train_fractions": [0.5, 0.5000001]}))
    assert "'study_same_f0.5'" in str(e.value)
    assert str(e.value).startswith("config scale_study.train_fractions: 0.5000001 and "
                                   "scale_study.train_fractions: 0.5 give one run label")


def test_label_that_is_no_folder_name_is_refused():
    """m = 1e-05 would be labelled same_m1e-05, which the fit rule's label pattern refuses."""
    with pytest.raises(ValueError) as e:
        plan_runs(config(same={"m_values": [1e-05, 1]}))
    assert str(e.value) == (
        "config same.m_values: 1e-05 gives the run label 'same_m1e-05', not a folder name of "
        "lowercase letters, digits, '_' and '.' (numbers below 1e-4 or from 1e6 print with an "
        "exponent)")


@pytest.mark.parametrize("value", [1, 2])
def test_sensitivity_batch_size_integer_is_refused(value):
    """An int is a document count for SameLDA: [1] would run 1-document minibatches."""
    with pytest.raises(ValueError) as e:
        sensitivity_runs(config(sensitivity={"batch_size": [0.05, value]}))
    assert str(e.value) == (
        f"config sensitivity.batch_size: {value} is an integer, read as a document count; "
        "give fractions of the training documents in (0, 1], e.g. 0.05")


def test_sensitivity_batch_size_float_one_is_the_whole_corpus():
    rows = sensitivity_runs(config(sensitivity={"batch_size": [1.0, 0.05]}))
    assert [r["label"] for r in rows if r["param"] == "batch_size"] == ["sens_batch_size_1",
                                                                         "sens_main"]


def test_same_batch_size_one_is_refused_other_counts_and_fractions_pass():
    with pytest.raises(ValueError) as e:
        check_config(config(same={"batch_size": 1}), SCHEMA)
    assert str(e.value) == (
        "config same.batch_size: 1 is an integer, read as ONE document per minibatch; give 1.0 "
        "for all training documents, a fraction in (0, 1), or a count of at least 2 documents")
    for ok in (1.0, 0.1, 150, None):
        assert "same" in check_config(config(same={"batch_size": ok}), SCHEMA)


@pytest.mark.parametrize("sections, message", [
    ({"same": {"batch_size": 5.5}},
     "config same.batch_size: The 'batch_size' parameter of SameLDA must be an int in the "
     "range [1, inf), a float in the range (0.0, 1.0] or None. Got 5.5 instead."),
    ({"datasets": ["toy"]},
     "config datasets: 'toy' is neither a UCI corpus (kos, nips, enron, nytimes, pubmed) nor "
     "a dataset of the config's synthetic: section"),
    ({"datasets": ["kos", "kos"]},
     "config datasets: 'kos' is given twice (['kos', 'kos']); give each value once"),
    # YAML 8.0 passes a JSON schema's `integer` but would name folders K8.0
    ({"n_components": 8.0}, "config n_components: 8.0 is not of type 'integer'"),
    ({"seeds": [0, 1.0]}, "config seeds[1]: 1.0 is not of type 'integer'"),
    ({"n_components": 0}, "config n_components: 0 is less than the minimum of 1"),
    ({"nonsense_key": 1},
     "config: Additional properties are not allowed ('nonsense_key' was unexpected)"),
])
def test_bad_values_name_the_key(sections, message):
    with pytest.raises(ValueError) as e:
        check_config(config(**sections), SCHEMA)
    assert str(e.value) == message
