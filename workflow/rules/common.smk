# Shared definitions: which runs exist (label → method, budget, params, seeds) and the outputs.
# Run labels and run folders are made by same.experiments.plan (plan_runs and the *_labels functions the
# figures read), never here.
import json
import os
from pathlib import Path

from same.experiments.provenance import code_fingerprint
from same.report.captions import FIGURE_CLAIMS
from same.report.figures import figure_caption
from same.report.gpu import GPU_DIR, measurement_files
from same.data.corpus import REGISTRY
from same.data.corpusspec import corpus_files
from same.data.protocol import PAPER_MINIBATCHES
from same.experiments.runs import (M1_LABEL, MAIN_LABELS, fig1c_labels, m_sweep_labels, order_labels,
                       order_twins, prior_scale_labels, run_dir, schedule_labels,
                       sensitivity_runs, spec_for, study_runs)
from same.model.sampler import SameLDA
from same.data.planted import describe
from same.experiments.plan import tuned_twins

# Config values reach a shell command only as params given by a function (Snakemake reads
# braces in a plain string param as wildcards) and formatted quoted ({params.cache:q}; a list
# as its quoted items): a path holding spaces, quotes, `;`, `$(...)` or a newline is one
# argument, never shell code (tests/io/test_hostile_paths.py).  The cache and data folders
# are given as the config writes them: a relative one is the run folder's own (jobs run
# there), so a run folder moved or copied elsewhere keeps its params and reruns nothing (as
# absolute paths they changed with the move).
CACHE_DIR = str(config.get("cache_dir", "datasets"))
DATA_DIR_ARGS = [f"--data-dir={config['data_dir']}"] if config.get("data_dir") else []
CONDA_ENV = "../envs/same-lda.yaml"

# synthetic datasets (config `synthetic:`, the scale profile): drawn from LDA by rule
# synthesize, labelled SYNTHETIC in every caption; every other dataset is a UCI corpus (both
# checked with the whole config in the Snakefile, where RUNS comes from)
SYNTHETIC = config.get("synthetic") or {}
# claims.md and C9's scaling result (a profile on other data keeps its own, e.g. results/scale)
REPORT_DIR = config.get("report_dir") or "results"

K = config["n_components"]
# corpora named by their files (config `corpora:`, same.data.textcorpus): each becomes
# results/<name>/split.npz like any other dataset (rule split_corpus), and may set its own K
# (chosen for its training tokens per φ parameter)
CORPORA = config.get("corpora") or {}


def k_of(dataset):
    """K of ``dataset``'s runs: its corpora: entry's n_components, else the config's."""
    return (CORPORA.get(dataset) or {}).get("n_components", K)


TUNING = config.get("tuning") or {}
SEEDS = config["seeds"]
SEED0 = SEEDS[:1]
# Each rule takes, as a parameter, the fingerprint of the code it runs (same.experiments.provenance.
# code_fingerprint: syntax trees without docstrings, of the files beside this Snakefile):
# Snakemake reruns a job whose parameters changed, so a code change reruns the rules that
# run that code, and a comment or docstring edit reruns nothing.
CODE_ROOT = Path(workflow.basedir)
# every layer of same/ but the report (same.report: the report rules fingerprint it themselves)
PACKAGE_PATTERNS = ("same/*.py", "same/io/*.py", "same/data/*.py", "same/model/*.py",
                    "same/model/kernels/*.py", "same/experiments/*.py", "baselines/*.py")


def code(*patterns, exclude=()):
    """Fingerprint of the files ``patterns`` (globs relative to the repository) match."""
    return code_fingerprint(CODE_ROOT, patterns, exclude)


PACKAGE_CODE = code(*PACKAGE_PATTERNS)
# the CUDA kernels and their launch code: a fit on the CPU (backend numpy) never imports them
# (tests/experiments/test_cuda_only.py), so an edit of a GPU kernel reruns no CPU fit
CUDA_ONLY = ("same/model/kernels/cuda.py", "same/model/kernels/cuda_host.py",
             "same/model/kernels/cuda_sample.py", "same/model/kernels/cuda_summed.py",
             "same/model/kernels/cuda_warp.py", "same/model/kernels/launch.py",
             "same/model/kernels/ptx.py", "same/model/kernels/segments.py",
             "same/model/kernels/traffic.py")
