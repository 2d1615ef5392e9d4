"""Result tables: hand-checked averages, the "present in all" rule, seeds, markdown, CSV."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.reporting.tables import (
    bli_coverage,
    bli_per_language,
    bli_summary,
    bli_test_sets,
    load_records,
    to_markdown,
    wordsim_coverage,
    wordsim_tables,
    write_tables,
)

SPACES = ["x2s-m", "x2s-ma", "aggregate"]
NAMES = {"aggregate": "Aggregation"}

# (space, seed, language) -> (en-xx P@1, xx-en P@1); None = no dictionary for that direction.
# "aggregate" lacks es; x2s-ma has only en-es for es.
BLI = {
    ("x2s-m", 1, "de"): (0.40, 0.50),
    ("x2s-m", 1, "fr"): (0.60, 0.70),
    ("x2s-m", 1, "es"): (0.20, 0.30),
    ("x2s-m", 2, "de"): (0.42, 0.52),
    ("x2s-m", 2, "fr"): (0.62, 0.72),
    ("x2s-m", 2, "es"): (0.20, 0.30),
    ("x2s-ma", 1, "de"): (0.50, 0.60),
    ("x2s-ma", 1, "fr"): (0.70, 0.80),
    ("x2s-ma", 1, "es"): (0.90, None),
    ("x2s-ma", 2, "de"): (0.46, 0.56),
    ("x2s-ma", 2, "fr"): (0.66, 0.76),
    ("x2s-ma", 2, "es"): (0.90, None),
    ("aggregate", 1, "de"): (0.30, 0.40),
    ("aggregate", 1, "fr"): (0.50, 0.60),
    ("aggregate", 2, "de"): (0.30, 0.40),
    ("aggregate", 2, "fr"): (0.50, 0.60),
}


def _scores(p1: float, evaluated: int = 900) -> dict[str, Any]:
    csls = {"p@1": p1, "p@5": 0.9, "mrr": 0.5, "evaluated": evaluated, "total": 1000}
    return {"nn": {**csls, "p@1": p1 - 0.05}, "csls": {**csls, "coverage": 0.9, "extra": "x"}}


def bli_record(space: str, seed: int, lang: str, to_xx: float, from_xx: float | None) -> dict:
    results = {f"en-{lang}": _scores(to_xx, evaluated=800)}
    if from_xx is not None:
        results[f"{lang}-en"] = _scores(from_xx)
    return {"space": space, "seed": seed, "language": lang, "hub": "en", "split": "test",
            "results": results}  # fmt: skip


def bli_records(seeds: tuple[int, ...] = (1, 2)) -> list[dict]:
    return [bli_record(*k, *v) for k, v in BLI.items() if k[1] in seeds]


def _ws(dataset: str, task: str, langs: list[str], score: float) -> dict[str, Any]:
    # The covered-pairs figures differ from the all-pairs ones, so a table shows which.
    return {"dataset": dataset, "task": task, "languages": langs, "pearson_all": score,
            "spearman_all": score, "score_all": score, "score_all_zeroed": False,
            "pearson_covered": score + 0.05, "spearman_covered": score + 0.05,
            "score_covered": score + 0.05, "score_covered_zeroed": False,
            "found": 90, "total": 100}  # fmt: skip


def wordsim_records() -> list[dict]:
    out = []
    for space, base in (("x2s-m", 0.0), ("x2s-ma", 0.1), ("aggregate", -0.1)):
        for seed in (1, 2):
            bump = 0.02 * (seed - 1) if space == "x2s-m" else 0.0
            res = [
                _ws("semeval17", "cross-lingual", ["en", "de"], 0.70 + base + bump),
                _ws("semeval17", "cross-lingual", ["de", "es"], 0.60 + base + bump),
                _ws("semeval17", "monolingual", ["en"], 0.80 + base),
                _ws("semeval17", "monolingual", ["de"], 0.70 + base),
                _ws("simlex999", "monolingual", ["en"], 0.40 + base),
            ]
            if space != "aggregate":
                res.append(_ws("semeval17", "cross-lingual", ["en", "es"], 0.10))
            out.append({"space": space, "seed": seed, "results": res})
    return out


def test_table1_averages_languages_present_in_all_then_seeds() -> None:
    t = bli_summary(bli_records(), spaces=SPACES, names=NAMES)
    assert list(t.frame.index) == ["X2S-M", "X2S-MA", "Aggregation"]
    assert list(t.frame.columns) == ["en-xx", "xx-en"]
    # es is missing for Aggregation, so only de and fr count (es would change every number).
    # X2S-M en-xx: seed 1 (40+60)/2 = 50, seed 2 (42+62)/2 = 52 -> 51, sample std sqrt(2).
    # X2S-MA en-xx: seed 1 (50+70)/2 = 60, seed 2 (46+66)/2 = 56 -> 58, std sqrt(8).
    assert t.frame.loc["X2S-M"].tolist() == ["51.00 ± 1.41", "61.00 ± 1.41"]
    assert t.frame.loc["X2S-MA"].tolist() == ["58.00 ± 2.83", "68.00 ± 2.83"]
    assert t.frame.loc["Aggregation"].tolist() == ["40.00 ± 0.00", "50.00 ± 0.00"]
    assert t.values.loc["X2S-MA", "xx-en"] == pytest.approx(68.0)
    assert t.std.loc["X2S-MA", "en-xx"] == pytest.approx(8**0.5)
    assert t.seeds == [2, 2, 2]
    notes = " ".join(t.footnotes)
    # Per direction: X2S-MA has no es-en dictionary, so es lacks for two models in xx-en.
    assert "en-xx: averaged over the 2 languages present in all models (de, fr)" in notes
    assert "left out: es (no en-es result for Aggregation)" in notes
    assert "left out: es (no es-en result for X2S-MA, Aggregation)" in notes
    assert "seeds 1, 2" in notes
    assert t.meta["en-xx"]["averaged"] == ["de", "fr"]


def test_bli_captions_name_the_test_dictionaries() -> None:
    """Only MUSE's test sets make "MUSE BLI tasks"; a split of package dictionaries says so."""
    assert bli_test_sets(["muse"]) == "MUSE"
    assert bli_test_sets(["freedict", "muse"]) == "MUSE"
    packages = bli_test_sets(["freedict", "cedict", "cldr"])
    assert packages == "FreeDict + CC-CEDICT + CLDR"
    muse = bli_summary(bli_records(), spaces=SPACES)
    assert "Results from MUSE BLI tasks" in muse.caption
    ours = bli_summary(bli_records(), spaces=SPACES, test_sets=packages)
    t5 = bli_per_language(bli_records(), spaces=SPACES, test_sets=packages)
    for caption in (ours.caption, t5.caption):
        assert "MUSE BLI" not in caption and "MUSE results" not in caption
        assert "test split of FreeDict + CC-CEDICT + CLDR" in caption
        assert "not MUSE's test sets" in caption


