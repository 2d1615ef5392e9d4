"""Teacher cache: context formulas (the paper's wording, X2Static's public code), round
trip, kill-and-resume, config changes, errors."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from tiny_encoder import make_fixed_vocab_encoder, reference_vectors

from xlalign.core.errors import ConfigError, InputError
from xlalign.corpus.vocab import Vocab, build_vocab, tokens_of, write_vocab
from xlalign.static import teacher
from xlalign.static.teacher import TeacherCache, build_teacher_cache

CORPUS = [
    "The cat sat on the mat .",
    "the dogs ran and the cats ran",
    "",  # an empty line is a sentence without occurrences
    "moon",  # one word: no context for 'others'
    "zebra zebra",  # out-of-vocabulary words only ('zebra' is kept out of the vocabulary)
    "a big red sun , a small moon .",
    "unbelievable cats running on a red mat",
    "The sun and the moon .",
    "dogs sat",
    "a cat",
    "the big dog ran on the mat and the small cat sat .",
    "red sun red moon",
]
#: A corpus long enough for several shards (shard_sentences=4).
LONG_CORPUS = CORPUS * 3


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_fixed_vocab_encoder(tmp_path_factory.mktemp("enc") / "tiny-bert")


def _corpus(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _vocab(path: Path) -> Vocab:
    full = build_vocab(path, min_count=1, max_size=None, language="xx")
    keep = [i for i, w in enumerate(full.words) if w != "zebra"]
    return Vocab([full.words[i] for i in keep], full.counts[keep], lowercase=True)


def _all_arrays(cache: TeacherCache) -> tuple[np.ndarray, np.ndarray]:
    return cache.batch(np.arange(cache.n_sentences))


@pytest.mark.parametrize("context", ["others", "all-words"])
def test_context_vectors_match_brute_force(tiny: Path, tmp_path: Path, context: str) -> None:
    txt = _corpus(tmp_path / "xx.txt", CORPUS)
    vocab = _vocab(txt)
    out = build_teacher_cache(
        txt, vocab, tiny, tmp_path / "cache", layer=2, context=context, progress=False,
        language="xx", shard_sentences=5,
    )  # fmt: skip
    cache = TeacherCache(out)
    assert cache.n_sentences == len(CORPUS) and len(cache) == len(CORPUS)
    assert cache.dim == 16
    expected_total = 0
    for i, line in enumerate(CORPUS):
        words = tokens_of(line)
        ids, ctx = cache.sentence(i)
        assert ids.dtype == np.int32 and ctx.dtype == np.float16
        if not words:
            assert ids.shape == (0,) and ctx.shape == (0, 16)
            continue
        vec = reference_vectors(tiny, words, 2).astype(np.float64)
        n = len(words)
        exp_ids, exp_ctx = [], []
        for j, w in enumerate(words):
            v = vocab.lookup(w)
            if v is None or (context == "others" and n == 1):
                continue
            exp_ids.append(v)
            if context == "all-words":
                exp_ctx.append(vec.sum(0) / n)
            else:
                exp_ctx.append((vec.sum(0) - vec[j]) / (n - 1))
        assert ids.tolist() == exp_ids, line
        if exp_ids:
            np.testing.assert_allclose(ctx.astype(np.float64), exp_ctx, rtol=2e-3, atol=2e-3)
        expected_total += len(exp_ids)
    assert cache.n_occurrences == expected_total
    counts = cache.meta["counts"]
    assert counts["skipped_oov"] == 2  # the two 'zebra'
    assert counts["skipped_single_word"] == (1 if context == "others" else 0)
    assert cache.meta["layer"] == 2 and cache.meta["context"] == context
    assert cache.meta["dim"] == 16 and cache.meta["n_shards"] == 3
    assert not (out / "build.json").exists()


def _public_x2static_contexts(encoder_dir: Path, lines: list[str], layer: int, max_len: int):
    """A restatement of X2Static's public sentence-level code (``learn_from_bert_ver2.py``,
    github.com/epfml/X2Static): "[CLS] sentence [SEP]" tokenised as text, cut to the first
    MAX_LEN - 1 tokens plus [SEP], padded batch with an attention mask, the states summed
    over the first ``sent_length`` positions and divided by ``sent_length``. The public code
    reads ``outputs[0]`` (the last layer); ``layer`` picks ``hidden_states[layer]``."""
    import torch
    from transformers import BertModel, BertTokenizer

    tokenizer = BertTokenizer.from_pretrained(encoder_dir, local_files_only=True)
    model = BertModel.from_pretrained(encoder_dir, local_files_only=True).eval()
    tokenized = []
    for line in lines:
        tokens = tokenizer.tokenize("[CLS] " + " ".join(line.split()) + " [SEP]")
        if len(tokens) > max_len:
            tokens = [*tokens[: max_len - 1], "[SEP]"]
        tokenized.append(tokens)
    width = max(len(t) for t in tokenized)
    masks = torch.tensor([[1] * len(t) + [0] * (width - len(t)) for t in tokenized])
    lengths = torch.tensor([len(t) for t in tokenized]).view(-1, 1)
    padded = [t + (width - len(t)) * ["[PAD]"] for t in tokenized]
    ids = torch.tensor([tokenizer.convert_tokens_to_ids(t) for t in padded])
    with torch.no_grad():
        outputs = model(ids, attention_mask=masks, output_hidden_states=True)
        encoded = outputs[0] if layer == model.config.num_hidden_layers else None
        if encoded is None:
            encoded = outputs.hidden_states[layer]
        else:
            assert torch.equal(encoded, outputs.hidden_states[layer])
        mask = (torch.arange(width)[None, :] < lengths).unsqueeze(2).float()
        return (torch.sum(encoded * mask, 1) / lengths.float()).numpy()


@pytest.mark.parametrize(("layer", "max_length"), [(3, 200), (2, 200), (3, 8)])
def test_x2static_code_context_is_the_public_codes_sentence_mean(
    tiny: Path, tmp_path: Path, layer: int, max_length: int
) -> None:
    lines = [line for line in CORPUS if line.strip()]
    txt = _corpus(tmp_path / "xx.txt", CORPUS)
    vocab = _vocab(txt)
    out = build_teacher_cache(
        txt, vocab, tiny, tmp_path / "cache", layer=layer, context="x2static-code",
        max_length=max_length, batch_tokens=64, shard_sentences=5, progress=False,
    )  # fmt: skip
    cache = TeacherCache(out)
    contexts = _public_x2static_contexts(tiny, lines, layer, max_length)
    public = dict(zip(lines, contexts, strict=True))
    total = 0
    for i, line in enumerate(CORPUS):
        ids, ctx = cache.sentence(i)
        # every in-vocabulary occurrence is a target, even the one-word sentence "moon" and
        # words cut off by max_length, as in the public code
        expected_ids = [vocab.lookup(w) for w in tokens_of(line) if vocab.lookup(w) is not None]
        assert ids.tolist() == expected_ids, line
        total += len(ids)
        if len(ids):
            want = np.broadcast_to(public[line], ctx.shape)
            np.testing.assert_allclose(ctx.astype(np.float64), want, rtol=2e-3, atol=2e-3)
    assert cache.n_occurrences == total
    assert cache.meta["counts"]["skipped_single_word"] == 0
    assert cache.meta["context"] == "x2static-code"
    if max_length == 8:
        assert cache.meta["counts"]["truncated_sentences"] > 0
    # The word-level mean (formerly `all`, described as the public code's) is another thing.
    words = build_teacher_cache(
        txt, vocab, tiny, tmp_path / "words", layer=layer, context="all-words", progress=False
    )
    a, b = _all_arrays(cache)[1], _all_arrays(TeacherCache(words))[1]
    assert a.shape == b.shape and not np.allclose(a, b, atol=1e-2)


def test_removed_context_all_names_its_replacements(tiny: Path, tmp_path: Path) -> None:
    txt = _corpus(tmp_path / "xx.txt", CORPUS)
    with pytest.raises(ConfigError, match=r"renamed.*all-words.*x2static-code"):
        build_teacher_cache(txt, _vocab(txt), tiny, tmp_path / "c", layer=1, context="all")


def test_round_trip_sentence_and_batch(tiny: Path, tmp_path: Path) -> None:
    txt = _corpus(tmp_path / "xx.txt", LONG_CORPUS)
    vocab = _vocab(txt)
    out = build_teacher_cache(
        txt, vocab, tiny, tmp_path / "cache", layer=1, shard_sentences=4, progress=False
    )
    cache = TeacherCache(out)
    assert sorted(p.name for p in out.glob("shard-00000.*")) == [
        "shard-00000.ctx.npy", "shard-00000.ids.npy", "shard-00000.offsets.npy",
        "shard-00000.stats.json",
    ]  # fmt: skip
    assert np.load(out / "shard-00000.offsets.npy").dtype == np.int64
    order = np.array([10, 3, 0, 35, 10, 2, 17])  # across shards, repeated, with empty ones
    ids, ctx = cache.batch(order)
    assert ids.dtype == np.int64 and ctx.dtype == np.float32
    parts = [cache.sentence(int(i)) for i in order]
    np.testing.assert_array_equal(ids, np.concatenate([p[0] for p in parts]))
    np.testing.assert_array_equal(ctx, np.concatenate([p[1] for p in parts]).astype(np.float32))
    # the copies of the corpus give the same vectors (line i and i + 12)
    a, b = cache.sentence(1), cache.sentence(13)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_allclose(a[1], b[1], atol=1e-3)
    all_ids, _ = _all_arrays(cache)
    assert len(all_ids) == cache.n_occurrences
    np.testing.assert_array_equal(
        cache.occurrence_counts(len(vocab)), np.bincount(all_ids, minlength=len(vocab))
    )
    with pytest.raises(IndexError):
        cache.sentence(len(LONG_CORPUS))


_KILL_SCRIPT = """
import sys, time
from pathlib import Path
from xlalign.static import teacher
from xlalign.corpus.vocab import read_vocab

