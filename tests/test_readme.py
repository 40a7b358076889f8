"""The README's first two commands are the ones CI runs, and they work on a fresh machine."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    return [ln for ln in block.splitlines() if ln.strip() and not ln.startswith("#")]


def test_readme_opens_with_the_main_job_and_the_tests():
    main_job, tests = readme_commands()[:2]
    assert "snakemake --cores all" in main_job
    assert tests.endswith("python -m pytest -q")


def test_ci_runs_the_readme_test_command_verbatim():
    tests = readme_commands()[1]
    ci = (REPO / ".ci/run").read_text().splitlines()
    assert tests in ci


def test_relative_data_dir_works_from_other_directories(tmp_path, uci_dir):
    """The README's relative SAME_DATA_DIR reaches tools that run elsewhere (conftest makes it
    absolute for the test session; the workflow test runs snakemake with --directory)."""
    import os

    d = os.environ.get("SAME_DATA_DIR", "")
    if d:
        assert all(Path(p).is_absolute() for p in d.split(os.pathsep) if p)


def test_ci_runs_the_readme_test_command_in_an_environment_of_its_own():
    """Issue 51: the README's test command alone installs what its tests need. CI runs it in a
    virtual environment created for it, into which nothing but pip's own upgrade is installed
    before it, and leaves that environment before any other step installs anything."""
    tests = readme_commands()[1]
    ci = [ln.strip() for ln in (REPO / ".ci/run").read_text().splitlines()
          if ln.strip() and not ln.lstrip().startswith("#")]
    at = ci.index(tests)
    created = max(i for i in range(at) if ci[i].startswith("python3 -m venv "))
    env = ci[created].split()[-1]
    assert ci[created + 1] == f". {env}/bin/activate"
    before = [ln for ln in ci[created + 2:at] if "pip install" in ln]
    assert before == ["python -m pip install --quiet --upgrade pip"], before
    assert ci[at + 1] == "deactivate"
    later_envs = [ln.split()[-1] for ln in ci[at + 1:] if ln.startswith("python3 -m venv ")]
    assert env not in later_envs and all(f"{env}/" not in ln for ln in ci[at + 1:])


def test_the_readmes_limits_and_seed_minimum_are_the_codes():
    """The README's "Your own corpus" section states the code's constants, not copies that can
    drift: the seeds the verdicts are built for, a line's default byte limit, JSON nesting."""
    from same.data.corpusspec import TABLE_DEFAULTS
    from same.data.textclean import MAX_JSON_DEPTH
    from same.experiments.config import VERDICT_SEEDS

    text = " ".join((REPO / "README.md").read_text().split())
    assert f"with fewer than {VERDICT_SEEDS} `seeds` is noted before any fit" in text
    assert f"(default {TABLE_DEFAULTS['max_line_bytes'] // 2**20} MiB;" in text
    assert f"at most {MAX_JSON_DEPTH:,} levels deep" in text
    from same.experiments.timing import DEFAULT_ATTEMPTS, DEFAULT_QUIET_WAIT

    retries = {1: "one", 2: "two", 3: "three"}[DEFAULT_ATTEMPTS - 1]
    assert (f"(up to {DEFAULT_QUIET_WAIT:g} s before each of a measurement's {retries} "
            "retries,") in text


def test_the_readmes_corpora_sentence_has_the_runs_tokens_per_parameter():
    """The corpora paragraph (outside the rendered blocks) states KOS's and 20 Newsgroups'
    training tokens per φ parameter as claims.md prints them (per_parameter_text), computed
    here from the committed main runs' traces, not typed apart from them (it said 2.86 where
    1,386,399 / (32 · 15,200) = 2.85)."""
    from same.report import load_traces
    from same.report.traces import PAPER_TOKENS_PER_PARAMETER, per_parameter_text, shape_of

    def scale(dataset):
        paths = sorted((REPO / "results" / dataset / "same").glob("K*/seed*/trace.csv"))
        assert paths, dataset
        return shape_of(load_traces(paths[:1]), dataset)

    kos, news = scale("kos"), scale("20news")
    text = " ".join((REPO / "README.md").read_text().split())
    assert (f"on KOS at K = {kos['n_topics']} ({per_parameter_text(kos['tokens_per_parameter'])}"
            " training tokens per φ parameter) and on **20 Newsgroups** at K = "
            f"{news['n_topics']} ({per_parameter_text(news['tokens_per_parameter'])}, within 20% "
            "of NYTimes' ") in text
    assert news["tokens_per_parameter"] >= 0.8 * PAPER_TOKENS_PER_PARAMETER["NYTimes"]


def test_the_readmes_gpu_launch_figures_are_the_codes():
    """The README's GPU section states the launch code's constants (issue 50): the per-item
    bound, the chunk and run lengths, the blocks per launch and the register cap."""
    from same.model.kernels import launch
    from same.model.kernels.cuda_host import MAX_REGISTERS

    text = " ".join((REPO / "README.md").read_text().split())
    assert f"at least {launch.MIN_BLOCKS} blocks (two per H100 SM)" in text
    assert f"no thread runs more than {launch.ITEM_PASSES}·⌈K/32⌉ topic iterations" in text
    assert f"in chunks of at most {launch.CHUNK} entries" in text
    assert f"gives a warp {launch.NZ_CHUNK} nonzeros" in text
    assert f"cap of {MAX_REGISTERS['sample_accumulate']} registers" in text
    assert launch.WARP == 32 and "a warp whose 32 lanes" in text
