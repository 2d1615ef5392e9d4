"""The learning curve's sizes, cache views and per-size aggregation sums, and its resume.

The sizes are nested seeded subsets; a :class:`CacheView` of the run's teacher cache gives
what a cache built on a size's lines and vocabulary holds; the teacher's pass leaves each
size's aggregation sums, equal to the aggregation run on a file of only those lines; a
re-run after a finished size skips it.
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from tiny_encoder import make_static_world

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import read_json
from xlalign.corpus.vocab import build_vocab, read_vocab
from xlalign.learning_curve import curve as lc
from xlalign.static.aggregation import (
    aggregate_vectors,
    mean_vectors,
    read_teacher_sums,
    sampled_by_line,
    save_aggregated,
)
from xlalign.static.teacher import TeacherCache, build_teacher_cache

CORPUS = [
    "The cat sat on the mat .",
    "the dogs ran and the cats ran",
    "a big red sun , a small moon .",
    "unbelievable cats running on a red mat",
    "The sun and the moon .",
    "dogs sat on a mat",
    "a cat and a dog",
    "the big dog ran on the mat and the small cat sat .",
    "red sun red moon",
    "the cat and the dog sat on the red mat",
] * 3

KW = {"layer": 2, "max_length": 12, "shard_sentences": 7, "progress": False, "language": "xx"}
AGG = {"layer": 2, "pooling": "mean", "max_length": 12, "max_contexts": 2}
VOCAB = {"min_count": 1, "max_size": None, "lowercase": True}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_static_world(tmp_path_factory.mktemp("world"), CORPUS)


def _subset_file(txt: Path, lines: np.ndarray, out: Path) -> Path:
    all_lines = txt.read_text(encoding="utf-8").splitlines()
    out.write_text("".join(all_lines[i] + "\n" for i in lines), encoding="utf-8")
    return out


def test_sizes_are_nested_seeded_subsets() -> None:
    sizes = lc.size_lines(1000, [0.1, 0.25, 0.5], seed=3)
    assert [s.lines.size for s in sizes] == [100, 250, 500]
    assert [s.name for s in sizes] == ["lines100", "lines250", "lines500"]
    for small, big in pairwise(sizes):
        assert set(small.lines) < set(big.lines)
    assert all(np.all(np.diff(s.lines) > 0) for s in sizes)
    # not a prefix: spread over the corpus; same seed, same lines; another seed, others
    assert sizes[0].lines.max() > 500
    np.testing.assert_array_equal(lc.size_lines(1000, [0.1], seed=3)[0].lines, sizes[0].lines)
    assert set(lc.size_lines(1000, [0.1], seed=4)[0].lines) != set(sizes[0].lines)


@pytest.mark.parametrize("bad", [[], [0.5, 0.25], [0.0, 0.5], [0.5, 1.0], [0.5, 0.5], [True]])
def test_bad_fractions_are_refused(bad: list[float]) -> None:
    with pytest.raises(ConfigError, match=r"learning_curve\.fractions"):
        lc.check_fractions(bad)


def test_size_vocab_is_the_recipe_over_the_lines(world: dict[str, Path], tmp_path: Path) -> None:
    lines = np.array([0, 2, 5, 8], dtype=np.int64)
    sub = _subset_file(world["txt"], lines, tmp_path / "sub.txt")
    for min_count in (1, 2):
        want = build_vocab(sub, min_count=min_count, max_size=None, language="xx")
        got = lc.size_vocab(world["txt"], lines, **{**VOCAB, "min_count": min_count})
        assert got.words == want.words
        np.testing.assert_array_equal(got.counts, want.counts)
    with pytest.raises(InputError, match="min_count=99"):
        lc.size_vocab(world["txt"], lines, **{**VOCAB, "min_count": 99})


def test_sampling_within_lines_is_the_sample_of_a_file_of_them(
    world: dict[str, Path], tmp_path: Path
) -> None:
    lines = lc.size_lines(len(CORPUS), [0.4], seed=1)[0].lines
    sub = _subset_file(world["txt"], lines, tmp_path / "sub.txt")
    vocab = lc.size_vocab(world["txt"], lines, **VOCAB)
    own = sampled_by_line(sub, vocab, max_contexts=2, seed=7)
    within = sampled_by_line(world["txt"], vocab, max_contexts=2, seed=7, lines=lines)
    assert within == {int(lines[i]): v for i, v in own.items()}


def test_the_teacher_pass_leaves_each_sizes_aggregation_sums(
    world: dict[str, Path], tmp_path: Path
) -> None:
    vocab = read_vocab(world["vocab"])
    out = tmp_path / "cache"
    fractions = [0.3, 0.6]

    def collect() -> list:
        return lc.size_collectors(
            world["txt"],
            world["enc"],
            out,
            seeds=[0],
            fractions=fractions,
            subset_seed=2,
            vocab_opts=VOCAB,
            language="xx",
            **{k: AGG[k] for k in ("layer", "pooling", "max_length", "max_contexts")},
        )

    collectors = collect()
    assert [c.key for c in collectors] == ["0-lines9", "0-lines18"]
    build_teacher_cache(
        world["txt"],
        vocab,
        world["enc"],
        out,
        aggregation_seeds=[0],
        max_contexts=2,
        subset_collectors=collectors,
        **KW,
    )
    assert sorted(p.name for p in out.glob("aggregate-seed*.npz")) == [
        "aggregate-seed0-lines18.npz",
        "aggregate-seed0-lines9.npz",
        "aggregate-seed0.npz",
    ]
    assert not list(out.glob("shard-*.agg.npz"))
    for size in lc.size_lines(len(CORPUS), fractions, seed=2):
        sub = _subset_file(world["txt"], size.lines, tmp_path / f"{size.name}.txt")
        size_vocab = lc.size_vocab(world["txt"], size.lines, **VOCAB)
        own = aggregate_vectors(
            sub, size_vocab, world["enc"], seed=0, language="xx", missing="zero", **AGG
        )
        fp = lc.size_sums_fingerprint(
            world["txt"], size_vocab, world["enc"], size.lines, seed=0, dtype="float32", **AGG
        )
        found = read_teacher_sums(out, 0, fp, subset=size.name)
        assert found is not None
        # another line set is another fingerprint: not read as this size's
        other = lc.size_sums_fingerprint(
            world["txt"], size_vocab, world["enc"], size.lines[1:], seed=0, dtype="float32", **AGG
        )
        assert read_teacher_sums(out, 0, other, subset=size.name, quiet=True) is None
        got = mean_vectors(
            *found[:2], size_vocab, dropped=found[2], max_length=12, missing="zero", where="t"
        )
        assert np.count_nonzero(own.any(axis=1)) > 5
        np.testing.assert_allclose(got, own, rtol=1e-5, atol=1e-6)
    # the sums are there: a second pass collects nothing
    again = collect()
    assert again == []


def test_a_cache_view_holds_what_a_cache_of_the_lines_would(
    world: dict[str, Path], tmp_path: Path
) -> None:
    vocab = read_vocab(world["vocab"])
    full = tmp_path / "full"
    build_teacher_cache(world["txt"], vocab, world["enc"], full, **KW)
    lines = lc.size_lines(len(CORPUS), [0.5], seed=0)[0].lines
    sub = _subset_file(world["txt"], lines, tmp_path / "sub.txt")
    sub_vocab = lc.size_vocab(world["txt"], lines, **{**VOCAB, "min_count": 2})
    assert len(sub_vocab) < len(vocab)
    own = tmp_path / "own"
    build_teacher_cache(sub, sub_vocab, world["enc"], own, **KW)
    view = lc.CacheView(TeacherCache(full), lines, vocab, sub_vocab)
    ref = TeacherCache(own)
    assert view.n_sentences == ref.n_sentences == lines.size
    idx = np.arange(lines.size)
    (ids_v, ctx_v), (ids_r, ctx_r) = view.batch(idx), ref.batch(idx)
    np.testing.assert_array_equal(ids_v, ids_r)
    np.testing.assert_allclose(ctx_v, ctx_r, rtol=1e-2, atol=2e-3)  # float16 storage
    np.testing.assert_array_equal(
        view.occurrence_counts(len(sub_vocab)), ref.occurrence_counts(len(sub_vocab))
    )
    with pytest.raises(InputError, match="not in the cache's"):
        lc.CacheView(TeacherCache(own), idx, sub_vocab, vocab)


def _job(world: dict[str, Path], tmp_path: Path, cache: Path) -> lc.LearningCurveJob:
    """A curve of xx against a hub yy holding the same text (identity dictionaries)."""
    vocab = read_vocab(world["vocab"])
    spaces = {}
    for lang in ("xx", "yy"):
        vec = aggregate_vectors(
            world["txt"], vocab, world["enc"], seed=1, language=lang, missing="zero", **AGG
        )
        stem = tmp_path / "spaces" / lang
        stem.parent.mkdir(exist_ok=True)
        save_aggregated(
            vocab.words,
            vec,
            vec_path=stem.with_suffix(".vec"),
            npy_stem=stem,
            stats_path=stem.with_suffix(".json"),
            stats={},
            language=lang,
        )
        spaces[lang] = stem.with_suffix(".npy")
    words = vocab.words
    dic = tmp_path / "dic"
    dic.mkdir()
    (dic / "train.txt").write_text("".join(f"{w} {w}\n" for w in words[::2]), encoding="utf-8")
    (dic / "test.txt").write_text("".join(f"{w} {w}\n" for w in words[1::2]), encoding="utf-8")
    return lc.LearningCurveJob(
        language="xx",
        hub="yy",
        name="tiny",
        sentences=world["txt"],
        cache_dir=cache,
        vocab_path=world["vocab"],
        encoder_dir=world["enc"],
        spaces={"x2s-m": spaces["xx"], "aggregate": spaces["xx"]},
        hub_spaces={"x2s-m": spaces["yy"], "aggregate": spaces["yy"]},
        train_dictionary=dic / "train.txt",
        test={"yy-xx": dic / "test.txt", "xx-yy": dic / "test.txt"},
        fractions=[0.5],
        subset_seed=0,
        seed=1,
        vocab_opts=VOCAB,
        x2static={"epochs": 1, "batch_sentences": 4, "negatives": 2, "lr": 0.01},
        aggregation={**AGG, "batch_tokens": 512},
        align={"recipe": "orthogonal", "options": {}},
        retrievals=["nn", "csls"],
        csls_k=3,
        work_dir=tmp_path / "work",
    )


def test_the_curve_scores_every_size_and_resumes(
    world: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    build_teacher_cache(
        world["txt"],
        read_vocab(world["vocab"]),
        world["enc"],
        cache,
        subset_collectors=lc.size_collectors(
            world["txt"],
            world["enc"],
            cache,
            seeds=[1],
            fractions=[0.5],
            subset_seed=0,
            vocab_opts=VOCAB,
            language="xx",
            **{k: AGG[k] for k in ("layer", "pooling", "max_length", "max_contexts")},
        ),
        **KW,
    )
    job = _job(world, tmp_path, cache)
    summary = lc.run_learning_curve(job)
    rows = summary["rows"]
    assert [(r["size"], r["method"]) for r in rows] == [
        ("lines15", "x2s-m-tiny"),
        ("lines15", "aggregate-tiny"),
        ("all", "x2s-m-tiny"),
        ("all", "aggregate-tiny"),
    ]
    assert [r["sentences"] for r in rows[::2]] == [{"xx": 15}, {"xx": 30}]
    full = rows[3]
    # the full point is the run's space against a hub holding the same vectors
    assert full["joint/yy-xx/nn/miss"] == pytest.approx(1.0)
    for r in rows:
        for kind in ("joint", "mapped"):
            for d in ("yy-xx", "xx-yy"):
                assert 0 <= r[f"{kind}/{d}/csls/miss"] <= r[f"{kind}/{d}/csls/skip"] <= 1
                assert 0 < r[f"{kind}/{d}/coverage"] <= 1
    assert rows[1]["vocab"] <= full["vocab"]
    assert not (job.work_dir / "scratch").exists()
    # the sizes' aggregation came from the teacher's pass: no encoder run
    assert read_json(job.work_dir / "lines15.json")["record"]["methods"]["aggregate"]["sums"] == (
        "teacher pass"
    )

    def fail(*_a: object, **_k: object) -> None:
        raise AssertionError("a finished size was computed again")

    monkeypatch.setattr(lc, "_size_record", fail)
    assert lc.run_learning_curve(job) == summary
    out = tmp_path / "out"
    lc.write_learning_curve(
        summary, json_path=out / "c.json", md_path=out / "c.md", figure_stem=out / "c"
    )
    assert (out / "c.png").stat().st_size > 0 and (out / "c.svg").is_file()
    md = (out / "c.md").read_text(encoding="utf-8")
    assert "x2s-m-tiny" in md and "| 15 |" in md
    # other settings: the size is computed again
    job.x2static = {**job.x2static, "epochs": 2}
    with pytest.raises(AssertionError, match="computed again"):
        lc.run_learning_curve(job)


def test_the_cli_runs_the_curve_with_a_configs_settings(
    world: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    from xlalign.cli import main

    job = _job(world, tmp_path, tmp_path / "cache")  # spaces and identity dictionaries
    build_teacher_cache(world["txt"], read_vocab(world["vocab"]), world["enc"], job.cache_dir, **KW)
    cfg = {
        "name": "cli",
        "languages": ["en", "de"],
        "seeds": [1],
        "extract": {
            "layer": 2,
            "max_length": 12,
            "epochs": 1,
            "batch_sentences": 4,
            "negatives": 2,
            "vocab": {"min_count": 1},
            "aggregation": {"max_contexts": 2},
        },
        "evaluate": {"csls_k": 3},
        "learning_curve": {"fractions": [0.3, 0.6], "seed": 4},
    }
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    dic = job.train_dictionary.parent
    argv = [
        "learning-curve", "--lang", "de", "--config", str(tmp_path / "c.yaml"),
        "--corpus", str(world["txt"]), "--cache", str(job.cache_dir),
        "--vocab", str(world["vocab"]), "--encoder", str(world["enc"]),
        "--x2s-m", str(job.spaces["x2s-m"]), str(job.hub_spaces["x2s-m"]),
        "--aggregate", str(job.spaces["aggregate"]), str(job.hub_spaces["aggregate"]),
        "--train", str(dic / "train.txt"), "--test", str(dic / "test.txt"),
        "--test-reverse", str(dic / "test.txt"), "--fractions", "0.5", "-o", str(tmp_path / "o"),
    ]  # fmt: skip
    assert main(argv) in (0, None)
    out = json.loads(capsys.readouterr().out)
    assert out["fractions"] == [0.5] and out["subset_seed"] == 4 and out["hub"] == "en"
    summary = read_json(tmp_path / "o" / "learning_curve.json")
    assert [r["method"] for r in summary["rows"]] == ["x2s-m-cli", "aggregate-cli"] * 2
    assert "joint/en-de/csls/miss" in summary["rows"][0]
    assert (tmp_path / "o" / "learning_curve.png").stat().st_size > 0
    # a cache without the size's sums: the aggregation encoded the size's sentences itself
    part = read_json(tmp_path / "o" / "sizes" / "lines15.json")
    assert part["record"]["methods"]["aggregate"]["sums"] == "own encoder pass"
    # the hub is not a curve language
    bad = [*argv[:2], "en", *argv[3:]]
    assert main(bad) not in (0, None)
    assert "is the hub" in capsys.readouterr().err
