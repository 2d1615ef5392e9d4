"""Snakemake dry-run output read as jobs: each job block's rule and its ``key: value`` lines."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def dry_run_jobs(text: str) -> list[tuple[str, dict[str, str]]]:
    """(rule, fields) of each job a dry run lists; fields maps a job line's key (``output``,
    ``wildcards``, ``resources``, ...) to its raw value."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", text):
        m = re.match(r"(?:local)?rule (\w+):", block)
        if m:
            fields = dict(re.findall(r"^\s+(\w+): (.*)$", block, re.M))
            jobs.append((m.group(1), fields))
    return jobs


def key_values(field: str) -> dict[str, str]:
    """``a=1, b=x`` (a job's wildcards or resources line) as a dict."""
    return dict(kv.split("=", 1) for kv in field.split(", ")) if field else {}


def dry_run(cwd: Path, *args: str) -> list[tuple[str, dict[str, str]]]:
    """The jobs of ``snakemake -n <args>`` run on the workflow from ``cwd`` (asserting it
    succeeds, with its output as the message)."""
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}
    r = subprocess.run(
        [str(BIN / "snakemake"), "-s", str(ROOT / "Snakefile"), "-n", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return dry_run_jobs(r.stdout + r.stderr)
