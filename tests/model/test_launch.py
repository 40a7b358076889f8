"""Launch shapes of the CUDA kernels at the paper's scale, computed without a GPU from the
launch code itself (:mod:`same.model.kernels.launch`, which :mod:`same.model.kernels.cuda` launches
with): every launch fills an H100 and no thread runs a long serial loop (issue 40)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from same.model.kernels import launch

REPO = Path(__file__).resolve().parents[2]

SHAPES = launch.paper_shapes()


def test_paper_shapes_come_from_the_registry():
    from same.data.corpus import REGISTRY
    from same.model.params import PAPER_MINIBATCHES

    assert sorted(SHAPES) == ["nytimes K=1024", "nytimes K=256", "pubmed K=1024",
                              "pubmed K=256"]
    for name, shape in SHAPES.items():
        info = REGISTRY[name.split()[0]]
        assert shape["n_words"] == info.n_words
        assert shape["n_docs"] * PAPER_MINIBATCHES >= info.n_docs
        assert shape["n_docs"] * (PAPER_MINIBATCHES - 1) < info.n_docs
        assert shape["nnz"] / shape["n_docs"] == pytest.approx(info.nnz / info.n_docs,
                                                               rel=1e-4)


KERNELS = ["sddmm", "sample_accumulate", "summed_t_partial", "summed_t_draw", "summed_ratio",
           "summed_p_partial", "summed_p_draw", "poisson_dense"]
#: (kernel, check) pairs that do not meet the bounds yet: strict xfail, so a fix shows.
TODO: set = set()


def _cases(check):
    return [pytest.param(name, kernel, marks=[pytest.mark.xfail(strict=True)]
                         * ((kernel, check) in TODO))
            for name in sorted(SHAPES) for kernel in KERNELS]


def _launches(shape, kernel):
    found = [x for group in launch.launch_shapes(**shape).values() for x in group
             if x.kernel == kernel]
    assert found, kernel
    return found


@pytest.mark.parametrize(("name", "kernel"), _cases("blocks"))
def test_every_launch_fills_an_h100(name, kernel):
    """At least two blocks per SM of an H100 (132 SMs) for every launch of a step."""
    for x in _launches(SHAPES[name], kernel):
        assert x.grid >= 264, x


@pytest.mark.parametrize(("name", "kernel"), _cases("serial"))
def test_no_thread_loops_over_an_items_topics(name, kernel):
    """Issue 50: every sampling kernel is a warp whose lanes share an item's K topics, so no
    thread runs more than ITEM_PASSES · ⌈K/32⌉ topic iterations per item (a nonzero, a chunk
    entry, a document's or a word's draw) -- at paper shapes a quarter of K at most, where a
    thread per item ran K-long loops (μ's dot product, the draw's prefix sums) while the
    others of its block waited."""
    k = SHAPES[name]["n_topics"]
    bound = launch.ITEM_PASSES * launch.topics_per_lane(k)
    assert bound <= k // 4
    for x in _launches(SHAPES[name], kernel):
        assert x.per_item <= bound, (x, bound)
        if kernel != "poisson_dense":
            assert x.block == launch.WARP, x


def test_per_item_bounds_follow_k():
    """The stated bound grows with ⌈K/32⌉, not K: a lane's share of the topics."""
    for k, per_lane in ((1, 1), (32, 1), (33, 2), (256, 8), (1024, 32)):
        assert launch.topics_per_lane(k) == per_lane


