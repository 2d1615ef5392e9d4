"""X2Static student: static word vectors distilled from a teacher's contextual vectors.

Following X2Static (Gupta & Jaggi, 2021), each in-vocabulary word occurrence of a sentence
is a *target*; its context vector ``c`` comes from the teacher (see
:mod:`xlalign.teacher`, which pre-computes it). The student keeps one vector ``v_w`` per
word and minimises, for a batch of kept targets,

    mean_n ll(c_n . v_{w_n}) + sum_{k=1..K} mean_n ll(-c_n . v_{neg_kn}),
    ll(s) = log(1 + exp(-clamp(s, -20, 20)))

with ``K`` negatives per target drawn with replacement in proportion to ``sqrt(count)``.
Frequent words are subsampled: an occurrence of a word of relative frequency ``f`` is
rejected with probability ``1 - min(1, sqrt(t/f) + t/f)``. The embedding is a sparse
``nn.Embedding`` initialised uniform(-1/d, 1/d) and trained with ``SparseAdam``.

Every random draw comes from a generator seeded by (seed, purpose, epoch, batch), never
from global state, so a run is reproducible and a run resumed from a checkpoint draws the
same numbers as one that was never interrupted. Checkpoints (weights, optimiser state,
position, loss curve, counters) are written atomically to ``<output_dir>/checkpoint/``
every ``checkpoint_every_batches`` batches and at each epoch end; :func:`train_x2static`
resumes from one automatically when its fingerprint (teacher cache metadata, vocabulary,
training arguments) matches, and starts afresh with a warning otherwise. After a
successful run the checkpoint directory (and ``output_dir`` itself when that leaves it
empty) is removed unless ``keep_checkpoint`` is set (a kept final checkpoint makes a
re-run return at once).

Determinism: on CPU the same cache, vocabulary and arguments give bit-identical vectors.
Training runs under ``torch.use_deterministic_algorithms(True, warn_only=True)`` (restored
afterwards); no cuBLAS matrix products are used, but on a GPU bit-identity across runs is
not guaranteed, and CPU and GPU results differ by float rounding.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import math
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from xlalign.errors import ConfigError, InputError
from xlalign.io import PathLike, atomic_path
from xlalign.vocab import Vocab

log = logging.getLogger(__name__)

CHECKPOINT_DIR = "checkpoint"
CHECKPOINT_FILE = "state.pt"
_CHECKPOINT_FORMAT = 1
#: Arguments that may change between a killed run and its resumption.
_NOT_FINGERPRINTED = frozenset({"epochs", "device", "checkpoint_every_batches", "keep_checkpoint"})
# Domain separation of the derived random streams.
_INIT, _PERMUTE, _BATCH = 0, 1, 2


class ContextSource(Protocol):
    """What the trainer needs from a teacher cache (:class:`xlalign.teacher.TeacherCache`)."""

    @property
    def dim(self) -> int: ...

    @property
    def n_sentences(self) -> int: ...

    def batch(self, sentence_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...


@dataclass
class X2StaticArgs:
    """Training hyper-parameters; defaults are X2Static's."""

    epochs: int = 5
    batch_sentences: int = 128
    negatives: int = 10
    subsample_t: float | None = 5e-6  # None or 0: keep every occurrence
    lr: float = 1e-3
    seed: int = 0
    checkpoint_every_batches: int = 200  # 0: only at epoch ends
    log_every: int = 50  # batches per loss-curve point (and at each epoch end)
    init: str = "uniform"  # uniform(-1/d, 1/d), as X2Static
    device: str | None = None  # None or "auto": CUDA when available, else CPU
    keep_checkpoint: bool = False

    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the first invalid argument."""
        checks: list[tuple[str, bool, str]] = [
            ("epochs", self.epochs >= 1, "an integer >= 1"),
            ("batch_sentences", self.batch_sentences >= 1, "an integer >= 1"),
            ("negatives", self.negatives >= 0, "an integer >= 0"),
            ("subsample_t", self.subsample_t is None or self.subsample_t >= 0, "None or >= 0"),
            ("lr", self.lr > 0, "a positive number"),
            ("seed", self.seed >= 0, "an integer >= 0"),
            ("checkpoint_every_batches", self.checkpoint_every_batches >= 0, "an integer >= 0"),
            ("log_every", self.log_every >= 1, "an integer >= 1"),
            ("init", self.init == "uniform", "'uniform'"),
        ]
        for key, ok, expected in checks:
            if not ok:
                got = getattr(self, key)
                raise ConfigError(f"x2static.{key}: expected {expected}, got {got!r}")


@dataclass
class TrainResult:
    """Trained vectors (V, dim) float32, the loss curve and run statistics."""

    vectors: np.ndarray
    #: One point per ``log_every`` batches (and at each epoch end): epoch, batch (global
    #: count of batches done), loss (mean over the window's kept targets), targets.
    loss_curve: list[dict[str, Any]] = field(default_factory=list)
    epoch_losses: list[float] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- the maths


def clamped_logistic_loss(scores: torch.Tensor) -> torch.Tensor:
    """``mean(log(1 + exp(-clamp(s, -20, 20))))`` (softplus form, same value)."""
    return nn.functional.softplus(-scores.clamp(-20.0, 20.0)).mean()


def x2static_loss(
    context: torch.Tensor, targets: torch.Tensor, negatives: torch.Tensor
) -> torch.Tensor:
    """The X2Static objective for one batch.

    ``context`` (N, d) and ``targets`` (N, d): context and student vector of each kept
    target; ``negatives`` (K, N, d): the student vectors of the K negatives of each target.
    Positive term plus one term per negative set, each averaged over the N targets.
    """
    pos = (context * targets).sum(-1)
    loss = clamped_logistic_loss(pos)
    if negatives.shape[0]:
        neg = -(negatives * context.unsqueeze(0)).sum(-1)  # (K, N)
        loss = loss + nn.functional.softplus(-neg.clamp(-20.0, 20.0)).mean(dim=1).sum()
    return loss


def rejection_probabilities(counts: np.ndarray, t: float | None) -> np.ndarray:
    """Per word, the probability ``1 - min(1, sqrt(t/f) + t/f)`` of dropping an occurrence."""
    counts = np.asarray(counts, dtype=np.float64)
    if not t or counts.sum() <= 0:
        return np.zeros(len(counts), dtype=np.float64)
    freq = counts / counts.sum()
    with np.errstate(divide="ignore"):
        ratio = np.where(freq > 0, t / np.where(freq > 0, freq, 1.0), np.inf)
    return 1.0 - np.minimum(1.0, np.sqrt(ratio) + ratio)


def negative_distribution(counts: np.ndarray) -> np.ndarray:
    """Negative-sampling probabilities, proportional to ``sqrt(count)``."""
    w = np.sqrt(np.asarray(counts, dtype=np.float64))
    if w.sum() <= 0:
        raise ValueError("negative_distribution: all counts are zero")
    return w / w.sum()


def sample_batch(
    ids: torch.Tensor,
    rejection: torch.Tensor,
    neg_weights: torch.Tensor,
    negatives: int,
    generator: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One batch's random draws (on CPU): which occurrences to keep, and their negatives.

    ``keep`` (N,) bool drops occurrence n with probability ``rejection[ids[n]]``;
    ``negs`` (negatives, kept) are word ids drawn with replacement in proportion to
    ``neg_weights``. No draw at all when nothing is kept.
    """
    keep = torch.rand(ids.shape[0], generator=generator, dtype=torch.float64) >= rejection[ids]
    n_kept = int(keep.sum())
    if n_kept == 0 or negatives == 0:
        return keep, torch.empty(negatives, n_kept, dtype=torch.int64)
    negs = torch.multinomial(neg_weights, negatives * n_kept, replacement=True, generator=generator)
    return keep, negs.view(negatives, n_kept)


