"""The README's CPU-speed and memory-at-scale paragraphs, rendered from ``results/bench/*.json``.

Every figure in the two blocks is formatted from a field of ``results/bench/same_cpu.json`` or
``results/bench/scale.json`` (or computed from such fields); only the prose is written here.
README.md is rewritten between ``<!-- bench:NAME:begin -->`` and ``<!-- bench:NAME:end -->``
and nowhere else, by one rename of a complete new file (:mod:`same.io.outputs`).

    python benchmarks/readme_numbers.py            # rewrite the blocks
    python benchmarks/readme_numbers.py --check    # exit 1 if the README's blocks are stale
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
from decimal import ROUND_HALF_UP, Decimal
from math import floor, log10
from pathlib import Path

from same.io.cli import ArgumentParser

REPO = Path(__file__).resolve().parents[1]
WIDTH = 95
GIB = 2**30
MIB = 2**20
WORDS = {1: "One", 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven"}


def num(x: float, digits: int = 0) -> str:
    """``x`` rounded half-up to ``digits`` decimals (as a reader rounds), a minus sign as −."""
    q = Decimal(repr(float(x))).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return f"{q:f}".replace("-", "−")


def sig2(x: float) -> str:
    """``x`` with at least two significant digits and no rounding of its integer part."""
    return num(x, max(0, 1 - floor(log10(abs(x))))) if x else "0"


def millions(n: float) -> str:
    """A count in millions: 692436 -> '0.69M', 226022400 -> '226M'."""
    return sig2(n / 1e6) + "M"


def wrap(text: str) -> str:
    """One paragraph hard-wrapped like the rest of the README."""
    return textwrap.fill(" ".join(text.split()), WIDTH, break_on_hyphens=False,
                         break_long_words=False)


# --- results/bench/same_cpu.json ----------------------------------------------------------


def _cpu_speed(d: dict) -> str:
    s, m = d["speed"], d["settings"]
    one, two = s["1_threads"], s["2_threads"]

    def med(t: dict, sampler: str, digits: int) -> str:
        return num(t[sampler]["median_seconds_per_pass_after_first"], digits)

    met = [two[k]["meets_target"] for k in ("summed", "nonzero")]
    verdict = ("are met" if all(met) else "are not met" if not any(met) else
               f"are met only by the {'summed' if met[0] else 'per-nonzero'} sampler")
    targets = " and ".join(f"{two[k]['target_seconds_per_pass']:g}" for k in ("summed", "nonzero"))
    return f"""CPU speed (`results/bench/same_cpu.json`; {d['dataset'].upper()},
    K={num(m['n_topics'])}, m={num(m['n_samples'])}, n_inner={num(m['n_inner'])}, this
    {num(d['machine']['logical_cores'])}-core VM): the summed sampler takes
    {med(two, 'summed', 3)} s
    per pass at 2 threads ({med(one, 'summed', 3)} at 1 thread), the per-nonzero sampler
    {med(two, 'nonzero', 2)} ({med(one, 'nonzero', 2)}); the 2-thread targets
    (`target_seconds_per_pass`), {targets}, {verdict}. (This shared VM's speed moves between
    sessions and within one, so compare figures within one file only: in this one the float32
    matmul peak reads {num(one['matmul_peak']['multiply_adds_per_second'] / 1e9)} G multiply-adds
    per second on 1 thread and {num(two['matmul_peak']['multiply_adds_per_second'] / 1e9)} G on
    2 threads.)"""


def _summed_floor(d: dict) -> str:
    s = d["speed"]
    f, two = s["summed_draw_floor"], s["2_threads"]["summed"]
    c, floor_s = f["classes"], f["floor_seconds_per_pass"]
    if f["target_below_floor"] and f["target_below_ideal_floor"]:
        where = ("lies below this floor (`target_below_floor`, `target_below_ideal_floor`) before "
                 "IncNorm, gathers or memory traffic are counted")
    else:
        where = "is not below this floor (`target_below_floor`)"
    return f"""The summed sampler's floor is its exact Poisson draws: a pass draws
    {millions(c['ptrs']['draws_per_pass'])} counts by PTRS ({num(c['ptrs']['ns_per_draw'])} ns
    each here; NumPy's `Generator.poisson` takes {num(c['ptrs']['numpy_ns_per_draw'])} ns on the
    same rates), {millions(c['inversion']['draws_per_pass'])} by inversion
    ({num(c['inversion']['ns_per_draw'])} ns; NumPy {num(c['inversion']['numpy_ns_per_draw'])})
    and {millions(c['pooled']['draws_per_pass'])} pooled counts
    ({num(c['pooled']['ns_per_draw'])} ns; NumPy {num(c['pooled']['numpy_ns_per_draw'])}):
    {num(f['draw_seconds_per_pass_1_thread'], 3)} s on 1 thread and, at the draw code's measured
    2-thread speed-up ({num(f['draw_scaling_2_threads']['speedup'], 2)}×,
    `draw_scaling_2_threads`), {num(f['draw_seconds_per_pass_2_threads'], 3)} s on 2 threads
    (`speed.summed_draw_floor`). With its {millions(two['multiply_adds_per_pass'])} multiply-adds
    at the matmul peak that is {num(floor_s['1_thread'], 3)} s and {num(floor_s['2_threads'], 3)}
    s ({num(floor_s['2_threads_ideal'], 3)} with a perfect speed-up; `floor_seconds_per_pass`),
    so the 2-thread target of {f['target_seconds_per_pass_2_threads']:g} s {where}. Its
    multiply-adds run at {sig2(two['multiply_adds_per_second'] / 1e9)}G per second at 2
    threads, {num(100 * two['fraction_of_matmul_peak'])}% of the matmul's rate."""


