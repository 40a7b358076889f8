"""SAME speed at paper scale on synthetic corpora of NYTimes' shape (issue: GPU).

Writes ``results/gpu/same_<shape>_<backend>.json``:

- seconds per pass (training only, after one warm-up pass) for each m in ``--m-values``,
  for both samplers;
- per-kernel device time (CUDA events, after warm-up) of SDDMM and the Poisson
  sample-and-accumulate on one minibatch, launched alone (no checks or allocations), beside
  the performance model's low and high bound on the bytes each moves and the bandwidth
  either bound implies;
- the agreement of the backend's counts with the CPU kernels' on one minibatch
  (:func:`agreement`: identical except where rounding flips a draw);
- the device name, driver and runtime versions, CuPy version, commit.

On a GPU machine:

    python benchmarks/gpu_same.py                       # NYTimes shape, K=256, n_inner=5
    python benchmarks/gpu_same.py --m-values 1 5 20 100 500

Smoke test on a CPU (tiny, numpy backend):

    python benchmarks/gpu_same.py --backend numpy --scale 0.001 --passes 1 --out /tmp/x.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

SHAPES = ("nytimes", "pubmed", "kos")  # shapes of same.data.corpus.REGISTRY


def _sync(xp):
    if xp is not np:
        xp.cuda.get_current_stream().synchronize()


def _timer(xp):
    """Return a function timing a callable in seconds: CUDA events on GPU, perf_counter on CPU."""
    def run(fn, repeat=5):
        fn()  # warm-up
        _sync(xp)
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


def copy_bandwidth(xp, timer, n_bytes=1 << 30) -> float:
    """Device-to-device copy bandwidth in bytes/s (read + write counted)."""
    src = xp.ones(n_bytes // 4, dtype=xp.float32)
    dst = xp.empty_like(src)
    t = timer(lambda: dst.__setitem__(Ellipsis, src))
    return 2 * n_bytes / t


def device_info(xp) -> dict:
    if xp is np:
        return {"backend": "numpy"}
    props = xp.cuda.runtime.getDeviceProperties(xp.cuda.Device().id)
    return {"backend": "cupy", "name": props["name"].decode(),
            "compute_capability": f"{props['major']}.{props['minor']}",
            "memory_gib": round(props["totalGlobalMem"] / 2**30, 1),
            "driver_version": xp.cuda.runtime.driverGetVersion(),
            "runtime_version": xp.cuda.runtime.runtimeGetVersion(),
            "cupy": xp.__version__}


def _raw_kernels(xp, block, theta, phi_t, mu, T, P):
    """Callables running the SDDMM and the per-nonzero sampler alone.  On CuPy they launch the
    kernels straight (:func:`same.model.kernels.cuda._launch`, the launch shapes of
    :mod:`same.model.kernels.launch`) on arrays converted once: no finiteness check, no zeroing and
    no allocation in the timed call (T and P keep adding up; only the time is used).  On
    NumPy, the CPU kernels through :mod:`same.model.kernels`."""
    from same.model import kernels

    if xp is np:
        return (lambda: kernels.sddmm(block.indptr, block.indices, theta, phi_t, out=mu),
                lambda: kernels.sample_accumulate(block.indptr, block.indices, block.data,
                                                  theta, phi_t, mu, 100.0, 7, T, P))
    from same.model.kernels import cuda as kc
    from same.model.kernels import launch

    indptr = xp.asarray(block.indptr, dtype=xp.int64)
    indices = xp.asarray(block.indices, dtype=xp.int32)
    data = xp.asarray(block.data, dtype=xp.float32)
    nnz = int(indices.shape[0])
    return (lambda: kc._launch("sddmm", *launch.sddmm(nnz), indptr, indices, theta, phi_t, mu),
            lambda: kc._launch("sample_accumulate", *launch.sample_accumulate(nnz), indptr,
                               indices, data, theta, phi_t, mu, np.float64(100.0),
                               np.uint64(7), T, P, np.bool_(True), np.float64(kernels.POOL),
                               np.int64(launch.NZ_CHUNK)))


def _model_bytes(counts, n_topics) -> dict:
    """kernel → the performance model's (benchmarks/gpu_model.py) low and high bound on the
    bytes one launch moves on this minibatch: 1 and 8 topics with a draw per nonzero."""
    import gpu_model

    from same.model.kernels import launch, traffic

    docs = -(-np.diff(counts.indptr) // launch.CHUNK)
    words = -(-np.bincount(counts.indices, minlength=counts.shape[1]) // launch.CHUNK)
    out = {}
    for bound, positive in (("low", 1), ("high", 8)):
        b = traffic.Block(counts.shape[0], counts.shape[1], counts.nnz, n_topics,
                          int(docs.sum()), int(words.sum()), int((docs == 1).sum()),
                          int((words == 1).sum()), int((words > 0).sum()),
                          drawn=counts.nnz, positive=positive * counts.nnz)
        for name, v in gpu_model.kernel_bytes(b).items():
            out.setdefault(name, {})[bound] = v[bound]
    return out


def kernel_figures(xp, counts, n_topics, timer, bandwidth) -> dict:
    """Device time of the SDDMM and the per-nonzero sampler on one minibatch (m = 100), alone
    (:func:`_raw_kernels`), beside the model's bounds on the bytes each moves: the bandwidth
    each bound implies, and its share of the measured copy bandwidth (above 1 at the high
    bound means the cache served part of it)."""
    from same.model.backend import to_backend

    rng = np.random.default_rng(0)
    block = to_backend(counts.astype(np.float32), xp)
    n_docs, n_words = counts.shape
    theta = xp.asarray(rng.dirichlet(np.full(n_topics, 0.1), size=n_docs) + 0.1,
                       dtype=xp.float32)
    phi_t = xp.asarray(rng.dirichlet(np.full(n_words, 0.05), size=n_topics).T, dtype=xp.float32)
    phi_t = xp.ascontiguousarray(phi_t)
    mu = xp.empty(block.nnz, dtype=xp.float32)
    T = xp.zeros(theta.shape, dtype=xp.int32)
    P = xp.zeros(phi_t.shape, dtype=xp.int32)
    run_sddmm, run_sample = _raw_kernels(xp, block, theta, phi_t, mu, T, P)
    model = _model_bytes(counts.tocsr(), n_topics)
    out = {}
    for name, run in (("sddmm", run_sddmm), ("sample_accumulate", run_sample)):
        t = timer(run)
        out[name] = {"seconds": t, "model_bytes_bound": model[name]}
        for bound, b in model[name].items():
            out[name][f"bytes_per_s_at_{bound}_bound"] = b / t
            out[name][f"fraction_of_copy_bandwidth_at_{bound}_bound"] = b / t / bandwidth
    out["minibatch"] = {"n_docs": n_docs, "nnz": block.nnz, "n_components": n_topics}
    return out


def agreement(xp, counts, n_topics, n_samples=100.0, key=7) -> dict:
    """How far the backend's counts agree with the CPU kernels' on one minibatch, for the same
    θ, φ, μ-inputs and key (README "GPU"): the kernels share the per-element code and counter
    streams, but NVVM fuses multiply-adds and libdevice's exp/log are not glibc's, so μ and λ
    may differ in the last bits and a draw near a CDF step can come out one count apart.

    Returns the largest relative μ difference and, for T and P of one per-nonzero sweep, the
    share of cells equal and the relative difference of the totals (1.0, 1.0, 0 on NumPy).
    """
    from same.model import kernels
    from same.model.backend import to_backend, to_numpy

    rng = np.random.default_rng(1)
    host = counts.astype(np.float32)
    theta = (rng.dirichlet(np.full(n_topics, 0.1), size=host.shape[0]) + 0.1).astype(np.float32)
    phi_t = np.ascontiguousarray(rng.dirichlet(np.full(host.shape[1], 0.05), size=n_topics).T,
                                 dtype=np.float32)
    out = {}
    for name, x in (("cpu", np), ("backend", xp)):
        blk, th, ph = to_backend(host, x), to_backend(theta, x), to_backend(phi_t, x)
        mu = kernels.sddmm(blk.indptr, blk.indices, th, ph)
        T, P = x.empty(th.shape, dtype=x.int32), x.empty(ph.shape, dtype=x.int32)
        kernels.sample_accumulate(blk.indptr, blk.indices, blk.data, th, ph, mu, n_samples, key,
                                  T, P)
        out[name] = [to_numpy(a).astype(np.float64) for a in (mu, T, P)]
    (mu0, t0, p0), (mu1, t1, p1) = out["cpu"], out["backend"]
    return {"n_samples": n_samples, "nnz": int(host.nnz),
            "mu_max_relative_difference": float(np.max(np.abs(mu1 - mu0) / mu0)),
            "T_cells_equal": float(np.mean(t0 == t1)), "P_cells_equal": float(np.mean(p0 == p1)),
            "T_total_relative_difference": float(abs(t1.sum() - t0.sum()) / t0.sum())}


def _written_model(path: str = "results/gpu/model.json") -> dict | None:
    """The performance model of benchmarks/gpu_model.py (its bounds on the memory time of a
    pass), to put beside the measurements."""
    p = Path(path)
    if not p.is_file():
        return None
    model = json.loads(p.read_text())
    return {"gpu": model["gpu"]["name"],
            "seconds_per_pass_bound": {n: {s: v[s]["seconds_per_pass_bound"]
                                           for s in ("nonzero", "summed")}
                                       for n, v in model["shapes"].items()}}


def _args():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", choices=SHAPES, default="nytimes")
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the shape's D and NNZ")
    ap.add_argument("--backend", default="cupy")
    ap.add_argument("--n-topics", type=int, default=256)
    ap.add_argument("--n-inner", type=int, default=5)
    ap.add_argument("--m-values", type=float, nargs="+", default=[1, 5, 20, 100, 500])
    ap.add_argument("--samplers", nargs="+", default=["nonzero", "summed"])
    ap.add_argument("--passes", type=int, default=2, help="passes per setting; the first warms up")
    ap.add_argument("--out", default=None)
    return ap.parse_args()


def seconds_per_pass(args, counts, batch) -> dict:
    """sampler → {m: training seconds of the last of ``args.passes`` passes}."""
    from same.model.sampler import SameLDA

    out = {}
    for sampler in args.samplers:
        per_m = {}
        for m in args.m_values:
            model = SameLDA(n_components=args.n_topics, n_copies=m, n_inner=args.n_inner,
                            max_iter=args.passes, batch_size=batch, sampler=sampler,
                            backend=args.backend, random_state=0)
            marks = [info["train_seconds"] for info in model.iter_fit(counts)]
            per_pass = np.diff([0.0] + marks)
            per_m[f"{m:g}"] = float(per_pass[-1] if len(per_pass) > 1 else per_pass[0])
            print(f"{sampler} m={m:g}: {per_m[f'{m:g}']:.3f} s/pass", flush=True)
        out[sampler] = per_m
    return out


#: The result's ``benchmark``: what an earlier result at ``--out`` must say to be replaced.
BENCHMARK = "SAME seconds per pass at paper shape (synthetic corpus)"


def main() -> None:
    args = _args()
    from same.io.outputs import check_option, json_kind

    out = Path(args.out or f"results/gpu/same_{args.shape}_{args.backend}.json")
    check_option(out, json_kind({"benchmark": BENCHMARK}), "gpu_same.py")  # before work

    from same.data.corpus import REGISTRY
    from same.data.synthetic import shaped_corpus
    from same.experiments.provenance import provenance, write_json
    from same.model.backend import get_xp
    from same.model.params import paper_batch_size

    xp = get_xp(args.backend)
    info = REGISTRY[args.shape]
    D, W, NNZ, tokens = info.n_docs, info.n_words, info.nnz, info.n_tokens
    D, NNZ, tokens = (max(1, int(v * args.scale)) for v in (D, NNZ, tokens))
    t0 = time.perf_counter()
    counts = shaped_corpus(D, W, NNZ, n_tokens=tokens, seed=0)
    gen_s = time.perf_counter() - t0
    timer = _timer(xp)
    bandwidth = copy_bandwidth(xp, timer, n_bytes=(1 << 30) if xp is not np else (1 << 26))
    batch = paper_batch_size(D)
    result = {
        "benchmark": BENCHMARK,
        "shape": {"name": args.shape, "scale": args.scale, "n_docs": D, "n_words": W,
                  "nnz": int(counts.nnz), "n_tokens": int(counts.sum()),
                  "generate_seconds": round(gen_s, 1)},
        "settings": {"n_components": args.n_topics, "n_inner": args.n_inner,
                     "batch_size": batch, "passes": args.passes},
        "device": device_info(xp),
        "copy_bandwidth_bytes_per_s": bandwidth,
    }
    # each section printed as soon as it is measured: a time limit still leaves the log with it
    for key, measure in (
            ("kernels", lambda: kernel_figures(xp, counts[:batch], args.n_topics, timer,
                                               bandwidth)),
            ("agreement_with_cpu", lambda: agreement(xp, counts[:batch], args.n_topics)),
            ("seconds_per_pass", lambda: seconds_per_pass(args, counts, batch))):
        result[key] = measure()
        print(json.dumps({key: result[key]}, default=float), flush=True)
    targets = {"seconds_per_pass_nytimes_h100": 0.3,
               "kernel_fraction_of_copy_bandwidth_at_low_bound": 0.5, "growth_m1_to_m100": 1.3}
    result["targets"] = targets
    result["model_for_comparison"] = _written_model()
    result.update(provenance())
    write_json(out, result, option="--out")
    print(json.dumps({k: result[k] for k in ("seconds_per_pass", "kernels")}, indent=2,
                     default=float))


if __name__ == "__main__":
    main()
