"""Issue 51, item 3: a disk error (ENOSPC, EDQUOT, EROFS, EIO) while a writer or an extractor
writes is the disk's fault: one line naming the folder being written and the OS error
(:class:`same.io.outputs.DiskError`), never blamed on the file being read; nothing is left.
The errors are injected (monkeypatch) at the write itself.
"""

from __future__ import annotations

import errno
import json
import os
import tarfile

import pytest
from test_textcorpus import _tiny_archive

from same.data.docword import CorpusFormatError
from same.data.newsgroups import newsgroups_folders
from same.experiments.cli import main
from same.io.outputs import DiskError

ERRNOS = ["ENOSPC", "EDQUOT", "EROFS", "EIO"]
CACHE_REMEDY = "free space there or set $SAME_CACHE_DIR to another folder, then rerun"


def disk_line(folder, name: str) -> str:
    code = getattr(errno, name)
    return f"{folder}: cannot write there: {os.strerror(code)} ({name}); "


class _FailingWrites:
    """A file opened for writing whose every write fails with ``code``."""

    def __init__(self, f, code: int):
        self._f, self._code = f, code

    def write(self, data):
        raise OSError(self._code, os.strerror(self._code))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()

    def __getattr__(self, name):
        return getattr(self._f, name)


@pytest.mark.parametrize("name", ERRNOS)
def test_a_full_disk_while_extracting_20newsgroups_is_the_caches_fault(tmp_path, cache,
                                                                      monkeypatch, name):
    """A full cache disk while extracting the archive was reported as ``<archive>: not a
    readable tar.gz archive (OSError: [Errno 28] ...)``, blaming the archive its SHA-256
    had just vouched for.  Now the cache folder is named, with the OS error; nothing is left
    in the cache.  An archive that is damaged is still the archive's fault."""
    archive, _ = _tiny_archive(tmp_path)
    code = getattr(errno, name)
    real = tarfile.bltn_open

    def full(file, mode="r", *args, **kw):
        f = real(file, mode, *args, **kw)
        return _FailingWrites(f, code) if "w" in mode else f

    monkeypatch.setattr(tarfile, "bltn_open", full)
    with pytest.raises(DiskError) as caught:
        newsgroups_folders(archive.parent, download=False)
    assert str(caught.value) == disk_line(cache, name) + CACHE_REMEDY
    assert caught.value.errno == code and os.listdir(cache) == []
    monkeypatch.undo()
    archive.write_bytes(archive.read_bytes()[:40])  # damaged: the archive's fault
    with pytest.raises(CorpusFormatError, match=f"{archive}: not a readable tar.gz archive"):
        newsgroups_folders(archive.parent, download=False)
    assert os.listdir(cache) == []


@pytest.mark.parametrize("source", ["20newsgroups", "uci"])
def test_a_full_disk_while_downloading_is_the_caches_fault(cache, monkeypatch, source):
    """pooch's ENOSPC writing a download into the cache read ``... not found locally and
    download failed (...)`` (every source tried, each blamed).  Now the cache folder is
    named at once."""
    import pooch

    from same.data.download import fetch

    def full(*args, path=None, **kw):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(pooch, "retrieve", full)
    with pytest.raises(DiskError) as caught:
        newsgroups_folders() if source == "20newsgroups" else fetch("kos")
    assert str(caught.value) == disk_line(cache, "ENOSPC") + CACHE_REMEDY


@pytest.mark.parametrize("name", ERRNOS)
def test_a_full_disk_while_writing_an_output_names_its_folder(tmp_path, monkeypatch, capsys,
                                                              name):
    """``synthesize --out sub/c.npz`` on a full disk said only ``[Errno 28] No space left on
    device`` (no file, no folder).  Now one line naming the folder being written; no
    temporary is left.  A fit's output folder likewise names the folder it goes into."""
    from same.io import outputs

    code = getattr(errno, name)

    def fsync(fd):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(outputs.os, "fsync", fsync)
    (tmp_path / "sub").mkdir()
    spec = json.dumps({"like": "kos", "fraction": 0.01, "n_topics": 3})
    assert main(["synthesize", "--name", "toy", "--spec", spec, "--out",
                 str(tmp_path / "sub" / "c.npz")]) == 2
    assert capsys.readouterr().err == (f"same-lda: error: {disk_line(tmp_path / 'sub', name)}"
                                       "free space there or write elsewhere\n")
    assert os.listdir(tmp_path / "sub") == []


def test_a_full_disk_while_a_fit_writes_names_the_folder_of_its_output(split_path, tmp_path,
                                                                        monkeypatch, capsys):
    """A fit writes its files into a temporary folder beside ``--out``: a full disk there
    names the folder ``--out`` goes into (not the vanished temporary), nothing is left."""
    from same.io import outputs

    def fsync(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(outputs.os, "fsync", fsync)
    spec = json.dumps({"method": "same", "n_components": 3, "doc_topic_prior": 0.1,
                       "topic_word_prior": 0.1, "seed": 0, "budget": 2,
                       "params": {"n_copies": 5.0}})
    assert main(["fit", "--spec", spec, "--split", str(split_path), "--out",
                 str(tmp_path / "run"), "--no-progress"]) == 2
    assert capsys.readouterr().err == (f"same-lda: error: {disk_line(tmp_path, 'ENOSPC')}"
                                       "free space there or write elsewhere\n")
    assert os.listdir(tmp_path) == []
