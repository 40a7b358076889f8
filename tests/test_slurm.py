"""The workflow through Snakemake's SLURM executor on a real one-node SLURM cluster (issue 54).

tools/slurm_cluster.sh starts the cluster (munge, MariaDB behind slurmdbd so that ``sacct``
works, slurmctld, slurmd) in a folder of the test's own and stops it after. The CI profile
with one seed (conftest.py's ``one_seed_run``, which the SIGKILL test also compares with: the
profile the end-to-end test runs, one seed of its three, its main comparison and m sweep: every
rule kind, without the studies whose fits are more of the same rule) runs
through ``--profile`` profiles/slurm, sized to the node, to the end: once with a fit cancelled
by ``scancel`` mid-fit (retried per the profile) and another cancelled at each of its tries
(the run fails), then resumed to the end; every fit, the split, rule timing and C9's scaling a
SLURM job, the figures, tables and claims local. Its outputs are the local run's up to the
seconds measured: with the local run's measurements in place of its own (timing.json, C9's
benchmark, the m sweep's timed runs) the report rules it reruns make every figure, table and
claims file byte-identical. Missing SLURM skips these tests, but fails them in CI.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "tools/slurm_cluster.sh"
TOOLS = ("munged", "mungekey", "mariadbd", "mariadb-install-db", "slurmdbd", "slurmctld",
         "slurmd", "sbatch", "srun", "sacct", "sacctmgr", "squeue", "scancel", "sinfo")
# Fits of the one-seed CI profile (ci_profiles.py's one_seed_profile: 8 (label, K) runs, the main
# comparison's six and the m sweep's two)
N_FITS = 8
# what runs under SLURM: the rest (tuning's choice, figures, tables, claims, pages) is local
SUBMITTED = {"split", "fit", "timing", "scaling"}
RETRIED = "cgs"  # scancel'd once mid-fit: the profile's retry finishes it
FAILED = "vb_batch"  # scancel'd at both tries: the run fails, the resumed run makes it


def _why_no_cluster() -> str | None:
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        return (f"SLURM is not installed ({', '.join(missing)} missing): apt-get install "
                "slurm-wlm slurmdbd munge mariadb-server")
    if os.geteuid() != 0:
        return "the one-node SLURM cluster runs its daemons as root"
    return None


def _script(*args) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *map(str, args)], capture_output=True,
                          text=True, timeout=300)


def _exports(out: str) -> dict[str, str]:
    """The environment that ``slurm_cluster.sh start``'s export lines set."""
    env = {}
    for name, value in re.findall(r"^export (\w+)=(.*)$", out, re.M):
        env[name] = value.replace("$PATH", os.environ["PATH"])
    assert set(env) == {"SLURM_CONF", "PATH"}, out
    return env


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A running one-node cluster: its folder, environment, partition, CPUs and memory."""
    reason = _why_no_cluster()
    if reason:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(reason)
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("slurm") / "cluster"
    try:
        res = _script("start", folder)
        assert res.returncode == 0, res.stdout + res.stderr
        env = dict(os.environ) | _exports(res.stdout)
        again = _script("start", folder)  # a second start leaves the running cluster be
        assert again.returncode == 0 and again.stdout == res.stdout, again.stderr
        node = subprocess.run(["sinfo", "-h", "-N", "-o", "%P %T %c %m"], env=env,
                              capture_output=True, text=True, check=True).stdout.split()
        assert node[1] == "idle", node
        yield SimpleNamespace(dir=folder, env=env, partition=node[0].rstrip("*"),
                              cpus=int(node[2]), mem_mb=int(node[3]))
    finally:
        res = _script("stop", folder)
        assert res.returncode == 0 and not folder.exists(), res.stderr


@pytest.mark.parametrize("args, message", [
    ((), "usage: slurm_cluster.sh start|stop|status DIR"),
    (("restart", "{d}"), "usage: slurm_cluster.sh start|stop|status DIR"),
    (("start", "{d}"), "{d} exists and was not made by slurm_cluster.sh; give a new directory"),
    (("stop", "{d}"), "{d} was not made by slurm_cluster.sh; not touching it"),
    (("status", "{d}"), "no cluster in {d} (not made by slurm_cluster.sh)"),
])
def test_the_cluster_script_refuses_in_one_line_and_touches_no_folder_of_others(
        tmp_path, args, message):
    """A folder the script did not make is never started in, stopped or removed."""
    d = tmp_path / "others"
    d.mkdir()
    (d / "keep.txt").write_text("theirs")
    res = _script(*(a.format(d=d) for a in args))
    assert (res.returncode, res.stdout) == (2, "")
    assert res.stderr == f"slurm_cluster.sh: {message.format(d=d)}\n"
    assert [p.name for p in d.iterdir()] == ["keep.txt"]


def node_profile(root: Path, cluster) -> Path:
    """profiles/slurm as a user of this cluster adapts it: its partition, and no request above
    the node's CPUs or a CPU's share of its memory (jobs run side by side); the rest as is."""
    profile = yaml.safe_load((REPO / "profiles/slurm/config.yaml").read_text())

    def sized(res):
        res = dict(res)
        if "mem_mb" in res:
            res["mem_mb"] = min(res["mem_mb"], cluster.mem_mb // cluster.cpus)
        if "cpus_per_task" in res:
            res["cpus_per_task"] = min(res["cpus_per_task"], cluster.cpus)
        return res

    profile["default-resources"] = sized(profile["default-resources"]) | {
        "slurm_partition": cluster.partition}
    profile["set-resources"] = {r: sized(v) for r, v in profile["set-resources"].items()}
    (root / "profile").mkdir()
    (root / "profile/config.yaml").write_text(yaml.safe_dump(profile, sort_keys=False))
    return root / "profile"


def _squeue(env) -> list[tuple[str, str, str]]:
    """(job id, comment, state) of the cluster's queued and running jobs."""
    out = subprocess.run(["squeue", "-h", "-o", "%i|%k|%T"], env=env, capture_output=True,
                         text=True, check=True).stdout
    return [tuple(line.split("|")) for line in out.splitlines()]


