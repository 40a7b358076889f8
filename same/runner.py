"""The one runner used for every method: train → checkpoints → evaluate → write.

Given a :class:`same.runs.RunSpec` (method, K, α, β, seed, budget, params) it trains, exports φ at
checkpoints, scores each with the shared evaluator (:func:`same.evaluate.evaluate`),
and writes into ``out_dir`` (by convention ``results/<dataset>/<label>/K<K>/seed<seed>/``):

- ``trace.csv``: one row per checkpoint: pass, iteration, tokens_seen,
  samples_per_word, train_seconds (evaluation and JIT compilation excluded), ll, perplexity,
  ll_bidmach, eval_seconds, native_score (the library's own score, secondary);
- ``model.npz``: φ (float32), α, β, the split's vocabulary checksum;
- ``meta.json``: settings, threads, machine, versions, commit, split checksum.

The three files are written into a temporary directory that is renamed to
``out_dir`` only when complete, so a killed run leaves no partial output.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import shutil
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from .evaluate import BIDMACH_INNER, FOLD_IN_ITERS, evaluate
from .methods import checkpoints, eval_points
from .provenance import provenance, write_json
from .runs import RunSpec
from .split import HeldOutSplit, load_split, train_subset

__all__ = ["RunSpec", "run", "eval_points", "load_model", "score_model", "TRACE_COLUMNS",
           "ModelIntegrityError"]

TRACE_COLUMNS = ("method", "label", "pass", "iteration", "tokens_seen", "samples_per_word",
                 "train_seconds", "ll", "perplexity", "ll_bidmach", "eval_seconds",
                 "native_score", "compile_seconds")


def _pin_threads(n: int):
    from threadpoolctl import threadpool_limits

    from .kernels.cpu import set_threads

    set_threads(min(n, os.cpu_count() or n))
    return threadpool_limits(limits=n)


def _trace_row(spec: RunSpec, label: str, phi, info: dict, split: HeldOutSplit) -> dict:
    """Score one checkpoint with the shared evaluator; its evaluation time is recorded apart."""
    t0 = time.perf_counter()
    ev = evaluate(phi, spec.doc_topic_prior, split)
    return {"method": spec.method, "label": label, "pass": info["pass"],
            "iteration": info["iteration"], "tokens_seen": int(info["tokens_seen"]),
            "samples_per_word": info["samples_per_word"], "train_seconds": info["train_seconds"],
            "ll": ev.ll, "perplexity": ev.perplexity, "ll_bidmach": ev.ll_bidmach,
            "eval_seconds": time.perf_counter() - t0, "native_score": info.get("native_score"),
            "compile_seconds": info.get("compile_seconds")}


def _train_and_score(spec: RunSpec, split: HeldOutSplit, label: str, progress: bool,
                     points=None):
    """Run the method's checkpoints, scoring each; returns (rows, last φ, threadpool info)."""
    from threadpoolctl import threadpool_info

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=spec.budget, desc=f"{label} K={spec.n_topics} seed={spec.seed}",
                   unit="iter" if spec.method == "cgs" else "pass")
    rows, phi = [], None
    with _pin_threads(spec.threads):
        pools = [{k: d.get(k) for k in ("internal_api", "num_threads")} for d in threadpool_info()]
        for phi, info in checkpoints(split.train, spec, points):
            rows.append(_trace_row(spec, label, phi, info, split))
            if bar is not None:
                bar.n = info["pass"]
                bar.set_postfix(ll=f"{rows[-1]['ll']:.4f}")
                bar.refresh()
    if bar is not None:
        bar.close()
    return rows, np.array(phi, copy=True), pools


