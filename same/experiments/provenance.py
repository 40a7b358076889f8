"""Provenance for every recorded figure: machine, versions, commit, time; and the
fingerprint of the code that made an output (:func:`code_fingerprint`)."""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import platform
import subprocess
from collections.abc import Iterable
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from same.io.outputs import json_kind, write_text

__all__ = ["code_fingerprint", "provenance", "write_json"]

#: The distributions whose versions a record names, where installed: what computes a fit
#: (core, baselines, and the GPU extras' CuPy, numba-cuda and CUDA toolkit) and the workflow
#: (tests/experiments/test_provenance.py checks it covers them, read from pyproject.toml).
_PACKAGES = ("same-lda", "numpy", "scipy", "numba", "scikit-learn", "pyarrow", "pooch",
             "jsonschema", "gensim", "tomotopy", "snakemake", "cupy", "cupy-cuda12x",
             "cupy-cuda13x", "numba-cuda", "cuda-toolkit", "cuda-bindings")


#: What "-dirty" is about: the code and workflow, not the results and figures they write.
_CODE_PATHS = ("same", "baselines", "benchmarks", "workflow", "config", "Snakefile",
               "pyproject.toml")


def _git_commit(cwd: Path) -> str | None:
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True,
                             text=True, timeout=10)
        if rev.returncode != 0:
            return None
        # dirty: the code differs from the commit (outputs being regenerated do not count)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                *(f":(top){p}" for p in _CODE_PATHS)], cwd=cwd,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return rev.stdout.strip() + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def provenance(extra: dict | None = None) -> dict:
    """Machine (CPU model, cores, RAM, GPU if CuPy sees one), package versions,
    git commit of the source tree (``-dirty`` when modified) and UTC time."""
    import psutil

    versions = {"python": platform.python_version()}
    for p in _PACKAGES:
        try:
            versions[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            pass
    info = {
        "time_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "commit": _git_commit(Path(__file__).resolve().parent),
        "machine": {
            "hostname": platform.node(),
            "platform": platform.platform(),
            "cpu": _cpu_model(),
            "logical_cores": os.cpu_count(),
            "ram_gib": round(psutil.virtual_memory().total / 2**30, 1),
        },
        "versions": versions,
    }
    try:
        from threadpoolctl import threadpool_info

        info["threadpools"] = [{k: d.get(k) for k in ("internal_api", "num_threads", "version")}
                               for d in threadpool_info()]
    except Exception:
        pass
    if extra:
        info.update(extra)
    return info


def write_json(path: str | os.PathLike, obj: dict, *, inputs=(),
               option: str | None = None) -> None:
    """Write ``obj`` as indented JSON by :mod:`same.io.outputs`'s rules: ``path`` may replace
    only a JSON object of the same kind (:func:`same.io.outputs.json_kind`: the same
    ``artefact``, ``benchmark`` or ``model``), never one of ``inputs``; ``option`` names it
    in messages ("--out").

    Raises
    ------
    same.io.outputs.OutputError
        ``path`` exists and is not ours of this kind, or is (holds) an input.
    """
    data = json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n"
    write_text(path, data, json_kind(obj), inputs=inputs, option=option)


def code_fingerprint(root: str | os.PathLike, patterns: Iterable[str],
                     exclude: Iterable[str] = ()) -> str:
    """SHA-256 of the code of the Python files ``patterns`` (globs relative to ``root``) match,
    less ``exclude`` (paths relative to ``root``): of each file's syntax tree with its
    docstrings removed, and its path relative to ``root``.

    Comments, layout and docstrings are not part of it, so editing them keeps the fingerprint;
    any other edit (a statement, a constant, an error message) changes it.  The workflow passes
    it to its rules as a parameter, and Snakemake reruns a job whose parameters changed: the
    fits rerun when the code that trains or scores changes, not when a comment does.

    Raises
    ------
    ValueError
        A pattern that matches no file (a misspelt pattern would silently fingerprint nothing).
    SyntaxError
        A file that is not valid Python.
    """
    root, skip = Path(root), set(exclude)
    files = set()
    for pattern in patterns:
        found = {p for p in root.glob(pattern) if p.is_file()}
        if not found:
            raise ValueError(f"code_fingerprint: {pattern!r} matches no file under {root}")
        files |= {p for p in found if p.relative_to(root).as_posix() not in skip}
    digest = hashlib.sha256()
    for path in sorted(files):
        for part in (path.relative_to(root).as_posix(), _code_of(path.read_bytes(), str(path))):
            digest.update(part.encode() + b"\0")
    return digest.hexdigest()


@functools.lru_cache(maxsize=512)
def _code_of(source: bytes, filename: str) -> str:
    """The syntax tree of ``source`` without its docstrings, as :func:`ast.dump` writes it.
    Kept per (text, name) for the process: the workflow fingerprints about a dozen overlapping
    sets of files each time Snakemake starts (and a SLURM job starts it twice), and parsing each
    file once instead of in every set saves about a second a start; an edited file is a new
    text, so it is parsed again."""
    tree = ast.parse(source, filename=filename)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                              ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            del body[0]
    return ast.dump(tree)
