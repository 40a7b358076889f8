"""Launch shapes of the CUDA kernels at the paper's scale, computed without a GPU from the
launch code itself (:mod:`same.model.kernels.launch`, which :mod:`same.model.kernels.cuda` launches
with): every launch fills an H100 and no thread runs a long serial loop (issue 40)."""

from __future__ import annotations

import pytest

from same.model.kernels import launch

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
def test_no_thread_runs_a_long_serial_loop(name, kernel):
    """No thread runs more than 64·K topic iterations in one launch (worst-case bounds: a
    document holding every word, a word in every document)."""
    k = SHAPES[name]["n_topics"]
    for x in _launches(SHAPES[name], kernel):
        assert x.serial <= 64 * k, (x, x.serial / k)


def test_launch_code_uses_these_shapes(monkeypatch):
    """cuda.py takes its grids from launch.py: a launch records the grid launch.py gives."""
    import numpy as np

    from same.model.kernels import cuda, cuda_summed

    seen = []

    def record(name, grid, block, *a):
        seen.append((name, grid, block))

    monkeypatch.setattr(cuda, "_launch", record)
    monkeypatch.setattr(cuda_summed, "_launch", record)
    indptr, indices = np.array([0, 2, 3]), np.array([0, 1, 1], dtype=np.int32)
    theta = np.ones((2, 4), dtype=np.float32)
    out = np.empty(3, dtype=np.float32)
    cuda.sddmm(indptr, indices, theta, np.ones((2, 4), dtype=np.float32), out)
    cuda.poisson(np.ones(1000, dtype=np.float32), 1, np.empty(1000, dtype=np.int32))
    assert seen == [("sddmm", *launch.sddmm(3)), ("poisson_dense", *launch.poisson(1000))]
    seen.clear()
    data, ratio = np.ones(3, dtype=np.float32), np.empty(3, dtype=np.float32)
    cuda_summed.summed_t_sweeps(indptr, indices, data, theta, theta, 1.0, 1.0, 0.1, [1, 2],
                                ratio, 1.0)
    cuda_summed.summed_p_sweep(indptr, indices, data, ratio, theta, theta, 1.0, 3,
                               np.empty((2, 4), dtype=np.int32), 1.0)
    t_pair = [("summed_t_partial", *launch.summed_partial(2, 3)),
              ("summed_t_draw", *launch.summed_draw(2))]
    assert seen == t_pair * 2 + [("summed_ratio", *launch.flat(3)),
                                 ("summed_p_partial", *launch.summed_partial(2, 3)),
                                 ("summed_p_draw", *launch.summed_draw(2))]
    names = [x.kernel for x in launch.launch_shapes(2, 2, 3, 4, n_inner=3)["summed"]]
    assert names == [n for n, *_ in seen]
