"""The workflow configuration checked as a whole, before any job (called from the Snakefile).

:func:`check_config` runs every check and returns :func:`same.runs.plan_runs`' table;
:func:`config_error_line` is the one line a user sees for what it (or Snakemake's schema
validation) refuses.
"""

from __future__ import annotations

from pathlib import Path

from .runs import SAME_CONFIG_PARAMS, _distinct, _is_int, plan_runs, spec_for

__all__ = ["check_config", "config_error_line"]


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
            spec_for(config, runs, label, run["seeds"][0], config["n_components"]).validate()
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
