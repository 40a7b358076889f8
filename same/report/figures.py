"""Figures (PNG and PDF, labelled axes and units, the setting in the caption) from traces."""

from __future__ import annotations

import numpy as np

from .captions import figure_caption
from .paper import METHOD_NAMES
from .plotting import (
    COLORS,
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
    draw_caption,
)
from .traces import configuration_frame, configurations, final_lls, first_seed, test_traces
from .verdicts import METRICS

__all__ = ["fig_ll_vs_passes", "fig_ll_vs_samples", "fig_m", "fig_sweep", "fig_variants",
           "fig_schedules", "figure_caption", "final_gap_text"]


def _plot(df, outputs, caption: str, series, *, x: str, xlabel: str, title: str,
          log_x: bool = False, hline=None, metrics=("ll",), rows=None, twin=None,
          numbers: str = "", noise=None, marks=None) -> None:
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
    noise : optional {metric: (half-width, whose seeds)}: a one-seed figure's seed noise
        (:func:`~.stats.seed_noise`), drawn in its zooms
    marks : optional function (panel axes by row, metrics) → legend entries: drawn on the
        panels after the lines (e.g. :func:`~.plateau.plateau_marks`'s)
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = rows or [("", series, hline)]
    metrics = [m for m in metrics if m in df.columns]
    n_seeds = int(df.groupby("label")["seed"].nunique().max()) if not df.empty else 0
    names = {name for _, row_series, _ in rows for _, name, _ in row_series}
    legend_h = 0.35 + 0.22 * -(-(len(names) + 4) // 3)
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
            _panel(ax, z, row_series, row_hline, metric, x=x, log_x=log_x, twin=twin,
                   noise=(noise or {}).get(metric))
            z.set_xlabel(xlabel, fontsize=8)
            ax.set_xlabel(xlabel)
            panel = heading if len(metrics) == 1 and len(rows) == 1 else METRICS[metric]
            ax.set_title(f"{row_name}: {panel}" if row_name else panel, fontsize=10,
                         pad=24 if twin is not None else 6)
    extra = marks(axes, metrics) if marks is not None else []
    if len(metrics) > 1 or len(rows) > 1:
        fig.suptitle(heading)
    fig.tight_layout(rect=(0, legend_h / height, 1, 1))
    _figure_legend(fig, list(axes.flat), legend_h, height,
                   extra=[*extra, *_band_handles(n_seeds)])
    for z in zooms.flat:
        z.set_ylabel("nats/token", fontsize=8)
    draw_caption(fig, caption + (f" {numbers}" if numbers else ""))
    _save(fig, outputs)
    plt.close(fig)


def _panel(ax, z, series, hline, metric: str, *, x: str, log_x: bool, twin, noise) -> None:
    """One panel of :func:`_plot` (``ax``) and its zoom (``z``): the series' lines and bands
    under ``metric``, a fall on the last pass ringed, the reference line, CGS on its own top
    axis (``twin``)."""
    drawn = [_band(ax, d, x, name, style, y=metric) for d, name, style in series if not d.empty]
    for name, (color, _, _), xs, mean, lo, hi in drawn:
        _mark_fall(ax, name, color, xs, mean, lo, hi)
    ref = None
    if hline is not None and metric in hline[2]:
        ref = (hline[0], hline[1], hline[2][metric])
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
    _zoom(ax, z, drawn, ref, noise=noise)
    ax.set_ylabel("held-out log-likelihood (nats/token)")
    ax.grid(alpha=0.3, which="both" if log_x else "major")


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
    convergence point is the dotted line. Each pass-based method's plateau pass (C2's quantity,
    :mod:`~.plateau`) is marked on its curve. The caption ends with the plateau passes and the
    final gaps of SAME to CGS and to each batch VB under document completion, as published."""
    from same.experiments.tuning import CONFIGURATIONS

    from .plateau import plateau_marks, plateau_text

    df = test_traces(df)
    frames = [configuration_frame(df, c) for c in configurations(df)]
    rows = [(CONFIGURATIONS[c], *_main_series(d, max_passes))
            for c, d in zip(configurations(df), frames)]
    passed = [lab for lab in METHOD_NAMES if lab != "cgs"]
    cgs = df[df["label"] == "cgs"]
    first = configuration_frame(df, configurations(df)[0]) if len(df) else df
    gaps = " ".join(t for t in (
        final_gap_text(first, "same", "cgs", METHOD_NAMES, b_reference=True),
        final_gap_text(first, "same", "vb_batch", METHOD_NAMES),
        final_gap_text(first, "same", "sklearn_batch", METHOD_NAMES)) if t)
    numbers = " ".join(t for t in (
        plateau_text(first, passed) if len(df) else "",
        f"As published, under document completion: {gaps}" if gaps else "") if t)
    _plot(df, outputs, _caption("fig1_passes", caption, df), None, x="pass",
          metrics=tuple(METRICS), rows=rows, marks=plateau_marks(frames, passed),
          twin=(cgs, METHOD_NAMES["cgs"], STYLES["cgs"], "pass",
                "CGS (tomotopy) iterations (top axis, log scale)"),
          xlabel="passes over the training documents (SAME, VB)",
          title="convergence per pass", numbers=numbers)


def _caption(name: str, caption: str, df) -> str:
    """Figure ``name``'s caption, naming only the held-out estimators ``df`` has."""
    return figure_caption(name, caption, metrics=[m for m in METRICS if m in df.columns])


def _seed_noise(spread, metrics) -> dict | None:
    """{metric: (half-width, whose seeds)} of a one-seed difference's seed noise from the main
    SAME run's seeds (``spread``: its traces over seeds, :func:`~.stats.seed_noise`); None
    without them."""
    from .stats import seed_noise

    if spread is None:
        return None
    n = spread[spread["label"] == "same"]["seed"].nunique()
    noise = {m: (seed_noise(spread, "same", m), f"the main SAME run's {n} seeds")
             for m in metrics}
    return {m: v for m, v in noise.items() if v[0] is not None} or None


def fig_ll_vs_samples(df, outputs, caption: str, labels: dict, spread=None) -> None:
    """fig1c: held-out ll vs samples per word (log scale): SAME m=100, SAME m=1, CGS, and SAME
    m=100 tuned when ``labels`` (label → legend name) has it; ``spread``: the main SAME run's
    traces over seeds, whose seed noise the one-seed zooms draw (:func:`_seed_noise`)."""
    series = []
    for i, (label, name) in enumerate(labels.items()):
        d = df[df["label"] == label].copy()
        if not d.empty and d["method"].iloc[0] == "cgs":
            d["samples_per_word"] = d["iteration"]
        cgs = not d.empty and d["method"].iloc[0] == "cgs"
        style = STYLES["cgs"] if cgs else VARIANT_STYLES[i % len(VARIANT_STYLES)]
        series.append((d, name, style))
    _plot(df, outputs, _caption("fig1c_samples", caption, df), series, x="samples_per_word",
          log_x=True, metrics=tuple(METRICS), noise=_seed_noise(spread, METRICS),
          xlabel="samples per word (SAME: m × passes; CGS: iterations)",
          title="convergence per sample")


def fig_sweep(df, outputs, caption: str, runs: dict, name: str, title: str,
              all_seeds: bool = True, metrics=tuple(METRICS), reference: str | None = None,
              spread=None) -> None:
    """ll vs passes for each variant of SAME (runs: legend name → label), a row per
    configuration the traces hold for every variant (as published; tuned, where each of the
    runs has its tuned twin: :func:`~.traces.configurations`), a
    column per held-out metric of ``metrics``: the mean over seeds with a min–max band, or
    (``all_seeds`` false) the first seed.

    name : the figure's name (its caption: :func:`~.captions.figure_caption`)
    reference : the legend name of the variant the others are compared with: the caption
        ends with each other variant's final gap to it (as published, document completion)
    spread : the main SAME run's traces over seeds: a one-seed figure's zooms draw their seed
        noise (:func:`_seed_noise`)
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
    for c in configurations(df, runs.values()):  # a row only where every variant ran in it
        d = configuration_frame(df, c)
        series = [(pick(d[d["label"] == label]), legend, VARIANT_STYLES[i % 8])
                  for i, (legend, label) in enumerate(runs.items())]
        rows.append((CONFIGURATIONS[c], series, None))
    _plot(df, outputs, _caption(name, caption, df), None, x="pass", metrics=metrics,
          xlabel="passes over the training documents", title=title,
          noise=_seed_noise(spread, metrics),
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
                 name: str = "prior_scale", spread=None) -> None:
    """ll vs passes for variants of SAME (runs: legend name → label), the first seed, under
    document completion: the prior-scale comparison (``spread``: :func:`fig_sweep`'s)."""
    fig_sweep(df, outputs, caption, runs, name, title, all_seeds=False, metrics=("ll",),
              spread=spread)


def fig_schedules(df, outputs, caption: str, runs: dict) -> None:
    """fig2b: ll vs passes for each annealing schedule of m (runs: schedule → label), mean over
    seeds with a band, a column per held-out metric, a row per configuration."""
    fig_sweep(df, outputs, caption, runs, "fig2b_anneal",
              "annealing schedules of m (same mean m)",
              reference="constant" if "constant" in runs else None)
