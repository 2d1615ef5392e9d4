"""X2Static student: static word vectors distilled from a teacher's contextual vectors.

Following X2Static (Gupta & Jaggi, 2021), each in-vocabulary word occurrence of a sentence
is a *target*; its context vector ``c`` comes from the teacher (see
:mod:`xlalign.static.teacher`, which pre-computes it). The student keeps one vector ``v_w`` per
word and minimises, for a batch of kept targets,

    mean_n ll(c_n . v_{w_n}) + sum_{k=1..K} mean_n ll(-c_n . v_{neg_kn}),
    ll(s) = log(1 + exp(-clamp(s, -20, 20)))

with ``K`` negatives per target drawn with replacement in proportion to ``sqrt(count)``.
Frequent words are subsampled: an occurrence of a word of relative frequency ``f`` is
rejected with probability ``1 - min(1, sqrt(t/f) + t/f)``. The embedding is a sparse
``nn.Embedding`` initialised uniform(-1/d, 1/d) and trained with ``SparseAdam``.

``init="vectors"`` (not X2Static's; off by default) starts instead from the rows of a
given space (``init_vectors``, e.g. the aggregation baseline's vectors of the same
vocabulary), words absent from it keeping the uniform draw: the distillation then refines
the baseline rather than starting from noise, which matters on small corpora where a word
gets few updates (see ``benchmarks/learning_curve.py``).

Every random draw comes from a generator seeded by (seed, purpose, epoch, batch), never
from global state, so a run is reproducible and a run resumed from a checkpoint draws the
same numbers as one that was never interrupted. Checkpoints (weights, optimiser state,
position, loss curve, counters) are written atomically to ``<output_dir>/checkpoint/``
at an epoch end or every ``checkpoint_every_batches`` batches once ``checkpoint_minutes`` of
work have passed since the last one (:class:`xlalign.core.cadence.CheckpointClock`: a run
shorter than that writes none; 0 = at every such point), and on SIGTERM; :func:`train_x2static`
resumes from one automatically when its fingerprint (teacher cache metadata, vocabulary,
training arguments) matches, and starts afresh with a warning otherwise. After a
successful run the checkpoint directory (and ``output_dir`` itself when that leaves it
empty) is removed unless ``keep_checkpoint`` is set (a kept final checkpoint makes a
re-run return at once).

Memory: the ``[V, d]`` float32 embedding and SparseAdam's two ``[V, d]`` moments (dense,
created at the first step) are inherent: ~1.8 GB at the paper's 200k words x 768 dims,
plus the checkpoint's copies while one is written. The rest
is one batch (its occurrences' contexts and ``negatives + 1`` rows each) and the epoch's
sentence order (8 bytes a sentence): the cache is read batch by batch from disk
(:class:`~xlalign.static.teacher.TeacherCache`, no memory map), never held.

Determinism: on CPU the same cache, vocabulary and arguments give bit-identical vectors.
Training runs under ``torch.use_deterministic_algorithms(True, warn_only=True)`` (restored
afterwards); no cuBLAS matrix products are used, but on a GPU bit-identity across runs is
not guaranteed, and CPU and GPU results differ by float rounding.

Data parallelism: run under torchrun (``xlalign x2static --gpus N``, or a Snakemake job
given ``resources: gpu=N``; see :mod:`xlalign.encoders.distributed`), each of the ``W`` processes
draws every batch's randomness exactly as a single process would, takes its contiguous
``1/W`` share of the kept targets and scales its loss by its share of them, so the ranks'
losses sum to the single-process loss. The row-sparse embedding gradients are all-gathered
and summed, and every rank takes the same ``SparseAdam`` step: the weights stay identical
across ranks and equal the single-process ones up to float rounding (summation order).
Rank 0 alone logs, shows progress, writes checkpoints and outputs. A checkpoint does not
depend on the number of processes: a run resumes with any other number of them.
:func:`run_x2static_job` is the whole job (train, then write the space), as the CLI and the
workflow run it, launching torchrun itself when asked for several visible GPUs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import math
import shutil
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from xlalign.core import interrupt
from xlalign.core.cadence import DEFAULT_INTERVAL_MINUTES, CheckpointClock
from xlalign.core.device import deterministic_algorithms
from xlalign.core.errors import ConfigError, InputError
from xlalign.core.formats.word2vec import (
    DEFAULT_ENCODING_ERRORS,
    DUPLICATE_POLICIES,
    ENCODING_ERRORS,
)
from xlalign.core.io import PathLike, atomic_path, read_json
from xlalign.corpus.vocab import Vocab, read_vocab
from xlalign.encoders import distributed
from xlalign.encoders.distributed import DistContext
from xlalign.static.spaces import save_space
from xlalign.static.teacher import TeacherCache

log = logging.getLogger(__name__)

CHECKPOINT_DIR = "checkpoint"
CHECKPOINT_FILE = "state.pt"
_CHECKPOINT_FORMAT = 1
#: Arguments that may change between a killed run and its resumption.
_NOT_FINGERPRINTED = frozenset(
    {"epochs", "device", "checkpoint_every_batches", "checkpoint_minutes", "keep_checkpoint"}
)
#: Initialisations: X2Static's uniform draw, or the rows of a given space.
INITS = ("uniform", "vectors")
# Domain separation of the derived random streams.
_INIT, _PERMUTE, _BATCH = 0, 1, 2


class ContextSource(Protocol):
    """What the trainer needs from a teacher cache (a ``TeacherCache``)."""

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
    # minutes of work between checkpoints (0: at every chance above; None: SIGTERM only)
    checkpoint_minutes: float | None = DEFAULT_INTERVAL_MINUTES
    log_every: int = 50  # batches per loss-curve point (and at each epoch end)
    init: str = "uniform"  # uniform(-1/d, 1/d), as X2Static; "vectors": from init_vectors
    init_vectors: str | None = None  # a space (.npy or .vec) whose rows start their words
    # how a word2vec init_vectors file is read (xlalign.core.formats.word2vec)
    encoding_errors: str = DEFAULT_ENCODING_ERRORS
    duplicates: str = "error"
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
            (
                "checkpoint_minutes",
                self.checkpoint_minutes is None or self.checkpoint_minutes >= 0,
                "None or a number of minutes >= 0",
            ),
            ("log_every", self.log_every >= 1, "an integer >= 1"),
            ("init", self.init in INITS, f"one of {list(INITS)}"),
            (
                "init_vectors",
                (self.init == "vectors") == bool(self.init_vectors),
                "a space path when init is 'vectors', and none otherwise",
            ),
            (
                "encoding_errors",
                self.encoding_errors in ENCODING_ERRORS,
                f"one of {ENCODING_ERRORS}",
            ),
            ("duplicates", self.duplicates in DUPLICATE_POLICIES, f"one of {DUPLICATE_POLICIES}"),
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


def init_rows(
    path: PathLike,
    vocab: Vocab,
    dim: int,
    *,
    encoding_errors: str = DEFAULT_ENCODING_ERRORS,
    duplicates: str = "error",
    report: dict[str, Any] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the space at ``path`` for ``vocab``'s words: ``(vectors [V, dim]
    float32, found [V] bool)``; words are matched after the vocabulary's lowercasing.

    ``encoding_errors`` and ``duplicates`` go to the word2vec readers; ``report`` (a
    dict, when given) receives what reading did (:func:`~xlalign.static.vectors.load_space`'s
    report). Raises :class:`InputError` for a space of another dimension or one sharing
    no word with the vocabulary.
    """
    from xlalign.static.vectors import load_space  # the static package's reader

    (words, vecs), read = load_space(path, encoding_errors=encoding_errors, duplicates=duplicates)
    if report is not None:
        report.update(read)
    if vecs.shape[1] != dim:
        raise InputError(
            f"{path}: x2static init_vectors have dimension {vecs.shape[1]}, expected {dim} "
            "(the teacher's)"
        )
    out = np.zeros((len(vocab), dim), dtype=np.float32)
    found = np.zeros(len(vocab), dtype=bool)
    for row, w in enumerate(words):
        i = vocab.lookup(w)
        if i is not None and not found[i]:
            out[i], found[i] = vecs[row], True
    if not found.any():
        raise InputError(
            f"{path}: x2static init_vectors share no word with the vocabulary "
            f"({len(vocab)} words); expected a space of the same language"
        )
    return out, found


