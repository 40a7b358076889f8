# Each method's own step sizes, chosen on validation documents (same.experiments.tuning): the tuning runs
# (fit rule, labels tune_*) train on the training documents less the validation documents and
# are scored on those; this rule reads their traces (refusing any scored on test documents)
# and writes every configuration's validation ll and the choice per method. The tuned runs of
# the main comparison, the m sweep and the schedules read tuning.json (fit.smk). Every grid
# point runs the first tuning.seeds of the config's seeds (same.experiments.plan.tuning_runs):
# traces() reads each of them, and the choice is the best mean over them.

localrules:
    tuning,


rule tuning:
    input:
        traces=lambda wc: traces(wc.dataset, tuning_labels()),
    output:
        choice=TUNING_CHOICE,
        **table_files("tuning"),
    params:
        code=code("same/experiments/tuning.py", "same/experiments/rundir.py", "workflow/scripts/tuning.py"),
        points=lambda wc: {lab: RUNS[lab]["point"] for lab in tuning_labels()},
        caption=caption_param("tuning"),
    log:
        "results/logs/report/{dataset}/tuning.log",
    benchmark:
        "results/snakemake_benchmarks/report/{dataset}/tuning.tsv"
    conda:
        CONDA_ENV
    script:
        "../scripts/tuning.py"
