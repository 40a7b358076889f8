"""Faults tested for real: downloads from a server on 127.0.0.1, killed runs, corrupt files.

Each test here is one row of the fault table in docs/reliability.md.
"""

from __future__ import annotations

import hashlib
import http.server
import threading
from pathlib import Path

import pytest

from same.data import corpus
from same.data.docword import CorpusNotFoundError

KOS_URL_FILE = "docword.kos.txt.gz"


class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves files of ``root``; the first path part picks the behaviour:
    /good/, /truncate/ (announces the full length, sends half), /drop/ (closes the
    connection mid-body), anything else 404."""

    root: Path

    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_GET(self):
        mode, _, name = self.path.lstrip("/").partition("/")
        path = self.root / name
        if mode not in ("good", "truncate", "drop") or not path.is_file():
            self.send_error(404, "Not Found")
            return
        body = path.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if mode == "good":
            self.wfile.write(body)
        else:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            if mode == "drop":
                self.connection.shutdown(2)
            self.close_connection = True


@pytest.fixture
def server(tmp_path):
    """An HTTP server on 127.0.0.1 serving ``tmp_path/served``; yields (base URL, dir)."""
    served = tmp_path / "served"
    served.mkdir()
    handler = type("Handler", (_Handler,), {"root": served})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", served
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def offline_env(monkeypatch):
    monkeypatch.delenv("SAME_DATA_DIR", raising=False)
    # the archive source goes to a closed loopback port unless a test serves one
    monkeypatch.setenv("SAME_UCI_ARCHIVE_URL", "http://127.0.0.1:9/bag+of+words.zip")


def _serve_kos(served: Path, uci_dir: Path, corrupt: bool = False) -> bytes:
    data = (uci_dir / KOS_URL_FILE).read_bytes()
    if corrupt:
        data = data[:100] + bytes([data[100] ^ 0xFF]) + data[101:]
    (served / KOS_URL_FILE).write_bytes(data)
    return data


def test_download_from_a_server_checks_the_hash(server, uci_dir, offline_env, monkeypatch,
                                                cache_path):
    base, served = server
    data = _serve_kos(served, uci_dir)
    monkeypatch.setenv("SAME_UCI_URL", base + "/good/")
    path = corpus.fetch("kos")
    assert path == cache_path / KOS_URL_FILE
    assert path.read_bytes() == data
    assert hashlib.sha256(data).hexdigest() == corpus.REGISTRY["kos"].docword_sha256
    assert corpus.fetch("kos") == path  # found in the cache: no second download


@pytest.mark.parametrize("mode, corrupt, reason", [
    ("good", True, "SHA256 hash of downloaded file"),
    ("truncate", False, "download failed"),
    ("drop", False, "download failed"),
    ("missing", False, "404"),
])
def test_failed_download_names_url_and_hash_and_leaves_nothing(
        server, uci_dir, offline_env, monkeypatch, cache_path, mode, corrupt, reason):
    base, served = server
    _serve_kos(served, uci_dir, corrupt=corrupt)
    monkeypatch.setenv("SAME_UCI_URL", f"{base}/{mode}")
    with pytest.raises(CorpusNotFoundError) as err:
        corpus.fetch("kos")
    msg = str(err.value)
    assert f"{base}/{mode}/{KOS_URL_FILE}" in msg
    assert corpus.REGISTRY["kos"].docword_sha256 in msg
    assert reason in msg
    assert sorted(p.name for p in cache_path.rglob("*")) == []


def _serve_archive(served: Path, uci_dir: Path, corrupt: bool = False) -> bytes:
    """UCI's archive of the collection as a loopback server gives it: members in a folder."""
    import zipfile

    data = (uci_dir / KOS_URL_FILE).read_bytes()
    if corrupt:
        data = data[:100] + bytes([data[100] ^ 0xFF]) + data[101:]
    with zipfile.ZipFile(served / "bag+of+words.zip", "w") as zf:
        zf.writestr(f"bag-of-words/{KOS_URL_FILE}", data)
        zf.writestr("bag-of-words/readme.txt", "UCI Bag of Words")
    return data


