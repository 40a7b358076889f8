"""A written GPU performance model of one SAME pass at paper scale (no GPU measured here).

Counts, per sweep, the bytes each CUDA kernel of :mod:`same.kernels.cuda` moves, the Poisson
draws and the integer atomics, and turns them into seconds per pass on an H100 SXM
(3.35 TB/s HBM3; 132 SMs × 128 FP32 lanes × 1.98 GHz boost) at 50 % and 100 % of its
bandwidth.  The default shape is NYTimes (D 300,000, W 102,660, NNZ 69.7M, K 256), m = 100,
5 sweeps per pass.  Assumptions, all stated in the output:

- float32 θ, φ, μ, counts c; int32 word ids; int64 row pointers; int32 T, P;
- φ-row reads: a low bound that reads φ once per sweep (rows stay in L2) and a high bound
  that reads a full row from HBM for every nonzero (no reuse; NYTimes' φ is 105 MB against
  the H100's 50 MB L2, so the truth lies between, nearer the low bound for frequent words);
- draws per nonzero: at most min(K, m·c) topics get a draw of their own plus one pooled draw
  (:func:`same.kernels.elements.draw_nonzero`); ``draws_per_nonzero`` sets the estimate used
  (default: 8, what a trained model at m = 100 gives, where a few topics hold most mass);
- each draw costs ``instructions_per_draw`` lane instructions (PTRS ≈ 100, inversion ≈ 40,
  the early exit ≈ 15; default 60), each positive count two int32 atomics (T and P).

    python benchmarks/gpu_model.py            # writes results/gpu/model.json

A user with a GPU compares it with ``python benchmarks/gpu_same.py`` (measured).
"""

from __future__ import annotations

import argparse
import json

SHAPES = {"nytimes": (300_000, 102_660, 69_679_427), "pubmed": (8_200_000, 141_043, 483_450_157)}
H100 = {"name": "H100 SXM5 80GB", "hbm_bytes_per_s": 3.35e12,
        "lane_instructions_per_s": 132 * 128 * 1.98e9, "atomics_per_s": 0.5e12}


def sweep_model(n_docs, n_words, nnz, n_topics, draws_per_nonzero, instructions_per_draw):
    """Bytes (low, high), draws and atomics of one sweep of the per-nonzero sampler."""
    f, i32, i64 = 4, 4, 8
    phi = n_words * n_topics * f
    theta = n_docs * n_topics * f
    csr = nnz * (i32 + f) + (n_docs + 1) * i64
    rows_high = nnz * n_topics * f
    sddmm = {"low": csr + theta + phi + nnz * f, "high": csr + theta + rows_high + nnz * f}
    counts_out = (n_docs + n_words) * n_topics * i32  # T and P (atomics land in L2)
    sample = {"low": csr + nnz * f + theta + phi + counts_out,
              "high": csr + nnz * f + theta + rows_high + counts_out}
    draws = nnz * draws_per_nonzero
    return {"bytes": {"sddmm": sddmm, "sample_accumulate": sample},
            "draws": draws, "atomics": 2 * draws,
            "instructions": draws * instructions_per_draw + 2 * nnz * n_topics * 2}


def seconds(sweep, sweeps, gpu, fraction):
    out = {}
    for bound in ("low", "high"):
        mem = sum(b[bound] for b in sweep["bytes"].values()) / (gpu["hbm_bytes_per_s"] * fraction)
        compute = sweep["instructions"] / gpu["lane_instructions_per_s"]
        atom = sweep["atomics"] / gpu["atomics_per_s"]
        out[bound] = {"memory_s": sweeps * mem, "compute_s": sweeps * compute,
                      "atomics_s": sweeps * atom, "s_per_pass": sweeps * max(mem, compute, atom)}
    return out


#: The result's ``model``: what an earlier result at ``--out`` must say to be replaced.
MODEL = "SAME per-nonzero sampler on one GPU: bytes, draws, atomics per sweep"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", choices=sorted(SHAPES), default="nytimes")
    ap.add_argument("--n-topics", type=int, default=256)
    ap.add_argument("--n-inner", type=int, default=5)
    ap.add_argument("--draws-per-nonzero", type=float, default=8.0)
    ap.add_argument("--instructions-per-draw", type=float, default=60.0)
    ap.add_argument("--out", default="results/gpu/model.json")
    args = ap.parse_args(argv)

    from same.outputs import check_option, json_kind
    from same.provenance import provenance, write_json

    check_option(args.out, json_kind({"model": MODEL}), "gpu_model.py")

    D, W, NNZ = SHAPES[args.shape]
    sweep = sweep_model(D, W, NNZ, args.n_topics, args.draws_per_nonzero,
                        args.instructions_per_draw)
    result = {"model": MODEL,
              "shape": {"name": args.shape, "n_docs": D, "n_words": W, "nnz": NNZ,
                        "n_topics": args.n_topics},
              "settings": {"n_samples": 100, "n_inner": args.n_inner,
                           "draws_per_nonzero": args.draws_per_nonzero,
                           "instructions_per_draw": args.instructions_per_draw},
              "gpu": H100, "per_sweep": sweep,
              "per_pass": {f"{int(fr * 100)}%_bandwidth": seconds(sweep, args.n_inner, H100, fr)
                           for fr in (0.5, 1.0)},
              "paper_s_per_pass": {"GTX-690, BIDMach, K=256, m=100": 30},
              "measured": "none: no GPU on this project's machines (benchmarks/gpu_same.py)"}
    result.update(provenance())
    write_json(args.out, result, option="--out")
    print(json.dumps(result["per_pass"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
