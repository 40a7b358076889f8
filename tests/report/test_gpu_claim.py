"""Claim C6 judged from a committed GPU measurement (same.report.gpu) where the workflow's m
sweep ran on a CPU (issue 50): measurements planted in a temporary results/gpu folder."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from test_report import INFO, frame

from same import report
from same.report.gpu import (
    MEASUREMENT_GLOB,
    SCHEMA,
    GpuMeasurementError,
    measurement_files,
    newest_gpu_measurement,
    read_gpu_measurement,
)
from same.report.verdicts import Outcome

REPO = Path(__file__).resolve().parents[2]
DEVICE = "NVIDIA H100 80GB HBM3"
#: flat to m = 100, steep beyond: the paper's curve (1.11 ≤ 2, 2.0 ≥ 1.3)
PAPER_LIKE = {1: 9.0, 5: 9.2, 20: 9.5, 100: 10.0, 500: 20.0}
#: the first H100 run's per-nonzero sampler (5.6× from m = 1 to 100), and a flat tail
STEEP_EARLY = {1: 9.358, 5: 15.0, 20: 30.0, 100: 52.073, 500: 60.0}


def plant(root: Path, folder: str, per_m: dict | None, time_utc="2026-11-27T12:00:00+00:00",
          device=DEVICE, commit="0123456789abcdef0123456789abcdef01234567", **changes) -> Path:
    """Write a measurement as benchmarks/gpu_same.py does to
    ``root/folder/same_nytimes_cupy.json`` (``per_m``: the per-nonzero sampler's seconds by m,
    None: that sampler not measured)."""
    runs = {"summed": {"1": 11.2}}
    if per_m is not None:
        runs["nonzero"] = {f"{m:g}": s for m, s in per_m.items()}
    data = {"benchmark": "SAME seconds per pass at paper shape (synthetic corpus)",
            "shape": {"name": "nytimes", "scale": 1.0, "n_docs": 300000, "n_words": 102660,
                      "nnz": 69679427, "n_tokens": 99542125, "generate_seconds": 40.1},
            "settings": {"n_components": 256, "n_inner": 5, "batch_size": 15000, "passes": 2},
            "device": {"backend": "cupy", "name": device, "compute_capability": "9.0",
                       "memory_gib": 79.1, "driver_version": 13000, "runtime_version": 13000,
                       "cupy": "14.2.0"},
            "copy_bandwidth_bytes_per_s": 2.9e12, "seconds_per_pass": runs,
            "time_utc": time_utc, "commit": commit,
            "machine": {"hostname": "gpu-1", "cpu": "x", "logical_cores": 16, "ram_gib": 128},
            "versions": {"python": "3.12.3"}} | changes
    path = root / folder / "same_nytimes_cupy.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def c6(tmp_path, files, backend="numpy"):
    """C6's verdict through report.claims, with ``files`` as the committed measurements."""
    verdicts = report.claims({"toy": {"df": frame(-7.55, -7.60, backend=backend), **INFO}},
                             tmp_path / "claims.md", "s", gpu=files)
    return next(v for v in verdicts if v.claim == "C6")


@pytest.mark.parametrize("per_m, outcome", [(PAPER_LIKE, Outcome.REPRODUCED),
                                            (STEEP_EARLY, Outcome.NOT_REPRODUCED)])
def test_a_committed_gpu_measurement_judges_c6_where_the_sweep_ran_on_a_cpu(tmp_path, per_m,
                                                                             outcome):
    path = plant(tmp_path / "gpu", "h100_2026-11-27", per_m)
    v = c6(tmp_path, measurement_files(tmp_path / "gpu"))
    assert v.outcome is outcome
    assert v.numbers["flat_ratio"] == pytest.approx(per_m[100] / per_m[1])
    assert v.numbers["steep_ratio"] == pytest.approx(per_m[500] / per_m[100])
    assert v.numbers["gpu"]["device"] == DEVICE
    said = v.ours[0]
    for part in (DEVICE, "2026-11-27", "commit 0123456", str(path), "nytimes shape",
                 "D 300,000", "K=256", "per-nonzero sampler",
                 f"m=100: {per_m[100]:.3f}", f"t(100)/t(1) = {per_m[100] / per_m[1]:.2f}"):
        assert part in said, (part, said)
    # one measurement, judged once across datasets; the CPU sweep run here said beside,
    # prefixed with its dataset, not judged
    assert v.dataset is None
    assert v.ours[1].startswith("toy: ours (numpy, ") and "not judged" in v.ours[1]
    md = (tmp_path / "claims.md").read_text()
    assert f"**{outcome.value}**" in md.split("### C6")[1].splitlines()[0]
    assert DEVICE in md


