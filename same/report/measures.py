"""Numbers the claim functions (:mod:`same.report.claims`) compute from one dataset's traces
(a DataFrame from :func:`same.report.traces.load_traces`): per-seed lls, seed noise, passes and
seconds to a level, and their text forms.  ll in nats/token, seconds of training."""

from __future__ import annotations

import numpy as np

from .paper import CONVERGED_EPS, METHOD_NAMES
from .tables import table1_rows
from .traces import final_lls, first_reach

__all__ = ["NOISE_STANDARD_ERRORS", "fmt", "mean_range", "per_seed", "noise", "ref_sd",
           "passes_to", "table1_by_label", "budget_seconds", "lowest_final", "sampler_text",
           "variant_lls", "mean_spread"]

#: A difference of seed means is noise up to this many of its standard errors (C7, C8).
NOISE_STANDARD_ERRORS = 2


def fmt(x, nd=4) -> str:
    """``x`` with ``nd`` decimals (an ll in nats/token, or seconds), "—" for None."""
    return "—" if x is None else f"{x:.{nd}f}"


def mean_range(name, a) -> str:
    """"name mean [min, max]" of a per-seed array of lls (nats/token)."""
    return f"{name} {fmt(a.mean())} [{fmt(a.min())}, {fmt(a.max())}]"


def per_seed(df, label: str, at: str = "last") -> np.ndarray:
    """ll of each seed of ``label`` at its last (:func:`~same.report.traces.final_lls`) or
    first checkpoint; empty if absent."""
    if at == "last":
        return final_lls(df, label)
    return df[df["label"] == label].sort_values("pass").groupby("seed")["ll"].first().to_numpy()


def noise(a: np.ndarray, b: np.ndarray, ref_sd: float) -> float:
    """:data:`NOISE_STANDARD_ERRORS` standard errors of the difference of two seed means
    (``ref_sd`` for a lone seed)."""
    var = [x.var(ddof=1) if len(x) > 1 else ref_sd ** 2 for x in (a, b)]
    return float(NOISE_STANDARD_ERRORS * np.sqrt(var[0] / len(a) + var[1] / len(b)))


def ref_sd(df) -> float:
    """Seed standard deviation of the main SAME run's final ll (the suite's noise unit)."""
    same = final_lls(df, "same")
    return float(same.std(ddof=1)) if len(same) > 1 else CONVERGED_EPS


def passes_to(run, target: float) -> float:
    """The pass of a run's first checkpoint with ll ≥ ``target`` (nats/token); inf if none."""
    p, _ = first_reach(run, target)
    return np.inf if p is None else p


def table1_by_label(df) -> dict:
    """Table 1's rows (:func:`same.report.tables.table1_rows`) keyed by run label."""
    return {label: row for label in METHOD_NAMES for row in table1_rows(df)
            if row["method"] == METHOD_NAMES[label]}


def budget_seconds(df, label: str) -> float:
    """Mean over seeds of the training seconds of a label's whole budget."""
    d = df[df["label"] == label].sort_values("pass").groupby("seed")["train_seconds"].last()
    return float(d.mean())


def lowest_final(df, *labels) -> float:
    """The lowest final ll of any seed of ``labels``: a level every one of their seeds reaches."""
    return float(min(final_lls(df, lab).min() for lab in labels))


def sampler_text(df, label: str) -> str:
    """"summed sampler" / "nonzero sampler" as recorded in the traces of ``label``."""
    d = df[df["label"] == label]
    if d.empty or "sampler" not in d or d["sampler"].iloc[0] is None:
        return "sampler unknown"
    return f"{d['sampler'].iloc[0]} sampler"


def variant_lls(df, runs: dict, at: str = "last") -> dict:
    """{key: per-seed ll array} for the labels of ``runs`` that have traces."""
    out = {k: per_seed(df, label, at) for k, label in runs.items()}
    return {k: a for k, a in out.items() if len(a)}


def mean_spread(name, a) -> str:
    """"name: mean ± seed sd (n seeds)" of a per-seed array of lls (nats/token)."""
    return (f"{name}: {a.mean():.4f}" + (f" ± {a.std(ddof=1):.4f}" if len(a) > 1 else "")
            + f" ({len(a)} seed{'s' if len(a) > 1 else ''})")
