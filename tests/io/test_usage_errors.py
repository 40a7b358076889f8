"""Every command's usage error is one line (same.io.cli.ArgumentParser): argparse's message and
exit status 2, without the usage text argparse prints before it (several lines), as every
other bad input of same-lda."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_no_command_builds_argparse_own_parser():
    """The class, not the examples: every parser of same/, baselines/ and benchmarks/ is
    same.io.cli's (a new command with argparse's own would print the usage on every error)."""
    # benchmarks/asv_uninstall.py runs in asv's environments, where same may be another
    # commit's or absent: argparse itself, its errors one line (tests/test_script_help.py)
    found = [f"{p.relative_to(REPO)}:{n}" for top in ("same", "baselines", "benchmarks")
             for p in sorted((REPO / top).rglob("*.py"))
             if (p.name != "cli.py" or p.parent.name != "io") and p.name != "asv_uninstall.py"
             for n, line in enumerate(p.read_text().splitlines(), 1)
             if re.search(r"\bargparse\.ArgumentParser\(", line)]
    assert found == []


@pytest.mark.parametrize("argv, message", [
    (["-m", "same", "split", "--dataset", "kos", "--seed", "abc", "--out", "s.npz"],
     "python -m same split: error: argument --seed: must be a whole number of at least 0, not 'abc'"),
    (["-m", "same", "fit", "--spec", "{}"],
     "python -m same fit: error: the following arguments are required: --split, --out"),
    (["-m", "same", "frobnicate"],
     "python -m same: error: argument {split,synthesize,fit,score,check}: invalid choice: "
     "'frobnicate' (choose from 'split', 'synthesize', 'fit', 'score', 'check')"),
    (["-m", "same.experiments.timing", "--split", "s.npz", "--entries", "{}", "--seeds", "0",
      "--repeats", "abc", "--out", "t.json"],
     "python -m same.experiments.timing: error: argument --repeats: must be a whole number of at least 1, "
     "not 'abc'"),
    (["-m", "same.experiments.size_cost", "--factors", "x", "--out", "o.json"],
     "python -m same.experiments.size_cost: error: argument --factors: must be a finite number "
     "above 0, not 'x'"),
    (["-m", "same.experiments.estimate", "--out", "e.json"],
     "python -m same.experiments.estimate: error: the following arguments are required: "
     "--plan, --table"),
    ([str(REPO / "benchmarks/perf_gate.py")],
     "perf_gate.py: error: the following arguments are required: compare_output"),
])
def test_a_usage_error_is_one_line_and_exit_2(tmp_path, argv, message):
    res = subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert (res.returncode, res.stderr) == (2, message + "\n")
    assert list(tmp_path.iterdir()) == []


def test_help_still_prints_the_usage():
    res = subprocess.run([sys.executable, "-m", "same", "split", "--help"], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0 and res.stdout.startswith("usage: python -m same split ")
