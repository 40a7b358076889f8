"""Each method's own step sizes, chosen on validation documents, never on test documents.

The config's ``tuning:`` section gives a grid per method with a step size (method → parameter
→ values; its configurations are the product of the lists, in the config's order), all grids
of one size, and the share of the training documents carved as validation documents
(:func:`same.data.split.validation_split`, halved per count like test documents).  Every
configuration is one run (:func:`tuning_runs`, label ``tune_<method>_<param><value>...``,
first seed, the main budget) that trains on the remaining training documents and is scored
on the validation documents by the one evaluator (:class:`same.experiments.spec.RunSpec`'s
``validation_fraction``).  :func:`choose` picks, per method, the configuration with the
highest final validation ll by document completion (the primary metric; ties: the first in
grid order); :func:`write_tuning` writes ``tuning.{csv,md}`` and ``tuning.json``, which
the tuned runs of the main comparison read (:func:`apply_tuning`).

VB batch and CGS have no step size: in the tuned configuration they are the runs as
published, at the shared α, β and K.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import replace
from pathlib import Path

__all__ = ["TUNED_METHODS", "CONFIGURATIONS", "TUNED_SUFFIX", "TUNING_KIND", "grid_points",
           "tuning_label", "tuned_label", "choose", "tuning_rows",
           "write_tuning", "load_tuning", "apply_tuning", "TuningError"]

#: The methods with a step size of their own, whose settings are tuned.
TUNED_METHODS = ("same", "vb_online", "sklearn_online")
#: The configurations every comparison runs in: key → its name in tables and claims.md.
CONFIGURATIONS = {"published": "as published", "tuned": "tuned"}
#: A tuned run's label is its published twin's label with this suffix.
TUNED_SUFFIX = "_tuned"
#: ``tuning.json["artefact"]``.
TUNING_KIND = "same-lda tuning choice"
#: The metric the choice is made on (a trace column): document completion, the primary one.
CHOICE_METRIC = "ll"


class TuningError(ValueError):
    """A tuning.json that is unreadable, fails its checksum, or does not fit the run."""


def grid_points(grid: dict) -> list[dict]:
    """The configurations of one method's grid (parameter → values): the product of the
    lists, the last parameter varying fastest."""
    names = list(grid)
    return [dict(zip(names, values)) for values in itertools.product(*grid.values())]


def _value_text(value) -> str:
    return str(value).lower() if isinstance(value, bool) else f"{value:g}"


def tuning_label(method: str, point: dict) -> str:
    """Run label of one tuning configuration, e.g. ``tune_same_learning_power0.5_batch_size0.1``."""
    return "_".join([f"tune_{method}"] + [f"{k}{_value_text(v)}" for k, v in point.items()])


def tuned_label(label: str) -> str:
    """Label of the tuned twin of a published run."""
    return f"{label}{TUNED_SUFFIX}"


def tuning_rows(trace_paths) -> list[dict]:
    """One row per tuning run, read from its checked trace and meta.json
    (:func:`same.experiments.rundir.check_trace`): method, label, point, final validation ll under both
    metrics, the parent split's checksum and the scored documents' checksum.

    Raises
    ------
    TuningError
        A run scored on anything but validation documents (the choice never reads a test
        document), or runs of different splits.
    """
    import csv
    import io

    from .rundir import check_trace

    rows = []
    for p in trace_paths:
        meta, text = check_trace(p)
        split = meta["split"]
        if split.get("scored_on") != "validation documents":
            raise TuningError(f"{p}: scored on {split.get('scored_on', 'test documents')}; "
                              "tuning reads runs scored on validation documents only")
        last = list(csv.DictReader(io.StringIO(text)))[-1]
        s = meta["settings"]
        rows.append({"method": s["method"], "label": meta["label"], "params": s["params"],
                     "validation_ll": float(last["ll"]),
                     "validation_ll_bidmach": float(last["ll_bidmach"]),
                     "split_sha256": split["sha256"],
                     "validation_fraction": split["validation_fraction"],
                     "validation_docs_sha256": split["scored_docs_sha256"]})
    if len({(r["split_sha256"], r["validation_docs_sha256"]) for r in rows}) > 1:
        raise TuningError("tuning runs of different splits or validation documents: rerun them")
    return rows


def choose(rows: list[dict], metric: str = CHOICE_METRIC) -> dict[str, dict]:
    """Per method, the row with the highest final validation ll under ``metric`` ("ll":
    document completion; "ll_bidmach": the paper's metric), the first in ``rows``' order on
    a tie.  Rows come from :func:`tuning_rows`, so only validation documents are read."""
    best: dict[str, dict] = {}
    for r in rows:
        key = f"validation_{metric}"
        if r["method"] not in best or r[key] > best[r["method"]][key]:
            best[r["method"]] = r
    return best


def _digest(body: dict) -> str:
    from .rundir import json_sha256

    return json_sha256(body)


def write_tuning(rows: list[dict], points: dict[str, dict], csv_path, md_path, json_path,
                 note: str = "") -> dict:
    """Write ``tuning.csv`` (every configuration), ``tuning.md`` (per method, the chosen one
    marked) and ``tuning.json`` (the choice, sealed by a SHA-256 of its content), each by
    :mod:`same.io.outputs`'s rules: all three targets are checked before any is written.
    ``points``: label → the grid point of that run (its tuned settings only).  Returns the
    choice {method: point}.

    Raises
    ------
    same.io.outputs.OutputError
        A target exists and is not an earlier one of ours (tuning.csv's header row,
        tuning.md's title, tuning.json's ``artefact``).
    """
    import csv
    import io

    from same.io.outputs import check_target, json_kind, text_kind, write_text

    from .provenance import write_json

    chosen, by_paper = choose(rows), choose(rows, "ll_bidmach")
    table = [{"method": r["method"], "settings": _settings_text(points[r["label"]]),
              "validation_ll": r["validation_ll"],
              "validation_ll_bidmach": r["validation_ll_bidmach"],
              "chosen": chosen[r["method"]]["label"] == r["label"],
              "best_by_paper_metric": by_paper[r["method"]]["label"] == r["label"],
              "label": r["label"]} for r in rows]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(table[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(table)
    body = {"artefact": TUNING_KIND, "metric": CHOICE_METRIC,
            "split_sha256": rows[0]["split_sha256"],
            "validation_fraction": rows[0]["validation_fraction"],
            "validation_docs_sha256": rows[0]["validation_docs_sha256"],
            "chosen": {m: points[r["label"]] for m, r in chosen.items()}}
    texts = [(csv_path, buf.getvalue(), "tuning table"),
             (md_path, _markdown(table, rows[0], note), "tuning summary")]
    for path, kind in [(p, text_kind(what, t)) for p, t, what in texts] + [
            (json_path, json_kind(body))]:
        check_target(path, kind)  # every target before any is written
    for path, text, what in texts:
        write_text(path, text, text_kind(what, text))
    write_json(json_path, {**body, "sha256": _digest(body)})
    return body["chosen"]


def _settings_text(point: dict) -> str:
    return ", ".join(f"{k}={_value_text(v)}" for k, v in point.items())


def _markdown(table: list[dict], first: dict, note: str) -> str:
    lines = ["# Tuning: each method's step sizes, chosen on validation documents", "",
             f"Validation documents: {first['validation_fraction']:g} of the training documents "
             "(seeded, halved per count as test documents are); the tuning runs train on the "
             "other training documents and are scored on them by the one evaluator. No test "
             "document enters tuning. Chosen: the highest final validation ll by document "
             "completion (the primary metric); the paper's metric (BIDMach-style ll) is shown, "
             "and the row it would choose is marked. VB batch and CGS have no step size: they "
             "run at the shared α, β, K in both configurations.", ""]
    if note:
        lines += [note, ""]
    for method in dict.fromkeys(r["method"] for r in table):
        lines += [f"## {method}", "", "| settings | validation ll (document completion) | "
                  "validation ll (paper's metric) | choice |", "|---|---|---|---|"]
        for r in (r for r in table if r["method"] == method):
            mark = ["**chosen**"] if r["chosen"] else []
            if r["best_by_paper_metric"]:
                mark.append("best by the paper's metric")
            lines.append(f"| {r['settings']} | {r['validation_ll']:.4f} | "
                         f"{r['validation_ll_bidmach']:.4f} | {'; '.join(mark)} |")
        lines.append("")
    return "\n".join(lines)


def load_tuning(path: str | os.PathLike) -> dict:
    """Read a ``tuning.json`` written by :func:`write_tuning`, checked: its marker, fields and
    content checksum.

    Raises
    ------
    TuningError
        Missing, not JSON, not a tuning choice, fields missing or of the wrong kind, or a
        content that does not match its checksum: one line naming the file.
    """
    path = Path(path)
    remedy = "rerun the tuning rule that wrote it"
    from same.io.textinput import loads_json  # a key given twice is refused, not "last one wins"

    try:
        data = loads_json(path.read_text(encoding="utf-8"), str(path))
    except FileNotFoundError:
        raise TuningError(f"{path}: no such file; {remedy}") from None
    except (OSError, ValueError) as exc:
        raise TuningError(f"{path}: unreadable ({type(exc).__name__}: {exc}); {remedy}") from None
    if not isinstance(data, dict) or data.get("artefact") != TUNING_KIND:
        raise TuningError(f"{path}: not a tuning choice written by same-lda; {remedy}")
    body = {k: v for k, v in data.items() if k != "sha256"}
    if data.get("sha256") != _digest(body):
        raise TuningError(f"{path}: content does not match its checksum (changed or damaged "
                          f"since it was written); {remedy}")
    chosen = data.get("chosen")
    if not (isinstance(chosen, dict) and all(isinstance(v, dict) for v in chosen.values())
            and isinstance(data.get("split_sha256"), str)):
        raise TuningError(f"{path}: malformed (chosen settings or split checksum); {remedy}")
    return data


def apply_tuning(spec, path: str | os.PathLike, split_sha256: str):
    """``spec`` with its method's chosen settings (from ``tuning.json`` at ``path``) over its
    params, validated.

    Raises
    ------
    TuningError
        The file fails :func:`load_tuning`, was tuned on another split, or holds no choice
        for the spec's method.
    ValueError
        The tuned spec is invalid (named by :meth:`same.experiments.spec.RunSpec.validate`).
    """
    data = load_tuning(path)
    if data["split_sha256"] != split_sha256:
        raise TuningError(f"{path}: tuned on another split (sha256 {data['split_sha256'][:12]}…) "
                          f"than this run's ({split_sha256[:12]}…); rerun the tuning")
    if spec.method not in data["chosen"]:
        raise TuningError(f"{path}: holds no tuned settings for method {spec.method!r} (has: "
                          f"{', '.join(data['chosen']) or 'none'})")
    return replace(spec, params={**spec.params, **data["chosen"][spec.method]}).validate()
