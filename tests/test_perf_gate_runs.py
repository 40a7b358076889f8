"""The performance gate (.ci/perf) on throwaway git histories: its choice of base without asv,
then real runs with asv on tiny projects of their own (a change that slows down in its first
commit; a change that moves a module), and benchmarks/common.py's same_module. Its decision on
canned `asv compare` output: tests/test_perf_gate.py."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GATE = REPO / "benchmarks" / "perf_gate.py"


# --- the gate's base (.ci/perf): the whole change, not only its last commit -------------------
# .ci/perf copied into throwaway git histories under tmp_path; `--print-base` resolves the base
# without asv, the last test runs the real gate (real asv) on a tiny project of its own.

PERF = REPO / ".ci" / "perf"


class Throwaway:
    """A git repository under tmp_path with .ci/perf copied verbatim; its own HOME (asv's
    machine file, git's config) so nothing outside tmp_path changes."""

    def __init__(self, root: Path):
        self.root = root
        home = root.parent / "home"
        home.mkdir(parents=True)
        (root / ".ci").mkdir(parents=True)
        shutil.copy2(PERF, root / ".ci" / "perf")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PERF_"))}
        env.setdefault("PYENV_ROOT", str(Path.home() / ".pyenv"))  # pyenv's shims find it by HOME
        who = {"NAME": "perf gate test", "EMAIL": "perf-gate@example.invalid"}
        env.update({f"GIT_{role}_{k}": v for role in ("AUTHOR", "COMMITTER") for k, v in who.items()})
        # the test's interpreter first: its asv, virtualenv and the `python` that runs perf_gate.py
        env.update(HOME=str(home), PATH=os.pathsep.join([str(Path(sys.executable).parent),
                                                          os.environ.get("PATH", "")]))
        self.env = env
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> str:
        res = subprocess.run(["git", *args], cwd=self.root, env=self.env, capture_output=True,
                             text=True, check=True)
        return res.stdout.strip()

    def commit(self, message: str, files: dict[str, str] | None = None) -> str:
        for name, text in (files or {}).items():
            (self.root / name).parent.mkdir(parents=True, exist_ok=True)
            (self.root / name).write_text(text)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def perf(self, *args: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess:
        res = subprocess.run(["bash", ".ci/perf", *args], cwd=self.root, env={**self.env, **env},
                             capture_output=True, text=True, timeout=timeout)
        res.output = res.stdout + res.stderr
        return res


def base_line(res) -> str:
    return next(line for line in res.stdout.splitlines() if " chosen by " in line)


def test_base_rules_on_a_throwaway_history(tmp_path):
    repo = Throwaway(tmp_path / "repo")
    a = repo.commit("A", {"f.txt": "a\n"})
    b = repo.commit("B", {"f.txt": "b\n"})

    # rule 4: no record, HEAD's parent, loudly
    res = repo.perf("--print-base")
    assert res.returncode == 0, res.output
    assert "WARNING" in res.stdout and "only HEAD's last commit is gated" in res.stdout
    assert base_line(res) == f"perf gate: base {a} chosen by rule 4: no .ci/landed at HEAD," \
                             " HEAD's parent"
    assert "perf gate: 1 commit(s) in base..head" in res.stdout

    # a session starts by recording the landed HEAD: nothing new yet, so the gate skips (asv
    # never starts), with --print-base and without
    res = repo.perf("--mark-landed")
    assert res.returncode == 0, res.output
    assert (repo.root / ".ci" / "landed").read_text().splitlines()[1:] == [b]
    for args in (("--print-base",), ()):
        res = repo.perf(*args)
        assert res.returncode == 0, res.output
        assert res.stdout.startswith("perf gate SKIPPED: .ci/landed in the working tree")
        assert "nothing new to gate" in res.stdout

    # rule 3: the change's first commit carries the record; three commits, one comparison
    repo.commit("C: records B as landed")
    repo.commit("D", {"f.txt": "d\n"})
    e = repo.commit("E", {"g.txt": "e\n"})
    res = repo.perf("--print-base")
    assert res.returncode == 0, res.output
    assert base_line(res) == f"perf gate: base {b} chosen by rule 3: .ci/landed as committed" \
                             " at HEAD names it as the last landed commit"
    assert ("perf gate: 3 commit(s) in base..head, compared as one change (base against "
            "head)") in res.stdout
    assert "WARNING" not in res.output
    # a record far behind HEAD is named: a later landing may not have been recorded
    res = repo.perf("--print-base", PERF_MAX_COMMITS="2")
    assert res.returncode == 0 and ("perf gate WARNING: 3 commits since the base; if a later "
                                    "change landed, record it (.ci/perf --mark-landed)"
                                    ) in res.stdout, res.output

    # rule 1: the command line, then PERF_BASE
    res = repo.perf("--print-base", a, e)
    assert base_line(res) == f"perf gate: base {a} chosen by rule 1: BASE given on the command line"
    res = repo.perf("--print-base", PERF_BASE=a)
    assert base_line(res) == f"perf gate: base {a} chosen by rule 1: PERF_BASE={a}"

    # rule 2: off main, the commit of main it branched from (the record is not consulted)
    repo.git("checkout", "-q", "-b", "side", a)
    s = repo.commit("S", {"s.txt": "s\n"})
    repo.commit("S2", {"s.txt": "s2\n"})
    res = repo.perf("--print-base")
    assert base_line(res).startswith(f"perf gate: base {a} chosen by rule 2: HEAD is off main")
    assert "perf gate: 2 commit(s) in base..head" in res.stdout
    repo.git("checkout", "-q", "main")

    # a record that is not in HEAD's history, or holds no hash: exit 2, one line naming the file
    assert repo.perf("--mark-landed", s).returncode == 2
    for text, why in ((f"{s}\n", f"names {s}, which is not an ancestor of HEAD"),
                      ("# no hash here\nlanded: B\n", "holds no full commit hash")):
        repo.commit("bad record", {".ci/landed": text})
        res = repo.perf("--print-base")
        assert res.returncode == 2, res.output
        assert res.stdout == "" and len(res.stderr.splitlines()) == 1, res.output
        assert res.stderr.startswith("perf gate ERROR: .ci/landed as committed at HEAD ")
        assert why in res.stderr


REAL_ASV = json.loads((REPO / "benchmarks" / "asv.conf.json").read_text())
UNINSTALL = REPO / "benchmarks" / "asv_uninstall.py"
TINY_ASV = {
    "version": 1, "project": "tinyproj", "project_url": "https://example.invalid/",
    "repo": "..", "branches": ["main"], "dvcs": "git", "environment_type": "virtualenv",
    "pythons": [f"{sys.version_info.major}.{sys.version_info.minor}"], "matrix": {},
    # the project's own build, install and uninstall commands (no network for the project
    # itself: virtualenv seeds setuptools, the build uses it; asv_uninstall.py is copied in)
    **{k: REAL_ASV[k] for k in ("build_command", "install_command", "uninstall_command")},
    "benchmark_dir": "benchmarks", "env_dir": ".asv/env", "results_dir": ".asv/results",
    "html_dir": ".asv/html",
}
TINY_BENCH = '''\
from tiny import work


class Kernels:
    params = ["numpy"]  # the gate's default PERF_BENCH selects time_*('numpy', ...)
    param_names = ["backend"]
    number = 1
    repeat = 5  # per round: 10 samples a commit over 2 rounds, enough for asv's significance test
    warmup_time = 0

    def time_work(self, backend):
        work()
'''
TINY_FAST = "def work():\n    return sum(range(3000))\n"
TINY_SLOW = "import time\n\n\ndef work():\n    time.sleep(0.005)\n    return sum(range(3000))\n"


@pytest.mark.slow
def test_the_gate_catches_a_slowdown_in_the_first_of_three_commits(tmp_path):
    """Real asv on a tiny project: the landed base A, then a change of three commits whose FIRST
    makes the benchmark ~100x slower. The gate (base A from .ci/landed) fails and names it; the old
    rule, HEAD against its parent, passes on the same history."""
    repo = Throwaway(tmp_path / "repo")
    (repo.root / "benchmarks").mkdir()
    shutil.copy2(GATE, repo.root / "benchmarks" / "perf_gate.py")
    shutil.copy2(UNINSTALL, repo.root / "benchmarks" / "asv_uninstall.py")
    a = repo.commit("A: the landed base", {
        ".gitignore": "benchmarks/.asv/\n",
        "pyproject.toml": '[build-system]\nrequires = ["setuptools"]\n'
                          'build-backend = "setuptools.build_meta"\n\n'
                          '[project]\nname = "tinyproj"\nversion = "0.1"\ndependencies = []\n\n'
                          '[tool.setuptools]\npy-modules = ["tiny"]\n',
        "tiny.py": TINY_FAST,
        "benchmarks/asv.conf.json": json.dumps(TINY_ASV, indent=1),
        "benchmarks/benchmarks/__init__.py": "",
        "benchmarks/benchmarks/bench_kernels.py": TINY_BENCH,
    })
    repo.commit("1: records A as landed; work() sleeps 5 ms",
                {".ci/landed": f"# the last landed commit\n{a}\n", "tiny.py": TINY_SLOW})
    repo.commit("2: unrelated", {"NOTES.txt": "two\n"})
    repo.commit("3: unrelated", {"NOTES.txt": "three\n"})
    opts = {"PERF_ROUNDS": "2", "PERF_MACHINE": "perf-gate-test", "timeout": 600}

    res = repo.perf(**opts)
    assert res.returncode == 1, res.output
    assert base_line(res) == f"perf gate: base {a} chosen by rule 3: .ci/landed as committed" \
                             " at HEAD names it as the last landed commit"
    assert "perf gate: 3 commit(s) in base..head, compared as one change (base against head)" in res.stdout
    assert re.search(r"^SLOWER x[\d.]+: bench_kernels\.Kernels\.time_work\('numpy'\)", res.stdout,
                     re.M), res.output
    assert "perf gate FAILED" in res.stdout

    # the old rule, HEAD against its parent, sees no slowdown: why the record is needed
    res = repo.perf("HEAD^", "HEAD", **opts)
    assert res.returncode == 0, res.output
    assert "perf gate PASSED" in res.stdout


# --- a change that moves a module: asv reuses one virtualenv for base and head ----------------
# head's kernels write a cache file into their package folder when imported, as numba's
# cache=True does in site-packages; pip uninstall leaves that folder, and at the base (installed
# after head in round 2) it imported as an empty namespace package: CI's stop 46 failed so.

MOVED_PYPROJECT = ('[build-system]\nrequires = ["setuptools"]\n'
                   'build-backend = "setuptools.build_meta"\n\n'
                   '[project]\nname = "tinyproj"\nversion = "0.1"\ndependencies = []\n\n'
                   '[tool.setuptools]\npackages = {packages}\n')
MOVED_KERNELS = """\
from pathlib import Path

cache = Path(__file__).parent / "__pycache__"
cache.mkdir(exist_ok=True)
(cache / "work-1.py311.nbi").write_bytes(b"numba's index")


def work():
    return sum(range(3000))
"""
MOVED_BENCH = '''\
import importlib


def kernels():  # the layered path, else the flat path it moved from (as benchmarks/common.py)
    try:
        return importlib.import_module("tinypkg.model.kernels")
    except ModuleNotFoundError:
        return importlib.import_module("tinypkg.kernels")


class Kernels:
    params = ["numpy"]
    param_names = ["backend"]
    number = 1
    repeat = 5
    warmup_time = 0

    def setup(self, backend):
        self.work = kernels().work

    def time_work(self, backend):
        self.work()
'''


@pytest.mark.slow
def test_the_gate_survives_a_module_moved_into_a_subpackage(tmp_path):
    """Real asv on a tiny project whose change moves ``tinypkg/kernels.py`` to
    ``tinypkg/model/kernels/`` (head writes a cache file there on import). With a bare
    ``pip uninstall`` the base picks up head's leftover folder and the run fails, as CI did;
    with the project's uninstall command (benchmarks/asv_uninstall.py) the base imports its own
    flat module and the gate passes."""
    repo = Throwaway(tmp_path / "repo")
    bench = repo.root / "benchmarks"
    bench.mkdir()
    shutil.copy2(GATE, bench / "perf_gate.py")
    shutil.copy2(UNINSTALL, bench / "asv_uninstall.py")
    a = repo.commit("A: the landed base, flat", {
        ".gitignore": "benchmarks/.asv/\n",
        "pyproject.toml": MOVED_PYPROJECT.format(packages='["tinypkg"]'),
        "tinypkg/__init__.py": "",
        "tinypkg/kernels.py": TINY_FAST,
        "benchmarks/asv.conf.json": json.dumps(TINY_ASV, indent=1),
        "benchmarks/benchmarks/__init__.py": "",
        "benchmarks/benchmarks/bench_kernels.py": MOVED_BENCH,
    })
    repo.git("rm", "-q", "tinypkg/kernels.py")
    repo.commit("1: records A as landed; the kernels move into tinypkg.model", {
        ".ci/landed": f"# the last landed commit\n{a}\n",
        "pyproject.toml": MOVED_PYPROJECT.format(
            packages='["tinypkg", "tinypkg.model", "tinypkg.model.kernels"]'),
        "tinypkg/model/__init__.py": "",
        "tinypkg/model/kernels/__init__.py": MOVED_KERNELS,
    })
    opts = {"PERF_ROUNDS": "2", "PERF_MACHINE": "perf-gate-test", "timeout": 600}

    # a bare pip uninstall, in the working tree's asv.conf.json (asv reads that one)
    conf = bench / "asv.conf.json"
    conf.write_text(json.dumps({**TINY_ASV, "uninstall_command": [
        "return-code=any python -m pip uninstall -y {project}"]}, indent=1))
    res = repo.perf(**opts)
    assert res.returncode != 0, res.output
    assert "module 'tinypkg.model.kernels' has no attribute 'work'" in res.output, res.output

    # the project's uninstall command: the leftover folder goes with the package
    repo.git("checkout", "--", "benchmarks/asv.conf.json")
    res = repo.perf(**opts)
    assert res.returncode == 0, res.output
    assert "perf gate PASSED" in res.stdout
    # whichever commit asv installed last, its folder holds no trace of the other layout
    (site,) = (repo.root / "benchmarks" / ".asv" / "env").glob("*/lib/python*/site-packages")
    assert not ((site / "tinypkg" / "kernels.py").exists() and (site / "tinypkg" / "model").exists())


def test_same_module_passes_over_a_leftover_folder_to_the_flat_module(tmp_path):
    """benchmarks/common.py's same_module at a flat commit where another install left
    ``flatpkg/model/kernels/__pycache__``: the empty namespace package is not taken for the
    layered module; the flat ``flatpkg.kernels`` is. A real layered module is taken as it is."""
    spec = importlib.util.spec_from_file_location(
        "bench_common", REPO / "benchmarks" / "benchmarks" / "common.py")
    common = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(common)
    pkg = tmp_path / "flatpkg"
    (pkg / "model" / "kernels" / "__pycache__").mkdir(parents=True)
    (pkg / "model" / "kernels" / "__pycache__" / "cpu.sddmm_csr-37.py311.nbi").write_bytes(b"")
    (pkg / "__init__.py").write_text("")
    (pkg / "kernels.py").write_text("sddmm = 'flat'\n")
    (tmp_path / "layered" / "model" / "kernels").mkdir(parents=True)
    for init in ("layered", "layered/model", "layered/model/kernels"):
        (tmp_path / init / "__init__.py").write_text("")
    (tmp_path / "layered" / "model" / "kernels" / "__init__.py").write_text("sddmm = 'layered'\n")
    sys.path.insert(0, str(tmp_path))
    try:
        assert common.same_module("flatpkg.model.kernels").sddmm == "flat"
        assert common.same_module("layered.model.kernels").sddmm == "layered"
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m.split(".")[0] in ("flatpkg", "layered")]:
            del sys.modules[name]
