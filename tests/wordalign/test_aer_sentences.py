"""The gold readers and the AER function given the sentences (issue 29): every link is
checked against its sentence pair, so a 1-indexed file read as 0-indexed is an error, not
an AER one word off; awesome-align's 'ipj' possible links; a declared index base."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.formats.pharaoh import parse_gold_pharaoh
from xlalign.wordalign.aer import read_gold, score

SRC = [["a", "b"], ["c", "d", "e"]]
TGT = [["x", "y"], ["z", "w"]]
# 1-indexed, sure only (as ro-en and ja-en ship): every line links the last words
ONE_BASED = "1-1 2-2\n1-2 3-1\n"


def _gold(tmp_path: Path, text: str, name: str = "g.gold") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_one_indexed_sure_only_file_read_as_zero_indexed_is_an_error(tmp_path: Path) -> None:
    path = _gold(tmp_path, ONE_BASED)
    # without the sentences nothing can tell (the silent AER 64.4)...
    assert read_gold(path, "pharaoh")[0][0] == {(1, 1), (2, 2)}
    # ...with them, the first link past the end names the file, line and link
    with pytest.raises(InputError, match=r"g\.gold: line 1: gold link '2-2'.*position 2"):
        read_gold(path, "pharaoh", sentences=(SRC, TGT))
    # declared 1-indexed, the same file reads right
    gold = read_gold(path, "pharaoh", base=1, sentences=(SRC, TGT))
    assert gold == {
        0: ({(0, 0), (1, 1)}, {(0, 0), (1, 1)}),
        1: ({(0, 1), (2, 0)}, {(0, 1), (2, 0)}),
    }


def test_p_links_are_possible_links(tmp_path: Path) -> None:
    path = _gold(tmp_path, "1-1 2p2\n1p1\n")
    gold = read_gold(path, "auto", base=1, sentences=(SRC, TGT))
    assert gold[0] == ({(0, 0)}, {(0, 0), (1, 1)})
    assert gold[1] == (set(), {(0, 0)})
    assert parse_gold_pharaoh("0?1 1p0") == (set(), {(0, 1), (1, 0)})


def test_position_below_the_base_and_a_base_for_naacl_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"'0-1'.*source position 0 \(1-indexed\)"):
        read_gold(_gold(tmp_path, "0-1\n1-1\n"), "pharaoh", base=1)
    naacl = _gold(tmp_path, "1 1 1 S\n2 4 1 S\n", "g.wa")
    with pytest.raises(ConfigError, match="NAACL gold links are 1-based"):
        read_gold(naacl, "naacl", base=0)
    with pytest.raises(InputError, match=r"g\.wa line 2: link '2 4 1' is outside"):
        read_gold(naacl, "naacl", sentences=(SRC, TGT))
    with pytest.raises(InputError, match="more gold lines than the 2"):
        read_gold(_gold(tmp_path, "0-0\n0-0\n0-0\n"), "pharaoh", sentences=(SRC, TGT))


def test_score_refuses_links_outside_the_sentences() -> None:
    gold = {0: ({(0, 0)}, {(0, 0)}), 1: ({(2, 2)}, {(2, 2)})}
    with pytest.raises(InputError, match=r"gold link 2-2 .* sentence 2 .*3 source and 2 target"):
        score([{(0, 0)}, {(0, 0)}], gold, sentences=(SRC, TGT))
    with pytest.raises(InputError, match="predicted link 0-5"):
        score([{(0, 5)}, set()], {0: ({(0, 0)}, {(0, 0)})}, sentences=(SRC, TGT))
    with pytest.raises(InputError, match="1 predicted link set"):
        score([set()], {}, sentences=(SRC, TGT))
    # inside: the same number as without the check
    good = {0: ({(0, 0), (1, 1)}, {(0, 0), (1, 1)})}
    assert score([{(0, 0)}, set()], good, sentences=(SRC, TGT)) == score([{(0, 0)}, set()], good)
