"""fig1_seconds: held-out ll against training seconds for every method of the main comparison,
beside each method's seconds per pass labelled with the implementation timed (claims C2, C4,
C5: speed)."""

from __future__ import annotations

from .captions import figure_caption
from .paper import METHOD_NAMES
from .plotting import STYLES, _band, _band_handles, _dataset_title, _save, draw_caption
from .timing import per_pass_alone, retime, seconds_problem, timed_labels
from .traces import (
    configuration_frame,
    configurations,
    implementation,
    per_pass_over_seeds,
    test_traces,
)
from .verdicts import METRICS

__all__ = ["fig_ll_vs_seconds", "seconds_series"]


def seconds_series(df, timing=None) -> dict[str, dict]:
    """What fig1_seconds draws for one configuration's traces (retimed by
    :func:`~.timing.retime`: seconds measured alone), per method of the main comparison
    (:data:`~.paper.METHOD_NAMES`) present whose seconds are not refused: ``rows`` (its
    traces), ``cost`` (:func:`~.timing.per_pass_alone`: the runs' cost per pass after the
    first over their whole budget, priced alone, median, min and max over rounds; CGS per iteration; without a timing
    file, :func:`~.traces.per_pass_over_seeds` of traces whose runs held the machine) and
    ``implementation``."""
    out = {}
    for label in METHOD_NAMES:
        d = df[df["label"] == label]
        if d.empty or seconds_problem(df, label) is not None:
            continue
        cost = per_pass_alone(df, timing, label) if timing is not None else None
        out[label] = {"rows": d, "cost": cost or per_pass_over_seeds(d),
                      "implementation": implementation(label, d)}
    return out


def _method_name(label: str, implementation: str) -> str:
    """The method with the implementation timed: "VB online (gensim)", "SAME Gibbs (numba)"."""
    name = METHOD_NAMES[label]
    return name if implementation in name else f"{name} ({implementation})"


def _cost_bars(ax, series: dict) -> None:
    """Horizontal bars of seconds per pass alone on a linear axis (bar length is the cost):
    median over timing rounds, whiskers min–max, one per method, each tick naming the method
    and the implementation timed, the value at the bar's end."""
    labels = list(series)[::-1]  # the first method on top
    med = [series[lab]["cost"]["median"] for lab in labels]
    lo = [m - series[lab]["cost"]["min"] for m, lab in zip(med, labels)]
    hi = [series[lab]["cost"]["max"] - m for m, lab in zip(med, labels)]
    ax.barh(range(len(labels)), med, xerr=[lo, hi], color=[STYLES[lab][0] for lab in labels],
            alpha=0.85, height=0.6, error_kw={"lw": 1, "capsize": 2})
    top = max((series[lab]["cost"]["max"] for lab in labels), default=1.0)
    for i, (lab, m) in enumerate(zip(labels, med)):
        ax.text(series[lab]["cost"]["max"] + 0.02 * top, i, f"{m:.3g} s", va="center",
                fontsize=7.5)
    ax.set_yticks(range(len(labels)),
                  [_method_name(lab, series[lab]["implementation"]) for lab in labels],
                  fontsize=8)
    ax.set_xlim(0, top * 1.22)
    ax.set_xlabel("training seconds per pass alone (CGS: per iteration; linear axis)")
    ax.set_title("per-pass cost alone: median over timing rounds (whiskers: min–max)",
                 fontsize=9)
    ax.grid(alpha=0.3, axis="x")


def _legend(df, handles: dict) -> tuple[list, list[str]]:
    """The figure's legend: each method drawn (``handles``: label → its line), named with the
    implementation timed, then the target line and the bands."""
    from .stats import CGS_REFERENCE_ITERATION

    n_seeds = int(df[df["label"].isin(list(METHOD_NAMES))].groupby("label")["seed"]
                  .nunique().max()) if not df.empty else 0
    order = [lab for lab in METHOD_NAMES if lab in handles]
    entries = [(handles[lab], _method_name(lab, implementation(lab, df[df["label"] == lab])))
               for lab in order]
    if "target" in handles:
        entries.append((handles["target"], f"CGS's ll after {CGS_REFERENCE_ITERATION} "
                        "iterations: the paper's convergence target (C4, C5)"))
    entries += _band_handles(n_seeds)
    return [h for h, _ in entries], [n for _, n in entries]


