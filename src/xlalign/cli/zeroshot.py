"""Zero-shot evaluation commands: ``finetune`` (fine-tune on English, test on the other
languages) and ``retrieve`` (sentence retrieval without fine-tuning, every layer)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from xlalign.cli.common import (
    add_checkpoint_minutes,
    check_paths,
    input_dir,
    input_file,
    keyed,
    nonnegative_int,
    optional_input_file,
    output_dir,
    output_file,
    positive_int,
    unique_keys,
)
from xlalign.core.errors import InputError


def _lang_files(items: list[str], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        lang, sep, path = item.partition("=")
        if not sep or not lang or not path:
            raise InputError(f"{what}: expected LANG=FILE, got {item!r}")
        unique_keys(what, [*out, lang])
        out[lang] = path
    return out


def _json_object(text: str) -> dict:
    """A JSON object (``{...}``) given on the command line."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc}): {text!r}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object {{...}}, got {text!r}")
    return value


def add_finetune(sub: argparse._SubParsersAction) -> None:
    """The ``finetune`` command."""
    p = sub.add_parser(
        "finetune",
        help="fine-tune an encoder on English task data and evaluate it zero-shot "
        "(XTREME's recipes: panx, udpos, xnli, pawsx, xquad, mlqa, tydiqa; udparse; "
        "pos-gold, ner-gold)",
    )
    p.add_argument("task", help="task id (xlalign.evaluation.tasks.registry)")
    p.add_argument("encoder", type=input_dir, help="Hugging Face checkpoint directory")
    p.add_argument(
        "--train", required=True, type=input_file, help="English training records (.jsonl)"
    )
    p.add_argument(
        "--dev",
        required=True,
        type=optional_input_file,
        help="English dev records (.jsonl), model selection",
    )
    p.add_argument(
        "--test",
        nargs="+",
        default=[],
        type=keyed(input_file),
        metavar="LANG=FILE",
        help="test records per language",
    )
    p.add_argument("--seed", type=nonnegative_int, default=1, help="fine-tuning seed")
    p.add_argument(
        "--output-dir", "-o", required=True, type=output_dir, help="predictions (and the model)"
    )
    p.add_argument("--stats", type=output_file, help="results JSON (default: <output-dir>.json)")
    p.add_argument(
        "--work-dir",
        type=output_dir,
        help="checkpoints to resume from (default: <output-dir>.work)",
    )
    p.add_argument(
        "--set",
        nargs="+",
        default=[],
        metavar="KEY=VALUE",
        help="protocol overrides (TaskParams keys, values as JSON: epochs=2 learning_rate=3e-5)",
    )
    p.add_argument("--device")
    p.add_argument("--precision", choices=["auto", "fp32", "bf16", "fp16"], default="auto")
    p.add_argument("--no-model", action="store_true", help="keep no fine-tuned checkpoint")
    add_checkpoint_minutes(p)
    p.add_argument(
        "--encoder-name", help="the encoder's name in the results (default: its directory's)"
    )
    p.add_argument(
        "--continual",
        type=_json_object,
        help="continual learning (003): JSON {name, objective, settings, alpha, batch_size, "
        "files} (an alignment loss added with weight alpha to the task loss)",
    )
    p.set_defaults(func=_cmd_finetune)


