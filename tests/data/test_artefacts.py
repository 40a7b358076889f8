"""Issue 27, items 5-8: every artefact is checked (seal, structure, provenance) before use.

Each test reproduces the issue's steps with the real command line in a subprocess, so a
native crash shows as a signal instead of killing the test run.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import subprocess
import sys
import time

import numpy as np
import pytest

from same.data.artefact import save_npz
from same.experiments.rundir import seal_meta

SPEC = {"method": "same", "n_components": 3, "doc_topic_prior": 0.1, "topic_word_prior": 0.1,
        "seed": 0, "budget": 4, "params": {"n_copies": 5.0}}


def same_lda(*args, **kw):
    return subprocess.run([sys.executable, "-m", "same", *args], capture_output=True,
                          text=True, timeout=300, **kw)


def error(res) -> str:
    """The one line a failed command printed, without its ``<prog>: error: `` prefix."""
    assert res.returncode == 2, (res.returncode, res.stderr)
    assert res.stderr.count("\n") == 1 and ": error: " in res.stderr, res.stderr
    return res.stderr.split(": error: ", 1)[1].rstrip("\n")


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    """A synthetic corpus written by ``same-lda synthesize`` (the real writer)."""
    path = tmp_path_factory.mktemp("corpus") / "corpus.npz"
    res = same_lda("synthesize", "--name", "tiny", "--out", str(path), "--spec",
                   json.dumps({"like": "kos", "fraction": 0.02, "n_topics": 4}))
    assert res.returncode == 0, res.stderr
    return path


def arrays(path) -> dict:
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k].copy() for k in z.files}


@pytest.mark.parametrize("edit, message", [
    ("indptr_decreasing", "indptr decreases at row 5"),
    ("index_beyond_W", "word index 6906 out of range 0..6905"),
    ("negative_count", "data holds negative values (min -2)"),
    ("unsorted_row", "a row's word indices are not strictly increasing (unsorted or duplicated "
                     "entries)"),
])
def test_malformed_corpus_is_refused_before_compiled_code(corpus_file, tmp_path, edit, message):
    """Item 5: a corpus .npz with a non-monotone indptr made ``same-lda split`` die with
    ``free(): invalid next size`` (exit 134); with an index ≥ W it wrote a valid-looking split.
    Now the arrays are checked (even in a file whose seal is intact) before any indexing:
    exit 2, one line naming the file and the fault, no split written."""
    z = arrays(corpus_file)
    if edit == "indptr_decreasing":
        z["indptr"][5] = z["indptr"][6] + 3
    elif edit == "index_beyond_W":
        z["indices"][len(z["indices"]) // 2] = 6906
    elif edit == "negative_count":
        z["data"][7] = -2
    else:
        row = int(np.flatnonzero(np.diff(z["indptr"]) >= 2)[0])
        a = int(z["indptr"][row])
        z["indices"][[a, a + 1]] = z["indices"][[a + 1, a]]
    bad = tmp_path / "bad.npz"
    save_npz(bad, z)  # sealed: only the structural checks can refuse it
    out = tmp_path / "split.npz"
    res = same_lda("split", "--corpus", str(bad), "--out", str(out))
    assert error(res) == f"{bad}: {message}; rerun `same-lda synthesize` to rewrite it"
    assert not out.exists()


def test_unsealed_or_damaged_corpus_is_refused(corpus_file, tmp_path):
    """A corpus file written by another program (no seal) or damaged after writing."""
    plain = tmp_path / "plain.npz"
    np.savez(plain, **arrays(corpus_file))
    assert error(same_lda("split", "--corpus", str(plain), "--out", str(tmp_path / "s.npz"))) \
        .startswith(f"{plain}: not a sealed synthetic corpus file")
    flipped = tmp_path / "flipped.npz"
    b = bytearray(corpus_file.read_bytes())
    b[len(b) // 2] ^= 0x10
    flipped.write_bytes(bytes(b))
    assert error(same_lda("split", "--corpus", str(flipped), "--out", str(tmp_path / "s.npz"))) \
        == (f"{flipped}: synthetic corpus file does not match its SHA-256 seal (changed or "
            "damaged since it was written); rerun `same-lda synthesize` to rewrite it")
    assert not (tmp_path / "s.npz").exists()


@pytest.fixture(scope="module")
def split_file(corpus_file, tmp_path_factory):
    path = tmp_path_factory.mktemp("split") / "split.npz"
    assert same_lda("split", "--corpus", str(corpus_file), "--out", str(path)).returncode == 0
    return path


def lls(run_dir):
    with open(run_dir / "trace.csv") as f:
        return [row["ll"] for row in csv.DictReader(f)]


# A fit that signals (marker file) once it has loaded its split and trained a pass, then
# waits for the test's go; what the test does to the split file in between is the point.
_PAUSED_FIT = """
import sys, time
from pathlib import Path
import same.data.artefact, same.experiments.runner as runner
if sys.argv[3] == "map":
    same.data.artefact.MMAP_MIN_BYTES = 0  # map the split as a paper-scale one is mapped
