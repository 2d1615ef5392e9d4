"""benchmarks/gpu_rehearsal.sh: its CPU smoke mode runs every stage through the shell
wrapper and reports positive rates, MFU only where a peak is known, and a Markdown table."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "gpu_rehearsal.sh"
STAGES = ("teacher", "x2static", "aggregation", "pretrain", "finetune", "retrieval")


def _load() -> ModuleType:
    path = ROOT / "benchmarks" / "gpu_rehearsal.py"
    spec = importlib.util.spec_from_file_location("gpu_rehearsal", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_rehearsal"] = module
    spec.loader.exec_module(module)
    return module


def _run(tmp_path: Path, *args: str) -> tuple[dict, str]:
    out = tmp_path / "rehearsal.json"
    env = {**os.environ, "PYTHON": sys.executable}
    proc = subprocess.run(
        ["bash", str(SCRIPT), "--cpu-smoke", "--budget", "1", "--out", str(out), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text()), proc.stdout


def test_smoke_every_stage_with_peak(tmp_path: Path) -> None:
    data, stdout = _run(tmp_path, "--peak-tflops", "1")
    assert data["meta"]["smoke"] is True
    assert data["meta"]["peak_tflops"] == 1.0
    assert list(data["stages"]) == list(STAGES)
    for name, r in data["stages"].items():
        assert r["tokens_per_s"] > 0 and r["examples_per_s"] > 0, name
        assert r["tokens"] > 0 and r["seconds"] > 0, name
        assert isinstance(r["mfu"], float) and r["mfu"] > 0, name
        # MFU is the FLOPs per token times tokens/s over the given peak (1 TFLOP/s)
        assert r["mfu"] == pytest.approx(r["flops_per_token"] * r["tokens_per_s"] / 1e12)
        assert r["peak_mem_gib"] == "n/a"  # no GPU
        assert r["what"]
        assert f"| {name} |" in stdout
    # training counts three times the forward's FLOPs per token
    pre, teacher = data["stages"]["pretrain"], data["stages"]["retrieval"]
    assert pre["flops_per_token"] == 6 * pre["non_embedding_params"]
    assert teacher["flops_per_token"] == 2 * teacher["non_embedding_params"]


def test_smoke_without_peak_reports_na(tmp_path: Path) -> None:
    data, stdout = _run(tmp_path, "--stages", "pretrain", "retrieval")
    assert list(data["stages"]) == ["pretrain", "retrieval"]
    assert data["meta"]["peak_tflops"] == "n/a"
    for r in data["stages"].values():
        assert r["mfu"] == "n/a"
        assert r["tokens_per_s"] > 0
    assert "| n/a |" in stdout


def test_peak_table_lookup() -> None:
    gr = _load()
    assert gr.peak_for_name("NVIDIA H100 80GB HBM3") == 989.0
    assert gr.peak_for_name("NVIDIA H100 PCIe") == 756.0
    assert gr.peak_for_name("NVIDIA H200") == 989.0
    assert gr.peak_for_name("NVIDIA A100-SXM4-80GB") == 312.0
    assert gr.peak_for_name("NVIDIA A10") == 125.0
    assert gr.peak_for_name("NVIDIA GeForce RTX 4090") == 165.0
    assert gr.peak_for_name("Some Future GPU") is None