def derived_seed(*parts: int) -> int:
    """A 63-bit seed derived from integers (independent streams per purpose/epoch/batch)."""
    state = np.random.SeedSequence([int(p) for p in parts]).generate_state(2, dtype=np.uint32)
    return (int(state[0]) << 31 | int(state[1])) & ((1 << 63) - 1)


def epoch_permutation(n_sentences: int, seed: int, epoch: int) -> np.ndarray:
    """The sentence order of one epoch (a function of seed and epoch only)."""
    return np.random.default_rng(derived_seed(seed, _PERMUTE, epoch)).permutation(n_sentences)


def batch_generator(seed: int, epoch: int, batch: int) -> torch.Generator:
    """The CPU generator for one batch's subsampling and negative draws."""
    return torch.Generator().manual_seed(derived_seed(seed, _BATCH, epoch, batch))


def initial_weights(n_words: int, dim: int, seed: int) -> torch.Tensor:
    """uniform(-1/d, 1/d) initialisation from a seeded generator (CPU, float32)."""
    g = torch.Generator().manual_seed(derived_seed(seed, _INIT))
    return torch.empty(n_words, dim).uniform_(-1.0 / dim, 1.0 / dim, generator=g)


# --------------------------------------------------------------------------- checkpoints


def training_fingerprint(cache: ContextSource, vocab: Vocab, args: X2StaticArgs) -> str:
    """SHA-256 of what a checkpoint must agree with to be resumed."""
    payload = {
        "cache": {
            "meta": getattr(cache, "meta", None),
            "dim": int(cache.dim),
            "n_sentences": int(cache.n_sentences),
        },
        "vocab": vocab.fingerprint(),
        "args": {k: v for k, v in dataclasses.asdict(args).items() if k not in _NOT_FINGERPRINTED},
    }
    text = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def checkpoint_path(output_dir: PathLike) -> Path:
    """Where :func:`train_x2static` keeps its checkpoint."""
    return Path(output_dir) / CHECKPOINT_DIR / CHECKPOINT_FILE


