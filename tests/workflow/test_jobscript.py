"""Job-script glue: a job's log gets its messages and its thread count reaches torch."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest


def test_job_logging_writes_the_log_and_sets_torch_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    from xlalign.workflow.jobscript import job_logging

    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.setenv(var, "3")  # as Snakemake's environment would have it
    before = torch.get_num_threads()
    smk = SimpleNamespace(log=[str(tmp_path / "job.log")], threads=3, rule="r", wildcards={"a": 1})
    try:
        with job_logging(smk) as log:
            # torch was imported before the job set its variables: told directly
            assert torch.get_num_threads() == 3
            log.info("inside")
    finally:
        torch.set_num_threads(before)
    text = (tmp_path / "job.log").read_text()
    assert "rule r, wildcards {'a': 1}, threads 3" in text and "inside" in text


def test_job_logging_logs_the_traceback_of_a_failed_job(tmp_path: Path) -> None:
    from xlalign.workflow.jobscript import job_logging

    smk = SimpleNamespace(log=[str(tmp_path / "job.log")], threads=1, rule="r", wildcards={})
    with pytest.raises(ValueError, match="bad input"), job_logging(smk):
        raise ValueError("bad input")
    text = (tmp_path / "job.log").read_text()
    assert "job failed" in text and "ValueError: bad input" in text


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"checkpoints": {"interval_minutes": 2.5}}, 2.5),
        ({"checkpoints": {"interval_minutes": None}}, None),  # SIGTERM only
        ({}, 10.0),
    ],
)
def test_checkpoint_minutes_read_from_the_config(config: dict, expected: float | None) -> None:
    from xlalign.workflow.jobscript import checkpoint_minutes

    assert checkpoint_minutes(SimpleNamespace(config=config)) == expected


def test_the_checkpoint_interval_is_no_rule_param() -> None:
    """A param is a rerun trigger: shortening the interval mid-run (after a pre-emption)
    must not re-run finished training jobs, so no rule passes it; scripts read the config."""
    rules = Path(__file__).resolve().parents[2] / "workflow" / "rules"
    for smk in rules.rglob("*.smk"):
        code = [ln.split("#", 1)[0] for ln in smk.read_text().splitlines()]
        assert not any("interval_minutes" in ln for ln in code), smk
