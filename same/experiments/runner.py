"""The one runner used for every method: train → checkpoints → evaluate → write.

Given a :class:`same.experiments.spec.RunSpec` (method, K, α, β, seed, budget, params) it trains, exports φ at
checkpoints, scores each with the shared evaluator (:func:`same.model.evaluate.evaluate`),
and writes into ``out_dir`` (by convention ``results/<dataset>/<label>/K<K>/seed<seed>/``):

- ``trace.csv``: one row per checkpoint: pass, iteration, tokens_seen,
  samples_per_word, train_seconds (evaluation and JIT compilation excluded), ll, perplexity,
  ll_bidmach, ll_l2r (left-to-right, whole test documents), eval_seconds, native_score (the
  library's own score, secondary), compile_seconds;
- ``model.npz``: φ (float32), α, β, the split's vocabulary checksum and content checksum,
  sealed (:func:`same.data.artefact.save_npz`);
- ``meta.json``: settings, threads, machine, versions, commit, split checksum, the trace's
  SHA-256, the training documents' ``order`` (the spec's ``document_order``, what it resolved
  to, the corpus's order, the longest run of one label).

SAME and online VB learn in the order the training documents are given; a split whose labels
show them grouped (:func:`same.data.order.grouped_run`) is refused for those methods unless the
order was asked for (``shuffle: false`` in the corpus spec, ``document_order`` "file" or
"other", SameLDA's own ``shuffle``).

The three files are written into a temporary directory that is renamed to
``out_dir`` only when complete, so a killed run leaves no partial output; ``out_dir`` is
replaced only when it is empty or a previous output of ours (:mod:`same.experiments.rundir`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from same.data.artefact import ArtefactError, check_array, file_sha256, open_npz, remedied, save_npz
from same.data.order import (
    grouped_run,
    longest_run,
    resolve_document_order,
    training_permutation,
)
from same.data.split import HeldOutSplit, load_split, train_subset, validation_split
from same.model.evaluate import BIDMACH_INNER, FOLD_IN_ITERS, L2R_PARTICLES, L2R_SEED, evaluate
from same.model.fit_memory import check_fit_memory
from same.model.heldout_inputs import check_prior_totals
from same.model.kernels.cpu import usable_threads

from .machine_load import LoadMeter
from .methods import checkpoints, eval_points
from .provenance import provenance, write_json
from .rundir import (
    RUN_KIND,
    TRACE_COLUMNS,
    json_sha256,
    seal_meta,
    trace_text,
    writing_run_dir,
)
from .spec import RunSpec

__all__ = ["RunSpec", "run", "eval_points", "load_model", "score_model", "TRACE_COLUMNS",
           "ModelIntegrityError", "usable_threads"]


def _pin_threads(n: int):
    from threadpoolctl import threadpool_limits

    from same.model.kernels.cpu import set_threads

    set_threads(n)
    return threadpool_limits(limits=n)


def _trace_row(spec: RunSpec, label: str, phi, info: dict, split: HeldOutSplit) -> dict:
    """Score one checkpoint with the shared evaluator; its evaluation time is recorded apart."""
    t0 = time.perf_counter()
    ev = evaluate(phi, spec.doc_topic_prior, split)
    return {"method": spec.method, "label": label, "pass": info["pass"],
            "iteration": info["iteration"], "tokens_seen": int(info["tokens_seen"]),
            "samples_per_word": info["samples_per_word"], "train_seconds": info["train_seconds"],
            "ll": ev.ll, "perplexity": ev.perplexity, "ll_bidmach": ev.ll_bidmach,
            "ll_l2r": ev.ll_l2r, "eval_seconds": time.perf_counter() - t0,
            "native_score": info.get("native_score"),
            "compile_seconds": info.get("compile_seconds")}


def _train_and_score(spec: RunSpec, split: HeldOutSplit, label: str, progress: bool,
                     points=None, train=None):
    """Run the method's checkpoints on ``train`` (default ``split.train``), scoring each on
    ``split``; returns (rows, last φ, threadpool info)."""
    from threadpoolctl import threadpool_info

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=spec.budget, desc=f"{label} K={spec.n_components} seed={spec.seed}",
                   unit="iter" if spec.method == "cgs" else "pass")
    rows, phi = [], None
    with _pin_threads(spec.threads):  # already capped by usable_threads
        pools = [{k: d.get(k) for k in ("internal_api", "num_threads")} for d in threadpool_info()]
        for phi, info in checkpoints(split.train if train is None else train, spec, points):
            rows.append(_trace_row(spec, label, phi, info, split))
            if bar is not None:
                bar.n = info["pass"]
                bar.set_postfix(ll=f"{rows[-1]['ll']:.4f}")
                bar.refresh()
    if bar is not None:
        bar.close()
    return rows, np.array(phi, copy=True), pools


def run(spec: RunSpec, split: HeldOutSplit | str | os.PathLike, out_dir: str | os.PathLike,
        *, dataset: str | None = None, progress: bool = True, points=None,
        tuning: str | os.PathLike | None = None) -> Path:
    """Train one method, score every checkpoint, write trace.csv, model.npz, meta.json.

    ``tuning``: a ``tuning.json`` (:mod:`same.experiments.tuning`) tuned on this split; the spec's method
    then runs with the settings chosen on validation documents over its params (meta.json
    records the settings used and the file's checksum).

    ``points``: the passes (CGS: iterations) to score, default
    :func:`same.experiments.methods.eval_points` of the budget (only the budget when ``spec.checkpoints``
    is "final").  ``spec.threads`` is capped at the usable CPUs (:func:`usable_threads`;
    meta.json records both).  ``out_dir`` is checked before training and written as
    :mod:`same.experiments.rundir` says (never replacing anything but an earlier output of ours).

    Returns
    -------
    Path of the completed output directory.

    Raises
    ------
    ValueError
        Unknown method or parameter, or invalid settings (named); the split's W × β above
        2^127 (:func:`same.model.heldout_inputs.check_prior_totals`).
    same.experiments.rundir.RunDirError
        ``out_dir`` is the working folder, holds an input, or holds files we did not write.
    MemoryError
        K × W (the spec's K, the split's W) beyond the memory available
        (:func:`same.model.fit_memory.check_fit_memory`), before anything is allocated.
    FileNotFoundError, same.data.split.SplitIntegrityError
        Missing or corrupted split artifact.
    same.experiments.tuning.TuningError
        ``tuning`` unreadable, damaged, tuned on another split or without the spec's method.
    ValueError
        For SAME and online VB, training documents grouped by label in the order they would
        be learned in (:func:`check_document_order`).
    """
    from .rundir import check_out_dir

    spec.validate()
    split_path = None if isinstance(split, HeldOutSplit) else str(split)
    # before hours of training, and again when renaming
    check_out_dir(out_dir, [split_path, tuning])
    if split_path is not None:
        split = load_split(split, mmap=True)  # a paper-scale split is read from disk
    split_sha, test_fraction = split.checksum(), split.test_fraction
    if tuning is not None:
        from .tuning import apply_tuning, load_tuning

        spec = apply_tuning(spec, tuning, split_sha)
        tuned = {"path": str(tuning), "sha256": load_tuning(tuning)["sha256"]}
    if spec.validation_fraction is not None:  # test documents are never read from here on
        split = validation_split(split, spec.validation_fraction)
    split = train_subset(split, spec.train_fraction)
    train, order = training_order(spec, split, split_path)  # the documents trained on, in order
    check_prior_totals(spec.n_components, spec.doc_topic_prior, split.n_words,
                       spec.topic_word_prior)  # W·β within float32, now that W is known
    check_fit_memory(spec.method, spec.n_components, split.n_words)  # before anything allocates
    label = spec.label or spec.method
    if points is None and spec.checkpoints == "final":
        points = [spec.budget]
    used = replace(spec, threads=usable_threads(spec.threads))
    wall0 = time.perf_counter()
    with LoadMeter() as load:  # what else ran on the machine meanwhile (meta.json)
        rows, phi, pools = _train_and_score(used, split, label, progress, points, train)
    trace = trace_text(rows)
    meta = _meta(spec, used, split, split_path, (split_sha, test_fraction), dataset, label,
                 rows, pools, trace, time.perf_counter() - wall0)
    meta["order"] = order
    meta["tuning"] = tuned if tuning is not None else None
    meta["machine_load"] = load.record()
    model = {"topic_word": phi.astype(np.float32),
             "doc_topic_prior": np.float64(spec.doc_topic_prior),
             "topic_word_prior": np.float64(spec.topic_word_prior),
             "vocab_sha256": np.asarray(split.vocab_sha256),
             "split_sha256": np.asarray(split_sha), "method": np.asarray(spec.method),
             # binds the model to its run: same.experiments.verify_artefacts verifies both against meta.json
             "trace_sha256": np.asarray(meta["trace_sha256"]),
             "settings_sha256": np.asarray(settings_sha256(meta["settings"]))}
    with writing_run_dir(out_dir, [split_path, tuning]) as tmp:
        (tmp / "trace.csv").write_bytes(trace.encode())
        save_npz(tmp / "model.npz", model, compress=True)
        with open(tmp / "model.npz", "rb") as f:
            meta["model_sha256"] = file_sha256(f)
        write_json(tmp / "meta.json", seal_meta(meta))
    return Path(out_dir)


#: Methods that learn in the order of the training documents (minibatch by minibatch).
ORDER_SENSITIVE = ("same", "vb_online", "sklearn_online")


def training_order(spec: RunSpec, split: HeldOutSplit, split_path: str | None = None):
    """(training matrix in the order the method gets it, meta.json's ``order``) of ``split``'s
    training documents under ``spec.document_order`` (:mod:`same.data.order`); refused by
    :func:`check_document_order`.  The stored order is the split's own matrix (a mapped
    split is not copied); another order is a reordered copy."""
    resolved = resolve_document_order(spec.document_order)
    perm = training_permutation(resolved, split.train.shape[0], spec.seed,
                                split.train_file_positions)
    labels = split.train_labels
    if perm is not None and labels is not None:
        labels = labels[perm]
    check_document_order(spec, split, labels, split_path)
    run = None if labels is None else longest_run(labels)
    return (split.train if perm is None else split.train[perm],
            {"document_order": spec.document_order, "resolved": resolved,
             "corpus_order": split.order, "longest_label_run": None if run is None else
             run.length})


def check_document_order(spec: RunSpec, split: HeldOutSplit, labels, split_path=None) -> None:
    """Refuse SAME or online VB on training documents grouped by label (``labels``: their
    label codes in training order) in an order nobody asked for: the spec's
    ``document_order`` "stored", the corpus not kept in file order on purpose
    (``shuffle: false``), SAME's own ``shuffle`` off.

    Raises
    ------
    ValueError
        One line naming the split, the corpus, the longest grouped run and the remedy.
    """
    if (spec.method not in ORDER_SENSITIVE or labels is None or spec.document_order != "stored"
            or split.order == "file:on_purpose"
            or (spec.method == "same" and spec.params.get("shuffle"))):
        return
    run = grouped_run(labels)
    if run is None:
        return
    name = split.corpus
    where = f"{split_path}: " if split_path else ""
    raise ValueError(f"{where}the training documents of corpus {name!r} are grouped by label "
                     f"(longest run: {run.describe(split.label_names)}); SAME and online VB "
                     "learn in this order: rebuild the corpus with shuffle: true (the default) "
                     f"or set corpora.{name}.shuffle: false to keep file order on purpose")


def settings_sha256(settings: dict) -> str:
    """SHA-256 of a run's settings (meta.json's ``settings``, as written), stored in its
    model.npz so that a model and a meta.json of two different runs cannot pass as one."""
    return json_sha256(json.loads(json.dumps(settings, default=str)))


def _meta(spec, used, split, split_path, parent, dataset, label, rows, pools, trace,
          wall_seconds) -> dict:
    """meta.json of a run: its settings, split (``parent``: the split file's checksum and test
    fraction; ``split`` what was trained and scored on), threads, evaluator, provenance,
    trace seal."""
    from same.model.kernels.cpu import set_threads

    split_sha, test_fraction = parent
    return provenance({
        "artefact": RUN_KIND,
        "dataset": dataset or split.corpus,
        "label": label,
        "settings": asdict(spec),
        "split": {"path": split_path, "sha256": split_sha,
                  "train_fraction": spec.train_fraction,
                  "validation_fraction": spec.validation_fraction,
                  "scored_on": "validation documents" if spec.validation_fraction is not None
                  else "test documents",
                  "scored_sha256": split.checksum(),
                  "scored_docs_sha256": _docs_sha256(split.test_docs), "corpus": split.corpus,
                  "seed": split.seed, "test_fraction": test_fraction,
                  "vocab_sha256": split.vocab_sha256, "n_train_docs": int(split.train.shape[0]),
                  "n_words": int(split.train.shape[1]),
                  "n_train_tokens": int(round(float(split.train.sum()))),
                  "n_test_docs": int(split.test_observed.shape[0])},
        "threads": {"requested": spec.threads, "used": used.threads, "numba": set_threads(None),
                    "threadpools": pools,
                    "tomotopy_workers": used.threads if spec.method == "cgs" else None},
        "evaluator": {"fold_in_iters": FOLD_IN_ITERS, "bidmach_inner": BIDMACH_INNER,
                      "l2r_particles": L2R_PARTICLES, "l2r_seed": L2R_SEED},
        "wall_seconds": wall_seconds,
        "final": rows[-1] if rows else None,
        "trace_sha256": hashlib.sha256(trace.encode()).hexdigest(),
    })


def _docs_sha256(docs) -> str:
    """SHA-256 of the scored documents' rows in the source corpus (int64): equal for two
    runs scored on the same documents, different for validation and test documents."""
    return hashlib.sha256(np.ascontiguousarray(docs, dtype=np.int64).tobytes()).hexdigest()


class ModelIntegrityError(ArtefactError):
    """A model.npz is unreadable, fails its seal, or holds malformed arrays."""


_MODEL_KEYS = ("topic_word", "doc_topic_prior", "topic_word_prior", "vocab_sha256",
               "split_sha256", "method", "trace_sha256", "settings_sha256")
_MODEL_REMEDY = "rerun the fit that wrote it"


def load_model(path: str | os.PathLike) -> dict:
    """Read a runner ``model.npz``, checked: its seal, φ (K, W) finite, ≥ 0 with positive
    rows, priors positive and finite.

    Returns
    -------
    dict: topic_word (K, W) float64, rows renormalised; doc_topic_prior, topic_word_prior
    (float); vocab_sha256, split_sha256 (the content checksum of the split it was trained
    on), method, trace_sha256 and settings_sha256 (of the run that wrote it: its trace.csv
    and meta.json's settings) (str).

    Raises
    ------
    FileNotFoundError
        No such file.
    ModelIntegrityError
        Unsealed or seal mismatch (changed, truncated, or written by an older same-lda),
        unreadable, keys missing, or malformed arrays: one line naming the file.
    """
    path = Path(path)
    with remedied(_MODEL_REMEDY, ModelIntegrityError):
        z = open_npz(path, "model file", _MODEL_REMEDY, _MODEL_KEYS)
        phi = check_array(z["topic_word"], "topic_word", str(path), ndim=2, kind="f")
        if phi.size == 0 or not (phi.sum(axis=1) > 0).all():
            raise ArtefactError(f"{path}: topic_word of shape {phi.shape} has an empty or "
                                "all-zero topic")
        priors = {k: check_array(z[k], k, str(path), ndim=0, kind="f")
                  for k in ("doc_topic_prior", "topic_word_prior")}
        if not all(float(v) > 0 for v in priors.values()):
            raise ArtefactError(f"{path}: priors must be > 0, got "
                                f"{', '.join(f'{k}={float(v)}' for k, v in priors.items())}")
        text = {k: str(check_array(z[k], k, str(path), ndim=0, kind="U"))
                for k in ("vocab_sha256", "split_sha256", "method", "trace_sha256",
                          "settings_sha256")}
    phi = phi.astype(np.float64)
    return {"topic_word": phi / phi.sum(axis=1, keepdims=True),
            **{k: float(v) for k, v in priors.items()}, **text}


def score_model(model_path: str | os.PathLike, split: HeldOutSplit | str | os.PathLike, *,
                allow_other_split: bool = False):
    """Score a saved model on a split with the shared evaluator.

    ``allow_other_split``: score on a split other than the one the model was trained on
    (same vocabulary), whose test documents may then be the model's training documents.

    Raises
    ------
    ValueError
        The model was trained on another vocabulary than the split's, or (unless
        ``allow_other_split``) on another split.
    """
    if not isinstance(split, HeldOutSplit):
        split = load_split(split)
    model = load_model(model_path)
    if model["vocab_sha256"] != split.vocab_sha256:
        raise ValueError(f"{model_path}: model vocabulary (sha256 {model['vocab_sha256'][:12]}…) "
                         f"does not match the split's ({split.vocab_sha256[:12]}…, corpus "
                         f"{split.corpus!r})")
    if model["topic_word"].shape[1] != split.n_words:
        raise ValueError(f"{model_path}: model has {model['topic_word'].shape[1]} words, the "
                         f"split {split.n_words}")
    split_sha = split.checksum()
    if model["split_sha256"] != split_sha and not allow_other_split:
        raise ValueError(f"{model_path}: trained on another split (sha256 "
                         f"{model['split_sha256'][:12]}…) than this one ({split_sha[:12]}…, "
                         f"seed {split.seed}): its test documents may be the model's training "
                         "documents; pass --allow-other-split to score anyway")
    return evaluate(model["topic_word"], model["doc_topic_prior"], split)
