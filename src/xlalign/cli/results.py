"""``xlalign statistics`` and ``xlalign plots``: the results stage on explicit files."""

from __future__ import annotations

import argparse
from pathlib import Path

from xlalign.cli.common import (
    check_paths,
    fraction,
    input_file,
    nonnegative_int,
    output_dir,
    positive_int,
    report,
)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bli", nargs="*", default=[], type=input_file, help="BLI record JSON files")
    p.add_argument(
        "--runs",
        nargs="*",
        default=[],
        type=input_file,
        help="fine-tuning results ft<seed>.json",
    )
    p.add_argument(
        "--retrieval",
        nargs="*",
        default=[],
        type=input_file,
        help="retrieval results <set>.json",
    )
    p.add_argument("--base-encoder", required=True, help="the original encoder's name")
    p.add_argument("--tasks", nargs="*", default=[], help="task ids in table order")
    p.add_argument("--spaces", nargs="*", help="BLI spaces in table order (default: all)")
    p.add_argument("--bli-retrieval", default="csls", choices=["nn", "csls"])


def add_statistics(sub: argparse._SubParsersAction) -> None:
    """The ``statistics`` command."""
    p = sub.add_parser(
        "statistics",
        help="seeds aggregated and significance against the baselines (Tables 1 and 3)",
    )
    _common(p)
    p.add_argument("--encoders", nargs="+", required=True, help="zero-shot models, row order")
    p.add_argument("--pretrain-runs", nargs="*", default=[], help="pre-training rows")
    p.add_argument("--retrieval-sets", nargs="*", default=[], help="retrieval set ids")
    p.add_argument("--bli-baseline", default="aggregate")
    p.add_argument("--iterations", type=positive_int, default=1000)
    p.add_argument("--seed", type=nonnegative_int, default=0)
    p.add_argument("--alpha", type=fraction, default=0.05)
    p.add_argument("--correction", default="holm", choices=["holm", "benjamini-hochberg", "none"])
    p.add_argument("--output-dir", "-o", required=True, type=output_dir)
    p.set_defaults(func=_cmd_statistics)


def _cmd_statistics(args: argparse.Namespace) -> None:
    from xlalign.reporting.statistics import run_statistics

    out = Path(args.output_dir)
    check_paths(
        inputs=[*args.runs, *args.retrieval, *args.bli],
        outputs=[out / "statistics.md", out / "statistics.json"],
        args=args,
    )
    summary = run_statistics(
        runs=args.runs,
        retrieval=args.retrieval,
        bli=args.bli,
        md_path=out / "statistics.md",
        summary_path=out / "statistics.json",
        encoders=args.encoders,
        base_encoder=args.base_encoder,
        pretrain_runs=args.pretrain_runs,
        tasks=args.tasks,
        retrieval_sets=args.retrieval_sets,
        spaces=args.spaces or sorted({Path(p).parent.name for p in args.bli}),
        bli_baseline=args.bli_baseline,
        bli_retrieval=args.bli_retrieval,
        iterations=args.iterations,
        seed=args.seed,
        alpha=args.alpha,
        correction=args.correction,
    )
    report({"tables": list(summary["tables"]), "output_dir": str(out)}, args)


def add_plots(sub: argparse._SubParsersAction) -> None:
    """The ``plots`` command."""
    p = sub.add_parser("plots", help="the figures (PNG and SVG) from result files")
    _common(p)
    p.add_argument(
        "--pretrain",
        nargs="*",
        default=[],
        type=input_file,
        help="pre-training s<seed>.json files",
    )
    p.add_argument(
        "--learning-curve", type=input_file, help="benchmarks/learning_curve.py's summary JSON"
    )
    p.add_argument("--metric", default="p@1", choices=["p@1", "p@5", "p@10", "mrr"])
    p.add_argument("--output-dir", "-o", required=True, type=output_dir)
    p.set_defaults(func=_cmd_plots)


def _cmd_plots(args: argparse.Namespace) -> None:
    import contextlib
    from pathlib import Path

    from xlalign.core.io import atomic_dir
    from xlalign.reporting.figures import write_figures

    # A new folder is built aside and appears whole (a refused record leaves nothing);
    # an existing one, which may hold other files, is written into.
    new = not Path(args.output_dir).exists()
    with atomic_dir(args.output_dir) if new else contextlib.nullcontext(args.output_dir) as out:
        index = write_figures(
            out_dir=out,
            bli=args.bli,
            runs=args.runs,
            retrieval=args.retrieval,
            pretrain=args.pretrain,
            learning_curve=args.learning_curve,
            spaces=args.spaces,
            base_encoder=args.base_encoder,
            tasks=args.tasks,
            metric=args.metric,
            bli_retrieval=args.bli_retrieval,
        )
    report({"figures": list(index), "output_dir": args.output_dir}, args)