def test_table1_single_seed_no_std_and_seed_specific_gaps() -> None:
    t = bli_summary(bli_records(seeds=(1,)), spaces=SPACES, names=NAMES)
    assert t.frame.loc["X2S-M"].tolist() == ["50.00", "60.00"]
    assert not any("±" in n for n in t.footnotes)
    # Drop de for X2S-M seed 2 only: de is no longer present in all, so fr alone counts.
    recs = [
        r for r in bli_records() if (r["space"], r["seed"], r["language"]) != ("x2s-m", 2, "de")
    ]
    t = bli_summary(recs, spaces=SPACES, names=NAMES)
    assert t.frame.loc["X2S-M", "en-xx"] == "61.00 ± 1.41"  # fr: 60, 62
    assert t.frame.loc["Aggregation", "en-xx"] == "50.00 ± 0.00"
    assert "the 1 language present in all models (fr)" in t.footnotes[0]
    assert "de (no en-de result for X2S-M seed 2)" in t.footnotes[0]
    # Same languages in both directions: one merged note.
    t = bli_summary([r for r in recs if r["language"] != "es"], spaces=SPACES, names=NAMES)
    assert t.footnotes[0] == (
        "en-xx and xx-en: averaged over the 1 language present in all models (fr); "
        "left out: de (no en-de/de-en result for X2S-M seed 2)."
    )
    t5 = bli_per_language(recs, spaces=SPACES, names=NAMES)
    assert t5.frame.loc["X2S-M", "de"] == "45.00‡"  # seed 1 only: (40+50)/2
    assert any(n.startswith("‡") and "X2S-M de (1 of 2)" in n for n in t5.footnotes)


