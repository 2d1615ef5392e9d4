"""Targets of the capped-memory tests of the mapping stage (issue 28): VecMap's
self-learning and unsupervised initialisation, CSLS retrieval (BLI) and dictionary
induction, each on spaces made here from a seed (so that a child process and the test
build the same ones). Run by :func:`capped.run_capped` in a child whose address space is
capped; each returns small arrays to compare with an uncapped reference.

The child imports this module before it caps its address space, so what is mapped once
per process, whatever the data, is set up here and counts in the base rather than in
the headroom: the library modules, tqdm's monitor thread (started by the first progress
bar, even a disabled one; its malloc arena reserves 64 MB of address space) and the lazy
buffers of the BLAS and LAPACK calls (tens of MB at the first call).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from xlalign.evaluation.bli import evaluate_bli
from xlalign.mapping import vecmap
from xlalign.mapping.induction import induce_dictionary


def _warm_up() -> None:
    for _ in tqdm(range(1), disable=True):
        pass
    a = np.linalg.qr(np.random.default_rng(0).standard_normal((8, 8)))[0]
    t = torch.as_tensor(a, dtype=torch.float32)
    (t @ t.T).topk(2, dim=1)
    (t @ t.T).sort(dim=1)
    torch.linalg.eigh(t.double() @ t.double().T)
    torch.linalg.svd(t.double())
    torch.rand(8, generator=torch.Generator().manual_seed(0))


_warm_up()


def spaces(
    n: int, d: int, seed: int = 0, *, rotate: bool = True, noise: float = 0.3
) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """Two related spaces of ``n`` words (the first, rotated unless ``rotate`` is False,
    plus ``noise``), the first ``n // 2`` words shared, rows in a made-up frequency order."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    rot = np.linalg.qr(rng.standard_normal((d, d)))[0].astype(np.float32)
    z = ((x @ rot if rotate else x) + noise * rng.standard_normal((n, d))).astype(np.float32)
    src = [f"w{i}" for i in range(n)]
    tgt = [f"w{i}" if i < n // 2 else f"t{i}" for i in range(n)]
    return src, x, tgt, z


def bli_csls(
    n: int, d: int, budget_mb: float | None = None, batch_size: int | None = None
) -> dict[str, Any]:
    """CSLS BLI over two whole (aligned) ``n``-word spaces (the r_S term scores every
    target word against every source word) on a dictionary of 300 words."""
    src, x, tgt, z = spaces(n, d, rotate=False, noise=1.2)
    dic = {f"w{i}": [f"w{i}" if i < n // 2 else f"t{i}"] for i in range(0, n, max(1, n // 300))}
    res = evaluate_bli(
        src, x, tgt, z, dic, retrieval="csls", budget_mb=budget_mb, batch_size=batch_size
    )
    return {"ranks": res.ranks, "precision": res.precision, "mrr": res.mrr}


def induce(
    n: int, d: int, budget_mb: float | None = None, batch_size: int | None = None
) -> list[tuple[str, str, float]]:
    """CSLS dictionary induction (mutual nearest neighbours) over ``n`` words per side."""
    src, x, tgt, z = spaces(n, d)
    pairs = induce_dictionary(
        src, x, tgt, z, max_rank=n, budget_mb=budget_mb, batch_size=batch_size
    )
    return [(p.src, p.tgt, p.score) for p in pairs]


def unsupervised_init(n: int, d: int, vocab: int, budget_mb: float | None = None) -> Any:
    """VecMap's unsupervised initialisation (the ``unsupervised`` recipe) over the
    ``vocab`` most frequent words: the seed dictionary's (source, target) rows."""
    _, x, _, z = spaces(n, d)
    args = vecmap.recipe_args("unsupervised", unsupervised_vocab=vocab)
    xt = vecmap._normalize_(torch.tensor(x), args.normalize)
    zt = vecmap._normalize_(torch.tensor(z), args.normalize)
    s, t = vecmap._unsupervised_init(xt, zt, args, budget_mb)
    return s.numpy(), t.numpy()


def self_learning(
    n: int,
    d: int,
    budget_mb: float | None = None,
    batch_size: int | None = None,
    iterations: int = 2,
) -> dict[str, Any]:
    """VecMap's semi-supervised recipe (self-learning over all ``n`` words, CSLS,
    dropout) from a seed dictionary of identical words, ``iterations`` iterations."""
    src, x, tgt, z = spaces(n, d)
    args = vecmap.recipe_args(
        "identical",
        vocabulary_cutoff=n,
        max_iterations=iterations,
        batch_size=batch_size,
    )
    m = vecmap.map_embeddings(
        x, z, args, src_words=src, trg_words=tgt, progress=False, budget_mb=budget_mb
    )
    return {
        "src_transform": m.src_transform,
        "trg_transform": m.trg_transform,
        "src_indices": m.src_indices,
        "trg_indices": m.trg_indices,
        "objective": m.stats["objective"],
        "block_rows": m.stats["block_rows"],
    }
