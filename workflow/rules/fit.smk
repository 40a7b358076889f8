# One training run of one method (label) and seed, through the shared runner; the run's
# spec (JSON) comes from the table of runs (same.experiments.plan.plan_runs), validated at parse time,
# and its folder from same.experiments.runs.run_dir. A tuned run (same.experiments.plan.tuned_twins) also reads its
# dataset's tuning.json (rule tuning), whose choice it applies over the spec's params.
# params.code: the fingerprint of the code a fit runs, so that a code change reruns the fits
# and a docstring or comment edit does not.
# Timing-sensitive fits hold the machine alone: the m sweep's fits (TIMED_LABELS, common.smk)
# reserve every core Snakemake may use, so no other job runs beside them while they are timed
# (table2, C6); the run itself uses only the config's threads (fit_threads, common.smk).


rule fit:
    input:
        unpack(fit_inputs),
    output:
        trace=f"{RUN_DIR}/trace.csv",
        model=f"{RUN_DIR}/model.npz",
        meta=f"{RUN_DIR}/meta.json",
    params:
        spec=fit_spec,
        out=lambda wc, output: str(Path(output.trace).parent),
        code=FIT_CODE,
        tuning=lambda wc, input: ["--tuning", input.tuning] if "tuning" in input.keys() else [],
    # Snakemake's reservation (every core for the m sweep, common.smk's fit_threads); the run
    # uses its spec's threads, the config's
    threads: fit_threads
    resources:
        gpu=lambda wc: 1 if (config["backend"] == "cupy" and RUNS[wc.label]["method"] == "same") else 0,
        # on a SLURM cluster (profiles/slurm) a timed run asks for a node of its own, as it
        # holds every core on one machine (fit_threads); sbatch's option, unused elsewhere
        slurm_extra=lambda wc: "--exclusive" if wc.label in TIMED_LABELS else "",
    log:
        "results/logs/fit/{dataset}/{label}/K{K}/seed{seed}.log",
    benchmark:
        "results/snakemake_benchmarks/fit/{dataset}/{label}/K{K}/seed{seed}.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m same fit --spec {params.spec:q} --split {input.split:q} "
        "--out {params.out:q} {params.tuning:q} --no-progress > {log:q} 2>&1"
