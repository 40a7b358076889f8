"""The workflow configuration checked as a whole, before any job (called from the Snakefile).

:func:`check_config_files` refuses a config file that gives a key twice (Snakemake keeps the
last); :func:`type_overrides` reads a nested ``--config`` override's values with their YAML
types (Snakemake hands them as text); :func:`check_config` runs every check of the merged
config and returns :func:`same.experiments.plan.plan_runs`' table; :func:`backend_problem` says whether this machine can run
the config's backend; :func:`config_error_line` is the one line a user sees for what they
(or Snakemake's schema validation) refuse.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from .plan import plan_runs
from .runs import ORDER_PARAM, SAME_CONFIG_PARAMS, _distinct, spec_for

__all__ = ["check_config", "check_config_files", "backend_problem", "config_error_line",
           "RENAMED_KEYS", "rename_keys", "type_overrides"]

#: Config keys renamed in 0.1 (old → new), accepted until 0.2 with a FutureWarning: the
#: "scale study" is the crossover study (issue 41: "scale" named five things).
RENAMED_KEYS = {"scale_study": "crossover_study"}


def rename_keys(config: dict) -> dict:
    """``config`` (modified in place) with each old key of :data:`RENAMED_KEYS` moved to its new
    name, with a FutureWarning; an old key given by a profile replaces the new key's default."""
    for old, new in RENAMED_KEYS.items():
        if old in config:
            warnings.warn(f"config key {old} was renamed {new} in 0.1 and will be removed in 0.2",
                          FutureWarning, stacklevel=2)
            config[new] = config.pop(old)
    return config


def type_overrides(config: dict, overrides) -> dict:
    """``config`` (modified in place) with the values of a nested ``--config`` override read
    as YAML reads them in a config file.

    Snakemake reads a top-level ``--config`` value as an int, a float, a boolean or text, but a
    nested mapping or list with YAML's ``BaseLoader``, which keeps every value inside as
    text: ``--config 'same={passes: 5}'`` gave ``passes: '5'``, refused as "'5' is not of
    type 'integer'".  Each such text is read again with ``yaml.safe_load`` (``5`` an int,
    ``0.5`` a float, ``true`` a boolean, ``null`` None, ``.nan`` NaN, which the schema
    refuses); text it reads as anything else (a date, a mapping) stays text.  A value quoted
    to stay text (``column: "5"``) cannot be told from an unquoted one: give it in a
    ``--configfile``.

    Parameters
    ----------
    overrides : mapping
        What Snakemake parsed from ``--config`` (``workflow.config_settings.config``); its
        top-level values that are mappings or lists are retyped where ``config`` holds them.
    """
    import yaml

    def retype(value):
        if isinstance(value, dict):
            return {k: retype(v) for k, v in value.items()}
        if isinstance(value, list):
            return [retype(v) for v in value]
        if isinstance(value, str):
            try:
                typed = yaml.safe_load(value)
            except yaml.YAMLError:
                return value
            return typed if typed is None or isinstance(typed, (bool, int, float)) else value
        return value

    def apply(target: dict, key, value) -> None:  # as Snakemake merged it: mappings by key
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            for k, v in value.items():
                apply(target[key], k, v)
        else:
            target[key] = retype(value)

    for key, value in dict(overrides or {}).items():
        if isinstance(value, (dict, list)) and key in config:
            apply(config, key, value)
    return config


def check_config_files(paths) -> None:
    """Refuse a config file (``--configfile``, the default config) that gives a key twice,
    at any depth: Snakemake reads them with a last-one-wins loader, so ``n_components: 8``
    then ``n_components: 64`` would silently run K = 64.

    Parameters
    ----------
    paths : iterable of str or os.PathLike
        Snakemake's ``workflow.configfiles``, read as Snakemake reads them (JSON, else YAML).

    Raises
    ------
    ValueError
        One line: ``config file <path>: key 'n_components' is given twice (lines 3 and
        9); give each key once``, or the file unreadable.
    """
    from same.io.textinput import load_config_file

    for path in paths:
        try:
            load_config_file(path)
        except OSError as exc:
            raise ValueError(f"config file {path}: {exc.strerror or exc}") from None
        except ValueError as exc:  # its message starts with the path
            raise ValueError(f"config file {' '.join(str(exc).split())}") from None


