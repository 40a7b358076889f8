"""Test profiles derived from config/ci.yaml, one source for every test that runs them (a module
of its own name: ``from conftest import ...`` in tests/ found tests/report/conftest.py first
when the whole suite ran)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


#: Each SAME study of a profile's ``same:`` section, and the values that switch it off.
STUDIES_OFF = {"m sweep": {"m_values": None}, "schedules": {"schedules": None},
               "prior-scale variant": {"prior_scale_variant": False},
               "fig1c's m=1 run": {"m1_passes": None}}
#: The profile's other studies, each switched off.
OTHER_STUDIES_OFF = {"tuning": None, "sensitivity": None, "crossover_study": None,
                     "other_order": False}


def main_only(keep=()) -> dict:
    """A config delta that switches every study off but those of :data:`STUDIES_OFF` named in
    ``keep``: the main comparison's fits (and the kept studies'), the timing rule, C9's
    scaling, the figures, tables and claims."""
    same = {k: v for study, off in STUDIES_OFF.items() if study not in keep
            for k, v in off.items()}
    return {**OTHER_STUDIES_OFF, "same": same}


def one_seed_profile() -> dict:
    """The one-seed CI profile: config/ci.yaml with one seed and its main comparison and m sweep
    only (:func:`main_only`; no long fig1c CGS run either), the studies left out being more
    fits of the same rule the end-to-end test runs, so every rule kind runs (split, fit, the m
    sweep's fits timed alone, timing, C9's scaling, figures, tables, claims) in 8 fits."""
    import yaml

    profile = yaml.safe_load((REPO / "config/ci.yaml").read_text())
    off = main_only(keep=("m sweep",))
    cgs = {**profile["cgs"], "fig1c_iterations": profile["cgs"]["iterations"]}
    return {**profile, **off, "seeds": [0], "same": {**profile["same"], **off["same"]},
            "cgs": cgs}
