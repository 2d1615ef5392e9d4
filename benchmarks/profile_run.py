"""Profile of a `make run`: per rule wall, CPU, I/O and peak memory, and the critical path.

Reads a finished (or partial, still running, or failed) Snakemake run from the repository
clone it ran in: Snakemake's own log (``.snakemake/log/*.snakemake.log``, by default the
latest one that started a job) lists every job with its rule, wildcards, input, output,
benchmark file and the times it started and finished; each job's benchmark TSV (the
rule's ``benchmark:`` file, under ``logs/`` or ``results/<name>/benchmarks/``) gives
what the job's processes used. Nothing is run and nothing in the run dir is written.

    .venv/bin/python benchmarks/profile_run.py RUN_DIR [--snakemake-log FILE] [--jobs]
        [--out PROFILE.md] [--json PROFILE.json] [--compare BEFORE.json] [--io RUN_IO.json]

``--json`` writes the profile machine-readable; ``--compare BEFORE.json`` (a profile of an
earlier run written with ``--json``) adds the ratios after/before, per rule and in total.
The Markdown goes to stdout, or to ``--out``. ``--io RUN_IO.json`` (written by
``benchmarks/run_io.py --json RUN_IO.json -- make run``) adds to the totals the kernel's
count for the whole process tree of the run: writes (``write_bytes``, and net of
``cancelled_write_bytes``), reads, CPU (user + sys) and wall, the faithful figures where
the benchmark files undercount (see the caveat below); they are stored in the profile's
JSON under ``process_tree`` and compared by ``--compare`` when both profiles have them.

Columns (all sums are over the jobs that finished in this log):

* ``jobs``: jobs of the rule that finished;
* ``wall s``: the job's wall time: the benchmark's ``s`` (summed over its rows when the
  rule repeats its benchmark); for a job without a benchmark file (a rule without
  ``benchmark:``, e.g. ``all``) the time between its start and its "Finished" line in the
  Snakemake log (1 s resolution). Sum, mean and max over the rule's jobs;
* ``CPU s``: the benchmark's ``cpu_time`` (user + system seconds of the job's process and
  all its children); ``CPU %`` = CPU s / wall s over the jobs whose CPU time is known (a
  job with 2 busy threads shows 200 %);
* ``io_in MB``, ``io_out MB``: bytes the job's processes read from and wrote to the
  storage layer (``/proc/<pid>/io`` ``read_bytes``/``write_bytes``), in Snakemake's MB
  (MiB, 2^20 bytes); the total writes are given in GiB (2^30 bytes);
* ``peak RSS MB``: the largest ``max_rss`` (resident memory of the job's process tree,
  summed over its processes) among the rule's jobs;
* ``no bench``: jobs whose CPU, I/O and memory are unknown (no ``benchmark:`` directive, no
  file, or ``NA``: a job that ended before Snakemake's first sample).

Totals: summed wall and CPU, CPU % over the jobs whose CPU is known (and how much of the
summed wall that covers), total io_out, the run span (the first job's start to the last
job's end in the Snakemake log), the concurrency (summed wall / span: 2.0 means both
cores of a ``--cores 2`` run busy all the time; the busy share divides it by the
"Provided cores" of the log), and the wall summed from the log's start and "Finished"
times (above the benchmarks' sum by what Snakemake spends around each job: checking
inputs and outputs, writing metadata).

Caveat on the numbers: Snakemake (9.x, ``snakemake/benchmark.py``) samples a job's
process tree at 0, 0.5, 1, ..., 15 s after its start, then every 30 s (45, 75, ... s), and
keeps the last sample; nothing is sampled when the job ends. CPU time, I/O and peak memory
therefore miss what happens after the last sample (up to 30 s: a 40 s job is seen for its
first 15 s only) and what a short-lived subprocess did between two samples: they are lower
bounds, and CPU % is biased low for jobs of 15-45 s (a job that burns 2 CPU s in its
last 2 s of 22 shows ``cpu_time`` 0.00). Hence ``CPU % sampled``: the CPU seconds over
the part of each job that was sampled (``sampled s``: the time of its last sample by the
schedule above; a job shorter than 0.5 s has none and is left out), an estimate of the
true CPU/wall when a job's use is even over its life. ``CPU %`` is as the issue defines
it (CPU s over wall s); compare profiles of runs whose jobs are of similar lengths, or
use ``CPU % sampled``. Both count the job's own processes only: on a machine shared with
other work (a load above its cores) they fall with the contention, whatever the job's own
efficiency, as do the wall times; profile runs made on an otherwise idle machine.

The critical path is the longest chain of jobs through the DAG of this run, by wall time:
job B depends on job A when one of B's inputs is one of A's outputs, or lies inside an
output of A (a ``directory()`` output); the files come from the ``input:``/``output:``
lines of the Snakemake log, so jobs that did not run in this log (their outputs existed)
are not part of it. The path's length (the sum of its jobs' wall times) is a lower bound
on the span with unlimited cores; span minus length is time its jobs waited for a core or
for Snakemake. Each link shows the wait between the producer's end and the next job's
start. Failed and still-running jobs are listed apart (with the time from their start to their
failure, or to the log's last timestamp) and left out of the sums and of the critical
path.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xlalign.core.errors import InputError
from xlalign.core.io import atomic_open, read_json, write_json

FORMAT = "xlalign-run-profile/1"
MONTHS = {m: i for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), 1)}
TIMESTAMP = re.compile(
    r"^\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4})\]$"
)
JOB_HEADER = re.compile(r"^(?:local)?(?:rule|checkpoint) (\S+):$")
JOB_ERROR = re.compile(r"^Error in rule (\S+):$")
FINISHED = re.compile(r"^Finished job(?:id:)? (\d+)(?:\.| \(Rule: (\S+)\))$")
PROGRESS = re.compile(r"^(\d+) of (\d+) steps \([^)]*\) done$")
FIELD = re.compile(r"^ {4}(\w[\w-]*): ?(.*)$")
ERROR_FIELD = re.compile(r"^ {4,}(\w[\w-]*): ?(.*)$")
HEADER_FIELD = re.compile(r"^ {2}(Snakemake version|Command|Date|Working directory): (.*)$")
CORES = re.compile(r"^Provided cores: (\d+)")
#: Labels Snakemake appends to a file in a job's input/output line, e.g. ``x.fifo (pipe)``.
FILE_LABEL = re.compile(
    r" \((?:pipe|service|nodelocal|update|before update|access: [^)]*|cached|"
    r"retrieve from storage|only provide storage uri|send to storage|in storage)"
    r"(?:, [^)]*)?\)$"
)
MISSING = {"NA", "-", ""}
#: Snakemake's benchmark sampling: every 0.5 s up to 15 s (31 samples), then every 30 s.
SHORT_INTERVAL_S, SHORT_PHASE_S, LONG_INTERVAL_S = 0.5, 15.0, 30.0
#: Benchmark columns read (Snakemake's ``s``, ``max_rss``, ``io_in``, ``io_out``, ``cpu_time``).
BENCH_COLUMNS = ("s", "max_rss", "io_in", "io_out", "cpu_time")


@dataclass
class Bench:
    """What one job's benchmark file says (its rows combined)."""

    wall_s: float
    cpu_s: float | None
    io_in_mb: float | None
    io_out_mb: float | None
    max_rss_mb: float | None
    rows: int
    sampled_s: float


