"""004's vocabulary matching on a toy pair of vocabularies, worked out by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.metapretrain.vocab_match import (
    match_vocabularies,
    normalise,
    read_dictionaries,
)

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _vocab(pieces: list[str]) -> dict[str, int]:
    return {p: i for i, p in enumerate(pieces)}


MONO = _vocab(
    [*SPECIALS, "the", "The", "cafe", "##s", "##ing", "house", "dog", "ing", "resume",
     "Resume", "water", "hound"]
)  # fmt: skip
CROSS = _vocab(
    [*SPECIALS, "the", "##s", "Café", "##ING", "THE", "Résumé", "Haus", "hund", "wasser",
     "##haus", "xyz", "##the", "ing", "[unk]"]
)  # fmt: skip
DICTS = {"de": {"haus": ["house"], "hund": ["Hound", "dog"], "wasser": ["Water"]},
         "nl": {"hund": ["water"]}}  # fmt: skip


def test_normalise() -> None:
    assert normalise("##Été") == "ete"
    assert normalise("\u2581Straße") == "straße"
    assert normalise("ﬁ") == "fi"  # NFKD folds the ligature
    assert normalise("Ñandú") == "nandu"
    assert normalise("##") == "##"  # a bare marker is a piece of its own
    assert normalise("\u2581") == ""


def test_match_rules_by_hand() -> None:
    m = match_vocabularies(CROSS, MONO, dictionaries=DICTS)
    c, mono = CROSS, MONO
    expected = {
        # specials to specials
        **{c[s]: (mono[s], "special") for s in SPECIALS},
        c["the"]: (mono["the"], "exact"),
        c["##s"]: (mono["##s"], "exact"),
        c["ing"]: (mono["ing"], "exact"),  # word-initial "ing", not "##ing"
        c["Café"]: (mono["cafe"], "normalised"),  # accent + case
        c["##ING"]: (mono["##ing"], "normalised"),  # continuation to continuation
        c["THE"]: (mono["the"], "normalised"),  # "the"(5) and "The"(6): lowest id
        c["Résumé"]: (mono["resume"], "normalised"),  # "resume"(13) before "Resume"(14)
        # Haus: not in mono, looked up lowercased in de
        c["Haus"]: (mono["house"], "dictionary"),
        # hund: translations Hound, dog (de) then water (nl); exact pass first: dog
        c["hund"]: (mono["dog"], "dictionary"),
        # wasser: Water has no exact match; normalised -> water
        c["wasser"]: (mono["water"], "dictionary"),
    }
    for cid, (mid, rule) in expected.items():
        assert (m.mapping.get(cid), m.rules[cid]) == (mid, rule), cid
    for piece in ("##haus", "xyz", "##the", "[unk]"):
        assert m.rules[c[piece]] == "fresh" and c[piece] not in m.mapping, piece
    assert m.translations == {c["Haus"]: "house", c["hund"]: "dog", c["wasser"]: "Water"}
    assert m.counts() == {
        "special": 5, "exact": 3, "normalised": 4, "dictionary": 3, "fresh": 4, "total": 19
    }  # fmt: skip
    assert m.pairs()[:6] == [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5)]


def test_without_dictionaries_the_dictionary_words_stay_fresh() -> None:
    counts = match_vocabularies(CROSS, MONO).counts()
    assert counts["dictionary"] == 0 and counts["fresh"] == 7 and counts["total"] == 19


def test_markers_across_wordpiece_and_sentencepiece() -> None:
    mono = _vocab(["<s>", "<pad>", "</s>", "<unk>", "\u2581the", "s", "\u2581house"])
    cross = _vocab([*SPECIALS, "the", "##s", "s", "house", "##house"])
    m = match_vocabularies(cross, mono)
    assert m.mapping == {cross["the"]: 4, cross["##s"]: 5, cross["house"]: 6}
    assert m.rules[cross["s"]] == "fresh"  # word-initial "s" vs continuation "s"
    assert m.rules[cross["##house"]] == "fresh"
    assert m.rules[cross["[PAD]"]] == "fresh"  # no [PAD] in the XLM-R-style vocabulary


def test_read_dictionaries(tmp_path: Path) -> None:
    (tmp_path / "de.txt").write_text("house haus\ndog hund\nhound hund\ndog hund\n")
    (tmp_path / "nl.txt").write_text("")
    got = read_dictionaries({"nl": tmp_path / "nl.txt", "de": tmp_path / "de.txt"})
    assert got == {"de": {"haus": ["house"], "hund": ["dog", "hound"]}, "nl": {}}
    (tmp_path / "bad.txt").write_text("one two three\n")
    with pytest.raises(InputError, match="line 1"):
        read_dictionaries({"de": tmp_path / "bad.txt"})
    with pytest.raises(ConfigError, match="'en'"):
        read_dictionaries({"en": tmp_path / "de.txt"})
