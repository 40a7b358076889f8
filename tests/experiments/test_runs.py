"""Runs as data: the run table of a workflow config, run specs, and one source of defaults."""

from __future__ import annotations

import json
import re
from numbers import Integral
from pathlib import Path

import pytest
import yaml
from ci_profiles import STUDIES_OFF
from sklearn.utils._param_validation import Interval, StrOptions

from same.experiments.plan import plan_runs, tuned_twins, tuning_runs
from same.experiments.runs import (
    MAIN_LABELS,
    SAME_CONFIG_PARAMS,
    SENS_MAIN_LABEL,
    RunSpec,
    fig1c_labels,
    m_label,
    m_sweep_labels,
    order_twins,
    prior_scale_labels,
    run_dir,
    same_params,
    schedule_labels,
    sensitivity_runs,
    spec_for,
    study_label,
    study_runs,
)
from same.model.sampler import SameLDA

REPO = Path(__file__).resolve().parents[2]


def load_config(*deltas):
    cfg = yaml.safe_load((REPO / "config/config.yaml").read_text())
    for name in deltas:  # Snakemake merges --configfile over the default, key by key
        for key, value in yaml.safe_load((REPO / "config" / name).read_text()).items():
            if isinstance(value, dict):
                cfg.setdefault(key, {}).update(value)
            else:
                cfg[key] = value
    return cfg


def schema_same():
    schema = yaml.safe_load((REPO / "config/config.schema.yaml").read_text())
    return schema["properties"]["same"]["properties"]


def test_schema_same_keys_are_the_estimators():
    estimator_keys = set(schema_same()) & set(SameLDA().get_params())
    assert estimator_keys == set(SAME_CONFIG_PARAMS)


def _json_types(constraints) -> set[str]:
    """The JSON schema types a list of scikit-learn parameter constraints admits."""
    types = set()
    for c in constraints:
        if c is None:
            types.add("null")
        elif c == "boolean":
            types.add("boolean")
        elif isinstance(c, StrOptions):
            types.add("string")
        elif isinstance(c, Interval):
            types.add("integer" if c.type is Integral else "number")
    return {"number"} | (types - {"integer"}) if "number" in types else types


@pytest.mark.parametrize("key", SAME_CONFIG_PARAMS)
def test_schema_types_and_choices_match_the_estimator_without_defaults(key):
    """The schema states SameLDA's types, choices and bounds, never a default: Snakemake's
    validate would fill a default into the config, and the workflow would run the schema's
    value instead of the estimator's."""
    prop = schema_same()[key]
    assert "default" not in prop, key
    constraints = SameLDA._parameter_constraints[key]
    types = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
    assert set(types) == _json_types(constraints), key
    options = [c for c in constraints if isinstance(c, StrOptions)]
    if options:
        assert set(prop["enum"]) == set(options[0].options), key
    intervals = [c for c in constraints if isinstance(c, Interval)]
    if intervals:  # the schema's lower bound is the union's (batch_size: int ≥ 1 or (0, 1])
        iv = min(intervals, key=lambda i: i.left)
        lower = prop.get("exclusiveMinimum", prop.get("minimum"))
        assert lower == iv.left, key
        assert ("exclusiveMinimum" in prop) == (iv.closed in ("right", "neither")), key


@pytest.mark.parametrize("deltas", [(), ("ci.yaml",), ("paper.yaml",)])
def test_every_planned_run_validates(deltas):
    cfg = load_config(*deltas)
    runs = plan_runs(cfg)
    assert {"same", "vb_online", "vb_batch", "cgs", "same_m1_long"} <= set(runs)
    for label, run in runs.items():
        spec = spec_for(cfg, runs, label, run["seeds"][0], cfg["n_components"])
        assert spec.validate() is spec
        assert RunSpec.from_json(spec.to_json()) == spec
    assert runs["same"]["seeds"] == cfg["seeds"] and runs["same_m1_long"]["seeds"] == cfg["seeds"][:1]


