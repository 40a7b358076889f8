# The held-out split: one artifact per dataset, shared by every method.


rule split:
    output:
        split="results/{dataset}/split.npz",
    params:
        fraction=config["split"]["test_fraction"],
        seed=config["split"]["seed"],
        cache=CACHE_DIR,
        data_dir=DATA_DIR_ARG,
    input:
        code=code("same/corpus.py", "same/split.py"),
    log:
        "results/logs/split/{dataset}.log",
    benchmark:
        "results/snakemake_benchmarks/split/{dataset}.tsv"
    conda:
        CONDA_ENV
    shell:
        "SAME_CACHE_DIR={params.cache} python -m same.run split --dataset {wildcards.dataset} "
        "{params.data_dir} --test-fraction {params.fraction} --seed {params.seed} "
        "--out {output.split} > {log} 2>&1"
