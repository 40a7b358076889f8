"""Reading runner traces and the small measurements every table and claim uses."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .paper import IMPLEMENTATIONS

__all__ = ["load_traces", "implementation", "per_pass_seconds", "per_pass_over_seeds", "first_pass_seconds",
           "first_seed",
           "final_lls", "final_ll", "shape_of", "reach_seconds",
           "PAPER_TOKENS_PER_PARAMETER", "TEST_DOCUMENTS", "configurations",
           "configuration_frame", "test_traces", "twinned_labels", "ORDER_SUFFIX",
           "order_twinned_labels", "order_frame", "per_parameter_text"]

#: Training tokens per φ parameter of the paper's runs (K=256): NYTimes ≈ 99.5M × 0.9 /
#: (256 × 102,660), PubMed ≈ 730M × 0.9 / (256 × 141,043).
PAPER_TOKENS_PER_PARAMETER = {"NYTimes": 3.4, "PubMed": 18.2}


def load_traces(paths: Sequence[str | os.PathLike]):
    """Concatenate trace.csv files into one DataFrame with ``seed``, ``dataset`` and ``label``.

    The seed, dataset, K, threads, backend and params are read from each run's meta.json,
    and what else ran on the machine meanwhile (``other_cores``, ``shared``:
    :mod:`same.experiments.machine_load`; a run that recorded nothing counts as shared) and
    the document order it trained in (``document_order``).
    Each trace is checked first (:func:`same.experiments.rundir.check_trace`: its SHA-256 against
    meta.json, every checkpoint of its budget present, every ll finite), so a trace cut
    short or edited is refused, never read as a finished run.

    Raises
    ------
    ValueError
        No paths given; a trace that fails its checks (same.experiments.rundir.RunDirError, naming the
        file).
    """
    import pandas as pd

    from same.experiments.machine_load import is_shared
    from same.experiments.rundir import check_trace

    frames = []
    for p in paths:
        p = Path(p)
        meta, text = check_trace(p)
        df = pd.read_csv(io.StringIO(text))
        settings = meta["settings"]
        df["seed"] = settings["seed"]
        df["dataset"] = meta["dataset"]
        # K (n_components; n_topics in run folders written before 0.1's rename)
        df["n_topics"] = settings.get("n_components", settings.get("n_topics"))
        df["threads"] = settings["threads"]
        df["backend"] = settings["backend"]
        df["params"] = json.dumps(settings["params"], sort_keys=True)
        df["n_words"] = meta["split"].get("n_words")
        df["n_train_tokens"] = meta["split"].get("n_train_tokens")
        df["train_fraction"] = settings.get("train_fraction", 1.0)
        df["sampler"] = _sampler(settings)
        df["scored_on"] = meta["split"].get("scored_on", TEST_DOCUMENTS)
        # what else ran on the machine meanwhile (None: not recorded, counted as shared)
        load = meta.get("machine_load") or {}
        df["other_cores"] = np.nan if load.get("other_cores") is None else load["other_cores"]
        df["shared"] = is_shared(load)
        df["document_order"] = (meta.get("order") or {}).get("resolved", "stored")
        frames.append(df)
    if not frames:
        raise ValueError("no traces given")
    return pd.concat(frames, ignore_index=True)


#: ``scored_on`` of a run scored on the split's test documents (meta.json's split section).
TEST_DOCUMENTS = "test documents"


def test_traces(df):
    """The rows of runs scored on test documents: what figures, tables and verdicts of the
    comparisons read (tuning and the sensitivity study are scored on validation documents)."""
    return df[df["scored_on"] == TEST_DOCUMENTS] if "scored_on" in df else df


def twinned_labels(df) -> set[str]:
    """The published labels whose tuned twin (label ``<label>_tuned``) the traces hold."""
    from same.experiments.tuning import TUNED_SUFFIX

    return {lab.removesuffix(TUNED_SUFFIX) for lab in set(df["label"])
            if lab.endswith(TUNED_SUFFIX)}


def configurations(df, labels=None) -> list[str]:
    """The configurations (keys of :data:`same.experiments.tuning.CONFIGURATIONS`) the traces hold:
    as published always, tuned when any run has a tuned twin (:func:`twinned_labels`); with
    ``labels`` (runs compared with one another, e.g. the variants of one sweep), tuned only when
    every one of them has its tuned twin, so that no row compares a tuned run with untuned
    ones."""
    twins = twinned_labels(df)
    tuned = set(labels) <= twins if labels is not None else bool(twins)
    return ["published", "tuned"] if tuned else ["published"]


def configuration_frame(df, configuration: str):
    """The traces as the claims, tables and figures read them in one configuration, under the
    published labels: "published", every run but the tuned twins; "tuned", each run that has
    a tuned twin replaced by the twin (VB batch and CGS have none: their one run serves both).

    Raises
    ------
    ValueError
        An unknown configuration.
    """
    from same.experiments.tuning import CONFIGURATIONS, TUNED_SUFFIX

    if configuration not in CONFIGURATIONS:
        raise ValueError(f"unknown configuration {configuration!r}; known: "
                         f"{', '.join(CONFIGURATIONS)}")
    if configuration == "published":
        return df[~df["label"].str.endswith(TUNED_SUFFIX)]
    d = df[~df["label"].isin(twinned_labels(df))]
    return d.assign(label=d["label"].str.removesuffix(TUNED_SUFFIX))


#: Label suffix of a run in the other document order (same.experiments.runs.order_twins).
ORDER_SUFFIX = "_other_order"


def order_twinned_labels(df) -> set[str]:
    """The labels whose run in the other document order (``<label>_other_order``) the traces
    hold."""
    return {lab.removesuffix(ORDER_SUFFIX) for lab in set(df["label"])
            if lab.endswith(ORDER_SUFFIX)}


def order_frame(df):
    """The traces with each run that has a twin in the other document order replaced by the
    twin, under the run's label (as :func:`configuration_frame` does for tuned twins); None
    when no run has one."""
    twins = order_twinned_labels(df)
    if not twins:
        return None
    d = df[~df["label"].isin(twins)]
    return d.assign(label=d["label"].str.removesuffix(ORDER_SUFFIX))


def _sampler(settings: dict) -> str | None:
    """SAME's sampler of a run (its params, else the estimator's default); None for others."""
    if settings["method"] != "same":
        return None
    if "sampler" in settings["params"]:
        return settings["params"]["sampler"]
    from same.model.sampler import SameLDA

    return SameLDA().sampler


def per_pass_seconds(run) -> float:
    """Median training seconds per pass (per iteration for CGS) of one run's trace."""
    r = run.sort_values("pass")
    passes = np.r_[0, r["pass"].to_numpy()]
    secs = np.r_[0.0, r["train_seconds"].to_numpy()]
    steps = np.diff(secs) / np.diff(passes)
    return float(np.median(steps[1:] if len(steps) > 1 else steps))


