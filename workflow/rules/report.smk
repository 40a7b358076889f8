# Figures, tables and claim verdicts from the traces (no training or scoring here). Which
# runs each one reads comes from same.experiments.runs (MAIN_LABELS, the *_labels functions); params.code
# is the fingerprint of the code a rule runs (common.smk).

REPORT_PATTERNS = ("same/report/*.py", "workflow/scripts/report.py")
REPORT_CODE = code(*REPORT_PATTERNS)

# the report rules run where Snakemake runs, never as cluster jobs (topic_recovery, which
# loads every model, and the scaling benchmark, which needs a node of its own, are jobs)
localrules:
    fig1_passes,
    fig1_seconds,
    fig1c_samples,
    fig2a_m,
    fig2b_anneal,
    prior_scale,
    table1,
    time_to_quality,
    sensitivity,
    crossover_study,
    table2,
    claims,


rule fig1_passes:
    input:
        traces=lambda wc: traces(wc.dataset, with_twins(MAIN_LABELS)),
    output:
        figure_files("fig1_passes"),
    params:
        code=REPORT_CODE,
        setting=setting_param("fig1_passes"),
        caption=caption_param("fig1_passes"),
        max_passes=max(config["same"]["passes"], config["vb"]["passes"]),
    log:
        "results/logs/report/{dataset}/fig1_passes.log",
    benchmark:
        "results/snakemake_benchmarks/report/{dataset}/fig1_passes.tsv"
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


# the main comparison's held-out ll against training seconds (evaluation excluded), and
# each method's seconds per pass labelled with its implementation (C2, C4, C5)
rule fig1_seconds:
    input:
        traces=lambda wc: traces(wc.dataset, with_twins(MAIN_LABELS)),
        timing=lambda wc: timing_file(wc.dataset),  # seconds measured alone (timing.smk)
    output:
        figure_files("fig1_seconds"),
    params:
        code=REPORT_CODE,
        setting=setting_param("fig1_seconds"),
        caption=caption_param("fig1_seconds"),
    log:
        "results/logs/report/{dataset}/fig1_seconds.log",
    benchmark:
        "results/snakemake_benchmarks/report/{dataset}/fig1_seconds.tsv"
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


rule fig1c_samples:
    input:
        traces=lambda wc: traces(wc.dataset, list(fig1c_legend()), SEED0),
        # the main SAME run over its seeds: the seed noise the one-seed zooms draw
        spread=lambda wc: traces(wc.dataset, ["same"]),
    output:
        figure_files("fig1c_samples"),
    params:
        code=REPORT_CODE,
        setting=setting_param("fig1c_samples"),
        caption=caption_param("fig1c_samples"),
        labels=lambda wc: fig1c_legend(),
    log:
        "results/logs/report/{dataset}/fig1c_samples.log",
    benchmark:
        "results/snakemake_benchmarks/report/{dataset}/fig1c_samples.tsv"
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


rule fig2a_m:
    input:
        traces=lambda wc: traces(wc.dataset, with_twins(m_sweep_labels(config).values())),
    output:
        figure_files("fig2a_m"),
    params:
        code=REPORT_CODE,
        setting=setting_param("fig2a_m"),
        caption=caption_param("fig2a_m"),
        runs=m_sweep_labels(config),
    log:
        "results/logs/report/{dataset}/fig2a_m.log",
    benchmark:
        "results/snakemake_benchmarks/report/{dataset}/fig2a_m.tsv"
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


rule fig2b_anneal:
    input:
        traces=lambda wc: traces(wc.dataset, with_twins(schedule_labels(config).values())),
    output:
        figure_files("fig2b_anneal"),
    params:
        code=REPORT_CODE,
        setting=setting_param("fig2b_anneal"),
        caption=caption_param("fig2b_anneal"),
        runs=schedule_labels(config),
    log:
        "results/logs/report/{dataset}/fig2b_anneal.log",
    benchmark:
        "results/snakemake_benchmarks/report/{dataset}/fig2b_anneal.tsv"
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


rule prior_scale:
    input:
        traces=lambda wc: traces(wc.dataset, list(prior_scale_runs().values()), SEED0),
        spread=lambda wc: traces(wc.dataset, ["same"]),  # as fig1c_samples
    output:
        figure_files("prior_scale"),
    params:
        code=REPORT_CODE,
        setting=setting_param("prior_scale"),
        caption=caption_param("prior_scale"),
        runs=lambda wc: prior_scale_runs(),
    log:
        "results/logs/report/{dataset}/prior_scale.log",
    benchmark:
        "results/snakemake_benchmarks/report/{dataset}/prior_scale.tsv"
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