# what a fit imports: not the command line, C9's benchmark or the scale profile's data and
# topic-recovery modules, nor on the CPU the CUDA kernels
FIT_CODE = code(*PACKAGE_PATTERNS,
                exclude=("same/experiments/size_cost.py", "same/experiments/cli.py",
                         "same/experiments/estimate.py", "same/experiments/estimate_probe.py",
                         "same/data/planted.py", "same/model/topic_recovery.py",
                         "same/data/textcorpus.py", "same/data/textclean.py",
                         "same/data/texttable.py", "same/data/corpusspec.py",
                         "same/data/newsgroups.py", "same/experiments/timing.py",
                         *(CUDA_ONLY if config["backend"] == "numpy" else ())))
FIGURE_FORMATS = ["png", "pdf"]


def with_twins(labels):
    """``labels`` and, after them, their tuned twins (same.experiments.plan.tuned_twins) the config plans."""
    twins = tuned_twins(config)
    return list(labels) + [twins[lab] for lab in labels if lab in twins]


def fig1c_legend():
    """Label → legend name of fig1c's runs (same.experiments.runs.fig1c_labels; SAME's tuned twin last)."""
    runs = fig1c_labels(config)
    m = f"SAME m={config['same']['n_copies']:g}"
    legend = {runs["same"]: m, **({runs["m1"]: "SAME m=1"} if "m1" in runs else {}),
              runs["cgs"]: "CGS (tomotopy)"}
    twin = tuned_twins(config).get(runs["same"])
    return legend | ({twin: f"{m}, tuned"} if twin else {})


def recovery_tables():
    """Dataset → its topic-recovery table, for the synthetic datasets (the claims read them)."""
    return {d: f"results/{d}/topic_recovery.csv" for d in config["datasets"] if d in SYNTHETIC}


def gpu_measurements():
    """The committed GPU measurements (same.report.gpu: GPU_DIR/<device>_<date>/
    same_<shape>_cupy.json, by benchmarks/gpu_same.py), which C6 reads where the m sweep ran
    on a CPU: inputs of rule claims, so that a new one re-renders claims.md."""
    return [str(p) for p in measurement_files(GPU_DIR)]


def prior_scale_runs():
    """Legend name → label of the two prior_scale settings (s = m and s = 1)."""
    names = {"paper": "prior_scale=paper (θ = T/m + α, φ̂ = P/m + β·N_t/N)",
             "bidmach": "prior_scale=bidmach (θ = T + α, φ̂ = P + β)",
             "paper_unscaled": "prior_scale=paper_unscaled (θ = T/m + α, φ̂ = P/m + β)"}
    return {names[scale]: label for scale, label in prior_scale_labels(config).items()}


# the fit rule's output folder, as a pattern of wildcards
RUN_DIR = run_dir("{dataset}", "{label}", "{K}", "{seed}")
# rule timing's seconds measured alone (timing.smk), which every report about time reads;
# config timing: null measures none (the timing verdicts then say "not judged")
TIMING = config.get("timing")
TIMING_FILE = "results/{dataset}/timing.json"


def timing_entries(dataset):
    """JSON of what is timed alone, {label: {"spec": its RunSpec, "tuned": bool}},
    for the main comparison's labels and their tuned twins (the other-order twins cost what
    their base runs cost)."""
    from dataclasses import asdict

    out = {}
    for label in with_twins(MAIN_LABELS):
        spec = spec_for(config, RUNS, label, SEEDS[0], k_of(dataset))
        out[label] = {"spec": asdict(spec), "tuned": bool(RUNS[label].get("tuned"))}
    return json.dumps(out, sort_keys=True)


def timing_inputs(wildcards):
    """The split and, when the config tunes, the tuning choice the tuned twins read."""
    inputs = {"split": f"results/{wildcards.dataset}/split.npz"}
    if tuning_labels():
        inputs["tuning"] = TUNING_CHOICE.format(dataset=wildcards.dataset)
    return inputs


