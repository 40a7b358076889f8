"""Bad or colliding workflow configs end in one line naming the key (issue 27).

The checks run in :func:`same.experiments.config.check_config` (and :func:`same.experiments.plan.plan_runs`, for the
run table itself); the workflow calls them at parse time, before any job
(``tests/test_workflow.py::test_config_errors_are_one_line_before_any_job`` runs Snakemake).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from same.experiments.config import check_config
from same.experiments.plan import plan_runs
from same.experiments.runs import sensitivity_runs

REPO = Path(__file__).resolve().parents[2]
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


@pytest.mark.parametrize("value, message", [
    (float("nan"), "nan is not a finite number"),
    ("1.1", "'1.1' is not of type 'number'"),
    (-200, "-200 is less than the minimum of 0"),
])
def test_config_synthetic_spec_is_checked_by_the_specs_one_schema(value, message):
    """The config's synthetic: entries and ``same-lda synthesize --spec`` share one declaration
    (same/data/synthetic.schema.json): ``zipf_exponent: .nan`` passed the config's schema
    (NaN compares false with its minimum) and sealed a corpus of NaN topics."""
    cfg = config(datasets=["toy"], synthetic={"toy": {"like": "kos", "fraction": 0.5,
                                                      "n_topics": 8, "zipf_exponent": value}})
    with pytest.raises(ValueError) as e:
        check_config(cfg, SCHEMA)
    assert str(e.value) == f"config synthetic.toy.zipf_exponent: {message}"


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
    ({"crossover_study": {"n_components": [8, 8], "train_fractions": [1.0]}},
     "config crossover_study.n_components: 8 is given twice ([8, 8]); give each value once"),
    ({"crossover_study": {"n_components": [8], "train_fractions": [0.5, 0.5]}},
     "config crossover_study.train_fractions: 0.5 is given twice ([0.5, 0.5]); give each value "
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
        plan_runs(config(crossover_study={"n_components": [8], "train_fractions": [0.5, 0.5000001]}))
    assert "'study_same_f0.5'" in str(e.value)
    assert str(e.value).startswith("config crossover_study.train_fractions: 0.5000001 and "
                                   "crossover_study.train_fractions: 0.5 give one run label")


TUNING_GRIDS = {"same": {"learning_power": [0.3, 0.30000001], "batch_size": [0.05]},
                "vb_online": {"decay": [0.5, 0.7], "offset": [1]},
                "sklearn_online": {"learning_decay": [0.5, 0.7], "learning_offset": [10]}}


def test_two_grid_points_with_one_label_are_refused():
    """learning_power 0.3 and 0.30000001 both print as tune_same_learning_power0.3_...: one
    run was planned (running 0.30000001 under 0.3's label) against two of each VB method,
    the grids' equal size silently broken."""
    with pytest.raises(ValueError) as e:
        plan_runs(config(tuning={"grids": TUNING_GRIDS}))
    assert str(e.value) == (
        "config tuning.grids.same: {'learning_power': 0.30000001, 'batch_size': 0.05} and "
        "tuning.grids.same: {'learning_power': 0.3, 'batch_size': 0.05} give one run label "
        "'tune_same_learning_power0.3_batch_size0.05' (labels show numbers to 6 significant "
        "digits); make them differ")
    grids = {**TUNING_GRIDS, "same": {"learning_power": [0.3, 0.4], "batch_size": [0.05]}}
    runs = plan_runs(config(tuning={"grids": grids}))
    assert sum(lab.startswith("tune_same_") for lab in runs) == 2


@pytest.mark.parametrize("values, message", [
    ([0.4, 0.40000001],
     "config sensitivity.learning_power: 0.40000001 and sensitivity.learning_power: 0.4 give "
     "one run label 'sens_learning_power_0.4' (labels show numbers to 6 significant digits); "
     "make them differ"),
    ([0.3, 0.30000001],  # 0.3 is the main setting: sens_main; the other labelled as 0.3
     "config sensitivity.learning_power: 0.30000001 and the main setting 0.3 print alike in "
     "run labels ('0.3': labels show numbers to 6 significant digits); make them differ"),
])
def test_two_sensitivity_values_with_one_label_are_refused(values, message):
    """Values that differ below the labels' precision were one run (the second skipped as if
    it were the main setting's), or a run labelled as the main setting's value."""
    cfg = config(sensitivity={"learning_power": values})
    from same.model.sampler import SameLDA

    assert "learning_power" not in cfg["same"] and SameLDA().learning_power == 0.3  # the main
    with pytest.raises(ValueError) as e:
        check_config(cfg, SCHEMA)
    assert str(e.value) == message


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
     "a dataset of the config's synthetic: or corpora: section"),
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


# --- issue 36: a key given twice, a huge integer, a backend this machine cannot run ---------


@pytest.mark.parametrize("name, text, where", [
    ("repeat.yaml", "n_components: 8\nseeds: [0]\nn_components: 64\n", " (lines 1 and 3)"),
    ("nested.yaml", "same:\n  n_copies: 5\n  passes: 3\n  n_copies: 50\n", " (lines 2 and 4)"),
    ("flow.yaml", "same: {n_copies: 5, n_copies: 50}\n", " (line 1)"),
    ("repeat.json", '{"n_components": 8, "n_components": 64}', ""),
])
def test_config_file_repeating_a_key_is_refused_naming_it(tmp_path, name, text, where):
    """Snakemake's loader keeps the last of two equal keys: K = 64 would run without a word."""
    from same.experiments.config import check_config_files

    path = tmp_path / name
    path.write_text(text)
    key = "n_copies" if "n_copies" in text else "n_components"
    with pytest.raises(ValueError) as e:
        check_config_files([REPO / "config/config.yaml", path])
    assert str(e.value) == (f"config file {path}: key {key!r} is given twice{where}; give "
                            "each key once")