# --------------------------------------------------------------------------- checkpoints


def training_fingerprint(
    cache: ContextSource, vocab: Vocab, args: X2StaticArgs, init: np.ndarray | None = None
) -> str:
    """SHA-256 of what a checkpoint must agree with to be resumed (with ``init``, the
    initial rows taken from ``init_vectors``, by content rather than path)."""
    payload = {
        "cache": {
            "meta": getattr(cache, "meta", None),
            "dim": int(cache.dim),
            "n_sentences": int(cache.n_sentences),
        },
        "vocab": vocab.fingerprint(),
        "args": {k: v for k, v in dataclasses.asdict(args).items() if k not in _NOT_FINGERPRINTED},
    }
    # a uniform start fingerprints as before these options (the rows read are in ``init``)
    for key in ("init_vectors", "encoding_errors", "duplicates"):
        payload["args"].pop(key)
    if init is not None:
        payload["init_sha256"] = hashlib.sha256(np.ascontiguousarray(init).tobytes()).hexdigest()
    text = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def checkpoint_path(output_dir: PathLike) -> Path:
    """Where :func:`train_x2static` keeps its checkpoint."""
    return Path(output_dir) / CHECKPOINT_DIR / CHECKPOINT_FILE


def remove_checkpoint(output_dir: PathLike) -> None:
    """Remove the checkpoint of :func:`train_x2static` (and ``output_dir`` when that leaves
    it empty)."""
    ckpt = checkpoint_path(output_dir)
    shutil.rmtree(ckpt.parent, ignore_errors=True)
    with contextlib.suppress(OSError):
        ckpt.parent.parent.rmdir()


