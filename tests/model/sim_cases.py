"""CUDA kernels under numba-cuda's simulator against the CPU kernels (run by test_cuda_sim.py).

Must run in its own process with ``NUMBA_ENABLE_CUDASIM=1`` set before numba is imported:

    NUMBA_ENABLE_CUDASIM=1 python tests/model/sim_cases.py [case ...]

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
from same.model.kernels import cuda as kcuda  # noqa: E402
from same.model.kernels import launch as klaunch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sim_traffic  # noqa: E402

LONG = 24  # a document longer than a chunk and than a warp's run of NZ_CHUNK nonzeros
# blocks of the per-nonzero sampler take several nonzeros, documents spanning blocks
klaunch.NZ_CHUNK = 5


def problem(n_docs, n_words, n_topics, seed=0, empty_doc=True, long_doc=True, max_count=4,
            dtype=np.float32):
    """A CSR block with an empty document and one longer than a block of threads."""
    rng = np.random.default_rng(seed)
    dense = rng.integers(1, max_count + 1, size=(n_docs, n_words)) * (
        rng.random((n_docs, n_words)) < 0.3)
    if empty_doc:
        dense[1] = 0
    if long_doc:
        dense[0, : min(n_words, LONG)] = 1
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
    # μ summed in float64 in order k (CPU) or by lane and butterfly (warp): each within
    # (K − 1)·u of the exact sum of positive terms, so within 2K·u of each other, and a
    # float32 result rounds once more (its eps)
    n_topics, eps = theta.shape[1], np.finfo(dtype).eps
    tol = 2 * n_topics * np.finfo(np.float64).eps + (eps if dtype == np.float32 else 0.0)
    err = float(np.max(np.abs(gpu - cpu) / np.abs(cpu)))
    return err <= tol, f"max relative difference {err:.3g} (rounding bound {tol:.3g})"


def _guide_tables(counts, theta, phi_t, mu, m, key):
    """Nonzeros whose pooled events are split with a guide table (n ≥ K/4), counted with the
    CPU's draws (so that a case can require the kernels' second event path)."""
    from same.model.kernels import POOL
    from same.model.kernels import elements as el

    n_topics, rows = theta.shape[1], np.repeat(np.arange(theta.shape[0]), np.diff(counts.indptr))
    found = 0
    for j in range(counts.nnz):
        lam = m * np.float64(counts.data[j]) / np.float64(mu[j]) * theta[rows[j]] * phi_t[
            counts.indices[j]]
        base = el.element_counter(np.uint64(j) * np.uint64(n_topics + 1) + np.uint64(n_topics))
        n = el.poisson(float(lam[lam < POOL].sum()), np.uint64(key), base)
        found += n * 4 >= n_topics
    return found


def _sweep(n_topics, m, accumulate=True, max_count=4, seed=0, flat=False):
    counts, theta, phi_t = problem(7, 30, n_topics, seed=seed, max_count=max_count)
    if flat:  # every λ below POOL: every topic pooled, many events (the guide table's path)
        theta, phi_t = np.full_like(theta, 2.0), np.full_like(phi_t, 1 / 30)
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
    guided = _guide_tables(counts, theta, phi_t, mu, m, 1234 + seed)
    return (same_t and same_p and total > 0 and (guided > 0 or not flat),
            f"T equal: {same_t}, P equal: {same_p}, {total} events, K={n_topics}, m={m}, "
            f"{guided} nonzeros split by a guide table")


def _draws_spread(n_topics=256, m=100.0, heavy=8):
    """The K draws of a nonzero spread over the lanes: θ_d's weight on topics 0 … heavy − 1,
    all of them lane 0's (⌈K/32⌉ = 8 topics a lane at K = 256), so each is drawn alone (λ ≈ m/8
    ≥ 10: PTRS) and the rest are pooled.  Every Poisson call is recorded with its lane: each
    nonzero's heavy + 1 draws (its lone topics and the pooled count) are made by heavy + 1
    lanes, one each, not ``heavy`` in a row by the lane owning them; and T and P are the CPU's."""
    import threading
    from collections import Counter

    from same.model.kernels import cuda_warp

    counts, _, _ = problem(6, 8, n_topics, seed=6, long_doc=False, max_count=1)
    theta = np.full((6, n_topics), 1e-3, dtype=np.float32)
    theta[:, :heavy] = 50.0
    phi_t = np.full((8, n_topics), 0.125, dtype=np.float32)
    mu = kernels.sddmm(counts.indptr, counts.indices, theta, phi_t)
    cpu_t, cpu_p = np.empty(theta.shape, np.int32), np.empty(phi_t.shape, np.int32)
    kernels.sample_accumulate(counts.indptr, counts.indices, counts.data, theta, phi_t, mu, m,
                              77, cpu_t, cpu_p)
    calls: Counter = Counter()
    real = cuda_warp.poisson

    def recorded(lam, key, base):
        j = (int(base) >> 20) // (n_topics + 1)
        calls[(j, threading.current_thread().threadIdx.x)] += 1
        return real(lam, key, base)

    gpu_t, gpu_p = np.empty(theta.shape, np.int32), np.empty(phi_t.shape, np.int32)
    cuda_warp.poisson = recorded
    try:
        with kernels.cuda_on_host():
            kernels.sample_accumulate(counts.indptr, counts.indices, counts.data, theta, phi_t,
                                      mu, m, 77, gpu_t, gpu_p)
    finally:
        cuda_warp.poisson = real
    per_nonzero = Counter(j for j, _ in calls.elements())
    most = max(calls.values())
    spread = (set(per_nonzero) == set(range(counts.nnz))
              and all(n == heavy + 1 for n in per_nonzero.values()) and most == 1)
    same = np.array_equal(cpu_t, gpu_t) and np.array_equal(cpu_p, gpu_p)
    return spread and same, (
        f"{counts.nnz} nonzeros, Poisson calls per nonzero {sorted(set(per_nonzero.values()))} "
        f"(expected {heavy + 1}), most by one lane for one nonzero {most}; T and P equal: {same}")


