"""The one runner used for every method: train → checkpoints → evaluate → write.

Given (method, split, K, α, β, seed, budget) it trains, exports φ at
checkpoints, scores each with the shared evaluator (:func:`same.evaluate.evaluate`),
and writes into ``out_dir`` (by convention ``results/<dataset>/<label>/K<K>/seed<seed>/``):

- ``trace.csv``: one row per checkpoint: pass, iteration, tokens_seen,
  samples_per_word, train_seconds (evaluation excluded), ll, perplexity,
  ll_bidmach, eval_seconds, native_score (the library's own score, secondary);
- ``model.npz``: φ (float32), α, β, the split's vocabulary checksum;
- ``meta.json``: settings, threads, machine, versions, commit, split checksum.

The three files are written into a temporary directory that is renamed to
``out_dir`` only when complete, so a killed run leaves no partial output.
"""

from __future__ import annotations

import csv
import io
import math
import os
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .evaluate import BIDMACH_INNER, FOLD_IN_ITERS, evaluate
from .provenance import provenance, write_json
from .split import HeldOutSplit, load_split

__all__ = ["METHODS", "RunConfig", "run", "eval_points", "load_model", "score_model",
           "TRACE_COLUMNS"]

METHODS = ("same", "cgs", "vb_online", "vb_batch")
TRACE_COLUMNS = ("method", "label", "pass", "iteration", "tokens_seen", "samples_per_word",
                 "train_seconds", "ll", "perplexity", "ll_bidmach", "eval_seconds",
                 "native_score")
_SAME_PARAMS = {"n_samples", "batch_size", "n_inner", "learning_rate", "learning_decay",
                "learning_offset", "learning_power", "prior_scale", "m_schedule",
                "keep_doc_topic", "sampler"}
_VB_PARAMS = {"chunksize", "iterations"}