def _seconds_row(ax_row, name: str, series: dict, metrics, target: dict, handles: dict):
    """One configuration's row (``name``): each method's ll against seconds under each metric,
    CGS's reference ll dotted where a method is drawn, the cost bars last; each method's line
    (and the target) kept in ``handles`` for the legend."""
    for ax, metric in zip(ax_row, metrics):
        for label, s in series.items():
            _band(ax, s["rows"], "pass", METHOD_NAMES[label], STYLES[label], y=metric,
                  at="train_seconds")
            handles[label] = ax.get_lines()[-1]
        if target[metric] is not None and series:  # the verdicts' seconds reach for it
            handles["target"] = ax.axhline(float(target[metric].mean()),
                                           color=STYLES["cgs"][0], ls=":", lw=1.2)
        ax.set_xscale("log")
        ax.set_xlabel("training seconds (evaluation excluded; log scale)")
        ax.set_ylabel("held-out log-likelihood (nats/token)")
        ax.set_title(f"{name}: {METRICS[metric]}", fontsize=9.5)
        ax.grid(alpha=0.3, which="both")
    _cost_bars(ax_row[-1], series)
    ax_row[-1].set_title(f"{name}: " + ax_row[-1].get_title(), fontsize=9)


def _nothing_drawn(ax, refused) -> None:
    """A panel with nothing to draw says so, with the methods whose seconds were refused, in
    place of empty axes."""
    import textwrap

    ax.axis("off")
    ax.text(0.5, 0.5, textwrap.fill("nothing drawn: every method's seconds refused (measured "
                                    "beside other work: " + ", ".join(sorted(refused)) + ")", 50),
            transform=ax.transAxes, ha="center", va="center", fontsize=9, color="0.3")


def fig_ll_vs_seconds(df, outputs, caption: str, timing=None) -> dict[str, dict[str, dict]]:
    """Held-out ll against training seconds for every method of the main comparison (SAME,
    VB online and batch of gensim and scikit-learn, CGS): a row per configuration the traces
    hold (as published; tuned), a column per held-out metric of :data:`~.verdicts.METRICS`
    the traces have, and a last column of each method's seconds per pass.

    Each line is a method's mean ll over seeds at each checkpoint, drawn at the seeds' mean
    training seconds there (evaluation excluded; log scale), with a min–max band over seeds.
    The seconds are the ones measured alone (``timing``, a loaded timing.json:
    :func:`~.timing.retime`); a method whose seconds are refused is not drawn, and the
    figure says so. Returns {configuration: :func:`seconds_series`} (what was drawn).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from same.experiments.tuning import CONFIGURATIONS

    from .stats import cgs_reference

    df = test_traces(df)
    if timing is not None:
        df = retime(df, timing, labels=timed_labels(df))
    metrics = [m for m in METRICS if m in df.columns]
    configs = configurations(df)
    drawn = {c: seconds_series(configuration_frame(df, c), timing) for c in configs}
    refused = {METHOD_NAMES[lab] for lab in METHOD_NAMES if (df["label"] == lab).any()
               and seconds_problem(df, lab) is not None}
    ncols = len(metrics) + 1
    height = 4.0 * len(configs) + 0.9
    fig, axes = plt.subplots(len(configs), ncols, squeeze=False,
                             figsize=(5.0 * len(metrics) + 5.2, height),
                             gridspec_kw={"width_ratios": [1.0] * len(metrics) + [1.05]})
    handles = {}
    target = {m: cgs_reference(df, y=m) for m in metrics}
    for config, ax_row in zip(configs, axes):
        _seconds_row(ax_row, CONFIGURATIONS[config], drawn[config], metrics, target, handles)
        if config != configs[0]:  # a column's panels share their y axis
            for j in range(len(metrics)):
                ax_row[j].sharey(axes[0, j])
    empty = not any(drawn.values())
    if empty:  # every method's seconds refused: each panel says so, not a blank axis
        for ax in axes.flat:
            _nothing_drawn(ax, refused)
    legend, names = _legend(df, handles)
    fig.suptitle(f"{_dataset_title(df, caption)}: held-out ll against training seconds "
                 "measured alone, and seconds per pass"
                 + (f" (not drawn, seconds refused: {', '.join(sorted(refused))})"
                    if refused else ""))
    fig.tight_layout(rect=(0, 0.5 / height, 1, 1))  # half an inch below for the legend
    if names:  # none when every method's seconds were refused
        fig.legend(legend, names, loc="lower center", ncol=min(4, len(names)), fontsize=8,
                   frameon=False, bbox_to_anchor=(0.5, 0.0))
    note = (f"; nothing drawn: every method's seconds were refused ({', '.join(sorted(refused))}"
            "), measured beside other work, so no line of ll against seconds and no bar of "
            "seconds per pass" if empty else None)
    draw_caption(fig, figure_caption("fig1_seconds", caption, note=note))
    _save(fig, outputs)
    plt.close(fig)
    return drawn
