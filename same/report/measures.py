"""Small numbers and texts the claim functions (:mod:`same.report.claims`) read from one
dataset's traces (a DataFrame from :func:`same.report.traces.load_traces`): per-seed lls of a
run's variants and their text forms. Seed statistics, convergence and time to quality are in
:mod:`same.report.stats`. ll in nats/token."""

from __future__ import annotations

import numpy as np

from .traces import final_lls

__all__ = ["fmt", "per_seed", "sampler_text", "variant_lls"]


def fmt(x, nd=4) -> str:
    """``x`` with ``nd`` decimals (an ll in nats/token, or seconds), "—" for None."""
    return "—" if x is None else f"{x:.{nd}f}"


def per_seed(df, label: str, at: str | int = "last") -> np.ndarray:
    """ll of each seed of ``label`` at its last (:func:`~same.report.traces.final_lls`),
    first, or ``at``-th from the end (an int: -1 the last, -3 the third-last) checkpoint;
    empty if absent."""
    if at == "first":
        return (df[df["label"] == label].sort_values("pass").groupby("seed")["ll"].first()
                .to_numpy())
    return final_lls(df, label, -1 if at == "last" else int(at))


def sampler_text(df, label: str) -> str:
    """"summed sampler" / "nonzero sampler" as recorded in the traces of ``label``."""
    d = df[df["label"] == label]
    if d.empty or "sampler" not in d or d["sampler"].iloc[0] is None:
        return "sampler unknown"
    return f"{d['sampler'].iloc[0]} sampler"


def variant_lls(df, runs: dict, at: str | int = "last") -> dict:
    """{key: per-seed ll array} for the labels of ``runs`` that have traces."""
    out = {k: per_seed(df, label, at) for k, label in runs.items()}
    return {k: a for k, a in out.items() if len(a)}
