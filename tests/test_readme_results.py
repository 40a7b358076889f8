"""Issue 49: every number the README says about the committed workflow results is rendered from
them by code (benchmarks/readme_results.py), and a number edited by hand fails."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "readme_results.py"

spec = importlib.util.spec_from_file_location("readme_results", SCRIPT)
rr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rr)


def _block(text: str, name: str) -> str:
    m = re.search(rf"<!-- bench:{name}:begin -->\n(.*?)<!-- bench:{name}:end -->", text, re.S)
    assert m, name
    return m.group(1).strip()


def test_the_readmes_result_blocks_are_their_render():
    res = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True,
                         text=True, cwd=REPO)
    assert res.returncode == 0, res.stderr
    readme = (REPO / "README.md").read_text()
    blocks = rr.render_blocks()
    for name, body in blocks.items():
        assert _block(readme, name) == body.strip()
        assert body.strip(), name


def test_a_number_edited_by_hand_fails_the_check(tmp_path):
    readme = (REPO / "README.md").read_text()
    body = _block(readme, "findings_kos")
    number = re.search(r"−?\d+\.\d+", body).group(0)
    edited = readme.replace(body, body.replace(number, number[:-1] + str(
        (int(number[-1]) + 1) % 10), 1), 1)
    assert edited != readme
    (tmp_path / "README.md").write_text(edited)
    res = subprocess.run([sys.executable, str(SCRIPT), "--check", "--readme",
                          str(tmp_path / "README.md")], capture_output=True, text=True, cwd=REPO)
    assert res.returncode == 1
    assert "findings_kos differ from the committed results" in res.stderr


def test_the_render_follows_the_results(tmp_path):
    """A changed record (the quick profile's wall time) changes the sentence rendered from it;
    the findings come from the traces through the report's functions (CGS's final ll)."""
    runs = json.loads(rr.WORKFLOW_RUNS.read_text())
    quick = " ".join(rr.render_wall("quick").split())
    minutes, seconds = divmod(round(runs["quick"]["wall_seconds"]), 60)
    assert f"took {minutes} min {seconds} s" in quick
    assert f"{runs['quick']['jobs']} jobs, {runs['quick']['fits']} of them fits" in quick
    moved = {**runs, "quick": {**runs["quick"], "wall_seconds": 1234.4}}
    target = tmp_path / "workflow_runs.json"
    target.write_text(json.dumps(moved))
    old, rr.WORKFLOW_RUNS = rr.WORKFLOW_RUNS, target
    try:
        assert "took 20 min 34 s" in rr.render_wall("quick")
    finally:
        rr.WORKFLOW_RUNS = old
    from same.report import configuration_frame, load_traces
    from same.report.paper import METHOD_NAMES
    from same.report.stats import t_interval
    from same.report.traces import final_lls

    df = configuration_frame(load_traces(sorted(
        p for lab in METHOD_NAMES for p in REPO.glob(f"results/kos/{lab}/K*/seed*/trace.csv"))),
        "published")
    best = max(METHOD_NAMES, key=lambda lab: final_lls(df, lab).mean())
    mean, lo, hi = t_interval(final_lls(df, best))
    text = " ".join(rr.render_findings(REPO / "results", "kos", REPO / "results/claims.md")
                    .split())
    assert (f"{METHOD_NAMES[best]} is best ({rr.num(mean, 4)} ± {rr.num((hi - lo) / 2, 4)} "
            "nats/token") in text
