"""One fine-tuning run or one retrieval evaluation, from the task files on disk to the
results JSON: what the workflow's jobs and the CLI (``xlalign finetune``, ``xlalign
retrieve``) call.

A fine-tuning run (task x encoder x fine-tuning seed) reads the English ``train`` and
``dev`` splits and each test language's ``test`` split (records of :mod:`.data`),
fine-tunes with the task's protocol (:mod:`.registry`, overridden by the config), and
writes into ``output_dir`` the per-example predictions of every evaluated split
(``predictions/<lang>.jsonl``) and, when kept, the selected model; ``stats_path`` gets the
results JSON: scores per language, the English score and the transfer gap, the label
inventory and the data's label maps and ``silver`` flags, counts, learning curve.

Caps on the number of examples (``max_*_examples``) take the first examples of a split
in file order (unless the task draws another training sample, e.g. NER's
``extra.train_sample``, with a seed of its own: :meth:`~.base.Task.training_sample`); the
data builders write their splits in a fixed order, so every fine-tuning seed sees the same
examples. What the task did beyond the parameters (a class-weighted loss, a drawn sample)
is in the results as ``recipe`` (:meth:`~.base.Task.recipe`), and its ``deviations`` are
appended to the ``protocol`` note.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from xlalign.core.cadence import DEFAULT_INTERVAL_MINUTES
from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, local_model_dir, read_json, write_json
from xlalign.evaluation.tasks.base import TaskParams
from xlalign.evaluation.tasks.data import read_records
from xlalign.evaluation.tasks.registry import TaskInfo, task_info

log = logging.getLogger(__name__)


def task_params(task: str, overrides: Mapping[str, Any] | None = None) -> TaskParams:
    """The task's protocol (:data:`~.registry.PROTOCOLS`) with ``overrides`` on top."""
    info = task_info(task)
    values = {**info.protocol, **dict(overrides or {})}
    extra = {**info.protocol.get("extra", {}), **dict((overrides or {}).get("extra", {}))}
    values["extra"] = extra
    return TaskParams.from_mapping(values, where=f"zeroshot.tasks.{task}.params")


def _data_stats(split_file: PathLike) -> dict[str, Any]:
    """The builder's ``stats.json`` beside a split file ({} when there is none)."""
    p = Path(split_file).with_name("stats.json")
    return read_json(p) if p.is_file() else {}


def _cap(records: list[Any], n: int | None) -> list[Any]:
    return records if n is None else records[:n]


def transfer_gap(english: float | None, others: Mapping[str, float]) -> dict[str, Any]:
    """XTREME's cross-lingual transfer gap: English score minus the mean over the other
    languages (and per language); None where English has no score."""
    vals = [v for v in others.values() if v is not None]
    mean = sum(vals) / len(vals) if vals else None
    return {
        "mean_others": mean,
        "gap": None if english is None or mean is None else english - mean,
        "per_language": {
            k: (None if english is None or v is None else english - v) for k, v in others.items()
        },
    }


def summarise_scores(
    info: TaskInfo, scores: Mapping[str, Mapping[str, Any]], *, english_key: str
) -> dict[str, Any]:
    """The task metric per language, the English figure and the transfer gap."""
    metric = info.metric
    per_lang = {
        lang: s.get(metric)
        for lang, s in scores.items()
        if lang not in (info.train_language, english_key)
    }
    en = scores.get(english_key, {}).get(metric)
    return {
        "metric": metric,
        "english": en,
        "english_split": english_key.split("/")[-1] if "/" in english_key else "test",
        "per_language": per_lang,
        "transfer": transfer_gap(en, per_lang),
    }


