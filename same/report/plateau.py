"""C2's deciding quantity on fig1_passes: each pass-based method's plateau pass (the first
checkpoint from which a run stays within ε of its own final ll, mean over seeds), computed by
the verdict's own rule (:func:`~.stats.converged`), marked on its curve and said in the
caption."""

from __future__ import annotations

import numpy as np

from .paper import CONVERGED_EPS, METHOD_NAMES
from .stats import converged
from .verdicts import METRICS_SHORT

__all__ = ["plateau_passes", "plateau_text", "plateau_marks", "PLATEAU_MARKER"]

#: The plateau's marker on a curve: a tall bar across the line, in the method's colour.
PLATEAU_MARKER = "|"


def plateau_passes(df, labels, metric: str = "ll", eps: float = CONVERGED_EPS) -> dict:
    """{label: mean over seeds of the pass each run converges at by its own rule} for each of
    ``labels`` the traces hold, under held-out estimator ``metric`` (as C2 judges it)."""
    d = df if metric == "ll" else df.assign(ll=df[metric])
    return {lab: float(np.mean([c.passes for c in converged(d, lab, eps)]))
            for lab in labels if (d["label"] == lab).any()}


def plateau_text(df, labels, eps: float = CONVERGED_EPS) -> str:
    """The caption's sentence: each method's plateau pass under document completion."""
    found = plateau_passes(df, labels, "ll", eps)
    if not found:
        return ""
    return (f"Plateau pass ({PLATEAU_MARKER} on each curve; C2's quantity: the first pass from "
            f"which a run stays within ε = {eps:g} of its own final ll, mean over seeds), as "
            f"published, {METRICS_SHORT['ll']}: "
            + ", ".join(f"{METHOD_NAMES[lab]} {p:.1f}" for lab, p in found.items()) + ".")


def plateau_marks(frames: list, labels, eps: float = CONVERGED_EPS):
    """A ``marks`` callable of :func:`~.figures._plot`: on the panel of row ``i`` (traces
    ``frames[i]``) and each metric, a :data:`PLATEAU_MARKER` on each method's drawn mean line at
    its plateau pass (:func:`plateau_passes`, the line's height interpolated there); returns
    the legend entry saying what the mark is."""

    def marks(axes, metrics) -> list:
        from matplotlib.lines import Line2D

        for frame, ax_row in zip(frames, axes):
            for ax, metric in zip(ax_row, metrics):
                at = plateau_passes(frame, labels, metric, eps)
                lines = {ln.get_label().split(" (mean")[0]: ln for ln in ax.get_lines()}
                for lab, x in at.items():
                    line = lines.get(METHOD_NAMES[lab])
                    if line is None or not len(line.get_xdata()):
                        continue
                    y = np.interp(x, line.get_xdata(), line.get_ydata())
                    ax.plot([x], [y], PLATEAU_MARKER, color=line.get_color(), ms=16, mew=2.2,
                            zorder=5, label="_plateau")
        entry = Line2D([], [], color="0.3", marker=PLATEAU_MARKER, ls="", ms=12, mew=2)
        return [(entry, f"plateau pass: within ε = {eps:g} of its own final ll from there "
                        "on (mean over seeds; C2)")]

    return marks
