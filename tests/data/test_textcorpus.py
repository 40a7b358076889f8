"""Corpora named by their files (same.data.textcorpus): raw text → counts equal to CountVectorizer's,
the cache keyed by text and settings, bad text in one line, 20 Newsgroups from a loopback
server, and a user's own UCI files through the real workflow."""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import json
import re
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import yaml
from ci_profiles import main_only
from sklearn.datasets import load_files
from sklearn.feature_extraction.text import CountVectorizer

from same.data import textcorpus
from same.data.docword import CorpusFormatError, CorpusNotFoundError
from same.data.textcorpus import TextCorpusError, load_corpus

REPO = Path(__file__).resolve().parents[2]
TEXTS = {"sport/a.txt": "The team won the match; the crowd cheered the team.",
         "sport/b.txt": "Match report: goals, a penalty and a late winner for the team.",
         "space/c.txt": "The rocket reached orbit and the crew watched Earth.",
         "space/d.txt": "Orbit, rocket, launch pad: NASA's crew trains for launch."}


def write_folder(root: Path, texts=TEXTS) -> Path:
    for rel, text in texts.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return root


def load_files_order(n: int, seed: int = 0) -> np.ndarray:
    """The permutation load_files(shuffle=True, random_state=seed) applies to n documents."""
    from sklearn.utils import check_random_state

    idx = np.arange(n)
    check_random_state(seed).shuffle(idx)
    return idx


def test_folder_counts_equal_countvectorizers(tmp_path, cache):
    folder = write_folder(tmp_path / "docs")
    corpus = load_corpus("toy", {"source": "folder", "path": str(folder)})
    bunch = load_files(folder, encoding="utf-8")  # scikit-learn's own default: random_state=0
    ref = CountVectorizer(stop_words="english",
                          token_pattern=textcorpus.VECTORIZER_DEFAULTS["token_pattern"])
    X = ref.fit_transform(bunch.data)
    assert corpus.vocab == ref.get_feature_names_out().tolist()
    assert corpus.counts.dtype == np.int32 and corpus.counts.has_sorted_indices
    assert (corpus.counts != X).nnz == 0 and corpus.counts.shape == X.shape
    assert corpus.labels.tolist() == [bunch.target_names[t] for t in bunch.target]
    in_file = load_files(folder, shuffle=False)
    assert np.array_equal(np.asarray(in_file.filenames)[corpus.file_positions], bunch.filenames)


def test_min_count_drops_rare_words_and_settings_reach_countvectorizer(tmp_path, cache):
    folder = write_folder(tmp_path / "docs")
    spec = {"source": "folder", "path": str(folder),
            "vectorizer": {"min_count": 2, "stop_words": None, "lowercase": False}}
    corpus = load_corpus("toy", spec)
    ref = CountVectorizer(lowercase=False, stop_words=None,
                          token_pattern=textcorpus.VECTORIZER_DEFAULTS["token_pattern"])
    X = ref.fit_transform(load_files(folder, encoding="utf-8").data).tocsr()
    keep = np.flatnonzero(np.asarray(X.sum(0)).ravel() >= 2)
    assert corpus.vocab == [ref.get_feature_names_out()[i] for i in keep]
    assert (corpus.counts != X[:, keep]).nnz == 0
    assert "the" in corpus.vocab  # stop words kept when stop_words is null


def test_cache_rebuilt_on_a_changed_setting_or_text_and_only_then(tmp_path, cache, monkeypatch):
    folder = write_folder(tmp_path / "docs")
    spec = {"source": "folder", "path": str(folder)}
    calls = []
    real = textcorpus.vectorize
    monkeypatch.setattr(textcorpus, "vectorize", lambda *a: calls.append(1) or real(*a))
    first = load_corpus("toy", spec)
    assert len(calls) == 1 and len(list((cache / "text").glob("*.npz"))) == 1
    again = load_corpus("toy", spec)  # nothing changed: read back, not rebuilt
    assert len(calls) == 1 and (again.counts != first.counts).nnz == 0
    assert again.vocab == first.vocab
    load_corpus("toy", {**spec, "vectorizer": {"min_df": 2}})  # a setting changed
    assert len(calls) == 2 and len(list((cache / "text").glob("*.npz"))) == 2
    (folder / "space/c.txt").write_text("The rocket reached orbit twice.")  # the text changed
    load_corpus("toy", spec)
    assert len(calls) == 3


