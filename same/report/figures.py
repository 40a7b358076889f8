"""Figures (PNG and PDF, labelled axes and units, the setting in the caption) from traces."""

from __future__ import annotations

import numpy as np

from .captions import figure_caption
from .paper import METHOD_NAMES
from .plotting import (
    COLORS,
    OKABE_ITO,
    STYLES,
    VARIANT_STYLES,
    _band,
    _band_handles,
    _dataset_title,
    _figure_legend,
    _mark_fall,
    _save,
    _ticks_with_ends,
    _zoom,
)
from .traces import configuration_frame, configurations, final_lls, first_seed, test_traces
from .verdicts import METRICS

__all__ = ["fig_ll_vs_passes", "fig_ll_vs_samples", "fig_m", "fig_sweep", "fig_variants",
           "fig_schedules", "fig_sensitivity", "figure_caption", "final_gap_text"]


def _plot(df, outputs, caption: str, series, *, x: str, xlabel: str, title: str,
          log_x: bool = False, hline=None, metrics=("ll",), rows=None, twin=None,
          numbers: str = "") -> None:
    """One figure: ll of each series against ``x`` (mean over seeds, its 95 % t interval and
    min–max as bands), a panel per held-out metric of ``metrics`` (trace columns,
    :data:`~.verdicts.METRICS`) side by side, ``rows`` stacking such rows of panels; in each
    panel an inset zooms on the last checkpoints (:func:`_zoom`); one legend for the figure.

    series : iterable of (DataFrame rows of one run label, legend name, (colour, line style,
        marker))
    hline : optional (legend name, colour, {metric: ll}) reference line
    rows : optional list of (row name, series, hline), one row of panels each (e.g. the
        configurations as published and tuned), all panels of a column sharing the y axis
    twin : optional (rows of one run label, legend name, style, x column, x label): a series
        on an x axis of its own (top, log scale), e.g. CGS's iterations beside passes
    numbers : a sentence of numbers from the results, drawn after the caption
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = rows or [("", series, hline)]
    metrics = [m for m in metrics if m in df.columns]
    n_seeds = int(df.groupby("label")["seed"].nunique().max()) if not df.empty else 0
    names = {name for _, row_series, _ in rows for _, name, _ in row_series}
    legend_h = 0.35 + 0.22 * -(-(len(names) + 3) // 3)
    height = 6.2 * len(rows) + legend_h
    fig, grid = plt.subplots(2 * len(rows), len(metrics), figsize=(6.4 * len(metrics), height),
                             squeeze=False, gridspec_kw={"height_ratios": [1.0, 0.5] * len(rows)})
    axes, zooms = grid[0::2], grid[1::2]
    if len(rows) > 1:  # a column's panels share their y axis (not the zooms: their own range)
        for j in range(len(metrics)):
            for ax in axes[1:, j]:
                ax.sharey(axes[0, j])
    heading = f"{_dataset_title(df, caption)}: {title}"
    for (row_name, row_series, row_hline), ax_row, z_row in zip(rows, axes, zooms):
        for ax, z, metric in zip(ax_row, z_row, metrics):
            drawn = [_band(ax, d, x, name, style, y=metric)
                     for d, name, style in row_series if not d.empty]
            for name, (color, _, _), xs, mean, lo, hi in drawn:
                _mark_fall(ax, name, color, xs, mean, lo, hi)
            ref = None
            if row_hline is not None and metric in row_hline[2]:
                ref = (row_hline[0], row_hline[1], row_hline[2][metric])
                ax.axhline(ref[2], color=ref[1], ls=":", lw=1.2, label=ref[0])
            if log_x:
                ax.set_xscale("log")
            else:
                _ticks_with_ends(ax, [v for d in drawn for v in d[2]])
            if twin is not None and not twin[0].empty:
                top = ax.twiny()
                _band(top, twin[0], twin[3], twin[1], twin[2], y=metric)
                top.set_xscale("log")
                top.set_xlabel(twin[4], fontsize=8, color=twin[2][0])
                top.tick_params(axis="x", labelsize=7, colors=twin[2][0])
                for line in top.get_lines():
                    ax.plot([], [], color=line.get_color(), ls=line.get_linestyle(),
                            marker=line.get_marker(), label=line.get_label())
            _zoom(ax, z, drawn, ref)
            z.set_xlabel(xlabel, fontsize=8)
            ax.set_xlabel(xlabel)
            ax.set_ylabel("held-out log-likelihood (nats/token)")
            panel = heading if len(metrics) == 1 and len(rows) == 1 else METRICS[metric]
            ax.set_title(f"{row_name}: {panel}" if row_name else panel, fontsize=10,
                         pad=24 if twin is not None else 6)
            ax.grid(alpha=0.3, which="both" if log_x else "major")
    if len(metrics) > 1 or len(rows) > 1:
        fig.suptitle(heading)
    fig.tight_layout(rect=(0, legend_h / height, 1, 1))
    _figure_legend(fig, list(axes.flat), legend_h, height, extra=_band_handles(n_seeds))
    for z in zooms.flat:
        z.set_ylabel("nats/token", fontsize=8)
    fig.text(0.01, -0.005, caption + (f" {numbers}" if numbers else ""), ha="left", va="top",
             fontsize=7, wrap=True)
    _save(fig, outputs)
    plt.close(fig)


def final_gap_text(df, a: str, b: str, names: dict, metric: str = "ll",
                   b_reference: bool = False) -> str:
    """"Final gap A − B (metric): −0.086 ± 0.006 (...; Welch p ...)": the difference of the
    per-seed final ll of run labels ``a`` and ``b`` (``b_reference``: B, CGS, read at the
    paper's convergence point, :func:`~.stats.cgs_reference`, as the speed verdicts read it),
    rendered from the traces by the verdicts' statistics (:func:`~.stats.t_interval`,
    :func:`~.stats.welch`); "" when either is missing."""
    from .stats import CGS_REFERENCE_ITERATION, cgs_reference, t_interval, welch

    if metric not in df.columns or not (df["label"] == a).any() or not (df["label"] == b).any():
        return ""
    fa = final_lls(df, a, y=metric)
    fb = cgs_reference(df, b, y=metric) if b_reference else None
    name_b = names[b] + (f" after {CGS_REFERENCE_ITERATION} iterations" if fb is not None else "")
    fb = final_lls(df, b, y=metric) if fb is None else fb
    ma, la, ha = t_interval(fa)
    mb, lb, hb = t_interval(fb)
    half = np.hypot(ha - ma, hb - mb)
    p = welch(fa, fb).p
    spread = (f" ± {half:.3f} (95 % t half-widths combined; Welch p {p:.2g})"
              if np.isfinite(half) else " (one seed: no interval)")
    return (f"Final gap {names[a]} − {name_b} ({METRICS[metric].split(' (')[0]}): "
            f"{ma - mb:+.3f}{spread}.")


def _main_series(df, max_passes: int):
    """fig1's series (the pass-based methods), CGS on its own axis, and the reference line:
    CGS's ll after 1000 iterations, the paper's convergence target of C4 and C5
    (:data:`~.stats.CGS_REFERENCE_ITERATION`), or after its last iteration when it ran fewer."""
    from .stats import CGS_REFERENCE_ITERATION, cgs_reference

    series = [(df[(df["label"] == label) & (df["pass"] <= max_passes)], METHOD_NAMES[label],
               STYLES[label]) for label in METHOD_NAMES if label != "cgs"]
    ref = df[df["label"] == "cgs"]
    hline = None
    if not ref.empty:
        metrics = [m for m in METRICS if m in ref.columns]
        target = {m: cgs_reference(df, y=m) for m in metrics}
        if all(v is not None for v in target.values()):
            hline = (f"CGS after {CGS_REFERENCE_ITERATION} iterations (the paper's convergence "
                     "target, C4/C5)", COLORS["cgs"], {m: float(v.mean())
                                                      for m, v in target.items()})
        else:
            last = ref[ref["pass"] == ref["pass"].max()]
            hline = (f"CGS after its last iteration ({int(ref['pass'].max())})", COLORS["cgs"],
                     {m: float(last[m].mean()) for m in metrics})
    return series, hline


def fig_ll_vs_passes(df, outputs, caption: str, max_passes: int) -> None:
    """fig1a/1b: held-out ll vs passes for SAME, VB online and batch (gensim, scikit-learn) and
    CGS: a column per held-out metric, a row per configuration the traces hold (as published;
    tuned, each method's step sizes chosen on validation documents). CGS runs iterations, not
    passes: it has an x axis of its own (top, log scale), and its ll at the paper's
    convergence point is the dotted line. The caption ends with the final gaps of SAME to CGS
    and to each batch VB under document completion, as published."""
    from same.experiments.tuning import CONFIGURATIONS

    df = test_traces(df)
    rows = [(CONFIGURATIONS[c], *_main_series(configuration_frame(df, c), max_passes))
            for c in configurations(df)]
    cgs = df[df["label"] == "cgs"]
    first = configuration_frame(df, configurations(df)[0]) if len(df) else df
    gaps = " ".join(t for t in (
        final_gap_text(first, "same", "cgs", METHOD_NAMES, b_reference=True),
        final_gap_text(first, "same", "vb_batch", METHOD_NAMES),
        final_gap_text(first, "same", "sklearn_batch", METHOD_NAMES)) if t)
    _plot(df, outputs, figure_caption("fig1_passes", caption), None, x="pass",
          metrics=tuple(METRICS), rows=rows,
          twin=(cgs, METHOD_NAMES["cgs"], STYLES["cgs"], "pass",
                "CGS (tomotopy) iterations (top axis, log scale)"),
          xlabel="passes over the training documents (SAME, VB)",
          title="convergence per pass",
          numbers=(f"As published, under document completion: {gaps}" if gaps else ""))


def fig_ll_vs_samples(df, outputs, caption: str, labels: dict) -> None:
    """fig1c: held-out ll vs samples per word (log scale): SAME m=100, SAME m=1, CGS, and SAME
    m=100 tuned when ``labels`` (label → legend name) has it."""
    series = []
    for i, (label, name) in enumerate(labels.items()):
        d = df[df["label"] == label].copy()
        if not d.empty and d["method"].iloc[0] == "cgs":
            d["samples_per_word"] = d["iteration"]
        cgs = not d.empty and d["method"].iloc[0] == "cgs"
        style = STYLES["cgs"] if cgs else VARIANT_STYLES[i % len(VARIANT_STYLES)]
        series.append((d, name, style))
    _plot(df, outputs, figure_caption("fig1c_samples", caption), series, x="samples_per_word",
          log_x=True, metrics=tuple(METRICS),
          xlabel="samples per word (SAME: m × passes; CGS: iterations)",
          title="convergence per sample")


def fig_sweep(df, outputs, caption: str, runs: dict, name: str, title: str,
              all_seeds: bool = True, metrics=tuple(METRICS), reference: str | None = None
              ) -> None:
    """ll vs passes for each variant of SAME (runs: legend name → label), a row per
    configuration the traces hold (as published; tuned, where the runs have tuned twins), a
    column per held-out metric of ``metrics``: the mean over seeds with a min–max band, or
    (``all_seeds`` false) the first seed.

    name : the figure's name (its caption: :func:`~.captions.figure_caption`)
    reference : the legend name of the variant the others are compared with: the caption
        ends with each other variant's final gap to it (as published, document completion)
    """
    from same.experiments.tuning import CONFIGURATIONS

    pick = (lambda d: d) if all_seeds else first_seed
    numbers = ""
    if reference in runs and all_seeds:
        first = configuration_frame(df, configurations(df)[0])
        names = {label: legend for legend, label in runs.items()}
        gaps = [final_gap_text(first, label, runs[reference], names)
                for legend, label in runs.items() if legend != reference]
        numbers = " ".join(g for g in gaps if g)
        numbers = f"As published: {numbers}" if numbers else ""
    rows = []
    for c in configurations(df):
        d = configuration_frame(df, c)
        series = [(pick(d[d["label"] == label]), legend, VARIANT_STYLES[i % 8])
                  for i, (legend, label) in enumerate(runs.items())]
        rows.append((CONFIGURATIONS[c], series, None))
    _plot(df, outputs, figure_caption(name, caption), None, x="pass", metrics=metrics,
          xlabel="passes over the training documents", title=title,
          rows=rows if len(rows) > 1 else [("", rows[0][1], None)], numbers=numbers)


def fig_m(df, outputs, caption: str, runs: dict) -> None:
    """fig2a: ll vs passes for each m (runs: m → label), mean over seeds with a band, a column
    per held-out metric, a row per configuration."""
    from same.model.sampler import SameLDA

    main = f"m = {SameLDA().n_copies:g}"
    named = {f"m = {m:g}": label for m, label in sorted(runs.items())}
    fig_sweep(df, outputs, caption, named, "fig2a_m", "effect of the number of samples m",
              reference=main if main in named else None)


def fig_variants(df, outputs, caption: str, runs: dict, title: str,
                 name: str = "prior_scale") -> None:
    """ll vs passes for variants of SAME (runs: legend name → label), the first seed, under
    document completion: the prior-scale comparison."""
    fig_sweep(df, outputs, caption, runs, name, title, all_seeds=False, metrics=("ll",))


def fig_schedules(df, outputs, caption: str, runs: dict) -> None:
    """fig2b: ll vs passes for each annealing schedule of m (runs: schedule → label), mean over
    seeds with a band, a column per held-out metric, a row per configuration."""
    fig_sweep(df, outputs, caption, runs, "fig2b_anneal",
              "annealing schedules of m (same mean m)",
              reference="constant" if "constant" in runs else None)


def _sensitivity_style(d, param: str, value: str, k: int | None) -> tuple[tuple, str]:
    """Style and legend name of one sensitivity run: the main setting (``k`` None) black; the
    ``k``-th other (parameter, value) of the figure a style of its own. A document order says
    what it resolved to (meta.json), e.g. "other (shuffled)"."""
    if k is None:
        return ("#000000", "-", "o"), "the main setting (each panel's title)"
    order = (f" ({d['document_order'].iloc[0]})" if param == "document_order"
             and "document_order" in d and d["document_order"].iloc[0] != value else "")
    return ((OKABE_ITO[1 + k % 7], ("--", "-.", ":", "-")[k // 7 % 4], "sD^vPX*o"[k % 8]),
            f"{param} = {value}{order}")


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
    n_other = sum(label != SENS_MAIN_LABEL for values in runs.values()
                  for label in values.values())
    legend_h = 0.35 + 0.22 * -(-(n_other + 1) // 3)
    height = 3.6 * nrows + legend_h
    fig, axes = plt.subplots(nrows, cols, figsize=(6.4 * cols / 1.3, height), squeeze=False,
                             sharey=True)
    rows = []
    k = 0  # every (parameter, value) off the main setting: a style of its own, one legend
    for ax, (param, values) in zip(axes.flat, runs.items()):
        main_value = next((v for v, lab in values.items() if lab == SENS_MAIN_LABEL), None)
        for value, label in values.items():
            d = first_seed(df[df["label"] == label]).sort_values("pass")
            if d.empty:
                continue
            is_main = label == SENS_MAIN_LABEL
            style, name = _sensitivity_style(d, param, value, None if is_main else k)
            k += not is_main
            ax.plot(d["pass"], d["ll"], color=style[0], ls=style[1], marker=style[2], ms=2.5,
                    lw=2.4 if is_main else 1.3, label=name)
            fin = float(d["ll"].iloc[-1])
            rows.append({"parameter": param, "value": value, "label": label, "main": is_main,
                         "first_pass_ll": float(d["ll"].iloc[0]), "final_ll": fin,
                         "final_minus_main": None if main_final is None else fin - main_final})
        ax.set_title(param + (f" (main: {main_value})" if main_value is not None else ""),
                     fontsize=9)
        ax.set_xlabel("passes over the training documents")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("validation ll (nats/token)")
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.suptitle(f"{_dataset_title(df, caption)}: SAME sensitivity at the main setting, "
                 "on validation documents",
                 fontsize=10)
    fig.tight_layout(rect=(0, legend_h / height, 1, 1))
    _figure_legend(fig, list(axes.flat), legend_h, height)
    fig.text(0.01, -0.005, figure_caption("sensitivity", caption), ha="left", va="top",
             fontsize=7, wrap=True)
    _save(fig, outputs, also=[(csv_path, text_kind("table", csv_text(rows)))])
    plt.close(fig)
    write_csv(rows, csv_path)
    return rows