def test_without_a_measurement_c6_is_not_testable_and_says_why(tmp_path):
    for files in (None, [], measurement_files(tmp_path / "no such folder")):
        v = c6(tmp_path, files)
        assert v.outcome is Outcome.NOT_TESTABLE
        assert v.ours[0].startswith("not testable here: no GPU measurement committed "
                                    f"(results/gpu/{MEASUREMENT_GLOB}")
        assert v.numbers["flat_ratio"] == pytest.approx(1.2)  # the CPU sweep's, said beside


def test_a_measurement_missing_one_of_the_rules_m_is_not_testable(tmp_path):
    per_m = {m: s for m, s in PAPER_LIKE.items() if m != 500}
    plant(tmp_path / "gpu", "h100_2026-11-27", per_m)
    v = c6(tmp_path, measurement_files(tmp_path / "gpu"))
    assert v.outcome is Outcome.NOT_TESTABLE
    assert v.ours[0].startswith(f"not testable here: m = 500 not measured on {DEVICE}")
    assert "m=100: 10.000" in v.ours[0]  # what it did measure
    plant(tmp_path / "gpu", "h100_2026-11-27", None)  # the summed sampler only
    v = c6(tmp_path, measurement_files(tmp_path / "gpu"))
    assert v.outcome is Outcome.NOT_TESTABLE
    assert v.ours[0].startswith("not testable here: the per-nonzero sampler ('nonzero') not measured on "
                                f"{DEVICE}")


def test_the_newest_measurement_by_its_recorded_time_wins(tmp_path):
    """By the time the file records, not its modification time or its folder's name."""
    new = plant(tmp_path / "gpu", "a100_2026-11-20", PAPER_LIKE, "2026-11-28T09:00:00+00:00",
                device="NVIDIA A100-SXM4-80GB")
    old = plant(tmp_path / "gpu", "h100_2026-11-27", STEEP_EARLY, "2026-11-27T23:59:59Z")
    os.utime(new, (1_000_000, 1_000_000))  # the newer measurement is the older file
    assert newest_gpu_measurement(tmp_path / "gpu").path == new
    assert newest_gpu_measurement([old]).path == old
    v = c6(tmp_path, measurement_files(tmp_path / "gpu"))
    assert v.outcome is Outcome.REPRODUCED and "(NVIDIA A100-SXM4-80GB; " in v.ours[0]
    assert "2026-11-28, commit" in v.ours[0]
    # a measurement in another time zone is compared in UTC
    plant(tmp_path / "gpu", "h100_2026-11-29", STEEP_EARLY, "2026-11-28T10:30:00+02:00")
    assert newest_gpu_measurement(tmp_path / "gpu").path == new


def test_the_sweeps_own_runs_on_cupy_are_judged_not_the_measurement(tmp_path):
    plant(tmp_path / "gpu", "h100_2026-11-27", STEEP_EARLY)
    v = c6(tmp_path, measurement_files(tmp_path / "gpu"), backend="cupy")
    assert v.outcome is Outcome.REPRODUCED  # the frame's own 1.2/1.0 and 2.0/1.2
    assert v.ours[0].startswith("ours (cupy, ") and DEVICE not in " ".join(v.ours)


