"""Runs as data: the run table of a workflow config, run specs, and one source of defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from sklearn.utils._param_validation import Interval, StrOptions

from same.runs import SAME_CONFIG_PARAMS, RunSpec, plan_runs, same_params, spec_for
from same.sampler import SameLDA

REPO = Path(__file__).resolve().parents[1]


def load_config(*deltas):
    cfg = yaml.safe_load((REPO / "config/config.yaml").read_text())
    for name in deltas:  # Snakemake merges --configfile over the default, key by key
        for key, value in yaml.safe_load((REPO / "config" / name).read_text()).items():
            if isinstance(value, dict):
                cfg.setdefault(key, {}).update(value)
            else:
                cfg[key] = value
    return cfg


def schema_same():
    schema = yaml.safe_load((REPO / "config/config.schema.yaml").read_text())
    return schema["properties"]["same"]["properties"]


def test_schema_same_keys_are_the_estimators():
    estimator_keys = set(schema_same()) & set(SameLDA().get_params())
    assert estimator_keys == set(SAME_CONFIG_PARAMS)


@pytest.mark.parametrize("key", SAME_CONFIG_PARAMS)
def test_schema_defaults_and_choices_match_the_estimator(key):
    prop = schema_same()[key]
    default = SameLDA().get_params()[key]
    if "default" in prop:
        assert prop["default"] == default, key
    constraints = SameLDA._parameter_constraints[key]
    options = [c for c in constraints if isinstance(c, StrOptions)]
    if options:
        assert set(prop["enum"]) == set(options[0].options), key
    intervals = [c for c in constraints if isinstance(c, Interval)]
    if intervals:
        iv = intervals[0]
        lower = prop.get("exclusiveMinimum", prop.get("minimum"))
        assert lower == iv.left, key
        assert ("exclusiveMinimum" in prop) == (iv.closed in ("right", "neither")), key


@pytest.mark.parametrize("deltas", [(), ("ci.yaml",), ("paper.yaml",)])
def test_every_planned_run_validates(deltas):
    cfg = load_config(*deltas)
    runs = plan_runs(cfg)
    assert {"same", "vb_online", "vb_batch", "cgs", "same_m1_long"} <= set(runs)
    for label, run in runs.items():
        spec = spec_for(cfg, runs, label, run["seeds"][0], cfg["n_topics"])
        assert spec.validate() is spec
        assert RunSpec.from_json(spec.to_json()) == spec
    assert runs["same"]["seeds"] == cfg["seeds"] and runs["same_m1_long"]["seeds"] == cfg["seeds"][:1]


def test_config_silent_keys_take_estimator_defaults():
    cfg = load_config()
    cfg["same"] = {k: v for k, v in cfg["same"].items() if k not in ("sampler", "n_inner")}
    params = same_params(cfg)
    assert "sampler" not in params and "n_inner" not in params
    model = SameLDA(**params)
    assert model.sampler == "nonzero" and model.n_inner == 5


def test_variants_change_one_setting_each():
    cfg = load_config()
    runs = plan_runs(cfg)
    main = runs["same"]["params"]
    for label, run in runs.items():
        if run["method"] != "same" or label == "same":
            continue
        changed = {k for k in set(main) | set(run["params"])
                   if main.get(k) != run["params"].get(k)}
        assert len(changed) == 1, (label, changed)


def test_spec_json_is_what_the_workflow_passes():
    cfg = load_config("ci.yaml")
    runs = plan_runs(cfg)
    spec = json.loads(spec_for(cfg, runs, "same_invlinear", 0, 8).to_json())
    assert spec["method"] == "same" and spec["params"]["m_schedule"] == "invlinear"
    assert spec["n_topics"] == 8 and spec["doc_topic_prior"] == cfg["doc_topic_prior"]
    assert spec["label"] == "same_invlinear" and spec["backend"] == "numpy"
