"""The aggregation baseline from the teacher cache's encoder pass (one pass per corpus).

The teacher cache, given the aggregation seeds, collects each seed's sampled occurrences
while it encodes every sentence and leaves their sums beside the cache; the aggregation
then runs no encoder. These tests check the vectors equal the aggregation's own pass (up
to the float32 noise of other padded batches), that each seed keeps its own sample, that
the by-product resumes with the shards after SIGTERM and SIGKILL, and that nothing extra
is written when no seed is asked for.
"""

from __future__ import annotations

import logging
import signal
from pathlib import Path

import numpy as np
import pytest
import resume
from tiny_encoder import make_static_world

from xlalign.core import interrupt
from xlalign.corpus.vocab import read_vocab
from xlalign.static import teacher
from xlalign.static.aggregation import (
    TEACHER_SUMS,
    aggregate_vectors,
    sampled_by_line,
    vectors_from_teacher,
)
from xlalign.static.teacher import TeacherCache, build_teacher_cache
from xlalign.workflow.paths import teacher_pass_seeds

CORPUS = [
    "The cat sat on the mat .",
    "the dogs ran and the cats ran",
    "",
    "a big red sun , a small moon .",
    "unbelievable cats running on a red mat",
    "The sun and the moon .",
    "dogs sat",
    "a cat",
    "the big dog ran on the mat and the small cat sat .",
    "red sun red moon",
    "the cat and the dog sat on the red mat",
] * 2

KW = {"layer": 2, "max_length": 12, "shard_sentences": 4, "progress": False, "language": "xx"}
AGG = {"layer": 2, "max_length": 12, "language": "xx", "missing": "zero"}


@pytest.fixture(autouse=True)
def _no_request() -> None:
    interrupt.reset()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_static_world(tmp_path_factory.mktemp("world"), CORPUS)


def _sums_files(out: Path) -> list[str]:
    return sorted(p.name for p in out.glob("aggregate-seed*.npz"))


def test_teacher_pass_gives_the_aggregation_vectors_of_each_seed(
    world: dict[str, Path], tmp_path: Path
) -> None:
    vocab = read_vocab(world["vocab"])
    out = tmp_path / "cache"
    build_teacher_cache(
        world["txt"], vocab, world["enc"], out, aggregation_seeds=[5, 0], max_contexts=2, **KW
    )
    assert _sums_files(out) == ["aggregate-seed0.npz", "aggregate-seed5.npz"]
    assert not list(out.glob("shard-*.agg.npz"))  # the shards' samples are summed, then removed
    assert TeacherCache(out).meta["aggregation_sums"] == {
        "0": "aggregate-seed0.npz",
        "5": "aggregate-seed5.npz",
    }
    # a max_length of 12 subwords cuts the longest sentences: dropped occurrences too
    got = {}
    for seed in (0, 5):
        own = aggregate_vectors(world["txt"], vocab, world["enc"], max_contexts=2, seed=seed, **AGG)
        got[seed] = vectors_from_teacher(
            out, world["txt"], vocab, world["enc"], max_contexts=2, seed=seed, **AGG
        )
        assert got[seed] is not None
        assert np.count_nonzero(own.any(axis=1)) > 10
        np.testing.assert_array_equal(own.any(axis=1), got[seed].any(axis=1))
        # other padded batches: float32 noise only
        np.testing.assert_allclose(got[seed], own, rtol=1e-5, atol=1e-6)
    # each seed its own sample: words with more than 2 occurrences get other contexts
    a = sampled_by_line(world["txt"], vocab, max_contexts=2, seed=0)
    b = sampled_by_line(world["txt"], vocab, max_contexts=2, seed=5)
    assert a != b
    assert np.abs(got[0] - got[5]).max() > 1e-3


