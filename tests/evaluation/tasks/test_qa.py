"""Extractive QA: answer location, run_squad's windows and max-context rule, n-best
decoding on hand-made logits, scores, and one tiny fine-tuning through the loop."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tiny_encoder import make_tiny_encoder

from xlalign.core.errors import ConfigError
from xlalign.evaluation.tasks.base import Encoded, TaskParams
from xlalign.evaluation.tasks.data import QAExample
from xlalign.evaluation.tasks.qa import (
    QATask,
    best_span,
    char_span_to_tokens,
    locate_answer,
    max_context,
    window_starts,
)

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
#: a context of 120 words, far longer than the windows of the tests
LONG = " ".join(WORDS[i % len(WORDS)] + str(i) for i in range(120))
QUESTION = "which word comes after the many words of the long context here"


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    texts = [LONG, QUESTION, "the cat sat on the mat where did the cat sit who sat"]
    return make_tiny_encoder(tmp_path_factory.mktemp("qa-enc"), texts)


@pytest.fixture(scope="module")
def tokenizer(encoder: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(encoder))


# --------------------------------------------------------------------------- pieces


def test_locate_answer_exact_realigned_missing_empty() -> None:
    ctx = "The cat sat on the mat. The dog sat too."
    assert locate_answer(ctx, "cat", 4) == (4, "exact")
    assert locate_answer(ctx, " cat ", 3) == (4, "exact")  # whitespace around the text
    assert locate_answer(ctx, "dog", 20) == (28, "realigned")  # off by 8
    # two occurrences: the one nearest the given offset wins
    assert locate_answer(ctx, "sat", 25) == (32, "realigned")
    assert locate_answer(ctx, "sat", 6) == (8, "realigned")
    assert locate_answer(ctx, "horse", 4) == (None, "missing")
    assert locate_answer(ctx, "dog", 0, search=5) == (None, "missing")  # too far away
    assert locate_answer(ctx, "  ", 4) == (None, "empty")
    assert locate_answer(ctx, "cat", "x") == (None, "missing")


def test_char_span_to_tokens_covers_partial_tokens_and_skips_empty_ones() -> None:
    offsets = [(0, 3), (4, 7), (7, 7), (8, 12)]  # "abc def|ghij", one empty token
    assert char_span_to_tokens(offsets, 4, 7) == (1, 1)
    assert char_span_to_tokens(offsets, 5, 10) == (1, 3)  # starts and ends inside tokens
    assert char_span_to_tokens(offsets, 0, 12) == (0, 3)
    assert char_span_to_tokens(offsets, 3, 4) is None  # only the space


def test_window_starts_step_by_stride_until_the_end_is_covered() -> None:
    assert window_starts(10, 4, 3) == [0, 3, 6]  # 6 + 4 = 10 reaches the end
    assert window_starts(11, 4, 3) == [0, 3, 6, 9]
    assert window_starts(3, 4, 3) == [0]
    assert window_starts(0, 4, 3) == [0]
    assert window_starts(10, 4, 9) == [0, 4, 8]  # a stride over the window: no gap


def _run_squad_is_max_context(starts, lengths, w, position) -> bool:
    """run_squad's ``_check_is_max_context``, restated literally."""
    best_score, best = None, None
    for i, (s, k) in enumerate(zip(starts, lengths, strict=True)):
        end = s + k - 1
        if position < s or position > end:
            continue
        score = min(position - s, end - position) + 0.01 * k
        if best_score is None or score > best_score:
            best_score, best = score, i
    return w == best


def test_max_context_by_hand_and_against_run_squad() -> None:
    # windows [0, 4), [3, 7), [6, 9): token 3 ties (0.04 both) -> the first window;
    # token 6: 3 left / 0 right in window 1 (0.04) vs 0 / 2 in window 2 (0.03) -> window 1
    got = max_context([0, 3, 6], [4, 4, 3])
    assert [m.tolist() for m in got] == [
        [True, True, True, True],
        [False, True, True, True],
        [False, True, True],
    ]
    rng = np.random.default_rng(0)
    for _ in range(50):
        n, room, stride = rng.integers(1, 40), rng.integers(2, 12), rng.integers(1, 12)
        starts = window_starts(int(n), int(room), int(stride))
        lengths = [min(int(room), int(n) - s) for s in starts]
        got = max_context(starts, lengths)
        for w, (s, k) in enumerate(zip(starts, lengths, strict=True)):
            expected = [_run_squad_is_max_context(starts, lengths, w, s + j) for j in range(k)]
            assert got[w].tolist() == expected


