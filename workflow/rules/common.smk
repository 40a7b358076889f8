# Shared definitions: which runs exist (label → method, budget, params, seeds) and the outputs.
import json
import os
from pathlib import Path

from same.runs import m_label, main_prior_scale, sensitivity_runs, spec_for, study_runs
from same.sampler import SameLDA
from same.scale_data import describe

CACHE_DIR = str(Path(config.get("cache_dir", "datasets")).resolve())
DATA_DIR_ARG = f"--data-dir {Path(config['data_dir']).resolve()}" if config.get("data_dir") else ""
CONDA_ENV = "../envs/same-lda.yaml"

# synthetic datasets (config `synthetic:`, the scale profile): drawn from LDA by rule
# synthesize, labelled SYNTHETIC in every caption; every other dataset is a UCI corpus (both
# checked with the whole config in the Snakefile, where RUNS comes from)
SYNTHETIC = config.get("synthetic") or {}
# claims.md and C9's scaling result (a profile on other data keeps its own, e.g. results/scale)
REPORT_DIR = config.get("report_dir") or "results"

K = config["n_topics"]
SEEDS = config["seeds"]
SEED0 = SEEDS[:1]
# the package's sources are inputs of the rules that use them, so code changes rerun them;
# absolute paths, so that `--directory` can put results elsewhere (CI's tiny run)
CODE_ROOT = Path(workflow.basedir)
PACKAGE_CODE = sorted(
    str(p) for pattern in ("same/*.py", "same/kernels/*", "baselines/*.py")
    for p in CODE_ROOT.glob(pattern)
    if p.suffix in (".py", ".cu"))
# what a fit imports: not the command line, C9's benchmark or the scale profile's data and
# topic-recovery modules
FIT_CODE = [p for p in PACKAGE_CODE
            if Path(p).name not in ("scaling.py", "cli.py", "scale_data.py", "recovery.py")]


def code(*names):
    return [str(CODE_ROOT / n) for n in names]
FIGURE_FORMATS = ["png", "pdf"]


def m_label_run(m):
    """Label of the m-sweep run with constant m (the main run when it is the same run)."""
    return m_label(config, m)


def schedule_run(sched):
    return "same" if sched == "constant" else f"same_{sched}"


def prior_scale_runs():
    """Legend name → label of the two prior_scale settings (s = m and s = 1)."""
    main = main_prior_scale(config)
    other = "bidmach" if main == "paper" else "paper"
    names = {"paper": "prior_scale=paper (θ = T/m + α, φ̂ = P/m + β·N_t/N)",
             "bidmach": "prior_scale=bidmach (θ = T + α, φ̂ = P + β)"}
    return {names[main]: "same", names[other]: f"same_scale_{other}"}


def fig1c_cgs_label():
    return "cgs_long" if "cgs_long" in RUNS else "cgs"


def trace(dataset, label, seed, k=K):
    return f"results/{dataset}/{label}/K{k}/seed{seed}/trace.csv"


def traces(dataset, labels, seeds=None):
    """Trace paths of labels × seeds (× the scale study's K values for its runs)."""
    return [trace(dataset, lab, s, k) for lab in labels for s in (seeds or RUNS[lab]["seeds"])
            for k in RUNS[lab].get("n_topics", [K])]


def study_labels():
    return list(study_runs(config))


def sensitivity_table():
    """{parameter: {value (as text): label}} of the sensitivity study."""
    out = {}
    for row in sensitivity_runs(config):
        out.setdefault(row["param"], {})[str(row["value"])] = row["label"]
    return out


def dataset_title(dataset):
    """A dataset's name in captions: UCI corpora by name, synthetic ones said to be."""
    return describe(dataset, SYNTHETIC[dataset]) if dataset in SYNTHETIC else dataset


def all_outputs():
    out = []
    for d in config["datasets"]:
        if d in SYNTHETIC:
            out += expand(f"results/{d}/topic_recovery.{{ext}}", ext=["csv", "md"])
        for fig in ("fig1_passes", "fig1c_samples", "fig2a_m", "fig2b_anneal", "prior_scale"):
            out += expand(f"figures/{d}/{fig}.{{ext}}", ext=FIGURE_FORMATS)
        out += expand(f"results/{d}/{{table}}.{{ext}}",
                      table=["table1", "table2", "time_to_quality"], ext=["csv", "md"])
        if sensitivity_runs(config):
            out += expand(f"figures/{d}/sensitivity.{{ext}}", ext=FIGURE_FORMATS)
            out.append(f"results/{d}/sensitivity.csv")
        if study_labels():
            out += expand(f"figures/{d}/scale_study.{{ext}}", ext=FIGURE_FORMATS)
            out += expand(f"results/{d}/scale_study.{{ext}}", ext=["csv", "md"])
    out.append(f"{REPORT_DIR}/claims.md")
    out.append(f"{REPORT_DIR}/scaling/same_cpu.json")
    return out


def fit_spec(wildcards):
    """The run spec (JSON) of one fit job, from the table of runs."""
    return spec_for(config, RUNS, wildcards.label, int(wildcards.seed), int(wildcards.K)).to_json()


def minibatch_text(batch_size):
    """SameLDA's batch_size in a caption: None is 1/20, an int a count, a float a fraction."""
    if batch_size is None:
        return "1/20"
    if isinstance(batch_size, int):
        return f"{batch_size} documents"
    return f"{batch_size:g} of the documents"


def setting(dataset, study=False, m_sweep=False):
    """Caption of every figure and table: the dataset(s) (a name or a list) and the
    comparison's shared settings (``study``: the scale study's grid; ``m_sweep``: the m
    sweep's sampler)."""
    p = SameLDA(**RUNS["same"]["params"]).get_params()
    sampler = p["sampler"]
    if m_sweep:
        sampler = config["same"].get("m_sampler", sampler)
    if study:
        st = config["scale_study"]
        ks = f"K ∈ {st['n_topics']}, training fraction ∈ {st['train_fractions']}"
        who = (f"seed {SEEDS[0]}, final ll only, CGS "
               f"{st.get('cgs_iterations', config['cgs']['iterations'])} iterations")
    else:
        ks, who = f"K={K}", f"seeds {SEEDS}"
    names = [dataset] if isinstance(dataset, str) else list(dataset)
    return (f"{' + '.join(dataset_title(d) for d in names)}, {ks}, α={config['doc_topic_prior']}, β={config['topic_word_prior']}, "
            f"SAME m={p['n_samples']:g} ({sampler} sampler, "
            f"prior_scale={p['prior_scale']}, n_inner={p['n_inner']}, "
            f"minibatch {minibatch_text(p['batch_size'])}, "
            f"θ {'carried across passes' if p['keep_doc_topic'] else 'reset to 1 every pass'}, "
            f"{'documents shuffled once (seeded)' if p['shuffle'] else 'corpus order'}; VB "
            f"online also in corpus order), {who}, {config['threads']} thread(s)/job, "
            f"backend {config['backend']}; held-out ll by document completion"
            + (f"; {config['caption_note']}" if config.get("caption_note") else ""))


wildcard_constraints:
    dataset="[a-z]+",
    label="[a-z0-9_.]+",  # same.runs.LABEL_PATTERN
    seed="[0-9]+",
