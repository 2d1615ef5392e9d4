"""Dependency parsing with a biaffine head (Dozat & Manning 2017) over the encoder, as
002 (Wu & Dredze 2020) evaluates encoders; its code is shijie-wu/crosslingual-nlp
(``model/dependency_parser.py``), whose choices are followed unless said otherwise.

Words are represented by their first subword at the encoder's last layer; the first
special token (``[CLS]``, ``<s>``) stands for the root, so that "head 0" has a vector
too. Four MLPs (Linear, ELU, dropout 0.33 with one mask per sentence shared over its
words, as crosslingual-nlp's ``InputVariationalDropout``) give each word a dependent
and a head representation for arcs (512 dimensions) and for labels (128). Arc scores
are biaffine with a bias on the head side, ``s(i <- j) = d_i U h_j + u . h_j`` (the
terms that depend on the dependent alone cannot change which head wins); label scores
are biaffine with biases on both sides, ``s_l(i <- j) = [d_i; 1] W_l [h_j; 1]``. Both
biaffine weights start at zero. The loss is the cross-entropy of the gold head over all
candidate heads (the root and the other words of the sentence) plus the cross-entropy
of the gold relation at the gold head, each averaged over words.

Decoding: ``"mst"`` (default, as crosslingual-nlp evaluates) is the maximum spanning
tree under the arc log-probabilities (Chu-Liu/Edmonds) with exactly one word attached
to the root; ``"argmax"`` takes each word's best head on its own (possibly not a tree;
such sentences are counted). Relations are the best label at the chosen head. Unlike
crosslingual-nlp, the tree is scored by arc probabilities alone (it multiplies in the
best label's probability and sums probabilities rather than log-probabilities) and has
a single root (its MST does not enforce one).

Relations are compared without their language-specific subtypes ("nmod:poss" ->
"nmod"), both in training (crosslingual-nlp reads only the universal part) and in
scoring (the CoNLL 2018 evaluation's LAS). UAS and LAS leave out punctuation by
default (words whose gold UPOS is PUNCT or SYM, crosslingual-nlp's ``POS_TO_IGNORE``
on UD); the scores over all words are reported beside.

Length: training uses windows of ``max_length`` subwords and skips (and counts) longer
sentences, since a tree cannot be cut; evaluation takes whole sentences up to the
tokenizer's ``model_max_length`` (``extra["eval_max_length"]`` overrides; never less
than ``max_length``), as crosslingual-nlp evaluates whole sentences; a sentence longer
still gets no prediction: every word counts as wrong, and the sentence is counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from transformers.utils import ModelOutput

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import local_model_dir
from xlalign.evaluation.tasks.base import Encoded, Task, TaskParams
from xlalign.evaluation.tasks.collate import pad_batch
from xlalign.evaluation.tasks.data import ParsedSentence
from xlalign.evaluation.tasks.metrics import attachment_scores
from xlalign.evaluation.tasks.tagging import special_tokens, word_pieces

DECODINGS = ("mst", "argmax")
#: gold UPOS tags left out of UAS/LAS with ``exclude_punct`` (crosslingual-nlp's
#: ``POS_TO_IGNORE`` restricted to UD's tags)
PUNCT_UPOS = frozenset({"PUNCT", "SYM"})
#: a tokenizer ``model_max_length`` above this is the "no limit" placeholder
_NO_LIMIT = 100_000


# --------------------------------------------------------------------------- trees


def _find_cycle(heads: np.ndarray) -> list[int] | None:
    """The nodes of one cycle of the head graph (node 0 is the root), or None."""
    n = len(heads)
    state = np.zeros(n, dtype=np.int8)  # 0 unseen, 1 on the current path, 2 done
    state[0] = 2
    for start in range(1, n):
        path = []
        v = start
        while state[v] == 0:
            state[v] = 1
            path.append(v)
            v = int(heads[v])
        if state[v] == 1:  # came back onto the current path
            return path[path.index(v) :]
        for u in path:
            state[u] = 2
    return None


def _chu_liu_edmonds(scores: np.ndarray) -> np.ndarray:
    """Maximum spanning arborescence rooted at node 0: ``scores[d, h]`` is the score of
    head ``h`` for dependent ``d`` (row 0 unused, -inf where forbidden; every node needs
    a finite score for some head). Returns ``heads`` (``heads[0] = -1``)."""
    n = scores.shape[0]
    heads = scores.argmax(axis=1)
    heads[0] = -1
    cycle = _find_cycle(heads)
    if cycle is None:
        return heads
    in_cycle = np.zeros(n, dtype=bool)
    in_cycle[cycle] = True
    rest = [v for v in range(n) if not in_cycle[v]]  # 0 first
    c = len(rest)  # the contracted node
    idx = np.asarray(rest)
    cyc = np.asarray(cycle)
    sub = np.full((c + 1, c + 1), -np.inf)
    sub[:c, :c] = scores[np.ix_(idx, idx)]
    # an arc from the cycle into an outside word leaves from its best cycle node
    into = scores[np.ix_(idx, cyc)]
    leave_from = cyc[into.argmax(axis=1)]
    sub[:c, c] = into.max(axis=1)
    # an arc from an outside head into the cycle breaks the cycle arc of the word it enters
    gain = scores[np.ix_(cyc, idx)] - scores[cyc, heads[cyc]][:, None]
    enter_at = cyc[gain.argmax(axis=0)]
    sub[c, :c] = gain.max(axis=0)
    sub[0, :] = -np.inf
    sub_heads = _chu_liu_edmonds(sub)
    out = heads.copy()
    for k, v in enumerate(rest):
        if v == 0:
            continue
        h = sub_heads[k]
        out[v] = leave_from[k] if h == c else rest[h]
    h = rest[sub_heads[c]]
    out[enter_at[sub_heads[c]]] = h
    return out


def mst_heads(scores: np.ndarray, *, single_root: bool = True) -> list[int]:
    """The highest-scoring dependency tree of a sentence of ``n`` words.

    ``scores`` is ``(n, n + 1)``: ``scores[i, j]`` for word ``i + 1`` taking head ``j``
    (0 = the root; ``-inf`` forbids an arc; a word's own column is ignored). Returns the
    head of each word (0 = root). ``single_root`` keeps exactly one word on the root
    (where forbidden arcs leave such a tree; the parser forbids none between words):
    every root arc is lowered by more than any two trees can differ, so the best tree
    uses one root arc and, among those, is the best by the original scores.
    """
    n = scores.shape[0]
    if scores.shape != (n, n + 1):
        raise ValueError(f"mst_heads: expected scores of shape (n, n + 1), got {scores.shape}")
    if n == 0:
        return []
    full = np.full((n + 1, n + 1), -np.inf)
    full[1:, :] = np.asarray(scores, dtype=np.float64)
    np.fill_diagonal(full, -np.inf)
    if not np.isfinite(full[1:, 0]).all():
        raise ValueError("mst_heads: every word needs a finite score for the root")
    if single_root and n > 1:
        finite = full[1:][np.isfinite(full[1:])]
        full[1:, 0] -= n * (finite.max() - finite.min()) + 1.0
    return [int(h) for h in _chu_liu_edmonds(full)[1:]]


def is_tree(heads: Sequence[int]) -> bool:
    """Whether ``heads`` (0 = root, 1-based otherwise) is a tree with one root word."""
    n = len(heads)
    if sum(1 for h in heads if h == 0) != 1 or any(not 0 <= h <= n for h in heads):
        return False
    return _find_cycle(np.asarray([-1, *heads])) is None


# --------------------------------------------------------------------------- model


class SharedDropout(nn.Module):
    """Dropout with one mask per sequence, shared by all its positions (``(batch,
    length, dim)`` inputs), as crosslingual-nlp's ``InputVariationalDropout``."""

    def __init__(self, p: float) -> None:
        super().__init__()
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0:
            return x
        mask = F.dropout(x.new_ones(x.shape[0], 1, x.shape[2]), self.p, training=True)
        return x * mask


def _mlp(dim_in: int, dim_out: int, dropout: float) -> nn.Module:
    return nn.Sequential(nn.Linear(dim_in, dim_out), nn.ELU(), SharedDropout(dropout))


class BiaffineArc(nn.Module):
    """``s[b, i, j] = d[b, i] U h[b, j] + u . h[b, j]``: the score of head ``j`` for
    dependent ``i`` (Dozat & Manning's arc scorer; zero-initialised)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(dim, dim))
        self.head_bias = nn.Parameter(torch.zeros(dim))

    def forward(self, dep: torch.Tensor, head: torch.Tensor) -> torch.Tensor:
        scores = torch.einsum("bid,de,bje->bij", dep, self.weight, head)
        return scores + (head @ self.head_bias).unsqueeze(1)


class BiaffineLabel(nn.Module):
    """``s[..., l] = [d; 1] W_l [h; 1]``: label scores of dependent-head pairs
    (bilinear plus both linear terms and a bias; zero-initialised)."""

    def __init__(self, dim: int, n_labels: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(n_labels, dim + 1, dim + 1))

    def forward(self, dep: torch.Tensor, head: torch.Tensor) -> torch.Tensor:
        one = dep.new_ones(*dep.shape[:-1], 1)
        d = torch.cat([dep, one], -1)
        h = torch.cat([head, one], -1)
        return torch.einsum("...i,lij,...j->...l", d, self.weight, h)


@dataclass
class ParserOutput(ModelOutput):
    """``loss`` (with gold labels); in evaluation mode the decoded ``heads``/``rels``
    (argmax) and ``tree_heads``/``tree_rels`` (MST), ``(batch, words)``, -100 past a
    sentence's end."""

    loss: torch.Tensor | None = None
    heads: torch.Tensor | None = None
    rels: torch.Tensor | None = None
    tree_heads: torch.Tensor | None = None
    tree_rels: torch.Tensor | None = None


class BiaffineParser(nn.Module):
    """An encoder with a biaffine dependency head (see the module docstring)."""

    def __init__(
        self,
        encoder: nn.Module,
        n_labels: int,
        *,
        arc_dim: int = 512,
        label_dim: int = 128,
        dropout: float = 0.33,
    ) -> None:
        super().__init__()
        self.encoder = encoder
        hidden = int(encoder.config.hidden_size)
        self.arc_dep = _mlp(hidden, arc_dim, dropout)
        self.arc_head = _mlp(hidden, arc_dim, dropout)
        self.label_dep = _mlp(hidden, label_dim, dropout)
        self.label_head = _mlp(hidden, label_dim, dropout)
        self.arc = BiaffineArc(arc_dim)
        self.label = BiaffineLabel(label_dim, n_labels)

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        word_starts: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        head_labels: torch.Tensor | None = None,
        rel_labels: torch.Tensor | None = None,
    ) -> ParserOutput:
        """``word_starts[b, i]``: the position of word ``i + 1``'s first subword (0 past
        the sentence's end); ``head_labels``/``rel_labels``: gold head (0 = root) and
        relation id of each word, -100 to ignore."""
        kwargs = {} if token_type_ids is None else {"token_type_ids": token_type_ids}
        hidden = self.encoder(
            input_ids=input_ids, attention_mask=attention_mask, **kwargs
        ).last_hidden_state
        words = word_starts > 0
        index = F.pad(word_starts, (1, 0))  # position 0: the root's special token
        x = hidden.gather(1, index.unsqueeze(-1).expand(-1, -1, hidden.shape[-1]))
        scores = self.arc(self.arc_dep(x[:, 1:]), self.arc_head(x))  # (b, n, n + 1)
        n = words.shape[1]
        allowed = F.pad(words, (1, 0), value=True).unsqueeze(1).expand(-1, n, -1).clone()
        allowed[:, torch.arange(n), torch.arange(n) + 1] = False  # no word heads itself
        scores = scores.masked_fill(~allowed, float("-inf"))
        label_dep, label_head = self.label_dep(x[:, 1:]), self.label_head(x)

        def labels_at(heads: torch.Tensor) -> torch.Tensor:
            at = heads.clamp(min=0).unsqueeze(-1).expand(-1, -1, label_head.shape[-1])
            return self.label(label_dep, label_head.gather(1, at))

        out = ParserOutput()
        if head_labels is not None:
            arc_loss = F.cross_entropy(
                scores.flatten(0, 1).float(), head_labels.flatten(), ignore_index=-100
            )
            rels = rel_labels if rel_labels is not None else torch.full_like(head_labels, -100)
            label_scores = labels_at(head_labels)
            if (rels != -100).any():
                label_loss = F.cross_entropy(
                    label_scores.flatten(0, 1).float(), rels.flatten(), ignore_index=-100
                )
            else:  # no known relation in the batch (unseen labels only)
                label_loss = label_scores.sum() * 0.0
            out.loss = arc_loss + label_loss
        if not self.training:
            pad = torch.full_like(word_starts, -100)
            heads = scores.argmax(-1)
            out.heads = torch.where(words, heads, pad)
            out.rels = torch.where(words, labels_at(heads).argmax(-1), pad)
            logp = scores.float().log_softmax(-1).detach().cpu().numpy()
            lengths = words.sum(-1).tolist()
            tree = np.zeros(heads.shape, dtype=np.int64)
            for b, k in enumerate(lengths):
                tree[b, :k] = mst_heads(logp[b, :k, : k + 1])
            tree_heads = torch.as_tensor(tree, device=heads.device)
            out.tree_heads = torch.where(words, tree_heads, pad)
            out.tree_rels = torch.where(words, labels_at(tree_heads).argmax(-1), pad)
        return out


