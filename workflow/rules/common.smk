# Shared definitions: which runs exist (label → method, budget, params, seeds) and the outputs.
import os
from pathlib import Path

CACHE_DIR = str(Path(config.get("cache_dir", "datasets")).resolve())
DATA_DIR_ARG = f"--data-dir {Path(config['data_dir']).resolve()}" if config.get("data_dir") else ""
CONDA_ENV = "../envs/same-lda.yaml"

K = config["n_topics"]
SEEDS = config["seeds"]
SEED0 = SEEDS[:1]
# the package's sources are inputs of the rules that use them, so code changes rerun them;
# absolute paths, so that `--directory` can put results elsewhere (CI's tiny run)
CODE_ROOT = Path(workflow.basedir)
PACKAGE_CODE = sorted(
    str(p) for pattern in ("same/*.py", "same/kernels/*", "baselines/*.py")
    for p in CODE_ROOT.glob(pattern)
    if p.name not in ("report.py", "provenance.py", "scaling.py") and p.suffix in (".py", ".cu"))


def code(*names):
    return [str(CODE_ROOT / n) for n in names]
FIGURE_FORMATS = ["png", "pdf"]


def _m_label(m):
    return f"{m:g}"


def _same_params(**overrides):
    s = config["same"]
    params = {"n_samples": s["n_samples"], "sampler": s.get("sampler", "nonzero"),
              "prior_scale": s.get("prior_scale", "bidmach"),
              "learning_rate": s.get("learning_rate", "bidmach"), "n_inner": s.get("n_inner", 5)}
    params.update(overrides)
    return params


def _runs():
    s, c, v = config["same"], config["cgs"], config["vb"]
    runs = {
        "same": dict(method="same", budget=s["passes"], params=_same_params(), seeds=SEEDS),
        "vb_online": dict(method="vb_online", budget=v["passes"], params={}, seeds=SEEDS),
        "vb_batch": dict(method="vb_batch", budget=v["passes"], params={}, seeds=SEEDS),
        "cgs": dict(method="cgs", budget=c["iterations"], params={}, seeds=SEEDS),
    }
    for m in s["m_values"]:
        if m != s["n_samples"]:
            runs[f"same_m{_m_label(m)}"] = dict(method="same", budget=s["passes"],
                                                params=_same_params(n_samples=m), seeds=SEED0)
    for sched in s["schedules"]:
        if sched != "constant":
            runs[f"same_{sched}"] = dict(method="same", budget=s["passes"],
                                         params=_same_params(m_schedule=sched), seeds=SEED0)
    other_scale = "bidmach" if s.get("prior_scale", "bidmach") == "paper" else "paper"
    runs[f"same_scale_{other_scale}"] = dict(method="same", budget=s["passes"],
                                             params=_same_params(prior_scale=other_scale),
                                             seeds=SEED0)
    runs["same_m1_long"] = dict(method="same", budget=s["m1_passes"],
                                params=_same_params(n_samples=1), seeds=SEED0)
    if c["fig1c_iterations"] != c["iterations"]:
        runs["cgs_long"] = dict(method="cgs", budget=c["fig1c_iterations"], params={}, seeds=SEED0)
    return runs


RUNS = _runs()


def m_label_run(m):
    """Label of the SAME run with constant m (the main run when m equals n_samples)."""
    return "same" if m == config["same"]["n_samples"] else f"same_m{_m_label(m)}"


def schedule_run(sched):
    return "same" if sched == "constant" else f"same_{sched}"


def prior_scale_runs():
    """Legend name → label of the two prior_scale settings (s = m and s = 1)."""
    main = config["same"].get("prior_scale", "bidmach")
    other = "bidmach" if main == "paper" else "paper"
    names = {"paper": "prior_scale=paper (θ = T/m + α)", "bidmach": "prior_scale=bidmach (θ = T + α)"}
    return {names[main]: "same", names[other]: f"same_scale_{other}"}


def fig1c_cgs_label():
    return "cgs_long" if "cgs_long" in RUNS else "cgs"


def trace(dataset, label, seed):
    return f"results/{dataset}/{label}/K{K}/seed{seed}/trace.csv"


def traces(dataset, labels, seeds=None):
    return [trace(dataset, lab, s) for lab in labels for s in (seeds or RUNS[lab]["seeds"])]


def all_outputs():
    out = []
    for d in config["datasets"]:
        for fig in ("fig1_passes", "fig1c_samples", "fig2a_m", "fig2b_anneal", "prior_scale"):
            out += expand(f"figures/{d}/{fig}.{{ext}}", ext=FIGURE_FORMATS)
        out += expand(f"results/{d}/{{table}}.{{ext}}", table=["table1", "table2"],
                      ext=["csv", "md"])
    out.append("results/claims.md")
    out.append("results/scaling/same_cpu.json")
    return out


def fit_args(wildcards):
    run = RUNS[wildcards.label]
    params = " ".join(f"--param {k}={v}" for k, v in run["params"].items())
    return f"--method {run['method']} --budget {run['budget']} {params}"


def setting(dataset):
    s = config["same"]
    return (f"{dataset}, K={K}, α={config['doc_topic_prior']}, β={config['topic_word_prior']}, "
            f"SAME m={s['n_samples']:g} ({s.get('sampler', 'nonzero')} sampler, "
            f"prior_scale={s.get('prior_scale', 'bidmach')}, n_inner={s.get('n_inner', 5)}, "
            f"minibatch 1/20), seeds {SEEDS}, {config['threads']} thread(s)/job, "
            f"backend {config['backend']}; held-out ll by document completion")


wildcard_constraints:
    dataset="[a-z]+",
    label="[a-z0-9_.]+",
    seed="[0-9]+",