txt, vocab, enc, out, flag = sys.argv[1:]
original = teacher._save_npy

def save_then_hang(path, arr):
    if Path(path).name == "shard-00002.offsets.npy":  # shard 2 written but for its marker
        Path(flag).write_text("now")
        time.sleep(120)
    original(path, arr)

teacher._save_npy = save_then_hang
teacher.build_teacher_cache(txt, read_vocab(vocab), enc, out, layer=2, shard_sentences=4,
                            progress=False, language="xx")
"""


def test_killed_build_resumes_to_identical_arrays(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    txt = _corpus(tmp_path / "xx.txt", LONG_CORPUS)
    vocab = _vocab(txt)
    write_vocab(vocab, tmp_path / "vocab.tsv")
    out, flag = tmp_path / "killed", tmp_path / "flag"
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_KILL_SCRIPT), str(txt), str(tmp_path / "vocab.tsv"),
         str(tiny), str(out), str(flag)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not flag.exists():
        if proc.poll() is not None:
            pytest.fail(f"build exited before the kill: {proc.stderr.read().decode()[-2000:]}")
        assert time.monotonic() < deadline, "the build never reached shard 2"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    assert not (out / "meta.json").exists()
    assert (out / "shard-00002.ctx.npy").exists() and not (out / "shard-00002.offsets.npy").exists()
    with pytest.raises(InputError, match="incomplete"):
        TeacherCache(out)

    built: list[int] = []
    original = teacher._build_shard

    def spy(out_dir, k, *args, **kwargs):
        built.append(k)
        return original(out_dir, k, *args, **kwargs)

    monkeypatch.setattr(teacher, "_build_shard", spy)
    build_teacher_cache(txt, vocab, tiny, out, layer=2, shard_sentences=4, progress=False)
    assert built == [2, 3, 4, 5, 6, 7, 8]  # resumed at the first incomplete shard
    built.clear()
    build_teacher_cache(txt, vocab, tiny, tmp_path / "straight", layer=2, shard_sentences=4,
                        progress=False)  # fmt: skip
    assert built == list(range(9))
    resumed, straight = TeacherCache(out), TeacherCache(tmp_path / "straight")
    assert resumed.meta["counts"] == straight.meta["counts"]
    ids_a, ctx_a = _all_arrays(resumed)
    ids_b, ctx_b = _all_arrays(straight)
    np.testing.assert_array_equal(ids_a, ids_b)
    np.testing.assert_allclose(ctx_a, ctx_b, rtol=1e-3, atol=1e-3)
    for k in range(9):
        np.testing.assert_array_equal(
            np.load(out / f"shard-{k:05d}.offsets.npy"),
            np.load(tmp_path / "straight" / f"shard-{k:05d}.offsets.npy"),
        )


def test_changed_config_rebuilds_and_same_config_is_reused(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    txt = _corpus(tmp_path / "xx.txt", LONG_CORPUS)
    vocab = _vocab(txt)
    out = tmp_path / "cache"
    build_teacher_cache(txt, vocab, tiny, out, layer=1, shard_sentences=4, progress=False)
    # a stale shard beyond the new build's range must disappear too
    (out / "shard-00042.ids.npy").write_bytes(b"stale")
    with caplog.at_level(logging.WARNING, logger="xlalign.static.teacher"):
        build_teacher_cache(txt, vocab, tiny, out, layer=2, shard_sentences=8, progress=False)
    assert any("rebuilding" in r.getMessage() for r in caplog.records)
    assert not (out / "shard-00042.ids.npy").exists()
    fresh = build_teacher_cache(
        txt, vocab, tiny, tmp_path / "fresh", layer=2, shard_sentences=8, progress=False
    )
    a, b = TeacherCache(out), TeacherCache(fresh)
    assert a.meta["layer"] == 2 and a.n_shards == 5
    np.testing.assert_allclose(_all_arrays(a)[1], _all_arrays(b)[1], atol=1e-3)

    # same configuration: nothing is recomputed, not even the encoder loaded
    def no_load(*args, **kwargs):
        raise AssertionError("the encoder should not be loaded for an up-to-date cache")

    monkeypatch.setattr(teacher, "load_truncated_encoder", no_load)
    assert (
        build_teacher_cache(txt, vocab, tiny, out, layer=2, shard_sentences=8, progress=False)
        == out
    )

    # a changed corpus, vocabulary or pooling is a mismatch (the encoder is needed again)
    with pytest.raises(AssertionError, match="should not be loaded"):
        build_teacher_cache(
            txt, vocab, tiny, out, layer=2, shard_sentences=8, pooling="first", progress=False
        )
    smaller = Vocab(vocab.words[:5], vocab.counts[:5], lowercase=True)
    with pytest.raises(AssertionError, match="should not be loaded"):
        build_teacher_cache(txt, smaller, tiny, out, layer=2, shard_sentences=8, progress=False)


def test_unfinished_build_with_other_config_starts_over(tiny: Path, tmp_path: Path) -> None:
    txt = _corpus(tmp_path / "xx.txt", LONG_CORPUS)
    vocab = _vocab(txt)
    out = tmp_path / "cache"
    build_teacher_cache(txt, vocab, tiny, out, layer=1, shard_sentences=4, progress=False)
    (out / "meta.json").unlink()  # as if killed before the end, with layer-1 shards on disk
    teacher.write_json(out / "build.json", {"layer": 1})
    build_teacher_cache(txt, vocab, tiny, out, layer=3, shard_sentences=4, progress=False)
    fresh = build_teacher_cache(
        txt, vocab, tiny, tmp_path / "fresh", layer=3, shard_sentences=4, progress=False
    )
    np.testing.assert_allclose(
        _all_arrays(TeacherCache(out))[1], _all_arrays(TeacherCache(fresh))[1], atol=1e-3
    )


def test_errors_name_file_and_language(tiny: Path, tmp_path: Path) -> None:
    txt = _corpus(tmp_path / "xx.txt", CORPUS)
    vocab = _vocab(txt)
    empty = _corpus(tmp_path / "empty.txt", ["", "  ", ""])
    with pytest.raises(InputError, match=r"empty\.txt \(language 'de'\): empty corpus"):
        build_teacher_cache(empty, vocab, tiny, tmp_path / "c1", layer=1, language="de")
    oov = _corpus(tmp_path / "oov.txt", ["zebra zebra", "zebra"])
    with pytest.raises(InputError, match=r"oov\.txt \(language 'de'\): no sentence holds"):
        build_teacher_cache(oov, vocab, tiny, tmp_path / "c2", layer=1, language="de")
    with pytest.raises(InputError, match="not found"):
        build_teacher_cache(tmp_path / "nope.txt", vocab, tiny, tmp_path / "c3", layer=1)
    with pytest.raises(InputError, match="missing-encoder"):
        build_teacher_cache(txt, vocab, tmp_path / "missing-encoder", tmp_path / "c4", layer=1)
    with pytest.raises(ConfigError, match="layer 7"):
        build_teacher_cache(txt, vocab, tiny, tmp_path / "c5", layer=7)
    with pytest.raises(ConfigError, match="context"):
        build_teacher_cache(txt, vocab, tiny, tmp_path / "c6", layer=1, context="left")
    # only one-word sentences: no occurrence has a context
    single = _corpus(tmp_path / "single.txt", ["moon", "cat", "moon"])
    with pytest.raises(InputError, match=r"single\.txt \(language 'de'\): no in-vocabulary"):
        build_teacher_cache(
            single, vocab, tiny, tmp_path / "c7", layer=1, language="de", progress=False
        )
    assert not (tmp_path / "c7" / "meta.json").exists()
    # a vocabulary word the tokenizer maps to nothing
    bad = Vocab([*vocab.words, "\x07"], np.append(vocab.counts, 1), lowercase=True)
    with pytest.raises(InputError, match=r"xx\.txt \(language 'de'\): 1 vocabulary word.*x07"):
        build_teacher_cache(txt, bad, tiny, tmp_path / "c8", layer=1, language="de")
    with pytest.raises(InputError, match="incomplete"):
        TeacherCache(tmp_path / "c7")
