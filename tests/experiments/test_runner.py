"""The runner: complete, atomic outputs for every method; reruns; bad settings."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from same.data.split import load_split, make_split, train_subset
from same.data.synthetic import lda_corpus
from same.experiments import cli
from same.experiments.runner import (
    TRACE_COLUMNS,
    RunSpec,
    eval_points,
    load_model,
    run,
    score_model,
)


def read_trace(d):
    with open(d / "trace.csv") as f:
        return list(csv.DictReader(f))


CASES = [("same", 3, {"n_copies": 10}), ("cgs", 12, {}), ("vb_online", 3, {}),
         ("vb_batch", 3, {})]


@pytest.mark.parametrize("method, budget, params", CASES)
def test_outputs_complete(tmp_path, split_path, method, budget, params):
    cfg = RunSpec(method=method, n_components=3, doc_topic_prior=0.1, topic_word_prior=0.1,
                    seed=0, budget=budget, params=params)
    out = run(cfg, split_path, tmp_path / "toy" / method / "K3" / "seed0", progress=False)
    assert sorted(p.name for p in out.iterdir()) == ["meta.json", "model.npz", "trace.csv"]
    assert sorted(p.name for p in out.parent.iterdir()) == ["seed0"]  # no temporaries
    rows = read_trace(out)
    assert list(rows[0]) == list(TRACE_COLUMNS)
    assert [int(r["pass"]) for r in rows] == eval_points(budget)
    for r in rows:
        assert float(r["ll"]) < 0 and float(r["ll_bidmach"]) < 0 and float(r["ll_l2r"]) < 0
        assert float(r["perplexity"]) == pytest.approx(np.exp(-float(r["ll"])))
        assert float(r["train_seconds"]) >= 0 and float(r["eval_seconds"]) > 0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["settings"]["method"] == method
    assert meta["split"]["sha256"] and meta["threads"]["requested"] == 1
    assert meta["versions"]["numpy"] and "commit" in meta and meta["machine"]["cpu"]
    model = load_model(out / "model.npz")
    np.testing.assert_allclose(model["topic_word"].sum(axis=1), 1, rtol=1e-9)
    # the stored model scores like the last trace row
    assert score_model(out / "model.npz", split_path).ll == pytest.approx(float(rows[-1]["ll"]),
                                                                         abs=1e-4)


@pytest.mark.parametrize("method, budget, params", CASES)
def test_rerun_same_seed_same_trace(tmp_path, split_path, method, budget, params):
    cfg = RunSpec(method=method, n_components=3, doc_topic_prior=0.1, topic_word_prior=0.1,
                    seed=4, budget=budget, params=params)
    a = read_trace(run(cfg, split_path, tmp_path / "a", progress=False))
    b = read_trace(run(cfg, split_path, tmp_path / "b", progress=False))
    timing = {"train_seconds", "eval_seconds"}
    strip = lambda rows: [{k: v for k, v in r.items() if k not in timing} for r in rows]
    assert strip(a) == strip(b)


def test_failure_leaves_nothing(tmp_path, split_path, monkeypatch):
    import same.experiments.runner as runner

    def boom(*a, **k):
        raise RuntimeError("killed")

    monkeypatch.setattr(runner, "evaluate", boom)
    cfg = RunSpec(method="same", n_components=3, doc_topic_prior=0.1, topic_word_prior=0.1,
                    seed=0, budget=2)
    with pytest.raises(RuntimeError, match="killed"):
        run(cfg, split_path, tmp_path / "out" / "seed0", progress=False)
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_rerun_replaces_previous_output(tmp_path, split_path):
    """A rerun replaces an earlier output of ours (and an empty folder, as Snakemake leaves
    one); a folder that also holds a file we did not write is refused and left as it was."""
    cfg = RunSpec(method="same", n_components=3, doc_topic_prior=0.1, topic_word_prior=0.1,
                    seed=0, budget=2)
    out = tmp_path / "seed0"
    run(cfg, split_path, out, progress=False)
    before = (out / "meta.json").read_text()
    run(cfg, split_path, out, progress=False)
    assert (out / "meta.json").read_text() != before  # replaced (its time_utc, wall_seconds)
    assert sorted(p.name for p in out.iterdir()) == ["meta.json", "model.npz", "trace.csv"]
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"holds files same-lda did not write \(notes\.txt\)"):
        run(cfg, split_path, out, progress=False)
    assert (out / "notes.txt").read_text() == "mine" and (out / "trace.csv").is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert (run(cfg, split_path, empty, progress=False) / "trace.csv").is_file()


@pytest.mark.parametrize("kwargs, pattern", [
    ({"method": "lsa"}, r"unknown method 'lsa'; known: same, cgs, vb_online, vb_batch"),
    ({"budget": 0}, r"budget must be a positive integer, got 0"),
    ({"n_components": -2}, r"n_components must be a positive integer, got -2"),
    ({"doc_topic_prior": 0.0}, r"doc_topic_prior must be a positive finite number"),
    ({"params": {"n_sample": 3}}, r"unknown parameter\(s\) n_sample for method 'same'"),
    ({"method": "cgs", "params": {"n_copies": 3}}, r"unknown parameter\(s\) n_copies for "
                                                    r"method 'cgs'; allowed: none"),
    ({"method": "cgs", "backend": "cupy"}, r"backend='cupy' applies to method 'same' only"),
    ({"train_fraction": 0.0}, r"train_fraction must be in \(0, 1\], got 0.0"),
    ({"train_fraction": 1.5}, r"train_fraction must be in \(0, 1\], got 1.5"),
    ({"checkpoints": "some"}, r"checkpoints must be one of all, final, got 'some'"),
])
def test_bad_settings(tmp_path, split_path, kwargs, pattern):
    base = dict(method="same", n_components=3, doc_topic_prior=0.1, topic_word_prior=0.1, seed=0,
                budget=2)
    base.update(kwargs)
    with pytest.raises(ValueError, match=pattern):
        run(RunSpec(**base), split_path, tmp_path / "x", progress=False)
    assert not (tmp_path / "x").exists()


def test_threads_beyond_the_cpus_are_capped(tmp_path, split_path):
    """Item 15: spec ``threads: 64`` on a 2-core machine gave BLAS and numba 64 threads.  Now
    every pool gets at most the CPUs this process may use; meta.json records both numbers."""
    import os

    cpus = len(os.sched_getaffinity(0))
    cfg = RunSpec(method="vb_online", n_components=3, doc_topic_prior=0.1, topic_word_prior=0.1,
                  seed=0, budget=1, threads=64)
    meta = json.loads((run(cfg, split_path, tmp_path / "t", progress=False) / "meta.json")
                      .read_text())
    assert meta["settings"]["threads"] == 64
    assert meta["threads"]["requested"] == 64 and meta["threads"]["used"] == min(64, cpus)
    assert meta["threads"]["numba"] <= cpus
    assert meta["threads"]["threadpools"] and all(
        d["num_threads"] <= cpus for d in meta["threads"]["threadpools"])


def test_model_from_another_vocabulary_is_rejected(tmp_path, split_path):
    cfg = RunSpec(method="same", n_components=3, doc_topic_prior=0.1, topic_word_prior=0.1,
                    seed=0, budget=1)
    out = run(cfg, split_path, tmp_path / "m", progress=False)
    other = lda_corpus(n_docs=50, n_words=80, n_topics=3, seed=1)
    from same.data.corpus import Corpus

    vocab = [f"w{i}" for i in range(80)]
    other_split = make_split(Corpus("other", other.counts, vocab=vocab), 0.2)
    with pytest.raises(ValueError, match=r"model vocabulary .* does not match the split's .*"
                                         r"corpus 'other'"):
        score_model(out / "model.npz", other_split)


def _spec(**kw):
    base = dict(method="same", n_components=3, doc_topic_prior=0.1, topic_word_prior=0.1, seed=0,
                budget=2, params={"n_copies": 5, "m_schedule": "linear"})
    base.update(kw)
    return json.dumps(base)


def test_cli_fit_and_errors(tmp_path, split_path, capsys):
    out = tmp_path / "cli"
    rc = cli.main(["fit", "--spec", _spec(), "--split", str(split_path), "--out", str(out),
                   "--no-progress"])
    assert rc == 0 and (out / "trace.csv").is_file()
    meta = json.loads((out / "meta.json").read_text())
    assert meta["settings"]["params"] == {"n_copies": 5, "m_schedule": "linear"}
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(_spec(params={"m": 5}))
    rc = cli.main(["fit", "--spec", f"@{spec_file}", "--split", str(split_path),
                   "--out", str(tmp_path / "bad"), "--no-progress"])
    assert rc == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown parameter(s) m for method 'same'" in err
    assert not (tmp_path / "bad").exists()
    rc = cli.main(["score", "--model", str(out / "model.npz"), "--split", str(split_path)])
    assert rc == 0


@pytest.mark.parametrize("argv, message", [
    (["fit", "--spec", "{", "--split", "s.npz", "--out", "o"], "--spec: not valid JSON"),
    (["fit", "--spec", "[1]", "--split", "s.npz", "--out", "o"],
     "--spec: a run spec is a JSON object, got list"),
    (["fit", "--spec", '{"method": "same"}', "--split", "s.npz", "--out", "o"],
     "--spec: missing field(s) budget, doc_topic_prior, n_components, seed, topic_word_prior"),
    (["fit", "--spec", '{"methd": "same"}', "--split", "s.npz", "--out", "o"],
     "--spec: unknown field(s) methd"),
    (["fit", "--spec", "@/nonexistent/spec.json", "--split", "s.npz", "--out", "o"],
     "spec file /nonexistent/spec.json: No such file or directory"),
    (["fit", "--spec", _spec(params={"n_copies": -1}), "--split", "s.npz", "--out", "o"],
     "The 'n_copies' parameter of SameLDA must be a float in the range (0.0, inf). Got -1"),
    (["fit", "--spec", _spec(), "--split", "/nonexistent/split.npz", "--out", "o"],
     "/nonexistent/split.npz"),
])
def test_cli_user_errors_are_one_line_exit_2(tmp_path, argv, message, capsys):
    rc = cli.main(argv)
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("same-lda: error: ") and err.count("\n") == 1, err
    assert message in err


def test_cli_help_documents_every_option(capsys):
    import argparse

    parser = cli.build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subs.choices.items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, (name, action.dest)
        with pytest.raises(SystemExit) as exc:
            cli.main([name, "--help"])
        assert exc.value.code == 0
        text = capsys.readouterr().out
        if name == "split":  # defaults and choices are shown
            assert "(default: 0.1)" in text and "enron,kos,nips,nytimes,pubmed" in text


def test_cli_unknown_dataset_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["split", "--dataset", "reuters", "--out", "x.npz"])
    assert exc.value.code == 2
    assert "invalid choice: 'reuters'" in capsys.readouterr().err


def test_eval_points_leave_no_gap_over_a_tenth():
    """Every checkpoint up to 20, then no gap wider than 10 % of the budget (time-to-quality
    interpolates between checkpoints)."""
    for budget in (1, 7, 20, 21, 95, 1000, 2000, 3333):
        pts = eval_points(budget)
        assert pts[-1] == budget and pts[:min(budget, 20)] == list(range(1, min(budget, 20) + 1))
        assert max(np.diff([0] + pts)) <= max(1, -(-budget // 10))


def test_train_fraction_and_final_checkpoint(tmp_path, split_path):
    """A study run trains on the nested subset (fewer tokens in meta.json, same test half)
    and scores only its last checkpoint."""
    spec = RunSpec(method="vb_batch", n_components=3, doc_topic_prior=0.1, topic_word_prior=0.1,
                   seed=0, budget=3, train_fraction=0.5, checkpoints="final")
    out = run(spec, split_path, tmp_path / "half", progress=False)
    rows = read_trace(out)
    assert [int(r["pass"]) for r in rows] == [3]
    meta = json.loads((out / "meta.json").read_text())
    full = load_split(split_path)
    sub = train_subset(full, 0.5)
    assert meta["split"]["n_train_docs"] == sub.train.shape[0] == -(-full.train.shape[0] // 2)
    assert meta["split"]["n_train_tokens"] == int(sub.train.sum()) < int(full.train.sum())
    assert meta["split"]["sha256"] == full.checksum() and meta["split"]["train_fraction"] == 0.5