def run_finetune(
    task: str,
    *,
    encoder: PathLike,
    encoder_name: str,
    train: PathLike,
    dev: PathLike | None,
    tests: Mapping[str, PathLike],
    seed: int,
    output_dir: PathLike,
    stats_path: PathLike,
    work_dir: PathLike,
    params: Mapping[str, Any] | None = None,
    device: str | None = None,
    precision: str = "auto",
    keep_model: bool = True,
    continual: Mapping[str, Any] | None = None,
    objective_builder: Callable[..., Any] | None = None,
    checkpoint_minutes: float | None = DEFAULT_INTERVAL_MINUTES,
) -> dict[str, Any]:
    """Fine-tune ``encoder`` on ``task`` and evaluate it; returns the results written to
    ``stats_path``. ``tests`` maps each evaluated language to its test file; the training
    language's is skipped when the data has none (its dev split then gives the English
    figure), and a missing ``dev`` is allowed when the protocol keeps the final
    checkpoint.

    ``continual`` (config ``zeroshot.continual.<name>`` with its ``name`` and data
    ``files``) keeps that alignment loss during fine-tuning (003; built by
    :func:`~.continual.continual_from_spec` with ``objective_builder``, by default
    :func:`xlalign.pretrain.objectives.build_objective`; tests pass their own).
    ``checkpoint_minutes``: the least work between two resume checkpoints
    (``checkpoints.interval_minutes``; :mod:`.finetune`)."""
    from xlalign.evaluation.tasks.continual import continual_from_spec
    from xlalign.evaluation.tasks.families import make_task
    from xlalign.evaluation.tasks.finetune import finetune

    info = task_info(task)
    p = task_params(task, params)
    impl = make_task(task)
    kind = impl.record_type
    # the first max_train_examples, or the sample the task's params name
    train_recs = impl.training_sample(read_records(train, kind), p)
    if dev is not None and not Path(dev).is_file() and p.selection == "final":
        log.info("%s: no English dev split; the final checkpoint is kept", dev)
        dev = None
    dev_recs = [] if dev is None else _cap(read_records(dev, kind), p.max_dev_examples)
    tests = {
        lang: f for lang, f in tests.items() if lang != info.train_language or Path(f).is_file()
    }
    if not train_recs:
        raise InputError(f"{train}: no training examples for task {task!r}")
    test_recs = {
        lang: _cap(read_records(f, kind), p.max_test_examples) for lang, f in tests.items()
    }
    for lang, recs in test_recs.items():
        if not recs:
            raise InputError(f"{tests[lang]}: no test examples for {task!r} in {lang!r}")
    cl = None
    if continual is not None:
        cl = continual_from_spec(
            continual, encoder=encoder, seed=int(seed), builder=objective_builder
        )
    result = finetune(
        impl,
        encoder=Path(encoder),
        train=train_recs,
        dev=dev_recs,
        tests=test_recs,
        params=p,
        seed=int(seed),
        output_dir=Path(output_dir),
        work_dir=Path(work_dir),
        device=device,
        precision=precision,
        keep_model=keep_model,
        dev_language=info.train_language,
        # the training loss every few steps (MLflow's learning curve), at least as often
        # as the dev evaluations
        log_every=max(1, min(50, p.eval_every)),
        continual=cl,
        checkpoint_minutes=checkpoint_minutes,
    )
    scores: dict[str, Any] = result["scores"]
    # what the task did beyond the params (a weighted loss, a drawn sample)
    recipe = impl.recipe()
    english_key = info.train_language if info.train_language in tests else "en/dev"
    if english_key == "en/dev" and "en/dev" not in scores:
        # the loop names the English dev scores after the split
        english_key = next((k for k in scores if k.startswith("en")), "en/dev")
    data = {
        "train": {"file": str(train), "examples": len(train_recs), **_data_stats(train)},
        "tests": {
            lang: {"file": str(f), "examples": len(test_recs[lang]), **_data_stats(f)}
            for lang, f in tests.items()
        },
    }
    silver = sorted(lang for lang, d in data["tests"].items() if d.get("silver")) + (
        ["en (train)"] if data["train"].get("silver") else []
    )
    out = {
        **{k: v for k, v in result.items() if k != "scores"},
        "implementation": result.get("task"),
        "task": task,
        "title": info.title,
        "family": info.family,
        "protocol": "; ".join([info.protocol_note, *recipe.get("deviations", [])]),
        "encoder": encoder_name,
        "seed": int(seed),
        "params": asdict(p),
        "recipe": recipe,
        "scores": scores,
        "summary": summarise_scores(info, scores, english_key=english_key),
        "silver": silver,
        "data": data,
    }
    if int(os.environ.get("RANK", "0")) == 0:
        write_json(stats_path, out)
    return out