def test_config_silent_keys_take_estimator_defaults():
    cfg = load_config()
    cfg["same"] = {k: v for k, v in cfg["same"].items() if k not in ("sampler", "n_inner")}
    params = same_params(cfg)
    assert "sampler" not in params and "n_inner" not in params
    model = SameLDA(**params)
    assert model.sampler == "nonzero" and model.n_inner == 5


@pytest.mark.parametrize("deltas", [(), ("ci.yaml",), ("paper.yaml",), ("scale.yaml",)])
def test_the_labels_figures_read_are_the_planned_runs(deltas):
    """Labels are made once (same.experiments.runs): what the figures, tables and claims read is exactly
    the table of runs, no run planned that nothing reads, none read that is not planned."""
    cfg = load_config(*deltas)
    read = (set(MAIN_LABELS) | set(m_sweep_labels(cfg).values())
            | set(schedule_labels(cfg).values()) | set(prior_scale_labels(cfg).values())
            | set(fig1c_labels(cfg).values()) | {r["label"] for r in sensitivity_runs(cfg)}
            | set(study_runs(cfg)) | set(tuning_runs(cfg, lambda m: {}))
            | set(tuned_twins(cfg).values()) | set(order_twins(cfg).values()))
    assert read == set(plan_runs(cfg))


def test_labels_of_a_silent_config_follow_the_estimators_defaults():
    """sampler and prior_scale absent: the main run has SameLDA's (nonzero, bidmach), and the
    prior-scale variant is paper; the m sweep's nonzero m = n_copies run, the main run's
    settings exactly, is still a run of its own (the sweep's runs hold the machine alone;
    the main run never does)."""
    cfg = load_config()
    cfg["same"] = {k: v for k, v in cfg["same"].items() if k not in ("sampler", "prior_scale")}
    assert SameLDA().sampler == cfg["same"]["m_sampler"] == "nonzero"
    assert m_label(cfg, cfg["same"]["n_copies"]) == "same_m100"
    assert prior_scale_labels(cfg) == {"bidmach": "same", "paper": "same_scale_paper"}
    runs = plan_runs(cfg)
    assert "same_scale_paper" in runs
    assert (SameLDA(**runs["same_m100"]["params"]).get_params()
            == SameLDA(**runs["same"]["params"]).get_params())


#: The studies a profile switches off, each by its config key (issue 52).


@pytest.mark.parametrize("deltas", [(), ("ci.yaml",)])
@pytest.mark.parametrize("study", list(STUDIES_OFF))
def test_a_study_switched_off_plans_none_of_its_runs_and_changes_no_other(deltas, study):
    """Switching a study off removes its runs only: every other run keeps its entry (budget,
    params, seeds) and how it is timed (the runs reserving the machine alone are the m
    sweep's, never a run of another study)."""
    on = load_config(*deltas)
    off = {**on, "same": {**on["same"], **STUDIES_OFF[study]}}
    runs_on, runs_off = plan_runs(on), plan_runs(off)
    gone = set(runs_on) - set(runs_off)
    assert gone and not set(runs_off) - set(runs_on)
    assert {lab: runs_on[lab] for lab in runs_off} == runs_off
    timed_on, timed_off = set(m_sweep_labels(on).values()), set(m_sweep_labels(off).values())
    assert timed_off <= timed_on and timed_on - timed_off <= gone
    assert not timed_on & (set(MAIN_LABELS) | set(schedule_labels(on).values()))


def test_every_study_off_leaves_the_main_comparison():
    cfg = load_config("ci.yaml")
    cfg["same"].update({k: v for d in STUDIES_OFF.values() for k, v in d.items()})
    for key in ("tuning", "sensitivity", "crossover_study"):
        cfg[key] = None
    cfg["other_order"] = False
    cfg["cgs"]["fig1c_iterations"] = cfg["cgs"]["iterations"]  # no separate long CGS run
    assert set(plan_runs(cfg)) == set(MAIN_LABELS)
    assert fig1c_labels(cfg) == {"same": "same", "cgs": "cgs"}


def test_run_dir_is_the_fit_rules_folder():
    assert run_dir("kos", "same_m5", 64, 2) == "results/kos/same_m5/K64/seed2"
    assert run_dir("{dataset}", "{label}", "{K}", "{seed}") == (
        "results/{dataset}/{label}/K{K}/seed{seed}")


