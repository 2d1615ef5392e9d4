"""Dictionary splits: disjoint source words, reverse directions, leakage policy, given
test sets used as given, files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.dictionaries.split import (
    SplitSizes,
    check_disjoint,
    drop_seen_sources,
    invert,
    read_pairs,
    split_dictionary,
    write_pairs,
)


def _pool(n: int = 200) -> list[tuple[str, str]]:
    pairs = [(f"e{i}", f"x{i}") for i in range(n)]
    pairs += [(f"e{i}", f"y{i}") for i in range(0, n, 3)]  # several translations
    pairs += [(f"e{i}", f"x{i + 1}") for i in range(0, n - 1, 10)]  # shared targets
    return pairs


def _outputs(out: Path) -> dict[str, Path]:
    parts = ("train", "valid", "test", "reverse_valid", "reverse_test")
    return {p: out / f"{p}.txt" for p in parts}


def test_parts_have_disjoint_source_words_and_cover_the_pool() -> None:
    pool = _pool()
    split = split_dictionary(pool, sizes=SplitSizes(0.25, 1500, 0.1, 500), seed=3)
    train, valid, test = (
        {s for s, _ in split.train},
        {s for s, _ in split.valid},
        {s for s, _ in split.test},
    )
    assert not (train & valid) and not (train & test) and not (valid & test)
    assert len(test) == 50 and len(valid) == 20 and len(train) == 130
    # Every pair of the pool lands in exactly one part, all translations together.
    assert sorted(split.train + split.valid + split.test) == sorted(set(pool))
    for part in (split.train, split.valid, split.test):
        words = {s for s, _ in part}
        assert {p for p in pool if p[0] in words} == set(part)


def test_split_is_deterministic_by_seed() -> None:
    a = split_dictionary(_pool(), seed=1)
    b = split_dictionary(_pool(), seed=1)
    c = split_dictionary(_pool(), seed=2)
    assert a.test == b.test and a.train == b.train
    assert a.test != c.test


def test_reverse_parts_drop_targets_seen_in_training() -> None:
    split = split_dictionary(_pool(), seed=0)
    trained_targets = {t for _, t in split.train}
    assert split.reverse_test and all(s not in trained_targets for s, _ in split.reverse_test)
    # The reverse test is the inverted test minus exactly those leaked words.
    expected = [(t, s) for s, t in split.test if t not in trained_targets]
    assert sorted(split.reverse_test) == sorted(set(expected))
    leaked = {t for _, t in split.test} & trained_targets
    assert split.stats["overlap_dropped_source_words"]["reverse_test"] == len(leaked) > 0


def test_overlap_error_policy() -> None:
    with pytest.raises(InputError, match="also occur in the training dictionary"):
        split_dictionary(_pool(), seed=0, overlap="error")
    with pytest.raises(ConfigError):
        drop_seen_sources([("a", "b")], {"a"}, what="x", policy="ignore")


def test_vocabulary_restriction_and_max_rank() -> None:
    pool = [("the", "der"), ("house", "haus"), ("rare", "selten"), ("cat", "katze")]
    src_vocab = ["the", "house", "cat", "rare"]  # frequency order
    split = split_dictionary(
        pool,
        src_vocab=src_vocab,
        tgt_vocab={"der", "haus", "selten"},
        max_rank=3,
        sizes=SplitSizes(0.0, 10, 0.0, 10),
    )
    assert split.train == [("house", "haus"), ("the", "der")]
    assert split.stats["pool_dropped"] == {"source_oov": 1, "target_oov": 1}


def test_given_test_files_are_kept_and_removed_from_the_pool() -> None:
    pool = _pool(60)
    given = [("e1", "x1"), ("e2", "x2"), ("zz", "unseen")]
    split = split_dictionary(pool, test=given, sizes=SplitSizes(0.25, 100, 0.1, 100))
    assert split.test == sorted(given)
    assert not {"e1", "e2"} & {s for s, _ in split.train + split.valid}
    assert split.stats["given"]["test"] is True


def test_given_reverse_test_is_used_as_given_and_its_overlap_counted() -> None:
    # MUSE's design: en-xx.0-5000 and the test files are disjoint by English source word,
    # but an xx-en.5000-6500 query may be a target of the training pairs ("haus" here).
    pool = [("house", "haus"), ("home", "haus"), ("cat", "katze"), ("dog", "hund")]
    pool += [(f"e{i}", f"x{i}") for i in range(30)]
    test = [("tree", "baum"), ("dog", "hund")]
    reverse_test = [("haus", "house"), ("haus", "building"), ("baum", "tree"), ("rot", "red")]
    split = split_dictionary(
        pool,
        test=test,
        reverse_test=reverse_test,
        sizes=SplitSizes(0.0, 10, 0.1, 10),
        seed=0,
        overlap="error",  # the policy is for the parts made here, not for given files
        name="en-de",
    )
    assert ("house", "haus") in split.train
    assert split.reverse_test == sorted(reverse_test)  # nothing removed
    assert split.test == sorted(test)
    assert ("dog", "hund") not in split.train  # a given test word leaves the pool
    overlap = split.stats["training_overlap"]
    assert overlap["reverse_test"] == {
        "direction": "de-en",
        "given": True,
        "source_words": 1,  # "haus"
        "pairs": 1,  # (haus, house) is the training pair (house, haus) reversed
        "action": "kept (given)",
    }
    assert overlap["test"]["direction"] == "en-de" and overlap["test"]["source_words"] == 0
    assert split.stats["overlap_dropped_source_words"]["reverse_test"] == 0
    assert split.stats["reverse_test"] == {"pairs": 4, "source_words": 3}


def test_parts_made_here_follow_the_policy_and_are_counted_the_same_way() -> None:
    split = split_dictionary(_pool(), seed=0, name="en-xx")
    overlap = split.stats["training_overlap"]["reverse_test"]
    dropped = split.stats["overlap_dropped_source_words"]["reverse_test"]
    assert overlap["given"] is False and overlap["action"] == "dropped"
    assert overlap["direction"] == "xx-en" and overlap["source_words"] == dropped > 0
    assert split.stats["training_overlap"]["test"]["action"] == "none"


def test_build_split_keeps_given_muse_files(tmp_path: Path) -> None:
    from xlalign.corpus.vocab import Vocab, write_vocab
    from xlalign.dictionaries.split import build_split

    pool = [(f"e{i}", f"x{i}") for i in range(40)]
    (tmp_path / "en-xx.0-5000.txt").write_text("".join(f"{s} {t}\n" for s, t in pool))
    (tmp_path / "en-xx.5000-6500.txt").write_text("t1 y1\nt2 y2\n")
    # Used as given: oov is in no vocabulary, "other" is no pool word.
    (tmp_path / "xx-en.5000-6500.txt").write_text("x3 e3\nx7 other\ny1 t1\noov t9\n")
    write_vocab(Vocab([s for s, _ in pool], [9] * 40, True), tmp_path / "en.tsv")
    write_vocab(Vocab([t for _, t in pool], [9] * 40, True), tmp_path / "xx.tsv")
    outs = _outputs(tmp_path / "out")
    stats = build_split(
        language="xx",
        hub="en",
        pool=[tmp_path / "en-xx.0-5000.txt"],
        test=tmp_path / "en-xx.5000-6500.txt",
        reverse_test=tmp_path / "xx-en.5000-6500.txt",
        hub_vocab=tmp_path / "en.tsv",
        vocab=tmp_path / "xx.tsv",
        outputs=outs,
        stats_path=tmp_path / "out" / "split.json",
        options={"seed": 0, "overlap": "drop"},
    )
    given = read_pairs(tmp_path / "xx-en.5000-6500.txt")
    assert read_pairs(outs["reverse_test"]) == sorted(given)
    assert read_pairs(outs["test"]) == [("t1", "y1"), ("t2", "y2")]
    train = read_pairs(outs["train"])
    assert {("e3", "x3"), ("e7", "x7")} <= set(train)  # with seed 0
    on_disk = json.loads((tmp_path / "out" / "split.json").read_text())
    assert on_disk["training_overlap"] == stats["training_overlap"]
    rev = on_disk["training_overlap"]["reverse_test"]
    # x3, x7 are training targets; only (x3, e3) is a training pair reversed.
    assert (rev["source_words"], rev["pairs"], rev["action"]) == (2, 1, "kept (given)")


def test_tiny_dictionary_keeps_training_words() -> None:
    split = split_dictionary([("a", "b"), ("c", "d"), ("e", "f")], seed=0)
    assert split.train, "a split must leave something to train on"
    assert len(split.test) + len(split.valid) + len(split.train) == 3


def test_fractions_are_checked() -> None:
    with pytest.raises(ConfigError, match="< 1"):
        SplitSizes(test_fraction=0.6, valid_fraction=0.5)


def test_files_round_trip_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "d.txt"
    assert write_pairs([("b", "y"), ("a", "x"), ("a", "x")], path) == 2
    assert path.read_text() == "a x\nb y\n"
    assert read_pairs(path) == [("a", "x"), ("b", "y")]
    write_pairs([], tmp_path / "empty.txt")
    assert read_pairs(tmp_path / "empty.txt") == []
    (tmp_path / "bad.txt").write_text("a x\nb y z\n")
    with pytest.raises(InputError, match=r"bad.txt: line 2"):
        read_pairs(tmp_path / "bad.txt")
    assert invert([("a", "x"), ("b", "x")]) == [("x", "a"), ("x", "b")]
    with pytest.raises(InputError, match="disjoint"):
        check_disjoint([("a", "x")], [("a", "y")], what="given")


def test_build_split_writes_every_part(tmp_path: Path) -> None:
    from xlalign.corpus.vocab import Vocab, write_vocab
    from xlalign.dictionaries.split import build_split

    pool = _pool(80)
    (tmp_path / "en-xx.txt").write_text("".join(f"{s} {t}\n" for s, t in pool))
    write_vocab(
        Vocab([f"e{i}" for i in range(80)], [100 - i for i in range(80)], True), tmp_path / "en.tsv"
    )
    tv = sorted({t for _, t in pool})
    write_vocab(Vocab(tv, [5] * len(tv), True), tmp_path / "xx.tsv")
    outs = _outputs(tmp_path / "out")
    stats = build_split(
        language="xx",
        hub="en",
        pool=[tmp_path / "en-xx.txt"],
        hub_vocab=tmp_path / "en.tsv",
        vocab=tmp_path / "xx.tsv",
        outputs=outs,
        stats_path=tmp_path / "out" / "split.json",
        options={"seed": 4},
    )
    on_disk = json.loads((tmp_path / "out" / "split.json").read_text())
    assert on_disk["test"]["pairs"] == stats["test"]["pairs"] == len(read_pairs(outs["test"])) > 0
    assert on_disk["pool_pairs_in_vocabulary"] == len(set(pool))
    assert {s for s, _ in read_pairs(outs["reverse_test"])} <= {
        t for _, t in read_pairs(outs["test"])
    }
