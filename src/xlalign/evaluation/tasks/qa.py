"""Extractive question answering (SQuAD v1.1, XQuAD, MLQA, TyDiQA-GoldP) as XTREME's
``run_squad`` does it (the squad processors and ``compute_predictions_logits`` of
transformers 2.x/3.x, which XTREME pins).

Features. The question is cut to ``max_query_length`` subwords; the context is split
into windows of ``L = max_length - len(question) - special tokens`` subwords starting
every ``doc_stride`` subwords (0, stride, 2 stride, ... until a window reaches the end),
so consecutive windows overlap by ``L - doc_stride``: ``doc_stride`` is the *step*
between windows, as in run_squad and the original BERT code. A training window whose
span does not hold the whole answer is labelled with the ``[CLS]`` position for start
and end, as run_squad (and the Hugging Face ``run_qa`` example) do for SQuAD v1.1;
training uses the first gold answer.

Decoding. Per window, the ``n_best`` largest start and end logits (over the window's
real tokens) are paired; a pair is kept when both ends lie in the context part of the
window, the start is in its "max context" window (run_squad's
``_check_is_max_context``: the window where the token has the most context on its
shorter side, plus 0.01 x the window length; the first such window on ties),
``end >= start`` and the span has at most ``max_answer_length`` subwords. The best pair
over all windows of an example (start logit + end logit; the first one on ties, in
run_squad's order) gives the answer, cut out of the *original* context through the
tokenizer's character offsets. A question with no valid pair gets ``""`` (run_squad
writes the literal string "empty") and is counted.

Differences from run_squad, and why:

* run_squad first splits the context on whitespace, sub-tokenises each whitespace word
  on its own, labels the answer on the whitespace words it touches and then looks for
  the tightest subword span equal to the tokenised answer (``_improve_answer_span``);
  predictions are mapped back through the whitespace words and ``get_final_text``. Here
  the context is tokenised once by the fast tokenizer, which returns each subword's
  character offsets: the answer's label is the subwords covering its characters and
  the predicted text is ``context[start_char:end_char]``. For whitespace-delimited
  languages the two agree except where an answer starts or ends inside a whitespace
  word (run_squad then keeps the whole word unless the subword span matches exactly);
  for languages without spaces (zh, ja, th) offsets are exact where run_squad has only
  one "word" per clause.
* The windows are built from one tokenisation of question and context instead of the
  tokenizer's ``return_overflowing_tokens``: that option takes one overlap per call and
  truncates only the context, while run_squad cuts the question to
  ``max_query_length`` subwords and steps by ``doc_stride``, which makes the overlap
  depend on each question's length.
* Features are padded per batch, not to ``max_length``: run_squad takes the n-best
  indices over all ``max_length`` positions (padding included) and then drops the
  padding ones; here padding never enters the n-best list.
* A gold ``answer_start`` that does not point at the answer text (XQuAD, MLQA and
  TyDiQA have a few) makes run_squad drop the training example ("Could not find
  answer"); here the text is looked for within :data:`ANSWER_SEARCH_CHARS` characters
  of the given offset and, when found, training uses that position (counted as
  ``answers_realigned``; otherwise the example is dropped and counted).

Scores: SQuAD v1.1's EM/F1 (``style="squad"``: SQuAD, XQuAD, TyDiQA-GoldP) or MLQA's
(``style="mlqa"``), computed by :func:`~xlalign.evaluation.tasks.metrics.qa_scores`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from xlalign.core.errors import ConfigError
from xlalign.core.io import local_model_dir
from xlalign.evaluation.tasks.base import Encoded, Task, TaskParams
from xlalign.evaluation.tasks.collate import pad_batch
from xlalign.evaluation.tasks.data import QAExample
from xlalign.evaluation.tasks.metrics import qa_scores

STYLES = ("squad", "mlqa")
#: how far (characters, either side) from a wrong ``answer_start`` the answer text is
#: looked for before a training example is dropped
ANSWER_SEARCH_CHARS = 100


# --------------------------------------------------------------------------- pieces


def locate_answer(
    context: str, text: str, answer_start: Any, *, search: int = ANSWER_SEARCH_CHARS
) -> tuple[int | None, str]:
    """Where the gold answer ``text`` starts in ``context``: ``(offset, status)``.

    ``status`` is "exact" (``answer_start`` points at the text; surrounding whitespace
    of the text is ignored), "realigned" (the occurrence of the text nearest to
    ``answer_start`` within ``search`` characters either side), "missing" (not found
    there: offset None) or "empty" (a blank answer text: offset None).
    """
    stripped = text.strip()
    if not stripped:
        return None, "empty"
    try:
        given = int(answer_start)
    except (TypeError, ValueError):
        given = -1
    start = given + (len(text) - len(text.lstrip()))
    if start >= 0 and context[start : start + len(stripped)] == stripped:
        return start, "exact"
    if given < 0:
        return None, "missing"
    lo = max(0, given - search)
    hi = min(len(context), given + len(text) + search)
    best: int | None = None
    pos = context.find(stripped, lo, hi)
    while pos != -1:
        if best is None or abs(pos - given) < abs(best - given):
            best = pos
        pos = context.find(stripped, pos + 1, hi)
    return (best, "realigned") if best is not None else (None, "missing")


def char_span_to_tokens(
    offsets: Sequence[tuple[int, int]], start: int, end: int
) -> tuple[int, int] | None:
    """The first and last token (indices into ``offsets``) covering the characters
    ``[start, end)``; tokens with an empty span are skipped. None when no token overlaps."""
    first = last = None
    for i, (s, e) in enumerate(offsets):
        if e <= s:
            continue
        if first is None and e > start:
            first = i
        if s < end:
            last = i
    if first is None or last is None or last < first:
        return None
    return first, last


def window_starts(n_tokens: int, window: int, stride: int) -> list[int]:
    """Start of each window of ``window`` tokens over ``n_tokens``, every ``stride``
    tokens until one reaches the end (run_squad's spans). A stride larger than the
    window is reduced to it, so that no token is skipped."""
    if window < 1 or stride < 1:
        raise ValueError(f"window_starts: window {window} and stride {stride} must be >= 1")
    step = min(stride, window)
    starts = [0]
    while starts[-1] + window < n_tokens:
        starts.append(starts[-1] + step)
    return starts


def max_context(starts: Sequence[int], lengths: Sequence[int]) -> list[np.ndarray]:
    """For each window, which of its tokens have their "max context" in it
    (run_squad's ``_check_is_max_context``): the window maximising
    ``min(left, right) + 0.01 * length``, the first one on ties."""
    n = max((s + k for s, k in zip(starts, lengths, strict=True)), default=0)
    best_score = np.full(n, -np.inf)
    best_window = np.full(n, -1)
    for w, (s, k) in enumerate(zip(starts, lengths, strict=True)):
        pos = np.arange(s, s + k)
        score = np.minimum(pos - s, s + k - 1 - pos) + 0.01 * k
        better = score > best_score[pos]
        best_score[pos[better]] = score[better]
        best_window[pos[better]] = w
    return [
        best_window[s : s + k] == w for w, (s, k) in enumerate(zip(starts, lengths, strict=True))
    ]


def best_span(
    start_logits: np.ndarray,
    end_logits: np.ndarray,
    *,
    context_offset: int,
    context_length: int,
    is_max_context: np.ndarray,
    n_best: int,
    max_answer_length: int,
) -> tuple[float, int, int] | None:
    """The best answer span of one window: ``(score, first, last)`` with ``first`` and
    ``last`` indices into the window's context tokens, or None when no n-best pair is
    valid. ``start_logits``/``end_logits`` cover the window's real tokens (special
    tokens and question included, padding excluded); pairs are visited in run_squad's
    order (starts, then ends, by decreasing logit) and the first best one is kept."""
    order_s = np.argsort(-start_logits, kind="stable")[:n_best]
    order_e = np.argsort(-end_logits, kind="stable")[:n_best]
    lo, hi = context_offset, context_offset + context_length
    best: tuple[float, int, int] | None = None
    for s in order_s:
        if not lo <= s < hi or not is_max_context[s - lo]:
            continue
        for e in order_e:
            if not lo <= e < hi or e < s or e - s + 1 > max_answer_length:
                continue
            score = float(start_logits[s]) + float(end_logits[e])
            if best is None or score > best[0]:
                best = (score, int(s - lo), int(e - lo))
    return best


def _layout(tokenizer: Any, question: Any, context: Any) -> tuple[list[int], list[int], int]:
    """How the tokenizer frames a question-context pair: ``(ids, type_ids, position of
    the first context token)`` of the full pair, special tokens included."""
    post = tokenizer.backend_tokenizer.post_processor
    if post is None:
        raise ConfigError(
            f"{type(tokenizer).__name__}: the tokenizer adds no special tokens to a pair; "
            "extractive QA needs a [CLS]-like first token"
        )
    pair = post.process(question, context, add_special_tokens=True)
    seq = pair.sequence_ids
    first = next((i for i, s in enumerate(seq) if s == 1), None)
    if first is None or not pair.special_tokens_mask or pair.special_tokens_mask[0] != 1:
        raise ConfigError(
            f"{type(tokenizer).__name__}: a question-context pair is not framed as "
            "[CLS] question [SEP] context [SEP]; extractive QA cannot place its windows"
        )
    return list(pair.ids), list(pair.type_ids), first


# --------------------------------------------------------------------------- task


class QATask(Task):
    """SQuAD-style extractive QA; ``style`` picks the answer normalisation of the
    scores ("squad": SQuAD v1.1, XQuAD, TyDiQA-GoldP; "mlqa": MLQA)."""

    family = "qa"
    record_type = QAExample
    selection_metric = "f1"

    def __init__(self, style: str = "squad") -> None:
        if style not in STYLES:
            raise ConfigError(f"QA score style must be one of {STYLES}, not {style!r}")
        self.style = style

    def label_list(self, train: Sequence[QAExample]) -> list[str]:
        return []

    def build_model(self, encoder: Path, labels: list[str]) -> Any:
        from transformers import AutoModelForQuestionAnswering

        return AutoModelForQuestionAnswering.from_pretrained(
            local_model_dir(encoder, what="encoder"), local_files_only=True
        )

    def encode(
        self,
        records: Sequence[QAExample],
        tokenizer: Any,
        labels: list[str],
        params: TaskParams,
        *,
        split: str,
    ) -> Encoded:
        """Windows of every example (see the module docstring). Features:
        ``input_ids``, ``token_type_ids`` (where the model takes them) and, for
        ``split="train"``, ``start_positions``/``end_positions``. ``extra["windows"][f]``
        = ``(context offset in the feature, first context token, context tokens,
        feature length)``; ``extra["offsets"][e]`` = the character offsets of example
        ``e``'s context tokens.

        Counts: ``examples``, ``features``, ``windowed_examples`` (contexts longer than
        one window) and ``extra_windows``, ``questions_truncated``, ``empty_contexts``
        (no tokens: no feature; dropped in training, answered ``""`` in evaluation);
        training: ``answers_realigned``, ``dropped_misaligned_answer``,
        ``dropped_unmappable_answer`` (the answer's characters cover no token),
        ``dropped_no_answer``, ``windows_without_answer`` (labelled ``[CLS]``);
        evaluation: ``unanswerable`` (no gold answer: left out of EM/F1),
        ``answers_misaligned`` (an ``answer_start`` that does not point at its text:
        informational, scoring compares texts only).
        """
        if not getattr(tokenizer, "is_fast", False):
            raise ConfigError(
                f"{type(tokenizer).__name__}: extractive QA needs a fast tokenizer "
                "(character offsets)"
            )
        if params.max_query_length < 1 or params.doc_stride < 1:
            raise ConfigError(
                f"QA: max_query_length ({params.max_query_length}) and doc_stride "
                f"({params.doc_stride}) must be >= 1"
            )
        specials = tokenizer.num_special_tokens_to_add(pair=True)
        if params.max_length - params.max_query_length - specials < 1:
            raise ConfigError(
                f"QA: max_length {params.max_length} leaves no room for the context beside "
                f"a question of max_query_length {params.max_query_length} subwords and "
                f"{specials} special tokens"
            )
        train = split == "train"
        with_types = "token_type_ids" in tokenizer.model_input_names
        cls_id = tokenizer.cls_token_id
        backend = tokenizer.backend_tokenizer
        counts: Counter[str] = Counter()
        features: list[dict[str, Any]] = []
        feature_example: list[int] = []
        windows: list[tuple[int, int, int, int]] = []
        offsets: list[list[tuple[int, int]]] = []
        for ex, rec in enumerate(records):
            question = backend.encode(rec.question, add_special_tokens=False)
            if len(question.ids) > params.max_query_length:
                counts["questions_truncated"] += 1
                question.truncate(params.max_query_length)
            context = backend.encode(rec.context, add_special_tokens=False)
            ctx_ids = list(context.ids)
            ctx_offsets = [tuple(o) for o in context.offsets]
            offsets.append([] if train else ctx_offsets)
            if not ctx_ids:
                counts["empty_contexts"] += 1
                continue
            span = None
            if train:
                span = self._train_span(rec, ctx_offsets, counts)
                if span is None:
                    continue
            else:
                if not any(str(a["text"]).strip() for a in rec.answers):
                    counts["unanswerable"] += 1
                counts["answers_misaligned"] += sum(
                    locate_answer(rec.context, str(a["text"]), a["answer_start"])[1]
                    not in ("exact", "empty")
                    for a in rec.answers
                )
            ids, types, ctx_at = _layout(tokenizer, question, context)
            n_ctx = len(ctx_ids)
            prefix, suffix = ids[:ctx_at], ids[ctx_at + n_ctx :]
            t_prefix, t_suffix = types[:ctx_at], types[ctx_at + n_ctx :]
            ctx_type = types[ctx_at]
            room = params.max_length - len(prefix) - len(suffix)
            if room < 1:
                raise ConfigError(
                    f"QA: max_length {params.max_length} leaves no room for the context "
                    f"beside a question of {len(question.ids)} subwords and "
                    f"{len(prefix) + len(suffix) - len(question.ids)} special tokens "
                    f"(max_query_length {params.max_query_length})"
                )
            cls_at = prefix.index(cls_id) if cls_id is not None and cls_id in prefix else 0
            starts = window_starts(n_ctx, room, params.doc_stride)
            if len(starts) > 1:
                counts["windowed_examples"] += 1
                counts["extra_windows"] += len(starts) - 1
            for st in starts:
                k = min(room, n_ctx - st)
                feat: dict[str, Any] = {"input_ids": prefix + ctx_ids[st : st + k] + suffix}
                if with_types:
                    feat["token_type_ids"] = t_prefix + [ctx_type] * k + t_suffix
                if span is not None:
                    first, last = span
                    if st <= first and last < st + k:
                        feat["start_positions"] = ctx_at + first - st
                        feat["end_positions"] = ctx_at + last - st
                    else:
                        counts["windows_without_answer"] += 1
                        feat["start_positions"] = feat["end_positions"] = cls_at
                features.append(feat)
                feature_example.append(ex)
                windows.append((ctx_at, st, k, len(feat["input_ids"])))
        counts["examples"] = len(records)
        counts["features"] = len(features)
        return Encoded(
            features=features,
            feature_example=feature_example,
            extra={"windows": windows, "offsets": offsets},
            counts=dict(counts),
        )

    @staticmethod
    def _train_span(
        rec: QAExample, offsets: list[tuple[int, int]], counts: Counter[str]
    ) -> tuple[int, int] | None:
        """The context tokens of the first usable gold answer (None: drop, counted)."""
        answers = [a for a in rec.answers if str(a["text"]).strip()]
        if not answers:
            counts["dropped_no_answer"] += 1
            return None
        text = str(answers[0]["text"])
        start, status = locate_answer(rec.context, text, answers[0]["answer_start"])
        if start is None:
            counts["dropped_misaligned_answer"] += 1
            return None
        if status == "realigned":
            counts["answers_realigned"] += 1
        span = char_span_to_tokens(offsets, start, start + len(text.strip()))
        if span is None:
            counts["dropped_unmappable_answer"] += 1
        return span

    def collate(self, tokenizer: Any) -> Callable[[list[dict[str, Any]]], dict[str, Any]]:
        """Pads to the longest window of the batch (right padding)."""
        pad = tokenizer.pad_token_id
        if pad is None:
            raise ConfigError(f"{type(tokenizer).__name__}: no padding token")
        pads = {"input_ids": pad, "token_type_ids": 0, "start_positions": 0, "end_positions": 0}
        return partial(pad_batch, pads=pads)

    def decode(
        self,
        outputs: tuple[Any, ...],
        encoded: Encoded,
        records: Sequence[QAExample],
        labels: list[str],
        params: TaskParams,
    ) -> list[dict[str, Any]]:
        """``{"id", "prediction", "gold", "score"}`` per question: the answer text, the
        gold answer texts and the start + end logit of the answer (None, with
        ``"no_span": True``, where no window gave a valid span)."""
        start_all, end_all = np.asarray(outputs[0]), np.asarray(outputs[1])
        n_feat = len(encoded.features)
        if start_all.shape[0] != n_feat or end_all.shape[0] != n_feat:
            raise ValueError(
                f"QA decode: {n_feat} features but logits of shapes {start_all.shape} "
                f"and {end_all.shape}"
            )
        by_example: dict[int, list[int]] = {}
        for f, ex in enumerate(encoded.feature_example):
            by_example.setdefault(ex, []).append(f)
        out = []
        for ex, rec in enumerate(records):
            feats = by_example.get(ex, [])
            best: tuple[float, int, int] | None = None
            if feats:
                wins = [encoded.extra["windows"][f] for f in feats]
                is_max = max_context([w[1] for w in wins], [w[2] for w in wins])
                for f, (ctx_at, st, k, length), mc in zip(feats, wins, is_max, strict=True):
                    cand = best_span(
                        start_all[f, :length],
                        end_all[f, :length],
                        context_offset=ctx_at,
                        context_length=k,
                        is_max_context=mc,
                        n_best=params.n_best,
                        max_answer_length=params.max_answer_length,
                    )
                    if cand is not None and (best is None or cand[0] > best[0]):
                        best = (cand[0], st + cand[1], st + cand[2])
            pred: dict[str, Any] = {
                "id": rec.id,
                "prediction": "",
                "gold": [str(a["text"]) for a in rec.answers],
                "score": None,
            }
            if best is None:
                pred["no_span"] = True
            else:
                offs = encoded.extra["offsets"][ex]
                pred["prediction"] = rec.context[offs[best[1]][0] : offs[best[2]][1]]
                pred["score"] = best[0]
            out.append(pred)
        return out

    def score(
        self, predictions: Sequence[dict[str, Any]], records: Sequence[QAExample], *, lang: str
    ) -> dict[str, Any]:
        """``exact_match`` and ``f1`` in [0, 100] (SQuAD v1.1's or MLQA's definition,
        ``style``), over the questions with a gold answer (``count``); ``no_gold``
        (unanswerable questions, left out), ``empty_gold_answers`` (blank gold texts,
        ignored), ``no_span`` (questions answered ``""`` because no valid span was
        found) and ``duplicate_ids`` beside."""
        answers: dict[str, list[str]] = {}
        empty = duplicates = 0
        for rec in records:
            texts = [str(a["text"]) for a in rec.answers]
            kept = [t for t in texts if t.strip()]
            empty += len(texts) - len(kept)
            duplicates += rec.id in answers
            answers[rec.id] = kept
        preds = {str(p["id"]): str(p["prediction"]) for p in predictions}
        scores = qa_scores(preds, answers, lang=lang, style=self.style)
        scores["empty_gold_answers"] = empty
        scores["no_span"] = sum(1 for p in predictions if p.get("no_span"))
        scores["duplicate_ids"] = duplicates
        return scores