def _save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def _load_checkpoint(path: Path, fingerprint: str, epochs: int) -> dict[str, Any] | None:
    # Temporaries of a writer killed mid-save are never resumed from; clear them.
    for stale in path.parent.glob(f".{path.name}.*"):
        stale.unlink(missing_ok=True)
    if not path.exists():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # an unreadable checkpoint only costs the work done so far
        log.warning("%s: unreadable checkpoint (%s); starting afresh", path, exc)
        return None
    if state.get("format") != _CHECKPOINT_FORMAT or state.get("fingerprint") != fingerprint:
        log.warning(
            "%s: checkpoint is for another teacher cache, vocabulary or arguments "
            "(fingerprint mismatch); ignoring it and starting afresh",
            path,
        )
        return None
    if state["epoch"] > epochs or (state["epoch"] == epochs and state["batch"] > 0):
        log.warning("%s: checkpoint is past the requested %d epochs; starting afresh", path, epochs)
        return None
    return state


def _cache_name(cache: object) -> str:
    for attr in ("path", "root", "out_dir", "directory"):
        value = getattr(cache, attr, None)
        if value is not None:
            return str(value)
    return type(cache).__name__


@contextlib.contextmanager
def _deterministic() -> Iterator[None]:
    enabled = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(enabled, warn_only=warn_only)


