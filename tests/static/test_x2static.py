"""X2Static student: loss, sampling, learning, determinism, checkpoints and a real kill.

The teacher cache is faked by ``ArrayCache`` (tests/synthetic_cache.py: same reading
methods as ``xlalign.static.teacher.TeacherCache``), built from synthetic data where each
word's context vectors are noisy copies of a hidden per-word direction.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from synthetic_cache import ArrayCache, synthetic

from xlalign.core.errors import ConfigError, InputError
from xlalign.corpus.vocab import Vocab, read_vocab, write_vocab
from xlalign.static.x2static import (
    X2StaticArgs,
    checkpoint_path,
    clamped_logistic_loss,
    initial_weights,
    negative_distribution,
    rejection_probabilities,
    sample_batch,
    train_x2static,
    x2static_loss,
)

FAST = X2StaticArgs(
    epochs=3,
    batch_sentences=8,
    negatives=5,
    subsample_t=None,
    lr=0.02,
    seed=3,
    checkpoint_every_batches=5,
    checkpoint_minutes=0,  # every chance: the tests kill and resume
    log_every=7,
    device="cpu",  # bit-identical results are promised on CPU only
)


# --------------------------------------------------------------------------- the maths


def _ll(s: float) -> float:
    s = max(-20.0, min(20.0, s))
    return math.log(1.0 + math.exp(-s))


def test_loss_matches_hand_computation() -> None:
    ctx = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    tgt = torch.tensor([[3.0, 0.0], [0.0, -1.0]])  # positive scores 3, -2
    neg = torch.tensor(
        [
            [[30.0, 0.0], [0.0, 0.0]],  # scores -(30) -> clamped to -20, and -(0)
            [[-1.0, 5.0], [0.5, 0.25]],  # scores -(-1) = 1, -(0.5) = -0.5
        ],
        requires_grad=True,
    )
    expected = (
        (_ll(3) + _ll(-2)) / 2 + (_ll(-30) + _ll(0)) / 2 + (_ll(1) + _ll(-0.5)) / 2
    )  # mean over targets per term, summed over 1 + K terms
    got = x2static_loss(ctx, tgt, neg)
    assert got.item() == pytest.approx(expected, rel=1e-6)
    assert _ll(-30) == pytest.approx(20.0, abs=1e-8)
    got.backward()
    assert neg.grad is not None
    assert torch.all(neg.grad[0, 0] == 0)  # clamped score: no gradient, as in X2Static
    assert torch.any(neg.grad[1, 0] != 0)
    # no negatives: only the positive term
    assert float(x2static_loss(ctx, tgt, torch.empty(0, 2, 2))) == pytest.approx(
        (_ll(3) + _ll(-2)) / 2, rel=1e-6
    )
    assert float(clamped_logistic_loss(torch.tensor([100.0, -100.0]))) == pytest.approx(
        (_ll(20) + _ll(-20)) / 2, rel=1e-6
    )


def test_rejection_probability_formula() -> None:
    # f = 0.9, 0.09, 0.009, 0.001, 0 with t = 0.009: t/f = 0.01, 0.1, 1, 9, inf
    rej = rejection_probabilities(np.array([900, 90, 9, 1, 0]), 0.009)
    expected = [1 - (0.1 + 0.01), 1 - (math.sqrt(0.1) + 0.1), 0.0, 0.0, 0.0]
    np.testing.assert_allclose(rej, expected, atol=1e-12)
    assert rejection_probabilities(np.array([900, 90]), None).tolist() == [0.0, 0.0]
    assert rejection_probabilities(np.array([900, 90]), 0.0).tolist() == [0.0, 0.0]


def test_sampling_keeps_and_negatives_follow_their_distributions() -> None:
    counts = np.array([1, 4, 9, 16, 25, 100, 3000])
    rej = rejection_probabilities(counts, 0.01)
    assert rej[-1] > 0.8 and rej[0] == 0.0
    ids = torch.arange(len(counts)).repeat(4000)
    keep, negs = sample_batch(
        ids,
        torch.from_numpy(rej),
        torch.from_numpy(np.sqrt(counts.astype(np.float64))),
        10,
        torch.Generator().manual_seed(0),
    )
    # subsampling: kept fraction per word within 5 binomial standard deviations
    kept = np.array([keep[ids == w].double().mean().item() for w in range(len(counts))])
    sd = np.sqrt(rej * (1 - rej) / 4000) + 1e-9
    assert np.all(np.abs(kept - (1 - rej)) <= 5 * sd + 1e-12), (kept, 1 - rej)
    # negatives: 10 per kept target, proportional to sqrt(count) (chi-square, 6 dof)
    assert negs.shape == (10, int(keep.sum()))
    observed = np.bincount(negs.flatten().numpy(), minlength=len(counts))
    n = observed.sum()

    def chi2(p: np.ndarray) -> float:
        return float((((observed - n * p) ** 2) / (n * p)).sum())

    assert chi2(negative_distribution(counts)) < 22.5  # p = 0.001 critical value, 6 dof
    assert chi2(counts / counts.sum()) > 1000  # the test can tell sqrt from linear
    np.testing.assert_allclose(negative_distribution(np.array([1, 4, 0])), [1 / 3, 2 / 3, 0])


# --------------------------------------------------------------------------- training


def _centred_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(0)
    b = b - b.mean(0)
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


@pytest.mark.parametrize(
    "device",
    [
        "cpu",
        pytest.param(
            "cuda",
            marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
        ),
    ],
)
def test_training_recovers_hidden_directions(tmp_path: Path, device: str) -> None:
    cache, vocab, hidden = synthetic()
    args = dataclasses.replace(
        FAST, epochs=5, batch_sentences=16, checkpoint_every_batches=0, device=device
    )
    res = train_x2static(cache, vocab, args, output_dir=tmp_path, progress=False)
    assert res.vectors.shape == (len(vocab), cache.dim) and res.vectors.dtype == np.float32
    frequent = np.argsort(-vocab.counts)[:10]
    cos = _centred_cosines(res.vectors, hidden)
    assert cos[frequent].min() > 0.7, cos
    # each learned vector's nearest hidden direction is its own word's
    sims = _centred_cosines_matrix(res.vectors, hidden)
    assert (sims.argmax(1) == np.arange(len(vocab))).mean() >= 0.9
    # held-out contexts retrieve their word by the dot product the model is trained on
    rng = np.random.default_rng(123)
    words = rng.integers(0, len(vocab), 2000)
    ctx = 2 * hidden[words] + rng.standard_normal((2000, cache.dim)) / np.sqrt(cache.dim)
    accuracy = (np.argmax(ctx @ res.vectors.T, axis=1) == words).mean()
    assert accuracy > 0.9  # chance is 1/30
    # the random initialisation knows nothing: it is the training that learns
    init = initial_weights(len(vocab), cache.dim, args.seed).numpy()
    assert np.abs(_centred_cosines(init, hidden)).mean() < 0.3
    assert all(a > b for a, b in zip(res.epoch_losses, res.epoch_losses[1:], strict=False))
    assert res.stats["kept_fraction"] == 1.0 and res.stats["batches_skipped"] == 0
    assert res.stats["device"].startswith(device)
    assert res.stats["targets_kept"] == args.epochs * cache.n_occurrences


def _centred_cosines_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(0)
    b = b - b.mean(0)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    return a @ b.T


def test_deterministic_and_seed_dependent(tmp_path: Path) -> None:
    cache, vocab, _ = synthetic(n_sent=120)
    args = dataclasses.replace(FAST, subsample_t=0.01)
    a = train_x2static(cache, vocab, args, output_dir=tmp_path / "a", progress=False)
    b = train_x2static(cache, vocab, args, output_dir=tmp_path / "b", progress=False)
    np.testing.assert_array_equal(a.vectors, b.vectors)
    assert a.loss_curve == b.loss_curve and a.epoch_losses == b.epoch_losses
    c = train_x2static(
        cache, vocab, dataclasses.replace(args, seed=4), output_dir=tmp_path / "c", progress=False
    )
    assert not np.allclose(a.vectors, c.vectors)
    # bookkeeping: 15 batches per epoch, curve points every 7 batches and at epoch ends
    assert a.stats["batches_per_epoch"] == 15 and a.stats["batches_done"] == 45
    assert [p["batch"] for p in a.loss_curve] == [7, 14, 15, 22, 29, 30, 37, 44, 45]
    assert len(a.epoch_losses) == 3
    # subsampling keeps about the expected fraction of the occurrences
    keep = 1 - rejection_probabilities(vocab.counts, 0.01)
    expected = float((vocab.counts * keep).sum() / vocab.counts.sum())
    assert a.stats["kept_fraction"] == pytest.approx(expected, abs=0.03)
    assert a.stats["kept_fraction"] < 0.9
    # a finished run removes its checkpoint
    assert not checkpoint_path(tmp_path / "a").parent.exists()
    assert not (tmp_path / "a").exists()  # it held nothing else


def test_batches_without_targets_are_skipped(tmp_path: Path) -> None:
    cache, vocab, _ = synthetic(n_sent=80)
    args = dataclasses.replace(FAST, subsample_t=1e-9, epochs=1)  # keeps ~1e-4 of occurrences
    res = train_x2static(cache, vocab, args, output_dir=tmp_path, progress=False)
    assert res.stats["batches_skipped"] >= 8  # of 10
    assert np.isfinite(res.vectors).all()


def test_invalid_arguments_and_foreign_ids(tmp_path: Path) -> None:
    cache, vocab, _ = synthetic(n_sent=20)
    with pytest.raises(ConfigError, match=r"x2static\.negatives"):
        train_x2static(
            cache, vocab, X2StaticArgs(negatives=-1), output_dir=tmp_path, progress=False
        )
    with pytest.raises(ConfigError, match=r"x2static\.init"):
        train_x2static(cache, vocab, X2StaticArgs(init="normal"), output_dir=tmp_path)
    small = Vocab(vocab.words[:5], vocab.counts[:5], lowercase=True)
    with pytest.raises(InputError, match="out of range for a vocabulary of 5 words"):
        train_x2static(cache, small, FAST, output_dir=tmp_path, progress=False)


# --------------------------------------------------------------------------- checkpoints


def test_mismatched_checkpoint_is_ignored(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cache, vocab, _ = synthetic(n_sent=60)
    kept = dataclasses.replace(FAST, keep_checkpoint=True, epochs=2)
    first = train_x2static(cache, vocab, kept, output_dir=tmp_path, progress=False)
    assert checkpoint_path(tmp_path).exists()
    # same arguments: the kept final checkpoint is the answer, nothing is retrained
    again = train_x2static(cache, vocab, kept, output_dir=tmp_path, progress=False)
    assert again.stats["resumed_from"] == {"epoch": 2, "batch": 0}
    np.testing.assert_array_equal(again.vectors, first.vectors)
    assert again.epoch_losses == first.epoch_losses
    # another seed, another cache or another vocabulary: start afresh with a warning
    fresh_dir = tmp_path / "fresh"
    other_cache = ArrayCache(cache.offsets, cache.ids, cache.ctx, meta={"layer": 7})
    other_vocab = Vocab(vocab.words, vocab.counts + 1, lowercase=True)
    for c, v, args in [
        (cache, vocab, dataclasses.replace(kept, seed=11)),
        (other_cache, vocab, kept),
        (cache, other_vocab, kept),
    ]:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="xlalign.static.x2static"):
            res = train_x2static(c, v, args, output_dir=tmp_path, progress=False)
        assert "fingerprint mismatch" in caplog.text
        assert res.stats["resumed_from"] is None
        ref = train_x2static(c, v, args, output_dir=fresh_dir, progress=False)
        np.testing.assert_array_equal(res.vectors, ref.vectors)


@pytest.mark.parametrize(
    ("minutes", "keep", "saves"),
    [
        (0, False, 9),  # every chance: batches 5 and 10, and the end of each of 3 epochs
        (60, False, 0),  # a run shorter than the interval writes no checkpoint
        (None, False, 0),  # SIGTERM only
        (60, True, 1),  # a kept checkpoint still holds the end of training
    ],
)
def test_checkpoints_follow_the_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, minutes: float | None, keep: bool, saves: int
) -> None:
    import xlalign.static.x2static as x2s

    written: list[tuple[int, int]] = []
    real = x2s._save_checkpoint

    def spy(path: Path, state: dict) -> None:
        written.append((state["epoch"], state["batch"]))
        real(path, state)

    monkeypatch.setattr(x2s, "_save_checkpoint", spy)
    cache, vocab, _ = synthetic(n_sent=120)  # 15 batches of 8 an epoch
    args = dataclasses.replace(FAST, checkpoint_minutes=minutes, keep_checkpoint=keep)
    res = train_x2static(cache, vocab, args, output_dir=tmp_path / "o", progress=False)
    assert len(written) == saves, written
    if keep:
        assert written == [(3, 0)] and checkpoint_path(tmp_path / "o").exists()
    ref = train_x2static(cache, vocab, FAST, output_dir=tmp_path / "r", progress=False)
    np.testing.assert_array_equal(res.vectors, ref.vectors)  # when it saves changes nothing


_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from synthetic_cache import ArrayCache
from xlalign.corpus.vocab import read_vocab
from xlalign.static.x2static import X2StaticArgs, train_x2static
cache = ArrayCache.load(sys.argv[2], delay=float(sys.argv[6]))
args = X2StaticArgs(**json.loads(sys.argv[5]))
train_x2static(cache, read_vocab(sys.argv[3]), args, output_dir=sys.argv[4], progress=False)
print("FINISHED")
"""


