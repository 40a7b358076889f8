"""Issue 51: the two native-crash reproductions, run again and again in processes of their own.

1. A jsonl corpus whose second line nests 20,000 brackets deep (``same-lda split`` died of
   SIGSEGV, exit 139, in pyarrow's parser; now refused in one line, exit 2).
2. A jsonl corpus whose first document is one 8 MiB line (usually one line of error, once in
   51 runs ``terminate called without an active exception``, exit 134; now read).

Each run is ``python -m same split`` with a cache folder of its own (so every run parses
the file afresh); the outcome of each is its
exit status. A native crash is a negative status (a signal) or 134/139. Writes a JSON record
(machine, versions, commit, per case the count of each exit status)::

    python benchmarks/crash_repeat.py --runs 100 --out results/bench/crash_repeat.json
"""

from __future__ import annotations

import collections
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

from same.io.cli import ArgumentParser, whole_number

REPO = Path(__file__).resolve().parents[1]
#: The record's ``benchmark`` key: how an earlier record of this script is told (same.io.outputs)
BENCHMARK = "native-crash reproductions of issue 51, each run in a process of its own"


def _cases(folder: Path) -> dict[str, tuple[Path, int]]:
    """Case → (jsonl corpus, the exit status it must end with)."""
    deep = folder / "deep.jsonl"
    deep.write_text(json.dumps({"text": "alpha beta"}) + "\n"
                    + '{"text": "gamma delta", "x": ' + "[" * 20_000 + "1" + "]" * 20_000
                    + "}\n", encoding="utf-8")
    def word(i: int) -> str:  # letters only (the default token pattern takes no digits)
        return "q" + "".join(chr(97 + (i // 26 ** k) % 26) for k in range(3))

    words = " ".join(word(i % 5000) for i in range(1_700_000))  # about 8 MiB
    long = folder / "long.jsonl"
    others = (" ".join(word((j * 37 + i) % 5000) for j in range(400)) for i in range(40))
    long.write_text(json.dumps({"text": words}) + "\n"  # its words in the other documents too
                    + "".join(json.dumps({"text": t}) + "\n" for t in others),
                    encoding="utf-8")
    return {"nested_20000_deep": (deep, 2), "first_line_8_mib": (long, 0)}


def main(argv=None) -> int:
    ap = ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=whole_number(1), default=100, help="runs per case (default 100)")
    ap.add_argument("--out", type=Path, help="JSON record to write (default: print only); "
                    "a new file or an earlier record of this script")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from same.experiments.provenance import write_json
    from same.io.outputs import check_option, json_kind

    if args.out:  # before the runs: a path it may not write is refused in one line, exit 2
        check_option(args.out, json_kind({"benchmark": BENCHMARK}), "crash_repeat.py")
    record = {"benchmark": BENCHMARK, "machine": platform.node(), "python": platform.python_version(),
              "pyarrow": version("pyarrow"), "numpy": version("numpy"),
              "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                                       capture_output=True, text=True).stdout.strip(),
              "date": time.strftime("%Y-%m-%d"), "runs": args.runs, "cases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for case, (corpus, want) in _cases(tmp).items():
            codes = collections.Counter()
            start = time.perf_counter()
            for i in range(args.runs):
                out, cache = tmp / f"{case}_{i}.npz", tmp / f"cache_{case}_{i}"
                env = dict(os.environ, SAME_CACHE_DIR=str(cache))  # parsed afresh each run
                spec = {"source": "jsonl", "path": str(corpus), "column": "text"}
                res = subprocess.run([sys.executable, "-m", "same", "split", "--name", "mine",
                                      "--corpus-spec", json.dumps(spec), "--out", str(out)],
                                     capture_output=True, text=True, cwd=tmp, env=env)
                codes[res.returncode] += 1
                out.unlink(missing_ok=True)
                shutil.rmtree(cache, ignore_errors=True)
            crashes = sum(n for c, n in codes.items() if c < 0 or c in (134, 139))
            record["cases"][case] = {"expected_exit": want, "exit_counts": dict(codes),
                                     "native_crashes": crashes,
                                     "seconds": round(time.perf_counter() - start, 1)}
            print(case, dict(codes), f"native crashes: {crashes}", flush=True)
    if args.out:
        write_json(args.out, record, option="--out")
    ok = all(c["native_crashes"] == 0 and c["exit_counts"] == {c["expected_exit"]: args.runs}
             for c in record["cases"].values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
