"""Peak memory and time per pass of every method at growing NYTimes-shaped size (issue 14).

Peak RSS is the kernel's high-water mark of the step's process (``VmHWM``); peak anonymous
memory (``RssAnon``, polled) leaves out file pages, e.g. of the memory-mapped split that SAME,
VB and the evaluator train and score from, which the kernel can drop under memory pressure.

For synthetic corpora of NYTimes' make-up (:func:`same.data.synthetic.shaped_corpus`: D, NNZ and
tokens divided by ``--fractions``, W kept) at K = 256, measures in a fresh process per step —
so each peak RSS is that step's alone — parse (docword.txt.gz → CSR), split, SAME (both
samplers, one pass), CGS (tomotopy, two iterations), VB online and VB batch (gensim, one pass)
and the evaluator (document completion on the split).  Then fits peak RSS and seconds
linearly in the nonzeros per method and extrapolates to full NYTimes and PubMed, with bytes
per nonzero.  Writes ``results/bench/scale.json``; machine, versions and commit recorded.

    python benchmarks/scale.py [--fractions 64 16 8] [--n-topics 256]

Seconds here are one pass on a shared 2-core machine: an order of magnitude, not a target.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from same.data.corpus import REGISTRY  # the corpora's shapes, one source
from same.io.cli import ArgumentParser, whole_number

#: This script's folder: the child processes import it from here, whatever the working folder.
HERE = Path(__file__).resolve().parent
NYTIMES = {k: getattr(REGISTRY["nytimes"], k) for k in ("n_docs", "n_words", "nnz", "n_tokens")}
PUBMED_NNZ, PUBMED_DOCS = REGISTRY["pubmed"].nnz, REGISTRY["pubmed"].n_docs
STEPS = ("parse", "split", "same_nonzero", "same_summed", "cgs", "vb_online", "vb_batch",
         "evaluate")


def _csr_bytes(X) -> int:
    return int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)


def run_step(step: str, work: Path, n_topics: int) -> dict:
    """One measurement in this process (called in a child by :func:`measure`)."""
    import scipy.sparse as sp

    import same.data.artefact
    from same.data.split import load_split

    # these corpora stand in for paper-scale ones, whose splits (> MMAP_MIN_BYTES) the runner
    # maps: map them too, whatever their size here
    same.data.artefact.MMAP_MIN_BYTES = 0
    t0 = time.perf_counter()
    extra = {}
    if step == "parse":
        from same.data.docword import read_docword

        X = read_docword(work / "docword.synthetic.txt.gz")
        extra["csr_bytes"] = _csr_bytes(sp.csr_matrix(X))
    elif step == "split":
        from same.data.corpus import npz_memmap
        from same.data.split import make_split

        z = npz_memmap(work / "counts.npz")  # as `same-lda split` maps the parsed cache
        X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]),
                          shape=tuple(int(n) for n in z["shape"]))
        make_split(X, 0.1, 0, name="synthetic").save(work / "split.npz")
    elif step == "evaluate":
        from same.model.evaluate import evaluate

        split = load_split(work / "split.npz", mmap=True)  # as the runner loads it
        phi = np.random.default_rng(0).dirichlet(np.full(split.train.shape[1], 0.1), n_topics)
        t0 = time.perf_counter()
        evaluate(phi, 0.1, split)
    else:
        from same.experiments.methods import checkpoints
        from same.experiments.spec import RunSpec

        split = load_split(work / "split.npz", mmap=True)  # as the runner loads it
        method, params = step, {}
        if step.startswith("same"):
            method, params = "same", {"sampler": step.split("_")[1], "n_copies": 100.0}
        budget = 2 if method == "cgs" else 1
        spec = RunSpec(method=method, n_components=n_topics, doc_topic_prior=0.1,
                       topic_word_prior=0.1, seed=0, budget=budget, params=params)
        t0 = time.perf_counter()
        for _, info in checkpoints(split.train, spec, [budget]):
            extra["train_seconds_per_pass"] = info["train_seconds"] / budget
    return {"seconds": time.perf_counter() - t0, **extra}


def _status_bytes(field: str) -> int | None:
    """A ``kB`` field of /proc/self/status in bytes; None without /proc or the field."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def peak_rss() -> int:
    """This process's peak resident set (bytes): ``VmHWM`` of /proc/self/status on Linux.

    Not ``getrusage(RUSAGE_SELF).ru_maxrss``: Linux carries the parent's high-water mark into a
    child across fork/vfork + exec, so a child started by a parent holding the corpus would
    report at least the parent's size (the 2026-11-23 morning run of this benchmark did: its
    parse and split peaks were the parent's 487 MiB)."""
    hwm = _status_bytes("VmHWM")
    if hwm is not None:
        return hwm
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # bytes on macOS, KiB elsewhere


