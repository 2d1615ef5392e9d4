"""Evaluation commands: ``bli``, word similarity (``wordsim``) and the result ``tables``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from xlalign.cli.common import (
    add_space_reading,
    check_paths,
    input_file,
    input_space,
    keyed,
    output_dir,
    output_file,
    positive_int,
    print_json,
    report,
    space_reading,
    space_sides,
    unique_keys,
)
from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import write_json


def add_bli(sub: argparse._SubParsersAction) -> None:
    """The ``bli`` command."""
    p = sub.add_parser("bli", help="bilingual lexicon induction: P@k and MRR, NN and CSLS")
    p.add_argument(
        "src", type=input_space, help="query-side embeddings (already in a shared space)"
    )
    p.add_argument("trg", type=input_space, help="target-side embeddings")
    p.add_argument(
        "--dictionary", "-d", required=True, type=input_file, help="MUSE test dictionary"
    )
    p.add_argument("--retrieval", nargs="+", choices=["nn", "csls"], default=["nn", "csls"])
    p.add_argument("--csls-k", type=positive_int, default=10)
    p.add_argument("--k", type=positive_int, nargs="+", default=[1, 5, 10])
    p.add_argument("--oov", choices=["skip", "miss"], default="skip")
    p.add_argument("--lowercase", action="store_true", help="lowercase the dictionary")
    add_space_reading(p)
    p.add_argument("--output", "-o", type=output_file, help="also write the results JSON here")
    p.add_argument(
        "--pair",
        type=input_file,
        help="a workflow pair file (aligned/.../xx.pair.npz): score in the pair's own mapped "
        "spaces, VecMap's protocol; the other file is then the hub's (normalised) space",
    )
    p.add_argument(
        "--pair-side",
        choices=["src", "trg"],
        default="src",
        help="which side the --pair language is on (default: src)",
    )
    p.add_argument("--device")
    p.set_defaults(func=_cmd_bli)


def _cmd_bli(args: argparse.Namespace) -> None:
    from xlalign.evaluation.bli import evaluate_bli, read_dictionary
    from xlalign.static.vectors import load_space

    check_paths(
        inputs=[*space_sides(args.src), *space_sides(args.trg), args.dictionary, args.pair],
        outputs=[args.output],
        args=args,
    )
    reading = space_reading(args)
    if args.pair:
        from xlalign.mapping.pairs import pair_spaces

        hub_path = args.trg if args.pair_side == "src" else args.src
        hub, hub_report = load_space(hub_path, **reading)
        lang, hub_side, _ = pair_spaces(args.pair, hub)
        (sw, sv), (tw, tv) = (lang, hub_side) if args.pair_side == "src" else (hub_side, lang)
        read = {"trg" if args.pair_side == "src" else "src": hub_report}
    else:
        (sw, sv), s_report = load_space(args.src, **reading)
        (tw, tv), t_report = load_space(args.trg, **reading)
        read = {"src": s_report, "trg": t_report}
    dic = read_dictionary(
        args.dictionary, lowercase=args.lowercase, encoding_errors=args.encoding_errors
    )
    out: dict = {"spaces": read}
    for retrieval in args.retrieval:
        res = _against(
            args.dictionary,
            evaluate_bli,
            sw,
            sv,
            tw,
            tv,
            dic,
            retrieval=retrieval,
            csls_k=args.csls_k,
            ks=tuple(args.k),
            oov=args.oov,
            device=args.device,
        )
        out[retrieval] = res.as_dict()
    if args.output:
        write_json(args.output, out)
    print_json(out)


def add_wordsim(sub: argparse._SubParsersAction) -> None:
    """The ``wordsim`` command."""
    p = sub.add_parser("wordsim", help="word similarity (SemEval-2017 Task 2, SimLex, WordSim)")
    p.add_argument(
        "--space",
        action="append",
        required=True,
        type=keyed(input_space),
        metavar="LANG=PATH",
        help="repeatable",
    )
    p.add_argument(
        "--dataset",
        action="append",
        type=input_file,
        help="a similarity file (SimLex/WS353/RG/MEN)",
    )
    p.add_argument("--semeval", type=input_file, help="the SemEval-2017 Task 2 zip")
    p.add_argument(
        "--compose",
        action="store_true",
        help="stand in the mean of its words' vectors for a multiword entry not in the "
        "vocabulary (labels become <dataset>-composed)",
    )
    p.add_argument("--name", default="space", help="the space's name in the record")
    add_space_reading(p)
    p.add_argument("--output", "-o", required=True, type=output_file, help="the record JSON")
    p.set_defaults(func=_cmd_wordsim)


def _cmd_wordsim(args: argparse.Namespace) -> None:
    from xlalign.evaluation.wordsim import read_similarity_file, wordsim_datasets, wordsim_record

    spaces = {}
    for item in args.space:
        lang, sep, path = item.partition("=")
        if not sep:
            raise ConfigError(f"--space {item!r}: expected LANG=PATH")
        unique_keys("--space", [*spaces, lang])
        spaces[lang] = path
    check_paths(
        inputs=[
            *(side for path in spaces.values() for side in space_sides(path)),
            *(args.dataset or []),
            args.semeval,
        ],
        outputs=[args.output],
        args=args,
    )
    datasets = [(Path(p).stem, read_similarity_file(p)) for p in args.dataset or []]
    datasets += wordsim_datasets(languages=sorted(spaces), semeval=args.semeval)
    if not datasets:
        if args.semeval:
            raise InputError(
                f"{args.semeval}: no SemEval-2017 Task 2 set with its gold scores for "
                f"{', '.join(sorted(spaces))}; expected the official archive's "
                "<lang>.test.data.txt and <lang>.test.gold.txt"
            )
        raise ConfigError("give --dataset FILE and/or --semeval ZIP")
    record = wordsim_record(
        space_name=args.name,
        seed=0,
        spaces=spaces,
        datasets=datasets,
        out_path=args.output,
        compose=args.compose,
        require_covered=True,
        reading=space_reading(args),
    )
    print_json(record)


def add_tables(sub: argparse._SubParsersAction) -> None:
    """The ``tables`` command."""
    p = sub.add_parser("tables", help="the paper's Tables 1, 2, 5, 6, 7 from result records")
    p.add_argument("--bli", nargs="+", required=True, type=input_file, help="BLI record JSON files")
    p.add_argument(
        "--wordsim", nargs="*", type=input_file, help="word-similarity record JSON files"
    )
    p.add_argument("--spaces", nargs="+", help="spaces in table order (default: all)")
    p.add_argument("--metric", default="p@1", choices=["p@1", "p@5", "p@10", "mrr"])
    p.add_argument("--retrieval", default="csls", choices=["nn", "csls"])
    p.add_argument("--output-dir", "-o", required=True, type=output_dir)
    p.set_defaults(func=_cmd_tables)


def _cmd_tables(args: argparse.Namespace) -> None:
    from xlalign.reporting.tables import load_records, write_tables

    written = write_tables(
        load_records(args.bli, kind="bli"),
        load_records(args.wordsim or [], kind="wordsim"),
        args.output_dir,
        spaces=args.spaces,
        metric=args.metric,
        retrieval=args.retrieval,
    )
    report({"written": written}, args)


def _against(dictionary: str, evaluate: Any, *args: Any, **kwargs: Any) -> Any:
    """``evaluate(*args, **kwargs)``, its refusals naming the ``dictionary`` they are about."""
    try:
        return evaluate(*args, **kwargs)
    except InputError as exc:
        if str(exc).startswith(str(dictionary)):
            raise
        raise InputError(f"{dictionary}: {exc}") from None
