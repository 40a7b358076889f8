"""Provenance names the version of everything that computes a fit (issue 40 item 7)."""

import re
from importlib import metadata
from pathlib import Path

import tomllib

from same.experiments import provenance

REPO = Path(__file__).resolve().parents[2]


def _names(requirements) -> set[str]:
    return {re.match(r"[A-Za-z0-9._-]+", r).group(0).lower() for r in requirements}


def test_versions_cover_the_fit_and_gpu_distributions_of_pyproject():
    """Every distribution the core, the baselines and the GPU extras (cuda12, cuda13: CuPy,
    numba-cuda, the CUDA toolkit) install is one whose version a record asks for."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    wanted = _names(project["dependencies"]) | _names(extras["baselines"])
    wanted |= _names(extras["cuda12"]) | _names(extras["cuda13"]) | _names(extras["gpu-sim"])
    wanted -= {"platformdirs", "tqdm", "psutil", "threadpoolctl"}  # no result depends on them
    assert wanted <= set(provenance._PACKAGES), sorted(wanted - set(provenance._PACKAGES))


def test_a_record_names_each_installed_one_at_its_installed_version():
    info = provenance.provenance()
    for name in provenance._PACKAGES:
        try:
            want = metadata.version(name)
        except metadata.PackageNotFoundError:
            assert name not in info["versions"]
        else:
            assert info["versions"][name] == want, name
    assert "numba-cuda" in info["versions"]  # the test extra's gpu-sim brings it
