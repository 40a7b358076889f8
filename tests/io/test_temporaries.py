"""Issue 51, items 2, 4 and 6: an ``--out`` whose text names a folder is refused for a file;
a temporary's name fits NAME_MAX in bytes for any legal target name; a killed writer's
temporary file is removed by the next writer of the same target (its ``flock`` free), a live
writer's and every look-alike kept (:mod:`same.io.outputs`, rules 3 and 6).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from same.experiments.cli import main
from same.io.outputs import NEW_FILE, OutputError, check_target, is_temporary_of, write_file

SYN_SPEC = json.dumps({"like": "kos", "fraction": 0.01, "n_topics": 3})
FIT_SPEC = json.dumps({"method": "same", "n_components": 3, "doc_topic_prior": 0.1,
                       "topic_word_prior": 0.1, "seed": 0, "budget": 2,
                       "params": {"n_copies": 5.0}})
NAME_MAX = 255


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "c.npz"
    assert main(["synthesize", "--name", "toy", "--spec", SYN_SPEC, "--out", str(path)]) == 0
    return path


def listing(root: Path) -> dict:
    """Every entry under root: a file's bytes, a folder, a link's target."""
    out = {}
    for p in sorted(root.rglob("*")):
        key = str(p.relative_to(root))
        out[key] = (os.readlink(p) if p.is_symlink() else "dir" if p.is_dir()
                    else p.read_bytes())
    return out


# ----------------------------------------------------------------- item 2: --out naming a folder

@pytest.mark.parametrize("out, tail", [("sub/.", "/."), ("sub/..", "/.."), (".", "."),
                                       ("..", ".."), ("sub/./", "/")])
def test_out_naming_a_folder_is_refused_for_a_file(corpus_file, tmp_path, monkeypatch, capsys,
                                                   out, tail):
    """``split --out sub/.`` (and ``synthesize``) wrote a *file* named ``sub``: pathlib drops
    the ``/.``; ``sub/..``, ``.`` and ``..`` were refused as "the working folder".  Now every
    text that names a folder is refused as ``newdir/`` is, before any work, nothing written;
    a fit's ``--out x/..`` (the folder above x) too."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.npz").write_bytes(corpus_file.read_bytes())
    before = listing(tmp_path)
    for command, what in ((["synthesize", "--name", "toy", "--spec", SYN_SPEC],
                           "synthetic corpus"), (["split", "--corpus", "c.npz"], "split")):
        capsys.readouterr()
        assert main([*command, "--out", out]) == 2
        assert capsys.readouterr().err == (f"same-lda: error: --out {out}: ends in {tail}, "
                                           f"which names a folder; give the path of a {what} "
                                           "file\n")
    if tail == "/..":
        assert main(["fit", "--spec", FIT_SPEC, "--split", "c.npz", "--out", "sub/x/..",
                     "--no-progress"]) == 2
        assert capsys.readouterr().err == (
            "same-lda: error: --out sub/x/..: ends in /.., which names the folder above; give "
            "the folder's own path\n")
    assert listing(tmp_path) == before


_SEGMENT = st.text(st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",)),
                   max_size=8)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(parts=st.lists(_SEGMENT, max_size=3), tail=st.sampled_from(["/", "/.", "/..", ".", ".."]))
def test_any_out_text_naming_a_folder_is_refused_for_a_file(parts, tail):
    """Any path text ending in ``/``, or whose last part is ``.`` or ``..``."""
    text = "/".join(parts) + tail if tail.startswith("/") else (
        "/".join([*parts, tail]) if parts else tail)
    shown = tail if (tail.startswith("/") or not parts) else "/" + tail
    with pytest.raises(OutputError) as caught:
        check_target(text, NEW_FILE, option="--out")
    assert str(caught.value) == (f"--out {text}: ends in {shown}, which names a folder; give "
                                 "the path of a file file")


# ----------------------------------------------------------------- item 4: NAME_MAX in bytes

def _fit_bytes(text: str, limit: int = NAME_MAX) -> str:
    """The longest prefix of whole characters of ``text`` within ``limit`` UTF-8 bytes."""
    while len(os.fsencode(text)) > limit:
        text = text[:-1]
    return text


_NAMES = st.text(st.characters(blacklist_characters="/\0", blacklist_categories=("Cs",)),
                 min_size=1, max_size=NAME_MAX).map(_fit_bytes).filter(
    lambda n: n not in ("", ".", ".."))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=_NAMES)
@example(name="\N{GRINNING FACE}" * 60 + ".npz")  # 244 bytes: "File name too long"
@example(name="é" * 127)
@example(name="a" * NAME_MAX)
def test_any_legal_name_is_written_through_a_temporary_that_fits(tmp_path_factory, name):
    """A legal 244-byte name (60 emoji) failed with ``File name too long``: the temporary's
    name cut NAME at 200 characters, not bytes.  Now the temporary of any legal name fits
    NAME_MAX in bytes, holds whole characters, and is recognised as that target's."""
    folder = tmp_path_factory.mktemp("names")
    seen = []

    def write(f):
        seen.extend(e for e in os.listdir(folder))
        f.write(b"x")

    write_file(folder / name, write)
    assert len(seen) == 1 and len(os.fsencode(seen[0])) <= NAME_MAX
    assert is_temporary_of(seen[0], name, folder)
    cut = seen[0][1:-len(".tmp-0123456789abcdef")]
    assert name.startswith(cut) and (cut == name or len(os.fsencode(
        name[:len(cut) + 1])) + 22 > NAME_MAX)
    assert os.listdir(folder) == [name] and (folder / name).read_bytes() == b"x"


