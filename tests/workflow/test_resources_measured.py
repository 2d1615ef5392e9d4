"""The job-size formulas of xlalign.workflow.resources pinned to measurement (issue 28).

``benchmarks/measured/scaling.json`` holds the points benchmarks/scaling.py measured (one
CPU thread; the run and its machine are in benchmarks/measured/README.md). Re-analysed
here with today's formulas, every estimate that is compared like for like with its
projection at config/paper.yaml's size must lie within a factor of 2 of it: a change to a
rate or a formula that moves an estimate further fails this test until the benchmark is
re-run and the change justified by it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import scaling  # noqa: E402

MEASURED = ROOT / "benchmarks" / "measured" / "scaling.json"


@pytest.fixture(scope="module")
def analysed() -> list[dict]:
    cfg = scaling.paper_config()
    return [
        scaling.analyse(scaling.STAGES[old["stage"]], old["points"], cfg)
        for old in json.loads(MEASURED.read_text())
    ]


def test_every_stage_was_measured_at_three_sizes_over_10x(analysed):
    assert {r["stage"] for r in analysed} == set(scaling.STAGES)
    for res in analysed:
        sizes = [p["size"] for p in res["points"]]
        assert len(sizes) >= 3 and max(sizes) >= 10 * min(sizes), res["stage"]


def test_estimates_within_2x_of_the_projections(analysed):
    compared, off = 0, []
    for res in analysed:
        for metric, ratio in res["estimate_over_projection"].items():
            if ratio is None:
                continue
            compared += 1
            if not 0.5 <= ratio <= 2.0:
                off.append(f"{res['rule']} {metric}: estimate / projection = {ratio:.2f}")
    assert not off, off
    assert compared >= 9  # time of 7 rules, memory of 2, disk of 2 at the time of writing


def test_the_comparison_would_catch_a_changed_rate(analysed, monkeypatch):
    """Halving the similarity FLOP rate doubles the bli estimate: flagged."""
    from xlalign.workflow import resources

    monkeypatch.setattr(resources, "FLOPS_PER_THREAD", resources.FLOPS_PER_THREAD / 4)
    cfg = scaling.paper_config()
    (csls,) = [old for old in json.loads(MEASURED.read_text()) if old["stage"] == "csls"]
    ratio = scaling.analyse(scaling.STAGES["csls"], csls["points"], cfg)
    assert ratio["estimate_over_projection"]["seconds"] > 2
