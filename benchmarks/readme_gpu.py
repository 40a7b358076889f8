"""The README's GPU paragraphs: the performance model, rendered from ``results/gpu/model.json``,
and the newest committed GPU measurement (``results/gpu/*/same_*_cupy.json``).

Every figure is formatted from a field of the model's result (``benchmarks/gpu_model.py``);
only the prose is written here.  README.md is rewritten between ``<!-- bench:gpu_model:begin
-->`` and ``<!-- bench:gpu_model:end -->`` (and the ``gpu_measured`` markers) and nowhere else (the machinery of
``benchmarks/readme_numbers.py``).

    python benchmarks/readme_gpu.py            # rewrite the block
    python benchmarks/readme_gpu.py --check    # exit 1 if the README's block is stale
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from same.io.cli import ArgumentParser

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
        not a prediction (draws, the warps' scans and shuffles, atomics' latency, IncNorm and
        the CSC sort are not in it); the paper measured {paper}.""")
    head = ("| corpus | K | documents | nonzeros | per-nonzero: bytes a step, s a pass | "
            "summed: bytes a step, s a pass |\n|---|---|---|---|---|---|")
    rows = "\n".join(_row(n, v) for n, v in d["shapes"].items())
    return f"{intro}\n\n{head}\n{rows}"


def _s(x: float) -> str:
    return f"{x:.2f} s" if x >= 0.1 else f"{x * 1e3:.1f} ms"


def render_measured(path: Path) -> str:
    """The paragraph on the newest GPU measurement (``benchmarks/gpu_same.py``'s JSON), every
    figure from its fields: seconds per pass against the issue's targets, the growth with m,
    the kernels of one step, the PubMed step, the generator's two paths."""
    d = json.loads(path.read_text())
    rel = path.relative_to(REPO) if path.is_relative_to(REPO) else path
    sp, wall, tg = d["seconds_per_pass"], d["wall_seconds_per_pass"], d["targets"]
    k, pm, gen, st = d["kernels"], d["pubmed_step"], d["generator"], d["settings"]

    def per_m(sampler):
        return ", ".join(f"m = {m}: {sp[sampler][m]:.2f} s" for m in sp[sampler])

    def verdict(x, target):
        return f"{x:.2f} s against the target {target:g} s: {'met' if x <= target else 'not met'}"

    nz, sm = sp["nonzero"]["100"], sp["summed"]["100"]
    growth = {s: sp[s]["100"] / sp[s]["1"] for s in ("nonzero", "summed")}
    step = {name: _s(k[name]["seconds"]) for name in ("sddmm", "sample_accumulate",
                                                       "summed_t_sweep", "summed_p_sweep",
                                                       "word_order", "incnorm",
                                                       "cusparse_R_phi")}
    return rn.wrap(f"""**Newest GPU measurement** (`{rel}`, {d['device']['name']},
        {d['time_utc'][:10]}, commit {d['commit'][:7]}; `benchmarks/gpu_session.sh`): at NYTimes'
        shape (synthetic, D {d['shape']['n_docs']:,}, {rn.millions(d['shape']['nnz'])}
        nonzeros), K = {st['n_components']}, {st['n_inner']} sweeps a step, training seconds of
        the last of {st['passes']} passes. Summed sampler at m = 100:
        {verdict(sm, tg['summed_seconds_per_pass'])} ({per_m('summed')}); per-nonzero sampler
        (Algorithm 3) at m = 100: {verdict(nz, tg['nonzero_seconds_per_pass'])}
        ({per_m('nonzero')}). From m = 1 to 100 the per-nonzero sampler grows
        {growth['nonzero']:.2f}× and the summed one {growth['summed']:.2f}× (target ≤
        {tg['growth_m1_to_m100']:g}×). The wall clock of a pass, the host's staging of the
        minibatches included, is {wall['summed']['100']:.2f} s and {wall['nonzero']['100']:.2f}
        s. One minibatch (15,000 documents) at m = 100, each launch timed alone: SDDMM
        {step['sddmm']}, a per-nonzero sweep {step['sample_accumulate']}, a summed T sweep
        {step['summed_t_sweep']}, the summed P sweep {step['summed_p_sweep']}, the CSC order
        {step['word_order']}, IncNorm {step['incnorm']} (cuSPARSE's R·φᵀ alone, one of the
        products a T sweep fuses, {step['cusparse_R_phi']}). A PubMed-shaped minibatch
        ({pm['n_docs']:,} documents, {rn.millions(pm['nnz'])} nonzeros): one step
        {_s(pm['nonzero']['seconds'])} (per-nonzero) and {_s(pm['summed']['seconds'])}
        (summed), CuPy's pool holding {pm['summed']['pool_bytes'] / 2**30:.1f} GiB. The
        synthetic corpus took {gen['cpu_seconds']:.1f} s on the machine's 16 cores and
        {gen['cuda_seconds']:.1f} s on the GPU, {'the same' if gen['identical'] else 'a different'}
        matrix from both paths.""")


def newest_measurement() -> Path | None:
    """The newest committed GPU measurement (by its recorded time): the one C6 is judged on."""
    sys.path.insert(0, str(REPO))
    from same.report.gpu import newest_gpu_measurement

    found = newest_gpu_measurement(REPO / "results" / "gpu")
    return None if found is None else Path(found.path)


def main(argv: list[str] | None = None) -> int:
    """Rewrite README.md's gpu_model block, or with ``--check`` exit 1 if it is stale."""
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report a stale block (exit 1)")
    ap.add_argument("--readme", type=Path, default=REPO / "README.md")
    ap.add_argument("--model", type=Path, default=MODEL)
    args = ap.parse_args(argv)
    blocks = {"gpu_model": render(json.loads(args.model.read_text()))}
    if args.model == MODEL and (measured := newest_measurement()) is not None:
        blocks["gpu_measured"] = render_measured(measured)
    return rn.update_readme(args.readme, blocks, args.check, str(args.model),
                            "benchmarks/readme_gpu.py")


if __name__ == "__main__":
    sys.exit(main())
