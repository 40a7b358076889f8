"""Seconds a verdict may read: the work each run did (its trace's passes) times the cost of that
work measured with the machine alone (:mod:`same.experiments.timing`'s ``timing.json``).

The quality fits share the machine, so the ``train_seconds`` of their traces are never read by
a verdict, table or figure about time.  :func:`retime` replaces them, checkpoint by checkpoint,
by the seconds the alone measurement of the same method (and settings) took to reach the same
pass: its cumulative training seconds, linear between its timed checkpoints.  Beyond the last
timed pass L (a timed run stops after ``cap_seconds``), each later pass costs what it cost the
run itself, scaled to the machine alone: A(x) = A(L) + (S(x) − S(L)) · r, S the run's own
(shared) seconds and r = (A(L) − A(h)) / (S(L) − S(h)) the alone-to-shared ratio over the second
half [h, L] of the timed passes.  So a method whose passes get cheaper as it converges (batch
VB's E-step, CGS's sparse sampler) is priced by its own later passes, not by its first ones;
where the run's seconds cannot give r (none, or not increasing), a later pass costs the mean
of the second half of the timed passes.  Each round of the interleaved measurement gives one
such cost curve; a quantity read from seconds (time to a quality, time to converge, seconds
per pass) is computed once per round (:func:`over_rounds`) and reported as the median over
rounds with their min–max.

A method whose alone measurement is missing, or shared the machine in so many rounds that
fewer than :data:`MIN_ROUNDS` clean ones remain, has no seconds: :func:`retime` sets them to
NaN and :func:`refused` says why; the timing verdicts then say "not judged", never read the
shared seconds.  The m sweep's runs (table2, C6) are timed by their own fits, which reserve
every core: a run whose ``meta.json`` says another job shared the machine is refused the same
way (:func:`shared_runs`).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .traces import ORDER_SUFFIX

__all__ = ["MIN_ROUNDS", "TimingError", "load_timing", "retime", "refused", "over_rounds",
           "rounds_of", "shared_runs", "timing_entry", "ORDER_SUFFIX", "per_pass_alone",
           "refusal_text", "summary", "seconds_problem", "timed_labels", "entry_of"]

#: Clean (unshared) rounds a method's alone measurement needs for its seconds to be read.
MIN_ROUNDS = 3
#: timing.json's ``artefact`` (same.experiments.timing.ARTEFACT).
_ARTEFACT = "same-lda seconds measured alone"


class TimingError(ValueError):
    """A timing.json that is unreadable or not one of ours."""


def load_timing(path: str | os.PathLike | None) -> dict | None:
    """Read a timing.json (None for no path); checked: JSON, our artefact, entries with
    rounds of matching points and seconds.

    Raises
    ------
    TimingError
        One line naming the file.
    """
    if path is None:
        return None
    path = Path(path)
    from same.io.textinput import loads_json

    try:
        data = loads_json(path.read_text(encoding="utf-8"), str(path))
    except (OSError, ValueError) as exc:
        raise TimingError(f"{path}: unreadable timing file ({type(exc).__name__}: {exc})") \
            from None
    if not isinstance(data, dict) or data.get("artefact") != _ARTEFACT:
        raise TimingError(f"{path}: not a timing file of same-lda (rerun the timing rule)")
    entries = data.get("entries")
    if not isinstance(entries, dict):
        raise TimingError(f"{path}: no entries")
    for name, e in entries.items():
        rounds = e.get("rounds", []) if isinstance(e, dict) else None
        if not isinstance(rounds, list) or not all(isinstance(r, dict) for r in rounds):
            raise TimingError(f"{path}: entry {name!r}: an object with a list of rounds")
        for r in rounds:
            p, s = r.get("points"), r.get("seconds")
            if not (_numbers(p) and _numbers(s) and len(p) == len(s) >= 1
                    and all(np.diff(p) > 0) and all(np.isfinite(s)) and all(np.diff(s) >= 0)):
                raise TimingError(f"{path}: entry {name!r} round {r.get('round')}: points and "
                                  "seconds must be increasing lists of numbers of one length")
            load = r.get("machine_load")
            if load is not None and not (isinstance(load, dict) and (
                    load.get("other_cores") is None or _numbers([load["other_cores"]]))):
                raise TimingError(f"{path}: entry {name!r} round {r.get('round')}: "
                                  "machine_load must be an object whose other_cores is a number")
    return data


def _numbers(x) -> bool:
    """A list of JSON numbers (:func:`same.io.schema.is_number`)."""
    from same.io.schema import is_number

    return isinstance(x, list) and all(map(is_number, x))


def timing_entry(label: str) -> str:
    """The timing entry that prices a run: its own label; a run in the other document order
    (:data:`ORDER_SUFFIX`), its base run's."""
    return label.removesuffix(ORDER_SUFFIX)


