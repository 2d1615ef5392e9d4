"""Corpus sources (paragraph text, unit TSV): bounded lines, file:line errors, and the
round-trip property through :func:`write_paragraphs` / :func:`write_unit_tsv`."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzzing import fuzz, quick
from hypothesis import given
from reader_inputs import check_error, inputs

from xlalign.core.errors import InputError
from xlalign.corpus.sample import write_paragraphs
from xlalign.corpus.sources import (
    Paragraph,
    iter_paragraph_text,
    iter_unit_tsv,
    normalise,
    write_unit_tsv,
)

HEADER = b"id\tsplit\tdoc\tpara\ttext\n"
VALID_TEXT = [b"a1 x\na2\n\n\nb1\n\nc1 \xc3\xa9\n", b"Title\npara\n\nT2\np2\n"]
VALID_TSV = [
    HEADER + b"1\ttrain\t1\t1.1\tIn the beginning.\n1.2\ttrain\t1\t1.1\tAnd.\n"
    b"2\theldout\t2\t2.1\tHeld.\n3\ttrain\t3\t3.1\tThe end.\n",
    HEADER + b"x\ttrain\td\tp\t\n",
]


def test_huge_line_is_refused_with_its_number_not_read_whole(tmp_path: Path) -> None:
    p = tmp_path / "big.txt"
    with p.open("wb") as fh:
        fh.write(b"short\n")
        fh.write(b"x" * (8 << 20))  # one 8 MiB line, no newline
    with pytest.raises(InputError, match=r"big\.txt \(language 'en'\): line 2 is longer than"):
        list(iter_paragraph_text(p, language="en", max_line_bytes=1 << 20))
    ok = tmp_path / "ok.txt"
    ok.write_bytes(b"x" * 100 + b"\n")  # exactly at the bound (the newline not counted)
    assert len(list(iter_paragraph_text(ok, language="en", max_line_bytes=100))) == 1
    t = tmp_path / "u.tsv"
    t.write_bytes(HEADER + b"1\ttrain\t1\t1\t" + b"y" * 500 + b"\n")
    with pytest.raises(InputError, match=r"u\.tsv.*line 2 is longer"):
        list(iter_unit_tsv(t, language="en", max_line_bytes=200))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", r"no text; expected a non-empty corpus"),
        (b"a\n\xff\n", r"invalid UTF-8 at line 2"),
    ],
)
def test_bad_paragraph_text(tmp_path: Path, data: bytes, message: str) -> None:
    p = tmp_path / "c.txt"
    p.write_bytes(data)
    with pytest.raises(InputError, match=message):
        list(iter_paragraph_text(p, language="en"))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", r"empty file; expected a unit TSV"),
        (HEADER + b"1\tdev\t1\t1\tx\n", r"line 2: split 'dev'; expected one of"),
        (HEADER + b"1\ttrain\t\t1\tx\n", r"line 2: empty 'doc' field"),
        (HEADER + b"1\ttrain\t1\t1\n", r"line 2: expected 5 tab-separated columns"),
    ],
)
def test_bad_unit_tsv(tmp_path: Path, data: bytes, message: str) -> None:
    p = tmp_path / "u.tsv"
    p.write_bytes(data)
    with pytest.raises(InputError, match=message):
        list(iter_unit_tsv(p, language="en"))


def test_normalise_is_idempotent_around_control_characters() -> None:
    once = normalise("e\x00\u0301 x")
    assert once == "é x" and normalise(once) == once


# ------------------------------------------------------------------------------ property


def _text_property(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "c.txt"
    p.write_bytes(data)
    try:
        pars = list(iter_paragraph_text(p, language="en"))
        titled = list(iter_paragraph_text(p, language="en", title_lines=True))
    except InputError as exc:
        check_error(exc, p, file_level=("no text",))
        return
    assert {t.text for t in titled} <= {q.text for q in pars}
    q = tmp_path / "out.txt"
    write_paragraphs(pars, q)
    assert list(iter_paragraph_text(q, language="en")) == pars


def _tsv_property(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "u.tsv"
    p.write_bytes(data)
    try:
        pars = list(iter_unit_tsv(p, language="en"))
    except InputError as exc:
        check_error(exc, p, file_level=("empty file",))
        return
    q = tmp_path / "out.tsv"
    write_unit_tsv(pars, q)
    again = list(iter_unit_tsv(q, language="en"))
    assert again == pars
    assert all(isinstance(x, Paragraph) and x.text for x in again)


@quick
@given(data=inputs(VALID_TEXT))
def test_paragraph_text_round_trips_or_names_the_line(tmp_path: Path, data: bytes) -> None:
    _text_property(tmp_path, data)


@pytest.mark.fuzz
@fuzz
@given(data=inputs(VALID_TEXT))
def test_paragraph_text_fuzz(tmp_path: Path, data: bytes) -> None:
    _text_property(tmp_path, data)


@quick
@given(data=inputs(VALID_TSV))
def test_unit_tsv_round_trips_or_names_the_line(tmp_path: Path, data: bytes) -> None:
    _tsv_property(tmp_path, data)


@pytest.mark.fuzz
@fuzz
@given(data=inputs(VALID_TSV))
def test_unit_tsv_fuzz(tmp_path: Path, data: bytes) -> None:
    _tsv_property(tmp_path, data)