@pytest.mark.parametrize("change, message", [
    (lambda p: p.write_text("{not json"), r"unreadable \(JSONDecodeError: "),
    (lambda p: p.write_text(p.read_text().replace('"cupy",', '"numpy",', 1)),
     r"device\.backend: 'cupy' was expected"),
    (lambda p: p.write_text(p.read_text().replace("10.0", '"10.0"')),
     r"seconds_per_pass\.nonzero\.100: '10\.0' is not of type 'number'"),
    (lambda p: p.write_text(p.read_text().replace('"2026-11-27T12:00:00+00:00"',
                                                  '"yesterday"')),
     r"time_utc: 'yesterday' does not match"),
    (lambda p: p.write_text(p.read_text().replace('"2026-11-27T12', '"2026-13-27T12')),
     r"time_utc: month must be in 1\.\.12"),
    (lambda p: p.write_text(p.read_text().replace('"commit"', '"comit"')),
     r"'commit' is a required property"),
])
def test_a_malformed_measurement_is_one_line_naming_the_file(tmp_path, change, message):
    path = plant(tmp_path / "gpu", "h100_2026-11-27", PAPER_LIKE)
    plant(tmp_path / "gpu", "h100_2026-11-28", PAPER_LIKE, "2026-11-28T12:00:00+00:00")
    change(path)  # the older of two: every file is checked, not only the newest
    with pytest.raises(GpuMeasurementError) as err:
        c6(tmp_path, measurement_files(tmp_path / "gpu"))
    text = str(err.value)
    assert "\n" not in text and f"GPU measurement {path}" in text
    assert re.search(message, text), text
    with pytest.raises(GpuMeasurementError, match=re.escape(str(path))):
        read_gpu_measurement(path)


def test_only_the_convention_s_files_are_measurements(tmp_path):
    """results/gpu/<device>_<date>/same_<shape>_cupy.json: not the performance model, nor a
    NumPy smoke test, nor a measurement outside a session's folder."""
    gpu = tmp_path / "gpu"
    keep = plant(gpu, "h100_2026-11-27", PAPER_LIKE)
    (gpu / "model.json").write_text("{}")
    (gpu / "same_nytimes_cupy.json").write_text("{}")
    (gpu / "h100_2026-11-27" / "same_nytimes_numpy.json").write_text("{}")
    (gpu / "h100_2026-11-27" / "gpu_same.log").write_text("x")
    assert measurement_files(gpu) == [keep]
    assert read_gpu_measurement(keep).seconds_per_pass == PAPER_LIKE


def test_the_schema_knows_the_benchmarks_own_name():
    """The schema's benchmark name is the one benchmarks/gpu_same.py writes."""
    src = (REPO / "benchmarks/gpu_same.py").read_text()
    name = re.search(r'^BENCHMARK = "(.+)"$', src, re.M).group(1)
    assert json.loads(SCHEMA.read_text())["properties"]["benchmark"]["const"] == name


def test_the_claims_rule_reads_the_committed_measurements():
    """Rule claims declares them as inputs (a new one re-renders claims.md), from the folder
    same.report.gpu names."""
    smk = (REPO / "workflow/rules/report.smk").read_text()
    rule = smk.split("rule claims:")[1].split("output:")[0]
    assert "gpu=gpu_measurements()" in rule
    common = (REPO / "workflow/rules/common.smk").read_text()
    assert "measurement_files(GPU_DIR)" in common
    assert "gpu=list(smk.input.gpu)" in (REPO / "workflow/scripts/report.py").read_text()


#: device seconds just over the rule's flat bound (t(100)/t(1) = 2.05 > 2), the same passes'
#: wall seconds just under it (1.95): the committed H100 measurement's knife edge
EDGE_DEVICE = {1: 10.0, 5: 11.0, 20: 14.0, 100: 20.5, 500: 30.0}
EDGE_WALL = {1: 10.0, 5: 11.0, 20: 14.0, 100: 19.5, 500: 30.0}


@pytest.mark.parametrize("wall, fragile", [(EDGE_WALL, True), (EDGE_DEVICE, False),
                                           (None, False),
                                           # wall seconds of some m only: no choice to make
                                           ({1: 10.0, 100: 19.5}, False)])
