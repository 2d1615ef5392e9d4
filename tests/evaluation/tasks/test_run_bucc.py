"""BUCC through run_retrieval: the corpora prepare_task writes, mined and scored."""

from __future__ import annotations

import json
from pathlib import Path

from xlalign.evaluation.tasks.data import write_records
from xlalign.evaluation.tasks.formats import BuccCorpus, write_bucc

EN = ["the cat sat on the mat", "a dog ran", "the sun is red", "the moon is big", "a red cat"]


def test_bucc_mining_from_prepared_files(tmp_path: Path) -> None:
    from tiny_encoder import make_tiny_encoder

    from xlalign.evaluation.tasks.run import run_retrieval

    enc = make_tiny_encoder(tmp_path / "enc", EN, layers=2)
    d = tmp_path / "bucc" / "de"
    for split in ("dev", "test"):
        # the "other language" is English itself: every gold pair is an exact copy
        src = {f"de-{i}": s for i, s in enumerate(EN)}
        tgt = {f"en-{i}": s for i, s in enumerate(EN)}
        gold = [(f"de-{i}", f"en-{i}") for i in range(3)]
        write_bucc(BuccCorpus("de", split, src, tgt, gold), d, split)
    write_records(d / "test.jsonl", BuccCorpus("de", "test", src, tgt, gold).pairs())
    out = tmp_path / "bucc.json"
    res = run_retrieval(
        "bucc", encoder=enc, encoder_name="tiny", sets={"de": d / "test.jsonl"}, stats_path=out,
        layer=2,
    )  # fmt: skip
    de = res["languages"]["de"]
    assert de["protocol"] == "BUCC F1 (XTREME protocol)"
    assert {"precision", "recall", "f1"} <= set(de["test"])
    assert de["test"]["recall"] > 0
    assert json.loads(out.read_text())["languages"]["de"]["threshold"] == de["threshold"]