def test_download_falls_back_to_uci_archive_when_the_file_moved(server, uci_dir, offline_env,
                                                                 monkeypatch, cache_path):
    """The file's own URL answers 404 (UCI reorganised its site): the member comes out of the
    archive of the collection, hash-checked, and the archive stays in the cache."""
    base, served = server
    data = _serve_archive(served, uci_dir)
    monkeypatch.setenv("SAME_UCI_URL", f"{base}/missing/")
    monkeypatch.setenv("SAME_UCI_ARCHIVE_URL", f"{base}/good/bag+of+words.zip")
    path = corpus.fetch("kos")
    assert path == cache_path / KOS_URL_FILE and path.read_bytes() == data
    assert sorted(p.name for p in cache_path.iterdir()) == ["bag+of+words.zip", KOS_URL_FILE]


def test_a_killed_member_copy_is_removed_by_the_next_one(server, uci_dir, offline_env,
                                                         monkeypatch, cache_path):
    """The member copied out of UCI's archive went through ``.<file>.part-<pid>``, which a
    SIGKILL left in the cache for good.  Now it is :func:`same.io.outputs.write_file`'s locked
    temporary: the next copy removes a killed one's (exact name, lock free, here planted as
    it stays)."""
    base, served = server
    data = _serve_archive(served, uci_dir)
    monkeypatch.setenv("SAME_UCI_URL", f"{base}/missing/")
    monkeypatch.setenv("SAME_UCI_ARCHIVE_URL", f"{base}/good/bag+of+words.zip")
    cache_path.mkdir(parents=True, exist_ok=True)
    (cache_path / f".{KOS_URL_FILE}.tmp-0123456789abcdef").write_bytes(data[:1000])
    path = corpus.fetch("kos")
    assert path.read_bytes() == data
    assert sorted(p.name for p in cache_path.iterdir()) == ["bag+of+words.zip", KOS_URL_FILE]


def test_every_source_failing_names_each_url_and_reason(server, uci_dir, offline_env,
                                                        monkeypatch, cache_path):
    base, served = server
    _serve_archive(served, uci_dir, corrupt=True)
    monkeypatch.setenv("SAME_UCI_URL", f"{base}/missing/")
    monkeypatch.setenv("SAME_UCI_ARCHIVE_URL", f"{base}/good/bag+of+words.zip")
    with pytest.raises(CorpusNotFoundError) as err:
        corpus.fetch("kos")
    msg = str(err.value)
    assert f"{base}/missing/{KOS_URL_FILE}: HTTPError: 404" in msg
    assert (f"{base}/good/bag+of+words.zip: CorpusFormatError: {KOS_URL_FILE} of "
            "bag+of+words.zip: SHA-256 does not match") in msg
    assert not (cache_path / KOS_URL_FILE).exists()
    assert [p.name for p in cache_path.iterdir()] == ["bag+of+words.zip"]  # no part file


def test_evaluator_refuses_zero_probability_for_a_scored_word():
    """A φ with no mass on a held-out word would make the ll -inf: refused, naming both."""
    import numpy as np
    import scipy.sparse as sp

    from same.model.evaluate import bidmach_loglik, heldout_loglik

    phi = np.full((2, 4), 0.25)
    phi[:, 3] = [0.0, 0.0]
    phi[:, :3] = 1 / 3
    observed = sp.csr_matrix(np.array([[1, 1, 0, 0], [2, 0, 1, 0]], dtype=np.float64))
    heldout = sp.csr_matrix(np.array([[0, 1, 0, 0], [0, 1, 0, 2]], dtype=np.float64))
    with pytest.raises(ValueError, match=r"^topic_word gives word 3 of document 1 probability 0"):
        heldout_loglik(phi, 0.1, observed, heldout)
    with pytest.raises(ValueError, match=r"word 3 of document 1 probability 0"):
        bidmach_loglik(phi, 0.1, heldout)
    phi[:, 3] = 1e-6
    phi /= phi.sum(axis=1, keepdims=True)
    assert np.isfinite(heldout_loglik(phi, 0.1, observed, heldout))


