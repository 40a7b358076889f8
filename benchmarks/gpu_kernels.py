"""Per-kernel device times and agreement with the CPU kernels on one minibatch (sections of
benchmarks/gpu_same.py's result).

- :func:`kernel_times`: every launch of a step timed alone with CUDA events (median of 5 after a
  warm-up; perf_counter on NumPy): the per-nonzero sampler's SDDMM and sample-and-accumulate,
  the summed sampler's T sweep (partial sums and draws), ratios, CSC order and P sweep, the
  IncNorm blend, and, for comparison, cuSPARSE's sparse-dense products that the summed sweeps'
  sums are (R·φᵀ and Rᵀ·θ with R = C/μ, through ``cupyx.scipy.sparse``).  Beside each: the
  bytes of the K-long rows it gathers (a float32 row per entry) and the rate that implies.
- :func:`agreement`: both samplers' counts on the backend against the CPU kernels' for the same
  inputs and keys: identical except where rounding flips a draw.
"""

from __future__ import annotations

import statistics
import time

import numpy as np


def sync(xp):
    if xp is not np:
        xp.cuda.get_current_stream().synchronize()


def make_timer(xp):
    """A function timing a callable in seconds: CUDA events on GPU, perf_counter on CPU (the
    median of ``repeat`` after one warm-up call)."""
    def run(fn, repeat=5):
        fn()  # warm-up (and compilation)
        sync(xp)
        times = []
        for _ in range(repeat):
            if xp is np:
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
            else:
                start, end = xp.cuda.Event(), xp.cuda.Event()
                start.record()
                fn()
                end.record()
                end.synchronize()
                times.append(xp.cuda.get_elapsed_time(start, end) / 1e3)
        return statistics.median(times)
    return run


def problem(xp, counts, n_topics, seed=0):
    """(block, θ, φᵀ) on ``xp`` for a host count matrix: θ ~ Dirichlet(0.1) + 0.1 and φ rows
    ~ Dirichlet(0.05), float32."""
    from same.model.backend import to_backend

    rng = np.random.default_rng(seed)
    host = counts.astype(np.float32).tocsr()
    theta = (rng.dirichlet(np.full(n_topics, 0.1), size=host.shape[0]) + 0.1).astype(np.float32)
    phi_t = np.ascontiguousarray(rng.dirichlet(np.full(host.shape[1], 0.05), size=n_topics).T,
                                 dtype=np.float32)
    return to_backend(host, xp), to_backend(theta, xp), to_backend(phi_t, xp)


def _calls(xp, block, theta, phi_t):
    """kernel name → (callable, K-long rows it gathers)."""
    from same.model import kernels

    nnz, (n_words, K) = block.nnz, phi_t.shape
    mu = xp.empty(nnz, dtype=xp.float32)
    ratio = xp.empty(nnz, dtype=xp.float32)
    T = xp.empty(theta.shape, dtype=xp.int32)
    P = xp.empty(phi_t.shape, dtype=xp.int32)
    th = theta.copy()
    phi = phi_t.copy()
    row_total = xp.ones(K, dtype=xp.float32)
    kernels.sddmm(block.indptr, block.indices, theta, phi_t, out=mu)
    kernels.summed_t_sweeps(block, th, phi_t, 100.0, 1.0, 0.1, [], ratio)
    calls = {"sddmm": (lambda: kernels.sddmm(block.indptr, block.indices, theta, phi_t,
                                             out=mu), 2 * nnz),
             "sample_accumulate": (lambda: kernels.sample_accumulate(
                 block.indptr, block.indices, block.data, theta, phi_t, mu, 100.0, 7, T, P),
                 2 * nnz),
             "summed_t_sweep": (lambda: kernels.summed_t_sweeps(
                 block, th, phi_t, 100.0, 1.0, 0.1, [11], None), 2 * nnz),
             "summed_ratio": (lambda: kernels.summed_t_sweeps(
                 block, th, phi_t, 100.0, 1.0, 0.1, [], ratio), 2 * nnz),
             "summed_p_sweep": (lambda: kernels.summed_p_sweep(
                 block, ratio, th, phi_t, 100.0, 13, P), nnz + n_words),
             "incnorm": (lambda: kernels.incnorm(phi, P, row_total, 1.0, 0.1, 0.5), 0)}
    if xp is not np:
        from same.model.backend import sparse_module
        from same.model.kernels.segments import word_order

        R = sparse_module(xp).csr_matrix((ratio, block.indices, block.indptr), shape=block.shape)
        Rt = R.T.tocsr()
        calls["word_order"] = (lambda: word_order(block.indptr, block.indices, n_words), 0)
        calls["cusparse_R_phi"] = (lambda: R @ phi_t, nnz)
        calls["cusparse_Rt_theta"] = (lambda: Rt @ theta, nnz)
    return calls


