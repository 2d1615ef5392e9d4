"""The exact pins (constraints.txt), the library's ranges (pyproject.toml) and the conda
environments (envs/*.yaml) agree, and every rule declares what it needs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "constraints.txt"
#: Where the conda envs (and the cluster jobs) run: markers are evaluated for Linux.
LINUX = {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"}


def _constraints() -> list[Requirement]:
    reqs = []
    for n, line in enumerate(CONSTRAINTS.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        req = Requirement(line)
        spec = list(req.specifier)
        assert len(spec) == 1 and spec[0].operator == "==" and "*" not in spec[0].version, (
            f"constraints.txt line {n}: {line!r} is not one exact == pin"
        )
        reqs.append(req)
    return reqs


def _pins(env: dict[str, str] | None = None) -> dict[str, str]:
    """Name -> the pinned version that applies where ``env`` (default: this machine)."""
    pins: dict[str, str] = {}
    for req in _constraints():
        if req.marker is None or req.marker.evaluate(env):
            name = canonicalize_name(req.name)
            assert name not in pins, f"constraints.txt: two pins of {name} apply at once"
            pins[name] = next(iter(req.specifier)).version
    return pins


def _pyproject_requirements() -> list[Requirement]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    reqs = list(data["project"]["dependencies"])
    for extra in data["project"].get("optional-dependencies", {}).values():
        reqs += extra
    return [Requirement(r) for r in reqs]


def _env_pins(path: Path) -> dict[str, str]:
    env = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert env["channels"][:1] == ["conda-forge"] and "nodefaults" in env["channels"], path
    pins: dict[str, str] = {}
    for dep in env["dependencies"]:
        items = dep["pip"] if isinstance(dep, dict) else [dep]
        for item in items:
            m = re.match(r"^([A-Za-z0-9_.\-]+)\s*(==|=)\s*([^\s]+)$", item)
            if m:
                pins[canonicalize_name(m.group(1))] = m.group(3)
    return pins


def test_pyproject_has_ranges_that_admit_every_pin() -> None:
    """The library's metadata has ranges, not pins, and each range admits the pinned
    version on every platform the constraints name (e.g. pyicu-wheels on Linux and macOS)."""
    reqs = {canonicalize_name(r.name): r for r in _pyproject_requirements()}
    pinned: dict[str, list[str]] = {}
    for c in _constraints():
        pinned.setdefault(canonicalize_name(c.name), []).append(next(iter(c.specifier)).version)
    assert set(reqs) == set(pinned), (
        f"only in pyproject.toml: {sorted(set(reqs) - set(pinned))}; "
        f"only in constraints.txt: {sorted(set(pinned) - set(reqs))}"
    )
    for name, req in reqs.items():
        assert not any(s.operator in ("==", "===") for s in req.specifier), (
            f"pyproject.toml: {req} is pinned; pins belong in constraints.txt"
        )
        for version in pinned[name]:
            assert req.specifier.contains(Version(version), prereleases=True), (
                f"pyproject.toml: {req} does not admit constraints.txt's {name}=={version}"
            )


def test_python_versions() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    spec = Requirement(f"python{data['project']['requires-python']}").specifier
    for v in ("3.11.0", "3.12.0", "3.13.0"):
        assert spec.contains(v), v
    assert not spec.contains("3.10.14") and not spec.contains("3.14.0")


def test_env_versions_match_constraints() -> None:
    pins = _pins(LINUX)
    envs = sorted((ROOT / "envs").glob("*.yaml"))
    assert envs
    for env in envs:
        for name, version in _env_pins(env).items():
            if name == "python":
                assert version == "3.11", env
                continue
            assert name in pins, f"{env.name}: {name} is not pinned in constraints.txt"
            assert pins[name] == version, f"{env.name}: {name}=={version}, constraints {pins[name]}"


def test_make_installs_with_the_constraints() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^CONSTRAINTS := constraints\.txt$", makefile, flags=re.M)
    assert re.search(r"pip install .*-c \$\(CONSTRAINTS\) -e \"\.\[dev\]\"", makefile)


def test_torch_pinned_to_cpu_wheel_version() -> None:
    assert _pins()["torch"] == "2.13.0"


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
