"""``xlalign <command>``: the library's stages outside Snakemake.

Each command runs the same function the workflow's job runs, on explicit files, the way
VecMap and MUSE users run their scripts.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from xlalign.errors import XlalignError


def _cmd_sample(args: argparse.Namespace) -> None:
    from xlalign.sample import sample_corpus
    from xlalign.sources import SOURCE_TYPES, iter_sources

    specs = []
    for item in args.source:
        kind, sep, path = item.partition(":")
        if not sep or kind not in SOURCE_TYPES:
            raise XlalignError(
                f"--source {item!r}: expected TYPE:PATH with TYPE one of {', '.join(SOURCE_TYPES)}"
            )
        specs.append((kind, path))
    stats = sample_corpus(
        iter_sources(specs, language=args.lang),
        args.output,
        args.stats or _stats_path(args.output),
        language=args.lang,
        max_sentences=args.max_sentences,
        seed=args.seed,
        strategy=args.strategy,
        max_paragraphs_scanned=args.max_paragraphs_scanned,
        sources=[{"type": k, "path": p} for k, p in specs],
        progress=not args.quiet,
    )
    _report(stats, args)


def _cmd_segment(args: argparse.Namespace) -> None:
    from xlalign.languages import get_language
    from xlalign.segment import make_segmenter, segment_file

    get_language(args.lang, key="--lang")
    segmenter, info = make_segmenter(
        args.lang, tool=args.tool, udpipe_model=args.udpipe_model, fallback=args.fallback
    )
    stats = segment_file(
        args.input,
        args.output,
        args.stats or _stats_path(args.output),
        args.lang,
        segmenter,
        info,
        min_tokens=args.min_tokens,
        min_paragraph_sentences=args.min_paragraph_sentences,
        max_sentences=args.max_sentences,
        progress=not args.quiet,
    )
    _report(stats, args)


def _cmd_check_config(args: argparse.Namespace) -> None:
    from xlalign.config import config_hash, load

    cfg = load(args.configfile)
    if args.show:
        json.dump(cfg, sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
    else:
        print(
            f"{args.configfile}: valid ({len(cfg['languages'])} languages, "
            f"{len(cfg['seeds'])} seeds, config hash {config_hash(cfg)})"
        )


def _cmd_download(args: argparse.Namespace) -> None:
    from xlalign.download import download, download_huggingface_model

    if args.huggingface:
        download_huggingface_model(args.url, args.output, revision=args.revision)
    else:
        download(args.url, args.output, sha256=args.sha256, retries=args.retries)
    print(args.output)


def _stats_path(output: str) -> str:
    p = Path(output)
    return str(p.with_name(p.name.rsplit(".", 1)[0] + ".json"))


def _report(stats: dict, args: argparse.Namespace) -> None:
    if not args.quiet:
        json.dump(stats, sys.stdout, indent=2, sort_keys=True, ensure_ascii=False)
        sys.stdout.write("\n")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="xlalign", description=__doc__)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress, no report")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("sample", help="sample up to N sentences (whole paragraphs) of a language")
    p.add_argument("--lang", required=True, help="ISO 639-1 code")
    p.add_argument(
        "--source",
        action="append",
        required=True,
        metavar="TYPE:PATH",
        help="cc100|wikipedia|text:FILE (one paragraph per line) or bible|libreoffice-help:TSV; "
        "repeatable, read in order",
    )
    p.add_argument("--output", "-o", required=True)
    p.add_argument("--stats", help="stats JSON (default: OUTPUT with .json)")
    p.add_argument("--max-sentences", type=int, default=1_000_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--strategy", choices=["reservoir", "head"], default="reservoir")
    p.add_argument("--max-paragraphs-scanned", type=int, default=None)
    p.set_defaults(func=_cmd_sample)

    p = sub.add_parser("segment", help="segment, tokenise and filter (paper, Appendix B)")
    p.add_argument("--lang", required=True)
    p.add_argument("--input", "-i", required=True, help="one paragraph per line")
    p.add_argument("--output", "-o", required=True, help="one tokenised sentence per line")
    p.add_argument("--stats", help="stats JSON (default: OUTPUT with .json)")
    p.add_argument("--tool", choices=["udpipe", "icu", "icu+jieba", "icu+fugashi"])
    p.add_argument("--udpipe-model", help="UDPipe model file (for tool udpipe)")
    p.add_argument("--fallback", choices=["icu"], help="tool when no UDPipe model is given")
    p.add_argument("--min-tokens", type=int, default=7)
    p.add_argument("--min-paragraph-sentences", type=int, default=2)
    p.add_argument("--max-sentences", type=int, default=None)
    p.set_defaults(func=_cmd_segment)

    p = sub.add_parser("check-config", help="validate a workflow config (defaults filled)")
    p.add_argument("configfile")
    p.add_argument("--show", action="store_true", help="print the validated config as JSON")
    p.set_defaults(func=_cmd_check_config)

    p = sub.add_parser("download", help="resumable, checksummed download (or a Hub model)")
    p.add_argument("url", help="URL, or a Hub model id with --huggingface")
    p.add_argument("output")
    p.add_argument("--sha256")
    p.add_argument("--retries", type=int, default=5)
    p.add_argument("--huggingface", action="store_true")
    p.add_argument("--revision", default="main")
    p.set_defaults(func=_cmd_download)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        args.func(args)
    except XlalignError as exc:
        print(f"xlalign {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
