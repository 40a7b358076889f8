"""The Snakemake workflow: lint, config validation, dry runs, and a tiny real end-to-end run."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from ci_profiles import main_only

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def smk(*args, cwd=REPO, env=None, timeout=900):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([*SNAKEMAKE, "--nolock", *args], cwd=cwd, env=e, capture_output=True,
                          text=True, timeout=timeout)


def repo_copy(tmp_path: Path) -> Path:
    """The package and workflow copied under ``tmp_path`` (tests edit the copy, never the real
    files); run Snakemake with ``PYTHONPATH`` at it, so that its jobs import the copy too."""
    dst = tmp_path / "repo"
    for d in ("same", "baselines", "workflow", "config"):
        shutil.copytree(REPO / d, dst / d, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "Snakefile", dst / "Snakefile")
    return dst


def test_lint():
    res = smk("--lint")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Congratulations, your workflow is in a good condition!" in res.stdout + res.stderr


@pytest.mark.parametrize("override, pattern", [
    ("n_components=0", "n_components"),
    ("backend=tpu", "backend"),
    ("datasets=[reuters]", "reuters"),
    ("nonsense_key=1", "nonsense_key"),
])
def test_bad_config_fails_before_any_job(override, pattern):
    res = smk("-n", "--config", override)
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert pattern in res.stderr.strip().splitlines()[-1]
    assert "Job stats" not in out
    assert "Traceback" not in out and 'File "' not in out, out


_OFFSETS = "vb_online: {offset: [1, 10, 20, 30]}, sklearn_online: {learning_offset: [1, 10, 20, 30]}"


@pytest.mark.parametrize("bad, message", [
    # a synthetic corpus named like a UCI one would overwrite the real corpus's results/<name>/
    ("datasets: [kos]\nsynthetic: {kos: {like: kos, fraction: 0.5, n_topics: 8}}\n",
     "config synthetic dataset 'kos': 'kos' is the name of a UCI corpus (kos, nips, enron, "
     "nytimes, pubmed); give the synthetic dataset another name"),
    # two runs with one label: one would silently vanish
    ("same: {m_values: [5, 5.0000001]}\n",
     "config same.m_values: 5.0000001 and same.m_values: 5 give one run label 'same_m5' "
     "(labels show numbers to 6 significant digits); make them differ"),
    ("sensitivity: {learning_power: [0.4, 0.40000001]}\n",
     "config sensitivity.learning_power: 0.40000001 and sensitivity.learning_power: 0.4 give "
     "one run label 'sens_learning_power_0.4' (labels show numbers to 6 significant digits); "
     "make them differ"),
    ("seeds: [0, 0]\n", "config seeds: 0 is given twice ([0, 0]); give each value once"),
    # an int batch size is a document count for SameLDA, not a fraction
    ("sensitivity: {batch_size: [1]}\n",
     "config sensitivity.batch_size: 1 is an integer, read as a document count; give fractions "
     "of the training documents in (0, 1], e.g. 0.05"),
    # refused by SameLDA's own parameter check
    ("same: {batch_size: 5.5}\n",
     "config same.batch_size: The 'batch_size' parameter of SameLDA must be an int in the range "
     "[1, inf), a float in the range (0.0, 1.0] or None. Got 5.5 instead."),
    # the JSON schema's errors, as one line each
    ("same: {n_inner: 0}\n", "config same.n_inner: 0 is less than the minimum of 1"),
    ("n_components: 8.0\n", "config n_components: 8.0 is not of type 'integer'"),
    # C9's synthetic corpora copy a corpus the profile has (or a UCI corpus's shape)
    ("scaling: {factors: [1, 2], base: mine}\n",
     "config scaling.base: 'mine' is neither a dataset of this profile (kos) nor a UCI corpus "
     "(kos, nips, enron, nytimes, pubmed)"),
    # a name in a tuning grid is a label's text as it is: one that is no folder name, or one
    # that prints like another value, is refused as a number would be
    (f"tuning: {{grids: {{same: {{sampler: [nonzero, Summed]}}, {_OFFSETS}}}}}\n",
     "config tuning.grids.same: {'sampler': 'Summed', 'learning_power': 0.3, 'batch_size': "
     "0.05} gives the run label 'tune_same_samplerSummed_learning_power0.3_batch_size0.05', "
     "not a folder name of lowercase letters, digits, '_' and '.' (numbers below 1e-4 or from "
     "1e6 print with an exponent)"),
    ("tuning: {grids: {same: {learning_power: [0.3, 0.5, '0.5']}}}\n",
     "config tuning.grids.same: {'learning_power': '0.5', 'batch_size': 0.05} and "
     "tuning.grids.same: {'learning_power': 0.5, 'batch_size': 0.05} give one run label "
     "'tune_same_learning_power0.5_batch_size0.05' (labels show numbers to 6 significant "
     "digits); make them differ"),
    # C9's factors the scaling job cannot draw: refused with its own check (size_cost's)
    ("scaling: {factors: [0.0001, 1]}\n",
     "config scaling.factors: factor 0.0001 makes 0.343 documents of kos's 3430, fewer than "
     "one; give factors of at least 1/3430"),
    ("scaling: {factors: [1, 1.0e+15]}\n",
     "config scaling.factors: factor 1e+15 makes 4.68e+20 tokens of kos's make-up, beyond a "
     "64-bit count"),
], ids=["synthetic-named-kos", "m-label-collision", "sensitivity-label-collision",
        "repeated-seed", "int-batch-fraction",
        "estimator-refuses", "schema-minimum", "schema-strict-integer", "scaling-base",
        "tuning-name-no-folder", "tuning-name-like-a-number", "scaling-factor-no-document",
        "scaling-factor-64-bit"])
def test_config_errors_are_one_line_before_any_job(tmp_path, bad, message):
    """What the user sees for a bad config: one line naming the key, exit status 1, no
    traceback, no job (not even the DAG)."""
    (tmp_path / "bad.yaml").write_text(bad)
    res = smk("-n", "--directory", str(tmp_path / "w"), "--snakefile", str(REPO / "Snakefile"),
              "--configfile", str(tmp_path / "bad.yaml"))
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert res.stderr.strip().splitlines()[-1] == message, out
    assert "Traceback" not in out and 'File "' not in out and "Error in" not in out, out
    assert "Building DAG" not in out and not (tmp_path / "w/results").exists(), out


@pytest.mark.parametrize("override, budget", [
    ("same={passes: 5}", 5),
    ("same={passes: 5, m_values: [1, 50]}", 5),
])
def test_a_nested_config_override_keeps_its_yaml_types(tmp_path, override, budget):
    """``snakemake --config 'same={passes: 5}'`` was refused as "'5' is not of type
    'integer'": Snakemake reads a nested override with YAML's BaseLoader, every value as
    text; its values are read as a config file's now, and the runs take them."""
    res = smk("-n", "-p", "--directory", str(tmp_path / "w"), "--snakefile",
              str(REPO / "Snakefile"), "--config", override)
    assert res.returncode == 0, res.stdout + res.stderr
    specs = planned_specs(res.stdout)
    assert specs["same"]["budget"] == budget
    if "m_values" in override:
        assert {label for label in specs if label.startswith("same_m")} >= {"same_m1",
                                                                            "same_m50"}