def _nonzero_floor(d: dict) -> str:
    f = d["speed"]["nonzero_draw_floor"]
    c, target = f["classes"], f["target_seconds_per_pass_2_threads"]
    if f["draw_seconds_per_pass_2_threads"] >= target:
        rest = f"not below its target of {target:g} s: the draws alone miss it"
    elif d["speed"]["2_threads"]["nonzero"]["meets_target"]:
        rest = "below its target, which the whole pass meets"
    else:
        rest = ("below its target, so there the rest of the pass (μ, the K rates of every "
                "nonzero, the pooled events' topics, the counts' accumulation) is what misses it")
    return f"""The per-nonzero sampler's draws (Algorithm 3:
    {millions(c['ptrs']['draws_per_pass'])} PTRS at {num(c['ptrs']['ns_per_draw'])} ns,
    {millions(c['inversion']['draws_per_pass'])} inversions at
    {num(c['inversion']['ns_per_draw'])} ns, {millions(c['pooled']['draws_per_pass'])} pooled
    counts at {num(c['pooled']['ns_per_draw'])} ns per pass, and
    {millions(c['pooled']['pooled_events_per_pass'])} pooled events to split) cost
    {num(f['draw_seconds_per_pass_1_thread'], 2)} s on 1 thread,
    {num(f['draw_seconds_per_pass_2_threads'], 2)} s on 2 threads: {rest}."""


def _time_to_quality(q: dict) -> tuple[dict, dict, dict, dict]:
    """The 2- and 1-thread comparisons at SAME's last and first checkpoint pass."""
    keys = {tuple(map(int, re.fullmatch(r"(\d+)t_same_pass(\d+)", k).groups())): v
            for k, v in q["time_to_quality"].items()}
    last, first = max(p for _, p in keys), min(p for _, p in keys)
    return keys[2, last], keys[1, last], keys[2, first], keys[1, first]