real = runner._trace_row
def paused(*a, **k):
    row = real(*a, **k)
    if row["pass"] == 1:
        Path(sys.argv[1]).write_text("training")
        while not Path(sys.argv[2]).exists():
            time.sleep(0.05)
    return row
runner._trace_row = paused
from same.experiments.cli import main
sys.exit(main(sys.argv[4:], prog="same-lda"))
"""


@pytest.mark.parametrize("mode, change", [("read", "truncate_in_place"),
                                          ("map", "rewritten_by_same_lda_split")])
def test_split_changed_during_a_fit(split_file, corpus_file, tmp_path, mode, change):
    """Item 6: a split truncated and rewritten in place while a fit had it memory-mapped killed
    the fit with a bus error (exit 135).  Now a split below MMAP_MIN_BYTES is read, not mapped,
    so an outside in-place change cannot pull pages from under the fit; and a large (mapped)
    split rewritten by our own writer is replaced by rename, so the fit's mapping stays valid.
    Either way the fit ends normally with the trace of an undisturbed run."""
    split = tmp_path / "split.npz"
    split.write_bytes(split_file.read_bytes())
    ref = tmp_path / "ref"
    args = ["fit", "--spec", json.dumps(SPEC), "--split", str(split), "--no-progress"]
    assert same_lda(*args, "--out", str(ref)).returncode == 0
    marker, go, out = tmp_path / "marker", tmp_path / "go", tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-c", _PAUSED_FIT, str(marker), str(go), mode,
                          *args, "--out", str(out)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 120
        while not marker.exists() and p.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        assert marker.exists(), p.communicate()[1]
        if change == "truncate_in_place":
            with open(split, "r+b") as f:
                f.truncate(100)
                f.seek(0)
                f.write(b"\0" * 100)
        else:  # another split of the same corpus written over it by `same-lda split`
            res = same_lda("split", "--corpus", str(corpus_file), "--seed", "7", "--out",
                           str(split))
            assert res.returncode == 0, res.stderr
    finally:
        go.write_text("go")
        _, err = p.communicate(timeout=300)
    assert p.returncode == 0, (p.returncode, err)
    assert lls(out) == lls(ref)


def test_score_refuses_a_model_trained_on_another_split(split_file, corpus_file, tmp_path):
    """Item 7: ``same-lda score`` with a split of the same corpus made with another seed
    exited 0 with an ll, though the model had trained on many of its test documents.  Now it
    is refused, naming both checksums; ``--allow-other-split`` scores anyway."""
    run_dir = tmp_path / "run"
    assert same_lda("fit", "--spec", json.dumps({**SPEC, "budget": 1}), "--split",
                    str(split_file), "--out", str(run_dir), "--no-progress").returncode == 0
    other = tmp_path / "other.npz"
    assert same_lda("split", "--corpus", str(corpus_file), "--seed", "1", "--out",
                    str(other)).returncode == 0
    from same.data.split import load_split

    mine, theirs = load_split(split_file).checksum(), load_split(other).checksum()
    model = run_dir / "model.npz"
    res = same_lda("score", "--model", str(model), "--split", str(other))
    assert error(res) == (f"{model}: trained on another split (sha256 {mine[:12]}…) than this "
                          f"one ({theirs[:12]}…, seed 1): its test documents may be the "
                          "model's training documents; pass --allow-other-split to score anyway")
    res = same_lda("score", "--model", str(model), "--split", str(other), "--allow-other-split")
    assert res.returncode == 0 and np.isfinite(json.loads(res.stdout)["ll"])
    assert same_lda("score", "--model", str(model), "--split", str(split_file)).returncode == 0


@pytest.fixture(scope="module")
def run_dir(split_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "run"
    assert same_lda("fit", "--spec", json.dumps(SPEC), "--split", str(split_file), "--out",
                    str(out), "--no-progress").returncode == 0
    return out


def _rewrite(trace, rows, reseal: bool):
    """Write trace rows (header first); ``reseal``: record the new SHA-256 in meta.json too,
    as a user who edits both files would (then only the structural checks can object)."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    trace.write_text(buf.getvalue())
    if reseal:
        meta = json.loads((trace.parent / "meta.json").read_text())
        meta["trace_sha256"] = hashlib.sha256(trace.read_bytes()).hexdigest()
        (trace.parent / "meta.json").write_text(json.dumps(seal_meta(meta)))


