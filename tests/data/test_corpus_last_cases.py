"""Text corpora, specs and caches, the last cases (docs/reliability.md rows 256–261): markup
the HTML parser choked on or left behind, a token pattern that yields empty words, a cache
folder inside a corpus folder, an empty path in the workflow's config, and the corpus spec of
``same-lda split`` checked by the workflow's own schema."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from same.data.textclean import strip_html
from same.data.textcorpus import TextCorpusError, check_corpus_spec, load_corpus

WORDS = st.lists(st.from_regex(r"[a-z]{2,8}", fullmatch=True), min_size=1, max_size=6)
#: Pieces of markup, whole and broken, that text may hold.
FRAGMENTS = st.sampled_from(["<", ">", "!", "[", "]", "-", "/", "?", "&", ";", "#", "=", "'",
                             '"', " ", "\n", "a", "x1", "é", "CDATA", "if", "endif", "temp",
                             "script", "style", "div", "amp", "&#", "<!", "<![", "<!--", "-->",
                             "</", "<?", "]]>"])


def _split(tmp_path: Path, spec: dict, env=None, name="mine", out="s.npz"):
    return subprocess.run([sys.executable, "-m", "same", "split", "--name", name,
                           "--corpus-spec", json.dumps(spec), "--out", str(out)],
                          capture_output=True, text=True, cwd=tmp_path, env=env)


# --------------------------------------------------------------------------- strip: [html]

@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(FRAGMENTS, st.text(max_size=4)), max_size=30).map("".join))
def test_html_stripping_never_raises_on_any_text(text):
    """Row 256: `<![foo[` (and `<![` before no name) raised the parser's AssertionError."""
    assert isinstance(strip_html(text), str)


def test_an_unknown_marked_section_is_a_comment_not_a_traceback(tmp_path, cache):
    """Row 256, the prober's file: exit 0, the section dropped as HTML drops a bogus
    comment (up to the next `>`), the text around it kept."""
    (tmp_path / "t.csv").write_text('text\n"alpha beta gamma <![foo[ delta ]]> epsilon"\n'
                                    '"zeta eta theta alpha beta"\n"gamma delta epsilon zeta"\n'
                                    '"x <![ y> zeta"\n')
    spec = {"source": "csv", "path": "t.csv", "column": "text", "shuffle": False,
            "vectorizer": {"strip": ["html"], "stop_words": None}}
    res = _split(tmp_path, spec)
    assert res.returncode == 0, res.stderr
    corpus = load_corpus("mine", {**spec, "path": str(tmp_path / "t.csv")})
    assert corpus.vocab == ["alpha", "beta", "delta", "epsilon", "eta", "gamma", "theta",
                            "zeta"]
    assert corpus.counts[0].toarray().tolist() == [[1, 1, 0, 1, 0, 1, 0, 0]]


@settings(max_examples=200, deadline=None)
@given(WORDS, st.sampled_from(["<{w}", "<{w} class={w}", "<{w} class='{w} {w}", "</{w}",
                               "<!--{w} {w}", "<!-- {w} -- {w}", "<![{w}[ {w}", "<?{w} {w}",
                               "<!doctype {w}", "<!{w} {w}"]),
       st.from_regex(r"[a-z]{2,8}", fullmatch=True))
def test_unfinished_markup_at_the_end_is_dropped(words, tail, word):
    """Row 257: a truncated tag or an unterminated comment at the end of a document gave its
    names and text to the vocabulary (HTMLParser.close hands them on as text)."""
    head = " ".join(words)
    assert strip_html(f"{head} {tail.format(w=word)}").split() == words


def test_unterminated_comment_and_truncated_tag_leave_no_word(tmp_path, cache):
    """Row 257, the prober's documents through a corpus."""
    (tmp_path / "docs" / "a").mkdir(parents=True)
    (tmp_path / "docs" / "a" / "1").write_text("rocket orbit <!-- hidden secret comment")
    (tmp_path / "docs" / "a" / "2").write_text("orbit launch <div class=navbar")
    (tmp_path / "docs" / "a" / "3").write_text("hello <div class=x")
    spec = {"source": "folder", "path": str(tmp_path / "docs"),
            "vectorizer": {"strip": ["html"], "stop_words": None}}
    assert load_corpus("page", spec).vocab == ["hello", "launch", "orbit", "rocket"]


