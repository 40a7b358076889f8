"""A run's output folder: what counts as ours, writing it without touching anything else, and
reading its trace back checked.

``same-lda fit --out DIR`` (:func:`same.runner.run`) writes :data:`OUTPUT_FILES` into a
temporary folder ``.DIR.tmp*`` beside ``DIR`` and renames it to ``DIR`` when complete, so a
killed run leaves no partial output.  What it may replace, and what it refuses:

- ``DIR`` may be absent, empty, or a previous output of ours: only :data:`OUTPUT_FILES`, with
  a meta.json that a fit wrote (:func:`is_run_meta`).  A folder holding anything else, the
  working folder or one holding it, a folder holding an input (the split), a file or a
  symbolic link is refused with one line (:class:`RunDirError`), before any training.
- Each writer holds a lock (``flock``) on its own temporary folder for its whole life.  A
  later writer removes only temporary folders whose lock is free (their writer died, e.g.
  SIGKILL) and which hold nothing but our files; a live writer's is never touched.
- The last step (removing the previous output's files, one by one, and the rename) runs
  under a lock on the parent folder, so two writers to one ``DIR`` never interleave it: the
  last to finish wins, each output complete.

meta.json records the SHA-256 of trace.csv (``trace_sha256``); :func:`check_trace` refuses a
trace that does not match it, is shorter than its run's checkpoints, or holds a non-finite ll.
"""

from __future__ import annotations

import csv
import fcntl
import hashlib
import io
import json
import math
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

__all__ = ["OUTPUT_FILES", "TRACE_COLUMNS", "RUN_KIND", "RunDirError", "check_out_dir",
           "writing_run_dir", "is_run_meta", "read_meta", "check_trace", "trace_text"]

#: What a fit writes into its output folder, and nothing else.
OUTPUT_FILES = ("trace.csv", "model.npz", "meta.json")
#: Columns of trace.csv, in order.
TRACE_COLUMNS = ("method", "label", "pass", "iteration", "tokens_seen", "samples_per_word",
                 "train_seconds", "ll", "perplexity", "ll_bidmach", "eval_seconds",
                 "native_score", "compile_seconds")
#: ``meta.json["artefact"]`` of a fit's output folder.
RUN_KIND = "same-lda fit output"
_REMEDY = "rerun the fit that wrote it"


class RunDirError(ValueError):
    """An output folder we may not write, or a run folder whose files fail their checks."""


def is_run_meta(meta) -> bool:
    """Whether a parsed meta.json is one a fit wrote (its ``artefact`` marker, or the keys
    of outputs written before the marker existed)."""
    return isinstance(meta, dict) and (meta.get("artefact") == RUN_KIND or {
        "settings", "split", "evaluator"} <= set(meta))


def read_meta(run_dir: str | os.PathLike) -> dict:
    """meta.json of a run folder, parsed and recognised as a fit's.

    Raises
    ------
    RunDirError
        Missing, not JSON, or not a fit's meta.json (one line naming it).
    """
    path = Path(run_dir) / "meta.json"
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunDirError(f"{path}: no such file; {_REMEDY}") from None
    except (OSError, ValueError) as exc:  # UnicodeDecodeError and JSONDecodeError included
        raise RunDirError(f"{path}: unreadable ({type(exc).__name__}: {exc}); {_REMEDY}") from None
    if not is_run_meta(meta):
        raise RunDirError(f"{path}: not the meta.json of a same-lda fit; {_REMEDY}")
    return meta


def _ours(entry: str) -> bool:
    """An entry a fit may leave in its output or temporary folder (atomic_write's temporaries
    of our files included)."""
    return entry in OUTPUT_FILES or any(
        entry.startswith(f".{f}.") and entry.endswith(".tmp") for f in OUTPUT_FILES)


