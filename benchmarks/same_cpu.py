"""Seconds per pass of the CPU SAME sampler on KOS (issue: SAME sampler).

Writes ``results/bench/same_cpu.json``: per-pass training seconds (callback
time excluded) for K=64, m=100, n_inner=5 over the full KOS corpus, for both
samplers ("nonzero": Algorithm 3 as written; "summed": equal in distribution), the
median over passes after the first (the first also loads numba's cached
machine code), peak RSS, thread count, and provenance.

    SAME_DATA_DIR=../shared/datasets/uci python benchmarks/same_cpu.py [--passes 6]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics

import numpy as np

TARGET_S_PER_PASS = 0.5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="kos")
    ap.add_argument("--n-topics", type=int, default=64)
    ap.add_argument("--n-samples", type=float, default=100.0)
    ap.add_argument("--n-inner", type=int, default=5)
    ap.add_argument("--passes", type=int, default=6)
    ap.add_argument("--threads", type=int, default=None, help="numba threads (default: all)")
    ap.add_argument("--out", default="results/bench/same_cpu.json")
    args = ap.parse_args()

    from same import corpus
    from same.kernels.cpu import set_threads
    from same.provenance import provenance, write_json
    from same.sampler import SameLDA

    threads = set_threads(args.threads)
    data = corpus.load(args.dataset)
    samplers = {}
    for sampler in ("nonzero", "summed"):
        model = SameLDA(n_topics=args.n_topics, n_samples=args.n_samples, n_inner=args.n_inner,
                        max_iter=args.passes, sampler=sampler, random_state=0)
        marks = [info["train_seconds"] for info in model.iter_fit(data.counts)]
        per_pass = list(np.diff([0.0] + marks))
        steady = statistics.median(per_pass[1:]) if len(per_pass) > 1 else per_pass[0]
        samplers[sampler] = {
            "seconds_per_pass": [round(s, 4) for s in per_pass],
            "median_seconds_per_pass_after_first": round(steady, 4),
            "nonzero_topic_pairs_per_second": round(data.nnz * args.n_topics * args.n_inner
                                                    / steady),
            "meets_target": bool(steady <= TARGET_S_PER_PASS),
        }
    result = {
        "benchmark": "SAME CPU sampler, seconds per pass (training only)",
        "dataset": args.dataset,
        "shape": {"n_docs": data.n_docs, "n_words": data.n_words, "nnz": data.nnz,
                  "n_tokens": data.n_tokens},
        "settings": {"n_topics": args.n_topics, "n_samples": args.n_samples,
                     "n_inner": args.n_inner, "batch_size": "ceil(D/20)", "passes": args.passes,
                     "backend": "numpy", "numba_threads": threads},
        "samplers": samplers,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "target_seconds_per_pass": TARGET_S_PER_PASS,
    }
    result.update(provenance())
    write_json(args.out, result)
    print(json.dumps({k: result[k] for k in ("samplers", "peak_rss_mib")}, indent=2))


if __name__ == "__main__":
    main()
