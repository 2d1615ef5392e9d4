"""The MLflow UI on a mirrored store, in headless Chromium (issue 27): the summary's
``ui_path`` opens the runs table (not the GenAI traces) with the parents' key metrics as
columns. Skipped without Chromium; takes about a minute (the MLflow server's start)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("mlflow")

from test_tracking_parent import _mirror

from xlalign.core.errors import ToolError
from xlalign.reporting import browser

try:
    CHROMIUM = browser.find_chromium()
except ToolError:
    CHROMIUM = None

#: No calls home: without these, headless Chromium can stall on refused connections.
QUIET = [
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(url: str, proc: subprocess.Popen, timeout: float = 150) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            pytest.fail(f"mlflow server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(1)
    pytest.fail(f"mlflow server: no answer at {url} within {timeout:g} s")


def _dom(url: str) -> str:
    with tempfile.TemporaryDirectory(prefix="xlalign-chromium-") as profile:
        args = browser._base_args(CHROMIUM, Path(profile), 15_000)
        return browser._run([*args, *QUIET, "--window-size=1600,1000", "--dump-dom", url], 180)


@pytest.mark.skipif(CHROMIUM is None, reason="no headless Chromium")
def test_ui_opens_the_runs_table_with_key_metrics(tmp_path: Path) -> None:
    for seed in (1, 2):
        summary = _mirror(tmp_path, seed)
    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mlflow",
            "server",
            "--backend-store-uri",
            f"sqlite:///{tmp_path / 'mlflow.db'}",
            "--default-artifact-root",
            str(tmp_path / "artifacts"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        base = f"http://127.0.0.1:{port}/"
        _wait(base, server)
        dom = _dom(base + summary["ui_path"])
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    # the parents, their key-metric columns and values (zeroshot.e5.avg = (20+65+80)/3)
    assert "test/seed1" in dom and "test/seed2" in dom
    assert "zeroshot.e5.avg" in dom and "zeroshot.e5.pos-gold.accuracy" in dom
    assert "55" in dom
    # the runs table, not the GenAI overview
    assert "matching runs" in dom
    assert "Detect Issues" not in dom