def _shared(rnd: dict) -> bool:
    """Whether a timed round shared the machine, by the one rule
    (:func:`same.experiments.machine_load.is_shared` of its recorded load)."""
    from same.experiments.machine_load import is_shared

    return is_shared(rnd.get("machine_load"))


def rounds_of(timing: dict | None, label: str) -> list[dict]:
    """The clean (unshared) rounds of ``label``'s alone measurement, in round order."""
    if not timing:
        return []
    e = timing["entries"].get(timing_entry(label))
    return [r for r in (e or {}).get("rounds", []) if not _shared(r)]


def refused(timing: dict | None, label: str) -> str | None:
    """Why ``label`` has no seconds a verdict may read (None when it has them)."""
    if timing is None:
        return "no seconds measured alone (no timing.json: the timing rule did not run)"
    e = timing["entries"].get(timing_entry(label))
    if e is None:
        return f"{label} was not timed alone"
    rounds = e.get("rounds", [])
    clean = [r for r in rounds if not _shared(r)]
    if len(clean) >= MIN_ROUNDS:
        return None
    worst = max((r["machine_load"].get("other_cores") or 0.0 for r in rounds
                 if _shared(r) and r.get("machine_load")), default=None)
    load = "" if worst is None else f"; other work up to {worst:.2f} cores"
    return (f"{label}'s seconds were measured beside other work in {len(rounds) - len(clean)} "
            f"of {len(rounds)} rounds{load}: fewer than {MIN_ROUNDS} alone, refused")


def _curve(rnd: dict):
    """One timed round's pricing: ``at(x, shared)``, the alone cumulative training seconds at
    passes ``x`` of one run whose own (shared) seconds there are ``shared`` (module docstring;
    None: a later pass costs the tail's mean)."""
    p = np.r_[0.0, np.asarray(rnd["points"], dtype=float)]
    s = np.r_[0.0, np.asarray(rnd["seconds"], dtype=float)]
    last = p[-1]
    half = p[p >= last / 2][0] if last > 1 else 0.0
    i = int(np.searchsorted(p, half))
    tail = (s[-1] - s[i]) / (last - p[i]) if last > p[i] else s[-1] / max(last, 1.0)

    def at(x, shared=None):
        x = np.asarray(x, dtype=float)
        out = np.interp(x, p, s)
        beyond = x > last
        if not beyond.any():
            return out
        out[beyond] = s[-1] + (x[beyond] - last) * tail
        if shared is not None:
            shared = np.asarray(shared, dtype=float)
            order = np.argsort(x)
            xs, ss = np.r_[0.0, x[order]], np.r_[0.0, shared[order]]
            s_last, s_half = np.interp(last, xs, ss), np.interp(p[i], xs, ss)
            if np.isfinite(ss).all() and np.all(np.diff(ss) >= 0) and s_last > s_half:
                ratio = (s[-1] - s[i]) / (s_last - s_half)
                out[beyond] = s[-1] + (shared[beyond] - s_last) * ratio
        return out

    return at


