"""The probe of :mod:`same.experiments.estimate`: what a pass, scoring a checkpoint, a fit
job's start-up, a report job and C9's benchmark cost on this machine, measured on the
profile's own split(s) (that module's docstring says how each is used).
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

__all__ = ["Costs", "cost_key", "score_key", "scaling_shape", "probe", "probe_unit",
           "probe_score", "probe_start", "probe_report", "probe_scaling"]


#: Training seconds after which a pass probe stops (once it has 2 passes or iterations).
PROBE_SECONDS = 0.5
#: The most passes (CGS: iterations) a probe trains.
PROBE_UNITS = {"cgs": 100}
PROBE_PASSES = 3
#: Parameters that move where a method goes, not the work of a pass: runs differing only in
#: them share one probe.
STEP_PARAMS = frozenset({"learning_power", "learning_rate", "learning_decay", "learning_offset",
                         "decay", "offset", "prior_scale", "keep_doc_topic"})


@dataclass
class Costs:
    """What the probe measured on this machine, in seconds.

    start : method (and its library, :func:`_family`) → a fit job's start-up (interpreter,
        imports, numba's cache, the split read, the run folder written)
    unit : cost class key (:func:`cost_key`) → one pass (CGS: one iteration) on every
        training document
    score : (dataset, K, validation fraction or None) → scoring one checkpoint
    report : one report job (:data:`REPORT_JOB`: imports, a trace read, a figure drawn)
    tokens : dataset → training tokens of its split
    draw_per_token : C9's synthetic corpus, seconds per token drawn
    scaling_per_token : C9's SAME, seconds per token of a pass
    scaling_tokens : tokens of the corpus C9's sizes copy (:func:`scaling_shape`), factor 1
    """

    start: dict = field(default_factory=dict)
    unit: dict = field(default_factory=dict)
    score: dict = field(default_factory=dict)
    report: float = 0.0
    tokens: dict = field(default_factory=dict)
    draw_per_token: float = 0.0
    scaling_per_token: float = 0.0
    scaling_tokens: int = 0


def cost_key(dataset: str, spec: dict) -> str:
    """The probe a fit shares with others: dataset, method, K, backend, and its params but
    :data:`STEP_PARAMS` (as text: a JSON key)."""
    params = {k: v for k, v in spec["params"].items() if k not in STEP_PARAMS}
    return json.dumps([dataset, spec["method"], spec["n_components"], spec.get("backend"),
                       params], sort_keys=True)


def score_key(dataset: str, spec: dict) -> str:
    """The scoring a fit shares with others: dataset, K, the documents scored (test, or the
    validation documents a validation fraction carves), as a JSON key."""
    return json.dumps([dataset, spec["n_components"], spec.get("validation_fraction")])


def scaling_shape(scaling: dict) -> tuple[int, int, int, int]:
    """(documents, words, nonzeros, tokens) of the corpus C9's synthetic sizes copy: the
    plan's ``split`` (a corpus of the profile's own: its training documents) or the
    registered shape of the UCI corpus ``base``."""
    from same.data.corpus import REGISTRY

    from .size_cost import split_shape

    if scaling.get("split"):
        return split_shape(scaling["split"])
    info = REGISTRY[scaling["base"]]
    return info.n_docs, info.n_words, info.nnz, info.n_tokens


def _slots(plan: dict) -> int:
    """Jobs the workflow runs at a time: ``--cores`` // threads per job."""
    return max(1, plan["cores"] // max(1, plan["threads"]))


def _say(message: str) -> None:
    print(f"estimate: {message}", file=sys.stderr, flush=True)


def _probe_points(budget: int, method: str) -> list[int]:
    """The passes (CGS: iterations) a probe reaches: 1, 2, 3, 5, 10, ... up to its cap."""
    cap = min(budget, PROBE_UNITS.get(method, PROBE_PASSES))
    return sorted({p for p in (1, 2, 3, 5, 10, 20, 50, 100) if p <= cap} | {cap})


def probe_unit(spec: dict, train):
    """(seconds of one pass — CGS: iteration — of ``spec`` on the training matrix ``train``,
    the last φ, numba's compile seconds): the mean of the first passes, training only, until
    :data:`PROBE_SECONDS` (at least 2 passes where the budget has them)."""
    from .methods import checkpoints
    from .runner import _pin_threads, usable_threads
    from .spec import RunSpec

    points = _probe_points(spec["budget"], spec["method"])
    run = replace(RunSpec(**spec), budget=points[-1], train_fraction=1.0,
                  validation_fraction=None)
    run = replace(run, threads=usable_threads(run.threads))
    phi, done, seconds, compiled = None, 1, 0.0, 0.0
    with _pin_threads(run.threads):
        for point in checkpoints(train, run, points):
            phi, info = point
            done, seconds = int(info["pass"]), float(info["train_seconds"])
            compiled = max(compiled, info.get("compile_seconds") or 0.0)
            if seconds >= PROBE_SECONDS and done >= 2:
                break
    return seconds / done, phi, compiled


def probe_score(phi, alpha: float, split, validation_fraction) -> float:
    """Seconds of scoring one checkpoint (the shared evaluator) on the test documents, or on
    the validation documents a validation fraction carves: the faster of two (the first may
    load numba's cache)."""
    from same.data.split import validation_split
    from same.model.evaluate import evaluate

    scored = split if validation_fraction is None else validation_split(split,
                                                                        validation_fraction)
    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        evaluate(phi, alpha, scored)
        times.append(time.perf_counter() - t0)
    return min(times)


def _subprocess_seconds(argv: list[str], side_by_side: int = 1) -> float:
    """Wall seconds of a Python subprocess (``sys.executable`` + argv), the mean of
    ``side_by_side`` copies started together (as the workflow runs its jobs, ``slots`` at a
    time; ``{i}`` in an argument is the copy's number); a failure is raised with the last line
    of its stderr."""
    t0 = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, *(a.replace("{i}", str(i)) for a in argv)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for i in range(side_by_side)]
    walls = []
    for proc in procs:
        _, err = proc.communicate()
        walls.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            last = (err.strip().splitlines() or ["no output"])[-1]
            raise RuntimeError(f"probe {' '.join(argv[:3])} failed: {last}")
    return sum(walls) / len(walls)


