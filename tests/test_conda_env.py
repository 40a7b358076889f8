"""The workflow's conda env (workflow/envs/same-lda.yaml) against pyproject.toml: one list of
runtime dependencies. The env must hold pyproject's [project] dependencies, its [baselines]
extra and the job-side part of its [workflow] extra, with the same lower bounds, and nothing
else; ``snakemake --use-conda -n`` must accept it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
ENV_FILE = REPO / "workflow" / "envs" / "same-lda.yaml"
EXTRAS = ("baselines", "workflow")  # the extras whose software the workflow's jobs run

# The one mapping of PyPI names to conda-forge names, for those that differ (none today: add a
# line when a dependency's conda-forge package is named otherwise, e.g. "torch": "pytorch").
CONDA_NAME: dict[str, str] = {}
# Not on conda-forge: the env installs them with pip (its `pip:` list).
PIP_ONLY = {"tomotopy"}
# In [workflow] but not job software: Snakemake itself and its executor run the jobs, outside.
NOT_JOB_SOFTWARE = {"snakemake", "snakemake-executor-plugin-slurm"}
# The env's own tooling, not a Python dependency.
ENV_TOOLING = {"python", "pip"}


def lower_bound(spec) -> str | None:
    """The version after ``>=`` in a packaging SpecifierSet, or None."""
    bounds = [s.version for s in spec if s.operator == ">="]
    return bounds[0] if bounds else None


def pyproject_requirements(pyproject: dict) -> dict[str, tuple[str, str | None]]:
    """name (canonical PyPI) -> (where it is listed, its lower bound), for what the jobs run."""
    project = pyproject["project"]
    lists = [("dependencies", project["dependencies"])]
    lists += [(f"[{x}]", project["optional-dependencies"][x]) for x in EXTRAS]
    out = {}
    for where, reqs in lists:
        for line in reqs:
            req = Requirement(line)
            name = canonicalize_name(req.name)
            if name in NOT_JOB_SOFTWARE or name == "same-lda":
                continue
            out[name] = (where, lower_bound(req.specifier))
    return out


def conda_spec(spec: str) -> tuple[str, str | None]:
    """A conda match spec's (name, lower bound): ``numpy>=1.24`` -> ("numpy", "1.24")."""
    m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*(.*)", spec)
    assert m, f"unreadable conda spec {spec!r}"
    bound = re.search(r">=\s*([^,\s|]+)", m.group(2))
    return canonicalize_name(m.group(1)), bound.group(1) if bound else None


def env_requirements(env: dict) -> dict[str, tuple[str, str | None]]:
    """name (canonical, as the env spells it) -> (conda or pip, lower bound)."""
    out = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            for line in dep.get("pip", []):
                req = Requirement(line)
                out[canonicalize_name(req.name)] = ("pip", lower_bound(req.specifier))
        else:
            name, bound = conda_spec(dep)
            out[name] = ("conda", bound)
    return out


def drift(pyproject: dict, env: dict) -> list[str]:
    """Every disagreement between pyproject and the conda env, one line each (empty: none)."""
    want = pyproject_requirements(pyproject)
    have = env_requirements(env)
    problems = []
    expected_names = set()
    for name, (where, bound) in sorted(want.items()):
        conda_name = CONDA_NAME.get(name, name)
        expected_names.add(conda_name)
        channel = "pip" if name in PIP_ONLY else "conda"
        if conda_name not in have:
            problems.append(f"{name} (pyproject {where}) is missing from the env"
                            f" (as {channel} package {conda_name!r})")
            continue
        got_channel, got_bound = have[conda_name]
        if got_channel != channel:
            problems.append(f"{conda_name} is a {got_channel} package in the env, expected {channel}")
        if bound and got_bound and bound != got_bound:
            problems.append(f"{name}: pyproject says >={bound}, the env >={got_bound}")
        elif bound and not got_bound:
            problems.append(f"{name}: pyproject says >={bound}, the env gives no lower bound")
    for name in sorted(set(have) - expected_names - ENV_TOOLING):
        problems.append(f"{name} is in the env but in none of pyproject's dependencies"
                        f" or extras {EXTRAS}")
    return problems


def load():
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    env = yaml.safe_load(ENV_FILE.read_text())
    return pyproject, env


def test_env_matches_pyproject():
    pyproject, env = load()
    assert drift(pyproject, env) == []


def test_env_is_a_conda_env_file():
    _, env = load()
    assert set(env) <= {"name", "channels", "dependencies"}
    assert env["channels"] == ["conda-forge"]
    names = [conda_spec(d)[0] for d in env["dependencies"] if isinstance(d, str)]
    assert "python" in names and "pip" in names
    assert len(names) == len(set(names)), "a package listed twice"


@pytest.mark.parametrize("name", sorted(pyproject_requirements(load()[0])))
def test_removing_a_dependency_from_the_env_is_caught(name):
    pyproject, env = load()
    conda_name = CONDA_NAME.get(name, name)
    deps = []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            dep = {"pip": [x for x in dep["pip"] if canonicalize_name(Requirement(x).name) != name]}
        elif conda_spec(dep)[0] == conda_name:
            continue
        deps.append(dep)
    problems = drift(pyproject, {**env, "dependencies": deps})
    assert any(p.startswith(f"{name} ") and "missing" in p for p in problems), problems


def test_drift_in_bounds_and_extras_is_caught():
    pyproject, env = load()
    bumped = [d.replace("scikit-learn>=1.6", "scikit-learn>=1.0") if isinstance(d, str) else d
              for d in env["dependencies"]]
    assert drift(pyproject, {**env, "dependencies": bumped}) == [
        "scikit-learn: pyproject says >=1.6, the env >=1.0"]
    extra = drift(pyproject, {**env, "dependencies": [*env["dependencies"], "seaborn>=0.13"]})
    assert extra == [f"seaborn is in the env but in none of pyproject's dependencies or extras"
                     f" {EXTRAS}"]
    new_dep = {**pyproject, "project": {**pyproject["project"], "dependencies": [
        *pyproject["project"]["dependencies"], "h5py>=3"]}}
    assert drift(new_dep, env) == [
        "h5py (pyproject dependencies) is missing from the env (as conda package 'h5py')"]


STUB_CONDA = """#!/bin/sh
# a stand-in for conda where none is installed: answers what a dry run asks
case "$1" in
  --version) echo "conda 24.9.0";;
  info) echo '{"conda_version": "24.9.0", "conda_prefix": "%(prefix)s",
        "envs_dirs": ["%(prefix)s/envs"], "pkgs_dirs": ["%(prefix)s/pkgs"],
        "platform": "linux-64", "channels": []}';;
  config) echo '{"get": {"channel_priority": "strict"}}';;
  *) echo "stub conda: $*" >&2; exit 1;;
esac
"""


def test_use_conda_dry_run(tmp_path):
    """Every rule's conda env resolves to a readable file in a dry run (with conda if installed,
    else a stub that answers snakemake's version and config queries)."""
    env = dict(os.environ)
    if shutil.which("conda") is None:
        stub = tmp_path / "bin" / "conda"
        stub.parent.mkdir()
        stub.write_text(STUB_CONDA % {"prefix": tmp_path / "conda"})
        stub.chmod(0o755)
        env["PATH"] = f"{stub.parent}{os.pathsep}{env['PATH']}"
    work = tmp_path / "w"
    res = subprocess.run(
        [sys.executable, "-m", "snakemake", "--nolock", "--use-conda", "-n", "--cores", "1",
         "--snakefile", str(REPO / "Snakefile"), "--directory", str(work)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "This was a dry-run" in res.stdout + res.stderr
