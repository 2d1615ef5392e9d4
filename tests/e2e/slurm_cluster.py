"""A real single-node Slurm (munge, slurmctld, slurmd from Debian) on loopback, for tests.

Usage::

    with single_node_slurm(tmp_path) as cluster:   # or the `slurm` fixture in test_slurm
        subprocess.run(["sbatch", "--wrap", "true"], check=True)
        cluster.jobs()   # [{"id": "1", "comment": ..., "state": "COMPLETED", ...}]

What it does, in order (facts in ../shared/notes/slurm-on-one-machine.md):

1. Installs ``slurmctld slurmd slurm-client munge`` with apt when they are missing (root
   only). :class:`SlurmUnavailable` says why when that is impossible (not root, no apt,
   another Slurm already running here); tests turn it into a skip with the reason shown.
2. Starts ``munged`` as the ``munge`` user with its socket, pid and log in a scratch
   directory, and polls ``munge -n`` until it answers.
3. Writes ``/etc/slurm/slurm.conf`` (the job-step plugin clears ``SLURM_CONF`` before its
   inner ``srun``, so no other place works); an existing file is moved aside and put back.
   State, spool, logs and pid files live in the scratch directory. No accounting: the
   status command must be ``squeue`` and ``MinJobAge`` long enough for it.
4. Starts ``slurmctld`` and ``slurmd`` and waits until ``sinfo`` says ``idle``.

On exit, whatever happened, every daemon it started is stopped by the PID it recorded
(SIGTERM, then SIGKILL after a grace period), and ``slurm.conf`` is restored.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge")
SLURM_CONF = Path("/etc/slurm/slurm.conf")
#: Jobs stay visible to ``squeue`` this long after they end (the profile's status checks
#: need >= 3 x slurm-init-seconds-before-status-checks).
MIN_JOB_AGE = 600


class SlurmUnavailable(RuntimeError):
    """Slurm cannot be had here at all (not root, no apt, a Slurm already running)."""


class SlurmStartError(RuntimeError):
    """Slurm is installed and we may run it, but a daemon did not come up: a real failure."""


@dataclass
class Cluster:
    """A running single-node Slurm: its scratch directory, daemons and node size."""

    root: Path
    cpus: int
    memory_mb: int
    pids: dict[str, int] = field(default_factory=dict)

    def jobs(self) -> list[dict[str, str]]:
        """Every job Slurm still knows (MinJobAge): id, comment (Snakemake puts the rule
        and wildcards there), memory, time limit, state."""
        r = _run(["squeue", "-h", "--states=all", "-o", "%i|%k|%m|%l|%T"])
        r.check_returncode()
        keys = ("id", "comment", "memory", "time", "state")
        return [dict(zip(keys, ln.split("|"), strict=True)) for ln in r.stdout.splitlines() if ln]

    def log(self, daemon: str) -> str:
        path = self.root / "log" / f"{daemon}.log"
        return path.read_text(errors="replace") if path.exists() else ""


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


def _missing_tools() -> list[str]:
    tools = {"slurmctld": "slurmctld", "slurmd": "slurmd", "sbatch": "slurm-client"}
    missing = [pkg for tool, pkg in tools.items() if shutil.which(tool) is None]
    if shutil.which("munged") is None:
        missing.append("munge")
    return missing


def ensure_packages() -> None:
    """Install the Debian packages when missing (~10 s); raise SlurmUnavailable if we can't."""
    missing = _missing_tools()
    if not missing:
        return
    if os.geteuid() != 0:
        raise SlurmUnavailable(
            f"Slurm packages {' '.join(missing)} are not installed and installing them "
            f"needs root (running as uid {os.geteuid()})"
        )
    if shutil.which("apt-get") is None:
        raise SlurmUnavailable(f"Slurm packages {' '.join(missing)} missing and no apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-qq", *PACKAGES]
    r = _run(install, env=env)
    if r.returncode != 0:  # stale package lists: refresh once and retry
        _run(["apt-get", "update", "-qq"], env=env)
        r = _run(install, env=env)
    if r.returncode != 0 or _missing_tools():
        raise SlurmUnavailable(
            f"apt-get install {' '.join(PACKAGES)} failed (exit {r.returncode}): "
            f"{(r.stderr or r.stdout).strip()[-500:]}"
        )


def _running(name: str) -> bool:
    return _run(["pgrep", "-x", name]).returncode == 0


