"""The drawing every figure shares: styles (Okabe–Ito colours, a line style and marker per
method), the mean-over-seeds line with its t-interval and min–max bands, the zoom on the last
checkpoints, the ring on a series that falls on its last pass, one legend per figure, and
saving by :mod:`same.io.outputs`'s rules."""

from __future__ import annotations

import functools
import os
import textwrap
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from same.io.outputs import check_target, figure_kind, write_file

__all__ = ["OKABE_ITO", "STYLES", "COLORS", "VARIANT_STYLES", "ZOOM_LABEL", "ZOOM_FACE",
           "ZOOM_NATS", "FALL_NATS", "wrap_to", "draw_caption"]


#: Okabe & Ito's colour-blind-safe palette (Color Universal Design, 2008), without its yellow
#: (too pale on white) and with a neutral grey in its place.
OKABE_ITO = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7",
             "#999999")

#: Each method's colour (Okabe–Ito), line style and marker: no two share any of the three, so
#: the lines stay apart in grey scale and for a reader who cannot tell the colours apart.
STYLES = {"same": ("#0072B2", "-", "o"),
          "vb_online": ("#E69F00", "--", "s"),
          "vb_batch": ("#009E73", "-.", "^"),
          "sklearn_online": ("#CC79A7", ":", "D"),
          "sklearn_batch": ("#56B4E9", (0, (5, 1.5, 1, 1.5, 1, 1.5)), "v"),
          "cgs": ("#D55E00", (0, (7, 2)), "X")}
COLORS = {label: style[0] for label, style in STYLES.items()}

#: Colour, marker and line style of each SAME variant of a sweep (m values, schedules), in
#: order: Okabe–Ito colours, every neighbour differing in colour, marker and line style.
VARIANT_STYLES = tuple((OKABE_ITO[i], ("-", "--", "-.", ":")[i % 4], marker)
                       for i, marker in enumerate("osD^vPX*"))

#: The zoom inset of each panel: its Matplotlib label (how tests find it), its face colour
#: (how the report's screenshot test finds it), and the widest y-range of finals it gathers:
#: a series whose final mean is more than ZOOM_NATS below the best is left out of the zoom,
#: and the inset names it.
ZOOM_LABEL = "zoom"
ZOOM_FACE = "#fbf6e9"
ZOOM_NATS = 0.1


#: Text whose mean character width sets where :func:`wrap_to` breaks a line (English prose).
_WIDTH_SAMPLE = ("SAME (m = 100) against VB online (gensim): held-out log-likelihood per "
                 "token, mean over 5 seeds, 95 % Student-t band; the paper's metric.")


