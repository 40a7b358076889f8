"""``same-lda check``: verify an artefact the way its reader does, without using it.

Each kind is checked by the one function that reads it for real (so ``check`` can never pass
a file the reader would refuse): :func:`same.data.split.load_split`, :func:`same.experiments.runner.load_model`,
:func:`same.data.planted.load_synthetic`, :func:`same.data.corpus.read_cache`, and for a run folder
:func:`same.experiments.rundir.check_trace` plus its model.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

from same.io.outputs import NPZ_KINDS

__all__ = ["check_artefact", "check_run"]


def _members(path: Path) -> set[str]:
    """Member names of a ``.npz``, sealed or not (only to tell the kinds apart, as
    :data:`same.io.outputs.NPZ_KINDS` says; the loaders check the seal)."""
    try:
        with zipfile.ZipFile(path) as zf:
            return {n.removesuffix(".npy") for n in zf.namelist()}
    except Exception:  # BadZipFile, NotImplementedError (zip version 6.7), OSError, ...
        return set()


def _load(kind: str, path: Path) -> None:
    """Read ``path`` with the one reader of its kind (:data:`same.io.outputs.NPZ_KINDS`)."""
    if kind == "split":
        from same.data.split import load_split as load
    elif kind == "model":
        from .runner import load_model as load
    elif kind == "synthetic corpus":
        from same.data.planted import load_synthetic as load
    elif kind == "vectorized-corpus cache":
        from same.data.textcorpus import read_vectorized_cache as load
    else:
        from same.data.corpus import read_cache as load
    load(path)


def check_artefact(path: str | os.PathLike) -> str:
    """Check one artefact; returns its kind ("split", "model", "synthetic corpus",
    "parsed-corpus cache", "vectorized-corpus cache", "run").

    Raises
    ------
    FileNotFoundError
        No such file or folder.
    ValueError
        The artefact fails a check (same.data.artefact.ArtefactError, same.experiments.rundir.RunDirError), or
        its kind cannot be told (one line naming the path).
    """
    from same.data.artefact import ArtefactError, open_npz

    path = Path(path)
    if path.is_dir() or path.name == "trace.csv":
        check_run(path if path.is_dir() else path.parent)
        return "run"
    if not path.is_file():
        if path.exists():
            raise ArtefactError(f"{path}: is neither a regular file nor a folder, so no "
                                "artefact of same-lda")
        raise FileNotFoundError(f"{path}: no such file or folder")
    names = _members(path)
    kind = next((k for k, member in NPZ_KINDS.items() if member in names), None)
    if kind is not None:
        _load(kind, path)
        return kind
    open_npz(path, "same-lda artefact", "rewrite it with the command that made it", ())
    raise ArtefactError(f"{path}: not an artefact of same-lda (a split, model, synthetic corpus "
                        "or parsed- or vectorized-corpus cache .npz, a run folder or its "
                        "trace.csv)")


def check_run(run_dir: str | os.PathLike) -> None:
    """Check a fit's output folder as a whole: meta.json against its seal, trace.csv against
    the SHA-256 meta.json records (:func:`same.experiments.rundir.check_trace`), and model.npz, when
    present (results/ commits no models), against meta.json's ``model_sha256`` and its own
    record of the run's trace and settings: a model of another run, or a meta.json edited
    (method, K, m) and sealed again, is refused.

    Raises
    ------
    same.experiments.rundir.RunDirError
        One line naming the file that does not belong to the run, ending in the remedy.
    """
    from same.data.artefact import file_sha256

    from .rundir import RunDirError, check_trace
    from .runner import load_model, settings_sha256

    run_dir = Path(run_dir)
    meta, _ = check_trace(run_dir / "trace.csv")
    model_path = run_dir / "model.npz"
    if not model_path.exists():
        return
    model = load_model(model_path)
    remedy = "rerun the fit that wrote it"
    with open(model_path, "rb") as f:
        if file_sha256(f) != meta.get("model_sha256"):
            raise RunDirError(f"{model_path}: is not the model its meta.json records (SHA-256 "
                              f"differs: another run's model, or replaced); {remedy}")
    for key, want in (("trace_sha256", meta["trace_sha256"]),
                      ("settings_sha256", settings_sha256(meta["settings"]))):
        if model[key] != want:
            raise RunDirError(f"{model_path}: its {key} does not match the run's meta.json and "
                              f"trace.csv (written by another run); {remedy}")