class AnonPeak:
    """Peak anonymous resident memory (``RssAnon`` of /proc/self/status, polled every 20 ms):
    what a step holds beyond file pages, which the kernel can drop and re-read (a
    memory-mapped corpus).  0 where /proc is missing."""

    def __init__(self):
        import threading

        self.peak, self._stop = 0, threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self):
        while not self._stop.is_set():
            anon = _status_bytes("RssAnon")
            if anon is None:
                return
            self.peak = max(self.peak, anon)
            self._stop.wait(0.02)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def _child(step: str, work: Path, n_topics: int) -> dict:
    code = (f"import json, sys; sys.path.insert(0, {str(HERE)!r}); import scale; "
            "anon = scale.AnonPeak(); "
            f"r = scale.run_step({step!r}, __import__('pathlib').Path({str(work)!r}), "
            f"{n_topics}); r['peak_rss_bytes'] = scale.peak_rss(); "
            "r['peak_anon_bytes'] = anon.stop(); print(json.dumps(r))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"step {step} failed: {res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _baseline_rss() -> int:
    code = (f"import sys; sys.path.insert(0, {str(HERE)!r}); import scale, numpy, scipy.sparse, "
            "same, same.model.sampler, same.model.evaluate; print(scale.peak_rss())")
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True).stdout)