def test_variants_change_one_setting_each():
    """Every SAME variant differs from the main run in one setting; the m sweep from the main
    run with the m sweep's sampler; the crossover study's SAME runs not at all."""
    cfg = load_config()
    runs = plan_runs(cfg)
    main = runs["same"]["params"]
    m_sweep = {**main, "sampler": cfg["same"]["m_sampler"]}
    assert main["sampler"] == "summed" and m_sweep["sampler"] == "nonzero"
    assert m_label(cfg, cfg["same"]["n_copies"]) == "same_m100"
    for label, run in runs.items():
        if run["method"] != "same" or label == "same" or run.get("tuned") or "point" in run:
            continue  # tuned twins and tuning runs: test_tuning.py
        ref = m_sweep if re.fullmatch(r"same_m[0-9.]+", label) else main
        changed = {k for k in set(ref) | set(run["params"])
                   if ref.get(k) != run["params"].get(k)}
        changed |= {"document_order"} if run.get("document_order", "stored") != "stored" \
            else set()  # a run setting: the other document order
        same_run = label.startswith("study_") or label == m_label(cfg, cfg["same"]["n_copies"])
        assert len(changed) == (0 if same_run else 1), (label, changed)


def test_sensitivity_runs_one_change_each_and_main_reused():
    cfg = load_config()
    rows = sensitivity_runs(cfg)
    by = {(r["param"], r["value"]): r["label"] for r in rows}
    # the main setting (batch 1/20 from batch_size None, power 0.3, θ carried, corpus order)
    # is one run, on validation documents like every run of the study
    assert by[("batch_size", 0.05)] == by[("learning_power", 0.3)] == SENS_MAIN_LABEL
    assert by[("keep_doc_topic", True)] == by[("document_order", "stored")] == SENS_MAIN_LABEL
    assert by[("keep_doc_topic", False)] == "sens_keep_doc_topic_false"
    assert by[("batch_size", 0.025)] == "sens_batch_size_0.025"
    assert by[("document_order", "other")] == "sens_document_order_other"
    runs = plan_runs(cfg)
    for (param, value), label in by.items():
        if param == "document_order":  # a run setting (the runner's), not a SameLDA parameter
            if value != "stored":  # the stored order is the main setting's run
                assert runs[label]["params"] == same_params(cfg)
            assert spec_for(cfg, runs, label, 0, 64).document_order == value
            continue
        assert runs[label]["params"].get(param, SameLDA().get_params()[param]) in (value, None)
        assert runs[label]["validation_fraction"] == cfg["tuning"]["validation_fraction"]
        assert spec_for(cfg, runs, label, 0, 64).validation_fraction == 0.1


def test_study_runs_cover_the_grid():
    cfg = load_config()
    runs = plan_runs(cfg)
    st = cfg["crossover_study"]
    study = {k: r for k, r in runs.items() if k.startswith("study_")}
    assert len(study) == 4 * len(st["train_fractions"])
    for r in study.values():
        assert r["n_components"] == st["n_components"] and r["checkpoints"] == "final"
        assert r["seeds"] == cfg["seeds"][:1]
    cgs = study[study_label("cgs", 0.25)]
    assert cgs["budget"] == st["cgs_iterations"] and cgs["train_fraction"] == 0.25
    f = st["train_fractions"][0]
    spec = spec_for(cfg, runs, study_label("vb_batch", f), 0, 16)
    assert (spec.n_components, spec.train_fraction, spec.checkpoints) == (16, f, "final")
    assert study_runs({k: v for k, v in cfg.items() if k != "crossover_study"}) == {}


def test_spec_json_is_what_the_workflow_passes():
    cfg = load_config("ci.yaml")
    runs = plan_runs(cfg)
    spec = json.loads(spec_for(cfg, runs, "same_invlinear", 0, 8).to_json())
    assert spec["method"] == "same" and spec["params"]["m_schedule"] == "invlinear"
    assert spec["n_components"] == 8 and spec["doc_topic_prior"] == cfg["doc_topic_prior"]
    assert spec["label"] == "same_invlinear" and spec["backend"] == "numpy"