def timing_file(dataset):
    """The dataset's timing.json, as an input of the rules about time: made by rule timing;
    in a report-only run, read when committed; [] when there is none (seconds refused)."""
    path = TIMING_FILE.format(dataset=dataset)
    if REPORT_ONLY:
        return [path] if Path(path).is_file() else []
    return [path] if TIMING else []
# rule tuning's choice, which the tuned fits read
TUNING_CHOICE = "results/{dataset}/tuning.json"


def trace(dataset, label, seed, k=None):
    """Trace path of one fit (the model and meta.json lie beside it); K: the dataset's."""
    return f"{run_dir(dataset, label, k_of(dataset) if k is None else k, seed)}/trace.csv"


def runs_on(dataset, label):
    """Whether run ``label`` of the table of runs is made on ``dataset``: every run is, but a
    run in the other document order only where that dataset's other_order names its method
    (same.experiments.runs.order_labels: a corpora: entry may set its own)."""
    twins = order_twins(config)
    base = next((lab for lab, twin in twins.items() if twin == label), None)
    return base is None or base in order_labels(config, dataset)


def traces(dataset, labels, seeds=None):
    """Trace paths of labels × seeds (× the crossover study's K values for its runs), of the
    runs made on ``dataset`` (runs_on)."""
    return [trace(dataset, lab, s, k) for lab in labels if runs_on(dataset, lab)
            for s in (seeds or RUNS[lab]["seeds"])
            for k in RUNS[lab].get("n_components", [k_of(dataset)])]


def tuning_choices():
    """Dataset → its tuning.json (rule tuning), when the config tunes (the claims read them)."""
    return ({d: TUNING_CHOICE.format(dataset=d) for d in config["datasets"]}
            if tuning_labels() else {})


def tuning_labels():
    """The tuning runs (same.experiments.plan.tuning_runs: on validation documents), in grid order."""
    return [lab for lab, r in RUNS.items() if "point" in r]


def study_labels():
    return list(study_runs(config))


def sensitivity_table():
    """{parameter: {value (as text): label}} of the sensitivity study."""
    out = {}
    for row in sensitivity_runs(config):
        out.setdefault(row["param"], {})[str(row["value"])] = row["label"]
    return out


def order_text(names):
    """The order each dataset's documents are stored in (same.data.order.order_description):
    "kos in file order (UCI)", "20news in one seeded shuffle (seed 0)"."""
    from same.data.order import order_description

    def one(d):
        if d in SYNTHETIC:
            return "as drawn"
        return order_description(CORPORA[d] if d in CORPORA else d)

    return "; ".join(f"{d} in {one(d)}" for d in names)


def dataset_title(dataset):
    """A dataset's name in captions: UCI corpora by name, synthetic ones said to be, corpora
    of the corpora: section with their source."""
    if dataset in SYNTHETIC:
        return describe(dataset, SYNTHETIC[dataset])
    if dataset in CORPORA:
        return f"{dataset} ({CORPORA[dataset]['source']} corpus)"
    return dataset


def all_outputs():
    out = []
    for d in config["datasets"]:
        if d in SYNTHETIC:
            out += expand(f"results/{d}/topic_recovery.{{ext}}", ext=["csv", "md", "html"])
        for fig in ("fig1_passes", "fig1_seconds", "fig1c_samples", *STUDY_FIGURES):
            out += expand(f"figures/{d}/{fig}.{{ext}}", ext=FIGURE_FORMATS)
        out += expand(f"results/{d}/{{table}}.{{ext}}", table=["table1", "time_to_quality",
                      *(["table2"] if m_sweep_labels(config) else [])], ext=["csv", "md", "html"])
        if tuning_labels():
            out += expand(f"results/{d}/tuning.{{ext}}", ext=["csv", "md", "json", "html"])
        if sensitivity_runs(config):
            out += expand(f"figures/{d}/sensitivity.{{ext}}", ext=FIGURE_FORMATS)
            out.append(f"results/{d}/sensitivity.csv")
        if study_labels():
            out += expand(f"figures/{d}/crossover_study.{{ext}}", ext=FIGURE_FORMATS)
            out += expand(f"results/{d}/crossover_study.{{ext}}", ext=["csv", "md", "html"])
    out += [f"{REPORT_DIR}/claims.md", f"{REPORT_DIR}/claims.html"]
    out += expand(f"{REPORT_DIR}/verdict_overview.{{ext}}", ext=FIGURE_FORMATS)
    out += scaling_result()
    return out