def test_killed_run_resumes_to_the_same_vectors(tmp_path: Path) -> None:
    cache, vocab, _ = synthetic(n_sent=400)
    npz, vocab_path, out = tmp_path / "cache.npz", tmp_path / "vocab.tsv", tmp_path / "run"
    cache.save(npz)
    write_vocab(vocab, vocab_path)
    args = dataclasses.replace(FAST, subsample_t=0.01)  # 50 batches per epoch, 150 in all
    ckpt = checkpoint_path(out)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _CHILD,
            str(Path(__file__).parents[1]),  # tests/: synthetic_cache.py
            str(npz),
            str(vocab_path),
            str(out),
            json.dumps(dataclasses.asdict(args)),
            "0.03",  # seconds per batch: about 4.5 s of training
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while not ckpt.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no checkpoint within 120 s"
            time.sleep(0.01)
        time.sleep(2.0)  # more batches and checkpoints, into the second epoch
        proc.send_signal(signal.SIGKILL)
        stdout, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL and b"FINISHED" not in stdout
    state = torch.load(ckpt, map_location="cpu", weights_only=True)
    assert 0 < state["progress"]["batches_done"] < 150
    print("killed at epoch", state["epoch"], "batch", state["batch"])
    assert state["progress"]["batches_done"] % 5 == 0 or state["batch"] == 0

    resumed = train_x2static(
        ArrayCache.load(npz), read_vocab(vocab_path), args, output_dir=out, progress=False
    )
    assert resumed.stats["resumed_from"] == {"epoch": state["epoch"], "batch": state["batch"]}
    assert not ckpt.parent.exists()
    straight = train_x2static(cache, vocab, args, output_dir=tmp_path / "straight", progress=False)
    assert torch.allclose(
        torch.from_numpy(resumed.vectors), torch.from_numpy(straight.vectors), rtol=0, atol=1e-7
    )
    np.testing.assert_array_equal(resumed.vectors, straight.vectors)  # bit-identical on CPU
    assert [{**p, "loss": None} for p in resumed.loss_curve] == [
        {**p, "loss": None} for p in straight.loss_curve
    ]
    assert [p["loss"] for p in resumed.loss_curve] == pytest.approx(
        [p["loss"] for p in straight.loss_curve], rel=1e-12
    )
    assert resumed.epoch_losses == pytest.approx(straight.epoch_losses)
    for key in ("batches_done", "targets_kept", "occurrences_seen", "batches_skipped"):
        assert resumed.stats[key] == straight.stats[key]
