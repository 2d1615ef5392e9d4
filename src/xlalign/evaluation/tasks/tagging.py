"""Token classification (NER in IOB2, POS): XTREME's PAN-X and UD-POS task family.

Words are tokenised as pre-split words (``is_split_into_words``); a word's label goes on
its *first* subword and every other position gets -100 (ignored by the loss), as
XTREME's ``run_tag.py`` and Hugging Face's ``run_ner.py`` do. A sentence whose subwords
do not fit the window (``max_length``, special tokens included) is split into
consecutive chunks at word boundaries, so every word is labelled and predicted exactly
once and nothing is truncated silently; only a single word longer than the window is cut
(its first subwords kept, its label on the first one) and counted. :meth:`decode`
reassembles word-level predictions across a sentence's chunks.

Scores: NER -> seqeval's entity-level precision / recall / F1
(:func:`~.metrics.span_f1`); POS -> XTREME's "F1" (:func:`~.metrics.xtreme_pos_f1`,
seqeval over raw POS tags) *and* token accuracy. Both schemes select on ``f1``, as
XTREME's scripts do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import local_model_dir
from xlalign.evaluation.tasks.base import Encoded, Task, TaskParams
from xlalign.evaluation.tasks.collate import pad_batch
from xlalign.evaluation.tasks.data import TaggedSentence
from xlalign.evaluation.tasks.metrics import span_f1, token_accuracy, xtreme_pos_f1

SCHEMES = ("ner", "pos")
#: sentences tokenised per tokenizer call (bounds the memory of one batch encoding)
_TOKENIZE_BATCH = 2048


def special_tokens(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The special token ids the tokenizer puts before and after a single sequence
    (``[CLS]`` / ``[SEP]``, ``<s>`` / ``</s>``), read off two probe encodings so that a
    chunk's ids can be framed without tokenising it again."""
    probes = (["a"], ["a", "b", "c"])
    layouts = []
    for words in probes:
        bare = tokenizer(words, is_split_into_words=True, add_special_tokens=False)["input_ids"]
        full = tokenizer(words, is_split_into_words=True, add_special_tokens=True)["input_ids"]
        k = len(full) - len(bare)
        before = next((i for i in range(k + 1) if full[i : i + len(bare)] == bare), None)
        if before is None:
            raise ConfigError(
                f"{type(tokenizer).__name__}: special tokens inside a sequence "
                f"({full} around {bare}); cannot frame word chunks"
            )
        layouts.append((full[:before], full[before + len(bare) :]))
    if layouts[0] != layouts[1]:
        raise ConfigError(
            f"{type(tokenizer).__name__}: its special tokens depend on the sequence "
            f"({layouts}); cannot frame word chunks"
        )
    return layouts[0]


def word_pieces(tokenizer: Any, sentences: Sequence[Sequence[str]]) -> list[list[list[int]]]:
    """Subword ids of every word of every sentence, as the tokenizer splits pre-split
    words (no special tokens). A word the tokenizer turns into nothing (e.g. a lone
    zero-width character) gets ``[]``."""
    out: list[list[list[int]]] = []
    for lo in range(0, len(sentences), _TOKENIZE_BATCH):
        chunk = [list(s) for s in sentences[lo : lo + _TOKENIZE_BATCH]]
        enc = tokenizer(chunk, is_split_into_words=True, add_special_tokens=False)
        for i, words in enumerate(chunk):
            pieces: list[list[int]] = [[] for _ in words]
            for tok_id, w in zip(enc["input_ids"][i], enc.word_ids(i), strict=True):
                if w is not None:
                    pieces[w].append(tok_id)
            out.append(pieces)
    return out


def chunk_words(lengths: Sequence[int], budget: int) -> list[tuple[int, int]]:
    """Split words with ``lengths`` subwords into consecutive ``[start, end)`` chunks of
    at most ``budget`` subwords, greedily, at word boundaries. A word longer than
    ``budget`` is a chunk of its own (the caller cuts it)."""
    if budget < 1:
        raise ValueError(f"chunk_words: budget must be >= 1, got {budget}")
    chunks: list[tuple[int, int]] = []
    start, n = 0, len(lengths)
    while start < n:
        used, end = 0, start
        while end < n and used + lengths[end] <= budget:
            used += lengths[end]
            end += 1
        if end == start:  # one word over the window on its own
            end = start + 1
        chunks.append((start, end))
        start = end
    return chunks


