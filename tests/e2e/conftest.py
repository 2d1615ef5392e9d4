"""Fixtures of the end-to-end tests: the embedded default, run once per session."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from snakemake_runner import EMBEDDED_CONFIG_ARGS, LAPTOP_PROFILE, embedded_config, snakemake


@pytest.fixture(scope="session")
def embedded_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedded default, shrunk by embedded-small.yaml, run locally from nothing, once.

    Every rule of `all` runs for real, with the jobs of the full default; the downloads
    and builds of the embedded resources are the full ones. test_embedded_default checks
    it; test_slurm re-runs a slice of it on a real Slurm and compares.
    """
    # For working on the tests that use it: XLALIGN_EMBEDDED_RUN=<a directory where
    # `snakemake all --configfile config/config.yaml tests/e2e/embedded-small.yaml`
    # finished> reuses that run instead (never set in CI).
    reuse = os.environ.get("XLALIGN_EMBEDDED_RUN")
    if reuse:
        run = Path(reuse).resolve()
        _check_reused(run)
        return run
    work = tmp_path_factory.mktemp("embedded")
    # As `make run`: one thread per job, two jobs side by side (profiles/laptop).
    snakemake(work, *LAPTOP_PROFILE, "--cores", "2", "all", *EMBEDDED_CONFIG_ARGS, timeout=3600)
    return work


def _check_reused(run: Path) -> None:
    """Fail clearly when the reused run is not one of the e2e configuration (e.g. the
    full `make run`): its sizes, and the Slurm slice compared with it, would differ."""
    name = embedded_config()["name"]
    corpus = embedded_config()["corpus"]
    want = (
        corpus.get("per_language", {}).get("en", {}).get("max_sentences", corpus["max_sentences"])
    )
    stats = run / f"results/{name}/corpus/s0/sample/en.json"
    try:
        got = json.loads(stats.read_text())["max_sentences"]
    except (OSError, ValueError, KeyError) as exc:
        pytest.fail(f"XLALIGN_EMBEDDED_RUN={run}: no finished embedded run there ({exc})")
    if got != want:
        pytest.fail(
            f"XLALIGN_EMBEDDED_RUN={run} sampled {got} sentences, the e2e configuration "
            f"{want}: run it with `--configfile config/config.yaml "
            f"tests/e2e/embedded-small.yaml`"
        )