def finetune_argv(
    task: str,
    *,
    encoder: PathLike,
    train: PathLike,
    dev: PathLike | None,
    tests: Mapping[str, PathLike],
    seed: int,
    output_dir: PathLike,
    stats_path: PathLike,
    work_dir: PathLike,
    params: Mapping[str, Any] | None = None,
    precision: str = "auto",
    keep_model: bool = True,
    encoder_name: str | None = None,
    continual: Mapping[str, Any] | None = None,
    checkpoint_minutes: float | None = DEFAULT_INTERVAL_MINUTES,
) -> list[str]:
    """``xlalign finetune`` arguments for the same run (what torchrun starts per GPU)."""
    argv = [
        "finetune", task, str(encoder), "--train", str(train),
        "--dev", str(dev) if dev is not None else "",
        "--seed", str(seed), "-o", str(output_dir), "--stats", str(stats_path),
        "--work-dir", str(work_dir), "--precision", precision,
        "--checkpoint-minutes", "none" if checkpoint_minutes is None else repr(checkpoint_minutes),
    ]  # fmt: skip
    if tests:
        argv += ["--test", *(f"{lang}={f}" for lang, f in tests.items())]
    if params:
        argv += ["--set", *(f"{k}={json.dumps(v)}" for k, v in params.items())]
    if not keep_model:
        argv.append("--no-model")
    if encoder_name:
        argv += ["--encoder-name", encoder_name]
    if continual is not None:
        # one JSON argument, paths as strings; the worker builds the objective itself
        argv += ["--continual", json.dumps(dict(continual), sort_keys=True, default=str)]
    return argv


def run_finetune_job(
    task: str, *, gpus: int = 0, log_path: PathLike | None = None, **kw: Any
) -> dict[str, Any]:
    """:func:`run_finetune` as the workflow runs it: with ``gpus`` > 1 (and at least two
    visible) one process per GPU under torchrun, the same launcher as X2Static's
    (:func:`xlalign.encoders.distributed.launch`); otherwise in this process."""
    from xlalign.encoders import distributed

    if not distributed.in_torchrun():
        nproc = distributed.world_size_for(gpus)
        if nproc > 1:
            if kw.get("objective_builder") is not None:  # a test's seam; workers build their own
                raise ValueError("objective_builder cannot travel to torchrun workers")
            local = ("device", "objective_builder")
            argv = finetune_argv(task, **{k: v for k, v in kw.items() if k not in local})
            distributed.launch(argv, nproc, log_path=log_path)
            return read_json(kw["stats_path"])
    return run_finetune(task, **kw)


@dataclass(frozen=True)
class RetrievalSet:
    """One retrieval set of a job: its pair files (language -> file; for BUCC, a file in
    each language's corpus directory) and where its results go."""

    name: str
    files: Mapping[str, PathLike]
    stats_path: PathLike
    predictions_dir: PathLike | None = None
    max_pairs: int | None = None