def measure(fractions, n_topics: int, seed: int = 0) -> dict:
    """Every step at every size; see the module docstring."""
    import scipy.sparse as sp

    from same.data.synthetic import shaped_corpus

    sizes = []
    for f in fractions:
        X = shaped_corpus(NYTIMES["n_docs"] // f, NYTIMES["n_words"], NYTIMES["nnz"] // f,
                          n_tokens=NYTIMES["n_tokens"] // f, seed=seed)
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            sp.save_npz(work / "counts.npz", X, compressed=False)
            _write_docword(X, work / "docword.synthetic.txt.gz")
            row = {"fraction": 1 / f, "n_docs": X.shape[0], "nnz": int(X.nnz),
                   "n_tokens": int(X.sum()), "csr_bytes": _csr_bytes(X), "steps": {}}
            for step in STEPS:
                row["steps"][step] = r = _child(step, work, n_topics)
                print(f"1/{f}: {step} {r['peak_rss_bytes'] / 2**20:.0f} MiB "
                      f"({r['peak_anon_bytes'] / 2**20:.0f} MiB anonymous), {r['seconds']:.1f} s",
                      file=sys.stderr, flush=True)
        sizes.append(row)
    return {"sizes": sizes, "fits": _extrapolate(sizes, n_topics)}


def _write_docword(X, path: Path) -> None:
    import gzip

    coo = X.tocoo()
    order = np.lexsort((coo.col, coo.row))
    with gzip.open(path, "wt", compresslevel=1) as f:
        f.write(f"{X.shape[0]}\n{X.shape[1]}\n{X.nnz}\n")
        lines = np.column_stack([coo.row[order] + 1, coo.col[order] + 1,
                                 coo.data[order].astype(np.int64)])
        np.savetxt(f, lines, fmt="%d")


def per_doc_bytes(step: str, n_topics: int) -> int:
    """Bytes a step holds per training document rather than per nonzero: SAME's θ carried
    across passes (float32 D × K) and tomotopy's per-document topic counts (assumed K int32).
    PubMed has 59 nonzeros per document against NYTimes' 232, so these terms are extrapolated
    by documents, not by nonzeros."""
    return 4 * n_topics if step.startswith("same") or step == "cgs" else 0


def _theta_in_file(step: str, n_docs: int, n_topics: int) -> bool:
    """SAME keeps θ in a mapped temporary file above THETA_MMAP_BYTES (not anonymous)."""
    from same.model.backend import THETA_MMAP_BYTES

    return step.startswith("same") and n_docs * n_topics * 4 > THETA_MMAP_BYTES


def _extrapolate(sizes, n_topics: int) -> dict:
    """Per step: peak = a + b·nnz + (bytes per document)·D, a and b by least squares on the
    measured peaks less the per-document term (:func:`per_doc_bytes`); its value at NYTimes
    and PubMed size; the same for the peak anonymous memory (``anon_``: RSS less file pages;
    SAME's θ leaves it where it is file-backed)."""
    nnz = np.array([s["nnz"] for s in sizes], dtype=float)
    docs = np.array([s["n_docs"] for s in sizes], dtype=float)
    csr_per_nnz = sizes[-1]["csr_bytes"] / sizes[-1]["nnz"]
    fits = {}
    for step in STEPS:
        c = per_doc_bytes(step, n_topics)
        fits[step] = {"bytes_per_document": c}
        for key, prefix in (("peak_rss_bytes", ""), ("peak_anon_bytes", "anon_")):
            y = np.array([s["steps"][step].get(key, np.nan) for s in sizes], dtype=float)
            y = y - c * docs
            b, a = np.polyfit(nnz, y, 1) if len(nnz) > 1 else (y[0] / nnz[0], 0.0)
            at = {}
            for name, n_nnz, n_docs in (("nytimes", NYTIMES["nnz"], NYTIMES["n_docs"]),
                                        ("pubmed", PUBMED_NNZ, PUBMED_DOCS)):
                per_doc = 0 if prefix and _theta_in_file(step, n_docs, n_topics) else c
                at[name] = a + b * n_nnz + per_doc * n_docs
            fits[step].update({
                f"{prefix}bytes_per_nonzero": b, f"{prefix}fixed_bytes": a,
                f"{prefix}nytimes_peak_gib": at["nytimes"] / 2**30,
                f"{prefix}pubmed_peak_gib": at["pubmed"] / 2**30,
                f"{prefix}pubmed_over_csr": at["pubmed"] / (csr_per_nnz * PUBMED_NNZ)})
    return fits


#: The result's ``benchmark``: what an earlier result at ``--out`` must say to be replaced.
BENCHMARK = "peak RSS and seconds per pass at NYTimes-shaped synthetic sizes"


def main(argv=None) -> int:
    ap = ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fractions", type=whole_number(1, NYTIMES["n_docs"] // 2), nargs="+",
                    default=[64, 16, 8], help="each size is NYTimes' shape divided by one")
    ap.add_argument("--n-topics", type=whole_number(1), default=256)
    ap.add_argument("--out", default="results/bench/scale.json")
    args = ap.parse_args(argv)
    from same.model.fit_memory import check_fit_memory

    try:  # a K whose φ alone needs more than this machine has: one line, before any work
        check_fit_memory("same", args.n_topics, NYTIMES["n_words"])
    except MemoryError as exc:
        ap.error(f"argument --n-topics: {exc}")

    from same.experiments.provenance import provenance, write_json
    from same.io.outputs import check_option, json_kind

    check_option(args.out, json_kind({"benchmark": BENCHMARK}), "scale.py")  # before work

    result = {"benchmark": BENCHMARK,
              "settings": {"n_components": args.n_topics, "fractions": args.fractions,
                           "same_n_samples": 100, "threads": "numba default (all cores)"},
              "baseline_python_rss_bytes": _baseline_rss(),
              **measure(args.fractions, args.n_topics)}
    result["self_peak_rss_bytes"] = peak_rss()
    result.update(provenance())
    write_json(args.out, result, option="--out")
    print(json.dumps({k: {m: round(v[m], 2) for m in ("nytimes_peak_gib", "pubmed_peak_gib",
                                                      "pubmed_over_csr", "anon_pubmed_over_csr")}
                      for k, v in result["fits"].items()}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
