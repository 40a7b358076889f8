"""Text corpora read within limits (issue 51): a jsonl line's nesting and any table line's length
checked before pyarrow parses the file, an encoding that is a text encoding, a path that is a
regular file, a name that is not a built-in corpus's, a lone surrogate named; each in one line
naming the file or the setting."""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
from encodings.aliases import aliases
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from same.data import textcorpus
from same.data.docword import CorpusNotFoundError
from same.data.textcorpus import MAX_JSON_DEPTH, TextCorpusError, check_corpus_spec, read_texts

REPO = Path(__file__).resolve().parents[2]
SCHEMA = REPO / "config/config.schema.yaml"
HYPO = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def same_lda(*args, cwd, timeout=60):
    """``python -m same <args>`` in a process of its own: a crash or a hang fails the test."""
    return subprocess.run([sys.executable, "-m", "same", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=timeout)


def workflow_check(corpora: dict):
    """The workflow's config check (same.experiments.config.check_config) of the default
    config with ``corpora`` as its datasets."""
    import yaml

    from same.experiments.config import check_config

    cfg = yaml.safe_load((REPO / "config/config.yaml").read_text())
    return check_config({**cfg, "datasets": list(corpora), "corpora": corpora}, SCHEMA)


def one_line(res) -> str:
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, (res.returncode, res.stderr[-2000:])
    return lines[0].removeprefix(f"{sys.executable} -m same: error: ") \
        .removeprefix("python -m same: error: ")


def table(tmp_path: Path, kind: str, lines: list[str], name="t") -> Path:
    path = tmp_path / f"{name}.{kind}"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def read(path: Path, **keys):
    kind = path.suffix[1:]
    return read_texts("toy", check_corpus_spec("toy", {"source": kind, "path": str(path),
                                                       "column": "text", **keys}))


# --------------------------------------------------------------------------- JSON nesting

def nested(depth: int, opener: str) -> str:
    """``depth`` levels of ``[`` or ``{"k":`` around 1."""
    if opener == "[":
        return "[" * depth + "1" + "]" * depth
    return '{"k":' * depth + "1" + "}" * depth


def test_jsonl_nested_20000_deep_is_one_line_not_a_crash(tmp_path):
    """pyarrow's parser died of SIGSEGV (exit 139) at 20,000 levels: refused before it."""
    path = table(tmp_path, "jsonl", [json.dumps({"text": "alpha beta"}),
                                     '{"text": "gamma delta", "x": ' + nested(20_000, "[")
                                     + "}"])
    spec = {"source": "jsonl", "path": str(path), "column": "text"}
    res = same_lda("split", "--name", "toy", "--corpus-spec", json.dumps(spec), "--out",
                   str(tmp_path / "split.npz"), cwd=tmp_path)
    assert one_line(res) == (f"{path}: line 2 nests JSON arrays or objects more than 1000 "
                             "levels deep (the most a jsonl corpus may); see corpora.toy.path")
    assert not (tmp_path / "split.npz").exists()


@HYPO
@given(depth=st.integers(1, 2 * MAX_JSON_DEPTH), opener=st.sampled_from(["[", "{"]),
       line=st.integers(0, 2), split_object=st.booleans(),
       decoy=st.sampled_from(["", "[[[[", "}}}}", '\\"[[', "{{"]))
@example(depth=MAX_JSON_DEPTH - 1, opener="[", line=0, split_object=False, decoy="")
@example(depth=MAX_JSON_DEPTH, opener="[", line=0, split_object=False, decoy="")  # Hypothesis's
@example(depth=2 * MAX_JSON_DEPTH, opener="[", line=1, split_object=True, decoy="")
def test_jsonl_nesting_deeper_than_the_limit_is_refused(tmp_path, depth, opener, line,
                                                        split_object, decoy):
    """Brackets inside strings never count; an object spread over lines counts whole.  The
    value sits in the line's object, one level down: ``depth`` levels of it make depth + 1."""
    value = nested(depth, opener)
    unit = 1 if opener == "[" else 5  # characters of one level's opening
    half = (depth // 2) * unit  # between two levels, never inside a string
    if split_object:  # the same object over two lines: JSON's whitespace, pyarrow reads it
        value = value[:half] + "\n" + value[half:]
    deepest = (MAX_JSON_DEPTH - 1) * unit  # where level 1001 opens: the value's 1000th
    at = line + 1 + (split_object and deepest >= half)
    lines = [json.dumps({"text": f"word{i} other{decoy}"}) for i in range(3)]
    lines[line] = '{"text": "alpha beta ' + decoy + '", "x": ' + value + "}"
    path = table(tmp_path, "jsonl", lines)
    if depth + 1 <= MAX_JSON_DEPTH:
        assert len(read(path)[0]) == 3
    else:
        with pytest.raises(TextCorpusError) as exc:
            read(path)
        assert str(exc.value) == (f"{path}: line {at} nests JSON arrays "
                                  "or objects more than 1000 levels deep (the most a jsonl "
                                  "corpus may); see corpora.toy.path")


# --------------------------------------------------------------------------- line length

@HYPO
@given(kind=st.sampled_from(["csv", "jsonl"]), limit=st.integers(16, 300),
       lengths=st.lists(st.integers(13, 320), min_size=1, max_size=4))
def test_lines_over_max_line_bytes_are_refused_naming_line_and_key(tmp_path, kind, limit,
                                                                   lengths):
    """Each line exactly ``n`` bytes (csv: a header first): read up to the limit, refused
    above it, never pyarrow's "straddles two block boundaries"."""
    if kind == "csv":
        lines = ["text"] + ["w" + "o" * (n - 1) for n in lengths]
    else:
        lines = [json.dumps({"text": "w" + "o" * (n - 13)}) for n in lengths]
        assert [len(s) for s in lines] == lengths
    path = table(tmp_path, kind, lines)
    too_long = [i for i, s in enumerate(lines) if len(s) > limit]
    if not too_long:
        assert len(read(path, max_line_bytes=limit)[0]) == len(lengths)
    else:
        with pytest.raises(TextCorpusError) as exc:
            read(path, max_line_bytes=limit)
        i = too_long[0]
        assert str(exc.value) == (f"{path}: line {i + 1} is {len(lines[i])} bytes long, over "
                                  f"corpora.toy.max_line_bytes ({limit}); raise it to read "
                                  "this file")


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_a_line_of_several_mib_is_read_by_default(tmp_path, kind):
    """pyarrow refused a cell or line of 2 MiB or more ("straddles two block boundaries"),
    with no setting to raise; the default limit (16 MiB) reads 3 MiB, and the key raises it."""
    big = "word " * (3 * 2**20 // 5)
    lines = (["text", big, "alpha beta"] if kind == "csv"
             else [json.dumps({"text": big}), json.dumps({"text": "alpha beta"})])
    path = table(tmp_path, kind, lines)
    names, raw, _ = read(path)
    assert len(names) == 2 and len(raw[0]) == len(big)
    with pytest.raises(TextCorpusError, match=r"raise it to read this file$"):
        read(path, max_line_bytes=2**20)


@pytest.mark.parametrize("value", [0, -1, True, 2.5, "16M", 2**30 + 1, None])
def test_bad_max_line_bytes_names_the_key(value):
    with pytest.raises(TextCorpusError) as exc:
        check_corpus_spec("toy", {"source": "csv", "path": "t.csv", "column": "text",
                                  "max_line_bytes": value})
    assert str(exc.value) == ("corpora.toy.max_line_bytes: must be an integer from 1 to "
                              "1073741824 (bytes of the longest line read)")
    with pytest.raises(TextCorpusError, match="^corpora.toy.max_line_bytes: not a key of a "
                                              "folder corpus"):
        check_corpus_spec("toy", {"source": "folder", "path": "d", "max_line_bytes": 100})


# --------------------------------------------------------------------------- encodings

@pytest.mark.parametrize("encoding, why", [
    *[(e, "is not a text encoding (a bytes-to-bytes or text-to-text codec); name one that "
          "decodes bytes to text, such as utf-8 or latin-1")
      for e in ("base64", "hex", "bz2", "quopri", "zlib", "uu", "rot13")],
    ("undefined", "cannot decode text (undefined encoding)"),
])
def test_an_encoding_that_is_not_a_text_encoding_is_refused_by_both_checks(encoding, why):
    """They passed the spec check (b"".decode(enc) succeeds on empty input) and the workflow's,
    then ended in a LookupError or zlib.error traceback at the job."""
    spec = {"source": "folder", "path": "d", "vectorizer": {"encoding": encoding}}
    message = f"corpora.mine.vectorizer.encoding: {encoding!r} {why}"
    with pytest.raises(TextCorpusError) as exc:
        check_corpus_spec("mine", spec)
    assert str(exc.value) == message
    with pytest.raises(ValueError) as exc:
        workflow_check({"mine": spec})
    assert str(exc.value) == "config " + message


@HYPO
@given(encoding=st.one_of(st.sampled_from(sorted(set(aliases.values()))), st.text(max_size=12)))
def test_any_encoding_name_is_accepted_only_if_it_decodes_text(encoding):
    """Python's every codec (bytes-to-bytes ones among them) and any other name."""

    try:
        info = codecs.lookup(encoding)
        works = info._is_text_encoding and info.decode(b"") is not None
    except (LookupError, ValueError, TypeError):
        works = False
    spec = {"source": "folder", "path": "d", "vectorizer": {"encoding": encoding}}
    if works:
        assert check_corpus_spec("toy", spec)["vectorizer"]["encoding"] == encoding
    else:
        with pytest.raises(TextCorpusError, match="^corpora.toy.vectorizer.encoding: "):
            check_corpus_spec("toy", spec)


# --------------------------------------------------------------------------- paths and names

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("source", ["csv", "folder", "docword", "vocab"])
def test_a_fifo_where_a_corpus_file_belongs_is_refused_before_opening(tmp_path, source):
    """A FIFO named as a table was "no such file"; one among a folder's documents, or as a
    uci vocabulary, blocked the split forever (load_files and read_vocab open it)."""
    fifo = tmp_path / "docs" / "sport" / "pipe" if source == "folder" else tmp_path / "pipe"
    spec = {"csv": {"source": "csv", "path": str(fifo), "column": "text"},
            "folder": {"source": "folder", "path": str(tmp_path / "docs")},
            "docword": {"source": "uci", "docword": str(fifo)},
            "vocab": {"source": "uci", "docword": str(tmp_path / "docword.txt"),
                      "vocab": str(fifo)}}[source]
    for doc in ("sport/a.txt", "space/b.txt"):
        (tmp_path / "docs" / doc).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / doc).write_text("alpha beta gamma")
    (tmp_path / "docword.txt").write_text("2\n2\n2\n1 1 1\n2 2 1\n")
    os.mkfifo(fifo)
    res = same_lda("split", "--name", "toy", "--corpus-spec", json.dumps(spec), "--out",
                   str(tmp_path / "split.npz"), cwd=tmp_path, timeout=30)
    key = {"folder": "path", "csv": "path"}.get(source, source)
    hint = ("corpora.toy.path holds one folder per category, one file per document"
            if source == "folder" else f"corpora.toy.{key} names a file")
    assert one_line(res) == f"{fifo}: is a FIFO (named pipe), not a regular file; {hint}"
    if source != "folder":  # the workflow's check before any job says the same
        with pytest.raises(TextCorpusError) as exc:
            check_corpus_spec("toy", spec, check_paths=True)
        assert str(exc.value) == f"{fifo}: is a FIFO (named pipe), not a regular file; {hint}"


def test_a_missing_table_is_still_no_such_file(tmp_path):
    with pytest.raises(CorpusNotFoundError) as exc:
        read(tmp_path / "absent.csv")
    assert str(exc.value) == f"{tmp_path / 'absent.csv'}: no such file (corpora.toy.path)"


@pytest.mark.parametrize("argv, message", [
    (["split", "--corpus", "", "--out", "s.npz"],
     "--corpus: an empty path; give the path of a file or folder"),
    (["split", "--dataset", "kos", "--data-dir", "", "--out", "s.npz"],
     "--data-dir: an empty path; give the path of a file or folder"),
    (["split", "--dataset", "kos", "--out", ""],
     "--out: an empty path; give the path of a file or folder"),
    (["check", "s.npz", ""], "PATH: an empty path; give the path of a file or folder"),
    (["split", "--dataset", "kos", "--name", "mine", "--out", "s.npz"],
     "--name: applies only with --corpus-spec (a dataset or a synthetic corpus file names "
     "itself)"),
])
def test_an_empty_path_option_is_named(tmp_path, monkeypatch, capsys, argv, message):
    """``split --corpus ''`` fell through to --dataset: "unknown corpus None"."""
    from same.experiments.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(argv, prog="same-lda") == 2
    assert capsys.readouterr().err == f"same-lda: error: {message}\n"
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("option, value, message", [
    ("--seed", "-1", "must be a whole number of at least 0, not '-1'"),
    ("--seed", "1.5", "must be a whole number of at least 0, not '1.5'"),
    ("--test-fraction", "1", "must be a finite number in (0, 1), not '1'"),
    ("--test-fraction", "nan", "must be a finite number in (0, 1), not 'nan'"),
    ("--test-fraction", "0", "must be a finite number in (0, 1), not '0'"),
])
def test_split_names_a_bad_seed_or_test_fraction(tmp_path, monkeypatch, capsys, option, value,
                                                 message):
    """``split --seed -1`` said ``same-lda: error: expected non-negative integer`` (numpy's
    words, no option named) after the corpus was read; now refused at parse time."""
    from same.experiments.cli import main

    monkeypatch.chdir(tmp_path)
    argv = ["split", "--dataset", "kos", option, value, "--out", "s.npz"]
    with pytest.raises(SystemExit) as exc:
        main(argv, prog="same-lda")
    assert exc.value.code == 2
    assert capsys.readouterr().err == f"same-lda split: error: argument {option}: {message}\n"
    assert os.listdir(tmp_path) == []


def test_split_refuses_the_name_of_a_builtin_corpus(tmp_path, cache, capsys):
    """``--name kos`` labelled a user's 3-document corpus kos, a name the workflow and
    synthesize refuse: one rule (same.data.registry.check_own_name) for all three."""
    from same.experiments.cli import main

    (tmp_path / "docword.txt").write_text("3\n2\n3\n1 1 1\n2 2 1\n3 1 2\n")
    spec = {"source": "uci", "docword": str(tmp_path / "docword.txt")}
    argv = ["split", "--name", "kos", "--corpus-spec", json.dumps(spec), "--out",
            str(tmp_path / "split.npz")]
    assert main(argv, prog="same-lda") == 2
    err = "'kos' is the name of a UCI corpus (kos, nips, enron, nytimes, pubmed); give the " \
          "corpus another name"
    assert capsys.readouterr().err == f"same-lda: error: --name: {err}\n"
    assert not (tmp_path / "split.npz").exists()
    with pytest.raises(TextCorpusError) as exc:
        textcorpus.load_corpus("nips", spec)
    assert str(exc.value) == "corpora.nips: " + err.replace("'kos'", "'nips'")
    with pytest.raises(ValueError) as exc:
        workflow_check({"kos": spec})
    assert str(exc.value) == "config corpora.kos: " + err


# --------------------------------------------------------------------------- lone surrogates

def test_lone_surrogates_end_in_one_line_naming_the_file_or_setting(tmp_path, cache):
    """A label "\\ud800" in a jsonl file, a table whose file name holds bytes that are not
    UTF-8, a column named with a lone surrogate, text that decodes to one: each names the
    file or the key (they were "'utf-8' codec can't encode ..." or blamed the path)."""
    lab = table(tmp_path, "jsonl", ['{"text": "alpha beta", "l": "\\ud800"}',
                                    '{"text": "gamma delta", "l": "b"}'])
    with pytest.raises(TextCorpusError) as exc:
        read(lab, label="l")
    assert str(exc.value).startswith(f"{lab}: not a readable jsonl table (")
    assert str(exc.value).endswith("); see corpora.toy.path")

    odd = Path(os.fsdecode(bytes(tmp_path) + b"/t\xff.csv"))
    odd.write_text("text\nalpha beta\ngamma delta\n")
    with pytest.raises(TextCorpusError) as exc:
        read(odd)
    assert str(exc.value) == (f"{odd}: a file name that is not UTF-8 (it names the "
                              "documents); rename the file corpora.toy.path names")

    csv = table(tmp_path, "csv", ["text,l", "alpha beta,a", "gamma delta,b"])
    for key in ("column", "label"):
        spec = {"source": "csv", "path": str(csv), "column": "text", key: "\ud800"}
        with pytest.raises(TextCorpusError) as exc:
            check_corpus_spec("toy", spec)
        assert str(exc.value) == (f"corpora.toy.{key}: '\\ud800' is not Unicode text (a lone "
                                  "surrogate), so no column is named so")

    esc = table(tmp_path, "csv", ["text", "alpha \\ud800 beta", "gamma delta"], name="e")
    with pytest.raises(TextCorpusError) as exc:
        read_texts("toy", check_corpus_spec("toy", {
            "source": "csv", "path": str(esc), "column": "text",
            "vectorizer": {"encoding": "unicode_escape"}}))
    assert str(exc.value) == (f"{esc}: decodes under unicode_escape to a lone surrogate "
                              "(character 11), not Unicode text; see "
                              "corpora.toy.vectorizer.encoding")
