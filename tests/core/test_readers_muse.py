"""MUSE dictionaries: a header line refused, and the property: any bytes either read to
pairs that round-trip through the writer or are refused naming the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzzing import fuzz, quick
from hypothesis import given
from hypothesis import strategies as st
from reader_inputs import check_error, inputs

from xlalign.core.errors import InputError
from xlalign.core.formats.muse import read_pairs, write_pairs
from xlalign.evaluation.bli import read_dictionary

VALID = [
    b"the der\nthe die\ncat Katze\n\nCat Katze\n",
    b"a\tb\r\nc  d\n",
    "猫 cat\nкошка cat\n".encode(),
]


@pytest.mark.parametrize("header", ["source target", "src\ttgt", "SRC TRG"])
def test_a_header_line_is_refused_not_counted_as_a_query(tmp_path: Path, header: str) -> None:
    p = tmp_path / "en-de.txt"
    p.write_text(f"{header}\nthe der\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"en-de\.txt: line 1: .* looks like a header"):
        read_dictionary(p)


def test_fields_and_blank_lines(tmp_path: Path) -> None:
    p = tmp_path / "d.txt"
    p.write_text("\nthe der\n  \nthe der\nThe Der\n", encoding="utf-8")
    assert read_pairs(p) == [("the", "der"), ("The", "Der")]
    assert read_pairs(p, lowercase=True) == [("the", "der")]
    assert read_dictionary(p, lowercase=True) == {"the": ["der"]}
    p.write_text("the der\nthe\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 2: expected 'source target' \(2 fields\), got 1"):
        read_pairs(p)
    with pytest.raises(ValueError, match="whitespace"):
        write_pairs([("a b", "c")], tmp_path / "o.txt")


def _property(tmp_path: Path, data: bytes, lowercase: bool) -> None:
    p = tmp_path / "d.txt"
    p.write_bytes(data)
    try:
        pairs = read_pairs(p, lowercase=lowercase)
    except InputError as exc:
        check_error(exc, p)
        return
    assert len(set(pairs)) == len(pairs)
    q = tmp_path / "o.txt"
    write_pairs(pairs, q)
    assert read_pairs(q) == sorted(pairs)


@quick
@given(data=inputs(VALID), lowercase=st.booleans())
def test_muse_round_trips_or_names_the_line(tmp_path: Path, data: bytes, lowercase) -> None:
    _property(tmp_path, data, lowercase)


@pytest.mark.fuzz
@fuzz
@given(data=inputs(VALID), lowercase=st.booleans())
def test_muse_fuzz(tmp_path: Path, data: bytes, lowercase) -> None:
    _property(tmp_path, data, lowercase)