class TaggingTask(Task):
    """NER (``scheme="ner"``, IOB2 tags) or POS tagging (``scheme="pos"``)."""

    family = "tagging"
    record_type = TaggedSentence
    selection_metric = "f1"

    def __init__(self, scheme: str = "ner") -> None:
        if scheme not in SCHEMES:
            raise ConfigError(f"tagging scheme must be one of {SCHEMES}, not {scheme!r}")
        self.scheme = scheme

    # ------------------------------------------------------------------ labels, model

    def _check_tags(self, records: Sequence[TaggedSentence], split: str) -> None:
        if self.scheme != "ner":
            return
        for rec in records:
            for tag in rec.tags:
                if tag != "O" and not (tag[:2] in ("B-", "I-") and len(tag) > 2):
                    raise InputError(
                        f"{split} record {rec.id!r}: NER tag {tag!r} is not IOB2 "
                        "(expected 'O', 'B-<type>' or 'I-<type>')"
                    )

    def label_list(self, train: Sequence[TaggedSentence]) -> list[str]:
        self._check_tags(train, "train")
        labels = sorted({t for rec in train for t in rec.tags})
        if not labels:
            raise InputError("tagging: the training records hold no tags")
        return labels

    def build_model(
        self, encoder: Path, labels: list[str], params: TaskParams | None = None
    ) -> Any:
        """The encoder's token-classification head; with ``extra["feature_based"]`` (in
        ``params``, or in those :meth:`encode` last saw) 002's feature-based model
        (:mod:`.feature_based`)."""
        from xlalign.evaluation.tasks.feature_based import FeatureSpec, build_feature_model

        spec = getattr(self, "feature_based", None)
        if params is not None:
            spec = FeatureSpec.from_extra(
                params.extra.get("feature_based"), head="tagging", scheme=self.scheme
            )
        if spec is not None:
            return build_feature_model(encoder, labels, spec, head="tagging")
        from transformers import AutoModelForTokenClassification

        return AutoModelForTokenClassification.from_pretrained(
            local_model_dir(encoder, what="encoder"),
            id2label=dict(enumerate(labels)),
            label2id={label: i for i, label in enumerate(labels)},
            local_files_only=True,
        )

    # ------------------------------------------------------------------ features

    def encode(
        self,
        records: Sequence[TaggedSentence],
        tokenizer: Any,
        labels: list[str],
        params: TaskParams,
        *,
        split: str,
    ) -> Encoded:
        """One feature per chunk: ``input_ids`` (special tokens included) and ``labels``
        (the word's label id on its first subword, -100 elsewhere and for a label
        training never saw). ``extra["positions"][f]``: the positions of the labelled
        subwords of feature ``f``; ``extra["words"][f]``: the ``[start, end)`` range of
        the words they belong to.

        Counts: ``sentences_split`` (sentences longer than the window),
        ``extra_chunks`` (features beyond one per sentence), ``words_over_window`` (a
        single word longer than the window, cut), ``words_without_subwords`` (the
        tokenizer gave nothing; the unknown token stands in), ``unseen_label_words``
        and ``unseen_label_words[<tag>]`` (gold tags training never saw: ignored by the
        loss, scored as wrong).
        """
        self._check_tags(records, split)
        from xlalign.evaluation.tasks.feature_based import FeatureSpec

        self.feature_based = FeatureSpec.from_extra(  # for build_model
            params.extra.get("feature_based"), head="tagging", scheme=self.scheme
        )
        label_id = {label: i for i, label in enumerate(labels)}
        prefix, suffix = special_tokens(tokenizer)
        before = len(prefix)
        budget = params.max_length - before - len(suffix)
        if budget < 1:
            raise ConfigError(
                f"tagging: max_length {params.max_length} leaves no room beside the "
                f"{before + len(suffix)} special tokens"
            )
        unk = tokenizer.unk_token_id
        counts: Counter[str] = Counter()
        features: list[dict[str, Any]] = []
        feature_example: list[int] = []
        positions: list[list[int]] = []
        word_ranges: list[tuple[int, int]] = []
        pieces_of = word_pieces(tokenizer, [rec.tokens for rec in records])
        for ex, (rec, pieces) in enumerate(zip(records, pieces_of, strict=True)):
            for w, p in enumerate(pieces):
                if not p:
                    if unk is None:
                        raise InputError(
                            f"{split} record {rec.id!r}: word {rec.tokens[w]!r} has no "
                            "subwords and the tokenizer has no unknown token"
                        )
                    pieces[w] = [unk]
                    counts["words_without_subwords"] += 1
            tag_ids = []
            for tag in rec.tags:
                i = label_id.get(tag)
                if i is None:
                    counts["unseen_label_words"] += 1
                    counts[f"unseen_label_words[{tag}]"] += 1
                    i = -100
                tag_ids.append(i)
            chunks = chunk_words([len(p) for p in pieces], budget)
            if len(chunks) > 1:
                counts["sentences_split"] += 1
                counts["extra_chunks"] += len(chunks) - 1
            for start, end in chunks:
                ids: list[int] = []
                pos: list[int] = []
                for w in range(start, end):
                    p = pieces[w]
                    if len(p) > budget:
                        counts["words_over_window"] += 1
                        p = p[:budget]
                    pos.append(before + len(ids))
                    ids.extend(p)
                input_ids = prefix + ids + suffix
                lab = [-100] * len(input_ids)
                for q, w in zip(pos, range(start, end), strict=True):
                    lab[q] = tag_ids[w]
                features.append({"input_ids": input_ids, "labels": lab})
                feature_example.append(ex)
                positions.append(pos)
                word_ranges.append((start, end))
        counts["examples"] = len(records)
        counts["features"] = len(features)
        return Encoded(
            features=features,
            feature_example=feature_example,
            extra={"positions": positions, "words": word_ranges},
            counts=dict(counts),
        )

    def collate(self, tokenizer: Any) -> Callable[[list[dict[str, Any]]], dict[str, Any]]:
        """Pads to the longest feature of the batch (right padding; labels with -100)."""
        if tokenizer.pad_token_id is None:
            raise ConfigError(f"{type(tokenizer).__name__}: no padding token")
        return partial(pad_batch, pads={"input_ids": tokenizer.pad_token_id, "labels": -100})

    # ------------------------------------------------------------------ outputs

    def decode(
        self,
        outputs: tuple[Any, ...],
        encoded: Encoded,
        records: Sequence[TaggedSentence],
        labels: list[str],
        params: TaskParams,
    ) -> list[dict[str, Any]]:
        """``{"id", "prediction": [tag per word], "gold": [tag per word]}`` per
        sentence, the words of all its chunks put back together."""
        logits = np.asarray(outputs[0])
        if logits.ndim != 3 or logits.shape[0] != len(encoded.features):
            raise ValueError(
                f"tagging decode: expected logits of shape (features={len(encoded.features)},"
                f" length, labels), got {logits.shape}"
            )
        best = logits.argmax(-1)
        preds: list[list[str | None]] = [[None] * len(rec.tokens) for rec in records]
        for f, ex in enumerate(encoded.feature_example):
            start, end = encoded.extra["words"][f]
            for w, q in zip(range(start, end), encoded.extra["positions"][f], strict=True):
                preds[ex][w] = labels[int(best[f, q])]
        out = []
        for rec, pred in zip(records, preds, strict=True):
            missing = [w for w, t in enumerate(pred) if t is None]
            if missing:  # cannot happen: chunks cover every word (a bug if it does)
                raise RuntimeError(f"tagging decode: record {rec.id!r}: words {missing} unset")
            out.append({"id": rec.id, "prediction": pred, "gold": list(rec.tags)})
        return out

    def score(
        self,
        predictions: Sequence[dict[str, Any]],
        records: Sequence[TaggedSentence],
        *,
        lang: str,
    ) -> dict[str, Any]:
        """NER: ``precision``, ``recall``, ``f1`` (seqeval), ``per_type``, chunk counts.
        POS: ``f1`` (XTREME's seqeval number) and ``accuracy`` (per word). Both in
        [0, 100], with ``sentences`` and ``words``."""
        if len(predictions) != len(records):
            raise ValueError(
                f"tagging score ({lang}): {len(predictions)} predictions for "
                f"{len(records)} sentences"
            )
        gold = [list(rec.tags) for rec in records]
        pred = [list(p["prediction"]) for p in predictions]
        if self.scheme == "ner":
            scores: dict[str, Any] = span_f1(gold, pred)
        else:
            scores = {"f1": xtreme_pos_f1(gold, pred), "accuracy": token_accuracy(gold, pred)}
        scores["sentences"] = len(records)
        scores["words"] = sum(len(g) for g in gold)
        return scores
