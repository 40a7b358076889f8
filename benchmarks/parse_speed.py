"""Parse speed of the corpus layer, extrapolated to NYTimes (issue: foundation).

Writes ``results/bench/parse.json``.  A synthetic docword file of ``--lines``
entries (default 10M, Zipf-like word ids, sorted by document then word) is
generated with pyarrow, then parsed by :func:`same.data.corpus.read_docword` in a
fresh child process whose peak RSS is read from ``getrusage``.  The time is
scaled linearly to NYTimes' 69,679,427 lines.  The cached (``.npz``) load of
KOS is timed against the first parse as well.

    python benchmarks/parse_speed.py [--lines 10000000] [--out results/bench/parse.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from same.io.cli import ArgumentParser, whole_number

NYTIMES_LINES = 69_679_427


def make_docword(path: Path, n_lines: int, n_words: int = 102_660, per_doc: int = 232,
                 seed: int = 0) -> tuple[int, int, int]:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    n_docs = -(-n_lines // per_doc)
    with pa.CompressedOutputStream(str(path), "gzip") as out:
        out.write(f"{n_docs}\n{n_words}\n{n_lines}\n".encode())
        written = 0
        for d0 in range(0, n_docs, 20000):
            d1 = min(d0 + 20000, n_docs)
            docs, words = [], []
            for d in range(d0, d1):
                k = min(per_doc, n_lines - written)
                if k <= 0:
                    break
                w = np.unique((rng.zipf(1.3, size=3 * k) - 1) % n_words)[:k]
                if len(w) < k:  # top up with uniform ids
                    w = np.union1d(w, rng.choice(n_words, size=k, replace=False))[:k]
                docs.append(np.full(k, d + 1, dtype=np.int32))
                words.append(np.sort(w).astype(np.int32) + 1)
                written += k
            if not docs:
                break
            doc = np.concatenate(docs)
            word = np.concatenate(words)
            count = rng.geometric(0.6, size=len(doc)).astype(np.int32)
            table = pa.table({"d": doc, "w": word, "c": count})
            pacsv.write_csv(table, out, pacsv.WriteOptions(include_header=False, delimiter=" "))
    return n_docs, n_words, n_lines


def _rss_mib() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def child(path: str) -> None:
    import pyarrow.csv  # noqa: F401  (imports counted in the baseline, not the parse)
    import scipy.sparse  # noqa: F401

    from same.data.corpus import read_docword

    base = _rss_mib()
    t0 = time.perf_counter()
    m = read_docword(path)
    dt = time.perf_counter() - t0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": dt, "nnz": int(m.nnz), "peak_rss_mib": peak_kib / 1024,
                      "baseline_rss_mib": base}))


def kos_cache_speedup() -> dict | None:
    from same.data import corpus

    try:
        with tempfile.TemporaryDirectory() as d:
            os.environ["SAME_CACHE_DIR"] = d
            t0 = time.perf_counter()
            corpus.load("kos", download=False)
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            corpus.load("kos", download=False)
            second = time.perf_counter() - t0
        return {"first_load_s": first, "cached_load_s": second, "speedup": first / second}
    except corpus.CorpusNotFoundError as exc:
        return {"skipped": str(exc)}


#: The result's ``benchmark``: what an earlier result at ``--out`` must say to be replaced.
# the kind of results/bench/parse.json (its first measurement named the 0.1 module path)
BENCHMARK = "corpus parse (same.corpus.read_docword), synthetic docword files"


def main() -> None:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=whole_number(5, NYTIMES_LINES), default=10_000_000,
                    help="lines of the larger file (the smaller has a fifth), at most "
                         "NYTimes' (the size the two runs extrapolate to)")
    ap.add_argument("--out", default="results/bench/parse.json")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return

    from same.experiments.provenance import provenance, write_json
    from same.io.outputs import check_option, json_kind

    check_option(args.out, json_kind({"benchmark": BENCHMARK}), "parse_speed.py")  # first

    runs = []
    with tempfile.TemporaryDirectory() as d:
        # two sizes, each parsed in a fresh process: the fixed cost (library pages,
        # reader buffers) and the per-line cost separate, and both extrapolate honestly
        for n in (args.lines // 5, args.lines):
            path = Path(d) / f"docword.synthetic{n}.txt.gz"
            t0 = time.perf_counter()
            n_docs, n_words, n_lines = make_docword(path, n)
            gen_s = time.perf_counter() - t0
            res = subprocess.run([sys.executable, __file__, "--child", str(path)],
                                 capture_output=True, text=True, check=True)
            parsed = json.loads(res.stdout.strip().splitlines()[-1])
            if parsed["nnz"] != n_lines:
                raise RuntimeError(f"parsed {parsed['nnz']} entries, wrote {n_lines}")
            runs.append({"lines": n_lines, "n_docs": n_docs, "n_words": n_words,
                         "gzip_bytes": path.stat().st_size, "generate_s": round(gen_s, 2),
                         "parse_s": round(parsed["seconds"], 3),
                         "lines_per_s": round(n_lines / parsed["seconds"]),
                         "peak_rss_mib": round(parsed["peak_rss_mib"], 1),
                         "baseline_rss_mib": round(parsed["baseline_rss_mib"], 1)})
            path.unlink()
    small, big = runs
    dn = big["lines"] - small["lines"]
    s_per_line = (big["parse_s"] - small["parse_s"]) / dn
    mib_per_line = (big["peak_rss_mib"] - small["peak_rss_mib"]) / dn
    ny_s = big["parse_s"] + s_per_line * (NYTIMES_LINES - big["lines"])
    ny_mib = big["peak_rss_mib"] + mib_per_line * (NYTIMES_LINES - big["lines"])
    result = {
        "benchmark": BENCHMARK,
        "runs": runs,
        "nytimes_extrapolated": {
            "method": "linear fit through the two runs (time and peak RSS)",
            "lines": NYTIMES_LINES,
            "parse_s": round(ny_s, 1),
            "peak_rss_mib": round(ny_mib, 1),
            "bytes_per_line": round(mib_per_line * 2**20, 1),
            "target_parse_s": 60, "target_peak_rss_mib": 3072,
            "meets_targets": bool(ny_s <= 60 and ny_mib <= 3072),
        },
        "kos_cache": kos_cache_speedup(),
    }
    result.update(provenance())
    write_json(args.out, result, option="--out")
    print(json.dumps({k: result[k] for k in ("runs", "nytimes_extrapolated", "kos_cache")},
                     indent=2))


if __name__ == "__main__":
    main()