def probe_start(spec: dict, split_path: str, pass_seconds: float, score_seconds: float,
                out: Path, side_by_side: int = 1) -> float:
    """Seconds of a fit job's start-up for ``spec``'s method: a real ``python -m same fit`` at
    budget 1 (final checkpoint only) into the new folders ``out``/0, 1, ... (``side_by_side``
    copies started together), less its pass and its scoring."""
    one = {**spec, "budget": 1, "checkpoints": "final", "validation_fraction": None,
           "train_fraction": 1.0}
    wall = _subprocess_seconds(["-m", "same", "fit", "--spec", json.dumps(one), "--split",
                                split_path, "--out", str(out / "{i}"), "--no-progress"],
                               side_by_side)
    return max(0.0, wall - pass_seconds - score_seconds)


#: A report job as the probe runs it: fig1a/b (same.report.fig_ll_vs_passes) of one run's
#: trace, drawn as PNG and PDF in a subprocess of its own (argv: trace, png, pdf).
REPORT_JOB = ("import sys\nfrom same import report\n"
              "df = report.load_traces([sys.argv[1]])\n"
              "report.fig_ll_vs_passes(df, sys.argv[2:], 'probe', 1)\n")


def probe_report(trace: Path, side_by_side: int = 1) -> float:
    """Seconds of a report job: :data:`REPORT_JOB` on ``trace`` (interpreter, imports,
    reading a trace, a figure drawn and written), ``side_by_side`` copies started together."""
    return _subprocess_seconds(["-c", REPORT_JOB, str(trace), str(trace.parent / "{i}.png"),
                                str(trace.parent / "{i}.pdf")], side_by_side)


