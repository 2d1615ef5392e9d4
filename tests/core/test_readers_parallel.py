"""The parallel corpus (corpus.tsv) and word-pairs (pairs.tsv) tables: the property that
any bytes either read to rows that round-trip through the writers or are refused naming
the file and line, and the writers refusing what would not read back."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzzing import fuzz, quick
from hypothesis import given
from reader_inputs import check_error, inputs

from xlalign.core.errors import InputError
from xlalign.core.formats.parallel import (
    format_pairs_row,
    format_parallel_row,
    iter_aligned_pairs,
    pairs_header,
    read_aligned_pairs,
    read_parallel,
    write_parallel,
)
from xlalign.core.io import atomic_open

CORPUS = b"id\tsource\ttarget\n"
PAIRS = b"pair_id\tsentence\tsource_pos\ttarget_pos\tsource\ttarget\n"
VALID_CORPUS = [
    CORPUS + b"1\tthe cat sat\tdie Katze sa\xc3\x9f\nopus:2\ta\tb c\n",
    CORPUS + "x.1\t猫 だ\tcat\n".encode(),
    CORPUS,
]
VALID_PAIRS = [
    PAIRS + b"1\t0\t0\t0\tthe\tdie\n1\t0\t1\t1\tcat\tKatze\nopus:2\t1\t0\t0\ta\tb\n",
    PAIRS,
]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (PAIRS + b"1\t0\t-1\t0\ta\tb\n", r"line 2: sentence and positions must be non-negative"),
        (PAIRS + b"1\t0\t1_0\t0\ta\tb\n", r"line 2: sentence and positions"),
        (PAIRS + b"1\t0\t0\t0\t\tb\n", r"line 2: the source word '' is empty"),
        (PAIRS + b"1\t0\t0\t0\ta b\tb\n", r"line 2: the source word 'a b' holds whitespace"),
        (PAIRS + b"1\t0\t0\t0\ta\n", r"line 2: 5 tab-separated columns; expected 6"),
        (b"pair_id\tsentence\n", r"line 1: header"),
    ],
)
def test_bad_pairs_rows_name_the_line(tmp_path: Path, data: bytes, message: str) -> None:
    p = tmp_path / "pairs.tsv"
    p.write_bytes(data)
    with pytest.raises(InputError, match=message):
        list(read_aligned_pairs(p))


def test_writers_refuse_what_would_not_read_back() -> None:
    with pytest.raises(ValueError, match="empty token"):
        format_parallel_row("1", ["a", ""], ["b"])
    with pytest.raises(ValueError, match="whitespace"):
        format_parallel_row("1", ["a\u00a0b"], ["b"])
    with pytest.raises(ValueError, match="tab"):
        format_parallel_row("1\t2", ["a"], ["b"])
    with pytest.raises(ValueError, match="whitespace"):
        format_pairs_row("1", 0, 0, 0, "a b", "c")
    with pytest.raises(ValueError, match="non-negative"):
        format_pairs_row("1", 0, -1, 0, "a", "c")


def _corpus_property(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "corpus.tsv"
    p.write_bytes(data)
    try:
        rows = list(read_parallel(p))
    except InputError as exc:
        check_error(exc, p)
        return
    assert all(pid and src and tgt and all(src) and all(tgt) for pid, src, tgt in rows)
    q = tmp_path / "o.tsv"
    assert write_parallel(q, rows) == len(rows)
    assert list(read_parallel(q)) == rows


def _pairs_property(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "pairs.tsv"
    p.write_bytes(data)
    try:
        rows = [row for _, row in iter_aligned_pairs(p)]
    except InputError as exc:
        check_error(exc, p)
        return
    q = tmp_path / "o.tsv"
    with atomic_open(q) as fh:
        fh.write(pairs_header())
        fh.writelines(format_pairs_row(*row) for row in rows)
    assert list(read_aligned_pairs(q)) == rows


@quick
@given(data=inputs(VALID_CORPUS))
def test_corpus_tsv_round_trips_or_names_the_line(tmp_path: Path, data: bytes) -> None:
    _corpus_property(tmp_path, data)


@pytest.mark.fuzz
@fuzz
@given(data=inputs(VALID_CORPUS))
def test_corpus_tsv_fuzz(tmp_path: Path, data: bytes) -> None:
    _corpus_property(tmp_path, data)


@quick
@given(data=inputs(VALID_PAIRS))
def test_pairs_tsv_round_trips_or_names_the_line(tmp_path: Path, data: bytes) -> None:
    _pairs_property(tmp_path, data)


@pytest.mark.fuzz
@fuzz
@given(data=inputs(VALID_PAIRS))
def test_pairs_tsv_fuzz(tmp_path: Path, data: bytes) -> None:
    _pairs_property(tmp_path, data)
