"""Data-parallel training across processes: how many to run, joining them, launching them.

A multi-GPU job runs one process per GPU under ``torchrun`` (:func:`launch` starts it as
``python -m torch.distributed.run --standalone ... -m xlalign.cli <command>``); inside each
worker :func:`init_from_env` joins the process group torchrun describes in the environment
(``WORLD_SIZE``, ``RANK``, ``LOCAL_RANK``, ``MASTER_ADDR``) and yields a
:class:`DistContext`: rank, world size and the worker's device (``cuda:LOCAL_RANK`` with
NCCL, or the CPU with gloo). Outside torchrun the same call yields a single-process context,
so training code has one path for both. When fewer than two GPUs are visible
:func:`world_size_for` falls back to one process (one GPU or the CPU) and says why.
"""

from __future__ import annotations

import codecs
import contextlib
import logging
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as tdist

from xlalign.core.device import resolve_device
from xlalign.core.errors import ToolError
from xlalign.core.io import PathLike

log = logging.getLogger(__name__)

#: What torchrun puts in each worker's environment (all of them must be there).
_TORCHRUN_ENV = ("WORLD_SIZE", "RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
#: Thread-count variables a job sets for itself; its workers share them (see :func:`launch`).
_THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
_TAIL_BYTES = 16_384
#: How torchrun's agent starts its report of a failed worker (a traceback follows).
_WORKER_FAILED = "failed (exitcode:"


def world_size_for(requested_gpus: int, available: int | None = None) -> int:
    """How many processes a job that asks for ``requested_gpus`` GPUs should run.

    ``min(requested, visible)`` when that is at least 2; otherwise 1 (a single process on
    one GPU or on the CPU), logging why when more than one GPU was asked for.
    ``available`` defaults to ``torch.cuda.device_count()``.
    """
    requested = int(requested_gpus or 0)
    if requested <= 1:
        return 1
    visible = torch.cuda.device_count() if available is None else int(available)
    n = min(requested, visible)
    if n >= 2:
        if n < requested:
            log.warning("%d GPUs requested, %d visible: training on %d", requested, visible, n)
        return n
    where = "one device" if visible == 1 else "the CPU"
    log.warning(
        "%d GPUs requested, %d visible: training in a single process on %s",
        requested,
        visible,
        where,
    )
    return 1


def in_torchrun() -> bool:
    """Whether torchrun started this process (as one of its workers, however many)."""
    return all(k in os.environ for k in _TORCHRUN_ENV)


@dataclass(frozen=True)
class DistContext:
    """This process's place in a data-parallel run (rank 0 of 1 when there is none)."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: torch.device = torch.device("cpu")  # noqa: RUF009 (immutable)

    @property
    def is_main(self) -> bool:
        """Rank 0: the process that logs, shows progress and writes files."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        """More than one process takes part."""
        return self.world_size > 1

    def shard(self, n: int) -> tuple[int, int]:
        """This rank's contiguous slice ``[lo, hi)`` of ``n`` items (sizes differ by <= 1)."""
        return n * self.rank // self.world_size, n * (self.rank + 1) // self.world_size

    def barrier(self) -> None:
        """Wait for every rank (nothing to wait for in a single process)."""
        if self.distributed:
            tdist.barrier()

    def sum(self, value: torch.Tensor) -> torch.Tensor:
        """The sum of ``value`` over the ranks (a copy; ``value`` itself on one rank)."""
        if not self.distributed:
            return value
        out = value.detach().clone().to(self.device)
        tdist.all_reduce(out, op=tdist.ReduceOp.SUM)
        return out

    def check_agree(self, values: Sequence[int], what: str) -> None:
        """Raise :class:`RuntimeError` unless every rank holds the same ``values``.

        A collective, so it doubles as a barrier.
        """
        if not self.distributed:
            return
        mine = torch.tensor(list(values), dtype=torch.int64, device=self.device)
        every = [torch.empty_like(mine) for _ in range(self.world_size)]
        tdist.all_gather(every, mine)
        if any(not torch.equal(t, every[0]) for t in every):
            got = {r: t.tolist() for r, t in enumerate(every)}
            raise RuntimeError(f"ranks disagree on {what}: {got}")

    def sum_sparse_grad(self, param: torch.Tensor) -> None:
        """Replace ``param.grad`` (row-sparse or ``None``) by its sum over the ranks.

        Each rank's coalesced rows are all-gathered (sizes first, then padded indices and
        values) and summed in rank order, so every rank ends with the same gradient and a
        sparse optimiser keeps the weights identical across ranks.
        """
        if not self.distributed:
            return
        grad = param.grad
        if grad is None:
            idx = torch.empty(0, dtype=torch.int64, device=param.device)
            val = torch.empty((0, *param.shape[1:]), dtype=param.dtype, device=param.device)
        else:
            if not grad.is_sparse or grad.sparse_dim() != 1:
                raise ValueError("sum_sparse_grad: expected a row-sparse gradient (nn.Embedding)")
            grad = grad.coalesce()
            idx, val = grad.indices()[0], grad.values()
        size = torch.tensor([idx.shape[0]], dtype=torch.int64, device=param.device)
        sizes = [torch.empty_like(size) for _ in range(self.world_size)]
        tdist.all_gather(sizes, size)
        counts = [int(s) for s in sizes]
        width = max(counts)
        pad = width - idx.shape[0]
        idx_p = torch.cat([idx, idx.new_zeros(pad)])
        val_p = torch.cat([val, val.new_zeros((pad, *val.shape[1:]))])
        all_idx = [torch.empty_like(idx_p) for _ in range(self.world_size)]
        all_val = [torch.empty_like(val_p) for _ in range(self.world_size)]
        tdist.all_gather(all_idx, idx_p)
        tdist.all_gather(all_val, val_p)
        indices = torch.cat([t[:c] for t, c in zip(all_idx, counts, strict=True)])
        values = torch.cat([t[:c] for t, c in zip(all_val, counts, strict=True)])
        param.grad = torch.sparse_coo_tensor(
            indices.unsqueeze(0), values, param.shape, device=param.device, check_invariants=True
        ).coalesce()


def current(device: str | torch.device | None = None) -> DistContext:
    """The context of an already initialised process group, else a single-process one."""
    if tdist.is_available() and tdist.is_initialized() and tdist.get_world_size() > 1:
        rank = tdist.get_rank()
        local_rank = int(os.environ.get("LOCAL_RANK", rank))
        return DistContext(
            rank=rank,
            world_size=tdist.get_world_size(),
            local_rank=local_rank,
            device=resolve_device(device, local_rank),
        )
    return DistContext(device=resolve_device(device, 0))


@contextlib.contextmanager
def init_from_env(device: str | torch.device | None = None) -> Iterator[DistContext]:
    """Join the process group torchrun describes in the environment; leave it afterwards.

    Backend ``nccl`` when the device is CUDA (each rank on ``cuda:LOCAL_RANK``), else
    ``gloo``. Outside torchrun (or with ``WORLD_SIZE=1``) a single-process context on
    ``device``. A group initialised by the caller is used as is and left to it.
    """
    if tdist.is_available() and tdist.is_initialized():
        yield current(device)
        return
    if not in_torchrun() or int(os.environ["WORLD_SIZE"]) <= 1:
        yield DistContext(device=resolve_device(device, 0))
        return
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    dev = resolve_device(device, local_rank)
    if dev.type == "cuda":
        if dev.index != local_rank:
            log.warning("device %s ignored: rank %d trains on cuda:%d", dev, rank, local_rank)
            dev = torch.device("cuda", local_rank)
        torch.cuda.set_device(dev)
        tdist.init_process_group(backend="nccl", device_id=dev)
    else:
        tdist.init_process_group(backend="gloo")
    ctx = DistContext(rank=rank, world_size=world, local_rank=local_rank, device=dev)
    if ctx.is_main:
        log.info("data-parallel over %d processes (%s, %s)", world, tdist.get_backend(), dev.type)
    try:
        yield ctx
    finally:
        tdist.destroy_process_group()


def torchrun_command(argv: Sequence[str], nproc: int) -> list[str]:
    """The command that runs ``xlalign <argv>`` in ``nproc`` processes on this machine."""
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={int(nproc)}",
        "-m",
        "xlalign.cli",
        *map(str, argv),
    ]


