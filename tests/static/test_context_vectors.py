"""teacher.context_vectors against a direct restatement of its earlier per-word loop: the
same ids, the same float32 bits and the same skip counts (the cache's bytes must not
change when the loop is made cheaper)."""

from __future__ import annotations

import numpy as np
import pytest

from xlalign.corpus.vocab import Vocab
from xlalign.static.teacher import context_vectors

WORDS = ["the", "cat", "sat", "on", "mat", "dog", "ran"]


def _loop_context_vectors(
    words: list[str], vectors: np.ndarray, vocab: Vocab, context: str, counts: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """The per-word loop context_vectors ran before (restated)."""
    dim = vectors.shape[1]
    valid = ~np.isnan(vectors[:, 0]) if len(words) else np.zeros(0, dtype=bool)
    ids: list[int] = []
    pos: list[int] = []
    for j, w in enumerate(words):
        v = vocab.lookup(w)
        if v is None:
            counts["oov"] += 1
        elif not valid[j]:
            counts["no_vector"] += 1
        else:
            ids.append(v)
            pos.append(j)
    n = int(valid.sum())
    if not ids:
        return np.zeros(0, np.int32), np.zeros((0, dim), np.float32)
    if context == "others" and n < 2:
        counts["single_word"] += len(ids)
        return np.zeros(0, np.int32), np.zeros((0, dim), np.float32)
    total = vectors[valid].sum(axis=0, dtype=np.float64)
    if context == "all-words":
        ctx = np.broadcast_to(total / n, (len(ids), dim))
    else:
        ctx = (total[None, :] - vectors[pos].astype(np.float64)) / (n - 1)
    return np.asarray(ids, np.int32), ctx.astype(np.float32)


@pytest.mark.parametrize("lowercase", [True, False])
@pytest.mark.parametrize("context", ["others", "all-words"])
def test_context_vectors_equal_the_per_word_loop_bit_for_bit(context: str, lowercase: bool) -> None:
    rng = np.random.default_rng(7)
    vocab = Vocab(WORDS[:5], np.arange(5, 0, -1), lowercase=lowercase)
    pool = [*WORDS, "The", "CAT", "zebra"]  # cased forms, out-of-vocabulary words
    new_counts = {"oov": 0, "no_vector": 0, "single_word": 0}
    old_counts = dict(new_counts)
    seen = 0
    for _ in range(300):
        n = int(rng.integers(0, 9))
        words = [pool[k] for k in rng.integers(0, len(pool), n)]
        vectors = (rng.standard_normal((n, 12)) * 4).astype(np.float32)
        vectors[rng.random(n) < 0.2] = np.nan  # words without a vector
        ids, ctx = context_vectors(words, vectors, vocab, context, new_counts)
        exp_ids, exp_ctx = _loop_context_vectors(words, vectors, vocab, context, old_counts)
        assert ids.dtype == np.int32 and ctx.dtype == np.float32
        assert ids.tolist() == exp_ids.tolist(), words
        assert ctx.shape == exp_ctx.shape and np.array_equal(ctx, exp_ctx), words
        seen += len(ids)
    assert new_counts == old_counts
    # every branch was taken (one-word sentences are skipped only for "others")
    assert seen > 100 and old_counts["oov"] > 0 and old_counts["no_vector"] > 0
    assert (old_counts["single_word"] > 0) == (context == "others")
