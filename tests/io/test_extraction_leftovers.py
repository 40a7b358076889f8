"""A killed 20 Newsgroups extraction or UCI member copy leaves nothing for good: both write
through :mod:`same.io.outputs`' locked temporaries, so the next writer of the same target
removes what a killed one left, and keeps a live writer's and every look-alike."""

from __future__ import annotations

import hashlib
import io
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from same.data.newsgroups import NEWSGROUPS, newsgroups_folders
from same.io.outputs import is_temporary_of

MEMBERS = {"20news-bydate-train/sci.space/1": b"From: a\n\nrocket orbit launch crew",
           "20news-bydate-test/rec.autos/2": b"From: b\n\nengine wheel car road"}

_HELD_EXTRACTION = """
import sys, tarfile, time
from pathlib import Path
real = tarfile.TarFile.extractall
def held(self, path, *args, **kw):
    real(self, path, *args, **kw)
    Path(sys.argv[1]).write_text("extracted")
    while not Path(sys.argv[2]).exists():
        time.sleep(0.05)
tarfile.TarFile.extractall = held
from same.data.newsgroups import newsgroups_folders
print(newsgroups_folders(sys.argv[3], download=False)[0])
"""


def _archive(folder: Path) -> Path:
    """A tar.gz of :data:`MEMBERS` named as 20 Newsgroups' archive, with its manifest."""
    folder.mkdir()
    path = folder / NEWSGROUPS.filename
    with tarfile.open(path, "w:gz") as tf:
        for member, data in MEMBERS.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    (folder / NEWSGROUPS.manifest).write_text("".join(
        f"{hashlib.sha256(d).hexdigest()}  {m}\n" for m, d in sorted(MEMBERS.items())))
    return path


def _held(tmp_path: Path, tag: str, archive_dir: Path, cache: Path):
    """An extraction into ``cache`` held after extracting, before its rename; (the process,
    the file that lets it go on)."""
    done, go = tmp_path / f"extracted-{tag}", tmp_path / f"go-{tag}"
    env = dict(os.environ, SAME_CACHE_DIR=str(cache), SAME_DATA_DIR="")
    p = subprocess.Popen([sys.executable, "-c", _HELD_EXTRACTION, str(done), str(go),
                          str(archive_dir)], env=env, cwd=tmp_path, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while not done.exists() and p.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert done.exists(), p.communicate()[1]
    return p, go


def _listing(folder: Path) -> dict[str, bytes | str]:
    """Every entry under ``folder`` (not following links): file bytes, a link's target."""
    out: dict[str, bytes | str] = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = Path(root) / name
            rel = p.relative_to(folder).as_posix()
            out[rel] = (f"-> {os.readlink(p)}" if p.is_symlink()
                        else p.read_bytes() if p.is_file() else "dir")
    return out


def test_a_killed_extraction_is_removed_whole_by_the_next_one(tmp_path, cache):
    """A SIGKILLed extraction left its ``.20news-bydate-<sha>.part-*`` tree in the cache for
    good (it was named by the writer's pid, with no lock).  Now the next extraction of the
    archive removes it whole (exact temporary name, lock free), keeps a live extraction's
    temporary, look-alike names and a link of our exact name byte for byte, and the live one
    then finishes too, its identical copy swapped in by one rename."""
    archive_dir = tmp_path / "archive"
    archive = _archive(archive_dir)
    target = f"20news-bydate-{hashlib.sha256(archive.read_bytes()).hexdigest()[:16]}"

    def temporaries() -> set[str]:
        return {e.name for e in os.scandir(cache) if is_temporary_of(e.name, target, cache)
                and e.is_dir(follow_symlinks=False)}

    live, go = _held(tmp_path, "live", archive_dir, cache)
    try:
        alive = temporaries()
        killed, _ = _held(tmp_path, "killed", archive_dir, cache)
        dead = temporaries() - alive
        assert len(alive) == len(dead) == 1
        assert (cache / next(iter(dead)) / "20news-bydate-train/sci.space/1").is_file()
        killed.send_signal(signal.SIGKILL)
        killed.communicate(timeout=60)
        assert killed.returncode == -signal.SIGKILL and temporaries() == alive | dead
        mine = tmp_path / "mine"
        mine.mkdir()
        (mine / "notes").write_text("a user's file\n")
        for name in (f".{target}.tmp-0123456789abcdeg", f".{target}.tmp-0123456789ABCDEF",
                     f".{target}.part-123", f".{target}x.tmp-0123456789abcdef"):
            (cache / name / "sub").mkdir(parents=True)
            (cache / name / "sub" / "post").write_text("a user's file\n")
        (cache / f".{target}.tmp-00000000000000aa").symlink_to(mine)
        before = {k: v for k, v in _listing(cache).items()
                  if k.split("/")[0] not in alive | dead}
        folders = newsgroups_folders(archive_dir, download=False)
        assert temporaries() == alive  # the dead one removed whole, the live one kept
        after = _listing(cache)
        assert {k: after[k] for k in before if k.split("/")[0] != target} == {
            k: v for k, v in before.items() if k.split("/")[0] != target}
        assert _listing(mine) == {"notes": b"a user's file\n"}
    finally:
        go.write_text("go")
        out, err = live.communicate(timeout=120)
    assert live.returncode == 0, err
    assert Path(out.strip()) == folders[0] and temporaries() == set()
    assert (folders[0] / "sci.space/1").read_bytes() == MEMBERS["20news-bydate-train/sci.space/1"]
    assert (cache / target / ".complete").is_file()
