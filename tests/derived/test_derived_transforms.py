"""Transliteration, inversion, syntax re-ordering and tag moves on hand-made sentences."""

from __future__ import annotations

import numpy as np
import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.derived.parse import Parse
from xlalign.derived.transforms import (
    SyntaxParams,
    apply,
    gold_links,
    invert_order,
    is_transliterated,
    move_tags,
    parse_spec,
    repair_iob,
    syntax_order,
    transliterate,
    untransliterate,
)

# "The old man ate red apples ." with the heads spaCy gives it (checked against the real
# parser in test_derived_parse.py)
SENT = ["The", "old", "man", "ate", "red", "apples", "."]
PARSE = Parse(
    words=SENT,
    heads=[2, 2, 3, -1, 5, 3, 3],
    deps=["det", "amod", "nsubj", "ROOT", "amod", "dobj", "punct"],
    pos=["DET", "ADJ", "NOUN", "VERB", "ADJ", "NOUN", "PUNCT"],
)


# ------------------------------------------------------------------------------ transliteration


def test_transliteration_is_a_bijection_on_planes_0_and_1() -> None:
    words = ["cat", "Cat", "naïve", "café", "日本", "😀", "##s", "x\ue000", "a-b", "ﬁ"]
    images = [transliterate(w) for w in words]
    assert [untransliterate(t) for t in images] == words
    assert len(set(images)) == len(words)
    assert all(is_transliterated(t) for t in images)
    assert not any(is_transliterated(w) for w in words)
    assert [len(t) for t in images] == [len(w) for w in words]  # one character each
    assert transliterate("a") == chr(0xF0000 + ord("a"))
    assert transliterate("😀") == chr(0x100000 + ord("😀") - 0x10000)
    assert not any(c.isspace() for t in images for c in t)


def test_transliteration_errors_name_the_character() -> None:
    with pytest.raises(InputError, match=r"U\+20000"):
        transliterate("a\U00020000")
    with pytest.raises(InputError, match=r"U\+F0061.*private-use"):
        transliterate(transliterate("a"))
    with pytest.raises(InputError, match=r"U\+0061.*not a transliterated"):
        untransliterate("a")


# ------------------------------------------------------------------------------ specs


def test_parse_spec() -> None:
    assert parse_spec("trans+inv") == ("trans", "inv")
    assert parse_spec("syn") == ("syn",)
    assert parse_spec("inv+syn+trans") == ("inv", "syn", "trans")
    with pytest.raises(ConfigError, match="'invert'"):
        parse_spec("trans+invert")
    with pytest.raises(ConfigError, match=r"derived\.transformations.*''"):
        parse_spec("trans+")
    with pytest.raises(ConfigError, match="'inv' given more than once"):
        parse_spec("inv+trans+inv")
    with pytest.raises(ConfigError, match=r"my\.key"):
        parse_spec("", key="my.key")


def test_syntax_params() -> None:
    assert SyntaxParams.from_mapping({"object_verb": 0.5}) == SyntaxParams(0.5, 1.0)
    with pytest.raises(ConfigError, match=r"derived\.syntax\.adjective_noun"):
        SyntaxParams.from_mapping({"adjective_noun": 1.0})
    with pytest.raises(ConfigError, match="object_verb"):
        SyntaxParams(object_verb=1.5)


# ------------------------------------------------------------------------------ inversion


def test_inversion_reverses_each_period_delimited_sentence() -> None:
    words = "I am Sam . I am".split()
    d = apply("inv", words)
    assert d.words == "Sam am I . am I".split()
    assert d.order == [2, 1, 0, 3, 5, 4]
    assert apply("inv", "Welcome to ACL".split()).words == "ACL to Welcome".split()
    assert invert_order(words, d.order) == list(range(6))  # an involution
    assert apply("inv", []).words == []


def test_inversion_moves_pos_tags_with_their_words() -> None:
    d = apply("inv", ["Dogs", "bark", "."], tags=["NOUN", "VERB", "PUNCT"])
    assert d.words == ["bark", "Dogs", "."]
    assert d.tags == ["VERB", "NOUN", "PUNCT"]


def test_inversion_repairs_ner_spans() -> None:
    words = ["John", "Smith", "lives", "in", "New", "York", "."]
    tags = ["B-PER", "I-PER", "O", "O", "B-LOC", "I-LOC", "O"]
    d = apply("inv", words, tags=tags)
    assert d.words == ["York", "New", "in", "lives", "Smith", "John", "."]
    # the words' own tags would be I-LOC B-LOC ... I-PER B-PER: each span is re-started
    assert d.tags == ["B-LOC", "I-LOC", "O", "O", "B-PER", "I-PER", "O"]
    # two adjacent entities of one type stay two
    assert apply("inv", ["Ann", "Bob"], tags=["B-PER", "B-PER"]).tags == ["B-PER", "B-PER"]


def test_repair_iob() -> None:
    tags = ["I-PER", "I-PER", "O", "I-LOC", "B-LOC", "I-LOC", "I-ORG", "O"]
    assert repair_iob(tags) == ["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC", "B-ORG", "O"]
    assert repair_iob(["NOUN", "VERB"]) == ["NOUN", "VERB"]


