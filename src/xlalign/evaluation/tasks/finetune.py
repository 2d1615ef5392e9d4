"""The one fine-tuning loop of every task family, on the Hugging Face Trainer.

:func:`finetune` takes a :class:`~.base.Task` (features, model, decoding, scoring), the
English training and dev records and each test language's records, and:

1. builds the label inventory from the training records and encodes every split
   (:meth:`Task.encode`; what the encoding had to handle is counted);
2. trains with the task's :class:`~.base.TaskParams`: AdamW (``adam_epsilon``,
   ``weight_decay``, not on biases and LayerNorm weights), a linear schedule with
   ``warmup_steps`` (or ``extra["warmup_ratio"]``), gradient clipping at
   ``max_grad_norm``, ``epochs`` epochs of batches of ``batch_size`` examples in all
   (per device x devices x ``gradient_accumulation``), XTREME's values by default;
3. selects a model: ``selection="dev"`` evaluates the English dev split (decode + score
   through the task) every ``eval_every`` optimiser steps and at the end and keeps the
   best by :attr:`Task.selection_metric` (the first of equal scores), as XTREME's scripts
   do; ``"final"`` keeps the last one (QA). The best weights are kept in memory
   (:class:`BestWeights`: a CPU copy taken when the score improves, put back after
   training), not as a checkpoint on disk;
4. with the selected model, decodes and scores the dev split and every test language and
   writes into ``output_dir``: ``predictions/<lang>.jsonl`` (one JSON object per example,
   as :meth:`Task.decode` returns them: one per example, in example order, each with the
   example's ``id``, its ``prediction`` and ``gold`` and whatever else the task adds; the
   dev split as ``predictions/<lang>.dev.jsonl``), ``model/`` (the selected weights as
   safetensors, the model's config and the tokenizer: what the analyses load as an
   encoder; unless ``keep_model=False``) and ``results.json`` (the dict returned; its
   layout is :func:`finetune`'s docstring).

The caps ``max_train_examples``, ``max_dev_examples`` and ``max_test_examples`` keep the
first examples of a split, in the order given.

Speed: batches are padded to their longest feature (not to ``max_length``); evaluation
runs over the features sorted by length, longest first, and puts the outputs back in
feature order before decoding (the same numbers, less padding); AdamW is torch's fused
kernel (the same update; 5x faster than the per-tensor loop on a CPU, where the
optimiser step over a 250k-row embedding matrix is a large part of a step).

Keys of ``params.extra`` this loop reads (other keys belong to the task families):

* ``group_by_length`` (default false): draw *training* batches from random pools of 50
  batches sorted by length, as the Trainer's ``group_by_length`` does. Less padding, but
  not XTREME's batching: the loss is a mean over a batch's labelled subwords, so batches
  of short sentences weigh their words more than random batches would. Measured in
  ``benchmarks/finetune_speed.py``.
* ``eval_batch_size`` (default 64): examples per evaluation batch and device.
* ``warmup_ratio``: the warm-up as a share of all steps, instead of ``warmup_steps``
  (002's 10 %).

Determinism: ``transformers.set_seed(seed)`` before the head is initialised; the data
order comes from generators seeded by ``seed`` and the epoch; training runs under
``torch.use_deterministic_algorithms(True, warn_only=True)``. On the CPU the same
records, encoder, parameters and seed give the same scores.

Resuming: a resume checkpoint (weights, optimiser, scheduler, RNG states, Trainer state)
costs seconds and, for an encoder, gigabytes; it is worth writing only for the work it
saves. So one goes to ``work_dir/checkpoints`` at a dev evaluation (every ``eval_every``
steps, and at the end) only once ``checkpoint_minutes`` of training have passed since
training started or since the last one (:class:`~xlalign.core.cadence.CheckpointClock`,
``checkpoints.interval_minutes``; 0: at every evaluation, None: never), and on SIGTERM
(below). A run shorter than the interval writes nothing there at all (a kill then costs
that run); only the latest checkpoint is kept. Besides the Trainer's files, a checkpoint
holds the selection state (``xlalign-selection.json``: the best step and score so far)
and, when the best weights are not the checkpoint's own, those weights
(``xlalign-best.safetensors``, full precision), so that a resumed run selects, and
predicts with, exactly the model an uninterrupted run does. Left out: the tokenizer (the
encoder's, loaded from there) and the Trainer's ``training_args.bin`` (a pickle nobody
reads). A rerun resumes from the latest complete checkpoint automatically when
``work_dir/fingerprint.json`` (written with the first checkpoint) matches (same task,
encoder files, data, parameters, seed, labels, devices, precision and checkpoint layout)
and starts afresh otherwise. On success ``work_dir`` is removed. The Trainer reads every
tensor file of a checkpoint with ``torch.load(weights_only=True)`` and the weights from
safetensors; the checkpoint is checked the same way before the Trainer sees it, so a
planted file that would run code is refused with an :class:`InputError` naming it. Each
checkpoint also holds, per process, the training loss summed since the last log entry
(``xlalign-log-state_<rank>.json``), so a run resumed from a checkpoint between two log
entries logs the losses an uninterrupted run logs.

SIGTERM (Slurm pre-emption, :mod:`xlalign.core.interrupt`): training is a checkpointable
stretch; at the end of the optimiser step in progress the Trainer saves a checkpoint
(whatever the interval) and stops, and :class:`~xlalign.core.interrupt.Preempted` is
raised (the job exits 143); the re-run resumes from that step. Under torchrun the
processes agree on the step, and on whether a checkpoint is due.

Continual learning (003 section 3, eq. 2): with ``continual=`` (:class:`~.continual.
Continual`) every training micro-step adds ``alpha`` times an alignment objective's loss on
its own batch to the task loss; the objective's parameters train with the model and are
checkpointed with it (:mod:`.continual` says how, and how it stays right under torchrun and
mixed precision). The learning curve then has ``task_loss`` and ``align_loss`` beside
``loss``, and ``results["continual"]`` records the spec.

Loss scaling: each micro-batch's loss is its mean divided by the gradient-accumulation
steps, and DDP averages over processes (XTREME's scaling). The Trainer would otherwise treat
the task models as models that normalise by ``num_items_in_batch`` (their ``forward`` takes
``**kwargs``) and skip the division, which they do not do.

Devices: ``device`` through :func:`xlalign.core.device.resolve_device` (a GPU when torch
sees one); ``precision="auto"`` is bf16 on a GPU that supports it, fp16 on another GPU,
fp32 on the CPU. Under ``torchrun`` (see :mod:`xlalign.encoders.distributed`) the
Trainer runs data-parallel over the processes; rank 0 alone writes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import shutil
import signal
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import safetensors.torch
import torch
from transformers import (
    AutoTokenizer,
    PreTrainedModel,
    Trainer,
    TrainerCallback,
    TrainingArguments,
)
from transformers import set_seed as hf_set_seed
from transformers.trainer_callback import PrinterCallback, ProgressCallback
from transformers.utils import find_labels

from xlalign.core import interrupt
from xlalign.core.cadence import DEFAULT_INTERVAL_MINUTES, CheckpointClock
from xlalign.core.device import (
    deterministic_algorithms,
    resolve_device,
    resolve_precision,
)
from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import atomic_dir, atomic_open, local_model_dir, read_json, write_json
from xlalign.evaluation.tasks.base import Encoded, Task, TaskParams
from xlalign.evaluation.tasks.continual import (
    BATCH_KEY,
    Continual,
    LossMeans,
    WithObjective,
    alignment_rng,
)

log = logging.getLogger(__name__)

CHECKPOINTS = "checkpoints"
FINGERPRINT = "fingerprint.json"
RESULTS = "results.json"
MODEL = "model"
PREDICTIONS = "predictions"
#: batch size of evaluation and prediction (per device) unless ``extra`` says otherwise
EVAL_BATCH_SIZE = 64
_TRAINER_STATE = "trainer_state.json"
#: the logging state of one process in a checkpoint (see the module docstring)
_LOG_STATE = "xlalign-log-state_{rank}.json"
#: the selection state in a checkpoint: the best dev evaluation so far (step, score) and,
#: when the best weights are not the checkpoint's own, the file holding them
_SELECTION = "xlalign-selection.json"
_BEST_WEIGHTS = "xlalign-best.safetensors"
#: what the Trainer once pickled into a checkpoint and never read back (not written now)
_UNREAD = frozenset({"training_args.bin"})
#: the layout of a checkpoint, in the fingerprint: a work dir of an older layout (whose
#: selection state the Trainer kept on disk) is never resumed from
_LAYOUT = 2
#: what a training log entry keeps (the losses of continual learning when present)
_TRAIN_KEYS = ("step", "epoch", "loss", "task_loss", "align_loss", "learning_rate", "grad_norm")
#: what the Trainer adds to each evaluation's log besides the task's scores
_EVAL_TIMINGS = frozenset({"runtime", "samples_per_second", "steps_per_second"})


# --------------------------------------------------------------------------- datasets


class FeatureDataset(torch.utils.data.Dataset):
    """Features of a split, in ``order`` (default: as encoded)."""

    def __init__(self, features: Sequence[dict[str, Any]], order: Sequence[int] | None = None):
        self.features = features
        self.order = list(range(len(features))) if order is None else list(order)

    def __len__(self) -> int:
        return len(self.order)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return self.features[self.order[i]]


def feature_length(feature: Mapping[str, Any]) -> int:
    return len(feature.get("input_ids", ()))


def longest_first(features: Sequence[Mapping[str, Any]]) -> list[int]:
    """Feature indices by decreasing length (stable)."""
    return sorted(range(len(features)), key=lambda i: -feature_length(features[i]))


def restore_order(outputs: Any, order: Sequence[int]) -> Any:
    """Outputs over features in ``order`` (arrays, or tuples of them) put back in
    feature order: row ``k`` of an array belongs to feature ``order[k]``."""
    if isinstance(outputs, tuple | list):
        return tuple(restore_order(o, order) for o in outputs)
    arr = np.asarray(outputs)
    if arr.ndim == 0 or arr.shape[0] != len(order):
        raise ValueError(f"restore_order: {arr.shape} outputs for {len(order)} features")
    out = np.empty_like(arr)
    out[np.asarray(order, dtype=np.int64)] = arr
    return out


class LengthGroupedSampler(torch.utils.data.Sampler[int]):
    """Random pools of ``pool`` examples, each sorted by decreasing length, so that a
    batch holds examples of similar length; the pool holding the longest example comes
    first. The permutation depends only on ``seed`` and the epoch (:meth:`set_epoch`),
    so a run resumed mid-epoch sees the batches an uninterrupted one sees."""

    def __init__(self, lengths: Sequence[int], pool: int, seed: int) -> None:
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.pool = max(1, int(pool))
        self.seed = int(seed)
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def __len__(self) -> int:
        return len(self.lengths)

    def __iter__(self) -> Iterator[int]:
        rng = np.random.default_rng([self.seed, self.epoch])
        perm = rng.permutation(len(self.lengths))
        pools = [perm[i : i + self.pool] for i in range(0, len(perm), self.pool)]
        pools = [p[np.argsort(-self.lengths[p], kind="stable")] for p in pools]
        top = max(range(len(pools)), key=lambda k: self.lengths[pools[k][0]], default=0)
        if pools:
            pools[0], pools[top] = pools[top], pools[0]
        return iter(int(i) for p in pools for i in p)


@dataclasses.dataclass
class _Split:
    """A split's records, features, and the dataset it is evaluated from."""

    name: str
    records: Sequence[Any]
    encoded: Encoded
    order: list[int]

    @property
    def dataset(self) -> FeatureDataset:
        return FeatureDataset(self.encoded.features, self.order)


