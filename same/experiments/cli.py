"""The ``same-lda`` command line (also ``python -m same``): split, fit, score.

    same-lda split --dataset kos --out results/kos/split.npz
    same-lda synthesize --name scale --spec '{"like": "nytimes", "fraction": 0.0625,
        "n_topics": 256}' --out results/scale/corpus.npz
    same-lda split --corpus results/scale/corpus.npz --out results/scale/split.npz
    same-lda fit --spec '{"method": "same", "n_components": 64, "doc_topic_prior": 0.1,
        "topic_word_prior": 0.1, "seed": 0, "budget": 20, "params": {"n_copies": 100}}' \\
        --split results/kos/split.npz --out results/kos/same/K64/seed0
    same-lda fit --spec ... --tuning results/kos/tuning.json ...   # the tuned configuration
    same-lda score --model results/kos/same/K64/seed0/model.npz --split results/kos/split.npz
    same-lda check results/kos/split.npz results/kos/same/K64/seed0

A user's mistake (unknown corpus, bad spec, missing or corrupt file) ends in one
line on stderr naming what was wrong, and exit status 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import signal
import sys
from pathlib import Path

from same.io.cli import ArgumentParser, real_number, whole_number

__all__ = ["main", "build_parser"]

PROG = "same-lda"


class _Formatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    pass


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The argument parser (every option has help and shows its default)."""
    from same.data.corpus import REGISTRY

    from .spec import METHODS, RunSpec

    ap = ArgumentParser(prog=prog, description=__doc__, formatter_class=_Formatter)
    sub = ap.add_subparsers(dest="command", required=True,
                            metavar="{split,synthesize,fit,score,check}")

    sp_ = sub.add_parser("split", help="make the held-out split artifact of a corpus",
                         formatter_class=_Formatter)
    src = sp_.add_mutually_exclusive_group(required=True)
    src.add_argument("--dataset", choices=sorted(REGISTRY), help="UCI bag-of-words corpus")
    src.add_argument("--corpus", help="synthetic corpus (.npz) made by `synthesize`")
    src.add_argument("--corpus-spec", metavar="JSON",
                     help="a corpus named by its files (a `corpora:` entry of the workflow's "
                          "config, same.data.textcorpus): source uci, folder, csv, jsonl or "
                          "20newsgroups, its keys and vectorizer settings")
    sp_.add_argument("--name", default=None,
                     help="the corpus's name with --corpus-spec (names its settings in errors)")
    sp_.add_argument("--test-fraction", type=real_number(0, 1, low_open=True, high_open=True),
                     default=0.1,
                     help="fraction of documents held out for document completion")
    sp_.add_argument("--seed", type=whole_number(0), default=0, help="seed of the split")
    sp_.add_argument("--data-dir", default=None,
                     help="extra read-only directory holding the UCI files (before the cache)")
    sp_.add_argument("--out", required=True, help="path of the split artifact (.npz)")

    syn = sub.add_parser("synthesize", help="draw a synthetic LDA corpus of a UCI corpus's "
                         "shape, with its true topics (.npz)", formatter_class=_Formatter)
    syn.add_argument("--name", required=True, help="dataset name (labels the split and runs)")
    syn.add_argument("--spec", required=True,
                     help="JSON: like, fraction, n_topics[, doc_topic_prior, "
                          "topic_word_concentration, zipf_exponent, length_shape, seed]")
    syn.add_argument("--out", required=True, help="path of the corpus file (.npz)")

    fit = sub.add_parser("fit", help="train one method and write its trace, model and meta",
                         formatter_class=_Formatter)
    fit.add_argument("--spec", required=True,
                     help="run spec as JSON, or @path to a JSON file; fields: "
                          + ", ".join(f.name for f in dataclasses.fields(RunSpec))
                          + " (method: " + ", ".join(METHODS) + ")")
    fit.add_argument("--split", required=True, help="split artifact made by `split`")
    fit.add_argument("--out", required=True, help="output directory (written atomically)")
    fit.add_argument("--tuning", default=None,
                     help="tuning.json written by the workflow's tuning rule: the spec's method "
                          "takes the settings chosen on validation documents (over its params)")
    fit.add_argument("--no-progress", action="store_true", help="no progress bar")

    sc = sub.add_parser("score", help="score a saved model.npz on a split (JSON on stdout)",
                        formatter_class=_Formatter)
    sc.add_argument("--model", required=True, help="model.npz written by `fit`")
    sc.add_argument("--split", required=True, help="split artifact made by `split`")
    sc.add_argument("--allow-other-split", action="store_true",
                    help="score on a split other than the model's training split (same "
                         "vocabulary): its test documents may be training documents of the model")
    ck = sub.add_parser("check", help="verify artefacts (split, model, synthetic corpus, parsed "
                        "cache, run folder or trace.csv) without using them: one JSON line each",
                        formatter_class=_Formatter)
    ck.add_argument("paths", nargs="+", metavar="PATH",
                    help="a .npz written by same-lda, a run folder, or a run's trace.csv")
    return ap