# --------------------------------------------------------------------------- windows


def _answer_record(rid: str, word: str, *, shift: int = 0) -> QAExample:
    start = LONG.index(word + " ")
    return QAExample(rid, LONG, QUESTION, [{"text": word, "answer_start": start + shift}])


def test_long_context_windows_and_answer_positions_map_back_exactly(tokenizer) -> None:
    params = TaskParams(max_length=32, doc_stride=8, max_query_length=5)
    records = [_answer_record("a", "kappa57"), _answer_record("b", "beta1", shift=3)]
    task = QATask()
    enc = task.encode(records, tokenizer, [], params, split="train")
    ctx = tokenizer.backend_tokenizer.encode(LONG, add_special_tokens=False)
    n_ctx = len(ctx.ids)
    assert enc.counts["questions_truncated"] == 2
    assert enc.counts["answers_realigned"] == 1  # record b's start was off by 3
    assert enc.counts["windowed_examples"] == 2
    cls = tokenizer.cls_token_id
    for ex, rec in enumerate(records):
        rows = [f for f, e in enumerate(enc.feature_example) if e == ex]
        wins = [enc.extra["windows"][f] for f in rows]
        starts = [w[1] for w in wins]
        room = 32 - wins[0][0] - 1  # [CLS] q [SEP] ... [SEP]: 5 question subwords
        assert wins[0][0] == 1 + 5 + 1
        assert starts == window_starts(n_ctx, room, 8)
        assert starts[-1] + wins[-1][2] == n_ctx  # the last window reaches the end
        inside = 0
        for f, (ctx_at, st, k, length) in zip(rows, wins, strict=True):
            feat = enc.features[f]
            assert len(feat["input_ids"]) == length <= 32
            assert feat["input_ids"][ctx_at : ctx_at + k] == ctx.ids[st : st + k]
            assert feat["token_type_ids"][ctx_at] == 1 and feat["token_type_ids"][0] == 0
            s, e = feat["start_positions"], feat["end_positions"]
            if s == 0:
                assert e == 0 and feat["input_ids"][0] == cls  # answer not in this window
                continue
            inside += 1
            first, last = ctx.offsets[st + s - ctx_at][0], ctx.offsets[st + e - ctx_at][1]
            assert LONG[first:last] == rec.answers[0]["text"]
        assert inside >= 1
    assert enc.counts["windows_without_answer"] == len(enc.features) - sum(
        1 for f in enc.features if f["start_positions"] != 0
    )


def test_bad_answers_are_counted_and_dropped_from_training(tokenizer) -> None:
    params = TaskParams(max_length=64, doc_stride=16, max_query_length=8)
    recs = [
        _answer_record("ok", "gamma2"),
        _answer_record("near", "delta3", shift=-5),
        QAExample("gone", LONG, QUESTION, [{"text": "zebra", "answer_start": 10}]),
        QAExample("none", LONG, QUESTION, []),
        QAExample("blank", "   ", QUESTION, [{"text": "x", "answer_start": 0}]),
    ]
    enc = QATask().encode(recs, tokenizer, [], params, split="train")
    c = enc.counts
    assert c["answers_realigned"] == 1
    assert c["dropped_misaligned_answer"] == 1
    assert c["dropped_no_answer"] == 1
    assert c["empty_contexts"] == 1
    assert sorted(set(enc.feature_example)) == [0, 1]
    # evaluation keeps every example, counts the misaligned start and the unanswerable one
    enc = QATask().encode(recs, tokenizer, [], params, split="test")
    assert enc.counts["answers_misaligned"] == 2  # "near" and "gone"
    assert enc.counts["unanswerable"] == 1
    assert sorted(set(enc.feature_example)) == [0, 1, 2, 3]  # the blank context has none


def test_a_window_too_small_for_the_question_is_a_config_error(tokenizer) -> None:
    params = TaskParams(max_length=8, doc_stride=4, max_query_length=10)
    with pytest.raises(ConfigError, match="max_length 8"):
        QATask().encode([_answer_record("a", "beta1")], tokenizer, [], params, split="train")


