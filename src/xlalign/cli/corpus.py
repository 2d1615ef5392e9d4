"""Corpus commands: ``sample`` a language, ``segment`` it, build a ``parallel`` corpus."""

from __future__ import annotations

import argparse
from pathlib import Path

from xlalign.cli.common import (
    PathArg,
    check_paths,
    default_stats_path,
    input_file,
    nonnegative_int,
    output_file,
    positive_float,
    positive_int,
    report,
)
from xlalign.core.languages import TOOLS


def _existing(item: str, path: str) -> None:
    if not path:
        raise argparse.ArgumentTypeError(f"{item!r}: expected a path after ':'")
    if not Path(path).exists():
        raise argparse.ArgumentTypeError(f"{item!r}: {path}: file not found")


def _check_sample_source(item: str) -> None:
    """``TYPE:PATH`` of ``sample --source``: a known type and a path that exists."""
    from xlalign.corpus.sources import SOURCE_TYPES

    kind, sep, path = item.partition(":")
    if not sep or kind not in SOURCE_TYPES:
        raise argparse.ArgumentTypeError(
            f"{item!r}: expected TYPE:PATH with TYPE one of {', '.join(SOURCE_TYPES)}"
        )
    _existing(item, path)


_sample_source = PathArg(_check_sample_source, "TYPE:PATH")

PARALLEL_KINDS = ("units", "lines", "wikimatrix")


def _check_parallel_source(item: str) -> None:
    """``KIND:PATH[,PATH]`` of ``parallel --source``: a known kind and paths that exist."""
    kind, sep, rest = item.partition(":")
    if not sep or kind not in PARALLEL_KINDS:
        raise argparse.ArgumentTypeError(
            f"{item!r}: expected units:HUB.tsv,OTHER.tsv, lines:HUB.txt,OTHER.txt "
            "or wikimatrix:FILE.tsv.gz"
        )
    for path in rest.split(","):
        _existing(item, path)


_parallel_source = PathArg(_check_parallel_source, "KIND:PATH[,PATH]")


def add_sample(sub: argparse._SubParsersAction) -> None:
    """The ``sample`` command."""
    p = sub.add_parser("sample", help="sample up to N sentences (whole paragraphs) of a language")
    p.add_argument("--lang", required=True, help="ISO 639-1 code")
    p.add_argument(
        "--source",
        action="append",
        required=True,
        type=_sample_source,
        metavar="TYPE:PATH",
        help="cc100|wikipedia|text:FILE (one paragraph per line) or bible|libreoffice-help:TSV; "
        "repeatable, read in order",
    )
    p.add_argument("--output", "-o", required=True, type=output_file)
    p.add_argument("--stats", type=output_file, help="stats JSON (default: OUTPUT with .json)")
    p.add_argument("--max-sentences", type=positive_int, default=1_000_000)
    p.add_argument("--seed", type=nonnegative_int, default=0)
    p.add_argument("--strategy", choices=["reservoir", "head"], default="reservoir")
    p.add_argument("--max-paragraphs-scanned", type=positive_int, default=None)
    p.set_defaults(func=_cmd_sample)


def _cmd_sample(args: argparse.Namespace) -> None:
    from xlalign.core.languages import get_language
    from xlalign.corpus.sample import sample_corpus
    from xlalign.corpus.sources import iter_sources

    get_language(args.lang, key="--lang")

    # TYPE:PATH, checked by _sample_source
    specs = [(kind, path) for kind, _, path in (i.partition(":") for i in args.source)]
    stats_path = args.stats or default_stats_path(args.output)
    check_paths(inputs=[p for _, p in specs], outputs=[args.output, stats_path], args=args)
    stats = sample_corpus(
        iter_sources(specs, language=args.lang),
        args.output,
        stats_path,
        language=args.lang,
        max_sentences=args.max_sentences,
        seed=args.seed,
        strategy=args.strategy,
        max_paragraphs_scanned=args.max_paragraphs_scanned,
        sources=[{"type": k, "path": p} for k, p in specs],
        progress=not args.quiet,
    )
    report(stats, args)


def add_segment(sub: argparse._SubParsersAction) -> None:
    """The ``segment`` command."""
    p = sub.add_parser("segment", help="segment, tokenise and filter (paper, Appendix B)")
    p.add_argument("--lang", required=True)
    p.add_argument("--input", "-i", required=True, type=input_file, help="one paragraph per line")
    p.add_argument(
        "--output", "-o", required=True, type=output_file, help="one tokenised sentence per line"
    )
    p.add_argument("--stats", type=output_file, help="stats JSON (default: OUTPUT with .json)")
    p.add_argument("--tool", choices=list(TOOLS), help="default: Appendix B's, ICU outside it")
    p.add_argument("--udpipe-model", help="UDPipe model file (for tool udpipe)")
    p.add_argument("--fallback", choices=["icu"], help="tool when no UDPipe model is given")
    p.add_argument("--min-tokens", type=nonnegative_int, default=7)
    p.add_argument("--min-paragraph-sentences", type=nonnegative_int, default=2)
    p.add_argument("--max-sentences", type=positive_int, default=None)
    p.set_defaults(func=_cmd_segment)


