"""Fixtures shared across test modules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def embedded_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole embedded default (config/config.yaml) run locally from nothing, once.

    ~15-20 min on 2 idle cores. test_embedded_default checks it; test_slurm re-runs a
    slice of it on a real Slurm and compares.
    """
    from test_workflow import snakemake

    # For working on the tests that use it: XLALIGN_EMBEDDED_RUN=<a checkout where `make
    # run` finished> reuses that run instead (never set in CI).
    reuse = os.environ.get("XLALIGN_EMBEDDED_RUN")
    if reuse:
        return Path(reuse).resolve()
    work = tmp_path_factory.mktemp("embedded")
    snakemake(work, "--cores", "2", "all", timeout=3600)
    return work
