"""Seeds aggregated and models tested against their baselines (xlalign.reporting.statistics)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from xlalign.reporting.statistics import (
    Cell,
    Model,
    baselines_of,
    group_models,
    load_with_source,
    run_statistics,
    zeroshot_statistics,
)

BASE = "multilingual-e5-small"


def test_group_models_pools_pretraining_seeds_and_continual_variants() -> None:
    encoders = [BASE, "mlm.s1", "mlm.s2", "x2s-ma-dcca.s1", "mlm.s1+cl", "mlm.s2+cl", "other.s1"]
    got = group_models(encoders, ["mlm", "x2s-ma-dcca"])
    assert got == [
        Model(BASE, (BASE,)),
        Model("mlm", ("mlm.s1", "mlm.s2"), (1, 2)),
        Model("x2s-ma-dcca", ("x2s-ma-dcca.s1",), (1,)),
        Model("mlm+cl", ("mlm.s1+cl", "mlm.s2+cl"), (1, 2)),
        Model("other.s1", ("other.s1",)),  # not a pre-training run of this config
    ]


def test_baselines_original_encoder_and_mlm_for_alignment_rows() -> None:
    models = group_models([BASE, "mlm.s1", "x2s-ma-mse.s1", f"{BASE}+cl"], ["mlm", "x2s-ma-mse"])
    names = [m.name for m in models]
    by = {m.name: baselines_of(m, names, BASE) for m in models}
    assert by == {
        BASE: [],
        "mlm": [BASE],
        "x2s-ma-mse": [BASE, "mlm"],
        f"{BASE}+cl": [BASE],
    }
    # Without an +MLM row, an alignment row has only the original encoder.
    alone = group_models([BASE, "x2s-ma-mse.s1"], ["x2s-ma-mse"])
    assert baselines_of(alone[1], [m.name for m in alone], BASE) == [BASE]


def test_cell_keeps_pretraining_and_finetuning_spread_apart() -> None:
    # Two pre-training seeds, three fine-tuning seeds each.
    cell = Cell({1: [70.0, 71.0, 72.0], 2: [74.0, 75.0, 76.0]})
    assert cell.mean == pytest.approx(73.0)
    assert cell.sd_pt == pytest.approx((2 * 2.0**2) ** 0.5)  # means 71 and 75
    assert cell.sd_ft == pytest.approx(1.0)  # each seed's std is 1
    assert (cell.n_pt, cell.n_ft) == (2, 3)
    assert cell.text() == "73.00 ± 2.83 (pt 2) ± 1.00 (ft 3)"
    assert Cell({None: [71.97]}).text() == "71.97"
    assert Cell({}).text() == "–"


# --------------------------------------------------------------------------- files


TAGS = ["NOUN", "VERB", "ADJ", "DET"]


def _tagging_run(root: Path, enc: str, task: str, seed: int, quality: float, n: int = 60):
    """A fine-tuning result of ``enc`` whose predictions are right with prob. ``quality``
    (deterministic per example), in the workflow's layout."""
    rng = random.Random(f"{enc}-{task}-{seed}")
    stats = root / enc / task / f"ft{seed}.json"
    pred_dir = stats.with_suffix("") / "predictions"
    pred_dir.mkdir(parents=True)
    per_language = {}
    for lang in ("de", "ru"):
        lines, right, total = [], 0, 0
        for i in range(n):
            if task == "ner-gold":
                gold = ["B-PER", "I-PER", "O", "B-LOC", "O"]
                ok = rng.random() < quality
                pred = gold if ok else ["O"] * 5
            else:
                gold = [TAGS[(i + j) % 4] for j in range(5)]
                pred = [g if rng.random() < quality else "X" for g in gold]
            right += sum(p == g for p, g in zip(pred, gold, strict=True))
            total += 5
            lines.append(json.dumps({"id": f"{lang}-{i}", "prediction": pred, "gold": gold}))
        (pred_dir / f"{lang}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        per_language[lang] = 100.0 * right / total
    stats.write_text(
        json.dumps(
            {
                "task": task,
                "encoder": enc,
                "seed": seed,
                "summary": {"english": 90.0, "per_language": per_language},
                "scores": {},
                "predictions": {lang: f"predictions/{lang}.jsonl" for lang in per_language},
            }
        ),
        encoding="utf-8",
    )
    return stats


def _retrieval(root: Path, enc: str, quality: float, n: int = 80):
    rng = random.Random(enc)
    stats = root / enc / "retrieval" / "bible.json"
    pred_dir = stats.with_suffix("")
    pred_dir.mkdir(parents=True)
    languages = {}
    for lang in ("de", "ru"):
        ids = [f"v{i}" for i in range(n)]
        got = [i if rng.random() < quality else ids[(k + 1) % n] for k, i in enumerate(ids)]
        (pred_dir / f"{lang}.json").write_text(
            json.dumps({"ids": ids, "en->xx": got, "xx->en": got}), encoding="utf-8"
        )
        acc = 100.0 * sum(a == b for a, b in zip(ids, got, strict=True)) / n
        languages[lang] = {"accuracy": {"en->xx": acc, "xx->en": acc}}
    stats.write_text(
        json.dumps({"set": "bible", "encoder": enc, "languages": languages, "layer": 8}),
        encoding="utf-8",
    )
    return stats


def _zeroshot(tmp_path: Path, qualities: dict[str, float], seeds=(1, 2)):
    runs, rets = [], []
    for enc, q in qualities.items():
        for task in ("pos-gold", "ner-gold"):
            runs += [_tagging_run(tmp_path, enc, task, s, q) for s in seeds]
        rets.append(_retrieval(tmp_path, enc, q))
    return runs, rets


def _stats(runs, rets, encoders, **kw):
    return zeroshot_statistics(
        load_with_source(runs, "fine-tuning"),
        load_with_source(rets, "retrieval"),
        encoders=encoders,
        base_encoder=BASE,
        pretrain_runs=["mlm", "x2s-ma-dcca"],
        tasks=["pos-gold", "ner-gold"],
        retrieval_sets=["bible"],
        iterations=300,
        **kw,
    )


def test_models_different_by_construction_are_significant(tmp_path: Path) -> None:
    qualities = {BASE: 0.45, "mlm.s1": 0.45, "x2s-ma-dcca.s1": 0.95}
    runs, rets = _zeroshot(tmp_path, qualities)
    table, pvalues = _stats(runs, rets, list(qualities))
    pooled = [c for c in table.comparisons if c.language == "all"]
    dcca = [c for c in pooled if c.model == "x2s-ma-dcca"]
    # Three columns (POS, NER, retrieval) x two baselines (original, +MLM).
    assert {(c.column.split(" ")[0], c.baseline) for c in dcca} == {
        (col, base) for col in ("POS", "NER", "Bible") for base in (BASE, "mlm")
    }
    assert all(c.p_adjusted < 0.05 and c.difference > 20 for c in dcca)
    tests = {c.column.split(" ")[0]: c.test for c in dcca}
    assert "t-test" in tests["POS"] and "randomisation" in tests["NER"]
    assert tests["Bible"] == "paired bootstrap"
    # Holm: adjusted p >= raw p, and the markers name the baseline.
    assert all(c.p_adjusted >= c.p_value for c in pooled)
    row = table.frame.loc["x2s-ma-dcca"]
    assert all("▲o" in row[col] and "▲m" in row[col] for col in table.frame.columns[:-1])
    # Per-language tests too, and the p-value table has one row per model and baseline.
    assert {c.language for c in table.comparisons} == {"all", "de", "ru"}
    assert list(pvalues.frame.index) == [
        f"mlm vs {BASE}",
        f"x2s-ma-dcca vs {BASE}",
        "x2s-ma-dcca vs mlm",
    ]


def test_identical_models_are_not_significant(tmp_path: Path) -> None:
    runs, rets = _zeroshot(tmp_path, {BASE: 0.7})
    # The same predictions under another name: a copy of the original encoder's files.
    shutil.copytree(tmp_path / BASE, tmp_path / "mlm.s1")
    for p in (tmp_path / "mlm.s1").rglob("*.json"):
        if p.parent.name != "retrieval" and p.parent.name != "bible":
            rec = json.loads(p.read_text())
            rec["encoder"] = "mlm.s1"
            p.write_text(json.dumps(rec))
    ret = tmp_path / "mlm.s1" / "retrieval" / "bible.json"
    rec = json.loads(ret.read_text())
    rec["encoder"] = "mlm.s1"
    ret.write_text(json.dumps(rec))
    runs += sorted((tmp_path / "mlm.s1").glob("*-gold/ft*.json"))
    table, _ = _stats(runs, [*rets, ret], [BASE, "mlm.s1"])
    pooled = [c for c in table.comparisons if c.language == "all"]
    assert len(pooled) == 3
    assert all(c.difference == 0 and c.p_value > 0.5 for c in pooled)
    assert not any("▲" in v or "▼" in v for v in table.frame.to_numpy().ravel())


def test_same_inputs_same_pvalues_and_files_written(tmp_path: Path) -> None:
    qualities = {BASE: 0.6, "mlm.s1": 0.75}
    runs, rets = _zeroshot(tmp_path / "in", qualities)
    out = tmp_path / "out"
    kw = {
        "runs": runs,
        "retrieval": rets,
        "bli": [],
        "encoders": list(qualities),
        "base_encoder": BASE,
        "pretrain_runs": ["mlm"],
        "tasks": ["pos-gold", "ner-gold"],
        "retrieval_sets": ["bible"],
        "spaces": [],
        "bli_baseline": "aggregate",
        "iterations": 200,
        "seed": 3,
    }
    one = run_statistics(md_path=out / "statistics.md", summary_path=out / "s.json", **kw)
    two = run_statistics(md_path=out / "again.md", summary_path=out / "s2.json", **kw)
    assert (
        one["tables"]["table3_statistics"]["tests"] == two["tables"]["table3_statistics"]["tests"]
    )
    for stem in ("table3_statistics", "table3_pvalues"):
        for ext in ("md", "csv", "tex"):
            assert (out / f"{stem}.{ext}").is_file()
    md = (out / "statistics.md").read_text(encoding="utf-8")
    assert "Holm" in md and "| mlm " in md
    tests = (out / "table3_statistics_tests.csv").read_text(encoding="utf-8").splitlines()
    assert tests[0] == "table,column,language,model,baseline,test,n,difference,p,p_adjusted"
    assert len(tests) == 1 + 3 * 3  # 3 columns x (all, de, ru)


def test_std_band_table_marks_one_std_differences_as_002() -> None:
    from xlalign.reporting.statistics import std_band_table

    def cell(per_pt: dict) -> dict:
        return {"x": Cell(per_pt).as_dict()}

    cells = {
        BASE: cell({None: [70.0, 72.0]}),  # mean 71, std 1.41: band 69.59-72.41
        "up": cell({1: [74.0], 2: [75.0]}),
        "same": cell({1: [72.0]}),
        "down": cell({1: [60.0, 61.0]}),
    }
    t = std_band_table(cells, BASE)
    col = t.frame["x"]
    assert col[BASE] == "71.00 ± 1.41 (n=2)"
    assert col["up"] == "74.50 ± 0.71 (n=2) ↑"
    assert col["same"] == "72.00 (n=1)"
    assert col["down"] == "60.50 ± 0.71 (n=2) ↓"
    assert t.best() == {("up", "x")}
    # One baseline run: no std, no marks, and a footnote says why.
    lone = std_band_table({BASE: cell({None: [70.0]}), "up": cell({1: [99.0]})}, BASE)
    assert lone.frame["x"]["up"] == "99.00 (n=1)"
    assert "fewer than two runs" in lone.footnotes[-1]


def _bli_record(space: str, seed: int, lang: str, marks: str) -> dict:
    words = " ".join(f"w{i}" for i in range(len(marks)))
    hits = {"p@1": marks.count("1") / len(marks), "hits@1": marks, "oov": "skip"}
    return {
        "space": space,
        "seed": seed,
        "language": lang,
        "hub": "en",
        "results": {
            f"en-{lang}": {"queries": words, "csls": hits},
            f"{lang}-en": {"queries": words, "csls": hits},
        },
    }


def test_bli_statistics_bootstrap_against_the_baseline_space() -> None:
    from xlalign.reporting.statistics import bli_statistics

    good, bad = "1" * 30 + "0" * 10, "1" * 5 + "0" * 35
    records = [
        _bli_record(space, seed, lang, marks)
        for seed in (1, 2)
        for lang in ("de", "ru")
        for space, marks in (("x2s-ma", good), ("aggregate", bad), ("x2s-m", bad))
    ]
    t = bli_statistics(
        records, spaces=["x2s-m", "x2s-ma", "aggregate"], baseline="aggregate", iterations=200
    )
    pooled = {(c.model, c.column): c for c in t.comparisons if c.language == "all"}
    assert set(pooled) == {(s, d) for s in ("x2s-m", "x2s-ma") for d in ("en→xx", "xx→en")}
    assert pooled[("x2s-ma", "en→xx")].difference == pytest.approx(62.5)
    assert pooled[("x2s-ma", "en→xx")].n == 2 * 2 * 40  # (seed, language, query) items
    assert pooled[("x2s-ma", "en→xx")].p_adjusted < 0.05
    assert pooled[("x2s-m", "xx→en")].difference == 0 and pooled[("x2s-m", "xx→en")].p_value == 1
    assert list(t.frame.index) == ["X2S-M", "X2S-MA", "Aggregation"]
    assert t.frame.loc["X2S-MA", "en→xx"].startswith("75.00 ± 0.00 (n=2) (+62.50, p = ")
    assert t.frame.loc["X2S-MA", "en→xx"].endswith("▲")
    assert t.frame.loc["Aggregation", "en→xx"] == "12.50 ± 0.00 (n=2)"
    # A baseline the run does not have: no tests, and a note says why.
    none = bli_statistics(records, spaces=["x2s-m", "x2s-ma"], baseline="muse")
    assert not none.comparisons and "'muse'" in none.footnotes[-1]