def _cmd_segment(args: argparse.Namespace) -> None:
    from xlalign.core.languages import get_language
    from xlalign.corpus.segment import make_segmenter, segment_file

    get_language(args.lang, key="--lang")
    stats_path = args.stats or default_stats_path(args.output)
    check_paths(inputs=[args.input], outputs=[args.output, stats_path], args=args)
    segmenter, info = make_segmenter(
        args.lang, tool=args.tool, udpipe_model=args.udpipe_model, fallback=args.fallback
    )
    stats = segment_file(
        args.input,
        args.output,
        stats_path,
        args.lang,
        segmenter,
        info,
        min_tokens=args.min_tokens,
        min_paragraph_sentences=args.min_paragraph_sentences,
        max_sentences=args.max_sentences,
        progress=not args.quiet,
    )
    report(stats, args)


def add_parallel(sub: argparse._SubParsersAction) -> None:
    """The ``parallel`` command."""
    p = sub.add_parser("parallel", help="a tokenised parallel corpus (for word alignment)")
    p.add_argument("--src", required=True, help="hub-side language (first file of each source)")
    p.add_argument("--tgt", required=True, help="the other language")
    p.add_argument(
        "--source",
        action="append",
        required=True,
        type=_parallel_source,
        metavar="KIND:PATH[,PATH]",
        help="units:HUB.tsv,OTHER.tsv, lines:HUB.txt,OTHER.txt or wikimatrix:FILE (repeatable)",
    )
    p.add_argument("--output", "-o", required=True, type=output_file, help="the corpus TSV")
    p.add_argument("--stats", type=output_file, help="stats JSON (default: beside the output)")
    p.add_argument("--src-tool", help="segment tool of --src (default: the paper's)")
    p.add_argument("--tgt-tool", help="segment tool of --tgt (default: the paper's)")
    p.add_argument("--src-udpipe-model")
    p.add_argument("--tgt-udpipe-model")
    p.add_argument("--fallback", default="icu", help="tool used when a UDPipe model is missing")
    p.add_argument("--min-score", type=float, help="wikimatrix margin threshold (default 1.04)")
    p.add_argument("--min-tokens", type=nonnegative_int, default=1)
    p.add_argument("--max-tokens", type=positive_int, default=100)
    p.add_argument("--max-ratio", type=positive_float, default=3.0)
    p.add_argument("--keep-duplicates", action="store_true")
    p.add_argument("--max-pairs", type=positive_int)
    p.add_argument("--seed", type=nonnegative_int, default=0)
    p.add_argument("--oversample", type=positive_float, default=1.5)
    p.set_defaults(func=_cmd_parallel)


def _cmd_parallel(args: argparse.Namespace) -> None:
    from xlalign.corpus.parallel import (
        PairFilter,
        build_parallel,
        make_tokeniser,
        sources_from_specs,
    )

    specs = []
    for i, item in enumerate(args.source):
        kind, _, rest = item.partition(":")  # checked by _parallel_source
        paths = rest.split(",")
        specs.append(
            {
                "kind": kind,
                "paths": paths,
                "name": f"{kind}{i}",
                "min_score": args.min_score if kind == "wikimatrix" else None,
            }
        )
    stats_path = args.stats or default_stats_path(args.output)
    check_paths(
        inputs=[p for spec in specs for p in spec["paths"]],
        outputs=[args.output, stats_path],
        args=args,
    )
    tokenisers, tools = {}, {}
    for lang, tool, model in (
        (args.src, args.src_tool, args.src_udpipe_model),
        (args.tgt, args.tgt_tool, args.tgt_udpipe_model),
    ):
        tokenisers[lang], tools[lang] = make_tokeniser(
            lang, tool=tool, udpipe_model=model, fallback=args.fallback
        )
    stats = build_parallel(
        sources_from_specs(specs),
        args.output,
        stats_path,
        src_lang=args.src,
        tgt_lang=args.tgt,
        src_tokenise=tokenisers[args.src],
        tgt_tokenise=tokenisers[args.tgt],
        filters=PairFilter(
            min_tokens=args.min_tokens,
            max_tokens=args.max_tokens,
            max_ratio=args.max_ratio,
            dedupe=not args.keep_duplicates,
        ),
        max_pairs=args.max_pairs,
        seed=args.seed,
        oversample=args.oversample,
        progress=not args.quiet,
        info={"tokenisers": tools},
    )
    report(stats, args)
