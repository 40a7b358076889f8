"""Text corpora, a new user's findings (docs/reliability.md rows 264–269): HTML posts whose
header/body blank line is markup, a table record without its text, line numbers as an editor
counts them, documents dropped as empty said where a user looks, and a few messages."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from same.data.textclean import strip_html, strip_parts
from same.data.textcorpus import TextCorpusError, load_corpus, read_texts

WORDS = ["rocket", "orbit", "launch", "engine", "crater", "comet", "planet", "galaxy"]


def _split(cwd: Path, spec: dict, name="mine", out="s.npz"):
    return subprocess.run([sys.executable, "-m", "same", "split", "--name", name,
                           "--corpus-spec", json.dumps(spec), "--out", str(out)],
                          capture_output=True, text=True, cwd=cwd)


# --------------------------------------------------------------------------- row 264: html posts

@pytest.mark.parametrize("blank", ["<br /><br />", "<br><br>", "<br/>\n<br/>", "\n<br />\n<br />",
                                   "<br />\n\n"])
@pytest.mark.parametrize("strip", [["html", "headers"], ["headers", "html"]])
def test_html_posts_keep_their_body_under_the_header_strip(tmp_path, cache, blank, strip):
    """Row 264: `strip: [html, headers]` dropped 14 of 20 HTML posts whose blank line after
    the headers is `<br /><br />` (a word boundary, so the header strip found no blank line
    and removed all); now markup's line breaks are newlines and html is stripped first,
    whatever the list's order: every post keeps its body and loses its headers."""
    posts = {}
    for i in range(20):
        body = " ".join(WORDS[(i + j) % len(WORDS)] for j in range(3))
        posts[f"g{i % 2}/{i}"] = (f"From: someone{i}@example.org<br />Subject: about"
                                  f" headline{i}{blank}<p>{body}</p>")
    for rel, text in posts.items():
        (tmp_path / "posts" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "posts" / rel).write_text(text)
    spec = {"source": "folder", "path": str(tmp_path / "posts"),
            "vectorizer": {"strip": strip, "stop_words": None, "drop_empty": True}}
    corpus = load_corpus("posts", spec)
    assert corpus.meta["n_dropped_empty"] == 0 and corpus.n_docs == 20
    assert set(corpus.vocab) == set(WORDS)  # no header word (from, subject, headline...)


def test_line_breaking_markup_is_a_newline_and_the_strip_order_is_fixed():
    """Row 264: `<br>` is a newline, a block's start and end start a line (nested blocks no
    blank line), any other tag a space; the strips apply html first in any list order."""
    assert strip_html("a<br>b<br/>c<br />d") == "a\nb\nc\nd"
    assert strip_html("<div><p>one</p><p>two</p></div>x<b>y</b>z") == "one\ntwo\nx y z"
    assert strip_html("<ul><li>a</li><li>b</li></ul>") == "a\nb\n"
    post = "Subject: hi<br /><br />&gt; quoted line<br />own words<br /><br />-- <br />sig"
    for order in itertools.permutations(["html", "headers", "quotes", "footers"]):
        assert strip_parts(post, list(order)).split() == ["own", "words"]


# --------------------------------------------------------------------------- row 265: no text

GOOD = '{"text": "alpha beta gamma"}'


@pytest.mark.parametrize("record, message", [
    ('{"id": 3}', "the record has no 'text' (its keys: id)"),
    ('{}', "the record has no 'text' (its keys: none)"),
    ('{"text": null}', "'text' is null, not text"),
    ('{"text": 5}', "'text' is a number, not text"),
    ('{"text": 2.5}', "'text' is a number, not text"),
    ('{"text": true}', "'text' is a boolean, not text"),
    ('{"text": ["alpha"]}', "'text' is a list, not text"),
    ('{"text": {"a": "alpha"}}', "'text' is an object, not text"),
])
@pytest.mark.parametrize("drop_empty", [False, True])
def test_a_record_without_text_is_refused_at_its_line(tmp_path, cache, record, message,
                                                     drop_empty):
    """Row 265: a record without the column or with `"text": null` was an empty document
    (`row 8: no word left by the settings`; with drop_empty dropped without notice), a
    number, list or object a message naming no row; now each is one line naming the file,
    its line and corpora.<name>.column, exit 2, nothing written, drop_empty or not."""
    (tmp_path / "missing.jsonl").write_text("\n".join([GOOD] * 7 + [record] + [GOOD] * 3) + "\n")
    spec = {"source": "jsonl", "path": "missing.jsonl", "column": "text",
            "vectorizer": {"drop_empty": drop_empty}}
    res = _split(tmp_path, spec)
    assert res.returncode == 2 and not (tmp_path / "s.npz").exists()
    assert res.stderr.strip().splitlines() == [
        f"python -m same: error: missing.jsonl: line 8: {message}; see corpora.mine.column"]