def _cpu_quality(d: dict) -> str:
    q = d["quality"]
    two, one, two_first, one_first = _time_to_quality(q)
    a, b = two["same_floor_over_cgs_seconds"], one["same_floor_over_cgs_seconds"]
    still = "but still" if a < 1 <= b else "and"
    on, ba = q["vb_levels"]["vb_online"], q["vb_levels"]["vb_batch"]
    return f"""To SAME's own held-out ll after {num(two['same']['pass'])} passes
    ({num(two['target_ll'], 3)} nats/token) SAME needs {num(two['same_over_cgs_seconds'], 1)}×
    tomotopy CGS's seconds at 2 threads and {num(one['same_over_cgs_seconds'], 1)}× at 1 thread
    ({num(two_first['same_over_cgs_seconds'], 1)}× and
    {num(one_first['same_over_cgs_seconds'], 1)}× to its {num(two_first['same']['pass'])}-pass
    ll); at the floor it would need {num(a, 2)}× CGS's seconds at 2 threads {still}
    {num(b, 2)}× at 1 thread (`same_floor_seconds`). SAME at 2 threads {_reach(on, 'online')}
    and {_reach(ba, 'batch')}."""


def _reach(level: dict, kind: str) -> str:
    r, what = level["same_2t_reaches_it"], f"{kind} VB's {num(level['passes'])}-pass ll"
    if not r["reached"]:
        return f"does not reach {what}"
    n = num(r["pass"])
    return (f"reaches {what} after {n} pass{'' if n == '1' else 'es'} ({num(r['seconds'], 2)} s "
            f"against VB's {num(level['vb_seconds'])} s)")


def render_same_cpu(d: dict) -> str:
    """The CPU-speed paragraph from the contents of ``results/bench/same_cpu.json``."""
    return wrap(" ".join([_cpu_speed(d), _summed_floor(d), _nonzero_floor(d), _cpu_quality(d)]))


# --- results/bench/scale.json -------------------------------------------------------------

ROWS = [("parse (docword → CSR)", ["parse"]), ("split", ["split"]),
        ("SAME, summed / per-nonzero", ["same_summed", "same_nonzero"]),
        ("evaluator", ["evaluate"]), ("VB batch", ["vb_batch"]), ("VB online", ["vb_online"]),
        ("CGS (tomotopy)", ["cgs"])]
METHODS = [("SAME", ["same_summed", "same_nonzero"]), ("the evaluator", ["evaluate"]),
           ("VB batch", ["vb_batch"]), ("VB online", ["vb_online"]), ("CGS", ["cgs"])]


def pubmed_shape(fits: dict) -> tuple[float, float, float]:
    """PubMed's nonzeros, documents and CSR bytes, recovered from the fitted lines.

    The parse's line has no per-document term, so its PubMed peak gives the nonzeros; a line
    with a per-document term (SAME's θ) then gives the documents; peak / (peak over CSR) the CSR.
    """
    p = fits["parse"]
    nnz = (p["pubmed_peak_gib"] * GIB - p["fixed_bytes"]) / p["bytes_per_nonzero"]
    f = next(f for f in fits.values() if f["bytes_per_document"])
    docs = (f["pubmed_peak_gib"] * GIB - f["fixed_bytes"] - f["bytes_per_nonzero"] * nnz) \
        / f["bytes_per_document"]
    return nnz, docs, p["pubmed_peak_gib"] * GIB / p["pubmed_over_csr"]


def _table(fits: dict) -> str:
    def cell(keys: list[str], field: str, unit: str = "") -> str:
        return " / ".join(num(fits[k][field], 1) for k in keys) + unit

    lines = ["| step | peak RSS | × CSR | anonymous | × CSR |", "|---|---|---|---|---|"]
    for label, keys in ROWS:
        cells = [cell(keys, "pubmed_peak_gib", " GiB"), cell(keys, "pubmed_over_csr"),
                 cell(keys, "anon_pubmed_peak_gib", " GiB"), cell(keys, "anon_pubmed_over_csr")]
        lines.append(f"| {label} | {' | '.join(cells)} |")
    return "\n".join(lines)


