"""Resource commands: a resumable, checksummed ``download`` (or a Hub model)."""

from __future__ import annotations

import argparse

from xlalign.cli.common import check_arg, nonnegative_int, output_dir, output_file


def add_download(sub: argparse._SubParsersAction) -> None:
    """The ``download`` command."""
    p = sub.add_parser("download", help="resumable, checksummed download (or a Hub model)")
    p.add_argument("url", help="URL, or a Hub model id with --huggingface")
    p.add_argument("output", help="a file, or with --huggingface a directory")
    p.add_argument("--sha256")
    p.add_argument("--retries", type=nonnegative_int, default=5)
    p.add_argument("--huggingface", action="store_true")
    p.add_argument("--revision", default="main")
    p.set_defaults(func=_cmd_download)


def _cmd_download(args: argparse.Namespace) -> None:
    from xlalign.resources.download import download, download_huggingface_model

    check_arg("output", output_dir if args.huggingface else output_file, args.output)
    if args.huggingface:
        download_huggingface_model(args.url, args.output, revision=args.revision)
    else:
        download(args.url, args.output, sha256=args.sha256, retries=args.retries)
    print(args.output)
