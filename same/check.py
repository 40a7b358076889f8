"""``same-lda check``: verify an artefact the way its reader does, without using it.

Each kind is checked by the one function that reads it for real (so ``check`` can never pass
a file the reader would refuse): :func:`same.split.load_split`, :func:`same.runner.load_model`,
:func:`same.scale_data.load_synthetic`, :func:`same.corpus.read_cache`, and for a run folder
:func:`same.rundir.check_trace` plus its model.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

__all__ = ["check_artefact"]


def _members(path: Path) -> set[str]:
    """Member names of a ``.npz`` (only to tell the kinds apart; the loaders check it)."""
    try:
        with zipfile.ZipFile(path) as zf:
            return {n.removesuffix(".npy") for n in zf.namelist()}
    except (zipfile.BadZipFile, OSError, ValueError):
        return set()


def check_artefact(path: str | os.PathLike) -> str:
    """Check one artefact; returns its kind ("split", "model", "synthetic corpus",
    "parsed-corpus cache", "run").

    Raises
    ------
    FileNotFoundError
        No such file or folder.
    ValueError
        The artefact fails a check (same.artefact.ArtefactError, same.rundir.RunDirError), or
        its kind cannot be told (one line naming the path).
    """
    from .artefact import ArtefactError, open_npz

    path = Path(path)
    if path.is_dir() or path.name == "trace.csv":
        from .rundir import check_trace
        from .runner import load_model

        run_dir = path if path.is_dir() else path.parent
        check_trace(run_dir / "trace.csv")
        if (run_dir / "model.npz").exists():
            load_model(run_dir / "model.npz")
        return "run"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file or folder")
    names = _members(path)
    if "train_indptr" in names:
        from .split import load_split

        load_split(path)
        return "split"
    if "split_sha256" in names:
        from .runner import load_model

        load_model(path)
        return "model"
    if "topic_word" in names:
        from .scale_data import load_synthetic

        load_synthetic(path)
        return "synthetic corpus"
    if "fingerprint" in names:
        from .corpus import read_cache

        read_cache(path)
        return "parsed-corpus cache"
    open_npz(path, "same-lda artefact", "rewrite it with the command that made it", ())
    raise ArtefactError(f"{path}: not an artefact of same-lda (a split, model, synthetic corpus "
                        "or parsed-corpus cache .npz, a run folder or its trace.csv)")
