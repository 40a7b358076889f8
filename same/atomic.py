"""Atomic file writes: a temporary file beside the target, renamed into place when complete."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write"]


def atomic_write(path: Path, write) -> None:
    """Call ``write(file_object)`` on a temporary file beside ``path``, then rename it.

    The file object is opened ``w+b`` (a writer may read back what it wrote, e.g. to seal
    it: :mod:`same.artefact`).  Nothing is left at ``path`` (nor a temporary) if ``write``
    raises; ``path`` is never truncated in place, so a reader's mapping of the old file stays
    valid.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w+b") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
