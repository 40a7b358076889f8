# Figures, tables and claim verdicts from the traces (no training or scoring here).

REPORT_CODE = sorted(str(p) for p in (CODE_ROOT / "same/report").glob("*.py")) + code(
    "workflow/scripts/report.py")


rule fig1_passes:
    input:
        traces=lambda wc: traces(wc.dataset, ["same", "vb_online", "vb_batch", "cgs"]),
        code=REPORT_CODE,
    output:
        expand("figures/{{dataset}}/fig1_passes.{ext}", ext=FIGURE_FORMATS),
    params:
        setting=lambda wc: setting(wc.dataset),
        max_passes=max(config["same"]["passes"], config["vb"]["passes"]),
    log:
        "results/logs/report/{dataset}/fig1_passes.log",
    benchmark:
        "results/snakemake_benchmarks/report/{dataset}/fig1_passes.tsv"
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


rule fig1c_samples:
    input:
        traces=lambda wc: traces(wc.dataset, ["same", "same_m1_long", fig1c_cgs_label()], SEED0),
        code=REPORT_CODE,
    output:
        expand("figures/{{dataset}}/fig1c_samples.{ext}", ext=FIGURE_FORMATS),
    params:
        setting=lambda wc: setting(wc.dataset),
        labels=lambda wc: {"same": f"SAME m={config['same']['n_samples']:g}",
                           "same_m1_long": "SAME m=1", fig1c_cgs_label(): "CGS (tomotopy)"},
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
        traces=lambda wc: traces(wc.dataset, [m_label_run(m) for m in config["same"]["m_values"]]),
        code=REPORT_CODE,
    output:
        expand("figures/{{dataset}}/fig2a_m.{ext}", ext=FIGURE_FORMATS),
    params:
        setting=lambda wc: setting(wc.dataset, m_sweep=True),
        runs={m: m_label_run(m) for m in config["same"]["m_values"]},
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
        traces=lambda wc: traces(wc.dataset,
                                 [schedule_run(s) for s in config["same"]["schedules"]]),
        code=REPORT_CODE,
    output:
        expand("figures/{{dataset}}/fig2b_anneal.{ext}", ext=FIGURE_FORMATS),
    params:
        setting=lambda wc: setting(wc.dataset),
        runs={s: schedule_run(s) for s in config["same"]["schedules"]},
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
        code=REPORT_CODE,
    output:
        expand("figures/{{dataset}}/prior_scale.{ext}", ext=FIGURE_FORMATS),
    params:
        setting=lambda wc: setting(wc.dataset),
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
        traces=lambda wc: traces(wc.dataset, ["same", "vb_online", "vb_batch", "cgs"]),
        code=REPORT_CODE,
    output:
        csv="results/{dataset}/table1.csv",
        md="results/{dataset}/table1.md",
    params:
        setting=lambda wc: setting(wc.dataset),
    log:
        "results/logs/report/{dataset}/table1.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


rule time_to_quality:
    input:
        traces=lambda wc: traces(wc.dataset, ["same", "vb_online", "vb_batch", "cgs"]),
        code=REPORT_CODE,
    output:
        csv="results/{dataset}/time_to_quality.csv",
        md="results/{dataset}/time_to_quality.md",
    params:
        setting=lambda wc: setting(wc.dataset),
    log:
        "results/logs/report/{dataset}/time_to_quality.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


rule sensitivity:
    input:
        traces=lambda wc: traces(wc.dataset, sorted({r["label"] for r in sensitivity_runs(config)}),
                                 SEED0),
        code=REPORT_CODE,
    output:
        figures=expand("figures/{{dataset}}/sensitivity.{ext}", ext=FIGURE_FORMATS),
        csv="results/{dataset}/sensitivity.csv",
    params:
        setting=lambda wc: setting(wc.dataset),
        runs=lambda wc: sensitivity_table(),
    log:
        "results/logs/report/{dataset}/sensitivity.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


