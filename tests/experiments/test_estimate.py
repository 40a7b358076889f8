"""The cost estimate before any fit (issue 52; same.experiments.estimate): its arithmetic on a
plan with known costs, its printed table and seeds warning, a bad plan refused in one line,
and a real probe on a toy split. Its accuracy on the tiny profile is checked end to end in
tests/test_workflow.py::test_tiny_end_to_end_and_resume."""

from __future__ import annotations

import json

import pytest

from same.experiments.config import seeds_note
from same.experiments.estimate import (
    GROUPS,
    TITLE,
    Costs,
    Job,
    cost_key,
    estimate,
    main,
    plan_jobs,
    read_plan,
    score_key,
    table_text,
    wall_seconds,
)
from same.experiments.methods import eval_points


def _spec(method, budget, k=8, checkpoints="all", validation_fraction=None, train_fraction=1.0,
          **params):
    return {"method": method, "n_components": k, "doc_topic_prior": 0.1,
            "topic_word_prior": 0.1, "seed": 0, "budget": budget, "threads": 1,
            "backend": "numpy", "params": params, "label": None,
            "train_fraction": train_fraction, "checkpoints": checkpoints,
            "validation_fraction": validation_fraction, "document_order": "stored"}


def _plan(seeds=(0, 1, 2, 3, 4), cores=2):
    fits = [
        {"dataset": "d", "label": "same", "spec": _spec("same", 10, n_copies=100), "jobs": 5,
         "exclusive": False},
        # a tuning run: step size differs (shares the probe), validation documents, final only
        {"dataset": "d", "label": "tune", "spec": _spec("same", 10, checkpoints="final",
                                                       validation_fraction=0.2, n_copies=100,
                                                       learning_power=0.7),
         "jobs": 3, "exclusive": False},
        # the m sweep: holds every core
        {"dataset": "d", "label": "same_m5", "spec": _spec("same", 4, n_copies=5), "jobs": 2,
         "exclusive": True},
        {"dataset": "d", "label": "cgs", "spec": _spec("cgs", 100, k=4, train_fraction=0.5),
         "jobs": 1, "exclusive": False},
    ]
    timing = {"d": {"entries": {"same": _spec("same", 10, n_copies=100)}, "repeats": 3,
                    "cap_seconds": 0.5}}
    return {"cores": cores, "threads": 1, "seeds": list(seeds), "splits": {"d": "unused"},
            "fits": fits, "timing": timing, "reports": {"fig": 2, "claims": 1},
            "scaling": None}


def _costs(plan):
    specs = {f["label"]: f["spec"] for f in plan["fits"]}
    return Costs(start={"same": 2.0, "cgs": 1.0},
                 unit={cost_key("d", specs["same"]): 0.3, cost_key("d", specs["same_m5"]): 0.1,
                       cost_key("d", specs["cgs"]): 0.01},
                 score={score_key("d", specs["same"]): 0.05, score_key("d", specs["tune"]): 0.02,
                        score_key("d", specs["cgs"]): 0.04},
                 report=1.5, tokens={"d": 1000.0})


def test_each_job_costs_start_up_passes_by_token_share_and_checkpoints_scored():
    plan = _plan()
    jobs = {j.label: j for j in plan_jobs(plan, _costs(plan))}
    n10, n4, n100 = len(eval_points(10)), len(eval_points(4)), len(eval_points(100))
    assert jobs["same"].seconds == pytest.approx(2.0 + 10 * 0.3 + n10 * 0.05)
    assert jobs["same"].count == 5
    # shares the main run's pass (step size only), trains on 80 %, scores once on validation
    assert jobs["tune"].seconds == pytest.approx(2.0 + 10 * 0.3 * 0.8 + 1 * 0.02)
    assert jobs["same_m5"].seconds == pytest.approx(2.0 + 4 * 0.1 + n4 * 0.05)
    assert jobs["cgs"].seconds == pytest.approx(1.0 + 100 * 0.01 * 0.5 + n100 * 0.04)
    # the timing rule: slowest start-up, then 3 rounds of training up to the cap (0.5 s of a
    # 3-second budget), but at least 2 passes (0.6 s)
    assert jobs["timing d"].seconds == pytest.approx(2.0 + 3 * 0.6) and jobs["timing d"].exclusive
    assert jobs["fig"].seconds == 1.5 and jobs["fig"].count == 2


def test_wall_time_spreads_shared_jobs_over_the_slots_and_adds_the_exclusive_ones():
    jobs = [Job("same", "a", 10.0, count=4), Job("cgs", "b", 6.0), Job("timing", "t", 5.0,
                                                                     exclusive=True)]
    assert wall_seconds(jobs, 2) == pytest.approx((40 + 6) / 2 + 5)
    assert wall_seconds(jobs, 1) == pytest.approx(46 + 5)
    # one long job on many slots: no shorter than that job
    assert wall_seconds([Job("cgs", "long", 100.0), Job("same", "s", 1.0, count=3)], 8) == 100.0


