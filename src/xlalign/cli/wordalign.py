"""Word-alignment commands: eflomal alignment with its dictionary (``align``), ``aer``."""

from __future__ import annotations

import argparse
from pathlib import Path

from xlalign.cli.common import (
    check_paths,
    default_stats_path,
    fraction,
    input_dir,
    input_file,
    nonnegative_float,
    nonnegative_int,
    output_dir,
    output_file,
    positive_float,
    positive_int,
    report,
)
from xlalign.core.io import write_json
from xlalign.wordalign.symmetrize import HEURISTICS


def add_align(sub: argparse._SubParsersAction) -> None:
    """The ``align`` command."""
    p = sub.add_parser("align", help="eflomal word alignment, symmetrised (Pharaoh + word pairs)")
    p.add_argument(
        "corpus", nargs="?", type=input_file, help="a parallel corpus TSV (xlalign parallel)"
    )
    p.add_argument(
        "--source-text", type=input_file, help="or: tokenised source sentences, one per line"
    )
    p.add_argument(
        "--target-text", type=input_file, help="... and the line-aligned target sentences"
    )
    p.add_argument("--output-dir", "-o", required=True, type=output_dir)
    p.add_argument("--model", type=int, choices=[1, 2, 3], default=3)
    p.add_argument("--samplers", type=positive_int, default=3)
    p.add_argument("--iterations", type=nonnegative_int, nargs=3, metavar=("IBM1", "HMM", "FERT"))
    p.add_argument("--rel-iterations", type=positive_float, default=1.0)
    p.add_argument("--null-prior", type=fraction, default=0.2)
    p.add_argument("--priors", type=input_file, help="an eflomal priors file")
    p.add_argument("--chunk-size", type=positive_int, default=200_000)
    p.add_argument(
        "--shared-priors",
        action="store_true",
        help="with several chunks: learn priors on a sample, give them to every chunk",
    )
    p.add_argument(
        "--shared-priors-sample",
        type=positive_int,
        default=200_000,
        help="pairs of that sample (at most --chunk-size)",
    )
    p.add_argument("--seed", type=nonnegative_int, default=0, help="eflomal's seed")
    p.add_argument(
        "--checkpoint-dir", type=output_dir, help="keep finished chunks here; a re-run resumes"
    )
    p.add_argument(
        "--tmpdir", type=input_dir, help="eflomal's temporary files (an existing directory)"
    )
    p.add_argument("--threads", type=positive_int, default=1)
    p.add_argument(
        "--symmetrization",
        default="grow-diag-final-and",
        choices=HEURISTICS,
    )
    p.add_argument("--keep-many-to-many", action="store_true", help="not only 1-to-1 links")
    p.add_argument("--keep-identical", action="store_true", help="keep links of identical words")
    p.add_argument(
        "--dictionary",
        type=output_file,
        help="also write a MUSE dictionary from the link counts",
    )
    p.add_argument("--min-count", type=positive_int, default=3)
    p.add_argument("--min-ratio", type=nonnegative_float, default=0.1)
    p.add_argument(
        "--gold",
        nargs="+",
        type=input_file,
        help="score the dictionary against these MUSE files",
    )
    p.set_defaults(func=_cmd_align)


def _cmd_align(args: argparse.Namespace) -> None:
    import tempfile

    from xlalign.wordalign.eflomal import (
        AlignmentPaths,
        AlignOptions,
        align_corpus,
        corpus_from_token_files,
    )
    from xlalign.wordalign.linkdict import (
        LinkDictOptions,
        dictionary_from_alignment,
        evaluate_against,
    )

    options = AlignOptions(
        model=args.model,
        samplers=args.samplers,
        iterations=tuple(args.iterations) if args.iterations else None,
        rel_iterations=args.rel_iterations,
        null_prior=args.null_prior,
        chunk_size=args.chunk_size,
        shared_priors=args.shared_priors,
        shared_priors_sample=args.shared_priors_sample,
        seed=args.seed,
        symmetrization=args.symmetrization,
        one_to_one=not args.keep_many_to_many,
        drop_identical=not args.keep_identical,
    )
    out = AlignmentPaths.in_dir(args.output_dir)
    inputs = [args.corpus, args.source_text, args.target_text, args.priors, *(args.gold or [])]
    check_paths(
        inputs=inputs,
        outputs=[
            *(out.forward, out.reverse, out.symmetrized, out.pairs, out.stats),
            args.dictionary,
            default_stats_path(args.dictionary) if args.dictionary else None,
            Path(args.output_dir) / "dictionary-eval.json" if args.gold else None,
        ],
        args=args,
    )
    with tempfile.TemporaryDirectory(dir=args.tmpdir) as tmp:
        if args.corpus:
            if args.source_text or args.target_text:
                raise argparse.ArgumentTypeError(
                    "give either CORPUS or --source-text/--target-text, not both"
                )
            corpus = args.corpus
        elif args.source_text and args.target_text:
            corpus = str(Path(tmp) / "corpus.tsv")
            corpus_from_token_files(args.source_text, args.target_text, corpus)
        else:
            raise argparse.ArgumentTypeError(
                "expected CORPUS (a parallel TSV) or --source-text and --target-text"
            )
        stats = align_corpus(
            corpus,
            out,
            options,
            tmpdir=args.tmpdir,
            checkpoint_dir=args.checkpoint_dir,
            priors=args.priors,
            threads=args.threads,
            progress=not args.quiet,
        )
    if args.dictionary:
        stats["dictionary"] = dictionary_from_alignment(
            out.pairs,
            args.dictionary,
            default_stats_path(args.dictionary),
            LinkDictOptions(min_count=args.min_count, min_ratio=args.min_ratio),
        )
        if args.gold:
            refs = {Path(p).stem: p for p in args.gold}
            stats["dictionary"]["evaluation"] = evaluate_against(
                args.dictionary, refs, Path(args.output_dir) / "dictionary-eval.json"
            )
    report(stats, args)


def add_aer(sub: argparse._SubParsersAction) -> None:
    """The ``aer`` command."""
    p = sub.add_parser("aer", help="alignment error rate, precision, recall vs gold links")
    p.add_argument("predicted", type=input_file, help="Pharaoh file, one line per sentence")
    p.add_argument(
        "gold",
        type=input_file,
        help="gold links: Pharaoh (i-j sure, i?j possible) or NAACL format",
    )
    p.add_argument("--format", choices=["auto", "pharaoh", "naacl"], default="auto")
    p.add_argument("--reverse", action="store_true", help="swap i-j of the prediction first")
    p.add_argument("--output", "-o", type=output_file, help="also write the scores as JSON")
    p.set_defaults(func=_cmd_aer)


def _cmd_aer(args: argparse.Namespace) -> None:
    from xlalign.wordalign.aer import score_files

    check_paths(inputs=[args.predicted, args.gold], outputs=[args.output], args=args)
    result = score_files(args.predicted, args.gold, args.format, reverse=args.reverse)
    out = result.as_dict()
    if args.output:
        write_json(args.output, out)
    if args.quiet:
        return
    print(
        f"AER {result.aer:.4f}  precision {result.precision:.4f}  recall {result.recall:.4f}  "
        f"F1 {result.f1:.4f}  ({result.sentences} sentences, {result.predicted} predicted, "
        f"{result.sure} sure, {result.possible} possible links)"
    )
