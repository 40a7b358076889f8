"""Hostile paths (issue 36): a config value or ``--out`` holding spaces, quotes, ``;``,
``$(...)``, backticks, glob characters or a newline is one path, taken literally; nothing in
it is executed and nothing is written outside the places it names.

The workflow's shell commands take every config value, path, wildcard and log quoted
(``{params.cache:q}``, ``{output.split:q}``, ...); ``same-lda`` never passes through a shell.
Each test plants ``touch PWNED`` in every form a shell would run it, then looks for a file
named ``PWNED`` anywhere.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
#: A path component a shell would run three times over (``;``, ``$(...)``, backticks), with
#: both quotes and a newline.
HOSTILE = "a b; touch PWNED; $(touch PWNED) `touch PWNED` 'q\" \nnl"


def _pwned(*roots: Path) -> list[Path]:
    """Files a planted ``touch PWNED`` would have made (every hostile name holds "PWNED" only
    inside longer names)."""
    return [p for root in roots for p in root.rglob("PWNED")]


def _snapshot(root: Path, skip: tuple[Path, ...]) -> dict[str, tuple]:
    """Every path under ``root`` but those under ``skip``: (kind, size, mtime)."""
    out = {}
    for p in root.rglob("*"):
        if any(p == s or s in p.parents for s in skip):
            continue
        st = p.lstat()
        out[str(p)] = (p.is_dir(), st.st_size, st.st_mtime_ns)
    return out


def _smk(*args, cwd: Path, env: dict, timeout: int = 300):
    return subprocess.run([sys.executable, "-m", "snakemake", "--nolock", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def hostile(tmp_path, uci_dir):
    """A working folder, a data folder (KOS, linked from the mirror), a cache folder (not yet
    there) and a report folder, each named with :data:`HOSTILE`; a config file naming them,
    with a tiny synthetic dataset and tiny scaling factors; the environment without
    SAME_DATA_DIR / SAME_CACHE_DIR, so only the config can point at the data and cache."""
    work = tmp_path / f"work {HOSTILE}"
    data = tmp_path / f"data {HOSTILE}"
    outside = tmp_path / "outside"  # Snakemake's own working directory: stays empty
    for d in (work, data, outside):
        d.mkdir()
    for name in ("docword.kos.txt.gz", "vocab.kos.txt"):
        (data / name).symlink_to(uci_dir / name)
    cache = tmp_path / f"cache {HOSTILE}"
    report = f"report {HOSTILE}"
    config = tmp_path / "hostile.yaml"
    config.write_text(yaml.safe_dump({
        "cache_dir": str(cache), "data_dir": str(data), "report_dir": report,
        "datasets": ["kos", "toy"],
        "synthetic": {"toy": {"like": "kos", "fraction": 0.02, "n_topics": 3, "seed": 1}},
        "scaling": {"factors": [0.01, 0.02]}, "seeds": [0]}))
    env = {k: v for k, v in os.environ.items() if k not in ("SAME_DATA_DIR", "SAME_CACHE_DIR")}
    args = ("--snakefile", str(REPO / "Snakefile"), "--directory", str(work), "--configfile",
            str(REPO / "config/ci.yaml"), str(config))
    return {"tmp": tmp_path, "work": work, "data": data, "cache": cache, "report": report,
            "outside": outside, "env": env, "args": args, "config": config}


@pytest.mark.slow
def test_hostile_config_paths_and_working_folder_run_no_shell_code(hostile):
    """Rules split (a UCI corpus: cache_dir, data_dir), synthesize and split_synthetic, fit
    (a tuned run's too: ``--tuning``), tuning and scaling (report_dir), run for real in a
    working folder of the same name: every job succeeds, its outputs are where the config
    says, the cache is the configured one, no PWNED anywhere, and nothing outside the
    working and cache folders changed."""
    h = hostile
    before = _snapshot(h["tmp"], skip=(h["work"], h["cache"]))
    targets = ["results/kos/split.npz", "results/toy/cgs/K8/seed0/trace.csv",
               f"{h['report']}/scaling/same_cpu.json",
               "results/toy/vb_online_tuned/K8/seed0/trace.csv"]  # fit's --tuning
    res = _smk("--cores", "1", *h["args"], "--", *targets, cwd=h["outside"], env=h["env"])
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    for target in targets + ["results/toy/corpus.npz", "results/toy/split.npz"]:
        assert (h["work"] / target).is_file(), target
    sizes = json.loads((h["work"] / targets[2]).read_text())["sizes"]
    assert [size["factor"] for size in sizes] == [0.01, 0.02]  # the config's, whole
    assert (h["cache"] / "docword.kos.npz").is_file()  # the parsed corpus, in the cache named
    meta = json.loads((h["work"] / "results/toy/vb_online_tuned/K8/seed0/meta.json").read_text())
    assert meta["tuning"]["path"] == "results/toy/tuning.json"
    assert _pwned(h["tmp"]) == [] and not list(REPO.glob("PWNED"))
    assert not list(Path.cwd().glob("PWNED"))
    assert _snapshot(h["tmp"], skip=(h["work"], h["cache"])) == before
    assert list(h["outside"].iterdir()) == []


def test_config_cache_dir_with_a_space_is_not_run_as_a_command(tmp_path, uci_dir):
    """The issue's reproduction: ``--config 'cache_dir=my cache'`` ran a command named
    ``cache`` (the split job failed), expanding ``$(touch PWNED)`` on the way; the split now
    runs and caches into the folder named, whole."""
    work = tmp_path / "w"
    work.mkdir()
    env = dict(os.environ, SAME_DATA_DIR=str(uci_dir))
    env.pop("SAME_CACHE_DIR", None)
    res = _smk("--cores", "1", "--snakefile", str(REPO / "Snakefile"), "--directory",
               str(work), "--configfile", str(REPO / "config/ci.yaml"), "--config",
               "cache_dir=my cache $(touch PWNED)", "--", "results/kos/split.npz",
               cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert (work / "results/kos/split.npz").is_file()
    assert (work / "my cache $(touch PWNED)/docword.kos.npz").is_file()
    assert _pwned(tmp_path) == []


def test_every_planned_shell_command_takes_hostile_config_paths_as_one_argument(hostile):
    """``snakemake -n -p`` of the whole CI profile (tuned fits' ``--tuning`` included), its
    config paths hostile (one line, so each printed command is one line; cache_dir and
    data_dir with braces too, which Snakemake would read as a wildcard in a plain string
    param): every command splits, as a shell would, into the arguments the rule means."""
    h = hostile
    cfg = yaml.safe_load(h["config"].read_text())
    one_line = {key: cfg[key].replace("\n", " ") + (" {w}" if key != "report_dir" else "")
                for key in ("cache_dir", "data_dir", "report_dir")}
    delta = h["tmp"] / "one_line.yaml"
    delta.write_text(yaml.safe_dump(one_line))
    res = _smk("-n", "-p", "--forceall", *h["args"], str(delta), cwd=h["outside"],
               env=h["env"])
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    prefix = "Shell command: "
    commands = [shlex.split(line.strip()[len(prefix):]) for line in res.stdout.splitlines()
                if line.strip().startswith(prefix) and line.strip() != prefix + "None"]
    by_kind = {}
    for argv in commands:
        if argv[0].startswith("SAME_CACHE_DIR="):
            assert argv[0] == "SAME_CACHE_DIR=" + one_line["cache_dir"], argv
            argv = argv[1:]
        # python -m <module> ... > <log> 2>&1: the log one argument, under results/logs
        assert argv[:2] == ["python", "-m"] and argv[-3] == ">" and argv[-1] == "2>&1", argv
        assert argv[-2].startswith("results/logs/"), argv
        by_kind.setdefault(argv[2] if argv[2] == "same.experiments.size_cost" else argv[3], []).append(argv)

    def value(argv, option):  # "--option value" or "--option=value"
        given = [a[len(option) + 1:] for a in argv if a.startswith(option + "=")]
        return given[0] if given else argv[argv.index(option) + 1]

    (split_kos,) = [a for a in by_kind["split"] if "--dataset" in a]
    assert value(split_kos, "--data-dir") == one_line["data_dir"]
    (scaling,) = by_kind["same.experiments.size_cost"]
    assert value(scaling, "--out") == f"{one_line['report_dir']}/scaling/same_cpu.json"
    assert value(scaling, "--factors") == "0.01" and scaling[scaling.index("--factors") + 2] == "0.02"
    tuned = [a for a in by_kind["fit"] if "--tuning" in a]
    assert tuned and {value(a, "--tuning") for a in tuned} == {"results/kos/tuning.json",
                                                               "results/toy/tuning.json"}
    for argv in by_kind["fit"]:
        json.loads(value(argv, "--spec"))  # the spec is one argument, whole
        assert Path(value(argv, "--out")).parts[0] == "results"
    assert len(by_kind["synthesize"]) == 1
    assert _pwned(h["tmp"]) == []


def test_report_dir_with_braces_is_refused_in_one_line(hostile):
    """Braces in report_dir would be read by Snakemake as a wildcard in its outputs' paths."""
    h = hostile
    delta = h["tmp"] / "braces.yaml"
    delta.write_text("report_dir: 'results/{x}'\n")
    res = _smk("-n", *h["args"], str(delta), cwd=h["outside"], env=h["env"])
    assert res.returncode == 1
    assert res.stderr.strip().splitlines()[-1] == (
        "config report_dir: 'results/{x}' holds '{' or '}', which Snakemake reads as a "
        "wildcard in its outputs' paths; name a folder without them")


#: ``--out`` names: shell code, quotes, a newline and glob characters, all literal.
OUT_NAME = f"out {HOSTILE} [*]?"


def test_cli_out_with_shell_and_glob_characters_is_taken_literally(tmp_path, split_path,
                                                                    capsys):
    """``same-lda synthesize``, ``split`` and ``fit`` (its spec read from a file of such a
    name too) write exactly at the hostile ``--out`` they are given and nowhere else."""
    from same.experiments import cli

    root = tmp_path / f"dir {HOSTILE}"
    root.mkdir()
    corpus, split, run = (root / f"{OUT_NAME}.corpus.npz", root / f"{OUT_NAME}.split.npz",
                          root / f"{OUT_NAME} run")
    spec_file = root / f"{OUT_NAME}.spec.json"
    spec_file.write_text(json.dumps({"method": "cgs", "n_components": 3, "doc_topic_prior": 0.1,
                                     "topic_word_prior": 0.1, "seed": 0, "budget": 2}))
    syn = json.dumps({"like": "kos", "fraction": 0.01, "n_topics": 3, "seed": 1})
    assert cli.main(["synthesize", "--name", "toy", "--spec", syn, "--out", str(corpus)]) == 0
    assert cli.main(["split", "--corpus", str(corpus), "--out", str(split)]) == 0
    assert cli.main(["fit", "--spec", f"@{spec_file}", "--split", str(split_path), "--out",
                     str(run), "--no-progress"]) == 0, capsys.readouterr().err
    assert {p.name for p in root.iterdir()} == {corpus.name, split.name, run.name,
                                                spec_file.name}
    assert {p.name for p in run.iterdir()} == {"trace.csv", "model.npz", "meta.json"}
    assert {p.name for p in tmp_path.iterdir()} == {root.name}
    assert _pwned(tmp_path) == [] and not list(Path.cwd().glob("PWNED"))


@pytest.mark.parametrize("under", ["", "/sub"])
def test_a_cache_dir_that_is_a_file_is_named_once(tmp_path, under):
    """``SAME_CACHE_DIR`` naming a file (or a path under one): every download source failed
    with ``FileExistsError: [Errno 17] File exists`` in one long line naming no variable;
    now one line naming SAME_CACHE_DIR, exit 2, nothing written, no source tried."""
    (tmp_path / "afile").write_text("mine\n")
    (tmp_path / "empty").mkdir()
    cache = f"{tmp_path / 'afile'}{under}"
    env = {**os.environ, "SAME_CACHE_DIR": cache, "SAME_DATA_DIR": str(tmp_path / "empty")}
    res = subprocess.run([sys.executable, "-m", "same", "split", "--dataset", "kos", "--out",
                          "s.npz"], capture_output=True, text=True, cwd=tmp_path, env=env,
                         timeout=120)
    assert res.returncode == 2
    assert res.stderr == (f"python -m same: error: $SAME_CACHE_DIR {cache}: {tmp_path / 'afile'} "
                          "is a file, not a folder; set SAME_CACHE_DIR to a folder for downloads "
                          "and parsed corpora\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "empty"]
    assert (tmp_path / "afile").read_text() == "mine\n"
