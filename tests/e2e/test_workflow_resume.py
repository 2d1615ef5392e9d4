"""A workflow job pre-empted with SIGTERM part-way resumes from its checkpoint on the re-run.

One real Snakemake run up to one X2Static space: while the x2static job trains, it gets
SIGTERM (as Slurm sends on pre-emption; sent to the job's own process, found by its
command line and working directory). The job writes its checkpoint and exits 143,
Snakemake marks it failed (no output left), the re-run resumes from the checkpoint (the
job's log says where) and ends with the same vectors as an uninterrupted run of the job.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from small_corpora import EN, corpus_text
from snakemake_runner import BIN, ROOT, snakemake

NAME = "rs"
TARGET = f"results/{NAME}/static/seed1/x2s-m/en.npy"
CKPT = f"results/{NAME}/static/seed1/x2s-m/en.checkpoint/checkpoint/state.pt"
LOG = f"logs/{NAME}/x2static/seed1/en.log"


def _config(work: Path) -> dict:
    from tiny_encoder import make_tiny_encoder

    (work / "data").mkdir(parents=True)
    (work / "data" / "en.txt").write_text(corpus_text(EN), encoding="utf-8")
    (work / "data" / "de.txt").write_text(corpus_text(EN[::-1]), encoding="utf-8")
    make_tiny_encoder(work / "encoder", [corpus_text(EN)])
    return {
        "name": NAME,
        "languages": ["en", "de"],
        "seeds": [1],
        "encoder": {"source": "local", "path": str(work / "encoder")},
        "extract": {
            "layer": 1,
            "vocab": {"min_count": 2},
            # long enough to be stopped part-way: about 850 batches of 8 sentences
            "epochs": 120,
            "batch_sentences": 8,
            "subsample_t": 1e-3,
            "checkpoint_every_batches": 100,
            "aggregation": {"enabled": False},
        },
        "corpus": {
            "max_sentences": 60,
            "sources": {
                lang: [{"type": "text", "path": f"data/{lang}.txt"}] for lang in ("en", "de")
            },
        },
        "segment": {"tools": {"en": "icu", "de": "icu"}},
        # a checkpoint at every chance (every 100 batches), not every 10 minutes of work
        "checkpoints": {"interval_minutes": 0},
    }


def _job_pids(work: Path, script: str) -> list[int]:
    """Processes running ``script`` (a Snakemake job script) with ``work`` as their cwd."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if script in cmd and "python" in cmd and Path(cwd) == work:
            pids.append(int(entry.name))
    return pids


def _snakemake_popen(work: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "HF_HUB_OFFLINE": "1"}
    cmd = [str(BIN / "snakemake"), "-s", str(ROOT / "Snakefile"), "--directory", str(work)]
    return subprocess.Popen(
        [*cmd, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=work
    )


@pytest.mark.slow
def test_sigterm_preempted_job_resumes_on_rerun(tmp_path: Path) -> None:
    work = tmp_path.resolve()
    (work / "c.yaml").write_text(yaml.safe_dump(_config(work)))
    args = ("--configfile", "c.yaml", "--cores", "1", TARGET)
    proc = _snakemake_popen(work, *args)
    try:
        deadline = time.monotonic() + 240
        while not (work / CKPT).exists():
            assert proc.poll() is None, proc.communicate()[0].decode()[-4000:]
            assert time.monotonic() < deadline, "no x2static checkpoint within 240 s"
            time.sleep(0.05)
        pids = _job_pids(work, "x2static.py")
        assert len(pids) == 1, pids
        os.kill(pids[0], signal.SIGTERM)
        out = proc.communicate(timeout=120)[0].decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0, out
    assert "Error in rule x2static" in out and "143" in out, out[-4000:]
    log = (work / LOG).read_text(encoding="utf-8")
    assert "job stopped by SIGTERM (x2static, checkpoint" in log
    assert "a re-run resumes from its checkpoint" in log
    assert (work / CKPT).exists()  # kept: not an output of the job
    # nothing finished-looking
    for suffix in (".npy", ".vec", ".vocab.txt", ".manifest.json", ".json"):
        assert not (work / TARGET).with_suffix(suffix).exists(), suffix
    assert not [p for p in (work / TARGET).parent.rglob(".*") if ".tmp" in p.name]

    import torch

    state = torch.load(work / CKPT, map_location="cpu", weights_only=True)
    where = f"resuming at epoch {state['epoch']}, batch {state['batch']}"
    assert state["progress"]["batches_done"] > 0

    snakemake(work, *args)  # the re-run
    assert where in (work / LOG).read_text(encoding="utf-8")
    assert not (work / CKPT).parent.parent.exists()  # removed once the job succeeded
    stats = json.loads((work / TARGET).with_suffix(".json").read_text())
    assert stats["resumed_from"] == {"epoch": state["epoch"], "batch": state["batch"]}
    resumed = np.load(work / TARGET)

    snakemake(work, *args, "--forcerun", "x2static")  # uninterrupted, same seed
    straight = json.loads((work / TARGET).with_suffix(".json").read_text())
    assert straight["resumed_from"] is None
    np.testing.assert_array_equal(resumed, np.load(work / TARGET))
    assert stats["final_loss"] == pytest.approx(straight["final_loss"], rel=1e-12)
