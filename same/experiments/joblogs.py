"""What a failed workflow job said, brought to the console (the Snakefile's ``onerror``).

Each job of the workflow writes its output to its own log (``results/logs/<rule>/...``), so
that the console is not flooded; a job that fails for bad input ends its log with our one
line (``<prog>: error: <file, key or parameter>: ...``, :mod:`same.io.cli`), which Snakemake
alone would only point at ("check log file(s) for error details").  :func:`job_errors` finds
those lines in the logs this run wrote, so the user reads them where they look.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["job_errors", "ERROR_MARK"]

#: What every one-line refusal of ours carries (``<prog>: error: ...``, :mod:`same.io.cli`).
ERROR_MARK = ": error: "
#: Bytes read from the end of a log (its last line is all that is wanted).
_TAIL = 1 << 16


def _last_line(path: Path) -> str:
    """The last non-empty line of a text file ('' when unreadable or empty)."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - _TAIL))
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    return next((ln.strip() for ln in reversed(lines) if ln.strip()), "")


def job_errors(log_root: str | os.PathLike, since: float) -> list[str]:
    """"<log>: <its one-line error>" for every log under ``log_root`` written at or after
    ``since`` (seconds since the epoch: this run's start) whose last line is one of our
    one-line refusals, oldest first; logs of jobs that failed otherwise (a traceback, a
    signal) are left to Snakemake's own report, which names them."""
    root = Path(log_root)
    if not root.is_dir():
        return []
    found = []
    for path in root.rglob("*.log"):
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if mtime >= since and ERROR_MARK in (line := _last_line(path)):
            found.append((mtime, f"{path}: {line}"))
    return [text for _, text in sorted(found)]
