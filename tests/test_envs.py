"""Conda environments agree with pyproject.toml, and every rule declares what it needs."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


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
