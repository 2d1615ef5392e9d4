"""Continual learning during zero-shot fine-tuning: an alignment loss kept on the encoder
while it learns the task (003 section 3, eq. 2)::

    L = L_target + alpha * L_align

with one alignment batch per task batch (003's defaults: alpha 1e-2, 16 examples).

:class:`Continual` names an :class:`~xlalign.pretrain.base.Objective` and its weight;
:func:`~xlalign.evaluation.tasks.finetune.finetune` takes one. There the Trainer trains a
:class:`WithObjective`, the task model and the objective in one ``nn.Module``, so that:

* the objective's own parameters (a contrastive projection, ...) are optimised by the
  same AdamW with the same schedule and clipping, saved in every Trainer checkpoint and
  restored on resume; the final ``model/`` directory holds the task model alone;
* the alignment loss is computed inside the module's ``forward``: in the same autocast
  as the task loss under bf16/fp16 (accelerate wraps that ``forward``), and, under
  ``torchrun``, inside DistributedDataParallel's forward, so DDP sees one graph (its
  unused-parameter search included) and all-reduces the objective's gradients with the
  model's. The objective gets the unwrapped task model (:func:`objective_model`), never the
  DDP wrapper: calling the wrapper a second time inside its own forward would break DDP.

The alignment batch of a micro-step comes from :func:`alignment_rng`, a generator seeded by
(seed, optimiser step, micro-step), not from a stream carried across steps: a run resumed
from a checkpoint draws exactly the batches an uninterrupted run draws there, with no
generator state to save.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from xlalign.core.errors import ConfigError
from xlalign.core.io import local_model_dir

if TYPE_CHECKING:  # pragma: no cover
    from xlalign.pretrain.base import Objective

#: the keyword under which the Trainer hands the alignment batch to :class:`WithObjective`
BATCH_KEY = "continual_batch"
#: keys of a continual spec (config ``zeroshot.continual.<name>``, :func:`continual_from_spec`)
SPEC_KEYS = ("name", "objective", "settings", "alpha", "batch_size", "files", "hub", "max_length")


@dataclasses.dataclass(kw_only=True)
class Continual:
    """An alignment objective kept during fine-tuning with weight ``alpha`` (003 eq. 2),
    on ``batch_size`` examples per task micro-batch; ``name`` is its config key
    (``zeroshot.continual.<name>``)."""

    objective: Objective
    name: str
    alpha: float = 1e-2
    batch_size: int = 16

    def __post_init__(self) -> None:
        key = f"zeroshot.continual.{self.name}"
        if not self.name:
            raise ConfigError("zeroshot.continual: an entry without a name")
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, int | float):
            raise ConfigError(f"{key}.alpha must be a number, got {self.alpha!r}")
        if not (self.alpha > 0 and math.isfinite(self.alpha)):
            raise ConfigError(f"{key}.alpha must be a finite number > 0, got {self.alpha}")
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int):
            raise ConfigError(f"{key}.batch_size must be an integer, got {self.batch_size!r}")
        if self.batch_size < 1:
            raise ConfigError(f"{key}.batch_size must be >= 1, got {self.batch_size}")
        for method in ("sample", "loss", "state"):
            if not callable(getattr(self.objective, method, None)):
                raise ConfigError(
                    f"{key}: {type(self.objective).__name__} is not an objective (no {method}())"
                )

    def describe(self) -> dict[str, Any]:
        """The spec as recorded in the results and the resume fingerprint."""
        return {
            "name": self.name,
            "alpha": float(self.alpha),
            "batch_size": int(self.batch_size),
            "objective_name": getattr(self.objective, "name", ""),
            "objective": self.objective.state(),
        }

    def fingerprint(self) -> dict[str, Any]:
        """What a checkpoint must agree with: the spec, the objective's class and state,
        and a digest of its initial tensors (parameters and buffers)."""
        cls = type(self.objective)
        return {
            **self.describe(),
            "class": f"{cls.__module__}.{cls.__qualname__}",
            "tensors": tensor_digest(self.objective),
        }


def tensor_digest(module: Any) -> str | None:
    """SHA-256 over the names, shapes, dtypes and bytes of ``module``'s state dict
    (None when it is not an ``nn.Module``)."""
    if not isinstance(module, nn.Module):
        return None
    h = hashlib.sha256()
    for name, t in sorted(module.state_dict().items()):
        t = t.detach().cpu().contiguous().reshape(-1)
        h.update(f"{name}:{tuple(t.shape)}:{t.dtype}\n".encode())
        h.update(t.view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def alignment_rng(seed: int, step: int, micro_step: int) -> np.random.Generator:
    """The generator of the alignment batch of micro-step ``micro_step`` of optimiser step
    ``step`` (see the module docstring for why it is derived afresh each time)."""
    return np.random.default_rng([int(seed), int(step), int(micro_step)])


def objective_model(model: nn.Module) -> nn.Module:
    """What the objective's ``loss(model, batch)`` gets: the task model when it is a
    Hugging Face model (``encoder_of`` finds its ``base_model``); for a task model of our own
    around a Hugging Face encoder (the biaffine parser's ``.encoder``), that encoder."""
    from transformers import PreTrainedModel

    if isinstance(model, PreTrainedModel):
        return model
    inner = getattr(model, "encoder", None)
    return inner if isinstance(inner, PreTrainedModel) else model


class WithObjective(nn.Module):
    """The task model and the objective as one module (see the module docstring).

    ``forward(**inputs)`` is the task model's; with ``continual_batch=...`` the returned
    loss is ``task + alpha * align`` and :attr:`last` holds the detached parts and the
    objective's logs of that call."""

    #: the Trainer then divides the loss of a micro-batch by the accumulation steps and
    #: never scales it by the number of processes: the mean over micro-batches and ranks
    accepts_loss_kwargs = False

    def __init__(self, model: nn.Module, continual: Continual) -> None:
        super().__init__()
        self.model = model
        self.objective = continual.objective  # registered as a submodule when it is one
        self.alpha = float(continual.alpha)
        self.last: tuple[torch.Tensor, torch.Tensor, dict[str, float]] | None = None
        if isinstance(self.objective, nn.Module):
            mine = {t.data_ptr() for t in (*model.parameters(), *model.buffers())}
            shared = [
                n
                for n, t in (*self.objective.named_parameters(), *self.objective.named_buffers())
                if t.data_ptr() in mine
            ]
            if shared:
                raise ConfigError(
                    f"zeroshot.continual.{continual.name}: the objective holds tensors of the "
                    f"task model ({', '.join(shared[:3])}); it must reach the model through "
                    "loss(model, batch) only"
                )

    def forward(self, **inputs: Any) -> Any:
        batch = inputs.pop(BATCH_KEY, None)
        out = self.model(**inputs)
        if batch is None:
            return out
        align, logs = self.objective.loss(objective_model(self.model), batch)
        task = out["loss"] if isinstance(out, Mapping) else out[0]
        if task is None:
            raise RuntimeError("continual learning: the task model returned no loss")
        total = task + self.alpha * align
        self.last = (task.detach(), align.detach(), dict(logs))
        if isinstance(out, Mapping):
            out["loss"] = total
            return out
        return (total, *out[1:])


class LossMeans:
    """Means of the task and alignment losses (and the objective's logs) over the
    micro-steps since the last report."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.task: torch.Tensor | float = 0.0
        self.align: torch.Tensor | float = 0.0
        self.logs: dict[str, float] = {}
        self.n = 0

    def add(self, task: torch.Tensor, align: torch.Tensor, logs: Mapping[str, float]) -> None:
        self.task = self.task + task.float()
        self.align = self.align + align.float()
        for k, v in logs.items():
            self.logs[k] = self.logs.get(k, 0.0) + float(v)
        self.n += 1

    def report(self, reduce: Callable[[torch.Tensor], torch.Tensor]) -> dict[str, float]:
        """``task_loss``, ``align_loss`` (their means over the micro-steps and, through
        ``reduce``, over the processes) and the objective's logs (this process's means)."""
        if not self.n:
            return {}
        pair = torch.stack([torch.as_tensor(self.task), torch.as_tensor(self.align)]) / self.n
        task, align = (float(v) for v in reduce(pair))
        out = {"task_loss": task, "align_loss": align}
        out.update({k: v / self.n for k, v in self.logs.items()})
        self.reset()
        return out


# --------------------------------------------------------------------------- specs

ObjectiveBuilder = Callable[..., "Objective"]


def continual_from_spec(
    spec: Mapping[str, Any],
    *,
    encoder: Any,
    seed: int,
    builder: ObjectiveBuilder | None = None,
) -> Continual:
    """A :class:`Continual` from its config entry ``{"name", "objective", "settings",
    "alpha", "batch_size", "files"}`` (plus ``hub``, ``max_length`` for the objective),
    the objective built by ``builder`` (default
    :func:`xlalign.pretrain.objectives.build_objective`) over ``encoder`` (a checkpoint
    directory; its weights are loaded on the CPU for the objective to read its shape and,
    for parameter drift, its starting point) with ``seed``. The objective's initial
    parameters come from a torch generator seeded by ``seed`` (the global state is forked
    and left as it was)."""
    name = str(spec.get("name") or "")
    if not name:
        raise ConfigError("zeroshot.continual: an entry without a name")
    key = f"zeroshot.continual.{name}"
    unknown = sorted(set(spec) - set(SPEC_KEYS))
    if unknown:
        raise ConfigError(f"{key}: unknown keys {unknown}; expected some of {list(SPEC_KEYS)}")
    objective = spec.get("objective")
    if not isinstance(objective, str) or not objective:
        raise ConfigError(f"{key}.objective must be an objective name, got {objective!r}")
    settings, files = spec.get("settings") or {}, spec.get("files") or {}
    for what, value in (("settings", settings), ("files", files)):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{key}.{what} must be a mapping, got {type(value).__name__}")
    alpha = spec.get("alpha", 1e-2)
    batch_size = spec.get("batch_size", 16)
    # the cheap checks before the encoder is loaded
    probe = Continual(objective=_Probe(), name=name, alpha=alpha, batch_size=batch_size)
    from transformers import AutoModel, AutoTokenizer

    if builder is None:  # imported here: the objectives' data modules are heavy
        from xlalign.pretrain.objectives import build_objective

        builder = build_objective

    where = local_model_dir(encoder, what="encoder")
    tokenizer = AutoTokenizer.from_pretrained(where, local_files_only=True)
    model = AutoModel.from_pretrained(where, local_files_only=True)
    extra = {k: spec[k] for k in ("hub", "max_length") if spec.get(k) is not None}
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        built = builder(
            objective, settings, model=model, tokenizer=tokenizer, files=files, seed=int(seed),
            **extra,
        )  # fmt: skip
    del model
    return dataclasses.replace(probe, objective=built)


class _Probe:
    """A stand-in objective for validating a spec before the real one is built."""

    name = ""

    def sample(self, rng: np.random.Generator, batch_size: int) -> Any:
        raise NotImplementedError

    def loss(self, model: Any, batch: Any) -> Any:
        raise NotImplementedError

    def state(self) -> dict[str, Any]:
        return {}
