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
from dataclasses import asdict, dataclass, field

__all__ = ["METHODS", "RunSpec", "plan_runs", "SAME_CONFIG_PARAMS", "same_params",
           "method_param_names", "m_label", "sensitivity_runs",
           "study_runs", "study_label", "STUDY_METHODS", "CHECKPOINT_MODES"]

METHODS = ("same", "cgs", "vb_online", "vb_batch")
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
        iterations)
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
        allowed = method_param_names(self.method)
        unknown = sorted(set(self.params) - allowed)
        if unknown:
            raise ValueError(f"unknown parameter(s) {', '.join(unknown)} for method "
                             f"{self.method!r}; allowed: {', '.join(sorted(allowed)) or 'none'}")
        if self.method == "same":
            from .sampler import SameLDA

            SameLDA(**self.params, backend=self.backend)._validate_params()
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
    """
    s, c, v = config["same"], config["cgs"], config["vb"]
    seeds, seed0 = list(config["seeds"]), list(config["seeds"][:1])

    def run(method, budget, params=None, run_seeds=seed0, **extra):
        return {"method": method, "budget": int(budget), "params": params or {},
                "seeds": list(run_seeds), **extra}

    runs = {"same": run("same", s["passes"], same_params(config), seeds),
            "vb_online": run("vb_online", v["passes"], run_seeds=seeds),
            "vb_batch": run("vb_batch", v["passes"], run_seeds=seeds),
            "cgs": run("cgs", c["iterations"], run_seeds=seeds)}
    m_sampler = s.get("m_sampler")
    for m in s["m_values"]:
        label = m_label(config, m)
        if label != "same":
            extra = {"sampler": m_sampler} if m_sampler else {}
            runs[label] = run("same", s["passes"], same_params(config, n_samples=m, **extra),
                              seeds)
    for sched in s["schedules"]:
        if sched != "constant":
            runs[f"same_{sched}"] = run("same", s["passes"],
                                        same_params(config, m_schedule=sched), seeds)
    other = "bidmach" if main_prior_scale(config) == "paper" else "paper"
    runs[f"same_scale_{other}"] = run("same", s["passes"], same_params(config, prior_scale=other))
    runs["same_m1_long"] = run("same", s["m1_passes"], same_params(config, n_samples=1))
    if c["fig1c_iterations"] != c["iterations"]:
        runs["cgs_long"] = run("cgs", c["fig1c_iterations"])
    for row in sensitivity_runs(config):
        if row["label"] != "same":
            runs[row["label"]] = run("same", s["passes"],
                                     same_params(config, **{row["param"]: row["value"]}))
    runs.update(study_runs(config))
    return runs


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
    else as the main run, seed 0."""
    from .sampler import SameLDA

    main = SameLDA(**same_params(config)).get_params()
    if main["batch_size"] is None:
        main["batch_size"] = 1 / 20
    rows = []
    for param, values in (config.get("sensitivity") or {}).items():
        for value in values:
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
    CGS with ``cgs_iterations`` (its ll there is the study's CGS reference)."""
    st = config.get("scale_study")
    if not st:
        return {}
    s, v = config["same"], config["vb"]
    budgets = {"same": s["passes"], "vb_online": v["passes"], "vb_batch": v["passes"],
               "cgs": st.get("cgs_iterations", config["cgs"]["iterations"])}
    runs = {}
    for f in st["train_fractions"]:
        for method in STUDY_METHODS:
            runs[study_label(method, f)] = {
                "method": method, "budget": int(budgets[method]),
                "params": same_params(config) if method == "same" else {},
                "seeds": list(config["seeds"][:1]), "n_topics": list(st["n_topics"]),
                "train_fraction": float(f), "checkpoints": "final"}
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