# --------------------------------------------------------------------------- set-up


def _world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def _per_device_batch(params: TaskParams, world: int) -> int:
    per_step = world * params.gradient_accumulation
    if params.batch_size % per_step:
        raise ConfigError(
            f"batch_size {params.batch_size} is not a multiple of devices x gradient "
            f"accumulation ({world} x {params.gradient_accumulation})"
        )
    return params.batch_size // per_step


def _records_digest(records: Sequence[Any]) -> str:
    h = hashlib.sha256()
    for rec in records:
        h.update(json.dumps(dataclasses.asdict(rec), sort_keys=True).encode())
        h.update(b"\n")
    return h.hexdigest()


def _encoder_digest(encoder: Path) -> list[list[Any]]:
    """Name, size and modification time of each file of the encoder (a retrained
    encoder at the same path never resumes an old run)."""
    return [
        [p.name, p.stat().st_size, p.stat().st_mtime_ns]
        for p in sorted(encoder.iterdir())
        if p.is_file()
    ]


def fingerprint(
    task: Task,
    *,
    encoder: Path,
    train: Sequence[Any],
    dev: Sequence[Any],
    params: TaskParams,
    seed: int,
    labels: list[str],
    world_size: int,
    precision: str,
    continual: Continual | None = None,
) -> str:
    """SHA-256 of everything a checkpoint must agree with to be resumed (a continual
    run's spec and objective included, and the checkpoints' layout)."""
    payload = {
        "layout": _LAYOUT,
        "task": [type(task).__module__, type(task).__qualname__, sorted(vars(task).items())],
        "encoder": [str(encoder.resolve()), _encoder_digest(encoder)],
        "train": _records_digest(train),
        "dev": _records_digest(dev),
        "params": dataclasses.asdict(params),
        "seed": seed,
        "labels": labels,
        "world_size": world_size,
        "precision": precision,
    }
    if continual is not None:
        payload["continual"] = continual.fingerprint()
    text = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def last_checkpoint(checkpoints: Path) -> Path | None:
    """The checkpoint with the highest step that was written to the end (its
    ``trainer_state.json``, written last, is there); ``None`` when there is none."""
    if not checkpoints.is_dir():
        return None
    done = []
    for p in checkpoints.glob("checkpoint-*"):
        step = p.name.rsplit("-", 1)[-1]
        if p.is_dir() and step.isdigit() and (p / _TRAINER_STATE).is_file():
            done.append((int(step), p))
    return max(done)[1] if done else None


