"""What the command modules share: the stats file beside an output, the JSON report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def default_stats_path(output: str) -> str:
    """The stats JSON beside ``output``: its name with the last suffix replaced by ``.json``."""
    p = Path(output)
    return str(p.with_name(p.name.rsplit(".", 1)[0] + ".json"))


def report(stats: dict, args: argparse.Namespace) -> None:
    """Print ``stats`` as JSON on stdout, unless ``-q``."""
    if not args.quiet:
        json.dump(stats, sys.stdout, indent=2, sort_keys=True, ensure_ascii=False)
        sys.stdout.write("\n")
