"""The public gold-set readers on small files in the real formats (awesome-align's
examples/, eflomal's WPT 2005 en-hi): sure and possible links, the declared index base,
ASCII-space tokens (U+3000 a word of its own), every link checked against its sentence."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlalign.core.errors import InputError
from xlalign.core.formats.goldsets import read_awesome, read_wpt, split_words

# awesome-align's layout: trailing spaces around '|||', 1-indexed 'i-j' sure / 'ipj' possible
AWESOME_TEXT = (
    "2 .   ||| 2 .  \n"
    "le chat dort . ||| the cat sleeps .\n"
    "『 天狗 \u3000 くらま 』 ||| tengu - kurama\n"
)
AWESOME_GOLD = "1-1 2-2\n1-1 2p1 2-2 3-3 4-4\n2-1 4-3 3p2\n"


def _write(tmp_path: Path, name: str, text: str, newline: str = "\n") -> Path:
    p = tmp_path / name
    p.write_bytes(text.replace("\n", newline).encode("utf-8"))
    return p


def test_split_words_on_ascii_spaces_only() -> None:
    assert split_words("  a  b\u3000c \u3000 d ") == ["a", "b\u3000c", "\u3000", "d"]


def test_awesome_reads_sure_and_possible_links_one_indexed(tmp_path: Path) -> None:
    text = _write(tmp_path, "xxyy.src-tgt", AWESOME_TEXT)
    gold = _write(tmp_path, "xxyy.gold", AWESOME_GOLD)
    g = read_awesome(text, gold, base=1)
    assert g.src[0] == ["2", "."] and g.tgt[0] == ["2", "."]
    # U+3000 is the third word: the later words keep their positions
    assert g.src[2] == ["『", "天狗", "\u3000", "くらま", "』"]
    assert g.gold[0] == ({(0, 0), (1, 1)}, {(0, 0), (1, 1)})
    sure, possible = g.gold[1]
    assert sure == {(0, 0), (1, 1), (2, 2), (3, 3)}
    assert possible == sure | {(1, 0)}
    assert g.gold[2] == ({(1, 0), (3, 2)}, {(1, 0), (3, 2), (2, 1)})


def test_awesome_read_with_the_wrong_base_is_an_error_naming_file_line_link(
    tmp_path: Path,
) -> None:
    text = _write(tmp_path, "xxyy.src-tgt", AWESOME_TEXT)
    gold = _write(tmp_path, "xxyy.gold", AWESOME_GOLD)
    with pytest.raises(InputError, match=r"xxyy\.gold line 1: link '2-2' .*source position 2"):
        read_awesome(text, gold, base=0)
    zero = _write(tmp_path, "zero.gold", "0-0 1-1\n1-1\n1-1\n")
    with pytest.raises(InputError, match=r"zero\.gold line 1: link '0-0'"):
        read_awesome(text, zero, base=1)


def test_awesome_refuses_bad_links_and_layouts(tmp_path: Path) -> None:
    text = _write(tmp_path, "t.src-tgt", AWESOME_TEXT)
    with pytest.raises(InputError, match=r"b\.gold line 2: bad link '1\?1'"):
        read_awesome(text, _write(tmp_path, "b.gold", "1-1\n1?1\n1-1\n"), base=1)
    with pytest.raises(InputError, match=r"3 line.*2"):
        read_awesome(text, _write(tmp_path, "short.gold", "1-1\n1-1\n"), base=1)
    with pytest.raises(InputError, match=r"one.*\|\|\|"):
        read_awesome(
            _write(tmp_path, "n.src-tgt", "a b\n"), _write(tmp_path, "n.gold", "1-1\n"), base=1
        )
    with pytest.raises(InputError, match="target side has no word"):
        read_awesome(
            _write(tmp_path, "e.src-tgt", "a |||  \n"), _write(tmp_path, "e.gold", "\n"), base=1
        )


def test_awesome_drops_only_declared_errata(tmp_path: Path) -> None:
    text = _write(tmp_path, "t.src-tgt", AWESOME_TEXT)
    gold = _write(tmp_path, "t.gold", "1-1 2-3\n1-1\n1-1\n")
    g = read_awesome(text, gold, base=1, drop_lines=[1])
    assert g.gold[0] == ({(0, 0)}, {(0, 0)})
    assert g.dropped == [(str(gold), 1, "2-3")]
    with pytest.raises(InputError, match=r"line 2: declared as an out-of-range erratum"):
        read_awesome(text, gold, base=1, drop_lines=[1, 2])


# WPT 2005 as eflomal ships en-hi: '<s snum=N>' lines (the Hindi side with CRLF and runs of
# spaces), 'snum i j' links, 1-indexed, optional S/P and confidence, 0 = NULL
WPT_SRC = "<s snum=26>The law changes . </s>\n<s snum=27>timely information</s>\n"
WPT_TGT = "<s snum=26> कानून  बदलता है ।   </s>\n<s snum=27> समय पर जानकारी  </s>\n"
WPT_LINKS = "26 1 0\n26 2 1\n26 3 2\n26 3 3 P\n26 4 4 S 0.9\n27 1 1\n27 1 2\n27 2 3\n"


def _wpt(tmp_path: Path, links: str = WPT_LINKS) -> tuple[Path, Path, Path]:
    return (
        _write(tmp_path, "test.eng", WPT_SRC),
        _write(tmp_path, "test.hin", WPT_TGT, newline="\r\n"),
        _write(tmp_path, "test.eng.hin.wa", links),
    )


def test_wpt_reads_links_by_sentence_number(tmp_path: Path) -> None:
    g = read_wpt(*_wpt(tmp_path), base=1)
    assert g.src == [["The", "law", "changes", "."], ["timely", "information"]]
    assert g.tgt == [["कानून", "बदलता", "है", "।"], ["समय", "पर", "जानकारी"]]
    assert g.gold[0] == ({(1, 0), (2, 1), (3, 3)}, {(1, 0), (2, 1), (2, 2), (3, 3)})
    assert g.gold[1] == ({(0, 0), (0, 1), (1, 2)}, {(0, 0), (0, 1), (1, 2)})


def test_wpt_refuses_links_outside_their_sentence(tmp_path: Path) -> None:
    paths = _wpt(tmp_path, WPT_LINKS + "27 2 4\n")
    with pytest.raises(InputError, match=r"test\.eng\.hin\.wa line 9: link '27 2 4'.*target"):
        read_wpt(*paths, base=1)
    g = read_wpt(*paths, base=1, drop_lines=[9])
    assert g.dropped == [(str(paths[2]), 9, "27 2 4")]
    with pytest.raises(InputError, match=r"line 5: link '26 4 4'.*0-indexed"):
        read_wpt(*_wpt(tmp_path), base=0)
    with pytest.raises(InputError, match="sentence number 28"):
        read_wpt(*_wpt(tmp_path, "28 1 1\n"), base=1)
    with pytest.raises(InputError, match=r"line 1: expected 'snum i j"):
        read_wpt(*_wpt(tmp_path, "26 1 1 X\n"), base=1)
