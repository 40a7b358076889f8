"""What a text corpus's raw text goes through before it is vectorized: the limits a table is
checked against before pyarrow parses it (a line's length in bytes, a jsonl line's nesting:
:func:`check_lines`), and the parts ``vectorizer.strip`` removes (:func:`strip_parts`)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np

from .corpusspec import TextCorpusError, at_line

__all__ = ["MAX_JSON_DEPTH", "check_lines", "strip_parts", "strip_html"]

#: The deepest a jsonl line may nest arrays and objects (Python's json reads about as deep);
#: checked before pyarrow parses the file, whose parser crashed the process (SIGSEGV) at
#: 20,000 levels.
MAX_JSON_DEPTH = 1000
#: A JSON string on one line (what the nesting count skips: brackets inside it are text).
_JSON_STRING = re.compile(rb'"(?:[^"\\\n]++|\\[^\n])*+"')


def check_lines(name: str, path: Path, data: bytes, limit: int, jsonl: bool) -> None:
    """Refuse a line of ``data`` (a table as UTF-8) longer than ``limit`` bytes and, in a
    jsonl file, arrays and objects nested deeper than :data:`MAX_JSON_DEPTH`: before pyarrow
    parses it (its parser recurses per level, and reads a line only within one block)."""
    arr = np.frombuffer(data, np.uint8)
    newlines = np.flatnonzero(arr == 0x0A)
    lengths = np.diff(np.concatenate(([-1], newlines, [arr.size]))) - 1
    over = np.flatnonzero(lengths > limit)
    if over.size:
        raise TextCorpusError(f"{at_line(path, over[0] + 1)} is {lengths[over[0]]} bytes long, "
                              f"over corpora.{name}.max_line_bytes ({limit}); raise it to "
                              "read this file")
    if jsonl:
        line = _too_deep(data, MAX_JSON_DEPTH)
        if line is not None:
            raise TextCorpusError(f"{at_line(path, line)} nests JSON arrays or objects more than "
                                  f"{MAX_JSON_DEPTH} levels deep (the most a jsonl corpus "
                                  f"may); see corpora.{name}.path")


def _too_deep(data: bytes, limit: int) -> int | None:
    """The first line (1-based) where JSON ``data`` nests brackets more than ``limit`` deep,
    or None.  Strings are skipped; the depth counts from the shallowest start of any line so
    far, so an object spanning lines or an unbalanced line cannot hide depth (it may only
    overcount text that is not JSON, which pyarrow would refuse anyway)."""
    arr = np.frombuffer(_JSON_STRING.sub(b'""', data), np.uint8)  # newlines kept
    opens = (arr == 0x5B) | (arr == 0x7B)
    pos = np.flatnonzero(opens | (arr == 0x5D) | (arr == 0x7D))
    if pos.size <= limit:
        return None
    depth = np.cumsum(np.where(opens[pos], 1, -1), dtype=np.int64)
    newlines = np.flatnonzero(arr == 0x0A)
    starts = np.concatenate(([0], newlines + 1))  # each line's first byte
    at_start = np.concatenate(([0], depth))[np.searchsorted(pos, starts)]
    line = np.searchsorted(newlines, pos)  # 0-based line of each bracket
    deep = np.flatnonzero(depth - np.minimum.accumulate(at_start)[line] > limit)
    return int(line[deep[0]]) + 1 if deep.size else None


def strip_parts(text: str, strip) -> str:
    """``text`` with the parts ``strip`` names removed (``vectorizer.strip``), always in this
    order whatever the list's: HTML markup first (:func:`strip_html`, its line-breaking
    markup made newlines), so that the newsgroup strips see the lines the markup meant; then
    newsgroup headers, footers and quotes as scikit-learn's fetch_20newsgroups removes them."""
    from sklearn.datasets._twenty_newsgroups import (
        strip_newsgroup_footer,
        strip_newsgroup_header,
        strip_newsgroup_quoting,
    )

    for part, fn in (("html", strip_html), ("headers", strip_newsgroup_header),
                     ("footers", strip_newsgroup_footer), ("quotes", strip_newsgroup_quoting)):
        if part in strip:
            text = fn(text)
    return text


class _TextOfHTML(HTMLParser):
    """Character data of HTML, by the standard library's parser: entities decoded, every tag
    a word boundary, a line break (``<br>``) a newline, a block element's start and end
    (:data:`_BLOCKS`: ``<p>``, ``</div>``, ...) the start of a line, comments and the contents of
    ``<script>`` and ``<style>`` dropped."""

    _HIDDEN = frozenset({"script", "style"})
    #: Elements that start and end a line of their own as HTML lays them out (block-level).
    _BLOCKS = frozenset({
        "address", "article", "aside", "blockquote", "body", "dd", "details", "div", "dl",
        "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4",
        "h5", "h6", "head", "header", "hr", "html", "li", "main", "nav", "ol", "p", "pre",
        "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "title", "tr",
        "ul"})

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def _boundary(self, tag: str) -> None:
        """What a tag leaves: ``<br>`` a newline; a block's start or end a newline unless a
        line starts there already (nested blocks make no blank line); any other tag a space."""
        if tag == "br" or (tag in self._BLOCKS and self.parts
                           and not self.parts[-1].endswith("\n")):
            self.parts.append("\n")
        elif tag not in self._BLOCKS:
            self.parts.append(" ")

    def handle_starttag(self, tag, attrs):
        self._hidden += tag in self._HIDDEN
        self._boundary(tag)

    def handle_endtag(self, tag):
        self._hidden -= tag in self._HIDDEN and self._hidden > 0
        self._boundary(tag)

    def handle_startendtag(self, tag, attrs):  # <br />: a line break, never a hidden block
        self._boundary(tag)

    def handle_data(self, data):
        if not self._hidden and data:
            self.parts.append(data)

    def parse_marked_section(self, i, report=1):
        """``<![CDATA[...]]>`` and the other marked sections the base parser knows; any other
        ``<![`` (``<![foo[``, ``<![ x``) is what HTML reads it as, a bogus comment up to the
        next ``>`` (the base parser raised AssertionError on it), unfinished without one."""
        try:
            return super().parse_marked_section(i, report)
        except AssertionError:  # "unknown status keyword", "expected name token"
            end = self.rawdata.find(">", i + 3)
            return -1 if end < 0 else end + 1


def strip_html(text: str) -> str:
    """The text of a document written in HTML (``strip: [html]``): markup removed by
    :class:`html.parser.HTMLParser` (every tag a word boundary; ``<br>`` and ``<br />`` a
    newline, so that ``<br /><br />`` is the blank line it shows; a block element's start
    and end, ``<p>``, ``</div>``, ``</li>``, the start of a line; entities
    such as ``&amp;`` and ``&eacute;`` decoded, comments, scripts and styles dropped), so no
    tag or entity name becomes a word.  Markup left unfinished at the end (``<div class=x``,
    ``<!-- a comment`` never closed) is dropped, as HTML reads it to the end of the document
    (the parser's ``close`` handed it on as text); a ``<![`` that opens no known section is
    a comment up to the next ``>``."""
    parser = _TextOfHTML()
    parser.feed(text)
    if parser.rawdata.startswith("<"):  # what feed left unparsed: markup waiting for its end
        parser.rawdata = ""
    parser.close()
    return "".join(parser.parts)
