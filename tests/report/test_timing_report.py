"""Time (issue 37 item 6): fig1_seconds (held-out ll against training seconds, seconds per
pass per implementation), Table 2 over every seed, and the m sweep's fits holding the machine
alone. Every expected number is computed here from the planted per-pass seconds and ll."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from same.report import seconds as seconds_figure
from same.report import tables
from same.report.figures import figure_caption
from same.report.paper import IMPLEMENTATIONS, METHOD_NAMES
from same.report.verdicts import METRICS

SEEDS = (0, 1, 2)


def planted_run(label, method, seed, costs, lls, m=1.0, params=None):
    """Rows of one run: pass p took ``costs[p - 1]`` seconds and scored ``lls[p - 1]`` (every
    metric of METRICS: ll + an offset per metric)."""
    rows, seconds = [], 0.0
    for p, (cost, ll) in enumerate(zip(costs, lls), start=1):
        seconds += cost
        row = {"label": label, "method": method, "seed": seed, "pass": p, "iteration": p,
               "samples_per_word": m * p, "train_seconds": seconds, "tokens_seen": 1000 * p,
               "backend": "numpy", "dataset": "toy", "scored_on": "test documents",
               "shared": False, "other_cores": 0.0}
        for i, metric in enumerate(METRICS):
            row[metric] = ll - 0.1 * i
        if params is not None:
            row["params"] = json.dumps(params, sort_keys=True)
        rows.append(row)
    return rows


def costs_of(label_index, seed, passes):
    """Planted seconds per pass: a slow first pass, then steps that differ by pass and seed."""
    base = 0.1 * (label_index + 1)
    steady = base * (1 + 0.2 * seed)
    return [3 * base + 0.01 * seed] + [steady * (1 + 0.1 * ((p * (seed + 1)) % 4))
                                       for p in range(2, passes + 1)]


def lls_of(label_index, seed, passes):
    return [-8.0 + 0.05 * p + 0.01 * label_index - 0.003 * seed * (p % 3)
            for p in range(1, passes + 1)]


def main_frame(passes=6, twins=()):
    """The main comparison, 3 seeds each; ``twins``: labels that also get a ``_tuned`` run
    (slower and better, so that the tuned row differs)."""
    rows = []
    for i, label in enumerate(METHOD_NAMES):
        for seed in SEEDS:
            rows += planted_run(label, label, seed, costs_of(i, seed, passes),
                                lls_of(i, seed, passes))
            if label in twins:
                rows += planted_run(f"{label}_tuned", label, seed,
                                    [2 * c for c in costs_of(i, seed, passes)],
                                    [ll + 0.2 for ll in lls_of(i, seed, passes)])
    return pd.DataFrame(rows)


def test_fig_ll_vs_seconds_draws_the_mean_over_seeds_and_each_methods_cost(tmp_path,
                                                                           drawn_figures):
    passes = 6
    df = main_frame(passes)
    outs = [tmp_path / "fig1_seconds.png", tmp_path / "fig1_seconds.pdf"]
    seconds_figure.fig_ll_vs_seconds(df, outs, "S")
    assert all(p.stat().st_size > 1000 for p in outs)
    fig = drawn_figures[-1]
    metrics = [m for m in METRICS if m in df.columns]
    axes = fig.axes
    assert len(axes) == len(metrics) + 1  # one row (no tuned twins): metrics, then the bars
    for col, metric in enumerate(metrics):
        ax = axes[col]
        assert ax.get_xscale() == "log"
        assert "seconds" in ax.get_xlabel() and "nats/token" in ax.get_ylabel()
        lines = [ln for ln in ax.get_lines() if ln.get_label() and
                 not ln.get_label().startswith("_")]
        assert [ln.get_label() for ln in lines] == [f"{METHOD_NAMES[lab]} (mean of 3 seeds)"
                                                    for lab in METHOD_NAMES]
        for i, line in enumerate(lines):  # in METHOD_NAMES' order
            seconds = np.array([np.cumsum(costs_of(i, s, passes)) for s in SEEDS])
            ll = np.array([lls_of(i, s, passes) for s in SEEDS]) - 0.1 * list(METRICS).index(
                metric)
            np.testing.assert_allclose(line.get_xdata(), seconds.mean(axis=0))
            np.testing.assert_allclose(line.get_ydata(), ll.mean(axis=0))
    bars = axes[-1]
    widths = [p.get_width() for p in bars.patches]  # drawn bottom up: the last method first
    expected = [np.median([np.median(costs_of(i, s, passes)[1:]) for s in SEEDS])
                for i in range(len(METHOD_NAMES))]
    np.testing.assert_allclose(widths, expected[::-1])
    # issue 53: each tick names the method with the implementation timed, so no two ticks read
    # alike ("VB online" twice); the value at each bar's end; bars on a linear axis, from 0
    ticks = [t.get_text() for t in bars.get_yticklabels()]
    assert len(set(ticks)) == len(ticks) == len(METHOD_NAMES)
    for label, tick, text, width in zip(reversed(list(METHOD_NAMES)), ticks,
                                        [t.get_text() for t in bars.texts], widths):
        assert IMPLEMENTATIONS[label].split()[0] in tick and METHOD_NAMES[label].split(" (")[0] \
            in tick, tick
        assert text == f"{width:.3g} s"
    assert {"numba SAME", "gensim", "scikit-learn", "tomotopy"} == set(IMPLEMENTATIONS.values())
    assert "per pass" in bars.get_xlabel() and bars.get_xscale() == "linear"
    assert bars.get_xlim()[0] == 0 and bars.get_xlim()[1] <= 1.25 * max(
        p.get_width() + 1e-9 for p in bars.patches) * 2


def test_fig_ll_vs_seconds_rows_per_configuration_and_columns_per_metric(tmp_path,
                                                                         drawn_figures):
    """A tuned row when twins exist (its SAME line the twin's); the metric columns are the
    METRICS the traces have, whichever they are."""
    df = main_frame(4, twins=("same", "vb_online"))
    drawn = seconds_figure.fig_ll_vs_seconds(df, [tmp_path / "f.png"], "S")
    assert list(drawn) == ["published", "tuned"]
    fig = drawn_figures[-1]
    metrics = [m for m in METRICS if m in df.columns]
    assert len(fig.axes) == 2 * (len(metrics) + 1)
    tuned_same = fig.axes[len(metrics) + 1].get_lines()[0]
    expected = np.mean([np.cumsum([2 * c for c in costs_of(0, s, 4)]) for s in SEEDS], axis=0)
    np.testing.assert_allclose(tuned_same.get_xdata(), expected)
    # one metric fewer: one column fewer
    dropped = df.drop(columns=[metrics[-1]])
    seconds_figure.fig_ll_vs_seconds(dropped, [tmp_path / "g.png"], "S")
    assert len(drawn_figures[-1].axes) == 2 * len(metrics)


def test_fig1_seconds_caption_says_what_is_plotted():
    cap = figure_caption("fig1_seconds", "S")
    assert cap.startswith("S; lines: each method's held-out ll")
    for words in ("mean over seeds", "band: min–max over seeds", "evaluation excluded",
                  "C2, C4 and C5", "measured with the machine alone", "timing.json",
                  "per Gibbs iteration", "implementation", "refused, not drawn"):
        assert words in cap, words


def m_sweep_frame(passes=5):
    """The m sweep, 3 seeds each: m=1 with n_inner=3 in its params, the others without
    params (SameLDA's default n_inner)."""
    runs = {1: "same_m1", 10: "same_m10", 100: "same"}
    rows = []
    for i, (m, label) in enumerate(runs.items()):
        for seed in SEEDS:
            rows += planted_run(label, "same", seed, costs_of(i, seed, passes),
                                lls_of(i, seed, passes), m=m,
                                params={"n_copies": m, "n_inner": 3} if m == 1 else None)
    df = pd.DataFrame(rows)
    if "params" in df:  # a run without params: NaN there, as after concatenating frames
        df.loc[df["label"] != "same_m1", "params"] = np.nan
    return df, runs


def test_table2_median_over_seeds_first_pass_apart_and_sweeps_per_word(tmp_path):
    from same.model.sampler import SameLDA

    passes = 5
    df, runs = m_sweep_frame(passes)
    rows = tables.table2(df, runs, tmp_path / "t.csv", tmp_path / "t.md", "S")
    assert [r["n_samples"] for r in rows] == [1, 10, 100]
    default_inner = SameLDA().n_inner
    for i, (m, row) in enumerate(zip(sorted(runs), rows)):
        per_seed = [np.median(costs_of(i, s, passes)[1:]) for s in SEEDS]
        assert row["seeds"] == 3
        assert row["s_per_pass"] == pytest.approx(np.median(per_seed))
        assert row["s_per_pass_min"] == pytest.approx(min(per_seed))
        assert row["s_per_pass_max"] == pytest.approx(max(per_seed))
        assert row["first_pass_s"] == pytest.approx(
            np.median([costs_of(i, s, passes)[0] for s in SEEDS]))
        assert row["samples_per_word"] == pytest.approx(m * passes)
        n_inner = 3 if m == 1 else default_inner
        assert row["n_inner"] == n_inner
        assert row["sweeps_per_word"] == pytest.approx(m * passes * n_inner)
        assert row["ratio_to_smallest_m"] == pytest.approx(
            np.median(per_seed) / np.median([np.median(costs_of(0, s, passes)[1:])
                                             for s in SEEDS]))
    # the first seed alone would give another number: the median is over seeds
    assert rows[0]["s_per_pass"] != pytest.approx(np.median(costs_of(0, 0, passes)[1:]))
    # claim C6 reads {n_samples: s_per_pass}
    assert {r["n_samples"]: r["s_per_pass"] for r in rows}
    md = (tmp_path / "t.md").read_text()
    header = md.splitlines()[2]
    for col in ("first_pass_s", "s_per_pass", "seeds", "samples_per_word", "n_inner",
                "sweeps_per_word"):
        assert re.search(rf"\| {col}\s+\|", header), col
    assert "m × passes" in md and "samples_per_word × n_inner" in md
    assert "median over seeds" in md and "runs per m (3)" in md
    # the note on runs that held the machine names the threshold is_shared reads
    from same.experiments.machine_load import SHARED_CORES

    assert (f"(other work averaging at most {SHARED_CORES:g} busy cores: "
            "same.experiments.machine_load.SHARED_CORES)") in md


def test_timed_fits_reserve_every_core_and_run_at_the_configs_threads():
    """The m sweep's fits as published (table2's and C6's) reserve every core (no job runs
    beside them); every other fit, their tuned twins included, reserves the config's
    threads; every run's spec keeps the config's threads."""
    import yaml
    from test_workflow import REPO, planned_specs, smk

    from same.experiments.plan import tuned_twins
    from same.experiments.runs import m_sweep_labels

    res = smk("-n", "-p", "--forceall", "--cores", "2")
    assert res.returncode == 0, res.stderr[-3000:]
    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    timed = set(m_sweep_labels(config).values())
    twins = {tuned_twins(config)[lab] for lab in timed if lab in tuned_twins(config)}
    # the m sweep's tuned twins (when the profile runs them) are not timed: they feed C7's lls
    assert not twins & timed
    assert bool(twins) == (config["tuning"].get("tuned_variant_seeds", "all") != "none")
    reserved = {}
    for block in res.stdout.split("\nrule ")[1:]:
        if block.startswith("fit:"):
            label = re.search(r"label=([a-z0-9_.]+)", block).group(1)
            threads = re.search(r"^\s+threads: (\d+)", block, re.M)
            reserved.setdefault(label, set()).add(int(threads.group(1)) if threads else 1)
    assert {lab for lab, t in reserved.items() if t == {2}} == timed
    assert all(t == {config["threads"]} for lab, t in reserved.items() if lab not in timed)
    assert {s["threads"] for s in planned_specs(res.stdout).values()} == {config["threads"]}