def timed_labels(df) -> list[str]:
    """The labels of ``df`` the timing rule prices: the main comparison's
    (:data:`same.experiments.runs.MAIN_LABELS`), their tuned twins and their runs in the other
    document order; the other runs (the m sweep, the schedules, ...) keep their own seconds."""
    from same.experiments.runs import MAIN_LABELS
    from same.experiments.tuning import TUNED_SUFFIX

    return [lab for lab in df["label"].unique()
            if timing_entry(lab).removesuffix(TUNED_SUFFIX) in MAIN_LABELS]


def retime(df, timing: dict | None, round_index: int | None = None, labels=None):
    """``df`` with ``train_seconds`` of the rows of ``labels`` (default: every label) replaced
    by the seconds measured alone: each row is priced by the timing entry of its label
    (:func:`timing_entry`), recorded in column ``timed_as`` so that a frame whose labels were
    renamed afterwards (the tuned configuration's) is re-priced by the same entry; round
    ``round_index`` of the entry's clean rounds (:func:`rounds_of`; NaN seconds for an entry
    with fewer), or the median over them (None).  The trace's own seconds are kept as ``shared_seconds``; ``seconds_source`` says
    "alone", "refused" (NaN seconds, :func:`refused`'s reason in ``seconds_refused``) or
    "trace" (a row not retimed)."""
    out = df.copy()
    if "shared_seconds" not in out:
        out["shared_seconds"] = out["train_seconds"]
    if "timed_as" not in out:
        keep = set(out["label"].unique()) if labels is None else set(labels)
        out["timed_as"] = [timing_entry(lab) if lab in keep else None for lab in out["label"]]
    secs = out["shared_seconds"].to_numpy(dtype=float).copy()
    source = np.full(len(out), "trace", dtype=object)
    why = np.full(len(out), None, dtype=object)
    passes = out["pass"].to_numpy(dtype=float)
    entries = out["timed_as"].to_numpy(dtype=object)
    for entry in {e for e in entries if isinstance(e, str)}:
        rows = entries == entry
        reason = refused(timing, entry)
        if reason is not None:
            secs[rows], source[rows], why[rows] = np.nan, "refused", reason
            continue
        curves = [_curve(r) for r in rounds_of(timing, entry)]
        if round_index is not None:
            if round_index >= len(curves):  # this entry has fewer clean rounds: none to read
                secs[rows], source[rows] = np.nan, "alone"
                continue
            curves = [curves[round_index]]
        own = out["shared_seconds"].to_numpy(dtype=float)
        for idx in _runs(out, rows):  # each run priced by its own later passes
            secs[idx] = np.median([c(passes[idx], own[idx]) for c in curves], axis=0)
        source[rows] = "alone"
    out["train_seconds"] = secs
    out["seconds_source"] = source
    out["seconds_refused"] = why
    return out


def _runs(df, rows) -> list[np.ndarray]:
    """The positions (into ``df``) of each run's rows among ``rows`` (a boolean mask): one
    array per (label, seed, scored_on)."""
    keys = [c for c in ("label", "seed", "scored_on") if c in df]
    pos = np.flatnonzero(rows)
    return [pos[np.asarray(g, dtype=int)] for g in
            df.iloc[pos].reset_index(drop=True).groupby(keys, sort=False).indices.values()]


def over_rounds(fn, df, timing: dict | None) -> dict:
    """``fn(retimed df)`` (a number) for each round of the alone measurement (``df`` retimed
    by :func:`retime`, or priced here as :func:`timed_labels` says): {"median", "min",
    "max", "rounds"}, a round where ``fn`` is NaN (an entry it reads has fewer clean rounds)
    left out, so no entry's last round counts twice; every value NaN when no round is
    accepted.  Give ``df`` only the rows ``fn`` reads: every entry in it is repriced each
    round."""
    if "timed_as" not in df:
        df = retime(df, timing, labels=timed_labels(df))
    entries = {e for e in df["timed_as"] if isinstance(e, str)}
    n = max((len(rounds_of(timing, e)) for e in entries), default=0)
    vals = np.array([fn(retime(df, timing, r)) for r in range(n)], dtype=float)
    vals = vals[~np.isnan(vals)]  # a round some entry read by fn does not have
    if not len(vals):
        return {"median": float("nan"), "min": float("nan"), "max": float("nan"), "rounds": 0}
    return {"median": float(np.median(vals)), "min": float(np.min(vals)),
            "max": float(np.max(vals)), "rounds": len(vals)}