def _poisson(dtype):
    rng = np.random.default_rng(5)
    lam = np.concatenate([rng.random(40) * 2, rng.random(30) * 40 + 10, [0.0]]).astype(dtype)
    cpu = kernels.poisson(lam, 99)
    with kernels.cuda_on_host():
        gpu = kernels.poisson(lam, 99)
    return bool(np.array_equal(cpu, gpu)), f"{int((lam >= 10).sum())} draws with λ ≥ 10"


def _summed(n_topics, m, fused=False):
    """Both sweeps on the CPU and under the simulator; ``fused``: the simulated P sweep
    computes c/μ itself (ratio None, as a GPU fit does), compared with the CPU's ratios."""
    counts, theta, phi_t = problem(7, 30, n_topics, seed=4)
    out = []
    for host_cuda in (False, True):
        th = theta.copy()
        ratio = np.empty(counts.nnz, dtype=np.float32)
        P = np.empty(phi_t.shape, dtype=np.int32)
        ctx = kernels.cuda_on_host() if host_cuda else _nothing()
        with ctx:
            kernels.summed_t_sweeps(counts, th, phi_t, m, 1.0, 0.1, [11, 12], ratio)
            kernels.summed_p_sweep(counts, None if fused and host_cuda else ratio, th, phi_t,
                                   m, 13, P)
        out.append((th, ratio, P))
    (t0, r0, p0), (t1, r1, p1) = out
    close, err = _ratios_close(r0, r1, n_topics)
    ok = np.array_equal(t0, t1) and close and np.array_equal(p0, p1)
    return ok and int(p0.sum()) > 0, (f"θ equal: {np.array_equal(t0, t1)}, c/μ within "
                                      f"rounding: {close} ({err:.3g}), P equal: "
                                      f"{np.array_equal(p0, p1)}, {int(p0.sum())} events")


def _ratios_close(r0, r1, n_topics):
    """c/μ of the CPU (μ a float32 sum in order k) and of the warp (lane partial sums, then a
    butterfly): each sum of K positive terms is within (K − 1)·2^-24 of the exact one, so the
    two within 2K·2^-24, the ratio's float64 division and float32 store adding 2^-24 more."""
    err = float(np.max(np.abs(r1.astype(np.float64) / r0 - 1.0))) if r0.size else 0.0
    return err <= (2 * n_topics + 1) * 2.0 ** -24, err


