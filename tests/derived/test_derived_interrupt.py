"""A derived-language pre-training job (001) stopped part-way: by SIGTERM, the checkpoint
of the step in progress is written and the job exits 143; by SIGKILL, the last periodic
checkpoint is all there is. Either way the re-run trains the same
tokenizer and initial encoder again, resumes from that step and ends with the model and
learning curve of an uninterrupted run; success leaves no work directory."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
import resume
import torch

ARCH = {"layers": 1, "hidden": 16, "heads": 2, "intermediate": 32, "max_position": 64}
SECTION = {
    "steps": 16,
    "max_length": 32,
    "learning_rate": 1e-3,
    "eval_every": 4,
    "log_every": 2,
    "validation_paragraphs": 2,
    "validation_batch_size": 4,
    "objectives": {"mlm": {"batch_size": 4}},
}
SENTENCES = [
    "The old man ate red apples .",
    "A small dog chased the big cat .",
    "Sara wrote long letters .",
    "The cat climbed a tall tree .",
]


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory, nlp: Any) -> Path:
    from xlalign.derived.data import build_derived_text

    root = tmp_path_factory.mktemp("derived")
    text = root / "en.txt"
    paras = [" ".join(SENTENCES[k:] + SENTENCES[:k]) for k in range(4)] * 3
    text.write_text("\n".join(paras) + "\n", encoding="utf-8")
    out = root / "trans+inv"
    build_derived_text(text, out / "text", spec="trans+inv", seed=1, max_paragraphs=None, nlp=nlp)
    return out


def pretrain(data: Path, root: Path) -> dict[str, Any]:
    from xlalign.derived.experiment import run_derived_pretrain

    return run_derived_pretrain(
        "mlm", spec="trans+inv", data_dir=data, output_dir=root / "model",
        stats_path=root / "model.json", work_dir=root / "model.work", vocab_size=200,
        arch=ARCH, section=SECTION, seed=1, device="cpu", progress=False,
        checkpoint_minutes=0,  # a resume checkpoint at every evaluation
    )  # fmt: skip


_CHILD = """
from pathlib import Path
from test_derived_interrupt import pretrain

resume.slow_pretraining()
pretrain(Path(ARGS["data"]), Path(ARGS["root"]))
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_stopped_part_way_the_rerun_ends_as_an_uninterrupted_run(
    data: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    from safetensors.torch import load_file

    ckpt = tmp_path / "model.work" / "train" / "checkpoint.pt"
    stopped = resume.run_and_stop(
        _CHILD,
        {"data": str(data), "root": str(tmp_path), "threads": None},
        tmp_path,
        sig,
        ready=resume.exists_for(ckpt, 0.5),
        paths=[Path(__file__).parent],
        timeout=240,
    )
    assert stopped.returncode == resume.expect_exit(sig), stopped.log[-3000:]
    assert not (tmp_path / "model").exists() and not (tmp_path / "model.json").exists()
    step = torch.load(ckpt, weights_only=True)["step"]
    if sig == signal.SIGTERM:
        assert 4 < step < SECTION["steps"] and step % 4, step  # written on the way out
    else:
        assert 4 <= step < SECTION["steps"] and not step % 4, step  # the last periodic one
    resumed = pretrain(data, tmp_path)
    assert resumed["resumed_from_step"] == step
    straight = pretrain(data, tmp_path / "straight")
    assert straight["resumed_from_step"] is None
    a, b = (
        load_file(tmp_path / "model" / "model.safetensors"),
        load_file(tmp_path / "straight" / "model" / "model.safetensors"),
    )
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert resumed["learning_curve"] == straight["learning_curve"]
    ref = json.loads((tmp_path / "straight" / "model.json").read_text())
    assert json.loads((tmp_path / "model.json").read_text())["selection"] == ref["selection"]
    assert not (tmp_path / "model.work").exists()
    assert not resume.leftover_temporaries(tmp_path)
