"""AER, precision and recall against hand-made gold files in both formats."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.wordalign.aer import AERResult, detect_format, read_gold, score, score_files

# Three sentences; S = sure, P = possible-only (0-based source-target links):
#   sentence 0: S {0-0, 1-1}   P {2-1}
#   sentence 1: S {0-1, 1-0}   P {2-2, 1-1}
#   sentence 2: S {0-0}        P {}
# |S| = 5, |P| = 5 + 3 = 8 (sure links are possible too).
PHARAOH_GOLD = "0-0 1-1 2?1\n0-1 1-0 2?2 1?1\n0-0\n"
# The same in NAACL (1-based): a missing S/P means S, a confidence field, a NULL link
# (position 0, skipped) and a blank line.
NAACL_GOLD = """\
1 1 1 S
1 2 2 S
1 3 2 P
2 1 2 S
2 2 1
2 3 3 P 0.8

2 2 2 p
3 1 1 S
3 0 2 S
"""
GOLD = {
    0: ({(0, 0), (1, 1)}, {(0, 0), (1, 1), (2, 1)}),
    1: ({(0, 1), (1, 0)}, {(0, 1), (1, 0), (2, 2), (1, 1)}),
    2: ({(0, 0)}, {(0, 0)}),
}
# Predicted:
#   sentence 0: {0-0, 2-1}  0-0 sure, 2-1 possible     -> A∩S 1, A∩P 2
#   sentence 1: {0-1}       sure                       -> A∩S 1, A∩P 1
#   sentence 2: {0-0, 1-2}  0-0 sure, 1-2 wrong        -> A∩S 1, A∩P 1
# |A| = 5, |A∩S| = 3, |A∩P| = 4, |S| = 5:
#   precision = 4/5 = 0.8, recall = 3/5 = 0.6, F1 = 2*0.8*0.6/1.4 = 24/35,
#   AER = 1 - (3 + 4)/(5 + 5) = 0.3
PRED = "0-0 2-1\n0-1\n0-0 1-2\n"


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return {
        "pred": _write(tmp_path / "pred.align", PRED),
        "pharaoh": _write(tmp_path / "gold.pharaoh", PHARAOH_GOLD),
        "naacl": _write(tmp_path / "gold.wa", NAACL_GOLD),
    }


@pytest.mark.parametrize("fmt", ["pharaoh", "naacl"])
def test_read_gold_both_formats(files: dict[str, Path], fmt: str) -> None:
    assert read_gold(files[fmt], fmt) == GOLD
    assert read_gold(files[fmt]) == GOLD  # auto-detected
    assert detect_format(files[fmt]) == fmt


@pytest.mark.parametrize("fmt", ["pharaoh", "naacl", "auto"])
def test_hand_computed_scores(files: dict[str, Path], fmt: str) -> None:
    gold = files["naacl" if fmt == "naacl" else "pharaoh"]
    r = score_files(files["pred"], gold, fmt)
    assert (r.predicted, r.sure, r.possible, r.sure_hit, r.possible_hit) == (5, 5, 8, 3, 4)
    assert r.sentences == 3
    assert r.precision == pytest.approx(0.8)
    assert r.recall == pytest.approx(0.6)
    assert r.f1 == pytest.approx(24 / 35)
    assert r.aer == pytest.approx(1 - (3 + 4) / (5 + 5))
    d = r.as_dict()
    assert d["aer"] == pytest.approx(0.3) and d["sentences"] == 3 and len(d) == 10


def test_reverse_swaps_predicted_links(tmp_path: Path, files: dict[str, Path]) -> None:
    swapped = _write(tmp_path / "swapped.align", "0-0 1-2\n1-0\n0-0 2-1\n")
    assert score_files(swapped, files["pharaoh"], reverse=True) == score_files(
        files["pred"], files["pharaoh"]
    )
    assert score_files(swapped, files["pharaoh"]).aer != pytest.approx(0.3)


def test_perfect_predictions() -> None:
    sure = [GOLD[k][0] for k in range(3)]
    possible = [GOLD[k][1] for k in range(3)]
    # A = S: |A∩S| = |A∩P| = |A| = |S| = 5 -> AER = 1 - 10/10 = 0, P = R = 1.
    r = score(sure, GOLD)
    assert (r.aer, r.precision, r.recall, r.f1) == (0.0, 1.0, 1.0, 1.0)
    # A = P: |A| = 8, |A∩P| = 8, |A∩S| = 5 -> precision 8/8, recall 5/5,
    # AER = 1 - (5 + 8)/(8 + 5) = 0: possible links are never penalised.
    r = score(possible, GOLD)
    assert (r.aer, r.precision, r.recall) == (0.0, 1.0, 1.0)


def test_sure_links_are_possible() -> None:
    # Gold given with P missing its sure link: P := P ∪ S, so 0-0 counts in |A∩P|.
    r = score([{(0, 0)}], {0: ({(0, 0)}, set())})
    assert r.possible == 1 and r.possible_hit == 1 and r.precision == 1.0 and r.aer == 0.0
    # In a Pharaoh gold file a link both sure and possible is sure.
    assert score([{(0, 0)}], {0: ({(0, 0)}, {(0, 0)})}).possible == 1


def test_empty_prediction_and_missing_sentences() -> None:
    # |A| = 0: precision 0.0 by definition; AER = 1 - 0/(0 + 5) = 1.
    r = score([set(), set(), set()], GOLD)
    assert (r.precision, r.recall, r.f1, r.aer) == (0.0, 0.0, 0.0, 1.0)
    # No gold at all: every ratio is 0.0, AER 1.0.
    r = score([{(0, 0)}], {})
    assert (r.precision, r.recall, r.aer, r.sentences) == (0.0, 0.0, 1.0, 1)
    with pytest.raises(InputError, match=r"sentence 4 .* only 3 predicted"):
        score([set(), set(), set()], {3: ({(0, 0)}, set())})


def test_naacl_sentences_without_lines_have_no_gold(tmp_path: Path) -> None:
    # Sentence 2 of 3 has no gold line; its predicted link counts in |A| only.
    gold = _write(tmp_path / "g.wa", "1 1 1\n3 2 2 S\n")
    pred = _write(tmp_path / "p.align", "0-0\n0-0\n1-1\n")
    assert read_gold(gold) == {0: ({(0, 0)}, {(0, 0)}), 2: ({(1, 1)}, {(1, 1)})}
    r = score_files(pred, gold)
    # |A| = 3, |S| = 2, hits 2 and 2 -> AER = 1 - 4/5.
    assert r.aer == pytest.approx(0.2) and r.precision == pytest.approx(2 / 3)


def test_auto_detection(tmp_path: Path) -> None:
    assert detect_format(_write(tmp_path / "a", "\n\n1 2 3\n")) == "naacl"
    assert detect_format(_write(tmp_path / "b", "0001 2 3 P 0.5\n")) == "naacl"
    assert detect_format(_write(tmp_path / "c", "\n0-0 1?1 2-2\n")) == "pharaoh"
    assert detect_format(_write(tmp_path / "d", "0-0\n")) == "pharaoh"
    assert detect_format(_write(tmp_path / "e", "1 2 3 X\n")) == "pharaoh"
    assert detect_format(_write(tmp_path / "f", "")) == "pharaoh"
    # A Pharaoh gold starting with an empty sentence keeps its line numbering.
    assert read_gold(tmp_path / "c") == {
        0: (set(), set()),
        1: ({(0, 0), (2, 2)}, {(0, 0), (1, 1), (2, 2)}),
    }


def test_pharaoh_line_count_mismatch_names_both_files(
    tmp_path: Path, files: dict[str, Path]
) -> None:
    short = _write(tmp_path / "short.align", "0-0\n0-1\n")
    with pytest.raises(InputError, match=r"gold\.pharaoh has 3 .*short\.align has 2"):
        score_files(short, files["pharaoh"])


def test_naacl_sentence_beyond_prediction(tmp_path: Path, files: dict[str, Path]) -> None:
    short = _write(tmp_path / "short.align", "0-0\n0-1\n")
    with pytest.raises(InputError, match=r"gold\.wa line 9: sentence id 3 .* 2 sentence"):
        score_files(short, files["naacl"])


@pytest.mark.parametrize(
    ("text", "fmt", "message"),
    [
        ("0-0 1*1\n", "pharaoh", r"g: line 1: bad gold link '1\*1'"),
        ("0-0\n1-a\n", "pharaoh", r"g: line 2: bad gold link '1-a'"),
        ("1 1 1 S\n1 1 X\n", "naacl", r"g line 2: expected 'sentence_id"),
        ("1 1 1 Q\n", "naacl", r"g line 1: expected"),
        ("1 1 1 S 0.5 7\n", "naacl", r"g line 1: expected"),
        ("1 1 1 S high\n", "naacl", r"g line 1: confidence 'high'"),
        ("0 1 1 S\n", "naacl", r"g line 1: sentence ids are 1-based"),
    ],
)
def test_gold_errors(tmp_path: Path, text: str, fmt: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        read_gold(_write(tmp_path / "g", text), fmt)


def test_bad_format_and_bad_prediction(tmp_path: Path, files: dict[str, Path]) -> None:
    with pytest.raises(ConfigError, match="pharaoh, naacl"):
        read_gold(files["pharaoh"], "moses")
    bad = _write(tmp_path / "bad.align", "0-0\n0:1\n0-0\n")
    with pytest.raises(InputError, match=r"bad\.align: line 2"):
        score_files(bad, files["pharaoh"])


def test_result_is_frozen() -> None:
    r = score([{(0, 0)}], {0: ({(0, 0)}, set())})
    assert isinstance(r, AERResult)
    with pytest.raises(AttributeError):
        r.aer = 0.5  # type: ignore[misc]