def shown_outputs(dataset):
    """The figures (PNG) and tables (Markdown) all_outputs makes for ``dataset`` that bear on a
    claim (same.report.captions.FIGURE_CLAIMS): claims.md names them under each verdict."""
    return [p for p in all_outputs() if p.startswith((f"figures/{dataset}/",
                                                      f"results/{dataset}/"))
            and p.endswith((".png", ".md")) and Path(p).stem in FIGURE_CLAIMS]


# the studies a profile may switch off (config: same.m_values, same.schedules,
# same.prior_scale_variant: null / false): their figures are made only where they run
STUDY_FIGURES = [fig for fig, on in (("fig2a_m", m_sweep_labels(config)),
                                     ("fig2b_anneal", schedule_labels(config)),
                                     ("prior_scale", prior_scale_labels(config))) if on]
# C9's benchmark result (rule scaling; a report-only run reads the committed one), where the
# profile runs it (config scaling: null: not)
SCALING_FILE = f"{REPORT_DIR}/scaling/same_cpu.json"
# the corpus whose make-up C9's synthetic corpora copy (config scaling.base, default the first
# dataset): a UCI corpus of the profile (or named there) by its registered shape, any other
# dataset by its split's training documents
SCALING_BASE = (config.get("scaling") or {}).get("base", config["datasets"][0])
REGISTERED = frozenset(REGISTRY) - set(SYNTHETIC) - set(CORPORA)
# the split whose training documents C9's sizes copy, or None for a registered shape
SCALING_SPLIT = None if SCALING_BASE in REGISTERED else f"results/{SCALING_BASE}/split.npz"


def scaling_result():
    """[C9's scaling result] where the profile runs the benchmark, else []."""
    return [SCALING_FILE] if config.get("scaling") else []


def fit_inputs(wildcards):
    """The fit rule's inputs: the split and, for a tuned run, its dataset's tuning choice."""
    inputs = {"split": rules.split.output.split.format(dataset=wildcards.dataset)}
    if RUNS[wildcards.label].get("tuned"):
        inputs["tuning"] = TUNING_CHOICE.format(dataset=wildcards.dataset)
    return inputs


# Timing-sensitive fits hold the machine alone. Table 2 and claim C6 compare the m sweep's
# seconds per pass across m, so each m sweep run (same.experiments.runs.m_sweep_labels, as published:
# table2 and C6 read those; the tuned twins feed C7's lls only) reserves every core Snakemake
# may use (threads: workflow.cores, as the scaling benchmark of C9 does), so the scheduler
# starts no other job beside it. The reservation is Snakemake's
# bookkeeping only: the run itself uses the config's `threads` (its spec's, pinned by the
# runner for numba, BLAS and tomotopy; meta.json records them), never the reserved count.
# Threads are no rerun trigger: traces made before this reservation are not redone by it.
TIMED_LABELS = frozenset(m_sweep_labels(config).values())


def all_cores(wildcards=None):
    """Every core Snakemake may use (--cores), reserved by a job that must run alone; 1 where
    no job runs and none was given (``snakemake --report``, ``-n``), where Snakemake's
    ``workflow.cores`` would stop the command."""
    try:
        return workflow.cores
    except WorkflowError:
        return 1


def fit_threads(wildcards):
    """Cores the fit job reserves: every core for a timed run (TIMED_LABELS), else the
    config's threads (what every run uses)."""
    return all_cores() if wildcards.label in TIMED_LABELS else config["threads"]


def fit_spec(wildcards):
    """The run spec (JSON) of one fit job, from the table of runs."""
    return spec_for(config, RUNS, wildcards.label, int(wildcards.seed), int(wildcards.K)).to_json()


