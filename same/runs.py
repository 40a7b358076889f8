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
           "method_param_names"]

METHODS = ("same", "cgs", "vb_online", "vb_batch")
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
    """The table of runs of a workflow config: label → {method, budget, params, seeds}.

    The main comparison (``same``, ``vb_online``, ``vb_batch``, ``cgs``) and the SAME variants
    that claims C7 and C8 compare (other m, annealing schedules) run every seed, so those
    verdicts rest on the seed spread; fig1c's m=1 run and the prior-scale variant run the
    first.
    """
    s, c, v = config["same"], config["cgs"], config["vb"]
    seeds, seed0 = list(config["seeds"]), list(config["seeds"][:1])

    def run(method, budget, params=None, run_seeds=seed0):
        return {"method": method, "budget": int(budget), "params": params or {},
                "seeds": list(run_seeds)}

    runs = {"same": run("same", s["passes"], same_params(config), seeds),
            "vb_online": run("vb_online", v["passes"], run_seeds=seeds),
            "vb_batch": run("vb_batch", v["passes"], run_seeds=seeds),
            "cgs": run("cgs", c["iterations"], run_seeds=seeds)}
    for m in s["m_values"]:
        if m != s["n_samples"]:
            runs[f"same_m{_m_label(m)}"] = run("same", s["passes"],
                                               same_params(config, n_samples=m), seeds)
    for sched in s["schedules"]:
        if sched != "constant":
            runs[f"same_{sched}"] = run("same", s["passes"],
                                        same_params(config, m_schedule=sched), seeds)
    other = "bidmach" if main_prior_scale(config) == "paper" else "paper"
    runs[f"same_scale_{other}"] = run("same", s["passes"], same_params(config, prior_scale=other))
    runs["same_m1_long"] = run("same", s["m1_passes"], same_params(config, n_samples=1))
    if c["fig1c_iterations"] != c["iterations"]:
        runs["cgs_long"] = run("cgs", c["fig1c_iterations"])
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
                   params=dict(r["params"]), label=label)