def test_move_tags_splits_an_entity_torn_apart() -> None:
    # order puts a non-entity word between the two words of one entity
    assert move_tags(["B-ORG", "I-ORG", "O"], [0, 2, 1]) == ["B-ORG", "O", "B-ORG"]


# ------------------------------------------------------------------------------ syntax


def test_syntax_svo_to_sov_and_an_to_na() -> None:
    d = apply("syn", SENT, parse=PARSE)
    assert d.words == ["The", "man", "old", "apples", "red", "ate", "."]
    assert d.order == [0, 2, 1, 5, 4, 3, 6]
    assert d.moved == {"objects": 1, "adjectives": 2}


def test_syntax_moves_whole_subtrees_and_keeps_other_dependents() -> None:
    # She gave the boy a big red book . (spaCy's parse; "boy" is a dative, not an object)
    words = ["She", "gave", "the", "boy", "a", "big", "red", "book", "."]
    parse = Parse(
        words,
        [1, -1, 3, 1, 7, 7, 7, 1, 1],
        ["nsubj", "ROOT", "det", "dative", "det", "amod", "amod", "dobj", "punct"],
        ["PRON", "VERB", "DET", "NOUN", "DET", "ADJ", "ADJ", "NOUN", "PUNCT"],
    )
    d = apply("syn", words, parse=parse)
    assert d.words == ["She", "a", "book", "big", "red", "gave", "the", "boy", "."]
    only_ov = apply("syn", words, parse=parse, syntax=SyntaxParams(1.0, 0.0))
    assert only_ov.words == ["She", "a", "big", "red", "book", "gave", "the", "boy", "."]
    assert apply("syn", words, parse=parse, syntax=SyntaxParams(0.0, 0.0)).order == list(range(9))


def test_syntax_draws_are_seeded() -> None:
    params = SyntaxParams(0.5, 0.5)
    runs = [
        [apply("syn", SENT, parse=PARSE, rng=rng, syntax=params).order for _ in range(20)]
        for rng in (np.random.default_rng(3), np.random.default_rng(3))
    ]
    assert runs[0] == runs[1]
    assert len({tuple(o) for o in runs[0]}) > 1  # the moves do vary
    for order in runs[0]:
        assert sorted(order) == list(range(7))
        assert order[-1] == 6  # punctuation last
    with pytest.raises(ValueError, match="random generator"):
        apply("syn", SENT, parse=PARSE, syntax=params)


def test_syntax_of_a_forest_and_errors() -> None:
    # two sentences in one parse (two roots): each re-ordered in place
    words = SENT + SENT
    parse = Parse(
        words,
        PARSE.heads + [h + 7 if h >= 0 else -1 for h in PARSE.heads],
        PARSE.deps * 2,
        PARSE.pos * 2,
    )
    order = syntax_order(parse, list(range(14)))
    assert order == [0, 2, 1, 5, 4, 3, 6] + [7 + i for i in [0, 2, 1, 5, 4, 3, 6]]
    cyclic = Parse(["a", "b"], [1, 0], ["dep", "dep"], ["X", "X"])
    with pytest.raises(InputError, match="cycle"):
        syntax_order(cyclic, [0, 1])
    with pytest.raises(ValueError, match="needs the sentence's parse"):
        apply("syn", SENT)
    with pytest.raises(InputError, match="does not match"):
        apply("syn", [*SENT[:-1], "!"], parse=PARSE)
    with pytest.raises(InputError, match="head 9"):
        Parse(["a"], [9], ["dep"], ["X"])


# ------------------------------------------------------------------------------ compositions


def test_compositions_apply_right_to_left() -> None:
    d = apply("trans+inv", SENT, parse=PARSE)
    assert d.order == [5, 4, 3, 2, 1, 0, 6]
    assert [untransliterate(w) for w in d.words] == [SENT[i] for i in d.order]
    # T_inv after T_syn: the SOV/NA sentence inverted
    inv_syn = apply("inv+syn", SENT, parse=PARSE)
    assert inv_syn.words == ["ate", "red", "apples", "old", "man", "The", "."]
    # T_syn after T_inv: objects that now precede their head are not moved, adjectives
    # that now follow theirs neither
    syn_inv = apply("syn+inv", SENT, parse=PARSE)
    assert syn_inv.words == ["apples", "red", "ate", "man", "old", "The", "."]
    assert apply("trans", SENT).order == list(range(7))
    assert apply(("trans", "syn"), SENT, parse=PARSE).order == [0, 2, 1, 5, 4, 3, 6]


def test_gold_links() -> None:
    d = apply("trans+inv", ["a", "b", "c", "."])
    assert d.links() == gold_links([2, 1, 0, 3]) == [(0, 2), (1, 1), (2, 0), (3, 3)]
    with pytest.raises(InputError, match="2 tags for 3 words"):
        apply("inv", ["a", "b", "c"], tags=["O", "O"])