@pytest.mark.parametrize("damage", ["last_row_missing", "final_ll_nan"])
@pytest.mark.parametrize("reseal", [False, True])
def test_report_refuses_a_trace_cut_short_or_with_a_nan_ll(run_dir, tmp_path, damage, reseal):
    """Item 8: a trace.csv missing its last row, or with its final ll set to nan, was read by
    the next workflow run as a finished run (pass 1 or a NaN taken as final), with no warning.
    Now the reports' reader (``load_traces``) and ``same-lda check`` refuse it, naming the file:
    by its SHA-256 in meta.json, and when that was edited too, by the run's checkpoints or
    the non-finite ll."""
    from same.experiments.rundir import RunDirError
    from same.report import load_traces

    d = tmp_path / "run"
    d.mkdir()
    for name in ("trace.csv", "meta.json", "model.npz"):
        (d / name).write_bytes((run_dir / name).read_bytes())
    load_traces([d / "trace.csv"])  # intact: read
    rows = list(csv.reader(io.StringIO((d / "trace.csv").read_text())))
    if damage == "last_row_missing":
        rows = rows[:-1]
    else:
        rows[-1][rows[0].index("ll")] = "nan"
    _rewrite(d / "trace.csv", rows, reseal)
    trace = d / "trace.csv"
    expected = (f"{trace}: does not match the SHA-256 its meta.json records (changed or damaged "
                "since the fit wrote it); rerun the fit that wrote it") if not reseal else (
        f"{trace}: holds checkpoints 3 (1..3) but a run of budget 4 writes 4 (1..4); rerun the "
        "fit that wrote it" if damage == "last_row_missing" else
        f"{trace}: ll is not finite at pass 4; rerun the fit that wrote it")
    with pytest.raises(RunDirError) as info:
        load_traces([trace])
    assert str(info.value) == expected
    assert error(same_lda("check", str(d))) == expected


