"""The cupy backend's host-side logic without a GPU (issue 28), on the stand-in of
tests/model/fake_cupy.py: CuPy's sparse dtype rule, the order of copies, waits and reads in
DeviceBatches, host synchronisations per step, θ kept on the device, the launch stream."""

from __future__ import annotations

import types

import fake_cupy
import numpy as np
import pytest
import scipy.sparse as sp

from same.data.synthetic import lda_corpus


@pytest.fixture
def cupy(monkeypatch):
    return fake_cupy.install(monkeypatch)


@pytest.fixture(scope="module")
def corpus():
    return lda_corpus(n_docs=120, n_words=60, n_topics=4, doc_length=40, seed=0).counts


def _model(backend, **kw):
    from same.model.sampler import SameLDA

    kw = {"n_components": 4, "n_copies": 5, "max_iter": 2, "batch_size": 40, "random_state": 3,
          **kw}
    return SameLDA(backend=backend, **kw)


def test_stand_in_refuses_integer_matrices_as_cupy_does(cupy):
    m = sp.random(5, 4, density=0.5, format="csr", random_state=0)
    csp = __import__("cupyx.scipy.sparse").scipy.sparse
    with pytest.raises(ValueError, match="Only bool, float32, float64"):
        csp.csr_matrix(m.astype(np.int32))


def test_integer_counts_reach_cupy_as_float(cupy, corpus):
    """Item 1: every cupy entry point that takes counts (to_backend, the evaluator through
    score/transform/heldout_score, partial_fit, fit's minibatches) hands CuPy a float matrix."""
    from same.model.backend import to_backend
    from same.model.evaluate import bidmach_loglik, heldout_loglik

    X = corpus.astype(np.int32)
    assert X.dtype == np.int32
    dev = to_backend(X, cupy)
    assert dev.dtype == np.float64 and (dev.get() != X).nnz == 0
    assert to_backend(X, cupy, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="CuPy sparse matrices hold only"):
        to_backend(X, cupy, dtype=np.int32)
    model = _model("cupy").fit(X)
    ref = _model("numpy").fit(X)
    np.testing.assert_array_equal(model.topic_word_, ref.topic_word_)
    half = X[:60], X[60:]
    assert model.score(X) == pytest.approx(ref.score(X), rel=1e-12)
    assert model.heldout_score(*half) == pytest.approx(ref.heldout_score(*half), rel=1e-12)
    np.testing.assert_allclose(model.transform(X), ref.transform(X), rtol=1e-12)
    phi = cupy.asarray(ref.topic_word_)
    assert bidmach_loglik(phi, 0.1, X) == pytest.approx(bidmach_loglik(ref.topic_word_, 0.1, X))
    assert heldout_loglik(phi, 0.1, *half) == pytest.approx(
        heldout_loglik(ref.topic_word_, 0.1, *half))
    _model("cupy").partial_fit(X[:40])


def test_device_batches_wait_for_the_copy_before_reading_a_block(cupy, corpus):
    """Item 2: no CSR construction (which reads indptr on the current stream) before the
    compute stream waits on the event recorded after that block's copies."""
    from same.model.backend import DeviceBatches

    bounds = [(0, 40), (40, 80), (80, 120)]
    got = list(DeviceBatches(corpus, bounds, cupy, np.float32))
    for (a, b, blk) in got:
        np.testing.assert_array_equal(blk.get().toarray(), corpus[a:b].toarray())
    log = fake_cupy.LOG
    built = [i for i, e in enumerate(log) if e[0] == "csr" and e[1] != "from scipy"]
    assert len(built) == len(bounds)
    for i in built:
        copy = max(j for j, e in enumerate(log[:i]) if e[:2] == ("copy", log[i][1]))
        assert log[copy][2] == "copy"  # the data array was filled on the copy stream
        event = next(e[1] for e in log[copy:i] if e[0] == "record" and e[2] == "copy")
        assert ("wait", event, "null") in log[copy:i], "block read before its copy landed"


