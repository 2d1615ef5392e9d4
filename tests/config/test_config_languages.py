"""Languages outside the paper's 40 in a configuration (issue 27): accepted with a declared
or default segmenter, refused with the key, the language and the fix otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlalign.config import load, segment_tool, validate
from xlalign.config.validate import gold_dictionary_sources
from xlalign.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _cfg(**extra: object) -> dict:
    cfg = {
        "name": "t",
        "languages": ["en", "uk", "sr_Latn"],
        "seeds": [1],
        "dictionaries": {"sources": ["freedict", "cldr"]},
    }
    cfg.update(extra)
    return cfg


def test_the_e2e_config_is_valid() -> None:
    cfg = load(ROOT / "tests" / "e2e" / "new-language.yaml")
    assert cfg["languages"] == ["en", "pl"] and segment_tool(cfg, "pl") == "icu"
    assert gold_dictionary_sources(cfg, "pl") == ["freedict"]


def test_icu_is_the_default_and_tools_can_be_declared() -> None:
    cfg = validate(_cfg())
    assert segment_tool(cfg, "uk") == segment_tool(cfg, "sr_Latn") == "icu"
    assert segment_tool(cfg, "en") == "udpipe"  # Appendix B's, unchanged
    # spacy-udpipe has a Ukrainian model (not one for sr_Latn: see the refusals below).
    cfg = validate(_cfg(segment={"tools": {"uk": "udpipe", "sr_Latn": "whitespace"}}))
    assert segment_tool(cfg, "uk") == "udpipe" and segment_tool(cfg, "sr_Latn") == "whitespace"


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        ({"languages": ["en", "ukr"]},
         "languages[1]: 'ukr' is not the canonical spelling; write 'uk'"),
        ({"languages": ["en", "sr-Latn"]}, "write 'sr_Latn'"),
        ({"languages": ["en", "Ukrainian"]}, "did you mean 'uk'?"),
        ({"segment": {"tools": {"uk": "icu+fugashi"}}},
         "segment.tools.uk: 'icu+fugashi' segments only 'ja'"),
        ({"segment": {"tools": {"uk": "spacy"}}}, "segment.tools.uk"),
        ({"languages": ["en", "haw"], "segment": {"tools": {"haw": "udpipe"}}},
         "segment.tools.haw: 'udpipe' needs a model, and spacy-udpipe has no UD 2.5 model "
         "for 'haw'"),
        ({"languages": ["en", "uk"], "dictionaries": {"sources": ["freedict"]},
          "align": {"empty_dictionary": "error"}},
         "languages: 'uk' has no dictionary with English"),
    ],
)  # fmt: skip
def test_refused_with_key_and_fix(patch: dict, expected: str) -> None:
    with pytest.raises(ConfigError) as exc:
        validate(_cfg(**patch), origin="my.yaml")
    assert str(exc.value).startswith("my.yaml: ") and expected in str(exc.value)


def test_dictionary_sources_per_language() -> None:
    cfg = validate(_cfg(languages=["en", "uk", "pl", "tl"]))
    assert gold_dictionary_sources(cfg, "pl") == ["freedict", "cldr"]
    assert gold_dictionary_sources(cfg, "uk") == ["cldr"]  # no FreeDict eng-ukr in Debian
    assert gold_dictionary_sources(cfg, "tl") == ["cldr"]  # Babel's fil locale
    # Without a dictionary: left unmapped, no BLI result (align.empty_dictionary's default).
    validate(_cfg(languages=["en", "uk"], dictionaries={"sources": ["freedict"]}))


def test_udhr_retrieval_of_a_language_outside_the_table() -> None:
    sets = {"udhr": {"languages": ["uk", "sr_Latn"]}}
    validate(_cfg(zeroshot={"retrieval": {"sets": sets}}))
    with pytest.raises(
        ConfigError, match=r"retrieval.sets.udhr.languages\[1\]: 'udhr' has no data for 'kw'"
    ):
        validate(
            _cfg(
                languages=["en", "uk", "kw"],
                zeroshot={"retrieval": {"sets": {"udhr": {"languages": ["uk", "kw"]}}}},
            )
        )
