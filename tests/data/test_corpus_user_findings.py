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

from same.data.textclean import strip_html, strip_parts
from same.data.textcorpus import load_corpus

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
