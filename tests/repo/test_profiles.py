"""Snakemake profiles: consistent, commented, and nothing site-specific outside them."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PROFILES = ROOT / "profiles"
#: Every rule that declares a `gpu` resource.
GPU_RULES = {
    m.group(1)
    for path in (ROOT / "workflow" / "rules").rglob("*.smk")
    for m in re.finditer(r'gpu=job_gpu\("(\w+)"\)', path.read_text(encoding="utf-8"))
}


def _profile(name: str) -> dict:
    return yaml.safe_load((PROFILES / name / "config.yaml").read_text(encoding="utf-8"))


def test_slurm_gpu_is_slurm_plus_gpu_placement_of_the_encoder_rules() -> None:
    slurm, gpu = _profile("slurm"), _profile("slurm-gpu")
    assert slurm["executor"] == "slurm"
    assert {k: v for k, v in gpu.items() if k != "set-resources"} == slurm
    assert set(gpu["set-resources"]) == GPU_RULES
    for rule, res in gpu["set-resources"].items():
        assert res.get("slurm_partition"), rule


def test_workflow_profile_does_not_override_the_cluster_profiles() -> None:
    """profiles/default is applied on top of --profile (per key): it must not undo them."""
    default = _profile("default")
    for name in ("slurm", "slurm-gpu"):
        other = _profile(name)
        clash = {k: (default[k], other[k]) for k in default.keys() & other.keys()}
        assert all(a == b for a, b in clash.values()), (name, clash)


def test_slurm_profile_needs_no_accounting_and_retries_with_attempt() -> None:
    slurm = _profile("slurm")
    assert slurm["slurm-status-command"] == "squeue"
    # squeue only sees a finished job for MinJobAge (default 300 s) seconds.
    assert 3 * slurm["slurm-init-seconds-before-status-checks"] <= 300
    assert slurm["retries"] >= 1 and slurm["latency-wait"] >= 30 and slurm["rerun-incomplete"]


def test_every_profile_entry_is_commented() -> None:
    for name in ("slurm", "slurm-gpu", "laptop"):
        lines = (PROFILES / name / "config.yaml").read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if not re.match(r"^[a-z][\w-]*:", line):
                continue
            block = []  # the comment lines right above, up to a blank line
            j = i - 1
            while j >= 0 and lines[j].strip():
                block.append(lines[j])
                j -= 1
            assert "#" in line or any(b.lstrip().startswith("#") for b in block), (
                f"profiles/{name}/config.yaml:{i + 1}: {line!r} has no comment saying why"
            )


def test_nothing_cluster_specific_in_rules_or_config() -> None:
    words = re.compile(r"slurm_\w+|gpu_model|\bconstraint\s*=|\bqos\s*=|--partition")
    files = [*(ROOT / "workflow").rglob("*.smk"), ROOT / "Snakefile", *(ROOT / "config").glob("*")]
    found = [
        f"{p.relative_to(ROOT)}: {m.group(0)}" for p in files for m in words.finditer(p.read_text())
    ]
    assert not found, found


def test_mlflow_store_is_written_only_by_a_local_rule() -> None:
    track = (ROOT / "workflow" / "rules" / "track.smk").read_text(encoding="utf-8")
    assert re.search(r"^localrules:\s*\n\s+track,", track, re.M)
    # No other rule or script opens the store.
    scripts = ROOT / "workflow" / "scripts"
    users = sorted(
        p.name for p in scripts.glob("*.py") if "mlflow" in p.read_text(encoding="utf-8")
    )
    assert users in ([], ["track.py"]), users


def test_laptop_profile_runs_every_multithreaded_rule_on_one_thread() -> None:
    from xlalign.workflow.resources import THREADS

    laptop = _profile("laptop")
    want = {stage: 1 for stage, n in THREADS.items() if n > 1}
    assert laptop["set-threads"] == want  # word_align (eflomal's two directions) keeps 2
    assert "word_align" not in THREADS
    assert "profiles/laptop" in (ROOT / "Makefile").read_text(encoding="utf-8")