def _read_spec(text: str):
    """The run spec of ``fit --spec`` (JSON, or ``@path`` of a UTF-8 JSON file), validated,
    its backend checked on this machine (:func:`same.model.backend.check_backend`) before the
    split is read.

    Raises
    ------
    OSError
        ``spec file <path>: <why>`` (missing, a folder, unreadable).
    ValueError
        ``spec file <path>: not UTF-8 text ...``, or the spec refused
        (:meth:`same.experiments.spec.RunSpec.from_json`).
    same.model.backend.BackendUnavailableError
        ``backend='cupy' needs CuPy ...`` or ``... a CUDA device ...``.
    """
    from same.model.backend import check_backend

    from .spec import RunSpec

    source = "--spec"
    if text.startswith("@"):
        from same.io.textinput import read_utf8

        path = Path(text[1:])
        text = read_utf8(path, "spec file")
        source = str(path)
    spec = RunSpec.from_json(text, source=source)
    check_backend(spec.backend)
    return spec


#: The options that name a file or folder (``dest`` names): an empty one is refused, never
#: read as the working folder or as "not given".
_PATH_OPTIONS = ("corpus", "data_dir", "out", "split", "model", "tuning", "paths")


def _check_paths_given(args) -> None:
    """Refuse an empty path option (``--corpus ''`` fell through to ``--dataset``)."""
    for dest in _PATH_OPTIONS:
        values = getattr(args, dest, None)
        for value in values if isinstance(values, list) else [values]:
            if value == "":
                option = "PATH" if dest == "paths" else "--" + dest.replace("_", "-")
                raise ValueError(f"{option}: an empty path; give the path of a file or folder")


def _json_option(text: str, option: str):
    """The JSON an option gives (a key given twice refused), or one line naming it."""
    from same.io.textinput import loads_json

    try:
        return loads_json(text, option)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{option}: not JSON ({exc})") from None


def _split(args) -> None:
    """``same-lda split``: a UCI dataset, a synthetic corpus file or a corpus spec, split."""
    from same.data import corpus
    from same.data.split import make_split
    from same.io.outputs import check_target, npz_kind

    spec = None
    if args.name is not None:
        from same.data.registry import check_own_name

        if args.corpus_spec is None:
            raise ValueError("--name: applies only with --corpus-spec (a dataset or a "
                             "synthetic corpus file names itself)")
        check_own_name(args.name, "--name", "corpus")
    if args.corpus_spec is not None:
        spec = _json_option(args.corpus_spec, "--corpus-spec")
    inputs = [args.corpus] + ([spec.get(k) for k in ("path", "docword", "vocab")]
                              if isinstance(spec, dict) else [])
    check_target(args.out, npz_kind("split"), inputs, option="--out")  # before work
    if spec is not None:
        from same.data.corpusspec import check_outside_corpus

        check_outside_corpus(spec, args.out, "--out")
    if args.corpus is not None:
        from same.data.planted import load_synthetic

        data = load_synthetic(args.corpus)[0]
    elif args.corpus_spec is not None:
        from same.data.order import order_description
        from same.data.textcorpus import load_corpus

        name = "corpus" if args.name is None else args.name
        data = load_corpus(name, spec, args.data_dir)
        dropped = data.meta.get("n_dropped_empty", 0)
        if dropped:  # drop_empty's work, said where a user looks (and kept in the split)
            print(f"note: {dropped} of {data.n_docs + dropped} documents left with no word "
                  f"by the settings were dropped (corpora.{name}.vectorizer.drop_empty)",
                  file=sys.stderr)
        print(json.dumps({"corpus": args.name, "n_docs": data.n_docs,
                          "n_words": data.n_words, "nnz": data.nnz,
                          "n_tokens": data.n_tokens,
                          "n_dropped_empty": data.meta.get("n_dropped_empty", 0),
                          "order": order_description(data)}))
    else:
        data = corpus.load(args.dataset, args.data_dir)
    digest = make_split(data, args.test_fraction, args.seed).save(
        args.out, inputs=inputs, option="--out")
    print(json.dumps({"split": args.out, "sha256": digest}))


