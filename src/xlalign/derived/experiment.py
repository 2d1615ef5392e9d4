"""001's derived-language experiment, from files to records (what the workflow rules and
``xlalign derived`` call).

* :func:`run_derived_pretrain`: a small BERT from scratch (:mod:`xlalign.encoders.scratch`)
  on English + one derived language, with one pre-training row (MLM, TLM, DICT-MLM,
  ALIGN-MLM) of :mod:`xlalign.pretrain` (same trainer, objectives and checkpoint format as
  the continued pre-training stage). The WordPiece vocabulary is learnt on the natural
  text; a transliterating composition adds the one-to-one copy of every piece
  (:func:`xlalign.derived.vocab.transliterated_vocabulary`), so the derived language has
  its own embedding rows.
* :func:`run_derived_evaluate`: 001's zero-shot (fine-tune on natural, test on derived) and
  supervised (fine-tune and test on derived) scores and Delta = SUP - ZS per task, with the
  alignment score of the pre-trained embeddings (001: share of natural tokens whose
  cosine-nearest derived token is their counterpart) and, by layer, the word alignment
  score and AER of the natural-derived test pairs (exact gold links: the transformation's
  own permutation).
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from xlalign.core.cadence import DEFAULT_INTERVAL_MINUTES
from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, local_model_dir, read_json, write_json
from xlalign.derived.naming import split_run

log = logging.getLogger(__name__)

#: The language code of the derived side in pre-training files and task results.
DERIVED = "xx"


def build_derived_data(
    *,
    spec: str,
    text: PathLike,
    tasks: Mapping[str, Mapping[str, PathLike]],
    task_settings: Mapping[str, Mapping[str, Any]],
    out_dir: PathLike,
    stats_path: PathLike,
    max_paragraphs: int,
    dictionary_fraction: float,
    syntax: Mapping[str, Any],
    seed: int,
    dictionary_fractions: Sequence[float] = (),
    parallel_fractions: Sequence[float] = (),
) -> dict[str, Any]:
    """English and its derived language for ``spec``: ``<out_dir>/text/`` (pre-training
    text, its parallel copy, the dictionary, and the other shares of 001's Tables 1-2)
    and ``<out_dir>/tasks/<task>/`` (``tasks``: task -> {train, dev} English files;
    natural and derived splits, with exact gold links of a tagging task's test pairs),
    parsed by spaCy's English pipeline (loaded once)."""
    from xlalign.derived.data import (
        build_derived_task,
        build_derived_text,
        read_task_inputs,
        task_kind,
    )
    from xlalign.derived.parse import load_parser, parser_info
    from xlalign.derived.transforms import SyntaxParams, parse_spec

    parse_spec(spec)
    params = SyntaxParams.from_mapping(syntax)
    for task, files in sorted(tasks.items()):  # refused before the text is written
        read_task_inputs(
            files["train"],
            files["dev"],
            test_size=int(task_settings.get(task, {}).get("test_size", 200)),
            kind=task_kind(task),
        )
    nlp = load_parser()
    out = Path(out_dir)
    stats: dict[str, Any] = {"spec": spec, "seed": int(seed), "parser": parser_info(nlp)}
    stats["text"] = build_derived_text(
        text,
        out / "text",
        spec=spec,
        seed=int(seed),
        max_paragraphs=int(max_paragraphs),
        dictionary_fraction=float(dictionary_fraction),
        syntax=params,
        nlp=nlp,
        dictionary_fractions=[float(f) for f in dictionary_fractions],
        parallel_fractions=[float(f) for f in parallel_fractions],
    )
    stats["tasks"] = {}
    for task, files in sorted(tasks.items()):
        stats["tasks"][task] = build_derived_task(
            files["train"],
            files["dev"],
            out / "tasks" / task,
            spec=spec,
            seed=int(seed),
            test_size=int(task_settings.get(task, {}).get("test_size", 200)),
            kind=task_kind(task),
            syntax=params,
            nlp=nlp,
        )
    write_json(stats_path, stats)
    return stats


def derived_files(
    data_dir: PathLike,
    *,
    code: str = DERIVED,
    parallel: float | None = None,
    dictionary: float | None = None,
) -> dict[str, Any]:
    """The pre-training inputs of one derived pair, as
    :func:`xlalign.pretrain.run.run_pretrain` reads them: every sentence pair and the base
    dictionary, or the ``parallel`` / ``dictionary`` share's file of 001's Tables 1-2."""
    from xlalign.derived.naming import dictionary_file, parallel_file

    d = Path(data_dir) / "text"
    files = {
        "text": {"en": str(d / "natural.txt"), code: str(d / "derived.txt")},
        "parallel": {f"en-{code}": str(d / parallel_file(parallel))},
        "dictionaries": {code: str(d / dictionary_file(dictionary))},
    }
    for kind, paths in (("parallel", files["parallel"]), ("dictionaries", files["dictionaries"])):
        for path in paths.values():
            if not Path(path).is_file():
                raise InputError(
                    f"{path}: not found ({kind} of the derived data {data_dir}; a share of "
                    "001's Tables 1-2 must be in derived.sweeps when the data are built)"
                )
    return files


def run_derived_pretrain(
    run: str,
    *,
    spec: str,
    data_dir: PathLike,
    output_dir: PathLike,
    stats_path: PathLike,
    work_dir: PathLike,
    vocab_size: int,
    arch: Mapping[str, Any],
    section: Mapping[str, Any],
    seed: int,
    device: str | None = None,
    progress: bool = True,
    gpus: int = 0,
    log_path: PathLike | None = None,
    checkpoint_minutes: float | None = DEFAULT_INTERVAL_MINUTES,
) -> dict[str, Any]:
    """Pre-train a from-scratch model on English + the derived language of ``spec`` with
    run ``run`` (a pre-training row, or a row with its parallel or dictionary share:
    :func:`split_run`); writes the checkpoint to ``output_dir`` and the record to
    ``stats_path`` (with ``shares``: the parallel sentences relative to the MLM sentences,
    0 for a row without TLM, and the dictionary's share of the word types). Resume
    checkpoints every ``checkpoint_minutes`` (``checkpoints.interval_minutes``)."""
    from xlalign.derived.transforms import parse_spec
    from xlalign.derived.vocab import transliterated_vocabulary
    from xlalign.encoders.scratch import ScratchArch, init_encoder, train_tokenizer
    from xlalign.pretrain.recipes import needs
    from xlalign.pretrain.scratch import pretrain_scratch
    from xlalign.pretrain.text import read_paragraphs

    parts = parse_spec(spec)
    row, kind, share = split_run(run)
    files = derived_files(
        data_dir,
        parallel=share if kind == "parallel" else None,
        dictionary=share if kind == "dictionary" else None,
    )
    natural = read_paragraphs(Path(files["text"]["en"]), "en")
    work_dir = Path(work_dir)
    tokenizer = train_tokenizer(natural, vocab_size=int(vocab_size), pre_tokenizer="whitespace")
    natural_vocab = len(tokenizer)
    if "trans" in parts:
        tokenizer = transliterated_vocabulary(tokenizer)
    base = init_encoder(tokenizer, work_dir / "init", arch=ScratchArch(**arch), seed=int(seed))
    record = pretrain_scratch(
        row,
        encoder=base,
        files=files,
        section=section,
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
    reads = needs({"pretrain": {}}, row)
    text_stats = read_json(Path(data_dir) / "text" / "stats.json")
    record.update(
        run=run,
        row=row,
        spec=spec,
        vocabulary={"natural": natural_vocab, "total": len(tokenizer)},
        arch=dict(arch),
        shares={
            "parallel": (share if kind == "parallel" else 1.0) if "parallel" in reads else 0.0,
            "dictionary": (
                (share if kind == "dictionary" else float(text_stats["dictionary_fraction"]))
                if "dictionaries" in reads
                else None
            ),
        },
    )
    write_json(stats_path, record)
    # the job's own directory (the initialised encoder; the trainer's resume state,
    # <work_dir>/train, is gone already): kept only while the job has not succeeded
    shutil.rmtree(work_dir, ignore_errors=True)
    return record


def _metric(result: Mapping[str, Any], lang: str) -> float | None:
    summary = result["summary"]
    if lang == "en":
        return summary.get("english")
    return summary["per_language"].get(lang)


def run_derived_evaluate(
    *,
    model_dir: PathLike,
    model_name: str,
    run: str,
    spec: str,
    tasks: Mapping[str, PathLike],
    task_settings: Mapping[str, Mapping[str, Any]],
    seed: int,
    output: PathLike,
    work_dir: PathLike,
    layers_batch: int = 32,
    pretrain_stats: PathLike | None = None,
    device: str | None = None,
) -> dict[str, Any]:
    """ZS, SUP and Delta per task (``tasks``: task -> the derived task directory of
    :func:`xlalign.derived.data.build_derived_task`), and the alignment analyses of the
    model on the test pairs of the first tagging task (the one with gold links); written
    to ``output``. ``pretrain_stats``: the model's pre-training record, whose row and
    shares (001's Tables 1-2) are copied."""
    from xlalign.evaluation.tasks.run import run_finetune

    work_dir = Path(work_dir)
    out: dict[str, Any] = {
        "model": model_name,
        "run": run,
        "spec": spec,
        "seed": int(seed),
        "tasks": {},
    }
    gold_source = None
    for task, task_dir in sorted(tasks.items()):
        d = Path(task_dir)
        params = dict(task_settings.get(task, {}).get("params") or {})
        runs = {}
        for mode, side in (("zs", "natural"), ("sup", "derived")):
            tests = {DERIVED: d / "derived" / "test.jsonl"}
            if mode == "zs":
                tests["en"] = d / "natural" / "test.jsonl"
            runs[mode] = run_finetune(
                task,
                encoder=model_dir,
                encoder_name=f"{model_name}/{mode}",
                train=d / side / "train.jsonl",
                dev=d / side / "dev.jsonl",
                tests=tests,
                seed=int(seed),
                output_dir=work_dir / task / mode,
                stats_path=work_dir / task / f"{mode}.json",
                work_dir=work_dir / task / f"{mode}.work",
                params=params,
                device=device,
                keep_model=False,
            )
        zs = _metric(runs["zs"], DERIVED)
        sup = _metric(runs["sup"], DERIVED)
        out["tasks"][task] = {
            "metric": runs["zs"]["summary"]["metric"],
            "zs": zs,
            "sup": sup,
            "delta": None if zs is None or sup is None else sup - zs,
            "natural": _metric(runs["zs"], "en"),
            "runs": {m: {k: r[k] for k in ("summary", "params", "data")} for m, r in runs.items()},
        }
        if gold_source is None and (d / "gold.test.pharaoh").is_file():
            gold_source = d
    if pretrain_stats is not None:
        stats = read_json(pretrain_stats)
        out["row"] = stats.get("row", split_run(run)[0])
        out["shares"] = stats.get("shares")
    if gold_source is None:
        log.warning("%s: no tagging task, so no word alignment by layer (it needs gold links)", run)
    out["alignment"] = alignment_analysis(
        model_dir, gold_source, spec=spec, batch_size=layers_batch, device=device
    )
    write_json(output, out)
    return out


def alignment_analysis(
    model_dir: PathLike,
    task_dir: PathLike | None,
    *,
    spec: str,
    batch_size: int = 32,
    device: str | None = None,
    methods: Sequence[str] = ("argmax", "ot"),
) -> dict[str, Any]:
    """001's alignment score of the input embeddings (transliterating compositions only:
    it needs the one-to-one vocabulary), and by layer the word alignment score and the AER
    of word alignments from representations on the natural-derived test pairs of the
    tagging task in ``task_dir`` (None: the embedding score alone)."""
    from transformers import AutoModel, AutoTokenizer

    from xlalign.analysis import alignment_score as al
    from xlalign.analysis import repr_align
    from xlalign.derived.transforms import parse_spec
    from xlalign.derived.vocab import token_pairs
    from xlalign.evaluation.tasks.data import TaggedSentence, read_records
    from xlalign.wordalign.aer import read_gold

    where = local_model_dir(model_dir)
    tokenizer = AutoTokenizer.from_pretrained(where, local_files_only=True)
    model = AutoModel.from_pretrained(where, local_files_only=True)
    out: dict[str, Any] = {}
    if "trans" in parse_spec(spec):
        emb = model.get_input_embeddings().weight.detach().cpu().numpy()
        out["embedding_score"] = al.embedding_alignment_score(emb, token_pairs(tokenizer))
    if task_dir is None:
        return out
    d = Path(task_dir)
    src = [r.tokens for r in read_records(d / "natural" / "test.jsonl", TaggedSentence)]
    tgt = [r.tokens for r in read_records(d / "derived" / "test.jsonl", TaggedSentence)]
    if len(src) != len(tgt):
        raise InputError(f"{d}: natural and derived test sets differ in length")
    gold_path = d / "gold.test.pharaoh"
    gold = read_gold(gold_path)
    s_states = al.layer_states(model, tokenizer, src, batch_size=batch_size, device=device)
    t_states = al.layer_states(model, tokenizer, tgt, batch_size=batch_size, device=device)
    links = [sorted(gold.get(i, (set(), set()))[0]) for i in range(len(src))]
    depth = s_states[0].shape[0]
    out["word_score_by_layer"] = [
        al.contextual_alignment_score(
            [s[layer] for s in s_states], [t[layer] for t in t_states], links
        )
        for layer in range(depth)
    ]
    out["aer_by_layer"] = {
        m: [r.aer for r in rs]
        for m, rs in repr_align.aer_by_layer(s_states, t_states, gold, methods=methods).items()
    }
    return out


def read_evaluations(paths: Sequence[PathLike]) -> list[dict[str, Any]]:
    """The records of :func:`run_derived_evaluate` (an :class:`InputError` names a file
    that is not one)."""
    out = []
    for p in paths:
        rec = read_json(p)
        if "tasks" not in rec or "spec" not in rec:
            raise InputError(f"{p}: not a derived-language evaluation record")
        out.append(rec)
    return out
