"""The CUDA kernels without a GPU: PTX for sm_80/sm_90 through numba-cuda's real compiler and
ptxas, and bit-for-bit parity with the CPU kernels under numba-cuda's simulator.

Marker ``gpu_sim``: ``python -m pytest -q -m gpu_sim`` runs these alone. None may skip: the
CUDA toolchain pieces (numba-cuda, NVVM, ptxas) come with the test extra's
``numba-cuda[cu12]``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu_sim

HERE = Path(__file__).resolve().parent
SIM_CASES = ["sddmm_f32", "sddmm_f64", "sweep_k37_m100", "sweep_k5_m1", "sweep_m_below_1",
             "sweep_ptrs_branch", "sweep_without_p", "sweep_k64", "sweep_guide_table",
             "sweep_draws_spread",
             "poisson_f32", "poisson_f64", "summed_k37_m100", "summed_k5_m_below_1",
             "summed_fused_ratio_k37",
             "summed_chunked_k37", "summed_chunked_k5_m_below_1", "traffic", "samelda_fit",
             "samelda_fit_summed"]


#: Cases per simulator process: the processes share the machine's cores (one each at a time),
#: so the suite's ten minutes of pure-Python simulation take about ten over the core count.
CASES_PER_PROCESS = 3


def _run_cases(names: list[str]) -> dict:
    """``names`` run in one process with NUMBA_ENABLE_CUDASIM=1: case → {ok, detail}."""
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    res = subprocess.run([sys.executable, str(HERE / "sim_cases.py"), *names],
                         capture_output=True, text=True, env=env, timeout=900,
                         cwd=HERE.parents[1])
    assert res.returncode == 0, res.stderr[-4000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def sim_results():
    """Every simulator case, run once, in processes of :data:`CASES_PER_PROCESS` cases each,
    as many at a time as this process may use cores (numba-cuda's simulator is single-threaded
    Python)."""
    from concurrent.futures import ThreadPoolExecutor

    chunks = [SIM_CASES[i::-(-len(SIM_CASES) // CASES_PER_PROCESS)]
              for i in range(-(-len(SIM_CASES) // CASES_PER_PROCESS))]
    with ThreadPoolExecutor(max_workers=len(os.sched_getaffinity(0))) as pool:
        parts = list(pool.map(_run_cases, chunks))
    return {case: r for part in parts for case, r in part.items()}


def test_every_case_is_run(sim_results):
    assert sorted(sim_results) == sorted(SIM_CASES)


@pytest.mark.parametrize("case", SIM_CASES)
def test_cuda_kernel_equals_cpu_kernel_in_simulator(sim_results, case):
    r = sim_results[case]
    assert r["ok"], r["detail"]


@pytest.fixture(scope="module", params=[(8, 0), (9, 0)], ids=["sm_80", "sm_90"])
def ptx(request):
    from same.model.kernels.ptx import compile_kernels

    return request.param, compile_kernels(request.param)


@pytest.mark.parametrize("kernel", ["sddmm", "sample_accumulate", "poisson_dense",
                                    "summed_t_partial", "summed_t_draw", "summed_ratio",
                                    "summed_p_partial", "summed_p_draw"])
def test_kernel_compiles_to_ptx_and_assembles(ptx, kernel):
    from same.model.kernels.cuda import signatures
    from same.model.kernels.ptx import assemble

    cc, compiled = ptx
    arch = f"sm_{cc[0]}{cc[1]}"
    assert len(compiled[kernel]) == len(signatures()[kernel])
    for text in compiled[kernel]:
        assert f".target {arch}" in text
        assert ".extern .func" not in text  # the shared per-element code is compiled in
        cubin = assemble(text, arch)
        assert cubin[:4] == b"\x7fELF"


def test_ptxas_rejects_broken_ptx():
    from same.model.kernels.ptx import assemble

    with pytest.raises(RuntimeError, match=r"ptxas -arch=sm_90 failed"):
        assemble(".version 8.0\n.target sm_90\n.address_size 64\nnot ptx at all\n")


def test_kernel_stack_frames_are_small_for_every_k(ptx):
    """Issue 28 item 5: the driver reserves a kernel's local frame for every thread an SM can
    hold (2,048 × 132 SMs on an H100), so a 20 KiB frame cost about 6 GiB of device memory.
    The K-long scratch lives in shared memory, one per block (issue 40), so the frame, read
    from ``ptxas -v``, does not grow with K: at most 4 KiB per thread."""
    from same.model.kernels.ptx import stack_frames

    cc, compiled = ptx
    for name, texts in compiled.items():
        for text in texts:
            frames = stack_frames(text, f"sm_{cc[0]}{cc[1]}")
            assert frames and max(frames) <= 4096, (name, frames)


def test_only_a_register_cap_spills(ptx):
    """No kernel spills registers to local memory on its own (``ptxas -v``); under its cap
    for the target (cuda_host.register_cap, passed to ptxas as a GPU launch passes it) each
    capped kernel keeps to the cap, the per-nonzero sampler spilling, as the README says
    ("spills a little": if it stops, the sentence and the cap are weighed again), the summed T
    sweep not: its cap, on sm_90 only, rounds its registers down to an H100's next block
    (98 → 95 with ptxas 12.9); on sm_80 it takes 92 and a cap of 96 would spill 60 bytes."""
    from same.model.kernels.cuda_host import MAX_REGISTERS, register_cap
    from same.model.kernels.ptx import registers, spill_bytes

    cc, compiled = ptx
    arch = f"sm_{cc[0]}{cc[1]}"
    for name, texts in compiled.items():
        assert [spill_bytes(t, arch) for t in texts] == [0] * len(texts), name
    assert sorted(MAX_REGISTERS) == ["sample_accumulate", "summed_t_partial"]
    caps = {name: register_cap(name, cc) for name in MAX_REGISTERS}
    assert caps == {"sample_accumulate": 96, "summed_t_partial": 96 if cc == (9, 0) else None}
    for name, cap in caps.items():
        if cap is not None:
            assert registers(compiled[name][0], arch, cap) <= cap, name
    assert spill_bytes(compiled["sample_accumulate"][0], arch, 96) > 0
    assert spill_bytes(compiled["summed_t_partial"][0], arch, caps["summed_t_partial"]) == 0


def test_every_kernel_is_compiled_with_its_register_cap(monkeypatch):
    """The caps reach the kernels a GPU launches, the summed sampler's included (its kernels
    are jitted in cuda_summed): each dispatcher's max_registers is its cap on the device's
    compute capability (an H100's, an A100's, or none known: only the caps of every one)."""
    from same.model.kernels import cuda, cuda_host, cuda_summed

    try:
        for cc, t_cap in [((9, 0), 96), ((8, 0), None), (None, None)]:
            monkeypatch.setattr(cuda_host, "_device_capability", lambda cc=cc: cc)
            cuda.kernel_functions.cache_clear()
            cuda_summed.kernel_functions.cache_clear()
            caps = {name: f.targetoptions.get("max_registers")
                    for name, f in cuda.kernel_functions().items()}
            assert caps == {name: cuda_host.register_cap(name, cc) for name in cuda.signatures()}
            assert (caps["sample_accumulate"], caps["summed_t_partial"]) == (96, t_cap), cc
    finally:
        cuda.kernel_functions.cache_clear()
        cuda_summed.kernel_functions.cache_clear()


@pytest.mark.parametrize("ptx", [(9, 0)], indirect=True, ids=["sm_90"])
def test_an_h100_sm_holds_20_blocks_of_either_sampling_sweep(ptx):
    """Issue 50: at K = 256 on an H100 (sm_90, :func:`same.model.kernels.launch.blocks_per_sm`,
    checked against Nsight Compute in tests/model/test_launch.py) the registers, not shared
    memory, limit the blocks an SM runs of the two sweeps that take most of a step, 20 one-warp
    blocks each: the per-nonzero sampler held 18 (five float64 rows; θ_d and φ_w are now
    float32 rows), the summed T sweep 16 (98 registers, before its cap). H100 only (sm_90:
    the one SM whose limits are checked against a report); on sm_80 the caps hold (above)."""
    from same.model.kernels import cuda_sample, cuda_summed
    from same.model.kernels.cuda_host import register_cap
    from same.model.kernels.cuda_warp import shared_bytes
    from same.model.kernels.launch import blocks_per_sm
    from same.model.kernels.ptx import registers

    cc, compiled = ptx
    k = 256
    shared = {"sample_accumulate": shared_bytes(cuda_sample.ROWS, k, cuda_sample.ROWS32),
              "summed_t_partial": shared_bytes(cuda_summed.ROWS["summed_t_partial"], k)}
    for name, size in shared.items():
        regs = registers(compiled[name][0], "sm_90", register_cap(name, cc))
        limits = blocks_per_sm(regs, size)
        assert limits["shared"] >= limits["registers"] == limits["active"] == 20, (
            name, regs, size, limits)
    before = blocks_per_sm(96, shared_bytes(5, k))["active"]  # the rows before
    uncapped = registers(compiled["summed_t_partial"][0], "sm_90")
    t_before = blocks_per_sm(uncapped, shared["summed_t_partial"])["active"]
    assert (before, t_before) == (18, 16)
    # the README's sentence is these numbers
    readme = " ".join((HERE.parents[1] / "README.md").read_text().split())
    for said in (f"an H100 SM holds {limits['active']} one-warp blocks of either sweep",
                 f"the report shows {before} of the per-nonzero sampler",
                 f"the summed T sweep to {uncapped} registers, {t_before} blocks",
                 f"capped at {register_cap('summed_t_partial', cc)} on sm_90 now"):
        assert said in readme, said


_STRONG = re.compile(r"bit[- ]identical|bit for bit|same integer counts|no (fast-math or )?FMA",
                     re.I)


def test_the_cpu_gpu_promise_matches_the_ptx(ptx):
    """Issue 28 item 4: NVVM contracts multiply-adds into fma (its default; numba-cuda has no
    switch), so the README and the kernels' docstrings promise equal-in-distribution counts,
    identical except where rounding flips a draw, and say bit-identical only of the
    simulator. If the PTX ever loses its fma.rn.f32, this fails: the promise can be raised."""
    from same.model.kernels import cpu, cuda, elements

    cc, compiled = ptx
    fused_f32 = sum(t.count("fma.rn.f32") for t in compiled["summed_t_partial"])
    assert fused_f32 > 0, "no fused float32 multiply-add left: the promise can be stronger"
    readme = (HERE.parents[1] / "README.md").read_text()
    docs = [readme, cuda.__doc__, elements.dot_seq.__doc__, elements.axpy.__doc__,
            cpu.sddmm_csr.__doc__]
    for doc in docs:
        for sentence in re.split(r"(?<=[.;:])\s+", " ".join(doc.split())):
            if _STRONG.search(sentence):
                assert "simulator" in sentence or "thread" in sentence, sentence
    for doc in (readme, cuda.__doc__):
        flat = " ".join(doc.split())
        assert "equal in distribution" in flat and "except where rounding flips a draw" in flat
        assert "NVVM contracts multiply-adds" in flat
