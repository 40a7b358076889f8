"""The performance gate: its decision (benchmarks/perf_gate.py) on canned `asv compare` output,
no asv run needed, and its place in CI. Its choice of base and real runs with asv on tiny
projects: tests/test_perf_gate_runs.py."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GATE = REPO / "benchmarks" / "perf_gate.py"
_spec = importlib.util.spec_from_file_location("perf_gate", GATE)
perf_gate = importlib.util.module_from_spec(_spec)
sys.modules["perf_gate"] = perf_gate
_spec.loader.exec_module(perf_gate)

HEADER = """\
| Change   | Before [3124665c] <main~1>   | After [ec9ed286] <main>   |   Ratio | Benchmark (Parameter)                                             |
|----------|------------------------------|---------------------------|---------|-------------------------------------------------------------------|
"""
SAME = """\
|          | 4.04±0.02ms                  | 4.10±0.03ms               |    1.01 | bench_kernels.Kernels.time_sample_accumulate('numpy', 64)         |
|          | 221±10μs                     | 260±30μs                  |   ~1.18 | bench_kernels.Kernels.time_sddmm('numpy', 64)                     |
|          | n/a                          | n/a                       |     n/a | bench_kernels.Kernels.time_sddmm('cupy', 64)                      |
| -        | 428±10ms                     | 210±5ms                   |    0.49 | bench_kernels.MinibatchStep.time_step('numpy', 256, 'nonzero')    |
| x        | 8.01±2ms                     | 9.0±2ms                   |    1.12 | bench_kernels.MinibatchStep.time_step('numpy', 64, 'summed')      |
"""
SLOWER = """\
| +        | 974±4μs                      | 2.10±0.01ms               |    2.16 | bench_kernels.Kernels.time_sddmm('numpy', 256)                    |
"""
BROKEN = """\
| !        | 23.3±0.1ms                   | failed                    |     n/a | bench_kernels.MinibatchStep.time_step('numpy', 256, 'summed')     |
"""


def canned(*parts, split=False):
    if not split:
        return HEADER + "".join(parts)
    titles = {SAME: "Benchmarks that have stayed the same:", SLOWER: "Benchmarks that have got worse:",
              BROKEN: "Benchmarks that have got worse:"}
    return "".join(f"\n{titles[p]}\n\n" + HEADER + p for p in parts)


def test_parse_every_row():
    rows = perf_gate.parse_compare(canned(SAME, SLOWER))
    assert len(rows) == 6
    assert rows[0] == perf_gate.Row("", "4.04±0.02ms", "4.10±0.03ms", "1.01",
                                    "bench_kernels.Kernels.time_sample_accumulate('numpy', 64)")
    assert [r.mark for r in rows] == ["", "", "", "-", "x", "+"]


def test_unchanged_faster_insignificant_and_incomparable_pass():
    passed, lines = perf_gate.verdict(perf_gate.parse_compare(canned(SAME)), "1.5")
    assert passed
    assert lines == ["all 4 benchmarks within 1.5 of the base"]  # the cupy row is n/a


def test_a_slowdown_fails_and_names_the_benchmark():
    for text in (canned(SAME, SLOWER), canned(SAME, SLOWER, split=True)):
        passed, lines = perf_gate.verdict(perf_gate.parse_compare(text), "1.5")
        assert not passed
        assert lines[0] == ("SLOWER x2.16: bench_kernels.Kernels.time_sddmm('numpy', 256)"
                            " (974±4μs -> 2.10±0.01ms)")
        assert lines[-1] == "1 of 5 benchmarks worse than the base by more than 1.5"


def test_a_new_failure_fails():
    passed, lines = perf_gate.verdict(perf_gate.parse_compare(canned(SAME, BROKEN)))
    assert not passed
    assert lines[0].startswith("FAIL xn/a: bench_kernels.MinibatchStep.time_step('numpy', 256,")


def test_nothing_measured_fails():
    skipped = HEADER + SAME.splitlines(keepends=True)[2]
    for text in ("asv: no results\n", skipped):
        passed, lines = perf_gate.verdict(perf_gate.parse_compare(text))
        assert not passed and "no benchmark measured on both commits" in lines[0]


def test_rerun_regex_matches_exactly_the_worse_benchmarks():
    rows = perf_gate.parse_compare(canned(SAME, SLOWER, BROKEN, split=True))
    regex = perf_gate.bench_regex(perf_gate.worse(rows))
    # asv matches a parameterized benchmark as name(param, ...) with re.search
    matched = [r.name for r in rows if re.search(regex, r.name)]
    assert matched == ["bench_kernels.Kernels.time_sddmm('numpy', 256)",
                       "bench_kernels.MinibatchStep.time_step('numpy', 256, 'summed')"]


def test_command_line_exit_status(tmp_path):
    for text, status in ((canned(SAME), 0), (canned(SAME, SLOWER), 1)):
        out = tmp_path / "compare.txt"
        out.write_text(text)
        regex = tmp_path / "worse"
        res = subprocess.run([sys.executable, str(GATE), str(out), "--factor", "1.5",
                              "--regex-out", str(regex)], capture_output=True, text=True)
        assert res.returncode == status, res.stdout + res.stderr
        assert regex.read_text() == ("" if status == 0 else
                                     r"^bench_kernels\.Kernels\.time_sddmm\('numpy',\ 256\)$")


def test_ci_runs_the_gate_after_the_tests():
    run = (REPO / ".ci" / "run").read_text()
    assert "python -m pytest" in run and ".ci/perf" in run
    assert run.index("python -m pytest") < run.index(".ci/perf")
    perf = (REPO / ".ci" / "perf").read_text()
    assert "--interleave-rounds" in perf and "perf_gate.py" in perf
