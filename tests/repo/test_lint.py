"""The tree stays clean: ruff, snakefmt and Snakemake's linter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _run(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff() -> None:
    r = _run(str(BIN / "ruff"), "check", ".")
    assert r.returncode == 0, r.stdout + r.stderr
    r = _run(str(BIN / "ruff"), "format", "--check", ".")
    assert r.returncode == 0, r.stdout + r.stderr


def test_snakefmt() -> None:
    r = _run(str(BIN / "snakefmt"), "--check", ".")
    assert r.returncode == 0, r.stdout + r.stderr


def test_snakemake_lint() -> None:
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}
    r = subprocess.run(
        [str(BIN / "snakemake"), "--lint"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Lints for" not in r.stdout, r.stdout


def test_the_memory_budget_is_no_rule_parameter():
    """memory.block_mb changes no result, so it must not be a rule's param (Snakemake
    re-runs a job whose params changed): the scripts read it from the configuration."""
    rules = Path(__file__).resolve().parents[2] / "workflow" / "rules"
    offenders = [
        f"{smk.name}:{n}"
        for smk in sorted(rules.rglob("*.smk"))
        for n, line in enumerate(smk.read_text().splitlines(), 1)
        if ('["memory"]' in line or "block_mb" in line) and not line.lstrip().startswith("#")
    ]
    assert not offenders, offenders
