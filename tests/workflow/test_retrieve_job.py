"""The `retrieve` rule of the embedded default as a dry run sees it: one job per encoder
writing every retrieval set's outputs, reached by naming any one set's results."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from dry_run import dry_run_jobs, key_values

from xlalign import config as xlconfig

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ENV = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}
RES = "results/embedded"
ENCODER = "multilingual-e5-small"


def _dry(cwd: Path, *targets: str) -> list[tuple[str, dict[str, str]]]:
    r = subprocess.run(
        [str(BIN / "snakemake"), "-s", str(ROOT / "Snakefile"), "-n", *targets],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return dry_run_jobs(r.stdout + r.stderr)


def test_one_set_as_target_runs_the_encoders_job_for_every_set(tmp_path: Path) -> None:
    cfg = xlconfig.load(ROOT / "config/config.yaml")
    sets = list(cfg["zeroshot"]["retrieval"]["sets"])
    assert len(sets) >= 2
    target = f"{RES}/zeroshot/{ENCODER}/retrieval/{sets[-1]}.json"
    (job,) = [f for rule, f in _dry(tmp_path, target) if rule == "retrieve"]
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
    jobs = _dry(tmp_path, "all")
    encoders = [key_values(f["wildcards"])["encoder"] for rule, f in jobs if rule == "retrieve"]
    # the configured encoder and the continued pre-training checkpoints, once each
    assert ENCODER in encoders and len(encoders) > 1
    assert len(encoders) == len(set(encoders))
    finetuned = {key_values(f["wildcards"])["encoder"] for rule, f in jobs if rule == "finetune"}
    assert set(encoders) <= finetuned
