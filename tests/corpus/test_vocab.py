"""Vocabulary: counting, thresholds, deterministic ids, lowercasing, TSV round trip."""

from __future__ import annotations

import lzma
from pathlib import Path

import numpy as np
import pytest

from xlalign.core.errors import InputError
from xlalign.corpus.vocab import Vocab, build_vocab, read_vocab, tokens_of, write_vocab

CORPUS = [
    "The cat sat on the mat .",
    "the dog  sat .",  # a double space must not make an empty token
    "A cat and a dog .",
    "THE END",
]


def _corpus(tmp_path: Path, lines: list[str] = CORPUS, name: str = "c.txt") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_tokens_of_splits_on_single_spaces() -> None:
    assert tokens_of("a  b c ") == ["a", "b", "c"]
    assert tokens_of("") == []
    assert tokens_of("x\u00a0y z") == ["x\u00a0y", "z"]  # only ASCII space separates


def test_counts_lowercased_and_ordered(tmp_path: Path) -> None:
    v = build_vocab(_corpus(tmp_path), min_count=1, max_size=None, language="en")
    # the: The, the, the, THE = 4; '.' = 3; cat, sat, a, dog = 2 (ties by word); rest 1
    assert v.words[:6] == ["the", ".", "a", "cat", "dog", "sat"]
    assert v.counts[:6].tolist() == [4, 3, 2, 2, 2, 2]
    assert v.words[6:] == sorted(v.words[6:])
    assert set(v.counts[6:].tolist()) == {1}
    assert v.lowercase and v.counts.dtype == np.int64
    assert len(v) == len(v.words) == len(v.index)
    assert v.index["cat"] == 3
    assert v.lookup("CAT") == 3 and v.lookup("Cat") == 3
    assert v.lookup("zebra") is None
    assert v.total == sum(len(tokens_of(line)) for line in CORPUS)


def test_case_kept_when_not_lowercasing(tmp_path: Path) -> None:
    v = build_vocab(_corpus(tmp_path), min_count=1, max_size=None, lowercase=False)
    assert v.index["the"] != v.index["The"]
    assert v.counts[v.index["the"]] == 2
    assert v.lookup("THE") is not None and v.lookup("tHe") is None
    assert not v.lowercase


def test_min_count_and_max_size(tmp_path: Path) -> None:
    path = _corpus(tmp_path)
    v = build_vocab(path, min_count=2, max_size=None)
    assert v.words == ["the", ".", "a", "cat", "dog", "sat"]
    capped = build_vocab(path, min_count=2, max_size=4)
    assert capped.words == ["the", ".", "a", "cat"]  # the cap cuts ties by word order
    assert capped.counts.tolist() == [4, 3, 2, 2]


def test_ids_do_not_depend_on_line_order(tmp_path: Path) -> None:
    a = build_vocab(_corpus(tmp_path, CORPUS, "a.txt"), min_count=1, max_size=None)
    b = build_vocab(_corpus(tmp_path, CORPUS[::-1], "b.txt"), min_count=1, max_size=None)
    assert a.words == b.words and a.counts.tolist() == b.counts.tolist()
    assert a.fingerprint() == b.fingerprint()


def test_compressed_corpus(tmp_path: Path) -> None:
    path = tmp_path / "c.txt.xz"
    path.write_bytes(lzma.compress(("\n".join(CORPUS) + "\n").encode()))
    assert build_vocab(path, min_count=2, max_size=None).words[0] == "the"


def test_empty_vocabulary_names_file_language_threshold(tmp_path: Path) -> None:
    path = _corpus(tmp_path)
    with pytest.raises(InputError) as err:
        build_vocab(path, min_count=10, max_size=None, language="de")
    msg = str(err.value)
    assert str(path) in msg and "'de'" in msg and "min_count=10" in msg
    assert "10 distinct tokens" in msg  # the . a cat dog sat on mat and end
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(InputError, match="0 distinct tokens"):
        build_vocab(empty, min_count=1, max_size=None, language="en")
    with pytest.raises(InputError, match="not found"):
        build_vocab(tmp_path / "missing.txt", min_count=1, max_size=None, language="en")


def test_fingerprint_changes_with_content() -> None:
    a = Vocab(["x", "y"], np.array([3, 1]), lowercase=True)
    assert a.fingerprint() == Vocab(["x", "y"], np.array([3, 1]), True).fingerprint()
    assert a.fingerprint() != Vocab(["x", "y"], np.array([3, 2]), True).fingerprint()
    assert a.fingerprint() != Vocab(["x", "y"], np.array([3, 1]), False).fingerprint()
    assert a.fingerprint() != Vocab(["y", "x"], np.array([3, 1]), True).fingerprint()


def test_vocab_rejects_inconsistent_fields() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        Vocab(["a", "a"], np.array([1, 1]), True)
    with pytest.raises(ValueError, match="counts"):
        Vocab(["a", "b"], np.array([1]), True)


@pytest.mark.parametrize("lowercase", [True, False])
def test_tsv_round_trip(tmp_path: Path, lowercase: bool) -> None:
    v = build_vocab(_corpus(tmp_path), min_count=1, max_size=None, lowercase=lowercase)
    out = tmp_path / "sub" / "vocab.tsv"
    write_vocab(v, out)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0] == f"# xlalign-vocab lowercase={'true' if lowercase else 'false'}"
    assert lines[1] == f"{v.words[0]}\t{v.counts[0]}"
    back = read_vocab(out)
    assert back.words == v.words
    assert back.counts.tolist() == v.counts.tolist()
    assert back.lowercase == lowercase
    assert back.index == v.index


def test_write_vocab_refuses_unwritable_words(tmp_path: Path) -> None:
    out = tmp_path / "v.tsv"
    with pytest.raises(ValueError, match="tab"):
        write_vocab(Vocab(["a\tb"], np.array([1]), True), out)
    assert not out.exists()


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("the\t3\n", "line 1"),  # no header
        ("# xlalign-vocab lowercase=maybe\n", "line 1"),
        ("# xlalign-vocab lowercase=true\nthe 3\n", "line 2"),
        ("# xlalign-vocab lowercase=true\nthe\t3\ncat\tmany\n", "line 3"),
        ("# xlalign-vocab lowercase=true\nthe\t3\ncat\t-1\n", "line 3"),
        ("# xlalign-vocab lowercase=true\nthe\t3\nthe\t2\n", "line 3"),
    ],
)
def test_read_vocab_errors_name_file_and_line(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_vocab(path)
    assert str(path) in str(err.value) and where in str(err.value)