def _scale_intro(d: dict) -> str:
    sizes, fits = d["sizes"], d["fits"]
    nnz, docs, csr = pubmed_shape(fits)
    fractions = [f"1/{num(1 / s['fraction'])}" for s in sizes]
    largest = sizes[-1]
    return f"""Memory at paper scale (`results/bench/scale.json`): each step in a fresh process on
    NYTimes-shaped synthetic corpora at {', '.join(fractions[:-1])} and {fractions[-1]} of its
    size, K={num(d['settings']['n_topics'])}; peak RSS (`VmHWM`) and peak anonymous memory (RSS less
    file pages: the memory-mapped split, SAME's file-backed θ), fitted linearly in the nonzeros
    (per-document state by documents: PubMed has {num(nnz / docs)} nonzeros per document,
    NYTimes {num(largest['nnz'] / largest['n_docs'])}) and extrapolated. At PubMed size
    ({millions(nnz)} nonzeros; its CSR is {num(csr / GIB, 1)} GiB):"""


def _scale_why(d: dict) -> str:
    fits, settings = d["fits"], d["settings"]
    _, docs, csr = pubmed_shape(fits)
    peak = {name: max(fits[k]["pubmed_over_csr"] for k in keys) for name, keys in METHODS}
    over = [name for name, ratio in peak.items() if ratio > 2]
    top = max(fits, key=lambda k: fits[k]["pubmed_peak_gib"])
    top_name = next(n for n, keys in METHODS + [("the parse", ["parse"])] if top in keys)
    theta = docs * fits["same_summed"]["bytes_per_document"]
    anon = num(max(fits[k]["anon_pubmed_over_csr"] for k in ("same_summed", "same_nonzero")), 1)
    return f"""The largest extrapolated peak is {top_name}'s,
    {num(fits[top]['pubmed_peak_gib'], 1)} GiB. {WORDS.get(len(over), len(over))} exceed twice
    the CSR in RSS ({', '.join(over)}), and why: SAME carries each training document's θ
    between passes (`keep_doc_topic=True`, BIDMach's `putBack`), n_docs × K float32 =
    {num(theta / 1e9, 1)} GB at PubMed with K={num(settings['n_topics'])},
    {num(theta / csr, 1)}× the
    CSR by itself; above `THETA_MMAP_BYTES` it lives in a memory-mapped temporary file, so it
    needs disk rather than RAM (its pages count in RSS while RAM is free, and the kernel drops
    them under
    pressure), and `keep_doc_topic=False` removes it. Without θ, SAME holds the model, one
    minibatch and the compiled kernels ({anon}× the CSR). VB online: gensim turns each online
    chunk into Python lists of (word, count) tuples
    ({sig2(fits['vb_online']['anon_bytes_per_nonzero'])} bytes of anonymous memory per nonzero,
    batch VB {sig2(fits['vb_batch']['anon_bytes_per_nonzero'])}). tomotopy CGS must hold every
    token's word and topic: {_cgs_per_token(fits, d['sizes'][-1])} plus its per-document counts."""


def _cgs_per_token(fits: dict, size: dict) -> str:
    per_nnz = fits["cgs"]["anon_bytes_per_nonzero"]
    tokens = size["n_tokens"] / size["nnz"]
    return (f"{num(per_nnz / tokens)} bytes per token of anonymous memory here "
            f"({num(per_nnz, 1)} per nonzero, {num(tokens, 2)} tokens per nonzero),")