def _spec(**fields):
    base = {"method": "same", "n_components": 8, "doc_topic_prior": 0.1, "topic_word_prior": 0.1,
            "seed": 0, "budget": 2}
    return json.dumps({**base, **fields})


@pytest.mark.parametrize("params, got", [(None, "null"), ([1, 2], "an array"),
                                         ("n_samples=5", "a string"), (5, "a number")])
@pytest.mark.parametrize("method", ["same", "cgs", "vb_online"])
def test_spec_params_not_an_object_is_one_clear_error(params, got, method):
    with pytest.raises(ValueError) as e:
        RunSpec.from_json(_spec(method=method, params=params), source="--spec")
    assert str(e.value) == f"params must be a JSON object (parameter name → value), got {got}"


@pytest.mark.parametrize("label", [5, "", ["a"]])
def test_spec_label_must_be_a_name(label):
    with pytest.raises(ValueError) as e:
        RunSpec.from_json(_spec(label=label))
    assert str(e.value) == f"label must be a non-empty string or null, got {label!r}"


@pytest.mark.parametrize("method", ["vb_online", "vb_batch"])
@pytest.mark.parametrize("params, message", [
    ({"chunksize": 0}, "chunksize must be a positive integer (documents per chunk), got 0"),
    ({"chunksize": -3}, "chunksize must be a positive integer (documents per chunk), got -3"),
    ({"chunksize": 2.5}, "chunksize must be a positive integer (documents per chunk), got 2.5"),
    ({"iterations": "50"},
     "iterations must be a positive integer (E-step iterations per document), got '50'"),
    ({"iterations": True},
     "iterations must be a positive integer (E-step iterations per document), got True"),
])
def test_vb_spec_params_are_checked_at_spec_time(method, params, message):
    """Refused when the spec is read, before any split is loaded or any training starts."""
    with pytest.raises(ValueError) as e:
        RunSpec.from_json(_spec(method=method, params=params), source="--spec")
    assert str(e.value) == message
    assert RunSpec.from_json(_spec(method=method, params={"chunksize": 100, "iterations": 5}))


def test_cgs_spec_seed_outside_tomotopys_range_is_refused():
    with pytest.raises(ValueError) as e:
        RunSpec.from_json(_spec(method="cgs", seed=2**63))
    assert str(e.value) == (f"seed {2**63} is outside tomotopy's seed range 0..{2**63 - 1} "
                            "(2**63 - 1)")
    assert RunSpec.from_json(_spec(method="cgs", seed=2**63 - 1)).seed == 2**63 - 1


@pytest.mark.parametrize("method, message", [
    ("vb_online", f"seed {2**32} is outside gensim's seed range 0..{2**32 - 1} (numpy RandomState)"),
    ("same", "The 'random_state' parameter of SameLDA must be an int in the range "
             "[0, 4294967295], an instance of 'numpy.random.mtrand.RandomState' or None. Got "
             "4294967296 instead."),
])
def test_spec_seed_beyond_the_methods_range_is_refused_at_spec_time(method, message):
    """A seed every method uses whole, or refused when the spec is read (not at fit): gensim
    and SameLDA take seeds up to 2**32 - 1 (CGS: above)."""
    with pytest.raises(ValueError) as e:
        RunSpec.from_json(_spec(method=method, seed=2**32))
    assert str(e.value) == message
    assert RunSpec.from_json(_spec(method=method, seed=2**32 - 1)).seed == 2**32 - 1


# --- issue 36: a key given twice, integers beyond 64 bits, every CLI error in one line ------

TOO_LARGE = "is too large (a spec's integers are at most 2**63 - 1 in magnitude)"


def test_spec_json_with_a_key_given_twice_is_refused_naming_it():
    """``{"n_components": 4, ..., "n_components": 7}`` trained K = 7 without a word."""
    text = _spec(n_components=4)[:-1] + ', "n_components": 7}'
    with pytest.raises(ValueError) as e:
        RunSpec.from_json(text, source="--spec")
    assert str(e.value) == "--spec: key 'n_components' is given twice; give each key once"
    with pytest.raises(ValueError, match=r"^spec\.json: key 'n_copies' is given twice"):
        RunSpec.from_json('{"method": "same", "params": {"n_copies": 5, "n_copies": 50}}',
                          source="spec.json")