def test_other_settings_fall_back_to_the_aggregations_own_pass(
    world: dict[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vocab = read_vocab(world["vocab"])
    out = tmp_path / "cache"
    build_teacher_cache(
        world["txt"], vocab, world["enc"], out, aggregation_seeds=[1], max_contexts=2, **KW
    )
    with caplog.at_level(logging.INFO, logger="xlalign.static.aggregation"):
        for changed in ({"max_contexts": 3, "seed": 1}, {"max_contexts": 2, "seed": 2}):
            assert (
                vectors_from_teacher(out, world["txt"], vocab, world["enc"], **{**AGG, **changed})
                is None
            )
        assert (
            vectors_from_teacher(
                out,
                world["txt"],
                vocab,
                world["enc"],
                **{**AGG, "max_length": 20, "seed": 1, "max_contexts": 2},
            )
            is None
        )
    assert "aggregate-seed2.npz: not found" in caplog.text
    assert "aggregate-seed1.npz: for other inputs or settings" in caplog.text


def test_without_aggregation_seeds_nothing_extra_is_written(
    world: dict[str, Path], tmp_path: Path
) -> None:
    vocab = read_vocab(world["vocab"])
    plain, code = tmp_path / "plain", tmp_path / "code"
    build_teacher_cache(world["txt"], vocab, world["enc"], plain, **KW)
    names = {p.name for p in plain.iterdir()}
    n_shards = -(-len(CORPUS) // 4)
    expected = {
        f"shard-{k:05d}.{x}"
        for k in range(n_shards)
        for x in ("ctx.npy", "ids.npy", "stats.json", "offsets.npy")
    }
    assert names == expected | {"meta.json"}
    assert TeacherCache(plain).meta["aggregation_sums"] == {}
    # x2static-code pools no word vectors: no sums, the aggregation runs on its own
    build_teacher_cache(
        world["txt"],
        vocab,
        world["enc"],
        code,
        context="x2static-code",
        aggregation_seeds=[1],
        **KW,
    )
    assert not _sums_files(code) and not list(code.glob("*.agg.npz"))


_TEACHER = """
import json
from xlalign.static import teacher
from xlalign.corpus.vocab import read_vocab
resume.pause_after(teacher, "_build_shard", flag=ARGS["flag"],
                   when=lambda out, k, *a, **kw: k == int(ARGS["pause_at"]))
teacher.build_teacher_cache(ARGS["txt"], read_vocab(ARGS["vocab"]), ARGS["enc"], ARGS["out"],
                            aggregation_seeds=json.loads(ARGS["seeds"]), max_contexts=2,
                            **json.loads(ARGS["kw"]))
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_the_sums_resume_with_the_shards(
    world: dict[str, Path], tmp_path: Path, sig: int, caplog: pytest.LogCaptureFixture
) -> None:
    import json

    out = tmp_path / "cache"
    args = {**{k: str(v) for k, v in world.items()}, "out": str(out), "kw": json.dumps(KW)}
    # the child's threads are this process's: its shard's sums are compared with ours
    stopped = resume.run_and_stop(
        _TEACHER, {**args, "pause_at": "1", "seeds": "[3, 4]", "threads": None}, tmp_path, sig
    )
    assert stopped.returncode == resume.expect_exit(sig), stopped.log
    assert teacher._shard_complete(out, 1) and not teacher._shard_complete(out, 2)
    assert (out / "shard-00001.agg.npz").is_file()  # written with the shard, before its offsets
    resume.assert_nothing_finished([out / "meta.json", out / "aggregate-seed3.npz"], [out])

    vocab = read_vocab(world["vocab"])
    with caplog.at_level(logging.INFO, logger="xlalign.static.teacher"):
        build_teacher_cache(
            world["txt"], vocab, world["enc"], out, aggregation_seeds=[3, 4], max_contexts=2, **KW
        )
    assert "resuming at shard 2 of 6" in caplog.text
    straight = tmp_path / "straight"
    build_teacher_cache(
        world["txt"], vocab, world["enc"], straight, aggregation_seeds=[3, 4], max_contexts=2, **KW
    )
    for seed in (3, 4):
        name = TEACHER_SUMS.format(seed=seed)
        with np.load(out / name) as a, np.load(straight / name) as b:
            np.testing.assert_array_equal(a["sums"], b["sums"])
            np.testing.assert_array_equal(a["n"], b["n"])
            assert a["n"].sum() > 0
    assert not list(out.glob("*.agg.npz")) and not resume.leftover_temporaries(out)


def test_shards_built_without_the_samples_are_encoded_again(
    world: dict[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import json

    out = tmp_path / "cache"
    args = {**{k: str(v) for k, v in world.items()}, "out": str(out), "kw": json.dumps(KW)}
    # a build without aggregation stopped after shard 2, resumed with a seed
    stopped = resume.run_and_stop(
        _TEACHER, {**args, "pause_at": "2", "seeds": "[]"}, tmp_path, signal.SIGTERM
    )
    assert stopped.returncode == resume.SIGTERM_STATUS, stopped.log
    assert teacher._shard_complete(out, 0) and not (out / "shard-00000.agg.npz").exists()
    vocab = read_vocab(world["vocab"])
    with caplog.at_level(logging.INFO, logger="xlalign.static.teacher"):
        build_teacher_cache(
            world["txt"], vocab, world["enc"], out, aggregation_seeds=[3], max_contexts=2, **KW
        )
    assert "resuming at shard" not in caplog.text  # shard 0 lacked the samples
    assert TeacherCache(out).meta["sentences_encoded_this_run"] == len(CORPUS)
    got = vectors_from_teacher(
        out, world["txt"], vocab, world["enc"], max_contexts=2, seed=3, **AGG
    )
    own = aggregate_vectors(world["txt"], vocab, world["enc"], max_contexts=2, seed=3, **AGG)
    assert got is not None
    np.testing.assert_allclose(got, own, rtol=1e-5, atol=1e-6)


def _cfg(corpus_seed: object, enabled: bool, init: str) -> dict[str, object]:
    return {
        "seeds": [3, 1, 2],
        "corpus": {"seed": corpus_seed},
        "extract": {"aggregation": {"enabled": enabled, "max_contexts": 3}, "init": init},
    }


def test_the_teacher_pass_collects_the_seeds_of_its_corpus_only_when_asked() -> None:
    # one shared corpus: every training seed's sample is taken in its one pass
    assert teacher_pass_seeds(_cfg(0, True, "uniform"), 0) == [1, 2, 3]
    # a corpus per seed: each pass takes its own seed
    assert teacher_pass_seeds(_cfg("run", True, "uniform"), 2) == [2]
    assert teacher_pass_seeds(_cfg("run", True, "uniform"), 7) == []
    # init: aggregation needs them even with the baseline off
    assert teacher_pass_seeds(_cfg(0, False, "aggregation"), 0) == [1, 2, 3]
    # neither: the pass collects nothing (and writes nothing extra)
    assert teacher_pass_seeds(_cfg(0, False, "uniform"), 0) == []
