"""The ``learning-curve`` command: X2S-M against aggregation by corpus size, from a run's
files (:mod:`xlalign.learning_curve.curve`, the workflow's ``learning_curve`` job)."""

from __future__ import annotations

import argparse
from pathlib import Path

from xlalign.cli.common import (
    check_paths,
    input_dir,
    input_file,
    nonnegative_int,
    output_dir,
    positive_int,
    report,
)


def add_learning_curve(sub: argparse._SubParsersAction) -> None:
    """The ``learning-curve`` command."""
    p = sub.add_parser(
        "learning-curve",
        help="BLI of X2S-M and aggregation at seeded subsets of a language's corpus (no "
        "encoder pass of its own: a view of the teacher cache)",
    )
    p.add_argument("--lang", required=True, help="the language whose corpus is subsampled")
    p.add_argument(
        "--config",
        required=True,
        type=input_file,
        help="the run's configuration: hub, extract, align, evaluate and learning_curve "
        "settings (validated)",
    )
    p.add_argument("--corpus", required=True, type=input_file, help="the segmented corpus")
    p.add_argument(
        "--cache", required=True, type=input_dir, help="its teacher cache (holding meta.json)"
    )
    p.add_argument(
        "--vocab", required=True, type=input_file, help="the vocabulary the cache was built with"
    )
    p.add_argument("--encoder", required=True, type=input_dir)
    for method in ("x2s-m", "aggregate"):
        p.add_argument(
            f"--{method}",
            required=True,
            nargs=2,
            type=input_file,
            metavar=("SPACE", "HUB_SPACE"),
            help=f"the run's {method} spaces (.npy) of the language and of the hub",
        )
    p.add_argument("--train", required=True, type=input_file, help="hub-language training pairs")
    p.add_argument("--test", required=True, type=input_file, help="hub->language test pairs")
    p.add_argument(
        "--test-reverse", required=True, type=input_file, help="language->hub test pairs"
    )
    p.add_argument(
        "--fractions",
        nargs="+",
        type=float,
        help="fractions of the corpus, increasing, in (0, 1) (default: the config's)",
    )
    p.add_argument("--subset-seed", type=nonnegative_int, help="default: learning_curve.seed")
    p.add_argument("--seed", type=nonnegative_int, default=1, help="training / sampling seed")
    p.add_argument("--threads", type=positive_int, default=None)
    p.add_argument(
        "--output-dir",
        "-o",
        required=True,
        type=output_dir,
        help="learning_curve.json/.md/.png/.svg, and sizes/ (each size's scores, to resume)",
    )
    p.set_defaults(func=_cmd_learning_curve)


def _cmd_learning_curve(args: argparse.Namespace) -> None:
    from xlalign import config as xlconfig
    from xlalign.learning_curve.curve import (
        job_from_config,
        run_learning_curve,
        write_learning_curve,
    )

    out = Path(args.output_dir)
    names = ("json", "md", "png", "svg")
    check_paths(
        inputs=[args.corpus, args.cache, args.vocab, *args.x2s_m, *args.aggregate],
        outputs=[out / f"learning_curve.{ext}" for ext in names],
        args=args,
    )
    cfg = xlconfig.load(args.config)
    job = job_from_config(
        cfg,
        language=args.lang,
        seed=args.seed,
        sentences=Path(args.corpus),
        cache_dir=Path(args.cache),
        vocab_path=Path(args.vocab),
        encoder_dir=Path(args.encoder),
        spaces={"x2s-m": Path(args.x2s_m[0]), "aggregate": Path(args.aggregate[0])},
        hub_spaces={"x2s-m": Path(args.x2s_m[1]), "aggregate": Path(args.aggregate[1])},
        train_dictionary=Path(args.train),
        test=(Path(args.test), Path(args.test_reverse)),
        work_dir=out / "sizes",
        fractions=args.fractions,
        subset_seed=args.subset_seed,
        threads=args.threads,
        progress=not args.quiet,
    )
    summary = run_learning_curve(job)
    write_learning_curve(
        summary,
        json_path=out / "learning_curve.json",
        md_path=out / "learning_curve.md",
        figure_stem=out / "learning_curve",
        retrieval=cfg["evaluate"]["tables"]["retrieval"],
    )
    report({k: v for k, v in summary.items() if k not in ("rows", "curves")}, args)