# --------------------------------------------------------------------------- task


class ParsingTask(Task):
    """UD dependency parsing: UAS and LAS (see the module docstring).

    ``params.extra`` may set ``decoding`` ("mst" | "argmax"), ``exclude_punct`` (bool)
    and ``eval_max_length`` (subwords); :meth:`encode` takes them over, so that the
    decoding and the scores of the run follow the run's parameters."""

    family = "parsing"
    record_type = ParsedSentence
    selection_metric = "las"

    def __init__(
        self,
        *,
        decoding: str = "mst",
        exclude_punct: bool = True,
        arc_dim: int = 512,
        label_dim: int = 128,
        dropout: float = 0.33,
    ) -> None:
        self.decoding = decoding
        self.exclude_punct = exclude_punct
        self.arc_dim = arc_dim
        self.label_dim = label_dim
        self.dropout = dropout
        self._check()

    def _check(self) -> None:
        if self.decoding not in DECODINGS:
            raise ConfigError(
                f"parsing: decoding must be one of {DECODINGS}, not {self.decoding!r}"
            )
        if not isinstance(self.exclude_punct, bool):
            raise ConfigError(
                f"parsing: exclude_punct must be true or false, not {self.exclude_punct!r}"
            )

    def _configure(self, params: TaskParams) -> None:
        self.decoding = params.extra.get("decoding", self.decoding)
        self.exclude_punct = params.extra.get("exclude_punct", self.exclude_punct)
        self._check()

    @staticmethod
    def relation(deprel: str) -> str:
        """The universal part of a relation ("nmod:poss" -> "nmod")."""
        return deprel.split(":")[0]

    def label_list(self, train: Sequence[ParsedSentence]) -> list[str]:
        labels = sorted({self.relation(r) for rec in train for r in rec.deprels})
        if not labels:
            raise InputError("parsing: the training records hold no relations")
        return labels

    def build_model(self, encoder: Path, labels: list[str]) -> Any:
        from transformers import AutoModel

        model = AutoModel.from_pretrained(
            local_model_dir(encoder, what="encoder"), local_files_only=True
        )
        if getattr(model, "pooler", None) is not None:
            model.pooler = None  # unused: the head reads the last layer's word vectors
        return BiaffineParser(
            model,
            len(labels),
            arc_dim=self.arc_dim,
            label_dim=self.label_dim,
            dropout=self.dropout,
        )

    @staticmethod
    def window(tokenizer: Any, params: TaskParams, split: str) -> int:
        """Subwords per sentence (special tokens included) the split may use."""
        if split == "train":
            return params.max_length
        limit = params.extra.get("eval_max_length")
        if limit is None:
            model_max = getattr(tokenizer, "model_max_length", None) or 0
            limit = model_max if 0 < model_max <= _NO_LIMIT else params.max_length
        return max(int(limit), params.max_length)

    def encode(
        self,
        records: Sequence[ParsedSentence],
        tokenizer: Any,
        labels: list[str],
        params: TaskParams,
        *,
        split: str,
    ) -> Encoded:
        """One feature per sentence that fits its window (:meth:`window`):
        ``input_ids``, ``word_starts`` (first subword of each word), ``head_labels``,
        ``rel_labels`` (-100 for a relation training never saw).

        Counts: ``examples``, ``features``, ``sentences_too_long`` (training: skipped;
        evaluation: no prediction, every word wrong), ``words_without_subwords`` (the
        unknown token stands in), ``unseen_relation_words`` and
        ``unseen_relation_words[<rel>]`` (ignored by the loss, wrong in LAS).
        """
        self._configure(params)
        label_id = {label: i for i, label in enumerate(labels)}
        prefix, suffix = special_tokens(tokenizer)
        if not prefix:
            raise ConfigError(
                f"{type(tokenizer).__name__}: parsing needs a special token before the "
                "sentence ([CLS], <s>) to stand for the root"
            )
        window = self.window(tokenizer, params, split)
        unk = tokenizer.unk_token_id
        counts: Counter[str] = Counter()
        features: list[dict[str, Any]] = []
        feature_example: list[int] = []
        pieces_of = word_pieces(tokenizer, [rec.tokens for rec in records])
        for ex, (rec, pieces) in enumerate(zip(records, pieces_of, strict=True)):
            ids = list(prefix)
            starts = []
            for w, p in enumerate(pieces):
                if not p:
                    if unk is None:
                        raise InputError(
                            f"{split} record {rec.id!r}: word {rec.tokens[w]!r} has no "
                            "subwords and the tokenizer has no unknown token"
                        )
                    p = [unk]
                    counts["words_without_subwords"] += 1
                starts.append(len(ids))
                ids.extend(p)
            ids.extend(suffix)
            if len(ids) > window:
                counts["sentences_too_long"] += 1
                continue
            rels = []
            for r in rec.deprels:
                i = label_id.get(self.relation(r))
                if i is None:
                    counts["unseen_relation_words"] += 1
                    counts[f"unseen_relation_words[{self.relation(r)}]"] += 1
                    i = -100
                rels.append(i)
            features.append(
                {
                    "input_ids": ids,
                    "word_starts": starts,
                    "head_labels": list(rec.heads),
                    "rel_labels": rels,
                }
            )
            feature_example.append(ex)
        counts["examples"] = len(records)
        counts["features"] = len(features)
        return Encoded(features=features, feature_example=feature_example, counts=dict(counts))

    def collate(self, tokenizer: Any) -> Callable[[list[dict[str, Any]]], dict[str, Any]]:
        """Pads subwords and words to the longest of the batch (right padding; word
        start 0 and label -100 past a sentence's end)."""
        pad = tokenizer.pad_token_id
        if pad is None:
            raise ConfigError(f"{type(tokenizer).__name__}: no padding token")
        pads = {"input_ids": pad, "word_starts": 0, "head_labels": -100, "rel_labels": -100}
        return partial(pad_batch, pads=pads)

    def decode(
        self,
        outputs: tuple[Any, ...],
        encoded: Encoded,
        records: Sequence[ParsedSentence],
        labels: list[str],
        params: TaskParams,
    ) -> list[dict[str, Any]]:
        """``{"id", "prediction": {"heads", "deprels"}, "gold": {"heads", "deprels",
        "upos"}, "decoding"}`` per sentence; a sentence too long to be parsed gets heads
        -1 and relations "_" (all wrong) and ``"too_long": True``."""
        self._configure(params)
        if len(outputs) != 4:
            raise ValueError(
                f"parsing decode: expected 4 outputs (heads, rels, tree_heads, tree_rels), "
                f"got {len(outputs)}"
            )
        pick = (2, 3) if self.decoding == "mst" else (0, 1)
        heads_all, rels_all = np.asarray(outputs[pick[0]]), np.asarray(outputs[pick[1]])
        if heads_all.shape[0] != len(encoded.features):
            raise ValueError(
                f"parsing decode: {len(encoded.features)} features but outputs of shape "
                f"{heads_all.shape}"
            )
        row = {ex: f for f, ex in enumerate(encoded.feature_example)}
        out = []
        for ex, rec in enumerate(records):
            n = len(rec.tokens)
            pred: dict[str, Any] = {"id": rec.id}
            f = row.get(ex)
            if f is None:
                pred["prediction"] = {"heads": [-1] * n, "deprels": ["_"] * n}
                pred["too_long"] = True
            else:
                pred["prediction"] = {
                    "heads": [int(h) for h in heads_all[f, :n]],
                    "deprels": [labels[int(r)] for r in rels_all[f, :n]],
                }
            pred["gold"] = {
                "heads": list(rec.heads),
                "deprels": list(rec.deprels),
                "upos": list(rec.upos),
            }
            pred["decoding"] = self.decoding
            out.append(pred)
        return out

    def score(
        self,
        predictions: Sequence[dict[str, Any]],
        records: Sequence[ParsedSentence],
        *,
        lang: str,
    ) -> dict[str, Any]:
        """``uas`` and ``las`` in [0, 100] (punctuation left out when ``exclude_punct``),
        ``uas_all_words``/``las_all_words`` (every word), ``words`` scored,
        ``punct_excluded``, ``sentences``, ``too_long`` (sentences scored as all wrong)
        and ``not_trees`` (predictions that are not one-root trees; 0 under MST)."""
        if len(predictions) != len(records):
            raise ValueError(
                f"parsing score ({lang}): {len(predictions)} predictions for "
                f"{len(records)} sentences"
            )
        gold_heads = [list(rec.heads) for rec in records]
        gold_rels = [list(rec.deprels) for rec in records]
        pred_heads = [list(p["prediction"]["heads"]) for p in predictions]
        pred_rels = [list(p["prediction"]["deprels"]) for p in predictions]
        everything = attachment_scores(gold_heads, gold_rels, pred_heads, pred_rels)
        if self.exclude_punct:
            # metrics leaves out gold PUNCT: SYM joins it, as in crosslingual-nlp
            upos = [["PUNCT" if u in PUNCT_UPOS else u for u in rec.upos] for rec in records]
            main = attachment_scores(
                gold_heads, gold_rels, pred_heads, pred_rels, exclude_punct=True, upos=upos
            )
        else:
            main = everything
        return {
            "uas": main["uas"],
            "las": main["las"],
            "words": main["count"],
            "punct_excluded": main["excluded"],
            "uas_all_words": everything["uas"],
            "las_all_words": everything["las"],
            "sentences": len(records),
            "too_long": sum(1 for p in predictions if p.get("too_long")),
            "not_trees": sum(
                1
                for p in predictions
                if not p.get("too_long") and not is_tree(p["prediction"]["heads"])
            ),
            "decoding": self.decoding,
        }
