"""The committed kernel benchmark history (benchmarks/history.py, issue 39): its results cover
at least 20 commits of main's first-parent line on one machine, every kernel benchmark has a
value at 20 of them, and the figure marks exactly the measured commits that changed
same/kernels. No asv run."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks/history/results"
# the perf gate's 8 numpy timings: SDDMM and sample-and-accumulate at K = 64/256, one minibatch
# step per sampler at K = 64/256
EXPECTED = {f"Kernels.time_{k}, n_topics={t}" for k in ("sddmm", "sample_accumulate")
            for t in (64, 256)} | {f"MinibatchStep.time_step, n_topics={t}, sampler={s}"
                                   for t in (64, 256) for s in ("nonzero", "summed")}


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture(scope="module")
def history():
    spec = importlib.util.spec_from_file_location("history", REPO / "benchmarks/history.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def result_files():
    return [p for p in RESULTS.glob("*/*.json") if p.name != "machine.json"]


def measured_commits() -> set[str]:
    return {json.loads(p.read_text())["commit_hash"] for p in result_files()}


def test_results_cover_20_commits_of_main_first_parent_on_one_machine():
    if git("rev-parse", "--is-shallow-repository").strip() == "true":
        pytest.skip("a shallow clone lacks the measured commits")
    files = result_files()
    machines = {json.loads(p.read_text())["params"]["machine"] for p in files}
    assert machines == {p.parent.name for p in files}
    assert len(machines) == 1
    (machine,) = machines
    assert json.loads((RESULTS / machine / "machine.json").read_text())["machine"] == machine
    info = json.loads((REPO / "benchmarks/history/run.json").read_text())
    assert info["machine"] == machine and info["numba_threads"] == 1
    commits = measured_commits()
    assert len(commits) >= 20
    line = set(git("rev-list", "--first-parent", "HEAD").split())
    assert commits <= line, sorted(commits - line)
    assert commits == set(info["commits"])  # every commit of the one run has its results


def test_every_kernel_benchmark_has_a_value_at_20_commits(history):
    pytest.importorskip("asv")
    series, _ = history.load()
    assert set(series) == EXPECTED
    for label, values in series.items():
        assert len(values) >= 20, label
        # seconds; asv rounds its quartiles to 5 digits
        assert all(0 < q25 <= med * 1.001 and med <= q75 * 1.001 and med < 10
                   for med, q25, q75 in values.values()), label


def test_pick_commits_keeps_both_ends_every_kernel_commit_and_the_order(history):
    line = [f"c{i:02d}" for i in range(40)]
    kernel = {"c03", "c04", "c17", "x99"}  # x99: a kernel commit off the line
    picked = history.pick_commits(line, kernel, 12)
    assert len(picked) == 12
    assert picked == sorted(picked)
    assert {"c00", "c39", "c03", "c04", "c17"} <= set(picked) and "x99" not in picked
    assert history.pick_commits(line, kernel, 3) == ["c00", "c03", "c04", "c17", "c39"]
    assert history.pick_commits(line, set(), 100) == line


def test_marked_commits_are_those_that_changed_the_kernels(history):
    kernel = history.kernel_commits()
    assert kernel == set(git("log", "--format=%H", "--", "same/model/kernels",
                             "same/kernels").split())
    measured = sorted(measured_commits())
    marks = history.marked(measured, kernel)
    # independently: the commits whose own diff touches same/kernels
    touched = [c for c in measured
               if git("diff-tree", "--no-commit-id", "--name-only", "-r", "--root", c, "--",
                      "same/model/kernels", "same/kernels").strip()]
    assert marks == touched
    assert 0 < len(marks) < len(measured)


def test_plot_writes_the_figure_and_marks_the_kernel_commits(history, tmp_path):
    pytest.importorskip("asv")
    image = pytest.importorskip("matplotlib.image")
    out = tmp_path / "kernels.png"
    readme = REPO / "benchmarks/history/README.md"
    before = readme.read_text()
    marks = history.plot(out)
    assert readme.read_text() == before  # only the committed figure's plot rewrites it
    measured = measured_commits()
    assert set(marks) == {c for c in git("log", "--format=%H", "--", "same/kernels").split()
                          if c in measured}
    pixels = image.imread(out)
    assert pixels.shape[0] > 500 and pixels.shape[1] > 1000
    assert pixels.std() > 0.05  # not a blank canvas