@pytest.mark.parametrize("override, message", [
    ("same={passes: five}", "config same.passes: 'five' is not of type 'integer'"),
    ("same={passes: .nan}", "config same.passes: nan is not a finite number"),
    ("same={passes: 5.5}", "config same.passes: 5.5 is not of type 'integer'"),
])
def test_a_bad_nested_config_override_is_one_line_naming_the_key(tmp_path, override, message):
    res = smk("-n", "--directory", str(tmp_path / "w"), "--snakefile", str(REPO / "Snakefile"),
              "--config", override)
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert res.stderr.strip().splitlines()[-1] == message, out
    assert "Traceback" not in out and "Building DAG" not in out, out


def job_count(out: str) -> int:
    for line in out.splitlines():
        if line.strip().startswith("total"):
            return int(line.split()[1])
    raise AssertionError(out)


def test_dry_run_paper_profile_and_cluster():
    # --forceall: every job, whatever outputs this checkout holds (the KOS profile's
    # results/scaling/same_cpu.json is the paper profile's too)
    res = smk("-n", "--forceall", "--configfile", "config/paper.yaml")
    assert res.returncode == 0, res.stderr
    # 2 datasets × (S seeds × (6 methods + the online methods other_order names, in the other
    # document order + 5 m-sweep runs (their own sampler) + 3 schedules) + other prior scale +
    # m=1 long + 8 sensitivity runs (on validation documents) + 2 K × 2 fractions × 4 methods of
    # the crossover study + 3 methods × 6 grid points × tuning.seeds tuning runs + the tuned
    # twins: 3 main methods × S seeds, 5 m-sweep runs and 3 schedules at
    # tuning.tuned_variant_seeds) fits, 2 splits, 2 timing jobs, 2 × 12 figure/table jobs
    # (tuning's included), scaling, claims, `all`
    from same.experiments.runs import order_labels

    cfg = yaml.safe_load((REPO / "config/config.yaml").read_text())
    seeds = len(cfg["seeds"])
    variant_seeds = {"all": seeds, "first": 1, "none": 0}[
        cfg["tuning"].get("tuned_variant_seeds", "all")]
    tuning_seeds = min(cfg["tuning"].get("seeds", 3), seeds)
    fits = (seeds * (6 + len(order_labels(cfg)) + 5 + 3) + 1 + 1 + 8 + 2 * 2 * 4
            + 3 * 6 * tuning_seeds + 3 * seeds + (5 + 3) * variant_seeds)
    # and 2 × 5 tables' HTML pages, claims' page
    assert job_count(res.stdout) == 2 * fits + 2 + 2 + 2 * (12 + 5) + 1 + 1 + 1 + 1
    # the SLURM executor plugin needs no cluster for a dry run (none here, or SLURM installed
    # with no cluster running: CI installs it for tests/test_slurm.py)
    res = smk("-n", "--forceall", "--profile", "profiles/slurm", "--configfile",
              "config/paper.yaml")
    assert res.returncode == 0, res.stderr
    assert "gpu=1" in res.stdout
    # the figures, tables and claims are localrules asking little; fits ask for a fit's
    from test_snakemake_report import check_cluster_resources

    check_cluster_resources(res.stdout)


