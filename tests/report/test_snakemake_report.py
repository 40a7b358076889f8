"""``snakemake --report`` (issue 31): the helpers that check a report of the tiny end-to-end run
(tests/test_workflow.py) against the workflow's report() marks; the report rules as localrules
and the SLURM profile's resources; the committed report in headless Chromium. The verdict
overview figure: tests/report/test_overview.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html import unescape
from pathlib import Path

import numpy as np
import pytest

from same.report.captions import CAPTION_NOTES, FIGURE_CLAIMS
from same.report.figures import figure_caption
from same.report.paper import CLAIMS

REPO = Path(__file__).resolve().parents[2]
#: The figures, tables and claims: run where Snakemake runs, never as cluster jobs.
REPORT_RULES = {"fig1_passes", "fig1_seconds", "fig1c_samples", "fig2a_m", "fig2b_anneal",
                "prior_scale", "table1", "time_to_quality", "sensitivity", "crossover_study",
                "table2", "claims", "tuning"} | {
    f"{t}_page" for t in ("table1", "time_to_quality", "table2", "tuning", "crossover_study",
                          "topic_recovery", "claims")}  # each table's and claims' HTML page
#: The rules that draw a figure (the rest of REPORT_RULES make tables and pages).
FIGURE_RULES = {"fig1_passes", "fig1_seconds", "fig1c_samples", "fig2a_m", "fig2b_anneal",
                "prior_scale", "sensitivity", "crossover_study"}

# Prints, as one JSON line, the workflow as Snakemake parses it: its localrules, and per rule
# the output patterns marked with report() and the path of each one's caption file.
_FACTS = r"""
import json, sys
from pathlib import Path
from snakemake.api import SnakemakeApi
from snakemake.io import get_flag_value, is_flagged, strip_wildcard_constraints
from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

with SnakemakeApi(OutputSettings()) as api:
    w = api.workflow(resource_settings=ResourceSettings(cores=1), snakefile=Path(sys.argv[1]),
                     config_settings=ConfigSettings(configfiles=[Path(p) for p in sys.argv[2:]])
                     )._workflow
    report = {r.name: {strip_wildcard_constraints(str(f)):
                       str(get_flag_value(f, "report").caption.get_path_or_uri(secret_free=True))
                       for f in r.output if is_flagged(f, "report")} for r in w.rules}
    print(json.dumps({"localrules": sorted(w._localrules), "report": report}))
"""


def workflow_facts(snakefile, *configfiles, env=None) -> dict:
    """{"localrules": [rule], "report": {rule: {output pattern: caption file}}} of a workflow."""
    res = subprocess.run([sys.executable, "-c", _FACTS, str(snakefile), *map(str, configfiles)],
                         capture_output=True, text=True, env={**os.environ, **(env or {})},
                         timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def report_results(html: str) -> dict:
    """Path → entry (caption, rule, ...) of every result a ``snakemake --report`` HTML holds."""
    m = re.search(r"var results = (\{.*?\});?\s*\n", html)
    assert m, "no results in the report"
    return json.loads(m.group(1))


def rst_text(caption_html: str) -> str:
    """A rendered caption's text: tags dropped, entities decoded, whitespace made single."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", caption_html)).split())