def _resolve_device(device: str | None) -> torch.device:
    if device in (None, "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


# --------------------------------------------------------------------------- training


@dataclass
class _Progress:
    """Everything besides weights and optimiser state that a resumed run must restore."""

    epoch: int = 0  # next epoch to run
    batch: int = 0  # next batch within that epoch
    batches_done: int = 0
    batches_skipped: int = 0
    occurrences_seen: int = 0
    targets_kept: int = 0
    window_loss: float = 0.0  # target-weighted loss sum of the current loss-curve window
    window_targets: int = 0
    epoch_loss: float = 0.0
    epoch_targets: int = 0
    loss_curve: list[dict[str, Any]] = field(default_factory=list)
    epoch_losses: list[float] = field(default_factory=list)


def train_x2static(
    cache: ContextSource,
    vocab: Vocab,
    args: X2StaticArgs | None = None,
    *,
    output_dir: PathLike,
    progress: bool = True,
) -> TrainResult:
    """Train static vectors for ``vocab`` from the teacher contexts in ``cache``.

    Resumes from ``<output_dir>/checkpoint/`` when a matching checkpoint is there.
    """
    args = args or X2StaticArgs()
    args.validate()
    n_words, dim, n_sent = len(vocab), int(cache.dim), int(cache.n_sentences)
    where = _cache_name(cache)
    if n_words == 0:
        raise InputError(f"{where}: the vocabulary is empty; nothing to train")
    if n_sent == 0:
        raise InputError(f"{where}: the teacher cache has no sentences")
    device = _resolve_device(args.device)
    ckpt = checkpoint_path(output_dir)
    fingerprint = training_fingerprint(cache, vocab, args)
    batches_per_epoch = math.ceil(n_sent / args.batch_sentences)
    total_batches = args.epochs * batches_per_epoch

    rej = torch.from_numpy(rejection_probabilities(vocab.counts, args.subsample_t))
    neg_weights = torch.from_numpy(np.sqrt(vocab.counts.astype(np.float64)))
    if args.negatives and float(neg_weights.sum()) <= 0:
        raise InputError(f"{where}: every vocabulary count is zero; cannot draw negatives")

    emb = nn.Embedding.from_pretrained(
        initial_weights(n_words, dim, args.seed), freeze=False, sparse=True
    ).to(device)
    optimizer = torch.optim.SparseAdam(list(emb.parameters()), lr=args.lr)
    prog = _Progress()
    state = _load_checkpoint(ckpt, fingerprint, args.epochs)
    resumed_from = None
    if state is not None:
        with torch.no_grad():
            emb.weight.copy_(state["weights"].to(device))
        optimizer.load_state_dict(state["optimizer"])
        prog = _Progress(**state["progress"])
        resumed_from = {"epoch": prog.epoch, "batch": prog.batch}
        log.info("%s: resuming at epoch %d, batch %d", ckpt, prog.epoch, prog.batch)

    def save() -> None:
        _save_checkpoint(
            ckpt,
            {
                "format": _CHECKPOINT_FORMAT,
                "fingerprint": fingerprint,
                "args": dataclasses.asdict(args),
                "epoch": prog.epoch,
                "batch": prog.batch,
                "weights": emb.weight.detach().cpu(),
                "optimizer": optimizer.state_dict(),
                "progress": dataclasses.asdict(prog),
            },
        )

    def close_window(epoch: int) -> None:
        if prog.window_targets:
            point = {
                "epoch": epoch,
                "batch": prog.batches_done,
                "loss": prog.window_loss / prog.window_targets,
                "targets": prog.window_targets,
            }
            prog.loss_curve.append(point)
            bar.set_postfix(loss=f"{point['loss']:.4f}")
            log.debug("epoch %d batch %d: loss %.5f", epoch, prog.batches_done, point["loss"])
        prog.window_loss, prog.window_targets = 0.0, 0

    started = time.monotonic()
    bar = tqdm(
        total=total_batches,
        initial=prog.batches_done,
        desc="x2static",
        unit="batch",
        disable=not progress,
        dynamic_ncols=True,
    )
    with _deterministic(), bar:
        while prog.epoch < args.epochs:
            epoch = prog.epoch
            order = epoch_permutation(n_sent, args.seed, epoch)
            for b in range(prog.batch, batches_per_epoch):
                sent = order[b * args.batch_sentences : (b + 1) * args.batch_sentences]
                ids_np, ctx_np = cache.batch(sent)
                ids = torch.as_tensor(np.asarray(ids_np), dtype=torch.int64)
                if ids.ndim != 1 or tuple(ctx_np.shape) != (ids.shape[0], dim):
                    raise InputError(
                        f"{where}: batch of epoch {epoch} batch {b}: expected ids (N,) and "
                        f"contexts (N, {dim}), got {tuple(ids.shape)} and {tuple(ctx_np.shape)}"
                    )
                if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= n_words):
                    raise InputError(
                        f"{where}: word ids {int(ids.min())}..{int(ids.max())} out of range "
                        f"for a vocabulary of {n_words} words; was the cache built with "
                        f"another vocabulary?"
                    )
                keep, negs = sample_batch(
                    ids, rej, neg_weights, args.negatives, batch_generator(args.seed, epoch, b)
                )
                targets = ids[keep]
                n_kept = int(targets.shape[0])
                prog.occurrences_seen += int(ids.shape[0])
                if n_kept == 0:
                    prog.batches_skipped += 1
                else:
                    ctx = torch.as_tensor(np.asarray(ctx_np, dtype=np.float32))[keep]
                    rows = torch.cat([targets.unsqueeze(0), negs], dim=0).to(device)
                    optimizer.zero_grad(set_to_none=True)
                    vecs = emb(rows)
                    loss = x2static_loss(ctx.to(device), vecs[0], vecs[1:])
                    loss.backward()
                    optimizer.step()
                    value = float(loss.detach())
                    if not math.isfinite(value):
                        raise FloatingPointError(
                            f"x2static: non-finite loss at epoch {epoch} batch {b}; "
                            f"try a lower lr (now {args.lr})"
                        )
                    prog.targets_kept += n_kept
                    prog.window_loss += value * n_kept
                    prog.window_targets += n_kept
                    prog.epoch_loss += value * n_kept
                    prog.epoch_targets += n_kept
                prog.batches_done += 1
                prog.batch = b + 1
                bar.update(1)
                if prog.batch % args.log_every == 0 or prog.batch == batches_per_epoch:
                    close_window(epoch)
                if prog.batch == batches_per_epoch:
                    mean = prog.epoch_loss / prog.epoch_targets if prog.epoch_targets else math.nan
                    prog.epoch_losses.append(mean)
                    log.info("x2static epoch %d/%d: loss %.5f", epoch + 1, args.epochs, mean)
                    prog.epoch_loss, prog.epoch_targets = 0.0, 0
                    prog.epoch, prog.batch = epoch + 1, 0
                    save()
                elif (
                    args.checkpoint_every_batches
                    and prog.batches_done % args.checkpoint_every_batches == 0
                ):
                    save()

    vectors = emb.weight.detach().cpu().numpy().astype(np.float32, copy=True)
    if not args.keep_checkpoint:
        shutil.rmtree(ckpt.parent, ignore_errors=True)
        with contextlib.suppress(OSError):
            ckpt.parent.parent.rmdir()  # output_dir too, when nothing else is in it
    stats = {
        "device": str(device),
        "vocab_size": n_words,
        "dim": dim,
        "n_sentences": n_sent,
        "epochs": args.epochs,
        "batches_per_epoch": batches_per_epoch,
        "batches_done": prog.batches_done,
        "batches_skipped": prog.batches_skipped,
        "occurrences_seen": prog.occurrences_seen,
        "targets_kept": prog.targets_kept,
        "kept_fraction": prog.targets_kept / prog.occurrences_seen
        if prog.occurrences_seen
        else 0.0,
        "final_loss": prog.epoch_losses[-1] if prog.epoch_losses else math.nan,
        "resumed_from": resumed_from,
        "seconds_this_call": time.monotonic() - started,
        "fingerprint": fingerprint,
    }
    return TrainResult(
        vectors=vectors,
        loss_curve=list(prog.loss_curve),
        epoch_losses=list(prog.epoch_losses),
        stats=stats,
    )
