"""Test profiles derived from config/ci.yaml, one source for every test that runs them (a module
of its own name: ``from conftest import ...`` in tests/ found tests/report/conftest.py first
when the whole suite ran)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def one_seed_profile() -> dict:
    """The one-seed CI profile: config/ci.yaml with one seed and its main comparison and m sweep
    only (no tuning, sensitivity, crossover or other-order study, schedules, prior-scale
    variant or long fig1c runs, whose fits are more of the same rule the end-to-end test runs),
    so every rule kind runs (split, fit, the m sweep's fits timed alone, timing, C9's scaling,
    figures, tables, claims) in 8 fits."""
    import yaml

    profile = yaml.safe_load((REPO / "config/ci.yaml").read_text())
    same = {**profile["same"], "schedules": None, "m1_passes": None,
            "prior_scale_variant": False}
    cgs = {**profile["cgs"], "fig1c_iterations": profile["cgs"]["iterations"]}
    return {**profile, "seeds": [0], "same": same, "cgs": cgs, "tuning": None,
            "sensitivity": None, "crossover_study": None, "other_order": False}