def test_launch_code_uses_these_shapes(monkeypatch):
    """cuda.py takes its grids from launch.py: a launch records the grid launch.py gives, and
    each sampling kernel's dynamic shared memory holds its K-long rows."""
    import numpy as np

    from same.model.kernels import cuda, cuda_sample, cuda_summed
    from same.model.kernels.cuda_warp import shared_bytes

    seen = []

    def record(name, grid, block, *a, shared=0, n_topics=None):
        if n_topics is not None:  # cuda_summed's launches name K; their rows are ROWS[name]
            shared = shared_bytes(cuda_summed.ROWS[name], n_topics)
        seen.append((name, grid, block, shared))

    monkeypatch.setattr(cuda, "_launch", record)
    monkeypatch.setattr(cuda_summed, "_launch", record)
    indptr, indices = np.array([0, 2, 3]), np.array([0, 1, 1], dtype=np.int32)
    theta = np.ones((2, 4), dtype=np.float32)
    out = np.empty(3, dtype=np.float32)
    cuda.sddmm(indptr, indices, theta, np.ones((2, 4), dtype=np.float32), out)
    cuda.poisson(np.ones(1000, dtype=np.float32), 1, np.empty(1000, dtype=np.int32))
    cuda.sample_accumulate(indptr, indices, np.ones(3, dtype=np.float32), theta, theta, out,
                           1.0, 1, np.empty((2, 4), dtype=np.int32), None, 1.0)
    assert seen == [("sddmm", *launch.sddmm(3), shared_bytes(0, 4)),
                    ("poisson_dense", *launch.poisson(1000), 0),
                    ("sample_accumulate", *launch.sample_accumulate(3),
                     shared_bytes(cuda_sample.ROWS, 4, cuda_sample.ROWS32))]
    seen.clear()
    data, ratio = np.ones(3, dtype=np.float32), np.empty(3, dtype=np.float32)
    cuda_summed.summed_t_sweeps(indptr, indices, data, theta, theta, 1.0, 1.0, 0.1, [1, 2],
                                ratio, 1.0)
    cuda_summed.summed_p_sweep(indptr, indices, data, ratio, theta, theta, 1.0, 3,
                               np.empty((2, 4), dtype=np.int32), 1.0)
    rows = shared_bytes(4, 4)
    t_pair = [("summed_t_partial", *launch.summed_partial(2, 3), rows),
              ("summed_t_draw", *launch.summed_draw(2), rows)]
    assert seen == t_pair * 2 + [("summed_ratio", *launch.summed_ratio(3), shared_bytes(0, 4)),
                                 ("summed_p_partial", *launch.summed_partial(2, 3), rows),
                                 ("summed_p_draw", *launch.summed_draw(2), rows)]
    names = [x.kernel for x in launch.launch_shapes(2, 2, 3, 4, n_inner=3)["summed"]]
    assert names == [n for n, *_ in seen]


def _ncu_sections(text: str) -> list[dict]:
    """Each kernel's launch statistics and occupancy limits in an Nsight Compute report."""
    keys = {"Block Size": "block", "Registers Per Thread": "registers",
            "Driver Shared Memory Per Block": "reserved_kb",
            "Dynamic Shared Memory Per Block": "shared_kb",
            "Shared Memory Configuration Size": "config_kb",
            "Block Limit Registers": "limit_registers", "Block Limit Shared Mem": "limit_shared",
            "Block Limit Warps": "limit_warps", "Block Limit SM": "limit_blocks"}
    sections = []
    for part in re.split(r"^  \w+::", text, flags=re.M)[1:]:
        found = {}
        for line in part.splitlines():
            for name, key in keys.items():
                if line.strip().startswith(name + " "):
                    found[key] = float(line.split()[-1].replace(",", ""))
        sections.append(found)
    return sections


def test_blocks_per_sm_is_what_nsight_compute_reported_on_the_h100():
    """launch.blocks_per_sm's H100 limits are Nsight Compute's for both kernels it profiled on
    the H100 (results/gpu/h100_2026-11-27c/ncu.txt: 96 registers → 20 blocks; 11.78 and
    9.47 KB of shared memory → 18 and 22); and its SM facts are the report's (configured
    shared memory, the driver's reserve)."""
    from same.model.kernels.cuda_warp import shared_bytes
    text = (REPO / "results/gpu/h100_2026-11-27c/ncu.txt").read_text()
    sections = _ncu_sections(text)
    assert len(sections) == 2 and all(len(s) == 9 for s in sections), sections
    for s in sections:
        assert round(s["config_kb"] * 1000) == round(launch.SM90["shared"] / 10) * 10
        assert round(s["reserved_kb"] * 1000) == round(launch.SM90["reserved"] / 10) * 10
        # the profiled launch's bytes: K = 256 rows as the kernels then held them (5 and 4
        # float64 rows), the one size of shared_bytes' that the report's 10-byte figure names
        sizes = [b for b in (shared_bytes(n, 256) for n in range(8))
                 if round(b / 1000, 2) == s["shared_kb"]]
        assert len(sizes) == 1, (s, sizes)
        got = launch.blocks_per_sm(int(s["registers"]), sizes[0], int(s["block"]))
        assert (got["registers"], got["shared"], got["warps"], got["blocks"]) == (
            s["limit_registers"], s["limit_shared"], s["limit_warps"], s["limit_blocks"])
    assert [s["limit_shared"] for s in sections] == [18, 22]