def test_device_batches_stage_two_blocks_ahead_of_the_consumer(cupy, corpus, monkeypatch):
    """Issue 40 item 5: while the consumer holds block i, block i+1's copy to the device is
    already queued on the copy stream (so it overlaps block i's step) and block i+2's host
    staging (cut, cast, into pinned buffers) runs in a producer thread. The consumer waits,
    holding block i, for block i+2's staging to start: were staging done after it asked
    for the next block, it would never start and the wait would time out. The blocks are
    the host rows, in order, and no CUDA call leaves the consumer's thread (the stand-in's
    log is written by the consumer only)."""
    import threading

    import same.model.backend as backend

    started = {}
    threads = set()
    fill = backend._fill_pinned

    def watched(X, a, b, views):
        threads.add(threading.current_thread().name)
        started.setdefault(a, threading.Event()).set()
        fill(X, a, b, views)

    monkeypatch.setattr(backend, "_fill_pinned", watched)
    bounds = [(0, 30), (30, 55), (55, 90), (90, 120)]
    main = threading.current_thread().name
    for i, (a, b, blk) in enumerate(backend.DeviceBatches(corpus, bounds, cupy, np.float32)):
        np.testing.assert_array_equal(blk.get().toarray(), corpus[a:b].toarray())
        assert blk.data.dtype == np.float32 and blk.indices.dtype == np.int32
        copies = [e for e in fake_cupy.LOG if e[0] == "record" and e[2] == "copy"]
        assert len(copies) == min(i + 2, len(bounds)), (i, len(copies))
        if i + 2 < len(bounds):
            nxt = bounds[i + 2][0]
            assert started.setdefault(nxt, threading.Event()).wait(timeout=30), \
                f"block {i + 2} was not staged while block {i} was held"
    assert threads and main not in threads, threads


def test_a_fit_beyond_the_gpus_free_memory_is_refused_before_anything_is_allocated(cupy,
                                                                                   corpus):
    """Issue 40 item 7: on the cupy backend the memory check counts device memory: SAME's φᵀ,
    its IncNorm successor, P and IncNorm's float64 blend (20 bytes per K × W entry) and θ of
    the kept documents,
    against the driver's free memory plus what CuPy's pool holds free."""
    from same.model.fit_memory import DEVICE_BYTES_PER_ENTRY, device_memory_lower_bound

    K, (D, W) = 8, corpus.shape
    need = device_memory_lower_bound(K, W, D)
    assert need == K * W * DEVICE_BYTES_PER_ENTRY + D * K * 4
    fake_cupy.DEVICE_FREE[0], fake_cupy.POOL_FREE[0] = need // 2, need - need // 2 - 1
    model = _model("cupy", n_components=K, keep_doc_topic=True)
    with pytest.raises(MemoryError, match=(
            rf"^same with n_components=8 × {W} words on the GPU: its φ arrays and θ of {D} "
            r"documents need at least 0\.0 GiB of device memory, more than the 0\.0 GiB free; "
            r"use fewer topics, a smaller vocabulary or keep_doc_topic=False$")):
        model.fit(corpus)
    assert not hasattr(model, "topic_word_")
    fake_cupy.POOL_FREE[0] += 1  # exactly enough: the pool's free blocks count
    _model("cupy", n_components=K, keep_doc_topic=True, max_iter=1).fit(corpus)
    fake_cupy.DEVICE_FREE[0] = need - D * K * 4 - fake_cupy.POOL_FREE[0]  # θ not kept: fits
    _model("cupy", n_components=K, keep_doc_topic=False, max_iter=1).fit(corpus)


def test_non_finite_state_is_refused_after_the_step(cupy):
    from same.model import kernels

    with kernels.deferred_checks() as checks:
        kernels.check_finite(doc_topic=cupy.ones(3), mu=cupy.asarray([1.0, np.nan]))
        assert not any(e[0] == "sync" for e in fake_cupy.LOG)
        with pytest.raises(ValueError, match="^mu contains NaN or infinite values"):
            checks.raise_if_not_finite()
        checks.raise_if_not_finite()  # forgotten once read


def test_a_direct_kernel_call_answers_for_its_own_inputs(cupy, corpus):
    """Issue 40 item 2: a check queued by a call outside a fit (a benchmark's direct kernel
    call) was read by the next fit, which was then refused for NaN it never had. A direct
    call now reads its own check at once, and a fit only its own steps' checks."""
    from same.model import kernels
    from same.model.kernels import finite

    bad = cupy.asarray([1.0, np.nan])
    with pytest.raises(ValueError, match="^lam contains NaN or infinite values"):
        kernels.poisson(bad, 7)
    kernels.sddmm(cupy.asarray(np.array([0, 1], np.int32)), cupy.asarray(np.array([0], np.int32)),
                  cupy.ones((1, 2), dtype=np.float32), cupy.ones((1, 2), dtype=np.float32))
    assert finite._SCOPE.get() is None
    _model("cupy", max_iter=1).fit(corpus)  # nothing of the calls above is read here


