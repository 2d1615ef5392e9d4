"""The workflow on a real Slurm: a slice of the embedded default through `--profile profiles/slurm`.

A single-node Slurm (munge, slurmctld, slurmd from Debian; see slurm_cluster.py) runs on
loopback. Sampling and segmentation of two languages, the vocabulary and the encoder's
teacher cache of one of them go through sbatch exactly as on a cluster, with the real
profile; their outputs must equal the local run of the same config (``embedded_run`` of
tests/e2e/conftest.py: the embedded default with the override embedded-small.yaml). A job
that fails is reported failed, retried once with more memory (attempt 2) and leaves its
logs. Where Slurm cannot be had (not root, no apt), the tests are skipped with the reason,
never passed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from slurm_cluster import Cluster, SlurmUnavailable, single_node_slurm
from snakemake_runner import BIN, EMBEDDED_CONFIG_ARGS, ROOT

LANGS = ("de", "hi")
ENCODER_LANG = "hi"
RES = "results/embedded"
SLICE = [
    *(f"{RES}/corpus/s0/segment/{lang}.txt" for lang in LANGS),
    f"{RES}/cache/teacher/s0/{ENCODER_LANG}",
]
# Outputs of the slice's jobs, compared with the local run.
TEXT_OUTPUTS = [
    *(f"{RES}/corpus/s0/{stage}/{lang}.txt" for stage in ("sample", "segment") for lang in LANGS),
    f"{RES}/corpus/s0/vocab/{ENCODER_LANG}.tsv",
]
STATS_OUTPUTS = [
    *(f"{RES}/corpus/s0/{stage}/{lang}.json" for stage in ("sample", "segment") for lang in LANGS),
    f"{RES}/corpus/s0/vocab/{ENCODER_LANG}.json",
    f"{RES}/cache/teacher/s0/{ENCODER_LANG}/meta.json",
]
# Run-specific stats fields (timings), not results.
_TIMING = re.compile(r"seconds|per_s$|per_second|this_run")


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    try:
        with single_node_slurm(tmp_path_factory.mktemp("slurm")) as cluster:
            yield cluster
    except SlurmUnavailable as exc:
        pytest.skip(f"no single-node Slurm here: {exc}")


def _snakemake_on_slurm(work: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    cmd = [
        str(BIN / "snakemake"),
        "-s",
        str(ROOT / "Snakefile"),
        "--directory",
        str(work),
        "--profile",
        str(ROOT / "profiles" / "slurm"),
        # The configuration of the local run (embedded_run) it is compared with.
        *EMBEDDED_CONFIG_ARGS,
        # The test node has 2 CPUs (rules ask for up to 8 threads; a real profile sets
        # max-threads to its nodes' size), and its jobs take seconds: check their status
        # sooner than the profile's 20 s (MinJobAge 600 s allows it).
        "--max-threads",
        "2",
        "--slurm-init-seconds-before-status-checks",
        "2",
        *args,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=work, timeout=1200)


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def slice_run(slurm: Cluster, embedded_run: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The slice, on Slurm, in a fresh working directory sharing the local run's resources."""
    work = tmp_path_factory.mktemp("slurm-work")
    # Built offline resources (encoder, Bible and help texts) as a login node would see
    # them on the shared filesystem; only the slice's jobs run.
    (work / "resources").symlink_to(embedded_run / "resources")
    home, tmp = work.parent / "home", work.parent / "jobtmp"
    home.mkdir()
    tmp.mkdir()
    env = {
        **os.environ,
        "PATH": f"{BIN}:{os.environ['PATH']}",
        "HF_HUB_OFFLINE": "1",
        # Jobs inherit the environment (sbatch --export=ALL): an empty HOME shows any
        # write outside the declared outputs, logs and tmpdir; TMPDIR is resources.tmpdir.
        "HOME": str(home),
        "TMPDIR": str(tmp),
    }
    result = _snakemake_on_slurm(work, *SLICE, env=env)
    return {"work": work, "home": home, "tmp": tmp, "env": env, "result": result}