@pytest.mark.parametrize("fields, message", [
    ({"n_components": 10**400}, f"n_components: 1000...0 (401 digits) {TOO_LARGE}"),
    ({"budget": 2**63}, f"budget: 9223372036854775808 {TOO_LARGE}"),
    ({"threads": 10**30}, f"threads: 1000...0 (31 digits) {TOO_LARGE}"),
    ({"params": {"n_inner": 10**25}}, f"n_inner: 1000...0 (26 digits) {TOO_LARGE}"),
    ({"method": "vb_batch", "params": {"chunksize": 10**30}},
     f"chunksize: 1000...0 (31 digits) {TOO_LARGE}"),
    # α or β a whole number: reached the evaluator after training (np.isfinite refuses a
    # Python int beyond 64 bits), or an OverflowError at spec time beyond a float's range
    ({"doc_topic_prior": 10**20}, f"doc_topic_prior: 1000...0 (21 digits) {TOO_LARGE}"),
    ({"topic_word_prior": -10**400}, f"topic_word_prior: -1000...0 (401 digits) {TOO_LARGE}"),
])
def test_spec_integer_beyond_64_bits_is_one_line_naming_it(fields, message):
    """``"n_components": 1`` and 400 zeros ended in an OverflowError traceback from
    same/model/fit_memory.py; every integer of a spec is bounded where the spec is read."""
    with pytest.raises(ValueError) as e:
        RunSpec.from_json(_spec(**fields))
    assert str(e.value) == message
    assert RunSpec.from_json(_spec(n_components=2**63 - 1)).n_components == 2**63 - 1


def test_memory_check_of_a_huge_k_is_a_memory_error_not_an_overflow():
    """The estimator itself takes any int K (scikit-learn's check has no upper bound): its
    memory check words any size without converting to float."""
    import numpy as np
    import scipy.sparse as sp

    from same.model.fit_memory import check_fit_memory

    with pytest.raises(MemoryError) as e:
        check_fit_memory("same", 10**400, 6906)
    assert str(e.value).startswith(
        "same with n_components=1000...0 (401 digits) × 6906 words: its φ arrays need at "
        "least 1286...0 (397 digits) GiB, more than the ")
    with pytest.raises(MemoryError, match=r"an integer of about 5001 digits × 10 words"):
        check_fit_memory("same", 10**5000, 10)
    with pytest.raises(MemoryError, match=r"^same with n_components=1000\.\.\.0 \(401 digits\)"):
        SameLDA(n_components=10**400, max_iter=1).fit(sp.csr_matrix(np.ones((3, 4))))


def test_tuning_json_with_a_key_given_twice_is_refused(tmp_path):
    from same.experiments.tuning import TuningError, load_tuning

    path = tmp_path / "tuning.json"
    path.write_text('{"artefact": "x", "chosen": {}, "chosen": {"same": {}}}')
    with pytest.raises(TuningError) as e:
        load_tuning(path)
    assert f"{path}: key 'chosen' is given twice; give each key once" in str(e.value)
    assert str(e.value).count("\n") == 0


