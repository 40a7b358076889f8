"""The table of runs a workflow config implies: :func:`plan_runs` (runs as data).

:func:`plan_runs` turns a workflow configuration (``config/config.yaml``) into the table of
runs label → (method, budget, params, seeds) that every figure, table and claim reads: the
main comparison, the SAME variants, the sensitivity and density studies
(:mod:`same.experiments.runs` gives their labels and entries), and the tuning runs and tuned
twins (:func:`tuning_runs`, :func:`tuned_twins`; the choice itself is
:mod:`same.experiments.tuning`'s).  Each run is trained from a
:class:`same.experiments.spec.RunSpec` (:func:`same.experiments.runs.spec_for`).
"""

from __future__ import annotations

from .runs import (
    M1_LABEL,
    MAIN_LABELS,
    ORDER_PARAM,
    SENS_MAIN_LABEL,
    _check_same_batch_size,
    _distinct,
    _RunTable,
    fig1c_labels,
    m_sweep_labels,
    order_twins,
    prior_scale_labels,
    same_params,
    schedule_labels,
    sensitivity_runs,
    study_runs,
    validation_fraction,
)
from .tuning import TUNED_METHODS, grid_points, tuned_label, tuning_label

__all__ = ["plan_runs", "tuning_runs", "plan_tuning", "tuned_twins"]


def plan_runs(config: dict) -> dict[str, dict]:
    """The table of runs of a workflow config: label → {method, budget, params, seeds, ...}.

    The main comparison (:data:`MAIN_LABELS`: SAME, both VB implementations, CGS) and the SAME variants
    that claims C7 and C8 compare (other m, annealing schedules) run every seed, so those
    verdicts rest on the seed spread; fig1c's m=1 run, the prior-scale variant, the
    sensitivity variants (:func:`sensitivity_runs`) and the scale study
    (:func:`study_runs`) run the first.  The m sweep (fig2a, table2, C6, C7) uses
    ``same.m_sampler`` (default: the main sampler), every m a run of its own.  The m sweep,
    the schedules, the prior-scale variant and fig1c's m=1 run are each planned only where
    the profile switches them on (:func:`_plan_same_variants`).  Entries may carry ``n_components`` (a list: the
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
    _distinct("same.m_values", s["m_values"] or ())
    _distinct("same.schedules", s["schedules"] or ())
    _check_same_batch_size(s)
    seeds, seed0 = list(config["seeds"]), list(config["seeds"][:1])

    def run(method, budget, params=None, run_seeds=seed0, **extra):
        return {"method": method, "budget": int(budget), "params": params or {},
                "seeds": list(run_seeds), **extra}

    runs = _RunTable()
    budgets = {"same": s["passes"], "vb_online": v["passes"], "vb_batch": v["passes"],
               "sklearn_online": v["passes"], "sklearn_batch": v["passes"],
               "cgs": c["iterations"]}
    for label in MAIN_LABELS:
        runs.add(label, run(label, budgets[label],
                            same_params(config) if label == "same" else None, seeds),
                 f"the main {label} run")
    _plan_same_variants(config, runs, run, seeds)
    fig1c = fig1c_labels(config)
    if fig1c["cgs"] != "cgs":
        runs.add(fig1c["cgs"], run("cgs", c["fig1c_iterations"]), "cgs.fig1c_iterations")
    for label, twin in order_twins(config).items():  # the online methods in the other order
        runs.add(twin, {**runs[label], ORDER_PARAM: "other"}, "other_order")
    for row in sensitivity_runs(config):
        if row["label"] != SENS_MAIN_LABEL or row["label"] not in runs:  # the main setting:
            # one run, however many parameters; any other label planned twice is refused
            param, value = row["param"], row["value"]
            order = param == ORDER_PARAM  # a run setting, not a SameLDA parameter
            runs.add(row["label"],
                     run("same", s["passes"],
                         same_params(config) if order else same_params(config, **{param: value}),
                         validation_fraction=validation_fraction(config),
                         **({ORDER_PARAM: value} if order else {})),
                     f"sensitivity.{param}: {value!r}")
    study = study_runs(config)
    for label, entry in study.items():
        runs.add(label, entry, study.origin[label])
    plan_tuning(config, runs)
    return dict(runs)


def _plan_same_variants(config: dict, runs: _RunTable, run, seeds: list) -> None:
    """Add the SAME variants of the figures to ``runs`` (``run`` makes an entry, first seed
    unless given ``seeds``): the m sweep and the schedules (every seed), the prior-scale
    variant and fig1c's m=1 run, each only where the profile switches it on."""
    s = config["same"]
    m_sampler = s.get("m_sampler")
    for m, label in m_sweep_labels(config).items():
        extra = {"sampler": m_sampler} if m_sampler else {}
        runs.add(label, run("same", s.get("m_sweep_passes", s["passes"]),
                            same_params(config, n_copies=m, **extra), seeds),
                 f"same.m_values: {m!r}")
    for sched, label in schedule_labels(config).items():
        if label != "same":
            runs.add(label,
                     run("same", s["passes"], same_params(config, m_schedule=sched), seeds),
                     f"same.schedules: {sched!r}")
    for scale, label in prior_scale_labels(config).items():
        if label != "same":
            runs.add(label, run("same", s["passes"], same_params(config, prior_scale=scale)),
                     "the prior_scale variant")
    if "m1" in fig1c_labels(config):
        runs.add(M1_LABEL, run("same", s["m1_passes"], same_params(config, n_copies=1)),
                 "same.m1_passes")