def test_slice_runs_on_slurm_and_equals_the_local_run(
    slice_run: dict, slurm: Cluster, embedded_run: Path
) -> None:
    r = slice_run["result"]
    assert r.returncode == 0, f"snakemake on Slurm failed:\n{r.stdout[-3000:]}\n{r.stderr[-6000:]}"
    work = slice_run["work"]
    log = r.stdout + r.stderr
    # Every job went through sbatch and finished there.
    assert len(re.findall(r"Job \d+ has been submitted with SLURM jobid", log)) == 6, log[-4000:]
    states = [j for j in slurm.jobs() if "rule_" in j["comment"]]
    rules = sorted(re.sub(r"^rule_(\w+?)_wildcards.*", r"\1", j["comment"]) for j in states)
    assert rules == ["sample", "sample", "segment", "segment", "teacher", "vocab"], states
    assert {j["state"] for j in states} == {"COMPLETED"}, states

    for rel in TEXT_OUTPUTS:
        assert (work / rel).read_bytes() == (embedded_run / rel).read_bytes(), rel
    for rel in STATS_OUTPUTS:
        got, want = (json.loads(p.read_text()) for p in (work / rel, embedded_run / rel))
        strip = lambda d: {k: v for k, v in d.items() if not _TIMING.search(k)}  # noqa: E731
        assert strip(got) == strip(want), rel
    cache = f"{RES}/cache/teacher/s0/{ENCODER_LANG}"
    shards = sorted(p.name for p in (embedded_run / cache).glob("shard-*.npy"))
    assert shards and shards == sorted(p.name for p in (work / cache).glob("shard-*.npy"))
    for name in shards:
        got, want = np.load(work / cache / name), np.load(embedded_run / cache / name)
        if name.endswith(".ctx.npy"):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-5, err_msg=name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)


def test_jobs_write_only_their_outputs_logs_and_tmpdir(slice_run: dict) -> None:
    assert slice_run["result"].returncode == 0
    work = slice_run["work"]
    allowed = (
        f"{RES}/corpus/s0/",
        f"{RES}/cache/teacher/s0/{ENCODER_LANG}/",
        f"{RES}/cache/teacher/s0/{ENCODER_LANG}.json",  # the job's record beside its cache
        f"{RES}/benchmarks/",
        "logs/embedded/",
        "logs/slurm/",
        ".snakemake/",
    )
    stray = sorted(
        f for f in _files(work) if not f.startswith(allowed) and not f.startswith("resources")
    )
    assert not stray, f"files outside outputs and logs: {stray}"
    assert not _files(slice_run["home"]), f"jobs wrote into $HOME: {_files(slice_run['home'])}"
    assert not _files(slice_run["tmp"]), f"temporaries left in tmpdir: {_files(slice_run['tmp'])}"
    # Each job's own log is in logs/ (the rule's log:), whatever Slurm keeps.
    for lang in LANGS:
        assert (work / f"logs/embedded/segment/s0/{lang}.log").stat().st_size > 0


def test_failing_job_is_reported_retried_with_more_memory_and_keeps_its_log(
    slice_run: dict, slurm: Cluster
) -> None:
    assert slice_run["result"].returncode == 0
    work, env = slice_run["work"], slice_run["env"]
    vocab = work / f"{RES}/corpus/s0/vocab/{ENCODER_LANG}.tsv"
    vocab.write_text("not a vocabulary\n", encoding="utf-8")  # newer than its input: kept
    cache = work / f"{RES}/cache/teacher/s0/{ENCODER_LANG}"
    before = {j["id"] for j in slurm.jobs()}

    r = _snakemake_on_slurm(
        work, "--forcerun", "teacher", "--", str(cache.relative_to(work)), env=env
    )

    log = r.stdout + r.stderr
    assert r.returncode != 0, log[-3000:]
    assert "Error in rule teacher" in log, log[-3000:]
    assert not cache.exists(), "a failed teacher job left its finished-looking output"
    # The rule's log keeps the reason, naming the file.
    job_log = work / f"logs/embedded/teacher/s0/{ENCODER_LANG}.log"
    assert f"vocab/{ENCODER_LANG}.tsv: line 1: expected header" in job_log.read_text()
    # Slurm saw two attempts, both FAILED, the second with twice the memory and time.
    attempts = [j for j in slurm.jobs() if j["id"] not in before and "rule_teacher" in j["comment"]]
    assert [j["state"] for j in attempts] == ["FAILED", "FAILED"], attempts
    first, second = sorted(attempts, key=lambda j: int(j["id"]))
    assert _megabytes(second["memory"]) == 2 * _megabytes(first["memory"]), attempts
    # Slurm keeps the failed jobs' own output (the job step's log) under logs/slurm.
    kept = [f for f in _files(work) if f.startswith("logs/slurm/") and "teacher" in f]
    assert len(kept) >= 2, sorted(_files(work))


def _megabytes(text: str) -> int:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([MGT]?)", text)
    assert m, text
    return int(float(m.group(1)) * {"": 1, "M": 1, "G": 1024, "T": 1024**2}[m.group(2)])
