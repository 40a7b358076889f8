"""SAME's sensitivity figure: one panel per parameter moved from the main setting, ll on
validation documents against passes for each value (first seed), and its CSV."""

from __future__ import annotations

from .captions import figure_caption
from .plotting import OKABE_ITO, _dataset_title, _figure_legend, _save, draw_caption
from .traces import first_seed

__all__ = ["fig_sensitivity"]


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
    draw_caption(fig, figure_caption("sensitivity", caption))
    _save(fig, outputs, also=[(csv_path, text_kind("table", csv_text(rows)))])
    plt.close(fig)
    write_csv(rows, csv_path)
    return rows
