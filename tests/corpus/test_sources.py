"""Corpus source readers: paragraph text, Wikipedia titles, unit TSVs."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlalign.core.errors import InputError
from xlalign.corpus.sources import (
    Paragraph,
    cc100_code,
    iter_paragraph_text,
    iter_sources,
    iter_unit_tsv,
    normalise,
)

TSV_HEADER = "id\tsplit\tdoc\tpara\ttext\n"


def test_normalise() -> None:
    assert normalise("  a\u00a0 b\tc\x07 ") == "a b c"
    assert normalise("Cafe\u0301") == "Café"


def test_paragraph_text_documents(tmp_path: Path) -> None:
    p = tmp_path / "c.txt"
    p.write_text("a1\na2\n\n\nb1\n\nc1\n", encoding="utf-8")
    got = list(iter_paragraph_text(p, language="en"))
    assert got == [Paragraph("a1", 0), Paragraph("a2", 0), Paragraph("b1", 1), Paragraph("c1", 2)]


def test_wikipedia_titles_skipped(tmp_path: Path) -> None:
    p = tmp_path / "w.txt"
    p.write_text("Title A\npara a1\npara a2\n\nTitle B\npara b1\n", encoding="utf-8")
    got = [par.text for par in iter_sources([("wikipedia", p)], language="en")]
    assert got == ["para a1", "para a2", "para b1"]


def test_unit_tsv_groups_paragraphs_and_skips_heldout(tmp_path: Path) -> None:
    p = tmp_path / "u.tsv"
    p.write_text(
        TSV_HEADER
        + "1.1.1\ttrain\t1\t1.1\tIn the beginning.\n"
        + "1.1.2\ttrain\t1\t1.1\tAnd the earth.\n"
        + "1.2.1\ttrain\t1\t1.2\tThus the heavens.\n"
        + "43.1.1\theldout\t43\t43.1\tHeld out verse.\n"
        + "44.1.1\ttrain\t44\t44.1\tThe former treatise.\n",
        encoding="utf-8",
    )
    got = list(iter_unit_tsv(p, language="en"))
    assert got == [
        Paragraph("In the beginning. And the earth.", 0),
        Paragraph("Thus the heavens.", 0),
        Paragraph("The former treatise.", 1),
    ]
    assert all("Held out" not in par.text for par in got)


def test_unit_tsv_bad_header_and_row(tmp_path: Path) -> None:
    p = tmp_path / "u.tsv"
    p.write_text("id\ttext\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"u\.tsv.*'de'.*header"):
        list(iter_unit_tsv(p, language="de"))
    p.write_text(TSV_HEADER + "1\ttrain\t1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 2.*5 tab-separated"):
        list(iter_unit_tsv(p, language="de"))


def test_several_sources_keep_documents_distinct(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.tsv"
    a.write_text("x\n\ny\n", encoding="utf-8")
    b.write_text(TSV_HEADER + "1\ttrain\td\t1\tz\n", encoding="utf-8")
    got = list(iter_sources([("text", a), ("libreoffice-help", b)], language="de"))
    assert [p.doc for p in got] == [0, 1, 2]


def test_cc100_codes() -> None:
    assert cc100_code("zh") == "zh-Hans"
    assert cc100_code("de") == "de"
