"""What an objective is: a small module that samples its own batch and returns its loss.

The training loop (:mod:`.trainer`) and continual learning during fine-tuning
(:mod:`xlalign.evaluation.tasks.finetune`) drive objectives the same way::

    batch = objective.sample(rng, batch_size)        # on the CPU, from its own data
    loss, logs = objective(model, batch)             # model: the encoder being trained

``rng`` is a ``numpy.random.Generator`` the caller derives from (seed, step, micro-step), so
a resumed run draws the batches an uninterrupted one draws. ``logs`` holds floats to
record (e.g. ``{"gcca/corr_1": 0.93}``); the loss is a scalar tensor on the model's device.
``model`` is the Hugging Face model being trained: for a masked-LM model the encoder is
``model.base_model``; objectives that need only the encoder call :func:`encoder_of`.

This module imports torch lazily (type hints only).
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import torch


class Objective(abc.ABC):
    """An alignment or language-modelling objective (a ``torch.nn.Module`` in practice:
    concrete objectives subclass both, so their own parameters - a projection, linear
    maps - are trained and checkpointed with the model)."""

    #: the objective's name as in config and in the logged curves ("mlm", "mse", ...)
    name: str = ""
    #: True when the objective trains nothing of the encoder (linear_map: encoder frozen)
    freezes_encoder: bool = False

    @abc.abstractmethod
    def sample(self, rng: np.random.Generator, batch_size: int) -> Any:
        """A batch of ``batch_size`` examples (CPU tensors), drawn with ``rng`` only."""

    @abc.abstractmethod
    def loss(self, model: Any, batch: Any) -> tuple[torch.Tensor, dict[str, float]]:
        """The objective's (unweighted) loss on ``batch`` and floats to log."""

    def state(self) -> dict[str, Any]:
        """JSON-able state saved with a checkpoint (a sampled dictionary, ...)."""
        return {}


def encoder_of(model: Any) -> Any:
    """The Transformer encoder inside ``model`` (a task or masked-LM model: its
    ``base_model``; an encoder: itself)."""
    base = getattr(model, "base_model", None)
    return model if base is None else base
