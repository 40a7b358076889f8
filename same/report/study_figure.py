"""The crossover study's figure (:func:`same.report.study.crossover_study` draws it): each
method's final held-out ll minus the best VB's against training tokens per φ parameter, a
panel per held-out estimator, the crossings named on the panels, the main comparison a star."""

from __future__ import annotations

import numpy as np

from .crossover_text import FINDINGS, describe_crossover
from .paper import METHOD_NAMES
from .plotting import STYLES, _save, draw_caption
from .traces import PAPER_TOKENS_PER_PARAMETER
from .verdicts import METRICS

__all__ = ["plot_study"]


def plot_study(panels, outputs, caption: str, dataset: str, main_scale: float | None,
                n_seeds: int = 1) -> None:
    """The study's figure: a panel per held-out metric (``panels``: [(metric, rows,
    findings, main point)]), each method's final ll minus the best VB's against tokens per φ
    parameter; one legend for the figure, below the panels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    legend_h = 1.6
    height = 5.6 + legend_h
    fig, axes = plt.subplots(1, len(panels), figsize=(6.8 * len(panels), height), squeeze=False)
    handles = {}
    for ax, (metric, rows, findings, main) in zip(axes[0], panels):
        for h in _study_panel(ax, rows, findings, main_scale, main):
            handles.setdefault(h.get_label(), h)
        ax.set_title(METRICS[metric], fontsize=10)
    handles = list(handles.values())
    judged = any(b is not None for _, _, findings, _ in panels
                 for c in findings.values() if c for _, _, b in c.get("points", ()))
    seeds = (f"mean of {n_seeds} seeds per point" if n_seeds > 1 else
             "one seed per point (seed 0); bars and rings: each point's interval from the main "
             "comparison's seed spread" if judged else
             "one seed per point (seed 0) and no seed spread: directions untested")
    fig.suptitle(f"{dataset}: which method wins at which scale ({seeds})", fontsize=11)
    fig.tight_layout(rect=(0, legend_h / height, 1, 1))
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.0), fontsize=8,
               ncol=3, frameon=False)
    draw_caption(fig, caption)
    _save(fig, outputs)
    plt.close(fig)


#: Line style of each K of the study (lines join a method's points at one K) and marker of
#: each training fraction, in ascending order.
_K_STYLES = ("-", "--", ":", "-.")
_FRACTION_MARKERS = ("v", "s", "D", "o")


def _mark_scales(ax, findings: dict, main_scale: float | None, x) -> None:
    """The vertical marks of a panel, each named on it: every crossing (:func:`crossover`
    status "from"), the main comparison's scale, the paper's NYTimes scale; under the panel,
    each finding as the table words it (:func:`~.crossover_text.describe_crossover`, the same
    judgement, each point against its interval), and what judged the seed noise."""
    import textwrap

    trans = ax.get_xaxis_transform()
    lines, basis = [], None
    for key, text, color in FINDINGS:
        c = findings.get(key)
        if c is None:
            continue
        if c["status"] == "from":
            ax.axvline(c["at_scale"], color=color, ls="--", lw=1.1)
            ax.text(c["at_scale"], 0.98, f" {text} (≈{c['at_scale']:.3g})", transform=trans,
                    rotation=90, va="top", ha="right", fontsize=7, color=color)
        lines.append(textwrap.fill(describe_crossover({**c, "basis": None}, text), 110,
                                   subsequent_indent="   "))
        basis = basis or c.get("basis")
    if main_scale is not None:
        ax.axvline(main_scale, color="k", ls=":", lw=1)
        ax.text(main_scale, 0.02, f" main comparison ({main_scale:.3g})", transform=trans,
                rotation=90, va="bottom", ha="left", fontsize=7)
    nyt = PAPER_TOKENS_PER_PARAMETER["NYTimes"]
    if x.min() <= nyt <= x.max() * 1.5:
        ax.axvline(nyt, color="0.4", ls="-.", lw=1)
        ax.text(nyt, 0.02, f" paper's NYTimes, K=256 ({nyt:g})", transform=trans, rotation=90,
                va="bottom", ha="left", fontsize=7, color="0.3")
    if basis:
        lines.append(textwrap.fill(f"Seed noise: {basis}.", 110, subsequent_indent="   "))
    if lines:  # under the panel, clear of the points
        ax.text(0.0, -0.15, "\n".join(lines), transform=ax.transAxes, fontsize=6.5, va="top",
                color="0.2")


def _noise_marks(ax, findings: dict) -> list:
    """Each point's interval as the verdicts judge it: SAME's points carry the interval of
    SAME − the better VB (C1's, error bars); a point within seed noise for a finding is ringed
    in the finding's colour. Returns the legend's handles for what was drawn."""
    from matplotlib.lines import Line2D

    handles = []
    both = findings.get("both_vb") or {}
    bars = [(s, d, b) for s, d, b in both.get("points", ()) if b is not None]
    if bars:
        ax.errorbar([s for s, _, _ in bars], [d for _, d, _ in bars],
                    yerr=[[d - b[0] for _, d, b in bars], [b[1] - d for _, d, b in bars]],
                    fmt="none", ecolor=STYLES["same"][0], elinewidth=1, capsize=3, zorder=4)
        handles.append(Line2D([], [], color=STYLES["same"][0], marker="|", ms=10, ls="",
                              label="bar on SAME: 95 % interval of SAME − best VB (C1's seed "
                                    "noise)"))
    for i, (key, text, color) in enumerate(FINDINGS):
        c = findings.get(key) or {}
        sizes = 9 + 3 * i
        same_at = {s: d for s, d, _ in both.get("points", ())}
        ring = [(s, same_at[s]) for s, _ in c.get("within", ()) if s in same_at]
        if ring:
            ax.plot([s for s, _ in ring], [d for _, d in ring], "o", ms=sizes, mfc="none",
                    mec=color, mew=1.2, zorder=6)
            handles.append(Line2D([], [], color=color, marker="o", mfc="none", ls="",
                                  ms=sizes, label=f"ring: within seed noise for {text}"))
    return handles


def _study_panel(ax, rows, findings: dict, main_scale: float | None, main=None) -> list:
    """One metric's panel; returns the figure legend's handles (methods, K, fractions, marks).

    A line joins one method's points at one K (more training documents, same K); the
    marker gives the training fraction; a star, the main comparison (``main``,
    :func:`main_point`). Each crossing (:func:`crossover` status "from") is a vertical line
    named on the panel; a finding with no crossing in the range studied is said in the panel's
    corner instead (always / never above).
    """
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    x = np.array([r["tokens_per_parameter"] for r in rows])
    ks = sorted({r["n_topics"] for r in rows})
    fractions = sorted({r["train_fraction"] for r in rows})
    marker = {f: _FRACTION_MARKERS[i % 4] for i, f in enumerate(fractions)}
    methods = [m for m in METHOD_NAMES if f"{m}_minus_best_vb" in rows[0]]
    for m in methods:
        for i, k in enumerate(ks):
            pts = sorted((r["tokens_per_parameter"], r[f"{m}_minus_best_vb"], r["train_fraction"])
                         for r in rows if r["n_topics"] == k
                         and r[f"{m}_minus_best_vb"] is not None)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], _K_STYLES[i % 4],
                        color=STYLES[m][0], lw=1.3)
                for px, py, f in pts:
                    ax.plot(px, py, marker[f], color=STYLES[m][0], ms=5)
        if main is not None and main.get(f"{m}_minus_best_vb") is not None:
            ax.plot(main["tokens_per_parameter"], main[f"{m}_minus_best_vb"], "*",
                    color=STYLES[m][0], ms=13, mec="k", mew=0.6, zorder=5)
    ax.axhline(0, color="0.5", lw=0.8)
    noise = _noise_marks(ax, findings)
    _mark_scales(ax, findings, main_scale, x)
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("training tokens per φ parameter, N_train / (K · W)  (log scale)")
    ax.set_ylabel("final held-out ll − best VB's (nats/token)")
    ax.grid(alpha=0.3, which="both")
    star = ([Line2D([], [], color="0.3", ls="", marker="*", ms=10, mec="k", mew=0.6,
                    label=f"main comparison's runs (K = {main['n_topics']}, all training "
                          f"documents, their own budgets; seed {main['seed']})")]
            if main is not None else [])
    return ([Line2D([], [], color=STYLES[m][0], lw=2, label=METHOD_NAMES[m]) for m in methods]
            + [Line2D([], [], color="0.3", ls=_K_STYLES[i % 4], label=f"K = {k} (a line per K)")
               for i, k in enumerate(ks)]
            + [Line2D([], [], color="0.3", ls="", marker=marker[f],
                      label=f"training fraction {f:g}") for f in fractions] + star + noise)
