# Seconds measured alone (same.experiments.timing): every method of the main comparison, and
# each tuned twin, trained on the dataset's split without evaluation, one after another in one
# job that reserves every core (no other job runs beside it), interleaved over the config's
# timing.repeats rounds. The quality fits share the machine, so their seconds are never what a
# verdict about time reads: the report prices their passes by this measurement
# (same.report.timing). A report-only run reads the committed timing.json instead.


rule timing:
    input:
        unpack(timing_inputs),
    output:
        TIMING_FILE,
    params:
        code=PACKAGE_CODE,  # what a fit runs, and the timing module
        entries=lambda wc: timing_entries(wc.dataset),
        seeds=lambda wc: [SEEDS[r % len(SEEDS)] for r in range(TIMING["repeats"])],
        repeats=lambda wc: TIMING["repeats"],
        cap=lambda wc: TIMING["cap_seconds"],
        tuning=lambda wc, input: ["--tuning", input.tuning] if "tuning" in input.keys() else [],
    # every core reserved, so that no other job runs beside the measurement
    threads: all_cores
    log:
        "results/logs/timing/{dataset}.log",
    benchmark:
        "results/snakemake_benchmarks/timing/{dataset}.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m same.experiments.timing --split {input.split:q} --entries {params.entries:q} "
        "{params.tuning:q} --seeds {params.seeds:q} --repeats {params.repeats:q} "
        "--cap-seconds {params.cap:q} --dataset {wildcards.dataset:q} --out {output:q} "
        "> {log:q} 2>&1"
