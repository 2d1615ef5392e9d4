"""word2vec text and binary vectors: the header checked before allocating, what a word is,
invalid UTF-8 and duplicates, and the round-trip property through the writers."""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import numpy as np
import pytest
from fuzzing import fuzz, quick
from hypothesis import given
from hypothesis import strategies as st
from reader_inputs import check_error, inputs

from xlalign.core.errors import InputError
from xlalign.core.formats.word2vec import (
    DUPLICATE_POLICIES,
    ENCODING_ERRORS,
    read_bin,
    read_vec,
    word_problem,
    write_bin,
    write_vec,
)
from xlalign.static.vectors import load_space, read_npy, write_npy


def _bin(words: list[str], rows: list[list[float]]) -> bytes:
    out = f"{len(words)} {len(rows[0]) if rows else 1}\n".encode()
    for w, r in zip(words, rows, strict=True):
        out += w.encode("utf-8", "surrogateescape") + b" " + np.array(r, "<f4").tobytes() + b"\n"
    return out


VALID_VEC = [
    b"3 2\nthe 0.1 -0.2\nkatze 1e-3 4 \n\xe7\x8c\xab 5 6\n",
    b"2 3\nnew\xc2\xa0york 1 2 3 \ndon't -1.5 0 2.25\n",
    b"1 1\na 1\n",
    b"0 4\n",
]
VALID_BIN = [
    _bin(["the", "katze", "猫"], [[0.1, -0.2], [1e-3, 4], [5, 6]]),
    _bin(["a\u00a0b", "c"], [[1, 2, 3], [4, 5, 6]]),
    b"1 2\nx " + np.array([1, 2], "<f4").tobytes(),  # no newline after the last record
]

_POLICY = st.sampled_from(ENCODING_ERRORS)
_DUPS = st.sampled_from(DUPLICATE_POLICIES)
_MAX = st.one_of(st.none(), st.integers(0, 3))


# ---------------------------------------------------------------------- regressions


def test_a_header_claiming_1e11_rows_is_refused_at_once(tmp_path: Path) -> None:
    p = tmp_path / "big.vec"
    p.write_bytes(b"100000000000 300\nthe " + b"0.1 " * 300 + b"\n")
    start = time.monotonic()
    with pytest.raises(InputError, match=r"big\.vec: line 1: the header says 100000000000 words"):
        read_vec(p)
    with pytest.raises(InputError, match=r"line 1: the header says"):
        read_vec(p, max_words=10)  # a prefix does not excuse a lying header
    b = tmp_path / "big.bin"
    b.write_bytes(b"100000000000 300\nthe " + bytes(1200))
    with pytest.raises(InputError, match=r"big\.bin: line 1: the header says 100000000000"):
        read_bin(b)
    assert time.monotonic() - start < 5  # nothing of ~100 TiB was allocated
    # compressed: no size to compare with; the matrix grows with the rows actually read
    gz = tmp_path / "big.vec.gz"
    gz.write_bytes(gzip.compress(b"100000000000 300\nthe " + b"0.1 " * 300 + b"\n"))
    with pytest.raises(InputError, match=r"line 2: the header says 100000000000 words but"):
        read_vec(gz)
    huge_dim = tmp_path / "dim.vec.gz"
    huge_dim.write_bytes(gzip.compress(b"1 1000000000\nthe 0.1 0.2\n"))
    with pytest.raises(InputError, match=r"line 2: expected a word and 1000000000 values, got 2"):
        read_vec(huge_dim)


def test_a_no_break_space_word_reads_writes_and_maps(tmp_path: Path) -> None:
    # fastText splits words on ASCII whitespace only: U+00A0 is part of a word, and what
    # the reader accepts the writers write (map used to crash at save time on it).
    p = tmp_path / "nb.vec"
    p.write_bytes("2 2\nnew\u00a0york 1 2 \nx\u3000y 3 4 \n".encode())
    words, mat = read_vec(p)
    assert words == ["new\u00a0york", "x\u3000y"]
    q = tmp_path / "out.vec"
    write_vec(words, mat, q)
    assert read_vec(q)[0] == words
    write_npy(words, mat, tmp_path / "sp")
    assert read_npy(tmp_path / "sp")[0] == words
    write_bin(words, mat, tmp_path / "o.bin")
    assert read_bin(tmp_path / "o.bin")[0] == words


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"2 2\n 1 2\nb 3 4\n", r"line 2: the word '' is empty"),
        (b"2 2\na 1 2\nb\t3 4 5\n", r"line 3: the word 'b\\t3' contains '\\t'"),
        (b"2 2\na 1 2\nb\tc 3 4\n", r"line 3: the word 'b\\tc' contains '\\t'"),
        (b"2 2\na 1 2\nb\rc 3 4\n", r"line 3: the word 'b\\rc' contains '\\r'"),
        (b"2 2\na 1 2\nb nan 4\n", r"line 3: a value is not finite"),
        (b"2 2\na 1 2\nb 1e39 4\n", r"line 3: a value is not finite"),
        (b"2 2\na 1 2\nb 0x1 4\n", r"line 3: value '0x1' is not a number"),
        (b"2 0\n", r"line 1: expected a header"),
        (b"-2 2\na 1 2\n", r"line 1: expected a header"),
        (b"2 2 2\na 1 2\n", r"line 1: expected a header"),
        (b"9" * 40 + b" 2\n", r"line 1: expected a header"),
        (b"2 2\na 1 2\na 3 4\n", r"line 3: duplicate word 'a' \(first on line 2\)"),
    ],
)
def test_bad_rows_are_refused_with_their_line(tmp_path: Path, data: bytes, message: str) -> None:
    p = tmp_path / "bad.vec"
    p.write_bytes(data)
    with pytest.raises(InputError, match=message) as err:
        read_vec(p)
    assert str(p) in str(err.value)


