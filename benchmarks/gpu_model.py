"""A written GPU performance model of SAME at paper scale: the bytes every CUDA kernel moves.

For each minibatch step of either sampler at the paper's NYTimes and PubMed minibatches
(:func:`same.model.kernels.launch.paper_shapes`, K = 256 and 1024) it counts the global-memory
accesses of every kernel launch from the kernels' loops (:func:`same.model.kernels.traffic.accesses`,
the count tests/model/sim_traffic.py checks against the simulator's), plus the step's CuPy
zeroing and θ update, and turns them into bytes and seconds per pass on an H100:

- ``issued``: every element each thread reads or writes (an atomicAdd a read and a write);
- ``high`` (no reuse): ``issued`` with a value every thread of a block reads counted once per
  block, the rest from HBM (θ and φ rows re-read from memory for every nonzero);
- ``low`` (full reuse): each array's bytes at most once per launch (rows stay in the 50 MB L2
  or in L1), T and P once for all their atomics.

Seconds per pass = bytes per pass / HBM bandwidth, 3.35 TB/s (NVIDIA H100 SXM5 80GB datasheet,
HBM3): the time the memory traffic alone takes, a lower bound on a pass, not a prediction;
draws, the warps' scans and shuffles, atomics' latency, IncNorm and CuPy's sort
of the block into CSC order are not in it.  Assumptions, in the output: every document within
one chunk (≤ 256 nonzeros) and every word in the block, m·c ≥ 1 (no early exit), and
``positive`` (nonzero, topic) pairs with a draw per nonzero: 1 to ``--positive`` (default 8,
what a trained model at m = 100 gives, where a few topics hold most mass).

    python benchmarks/gpu_model.py            # writes results/gpu/model.json
"""

from __future__ import annotations

import json

from same.io.cli import ArgumentParser, real_number
from same.model.kernels import launch, traffic

H100 = {"name": "H100 SXM5 80GB (HBM3)", "hbm_bytes_per_s": 3.35e12,
        "source": "NVIDIA H100 Tensor Core GPU datasheet: 3.35 TB/s GPU memory bandwidth"}
#: The result's ``model``: what an earlier result at ``--out`` must say to be replaced.
MODEL = "SAME on one GPU: global-memory bytes of every kernel per pass, from their loops"
N_INNER = 5