# ---------------------------------------------------------------- runs killed, files corrupted
import json  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

SPEC = {"method": "same", "n_components": 4, "doc_topic_prior": 0.1, "topic_word_prior": 0.1,
        "seed": 3, "budget": 150, "params": {"n_copies": 5.0}}


@pytest.fixture(scope="module")
def small_split(tmp_path_factory):
    from same.data.split import make_split
    from same.data.synthetic import lda_corpus

    syn = lda_corpus(n_docs=400, n_words=120, n_topics=4, doc_length=60, doc_topic_prior=0.1,
                     topic_word_prior=0.05, seed=0)
    path = tmp_path_factory.mktemp("split") / "split.npz"
    make_split(syn.counts, test_fraction=0.2, seed=0, name="toy").save(path)
    return path


def cli(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "same", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def fit_args(split, out, spec=SPEC):
    return ("fit", "--split", str(split), "--out", str(out), "--spec", json.dumps(spec),
            "--no-progress")


def lls(out):
    import pandas as pd

    return pd.read_csv(out / "trace.csv")["ll"].tolist()


def test_killed_fit_leaves_nothing_and_rerun_equals_uninterrupted(small_split, tmp_path):
    """SIGKILL and SIGTERM at several moments of a CLI fit: the output directory is absent or
    complete, never partial; the rerun completes, clears what a SIGKILL left, and its trace
    equals an uninterrupted run's."""
    ref = tmp_path / "ref"
    t0 = time.perf_counter()
    done = cli(*fit_args(small_split, ref))
    assert done.wait(timeout=300) == 0, done.stderr.read()
    wall = time.perf_counter() - t0  # kill at fractions of an uninterrupted run's duration
    killed = 0
    for sig, delay in [(signal.SIGKILL, 0.3 * wall), (signal.SIGTERM, 0.6 * wall),
                       (signal.SIGKILL, 0.85 * wall)]:
        out = tmp_path / f"run_{sig}_{delay}"
        p = cli(*fit_args(small_split, out))
        time.sleep(delay)
        p.send_signal(sig)
        code = p.wait(timeout=60)
        if out.exists():  # finished (maybe killed while exiting): then it is complete
            assert sorted(f.name for f in out.iterdir()) == ["meta.json", "model.npz",
                                                              "trace.csv"]
            assert lls(out) == lls(ref)
        elif code != 0:  # killed mid-run: no partial output
            killed += 1
            if sig == signal.SIGTERM:  # handled (exit 143), or default if still importing
                assert code in (128 + signal.SIGTERM, -signal.SIGTERM), p.stderr.read()
                assert list(tmp_path.glob(f".{out.name}.tmp*")) == []
        again = cli(*fit_args(small_split, out))
        assert again.wait(timeout=300) == 0, again.stderr.read()
        assert sorted(p.name for p in out.iterdir()) == ["meta.json", "model.npz", "trace.csv"]
        assert list(tmp_path.glob(f".{out.name}.tmp*")) == []
        assert lls(out) == lls(ref)
    assert killed >= 1  # most land mid-run; a run quicker than the first may finish first


def test_sigterm_turned_into_another_error_by_compiled_code_still_exits_143(monkeypatch):
    """A SIGTERM handled while numba runs a Python callback (its ``_numba_unpickle``) reaches
    main as ``SystemError: ... returned a result with an exception set``, with the handler's
    SystemExit as its cause: the exit status is still 128 + SIGTERM, not 1 (seen in CI)."""
    from same.experiments import cli

    def run_wrapped(args):
        try:
            signal.raise_signal(signal.SIGTERM)
        except SystemExit as exc:  # what the dispatcher makes of it
            raise SystemError("CPUDispatcher(<function sddmm_csr>) returned a result with an "
                              "exception set") from exc

    monkeypatch.setattr(cli, "_run", run_wrapped)
    before = signal.getsignal(signal.SIGTERM)
    try:
        assert cli.main(["score", "--model", "m.npz", "--split", "s.npz"]) == 128 + signal.SIGTERM
        monkeypatch.setattr(cli, "_run", lambda args: (_ for _ in ()).throw(ValueError("bad")))
        assert cli.main(["score", "--model", "m.npz", "--split", "s.npz"]) == 2  # state reset
    finally:
        signal.signal(signal.SIGTERM, before)


@pytest.fixture(scope="module")
def model_file(small_split, tmp_path_factory):
    from same.experiments.runner import RunSpec, run

    spec = RunSpec(**{**SPEC, "budget": 2})
    return run(spec, small_split, tmp_path_factory.mktemp("m") / "run", progress=False) / \
        "model.npz"


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_corrupt_model_is_refused(model_file, small_split, tmp_path, damage):
    from same.experiments.runner import ModelIntegrityError, load_model

    data = bytearray(model_file.read_bytes())
    if damage == "flip":  # a byte inside the compressed topic_word member
        data[len(data) // 3] ^= 0x01
    else:
        data = data[: len(data) // 2]
    bad = tmp_path / "model.npz"
    bad.write_bytes(bytes(data))
    with pytest.raises(ModelIntegrityError, match=r"model\.npz: (model file does not match its "
                                                  r"SHA-256 seal|not a sealed model file)"):
        load_model(bad)
    p = cli("score", "--model", str(bad), "--split", str(small_split))
    _, err = p.communicate(timeout=120)
    assert p.returncode == 2
    assert err.count("\n") == 1 and err.startswith("python -m same: error: ")


def test_model_with_edited_content_fails_its_checksum(model_file, tmp_path):
    """A readable model.npz rewritten by another program (here numpy, with one prior edited)
    carries no seal: refused, whatever it holds."""
    import numpy as np

    from same.experiments.runner import ModelIntegrityError, load_model

    with np.load(model_file) as z:
        parts = {k: z[k] for k in z.files}
    parts["topic_word_prior"] = np.float64(0.2)  # a valid file, but not what the run wrote
    np.savez_compressed(tmp_path / "model.npz", **parts)
    with pytest.raises(ModelIntegrityError, match=r"not a sealed model file \(no SHA-256 seal "
                                                  r"at its end: truncated, or not written by "
                                                  r"this version of same-lda\); rerun the fit"):
        load_model(tmp_path / "model.npz")


def test_unwritable_results_location(small_split, tmp_path):
    """Results under a path that cannot be created (a file where a directory should be; and, for
    non-root users, a read-only directory): one line, exit 2, nothing written."""
    blocker = tmp_path / "results"
    blocker.write_text("not a directory")
    p = cli(*fit_args(small_split, blocker / "run", {**SPEC, "budget": 1}))
    _, err = p.communicate(timeout=120)
    assert p.returncode == 2 and err.count("\n") == 1
    assert f"{blocker} is a file, not a folder" in err  # refused before any work (issue 36)
    if os.geteuid() != 0:  # root ignores directory permissions
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        try:
            p = cli(*fit_args(small_split, ro / "run", {**SPEC, "budget": 1}))
            _, err = p.communicate(timeout=120)
        finally:
            ro.chmod(0o755)
        assert p.returncode == 2 and "Permission denied" in err and err.count("\n") == 1
        assert list(ro.iterdir()) == []


def test_full_disk_while_writing_leaves_nothing(small_split, tmp_path, monkeypatch):
    """A write that fails with ENOSPC half-way through the outputs: no output directory, no
    temporary directory, and the error reaches the caller (the CLI prints it in one line)."""
    import errno

    import numpy as np

    from same.experiments.runner import RunSpec, run

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "savez_compressed", full)
    out = tmp_path / "run"
    with pytest.raises(OSError, match="No space left on device"):
        run(RunSpec(**{**SPEC, "budget": 1}), small_split, out, progress=False)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("method", ["same_nonzero", "same_summed", "evaluator", "vb_online"])
def test_same_seed_one_or_two_threads_same_outputs(method):
    """Thread count changes nothing where the method promises it: SAME (counter-based draws,
    exact integer sums), the evaluator (per-element SDDMM, serial sparse products) and gensim's
    VB (single process; BLAS threads pinned to 1 and 2). tomotopy with workers > 1 is not
    reproducible by its own documentation; the workflow gives it the same threads as every
    method and records them in meta.json."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    from same.data.synthetic import lda_corpus
    from same.model.kernels.cpu import set_threads

    syn = lda_corpus(n_docs=300, n_words=80, n_topics=4, doc_length=50, seed=2)
    before = set_threads(None)

    def run():
        if method.startswith("same"):
            from same.model.sampler import SameLDA

            m = SameLDA(n_components=4, n_copies=20, max_iter=2, sampler=method.split("_")[1],
                        random_state=0).fit(syn.counts)
            return m.topic_word_
        if method == "evaluator":
            from same.data.split import make_split
            from same.model.evaluate import evaluate

            return np.array([evaluate(syn.topic_word, 0.1, make_split(syn.counts, 0.2, 0)).ll])
        from baselines.vb import iter_vb

        return next(iter_vb(syn.counts, n_topics=4, doc_topic_prior=0.1, topic_word_prior=0.1,
                            random_state=0, passes=1, mode="online"))[0]

    out = []
    try:
        for n in (1, 2):
            set_threads(min(n, before))
            with threadpool_limits(limits=n):
                out.append(run())
    finally:
        set_threads(before)
    np.testing.assert_array_equal(out[0], out[1])


_PAUSE_BEFORE_RENAME = """
import os, sys, time
from pathlib import Path
import same.experiments.runner as runner
real = os.replace
def slow_replace(src, dst):
    if Path(dst).name == "run":  # the output directory's rename (not meta.json's own)
        Path(sys.argv[1]).write_text("writing")  # the outputs are written, not yet renamed
        time.sleep(60)
    real(src, dst)
runner.os.replace = slow_replace
from same.experiments.cli import main
sys.exit(main(sys.argv[2:], prog="same-lda"))
"""


def test_kill_between_writing_and_renaming_outputs(small_split, tmp_path):
    """SIGKILL after the three output files are written but before the directory is renamed:
    no output directory; the next run removes the orphaned temporary directory."""
    marker, out = tmp_path / "marker", tmp_path / "run"
    p = subprocess.Popen([sys.executable, "-c", _PAUSE_BEFORE_RENAME, str(marker),
                          *fit_args(small_split, out, {**SPEC, "budget": 2})],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not marker.exists() and p.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert marker.exists(), p.stderr.read() if p.poll() is not None else "timeout"
    orphans = list(tmp_path.glob(f".{out.name}.tmp*"))
    assert len(orphans) == 1 and sorted(f.name for f in orphans[0].iterdir()) == [
        "meta.json", "model.npz", "trace.csv"]
    p.kill()
    p.wait(timeout=30)
    assert not out.exists()
    again = cli(*fit_args(small_split, out, {**SPEC, "budget": 2}))
    assert again.wait(timeout=300) == 0, again.stderr.read()
    assert list(tmp_path.glob(f".{out.name}.tmp*")) == [] and (out / "trace.csv").is_file()


def test_unwritable_cache_warns_and_still_loads(uci_dir, monkeypatch, tmp_path):
    """A cache directory that cannot be created: the corpus loads from the mirror with one
    CacheWarning naming the path; nothing is half-written."""
    from same.data.corpus import CacheWarning

    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a directory")
    monkeypatch.setenv("SAME_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setenv("SAME_DATA_DIR", str(uci_dir))
    with pytest.warns(CacheWarning, match=r"docword\.kos\.npz: cannot write the parsed cache"):
        data = corpus.load("kos")
    assert data.nnz == corpus.REGISTRY["kos"].nnz
    assert blocker.read_text() == "a file, not a directory"
