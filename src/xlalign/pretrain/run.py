"""One continued pre-training run, from files to a checkpoint directory (what the workflow
rule and ``xlalign pretrain`` call).

:func:`run_pretrain` reads the data, loads the encoder as a masked-LM model (initialising
and warming up a head where the checkpoint has none), builds the row's objectives (every
check on data and configuration before the first step), trains (:mod:`.trainer`) and
writes the selected model as a ``transformers`` checkpoint directory plus the run's record
(JSON, with the curves MLflow shows). :func:`run_pretrain_job` runs it under torchrun, one
process per GPU, when the job asks for several GPUs.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from xlalign.core.cadence import DEFAULT_INTERVAL_MINUTES
from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, local_model_dir, read_json, write_json

log = logging.getLogger(__name__)

TOKEN_DICTIONARY = "token_dictionary.json"
SPEC = "spec.json"


def _file_digest(value: Any) -> Any:
    """Paths in ``value`` replaced by (path, size, mtime) so a changed input never resumes
    an old run."""
    if isinstance(value, Mapping):
        return {k: _file_digest(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [_file_digest(v) for v in value]
    p = Path(str(value))
    if isinstance(value, str | Path) and p.exists():
        paths = [p] if p.is_file() else sorted(x for x in p.iterdir() if x.is_file())
        return [[str(x), x.stat().st_size, x.stat().st_mtime_ns] for x in paths]
    return value


def _content_digest(path: Path) -> list[list[Any]]:
    """Name, size and SHA-256 of each file of ``path`` (a directory, or one file): the
    derived-language and meta-pretraining jobs write their freshly initialised encoder
    again when they start, the same bytes with a new modification time, and must still
    resume (hashing a few GB of weights takes seconds, once per start)."""
    import hashlib

    paths = [path] if path.is_file() else sorted(x for x in path.iterdir() if x.is_file())
    out = []
    for p in paths:
        h = hashlib.sha256()
        with p.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
        out.append([p.name, p.stat().st_size, h.hexdigest()])
    return out


def run_pretrain(
    row: str,
    *,
    encoder: PathLike,
    objectives: Mapping[str, Mapping[str, Any]],
    files: Mapping[str, Any],
    params: Mapping[str, Any],
    seed: int,
    output_dir: PathLike,
    stats_path: PathLike,
    work_dir: PathLike,
    hub: str = "en",
    validation_paragraphs: int = 50,
    validation_max_sequences: int | None = None,
    device: str | None = None,
    precision: str = "auto",
    progress: bool = True,
    on_step: Any = None,
    checkpoint_minutes: float | None = DEFAULT_INTERVAL_MINUTES,
) -> dict[str, Any]:
    """Train ``row`` (objective -> settings with ``weight`` and ``batch_size``, as
    :func:`xlalign.pretrain.recipes.row_objectives` resolves them) from ``encoder`` with
    pre-training seed ``seed``; ``files`` as :func:`xlalign.pretrain.objectives.build_objective`
    reads them plus ``text`` (language -> paragraphs file). Returns the record also
    written to ``stats_path``. ``on_step(step)`` runs after each step (tests kill the run
    there); ``checkpoint_minutes`` is ``checkpoints.interval_minutes`` (resume checkpoints
    in ``work_dir``: :func:`xlalign.pretrain.trainer.train`)."""
    import numpy as np
    import torch
    from transformers import AutoTokenizer

    from xlalign.encoders import distributed
    from xlalign.pretrain import text, trainer
    from xlalign.pretrain.heads import load_masked_lm
    from xlalign.pretrain.objectives import build_objective

    encoder, output_dir, work_dir = Path(encoder), Path(output_dir), Path(work_dir)
    pp = trainer.PretrainParams(**{k: v for k, v in params.items()})
    pp.check()
    if not objectives:
        raise ConfigError(f"pretrain.runs.{row}: no objective")
    text_files = files.get("text") or {}
    if not text_files:
        raise ConfigError(f"pretrain.runs.{row}: no text files (validation text needed)")

    with distributed.init_from_env(device) as ctx:
        dev = ctx.device if ctx.distributed else trainer.device_for(device)
        prec = trainer.resolve_precision(precision, dev)
        if dev.type == "cuda":
            import os

            os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        tokenizer = AutoTokenizer.from_pretrained(
            local_model_dir(encoder, what="encoder"), local_files_only=True
        )
        paragraphs = {
            lang: text.read_paragraphs(Path(p), lang) for lang, p in sorted(text_files.items())
        }
        train_corpus, valid_corpus = text.TextCorpus.build(
            paragraphs,
            tokenizer,
            max_length=pp.max_length,
            validation_paragraphs=validation_paragraphs,
            validation_max_sequences=validation_max_sequences,
            seed=seed,
        )
        model, head = load_masked_lm(encoder, seed=seed)
        model.to(dev)
        work_dir.mkdir(parents=True, exist_ok=True)
        obj_files = {
            **files,
            "train_corpus": train_corpus,
            "token_dictionary": work_dir / TOKEN_DICTIONARY,
        }
        terms = []
        for name, settings in objectives.items():
            obj = build_objective(
                name,
                settings,
                model=model,
                tokenizer=tokenizer,
                files=obj_files,
                seed=seed,
                hub=hub,
                max_length=pp.max_length,
            )
            terms.append(
                trainer.Term(obj, float(settings.get("weight", 1.0)), int(settings["batch_size"]))
            )
        collator = text.MaskingCollator(tokenizer, probability=pp.mlm_probability)
        validation = text.validation_batches(
            valid_corpus, collator, batch_size=pp.validation_batch_size, seed=seed
        )
        mlm_batch = int(objectives.get("mlm", {}).get("batch_size", 64))

        def warmup_batches(step: int) -> dict[str, Any]:
            rng = np.random.default_rng([seed, 1_000_003, step])
            g = torch.Generator()
            g.manual_seed(int(rng.integers(0, 2**62)))
            return collator(train_corpus.sample(rng, mlm_batch), g)

        has_mlm = any(name in ("mlm", "dict_mlm", "tlm") for name in objectives)
        warm_steps = pp.head_warmup_steps if head.head == "initialised" and has_mlm else 0
        if warm_steps != pp.head_warmup_steps:
            log.info("the checkpoint has its own MLM head: no head warm-up")
        pp.head_warmup_steps = warm_steps
        fp = {
            "row": row,
            "objectives": objectives,
            "params": vars(pp),
            "seed": seed,
            "encoder": _content_digest(encoder),
            "files": _file_digest({k: v for k, v in files.items() if k != "token_dictionary"}),
            "validation_paragraphs": validation_paragraphs,
            # only when set: the resume checkpoints of runs without it keep their fingerprint
            **(
                {"validation_max_sequences": validation_max_sequences}
                if validation_max_sequences is not None
                else {}
            ),
            "world_size": ctx.world_size,
            "precision": prec,
        }
        record = trainer.train(
            model,
            terms,
            params=pp,
            seed=seed,
            work_dir=work_dir,
            run_fingerprint=fp,
            validation=validation,
            warmup_batches=warmup_batches if warm_steps else None,
            device=dev,
            precision=prec,
            progress=progress,
            on_step=on_step,
            checkpoint_minutes=checkpoint_minutes,
        )
        head.warmup_steps = warm_steps
        head.warmup_learning_rate = pp.head_warmup_learning_rate if warm_steps else None
        head.warmup_loss_first = record["head_warmup"]["loss_first"]
        head.warmup_loss_last = record["head_warmup"]["loss_last"]
        data = {
            "text": {"train": train_corpus.stats(), "validation": valid_corpus.stats()},
            **{t.name: _stats(t.objective) for t in terms},
        }
        result: dict[str, Any] = {
            "row": row,
            "seed": seed,
            "encoder": str(encoder),
            "objectives": {k: dict(v) for k, v in objectives.items()},
            "params": vars(pp),
            "head": head.as_dict(),
            "device": str(dev),
            "precision": prec,
            "world_size": ctx.world_size,
            "forward": _forward_plans(model, terms),
            **{k: record[k] for k in ("steps", "resumed_from_step", "selection", "speed")},
            "objective_state": {t.name: t.objective.state() for t in terms},
            "data": data,
            "learning_curve": record["history"],
            "curves": trainer.curves(record["history"]),
            "checkpoint": str(output_dir),
        }
        if ctx.is_main:

            def extra(tmp: Path) -> None:
                for t in terms:
                    maps = getattr(t.objective, "maps", None)
                    if maps is not None:
                        maps.save(tmp)
                saved = work_dir / TOKEN_DICTIONARY
                if saved.is_file():
                    (tmp / TOKEN_DICTIONARY).write_bytes(saved.read_bytes())

            meta = {
                k: result[k]
                for k in (
                    "row",
                    "seed",
                    "objectives",
                    "params",
                    "head",
                    "selection",
                    "precision",
                    "world_size",
                )
            }
            meta["base_encoder"] = str(encoder)
            trainer.save_output(model, tokenizer, output_dir, metadata=meta, extra=extra)
            write_json(stats_path, result)
        ctx.barrier()
        if ctx.is_main:
            trainer.remove_work_dir(work_dir)
    return result


def _forward_plans(model: Any, terms: Any) -> dict[str, str]:
    """How each objective that reads one layer computes it: ``"truncated"`` (its layers
    only) or ``"full (why)"`` (:func:`xlalign.encoders.contextual.forward_plan`)."""
    from xlalign.encoders.contextual import forward_plan
    from xlalign.pretrain.base import encoder_of

    config = encoder_of(model).config
    return {
        t.name: forward_plan(config, t.objective.layer)
        for t in terms
        if isinstance(getattr(t.objective, "layer", None), int)
    }


def _stats(objective: Any) -> dict[str, Any]:
    for attr in ("corpus", "pairs", "aligned", "dictionary"):
        data = getattr(objective, attr, None)
        if data is not None and hasattr(data, "stats"):
            return dict(data.stats())
    return {}


def run_pretrain_job(
    row: str, *, gpus: int = 0, log_path: PathLike | None = None, **kw: Any
) -> dict[str, Any]:
    """:func:`run_pretrain` as the workflow runs it: with ``gpus`` > 1 (and at least two
    visible) one process per GPU under torchrun (the project's launcher,
    :func:`xlalign.encoders.distributed.launch`), the arguments passed as a JSON spec."""
    from xlalign.encoders import distributed

    if not distributed.in_torchrun():
        nproc = distributed.world_size_for(gpus)
        if nproc > 1:
            spec = Path(kw["work_dir"]) / SPEC
            spec.parent.mkdir(parents=True, exist_ok=True)
            write_json(spec, {"row": row, **{k: _plain(v) for k, v in kw.items()}})
            distributed.launch(["pretrain", "--spec", str(spec)], nproc, log_path=log_path)
            return read_json(kw["stats_path"])
    return run_pretrain(row, **kw)


def run_from_spec(spec_path: PathLike) -> dict[str, Any]:
    """Run the job a JSON spec describes (torchrun workers of :func:`run_pretrain_job`)."""
    spec = read_json(spec_path)
    if "row" not in spec:
        raise InputError(f"{spec_path}: not a pre-training spec (no 'row')")
    row = spec.pop("row")
    return run_pretrain(row, **spec)


def _plain(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
