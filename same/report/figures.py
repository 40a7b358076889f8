"""Figures (PNG and PDF, labelled axes and units, the setting in the caption) from traces."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from same.io.outputs import check_target, figure_kind, write_file

from .captions import figure_caption
from .paper import METHOD_NAMES
from .traces import configuration_frame, configurations, first_seed, test_traces
from .verdicts import METRICS

__all__ = ["fig_ll_vs_passes", "fig_ll_vs_samples", "fig_m", "fig_sweep", "fig_variants",
           "fig_schedules", "fig_sensitivity", "figure_caption", "COLORS", "VARIANT_STYLES"]

COLORS = {"same": "C0", "vb_online": "C1", "vb_batch": "C2", "sklearn_online": "C4",
          "sklearn_batch": "C5", "cgs": "C3"}

def _save(fig, outputs: Sequence[str | os.PathLike], also=()) -> None:
    """Save ``fig`` to each of ``outputs`` (format by suffix) by :mod:`same.io.outputs`'s rules:
    every target, and each (path, kind) of ``also`` (the figure's other outputs), is checked
    before any is written; an existing figure is replaced only when Matplotlib made it."""
    targets = [(Path(out), figure_kind(Path(out).suffix.lstrip("."))) for out in outputs]
    for out, kind in [*targets, *also]:
        check_target(out, kind)
    for out, kind in targets:
        fmt = out.suffix.lstrip(".")
        meta = {"CreationDate": None} if fmt == "pdf" else None  # byte-identical reruns
        write_file(out, lambda f, fmt=fmt, meta=meta: fig.savefig(
            f, format=fmt, dpi=150, bbox_inches="tight", metadata=meta), kind)


def _band(ax, df, x, label, color, style="-", y="ll", at=None, marker="o"):
    """Mean over seeds with a min–max band of column ``y``, at each value of ``x``; ``at``: a
    column plotted as the x coordinate instead, its mean over seeds at each ``x`` (e.g. x =
    pass, at = train_seconds: each checkpoint at the seeds' mean seconds)."""
    g = df.groupby(x)
    mean, lo, hi = g[y].mean(), g[y].min(), g[y].max()
    xs = g[at].mean().to_numpy() if at else mean.index
    n = df["seed"].nunique()
    ax.plot(xs, mean.values, style, color=color,
            label=label + (f" (mean of {n} seeds)" if n > 1 else ""), marker=marker,
            ms=2.5 if marker == "o" else 3.5)
    if n > 1:
        ax.fill_between(xs, lo.values, hi.values, color=color, alpha=0.2, lw=0)


def _dataset_title(df, caption: str) -> str:
    """The dataset's name for a figure title, marked SYNTHETIC when the caption (the
    workflow's dataset description) says it is."""
    name = str(df["dataset"].iloc[0])
    return f"{name} (SYNTHETIC data)" if f"{name} (SYNTHETIC" in caption else name


def _plot(df, outputs, caption: str, series, *, x: str, xlabel: str, title: str,
          log_x: bool = False, hline=None, metrics=("ll",), rows=None) -> None:
    """One figure: ll (mean over seeds with a min–max band) of each series against ``x``, a
    panel per held-out metric of ``metrics`` (trace columns, :data:`~.verdicts.METRICS`),
    side by side with the same x axis; ``rows`` stacks such rows of panels.

    series : iterable of (DataFrame rows of one run label, legend name, color[, marker])
    hline : optional (legend name, color, {metric: ll}) reference line
    rows : optional list of (row name, series, hline), one row of panels each (e.g. the
        configurations as published and tuned), all panels of a column sharing the y axis
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    rows = rows or [("", series, hline)]
    metrics = [m for m in metrics if m in df.columns]
    fig, axes = plt.subplots(len(rows), len(metrics), figsize=(6.4 * len(metrics),
                                                               4.4 * len(rows)),
                             squeeze=False, sharey="col" if len(rows) > 1 else False)
    fig.text(0.01, -0.02 / len(rows), caption, ha="left", va="top", fontsize=7, wrap=True)
    heading = f"{_dataset_title(df, caption)}: {title}"
    for (row_name, row_series, row_hline), ax_row in zip(rows, axes):
        for ax, metric in zip(ax_row, metrics):
            for d, name, color, *marker in row_series:
                if not d.empty:
                    _band(ax, d, x, name, color, y=metric, marker=(marker or ["o"])[0])
            if row_hline is not None:
                ax.axhline(row_hline[2][metric], color=row_hline[1], ls=":", lw=1,
                           label=row_hline[0])
            if log_x:
                ax.set_xscale("log")
            else:
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_xlabel(xlabel)
            ax.set_ylabel("held-out log-likelihood (nats/token)")
            panel = heading if len(metrics) == 1 and len(rows) == 1 else METRICS[metric]
            ax.set_title(f"{row_name}: {panel}" if row_name else panel, fontsize=10)
            ax.grid(alpha=0.3, which="both" if log_x else "major")
            ax.legend(fontsize=7 if len(rows) > 1 else 8)
    if len(metrics) > 1 or len(rows) > 1:
        fig.suptitle(heading)
    fig.tight_layout()
    _save(fig, outputs)
    plt.close(fig)


def _main_series(df, max_passes: int):
    """fig1's series and CGS reference line of one configuration's traces."""
    series = [(df[(df["label"] == label) & (df["pass"] <= max_passes)], METHOD_NAMES[label],
               COLORS[label]) for label in METHOD_NAMES]
    ref = df[df["label"] == "cgs"]
    hline = None
    if not ref.empty:
        last = ref[ref["pass"] == ref["pass"].max()]
        hline = (f"CGS after {int(ref['pass'].max())} iterations", COLORS["cgs"],
                 {m: last[m].mean() for m in METRICS if m in last.columns})
    return series, hline


def fig_ll_vs_passes(df, outputs, caption: str, max_passes: int) -> None:
    """fig1a/1b: held-out ll vs passes for SAME, VB online and batch (gensim, scikit-learn) and
    CGS: a column per held-out metric, a row per configuration the traces hold (as published;
    tuned, each method's step sizes chosen on validation documents)."""
    from same.experiments.tuning import CONFIGURATIONS

    df = test_traces(df)
    rows = [(CONFIGURATIONS[c], *_main_series(configuration_frame(df, c), max_passes))
            for c in configurations(df)]
    _plot(df, outputs, figure_caption("fig1_passes", caption), None, x="pass",
          metrics=tuple(METRICS), rows=rows,
          xlabel="passes over the training documents (CGS: iterations)",
          title="convergence per pass")


def fig_ll_vs_samples(df, outputs, caption: str, labels: dict) -> None:
    """fig1c: held-out ll vs samples per word (log scale): SAME m=100, SAME m=1, CGS, and SAME
    m=100 tuned when ``labels`` (label → legend name) has it."""
    series = []
    for (label, name), color in zip(labels.items(), ("C0", "C4", "C3", "C8")):
        d = df[df["label"] == label].copy()
        if not d.empty and d["method"].iloc[0] == "cgs":
            d["samples_per_word"] = d["iteration"]
        series.append((d, name, color))
    _plot(df, outputs, figure_caption("fig1c_samples", caption), series, x="samples_per_word",
          log_x=True, metrics=tuple(METRICS),
          xlabel="samples per word (SAME: m × passes; CGS: iterations)",
          title="convergence per sample")


#: Colour and marker of each SAME variant of a sweep (m values, schedules), in order: a
#: qualitative palette (ColorBrewer Dark2) whose neighbours differ in hue and marker both.
VARIANT_STYLES = (("#1b9e77", "o"), ("#d95f02", "s"), ("#7570b3", "^"), ("#e7298a", "D"),
                  ("#66a61e", "v"), ("#e6ab02", "P"), ("#a6761d", "X"), ("#666666", "*"))


def fig_sweep(df, outputs, caption: str, runs: dict, name: str, title: str,
              all_seeds: bool = True, metrics=tuple(METRICS)) -> None:
    """ll vs passes for each variant of SAME (runs: legend name → label), a row per
    configuration the traces hold (as published; tuned, where the runs have tuned twins), a
    column per held-out metric of ``metrics``: the mean over seeds with a min–max band, or
    (``all_seeds`` false) the first seed.

    name : the figure's name (its caption: :func:`~.captions.figure_caption`)
    """
    from same.experiments.tuning import CONFIGURATIONS

    pick = (lambda d: d) if all_seeds else first_seed
    rows = []
    for c in configurations(df):
        d = configuration_frame(df, c)
        series = [(pick(d[d["label"] == label]), legend, *VARIANT_STYLES[i % 8])
                  for i, (legend, label) in enumerate(runs.items())]
        rows.append((CONFIGURATIONS[c], series, None))
    _plot(df, outputs, figure_caption(name, caption), None, x="pass", metrics=metrics,
          xlabel="passes over the training documents", title=title,
          rows=rows if len(rows) > 1 else [("", rows[0][1], None)])


def fig_m(df, outputs, caption: str, runs: dict) -> None:
    """fig2a: ll vs passes for each m (runs: m → label), mean over seeds with a band, a column
    per held-out metric, a row per configuration."""
    fig_sweep(df, outputs, caption, {f"m = {m:g}": label for m, label in sorted(runs.items())},
              "fig2a_m", "effect of the number of samples m")


def fig_variants(df, outputs, caption: str, runs: dict, title: str,
                 name: str = "prior_scale") -> None:
    """ll vs passes for variants of SAME (runs: legend name → label), the first seed, under
    document completion: the prior-scale comparison."""
    fig_sweep(df, outputs, caption, runs, name, title, all_seeds=False, metrics=("ll",))


def fig_schedules(df, outputs, caption: str, runs: dict) -> None:
    """fig2b: ll vs passes for each annealing schedule of m (runs: schedule → label), mean over
    seeds with a band, a column per held-out metric, a row per configuration."""
    fig_sweep(df, outputs, caption, runs, "fig2b_anneal",
              "annealing schedules of m (same mean m)")


def fig_sensitivity(df, outputs, csv_path, caption: str, runs: dict) -> list[dict]:
    """SAME's sensitivity at the main setting: one panel per parameter, ll vs passes for each
    value (first seed), and a CSV of final and first-pass ll per (parameter, value).

    runs : {parameter: {value (text): run label}}; label :data:`same.experiments.runs.SENS_MAIN_LABEL` is
    the main setting.  Every run is trained and scored on validation documents (no test
    document).  Returns the CSV rows.  Reported as sensitivity, never used to choose settings
    (tuning does that: :mod:`same.experiments.tuning`).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from same.experiments.runs import SENS_MAIN_LABEL
    from same.io.outputs import text_kind

    from .tables import csv_text, write_csv
    from .traces import final_ll

    main = first_seed(df[df["label"] == SENS_MAIN_LABEL])
    main_final = final_ll(main) if not main.empty else None
    n = len(runs)
    cols = 2 if n > 1 else 1
    nrows = -(-n // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(6.4 * cols / 1.3, 3.6 * nrows),
                             squeeze=False, sharey=True)
    fig.text(0.01, -0.01, figure_caption("sensitivity", caption), ha="left", va="top",
             fontsize=7, wrap=True)
    rows = []
    for ax, (param, values) in zip(axes.flat, runs.items()):
        for i, (value, label) in enumerate(values.items()):
            d = first_seed(df[df["label"] == label]).sort_values("pass")
            if d.empty:
                continue
            is_main = label == SENS_MAIN_LABEL
            # a document order says what it resolved to (meta.json): "other (shuffled)"
            order = (f" ({d['document_order'].iloc[0]})" if param == "document_order"
                     and "document_order" in d and d["document_order"].iloc[0] != value
                     else "")
            ax.plot(d["pass"], d["ll"], "-o", ms=2, lw=2.4 if is_main else 1.2, color=f"C{i}",
                    label=f"{value}{order}" + (" (main)" if is_main else ""))
            fin = float(d["ll"].iloc[-1])
            rows.append({"parameter": param, "value": value, "label": label, "main": is_main,
                         "first_pass_ll": float(d["ll"].iloc[0]), "final_ll": fin,
                         "final_minus_main": None if main_final is None else fin - main_final})
        ax.set_title(param, fontsize=9)
        ax.set_xlabel("passes over the training documents")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes[:, 0]:
        ax.set_ylabel("validation ll (nats/token)")
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.suptitle(f"{_dataset_title(df, caption)}: SAME sensitivity at the main setting, "
                 "on validation documents",
                 fontsize=10)
    fig.tight_layout()
    _save(fig, outputs, also=[(csv_path, text_kind("table", csv_text(rows)))])
    plt.close(fig)
    write_csv(rows, csv_path)
    return rows