def entry_of(df, label: str) -> str:
    """The timing entry that priced ``label``'s rows (its own label when not retimed)."""
    d = df[df["label"] == label]
    if "timed_as" in d and len(d) and isinstance(d["timed_as"].iloc[0], str):
        return d["timed_as"].iloc[0]
    return timing_entry(label)


def per_pass_alone(df, timing: dict | None, label: str) -> dict | None:
    """Seconds per pass (CGS: per iteration) of ``label``'s runs in ``df``, priced alone over
    their whole budget: for each clean round, the median over seeds of each run's
    :func:`~same.report.traces.per_pass_seconds` (its median cost per pass after the first,
    every pass priced by :func:`retime`, so a pass beyond the timed ones at its own cost),
    then the median, min and max over rounds; ``first_pass`` the median over rounds of the
    first pass's cost (the first timed pass); None when refused (:func:`seconds_problem`)."""
    from .traces import per_pass_over_seeds

    if timing is None or df[df["label"] == label].empty:
        return None
    if "timed_as" not in df:
        df = retime(df, timing, labels=timed_labels(df))
    if seconds_problem(df, label) is not None:
        return None
    stat = over_rounds(lambda d: per_pass_over_seeds(d)["median"], df[df["label"] == label],
                       timing)
    first = [r["seconds"][0] / r["points"][0] for r in rounds_of(timing, entry_of(df, label))]
    return {**stat, "first_pass": float(np.median(first))}


def shared_runs(df) -> dict:
    """{(label, seed): other cores} of the runs whose meta.json says they shared the machine
    (column ``shared`` of :func:`~same.report.traces.load_traces`); empty when the column is
    absent (traces built in memory)."""
    if "shared" not in df:
        return {}
    d = df[df["shared"].astype(bool)]
    return {(lab, int(seed)): (None if np.isnan(c) else float(c))
            for (lab, seed), c in d.groupby(["label", "seed"])["other_cores"].first().items()}


def seconds_problem(df, label: str) -> str | None:
    """Why the seconds of ``label``'s rows in ``df`` may not be read (None when they may):
    after :func:`retime`, its measurement's refusal; otherwise (the trace's own seconds, e.g.
    the m sweep's, whose fits reserve every core) when any of its runs shared the machine
    by its meta.json (``shared``), or its traces do not say."""
    d = df[df["label"] == label]
    if d.empty:
        return f"{label} has no runs"
    source = d["seconds_source"].iloc[0] if "seconds_source" in d else "trace"
    if source == "refused":
        return str(d["seconds_refused"].iloc[0])
    if source == "alone":
        return None
    if "shared" not in d:
        return f"{label}: its traces do not say whether the machine was shared"
    by_seed = d.groupby("seed")[["shared", "other_cores"]].first()
    bad = by_seed[by_seed["shared"].astype(bool)]
    if bad.empty:
        return None
    worst = bad["other_cores"].max()
    load = ("not recorded" if not np.isfinite(worst) else
            f"other work up to {worst:.2f} cores")
    return (f"{label}'s seconds were measured beside other work in {len(bad)} of "
            f"{len(by_seed)} seeds ({load}): refused")


def refusal_text(reasons) -> str:
    """The reasons a timing verdict was not judged, each once, joined."""
    return "; ".join(dict.fromkeys(r for r in reasons if r))


def summary(timing: dict | None) -> dict:
    """For a caption: rounds, cap, and the largest other load of any accepted round."""
    if not timing:
        return {}
    loads = [r["machine_load"].get("other_cores") for e in timing["entries"].values()
             for r in e.get("rounds", []) if not _shared(r)]
    loads = [x for x in loads if x is not None]
    return {"repeats": timing.get("repeats"), "cap_seconds": timing.get("cap_seconds"),
            "max_other_cores": max(loads) if loads else None}

