"""A fake teacher cache for X2Static tests: synthetic sentences in memory or on disk.

:class:`ArrayCache` has the reading methods of ``xlalign.static.teacher.TeacherCache``;
:func:`synthetic` fills it so that each word's context vectors are noisy copies of a hidden
per-word direction, which training must recover. Used by tests/static/test_x2static.py
(also in a child process it kills) and tests/encoders/test_distributed.py.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from xlalign.corpus.vocab import Vocab


class ArrayCache:
    """In-memory stand-in for a teacher cache: CSR sentences of (word id, context)."""

    def __init__(
        self,
        offsets: np.ndarray,
        ids: np.ndarray,
        ctx: np.ndarray,
        *,
        meta: dict[str, object] | None = None,
        delay: float = 0.0,
    ) -> None:
        self.offsets, self.ids, self.ctx = offsets, ids.astype(np.int32), ctx.astype(np.float16)
        self.dim = int(ctx.shape[1])
        self.n_sentences = len(offsets) - 1
        self.n_occurrences = len(ids)
        self.meta = meta if meta is not None else {"encoder": "synthetic", "layer": 0}
        self.delay = delay  # seconds per batch, to make a run slow enough to kill

    def sentence(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.offsets[i], self.offsets[i + 1]
        return self.ids[a:b], self.ctx[a:b]

    def batch(self, sentence_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.delay:
            time.sleep(self.delay)
        parts = [np.arange(self.offsets[i], self.offsets[i + 1]) for i in sentence_indices]
        sel = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        return self.ids[sel].astype(np.int64), self.ctx[sel].astype(np.float32)

    def save(self, path: Path) -> None:
        np.savez(path, offsets=self.offsets, ids=self.ids, ctx=self.ctx)

    @classmethod
    def load(cls, path: str | Path, delay: float = 0.0) -> ArrayCache:
        with np.load(path) as z:
            return cls(z["offsets"], z["ids"], z["ctx"], delay=delay)


def synthetic(
    *, n_words: int = 30, dim: int = 32, n_sent: int = 400, seed: int = 5
) -> tuple[ArrayCache, Vocab, np.ndarray]:
    """Zipf-ish word occurrences; context = 2 * hidden[word] + Gaussian noise."""
    rng = np.random.default_rng(seed)
    hidden = rng.standard_normal((n_words, dim))
    hidden /= np.linalg.norm(hidden, axis=1, keepdims=True)
    p = 1.0 / np.arange(1, n_words + 1) ** 0.7
    lens = rng.integers(3, 11, n_sent)
    offsets = np.concatenate([[0], np.cumsum(lens)])
    ids = rng.choice(n_words, size=int(offsets[-1]), p=p / p.sum())
    ctx = 2 * hidden[ids] + rng.standard_normal((len(ids), dim)) / np.sqrt(dim)
    counts = np.bincount(ids, minlength=n_words)
    vocab = Vocab([f"w{i}" for i in range(n_words)], counts, lowercase=True)
    return ArrayCache(offsets, ids, ctx), vocab, hidden
