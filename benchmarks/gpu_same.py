"""SAME speed at paper scale on synthetic corpora of a paper corpus' shape (issue 50: GPU).

Writes ``results/gpu/same_<shape>_<backend>.json``, each section printed as soon as it is
measured (a time limit still leaves the log with what was done):

- ``kernels``: every launch of a step on one minibatch, timed alone (CUDA events), beside
  cuSPARSE's sparse-dense products for comparison (benchmarks/gpu_kernels.py);
- ``agreement_with_cpu``: both samplers' counts against the CPU kernels' on one minibatch
  (identical except where rounding flips a draw);
- ``seconds_per_pass``: training seconds of a pass (after one warm-up pass) for the
  per-nonzero sampler at each m of ``--m-values`` and the summed sampler at each m of
  ``--summed-m-values``, and ``wall_seconds_per_pass`` beside them (the host's staging of the
  minibatches included);
- ``pubmed_step`` (``--pubmed-step``): one minibatch step of each sampler at PubMed's paper
  minibatch (410,000 documents), its seconds and the device memory CuPy's pool held;
- the device, driver and runtime versions, CuPy version, commit (``SAME_COMMIT`` when set:
  a GPU machine given a copy of the tree may carry stale git metadata).

On a GPU machine (benchmarks/gpu_session.sh runs it):

    python benchmarks/gpu_same.py --pubmed-step

Smoke test on a CPU (tiny, numpy backend):

    python benchmarks/gpu_same.py --backend numpy --scale 0.001 --passes 2 --out /tmp/x.json
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from same.io.cli import ArgumentParser, real_number, whole_number

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_kernels import agreement, kernel_times, make_timer, sync  # noqa: E402

SHAPES = ("nytimes", "pubmed", "kos")  # shapes of same.data.corpus.REGISTRY
__all__ = ["agreement", "main"]


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


def pubmed_step(xp, n_topics, n_inner, seed=0) -> dict:
    """One minibatch step of each sampler (m = 100, θ not carried) on a synthetic minibatch of
    PubMed's paper shape: seconds (after one untimed step) and the bytes CuPy's memory pool
    held after it (its high-water mark: the pool keeps what it allocated)."""
    from same.data.corpus import REGISTRY
    from same.data.synthetic import shaped_corpus
    from same.model import algorithm
    from same.model.backend import to_backend
    from same.model.params import paper_batch_size

    info = REGISTRY["pubmed"]
    docs = paper_batch_size(info.n_docs)
    nnz = int(info.nnz * docs / info.n_docs)
    t0 = time.perf_counter()
    counts = shaped_corpus(docs, info.n_words, nnz, n_tokens=int(info.n_tokens * docs
                                                                  / info.n_docs), seed=seed)
    out = {"n_docs": docs, "n_words": info.n_words, "nnz": int(counts.nnz),
           "generate_seconds": round(time.perf_counter() - t0, 1)}
    words = np.asarray(counts.sum(axis=0)).ravel().astype(np.float64)
    block = to_backend(counts.astype(np.float32), xp)
    for sampler in ("nonzero", "summed"):
        settings = algorithm.StepSettings(100.0, 1.0, 0.1, 0.1, n_inner, sampler,
                                          lambda *a: 0.5)
        state = algorithm.init_state(words, n_topics, seed, xp)
        algorithm.minibatch_step(state, block, settings)  # compiles
        sync(xp)
        pool = None if xp is np else xp.get_default_memory_pool()
        t0 = time.perf_counter()
        algorithm.minibatch_step(state, block, settings)
        sync(xp)
        out[sampler] = {"seconds": time.perf_counter() - t0,
                        "pool_bytes": None if pool is None else int(pool.total_bytes())}
    return out


def _args():
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", choices=SHAPES, default="nytimes")
    from same.model.backend import BACKENDS
    from same.model.params import SAMPLERS

    ap.add_argument("--scale", type=real_number(0, 1, low_open=True), default=1.0,
                    help="fraction of the shape's D and NNZ")
    ap.add_argument("--backend", default="cupy", choices=BACKENDS)
    from same.model.kernels.cuda_host import MAX_TOPICS

    m_value = real_number(0, 2.0**30, low_open=True, high_open=True)  # int32 counts of m
    ap.add_argument("--n-topics", type=whole_number(1, MAX_TOPICS), default=256,
                    help=f"K, at most {MAX_TOPICS} (the CUDA sampler's)")
    ap.add_argument("--n-inner", type=whole_number(1), default=5)
    ap.add_argument("--m-values", type=m_value, nargs="+", default=[1, 5, 20, 100, 500],
                    help="m of the per-nonzero sampler (Table 2, C6), each below 2^30")
    ap.add_argument("--summed-m-values", type=m_value, nargs="+", default=[1, 100])
    ap.add_argument("--samplers", nargs="+", default=["nonzero", "summed"], choices=SAMPLERS)
    ap.add_argument("--passes", type=whole_number(2), default=2,
                    help="passes per setting; the first warms up")
    ap.add_argument("--pubmed-step", action="store_true")
    ap.add_argument("--skip", nargs="+", default=[], choices=["kernels", "agreement_with_cpu"],
                    help="sections not to measure")
    ap.add_argument("--out", default=None)
    return ap, ap.parse_args()


def seconds_per_pass(args, counts, batch) -> tuple[dict, dict]:
    """(sampler → {m: training seconds of the last of ``args.passes`` passes}, the same for
    the pass's wall-clock seconds)."""
    from same.model.sampler import SameLDA

    out, wall = {}, {}
    for sampler in args.samplers:
        per_m, per_m_wall = {}, {}
        for m in (args.m_values if sampler == "nonzero" else args.summed_m_values):
            model = SameLDA(n_components=args.n_topics, n_copies=m, n_inner=args.n_inner,
                            max_iter=args.passes, batch_size=batch, sampler=sampler,
                            backend=args.backend, random_state=0)
            marks, stamps = [], [time.perf_counter()]
            for info in model.iter_fit(counts):
                marks.append(info["train_seconds"])
                stamps.append(time.perf_counter())
            per_pass, walls = np.diff([0.0] + marks), np.diff(stamps)
            per_m[f"{m:g}"] = float(per_pass[-1])
            per_m_wall[f"{m:g}"] = float(walls[-1])
            print(f"{sampler} m={m:g}: {per_m[f'{m:g}']:.3f} s/pass "
                  f"(wall {per_m_wall[f'{m:g}']:.3f} s)", flush=True)
        out[sampler], wall[sampler] = per_m, per_m_wall
    return out, wall


#: The result's ``benchmark``: what an earlier result at ``--out`` must say to be replaced.
BENCHMARK = "SAME seconds per pass at paper shape (synthetic corpus)"
#: The issue's targets at NYTimes' shape, K = 256, m = 100, on one H100 (issue 50).
TARGETS = {"summed_seconds_per_pass": 0.25, "nonzero_seconds_per_pass": 1.0,
           "growth_m1_to_m100": 1.3}


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


def _measure(sections, result: dict) -> None:
    """Each (key, measure) of ``sections`` into ``result``, printed as soon as it is measured;
    a section's failure is recorded and the others still measured."""
    for key, measure in sections:
        t0 = time.perf_counter()
        try:
            got = measure()
        except Exception as exc:  # one section's failure still leaves the others measured
            got = {"error": f"{type(exc).__name__}: {exc}"}
        if key == "seconds_per_pass" and "error" not in got:
            got, result["wall_seconds_per_pass"] = got
        result[key] = got
        print(json.dumps({key: got, "section_seconds": round(time.perf_counter() - t0, 1)},
                         default=float), flush=True)


def main() -> None:
    ap, args = _args()
    from same.io.outputs import check_option, json_kind
    from same.model.backend import BackendUnavailableError, check_backend

    out = Path(args.out or f"results/gpu/same_{args.shape}_{args.backend}.json")
    check_option(out, json_kind({"benchmark": BENCHMARK}), "gpu_same.py")  # before work
    try:  # no CuPy or no device: one line, before any work (after the user's file is checked)
        check_backend(args.backend)
    except BackendUnavailableError as exc:
        ap.error(str(exc))

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
    print(f"generated {D} x {W}, {counts.nnz} nonzeros in {gen_s:.1f} s", flush=True)
    generator = {"cpu_seconds": round(gen_s, 2)}
    if xp is not np:  # the generator's other path: same seed, the same corpus
        t0 = time.perf_counter()
        on_gpu = shaped_corpus(D, W, NNZ, n_tokens=tokens, seed=0, device="cuda")
        generator["cuda_seconds"] = round(time.perf_counter() - t0, 2)
        generator["identical"] = bool(all(np.array_equal(getattr(counts, a), getattr(on_gpu, a))
                                          for a in ("indptr", "indices", "data")))
        del on_gpu
        print(json.dumps({"generator": generator}), flush=True)
    timer = make_timer(xp)
    bandwidth = copy_bandwidth(xp, timer, n_bytes=(1 << 30) if xp is not np else (1 << 26))
    batch = paper_batch_size(D)
    result = {
        "benchmark": BENCHMARK,
        "shape": {"name": args.shape, "scale": args.scale, "n_docs": D, "n_words": W,
                  "nnz": int(counts.nnz), "n_tokens": int(counts.sum()),
                  "generate_seconds": round(gen_s, 1)},
        "settings": {"n_components": args.n_topics, "n_inner": args.n_inner,
                     "batch_size": batch, "passes": args.passes},
        "generator": generator,
        "device": device_info(xp),
        "copy_bandwidth_bytes_per_s": bandwidth,
    }
    sections = [("kernels", lambda: kernel_times(xp, counts[:batch], args.n_topics, timer,
                                                  bandwidth)),
                ("agreement_with_cpu", lambda: agreement(xp, counts[:batch], args.n_topics)),
                ("seconds_per_pass", lambda: seconds_per_pass(args, counts, batch))]
    sections = [(k, f) for k, f in sections if k not in args.skip]
    if args.pubmed_step:
        sections.append(("pubmed_step", lambda: pubmed_step(xp, args.n_topics, args.n_inner)))
    _measure(sections, result)
    result["targets"] = TARGETS
    result["model_for_comparison"] = _written_model()
    result.update(provenance())
    if os.environ.get("SAME_COMMIT"):  # a GPU machine's copy of the tree: git metadata stale
        result["commit_source"] = f"SAME_COMMIT (provenance read {result.get('commit')})"
        result["commit"] = os.environ["SAME_COMMIT"]
    write_json(out, result, option="--out")
    print(json.dumps({k: result.get(k) for k in ("seconds_per_pass", "wall_seconds_per_pass")},
                     indent=2, default=float))


if __name__ == "__main__":
    main()
