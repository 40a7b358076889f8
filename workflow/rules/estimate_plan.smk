# What the estimate (estimate.smk; same.experiments.estimate) prices: every fit of the table of
# runs (RUNS), the timing entries, C9's scaling and the report jobs of the default target
# (all_outputs), so a study switched off is a study not estimated.
from dataclasses import asdict

from same.experiments.runs import spec_for as _spec_for


def estimate_fits():
    """One entry per (dataset, run label, K) of the table of runs: its first seed's spec,
    how many seeds (jobs) and whether it holds every core (TIMED_LABELS)."""
    out = []
    for d in config["datasets"]:
        for lab, r in RUNS.items():
            if not runs_on(d, lab):
                continue
            for k in r.get("n_components", [k_of(d)]):
                spec = asdict(_spec_for(config, RUNS, lab, r["seeds"][0], k))
                out.append({"dataset": d, "label": lab, "spec": spec, "jobs": len(r["seeds"]),
                            "exclusive": lab in TIMED_LABELS})
    return out


def estimate_other_jobs():
    """Rule → its number of jobs, of the default target's outputs (all_outputs) that no fit
    makes: each output matched to the rule that makes it, one job per rule and wildcards."""
    jobs = set()
    for path in all_outputs():
        maker = next((r for r in workflow.rules
                      if r.name != "estimate" and r.is_producer(path)), None)
        if maker is not None:
            jobs.add((maker.name, tuple(sorted(maker.get_wildcards(path).items()))))
    counts = {}
    for name, _ in jobs:
        counts[name] = counts.get(name, 0) + 1
    return counts


def estimate_scaling():
    """C9's benchmark as the scaling job runs it (factors, the corpus it copies: a UCI
    corpus's registered shape or a split, K, SAME's m and sampler, threads)."""
    main = SameLDA(**RUNS["same"]["params"])
    return {"factors": config["scaling"]["factors"], "base": SCALING_BASE, "split": SCALING_SPLIT,
            "n_components": k_of(SCALING_BASE), "n_copies": main.n_copies,
            "sampler": main.sampler, "threads": config["threads"]}


def estimate_plan(wildcards, input):
    """The plan same.experiments.estimate prices (JSON)."""
    others = estimate_other_jobs()
    scaling = others.pop("scaling", 0)
    timing = ({d: {"entries": {lab: e["spec"] for lab, e in
                               json.loads(timing_entries(d)).items()},
                   "repeats": TIMING["repeats"], "cap_seconds": TIMING["cap_seconds"]}
               for d in config["datasets"]} if TIMING else {})
    plan = {"cores": all_cores(), "threads": config["threads"], "seeds": SEEDS,
            "splits": dict(zip(config["datasets"], input.splits)), "fits": estimate_fits(),
            "timing": timing, "reports": others,
            "scaling": estimate_scaling() if scaling else None}
    return json.dumps(plan, sort_keys=True)