#: The seeds per run the verdicts are built for: Student-t intervals and Welch tests over
#: seeds (same.report.stats) with fewer than five are wide enough that a real difference of a
#: few hundredths reads as "partly"; with one, no test is made and the claim is not judged.
VERDICT_SEEDS = 5


def seeds_note(config: dict) -> str | None:
    """The note a run with fewer seeds than :data:`VERDICT_SEEDS` prints before any fit (the
    workflow's dry run included); None with enough."""
    n = len(config.get("seeds") or [])
    if n >= VERDICT_SEEDS:
        return None
    what = ("no verdict that needs a test over seeds is judged (each says 'not judged')"
            if n < 2 else "the verdicts' 95% intervals and Welch tests are wide; a real "
            "difference of a few hundredths may read 'partly' or 'not reproduced'")
    return (f"config seeds: {n} per run ({config.get('seeds')}), fewer than the {VERDICT_SEEDS} "
            f"the verdicts are built for: {what}")


def backend_problem(config: dict) -> str | None:
    """Why this machine cannot run the config's ``backend`` (one line naming the key), or
    None when it can (:func:`same.model.backend.check_backend`: for ``cupy``, CuPy imports and a
    CUDA device is visible; nothing is allocated).

    The Snakefile refuses a run whose jobs run here with this line before its first job, and
    notes it on a dry run, which cannot tell whether the jobs will run here or on a cluster's
    nodes (there each fit job checks its own node: ``same-lda fit``).
    """
    from same.model.backend import BackendUnavailableError, check_backend

    try:
        check_backend(config["backend"])
    except BackendUnavailableError as exc:
        return f"config backend: {exc.backend!r} {exc.reason}, on this machine"
    return None


def _check_scaling(config: dict, datasets: list) -> None:
    """C9's factors and base: each factor one the scaling job can draw
    (:func:`same.experiments.size_cost.check_factors`, with a UCI base's registered shape; a
    split's shape is checked by the job), the base a dataset of the profile or a UCI corpus."""
    from same.data.corpus import REGISTRY

    from .size_cost import check_factors

    scaling = config.get("scaling") or {}
    factors = scaling.get("factors", [])
    _distinct("scaling.factors", factors)
    base = scaling.get("base")
    if base is not None and base not in datasets and base not in REGISTRY:
        raise ValueError(f"config scaling.base: {base!r} is neither a dataset of this profile "
                         f"({', '.join(datasets)}) nor a UCI corpus ({', '.join(REGISTRY)})")
    base = base or datasets[0]
    own = {**(config.get("synthetic") or {}), **(config.get("corpora") or {})}
    info = None if base in own else REGISTRY.get(base)  # the workflow's registered shapes
    shape = None if info is None else (info.n_docs, info.n_words, info.nnz, info.n_tokens)
    try:
        check_factors(factors, shape, base)
    except ValueError as exc:
        raise ValueError(f"config scaling.factors: {exc}") from None


