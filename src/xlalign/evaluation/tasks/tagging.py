"""Token classification (NER in IOB2, POS): XTREME's PAN-X and UD-POS task family.

Words are tokenised as pre-split words (``is_split_into_words``); a word's label goes on
its *first* subword and every other position gets -100 (ignored by the loss), as
XTREME's ``run_tag.py`` and Hugging Face's ``run_ner.py`` do. A sentence whose subwords
do not fit the window (``max_length``, special tokens included) is split into
consecutive chunks at word boundaries, so every word is labelled and predicted exactly
once and nothing is truncated silently; only a single word longer than the window is cut
(its first subwords kept, its label on the first one) and counted. :meth:`decode`
reassembles word-level predictions across a sentence's chunks.

Options beside XTREME's recipe (``params.extra``; both recorded by :meth:`TaggingTask.recipe`
in the results, and named in the results' protocol note, so such a run is never taken for
XTREME's):

* ``loss``: ``"cross_entropy"`` (default; XTREME's: the mean over the labelled subwords)
  or ``"class_weighted"`` / ``{"name": "class_weighted", "power": p, "max_weight": m}``:
  PyTorch's cross-entropy with a weight per label, ``min(m, (n_max / n_c) ** p)`` where
  ``n_c`` counts the labelled subwords of label ``c`` in the training features and
  ``n_max`` the most frequent label's (so ``O`` keeps weight 1 and a rare entity label up
  to ``m``); the mean is weighted (divided by the summed weights of the batch's labels),
  as ``torch.nn.functional.cross_entropy(weight=...)`` does. Defaults: ``p`` 1,
  ``m`` 10. For the Hugging Face token-classification head only (a forward hook replaces
  the loss the model computes; the logits are untouched).
* ``train_sample``: ``{"entity_share": s, "seed": k}`` (NER only): instead of the first
  ``max_train_examples`` sentences, draw that many with a share ``s`` holding an entity
  (:func:`~.data.entity_sample`; ``seed`` default 0, independent of the fine-tuning seed,
  so every fine-tuning seed sees the same sample).

Scores: NER -> seqeval's entity-level precision / recall / F1
(:func:`~.metrics.span_f1`); POS -> XTREME's "F1" (:func:`~.metrics.xtreme_pos_f1`,
seqeval over raw POS tags) *and* token accuracy. Both schemes select on ``f1``, as
XTREME's scripts do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import local_model_dir
from xlalign.evaluation.tasks.base import Encoded, Task, TaskParams
from xlalign.evaluation.tasks.collate import pad_batch
from xlalign.evaluation.tasks.data import TaggedSentence, entity_sample
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


#: the token losses ``extra["loss"]`` names (the module docstring)
LOSSES = ("cross_entropy", "class_weighted")


@dataclass(frozen=True)
class LossSpec:
    """``extra["loss"]``: the token loss and, for ``class_weighted``, how the weights
    follow the label frequencies."""

    name: str = "cross_entropy"
    power: float = 1.0
    max_weight: float = 10.0

    @classmethod
    def from_extra(cls, value: Any) -> LossSpec:
        if value is None:
            return cls()
        if isinstance(value, str):
            value = {"name": value}
        if not isinstance(value, Mapping):
            raise ConfigError(
                f"extra.loss: expected a loss name {LOSSES} or {{name, power, max_weight}}, "
                f"got {value!r}"
            )
        unknown = set(value) - {"name", "power", "max_weight"}
        if unknown:
            raise ConfigError(f"extra.loss: unknown keys {sorted(unknown)}")
        spec = cls(**dict(value))
        if spec.name not in LOSSES:
            raise ConfigError(f"extra.loss: name must be one of {LOSSES}, not {spec.name!r}")
        if spec.name == "cross_entropy" and set(value) - {"name"}:
            raise ConfigError("extra.loss: power and max_weight belong to class_weighted")
        if not (isinstance(spec.power, int | float) and spec.power >= 0):
            raise ConfigError(f"extra.loss.power must be a number >= 0, got {spec.power!r}")
        if not (isinstance(spec.max_weight, int | float) and spec.max_weight >= 1):
            raise ConfigError(
                f"extra.loss.max_weight must be a number >= 1, got {spec.max_weight!r}"
            )
        return spec


def class_weights(counts: Sequence[int], *, power: float, max_weight: float) -> list[float]:
    """A weight per label from its count in the training features:
    ``min(max_weight, (max(counts) / count) ** power)`` (``max_weight`` for a label never
    seen)."""
    top = max(counts, default=0)
    if top <= 0:
        raise InputError("class weights: the training features hold no labelled word")
    return [min(max_weight, (top / c) ** power) if c > 0 else max_weight for c in counts]


def weighted_token_loss(logits: Any, labels: Any, weights: Any) -> Any:
    """Cross-entropy of ``logits`` (batch, length, labels) against ``labels`` (-100:
    ignored) with a weight per label: the weighted mean over the labelled positions."""
    import torch.nn.functional as F

    n = logits.shape[-1]
    return F.cross_entropy(
        logits.float().reshape(-1, n),
        labels.reshape(-1).to(logits.device),
        weight=weights.to(logits.device),
        ignore_index=-100,
    )


def use_weighted_loss(model: Any, weights: Sequence[float]) -> Any:
    """Have ``model`` (a token-classification model whose output has ``loss`` and
    ``logits``) report :func:`weighted_token_loss` instead of its own loss whenever it is
    given ``labels``, through a forward hook (the logits, the weights and what is saved
    stay as they are). Returns the hook's handle."""
    import torch

    w = torch.tensor(list(weights), dtype=torch.float32)

    def hook(module: Any, args: tuple, kwargs: dict[str, Any], output: Any) -> Any:
        labels = kwargs.get("labels")
        if labels is None:
            return output
        output["loss"] = weighted_token_loss(output["logits"], labels, w)
        return output

    return model.register_forward_hook(hook, with_kwargs=True)


