"""Inputs and capped-child targets of the static stage's bounded-memory tests
(tests/static/test_capped_memory.py, run with :func:`capped.run_capped`).

Each target runs one bounded part (the teacher's pass, X2Static's reading of the cache,
the aggregation sample) in the capped child; the inputs are made in the parent and passed
in (paths, or objects unpickled before the cap). The ``*_unbounded`` targets do what the
code did before issue 28 (a memory map of every shard, the sample as Python tuples), to
show that the cap is below what that needed.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

#: Set to an encoder directory, importing this module (in the capped child: before the
#: cap) runs the teacher once on three lines, so that what the first run loads lazily
#: (transformers' model code, scipy, tokenizers: ~1,500 modules and their libraries, a few
#: hundred MB of address space) is not counted against the cap.
WARM_UP_ENV = "XLALIGN_CAPPED_STATIC_WARM_UP"

WIDE_DIM = 256


def _no_monitor_thread() -> None:
    """tqdm's monitor thread (started by a bar even when disabled) gets a thread stack and
    a malloc arena, ~150 MB of address space that no data uses: not in a capped child."""
    import tqdm

    tqdm.tqdm.monitor_interval = 0


def make_wide_encoder(out_dir: Path, words: list[str], *, dim: int = WIDE_DIM) -> Path:
    """A one-layer BERT of width ``dim`` whose WordPiece vocabulary holds ``words`` whole
    (one subword a word): cheap to run, yet a word vector is ``4 * dim`` bytes."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = specials + sorted(set(words))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizerFast(vocab=str(out_dir / "vocab.txt"), do_lower_case=True).save_pretrained(out_dir)
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(vocab),
        hidden_size=dim,
        num_hidden_layers=1,
        num_attention_heads=4,
        intermediate_size=dim,
        max_position_embeddings=64,
    )
    BertModel(cfg, add_pooling_layer=False).save_pretrained(out_dir)
    return out_dir