def _run(args) -> None:
    from same.io.outputs import check_target, npz_kind

    _check_paths_given(args)
    if args.command == "split":
        _split(args)
    elif args.command == "synthesize":
        from same.data.planted import save_synthetic, synthetic_corpus

        check_target(args.out, npz_kind("synthetic corpus"), option="--out")
        spec = _json_option(args.spec, "--spec")
        syn = synthetic_corpus(args.name, spec)
        save_synthetic(args.out, syn, args.name, spec, option="--out")
        X = syn.counts
        print(json.dumps({"corpus": args.out, "n_docs": X.shape[0], "n_words": X.shape[1],
                          "nnz": int(X.nnz), "n_tokens": int(X.sum())}))
    elif args.command == "fit":
        from .rundir import check_out_dir
        from .runner import run

        spec_file = args.spec[1:] if args.spec.startswith("@") else None
        check_out_dir(args.out, [args.split, args.tuning, spec_file])  # before any training
        spec = _read_spec(args.spec)
        print(run(spec, args.split, args.out, progress=not args.no_progress,
                  tuning=args.tuning))
    elif args.command == "check":
        from .verify_artefacts import check_artefact

        for path in args.paths:
            print(json.dumps({"path": path, "artefact": check_artefact(path), "ok": True}))
    else:
        from .runner import score_model

        print(json.dumps(score_model(args.model, args.split,
                                     allow_other_split=args.allow_other_split).as_dict()))


#: What ends in ``same-lda: error: <one line>``, exit status 2: a user's input or machine, never
#: our code.  ValueError (and its subclasses: bad spec, option, file content, duplicate key,
#: corrupt artefact, refused output), OSError (a missing, unreadable or unwritable file, a
#: full disk), MemoryError (the fit's memory bound), OverflowError (a number too large for
#: what it feeds: numpy or numba refuse it, far from our checks) and BackendUnavailableError
#: (the spec's backend does not run here).  Anything else (TypeError, KeyError, a RuntimeError
#: other than the backend's, ...) is a bug: its traceback is printed, exit status 1.
_USER_ERRORS = (ValueError, OSError, MemoryError, OverflowError)


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """Run the command line; returns the exit status: 2 for a user's mistake (one line on
    stderr, :data:`_USER_ERRORS` and :class:`same.model.backend.BackendUnavailableError`), 130 / 143
    when stopped by SIGINT / SIGTERM; a bug's exception propagates with its traceback."""
    # SIGTERM (a scheduler's kill, Snakemake's cancel) and SIGINT (Ctrl-C) unwind, so a run
    # being written removes its temporary directory, and end in one line (exit 143 / 130), not
    # a traceback; SIGKILL leaves the temporary directory, and the next run of the same output
    # removes it (same.experiments.rundir). Handled from main's first line: the imports below
    # (NumPy, SciPy, numba, scikit-learn: the command's first half second or more) included.
    _received.clear()
    before = {sig: signal.signal(sig, _terminate) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        args = build_parser(prog).parse_args(argv)
        _run(args)
    except BaseException as exc:
        if _received:  # terminated: whatever the SystemExit became on its way up (below)
            print(f"{prog}: stopped by {signal.Signals(_received[0]).name}", file=sys.stderr)
            return 128 + _received[0]
        if isinstance(exc, (SystemExit, KeyboardInterrupt)):  # argparse's own exits
            raise
        from same.model.backend import BackendUnavailableError

        if isinstance(exc, (*_USER_ERRORS, BackendUnavailableError)):
            msg = " ".join(str(exc).split()) or type(exc).__name__
            print(f"{prog}: error: {msg}", file=sys.stderr)
            return 2
        raise
    finally:  # a caller's own handlers back (main called in-process, e.g. from a test)
        for sig, handler in before.items():
            signal.signal(sig, handler)
    return 0


_received: list[int] = []  # the signal that asked this process to stop, once received


def _terminate(signum, frame):
    """SIGTERM and SIGINT handler: unwind (``finally`` and ``except BaseException`` cleanups run).

    The SystemExit is raised wherever the main thread is, which may be a Python callback of
    compiled code: numba then reports ``SystemError: ... returned a result with an exception
    set`` instead, so :func:`main` keys the exit status on the signal received, not on the
    exception's type. A second signal while unwinding is only recorded, so it cannot cut a
    cleanup short.
    """
    if _received:
        return
    _received.append(signum)
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(main())
