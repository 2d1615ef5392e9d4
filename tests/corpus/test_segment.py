"""Segmentation tools, Appendix B filters and the segment_file stage."""

from __future__ import annotations

import json
import logging
import lzma
from pathlib import Path

import pytest

from xlalign.core.errors import ConfigError, InputError, ToolError
from xlalign.corpus.segment import (
    ICUFugashiSegmenter,
    ICUJiebaSegmenter,
    ICUSegmenter,
    Segmenter,
    clean_tokens,
    filter_paragraph,
    make_segmenter,
    segment_file,
)

EN_PARAGRAPH = (
    "The committee met on Tuesday to discuss the new budget proposal. "
    "After a long debate, the members agreed to postpone the final vote until March. "
    "Short one."
)


class SplitSegmenter:
    """Sentences split at ' | ', tokens at spaces: exact control over the filters."""

    name = "split"

    def segment(self, paragraph: str) -> list[list[str]]:
        return [s.split() for s in paragraph.split(" | ") if s.split()]


def words(n: int, stem: str = "w") -> str:
    return " ".join(f"{stem}{i}" for i in range(n))


# ---------------------------------------------------------------------------- tools


def test_icu_english_sentences_and_punctuation() -> None:
    seg, info = make_segmenter("en", tool="icu")
    assert isinstance(seg, ICUSegmenter) and isinstance(seg, Segmenter)
    assert info == {"tool": "icu", "requested_tool": "icu", "fallback_reason": None}
    sentences = seg.segment(EN_PARAGRAPH)
    assert len(sentences) == 3
    assert sentences[0][:3] == ["The", "committee", "met"]
    assert sentences[0][-1] == "." and sentences[0][-2] == "proposal"
    assert "," in sentences[1]
    assert sentences[2] == ["Short", "one", "."]


def test_icu_handles_characters_outside_the_bmp() -> None:
    seg = ICUSegmenter("en")
    sentences = seg.segment("Great news 😀 for everyone here. The 𠀋 sign stays intact!")
    assert sentences == [
        ["Great", "news", "😀", "for", "everyone", "here", "."],
        ["The", "𠀋", "sign", "stays", "intact", "!"],
    ]


def test_icu_thai_words_from_dictionary() -> None:
    seg, info = make_segmenter("th")
    assert info["tool"] == "icu"
    (sentence,) = seg.segment("ภาษาไทยเป็นภาษาที่สวยงามมาก")
    assert "ภาษา" in sentence and "ไทย" in sentence
    assert "".join(sentence) == "ภาษาไทยเป็นภาษาที่สวยงามมาก"
    assert len(sentence) >= 5


def test_icu_swahili() -> None:
    seg, _ = make_segmenter("sw")
    sentences = seg.segment(
        "Watu wote wamezaliwa huru, hadhi na haki zao ni sawa. Wote wamejaliwa akili na dhamiri."
    )
    assert sentences == [
        [
            "Watu",
            "wote",
            "wamezaliwa",
            "huru",
            ",",
            "hadhi",
            "na",
            "haki",
            "zao",
            "ni",
            "sawa",
            ".",
        ],
        ["Wote", "wamejaliwa", "akili", "na", "dhamiri", "."],
    ]


def test_fugashi_japanese() -> None:
    seg, info = make_segmenter("ja")
    assert isinstance(seg, ICUFugashiSegmenter)
    assert info["tool"] == "icu+fugashi(unidic-lite)"
    sentences = seg.segment("私は学生です。　東京に住んでいます。")
    assert len(sentences) == 2
    assert {"私", "は", "学生"} <= set(sentences[0])
    assert sentences[0][-1] == "。"
    assert "東京" in sentences[1]
    assert all(tok.strip() for s in sentences for tok in s)  # U+3000 is not a token


