"""Kill and resume the static-vector jobs: teacher cache, X2Static, aggregation.

Each test stops a child run with SIGTERM part-way (exit status 143, checkpoint written on
the way out), finishes it in this process, and checks the result equals an uninterrupted
run with the same seed and that nothing finished-looking was left (see tests/resume.py).
For aggregation a resumed child is also killed with SIGKILL on the way; the teacher's and
X2Static's SIGKILL tests are in test_teacher.py and test_x2static.py.
"""

from __future__ import annotations

import dataclasses
import logging
import signal
from pathlib import Path

import numpy as np
import pytest
import resume
import torch
from synthetic_cache import ArrayCache, synthetic
from tiny_encoder import make_static_world

from xlalign.core import interrupt
from xlalign.corpus.vocab import read_vocab, write_vocab
from xlalign.static import aggregation, teacher
from xlalign.static.aggregation import aggregate_vectors
from xlalign.static.teacher import TeacherCache, build_teacher_cache
from xlalign.static.x2static import X2StaticArgs, checkpoint_path, train_x2static

CORPUS = [
    "The cat sat on the mat .",
    "the dogs ran and the cats ran",
    "a big red sun , a small moon .",
    "unbelievable cats running on a red mat",
    "The sun and the moon .",
    "dogs sat",
    "a cat",
    "the big dog ran on the mat and the small cat sat .",
    "red sun red moon",
] * 3


@pytest.fixture(autouse=True)
def _no_request() -> None:
    interrupt.reset()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_static_world(tmp_path_factory.mktemp("world"), CORPUS)


def _args(world: dict[str, Path], **more: object) -> dict[str, str]:
    return {**{k: str(v) for k, v in world.items()}, **{k: str(v) for k, v in more.items()}}


# --------------------------------------------------------------------------- teacher

_TEACHER = """
from xlalign.static import teacher
from xlalign.corpus.vocab import read_vocab
resume.pause_after(teacher, "_build_shard", flag=ARGS["flag"],
                   when=lambda out, k, *a, **kw: k == int(ARGS["pause_at"]))
teacher.build_teacher_cache(ARGS["txt"], read_vocab(ARGS["vocab"]), ARGS["enc"], ARGS["out"],
                            layer=2, shard_sentences=3, progress=False, language="xx")
"""


