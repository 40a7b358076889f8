"""CUDA kernels under numba-cuda's simulator against the CPU kernels (run by test_cuda_sim.py).

Must run in its own process with ``NUMBA_ENABLE_CUDASIM=1`` set before numba is imported:

    NUMBA_ENABLE_CUDASIM=1 python tests/sim_cases.py [case ...]

Prints one JSON object: case → {"ok": bool, "detail": str}.  Inputs are tiny (the simulator
runs every CUDA thread as a Python thread) and the block size is lowered to 8 threads so that
documents with more nonzeros than the block has threads are cheap to build.
"""

from __future__ import annotations

import json
import os
import sys
import traceback

import numpy as np
import scipy.sparse as sp

assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "set NUMBA_ENABLE_CUDASIM=1 first"

from same import kernels  # noqa: E402
from same.kernels import launch as klaunch  # noqa: E402

klaunch.THREADS = 8
# a small scratch budget caps the grids below the documents/words of the cases, so the
# kernels' grid-stride loops (every block and thread visiting several) are exercised
klaunch.SCRATCH_BYTES = 16 * 1024


def problem(n_docs, n_words, n_topics, seed=0, empty_doc=True, long_doc=True, max_count=4,
            dtype=np.float32):
    """A CSR block with an empty document and one longer than a block of threads."""
    rng = np.random.default_rng(seed)
    dense = rng.integers(1, max_count + 1, size=(n_docs, n_words)) * (
        rng.random((n_docs, n_words)) < 0.3)
    if empty_doc:
        dense[1] = 0
    if long_doc:
        dense[0, : min(n_words, 3 * klaunch.THREADS)] = 1
    counts = sp.csr_matrix(dense.astype(np.float32))
    theta = (rng.dirichlet(np.full(n_topics, 0.3), size=n_docs) * 50 + 0.1).astype(dtype)
    phi_t = np.ascontiguousarray(rng.dirichlet(np.full(n_words, 0.2), size=n_topics).T,
                                 dtype=dtype)
    return counts, theta, phi_t


def _sddmm(dtype):
    counts, theta, phi_t = problem(6, 40, 37, dtype=dtype)
    cpu = kernels.sddmm(counts.indptr, counts.indices, theta, phi_t)
    with kernels.cuda_on_host():
        gpu = kernels.sddmm(counts.indptr, counts.indices, theta, phi_t)
    eps = np.finfo(dtype).eps
    err = float(np.max(np.abs(gpu - cpu) / np.abs(cpu)))
    return err <= eps, f"max relative difference {err:.3g} (float rounding {eps:.3g})"


def _sweep(n_topics, m, accumulate=True, max_count=4, seed=0):
    counts, theta, phi_t = problem(7, 30, n_topics, seed=seed, max_count=max_count)
    mu = kernels.sddmm(counts.indptr, counts.indices, theta, phi_t)
    out = []
    for host_cuda in (False, True):
        T = np.empty(theta.shape, dtype=np.int32)
        P = np.empty(phi_t.shape, dtype=np.int32) if accumulate else None
        if host_cuda:
            with kernels.cuda_on_host():
                kernels.sample_accumulate(counts.indptr, counts.indices, counts.data, theta,
                                          phi_t, mu, m, 1234 + seed, T, P)
        else:
            kernels.sample_accumulate(counts.indptr, counts.indices, counts.data, theta, phi_t,
                                      mu, m, 1234 + seed, T, P)
        out.append((T, P))
    (t0, p0), (t1, p1) = out
    same_t = np.array_equal(t0, t1)
    same_p = (p0 is None and p1 is None) or np.array_equal(p0, p1)
    total = int(t0.sum())
    return (same_t and same_p and total > 0,
            f"T equal: {same_t}, P equal: {same_p}, {total} events, K={n_topics}, m={m}")


def _poisson(dtype):
    rng = np.random.default_rng(5)
    lam = np.concatenate([rng.random(40) * 2, rng.random(30) * 40 + 10, [0.0]]).astype(dtype)
    cpu = kernels.poisson(lam, 99)
    with kernels.cuda_on_host():
        gpu = kernels.poisson(lam, 99)
    return bool(np.array_equal(cpu, gpu)), f"{int((lam >= 10).sum())} draws with λ ≥ 10"


def _summed(n_topics, m):
    counts, theta, phi_t = problem(7, 30, n_topics, seed=4)
    out = []
    for host_cuda in (False, True):
        th = theta.copy()
        ratio = np.empty(counts.nnz, dtype=np.float32)
        P = np.empty(phi_t.shape, dtype=np.int32)
        ctx = kernels.cuda_on_host() if host_cuda else _nothing()
        with ctx:
            kernels.summed_t_sweeps(counts, th, phi_t, m, 1.0, 0.1, [11, 12], ratio)
            kernels.summed_p_sweep(counts, ratio, th, phi_t, m, 13, P)
        out.append((th, ratio, P))
    (t0, r0, p0), (t1, r1, p1) = out
    ok = np.array_equal(t0, t1) and np.array_equal(r0, r1) and np.array_equal(p0, p1)
    return ok and int(p0.sum()) > 0, (f"θ equal: {np.array_equal(t0, t1)}, c/μ equal: "
                                      f"{np.array_equal(r0, r1)}, P equal: "
                                      f"{np.array_equal(p0, p1)}, {int(p0.sum())} events")


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _fit(sampler="nonzero"):
    from same.sampler import SameLDA
    from same.synthetic import lda_corpus

    syn = lda_corpus(n_docs=40, n_words=30, n_topics=3, doc_length=20, seed=1)
    params = dict(n_components=3, n_copies=3.0, max_iter=2, n_inner=2, batch_size=20,
                  random_state=4, sampler=sampler)
    cpu = SameLDA(**params).fit(syn.counts)
    with kernels.cuda_on_host():
        gpu = SameLDA(**params).fit(syn.counts)
    diff = float(np.max(np.abs(cpu.topic_word_ - gpu.topic_word_)))
    same_theta = np.array_equal(cpu.doc_topic_, gpu.doc_topic_)
    return diff <= 1e-6 and same_theta, f"max |Δφ| {diff:.3g}, carried θ equal: {same_theta}"


CASES = {
    "sddmm_f32": lambda: _sddmm(np.float32),
    "sddmm_f64": lambda: _sddmm(np.float64),
    "sweep_k37_m100": lambda: _sweep(37, 100.0),
    "sweep_k5_m1": lambda: _sweep(5, 1.0),
    "sweep_m_below_1": lambda: _sweep(8, 0.3),
    "sweep_ptrs_branch": lambda: _sweep(3, 200.0, max_count=6, seed=2),
    "sweep_without_p": lambda: _sweep(6, 20.0, accumulate=False),
    "sweep_k64": lambda: _sweep(64, 50.0, seed=3),
    "poisson_f32": lambda: _poisson(np.float32),
    "poisson_f64": lambda: _poisson(np.float64),
    "summed_k37_m100": lambda: _summed(37, 100.0),
    "summed_k5_m_below_1": lambda: _summed(5, 0.5),
    "samelda_fit": _fit,
    "samelda_fit_summed": lambda: _fit("summed"),
}


def main(names) -> int:
    results = {}
    for name in names or CASES:
        try:
            ok, detail = CASES[name]()
            results[name] = {"ok": bool(ok), "detail": detail}
        except Exception:  # reported, so the calling test shows the traceback
            results[name] = {"ok": False, "detail": traceback.format_exc()}
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