def test_table5_per_language_dashes_and_one_direction() -> None:
    t = bli_per_language(bli_records(), spaces=SPACES, names=NAMES)
    assert list(t.frame.columns) == ["de", "es", "fr"]
    # X2S-M de: seed 1 (40+50)/2 = 45, seed 2 (42+52)/2 = 47.
    assert t.frame.loc["X2S-M", "de"] == "46.00 ± 1.41"
    assert t.frame.loc["X2S-M", "es"] == "25.00 ± 0.00"
    assert t.frame.loc["Aggregation", "es"] == "–"
    assert pd.isna(t.values.loc["Aggregation", "es"])
    assert t.frame.loc["X2S-MA", "es"] == "90.00 ± 0.00†"
    assert any(n.startswith("†") and "X2S-MA es (en-es only)" in n for n in t.footnotes)
    d = bli_per_language(bli_records(), spaces=SPACES, names=NAMES, per_direction=True)
    assert list(d.frame.columns) == ["en-de", "de-en", "en-es", "es-en", "en-fr", "fr-en"]
    assert d.frame.loc["X2S-MA", "es-en"] == "–"
    assert d.frame.loc["X2S-MA", "en-de"] == "48.00 ± 2.83"
    cov = bli_coverage(bli_records(), spaces=SPACES, names=NAMES)
    # x2s-m de: (800 + 900) / (1000 + 1000) per seed; x2s-ma es: en-es only, 800 / 1000.
    assert cov.frame.loc["X2S-M", "de"] == "85.0"
    assert cov.frame.loc["X2S-MA", "es"] == "80.0"
    assert cov.frame.loc["Aggregation", "es"] == "–"
    assert cov.csv_frame()["seeds"].tolist() == [2, 2, 2]


def test_wordsim_tables_match_paper_layout_and_shared_averages() -> None:
    tables = wordsim_tables(wordsim_records(), spaces=SPACES, names=NAMES)
    assert list(tables) == ["table2", "table6", "table7", "wordsim_simlex999"]
    t6, t7, t2 = tables["table6"], tables["table7"], tables["table2"]
    assert list(t6.frame.columns) == ["de-en", "de-es", "en-es", "avg"]
    # X2S-M: seed 1 (0.70+0.60)/2 = 0.65, seed 2 (0.72+0.62)/2 = 0.67; en-es is left out.
    assert t6.frame.loc["X2S-M", "avg"] == "0.660 ± 0.014"
    assert t6.frame.loc["X2S-M", "de-en"] == "0.71 ± 0.01"
    assert t6.frame.loc["Aggregation", "en-es"] == "–"
    assert "en-es (no result for Aggregation)" in " ".join(t6.footnotes)
    assert list(t7.frame.columns) == ["de", "en"]
    assert t7.frame.loc["X2S-MA", "en"] == "0.90 ± 0.00"
    assert list(t2.frame.columns) == ["cross-lingual", "monolingual"]
    assert t2.values.loc["X2S-M", "cross-lingual"] == pytest.approx(0.66)
    assert t2.frame.loc["X2S-M", "cross-lingual"] == t6.frame.loc["X2S-M", "avg"]
    assert t2.frame.loc["Aggregation", "monolingual"] == "0.650 ± 0.000"  # (0.7 + 0.6) / 2
    simlex = tables["wordsim_simlex999"]
    assert list(simlex.frame.columns) == ["en"]
    assert simlex.frame.loc["X2S-MA", "en"] == "0.55 ± 0.00"  # Spearman on covered pairs
    only_mono = [
        {**r, "results": [e for e in r["results"] if e["task"] == "monolingual"]}
        for r in wordsim_records()
    ]
    assert "table6" not in wordsim_tables(only_mono, spaces=SPACES)


