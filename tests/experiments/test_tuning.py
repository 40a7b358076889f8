"""Tuning on validation documents (issue 30 item 2): the grids, the runs, the choice, its use."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from test_runs import load_config

from same.data.split import load_split, validation_split
from same.experiments import cli
from same.experiments.plan import plan_runs, tuned_twins, tuning_runs
from same.experiments.provenance import write_json
from same.experiments.rundir import RUN_KIND, seal_meta, trace_text
from same.experiments.runner import RunSpec, run
from same.experiments.runs import spec_for
from same.experiments.tuning import (
    TuningError,
    apply_tuning,
    choose,
    grid_points,
    load_tuning,
    tuning_rows,
    write_tuning,
)


def _sha(docs) -> str:
    return hashlib.sha256(np.ascontiguousarray(docs, dtype=np.int64).tobytes()).hexdigest()


def test_the_default_grids_are_equal_and_at_least_six_per_tuned_method():
    cfg = load_config()
    sizes = {m: len(grid_points(g)) for m, g in cfg["tuning"]["grids"].items()}
    assert set(sizes) == {"same", "vb_online", "sklearn_online"}
    assert len(set(sizes.values())) == 1 and min(sizes.values()) >= 6
    runs = plan_runs(cfg)
    tuning = {lab: r for lab, r in runs.items() if "point" in r}
    assert len(tuning) == sum(sizes.values())
    for lab, r in tuning.items():  # every tuning run: validation documents, first seed
        spec = spec_for(cfg, runs, lab, 0, cfg["n_components"])
        assert spec.validation_fraction == cfg["tuning"]["validation_fraction"]
        assert r["seeds"] == cfg["seeds"][:1] and spec.checkpoints == "final"
        assert {k: spec.params[k] for k in r["point"]} == r["point"]
    # each library's own defaults are in its grid (as published is a candidate)
    assert {"decay": 0.5, "offset": 1} in grid_points(cfg["tuning"]["grids"]["vb_online"])
    assert {"learning_decay": 0.7, "learning_offset": 10} in grid_points(
        cfg["tuning"]["grids"]["sklearn_online"])


def test_tuned_twins_of_methods_with_a_step_size_only():
    cfg = load_config()
    runs = plan_runs(cfg)
    twins = tuned_twins(cfg)
    assert {"same", "vb_online", "sklearn_online"} <= set(twins)
    assert not {"vb_batch", "sklearn_batch", "cgs"} & set(twins)
    first = cfg["tuning"]["tuned_variant_seeds"] == "first"
    for label, twin in twins.items():
        main = label in ("same", "vb_online", "sklearn_online")
        seeds = runs[label]["seeds"][:1] if first and not main else runs[label]["seeds"]
        assert runs[twin]["tuned"] and runs[twin]["seeds"] == seeds
        assert runs[twin]["params"] == runs[label]["params"]  # the choice comes at run time
        assert runs[twin].get("validation_fraction") is None  # scored on test documents


@pytest.mark.parametrize("grids, message", [
    ({"same": {"learning_power": [0.3, 0.5]}, "vb_online": {"decay": [0.5]}},
     "config tuning.grids: every method's grid must have the same number of configurations, "
     "got same 2, vb_online 1"),
    ({"vb_batch": {"iterations": [10]}},
     "config tuning.grids.vb_batch: not a method with a step size (tuned: same, vb_online, "
     "sklearn_online; VB batch and CGS have none)"),
    ({"same": {"learning_power": [0.3, 0.3]}},
     "config tuning.grids.same.learning_power: 0.3 is given twice ([0.3, 0.3]); give each "
     "value once"),
])
def test_bad_grids_are_one_line_naming_the_key(grids, message):
    cfg = load_config()
    cfg["tuning"] = {"validation_fraction": 0.1, "grids": grids}
    with pytest.raises(ValueError) as e:
        tuning_runs(cfg, lambda m: {})
    assert str(e.value) == message


def test_validation_and_test_documents_are_disjoint_by_ids_and_checksums(tmp_path, split_path):
    """A run with validation_fraction trains without, and scores only, validation documents
    carved from the training documents; meta.json records which documents it scored, and
    those are never the test documents."""
    split = load_split(split_path)
    base = dict(method="same", n_components=3, doc_topic_prior=0.1, topic_word_prior=0.1,
                seed=0, budget=2, params={"n_copies": 5}, checkpoints="final")
    val_run = run(RunSpec(**base, validation_fraction=0.25), split_path, tmp_path / "v",
                  progress=False)
    test_run = run(RunSpec(**base), split_path, tmp_path / "t", progress=False)
    val_meta = json.loads((val_run / "meta.json").read_text())["split"]
    test_meta = json.loads((test_run / "meta.json").read_text())["split"]
    val = validation_split(split, 0.25)
    assert not set(val.test_docs) & set(split.test_docs)  # ids
    assert set(val.test_docs) <= set(split.train_docs)
    assert not set(val.train_docs) & set(val.test_docs)
    assert val_meta["scored_on"] == "validation documents"
    assert test_meta["scored_on"] == "test documents"
    assert val_meta["scored_docs_sha256"] == _sha(val.test_docs)  # checksums
    assert test_meta["scored_docs_sha256"] == _sha(split.test_docs)
    assert val_meta["scored_docs_sha256"] != test_meta["scored_docs_sha256"]
    assert val_meta["scored_sha256"] == val.checksum() != split.checksum()
    assert val_meta["sha256"] == test_meta["sha256"] == split.checksum()  # the parent split
    assert val_meta["n_train_docs"] == split.train.shape[0] - len(val.test_docs)


def _planted_run(root: Path, label: str, point: dict, ll: float, ll_bidmach: float,
                 scored_on: str = "validation documents", split_sha: str = "a" * 64) -> Path:
    """A tuning run's folder as the runner writes it, with a planted final ll."""
    rows = [{"method": "same", "label": label, "pass": 3, "iteration": 60, "tokens_seen": 900,
             "samples_per_word": 300.0, "train_seconds": 1.0, "ll": ll,
             "perplexity": float(np.exp(-ll)), "ll_bidmach": ll_bidmach, "eval_seconds": 0.1,
             "native_score": None, "compile_seconds": 0.0}]
    text = trace_text(rows)
    d = root / label / "K3" / "seed0"
    d.mkdir(parents=True)
    (d / "trace.csv").write_text(text)
    write_json(d / "meta.json", seal_meta({
        "artefact": RUN_KIND, "label": label, "dataset": "toy",
        "settings": {"method": "same", "budget": 3, "checkpoints": "final", "seed": 0,
                     "params": {"n_copies": 5, **point}},
        "split": {"sha256": split_sha, "scored_on": scored_on, "validation_fraction": 0.1,
                  "scored_docs_sha256": "v" * 64 if scored_on != "test documents" else "t" * 64},
        "evaluator": {}, "trace_sha256": hashlib.sha256(text.encode()).hexdigest()}))
    return d / "trace.csv"


