"""Fuzz: seeded random corruptions of every artefact type end in one line and exit 2.

For each type, 250 corruptions (tests/data/fuzz_driver.py: flipped bytes, truncation, spliced
bytes, and content edits written back with a valid seal) are fed to the command that reads
that type, in one child process per type: a native crash would end the child with a signal
and fail the test, naming the last case.  Every corruption must end with exit status 2, one
line on stderr naming the file, and no output written.  The parsed-corpus cache is derived
data: a corrupted one is never used but rebuilt from the checked source with one warning,
and the corpus then loads equal to the intact one (docs/reliability.md, row 13).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

N_CASES = 250
DRIVER = Path(__file__).with_name("fuzz_driver.py")


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """Intact artefacts, each made by its real writer."""
    from same.data import corpus
    from same.data.synthetic import lda_corpus
    from same.experiments.cli import main

    w = tmp_path_factory.mktemp("fuzz")
    spec = json.dumps({"like": "kos", "fraction": 0.01, "n_topics": 3})
    assert main(["synthesize", "--name", "tiny", "--spec", spec,
                 "--out", str(w / "corpus.npz")]) == 0
    assert main(["split", "--corpus", str(w / "corpus.npz"), "--out", str(w / "split.npz")]) == 0
    run_spec = json.dumps({"method": "same", "n_components": 3, "doc_topic_prior": 0.1,
                           "topic_word_prior": 0.1, "seed": 0, "budget": 3,
                           "params": {"n_copies": 5.0}})
    assert main(["fit", "--spec", run_spec, "--split", str(w / "split.npz"), "--out",
                 str(w / "run"), "--no-progress"]) == 0
    # a tiny docword corpus and its parsed cache
    X = lda_corpus(n_docs=30, n_words=20, n_topics=3, doc_length=15, seed=2).counts.tocoo()
    lines = [f"{X.shape[0]}", f"{X.shape[1]}", f"{X.nnz}"] + [
        f"{d + 1} {v + 1} {c}" for d, v, c in sorted(zip(X.row, X.col, X.data))]
    with gzip.open(w / "docword.toy.txt.gz", "wt") as f:
        f.write("\n".join(lines) + "\n")
    (w / "vocab.toy.txt").write_text("".join(f"w{i}\n" for i in range(X.shape[1])))
    old = os.environ.get("SAME_CACHE_DIR")
    os.environ["SAME_CACHE_DIR"] = str(w / "cache")
    try:
        counts = corpus.load("toy", docword=w / "docword.toy.txt.gz",
                             vocab=w / "vocab.toy.txt").counts
    finally:
        os.environ.pop("SAME_CACHE_DIR") if old is None else os.environ.update(
            SAME_CACHE_DIR=old)
    assert (w / "cache" / "docword.toy.npz").is_file()
    np.savez(w / "counts_ref.npz", indptr=counts.indptr, indices=counts.indices,
             data=counts.data, shape=np.asarray(counts.shape))
    return w


def fuzz(kind: str, work: Path, tmp_path: Path) -> list[dict]:
    w = tmp_path / kind
    shutil.copytree(work, w)
    env = {**os.environ, "SAME_CACHE_DIR": str(w / "cache")}
    res = subprocess.run([sys.executable, str(DRIVER), kind, str(w), str(N_CASES), "27"],
                         capture_output=True, text=True, timeout=900, env=env)
    cases = sorted((w / "cases").iterdir(), key=lambda p: int(p.name)) if (
        w / "cases").is_dir() else []
    assert res.returncode == 0, (f"fuzz child ended with {res.returncode} (a negative value is "
                                 f"a signal) at case {cases[-1].name if cases else None}: "
                                 f"{res.stderr[-3000:]}")
    return json.loads(res.stdout.splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["split", "model", "corpus", "trace"])
def test_every_corruption_ends_in_one_line_and_exit_2(work, tmp_path, kind):
    results = fuzz(kind, work, tmp_path)
    assert len(results) == N_CASES >= 200
    bad = [r for r in results if not (r["rc"] == 2 and r["lines"] == 1 and not r["wrote"])]
    assert not bad, bad[:5]
    for r in results:
        assert r["message"].startswith("same-lda: error: ") and "/cases/" in r["message"], r
    # the structural checks, not only the seal, were exercised: edits written back with a
    # valid seal were refused for what they broke
    edits = [r for r in results if r["mode"] == "edit"]
    assert len(edits) >= 50
    assert sum("SHA-256 seal" not in r["message"] for r in edits) >= 25
    assert len(Counter(r["how"] for r in edits)) >= 8  # many kinds of edit


@pytest.mark.slow
def test_corrupted_parsed_cache_is_never_used(work, tmp_path):
    results = fuzz("cache", work, tmp_path)
    assert len(results) == N_CASES
    bad = [r for r in results if not (r["rc"] == 0 and r["lines"] == 1
                                      and "unreadable parsed-corpus cache" in r["message"]
                                      and r["message"].endswith("rebuilding it"))]
    assert not bad, bad[:5]
