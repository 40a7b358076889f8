# One training run of one method (label) and seed, through the shared runner.


rule fit:
    input:
        split=rules.split.output.split,
        code=PACKAGE_CODE,
    output:
        trace="results/{dataset}/{label}/K{K}/seed{seed}/trace.csv",
        model="results/{dataset}/{label}/K{K}/seed{seed}/model.npz",
        meta="results/{dataset}/{label}/K{K}/seed{seed}/meta.json",
    params:
        args=fit_args,
        out=lambda wc, output: str(Path(output.trace).parent),
        alpha=config["doc_topic_prior"],
        beta=config["topic_word_prior"],
        backend=lambda wc: config["backend"] if RUNS[wc.label]["method"] == "same" else "numpy",
    threads: config["threads"]
    resources:
        gpu=lambda wc: 1 if (config["backend"] == "cupy" and RUNS[wc.label]["method"] == "same") else 0,
    log:
        "results/logs/fit/{dataset}/{label}/K{K}/seed{seed}.log",
    benchmark:
        "results/snakemake_benchmarks/fit/{dataset}/{label}/K{K}/seed{seed}.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m same.run fit {params.args} --split {input.split} --n-topics {wildcards.K} "
        "--alpha {params.alpha} --beta {params.beta} --seed {wildcards.seed} "
        "--threads {threads} --backend {params.backend} --label {wildcards.label} "
        "--out {params.out} > {log} 2>&1"