def minibatch_text(batch_size):
    """SameLDA's batch_size in a caption: None is the paper's fraction, an int a count, a float
    a fraction."""
    if batch_size is None:
        return f"1/{PAPER_MINIBATCHES}"
    if isinstance(batch_size, int):
        return f"{batch_size} documents"
    return f"{batch_size:g} of the documents"


def setting(dataset, study=False, m_sweep=False, seeds=None, also_m=(), rows=(),
            studies=False, sweep=False, noise_seeds=False):
    """Caption of every figure and table: the dataset(s) (a name or a list) and the settings
    of the runs it reads (``study``: the crossover study's grid; ``m_sweep``: the m sweep's m
    values, sampler and passes; ``seeds``: the seeds it reads, if not every seed; ``also_m``:
    m of SAME runs it reads beside the main m, e.g. fig1c's m = 1; ``rows``: the labels whose
    configurations the figure draws as rows, said as published and tuned only where one of
    them has a tuned twin (``sweep``: only where every one has, the variants of one sweep);
    ``studies``: which studies the profile ran, claims.md's line; ``noise_seeds``: the figure
    also reads the main SAME run's every seed, for the seed noise its one-seed zooms draw)."""
    p = SameLDA(**RUNS["same"]["params"]).get_params()
    sampler = p["sampler"]
    ms = [p["n_copies"], *also_m]
    passes = f", {RUNS['same']['budget']} passes" + "".join(
        f", m={m:g} {RUNS[M1_LABEL]['budget']} passes" for m in also_m if m == 1)
    if m_sweep:
        ms = list(m_sweep_labels(config))
        sampler = config["same"].get("m_sampler", sampler)
        passes = m_sweep_passes_text()
    if study:
        st = config["crossover_study"]
        ks = f"K ∈ {st['n_components']}, training fraction ∈ {st['train_fractions']}"
        main = f"seeds {SEEDS}" if len(SEEDS) > 1 else f"seed {SEEDS[0]}"
        who = (f"seed {SEEDS[0]} per study point (the main comparison's {main}: the "
               "seed-to-seed spread a one-seed point is judged by, and the main setting's own "
               f"test), final ll only, CGS "
               f"{st.get('cgs_iterations', config['cgs']['iterations'])} iterations"
               + (f" ({st['note']})" if st.get("note") else ""))
    names = [dataset] if isinstance(dataset, str) else list(dataset)
    if not study:
        ks = (f"K={k_of(names[0])}" if len({k_of(d) for d in names}) == 1 else
              "K " + ", ".join(f"{k_of(d)} ({d})" for d in names))
        seeds = SEEDS if seeds is None else seeds
        who = f"seeds {seeds}" if len(seeds) > 1 else f"seed {seeds[0]}"
        if noise_seeds and len(SEEDS) > 1:
            who += f" (the zooms' seed noise: the main SAME run's seeds {SEEDS})"
    return (f"{' + '.join(dataset_title(d) for d in names)}, {ks}, α={config['doc_topic_prior']}, β={config['topic_word_prior']}, "
            f"SAME {m_text(ms)} ({sampler} sampler{passes}, "
            f"prior_scale={p['prior_scale']}, n_inner={p['n_inner']}, "
            f"minibatch {minibatch_text(p['batch_size'])}, "
            f"θ {'carried across passes' if p['keep_doc_topic'] else 'reset to 1 every pass'}"
            f"{', reshuffled once more by SAME (seeded)' if p['shuffle'] else ''}; documents "
            f"streamed in their stored order by SAME and VB online: {order_text(names)}), "
            + ("" if study or m_sweep else
               f"VB {RUNS['vb_online']['budget']} passes, CGS {RUNS['cgs']['budget']} "
               "iterations, ")
            + f"{who}, {config['threads']} thread(s)/job, "
            f"backend {config['backend']}; held-out ll by document completion unless a panel "
            "or column names the paper's metric"
            + (f"; {rows_text(rows, every=sweep)}" if rows else "")
            + (f"; {studies_text()}" if studies else "")
            + (f"; {TUNING['note']}" if TUNING.get("note") and not study else "")
            + (f"; {config['caption_note']}" if config.get("caption_note") else ""))


