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
    # the largest point within its interval: undetermined there, not "not at the largest"
    top = crossover([1, 2, 4], [0.3, 0.2, -0.01], bounds=[(0.2, 0.4), (0.1, 0.3), (-0.05, 0.03)])
    assert top["status"] == "never" and top["within"] == [(4.0, -0.01)]
    text = describe_crossover(top, "x")
    assert text.startswith("x undetermined at the largest scale studied (4.00 tokens/parameter: "
                           "within seed noise); it holds at 2 smaller point(s)"), text
    assert "not at the largest" not in text


def main_frame(lls: dict, k=64, seeds=5):
    """Final-only traces of the main comparison at K = ``k`` and every training token (the
    study's budget of 20): ``lls`` method → one final ll per seed."""
    return pd.DataFrame([{"label": m, "method": m, "seed": s, "pass": 20, "iteration": 20,
                          "ll": ll, "n_topics": k, "n_words": W, "dataset": "toy",
                          "n_train_tokens": FULL_TOKENS}
                         for m, per in lls.items() for s, ll in zip(range(seeds), per)])


def test_one_seed_study_states_no_direction_within_seed_noise():
    """A one-seed study judges each difference against the main comparison's seed spread: a
    point counts as SAME above only beyond t · √(s_SAME² + s_VB²) (the 95% interval of one
    seed's difference), and a point within it is said to be within seed noise, not above."""
    from scipy import stats

    from same.report.stats import CONFIDENCE

    rows = report.study_rows(study_frame())
    sd = 0.02
    spread = {m: (sd, 5) for m in ("same", "vb_online", "vb_batch", "cgs")}
    found = report.study_findings(rows, report.point_finals(study_frame()), spread)["vb_batch"]
    half = stats.t.ppf(0.5 + CONFIDENCE / 2, 4) * math.hypot(sd, sd)
    diffs = [(r["tokens_per_parameter"], r["same_minus_vb_batch"]) for r in rows]
    assert found["within"] == sorted((x, d) for x, d in diffs if abs(d) <= half)
    assert found["status"] == "from"
    assert found["from_scale"] == min(x for x, d in diffs if d > half)
    text = describe_crossover(found, "SAME above VB batch")
    assert "; within seed noise at " in text
    assert text.endswith("(one seed per point: a difference counts only beyond its 95% interval "
                         "from the main comparison's seed-to-seed spread (5 seeds), taken for "
                         "every point)")
    # without a spread no direction is tested, and the text says so
    bare = report.study_findings(rows)["vb_batch"]
    assert describe_crossover(bare, "x").endswith(
        "(one seed per point and no seed spread to judge it by: directions untested)")


@pytest.mark.parametrize("gap, within", [(-0.004, True), (-0.05, False)])
def test_the_studys_point_at_the_main_setting_is_the_main_comparisons_test(gap, within):
    """Where a study point is the main comparison's own setting (K, all training tokens, the
    same budget), the main comparison's seeds judge it (Welch's interval), so the study never
    contradicts its tested result: the study's one seed puts SAME +0.002 above VB batch there,
    the main comparison's five seeds ``gap`` below (not significant: within seed noise;
    significant: not above)."""
    study = study_frame()
    k, point = 8, scale(8, 1.0)  # the largest scale: without the main seeds, above at every point
    at = (study["n_topics"] == k) & (study["train_fraction"] == 1.0)
    vb = study.loc[at & (study["method"] == "vb_batch"), "ll"].iloc[0]
    study.loc[at & (study["method"] == "same"), "ll"] = vb + 0.002
    noise = np.array([-0.006, -0.003, 0.0, 0.003, 0.006])
    main = main_frame({"same": vb + gap + noise, "vb_batch": vb + noise[::-1] * 0.5,
                       "vb_online": vb - 0.1 + noise, "cgs": vb + 0.02 + noise}, k=k)
    rows = report.study_rows(study)
    found = report.study_findings(rows, report.point_finals(study, main),
                                  report.seed_spread(main))["vb_batch"]
    assert report.study_findings(rows)["vb_batch"]["status"] == "from"  # its one seed: above
    assert (point in [x for x, _ in found["within"]]) is within
    assert found["status"] == "never" and found["below_scale"] == point
    assert (f"at {point:.2f}, the main comparison's own setting, its 5 seeds by Welch's 95% "
            "interval)") in describe_crossover(found, "x")


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
    assert "one seed per point: a difference counts only beyond its 95% interval" in line
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
