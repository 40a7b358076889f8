"""The spec of one training run (:class:`RunSpec`): what the runner needs besides the split.

Method, label, K, α, β, seed, budget, threads, backend and the method's own parameters.  It
travels as JSON (``same-lda fit --spec``) and is validated once, against the method's own
parameter checks (for SAME, the estimator's ``_parameter_constraints``; for the baselines,
their function signatures and :func:`baselines.vb.check_vb_params`,
:func:`baselines.cgs.check_cgs_params`).
"""

from __future__ import annotations

import inspect
import json
import math
from dataclasses import asdict, dataclass, field

from same.data.order import DOCUMENT_ORDERS
from same.io.values import check_fraction, check_seed

__all__ = ["METHODS", "CHECKPOINT_MODES", "RunSpec", "method_param_names"]

METHODS = ("same", "cgs", "vb_online", "vb_batch", "sklearn_online", "sklearn_batch")
CHECKPOINT_MODES = ("all", "final")
#: Parameters the runner sets from the spec's own fields; never in ``params``.
_COMMON = {"X", "n_topics", "n_components", "doc_topic_prior", "topic_word_prior",
           "random_state"}
_RUNNER_SET = {"same": _COMMON | {"max_iter", "backend", "verbose", "n_jobs"},
               "cgs": _COMMON | {"iterations", "checkpoints", "threads"},
               "vb": _COMMON | {"passes", "mode"},
               "sklearn": _COMMON | {"passes", "mode", "threads"}}


def method_param_names(method: str) -> set[str]:
    """The ``params`` keys a method accepts (beyond the spec's common fields)."""
    if method == "same":
        from same.model.sampler import SameLDA

        return set(SameLDA().get_params()) - _RUNNER_SET["same"]
    if method == "cgs":
        from baselines.cgs import iter_cgs

        return set(inspect.signature(iter_cgs).parameters) - _RUNNER_SET["cgs"]
    if method.startswith("sklearn_"):
        from baselines.sklearn_vb import iter_sklearn

        return set(inspect.signature(iter_sklearn).parameters) - _RUNNER_SET["sklearn"]
    from baselines.vb import iter_vb

    return set(inspect.signature(iter_vb).parameters) - _RUNNER_SET["vb"]


