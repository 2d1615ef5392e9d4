"""The aggregation baseline (Bommasani et al. 2020): static vectors averaged over contexts.

A word's static vector is the average of its pooled layer-``L`` vectors over up to ``K``
of its occurrences, sampled uniformly without replacement (deterministic by seed).

Two passes keep this cheap: :func:`sample_occurrences` streams the text once and keeps,
per vocabulary word, a reservoir of ``K`` occurrence positions (Algorithm R on integer
positions, Python's ``random.Random(seed)``); then only the sentences that hold a selected
occurrence are encoded, once each, and the selected occurrences' vectors summed.

A sampled occurrence that gets no vector (cut beyond ``max_length`` subwords) is dropped
from its word's average. Words left without any vector (absent from the corpus, or all
their samples cut) raise :class:`InputError` naming them, or with ``missing="zero"`` keep
a zero row (logged).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, iter_lines
from xlalign.corpus.vocab import Vocab, tokens_of
from xlalign.encoders.contextual import (
    POOLINGS,
    WordVectorStats,
    load_truncated_encoder,
    word_vectors,
)
from xlalign.static.spaces import save_space

log = logging.getLogger(__name__)

MISSING_POLICIES = ("error", "zero")


def sample_occurrences(
    sentences_path: PathLike,
    vocab: Vocab,
    *,
    max_contexts: int,
    seed: int,
    language: str = "?",
) -> tuple[np.ndarray, np.ndarray]:
    """Sample up to ``max_contexts`` occurrences per vocabulary word, uniformly.

    Returns ``(lines, positions)``: int64 arrays ``[V, K]`` holding the 0-based line and
    the token position within it of each selected occurrence, ``-1`` where a word has
    fewer than ``K`` occurrences. Same corpus, vocabulary and seed -> same sample.
    """
    if max_contexts < 1:
        raise ConfigError(f"max_contexts: expected a positive number, got {max_contexts}")
    k = max_contexts
    rng = random.Random(seed)
    seen = [0] * len(vocab)
    lines = np.full((len(vocab), k), -1, dtype=np.int64)
    positions = np.full((len(vocab), k), -1, dtype=np.int64)
    index = vocab.index
    lower = vocab.lowercase
    for i, line in enumerate(iter_lines(sentences_path, language=language)):
        for j, tok in enumerate(tokens_of(line)):
            w = index.get(tok.lower() if lower else tok)
            if w is None:
                continue
            c = seen[w]
            seen[w] = c + 1
            if c < k:
                slot = c
            else:
                slot = rng.randrange(c + 1)
                if slot >= k:
                    continue
            lines[w, slot] = i
            positions[w, slot] = j
    return lines, positions


def aggregate_vectors(
    sentences_path: PathLike,
    vocab: Vocab,
    encoder_dir: PathLike,
    *,
    layer: int,
    pooling: str = "mean",
    max_contexts: int = 10,
    seed: int = 0,
    max_length: int = 200,
    batch_tokens: int = 8192,
    chunk_sentences: int = 4096,
    device: Any = None,
    dtype: Any = None,
    threads: int | None = None,
    progress: bool = True,
    language: str = "?",
    missing: str = "error",
) -> np.ndarray:
    """Static vectors ``[V, dim]`` (float32): each word's mean layer-``layer`` vector over
    up to ``max_contexts`` sampled occurrences (see the module docstring for the policy on
    words without a vector)."""
    if pooling not in POOLINGS:
        raise ConfigError(f"pooling: expected one of {POOLINGS}, got {pooling!r}")
    if missing not in MISSING_POLICIES:
        raise ConfigError(f"missing: expected one of {MISSING_POLICIES}, got {missing!r}")
    where = f"{sentences_path} (language {language!r})"
    if not Path(sentences_path).is_file():
        raise InputError(f"{where}: file not found")
    if not len(vocab):
        raise InputError(f"{where}: empty vocabulary")
    sel_lines, sel_pos = sample_occurrences(
        sentences_path, vocab, max_contexts=max_contexts, seed=seed, language=language
    )
    # line -> [(token position, word id)] of the selected occurrences
    wanted: dict[int, list[tuple[int, int]]] = {}
    for w, slot in zip(*np.nonzero(sel_lines >= 0), strict=True):
        wanted.setdefault(int(sel_lines[w, slot]), []).append((int(sel_pos[w, slot]), int(w)))
    if not wanted:
        raise InputError(f"{where}: no word of the vocabulary ({len(vocab)} words) occurs")

    tokenizer, model = load_truncated_encoder(
        encoder_dir, layer, device=device, dtype=dtype, threads=threads
    )
    dim = int(model.config.hidden_size)
    sums = np.zeros((len(vocab), dim), dtype=np.float64)
    n = np.zeros(len(vocab), dtype=np.int64)
    stats = WordVectorStats()
    dropped = 0

    def encode(chunk: list[tuple[int, list[str]]]) -> None:
        nonlocal dropped
        vectors = word_vectors(
            [words for _, words in chunk],
            tokenizer,
            model,
            pooling=pooling,
            max_length=max_length,
            batch_tokens=batch_tokens,
            stats=stats,
        )
        for (i, _), vec in zip(chunk, vectors, strict=True):
            for j, w in wanted[i]:
                row = vec[j]
                if np.isnan(row[0]):
                    dropped += 1
                    continue
                sums[w] += row
                n[w] += 1

    bar = tqdm(
        total=len(wanted),
        unit="sent",
        desc=f"aggregate {language} L{layer}",
        disable=not progress,
        dynamic_ncols=True,
    )
    try:
        chunk: list[tuple[int, list[str]]] = []
        for i, line in enumerate(iter_lines(sentences_path, language=language)):
            if i in wanted:
                chunk.append((i, tokens_of(line)))
                if len(chunk) == chunk_sentences:
                    encode(chunk)
                    bar.update(len(chunk))
                    chunk = []
        if chunk:
            encode(chunk)
            bar.update(len(chunk))
    finally:
        bar.close()

    empty = np.flatnonzero(n == 0)
    log.info(
        "aggregate %s: %d words, %d sentences encoded, %d sampled occurrences without a "
        "vector (cut beyond max_length=%d), %d words without any vector",
        language,
        len(vocab),
        len(wanted),
        dropped,
        max_length,
        len(empty),
    )
    if len(empty):
        names = ", ".join(repr(vocab.words[w]) for w in empty[:20])
        if missing == "error":
            raise InputError(
                f"{where}: {len(empty)} vocabulary word(s) got no contextual vector "
                f"(absent from the corpus or cut beyond max_length={max_length}): {names}"
            )
        log.warning("%s: %d word(s) without a vector keep a zero row: %s", where, len(empty), names)
    out = np.zeros((len(vocab), dim), dtype=np.float32)
    has = n > 0
    out[has] = (sums[has] / n[has, None]).astype(np.float32)
    return out


#: Why a vocabulary word may get no vector (see :func:`xlalign.static.spaces.save_space`).
LEFT_OUT_REASON = "no occurrence within max_length subwords"


def save_aggregated(
    words: Sequence[str],
    vectors: np.ndarray,
    *,
    vec_path: PathLike,
    npy_stem: PathLike,
    stats_path: PathLike,
    stats: dict[str, Any],
    language: str,
) -> dict[str, Any]:
    """Write :func:`aggregate_vectors`' output as a space (``.vec``, ``.npy``, stats JSON),
    leaving out the words whose row stayed zero (``missing="zero"``); returns the stats."""
    return save_space(
        words,
        vectors,
        np.abs(vectors).sum(axis=1) > 0,
        vec_path=vec_path,
        npy_stem=npy_stem,
        stats_path=stats_path,
        stats=stats,
        language=language,
        reason=LEFT_OUT_REASON,
    )
