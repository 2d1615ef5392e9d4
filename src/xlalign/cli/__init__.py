"""``xlalign <command>``: the library's stages outside Snakemake.

Each command runs the same function the workflow's job runs, on explicit files, the way
VecMap and MUSE users run their scripts.
"""

from __future__ import annotations

import argparse
import logging
import sys

from xlalign.cli import (
    analyses,
    config,
    corpus,
    evaluation,
    mapping,
    pretrain,
    resources,
    results,
    static,
    wordalign,
    zeroshot,
)
from xlalign.cli.static import x2static_job
from xlalign.core.errors import XlalignError

__all__ = ["build_parser", "main", "x2static_job"]


def build_parser() -> argparse.ArgumentParser:
    """The ``xlalign`` parser: one subcommand per stage, each from its command module."""
    parser = argparse.ArgumentParser(prog="xlalign", description=__doc__)
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress, no report")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (
        corpus.add_sample,
        corpus.add_segment,
        static.add_extract,
        static.add_x2static,
        mapping.add_map,
        evaluation.add_bli,
        mapping.add_induce,
        evaluation.add_wordsim,
        mapping.add_split_dictionary,
        evaluation.add_tables,
        corpus.add_parallel,
        wordalign.add_align,
        wordalign.add_aer,
        zeroshot.add_finetune,
        zeroshot.add_retrieve,
        pretrain.add_pretrain,
        results.add_statistics,
        results.add_plots,
        analyses.add_derive,
        analyses.add_derived_pretrain,
        analyses.add_derived_evaluate,
        analyses.add_meta_mono,
        analyses.add_meta_cross,
        analyses.add_analyse,
        analyses.add_eflomal_reference,
        config.add_check_config,
        resources.add_download,
    ):
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``xlalign`` with ``argv`` (default: the command line); 2 on a user error."""
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
