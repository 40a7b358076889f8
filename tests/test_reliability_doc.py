"""docs/reliability.md names only tests that exist, counts at least 140 classes, groups issue
36's by root cause, and maps each of issue 27's sixteen groups to rows of its table."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEXT = (REPO / "docs" / "reliability.md").read_text()
FAULTS, _, GROUPS = TEXT.partition("## Issue 27's groups")


def test_every_test_in_the_fault_table_exists():
    rows = [line for line in FAULTS.splitlines() if re.match(r"\| \d+[a-z]? \|", line)]
    in_rows = [re.findall(r"`(tests/(?:\w+/)?test_\w+\.py)::(test_\w+)`", row) for row in rows]
    assert len(rows) >= 140 and all(len(r) == 1 for r in in_rows)  # one test per row
    numbers = [re.match(r"\| (\d+[a-z]?) \|", row).group(1) for row in rows]
    assert len(set(numbers)) == len(numbers)
    for path, name in re.findall(r"`(tests/(?:\w+/)?test_\w+\.py)::(test_\w+)`", TEXT):
        tree = ast.parse((REPO / path).read_text())
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert name in names, f"{path}::{name} named in docs/reliability.md does not exist"


def test_each_group_of_issue_27_points_at_rows_of_the_table():
    rows = {re.match(r"\| (\d+[a-z]?) \|", line).group(1)
            for line in FAULTS.splitlines() if re.match(r"\| \d+[a-z]? \|", line)}
    groups = dict(re.findall(r"^\| (\d+) \| .* \| ([\d, ]+) \|$", GROUPS, flags=re.M))
    assert sorted(map(int, groups)) == list(range(1, 17))
    for item, refs in groups.items():
        cited = [r.strip() for r in refs.split(",")]
        assert cited and set(cited) <= rows, (item, cited)


def test_issue_36s_classes_are_grouped_by_root_cause():
    """Both root causes of issue 36 have a section, each with rows naming the tests that pin
    them (the write discipline's and the input gate's own test files)."""
    sections = re.split(r"^## ", FAULTS, flags=re.M)
    by_title = {s.splitlines()[0]: s for s in sections[1:]}
    for cause, test_file in (("root cause 1", "test_write_discipline.py"),
                             ("root cause 2", "test_input_gate.py")):
        body = next(v for k, v in by_title.items() if cause in k)
        assert len(re.findall(r"^\| \d+ \|", body, flags=re.M)) >= 15
        assert test_file in body