def test_config_file_merge_keys_and_the_shipped_profiles_pass(tmp_path):
    """A YAML merge key (``<<``) overrides by design; it is no repeated key."""
    from same.experiments.config import check_config_files

    path = tmp_path / "merge.yaml"
    path.write_text("base: &b {n_copies: 5}\nsame:\n  <<: *b\n  n_copies: 50\n")
    check_config_files([path, *(REPO / "config").glob("*.yaml")])


def test_config_huge_integer_is_one_line_naming_the_run():
    """``n_components: 1`` and 400 zeros passed the config check and crashed every fit job
    (OverflowError in same/model/fit_memory.py); the planned runs' specs refuse it."""
    with pytest.raises(ValueError) as e:
        check_config(config(n_components=10**400), SCHEMA)
    assert str(e.value) == ("config: run 'same': n_components: 1000...0 (401 digits) is too "
                            "large (a spec's integers are at most 2**63 - 1 in magnitude)")


def test_config_file_repeating_a_key_stops_the_workflow_before_any_job(tmp_path):
    from test_workflow import smk

    bad = tmp_path / "bad.yaml"
    bad.write_text("n_components: 8\nseeds: [0]\nn_components: 64\n")
    res = smk("-n", "--directory", str(tmp_path / "w"), "--snakefile", str(REPO / "Snakefile"),
              "--configfile", str(bad))
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert res.stderr.strip().splitlines()[-1] == (
        f"config file {bad}: key 'n_components' is given twice (lines 1 and 3); give each key "
        "once")
    assert "Traceback" not in out and "Building DAG" not in out, out


@pytest.fixture
def no_cupy(tmp_path):
    """A PYTHONPATH on which ``import cupy`` fails, as on a machine without CuPy."""
    stub = tmp_path / "no_cupy"
    (stub / "cupy").mkdir(parents=True)
    (stub / "cupy/__init__.py").write_text('raise ImportError("no CuPy here (test stub)")\n')
    return {"PYTHONPATH": os.pathsep.join([str(stub), os.environ.get("PYTHONPATH", "")])}


CUPY_MISSING = ("config backend: 'cupy' needs CuPy: pip install 'same-lda[cuda12]' (or "
                "[cuda13]), on this machine")


def test_backend_cupy_without_cupy_stops_a_local_run_before_any_job(tmp_path, no_cupy):
    """The paper profile's ``backend: cupy`` on a machine without CuPy passed the config
    check and the dry run, then every fit job ended in a traceback. A run whose jobs run here
    now stops at its start, in one line, before any job; a dry run (which cannot tell a local
    run from a cluster's) says so in a note and plans as before."""
    from test_workflow import smk

    args = ("--directory", str(tmp_path / "w"), "--snakefile", str(REPO / "Snakefile"),
            "--configfile", str(REPO / "config/ci.yaml"), "--config", "backend=cupy")
    res = smk("--cores", "1", *args, env=no_cupy)
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert res.stderr.strip().splitlines()[-1] == (
        f"{CUPY_MISSING}, where this run's jobs run; give backend: numpy, or run where CuPy and "
        "a CUDA device are")
    assert "Traceback" not in out and "rule split" not in out and "Select jobs" not in out, out
    assert not (tmp_path / "w/results").exists()
    res = smk("-n", *args, env=no_cupy)
    assert res.returncode == 0, res.stderr
    assert (f"note: {CUPY_MISSING}: a run whose jobs run here stops before its first job"
            in res.stderr.splitlines())


def test_backend_problem_names_the_key(monkeypatch):
    import sys

    from same.experiments.config import backend_problem

    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    assert backend_problem(config(backend="cupy")) == CUPY_MISSING
    assert backend_problem(config(backend="numpy")) is None


def test_fewer_seeds_than_the_verdicts_need_are_said_before_any_fit(tmp_path):
    """Issue 52: 3 seeds ran with no word, although the verdicts are built for 5. A dry run
    (so also a run, before its first job) notes it, saying what fewer seeds do to the
    verdicts; one seed says no test over seeds is judged; five say nothing."""
    from test_workflow import smk

    from same.experiments.config import VERDICT_SEEDS, seeds_note

    def note(seeds):
        (tmp_path / "p.yaml").write_text(f"seeds: {seeds}\n")
        res = smk("-n", "--directory", str(tmp_path / "w"), "--snakefile",
                  str(REPO / "Snakefile"), "--configfile", str(REPO / "config/ci.yaml"),
                  str(tmp_path / "p.yaml"))
        assert res.returncode == 0, res.stderr[-2000:]
        return [ln for ln in res.stderr.splitlines() if ln.startswith("note: config seeds")]

    assert VERDICT_SEEDS == 5
    assert note([0, 1, 2]) == [
        "note: config seeds: 3 per run ([0, 1, 2]), fewer than the 5 the verdicts are built "
        "for: the verdicts' 95% intervals and Welch tests are wide; a real difference of a "
        "few hundredths may read 'partly' or 'not reproduced'"]
    assert note([0]) == [f"note: {seeds_note({'seeds': [0]})}"]
    assert "not judged" in seeds_note({"seeds": [0]})
    assert note([0, 1, 2, 3, 4]) == []