rule table1:
    input:
        traces=lambda wc: traces(wc.dataset, with_twins(MAIN_LABELS)),
        timing=lambda wc: timing_file(wc.dataset),  # seconds measured alone (timing.smk)
    output:
        **table_files("table1"),
    params:
        code=REPORT_CODE,
        setting=setting_param("table1"),
        caption=caption_param("table1"),
    log:
        "results/logs/report/{dataset}/table1.log",
    benchmark:
        "results/snakemake_benchmarks/report/{dataset}/table1.tsv"
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


rule time_to_quality:
    input:
        traces=lambda wc: traces(wc.dataset, with_twins(MAIN_LABELS)),
        timing=lambda wc: timing_file(wc.dataset),  # seconds measured alone (timing.smk)
    output:
        **table_files("time_to_quality"),
    params:
        code=REPORT_CODE,
        setting=setting_param("time_to_quality"),
        caption=caption_param("time_to_quality"),
    log:
        "results/logs/report/{dataset}/time_to_quality.log",
    benchmark:
        "results/snakemake_benchmarks/report/{dataset}/time_to_quality.tsv"
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


rule sensitivity:
    input:
        traces=lambda wc: traces(wc.dataset, sorted({r["label"] for r in sensitivity_runs(config)}),
                                 SEED0),
    output:
        figures=figure_files("sensitivity"),
        **table_files("sensitivity", ["csv"]),
    params:
        code=REPORT_CODE,
        setting=setting_param("sensitivity"),
        caption=caption_param("sensitivity"),
        runs=lambda wc: sensitivity_table(),
    log:
        "results/logs/report/{dataset}/sensitivity.log",
    benchmark:
        "results/snakemake_benchmarks/report/{dataset}/sensitivity.tsv"
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


# the study's points, and the main comparison's runs, every seed: drawn among them as a point
# of their own (their first seed, as the study runs one), and their seed-to-seed spread the
# noise a one-seed point is judged by (the same findings as claims.md's, from the same runs)
rule crossover_study:
    input:
        traces=lambda wc: traces(wc.dataset, study_labels()) + [
            t for lab in ("same", "vb_online", "vb_batch", "cgs")
            for t in traces(wc.dataset, [lab], RUNS[lab]["seeds"])],
    output:
        figures=figure_files("crossover_study"),
        **table_files("crossover_study"),
    params:
        code=REPORT_CODE,
        setting=setting_param("crossover_study"),
        caption=caption_param("crossover_study"),
        main_n_topics=lambda wc: k_of(wc.dataset),
    log:
        "results/logs/report/{dataset}/crossover_study.log",
    benchmark:
        "results/snakemake_benchmarks/report/{dataset}/crossover_study.tsv"
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


# every seed of the m sweep: the steady seconds per pass are the median over seeds
rule table2:
    input:
        traces=lambda wc: traces(wc.dataset, list(m_sweep_labels(config).values())),
    output:
        **table_files("table2"),
    params:
        code=REPORT_CODE,
        setting=setting_param("table2"),
        caption=caption_param("table2"),
        runs=m_sweep_labels(config),
    log:
        "results/logs/report/{dataset}/table2.log",
    benchmark:
        "results/snakemake_benchmarks/report/{dataset}/table2.tsv"
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


rule topic_recovery:
    input:
        traces=lambda wc: traces(wc.dataset, MAIN_LABELS, SEED0),
        models=lambda wc: [f"{run_dir(wc.dataset, lab, k_of(wc.dataset), SEEDS[0])}/model.npz"
                           for lab in MAIN_LABELS],
        truth="results/{dataset}/corpus.npz",  # rule synthesize
        split="results/{dataset}/split.npz",
    output:
        **table_files("topic_recovery"),
    params:
        code=code(*REPORT_PATTERNS, "same/model/topic_recovery.py", "same/data/planted.py"),
        setting=setting_param("topic_recovery"),
        caption=caption_param("topic_recovery"),
        labels=list(MAIN_LABELS),
        doc_topic_prior=config["doc_topic_prior"],
    threads: config["threads"]
    log:
        "results/logs/report/{dataset}/topic_recovery.log",
    benchmark:
        "results/snakemake_benchmarks/report/{dataset}/topic_recovery.tsv"
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