def check_config(config: dict, schema: str | Path | None = None) -> dict[str, dict]:
    """Every check of a workflow config, before any job; returns :func:`plan_runs`' table.

    ``schema`` (the path of ``config/config.schema.yaml``): the JSON schema is checked again
    strictly (:mod:`same.io.schema`: a JSON schema's ``integer`` accepts 8.0, which would name
    folders ``K8.0``; its ``number`` accepts NaN and infinity).  Then: ``report_dir`` free of ``{`` and ``}`` (its outputs' paths would hold a
    wildcard), the datasets (UCI corpora or the ``synthetic:`` section's, whose names
    must not be a UCI corpus's: its outputs would overwrite the real corpus's
    ``results/<name>/``), the ``same:`` and ``sensitivity:`` values against SameLDA's own
    parameter checks, :func:`plan_runs`' checks, and every planned run's spec.

    Raises
    ------
    ValueError
        One line, ``config <key>: <what is wrong>``.
    """
    from same.data.corpus import REGISTRY
    from same.data.planted import describe
    from same.model.sampler import SameLDA

    if schema is not None:
        _check_schema_strict(config, schema)
    report_dir = config.get("report_dir") or ""
    if "{" in report_dir or "}" in report_dir:  # Snakemake reads braces in a path as wildcards
        raise ValueError(f"config report_dir: {report_dir!r} holds '{{' or '}}', which "
                         "Snakemake reads as a wildcard in its outputs' paths; name a folder "
                         "without them")
    datasets, synthetic = config["datasets"], config.get("synthetic") or {}
    corpora = config.get("corpora") or {}
    _distinct("datasets", datasets)
    for d in datasets:
        if d not in REGISTRY and d not in synthetic and d not in corpora:
            raise ValueError(f"config datasets: {d!r} is neither a UCI corpus "
                             f"({', '.join(REGISTRY)}) nor a dataset of the config's synthetic: "
                             "or corpora: section")
    _check_corpora(config, corpora, synthetic)
    for name, spec in synthetic.items():
        try:
            describe(name, spec)  # its spec, and a name that is not a UCI corpus's
        except ValueError as exc:
            raise ValueError(f"config {exc}") from None
    _check_scaling(config, datasets)
    checks = [(f"same.{k}", k, config["same"][k]) for k in SAME_CONFIG_PARAMS
              if k in config["same"]]
    checks += [(f"sensitivity.{param}", param, value)
               for param, values in (config.get("sensitivity") or {}).items()
               for value in values if param != ORDER_PARAM]  # a run setting: the spec checks it
    for key, param, value in checks:
        try:
            SameLDA(**{param: value})._validate_params()
        except ValueError as exc:
            raise ValueError(f"config {key}: {exc}") from None
    runs = plan_runs(config)
    for label, run in runs.items():
        try:
            for k in {config["n_components"]} | {c["n_components"] for c in corpora.values()
                                                 if "n_components" in c}:
                spec_for(config, runs, label, run["seeds"][0], k).validate()
        except ValueError as exc:
            raise ValueError(f"config: run {label!r}: {exc}") from None
    return runs


def _check_corpora(config: dict, corpora: dict, synthetic: dict) -> None:
    """Each ``corpora:`` entry: a name no synthetic corpus has, its spec
    (:func:`same.data.corpusspec.check_corpus_spec`), and none of the workflow's outputs (the
    cache, the report folder, ``results/``, ``figures/``) inside a folder corpus's folder,
    which would read them as documents."""
    from same.data.corpusspec import check_corpus_spec, check_outside_corpus

    outputs = (("cache_dir", config.get("cache_dir")),
               ("report_dir", config.get("report_dir") or "results"),
               ("the workflow's output folder", "results"),
               ("the workflow's figure folder", "figures"))
    for name, spec in corpora.items():
        if name in synthetic:  # a UCI corpus's name: check_corpus_spec refuses it
            raise ValueError(f"config corpora.{name}: names a synthetic corpus too; its "
                             "outputs would overwrite that corpus's results/<name>/")
        try:
            check_corpus_spec(name, spec)  # its name, keys and values (encoding included)
            for key, path in outputs:
                if path:
                    check_outside_corpus(spec, path, key, f"corpora.{name}")
        except ValueError as exc:
            raise ValueError(f"config {exc}") from None


def _check_schema_strict(config: dict, schema: str | Path) -> None:
    from same.io.schema import check_schema

    check_schema(config, schema, "config")


def _schema_error_line(error) -> str:
    """``config <key path>: <message>`` of a jsonschema ValidationError, on one line."""
    from same.io.schema import error_key, error_message

    key = error_key(error)
    return f"config{' ' + key if key else ''}: {error_message(error)}"


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
