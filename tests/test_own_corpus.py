"""Issue 52: a corpus of one's own through the workflow without reading the code: the README's
small profile (every optional study switched off) run as written by real Snakemake, on a
folder of generated posts, with no UCI data reachable."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from same.experiments.runs import MAIN_LABELS

REPO = Path(__file__).resolve().parents[1]


def readme_profile() -> str:
    """The README's "Your own corpus" profile: its YAML block that starts with ``# my.yaml``."""
    text = (REPO / "README.md").read_text()
    m = re.search(r"```yaml\n(# my\.yaml[^\n]*\n.*?)```", text, re.S)
    assert m, "the README's 'Your own corpus' section has no '# my.yaml' profile"
    return m.group(1)


def write_posts(root: Path, n_per_category: int = 30, seed: int = 0) -> None:
    """A load_files folder: 3 categories of posts, each drawing most words from its own
    vocabulary, some with HTML markup (``<br />``, an entity, a comment) around the words."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab = sorted({"".join(rng.choice(letters, 5)) for _ in range(400)})[:240]
    for c, name in enumerate(("alpha", "beta", "gamma")):
        folder = root / name
        folder.mkdir(parents=True)
        own = vocab[c * 80:(c + 1) * 80]
        for i in range(n_per_category):
            words = [own[j] if rng.random() < 0.8 else vocab[j] for j in
                     rng.integers(0, 80, size=50)]
            text = " ".join(words)
            if i % 3 == 0:
                text = text.replace(" ", " <br /> ", 5) + " &amp; <!-- hidden words -->"
            (folder / f"{i:03d}.txt").write_text(text)


def test_readme_profile_switches_every_optional_study_off():
    import yaml

    cfg = yaml.safe_load(readme_profile())
    assert cfg["same"]["m_values"] is None and cfg["same"]["schedules"] is None
    assert cfg["same"]["prior_scale_variant"] is False and cfg["same"]["m1_passes"] is None
    assert all(cfg[k] is None for k in ("scaling", "tuning", "sensitivity", "crossover_study"))
    assert cfg["other_order"] is False


@pytest.mark.slow
def test_the_readme_profile_runs_the_main_comparison_alone_without_uci_data(tmp_path):
    """The README's profile as written (two seeds instead of five, to save CI time, which also
    shows the seeds note): exit 0 with no UCI mirror or cache reachable; the main comparison's
    fits only; no figure or table of a switched-off study; claims.md says which claims were
    not run in this profile and why; captions give the profile's own passes."""
    work = tmp_path / "run"
    write_posts(work / "data/posts")
    (work / "my.yaml").write_text(readme_profile())
    env = {k: v for k, v in os.environ.items() if k not in ("SAME_DATA_DIR", "SAME_CACHE_DIR")}
    env["PYTHONPATH"] = str(REPO)
    res = subprocess.run(
        [sys.executable, "-m", "snakemake", "--nolock", "--cores", "2", "--snakefile",
         str(REPO / "Snakefile"), "--directory", str(work), "--configfile", str(work / "my.yaml"),
         "--config", "seeds=[0,1]"],
        cwd=work, env=env, capture_output=True, text=True, timeout=1200)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert "note: config seeds: 2 per run ([0, 1]), fewer than the 5" in res.stderr
    labels = {p.name for p in (work / "results/mine").iterdir()
              if p.is_dir() and any(p.glob("K8/seed*/trace.csv"))}
    assert labels == set(MAIN_LABELS)
    figures = {p.stem for p in (work / "figures/mine").glob("*.png")}
    assert figures == {"fig1_passes", "fig1_seconds", "fig1c_samples"}
    assert not (work / "results/mine/table2.md").exists()
    assert not list(work.glob("results/**/scaling/*.json"))
    claims = (work / "results/mine/claims.md").read_text()
    for claim, why in (("C6", "the m sweep is switched off (same.m_values: null)"),
                       ("C7", "the m sweep is switched off (same.m_values: null)"),
                       ("C8", "the schedules are switched off (same.schedules: null)"),
                       ("C9", "C9's scaling benchmark is switched off (scaling: null)")):
        section = claims.split(f"### {claim} ")[1].split("\n### ")[0]
        assert "not run in this profile" in section and why in section, (claim, section)
    setting = next(ln for ln in claims.splitlines() if ln.startswith("Setting: "))
    assert ("not run in this profile: m sweep (same.m_values: null), schedules "
            "(same.schedules: null), prior-scale variant (same.prior_scale_variant: false), "
            "fig1c's SAME m=1 run (same.m1_passes: null), C9's scaling benchmark "
            "(scaling: null)") in setting
    assert ("tuning (tuning: null), sensitivity study (sensitivity: null), crossover study "
            "(crossover_study: null), the other document order (other_order: false)") in setting
    # nothing said of the switched-off tuning and crossover study but that they did not run
    assert ("Every claim is judged as published only: no run of this profile has a tuned twin"
            in claims) and "No claim's outcome moved with the configuration" not in claims
    assert ("Each claim at each dataset's main scale, only: no crossover study in this "
            "profile (crossover_study: null).") in claims
    # C4 not testable for want of CGS's 1000 iterations: no CPU-vs-GPU qualifier as its reason
    c4 = next(ln for ln in claims.splitlines() if ln.startswith("### C4 "))
    assert c4.endswith("**not testable here**"), c4
    for table in ("table1", "time_to_quality"):
        caption = (work / f"results/mine/{table}.md").read_text()
        assert "SAME m=100 (summed sampler, 5 passes," in caption, caption[:600]
        assert "VB 5 passes, CGS 100 iterations" in caption
        assert "seeds [0, 1]" in caption and "10 passes" not in caption
        assert "Configuration: as published only" in caption and "tuning.md" not in caption
    assert ("Empty here: CGS ran 100 iterations, and the paper's convergence needs CGS's ll "
            "after 1000") in (work / "results/mine/table1.md").read_text()
    # an edited and an added document each rerun the split and what reads it
    dry = [sys.executable, "-m", "snakemake", "-n", "--nolock", "--cores", "2", "--snakefile",
           str(REPO / "Snakefile"), "--directory", str(work), "--configfile",
           str(work / "my.yaml"), "--config", "seeds=[0,1]"]
    post = work / "data/posts/alpha/000.txt"

    def planned() -> str:
        out = subprocess.run(dry, cwd=work, env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout
    assert "split_corpus" not in planned()
    stamp = os.stat(post).st_mtime_ns
    os.utime(post, ns=(stamp + 10**9, stamp + 10**9))
    post.write_text(post.read_text() + " extra words")
    assert "split_corpus" in planned()
    os.utime(post, ns=(stamp, stamp))  # back to its old time: the set of files decides now
    (work / "data/posts/alpha/999.txt").write_text("alpha beta gamma delta")
    assert "split_corpus" in planned()


@pytest.mark.parametrize("profile, base_args", [
    ("", "--base kos"),  # a UCI corpus: its registered shape, no file read
    ("datasets: [mine]\ncorpora: {mine: {source: folder, path: data/posts}}\n",
     "--split results/mine/split.npz --name mine")])
def test_c9_benchmark_copies_a_corpus_the_profile_has(tmp_path, profile, base_args):
    """Rule scaling's synthetic corpora copy the profile's first dataset: a UCI corpus by its
    registered shape, a corpus of one's own by its split (so it needs no UCI files)."""
    work = tmp_path / "run"
    write_posts(work / "data/posts", n_per_category=2)
    (work / "p.yaml").write_text(profile + "report_dir: results/mine\n" * bool(profile)
                                 + "scaling: {factors: [0.5, 1]}\n")
    res = subprocess.run(
        [sys.executable, "-m", "snakemake", "--nolock", "-n", "-p", "--forceall", "--cores", "2",
         "--snakefile", str(REPO / "Snakefile"), "--directory", str(work),
         "results/mine/scaling/same_cpu.json" if profile else "results/scaling/same_cpu.json",
         "--configfile", str(work / "p.yaml")],
        cwd=work, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    assert res.returncode == 0, res.stderr[-2000:]
    command = next(ln for ln in res.stdout.splitlines() if "same.experiments.size_cost" in ln)
    assert f"--factors 0.5 1 {base_args} " in command, command


def test_the_readme_shows_the_committed_estimate_of_its_profile():
    """The estimate printed in "Your own corpus" is results/own_corpus/estimate.txt verbatim,
    written by `snakemake estimate` on the README's profile, its JSON naming where it ran."""
    import json

    text = (REPO / "results/own_corpus/estimate.txt").read_text()
    readme = (REPO / "README.md").read_text()
    assert f"```\n{text}```" in readme
    record = json.loads((REPO / "results/own_corpus/estimate.json").read_text())
    assert record["commit"] and record["machine"]["logical_cores"] and record["versions"]
    assert f"{record['total_minutes']:.1f}" == text.splitlines()[-1].split()[-1]


def test_a_jobs_one_line_error_reaches_the_console(tmp_path):
    """A split job that refuses its input (a CSV without the named column; the config check
    cannot see it without reading the file) ends its log with one line; the failed run prints
    that line on the console too, not only "check log file(s) for error details"."""
    from same.experiments.joblogs import job_errors

    work = tmp_path / "run"
    work.mkdir()
    (work / "posts.csv").write_text("id,body\n" + "".join(
        f'{i},"rocket orbit launch number {i}"\n' for i in range(12)))
    (work / "my.yaml").write_text("datasets: [mine]\ncorpora:\n  mine: {source: csv, path: "
                                  "posts.csv, column: text}\nseeds: [0]\n")
    env = {k: v for k, v in os.environ.items() if k not in ("SAME_DATA_DIR", "SAME_CACHE_DIR")}
    env["PYTHONPATH"] = str(REPO)
    res = subprocess.run(
        [sys.executable, "-m", "snakemake", "results/mine/split.npz", "--nolock", "--cores", "1",
         "--snakefile", str(REPO / "Snakefile"), "--directory", str(work), "--configfile",
         str(work / "my.yaml")], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode != 0
    line = ("job log results/logs/split/mine.log: python -m same: error: posts.csv: no column "
            "'text' (columns: id, body); see corpora.mine.column")
    assert line in res.stderr.splitlines(), res.stderr[-3000:]
    assert job_errors(work / "results/logs", 0.0) == [line.removeprefix("job log ").replace(
        "results/logs", str(work / "results/logs"), 1)]
    assert job_errors(work / "results/logs", time.time() + 60) == []  # older than this run