#: A planted grid: validation ranks A > B > C, the test documents C > B > A.
PLANTED = {"A": ({"learning_power": 0.3}, -7.40, -7.30, -7.60),
           "B": ({"learning_power": 0.5}, -7.45, -7.20, -7.50),
           "C": ({"learning_power": 0.7}, -7.50, -7.10, -7.20)}


def test_the_choice_is_made_on_validation_documents_only(tmp_path):
    """The planted grid's best configuration on test documents (C) is its worst on
    validation documents: tuning picks the validation best (A); given a run scored on test
    documents, it refuses to choose at all."""
    points, val, test = {}, [], []
    for name, (point, v_ll, v_bid, t_ll) in PLANTED.items():
        label = f"tune_same_{name.lower()}"
        points[label] = point
        val.append(_planted_run(tmp_path / "val", label, point, v_ll, v_bid))
        test.append(_planted_run(tmp_path / "test", label, point, t_ll, t_ll,
                                 scored_on="test documents"))
    rows = tuning_rows(val)
    assert choose(rows)["same"]["label"] == "tune_same_a"
    assert choose(rows, "ll_bidmach")["same"]["label"] == "tune_same_c"  # the other metric
    chosen = write_tuning(rows, points, tmp_path / "t.csv", tmp_path / "t.md",
                          tmp_path / "t.json")
    assert chosen == {"same": {"learning_power": 0.3}}
    assert load_tuning(tmp_path / "t.json")["chosen"] == chosen
    md = (tmp_path / "t.md").read_text()
    assert "| learning_power=0.3 | -7.4000 | -7.3000 | **chosen** |" in md
    assert "| learning_power=0.7 | -7.5000 | -7.1000 | best by the paper's metric |" in md
    assert "No test document enters tuning" in md
    for mixed in (test, [*val, test[2]]):
        with pytest.raises(TuningError, match="scored on test documents; tuning reads runs "
                                              "scored on validation documents only"):
            tuning_rows(mixed)