def test_wordsim_captions_name_the_measure_and_flag_scores_zeroed_by_rule() -> None:
    recs = wordsim_records()
    zeroed = {**recs[0]["results"][0], "score_all": 0.0, "score_all_zeroed": True}
    recs[0]["results"][0] = zeroed  # x2s-m seed 1, en-de: both correlations negative
    recs[0]["results"].append(_ws("semeval17-composed", "monolingual", ["en"], 0.9))
    tables = wordsim_tables(recs, spaces=SPACES, names=NAMES)
    for stem in ("table2", "table6", "table7"):
        assert "(official score: harmonic mean of Pearson and Spearman over every pair" in (
            tables[stem].caption
        )
        assert tables[stem].meta["measure"] == "score_all"
    assert tables["table6"].frame.loc["X2S-M", "de-en"] == "0.36 ± 0.51"  # 0 and 0.72
    assert (
        "Scored 0 by the SemEval-2017 Task 2 scorer's rule (Pearson or Spearman not positive), "
        "not a harmonic mean of 0: X2S-M de-en (seed 1)." in tables["table6"].footnotes
    )
    simlex = tables["wordsim_simlex999"].caption
    assert "Spearman's rho on the pairs in vocabulary only, coverage-restricted" in simlex
    assert "official" not in simlex and not tables["wordsim_simlex999"].footnotes[1:]
    composed = tables["wordsim_semeval17-composed"]
    assert "multiword entries composed from their words" in composed.caption
    assert "official score" not in composed.caption
    assert composed.frame.loc["X2S-M", "en"] == "0.90‡"  # one seed of two
    # Asking for the covered figures names them so on the SemEval tables too.
    cov = wordsim_tables(recs, spaces=SPACES, names=NAMES, measure="score_covered")
    assert "official score:" not in cov["table2"].caption
    assert "pairs in vocabulary only" in cov["table2"].caption


def test_a_set_too_small_to_score_keeps_its_column_and_its_coverage() -> None:
    """RG-65 on a small corpus: 2 of 65 pairs in vocabulary, no covered correlation."""
    recs = wordsim_records()
    for rec in recs:
        tiny = {**_ws("rg65", "monolingual", ["en"], 0.0), "found": 2, "total": 65}
        tiny.update(pearson_covered=None, spearman_covered=None, score_covered=None)
        rec["results"].append(tiny)
    tables = wordsim_tables(recs, spaces=SPACES, names=NAMES)
    rg = tables["wordsim_rg65"]
    assert list(rg.frame.columns) == ["en"]
    assert set(rg.frame["en"]) == {"–"}
    assert "No RG-65 results for X2S-M, X2S-MA, Aggregation (–)." in rg.footnotes
    cov = wordsim_coverage(recs, spaces=SPACES, names=NAMES)["coverage_wordsim_rg65"]
    assert list(cov.frame.columns) == ["en"]
    assert cov.values.loc["X2S-M", "en"] == pytest.approx(100 * 2 / 65)


def test_markdown_structure() -> None:
    df = pd.DataFrame({"a|b": ["1.00", None], "c": ["x", "–"]}, index=["r1", "row two"])
    df.index.name = "Model"
    md = to_markdown(df, "Table 9: caption.", ["Note one.", "Note two."])
    lines = md.splitlines()
    assert lines[:2] == ["Table 9: caption.", ""]
    assert lines[2] == "| Model   | a\\|b |   c |"
    assert re.fullmatch(r"\| -+ \| -+: \| -+: \|", lines[3])
    assert lines[4] == "| r1      | 1.00 |   x |"
    assert lines[5] == "| row two |    – |   – |"
    assert lines[6:] == ["", "Note one.", "", "Note two."]
    assert len({len(x) for x in lines[2:6]}) == 1  # padded to equal width


def test_write_tables_files_csv_roundtrip_and_stats(tmp_path: Path) -> None:
    stats = write_tables(
        bli_records(), wordsim_records(), tmp_path / "tables", spaces=SPACES, names=NAMES
    )
    stems = ["table1", "table5", "table5_directions", "coverage_bli", "table2", "table6",
             "table7", "wordsim_simlex999", "coverage_wordsim_semeval17",
             "coverage_wordsim_simlex999"]  # fmt: skip
    expected = [f"{s}.{ext}" for s in stems for ext in ("md", "csv", "tex")] + ["tables.md"]
    assert stats["files"] == expected
    assert sorted(p.name for p in (tmp_path / "tables").iterdir()) == sorted(expected)
    assert stats["tables"]["table1"]["en-xx"]["averaged"] == ["de", "fr"]
    csv = pd.read_csv(tmp_path / "tables" / "table1.csv", index_col=0)
    assert list(csv.columns) == ["space", "en-xx", "en-xx std", "xx-en", "xx-en std", "seeds"]
    assert csv.loc["X2S-MA", "en-xx"] == pytest.approx(58.0)
    assert csv.loc["X2S-MA", "en-xx std"] == pytest.approx(8**0.5)
    t5 = bli_per_language(bli_records(), spaces=SPACES, names=NAMES)
    back = pd.read_csv(tmp_path / "tables" / "table5.csv", index_col=0)
    pd.testing.assert_frame_equal(back, t5.csv_frame(), check_exact=False)
    assert pd.isna(back.loc["Aggregation", "es"])
    md = (tmp_path / "tables" / "table1.md").read_text(encoding="utf-8")
    # The best value of each column in bold (Markdown and LaTeX).
    assert "| X2S-MA      | **58.00 ± 2.83** | **68.00 ± 2.83** |" in md
    assert "| X2S-M       |     51.00 ± 1.41 |     61.00 ± 1.41 |" in md
    tex = (tmp_path / "tables" / "table1.tex").read_text(encoding="utf-8")
    assert r"X2S-MA & \textbf{58.00 $\pm$ 2.83} & \textbf{68.00 $\pm$ 2.83} \\" in tex
    assert r"\toprule" in tex and r"\bottomrule" in tex
    all_md = (tmp_path / "tables" / "tables.md").read_text(encoding="utf-8")
    for stem in stems:
        assert stats["tables"][stem]["caption"] in all_md
    assert not list((tmp_path / "tables").glob(".*"))  # no temporaries left
    ws_only = write_tables([], wordsim_records(), tmp_path / "ws")
    assert "table1.md" not in ws_only["files"] and "table2.md" in ws_only["files"]


