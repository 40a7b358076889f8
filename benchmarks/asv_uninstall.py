"""asv's uninstall command: ``pip uninstall``, then remove the package folders pip leaves behind.

asv installs one commit after another into the same virtualenv (the perf gate's interleaved
base and head rounds, ``asv run`` over the history). ``pip uninstall`` removes only the files
in the wheel's RECORD. numba's cache files (``__pycache__/*.nbi``, ``*.nbc``) are not among
them: numba writes them next to the kernels in site-packages. Their folders stay, and a folder
of another commit's layout imports as an empty namespace package. At a commit from before the
layers (issue 41), ``import same.model.kernels`` then succeeded on head's leftover
``same/model/kernels/__pycache__`` and had no ``sddmm``. The perf gate failed that way in CI
(stop 46).

So, before uninstalling, this reads from the installed distribution's RECORD which top-level
packages it owns (folders holding an ``__init__.py`` it installed; never ``__pycache__`` or
``bin``), runs ``python -m pip uninstall -y PROJECT``, and removes whatever is left of those
folders. Named in ``benchmarks/asv.conf.json`` and ``benchmarks/asv.history.json``; tested by
``tests/test_perf_gate_runs.py`` with real asv on a tiny project whose change moves a module.

Usage: ``python asv_uninstall.py PROJECT``; exit status is pip's (asv accepts any).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path


def owned_packages(project: str) -> list[Path]:
    """The top-level package folders the installed distribution ``project`` owns, from its
    RECORD (a folder counts when the RECORD holds its ``__init__.py``); [] when not installed."""
    try:
        dist = importlib.metadata.distribution(project)
    except importlib.metadata.PackageNotFoundError:
        return []
    tops = {f.parts[0] for f in dist.files or ()
            if len(f.parts) == 2 and f.parts[1] == "__init__.py" and f.parts[0] != ".."}
    return sorted(Path(dist.locate_file(top)) for top in tops)


def main(argv: list[str] | None = None) -> int:
    # argparse itself: this runs in asv's environments, where ``same`` may be absent or
    # another commit's (same.io.cli's parser is not importable here)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.error = lambda message: ap.exit(2, f"{ap.prog}: error: {message}\n")
    ap.add_argument("project", metavar="PROJECT", help="the distribution to uninstall")
    project = ap.parse_args(argv).project
    folders = owned_packages(project)
    rc = subprocess.call([sys.executable, "-m", "pip", "uninstall", "-y", project])
    for folder in folders:
        if folder.is_dir():
            shutil.rmtree(folder)
            print(f"asv_uninstall: removed what pip left of {folder} (files it did not install, such as numba's cache)")
    return rc


if __name__ == "__main__":
    sys.exit(main())
