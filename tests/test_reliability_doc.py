"""docs/reliability.md names only tests that exist, counts at least 80 classes, and maps each
of issue 27's sixteen groups to rows of its table."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEXT = (REPO / "docs" / "reliability.md").read_text()
FAULTS, _, GROUPS = TEXT.partition("## Issue 27's groups")


def test_every_test_in_the_fault_table_exists():
    rows = [line for line in FAULTS.splitlines() if re.match(r"\| \d+[a-z]? \|", line)]
    in_rows = [re.findall(r"`(tests/test_\w+\.py)::(test_\w+)`", row) for row in rows]
    assert len(rows) >= 80 and all(len(r) == 1 for r in in_rows)  # one test per row
    numbers = [re.match(r"\| (\d+[a-z]?) \|", row).group(1) for row in rows]
    assert len(set(numbers)) == len(numbers)
    for path, name in re.findall(r"`(tests/test_\w+\.py)::(test_\w+)`", TEXT):
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
