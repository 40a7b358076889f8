"""docs/reliability.md names only tests that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_every_test_in_the_fault_table_exists():
    text = (REPO / "docs" / "reliability.md").read_text()
    rows = [line for line in text.splitlines() if re.match(r"\| \d+[a-z]? \|", line)]
    in_rows = [re.findall(r"`(tests/test_\w+\.py)::(test_\w+)`", row) for row in rows]
    assert len(rows) >= 25 and all(len(r) == 1 for r in in_rows)  # one test per row
    refs = re.findall(r"`(tests/test_\w+\.py)::(test_\w+)`", text)
    for path, name in refs:
        tree = ast.parse((REPO / path).read_text())
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert name in names, f"{path}::{name} named in docs/reliability.md does not exist"
