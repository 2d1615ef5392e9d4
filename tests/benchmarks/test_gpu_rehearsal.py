"""benchmarks/gpu_rehearsal.sh: the GPU rehearsal of the encoder-bound stages, run here in its
CPU smoke mode (tiny sizes, random-weight encoder built offline): every stage reports
positive rates, and the MFU is the stage's FLOPs over the peak it was given."""

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
    spec = importlib.util.spec_from_file_location("gpu_rehearsal", SCRIPT.with_suffix(".py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_rehearsal"] = module
    spec.loader.exec_module(module)
    return module


def _run(tmp_path: Path, *args: str) -> tuple[dict, str]:
    out = tmp_path / "report.json"
    env = {**os.environ, "PYTHON": sys.executable, "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run(
        ["bash", str(SCRIPT), "--cpu-smoke", "--out", str(out), "--workdir", str(tmp_path),
         *args],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text(encoding="utf-8")), proc.stdout


def test_smoke_reports_every_stage(tmp_path: Path) -> None:
    report, stdout = _run(tmp_path, "--peak-tflops", "2")
    assert report["smoke"] is True and report["device"] == "cpu"
    assert report["peak_tflops"] == 2.0
    assert report["body_params"] > report["body_params_truncated"] > 0
    assert list(report["stages"]) == list(STAGES)
    for name, st in report["stages"].items():
        assert "error" not in st, (name, st)
        for key in ("seconds", "tokens", "examples", "tokens_per_s", "examples_per_s"):
            assert st[key] > 0, (name, key, st)
        assert st["flops_per_token"] > 0
        assert st["peak_gpu_mib"] is None  # no GPU: no GPU memory to report
        expected = st["flops_per_token"] * st["tokens_per_s"] / 2e12
        assert st["mfu"] == pytest.approx(expected, rel=1e-9)
        assert st["achieved_tflops"] == pytest.approx(st["mfu"] * 2, rel=1e-9)
        # the table has a row per stage
        assert any(line.startswith(f"| {name} |") for line in stdout.splitlines())
    # training stages count forward and backward (x3) of the whole encoder; the teacher's
    # pass the forward of its truncated layers only
    full, trunc = report["body_params"], report["body_params_truncated"]
    assert report["stages"]["teacher"]["flops_per_token"] == 2 * trunc
    assert report["stages"]["finetune"]["flops_per_token"] == 6 * full
    assert report["stages"]["retrieval"]["flops_per_token"] == 2 * full
    # the teacher encodes the whole corpus; the aggregation the sampled lines only
    assert report["stages"]["aggregation"]["examples"] <= report["stages"]["teacher"]["examples"]
    assert report["stages"]["teacher"]["examples"] == report["sizes"]["sentences"]


def test_time_budget_stops_the_looping_stages(tmp_path: Path) -> None:
    report, _ = _run(
        tmp_path, "--stage-seconds", "0.001", "--sentences", "120",
        "--stages", "teacher", "x2static", "pretrain", "finetune",
    )  # fmt: skip
    assert report["peak_tflops"] is None  # the CPU has no entry in the table
    st = report["stages"]
    assert list(st) == ["teacher", "x2static", "pretrain", "finetune"]
    for name in ("x2static", "pretrain", "finetune"):
        assert st[name].get("stopped") == "time budget", (name, st[name])
        assert st[name]["mfu"] is None
    assert st["pretrain"]["steps"] < report["sizes"]["pretrain_steps"]
    assert st["finetune"]["steps"] == 1


def test_peak_table_lookup() -> None:
    gr = _load()
    assert gr.peak_for_name("NVIDIA H100 80GB HBM3") == 989.0
    assert gr.peak_for_name("NVIDIA H100 PCIe") == 756.0
    assert gr.peak_for_name("NVIDIA H200") == 989.0
    assert gr.peak_for_name("NVIDIA A100-SXM4-80GB") == 312.0  # not the A10's
    assert gr.peak_for_name("NVIDIA A10") == 125.0
    assert gr.peak_for_name("NVIDIA L40S") == 362.0  # not the L40's or L4's
    assert gr.peak_for_name("Tesla V100-SXM2-16GB") == 125.0
    assert gr.peak_for_name("NVIDIA GeForce RTX 4090") == 165.0
    assert gr.peak_for_name("some unknown accelerator") is None
    assert gr.mfu(1e9, 1e5, 100.0) == pytest.approx(1e14 / 1e14)
    assert gr.mfu(1e9, 1e5, None) is None
