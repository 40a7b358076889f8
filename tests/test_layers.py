"""The layout of same/ (issue 41): layers checked by import-linter, no import circle, a short top
level, the 0.1 module paths still importing with a FutureWarning, tests mirroring the layers."""

import importlib
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from same import _legacy

REPO = Path(__file__).resolve().parents[1]
LAYERS = ("io", "data", "model", "experiments", "report")


def lint_imports(cwd: Path, *args) -> subprocess.CompletedProcess:
    """``lint-imports`` (the command CI runs) over the packages under ``cwd``."""
    exe = Path(sys.executable).with_name("lint-imports")
    return subprocess.run([str(exe), "--no-cache", *args], cwd=cwd, capture_output=True,
                          text=True, env={"PYTHONPATH": str(cwd), "PATH": "/usr/bin:/bin"},
                          timeout=300)


def test_lint_imports_keeps_both_contracts():
    res = lint_imports(REPO)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Contracts: 2 kept, 0 broken." in res.stdout


@pytest.fixture
def tree_copy(tmp_path):
    """same/, baselines/ and pyproject.toml copied, to be broken on purpose."""
    for pkg in ("same", "baselines"):
        shutil.copytree(REPO / pkg, tmp_path / pkg,
                        ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


LAYERS_BROKEN = "same/ layers: report > experiments > (model | baselines) > data > io BROKEN"
ACYCLIC_BROKEN = ("no import circle in same/ or baselines/ (between siblings, at every depth) "
                  "BROKEN")


@pytest.mark.parametrize("module, line, broken, named", [
    # the data layer importing the report: an upward import
    ("same/data/split.py", "from same.report import paper", LAYERS_BROKEN,
     "same.data.split -> same.report.paper"),
    # baselines sit beside the model: neither may import the other
    ("same/model/params.py", "import baselines.cgs", LAYERS_BROKEN,
     "same.model.params -> baselines.cgs"),
    # two modules of one layer importing each other: allowed by the layers, not by acyclic
    ("same/data/docword.py", "from same.data import split", ACYCLIC_BROKEN,
     "No cycles are allowed in same.data."),
], ids=["upward", "model-to-baseline", "circle"])
def test_a_forbidden_import_breaks_a_contract(tree_copy, module, line, broken, named):
    path = tree_copy / module
    path.write_text(path.read_text() + f"\n{line}  # noqa\n")
    res = lint_imports(tree_copy)
    assert res.returncode == 1, res.stdout
    assert broken in res.stdout and named in res.stdout, res.stdout


def test_top_level_holds_at_most_eight_modules_and_the_layers():
    modules = sorted(p.name for p in (REPO / "same").glob("*.py"))
    assert len(modules) <= 8, modules
    packages = sorted(p.parent.name for p in (REPO / "same").glob("*/__init__.py"))
    assert packages == sorted(LAYERS)
    for layer in LAYERS:  # each layer says what it holds and what it may import
        doc = importlib.import_module(f"same.{layer}").__doc__
        assert doc and ("Imports:" in doc or layer == "report"), layer


def test_tests_mirror_the_layers():
    dirs = sorted(p.name for p in (REPO / "tests").iterdir()
                  if p.is_dir() and p.name != "__pycache__")
    assert dirs == sorted([*LAYERS, "baselines"])


def _fresh_import(name: str):
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        if isinstance(sys.modules[key], _legacy.LegacyModule):
            del sys.modules[key]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(f"import {name}", __file__, "exec"), {})  # an import statement of ours
    return sys.modules[name], [w for w in caught if issubclass(w.category, FutureWarning)]


@pytest.mark.parametrize("old", sorted(_legacy.MOVED))
def test_old_module_paths_warn_and_give_the_same_objects(old):
    module, caught = _fresh_import(f"same.{old}")
    new = _legacy.MOVED[old][0]
    assert [str(w.message) for w in caught] == [
        f"same.{old} is deprecated in 0.1 and will be removed in 0.2: import same.{new}"]
    assert caught[0].filename == __file__  # the warning names the importing line, not ours
    for target in _legacy.MOVED[old]:
        real = importlib.import_module(f"same.{target}")
        for name in getattr(real, "__all__", []):
            assert getattr(module, name) is getattr(real, name), (old, name)


def test_names_that_moved_between_modules_stay_reachable_at_their_old_paths():
    """Names split off to break import circles (issue 41) are still found where they were."""
    from same.data.protocol import CHECKPOINTS, paper_batch_size
    from same.experiments.plan import plan_runs, tuned_twins
    from same.io.cache import cache_dir
    from same.model.heldout_inputs import check_topic_word

    expected = {("runs", "plan_runs"): plan_runs, ("tuning", "tuned_twins"): tuned_twins,
                ("params", "paper_batch_size"): paper_batch_size,
                ("methods", "CHECKPOINTS"): CHECKPOINTS, ("download", "cache_dir"): cache_dir,
                ("evaluate", "check_topic_word"): check_topic_word}
    for (old, name), obj in expected.items():
        module, _ = _fresh_import(f"same.{old}")
        assert getattr(module, name) is obj, (old, name)


def test_old_subpackage_paths_import():
    module, caught = _fresh_import("same.kernels.cpu")
    import same.model.kernels.cpu as cpu

    assert module.set_threads is cpu.set_threads
    assert any("same.kernels.cpu is deprecated" in str(w.message) for w in caught)


def test_same_reexports_the_entry_points_and_evaluate_stays_callable():
    import same
    from same.data.corpus import load
    from same.data.split import make_split
    from same.model.evaluate import evaluate
    from same.model.sampler import SameLDA

    assert (same.SameLDA, same.load, same.make_split) == (SameLDA, load, make_split)
    _fresh_import("same.evaluate")  # the old module path now sits at same.evaluate too
    assert callable(same.evaluate)
    from same import evaluate as e

    assert e is evaluate or e.evaluate is evaluate


def test_python_dash_m_of_an_old_path_runs_the_new_module():
    res = subprocess.run([sys.executable, "-m", "same.scaling", "--help"], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "usage:" in res.stdout
    assert ("same.scaling is deprecated in 0.1 and will be removed in 0.2: python -m "
            "same.experiments.size_cost") in res.stderr


def test_an_unknown_attribute_of_an_old_path_names_the_new_module():
    module, _ = _fresh_import("same.sampler")
    with pytest.raises(AttributeError, match=r"module 'same.sampler' \(now same.model.sampler\) "
                                             r"has no attribute 'nope'"):
        module.nope  # noqa: B018


def test_an_old_path_beats_a_folder_an_older_install_left_behind(tmp_path):
    """Upgrading over 0.1's flat layout, pip leaves ``same/kernels/__pycache__`` (numba's cache
    files are not in the wheel's RECORD): ``import same.kernels`` still gets the forwarding
    module, not that folder as an empty namespace package (the legacy finder comes first)."""
    shutil.copytree(REPO / "same", tmp_path / "same",
                    ignore=shutil.ignore_patterns("__pycache__"))
    stale = tmp_path / "same" / "kernels" / "__pycache__"
    stale.mkdir(parents=True)
    (stale / "cpu.sddmm_csr-92.py311.nbi").write_bytes(b"")
    code = ("import warnings; warnings.simplefilter('ignore', FutureWarning)\n"
            "import same.kernels, same.model.kernels\n"
            "assert same.kernels.sddmm is same.model.kernels.sddmm\n"
            "print(same.model.kernels.__file__)")
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().startswith(str(tmp_path))
