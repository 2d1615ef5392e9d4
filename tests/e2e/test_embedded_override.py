"""The override of the e2e embedded run shrinks sizes only: the jobs of `all` stay those of
the full embedded default (`make run`), so every rule still runs in test_embedded_default."""

from __future__ import annotations

from pathlib import Path

from snakemake_runner import EMBEDDED_CONFIG_ARGS, planned_jobs, snakemake


def _plan(work: Path, *args: str) -> tuple[dict[str, int], list[str]]:
    """Jobs per rule and every planned output of a dry run of `all` from nothing."""
    r = snakemake(work, "-n", "all", "--cores", "2", *args)
    lines = (r.stdout + r.stderr).splitlines()
    return planned_jobs(r), sorted(s.strip() for s in lines if s.strip().startswith("output:"))


def test_override_keeps_every_job_of_the_default(tmp_path: Path) -> None:
    full, full_outputs = _plan(tmp_path)
    small, small_outputs = _plan(tmp_path, *EMBEDDED_CONFIG_ARGS)
    assert {"teacher", "x2static", "aggregate", "word_align", "bli", "tables"} <= set(full)
    assert small == full
    assert small_outputs == full_outputs
