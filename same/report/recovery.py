"""The topic-recovery table of a synthetic dataset (its true topics are known), and its one
reader, which the claims use (:func:`load_recovery`: checked before anything reads a number)."""

from __future__ import annotations

import math
import os
from pathlib import Path

from .paper import METHOD_NAMES
from .tables import write_table
from .traces import final_ll, first_seed

__all__ = ["RECOVERY_COLUMNS", "RecoveryError", "load_recovery", "recovery_lines", "topic_recovery_rows",
           "topic_recovery_table"]

#: The columns of topic_recovery.csv, in order (:func:`topic_recovery_rows`' keys)
RECOVERY_COLUMNS = ("method", "final ll", "mean matched TV", "median matched TV",
                    "max matched TV", "true topics' mutual TV")
_TV_COLUMNS = RECOVERY_COLUMNS[2:]


class RecoveryError(ValueError):
    """A topic_recovery.csv the claims cannot read: one line naming the file."""


def topic_recovery_rows(df, models: dict, true_topic_word, split=None,
                        doc_topic_prior: float | None = None) -> list[dict]:
    """Per method: its final held-out ll (first seed) and how well its topics match the true
    ones of a synthetic corpus (:func:`same.model.topic_recovery.topic_recovery`: matched total-variation
    distance, 0 = perfect, and the mean TV between distinct true topics for scale).  With
    ``split`` and ``doc_topic_prior``, a first row scores the true topics themselves with the
    same evaluator: the held-out ll a method would reach by recovering them exactly.

    models : {label: path of the run's model.npz}; true_topic_word : (K, W) array
    """
    from same.experiments.runner import load_model
    from same.model.evaluate import evaluate
    from same.model.topic_recovery import topic_recovery

    rows = []
    if split is not None:
        rec = topic_recovery(true_topic_word, true_topic_word)
        rows.append({"method": "true topics (oracle)",
                     "final ll": evaluate(true_topic_word, doc_topic_prior, split).ll,
                     "mean matched TV": 0.0, "median matched TV": 0.0, "max matched TV": 0.0,
                     "true topics' mutual TV": rec.true_pairwise_tv})
    for label, path in models.items():
        rec = topic_recovery(load_model(path)["topic_word"], true_topic_word)
        rows.append({"method": METHOD_NAMES.get(label, label),
                     "final ll": final_ll(first_seed(df[df["label"] == label])),
                     "mean matched TV": rec.mean_tv, "median matched TV": rec.median_tv,
                     "max matched TV": rec.max_tv, "true topics' mutual TV": rec.true_pairwise_tv})
    return rows


def topic_recovery_table(df, models: dict, truth_path, csv_path, md_path, setting: str,
                         split_path=None, doc_topic_prior: float | None = None) -> list[dict]:
    """The topic-recovery table of a synthetic dataset (CSV and Markdown)."""
    from same.data.planted import load_synthetic
    from same.data.split import load_split

    split = load_split(split_path) if split_path is not None else None
    rows = topic_recovery_rows(df, models, load_synthetic(truth_path)[1], split, doc_topic_prior)
    write_table(rows, csv_path, md_path, "Topic recovery on SYNTHETIC data (known true topics)",
                [setting,
                 "Each method's learned topics (first seed, end of its budget) matched one to one "
                 "to the true topics by least total total-variation distance (Hungarian); "
                 "0 = recovered exactly, 1 = disjoint. The last column is the mean TV between "
                 "two distinct true topics: a matched TV near it means the topic was not "
                 "recovered.",
                 "Held-out ll as in every other table (document completion, nats/token); the "
                 "oracle row scores the true topics with the same evaluator and α."],
                inputs=[truth_path, split_path, *models.values()])
    return rows


def load_recovery(path: str | os.PathLike) -> list[dict]:
    """Read a topic_recovery.csv written by :func:`topic_recovery_table`: its rows as dicts
    (:data:`RECOVERY_COLUMNS`), checked before any number is used: a UTF-8 CSV with exactly
    those columns (in every row), at least one row, a method name in each, a finite held-out ll (nats/token)
    and total-variation distances in [0, 1].

    Raises
    ------
    RecoveryError
        One line naming the file and what is wrong (rerun the topic_recovery rule).
    """
    import csv
    import io

    path = Path(path)
    fix = "rerun the topic_recovery rule"
    try:
        lines = [r for r in csv.reader(io.StringIO(path.read_text(encoding="utf-8"))) if r]
    except (OSError, ValueError, csv.Error) as exc:
        raise RecoveryError(f"{path}: unreadable topic-recovery table "
                            f"({type(exc).__name__}: {' '.join(str(exc).split())}); {fix}") \
            from None
    if not lines:
        raise RecoveryError(f"{path}: empty, not a topic-recovery table; {fix}")
    if tuple(lines[0]) != RECOVERY_COLUMNS:
        raise RecoveryError(f"{path}: columns {lines[0]}, not a topic-recovery table's "
                            f"{list(RECOVERY_COLUMNS)}; {fix}")
    if len(lines) == 1:
        raise RecoveryError(f"{path}: no rows; {fix}")
    rows = []
    for i, fields in enumerate(lines[1:]):
        if len(fields) != len(RECOVERY_COLUMNS):
            raise RecoveryError(f"{path}: row {i + 1}: {len(fields)} fields, not "
                                f"{len(RECOVERY_COLUMNS)}; {fix}")
        rec = dict(zip(RECOVERY_COLUMNS, fields))
        if not rec["method"].strip():
            raise RecoveryError(f"{path}: row {i + 1}: no method name; {fix}")
        row = {"method": rec["method"]}
        for col in RECOVERY_COLUMNS[1:]:
            try:
                value = float(rec[col])
            except ValueError:
                value = math.nan
            ok = math.isfinite(value) and (col not in _TV_COLUMNS or 0.0 <= value <= 1.0)
            if not ok:
                want = "a distance in [0, 1]" if col in _TV_COLUMNS else "a finite number"
                raise RecoveryError(f"{path}: row {i + 1} ({rec['method']!r}): {col!r} is "
                                    f"{rec[col]!r}, not {want}; {fix}")
            row[col] = value
        rows.append(row)
    return rows


def recovery_lines(rows: list[dict]) -> list[str]:
    """claims.md's topic-recovery section of a synthetic dataset (rows: :func:`load_recovery`)."""
    out = ["### Topic recovery (SYNTHETIC data: the true topics are known)", ""]
    for r in rows:
        if r["method"].startswith("true topics"):
            out.append(f"- the true topics themselves score {r['final ll']:.4f} with the same "
                       "evaluator (the held-out ll of an exact recovery)")
            continue
        out.append(f"- {r['method']}: mean matched TV {r['mean matched TV']:.3f} (median "
                   f"{r['median matched TV']:.3f}), final ll {r['final ll']:.4f}")
    if rows:
        mutual = rows[0]["true topics' mutual TV"]
        out.append(f"- for scale: two distinct true topics are {mutual:.3f} apart in TV; "
                   "0 = recovered exactly (topic_recovery.md)")
    return out + [""]
