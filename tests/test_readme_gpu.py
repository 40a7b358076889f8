"""The GPU performance model: its committed result is what the code computes, the README's
block is the render of that result, every figure in it comes from a field, and its bytes
follow the access count that tests/model/sim_traffic.py checks against the simulator."""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
from difflib import SequenceMatcher
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MODEL_JSON = REPO / "results" / "gpu" / "model.json"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


rg, gm = _load("readme_gpu"), _load("gpu_model")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_readme_numbers import figures, numeric_leaves, scaled  # noqa: E402


@pytest.fixture(scope="module")
def model():
    return json.loads(MODEL_JSON.read_text())


def test_committed_model_is_what_the_code_computes(model):
    assert model["model"] == gm.MODEL
    fresh = gm.model(model["settings"]["positive_per_nonzero"][1], model["settings"]["n_inner"])
    assert json.loads(json.dumps(fresh)) == model["shapes"]


def test_readme_block_is_the_render_of_the_committed_model():
    res = subprocess.run([sys.executable, str(REPO / "benchmarks" / "readme_gpu.py"),
                          "--check"], capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 0, res.stderr


def test_every_figure_in_the_block_comes_from_the_model(model):
    base = figures(rg.render(model))
    assert len(base) > 40
    moved = set()
    for path in numeric_leaves(model):
        other = figures(rg.render(scaled(model, path, 1.7)))
        for op, i1, i2, _, _ in SequenceMatcher(None, base, other, autojunk=False).get_opcodes():
            moved |= set(range(i1, i2)) if op != "equal" else set()
    assert [f for i, f in enumerate(base) if i not in moved] == []


def test_check_fails_on_a_stale_block(tmp_path, model):
    other = copy.deepcopy(model)
    other["gpu"]["hbm_bytes_per_s"] *= 2
    (tmp_path / "model.json").write_text(json.dumps(other))
    readme = tmp_path / "README.md"
    readme.write_text((REPO / "README.md").read_text())
    run = [sys.executable, str(REPO / "benchmarks" / "readme_gpu.py"), "--readme", str(readme),
           "--model", str(tmp_path / "model.json")]
    assert subprocess.run(run + ["--check"], capture_output=True).returncode == 1
    assert subprocess.run(run, capture_output=True).returncode == 0
    assert "6.70 TB/s" in readme.read_text()


def test_bytes_follow_the_access_count():
    """Issued bytes are the traffic model's accesses times the element sizes; the high bound
    counts a block-wide broadcast once per block; the low bound is never above the high."""
    from same.model.kernels import launch, traffic

    b = gm.paper_block(launch.paper_shapes()["nytimes K=256"], 8.0)
    acc = traffic.accesses(b, "high")
    for kernel, figures_ in gm.kernel_bytes(b).items():
        issued = sum((r + w) * traffic.ITEMSIZE[a] for a, (r, w) in acc[kernel].items())
        assert figures_["issued"] == issued
        assert figures_["low"] <= figures_["high"] <= issued
    # the per-nonzero sampler's μ and c are read by all lanes of its warp: once per warp in HBM
    mu_reads = acc["sample_accumulate"]["mu"][0]
    assert mu_reads == b.nnz * launch.WARP