def implementation(label: str, d=None) -> str:
    """The implementation a method's seconds time (:data:`~.paper.IMPLEMENTATIONS`; SAME on
    the cupy backend, which ``d``'s rows of the run say: CuPy SAME)."""
    if label == "same" and d is not None and "backend" in d and (d["backend"] == "cupy").any():
        return "CuPy SAME"
    return IMPLEMENTATIONS[label]


def first_pass_seconds(run) -> float | None:
    """Training seconds of one run's first pass (CGS: first iteration); None when its trace
    has no checkpoint at pass 1 (a run scored at its final checkpoint only)."""
    first = run[run["pass"] == 1]
    return float(first["train_seconds"].iloc[0]) if not first.empty else None


def per_pass_over_seeds(d) -> dict:
    """Seconds per pass of one label's runs across seeds: each seed's
    :func:`per_pass_seconds` (its median over passes after the first), then their median,
    min and max over seeds; ``seeds`` how many runs."""
    per = [per_pass_seconds(run) for _, run in d.groupby("seed")]
    return {"median": float(np.median(per)), "min": float(np.min(per)),
            "max": float(np.max(per)), "seeds": len(per)}


def first_seed(d):
    """Rows of the smallest seed."""
    return d[d["seed"] == d["seed"].min()] if not d.empty else d


def final_ll(run) -> float:
    """ll at the last pass of one run."""
    return float(run.sort_values("pass")["ll"].iloc[-1])


def final_lls(df, label: str, at: int = -1, y: str = "ll") -> np.ndarray:
    """Final ll of each seed of a label (empty if the label has no rows); ``at``: another
    checkpoint counted from the end (-3: the third-last, which the fragility check reads);
    ``y``: the held-out estimator's column (:data:`~.verdicts.METRICS`)."""
    d = df[df["label"] == label].sort_values("pass")
    if at == -1:
        return d.groupby("seed")[y].last().to_numpy()
    return d.groupby("seed")[y].agg(lambda s: s.iloc[max(at, -len(s))]).to_numpy()


def shape_of(df, dataset: str) -> dict | None:
    """Training tokens, K, W and training tokens per φ parameter (N_train / (K · W)) of a
    dataset's traces; W from the run metadata, else the UCI registry; None if unknown."""
    d = df[df["dataset"] == dataset] if "dataset" in df else df
    if d.empty:
        return None
    row = d.iloc[0]
    n_words = row.get("n_words")
    if n_words is None or n_words != n_words:  # NaN: traces written before n_words was recorded
        from same.data.corpus import REGISTRY

        n_words = REGISTRY[dataset].n_words if dataset in REGISTRY else None
    tokens = row.get("n_train_tokens")
    if tokens is None or tokens != tokens:
        first = d[d["pass"] == d["pass"].min()]
        tokens = float(first["tokens_seen"].iloc[0]) / float(d["pass"].min())
    if n_words is None:
        return None
    k = int(row["n_topics"])
    return {"n_train_tokens": int(tokens), "n_topics": k, "n_words": int(n_words),
            "tokens_per_parameter": float(tokens) / (k * float(n_words))}


def per_parameter_text(x: float) -> str:
    """Training tokens per φ parameter (:func:`shape_of`'s ``tokens_per_parameter``, or a
    crossover study point's) as claims.md and the README print it, everywhere: two decimals
    ("2.85")."""
    return f"{x:.2f}"


def reach_seconds(seconds, ll, target: float, x=None) -> tuple:
    """When a run first reaches held-out ll ``target``: (x of that checkpoint, training seconds)
    with the seconds interpolated linearly in (seconds, ll) from the checkpoint before, so that
    sparse checkpoints do not inflate the time; (None, None) if never reached.

    seconds, ll : per checkpoint, in training order; x : per checkpoint (default: index + 1)
    """
    secs, lls = np.asarray(seconds, dtype=float), np.asarray(ll, dtype=float)
    hit = np.nonzero(lls >= target)[0]
    if not len(hit):
        return None, None
    i = int(hit[0])
    s = secs[i]
    if i > 0 and lls[i] > lls[i - 1]:
        s = secs[i - 1] + (target - lls[i - 1]) / (lls[i] - lls[i - 1]) * (secs[i] - secs[i - 1])
    xs = np.arange(1, len(secs) + 1) if x is None else np.asarray(x, dtype=float)
    return float(xs[i]), float(s)


