"""The README's GPU-model paragraph, rendered from ``results/gpu/model.json``.

Every figure is formatted from a field of the model's result (``benchmarks/gpu_model.py``);
only the prose is written here.  README.md is rewritten between ``<!-- bench:gpu_model:begin
-->`` and ``<!-- bench:gpu_model:end -->`` and nowhere else (the machinery of
``benchmarks/readme_numbers.py``).

    python benchmarks/readme_gpu.py            # rewrite the block
    python benchmarks/readme_gpu.py --check    # exit 1 if the README's block is stale
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "results" / "gpu" / "model.json"
_spec = importlib.util.spec_from_file_location("readme_numbers",
                                               Path(__file__).with_name("readme_numbers.py"))
rn = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rn)


def _gb(x: float) -> str:
    return rn.sig2(x / 1e9)


def _row(name: str, v: dict) -> str:
    s = v["shape"]
    cells = []
    for sampler in ("nonzero", "summed"):
        b, t = v[sampler]["bytes_per_step"], v[sampler]["seconds_per_pass_bound"]
        cells.append(f"{_gb(b['low'])}–{_gb(b['high'])} GB, {rn.sig2(t['low'])}–"
                     f"{rn.sig2(t['high'])} s")
    return (f"| {name.split()[0]} | {s['n_topics']:,} | {s['n_docs']:,} | "
            f"{rn.millions(s['nnz'])} | {cells[0]} | {cells[1]} |")


def render(d: dict) -> str:
    """The paragraph and table from the contents of ``results/gpu/model.json``."""
    g, st = d["gpu"], d["settings"]
    lo, hi = st["positive_per_nonzero"]
    paper = ", ".join(f"{rn.num(v)} s per pass (`{k}`)" for k, v in d["paper_s_per_pass"].items())
    intro = rn.wrap(f"""GPU performance model (`results/gpu/model.json`, `python
        benchmarks/gpu_model.py`): the global-memory bytes of every kernel of a minibatch step,
        counted from the kernels' loops (the count tests/model/sim_traffic.py checks, access by
        access, against numba-cuda's simulator), at the paper's minibatches, {st['n_inner']}
        sweeps a step, on `{g['name']}` at {rn.num(g['hbm_bytes_per_s'] / 1e12, 2)} TB/s.
        Low: each array at most once per launch (θ and φ rows reused from L2) and
        {rn.num(lo)} topic per nonzero with a draw; high: every θ and φ row read from memory
        for each nonzero that uses it and {rn.num(hi)} topics with a draw. Seconds per pass
        are those bytes at full bandwidth: the memory traffic alone, a lower bound on a pass,
        not a prediction (draws, the per-nonzero prefix sums of one thread, atomics'
        latency, IncNorm and the CSC sort are not in it); the paper measured {paper}.""")
    head = ("| corpus | K | documents | nonzeros | per-nonzero: bytes a step, s a pass | "
            "summed: bytes a step, s a pass |\n|---|---|---|---|---|---|")
    rows = "\n".join(_row(n, v) for n, v in d["shapes"].items())
    return f"{intro}\n\n{head}\n{rows}"


def main(argv: list[str] | None = None) -> int:
    """Rewrite README.md's gpu_model block, or with ``--check`` exit 1 if it is stale."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report a stale block (exit 1)")
    ap.add_argument("--readme", type=Path, default=REPO / "README.md")
    ap.add_argument("--model", type=Path, default=MODEL)
    args = ap.parse_args(argv)
    return rn.update_readme(args.readme, {"gpu_model": render(json.loads(args.model.read_text()))},
                            args.check, str(args.model), "benchmarks/readme_gpu.py")


if __name__ == "__main__":
    sys.exit(main())