def test_trace_without_a_recorded_digest_is_refused(run_dir, tmp_path):
    """A run folder written before traces were sealed (meta.json without trace_sha256): its
    trace cannot be told intact, so reports refuse it and name the fix."""
    d = tmp_path / "old"
    d.mkdir()
    (d / "trace.csv").write_bytes((run_dir / "trace.csv").read_bytes())
    meta = json.loads((run_dir / "meta.json").read_text())
    del meta["trace_sha256"]
    (d / "meta.json").write_text(json.dumps(seal_meta(meta)))
    assert error(same_lda("check", str(d / "trace.csv"))) == (
        f"{d / 'trace.csv'}: its meta.json records no trace_sha256 (written before traces were "
        "checked); rerun the fit that wrote it")


def test_synthetic_corpus_named_like_a_uci_corpus_is_refused(tmp_path):
    """Item 3 on the command line: ``synthesize --name kos`` would label a synthetic corpus,
    its split and its runs as the real KOS."""
    out = tmp_path / "c.npz"
    res = same_lda("synthesize", "--name", "kos", "--out", str(out), "--spec",
                   json.dumps({"like": "kos", "fraction": 0.02, "n_topics": 4}))
    assert error(res) == ("synthetic dataset 'kos': 'kos' is the name of a UCI corpus (kos, nips, "
                          "enron, nytimes, pubmed); give the synthetic dataset another name")
    assert not out.exists()


def test_check_names_what_is_not_ours(tmp_path):
    """``same-lda check`` on a file that is no artefact of ours: one line, exit 2."""
    other = tmp_path / "data.npz"
    np.savez(other, x=np.arange(3))
    assert error(same_lda("check", str(other))).startswith(
        f"{other}: not a sealed same-lda artefact (no SHA-256 seal at its end")
    assert error(same_lda("check", str(tmp_path / "missing.npz"))) == (
        f"{tmp_path / 'missing.npz'}: no such file or folder")


def test_memory_a_spec_or_header_implies_is_refused_before_allocation(tmp_path):
    """Item 16: ``n_topics: 10**7`` (a 515 GiB φ on KOS's vocabulary) and a docword header
    with W = 10**10 ended in a MemoryError traceback at fit, after load and split accepted
    them.  The lower bound of what the method holds (same.model.fit_memory) is compared with the
    memory available before anything is allocated: one line, exit 2."""
    import gzip

    from same.model.fit_memory import fit_memory_lower_bound

    docword = tmp_path / "docword.huge.txt.gz"
    with gzip.open(docword, "wt") as f:
        f.write("3\n10000000000\n4\n1 1 2\n1 2 1\n2 3 4\n3 1 1\n")
    from same.data import corpus
    from same.data.split import make_split

    huge = tmp_path / "huge.npz"
    make_split(corpus.load("huge", docword=docword, use_cache=False), 0.34, 0).save(huge)
    spec = {**SPEC, "budget": 1}
    need = fit_memory_lower_bound("same", 3, 10**10) / 2**30
    msg = error(same_lda("fit", "--spec", json.dumps(spec), "--split", str(huge), "--out",
                         str(tmp_path / "a"), "--no-progress"))
    assert msg.startswith(f"same with n_components=3 × 10000000000 words: its φ arrays need at least "
                          f"{need:.1f} GiB, more than the ")
    assert msg.endswith(" GiB available; use fewer topics or a smaller vocabulary")
    from same.data.synthetic import lda_corpus

    X = lda_corpus(n_docs=20, n_words=6906, n_topics=3, doc_length=20, seed=0).counts
    small = tmp_path / "small.npz"
    make_split(X, 0.2, 0).save(small)
    for method in ("same", "cgs", "vb_online"):
        msg = error(same_lda("fit", "--spec", json.dumps({**spec, "method": method, "params": {},
                                                          "n_components": 10**7}),
                             "--split", str(small), "--out", str(tmp_path / "b"), "--no-progress"))
        assert msg.startswith(f"{method} with n_components=10000000 × 6906 words: its φ arrays need")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docword.huge.txt.gz", "huge.npz",
                                                          "small.npz"]
    from same.model.sampler import SameLDA

    with pytest.raises(MemoryError, match=r"same with n_components=10000000 × 6906 words: its φ "
                                          r"arrays and θ of 20 documents need at least"):
        SameLDA(n_components=10**7).fit(X)


