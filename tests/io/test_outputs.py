"""Issue 27, items 1, 2 and 4: ``same-lda fit`` writes only into a folder it creates, an empty
one, or an earlier output of its own; it never removes another writer's temporary folder.

Each test reproduces the issue's steps with the real command line in a subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

SPEC = json.dumps({"method": "same", "n_components": 3, "doc_topic_prior": 0.1,
                   "topic_word_prior": 0.1, "seed": 0, "budget": 2,
                   "params": {"n_copies": 5.0}})
OUTPUTS = ["meta.json", "model.npz", "trace.csv"]


@pytest.fixture(scope="module")
def split_file(tmp_path_factory):
    from same.data.split import make_split
    from same.data.synthetic import lda_corpus

    syn = lda_corpus(n_docs=120, n_words=50, n_topics=3, doc_length=40, seed=4)
    path = tmp_path_factory.mktemp("split") / "split.npz"
    make_split(syn.counts, 0.2, seed=0, name="toy").save(path)
    return path


def same_lda(*args, cwd=None, **kw):
    return subprocess.run([sys.executable, "-m", "same", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300, **kw)


def fit(split, out, cwd=None):
    return same_lda("fit", "--spec", SPEC, "--split", str(split), "--out", str(out),
                    "--no-progress", cwd=cwd)


def error(res) -> str:
    """The one line a failed command printed, without its ``<prog>: error: `` prefix."""
    assert res.stderr.count("\n") == 1 and ": error: " in res.stderr, res.stderr
    return res.stderr.split(": error: ", 1)[1]


def tree(root: Path) -> dict:
    """Every file under root with its bytes (to show nothing changed)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_fit_into_a_folder_with_a_users_file_keeps_it(split_file, tmp_path):
    """Item 1: ``mkdir p && echo x > p/thesis.tex && same-lda fit ... --out p`` exited 0 and
    thesis.tex was gone.  Now: exit 2, one line naming the folder and the file, nothing
    changed."""
    p = tmp_path / "p"
    p.mkdir()
    (p / "thesis.tex").write_text("x\n")
    res = fit(split_file, "p", cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert error(res) == ("--out p: holds files same-lda did not write "
                          "(thesis.tex); give a new or empty folder\n")
    assert tree(p) == {"thesis.tex": b"x\n"}
    assert sorted(x.name for x in tmp_path.iterdir()) == ["p"]  # no temporary left beside it


def test_fit_into_the_working_folder_or_a_parent_is_refused(split_file, tmp_path):
    """Item 2: ``--out .`` emptied the working folder, the input split included, then failed
    with ``[Errno 22]``.  Now ``.``, ``..``, the folder holding the split and ``/`` are
    refused before any training, and nothing in the working folder changes."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "split.npz").write_bytes(split_file.read_bytes())
    (work / "notes.md").write_text("keep me")
    before = tree(tmp_path)
    for out, why in [(".", "is the working folder or holds it"),
                     ("..", "is the working folder or holds it"),
                     ("/", "is the working folder or holds it")]:
        res = fit("split.npz", out, cwd=work)
        assert res.returncode == 2, res.stderr
        assert error(res) == (f"--out {out}: {why}; give a new folder for this "
                              "run's outputs\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    res = fit(work / "split.npz", work, cwd=elsewhere)
    assert error(res) == (f"--out {work}: holds the input {work / 'split.npz'}; "
                          "give a new folder for this run's outputs\n")
    assert tree(tmp_path) == before


def test_folder_with_our_file_names_but_not_our_meta_is_refused(split_file, tmp_path):
    """A folder holding only files named like ours is replaced only when its meta.json is a
    fit's: a user's own trace.csv beside a foreign meta.json stays."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "trace.csv").write_text("my,own\n")
    (out / "meta.json").write_text('{"author": "me"}')
    res = fit(split_file, out)
    assert res.returncode == 2
    assert error(res) == (f"--out {out}: holds meta.json, trace.csv but no "
                          "meta.json of a same-lda fit; give a new or empty folder\n")
    assert (out / "trace.csv").read_text() == "my,own\n"


# A fit whose writing is held open: after its three files are written into its temporary
# folder, it signals (marker file) and waits until the test says go.
_HELD_WRITER = """
import sys, time
from pathlib import Path
import same.experiments.runner as runner
real = runner.write_json
def held(path, obj):
    real(path, obj)
    Path(sys.argv[1]).write_text("written")
    while not Path(sys.argv[2]).exists():
        time.sleep(0.05)
runner.write_json = held
from same.experiments.cli import main
sys.exit(main(sys.argv[3:], prog="same-lda"))
"""


def test_two_fits_to_one_output_keep_each_others_temporary_folders(split_file, tmp_path):
    """Item 4: a second fit to the same ``--out`` removed the first's live temporary folder
    (every ``.out.tmp*`` was taken for a SIGKILLed run's leftover).  Now a temporary folder is
    removed only when its writer's lock is free: both fits finish (exit 0), the last to rename
    wins, each output complete, no temporary left."""
    out, written, go = tmp_path / "out", tmp_path / "written", tmp_path / "go"
    first = subprocess.Popen([sys.executable, "-c", _HELD_WRITER, str(written), str(go), "fit",
                              "--spec", SPEC, "--split", str(split_file), "--out", str(out),
                              "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        deadline = time.time() + 120
        while not written.exists() and first.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        assert written.exists(), first.communicate()[1]
        live = list(tmp_path.glob(".out.tmp*"))
        assert len(live) == 1 and sorted(p.name for p in live[0].iterdir()) == OUTPUTS
        second = fit(split_file, out)
        assert second.returncode == 0, second.stderr
        assert live[0].is_dir() and sorted(p.name for p in live[0].iterdir()) == OUTPUTS
        assert sorted(p.name for p in out.iterdir()) == OUTPUTS
    finally:
        go.write_text("go")
        _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert sorted(p.name for p in out.iterdir()) == OUTPUTS
    assert list(tmp_path.glob(".out.tmp*")) == []
    assert same_lda("check", str(out)).returncode == 0


_HELD_FIT = """
import sys, time
from pathlib import Path
import same.experiments.runner as runner
real = runner._trace_row
def held(*a, **k):
    Path(sys.argv[1]).write_text("training")
    time.sleep(120)
    return real(*a, **k)
runner._trace_row = held
from same.experiments.cli import main
sys.exit(main(sys.argv[2:], prog="same-lda"))
"""


def test_ctrl_c_during_a_fit_is_one_line_and_exit_130(split_file, tmp_path):
    """Item 16 (SIGINT): Ctrl-C during a fit exited 130 with a 31-line traceback.  Now one line
    and exit 130, and nothing of the run is left (no output, no temporary folder)."""
    import signal

    marker, out = tmp_path / "marker", tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-c", _HELD_FIT, str(marker), "fit", "--spec", SPEC,
                          "--split", str(split_file), "--out", str(out), "--no-progress"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not marker.exists() and p.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert marker.exists(), p.communicate()[1]
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130
    assert err == "same-lda: stopped by SIGINT\n"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["marker"]


def test_dead_temporaries_are_removed_by_their_exact_name_only(split_file, tmp_path):
    """Issue 36: a later fit removes a dead writer's temporary folder (lock free) only when its
    name is exactly ``.OUT.tmp-<16 hex digits>`` and it holds only regular files of our
    names; look-alike names, and our name holding a user's file, are kept byte for byte."""
    dead = tmp_path / ".out.tmp-0123456789abcdef"
    kept = {".out.tmp-0123456789abcdeg": "trace.csv", ".out.tmp-0123456789abcdef0": "trace.csv",
            ".out.tmp-0123456789ABCDEF": "trace.csv", ".out.tmp-fedcba9876543210": "notes.txt",
            ".out.tmp": "trace.csv", ".outx.tmp-0123456789abcdef": "trace.csv"}
    dead.mkdir()
    for name in OUTPUTS:
        (dead / name).write_bytes(b"left by a killed fit")
    for folder, name in kept.items():
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text("mine\n")
    before = {k: v for k, v in tree(tmp_path).items() if k.split("/")[0] != dead.name}
    res = fit(split_file, tmp_path / "out")
    assert res.returncode == 0, res.stderr
    assert not dead.exists()
    after = tree(tmp_path)
    assert {k: v for k, v in after.items() if not k.startswith("out/")} == before
