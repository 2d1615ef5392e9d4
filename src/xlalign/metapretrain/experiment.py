"""004's meta-pretraining experiment, from files to records (what the workflow rules and
``xlalign metapretrain`` call).

1. :func:`run_meta_mono`: the meta-pretrained model. No monolingual checkpoint exists
   offline, so a small English BERT is pre-trained from scratch (MLM, the pre-training
   stage's trainer) on the English text.
2. :func:`run_meta_cross`: a cross-lingual model with a vocabulary learnt on every
   language, initialised from the monolingual one as one of 004 Table 5's variants
   (:func:`xlalign.metapretrain.init.initialise_cross_lingual`: Transformer body, word
   embeddings by vocabulary matching, both, or none) and pre-trained further with MLM on
   every language, languages sampled with p_i ~ N_i^alpha (004 section 3.2).
3. :func:`run_meta_evaluate`: zero-shot POS (fine-tune on English, test the others) and
   sentence retrieval by layer, the cross-lingual understanding side of Table 5 that runs
   offline.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from xlalign.core.cadence import DEFAULT_INTERVAL_MINUTES
from xlalign.core.errors import ConfigError
from xlalign.core.io import PathLike, read_json, write_json

log = logging.getLogger(__name__)

#: 004 Table 5's rows -> (body, embeddings, dictionaries).
VARIANTS: dict[str, tuple[bool, bool, bool]] = {
    "none": (False, False, False),
    "body": (True, False, False),
    "emb": (False, True, False),
    "both": (True, True, False),
    "both+dict": (True, True, True),
}


def run_meta_mono(
    *,
    text: PathLike,
    output_dir: PathLike,
    stats_path: PathLike,
    work_dir: PathLike,
    vocab_size: int,
    arch: Mapping[str, Any],
    section: Mapping[str, Any],
    steps: int,
    seed: int,
    device: str | None = None,
    progress: bool = True,
    gpus: int = 0,
    log_path: PathLike | None = None,
    checkpoint_minutes: float | None = DEFAULT_INTERVAL_MINUTES,
) -> dict[str, Any]:
    """Meta-pretraining: a from-scratch English BERT trained with MLM on ``text`` (resume
    checkpoints every ``checkpoint_minutes``: ``checkpoints.interval_minutes``)."""
    from xlalign.encoders.scratch import ScratchArch, init_encoder, train_tokenizer
    from xlalign.pretrain.scratch import pretrain_scratch
    from xlalign.pretrain.text import read_paragraphs

    work_dir = Path(work_dir)
    english = read_paragraphs(Path(text), "en")
    tokenizer = train_tokenizer(english, vocab_size=int(vocab_size), pre_tokenizer="bert")
    base = init_encoder(tokenizer, work_dir / "init", arch=ScratchArch(**arch), seed=int(seed))
    record = pretrain_scratch(
        "mlm",
        encoder=base,
        files={"text": {"en": str(text)}},
        section=section,
        steps=steps,
        seed=int(seed),
        output_dir=output_dir,
        stats_path=stats_path,
        work_dir=work_dir,
        device=device,
        progress=progress,
        gpus=gpus,
        log_path=log_path,
        checkpoint_minutes=checkpoint_minutes,
    )
    record.update(phase="meta-pretraining", vocabulary=len(tokenizer), arch=dict(arch))
    write_json(stats_path, record)
    # the job's own directory (the initialised encoder; the trainer's resume state,
    # <work_dir>/train, is gone already): kept only while the job has not succeeded
    shutil.rmtree(work_dir, ignore_errors=True)
    return record


def run_meta_cross(
    variant: str,
    *,
    mono_dir: PathLike,
    texts: Mapping[str, PathLike],
    dictionaries: Mapping[str, PathLike] | None,
    output_dir: PathLike,
    stats_path: PathLike,
    work_dir: PathLike,
    vocab_size: int,
    section: Mapping[str, Any],
    steps: int,
    language_alpha: float,
    seed: int,
    device: str | None = None,
    progress: bool = True,
    gpus: int = 0,
    log_path: PathLike | None = None,
    checkpoint_minutes: float | None = DEFAULT_INTERVAL_MINUTES,
) -> dict[str, Any]:
    """Cross-lingual pre-training of one Table 5 variant, initialised from ``mono_dir``."""
    from xlalign.encoders.scratch import train_tokenizer
    from xlalign.metapretrain.init import initialise_cross_lingual
    from xlalign.metapretrain.vocab_match import read_dictionaries
    from xlalign.pretrain.scratch import pretrain_scratch, row_settings
    from xlalign.pretrain.text import read_paragraphs

    if variant not in VARIANTS:
        raise ConfigError(f"metapretrain.variants: unknown {variant!r}; expected {list(VARIANTS)}")
    body, embeddings, use_dict = VARIANTS[variant]
    work_dir = Path(work_dir)
    paragraphs = [p for lang in sorted(texts) for p in read_paragraphs(Path(texts[lang]), lang)]
    tokenizer = train_tokenizer(paragraphs, vocab_size=int(vocab_size), pre_tokenizer="bert")
    dicts = read_dictionaries(dictionaries) if use_dict and dictionaries else None
    init = initialise_cross_lingual(
        mono_dir,
        tokenizer,
        work_dir / "init",
        body=body,
        embeddings=embeddings,
        dictionaries=dicts,
        seed=int(seed),
    )
    objectives = row_settings(section, "mlm")
    objectives["mlm"]["language_alpha"] = float(language_alpha)
    record = pretrain_scratch(
        f"meta-{variant}",
        encoder=work_dir / "init",
        objectives=objectives,
        files={"text": {lang: str(p) for lang, p in texts.items()}},
        section=section,
        steps=steps,
        seed=int(seed),
        output_dir=output_dir,
        stats_path=stats_path,
        work_dir=work_dir,
        device=device,
        progress=progress,
        gpus=gpus,
        log_path=log_path,
        checkpoint_minutes=checkpoint_minutes,
    )
    record.update(
        phase="cross-lingual pre-training",
        variant=variant,
        initialisation=init,
        vocabulary=len(tokenizer),
        language_alpha=float(language_alpha),
    )
    write_json(stats_path, record)
    # the job's own directory (the initialised encoder; the trainer's resume state,
    # <work_dir>/train, is gone already): kept only while the job has not succeeded
    shutil.rmtree(work_dir, ignore_errors=True)
    return record


def run_meta_evaluate(
    *,
    model_dir: PathLike,
    model_name: str,
    tasks: Mapping[str, Mapping[str, Any]],
    retrieval: Mapping[str, Mapping[str, PathLike]],
    seed: int,
    output: PathLike,
    work_dir: PathLike,
    pretrain_stats: PathLike | None = None,
    device: str | None = None,
) -> dict[str, Any]:
    """Zero-shot fine-tuning (``tasks``: task -> {train, dev, tests: lang -> file,
    params}) and sentence retrieval at every layer (``retrieval``: set -> lang -> file)."""
    from xlalign.evaluation.tasks.run import run_finetune, run_retrieval

    work_dir = Path(work_dir)
    out: dict[str, Any] = {"model": model_name, "seed": int(seed), "tasks": {}, "retrieval": {}}
    for task, spec in sorted(tasks.items()):
        res = run_finetune(
            task,
            encoder=model_dir,
            encoder_name=model_name,
            train=spec["train"],
            dev=spec.get("dev"),
            tests=dict(spec["tests"]),
            seed=int(seed),
            output_dir=work_dir / task,
            stats_path=work_dir / f"{task}.json",
            work_dir=work_dir / f"{task}.work",
            params=dict(spec.get("params") or {}),
            device=device,
            keep_model=False,
        )
        out["tasks"][task] = {"summary": res["summary"], "params": res["params"]}
    # XTREME's layer (the 8th of 12) does not exist in a small model: the last layer
    # (every layer is in the sweep)
    from transformers import AutoConfig

    # (the loaded configuration: DistilBERT's config.json names it n_layers)
    depth = int(AutoConfig.from_pretrained(model_dir).num_hidden_layers)
    for name, sets in sorted(retrieval.items()):
        res = run_retrieval(
            name,
            encoder=model_dir,
            encoder_name=model_name,
            sets=sets,
            stats_path=work_dir / f"{name}.json",
            layer=depth,
            device=device,
        )
        out["retrieval"][name] = {
            "layer": res["layer"],
            "languages": {
                lang: {k: v for k, v in r.items() if k in ("accuracy", "sweep", "counts")}
                for lang, r in res["languages"].items()
            },
        }
    if pretrain_stats is not None:
        stats = read_json(pretrain_stats)
        out["pretrain"] = {
            k: stats.get(k) for k in ("selection", "initialisation", "variant", "language_alpha")
        }
    write_json(output, out)
    return out


def table_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per variant: the mean zero-shot score of each task over its non-English
    languages and the mean retrieval accuracy of each set (004 Table 5's shape)."""
    rows = []
    for rec in records:
        row: dict[str, Any] = {"model": rec["model"]}
        for task, t in rec.get("tasks", {}).items():
            row[task] = t["summary"]["transfer"]["mean_others"]
        for name, r in rec.get("retrieval", {}).items():
            accs = [_en_xx(v.get("accuracy")) for v in r["languages"].values()]
            accs = [a for a in accs if a is not None]
            row[name] = sum(accs) / len(accs) if accs else None
        init = (rec.get("pretrain") or {}).get("initialisation") or {}
        row["initialised_rows"] = init.get("counts")
        rows.append(row)
    return rows


def _en_xx(accuracy: Any) -> float | None:
    """XTREME's direction (English queries) of a retrieval accuracy record."""
    if isinstance(accuracy, Mapping):
        return accuracy.get("en->xx")
    return accuracy
