"""A run's output folder: what counts as ours, writing it without touching anything else, and
reading its trace back checked.

``same-lda fit --out DIR`` (:func:`same.experiments.runner.run`) writes :data:`OUTPUT_FILES` into a
temporary folder beside ``DIR`` and puts it at ``DIR`` by one rename when complete, by the
write discipline of every output (:mod:`same.io.outputs`: temporaries, locks between writers,
the rename).  What counts as an earlier output of a fit, which it may replace:

- ``DIR`` may be absent, empty, or a previous output of ours: only :data:`OUTPUT_FILES`, each
  a regular file, with a meta.json that a fit wrote (:func:`is_run_meta`).  A folder holding
  anything else, the working folder or one holding it, a folder holding an input (the split),
  a file or a symbolic link is refused with one line (:class:`RunDirError`), before any
  training.

meta.json records the SHA-256 of trace.csv (``trace_sha256``); :func:`check_trace` refuses a
trace that does not match it, is shorter than its run's checkpoints, or holds a non-finite ll.
A trace written before the left-to-right column ``ll_l2r`` existed (header
:data:`LEGACY_TRACE_COLUMNS`) is still accepted: it is sealed and complete, it only lacks
that measure.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
from pathlib import Path

from same.io.outputs import Kind, check_target, is_temporary_of, writing_folder

__all__ = ["OUTPUT_FILES", "TRACE_COLUMNS", "LEGACY_TRACE_COLUMNS", "RUN_KIND", "RunDirError",
           "check_out_dir", "writing_run_dir", "is_run_meta", "read_meta", "check_trace",
           "trace_text", "json_sha256", "seal_meta", "META_SEAL"]

#: What a fit writes into its output folder, and nothing else.
OUTPUT_FILES = ("trace.csv", "model.npz", "meta.json")
#: Columns of trace.csv, in order.
TRACE_COLUMNS = ("method", "label", "pass", "iteration", "tokens_seen", "samples_per_word",
                 "train_seconds", "ll", "perplexity", "ll_bidmach", "ll_l2r", "eval_seconds",
                 "native_score", "compile_seconds")
#: Columns of a trace.csv written before ``ll_l2r`` (left-to-right) was added: still read.
LEGACY_TRACE_COLUMNS = tuple(c for c in TRACE_COLUMNS if c != "ll_l2r")
#: ``meta.json["artefact"]`` of a fit's output folder.
RUN_KIND = "same-lda fit output"
#: meta.json's key holding the SHA-256 of the rest of its content (:func:`seal_meta`).
META_SEAL = "meta_sha256"
_REMEDY = "rerun the fit that wrote it"


class RunDirError(ValueError):
    """An output folder we may not write, or a run folder whose files fail their checks."""


def is_run_meta(meta) -> bool:
    """Whether a parsed meta.json is one a fit wrote (its ``artefact`` marker, or the keys
    of outputs written before the marker existed)."""
    return isinstance(meta, dict) and (meta.get("artefact") == RUN_KIND or {
        "settings", "split", "evaluator"} <= set(meta))


def json_sha256(body) -> str:
    """SHA-256 (hex) of a JSON value's canonical text (keys sorted): the seal of meta.json
    (``meta_sha256``) and of tuning.json (``sha256``)."""
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def seal_meta(meta: dict) -> dict:
    """``meta`` as written (a JSON round trip) with ``meta_sha256``, the seal of the rest."""
    body = json.loads(json.dumps(meta, default=str))
    body.pop(META_SEAL, None)
    return {**body, META_SEAL: json_sha256(body)}


def read_meta(run_dir: str | os.PathLike, *, sealed: bool = True) -> dict:
    """meta.json of a run folder, parsed, recognised as a fit's and (``sealed``) checked
    against its seal ``meta_sha256``, so an edited method, K or m is refused.

    Raises
    ------
    RunDirError
        Missing, not JSON, not a fit's meta.json, unsealed or not matching its seal (one line
        naming it).
    """
    path = Path(run_dir) / "meta.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunDirError(f"{path}: no such file; {_REMEDY}") from None
    except (OSError, ValueError, RecursionError) as exc:  # JSONDecodeError, nested too deeply
        raise RunDirError(f"{path}: unreadable ({type(exc).__name__}: {exc}); {_REMEDY}") from None
    if not is_run_meta(meta):
        raise RunDirError(f"{path}: not the meta.json of a same-lda fit; {_REMEDY}")
    if sealed and META_SEAL not in meta:
        raise RunDirError(f"{path}: records no {META_SEAL} (written before meta.json was "
                          f"sealed); {_REMEDY}")
    if sealed and meta[META_SEAL] != json_sha256(
            {k: v for k, v in meta.items() if k != META_SEAL}):
        raise RunDirError(f"{path}: does not match its {META_SEAL} (edited or damaged since the "
                          f"fit wrote it); {_REMEDY}")
    return meta


def _ours(entry: str) -> bool:
    """An entry a fit may leave in its output or temporary folder (the temporaries of
    :func:`same.io.outputs.write_file` of our files included)."""
    return entry in OUTPUT_FILES or any(is_temporary_of(entry, f) for f in OUTPUT_FILES)


def _refusal(out: Path) -> str | None:
    """Why the existing folder ``out`` is not an earlier output of a fit (None: it is, or
    it is empty)."""
    entries = sorted(os.scandir(out), key=lambda e: e.name)
    foreign = [e.name for e in entries if e.name not in OUTPUT_FILES]
    if foreign:
        return (f"holds files same-lda did not write ({', '.join(foreign[:3])}"
                f"{', …' if len(foreign) > 3 else ''}); give a new or empty folder")
    odd = [e.name for e in entries if not e.is_file(follow_symlinks=False)]
    if odd:
        return (f"holds {', '.join(odd)}, not a file as same-lda writes it (a folder or a "
                "link); give a new or empty folder")
    if entries:
        try:
            read_meta(out, sealed=False)
        except RunDirError:
            return (f"holds {', '.join(e.name for e in entries)} but no meta.json of a "
                    "same-lda fit; give a new or empty folder")
    return None


#: A fit's output folder as :mod:`same.io.outputs` writes it.
RUN_OUTPUT = Kind("output folder of a same-lda fit", refusal=_refusal, entry_ours=_ours,
                  fresh="give a new folder for this run's outputs", error=RunDirError)


def check_out_dir(out_dir: str | os.PathLike, inputs=()) -> None:
    """Refuse an output folder a fit may not replace (see the module's rules), naming it as
    ``--out``.

    Raises
    ------
    RunDirError
        One line naming the folder and why.
    """
    check_target(out_dir, RUN_OUTPUT, inputs, option="--out")


def writing_run_dir(out_dir: str | os.PathLike, inputs=()):
    """Context manager: a fresh, locked temporary folder that replaces ``out_dir`` by one
    rename on normal exit (:func:`same.io.outputs.writing_folder`); on an exception (SIGTERM and
    Ctrl-C included) it is removed and ``out_dir`` is untouched.

    Raises
    ------
    RunDirError
        ``out_dir`` may not be written (see :func:`check_out_dir`), before and again just
        before the rename.
    OSError
        The parent cannot be created or written (one line from the CLI).
    """
    return writing_folder(out_dir, RUN_OUTPUT, inputs, option="--out")


def trace_text(rows) -> str:
    """trace.csv's text for ``rows`` (dicts keyed by :data:`TRACE_COLUMNS`; None → empty)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=TRACE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in TRACE_COLUMNS})
    return buf.getvalue()


def check_trace(trace_path: str | os.PathLike) -> tuple[dict, str]:
    """Check a run's trace.csv against its meta.json before any report reads it; returns
    (meta, the trace's text), so the reader parses what was checked without reading again.

    Checked: meta.json is a fit's (:func:`read_meta`) and records the trace's SHA-256, which
    matches; the header is :data:`TRACE_COLUMNS` (or :data:`LEGACY_TRACE_COLUMNS`, a trace
    written before ``ll_l2r`` existed); the passes are exactly the checkpoints the
    run's settings imply (:func:`same.experiments.methods.eval_points` of its budget, or the budget alone
    for ``checkpoints: final``): a trace cut short is refused, not read as a finished run;
    every ``ll`` is finite.

    Raises
    ------
    RunDirError
        One line naming the file and the fault, ending in what fixes it (rerun the fit).
    """
    from .methods import eval_points

    path = Path(trace_path)
    meta = read_meta(path.parent)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RunDirError(f"{path}: {exc.strerror}; {_REMEDY}") from None
    if "trace_sha256" not in meta:
        raise RunDirError(f"{path}: its meta.json records no trace_sha256 (written before "
                          f"traces were checked); {_REMEDY}")
    if hashlib.sha256(raw).hexdigest() != meta["trace_sha256"]:
        raise RunDirError(f"{path}: does not match the SHA-256 its meta.json records (changed "
                          f"or damaged since the fit wrote it); {_REMEDY}")
    text = raw.decode("utf-8", errors="replace")  # any damage then fails the checks below
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or tuple(rows[0]) not in (TRACE_COLUMNS, LEGACY_TRACE_COLUMNS):
        raise RunDirError(f"{path}: header is not {','.join(TRACE_COLUMNS)}; {_REMEDY}")
    header = tuple(rows[0])
    settings = meta.get("settings") or {}
    try:
        budget = int(settings["budget"])
        want = [budget] if settings.get("checkpoints") == "final" else eval_points(budget)
        col = {c: i for i, c in enumerate(header)}
        passes = [int(r[col["pass"]]) for r in rows[1:]]
        lls = [float(r[col["ll"]]) for r in rows[1:]]
    except (KeyError, ValueError, IndexError, TypeError) as exc:
        raise RunDirError(f"{path}: unreadable trace or settings ({type(exc).__name__}: {exc}); "
                          f"{_REMEDY}") from None
    if passes != want:
        raise RunDirError(f"{path}: holds checkpoints {_span(passes)} but a run of budget "
                          f"{budget} writes {_span(want)}; {_REMEDY}")
    bad = [p for p, ll in zip(passes, lls) if not math.isfinite(ll)]
    if bad:
        raise RunDirError(f"{path}: ll is not finite at pass {bad[0]}; {_REMEDY}")
    return meta, text


def _span(points: list[int]) -> str:
    return "none" if not points else f"{len(points)} ({points[0]}..{points[-1]})"
