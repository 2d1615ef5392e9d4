"""Real Snakemake runs of the workflow in a temporary working directory, for the e2e tests.

Also the embedded default as the end-to-end tests run it: config/config.yaml with the
override embedded-small.yaml after it (fewer sentences, epochs and pairs; every rule of
`all` still runs, with the same jobs). `make run` keeps the full embedded default.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

#: The default first, the small override after it (README: "to change a few keys ...").
EMBEDDED_CONFIGFILES = (
    ROOT / "config" / "config.yaml",
    Path(__file__).with_name("embedded-small.yaml"),
)
#: Command-line arguments that select them, for every Snakemake run on the embedded run.
EMBEDDED_CONFIG_ARGS = ("--configfile", *map(str, EMBEDDED_CONFIGFILES))
#: The profile `make run` uses on a few cores (one thread per job, jobs side by side).
LAPTOP_PROFILE = ("--profile", str(ROOT / "profiles" / "laptop"))


def _merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``base``, nested mappings merged, as Snakemake merges config files."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


def embedded_config() -> dict[str, Any]:
    """The configuration of the e2e embedded run (before validation fills in defaults)."""
    cfg: dict[str, Any] = {}
    for path in EMBEDDED_CONFIGFILES:
        cfg = _merged(cfg, yaml.safe_load(path.read_text(encoding="utf-8")))
    return cfg


def snakemake(
    workdir: Path, *args: str, check: bool = True, timeout: float = 1200
) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "HF_HUB_OFFLINE": "1"}
    cmd = [str(BIN / "snakemake"), "-s", str(ROOT / "Snakefile"), "--directory", str(workdir)]
    r = subprocess.run(
        [*cmd, *args], capture_output=True, text=True, env=env, timeout=timeout, cwd=workdir
    )
    if check and r.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}")
    return r


def planned_jobs(result: subprocess.CompletedProcess) -> dict[str, int]:
    """Rule -> job count from a dry run's job stats table."""
    out = result.stdout + result.stderr
    if "Nothing to be done" in out:
        return {}
    table = out.split("Job stats:", 1)[1]
    jobs = {}
    for line in table.splitlines()[3:]:
        m = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if not m:
            if jobs:
                break
            continue
        if m.group(1) != "total":
            jobs[m.group(1)] = int(m.group(2))
    return jobs
