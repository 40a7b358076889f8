"""Global-memory accesses of the CUDA kernels counted under numba-cuda's simulator, against
:func:`same.model.kernels.traffic.accesses` (a case of tests/model/sim_cases.py, run in its process).

Every element a kernel's threads read or write through a kernel argument is counted by
patching the simulator's array wrapper (``FakeCUDAArray.__getitem__`` / ``__setitem__``: a
scalar result is one element access; a row view is none); an ``atomicAdd`` on a global array
counts one read and one write (the simulator's own read-add-write inside it is not counted);
shared arrays are plain NumPy arrays, not counted.  Accesses are attributed to the kernel
parameter whose host array holds the element's address.
"""

from __future__ import annotations

import inspect
import threading
from collections import defaultdict

import numpy as np


class Counter:
    """Accesses of the current launch: kernel → parameter → [reads, writes]."""

    def __init__(self):
        self.counts = defaultdict(lambda: defaultdict(lambda: [0, 0]))
        self.lock, self.local = threading.Lock(), threading.local()
        self.kernel, self.ranges = None, []

    def name(self, ary):
        addr = ary.__array_interface__["data"][0]
        for lo, hi, name in self.ranges:
            if lo <= addr < hi:
                return name
        raise AssertionError(f"access outside the kernel's arguments in {self.kernel}")

    def add(self, ary, which):
        if getattr(self.local, "quiet", False):
            return
        with self.lock:
            self.counts[self.kernel][self.name(ary)][which] += 1


def _install(counter):
    from numba.cuda.simulator import kernelapi
    from numba.cuda.simulator.cudadrv import devicearray as fake

    get, put = fake.FakeCUDAArray.__getitem__, fake.FakeCUDAArray.__setitem__

    def getitem(self, idx):
        ret = get(self, idx)
        if not isinstance(ret, fake.FakeCUDAArray):
            counter.add(self._ary, 0)
        return ret

    def setitem(self, idx, val):
        counter.add(self._ary, 1)
        return put(self, idx, val)

    add = kernelapi.FakeCUDAAtomic.add

    def atomic_add(self, array, index, val):
        if isinstance(array, fake.FakeWithinKernelCUDAArray):
            counter.add(array._item._ary, 0)
            counter.add(array._item._ary, 1)
            counter.local.quiet = True
        try:
            return add(self, array, index, val)
        finally:
            counter.local.quiet = False

    fake.FakeCUDAArray.__getitem__, fake.FakeCUDAArray.__setitem__ = getitem, setitem
    kernelapi.FakeCUDAAtomic.add = atomic_add

    def uninstall():
        fake.FakeCUDAArray.__getitem__, fake.FakeCUDAArray.__setitem__ = get, put
        kernelapi.FakeCUDAAtomic.add = add

    return uninstall


def _instrumented_launch(counter, kcuda):
    from numba.cuda.simulator.cudadrv import devicearray as fake

    sources = kcuda._kernel_sources()

    def run(name, grid, block, *args, **kw):
        if "n_topics" in kw:  # cuda_summed's launches name K; their rows are ROWS[name]
            from same.model.kernels import cuda_summed
            from same.model.kernels.cuda_warp import shared_bytes

            kw["shared"] = shared_bytes(cuda_summed.ROWS[name], kw["n_topics"])
        params = list(inspect.signature(sources[name]).parameters)
        counter.kernel, counter.ranges = name, []
        wrapped = []
        for p, a in zip(params, args):
            if isinstance(a, np.ndarray) and a.ndim > 0:
                lo = a.__array_interface__["data"][0]
                counter.ranges.append((lo, lo + a.nbytes, p))
                a = fake.FakeCUDAArray(a)  # no copy: views keep the host array's addresses
            wrapped.append(a)
        kcuda.kernel_functions()[name][grid, block, 0, kw.get("shared", 0)](*wrapped)

    return run