def word_corpus(path: Path, *, n_words: int, sentences: int, length: int, seed: int = 0) -> Path:
    """``sentences`` lines of 1 to ``2 * length`` words (``length`` on average) drawn from
    ``w0 .. w<n_words-1>``: of unequal lengths, so that the encoder's length-sorted batches
    hold vectors back until their sentence's turn."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, 2 * length, size=sentences)
    draws = rng.integers(0, n_words, size=int(lengths.sum()))
    ends = np.cumsum(lengths)
    path.write_text(
        "".join(
            " ".join(f"w{i}" for i in draws[e - n : e]) + "\n"
            for n, e in zip(lengths, ends, strict=True)
        ),
        encoding="utf-8",
    )
    return path


def build_teacher(**kwargs: Any) -> dict[str, Any]:
    """:func:`xlalign.static.teacher.build_teacher_cache` with ``vocab`` read in the child
    (the arrays stay on disk; the parent compares them)."""
    import torch

    from xlalign.corpus.vocab import read_vocab
    from xlalign.static.teacher import build_teacher_cache

    _no_monitor_thread()
    kwargs["vocab"] = read_vocab(kwargs.pop("vocab_path"))
    # oneDNN compiles a kernel for each new batch shape, into memory of its own that fails
    # under a tight cap ("could not create a primitive") whatever the data: off, in the
    # capped and the reference runs alike (the same arithmetic)
    enabled = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = False
    try:
        build_teacher_cache(progress=False, device="cpu", threads=1, **kwargs)
    finally:
        torch.backends.mkldnn.enabled = enabled
    return {"ok": True}


def train_from_cache(cache_dir: str, vocab_path: str, epochs: int = 1) -> np.ndarray:
    """X2Static over a teacher cache as the job reads it (:class:`TeacherCache`)."""
    from xlalign.corpus.vocab import read_vocab
    from xlalign.static.teacher import TeacherCache
    from xlalign.static.x2static import X2StaticArgs, train_x2static

    _no_monitor_thread()
    cache = TeacherCache(cache_dir)
    args = X2StaticArgs(
        epochs=epochs, batch_sentences=16, subsample_t=None, checkpoint_minutes=None, device="cpu"
    )
    result = train_x2static(
        cache, read_vocab(vocab_path), args, output_dir=Path(cache_dir) / "x2s", progress=False
    )
    cache.close()
    return result.vectors


def map_every_shard_unbounded(cache_dir: str) -> int:
    """What :class:`TeacherCache` did before: a memory map of every shard's context
    vectors, kept open (its address space is the cache's size)."""
    from xlalign.core.io import read_json

    n = int(read_json(Path(cache_dir) / "meta.json")["n_shards"])
    maps = [np.load(Path(cache_dir) / f"shard-{k:05d}.ctx.npy", mmap_mode="r") for k in range(n)]
    return sum(int(m.shape[0]) for m in maps)


def sample_compact(sentences_path: str, vocab: Any, max_contexts: int, seed: int) -> str:
    """The aggregation sample by line as the teacher pass holds it now
    (:class:`SampledOccurrences`); returns a digest of it."""
    from xlalign.static.aggregation import sample_lines

    s = sample_lines(sentences_path, vocab, max_contexts=max_contexts, seed=seed)
    return _digest((s.line, s.pos, s.word))


def sample_as_tuples_unbounded(
    sentences_path: str, vocab: Any, max_contexts: int, seed: int
) -> str:
    """The same sample as a ``{line: [(position, word id)]}`` dict of Python tuples (what
    the teacher pass held before); returns the same digest."""
    from xlalign.static.aggregation import sampled_by_line

    d = sampled_by_line(sentences_path, vocab, max_contexts=max_contexts, seed=seed)
    flat = [(line, p, w) for line in sorted(d) for p, w in d[line]]
    arr = np.asarray(flat, dtype=np.int64).reshape(-1, 3)
    return _digest((arr[:, 0], arr[:, 1].astype(np.int32), arr[:, 2].astype(np.int32)))


def _digest(arrays: Iterable[np.ndarray]) -> str:
    """SHA-256 of the arrays' bytes (taken one at a time: a generator stays lazy)."""
    import hashlib

    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def write_random_cache(
    out: Path, *, n_words: int, dim: int, sentences: int, per_sentence: int, shard_sentences: int
) -> Path:
    """A teacher cache of random float16 contexts in :mod:`xlalign.static.teacher`'s layout
    (shards, then ``meta.json``), written shard by shard."""
    from xlalign.core.io import write_json
    from xlalign.static.teacher import FORMAT, META_FILE, VERSION, _shard_paths

    rng = np.random.default_rng(0)
    out.mkdir(parents=True)
    n_shards = -(-sentences // shard_sentences)
    for k in range(n_shards):
        n = min(shard_sentences, sentences - k * shard_sentences)
        paths = _shard_paths(out, k)
        np.save(paths["ids"], rng.integers(0, n_words, n * per_sentence).astype(np.int32))
        ctx = rng.standard_normal((n * per_sentence, dim), dtype=np.float32) / np.sqrt(dim)
        np.save(paths["ctx"], ctx.astype(np.float16))
        write_json(paths["stats"], {"sentences": n, "occurrences": n * per_sentence})
        np.save(paths["offsets"], np.arange(n + 1, dtype=np.int64) * per_sentence)
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "dim": dim,
        "n_sentences": sentences,
        "n_occurrences": sentences * per_sentence,
        "n_shards": n_shards,
        "shard_sentences": shard_sentences,
    }
    write_json(out / META_FILE, meta)
    return out


def read_epoch(cache_dir: str, batch_sentences: int = 64) -> str:
    """One epoch of X2Static's reads (:meth:`TeacherCache.batch` over the epoch's sentence
    order, as :func:`train_x2static` draws it); returns a digest of every batch read."""
    from xlalign.static.teacher import TeacherCache
    from xlalign.static.x2static import epoch_permutation

    cache = TeacherCache(cache_dir)
    order = epoch_permutation(cache.n_sentences, 0, 0)
    batches = (
        cache.batch(order[a : a + batch_sentences])
        for a in range(0, cache.n_sentences, batch_sentences)
    )
    digest = _digest(a for batch in batches for a in batch)
    cache.close()
    return digest


def _warm_up(encoder_dir: str) -> None:
    from xlalign.corpus.vocab import build_vocab, write_vocab

    with tempfile.TemporaryDirectory(prefix="warm-up-") as tmp:
        txt = Path(tmp, "c.txt")
        txt.write_text("w0 w1 w2\nw1 w2\nw0\n", encoding="utf-8")
        write_vocab(build_vocab(txt, min_count=1, max_size=None, language="xx"), Path(tmp, "v"))
        build_teacher(
            sentences_path=str(txt),
            vocab_path=str(Path(tmp, "v")),
            encoder_dir=encoder_dir,
            out_dir=str(Path(tmp, "cache")),
            layer=1,
            aggregation_seeds=[0],
            max_contexts=2,
        )


if os.environ.get(WARM_UP_ENV):
    _warm_up(os.environ[WARM_UP_ENV])
