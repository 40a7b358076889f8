"""CPU SAME against this machine's limits and against tomotopy, in one run (issue 12).

Writes ``results/bench/same_cpu.json`` with

- ``speed``: training seconds per pass of both samplers (``nonzero``: Algorithm 3 as written;
  ``summed``: equal in distribution) at 1 and 2 threads on the full corpus (KOS, K=64,
  m=100, n_inner=5): the median of passes 2..n (JIT compilation excluded), the
  multiply-adds per second this achieves against the model count 2 · n_inner · nnz · K per
  pass (SDDMM plus the (c/μ)·φ products), and a measured peak: a NumPy float32 matmul of
  the same shape as one minibatch's dense θ φ product, at the same thread count;
- ``speed.summed_draw_floor``, ``speed.nonzero_draw_floor``: the exact Poisson draws one
  pass of each sampler makes, by method (PTRS, inversion, pooled), and their cost alone on
  this machine (:func:`draw_floor`; NumPy's own generator on the same rates beside it), the
  draw code's measured 2-thread speed-up (:func:`draw_scaling`), and with the multiply-adds
  at the matmul peak a lower bound on a pass (:func:`pass_floor`), beside issue 12's target;
- ``quality``: on the workflow's held-out split (seed 0, 10 % of documents), every method
  through the one runner and evaluator (SAME summed and tomotopy CGS at 1 and 2 threads; VB
  online and batch at 1): the seconds SAME and CGS take to reach SAME's ll after 20 passes
  (and after 5 and 10), with their ratio; and the ll that VB online and batch reach after 20
  passes, with the pass and seconds at which SAME reaches it.  Crossing times are
  interpolated linearly in (seconds, ll) between checkpoints.

    SAME_DATA_DIR=../shared/datasets/uci python benchmarks/same_cpu.py [--quick]

Every figure is for this machine only; the machine, versions and commit are recorded.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

#: issue 12's targets (s/pass, KOS, K=64, m=100, n_inner=5, 2 threads)
from draw_floor import _timed, draw_floor  # noqa: E402  (beside this script)

from same.io.cli import ArgumentParser, real_number, whole_number

TARGETS = {"summed": 0.025, "nonzero": 0.3}


def seconds_per_pass(counts, sampler: str, threads: int, passes: int, n_topics: int,
                     n_samples: float, n_inner: int) -> dict:
    """Per-pass training seconds of one sampler; median of passes 2..n."""
    from same.model.kernels.cpu import set_threads
    from same.model.sampler import SameLDA

    set_threads(threads)
    model = SameLDA(n_components=n_topics, n_copies=n_samples, n_inner=n_inner, max_iter=passes,
                    sampler=sampler, random_state=0)
    marks = [info["train_seconds"] for info in model.iter_fit(counts)]
    per_pass = np.diff([0.0] + marks)
    steady = float(statistics.median(per_pass[1:]))
    madds = 2 * n_inner * counts.nnz * n_topics
    return {"seconds_per_pass": [round(float(s), 4) for s in per_pass],
            "median_seconds_per_pass_after_first": round(steady, 4),
            "compile_seconds": round(model.compile_seconds_, 3),
            "multiply_adds_per_pass": madds,
            "multiply_adds_per_second": round(madds / steady)}


def pass_floor(floor: dict, speed: dict, sampler: str) -> dict:
    """A lower bound on one pass: the draws alone (:func:`draw_floor`) plus the pass's
    multiply-adds at this machine's measured matmul peak (:func:`matmul_peak`), at 1 thread
    and at 2, with the draws' measured 2-thread speed-up (:func:`draw_scaling`) and with an
    ideal one (2×).  ``target_below_floor``: issue 12's 2-thread target lies under the floor
    with the measured speed-up; ``target_below_ideal_floor``: under it even with ideal
    scaling (no IncNorm, no gathers, no memory traffic counted in either)."""
    macs = speed["1_threads"][sampler]["multiply_adds_per_pass"]
    f1 = (floor["draw_seconds_per_pass_1_thread"]
          + macs / speed["1_threads"]["matmul_peak"]["multiply_adds_per_second"])
    mac2 = macs / speed["2_threads"]["matmul_peak"]["multiply_adds_per_second"]
    f2 = floor["draw_seconds_per_pass_2_threads"] + mac2
    f2_ideal = floor["draw_seconds_per_pass_2_threads_ideal"] + mac2
    return {"floor_seconds_per_pass": {"1_thread": round(f1, 4), "2_threads": round(f2, 4),
                                       "2_threads_ideal": round(f2_ideal, 4)},
            "target_below_floor": bool(TARGETS[sampler] < f2),
            "target_below_ideal_floor": bool(TARGETS[sampler] < f2_ideal)}


def matmul_peak(threads: int, n_topics: int, n_docs: int, n_words: int, repeats: int = 7) -> dict:
    """Best-of-``repeats`` float32 θ (n_docs × K) @ φ (K × n_words) in NumPy's BLAS."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    a = rng.random((n_docs, n_topics), dtype=np.float32)
    b = rng.random((n_topics, n_words), dtype=np.float32)
    with threadpool_limits(limits=threads):
        a @ b
        best = min(_timed(lambda: a @ b) for _ in range(repeats))
    return {"shape": [n_docs, n_topics, n_words], "seconds": best,
            "multiply_adds_per_second": round(n_docs * n_topics * n_words / best)}