def _overrides(items: list[str]) -> dict[str, object]:
    out: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise InputError(f"--set: expected KEY=VALUE, got {item!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def _checked(values: dict[str, object], cls: type, option: str) -> dict[str, object]:
    """``values`` for the dataclass ``cls``: every key one of its fields, and a value of
    its declared type where that is ``int``, ``float`` or ``bool``; else a usage error
    naming ``option`` and the key."""
    import dataclasses

    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key, value in values.items():
        if key not in fields:
            raise argparse.ArgumentTypeError(
                f"argument {option}: unknown key {key!r}; expected one of {', '.join(fields)}"
            )
        declared = fields[key].type  # a string under postponed annotations
        name = declared if isinstance(declared, str) else getattr(declared, "__name__", "")
        kind = {"int": int, "float": float, "bool": bool}.get(name)
        if kind is None:
            continue
        ok = isinstance(value, bool) if kind is bool else (
            isinstance(value, int | float) and not isinstance(value, bool)
            and (kind is float or float(value).is_integer())
        )  # fmt: skip
        if not ok:
            what = {bool: "true or false", int: "an integer", float: "a number"}[kind]
            raise argparse.ArgumentTypeError(f"argument {option}: {key}={value!r}: expected {what}")
    return values


def _cmd_finetune(args: argparse.Namespace) -> None:
    from xlalign.evaluation.tasks.base import TaskParams
    from xlalign.evaluation.tasks.finetune import MODEL, RESULTS
    from xlalign.evaluation.tasks.run import run_finetune

    params = _checked(_overrides(args.set), TaskParams, "--set")

    out_dir = Path(args.output_dir)
    tests = _lang_files(args.test, "--test")
    stats_path = args.stats or f"{out_dir}.json"
    work_dir = args.work_dir or f"{out_dir}.work"
    check_paths(
        inputs=[args.encoder, args.train, args.dev or None, *tests.values()],
        outputs=[stats_path, out_dir / RESULTS],
        replaced_dirs=[out_dir / MODEL, work_dir],
        args=args,
    )
    res = run_finetune(
        args.task,
        encoder=args.encoder,
        encoder_name=args.encoder_name or Path(args.encoder).name,
        train=args.train,
        dev=args.dev or None,
        tests=tests,
        seed=args.seed,
        output_dir=out_dir,
        stats_path=stats_path,
        work_dir=work_dir,
        params=params,
        device=args.device,
        precision=args.precision,
        keep_model=not args.no_model,
        continual=args.continual,
        checkpoint_minutes=args.checkpoint_minutes,
    )
    json.dump(res["summary"], sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


def add_retrieve(sub: argparse._SubParsersAction) -> None:
    """The ``retrieve`` command."""
    p = sub.add_parser(
        "retrieve",
        help="sentence retrieval (Tatoeba-style accuracy@1, both directions) at a layer and "
        "across every layer, from one forward pass",
    )
    p.add_argument("set", help="retrieval set id: tatoeba, tatoeba-laser, bucc, udhr, bible")
    p.add_argument("encoder", type=input_dir, help="Hugging Face checkpoint directory")
    p.add_argument(
        "pairs",
        nargs="+",
        type=keyed(input_file),
        metavar="LANG=FILE",
        help="RetrievalPair records (.jsonl)",
    )
    p.add_argument("--output", "-o", required=True, type=output_file, help="results JSON")
    p.add_argument(
        "--predictions-dir",
        type=output_dir,
        help="per-query predictions, one file per language",
    )
    p.add_argument(
        "--layer",
        type=nonnegative_int,
        help="Hugging Face hidden_states index (0 = embeddings); default XTREME's layer "
        "(hidden_states[-12:][7], i.e. 8 of a 12-layer model)",
    )
    p.add_argument("--pooling", choices=["mean", "cls"], default="mean")
    p.add_argument("--exclude-special", action="store_true", help="mean pooling without <s>, </s>")
    p.add_argument("--batch-size", type=positive_int, default=32)
    p.add_argument("--max-length", type=positive_int, default=512)
    p.add_argument("--max-pairs", type=positive_int)
    p.add_argument("--device")
    p.add_argument(
        "--mteb",
        action="store_true",
        help="also score as MTEB scores bitext mining (xx->en, cosine, top-1, accuracy and "
        "weighted F1) with the model's prompt and pooling of its last layer",
    )
    p.add_argument(
        "--mteb-prompt", default="", help='with --mteb: prefixed to every sentence (e5: "query: ")'
    )
    p.add_argument("--mteb-pooling", choices=["mean", "cls"], default="mean")
    p.add_argument(
        "--mteb-exclude-special", action="store_true", help="with --mteb: mean without <s>, </s>"
    )
    p.set_defaults(func=_cmd_retrieve)


def _cmd_retrieve(args: argparse.Namespace) -> None:
    from xlalign.evaluation.tasks.run import run_retrieval

    sets = _lang_files(args.pairs, "pairs")
    check_paths(inputs=[args.encoder, *sets.values()], outputs=[args.output], args=args)
    res = run_retrieval(
        args.set,
        encoder=args.encoder,
        encoder_name=Path(args.encoder).name,
        sets=sets,
        stats_path=args.output,
        predictions_dir=args.predictions_dir,
        layer=args.layer,
        pooling=args.pooling,
        include_special=not args.exclude_special,
        batch_size=args.batch_size,
        max_length=args.max_length,
        max_pairs=args.max_pairs,
        device=args.device,
        mteb={
            "prompt": args.mteb_prompt,
            "pooling": args.mteb_pooling,
            "include_special": not args.mteb_exclude_special,
        }
        if args.mteb
        else None,
    )
    brief: dict[str, Any] = {
        "layer": res["layer"],
        "accuracy": {lang: r.get("accuracy") for lang, r in res["languages"].items()},
    }
    if args.mteb:
        brief["mteb"] = {
            lang: {k: r["mteb"][k] for k in ("accuracy", "f1", "protocol")}
            for lang, r in res["languages"].items()
        }
    json.dump(brief, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")
