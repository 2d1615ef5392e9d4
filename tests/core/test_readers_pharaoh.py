"""Pharaoh links: bad tokens refused with the line, and the property: any bytes either read
to link sets that round-trip through the writer or are refused naming the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzzing import fuzz, quick
from hypothesis import given
from reader_inputs import check_error, inputs

from xlalign.core.errors import InputError
from xlalign.core.formats.pharaoh import format_pharaoh, read_pharaoh, write_pharaoh
from xlalign.wordalign.aer import detect_format, read_gold

VALID = [b"0-0 1-2 2-1\n\n3-3\n", b"0-1 0-1\n10-20 2-2\n", b""]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"0-0 -1-2\n", r"line 1: bad link '-1-2'"),
        (b"\n0-0 1.5-2\n", r"line 2: bad link '1.5-2'"),
        (b"0?1\n", r"line 1: bad link '0\?1'"),
        (b"0-" + b"9" * 5000 + b"\n", r"line 1: bad link '0-999"),  # not a ValueError of int()
        (b"\xd9\xa1-0\n", r"line 1: bad link"),  # Arabic-Indic digit one
    ],
)
def test_bad_links_name_the_line(tmp_path: Path, line: bytes, message: str) -> None:
    p = tmp_path / "a.txt"
    p.write_bytes(line)
    with pytest.raises(InputError, match=message):
        list(read_pharaoh(p))


def test_writer_refuses_negative_links() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        format_pharaoh([(0, -1)])


def _property(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "a.txt"
    p.write_bytes(data)
    try:
        sents = list(read_pharaoh(p))
    except InputError as exc:
        check_error(exc, p)
        return
    q = tmp_path / "o.txt"
    assert write_pharaoh(sents, q) == len(sents)
    assert list(read_pharaoh(q)) == sents


@quick
@given(data=inputs(VALID))
def test_pharaoh_round_trips_or_names_the_line(tmp_path: Path, data: bytes) -> None:
    _property(tmp_path, data)


@pytest.mark.fuzz
@fuzz
@given(data=inputs(VALID))
def test_pharaoh_fuzz(tmp_path: Path, data: bytes) -> None:
    _property(tmp_path, data)


# ------------------------------------------------------------- gold links (i-j, i?j)

VALID_GOLD = [b"0-0 1?2 2-1\n\n3?3\n", b"0-1 0?1\n", b"1 1 1 S\n1 2 3 P\n2 1 1\n"]


def _gold_property(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "gold.txt"
    p.write_bytes(data)
    try:
        gold = read_gold(p)
    except InputError as exc:
        check_error(exc, p)
        return
    for sure, possible in gold.values():
        assert sure <= possible
    if detect_format(p) == "naacl":
        return  # no NAACL writer; parsed and consistent is the property
    q = tmp_path / "o.txt"
    with q.open("w", encoding="utf-8") as fh:
        for k in range(max(gold, default=-1) + 1):
            sure, possible = gold.get(k, (set(), set()))
            toks = [f"{i}-{j}" for i, j in sorted(sure)]
            toks += [f"{i}?{j}" for i, j in sorted(possible - sure)]
            fh.write(" ".join(toks) + "\n")
    again = read_gold(q, "pharaoh")
    assert {k: v for k, v in again.items() if v != (set(), set())} == {
        k: v for k, v in gold.items() if v != (set(), set())
    }


@quick
@given(data=inputs(VALID_GOLD))
def test_gold_round_trips_or_names_the_line(tmp_path: Path, data: bytes) -> None:
    _gold_property(tmp_path, data)


@pytest.mark.fuzz
@fuzz
@given(data=inputs(VALID_GOLD))
def test_gold_fuzz(tmp_path: Path, data: bytes) -> None:
    _gold_property(tmp_path, data)