def _prepare_work_dir(work_dir: Path, digest: str, is_main: bool) -> None:
    """Keep ``work_dir``'s checkpoints only when they belong to this very run; drop
    checkpoints a killed writer left half-written. Writes nothing: the fingerprint goes
    into ``work_dir`` with the first checkpoint (:func:`_stamp_work_dir`)."""
    ckpts = work_dir / CHECKPOINTS
    if not is_main:
        return
    stamp = work_dir / FINGERPRINT
    if ckpts.exists():
        old = read_json(stamp).get("fingerprint") if stamp.is_file() else None
        if old != digest:
            log.warning(
                "%s: checkpoints of another run (task, encoder, data, parameters or seed "
                "differ); starting afresh",
                ckpts,
            )
            shutil.rmtree(ckpts)
        else:
            for p in ckpts.glob("checkpoint-*"):
                if p.is_dir() and not (p / _TRAINER_STATE).is_file():
                    log.warning("%s: incomplete checkpoint (killed while saving); removed", p)
                    shutil.rmtree(p)


def _remove_if_empty(path: Path) -> None:
    with contextlib.suppress(OSError):  # not there, or not empty
        path.rmdir()


def _stamp_work_dir(work_dir: Path, digest: str) -> None:
    """The fingerprint of the run whose checkpoints ``work_dir`` holds (written before a
    checkpoint is complete, so a complete checkpoint always has its stamp)."""
    stamp = work_dir / FINGERPRINT
    if not stamp.is_file() or read_json(stamp).get("fingerprint") != digest:
        write_json(stamp, {"fingerprint": digest})


def check_checkpoint(checkpoint: Path) -> None:
    """Refuse a checkpoint holding a tensor file that ``torch.load(weights_only=True)``
    cannot read (an object that would run code when unpickled, or a damaged file): an
    :class:`InputError` naming it. Memory-mapped, so the tensors are not read."""
    from transformers.trainer_pt_utils import safe_globals

    for path in sorted(checkpoint.iterdir()):
        if path.suffix not in (".pt", ".pth", ".bin") or path.name in _UNREAD:
            continue
        try:
            with safe_globals():
                torch.load(path, map_location="cpu", weights_only=True, mmap=True)
        except Exception as exc:  # pickle.UnpicklingError, RuntimeError of a bad archive
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise InputError(
                f"{path}: not a fine-tuning checkpoint file that can be read safely "
                f"(weights only); remove {checkpoint} to start afresh ({first})"
            ) from exc


# --------------------------------------------------------------------------- results


def _numeric(scores: Mapping[str, Any]) -> dict[str, float]:
    """The top-level numbers of a score dict (what the Trainer logs)."""
    return {
        k: float(v)
        for k, v in scores.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    }


def learning_curve(log_history: Sequence[Mapping[str, Any]]) -> dict[str, list[dict]]:
    """The Trainer's ``log_history`` split into the training loss (every ``log_every``
    steps; with continual learning also ``task_loss``, ``align_loss`` and the objective's
    logs, whose names hold a ``/``) and the dev evaluations (``eval_`` prefixes dropped),
    each by step."""
    train, dev = [], []
    for entry in log_history:
        if "loss" in entry:
            train.append(
                {k: v for k, v in entry.items() if k in _TRAIN_KEYS or "/" in k}
            )  # fmt: skip
        elif any(k.startswith("eval_") for k in entry):
            point = {"step": entry.get("step"), "epoch": entry.get("epoch")}
            point.update(
                {k[5:]: v for k, v in entry.items()
                 if k.startswith("eval_") and k[5:] not in _EVAL_TIMINGS}
            )  # fmt: skip
            dev.append(point)
    return {"train": train, "dev": dev}


def _write_predictions(path: Path, predictions: Sequence[Mapping[str, Any]]) -> None:
    with atomic_open(path) as fh:
        for p in predictions:
            fh.write(json.dumps(p, ensure_ascii=False, default=_jsonable) + "\n")


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _check_predictions(
    predictions: Sequence[Mapping[str, Any]], records: Sequence[Any], where: str
) -> None:
    if len(predictions) != len(records):
        raise RuntimeError(
            f"{where}: the task decoded {len(predictions)} predictions for {len(records)} examples"
        )
    for p, rec in zip(predictions, records, strict=True):
        if p.get("id") != rec.id or "prediction" not in p or "gold" not in p:
            raise RuntimeError(
                f"{where}: prediction {p.get('id')!r} for example {rec.id!r}; each needs "
                "the example's id, 'prediction' and 'gold', in example order"
            )


