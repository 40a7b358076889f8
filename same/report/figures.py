"""Figures (PNG and PDF, labelled axes and units, the setting in the caption) from traces."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..atomic import atomic_write
from .paper import METHOD_NAMES
from .traces import first_seed

__all__ = ["fig_ll_vs_passes", "fig_ll_vs_samples", "fig_m", "fig_variants", "fig_schedules",
           "COLORS"]

COLORS = {"same": "C0", "vb_online": "C1", "vb_batch": "C2", "cgs": "C3"}


def _save(fig, outputs: Sequence[str | os.PathLike]) -> None:
    for out in outputs:
        out = Path(out)
        fmt = out.suffix.lstrip(".")
        meta = {"CreationDate": None} if fmt == "pdf" else None  # byte-identical reruns
        atomic_write(out, lambda f, fmt=fmt, meta=meta: fig.savefig(
            f, format=fmt, dpi=150, bbox_inches="tight", metadata=meta))


def _band(ax, df, x, label, color, style="-"):
    """Mean over seeds with a min–max band."""
    g = df.groupby(x)["ll"]
    mean, lo, hi = g.mean(), g.min(), g.max()
    n = df["seed"].nunique()
    ax.plot(mean.index, mean.values, style, color=color,
            label=label + (f" (mean of {n} seeds)" if n > 1 else ""), marker="o", ms=2.5)
    if n > 1:
        ax.fill_between(mean.index, lo.values, hi.values, color=color, alpha=0.2, lw=0)


def _dataset_title(df, caption: str) -> str:
    """The dataset's name for a figure title, marked SYNTHETIC when the caption (the
    workflow's dataset description) says it is."""
    name = str(df["dataset"].iloc[0])
    return f"{name} (SYNTHETIC data)" if f"{name} (SYNTHETIC" in caption else name


def _plot(df, outputs, caption: str, series, *, x: str, xlabel: str, title: str,
          log_x: bool = False, hline=None) -> None:
    """One figure: ll (mean over seeds with a min–max band) of each series against ``x``.

    series : iterable of (DataFrame rows of one run label, legend name, color)
    hline : optional (ll, legend name, color) reference line
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    fig.text(0.01, -0.02, caption, ha="left", va="top", fontsize=7, wrap=True)
    for d, name, color in series:
        if not d.empty:
            _band(ax, d, x, name, color)
    if hline is not None:
        ax.axhline(hline[0], color=hline[2], ls=":", lw=1, label=hline[1])
    if log_x:
        ax.set_xscale("log")
    else:
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("held-out log-likelihood (nats/token)")
    ax.set_title(f"{_dataset_title(df, caption)}: {title}")
    ax.grid(alpha=0.3, which="both" if log_x else "major")
    ax.legend(fontsize=8)
    _save(fig, outputs)
    plt.close(fig)


def fig_ll_vs_passes(df, outputs, caption: str, max_passes: int) -> None:
    """fig1a/1b: held-out ll vs passes for SAME, VB online, VB batch and CGS."""
    series = [(df[(df["label"] == label) & (df["pass"] <= max_passes)], METHOD_NAMES[label],
               COLORS[label]) for label in ("same", "vb_online", "vb_batch", "cgs")]
    ref = df[df["label"] == "cgs"]
    hline = None
    if not ref.empty:
        last = ref[ref["pass"] == ref["pass"].max()]
        hline = (last["ll"].mean(), f"CGS after {int(ref['pass'].max())} iterations",
                 COLORS["cgs"])
    _plot(df, outputs, caption, series, x="pass", hline=hline,
          xlabel="passes over the training documents (CGS: iterations)",
          title="convergence per pass")


def fig_ll_vs_samples(df, outputs, caption: str, labels: dict) -> None:
    """fig1c: held-out ll vs samples per word (log scale): SAME m=100, SAME m=1, CGS."""
    series = []
    for (label, name), color in zip(labels.items(), ("C0", "C4", "C3")):
        d = df[df["label"] == label].copy()
        if not d.empty and d["method"].iloc[0] == "cgs":
            d["samples_per_word"] = d["iteration"]
        series.append((d, name, color))
    _plot(df, outputs, caption, series, x="samples_per_word", log_x=True,
          xlabel="samples per word (SAME: m × passes; CGS: iterations)",
          title="convergence per sample")


def fig_m(df, outputs, caption: str, runs: dict) -> None:
    """fig2a: ll vs passes for each m (runs: m → label), mean over seeds with a band."""
    import matplotlib

    cmap = matplotlib.colormaps["viridis"]
    series = [(df[df["label"] == label], f"m = {m:g}",
               cmap(i / max(len(runs) - 1, 1))) for i, (m, label) in enumerate(sorted(runs.items()))]
    _plot(df, outputs, caption, series, x="pass", xlabel="passes over the training documents",
          title="effect of the number of samples m")


def fig_variants(df, outputs, caption: str, runs: dict, title: str,
                 all_seeds: bool = False) -> None:
    """ll vs passes for variants of SAME (runs: legend name → label): the first seed, or
    (``all_seeds``) the mean over seeds with a min–max band.

    fig2b (annealing schedules of m, all seeds) and the prior-scale comparison use it.
    """
    pick = (lambda d: d) if all_seeds else first_seed
    series = [(pick(df[df["label"] == label]), name, f"C{i}")
              for i, (name, label) in enumerate(runs.items())]
    _plot(df, outputs, caption, series, x="pass", xlabel="passes over the training documents",
          title=title)


def fig_schedules(df, outputs, caption: str, runs: dict) -> None:
    """fig2b: ll vs passes for each annealing schedule of m (runs: schedule → label)."""
    fig_variants(df, outputs, caption, runs, "annealing schedules of m (same mean m)",
                 all_seeds=True)


def fig_sensitivity(df, outputs, csv_path, caption: str, runs: dict) -> list[dict]:
    """SAME's sensitivity at the main setting: one panel per parameter, ll vs passes for each
    value (first seed), and a CSV of final and first-pass ll per (parameter, value).

    runs : {parameter: {value (text): run label}}; label ``same`` is the main run.
    Returns the CSV rows.  Reported as sensitivity, never used to choose the main settings.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from .tables import write_csv
    from .traces import final_ll

    main = first_seed(df[df["label"] == "same"])
    main_final = final_ll(main) if not main.empty else None
    n = len(runs)
    cols = 2 if n > 1 else 1
    nrows = -(-n // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(6.4 * cols / 1.3, 3.6 * nrows),
                             squeeze=False, sharey=True)
    fig.text(0.01, -0.01, caption + "; seed 0; the main run is drawn thick. Sensitivity only: "
             "the main comparison's settings were not chosen from these runs.", ha="left",
             va="top", fontsize=7, wrap=True)
    rows = []
    for ax, (param, values) in zip(axes.flat, runs.items()):
        for i, (value, label) in enumerate(values.items()):
            d = first_seed(df[df["label"] == label]).sort_values("pass")
            if d.empty:
                continue
            is_main = label == "same"
            ax.plot(d["pass"], d["ll"], "-o", ms=2, lw=2.4 if is_main else 1.2, color=f"C{i}",
                    label=f"{value}" + (" (main)" if is_main else ""))
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
        ax.set_ylabel("held-out ll (nats/token)")
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.suptitle(f"{_dataset_title(df, caption)}: SAME sensitivity at the main setting",
                 fontsize=10)
    fig.tight_layout()
    _save(fig, outputs)
    plt.close(fig)
    write_csv(rows, csv_path)
    return rows