def _trace(spec, split, work: Path, points=None) -> dict:
    """Run ``spec`` through the shared runner; (seconds, ll) per checkpoint."""
    import pandas as pd

    from same.experiments.runner import run

    out = run(spec, split, work / f"{spec.label}", progress=False, points=points)
    df = pd.read_csv(out / "trace.csv")
    return {"pass": df["pass"].tolist(), "seconds": df["train_seconds"].round(4).tolist(),
            "ll": df["ll"].round(5).tolist()}


def crossing(trace: dict, target: float) -> dict:
    """First checkpoint with ll ≥ target and the interpolated seconds
    (:func:`same.report.traces.reach_seconds`)."""
    from same.report.traces import reach_seconds

    p, s = reach_seconds(trace["seconds"], trace["ll"], target, trace["pass"])
    if p is None:
        return {"reached": False, "pass": None, "seconds": None,
                "budget_seconds": float(trace["seconds"][-1]), "best_ll": float(max(trace["ll"]))}
    return {"reached": True, "pass": p, "seconds": round(s, 4)}


def quality(split, n_topics: int, n_samples: float, n_inner: int, passes: int,
            cgs_iterations: int, work: Path) -> dict:
    """Time-to-quality of SAME (summed) against tomotopy CGS, and the VB lls (see module)."""
    from same.experiments.spec import RunSpec

    def spec(method, label, threads, budget, **params):
        return RunSpec(method=method, n_components=n_topics, doc_topic_prior=0.1,
                       topic_word_prior=0.1, seed=0, budget=budget, threads=threads,
                       params=params, label=label)

    cgs_points = sorted({p for p in range(1, 101)} | set(range(100, cgs_iterations + 1, 10))
                        | {cgs_iterations})
    cgs_points = [p for p in cgs_points if p <= cgs_iterations]
    traces = {}
    for threads in (1, 2):
        traces[f"same_{threads}t"] = _trace(spec("same", f"same_{threads}t", threads, passes,
                                                 sampler="summed", n_copies=n_samples,
                                                 n_inner=n_inner), split, work)
        traces[f"cgs_{threads}t"] = _trace(spec("cgs", f"cgs_{threads}t", threads,
                                                cgs_iterations), split, work, cgs_points)
        print(f"quality: {threads} thread(s) done", file=sys.stderr)
    for mode in ("vb_online", "vb_batch"):
        traces[mode] = _trace(spec(mode, mode, 1, passes), split, work)
    out = {"traces": traces, "time_to_quality": {}, "vb_levels": {}}
    for threads in (1, 2):
        same_t, cgs_t = traces[f"same_{threads}t"], traces[f"cgs_{threads}t"]
        for at in sorted({a for a in (5, 10, passes) if a <= passes}):
            target = same_t["ll"][same_t["pass"].index(at)]
            s, c = crossing(same_t, target), crossing(cgs_t, target)
            ratio = (s["seconds"] / c["seconds"]) if c["reached"] and c["seconds"] else None
            out["time_to_quality"][f"{threads}t_same_pass{at}"] = {
                "target_ll": target, "same": s, "cgs": c, "same_over_cgs_seconds": ratio}
    for mode in ("vb_online", "vb_batch"):
        level = traces[mode]["ll"][-1]
        out["vb_levels"][mode] = {"ll_after_passes": level, "passes": passes,
                                  "vb_seconds": traces[mode]["seconds"][-1],
                                  "same_2t_reaches_it": crossing(traces["same_2t"], level)}
    return out


def _args():
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    from same.data.corpus import REGISTRY

    ap.add_argument("--dataset", default="kos", choices=sorted(REGISTRY))
    ap.add_argument("--n-topics", type=whole_number(1), default=64)
    ap.add_argument("--n-samples", type=real_number(0, 2.0**30, low_open=True, high_open=True),
                    default=100.0, help="m, below 2^30 (int32 counts of m per token)")
    ap.add_argument("--n-inner", type=whole_number(1), default=5)
    ap.add_argument("--passes", type=whole_number(2), default=6,
                    help="passes per speed measurement (the first is not timed)")
    ap.add_argument("--quality-passes", type=whole_number(1), default=20)
    ap.add_argument("--cgs-iterations", type=whole_number(1), default=1000)
    ap.add_argument("--quick", action="store_true", help="speed only (no quality runs)")
    ap.add_argument("--out", default="results/bench/same_cpu.json")
    args = ap.parse_args()
    check_topics(ap, args.n_topics, REGISTRY[args.dataset].n_words)
    return args