def test_a_label_that_is_not_text_names_its_line_and_key(tmp_path, cache):
    """Row 265: the label column's value that is a number, at its line, naming .label."""
    (tmp_path / "l.jsonl").write_text('{"text": "alpha beta", "topic": "a"}\n\n'
                                      '{"text": "gamma beta", "topic": 7}\n')
    spec = {"source": "jsonl", "path": str(tmp_path / "l.jsonl"), "column": "text",
            "label": "topic"}
    with pytest.raises(TextCorpusError) as exc:
        load_corpus("mine", spec)
    assert str(exc.value) == (f"{tmp_path / 'l.jsonl'}: line 3: 'topic' is a number, not "
                              "text; see corpora.mine.label")


# --------------------------------------------------------------------------- row 266: lines

LAYOUT = st.tuples(st.lists(st.from_regex(r"[a-z]{2,6}", fullmatch=True), min_size=1,
                            max_size=3),
                   st.integers(0, 2),        # blank lines before the row
                   st.booleans(),            # the row over two lines (a quoted newline)
                   st.sampled_from(["\n", "\r\n"]))


@settings(max_examples=80, deadline=None)
@given(st.lists(LAYOUT, min_size=1, max_size=8), st.sampled_from(["csv", "jsonl"]))
def test_every_row_is_named_by_the_line_it_starts_on(tmp_path_factory, rows, kind):
    """Row 266: a row is named `<path>: line <n>`, n the file's line where it starts as an
    editor counts (from 1; a csv header is line 1), whatever blank lines, quoted newlines,
    a JSON value over two lines or CRLF endings come before it (pyarrow's own numbers
    counted records from 0, within a block)."""
    path = tmp_path_factory.mktemp("t") / f"t.{kind}"
    out, line, want, texts = ["text,n\n"] if kind == "csv" else [], 1 + (kind == "csv"), [], []
    for i, (words, blanks, split, end) in enumerate(rows):
        split = split and len(words) > 1 if kind == "csv" else split
        out.append(end * blanks)
        line += blanks
        want.append(line)
        text = ("\n" if split else " ").join(words)
        texts.append(text)
        if kind == "csv":
            out.append(f'"{text}",{i}{end}')
        else:
            out.append(("{\"text\":\n" if split else '{"text": ') + json.dumps(text) + "}" + end)
        line += 1 + (text.count("\n") if kind == "csv" else split)
    path.write_bytes("".join(out).encode())
    names, raw, _ = read_texts("mine", {"source": kind, "path": str(path), "column": "text",
                                        "vectorizer": {"encoding": "utf-8"}})
    assert names == [f"{path}: line {n}" for n in want]
    assert [r.decode() for r in raw] == texts


@pytest.mark.parametrize("kind, body, line, why", [
    ("jsonl", [GOOD] * 100 + ['{"text": "alpha"'] + [GOOD] * 3, 101,
     "not JSON: Expecting ',' delimiter"),
    ("jsonl", [GOOD] * 4 + [""] + ["[1, 2]"], 6, None),
    ("csv", ["text,n"] + ["alpha beta,1"] * 3 + ['"two\nlines",2', "", "a,b,c"], 8,
     "CSV parse error: Expected 2 columns, got 3: a,b,c"),
])
def test_a_row_pyarrow_refuses_is_named_by_its_line(tmp_path, cache, kind, body, line, why):
    """Row 266: pyarrow's `in row 100` (from 0, within a block) for line 101 and its csv
    `Row #5` (records, not lines) are now the file's line, as every other message."""
    (tmp_path / f"t.{kind}").write_text("\n".join(body) + "\n")
    spec = {"source": kind, "path": f"t.{kind}", "column": "text"}
    res = _split(tmp_path, spec)
    assert res.returncode == 2 and not (tmp_path / "s.npz").exists()
    said = ("a list where a record (a JSON object) belongs" if why is None else
            f"not a readable {kind} table ({why})")
    assert res.stderr.strip().splitlines() == [
        f"python -m same: error: t.{kind}: line {line}: {said}; see corpora.mine.path"]


