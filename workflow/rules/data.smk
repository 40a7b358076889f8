# The held-out split: one artifact per dataset, shared by every method. params.code: the
# fingerprint of the code a rule runs (common.smk).


rule split:
    output:
        split="results/{dataset}/split.npz",
    params:
        fraction=config["split"]["test_fraction"],
        seed=config["split"]["seed"],
        cache=CACHE_DIR,
        data_dir=DATA_DIR_ARG,
        code=code("same/corpus.py", "same/split.py"),
    log:
        "results/logs/split/{dataset}.log",
    benchmark:
        "results/snakemake_benchmarks/split/{dataset}.tsv"
    conda:
        CONDA_ENV
    shell:
        "SAME_CACHE_DIR={params.cache} python -m same split --dataset {wildcards.dataset} "
        "{params.data_dir} --test-fraction {params.fraction} --seed {params.seed} "
        "--out {output.split} > {log} 2>&1"


# Synthetic datasets (config `synthetic:`): an LDA corpus of a UCI corpus's shape with its true
# topics, then the same split as a UCI corpus's (rule split serves the UCI names only).
rule synthesize:
    output:
        corpus="results/{dataset}/corpus.npz",
    params:
        spec=lambda wc: json.dumps(SYNTHETIC[wc.dataset]),
        code=code("same/scale_data.py", "same/synthetic.py"),
    log:
        "results/logs/synthesize/{dataset}.log",
    benchmark:
        "results/snakemake_benchmarks/synthesize/{dataset}.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m same synthesize --name {wildcards.dataset} --spec {params.spec:q} "
        "--out {output.corpus} > {log} 2>&1"


rule split_synthetic:
    output:
        split="results/{dataset}/split.npz",
    wildcard_constraints:
        dataset="|".join(SYNTHETIC) or "(?!)",
    params:
        fraction=config["split"]["test_fraction"],
        seed=config["split"]["seed"],
        code=code("same/corpus.py", "same/split.py"),
    input:
        corpus=rules.synthesize.output.corpus,
    log:
        "results/logs/split/{dataset}.log",
    benchmark:
        "results/snakemake_benchmarks/split/{dataset}.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m same split --corpus {input.corpus} --test-fraction {params.fraction} "
        "--seed {params.seed} --out {output.split} > {log} 2>&1"


ruleorder: split_synthetic > split
