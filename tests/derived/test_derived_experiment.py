"""The derived-language experiment from files to records on a tiny model: a Tables 1-2
run (a dictionary share) pre-trained, then fine-tuned on a tagging and a sentence-pair
task (ZS, SUP, Delta) with the alignment analyses of the tagging task's test pairs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from xlalign.core.errors import InputError
from xlalign.core.io import read_json
from xlalign.evaluation.tasks.data import PairExample, TaggedSentence, write_records

SENTENCES = [
    ("The old man ate red apples .", ["DET", "ADJ", "NOUN", "VERB", "ADJ", "NOUN", "PUNCT"]),
    ("A small dog chased the big cat .",
     ["DET", "ADJ", "NOUN", "VERB", "DET", "ADJ", "NOUN", "PUNCT"]),
    ("Sara wrote long letters .", ["PROPN", "VERB", "ADJ", "NOUN", "PUNCT"]),
    ("The cat climbed a tall tree .", ["DET", "NOUN", "VERB", "DET", "ADJ", "NOUN", "PUNCT"]),
]  # fmt: skip
PAIRS = [
    ("The old man ate red apples.", "A man ate.", "entailment"),
    ("Sara wrote long letters.", "Sara wrote nothing.", "contradiction"),
    ("A small dog chased the big cat.", "The cat ran.", "neutral"),
]
ARCH = {"layers": 1, "hidden": 16, "heads": 2, "intermediate": 32, "max_position": 64}
SECTION = {
    "steps": 3,
    "max_length": 32,
    "learning_rate": 1e-3,
    "eval_every": 3,
    "log_every": 1,
    "validation_paragraphs": 2,
    "objectives": {"mlm": {"batch_size": 4}},
}
FT = {"epochs": 1, "learning_rate": 1e-3, "batch_size": 4, "max_length": 32, "eval_every": 2}


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory, nlp: Any) -> Path:
    from xlalign.derived.data import build_derived_task, build_derived_text

    root = tmp_path_factory.mktemp("derived")
    text = root / "en.txt"
    text.write_text(
        "\n".join(" ".join(s for s, _ in SENTENCES[k:] + SENTENCES[:k]) for k in range(4)) + "\n",
        encoding="utf-8",
    )
    out = root / "trans+inv"
    build_derived_text(
        text, out / "text", spec="trans+inv", seed=1, max_paragraphs=None, nlp=nlp,
        dictionary_fractions=[0.5], parallel_fractions=[0.5],
    )  # fmt: skip
    tag = [TaggedSentence(f"t{k}", s.split(), tags) for k, (s, tags) in enumerate(SENTENCES * 3)]
    write_records(root / "pos.train.jsonl", tag)
    write_records(root / "pos.dev.jsonl", tag[:4])
    pairs = [PairExample(f"p{k}", *p) for k, p in enumerate(PAIRS * 4)]
    write_records(root / "nli.train.jsonl", pairs)
    write_records(root / "nli.dev.jsonl", pairs[:3])
    for task, kind, name in (("pos-gold", "tagging", "pos"), ("xnli", "pair", "nli")):
        build_derived_task(
            root / f"{name}.train.jsonl", root / f"{name}.dev.jsonl", out / "tasks" / task,
            spec="trans+inv", seed=1, test_size=4, kind=kind, nlp=nlp,
        )  # fmt: skip
    return out


def test_a_dictionary_share_run_from_pretraining_to_delta(data: Path, tmp_path: Path) -> None:
    from xlalign.derived.experiment import run_derived_evaluate, run_derived_pretrain

    model = tmp_path / "align-mlm-d50"
    rec = run_derived_pretrain(
        "align-mlm-d50", spec="trans+inv", data_dir=data, output_dir=model,
        stats_path=tmp_path / "pre.json", work_dir=tmp_path / "pre.work", vocab_size=200,
        arch=ARCH, section=SECTION, seed=1, progress=False,
    )  # fmt: skip
    assert rec["row"] == "align-mlm" and rec["run"] == "align-mlm-d50"
    assert rec["shares"] == {"parallel": 0.0, "dictionary": 0.5}
    text_stats = read_json(data / "text" / "stats.json")
    # ALIGN-MLM read the 50 % dictionary, not the base one
    read = rec["data"]["align_mlm"]["languages"]["xx"]["pairs_read"]
    assert read == text_stats["dictionaries"]["dictionary.d50.txt"]
    out = run_derived_evaluate(
        model_dir=model, model_name="align-mlm-d50.trans+inv.s1", run="align-mlm-d50",
        spec="trans+inv", tasks={t: data / "tasks" / t for t in ("pos-gold", "xnli")},
        task_settings={t: {"params": FT} for t in ("pos-gold", "xnli")}, seed=1,
        output=tmp_path / "eval.json", work_dir=tmp_path / "eval.work",
        pretrain_stats=tmp_path / "pre.json",
    )  # fmt: skip
    assert read_json(tmp_path / "eval.json") == out
    assert out["shares"]["dictionary"] == 0.5 and out["row"] == "align-mlm"
    for task, metric in (("pos-gold", "accuracy"), ("xnli", "accuracy")):
        t = out["tasks"][task]
        assert t["metric"] == metric
        assert 0 <= t["zs"] <= 100 and 0 <= t["sup"] <= 100
        assert t["delta"] == pytest.approx(t["sup"] - t["zs"])
    align = out["alignment"]
    assert 0 <= align["embedding_score"] <= 100
    assert len(align["aer_by_layer"]["ot"]) == ARCH["layers"] + 1  # from the tagging task


def test_a_share_that_was_not_built_is_named(data: Path, tmp_path: Path) -> None:
    from xlalign.derived.experiment import run_derived_pretrain

    with pytest.raises(InputError, match=r"parallel\.p10\.tsv: not found"):
        run_derived_pretrain(
            "tlm-p10", spec="trans+inv", data_dir=data, output_dir=tmp_path / "m",
            stats_path=tmp_path / "m.json", work_dir=tmp_path / "w", vocab_size=200,
            arch=ARCH, section=SECTION, seed=1, progress=False,
        )  # fmt: skip