def run_retrieval(
    name: str,
    *,
    encoder: PathLike,
    encoder_name: str,
    sets: Mapping[str, PathLike],
    stats_path: PathLike,
    predictions_dir: PathLike | None = None,
    layer: int | None = None,
    pooling: str = "mean",
    include_special: bool = True,
    batch_size: int = 32,
    max_length: int = 512,
    max_pairs: int | None = None,
    device: str | None = None,
    work_dir: PathLike | None = None,
    budget_mb: float | None = None,
    mteb: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Sentence retrieval of every language's pairs in ``sets`` (lang -> file) with
    ``encoder``, at ``layer`` (Hugging Face ``hidden_states`` index; None = XTREME's) and
    across every layer; writes and returns the results. One set of
    :func:`run_retrieval_sets` (see there for resuming and ``mteb``: its ``sets`` key is
    not needed here, the set is scored as MTEB does whenever ``mteb`` is given);
    ``work_dir`` defaults to ``<stats_path>.work``."""
    job = RetrievalSet(name, sets, stats_path, predictions_dir, max_pairs)
    return run_retrieval_sets(
        [job],
        encoder=encoder,
        encoder_name=encoder_name,
        layer=layer,
        pooling=pooling,
        include_special=include_special,
        batch_size=batch_size,
        max_length=max_length,
        device=device,
        work_dirs=None if work_dir is None else {name: work_dir},
        budget_mb=budget_mb,
        mteb=None if mteb is None else {**mteb, "sets": [name]},
    )[name]


def run_retrieval_sets(
    sets: Sequence[RetrievalSet],
    *,
    encoder: PathLike,
    encoder_name: str,
    layer: int | None = None,
    pooling: str = "mean",
    include_special: bool = True,
    batch_size: int = 32,
    max_length: int = 512,
    device: str | None = None,
    work_dir: PathLike | None = None,
    work_dirs: Mapping[str, PathLike] | None = None,
    stats_path: PathLike | None = None,
    budget_mb: float | None = None,
    mteb: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """Sentence retrieval of several sets with one encoder, loaded once: each set's results
    (``set.stats_path``) and predictions folder, as :func:`run_retrieval` writes them for
    that set alone, byte for byte; returns them by set name. A side that several pair sets
    share (the English of a parallel set's languages) is encoded once
    (:class:`~xlalign.evaluation.tasks.retrieval.SharedSides`). ``stats_path``, when given,
    gets the job's summary (every set's results under ``sets``), written last.

    Resuming: each set's progress is kept in ``<work_dir>/<set>`` (``work_dirs[set]``, by
    default ``<set.stats_path>.work``): its finished languages' results and, within a
    language, the pooled batches so far
    (:class:`~xlalign.evaluation.tasks.retrieval.BatchCheckpoint`: saved every few minutes
    and on SIGTERM, when the job exits 143). A set's predictions folder and results appear
    (atomically) as soon as its last language is done; its progress stays until every set
    is, so a re-run of the same job (encoder, files, settings and device type alike) after
    a kill encodes nothing again for the sets done before (it writes their outputs from
    their progress: Snakemake removes a failed job's outputs), goes on within the set in
    progress and writes what an uninterrupted run writes. The progress is then removed.

    ``budget_mb`` (``memory.block_mb``): the working memory of each block of cosines of
    the retrieval and of BUCC's mining (it changes no number).

    ``mteb``: ``{"sets": [...], "prompt", "pooling", "include_special"}`` (this encoder's
    settings of ``zeroshot.retrieval.mteb``): the listed sets are scored a second time as
    MTEB scores bitext mining (:func:`~xlalign.evaluation.tasks.retrieval.evaluate_mteb`,
    under ``mteb`` in each language's result), with the model's prompt and pooling of its
    last layer; BUCC is refused."""
    mteb_sets = set((mteb or {}).get("sets") or ())
    if "bucc" in mteb_sets:
        raise ConfigError(
            "zeroshot.retrieval.mteb.sets: 'bucc' is mined with margins as XTREME scores it; "
            "MTEB's BUCC scoring is not implemented"
        )
    names = [s.name for s in sets]
    if len(set(names)) != len(names) or not names:
        raise InputError(f"retrieval sets: expected distinct set names, got {names}")
    # Every set is read (and refused, naming its file and line) before the encoder loads
    # and before any resume directory is made.
    read_pairs = {
        s.name: {
            lang: _retrieval_pairs(path, s.max_pairs)
            for lang, path in s.files.items()
            if s.name != "bucc"
        }
        for s in sets
    }
    loaded = _RetrievalEncoder(encoder, device)
    depth, dev = loaded.depth, loaded.device
    chosen = _retrieval_layer(layer, depth, encoder_name)
    encoder_digest = _files_digest(loaded.where)
    works: dict[str, Path] = {}
    for s in sets:
        fp = {
            "set": s.name,
            "encoder": encoder_digest,
            "sets": {
                lang: _files_digest(Path(f).parent if s.name == "bucc" else Path(f))
                for lang, f in s.files.items()
            },
            "layer": chosen,
            "settings": [pooling, include_special, batch_size, max_length, s.max_pairs],
            "device": dev.type,
        }
        if s.name in mteb_sets:
            assert mteb is not None
            fp["mteb"] = {k: mteb.get(k) for k in ("prompt", "pooling", "include_special")}
        if work_dirs is not None and s.name in work_dirs:
            where = Path(work_dirs[s.name])
        elif work_dir is not None:
            where = Path(work_dir) / s.name
        else:
            where = Path(f"{s.stats_path}.work")
        works[s.name] = _retrieval_work_dir(where, s.stats_path, fp)
    encoding = {
        "layer": chosen,
        "pooling": pooling,
        "include_special": include_special,
        "batch_size": batch_size,
        "max_length": max_length,
        "device": dev,
    }
    # the sides still to encode, so that a shared one is kept until its last use
    todo = {
        s.name: [
            lang for lang in s.files if not (works[s.name] / "languages" / f"{lang}.json").is_file()
        ]
        for s in sets
    }
    from xlalign.evaluation.tasks.retrieval import SharedSides

    shared = SharedSides(
        side
        for name, langs in todo.items()
        for lang in langs
        if name != "bucc"
        for side in (
            [p.source for p in read_pairs[name][lang]],
            [p.target for p in read_pairs[name][lang]],
        )
    )
    out: dict[str, dict[str, Any]] = {}
    for s in sets:
        out[s.name] = _retrieval_set(
            s,
            read_pairs[s.name],
            works[s.name],
            loaded,
            encoding,
            shared,
            layer,
            encoder_name,
            budget_mb=budget_mb,
            mteb=mteb if s.name in mteb_sets else None,
        )
        write_json(s.stats_path, out[s.name])
        log.info("%s: %s done (%s)", encoder_name, s.name, s.stats_path)
    if shared.reused:
        log.info("%d shared side(s) encoded once for several pair sets", shared.reused)
    if stats_path is not None:
        write_json(
            stats_path,
            {
                "encoder": encoder_name,
                "depth": depth,
                "layer": chosen,
                "sets": out,
            },
        )
    for work in works.values():
        shutil.rmtree(work, ignore_errors=True)
    if work_dir is not None:
        shutil.rmtree(work_dir, ignore_errors=True)
    return out


class _RetrievalEncoder:
    """The encoder of a retrieval job: its depth from its config at once, the tokenizer and
    model loaded on first use (a job whose sets were all done before it was stopped loads
    neither)."""

    def __init__(self, encoder: PathLike, device: str | None) -> None:
        from transformers import AutoConfig

        from xlalign.core.device import resolve_device

        self.where = Path(local_model_dir(encoder, what="encoder"))
        self.device = resolve_device(None if device in (None, "auto") else device)
        try:
            cfg = AutoConfig.from_pretrained(self.where, local_files_only=True)
            self.depth = int(cfg.num_hidden_layers)
        except Exception as exc:  # transformers raises OSError, ValueError, KeyError...
            raise InputError(f"{self.where}: not a Hugging Face encoder ({exc})") from exc
        self._pair: tuple[Any, Any] | None = None

    def pair(self) -> tuple[Any, Any]:
        """(model, tokenizer), loaded once."""
        if self._pair is None:
            from transformers import AutoModel, AutoTokenizer

            tokenizer = AutoTokenizer.from_pretrained(self.where, local_files_only=True)
            model = AutoModel.from_pretrained(self.where, local_files_only=True)
            self._pair = (model.to(self.device).eval(), tokenizer)
        return self._pair


def _retrieval_layer(layer: int | None, depth: int, encoder_name: str) -> int:
    """The configured layer, or XTREME's: refused when the encoder has no such layer."""
    from xlalign.evaluation.tasks.retrieval import xtreme_layer_to_hf

    chosen = xtreme_layer_to_hf(7, depth) if layer is None else int(layer)
    if not 0 <= chosen <= depth:
        raise InputError(
            f"zeroshot.retrieval.layer: {chosen} is outside 0..{depth} for {encoder_name} "
            f"(a {depth}-layer encoder; 0 = embeddings)"
        )
    return chosen


def _retrieval_set(
    rset: RetrievalSet,
    read_pairs: Mapping[str, list[Any]],
    work: Path,
    loaded: _RetrievalEncoder,
    encoding: Mapping[str, Any],
    shared: Any,
    layer: int | None,
    encoder_name: str,
    *,
    budget_mb: float | None = None,
    mteb: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One set of :func:`run_retrieval_sets`: its languages evaluated (or read back from
    ``work``), its predictions folder written; returns its results."""
    from xlalign.core.io import atomic_dir, atomic_open
    from xlalign.evaluation.tasks.retrieval import BatchCheckpoint, evaluate_retrieval

    name = rset.name
    info = task_info(name)
    results: dict[str, Any] = {}
    predictions: dict[str, Any] = {}
    for lang, path in rset.files.items():
        saved = work / "languages" / f"{lang}.json"
        if not saved.is_file():
            model, tokenizer = loaded.pair()
            batches = work / "batches" / lang
            if name == "bucc":
                res = _bucc_language(
                    Path(path).parent,
                    lang,
                    model,
                    tokenizer,
                    **encoding,
                    checkpoint_dir=batches,
                    budget_mb=budget_mb,
                )
                preds = None
                res["data"] = {"dir": str(Path(path).parent), **_data_stats(path)}
            else:
                res = evaluate_retrieval(
                    read_pairs[lang],
                    model,
                    tokenizer,
                    **encoding,
                    checkpoints={
                        side: BatchCheckpoint(batches / f"{side}.npz")
                        for side in ("source", "target")
                    },
                    shared=shared,
                    budget_mb=budget_mb,
                )
                preds = res.pop("predictions", None)
                res["data"] = {"file": str(path), **_data_stats(path)}
                if mteb is not None:
                    scored = _mteb_language(
                        read_pairs[lang], model, tokenizer, mteb, encoding, rset, res["data"]
                    )
                    assert preds is not None
                    preds["mteb"] = scored.pop("predictions")
                    res["mteb"] = scored
            write_json(saved, {"result": res, "predictions": preds})
            shutil.rmtree(batches, ignore_errors=True)
        else:
            log.info("%s: %s was evaluated before the job was stopped (resumed)", saved, lang)
        # a language done now and one done before the job was stopped read alike
        record = read_json(saved)
        results[lang], predictions[lang] = record["result"], record["predictions"]
    # The predictions folder is built aside and appears whole, after the last language.
    if rset.predictions_dir is not None:
        with atomic_dir(rset.predictions_dir) as pred_dir:
            for lang, preds in predictions.items():
                if preds is not None:
                    with atomic_open(pred_dir / f"{lang}.json", "w") as fh:
                        json.dump(preds, fh)
    return {
        "set": name,
        "title": info.title,
        "protocol": info.protocol_note,
        "encoder": encoder_name,
        "depth": loaded.depth,
        "layer": encoding["layer"],
        "layer_convention": "hf_hidden_states (0 = embeddings)",
        "layer_rule": "xtreme (hidden_states[-12:][7])" if layer is None else "configured",
        "forward": "full (one pass gives every layer of the sweep)",
        "pooling": encoding["pooling"],
        "include_special": encoding["include_special"],
        "mteb": None
        if mteb is None
        else {k: mteb.get(k) for k in ("prompt", "pooling", "include_special")},
        "languages": results,
    }


#: The retrieval sets whose data are MTEB's Tatoeba (LASER's ``data/tatoeba/v1``).
MTEB_TATOEBA_SETS = ("tatoeba", "tatoeba-laser")


def _mteb_language(
    pairs: Sequence[Any],
    model: Any,
    tokenizer: Any,
    mteb: Mapping[str, Any],
    encoding: Mapping[str, Any],
    rset: RetrievalSet,
    data: Mapping[str, Any],
) -> dict[str, Any]:
    """One language scored as MTEB scores bitext mining, named MTEB's Tatoeba only where
    the pairs are all of MTEB's: a Tatoeba set, no ``max_pairs`` cap, no line skipped."""
    from xlalign.evaluation.tasks.retrieval import evaluate_mteb

    scored = evaluate_mteb(
        pairs,
        model,
        tokenizer,
        prompt=str(mteb.get("prompt") or ""),
        pooling=str(mteb.get("pooling") or "mean"),
        include_special=bool(mteb.get("include_special", True)),
        batch_size=encoding["batch_size"],
        max_length=encoding["max_length"],
        device=encoding["device"],
    )
    skipped = sum(
        sum((split.get("skipped") or {}).values())
        for split in (data.get("splits") or {}).values()
        if isinstance(split, Mapping)
    )
    whole = rset.name in MTEB_TATOEBA_SETS and rset.max_pairs is None and not skipped
    scored["protocol"] = (
        "MTEB (Tatoeba bitext mining)"
        if whole
        else "MTEB's bitext-mining scoring on other data (not MTEB's Tatoeba: "
        + (
            "another set"
            if rset.name not in MTEB_TATOEBA_SETS
            else f"max_pairs {rset.max_pairs}, {skipped} line(s) skipped"
        )
        + ")"
    )
    return scored


def _retrieval_pairs(path: PathLike, max_pairs: int | None) -> list[Any]:
    """The RetrievalPair records of ``path`` (the first ``max_pairs``): InputError naming the
    file for an empty file or an id on two records."""
    pairs = read_records(path, "retrieval")
    if max_pairs is not None:
        pairs = pairs[:max_pairs]
    if not pairs:
        raise InputError(f"{path}: no sentence pairs; expected RetrievalPair records")
    first: dict[str, int] = {}
    for k, pair in enumerate(pairs, start=1):
        if pair.id in first:
            raise InputError(
                f"{path}: record {k}: pair id {pair.id!r} already on record {first[pair.id]}; "
                "expected each id once"
            )
        first[pair.id] = k
    return pairs


def _files_digest(path: Path) -> list[list[Any]]:
    """Name, size and modification time of ``path``'s files (or of ``path``)."""
    files = [path] if path.is_file() else sorted(p for p in path.iterdir() if p.is_file())
    return [[p.name, p.stat().st_size, p.stat().st_mtime_ns] for p in files]


def _retrieval_work_dir(
    work_dir: PathLike, stats_path: PathLike, fingerprint: Mapping[str, Any]
) -> Path:
    """A set's resume directory (beside the outputs, not among them: Snakemake removes a
    failed job's outputs), emptied when it holds another run's progress."""
    work = Path(work_dir)
    stamp = work / "fingerprint.json"
    text = json.dumps(fingerprint, sort_keys=True, default=str)
    if work.exists() and (not stamp.is_file() or read_json(stamp).get("fingerprint") != text):
        log.warning("%s: progress of another run of %s; starting afresh", work, stats_path)
        shutil.rmtree(work)
    if not stamp.is_file():
        work.mkdir(parents=True, exist_ok=True)
        write_json(stamp, {"fingerprint": text})
    return work


def _bucc_language(
    directory: Path,
    lang: str,
    model: Any,
    tokenizer: Any,
    *,
    layer: int,
    checkpoint_dir: Path | None = None,
    budget_mb: float | None = None,
    **pool: Any,
) -> dict[str, Any]:
    """BUCC 2018 bitext mining of one language as XTREME scores it: the corpora of the
    dev (BUCC's sample) and test (BUCC's training) splits written by ``prepare_task``,
    pooled at ``layer``, mined with the ratio margin (k = 4), the threshold that maximises
    F1 on dev applied to test (:func:`~xlalign.evaluation.tasks.retrieval.bucc_evaluate`)."""
    from xlalign.evaluation.tasks.formats import read_bucc
    from xlalign.evaluation.tasks.retrieval import (
        BatchCheckpoint,
        bucc_evaluate,
        pooled_hidden_states,
    )

    def pooled(texts: list[str], name: str) -> Any:
        ck = None if checkpoint_dir is None else BatchCheckpoint(checkpoint_dir / f"{name}.npz")
        return pooled_hidden_states(
            (model, tokenizer), texts, layers=[layer], checkpoint=ck, **pool
        )[0]

    splits: dict[str, dict[str, Any]] = {}
    for split in ("dev", "test"):
        gold = directory / f"{split}.gold.tsv"
        corpus = read_bucc(
            directory / f"{split}.{lang}.tsv",
            directory / f"{split}.en.tsv",
            gold if gold.is_file() else None,
            lang=lang,
            split=split,
        )
        src_ids, tgt_ids = list(corpus.source), list(corpus.target)
        src_texts = [corpus.source[i] for i in src_ids]
        tgt_texts = [corpus.target[i] for i in tgt_ids]
        splits[split] = {
            "src": pooled(src_texts, f"{split}.source"),
            "tgt": pooled(tgt_texts, f"{split}.target"),
            "src_texts": src_texts,
            "tgt_texts": tgt_texts,
            "src_ids": src_ids,
            "tgt_ids": tgt_ids,
            "gold": corpus.gold or [],
        }
    return bucc_evaluate(splits["dev"], splits["test"], budget_mb=budget_mb)


def default_languages(task: str, configured: Sequence[str]) -> list[str]:
    """Configured test languages minus the training language."""
    info = task_info(task)
    return [lang for lang in configured if lang != info.train_language]
