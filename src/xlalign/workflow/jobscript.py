"""Glue for Snakemake job scripts: logging into the job's log file, thread limits."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from typing import Any

from xlalign.core import interrupt
from xlalign.core.io import redact_url, remove_stale_temporaries


class _RedactingFormatter(logging.Formatter):
    """Log lines (tracebacks included) with the credentials in URLs and URIs masked."""

    def format(self, record: logging.LogRecord) -> str:
        return redact_url(super().format(record))


@contextlib.contextmanager
def job_logging(smk: Any) -> Iterator[logging.Logger]:
    """Send logging, warnings and stderr (tqdm progress bars) to the job's ``log:`` file.

    Errors are logged with their traceback before being re-raised, so a failed job's log
    says why it failed. SIGTERM (Slurm pre-emption) is handled by
    :mod:`xlalign.core.interrupt`: a long job writes its checkpoint and the script exits
    with status 143, so that the re-run resumes. The temporaries a killed earlier run left
    beside the job's outputs are removed first
    (:func:`xlalign.core.io.remove_stale_temporaries`). Credentials in the URLs of
    logged lines are masked (:func:`xlalign.core.io.redact_url`).
    """
    interrupt.install()
    log_file = str(smk.log[0]) if len(smk.log) else None
    threads = str(getattr(smk, "threads", 1) or 1)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, threads)
    if "torch" in sys.modules:  # imported before the variables were set: tell it directly
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    stream = open(log_file, "a", encoding="utf-8", buffering=1) if log_file else sys.stderr  # noqa: SIM115
    old_stderr = sys.stderr
    sys.stderr = stream
    root = logging.getLogger()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(_RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    logging.captureWarnings(True)
    log = logging.getLogger(f"xlalign.job.{smk.rule}")
    log.info("rule %s, wildcards %s, threads %s", smk.rule, dict(smk.wildcards), threads)
    try:
        for stale in remove_stale_temporaries(_output_paths(smk)):
            log.warning("removed %s, left by an interrupted earlier run of this job", stale)
        yield log
    except interrupt.Preempted as exc:
        log.warning("job %s; a re-run resumes from its checkpoint", exc)
        raise SystemExit(interrupt.EXIT_STATUS) from None
    except BaseException:
        log.exception("job failed")
        raise
    finally:
        root.removeHandler(handler)
        sys.stderr = old_stderr
        if stream is not old_stderr:
            stream.close()


def _output_paths(smk: Any) -> list[str]:
    """The job's output paths: Snakemake's output list, or a namespace of named outputs."""
    output = getattr(smk, "output", ())
    if isinstance(output, str):
        return [output]
    try:
        return [str(p) for p in output]
    except TypeError:  # a plain namespace of named outputs (scripts called by hand, tests)
        return [str(p) for p in vars(output).values()]


def checkpoint_minutes(smk: Any) -> float | None:
    """``checkpoints.interval_minutes`` of the job's configuration.

    Read from the config, not passed as a rule param: a param is a rerun trigger, and a
    researcher who makes the interval shorter mid-run (after a pre-emption) must not
    re-run every finished training job; the interval never changes what a job computes.
    """
    from xlalign.core.cadence import DEFAULT_INTERVAL_MINUTES

    section = (smk.config or {}).get("checkpoints") or {}
    return section.get("interval_minutes", DEFAULT_INTERVAL_MINUTES)
