"""The optional extras a GPU user installs resolve together (issue 28 item 3).

CI resolves ``.[test,cuda12]`` and ``.[test,cuda13]`` against PyPI (.ci/run, ``pip install
--dry-run``); these checks say why that can work, without the network."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[1]
EXTRAS = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def _closure(extra: str) -> list[str]:
    """Every requirement an extra brings, its same-lda[...] extras expanded."""
    out = []
    for req in EXTRAS[extra]:
        m = re.fullmatch(r"same-lda\[(.*)\]", req)
        out += [r for e in m.group(1).split(",") for r in _closure(e)] if m else [req]
    return out


def test_test_extra_pins_no_cuda_major():
    """[test] brings no CUDA toolkit, so neither GPU extra can fight it (numba-cuda[cu12]
    pins cuda-toolkit==12.*, CuPy's [ctk] for CUDA 13 pins 13.*)."""
    assert not [r for r in _closure("test") if "cuda" in r or "cupy" in r]
    assert '".[test,gpu-sim]"' in (REPO / "README.md").read_text()  # the simulator, beside it


def test_each_gpu_extra_brings_cupy_its_toolkit_and_numba_cuda_of_one_major():
    for major in ("12", "13"):
        reqs = _closure(f"cuda{major}")
        assert f"cupy-cuda{major}x[ctk]" in " ".join(reqs), reqs
        assert any(r.startswith(f"numba-cuda[cu{major}]") for r in reqs), reqs
        assert not [r for r in reqs if re.search(r"cu(da)?1\d", r) and major not in r], reqs


def test_ci_resolves_both_gpu_installs():
    ci = (REPO / ".ci/run").read_text()
    assert "for extra in cuda12 cuda13" in ci
    assert 'pip install --dry-run --ignore-installed --quiet ".[test,$extra]"' in ci


def test_every_numba_cuda_extra_keeps_numpy_below_2_5():
    """numba-cuda 0.30.4 overloads np.row_stack, gone in NumPy 2.5: on an H100 with NumPy 2.5.2
    every kernel test failed with AttributeError (results/gpu/h100_2026-11-26/), so each extra
    that brings numba-cuda caps NumPy."""
    log = REPO / "results/gpu/h100_2026-11-26/pytest_gpu_without_shim.log"
    assert "module 'numpy' has no attribute 'row_stack'" in log.read_text()
    for extra in ("gpu-sim", "cuda12", "cuda13"):
        assert "numpy<2.5" in EXTRAS[extra], (extra, EXTRAS[extra])