# --------------------------------------------------------------------------- selection


class BestWeights:
    """Model selection in memory: the best dev evaluation so far (``step``, ``value``) and
    a copy of the model's weights then, in CPU memory (a second copy on the GPU would halve
    the room a large encoder has there).

    The rule is the Trainer's ``load_best_model_at_end`` with ``greater_is_better``: an
    evaluation replaces the best only when strictly greater (a tie keeps the earlier one;
    NaN never wins). The copy is taken once per improvement into buffers allocated once;
    tensors the model shares (tied embeddings) are copied once, and frozen parameters
    (``requires_grad=False``: a feature-based run's encoder) not at all, since training
    leaves them as they are.
    """

    def __init__(self) -> None:
        self.step: int | None = None
        self.value: float | None = None
        self._tensors: dict[str, torch.Tensor] = {}  # first key of each tensor -> CPU copy
        self._alias: dict[str, str] = {}  # each state-dict key -> that first key

    def observe(self, step: int, value: float, model: torch.nn.Module) -> bool:
        """An evaluation at ``step`` scored ``value``: keep ``model``'s weights when it is
        the best so far; whether it was."""
        best = float("-inf") if self.value is None else self.value
        if not np.greater(value, best):
            return False
        self.step, self.value = int(step), float(value)
        self.take(model)
        return True

    @staticmethod
    def _state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
        """``model``'s state dict less its frozen parameters."""
        frozen = {
            name
            for name, p in model.named_parameters(remove_duplicate=False)
            if not p.requires_grad
        }
        return {k: v for k, v in model.state_dict().items() if k not in frozen}

    @staticmethod
    def _aliases(state: Mapping[str, torch.Tensor]) -> dict[str, str]:
        first: dict[tuple, str] = {}
        alias = {}
        for key, t in state.items():
            ident = (
                t.device.type,
                t.untyped_storage().data_ptr(),
                t.storage_offset(),
                tuple(t.shape),
                tuple(t.stride()),
                t.dtype,
            )
            alias[key] = first.setdefault(ident, key)
        return alias

    @torch.no_grad()
    def take(self, model: torch.nn.Module) -> None:
        """Copy ``model``'s weights (its state dict, less frozen parameters) into the CPU
        buffers."""
        state = self._state(model)
        alias = self._aliases(state)
        if alias != self._alias or any(
            self._tensors[k].shape != state[k].shape or self._tensors[k].dtype != state[k].dtype
            for k in set(alias.values())
        ):
            self._alias = alias
            self._tensors = {
                k: torch.empty(state[k].shape, dtype=state[k].dtype, device="cpu")
                for k in dict.fromkeys(alias.values())
            }
        for k, buf in self._tensors.items():
            buf.copy_(state[k])

    def restore(self, model: torch.nn.Module) -> None:
        """Put the kept weights back into ``model`` (on its device)."""
        if not self._tensors:
            raise RuntimeError("no weights were kept; nothing to restore")
        state = {k: self._tensors[a] for k, a in self._alias.items()}
        missing, unexpected = model.load_state_dict(state, strict=False)
        if unexpected or set(missing) & set(self._state(model)):
            raise RuntimeError(f"kept weights do not fit the model: {missing}, {unexpected}")

    def save(self, path: Path) -> None:
        """The kept weights as safetensors (full precision: a resumed run restores these
        exact weights)."""
        safetensors.torch.save_file(self._tensors, str(path))

    def load(self, path: Path, model: torch.nn.Module, *, step: int, value: float) -> None:
        """The weights :meth:`save` wrote, for ``model`` (an :class:`InputError` naming
        ``path`` when they are not its weights)."""
        try:
            tensors = safetensors.torch.load_file(str(path))
        except Exception as exc:  # a missing or damaged file
            raise InputError(
                f"{path}: the selected weights of this checkpoint cannot be read ({exc}); "
                f"remove {path.parent} to start afresh"
            ) from exc
        state = self._state(model)
        alias = self._aliases(state)
        wanted = {k: (tuple(state[k].shape), state[k].dtype) for k in set(alias.values())}
        got = {k: (tuple(t.shape), t.dtype) for k, t in tensors.items()}
        if got != wanted:
            raise InputError(
                f"{path}: not this model's weights ({len(got)} tensors for {len(wanted)}, or "
                f"other shapes); remove {path.parent} to start afresh"
            )
        self._alias, self._tensors = alias, tensors
        self.step, self.value = int(step), float(value)


# --------------------------------------------------------------------------- the loop