def planned_specs(out: str) -> dict[str, dict]:
    """Run label → the spec of its first planned fit, from ``snakemake -n -p``'s output."""
    specs = {}
    for text in re.findall(r"-m same fit --spec '(\{.*?\})'", out):
        spec = json.loads(text)
        specs.setdefault(spec["label"], spec)
    return specs


def test_a_tuning_grid_of_sampler_names_is_planned(tmp_path):
    """``tuning: {grids: {same: {sampler: [nonzero, summed]}, ...}}`` (the schema allows a
    string) stopped the dry run with "Unknown format code 'g' for object of type 'str'",
    naming no key: each name is now its label's text."""
    (tmp_path / "grid.yaml").write_text(
        f"tuning: {{grids: {{same: {{sampler: [nonzero, summed]}}, {_OFFSETS}}}}}\n")
    res = smk("-n", "-p", "--directory", str(tmp_path / "w"), "--snakefile",
              str(REPO / "Snakefile"), "--configfile", str(tmp_path / "grid.yaml"))
    assert res.returncode == 0, res.stdout + res.stderr
    specs = planned_specs(res.stdout)
    for sampler in ("nonzero", "summed"):
        label = f"tune_same_sampler{sampler}_learning_power0.5_batch_size0.1"
        assert specs[label]["params"]["sampler"] == sampler


