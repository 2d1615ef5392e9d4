"""Per-example scores read from predictions files and BLI records, aligned by id."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.evaluation.tasks.metrics import accuracy, qa_scores, span_f1, token_accuracy
from xlalign.reporting.examples import (
    align,
    bli_query_hits,
    finetune_examples,
    paired_counts,
    paired_means,
    predictions_file,
    read_predictions,
    retrieval_hits,
    retrieval_predictions_file,
    span_counts,
)
from xlalign.reporting.significance import span_f1_from_counts


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def _tagged(path: Path, gold: list[list[str]], pred: list[list[str]], ids=None) -> Path:
    ids = ids or [f"s{i}" for i in range(len(gold))]
    rows = [{"id": i, "prediction": p, "gold": g} for i, g, p in zip(ids, gold, pred, strict=True)]
    return _jsonl(path, rows)


NER_GOLD = [
    ["B-PER", "I-PER", "O", "B-LOC"],
    ["O", "O"],
    ["B-ORG", "I-ORG", "I-ORG"],
    ["O", "B-LOC", "I-LOC"],
]
NER_PRED = [
    ["B-PER", "I-PER", "O", "O"],
    ["B-LOC", "O"],
    ["B-ORG", "I-ORG", "O"],
    ["O", "I-LOC", "I-LOC"],  # IOB1-style start: seqeval reads it as a LOC chunk
]


def test_ner_counts_sum_to_span_f1(tmp_path: Path) -> None:
    path = _tagged(tmp_path / "he.jsonl", NER_GOLD, NER_PRED)
    ex = finetune_examples(path, "ner-gold")
    assert ex.kind == "span" and ex.ids == ("s0", "s1", "s2", "s3") and ex.values == {}
    # (correct, n_pred, n_gold) per sentence, by hand
    assert ex.counts.tolist() == [[1, 1, 2], [0, 1, 0], [0, 1, 1], [1, 1, 1]]
    ref = span_f1(NER_GOLD, NER_PRED)
    assert ex.counts.sum(axis=0).tolist() == [ref["n_correct"], ref["n_pred"], ref["n_gold"]]
    assert span_f1_from_counts(ex.counts) == pytest.approx(ref["f1"])
    with pytest.raises(InputError, match=r"no per-example 'f1'.*use the counts"):
        ex.metric("f1")


def test_span_counts_assign_chunks_to_their_sentence() -> None:
    gold = [["B-PER"], [], ["I-LOC", "I-LOC"], ["B-PER"]]
    pred = [["B-PER"], [], ["B-LOC", "I-LOC"], ["O"]]
    assert span_counts(gold, pred).tolist() == [[1, 1, 1], [0, 0, 0], [1, 1, 1], [0, 0, 1]]
    with pytest.raises(ValueError, match="2 gold sentences but 1"):
        span_counts(gold[:2], pred[:1])


def test_pos_accuracy_per_sentence(tmp_path: Path) -> None:
    gold = [["NOUN", "VERB", "PUNCT"], [], ["DET", "NOUN"]]
    pred = [["NOUN", "NOUN", "PUNCT"], [], ["DET", "NOUN"]]
    ex = finetune_examples(_tagged(tmp_path / "tr.jsonl", gold, pred), "pos-gold")
    assert ex.ids == ("s0", "s2") and ex.left_out == 1  # the empty sentence has no score
    assert ex.metric("accuracy") == pytest.approx([200 / 3, 100.0])
    assert ex.counts.tolist() == [[2, 3], [2, 2]]
    micro = 100.0 * ex.counts[:, 0].sum() / ex.counts[:, 1].sum()
    assert micro == pytest.approx(token_accuracy(gold, pred))
    bad = _tagged(tmp_path / "bad.jsonl", [["NOUN"]], [["NOUN", "VERB"]])
    with pytest.raises(InputError, match=r"bad.jsonl: id 's0': 1 gold labels but 2"):
        finetune_examples(bad, "pos-gold")


def test_qa_scores_per_question(tmp_path: Path) -> None:
    rows = [
        {"id": "q1", "prediction": "the cat", "gold": ["Cat", "a dog"]},
        {"id": "q2", "prediction": "big red house", "gold": ["red house"]},
        {"id": "q3", "prediction": "", "gold": ["x"], "no_span": True},
        {"id": "q4", "prediction": "y", "gold": [" "]},  # no gold answer: left out
    ]
    ex = finetune_examples(_jsonl(tmp_path / "xquad" / "de.jsonl", rows), "xquad")
    assert ex.ids == ("q1", "q2", "q3") and ex.left_out == 1
    assert ex.metric("exact_match").tolist() == [100.0, 0.0, 0.0]
    assert ex.metric("f1") == pytest.approx([100.0, 80.0, 0.0])  # P 2/3, R 1 -> 0.8
    ref = qa_scores(
        {r["id"]: r["prediction"] for r in rows},
        {r["id"]: [a for a in r["gold"] if a.strip()] for r in rows},
    )
    assert ex.metric("f1").mean() == pytest.approx(ref["f1"])
    assert ex.metric("exact_match").mean() == pytest.approx(ref["exact_match"])


def test_mlqa_normalises_for_the_file_language(tmp_path: Path) -> None:
    rows = [{"id": "q1", "prediction": "der Hund", "gold": ["Hund"]}]
    de = finetune_examples(_jsonl(tmp_path / "de.jsonl", rows), "mlqa")
    assert de.metric("exact_match").tolist() == [100.0]  # German articles dropped
    es = finetune_examples(_jsonl(tmp_path / "es.jsonl", rows), "mlqa")
    assert es.metric("exact_match").tolist() == [0.0]
    dev = finetune_examples(_jsonl(tmp_path / "x.dev.jsonl", rows), "mlqa", language="de")
    assert dev.metric("exact_match").tolist() == [100.0]


def test_classification_and_unsupported_families(tmp_path: Path) -> None:
    gold, pred = ["yes", "no", "no", "yes"], ["yes", "no", "yes", "no"]
    rows = [
        {"id": f"p{i}", "prediction": p, "gold": g}
        for i, (g, p) in enumerate(zip(gold, pred, strict=True))
    ]
    ex = finetune_examples(_jsonl(tmp_path / "fr.jsonl", rows), "pawsx")
    assert ex.metric("accuracy").tolist() == [100.0, 100.0, 0.0, 0.0]
    assert ex.metric("accuracy").mean() == pytest.approx(accuracy(gold, pred))
    with pytest.raises(ConfigError, match="parsing"):
        finetune_examples(tmp_path / "fr.jsonl", "udparse")
    with pytest.raises(ConfigError, match="unknown zero-shot task"):
        finetune_examples(tmp_path / "fr.jsonl", "nope")


def test_read_predictions_errors(tmp_path: Path) -> None:
    p = tmp_path / "he.jsonl"
    p.write_text('{"id": "a", "prediction": 1, "gold": 1}\n{oops\n', "utf-8")
    with pytest.raises(InputError, match=r"he\.jsonl: line 2: not JSON"):
        read_predictions(p)
    p.write_text('{"id": "a", "prediction": 1}\n', "utf-8")
    with pytest.raises(InputError, match="line 1: expected an object with 'id'"):
        read_predictions(p)
    row = '{"id": "a", "prediction": 1, "gold": 1}\n'
    p.write_text(row + "\n" + row, "utf-8")
    with pytest.raises(InputError, match="line 3: id 'a' occurs twice"):
        read_predictions(p)
    p.write_text("\n", "utf-8")
    with pytest.raises(InputError, match="no predictions"):
        read_predictions(p)


def test_predictions_file_from_results(tmp_path: Path) -> None:
    run = tmp_path / "ner-gold"
    files = {"en/dev": "predictions/en.dev.jsonl", "he": "predictions/he.jsonl"}
    (run / "ft1" / "predictions").mkdir(parents=True)
    (run / "ft1" / "predictions" / "he.jsonl").write_text("{}\n")
    for stats in (run / "ft1.json", run / "ft1" / "results.json"):
        stats.write_text(json.dumps({"predictions": files}))
        assert predictions_file(stats, "he") == run / "ft1" / "predictions" / "he.jsonl"
    with pytest.raises(InputError, match=r"no predictions for 'ja'; there are: en/dev, he"):
        predictions_file(run / "ft1.json", "ja")
    with pytest.raises(InputError, match=r"en\.dev\.jsonl .* does not exist"):
        predictions_file(run / "ft1.json", "en/dev")


# --------------------------------------------------------------------------- alignment


def _pos_run(path: Path, pred_rows: dict[str, list[str]]) -> Path:
    gold = {"a": ["NOUN", "VERB"], "b": ["DET", "NOUN", "NOUN"], "c": ["PUNCT"]}
    rows = [{"id": i, "prediction": p, "gold": gold[i]} for i, p in pred_rows.items()]
    return _jsonl(path, rows)


def test_align_orders_by_id_and_names_both_files(tmp_path: Path) -> None:
    a = finetune_examples(
        _pos_run(tmp_path / "A" / "he.jsonl", {"a": ["NOUN", "VERB"], "b": ["DET", "X", "X"]}),
        "pos-gold",
    )
    b = finetune_examples(
        _pos_run(tmp_path / "B" / "he.jsonl", {"b": ["DET", "NOUN", "NOUN"], "a": ["X", "X"]}),
        "pos-gold",
    )
    a2, b2 = align(a, b)
    assert a2 is a and b2.ids == a.ids == ("a", "b")
    assert b2.metric("accuracy").tolist() == [0.0, 100.0]
    assert b2.counts.tolist() == [[0, 2], [3, 3]]
    c = finetune_examples(
        _pos_run(tmp_path / "C" / "he.jsonl", {"a": ["NOUN", "VERB"], "c": ["PUNCT"]}),
        "pos-gold",
    )
    with pytest.raises(InputError, match=r"A/he.jsonl and .*C/he.jsonl: not the same examples"):
        align(a, c)
    a3, c3 = align(a, c, common=True)
    assert a3.ids == c3.ids == ("a",)


def test_paired_means_and_counts_over_seeds(tmp_path: Path) -> None:
    def run(name: str, tags_b: list[str]) -> object:
        path = _pos_run(tmp_path / name / "he.jsonl", {"b": tags_b, "a": ["NOUN", "VERB"]})
        return finetune_examples(path, "pos-gold")

    a_runs = [run("a1", ["DET", "NOUN", "NOUN"]), run("a2", ["DET", "X", "NOUN"])]
    b_runs = [run("b1", ["X", "X", "X"]), run("b2", ["DET", "X", "X"])]
    mean_a, mean_b = paired_means(a_runs, b_runs, "accuracy")  # in a1's order: b, a
    assert mean_a == pytest.approx([(100 + 200 / 3) / 2, 100.0])
    assert mean_b == pytest.approx([(0 + 100 / 3) / 2, 100.0])
    ca, cb = paired_counts(a_runs, b_runs)
    assert ca.shape == cb.shape == (2, 2, 2)
    assert cb[:, 0].tolist() == [[0, 3], [1, 3]]
    with pytest.raises(InputError, match=r"2 runs of model A .* but 1 of model B"):
        paired_counts(a_runs, b_runs[:1])


# --------------------------------------------------------------------------- retrieval, BLI


def test_retrieval_hits(tmp_path: Path) -> None:
    preds = {"ids": ["p1", "p2", "p3", "p4"], "xx->en": ["p1", "p3", "p3", "p4"]}
    preds["en->xx"] = ["p2", "p2", "p3", "p1"]
    (tmp_path / "udhr").mkdir()
    path = tmp_path / "udhr" / "de.json"
    path.write_text(json.dumps(preds))
    assert retrieval_predictions_file(tmp_path / "udhr.json", "de") == path
    with pytest.raises(InputError, match=r"fr\.json for 'fr' do not exist"):
        retrieval_predictions_file(tmp_path / "udhr.json", "fr")
    xx = retrieval_hits(path, "xx->en")
    assert xx.ids == ("p1", "p2", "p3", "p4") and xx.metric("hits").tolist() == [1, 0, 1, 1]
    assert 100 * xx.metric("hits").mean() == 75.0
    assert retrieval_hits(path, "en->xx").metric("hits").tolist() == [0, 1, 1, 0]
    with pytest.raises(ConfigError, match="direction"):
        retrieval_hits(path, "de->en")


def _bli_record(oov: str) -> dict:
    scores = {"p@1": 0.5 if oov == "skip" else 0.4, "oov": oov, "hits@1": "1-0", "hits@5": "1-1"}
    return {
        "space": "x2s-m",
        "seed": 1,
        "language": "de",
        "hub": "en",
        "results": {"en-de": {"queries": "house cat dog", "nn": scores}},
        "skipped": {"de-en": "empty"},
    }


def test_bli_query_hits_follow_the_oov_policy() -> None:
    skip = bli_query_hits(_bli_record("skip"), "en-de", "nn")
    assert skip.ids == ("house", "dog") and skip.metric("hits").tolist() == [1.0, 0.0]
    assert skip.left_out == 1
    miss = bli_query_hits(_bli_record("miss"), "en-de", "nn", k=5)
    assert miss.ids == ("house", "cat", "dog") and miss.metric("hits").tolist() == [1, 0, 1]
    with pytest.raises(InputError, match="'de-en' \\(skipped: empty\\)"):
        bli_query_hits(_bli_record("skip"), "de-en", "nn")
    with pytest.raises(InputError, match="no per-query 'hits@10'"):
        bli_query_hits(_bli_record("skip"), "en-de", "nn", k=10)
    with pytest.raises(InputError, match="no 'csls' retrieval"):
        bli_query_hits(_bli_record("skip"), "en-de", "csls")
    a = bli_query_hits(_bli_record("skip"), "en-de", "nn")
    b = bli_query_hits(_bli_record("miss"), "en-de", "nn")
    a2, b2 = align(a, b, common=True)
    assert a2.ids == b2.ids == ("house", "dog")
    assert np.array_equal(b2.metric("hits"), [1.0, 0.0])
