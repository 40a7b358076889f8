"""shaped_corpus's CUDA path without a GPU: the same matrix as the CPU path under numba-cuda's
simulator, and its kernels compiled to PTX for sm_80/sm_90 by numba-cuda's real compiler and
assembled by ptxas, with no libm call and no fused multiply-add (so a GPU rounds every draw as
the CPU does).  With a GPU and CuPy (marker ``gpu``): the same matrix on the device.

Marker ``gpu_sim``: ``python -m pytest -q -m gpu_sim`` runs these with the model's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
CASES = ["typical", "sparse", "dense", "many_tokens"]


@pytest.fixture(scope="module")
def sim_results():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    res = subprocess.run([sys.executable, str(HERE / "synthetic_sim_driver.py")],
                         capture_output=True, text=True, env=env, timeout=600,
                         cwd=HERE.parents[1])
    assert res.returncode == 0, res.stderr[-4000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.gpu_sim
def test_every_simulator_case_is_run(sim_results):
    assert sorted(sim_results) == sorted(CASES)


@pytest.mark.gpu_sim
@pytest.mark.parametrize("case", CASES)
def test_cuda_path_in_simulator_equals_cpu_path(sim_results, case):
    assert sim_results[case]["nnz"] > 0
    assert sim_results[case]["equal"]


@pytest.mark.gpu_sim
@pytest.mark.parametrize("cc", [(8, 0), (9, 0)], ids=["sm_80", "sm_90"])
def test_kernels_compile_to_ptx_without_libm_or_fma(cc):
    from numba import cuda

    from same.data import synthetic_cuda
    from same.model.kernels.ptx import _target_capability, assemble

    arch = f"sm_{cc[0]}{cc[1]}"
    with _target_capability(cc):
        for name, f in synthetic_cuda.kernel_sources().items():
            ptx, _ = cuda.compile_ptx(f, synthetic_cuda.signatures()[name], cc=cc)
            assert assemble(ptx, arch)
            for op in ("fma.", "ex2.", "lg2.", "sqrt."):
                assert op not in ptx, (name, op)


def _gpu_available() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


@pytest.mark.gpu
@pytest.mark.skipif(not _gpu_available(), reason="no CUDA device / CuPy")
def test_cuda_path_on_gpu_equals_cpu_path():
    from same.data.synthetic import shaped_corpus

    for kw in (dict(n_docs=5000, n_words=20_000, nnz=600_000, seed=4),
               dict(n_docs=300, n_words=40, nnz=9000, n_tokens=50_000, seed=5)):
        cpu, gpu = shaped_corpus(**kw), shaped_corpus(**kw, device="cuda")
        for f in ("indptr", "indices", "data"):
            np.testing.assert_array_equal(getattr(cpu, f), getattr(gpu, f))
