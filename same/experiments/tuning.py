"""Each method's own step sizes, chosen on validation documents, never on test documents.

The config's ``tuning:`` section gives a grid per method with a step size (method → parameter
→ values; its configurations are the product of the lists, in the config's order), all grids
of one size, and the share of the training documents carved as validation documents
(:func:`same.data.split.validation_split`, halved per count like test documents).  Every
configuration is one run (:func:`same.experiments.plan.tuning_runs`, label
``tune_<method>_<param><value>...``, the main budget) at the first ``tuning.seeds`` of the
config's seeds (default :data:`TUNING_SEEDS`), which trains on the remaining training
documents and is scored on the validation documents by the one evaluator
(:class:`same.experiments.spec.RunSpec`'s ``validation_fraction``).  :func:`choose` picks,
per method, the configuration with the highest MEAN final validation ll over its seeds by
document completion (the primary metric; ties: the first in grid order), refusing a
configuration that lacks a seed the others ran; :func:`margin` says by how much it beat the
runner-up (difference of means, its 95% Welch–Satterthwaite t interval, Welch's p) and
which of its values lie at an edge of the grid.  :func:`write_tuning` writes
``tuning.{csv,md}`` and ``tuning.json``, which the tuned runs of the main comparison read
(:func:`apply_tuning`).  The statistics are scipy's (``scipy.stats.t``,
``scipy.stats.ttest_ind``), computed here rather than by :mod:`same.report.stats`, so that
editing the report's code leaves the choice, and the tuned fits that read it, as they are.

VB batch and CGS have no step size: in the tuned configuration they are the runs as
published, at the shared α, β and K.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import replace
from pathlib import Path

__all__ = ["TUNED_METHODS", "CONFIGURATIONS", "TUNED_SUFFIX", "TUNING_KIND", "TUNING_SEEDS",
           "grid_points", "tuning_label", "tuned_label", "choose", "point_summaries",
           "margin", "tuning_rows", "write_tuning", "load_tuning", "apply_tuning",
           "TuningError"]

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
#: How many of the config's seeds (the first ones) each grid point runs when the config's
#: ``tuning.seeds`` is absent (all of them where fewer are configured).
TUNING_SEEDS = 3
#: Coverage of every interval tuning.md prints (Student t over seeds).
CONFIDENCE = 0.95
#: Two-sided level of the Welch test of the choice's margin over the runner-up.
ALPHA = 0.05
#: tuning.csv's header row before the choice was made over seeds: such a file is ours too.
_OLD_CSV_HEADER = ("method,settings,validation_ll,validation_ll_bidmach,chosen,"
                   "best_by_paper_metric,label")


class TuningError(ValueError):
    """A tuning.json that is unreadable, fails its checksum, or does not fit the run."""


def grid_points(grid: dict) -> list[dict]:
    """The configurations of one method's grid (parameter → values): the product of the
    lists, the last parameter varying fastest."""
    names = list(grid)
    return [dict(zip(names, values)) for values in itertools.product(*grid.values())]


def _value_text(value) -> str:
    """A grid value in labels and tables: a number to 6 significant digits, a boolean in
    lowercase, a string (a sampler's name) as it is (a label that is no folder name, or two
    values printing alike, is refused where the runs are planned)."""
    if isinstance(value, str):
        return value
    return str(value).lower() if isinstance(value, bool) else f"{value:g}"


def tuning_label(method: str, point: dict) -> str:
    """Run label of one tuning configuration, e.g. ``tune_same_learning_power0.5_batch_size0.1``."""
    return "_".join([f"tune_{method}"] + [f"{k}{_value_text(v)}" for k, v in point.items()])


def tuned_label(label: str) -> str:
    """Label of the tuned twin of a published run."""
    return f"{label}{TUNED_SUFFIX}"


def tuning_rows(trace_paths) -> list[dict]:
    """One row per tuning run and seed, read from its checked trace and meta.json
    (:func:`same.experiments.rundir.check_trace`): method, label, seed, point, final
    validation ll under both metrics, the parent split's checksum and the scored documents'
    checksum.

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
        rows.append({"method": s["method"], "label": meta["label"], "seed": s["seed"],
                     "params": s["params"],
                     "validation_ll": float(last["ll"]),
                     "validation_ll_bidmach": float(last["ll_bidmach"]),
                     "split_sha256": split["sha256"],
                     "validation_fraction": split["validation_fraction"],
                     "validation_docs_sha256": split["scored_docs_sha256"]})
    if len({(r["split_sha256"], r["validation_docs_sha256"]) for r in rows}) > 1:
        raise TuningError("tuning runs of different splits or validation documents: rerun them")
    return rows


