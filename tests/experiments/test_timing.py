"""Seconds measured alone (issue 49): what else ran on the machine while a measurement was taken
(same.experiments.machine_load), recorded in every run's meta.json; the timing rule's
interleaved, repeated measurement of every method (same.experiments.timing)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from same.experiments.machine_load import (
    SHARED_CORES,
    LoadMeter,
    is_shared,
    machine_busy_seconds,
)
from same.experiments.runner import RunSpec, run
from same.experiments.timing import ARTEFACT, main, measure
from same.report.timing import load_timing, refused, rounds_of


def _spin(seconds: float) -> None:
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        pass


BUSY = "import time\nt0 = time.perf_counter()\nwhile time.perf_counter() - t0 < 3: pass\n"


def test_a_busy_process_beside_a_measurement_makes_it_shared():
    """A second process spinning on a core beside a 1.5-second measurement keeps most of a
    core busy on average: far above the threshold; the measurement's own CPU time is not
    counted as other work. (Needs /proc/stat: Linux, as CI is.)"""
    assert machine_busy_seconds() is not None
    child = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        time.sleep(0.3)  # the child is spinning
        with LoadMeter() as m:
            _spin(1.5)
        busy = m.record()
    finally:
        child.wait()
    assert busy["other_cores"] > 0.5 and busy["shared"]
    # the measurement's own CPU time is not other work: other = machine busy − own
    assert 0 < busy["own_cpu_seconds"] <= busy["wall_seconds"] * 1.05
    assert busy["other_cores"] == pytest.approx(busy["other_cpu_seconds"] / busy["wall_seconds"])
    assert busy["threshold_cores"] == SHARED_CORES
    # unknown load counts as shared; a record below the threshold does not
    assert is_shared(None) and is_shared({"other_cores": None})
    assert not is_shared({"other_cores": SHARED_CORES / 2})
    with pytest.raises(RuntimeError, match="before the measured block ended"):
        LoadMeter().record()


def test_every_run_records_what_else_ran_beside_it(tmp_path, split_path):
    spec = RunSpec(method="vb_batch", n_components=3, doc_topic_prior=0.1,
                   topic_word_prior=0.1, seed=0, budget=2)
    out = run(spec, split_path, tmp_path / "r", progress=False)
    load = json.loads((out / "meta.json").read_text())["machine_load"]
    assert set(load) >= {"other_cores", "wall_seconds", "own_cpu_seconds", "shared"}
    assert load["wall_seconds"] > 0 and load["logical_cores"] >= 1


def _entries(budget_same=4):
    base = dict(n_components=3, doc_topic_prior=0.1, topic_word_prior=0.1, seed=0)
    return {"same": {"spec": {**base, "method": "same", "budget": budget_same,
                              "params": {"n_copies": 5}}},
            "cgs": {"spec": {**base, "method": "cgs", "budget": 30}}}


def test_measure_interleaves_rounds_and_stops_at_the_cap(split_path):
    """Each round times every entry once, in an order rotated by one each round, at the
    round's seed; a run stops at its first checkpoint past the cap once it has done 2 passes,
    or at its budget."""
    out = measure(_entries(), split_path, seeds=[0, 1], repeats=3, cap_seconds=1e-9,
                  progress=False)
    assert out["artefact"] == ARTEFACT and out["repeats"] == 3 and out["interleaved"]
    for name in ("same", "cgs"):
        rounds = out["entries"][name]["rounds"]
        assert [r["seed"] for r in rounds] == [0, 1, 0]
        for r in rounds:
            assert r["points"] == [1, 2]  # the cap passed at once: two passes, then stop
            assert r["seconds"][0] > 0 and r["seconds"][1] >= r["seconds"][0]
            assert "other_cores" in r["machine_load"] and r["attempts"] >= 1
    whole = measure({"same": _entries()["same"]}, split_path, seeds=[0], repeats=3,
                    cap_seconds=1e6, progress=False)
    assert all(r["points"] == [1, 2, 3, 4] and r["complete"]
               for r in whole["entries"]["same"]["rounds"])


def test_timing_json_round_trips_into_the_report(tmp_path, split_path):
    """The command writes a timing.json the report reads; a repeat whose rounds shared the
    machine is refused there (planted by editing its record)."""
    out = tmp_path / "timing.json"
    rc = main(["--split", str(split_path), "--entries", json.dumps(_entries()), "--seeds", "0",
               "--repeats", "3", "--cap-seconds", "0.01", "--out", str(out)])
    assert rc == 0
    timing = load_timing(out)
    for name in ("same", "cgs"):
        if refused(timing, name) is None:  # unless this machine was busy meanwhile
            rounds = rounds_of(timing, name)
            assert len(rounds) == 3 and all(r["seconds"][-1] > 0 for r in rounds)
    data = json.loads(out.read_text())
    for r in data["entries"]["same"]["rounds"]:
        r["shared"] = True
        r["machine_load"]["other_cores"] = 0.9
    out.write_text(json.dumps(data))
    assert refused(load_timing(out), "same").startswith(
        "same's seconds were measured beside other work in 3 of 3 rounds")


def test_bad_timing_arguments_are_one_line(tmp_path, split_path, capsys):
    assert main(["--split", str(split_path), "--entries", "[1]", "--seeds", "0", "--out",
                 str(tmp_path / "t.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--entries: a JSON object" in err
    (tmp_path / "mine.txt").write_text("my notes")
    assert main(["--split", str(split_path), "--entries", json.dumps(_entries()), "--seeds",
                 "0", "--out", str(tmp_path / "mine.txt")]) == 2
    assert "mine.txt" in capsys.readouterr().err
    assert (tmp_path / "mine.txt").read_text() == "my notes"
    bad = dict(_entries())
    bad["same"]["spec"]["budget"] = 0
    assert main(["--split", str(split_path), "--entries", json.dumps(bad), "--seeds", "0",
                 "--out", str(tmp_path / "t.json")]) == 2
    assert "budget must be a positive integer" in capsys.readouterr().err
    assert not (tmp_path / "t.json").exists()



@pytest.mark.parametrize("spec, message", [
    ({"method": "same"}, "missing field(s) budget, doc_topic_prior, n_components, seed, "
                         "topic_word_prior"),
    ({"bogus": 1}, "unknown field(s) bogus; known: backend, budget, checkpoints, "
                   "doc_topic_prior, document_order, label, method, n_components, params, "
                   "seed, threads, topic_word_prior, train_fraction, validation_fraction"),
])
def test_an_entry_spec_is_read_as_fit_reads_a_spec(tmp_path, split_path, capsys, spec, message):
    """``--entries '{"a": {"spec": {"method": "same"}}}'`` (or an extra field "bogus") was a
    TypeError traceback from RunSpec(**spec): read by RunSpec.from_dict, one line naming
    --entries and the entry, nothing written."""
    if "bogus" in spec:
        spec = {**_entries()["same"]["spec"], **spec}
    rc = main(["--split", str(split_path), "--entries", json.dumps({"a": {"spec": spec}}),
               "--seeds", "0", "--out", str(tmp_path / "t.json")])
    assert rc == 2
    assert capsys.readouterr().err == ("python -m same.experiments.timing: error: --entries: "
                                       f"entry 'a': {message}\n")
    assert not (tmp_path / "t.json").exists()


GOOD_ROUND = {"round": 0, "seed": 0, "points": [1, 2], "seconds": [0.5, 1.0],
              "machine_load": {"other_cores": 0.01}}


@pytest.mark.parametrize("entries, message", [
    ({"same": ["not", "an", "object"]}, "entry 'same': an object with a list of rounds"),
    ({"same": {"rounds": "r0"}}, "entry 'same': an object with a list of rounds"),
    ({"same": {"rounds": [7]}}, "entry 'same': an object with a list of rounds"),
    ({"same": {"rounds": [GOOD_ROUND | {"points": ["1", "2"]}]}},
     "entry 'same' round 0: points and seconds must be increasing lists of numbers of one length"),
    ({"same": {"rounds": [GOOD_ROUND | {"seconds": [True, 2.0]}]}},
     "entry 'same' round 0: points and seconds must be increasing lists of numbers of one length"),
    ({"same": {"rounds": [GOOD_ROUND | {"seconds": [1.0]}]}},
     "entry 'same' round 0: points and seconds must be increasing lists of numbers of one length"),
    ({"same": {"rounds": [GOOD_ROUND | {"points": [2, 1]}]}},
     "entry 'same' round 0: points and seconds must be increasing lists of numbers of one length"),
    ({"same": {"rounds": [GOOD_ROUND | {"machine_load": "idle"}]}},
     "entry 'same' round 0: machine_load must be an object whose other_cores is a number"),
    ({"same": {"rounds": [GOOD_ROUND | {"machine_load": {"other_cores": "0.1"}}]}},
     "entry 'same' round 0: machine_load must be an object whose other_cores is a number"),
])
def test_a_malformed_timing_file_is_one_line_naming_it(tmp_path, entries, message):
    """Every part of a timing.json the report reads is checked before numpy sees it: a
    hand-edited or truncated file is a TimingError naming the file, never a traceback."""
    from same.report.timing import TimingError

    path = tmp_path / "timing.json"
    path.write_text(json.dumps({"artefact": ARTEFACT, "entries": entries}))
    with pytest.raises(TimingError) as err:
        load_timing(path)
    assert str(err.value) == f"{path}: {message}"
    good = {"artefact": ARTEFACT, "entries": {"same": {"rounds": [GOOD_ROUND]}}}
    path.write_text(json.dumps(good))
    assert load_timing(path) == good


def test_wait_quiet_waits_out_a_burst_of_other_work(monkeypatch):
    """One core busy for the first second, then 0.1: the wait ends with the first quiet
    window (0.25 s) after it; always busy, at the limit; the load unreadable, at once."""
    from same.experiments import machine_load

    clock, busy = [0.0], [0.0]

    def sleep(seconds, cores=lambda t: 1.0 if t <= 1.0 else 0.1):
        clock[0] += seconds
        busy[0] += seconds * cores(clock[0])

    monkeypatch.setattr(machine_load, "machine_busy_seconds", lambda: busy[0])
    wait = machine_load.wait_quiet
    assert wait(30, clock=lambda: clock[0], sleep=sleep) == pytest.approx(1.25)
    clock[0] = 0.0
    assert wait(30, clock=lambda: clock[0], sleep=lambda s: sleep(s, lambda t: 1.0)) == \
        pytest.approx(30.0)
    monkeypatch.setattr(machine_load, "machine_busy_seconds", lambda: None)
    clock[0] = 0.0
    assert wait(30, clock=lambda: clock[0], sleep=sleep) == 0.0


def test_a_shared_measurement_is_retried_once_the_machine_is_quiet(monkeypatch, split_path,
                                                                    capsys):
    """A measurement that shared the machine is taken again after waiting (up to quiet_wait
    seconds) for the other work to end, not at once into the same burst, and says so before
    it waits (the wait was silent: minutes of nothing in the log); the round records its
    tries and the seconds waited, and keeps only the clean measurement."""
    from same.experiments import machine_load

    shared = iter([True, False])
    record = machine_load.LoadMeter.record
    monkeypatch.setattr(machine_load.LoadMeter, "record",
                        lambda self: record(self) | {"shared": next(shared, False)})
    waits = []
    monkeypatch.setattr(machine_load, "wait_quiet",
                        lambda max_seconds, threshold: waits.append((max_seconds, threshold))
                        or 2.5)
    out = measure({"same": _entries()["same"]}, split_path, seeds=[0], repeats=2,
                  cap_seconds=1e-9, quiet_wait=12.0, progress=True)
    said = [ln for ln in capsys.readouterr().err.splitlines() if "quiet machine" in ln]
    assert len(said) == 1 and said[0].startswith("round 1/2 same: other work used ")
    assert said[0].endswith(f"cores meanwhile (over {SHARED_CORES:g}); waiting up to 12 s for a "
                            "quiet machine, then timing it again (try 2 of 3)")
    rounds = out["entries"]["same"]["rounds"]
    assert [(r["attempts"], r["waited_seconds"], r["shared"]) for r in rounds] == [
        (2, 2.5, False), (1, 0.0, False)]
    assert waits == [(12.0, SHARED_CORES)]
    with pytest.raises(ValueError, match="quiet_wait must be a number of seconds >= 0"):
        measure({"same": _entries()["same"]}, split_path, seeds=[0], quiet_wait=-1)
