"""Mapping commands: VecMap (``map``), dictionary induction (``induce``) and
``split-dictionary``."""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from xlalign.cli.common import (
    add_space_reading,
    check_paths,
    fraction,
    input_file,
    input_space,
    nonnegative_int,
    output_dir,
    output_file,
    positive_int,
    report,
    space_reading,
    space_sides,
)
from xlalign.core.errors import ConfigError
from xlalign.core.io import write_json


def _options(pairs: list[str] | None) -> dict:
    """``key=value`` pairs (values parsed as YAML scalars) from repeated ``--option``."""
    out: dict = {}
    for item in pairs or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--option {item!r}: expected key=value")
        out[key.strip()] = yaml.safe_load(value)
    return out


def _recipe(name: str) -> str:
    """A VecMap preset name (``semi_supervised`` spelled either way)."""
    from xlalign.mapping.recipes import RECIPES

    if name.replace("_", "-") not in RECIPES:
        raise argparse.ArgumentTypeError(
            f"unknown recipe {name!r}; expected one of {', '.join(sorted(RECIPES))}"
        )
    return name


def add_map(sub: argparse._SubParsersAction) -> None:
    """The ``map`` command."""
    p = sub.add_parser(
        "map",
        help="VecMap: map two embedding spaces into a shared one (map_embeddings.py style)",
    )
    p.add_argument(
        "src", type=input_space, help="source embeddings (.vec, .vec.gz or .npy with .vocab.txt)"
    )
    p.add_argument("trg", type=input_space, help="target embeddings")
    p.add_argument("src_out", type=output_file, help="mapped source embeddings (.vec)")
    p.add_argument("trg_out", type=output_file, help="mapped target embeddings (.vec)")
    p.add_argument(
        "--recipe",
        default="supervised",
        type=_recipe,
        help="supervised, semi-supervised, identical, unsupervised (= acl2018), aaai2018, "
        "acl2017 or orthogonal: the public tool's presets",
    )
    p.add_argument(
        "--dictionary",
        "-d",
        type=input_file,
        help="'source target' pairs (supervised, semi-supervised)",
    )
    p.add_argument(
        "--option", action="append", metavar="KEY=VALUE", help="override a recipe option"
    )
    p.add_argument(
        "--hub",
        action="store_true",
        help="keep the target in its own (normalised) space and express the source in it "
        "(the workflow's hub space; cosine BLI of these outputs is VecMap's only for "
        "orthogonal recipes)",
    )
    p.add_argument("--max-words", type=positive_int, help="read only the most frequent rows")
    add_space_reading(p)
    p.add_argument("--seed", type=nonnegative_int, default=0)
    p.add_argument("--stats", type=output_file, help="write the mapping's stats JSON here")
    p.add_argument("--device", help="torch device (default: cuda if available, else cpu)")
    p.set_defaults(func=_cmd_map)


def _cmd_map(args: argparse.Namespace) -> None:
    from xlalign.mapping.hub import map_pair

    check_paths(
        inputs=[*space_sides(args.src), *space_sides(args.trg), args.dictionary],
        outputs=[args.src_out, args.trg_out, args.stats],
        args=args,
    )
    stats = map_pair(
        src=args.src,
        trg=args.trg,
        src_out=args.src_out,
        trg_out=args.trg_out,
        dictionary=args.dictionary,
        recipe=args.recipe,
        options=_options(args.option),
        seed=args.seed,
        hub=args.hub,
        max_words=args.max_words,
        stats_path=args.stats,
        device=args.device,
        reading=space_reading(args),
    )
    report(stats, args)


def add_induce(sub: argparse._SubParsersAction) -> None:
    """The ``induce`` command."""
    p = sub.add_parser(
        "induce", help="induce a dictionary from two aligned spaces (CSLS, mutual NN)"
    )
    p.add_argument("src", type=input_space)
    p.add_argument("trg", type=input_space)
    p.add_argument("--output", "-o", required=True, type=output_file, help="MUSE-format dictionary")
    p.add_argument("--retrieval", choices=["nn", "csls"], default="csls")
    p.add_argument("--csls-k", type=positive_int, default=10)
    p.add_argument("--max-rank", type=positive_int, default=20000, help="most frequent words only")
    p.add_argument("--mode", choices=["mutual", "forward", "union"], default="mutual")
    add_space_reading(p)
    p.add_argument(
        "--stats", type=output_file, help="also write the stats (printed on stdout) as JSON here"
    )
    p.add_argument("--device")
    p.set_defaults(func=_cmd_induce)