def test_absent_same_keys_take_the_estimators_defaults(tmp_path):
    """The workflow as parsed (the Snakefile's schema validation included) leaves a SameLDA
    parameter the config does not set out of the run spec, so the estimator's default is
    the one used: the schema has none to fill in."""
    from same.experiments.runs import SAME_CONFIG_PARAMS
    from same.model.sampler import SameLDA

    repo = repo_copy(tmp_path)
    cfg_path = repo / "config/config.yaml"
    dropped = ("sampler", "prior_scale", "learning_rate", "n_inner")
    cfg_path.write_text("".join(ln for ln in cfg_path.read_text().splitlines(keepends=True)
                                if ln.split(":")[0].strip() not in dropped))
    same = yaml.safe_load(cfg_path.read_text())["same"]
    assert not set(dropped) & set(same) and same["m_sampler"] == "nonzero"
    res = smk("-n", "-p", "--directory", str(tmp_path / "w"), "--snakefile",
              str(repo / "Snakefile"), env={"PYTHONPATH": str(repo)})
    assert res.returncode == 0, res.stderr
    specs = planned_specs(res.stdout)
    params, defaults = specs["same"]["params"], SameLDA().get_params()
    absent = [k for k in SAME_CONFIG_PARAMS if k not in same]
    assert set(dropped) <= set(absent)
    for key in absent:
        assert key not in params, key
        assert SameLDA(**params).get_params()[key] == defaults[key], key
    # labels follow the estimator's defaults too: its prior_scale is bidmach, so the variant is
    # paper; the m sweep's m = n_copies, at the main run's settings, is still a run of its own
    assert "same_m100" in specs and "same_scale_paper" in specs


def test_any_uci_corpus_needs_no_code_change():
    res = smk("-n", "--config", "datasets=[nips]")
    assert res.returncode == 0, res.stderr
    assert "results/nips/split.npz" in res.stdout
    assert "figures/nips/fig1_passes.png" in res.stdout


def test_crossover_study_planned_for_every_corpus():
    """The crossover study and the sensitivity study are planned for each configured corpus."""
    res = smk("-n", "--config", "datasets=[kos,nips]")
    assert res.returncode == 0, res.stderr
    for d in ("kos", "nips"):
        for out in (f"figures/{d}/crossover_study.png", f"results/{d}/crossover_study.csv",
                    f"figures/{d}/sensitivity.png", f"results/{d}/study_cgs_f0.25/K64/seed0",
                    f"results/{d}/study_vb_batch_f1/K8/seed0", f"results/{d}/same_m100/K64/seed2",
                    f"results/{d}/sens_keep_doc_topic_false/K64/seed0",
                    f"results/{d}/tune_vb_online_decay0.7_offset10/K64/seed0",
                    f"results/{d}/sklearn_online_tuned/K64/seed2", f"results/{d}/tuning.json"):
            assert out in res.stdout, out