@dataclass
class Job:
    """One job of the Snakemake log."""

    jobid: int
    rule: str
    wildcards: str
    inputs: list[str]
    outputs: list[str]
    benchmark: str | None
    start: dt.datetime
    end: dt.datetime | None = None
    status: str = "running"  # running | finished | failed
    attempts: int = 1
    bench: Bench | None = None

    @property
    def log_wall_s(self) -> float | None:
        return None if self.end is None else (self.end - self.start).total_seconds()

    @property
    def wall_s(self) -> float:
        """The benchmark's wall time where there is one, else the log's."""
        if self.bench is not None:
            return self.bench.wall_s
        return self.log_wall_s or 0.0

    @property
    def label(self) -> str:
        return f"{self.rule}[{self.wildcards}]" if self.wildcards else self.rule


@dataclass
class RunLog:
    """A parsed Snakemake log."""

    path: Path
    jobs: dict[int, Job]
    snakemake_version: str | None = None
    command: str | None = None
    working_dir: str | None = None
    cores: int | None = None
    progress: tuple[int, int] | None = None
    last_time: dt.datetime | None = None
    warnings: list[str] = field(default_factory=list)


# --- reading --------------------------------------------------------------------------


def _timestamp(m: re.Match[str], path: Path, lineno: int) -> dt.datetime:
    mon, day, hh, mm, ss, year = m.groups()
    if mon not in MONTHS:
        raise InputError(f"{path}: line {lineno}: unknown month {mon!r} in a timestamp")
    try:
        return dt.datetime(int(year), MONTHS[mon], int(day), int(hh), int(mm), int(ss))
    except ValueError as exc:
        raise InputError(f"{path}: line {lineno}: invalid timestamp: {exc}") from None


def _files(value: str, workdir: str | None) -> list[str]:
    """The files of an ``input:``/``output:`` line, labels such as ``(pipe)`` removed,
    normalised, relative to the run's working directory where they lie in it."""
    out = []
    for f in value.split(", "):
        f = os.path.normpath(FILE_LABEL.sub("", f)) if f else f
        if workdir and os.path.isabs(f) and f.startswith(workdir.rstrip(os.sep) + os.sep):
            f = os.path.relpath(f, workdir)
        if f:
            out.append(f)
    return out


def _fields(
    lines: Sequence[str], i: int, pattern: re.Pattern[str] = FIELD
) -> tuple[dict[str, str], int]:
    """The ``    key: value`` lines from ``lines[i]`` on; the index after them."""
    out: dict[str, str] = {}
    while i < len(lines) and (m := pattern.match(lines[i])):
        out.setdefault(m.group(1), m.group(2))
        i += 1
    return out, i


