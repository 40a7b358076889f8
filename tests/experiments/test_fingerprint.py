"""The code fingerprint the workflow's rules take as a parameter (same.experiments.provenance)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from same.experiments.provenance import code_fingerprint

REPO = Path(__file__).resolve().parents[2]

CODE = '''"""Module docstring."""

X = 1  # a comment


class A:
    """Class docstring."""

    def f(self, y):
        """Method docstring."""
        return y + X


async def g():
    """Only a docstring."""
'''


def fingerprint(root: Path) -> str:
    return code_fingerprint(root, ["pkg/*.py"])


@pytest.fixture
def pkg(tmp_path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/mod.py").write_text(CODE)
    return tmp_path


@pytest.mark.parametrize("edit", [
    lambda s: s.replace("Module docstring.", "Module docstring, reworded\n\nat length."),
    lambda s: s.replace('"""Method docstring."""', "'''Another.'''"),
    lambda s: s.replace('"""Only a docstring."""', '"""Only a docstring, longer."""'),
    lambda s: s.replace("# a comment", "# another comment\n# on two lines"),
    lambda s: s.replace("X = 1", "X = (\n    1\n)"),
    lambda s: s.replace("\n\nclass A", "\n\n\n# a comment block\n\nclass A"),
], ids=["module-docstring", "method-docstring", "docstring-only-body", "comment", "layout",
        "blank-lines"])
def test_docstrings_comments_and_layout_keep_the_fingerprint(pkg, edit):
    before = fingerprint(pkg)
    (pkg / "pkg/mod.py").write_text(edit(CODE))
    assert fingerprint(pkg) == before


@pytest.mark.parametrize("edit", [
    lambda s: s.replace("X = 1", "X = 2"),
    lambda s: s.replace("y + X", "X + y"),
    lambda s: s.replace('"""Only a docstring."""', '"""Only a docstring."""\n    return 1'),
    lambda s: s + "\nY = 'a string that is no docstring'\n",
], ids=["constant", "expression", "statement", "string-statement"])
def test_code_edits_change_the_fingerprint(pkg, edit):
    before = fingerprint(pkg)
    (pkg / "pkg/mod.py").write_text(edit(CODE))
    assert fingerprint(pkg) != before


def test_files_added_renamed_or_excluded(pkg):
    before = fingerprint(pkg)
    shutil.copy(pkg / "pkg/mod.py", pkg / "pkg/other.py")
    with_other = fingerprint(pkg)
    assert with_other != before
    assert code_fingerprint(pkg, ["pkg/*.py"], exclude=["pkg/other.py"]) == before
    (pkg / "pkg/mod.py").rename(pkg / "pkg/moved.py")
    assert fingerprint(pkg) != with_other


def test_same_code_elsewhere_has_the_same_fingerprint(pkg, tmp_path_factory):
    other = tmp_path_factory.mktemp("elsewhere")
    shutil.copytree(pkg / "pkg", other / "pkg")
    assert fingerprint(other) == fingerprint(pkg)


def test_a_pattern_matching_nothing_is_refused(pkg):
    with pytest.raises(ValueError, match=re.escape("'pkg/*.pyx' matches no file")):
        code_fingerprint(pkg, ["pkg/*.py", "pkg/*.pyx"])


def test_the_package_fingerprints():
    fp = code_fingerprint(REPO, ["same/*.py", "same/model/kernels/*.py", "baselines/*.py"])
    assert len(fp) == 64 and int(fp, 16) >= 0


def test_each_file_is_parsed_once_per_process_until_it_changes(pkg):
    """The workflow fingerprints a dozen overlapping sets of files at every Snakemake start:
    a file is parsed once for all of them, and again once its text changes (so an edit made
    while the process lives still moves the fingerprint)."""
    from same.experiments import provenance

    (pkg / "pkg/other.py").write_text("Y = 2\n")
    provenance._code_of.cache_clear()
    both = fingerprint(pkg)
    code_fingerprint(pkg, ["pkg/mod.py"])
    code_fingerprint(pkg, ["pkg/*.py"], exclude=["pkg/mod.py"])
    assert provenance._code_of.cache_info().misses == 2
    (pkg / "pkg/other.py").write_text("Y = 3\n")
    assert fingerprint(pkg) != both
    assert provenance._code_of.cache_info().misses == 3
