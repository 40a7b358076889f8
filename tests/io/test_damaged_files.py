"""Issue 51, items 1 and 5: a damaged file at a target, asked "is it ours?" or "is it sound?",
ends as that file's one-line fault (or as "not ours" / "rebuild"), never a traceback; a
symbolic link at any cache path is kept (docs/reliability.md, row 121), every cache alike.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from same.data.artefact import save_npz
from same.data.corpus import CacheWarning
from same.experiments.rundir import RUN_OUTPUT, RunDirError, check_out_dir, seal_meta
from same.io.outputs import (
    NPZ_KINDS,
    OutputError,
    figure_kind,
    json_kind,
    kind_of_arrays,
    npz_kind,
    text_kind,
)

ARRAYS = {"train_indptr": np.arange(4, dtype=np.int64), "data": np.ones(3, np.int32)}
JSON = {"artefact": "same-lda tuning", "chosen": {"same": {"n_copies": 5.0}}}


def zip_version_67(data: bytes) -> bytes:
    """The archive with its first central-directory record claiming zip version 6.7
    (``zipfile`` raises NotImplementedError for it, not BadZipFile)."""
    data = bytearray(data)
    data[data.index(b"PK\x01\x02") + 6] = 67
    return bytes(data)


@pytest.fixture(scope="module")
def sealed(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("npz") / "s.npz"
    save_npz(path, ARRAYS)
    return path.read_bytes()


def corrupt(data: bytes, how: str, where: int, junk: bytes) -> bytes:
    at = where % max(1, len(data))
    if how == "flip":
        return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:] if data else data
    if how == "truncate":
        return data[:at]
    return data[:at] + junk + data[at + len(junk):]  # splice


CORRUPTION = dict(how=st.sampled_from(["flip", "truncate", "splice"]),
                  where=st.integers(0, 1 << 20), junk=st.binary(min_size=1, max_size=64))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(**CORRUPTION)
@example(how="version 6.7", where=0, junk=b"")
def test_a_damaged_npz_is_not_ours_and_never_a_traceback(tmp_path_factory, sealed, how, where,
                                                         junk):
    """Byte corruptions of a real sealed .npz (and the zip-version-6.7 header of the fuzz
    test's case, which raised NotImplementedError from zipfile through the "is it ours" check
    and ended ``corpus.load`` in a traceback): every kind's check answers yes or no, and a
    writer refuses it in one line."""
    path = tmp_path_factory.mktemp("c") / "s.npz"
    path.write_bytes(zip_version_67(sealed) if how == "version 6.7" else
                     corrupt(sealed, how, where, junk))
    kinds = [npz_kind(k) for k in NPZ_KINDS] + [npz_kind("x", ["a"]), kind_of_arrays(ARRAYS),
                                                json_kind(JSON), text_kind("table", "a,b\n"),
                                                figure_kind("png")]
    for kind in kinds:
        assert kind.ours(path) in (True, False)
    try:
        save_npz(path, ARRAYS)
    except OutputError as exc:
        assert str(exc) == (f"{path}: exists and is not a split written by same-lda; give a "
                            "new path or remove it")


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(**CORRUPTION)
@example(how="nested", where=0, junk=b"")
def test_a_damaged_json_is_not_ours_and_never_a_traceback(tmp_path_factory, how, where, junk):
    """Byte corruptions of a real JSON output (and a file nested deeper than the parser
    recurses, which raised RecursionError): a JSON kind's check, and a run folder's whose
    meta.json it is, answer without a traceback."""
    data = json.dumps(seal_meta({"artefact": "same-lda run", "settings": {}, "split": "s",
                                 "evaluator": "e"})).encode()
    folder = tmp_path_factory.mktemp("j") / "run"
    folder.mkdir()
    path = folder / "meta.json"
    path.write_bytes(b"[" * 100_000 if how == "nested" else corrupt(data, how, where, junk))
    assert json_kind(JSON).ours(path) in (True, False)
    assert json_kind({"artefact": "same-lda run"}).ours(path) in (True, False)
    why = RUN_OUTPUT.refusal(folder)
    assert why is None or why == ("holds meta.json but no meta.json of a same-lda fit; give a "
                                  "new or empty folder")
    try:
        check_out_dir(folder)
    except RunDirError as exc:
        assert str(exc) == f"--out {folder}: {why}"


def _parsed_cache(tmp_path: Path, cache: Path):
    """(load the corpus, its parsed-cache path)."""
    from test_corpus import GOOD, load_bad

    return (lambda: load_bad(tmp_path, cache, [3, 4, 5], GOOD)), cache / "docword.toy.npz"


def _vectorized_cache(tmp_path: Path, cache: Path):
    """(load the corpus, its vectorized-text cache path)."""
    from same.data.textcorpus import load_corpus

    folder = tmp_path / "docs"
    for name, text in {"a/1.txt": "rocket orbit crew launch", "a/2.txt": "orbit rocket moon",
                       "b/3.txt": "car engine road wheel", "b/4.txt": "engine car road"}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    spec = {"source": "folder", "path": str(folder), "vectorizer": {"stop_words": None}}

    def load():
        return load_corpus("toy", spec)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = Path(load().meta["cache"])
    path.unlink()
    return load, path


CACHES = {"parsed": (_parsed_cache, "parsed-corpus cache", "cannot write the parsed cache"),
          "vectorized": (_vectorized_cache, "vectorized-corpus cache",
                         "cannot write the vectorized-corpus cache")}


@pytest.mark.parametrize("cache_kind", list(CACHES))
def test_a_zip_version_67_cache_is_rebuilt(tmp_path, cache_path, cache_kind):
    """The fuzz test's case: a cache whose zip header claims version 6.7 is rebuilt (one
    CacheWarning), the corpus loads as from an intact one; it was a NotImplementedError
    traceback."""
    make, what, _ = CACHES[cache_kind]
    load, path = make(tmp_path, cache_path)
    first = load()
    path.write_bytes(zip_version_67(path.read_bytes()))
    with pytest.warns(CacheWarning, match=f"{path}: unreadable {what} .*; rebuilding it"):
        again = load()
    assert (again.counts != first.counts).nnz == 0
    assert npz_kind(what).ours(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load()  # the rebuilt cache is read back without a warning


@pytest.mark.parametrize("target", ["link to a user's file", "dangling link", "folder"])
@pytest.mark.parametrize("cache_kind", list(CACHES))
def test_a_link_or_folder_at_any_cache_path_is_kept(tmp_path, cache_path, cache_kind, target):
    """Row 121's promise, for every cache: a symbolic link (or a folder) at a cache path is
    left as it is, with one CacheWarning, and the corpus loads.  The vectorized-text cache's
    reader unlinked a link to an unreadable file and wrote a cache in its place."""
    make, what, cannot = CACHES[cache_kind]
    load, path = make(tmp_path, cache_path)
    first = load()
    path.unlink()
    mine = tmp_path / "mine.npz"
    if target == "folder":
        path.mkdir()
        (path / "notes").write_text("mine\n")
    else:
        if target != "dangling link":
            mine.write_text("mine\n")
        path.symlink_to(mine)
    with pytest.warns(CacheWarning) as caught:
        again = load()
    why = "is a symbolic link; give a new path" if target != "folder" else (
        f"exists and is not a {what} written by same-lda; give a new path or remove it")
    assert str(caught[-1].message) == f"{path}: {cannot} ({path}: {why})"
    assert (again.counts != first.counts).nnz == 0
    if target == "folder":
        assert (path / "notes").read_text() == "mine\n"
    else:
        assert path.is_symlink() and Path(path.readlink()) == mine
        assert target == "dangling link" or mine.read_text() == "mine\n"


@pytest.mark.parametrize("cache_kind", list(CACHES))
def test_a_cache_that_cannot_be_read_is_rebuilt(tmp_path, cache_path, cache_kind, monkeypatch):
    """A cache whose reading fails with an OSError (EIO) ended the load with that error;
    derived data is rebuilt whatever keeps it from being read (one CacheWarning)."""
    import errno

    from same.data import artefact

    make, what, _ = CACHES[cache_kind]
    load, path = make(tmp_path, cache_path)
    first = load()
    real, failed = artefact._verify, []

    def failing(f, p, *args):
        if not failed:
            failed.append(p)
            raise OSError(errno.EIO, "Input/output error", str(p))
        return real(f, p, *args)

    monkeypatch.setattr(artefact, "_verify", failing)
    with pytest.warns(CacheWarning, match=f"{path}: unreadable {what} .*Input/output error"):
        again = load()
    assert failed == [path] and (again.counts != first.counts).nnz == 0


def test_check_of_a_zip_version_67_file_is_one_line(sealed, tmp_path, capsys):
    """``same-lda check`` told the kind of a .npz by its members with the same zipfile call:
    NotImplementedError's traceback; now the seal's one line, exit 2."""
    from same.experiments.cli import main

    path = tmp_path / "s.npz"
    path.write_bytes(zip_version_67(sealed))
    assert main(["check", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"same-lda: error: {path}: same-lda artefact does not match its SHA-256 seal (changed "
        "or damaged since it was written); rewrite it with the command that made it\n")


def test_synthetic_corpus_metadata_nested_too_deeply_is_one_line(tmp_path):
    """A sealed synthetic corpus whose ``meta`` is nested deeper than json recurses raised
    RecursionError; now the file's one line."""
    from same.data.artefact import ArtefactError
    from same.data.planted import load_synthetic
    from same.experiments.cli import main

    good = tmp_path / "c.npz"
    assert main(["synthesize", "--name", "toy", "--spec",
                 json.dumps({"like": "kos", "fraction": 0.01, "n_topics": 3}), "--out",
                 str(good)]) == 0
    with np.load(good) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["meta"] = np.asarray("[" * 100_000)
    bad = tmp_path / "deep.npz"
    save_npz(bad, arrays)
    with pytest.raises(ArtefactError) as caught:
        load_synthetic(bad)
    assert str(caught.value).startswith(f"{bad}: unreadable synthetic corpus metadata "
                                        "(maximum recursion depth exceeded")