# ----------------------------------------------------------------- item 6: a killed writer

_HELD_SPLIT = """
import sys, time
from pathlib import Path
import same.data.artefact as artefact
real = artefact._seal
def held(f):
    real(f)
    if Path(sys.argv[1]).name == "written-killed":  # 1 MiB more, as a large split's temporary holds
        f.write(b"\\0" * (1 << 20))
        f.flush()
    Path(sys.argv[1]).write_text("written")
    while not Path(sys.argv[2]).exists():
        time.sleep(0.05)
artefact._seal = held
from same.experiments.cli import main
sys.exit(main(sys.argv[3:], prog="same-lda"))
"""


def _held_split(tmp_path: Path, tag: str) -> tuple[subprocess.Popen, Path]:
    """A ``same-lda split --out s.npz`` held after writing 1 MiB of its temporary file;
    (the process, the file that lets it go on)."""
    written, go = tmp_path / f"written-{tag}", tmp_path / f"go-{tag}"
    p = subprocess.Popen([sys.executable, "-c", _HELD_SPLIT, str(written), str(go), "split",
                          "--corpus", "c.npz", "--out", "s.npz"], cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not written.exists() and p.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert written.exists(), p.communicate()[1]
    return p, go


def _temporaries(folder: Path) -> set[str]:
    """The regular files named as the temporaries of ``folder/s.npz``."""
    return {e.name for e in os.scandir(folder) if is_temporary_of(e.name, "s.npz", folder)
            and e.is_file(follow_symlinks=False)}


def test_a_killed_splits_temporary_file_is_removed_by_the_next_run(corpus_file, tmp_path):
    """A SIGKILLed ``same-lda split`` left its 1 MiB ``.s.npz.tmp-*`` beside the target for
    good.  Now the next run writing ``s.npz`` removes it (its writer's lock is free), while a
    live writer's temporary, look-alike names, a link and a folder of our exact name, and
    another target's temporary are kept byte for byte."""
    (tmp_path / "c.npz").write_bytes(corpus_file.read_bytes())
    live, go = _held_split(tmp_path, "live")
    try:
        alive = _temporaries(tmp_path)
        assert len(alive) == 1
        killed, _ = _held_split(tmp_path, "killed")
        dead = _temporaries(tmp_path) - alive
        assert len(dead) == 1 and (tmp_path / next(iter(dead))).stat().st_size > 1 << 20
        killed.send_signal(signal.SIGKILL)
        killed.communicate(timeout=60)
        assert killed.returncode == -signal.SIGKILL and _temporaries(tmp_path) == alive | dead
        (tmp_path / "mine.txt").write_text("mine\n")
        for name in (".s.npz.tmp-0123456789abcdeg", ".s.npz.tmp-0123456789ABCDEF",
                     ".s.npz.tmp-0123456789abcdef0", ".s.npz.tmp", ".t.npz.tmp-0123456789abcdef",
                     ".s.npzx.tmp-0123456789abcdef"):
            (tmp_path / name).write_bytes(b"a user's file\n")
        (tmp_path / ".s.npz.tmp-00000000000000aa").symlink_to(tmp_path / "mine.txt")
        (tmp_path / ".s.npz.tmp-00000000000000bb").mkdir()
        (tmp_path / ".s.npz.tmp-00000000000000bb" / "notes").write_text("mine\n")
        kept = {k: v for k, v in listing(tmp_path).items() if k not in dead | alive}
        assert main(["split", "--corpus", str(tmp_path / "c.npz"), "--out",
                     str(tmp_path / "s.npz")]) == 0
        assert _temporaries(tmp_path) == alive  # the dead one removed, the live one kept
        after = listing(tmp_path)
        assert {k: after[k] for k in kept if k != "s.npz"} == kept
    finally:
        go.write_text("go")
        _, err = live.communicate(timeout=120)
    assert live.returncode == 0, err
    assert _temporaries(tmp_path) == set()
    assert main(["check", str(tmp_path / "s.npz")]) == 0


def test_a_temporary_removed_before_its_lock_is_replaced(tmp_path, monkeypatch):
    """A cleaner may find a new temporary file in the instant between its creation and its
    writer's ``flock`` and remove it as dead: the writer sees it unlinked once it holds the
    lock and writes through a new one; the output is complete, no temporary left."""
    import fcntl

    from same.io import outputs

    real, removed = fcntl.flock, []

    def cleaner_first(fd, op):
        path = os.readlink(f"/proc/self/fd/{fd}")
        if not removed and is_temporary_of(os.path.basename(path), "out.txt", tmp_path):
            removed.append(path)
            os.unlink(path)  # what a cleaner does while the lock is still free
        return real(fd, op)

    monkeypatch.setattr(outputs.fcntl, "flock", cleaner_first)
    outputs.write_text(tmp_path / "out.txt", "new\n", outputs.text_kind("note", "new\n"))
    assert len(removed) == 1 and os.listdir(tmp_path) == ["out.txt"]
    assert (tmp_path / "out.txt").read_text() == "new\n"