def check_out_dir(out_dir: str | os.PathLike, inputs=()) -> None:
    """Refuse an output folder a fit may not replace (see the module's rules).

    Raises
    ------
    RunDirError
        One line naming the folder and why.
    """
    out = Path(out_dir)
    where = f"--out {out}"
    if out.is_symlink():
        raise RunDirError(f"{where}: is a symbolic link; give a folder")
    resolved = out.resolve()
    cwd = Path.cwd().resolve()
    if resolved == cwd or resolved in cwd.parents:
        raise RunDirError(f"{where}: is the working folder or holds it; give a new folder for "
                          "this run's outputs")
    for inp in inputs:
        if inp is not None and resolved in Path(inp).resolve().parents:
            raise RunDirError(f"{where}: holds the input {inp}; give a new folder for this "
                              "run's outputs")
    if not out.exists():
        return
    if not out.is_dir():
        raise RunDirError(f"{where}: is a file, not a folder")
    entries = sorted(p.name for p in out.iterdir())
    foreign = [e for e in entries if e not in OUTPUT_FILES]
    if foreign:
        raise RunDirError(f"{where}: holds files same-lda did not write ({', '.join(foreign[:3])}"
                          f"{', …' if len(foreign) > 3 else ''}); give a new or empty folder")
    if entries:
        try:
            read_meta(out)
        except RunDirError:
            raise RunDirError(f"{where}: holds {', '.join(entries)} but no meta.json of a "
                              "same-lda fit; give a new or empty folder") from None


@contextmanager
def _flock(path: Path, blocking: bool = True):
    """An exclusive ``flock`` on a folder; yields False (and holds nothing) if ``blocking`` is
    False and another process holds it."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # releases the lock


def _remove_dead_temporaries(out: Path) -> None:
    """Remove ``.<name>.tmp*`` folders of ``out`` whose writer died (lock free) and which hold
    only our files."""
    for tmp in out.parent.glob(f".{out.name}.tmp*"):
        if tmp.is_symlink() or not tmp.is_dir():
            continue
        with _flock(tmp, blocking=False) as free:
            if free and all(_ours(p.name) for p in tmp.iterdir()):
                shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def writing_run_dir(out_dir: str | os.PathLike, inputs=()):
    """Yield a fresh, locked temporary folder; on normal exit it becomes ``out_dir``.

    ``out_dir`` is checked (:func:`check_out_dir`) before and again, under the parent's lock,
    just before the previous output's files are removed and the folder renamed.  On an
    exception (SIGTERM and Ctrl-C included) the temporary folder is removed and ``out_dir`` is
    untouched.

    Raises
    ------
    RunDirError
        ``out_dir`` may not be written (see :func:`check_out_dir`).
    OSError
        The parent cannot be created or written (one line from the CLI).
    """
    out = Path(out_dir)
    check_out_dir(out, inputs)
    out.parent.mkdir(parents=True, exist_ok=True)
    with _flock(out.parent):
        _remove_dead_temporaries(out)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp", dir=out.parent))
        lock = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(lock, fcntl.LOCK_EX)  # held until this writer is done or dead
    try:
        yield tmp
        os.chmod(tmp, 0o755)
        with _flock(out.parent):
            check_out_dir(out, inputs)
            if out.exists():
                for name in OUTPUT_FILES:
                    (out / name).unlink(missing_ok=True)
                out.rmdir()
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        os.close(lock)


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
    matches; the header is :data:`TRACE_COLUMNS`; the passes are exactly the checkpoints the
    run's settings imply (:func:`same.methods.eval_points` of its budget, or the budget alone
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
    if not rows or tuple(rows[0]) != TRACE_COLUMNS:
        raise RunDirError(f"{path}: header is not {','.join(TRACE_COLUMNS)}; {_REMEDY}")
    settings = meta.get("settings") or {}
    try:
        budget = int(settings["budget"])
        want = [budget] if settings.get("checkpoints") == "final" else eval_points(budget)
        col = {c: i for i, c in enumerate(TRACE_COLUMNS)}
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