def m_sweep_passes_text():
    """The m sweep's passes in a caption, from the planned runs' budgets, beside the main
    runs' where they differ (fewer: with the profile's own same.m_sweep_note saying why)."""
    sweep = {RUNS[lab]["budget"] for lab in m_sweep_labels(config).values()}
    main = RUNS["same"]["budget"]
    text = f", {' / '.join(map(str, sorted(sweep)))} passes per run"
    if sweep == {main}:
        return text
    note = config["same"].get("m_sweep_note") if max(sweep) < main else None
    return text + f" (the main runs' {main}" + (f": {note}" if note else "") + ")"


def rows_text(labels, every=False):
    """What a figure's rows are: as published and tuned where one of ``labels`` has a tuned
    twin in this profile (same.experiments.plan.tuned_twins; ``every``: where every one has,
    as a sweep's rows are drawn: same.report.traces.configurations), else as published only."""
    published = "as published (the paper's / each library's defaults)"
    twinned = [lab in tuned_twins(config) for lab in labels]
    if every and any(twinned) and not all(twinned):
        return (f"rows: {published} only (not every one of these runs has a tuned twin in this "
                "profile, and no row compares a tuned run with untuned ones)")
    if any(twinned):
        return (f"rows: {published} and tuned (step sizes chosen on validation documents, "
                "tuning.md; runs without a tuning grid serve both)")
    why = ("no tuning in this profile" if not TUNING else
           "no tuned twins of these runs in this profile")
    return f"rows: {published} only ({why})"


def studies_text():
    """Which of the switchable studies the profile ran (claims.md's settings line): the m
    sweep, the schedules, the prior-scale variant, fig1c's m=1 run, C9's benchmark, tuning,
    the sensitivity and crossover studies and the other document order, with the config key
    that switches each off."""
    s = config["same"]
    factors = ", ".join(f"{f:g}" for f in (config.get("scaling") or {}).get("factors", ()))
    studies = [  # (what ran, whether it is planned, what switched it off)
        (f"m sweep {m_text(m_sweep_labels(config))}", m_sweep_labels(config),
         "m sweep (same.m_values: null)"),
        (f"schedules {', '.join(schedule_labels(config))}", schedule_labels(config),
         "schedules (same.schedules: null)"),
        ("prior-scale variant", prior_scale_labels(config),
         "prior-scale variant (same.prior_scale_variant: false)"),
        (f"fig1c's SAME m=1 run ({s.get('m1_passes')} passes)", "m1" in fig1c_labels(config),
         "fig1c's SAME m=1 run (same.m1_passes: null)"),
        (f"C9's scaling benchmark (factors {factors}, {SCALING_BASE}'s make-up)",
         config.get("scaling"), "C9's scaling benchmark (scaling: null)"),
        ("tuning on validation documents", TUNING, "tuning (tuning: null)"),
        ("sensitivity study", config.get("sensitivity"), "sensitivity study (sensitivity: null)"),
        ("crossover study", config.get("crossover_study"),
         "crossover study (crossover_study: null)"),
        (f"the other document order ({', '.join(order_labels(config))})", order_labels(config),
         "the other document order (other_order: false)")]
    on = ", ".join(ran for ran, planned, _ in studies if planned)
    off = ", ".join(why for _, planned, why in studies if not planned)
    return (f"studies run: {on or 'none beside the main comparison'}"
            f"{f'; not run in this profile: {off}' if off else ''}")


