"""Configuration commands: ``check-config`` validates a workflow config."""

from __future__ import annotations

import argparse
import json
import sys


def add_check_config(sub: argparse._SubParsersAction) -> None:
    """The ``check-config`` command."""
    p = sub.add_parser("check-config", help="validate a workflow config (defaults filled)")
    p.add_argument("configfile")
    p.add_argument("--show", action="store_true", help="print the validated config as JSON")
    p.add_argument(
        "--directory",
        "-d",
        default=None,
        help="resolve the files the config names against this directory, as `snakemake "
        "--directory` does (default: the working directory)",
    )
    p.set_defaults(func=_cmd_check_config)


def _cmd_check_config(args: argparse.Namespace) -> None:
    from xlalign.config import config_hash, load

    cfg = load(args.configfile, base_dir=args.directory)
    if args.show:
        json.dump(cfg, sys.stdout, indent=2, sort_keys=True)
        sys.stdout.write("\n")
    else:
        print(
            f"{args.configfile}: valid ({len(cfg['languages'])} languages, "
            f"{len(cfg['seeds'])} seeds, config hash {config_hash(cfg)})"
        )
