"""The masked-LM model continued pre-training trains, and its head.

:func:`load_masked_lm` loads a checkpoint directory as a Hugging Face masked-LM model. A
checkpoint with its own MLM head (XLM-R) keeps it; an encoder published without one (the
embedded multilingual-e5-small is a ``BertModel``) gets a fresh head whose output layer is
tied to the input embeddings, as BERT's is, and :func:`warm_up_head` trains that head alone
(encoder frozen) before joint training, so that the first joint steps do not push random
head gradients into the encoder. What happened is returned as :class:`HeadInfo` and ends
up in the checkpoint's metadata.

:func:`mlm_logits` computes the vocabulary logits at the predicted positions only: the
projection onto a 250k-piece vocabulary is the largest matrix product of a step, and
the Hugging Face models compute it for every position of the batch.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import torch

from xlalign.core.errors import ConfigError, InputError

log = logging.getLogger(__name__)


@dataclasses.dataclass
class HeadInfo:
    """How the masked-LM head of a run came about."""

    architecture: str
    model_type: str
    head: str  # "pretrained" (the checkpoint's own) or "initialised" (fresh, tied)
    tied: bool
    missing_keys: list[str]
    warmup_steps: int = 0
    warmup_learning_rate: float | None = None
    warmup_loss_first: float | None = None
    warmup_loss_last: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class _ComposedHead(torch.nn.Module):
    """A masked-LM head its model applies as several modules in a row (DistilBERT:
    transform, activation, norm, projector; ELECTRA's generator; ModernBERT's head and
    decoder; DeBERTa-v2's non-legacy head, which takes the input embeddings)."""

    def __init__(self, *steps: Any, embeddings: Any = None) -> None:
        super().__init__()
        self.steps = torch.nn.ModuleList(steps)
        self._embeddings = [embeddings]  # a list: not registered, it is the model's own

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        emb = self._embeddings[0]
        for i, step in enumerate(self.steps):
            last = i == len(self.steps) - 1
            hidden = step(hidden, emb) if last and emb is not None else step(hidden)
        return hidden


#: The attributes of each masked-LM model class's head, in the order its forward applies them.
_HEAD_STEPS: tuple[tuple[str, ...], ...] = (
    ("cls",),  # BERT, DeBERTa-v2 (legacy)
    ("lm_head",),  # RoBERTa, XLM-R, CamemBERT
    ("vocab_transform", "activation", "vocab_layer_norm", "vocab_projector"),  # DistilBERT
    ("generator_predictions", "generator_lm_head"),  # ELECTRA
    ("head", "decoder"),  # ModernBERT
)


def head_module(model: Any) -> torch.nn.Module:
    """The masked-LM head of ``model``: hidden states -> vocabulary logits, exactly as the
    model's own forward computes them from its encoder's output."""
    lm_predictions = getattr(model, "lm_predictions", None)  # DeBERTa-v2, non-legacy
    if isinstance(lm_predictions, torch.nn.Module):
        return _ComposedHead(lm_predictions, embeddings=model.get_input_embeddings())
    for names in _HEAD_STEPS:
        mods = [getattr(model, n, None) for n in names]
        if all(isinstance(m, torch.nn.Module) for m in mods):
            return mods[0] if len(mods) == 1 else _ComposedHead(*mods)
    raise ConfigError(
        f"{type(model).__name__}: no masked-LM head found (expected one of "
        f"{', '.join('+'.join(n) for n in _HEAD_STEPS)}); continued pre-training supports "
        "BERT, RoBERTa/XLM-R, DistilBERT, ELECTRA, DeBERTa-v2 and ModernBERT masked LMs"
    )


def head_parameters(model: Any) -> list[torch.nn.Parameter]:
    """The head's own parameters (a tied output matrix excluded: it is the embeddings)."""
    tied = model.get_input_embeddings().weight
    return [p for p in head_module(model).parameters() if p is not tied]


def load_masked_lm(encoder: Path | str, *, seed: int) -> tuple[Any, HeadInfo]:
    """The checkpoint at ``encoder`` as a masked-LM model (see the module docstring).

    A checkpoint of an architecture without a masked-LM class, or whose weights do not
    belong to that architecture (most encoder weights missing), is a :class:`ConfigError`
    naming the directory, raised before any training.
    """
    from transformers import AutoConfig, AutoModelForMaskedLM
    from transformers import set_seed as hf_set_seed

    path = Path(encoder)
    if not (path / "config.json").is_file():
        raise InputError(f"{path}: not a transformers checkpoint (no config.json)")
    config = AutoConfig.from_pretrained(str(path), local_files_only=True)
    hf_set_seed(seed)  # the fresh head's initial weights
    try:
        model, info = AutoModelForMaskedLM.from_pretrained(
            str(path), local_files_only=True, output_loading_info=True
        )
    except ValueError as exc:
        raise ConfigError(
            f"{path}: a {config.model_type!r} checkpoint has no masked-LM model class in "
            f"transformers; continued pre-training needs one ({exc})"
        ) from None
    missing = sorted(info.get("missing_keys", []))
    head_prefixes = (
        "cls.",
        "lm_head.",
        "vocab_projector.",
        "vocab_transform.",
        "vocab_layer_norm.",
        "generator_predictions.",
        "generator_lm_head.",
        "lm_predictions.",
        "head.",
        "decoder.",
    )
    body_missing = [k for k in missing if not k.startswith(head_prefixes)]
    if body_missing:
        raise ConfigError(
            f"{path}: {len(body_missing)} encoder weights missing when loaded as "
            f"{type(model).__name__} (e.g. {body_missing[:3]}): a checkpoint of another "
            "architecture"
        )
    tied = bool(getattr(model.config, "tie_word_embeddings", True))
    out = model.get_output_embeddings()
    if out is not None and out.weight is not model.get_input_embeddings().weight:
        if not tied:
            log.warning("%s: the MLM output layer is not tied to the input embeddings", path)
        tied = False
    fresh = bool(missing)
    if fresh:
        log.info("%s: no masked-LM head in the checkpoint; initialised one (%s)", path, missing)
    return model, HeadInfo(
        architecture=type(model).__name__,
        model_type=str(config.model_type),
        head="initialised" if fresh else "pretrained",
        tied=tied,
        missing_keys=missing,
    )


def mlm_logits(model: Any, hidden: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Vocabulary logits of the hidden states at ``positions`` (a boolean mask [B, L])."""
    return head_module(model)(hidden[positions])


def mlm_loss(model: Any, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, int]:
    """Mean cross-entropy over the predicted tokens of ``batch`` (labels != -100) and
    their number; the logits are computed at those positions only."""
    labels = batch["labels"]
    positions = labels != -100
    n = int(positions.sum())
    if n == 0:
        raise ValueError("an MLM batch with no predicted token")
    out = model.base_model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])
    logits = mlm_logits(model, out.last_hidden_state, positions)
    loss = torch.nn.functional.cross_entropy(logits.float(), labels[positions])
    return loss, n


def warm_up_head(
    model: Any,
    batches: Callable[[int], dict[str, torch.Tensor]],
    *,
    steps: int,
    learning_rate: float,
    device: torch.device,
    progress: Iterable[int] | None = None,
) -> tuple[float | None, float | None]:
    """Train the head alone for ``steps`` steps (AdamW, constant ``learning_rate``) on
    ``batches(step)``; every other parameter is frozen meanwhile and the encoder runs
    without building a graph. Returns the first and last loss."""
    if steps <= 0:
        return None, None
    params = head_parameters(model)
    if not params:
        raise ConfigError("pretrain.head_warmup: the model's head has no own parameters")
    flags = {p: p.requires_grad for p in model.parameters()}
    for p in model.parameters():
        p.requires_grad_(False)
    for p in params:
        p.requires_grad_(True)
    opt = torch.optim.AdamW(params, lr=learning_rate, weight_decay=0.0)
    first = last = None
    model.train()
    try:
        for step in progress if progress is not None else range(steps):
            batch = {k: v.to(device) for k, v in batches(step).items()}
            positions = batch["labels"] != -100
            with torch.no_grad():
                hidden = model.base_model(
                    input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
                ).last_hidden_state
            logits = mlm_logits(model, hidden, positions)
            loss = torch.nn.functional.cross_entropy(logits.float(), batch["labels"][positions])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            value = float(loss.detach())
            first = value if first is None else first
            last = value
    finally:
        for p, flag in flags.items():
            p.requires_grad_(flag)
    return first, last