def paper_block(shape: dict, positive: float) -> traffic.Block:
    """The model's block at a paper shape: documents within one chunk, every word present,
    ⌈nnz / CHUNK⌉ words of two chunks (the partial sums' bound), every nonzero drawn,
    ``positive`` pairs with a draw per nonzero; a warp of NZ_CHUNK nonzeros starts a document
    run and each document boundary inside it another (runs ≤ warps + D, walked past: D), each
    run's positive topics at most K and at most its pairs."""
    n, d, w, k = shape["nnz"], shape["n_docs"], shape["n_words"], shape["n_topics"]
    long = min(w, -(-n // launch.CHUNK))  # words over one chunk: as many as nnz allows
    runs = launch.sddmm(n)[0] + d
    pairs = round(positive * n)
    return traffic.Block(d, w, n, k, doc_chunks=d, word_chunks=w + long,
                         doc_single=d, word_single=w - long, words_present=w, drawn=n,
                         positive=pairs, doc_runs=runs, t_positive=min(runs * k, pairs),
                         doc_advances=d)


def footprint(b: traffic.Block, words: bool = False) -> dict[str, int]:
    """Bytes of each kernel array of block ``b`` (the low bound's once-per-launch); ``cptr``
    over words (the P sweep's) or documents."""
    D, W, N, K = b.n_docs, b.n_words, b.nnz, b.n_topics
    elems = {"indptr": D + 1, "indices": N, "data": N, "theta": D * K, "phi_t": W * K,
             "mu": N, "out": N, "t_out": D * K, "p_out": W * K, "tokens": D,
             "ratio_out": N, "ratios": N, "col_ptr": W + 1, "col_doc": N, "col_nz": N,
             "counts": W, "cptr": (W if words else D) + 1, "mptr": (W if words else D)}
    return {a: n * traffic.ITEMSIZE[a] for a, n in elems.items()}


def kernel_bytes(b: traffic.Block) -> dict[str, dict[str, float]]:
    """kernel → {"issued", "high", "low"} bytes of one launch on block ``b``."""
    acc, shared = traffic.accesses(b, "high"), traffic.broadcast()
    out = {}
    for kernel, arrays in acc.items():
        foot = footprint(b, "p_" in kernel)
        issued = high = low = 0.0
        for a, (r, w) in arrays.items():
            size = traffic.ITEMSIZE[a]
            issued += (r + w) * size
            reads = (r / launch.WARP if a in shared.get(kernel, ()) else r) * size
            high += reads + w * size
            cap = foot.get(a, float("inf"))  # the partial sums: streamed, no reuse
            low += min(reads, cap) + min(w * size, cap)
        out[kernel] = {"issued": issued, "high": high, "low": low}
    return out


def step_bytes(b: traffic.Block, sampler: str, n_inner: int = N_INNER) -> dict[str, float]:
    """{"low", "high", "issued"} bytes of one minibatch step (``n_inner`` sweeps), kernels
    plus CuPy's zeroing of T and P and the θ update (read T, write θ) of the nonzero sampler.
    The summed sampler's step: n_inner − 1 T sweeps, the ratios, the P sweep."""
    from collections import Counter

    k = kernel_bytes(b)
    DK, WK = b.n_docs * b.n_topics * 4, b.n_words * b.n_topics * 4
    shapes = launch.launch_shapes(b.n_docs, b.n_words, b.nnz, b.n_topics, n_inner)
    plan = Counter(x.kernel for x in shapes[sampler])  # the step's launches, one source
    if sampler == "nonzero":  # launch_shapes lists one sweep of it
        plan = Counter({name: n * n_inner for name, n in plan.items()})
        extra = n_inner * (DK + 2 * DK) + WK  # zero T; T → θ; zero P once
    else:
        extra = 2 * DK  # θ copied for the sweeps
    return {f: sum(k[name][f] * times for name, times in plan.items()) + extra
            for f in ("low", "high", "issued")}


def model(positive: float, n_inner: int = N_INNER) -> dict:
    """Per paper shape and sampler: bytes per step and per pass, and seconds per pass (low,
    high) at full H100 bandwidth; a pass is :data:`same.model.params.PAPER_MINIBATCHES` steps."""
    from same.model.params import PAPER_MINIBATCHES

    out = {}
    for name, shape in launch.paper_shapes().items():
        rows = {}
        for sampler in ("nonzero", "summed"):
            lo = step_bytes(paper_block(shape, 1.0), sampler, n_inner)
            hi = step_bytes(paper_block(shape, positive), sampler, n_inner)
            per_pass = {"low": lo["low"] * PAPER_MINIBATCHES,
                        "high": hi["high"] * PAPER_MINIBATCHES}
            rows[sampler] = {
                "bytes_per_step": {"low": lo["low"], "high": hi["high"],
                                   "issued": hi["issued"]},
                "bytes_per_pass": per_pass,
                "seconds_per_pass_bound": {b: v / H100["hbm_bytes_per_s"]
                                           for b, v in per_pass.items()}}
        out[name] = {"shape": shape, **rows}
    return out


def main(argv=None) -> int:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    most = min(shape["n_topics"] for shape in launch.paper_shapes().values())
    ap.add_argument("--positive", type=real_number(1, most), default=8.0,
                    help="(nonzero, topic) pairs with a positive draw per nonzero, high end: "
                         f"at most K = {most}, the topics a nonzero can draw")
    ap.add_argument("--out", default="results/gpu/model.json")
    args = ap.parse_args(argv)

    from same.experiments.provenance import provenance, write_json
    from same.io.outputs import check_option, json_kind

    check_option(args.out, json_kind({"model": MODEL}), "gpu_model.py")
    result = {"model": MODEL, "gpu": H100,
              "settings": {"n_inner": N_INNER, "positive_per_nonzero": [1.0, args.positive],
                           "threads": launch.WARP, "chunk": launch.CHUNK,
                           "nz_chunk": launch.NZ_CHUNK},
              "assumptions": __doc__.split("Assumptions, in the output: ")[1].split("\n\n")[0]
              .replace("\n", " "),
              "shapes": model(args.positive),
              "paper_s_per_pass": {"GTX-690, BIDMach, NYTimes K=256, m=100": 30},
              "measured": "results/gpu/h100_2026-11-26 (the kernels before issue 40)"}
    result.update(provenance())
    write_json(args.out, result, option="--out")
    print(json.dumps({n: {s: v[s]["seconds_per_pass_bound"] for s in ("nonzero", "summed")}
                      for n, v in result["shapes"].items()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