def test_a_tie_keeps_the_first_configuration_in_grid_order():
    rows = [{"method": "same", "label": x, "validation_ll": -7.4, "validation_ll_bidmach": -7.1}
            for x in ("first", "second")]
    assert choose(rows)["same"]["label"] == "first"


def _choice(tmp_path, split_sha, chosen=None) -> Path:
    path = tmp_path / "tuning.json"
    rows = [{"method": m, "label": f"tune_{m}", "validation_ll": -7.0,
             "validation_ll_bidmach": -7.0, "split_sha256": split_sha,
             "validation_fraction": 0.1, "validation_docs_sha256": "v" * 64}
            for m in (chosen or {"same": {"learning_power": 0.7}})]
    points = {f"tune_{m}": p for m, p in (chosen or {"same": {"learning_power": 0.7}}).items()}
    write_tuning(rows, points, tmp_path / "t.csv", tmp_path / "t.md", path)
    return path


def test_a_tuned_run_applies_the_choice_and_records_it(tmp_path, split_path):
    split = load_split(split_path)
    path = _choice(tmp_path, split.checksum(), {"same": {"learning_power": 0.7,
                                                         "batch_size": 0.1}})
    spec = RunSpec(method="same", n_components=3, doc_topic_prior=0.1, topic_word_prior=0.1,
                   seed=0, budget=2, params={"n_copies": 5, "learning_power": 0.3},
                   checkpoints="final", label="same_tuned")
    out = run(spec, split_path, tmp_path / "same_tuned", progress=False, tuning=path)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["settings"]["params"] == {"n_copies": 5, "learning_power": 0.7,
                                          "batch_size": 0.1}
    assert meta["tuning"] == {"path": str(path), "sha256": load_tuning(path)["sha256"]}
    assert meta["split"]["scored_on"] == "test documents"


def test_a_damaged_or_foreign_choice_is_refused_in_one_line(tmp_path, split_path, capsys):
    split = load_split(split_path)
    spec = RunSpec(method="same", n_components=3, doc_topic_prior=0.1, topic_word_prior=0.1,
                   seed=0, budget=1)
    other = _choice(tmp_path / "o", "b" * 64)
    with pytest.raises(TuningError, match="tuned on another split"):
        apply_tuning(spec, other, split.checksum())
    path = _choice(tmp_path, split.checksum())
    vb = RunSpec(**{**spec.__dict__, "method": "vb_online"})
    with pytest.raises(TuningError, match="holds no tuned settings for method 'vb_online'"):
        apply_tuning(vb, path, split.checksum())
    data = json.loads(path.read_text())
    tampered = copy.deepcopy(data)
    tampered["chosen"]["same"]["learning_power"] = 0.9
    path.write_text(json.dumps(tampered))
    args = ["fit", "--spec", spec.to_json(), "--split", str(split_path), "--out",
            str(tmp_path / "out"), "--tuning", str(path), "--no-progress"]
    assert cli.main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"same-lda: error: {path}: content does not match its checksum (changed or "
                   "damaged since it was written); rerun the tuning rule that wrote it")
    assert not (tmp_path / "out").exists()
    path.write_text("{not json")
    assert cli.main(args) == 2
    assert "unreadable (JSONDecodeError" in capsys.readouterr().err
