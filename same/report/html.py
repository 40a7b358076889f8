"""claims.md and every table as HTML pages, for the report to show them in the page.

``snakemake --report`` shows an ``.html`` result inside the report (an image, too); a ``.md``
or ``.csv`` is only offered as a download, so without these pages the verdicts and tables are
not readable in the report itself.  Each page is its Markdown file rendered by markdown-it-py
(CommonMark with GitHub's tables; raw HTML in the Markdown is escaped, never passed through),
so the page and the ``.md`` say the same thing by construction.
"""

from __future__ import annotations

import html
import os
from pathlib import Path

from same.io.outputs import text_kind, write_text

__all__ = ["markdown_page", "write_markdown_page"]

#: The page's look: readable tables (borders, zebra rows, numbers not wrapped), a text width.
STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; max-width: 75em; line-height: 1.4; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.5em; vertical-align: top; }
th { background: #eee; } tr:nth-child(even) td { background: #f8f8f8; }
code { background: #f3f3f3; padding: 0 0.2em; }
"""


def markdown_page(markdown: str, title: str) -> str:
    """A whole HTML page of ``markdown`` (str), titled ``title``; its first line names it as a
    page of same-lda (so a later run may replace it, :mod:`same.io.outputs`)."""
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)
    return (f"<!doctype html><!-- same-lda page: {html.escape(title)} -->\n"
            f'<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{STYLE}</style></head>\n<body>\n{body}</body></html>\n")


def write_markdown_page(md_path: str | os.PathLike, html_path: str | os.PathLike) -> None:
    """Render the Markdown file ``md_path`` (a table or claims.md, titled by its first ``#``
    line) into ``html_path``, written by :mod:`same.io.outputs`' rules.

    Raises
    ------
    same.io.outputs.OutputError
        ``html_path`` exists and is not a page of ours for the same title, or is the input.
    ValueError
        ``md_path`` not UTF-8 text (``Markdown file bad.md: not UTF-8 text (invalid start
        byte at byte 0)``).
    OSError
        ``md_path`` unreadable (naming it), or ``html_path`` unwritable.
    """
    from same.io.textinput import read_utf8

    text = read_utf8(md_path, "Markdown file")
    first = text.split("\n", 1)[0]
    title = first[2:].strip() if first.startswith("# ") else Path(md_path).stem
    page = markdown_page(text, title)
    write_text(html_path, page, text_kind("HTML page", page), inputs=[md_path])


def main(argv: list[str] | None = None) -> int:
    """``python -m same.report.html MD HTML``: one page (the workflow's page rules)."""
    from same.io.cli import ArgumentParser

    ap = ArgumentParser(prog="python -m same.report.html", description=__doc__)
    ap.add_argument("md", help="a table's or claims' Markdown file")
    ap.add_argument("html", help="the page to write")
    args = ap.parse_args(argv)
    try:
        write_markdown_page(args.md, args.html)
    except (ValueError, OSError) as exc:
        ap.exit(2, f"{ap.prog}: error: {exc}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
