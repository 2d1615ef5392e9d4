"""004's from-scratch pre-training jobs killed part-way (meta-pretraining with SIGKILL,
cross-lingual pre-training with SIGTERM, exit 143): the re-run builds the same initial
encoder again, resumes the trainer from its checkpoint and ends with the model and
learning curve of an uninterrupted run; the kill leaves nothing finished-looking, and
success leaves no work directory."""

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
    "max_length": 32,
    "learning_rate": 1e-3,
    "eval_every": 4,
    "log_every": 2,
    "validation_paragraphs": 2,
    "validation_batch_size": 4,
    "objectives": {"mlm": {"batch_size": 4}},
}
STEPS = 16
EN = [
    "the old man ate red apples and the dog ran to the house",
    "a small dog chased the big cat in the garden",
    "sara wrote long letters to her friend every day",
    "the cat climbed a tall tree near the river",
]
DE = [
    "der alte mann ass rote aepfel und der hund lief zum haus",
    "ein kleiner hund jagte die grosse katze im garten",
    "sara schrieb lange briefe an ihre freundin jeden tag",
    "die katze kletterte auf einen hohen baum am fluss",
]


def _text(path: Path, lines: list[str]) -> Path:
    paras = [" ".join(lines[(i + j) % len(lines)] for j in range(2)) for i in range(12)]
    path.write_text("\n".join(paras) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def texts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("meta_text")
    return {"en": str(_text(root / "en.txt", EN)), "de": str(_text(root / "de.txt", DE))}


def mono(texts: dict[str, str], root: Path) -> dict[str, Any]:
    from xlalign.metapretrain.experiment import run_meta_mono

    return run_meta_mono(
        text=texts["en"], output_dir=root / "mono", stats_path=root / "mono.json",
        work_dir=root / "mono.work", vocab_size=120, arch=ARCH, section=SECTION,
        steps=STEPS, seed=1, device="cpu", progress=False,
        checkpoint_minutes=0,  # a resume checkpoint at every evaluation
    )  # fmt: skip


def cross(texts: dict[str, str], root: Path, mono_dir: str) -> dict[str, Any]:
    from xlalign.metapretrain.experiment import run_meta_cross

    return run_meta_cross(
        "both", mono_dir=mono_dir, texts=texts, dictionaries=None,
        output_dir=root / "cross", stats_path=root / "cross.json", work_dir=root / "cross.work",
        vocab_size=150, section=SECTION, steps=STEPS, language_alpha=0.7, seed=2,
        device="cpu", progress=False, checkpoint_minutes=0,
    )  # fmt: skip


@pytest.fixture(scope="module")
def straight(texts: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("straight")
    mono(texts, root)
    cross(texts, root, str(root / "mono"))
    return root


_CHILD = """
from pathlib import Path
from test_metapretrain_interrupt import cross, mono

resume.slow_pretraining()
root = Path(ARGS["root"])
if ARGS["which"] == "mono":
    mono(ARGS["texts"], root)
else:
    cross(ARGS["texts"], root, ARGS["mono_dir"])
"""


def _weights(path: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(path / "model.safetensors")


@pytest.mark.parametrize(("which", "sig"), [("mono", signal.SIGKILL), ("cross", signal.SIGTERM)])
def test_killed_job_resumes_to_the_uninterrupted_model(
    texts: dict[str, str], straight: Path, tmp_path: Path, which: str, sig: int
) -> None:
    ckpt = tmp_path / f"{which}.work" / "train" / "checkpoint.pt"
    args = {
        "texts": texts,
        "root": str(tmp_path),
        "which": which,
        "mono_dir": str(straight / "mono"),
        "threads": None,
    }
    stopped = resume.run_and_stop(
        _CHILD,
        args,
        tmp_path,
        sig,
        ready=resume.exists_for(ckpt, 0.5),
        paths=[Path(__file__).parent],
        timeout=240,
    )
    assert stopped.returncode == resume.expect_exit(sig), stopped.log[-3000:]
    assert not (tmp_path / which).exists() and not (tmp_path / f"{which}.json").exists()
    assert not [p for p in resume.leftover_temporaries(tmp_path) if f"{which}.work" not in str(p)]
    step = torch.load(ckpt, weights_only=True)["step"]
    if sig == signal.SIGTERM:
        assert 4 < step < STEPS and step % 4, step  # written on the way out
    rec = (
        mono(texts, tmp_path) if which == "mono" else cross(texts, tmp_path, str(straight / "mono"))
    )
    assert rec["resumed_from_step"] == step
    a, b = _weights(tmp_path / which), _weights(straight / which)
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    ref = json.loads((straight / f"{which}.json").read_text())
    assert rec["learning_curve"] == ref["learning_curve"]
    assert rec["selection"] == ref["selection"]
    assert not (tmp_path / f"{which}.work").exists()
    assert not resume.leftover_temporaries(tmp_path)