@dataclass
class RunSpec:
    """What one run trains (all methods of one comparison share K, α, β and the split).

    method : "same" | "cgs" | "vb_online" | "vb_batch" (gensim) | "sklearn_online" |
        "sklearn_batch" (scikit-learn)
    n_components, doc_topic_prior, topic_word_prior : K, α, β (``n_topics``, the old name of
        n_components, is read with a FutureWarning until 0.2)
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
        training documents (:func:`same.data.split.train_subset`; the crossover study), 1 = all
    checkpoints : "all" | "final" — score every :func:`same.experiments.methods.eval_points` checkpoint,
        or only the budget's (the crossover study needs final lls only)
    validation_fraction : float in (0, 1) or None — None: train on the split's training
        documents and score its test documents; a fraction: carve that share of the training
        documents as validation documents (:func:`same.data.split.validation_split`, seeded by the
        split's seed), train on the rest and score the validation documents, so that no test
        document is read (tuning, the sensitivity study)
    document_order : "stored" | "shuffled" | "file" | "other" — the order the training
        documents are given to the method (:mod:`same.data.order`): as the split stores them;
        one permutation seeded by ``seed``; file order (the split's ``train_file_positions``;
        a split without them is in file order); "other": the same seeded shuffle whatever the
        stored order (a second, independent one for a shuffled corpus; never file order).
        "file" is on purpose: the runner's check against an order grouped by label does not
        refuse it
    """

    method: str
    n_components: int
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
    validation_fraction: float | None = None
    document_order: str = "stored"

    def validate(self) -> RunSpec:
        """Check every field and the method's params; returns self.

        Raises
        ------
        ValueError
            Naming the bad field or parameter and what is allowed (K·α above 2^127, beyond
            float32 totals: :func:`same.model.heldout_inputs.check_prior_totals`; the run
            checks W·β once it knows the split's W); an integer anywhere in
            the spec (fields or params) beyond the 64-bit range that no method check
            bounds is named last (``n_components: 1000...0 (401 digits) is too large ...``).
        """
        if self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r}; known: {', '.join(METHODS)}")
        for name in ("n_components", "budget", "threads"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        self.seed = check_seed(self.seed)  # a NumPy integer becomes an int (JSON, meta.json)
        for name in ("doc_topic_prior", "topic_word_prior"):
            v = getattr(self, name)
            _check_int_sizes({name: v})  # an integer α or β reaches numpy as one
            if isinstance(v, bool) or not (isinstance(v, (int, float)) and math.isfinite(v)
                                           and v > 0):
                raise ValueError(f"{name} must be a positive finite number, got {v!r}")
        self.train_fraction = check_fraction(self.train_fraction, "train_fraction",
                                             include_one=True)
        if self.validation_fraction is not None:
            self.validation_fraction = check_fraction(self.validation_fraction,
                                                      "validation_fraction")
        if self.document_order not in DOCUMENT_ORDERS:
            raise ValueError(f"document_order must be one of {', '.join(DOCUMENT_ORDERS)}, got "
                             f"{self.document_order!r}")
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
            from same.model.sampler import SameLDA

            SameLDA(**self.params, backend=self.backend, random_state=self.seed)._validate_params()
        elif self.method == "cgs":
            from baselines.cgs import check_cgs_params

            check_cgs_params(self.params, self.seed)
        elif self.method.startswith("sklearn_"):
            from baselines.sklearn_vb import check_sklearn_params

            check_sklearn_params(self.params, self.seed, mode=self.method.split("_")[1],
                                 doc_topic_prior=self.doc_topic_prior,
                                 topic_word_prior=self.topic_word_prior)
        else:
            from baselines.vb import check_vb_params

            check_vb_params(self.params, seed=self.seed, mode=self.method.split("_")[1])
        # last: a method's own range (a seed's) is named first; this bounds what none bounds
        _check_int_sizes({name: getattr(self, name) for name in _INT_FIELDS} | self.params)
        from same.model.heldout_inputs import check_prior_totals

        check_prior_totals(self.n_components, self.doc_topic_prior)  # W·β: at the run
        return self

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str, source: str = "spec") -> RunSpec:
        """Parse and validate a JSON spec.

        Raises
        ------
        ValueError
            Not JSON, not an object, a key given twice (:mod:`same.io.textinput`), unknown or
            missing fields, or invalid values.
        """
        from same.io.textinput import loads_json

        try:
            data = loads_json(text, source)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{source}: not valid JSON ({exc.msg} at line {exc.lineno} "
                             f"column {exc.colno})") from None
        return cls.from_dict(data, source)

    @classmethod
    def from_dict(cls, data, source: str | None = None) -> RunSpec:
        """A validated spec from its fields as a dict (JSON's types): the one reading of a
        spec given as data (``--spec``, a timing entry, an estimate plan's fit), never
        ``RunSpec(**data)`` (a missing or unknown field was a TypeError traceback).

        Raises
        ------
        ValueError
            Not an object, unknown or missing fields (``<source>: missing field(s) budget``),
            or invalid values (:meth:`validate`'s line); ``<source>: `` begins the first
            three when a source is given.
        """
        at = f"{source}: " if source else ""
        if not isinstance(data, dict):
            raise ValueError(f"{at}a run spec is a JSON object, got {type(data).__name__}")
        data = dict(data)
        if "n_topics" in data and "n_components" not in data:
            import warnings

            warnings.warn(f"{at}n_topics was renamed n_components in 0.1 and will be "
                          "removed in 0.2", FutureWarning, stacklevel=2)
            data["n_components"] = data.pop("n_topics")
        known = set(inspect.signature(cls).parameters)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"{at}unknown field(s) {', '.join(unknown)}; known: "
                             f"{', '.join(sorted(known))}")
        missing = sorted(n for n, p in inspect.signature(cls).parameters.items()
                         if p.default is inspect.Parameter.empty and n not in data)
        if missing:
            raise ValueError(f"{at}missing field(s) {', '.join(missing)}")
        return cls(**data).validate()


#: The spec's integer fields; they and every integer in ``params`` lie in the 64-bit range.
_INT_FIELDS = ("n_components", "seed", "budget", "threads")
_INT_MAX = 2**63 - 1


def _check_int_sizes(values: dict, prefix: str = "") -> None:
    """Refuse an integer beyond the 64-bit range in ``values`` (nested lists and objects
    included): numpy, numba and the baselines would overflow on it, or fail converting it
    to a float, far from the spec.

    Raises
    ------
    ValueError
        ``<key>: 1000...0 (401 digits) is too large (a spec's integers are at most 2**63 - 1
        in magnitude)``.
    """
    from same.io.textinput import int_text

    items = values.items() if isinstance(values, dict) else enumerate(values)
    for key, v in items:
        name = f"{prefix}[{key}]" if isinstance(key, int) else f"{prefix}{key}"
        if isinstance(v, (dict, list, tuple)):
            _check_int_sizes(v, name if isinstance(v, (list, tuple)) else f"{name}.")
        elif isinstance(v, int) and abs(v) > _INT_MAX:
            raise ValueError(f"{name}: {int_text(v)} is too large (a spec's integers are at "
                             "most 2**63 - 1 in magnitude)")


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
