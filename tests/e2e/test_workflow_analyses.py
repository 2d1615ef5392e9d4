"""Issue 17's stages in the embedded default end to end (the shrunk run of e2e/conftest.py):
derived languages (001), meta-pretraining (004) and the alignment analyses (001/003/004),
with their tables and figures."""

from __future__ import annotations

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


def _validated() -> dict:
    from xlalign.config import validate

    return validate(embedded_config())


@pytest.mark.slow
def test_derived_languages(run: Path) -> None:
    from xlalign.derived.transforms import untransliterate

    cfg = _validated()["derived"]
    res = run / RES / "derived"
    for spec in cfg["transformations"]:
        text = res / "data" / spec / "text"
        natural = (text / "natural.txt").read_text(encoding="utf-8").splitlines()
        derived = (text / "derived.txt").read_text(encoding="utf-8").splitlines()
        assert len(natural) == len(derived) > 0
        # transliterated back, a derived paragraph holds the natural one's words
        assert sorted(untransliterate(w) for w in derived[0].split()) == sorted(natural[0].split())
        if "inv" in spec and "syn" not in spec:
            # inversion within sentences: the last natural word comes first (sentences of
            # one paragraph keep their order)
            assert (
                untransliterate(derived[0].split()[0]) != natural[0].split()[0]
                or len(natural[0].split()) == 1
            )
    records = []
    for r in cfg["runs"]:
        for spec in cfg["transformations"]:
            rec = _read(res / "eval" / f"{r}.{spec}.s1.json")
            records.append(rec)
            t = rec["tasks"]["pos-gold"]
            assert 0 <= t["zs"] <= 100 and 0 <= t["sup"] <= 100
            assert t["delta"] == pytest.approx(t["sup"] - t["zs"])
            al = rec["alignment"]
            assert 0 <= al["embedding_score"] <= 100
            assert len(al["aer_by_layer"]["ot"]) == cfg["arch"]["layers"] + 1
    # ALIGN-MLM pulls the dictionary pairs' input embeddings together: more of its tokens
    # find their counterpart than MLM's, for every composition.
    score = {(rec["run"], rec["spec"]): rec["alignment"]["embedding_score"] for rec in records}
    for spec in cfg["transformations"]:
        assert score[("align-mlm", spec)] > score[("mlm", spec)], score
    summary = _read(run / RES / "tables" / "derived.json")
    corr = summary["correlations"]["pos-gold"]
    assert corr["n"] == len(records)
    assert corr["rho"] is None or -1 <= corr["rho"] <= 1
    table = (run / RES / "tables" / "derived.md").read_text(encoding="utf-8")
    assert "Δ" in table or "Delta" in table
    figures = sorted(p.name for p in (run / RES / "figures" / "derived").glob("*.png"))
    assert len(figures) >= 2, figures
    # every task of the config, tagging (with gold links) and its IOB-repaired NER twin
    assert set(records[0]["tasks"]) == set(cfg["tasks"])
    # 001 Tables 1-2: the sweep runs on their composition, with the shares they trained on
    sweeps = cfg["sweeps"]
    text = res / "data" / sweeps["spec"] / "text"
    assert (text / "parallel.p10.tsv").is_file() and (text / "dictionary.d50.txt").is_file()
    for name, kind, share in (("tlm-p10", "parallel", 0.1), ("align-mlm-d50", "dictionary", 0.5)):
        rec = _read(res / "eval" / f"{name}.{sweeps['spec']}.s1.json")
        assert rec["shares"][kind] == pytest.approx(share)
    parallel = summary["sweeps"]["parallel"]
    assert parallel["rows"] == [
        "tlm, 10 % parallel",
        "tlm, 100 % parallel",
        "align-mlm, 0 % (dictionary only)",
    ]
    assert summary["sweeps"]["dictionary"]["rows"] == ["25 %", "50 %"]
    assert "(001 Table 2)" in table


@pytest.mark.slow
def test_meta_pretraining(run: Path) -> None:
    cfg = _validated()["metapretrain"]
    res = run / RES / "meta"
    counts = {}
    for variant in cfg["variants"]:
        stats = _read(res / "cross" / f"{variant}.s1.json")
        counts[variant] = stats["initialisation"]["counts"]
        rec = _read(res / "eval" / f"{variant}.s1.json")
        assert set(rec["tasks"]) == set(cfg["evaluate"]["tasks"])
        assert set(rec["retrieval"]) == set(cfg["evaluate"]["retrieval"])
    # Only the variants that copy embeddings initialise rows by matching; English pieces
    # of the cross-lingual vocabulary are found in the monolingual one.
    assert counts["emb"]["exact"] > 0 and counts["both"] == counts["emb"]
    total = counts["none"]["total"]
    assert sum(v for k, v in counts["both"].items() if k != "total") == total
    table = (run / RES / "tables" / "metapretrain.md").read_text(encoding="utf-8")
    for variant in ("None", "Body", "Emb", "Both"):
        assert variant in table


@pytest.mark.slow
def test_alignment_analyses(run: Path) -> None:
    cfg = embedded_config()
    res = run / RES / "analysis"
    names = [ENCODER, *(f"{r}.s1" for r in cfg["pretrain"]["runs"])]
    names += [f"{n}@pos-gold" for n in names]
    for name in names:
        rec = _read(res / "encoders" / f"{name}.json")
        assert rec["layers"] == 13  # the embeddings + 12 layers
        for method in ("argmax", "ot"):
            aer = rec["aer_by_layer"][method]
            assert len(aer) == 13 and all(0 <= a <= 1 for a in aer)
        d = rec["distances"]["en-de"]
        assert d["layer"] == 12
        assert d["related"]["n"] > 0 and d["unrelated"]["n"] > 0
    # The original encoder separates translations from unrelated words at its last layer.
    orig = _read(res / "encoders" / f"{ENCODER}.json")["distances"]["en-de"]
    assert orig["related"]["mean"] < orig["unrelated"]["mean"]
    ref = _read(res / "eflomal_reference.json")
    assert 0 <= ref["aer"] <= 1 and ref["training_pairs"] > 0
    summary = _read(run / RES / "tables" / "analysis.json")
    assert summary["best_aer"][ENCODER]["ot"]["layer"] in range(13)
    figures = sorted(p.name for p in (run / RES / "figures" / "analysis").glob("*.png"))
    assert len(figures) >= 2, figures
    # alignment against zero-shot transfer across the encoders before fine-tuning, by layer
    for task in cfg["zeroshot"]["tasks"]:
        rows = summary["alignment_transfer"][task]
        assert len(rows) == 13 and all(r["n"] == len(cfg["pretrain"]["runs"]) + 1 for r in rows)
        assert all(r["rho"] is None or -1 <= r["rho"] <= 1 for r in rows)
    assert "alignment_transfer.png" in figures
