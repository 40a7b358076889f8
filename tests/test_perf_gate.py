"""The performance gate: its decision (benchmarks/perf_gate.py) on canned `asv compare` output,
no asv run needed; its choice of base (.ci/perf) on throwaway git histories; and one real run of
.ci/perf with asv on a tiny project of its own, whose change slows down in its first commit."""

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
_spec = importlib.util.spec_from_file_location("perf_gate", GATE)
perf_gate = importlib.util.module_from_spec(_spec)
sys.modules["perf_gate"] = perf_gate
_spec.loader.exec_module(perf_gate)

HEADER = """\
| Change   | Before [3124665c] <main~1>   | After [ec9ed286] <main>   |   Ratio | Benchmark (Parameter)                                             |
|----------|------------------------------|---------------------------|---------|-------------------------------------------------------------------|
"""
SAME = """\
|          | 4.04±0.02ms                  | 4.10±0.03ms               |    1.01 | bench_kernels.Kernels.time_sample_accumulate('numpy', 64)         |
|          | 221±10μs                     | 260±30μs                  |   ~1.18 | bench_kernels.Kernels.time_sddmm('numpy', 64)                     |
|          | n/a                          | n/a                       |     n/a | bench_kernels.Kernels.time_sddmm('cupy', 64)                      |
| -        | 428±10ms                     | 210±5ms                   |    0.49 | bench_kernels.MinibatchStep.time_step('numpy', 256, 'nonzero')    |
| x        | 8.01±2ms                     | 9.0±2ms                   |    1.12 | bench_kernels.MinibatchStep.time_step('numpy', 64, 'summed')      |
"""
SLOWER = """\
| +        | 974±4μs                      | 2.10±0.01ms               |    2.16 | bench_kernels.Kernels.time_sddmm('numpy', 256)                    |
"""
BROKEN = """\
| !        | 23.3±0.1ms                   | failed                    |     n/a | bench_kernels.MinibatchStep.time_step('numpy', 256, 'summed')     |
"""


def canned(*parts, split=False):
    if not split:
        return HEADER + "".join(parts)
    titles = {SAME: "Benchmarks that have stayed the same:", SLOWER: "Benchmarks that have got worse:",
              BROKEN: "Benchmarks that have got worse:"}
    return "".join(f"\n{titles[p]}\n\n" + HEADER + p for p in parts)


def test_parse_every_row():
    rows = perf_gate.parse_compare(canned(SAME, SLOWER))
    assert len(rows) == 6
    assert rows[0] == perf_gate.Row("", "4.04±0.02ms", "4.10±0.03ms", "1.01",
                                    "bench_kernels.Kernels.time_sample_accumulate('numpy', 64)")
    assert [r.mark for r in rows] == ["", "", "", "-", "x", "+"]


def test_unchanged_faster_insignificant_and_incomparable_pass():
    passed, lines = perf_gate.verdict(perf_gate.parse_compare(canned(SAME)), "1.5")
    assert passed
    assert lines == ["all 4 benchmarks within 1.5 of the base"]  # the cupy row is n/a


def test_a_slowdown_fails_and_names_the_benchmark():
    for text in (canned(SAME, SLOWER), canned(SAME, SLOWER, split=True)):
        passed, lines = perf_gate.verdict(perf_gate.parse_compare(text), "1.5")
        assert not passed
        assert lines[0] == ("SLOWER x2.16: bench_kernels.Kernels.time_sddmm('numpy', 256)"
                            " (974±4μs -> 2.10±0.01ms)")
        assert lines[-1] == "1 of 5 benchmarks worse than the base by more than 1.5"


def test_a_new_failure_fails():
    passed, lines = perf_gate.verdict(perf_gate.parse_compare(canned(SAME, BROKEN)))
    assert not passed
    assert lines[0].startswith("FAIL xn/a: bench_kernels.MinibatchStep.time_step('numpy', 256,")


def test_nothing_measured_fails():
    skipped = HEADER + SAME.splitlines(keepends=True)[2]
    for text in ("asv: no results\n", skipped):
        passed, lines = perf_gate.verdict(perf_gate.parse_compare(text))
        assert not passed and "no benchmark measured on both commits" in lines[0]


def test_rerun_regex_matches_exactly_the_worse_benchmarks():
    rows = perf_gate.parse_compare(canned(SAME, SLOWER, BROKEN, split=True))
    regex = perf_gate.bench_regex(perf_gate.worse(rows))
    # asv matches a parameterized benchmark as name(param, ...) with re.search
    matched = [r.name for r in rows if re.search(regex, r.name)]
    assert matched == ["bench_kernels.Kernels.time_sddmm('numpy', 256)",
                       "bench_kernels.MinibatchStep.time_step('numpy', 256, 'summed')"]


def test_command_line_exit_status(tmp_path):
    for text, status in ((canned(SAME), 0), (canned(SAME, SLOWER), 1)):
        out = tmp_path / "compare.txt"
        out.write_text(text)
        regex = tmp_path / "worse"
        res = subprocess.run([sys.executable, str(GATE), str(out), "--factor", "1.5",
                              "--regex-out", str(regex)], capture_output=True, text=True)
        assert res.returncode == status, res.stdout + res.stderr
        assert regex.read_text() == ("" if status == 0 else
                                     r"^bench_kernels\.Kernels\.time_sddmm\('numpy',\ 256\)$")


def test_ci_runs_the_gate_after_the_tests():
    run = (REPO / ".ci" / "run").read_text()
    assert "python -m pytest" in run and ".ci/perf" in run
    assert run.index("python -m pytest") < run.index(".ci/perf")
    perf = (REPO / ".ci" / "perf").read_text()
    assert "--interleave-rounds" in perf and "perf_gate.py" in perf


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


TINY_ASV = {
    "version": 1, "project": "tinyproj", "project_url": "https://example.invalid/",
    "repo": "..", "branches": ["main"], "dvcs": "git", "environment_type": "virtualenv",
    "pythons": [f"{sys.version_info.major}.{sys.version_info.minor}"], "matrix": {},
    # no network for the project itself: virtualenv seeds setuptools, the build uses it
    "build_command": ["python -m pip wheel --no-deps --no-build-isolation -w {build_cache_dir}"
                      " {build_dir}"],
    "install_command": ["in-dir={env_dir} python -m pip install {wheel_file}"],
    "uninstall_command": ["return-code=any python -m pip uninstall -y {project}"],
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