# --------------------------------------------------------------------------- the spec's schema

@pytest.mark.parametrize("extra, message", [
    ({"n_components": "abc"}, "corpora.mine.n_components: 'abc' is not of type 'integer'"),
    ({"n_components": -5}, "corpora.mine.n_components: -5 is less than the minimum of 1"),
    ({"n_components": 8.0}, "corpora.mine.n_components: 8.0 is not of type 'integer'"),
    ({"other_order": "bogus"},
     "corpora.mine.other_order: 'bogus' is not of type 'boolean', 'array'"),
    ({"other_order": ["cgs"]},
     "corpora.mine.other_order[0]: 'cgs' is not one of ['same', 'vb_online', "
     "'sklearn_online']"),
    ({"vectorizer": {"stop_words": ["alpha", None]}},
     "corpora.mine.vectorizer.stop_words[1]: None is not of type 'string'"),
    ({"vectorizer": None}, "corpora.mine.vectorizer: None is not of type 'object'"),
])
def test_split_corpus_spec_is_checked_by_the_workflows_schema(tmp_path, cache, extra, message):
    """Row 261: `same-lda split --corpus-spec` took values the workflow's schema refuses
    (each silently ignored, exit 0); now one line naming the key, exit 2, nothing written."""
    (tmp_path / "l.csv").write_text('text\n"alpha beta"\n"gamma delta"\n"beta gamma"\n')
    spec = {"source": "csv", "path": "l.csv", "column": "text", **extra}
    res = _split(tmp_path, spec)
    assert res.returncode == 2 and not (tmp_path / "s.npz").exists()
    assert res.stderr.strip().splitlines() == [f"python -m same: error: {message}"]


def test_corpus_schema_is_the_configs_own():
    """Row 261: one declaration of a corpus spec: the config's schema refers to the file
    check_corpus_spec reads, and every value either refuses is refused by the other."""
    import yaml

    from same.data.corpusspec import SPEC_SCHEMA

    root = Path(__file__).resolve().parents[2]
    config = yaml.safe_load((root / "config" / "config.schema.yaml").read_text())
    ref = config["properties"]["corpora"]["additionalProperties"]["$ref"]
    assert (root / "config" / ref).resolve() == SPEC_SCHEMA.resolve()


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(["n_components", "other_order", "shuffle",
                                        "shuffle_seed", "max_line_bytes"]),
                       st.one_of(st.integers(-3, 3), st.booleans(), st.text(max_size=3),
                                 st.none(), st.lists(st.sampled_from(["same", "x"]),
                                                     max_size=2)), max_size=3),
       st.dictionaries(st.sampled_from(["stop_words", "min_count", "lowercase", "strip"]),
                       st.one_of(st.integers(-1, 3), st.booleans(), st.none(),
                                 st.lists(st.one_of(st.none(), st.sampled_from(
                                     ["html", "alpha", 1])), max_size=2)), max_size=2))
def test_a_spec_the_schema_refuses_is_refused_naming_a_key(top, vec):
    """Row 261 over a space of specs: whatever check_corpus_spec accepts is valid against
    the schema; what it refuses, it refuses in one line naming corpora.mine.<key>."""
    from same.data.corpusspec import SPEC_SCHEMA
    from same.io.schema import schema_error

    spec = {"source": "csv", "path": "l.csv", "column": "text", **top,
            **({"vectorizer": vec} if vec else {})}
    try:
        check_corpus_spec("mine", spec)
    except TextCorpusError as exc:
        assert re.match(r"corpora\.mine\.[a-z_]+", str(exc)) and "\n" not in str(exc)
    else:
        assert schema_error(spec, SPEC_SCHEMA) is None


# --------------------------------------------------------------------------- token_pattern

