"""The verdict overview: every verdict of claims.md at a glance, claims (rows) × dataset at its
training tokens per φ parameter, metric and configuration (columns), coloured by outcome."""

from __future__ import annotations

import textwrap

from same.experiments.tuning import CONFIGURATIONS

from .captions import figure_caption
from .plotting import _save, draw_caption
from .verdicts import METRICS_SHORT

__all__ = ["fig_verdict_overview", "verdict_column", "verdict_grid", "OUTCOME_COLORS",
           "COLUMN_AXES"]


#: Cell colour of each outcome in the verdict overview (same.report.verdicts.Outcome values).
OUTCOME_COLORS = {"reproduced": "#1a9641", "partly": "#fdae61", "not reproduced": "#d7191c",
                  "not testable here": "#bababa", "not run in this profile": "#ffffff"}
#: Verdict attributes that, when a verdict carries them, split its column (after the dataset).
COLUMN_AXES = ("metric", "configuration")


def verdict_column(v, scales: dict | None = None) -> str:
    """A verdict's column in the overview: its dataset with the dataset's training tokens per φ
    parameter (``scales``: {dataset: :func:`~same.report.traces.shape_of` result}), then each
    of :data:`COLUMN_AXES` the verdict carries; "across datasets" for a cross-dataset claim."""
    if v.dataset is None:
        parts = ["across datasets"]
    else:
        scale = (scales or {}).get(v.dataset)
        parts = [v.dataset] + ([] if scale is None
                               else [f"{scale['tokens_per_parameter']:.3g} tok/param"])
    for axis in COLUMN_AXES:
        value = getattr(v, axis, None)
        if value:
            parts.append(_axis_value(axis, value))
    return "\n".join(textwrap.fill(part, 20, break_on_hyphens=False) for part in parts)


def _axis_value(axis: str, value: str) -> str:
    """A column axis' value as the overview names it (metrics and configurations by name)."""
    if axis == "metric" and value in METRICS_SHORT:
        return METRICS_SHORT[value]
    if axis == "configuration" and value in CONFIGURATIONS:
        return CONFIGURATIONS[value]
    return f"{axis}: {value}"


def _claim_order(claim: str):
    digits = "".join(ch for ch in claim if ch.isdigit())
    return (int(digits) if digits else 0, claim)


def verdict_grid(verdicts, scales: dict | None = None):
    """(rows: claim ids, columns: column labels, {(row, column): verdict}) of the overview;
    columns in the verdicts' order, cross-dataset columns last.

    A verdict that carries none of :data:`COLUMN_AXES` (e.g. C6, judged once per dataset) fills
    every column of its dataset, and a cross-dataset verdict (C9) every column, rather than
    opening a column of its own that only it would fill; each gets a column of its own only
    where there is no such column to fill. The same verdict then sits in several cells of its
    row, which the figure draws as one.
    """
    claims = sorted({_row(v) for v in verdicts}, key=lambda r: (_claim_order(r[0]), r[1] or ""))
    ordered = ([v for v in verdicts if v.dataset is not None]
               + [v for v in verdicts if v.dataset is None])
    columns = list(dict.fromkeys(verdict_column(v, scales) for v in ordered if _has_axes(v)))
    of_dataset = {c: v.dataset for v in ordered if _has_axes(v)
                  for c in [verdict_column(v, scales)]}
    for v in ordered:
        if not _has_axes(v) and not _span(v, of_dataset):
            columns.append(verdict_column(v, scales))
            of_dataset[columns[-1]] = v.dataset
    cells = {}
    for v in ordered:
        span = [verdict_column(v, scales)] if _has_axes(v) else (
            _span(v, of_dataset) or [verdict_column(v, scales)])
        for column in span:
            cells[(claims.index(_row(v)), columns.index(column))] = v
    return claims, columns, cells


def _has_axes(v) -> bool:
    return any(getattr(v, axis, None) for axis in COLUMN_AXES)


