# The held-out split: one artifact per dataset, shared by every method. params.code: the
# fingerprint of the code a rule runs (common.smk).


rule split:
    output:
        split="results/{dataset}/split.npz",
    params:
        fraction=config["split"]["test_fraction"],
        seed=config["split"]["seed"],
        cache=lambda wc: CACHE_DIR,
        data_dir=lambda wc: DATA_DIR_ARGS,
        code=code("same/data/corpus.py", "same/data/split.py"),
    log:
        "results/logs/split/{dataset}.log",
    benchmark:
        "results/snakemake_benchmarks/split/{dataset}.tsv"
    conda:
        CONDA_ENV
    shell:
        "SAME_CACHE_DIR={params.cache:q} python -m same split --dataset {wildcards.dataset:q} "
        "{params.data_dir:q} --test-fraction {params.fraction:q} --seed {params.seed:q} "
        "--out {output.split:q} > {log:q} 2>&1"


# Synthetic datasets (config `synthetic:`): an LDA corpus of a UCI corpus's shape with its true
# topics, then the same split as a UCI corpus's (rule split serves the UCI names only).
rule synthesize:
    output:
        corpus="results/{dataset}/corpus.npz",
    params:
        spec=lambda wc: json.dumps(SYNTHETIC[wc.dataset]),
        code=code("same/data/planted.py", "same/data/synthetic.py", "same/data/registry.py",
                  "same/data/synthetic.schema.json", "same/io/schema.py"),
    log:
        "results/logs/synthesize/{dataset}.log",
    benchmark:
        "results/snakemake_benchmarks/synthesize/{dataset}.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m same synthesize --name {wildcards.dataset:q} --spec {params.spec:q} "
        "--out {output.corpus:q} > {log:q} 2>&1"


rule split_synthetic:
    output:
        split="results/{dataset}/split.npz",
    wildcard_constraints:
        dataset="|".join(SYNTHETIC) or "(?!)",
    params:
        fraction=config["split"]["test_fraction"],
        seed=config["split"]["seed"],
        cache=lambda wc: CACHE_DIR,
        data_dir=lambda wc: DATA_DIR_ARGS,
        code=code("same/data/corpus.py", "same/data/split.py"),
    input:
        corpus=rules.synthesize.output.corpus,
    log:
        "results/logs/split/{dataset}.log",
    benchmark:
        "results/snakemake_benchmarks/split/{dataset}.tsv"
    conda:
        CONDA_ENV
    shell:
        "python -m same split --corpus {input.corpus:q} --test-fraction {params.fraction:q} "
        "--seed {params.seed:q} --out {output.split:q} > {log:q} 2>&1"


ruleorder: split_synthetic > split


# Corpora named by their files (config `corpora:`): a user's UCI files, raw text vectorized by
# CountVectorizer (cached in the cache folder, keyed by the text's checksum and the settings),
# 20 Newsgroups; then the same split as any corpus's. Every later rule reads only the split.
rule split_corpus:
    input:
        # the corpus's own files (same.data.corpusspec.corpus_files): an edited, added or
        # removed document reruns the split and everything that reads it
        corpus=lambda wc: corpus_files(CORPORA[wc.dataset]),
    output:
        split="results/{dataset}/split.npz",
    wildcard_constraints:
        dataset="|".join(CORPORA) or "(?!)",
    params:
        spec=lambda wc: json.dumps({k: v for k, v in CORPORA[wc.dataset].items()
                                    if k != "n_components"}, sort_keys=True),
        fraction=config["split"]["test_fraction"],
        seed=config["split"]["seed"],
        cache=lambda wc: CACHE_DIR,
        data_dir=lambda wc: DATA_DIR_ARGS,
        code=code("same/data/corpus.py", "same/data/split.py", "same/data/textcorpus.py",
                  "same/data/corpusspec.py", "same/data/newsgroups.py", "same/data/registry.py",
                  "same/data/textclean.py", "same/data/texttable.py", "same/data/corpus.schema.json",
                  "same/io/schema.py"),
    log:
        "results/logs/split/{dataset}.log",
    benchmark:
        "results/snakemake_benchmarks/split/{dataset}.tsv"
    conda:
        CONDA_ENV
    shell:
        "SAME_CACHE_DIR={params.cache:q} python -m same split --name {wildcards.dataset:q} "
        "--corpus-spec {params.spec:q} {params.data_dir:q} --test-fraction {params.fraction:q} "
        "--seed {params.seed:q} --out {output.split:q} > {log:q} 2>&1"


ruleorder: split_corpus > split