def test_collate_pads_windows_and_keeps_positions(tokenizer) -> None:
    batch = [
        {
            "input_ids": [2, 5, 3],
            "token_type_ids": [0, 0, 1],
            "start_positions": 1,
            "end_positions": 1,
        },
        {"input_ids": [2, 3], "token_type_ids": [0, 1], "start_positions": 0, "end_positions": 0},
    ]
    out = QATask().collate(tokenizer)(batch)
    pad = tokenizer.pad_token_id
    assert out["input_ids"].tolist() == [[2, 5, 3], [2, 3, pad]]
    assert out["attention_mask"].tolist() == [[1, 1, 1], [1, 1, 0]]
    assert out["token_type_ids"].tolist() == [[0, 0, 1], [0, 1, 0]]
    assert out["start_positions"].tolist() == [1, 0] and out["end_positions"].tolist() == [1, 0]
    out = QATask().collate(tokenizer)([{"input_ids": [2, 3]}])  # evaluation: no labels
    assert sorted(out) == ["attention_mask", "input_ids"]


# --------------------------------------------------------------------------- decoding


def test_best_span_skips_question_reversed_too_long_and_non_max_context_pairs() -> None:
    # 10 positions: [CLS] q q [SEP] c0 c1 c2 c3 c4 [SEP]; context at 4..8
    start = np.array([0, 9, 0, 0, 1, 5, 2, 0, 0, 0], dtype=float)
    end = np.array([0, 0, 9, 0, 0, 0, 0, 3, 8, 0], dtype=float)
    kw = dict(context_offset=4, context_length=5, n_best=20)
    mc = np.ones(5, dtype=bool)
    # question start (pos 1) is excluded; best valid: start 5 (c1) + end 8 (c4) = 13
    assert best_span(start, end, is_max_context=mc, max_answer_length=30, **kw) == (13.0, 1, 4)
    # at most 3 subwords: c2..c4 (2 + 8 = 10) beats c1..c3 (5 + 3) and c4..c4 (0 + 8)
    assert best_span(start, end, is_max_context=mc, max_answer_length=3, **kw) == (10.0, 2, 4)
    # start c1 not max context here: c2..c4 (10) wins
    mc2 = np.array([True, False, True, True, True])
    assert best_span(start, end, is_max_context=mc2, max_answer_length=30, **kw) == (10.0, 2, 4)
    # n_best 1: only start pos 1 (question) and end pos 2 (question): nothing valid
    assert (
        best_span(start, end, is_max_context=mc, max_answer_length=30, **{**kw, "n_best": 1})
        is None
    )
    # the reversed pair c3 -> c0 (9 + 9) is never taken; c3..c3 (9 + 0) ties with
    # c0..c0 (0 + 9) and comes first in run_squad's order (starts by decreasing logit)
    end2 = np.array([0, 0, 0, 0, 9, 0, 0, 0, 0, 0], dtype=float)
    start2 = np.array([0, 0, 0, 0, 0, 0, 0, 9, 0, 0], dtype=float)
    assert best_span(start2, end2, is_max_context=mc, max_answer_length=30, **kw) == (9.0, 3, 3)


def test_decode_picks_the_best_window_and_cuts_the_original_text() -> None:
    context = "Alpha  beta, GAMMA delta"
    offsets = [(0, 5), (7, 11), (11, 12), (13, 18), (19, 24)]  # 5 context tokens
    # two windows of 3 context tokens: [0, 3) and [2, 5), context at position 2
    windows = [(2, 0, 3, 6), (2, 2, 3, 6)]
    enc = Encoded(
        features=[{"input_ids": [0] * 6}, {"input_ids": [0] * 6}],
        feature_example=[0, 0],
        extra={"windows": windows, "offsets": [offsets]},
    )
    rec = QAExample("q", context, "?", [{"text": "beta,", "answer_start": 7}])
    start = np.full((2, 8), -100.0)  # padded past length 6, as the Trainer gathers
    end = np.full((2, 8), -100.0)
    start[:, :6] = 0
    end[:, :6] = 0
    start[0, 3], end[0, 4] = 4.0, 4.0  # window 0: "beta," (tokens 1-2) scores 8
    start[1, 3], end[1, 4] = 5.0, 5.0  # window 1: "GAMMA delta" (tokens 3-4) scores 10
    params = TaskParams(n_best=20, max_answer_length=30)
    (pred,) = QATask().decode((start, end), enc, [rec], [], params)
    assert pred == {"id": "q", "prediction": "GAMMA delta", "gold": ["beta,"], "score": 10.0}
    # token 2 ("," at window 1's first position) is max context in window 0 only
    start[1, 3] = -1.0
    start[1, 2], end[1, 2] = 9.0, 9.0
    (pred,) = QATask().decode((start, end), enc, [rec], [], params)
    assert pred["prediction"] == "beta,"
    # no valid span anywhere: an empty answer, flagged
    (pred,) = QATask().decode(
        (np.zeros((2, 8)), np.zeros((2, 8))), enc, [rec], [], TaskParams(max_answer_length=0)
    )
    assert pred["prediction"] == "" and pred["no_span"] and pred["score"] is None