def test_checks_queued_in_a_failed_scope_are_dropped(cupy, corpus):
    """A step that fails after queueing leaves nothing for the next one."""
    from same.model import kernels

    with pytest.raises(RuntimeError, match="^elsewhere$"):
        with kernels.deferred_checks():
            kernels.check_finite(mu=cupy.asarray([np.nan]))
            raise RuntimeError("elsewhere")
    _model("cupy", max_iter=1).fit(corpus)


def test_theta_stays_on_the_device_between_passes(cupy, corpus):
    """θ is copied to the host when doc_topic_ is read, not at every pass."""
    model = _model("cupy", max_iter=3)
    for _ in model.iter_fit(corpus):
        assert "doc_topic_" not in vars(model)
    assert not isinstance(model._doc_topic, np.ndarray) or isinstance(
        model._doc_topic, fake_cupy.ndarray)
    ref = _model("numpy", max_iter=3).fit(corpus)
    np.testing.assert_array_equal(model.doc_topic_, ref.doc_topic_)
    assert type(model.doc_topic_) is np.ndarray


def test_launch_on_the_legacy_stream_never_hands_dlpack_stream_0(cupy, monkeypatch):
    """Item 6: CuPy's legacy default stream (pointer 0) is launched on as handle 1."""
    from same.model.kernels import cuda as kcuda
    from same.model.kernels import cuda_host

    handles, launched = [], []
    monkeypatch.setattr(cuda_host, "cuda", types.SimpleNamespace(
        external_stream=lambda h: handles.append(h) or h))

    class Kernel:
        def __getitem__(self, config):
            return lambda *args: launched.append(config)

    monkeypatch.setattr(kcuda, "kernel_functions", lambda: {"sddmm": Kernel()})
    kcuda._launch("sddmm", 2, 8, cupy.ones(3), shared=256)
    assert handles == [1] and launched == [(2, 8, 1, 256)]  # grid, block, stream, shared
    assert kcuda.stream_handle(0) == 1 and kcuda.stream_handle(0x7F00) == 0x7F00


@pytest.mark.parametrize("sampler", ["nonzero", "summed"])
def test_a_step_copies_one_result_to_the_host(cupy, corpus, monkeypatch, sampler):
    """Issue 50: a minibatch step's one transfer to the host is its finiteness verdict (one
    ``get``, into pinned memory), besides the step's closing stream synchronisation.  The CUDA
    path's host code runs on the stand-in (CSC order, segment sums, buffers, IncNorm's
    totals); the launches are recorded, not run, and CuPy's own internal reads (which the
    stand-in cannot see) are covered by using none that reads: no ``bincount``."""
    from same.model import kernels
    from same.model.backend import to_backend
    from same.model.kernels import cuda as kcuda
    from same.model.kernels import cuda_host, cuda_summed

    monkeypatch.setattr(kernels, "_cpu", lambda xp: False)
    monkeypatch.setattr(cupy, "empty", fake_cupy._device(np.zeros), raising=False)
    launched = []

    def record(name, *args, **kw):
        launched.append(name)

    monkeypatch.setattr(kcuda, "_launch", record)
    monkeypatch.setattr(cuda_summed, "_launch", record)

    def blend(phi, p, total, rho, s, beta, out):
        out[...] = (1.0 - rho) * phi + rho * (p / s + beta) / total

    def scale(phi, total, out):
        out[...] = phi / total

    monkeypatch.setattr(cuda_host, "_incnorm_kernels", lambda: (blend, scale))
    model = _model("cupy", sampler=sampler, max_iter=1)
    model._begin(corpus, False)
    monkeypatch.setattr(np, "bincount", lambda *a, **k: pytest.fail("bincount reads the host"))
    block = to_backend(corpus[:40].astype(np.float32), cupy)
    fake_cupy.LOG.clear()
    launched.clear()
    model._train_step(block, 5.0, float(corpus[:40].sum()), None)
    assert [e for e in fake_cupy.LOG if e[0] == "sync"] == [("sync", "stream"), ("sync", "get")]
    n = model.n_inner
    assert launched == (["sddmm", "sample_accumulate"] * n if sampler == "nonzero" else
                        # the T sweeps, the carried θ's draw, then P (c/μ inside it)
                        ["summed_t_partial", "summed_t_draw"] * (n - 1 + model.keep_doc_topic)
                        + ["summed_p_partial", "summed_p_draw"])