def parse_snakemake_log(path: Path) -> RunLog:
    """Jobs (rule, wildcards, files, benchmark, start, end, status) of one Snakemake log."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError as exc:
        raise InputError(f"{path}: Snakemake log not found") from exc
    run = RunLog(path=path, jobs={})
    now: dt.datetime | None = None
    i = 0
    while i < len(lines):
        line, lineno = lines[i], i + 1
        if m := TIMESTAMP.match(line):
            now = run.last_time = _timestamp(m, path, lineno)
            i += 1
        elif m := HEADER_FIELD.match(line):
            key, value = m.groups()
            if key == "Snakemake version":
                run.snakemake_version = value
            elif key == "Command":
                run.command = value
            elif key == "Working directory":
                run.working_dir = value
            i += 1
        elif m := CORES.match(line):
            run.cores = int(m.group(1))
            i += 1
        elif m := JOB_HEADER.match(line):
            fields, i = _fields(lines, i + 1)
            if "jobid" not in fields or not fields["jobid"].isdigit():
                raise InputError(
                    f"{path}: line {lineno}: job of rule {m.group(1)} without a `jobid:` "
                    "line; expected Snakemake's job description"
                )
            if now is None:
                raise InputError(f"{path}: line {lineno}: job before any [timestamp] line")
            jobid = int(fields["jobid"])
            old = run.jobs.get(jobid)
            run.jobs[jobid] = Job(
                jobid=jobid,
                rule=m.group(1),
                wildcards=fields.get("wildcards", ""),
                inputs=_files(fields.get("input", ""), run.working_dir),
                outputs=_files(fields.get("output", ""), run.working_dir),
                benchmark=fields.get("benchmark"),
                start=now,
                attempts=old.attempts + 1 if old else 1,
            )
        elif m := JOB_ERROR.match(line.strip()):
            fields, i = _fields(lines, i + 1, ERROR_FIELD)
            jid = fields.get("jobid", "")
            job = run.jobs.get(int(jid)) if jid.isdigit() else None
            if job is not None and job.status == "running":
                job.status, job.end = "failed", now
        elif m := FINISHED.match(line):
            jobid = int(m.group(1))
            job = run.jobs.get(jobid)
            if job is None:
                run.warnings.append(
                    f"{path}: line {lineno}: job {jobid} finished but its start is not in "
                    "the log (a rule with `message:`?); left out"
                )
            else:
                job.status, job.end = "finished", now
            i += 1
        elif m := PROGRESS.match(line):
            run.progress = (int(m.group(1)), int(m.group(2)))
            i += 1
        else:
            i += 1
    return run


def _number(value: str, path: Path, lineno: int, column: str) -> float | None:
    if value.strip() in MISSING:
        return None
    try:
        x = float(value)
    except ValueError:
        raise InputError(
            f"{path}: line {lineno}: column {column!r} is {value!r}; expected a number, NA or -"
        ) from None
    if not math.isfinite(x) or x < 0:
        raise InputError(
            f"{path}: line {lineno}: column {column!r} is {value!r}; expected a finite number >= 0"
        )
    return x


def _rows(path: Path) -> list[tuple[int, dict[str, str]]]:
    """Data rows of a benchmark file (TSV with a header, or JSON lines) with line numbers."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: invalid UTF-8 at byte {exc.start}") from exc
    lines = [(n, s) for n, s in enumerate(text.splitlines(), 1) if s.strip()]
    if path.suffix == ".jsonl":
        rows = []
        for n, s in lines:
            try:
                obj = json.loads(s)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}: line {n}: invalid JSON: {exc.msg}") from exc
            if not isinstance(obj, dict):
                raise InputError(f"{path}: line {n}: expected a JSON object")
            rows.append((n, {k: "NA" if v is None else str(v) for k, v in obj.items()}))
        return rows
    if not lines:
        raise InputError(
            f"{path}: empty benchmark file; expected Snakemake's header "
            "(s, h:m:s, max_rss, ..., cpu_time) and a row per run"
        )
    header = lines[0][1].split("\t")
    if "s" not in header:
        raise InputError(
            f"{path}: line {lines[0][0]}: header {lines[0][1]!r} has no column 's'; expected "
            "Snakemake's benchmark header (s, h:m:s, max_rss, ..., cpu_time)"
        )
    rows = []
    for n, s in lines[1:]:
        values = s.split("\t")
        if len(values) != len(header):
            raise InputError(
                f"{path}: line {n}: {len(values)} tab-separated fields; expected "
                f"{len(header)}, as in the header"
            )
        rows.append((n, dict(zip(header, values, strict=True))))
    return rows