def _copy_run(src, dst):
    dst.mkdir(parents=True)
    for name in ("trace.csv", "meta.json", "model.npz"):
        (dst / name).write_bytes((src / name).read_bytes())
    return dst


@pytest.fixture(scope="module")
def other_run_dir(split_file, tmp_path_factory):
    """A second run on the same split: another seed, so another model and trace."""
    out = tmp_path_factory.mktemp("other") / "run"
    spec = json.dumps({"method": "same", "n_components": 4, "doc_topic_prior": 0.1,
                       "topic_word_prior": 0.1, "seed": 1, "budget": 4,
                       "params": {"n_copies": 5.0}})
    res = same_lda("fit", "--spec", spec, "--split", str(split_file), "--out", str(out),
                   "--no-progress")
    assert res.returncode == 0, res.stderr
    return out


def test_check_refuses_a_run_folder_holding_another_runs_model(run_dir, other_run_dir,
                                                                tmp_path):
    """Issue 36: ``same-lda check`` said ``ok: true`` for a run folder whose model.npz was
    another run's (nothing bound the model to the trace).  meta.json now records the model's
    SHA-256, and the model its run's trace and settings digests."""
    d = _copy_run(run_dir, tmp_path / "run")
    assert json.loads(same_lda("check", str(d)).stdout)["ok"] is True  # intact: passes
    (d / "model.npz").write_bytes((other_run_dir / "model.npz").read_bytes())
    assert error(same_lda("check", str(d))) == (
        f"{d / 'model.npz'}: is not the model its meta.json records (SHA-256 differs: another "
        "run's model, or replaced); rerun the fit that wrote it")


@pytest.mark.parametrize("key, value", [("method", "cgs"), ("n_components", 7),
                                        ("params", {"n_copies": 50.0})])
def test_check_refuses_a_run_folder_whose_meta_was_edited(run_dir, tmp_path, key, value):
    """Issue 36: ``same-lda check`` said ``ok: true`` for a run folder whose meta.json was
    edited (method, K, m).  meta.json is sealed (``meta_sha256``): an edit is refused by the
    seal, and an edit sealed again by the model's record of the run's settings.  Reports read
    meta.json through the same check, so they refuse it too."""
    from same.experiments.rundir import RunDirError
    from same.report import load_traces

    d = _copy_run(run_dir, tmp_path / "run")
    meta = json.loads((d / "meta.json").read_text())
    meta["settings"][key] = value
    (d / "meta.json").write_text(json.dumps(meta))
    sealed = (f"{d / 'meta.json'}: does not match its meta_sha256 (edited or damaged since the "
              "fit wrote it); rerun the fit that wrote it")
    assert error(same_lda("check", str(d))) == sealed
    with pytest.raises(RunDirError, match="does not match its meta_sha256"):
        load_traces([d / "trace.csv"])
    (d / "meta.json").write_text(json.dumps(seal_meta(meta)))  # a careful forger reseals
    assert error(same_lda("check", str(d))) == (
        f"{d / 'model.npz'}: its settings_sha256 does not match the run's meta.json and "
        "trace.csv (written by another run); rerun the fit that wrote it")


def test_run_folder_written_before_meta_was_sealed_is_refused(run_dir, tmp_path):
    """A meta.json without ``meta_sha256`` (written before this version) cannot be told
    unedited: refused with the remedy, by ``check`` and by the reports' reader."""
    d = _copy_run(run_dir, tmp_path / "run")
    meta = json.loads((d / "meta.json").read_text())
    del meta["meta_sha256"]
    (d / "meta.json").write_text(json.dumps(meta))
    assert error(same_lda("check", str(d))) == (
        f"{d / 'meta.json'}: records no meta_sha256 (written before meta.json was sealed); "
        "rerun the fit that wrote it")
