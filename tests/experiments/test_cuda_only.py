"""A fit on the CPU never imports the CUDA kernels, so the fits' code fingerprint leaves them
out (workflow/rules/common.smk, CUDA_ONLY) and a GPU kernel edit reruns no CPU fit."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def cuda_only() -> list[str]:
    """The files common.smk's CUDA_ONLY names."""
    text = (REPO / "workflow/rules/common.smk").read_text()
    block = re.search(r"^CUDA_ONLY = \((.*?)\)$", text, re.S | re.M)
    assert block, "CUDA_ONLY not found in common.smk"
    return re.findall(r'"([^"]+)"', block.group(1))


def test_cuda_only_names_the_cuda_kernel_modules():
    files = cuda_only()
    assert all((REPO / f).is_file() for f in files), files
    kernels = REPO / "same/model/kernels"
    assert {f"same/model/kernels/{p.name}" for p in kernels.glob("cuda*.py")} <= set(files)
    assert "same/model/kernels/cpu.py" not in files and "same/model/kernels/elements.py" not in files


@pytest.mark.parametrize(("method", "params"), [
    ("same", {"n_copies": 5, "sampler": "nonzero"}), ("same", {"n_copies": 5, "sampler": "summed"}),
    ("cgs", {}), ("vb_online", {})])
def test_a_cpu_fit_imports_none_of_them(tmp_path, split_path, method, params):
    """The workflow's fit command, as its rule runs it, with Python's import log
    (``-X importtime``): no module of CUDA_ONLY is imported."""
    spec = json.dumps(dict(method=method, n_components=3, doc_topic_prior=0.1,
                           topic_word_prior=0.1, seed=0, budget=2, params=params))
    res = subprocess.run([sys.executable, "-X", "importtime", "-m", "same", "fit", "--spec", spec,
                          "--split", str(split_path), "--out", str(tmp_path / "run"),
                          "--no-progress"], capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    imported = {ln.rsplit("|", 1)[1].strip() for ln in res.stderr.splitlines()
                if ln.startswith("import time:") and "|" in ln}
    assert "same.model.kernels.cpu" in imported or method != "same"
    assert "same.experiments.runner" in imported
    modules = {f.removesuffix(".py").replace("/", ".") for f in cuda_only()}
    found = sorted(modules & imported)
    assert not found, found