def _sum(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def sampled_seconds(wall_s: float) -> float:
    """When Snakemake took its last sample of a job of ``wall_s`` seconds: samples at 0,
    0.5, ..., 15 s, then every 30 s (its ``BENCHMARK_INTERVAL_SHORT`` and ``_INTERVAL``)."""
    if wall_s <= SHORT_PHASE_S:
        return math.floor(wall_s / SHORT_INTERVAL_S) * SHORT_INTERVAL_S
    return SHORT_PHASE_S + math.floor((wall_s - SHORT_PHASE_S) / LONG_INTERVAL_S) * LONG_INTERVAL_S


def read_benchmark(path: Path) -> Bench:
    """One job's benchmark file; several rows (``repeat()``) are summed (memory: max)."""
    rows = _rows(path)
    if not rows:
        raise InputError(f"{path}: no data row after the header; expected one per run")
    parsed: list[dict[str, float | None]] = []
    for n, row in rows:
        if "s" not in row:
            raise InputError(f"{path}: line {n}: no 's' (wall seconds)")
        values = {c: _number(row[c], path, n, c) if c in row else None for c in BENCH_COLUMNS}
        if values["s"] is None:
            raise InputError(f"{path}: line {n}: column 's' is {row['s']!r}; expected seconds")
        parsed.append(values)
    rss = [r["max_rss"] for r in parsed if r["max_rss"] is not None]
    return Bench(
        wall_s=sum(r["s"] or 0.0 for r in parsed),
        cpu_s=_sum(r["cpu_time"] for r in parsed),
        io_in_mb=_sum(r["io_in"] for r in parsed),
        io_out_mb=_sum(r["io_out"] for r in parsed),
        max_rss_mb=max(rss) if rss else None,
        rows=len(parsed),
        sampled_s=sum(sampled_seconds(r["s"] or 0.0) for r in parsed),
    )


def latest_log(run_dir: Path) -> Path:
    """The newest Snakemake log of ``run_dir`` that started a job (dry runs and "Nothing
    to be done" runs start none)."""
    log_dir = run_dir / ".snakemake" / "log"
    logs = sorted(log_dir.glob("*.snakemake.log"), reverse=True)
    if not logs:
        raise InputError(f"{log_dir}: no *.snakemake.log; is {run_dir} the dir of a run?")
    for log in logs:
        with log.open(encoding="utf-8", errors="replace") as fh:
            if any(JOB_HEADER.match(line.rstrip("\n")) for line in fh):
                return log
    raise InputError(f"{log_dir}: none of the {len(logs)} Snakemake logs started a job")


def load_run(run_dir: Path, log_path: Path | None = None) -> RunLog:
    """The parsed log with each finished job's benchmark attached."""
    run = parse_snakemake_log(log_path or latest_log(run_dir))
    for job in run.jobs.values():
        if job.status != "finished" or not job.benchmark:
            continue
        bench = Path(job.benchmark)
        bench = bench if bench.is_absolute() else run_dir / bench
        if bench.is_file():
            job.bench = read_benchmark(bench)
        else:
            run.warnings.append(f"job {job.jobid} ({job.label}): benchmark {bench} missing")
    return run


# --- analysis -------------------------------------------------------------------------


def _producer(path: str, producers: dict[str, int]) -> int | None:
    """The job whose output is ``path`` or a directory holding it."""
    p = os.path.normpath(path)
    while p not in ("", ".", os.sep):
        if p in producers:
            return producers[p]
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    return None


def dependencies(jobs: Sequence[Job]) -> dict[int, list[int]]:
    """For each job, the jobs (of ``jobs``) that produced one of its inputs."""
    producers: dict[str, int] = {}
    for job in jobs:
        for out in job.outputs:
            producers[os.path.normpath(out)] = job.jobid
    deps: dict[int, list[int]] = {}
    for job in jobs:
        found = {_producer(f, producers) for f in job.inputs}
        deps[job.jobid] = sorted(j for j in found if j is not None and j != job.jobid)
    return deps


def critical_path(jobs: Sequence[Job]) -> list[Job]:
    """The chain of dependent jobs with the largest summed wall time (first job first).

    Longest path in a DAG: jobs in topological order, each one's best chain = its wall +
    the best chain among its producers. Ties go to the lower jobid, so it is deterministic.
    """
    if not jobs:
        return []
    by_id = {j.jobid: j for j in jobs}
    deps = dependencies(jobs)
    users: dict[int, list[int]] = defaultdict(list)
    for jid, ps in deps.items():
        for p in ps:
            users[p].append(jid)
    pending = {jid: len(ps) for jid, ps in deps.items()}
    ready = sorted((jid for jid, n in pending.items() if n == 0), reverse=True)
    best: dict[int, float] = {}
    via: dict[int, int | None] = {}
    while ready:
        jid = ready.pop()
        prev = max(deps[jid], key=lambda p: (best[p], -p), default=None)
        best[jid] = by_id[jid].wall_s + (best[prev] if prev is not None else 0.0)
        via[jid] = prev
        for u in users[jid]:
            pending[u] -= 1
            if pending[u] == 0:
                ready.append(u)
        ready.sort(reverse=True)
    if len(best) != len(by_id):
        stuck = sorted(set(by_id) - set(best))[:5]
        raise InputError(f"the jobs' files form a cycle (jobs {stuck} ...); not a DAG")
    end: int | None = max(best, key=lambda j: (best[j], -j))
    chain: list[Job] = []
    while end is not None:
        chain.append(by_id[end])
        end = via[end]
    return chain[::-1]


def _ratio(num: float | None, den: float | None) -> float | None:
    return None if num is None or not den else num / den


def _pct(num: float | None, den: float | None) -> float | None:
    r = _ratio(num, den)
    return None if r is None else 100 * r


def _rule_stats(jobs: Sequence[Job]) -> dict[str, Any]:
    walls = [j.wall_s for j in jobs]
    benched = [j for j in jobs if j.bench is not None]
    with_cpu = [j for j in benched if j.bench and j.bench.cpu_s is not None]
    cpu = _sum(j.bench.cpu_s for j in with_cpu if j.bench)
    wall_cpu_known = sum(j.wall_s for j in with_cpu)
    sampled = [j.bench for j in with_cpu if j.bench and j.bench.sampled_s > 0]
    cpu_sampled = _sum(b.cpu_s for b in sampled)
    sampled_s = sum(b.sampled_s for b in sampled)
    rss = [j.bench.max_rss_mb for j in benched if j.bench and j.bench.max_rss_mb is not None]
    return {
        "jobs": len(jobs),
        "wall_s_sum": sum(walls),
        "wall_s_mean": sum(walls) / len(walls) if walls else 0.0,
        "wall_s_max": max(walls, default=0.0),
        "cpu_s_sum": cpu,
        "cpu_pct": None if cpu is None else 100 * (_ratio(cpu, wall_cpu_known) or 0.0),
        "wall_s_cpu_known": wall_cpu_known,
        "sampled_s_sum": sampled_s,
        "cpu_pct_sampled": None
        if cpu_sampled is None
        else 100 * (_ratio(cpu_sampled, sampled_s) or 0.0),
        "io_in_mb_sum": _sum(j.bench.io_in_mb for j in benched if j.bench),
        "io_out_mb_sum": _sum(j.bench.io_out_mb for j in benched if j.bench),
        "max_rss_mb": max(rss) if rss else None,
        "jobs_without_cpu": len(jobs) - len(with_cpu),
    }


def _job_row(job: Job, t0: dt.datetime) -> dict[str, Any]:
    b = job.bench
    return {
        "jobid": job.jobid,
        "rule": job.rule,
        "wildcards": job.wildcards,
        "status": job.status,
        "start_s": (job.start - t0).total_seconds(),
        "end_s": None if job.end is None else (job.end - t0).total_seconds(),
        "wall_s": job.wall_s,
        "wall_source": "benchmark" if b else "log",
        "log_wall_s": job.log_wall_s,
        "cpu_s": b.cpu_s if b else None,
        "cpu_pct": None if not b or b.cpu_s is None else 100 * (_ratio(b.cpu_s, b.wall_s) or 0),
        "sampled_s": b.sampled_s if b else None,
        "cpu_pct_sampled": None if not b or b.cpu_s is None else _pct(b.cpu_s, b.sampled_s),
        "io_in_mb": b.io_in_mb if b else None,
        "io_out_mb": b.io_out_mb if b else None,
        "max_rss_mb": b.max_rss_mb if b else None,
        "benchmark_rows": b.rows if b else 0,
        "attempts": job.attempts,
    }


def profile(run_dir: Path, log_path: Path | None = None) -> dict[str, Any]:
    """The profile of one run as a JSON-able dict (see the module docstring)."""
    run = load_run(run_dir, log_path)
    if not run.jobs:
        raise InputError(f"{run.path}: no job started in this log")
    all_jobs = sorted(run.jobs.values(), key=lambda j: (j.start, j.jobid))
    done = [j for j in all_jobs if j.status == "finished"]
    t0 = all_jobs[0].start
    ends = [j.end for j in all_jobs if j.end is not None]
    t1 = max(ends, default=t0)
    last = run.last_time or t1  # a running job has run at least until the log's last line
    span = (t1 - t0).total_seconds()
    by_rule: dict[str, list[Job]] = defaultdict(list)
    for j in done:
        by_rule[j.rule].append(j)
    totals = _rule_stats(done)
    io_out = totals["io_out_mb_sum"]
    totals.update(
        {
            "span_s": span,
            "concurrency": _ratio(totals["wall_s_sum"], span),
            "cores": run.cores,
            "core_use_pct": None
            if run.cores is None
            else 100 * (_ratio(totals["wall_s_sum"], span * run.cores) or 0.0),
            "log_wall_s_sum": sum(j.log_wall_s or 0.0 for j in done),
            "io_out_gib": None if io_out is None else io_out / 1024,
            "cpu_known_wall_pct": 100
            * (_ratio(totals["wall_s_cpu_known"], totals["wall_s_sum"]) or 0),
            "failed": sum(j.status == "failed" for j in all_jobs),
            "running": sum(j.status == "running" for j in all_jobs),
        }
    )
    chain = critical_path(done)
    path_rows = []
    prev_end = t0
    for j in chain:
        row = _job_row(j, t0)
        row["wait_s"] = (j.start - prev_end).total_seconds()
        prev_end = j.end or j.start
        path_rows.append(row)
    length = sum(j.wall_s for j in chain)
    finished = run.progress is not None and run.progress[0] == run.progress[1]
    return {
        "format": FORMAT,
        "run_dir": str(run_dir),
        "snakemake_log": str(run.path),
        "snakemake_version": run.snakemake_version,
        "command": run.command,
        "first_start": t0.isoformat(),
        "last_end": t1.isoformat(),
        "log_last_timestamp": run.last_time.isoformat() if run.last_time else None,
        "progress": list(run.progress) if run.progress else None,
        "finished": finished and totals["failed"] == 0 and totals["running"] == 0,
        "totals": totals,
        "rules": {rule: _rule_stats(js) for rule, js in sorted(by_rule.items())},
        "jobs": [_job_row(j, t0) for j in sorted(done, key=lambda j: (-j.wall_s, j.jobid))],
        "unfinished": [
            {**_job_row(j, t0), "elapsed_s": ((j.end or last) - j.start).total_seconds()}
            for j in all_jobs
            if j.status != "finished"
        ],
        "critical_path": {
            "length_s": length,
            "span_s": span,
            "share_of_span": _ratio(length, span),
            "jobs": path_rows,
        },
        "warnings": run.warnings,
    }


# --- output ---------------------------------------------------------------------------


def _f(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{x:,.{digits}f}"


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], right_from: int = 1) -> str:
    align = ["---" if i < right_from else "---:" for i in range(len(head))]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _status(p: dict[str, Any]) -> str:
    t = p["totals"]
    prog = p["progress"]
    steps = f"{prog[0]} of {prog[1]} steps" if prog else "no progress line"
    if p["finished"]:
        return f"finished ({steps})"
    return (
        f"**not finished**: {steps} done, {t['running']} job(s) running or killed, "
        f"{t['failed']} failed (log's last timestamp {p['log_last_timestamp']})"
    )