def _chunked_reference(counts, theta, phi_t, m, keys, p_key, chunk):
    """The summed sampler's T sweeps, ratios and P sweep with every document's and word's sum
    taken in chunks of ``chunk`` terms (each in order, in float32, then added in order), the
    draws by the CPU-compiled per-element functions: what the CUDA kernels compute."""
    from same.model.kernels import POOL
    from same.model.kernels import elements as el

    indptr, indices, data = counts.indptr, counts.indices, counts.data
    n_topics = theta.shape[1]
    cum, guide = np.empty(n_topics), np.empty(n_topics, dtype=np.int64)
    t_row = np.empty(n_topics, dtype=np.int32)

    def chunked(terms):  # terms: list of (float32 r, float32 row)
        acc = np.zeros(n_topics, dtype=np.float32)
        for c in range(0, len(terms), chunk):
            part = np.zeros(n_topics, dtype=np.float32)
            for r, row in terms[c:c + chunk]:
                part = part + np.float32(r) * row
            acc = acc + part
        return acc

    for key in keys:
        for d in range(theta.shape[0]):
            js = range(indptr[d], indptr[d + 1])
            acc = chunked([(el.ratio(data[j], el.dot_seq(theta[d], phi_t[indices[j]])),
                            phi_t[indices[j]]) for j in js])
            el.summed_t_draw(d, el.doc_tokens(d, indptr, data), acc, theta[d], m, 1.0, 0.1,
                             np.uint64(key), POOL, cum, guide, t_row)
    rows = np.repeat(np.arange(theta.shape[0]), np.diff(indptr))
    ratio = np.array([el.ratio(data[j], el.dot_seq(theta[rows[j]], phi_t[indices[j]]))
                      for j in range(counts.nnz)], dtype=np.float32)
    P = np.zeros(phi_t.shape, dtype=np.int32)
    word_counts = np.bincount(indices, weights=data.astype(np.float64), minlength=P.shape[0])
    order = np.argsort(indices, kind="stable")
    for w in range(P.shape[0]):
        nz = order[indices[order] == w]
        if nz.size:
            acc = chunked([(ratio[j], theta[rows[j]]) for j in nz])
            el.draw_nonzero(w, m * word_counts[w], m, acc, phi_t[w], np.uint64(p_key), POOL,
                            cum, guide, P[w])
    return theta, ratio, P


def _summed_chunked(n_topics, m, chunk=3):
    """Documents and words longer than a chunk: the kernels' sums grouped by chunk."""
    counts, theta, phi_t = problem(7, 30, n_topics, seed=4)
    before, klaunch.CHUNK = klaunch.CHUNK, chunk
    try:
        th = theta.copy()
        ratio = np.empty(counts.nnz, dtype=np.float32)
        P = np.empty(phi_t.shape, dtype=np.int32)
        with kernels.cuda_on_host():
            kernels.summed_t_sweeps(counts, th, phi_t, m, 1.0, 0.1, [11, 12], ratio)
            kernels.summed_p_sweep(counts, ratio, th, phi_t, m, 13, P)
    finally:
        klaunch.CHUNK = before
    t0, r0, p0 = _chunked_reference(counts, theta.copy(), phi_t, m, [11, 12], 13, chunk)
    long_docs = int((np.diff(counts.indptr) > chunk).sum())
    long_words = int((np.bincount(counts.indices, minlength=30) > chunk).sum())
    close, err = _ratios_close(r0, ratio, n_topics)
    ok = np.array_equal(t0, th) and close and np.array_equal(p0, P)
    return ok and long_docs > 0 and long_words > 0 and int(P.sum()) > 0, (
        f"θ equal: {np.array_equal(t0, th)}, c/μ within rounding: {close} ({err:.3g}), P equal: "
        f"{np.array_equal(p0, P)}, {int(P.sum())} events; {long_docs} documents and "
        f"{long_words} words longer than a chunk of {chunk}")


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _fit(sampler="nonzero"):
    from same.data.synthetic import lda_corpus
    from same.model.sampler import SameLDA

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
    "sweep_guide_table": lambda: _sweep(64, 20.0, flat=True),
    "sweep_draws_spread": _draws_spread,
    "poisson_f32": lambda: _poisson(np.float32),
    "poisson_f64": lambda: _poisson(np.float64),
    "summed_k37_m100": lambda: _summed(37, 100.0),
    "summed_k5_m_below_1": lambda: _summed(5, 0.5),
    "summed_fused_ratio_k37": lambda: _summed(37, 100.0, fused=True),
    "summed_chunked_k37": lambda: _summed_chunked(37, 100.0),
    "summed_chunked_k5_m_below_1": lambda: _summed_chunked(5, 0.5, chunk=2),
    "traffic": lambda: sim_traffic.traffic_case(problem, kernels, klaunch, kcuda),
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