# snakemake --report results/report.html: every figure (PNG, PDF) and table (Markdown, CSV)
# of these rules is marked with report(), under the claims it bears on (category) and its
# figure or table (subcategory), labelled by dataset and format. Categories sort by name, so
# the verdicts come first. A caption is workflow/report/caption.rst filled with the rule's
# params.caption: same.report.figures.figure_caption's text, the one the figure draws.
REPORT_GROUPS = {
    "claims": ("All claims · verdicts", "claims summary (claims.md)"),
    "verdict_overview": ("All claims · verdicts", "verdict overview"),
    "fig1_passes": ("C1–C3 · held-out ll per pass and per sample", "Fig. 1a/b · ll vs passes"),
    "fig1c_samples": ("C1–C3 · held-out ll per pass and per sample",
                      "Fig. 1c · ll vs samples per word"),
    "fig1_seconds": ("C4–C5 · time to converge", "ll vs training seconds, seconds per pass"),
    "table1": ("C4–C5 · time to converge", "Table 1 · seconds per pass and to converge"),
    "time_to_quality": ("C4–C5 · time to converge", "time to quality"),
    "table2": ("C6 · seconds per pass vs m", "Table 2 · seconds per pass vs m"),
    "fig2a_m": ("C7 · held-out ll vs m", "Fig. 2a · ll vs passes for each m"),
    "fig2b_anneal": ("C8 · annealing schedules of m", "Fig. 2b · ll vs passes per schedule"),
    "crossover_study": ("Crossover study · which method wins at which scale", "crossover study"),
    "tuning": ("Settings · tuning, prior scale and sensitivity",
               "tuning on validation documents"),
    "prior_scale": ("Settings · tuning, prior scale and sensitivity", "prior scale"),
    "sensitivity": ("Settings · tuning, prior scale and sensitivity", "sensitivity"),
    "topic_recovery": ("Topic recovery · synthetic data", "topic recovery"),
}
CAPTION = "../report/caption.rst"


def for_report(name, path, caption=CAPTION):
    """Output ``path`` of figure or table ``name``, marked for ``snakemake --report``."""
    category, subcategory = REPORT_GROUPS[name]
    dataset = "{dataset}" if "{dataset}" in path else " + ".join(config["datasets"])
    return report(path, caption=caption, category=category, subcategory=subcategory,
                  labels={"dataset": dataset, "format": Path(path).suffix.lstrip(".")})


def figure_files(name):
    """Figure ``name``'s files (every format) of one dataset, marked for the report."""
    return [for_report(name, f"figures/{{dataset}}/{name}.{ext}") for ext in FIGURE_FORMATS]


def table_files(name, formats=("csv", "md")):
    """Table ``name``'s files of one dataset ({format: path}), marked for the report."""
    return {fmt: for_report(name, f"results/{{dataset}}/{name}.{fmt}") for fmt in formats}


def m_text(ms):
    """SAME's m in a caption: "m=100", or "m ∈ {1, 5, 100}" for several."""
    ms = sorted(set(ms))
    return f"m={ms[0]:g}" if len(ms) == 1 else "m ∈ {" + ", ".join(f"{m:g}" for m in ms) + "}"


# The runs each figure or table reads, where they are not the main comparison's every seed at
# its m: what its caption says (setting's arguments); tests/report/test_snakemake_report.py checks
# each caption's seeds and m against the runs the rule reads.
FIGURE_RUNS = {
    "fig1_passes": {"rows": MAIN_LABELS},
    "fig1_seconds": {"rows": MAIN_LABELS},
    "fig1c_samples": {"seeds": SEED0, "also_m": [1] if "m1" in fig1c_labels(config) else [],
                      "noise_seeds": True},
    "prior_scale": {"seeds": SEED0, "noise_seeds": True},
    "fig2a_m": {"m_sweep": True, "rows": list(m_sweep_labels(config).values()), "sweep": True},
    "fig2b_anneal": {"rows": list(schedule_labels(config).values()), "sweep": True},
    "table2": {"m_sweep": True},
    "crossover_study": {"study": True},
    "sensitivity": {"seeds": SEED0},
    # the seeds every tuning run ran (tuning.seeds; same.experiments.plan.tuning_runs)
    "tuning": {"seeds": RUNS[tuning_labels()[0]]["seeds"] if tuning_labels() else SEED0},
    "topic_recovery": {"seeds": SEED0},
}


def setting_param(name):
    """params.setting of figure or table ``name`` (what its figure draws under the plot)."""
    return lambda wc: setting(wc.dataset, **FIGURE_RUNS.get(name, {}))


def caption_param(name):
    """params.caption of figure or table ``name``: the text its figure draws under the plot."""
    return lambda wc: figure_caption(name, setting(wc.dataset, **FIGURE_RUNS.get(name, {})))


wildcard_constraints:
    dataset="[a-z0-9]+",
    label="[a-z0-9_.]+",  # same.experiments.runs.LABEL_PATTERN
    seed="[0-9]+",
