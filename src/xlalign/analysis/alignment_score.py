"""How well two languages' representations are aligned: nearest-neighbour scores.

* :func:`embedding_alignment_score` is the "alignment" of 001 (Appendix E, Table 8), after
  Deshpande et al. (2021): with a one-to-one vocabulary correspondence (a derived
  language made by transliteration), "the alignment score of a token in the vocabulary of
  L_NL [is] 100% if its cosine similarity with the corresponding token in L_deriv is
  highest among L_deriv's vocabulary, else it is 0%"; the score is the mean over the
  natural tokens. Computed on the input embedding matrix.
* :func:`contextual_alignment_score` is *not* 001's number: its extension to contextual
  word vectors of one layer on parallel sentences with gold links (the "word alignment
  score, layer l").
* :func:`layer_states` gives the per-layer word vectors both need from an encoder.

Ties: a token (word) counts as aligned only when its counterpart's cosine similarity is
*strictly* higher than that of every other candidate, so a degenerate space (all rows
equal, or zero) scores 0, never 100. Vectors of norm 0 have cosine 0 with everything.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import local_model_dir

log = logging.getLogger(__name__)

Link = tuple[int, int]


def _unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to norm 1 (rows of norm 0 stay 0), float32."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def embedding_alignment_score(
    embeddings: Any, pairs: Iterable[tuple[int, int]], *, chunk_size: int = 1024
) -> float:
    """001's alignment score (percent) of an embedding matrix ``[vocab, dim]`` (numpy or a
    torch tensor) and the ``(natural_id, derived_id)`` pairs of the one-to-one vocabulary.

    The candidates are the rows of the derived ids of ``pairs`` (the derived vocabulary);
    a natural token scores 100 when its counterpart is strictly the most cosine-similar of
    them, else 0. Natural ids are processed ``chunk_size`` at a time, so memory stays at
    ``chunk_size x |derived vocabulary|`` similarities (float32).
    """
    if hasattr(embeddings, "detach"):
        embeddings = embeddings.detach().float().cpu().numpy()
    emb = np.asarray(embeddings)
    plist = [(int(a), int(b)) for a, b in pairs]
    if not plist:
        raise InputError("embedding alignment score: no (natural, derived) token pairs")
    if emb.ndim != 2:
        raise InputError(
            f"embedding alignment score: expected a [vocab, dim] matrix, got {emb.shape}"
        )
    nat = np.array([a for a, _ in plist], dtype=np.int64)
    der = np.array([b for _, b in plist], dtype=np.int64)
    bad = [i for i in (*nat, *der) if not 0 <= i < len(emb)]
    if bad:
        raise InputError(
            f"embedding alignment score: token id {bad[0]} outside the {len(emb)} rows"
        )
    if len(set(der.tolist())) != len(der) or len(set(nat.tolist())) != len(nat):
        raise InputError("embedding alignment score: the token pairs are not one-to-one")
    if chunk_size < 1:
        raise ConfigError(f"chunk_size: expected a positive integer, got {chunk_size}")
    cand_ids = np.unique(der)
    cands = _unit_rows(emb[cand_ids])  # [D, dim]
    col_of = np.searchsorted(cand_ids, der)  # counterpart's column among the candidates
    hits = 0
    for s in range(0, len(nat), chunk_size):
        q = _unit_rows(emb[nat[s : s + chunk_size]])
        sim = q @ cands.T  # [chunk, D]
        rows = np.arange(len(q))
        cols = col_of[s : s + chunk_size]
        own = sim[rows, cols].copy()
        sim[rows, cols] = -np.inf
        best_other = sim.max(axis=1) if sim.shape[1] > 1 else np.full(len(q), -np.inf)
        hits += int(np.count_nonzero(own > best_other))
    return 100.0 * hits / len(nat)


def contextual_alignment_score(
    src_vectors: Sequence[np.ndarray],
    tgt_vectors: Sequence[np.ndarray],
    links: Sequence[Iterable[Link]],
) -> float | None:
    """The word alignment score of one layer (percent; not 001's number): the share of
    linked source words whose cosine-nearest word among *all* target words of the sample
    (every sentence's) is one of their linked counterparts.

    ``src_vectors[k]`` / ``tgt_vectors[k]`` are ``[n_words, dim]`` arrays of sentence pair
    ``k`` and ``links[k]`` its ``(source word, target word)`` links. A source word counts
    once however many links it has, and scores when the best of its counterparts is
    strictly more similar than every other target word. Words without a vector (NaN rows)
    are left out, as candidates and as queries. None when no linked source word has a
    vector.
    """
    if not len(src_vectors) == len(tgt_vectors) == len(links):
        raise InputError(
            f"word alignment score: {len(src_vectors)} source, {len(tgt_vectors)} target "
            f"sentences and {len(links)} link sets"
        )
    tgt_rows: list[np.ndarray] = []
    offset = [0]
    for t in tgt_vectors:
        t = np.asarray(t, dtype=np.float32).reshape(len(t), -1)
        tgt_rows.append(t)
        offset.append(offset[-1] + len(t))
    if offset[-1] == 0:
        return None
    cands = np.concatenate(tgt_rows, axis=0)
    valid = ~np.isnan(cands).any(axis=1)
    cands = _unit_rows(np.where(valid[:, None], cands, 0.0))
    queries: list[np.ndarray] = []
    targets: list[list[int]] = []
    for k, (s, ls) in enumerate(zip(src_vectors, links, strict=True)):
        s = np.asarray(s, dtype=np.float32).reshape(len(s), -1)
        by_src: dict[int, list[int]] = {}
        for i, j in ls:
            if not (0 <= i < len(s) and 0 <= j < offset[k + 1] - offset[k]):
                raise InputError(
                    f"word alignment score: link {i}-{j} of sentence {k} outside its "
                    f"{len(s)} source and {offset[k + 1] - offset[k]} target words"
                )
            if valid[offset[k] + j]:
                by_src.setdefault(int(i), []).append(offset[k] + int(j))
        for i, js in sorted(by_src.items()):
            if not np.isnan(s[i]).any():
                queries.append(s[i])
                targets.append(js)
    if not queries:
        return None
    q = _unit_rows(np.stack(queries))
    hits = 0
    for start in range(0, len(q), 1024):
        sim = q[start : start + 1024] @ cands.T
        sim[:, ~valid] = -np.inf
        for r, js in enumerate(targets[start : start + 1024]):
            own = sim[r, js].max()
            sim[r, js] = -np.inf
            hits += bool(own > sim[r].max())
    return 100.0 * hits / len(q)


def _load_encoder(encoder: Any, tokenizer: Any, device: Any) -> tuple[Any, Any]:
    """(model in eval mode on ``device``, tokenizer) from a directory or a loaded model."""
    import torch

    from xlalign.core.device import resolve_device

    if isinstance(encoder, str | Path):
        from transformers import AutoModel, AutoTokenizer

        where = Path(local_model_dir(encoder, what="encoder"))
        try:
            tok = (
                tokenizer
                if tokenizer is not None
                else AutoTokenizer.from_pretrained(where, local_files_only=True)
            )
            model = AutoModel.from_pretrained(where, local_files_only=True, dtype=torch.float32)
        except Exception as exc:  # transformers raises OSError, ValueError, KeyError...
            raise InputError(
                f"{where}: cannot load a Hugging Face encoder offline ({exc})"
            ) from exc
        model.to(resolve_device(device))
    else:
        if tokenizer is None:
            raise ConfigError("layer_states: a loaded model needs its tokenizer")
        model, tok = encoder, tokenizer
        if device is not None:
            model.to(resolve_device(device))
    model.eval()
    return model, tok


class _StackedLayers:
    """A model whose ``last_hidden_state`` is the requested hidden states side by side
    (``[B, T, n_layers * dim]``, and ``config.hidden_size`` that width), so that the
    contextual module's batching and subword pooling serve every layer in one forward
    pass (mean pooling is per feature)."""

    def __init__(self, model: Any, layers: Sequence[int]) -> None:
        self.model = model
        self.layers = list(layers)
        self.config = copy.copy(model.config)
        self.config.hidden_size = int(model.config.hidden_size) * len(self.layers)

    def parameters(self) -> Any:
        return self.model.parameters()

    def __call__(self, **inputs: Any) -> Any:
        import torch

        states = self.model(**inputs, output_hidden_states=True).hidden_states
        depth = int(self.model.config.num_hidden_layers)
        if states is None or len(states) != depth + 1:
            got = None if states is None else len(states)
            raise ConfigError(
                f"{type(self.model).__name__}: expected {depth + 1} hidden states, got {got}"
            )
        return SimpleNamespace(last_hidden_state=torch.cat([states[x] for x in self.layers], -1))


def layer_states(
    encoder: Any,
    tokenizer: Any = None,
    sentences_words: Sequence[Sequence[str]] = (),
    *,
    layers: str | Sequence[int] = "all",
    batch_size: int = 16,
    device: Any = None,
    max_length: int = 512,
) -> list[np.ndarray]:
    """Per sentence, a float32 ``[n_layers, n_words, dim]`` array of word vectors at every
    requested layer (``"all"``: ``0 .. depth``, 0 = the embedding layer's output).

    ``encoder`` is an encoder directory (loaded offline; its tokenizer unless one is
    given) or a loaded model with its ``tokenizer``. Each sentence is tokenised as a whole
    (``is_split_into_words``) and a word's vector is the mean of its subwords' states
    (special tokens left out), by :mod:`xlalign.encoders.contextual`: sentences longer
    than ``max_length`` subwords are cut, and words without a subword left (cut off, or
    mapped to none) get NaN rows. One forward pass (``output_hidden_states``) per batch of
    at most ``batch_size x max_length`` padded tokens, longest sentences first.
    """
    from xlalign.encoders.contextual import WordVectorStats, word_vectors

    if batch_size < 1 or max_length < 3:
        raise ConfigError(f"batch_size {batch_size} / max_length {max_length}: too small")
    model, tok = _load_encoder(encoder, tokenizer, device)
    depth = int(model.config.num_hidden_layers)
    wanted = list(range(depth + 1)) if layers == "all" else [int(x) for x in layers]
    if not wanted or any(not 0 <= x <= depth for x in wanted):
        raise ConfigError(f"layers {wanted}: expected indices in 0..{depth}")
    dim = int(model.config.hidden_size)
    stacked = _StackedLayers(model, wanted)
    stats = WordVectorStats()
    out: list[np.ndarray] = []
    for v in word_vectors(
        sentences_words,
        tok,
        stacked,
        pooling="mean",
        max_length=max_length,
        batch_tokens=batch_size * max_length,
        stats=stats,
    ):
        out.append(np.ascontiguousarray(v.reshape(len(v), len(wanted), dim).transpose(1, 0, 2)))
    if stats.truncated_words or stats.empty_words:
        log.warning(
            "%d word(s) cut off by max_length and %d mapped to no subword: NaN vectors",
            stats.truncated_words,
            stats.empty_words,
        )
    return out
