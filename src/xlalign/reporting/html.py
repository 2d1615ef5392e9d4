"""Standalone HTML pages of the Markdown result tables, for the Snakemake report.

The tables are written as Markdown (:func:`xlalign.reporting.tables.to_markdown`: a
caption paragraph, a pipe table, footnote paragraphs). Snakemake's report shows an HTML
result in a frame but a Markdown file only as a download, so each tables file also gets an
HTML page: one self-contained file (inline CSS, no scripts, no external resources) that
reads the same in a browser opened on the file and inside the report.

Raw HTML in the Markdown is shown as text, never interpreted: captions and footnotes carry
model names, file names and comparisons (``p < 0.05``), not markup.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, atomic_open

#: A small style sheet: readable tables with tabular figures, captions set apart, wide
#: tables scrolled sideways instead of squeezed.
CSS = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  font-size: 14px; line-height: 1.45; color: #1f2328; background: #ffffff;
  margin: 0 auto; padding: 1.5em 2em; max-width: 80em; }
h1 { font-size: 1.6em; border-bottom: 1px solid #d0d7de; padding-bottom: .3em; }
h2 { font-size: 1.3em; margin-top: 1.6em; }
p { margin: .5em 0; }
p.caption { font-weight: 600; margin-top: 1.8em; }
.table-wrap { overflow-x: auto; margin: .4em 0 .8em; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: .25em .7em; border-bottom: 1px solid #d0d7de; white-space: nowrap; }
thead th { border-bottom: 2px solid #57606a; background: #f6f8fa; white-space: normal;
  vertical-align: bottom; }
tbody tr:nth-child(even) { background: #f9fafb; }
tbody tr:hover { background: #eef4ff; }
td:first-child, th:first-child { text-align: left; }
code { font-size: .92em; background: #f0f2f4; padding: .05em .3em; border-radius: 3px; }
footer { margin-top: 2.5em; color: #656d76; font-size: .85em; }
""".strip()


def _parser() -> MarkdownIt:
    """CommonMark with GFM pipe tables; raw HTML escaped, no typographic replacements."""
    md = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table")

    def table_open(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        return '<div class="table-wrap">\n' + self.renderToken(tokens, idx, options, env)

    def table_close(self: Any, tokens: Sequence[Token], idx: int, options: Any, env: Any) -> str:
        return self.renderToken(tokens, idx, options, env) + "</div>\n"

    md.add_render_rule("table_open", table_open)
    md.add_render_rule("table_close", table_close)
    return md


def _mark_captions(tokens: list[Token]) -> None:
    """Give the paragraph right before each table the class ``caption`` (our tables
    files put the caption there), so it stands apart from the footnotes."""
    for i, tok in enumerate(tokens):
        if tok.type != "table_open" or i < 3:
            continue
        if tokens[i - 1].type == "paragraph_close" and tokens[i - 3].type == "paragraph_open":
            tokens[i - 3].attrSet("class", "caption")


def markdown_body(text: str) -> str:
    """The HTML of a tables Markdown text (headings, paragraphs, pipe tables), without the
    page around it."""
    md = _parser()
    tokens = md.parse(text)
    _mark_captions(tokens)
    return md.renderer.render(tokens, md.options, {})


def page_title(text: str, default: str) -> str:
    """The first ATX heading of ``text`` (``# Result tables``), else ``default``."""
    m = re.search(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", text, flags=re.MULTILINE)
    return m.group(1).strip() if m else default


def markdown_to_html(text: str, *, title: str, source: str | None = None) -> str:
    """A standalone HTML page (UTF-8, inline CSS) showing the Markdown ``text``.

    ``source`` names the Markdown file in a footer, so a reader of the report knows where
    the CSV and LaTeX versions lie (beside it).
    """
    footer = ""
    if source:
        footer = (
            f"<footer>Generated from <code>{html.escape(source)}</code>; CSV and LaTeX "
            "versions of each table lie beside it.</footer>\n"
        )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>\n{CSS}\n</style>\n</head>\n<body>\n<main>\n"
        f"{markdown_body(text)}</main>\n{footer}</body>\n</html>\n"
    )


def write_html(md_path: PathLike, html_path: PathLike, *, title: str | None = None) -> None:
    """Render the Markdown file ``md_path`` into the page ``html_path``, atomically.

    The title defaults to the file's first heading, else its stem. A missing or empty
    Markdown file raises :class:`InputError` naming it: an empty page in the report would
    pass for a table with no rows.
    """
    src = Path(md_path)
    try:
        text = src.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise InputError(f"{src}: file not found (the Markdown tables to render)") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{src}: not UTF-8 text at byte {exc.start}") from exc
    if not text.strip():
        raise InputError(f"{src}: empty file, expected Markdown tables")
    page = markdown_to_html(text, title=title or page_title(text, src.stem), source=src.name)
    with atomic_open(html_path) as fh:
        fh.write(page)
