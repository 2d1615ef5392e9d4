"""A space's .npy and .vocab.txt committed as one (manifest), and the property: any vocab
and matrix bytes either read back through the writer or are refused with the file named."""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pytest
from fuzzing import fuzz, quick
from hypothesis import given
from hypothesis import strategies as st
from reader_inputs import check_error, inputs, mutated

from xlalign.core.errors import InputError
from xlalign.core.formats.space import manifest_path, npy_paths, read_npy, write_npy

VALID_VOCAB = [b"the\nkatze\n\xe7\x8c\xab\n", b"new\xc2\xa0york\nx\n", b"a\n"]


def _npy(rows: int, dim: int = 2) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.arange(rows * dim, dtype=np.float32).reshape(rows, dim))
    return buf.getvalue()


VALID_NPY = [_npy(1), _npy(2), _npy(3), _npy(3, 1)]


def test_a_crash_between_the_two_files_is_refused(tmp_path: Path) -> None:
    stem = tmp_path / "en"
    write_npy(["a", "b"], np.ones((2, 2)), stem)
    old_npy = npy_paths(stem)[0].read_bytes()
    write_npy(["c", "d"], np.zeros((2, 2)), stem)  # same shape, new words and vectors
    npy_paths(stem)[0].write_bytes(old_npy)  # as if killed before the matrix's rename
    with pytest.raises(InputError, match=r"en\.npy: not the file\(s\) committed in .*en\.manifest"):
        read_npy(stem)


def test_the_manifest_is_written_before_either_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stem = tmp_path / "en"
    write_npy(["a", "b"], np.ones((2, 2)), stem)
    real = os.replace
    calls: list[str] = []

    def replace(src: str, dst: str) -> None:
        calls.append(Path(dst).name)
        if Path(dst).suffix == ".npy":
            raise OSError("killed")  # the first rename of the pair fails
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="killed"):
        write_npy(["c", "d"], np.zeros((2, 2)), stem)
    monkeypatch.setattr(os, "replace", real)
    assert calls[-1] == "en.npy" and "en.manifest.json" in calls
    with pytest.raises(InputError, match="not the file"):
        read_npy(stem)  # old pair, new manifest: refused, not misread
    write_npy(["c", "d"], np.zeros((2, 2)), stem)  # a re-run commits the pair
    assert read_npy(stem)[0] == ["c", "d"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "en.manifest.json",
        "en.npy",
        "en.vocab.txt",
    ]


def test_a_bad_manifest_is_named(tmp_path: Path) -> None:
    stem = tmp_path / "en"
    write_npy(["a"], np.ones((1, 2)), stem)
    manifest_path(stem).write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match=r"en\.manifest\.json: not a readable space manifest"):
        read_npy(stem)


def _property(tmp_path: Path, vocab: bytes, npy: bytes, with_manifest: bool) -> None:
    stem = tmp_path / "s"
    n, v = npy_paths(stem)
    if with_manifest:  # a committed pair whose files were then replaced by these bytes
        write_npy(["a"], np.ones((1, 2)), stem)
    v.write_bytes(vocab)
    n.write_bytes(npy)
    try:
        words, mat = read_npy(stem)
    except InputError as exc:
        check_error(
            exc,
            n,
            v,
            manifest_path(stem),
            file_level=("not a readable", "does not match", "not the file", "float32", "differs"),
        )
        return
    out = tmp_path / "o"
    if not words:
        return
    write_npy(words, mat, out)
    again, back = read_npy(out)
    assert again == words
    np.testing.assert_array_equal(back, mat)


_NPY = st.one_of(st.sampled_from(VALID_NPY), mutated(VALID_NPY), st.binary(max_size=200))


@quick
@given(vocab=inputs(VALID_VOCAB), npy=_NPY, with_manifest=st.booleans())
def test_space_round_trips_or_names_the_file(tmp_path: Path, vocab, npy, with_manifest) -> None:
    _property(tmp_path, vocab, npy, with_manifest)


@pytest.mark.fuzz
@fuzz
@given(vocab=inputs(VALID_VOCAB), npy=_NPY, with_manifest=st.booleans())
def test_space_fuzz(tmp_path: Path, vocab, npy, with_manifest) -> None:
    _property(tmp_path, vocab, npy, with_manifest)