def finetune(
    task: Task,
    *,
    encoder: Path,
    train: list,
    dev: list,
    tests: dict[str, list],
    params: TaskParams,
    seed: int,
    output_dir: Path,
    work_dir: Path,
    device: str | None = None,
    precision: str = "auto",
    keep_model: bool = True,
    log_every: int = 50,
    dev_language: str = "en",
    data_counts: Mapping[str, Any] | None = None,
    progress: bool = True,
    callbacks: Sequence[Any] = (),
    continual: Continual | None = None,
    checkpoint_minutes: float | None = DEFAULT_INTERVAL_MINUTES,
) -> dict[str, Any]:
    """Fine-tune ``encoder`` for ``task`` on ``train``, select on ``dev`` and evaluate on
    ``tests`` (language -> records); returns the results, also written to
    ``output_dir/results.json`` (by rank 0; see the module docstring for everything
    else). ``callbacks`` are extra Trainer callbacks (tests use one to kill a run);
    ``continual`` keeps an alignment loss during training (003; the module docstring);
    ``checkpoint_minutes`` is the least work between two resume checkpoints
    (``checkpoints.interval_minutes``: 0 at every evaluation, None on SIGTERM only).

    Results::

        {
          "family", "task", "encoder", "seed", "params", "labels",
          "device", "precision", "world_size",
          "selection": {"mode": "dev" | "final", "metric", "step", "value",
                        "evaluations"},
          "steps": <optimiser steps>, "resumed_from_step": <step> | None,
          "scores": {"<dev_language>/dev": {...}, "<lang>": {...}, ...},  # task.score
          "counts": {"train": {...}, "<dev_language>/dev": {...}, "<lang>": {...},
                     "data": data_counts},     # Encoded.counts: unseen labels, splits...
          "predictions": {"<dev_language>/dev": "predictions/<dev_language>.dev.jsonl",
                          "<lang>": "predictions/<lang>.jsonl"},
          "learning_curve": {"train": [{"step", "epoch", "loss", "learning_rate",
                                        "grad_norm"}], "dev": [{"step", "epoch", <metrics>}]},
          "curves": {"train_loss": [...], "dev_<metric>": [...]},   # for MLflow
                    # continual: also "train_task_loss", "train_align_loss"
          "continual": {"name", "alpha", "batch_size", "objective_name",
                        "objective": <its state()>, "align_loss_first",
                        "align_loss_last"},                    # continual runs only
          "speed": {"train_examples_per_s", "train_features_per_s", "train_seconds",
                    "train_cpu_seconds", "evaluate_seconds", "predict_seconds",
                    "total_seconds"},
          "model": "model" | None,
        }
    """
    started = time.perf_counter()
    encoder, output_dir, work_dir = Path(encoder), Path(output_dir), Path(work_dir)
    # the caps of the embedded default: the first examples, in file order (as run.py)
    train, dev = _cap(train, params.max_train_examples), _cap(dev, params.max_dev_examples)
    tests = {lang: _cap(recs, params.max_test_examples) for lang, recs in tests.items()}
    for name, recs in (("train", train), ("dev", dev), *tests.items()):
        wrong = next((r for r in recs if not isinstance(r, task.record_type)), None)
        if wrong is not None:
            raise InputError(
                f"{task.family} {name}: a {type(wrong).__name__} record; this task reads "
                f"{task.record_type.__name__} records"
            )
    if not train:
        raise InputError(f"{task.family}: no training examples")
    if params.selection == "dev" and not dev:
        raise InputError(f"{task.family}: selection on the dev split, but it is empty")
    if log_every < 1:
        raise ConfigError(f"log_every must be >= 1, got {log_every}")
    dev_key = f"{dev_language}/dev"
    if dev_key in tests:
        raise ConfigError(f"test language {dev_key!r} clashes with the dev split's name")

    dev_torch = resolve_device(device)
    if dev_torch.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {device!r}: torch sees no GPU")
    prec = resolve_precision(precision, dev_torch)
    world = _world_size()
    per_device = _per_device_batch(params, world)
    if dev_torch.type == "cuda":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS
        if dev_torch.index is not None and world == 1:
            torch.cuda.set_device(dev_torch)

    # Labels and features.
    labels = task.label_list(train)
    tokenizer = AutoTokenizer.from_pretrained(
        local_model_dir(encoder, what="encoder"), local_files_only=True
    )
    enc_train = task.encode(train, tokenizer, labels, params, split="train")
    if not enc_train.features:
        raise InputError(f"{task.family}: the training examples gave no features")
    splits: dict[str, _Split] = {}
    if dev:
        e = task.encode(dev, tokenizer, labels, params, split="dev")
        splits[dev_key] = _Split(dev_key, dev, e, longest_first(e.features))
    for lang, recs in tests.items():
        if not recs:
            raise InputError(f"{task.family}: no test examples for {lang!r}")
        e = task.encode(recs, tokenizer, labels, params, split="test")
        splits[lang] = _Split(lang, recs, e, longest_first(e.features))

    # Checkpoints of an interrupted run of this very job, if any.
    digest = fingerprint(
        task,
        encoder=encoder,
        train=train,
        dev=dev,
        params=params,
        seed=seed,
        labels=labels,
        world_size=world,
        precision=prec,
        continual=continual,
    )
    extra = dict(params.extra)
    select_on_dev = params.selection == "dev"
    warmup: float = params.warmup_steps
    if extra.get("warmup_ratio"):
        if params.warmup_steps:
            raise ConfigError("set warmup_steps or extra.warmup_ratio, not both")
        warmup = float(extra["warmup_ratio"])
        if not 0 < warmup < 1:
            raise ConfigError(f"extra.warmup_ratio must be in (0, 1), got {warmup}")
    args = TrainingArguments(
        output_dir=str(work_dir / CHECKPOINTS),
        per_device_train_batch_size=per_device,
        per_device_eval_batch_size=int(extra.get("eval_batch_size", EVAL_BATCH_SIZE)),
        gradient_accumulation_steps=params.gradient_accumulation,
        learning_rate=params.learning_rate,
        weight_decay=params.weight_decay,
        adam_epsilon=params.adam_epsilon,
        max_grad_norm=params.max_grad_norm,
        num_train_epochs=params.epochs,
        lr_scheduler_type="linear",
        warmup_steps=warmup,
        optim="adamw_torch_fused",  # the same AdamW, one kernel: 5x faster on CPU
        logging_strategy="steps",
        logging_steps=log_every,
        eval_strategy="steps" if select_on_dev else "no",
        eval_steps=params.eval_every,
        # a resume checkpoint may be written at each evaluation; _Checkpoints vetoes it
        # unless the clock says it is due. The best model is kept in memory (BestWeights),
        # not as a Trainer checkpoint: only the latest checkpoint is on disk.
        save_strategy="steps",
        save_steps=params.eval_every,
        save_total_limit=1,
        load_best_model_at_end=False,
        seed=seed,
        data_seed=seed,
        use_cpu=dev_torch.type != "cuda",
        bf16=prec == "bf16",
        fp16=prec == "fp16",
        report_to="none",
        disable_tqdm=not progress,
        dataloader_num_workers=0,
        remove_unused_columns=False,
        accelerator_config={"use_seedable_sampler": True},
    )
    is_main = args.process_index == 0
    with args.main_process_first(local=False, desc="checking checkpoints"):
        _prepare_work_dir(work_dir, digest, is_main)
    resume = last_checkpoint(work_dir / CHECKPOINTS)
    if resume is not None:
        check_checkpoint(resume)

    hf_set_seed(seed)  # the head's initial weights
    model = task.build_model(encoder, labels)
    # What the Trainer trains: the task model, or the task model and the objective
    trained: torch.nn.Module = model if continual is None else WithObjective(model, continual)
    task_labels = find_labels(type(model))
    means = LossMeans()
    best = BestWeights()
    clock = CheckpointClock.from_minutes(checkpoint_minutes)

    # Model selection: decode + score the dev split through the task.
    state_ref: dict[str, Any] = {}
    best_dev: dict[int, tuple[list, dict]] = {}
    timers = {"evaluate": 0.0, "predict": 0.0, "train_cpu": 0.0}
    dev_split = splits.get(dev_key)

    def compute_metrics(ev: Any) -> dict[str, float]:
        assert dev_split is not None
        outputs = ev.predictions if isinstance(ev.predictions, tuple) else (ev.predictions,)
        outputs = restore_order(outputs, dev_split.order)
        preds = task.decode(outputs, dev_split.encoded, dev_split.records, labels, params)
        scores = task.score(preds, dev_split.records, lang=dev_language)
        metric = scores.get(task.selection_metric)
        if metric is None:
            raise RuntimeError(
                f"{type(task).__name__}.score gave no {task.selection_metric!r} "
                f"(selection metric): {sorted(scores)}"
            )
        step = state_ref["trainer"].state.global_step
        best = max((s[task.selection_metric] for _, s in best_dev.values()), default=None)
        if best is None or metric > best:  # keep the best one's predictions only
            best_dev.clear()
            best_dev[step] = (preds, scores)
        return _numeric(scores)

    class _Trainer(Trainer):
        def __init__(self, *a: Any, **kw: Any) -> None:
            super().__init__(*a, **kw)
            # The task models' forward takes **kwargs but ignores num_items_in_batch: have
            # the Trainer divide by the accumulation steps (see the module docstring).
            self.model_accepts_loss_kwargs = False
            self.label_names = task_labels  # the task model's, not WithObjective's
            self._micro = (-1, 0)  # (optimiser step, micro-steps done in it)

        def compute_loss(
            self,
            model: Any,
            inputs: dict[str, Any],
            return_outputs: bool = False,
            num_items_in_batch: Any = None,
        ) -> Any:
            if continual is None or not model.training:
                return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            step = self.state.global_step
            micro = self._micro[1] if self._micro[0] == step else 0
            self._micro = (step, micro + 1)
            # Batch k of step s on rank r: the generator of (seed, s, k * world + r), so a
            # resumed run (which restarts at a step boundary) draws what an uninterrupted
            # one draws, and one process accumulating over n micro-batches draws what n
            # processes draw in one.
            index = micro * self.args.world_size + self.args.process_index
            rng = alignment_rng(seed, step, index)
            batch = self._prepare_input(continual.objective.sample(rng, continual.batch_size))
            loss = super().compute_loss(
                model, {**inputs, BATCH_KEY: batch}, return_outputs, num_items_in_batch
            )
            assert isinstance(trained, WithObjective) and trained.last is not None
            means.add(*trained.last)
            return loss

        def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
            if continual is not None and "loss" in logs:  # a training log, on every rank
                logs.update(means.report(lambda t: self.accelerator.reduce(t, "mean")))
            super().log(logs, start_time)

        def _save_rng_state(self, output_dir: str) -> None:
            # inside each checkpoint, before its trainer_state.json (written last): the
            # loss summed since the last log entry, the selection state, the fingerprint
            # (see the module docstring)
            super()._save_rng_state(output_dir)
            _write_log_state(Path(output_dir), self, means)
            if self.args.should_save:
                _write_selection(Path(output_dir), best, self.state.global_step)
                _stamp_work_dir(work_dir, digest)

        def _save(self, output_dir: str | None = None, state_dict: Any = None) -> None:
            # The Trainer's _save less the tokenizer (the encoder's, never read from a
            # checkpoint; _save_task_model adds it to a kept model) and training_args.bin
            # (a pickle nobody reads): the weights and the model's config.
            if not self.args.should_save:
                return
            path = output_dir if output_dir is not None else self.args.output_dir
            os.makedirs(path, exist_ok=True)
            unwrapped = self.accelerator.unwrap_model(self.model, keep_torch_compile=False)
            if isinstance(unwrapped, PreTrainedModel):
                unwrapped.save_pretrained(path, state_dict=state_dict, is_main_process=True)
            else:  # a continual run's task model and objective: the state dict alone
                weights = state_dict if state_dict is not None else unwrapped.state_dict()
                safetensors.torch.save_file(
                    weights, os.path.join(path, "model.safetensors"), metadata={"format": "pt"}
                )

        def _get_train_sampler(self, train_dataset: Any = None) -> Any:
            if extra.get("group_by_length"):
                data = train_dataset if train_dataset is not None else self.train_dataset
                lengths = [feature_length(data[i]) for i in range(len(data))]
                pool = 50 * self.args.train_batch_size * self.args.gradient_accumulation_steps
                return LengthGroupedSampler(lengths, pool, seed)
            return super()._get_train_sampler(train_dataset)

        def _get_eval_sampler(self, eval_dataset: Any) -> Any:
            # feature order as given (the Trainer's own grouping would shuffle it)
            if self.args.world_size <= 1:
                return torch.utils.data.SequentialSampler(eval_dataset)
            return None

    had_work_dir = work_dir.exists()
    trainer = _Trainer(
        model=trained,
        args=args,
        data_collator=task.collate(tokenizer),
        train_dataset=FeatureDataset(enc_train.features),
        eval_dataset=dev_split.dataset if (dev_split is not None and select_on_dev) else None,
        processing_class=tokenizer,
        compute_metrics=compute_metrics if select_on_dev else None,
        callbacks=[_Timer(timers), *callbacks],
    )
    state_ref["trainer"] = trainer
    if is_main:  # the Trainer makes its output dir up front; a checkpoint makes it again
        _remove_if_empty(work_dir / CHECKPOINTS)
        if not had_work_dir:
            _remove_if_empty(work_dir)
    # Progress bar (tqdm, with ETA) on stderr, the job's log; the logged losses and dev
    # scores through logging rather than printed on stdout.
    trainer.remove_callback(ProgressCallback)
    trainer.remove_callback(PrinterCallback)
    trainer.add_callback(_LogMetrics())
    preemption = _Checkpoints(
        trainer,
        means,
        resume,
        clock=clock,
        best=best if select_on_dev else None,
        metric=f"eval_{task.selection_metric}",
    )
    trainer.add_callback(preemption)
    if progress:
        trainer.add_callback(_ProgressBar())
    if resume is not None:
        log.info("resuming from %s", resume)

    with deterministic_algorithms():
        with interrupt.checkpointable():
            out = trainer.train(resume_from_checkpoint=str(resume) if resume else None)
        if preemption.stopped_at is not None or interrupt.requested() is not None:
            where = trainer.state.global_step
            log.warning("stopped at step %d (SIGTERM); a re-run resumes there", where)
            interrupt.raise_if_requested(f"fine-tuning checkpointed at step {where}")
            raise interrupt.Preempted(signal.SIGTERM, f"another process, step {where}")
        state = trainer.state
        if select_on_dev:
            if best.step is None or best.value is None:
                raise RuntimeError("no dev evaluation took place; cannot select a checkpoint")
            selected, value = best.step, best.value
            if selected != state.global_step:
                best.restore(trainer.model)
        else:
            selected, value = int(state.global_step), None
        trainer.compute_metrics = None

        # The selected model on every split (the dev predictions of the best evaluation
        # when this process made it).
        predictions: dict[str, list] = {}
        scores: dict[str, dict] = {}
        for name, split in splits.items():
            if hasattr(model, "set_language"):  # feature-based: the split's linear maps
                model.set_language(dev_language if name == dev_key else name)
            if name == dev_key and selected in best_dev:
                predictions[name], scores[name] = best_dev[selected]
                continue
            t0 = time.perf_counter()
            res = trainer.predict(split.dataset, metric_key_prefix="predict")
            raw = res.predictions if isinstance(res.predictions, tuple) else (res.predictions,)
            outputs = restore_order(raw, split.order)
            predictions[name] = task.decode(outputs, split.encoded, split.records, labels, params)
            lang = dev_language if name == dev_key else name
            scores[name] = task.score(predictions[name], split.records, lang=lang)
            timers["predict"] += time.perf_counter() - t0

    for name, split in splits.items():
        _check_predictions(predictions[name], split.records, f"{task.family} {name}")

    curve = learning_curve(state.log_history)
    curves = {"train_loss": [p["loss"] for p in curve["train"]]}
    continual_results = None
    if continual is not None:
        for part in ("task_loss", "align_loss"):
            curves[f"train_{part}"] = [p[part] for p in curve["train"] if part in p]
        aligned = curves["train_align_loss"]
        continual_results = {
            **continual.describe(),
            "align_loss_first": aligned[0] if aligned else None,
            "align_loss_last": aligned[-1] if aligned else None,
        }
    if select_on_dev:
        metric = task.selection_metric
        curves[f"dev_{metric}"] = [p[metric] for p in curve["dev"]]
    files = {name: f"{PREDICTIONS}/{name}.jsonl" for name in tests}
    if dev_key in splits:
        files[dev_key] = f"{PREDICTIONS}/{dev_language}.dev.jsonl"
    # Training speed over the steps this process ran (a resumed run: the rest of them).
    train_seconds = float(out.metrics.get("train_runtime", 0.0))
    share = (state.global_step - (_step_of(resume) if resume else 0)) / max(1, state.max_steps)
    per_s = share * params.epochs / train_seconds if train_seconds else None
    results: dict[str, Any] = {
        "family": task.family,
        "task": type(task).__name__,
        **({"scheme": task.scheme} if hasattr(task, "scheme") else {}),
        "encoder": str(encoder),
        "seed": seed,
        "params": dataclasses.asdict(params),
        "labels": labels,
        "device": str(dev_torch),
        "precision": prec,
        "world_size": world,
        "selection": {
            "mode": params.selection,
            "metric": task.selection_metric if select_on_dev else None,
            "step": selected,
            "value": value,
            "evaluations": len(curve["dev"]),
        },
        "steps": int(state.global_step),
        "resumed_from_step": _step_of(resume) if resume else None,
        "scores": scores,
        "counts": {
            "train": enc_train.counts,
            **{name: split.encoded.counts for name, split in splits.items()},
            "data": dict(data_counts or {}),
        },
        "predictions": files,
        "learning_curve": curve,
        "curves": curves,
        "speed": {
            "train_seconds": train_seconds,
            "train_cpu_seconds": timers["train_cpu"],
            "train_examples_per_s": len(train) * per_s if per_s is not None else None,
            "train_features_per_s": len(enc_train.features) * per_s if per_s is not None else None,
            "evaluate_seconds": timers["evaluate"],
            "predict_seconds": timers["predict"],
            "total_seconds": time.perf_counter() - started,
        },
        "model": MODEL if keep_model else None,
    }
    if continual_results is not None:
        results["continual"] = continual_results

    if is_main:
        output_dir.mkdir(parents=True, exist_ok=True)
        for name in splits:
            _write_predictions(output_dir / files[name], predictions[name])
        model_dir = output_dir / MODEL
        if keep_model:
            with atomic_dir(model_dir) as tmp:
                _save_task_model(trainer, model, tmp)
        elif model_dir.exists():
            shutil.rmtree(model_dir)  # a kept model of an earlier run of this job
        write_json(output_dir / RESULTS, results)
    trainer.accelerator.wait_for_everyone()
    if is_main:
        shutil.rmtree(work_dir, ignore_errors=True)
    return results


