"""Dictionaries read off word-alignment link counts: every threshold on hand-computed
counts, the output order, the evaluation against a gold dictionary, and the file helpers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.dictionaries.split import read_pairs
from xlalign.wordalign.linkdict import (
    LinkDictOptions,
    count_links,
    dictionary_from_alignment,
    evaluate_against,
    evaluate_dictionary,
    evaluate_files,
    induce,
    write_dictionary,
)

# No threshold but the one under test.
OPEN = {"min_count": 1, "min_ratio": 0.0, "min_reverse_ratio": 0.0, "max_translations": 10}


def opts(**kw) -> LinkDictOptions:
    return LinkDictOptions(**{**OPEN, **kw})


def dropped(stats: dict) -> dict[str, int]:
    """The non-zero drop counts (``max_translations`` is recorded as 0 when nothing went)."""
    return {k: v for k, v in stats["dropped"].items() if v}


# ------------------------------------------------------------------------------ counting


def test_count_links_lowercase_merges_case_variants() -> None:
    pairs = [("Haus", "house"), ("haus", "House"), ("HAUS", "house"), ("Hund", "dog")]
    assert count_links(pairs) == {("haus", "house"): 3, ("hund", "dog"): 1}
    kept_case = count_links(pairs, lowercase=False)
    assert kept_case == {
        ("Haus", "house"): 1,
        ("haus", "House"): 1,
        ("HAUS", "house"): 1,
        ("Hund", "dog"): 1,
    }


def test_lowercase_merging_lifts_a_pair_over_min_count() -> None:
    pairs = [("Haus", "house"), ("haus", "House"), ("HAUS", "house")]
    merged, stats = induce(count_links(pairs), opts(min_count=3))
    assert merged == [("haus", "house")]
    assert dropped(stats) == {}
    split, stats = induce(count_links(pairs, lowercase=False), opts(min_count=3))
    assert split == []
    assert dropped(stats) == {"min_count": 3}
    assert stats["pairs"] == 0 and stats["links"] == 3 and stats["linked_word_pairs"] == 3


# ----------------------------------------------------------------------------- thresholds


def test_min_count() -> None:
    counts = {("a", "x"): 3, ("a", "y"): 2}
    pairs, stats = induce(counts, opts(min_count=3))
    assert pairs == [("a", "x")]
    assert dropped(stats) == {"min_count": 1}
    pairs, stats = induce(counts, opts(min_count=2))
    assert pairs == [("a", "x"), ("a", "y")]
    assert dropped(stats) == {}


def test_min_ratio_is_share_of_the_source_links_inclusive() -> None:
    # c(a) = 10: p(x|a) = 0.9, p(y|a) = 0.1
    counts = {("a", "x"): 9, ("a", "y"): 1}
    pairs, stats = induce(counts, opts(min_ratio=0.1))
    assert pairs == [("a", "x"), ("a", "y")]  # 0.1 >= 0.1
    pairs, stats = induce(counts, opts(min_ratio=0.11))
    assert pairs == [("a", "x")]
    assert dropped(stats) == {"min_ratio": 1}


def test_min_ratio_counts_links_of_dropped_pairs_in_c_s() -> None:
    # c(a) = 3 + 7 = 10 includes the punctuation link: p(x|a) = 0.3 < 0.5
    counts = {("a", "x"): 3, ("a", "."): 7}
    pairs, stats = induce(counts, opts(min_ratio=0.5))
    assert pairs == []
    assert dropped(stats) == {"min_ratio": 1, "not_letters": 1}
    pairs, _ = induce(counts, opts(min_ratio=0.3))
    assert pairs == [("a", "x")]


def test_min_reverse_ratio_is_share_of_the_target_links() -> None:
    # c(x) = 10: p(a|x) = 0.8, p(b|x) = 0.2; c(b) = 4: p(x|b) = p(y|b) = 0.5
    counts = {("a", "x"): 8, ("b", "x"): 2, ("b", "y"): 2}
    pairs, stats = induce(counts, opts(min_ratio=0.5, min_reverse_ratio=0.25))
    assert pairs == [("a", "x"), ("b", "y")]
    assert dropped(stats) == {"min_reverse_ratio": 1}
    pairs, stats = induce(counts, opts(min_ratio=0.5, min_reverse_ratio=0.2))
    assert pairs == [("a", "x"), ("b", "x"), ("b", "y")]  # b's tie broken by string
    assert dropped(stats) == {}


def test_max_translations_keeps_the_most_linked() -> None:
    counts = {("a", "z"): 3, ("a", "y"): 5, ("a", "w"): 4, ("a", "x"): 5, ("b", "v"): 1}
    pairs, stats = induce(counts, opts(max_translations=2))
    assert pairs == [("a", "x"), ("a", "y"), ("b", "v")]
    assert dropped(stats) == {"max_translations": 2}
    pairs, stats = induce(counts, opts(max_translations=1))
    assert pairs == [("a", "x"), ("b", "v")]
    assert dropped(stats) == {"max_translations": 3}


def test_max_translations_counts_only_pairs_passing_the_other_filters() -> None:
    counts = {("a", "x"): 5, ("a", "y"): 4, ("a", "z"): 1}
    pairs, stats = induce(counts, opts(min_count=2, max_translations=2))
    assert pairs == [("a", "x"), ("a", "y")]
    assert dropped(stats) == {"min_count": 1}


def test_letters_only_drops_punctuation_and_numbers() -> None:
    counts = {
        ("a", "."): 5,
        ("3", "drei"): 5,
        ("1999", "1999"): 5,
        ("a1", "x2"): 5,  # a letter each: kept
        ("über", "über"): 5,
        ("中", "zhong"): 5,
        ("-", "-"): 5,
    }
    pairs, stats = induce(counts, opts())
    assert set(pairs) == {("a1", "x2"), ("über", "über"), ("中", "zhong")}
    assert dropped(stats) == {"not_letters": 4}
    pairs, stats = induce(counts, opts(letters_only=False))
    assert set(pairs) == set(counts)
    assert dropped(stats) == {}


def test_drop_reasons_are_checked_in_order() -> None:
    # not_letters before min_count, min_count before min_ratio, min_ratio before reverse
    counts = {("a", "."): 1, ("b", "y"): 1, ("b", "z"): 99, ("c", "z"): 5, ("c", "w"): 5}
    # c(b) = 100; c(z) = 104; c(c) = 10
    pairs, stats = induce(
        counts, opts(min_count=2, min_ratio=0.4, min_reverse_ratio=0.5, max_translations=1)
    )
    # (a, .): not_letters; (b, y): min_count; (c, z): 0.5 ok, 5/104 < 0.5 reverse;
    # (b, z): 0.99, 99/104 ok; (c, w): 0.5, 5/5 ok
    assert pairs == [("b", "z"), ("c", "w")]
    assert dropped(stats) == {"min_count": 1, "min_reverse_ratio": 1, "not_letters": 1}
    assert list(stats["dropped"]) == sorted(stats["dropped"])


def test_default_options() -> None:
    counts = {("a", "x"): 30, ("a", "y"): 3, ("a", "z"): 2, ("a", "w"): 3, ("a", "v"): 3}
    # c(a) = 41: y, w, v have 3/41 < 0.1; z has 2 < 3
    pairs, stats = induce(counts)
    assert pairs == [("a", "x")]
    assert dropped(stats) == {"min_count": 1, "min_ratio": 3}
    assert stats["options"] == {
        "min_count": 3,
        "min_ratio": 0.1,
        "min_reverse_ratio": 0.0,
        "max_translations": 3,
        "lowercase": True,
        "letters_only": True,
    }


# --------------------------------------------------------------------------------- order


def test_output_order_and_stats() -> None:
    counts = {
        ("b", "x"): 5,
        ("a", "y"): 5,
        ("c", "z"): 6,
        ("c", "w"): 6,
        ("d", "u"): 3,
        ("d", "7"): 20,  # dropped, but d's total (23) still puts it first
        ("e", "q"): 3,
        ("e", "p"): 4,
    }
    # totals: d 23, c 12, e 7, a 5, b 5
    pairs, stats = induce(counts, opts())
    assert pairs == [
        ("d", "u"),
        ("c", "w"),  # c's translations tie at 6: by string
        ("c", "z"),
        ("e", "p"),  # 4 before 3
        ("e", "q"),
        ("a", "y"),  # a and b tie at 5: by string
        ("b", "x"),
    ]
    assert stats["linked_word_pairs"] == 8
    assert stats["links"] == 52
    assert stats["pairs"] == 7
    assert stats["source_words"] == 5
    assert stats["target_words"] == 7
    assert dropped(stats) == {"not_letters": 1}


def test_induce_of_nothing() -> None:
    pairs, stats = induce({})
    assert pairs == []
    assert stats["pairs"] == 0 and stats["links"] == 0 and stats["dropped"] == {}


# ---------------------------------------------------------------------------- evaluation

GOLD = [
    ("Haus", "home"),
    ("haus", "house"),
    ("HAUS", "House"),  # the same pair as the one above, lowercased
    ("hund", "dog"),
    ("maus", "mouse"),
    ("katze", "kitty"),
]
INDUCED = [
    ("haus", "house"),
    ("haus", "home"),
    ("hund", "cat"),
    ("hund", "dog"),
    ("katze", "cat"),
    ("xyz", "abc"),  # not in the gold: not judged
]


def test_evaluate_dictionary_hand_example() -> None:
    r = evaluate_dictionary(INDUCED, GOLD)
    assert r["gold_pairs"] == 5
    assert r["gold_source_words"] == 4
    assert r["induced_pairs"] == 6
    assert r["judged_pairs"] == 5
    assert r["correct_pairs"] == 3  # haus-house, haus-home, hund-dog
    assert r["pair_precision"] == pytest.approx(3 / 5)
    assert r["judged_source_words"] == 3
    assert r["p_at_1"] == pytest.approx(1 / 3)  # haus-house yes; hund-cat, katze-cat no
    assert r["gold_source_coverage"] == pytest.approx(3 / 4)


def test_p_at_1_uses_each_source_words_first_pair() -> None:
    reordered = [INDUCED[0], INDUCED[1], INDUCED[3], INDUCED[2], INDUCED[4], INDUCED[5]]
    r = evaluate_dictionary(reordered, GOLD)
    assert r["p_at_1"] == pytest.approx(2 / 3)  # hund-dog now comes first
    assert r["pair_precision"] == pytest.approx(3 / 5)  # order does not matter here


def test_evaluate_dictionary_case_sensitive() -> None:
    r = evaluate_dictionary([("haus", "home"), ("Haus", "home")], GOLD, lowercase=False)
    # gold keeps case: Haus -> {home}, haus -> {house}, HAUS -> {House}
    assert r["gold_pairs"] == 6 and r["gold_source_words"] == 6
    assert r["judged_pairs"] == 2 and r["correct_pairs"] == 1
    assert r["p_at_1"] == pytest.approx(1 / 2)


def test_evaluate_dictionary_none_when_nothing_judged() -> None:
    r = evaluate_dictionary([("xyz", "abc")], GOLD)
    assert r["judged_pairs"] == 0 and r["judged_source_words"] == 0
    assert r["pair_precision"] is None
    assert r["p_at_1"] is None
    assert r["gold_source_coverage"] == 0.0
    empty = evaluate_dictionary(INDUCED, [])
    assert empty["pair_precision"] is None and empty["p_at_1"] is None
    assert empty["gold_source_coverage"] is None
    assert empty["gold_pairs"] == 0 and empty["induced_pairs"] == 6


# ---------------------------------------------------------------------------------- files


def write_muse(path: Path, pairs: list[tuple[str, str]]) -> Path:
    path.write_text("".join(f"{s} {t}\n" for s, t in pairs), encoding="utf-8")
    return path


def test_write_dictionary_keeps_order(tmp_path: Path) -> None:
    pairs = [("b", "y"), ("a", "z"), ("a", "x")]
    out = tmp_path / "d.txt"
    assert write_dictionary(pairs, out) == 3
    assert out.read_text(encoding="utf-8") == "b y\na z\na x\n"
    assert read_pairs(out) == pairs
    assert write_dictionary([], out) == 0
    assert out.read_text(encoding="utf-8") == ""


PAIRS_HEADER = "pair_id\tsentence\tsource_pos\ttarget_pos\tsource\ttarget\n"


def write_pairs_table(path: Path, rows: list[tuple[str, str]]) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        fh.write(PAIRS_HEADER)
        for k, (s, t) in enumerate(rows):
            fh.write(f"p{k // 2}\t{k // 2}\t{k % 2}\t{k % 2}\t{s}\t{t}\n")
    return path


def test_dictionary_from_alignment(tmp_path: Path) -> None:
    rows = (
        [("Haus", "house")] * 2
        + [("haus", "House")] * 2
        + [("haus", "home")] * 3
        + [("haus", "building")] * 2  # below min_count 3
        + [("Hund", "dog")] * 3
        + [("Hund", ",")] * 3  # punctuation
        + [("katze", "cat")] * 4
    )
    table = write_pairs_table(tmp_path / "pairs.tsv", rows)
    out, stats_path = tmp_path / "dict.txt", tmp_path / "dict.json"
    stats = dictionary_from_alignment(table, out, stats_path, LinkDictOptions())
    # totals: haus 9, hund 6, katze 4
    assert out.read_text(encoding="utf-8") == "haus house\nhaus home\nhund dog\nkatze cat\n"
    assert stats["pairs"] == 4 and stats["links"] == len(rows)
    assert dropped(stats) == {"min_count": 1, "not_letters": 1}
    assert stats["input"] == str(table) and stats["output"] == str(out)
    assert json.loads(stats_path.read_text(encoding="utf-8")) == stats

    keep_case = dictionary_from_alignment(
        table, out, stats_path, LinkDictOptions(min_count=2, lowercase=False)
    )
    # totals: haus 7, Hund 6, katze 4, Haus 2; haus's tie at 2: "House" < "building"
    assert read_pairs(out) == [
        ("haus", "home"),
        ("haus", "House"),
        ("haus", "building"),
        ("Hund", "dog"),
        ("katze", "cat"),
        ("Haus", "house"),
    ]
    assert dropped(keep_case) == {"not_letters": 1}


def test_dictionary_from_alignment_bad_header(tmp_path: Path) -> None:
    table = tmp_path / "pairs.tsv"
    table.write_text("source\ttarget\nhaus\thouse\n", encoding="utf-8")
    with pytest.raises(InputError, match="header"):
        dictionary_from_alignment(table, tmp_path / "d.txt", tmp_path / "d.json")
    assert not (tmp_path / "d.txt").exists()


def test_evaluate_against_writes_one_entry_per_reference(tmp_path: Path) -> None:
    induced = write_muse(tmp_path / "induced.txt", INDUCED)
    full = write_muse(tmp_path / "full.txt", GOLD)
    other = write_muse(tmp_path / "other.txt", [("katze", "cat"), ("vogel", "bird")])
    out = tmp_path / "eval.json"
    record = evaluate_against(induced, {"full": full, "other": other}, out)
    assert json.loads(out.read_text(encoding="utf-8")) == record
    assert record["induced"] == str(induced) and record["induced_pairs"] == 6
    assert set(record["references"]) == {"full", "other"}
    f = record["references"]["full"]
    assert f["gold"] == str(full)
    assert f["pair_precision"] == pytest.approx(3 / 5)
    assert f["p_at_1"] == pytest.approx(1 / 3)
    o = record["references"]["other"]
    assert o["gold"] == str(other)
    assert o["judged_pairs"] == 1 and o["pair_precision"] == 1.0 and o["p_at_1"] == 1.0
    assert o["gold_source_coverage"] == pytest.approx(1 / 2)

    files = evaluate_files(induced, full)
    assert files["induced"] == str(induced) and files["gold"] == str(full)
    assert files["correct_pairs"] == 3


# ------------------------------------------------------------------------------- options


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("min_count", 0),
        ("min_ratio", -0.1),
        ("min_ratio", 1.5),
        ("min_reverse_ratio", -0.01),
        ("min_reverse_ratio", 2),
        ("max_translations", 0),
    ],
)
def test_bad_options(field: str, value: float) -> None:
    with pytest.raises(ConfigError, match=field):
        LinkDictOptions(**{field: value})


def test_option_bounds_and_from_config() -> None:
    LinkDictOptions(min_count=1, min_ratio=0.0, min_reverse_ratio=1.0, max_translations=1)
    LinkDictOptions(min_ratio=1.0, min_reverse_ratio=0.0)
    opt = LinkDictOptions.from_config({"min_count": 5, "unknown": 1, "letters_only": False})
    assert opt.min_count == 5 and opt.letters_only is False and opt.min_ratio == 0.1
    with pytest.raises(ConfigError, match="min_count"):
        LinkDictOptions.from_config({"min_count": 0})


def test_evaluation_lowercases_both_sides() -> None:
    from xlalign.wordalign.linkdict import evaluate_dictionary as ev

    scores = ev([("Haus", "House")], [("haus", "house")])
    assert scores["judged_pairs"] == 1 and scores["p_at_1"] == 1.0
    assert ev([("Haus", "House")], [("haus", "house")], lowercase=False)["judged_pairs"] == 0