def test_a_document_is_named_by_the_path_as_given(tmp_path, cache):
    """Row 266: the empty-document message named only the file (`l.csv:row 2`) while
    others named the path; now the path as the spec gives it and the line, with the label's
    line and the longest-line check in the same words."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "l.csv").write_text("text,topic\nalpha beta,a\n\n1 2,b\ngamma,\n")
    spec = {"source": "csv", "path": "sub/l.csv", "column": "text"}
    res = _split(tmp_path, spec)
    assert res.stderr.strip().splitlines() == [
        "python -m same: error: sub/l.csv: line 4: no word left by the settings (1 such "
        "documents); set corpora.mine.vectorizer.drop_empty: true to drop them"]
    res = _split(tmp_path, {**spec, "label": "topic"})
    assert res.stderr.strip().splitlines() == [
        "python -m same: error: sub/l.csv: line 5: no label (column 'topic'); see "
        "corpora.mine.label"]
    res = _split(tmp_path, {**spec, "max_line_bytes": 11})
    assert res.stderr.strip().splitlines() == [
        "python -m same: error: sub/l.csv: line 2 is 12 bytes long, over "
        "corpora.mine.max_line_bytes (11); raise it to read this file"]


# --------------------------------------------------------------------------- row 267: dropped

def test_documents_dropped_as_empty_are_noted_and_kept_in_the_split(tmp_path, cache):
    """Row 267: `drop_empty` dropped a quarter of the corpus and only the split's log said
    so (`n_dropped_empty`); now `same-lda split` notes it on stderr and the split records
    it (checked, sealed, carried into a training subset); none dropped: no note, 0."""
    from same.data.split import load_split, train_subset

    rows = ["alpha beta gamma", "beta gamma delta", "1 2 3"] * 4  # a quarter: no word
    (tmp_path / "t.csv").write_text("text\n" + "".join(f"{r}\n" for r in rows))
    spec = {"source": "csv", "path": "t.csv", "column": "text",
            "vectorizer": {"drop_empty": True}}
    res = _split(tmp_path, spec)
    assert res.returncode == 0, res.stderr
    assert res.stderr.splitlines() == [
        "note: 4 of 12 documents left with no word by the settings were dropped "
        "(corpora.mine.vectorizer.drop_empty)"]
    split = load_split(tmp_path / "s.npz")
    assert split.n_dropped_empty == 4 and split.train.shape[0] + split.test_docs.size == 8
    assert train_subset(split, 0.5).n_dropped_empty == 4
    (tmp_path / "t.csv").write_text("text\n" + "".join(f"{r}\n" for r in rows[:2] * 3))
    res = _split(tmp_path, spec, out="s0.npz")
    assert res.returncode == 0 and res.stderr == ""
    assert load_split(tmp_path / "s0.npz").n_dropped_empty == 0


# --------------------------------------------------------------------------- row 268: messages

def test_a_folder_path_that_is_a_file_is_said_to_be_one(tmp_path, cache):
    """Row 268: a folder corpus's `path` naming a file said `no such folder`; now it says
    the path is a file, not a folder, at the spec check and at the read alike."""
    from same.data.corpusspec import check_corpus_paths

    (tmp_path / "posts.txt").write_text("alpha beta\n")
    spec = {"source": "folder", "path": "posts.txt"}
    res = _split(tmp_path, spec)
    assert res.returncode == 2 and not (tmp_path / "s.npz").exists()
    message = ("posts.txt: is a file, not a folder; corpora.mine.path names a folder of "
               "category folders, one file per document")
    assert res.stderr.strip().splitlines() == [f"python -m same: error: {message}"]
    full = {"source": "folder", "path": str(tmp_path / "posts.txt")}
    with pytest.raises(ValueError) as exc:  # the workflow's check before any job
        check_corpus_paths({"corpora": {"mine": full}})
    assert str(exc.value) == f"config {tmp_path}/{message}"


def test_a_uci_nnz_mismatch_says_what_a_spec_user_can_do(tmp_path, cache):
    """Row 268: the NNZ mismatch advised `pass allow_recount=True`, a Python argument no
    corpus spec has; now it names the header's line and the number to put there."""
    (tmp_path / "docword.mine.txt").write_text("2\n3\n5\n1 1 2\n1 2 1\n2 3 4\n")
    spec = {"source": "uci", "docword": "docword.mine.txt"}
    res = _split(tmp_path, spec)
    assert res.returncode == 2 and not (tmp_path / "s.npz").exists()
    assert res.stderr.strip().splitlines() == [
        "python -m same: error: docword.mine.txt, line 3: header says NNZ=5 but the body has 3 "
        "entries (a truncated or excerpted file); to read the entries it has, make line 3 say "
        "3 (corpora.mine.docword)"]