def render(p: dict[str, Any], jobs: bool = False) -> str:
    """The profile as Markdown."""
    t = p["totals"]
    cp = p["critical_path"]
    out = [
        f"# Profile of the run in `{p['run_dir']}`",
        "",
        f"- Snakemake log: `{p['snakemake_log']}` (Snakemake {p['snakemake_version']})",
        f"- Command: `{p['command']}`",
        f"- Status: {_status(p)}",
        f"- Jobs from {p['first_start']} to {p['last_end']}",
        "",
        "## Totals",
        "",
        _table(
            ["metric", "value"],
            [
                ["jobs finished", str(t["jobs"])],
                ["wall time summed over jobs (s)", _f(t["wall_s_sum"])],
                ["CPU time summed over jobs (s)", _f(t["cpu_s_sum"])],
                ["CPU / wall (%)", _f(t["cpu_pct"])],
                ["CPU / sampled wall (%)", _f(t["cpu_pct_sampled"])],
                ["share of summed wall with known CPU (%)", _f(t["cpu_known_wall_pct"])],
                ["io_in summed (MB)", _f(t["io_in_mb_sum"])],
                ["io_out summed (GiB)", _f(t["io_out_gib"], 3)],
                ["peak RSS of any job (MB)", _f(t["max_rss_mb"])],
                ["run span (s)", _f(t["span_s"])],
                ["concurrency (summed wall / span)", _f(t["concurrency"], 2)],
                [f"busy share of the {t['cores']} cores (%)", _f(t["core_use_pct"])],
                ["wall summed from the log's start/finish times (s)", _f(t["log_wall_s_sum"])],
                ["critical path (s)", _f(cp["length_s"])],
                ["critical path / span (%)", _f(100 * (cp["share_of_span"] or 0))],
                ["failed / running jobs", f"{t['failed']} / {t['running']}"],
            ],
        ),
        "",
        "## Per rule (by summed wall)",
        "",
        _table(
            [
                "rule",
                "jobs",
                "wall s sum",
                "mean",
                "max",
                "CPU s",
                "CPU %",
                "CPU % sampled",
                "io_in MB",
                "io_out MB",
                "peak RSS MB",
                "no bench",
            ],
            [
                [
                    rule,
                    str(r["jobs"]),
                    _f(r["wall_s_sum"]),
                    _f(r["wall_s_mean"]),
                    _f(r["wall_s_max"]),
                    _f(r["cpu_s_sum"]),
                    _f(r["cpu_pct"]),
                    _f(r["cpu_pct_sampled"]),
                    _f(r["io_in_mb_sum"]),
                    _f(r["io_out_mb_sum"]),
                    _f(r["max_rss_mb"]),
                    str(r["jobs_without_cpu"]),
                ]
                for rule, r in sorted(p["rules"].items(), key=lambda kv: -kv[1]["wall_s_sum"])
            ],
        ),
        "",
        "## Critical path",
        "",
        f"{len(cp['jobs'])} jobs, {_f(cp['length_s'])} s of wall time, "
        f"{_f(100 * (cp['share_of_span'] or 0))} % of the run span ({_f(cp['span_s'])} s). "
        "`wait s`: from the previous job's end (the run's start for the first) to this "
        "job's start.",
        "",
        _table(
            ["#", "jobid", "rule", "wildcards", "start s", "wait s", "wall s"],
            [
                [
                    str(i),
                    str(j["jobid"]),
                    j["rule"],
                    j["wildcards"],
                    _f(j["start_s"], 0),
                    _f(j["wait_s"], 0),
                    _f(j["wall_s"]),
                ]
                for i, j in enumerate(cp["jobs"], 1)
            ],
            right_from=4,
        ),
    ]
    if p["unfinished"]:
        out += [
            "",
            "## Not finished (left out of the sums)",
            "",
            _table(
                ["jobid", "rule", "wildcards", "status", "start s", "elapsed s"],
                [
                    [
                        str(j["jobid"]),
                        j["rule"],
                        j["wildcards"],
                        j["status"],
                        _f(j["start_s"], 0),
                        _f(j["elapsed_s"], 0),
                    ]
                    for j in p["unfinished"]
                ],
                right_from=4,
            ),
        ]
    if jobs:
        out += [
            "",
            "## Jobs (by wall)",
            "",
            _table(
                [
                    "jobid",
                    "rule",
                    "wildcards",
                    "wall s",
                    "from",
                    "CPU s",
                    "CPU %",
                    "sampled s",
                    "CPU % sampled",
                    "io_in MB",
                    "io_out MB",
                    "max RSS MB",
                ],
                [
                    [
                        str(j["jobid"]),
                        j["rule"],
                        j["wildcards"],
                        _f(j["wall_s"]),
                        j["wall_source"],
                        _f(j["cpu_s"]),
                        _f(j["cpu_pct"]),
                        _f(j["sampled_s"]),
                        _f(j["cpu_pct_sampled"]),
                        _f(j["io_in_mb"]),
                        _f(j["io_out_mb"]),
                        _f(j["max_rss_mb"]),
                    ]
                    for j in p["jobs"]
                ],
                right_from=3,
            ),
        ]
    if p["warnings"]:
        out += ["", "## Warnings", ""] + [f"- {w}" for w in p["warnings"]]
    return "\n".join(out) + "\n"


