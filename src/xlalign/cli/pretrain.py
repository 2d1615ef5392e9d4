"""The ``pretrain`` command: continued pre-training of an encoder with MLM and alignment
objectives (a named run of the papers' tables, or objectives given one by one)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from xlalign.cli.common import (
    add_checkpoint_minutes,
    check_paths,
    input_dir,
    input_file,
    input_space,
    keyed,
    nonnegative_int,
    output_dir,
    output_file,
    positive_int,
    space_sides,
)
from xlalign.cli.zeroshot import _checked, _lang_files, _overrides
from xlalign.core.errors import ConfigError, InputError


def _two_files(text: str) -> str:
    """``PAIRS_TSV,CORPUS_TSV``: two files that exist."""
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"expected PAIRS_TSV,CORPUS_TSV, got {text!r}")
    for part in parts:
        input_file.check(part)
    return text


def add_pretrain(sub: argparse._SubParsersAction) -> None:
    """The ``pretrain`` command."""
    p = sub.add_parser(
        "pretrain",
        help="continue pre-training an encoder with MLM + alignment objectives (runs: mlm, "
        "x2s-ma-mse, x2s-ma-dcca, fasttext-dcca, align-mlm, dict-mlm, tlm, l2-align, "
        "contrastive-weak, contrastive-strong, linear-map)",
    )
    p.add_argument("run", nargs="?", help="a run (row) of xlalign.pretrain.recipes")
    p.add_argument("encoder", nargs="?", type=input_dir, help="Hugging Face checkpoint directory")
    p.add_argument("--output-dir", "-o", type=output_dir, help="the new checkpoint directory")
    p.add_argument(
        "--text",
        nargs="+",
        default=[],
        type=keyed(input_file),
        metavar="LANG=FILE",
        help="MLM text per language (one paragraph per line)",
    )
    p.add_argument(
        "--static",
        nargs="+",
        default=[],
        type=keyed(lambda stem: input_space.check(stem + ".npy"), key="LANG"),
        metavar="LANG=STEM",
        help="static space per language (STEM.npy + STEM.vocab.txt)",
    )
    p.add_argument(
        "--aligned",
        nargs="+",
        default=[],
        type=keyed(_two_files, key="PAIR"),
        metavar="PAIR=PAIRS_TSV,CORPUS_TSV",
        help="word-aligned bitext per language pair (l2-align, contrastive, linear-map)",
    )
    p.add_argument(
        "--parallel",
        nargs="+",
        default=[],
        type=keyed(input_file, key="PAIR"),
        metavar="PAIR=CORPUS_TSV",
        help="bitext per language pair (tlm)",
    )
    p.add_argument(
        "--dictionary",
        nargs="+",
        default=[],
        type=keyed(input_file),
        metavar="LANG=FILE",
        help="bilingual dictionaries hub -> LANG (align-mlm, dict-mlm)",
    )
    p.add_argument("--seed", type=nonnegative_int, default=1, help="pre-training seed")
    p.add_argument(
        "--set",
        nargs="+",
        default=[],
        metavar="KEY=VALUE",
        help="training settings (PretrainParams keys: steps=200 max_length=64 ...)",
    )
    p.add_argument(
        "--objective",
        nargs="+",
        default=[],
        metavar="NAME.KEY=VALUE",
        help="objective settings (gcca.batch_size=128 mlm.batch_size=8 ...)",
    )
    p.add_argument(
        "--alignment-layer",
        type=nonnegative_int,
        help="hidden_states index of the alignment losses",
    )
    p.add_argument("--validation-paragraphs", type=nonnegative_int, default=200)
    p.add_argument(
        "--validation-max-sequences",
        type=positive_int,
        help="keep the first N validation sequences of each language (default: all)",
    )
    p.add_argument("--stats", type=output_file, help="record JSON (default: <output-dir>.json)")
    p.add_argument(
        "--work-dir",
        type=output_dir,
        help="checkpoints to resume from (default: <output-dir>.work)",
    )
    p.add_argument("--device")
    p.add_argument("--precision", choices=["auto", "fp32", "bf16", "fp16"], default="auto")
    add_checkpoint_minutes(p)
    # the spec file of a workflow job's torchrun workers
    p.add_argument("--spec", type=input_file, help=argparse.SUPPRESS)
    p.set_defaults(func=_cmd_pretrain)


def _cmd_pretrain(args: argparse.Namespace) -> None:
    from xlalign.pretrain import recipes
    from xlalign.pretrain.run import run_from_spec, run_pretrain
    from xlalign.pretrain.trainer import PretrainParams

    if args.spec:
        run_from_spec(args.spec)
        return
    if not (args.run and args.encoder and args.output_dir):
        raise ConfigError("pretrain: RUN, ENCODER and --output-dir are required")
    objectives: dict[str, dict[str, object]] = {}
    for key, value in _overrides(args.objective).items():
        name, sep, field = key.partition(".")
        if not sep:
            raise InputError(f"--objective: expected NAME.KEY=VALUE, got {key!r}")
        objectives.setdefault(name, {})[field] = value
    cfg = {"pretrain": {"objectives": objectives, "alignment_layer": args.alignment_layer}}
    resolved = recipes.row_objectives(cfg, args.run)
    files: dict[str, object] = {"text": _lang_files(args.text, "--text")}
    if args.static:
        files["static"] = _lang_files(args.static, "--static")
    if args.parallel:
        files["parallel"] = _lang_files(args.parallel, "--parallel")
    if args.dictionary:
        files["dictionaries"] = _lang_files(args.dictionary, "--dictionary")
    if args.aligned:
        aligned = {}
        for pair, both in _lang_files(args.aligned, "--aligned").items():
            parts = both.split(",")
            if len(parts) != 2:
                raise InputError(f"--aligned {pair}: expected PAIRS_TSV,CORPUS_TSV, got {both!r}")
            aligned[pair] = parts
        files["aligned"] = aligned
    out = Path(args.output_dir)
    stats_path = args.stats or f"{out}.json"
    work_dir = args.work_dir or f"{out}.work"
    inputs = [args.encoder]
    for item in [*args.text, *args.parallel, *args.dictionary]:
        inputs.append(item.partition("=")[2])
    for item in args.static:
        inputs += space_sides(item.partition("=")[2] + ".npy")
    for item in args.aligned:
        inputs += item.partition("=")[2].split(",")
    check_paths(inputs=inputs, outputs=[stats_path], replaced_dirs=[out, work_dir], args=args)
    res = run_pretrain(
        args.run,
        encoder=args.encoder,
        objectives=resolved,
        files=files,
        params=_checked(_overrides(args.set), PretrainParams, "--set"),
        seed=args.seed,
        output_dir=out,
        stats_path=stats_path,
        work_dir=work_dir,
        validation_paragraphs=args.validation_paragraphs,
        validation_max_sequences=args.validation_max_sequences,
        device=args.device,
        precision=args.precision,
        checkpoint_minutes=args.checkpoint_minutes,
    )
    summary = {
        "checkpoint": res["checkpoint"],
        "selection": res["selection"],
        "final": res["learning_curve"][-1] if res["learning_curve"] else None,
        "speed": res["speed"],
    }
    json.dump(summary, sys.stdout, indent=2)
    sys.stdout.write("\n")