def test_examples_without_features_get_an_empty_answer() -> None:
    enc = Encoded(features=[], feature_example=[], extra={"windows": [], "offsets": [[]]})
    rec = QAExample("q", "  ", "?", [{"text": "x", "answer_start": 0}])
    (pred,) = QATask().decode((np.zeros((0, 4)), np.zeros((0, 4))), enc, [rec], [], TaskParams())
    assert pred["prediction"] == "" and pred["no_span"]


# --------------------------------------------------------------------------- scores


def test_score_squad_style_with_unanswerable_and_empty_gold() -> None:
    recs = [
        QAExample("1", "c", "q", [{"text": "The Big dog", "answer_start": 0}]),
        QAExample("2", "c", "q", [{"text": "big dog", "answer_start": 0}]),
        QAExample("3", "c", "q", []),
        QAExample(
            "4", "c", "q", [{"text": " ", "answer_start": 0}, {"text": "x", "answer_start": 0}]
        ),
    ]
    preds = [
        {"id": "1", "prediction": "big dog!"},  # EM after normalisation
        {"id": "2", "prediction": "the big cat"},  # "big cat" vs "big dog": F1 1/2
        {"id": "3", "prediction": "anything"},
        {"id": "4", "prediction": "", "no_span": True},
    ]
    s = QATask().score(preds, recs, lang="en")
    assert s["count"] == 3 and s["no_gold"] == 1
    assert s["exact_match"] == pytest.approx(100 / 3)
    assert s["f1"] == pytest.approx((100 + 50 + 0) / 3)
    assert s["empty_gold_answers"] == 1 and s["no_span"] == 1 and s["style"] == "squad"


def test_score_mlqa_style_uses_the_language() -> None:
    recs = [QAExample("1", "c", "q", [{"text": "el perro", "answer_start": 0}])]
    preds = [{"id": "1", "prediction": "perro"}]
    assert QATask("mlqa").score(preds, recs, lang="es")["exact_match"] == 100.0  # article
    assert QATask("squad").score(preds, recs, lang="es")["exact_match"] == 0.0
    with pytest.raises(ConfigError):
        QATask("other")


# --------------------------------------------------------------------------- the loop


def test_tiny_fine_tuning_through_the_loop(encoder: Path, tmp_path: Path) -> None:
    """The one loop runs the QA family end to end: windows, training, decoding over
    several windows per example, scores and prediction files."""
    from xlalign.evaluation.tasks.finetune import finetune

    ctx = "the cat sat on the mat " * 6
    recs = [
        QAExample(f"q{i}", ctx, "where did the cat sit", [{"text": "mat", "answer_start": 19}])
        for i in range(8)
    ]
    params = TaskParams(
        learning_rate=1e-3,
        epochs=2,
        batch_size=4,
        max_length=24,
        doc_stride=6,
        max_query_length=8,
        selection="final",
    )
    res = finetune(
        QATask(),
        encoder=encoder,
        train=recs,
        dev=recs[:2],
        tests={"xx": recs[:3]},
        params=params,
        seed=1,
        output_dir=tmp_path / "out",
        work_dir=tmp_path / "work",
        keep_model=False,
        progress=False,
    )
    assert res["counts"]["train"]["windowed_examples"] == 8
    for key in ("en/dev", "xx"):
        s = res["scores"][key]
        assert s["count"] == len(recs[:2] if key == "en/dev" else recs[:3])
        assert 0 <= s["exact_match"] <= s["f1"] <= 100
    lines = (tmp_path / "out" / res["predictions"]["xx"]).read_text().splitlines()
    assert len(lines) == 3