@pytest.mark.slow
def test_tiny_end_to_end_and_resume(tmp_path, uci_dir):
    """The CI profile end to end (on a copy of the code, which the test edits), then: a
    docstring edit reruns nothing, a code edit reruns every fit, a killed run resumes."""
    repo = repo_copy(tmp_path)
    env = {"SAME_DATA_DIR": str(uci_dir), "PYTHONPATH": str(repo)}
    work = tmp_path / "run"
    work.mkdir()
    args = ("--cores", "2", "--configfile", str(repo / "config/ci.yaml"), "--directory",
            str(work), "--snakefile", str(repo / "Snakefile"))
    expected = _estimate_before_any_fit(args, env, work)
    t0 = time.perf_counter()
    res = smk(*args, env=env)
    wall = time.perf_counter() - t0
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    # the estimate, made before any fit, within 2x of the run's wall time (issue 52)
    assert wall / 2 <= expected <= 2 * wall, f"estimated {expected:.0f} s, ran {wall:.0f} s"
    for name in ("fig1_passes", "fig1_seconds", "fig1c_samples", "fig2a_m", "fig2b_anneal",
                 "prior_scale", "sensitivity", "crossover_study"):
        for ext in ("png", "pdf"):
            assert (work / f"figures/kos/{name}.{ext}").stat().st_size > 1000
    # a row per (K, training fraction) and held-out estimator
    from same.report.verdicts import METRICS

    assert len((work / "results/kos/crossover_study.csv").read_text().splitlines()) == \
        1 + 2 * 2 * len(METRICS)
    tuning = (work / "results/kos/tuning.md").read_text()
    assert tuning.count("**chosen**") == 3 and "No test document enters tuning" in tuning
    assert "## Across scales" in (work / "results/claims.md").read_text()
    for table in ("table1", "table2", "time_to_quality", "crossover_study"):
        assert (work / f"results/kos/{table}.csv").is_file()
        assert (work / f"results/kos/{table}.md").is_file()
    claims = (work / "results/claims.md").read_text()
    for c in range(1, 10):
        assert f"### C{c} " in claims
    # snakemake --report: every figure and table the rules mark with report(), captioned
    from test_snakemake_report import check_snakemake_report

    check_snakemake_report(smk, args, env, work, repo / "Snakefile", [repo / "config/ci.yaml"])
    # nothing left to do
    res = smk(*args, "-n", env=env)
    assert "Nothing to be done" in res.stdout + res.stderr
    _docstring_edit_reruns_nothing_code_edit_reruns_the_fits(repo, work, args, env)
    # after a kill mid-way: one run unfinished (the runner leaves no directory) and nothing
    # downstream written yet; the rerun redoes that fit only, then the reports
    shutil.rmtree(work / "results/kos/vb_online/K8/seed1")
    shutil.rmtree(work / "figures")
    for p in (work / "results").glob("**/table*.*"):
        p.unlink()
    (work / "results/claims.md").unlink()
    res = smk(*args, "-n", env=env)
    assert res.returncode == 0
    lines = [ln.strip() for ln in res.stdout.splitlines()]
    fit_line = [ln for ln in lines if ln.startswith("fit ")]
    assert fit_line and fit_line[0].split()[1] == "1", res.stdout


