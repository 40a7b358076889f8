"""Runs as data: the spec of one training run, and the table of runs a workflow config implies.

A :class:`RunSpec` is everything the runner needs besides the split: method,
label, K, α, β, seed, budget, threads, backend and the method's own
parameters.  It travels as JSON (``same-lda fit --spec``) and is validated
once, against the method's own parameter checks (for SAME, the estimator's
``_parameter_constraints``; for the baselines, their function signatures).

:func:`plan_runs` turns a workflow configuration (``config/config.yaml``) into
the table of runs label → (method, budget, params, seeds) that every figure,
table and claim reads; SAME settings absent from the config take the
estimator's defaults, which are written only in :class:`same.sampler.SameLDA`.
"""

from __future__ import annotations

import inspect
import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = ["METHODS", "RunSpec", "plan_runs", "SAME_CONFIG_PARAMS", "same_params",
           "method_param_names", "m_label", "sensitivity_runs",
           "study_runs", "study_label", "STUDY_METHODS", "CHECKPOINT_MODES", "check_config",
           "config_error_line", "LABEL_PATTERN"]

METHODS = ("same", "cgs", "vb_online", "vb_batch")
#: A run label is a folder name and must match the fit rule's ``label`` wildcard.
LABEL_PATTERN = r"[a-z0-9_.]+"
CHECKPOINT_MODES = ("all", "final")
#: Keys of the config's ``same:`` section that are SameLDA parameters.
SAME_CONFIG_PARAMS = ("n_samples", "sampler", "prior_scale", "learning_rate", "n_inner",
                      "keep_doc_topic", "shuffle", "batch_size", "learning_power", "learning_decay",
                      "learning_offset")
#: Parameters the runner sets from the spec's own fields; never in ``params``.
_COMMON = {"X", "n_topics", "doc_topic_prior", "topic_word_prior", "random_state"}
_RUNNER_SET = {"same": _COMMON | {"max_iter", "backend", "verbose"},
               "cgs": _COMMON | {"iterations", "checkpoints", "threads"},
               "vb": _COMMON | {"passes", "mode"}}


def method_param_names(method: str) -> set[str]:
    """The ``params`` keys a method accepts (beyond the spec's common fields)."""
    if method == "same":
        from .sampler import SameLDA

        return set(SameLDA().get_params()) - _RUNNER_SET["same"]
    if method == "cgs":
        from baselines.cgs import iter_cgs

        return set(inspect.signature(iter_cgs).parameters) - _RUNNER_SET["cgs"]
    from baselines.vb import iter_vb

    return set(inspect.signature(iter_vb).parameters) - _RUNNER_SET["vb"]