def _save_task_model(trainer: Trainer, model: torch.nn.Module, path: Path) -> None:
    """The task model alone into ``path`` (weights as safetensors, config, tokenizer: what
    the analyses load as an encoder; a continual run's Trainer holds the objective too, it
    is left out)."""
    trained = trainer.model
    trainer.model = model
    try:
        trainer.save_model(str(path))
    finally:
        trainer.model = trained
    if trainer.processing_class is not None:
        trainer.processing_class.save_pretrained(str(path))


def _cap(records: Sequence[Any], n: int | None) -> list[Any]:
    return list(records) if n is None else list(records[:n])


def _step_of(checkpoint: Path) -> int:
    return int(checkpoint.name.rsplit("-", 1)[-1])


def _write_log_state(checkpoint: Path, trainer: Any, means: LossMeans) -> None:
    """This process's logging state into ``checkpoint`` (the loss summed since the last
    log entry, that entry's step, the continual losses' sums)."""

    def number(v: Any) -> float:
        return float(v.item()) if isinstance(v, torch.Tensor) else float(v)

    state = {
        "tr_loss": number(trainer._tr_loss),
        "last_logged": int(trainer._globalstep_last_logged),
        "means": {
            "task": number(means.task),
            "align": number(means.align),
            "logs": dict(means.logs),
            "n": int(means.n),
        },
    }
    write_json(checkpoint / _LOG_STATE.format(rank=trainer.args.process_index), state)