def _estimate_before_any_fit(args, env, work) -> float:
    """``snakemake estimate``: a dry run names it; it splits and probes, runs no fit, prints
    the table; returns its expected wall seconds of the whole run."""
    from same.experiments.estimate import TITLE

    assert "snakemake --cores all estimate" in smk(*args, "-n", env=env).stderr
    res = smk(*args, "estimate", env=env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert TITLE in res.stderr and "estimate: probing" in res.stderr
    assert not list(work.glob("results/kos/*/K*/seed*"))  # before any fit
    return json.loads((work / "results/estimate.json").read_text())["total_minutes"] * 60


def _docstring_edit_reruns_nothing_code_edit_reruns_the_fits(repo, work, args, env):
    """The rules take the fingerprint of their code (without docstrings and comments) as a
    parameter: a docstring and comment edit of same/model/algorithm.py leaves nothing to do; a code
    edit reruns every fit (and what reads them), for its parameters changed. The file is
    restored after."""
    algorithm = repo / "same/model/algorithm.py"
    original = algorithm.read_text()
    assert original.startswith('"""')
    edited = original.replace('"""', '"""Edited docstring, no code changed.\n\n', 1)
    algorithm.write_text(edited + "\n# an added comment\n")
    res = smk(*args, "-n", env=env)
    assert res.returncode == 0 and "Nothing to be done" in res.stdout + res.stderr, res.stdout
    algorithm.write_text(edited + "\n_FINGERPRINT_TEST = 1  # code: the fits rerun\n")
    res = smk(*args, "-n", env=env)
    assert res.returncode == 0, res.stderr
    n_fits = len(list(work.glob("results/kos/*/K*/seed*/trace.csv")))
    stats = dict(ln.split() for ln in res.stdout.split("Job stats:")[1].split("\n\n")[0]
                 .splitlines()[3:] if ln.strip())
    assert int(stats["fit"]) == n_fits and "split" not in stats, res.stdout
    assert "Params have changed since last execution" in res.stdout
    algorithm.write_text(original)
    res = smk(*args, "-n", env=env)
    assert "Nothing to be done" in res.stdout + res.stderr


def test_scale_profile_is_planned_on_synthetic_data():
    res = smk("-n", "--forceall", "--configfile", "config/scale.yaml")  # whatever is here
    assert res.returncode == 0, res.stderr
    for out in ("results/scale/corpus.npz", "results/scale/split.npz",
                "results/scale/topic_recovery.md", "results/scale/claims.md",
                "results/scale/scaling/same_cpu.json", "figures/scale/fig1_passes.png",
                "results/scale/same_m1_long/K256/seed0"):
        assert out in res.stdout, out
    assert "results/claims.md" not in res.stdout.replace("results/scale/claims.md", "")
    assert "rule split_synthetic" in res.stdout and "rule split:" not in res.stdout
    assert "crossover_study" not in res.stdout and "sensitivity" not in res.stdout


def test_unknown_dataset_is_one_clear_error():
    res = smk("-n", "--config", "datasets=[toy]")
    assert res.returncode != 0
    assert ("config datasets: 'toy' is neither a UCI corpus (kos, nips, enron, nytimes, pubmed) "
            "nor a dataset of the config's synthetic: or corpora: section") in res.stdout + res.stderr


@pytest.mark.slow
def test_tiny_synthetic_end_to_end(tmp_path):
    """The scale profile's path on a tiny synthetic corpus: synthesize, split, every method,
    topic recovery, a claims report of its own, SYNTHETIC in the captions."""
    work = tmp_path / "run"
    work.mkdir()
    (tmp_path / "toy.yaml").write_text(
        "datasets: [toy]\n"
        "synthetic: {toy: {like: kos, fraction: 0.1, n_topics: 4, seed: 1}}\n"
        "report_dir: results/toy\ncaption_note: tiny test\nn_components: 4\nseeds: [0]\n"
        # the main comparison only: the studies are more fits of the same rule
        + yaml.safe_dump(main_only()))
    res = smk("--cores", "2", "--configfile", str(REPO / "config/ci.yaml"),
              str(tmp_path / "toy.yaml"), "--directory", str(work), "--snakefile",
              str(REPO / "Snakefile"))
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    rec = (work / "results/toy/topic_recovery.md").read_text()
    assert "SYNTHETIC" in rec and "mean matched TV" in rec and "tiny test" in rec
    assert "true topics (oracle)" in rec
    claims = (work / "results/toy/claims.md").read_text()
    assert "### Topic recovery (SYNTHETIC data" in claims and "SYNTHETIC: LDA-generated" in claims
    assert "the true topics themselves score" in claims
    assert not (work / "results/claims.md").exists()
    assert (work / "figures/toy/fig1_passes.png").stat().st_size > 1000


def _traces_ll(root: Path) -> dict:
    import pandas as pd

    return {str(p.relative_to(root)): pd.read_csv(p)["ll"].tolist()
            for p in sorted(root.glob("results/kos/*/K*/seed*/trace.csv"))}


@pytest.mark.slow
def test_workflow_sigkill_then_resume_equals_uninterrupted(tmp_path, one_seed_run):
    """SIGKILL the whole workflow (Snakemake and its jobs) once some fits have finished; the
    rerun redoes only the unfinished jobs and every trace equals an uninterrupted run's (the
    CI profile with one seed, fewer and shorter jobs: conftest.py's one_seed_run). Both runs
    target the profile's fits (its traces): the split and every fit, the jobs a kill can cut
    short; the report rules that read them are the end-to-end test's."""
    import signal
    import time

    env, base, ref = one_seed_run.env, one_seed_run.base, one_seed_run.dir
    killed = tmp_path / "killed"
    killed.mkdir()
    fits = sorted(str(p.relative_to(ref)) for p in ref.glob("results/kos/*/K*/seed*/trace.csv"))
    p = subprocess.Popen([*SNAKEMAKE, "--nolock", *base, "--directory", str(killed), "--", *fits],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    deadline = time.time() + 600
    while (len(list(killed.glob("results/kos/*/K*/seed*/trace.csv"))) < 3
           and p.poll() is None and time.time() < deadline):
        time.sleep(0.2)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait(timeout=60)
    done_before = len(list(killed.glob("results/kos/*/K*/seed*/trace.csv")))
    assert 3 <= done_before < len(fits)
    res = smk(*base, "--directory", str(killed), "--rerun-incomplete", "--", *fits, env=env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    log = res.stdout + res.stderr
    fit_line = [ln.split() for ln in log.splitlines() if ln.strip().startswith("fit ")]
    assert fit_line and int(fit_line[0][1]) <= len(fits) - done_before + 2, log[-3000:]
    assert _traces_ll(killed) == _traces_ll(ref)


@pytest.mark.slow
def test_a_moved_or_copied_run_folder_reruns_nothing(tmp_path, one_seed_run):
    """A finished run folder copied elsewhere (its files' times kept, as ``cp -a`` and ``mv``
    keep them) has nothing to do there: the split rule's cache folder, resolved to an
    absolute path, was a param, so every job reran after a move.  It is the config's
    relative ``datasets`` now, the copy's own folder (jobs run in the run folder)."""
    copy = tmp_path / "elsewhere" / "run"
    shutil.copytree(one_seed_run.dir, copy, symlinks=True)
    res = smk(*one_seed_run.base, "-n", "--directory", str(copy), env=one_seed_run.env)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "Nothing to be done" in res.stdout + res.stderr, res.stdout[-3000:]
    res = smk(*one_seed_run.base, "-n", "-p", "--forcerun", "split", "--directory", str(copy),
              env=one_seed_run.env)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "SAME_CACHE_DIR=datasets python -m same split" in res.stdout


def test_multi_corpus_profile_is_planned_on_both_corpora_each_at_its_k():
    """config/corpora.yaml: KOS at the config's K, 20 Newsgroups at its own K (split_corpus
    makes its split), one claims.md for both in the profile's report folder."""
    res = smk("-n", "--forceall", "--configfile", "config/corpora.yaml")
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    out = res.stdout
    assert "results/20news/same/K32/seed4/trace.csv" in out
    assert "results/kos/same/K64/seed4/trace.csv" in out
    assert "rule split_corpus:" in out and "results/20news/claims.md" in out
    assert "results/20news/same/K64/" not in out and "results/kos/same/K32/" not in out


def test_corpus_files_that_do_not_exist_stop_the_workflow_before_any_job(tmp_path):
    """A corpora: entry naming a missing file or folder: one line naming the key and path,
    exit 1, before any job (the dry run)."""
    (tmp_path / "c.yaml").write_text(
        f"datasets: [toy]\ncorpora: {{toy: {{source: folder, path: {tmp_path / 'nope'}}}}}\n")
    res = smk("-n", "--configfile", str(tmp_path / "c.yaml"))
    assert res.returncode == 1
    lines = (res.stdout + res.stderr).strip().splitlines()
    assert lines[-1] == f"config corpora.toy.path: {tmp_path / 'nope'}: no such folder", lines
