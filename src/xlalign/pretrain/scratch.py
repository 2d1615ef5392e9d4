"""Pre-training a from-scratch model with the stage's trainer and objectives, as the
derived-language (001) and meta-pretraining (004) experiments do: their config sections
(``derived.pretrain``, ``metapretrain.pretrain``) hold the trainer's settings and the
objectives' batch sizes side by side, and a fresh model has its own MLM head (no head
warm-up, unlike continued pre-training of a published encoder).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from xlalign.core.cadence import DEFAULT_INTERVAL_MINUTES
from xlalign.core.errors import ConfigError
from xlalign.core.io import PathLike

#: Keys of a stage's settings that go to :class:`~xlalign.pretrain.trainer.PretrainParams`.
PARAM_KEYS = (
    "steps", "gradient_accumulation", "max_length", "learning_rate", "weight_decay",
    "warmup_steps", "adam_epsilon", "max_grad_norm", "mlm_probability", "eval_every",
    "log_every", "validation_batch_size",
)  # fmt: skip
#: The other keys such a section may hold.
OTHER_KEYS = ("objectives", "validation_paragraphs")


def training_params(section: Mapping[str, Any], *, steps: int | None = None) -> dict[str, Any]:
    """PretrainParams values from a stage's ``pretrain`` settings; keys not given keep the
    trainer's defaults, ``steps`` (when given) overrides the section's."""
    from xlalign.pretrain.trainer import PretrainParams

    known = {f.name for f in dataclasses.fields(PretrainParams)}
    unknown = set(section) - set(PARAM_KEYS) - set(OTHER_KEYS)
    if unknown:
        raise ConfigError(
            f"pretrain settings: unknown keys {sorted(unknown)}; expected "
            f"{[*PARAM_KEYS, *OTHER_KEYS]}"
        )
    out = {k: section[k] for k in PARAM_KEYS if k in section}
    if steps is not None:
        out["steps"] = int(steps)
    out["head_warmup_steps"] = 0
    assert set(out) <= known
    return out


def row_settings(section: Mapping[str, Any], row: str) -> dict[str, dict[str, Any]]:
    """The objectives of pre-training row ``row`` with ``section['objectives']`` over the
    defaults (:func:`xlalign.pretrain.recipes.row_objectives`)."""
    from xlalign.pretrain.recipes import row_objectives

    cfg = {"pretrain": {"objectives": section.get("objectives") or {}, "alignment_layer": None}}
    return row_objectives(cfg, row)


def pretrain_scratch(
    row: str,
    *,
    encoder: PathLike,
    files: Mapping[str, Any],
    section: Mapping[str, Any],
    seed: int,
    output_dir: PathLike,
    stats_path: PathLike,
    work_dir: PathLike,
    objectives: Mapping[str, Mapping[str, Any]] | None = None,
    steps: int | None = None,
    device: str | None = None,
    progress: bool = True,
    gpus: int = 0,
    log_path: PathLike | None = None,
    checkpoint_minutes: float | None = DEFAULT_INTERVAL_MINUTES,
) -> dict[str, Any]:
    """:func:`xlalign.pretrain.run.run_pretrain` of the freshly initialised ``encoder`` with
    row ``row`` (``objectives``: its resolved objectives, default :func:`row_settings`) and
    the trainer settings of ``section``; English is the hub, the resume checkpoints
    (every ``checkpoint_minutes``, ``checkpoints.interval_minutes``) go to
    ``<work_dir>/train``. With ``gpus`` > 1 (and that many visible), one
    process per GPU under torchrun (:func:`xlalign.pretrain.run.run_pretrain_job`, its
    output to ``log_path``). Returns the record written to ``stats_path``."""
    from xlalign.pretrain.run import run_pretrain_job

    return run_pretrain_job(
        row,
        gpus=int(gpus),
        log_path=log_path,
        encoder=encoder,
        objectives=row_settings(section, row) if objectives is None else objectives,
        files=files,
        params=training_params(section, steps=steps),
        seed=int(seed),
        output_dir=output_dir,
        stats_path=stats_path,
        work_dir=Path(work_dir) / "train",
        hub="en",
        validation_paragraphs=int(section.get("validation_paragraphs", 50)),
        device=device,
        progress=progress,
        checkpoint_minutes=checkpoint_minutes,
    )