def tuning_runs(config: dict, base_params) -> dict[str, dict]:
    """The tuning runs of a workflow config: label → run entry (method, budget, params,
    seeds, validation_fraction, checkpoints, ``point``: the grid's settings).

    ``base_params(method)`` gives the method's params of its main run (for SAME the config's
    settings), which each grid point overrides.  Every grid point runs the first
    ``tuning.seeds`` of the config's ``seeds`` (default
    :data:`same.experiments.tuning.TUNING_SEEDS`; all of them where fewer are configured),
    so the choice rests on a mean over seeds (:func:`same.experiments.tuning.choose`).  No
    ``tuning:`` section: no runs.

    Raises
    ------
    ValueError
        One line naming the key: a method without a step size, grids of unequal size, a
        value given twice, two grid points with one label (0.3 and 0.30000001 both print as
        ``0.3``: one run would silently vanish and the grids' sizes differ),
        ``tuning.seeds`` not an integer ≥ 1 (worded as the schema's check words it).
    """
    t = config.get("tuning")
    if not t:
        return {}
    grids = t["grids"]
    for method in grids:
        if method not in TUNED_METHODS:
            raise ValueError(f"config tuning.grids.{method}: not a method with a step size "
                             f"(tuned: {', '.join(TUNED_METHODS)}; VB batch and CGS have none)")
        for param, values in grids[method].items():
            _distinct(f"tuning.grids.{method}.{param}", values)
    sizes = {m: len(grid_points(g)) for m, g in grids.items()}
    if len(set(sizes.values())) > 1:
        raise ValueError("config tuning.grids: every method's grid must have the same number "
                         "of configurations, got " + ", ".join(f"{m} {n}" for m, n in
                                                               sizes.items()))
    from .runs import _is_int
    from .tuning import TUNING_SEEDS

    n_seeds = t.get("seeds", TUNING_SEEDS)
    if not _is_int(n_seeds):  # as the schema's strict check words it (config.check_config)
        raise ValueError(f"config tuning.seeds: {n_seeds!r} is not of type 'integer'")
    if n_seeds < 1:
        raise ValueError(f"config tuning.seeds: {n_seeds!r} is less than the minimum of 1")
    seeds = list(config["seeds"][:n_seeds])
    budgets = {"same": config["same"]["passes"], "vb_online": config["vb"]["passes"],
               "sklearn_online": config["vb"]["passes"]}
    if t.get("passes") is not None:  # shortened tuning runs (the quick profile's 30 minutes)
        budgets = dict.fromkeys(budgets, t["passes"])
    runs = _RunTable()  # refuses two points with one label, as every other run family
    for method, grid in grids.items():
        for point in grid_points(grid):
            runs.add(tuning_label(method, point), {
                "method": method, "budget": int(budgets[method]),
                "params": {**base_params(method), **point}, "seeds": list(seeds),
                "validation_fraction": float(t["validation_fraction"]), "checkpoints": "final",
                "point": point}, f"tuning.grids.{method}: {point!r}")
    return dict(runs)


def plan_tuning(config: dict, runs) -> None:
    """Add to ``runs`` (:func:`same.experiments.runs.plan_runs`' table) the tuning runs
    (:func:`tuning_runs`, on validation documents) and the tuned twin of every run
    :func:`tuned_twins` names (same entry, ``tuned``: its method's chosen settings are applied
    from ``tuning.json`` when it runs; config ``tuning.tuned_variant_seeds: first`` runs the
    m sweep's and schedules' twins at the first seed only)."""
    planned = tuning_runs(config, lambda m: same_params(config) if m == "same" else {})
    for label, entry in planned.items():
        runs.add(label, entry, f"tuning.grids.{entry['method']}: {entry['point']!r}")
    first = (config.get("tuning") or {}).get("tuned_variant_seeds", "all") == "first"
    for label, twin in tuned_twins(config).items():
        entry = {**runs[label], "tuned": True}
        if first and label not in MAIN_LABELS:  # the m sweep's and schedules' twins
            entry["seeds"] = entry["seeds"][:1]
        runs.add(twin, entry, f"the tuned twin of {label!r}")


def tuned_twins(config: dict) -> dict[str, str]:
    """Published run label → its tuned twin's label, for every run of the configurations'
    comparisons whose method has a tuning grid (config ``tuning.grids``): the main comparison's
    SAME and online VB runs (every seed) and, when SAME is tuned, the m sweep and the
    annealing schedules (claims C6–C8 in the tuned configuration).  VB batch and CGS have no
    step size and no twin: both configurations read their one run.  ``tuning.tuned_variant_seeds:
    none`` plans no twins of the m sweep and schedules (C6–C8 then judged as published only)."""
    t = config.get("tuning") or {}
    grids = t.get("grids") or {}
    labels = [lab for lab in MAIN_LABELS if lab in grids]
    if "same" in grids and t.get("tuned_variant_seeds", "all") != "none":
        labels += [*m_sweep_labels(config).values(), *schedule_labels(config).values()]
    return {lab: tuned_label(lab) for lab in dict.fromkeys(labels)}