def test_one_core_runs_every_job_one_after_another():
    plan = _plan(cores=1)
    result = estimate(plan, _costs(plan))
    jobs = plan_jobs(plan, _costs(plan))
    assert result["slots"] == 1
    assert result["total_minutes"] == pytest.approx(sum(j.seconds * j.count for j in jobs) / 60)


def test_estimate_rows_per_method_in_order_with_runs_jobs_and_a_total():
    plan = _plan()
    costs = _costs(plan)
    result = estimate(plan, costs)
    jobs = plan_jobs(plan, costs)
    assert [r["group"] for r in result["rows"]] == [GROUPS[g] for g in
                                                    ("same", "cgs", "timing", "reports")]
    same = result["rows"][0]
    assert (same["runs"], same["jobs"]) == (3, 10)
    work = sum(j.seconds * j.count for j in jobs if j.group == "same")
    assert same["work_minutes"] == pytest.approx(work / 60)
    alone = sum(j.seconds * j.count for j in jobs if j.exclusive)
    assert same["wall_minutes"] == pytest.approx(
        (work - jobs[2].seconds * 2) / 2 / 60 + jobs[2].seconds * 2 / 60)
    assert result["total_minutes"] == pytest.approx(wall_seconds(jobs, 2) / 60)
    assert result["total_minutes"] * 60 >= alone
    assert result["seeds_note"] is None


def test_more_cores_never_cost_more_and_a_longer_budget_costs_more():
    plan = _plan()
    two, four = estimate(plan, _costs(plan)), estimate({**plan, "cores": 4}, _costs(plan))
    assert four["total_minutes"] < two["total_minutes"]
    longer = json.loads(json.dumps(plan))
    longer["fits"][0]["spec"]["budget"] = 20
    assert estimate(longer, _costs(plan))["total_minutes"] > two["total_minutes"]


def test_the_printed_table_and_the_seeds_warning():
    result = {"cores": 2, "slots": 2, "probe_seconds": 12.4, "total_minutes": 3.25,
              "seeds_note": seeds_note({"seeds": [0, 1, 2]}),
              "rows": [{"group": "SAME", "runs": 3, "jobs": 10, "work_minutes": 4.0,
                        "wall_minutes": 2.5},
                       {"group": "reports", "runs": 2, "jobs": 3, "work_minutes": 0.1,
                        "wall_minutes": 0.05}]}
    assert table_text(result) == (
        f"{TITLE}\n"
        "(2 cores, 2 jobs at a time; probed in 12 s)\n"
        "                            runs  jobs  work min  wall min\n"
        "SAME                           3    10       4.0       2.5\n"
        "reports                        2     3       0.1       0.1\n"
        "total                          5    13       4.1       3.2\n"
        f"warning: {seeds_note({'seeds': [0, 1, 2]})}\n")
    assert "warning" not in table_text({**result, "seeds_note": None})


def test_three_seeds_are_warned_five_are_not():
    plan = _plan(seeds=(0, 1, 2))
    assert estimate(plan, _costs(plan))["seeds_note"] == seeds_note({"seeds": [0, 1, 2]})
    assert "fewer than the 5" in table_text(estimate(plan, _costs(plan)))
    plan5 = _plan()
    assert estimate(plan5, _costs(plan5))["seeds_note"] is None