def fit_comment(label, k=8, seed=0) -> str:
    """The comment Snakemake's SLURM executor gives a fit job (its rule and wildcards)."""
    return f"rule_fit_wildcards_kos_{label}_{k}_{seed}"


def _fitting_for(work: Path, label: str, since: float) -> float:
    """Seconds the fit of ``label`` has run its command (its log emptied since ``since`` by
    the shell's redirection at the command's start; a fit writes nothing there until it
    fails), while its trace is not there; 0 if not."""
    log = work / f"results/logs/fit/kos/{label}/K8/seed0.log"
    if (work / f"results/kos/{label}/K8/seed0/trace.csv").exists() or not log.exists():
        return 0.0
    stat = log.stat()
    return time.time() - stat.st_mtime if stat.st_mtime > since and stat.st_size == 0 else 0.0


def _cancel_mid_fit(proc, work, env, plan: dict[str, int], timeout=600) -> dict[str, list]:
    """While Snakemake runs: scancel the job of each label in ``plan`` once its fit command
    has run 1.5 s (each of these takes 6 s or more on a 2-core VM, imports included),
    ``plan[label]`` times; returns label → the job ids cancelled."""
    cancelled = {label: [] for label in plan}
    last = dict.fromkeys(plan, 0.0)
    deadline = time.time() + timeout
    while proc.poll() is None and time.time() < deadline:
        for job, comment, state in _squeue(env):
            for label, times in plan.items():
                if (comment == fit_comment(label) and state == "RUNNING"
                        and len(cancelled[label]) < times
                        and _fitting_for(work, label, last[label]) >= 1.5):
                    subprocess.run(["scancel", job], env=env, check=True)
                    cancelled[label].append(job)
                    last[label] = time.time()
        time.sleep(0.2)
    return cancelled


