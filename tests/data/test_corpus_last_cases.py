"""Text corpora, specs and caches, the last cases (docs/reliability.md rows 256–269): markup
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