def point_summaries(rows: list[dict]) -> list[dict]:
    """One summary per grid point (run label), in the order of ``rows`` (grid order): method,
    label, params, seeds, n_seeds, the split's fields and, per metric (``validation_ll``,
    ``validation_ll_bidmach``), the mean over seeds, ``<metric>_95`` the half-width of the
    mean's 95% Student-t interval (``scipy.stats.t``; nan for one seed) and
    ``<metric>_values`` the per-seed values.  A row without ``seed`` counts as one seed.

    Raises
    ------
    TuningError
        A configuration that lacks a seed the others ran (or ran fewer seeds), or one seed
        read twice: its mean would not be comparable, and the missing run must be rerun.
    """
    by_label: dict[str, list[dict]] = {}
    for r in rows:
        by_label.setdefault(r["label"], []).append(r)
    seeds = {lab: [r.get("seed") for r in rs] for lab, rs in by_label.items()}
    every = sorted({s for ss in seeds.values() for s in ss if s is not None})
    most = max((len(ss) for ss in seeds.values()), default=0)
    for lab, ss in seeds.items():
        known = [s for s in ss if s is not None]
        twice = sorted({s for s in known if known.count(s) > 1})
        if twice:
            raise TuningError(f"tuning run {lab!r}: seed {twice[0]} read twice; give each "
                              "run's trace once")
        missing = [s for s in every if s not in known]
        if missing:
            raise TuningError(f"tuning run {lab!r} ran seeds {sorted(known)}, the other "
                              f"configurations seeds {every}; rerun it at the missing seed(s) "
                              f"{missing}: every configuration's mean must be over the same "
                              "seeds")
        if len(ss) < most:
            raise TuningError(f"tuning run {lab!r} ran {len(ss)} seed(s), the other "
                              f"configurations {most}; rerun its missing seeds: every "
                              "configuration's mean must be over the same seeds")
    out = []
    for lab, rs in by_label.items():
        summary = {"method": rs[0]["method"], "label": lab, "params": rs[0].get("params"),
                   "seeds": seeds[lab], "n_seeds": len(rs)}
        summary.update({k: rs[0][k] for k in ("split_sha256", "validation_fraction",
                                               "validation_docs_sha256") if k in rs[0]})
        for metric in ("ll", "ll_bidmach"):
            key = f"validation_{metric}"
            values = [float(r[key]) for r in rs]
            summary[key], summary[f"{key}_95"] = _mean_half_width(values)
            summary[f"{key}_values"] = values
        out.append(summary)
    return out


def _mean_half_width(values) -> tuple[float, float]:
    """Mean of per-seed ``values`` and the half-width of its 95% Student-t interval
    (``scipy.stats.t.ppf`` × ``scipy.stats.sem``; nan for fewer than two seeds)."""
    import numpy as np
    from scipy import stats

    a = np.asarray(values, dtype=float)
    if len(a) < 2:
        return float(a.mean()), float("nan")
    return float(a.mean()), float(stats.t.ppf(0.5 + CONFIDENCE / 2, len(a) - 1) * stats.sem(a))


def choose(rows: list[dict], metric: str = CHOICE_METRIC) -> dict[str, dict]:
    """Per method, the grid point (:func:`point_summaries`: its label, params, seeds, means)
    with the highest MEAN final validation ll over its seeds under ``metric`` ("ll":
    document completion; "ll_bidmach": the paper's metric), the first in ``rows``' order
    (grid order) on a tie.  Rows come from :func:`tuning_rows` (one per run and seed), so
    only validation documents are read.

    Raises
    ------
    TuningError
        A configuration lacks a seed the others ran (:func:`point_summaries`).
    """
    best: dict[str, dict] = {}
    key = f"validation_{metric}"
    for s in point_summaries(rows):
        if s["method"] not in best or s[key] > best[s["method"]][key]:
            best[s["method"]] = s
    return best


