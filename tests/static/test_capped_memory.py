"""The static stage's memory stays within its budget (issue 28): under a capped address
space (tests/capped.py) at sizes where the unbounded way does not fit, the teacher's pass,
X2Static's reading of the cache and the aggregation sample run, with the results of an
uncapped run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from capped import run_capped
from capped_targets_static import (
    WARM_UP_ENV,
    WIDE_DIM,
    build_teacher,
    make_wide_encoder,
    read_epoch,
    sample_as_tuples_unbounded,
    word_corpus,
    write_random_cache,
)

from xlalign.corpus.vocab import build_vocab, write_vocab
from xlalign.static.aggregation import sample_lines, sampled_by_line

TARGETS = "capped_targets_static"


@pytest.fixture(scope="module")
def teacher_world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("capped-teacher")
    # ~92k words: their float32 vectors at width 256 are ~94 MB, over the cap's 40
    txt = word_corpus(root / "c.txt", n_words=300, sentences=3000, length=30)
    write_vocab(build_vocab(txt, min_count=1, max_size=None, language="xx"), root / "v.tsv")
    enc = make_wide_encoder(root / "enc", [f"w{i}" for i in range(300)])
    return {"root": str(root), "txt": str(txt), "vocab": str(root / "v.tsv"), "enc": str(enc)}


def _teacher_kwargs(world: dict[str, str], out: Path, budget_mb: float) -> dict:
    return {
        "sentences_path": world["txt"],
        "vocab_path": world["vocab"],
        "encoder_dir": world["enc"],
        "out_dir": str(out),
        "layer": 1,
        "batch_tokens": 2048,
        "budget_mb": budget_mb,
    }


def _arrays(cache: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return tuple(np.load(cache / f"shard-00000.{name}.npy") for name in ("ids", "ctx", "offsets"))


def test_the_teacher_pass_encodes_a_shard_in_chunks_of_the_budget(
    teacher_world: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    monkeypatch.setenv(WARM_UP_ENV, teacher_world["enc"])  # model code loaded before the cap
    ref = tmp_path / "uncapped"
    build_teacher(**_teacher_kwargs(teacher_world, ref, 4))
    ids, ctx, offsets = _arrays(ref)
    # the one shard's word vectors at once (what the pass held before): over the cap
    assert offsets[-1] > 80_000 and ctx.shape[1] == WIDE_DIM
    unchunked = run_capped(
        f"{TARGETS}:build_teacher",
        _teacher_kwargs(teacher_world, tmp_path / "whole", 10_000),
        headroom_mb=40,
    )
    assert not unchunked.ok, "one chunk of the whole shard fits the cap: make it larger"
    assert unchunked.out_of_memory, unchunked.error
    chunked = run_capped(
        f"{TARGETS}:build_teacher",
        _teacher_kwargs(teacher_world, tmp_path / "capped", 4),
        headroom_mb=40,
    )
    assert chunked.ok, chunked.error
    got = _arrays(tmp_path / "capped")
    for a, b in zip(got, (ids, ctx, offsets), strict=True):
        np.testing.assert_array_equal(a, b)
    # the chunks change only the padded batches: float32 noise against one chunk
    whole = tmp_path / "whole-uncapped"
    build_teacher(**_teacher_kwargs(teacher_world, whole, 10_000))
    w_ids, w_ctx, w_offsets = _arrays(whole)
    np.testing.assert_array_equal(w_ids, ids)
    np.testing.assert_array_equal(w_offsets, offsets)
    np.testing.assert_allclose(w_ctx.astype(np.float32), ctx.astype(np.float32), atol=2e-3)


def test_x2static_reads_the_cache_without_mapping_it(tmp_path: Path) -> None:
    # 4,000 sentences x 40 occurrences x 256 dims in float16: an 82 MB cache
    cache = write_random_cache(
        tmp_path / "cache", n_words=500, dim=256, sentences=4000, per_sentence=40,
        shard_sentences=500,
    )  # fmt: skip
    mapped = run_capped(
        f"{TARGETS}:map_every_shard_unbounded", {"cache_dir": str(cache)}, headroom_mb=40
    )
    assert not mapped.ok, "the memory maps of the whole cache fit the cap: make it larger"
    capped = run_capped(f"{TARGETS}:read_epoch", {"cache_dir": str(cache)}, headroom_mb=40)
    assert capped.ok, capped.error
    assert capped.value == read_epoch(str(cache))


def test_the_aggregation_sample_is_compact_arrays(tmp_path: Path) -> None:
    # 60,000 words x K = 10: 600k sampled occurrences
    txt = word_corpus(tmp_path / "s.txt", n_words=60_000, sentences=20_000, length=30)
    vocab = build_vocab(txt, min_count=1, max_size=None, language="xx")
    kwargs = {"sentences_path": str(txt), "vocab": vocab, "max_contexts": 10, "seed": 1}
    as_tuples = run_capped(f"{TARGETS}:sample_as_tuples_unbounded", kwargs, headroom_mb=80)
    assert not as_tuples.ok, "the Python tuples fit the cap: make the vocabulary larger"
    compact = run_capped(f"{TARGETS}:sample_compact", kwargs, headroom_mb=80)
    assert compact.ok, compact.error
    assert compact.value == sample_as_tuples_unbounded(**kwargs)


def test_the_compact_sample_reads_as_the_dict(tmp_path: Path) -> None:
    txt = word_corpus(tmp_path / "s.txt", n_words=50, sentences=200, length=8)
    vocab = build_vocab(txt, min_count=1, max_size=None, language="xx")
    compact = sample_lines(txt, vocab, max_contexts=3, seed=4)
    as_dict = sampled_by_line(txt, vocab, max_contexts=3, seed=4)
    assert len(compact) == len(as_dict)
    for line in range(-1, 202):
        assert (line in compact) == (line in as_dict)
        assert compact.get(line) == as_dict.get(line, ())
    subset = [3, 9, 10, 150]
    assert sample_lines(txt, vocab, max_contexts=3, seed=4, lines=subset).as_dict() == (
        sampled_by_line(txt, vocab, max_contexts=3, seed=4, lines=set(subset))
    )