def test_c6_is_fragile_where_the_gpus_wall_seconds_move_it(tmp_path, wall, fragile):
    """C6 is re-judged on the measurement's wall-clock seconds per pass (a free choice of its
    rule): marked fragile, in claims.md too, where they give another outcome; a measurement
    without wall seconds has no such choice."""
    extra = {} if wall is None else {
        "wall_seconds_per_pass": {"nonzero": {f"{m:g}": s for m, s in wall.items()}}}
    plant(tmp_path / "gpu", "h100_2026-11-27", EDGE_DEVICE, **extra)
    v = c6(tmp_path, measurement_files(tmp_path / "gpu"))
    assert v.outcome is Outcome.PARTLY
    flip = ("read from the GPU measurement's wall seconds per pass (the rule reads its device "
            "seconds): reproduced")
    assert v.fragile == ((flip,) if fragile else ())
    head = (tmp_path / "claims.md").read_text().split("### C6")[1].splitlines()[0]
    assert head.endswith(f"**partly (fragile: {flip})**" if fragile else "**partly**")
    if wall is not None and len(wall) == len(EDGE_WALL):
        assert v.ours[1].startswith("the same pass's wall-clock seconds on the host")
        assert f"t(100)/t(1) = {wall[100] / wall[1]:.2f}" in v.ours[1]


def test_one_gpu_measurement_is_one_verdict_not_one_per_corpus(tmp_path):
    """Two corpora whose m sweeps ran on a CPU read the same committed GPU measurement: C6 is
    one verdict across datasets (each corpus's own CPU sweep a line of it, not judged), so
    the overview and "Across corpora" do not count it as two corpora agreeing."""
    plant(tmp_path / "gpu", "h100_2026-11-27", PAPER_LIKE)
    datasets = {name: {"df": frame(-7.55, -7.60).assign(dataset=name), **INFO}
                for name in ("toy", "other")}
    verdicts = report.claims(datasets, tmp_path / "claims.md", "s",
                             gpu=measurement_files(tmp_path / "gpu"))
    c6s = [v for v in verdicts if v.claim == "C6"]
    assert len(c6s) == 1 and c6s[0].dataset is None
    assert [line.split(":")[0] for line in c6s[0].ours[-2:]] == ["toy", "other"]
    assert set(c6s[0].numbers["cpu_sweep"]) == {"toy", "other"}
    md = (tmp_path / "claims.md").read_text()
    assert md.count("### C6") == 1
    across = md.split("## Across corpora")[1].split("\n## ")[0]
    assert "C6" not in across
    # the finding that opens claims.md names it once, with the claims judged across datasets
    assert (f"- Judged once, across datasets: C6 (from the GPU measurement on {DEVICE}, not a "
            "corpus's runs): reproduced; C9: ") in md


def test_a_corpus_whose_sweep_ran_on_a_gpu_keeps_its_own_c6(tmp_path):
    """Of two corpora, one's m sweep ran on a CPU (C6 read from the GPU measurement) and the
    other's on CuPy (C6 judged from its own runs): the merged verdict stands for the first
    only, in claims.md's summary and in the overview's cells, and the second keeps its own."""
    from same.report.overview import verdict_grid

    plant(tmp_path / "gpu", "h100_2026-11-27", PAPER_LIKE)
    datasets = {"toy": {"df": frame(-7.55, -7.60).assign(dataset="toy"), **INFO},
                "gpu": {"df": frame(-7.55, -7.60, backend="cupy").assign(dataset="gpu"),
                        **INFO}}
    verdicts = report.claims(datasets, tmp_path / "claims.md", "s",
                             gpu=measurement_files(tmp_path / "gpu"))
    merged, own = sorted((v for v in verdicts if v.claim == "C6"),
                         key=lambda v: v.dataset or "")
    assert merged.dataset is None and merged.covers == ("toy",)
    assert own.dataset == "gpu" and own.gpu_device is None
    md = (tmp_path / "claims.md").read_text()
    assert "| C6 | toy | " in md and "| C6 | gpu | " in md
    rows, columns, cells = verdict_grid(verdicts)
    c6 = {columns[c].split("\n")[0]: v for (r, c), v in cells.items() if rows[r][0] == "C6"}
    assert c6["toy"] is merged and c6["gpu"] is own
