"""Job start and job logs: a job that starts again removes the temporaries a killed earlier
run left beside its outputs (and nothing else); credentials in logged URLs are masked."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

_JOB = """
import sys, time
from types import SimpleNamespace
from xlalign.core.io import atomic_dir
from xlalign.workflow.jobscript import job_logging
out = sys.argv[1]
smk = SimpleNamespace(log=[sys.argv[2]], threads=1, rule="r", wildcards={}, output=[out])
with job_logging(smk), atomic_dir(out) as d:
    (d / "half").write_text("x")
    print("inside", flush=True)
    time.sleep(60)
"""


def test_killed_job_temporaries_removed_when_it_starts_again(tmp_path: Path) -> None:
    from xlalign.workflow.jobscript import job_logging

    out = tmp_path / "results" / "model"
    log = tmp_path / "job.log"
    proc = subprocess.Popen(
        [sys.executable, "-c", _JOB, str(out), str(log)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "inside"
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    left = [n for n in os.listdir(out.parent) if n.startswith(".model.")]
    assert len(left) == 1 and not out.exists()
    other_tmp = out.parent / ".model.json.abcdefgh.tmp"
    other_tmp.write_text("another job's writer, alive")

    smk = SimpleNamespace(log=[str(log)], threads=1, rule="r", wildcards={}, output=[str(out)])
    with job_logging(smk):
        assert sorted(os.listdir(out.parent)) == [other_tmp.name]
    text = log.read_text()
    assert f"removed {out.parent / left[0]}" in text


def test_job_without_outputs(tmp_path: Path) -> None:
    from xlalign.workflow.jobscript import job_logging

    smk = SimpleNamespace(log=[str(tmp_path / "job.log")], threads=1, rule="r", wildcards={})
    with job_logging(smk) as log:
        log.info("fine")
    assert "fine" in (tmp_path / "job.log").read_text()


def test_job_log_masks_credentials_in_urls(tmp_path: Path) -> None:
    import logging

    import pytest

    from xlalign.workflow.jobscript import job_logging

    smk = SimpleNamespace(log=[str(tmp_path / "job.log")], threads=1, rule="r", wildcards={})
    with pytest.raises(RuntimeError), job_logging(smk) as log:
        log.info("fetching https://bob:pw123@h/x?token=tok456&lang=de")
        logging.getLogger("urllib3").warning('"GET /x?X-Amz-Signature=sig789 HTTP/1.1" 200')
        raise RuntimeError("failed: https://h/y?api_key=key000")
    text = (tmp_path / "job.log").read_text()
    for secret in ("pw123", "tok456", "sig789", "key000"):
        assert secret not in text
    assert "https://bob:***@h/x?token=***&lang=de" in text
