"""Peak memory and time per pass of every method at growing NYTimes-shaped size (issue 14).

For synthetic corpora of NYTimes' make-up (:func:`same.synthetic.shaped_corpus`: D, NNZ and
tokens divided by ``--fractions``, W kept) at K = 256, measures in a fresh process per step —
so each peak RSS is that step's alone — parse (docword.txt.gz → CSR), split, SAME (both
samplers, one pass), CGS (tomotopy, two iterations), VB online and VB batch (gensim, one pass)
and the evaluator (document completion on the split).  Then fits peak RSS and seconds
linearly in the nonzeros per method and extrapolates to full NYTimes and PubMed, with bytes
per nonzero.  Writes ``results/bench/scale.json``; machine, versions and commit recorded.

    python benchmarks/scale.py [--fractions 64 32 16] [--n-topics 256]

Seconds here are one pass on a shared 2-core machine: an order of magnitude, not a target.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

NYTIMES = {"n_docs": 300_000, "n_words": 102_660, "nnz": 69_679_427, "n_tokens": 99_542_125}
PUBMED_NNZ = 483_450_157
STEPS = ("parse", "split", "same_nonzero", "same_summed", "cgs", "vb_online", "vb_batch",
         "evaluate")


def _csr_bytes(X) -> int:
    return int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)


def run_step(step: str, work: Path, n_topics: int) -> dict:
    """One measurement in this process (called in a child by :func:`measure`)."""
    import scipy.sparse as sp

    from same.split import load_split

    t0 = time.perf_counter()
    extra = {}
    if step == "parse":
        from same.docword import read_docword

        X = read_docword(work / "docword.synthetic.txt.gz")
        extra["csr_bytes"] = _csr_bytes(sp.csr_matrix(X))
    elif step == "split":
        from same.split import make_split

        X = sp.load_npz(work / "counts.npz").tocsr()
        make_split(X, 0.1, 0, name="synthetic").save(work / "split.npz")
    elif step == "evaluate":
        from same.evaluate import evaluate

        split = load_split(work / "split.npz")
        phi = np.random.default_rng(0).dirichlet(np.full(split.train.shape[1], 0.1), n_topics)
        t0 = time.perf_counter()
        evaluate(phi, 0.1, split)
    else:
        from same.methods import checkpoints
        from same.runs import RunSpec

        split = load_split(work / "split.npz")
        method, params = step, {}
        if step.startswith("same"):
            method, params = "same", {"sampler": step.split("_")[1], "n_samples": 100.0}
        budget = 2 if method == "cgs" else 1
        spec = RunSpec(method=method, n_topics=n_topics, doc_topic_prior=0.1,
                       topic_word_prior=0.1, seed=0, budget=budget, params=params)
        t0 = time.perf_counter()
        for _, info in checkpoints(split.train, spec, [budget]):
            extra["train_seconds_per_pass"] = info["train_seconds"] / budget
    return {"seconds": time.perf_counter() - t0, **extra}


def _child(step: str, work: Path, n_topics: int) -> dict:
    code = ("import json, resource, sys; sys.path.insert(0, 'benchmarks'); import scale; "
            f"r = scale.run_step({step!r}, __import__('pathlib').Path({str(work)!r}), "
            f"{n_topics}); r['peak_rss_bytes'] = resource.getrusage(resource.RUSAGE_SELF)"
            ".ru_maxrss * 1024; print(json.dumps(r))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"step {step} failed: {res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _baseline_rss() -> int:
    code = ("import resource, numpy, scipy.sparse, same, same.sampler, same.evaluate; "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)")
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True).stdout)


def measure(fractions, n_topics: int, seed: int = 0) -> dict:
    """Every step at every size; see the module docstring."""
    import scipy.sparse as sp

    from same.synthetic import shaped_corpus

    sizes = []
    for f in fractions:
        X = shaped_corpus(NYTIMES["n_docs"] // f, NYTIMES["n_words"], NYTIMES["nnz"] // f,
                          n_tokens=NYTIMES["n_tokens"] // f, seed=seed)
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            sp.save_npz(work / "counts.npz", X, compressed=False)
            _write_docword(X, work / "docword.synthetic.txt.gz")
            row = {"fraction": 1 / f, "n_docs": X.shape[0], "nnz": int(X.nnz),
                   "n_tokens": int(X.sum()), "csr_bytes": _csr_bytes(X), "steps": {}}
            for step in STEPS:
                row["steps"][step] = _child(step, work, n_topics)
                print(f"1/{f}: {step} {row['steps'][step]['peak_rss_bytes'] / 2**20:.0f} MiB, "
                      f"{row['steps'][step]['seconds']:.1f} s", file=sys.stderr, flush=True)
        sizes.append(row)
    return {"sizes": sizes, "fits": _extrapolate(sizes)}


def _write_docword(X, path: Path) -> None:
    import gzip

    coo = X.tocoo()
    order = np.lexsort((coo.col, coo.row))
    with gzip.open(path, "wt", compresslevel=1) as f:
        f.write(f"{X.shape[0]}\n{X.shape[1]}\n{X.nnz}\n")
        lines = np.column_stack([coo.row[order] + 1, coo.col[order] + 1,
                                 coo.data[order].astype(np.int64)])
        np.savetxt(f, lines, fmt="%d")


def _extrapolate(sizes) -> dict:
    """Per step: peak RSS = a + b·nnz (least squares), its value at NYTimes and PubMed size."""
    nnz = np.array([s["nnz"] for s in sizes], dtype=float)
    fits = {}
    for step in STEPS:
        rss = np.array([s["steps"][step]["peak_rss_bytes"] for s in sizes], dtype=float)
        b, a = np.polyfit(nnz, rss, 1) if len(nnz) > 1 else (rss[0] / nnz[0], 0.0)
        csr_per_nnz = sizes[-1]["csr_bytes"] / sizes[-1]["nnz"]
        fits[step] = {"bytes_per_nonzero": b, "fixed_bytes": a,
                      "nytimes_peak_gib": (a + b * NYTIMES["nnz"]) / 2**30,
                      "pubmed_peak_gib": (a + b * PUBMED_NNZ) / 2**30,
                      "pubmed_over_csr": (a + b * PUBMED_NNZ) / (csr_per_nnz * PUBMED_NNZ)}
    return fits


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fractions", type=int, nargs="+", default=[64, 32, 16])
    ap.add_argument("--n-topics", type=int, default=256)
    ap.add_argument("--out", default="results/bench/scale.json")
    args = ap.parse_args(argv)

    from same.provenance import provenance, write_json

    result = {"benchmark": "peak RSS and seconds per pass at NYTimes-shaped synthetic sizes",
              "settings": {"n_topics": args.n_topics, "fractions": args.fractions,
                           "same_n_samples": 100, "threads": "numba default (all cores)"},
              "baseline_python_rss_bytes": _baseline_rss(),
              **measure(args.fractions, args.n_topics)}
    result["self_peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result.update(provenance())
    write_json(args.out, result)
    print(json.dumps({k: {m: round(v[m], 2) for m in ("nytimes_peak_gib", "pubmed_peak_gib")}
                      for k, v in result["fits"].items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
