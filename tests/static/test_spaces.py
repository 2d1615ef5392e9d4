"""Saving static spaces: words without a learned vector are left out and listed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from xlalign.core.errors import InputError
from xlalign.static.spaces import save_space
from xlalign.static.vectors import read_npy, read_vec


def test_save_space_leaves_out_unlearned_words(tmp_path: Path) -> None:
    words = ["a", "b", "c", "d"]
    vecs = np.arange(8, dtype=np.float32).reshape(4, 2) + 1
    stats = save_space(
        words,
        vecs,
        np.array([True, False, True, True]),
        vec_path=tmp_path / "x.vec",
        npy_stem=tmp_path / "x",
        stats_path=tmp_path / "x.json",
        stats={"epochs": 3},
        language="de",
        reason="never a target",
    )
    got_words, got = read_vec(tmp_path / "x.vec")
    assert got_words == ["a", "c", "d"]
    np.testing.assert_allclose(got, vecs[[0, 2, 3]], rtol=1e-6)
    npy_words, npy = read_npy(tmp_path / "x")
    assert npy_words == got_words and np.array_equal(npy, vecs[[0, 2, 3]])
    on_disk = json.loads((tmp_path / "x.json").read_text())
    assert on_disk == stats
    assert stats["words"] == 3 and stats["words_left_out"] == 1
    assert stats["words_left_out_examples"] == ["b"] and stats["epochs"] == 3


def test_save_space_with_nothing_learned_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"'ja'.*no word got a vector"):
        save_space(
            ["a"],
            np.ones((1, 2), np.float32),
            np.array([False]),
            vec_path=tmp_path / "x.vec",
            npy_stem=tmp_path / "x",
            stats_path=tmp_path / "x.json",
            stats={},
            language="ja",
            reason="r",
        )
    assert not list(tmp_path.iterdir())
