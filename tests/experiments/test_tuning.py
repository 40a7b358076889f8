"""Tuning on validation documents (issue 30 item 2): the grids, the runs, the choice, its use."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from test_runs import load_config

from same.data.split import load_split, validation_split
from same.experiments import cli
from same.experiments.config import check_config
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
    n_seeds = cfg["tuning"].get("seeds", 3)
    assert n_seeds >= 3
    for lab, r in tuning.items():  # every tuning run: validation documents, the first seeds
        spec = spec_for(cfg, runs, lab, 0, cfg["n_components"])
        assert spec.validation_fraction == cfg["tuning"]["validation_fraction"]
        assert r["seeds"] == cfg["seeds"][:n_seeds] and spec.checkpoints == "final"
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
                 scored_on: str = "validation documents", split_sha: str = "a" * 64,
                 seed: int = 0) -> Path:
    """A tuning run's folder (one seed) as the runner writes it, with a planted final ll."""
    rows = [{"method": "same", "label": label, "pass": 3, "iteration": 60, "tokens_seen": 900,
             "samples_per_word": 300.0, "train_seconds": 1.0, "ll": ll,
             "perplexity": float(np.exp(-ll)), "ll_bidmach": ll_bidmach, "eval_seconds": 0.1,
             "native_score": None, "compile_seconds": 0.0}]
    text = trace_text(rows)
    d = root / label / "K3" / f"seed{seed}"
    d.mkdir(parents=True)
    (d / "trace.csv").write_text(text)
    write_json(d / "meta.json", seal_meta({
        "artefact": RUN_KIND, "label": label, "dataset": "toy",
        "settings": {"method": "same", "budget": 3, "checkpoints": "final", "seed": seed,
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
    assert "| learning_power=0.3 | -7.4000 (1 seed) | -7.3000 (1 seed) | **chosen** |" in md
    assert ("| learning_power=0.7 | -7.5000 (1 seed) | -7.1000 (1 seed) | best by the paper's "
            "metric |") in md
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


# --- issue 49: the choice rests on a mean over seeds, its margin judged ---------------------

SCHEMA = Path(__file__).resolve().parents[2] / "config/config.schema.yaml"


def _plant_grid(root: Path, planted: dict) -> tuple[list[Path], dict]:
    """planted: label → (point, [final validation ll per seed]); the paper's metric is
    planted 0.1 above. Each seed's run folder is written; returns (traces, points)."""
    traces, points = [], {}
    for label, (point, lls) in planted.items():
        points[label] = point
        for seed, ll in enumerate(lls):
            traces.append(_planted_run(root, label, point, ll, ll + 0.1, seed=seed))
    return traces, points


def _settings(point: dict) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in point.items())


def _cell(values) -> str:
    """tuning.md's cell, computed here: mean ± the 95% Student-t half-width (n seeds)."""
    a = np.asarray(values, dtype=float)
    half = stats.t.ppf(0.975, len(a) - 1) * a.std(ddof=1) / np.sqrt(len(a))
    return f"{a.mean():.4f} ± {half:.4f} ({len(a)} seeds)"


def _welch(a, b) -> tuple[float, float, float, float]:
    """mean(a) − mean(b), its 95% t interval with the Welch–Satterthwaite degrees of
    freedom, and Welch's p (scipy), computed here from the planted values."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    diff = a.mean() - b.mean()
    half = stats.t.ppf(0.975, df) * np.sqrt(va + vb)
    return diff, diff - half, diff + half, stats.ttest_ind(a, b, equal_var=False).pvalue


def _outputs(tmp_path: Path) -> tuple[Path, Path, Path]:
    return tmp_path / "tuning.csv", tmp_path / "tuning.md", tmp_path / "tuning.json"


#: B has the best single seed of the grid and the worst mean; A the best mean.
ONE_SEED_WINS = {"tune_same_a": ({"learning_power": 0.3}, [-7.40, -7.41, -7.42]),
                 "tune_same_b": ({"learning_power": 0.5}, [-7.30, -7.50, -7.52]),
                 "tune_same_c": ({"learning_power": 0.7}, [-7.44, -7.45, -7.43])}


def test_the_choice_is_the_best_mean_over_seeds_not_the_best_single_seed(tmp_path):
    import csv

    traces, points = _plant_grid(tmp_path / "runs", ONE_SEED_WINS)
    rows = tuning_rows(traces)
    assert len(rows) == 9 and {r["seed"] for r in rows} == {0, 1, 2}  # one row per run, seed
    means = {lab: float(np.mean(lls)) for lab, (_, lls) in ONE_SEED_WINS.items()}
    best_mean = max(means, key=means.get)
    best_single = max(rows, key=lambda r: r["validation_ll"])["label"]
    assert (best_single, best_mean) == ("tune_same_b", "tune_same_a")  # as planted
    picked = choose(rows)["same"]
    assert picked["label"] == best_mean and picked["seeds"] == [0, 1, 2]
    assert picked["validation_ll"] == pytest.approx(means[best_mean])
    csv_path, md_path, json_path = _outputs(tmp_path)
    chosen = write_tuning(rows, points, csv_path, md_path, json_path)
    assert chosen == {"same": ONE_SEED_WINS[best_mean][0]}
    data = load_tuning(json_path)
    assert data["chosen"] == chosen and data["seeds"] == [0, 1, 2] and data["n_seeds"] == 3
    md = md_path.read_text()
    for lab, (point, lls) in ONE_SEED_WINS.items():
        mark = "**chosen**" if lab == best_mean else ""
        paper = [v + 0.1 for v in lls]
        best_paper = max(ONE_SEED_WINS, key=lambda x: np.mean(ONE_SEED_WINS[x][1]))
        mark += "; best by the paper's metric" if lab == best_paper else ""
        assert f"| {_settings(point)} | {_cell(lls)} | {_cell(paper)} | {mark} |" in md
    assert "Every configuration ran seeds [0, 1, 2] (`tuning.seeds`)" in md
    assert "- chosen at the grid's edge: learning_power = 0.3, the smallest value tried" in md
    table = list(csv.DictReader(csv_path.open()))  # one row per grid point
    assert [r["label"] for r in table] == list(ONE_SEED_WINS)
    for r in table:
        lls = np.asarray(ONE_SEED_WINS[r["label"]][1])
        half = stats.t.ppf(0.975, 2) * lls.std(ddof=1) / np.sqrt(3)
        assert (r["seeds"], r["n_seeds"], r["chosen"]) == ("0 1 2", "3",
                                                          str(r["label"] == best_mean))
        assert float(r["validation_ll"]) == pytest.approx(lls.mean())
        assert float(r["validation_ll_95"]) == pytest.approx(half)
        assert float(r["validation_ll_bidmach"]) == pytest.approx(lls.mean() + 0.1)
        assert float(r["validation_ll_bidmach_95"]) == pytest.approx(half)


#: B clearly best, in the middle of the grid; C the runner-up.
CLEAR_WINNER = {"tune_same_a": ({"learning_power": 0.3}, [-7.50, -7.52, -7.51]),
                "tune_same_b": ({"learning_power": 0.5}, [-7.30, -7.31, -7.29]),
                "tune_same_c": ({"learning_power": 0.7}, [-7.40, -7.42, -7.41])}


def test_a_clear_winner_has_a_significant_margin(tmp_path):
    traces, points = _plant_grid(tmp_path / "runs", CLEAR_WINNER)
    csv_path, md_path, json_path = _outputs(tmp_path)
    write_tuning(tuning_rows(traces), points, csv_path, md_path, json_path)
    diff, low, high, p = _welch(CLEAR_WINNER["tune_same_b"][1], CLEAR_WINNER["tune_same_c"][1])
    assert p < 0.05 and low > 0  # as planted
    md = md_path.read_text()
    assert (f"- margin over the runner-up (learning_power=0.7): {diff:+.4f} nats, 95% t "
            f"interval of the difference [{low:+.4f}, {high:+.4f}] (Welch–Satterthwaite), "
            f"Welch p = {p:.3g}\n") in md
    assert "inside the noise:" not in md and "chosen at the grid's edge" not in md
    m = load_tuning(json_path)["margin"]["same"]
    assert m["runner_up"] == {"learning_power": 0.7}
    assert (m["difference"], m["ci_low"], m["ci_high"], m["p"]) == pytest.approx(
        (diff, low, high, p))
    assert m["inside_noise"] is False and m["edge"] == []


def _near_tie() -> dict:
    """learning_power [0.5, 0.7] × batch_size [0.05, 0.1, 0.2]: (0.7, 0.1) beats (0.5, 0.1)
    by 0.0001 nats on the mean; the other four are far below."""
    planted = {}
    for lp in (0.5, 0.7):
        for i, bs in enumerate((0.05, 0.1, 0.2)):
            point = {"learning_power": lp, "batch_size": bs}
            label = f"tune_same_learning_power{lp:g}_batch_size{bs:g}"
            lls = [-7.70 - 0.01 * i - 0.003 * s for s in range(3)]
            planted[label] = (point, lls)
    planted["tune_same_learning_power0.7_batch_size0.1"] = (
        {"learning_power": 0.7, "batch_size": 0.1}, [-7.5720, -7.5690, -7.5750])
    planted["tune_same_learning_power0.5_batch_size0.1"] = (
        {"learning_power": 0.5, "batch_size": 0.1}, [-7.5722, -7.5700, -7.5744])
    return planted


def test_a_near_tie_is_inside_the_noise_and_a_largest_value_is_at_the_edge(tmp_path):
    planted = _near_tie()
    traces, points = _plant_grid(tmp_path / "runs", planted)
    csv_path, md_path, json_path = _outputs(tmp_path)
    chosen = write_tuning(tuning_rows(traces), points, csv_path, md_path, json_path)
    means = {lab: np.mean(lls) for lab, (_, lls) in planted.items()}
    ranked = sorted(means, key=means.get, reverse=True)
    assert chosen == {"same": planted[ranked[0]][0]} == {
        "same": {"learning_power": 0.7, "batch_size": 0.1}}
    runner = planted[ranked[1]][0]
    diff, low, high, p = _welch(planted[ranked[0]][1], planted[ranked[1]][1])
    assert p >= 0.05 and low < 0 < high  # as planted
    md = md_path.read_text()
    assert (f"- margin over the runner-up ({_settings(runner)}): {diff:+.4f} nats, 95% t "
            f"interval of the difference [{low:+.4f}, {high:+.4f}] (Welch–Satterthwaite), "
            f"Welch p = {p:.3g}\n") in md
    assert (f"- the choice is inside the noise: {_settings(runner)} is not significantly "
            f"worse (Welch p = {p:.3g})\n") in md
    assert "- chosen at the grid's edge: learning_power = 0.7, the largest value tried\n" in md
    assert "batch_size = 0.1, the" not in md  # 0.1 is the middle of [0.05, 0.1, 0.2]
    m = load_tuning(json_path)["margin"]["same"]
    assert m["runner_up"] == runner and m["p"] == pytest.approx(p)
    assert (m["difference"], m["ci_low"], m["ci_high"]) == pytest.approx((diff, low, high))
    assert m["inside_noise"] is True and m["edge"] == ["learning_power"]


def test_a_point_missing_a_seed_is_refused(tmp_path):
    point, lls = ONE_SEED_WINS["tune_same_b"]
    planted = {**ONE_SEED_WINS, "tune_same_b": (point, lls[:2])}  # seed 2 never ran
    traces, points = _plant_grid(tmp_path / "runs", planted)
    rows = tuning_rows(traces)
    message = ("tuning run 'tune_same_b' ran seeds [0, 1], the other configurations seeds "
               "[0, 1, 2]; rerun it at the missing seed(s) [2]: every configuration's mean "
               "must be over the same seeds")
    with pytest.raises(TuningError) as e:
        choose(rows)
    assert str(e.value) == message
    with pytest.raises(TuningError) as e:
        write_tuning(rows, points, *_outputs(tmp_path))
    assert str(e.value) == message
    assert not any(p.exists() for p in _outputs(tmp_path))  # nothing written


@pytest.mark.parametrize("seeds, n, expected", [
    ([0, 1, 2, 3, 4], 3, [0, 1, 2]),
    ([0, 1, 2, 3, 4], None, [0, 1, 2]),  # the key absent: the default, 3
    ([7, 3], None, [7, 3]),  # fewer seeds configured: all of them
    ([0, 1, 2, 3, 4], 1, [0]),
    ([0, 1, 2, 3, 4], 5, [0, 1, 2, 3, 4]),
])
def test_tuning_seeds_gives_every_tuning_run_the_first_seeds(seeds, n, expected):
    cfg = load_config()
    cfg["seeds"] = seeds
    if n is None:
        cfg["tuning"].pop("seeds", None)
    else:
        cfg["tuning"]["seeds"] = n
    runs = check_config(cfg, SCHEMA)
    tuning = {lab: r for lab, r in runs.items() if lab.startswith("tune_")}
    assert len(tuning) == sum(len(grid_points(g)) for g in cfg["tuning"]["grids"].values())
    assert all(r["seeds"] == expected for r in tuning.values())
    assert runs["same"]["seeds"] == seeds  # the main comparison: every seed, as before


@pytest.mark.parametrize("value, message", [
    (0, "config tuning.seeds: 0 is less than the minimum of 1"),
    (-2, "config tuning.seeds: -2 is less than the minimum of 1"),
    (2.5, "config tuning.seeds: 2.5 is not of type 'integer'"),
    (3.0, "config tuning.seeds: 3.0 is not of type 'integer'"),
    ("3", "config tuning.seeds: '3' is not of type 'integer'"),
    (True, "config tuning.seeds: True is not of type 'integer'"),
])
def test_a_bad_tuning_seeds_is_one_config_error_line(value, message):
    cfg = load_config()
    cfg["tuning"]["seeds"] = value
    for check in (lambda: check_config(cfg, SCHEMA), lambda: plan_runs(cfg)):
        with pytest.raises(ValueError) as e:
            check()
        assert str(e.value) == message


def test_real_tuning_runs_at_three_seeds_are_read_and_chosen_over(tmp_path, split_path):
    """Runs as the fit rule makes them (one per grid point and seed, scored on validation
    documents): every seed's run is a row, and the choice is the best mean over the seeds."""
    from same.experiments.tuning import tuning_label

    base = dict(method="same", n_components=3, doc_topic_prior=0.1, topic_word_prior=0.1,
                budget=1, checkpoints="final", validation_fraction=0.25)
    traces, points = [], {}
    for lp in (0.3, 0.7):
        point = {"learning_power": lp}
        label = tuning_label("same", point)
        points[label] = point
        for seed in (0, 1, 2):
            spec = RunSpec(**base, seed=seed, params={"n_copies": 2, **point}, label=label)
            out = run(spec, split_path, tmp_path / label / f"seed{seed}", progress=False)
            traces.append(out / "trace.csv")
    rows = tuning_rows(traces)
    assert sorted((r["label"], r["seed"]) for r in rows) == sorted(
        (lab, s) for lab in points for s in (0, 1, 2))
    means = {lab: np.mean([r["validation_ll"] for r in rows if r["label"] == lab])
             for lab in points}
    chosen = write_tuning(rows, points, *_outputs(tmp_path))
    assert chosen == {"same": points[max(means, key=means.get)]}
    data = load_tuning(_outputs(tmp_path)[2])
    assert data["seeds"] == [0, 1, 2] and data["margin"]["same"]["p"] is not None