@dataclass
class RunConfig:
    """What one run trains.

    method : "same" | "cgs" | "vb_online" | "vb_batch"
    budget : passes (same, vb_*) or Gibbs iterations (cgs)
    threads : pinned for numba, BLAS (threadpoolctl) and tomotopy workers
    params : method-specific settings (SAME: n_samples, m_schedule, sampler, ...;
        VB: chunksize, iterations)
    label : output folder name and trace label (default: the method)
    """

    method: str
    n_topics: int
    doc_topic_prior: float
    topic_word_prior: float
    seed: int
    budget: int
    threads: int = 1
    backend: str = "numpy"
    params: dict = field(default_factory=dict)
    label: str | None = None

    def validate(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r}; known: {', '.join(METHODS)}")
        for name in ("n_topics", "budget", "threads"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        for name in ("doc_topic_prior", "topic_word_prior"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a positive finite number, got {v!r}")
        allowed = {"same": _SAME_PARAMS, "cgs": set(), "vb_online": _VB_PARAMS,
                   "vb_batch": _VB_PARAMS}[self.method]
        unknown = sorted(set(self.params) - allowed)
        if unknown:
            raise ValueError(f"unknown parameter(s) {', '.join(unknown)} for method "
                             f"{self.method!r}; allowed: {', '.join(sorted(allowed)) or 'none'}")
        if self.backend != "numpy" and self.method != "same":
            raise ValueError(f"backend={self.backend!r} applies to method 'same' only")


def eval_points(budget: int) -> list[int]:
    """Checkpoints: every pass/iteration up to 20, then 1-2-5 steps, and the budget."""
    from baselines.cgs import CHECKPOINTS

    pts = set(range(1, min(budget, 20) + 1)) | {c for c in CHECKPOINTS if c <= budget} | {budget}
    return sorted(pts)


def _train(config: RunConfig, split: HeldOutSplit, on_checkpoint) -> np.ndarray:
    """Dispatch to the method; ``on_checkpoint(phi, info)`` at every eval point."""
    X = split.train
    common = dict(n_topics=config.n_topics, doc_topic_prior=config.doc_topic_prior,
                  topic_word_prior=config.topic_word_prior, random_state=config.seed)
    points = eval_points(config.budget)
    if config.method == "same":
        from .sampler import SameLDA

        wanted = set(points)

        def cb(model, info):
            if info["end_of_pass"] and info["pass"] in wanted:
                on_checkpoint(model.topic_word_, {
                    "pass": info["pass"], "iteration": info["step"],
                    "samples_per_word": info["samples_per_word"],
                    "train_seconds": info["train_seconds"], "tokens_seen": info["tokens_seen"],
                    "native_score": None})

        model = SameLDA(max_iter=config.budget, backend=config.backend, callback=cb,
                        **common, **config.params)
        return model.fit(X).topic_word_
    if config.method == "cgs":
        from baselines.cgs import fit_cgs

        return fit_cgs(X, iterations=config.budget, checkpoints=points, threads=config.threads,
                       checkpoint=on_checkpoint, **common)
    from baselines.vb import fit_vb

    wanted = set(points)

    def vb_cb(phi, info):
        if info["pass"] in wanted:
            on_checkpoint(phi, info)

    return fit_vb(X, passes=config.budget, mode=config.method.split("_")[1], checkpoint=vb_cb,
                  **common, **config.params)


def _pin_threads(n: int):
    from threadpoolctl import threadpool_limits

    from .kernels.cpu import set_threads

    set_threads(min(n, os.cpu_count() or n))
    return threadpool_limits(limits=n)


def run(config: RunConfig, split: HeldOutSplit | str | os.PathLike, out_dir: str | os.PathLike,
        *, dataset: str | None = None, progress: bool = True) -> Path:
    """Train one method, score every checkpoint, write trace.csv, model.npz, meta.json.

    Returns
    -------
    Path of the completed output directory.

    Raises
    ------
    ValueError
        Unknown method or parameter, or invalid settings (named).
    FileNotFoundError, same.split.SplitIntegrityError
        Missing or corrupted split artifact.
    """
    config.validate()
    split_path = None
    if not isinstance(split, HeldOutSplit):
        split_path = str(split)
        split = load_split(split)
    dataset = dataset or split.corpus
    label = config.label or config.method
    out_dir = Path(out_dir)
    rows: list[dict] = []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=config.budget, desc=f"{label} K={config.n_topics} seed={config.seed}",
                   unit="pass" if config.method != "cgs" else "iter")

    def on_checkpoint(phi, info):
        t0 = time.perf_counter()
        ev = evaluate(phi, config.doc_topic_prior, split)
        rows.append({"method": config.method, "label": label, "pass": info["pass"],
                     "iteration": info["iteration"], "tokens_seen": int(info["tokens_seen"]),
                     "samples_per_word": info["samples_per_word"],
                     "train_seconds": info["train_seconds"], "ll": ev.ll,
                     "perplexity": ev.perplexity, "ll_bidmach": ev.ll_bidmach,
                     "eval_seconds": time.perf_counter() - t0,
                     "native_score": info.get("native_score")})
        if bar is not None:
            bar.n = info["pass"]
            bar.set_postfix(ll=f"{ev.ll:.4f}")
            bar.refresh()

    wall0 = time.perf_counter()
    with _pin_threads(config.threads):
        from threadpoolctl import threadpool_info

        threadpools = [{k: d.get(k) for k in ("internal_api", "num_threads")}
                       for d in threadpool_info()]
        phi = _train(config, split, on_checkpoint)
    if bar is not None:
        bar.close()
    wall = time.perf_counter() - wall0

    from .kernels.cpu import set_threads

    meta = provenance({
        "dataset": dataset,
        "label": label,
        "settings": asdict(config),
        "split": {"path": split_path, "sha256": split.checksum(), "corpus": split.corpus,
                  "seed": split.seed, "test_fraction": split.test_fraction,
                  "vocab_sha256": split.vocab_sha256, "n_train_docs": int(split.train.shape[0]),
                  "n_test_docs": int(split.test_observed.shape[0])},
        "threads": {"requested": config.threads, "numba": set_threads(None),
                    "threadpools": threadpools,
                    "tomotopy_workers": config.threads if config.method == "cgs" else None},
        "evaluator": {"fold_in_iters": FOLD_IN_ITERS, "bidmach_inner": BIDMACH_INNER},
        "wall_seconds": wall,
        "final": rows[-1] if rows else None,
    })
    _write_outputs(out_dir, rows, phi, config, split, meta)
    return out_dir


def _write_outputs(out_dir: Path, rows, phi, config: RunConfig, split: HeldOutSplit, meta) -> None:
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=TRACE_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in TRACE_COLUMNS})
        (tmp / "trace.csv").write_text(buf.getvalue())
        np.savez_compressed(tmp / "model.npz", topic_word=phi.astype(np.float32),
                            doc_topic_prior=config.doc_topic_prior,
                            topic_word_prior=config.topic_word_prior,
                            vocab_sha256=np.asarray(split.vocab_sha256),
                            method=np.asarray(config.method))
        write_json(tmp / "meta.json", meta)
        os.chmod(tmp, 0o755)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def load_model(path: str | os.PathLike) -> dict:
    """Read a runner ``model.npz``: topic_word (float64, rows renormalised), priors, vocab checksum."""
    with np.load(path, allow_pickle=False) as z:
        phi = z["topic_word"].astype(np.float64)
        return {"topic_word": phi / phi.sum(axis=1, keepdims=True),
                "doc_topic_prior": float(z["doc_topic_prior"]),
                "topic_word_prior": float(z["topic_word_prior"]),
                "vocab_sha256": str(z["vocab_sha256"]), "method": str(z["method"])}


def score_model(model_path: str | os.PathLike, split: HeldOutSplit | str | os.PathLike):
    """Score a saved model on a split with the shared evaluator.

    Raises
    ------
    ValueError
        The model was trained on another vocabulary than the split's.
    """
    if not isinstance(split, HeldOutSplit):
        split = load_split(split)
    model = load_model(model_path)
    if model["vocab_sha256"] != split.vocab_sha256:
        raise ValueError(f"{model_path}: model vocabulary (sha256 {model['vocab_sha256'][:12]}…) "
                         f"does not match the split's ({split.vocab_sha256[:12]}…, corpus "
                         f"{split.corpus!r})")
    return evaluate(model["topic_word"], model["doc_topic_prior"], split)