def _node_size() -> tuple[int, int]:
    cpus = os.cpu_count() or 1
    with open("/proc/meminfo") as fh:
        total_kb = int(next(line for line in fh if line.startswith("MemTotal")).split()[1])
    # What slurmd finds (a node advertising more than it has would be drained). Memory is
    # not enforced in this setup; the attempt-2 jobs of the tests need 2 x their mem_mb.
    return cpus, max(1000, total_kb // 1024 - 512)


def write_config(root: Path, munge_socket: Path, cpus: int, memory_mb: int) -> str:
    """The slurm.conf text: one node, one default partition, no accounting."""
    lines = [
        "ClusterName=xlalign-test",
        "SlurmctldHost=localhost",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={munge_socket}",
        "MpiDefault=none",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        "DefMemPerCPU=100",
        "ReturnToService=2",
        f"MinJobAge={MIN_JOB_AGE}",
        "SchedulerType=sched/backfill",
        "SlurmctldPort=6817",
        "SlurmdPort=6818",
        f"StateSaveLocation={root / 'state'}",
        f"SlurmdSpoolDir={root / 'spool'}",
        f"SlurmctldPidFile={root / 'run' / 'slurmctld.pid'}",
        f"SlurmdPidFile={root / 'run' / 'slurmd.pid'}",
        f"SlurmctldLogFile={root / 'log' / 'slurmctld.log'}",
        f"SlurmdLogFile={root / 'log' / 'slurmd.log'}",
        "SlurmctldDebug=info",
        "SlurmdDebug=info",
        f"NodeName=localhost CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN",
        "PartitionName=main Nodes=localhost Default=YES MaxTime=INFINITE State=UP",
    ]
    return "\n".join(lines) + "\n"


def _wait(predicate, timeout: float, what: str, cluster: Cluster | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    logs = ""
    if cluster is not None:
        logs = "\n".join(
            f"--- {d}.log ---\n{cluster.log(d)[-2000:]}" for d in ("slurmctld", "slurmd")
        )
    raise SlurmStartError(f"{what} did not happen within {timeout:.0f} s\n{logs}")


def _pid_from(path: Path, timeout: float = 15) -> int:
    _wait(lambda: path.exists() and path.read_text().strip().isdigit(), timeout, f"{path} written")
    return int(path.read_text().strip())


def _stop(pid: int, grace: float = 10) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        # Our own children must be reaped, or they linger as zombies that answer kill(0).
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def single_node_slurm(root: Path) -> Iterator[Cluster]:
    """Start munge + slurmctld + slurmd under ``root``; stop them all on exit."""
    ensure_packages()
    if os.geteuid() != 0:
        raise SlurmUnavailable(f"starting slurmd needs root (running as uid {os.geteuid()})")
    for daemon in ("slurmctld", "slurmd"):
        if _running(daemon):
            raise SlurmUnavailable(
                f"a {daemon} is already running on this machine; not touching it"
            )
    cpus, memory_mb = _node_size()
    cluster = Cluster(root=root, cpus=cpus, memory_mb=memory_mb)
    for sub in ("state", "spool", "log", "run"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    # munged runs as the `munge` user, who cannot enter pytest's private (0700) tmp dirs.
    munge_dir = Path(tempfile.mkdtemp(prefix="xlalign-munge-"))
    munge_dir.chmod(0o755)
    backup = SLURM_CONF.with_name("slurm.conf.xlalign-backup")
    conf_written = False
    try:
        # munge: socket, pid and log in our scratch dir, owned by the munge user.
        shutil.chown(munge_dir, user="munge", group="munge")
        socket = munge_dir / "munge.socket.2"
        r = _run(
            [
                "runuser", "-u", "munge", "--", "munged",
                f"--socket={socket}",
                f"--pid-file={munge_dir / 'munged.pid'}",
                f"--log-file={munge_dir / 'munged.log'}",
                f"--seed-file={munge_dir / 'munged.seed'}",
                "--force",
            ]
        )  # fmt: skip
        if r.returncode != 0:
            raise SlurmStartError(f"munged did not start: {r.stderr.strip()}")
        cluster.pids["munged"] = _pid_from(munge_dir / "munged.pid")
        _wait(
            lambda: _run(["munge", "-n", f"--socket={socket}"]).returncode == 0,
            15,
            "munge answering",
        )
        SLURM_CONF.parent.mkdir(parents=True, exist_ok=True)
        if SLURM_CONF.exists():
            SLURM_CONF.replace(backup)
        SLURM_CONF.write_text(write_config(root, socket, cpus, memory_mb))
        conf_written = True

        for daemon in ("slurmctld", "slurmd"):
            r = _run([daemon])  # daemonises; pid in its pid file
            if r.returncode != 0:
                raise SlurmStartError(
                    f"{daemon} did not start (exit {r.returncode}): {r.stderr.strip()}\n"
                    f"{cluster.log(daemon)[-2000:]}"
                )
            cluster.pids[daemon] = _pid_from(root / "run" / f"{daemon}.pid")
        _wait(
            lambda: _run(["sinfo", "-h", "-o", "%t"]).stdout.strip() == "idle",
            60,
            "the node becoming idle",
            cluster,
        )
        yield cluster
    finally:
        for name in ("slurmd", "slurmctld", "munged"):
            pid = cluster.pids.get(name)
            if pid:
                _stop(pid)
        shutil.rmtree(munge_dir, ignore_errors=True)
        if conf_written:
            SLURM_CONF.unlink(missing_ok=True)
            if backup.exists():
                backup.replace(SLURM_CONF)
