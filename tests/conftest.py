"""Shared fixtures: an isolated cache directory per test, the UCI mirror, and a toy split.

Tests that need real data use the ``uci_dir`` fixture: where ``$SAME_DATA_DIR``
(or ../shared/datasets/uci beside the checkout) lacks the files, they are
skipped locally but FAIL in CI (``CI=true``), never skipped silently there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
# The tests mirror the layers (tests/<layer>/, basenames unique); a test module that shares
# helpers with another layer's (``from test_corpus import GOOD``) finds it in any order.
for _layer in ("io", "data", "model", "baselines", "experiments", "report"):
    if str(Path(__file__).parent / _layer) not in sys.path:
        sys.path.insert(0, str(Path(__file__).parent / _layer))
_DEFAULT_MIRROR = REPO.parent / "shared" / "datasets" / "uci"

# The README's command gives SAME_DATA_DIR relative to the checkout; tests that run tools in
# other working directories (snakemake --directory, subprocesses) need it absolute.
if os.environ.get("SAME_DATA_DIR"):
    os.environ["SAME_DATA_DIR"] = os.pathsep.join(
        str(Path(part).resolve()) for part in os.environ["SAME_DATA_DIR"].split(os.pathsep)
        if part)


def _mirror() -> Path | None:
    for part in os.environ.get("SAME_DATA_DIR", "").split(os.pathsep) + [str(_DEFAULT_MIRROR)]:
        if part and (Path(part) / "docword.kos.txt.gz").is_file():
            return Path(part)
    return None


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Every test gets its own empty SAME_CACHE_DIR, so caches never leak between tests."""
    d = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("SAME_CACHE_DIR", str(d))
    return d


@pytest.fixture
def cache_path(_isolated_cache) -> Path:
    return _isolated_cache


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache folder of the test's own, and no $SAME_DATA_DIR: corpora are built (or
    downloaded from a local server) there."""
    d = tmp_path / "cache"
    monkeypatch.setenv("SAME_CACHE_DIR", str(d))
    monkeypatch.setenv("SAME_DATA_DIR", "")
    return d


@pytest.fixture(scope="session")
def uci_dir() -> Path:
    d = _mirror()
    if d is None:
        msg = ("UCI mirror not found: set SAME_DATA_DIR to a directory holding "
               "docword.kos.txt.gz and the vocab files")
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(msg)
        pytest.skip(msg)
    return d


@pytest.fixture(scope="session")
def one_seed_run(tmp_path_factory, uci_dir):
    """The one-seed CI profile (ci_profiles.one_seed_profile), run locally once per session: the
    uninterrupted run that tests/test_workflow.py's SIGKILL test and tests/test_slurm.py's
    SLURM runs are compared with. Read it, never write to it: ``config``, the run's folder
    ``dir``, the Snakemake arguments ``base`` (all but ``--directory``) and ``env``."""
    import yaml

    root = tmp_path_factory.mktemp("one_seed")
    config = root / "one_seed.yaml"
    from ci_profiles import one_seed_profile

    config.write_text(yaml.safe_dump(one_seed_profile(), sort_keys=False))
    run = root / "run"
    run.mkdir()
    env = dict(os.environ, SAME_DATA_DIR=str(uci_dir))
    base = ("--cores", "2", "--configfile", str(config), "--snakefile", str(REPO / "Snakefile"))
    res = subprocess.run([sys.executable, "-m", "snakemake", "--nolock", *base, "--directory",
                          str(run)], env=env, capture_output=True, text=True, timeout=1800)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return SimpleNamespace(config=config, dir=run, base=base, env=env)


@pytest.fixture
def kos(uci_dir, monkeypatch):
    from same.data import corpus

    monkeypatch.setenv("SAME_DATA_DIR", str(uci_dir))
    return corpus.load("kos", download=False)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="module")
def split_path(tmp_path_factory):
    """A saved split of a tiny LDA corpus (200 documents, 80 words, 3 topics), 20 % test."""
    from same.data.split import make_split
    from same.data.synthetic import lda_corpus

    syn = lda_corpus(n_docs=200, n_words=80, n_topics=3, doc_length=60, seed=9)
    path = tmp_path_factory.mktemp("split") / "split.npz"
    make_split(syn.counts, 0.2, seed=0, name="toy").save(path)
    return path