def test_load_records_and_errors(tmp_path: Path) -> None:
    def dump(name: str, obj: Any) -> Path:
        p = tmp_path / name
        p.write_text(json.dumps(obj), encoding="utf-8")
        return p

    good = [dump("de.json", bli_records()[0]), dump("ws.json", wordsim_records()[0])]
    recs = load_records(good)
    assert [r["space"] for r in recs] == ["x2s-m", "x2s-m"]
    assert bli_summary([recs[0]]).frame.iloc[0].tolist() == ["40.00", "50.00"]

    bad = bli_records()[0]
    del bad["language"]
    with pytest.raises(InputError, match=r"nolang\.json: missing key 'language'"):
        load_records([dump("nolang.json", bad)])
    with pytest.raises(InputError, match=r"seed\.json: key 'seed': expected the seed"):
        load_records([dump("seed.json", {**bli_records()[0], "seed": "1"})])
    with pytest.raises(InputError, match=r"task\.json: results\[0\]: task"):
        load_records([dump("task.json", {"space": "s", "seed": 1, "results": [
            {"dataset": "d", "task": "both", "languages": ["en"]}]})])  # fmt: skip
    # languages may also come "-"-joined, and the task follows from their number.
    [ws] = load_records([dump("joined.json", {"space": "s", "seed": 1, "results": [
        {"dataset": "semeval17", "languages": "en-de", "score_all": 0.5}]})])  # fmt: skip
    assert list(wordsim_tables([ws])["table6"].frame.columns) == ["de-en", "avg"]
    with pytest.raises(InputError, match=r"langs\.json: results\[0\]: languages"):
        load_records([dump("langs.json", {"space": "s", "seed": 1, "results": [
            {"dataset": "d", "task": "cross-lingual", "languages": ["en"]}]})])  # fmt: skip
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match=r"broken\.json: invalid JSON"):
        load_records([tmp_path / "broken.json"])

    # Keys needed only for the table asked for are checked when it is built.
    nocsls = bli_records()[0]
    del nocsls["results"]["de-en"]["csls"]
    [rec] = load_records([dump("nocsls.json", nocsls)])
    with pytest.raises(InputError, match=r"nocsls\.json: results\.de-en: missing key 'csls'"):
        bli_summary([rec])
    assert bli_summary([rec], retrieval="nn").frame.iloc[0].tolist() == ["35.00", "45.00"]
    with pytest.raises(InputError, match=r"results\.en-de\.csls: missing key 'p@20'"):
        bli_summary([rec], metric="p@20")
    with pytest.raises(InputError, match="duplicate BLI record"):
        bli_summary(bli_records() + bli_records()[:1])
    with pytest.raises(InputError, match=r"results\[0\]: missing key 'spearman_covered'"):
        wordsim_tables([{"space": "s", "seed": 1, "results": [
            {"dataset": "d", "task": "monolingual", "languages": ["en"]}]}])  # fmt: skip
    with pytest.raises(InputError, match=r"results\[0\]: missing key 'score_all'"):
        wordsim_tables([{"space": "s", "seed": 1, "results": [  # a record of the old layout
            {"dataset": "semeval17", "languages": ["en"], "score": 0.5}]}])  # fmt: skip
    with pytest.raises(ConfigError, match="share the name"):
        bli_summary(bli_records(), names={"x2s-m": "A", "x2s-ma": "A"})