# C9's benchmark is a measurement, not a report: a report-only run reads its committed result;
# a profile with scaling: null runs none (C9 then judged across its datasets, or not run)
if not REPORT_ONLY and config.get("scaling"):

    rule scaling:
        input:
            # the base's shape: a UCI corpus's registered one (no file read), else the split's
            split=[SCALING_SPLIT] if SCALING_SPLIT else [],
        output:
            SCALING_FILE,
        params:
            code=PACKAGE_CODE,
            factors=config["scaling"]["factors"],
            base=lambda wc: (["--split", SCALING_SPLIT, "--name", SCALING_BASE] if SCALING_SPLIT
                             else ["--base", SCALING_BASE]),
            n_components=k_of(SCALING_BASE),
            n_copies=lambda wc: SameLDA(**RUNS["same"]["params"]).n_copies,
            sampler=lambda wc: SameLDA(**RUNS["same"]["params"]).sampler,
            threads=config["threads"],
        # measured at the fits' thread count, but holding every core, so that no other job runs
        # beside it: C9 compares seconds across sizes, and a fit on the other core moved them
        # by up to 1.4× between two runs of the same code
        threads: all_cores
        log:
            "results/logs/report/scaling.log",
        benchmark:
            "results/snakemake_benchmarks/report/scaling.tsv"
        conda:
            CONDA_ENV
        shell:
            "python -m same.experiments.size_cost --factors {params.factors:q} {params.base:q} "
            "--n-components {params.n_components:q} "
            "--n-copies {params.n_copies:q} --sampler {params.sampler:q} --threads {params.threads:q} "
            "--out {output:q} > {log:q} 2>&1"


rule claims:
    input:
        traces=[t for d in config["datasets"] for t in traces(d, list(RUNS))],
        scaling=scaling_result(),  # rule scaling ([] where the profile runs none)
        recovery=list(recovery_tables().values()),
        tuning=list(tuning_choices().values()),
        timing=[t for d in config["datasets"] for t in timing_file(d)],
        gpu=gpu_measurements(),  # committed GPU measurements: C6 where the m sweep ran on a CPU
    output:
        md=for_report("claims", f"{REPORT_DIR}/claims.md", "../report/claims.rst"),
        overview=[for_report("verdict_overview", f"{REPORT_DIR}/verdict_overview.{ext}")
                  for ext in FIGURE_FORMATS],
    params:
        code=REPORT_CODE,
        datasets=config["datasets"],
        m_runs=m_sweep_labels(config),
        schedule_runs=schedule_labels(config),
        fig1c=fig1c_labels(config),
        prior_scale_runs=lambda wc: prior_scale_runs(),
        recovery=recovery_tables(),
        tuning=tuning_choices(),
        timing={d: (timing_file(d) or [None])[0] for d in config["datasets"]},
        shown={d: shown_outputs(d) for d in config["datasets"]},
        setting=lambda wc: setting(config["datasets"], studies=True),
        caption=lambda wc: figure_caption("verdict_overview",
                                          setting(config["datasets"], studies=True)),
    log:
        "results/logs/report/claims.log",
    benchmark:
        "results/snakemake_benchmarks/report/claims.tsv"
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


# Every table and claims.md as an HTML page (same.report.html: the Markdown rendered by
# markdown-it-py), which `snakemake --report` shows in the page; the .md and .csv beside it are
# downloads there. One rule per table, so each page sits under its table's category.
PAGE_CODE = code("same/report/html.py", "same/io/outputs.py")
PAGE_TABLES = ("table1", "time_to_quality", "table2", "tuning", "crossover_study", "topic_recovery")

for _table in PAGE_TABLES:

    rule:
        name:
            f"{_table}_page"
        input:
            md=f"results/{{dataset}}/{_table}.md",
        output:
            html=for_report(_table, f"results/{{dataset}}/{_table}.html"),
        params:
            code=PAGE_CODE,
            caption=caption_param(_table),
        log:
            f"results/logs/report/{{dataset}}/{_table}_page.log",
        conda:
            CONDA_ENV
        shell:
            "python -m same.report.html {input.md:q} {output.html:q} > {log:q} 2>&1"


rule claims_page:
    input:
        md=f"{REPORT_DIR}/claims.md",
    output:
        html=for_report("claims", f"{REPORT_DIR}/claims.html", "../report/claims.rst"),
    params:
        code=PAGE_CODE,
        setting=lambda wc: setting(config["datasets"], studies=True),  # its caption's (claims.rst)
    log:
        "results/logs/report/claims_page.log",
    conda:
        CONDA_ENV
    shell:
        "python -m same.report.html {input.md:q} {output.html:q} > {log:q} 2>&1"


localrules:
    table1_page,
    time_to_quality_page,
    table2_page,
    tuning_page,
    crossover_study_page,
    topic_recovery_page,
    claims_page,
