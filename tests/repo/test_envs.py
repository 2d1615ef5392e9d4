"""Conda environments agree with pyproject.toml, and every rule declares what it needs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pyproject_pins() -> dict[str, str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    reqs = list(data["project"]["dependencies"])
    for extra in data["project"].get("optional-dependencies", {}).values():
        reqs += extra
    pins = {}
    for req in reqs:
        name, sep, version = req.partition("==")
        assert sep, f"pyproject.toml: {req!r} is not pinned with =="
        pins[_norm(name)] = version.strip()
    return pins


def _env_pins(path: Path) -> dict[str, str]:
    env = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert env["channels"][:1] == ["conda-forge"] and "nodefaults" in env["channels"], path
    pins: dict[str, str] = {}
    for dep in env["dependencies"]:
        items = dep["pip"] if isinstance(dep, dict) else [dep]
        for item in items:
            m = re.match(r"^([A-Za-z0-9_.\-]+)\s*(==|=)\s*([^\s]+)$", item)
            if m:
                pins[_norm(m.group(1))] = m.group(3)
    return pins


def test_env_versions_match_pyproject() -> None:
    pins = _pyproject_pins()
    envs = sorted((ROOT / "envs").glob("*.yaml"))
    assert envs
    for env in envs:
        for name, version in _env_pins(env).items():
            if name == "python":
                assert version == "3.11", env
                continue
            assert name in pins, f"{env.name}: {name} is not a dependency in pyproject.toml"
            assert pins[name] == version, f"{env.name}: {name}=={version}, pyproject {pins[name]}"


def test_torch_pinned_to_cpu_wheel_version() -> None:
    assert _pyproject_pins()["torch"] == "2.13.0"


def test_every_rule_has_conda_log_threads_resources() -> None:
    text = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "workflow/rules").glob("*.smk"))
    rules = re.split(r"\n(?=rule \w+:)", text)
    checked = 0
    for block in rules:
        m = re.match(r"rule (\w+):", block)
        if not m or "script:" not in block:
            continue  # target-only rules
        checked += 1
        for key in ("conda:", "log:", "threads:", "resources:"):
            assert key in block, f"rule {m.group(1)} lacks {key}"
        for env in re.findall(r'f"\{ENVS\}/(\w+\.yaml)"', block):
            assert (ROOT / "envs" / env).is_file(), f"rule {m.group(1)}: envs/{env} missing"
    assert checked >= 10


STUB_CONDA = """#!/bin/sh
case "$*" in
  "info --json") echo '{"conda_prefix": "%s", "platform": "linux-64", "envs_dirs": []}' ;;
  "--version") echo "conda 24.11.0" ;;
  "config --get channel_priority --json") echo '{"get": {"channel_priority": "strict"}}' ;;
  *) echo "stub conda cannot $*" >&2; exit 1 ;;
esac
"""


@pytest.mark.parametrize("flag", ["--sdm=conda", "--use-conda"])
@pytest.mark.parametrize("configfile", [None, "config/paper.yaml"])
def test_conda_dry_run_resolves(tmp_path: Path, flag: str, configfile: str | None) -> None:
    """`snakemake --sdm conda -n all` plans every env of every rule.

    conda-forge is unreachable here, so the conda front end is a stub that answers the
    questions Snakemake asks before a dry run (it would fail any attempt to build).
    """
    bindir = tmp_path / "bin"
    bindir.mkdir()
    conda = bindir / "conda"
    conda.write_text(STUB_CONDA % (tmp_path / "prefix"))
    conda.chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}:{Path(sys.executable).parent}:{os.environ['PATH']}"}
    args = [str(Path(sys.executable).parent / "snakemake"), "-s", str(ROOT / "Snakefile")]
    args += ["--directory", str(tmp_path), flag, "-n", "all"]
    if configfile:
        args += ["--configfile", str(ROOT / configfile)]
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    planned = set(re.findall(r"Conda environment (\S+) will be created", out))
    expected = {"core.yaml", "segment.yaml", "torch.yaml", "wordalign.yaml"}
    assert {Path(p).name for p in planned} == expected, planned
