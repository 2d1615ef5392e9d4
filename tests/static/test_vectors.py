"""Word vectors I/O: word2vec text and the .npy + .vocab.txt binary form."""

from __future__ import annotations

import gzip
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.static.vectors import (
    check_space,
    load_space,
    npy_paths,
    read_npy,
    read_vec,
    write_npy,
    write_vec,
)

WORDS = ["the", "katze", "кошка", "猫", ",", "don't"]


def _matrix(n: int = len(WORDS), dim: int = 7, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, dim)) * 10.0 ** rng.integers(-4, 3, (n, dim))).astype(
        np.float32
    )


def test_vec_round_trip(tmp_path: Path) -> None:
    mat = _matrix()
    path = tmp_path / "sub" / "v.vec"
    write_vec(WORDS, mat, path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == f"{len(WORDS)} 7"
    assert lines[1].split(" ")[0] == "the" and len(lines[1].split(" ")) == 8
    words, back = read_vec(path)
    assert words == WORDS
    assert back.dtype == np.float32 and back.shape == mat.shape
    np.testing.assert_allclose(back, mat, rtol=1e-5, atol=0)  # 6 significant digits


def test_vec_prefix_and_compressed(tmp_path: Path) -> None:
    mat = _matrix()
    path = tmp_path / "v.vec"
    write_vec(WORDS, mat, path)
    words, back = read_vec(path, max_words=2)
    assert words == WORDS[:2] and back.shape == (2, 7)
    gz = tmp_path / "v.vec.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    words, back = read_vec(gz)
    assert words == WORDS
    np.testing.assert_allclose(back, mat, rtol=1e-5)


def test_vec_reads_trailing_space_lines(tmp_path: Path) -> None:
    # fastText's .vec files end each line with a space
    path = tmp_path / "ft.vec"
    path.write_text("2 3\na 1 2 3 \nb 4 5 6 \n", encoding="utf-8")
    words, mat = read_vec(path)
    assert words == ["a", "b"]
    assert mat.tolist() == [[1, 2, 3], [4, 5, 6]]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", r"line 1: expected a header"),
        ("3\na 1 2\n", r"line 1: expected a header"),
        ("3 2\na 1.0 2.0\nb 3.0 4.0\n", r"line 3: the header says 3 words but the file has only 2"),
        ("3 2\na 1 2\nb 3 4\n", r"line 1: the header says 3 words of dim 2, but a file of 16"),
        ("1 2\na 1 2\nb 3 4\n", r"line 3: more rows than the 1 words"),
        ("2 2\na 1 2\nb 3\n", r"line 3: expected a word and 2 values, got 1"),
        ("2 2\na 1 2\nb 3 4 5\n", r"line 3: expected a word and 2 values, got 3"),
        ("2 2\na 1 2\na 3 4\n", r"line 3: duplicate word 'a' \(first on line 2\)"),
        ("2 2\na 1 2\nb 3 x\n", r"line 3: value 'x' is not a number"),
    ],
)
def test_read_vec_errors_name_file_and_line(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bad.vec"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=expected) as err:
        read_vec(path)
    assert str(path) in str(err.value)


def test_write_vec_rejects_bad_input_and_keeps_old_file(tmp_path: Path) -> None:
    path = tmp_path / "v.vec"
    write_vec(["a"], np.ones((1, 2)), path)
    old = path.read_bytes()
    with pytest.raises(ValueError, match="shape"):
        write_vec(["a", "b"], np.ones((1, 2)), path)
    with pytest.raises(ValueError, match="whitespace"):
        write_vec(["a b"], np.ones((1, 2)), path)
    with pytest.raises(ValueError, match="empty"):
        write_vec([""], np.ones((1, 2)), path)
    with pytest.raises(ValueError, match="duplicate"):
        write_vec(["a", "a"], np.ones((2, 2)), path)
    with pytest.raises(ValueError, match="non-finite"):
        write_vec(["a"], np.array([[1.0, np.nan]]), path)
    assert path.read_bytes() == old


class _FailingWords(list[str]):
    """A word list whose second full iteration (the writing pass) fails half-way."""

    def __init__(self, words: list[str]) -> None:
        super().__init__(words)
        self.passes = 0

    def __iter__(self) -> Iterator[str]:
        self.passes += 1
        for i, w in enumerate(list.__iter__(self)):
            if self.passes > 1 and i == len(self) // 2:
                raise OSError("disk full")
            yield w


def test_write_vec_is_atomic(tmp_path: Path) -> None:
    path = tmp_path / "v.vec"
    write_vec(["old"], np.ones((1, 7)), path)
    old = path.read_bytes()
    with pytest.raises(OSError, match="disk full"):
        write_vec(_FailingWords(WORDS), _matrix(), path)
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == ["v.vec"]  # no temporary left behind


def test_npy_round_trip(tmp_path: Path) -> None:
    mat = _matrix().astype(np.float64)  # stored as float32
    stem = tmp_path / "out" / "vectors"
    write_npy(WORDS, mat, stem)
    npy, vocab = npy_paths(stem)
    assert npy.name == "vectors.npy" and vocab.name == "vectors.vocab.txt"
    assert vocab.read_text(encoding="utf-8").splitlines() == WORDS
    words, back = read_npy(stem)
    assert words == WORDS
    assert back.dtype == np.float32
    np.testing.assert_array_equal(back, mat.astype(np.float32))  # binary: no rounding
    words2, mm = read_npy(str(stem) + ".npy", mmap=True)  # a '.npy' suffix is tolerated
    assert words2 == WORDS and isinstance(mm, np.memmap)
    np.testing.assert_array_equal(np.asarray(mm), back)


def test_npy_mismatch_detected(tmp_path: Path) -> None:
    stem = tmp_path / "v"
    write_npy(WORDS, _matrix(), stem)
    _, vocab = npy_paths(stem)
    vocab.write_text("\n".join(WORDS[:-1]) + "\n", encoding="utf-8")
    with pytest.raises(
        InputError, match=r"v\.vocab\.txt: not the file\(s\) committed in .*v\.manifest"
    ):
        read_npy(stem)
    (tmp_path / "v.manifest.json").unlink()  # a pair without a manifest: shape checked only
    with pytest.raises(InputError, match="does not match the 5 words"):
        read_npy(stem)
    vocab.write_text("\n".join([*WORDS[:-1], "the"]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 6: duplicate word 'the'"):
        read_npy(stem)
    with pytest.raises(InputError, match="not found"):
        read_npy(tmp_path / "missing")


def test_write_npy_is_atomic(tmp_path: Path) -> None:
    stem = tmp_path / "v"
    write_npy(["a"], np.ones((1, 3)), stem)
    with pytest.raises(ValueError, match="non-finite"):
        write_npy(["a"], np.full((1, 3), np.inf), stem)
    words, mat = read_npy(stem)
    assert words == ["a"] and mat.tolist() == [[1.0, 1.0, 1.0]]
    assert sorted(os.listdir(tmp_path)) == ["v.manifest.json", "v.npy", "v.vocab.txt"]


def test_check_space_keeps_a_clean_space_as_is() -> None:
    mat = _matrix()
    words, vecs, report = check_space(WORDS, mat, where="en.vec")
    assert words == WORDS and vecs is mat
    assert report == {"rows": 6, "kept": 6, "zero_rows": 0, "examples": []}


def test_check_space_drops_zero_rows_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    mat = _matrix()
    mat[[1, 4]] = 0.0
    mat[5, 0] = -0.0
    mat[5, 1:] = 0.0
    with caplog.at_level(logging.WARNING, logger="xlalign.static.vectors"):
        words, vecs, report = check_space(WORDS, mat, where="de.vec")
    assert words == ["the", "кошка", "猫"]
    np.testing.assert_array_equal(vecs, mat[[0, 2, 3]])
    assert report == {"rows": 6, "kept": 3, "zero_rows": 3, "examples": ["katze", ",", "don't"]}
    assert len(caplog.records) == 1
    assert "de.vec: dropped 3 of 6 rows of zero norm" in caplog.records[0].getMessage()
    with pytest.raises(
        InputError, match=r"de\.vec: 3 of 6 rows have zero norm \(e\.g\. 'katze', row 2\)"
    ):
        check_space(WORDS, mat, where="de.vec", zero="error")
    with pytest.raises(ConfigError, match="zero: unknown policy 'keep'"):
        check_space(WORDS, mat, where="de.vec", zero="keep")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_check_space_rejects_non_finite_values(bad: float) -> None:
    mat = _matrix()
    mat[3, 2] = bad
    mat[5, 0] = bad
    with pytest.raises(
        InputError, match=r"ru\.vec: word '猫' \(row 4\) has a non-finite value.*2 of 6"
    ):
        check_space(WORDS, mat, where="ru.vec")


def test_check_space_rejects_duplicates_and_bad_shapes() -> None:
    with pytest.raises(InputError, match=r"x: duplicate word 'the' at rows 1 and 3"):
        check_space(["the", "a", "the"], np.ones((3, 2)), where="x")
    with pytest.raises(InputError, match=r"x: expected a \(2, dim\) matrix"):
        check_space(["a", "b"], np.ones((3, 2)), where="x")


# --------------------------------------------------------------------------- load_space


def test_load_space_checks_nan_zero_rows_and_header(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    p = tmp_path / "en.vec"
    p.write_text("3 2\na 1 0\nb nan 1\nc 0 1\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"en\.vec: line 3: a value is not finite"):
        load_space(p)
    p.write_text("4 2\na 1 0\nb 0 0\nc 0 1\nd 0 0\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="xlalign.static.vectors"):
        (words, vecs), report = load_space(p)
    assert words == ["a", "c"] and vecs.tolist() == [[1, 0], [0, 1]]
    assert report["rows_read"] == 4 and report["zero_rows"] == 2 and report["rows"] == 2
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "dropped 2 of 4 rows of zero norm" in warnings[0].getMessage()
    with pytest.raises(InputError, match=r"en\.vec: 2 of 4 rows have zero norm"):
        load_space(p, zero="error")
    p.write_text("3 2\na 1.0 0.0\nb 0.0 1.0\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"en\.vec: line 3: the header says 3 words"):
        load_space(p)


def test_load_space_npy(tmp_path: Path) -> None:
    write_npy(["a", "b", "c"], np.array([[1, 0], [0, 0], [0, 1]], np.float32), tmp_path / "de")
    (words, vecs), _ = load_space(tmp_path / "de.npy")
    assert words == ["a", "c"] and vecs.shape == (2, 2)


def test_load_space_prefix_and_lowercase(tmp_path: Path) -> None:
    p = tmp_path / "en.vec"
    p.write_text("4 2\nThe 1 0\nthe 0 1\nA 1 1\nb 2 1\n", encoding="utf-8")
    (words, vecs), report = load_space(p, max_words=3, lowercase=True)
    assert words == ["the", "a"] and vecs.tolist() == [[1, 0], [1, 1]]
    assert report["rows_read"] == 3 and report["case_duplicates_dropped"] == 1
