"""SemEval-2017 Task 2 data/gold files and the other similarity files: strict scores,
file:line errors, and the round-trip property."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzzing import fuzz, quick
from hypothesis import given
from hypothesis import strategies as st
from reader_inputs import check_error, inputs

from xlalign.core.errors import InputError
from xlalign.evaluation.wordsim import (
    read_semeval_files,
    read_similarity_file,
    write_semeval_files,
)

VALID_DATA = [b"gem\tjewel\nold man\tyoung\ncar\tauto\n", b"\xef\xbb\xbfa\tb\r\nc\td\r\n\r\n"]
VALID_GOLD = [b"3.94\n0\n4\n", b"2.5\r\n1e-1\r\n"]
VALID_SIM = [
    b"word1\tword2\tPOS\tSimLex999\tconc\nold\tnew\tA\t1.58\t2.72\nsmart\tclever\tA\t9.2\t1.8\n",
    b"# comment\nsun sunlight 50\ncar automobile 48\n",
    b"Word 1,Word 2,Human (mean)\nlove,sex,6.77\ntiger,cat,7.35\n",
]


def _files(tmp_path: Path, data: bytes, gold: bytes) -> tuple[Path, Path]:
    d, g = tmp_path / "en.test.data.txt", tmp_path / "en.test.gold.txt"
    d.write_bytes(data)
    g.write_bytes(gold)
    return d, g


def test_semeval_files_read_as_the_zip_does(tmp_path: Path) -> None:
    d, g = _files(tmp_path, VALID_DATA[0], VALID_GOLD[0])
    ds = read_semeval_files(d, g, "en")
    assert ds.pairs == [("gem", "jewel", 3.94), ("old_man", "young", 0.0), ("car", "auto", 4.0)]
    assert ds.scale == (0.0, 4.0) and ds.languages == ("en",)


@pytest.mark.parametrize(
    ("data", "gold", "message"),
    [
        (b"a\tb\nc\td\n", b"1\n", r"gold\.txt has 1 scores.*gold\.txt ends before line 2"),
        (b"a\tb\n", b"1\n2\n", r"data\.txt ends before line 2"),
        (b"a\tb\nc\td\n", b"1\n4.5\n", r"gold\.txt: line 2: score 4\.5 outside the rating scale"),
        (b"a\tb\n", b"-0.5\n", r"gold\.txt: line 1: score -0\.5 outside"),
        (b"a\tb\n", b"1_0\n", r"gold\.txt: line 1: expected a number"),
        (b"a\tb\n", "٣\n".encode(), r"gold\.txt: line 1: expected a number"),
        (b"a\tb\n", b"nan\n", r"gold\.txt: line 1: expected a finite score"),
        (b"a\tb\n", b"1e999\n", r"gold\.txt: line 1: expected a finite score"),
        (b"a\tb\n\nc\td\n", b"1\n2\n3\n", r"data\.txt: line 2: expected 'word1<TAB>word2'"),
        (b"a b\n", b"1\n", r"data\.txt: line 1: expected 'word1<TAB>word2'"),
        (b"a\t \n", b"1\n", r"data\.txt: line 1: expected 'word1<TAB>word2'"),
        (b"a\tb\nc\xff\td\n", b"1\n2\n", r"data\.txt: line 2: invalid UTF-8"),
        (b"", b"", r"data\.txt: no word pairs"),
    ],
)
def test_bad_semeval_files_name_file_and_line(
    tmp_path: Path, data: bytes, gold: bytes, message: str
) -> None:
    d, g = _files(tmp_path, data, gold)
    with pytest.raises(InputError, match=message):
        read_semeval_files(d, g, "en")


def test_similarity_scores_are_strict_decimals(tmp_path: Path) -> None:
    p = tmp_path / "rg.txt"
    p.write_text("a b 1\nc d 1_0\n")
    with pytest.raises(InputError, match=r"rg\.txt: line 2: expected a number"):
        read_similarity_file(p)


# ------------------------------------------------------------------------------ property


def _semeval_property(tmp_path: Path, data: bytes, gold: bytes) -> None:
    d, g = _files(tmp_path, data, gold)
    try:
        ds = read_semeval_files(d, g, "en")
    except InputError as exc:
        check_error(exc, d, g, file_level=("no word pairs", "ends before line"))
        return
    d2, g2 = tmp_path / "out.data.txt", tmp_path / "out.gold.txt"
    write_semeval_files(ds.pairs, d2, g2)
    assert read_semeval_files(d2, g2, "en").pairs == ds.pairs


def _similarity_property(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "sim.txt"
    p.write_bytes(data)
    try:
        ds = read_similarity_file(p)
    except InputError as exc:
        check_error(exc, p, file_level=("no word pairs",))
        return
    q = tmp_path / "out.txt"
    q.write_text("".join(f"{a}\t{b}\t{s!r}\n" for a, b, s in ds.pairs), encoding="utf-8")
    assert read_similarity_file(q).pairs == ds.pairs


_SEMEVAL = st.tuples(inputs(VALID_DATA), inputs(VALID_GOLD))


@quick
@given(files=_SEMEVAL)
def test_semeval_reader_round_trips_or_names_the_line(tmp_path: Path, files) -> None:
    _semeval_property(tmp_path, *files)


@pytest.mark.fuzz
@fuzz
@given(files=_SEMEVAL)
def test_semeval_reader_fuzz(tmp_path: Path, files) -> None:
    _semeval_property(tmp_path, *files)


@quick
@given(data=inputs(VALID_SIM))
def test_similarity_reader_round_trips_or_names_the_line(tmp_path: Path, data: bytes) -> None:
    _similarity_property(tmp_path, data)


@pytest.mark.fuzz
@fuzz
@given(data=inputs(VALID_SIM))
def test_similarity_reader_fuzz(tmp_path: Path, data: bytes) -> None:
    _similarity_property(tmp_path, data)