def test_jieba_chinese(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(ICUJiebaSegmenter, "_tokenizer", None)  # load the dictionary here
    caplog.set_level(logging.DEBUG)
    seg, info = make_segmenter("zh")
    assert isinstance(seg, ICUJiebaSegmenter)
    assert info["tool"] == "icu+jieba"
    sentences = seg.segment("我爱北京天安门。今天天气很好，我们去公园散步吧！")
    assert len(sentences) == 2
    assert {"北京", "天安门"} & set(sentences[0])
    assert sentences[0][0] == "我" and sentences[0][-1] == "。"
    assert "公园" in sentences[1]
    assert not [r for r in caplog.records if r.name == "jieba"]  # jieba's logs are silenced


def test_unknown_tool_and_language() -> None:
    with pytest.raises(ConfigError, match=r"'en'.*'spacy'"):
        make_segmenter("en", tool="spacy")
    with pytest.raises(ConfigError, match="'xx'"):
        make_segmenter("xx")


def test_udpipe_without_model_and_without_fallback() -> None:
    with pytest.raises(ToolError) as err:
        make_segmenter("de")
    msg = str(err.value)
    assert "'de'" in msg and "segment.udpipe.models.de" in msg
    assert "segment.udpipe.fallback" in msg and "UDPipe model" in msg


def test_udpipe_missing_model_file_falls_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    seg, info = make_segmenter("de", udpipe_model=tmp_path / "nope.udpipe", fallback="icu")
    assert seg.name == "icu"
    assert info["requested_tool"] == "udpipe"
    assert "no UDPipe model for de" in info["fallback_reason"]
    assert "nope.udpipe" in info["fallback_reason"]
    assert any(r.levelname == "WARNING" for r in caplog.records)


# -------------------------------------------------------------------------- filters


def test_clean_tokens_replaces_inner_whitespace() -> None:
    tokens, fixed = clean_tokens(["có thể", "a\u3000\u3000b", "\u3000", " x ", "\u200b", "ok"])
    assert tokens == ["có_thể", "a_b", "x", "ok"]
    assert fixed == 2


def test_single_sentence_paragraph_dropped_even_if_long() -> None:
    kept, counts = filter_paragraph([words(30).split()])
    assert kept == []
    assert counts == {
        "sentences_in": 1,
        "dropped_single_sentence_paragraph": 1,
        "dropped_short": 0,
        "sentences_out": 0,
    }


def test_short_sentence_dropped_seven_tokens_kept() -> None:
    six, seven = words(6).split(), words(7).split()
    kept, counts = filter_paragraph([six, seven])
    assert kept == [seven]
    assert counts == {
        "sentences_in": 2,
        "dropped_single_sentence_paragraph": 0,
        "dropped_short": 1,
        "sentences_out": 1,
    }


def test_paragraph_filter_counts_sentences_before_length_filter() -> None:
    # Two sentences as segmented: the paragraph passes, though only one sentence is long.
    kept, counts = filter_paragraph([["Hi", "."], words(9).split()])
    assert len(kept) == 1 and counts["dropped_short"] == 1
    kept, counts = filter_paragraph(
        [words(3).split(), words(3).split()], min_tokens=3, min_paragraph_sentences=3
    )
    assert kept == [] and counts["dropped_single_sentence_paragraph"] == 2


# ---------------------------------------------------------------------- segment_file


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_segment_file_counts_and_format(tmp_path: Path) -> None:
    src = write_lines(
        tmp_path / "in.txt",
        [
            words(12, "title"),  # headline: one long sentence, dropped
            f"{words(7, 'a')} | {words(6, 'b')} | {words(8, 'c')}",
            "",
            f"{words(9, 'd')}\t| {words(7, 'e')}",  # a tab inside the paragraph
            "",
            "",
            f"{words(2, 'f')} | {words(3, 'g')}",
        ],
    )
    out, stats_path = tmp_path / "out.txt", tmp_path / "stats.json"
    stats = segment_file(
        src, out, stats_path, "en", SplitSegmenter(), {"tool": "split"}, progress=False
    )
    lines = out.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""
    lines = lines[:-1]
    assert lines == [words(7, "a"), words(8, "c"), words(9, "d"), words(7, "e")]
    for line in lines:
        assert line and "\t" not in line and "  " not in line and line == line.strip()
    assert json.loads(stats_path.read_text(encoding="utf-8")) == pytest.approx(stats)
    assert stats["language"] == "en" and stats["tool"] == "split"
    assert stats["paragraphs_in"] == 4 and stats["documents_in"] == 3
    assert stats["sentences_in"] == 8
    assert stats["sentences_out"] == 4
    assert stats["dropped_single_sentence_paragraph"] == 1
    assert stats["dropped_short"] == 3
    assert stats["tokens_out"] == 31
    assert stats["mean_tokens_per_sentence"] == pytest.approx(31 / 4)
    assert stats["tokens_whitespace_fixed"] == 0
    assert stats["sentences_per_s"] > 0 and stats["seconds"] >= 0
    assert stats["stopped_early"] is False


def test_segment_file_max_sentences(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "in.txt", [f"{words(7)} | {words(8)} | {words(9)}"] * 3)
    out = tmp_path / "out.txt"
    stats = segment_file(
        src, out, tmp_path / "s.json", "en", SplitSegmenter(), {}, max_sentences=4, progress=False
    )
    assert stats["sentences_out"] == 4 and stats["stopped_early"] is True
    assert len(out.read_text(encoding="utf-8").splitlines()) == 4


def test_segment_file_fixes_whitespace_in_tokens(tmp_path: Path) -> None:
    class SpacedTokens:
        name = "spaced"

        def segment(self, paragraph: str) -> list[list[str]]:
            return [["có thể", *words(7).split()], words(7).split()]

    src = write_lines(tmp_path / "in.txt", ["anything"])
    out = tmp_path / "out.txt"
    stats = segment_file(src, out, tmp_path / "s.json", "vi", SpacedTokens(), {}, progress=False)
    assert stats["tokens_whitespace_fixed"] == 1
    assert out.read_text(encoding="utf-8").splitlines()[0].startswith("có_thể w0 ")


def test_segment_file_icu_end_to_end_xz(tmp_path: Path) -> None:
    src = tmp_path / "in.txt.xz"
    with lzma.open(src, "wt", encoding="utf-8") as fh:
        fh.write(EN_PARAGRAPH + "\nA lone headline that is long enough to pass the filter.\n")
    out = tmp_path / "out.txt"
    seg, info = make_segmenter("en", tool="icu")
    stats = segment_file(src, out, tmp_path / "s.json", "en", seg, info, progress=False)
    assert out.read_text(encoding="utf-8").splitlines() == [
        "The committee met on Tuesday to discuss the new budget proposal .",
        "After a long debate , the members agreed to postpone the final vote until March .",
    ]
    assert stats["sentences_in"] == 4 and stats["dropped_short"] == 1
    assert stats["dropped_single_sentence_paragraph"] == 1


def test_segment_file_udpipe_fallback_recorded(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "in.txt", [EN_PARAGRAPH])
    seg, info = make_segmenter("tr", fallback="icu")
    stats = segment_file(
        src, tmp_path / "o.txt", tmp_path / "s.json", "tr", seg, info, progress=False
    )
    saved = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    for record in (stats, saved):
        assert record["tool"] == "icu"
        assert record["requested_tool"] == "udpipe"
        assert "no UDPipe model for tr" in record["fallback_reason"]


def assert_no_outputs(tmp_path: Path, *inputs: str) -> None:
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(inputs)


def test_invalid_utf8_names_file_and_language(tmp_path: Path) -> None:
    src = tmp_path / "bad.txt"
    src.write_bytes((EN_PARAGRAPH + "\n").encode() + b"caf\xe9 au lait\n")
    with pytest.raises(InputError, match=r"bad\.txt.*'en'.*UTF-8"):
        segment_file(
            src,
            tmp_path / "o.txt",
            tmp_path / "s.json",
            "en",
            ICUSegmenter("en"),
            {},
            progress=False,
        )
    assert_no_outputs(tmp_path, "bad.txt")


def test_truncated_xz_is_an_input_error(tmp_path: Path) -> None:
    data = lzma.compress(((EN_PARAGRAPH + "\n") * 200).encode())
    src = tmp_path / "cut.txt.xz"
    src.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"cut\.txt\.xz.*'en'.*truncated"):
        segment_file(
            src,
            tmp_path / "o.txt",
            tmp_path / "s.json",
            "en",
            ICUSegmenter("en"),
            {},
            progress=False,
        )
    assert_no_outputs(tmp_path, "cut.txt.xz")


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_input_is_an_input_error(tmp_path: Path, content: str) -> None:
    src = tmp_path / "empty.txt"
    src.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=r"empty\.txt.*'sw'.*no paragraphs"):
        segment_file(
            src,
            tmp_path / "o.txt",
            tmp_path / "s.json",
            "sw",
            ICUSegmenter("sw"),
            {},
            progress=False,
        )
    assert_no_outputs(tmp_path, "empty.txt")