@functools.lru_cache(maxsize=None)
def _em_per_char() -> float:
    """The default font's mean advance per character of prose, in ems (DejaVu Sans: ~0.52),
    measured once per process."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    width = TextToPath().get_text_width_height_descent(_WIDTH_SAMPLE, FontProperties(size=10),
                                                       ismath=False)[0]
    return width / 10 / len(_WIDTH_SAMPLE)


def wrap_to(text: str, inches: float, fontsize: float) -> str:
    """``text`` with each of its lines broken at spaces to at most ``inches`` wide at
    ``fontsize`` points, by the font's mean character width (:func:`_em_per_char`).

    Matplotlib's own ``wrap=True`` measures the text again at every word of every draw: a
    figure's caption cost seconds of each report job (a ``savefig`` with
    ``bbox_inches="tight"`` draws twice per format)."""
    chars = max(20, int(inches * 72 / (fontsize * _em_per_char())))
    return "\n".join(textwrap.fill(line, chars, break_long_words=False, break_on_hyphens=False)
                     for line in text.split("\n"))


def draw_caption(fig, text: str, y: float = -0.005, fontsize: float = 7) -> None:
    """The figure's caption below it, from its left edge, wrapped to the figure's width
    (:func:`wrap_to`); ``bbox_inches="tight"`` in :func:`_save` keeps it in the file."""
    fig.text(0.01, y, wrap_to(text, 0.98 * fig.get_figwidth(), fontsize), ha="left", va="top",
             fontsize=fontsize)


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


def _summary(df, x, y, at=None):
    """Per value of ``x``: the x coordinate (``at``'s mean over seeds, or x itself), the mean
    of ``y`` over seeds, its 95 % Student-t interval (the verdicts' :func:`~.stats.t_interval`;
    NaN for one seed) and its min and max. Arrays sorted by x."""
    from .stats import t_interval

    rows = []
    for value, g in df.groupby(x):
        m, lo, hi = t_interval(g[y].to_numpy())
        rows.append((float(g[at].mean()) if at else value, m, lo, hi, float(g[y].min()),
                     float(g[y].max())))
    xs, mean, lo, hi, mn, mx = (np.array(c, dtype=float) for c in zip(*rows))
    return xs, mean, lo, hi, mn, mx


def _band(ax, df, x, label, style, y="ll", at=None):
    """Mean over seeds of column ``y`` at each value of ``x``, with its 95 % t interval (the
    interval the verdicts use) as the band and the min–max over seeds as a lighter one;
    ``style``: (colour, line style, marker); ``at``: a column plotted as the x coordinate
    instead, its mean over seeds at each ``x`` (e.g. x = pass, at = train_seconds).
    Returns what was drawn, for :func:`_zoom`: (label, style, xs, mean, low, high)."""
    color, ls, marker = style
    xs, mean, lo, hi, mn, mx = _summary(df, x, y, at)
    n = df["seed"].nunique()
    ax.plot(xs, mean, color=color, ls=ls, lw=1.5, marker=marker, ms=3.5, markevery=_every(xs),
            label=label + (f" (mean of {n} seeds)" if n > 1 else ""))
    if n > 1:
        ax.fill_between(xs, lo, hi, color=color, alpha=0.28, lw=0)
        ax.fill_between(xs, mn, mx, color=color, alpha=0.08, lw=0)
    return label, style, xs, mean, lo, hi


def _every(xs) -> int:
    """A marker every few points, so markers tell the lines apart without hiding them."""
    return max(1, len(xs) // 10)


def _zoom_range(finals, spans=None) -> tuple[float, float, list]:
    """The zoom's y-range from the series' final (mean, low, high): every final mean and t
    interval of the series within :data:`ZOOM_NATS` of the best final mean, and each such
    series' (lowest, highest) mean over the zoomed checkpoints (``spans``, so that every line
    drawn in the zoom stays in it to its end), padded by a tenth of their span (at least 0.002
    nats/token); returns (low, high, indices left out)."""
    best = max(f[0] for f in finals)
    kept = [i for i, f in enumerate(finals) if f[0] >= best - ZOOM_NATS]
    vals = [v for i in kept for v in (*finals[i], *(spans[i] if spans else ())) if np.isfinite(v)]
    lo, hi = min(vals), max(vals)
    pad = max(0.1 * (hi - lo), 0.002)
    return lo - pad, hi + pad, [i for i in range(len(finals)) if i not in kept]


def _zoom(ax, z, drawn, hline=None, last: int | None = None, noise=None):
    """Panel ``z`` (under ``ax``) zooms on ``ax``'s last checkpoints: each series of ``drawn``
    (:func:`_band`'s returns) with its t-interval band where it has one, the y-range set by the
    final means and intervals and the lines over the zoomed checkpoints (:func:`_zoom_range`):
    the resolution the verdicts read; the zoomed region is outlined on ``ax``. ``hline``: a
    reference (name, colour, y) drawn there too, or named when outside the range. ``noise``:
    (half-width, whose seeds) of a one-seed difference's seed noise
    (:func:`~.stats.seed_noise`), read only when every series is one seed
    (:func:`_one_seed_noise`). A zoom that would hold one line alone compares nothing: it is
    left empty and says why (:func:`_no_zoom`)."""
    drawn = [d for d in drawn if len(d[2])]
    if not drawn:
        z.set_visible(False)
        return None
    n = max(len(d[2]) for d in drawn)
    last = last or max(3, -(-n // 4))
    x0 = min(d[2][-last] if len(d[2]) >= last else d[2][0] for d in drawn)
    x1 = max(d[2][-1] for d in drawn)
    finals = [(d[3][-1], d[4][-1], d[5][-1]) for d in drawn]
    spans = [(d[3][d[2] >= x0].min(), d[3][d[2] >= x0].max()) for d in drawn]
    y0, y1, out = _zoom_range(finals, spans)
    one_seed = not any(np.isfinite(f[1]) for f in finals)
    band = _one_seed_noise(z, drawn[0], noise) if one_seed else None
    if band is not None:
        y0, y1 = min(y0, band[0]), max(y1, band[1])
    inside = hline is not None and y0 <= hline[2] <= y1
    notes = [] if hline is None or inside else [
        f"{hline[0]}: {hline[2]:.3f} ({'above' if hline[2] > y1 else 'below'})"]
    if out:
        best = max(f[0] for f in finals)
        notes.append("below the zoom: " + ", ".join(
            f"{drawn[i][0]} ({finals[i][0] - best:+.3f})" for i in out))
    if len(drawn) - len(out) + inside < 2:
        return _no_zoom(z, drawn, out, notes)
    _zoom_lines(z, drawn, out, x0, hline if inside else None)
    z.set_ylim(y0, y1)
    pad = 0.04 * (x1 - x0 or 1)
    z.set_xlim(x0 - pad, x1 + pad)
    what = ("one seed: no interval" + ("" if band else ", seed noise unknown") if one_seed
            else "band: 95 % t interval")
    z.set_title(f"zoom on the last checkpoints (outlined above; {what})"
                + "".join(f"\n{note}" for note in ([band[2]] if band else []) + notes),
                fontsize=7, pad=3)
    ax.indicate_inset((x0 - pad, y0, x1 - x0 + 2 * pad, y1 - y0), edgecolor="0.35", alpha=0.9,
                      lw=0.8)
    return z


def _zoom_lines(z, drawn, out, x0, hline) -> None:
    """The zoom's lines: each series of ``drawn`` not left ``out`` from ``x0`` on, with its
    t-interval band (nothing where it has none), and the reference ``hline`` when given."""
    from matplotlib.ticker import MaxNLocator

    z.set_label(ZOOM_LABEL)
    z.set_facecolor(ZOOM_FACE)
    for i, (_, (color, ls, marker), xs, mean, lo, hi) in enumerate(drawn):
        if i in out:
            continue
        keep = xs >= x0
        z.plot(xs[keep], mean[keep], color=color, ls=ls, lw=1.3, marker=marker, ms=3)
        if np.isfinite(lo[keep]).any():
            z.fill_between(xs[keep], lo[keep], hi[keep], color=color, alpha=0.28, lw=0)
    if hline is not None:
        z.axhline(hline[2], color=hline[1], ls=":", lw=1)
    z.tick_params(labelsize=7)
    z.grid(alpha=0.3)
    z.xaxis.set_major_locator(MaxNLocator(integer=True))


def _one_seed_noise(z, first, noise):
    """A one-seed zoom's seed noise: a grey band ±half around the first series' (the main
    run's) final, so that a difference within it reads as noise and the zoom is never narrower
    than the noise; returns (low, high, its note), or None when the noise is unknown."""
    if noise is None:
        return None
    half, whose = noise
    y = float(first[3][-1])
    z.axhspan(y - half, y + half, color="0.5", alpha=0.15, lw=0)
    return (y - 1.1 * half, y + 1.1 * half, textwrap.fill(
        f"grey: ±{half:.3f} around {first[0]}'s final, the 95 % seed noise of a one-seed "
        f"difference ({whose}): a line ending within it differs by noise alone", 95))


def _no_zoom(z, drawn, out, notes):
    """An empty zoom panel that says why: a single line within :data:`ZOOM_NATS` of the best
    and no reference line there, so nothing to compare at the zoom's resolution."""
    kept = [d[0] for i, d in enumerate(drawn) if i not in out]
    z.set_label(ZOOM_LABEL)
    z.axis("off")
    text = (f"no zoom: only {', '.join(kept)} ends within {ZOOM_NATS:g} nats/token of the best "
            "final, nothing to compare at finer resolution"
            + "".join(f"\n{note}" for note in notes))
    width = z.get_position().width * z.figure.get_figwidth()
    z.text(0.5, 0.5, wrap_to(text, width, 7), transform=z.transAxes, ha="center",
           va="center", fontsize=7)
    return z


#: A series whose last checkpoint falls this far (nats/token) below the one before, and below
#: that checkpoint's interval, is marked where it falls (e.g. inverse-linear annealing, whose
#: m is smallest on the last pass).
FALL_NATS = 0.01


def _mark_fall(ax, name, color, xs, mean, lo, hi) -> bool:
    """Ring and name the last checkpoint of a series that falls there (:data:`FALL_NATS`)."""
    if len(xs) < 2:
        return False
    drop = mean[-2] - mean[-1]
    below = not np.isfinite(lo[-2]) or hi[-1] < lo[-2]
    if drop < FALL_NATS or not below:
        return False
    ax.plot(xs[-1], mean[-1], "o", ms=11, mfc="none", mec=color, mew=1.4)
    ax.annotate(f"{name} falls {drop:.3f} on its last pass", (xs[-1], mean[-1]),
                xytext=(-8, -4), textcoords="offset points", ha="right", va="top", fontsize=7,
                color=color)
    return True


def _figure_legend(fig, axes, bottom_inches: float, height: float, extra=()):
    """One legend for the whole figure, below its panels: each name once, from every panel
    (insets excluded), then ``extra`` (handle, name) pairs."""
    seen = {}
    for ax in axes:
        for handle, name in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(name, handle)
    for handle, name in extra:
        seen.setdefault(name, handle)
    if seen:
        fig.legend(list(seen.values()), list(seen), loc="lower center", fontsize=8,
                   ncol=min(3, len(seen)), frameon=False, bbox_to_anchor=(0.5, 0.0))
    return bottom_inches / height


def _band_handles(n_seeds: int):
    """Legend entries saying what the two bands are."""
    from matplotlib.patches import Patch

    if n_seeds < 2:
        return []
    return [(Patch(color="0.35", alpha=0.45, lw=0),
             f"dark band: 95 % t interval over {n_seeds} seeds"),
            (Patch(color="0.35", alpha=0.12, lw=0), "light band: min–max over seeds")]


def _dataset_title(df, caption: str) -> str:
    """The dataset's name for a figure title, marked SYNTHETIC when the caption (the
    workflow's dataset description) says it is."""
    name = str(df["dataset"].iloc[0])
    return f"{name} (SYNTHETIC data)" if f"{name} (SYNTHETIC" in caption else name


def _ticks_with_ends(ax, xs) -> None:
    """Integer ticks that always include the first and the last checkpoint."""
    from matplotlib.ticker import MaxNLocator

    xs = sorted(set(float(v) for v in xs))
    if not xs:
        return
    lo, hi = xs[0], xs[-1]
    auto = [t for t in MaxNLocator(integer=True, nbins=7).tick_values(lo, hi) if lo < t < hi]
    ticks = sorted({lo, hi, *(t for t in auto if min(abs(t - lo), abs(t - hi)) >= (hi - lo) / 12)})
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
