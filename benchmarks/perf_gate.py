"""The decision of CI's performance gate (.ci/perf): read `asv compare` output, pass or fail.

`asv compare --factor F BASE HEAD` marks each benchmark of its table: ``+`` slower by more than
F and statistically significant, ``!`` failing at HEAD but not at BASE, ``-`` faster, ``x`` not
comparable (the benchmark's code changed), blank otherwise. The gate fails on ``+`` and ``!``.

    python benchmarks/perf_gate.py COMPARE_OUTPUT [--regex-out FILE]

prints one line per benchmark that got worse and exits 1 when there is one (0 otherwise);
``--regex-out`` writes an `asv run --bench` regex matching exactly those benchmarks (with their
parameters), for the confirming re-run.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from same.io.cli import ArgumentParser

WORSE = {"+", "!"}  # asv compare's marks for a slowdown beyond the factor and a new failure
NA = "n/a"  # asv compare's cell for a benchmark skipped or absent at a commit


@dataclass(frozen=True)
class Row:
    mark: str  # one of "+", "-", "!", "x", "*" or "" (unchanged)
    before: str
    after: str
    ratio: str
    name: str  # benchmark with its parameters, e.g. bench_kernels.Kernels.time_sddmm('numpy', 64)


def parse_compare(text: str) -> list[Row]:
    """Every benchmark row of `asv compare`'s tables (tabulate's github format)."""
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if not (line.startswith("|") and line.endswith("|")):
            continue
        cells = [c.strip() for c in line[1:-1].split("|")]
        if len(cells) != 5 or cells[0] == "Change" or set(line) <= set("|-: "):
            continue
        rows.append(Row(*cells))
    return rows


def worse(rows: list[Row]) -> list[Row]:
    """The rows that fail the gate."""
    return [r for r in rows if r.mark in WORSE]


def bench_regex(rows: list[Row]) -> str:
    """An `asv run --bench` regex matching exactly these benchmarks and parameters (asv matches
    a parameterized benchmark as ``name(param, ...)``)."""
    return "|".join(f"^{re.escape(r.name)}$" for r in rows)


def measured(rows: list[Row]) -> list[Row]:
    """The rows with a result for both commits, or a failure at HEAD (skipped ones, e.g. cupy
    without a GPU, and benchmarks new at HEAD are not compared)."""
    return [r for r in rows if r.mark in WORSE or NA not in (r.before, r.after)]


def verdict(rows: list[Row], factor: str = "the factor") -> tuple[bool, list[str]]:
    """(passed, lines to print)."""
    bad, compared = worse(rows), measured(rows)
    lines = [f"{'FAIL' if r.mark == '!' else 'SLOWER'} x{r.ratio}: {r.name}"
             f" ({r.before} -> {r.after})" for r in bad]
    if not compared:
        return False, ["no benchmark measured on both commits: did the asv run fail?"]
    if bad:
        lines.append(f"{len(bad)} of {len(compared)} benchmarks worse than the base by more"
                     f" than {factor}")
    else:
        lines.append(f"all {len(compared)} benchmarks within {factor} of the base")
    return not bad, lines


def _regex_kind():
    """An earlier regex of this script (empty, or one line ``^...$``): what --regex-out may
    replace (:mod:`same.io.outputs`)."""
    from same.io.outputs import Kind

    def ours(p: Path) -> bool:
        old = p.read_bytes()
        return old == b"" or (old[:1] == b"^" and old.endswith(b"$") and b"\n" not in old)

    return Kind("--bench regex of perf_gate.py", ours)


def write_regex(path: Path, regex: str) -> None:
    """Write ``regex`` by :mod:`same.io.outputs`'s rules: an existing file is replaced only when
    it holds an earlier regex of this script."""
    from same.io.outputs import write_text

    write_text(path, regex, _regex_kind(), option="--regex-out")


def main(argv=None) -> int:
    ap = ArgumentParser(prog="perf_gate.py", description=__doc__.splitlines()[0])
    ap.add_argument("compare_output", type=Path, help="a file holding `asv compare` output")
    ap.add_argument("--factor", default="the factor", help="the factor, for the message")
    ap.add_argument("--regex-out", type=Path, help="write the --bench regex of worse ones here")
    args = ap.parse_args(argv)
    if args.regex_out is not None:  # before reading: one line, exit 2
        from same.io.outputs import check_option

        check_option(args.regex_out, _regex_kind(), ap.prog, "--regex-out")
    try:
        text = args.compare_output.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        ap.exit(2, f"{ap.prog}: error: {args.compare_output}: cannot be read "
                   f"({getattr(exc, 'strerror', None) or exc}); give the file asv compare's output was saved in\n")
    rows = parse_compare(text)
    passed, lines = verdict(rows, args.factor)
    print("\n".join(lines))
    if args.regex_out is not None:
        write_regex(args.regex_out, bench_regex(worse(rows)))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