COMPARED = (
    ("wall_s_sum", "wall s sum"),
    ("cpu_s_sum", "CPU s"),
    ("cpu_pct", "CPU %"),
    ("cpu_pct_sampled", "CPU % sampled"),
    ("io_out_mb_sum", "io_out MB"),
    ("max_rss_mb", "peak RSS MB"),
)


def _check_profile(p: Any, where: str) -> dict[str, Any]:
    if not isinstance(p, dict) or p.get("format") != FORMAT:
        raise InputError(f"{where}: not a profile written by profile_run.py --json ({FORMAT})")
    for key in ("totals", "rules", "critical_path"):
        if not isinstance(p.get(key), dict):
            raise InputError(f"{where}: key {key!r} missing or not an object")
    return p


def render_compare(before: dict[str, Any], after: dict[str, Any], where: str) -> str:
    """Markdown: totals and per rule, before | after | after/before."""

    def cells(b: float | None, a: float | None) -> list[str]:
        r = _ratio(a, b)
        return [_f(b), _f(a), "n/a" if r is None else f"{r:.2f}"]

    tb, ta = before["totals"], after["totals"]
    total_rows = [
        [name, *cells(tb.get(key), ta.get(key))]
        for key, name in (
            ("jobs", "jobs finished"),
            ("wall_s_sum", "wall s summed over jobs"),
            ("cpu_s_sum", "CPU s summed"),
            ("cpu_pct", "CPU / wall %"),
            ("cpu_pct_sampled", "CPU / sampled wall %"),
            ("io_out_gib", "io_out GiB"),
            ("max_rss_mb", "peak RSS MB"),
            ("span_s", "run span s"),
            ("concurrency", "concurrency"),
        )
    ]
    pb, pa = before.get("process_tree"), after.get("process_tree")
    if isinstance(pb, dict) and isinstance(pa, dict):
        total_rows += [
            [name, *cells(pb.get(key), pa.get(key))]
            for key, name in (
                ("write_gib", "process tree writes GiB"),
                ("write_net_gib", "process tree writes net of cancelled GiB"),
                ("read_gib", "process tree reads GiB"),
                ("cpu_s", "process tree CPU s"),
                ("wall_s", "process tree wall s"),
            )
        ]
    total_rows.append(
        [
            "critical path s",
            *cells(before["critical_path"].get("length_s"), after["critical_path"]["length_s"]),
        ]
    )
    rules = sorted(
        set(before["rules"]) | set(after["rules"]),
        key=lambda r: (
            -max(
                before["rules"].get(r, {}).get("wall_s_sum") or 0,
                after["rules"].get(r, {}).get("wall_s_sum") or 0,
            )
        ),
    )
    head = ["rule", "jobs before", "jobs after"]
    for _, name in COMPARED:
        head += [f"{name} before", "after", "ratio"]
    rule_rows = []
    for rule in rules:
        rb, ra = before["rules"].get(rule, {}), after["rules"].get(rule, {})
        row = [rule, str(rb.get("jobs", 0)), str(ra.get("jobs", 0))]
        for key, _ in COMPARED:
            row += cells(rb.get(key), ra.get(key))
        rule_rows.append(row)
    return "\n".join(
        [
            "",
            f"## Compared with `{where}` (ratio = after / before)",
            "",
            f"Before: {_status(before)}; after: {_status(after)}.",
            "",
            _table(["metric", "before", "after", "ratio"], total_rows),
            "",
            _table(head, rule_rows),
            "",
        ]
    )


