# The profile's cost before any fit: `snakemake --cores all estimate` (with the run's own
# --configfile / --config) splits the corpora, probes each method briefly on them and prints
# the expected minutes per method and in total on this machine (same.experiments.estimate);
# results/estimate.{json,txt} (the profile's report_dir) keep it. Never part of the default
# target. Its plan comes from the table of runs (RUNS) and the default target's outputs, so a
# study switched off is a study not estimated.
# (estimate_plan.smk, included before this file, makes the plan)


rule estimate:
    input:
        splits=expand("results/{dataset}/split.npz", dataset=config["datasets"]),
    output:
        json=f"{REPORT_DIR}/estimate.json",
        table=f"{REPORT_DIR}/estimate.txt",
    params:
        plan=estimate_plan,
        code=code(*PACKAGE_PATTERNS, "workflow/scripts/estimate.py"),
    # every core: the probe measures alone, as the timed jobs will
    threads: all_cores
    log:
        "results/logs/estimate.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/estimate.py"