def test_a_bad_plan_is_one_line_and_nothing_written(tmp_path, capsys):
    out, table = tmp_path / "estimate.json", tmp_path / "estimate.txt"
    assert main(["--plan", "{not json", "--out", str(out), "--table", str(table)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m same.experiments.estimate: error: --plan")
    assert len(err.strip().splitlines()) == 1
    assert not out.exists() and not table.exists()


@pytest.mark.parametrize("edit, message", [
    (lambda p: p | {"fits": [{"dataset": "d"}]}, "--plan: fits[0]: 'label' is a required property"),
    (lambda p: p | {"fits": [p["fits"][0] | {"spec": "same"}]},
     "--plan: fits[0].spec: 'same' is not of type 'object'"),
    (lambda p: p | {"fits": {"same": 1}}, "--plan: fits: {'same': 1} is not of type 'array'"),
    (lambda p: p | {"fits": [p["fits"][0] | {"dataset": "other"}]},
     "--plan: fits[0]: dataset 'other' has no split"),
    (lambda p: p | {"fits": [p["fits"][0] | {"spec": p["fits"][0]["spec"] | {"budget": 0}}]},
     "--plan: fits[0].spec: budget must be a positive integer, got 0"),
    # a prober's: each was a TypeError or KeyError traceback, some after probing had begun
    (lambda p: p | {"fits": [p["fits"][0] | {"dataset": ["toy"]}]},
     "--plan: fits[0].dataset: ['toy'] is not of type 'string'"),
    (lambda p: p | {"splits": {"toy": 5}}, "--plan: splits.toy: 5 is not of type 'string'"),
    (lambda p: p | {"cores": "x"}, "--plan: cores: 'x' is not of type 'integer'"),
    (lambda p: p | {"fits": [p["fits"][0] | {"jobs": "many"}]},
     "--plan: fits[0].jobs: 'many' is not of type 'integer'"),
    (lambda p: p | {"timing": {"d": {"entries": {"a": {"method": "same"}}}}},
     "--plan: timing.d.entries.a: missing field(s) budget, doc_topic_prior, n_components, "
     "seed, topic_word_prior"),
])
def test_a_plan_whose_fits_are_malformed_is_one_line(tmp_path, capsys, edit, message):
    """Every planned fit is checked before the probe (a KeyError before)."""
    out, table = tmp_path / "estimate.json", tmp_path / "estimate.txt"
    plan = edit(_plan())
    assert main(["--plan", json.dumps(plan), "--out", str(out), "--table", str(table)]) == 2
    assert capsys.readouterr().err == f"python -m same.experiments.estimate: error: {message}\n"
    assert not out.exists() and not table.exists()


def test_a_valid_spec_without_params_is_passed_on_validated():
    """A spec without "params" passed the check and then was a KeyError in cost_key: the plan
    carries each spec as RunSpec reads it, defaults filled in."""
    plan = _plan()
    spec = dict(plan["fits"][0]["spec"])
    del spec["params"]
    read = read_plan(json.dumps(plan | {"fits": [plan["fits"][0] | {"spec": spec}]}))
    assert read["fits"][0]["spec"]["params"] == {}
    assert cost_key("d", read["fits"][0]["spec"])


def test_a_foreign_file_at_out_is_refused_before_the_probe(tmp_path, capsys):
    out = tmp_path / "estimate.json"
    out.write_text('{"mine": 1}\n')
    assert main(["--plan", json.dumps(_plan()), "--out", str(out), "--table",
                 str(tmp_path / "t.txt")]) == 2
    assert "--out" in capsys.readouterr().err and out.read_text() == '{"mine": 1}\n'


@pytest.mark.slow
def test_a_real_probe_on_a_toy_split(split_path, tmp_path, capsys):
    """Every cost the probe measures is positive; the files are written and the table printed."""
    plan = _plan()
    plan["splits"] = {"d": str(split_path)}
    plan["timing"] = {}
    out, table = tmp_path / "estimate.json", tmp_path / "estimate.txt"
    assert main(["--plan", json.dumps(plan), "--out", str(out), "--table", str(table)]) == 0
    result = json.loads(out.read_text())
    assert all(j["seconds"] > 0 for j in result["jobs"])
    # a fit job's start-up (a real `same-lda fit` subprocess) outweighs its toy training
    same = next(j for j in result["jobs"] if j["label"] == "same")
    assert same["seconds"] > 0.3
    err = capsys.readouterr().err
    assert "estimate: probing" in err and err.endswith(table.read_text())
    assert table.read_text().startswith(TITLE)


def test_c9_is_priced_on_the_corpus_its_sizes_copy(tmp_path):
    """C9's benchmark costs Σ factors × the tokens of the corpus it copies: a UCI corpus's
    registered shape, or a split of the profile's own (issue 52)."""
    import numpy as np
    import scipy.sparse as sp

    from same.data.corpus import REGISTRY
    from same.data.split import make_split
    from same.experiments.estimate import Costs, scaling_passes, scaling_seconds, scaling_shape

    kos = REGISTRY["kos"]
    assert scaling_shape({"base": "kos", "split": None}) == (kos.n_docs, kos.n_words, kos.nnz,
                                                             kos.n_tokens)
    counts = sp.csr_matrix(np.random.default_rng(0).poisson(0.5, size=(60, 30)))
    split = make_split(counts[np.asarray(counts.sum(axis=1)).ravel() > 1], 0.1, seed=0)
    split.save(tmp_path / "split.npz")
    shape = scaling_shape({"base": "mine", "split": str(tmp_path / "split.npz")})
    assert shape[3] == int(split.train.sum()) and shape[0] == split.train.shape[0]
    costs = Costs(start={"same": 2.0}, draw_per_token=1e-6, scaling_per_token=1e-5,
                  scaling_tokens=shape[3])
    assert scaling_seconds([0.5, 1, 2], costs) == pytest.approx(
        2.0 + 3.5 * shape[3] * (1e-6 + scaling_passes() * 1e-5))
