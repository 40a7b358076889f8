"""Every script of benchmarks/ and tools/ prints its help for ``--help`` (exit 0) and does
nothing else; a GPU script on a machine without CuPy, and a topic count beyond this machine's
memory, are refused in one line before any work."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PYTHON_SCRIPTS = sorted(p for p in [*REPO.glob("benchmarks/*.py"), *REPO.glob("tools/*.py")]
                        if 'if __name__ == "__main__":' in p.read_text())
BASH_SCRIPTS = sorted(p for p in [*REPO.glob("benchmarks/*"), *REPO.glob("tools/*")]
                      if p.is_file() and p.read_text().startswith("#!/usr/bin/env bash"))
#: Modules beside the scripts that only they import (no ``__main__``: running one does nothing).
HELPERS = {"draw_floor.py", "gpu_kernels.py"}


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=120)


def test_every_python_file_beside_the_scripts_is_a_script_or_a_helper():
    others = {p.name for p in [*REPO.glob("benchmarks/*.py"), *REPO.glob("tools/*.py")]}
    assert others - {p.name for p in PYTHON_SCRIPTS} == HELPERS
    assert {p.name for p in BASH_SCRIPTS} >= {"gpu_session.sh", "gpu_wheels.sh", "compare",
                                              "slurm_cluster.sh"}


@pytest.mark.parametrize("script", PYTHON_SCRIPTS + BASH_SCRIPTS,
                         ids=[p.name for p in PYTHON_SCRIPTS + BASH_SCRIPTS])
def test_every_script_prints_help_and_does_nothing_else(tmp_path, script):
    """``gpu_profile.py --help`` ran its workload (a ModuleNotFoundError without CuPy),
    ``asv_uninstall.py --help`` passed --help on to pip, ``gpu_session.sh --help`` made a
    folder named --help, ``gpu_wheels.sh --help`` downloaded wheels."""
    runner = [sys.executable] if script.suffix == ".py" else ["bash"]
    res = _run([*runner, str(script), "--help"], tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.lower().startswith("usage"), res.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed")
@pytest.mark.parametrize("script", ["gpu_profile.py", "gpu_same.py"])
def test_gpu_scripts_without_cupy_are_refused_in_one_line(tmp_path, script):
    options = ["--out", "new.json"] if script == "gpu_same.py" else []
    res = _run([sys.executable, str(REPO / "benchmarks" / script), *options], tmp_path)
    assert res.returncode == 2
    assert res.stderr == (f"{script}: error: backend='cupy' needs CuPy: pip install "
                          "'same-lda[cuda12]' (or [cuda13])\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("script, n_words", [("same_cpu.py", 6906), ("scale.py", 102660)])
def test_a_topic_count_beyond_this_machines_memory_is_refused(tmp_path, script, n_words):
    """``--n-topics 10**11``: numpy's ``Unable to allocate`` (or the kernel's OOM kill) after
    the corpus was read; now same.model.fit_memory's one line, before any work."""
    res = _run([sys.executable, str(REPO / "benchmarks" / script), "--n-topics",
                "100000000000", "--out", "new.json"], tmp_path)
    assert res.returncode == 2 and res.stderr.count("\n") == 1
    assert res.stderr.startswith(
        f"{script}: error: argument --n-topics: same with n_components=100000000000 × "
        f"{n_words} words: its φ arrays need at least "), res.stderr
    assert res.stderr.endswith(" available; use fewer topics or a smaller vocabulary\n")
    assert list(tmp_path.iterdir()) == []