def _scale_fixed(d: dict) -> str:
    fits, sizes = d["fits"], d["sizes"]
    mid = sizes[len(sizes) // 2]
    st = mid["steps"]
    vb, summed, nonzero = (st[k]["peak_rss_bytes"] for k in ("vb_online", "same_summed",
                                                               "same_nonzero"))
    return f"""Fixed costs dominate below NYTimes size: online VB's fitted fixed cost is
    {num(fits['vb_online']['fixed_bytes'] / GIB, 1)} GiB, mostly gensim's float64 K × W arrays
    (so its peak at 1/{num(1 / mid['fraction'])} NYTimes, {num(vb / MIB)} MiB, is
    {num(vb / summed, 2)}× the summed sampler's {num(summed / MIB)} MiB and
    {num(vb / nonzero, 2)}× the per-nonzero sampler's {num(nonzero / MIB)} MiB). Its default
    float32 would halve them but lowered online VB's held-out ll after one pass in every KOS
    seed, and a baseline is not weakened to save memory."""


def render_scale(d: dict) -> str:
    """The memory paragraphs and table from the contents of ``results/bench/scale.json``."""
    return "\n\n".join([wrap(_scale_intro(d)), _table(d["fits"]),
                        wrap(_scale_why(d) + " " + _scale_fixed(d))])


# --- README.md ----------------------------------------------------------------------------

BLOCKS = {"same_cpu": render_same_cpu, "scale": render_scale}


def render_blocks(bench: Path) -> dict[str, str]:
    """Each block's text, from ``bench/<name>.json``."""
    return {name: f(json.loads((bench / f"{name}.json").read_text()))
            for name, f in BLOCKS.items()}


def _span(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- bench:{name}:begin -->\n)(.*?)(<!-- bench:{name}:end -->)", re.S)


def replace_blocks(text: str, blocks: dict[str, str]) -> str:
    """``text`` with each marked block's contents replaced; ValueError if a marker is missing."""
    for name, body in blocks.items():
        if len(_span(name).findall(text)) != 1:
            raise ValueError(f"README needs one <!-- bench:{name}:begin/end --> pair")
        text = _span(name).sub(lambda m, b=body: f"{m[1]}\n{b}\n\n{m[3]}", text)
    return text


def stale_blocks(text: str, blocks: dict[str, str]) -> list[str]:
    """Names of the blocks whose text in the README differs from the render."""
    return [n for n in blocks if replace_blocks(text, {n: blocks[n]}) != text]


def write_atomic(path: Path, old: str, text: str) -> None:
    """Replace ``path`` (whose text was ``old``) by ``text`` by one rename of a complete new
    file (:func:`same.io.outputs.write_file`), created with its mode less the umask; refused
    (one line) if the file changed since it was read.

    Raises
    ------
    same.io.outputs.OutputError
        ``path`` no longer holds ``old`` (edited meanwhile), or is a symbolic link.
    """
    from same.io.outputs import Kind, write_file

    data = text.encode()
    kind = Kind("README as read by this script", lambda p: p.read_text() == old)
    write_file(path, lambda f: f.write(data), kind, mode=path.stat().st_mode & 0o777)


def main(argv: list[str] | None = None) -> int:
    """Rewrite README.md's bench blocks, or with ``--check`` exit 1 if they are stale."""
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report stale blocks (exit 1)")
    ap.add_argument("--readme", type=Path, default=REPO / "README.md")
    ap.add_argument("--bench", type=Path, default=REPO / "results" / "bench")
    args = ap.parse_args(argv)
    return update_readme(args.readme, render_blocks(args.bench), args.check,
                         f"{args.bench}/*.json", "benchmarks/readme_numbers.py")


def update_readme(readme: Path, blocks: dict[str, str], check: bool, source: str,
                  script: str) -> int:
    """Rewrite ``readme``'s ``blocks`` (name → text) where stale, or (``check``) only say
    which are stale and exit 1; ``source``: what the blocks are rendered from, ``script``:
    the command that rewrites them. Returns the exit status."""
    text = readme.read_text()
    try:
        stale = stale_blocks(text, blocks)
    except ValueError as e:
        print(f"{readme}: {e}", file=sys.stderr)
        return 1
    if check:
        if stale:
            print(f"{readme}: block(s) {', '.join(stale)} differ from {source}; run python "
                  f"{script}", file=sys.stderr)
        return 1 if stale else 0
    if stale:
        write_atomic(readme, text, replace_blocks(text, blocks))
    print(f"{readme}: {', '.join(stale) or 'no'} block(s) rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
