"""A figure shows what its caption and the results say, and nothing else: a sweep row compares
runs of one configuration; the crossover figure words each finding as the table does and
draws each point's interval; a zoom titles only the bands it draws, draws a one-seed figure's
seed noise and every line's end (or is omitted); a figure with nothing to draw says so; a
caption names only the estimators drawn; fig1_passes marks C2's plateau passes; the README
cites the prior-scale figure only for the settings it draws. Expected values are computed
here from the planted numbers."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats
from test_figures import SEEDS, curve, flat, main_frame, run, zooms

from same.report import figures, plotting, seconds, study
from same.report.paper import METHOD_NAMES

REPO = Path(__file__).resolve().parents[2]


def texts(fig) -> str:
    """Every text of the figure (titles, panel texts, figure texts), whitespace collapsed."""
    parts = [t.get_text() for t in fig.texts]
    for ax in fig.axes:
        parts += [ax.get_title(), *(t.get_text() for t in ax.texts)]
    parts.append(fig._suptitle.get_text() if fig._suptitle else "")
    return " ".join(" ".join(parts).split())


def sweep(labels, tuned=()):
    """Five seeds of each SAME variant ``labels``, and a tuned twin of each of ``tuned``
    0.06 above it (as KOS's tuned constant-m run is)."""
    rows = []
    for i, lab in enumerate(labels):
        for s in SEEDS:
            rows += run(lab, "same", s, curve(-7.36 + 0.004 * i + 0.001 * s, seed=s))
            if lab in tuned:
                rows += run(f"{lab}_tuned", "same", s, curve(-7.30 + 0.001 * s, seed=s))
    return pd.DataFrame(rows)


@pytest.mark.parametrize("twins, rows", [(("same",), 1), (("same", "same_linear"), 2)])
def test_a_sweep_row_compares_runs_of_one_configuration(tmp_path, drawn_figures, twins, rows):
    """fig2b (and fig2a, the same function): a tuned row is drawn only where every schedule
    has its tuned twin; a tuned constant m beside untuned schedules is never compared."""
    df = sweep(("same", "same_linear"), tuned=twins)
    figures.fig_schedules(df, [tmp_path / "b.png"], "S",
                          {"constant": "same", "linear": "same_linear"})
    figures.fig_m(df, [tmp_path / "a.png"], "S", {20: "same_linear", 100: "same"})
    for fig in drawn_figures:
        titles = [ax.get_title() for ax in fig.axes if ax.get_label() != plotting.ZOOM_LABEL]
        assert any(t.startswith("tuned:") for t in titles) is (rows == 2), titles
        n_rows = len([ax for ax in fig.axes if ax.get_label() == plotting.ZOOM_LABEL])
        assert n_rows == rows * 3  # a zoom per panel: three estimators a row


def study_with_noise():
    """The crossover study of test_study (one seed a point), its largest point the main
    comparison's own setting, where the main comparison's five seeds put SAME 0.004 below VB
    batch: within seed noise there, so the table says 'undetermined at the largest scale'."""
    from test_study import main_frame as main_runs
    from test_study import scale, study_frame

    st = study_frame()
    k = 8
    at = (st["n_topics"] == k) & (st["train_fraction"] == 1.0)
    vb = st.loc[at & (st["method"] == "vb_batch"), "ll"].iloc[0]
    st.loc[at & (st["method"] == "same"), "ll"] = vb + 0.002
    noise = np.array([-0.006, -0.003, 0.0, 0.003, 0.006])
    main = main_runs({"same": vb - 0.004 + noise, "vb_batch": vb + noise[::-1] * 0.5,
                      "vb_online": vb - 0.1 + noise, "cgs": vb + 0.02 + noise}, k=k)
    return pd.concat([st, main], ignore_index=True), scale(k, 1.0)


def test_crossover_figure_says_what_the_table_says_and_draws_the_intervals(tmp_path,
                                                                           drawn_figures):
    df, top = study_with_noise()
    out = tmp_path / "s"
    found = study.crossover_study(df, [out.with_suffix(".png")], out.with_suffix(".csv"),
                                  out.with_suffix(".md"), "S", main_n_topics=8)
    fig = drawn_figures[-1]
    shown = texts(fig)
    md = " ".join(out.with_suffix(".md").read_text().split())
    assert "undetermined at the largest scale studied" in md
    for key, what, _ in study.FINDINGS:  # each finding as the table words it, one judgement
        phrase = " ".join(study.describe_crossover({**found[key], "basis": None}, what).split())
        assert phrase in shown and phrase in md, phrase
    assert "not at the largest scale (at" not in shown and "no interval" not in shown
    # SAME's points carry the interval of SAME − the better VB that the verdict reads
    ax = fig.axes[0]
    segments = [seg for c in ax.collections for seg in getattr(c, "get_segments", list)()]
    for s, _d, b in found["both_vb"]["points"]:
        assert b is not None
        assert any(np.allclose(seg[:, 0], s) and np.allclose(sorted(seg[:, 1]), b)
                   for seg in segments), (s, b)
    # the point within seed noise is ringed
    rings = [ln for ln in ax.get_lines() if ln.get_marker() == "o" and ln.get_mfc() == "none"]
    assert any(np.isclose(ln.get_xdata(), top).any() for ln in rings)


def one_seed_variants(second=-7.352):
    """The prior-scale figure's runs: the main SAME run over five seeds (its spread: the seed
    noise), its variant at seed 0 only, ``second`` its final there."""
    main = pd.DataFrame([r for s in SEEDS for r in run(
        "same", "same", s, curve(-7.35 + 0.01 * (s - 2), seed=s))])
    variant = pd.DataFrame(run("same_scale_paper", "same", 0, curve(second)))
    return main, pd.concat([main[main["seed"] == 0], variant])


def test_a_one_seed_zoom_titles_no_band_and_draws_the_seed_noise(tmp_path, drawn_figures):
    main, df = one_seed_variants()
    runs = {"bidmach": "same", "paper": "same_scale_paper"}
    figures.fig_variants(df, [tmp_path / "p.png"], "S", runs, "prior scale", spread=main)
    figures.fig_variants(df, [tmp_path / "q.png"], "S", runs, "prior scale")
    finals = main[main["pass"] == 20]["ll"].to_numpy()
    half = stats.t.ppf(0.975, len(finals) - 1) * math.sqrt(2) * finals.std(ddof=1)
    (z,), (bare,) = zooms(drawn_figures[0]), zooms(drawn_figures[1])
    for zoom in (z, bare):
        assert "95 % t interval" not in zoom.get_title() and "one seed" in zoom.get_title()
    lo, hi = z.get_ylim()
    assert hi - lo >= 2 * half  # never narrower than the seed noise: 0.002 apart reads as noise
    assert f"±{half:.3f}" in z.get_title()
    spans = [p.get_extents() for p in z.patches]
    assert len(z.patches) == 1 and spans  # the grey noise band
    assert "seed noise unknown" in bare.get_title()
    # a figure over several seeds keeps its interval band, and says so
    figures.fig_schedules(sweep(("same", "same_linear")), [tmp_path / "b.png"], "S",
                          {"constant": "same", "linear": "same_linear"})
    assert all("band: 95 % t interval" in zz.get_title() for zz in zooms(drawn_figures[-1]))


def test_a_zoom_holds_each_line_to_its_end_or_is_left_out(tmp_path, drawn_figures):
    """A line steep over the zoomed checkpoints stays inside the zoom; a zoom that would hold
    one line alone (the others far below) is left out and says why."""
    steep = curve(-7.35)
    steep[-3:] = [-7.42, -7.39, -7.36]
    df = pd.concat([pd.DataFrame(run("same", "same", 0, curve(-7.355))),
                    pd.DataFrame(run("same_linear", "same", 0, steep))])
    runs = {"constant": "same", "linear": "same_linear"}
    figures.fig_schedules(df, [tmp_path / "a.png"], "S", runs)
    for z in zooms(drawn_figures[-1]):
        lo, hi = z.get_ylim()
        for ln in z.get_lines():
            y = np.asarray(ln.get_ydata(), dtype=float)
            assert lo <= y.min() and y.max() <= hi
    far = pd.concat([pd.DataFrame(run("same", "same", 0, curve(-7.35))),
                     pd.DataFrame(run("same_linear", "same", 0, curve(-7.6)))])
    figures.fig_schedules(far, [tmp_path / "b.png"], "S", runs)
    for z in zooms(drawn_figures[-1]):
        assert not z.axison and not z.get_lines()
        assert "no zoom: only constant" in flat(t.get_text() for t in z.texts)


def test_a_figure_with_nothing_to_draw_says_so(tmp_path, drawn_figures):
    """fig1_seconds with every method's seconds refused (shared machine): each panel and the
    caption say nothing is drawn; the caption describes no line or bar."""
    df = main_frame()
    df["other_cores"], df["shared"] = 1.5, True
    seconds.fig_ll_vs_seconds(df, [tmp_path / "s.png"], "S")
    fig = drawn_figures[-1]
    assert not any(ax.get_lines() or ax.patches for ax in fig.axes)
    assert all("nothing drawn" in flat(t.get_text() for t in ax.texts) for ax in fig.axes)
    caption = flat(t.get_text() for t in fig.texts)
    assert "nothing drawn" in caption and "lines: each method's" not in caption
    assert "last column" not in caption


def test_a_caption_names_only_the_estimators_drawn(tmp_path, drawn_figures):
    df = main_frame().drop(columns=["ll_l2r"])
    figures.fig_ll_vs_passes(df, [tmp_path / "f.png"], "S", max_passes=20)
    caption = flat(t.get_text() for t in drawn_figures[-1].texts)
    assert "left-to-right" not in caption
    assert "document completion, the paper's metric" in caption


def plateau(lls, eps=0.01) -> int:
    """The pass (1-based) from which ``lls`` stays within ``eps`` of its last value."""
    far = [i for i, v in enumerate(lls) if abs(v - lls[-1]) > eps]
    return far[-1] + 2 if far else 1


def test_fig1_marks_each_methods_plateau_pass(tmp_path, drawn_figures):
    """C2's deciding quantity on fig1_passes: each method's plateau pass, mean over seeds, a
    bar on its curve and a number in the caption."""
    df = main_frame()
    figures.fig_ll_vs_passes(df, [tmp_path / "f.png"], "S", max_passes=20)
    fig = drawn_figures[-1]
    caption = flat(t.get_text() for t in fig.texts)
    ax = fig.axes[0]  # document completion, as published
    for label in ("same", "vb_online", "vb_batch"):
        want = np.mean([plateau(g.sort_values("pass")["ll"].tolist())
                        for _, g in df[df["label"] == label].groupby("seed")])
        assert f"{METHOD_NAMES[label]} {want:.1f}" in caption
        line = next(ln for ln in ax.get_lines()
                    if ln.get_label().startswith(METHOD_NAMES[label] + " (mean"))
        bars = [m for m in ax.get_lines() if m.get_marker() == "|"
                and m.get_color() == line.get_color()]
        assert len(bars) == 1 and bars[0].get_xdata()[0] == pytest.approx(want)
    assert "Plateau pass" in caption


def test_the_readme_cites_the_prior_scale_figure_for_what_it_draws():
    from same.experiments.runs import prior_scale_labels

    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    drawn = set(prior_scale_labels(config))
    text = " ".join((REPO / "README.md").read_text().split())
    cited = [s for s in re.split(r"(?<=[.)])\s+(?=[`A-Z])", text) if "prior_scale.png" in s]
    assert cited
    for sentence in cited:
        named = set(re.findall(r'"(bidmach|paper|paper_unscaled)"', sentence))
        assert named <= drawn, sentence