def test_nothing_surviving_is_an_input_error(tmp_path: Path) -> None:
    src = write_lines(tmp_path / "heads.txt", ["Just a headline here", "Another short one."])
    with pytest.raises(InputError, match=r"heads\.txt.*'en'.*no sentence survives"):
        segment_file(
            src,
            tmp_path / "o.txt",
            tmp_path / "s.json",
            "en",
            ICUSegmenter("en"),
            {},
            progress=False,
        )
    assert_no_outputs(tmp_path, "heads.txt")


def test_languages_outside_the_table() -> None:
    # Ukrainian: ICU by default, with its own locale; Serbian in Latin script: sr_Latn.
    seg, info = make_segmenter("uk")
    assert info == {"tool": "icu", "requested_tool": "icu", "fallback_reason": None}
    assert seg.segment("Усі люди рівні. Вони мають права!") == [
        ["Усі", "люди", "рівні", "."],
        ["Вони", "мають", "права", "!"],
    ]
    seg, _ = make_segmenter("sr_Latn")
    assert seg.segment("Sva ljudska bića rađaju se slobodna.") == [
        ["Sva", "ljudska", "bića", "rađaju", "se", "slobodna", "."]
    ]
    # whitespace: ICU sentences, tokens as the text spaces them.
    seg, info = make_segmenter("am", tool="whitespace")
    assert info["tool"] == "whitespace"
    assert seg.segment("ሰዎች ሁሉ ነጻ ናቸው። 'ሁሉም' እኩል ናቸው።") == [
        ["ሰዎች", "ሁሉ", "ነጻ", "ናቸው።"],
        ["'ሁሉም'", "እኩል", "ናቸው።"],
    ]
    with pytest.raises(ConfigError, match=r"segment.tools.uk: tool 'icu\+jieba' segments only"):
        make_segmenter("uk", tool="icu+jieba")