rule scale_study:
    input:
        traces=lambda wc: traces(wc.dataset, study_labels()),
        code=REPORT_CODE,
    output:
        figures=expand("figures/{{dataset}}/scale_study.{ext}", ext=FIGURE_FORMATS),
        csv="results/{dataset}/scale_study.csv",
        md="results/{dataset}/scale_study.md",
    params:
        setting=lambda wc: setting(wc.dataset, study=True),
        main_n_topics=K,
    log:
        "results/logs/report/{dataset}/scale_study.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


rule table2:
    input:
        traces=lambda wc: traces(wc.dataset, [m_label_run(m) for m in config["same"]["m_values"]],
                                 SEED0),
        code=REPORT_CODE,
    output:
        csv="results/{dataset}/table2.csv",
        md="results/{dataset}/table2.md",
    params:
        setting=lambda wc: setting(wc.dataset, m_sweep=True),
        runs={m: m_label_run(m) for m in config["same"]["m_values"]},
    log:
        "results/logs/report/{dataset}/table2.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


rule topic_recovery:
    input:
        traces=lambda wc: traces(wc.dataset, ["same", "vb_online", "vb_batch", "cgs"], SEED0),
        models=lambda wc: [trace(wc.dataset, lab, SEEDS[0]).replace("trace.csv", "model.npz")
                           for lab in ("same", "vb_online", "vb_batch", "cgs")],
        truth=rules.synthesize.output.corpus,
        split="results/{dataset}/split.npz",
        code=REPORT_CODE + code("same/recovery.py", "same/scale_data.py"),
    output:
        csv="results/{dataset}/topic_recovery.csv",
        md="results/{dataset}/topic_recovery.md",
    params:
        setting=lambda wc: setting(wc.dataset),
        labels=["same", "vb_online", "vb_batch", "cgs"],
        doc_topic_prior=config["doc_topic_prior"],
    threads: config["threads"]
    log:
        "results/logs/report/{dataset}/topic_recovery.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"


rule scaling:
    output:
        f"{REPORT_DIR}/scaling/same_cpu.json",
    input:
        code=PACKAGE_CODE,
    params:
        factors=" ".join(str(f) for f in config.get("scaling", {}).get("factors", [1, 2, 4, 8])),
        n_topics=K,
        n_samples=config["same"]["n_samples"],
        sampler=lambda wc: SameLDA(**RUNS["same"]["params"]).sampler,
        threads=config["threads"],
    # measured at the fits' thread count, but holding every core, so that no other job runs
    # beside it: C9 compares seconds across sizes, and a fit on the other core moved them
    # by up to 1.4× between two runs of the same code
    threads: workflow.cores
    log:
        "results/logs/report/scaling.log",
    benchmark:
        "results/snakemake_benchmarks/report/scaling.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m same.scaling --factors {params.factors} --n-topics {params.n_topics} "
        "--n-samples {params.n_samples} --sampler {params.sampler} --threads {params.threads} "
        "--out {output} > {log} 2>&1"


rule claims:
    input:
        traces=[t for d in config["datasets"] for t in traces(d, list(RUNS))],
        scaling=rules.scaling.output[0],
        recovery=[f"results/{d}/topic_recovery.csv" for d in config["datasets"] if d in SYNTHETIC],
        code=REPORT_CODE,
    output:
        f"{REPORT_DIR}/claims.md",
    params:
        datasets=config["datasets"],
        m_runs={m: m_label_run(m) for m in config["same"]["m_values"]},
        schedule_runs={s: schedule_run(s) for s in config["same"]["schedules"]},
        fig1c={"same": "same", "m1": "same_m1_long", "cgs": fig1c_cgs_label()},
        prior_scale_runs=lambda wc: prior_scale_runs(),
        setting=lambda wc: setting(config["datasets"]),
    log:
        "results/logs/report/claims.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/report.py"