def _write_selection(checkpoint: Path, best: BestWeights, step: int) -> None:
    """The selection state into ``checkpoint`` at ``step``: the best evaluation so far and,
    when it was not at ``step`` (the checkpoint's own weights), the weights kept then."""
    weights = None
    if best.step is not None and best.step != step:
        weights = _BEST_WEIGHTS
        best.save(checkpoint / weights)
    write_json(
        checkpoint / _SELECTION, {"step": best.step, "value": best.value, "weights": weights}
    )


def _read_selection(checkpoint: Path, best: BestWeights, model: torch.nn.Module) -> None:
    """Put the selection state of ``checkpoint`` into ``best`` (``model`` holds the
    checkpoint's weights already)."""
    path = checkpoint / _SELECTION
    try:
        saved = read_json(path)
        step, value, weights = saved["step"], saved["value"], saved["weights"]
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise InputError(
            f"{path}: not a selection state ({exc}); remove {checkpoint} to start afresh"
        ) from exc
    if step is None:
        return
    if weights is None:  # the best evaluation was this checkpoint's own
        if int(step) != _step_of(checkpoint):
            raise InputError(
                f"{path}: best step {step} without its weights; remove {checkpoint} to start afresh"
            )
        best.step, best.value = int(step), float(value)
        best.take(model)
    else:
        best.load(checkpoint / str(weights), model, step=int(step), value=float(value))


