"""Sentence-pair classification (XNLI, PAWS-X): XTREME's ``run_classify`` task family.

The two sentences are encoded together (``[CLS] a [SEP] b [SEP]`` / ``<s> a </s></s> b
</s>``) and cut to ``max_length`` with the tokenizer's ``longest_first`` truncation (one
subword at a time from the longer side), as XTREME does; pairs that had to be cut are
counted. The model is the encoder's sequence-classification head
(``AutoModelForSequenceClassification``: the pooled first token, dropout, a linear
layer). Score and selection metric: accuracy.
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
from xlalign.evaluation.tasks.data import PairExample
from xlalign.evaluation.tasks.metrics import accuracy

#: pairs tokenised per tokenizer call (bounds the memory of one batch encoding)
_TOKENIZE_BATCH = 4096
#: the tokenizer outputs a feature keeps (the attention mask is rebuilt when padding)
_KEEP = ("input_ids", "token_type_ids")


class PairClassificationTask(Task):
    """Two sentences in, one label out (entailment, paraphrase)."""

    family = "classification"
    record_type = PairExample
    selection_metric = "accuracy"

    def label_list(self, train: Sequence[PairExample]) -> list[str]:
        labels = sorted({rec.label for rec in train})
        if len(labels) < 2:
            raise InputError(
                f"pair classification: the training records hold {len(labels)} label(s) "
                f"({labels}); at least 2 are needed"
            )
        return labels

    def build_model(
        self, encoder: Path, labels: list[str], params: TaskParams | None = None
    ) -> Any:
        """The encoder's sequence-classification head; with ``extra["feature_based"]``
        (in ``params``, or in those :meth:`encode` last saw) 002's feature-based model
        (:mod:`.feature_based`)."""
        from xlalign.evaluation.tasks.feature_based import FeatureSpec, build_feature_model

        spec = getattr(self, "feature_based", None)
        if params is not None:
            spec = FeatureSpec.from_extra(params.extra.get("feature_based"), head="classification")
        if spec is not None:
            return build_feature_model(encoder, labels, spec, head="classification")
        from transformers import AutoModelForSequenceClassification

        return AutoModelForSequenceClassification.from_pretrained(
            local_model_dir(encoder, what="encoder"),
            id2label=dict(enumerate(labels)),
            label2id={label: i for i, label in enumerate(labels)},
            local_files_only=True,
        )

    def encode(
        self,
        records: Sequence[PairExample],
        tokenizer: Any,
        labels: list[str],
        params: TaskParams,
        *,
        split: str,
    ) -> Encoded:
        """One feature per pair: ``input_ids`` (``token_type_ids`` where the tokenizer
        makes them) and ``labels`` (the label id; -100 for a label training never saw).

        Counts: ``pairs_truncated`` (longer than ``max_length`` with special tokens, cut
        ``longest_first``), ``unseen_label_examples`` and
        ``unseen_label_examples[<label>]`` (ignored by the loss, scored as wrong).
        """
        from xlalign.evaluation.tasks.feature_based import FeatureSpec

        self.feature_based = FeatureSpec.from_extra(  # for build_model
            params.extra.get("feature_based"), head="classification"
        )
        limit = params.max_length
        if limit < tokenizer.num_special_tokens_to_add(pair=True) + 2:
            raise ConfigError(
                f"pair classification: max_length {limit} cannot hold two sentences and "
                "the special tokens"
            )
        label_id = {label: i for i, label in enumerate(labels)}
        counts: Counter[str] = Counter()
        features: list[dict[str, Any]] = []
        for lo in range(0, len(records), _TOKENIZE_BATCH):
            batch = records[lo : lo + _TOKENIZE_BATCH]
            first = [r.sentence1 for r in batch]
            second = [r.sentence2 for r in batch]
            enc = tokenizer(first, second, truncation=False)
            over = [i for i, ids in enumerate(enc["input_ids"]) if len(ids) > limit]
            cut = None
            if over:
                counts["pairs_truncated"] += len(over)
                cut = tokenizer(
                    [first[i] for i in over],
                    [second[i] for i in over],
                    truncation="longest_first",
                    max_length=limit,
                )
            replaced = {i: j for j, i in enumerate(over)}
            for i, rec in enumerate(batch):
                src, k = (cut, replaced[i]) if i in replaced else (enc, i)
                feat = {key: list(src[key][k]) for key in _KEEP if key in src}
                y = label_id.get(rec.label)
                if y is None:
                    counts["unseen_label_examples"] += 1
                    counts[f"unseen_label_examples[{rec.label}]"] += 1
                    y = -100
                feat["labels"] = y
                features.append(feat)
        counts["examples"] = len(records)
        counts["features"] = len(features)
        return Encoded(
            features=features, feature_example=list(range(len(records))), counts=dict(counts)
        )

    def collate(self, tokenizer: Any) -> Callable[[list[dict[str, Any]]], dict[str, Any]]:
        """Pads to the longest pair of the batch (right padding); labels become a vector."""
        if tokenizer.pad_token_id is None:
            raise ConfigError(f"{type(tokenizer).__name__}: no padding token")
        pads = {"input_ids": tokenizer.pad_token_id, "token_type_ids": 0, "labels": -100}
        return partial(pad_batch, pads=pads)

    def decode(
        self,
        outputs: tuple[Any, ...],
        encoded: Encoded,
        records: Sequence[PairExample],
        labels: list[str],
        params: TaskParams,
    ) -> list[dict[str, Any]]:
        """``{"id", "prediction": label, "gold": label}`` per pair."""
        logits = np.asarray(outputs[0])
        if logits.shape != (len(records), len(labels)):
            raise ValueError(
                f"pair classification decode: expected logits of shape "
                f"({len(records)}, {len(labels)}), got {logits.shape}"
            )
        best = logits.argmax(-1)
        return [
            {"id": rec.id, "prediction": labels[int(b)], "gold": rec.label}
            for rec, b in zip(records, best, strict=True)
        ]

    def score(
        self,
        predictions: Sequence[dict[str, Any]],
        records: Sequence[PairExample],
        *,
        lang: str,
    ) -> dict[str, Any]:
        """``accuracy`` in [0, 100] and the number of ``examples``."""
        if len(predictions) != len(records):
            raise ValueError(
                f"pair classification score ({lang}): {len(predictions)} predictions for "
                f"{len(records)} pairs"
            )
        gold = [rec.label for rec in records]
        pred = [p["prediction"] for p in predictions]
        return {"accuracy": accuracy(gold, pred), "examples": len(records)}
