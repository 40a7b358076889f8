"""The crossover study and the sensitivity report, on hand-made traces with known answers."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from same import report
from same.experiments.runs import study_label
from same.report.study import crossover, describe_crossover

W, FULL_TOKENS = 100, 32_000
GRID_K, GRID_F = (8, 16, 32, 64), (0.25, 0.5, 1.0)
CROSS = 2.0  # tokens per parameter where SAME overtakes VB batch in the hand-made study


def scale(k, f):
    return FULL_TOKENS * f / (k * W)


def study_frame(same_gain=0.05, cgs_lead=0.02):
    """Final-only traces of every study run: VB batch at -7.5, VB online at -7.6, SAME
    -7.5 + same_gain · ln(scale / CROSS) (so it overtakes VB batch at exactly CROSS tokens per
    parameter, linear in log scale), CGS ``cgs_lead`` above SAME everywhere."""
    rows = []
    for k in GRID_K:
        for f in GRID_F:
            same = -7.5 + same_gain * math.log(scale(k, f) / CROSS)
            lls = {"same": same, "vb_online": -7.6, "vb_batch": -7.5, "cgs": same + cgs_lead}
            for method, ll in lls.items():
                rows.append({"label": study_label(method, f), "method": method, "seed": 0,
                             "pass": 20, "iteration": 20, "train_seconds": 1.0, "ll": ll,
                             "n_topics": k, "n_words": W, "dataset": "toy", "backend": "numpy",
                             "n_train_tokens": int(FULL_TOKENS * f), "train_fraction": f,
                             "tokens_seen": 20 * FULL_TOKENS * f})
    return pd.DataFrame(rows)


def test_study_rows_give_scale_and_differences():
    rows = report.study_rows(study_frame())
    assert len(rows) == len(GRID_K) * len(GRID_F)
    scales = [r["tokens_per_parameter"] for r in rows]
    assert scales == sorted(scales)
    r = next(r for r in rows if r["n_topics"] == 16 and r["train_fraction"] == 0.5)
    assert r["tokens_per_parameter"] == pytest.approx(16_000 / (16 * W))
    assert r["best_vb_ll"] == -7.5 and r["vb_online_minus_best_vb"] == pytest.approx(-0.1)
    assert r["same_minus_cgs"] == pytest.approx(-0.02)


def test_findings_recover_the_known_crossover():
    """SAME overtakes VB batch (and both VB) at exactly CROSS; never within 0.01 of CGS."""
    f = report.study_findings(report.study_rows(study_frame()))
    grid = sorted(scale(k, fr) for k in GRID_K for fr in GRID_F)
    for key in ("vb_batch", "both_vb"):
        c = f[key]
        assert c["status"] == "from" and c["at_scale"] == pytest.approx(CROSS)
        assert c["from_scale"] == min(s for s in grid if s > CROSS)
        assert c["below_scale"] == max(s for s in grid if s < CROSS)
        assert c["exceptions"] == []
    assert f["cgs"]["status"] == "never"
    near = report.study_findings(report.study_rows(study_frame(cgs_lead=0.005)))
    assert near["cgs"]["status"] == "always"


def test_crossover_cases():
    assert crossover([1, 2, 4], [0.1, 0.2, 0.3])["status"] == "always"
    never = crossover([1, 2, 4], [0.1, 0.2, -0.3])
    assert never["status"] == "never" and never["exceptions"] == [(1.0, 0.1), (2.0, 0.2)]
    mixed = crossover([4, 1, 2, 8, 16], [0.1, 0.05, -0.1, 0.2, 0.3])  # unsorted input
    assert mixed["status"] == "from" and mixed["from_scale"] == 4 and mixed["below_scale"] == 2
    assert mixed["at_scale"] == pytest.approx(2 * 2 ** (0.1 / 0.2))  # log-linear
    assert mixed["exceptions"] == [(1.0, 0.05)]
    assert crossover([1, 2, 4], [-0.02, None, -0.005], -0.01)["status"] == "from"
    with pytest.raises(ValueError, match="at least one point"):
        crossover([1, 2], [None, float("nan")])
    assert "crossing ≈ 1.41" in describe_crossover(crossover([1, 2], [-1.0, 1.0]), "x")


def test_crossover_study_writes_figure_and_tables(tmp_path):
    figs = [tmp_path / "s.png", tmp_path / "s.pdf"]
    found = report.crossover_study(study_frame(), figs, tmp_path / "s.csv", tmp_path / "s.md",
                               "setting", main_n_topics=8)
    assert all(p.stat().st_size > 1000 for p in figs)
    csv = pd.read_csv(tmp_path / "s.csv")
    assert len(csv) == 12 and {"same_ll", "cgs_ll", "tokens_per_parameter"} <= set(csv)
    md = (tmp_path / "s.md").read_text()
    assert "SAME above VB batch from" in md and "crossing ≈ 2" in md
    assert found["vb_batch"]["at_scale"] == pytest.approx(CROSS)


def test_claims_summarise_across_scales(tmp_path):
    """claims.md gets one cross-scale line per claim: C1 and C3 from the study, the rest
    'measured at the main scale only'."""
    from test_report import INFO, frame

    df = frame(-7.55, -7.60)
    df["n_words"], df["n_train_tokens"], df["n_topics"] = 500, 64_000, 8
    df["sampler"] = "summed"
    report.claims({"toy": {"df": df, "study": study_frame(), **INFO}}, tmp_path / "c.md", "s")
    text = (tmp_path / "c.md").read_text()
    line = next(x for x in text.splitlines() if x.startswith("| C1 | toy at 16.00 tok/param"))
    assert "crossover study: SAME's final ll above both VB methods' from" in line
    assert "crossing ≈ 2.00" in line
    c3 = next(x for x in text.splitlines() if x.startswith("| C3 | toy at 16.00"))
    # SAME below CGS at every point: said as such, not as "not at the largest scale" (issue 53)
    assert "within 0.01 nats/token of CGS at its budget at no point studied (up to 40.00" in c3
    c6 = next(x for x in text.splitlines() if x.startswith("| C6 | toy at 16.00"))
    assert c6.endswith("measured at the main scale only |")


def test_claims_print_tokens_per_parameter_one_way(tmp_path):
    """Every tokens-per-parameter figure of claims.md is per_parameter_text's: a dataset at
    2.85025 reads "2.85" in its Scale line, the summary, and the cross-scale line (which had
    "2.9", two significant digits, beside "2.85" elsewhere)."""
    from test_report import INFO, frame

    from same.report.traces import per_parameter_text

    df = frame(-7.55, -7.60)
    df["n_words"], df["n_train_tokens"], df["n_topics"] = 500, 11_401, 8  # 2.85025
    df["sampler"] = "summed"
    report.claims({"toy": {"df": df, **INFO}}, tmp_path / "c.md", "s")
    text = (tmp_path / "c.md").read_text()
    shown = re.findall(r"([0-9.]+) (?:tok/param|training tokens per φ parameter)", text)
    assert per_parameter_text(11_401 / (8 * 500)) == "2.85"
    assert len(shown) > 3 and set(shown) == {"2.85"}


def test_sensitivity_figure_and_table(tmp_path):
    from test_report import run_rows

    rows = run_rows("sens_main", "same", 0, 5, -7.5, 1.0)
    rows += run_rows("sens_batch_size_0.1", "same", 0, 5, -7.6, 1.0)
    rows += run_rows("sens_shuffle_true", "same", 0, 5, -7.45, 1.0)
    df = pd.DataFrame(rows)
    runs = {"batch_size": {"0.05": "sens_main", "0.1": "sens_batch_size_0.1"},
            "shuffle": {"False": "sens_main", "True": "sens_shuffle_true"}}
    figs = [tmp_path / "x.png", tmp_path / "x.pdf"]
    out = report.fig_sensitivity(df, figs, tmp_path / "x.csv", "setting", runs)
    assert all(p.stat().st_size > 1000 for p in figs)
    got = {(r["parameter"], r["value"]): r["final_minus_main"] for r in out}
    final = {lab: df[df["label"] == lab]["ll"].iloc[-1] for lab in df["label"].unique()}
    assert got[("batch_size", "0.1")] == pytest.approx(final["sens_batch_size_0.1"]
                                                       - final["sens_main"])
    assert got[("shuffle", "False")] == 0.0
    assert np.array_equal(pd.read_csv(tmp_path / "x.csv")["main"], [True, False, True, False])