def _empty_words(pattern: str) -> str:
    return (f"corpora.mine.vectorizer.token_pattern: {pattern!r} yields empty words (a match "
            "or its group of no characters), so it would count an empty word; give a pattern "
            "whose every match holds a character")


@pytest.mark.parametrize("pattern", ["(x*)[a-z]+", "(?i)(?=a)", "(?=(x*))[a-z]+",
                                     "[a-z]+|(?=9)", "a*"])
def test_a_token_pattern_yielding_empty_words_is_refused(tmp_path, cache, pattern):
    """Row 258: a pattern whose group or whole match can be empty made a corpus whose one
    word was '' (exit 0); refused before any file is read, by CountVectorizer's own
    tokenizer on a sample of text."""
    (tmp_path / "l.csv").write_text('text\n"alpha beta"\n"gamma delta"\n"beta gamma"\n')
    spec = {"source": "csv", "path": "l.csv", "column": "text",
            "vectorizer": {"token_pattern": pattern}}
    res = _split(tmp_path, spec)
    assert res.returncode == 2 and not (tmp_path / "s.npz").exists()
    assert res.stderr.strip().splitlines() == [f"python -m same: error: {_empty_words(pattern)}"]
    assert not (cache / "text").exists()


def test_an_empty_word_only_the_text_shows_is_refused_naming_the_document(tmp_path, cache):
    """Row 258: a lookahead on a letter the sample lacks yields '' only on the text itself:
    refused once vectorized, naming the first document with one, nothing cached."""
    (tmp_path / "l.csv").write_text('text\n"alpha beta"\n"gamma ѣ delta"\n"beta gamma"\n')
    spec = {"source": "csv", "path": str(tmp_path / "l.csv"), "column": "text",
            "shuffle": False, "vectorizer": {"token_pattern": "[a-z]+|(?=ѣ)"}}
    with pytest.raises(TextCorpusError) as exc:
        load_corpus("mine", spec)
    assert str(exc.value) == f"{tmp_path / 'l.csv'}: line 3: {_empty_words('[a-z]+|(?=ѣ)')}"
    assert not (cache / "text").exists()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["(x*)", "(?=a)", "(?=ѣ)", "[a-z]+", "[a-z]*", "[a-z]?", "|",
                                 "\\b", "ѣ", "a", "b+", "(?:", ")", "(", "x?"]),
                min_size=1, max_size=6).map("".join))
def test_no_token_pattern_makes_an_empty_word(pattern):
    """Row 258 over a space of patterns: a corpus's vocabulary never holds '' (the pattern
    is refused naming token_pattern, or another setting's line, or its words are words)."""
    from same.data.textcorpus import vectorize

    texts = ["alpha beta ѣ gamma", "beta gamma a delta", "x b ѣѣ alpha"]
    try:
        spec = check_corpus_spec("mine", {"source": "csv", "path": "l.csv", "column": "t",
                                          "vectorizer": {"token_pattern": pattern,
                                                         "stop_words": None}})
        vocab = vectorize("mine", ["d1", "d2", "d3"], texts, spec["vectorizer"])[1]
    except TextCorpusError as exc:
        assert "\n" not in str(exc) and "corpora.mine.vectorizer" in str(exc)
    else:
        assert "" not in vocab


# --------------------------------------------------------------------------- the cache folder