def _save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def _load_checkpoint(path: Path, fingerprint: str, epochs: int) -> dict[str, Any] | None:
    state = interrupt.read_checkpoint(
        path,
        lambda p: torch.load(p, map_location="cpu", weights_only=True),
        fingerprint=fingerprint,
        what="another teacher cache, vocabulary or arguments",
    )
    if state is None:
        return None
    if state.get("format") != _CHECKPOINT_FORMAT:
        log.warning("%s: checkpoint of another format; starting afresh", path)
        return None
    if state["epoch"] > epochs or (state["epoch"] == epochs and state["batch"] > 0):
        log.warning("%s: checkpoint is past the requested %d epochs; starting afresh", path, epochs)
        return None
    return dict(state)


def _cache_name(cache: object) -> str:
    for attr in ("path", "root", "out_dir", "directory"):
        value = getattr(cache, attr, None)
        if value is not None:
            return str(value)
    return type(cache).__name__


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
    dist: DistContext | None = None,
) -> TrainResult:
    """Train static vectors for ``vocab`` from the teacher contexts in ``cache``.

    Resumes from ``<output_dir>/checkpoint/`` when a matching checkpoint is there. With a
    ``dist`` context of several processes (default: :func:`xlalign.encoders.distributed.current`,
    i.e. an initialised process group, else one process on ``args.device``) every rank
    must call this with the same inputs; each returns the same vectors, and rank 0 alone
    shows progress and writes (and finally removes) the checkpoint.
    """
    args = args or X2StaticArgs()
    args.validate()
    dist = dist or distributed.current(args.device)
    info = log.info if dist.is_main else log.debug
    n_words, dim, n_sent = len(vocab), int(cache.dim), int(cache.n_sentences)
    where = _cache_name(cache)
    if n_words == 0:
        raise InputError(f"{where}: the vocabulary is empty; nothing to train")
    if n_sent == 0:
        raise InputError(f"{where}: the teacher cache has no sentences")
    device = dist.device
    ckpt = checkpoint_path(output_dir)
    weights = initial_weights(n_words, dim, args.seed)
    init_found = 0
    init_read: dict[str, Any] = {}
    if args.init == "vectors":
        assert args.init_vectors is not None  # validated
        rows, found = init_rows(
            args.init_vectors,
            vocab,
            dim,
            encoding_errors=args.encoding_errors,
            duplicates=args.duplicates,
            report=init_read,
        )
        weights[torch.from_numpy(found)] = torch.from_numpy(rows[found])
        init_found = int(found.sum())
        info("x2static: %d of %d words start from %s", init_found, n_words, args.init_vectors)
    fingerprint = training_fingerprint(
        cache, vocab, args, weights.numpy() if args.init == "vectors" else None
    )
    batches_per_epoch = math.ceil(n_sent / args.batch_sentences)
    total_batches = args.epochs * batches_per_epoch

    rej = torch.from_numpy(rejection_probabilities(vocab.counts, args.subsample_t))
    neg_weights = torch.from_numpy(np.sqrt(vocab.counts.astype(np.float64)))
    if args.negatives and float(neg_weights.sum()) <= 0:
        raise InputError(f"{where}: every vocabulary count is zero; cannot draw negatives")

    emb = nn.Embedding.from_pretrained(weights, freeze=False, sparse=True).to(device)
    optimizer = torch.optim.SparseAdam(list(emb.parameters()), lr=args.lr)
    prog = _Progress()
    # Every rank reads the checkpoint; none goes on (or rank 0 saves) until all have.
    state = _load_checkpoint(ckpt, fingerprint, args.epochs)
    resumed_from = None
    if state is not None:
        with torch.no_grad():
            emb.weight.copy_(state["weights"].to(device))
        optimizer.load_state_dict(state["optimizer"])
        prog = _Progress(**state["progress"])
        resumed_from = {"epoch": prog.epoch, "batch": prog.batch}
        info(
            "%s: resuming at epoch %d, batch %d (checkpoint of a %s-process run)",
            ckpt,
            prog.epoch,
            prog.batch,
            state.get("world_size", 1),
        )
    dist.check_agree([prog.epoch, prog.batch, prog.batches_done], f"where to resume ({ckpt})")

    clock = CheckpointClock.from_minutes(args.checkpoint_minutes)

    def save() -> None:
        clock.mark()
        if not dist.is_main:
            return
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
                "world_size": dist.world_size,  # informative only: any other can resume
            },
        )

    def stop_requested() -> bool:
        """Whether a stop was requested (SIGTERM): on any rank, so all stop together."""
        asked = interrupt.requested() is not None
        if not dist.distributed:
            return asked
        flag = torch.tensor(1.0 if asked else 0.0, device=device)
        return float(dist.sum(flag)) > 0

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
        disable=not (progress and dist.is_main),
        dynamic_ncols=True,
    )
    with deterministic_algorithms(), bar, interrupt.checkpointable():
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
                    # This rank's share [lo, hi) of the kept targets (all of them on one).
                    lo, hi = dist.shard(n_kept)
                    optimizer.zero_grad(set_to_none=True)
                    part = torch.zeros((), device=device)
                    if hi > lo:
                        ctx = torch.as_tensor(np.asarray(ctx_np, dtype=np.float32))[keep][lo:hi]
                        rows = torch.cat([targets.unsqueeze(0), negs], dim=0)[:, lo:hi]
                        vecs = emb(rows.to(device))
                        loss = x2static_loss(ctx.to(device), vecs[0], vecs[1:])
                        if dist.distributed:  # the ranks' shares sum to the whole batch's loss
                            loss = loss * ((hi - lo) / n_kept)
                        loss.backward()
                        part = loss.detach()
                    dist.sum_sparse_grad(emb.weight)
                    optimizer.step()
                    value = float(dist.sum(part))
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
                    info("x2static epoch %d/%d: loss %.5f", epoch + 1, args.epochs, mean)
                    prog.epoch_loss, prog.epoch_targets = 0.0, 0
                    prog.epoch, prog.batch = epoch + 1, 0
                    # a kept checkpoint must hold the end of training
                    last = prog.epoch == args.epochs and args.keep_checkpoint
                    if last or clock.due():
                        save()
                elif (
                    args.checkpoint_every_batches
                    and prog.batches_done % args.checkpoint_every_batches == 0
                    and clock.due()
                ):
                    save()
                if stop_requested():  # SIGTERM: checkpoint at this batch boundary, stop
                    save()
                    info("%s: checkpoint at epoch %d, batch %d", ckpt, prog.epoch, prog.batch)
                    signum = interrupt.requested() or signal.SIGTERM  # another rank's
                    raise interrupt.Preempted(signum, f"x2static, checkpoint {ckpt}")

    vectors = emb.weight.detach().cpu().numpy().astype(np.float32, copy=True)
    if not args.keep_checkpoint and dist.is_main:
        remove_checkpoint(output_dir)
    stats = {
        "device": str(device),
        "world_size": dist.world_size,
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
        "init": args.init,
        "init_rows_from_vectors": init_found,
        **({"init_vectors_read": init_read} if init_read else {}),
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


# --------------------------------------------------------------------------- the job

#: Why a vocabulary word may get no vector (see :func:`xlalign.static.spaces.save_space`).
LEFT_OUT_REASON = "never a training target (every occurrence lacked a context)"


@dataclass
class X2StaticJob:
    """One X2S-M job: a teacher cache and its vocabulary in, a static space out.

    Writes ``vec_path``, ``npy_path`` (with its ``.vocab.txt``) and ``stats_path``; keeps its
    checkpoint under ``checkpoint_dir``.
    """

    cache_dir: Path
    vocab_path: Path
    vec_path: Path
    npy_path: Path
    stats_path: Path
    checkpoint_dir: Path
    language: str
    args: X2StaticArgs = field(default_factory=X2StaticArgs)

    def __post_init__(self) -> None:
        for name in ("cache_dir", "vocab_path", "vec_path", "npy_path", "stats_path"):
            setattr(self, name, Path(getattr(self, name)))
        self.checkpoint_dir = Path(self.checkpoint_dir)
        if self.npy_path.suffix != ".npy":
            raise ConfigError(f"x2static npy output {self.npy_path}: expected a .npy path")


def x2static_argv(job: X2StaticJob, *, quiet: bool = False) -> list[str]:
    """The arguments of the ``xlalign x2static`` command that runs ``job`` (how the
    torchrun workers of :func:`run_x2static_job` are started)."""
    argv = ["-q"] if quiet else []
    argv += [
        "x2static",
        str(job.cache_dir),
        str(job.vocab_path),
        "--lang",
        job.language,
        "--vec",
        str(job.vec_path),
        "--npy",
        str(job.npy_path),
        "--stats",
        str(job.stats_path),
        "--checkpoint-dir",
        str(job.checkpoint_dir),
    ]
    defaults = X2StaticArgs()
    for f in dataclasses.fields(job.args):
        value, flag = getattr(job.args, f.name), "--" + f.name.replace("_", "-")
        if isinstance(value, bool):
            argv += [flag] if value else []
        elif value is None:
            argv += [flag, "none"] if getattr(defaults, f.name) is not None else []
        else:
            argv += [flag, str(value)]
    return argv


def train_and_save(
    job: X2StaticJob,
    *,
    progress: bool = True,
    dist: DistContext | None = None,
    stats: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """Train ``job`` in this process (one rank of a data-parallel run, or all of it) and,
    on rank 0, write its space; returns the written stats there and ``None`` elsewhere.

    The stats JSON holds the training's own statistics and ``stats`` (default: the loss
    curves and the teacher cache's metadata, as the workflow records them).
    """
    dist = dist or distributed.current(job.args.device)
    cache = TeacherCache(job.cache_dir)
    vocab = read_vocab(job.vocab_path)
    # The final checkpoint stays until the space is written: a job stopped while writing
    # it resumes there instead of training again.
    keep = dataclasses.replace(job.args, keep_checkpoint=True)
    result = train_x2static(
        cache, vocab, keep, output_dir=job.checkpoint_dir, progress=progress, dist=dist
    )
    if not dist.is_main:
        return None
    if stats is None:
        stats = {
            "curves": {
                "loss": [p["loss"] for p in result.loss_curve],
                "epoch_loss": result.epoch_losses,
            },
            "teacher": cache.meta,
        }
    written = save_space(
        vocab.words,
        result.vectors,
        cache.occurrence_counts(len(vocab)) > 0,
        vec_path=job.vec_path,
        npy_stem=job.npy_path.with_suffix(""),
        stats_path=job.stats_path,
        stats={**result.stats, **stats},
        language=job.language,
        reason=LEFT_OUT_REASON,
    )
    if not job.args.keep_checkpoint:
        remove_checkpoint(job.checkpoint_dir)
    return written


def run_x2static_job(
    job: X2StaticJob,
    *,
    gpus: int = 0,
    progress: bool = True,
    log_path: PathLike | None = None,
) -> dict[str, Any] | None:
    """Run ``job`` as the CLI and the workflow do; returns the stats written (``None`` on
    the ranks > 0 of a data-parallel run).

    Asked for ``gpus`` > 1 with at least two visible (see
    ``distributed.world_size_for``), starts ``xlalign x2static`` (:func:`x2static_argv`)
    under torchrun, one process per GPU, and waits for it (its output goes to ``log_path``
    or stderr). Inside a torchrun worker, trains as one rank of the run; otherwise in this
    process.
    """
    if not distributed.in_torchrun():
        nproc = distributed.world_size_for(gpus)
        if nproc > 1:
            distributed.launch(x2static_argv(job, quiet=not progress), nproc, log_path=log_path)
            return read_json(job.stats_path)
    with distributed.init_from_env(job.args.device) as dist:
        return train_and_save(job, progress=progress, dist=dist)
