"""Run a command and record, from the kernel, the I/O and CPU of its whole process tree.

    .venv/bin/python benchmarks/run_io.py --json RUN_IO.json -- make run

Runs the command as a child process, waits for it, and writes (atomically) a JSON with
its exit status, wall seconds and:

* ``io``: the difference of this wrapper's own ``/proc/self/io`` before and after the
  child is reaped. When a process reaps a child, Linux adds the child's I/O counters (and
  the ones the child had collected from its own reaped children) into the parent's, so
  the wrapper's counters then hold the whole tree's: ``make`` -> ``snakemake`` -> every
  job and its subprocesses. ``write_bytes`` is what was sent to (or dirtied for) the
  storage layer; ``wchar`` is what was passed to write()-like calls, page cache and pipes
  included; ``cancelled_write_bytes`` is dirty data that was never written back because
  its file was truncated or deleted first (a temporary deleted before writeback is in
  ``write_bytes`` and again in ``cancelled_write_bytes``: ``write_bytes -
  cancelled_write_bytes`` is the net written);
* ``rusage_children``: ``getrusage(RUSAGE_CHILDREN)`` after the wait: user and system
  CPU seconds of all reaped descendants, and ``max_rss_kib``, the largest resident set
  of any one of them (not a sum).

Checked on Linux (ext4, 2026-11): a child writing 50 MiB and fsyncing it showed in the
parent, once reaped, as ``write_bytes`` 50.0 MiB and ``wchar`` 50.0 MiB; a grandchild
doing the same (started and waited for by the child) as the same 50.0 MiB in the
wrapper; a child writing 50 MiB without fsync and deleting the file at once as
``write_bytes`` 50.0 and ``cancelled_write_bytes`` 50.0 MiB (``write_bytes`` is charged
when the page is dirtied, not at writeback, hence the net figure). On a memory file
system (tmpfs) nothing reaches the storage layer: ``write_bytes`` stays 0, ``wchar``
counts.

Caveat: only waited-for processes count. A daemon that detaches (double fork, reparented
to init) or a process still running when the command exits is not in the figures; none
is expected under ``make run``, where Snakemake's jobs are children of snakemake, a child
of make, all reaped. Processes of other users of the machine are not counted either.
The wrapper reads its counters just before starting the child and just after reaping
it, so its own start-up and the JSON it writes are outside the figures.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

FORMAT = "xlalign-run-io/1"


def read_proc_io(path: str = "/proc/self/io") -> dict[str, int]:
    """The counters of ``/proc/<pid>/io`` as ints (empty where the file is unreadable)."""
    try:
        text = Path(path).read_text()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if value.strip().isdigit():
            out[key.strip()] = int(value)
    return out


def _write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def measure(command: Sequence[str]) -> dict[str, Any]:
    """Run ``command``, wait for it, and return the record (see the module docstring)."""
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    io0 = read_proc_io()
    started = dt.datetime.now(dt.UTC)
    t0 = time.monotonic()
    proc = subprocess.Popen(list(command))
    while True:
        try:
            rc = proc.wait()
            break
        except KeyboardInterrupt:  # the child got the SIGINT too; keep waiting for it
            continue
    wall = time.monotonic() - t0
    io1 = read_proc_io()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    io = {k: io1[k] - io0.get(k, 0) for k in io1}
    return {
        "format": FORMAT,
        "command": list(command),
        "cwd": os.getcwd(),
        "started": started.isoformat(),
        "returncode": rc,
        "wall_s": wall,
        "io": io,
        "io_available": bool(io1),
        "rusage_children": {
            "user_s": ru1.ru_utime - ru0.ru_utime,
            "sys_s": ru1.ru_stime - ru0.ru_stime,
            "max_rss_kib": ru1.ru_maxrss,
        },
    }


def exit_status(returncode: int) -> int:
    """The shell's exit status for a child's return code (128 + signal when killed)."""
    return 128 - returncode if returncode < 0 else returncode


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n", 1)[0],
        usage="%(prog)s --json OUT.json -- COMMAND [ARG ...]",
    )
    ap.add_argument("--json", type=Path, required=True, help="where to write the record")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = ap.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("no command given (put it after --)")
    try:
        rec = measure(command)
    except OSError as exc:
        print(f"run_io: error: cannot run {command[0]!r}: {exc}", file=sys.stderr)
        return 127
    _write_json_atomic(args.json, rec)
    if rec["returncode"] < 0:
        try:
            name = signal.Signals(-rec["returncode"]).name
        except ValueError:
            name = f"signal {-rec['returncode']}"
        print(f"run_io: command killed by {name}", file=sys.stderr)
    return exit_status(rec["returncode"])


if __name__ == "__main__":
    sys.exit(main())
