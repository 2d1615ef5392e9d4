"""The zero-shot tables: Table 3 shape and per-language tables from fine-tuning results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xlalign.reporting.zeroshot import write_zeroshot_tables


def _run(path: Path, task: str, seed: int, en: float, langs: dict[str, float], **extra) -> str:
    rec = {
        "task": task,
        "encoder": "enc",
        "seed": seed,
        "scores": {
            "en/dev": {"accuracy": en, "f1": en - 5},
            **{k: {"accuracy": v} for k, v in langs.items()},
        },
        "summary": {
            "metric": "accuracy",
            "english": en,
            "english_split": "dev",
            "per_language": langs,
            "transfer": {"gap": en - sum(langs.values()) / len(langs)},
        },
        **extra,
    }
    p = path / f"{task}.{seed}.json"
    p.write_text(json.dumps(rec))
    return str(p)


def _retrieval(path: Path) -> str:
    rec = {
        "set": "udhr",
        "encoder": "enc",
        "layer": 8,
        "layer_rule": "xtreme (hidden_states[-12:][7])",
        "pooling": "mean",
        "include_special": True,
        "languages": {
            "de": {
                "accuracy": {"en->xx": 90.0, "xx->en": 80.0},
                "sweep": {"en->xx": [10.0] * 8 + [90.0] + [50.0] * 4},
            },
            "tr": {"accuracy": {"en->xx": 70.0, "xx->en": 60.0}, "sweep": {"en->xx": [0.0] * 13}},
        },
    }
    p = path / "udhr.json"
    p.write_text(json.dumps(rec))
    return str(p)


def test_tables_average_languages_then_seeds(tmp_path: Path) -> None:
    runs = [
        _run(tmp_path, "pos-gold", 1, 80.0, {"he": 60.0, "id": 70.0}),
        _run(tmp_path, "pos-gold", 2, 84.0, {"he": 64.0, "id": 78.0}),
        _run(
            tmp_path,
            "ner-gold",
            1,
            50.0,
            {"he": 10.0},
            counts={"he": {"unseen_label_words": 3, "unseen_label_words[X]": 3}},
        ),
    ]
    md, js = tmp_path / "zs.md", tmp_path / "zs.json"
    summary = write_zeroshot_tables(
        runs=runs,
        retrieval=[_retrieval(tmp_path)],
        md_path=md,
        summary_path=js,
        encoders=["enc"],
        tasks=["pos-gold", "ner-gold"],
        retrieval_sets=["udhr"],
    )
    values = summary["tables"]["summary"]["values"]["enc"]
    # per seed: mean over test languages (65, 71), then over seeds: 68 (English left out)
    assert values["POS (gold, WSJ → UD) (accuracy)"] == pytest.approx(68.0)
    assert values["UDHR retrieval (acc@1)"] == pytest.approx(80.0)  # en->xx, XTREME's direction
    text = md.read_text()
    assert "68.00 ± 4.24 (n=2)" in text  # std of (65, 71)
    assert "| en (dev) |" in text.replace("  ", " ") or "en (dev)" in text
    # the unseen-label count is the total, not doubled by the per-tag keys
    assert "he 3." in text
    pos = summary["tables"]["pos-gold"]["values"]["enc"]
    assert pos["he"] == pytest.approx(62.0) and pos["en"] == pytest.approx(82.0)
    assert "← the configured layer 8" in text
    # avg over the three columns present
    assert values["avg"] == pytest.approx((68.0 + 10.0 + 80.0) / 3)
    assert (tmp_path / "zeroshot_summary.csv").is_file()


def test_avg_left_out_when_a_column_is_missing(tmp_path: Path) -> None:
    runs = [_run(tmp_path, "pos-gold", 1, 80.0, {"he": 60.0})]
    summary = write_zeroshot_tables(
        runs=runs,
        retrieval=[],
        md_path=tmp_path / "zs.md",
        summary_path=tmp_path / "zs.json",
        encoders=["enc", "other"],
        tasks=["pos-gold"],
        retrieval_sets=[],
    )
    assert summary["tables"]["summary"]["values"]["other"]["avg"] is None
    assert "| other" in (tmp_path / "zs.md").read_text()


def test_a_recipe_that_is_not_the_protocols_is_named_under_its_table(tmp_path: Path) -> None:
    """A run's recorded deviations (class-weighted loss, entity-dense sample) appear in
    the notes of its task's table, once, and not under a task whose runs have none."""
    loss = "class-weighted cross-entropy (inverse label frequency ^ 1, at most 1000)"
    recipe = {"deviations": [loss, "training sample with 128 of 256 sentences holding an entity"]}
    runs = [
        _run(tmp_path, "ner-gold", 1, 30.0, {"he": 15.0}, recipe=recipe),
        _run(tmp_path, "ner-gold", 2, 32.0, {"he": 16.0}, recipe=recipe),
        _run(tmp_path, "pos-gold", 1, 80.0, {"he": 60.0}, recipe={"deviations": []}),
    ]
    md = tmp_path / "zs.md"
    write_zeroshot_tables(
        runs=runs,
        retrieval=[],
        md_path=md,
        summary_path=tmp_path / "zs.json",
        encoders=["enc"],
        tasks=["pos-gold", "ner-gold"],
        retrieval_sets=[],
    )
    text = md.read_text()
    note = f"Not the protocol's recipe: {loss}; training sample with 128 of 256"
    assert text.count(note) == 1
    pos_section = text.split("POS (gold")[-1].split("NER")[0]
    assert "Not the protocol's recipe" not in pos_section