def test_duplicates_first_keeps_the_first_row_as_muse(tmp_path: Path) -> None:
    p = tmp_path / "d.vec"
    p.write_bytes(b"3 2\na 1 2\nb 3 4\na 5 6\n")
    report: dict = {}
    words, mat = read_vec(p, duplicates="first", report=report)
    assert words == ["a", "b"] and mat.tolist() == [[1, 2], [3, 4]]
    assert report["duplicates_dropped"] == 1


def test_invalid_utf8_in_a_fasttext_file_is_read_and_counted(tmp_path: Path) -> None:
    # fastText issue #954: cc.ko.300.vec holds a word that is not valid UTF-8
    p = tmp_path / "cc.ko.300.vec"
    p.write_bytes(b"3 2\n\xec\x9d\x98 1 0 \n\xec\x9d 0 1 \n\xea\xb2\x83 1 1 \n")
    (words, vecs), report = load_space(p)
    assert words == ["의", "\ufffd", "것"] and vecs.shape == (3, 2)
    assert report["invalid_utf8_rows"] == 1 and report["invalid_utf8_lines"] == [3]
    assert report["encoding_errors"] == "replace"
    (words, _), report = load_space(p, encoding_errors="ignore")  # MUSE
    assert words == ["의", "것"] and report["invalid_utf8_dropped"] == 1
    (words, _), _ = load_space(p, encoding_errors="surrogateescape")  # VecMap
    assert words[1] == "\udcec\udc9d"
    out = tmp_path / "out.vec"
    write_vec(words, np.eye(3, 2, dtype=np.float32), out)
    assert out.read_bytes().splitlines()[2].startswith(b"\xec\x9d ")  # the bytes as read
    with pytest.raises(InputError, match=r"cc\.ko\.300\.vec: line 3: the word is not valid UTF-8"):
        load_space(p, encoding_errors="strict")


def test_word_problem_matches_fasttext() -> None:
    assert word_problem("a\u00a0b") is None and word_problem("\u2028") is None
    for bad in ("", "a b", "a\tb", "a\nb", "a\x0bb", "a\x0cb", "a\rb", "a\x00b"):
        assert word_problem(bad) is not None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"2 2\na " + bytes(8) + b"\n" + b"b" * 12 + b" " + bytes(5), r"record 2: truncated"),
        (b"1 2\na " + np.array([np.nan, 1], "<f4").tobytes(), r"record 1: a value is not finite"),
        (b"1 1\na " + bytes(4) + b"\nextra", r"record 2: data after the 1 records"),
        (b"2 1\na " + bytes(4) + b"\na " + bytes(4), r"record 2: duplicate word 'a'"),
    ],
)
def test_binary_errors_name_the_record(tmp_path: Path, data: bytes, message: str) -> None:
    p = tmp_path / "bad.bin"
    p.write_bytes(data + bytes(16) if b"extra" in data else data)
    with pytest.raises(InputError, match=message):
        read_bin(p, duplicates="error", encoding_errors="replace")


# ------------------------------------------------------------------------ property


def _round_trip(tmp_path: Path, data: bytes, binary: bool, errors: str, dups: str, n) -> None:
    p = tmp_path / ("in.bin" if binary else "in.vec")
    p.write_bytes(data)
    read, write = (read_bin, write_bin) if binary else (read_vec, write_vec)
    try:
        words, mat = read(p, encoding_errors=errors, duplicates=dups, max_words=n)
    except InputError as exc:
        check_error(exc, p, file_level=("record ",))
        return
    assert mat.dtype == np.float32 and mat.shape[0] == len(words) and np.isfinite(mat).all()
    assert n is None or len(words) <= n
    q = tmp_path / ("out.bin" if binary else "out.vec")
    if mat.shape[1] == 0 or not words:
        return  # nothing to write (a 0-row file)
    write(words, mat, q)
    again, back = read(q, encoding_errors=errors, duplicates="error")
    assert again == words
    if binary:
        np.testing.assert_array_equal(back, mat)
    else:
        np.testing.assert_allclose(back, mat, rtol=1e-5, atol=1e-30)
        r = tmp_path / "again.vec"
        write(again, back, r)
        assert r.read_bytes() == q.read_bytes()  # 6 digits: stable after one trip


@quick
@given(data=inputs(VALID_VEC), errors=_POLICY, dups=_DUPS, n=_MAX)
def test_vec_round_trips_or_names_the_line(tmp_path: Path, data, errors, dups, n) -> None:
    _round_trip(tmp_path, data, False, errors, dups, n)


@pytest.mark.fuzz
@fuzz
@given(data=inputs(VALID_VEC), errors=_POLICY, dups=_DUPS, n=_MAX)
def test_vec_fuzz(tmp_path: Path, data, errors, dups, n) -> None:
    _round_trip(tmp_path, data, False, errors, dups, n)


@quick
@given(data=inputs(VALID_BIN), errors=_POLICY, dups=_DUPS, n=_MAX)
def test_bin_round_trips_or_names_the_record(tmp_path: Path, data, errors, dups, n) -> None:
    _round_trip(tmp_path, data, True, errors, dups, n)


@pytest.mark.fuzz
@fuzz
@given(data=inputs(VALID_BIN), errors=_POLICY, dups=_DUPS, n=_MAX)
def test_bin_fuzz(tmp_path: Path, data, errors, dups, n) -> None:
    _round_trip(tmp_path, data, True, errors, dups, n)