def _folder_corpus(root: Path) -> Path:
    for rel, text in {"sport/a": "team match goal", "sport/b": "goal team crowd",
                      "space/c": "rocket orbit crew", "space/d": "orbit launch rocket"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize("inside", ["p7/sport", "p7", "p7/new/deeper", "link"])
def test_a_cache_folder_inside_the_corpus_folder_is_refused(tmp_path, inside):
    """Row 259: SAME_CACHE_DIR inside a folder corpus's folder (or the folder itself, or a
    link into it): the first split wrote its cache there, the next read it as a document
    and failed; now one line naming the variable and the corpus path, exit 2, nothing
    written in the folder."""
    import os

    folder = _folder_corpus(tmp_path / "p7")
    (tmp_path / "link").symlink_to(folder / "space")
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    spec = {"source": "folder", "path": "p7"}
    res = _split(tmp_path, spec, env={**os.environ, "SAME_CACHE_DIR": inside})
    assert res.returncode == 2 and not (tmp_path / "s.npz").exists()
    assert res.stderr.strip().splitlines() == [
        f"python -m same: error: SAME_CACHE_DIR {inside}: inside the corpus folder p7 "
        "(corpora.mine.path), whose every file is read as a document; give a path outside it"]
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before
    ok = _split(tmp_path, spec, env={**os.environ, "SAME_CACHE_DIR": "cache"})
    assert ok.returncode == 0, ok.stderr  # beside the folder: built, and built again
    assert _split(tmp_path, spec, env={**os.environ, "SAME_CACHE_DIR": "cache"}).returncode == 0


def _workflow_check(tmp_path: Path, **keys):
    import os

    import yaml

    from same.experiments.config import check_config

    root = Path(__file__).resolve().parents[2]
    cfg = yaml.safe_load((root / "config" / "config.yaml").read_text())
    folder = _folder_corpus(tmp_path / "p7")
    cfg = {**cfg, "datasets": ["mine"], "scaling": None,
           "corpora": {"mine": {"source": "folder", "path": str(folder)}}, **keys}
    here = os.getcwd()
    os.chdir(tmp_path)  # paths relative to the folder snakemake runs in
    try:
        return check_config(cfg, root / "config" / "config.schema.yaml")
    finally:
        os.chdir(here)


@pytest.mark.parametrize("key, value", [("cache_dir", "p7/sport"), ("cache_dir", "p7"),
                                        ("report_dir", "p7/out")])
def test_the_workflow_refuses_an_output_folder_inside_a_corpus_folder(tmp_path, key, value):
    """Row 259 in the workflow's config check, before any job: the cache (and the report
    folder) never inside a folder corpus's folder."""
    with pytest.raises(ValueError) as exc:
        _workflow_check(tmp_path, **{key: value})
    assert str(exc.value) == (f"config {key} {value}: inside the corpus folder "
                              f"{tmp_path / 'p7'} (corpora.mine.path), whose every file is read "
                              "as a document; give a path outside it")


def test_the_workflows_own_results_folder_is_never_inside_a_corpus_folder(tmp_path):
    """A folder corpus at the run folder itself (path: .), the cache and report folders set
    elsewhere: the splits, runs and logs (results/) and figures/ would still be inside it,
    read as categories of documents by the next split.  Refused before any job."""
    _folder_corpus(tmp_path / "p7")
    with pytest.raises(ValueError) as exc:
        _workflow_check(tmp_path, cache_dir=str(tmp_path.parent / "cache"),
                        report_dir=str(tmp_path.parent / "reports"),
                        corpora={"mine": {"source": "folder", "path": "."}})
    assert str(exc.value) == ("config the workflow's output folder results: inside the corpus "
                              "folder . (corpora.mine.path), whose every file is read as a "
                              "document; give a path outside it")


@pytest.mark.parametrize("key", ["cache_dir", "report_dir", "data_dir"])
def test_an_empty_path_in_the_config_is_refused(tmp_path, key):
    """Row 260: `cache_dir: ""` passed the config check and every job then cached under
    ~/.cache/same-lda (an empty SAME_CACHE_DIR reads as unset); report_dir and data_dir ""
    were read as their defaults.  Now one line naming the key."""
    with pytest.raises(ValueError) as exc:
        _workflow_check(tmp_path, **{key: ""})
    assert str(exc.value) == f"config {key}: '' should be non-empty"


def test_the_workflow_refuses_a_token_pattern_yielding_empty_words(tmp_path):
    """Row 258 in the workflow's config check, before any job."""
    with pytest.raises(ValueError) as exc:
        _workflow_check(tmp_path, corpora={"mine": {"source": "folder", "path": "p7",
                                                    "vectorizer": {"token_pattern": "(x*)\\w+"}}})
    assert str(exc.value) == "config " + _empty_words("(x*)\\w+")