RUN_IO_FORMAT = "xlalign-run-io/1"


def read_run_io(path: Path) -> dict[str, Any]:
    """The process tree's totals from a ``run_io.py --json`` record."""
    rec = read_json(path)
    if not isinstance(rec, dict) or rec.get("format") != RUN_IO_FORMAT:
        raise InputError(f"{path}: not a record written by run_io.py --json ({RUN_IO_FORMAT})")
    io, ru = rec.get("io"), rec.get("rusage_children")
    if not isinstance(io, dict) or not isinstance(ru, dict):
        raise InputError(f"{path}: keys 'io' and 'rusage_children' must be objects")

    def num(d: dict[str, Any], key: str) -> float | None:
        v = d.get(key)
        return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None

    def gib(v: float | None) -> float | None:
        return None if v is None else v / 2**30

    write, cancelled = num(io, "write_bytes"), num(io, "cancelled_write_bytes")
    user, sys_ = num(ru, "user_s"), num(ru, "sys_s")
    rss = num(ru, "max_rss_kib")
    return {
        "source": str(path),
        "command": rec.get("command"),
        "returncode": rec.get("returncode"),
        "wall_s": num(rec, "wall_s"),
        "write_gib": gib(write),
        "write_net_gib": None if write is None else gib(write - (cancelled or 0.0)),
        "read_gib": gib(num(io, "read_bytes")),
        "wchar_gib": gib(num(io, "wchar")),
        "cpu_s": None if user is None or sys_ is None else user + sys_,
        "max_rss_mb": None if rss is None else rss / 1024,
    }


