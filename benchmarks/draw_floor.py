"""The floor of a SAME pass on this machine: the exact Poisson draws it makes, each class of
rates timed with the kernels' generator (part of benchmarks/same_cpu.py, which imports it)."""

from __future__ import annotations

import time

import numpy as np

__all__ = ["draw_floor", "draw_scaling"]


def draw_floor(counts, sampler: str, n_topics: int, n_samples: float, n_inner: int,
               passes: int) -> dict:
    """The exact Poisson draws one pass of ``sampler`` makes, and what they alone cost here.

    After ``passes`` passes of that sampler (1 thread), recomputes from its state (carried
    θ, φ) the rates of one pass, the same θ for every sweep (an approximation of the sweeps'
    changing θ).  ``summed``: per minibatch, ``n_inner`` T draws per document
    (λ_dk = m θ_dk Σ_w c_dw φ_kw / μ_dw) and one P draw per word of the block
    (λ_wk = m φ_kw Σ_d c_dw θ_dk / μ_dw).  ``nonzero`` (Algorithm 3 as written): ``n_inner``
    draws per nonzero and topic, λ_jk = m c_j θ_dk φ_kw / μ_j.  Rates are classed as the
    kernels draw them (:mod:`same.model.kernels.elements`): λ ≥ 10 by PTRS, POOL ≤ λ < 10 by
    inversion, λ < POOL pooled into one draw per row (document, word or nonzero).  Each class's
    draws are then timed on its own rates with the kernels' generator
    (:func:`same.model.kernels.cpu.poisson_draws`, 1 thread); the sum is a lower bound on a pass
    (no μ, no accumulation, no categorical splits of the pooled events, whose number per pass
    is reported too): a lower bound for these kernels' draw code on this machine (a faster
    exact Poisson generator would lower it; NumPy's ``Generator.poisson`` is timed on the same
    rates for comparison).  At 2 threads the sum is divided by the draw code's measured
    speed-up (:func:`draw_scaling`, on all the pass's rates) and, for reference, by 2.
    """
    from same.model.kernels.cpu import set_threads
    from same.model.sampler import SameLDA

    set_threads(1)
    model = SameLDA(n_components=n_topics, n_copies=n_samples, n_inner=n_inner, max_iter=passes,
                    sampler=sampler, random_state=0).fit(counts)
    out, total, scaling = _time_draw_classes(_pass_rates(model, counts, sampler, n_samples,
                                                         n_inner))
    return {"sampler": sampler, "after_passes": passes, "classes": out,
            "draw_seconds_per_pass_1_thread": round(total, 4),
            "draw_seconds_per_pass_2_threads_ideal": round(total / 2, 4),
            "draw_scaling_2_threads": scaling,
            "draw_seconds_per_pass_2_threads": round(total / scaling["speedup"], 4),
            "note": "Poisson draws alone (lower bound); pooled events' categorical splits, "
                    "mu and the accumulation of the counts come on top; numpy_ns_per_draw: "
                    "NumPy's Generator.poisson (PTRS too) on the same rates, for reference"}


def _pass_rates(model, counts, sampler: str, n_samples: float, n_inner: int) -> dict:
    """The Poisson rates of one pass from a fitted model's θ and φ, by the kernels' class."""
    import scipy.sparse as sp

    from same.model import kernels

    phi = model.topic_word_.astype(np.float32).astype(np.float64)  # K × W, as sampled
    theta = np.asarray(model.doc_topic_, dtype=np.float64)
    X = sp.csr_matrix(counts, dtype=np.float64)
    rates = {"ptrs": [], "inversion": [], "pooled": []}
    for a, b in model.batches(X.shape[0]):
        blk, th = X[a:b], theta[a:b]
        rows = np.repeat(np.arange(b - a), np.diff(blk.indptr))
        mu = np.einsum("jk,kj->j", th[rows], phi[:, blk.indices])
        if sampler == "summed":
            ratio = sp.csr_matrix((blk.data / mu, blk.indices, blk.indptr), shape=blk.shape)
            lam_t = n_samples * th * np.asarray(ratio @ phi.T)
            present = np.asarray(blk.sum(axis=0)).ravel() > 0
            lam_p = (n_samples * phi.T * np.asarray(ratio.T @ th))[present]
            draws = ((lam_t, n_inner), (lam_p, 1))
        else:
            lam = th[rows] * phi[:, blk.indices].T
            lam *= (n_samples * blk.data / mu)[:, None]
            draws = ((lam, n_inner),)
        for lam, times in draws:
            small = lam < kernels.POOL
            for _ in range(times):
                rates["ptrs"].append(lam[lam >= 10.0])
                rates["inversion"].append(lam[~small & (lam < 10.0)])
                rates["pooled"].append((lam * small).sum(axis=1))
    return rates


def _time_draw_classes(rates: dict) -> tuple[dict, float, dict]:
    """Each class's draws timed on (up to 10^6 of) its own rates, 1 thread; (per class,
    seconds per pass, the 2-thread scaling of all of them)."""
    from same.model.kernels.cpu import poisson_draws

    out, total, samples = {}, 0.0, []
    rng = np.random.default_rng(0)
    for cls, parts in rates.items():
        lam = np.concatenate(parts)
        lam = lam[lam > 0]
        sample = np.ascontiguousarray(rng.permutation(lam)[:1_000_000])
        samples.append(sample)
        poisson_draws(sample[:10], np.uint64(1))
        seconds = min(_timed(lambda s=sample: poisson_draws(s, np.uint64(2))) for _ in range(3))
        ns = seconds / len(sample) * 1e9
        numpy_ns = min(_timed(lambda s=sample: rng.poisson(s)) for _ in range(3)) / len(sample) * 1e9
        out[cls] = {"draws_per_pass": int(len(lam)), "ns_per_draw": round(ns, 1),
                    "numpy_ns_per_draw": round(numpy_ns, 1),
                    "seconds_per_pass": round(len(lam) * ns * 1e-9, 4)}
        if cls == "pooled":
            out[cls]["pooled_events_per_pass"] = round(float(lam.sum()))
        total += len(lam) * ns * 1e-9
    scaling = draw_scaling(np.ascontiguousarray(rng.permutation(np.concatenate(samples))))
    return out, total, scaling


def draw_scaling(sample: np.ndarray, repeats: int = 5) -> dict:
    """This machine's 2-thread speed-up of the kernels' draw code: the best-of-``repeats``
    seconds of :func:`same.model.kernels.cpu.poisson_dense` (independent draws, parallel, no
    synchronisation) on ``sample`` at 1 and at 2 threads, and their ratio; no pass's draws can
    scale better."""
    from same.model.kernels.cpu import poisson_dense, set_threads

    out = np.empty(sample.shape, dtype=np.int64)
    seconds = {}
    for threads in (1, 2, 1, 2):
        set_threads(threads)
        poisson_dense(sample[:10], np.uint64(3), out[:10])
        best = min(_timed(lambda: poisson_dense(sample, np.uint64(4), out)) for _ in range(repeats))
        seconds[threads] = min(best, seconds.get(threads, best))
    set_threads(1)
    return {"draws": int(sample.size), "seconds_1_thread": round(seconds[1], 4),
            "seconds_2_threads": round(seconds[2], 4),
            "speedup": round(seconds[1] / seconds[2], 3)}


def _timed(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0