class _Checkpoints(TrainerCallback):
    """When resume checkpoints are written, and model selection.

    * A checkpoint the Trainer would write at an evaluation is vetoed unless ``clock`` is
      due; SIGTERM during training saves one at the end of the step in progress and
      stops (the caller raises :class:`~xlalign.core.interrupt.Preempted`). Under
      torchrun the processes agree on both.
    * Each dev evaluation is offered to ``best`` (selection in memory; None: no selection).
    * On resuming, the logging and selection state saved with the checkpoint are put back.
    """

    def __init__(
        self,
        trainer: Any,
        means: LossMeans,
        resume: Path | None,
        *,
        clock: CheckpointClock,
        best: BestWeights | None,
        metric: str,
    ) -> None:
        self.trainer = trainer
        self.means = means
        self.resume = resume
        self.clock = clock
        self.best = best
        self.metric = metric
        self.stopped_at: int | None = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self.clock.mark()  # work done before training is redone by a resumed run anyway
        if self.resume is None:
            return
        if self.best is not None:
            _read_selection(self.resume, self.best, self.trainer.model)
        path = self.resume / _LOG_STATE.format(rank=args.process_index)
        if not path.is_file():  # a checkpoint right after a log entry has nothing pending
            return
        saved = read_json(path)
        try:
            device = self.trainer._tr_loss.device
            self.trainer._tr_loss = torch.tensor(saved["tr_loss"], device=device)
            self.trainer._globalstep_last_logged = int(saved["last_logged"])
            m = saved["means"]
            if int(m["n"]):
                self.means.task = torch.tensor(m["task"], device=device)
                self.means.align = torch.tensor(m["align"], device=device)
                self.means.logs = {str(k): float(v) for k, v in m["logs"].items()}
                self.means.n = int(m["n"])
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{path}: not a logging state ({exc})") from exc

    def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> Any:
        stop = interrupt.requested() is not None
        # the Trainer's DefaultFlowCallback (run before this one) asks for a checkpoint at
        # each evaluation step and at the end: one only when the clock says so
        due = bool(control.should_save) and self.clock.due()
        if args.world_size > 1 and torch.distributed.is_initialized():
            flags = torch.tensor([int(stop), int(due)], device=args.device)
            torch.distributed.all_reduce(flags, op=torch.distributed.ReduceOp.MAX)
            stop, due = bool(flags[0].item()), bool(flags[1].item())
        control.should_save = due
        if stop:
            self.stopped_at = int(state.global_step)
            control.should_save = True
            control.should_training_stop = True
        return control

    def on_evaluate(self, args: Any, state: Any, control: Any, metrics: Any = None, **kw: Any):
        if self.best is None or not metrics or self.metric not in metrics:
            return
        self.best.observe(state.global_step, float(metrics[self.metric]), self.trainer.model)

    def on_save(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self.clock.mark()


class _Timer(TrainerCallback):
    """Adds up the wall time of the dev evaluations inside training (the Trainer's
    ``eval_runtime``: forward passes, decoding and scoring) and the CPU time of this
    process (all its threads) over the training."""

    def __init__(self, timers: dict[str, float]) -> None:
        self.timers = timers
        self.cpu_started = 0.0

    def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self.cpu_started = time.process_time()

    def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        self.timers["train_cpu"] += time.process_time() - self.cpu_started

    def on_evaluate(self, args: Any, state: Any, control: Any, metrics: Any = None, **kw: Any):
        if metrics and "eval_runtime" in metrics:
            self.timers["evaluate"] += float(metrics["eval_runtime"])


class _LogMetrics(TrainerCallback):
    """The Trainer's logs (training loss, dev scores) as log records of this module."""

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kw: Any):
        if state.is_world_process_zero and logs:
            shown = {
                k: (f"{v:.4g}" if isinstance(v, float) else v)
                for k, v in logs.items()
                if k != "total_flos"
            }
            log.info("step %d/%d: %s", state.global_step, state.max_steps, shown)


class _ProgressBar(ProgressCallback):
    """The Trainer's progress bars without its printing of the logs (see
    :class:`_LogMetrics`)."""

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kw: Any):
        return None
