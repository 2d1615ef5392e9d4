"""What a task family implements, and the fine-tuning hyper-parameters of a task.

:mod:`.finetune` runs one loop for every family (the Hugging Face Trainer): it reads the
records (:mod:`.data`), asks the family to turn them into features (:meth:`Task.encode`),
trains the family's model (:meth:`Task.build_model`), turns the raw outputs of a split
back into one prediction per example (:meth:`Task.decode`) and scores them
(:meth:`Task.score`). Model selection maximises :attr:`Task.selection_metric` on the
English dev split, or keeps the final checkpoint where the protocol says so (QA).

This module imports no torch (it is read when a configuration is validated).
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from xlalign.core.errors import ConfigError


@dataclass
class TaskParams:
    """Fine-tuning hyper-parameters of one task (XTREME's per-task values by default)."""

    learning_rate: float = 2e-5
    epochs: float = 10
    batch_size: int = 32  # effective: per device x devices x gradient accumulation
    max_length: int = 128  # subwords per window, special tokens included
    #: "dev": keep the checkpoint with the best English dev score (evaluated every
    #: ``eval_every`` optimiser steps and at the end); "final": the last one (QA)
    selection: str = "dev"
    eval_every: int = 500
    weight_decay: float = 0.0
    warmup_steps: int = 0
    adam_epsilon: float = 1e-8
    max_grad_norm: float = 1.0
    gradient_accumulation: int = 1
    # QA (XTREME's run_squad)
    doc_stride: int = 128
    max_query_length: int = 64
    n_best: int = 20
    max_answer_length: int = 30
    # tagging: stride (in words) between the windows a long sentence is split into is
    # not needed: windows never overlap, every word is labelled exactly once
    # caps on the number of examples (None: all) - the embedded default uses them
    max_train_examples: int | None = None
    max_dev_examples: int | None = None
    max_test_examples: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, values: dict[str, Any], *, where: str = "task") -> TaskParams:
        known = {f.name for f in fields(cls)}
        unknown = set(values) - known
        if unknown:
            raise ConfigError(f"{where}: unknown fine-tuning keys {sorted(unknown)}")
        params = cls(**values)
        if params.selection not in ("dev", "final"):
            raise ConfigError(
                f"{where}: selection must be 'dev' or 'final', not {params.selection!r}"
            )
        return params


@dataclass
class Encoded:
    """A split turned into model features.

    ``features[i]`` is a dict of lists (``input_ids``, ``attention_mask``, task labels);
    ``feature_example[i]`` is the index of the example it came from (a long example gives
    several features); ``extra`` holds what :meth:`Task.decode` needs to map outputs back
    (word ids, offsets); ``counts`` what the encoding had to handle (long sentences split,
    contexts windowed, labels never seen in training, unanswerable spans), which ends up
    in the results JSON.
    """

    features: list[dict[str, Any]]
    feature_example: list[int]
    extra: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


class Task(abc.ABC):
    """A task family: features, model, decoding and scoring."""

    #: "tagging", "classification", "qa" or "parsing"
    family: str = ""
    #: the record type of :mod:`.data` its files hold
    record_type: type = object
    #: the key of :meth:`score` that model selection maximises
    selection_metric: str = ""

    def training_sample(self, records: Sequence[Any], params: TaskParams) -> list[Any]:
        """The training examples a run uses: by default the first
        ``params.max_train_examples`` of the file, in file order (a family may draw
        another sample, named in ``params.extra``, and say so in :meth:`recipe`)."""
        n = params.max_train_examples
        return list(records) if n is None else list(records[:n])

    def recipe(self) -> dict[str, Any]:
        """What this run's training did beyond :class:`TaskParams` and the protocol (a
        non-default loss and its weights, a drawn training sample), for the results JSON;
        ``{}`` when nothing. Valid after :meth:`training_sample` and :meth:`encode`."""
        return {}

    @abc.abstractmethod
    def label_list(self, train: Sequence[Any]) -> list[str]:
        """The label inventory, from the training records (sorted; [] for QA)."""

    @abc.abstractmethod
    def build_model(self, encoder: Path, labels: list[str]) -> Any:
        """The encoder with this family's head (a ``torch.nn.Module`` whose ``forward``
        takes a collated batch and returns an output with ``loss`` and the logits)."""

    @abc.abstractmethod
    def encode(
        self,
        records: Sequence[Any],
        tokenizer: Any,
        labels: list[str],
        params: TaskParams,
        *,
        split: str,
    ) -> Encoded:
        """Features of a split (``split`` is "train", "dev" or "test")."""

    @abc.abstractmethod
    def collate(self, tokenizer: Any) -> Callable[[list[dict[str, Any]]], dict[str, Any]]:
        """Pads a list of features into a batch of tensors."""

    @abc.abstractmethod
    def decode(
        self,
        outputs: tuple[Any, ...],
        encoded: Encoded,
        records: Sequence[Any],
        labels: list[str],
        params: TaskParams,
    ) -> list[dict[str, Any]]:
        """One JSON-able prediction per example (with its ``id``), from the model's
        outputs over all features of the split (numpy arrays, in feature order, padded
        with -100 across batches as the Trainer gathers them)."""

    @abc.abstractmethod
    def score(
        self, predictions: Sequence[dict[str, Any]], records: Sequence[Any], *, lang: str
    ) -> dict[str, Any]:
        """Metrics of a split (floats in [0, 100] for percentages, as XTREME reports)."""
