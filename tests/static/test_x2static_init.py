"""X2Static's optional start from given vectors (``init="vectors"``, config ``extract.init:
aggregation``): which rows start where, argument checks, checkpoint fingerprints, the CLI.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from synthetic_cache import synthetic

from xlalign.cli import build_parser, x2static_job
from xlalign.core.errors import ConfigError, InputError
from xlalign.static.vectors import write_npy
from xlalign.static.x2static import (
    X2StaticArgs,
    X2StaticJob,
    initial_weights,
    train_x2static,
    training_fingerprint,
    x2static_argv,
)

ARGS = X2StaticArgs(
    epochs=1,
    batch_sentences=8,
    negatives=3,
    subsample_t=None,
    lr=1e-12,  # the vectors stay where they started
    seed=2,
    checkpoint_every_batches=0,
    device="cpu",
)


def _space(tmp_path: Path, words: list[str], rows: np.ndarray, name: str = "init") -> Path:
    write_npy(words, rows.astype(np.float32), tmp_path / name)
    return tmp_path / f"{name}.npy"


def test_words_of_the_space_start_from_its_rows_the_others_uniformly(tmp_path: Path) -> None:
    cache, vocab, _ = synthetic(n_sent=40, dim=16)
    rng = np.random.default_rng(0)
    given = rng.standard_normal((10, cache.dim)) * 3
    # the first ten vocabulary words (written in upper case: matched after lowercasing)
    # plus a word the vocabulary lacks
    words = [w.upper() for w in vocab.words[:10]] + ["unknown"]
    path = _space(tmp_path, words, np.vstack([given, np.ones((1, cache.dim))]))
    args = dataclasses.replace(ARGS, init="vectors", init_vectors=str(path))
    res = train_x2static(cache, vocab, args, output_dir=tmp_path / "o", progress=False)
    np.testing.assert_allclose(res.vectors[:10], given, atol=1e-6)
    uniform = initial_weights(len(vocab), cache.dim, ARGS.seed).numpy()
    np.testing.assert_allclose(res.vectors[10:], uniform[10:], atol=1e-6)
    assert res.stats["init"] == "vectors" and res.stats["init_rows_from_vectors"] == 10
    # X2Static's default is untouched: the uniform draw
    plain = train_x2static(cache, vocab, ARGS, output_dir=tmp_path / "p", progress=False)
    np.testing.assert_allclose(plain.vectors, uniform, atol=1e-6)
    assert plain.stats["init_rows_from_vectors"] == 0


def test_training_from_given_vectors_still_learns(tmp_path: Path) -> None:
    cache, vocab, _ = synthetic(n_sent=200, dim=16)
    start = np.random.default_rng(1).standard_normal((len(vocab), cache.dim))
    path = _space(tmp_path, vocab.words, start)
    args = dataclasses.replace(ARGS, lr=0.02, epochs=3, init="vectors", init_vectors=str(path))
    res = train_x2static(cache, vocab, args, output_dir=tmp_path / "o", progress=False)
    assert not np.allclose(res.vectors, start, atol=1e-3)
    assert res.epoch_losses[-1] < res.epoch_losses[0]


def test_bad_init_arguments_and_spaces(tmp_path: Path) -> None:
    cache, vocab, _ = synthetic(n_sent=20, dim=16)
    with pytest.raises(ConfigError, match=r"x2static\.init_vectors"):
        train_x2static(cache, vocab, dataclasses.replace(ARGS, init="vectors"), output_dir=tmp_path)
    with pytest.raises(ConfigError, match=r"x2static\.init_vectors"):
        train_x2static(
            cache, vocab, dataclasses.replace(ARGS, init_vectors="x.npy"), output_dir=tmp_path
        )
    wrong_dim = _space(tmp_path, vocab.words, np.ones((len(vocab), 8)), "small")
    with pytest.raises(InputError, match=r"small\.npy.*dimension 8, expected 16"):
        train_x2static(
            cache,
            vocab,
            dataclasses.replace(ARGS, init="vectors", init_vectors=str(wrong_dim)),
            output_dir=tmp_path,
        )
    foreign = _space(tmp_path, ["zz", "yy"], np.ones((2, 16)), "foreign")
    with pytest.raises(InputError, match=r"foreign\.npy.*share no word"):
        train_x2static(
            cache,
            vocab,
            dataclasses.replace(ARGS, init="vectors", init_vectors=str(foreign)),
            output_dir=tmp_path,
        )


def test_fingerprint_follows_the_initial_vectors_not_their_path(tmp_path: Path) -> None:
    cache, vocab, _ = synthetic(n_sent=20, dim=16)
    a = dataclasses.replace(ARGS, init="vectors", init_vectors="a.npy")
    b = dataclasses.replace(ARGS, init="vectors", init_vectors="b.npy")
    ones, twos = np.ones((len(vocab), 16)), 2 * np.ones((len(vocab), 16))
    assert training_fingerprint(cache, vocab, a, ones) == training_fingerprint(
        cache, vocab, b, ones
    )
    assert training_fingerprint(cache, vocab, a, ones) != training_fingerprint(
        cache, vocab, a, twos
    )
    assert training_fingerprint(cache, vocab, ARGS) != training_fingerprint(cache, vocab, a, ones)


def test_cli_arguments_round_trip_with_init_vectors(tmp_path: Path) -> None:
    job = X2StaticJob(
        cache_dir=tmp_path / "cache",
        vocab_path=tmp_path / "v.tsv",
        vec_path=tmp_path / "o.vec",
        npy_path=tmp_path / "o.npy",
        stats_path=tmp_path / "o.json",
        checkpoint_dir=tmp_path / "o.checkpoint",
        language="de",
        args=X2StaticArgs(init="vectors", init_vectors=str(tmp_path / "agg.npy")),
    )
    assert x2static_job(build_parser().parse_args(x2static_argv(job))) == job
