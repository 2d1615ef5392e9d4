"""Sentence retrieval killed part-way, as a job: finished languages are kept in the job's
work directory, and on SIGTERM the pooled batches of the language in progress too (exit
143); the re-run goes on from there and writes the results and predictions of an
uninterrupted run, byte for byte; the kill leaves no results or predictions behind."""

from __future__ import annotations

import logging
import signal
from pathlib import Path

import numpy as np
import pytest
import resume
from tiny_encoder import make_tiny_encoder

from xlalign.evaluation.tasks.data import RetrievalPair, write_records
from xlalign.evaluation.tasks.retrieval import BatchCheckpoint, pooled_hidden_states
from xlalign.evaluation.tasks.run import run_retrieval

WORDS = "the a cat dog sun moon red big small sat ran on mat house tree bird sea sky".split()
LANGS = ("de", "fr")
BATCH = 2


def _sentences(seed: int, n: int = 12) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(3, 9)))) for _ in range(n)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("retrieval_world")
    enc = make_tiny_encoder(root / "enc", WORDS, layers=2)
    out = {"encoder": str(enc)}
    for k, lang in enumerate(LANGS):
        en, xx = _sentences(10 + k), _sentences(20 + k)
        pairs = [
            RetrievalPair(f"{lang}-{i}", s, t) for i, (s, t) in enumerate(zip(xx, en, strict=True))
        ]
        write_records(root / f"{lang}.jsonl", pairs)
        out[lang] = str(root / f"{lang}.jsonl")
    return out


def retrieve(world: dict[str, str], root: Path) -> dict:
    return run_retrieval(
        "tatoeba",
        encoder=world["encoder"],
        encoder_name="tiny",
        sets={lang: world[lang] for lang in LANGS},
        stats_path=root / "tatoeba.json",
        predictions_dir=root / "tatoeba",
        layer=2,
        batch_size=BATCH,
        device="cpu",
    )


_CHILD = """
import functools, time
from pathlib import Path
import transformers.models.bert.modeling_bert as bert
from test_retrieval_interrupt import retrieve

forward = bert.BertModel.forward

@functools.wraps(forward)
def slow(self, *a, **kw):  # a batch takes a while, as at full scale
    time.sleep(0.1)
    return forward(self, *a, **kw)

bert.BertModel.forward = slow
retrieve(ARGS["world"], Path(ARGS["root"]))
"""


@pytest.fixture(scope="module")
def straight(world: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("straight")
    retrieve(world, root)
    assert not (root / "tatoeba.json.work").exists()
    return root


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_killed_job_resumes_to_the_uninterrupted_output(
    world: dict[str, str],
    straight: Path,
    tmp_path: Path,
    sig: int,
    caplog: pytest.LogCaptureFixture,
) -> None:
    work = tmp_path / "tatoeba.json.work"
    # the first language done, then a few batches into the second
    stopped = resume.run_and_stop(
        _CHILD,
        {"world": world, "root": str(tmp_path)},
        tmp_path,
        sig,
        ready=resume.exists_for(work / "languages" / "de.json", 0.3),
        paths=[Path(__file__).parent],
        timeout=240,
    )
    assert stopped.returncode == resume.expect_exit(sig), stopped.log[-3000:]
    assert not (tmp_path / "tatoeba.json").exists() and not (tmp_path / "tatoeba").exists()
    assert not [p for p in resume.leftover_temporaries(tmp_path) if work not in p.parents]
    assert not (work / "languages" / "fr.json").exists()
    partial = work / "batches" / "fr" / "source.npz"
    if sig == signal.SIGTERM:
        # the batches of the language in progress, written on the way out
        with np.load(partial, allow_pickle=False) as data:
            assert 0 < int(data["batches"]) < 12 // BATCH
        assert "SIGTERM" in (tmp_path / "job.log").read_text()
    with caplog.at_level(logging.INFO, logger="xlalign"):
        retrieve(world, tmp_path)
    assert "de was evaluated before the job was stopped" in caplog.text
    if sig == signal.SIGTERM:
        assert "resuming after" in caplog.text
    for name in ("tatoeba.json", "tatoeba/de.json", "tatoeba/fr.json"):
        assert (tmp_path / name).read_bytes() == (straight / name).read_bytes(), name
    assert not work.exists()
    assert not resume.leftover_temporaries(tmp_path)


def test_batch_checkpoint_of_other_sentences_is_not_used(tmp_path: Path, world) -> None:
    """A saved state is only resumed by the call it belongs to (same sentences and
    settings); another call recomputes everything."""
    texts = _sentences(1, 6)
    ck = BatchCheckpoint(tmp_path / "x.npz")
    full = pooled_hidden_states(world["encoder"], texts, batch_size=2, device="cpu")
    ck.save("another call", 1, np.zeros((3, 2, full.shape[-1]), np.float32))
    again = pooled_hidden_states(world["encoder"], texts, batch_size=2, device="cpu", checkpoint=ck)
    assert ck.resumed_batches == 0
    np.testing.assert_array_equal(again, full)