def check_snakemake_report(smk, args, env, work: Path, snakefile, configfiles, dataset="kos"):
    """``snakemake --report`` of a finished run holds every output the workflow marks with
    report() (and no other), every figure and table the run made, and each figure's caption is
    the text :func:`~same.report.figures.figure_caption` gives it: the one drawn under it."""
    html_path = work / "results/report.html"
    res = smk(*args, "--report", str(html_path), env=env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    results = report_results(html_path.read_text())
    facts = workflow_facts(snakefile, *configfiles, env=env)
    declared = {pattern.format(dataset=dataset): rule
                for rule, outs in facts["report"].items() for pattern in outs
                if (work / pattern.format(dataset=dataset)).exists()}
    assert set(results) == set(declared), sorted(set(results) ^ set(declared))
    made = [p.relative_to(work).as_posix() for p in (work / "figures").rglob("*.*")]
    made += [p.relative_to(work).as_posix() for p in (work / "results").glob("*/*.md")]
    made += [p.relative_to(work).as_posix() for p in (work / "results").glob("*/*.html")]
    made += ["results/claims.md", "results/claims.html", "results/verdict_overview.png",
             "results/verdict_overview.pdf"]
    assert set(made) <= set(declared), sorted(set(made) - set(declared))
    # 8 figures (PNG, PDF), 5 tables (CSV, Markdown, HTML page) and sensitivity.csv, claims.md
    # and its page, the overview (PNG, PDF)
    assert len(declared) == 2 * 8 + 3 * 5 + 1 + 2 + 2, sorted(declared)
    # the settings this run wrote: each table's notes and claims.md's Setting line
    settings = {ln.removeprefix("- ") for p in (work / "results").glob("*/*.md")
                for ln in p.read_text().splitlines() if ln.startswith("- ") or "α=" in ln}
    settings |= {ln.removeprefix("Setting: ") for ln in
                 (work / "results/claims.md").read_text().splitlines() if ln.startswith("Setting: ")}
    for path, rule in declared.items():
        entry = results[path]
        assert entry["job_properties"]["rule"] == rule
        caption = rst_text(entry["caption"])
        if path.endswith(("claims.md", "claims.html")):
            assert "Setting: " in caption
            continue
        # the caption the figure draws: figure_caption(its name, the setting it was given);
        # a table whose notes hold its whole caption (tuning's) shows that line itself
        # (a figure reading its own runs, same.report's FIGURE_RUNS, says their seeds and m:
        # test_captions_name_the_seeds_and_m_of_the_runs_each_figure_reads checks those)
        assert (caption in {figure_caption(Path(path).stem, s) for s in settings} | settings
                or (caption.startswith(f"{dataset}, K=") and
                    caption.endswith(figure_caption(Path(path).stem, "")))), (path, caption)
    return results


def job_resources(out: str) -> dict[str, list[dict]]:
    """Rule → the resources of each of its jobs, from a dry run's job listing."""
    jobs, rule = {}, None
    for line in out.splitlines():
        m = re.match(r"(?:local)?rule (\w+):", line)
        if m:
            rule = m.group(1)
        elif line.strip().startswith("resources:") and rule:
            pairs = (kv.split("=", 1) for kv in line.split(":", 1)[1].split(", "))
            jobs.setdefault(rule, []).append({k.strip(): v for k, v in pairs})
    return jobs


def check_cluster_resources(out: str):
    """Under profiles/slurm the figures, tables and claims are localrules (never submitted)
    asking little; each fit asks for a fit's (issue 31)."""
    facts = workflow_facts(REPO / "Snakefile", REPO / "config/paper.yaml")
    assert set(facts["localrules"]) == REPORT_RULES
    jobs = job_resources(out)
    planned = REPORT_RULES - {"topic_recovery_page"}  # synthetic corpora only
    assert planned <= set(jobs), sorted(jobs)
    for rule in planned:
        for res in jobs[rule]:
            assert int(res["mem_mb"]) <= 4000 and int(res["runtime"]) <= 30, (rule, res)
            assert res["cpus_per_task"] == "1", (rule, res)
    for res in jobs["fit"]:
        assert (int(res["mem_mb"]), int(res["runtime"])) == (64000, 720), res
        # CPUs: the job's threads, the config's (issue 54: the profile asked 8 whatever they were)
        assert "cpus_per_task" not in res, res
    # timed alone on one machine, so a node of their own under SLURM (issue 54)
    for rule in ("timing", "scaling"):
        assert all(res["slurm_extra"] == "--exclusive" for res in jobs[rule]), jobs[rule]
    exclusive = [res["slurm_extra"] == "--exclusive" for res in jobs["fit"]]
    assert 0 < sum(exclusive) < len(exclusive)  # the m sweep's runs, not the others


def test_report_rules_are_local_and_declared():
    """Every figure and table rule marks its outputs for the report and runs locally; fits do
    neither."""
    facts = workflow_facts(REPO / "Snakefile")
    assert set(facts["localrules"]) == REPORT_RULES
    for rule in REPORT_RULES:
        assert facts["report"][rule], rule
        assert all(Path(c).resolve().parent == REPO / "workflow/report"
                   for c in facts["report"][rule].values())
    assert not facts["report"]["fit"] and not facts["report"]["scaling"]


def report_by_the_readme_command(tmp_path: Path) -> Path:
    """Run the README's report command exactly as written (issue 39: it once needed --cores)
    in a copy of the working tree (what git tracks or would add: the committed outputs, no
    model, split or Snakemake metadata); returns the report it wrote."""
    import shlex

    readme = (REPO / "README.md").read_text()
    m = re.search(r"`(snakemake --report (\S+))`", readme)
    assert m, "the README gives no `snakemake --report ...` command"
    tree = tree_copy(tmp_path / "tree")
    res = subprocess.run(shlex.split(m.group(1)), cwd=tree, capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return tree / m.group(2)


def tree_copy(dst: Path) -> Path:
    """What a fresh clone holds (the files git tracks or would add, so uncommitted edits too;
    no model, split or Snakemake metadata), copied to ``dst``."""
    import shutil

    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.splitlines()
    for f in files:
        if (REPO / f).is_file():
            (dst / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / f, dst / f)
    return dst


@pytest.mark.slow
def test_report_only_path_rebuilds_every_committed_output_without_a_fit(tmp_path):
    """Issue 39: from what a fresh clone holds, the README's report-only command rebuilds
    every figure, table and claims.md of the quick profile from the committed traces, defining
    no split, fit or benchmark rule, and every rebuilt output equals the committed one byte
    for byte (so the committed outputs are what the committed traces give)."""
    import shlex

    readme = (REPO / "README.md").read_text()
    m = re.search(r"`(snakemake --cores all --config report_only=True --forceall)`", readme)
    assert m, "the README gives no report-only command"
    tree = tree_copy(tmp_path / "tree")
    committed = {p.relative_to(tree): p.read_bytes() for d in ("results", "figures")
                 for p in (tree / d).rglob("*") if p.is_file()}
    env = dict(os.environ, PYTHONPATH=str(tree))
    res = subprocess.run(shlex.split(m.group(1)), cwd=tree, capture_output=True, text=True,
                         timeout=900, env=env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    log = res.stdout + res.stderr
    assert not re.search(r"^(localrule|rule) (fit|split|scaling|tuning_fit)\b", log, re.M)
    rebuilt = [p for p in committed if re.fullmatch(
        r"figures/kos/[a-z_0-9]+\.(png|pdf)|results/kos/[a-z_0-9]+\.(md|csv|json|html)|"
        r"results/claims\.(md|html)|results/verdict_overview\.(png|pdf)", p.as_posix())
        and p.name != "timing.json"]  # the seconds measured alone: an input, as the traces
    # 8 figures (PNG, PDF), 5 tables (CSV, Markdown, HTML page), tuning.json, sensitivity.csv,
    # claims.md and its page, the verdict overview (PNG, PDF)
    assert len(rebuilt) == 2 * 8 + 3 * 5 + 2 + 4, rebuilt
    newer = [p for p in rebuilt if (tree / p).stat().st_mtime_ns
             > (tree / "Snakefile").stat().st_mtime_ns]
    assert sorted(newer) == sorted(rebuilt)  # each was written by this run
    changed = [str(p) for p in rebuilt if (tree / p).read_bytes() != committed[p]]
    assert changed == []


@pytest.fixture(scope="module")
def committed_report(tmp_path_factory) -> Path:
    """The report of the committed KOS outputs, made by the README's command (once)."""
    return report_by_the_readme_command(tmp_path_factory.mktemp("committed"))


def chromium() -> str:
    """Debian's Chromium (installed by .ci/run when absent); a failure in CI, a skip elsewhere."""
    import shutil

    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        msg = "no chromium on PATH (apt-get install chromium; .ci/run installs it)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(msg)
        pytest.skip(msg)
    return path


def test_report_in_headless_chromium_shows_the_verdicts_and_every_figure(committed_report):
    """Issue 39: the report opened in a real browser (headless Chromium, driven by Playwright):
    the verdicts category opens claims.md's HTML page in the report itself, and its summary
    table's rows are in the rendered DOM; the verdict overview is shown as an image; every PNG
    the report holds decodes in the browser; every table is offered as an HTML page."""
    import base64

    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.goto(committed_report.resolve().as_uri())
            page.get_by_text("All claims · verdicts").first.click()
            page.get_by_text("claims summary (claims.md)").first.click()
            page.locator("[iconname=eye]").first.click()
            frame = page.frame_locator("iframe")
            assert frame.locator("h1").first.inner_text() == "Paper claims: verdicts from this run"
            cells = frame.locator("td").all_inner_texts()
            for claim in ("C1", "C4", "C6", "C9"):
                assert claim in cells, cells[:20]
            assert any(c.startswith(("reproduced", "partly", "not reproduced")) for c in cells)
            page.get_by_text("All claims · verdicts").first.click()
            page.get_by_text("verdict overview").first.click()
            page.locator("label[for=toggle-format-png]").click()  # FORMAT: png (pdf is first)
            page.locator("[iconname=eye]").first.click()
            image = page.locator('img[src^="data:image/png"]').first
            image.wait_for()
            assert image.evaluate("e => e.complete && e.naturalWidth") > 500
            results = page.evaluate("Object.fromEntries(Object.entries(results).map("
                                    "([k, r]) => [k, [r.mime_type, r.data_uri]]))")
            pngs = [k for k, (mime, _) in results.items() if mime == "image/png"]
            assert len(pngs) == 8 + 1, pngs  # 8 figures of KOS, the verdict overview
            widths = page.evaluate("""async (uris) => Promise.all(uris.map(async (u) => {
                const img = new Image(); img.src = u; await img.decode();
                return img.naturalWidth; }))""", [results[k][1] for k in pngs])
            assert min(widths) > 500, dict(zip(pngs, widths))
        finally:
            browser.close()
    pages = {k: base64.b64decode(uri.split("base64,", 1)[1]).decode()
             for k, (mime, uri) in results.items() if mime == "text/html"}
    tables = {"results/claims.html"} | {f"results/kos/{t}.html" for t in
                                         ("table1", "table2", "time_to_quality", "tuning",
                                          "crossover_study")}
    assert set(pages) == tables
    assert all("<table>" in html for html in pages.values())


def test_zoom_panels_are_drawn_in_the_report_seen_in_headless_chromium(committed_report):
    """Issue 53: each committed figure whose verdicts turn on final differences of a few
    hundredths (fig1_passes, fig1c_samples, fig2a_m, fig2b_anneal) shows a zoom on its last
    checkpoints. Each figure's PNG is taken from the report, shown in headless Chromium and
    screenshot; the zoom panels' face colour (plotting.ZOOM_FACE, used nowhere else) covers a
    visible share of the screenshot, one panel per held-out estimator and configuration."""
    import io

    from matplotlib.colors import to_rgb
    from PIL import Image
    from playwright.sync_api import sync_playwright

    from same.report.plotting import ZOOM_FACE

    face = np.array(to_rgb(ZOOM_FACE)) * 255
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.goto(committed_report.resolve().as_uri())
            results = page.evaluate("Object.fromEntries(Object.entries(results).map("
                                    "([k, r]) => [k, r.data_uri]))")
            shares = {}
            for name in ("fig1_passes", "fig1c_samples", "fig2a_m", "fig2b_anneal"):
                page.set_content(f'<img id="f" src="{results[f"figures/kos/{name}.png"]}">')
                shot = page.locator("#f").screenshot()
                pixels = np.asarray(Image.open(io.BytesIO(shot)).convert("RGB"), dtype=float)
                tinted = (np.abs(pixels - face) <= 3).all(axis=-1)
                shares[name] = tinted.mean()
        finally:
            browser.close()
    assert all(share > 0.02 for share in shares.values()), shares


def test_report_of_the_committed_kos_outputs_holds_every_figure_and_table(committed_report):
    """Issue 31: ``snakemake --report`` of the committed KOS outputs (the default profile)
    holds every output its rules mark with report(): 8 figures (PNG, PDF), 5 tables (CSV,
    Markdown; tuning's among them), sensitivity.csv, claims.md and the verdict overview (PNG,
    PDF)."""
    results = report_results(committed_report.read_text())
    facts = workflow_facts(REPO / "Snakefile")
    declared = {pattern.format(dataset="kos") for outs in facts["report"].values()
                for pattern in outs if "topic_recovery" not in pattern}
    assert set(results) == declared, sorted(set(results) ^ declared)
    assert len(declared) == 2 * 8 + 3 * 5 + 1 + 2 + 2, sorted(declared)
    assert all((REPO / path).is_file() for path in declared)


def test_captions_name_the_seeds_and_m_of_the_runs_each_figure_reads(committed_report):
    """Issue 39: each figure's and table's caption (the report's, which its figure also draws)
    names the seeds and SAME's m of exactly the runs the rule reads: "seed 0" where it reads
    only seed 0, every m of the m sweep where it reads the sweep, m = 1 beside m = 100 where it
    reads fig1c's long run. The runs are the rule's inputs as Snakemake plans them (a dry run),
    their m from each run's meta.json."""
    from test_workflow import smk

    from same.model.sampler import SameLDA

    res = smk("-n", "--forceall", "--config", "report_only=True")
    assert res.returncode == 0, res.stderr[-2000:]
    jobs = re.findall(r"^(?:local)?rule (\w+):\n    input: (.*)$", res.stdout, re.M)
    runs = {rule: sorted(set(re.findall(r"results/kos/([a-z0-9_.]+)/K\d+/seed(\d+)/trace\.csv",
                                        inputs)))
            for rule, inputs in jobs}
    captions = {}
    for entry in report_results(committed_report.read_text()).values():
        props = entry["job_properties"]
        captions[props["rule"]] = rst_text(entry["caption"])
    checked = []
    for rule, read in runs.items():
        if rule not in captions or rule == "claims" or not read:
            continue
        seeds = sorted({int(s) for _, s in read})
        ms = set()
        for label, seed in read:
            meta = json.loads((REPO / f"results/kos/{label}/K64/seed{seed}/meta.json")
                              .read_text())
            if meta["settings"]["method"] == "same":
                ms.add(meta["settings"]["params"].get("n_copies", SameLDA().n_copies))
        text = captions[rule]
        said = f"seeds {seeds}" if len(seeds) > 1 else f"seed {seeds[0]}"
        assert said in text and (len(seeds) > 1 or "seeds [" not in text), (rule, said, text)
        m = sorted(ms)
        said_m = (f"SAME m={m[0]:g} " if len(m) == 1 else
                  "SAME m ∈ {" + ", ".join(f"{x:g}" for x in m) + "}")
        assert said_m in text, (rule, said_m, text)
        # what it shows: its own note; a band over seeds exactly where it reads several seeds
        assert CAPTION_NOTES[rule] in text, rule
        if rule in FIGURE_RULES:
            # the crossover study draws its points' one seed; it reads the main runs' every
            # seed for their spread (the noise a one-seed point is judged by), not to draw;
            # fig1c and the prior-scale figure read the main SAME run's for their zooms' noise
            drawn = sorted({int(s) for lab, s in read if not (
                not lab.startswith("study_") if rule == "crossover_study" else
                lab == "same" and rule in ("fig1c_samples", "prior_scale"))})
            assert ("min–max over seeds" in text) == (len(drawn) > 1), (rule, drawn, text)
            assert ("one seed" in text) == (len(drawn) == 1), (rule, drawn, text)
        # and the claims it bears on, each with its statement; none where no verdict reads it
        for claim in FIGURE_CLAIMS.get(rule, ()):
            assert f"{claim} {CLAIMS[claim][0]}" in text, (rule, claim)
        assert ("Bears on" in text) == (rule in FIGURE_CLAIMS), rule
        checked.append(rule)
    assert FIGURE_RULES | {"table1", "table2", "time_to_quality", "tuning"} <= set(checked), \
        checked


def test_a_markdown_file_that_is_not_utf8_is_named(tmp_path, capsys):
    """``python -m same.report.html bad.md x.html`` said "error: 'utf-8' codec can't decode
    byte 0xff ..." naming no file; the page's reader is the spec file's
    (same.io.textinput.read_utf8)."""
    from same.report.html import main

    bad = tmp_path / "bad.md"
    bad.write_bytes(b"# T\n\xff\n")
    with pytest.raises(SystemExit) as e:
        main([str(bad), str(tmp_path / "x.html")])
    assert e.value.code == 2
    assert capsys.readouterr().err == (f"python -m same.report.html: error: Markdown file {bad}: "
                                       "not UTF-8 text (invalid start byte at byte 4)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.md"]