def _snakemake(profile, one_seed_run, work, env):
    return [sys.executable, "-m", "snakemake", "--nolock", "--profile", str(profile),
            # the first status check 2 s after a submission (the plugin's default, 40 s,
            # suits hours-long jobs): the chain split → fits → tuning → tuned fits
            "--slurm-init-seconds-before-status-checks", "2",
            "--configfile", str(one_seed_run.config), "--snakefile", str(REPO / "Snakefile"),
            "--directory", str(work)]


def _sacct(env) -> list[dict]:
    out = subprocess.run(["sacct", "-a", "-X", "-n", "-P", "-S", "2000-01-01", "-o",
                          "JobID,Comment,State,Start,End"], env=env, capture_output=True,
                         text=True, check=True).stdout
    keys = ("id", "comment", "state", "start", "end")
    jobs = [dict(zip(keys, line.split("|"))) for line in out.splitlines()]
    for job in jobs:
        job["state"] = job["state"].split()[0]  # "CANCELLED by 0": by whom
    return jobs


@pytest.fixture(scope="module")
def slurm_run(cluster, one_seed_run, tmp_path_factory):
    """The whole one-seed profile through profiles/slurm: first with RETRIED cancelled once and
    FAILED at each of its two tries (that run fails), then resumed to the end; what each step
    left, and sacct's jobs."""
    root = tmp_path_factory.mktemp("slurm_run")
    profile, work = node_profile(root, cluster), root / "run"
    work.mkdir()
    env = cluster.env | {"SAME_DATA_DIR": one_seed_run.env["SAME_DATA_DIR"]}
    cmd = _snakemake(profile, one_seed_run, work, env)
    log = (root / "first.log").open("w")
    # --keep-going: RETRIED's retry is submitted whenever FAILED's second cancellation comes
    # (without it, FAILED failing first ended the run before RETRIED's pending restart was
    # submitted: a race on the order the two long fits start in)
    proc = subprocess.Popen([*cmd, "--keep-going"], env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    try:
        cancelled = _cancel_mid_fit(proc, work, env, {RETRIED: 1, FAILED: 2})
        first_rc = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
    failed_dir = work / f"results/kos/{FAILED}"
    left = sorted(str(p.relative_to(work)) for p in failed_dir.rglob("*")) \
        if failed_dir.exists() else []
    resumed = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    return SimpleNamespace(work=work, first_rc=first_rc, first_log=(root / "first.log")
                           .read_text(), cancelled=cancelled, left_after_failure=left,
                           resumed=resumed, jobs=_sacct(env))


def _traces(root: Path, labels=None) -> dict[str, list[dict]]:
    """Each trace.csv under ``root`` (of ``labels``, if given) as its rows' text, every column
    but the measured seconds: the held-out lls (three kinds), passes, samples per word."""
    import csv

    out = {}
    for path in sorted(root.glob("results/kos/*/K*/seed*/trace.csv")):
        if labels is None or path.parts[-4] in labels:
            with path.open() as f:
                out[str(path.relative_to(root))] = [
                    {k: v for k, v in row.items() if not k.endswith("_seconds")}
                    for row in csv.DictReader(f)]
    return out


def _models(root: Path) -> dict[str, dict]:
    """Each model.npz under ``root``: its arrays (φ, the priors, the checksums of the split and
    vocabulary it was fitted on), but the checksum of its trace (which holds seconds)."""
    import numpy as np

    out = {}
    for path in sorted(root.glob("results/kos/*/K*/seed*/model.npz")):
        with np.load(path) as npz:
            out[str(path.relative_to(root))] = {k: npz[k] for k in npz.files
                                                if k != "trace_sha256"}
    return out


def _fit_runs(work: Path) -> set[tuple[str, int]]:
    """(label, K) of every fit that left a trace."""
    return {(p.parts[-4], int(p.parts[-3][1:]))
            for p in work.glob("results/kos/*/K*/seed0/trace.csv")}


def _config() -> dict:
    """The one-seed CI profile's config as Snakemake merges it (ci_profiles.py's
    one_seed_profile over config/config.yaml, key by key)."""
    from ci_profiles import one_seed_profile

    def merged(base, delta):
        return base | {k: merged(base[k], v) if isinstance(v, dict) and isinstance(
            base.get(k), dict) else v for k, v in delta.items()}

    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    return merged(config, one_seed_profile())


def _seconds_files(root: Path) -> list[str]:
    """What holds a measured number of seconds the report reads: rule timing's, C9's, the m
    sweep's runs (timed alone, each in its own job), and the runs the timing rule prices,
    whose own seconds give the cost of each pass beyond the timed ones
    (:mod:`same.report.timing`), as found under ``root``."""
    from same.experiments.runs import MAIN_LABELS, m_sweep_labels
    from same.experiments.tuning import TUNED_SUFFIX
    from same.report.timing import timing_entry

    labels = set(m_sweep_labels(_config()).values()) | {
        p.parts[-4] for p in root.glob("results/kos/*/K*/seed*/trace.csv")
        if timing_entry(p.parts[-4]).removesuffix(TUNED_SUFFIX) in MAIN_LABELS}
    runs = [str(p.relative_to(root)) for label in sorted(labels)
            for p in sorted(root.glob(f"results/kos/{label}/K*/seed*/*"))
            if p.name in ("trace.csv", "meta.json", "model.npz")]
    return ["results/kos/timing.json", "results/scaling/same_cpu.json", *runs]


def _report_files(root: Path) -> list[str]:
    """Every figure, table, page and claims file of a run (not the runs' own folders, logs,
    Snakemake's benchmarks, or the seconds of :func:`_seconds_files`)."""
    seconds = set(_seconds_files(root))
    out = []
    for top in ("figures", "results"):
        for path in sorted((root / top).rglob("*")):
            rel = str(path.relative_to(root))
            if (path.is_file() and rel not in seconds
                    and not re.match(r"results/(logs|snakemake_benchmarks)/", rel)
                    and not re.match(r"results/[^/]+/[^/]+/K\d+/", rel)):
                out.append(rel)
    return out


def _alone(jobs, comment) -> list[str]:
    """The jobs that ran beside the COMPLETED job of ``comment`` (sacct's seconds)."""
    job = next(j for j in jobs if j["comment"] == comment and j["state"] == "COMPLETED")
    return [j["comment"] for j in jobs if j is not job and j["start"] < job["end"]
            and job["start"] < j["end"]]


@pytest.mark.slow
def test_tiny_profile_through_slurm_equals_the_local_run(slurm_run, one_seed_run):
    """The whole profile through SLURM: every fit, the split, rule timing and C9's scaling a
    job that sacct lists COMPLETED, the report rules never submitted, the jobs timed alone
    alone on the node; the traces' held-out ll bit-identical to the local run's and φ equal;
    and with the local run's seconds in place of its own, every figure, table, page and
    claims file byte-identical to the local run's (the report rules that read them rerun,
    locally; no fit)."""
    run, ref = slurm_run.work, one_seed_run.dir
    assert slurm_run.resumed.returncode == 0, slurm_run.resumed.stderr[-3000:]
    fits = _fit_runs(run)
    assert len(fits) == N_FITS and fits == _fit_runs(ref), sorted(fits ^ _fit_runs(ref))
    jobs = slurm_run.jobs
    rules = {re.match(r"rule_([a-z0-9_]+?)(_wildcards_|$)", j["comment"]).group(1)
             for j in jobs}
    assert rules == SUBMITTED, rules  # tuning, tables, figures, pages, claims: local
    for label, k in fits:
        states = [j["state"] for j in jobs if j["comment"] == fit_comment(label, k)]
        assert states.count("COMPLETED") == 1, (label, k, states)
    from same.experiments.runs import m_sweep_labels

    timed = set(m_sweep_labels(_config()).values())
    assert timed and timed <= {label for label, _ in fits}, timed
    for comment in [*map(fit_comment, sorted(timed)), "rule_timing_wildcards_kos",
                    "rule_scaling"]:
        assert not _alone(jobs, comment), (comment, _alone(jobs, comment))
    traces = _traces(run)
    assert len(traces) == N_FITS and all(rows[0]["ll"] for rows in traces.values())
    assert traces == _traces(ref)
    models, ref_models = _models(run), _models(ref)
    assert models.keys() == ref_models.keys() and len(models) == N_FITS
    for path, arrays in models.items():
        assert arrays.keys() == ref_models[path].keys(), path
        for name, value in arrays.items():
            assert np.array_equal(value, ref_models[path][name]), (path, name)
    # the SLURM run's own seconds (the priced runs' traces too: their later passes' costs),
    # replaced by the local run's: only what reads them reruns
    for rel in _seconds_files(ref):
        shutil.copyfile(ref / rel, run / rel)  # a new mtime: what reads it is older
    rerun = subprocess.run([sys.executable, "-m", "snakemake", "--nolock", *one_seed_run.base,
                            "--directory", str(run)], env=one_seed_run.env,
                           capture_output=True, text=True, timeout=600)
    log = rerun.stdout + rerun.stderr
    assert rerun.returncode == 0, log[-3000:]
    ran = set(re.findall(r"^(?:local)?rule (\w+):$", log, re.M))
    assert ran and not ran & SUBMITTED, ran
    files = _report_files(run)
    assert files == _report_files(ref), sorted(set(files) ^ set(_report_files(ref)))
    assert {"results/claims.md", "results/kos/table1.md", "figures/kos/fig1_seconds.png"} <= set(
        files), files
    differ = [f for f in files if (run / f).read_bytes() != (ref / f).read_bytes()]
    assert not differ, differ


@pytest.mark.slow
def test_scancel_mid_fit_is_retried_and_a_failed_run_resumes(slurm_run, one_seed_run):
    """A fit cancelled by the scheduler mid-fit is resubmitted once (the profile's retries: 1)
    and finishes in the same run; one cancelled at both tries fails the run and leaves nothing
    of its run folder; the rerun makes it and only what was left to do."""
    cancelled, jobs = slurm_run.cancelled, slurm_run.jobs
    first_log = slurm_run.first_log
    assert len(cancelled[RETRIED]) == 1 and len(cancelled[FAILED]) == 2, cancelled
    tries = [j for j in jobs if j["comment"] == fit_comment(RETRIED)]
    assert [j["state"] for j in tries] == ["CANCELLED", "COMPLETED"], tries
    # the second try submitted by the first run itself (its retry), not by the rerun
    assert f"submitted with SLURM jobid {tries[1]['id']} " in first_log
    assert slurm_run.first_rc != 0
    assert f"SLURM-job '{cancelled[FAILED][1]}' failed" in first_log
    assert slurm_run.left_after_failure == [], slurm_run.left_after_failure
    tries = [j for j in jobs if j["comment"] == fit_comment(FAILED)]
    assert [j["state"] for j in tries] == ["CANCELLED", "CANCELLED", "COMPLETED"], tries
    assert [j["id"] for j in tries[:2]] == cancelled[FAILED]
    assert slurm_run.resumed.returncode == 0, slurm_run.resumed.stderr[-3000:]
    # the rerun redid no finished job: one COMPLETED job per fit, the split, timing, scaling
    completed = [j["comment"] for j in jobs if j["state"] == "COMPLETED"]
    assert len(completed) == len(set(completed)) == N_FITS + 3, completed
    # the cancelled fits' traces are the uninterrupted local run's
    labels = {RETRIED, FAILED}
    assert _traces(slurm_run.work, labels) == _traces(one_seed_run.dir, labels)


def test_the_readme_says_how_many_fits_ran_through_slurm():
    """The README's SLURM section names the fits this file runs under the scheduler
    (:data:`N_FITS`) and the CI profile's seeds (config/ci.yaml), so neither number there can
    drift."""
    section = (REPO / "README.md").read_text().split("What has run for real")[1][:1500]
    assert f"({N_FITS} fits, the split;" in section
    seeds = len(yaml.safe_load((REPO / "config/ci.yaml").read_text())["seeds"])
    words = {2: "two", 3: "three", 4: "four", 5: "five"}
    assert f"with one seed of its {words[seeds]}," in " ".join(section.split())