class TaggingTask(Task):
    """NER (``scheme="ner"``, IOB2 tags) or POS tagging (``scheme="pos"``)."""

    family = "tagging"
    record_type = TaggedSentence
    selection_metric = "f1"

    def __init__(self, scheme: str = "ner") -> None:
        if scheme not in SCHEMES:
            raise ConfigError(f"tagging scheme must be one of {SCHEMES}, not {scheme!r}")
        self.scheme = scheme
        # what the last training_sample / encode(split="train") saw (recipe, build_model)
        self.sample: dict[str, Any] | None = None
        self.loss = LossSpec()
        self.labels_seen: list[str] = []
        self.class_weights: list[float] | None = None

    # ------------------------------------------------------------------ training recipe

    def training_sample(self, records: Sequence[Any], params: TaskParams) -> list[Any]:
        """The first ``max_train_examples`` sentences, or with ``extra["train_sample"]``
        (``{"entity_share", "seed"}``, NER only) a sample with that share of sentences
        holding an entity (:func:`~.data.entity_sample`). Reads ``extra["loss"]`` too
        (a wrong one is refused before any model is loaded)."""
        self.loss = LossSpec.from_extra(params.extra.get("loss"))
        spec = params.extra.get("train_sample")
        if spec is None:
            out = super().training_sample(records, params)
            self.sample = {"method": "first", "examples": len(out)}
            return out
        where = "extra.train_sample"
        if self.scheme != "ner":
            raise ConfigError(
                f"{where}: an entity sample needs the NER scheme, not {self.scheme!r}"
            )
        if not isinstance(spec, Mapping) or "entity_share" not in spec:
            raise ConfigError(f"{where}: expected {{entity_share, seed}}, got {spec!r}")
        unknown = set(spec) - {"entity_share", "seed"}
        if unknown:
            raise ConfigError(f"{where}: unknown keys {sorted(unknown)}")
        share, seed = spec["entity_share"], spec.get("seed", 0)
        if isinstance(share, bool) or not isinstance(share, int | float):
            raise ConfigError(f"{where}.entity_share: expected a number in [0, 1], got {share!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ConfigError(f"{where}.seed: expected an integer >= 0, got {seed!r}")
        self._check_tags(records, "train")
        out, self.sample = entity_sample(
            records, params.max_train_examples, entity_share=float(share), seed=seed
        )
        return out

    def recipe(self) -> dict[str, Any]:
        """``loss`` (its spec and, when weighted, the weight of each label), ``sample``
        (how the training sentences were chosen) and ``deviations`` (what differs from
        XTREME's recipe, in words; [] when nothing)."""
        loss: dict[str, Any] = {"name": self.loss.name}
        deviations = []
        if self.loss.name == "class_weighted":
            loss.update(power=self.loss.power, max_weight=self.loss.max_weight)
            if self.class_weights is not None:
                loss["weights"] = dict(zip(self.labels_seen, self.class_weights, strict=True))
            deviations.append(
                f"class-weighted cross-entropy (inverse label frequency ^ {self.loss.power:g},"
                f" at most {self.loss.max_weight:g}), not XTREME's plain cross-entropy"
            )
        if self.sample and self.sample.get("method") == "entity_share":
            deviations.append(
                f"training sample with {self.sample['with_entities']} of "
                f"{self.sample['examples']} sentences holding an entity"
            )
        return {"loss": loss, "sample": self.sample, "deviations": deviations}

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
            if self.loss.name != "cross_entropy":
                raise ConfigError(
                    f"extra.loss {self.loss.name!r} is for the fine-tuned head, not the "
                    "feature-based model (extra.feature_based)"
                )
            return build_feature_model(encoder, labels, spec, head="tagging")
        from transformers import AutoModelForTokenClassification

        model = AutoModelForTokenClassification.from_pretrained(
            local_model_dir(encoder, what="encoder"),
            id2label=dict(enumerate(labels)),
            label2id={label: i for i, label in enumerate(labels)},
            local_files_only=True,
        )
        if self.loss.name == "class_weighted":
            if self.class_weights is None or self.labels_seen != list(labels):
                raise RuntimeError(
                    "tagging: class-weighted loss, but the training split was not encoded "
                    "with these labels first"
                )
            use_weighted_loss(model, self.class_weights)
        return model

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
        self.loss = LossSpec.from_extra(params.extra.get("loss"))
        if split == "train":
            self.labels_seen = list(labels)
            self.class_weights = None
            if self.loss.name == "class_weighted":
                seen = Counter(t for f in features for t in f["labels"] if t >= 0)
                self.class_weights = class_weights(
                    [seen[i] for i in range(len(labels))],
                    power=self.loss.power,
                    max_weight=self.loss.max_weight,
                )
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
