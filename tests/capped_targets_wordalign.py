"""Targets of the capped-memory tests of word alignment (tests/capped.py runs them in a child
whose address space is capped)."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path


def write_corpus(path: str, n_pairs: int, seed: int = 0) -> str:
    """A synthetic parallel corpus TSV of ``n_pairs`` pairs over a large vocabulary (source
    word sK translates as tK, adjacent words swapped now and then); streamed to disk."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("id\tsource\ttarget\n")
        for k in range(n_pairs):
            src = [f"s{rng.randrange(50_000)}" for _ in range(rng.randint(8, 16))]
            tgt = ["t" + w[1:] for w in src]
            if rng.random() < 0.4:
                tgt[0], tgt[1] = tgt[1], tgt[0]
            fh.write(f"p{k}\t{' '.join(src)}\t{' '.join(tgt)}\n")
    return path


def align(corpus: str, out_dir: str, chunk_size: int) -> str:
    """Align ``corpus`` in chunks of ``chunk_size`` (one sampler, few iterations, seeded);
    returns the SHA-256 of the symmetrised links."""
    from xlalign.wordalign.eflomal import AlignmentPaths, AlignOptions, align_corpus

    out = AlignmentPaths.in_dir(out_dir)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    options = AlignOptions(chunk_size=chunk_size, model=1, samplers=1, iterations=(1, 0, 0), seed=1)
    align_corpus(corpus, out, options, tmpdir=Path(out_dir) / "tmp", progress=False)
    return hashlib.sha256(out.symmetrized.read_bytes()).hexdigest()