def check_topics(ap, n_topics: int, n_words: int) -> None:
    """--n-topics whose φ alone needs more memory than is available: one line, exit 2."""
    from same.model.fit_memory import check_fit_memory

    try:
        check_fit_memory("same", n_topics, n_words)
    except MemoryError as exc:
        ap.error(f"argument --n-topics: {exc}")


def _speed(data, args, batch_docs) -> dict:
    """Seconds per pass of both samplers at 1 and 2 threads, and their draw floors."""
    speed = {}
    for threads in (1, 2):
        peak = matmul_peak(threads, args.n_topics, batch_docs, data.n_words)
        row = {"matmul_peak": peak}
        for sampler in ("summed", "nonzero"):
            r = seconds_per_pass(data.counts, sampler, threads, args.passes, args.n_topics,
                                 args.n_samples, args.n_inner)
            r["fraction_of_matmul_peak"] = round(r["multiply_adds_per_second"]
                                                 / peak["multiply_adds_per_second"], 4)
            if threads == 2:
                r["target_seconds_per_pass"] = TARGETS[sampler]
                r["meets_target"] = r["median_seconds_per_pass_after_first"] <= TARGETS[sampler]
            row[sampler] = r
            print(f"{threads} thread(s) {sampler}: {r['median_seconds_per_pass_after_first']} "
                  "s/pass", file=sys.stderr)
        speed[f"{threads}_threads"] = row
    for sampler in ("summed", "nonzero"):
        floor = draw_floor(data.counts, sampler, args.n_topics, args.n_samples, args.n_inner,
                           args.passes)
        floor["target_seconds_per_pass_2_threads"] = TARGETS[sampler]
        floor.update(pass_floor(floor, speed, sampler))
        speed[f"{sampler}_draw_floor"] = floor
        print(f"{sampler} draw floor: {floor['draw_seconds_per_pass_1_thread']} s/pass "
              "(1 thread)", file=sys.stderr)
    return speed


#: The result's ``benchmark``: what an earlier result at ``--out`` must say to be replaced.
BENCHMARK = "SAME CPU samplers: seconds per pass, FLOP rate, time to quality"


def main() -> None:
    args = _args()
    from same.io.outputs import check_option, json_kind

    check_option(args.out, json_kind({"benchmark": BENCHMARK}), "same_cpu.py")  # before work
    from same.data import corpus
    from same.data.split import make_split
    from same.experiments.provenance import provenance, write_json
    from same.model.params import paper_batch_size

    data = corpus.load(args.dataset)
    batch_docs = paper_batch_size(data.n_docs)
    speed = _speed(data, args, batch_docs)
    result = {"benchmark": BENCHMARK,
              "dataset": args.dataset,
              "shape": {"n_docs": data.n_docs, "n_words": data.n_words, "nnz": data.nnz,
                        "n_tokens": data.n_tokens},
              "settings": {"n_topics": args.n_topics, "n_samples": args.n_samples,
                           "n_inner": args.n_inner, "batch_size": batch_docs,
                           "passes": args.passes, "backend": "numpy",
                           "doc_topic_prior": 0.1, "topic_word_prior": 0.1},
              "speed": speed}
    if not args.quick:
        split = make_split(data, test_fraction=0.1, seed=0)
        with tempfile.TemporaryDirectory() as tmp:
            result["quality"] = quality(split, args.n_topics, args.n_samples, args.n_inner,
                                        args.quality_passes, args.cgs_iterations, Path(tmp))
        floors = speed["summed_draw_floor"]["floor_seconds_per_pass"]
        for threads, name in ((1, "1_thread"), (2, "2_threads")):
            ttq = result["quality"]["time_to_quality"][f"{threads}t_same_pass{args.quality_passes}"]
            ttq["same_floor_seconds"] = round(args.quality_passes * floors[name], 4)
            if ttq["cgs"]["reached"] and ttq["cgs"]["seconds"]:
                ttq["same_floor_over_cgs_seconds"] = round(ttq["same_floor_seconds"]
                                                           / ttq["cgs"]["seconds"], 3)
    result.update(provenance())
    write_json(args.out, result, option="--out")
    summary = {k: {s: v[s]["median_seconds_per_pass_after_first"] for s in ("summed", "nonzero")}
               for k, v in speed.items() if k.endswith("_threads")}
    print(json.dumps(summary, indent=2))
    if "quality" in result:
        print(json.dumps({k: v["same_over_cgs_seconds"]
                          for k, v in result["quality"]["time_to_quality"].items()}, indent=2))


if __name__ == "__main__":
    main()