def _cmd_induce(args: argparse.Namespace) -> None:
    from xlalign.mapping.induction import induce_dictionary, induction_stats, write_induced
    from xlalign.static.vectors import load_space

    check_paths(
        inputs=[*space_sides(args.src), *space_sides(args.trg)],
        outputs=[args.output, args.stats],
        args=args,
    )
    (sw, sv), s_report = load_space(args.src, **space_reading(args))
    (tw, tv), t_report = load_space(args.trg, **space_reading(args))
    used: dict = {}
    pairs = induce_dictionary(
        sw,
        sv,
        tw,
        tv,
        retrieval=args.retrieval,
        csls_k=args.csls_k,
        max_rank=args.max_rank,
        mode=args.mode,
        device=args.device,
        report=used,
    )
    write_induced(pairs, args.output)
    stats = {
        "retrieval": args.retrieval,
        **used,
        "max_rank": args.max_rank,
        "mode": args.mode,
        **induction_stats(pairs),
        "source": s_report,
        "target": t_report,
    }
    if args.stats:
        write_json(args.stats, stats)
    report(stats, args)


def add_split_dictionary(sub: argparse._SubParsersAction) -> None:
    """The ``split-dictionary`` command."""
    p = sub.add_parser("split-dictionary", help="train/valid/test split with disjoint source words")
    p.add_argument("--lang", required=True)
    p.add_argument("--hub", default="en")
    p.add_argument(
        "--dictionary", action="append", required=True, type=input_file, help="hub-lang pairs"
    )
    p.add_argument(
        "--hub-vocab", required=True, type=input_file, help="vocabulary TSV of the hub language"
    )
    p.add_argument("--vocab", required=True, type=input_file, help="vocabulary TSV of the language")
    p.add_argument("--test", type=input_file, help="a given test dictionary (e.g. MUSE .5000-6500)")
    p.add_argument("--reverse-test", type=input_file, help="a given reverse test dictionary")
    p.add_argument("--output-dir", "-o", required=True, type=output_dir)
    p.add_argument("--test-fraction", type=fraction, default=0.25)
    p.add_argument("--test-max-words", type=nonnegative_int, default=1500)
    p.add_argument("--valid-fraction", type=fraction, default=0.1)
    p.add_argument("--valid-max-words", type=nonnegative_int, default=500)
    p.add_argument("--max-rank", type=positive_int)
    p.add_argument("--seed", type=nonnegative_int, default=0)
    p.add_argument("--overlap", choices=["drop", "error"], default="drop")
    p.set_defaults(func=_cmd_split_dictionary)


def _cmd_split_dictionary(args: argparse.Namespace) -> None:
    from xlalign.dictionaries.split import build_split

    out = Path(args.output_dir)
    parts = {
        "train": "train.txt",
        "valid": "valid.txt",
        "test": "test.txt",
        "reverse_valid": "valid.reverse.txt",
        "reverse_test": "test.reverse.txt",
    }
    check_paths(
        inputs=[*args.dictionary, args.hub_vocab, args.vocab, args.test, args.reverse_test],
        outputs=[*(out / v for v in parts.values()), out / "split.json"],
        args=args,
    )
    stats = build_split(
        language=args.lang,
        hub=args.hub,
        pool=args.dictionary,
        hub_vocab=args.hub_vocab,
        vocab=args.vocab,
        test=args.test,
        reverse_test=args.reverse_test,
        outputs={k: out / v for k, v in parts.items()},
        stats_path=out / "split.json",
        options={
            "test_fraction": args.test_fraction,
            "test_max_words": args.test_max_words,
            "valid_fraction": args.valid_fraction,
            "valid_max_words": args.valid_max_words,
            "max_rank": args.max_rank,
            "seed": args.seed,
            "overlap": args.overlap,
        },
    )
    report(stats, args)