def _cli_cases(tmp: Path) -> list[tuple[list[str], str]]:
    """(argv, the one stderr line) of bad inputs to ``same-lda`` (files made under ``tmp``)."""
    def write(name, data: bytes) -> str:
        (tmp / name).write_bytes(data)
        return str(tmp / name)

    dup = write("dup.json", (_spec()[:-1] + ', "budget": 3}').encode())
    latin1_text = (_spec()[:-1] + ', "label": "café"}').encode("latin-1")
    latin1 = write("latin1.json", latin1_text)
    (tmp / "folder.json").mkdir()
    fit = ["--split", "s.npz", "--out", "o"]
    syn = '{"like": "kos", "fraction": 0.01, "n_topics": 3, "fraction": 0.5}'
    return [
        (["fit", "--spec", _spec(backend="cupy"), *fit],
         "backend='cupy' needs CuPy: pip install 'same-lda[cuda12]' (or [cuda13])"),
        (["fit", "--spec", _spec(n_components=10**400), *fit],
         f"n_components: 1000...0 (401 digits) {TOO_LARGE}"),
        (["fit", "--spec", _spec(params={"n_copies": 10**400}), *fit],
         f"n_copies: 1000...0 (401 digits) {TOO_LARGE}"),
        (["fit", "--spec", '{"n": 1' + "0" * 5000 + "}", *fit],
         "--spec: the integer 1000... (5001 digits) is too large"),
        (["fit", "--spec", "[" * 100_000, *fit], "--spec: nested too deeply to read"),
        (["fit", "--spec", _spec()[:-1] + ', "n_components": 7}', *fit],
         "--spec: key 'n_components' is given twice; give each key once"),
        (["fit", "--spec", f"@{dup}", *fit], f"{dup}: key 'budget' is given twice; give each "
                                             "key once"),
        (["fit", "--spec", f"@{tmp}/missing.json", *fit],
         f"spec file {tmp}/missing.json: No such file or directory"),
        (["fit", "--spec", f"@{tmp}/folder.json", *fit],
         f"spec file {tmp}/folder.json: Is a directory"),
        (["fit", "--spec", f"@{latin1}", *fit],
         f"spec file {latin1}: not UTF-8 text (invalid continuation byte at byte "
         f"{latin1_text.index(0xE9)})"),
        (["fit", "--spec", "[1, 2]", *fit], "--spec: a run spec is a JSON object, got list"),
        (["synthesize", "--name", "toy", "--spec", syn, "--out", "c.npz"],
         "--spec: key 'fraction' is given twice; give each key once"),
    ]


def test_cli_bad_inputs_end_in_one_line_exit_2(tmp_path, monkeypatch, capsys):
    """Each bad input: exit status 2 and exactly one stderr line, ``same-lda: error: ...``
    (a missing backend was a 29-line traceback, a huge K an OverflowError's; a key given
    twice was silently the last one), and nothing written."""
    from same.experiments import cli

    monkeypatch.setitem(__import__("sys").modules, "cupy", None)  # a machine without CuPy
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    for argv, line in _cli_cases(tmp_path):
        assert cli.main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err == f"same-lda: error: {line}\n", (argv[:3], err)
    assert list(work.iterdir()) == []


def test_cli_cupy_without_a_device_is_one_line(monkeypatch, capsys):
    import sys
    import types

    from same.experiments import cli

    def no_driver():
        raise RuntimeError("cudaErrorNoDevice: no CUDA-capable device\n is detected")

    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(
        runtime=types.SimpleNamespace(getDeviceCount=no_driver)))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    assert cli.main(["fit", "--spec", _spec(backend="cupy"), "--split", "s.npz", "--out",
                     "o"]) == 2
    assert capsys.readouterr().err == (
        "same-lda: error: backend='cupy' needs a CUDA device: cudaErrorNoDevice: no "
        "CUDA-capable device is detected\n")


def test_cli_overflow_is_one_line_a_bug_keeps_its_traceback(monkeypatch, capsys):
    """OverflowError (a number too large for numpy or numba) is the user's; TypeError (or a
    RuntimeError other than the backend's) is ours: it propagates with its traceback."""
    import same.experiments.runner
    from same.experiments import cli

    argv = ["fit", "--spec", _spec(), "--split", "s.npz", "--out", "o"]

    def raising(exc):
        def run(*args, **kwargs):
            raise exc
        return run

    monkeypatch.setattr(same.experiments.runner, "run", raising(OverflowError("Python int too large to "
                                                                  "convert to C long")))
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == ("same-lda: error: Python int too large to convert to C "
                                       "long\n")
    for bug in (TypeError("unsupported operand"), RuntimeError("dictionary changed size")):
        monkeypatch.setattr(same.experiments.runner, "run", raising(bug))
        with pytest.raises(type(bug)):
            cli.main(argv)