def kernel_times(xp, counts, n_topics, timer, bandwidth) -> dict:
    """kernel → {seconds, row_bytes, row_bytes_per_s, fraction_of_copy_bandwidth} on one
    minibatch at m = 100 (see the module docstring); CuPy kernels timed alone, NumPy through
    the CPU kernels."""
    from same.model.kernels import deferred_checks

    block, theta, phi_t = problem(xp, counts, n_topics)
    out = {}
    with deferred_checks():  # the GPU's finiteness checks queue: no read inside a timing
        for name, (fn, rows) in _calls(xp, block, theta, phi_t).items():
            t = timer(fn)
            row_bytes = rows * n_topics * 4
            out[name] = {"seconds": t, "row_bytes": row_bytes,
                         "row_bytes_per_s": row_bytes / t,
                         "fraction_of_copy_bandwidth": row_bytes / t / bandwidth}
    out["minibatch"] = {"n_docs": int(counts.shape[0]), "nnz": int(block.nnz),
                        "n_components": n_topics}
    return out


def agreement(xp, counts, n_topics, n_samples=100.0, key=7) -> dict:
    """How far the backend's counts agree with the CPU kernels' on one minibatch, for the same
    θ, φ and keys (README "GPU"): the kernels share the per-element code and counter streams,
    but sums are grouped differently (warp sums, lane-grouped cumulative rates), NVVM fuses
    multiply-adds and libdevice's exp/log are not glibc's, so μ and λ may differ in the last
    bits and a draw near a CDF step can come out one count apart.

    Returns the largest relative μ difference, for T and P of one per-nonzero sweep the share
    of cells equal and the relative difference of the totals, and for the summed sampler's
    sweeps (two T sweeps, the P sweep) the share of θ and P cells equal (all 1.0 or 0 on NumPy).
    """
    from same.model import kernels
    from same.model.backend import to_numpy

    out = {}
    for name, x in (("cpu", np), ("backend", xp)):
        blk, th, ph = problem(x, counts, n_topics, seed=1)
        mu = kernels.sddmm(blk.indptr, blk.indices, th, ph)
        T, P = x.empty(th.shape, dtype=x.int32), x.empty(ph.shape, dtype=x.int32)
        kernels.sample_accumulate(blk.indptr, blk.indices, blk.data, th, ph, mu, n_samples, key,
                                  T, P)
        ratio, Ps = x.empty(blk.nnz, dtype=x.float32), x.empty(ph.shape, dtype=x.int32)
        kernels.summed_t_sweeps(blk, th, ph, n_samples, 1.0, 0.1, [key + 1, key + 2], ratio)
        kernels.summed_p_sweep(blk, ratio, th, ph, n_samples, key + 3, Ps)
        out[name] = [to_numpy(a).astype(np.float64) for a in (mu, T, P, th, Ps)]
    (mu0, t0, p0, th0, ps0), (mu1, t1, p1, th1, ps1) = out["cpu"], out["backend"]
    return {"n_samples": n_samples, "nnz": int(counts.nnz),
            "mu_max_relative_difference": float(np.max(np.abs(mu1 - mu0) / mu0)),
            "T_cells_equal": float(np.mean(t0 == t1)), "P_cells_equal": float(np.mean(p0 == p1)),
            "T_total_relative_difference": float(abs(t1.sum() - t0.sum()) / t0.sum()),
            "summed_theta_cells_equal": float(np.mean(th0 == th1)),
            "summed_P_cells_equal": float(np.mean(ps0 == ps1))}