def margin(summaries: list[dict], chosen: dict, points: dict[str, dict],
           metric: str = CHOICE_METRIC) -> dict | None:
    """The chosen point's margin over the runner-up of its method (the best other point by
    mean, the first in grid order on a tie): ``runner_up`` (its grid point), ``difference``
    of means (chosen − runner-up, nats), ``ci_low``/``ci_high`` its 95% t interval with the
    Welch–Satterthwaite degrees of freedom, ``p`` Welch's two-sided p
    (``scipy.stats.ttest_ind(equal_var=False)``), ``inside_noise`` (p ≥ :data:`ALPHA`: the
    runner-up is not significantly worse), and ``edge``: the parameters whose chosen value is
    the smallest or largest of the grid's values.  Interval, p and ``inside_noise`` are None
    with one seed per point.  None for a method with a single grid point.

    ``summaries``: :func:`point_summaries`; ``chosen``: one of them (:func:`choose`);
    ``points``: label → grid point.
    """
    key = f"validation_{metric}"
    own = [s for s in summaries if s["method"] == chosen["method"]]
    others = [s for s in own if s["label"] != chosen["label"]]
    if not others:
        return None
    runner = others[0]
    for s in others[1:]:
        if s[key] > runner[key]:
            runner = s
    diff, low, high, p = _welch(chosen[f"{key}_values"], runner[f"{key}_values"])
    grid: dict[str, list] = {}
    for s in own:
        for param, value in points[s["label"]].items():
            grid.setdefault(param, []).append(value)

    def finite(x):
        return None if x != x else x  # nan (undefined) → None: JSON has no nan

    return {"runner_up": dict(points[runner["label"]]), "difference": diff,
            "ci_low": finite(low), "ci_high": finite(high), "p": finite(p),
            "inside_noise": None if p != p else bool(p >= ALPHA),
            "edge": [param for param, _, _ in _edges(points[chosen["label"]], grid)]}


def _edges(point: dict, grid: dict[str, list]) -> list[tuple[str, object, str]]:
    """(parameter, value, "largest" or "smallest") for each value of ``point`` that is an end
    of its grid list (``grid``: parameter → the values tried; a list of one value has no
    edge)."""
    out = []
    for param, value in point.items():
        values = list(dict.fromkeys(grid.get(param, [])))
        if len(values) < 2 or any(isinstance(v, str) for v in values):  # names: no order
            continue
        try:
            lo, hi = min(values), max(values)
        except TypeError:  # values without an order: no edge
            continue
        if value == hi:
            out.append((param, value, "largest"))
        elif value == lo:
            out.append((param, value, "smallest"))
    return out


def _welch(a, b) -> tuple[float, float, float, float]:
    """(mean(a) − mean(b), the 95% t interval of that difference with the
    Welch–Satterthwaite degrees of freedom, Welch's two-sided p), by
    ``scipy.stats.ttest_ind(equal_var=False)``; interval and p nan where either side has one
    seed; constant samples: the difference itself, p = 1 if equal else 0."""
    import warnings

    import numpy as np
    from scipy import stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    diff = float(a.mean() - b.mean())
    if len(a) < 2 or len(b) < 2:
        return diff, float("nan"), float("nan"), float("nan")
    if a.std() == 0 and b.std() == 0:
        return diff, diff, diff, 1.0 if diff == 0 else 0.0
    with warnings.catch_warnings():  # nearly equal seeds: scipy warns, its p stays right
        warnings.simplefilter("ignore", RuntimeWarning)
        res = stats.ttest_ind(a, b, equal_var=False)
    if hasattr(res, "confidence_interval"):  # scipy >= 1.11: Welch's df for equal_var=False
        ci = res.confidence_interval(CONFIDENCE)
        low, high = float(ci.low), float(ci.high)
    else:  # scipy 1.10: the Welch–Satterthwaite degrees of freedom, scipy's t quantile
        va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
        df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
        half = float(stats.t.ppf(0.5 + CONFIDENCE / 2, df) * np.sqrt(va + vb))
        low, high = diff - half, diff + half
    return diff, low, high, float(res.pvalue)