def run(spec: RunSpec, split: HeldOutSplit | str | os.PathLike, out_dir: str | os.PathLike,
        *, dataset: str | None = None, progress: bool = True, points=None) -> Path:
    """Train one method, score every checkpoint, write trace.csv, model.npz, meta.json.

    ``points``: the passes (CGS: iterations) to score, default
    :func:`same.methods.eval_points` of the budget (only the budget when ``spec.checkpoints``
    is "final").

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
    spec.validate()
    split_path = None
    if not isinstance(split, HeldOutSplit):
        split_path = str(split)
        split = load_split(split, mmap=True)  # minibatches read from disk: any corpus size
    split_sha = split.checksum()
    split = train_subset(split, spec.train_fraction)
    label = spec.label or spec.method
    if points is None and spec.checkpoints == "final":
        points = [spec.budget]
    wall0 = time.perf_counter()
    rows, phi, pools = _train_and_score(spec, split, label, progress, points)
    from .kernels.cpu import set_threads

    meta = provenance({
        "dataset": dataset or split.corpus,
        "label": label,
        "settings": asdict(spec),
        "split": {"path": split_path, "sha256": split_sha,
                  "train_fraction": spec.train_fraction, "corpus": split.corpus,
                  "seed": split.seed, "test_fraction": split.test_fraction,
                  "vocab_sha256": split.vocab_sha256, "n_train_docs": int(split.train.shape[0]),
                  "n_words": int(split.train.shape[1]),
                  "n_train_tokens": int(round(float(split.train.sum()))),
                  "n_test_docs": int(split.test_observed.shape[0])},
        "threads": {"requested": spec.threads, "numba": set_threads(None), "threadpools": pools,
                    "tomotopy_workers": spec.threads if spec.method == "cgs" else None},
        "evaluator": {"fold_in_iters": FOLD_IN_ITERS, "bidmach_inner": BIDMACH_INNER},
        "wall_seconds": time.perf_counter() - wall0,
        "final": rows[-1] if rows else None,
    })
    _write_outputs(Path(out_dir), rows, phi, spec, split, meta)
    return Path(out_dir)


def _write_outputs(out_dir: Path, rows, phi, spec: RunSpec, split: HeldOutSplit, meta) -> None:
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.parent.glob(f".{out_dir.name}.tmp*"):  # left by a SIGKILLed run
        shutil.rmtree(stale, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp", dir=out_dir.parent))
    try:
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=TRACE_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in TRACE_COLUMNS})
        (tmp / "trace.csv").write_text(buf.getvalue())
        model = {"topic_word": phi.astype(np.float32),
                 "doc_topic_prior": np.float64(spec.doc_topic_prior),
                 "topic_word_prior": np.float64(spec.topic_word_prior),
                 "vocab_sha256": np.asarray(split.vocab_sha256), "method": np.asarray(spec.method)}
        np.savez_compressed(tmp / "model.npz", **model, checksum=np.asarray(_model_checksum(model)))
        write_json(tmp / "meta.json", meta)
        os.chmod(tmp, 0o755)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


class ModelIntegrityError(ValueError):
    """A model.npz is unreadable, or its content does not match its checksum."""


_MODEL_KEYS = ("topic_word", "doc_topic_prior", "topic_word_prior", "vocab_sha256", "method")


def _model_checksum(model: dict) -> str:
    h = hashlib.sha256()
    for k in _MODEL_KEYS:
        a = np.asarray(model[k])
        h.update(f"{k}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def load_model(path: str | os.PathLike) -> dict:
    """Read a runner ``model.npz``: topic_word (float64, rows renormalised), priors, vocab checksum.

    Raises
    ------
    FileNotFoundError
        No such file.
    ModelIntegrityError
        Unreadable (truncated, not an npz, keys missing) or content not matching its checksum.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such model file")
    try:
        with np.load(path, allow_pickle=False) as z:
            model = {k: z[k] for k in (*_MODEL_KEYS, "checksum")}
    except Exception as exc:  # zipfile, zlib, KeyError, ValueError: all mean "unreadable"
        raise ModelIntegrityError(f"{path}: unreadable model file ({type(exc).__name__}: "
                                  f"{exc}); rerun the fit that wrote it") from None
    if str(model["checksum"]) != _model_checksum(model):
        raise ModelIntegrityError(f"{path}: content does not match its checksum; rerun the fit "
                                  "that wrote it")
    phi = model["topic_word"].astype(np.float64)
    return {"topic_word": phi / phi.sum(axis=1, keepdims=True),
            "doc_topic_prior": float(model["doc_topic_prior"]),
            "topic_word_prior": float(model["topic_word_prior"]),
            "vocab_sha256": str(model["vocab_sha256"]), "method": str(model["method"])}


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