def _worker_env(env: Mapping[str, str] | None, nproc: int) -> dict[str, str]:
    out = dict(os.environ if env is None else env)
    # The workers import this very package, wherever it was imported from here.
    src = str(Path(__file__).resolve().parents[2])
    out["PYTHONPATH"] = os.pathsep.join(p for p in (src, out.get("PYTHONPATH")) if p)
    # A job's thread budget (by default the CPUs it may use) is shared by its workers
    # rather than multiplied by them.
    if hasattr(os, "sched_getaffinity"):
        out.setdefault("OMP_NUM_THREADS", str(len(os.sched_getaffinity(0))))
    else:
        out.setdefault("OMP_NUM_THREADS", str(os.cpu_count() or 1))
    for var in _THREAD_ENV:
        value = out.get(var, "")
        if value.isdigit():
            out[var] = str(max(1, int(value) // nproc))
    return out


def launch(
    argv: Sequence[str],
    nproc: int,
    *,
    log_path: PathLike | None = None,
    env: Mapping[str, str] | None = None,
) -> str:
    """Run ``xlalign <argv>`` in ``nproc`` processes under torchrun and wait for it.

    The workers' output (stdout and stderr, progress bars included) is streamed as it comes
    to ``log_path`` (appended) or else to ``sys.stderr``; the last lines are returned.
    Raises :class:`ToolError` naming the command, its exit code and its last lines when it
    fails. The workers share the process group of the caller, so a job killed as a group
    takes them with it; an exception here (e.g. Ctrl-C) terminates them.
    """
    if nproc < 1:
        raise ValueError(f"launch: expected nproc >= 1, got {nproc}")
    cmd = torchrun_command(argv, nproc)
    log.info("launching %d processes: %s", nproc, shlex.join(cmd))
    sink = open(log_path, "a", encoding="utf-8") if log_path else sys.stderr  # noqa: SIM115
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    tail = b""
    try:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=_worker_env(env, nproc)
        )
        assert proc.stdout is not None
        try:
            while chunk := proc.stdout.read1(65536):
                sink.write(decoder.decode(chunk))
                sink.flush()
                tail = (tail + chunk)[-_TAIL_BYTES:]
            rc = proc.wait()
        except BaseException:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            raise
        finally:
            proc.stdout.close()
        sink.write(decoder.decode(b"", final=True))
    finally:
        if sink is not sys.stderr:
            sink.close()
    lines = _last_lines(tail)
    if rc != 0:
        last = "\n".join(lines)
        raise ToolError(f"{shlex.join(cmd)}: exited with code {rc}; last output:\n{last}")
    return "\n".join(lines)


def _last_lines(tail: bytes, n: int = 20) -> list[str]:
    """The last ``n`` non-blank lines of the workers' output, without torchrun's own
    traceback of a failed worker (its first line, naming the exit code, is kept)."""
    text = tail.decode("utf-8", errors="replace").replace("\r", "\n")
    lines = [line for line in text.splitlines() if line.strip()]
    cut = next((i for i, line in enumerate(lines) if _WORKER_FAILED in line), None)
    if cut is not None:
        lines = lines[: cut + 1]
    return lines[-n:]