def _digest(body: dict) -> str:
    from .rundir import json_sha256

    return json_sha256(body)


def write_tuning(rows: list[dict], points: dict[str, dict], csv_path, md_path, json_path,
                 note: str = "") -> dict:
    """Write ``tuning.csv`` (one row per configuration: its seeds, the mean final validation
    ll under both metrics and their 95% t half-widths, ``*_95``), ``tuning.md`` (per method,
    mean ± half-width per configuration, the chosen one marked, and the choice's margin over
    the runner-up: :func:`margin`) and ``tuning.json`` (the choice, its ``margin`` per method
    and the ``seeds`` it rests on, sealed by a SHA-256 of its content), each by
    :mod:`same.io.outputs`'s rules: all three targets are checked before any is written.
    ``rows``: :func:`tuning_rows` (one per run and seed); ``points``: label → the grid point
    of that run (its tuned settings only).  Returns the choice {method: point}.

    Raises
    ------
    TuningError
        A configuration lacks a seed the others ran (:func:`point_summaries`).
    same.io.outputs.OutputError
        A target exists and is not an earlier one of ours (tuning.csv's header row, this
        one's or the one before the choice was made over seeds; tuning.md's title;
        tuning.json's ``artefact``).
    """
    import csv
    import io

    from same.io.outputs import Kind, check_target, json_kind, text_kind, write_text

    from .provenance import write_json

    summaries = point_summaries(rows)
    chosen, by_paper = choose(rows), choose(rows, "ll_bidmach")
    table = [{"method": s["method"], "settings": _settings_text(points[s["label"]]),
              "seeds": " ".join(str(x) for x in s["seeds"] if x is not None),
              "n_seeds": s["n_seeds"],
              "validation_ll": s["validation_ll"], "validation_ll_95": s["validation_ll_95"],
              "validation_ll_bidmach": s["validation_ll_bidmach"],
              "validation_ll_bidmach_95": s["validation_ll_bidmach_95"],
              "chosen": chosen[s["method"]]["label"] == s["label"],
              "best_by_paper_metric": by_paper[s["method"]]["label"] == s["label"],
              "label": s["label"]} for s in summaries]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(table[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(table)
    margins = {m: margin(summaries, s, points) for m, s in chosen.items()}
    seeds = sorted({x for s in summaries for x in s["seeds"] if x is not None})
    body = {"artefact": TUNING_KIND, "metric": CHOICE_METRIC,
            "split_sha256": rows[0]["split_sha256"],
            "validation_fraction": rows[0]["validation_fraction"],
            "validation_docs_sha256": rows[0]["validation_docs_sha256"],
            "seeds": seeds, "n_seeds": summaries[0]["n_seeds"],
            "chosen": {m: points[s["label"]] for m, s in chosen.items()},
            "margin": margins}
    grids: dict[str, dict[str, list]] = {}
    for s in summaries:
        for param, value in points[s["label"]].items():
            grids.setdefault(s["method"], {}).setdefault(param, []).append(value)
    edges = {m: _edges(points[s["label"]], grids[m]) for m, s in chosen.items()}
    md = _markdown(table, rows[0], body, edges, note)
    old_csv = text_kind("tuning table", _OLD_CSV_HEADER + "\n")

    def kind(what, text):
        new = text_kind(what, text)
        if what != "tuning table":
            return new
        return Kind(what, lambda path: new.ours(path) or old_csv.ours(path))

    texts = [(csv_path, buf.getvalue(), "tuning table"), (md_path, md, "tuning summary")]
    for path, k in [(p, kind(what, t)) for p, t, what in texts] + [
            (json_path, json_kind(body))]:
        check_target(path, k)  # every target before any is written
    for path, text, what in texts:
        write_text(path, text, kind(what, text))
    write_json(json_path, {**body, "sha256": _digest(body)})
    return body["chosen"]


def _settings_text(point: dict) -> str:
    return ", ".join(f"{k}={_value_text(v)}" for k, v in point.items())


def _mean_text(mean: float, half: float, n: int) -> str:
    """"-7.4000 ± 0.0012 (3 seeds)"; "-7.4000 (1 seed)" without an interval."""
    if n < 2 or half != half:
        return f"{mean:.4f} ({n} seed{'s' if n != 1 else ''})"
    return f"{mean:.4f} ± {half:.4f} ({n} seeds)"


def _margin_lines(m: dict | None, edges: list) -> list[str]:
    """tuning.md's lines under a method's table: the margin over the runner-up, whether the
    choice is inside the noise, and each chosen value at an edge of its grid list."""
    if m is None:
        return []
    runner = _settings_text(m["runner_up"])
    head = f"- margin over the runner-up ({runner}): {m['difference']:+.4f} nats"
    if m["p"] is None:
        lines = [head + "; one seed per configuration: no interval and no test"]
    else:
        lines = [head + f", {CONFIDENCE:.0%} t interval of the difference "
                 f"[{m['ci_low']:+.4f}, {m['ci_high']:+.4f}] (Welch–Satterthwaite), "
                 f"Welch p = {m['p']:.3g}"]
        if m["inside_noise"]:
            lines.append(f"- the choice is inside the noise: {runner} is not significantly "
                         f"worse (Welch p = {m['p']:.3g})")
    lines += [f"- chosen at the grid's edge: {param} = {_value_text(value)}, the {end} value "
              "tried" for param, value, end in edges]
    return lines


def _markdown(table: list[dict], first: dict, body: dict, edges: dict, note: str) -> str:
    seeds = body["seeds"]
    ran = (f"seeds {seeds}" if len(seeds) > 1 else f"seed {seeds[0]}") if seeds else (
        f"{body['n_seeds']} seed(s)")
    lines = ["# Tuning: each method's step sizes, chosen on validation documents", "",
             f"Validation documents: {first['validation_fraction']:g} of the training documents "
             "(seeded, halved per count as test documents are); the tuning runs train on the "
             "other training documents and are scored on them by the one evaluator. No test "
             f"document enters tuning. Every configuration ran {ran} (`tuning.seeds`); each "
             f"cell is the mean final validation ll over them ± the half-width of its "
             f"{CONFIDENCE:.0%} Student-t interval. Chosen: the highest mean final validation "
             "ll by document completion (the primary metric; ties: the first in grid order); "
             "the paper's metric (BIDMach-style ll) is shown, and the row it would choose is "
             "marked. Under each table: the choice's margin over the runner-up (the difference "
             f"of means with its {CONFIDENCE:.0%} t interval, Welch–Satterthwaite, and Welch's "
             f"p; not significant at {ALPHA:g}: inside the noise) and any chosen value at the "
             "edge of its grid. VB batch and CGS have no step size: they run at the shared α, "
             "β, K in both configurations.", ""]
    if note:
        lines += [note, ""]
    for method in dict.fromkeys(r["method"] for r in table):
        lines += [f"## {method}", "", "| settings | validation ll (document completion) | "
                  "validation ll (paper's metric) | choice |", "|---|---|---|---|"]
        for r in (r for r in table if r["method"] == method):
            mark = ["**chosen**"] if r["chosen"] else []
            if r["best_by_paper_metric"]:
                mark.append("best by the paper's metric")
            ll = _mean_text(r["validation_ll"], r["validation_ll_95"], r["n_seeds"])
            paper = _mean_text(r["validation_ll_bidmach"], r["validation_ll_bidmach_95"],
                               r["n_seeds"])
            lines.append(f"| {r['settings']} | {ll} | {paper} | {'; '.join(mark)} |")
        margin_lines = _margin_lines(body["margin"].get(method), edges.get(method, []))
        lines += [""] + margin_lines if margin_lines else []
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
