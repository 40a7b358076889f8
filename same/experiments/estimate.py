"""Expected wall time of a workflow profile on this machine, before any fit (``snakemake estimate``).

The workflow's rule ``estimate`` (``workflow/rules/estimate.smk``) hands :func:`estimate` the
profile's plan: every fit job group of the table of runs (its run spec, how many seeds, whether
it holds every core), the timing rule's entries, C9's scaling settings and how many jobs each
report rule runs.  A short probe on the profile's own split(s) measures, on this machine, in
seconds:

- **a pass** (CGS: an iteration) of every cost class (dataset, method, K and the parameters
  that change a pass's work; not the step sizes, :data:`STEP_PARAMS`), training only, in this
  process: the mean of the first passes, up to :data:`PROBE_SECONDS` of training;
- **scoring one checkpoint** with the shared evaluator, per (dataset, K, scored documents);
- **start-up of a fit job**, per library (SAME, gensim, scikit-learn, tomotopy): real
  ``python -m same fit`` subprocesses at budget 1 (interpreter, imports, numba's cache, the
  split, one scored checkpoint, the run folder written), as many started together as the
  workflow runs jobs at a time, less the pass and the scoring each did;
- **a report job**: subprocesses drawing fig1a/b of that run's trace (:data:`REPORT_JOB`),
  as many together;
- **C9's benchmark** (same.experiments.size_cost) at a small size: seconds per token of a
  pass and of drawing its corpus.

A fit job then costs start-up + budget × a pass × its share of the training tokens (training
fraction, validation documents carved off) + checkpoints scored × scoring one; the timing rule
its entries' training up to its cap, every round; C9's benchmark its passes and draws of
Σ factors × its base's tokens.  Wall time (:func:`wall_seconds`): jobs that hold every core one
after another; the others in ``cores // threads`` slots.  Numba compiles in the probe where its
cache lacks a kernel, once, as the run's first jobs would have: that is not counted.  The split
(the rule's input) is done before the probe and not counted either.

    python -m same.experiments.estimate --plan "$(cat plan.json)" --out results/estimate.json \
        --table results/estimate.txt
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from same.io.cli import ArgumentParser

from .estimate_probe import (  # noqa: F401  (Costs, cost_key, score_key: this module's API too)
    PROBE_PASSES,
    PROBE_SECONDS,
    PROBE_UNITS,
    STEP_PARAMS,
    Costs,
    _slots,
    cost_key,
    probe,
    scaling_shape,
    score_key,
)

__all__ = ["ARTEFACT", "GROUPS", "Costs", "Job", "plan_jobs", "wall_seconds", "summary",
           "table_text", "estimate", "main"]

#: ``estimate.json["artefact"]`` (what an earlier file at ``--out`` must say to be replaced).
ARTEFACT = "same-lda cost estimate"
#: The printed table's first line (an earlier ``--table`` is ours when it starts with it).
TITLE = "expected minutes of this profile on this machine, before any fit (snakemake estimate)"
#: Row of the table each method's fits fall in, in the table's order; then the other jobs.
GROUPS = {"same": "SAME", "vb_online": "VB online (gensim)", "vb_batch": "VB batch (gensim)",
          "sklearn_online": "VB online (scikit-learn)",
          "sklearn_batch": "VB batch (scikit-learn)", "cgs": "CGS (tomotopy)",
          "timing": "timing (alone)", "scaling": "C9 scaling (alone)", "reports": "reports"}


@dataclass
class Job:
    """One job (or ``count`` alike) of the plan: its table row, seconds each, whether it holds
    every core (then nothing runs beside it)."""

    group: str
    label: str
    seconds: float
    count: int = 1
    exclusive: bool = False


def _token_share(spec: dict) -> float:
    """Share of the split's training tokens a run trains on (training fraction, less the
    validation documents)."""
    return float(spec.get("train_fraction") or 1.0) * (1.0 - (spec.get("validation_fraction")
                                                             or 0.0))


def fit_seconds(fit: dict, costs: Costs) -> float:
    """Seconds of one fit job of plan entry ``fit`` (dataset, spec): start-up + budget × a
    pass × its token share + checkpoints scored × scoring one."""
    from .methods import eval_points

    spec = fit["spec"]
    n_points = 1 if spec.get("checkpoints") == "final" else len(eval_points(spec["budget"]))
    return (costs.start[spec["method"]]
            + spec["budget"] * costs.unit[cost_key(fit["dataset"], spec)] * _token_share(spec)
            + n_points * costs.score[score_key(fit["dataset"], spec)])


def timing_seconds(dataset: str, timing: dict, costs: Costs) -> float:
    """Seconds of the timing rule on ``dataset``: start-up (the slowest method's), then every
    round each entry's training up to its whole budget or ``cap_seconds`` (at least 2 passes;
    same.experiments.timing)."""
    total = max(costs.start[spec["method"]] for spec in timing["entries"].values())
    for spec in timing["entries"].values():
        unit = costs.unit[cost_key(dataset, spec)]
        full = spec["budget"] * unit
        total += timing["repeats"] * min(full, max(timing["cap_seconds"], 2 * unit))
    return total


def scaling_passes() -> int:
    """Passes of C9's benchmark as the rule runs it: same.experiments.size_cost's default."""
    import inspect

    from .size_cost import measure

    return inspect.signature(measure).parameters["passes"].default


def scaling_seconds(factors, costs: Costs) -> float:
    """Seconds of C9's benchmark: SAME's start-up, then for Σ ``factors`` × the base's tokens
    (``costs.scaling_tokens``) its corpora drawn and its passes."""
    tokens = sum(factors) * costs.scaling_tokens
    return costs.start["same"] + tokens * (costs.draw_per_token
                                           + scaling_passes() * costs.scaling_per_token)


def plan_jobs(plan: dict, costs: Costs) -> list[Job]:
    """Every job of ``plan`` (the rule's plan: fits, timing, scaling, reports) with its
    seconds from ``costs``."""
    jobs = [Job(fit["spec"]["method"], fit["label"], fit_seconds(fit, costs), fit["jobs"],
                fit["exclusive"]) for fit in plan["fits"]]
    for dataset, timing in (plan.get("timing") or {}).items():
        jobs.append(Job("timing", f"timing {dataset}", timing_seconds(dataset, timing, costs),
                        exclusive=True))
    if plan.get("scaling"):
        jobs.append(Job("scaling", "scaling", scaling_seconds(plan["scaling"]["factors"], costs),
                        exclusive=True))
    for rule, count in sorted((plan.get("reports") or {}).items()):
        jobs.append(Job("reports", rule, costs.report, count))
    return jobs


def wall_seconds(jobs: list[Job], slots: int) -> float:
    """Wall seconds of ``jobs`` on ``slots`` parallel slots (``--cores`` // threads per job):
    the jobs holding every core one after another, the others spread over the slots but never
    shorter than the longest of them."""
    shared = [j for j in jobs if not j.exclusive]
    spread = sum(j.seconds * j.count for j in shared) / max(1, slots)
    longest = max((j.seconds for j in shared), default=0.0)
    return max(spread, longest) + sum(j.seconds * j.count for j in jobs if j.exclusive)


def summary(jobs: list[Job], slots: int) -> dict:
    """The table: per group (:data:`GROUPS`, in order) its runs (labels), jobs, minutes of work
    and minutes of wall time it adds (work / slots; a job holding every core: its work); and
    the total wall minutes (:func:`wall_seconds`)."""
    rows = []
    for group, name in GROUPS.items():
        mine = [j for j in jobs if j.group == group]
        if not mine:
            continue
        work = sum(j.seconds * j.count for j in mine)
        wall = sum(j.seconds * j.count / (1 if j.exclusive else max(1, slots)) for j in mine)
        rows.append({"group": name, "runs": len({j.label for j in mine}),
                     "jobs": sum(j.count for j in mine), "work_minutes": work / 60,
                     "wall_minutes": wall / 60})
    return {"rows": rows, "slots": slots, "total_minutes": wall_seconds(jobs, slots) / 60}


def table_text(result: dict) -> str:
    """The printed estimate: a header line, one line per group and the total; the seeds
    warning (same.experiments.config.seeds_note) when the profile has fewer than the
    verdicts need."""
    lines = [TITLE,
             f"({result['cores']} cores, {result['slots']} jobs at a time; probed in "
             f"{result['probe_seconds']:.0f} s)",
             f"{'':26}{'runs':>6}{'jobs':>6}{'work min':>10}{'wall min':>10}"]
    for r in result["rows"]:
        lines.append(f"{r['group']:26}{r['runs']:6d}{r['jobs']:6d}{r['work_minutes']:10.1f}"
                     f"{r['wall_minutes']:10.1f}")
    lines.append(f"{'total':26}{sum(r['runs'] for r in result['rows']):6d}"
                 f"{sum(r['jobs'] for r in result['rows']):6d}"
                 f"{sum(r['work_minutes'] for r in result['rows']):10.1f}"
                 f"{result['total_minutes']:10.1f}")
    if result.get("seeds_note"):
        lines.append(f"warning: {result['seeds_note']}")
    return "\n".join(lines) + "\n"


def estimate(plan: dict, costs: Costs | None = None) -> dict:
    """The estimate of ``plan`` (probed here unless ``costs`` is given): :func:`summary`'s
    table, the cores, the seeds note, the probe's record, the costs measured and every job's
    seconds."""
    from .config import seeds_note

    record = {"probe_seconds": 0.0}
    if costs is None:
        costs, record = probe(plan)
    jobs = plan_jobs(plan, costs)
    slots = _slots(plan)
    return {"artefact": ARTEFACT, "cores": plan["cores"], **summary(jobs, slots), **record,
            "seeds_note": seeds_note({"seeds": plan["seeds"]}),
            "costs": asdict(costs), "jobs": [asdict(j) for j in jobs]}


#: The keys every plan gives (the rule's estimate_plan).
PLAN_KEYS = ("cores", "threads", "seeds", "splits", "fits")
#: Every field's type and range (:mod:`same.io.schema`), checked before anything is probed.
PLAN_SCHEMA = Path(__file__).with_name("plan.schema.json")
#: The keys of each planned fit.
FIT_KEYS = ("dataset", "label", "spec", "jobs", "exclusive")


def _checked_spec(spec: dict, key: str) -> dict:
    """A plan's spec read as ``same-lda fit`` reads one, with its defaults filled in."""
    from .spec import RunSpec

    try:
        return asdict(RunSpec.from_dict(spec))
    except ValueError as exc:
        raise ValueError(f"--plan: {key}: {exc}") from None


def read_plan(text: str) -> dict:
    """The plan given as JSON text, its keys checked.

    Raises
    ------
    ValueError
        ``--plan: ...``: not JSON, or a field of another type or range than
        :data:`PLAN_SCHEMA` says (``--plan: fits[0].dataset: ['toy'] is not of type 'string'``),
        a dataset without a split, or a spec :meth:`RunSpec.from_dict` refuses; each spec is
        returned validated, with its defaults (``params`` included).
    """
    from same.io.textinput import loads_json

    try:
        plan = loads_json(text, "--plan")
    except json.JSONDecodeError as exc:
        raise ValueError(f"--plan: not JSON ({exc})") from None
    from same.io.schema import check_schema

    check_schema(plan, PLAN_SCHEMA, "--plan", sep=": ")
    for i, fit in enumerate(plan["fits"]):
        if fit["dataset"] not in plan["splits"]:
            raise ValueError(f"--plan: fits[{i}]: dataset {fit['dataset']!r} has no split")
        fit["spec"] = _checked_spec(fit["spec"], f"fits[{i}].spec")
    for dataset, timing in (plan.get("timing") or {}).items():
        if dataset not in plan["splits"]:
            raise ValueError(f"--plan: timing.{dataset}: dataset {dataset!r} has no split")
        for name, spec in timing["entries"].items():
            timing["entries"][name] = _checked_spec(spec, f"timing.{dataset}.entries.{name}")
    return plan


def main(argv=None) -> int:
    """``python -m same.experiments.estimate``: probe, print the table on stderr, write
    ``--out`` (JSON) and ``--table`` (the printed text); a bad plan or output ends in one line,
    exit status 2 (``--out`` and ``--table`` checked before the probe)."""
    from same.io.outputs import check_target, json_kind, text_kind, write_text

    from .provenance import provenance, write_json

    ap = ArgumentParser(prog="python -m same.experiments.estimate",
                        description=__doc__.splitlines()[0])
    ap.add_argument("--plan", required=True, help="the rule's plan (JSON)")
    ap.add_argument("--out", required=True, help="estimate.json")
    ap.add_argument("--table", required=True, help="the printed table (text)")
    args = ap.parse_args(argv)
    try:
        check_target(args.out, json_kind({"artefact": ARTEFACT}), option="--out")
        check_target(args.table, text_kind("estimate", TITLE), option="--table")
        plan = read_plan(args.plan)
        result = estimate(plan)
        text = table_text(result)
        write_json(args.out, provenance(result), option="--out")
        write_text(args.table, text, text_kind("estimate", text), option="--table")
    except (ValueError, OSError) as exc:
        print(f"{ap.prog}: error: {exc}".splitlines()[0], file=sys.stderr)
        return 2
    sys.stderr.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