def test_same_lda_check_reads_a_vectorized_cache_with_its_one_reader(tmp_path, cache):
    """``same-lda check`` of a vectorized-corpus cache load_corpus wrote: ok, by the reader
    load_corpus uses (it called every sound cache damaged: "fingerprint is not a file in the
    archive", the parsed-corpus cache's member); a cache with a byte changed: one line."""
    from same.experiments.verify_artefacts import check_artefact

    load_corpus("toy", {"source": "folder", "path": str(write_folder(tmp_path / "docs"))})
    path, = (cache / "text").glob("*.npz")
    assert check_artefact(path) == "vectorized-corpus cache"
    key, X, vocab, names, labels, positions = textcorpus.read_vectorized_cache(path)
    assert X.shape == (len(names), len(vocab)) and sorted(positions) == list(range(len(names)))
    res = subprocess.run([sys.executable, "-m", "same", "check", str(path)], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0 and json.loads(res.stdout) == {
        "path": str(path), "artefact": "vectorized-corpus cache", "ok": True}
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    res = subprocess.run([sys.executable, "-m", "same", "check", str(path)], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and str(path) in res.stderr


def test_csv_and_jsonl_columns(tmp_path, cache):
    docs = list(TEXTS.values())
    (tmp_path / "t.csv").write_text("id,body\n" + "".join(f'{i},"{d}"\n'
                                                           for i, d in enumerate(docs)))
    (tmp_path / "t.jsonl").write_text("".join(json.dumps({"body": d}) + "\n" for d in docs))
    ref = CountVectorizer(stop_words="english",
                          token_pattern=textcorpus.VECTORIZER_DEFAULTS["token_pattern"])
    X = ref.fit_transform(docs)[load_files_order(len(docs))]  # one seeded shuffle of the rows
    for kind in ("csv", "jsonl"):
        c = load_corpus("toy", {"source": kind, "path": str(tmp_path / f"t.{kind}"),
                                "column": "body"})
        assert (c.counts != X).nnz == 0 and c.vocab == ref.get_feature_names_out().tolist()
        assert c.labels is None and c.meta["order"] == {"shuffled": True, "seed": 0,
                                                        "on_purpose": False}


def test_newsgroup_parts_stripped_as_fetch_20newsgroups_does(tmp_path, cache):
    from sklearn.datasets._twenty_newsgroups import (
        strip_newsgroup_footer,
        strip_newsgroup_header,
        strip_newsgroup_quoting,
    )
    post = ("From: someone@example.org\nSubject: rockets\n\nIn article <1@x>, a wrote:\n"
            "> quoted reply about football\nThe rocket launch was delayed by weather today.\n"
            "\n--\nsignature words here\n")
    folder = write_folder(tmp_path / "posts", {"g/1": post, "g/2": post.replace("rocket",
                                                                                "shuttle")})
    c = load_corpus("ng", {"source": "folder", "path": str(folder), "shuffle": False,
                           "vectorizer": {"strip": ["headers", "footers", "quotes"]}})
    stripped = [strip_newsgroup_quoting(strip_newsgroup_footer(strip_newsgroup_header(p)))
                for p in (post, post.replace("rocket", "shuttle"))]
    ref = CountVectorizer(stop_words="english",
                          token_pattern=textcorpus.VECTORIZER_DEFAULTS["token_pattern"])
    X = ref.fit_transform(stripped)
    assert c.vocab == ref.get_feature_names_out().tolist() and (c.counts != X).nnz == 0
    assert not {"football", "signature", "someone", "subject"} & set(c.vocab)


# --------------------------------------------------------------------------- bad text input

@pytest.mark.parametrize("case, message", [
    ("latin1", "sport/a.txt: not utf-8 text (byte 3: b'\\xe9'); see corpora.toy.vectorizer."
               "encoding"),
    ("empty", "space/e.txt: no word left by the settings (1 such documents); set "
              "corpora.toy.vectorizer.drop_empty: true to drop them"),
    ("stopwords", "empty vocabulary; perhaps the documents only contain stop words"),
    ("min_count", "no word occurs 1000 times (corpora.toy.vectorizer.min_count)"),
    ("nodocs", "no documents (corpora.toy.path: a folder of category folders, one file per "
               "document, as sklearn.datasets.load_files reads)"),
])
def test_bad_text_is_one_line_exit_2_nothing_written(tmp_path, cache, case, message):
    texts = dict(TEXTS)
    vec = {}
    if case == "latin1":
        texts["sport/a.txt"] = "caf\xe9 au lait".encode("latin-1")
    elif case == "empty":
        texts["space/e.txt"] = "   the of and   "
    elif case == "stopwords":
        texts = {k: "the and of it" for k in texts}
    elif case == "min_count":
        vec = {"min_count": 1000}
    folder = tmp_path / "docs"
    if case == "nodocs":
        folder.mkdir()
    else:
        write_folder(folder, texts)
    out = tmp_path / "split.npz"
    spec = {"source": "folder", "path": str(folder)} | ({"vectorizer": vec} if vec else {})
    res = subprocess.run([sys.executable, "-m", "same", "split", "--name", "toy",
                          "--corpus-spec", json.dumps(spec), "--out", str(out)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert not out.exists() and not list((cache / "text").glob("*")) if (cache / "text").exists() \
        else not out.exists()


def test_csv_without_the_named_column(tmp_path, cache):
    (tmp_path / "t.csv").write_text("id,body\n1,hello world\n")
    with pytest.raises(TextCorpusError) as exc:
        load_corpus("toy", {"source": "csv", "path": str(tmp_path / "t.csv"), "column": "text"})
    assert str(exc.value) == (f"{tmp_path / 't.csv'}: no column 'text' (columns: id, body); "
                              "see corpora.toy.column")


@pytest.mark.parametrize("spec, message", [
    ({"source": "web"}, "corpora.toy.source: must be one of uci, folder, csv, jsonl, "
                        "20newsgroups"),
    ({"source": "csv", "path": "x.csv"}, "corpora.toy.column: required for a csv corpus"),
    ({"source": "folder", "path": "d", "vectorizer": {"stemming": True}},
     "corpora.toy.vectorizer.stemming: unknown setting"),
    ({"source": "folder", "path": "d", "vectorizer": {"strip": ["signatures"]}},
     "corpora.toy.vectorizer.strip: 'signatures' is not one of headers, footers, quotes, html"),
    ({"source": "folder", "path": "d", "vectorizer": {"encoding": "klingon"}},
     "corpora.toy.vectorizer.encoding: unknown text encoding 'klingon'"),
    ({"source": "uci", "docword": "d", "vectorizer": {"min_df": 2}},
     "corpora.toy.vectorizer: a uci corpus is counts already"),
    (["folder"], "corpora.toy: must be a mapping with a source"),
    ({"source": ["folder"]}, "corpora.toy.source: must be one of"),
    ({"source": "folder", "path": ""}, "corpora.toy.path: must be a non-empty string"),
    ({"source": "csv", "path": "x.csv", "column": 5}, "corpora.toy.column: must be a non-empty"),
    ({"source": "folder", "path": "d", "vectorizer": ["min_df"]},
     "corpora.toy.vectorizer: must be a mapping of settings"),
    ({"source": "folder", "path": "d", "vectorizer": {"encoding": 5}},
     "corpora.toy.vectorizer.encoding: must be the name of a text encoding"),
    ({"source": "folder", "path": "d", "vectorizer": {"strip": "headers"}},
     "corpora.toy.vectorizer.strip: must be a list of headers, footers, quotes, html"),
    ({"source": "folder", "path": "d", "vectorizer": {"drop_empty": "no"}},
     "corpora.toy.vectorizer.drop_empty: must be true or false"),
    ({"source": "folder", "path": "d", "vectorizer": {"min_count": True}},
     "corpora.toy.vectorizer.min_count: must be an integer >= 1"),
    ({"source": "folder", "path": "d", "vectorizer": {"token_pattern": "(["}},
     "corpora.toy.vectorizer.token_pattern: not a regular expression"),
    ({"source": "folder", "path": "d", "vectorizer": {"token_pattern": "(a)(b)"}},
     "corpora.toy.vectorizer.token_pattern: has 2 groups"),
    ({"source": "folder", "path": "d", "vectorizer": {"token_pattern": "a*"}},
     "corpora.toy.vectorizer.token_pattern: 'a*' yields empty words"),
    ({"source": "folder", "path": "d", "vectorizer": {"stop_words": "klingon"}},
     "corpora.toy.vectorizer: The 'stop_words' parameter of CountVectorizer must be"),
    ({"source": "folder", "path": "d", "vectorizer": {"min_df": 0.5, "max_df": 0.2}},
     "corpora.toy.vectorizer.min_df: 0.5 is above max_df (0.2)"),
])
def test_bad_spec_names_the_setting(spec, message):
    with pytest.raises(TextCorpusError, match="^" + re.escape(message)):
        textcorpus.check_corpus_spec("toy", spec)


# --------------------------------------------------------------------------- 20 Newsgroups

def _archive_of(tmp_path: Path, members: dict, name="a") -> Path:
    """``tmp_path/name/20news-bydate.tar.gz`` holding ``members`` (path → bytes), with a
    matching 20news-bydate.SHA256SUMS beside it."""
    path = tmp_path / name / "20news-bydate.tar.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tf:
        for member, data in members.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    (path.parent / "20news-bydate.SHA256SUMS").write_text("".join(
        f"{hashlib.sha256(d).hexdigest()}  {m}\n" for m, d in sorted(members.items())))
    return path


def _tiny_archive(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    members = {"20news-bydate-train/sci.space/1": b"From: a\n\nrocket orbit launch crew",
               "20news-bydate-train/rec.autos/2": b"From: b\n\nengine wheel car road",
               "20news-bydate-test/sci.space/3": b"From: c\n\norbit rocket moon crew",
               "20news-bydate-test/rec.autos/4": b"From: d\n\ncar engine road caf\xe9"}
    return _archive_of(tmp_path, members, "serve"), members


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "serve"
    root.mkdir(exist_ok=True)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


NEWS_SPEC = {"source": "20newsgroups",
             "vectorizer": {"encoding": "latin-1", "strip": ["headers"]}}


def test_20newsgroups_downloaded_hash_checked_and_read(tmp_path, cache, server, monkeypatch):
    archive, members = _tiny_archive(tmp_path)
    sha = hashlib.sha256(archive.read_bytes()).hexdigest()
    monkeypatch.setattr(textcorpus, "NEWSGROUPS", textcorpus.NEWSGROUPS.__class__(
        **{**textcorpus.NEWSGROUPS.__dict__, "sha256": sha}))
    monkeypatch.setenv("SAME_20NEWS_URL", f"{server}/20news-bydate.tar.gz")
    folders = textcorpus.newsgroups_folders(archive=textcorpus.NEWSGROUPS)
    assert [f.name for f in folders] == ["20news-bydate-train", "20news-bydate-test"]
    assert (cache / "20news-bydate.tar.gz").read_bytes() == archive.read_bytes()
    corpus = load_corpus("news", NEWS_SPEC)
    ref = CountVectorizer(stop_words="english",
                          token_pattern=textcorpus.VECTORIZER_DEFAULTS["token_pattern"])
    texts = [members[m].decode("latin-1").split("\n\n", 1)[1] for m in (
        "20news-bydate-train/rec.autos/2", "20news-bydate-train/sci.space/1",
        "20news-bydate-test/rec.autos/4", "20news-bydate-test/sci.space/3")]  # load_files order
    X = ref.fit_transform(texts)[load_files_order(4)]  # train and test shuffled together
    assert corpus.vocab == ref.get_feature_names_out().tolist() and (corpus.counts != X).nnz == 0


def test_20newsgroups_wrong_hash_leaves_nothing(tmp_path, cache, server, monkeypatch):
    _tiny_archive(tmp_path)
    monkeypatch.setenv("SAME_20NEWS_URL", f"{server}/20news-bydate.tar.gz")
    with pytest.raises(CorpusNotFoundError, match="download failed") as exc:
        textcorpus.newsgroups_folders()  # the public hash: the tiny archive does not match it
    assert textcorpus.NEWSGROUPS.sha256 in str(exc.value)
    assert not cache.exists() or list(cache.iterdir()) == []


def test_20newsgroups_local_copy_checked_against_its_manifest(tmp_path, cache, monkeypatch):
    archive, members = _tiny_archive(tmp_path)
    manifest = archive.parent / "20news-bydate.SHA256SUMS"
    lines = [f"{hashlib.sha256(d).hexdigest()}  {m}" for m, d in sorted(members.items())]
    manifest.write_text("\n".join(lines[:-1] + ["0" * 64 + lines[-1][64:]]) + "\n")
    monkeypatch.setenv("SAME_DATA_DIR", str(archive.parent))
    with pytest.raises(CorpusFormatError, match="member 20news-bydate-train/sci.space/1 "
                                                "differs from"):
        textcorpus.newsgroups_folders(download=False)
    assert not cache.exists() or list(cache.iterdir()) == []
    manifest.write_text("\n".join(lines) + "\n")
    folders = textcorpus.newsgroups_folders(download=False)
    assert all(f.is_dir() for f in folders) and (folders[0].parent / ".complete").is_file()
    manifest.unlink()  # extracted once: not read again
    assert textcorpus.newsgroups_folders(download=False) == folders


# --------------------------------------------------------------------------- the workflow

@pytest.mark.slow
def test_users_uci_files_by_path_through_the_workflow(tmp_path):
    """Two tiny corpora in UCI format, named by their files in the config's corpora: section,
    each at its own K, run through the real workflow: split, every method, tables, and one
    claims.md judging both, each at its tokens per parameter, with the Across corpora section."""
    rng = np.random.default_rng(0)
    entries = []
    for name, n_docs, k in (("mine", 80, 3), ("yours", 60, 4)):
        X = sp.random(n_docs, 30, density=0.3, random_state=rng, format="coo",
                      data_rvs=lambda n: rng.integers(1, 5, n))
        data = tmp_path / name
        data.mkdir()
        body = "".join(f"{d + 1} {w + 1} {c}\n" for d, w, c in zip(X.row, X.col,
                                                                     X.data.astype(int)))
        (data / "docword.txt").write_text(f"{n_docs}\n30\n{X.nnz}\n{body}")
        (data / "vocab.txt").write_text("".join(f"word{w}\n" for w in range(30)))
        entries.append(f"{name}: {{source: uci, docword: {data / 'docword.txt'}, "
                       f"vocab: {data / 'vocab.txt'}, n_components: {k}}}")
    work = tmp_path / "run"
    work.mkdir()
    (tmp_path / "mine.yaml").write_text(
        "datasets: [mine, yours]\n"
        f"corpora: {{{', '.join(entries)}}}\n"
        "report_dir: results/both\nseeds: [0]\n"
        # the main comparison only: the studies are more fits of the same rule
        + yaml.safe_dump(main_only()))
    res = subprocess.run([sys.executable, "-m", "snakemake", "--nolock", "--cores", "2",
                          "--configfile", str(REPO / "config/ci.yaml"),
                          str(tmp_path / "mine.yaml"), "--directory", str(work),
                          "--snakefile", str(REPO / "Snakefile")],
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert (work / "results/mine/same/K3/seed0/trace.csv").is_file()
    assert (work / "results/yours/same/K4/seed0/trace.csv").is_file()
    assert "mine (uci corpus), K=3" in (work / "results/mine/table1.md").read_text()
    claims = (work / "results/both/claims.md").read_text()
    assert "## Across corpora" in claims and "## Dataset: mine" in claims
    assert "## Dataset: yours" in claims and "K 3 (mine), 4 (yours)" in claims
    assert "the datasets' K differ (3, 4)" in claims


def test_real_20newsgroups_members_checked_and_every_post_read(uci_dir, cache, monkeypatch):
    """The shared mirror's 20 Newsgroups (beside the UCI files): every member matches the
    manifest, and all 18,846 posts of the bydate collection (its README: 11,314 train, 7,532
    test) in 20 groups are read."""
    text_dir = uci_dir.parent / "text"
    if not (text_dir / "20news-bydate.tar.gz").is_file():
        pytest.fail(f"{text_dir}: no 20news-bydate.tar.gz beside the UCI mirror")
    monkeypatch.setenv("SAME_DATA_DIR", str(text_dir))
    folders = textcorpus.newsgroups_folders(download=False)
    spec = textcorpus.check_corpus_spec("news", {"source": "20newsgroups"})
    names, raw, _ = textcorpus.read_texts("news", spec)
    per_part = [sum(1 for n in names if f"/{f.name}/" in n) for f in folders]
    assert per_part == [11314, 7532] and len(raw) == 18846
    assert len({Path(n).parent.name for n in names}) == 20
    # stored in one seeded shuffle by default (issue 48), not grouped by newsgroup; file order
    # (shuffle: false, the order before) is grouped: a newsgroup's training posts in a row
    from same.data.order import grouped_run, label_runs, longest_run, shuffled_indices

    stored = textcorpus.stored_texts("news", spec)
    assert stored["order"] == {"shuffled": True, "seed": 0, "on_purpose": False}
    assert stored["names"] == [names[i] for i in shuffled_indices(18846, 0)]
    assert stored["labels"] == [Path(n).parent.name for n in stored["names"]]
    assert grouped_run(stored["labels"]) is None and longest_run(stored["labels"]).length <= 5
    in_file = textcorpus.stored_texts("news", {**spec, "shuffle": False})
    assert in_file["names"] == names and in_file["order"]["on_purpose"]
    runs = label_runs(in_file["labels"])  # each newsgroup's training posts, then its test posts
    assert len(runs) == 40 and all(r.grouped for r in runs)
    run = grouped_run(in_file["labels"])
    assert (run.label, run.length) == ("rec.sport.hockey", 600)


def test_corpus_name_is_a_folder_name_never_a_path(cache):
    with pytest.raises(TextCorpusError, match=r"^corpora\.\.\./x: a corpus name is lowercase"):
        load_corpus("../x", {"source": "folder", "path": "d"})


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_table_read_in_its_encoding_once(tmp_path, cache, kind):
    """A table is decoded in the spec's encoding (pyarrow alone reads UTF-8 only), once."""
    line = "café crème brûlée"
    body = ("text\n" + "".join(f'"{line} {i}"\n' for i in "ab") if kind == "csv" else
            "".join(json.dumps({"text": f"{line} {i}"}, ensure_ascii=False) + "\n"
                    for i in "ab"))
    (tmp_path / f"t.{kind}").write_bytes(body.encode("latin-1"))
    spec = {"source": kind, "path": str(tmp_path / f"t.{kind}"), "column": "text"}
    c = load_corpus("toy", {**spec, "vectorizer": {"encoding": "latin-1"}})
    assert {"café", "crème", "brûlée"} <= set(c.vocab)
    with pytest.raises(TextCorpusError) as exc:
        load_corpus("toy", spec)
    first = body.encode("latin-1").index(bytes([0xE9]))
    path = tmp_path / f"t.{kind}"
    assert str(exc.value) == (f"{path}: not utf-8 text (byte {first}: b'\\xe9'); see "
                              "corpora.toy.vectorizer.encoding")


def test_table_column_that_is_not_text_or_named_twice(tmp_path, cache):
    (tmp_path / "l.jsonl").write_text('{"text": ["a b", "c"]}\n{"text": ["d"]}\n')
    with pytest.raises(TextCorpusError) as exc:
        load_corpus("toy", {"source": "jsonl", "path": str(tmp_path / "l.jsonl"),
                            "column": "text"})
    assert str(exc.value) == (f"{tmp_path / 'l.jsonl'}: line 1: 'text' is a list, not text; "
                              "see corpora.toy.column")
    (tmp_path / "d.csv").write_text("text,text\na b,c d\ne f,g h\n")
    with pytest.raises(TextCorpusError, match="d.csv: (2 columns are named 'text'|not a "
                                              "readable csv table).*corpora.toy"):
        load_corpus("toy", {"source": "csv", "path": str(tmp_path / "d.csv"), "column": "text"})


def test_folder_holding_a_folder_where_a_document_belongs(tmp_path, cache):
    folder = write_folder(tmp_path / "docs")
    (folder / "sport" / "nested").mkdir()
    with pytest.raises(TextCorpusError, match=r"docs: cannot read its documents \(Is a "
                                              r"directory: .*nested\); corpora\.toy\.path"):
        load_corpus("toy", {"source": "folder", "path": str(folder)})


def test_settings_leaving_one_document_name_the_settings(tmp_path, cache):
    texts = {"a/1": "rocket orbit crew", "a/2": "the and of", "b/3": "   "}
    folder = write_folder(tmp_path / "docs", texts)
    with pytest.raises(TextCorpusError, match="1 document\\(s\\) with a word left by the "
                                              "settings \\(corpora.toy.vectorizer: "):
        load_corpus("toy", {"source": "folder", "path": str(folder),
                            "vectorizer": {"drop_empty": True}})


def test_out_inside_the_corpus_folder_is_refused(tmp_path, cache):
    folder = write_folder(tmp_path / "docs")
    out = folder / "sport" / "split.npz"
    res = subprocess.run([sys.executable, "-m", "same", "split", "--name", "toy",
                          "--corpus-spec", json.dumps({"source": "folder", "path": str(folder)}),
                          "--out", str(out)], capture_output=True, text=True)
    assert res.returncode == 2 and not out.exists()
    assert res.stderr.strip().endswith(f"--out {out}: inside the corpus folder {folder}, whose "
                                       "every file is read as a document; give a path outside "
                                       "it")


def test_uci_file_errors_name_the_setting(tmp_path, cache):
    (tmp_path / "docword.txt").write_text("2\n2\n2\n1 1 3\n2 2 1\n")
    with pytest.raises(OSError, match=r"nope\.txt.*\(corpora\.toy\.vocab\)$"):
        load_corpus("toy", {"source": "uci", "docword": str(tmp_path / "docword.txt"),
                            "vocab": str(tmp_path / "nope.txt")})


def test_20newsgroups_bad_archives_leave_nothing_and_never_poison_a_later_run(
        tmp_path, cache, monkeypatch):
    """An archive lacking a folder (its manifest agreeing), or not a tar.gz at all, is one
    error and leaves no extraction; a good archive read afterwards, and then another one,
    each gives its own text (extractions are keyed by the archive's SHA-256)."""
    train_only = _archive_of(tmp_path, {"20news-bydate-train/g/1": b"rocket orbit"}, "bad")
    monkeypatch.setenv("SAME_DATA_DIR", str(train_only.parent))
    with pytest.raises(CorpusFormatError, match="holds no folder 20news-bydate-test/"):
        textcorpus.newsgroups_folders(download=False)
    assert not cache.exists() or list(cache.iterdir()) == []
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "20news-bydate.tar.gz").write_bytes(b"\x1f\x8b" + b"not a gzip" * 10)
    (junk / "20news-bydate.SHA256SUMS").write_text("0" * 64 + "  x\n")
    monkeypatch.setenv("SAME_DATA_DIR", str(junk))
    with pytest.raises(CorpusFormatError, match="not a readable tar.gz archive"):
        textcorpus.newsgroups_folders(download=False)
    assert not cache.exists() or list(cache.iterdir()) == []
    words = {}
    for tag, text in (("one", b"rocket orbit"), ("two", b"engine wheel")):
        good = _archive_of(tmp_path, {"20news-bydate-train/g/1": text,
                                      "20news-bydate-test/g/2": text + b" crew"}, tag)
        monkeypatch.setenv("SAME_DATA_DIR", str(good.parent))
        words[tag] = load_corpus("news", {"source": "20newsgroups"}).vocab
    assert words == {"one": ["crew", "orbit", "rocket"], "two": ["crew", "engine", "wheel"]}


def test_html_markup_never_becomes_a_word(tmp_path, cache):
    """Issue 52: `strip: [html]` removes markup as the standard library's HTML parser reads it:
    `<br />` (3.8 % of a user's tokens were `br`) and every tag a word boundary, entities
    decoded, comments, scripts and styles dropped; without it the markup's names are words."""
    docs = {"a/1": "Rockets launch<br />orbit &amp; moon<br/>tonight <!-- hidden remark -->",
            "a/2": "<p>Caf&eacute; &lt;menu&gt; served</p><script>var tracker = 1</script>"
                   "<style>body { color: red }</style>été",
            "b/3": "<div class='x'>plain <b>bold</b>words</div>"}
    folder = write_folder(tmp_path / "html", docs)
    spec = {"source": "folder", "path": str(folder), "shuffle": False,
            "vectorizer": {"strip": ["html"], "stop_words": None}}
    vocab = set(load_corpus("page", spec).vocab)
    assert vocab == {"rockets", "launch", "orbit", "moon", "tonight", "café", "menu", "served",
                     "été", "plain", "bold", "words"}
    raw = set(load_corpus("raw", {**spec, "vectorizer": {"stop_words": None}}).vocab)
    assert {"br", "amp", "eacute", "script", "tracker", "hidden", "div"} <= raw
