"""The one training loop of continued pre-training.

Each optimiser step draws, for every objective of the run, its own batch (an MLM batch of
multilingual text, an alignment batch of word-vector pairs, dictionary pairs or aligned
sentences: :meth:`~.base.Objective.sample`) and minimises the weighted sum of their losses
(000 Appendix C: "at each training step, we mix samples from a text dataset with samples
from our static embeddings, computing both a language modelling and an alignment loss").

* **Batches and accumulation**: ``batch_size`` (per objective) is the effective batch of a
  step, split over devices x ``gradient_accumulation`` micro-steps. Batch ``(step, micro,
  rank)`` comes from ``numpy.random.default_rng([seed, step, micro, rank])``: a run resumed
  at step k draws exactly the batches an uninterrupted run draws from step k on.
* **Optimiser**: AdamW, linear decay to 0 after ``warmup_steps``, gradient clipping at
  ``max_grad_norm`` (Hugging Face's language-modelling defaults: lr 5e-5, no weight decay,
  no warm-up, clip 1.0).
* **Selection**: the validation MLM loss (held-out paragraphs masked once with a fixed
  seed, the token-weighted mean over all their predicted tokens) every ``eval_every``
  steps and at the end; the checkpoint with the lowest one is the output (000 Appendix C;
  the earliest of equal losses). The best weights so far are kept in memory, a CPU copy
  of the model's state dict taken when the loss improves (no second copy on the
  accelerator, nothing on disk), and put back in the model at the end. A run without an
  MLM-type objective keeps its final step (and skips the head warm-up).
* **Resuming**: ``work_dir/checkpoint.pt`` (weights, objectives' parameters, optimiser,
  schedule, gradient scaler, RNG states, history, best step and loss, the run's
  fingerprint, and the best weights so far when they are not the current ones) is what a
  resume needs and costs hundreds of MB to GB, so it is written atomically only at an
  evaluation once ``checkpoints.interval_minutes`` of work have passed since the start or
  the last one (:class:`~xlalign.core.cadence.CheckpointClock`; 0: at every evaluation,
  None: never), and on SIGTERM (below). A run shorter than the interval writes none: a
  kill costs it at most the interval's work, never more. It is read with
  ``torch.load(weights_only=True)`` (tensors and plain Python values only: a planted file
  that would run code is refused with an :class:`InputError` naming it). A rerun with
  the same fingerprint resumes and ends with the same weights and record as an
  uninterrupted run; a different fingerprint starts afresh. ``work_dir`` is removed on
  success. (``best.pt`` beside it is only read, from checkpoints of earlier versions.)
* **SIGTERM** (Slurm pre-emption, :mod:`xlalign.core.interrupt`): the training loop is a
  checkpointable stretch; after the step in progress, the checkpoint of that step is
  written and :class:`~xlalign.core.interrupt.Preempted` raised (the job exits 143), so a
  re-run loses nothing. Under torchrun the ranks agree on the step to stop at.
* **Devices**: a GPU when torch sees one; ``precision="auto"`` is bf16 where supported,
  else fp16 with a gradient scaler; fp32 on the CPU. Under ``torchrun`` the model and the
  objectives' own parameters are wrapped in one ``DistributedDataParallel``; each rank
  draws its own share of every batch; rank 0 writes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import math
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from xlalign.core import interrupt
from xlalign.core.cadence import DEFAULT_INTERVAL_MINUTES, CheckpointClock
from xlalign.core.device import deterministic_algorithms, resolve_device
from xlalign.core.device import resolve_precision as _resolve_precision
from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import atomic_dir, atomic_path, write_json
from xlalign.pretrain.base import Objective

log = logging.getLogger(__name__)

CHECKPOINT = "checkpoint.pt"
#: the best weights of checkpoints written by earlier versions (read on resume, never written)
BEST = "best.pt"
FINGERPRINT = "fingerprint.json"
METADATA = "xlalign-pretrain.json"
#: what :func:`train` writes into every ``checkpoint.pt``; ``best_weights`` (the selected
#: model's state dict) only when the best step so far is not the checkpoint's own step
_STATE_KEYS = (
    "fingerprint", "joint", "optimizer", "scheduler", "scaler", "rng", "step", "history",
    "best", "warmup", "pending",
)  # fmt: skip
BEST_WEIGHTS = "best_weights"


@dataclasses.dataclass
class PretrainParams:
    """The hyper-parameters of a run (000 Appendix C / Hugging Face's defaults)."""

    steps: int = 7500
    gradient_accumulation: int = 1
    max_length: int = 128
    learning_rate: float = 5e-5
    weight_decay: float = 0.0
    adam_beta1: float = 0.9
    adam_beta2: float = 0.999
    adam_epsilon: float = 1e-8
    max_grad_norm: float = 1.0
    warmup_steps: int = 0
    eval_every: int = 500
    log_every: int = 50
    validation_batch_size: int = 32
    head_warmup_steps: int = 0
    head_warmup_learning_rate: float = 1e-4
    mlm_probability: float = 0.15

    def check(self) -> None:
        for name in (
            "steps",
            "gradient_accumulation",
            "max_length",
            "eval_every",
            "log_every",
            "validation_batch_size",
        ):
            if int(getattr(self, name)) < 1:
                raise ConfigError(f"pretrain.{name} must be >= 1, got {getattr(self, name)}")
        if self.learning_rate <= 0:
            raise ConfigError(f"pretrain.learning_rate must be > 0, got {self.learning_rate}")
        if self.head_warmup_steps < 0 or self.warmup_steps < 0:
            raise ConfigError("pretrain.head_warmup.steps and pretrain.warmup_steps must be >= 0")


@dataclasses.dataclass
class Term:
    """One objective of a run, its weight and its effective batch size."""

    objective: Objective
    weight: float
    batch_size: int

    @property
    def name(self) -> str:
        return self.objective.name


class _Joint(torch.nn.Module):
    """The model and the objectives' own parameters, as one module (one DDP wrapper, one
    state dict); ``forward`` computes every term's loss on its batch."""

    def __init__(self, model: torch.nn.Module, terms: Sequence[Term]) -> None:
        super().__init__()
        self.model = model
        self.objectives = torch.nn.ModuleList([t.objective for t in terms])  # type: ignore[misc]

    def forward(self, batches: Sequence[Any]) -> list[tuple[torch.Tensor, dict[str, float]]]:
        return [obj.loss(self.model, b) for obj, b in zip(self.objectives, batches, strict=True)]


def resolve_precision(precision: str, device: torch.device) -> str:
    """:func:`xlalign.core.device.resolve_precision` for ``pretrain.precision``."""
    return _resolve_precision(precision, device, key="pretrain.precision")


def per_rank(batch: int, world: int, accumulation: int, name: str) -> int:
    """The share of an effective batch one rank takes in one micro-step."""
    parts = world * accumulation
    if batch % parts:
        raise ConfigError(
            f"pretrain.objectives.{name}.batch_size {batch} is not a multiple of devices x "
            f"gradient accumulation ({world} x {accumulation})"
        )
    return batch // parts


def fingerprint(payload: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def validation_loss(
    model: Any, batches: Sequence[Mapping[str, torch.Tensor]], device: torch.device, autocast: Any
) -> float:
    """Token-weighted mean MLM cross-entropy over fixed masked batches (the sum of every
    predicted token's loss over their number: independent of how they are batched)."""
    from xlalign.pretrain.heads import mlm_logits

    was = model.training
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for batch in batches:
            b = {k: v.to(device) for k, v in batch.items()}
            pos = b["labels"] != -100
            with autocast():
                hidden = model.base_model(
                    input_ids=b["input_ids"], attention_mask=b["attention_mask"]
                ).last_hidden_state
                logits = mlm_logits(model, hidden, pos)
            loss = torch.nn.functional.cross_entropy(
                logits.float(), b["labels"][pos], reduction="sum"
            )
            total += float(loss)
            count += int(pos.sum())
    model.train(was)
    return total / max(count, 1)


def _rng_state(device: torch.device) -> dict[str, Any]:
    state: dict[str, Any] = {"cpu": torch.get_rng_state()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def _set_rng_state(state: Mapping[str, Any], device: torch.device) -> None:
    torch.set_rng_state(state["cpu"])
    if device.type == "cuda" and "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"], device)


def load_checkpoint(path: Path, device: torch.device | str = "cpu") -> Any:
    """A checkpoint of this trainer, read safely: ``torch.load(weights_only=True)`` (torch's
    restricted unpickler: tensors, dicts, lists and plain numbers, never an arbitrary
    object, so a planted file cannot run code). An :class:`InputError` names a file that
    is not one."""
    try:
        return torch.load(path, map_location=device, weights_only=True)
    except Exception as exc:  # pickle.UnpicklingError, RuntimeError of a bad archive...
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(
            f"{path}: not a pre-training checkpoint that can be read safely (weights only); "
            f"remove it to start afresh ({first})"
        ) from exc


def cpu_copy(
    state: Mapping[str, torch.Tensor], into: dict[str, torch.Tensor] | None = None
) -> dict[str, torch.Tensor]:
    """A CPU copy of a state dict: the best weights kept for model selection. Tensors that
    share memory (tied input and output embeddings) stay one tensor in the copy. With
    ``into`` (an earlier copy of the same model) its tensors are overwritten in place, so
    an improvement does not hold two copies at once."""
    if into is not None and into.keys() == state.keys():
        with torch.no_grad():
            for k, v in state.items():
                into[k].copy_(v.detach())
        return into
    out: dict[str, torch.Tensor] = {}
    shared: dict[tuple[Any, ...], torch.Tensor] = {}
    for k, v in state.items():
        key = (v.data_ptr(), v.dtype, tuple(v.shape), v.stride(), str(v.device))
        if v.numel() and key in shared:
            out[k] = shared[key]
            continue
        out[k] = shared[key] = v.detach().to("cpu", copy=True)
    return out


def _stop_requested(world: int, device: torch.device) -> bool:
    """Whether a SIGTERM asks this run to stop after this step (every rank agrees: one
    that got the signal stops them all)."""
    stop = interrupt.requested() is not None
    if world > 1:
        flag = torch.tensor([int(stop)], device=device)
        torch.distributed.all_reduce(flag, op=torch.distributed.ReduceOp.MAX)
        stop = bool(flag.item())
    return stop


def _batch_tokens(batch: Any) -> int:
    """Non-padding tokens a batch feeds the encoder (for tokens/s)."""
    if isinstance(batch, dict) and "attention_mask" in batch:
        return int(batch["attention_mask"].sum())
    total = 0
    for attr in ("attention_mask", "source", "target"):
        val = getattr(batch, attr, None)
        if isinstance(val, torch.Tensor):
            total += int(val.sum())
        elif isinstance(val, dict) and "attention_mask" in val:
            total += int(val["attention_mask"].sum())
    return total


def train(
    model: Any,
    terms: Sequence[Term],
    *,
    params: PretrainParams,
    seed: int,
    work_dir: Path,
    run_fingerprint: Mapping[str, Any],
    validation: Sequence[Mapping[str, torch.Tensor]] = (),
    warmup_batches: Callable[[int], dict[str, torch.Tensor]] | None = None,
    device: torch.device,
    precision: str = "fp32",
    progress: bool = True,
    on_step: Callable[[int], None] | None = None,
    checkpoint_minutes: float | None = DEFAULT_INTERVAL_MINUTES,
) -> dict[str, Any]:
    """Train ``model`` (already on ``device``) with ``terms`` for ``params.steps`` steps;
    leave the selected weights in ``model`` and return the run's record (history, curves,
    selection, speed). ``on_step(step)`` runs after each completed step, after any
    checkpoint of that step (tests kill a run there). ``checkpoint_minutes``: the minutes
    of work between two resume checkpoints (``checkpoints.interval_minutes``; 0: at every
    evaluation, None: on SIGTERM only). See the module docstring."""
    from transformers import get_linear_schedule_with_warmup

    params.check()
    clock = CheckpointClock.from_minutes(checkpoint_minutes)
    work_dir = Path(work_dir)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    is_main = rank == 0
    shares = [per_rank(t.batch_size, world, params.gradient_accumulation, t.name) for t in terms]
    if any(t.weight < 0 for t in terms):
        raise ConfigError("pretrain: objective weights must be >= 0")
    freeze = any(t.objective.freezes_encoder for t in terms)
    # selection by validation MLM loss needs an MLM objective (002's alignment-only runs,
    # whose MLM head is never trained, keep their final step, as 002 does)
    has_mlm = any(t.name in ("mlm", "dict_mlm", "tlm") for t in terms)
    select_on_mlm = bool(validation) and has_mlm and not freeze

    joint = _Joint(model, terms).to(device)
    if freeze:
        for p in model.parameters():
            p.requires_grad_(False)
    trainable = [p for p in joint.parameters() if p.requires_grad]
    if not trainable:
        raise ConfigError("pretrain: nothing to train (every parameter is frozen)")
    decay = [p for n, p in joint.named_parameters() if p.requires_grad and p.ndim > 1]
    no_decay = [p for n, p in joint.named_parameters() if p.requires_grad and p.ndim <= 1]
    groups = [
        {"params": decay, "weight_decay": params.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(
        [g for g in groups if g["params"]],
        lr=params.learning_rate,
        betas=(params.adam_beta1, params.adam_beta2),
        eps=params.adam_epsilon,
        fused=device.type in ("cpu", "cuda"),
    )
    scheduler = get_linear_schedule_with_warmup(optimizer, params.warmup_steps, params.steps)
    scaler = torch.amp.GradScaler(device.type, enabled=precision == "fp16")
    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)

    def autocast() -> Any:
        if amp_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device.type, dtype=amp_dtype)

    # Resume?
    digest = fingerprint(run_fingerprint)
    ckpt_path, best_path = work_dir / CHECKPOINT, work_dir / BEST
    if is_main:
        work_dir.mkdir(parents=True, exist_ok=True)
        stamp = work_dir / FINGERPRINT
        old = json.loads(stamp.read_text()).get("fingerprint") if stamp.is_file() else None
        if old != digest and (ckpt_path.exists() or best_path.exists()):
            log.warning("%s: checkpoints of another run; starting afresh", work_dir)
            ckpt_path.unlink(missing_ok=True)
            best_path.unlink(missing_ok=True)
        write_json(stamp, {"fingerprint": digest})
    if world > 1:
        torch.distributed.barrier()
    start, history, best = 0, [], {"step": None, "loss": math.inf}
    pending: dict[str, Any] = {"sums": {}, "n": 0}
    warm = {"first": None, "last": None}
    resumed_from = None
    # the best weights so far (a CPU copy), None while they are the current ones or none
    best_state: dict[str, torch.Tensor] | None = None
    # read onto the CPU: load_state_dict copies the weights and the optimiser's moments to
    # their parameters' device, and the RNG states are CPU tensors
    state = load_checkpoint(ckpt_path) if ckpt_path.is_file() else None
    if state is not None and not isinstance(state, dict):
        raise InputError(f"{ckpt_path}: not a pre-training checkpoint (remove it to start afresh)")
    if state is not None and state.get("fingerprint") != digest:
        # a checkpoint written for other settings (copied in, or of an older version)
        log.warning("%s: a checkpoint of another run; starting afresh", ckpt_path)
        state = None
        if is_main:
            ckpt_path.unlink(missing_ok=True)
            best_path.unlink(missing_ok=True)
    if state is not None:
        missing = [k for k in _STATE_KEYS if k not in state]
        step = state.get("step")
        if missing or not isinstance(step, int) or not 0 < step < params.steps:
            raise InputError(
                f"{ckpt_path}: not a pre-training checkpoint of this run (missing {missing}, "
                f"step {step!r} of {params.steps}); remove it to start afresh"
            )
        joint.load_state_dict(state["joint"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        scaler.load_state_dict(state["scaler"])
        _set_rng_state(state["rng"], device)
        start, history, best, warm = state["step"], state["history"], state["best"], state["warmup"]
        pending = state["pending"]
        if best["step"] is not None and best["step"] != start:
            if BEST_WEIGHTS in state:
                best_state = state[BEST_WEIGHTS]
            elif best_path.is_file():  # a checkpoint of an earlier version
                best_state = cpu_copy(load_checkpoint(best_path))
            else:
                raise InputError(
                    f"{ckpt_path}: the best weights (step {best['step']}) are missing; "
                    "remove it to start afresh"
                )
        elif best["step"] is not None:  # the best is the resumed step's own weights
            best_state = cpu_copy(model.state_dict())
        del state
        resumed_from = start
        log.info("resuming from %s at step %d", ckpt_path, start)
    elif params.head_warmup_steps and warmup_batches is not None and has_mlm:
        from xlalign.pretrain.heads import warm_up_head

        steps = range(params.head_warmup_steps)
        bar = _bar(steps, "MLM head warm-up", progress and is_main)
        warm["first"], warm["last"] = warm_up_head(
            model,
            warmup_batches,
            steps=params.head_warmup_steps,
            learning_rate=params.head_warmup_learning_rate,
            device=device,
            progress=bar,
        )
        log.info("head warm-up: loss %s -> %s", warm["first"], warm["last"])

    wrapped: Any = joint
    if world > 1:
        wrapped = torch.nn.parallel.DistributedDataParallel(
            joint,
            device_ids=[device.index] if device.type == "cuda" else None,
            find_unused_parameters=True,
            broadcast_buffers=False,  # theta0 of the drift terms: identical on every rank
        )
    if freeze:
        model.eval()  # a frozen encoder: no dropout
    else:
        joint.train()

    saved_at = start  # the step of the last checkpoint on disk (or resumed from)

    def save_checkpoint(step: int) -> None:
        nonlocal saved_at
        saved_at = step
        clock.mark()
        if not is_main:
            return
        payload = {
            "fingerprint": digest,
            "joint": joint.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "scaler": scaler.state_dict(),
            "rng": _rng_state(device),
            "step": step,
            "history": history,
            "best": best,
            "warmup": warm,
            "pending": {"sums": sums, "n": n_logged},
        }
        if best["step"] is not None and best["step"] != step:
            if best_state is None:  # cannot happen: kept whenever the best is not current
                raise RuntimeError(f"step {step}: the best weights (step {best['step']}) lost")
            payload[BEST_WEIGHTS] = best_state
        with atomic_path(ckpt_path) as tmp:
            torch.save(payload, tmp)
        log.info("step %d: resume checkpoint %s", step, ckpt_path)

    def evaluate(step: int) -> None:
        nonlocal best_state
        if not select_on_mlm:
            return
        loss = validation_loss(model, validation, device, autocast)
        history.append({"step": step, "valid_mlm_loss": loss})
        log.info("step %d: validation MLM loss %.4f", step, loss)
        # step 0 (the starting point) is recorded, not a candidate: the output is a
        # continued model, as the paper's checkpoints every few hundred steps are
        if step > 0 and loss < best["loss"]:
            best.update(step=step, loss=loss)
            # the last step's weights are the model's own: no copy
            if step < params.steps:
                best_state = cpu_copy(model.state_dict(), into=best_state)

    tokens = 0
    t0 = time.perf_counter()
    bar = _bar(
        range(start, params.steps),
        "pre-training",
        progress and is_main,
        total=params.steps,
        initial=start,
    )
    sums: dict[str, float] = dict(pending["sums"])
    n_logged = int(pending["n"])
    with deterministic_algorithms(), interrupt.checkpointable():
        if start == 0 and select_on_mlm:
            evaluate(0)
        for step in bar:
            step_logs: dict[str, float] = {}
            for micro in range(params.gradient_accumulation):
                rng = np.random.default_rng([seed, step, micro, rank])
                batches = [
                    t.objective.sample(rng, share) for t, share in zip(terms, shares, strict=True)
                ]
                tokens += sum(_batch_tokens(b) for b in batches)
                sync = micro == params.gradient_accumulation - 1 or world == 1
                ctx = contextlib.nullcontext() if sync else wrapped.no_sync()
                with ctx:
                    with autocast():
                        outs = wrapped(batches)
                    total = sum(
                        (t.weight * loss for t, (loss, _) in zip(terms, outs, strict=True)),
                        torch.zeros((), device=device),
                    )
                    scaler.scale(total / params.gradient_accumulation).backward()
                for t, (loss, logs) in zip(terms, outs, strict=True):
                    value = float(loss.detach())
                    if not math.isfinite(value):
                        raise FloatingPointError(f"step {step}: the {t.name} loss is {value}")
                    key = f"{t.name}_loss"
                    step_logs[key] = step_logs.get(key, 0.0) + value / params.gradient_accumulation
                    for k, v in logs.items():
                        step_logs[k] = step_logs.get(k, 0.0) + v / params.gradient_accumulation
            scaler.unscale_(optimizer)
            grad_norm = torch.nn.utils.clip_grad_norm_(trainable, params.max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            for t in terms:
                after = getattr(t.objective, "after_step", None)
                if after is not None:
                    with torch.no_grad():
                        after()
            for k, v in step_logs.items():
                sums[k] = sums.get(k, 0.0) + v
            n_logged += 1
            done = step + 1
            if done % params.log_every == 0 or done == params.steps:
                entry = {
                    "step": done,
                    "learning_rate": scheduler.get_last_lr()[0],
                    "grad_norm": float(grad_norm),
                }
                entry.update({k: v / n_logged for k, v in sums.items()})
                history.append(entry)
                sums, n_logged = {}, 0
                if progress and is_main:
                    bar.set_postfix(
                        {k: f"{v:.3g}" for k, v in entry.items() if k.endswith("_loss")}
                    )
            if done % params.eval_every == 0 or done == params.steps:
                evaluate(done)
                # the last step's state is the output itself
                if done < params.steps and clock.due():
                    save_checkpoint(done)
            if on_step is not None:
                on_step(done)
            if done < params.steps and _stop_requested(world, device):
                if saved_at != done:
                    save_checkpoint(done)
                log.warning("stopping at step %d (SIGTERM): checkpoint %s", done, ckpt_path)
                if world > 1:
                    torch.distributed.barrier()
                interrupt.raise_if_requested(f"pre-training checkpointed at step {done}")
                raise interrupt.Preempted(signal.SIGTERM, f"another rank, step {done}")
    seconds = time.perf_counter() - t0
    if select_on_mlm and best["step"] is not None and best["step"] != params.steps:
        assert best_state is not None  # kept whenever the best is not the current step
        model.load_state_dict(best_state)
    selected = best["step"] if select_on_mlm else params.steps
    return {
        "steps": params.steps,
        "resumed_from_step": resumed_from,
        "selection": {
            "mode": "validation_mlm_loss" if select_on_mlm else "final",
            "step": selected,
            "valid_mlm_loss": best["loss"] if select_on_mlm else None,
        },
        "head_warmup": {"loss_first": warm["first"], "loss_last": warm["last"]},
        "history": history,
        "speed": {
            "seconds": seconds,
            "steps_run": params.steps - start,
            "tokens": tokens * world,
            "tokens_per_s": tokens * world / seconds if seconds > 0 else None,
        },
    }


def curves(history: Sequence[Mapping[str, Any]]) -> dict[str, list[float]]:
    """The history as MLflow curves: ``train_<objective>_loss``, every logged number of
    the objectives (e.g. ``gcca/corr_1``), ``valid_mlm_loss``."""
    out: dict[str, list[float]] = {}
    for entry in history:
        for k, v in entry.items():
            if k == "step" or not isinstance(v, int | float):
                continue
            name = k if k.startswith("valid_") or "/" in k else f"train_{k}"
            out.setdefault(name.replace("/", "_"), []).append(float(v))
    return out


def save_output(
    model: Any,
    tokenizer: Any,
    output_dir: Path,
    *,
    metadata: Mapping[str, Any],
    extra: Callable[[Path], None] | None = None,
) -> None:
    """The selected model as a normal ``transformers`` checkpoint directory (weights,
    config, tokenizer) plus ``xlalign-pretrain.json``; ``extra(dir)`` adds files (linear
    maps, the sampled dictionary) before the directory appears, atomically."""
    with atomic_dir(output_dir) as tmp:
        model.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        if extra is not None:
            extra(tmp)
        write_json(tmp / METADATA, dict(metadata))


def remove_work_dir(work_dir: Path) -> None:
    shutil.rmtree(work_dir, ignore_errors=True)


def _bar(iterable: Any, desc: str, show: bool, **kw: Any) -> Any:
    if not show:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, file=sys.stderr, mininterval=5.0, **kw)


def device_for(device: str | None, local_rank: int | None = None) -> torch.device:
    dev = resolve_device(device, local_rank)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"pretrain.device {device!r}: torch sees no GPU")
    return dev