@dataclass
class RunSpec:
    """What one run trains (all methods of one comparison share K, α, β and the split).

    method : "same" | "cgs" | "vb_online" | "vb_batch"
    n_topics, doc_topic_prior, topic_word_prior : K, α, β
    seed : int — the method's random seed
    budget : int — passes (same, vb_*) or Gibbs iterations (cgs)
    threads : int — pinned for numba, BLAS (threadpoolctl) and tomotopy workers
    backend : "numpy" | "cupy" (SAME only)
    params : dict — method-specific settings (SAME: SameLDA parameters; VB: chunksize,
        iterations), checked here by the method's own checks (``SameLDA._validate_params``,
        :func:`baselines.vb.check_vb_params`, :func:`baselines.cgs.check_cgs_params`, which
        also bounds the seed to tomotopy's range)
    label : str or None — output folder name and trace label (default: the method)
    train_fraction : float in (0, 1] — train on this seeded, nested fraction of the split's
        training documents (:func:`same.split.train_subset`; the scale study), 1 = all
    checkpoints : "all" | "final" — score every :func:`same.methods.eval_points` checkpoint,
        or only the budget's (the scale study needs final lls only)
    """

    method: str
    n_topics: int
    doc_topic_prior: float
    topic_word_prior: float
    seed: int
    budget: int
    threads: int = 1
    backend: str = "numpy"
    params: dict = field(default_factory=dict)
    label: str | None = None
    train_fraction: float = 1.0
    checkpoints: str = "all"

    def validate(self) -> RunSpec:
        """Check every field and the method's params; returns self.

        Raises
        ------
        ValueError
            Naming the bad field or parameter and what is allowed.
        """
        if self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r}; known: {', '.join(METHODS)}")
        for name in ("n_topics", "budget", "threads"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        for name in ("doc_topic_prior", "topic_word_prior"):
            v = getattr(self, name)
            if isinstance(v, bool) or not (isinstance(v, (int, float)) and math.isfinite(v)
                                           and v > 0):
                raise ValueError(f"{name} must be a positive finite number, got {v!r}")
        f = self.train_fraction
        if isinstance(f, bool) or not (isinstance(f, (int, float)) and 0 < f <= 1):
            raise ValueError(f"train_fraction must be in (0, 1], got {f!r}")
        if self.checkpoints not in CHECKPOINT_MODES:
            raise ValueError(f"checkpoints must be one of {', '.join(CHECKPOINT_MODES)}, got "
                             f"{self.checkpoints!r}")
        if self.backend != "numpy" and self.method != "same":
            raise ValueError(f"backend={self.backend!r} applies to method 'same' only")
        if self.label is not None and not (isinstance(self.label, str) and self.label):
            raise ValueError(f"label must be a non-empty string or null, got {self.label!r}")
        if not isinstance(self.params, dict):
            raise ValueError("params must be a JSON object (parameter name → value), got "
                             f"{_json_kind(self.params)}")
        allowed = method_param_names(self.method)
        unknown = sorted(set(self.params) - allowed)
        if unknown:
            raise ValueError(f"unknown parameter(s) {', '.join(unknown)} for method "
                             f"{self.method!r}; allowed: {', '.join(sorted(allowed)) or 'none'}")
        if self.method == "same":
            from .sampler import SameLDA

            SameLDA(**self.params, backend=self.backend, random_state=self.seed)._validate_params()
        elif self.method == "cgs":
            from baselines.cgs import check_cgs_params

            check_cgs_params(self.params, self.seed)
        else:
            from baselines.vb import check_vb_params

            check_vb_params(self.params, seed=self.seed)
        return self

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str, source: str = "spec") -> RunSpec:
        """Parse and validate a JSON spec.

        Raises
        ------
        ValueError
            Not JSON, not an object, unknown or missing fields, or invalid values.
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{source}: not valid JSON ({exc.msg} at line {exc.lineno} "
                             f"column {exc.colno})") from None
        if not isinstance(data, dict):
            raise ValueError(f"{source}: a run spec is a JSON object, got {type(data).__name__}")
        known = set(inspect.signature(cls).parameters)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"{source}: unknown field(s) {', '.join(unknown)}; known: "
                             f"{', '.join(sorted(known))}")
        missing = sorted(n for n, p in inspect.signature(cls).parameters.items()
                         if p.default is inspect.Parameter.empty and n not in data)
        if missing:
            raise ValueError(f"{source}: missing field(s) {', '.join(missing)}")
        return cls(**data).validate()


def _json_kind(value) -> str:
    """What a JSON value is, in words (for messages about a spec's fields)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    return type(value).__name__


def same_params(config: dict, **overrides) -> dict:
    """SameLDA parameters of the config's main SAME run (absent keys: estimator defaults)."""
    s = config["same"]
    params = {k: s[k] for k in SAME_CONFIG_PARAMS if k in s}
    params.update(overrides)
    return params


def _m_label(m: float) -> str:
    return f"{m:g}"


def plan_runs(config: dict) -> dict[str, dict]:
    """The table of runs of a workflow config: label → {method, budget, params, seeds, ...}.

    The main comparison (``same``, ``vb_online``, ``vb_batch``, ``cgs``) and the SAME variants
    that claims C7 and C8 compare (other m, annealing schedules) run every seed, so those
    verdicts rest on the seed spread; fig1c's m=1 run, the prior-scale variant, the
    sensitivity variants (:func:`sensitivity_runs`) and the scale study
    (:func:`study_runs`) run the first.  The m sweep (fig2a, table2, C6, C7) uses
    ``same.m_sampler`` (default: the main sampler); when it differs from the main run's
    sampler, m = n_samples gets its own run.  Entries may carry ``n_topics`` (a list: the
    K values of the scale study; default the config's K), ``train_fraction`` and
    ``checkpoints``.

    Raises
    ------
    ValueError
        One line naming the config key: a value repeated in one of the lists the runs come
        from (seeds, m values, schedules, sensitivity values, the scale study's grid), two
        planned runs with one label (e.g. m = 5 and m = 5.0000001, both ``same_m5``: one run
        would silently vanish), a label that is no folder name, or a batch size that SameLDA
        would read as a document count where a fraction is meant.
    """
    s, c, v = config["same"], config["cgs"], config["vb"]
    _distinct("seeds", config["seeds"])
    _distinct("same.m_values", s["m_values"])
    _distinct("same.schedules", s["schedules"])
    _check_same_batch_size(s)
    seeds, seed0 = list(config["seeds"]), list(config["seeds"][:1])

    def run(method, budget, params=None, run_seeds=seed0, **extra):
        return {"method": method, "budget": int(budget), "params": params or {},
                "seeds": list(run_seeds), **extra}

    runs = _RunTable()
    runs.add("same", run("same", s["passes"], same_params(config), seeds), "the main SAME run")
    runs.add("vb_online", run("vb_online", v["passes"], run_seeds=seeds), "the main VB run")
    runs.add("vb_batch", run("vb_batch", v["passes"], run_seeds=seeds), "the main VB run")
    runs.add("cgs", run("cgs", c["iterations"], run_seeds=seeds), "the main CGS run")
    m_sampler = s.get("m_sampler")
    for m in s["m_values"]:
        label = m_label(config, m)
        if label != "same":
            extra = {"sampler": m_sampler} if m_sampler else {}
            runs.add(label, run("same", s["passes"],
                                same_params(config, n_samples=m, **extra), seeds),
                     f"same.m_values: {m!r}")
    for sched in s["schedules"]:
        if sched != "constant":
            runs.add(f"same_{sched}",
                     run("same", s["passes"], same_params(config, m_schedule=sched), seeds),
                     f"same.schedules: {sched!r}")
    other = "bidmach" if main_prior_scale(config) == "paper" else "paper"
    runs.add(f"same_scale_{other}",
             run("same", s["passes"], same_params(config, prior_scale=other)),
             "the prior_scale variant")
    runs.add("same_m1_long", run("same", s["m1_passes"], same_params(config, n_samples=1)),
             "same.m1_passes")
    if c["fig1c_iterations"] != c["iterations"]:
        runs.add("cgs_long", run("cgs", c["fig1c_iterations"]), "cgs.fig1c_iterations")
    for row in sensitivity_runs(config):
        if row["label"] != "same":
            runs.add(row["label"],
                     run("same", s["passes"], same_params(config, **{row["param"]: row["value"]})),
                     f"sensitivity.{row['param']}: {row['value']!r}")
    study = study_runs(config)
    for label, entry in study.items():
        runs.add(label, entry, study.origin[label])
    return dict(runs)


class _RunTable(dict):
    """label → run, refusing a label given twice and a label that is no folder name."""

    def __init__(self):
        super().__init__()
        self.origin: dict[str, str] = {}  # label → the config key and value that planned it

    def add(self, label: str, entry: dict, origin: str) -> None:
        if not re.fullmatch(LABEL_PATTERN, label):
            raise ValueError(f"config {origin} gives the run label {label!r}, not a folder name "
                             "of lowercase letters, digits, '_' and '.' (numbers below 1e-4 or "
                             "from 1e6 print with an exponent)")
        if label in self:
            raise ValueError(f"config {origin} and {self.origin[label]} give one run label "
                             f"{label!r} (labels show numbers to 6 significant digits); make "
                             "them differ")
        self[label] = entry
        self.origin[label] = origin


def _distinct(key: str, values) -> None:
    """Refuse a value given twice in the config list ``key`` (1 and 1.0 are one value; a
    boolean is never equal to a number)."""
    seen = []
    for v in values:
        if any(u == v and isinstance(u, bool) == isinstance(v, bool) for u in seen):
            raise ValueError(f"config {key}: {v!r} is given twice ({list(values)!r}); give each "
                             "value once")
        seen.append(v)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_same_batch_size(s: dict) -> None:
    """``same.batch_size``: SameLDA reads an int as a document count, a float in (0, 1] as a
    fraction; the int 1 (one document per minibatch, 3,087 minibatches a pass on KOS) is
    refused as the likely slip for 1.0 (every document)."""
    b = s.get("batch_size")
    if _is_int(b) and b == 1:
        raise ValueError("config same.batch_size: 1 is an integer, read as ONE document per "
                         "minibatch; give 1.0 for all training documents, a fraction in (0, 1), "
                         "or a count of at least 2 documents")


def m_label(config: dict, m: float) -> str:
    """Label of the m-sweep run with constant m: the main run when it is the same run (m equal
    to ``n_samples`` and the same sampler), else ``same_m<m>``."""
    s = config["same"]
    main_sampler = s.get("sampler")
    if m == s["n_samples"] and s.get("m_sampler", main_sampler) == main_sampler:
        return "same"
    return f"same_m{_m_label(m)}"


def _value_label(value) -> str:
    return str(value).lower() if isinstance(value, bool) else f"{value:g}"


def sensitivity_runs(config: dict) -> list[dict]:
    """The sensitivity study (``sensitivity:`` in the config: SameLDA parameter → values), as
    rows {param, value, label}.  A value equal to the main run's setting (the config's, else
    the estimator's default; batch_size None counts as 1/20) is the main run itself, label
    ``same``; any other is ``sens_<parameter>_<value>``: that one setting changed, everything
    else as the main run, seed 0.

    Raises
    ------
    ValueError
        A value given twice, or a ``batch_size`` given as an integer (SameLDA would read it as
        a document count; the study's batch sizes are fractions of the training documents).
    """
    from .sampler import SameLDA

    main = SameLDA(**same_params(config)).get_params()
    if main["batch_size"] is None:
        main["batch_size"] = 1 / 20
    rows = []
    for param, values in (config.get("sensitivity") or {}).items():
        _distinct(f"sensitivity.{param}", values)
        for value in values:
            if param == "batch_size" and _is_int(value):
                raise ValueError(f"config sensitivity.batch_size: {value} is an integer, read "
                                 "as a document count; give fractions of the training "
                                 "documents in (0, 1], e.g. 0.05")
            is_main = main[param] == value and isinstance(value, bool) == isinstance(
                main[param], bool)
            rows.append({"param": param, "value": value,
                         "label": "same" if is_main else f"sens_{param}_{_value_label(value)}"})
    return rows


#: Methods of the scale study, in plotting order.
STUDY_METHODS = ("same", "vb_online", "vb_batch", "cgs")


def study_label(method: str, fraction: float) -> str:
    """Run label of the scale study's ``method`` at training fraction ``fraction``."""
    return f"study_{method}_f{fraction:g}"


def study_runs(config: dict) -> dict[str, dict]:
    """The scale study's runs (``scale_study:`` in the config; none when absent): every method
    at every training fraction, each at every K of the study, seed 0, final checkpoint only;
    CGS with ``cgs_iterations`` (its ll there is the study's CGS reference).

    Raises
    ------
    ValueError
        A K or a fraction given twice, or two fractions with one label.
    """
    runs = _RunTable()
    st = config.get("scale_study")
    if not st:
        return runs
    _distinct("scale_study.n_topics", st["n_topics"])
    _distinct("scale_study.train_fractions", st["train_fractions"])
    s, v = config["same"], config["vb"]
    budgets = {"same": s["passes"], "vb_online": v["passes"], "vb_batch": v["passes"],
               "cgs": st.get("cgs_iterations", config["cgs"]["iterations"])}
    for f in st["train_fractions"]:
        for method in STUDY_METHODS:
            runs.add(study_label(method, f), {
                "method": method, "budget": int(budgets[method]),
                "params": same_params(config) if method == "same" else {},
                "seeds": list(config["seeds"][:1]), "n_topics": list(st["n_topics"]),
                "train_fraction": float(f), "checkpoints": "final"},
                f"scale_study.train_fractions: {f!r}")
    return runs


def main_prior_scale(config: dict) -> str:
    """prior_scale of the main SAME run (the estimator's default when the config is silent)."""
    from .sampler import SameLDA

    return config["same"].get("prior_scale", SameLDA().prior_scale)


def spec_for(config: dict, runs: dict, label: str, seed: int, n_topics: int) -> RunSpec:
    """The :class:`RunSpec` of one (label, seed) of :func:`plan_runs`' table."""
    r = runs[label]
    backend = config["backend"] if r["method"] == "same" else "numpy"
    return RunSpec(method=r["method"], n_topics=int(n_topics),
                   doc_topic_prior=float(config["doc_topic_prior"]),
                   topic_word_prior=float(config["topic_word_prior"]), seed=int(seed),
                   budget=r["budget"], threads=int(config["threads"]), backend=backend,
                   params=dict(r["params"]), label=label,
                   train_fraction=float(r.get("train_fraction", 1.0)),
                   checkpoints=r.get("checkpoints", "all"))


def check_config(config: dict, schema: str | Path | None = None) -> dict[str, dict]:
    """Every check of a workflow config, before any job; returns :func:`plan_runs`' table.

    ``schema`` (the path of ``config/config.schema.yaml``): the JSON schema is checked again
    with integers strict (a JSON schema's ``integer`` accepts 8.0, which would name folders
    ``K8.0``).  Then: the datasets (UCI corpora or the ``synthetic:`` section's, whose names
    must not be a UCI corpus's: its outputs would overwrite the real corpus's
    ``results/<name>/``), the ``same:`` and ``sensitivity:`` values against SameLDA's own
    parameter checks, :func:`plan_runs`' checks, and every planned run's spec.

    Raises
    ------
    ValueError
        One line, ``config <key>: <what is wrong>``.
    """
    from .corpus import REGISTRY
    from .sampler import SameLDA
    from .scale_data import describe

    if schema is not None:
        _check_schema_strict(config, schema)
    datasets, synthetic = config["datasets"], config.get("synthetic") or {}
    _distinct("datasets", datasets)
    for d in datasets:
        if d not in REGISTRY and d not in synthetic:
            raise ValueError(f"config datasets: {d!r} is neither a UCI corpus "
                             f"({', '.join(REGISTRY)}) nor a dataset of the config's synthetic: "
                             "section")
    for name, spec in synthetic.items():
        try:
            describe(name, spec)  # its spec, and a name that is not a UCI corpus's
        except ValueError as exc:
            raise ValueError(f"config {exc}") from None
    _distinct("scaling.factors", (config.get("scaling") or {}).get("factors", []))
    checks = [(f"same.{k}", k, config["same"][k]) for k in SAME_CONFIG_PARAMS
              if k in config["same"]]
    checks += [(f"sensitivity.{param}", param, value)
               for param, values in (config.get("sensitivity") or {}).items()
               for value in values]
    for key, param, value in checks:
        try:
            SameLDA(**{param: value})._validate_params()
        except ValueError as exc:
            raise ValueError(f"config {key}: {exc}") from None
    runs = plan_runs(config)
    for label, run in runs.items():
        try:
            spec_for(config, runs, label, run["seeds"][0], config["n_topics"]).validate()
        except ValueError as exc:
            raise ValueError(f"config: run {label!r}: {exc}") from None
    return runs


def _check_schema_strict(config: dict, schema: str | Path) -> None:
    import jsonschema
    import yaml

    base = jsonschema.Draft202012Validator
    strict = base.TYPE_CHECKER.redefine("integer", lambda _checker, v: _is_int(v))
    validator = jsonschema.validators.extend(base, type_checker=strict)
    error = jsonschema.exceptions.best_match(
        validator(yaml.safe_load(Path(schema).read_text())).iter_errors(config))
    if error is not None:
        raise ValueError(_schema_error_line(error))


def _schema_error_line(error) -> str:
    """``config <key path>: <message>`` of a jsonschema ValidationError, on one line."""
    key = ""
    for part in error.absolute_path:
        key += f"[{part}]" if isinstance(part, int) else (f".{part}" if key else str(part))
    return f"config{' ' + key if key else ''}: {' '.join(error.message.split())}"


def config_error_line(exc: BaseException) -> str:
    """The one line a user sees for a config error raised while the workflow is parsed: the
    message of our own ``ValueError`` (already one line), or the key and message of a JSON
    schema error, however Snakemake's ``validate`` wrapped it (its ``WorkflowError`` holds a
    multi-line dump of the schema)."""
    import jsonschema

    e = exc
    while e is not None:
        if isinstance(e, jsonschema.ValidationError):
            return _schema_error_line(e)
        if isinstance(e, ValueError):
            return " ".join(str(e).split())
        e = e.__cause__ or e.__context__
    return " ".join(str(exc).split())
