"""The zero-shot stage of the embedded default end to end (the shrunk run of
e2e/conftest.py): gold task data built from packages, fine-tuning with the seeds of the
run,
retrieval with its layer sweep, the zero-shot tables and their MLflow mirror."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest
from snakemake_runner import embedded_config

RES = "results/embedded"
ENCODER = "multilingual-e5-small"


@pytest.fixture(scope="module")
def run(embedded_run: Path) -> Path:
    return embedded_run


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow
def test_task_data_is_gold_and_mapped(run: Path) -> None:
    cfg = embedded_config()
    for task, spec in cfg["zeroshot"]["tasks"].items():
        for lang in ["en", *spec["languages"]]:
            stats = _read(run / f"resources/tasks/{task}/{lang}/stats.json")
            assert stats["silver"] is False, (task, lang)
            assert stats["label_map"], (task, lang)  # explicit, printed with the results
    tags = collections.Counter(
        t for r in _records(run / "resources/tasks/pos-gold/en/train.jsonl") for t in r["tags"]
    )
    upos = set(
        "ADJ ADP ADV AUX CCONJ DET INTJ NOUN NUM PART PRON PROPN PUNCT SCONJ SYM VERB X".split()
    )
    assert set(tags) <= upos and {"NOUN", "VERB", "AUX", "SCONJ", "PART"} <= set(tags)


@pytest.mark.slow
def test_pos_beats_the_majority_class_and_transfers(run: Path) -> None:
    cfg = embedded_config()
    dev = _records(run / "resources/tasks/pos-gold/en/dev.jsonl")
    dev = dev[: cfg["zeroshot"]["tasks"]["pos-gold"]["params"]["max_dev_examples"]]
    counts = collections.Counter(t for r in dev for t in r["tags"])
    majority = 100 * counts.most_common(1)[0][1] / sum(counts.values())
    seeds = cfg["zeroshot"]["seeds"]
    for seed in seeds:
        res = _read(run / f"{RES}/zeroshot/{ENCODER}/pos-gold/ft{seed}.json")
        assert res["seed"] == seed and res["params"]["learning_rate"] == 5e-4
        en = res["scores"]["en/dev"]
        assert en["accuracy"] > majority + 10, (seed, en["accuracy"], majority)
        # XTREME's POS "F1" (seqeval over tags) is reported beside token accuracy
        assert 0 <= en["f1"] <= 100 and en["f1"] != en["accuracy"]
        summary = res["summary"]
        assert summary["english_split"] == "dev" and set(summary["per_language"]) == {
            "he",
            "id",
            "tr",
        }
        gap = summary["transfer"]
        mean = sum(summary["per_language"].values()) / 3
        assert gap["gap"] == pytest.approx(summary["english"] - mean)
        # one prediction per test sentence, aligned with the gold words
        preds = _records(run / f"{RES}/zeroshot/{ENCODER}/pos-gold/ft{seed}/predictions/tr.jsonl")
        assert len(preds) == res["data"]["tests"]["tr"]["examples"]
        assert all(len(p["prediction"]) == len(p["gold"]) for p in preds)
    if len(seeds) > 1:
        one, two = (
            _read(run / f"{RES}/zeroshot/{ENCODER}/pos-gold/ft{s}.json")["scores"]
            for s in seeds[:2]
        )
        assert one != two  # the fine-tuning seed matters


@pytest.mark.slow
def test_ner_runs_are_scored_by_spans(run: Path) -> None:
    res = _read(run / f"{RES}/zeroshot/{ENCODER}/ner-gold/ft1.json")
    assert set(res["summary"]["per_language"]) == {"he", "ja"}
    for split in ("en/dev", "he", "ja"):
        s = res["scores"][split]
        assert {"precision", "recall", "f1"} <= set(s)
    # the training slice's labels, from the PER/LOC/ORG map of WNUT-16
    assert {"O", "B-PER", "B-LOC"} <= set(res["labels"])
    assert set(res["labels"]) <= {"B-LOC", "B-ORG", "B-PER", "I-LOC", "I-ORG", "I-PER", "O"}
    assert not (run / f"{RES}/zeroshot/{ENCODER}/ner-gold/ft1.work").exists()  # cleaned up


@pytest.mark.slow
def test_retrieval_with_layer_sweep(run: Path) -> None:
    bible = _read(run / f"{RES}/zeroshot/{ENCODER}/retrieval/bible.json")
    assert bible["layer"] == 8 and bible["depth"] == 12  # XTREME's layer 7 = hidden_states[8]
    for lang, res in bible["languages"].items():
        want = embedded_config()["embedded"]["bible_retrieval_max_pairs"]
        assert res["counts"]["pairs"] == want, lang
        for direction in ("en->xx", "xx->en"):
            sweep = res["sweep"][direction]
            assert len(sweep) == 13  # embeddings + 12 layers, from one pass
            assert res["accuracy"][direction] == pytest.approx(sweep[8])
    # far above chance (1 %) for German at XTREME's layer
    assert bible["languages"]["de"]["accuracy"]["en->xx"] > 30
    udhr = _read(run / f"{RES}/zeroshot/{ENCODER}/retrieval/udhr.json")
    assert set(udhr["languages"]) == set(
        embedded_config()["zeroshot"]["retrieval"]["sets"]["udhr"]["languages"]
    )
    # one job per encoder wrote both sets; its summary holds each set's results
    summary = _read(run / f"{RES}/zeroshot/{ENCODER}/retrieval.json")
    assert summary["sets"] == {"udhr": udhr, "bible": bible}
    assert not (run / f"{RES}/zeroshot/{ENCODER}/retrieval.work").exists()


@pytest.mark.slow
def test_zeroshot_tables(run: Path) -> None:
    md = (run / f"{RES}/tables/zeroshot.md").read_text(encoding="utf-8")
    assert "Table 3 shape" in md
    for title in (
        "POS (gold, WSJ → UD)",
        "NER (gold, WNUT-16",
        "UDHR retrieval",
        "Bible retrieval",
    ):
        assert title in md, title
    # not XTREME's data, so no column carries XTREME's names (footnotes name the recipes)
    assert "UD-POS (" not in md and "PAN-X (" not in md
    assert "by layer" in md and "← the configured layer 8" in md
    summary = _read(run / f"{RES}/tables/zeroshot.json")
    assert {"summary", "pos-gold", "ner-gold"} <= set(summary["tables"])


@pytest.mark.slow
def test_mlflow_mirrors_runs_and_learning_curves(run: Path) -> None:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{run / 'results/mlflow.db'}")
    exp = client.get_experiment_by_name("xlalign/embedded")
    runs = client.search_runs([exp.experiment_id], max_results=1000)
    by_job = {r.data.tags.get("xlalign.job"): r for r in runs}
    for job in (
        f"finetune/{ENCODER}/pos-gold/1",
        f"finetune/{ENCODER}/ner-gold/{embedded_config()['zeroshot']['seeds'][-1]}",
        f"retrieve/{ENCODER}",
        "labelled_pos_en",
    ):
        assert job in by_job, (job, sorted(j for j in by_job if j))
    pos = by_job[f"finetune/{ENCODER}/pos-gold/1"]
    assert pos.data.metrics["scores.en/dev.accuracy"] > 0
    # one child run per retrieval job, with every set's scores
    retrieval = by_job[f"retrieve/{ENCODER}"].data.metrics
    assert retrieval["sets.bible.languages.de.accuracy.en-_xx"] > 30
    assert "sets.udhr.languages.ja.accuracy.xx-_en" in retrieval
    history = client.get_metric_history(pos.info.run_id, "curve.dev_f1")
    assert len(history) >= 2  # dev evaluations every eval_every steps and at the end
