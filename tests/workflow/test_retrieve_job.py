"""The `retrieve` rule of the embedded default as a dry run sees it: one job per encoder
writing every retrieval set's outputs, reached by naming any one set's results."""

from __future__ import annotations

from pathlib import Path

from dry_run import dry_run, key_values

from xlalign import config as xlconfig

ROOT = Path(__file__).resolve().parents[2]
RES = "results/embedded"
ENCODER = "multilingual-e5-small"


def test_one_set_as_target_runs_the_encoders_job_for_every_set(tmp_path: Path) -> None:
    cfg = xlconfig.load(ROOT / "config/config.yaml")
    sets = list(cfg["zeroshot"]["retrieval"]["sets"])
    assert len(sets) >= 2
    target = f"{RES}/zeroshot/{ENCODER}/retrieval/{sets[-1]}.json"
    (job,) = [f for rule, f in dry_run(tmp_path, target) if rule == "retrieve"]
    assert key_values(job["wildcards"]) == {"encoder": ENCODER}
    base = f"{RES}/zeroshot/{ENCODER}"
    assert set(job["output"].split(", ")) == {
        *(f"{base}/retrieval/{s}" for s in sets),
        *(f"{base}/retrieval/{s}.json" for s in sets),
        f"{base}/retrieval.json",
    }
    assert job["log"] == f"logs/embedded/retrieve/{ENCODER}.log"
    assert job["benchmark"] == f"{RES}/benchmarks/retrieve/{ENCODER}.tsv"


def test_all_has_one_retrieval_job_per_encoder(tmp_path: Path) -> None:
    jobs = dry_run(tmp_path, "all")
    encoders = [key_values(f["wildcards"])["encoder"] for rule, f in jobs if rule == "retrieve"]
    # the configured encoder and the continued pre-training checkpoints, once each
    assert ENCODER in encoders and len(encoders) > 1
    assert len(encoders) == len(set(encoders))
    finetuned = {key_values(f["wildcards"])["encoder"] for rule, f in jobs if rule == "finetune"}
    assert set(encoders) <= finetuned
