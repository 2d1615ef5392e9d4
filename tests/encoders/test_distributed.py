"""Data-parallel X2Static: real torchrun runs (gloo on CPU, NCCL on GPUs when there are two).

The teacher cache is the synthetic one of tests/synthetic_cache.py written to disk in the layout
of :class:`xlalign.static.teacher.TeacherCache`, so the CLI and the workers read it as a real one.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
from pathlib import Path

import numpy as np
import pytest
import torch
from synthetic_cache import ArrayCache, synthetic

from xlalign.cli import build_parser, main, x2static_job
from xlalign.core.errors import ToolError
from xlalign.core.io import read_json, write_json
from xlalign.corpus.vocab import write_vocab
from xlalign.encoders import distributed
from xlalign.encoders.distributed import DistContext, launch, world_size_for
from xlalign.static.teacher import FORMAT, META_FILE, VERSION, _shard_paths
from xlalign.static.vectors import read_npy
from xlalign.static.x2static import (
    X2StaticArgs,
    X2StaticJob,
    checkpoint_path,
    run_x2static_job,
    x2static_argv,
)

ARGS = X2StaticArgs(
    epochs=2,
    batch_sentences=8,  # 20 batches per epoch
    negatives=4,
    subsample_t=0.01,  # drops some occurrences: every rank must draw the same ones
    lr=0.02,
    seed=3,
    checkpoint_every_batches=6,
    checkpoint_minutes=0,  # every chance: the tests kill and resume
    log_every=5,
    device="cpu",
)
OUTPUTS = {"en.vec", "en.npy", "en.vocab.txt", "en.manifest.json", "en.json"}


def write_teacher_cache(cache: ArrayCache, out: Path, *, shard_sentences: int = 64) -> Path:
    """``cache`` as a teacher cache directory (shards, then meta.json)."""
    out.mkdir(parents=True)
    n_shards = -(-cache.n_sentences // shard_sentences)
    for k in range(n_shards):
        first, last = k * shard_sentences, min((k + 1) * shard_sentences, cache.n_sentences)
        a, b = cache.offsets[first], cache.offsets[last]
        paths = _shard_paths(out, k)
        np.save(paths["ids"], cache.ids[a:b].astype(np.int32))
        np.save(paths["ctx"], cache.ctx[a:b].astype(np.float16))
        write_json(paths["stats"], {"sentences": last - first, "occurrences": int(b - a)})
        np.save(paths["offsets"], (cache.offsets[first : last + 1] - a).astype(np.int64))
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "language": "en",
        "dim": cache.dim,
        "n_sentences": cache.n_sentences,
        "n_occurrences": cache.n_occurrences,
        "n_shards": n_shards,
        "shard_sentences": shard_sentences,
    }
    write_json(out / META_FILE, meta)
    return out


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("x2static-inputs")
    cache, vocab, _ = synthetic(n_sent=160)
    write_vocab(vocab, root / "vocab.tsv")
    return write_teacher_cache(cache, root / "teacher"), root / "vocab.tsv"


def make_job(inputs: tuple[Path, Path], out: Path, **changes: object) -> X2StaticJob:
    cache_dir, vocab = inputs
    return X2StaticJob(
        cache_dir=cache_dir,
        vocab_path=vocab,
        vec_path=out / "en.vec",
        npy_path=out / "en.npy",
        stats_path=out / "en.json",
        checkpoint_dir=out / "en.checkpoint",
        language="en",
        args=dataclasses.replace(ARGS, **changes),
    )


def vectors(job: X2StaticJob) -> np.ndarray:
    words, mat = read_npy(job.npy_path.with_suffix(""))
    assert len(words) == mat.shape[0]
    return mat


# --------------------------------------------------------------------------- units


@pytest.mark.parametrize(
    ("requested", "available", "expected"),
    [
        (0, 0, 1),
        (0, 4, 1),
        (1, 0, 1),
        (1, 1, 1),
        (1, 4, 1),
        (2, 0, 1),
        (2, 1, 1),
        (2, 4, 2),
        (4, 2, 2),
    ],
)
def test_world_size_for(requested: int, available: int, expected: int) -> None:
    assert world_size_for(requested, available) == expected


def test_world_size_fallback_says_why(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="xlalign.encoders.distributed"):
        assert world_size_for(2, 1) == 1
    assert "2 GPUs requested, 1 visible: training in a single process on one device" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="xlalign.encoders.distributed"):
        assert world_size_for(3, 0) == 1
    assert "3 GPUs requested, 0 visible" in caplog.text and "the CPU" in caplog.text


def test_shards_cover_the_batch_once() -> None:
    for n in (0, 1, 5, 17):
        for world in (1, 2, 3):
            parts = [DistContext(rank=r, world_size=world).shard(n) for r in range(world)]
            assert parts[0][0] == 0 and parts[-1][1] == n
            assert all(a[1] == b[0] for a, b in itertools.pairwise(parts))
            assert max(hi - lo for lo, hi in parts) - min(hi - lo for lo, hi in parts) <= 1


def test_single_process_context_outside_torchrun(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert not distributed.in_torchrun()
    with distributed.init_from_env("cpu") as ctx:
        assert ctx == DistContext(device=torch.device("cpu"))
        assert ctx.is_main and not ctx.distributed
        ctx.barrier()
        ctx.check_agree([1, 2], "nothing")
        assert ctx.sum(torch.tensor(2.5)).item() == 2.5


def test_cli_arguments_round_trip(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    for changes in ({}, {"subsample_t": None, "device": None, "keep_checkpoint": True}):
        job = make_job(inputs, tmp_path, **changes)
        args = build_parser().parse_args(x2static_argv(job))
        assert x2static_job(args) == job
    # options not given keep X2Static's defaults; outputs default to the .vec's stem
    args = build_parser().parse_args(
        ["x2static", "c", "v.tsv", "--lang", "en", "--vec", str(tmp_path / "a.vec")]
    )
    job = x2static_job(args)
    assert job.args == X2StaticArgs() and job.npy_path == tmp_path / "a.npy"
    assert job.checkpoint_dir == tmp_path / "a.checkpoint"


# --------------------------------------------------------------------------- torchrun


def test_two_processes_train_what_one_does(
    inputs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = make_job(inputs, tmp_path / "one")
    stats_one = run_x2static_job(one, progress=False)
    assert stats_one is not None and stats_one["world_size"] == 1

    # The job as the workflow runs it with resources gpu=2: two visible "GPUs" make it
    # start torchrun; the workers themselves train on the CPU (gloo), as --device says.
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    two = make_job(inputs, tmp_path / "two")
    stats_two = run_x2static_job(two, gpus=2, progress=False)
    assert stats_two == read_json(two.stats_path)
    assert stats_two["world_size"] == 2 and stats_two["device"] == "cpu"
    assert {p.name for p in (tmp_path / "two").iterdir()} == OUTPUTS  # one set, no checkpoint

    np.testing.assert_allclose(vectors(two), vectors(one), rtol=0, atol=1e-5)
    for key in ("batches_done", "batches_skipped", "occurrences_seen", "targets_kept"):
        assert stats_two[key] == stats_one[key], key
    assert stats_one["kept_fraction"] < 0.95  # subsampling was exercised
    curve_one, curve_two = stats_one["curves"]["loss"], stats_two["curves"]["loss"]
    assert len(curve_two) == len(curve_one) == 8  # every 5 batches, 20 per epoch
    np.testing.assert_allclose(curve_two, curve_one, rtol=1e-5)
    np.testing.assert_allclose(
        stats_two["curves"]["epoch_loss"], stats_one["curves"]["epoch_loss"], rtol=1e-5
    )


def test_resume_across_world_sizes(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    straight = make_job(inputs, tmp_path / "straight")
    run_x2static_job(straight, progress=False)
    reference = vectors(straight)

    # two processes stop after epoch 1 (checkpoint kept); one process does epoch 2
    job = make_job(inputs, tmp_path / "a", epochs=1, keep_checkpoint=True)
    launch(x2static_argv(job, quiet=True), 2)
    state = torch.load(checkpoint_path(job.checkpoint_dir), weights_only=True)
    assert (state["epoch"], state["batch"], state["world_size"]) == (1, 0, 2)
    job = make_job(inputs, tmp_path / "a")
    stats = run_x2static_job(job, progress=False)
    assert stats is not None and stats["resumed_from"] == {"epoch": 1, "batch": 0}
    assert stats["world_size"] == 1 and not job.checkpoint_dir.exists()
    np.testing.assert_allclose(vectors(job), reference, rtol=0, atol=1e-5)

    # and the other way round: one process, then two
    job = make_job(inputs, tmp_path / "b", epochs=1, keep_checkpoint=True)
    run_x2static_job(job, progress=False)
    job = make_job(inputs, tmp_path / "b")
    launch(x2static_argv(job, quiet=True), 2)
    stats = read_json(job.stats_path)
    assert stats["resumed_from"] == {"epoch": 1, "batch": 0} and stats["world_size"] == 2
    assert {p.name for p in (tmp_path / "b").iterdir()} == OUTPUTS
    np.testing.assert_allclose(vectors(job), reference, rtol=0, atol=1e-5)


def test_failing_worker_is_a_tool_error(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    job = make_job(inputs, tmp_path)
    job.vocab_path = tmp_path / "missing.tsv"
    with pytest.raises(ToolError, match=r"torch\.distributed\.run .*exited with code 1") as err:
        launch(x2static_argv(job), 2, log_path=tmp_path / "workers.log")
    assert "missing.tsv: file not found" in str(err.value)  # the workers' own message
    assert "missing.tsv: file not found" in (tmp_path / "workers.log").read_text()
    assert not job.vec_path.exists()


def test_cli_falls_back_to_one_process(
    inputs: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    job = make_job(inputs, tmp_path, epochs=1)
    with caplog.at_level(logging.WARNING, logger="xlalign.encoders.distributed"):
        assert main([*x2static_argv(job), "--gpus", "2"]) == 0
    assert "2 GPUs requested, 1 visible" in caplog.text
    report = capsys.readouterr().out
    assert '"world_size": 1' in report
    assert {p.name for p in tmp_path.iterdir()} == OUTPUTS


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_two_gpus_train_what_one_does(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    one = make_job(inputs, tmp_path / "one", device="cuda")
    run_x2static_job(one, progress=False)
    two = make_job(inputs, tmp_path / "two", device=None)
    stats = run_x2static_job(two, gpus=2, progress=False)  # torchrun, NCCL
    assert stats is not None and stats["world_size"] == 2 and stats["device"] == "cuda:0"
    assert read_json(one.stats_path)["device"] == "cuda:0"
    np.testing.assert_allclose(vectors(two), vectors(one), rtol=0, atol=1e-4)
