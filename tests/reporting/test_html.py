"""HTML pages of the Markdown tables: structure, alignment, captions, escaping, errors."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from xlalign.core.errors import InputError
from xlalign.reporting.html import markdown_body, markdown_to_html, page_title, write_html
from xlalign.reporting.tables import to_markdown


class _Cells(HTMLParser):
    """Collects each table's rows as lists of (tag, text, attributes)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[tuple[str, str, dict[str, str | None]]]]] = []
        self.captions: list[str] = []
        self._cell: tuple[str, dict[str, str | None]] | None = None
        self._text = ""
        self._in_caption = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell, self._text = (tag, dict(attrs)), ""
        elif tag == "p" and dict(attrs).get("class") == "caption":
            self._in_caption, self._text = True, ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell:
            self.tables[-1][-1].append((self._cell[0], self._text, self._cell[1]))
            self._cell = None
        elif tag == "p" and self._in_caption:
            self.captions.append(self._text)
            self._in_caption = False

    def handle_data(self, data: str) -> None:
        self._text += data


def _parse(html_text: str) -> _Cells:
    p = _Cells()
    p.feed(html_text)
    return p


def _tables_md() -> str:
    frame = pd.DataFrame(
        {"en-xx": ["**44.38**", "15.93"], "xx-en | rev": ["47.91", None]},
        index=pd.Index(["Aggregation-A", "X2S-M"], name="Model"),
    )
    table = to_markdown(
        frame,
        "Table 1: BLI, P@1 (CSLS retrieval) in %.",
        ["en-xx: averaged over 8 languages; p < 0.05 marked <b>."],
    )
    return f"# Result tables\n\nIntro with `score_all`.\n\n{table}"


def test_table_cells_alignment_and_bold() -> None:
    parsed = _parse(markdown_body(_tables_md()))
    assert len(parsed.tables) == 1
    header, first, second = parsed.tables[0]
    assert [c[1] for c in header] == ["Model", "en-xx", "xx-en | rev"]  # escaped pipe kept
    assert all(c[0] == "th" for c in header)
    assert [c[1] for c in first] == ["Aggregation-A", "44.38", "47.91"]
    assert [c[1] for c in second] == ["X2S-M", "15.93", "–"]  # missing cell as the paper
    # First column left, numbers right (the Markdown separator's colons).
    assert "text-align" not in (first[0][2].get("style") or "")
    assert "text-align:right" in (first[1][2].get("style") or "")
    assert "<strong>44.38</strong>" in markdown_body(_tables_md())


def test_caption_marked_and_footnote_not() -> None:
    body = markdown_body(_tables_md())
    parsed = _parse(body)
    assert parsed.captions == ["Table 1: BLI, P@1 (CSLS retrieval) in %."]
    # The intro paragraph (not followed by a table) and the footnote are plain paragraphs.
    assert "<p>Intro with <code>score_all</code>.</p>" in body
    assert '<p class="caption">en-xx' not in body


def test_raw_html_is_text_not_markup() -> None:
    body = markdown_body(_tables_md())
    assert "p &lt; 0.05 marked &lt;b&gt;." in body
    assert "<b>" not in body


def test_page_is_standalone() -> None:
    page = markdown_to_html(_tables_md(), title="Result <tables>", source="tables.md")
    assert page.startswith("<!DOCTYPE html>")
    assert "<title>Result &lt;tables&gt;</title>" in page
    assert '<meta charset="utf-8">' in page
    assert "<style>" in page and "border-collapse" in page
    # Nothing fetched from elsewhere, no scripts: it shows the same inside the report.
    for needle in ("<script", "<link", "http://", "https://", "src="):
        assert needle not in page
    assert "<code>tables.md</code>" in page
    assert page.count('<div class="table-wrap">') == 1


def test_page_title() -> None:
    assert page_title("intro\n\n# Zero-shot evaluation ##\n\n## sub", "x") == "Zero-shot evaluation"
    assert page_title("no heading here", "tables") == "tables"


def test_write_html(tmp_path: Path) -> None:
    md = tmp_path / "tables.md"
    md.write_text(_tables_md(), encoding="utf-8")
    out = tmp_path / "sub" / "tables.html"
    write_html(md, out)
    page = out.read_text(encoding="utf-8")
    assert "<title>Result tables</title>" in page
    assert len(_parse(page).tables) == 1
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no temp left


@pytest.mark.parametrize("content", [None, "", "  \n"])
def test_write_html_missing_or_empty(tmp_path: Path, content: str | None) -> None:
    md = tmp_path / "zeroshot.md"
    if content is not None:
        md.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=r"zeroshot\.md"):
        write_html(md, tmp_path / "zeroshot.html")
    assert not (tmp_path / "zeroshot.html").exists()