def block_stats(counts, theta, phi_t, mu, m, key, chunk):
    """:class:`same.model.kernels.traffic.Block` of a CSR block: the per-nonzero sampler's drawn
    nonzeros, positive (nonzero, topic) pairs, document runs and their positive topics per warp
    of NZ_CHUNK nonzeros from the CPU's per-element draws; the documents each warp walks."""
    from same.model.kernels import POOL, launch, traffic
    from same.model.kernels import elements as el

    n_docs, n_topics = theta.shape
    rows = np.repeat(np.arange(n_docs), np.diff(counts.indptr))
    cum, guide = np.empty(n_topics), np.empty(n_topics, dtype=np.int32)
    z = np.empty(n_topics, dtype=np.int32)
    drawn = positive = runs = t_positive = advances = 0
    for lo in range(0, counts.nnz, launch.NZ_CHUNK):
        hi = min(lo + launch.NZ_CHUNK, counts.nnz)
        advances += int(rows[hi - 1] - rows[lo])
        cur, tacc = -1, np.zeros(n_topics, dtype=np.int64)
        for j in range(lo, hi):
            if not (mu[j] > 0 and el.draw_at(j, counts.data[j], m, mu[j], theta[rows[j]],
                                              phi_t[counts.indices[j]], np.uint64(key), POOL,
                                              cum, guide, z)):
                continue
            drawn, positive = drawn + 1, positive + int((z > 0).sum())
            if rows[j] != cur:
                t_positive += int((tacc > 0).sum())
                cur, runs = rows[j], runs + 1
                tacc[:] = 0
            tacc += z
        t_positive += int((tacc > 0).sum())
    doc_chunks = -(-np.diff(counts.indptr) // chunk)
    word_chunks = -(-np.bincount(counts.indices, minlength=phi_t.shape[0]) // chunk)
    return traffic.Block(n_docs, phi_t.shape[0], counts.nnz, n_topics, int(doc_chunks.sum()),
                         int(word_chunks.sum()), int((doc_chunks == 1).sum()),
                         int((word_chunks == 1).sum()), int((word_chunks > 0).sum()), drawn,
                         positive, runs, t_positive, advances)


def _one_step(counter, counts, theta, phi_t, kernels, m):
    """One step of each sampler through the instrumented launch; the block's statistics and
    the model's accesses (low and high searches) at the CHUNK in force."""
    from same.model.kernels import traffic

    counter.counts.clear()
    with kernels.cuda_on_host():
        mu = kernels.sddmm(counts.indptr, counts.indices, theta, phi_t)
        T, P = np.empty(theta.shape, np.int32), np.empty(phi_t.shape, np.int32)
        kernels.sample_accumulate(counts.indptr, counts.indices, counts.data, theta, phi_t,
                                  mu, m, 21, T, P)
        th, ratio = theta.copy(), np.empty(counts.nnz, dtype=np.float32)
        kernels.summed_t_sweeps(counts, th, phi_t, m, 1.0, 0.1, [11], ratio)
        kernels.summed_p_sweep(counts, ratio, th, phi_t, m, 13, P)
    from same.model.kernels import launch

    b = block_stats(counts, theta, phi_t, mu, m, 21, launch.CHUNK)
    return b, traffic.accesses(b, "low"), traffic.accesses(b, "high")


def _compare(counter, low, high):
    wrong = []
    for kernel in high:
        got = {p: tuple(v) for p, v in counter.counts[kernel].items()}
        for p in sorted(set(got) | set(high[kernel])):
            r, w = got.get(p, (0, 0))
            (rl, wl), (rh, wh) = low[kernel].get(p, (0, 0)), high[kernel].get(p, (0, 0))
            if not (rl <= r <= rh and wl == w == wh):
                wrong.append(f"{kernel}.{p}: counted {(r, w)}, model {(rl, wl)}…{(rh, wh)}")
    if set(counter.counts) != set(high):
        wrong.append(f"kernels counted {sorted(counter.counts)}")
    return wrong


def traffic_case(problem, kernels, klaunch, kcuda, runs=((0.3, 3), (3.0, 8))):
    """Counted accesses of one step of each sampler equal the model's, kernel by kernel, for
    each (m, chunk) of ``runs``: m = 0.3 (most nonzeros skipped by the early exit) with chunks
    of 3 (most documents and words over several chunks), and m = 3 (every nonzero drawn) with
    chunks of 8 (most within one, drawn in their partial-sum block); the two runs reach every
    branch the model counts (``covered``: single and chunked documents and words, every and
    some nonzeros drawn). Each run is a step under the counting simulator (about 40 s)."""
    counts, theta, phi_t = problem(9, 30, 11, seed=6)
    counter = Counter()
    uninstall = _install(counter)
    from same.model.kernels import cuda_summed  # launches its own kernels

    before = klaunch.CHUNK, kcuda._launch, cuda_summed._launch
    kcuda._launch = cuda_summed._launch = _instrumented_launch(counter, kcuda)
    wrong, seen = [], []
    try:
        for m, chunk in runs:
            klaunch.CHUNK = chunk
            b, low, high = _one_step(counter, counts, theta, phi_t, kernels, m)
            wrong += [f"m={m}, chunk {chunk}: {w}" for w in _compare(counter, low, high)]
            seen.append(b)
    finally:
        klaunch.CHUNK, kcuda._launch, cuda_summed._launch = before
        uninstall()
    covered = (any(b.doc_single for b in seen) and any(b.doc_chunks > b.doc_single for b in seen)
               and any(b.word_single for b in seen)
               and any(b.word_chunks > b.word_single for b in seen)
               and any(b.drawn == b.nnz for b in seen) and any(b.drawn < b.nnz for b in seen))
    return not wrong and covered, "; ".join(wrong) or f"as modelled: {seen}"
