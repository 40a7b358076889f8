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