def probe_scaling(scaling: dict, factor: float = 0.05) -> tuple[float, float]:
    """(seconds per token of a pass, seconds per token drawn) of C9's benchmark, run as the
    rule runs it (same.experiments.size_cost.measure with the plan's K, m, sampler and threads)
    at ``factor`` × its base corpus (:func:`scaling_shape`), 4 passes, after a smaller run in
    which numba compiles its kernels for those settings, once, as the real job would have."""
    from .size_cost import measure

    shape = scaling_shape(scaling)
    factor = max(factor, 50 / shape[0])  # a small corpus's draw: at least 50 documents
    args = (scaling["base"], scaling["n_components"], scaling["n_copies"], 4,
            scaling["sampler"], scaling["threads"])
    with contextlib.redirect_stderr(io.StringIO()):  # its progress lines
        # numba compiles here, untimed, on at least 10 documents
        measure([max(factor / 10, 10 / shape[0])], *args, shape=shape)
        t0 = time.perf_counter()
        result = measure([factor], *args, shape=shape)
    row = result["sizes"][0]
    per_pass = float(min(row["pass_seconds"]))
    other = time.perf_counter() - t0 - sum(row["pass_seconds"]) - row["compile_seconds"]
    return per_pass / row["n_tokens"], max(0.0, other) / (shape[3] * factor)


def probe(plan: dict) -> tuple[Costs, dict]:
    """Measure :class:`Costs` for ``plan`` on this machine (module docstring); also returns
    the probe's own record (seconds, numba compile seconds, classes probed)."""
    from same.data.split import load_split

    t0 = time.perf_counter()
    costs, phis, compiled = Costs(), {}, 0.0
    splits = {d: load_split(p, mmap=True) for d, p in plan["splits"].items()}
    costs.tokens = {d: float(s.train.sum()) for d, s in splits.items()}
    keys = {}
    for fit in plan["fits"] + [{"dataset": d, "spec": spec} for d, t in
                               (plan.get("timing") or {}).items()
                               for spec in t["entries"].values()]:
        keys.setdefault(cost_key(fit["dataset"], fit["spec"]), fit)
    for n, (key, fit) in enumerate(keys.items(), 1):
        spec = fit["spec"]
        _say(f"probing {n}/{len(keys)}: {spec.get('label') or spec['method']} "
             f"({spec['method']}, K={spec['n_components']}) on {fit['dataset']}")
        costs.unit[key], phi, seconds = probe_unit(spec, splits[fit["dataset"]].train)
        compiled += seconds
        phis.setdefault((fit["dataset"], spec["n_components"]), (phi, spec))
    for fit in plan["fits"]:
        key = score_key(fit["dataset"], fit["spec"])
        if key not in costs.score:
            phi, spec = phis[(fit["dataset"], fit["spec"]["n_components"])]
            costs.score[key] = probe_score(phi, spec["doc_topic_prior"], splits[fit["dataset"]],
                                           fit["spec"].get("validation_fraction"))
    with tempfile.TemporaryDirectory(prefix="same-estimate-") as tmp:
        run = _probe_starts(plan, costs, Path(tmp))
        if plan.get("reports"):
            _say("timing a report job")
            costs.report = probe_report(run / "trace.csv", _slots(plan))
    if plan.get("scaling"):
        _say("timing C9's scaling benchmark at a small size")
        costs.scaling_per_token, costs.draw_per_token = probe_scaling(plan["scaling"])
        costs.scaling_tokens = int(scaling_shape(plan["scaling"])[3])
    return costs, {"probe_seconds": time.perf_counter() - t0, "compile_seconds": compiled,
                   "classes": len(keys)}


def _family(method: str) -> str:
    """Methods that import the same library (gensim's two VB modes, scikit-learn's): one
    start-up probe each."""
    return method.split("_")[0]


def _probe_starts(plan: dict, costs: Costs, tmp: Path) -> Path:
    """Each method's fit job start-up (:func:`probe_start`), on the first fit of its family
    (:func:`_family`), shared by the family; returns the first probe's run folder (in
    ``tmp``)."""
    firsts = {}
    for fit in plan["fits"]:
        firsts.setdefault(_family(fit["spec"]["method"]), fit)
    for n, (family, fit) in enumerate(firsts.items(), 1):
        _say(f"timing a fit job's start-up {n}/{len(firsts)}: {fit['spec']['method']}")
        spec = {**fit["spec"], "validation_fraction": None}
        costs.start[family] = probe_start(
            spec, plan["splits"][fit["dataset"]], costs.unit[cost_key(fit["dataset"], spec)],
            costs.score.get(score_key(fit["dataset"], spec), 0.0), tmp / f"run{n}",
            _slots(plan))
    for fit in plan["fits"]:
        method = fit["spec"]["method"]
        costs.start[method] = costs.start[_family(method)]
    return tmp / "run1" / "0"
