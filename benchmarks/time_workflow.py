"""Run a workflow command and record its wall time in ``results/bench/workflow_runs.json``.

The README's sentences about how long a profile takes (benchmarks/readme_results.py) are
rendered from this record: the wall seconds, the jobs and fits Snakemake ran (counted from its
log), the command, the commit and machine it ran on, and the date.

    python benchmarks/time_workflow.py --profile quick --what "The quick profile, tuning included" \\
        -- snakemake --cores all
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from same.io.cli import ArgumentParser

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "results" / "bench" / "workflow_runs.json"
BENCHMARK = "wall time of workflow runs from a fresh clone"
#: The first line of a --log this script writes (how an earlier one is told: same.io.outputs)
LOG_HEAD = "# benchmarks/time_workflow.py: the output of "


def counts(log: str) -> tuple[int, int]:
    """(jobs, fits) Snakemake ran, from its log ("rule fit:" / "localrule x:" blocks)."""
    rules = re.findall(r"^\s*(?:local)?rule (\w+):$", log, re.M)
    return len([r for r in rules if r != "all"]), rules.count("fit")


def main(argv=None) -> int:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", required=True, help="key in workflow_runs.json (quick, corpora)")
    ap.add_argument("--what", required=True, help="the README's name for the run")
    ap.add_argument("--note", default="", help="a clause the README adds after the counts")
    ap.add_argument("--log", type=Path, help="where Snakemake's output is kept: a new file or "
                    "an earlier log of this script")
    ap.add_argument("--out", type=Path, default=OUT, help="the record (default "
                    "results/bench/workflow_runs.json): a new file or an earlier record")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)
    command = [c for c in args.command if c != "--"]
    if not command:
        ap.error("give the command after --")
    sys.path.insert(0, str(REPO))
    from same.experiments.provenance import provenance, write_json
    from same.io.outputs import check_option, json_kind, prefix_kind, write_text

    # an earlier --log of this script: its first line is LOG_HEAD and the command
    log_kind = prefix_kind("log of time_workflow.py", LOG_HEAD.encode())
    # before the run: a path it may not write is refused in one line, exit 2
    check_option(args.out, json_kind({"benchmark": BENCHMARK}), "time_workflow.py")
    if args.log:
        check_option(args.log, log_kind, "time_workflow.py", "--log")
        if args.log.resolve() == args.out.resolve():
            ap.error(f"--log {args.log} and --out {args.out} are one file; give two")
    t0 = time.perf_counter()
    res = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - t0
    if args.log:
        write_text(args.log, f"{LOG_HEAD}{' '.join(command)}\n{res.stdout}", log_kind,
                   option="--log")
    if res.returncode != 0:
        print(res.stdout[-3000:], file=sys.stderr)
        print(f"{command[0]}: exit {res.returncode}; nothing recorded", file=sys.stderr)
        return res.returncode
    jobs, fits = counts(res.stdout)
    record = json.loads(args.out.read_text()) if args.out.is_file() else {"benchmark": BENCHMARK}
    info = provenance()
    record[args.profile] = {"what": args.what, "command": " ".join(command),
                            "wall_seconds": wall, "jobs": jobs, "fits": fits,
                            "note": args.note,
                            "date": datetime.now(timezone.utc).date().isoformat(),
                            "commit": info["commit"], "machine": info["machine"],
                            "versions": info["versions"]}
    write_json(args.out, record, option="--out")
    print(f"{args.profile}: {wall:.0f} s, {jobs} jobs, {fits} fits", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
