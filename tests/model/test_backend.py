"""Backends: name resolution, moving arrays, and minibatch delivery (DeviceBatches)."""

import numpy as np
import pytest
import scipy.sparse as sp

from same.model.backend import DeviceBatches, array_module, get_xp, to_backend, to_numpy


def test_get_xp():
    assert get_xp("numpy") is np
    with pytest.raises(ValueError, match=r"backend must be one of \('numpy', 'cupy'\), got 'tpu'"):
        get_xp("tpu")


def test_numpy_roundtrip():
    a = np.arange(6.0).reshape(2, 3)
    assert array_module(a) is np
    assert to_numpy(to_backend(a, np)) is a
    m = sp.random(4, 5, density=0.5, format="csr", random_state=0)
    assert to_backend(m, np, dtype=np.float32).dtype == np.float32


def _blocks(xp):
    X = sp.random(37, 11, density=0.3, format="csr", random_state=1) * 10
    X.data = np.ceil(X.data)
    bounds = [(0, 10), (10, 20), (20, 30), (30, 37)]
    return X, bounds, list(DeviceBatches(X, bounds, xp, np.float32))


def test_device_batches_numpy():
    X, bounds, got = _blocks(np)
    assert [(a, b) for a, b, _ in got] == bounds
    for (a, b, blk) in got:
        assert blk.dtype == np.float32
        np.testing.assert_array_equal(blk.toarray(), X[a:b].toarray())


@pytest.mark.gpu
def test_device_batches_cupy_match_host():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except Exception:
        pytest.skip("no CUDA device")
    X, bounds, got = _blocks(cupy)
    for (a, b, blk) in got:
        assert blk.dtype == np.float32
        np.testing.assert_array_equal(blk.get().toarray(), X[a:b].toarray())
