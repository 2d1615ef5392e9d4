"""benchmarks/run_io.py: the kernel's I/O and CPU counters of a waited-for process tree.

The children write small files (4 MiB) with fsync, so ``write_bytes`` counts them whatever
the writeback timing; the kernel may count more (metadata, journal) but never less.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "run_io.py"
MIB = 2**20


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_io", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["run_io"] = module
    spec.loader.exec_module(module)
    return module


ri = _load()

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/io").is_file(), reason="needs Linux's /proc/self/io"
)

WRITER = """\
import os, subprocess, sys
out, n, depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(f"{out}.{depth}", "wb") as fh:
    fh.write(b"x" * n)
    fh.flush()
    os.fsync(fh.fileno())
if depth > 0:
    subprocess.run([sys.executable, __file__, out, str(n), str(depth - 1)], check=True)
sys.exit(int(os.environ.get("EXIT", "0")))
"""


def _fs_type(path: Path) -> str:
    """The file system type of the mount holding ``path`` (from /proc/self/mounts)."""
    best, kind = "", ""
    for line in Path("/proc/self/mounts").read_text().splitlines():
        fields = line.split()
        mount = fields[1].replace("\\040", " ")
        if str(path).startswith(mount.rstrip("/") + "/") and len(mount) > len(best):
            best, kind = mount, fields[2]
    return kind


def test_child_and_grandchild_writes_are_counted(tmp_path: Path) -> None:
    if _fs_type(tmp_path) in {"tmpfs", "ramfs"}:
        pytest.skip("a memory file system has no storage layer: write_bytes stays 0")
    script = tmp_path / "w.py"
    script.write_text(WRITER)
    out = tmp_path / "rec.json"
    n = 4 * MIB
    cmd = [sys.executable, str(script), str(tmp_path / "f"), str(n), "1"]
    assert ri.main(["--json", str(out), "--", *cmd]) == 0
    rec = json.loads(out.read_text())
    assert rec["format"] == ri.FORMAT and rec["returncode"] == 0 and rec["command"] == cmd
    assert (tmp_path / "f.1").stat().st_size == n and (tmp_path / "f.0").stat().st_size == n
    # the child's and the grandchild's bytes, both reaped into this process's counters
    assert rec["io"]["write_bytes"] >= 2 * n
    assert rec["io"]["wchar"] >= 2 * n
    assert rec["wall_s"] > 0
    assert rec["rusage_children"]["max_rss_kib"] > 0


def test_busy_child_cpu_and_exit_status(tmp_path: Path) -> None:
    out = tmp_path / "rec.json"
    busy = (
        "import time, sys\nt = time.process_time()\n"
        "while time.process_time() - t < 0.3: pass\nsys.exit(3)"
    )
    assert ri.main(["--json", str(out), "--", sys.executable, "-c", busy]) == 3
    rec = json.loads(out.read_text())
    ru = rec["rusage_children"]
    assert rec["returncode"] == 3
    assert ru["user_s"] + ru["sys_s"] >= 0.25


def test_killed_child_and_missing_command(tmp_path: Path) -> None:
    out = tmp_path / "rec.json"
    kill = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    assert ri.main(["--json", str(out), "--", sys.executable, "-c", kill]) == 128 + 15
    assert json.loads(out.read_text())["returncode"] == -15
    missing = tmp_path / "no-such-command"
    assert ri.main(["--json", str(tmp_path / "m.json"), "--", str(missing)]) == 127
    assert not (tmp_path / "m.json").exists()
    with pytest.raises(SystemExit):
        ri.main(["--json", str(out), "--"])


def test_cli_as_a_script(tmp_path: Path) -> None:
    import subprocess

    out = tmp_path / "rec.json"
    cmd = [sys.executable, str(SCRIPT), "--json", str(out), "--", sys.executable, "-c", "pass"]
    assert subprocess.run(cmd, check=False).returncode == 0
    assert json.loads(out.read_text())["returncode"] == 0