def render_io(t: dict[str, Any], pt: dict[str, Any]) -> str:
    """Markdown: the process tree's measured totals beside the benchmark-file sums."""
    return "\n".join(
        [
            "",
            f"## Process tree of the run, measured by run_io.py (`{pt['source']}`)",
            "",
            f"Command `{' '.join(map(str, pt['command'] or []))}`, exit status "
            f"{pt['returncode']}. The benchmark files undercount: Snakemake samples each job "
            "at 0.5 s, then 30 s intervals and never at its end, so what a job writes in its "
            "last seconds (a model saved at the end) is missing from their sums; the kernel's "
            "counters of the reaped process tree miss nothing that was waited for.",
            "",
            _table(
                ["metric", "process tree (kernel)", "benchmark files summed"],
                [
                    ["writes (GiB, write_bytes)", _f(pt["write_gib"], 3), _f(t["io_out_gib"], 3)],
                    [
                        "writes net of cancelled (GiB)",
                        _f(pt["write_net_gib"], 3),
                        "",
                    ],
                    [
                        "reads (GiB, read_bytes)",
                        _f(pt["read_gib"], 3),
                        _f(None if t["io_in_mb_sum"] is None else t["io_in_mb_sum"] / 1024, 3),
                    ],
                    ["CPU user + sys (s)", _f(pt["cpu_s"]), _f(t["cpu_s_sum"])],
                    [
                        "wall (s; benchmark: summed over jobs)",
                        _f(pt["wall_s"]),
                        _f(t["wall_s_sum"]),
                    ],
                ],
            ),
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("run_dir", type=Path, help="repository clone the run happened in")
    ap.add_argument(
        "--snakemake-log",
        type=Path,
        help="Snakemake log to read (default: the newest in RUN_DIR/.snakemake/log that "
        "started a job)",
    )
    ap.add_argument("--jobs", action="store_true", help="also list every job, by wall")
    ap.add_argument("--out", type=Path, help="write the Markdown here instead of stdout")
    ap.add_argument("--json", type=Path, help="write the profile as JSON here")
    ap.add_argument("--compare", type=Path, help="a profile JSON of an earlier run")
    ap.add_argument(
        "--io", type=Path, help="the run's run_io.py --json record: the process tree's totals"
    )
    args = ap.parse_args(argv)
    try:
        if not args.run_dir.is_dir():
            raise InputError(f"{args.run_dir}: run dir not found")
        before = None
        if args.compare:
            before = _check_profile(read_json(args.compare), str(args.compare))
        p = profile(args.run_dir, args.snakemake_log)
        if args.io:
            p["process_tree"] = read_run_io(args.io)
    except InputError as exc:
        print(f"profile_run: error: {exc}", file=sys.stderr)
        return 2
    text = render(p, jobs=args.jobs)
    if p.get("process_tree"):
        text += render_io(p["totals"], p["process_tree"])
    if before is not None:
        text += render_compare(before, p, str(args.compare))
    if args.json:
        write_json(args.json, p)
    if args.out:
        with atomic_open(args.out) as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