def test_teacher_cache_resumes_after_sigterm(
    world: dict[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "cache"
    stopped = resume.run_and_stop(
        _TEACHER, _args(world, out=out, pause_at=1), tmp_path, signal.SIGTERM
    )
    assert stopped.returncode == resume.SIGTERM_STATUS, stopped.log
    assert "stopped with 2 of 9 shards complete" in stopped.log
    assert "stopped by SIGTERM" in stopped.log
    assert teacher._shard_complete(out, 1) and not teacher._shard_complete(out, 2)
    resume.assert_nothing_finished([out / "meta.json"], [out])

    vocab = read_vocab(world["vocab"])
    kw = {"layer": 2, "shard_sentences": 3, "progress": False}
    with caplog.at_level(logging.INFO, logger="xlalign.static.teacher"):
        build_teacher_cache(world["txt"], vocab, world["enc"], out, **kw)
    assert "resuming at shard 2 of 9" in caplog.text
    build_teacher_cache(world["txt"], vocab, world["enc"], tmp_path / "straight", **kw)
    resumed, straight = TeacherCache(out), TeacherCache(tmp_path / "straight")
    assert resumed.meta["counts"] == straight.meta["counts"]
    assert resumed.meta["sentences_encoded_this_run"] == 21  # shards 2..8 only
    a, b = resumed.batch(np.arange(len(CORPUS))), straight.batch(np.arange(len(CORPUS)))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not (out / teacher.BUILD_FILE).exists() and not resume.leftover_temporaries(out)


# --------------------------------------------------------------------------- X2Static

FAST = X2StaticArgs(
    epochs=2,
    batch_sentences=8,
    negatives=5,
    subsample_t=None,
    lr=0.02,
    seed=3,
    checkpoint_every_batches=5,
    checkpoint_minutes=0,  # every chance: the tests kill and resume
    log_every=7,
    device="cpu",
)

_X2STATIC = """
import dataclasses, numpy as np
from synthetic_cache import ArrayCache
from xlalign.core.io import atomic_open
from xlalign.corpus.vocab import read_vocab
from xlalign.static import x2static
resume.pause_after(x2static, "_save_checkpoint", flag=ARGS["flag"], nth=int(ARGS["nth"]))
args = x2static.X2StaticArgs(**json.loads(ARGS["args"]))
result = x2static.train_x2static(ArrayCache.load(ARGS["cache"]), read_vocab(ARGS["vocab"]),
                                 args, output_dir=ARGS["run"], progress=False)
with atomic_open(ARGS["out"], "wb") as fh:
    np.save(fh, result.vectors)
"""


def test_x2static_resumes_after_sigterm(tmp_path: Path) -> None:
    import json

    cache, vocab, _ = synthetic(n_sent=160)  # 20 batches per epoch, 40 in all
    npz, vocab_path = tmp_path / "cache.npz", tmp_path / "vocab.tsv"
    cache.save(npz)
    write_vocab(vocab, vocab_path)
    run, out = tmp_path / "run", tmp_path / "vectors.npy"
    ckpt = checkpoint_path(run)
    args = {
        "cache": npz,
        "vocab": vocab_path,
        "run": run,
        "out": out,
        "args": json.dumps(dataclasses.asdict(FAST)),
    }
    # SIGTERM while the 2nd checkpoint (batch 10) is being written: the job finishes that
    # batch boundary, writes its checkpoint and exits 143.
    stopped = resume.run_and_stop(_X2STATIC, _args(args, nth=2), tmp_path, signal.SIGTERM)
    assert stopped.returncode == resume.SIGTERM_STATUS, stopped.log
    assert "checkpoint at epoch 0, batch 10" in stopped.log
    state = torch.load(ckpt, map_location="cpu", weights_only=True)
    assert (state["epoch"], state["batch"]) == (0, 10)
    resume.assert_nothing_finished([out], [run, ckpt.parent])

    resumed = train_x2static(
        ArrayCache.load(npz), read_vocab(vocab_path), FAST, output_dir=run, progress=False
    )
    assert resumed.stats["resumed_from"] == {"epoch": 0, "batch": 10}
    assert not ckpt.parent.exists()
    straight = train_x2static(cache, vocab, FAST, output_dir=tmp_path / "straight", progress=False)
    np.testing.assert_array_equal(resumed.vectors, straight.vectors)  # bit-identical on CPU
    assert resumed.epoch_losses == pytest.approx(straight.epoch_losses, rel=1e-12)
    assert resumed.stats["targets_kept"] == straight.stats["targets_kept"]


# --------------------------------------------------------------------------- aggregation

_AGGREGATE = """
import numpy as np
from xlalign.core.io import atomic_open
from xlalign.corpus.vocab import read_vocab
from xlalign.static import aggregation
resume.pause_after(aggregation, "_save_checkpoint", flag=ARGS["flag"], nth=int(ARGS["nth"]))
vectors = aggregation.aggregate_vectors(
    ARGS["txt"], read_vocab(ARGS["vocab"]), ARGS["enc"], layer=2, max_contexts=3, seed=7,
    chunk_sentences=2, missing="zero", checkpoint_dir=ARGS["ckpt"], checkpoint_seconds=0,
    progress=False, language="xx")
with atomic_open(ARGS["out"], "wb") as fh:
    np.save(fh, vectors)
"""


def test_aggregation_resumes_after_sigterm_and_sigkill(
    world: dict[str, Path], tmp_path: Path
) -> None:
    ckpt_dir, out = tmp_path / "agg.checkpoint", tmp_path / "agg.npy"
    args = _args(world, ckpt=ckpt_dir, out=out)
    ckpt = ckpt_dir / aggregation.CHECKPOINT_FILE

    def chunks_done() -> int:
        with np.load(ckpt, allow_pickle=False) as z:
            return int(__import__("json").loads(str(z["state"]))["chunks_done"])

    stopped = resume.run_and_stop(_AGGREGATE, {**args, "nth": "2"}, tmp_path, signal.SIGTERM)
    assert stopped.returncode == resume.SIGTERM_STATUS, stopped.log
    assert "stopped by SIGTERM" in stopped.log and chunks_done() == 2
    resume.assert_nothing_finished([out], [ckpt_dir])

    stopped = resume.run_and_stop(_AGGREGATE, {**args, "nth": "2"}, tmp_path, signal.SIGKILL)
    assert stopped.returncode == -signal.SIGKILL
    assert "resuming after chunk 2" in stopped.log and chunks_done() == 4
    resume.assert_nothing_finished([out], [ckpt_dir])

    vocab = read_vocab(world["vocab"])
    kw = {"layer": 2, "max_contexts": 3, "seed": 7, "chunk_sentences": 2, "missing": "zero"}
    stats: dict[str, object] = {}
    resumed = aggregate_vectors(
        world["txt"], vocab, world["enc"], checkpoint_dir=ckpt_dir, stats_out=stats, **kw
    )
    assert stats["resumed_from_chunk"] == 4 and int(stats["chunks"]) > 5  # type: ignore[arg-type]
    assert not ckpt_dir.exists()
    straight = aggregate_vectors(world["txt"], vocab, world["enc"], **kw)
    np.testing.assert_array_equal(resumed, straight)


def test_aggregation_checkpoint_of_other_inputs_is_ignored(
    world: dict[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vocab = read_vocab(world["vocab"])
    kw = {"layer": 2, "max_contexts": 3, "chunk_sentences": 2, "missing": "zero"}
    ckpt_dir = tmp_path / "ckpt"
    ckpt_dir.mkdir()
    # a checkpoint of seed 1 (same shapes) planted where seed 2 runs
    fp = aggregation._fingerprint(world["txt"], vocab, world["enc"], seed=1)
    aggregation._save_checkpoint(
        ckpt_dir / aggregation.CHECKPOINT_FILE,
        {"format": 1, "fingerprint": fp, "chunks_done": 3, "dropped": 0},
        np.ones((len(vocab), 16)),
        np.ones(len(vocab), dtype=np.int64),
    )
    with caplog.at_level(logging.WARNING):
        got = aggregate_vectors(
            world["txt"], vocab, world["enc"], seed=2, checkpoint_dir=ckpt_dir, **kw
        )
    assert "checkpoint is for another corpus" in caplog.text
    np.testing.assert_array_equal(
        got, aggregate_vectors(world["txt"], vocab, world["enc"], seed=2, **kw)
    )


def test_aggregation_kept_checkpoint_makes_a_rerun_return_at_once(
    world: dict[str, Path], tmp_path: Path
) -> None:
    vocab = read_vocab(world["vocab"])
    kw = {"layer": 2, "max_contexts": 3, "chunk_sentences": 4, "missing": "zero"}
    ckpt_dir = tmp_path / "ckpt"
    first = aggregate_vectors(
        world["txt"], vocab, world["enc"], checkpoint_dir=ckpt_dir, keep_checkpoint=True, **kw
    )
    assert (ckpt_dir / aggregation.CHECKPOINT_FILE).exists()  # until the caller saved
    stats: dict[str, object] = {}
    again = aggregate_vectors(
        world["txt"], vocab, world["enc"], checkpoint_dir=ckpt_dir, stats_out=stats, **kw
    )
    assert stats["resumed_from_chunk"] == stats["chunks"]  # nothing encoded again
    np.testing.assert_array_equal(first, again)
    assert not ckpt_dir.exists()


def test_x2static_stop_request_checkpoints_at_the_next_batch(tmp_path: Path) -> None:
    cache, vocab, _ = synthetic(n_sent=80)
    interrupt._state["requested"] = signal.SIGTERM  # as if SIGTERM came during batch 0
    with pytest.raises(interrupt.Preempted, match="x2static, checkpoint"):
        train_x2static(cache, vocab, FAST, output_dir=tmp_path / "run", progress=False)
    interrupt.reset()
    state = torch.load(checkpoint_path(tmp_path / "run"), map_location="cpu", weights_only=True)
    assert (state["epoch"], state["batch"]) == (0, 1)
    resumed = train_x2static(cache, vocab, FAST, output_dir=tmp_path / "run", progress=False)
    straight = train_x2static(cache, vocab, FAST, output_dir=tmp_path / "b", progress=False)
    assert resumed.stats["resumed_from"] == {"epoch": 0, "batch": 1}
    np.testing.assert_array_equal(resumed.vectors, straight.vectors)