def _span(v, of_dataset: dict) -> list[str]:
    """The columns (of verdicts with axes) a verdict without axes fills: its dataset's, or for a
    cross-dataset verdict every dataset's it stands for (:attr:`~.verdicts.Verdict.covers`)."""
    covers = v.covers
    return [c for c, d in of_dataset.items() if d is not None and (
        v.dataset == d or (v.dataset is None and (covers is None or d in covers)))]


def _row(v) -> tuple[str, str | None]:
    """A verdict's row: its claim, and the VB implementation it was judged against, if any."""
    return v.claim, getattr(v, "vb", None)


def _outcome_text(v, spans: bool = False) -> str:
    """A cell's text: the outcome (* when qualified); a cell spanning columns says what it
    spans (its dataset's columns, or every dataset's)."""
    outcome = getattr(v.outcome, "value", str(v.outcome))
    text = (outcome if spans else outcome.replace(" ", "\n", 1)) + (
        " *" if getattr(v, "qualifiers", ()) else "")
    if spans:
        text += ("\n(across datasets)" if v.dataset is None
                 else f"\n({v.dataset}: one verdict, no metric or configuration)")
    return text


def _runs(row: list) -> list[tuple[int, int]]:
    """(first column, width) of each run of cells in a row holding the same verdict (or none)."""
    runs = []
    for j, v in enumerate(row):
        if runs and v is not None and row[runs[-1][0]] is v:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((j, 1))
    return runs


def _row_label(claim: str, title: str, vb: str | None) -> str:
    """A row's label: the claim's id and its whole statement, wrapped, and the VB
    implementation it was judged against, if any."""
    text = textwrap.fill(f"{claim}  {title}", 52, break_on_hyphens=False)
    return text + (f"\nVB: {vb}" if vb else "")


def fig_verdict_overview(verdicts, outputs, caption: str, scales: dict | None = None) -> None:
    """One glance at every verdict: claims (rows) × dataset at its tokens per φ parameter, and
    the metric and configuration when verdicts carry them (columns), coloured by outcome.

    verdicts : :class:`~same.report.verdicts.Verdict` objects (same.report.claims)
    scales : {dataset: :func:`~same.report.traces.shape_of` result}, optional
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    claims, columns, cells = verdict_grid(verdicts, scales)
    titles = {v.claim: getattr(v, "title", "") for v in verdicts}
    rows = [_row_label(c, titles[c], vb) for c, vb in claims]
    height = max(0.6, 0.16 * max(r.count("\n") + 1 for r in rows) + 0.12)
    fig, ax = plt.subplots(figsize=(5.2 + 1.55 * len(columns), 1.6 + height * len(claims)))
    for i in range(len(claims)):
        for j, width in _runs([cells.get((i, j)) for j in range(len(columns))]):
            v = cells.get((i, j))
            color = "#f4f4f4" if v is None else OUTCOME_COLORS.get(
                getattr(v.outcome, "value", None), "white")
            ax.add_patch(Rectangle((j, i), width, 1, facecolor=color, edgecolor="white", lw=2))
            text = "—" if v is None else _outcome_text(v, spans=width > 1)
            ax.text(j + width / 2, i + 0.5, text, ha="center", va="center", fontsize=6.5)
    ax.set_xlim(0, len(columns))
    ax.set_ylim(len(claims), 0)
    ax.set_xticks([j + 0.5 for j in range(len(columns))], columns, fontsize=7)
    ax.set_yticks([i + 0.5 for i in range(len(claims))], rows, fontsize=7)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.legend(handles=[Patch(color=c, label=o) for o, c in OUTCOME_COLORS.items()],
              fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    ax.set_title("Paper claims: verdict per dataset", fontsize=10, pad=14)
    fig.tight_layout()
    draw_caption(fig, figure_caption("verdict_overview", caption), y=-0.01)
    _save(fig, outputs)
    plt.close(fig)
