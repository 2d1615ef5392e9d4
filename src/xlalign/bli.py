"""Bilingual lexicon induction (BLI): translation retrieval between two embedding spaces.

MUSE's conventions: a test dictionary has one ``source target`` pair per line, several
lines per source word for several gold translations; a source word counts as correct at k
when any of its gold translations is among its k nearest target words. Only pairs whose
two words are both in the vocabularies are evaluated (MUSE's OOV policy); the coverage is
reported beside the scores so that numbers over different vocabularies are not confused.
Retrieval is batched so large vocabularies fit in memory, on a GPU when there is one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from xlalign.errors import InputError
from xlalign.io import PathLike, iter_lines


def read_dictionary(path: PathLike, *, lowercase: bool = False) -> dict[str, list[str]]:
    """A MUSE-format dictionary: source word -> gold translations (in file order)."""
    pairs: dict[str, list[str]] = {}
    for lineno, line in enumerate(iter_lines(path), start=1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise InputError(
                f"{path}: line {lineno}: expected 'source target' (2 fields), got {len(parts)}"
            )
        src, tgt = (p.lower() for p in parts) if lowercase else parts
        gold = pairs.setdefault(src, [])
        if tgt not in gold:
            gold.append(tgt)
    if not pairs:
        raise InputError(f"{path}: empty dictionary; expected 'source target' lines")
    return pairs


@dataclass(frozen=True)
class BLIResult:
    precision: dict[int, float]  # k -> P@k
    evaluated: int  # source words with at least one in-vocabulary gold translation
    total: int  # source words in the dictionary
    retrieval: str

    @property
    def coverage(self) -> float:
        return self.evaluated / self.total if self.total else 0.0

    def as_dict(self) -> dict[str, float | int | str]:
        out: dict[str, float | int | str] = {f"p@{k}": v for k, v in self.precision.items()}
        out.update(
            evaluated=self.evaluated,
            total=self.total,
            coverage=self.coverage,
            retrieval=self.retrieval,
        )
        return out


def _normalise(x: torch.Tensor) -> torch.Tensor:
    return x / x.norm(dim=1, keepdim=True).clamp_min(1e-12)


def evaluate_bli(
    src_words: Sequence[str],
    src_vecs: np.ndarray,
    tgt_words: Sequence[str],
    tgt_vecs: np.ndarray,
    dictionary: dict[str, list[str]],
    *,
    ks: Sequence[int] = (1, 5, 10),
    batch_size: int = 4096,
    device: str | torch.device | None = None,
) -> BLIResult:
    """Nearest-neighbour (cosine) BLI from the source space into the target space."""
    if src_vecs.shape[1] != tgt_vecs.shape[1]:
        raise InputError(
            f"spaces of different dimension: source {src_vecs.shape[1]}, target {tgt_vecs.shape[1]}"
        )
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    src_index = {w: i for i, w in enumerate(src_words)}
    tgt_index = {w: i for i, w in enumerate(tgt_words)}
    queries: list[int] = []
    golds: list[set[int]] = []
    for src, tgts in dictionary.items():
        if src not in src_index:
            continue
        gold = {tgt_index[t] for t in tgts if t in tgt_index}
        if gold:
            queries.append(src_index[src])
            golds.append(gold)
    if not queries:
        raise InputError("no dictionary pair has both words in the vocabularies")
    kmax = min(max(ks), len(tgt_words))
    tgt = _normalise(torch.as_tensor(tgt_vecs, dtype=torch.float32, device=dev))
    hits = dict.fromkeys(ks, 0)
    for start in range(0, len(queries), batch_size):
        idx = torch.as_tensor(queries[start : start + batch_size], device=dev)
        q = _normalise(torch.as_tensor(src_vecs, dtype=torch.float32, device=dev)[idx])
        top = (q @ tgt.T).topk(kmax, dim=1).indices.cpu().numpy()
        for row, gold in zip(top, golds[start : start + batch_size], strict=True):
            for k in ks:
                if gold.intersection(row[:k].tolist()):
                    hits[k] += 1
    n = len(queries)
    return BLIResult({k: hits[k] / n for k in ks}, n, len(dictionary), "nn")


def random_baseline(n_targets: int, ks: Sequence[int] = (1, 5, 10), golds: float = 1.0) -> dict:
    """Expected P@k of a random ranking with about ``golds`` gold translations per word."""
    return {f"p@{k}": min(1.0, k * golds / max(n_targets, 1)) for k in ks}


def load_space(path: PathLike) -> tuple[list[str], np.ndarray]:
    """Words and vectors from a ``.vec`` file or an ``.npy`` stem (with ``.vocab.txt``)."""
    from xlalign.vectors import read_npy, read_vec

    p = Path(path)
    if p.suffix == ".npy":
        return read_npy(str(p)[: -len(".npy")])
    return read_vec(p)
