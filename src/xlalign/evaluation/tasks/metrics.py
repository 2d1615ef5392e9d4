"""The scores of the zero-shot tasks, restated from the official scripts.

Every percentage is a float in [0, 100], as XTREME reports them.

* Extractive QA: SQuAD v1.1's ``evaluate-v1.1.py`` (:func:`squad_normalize`) and MLQA's
  ``mlqa_evaluation_v1.py`` (:func:`mlqa_normalize`), through :func:`qa_em_f1` (one
  question) and :func:`qa_scores` (a split).
* NER: :func:`span_f1`, seqeval 1.2.2's default (conlleval-compatible, non-strict) micro
  precision / recall / F1 over entity chunks, written from its definition (seqeval is a
  test dependency only: the tests compare against it).
* UD-POS: :func:`xtreme_pos_f1`, what XTREME's scripts call POS "F1" (seqeval over raw
  UPOS tags), and :func:`token_accuracy`, the honest per-word score. Both are reported.
* Classification and retrieval: :func:`accuracy`.
* Dependency parsing: :func:`attachment_scores` (UAS / LAS as the CoNLL 2018 shared task
  evaluation computes them on gold segmentation).

This module imports neither torch nor seqeval.
"""

from __future__ import annotations

import re
import string
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

__all__ = [
    "MLQA_LANGUAGES",
    "accuracy",
    "attachment_scores",
    "get_chunks",
    "mlqa_normalize",
    "qa_em_f1",
    "qa_scores",
    "span_f1",
    "squad_normalize",
    "token_accuracy",
    "xtreme_pos_f1",
]

# --------------------------------------------------------------------------- QA

_SQUAD_PUNCT = frozenset(string.punctuation)
_SQUAD_ARTICLES = re.compile(r"\b(a|an|the)\b")

#: MLQA's articles, per answer language (``mlqa_evaluation_v1.py``, ``remove_articles``).
#: hi and zh have none. For ar the official pattern is ``'\sال^|ال'``: its first
#: alternative can never match (``^`` after three characters), so it removes every
#: occurrence of "ال", inside words too ("قال" -> "ق"); restated as such.
_MLQA_ARTICLES: dict[str, re.Pattern[str] | None] = {
    "en": re.compile(r"\b(a|an|the)\b"),
    "es": re.compile(r"\b(un|una|unos|unas|el|la|los|las)\b"),
    "hi": None,
    "vi": re.compile(r"\b(của|là|cái|chiếc|những)\b"),
    "de": re.compile(r"\b(ein|eine|einen|einem|eines|einer|der|die|das|den|dem|des)\b"),
    "ar": re.compile("ال"),
    "zh": None,
}
#: The answer languages MLQA's script knows (any other raises there, and here).
MLQA_LANGUAGES: tuple[str, ...] = tuple(_MLQA_ARTICLES)
_MIXED_SEGMENTATION = frozenset({"zh"})
#: The characters MLQA's ``mixed_segmentation`` treats as Chinese (one token each).
_CJK = re.compile("[\u4e00-\u9fa5]")


@cache
def _mlqa_punct() -> frozenset[str]:
    """MLQA's punctuation: every code point below ``sys.maxunicode`` whose Unicode category
    starts with "P", plus ASCII ``string.punctuation`` (which adds $+<=>^`|~, symbols in
    Unicode). Follows this Python's Unicode database, as the official script does."""
    chars = {chr(i) for i in range(sys.maxunicode) if unicodedata.category(chr(i)).startswith("P")}
    return frozenset(chars | _SQUAD_PUNCT)


def squad_normalize(text: str) -> str:
    """SQuAD v1.1's answer normalisation: lower-case, drop ASCII punctuation
    (``string.punctuation``), replace the words a/an/the by spaces, collapse whitespace."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _SQUAD_PUNCT)
    text = _SQUAD_ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _mixed_segmentation(text: str, punct: frozenset[str]) -> list[str]:
    """MLQA's zh tokenisation: each character in U+4E00..U+9FA5 (or punctuation) is a
    token; the runs between them are split on whitespace."""
    tokens: list[str] = []
    run: list[str] = []
    for ch in text:
        if _CJK.match(ch) or ch in punct:
            tokens.extend("".join(run).split())
            run = []
            tokens.append(ch)
        else:
            run.append(ch)
    tokens.extend("".join(run).split())
    return tokens


def mlqa_normalize(text: str, lang: str) -> str:
    """MLQA's answer normalisation for answer language ``lang`` (one of
    :data:`MLQA_LANGUAGES`): lower-case, drop Unicode punctuation, drop the language's
    articles, then re-tokenise (whitespace; zh: mixed segmentation, one token per Chinese
    character) and join the tokens with single spaces."""
    if lang not in _MLQA_ARTICLES:
        raise ValueError(
            f"MLQA normalisation: unknown answer language {lang!r} "
            f"(the official script knows {', '.join(MLQA_LANGUAGES)})"
        )
    punct = _mlqa_punct()
    text = text.lower()
    text = "".join(ch for ch in text if ch not in punct)
    articles = _MLQA_ARTICLES[lang]
    if articles is not None:
        text = articles.sub(" ", text)
    tokens = _mixed_segmentation(text, punct) if lang in _MIXED_SEGMENTATION else text.split()
    return " ".join(t for t in tokens if t.strip())


def _normalizer(style: str, lang: str | None) -> Callable[[str], str]:
    if style == "squad":
        return squad_normalize
    if style == "mlqa":
        if lang is None:
            raise ValueError("MLQA-style QA scores need the answer language (lang=...)")
        if lang not in _MLQA_ARTICLES:
            raise ValueError(
                f"MLQA normalisation: unknown answer language {lang!r} "
                f"(the official script knows {', '.join(MLQA_LANGUAGES)})"
            )
        return lambda text: mlqa_normalize(text, lang)
    raise ValueError(f"QA score style must be 'squad' or 'mlqa', not {style!r}")


def _token_f1(pred_tokens: list[str], gold_tokens: list[str]) -> float:
    """SQuAD's bag-of-tokens F1 (0 when nothing is shared, even if both are empty)."""
    same = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def qa_em_f1(
    prediction: str, answers: list[str], *, lang: str | None = None, style: str = "squad"
) -> tuple[float, float]:
    """Exact match and F1 (each 0 or 100 / in [0, 100]) of one predicted answer: the
    maximum over the gold answers, after normalisation (``style`` "squad": SQuAD v1.1;
    "mlqa": MLQA's for answer language ``lang``). F1 is over whitespace tokens of the
    normalised strings (zh under "mlqa": characters). An empty ``answers`` is an error:
    the official scripts take ``max`` of an empty list."""
    if not answers:
        raise ValueError("qa_em_f1: a question without gold answers cannot be scored")
    norm = _normalizer(style, lang)
    pred = norm(prediction)
    pred_tokens = pred.split()
    em = f1 = 0.0
    for gold in answers:
        g = norm(gold)
        em = max(em, float(pred == g))
        f1 = max(f1, _token_f1(pred_tokens, g.split()))
    return 100.0 * em, 100.0 * f1


def qa_scores(
    predictions: dict[str, str],
    answers: dict[str, list[str]],
    *,
    lang: str | None = None,
    style: str = "squad",
) -> dict[str, Any]:
    """EM and F1 of a split, as the official ``evaluate`` functions compute them.

    ``answers`` maps every question id to its gold answer texts. A question without a
    prediction scores 0 and stays in the denominator (as in the official scripts),
    counted in ``unanswered``; predictions for unknown ids are ignored and counted in
    ``extra_predictions``; questions with no gold answer (where the official scripts
    would crash) are left out of the denominator and counted in ``no_gold``.
    Returns ``exact_match`` and ``f1`` in [0, 100], ``count`` (questions scored) and those
    counts.
    """
    _normalizer(style, lang)  # validate before scoring anything
    em_sum = f1_sum = 0.0
    count = unanswered = no_gold = 0
    for qid, golds in answers.items():
        if not golds:
            no_gold += 1
            continue
        count += 1
        if qid not in predictions:
            unanswered += 1
            continue
        em, f1 = qa_em_f1(predictions[qid], golds, lang=lang, style=style)
        em_sum += em
        f1_sum += f1
    return {
        "exact_match": em_sum / count if count else 0.0,
        "f1": f1_sum / count if count else 0.0,
        "count": count,
        "unanswered": unanswered,
        "no_gold": no_gold,
        "extra_predictions": sum(1 for qid in predictions if qid not in answers),
        "style": style,
        "lang": lang,
    }


# --------------------------------------------------------------------------- chunks


def _check_parallel(gold: Sequence[Sequence[Any]], pred: Sequence[Sequence[Any]], what: str):
    if len(gold) != len(pred):
        raise ValueError(f"{what}: {len(gold)} gold sentences but {len(pred)} predicted")
    for i, (g, p) in enumerate(zip(gold, pred, strict=True)):
        if isinstance(g, str) or isinstance(p, str):
            raise ValueError(f"{what}: sentence {i} is a string; expected a list of labels")
        if len(g) != len(p):
            raise ValueError(
                f"{what}: sentence {i} has {len(g)} gold labels but {len(p)} predicted"
            )


def _split_tag(tag: str, version: str) -> tuple[str, str]:
    """seqeval's reading of a tag (prefix mode): its first character is the chunk tag
    (B/I/E/S/O, anything else is a tag no rule names) and the rest the type.

    1.2.2 (and 0.0.16 on): the type is what follows the first character, after one "-"
    if there is one; an empty type is "_" ("O" -> ("O", "_"), "NOUN" -> ("N", "OUN")).
    0.0.12: the type is the text after the last "-", else the whole tag ("NOUN" ->
    ("N", "NOUN"), "O" -> ("O", "O")).
    """
    if not isinstance(tag, str) or not tag:
        raise ValueError(f"a tag must be a non-empty string, not {tag!r}")
    if version == "1.2.2":
        return tag[0], tag[1:].split("-", maxsplit=1)[-1] or "_"
    return tag[0], tag.split("-")[-1]


def _end_of_chunk(prev_tag: str, tag: str, prev_type: str, type_: str) -> bool:
    """conlleval's end-of-chunk rule, as seqeval has it (identical in 0.0.12 and 1.2.2)."""
    if prev_tag in ("E", "S"):
        return True
    if prev_tag in ("B", "I") and tag in ("B", "S", "O"):
        return True
    return prev_tag not in ("O", ".") and prev_type != type_


def _start_of_chunk(prev_tag: str, tag: str, prev_type: str, type_: str) -> bool:
    """conlleval's start-of-chunk rule, as seqeval has it."""
    if tag in ("B", "S"):
        return True
    if prev_tag in ("E", "S", "O") and tag in ("E", "I"):
        return True
    return tag not in ("O", ".") and prev_type != type_


def get_chunks(
    sentences: Sequence[Sequence[str]], *, seqeval_version: str = "1.2.2"
) -> list[tuple[str, int, int]]:
    """The chunks ``(type, first, last)`` seqeval finds in a list of tagged sentences.

    As seqeval's ``get_entities``: the sentences are concatenated with one "O" after each
    (positions count those separators), then scanned once with a sentinel "O" at the end;
    a chunk ends where :func:`_end_of_chunk` says and starts where :func:`_start_of_chunk`
    says. A start with no end before it silently drops the open chunk, and tags that no
    rule names (not B/I/E/S/O) continue a chunk of the same type: seqeval's (and
    conlleval's) lenient reading, kept as is.
    """
    if seqeval_version not in ("1.2.2", "0.0.12"):
        raise ValueError(f"seqeval_version must be '1.2.2' or '0.0.12', not {seqeval_version!r}")
    flat = [tag for sent in sentences for tag in [*sent, "O"]]
    chunks: list[tuple[str, int, int]] = []
    prev_tag, prev_type, begin = "O", "", 0
    for i, label in enumerate([*flat, "O"]):
        tag, type_ = _split_tag(label, seqeval_version)
        if _end_of_chunk(prev_tag, tag, prev_type, type_):
            chunks.append((prev_type, begin, i - 1))
        if _start_of_chunk(prev_tag, tag, prev_type, type_):
            begin = i
        prev_tag, prev_type = tag, type_
    return chunks


def _prf(correct: int, n_pred: int, n_gold: int) -> tuple[float, float, float]:
    """Precision, recall, F1 in [0, 100]; 0 where a denominator is 0 (seqeval's
    ``zero_division='warn'``, without the warning)."""
    p = correct / n_pred if n_pred else 0.0
    r = correct / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return 100.0 * p, 100.0 * r, 100.0 * f


def span_f1(
    gold: list[list[str]], pred: list[list[str]], *, seqeval_version: str = "1.2.2"
) -> dict[str, Any]:
    """Entity-level micro precision / recall / F1 as seqeval's default mode computes them
    (``seqeval.metrics.f1_score(gold, pred)``, conlleval-compatible, tags read by their
    first character: IOB1, IOB2, IOE and IOBES mixes are all accepted, leniently).

    A predicted chunk is correct when a gold chunk has the same type, start and end.
    Returns ``precision``, ``recall``, ``f1`` (in [0, 100]), ``n_gold``, ``n_pred``,
    ``n_correct`` and ``per_type`` (each type's precision / recall / f1 / support).
    """
    _check_parallel(gold, pred, "span_f1")
    gold_chunks = set(get_chunks(gold, seqeval_version=seqeval_version))
    pred_chunks = set(get_chunks(pred, seqeval_version=seqeval_version))
    correct = gold_chunks & pred_chunks
    p, r, f = _prf(len(correct), len(pred_chunks), len(gold_chunks))
    per_type: dict[str, dict[str, float]] = {}
    for type_ in sorted({c[0] for c in gold_chunks | pred_chunks}):
        n_g = sum(1 for c in gold_chunks if c[0] == type_)
        n_p = sum(1 for c in pred_chunks if c[0] == type_)
        n_c = sum(1 for c in correct if c[0] == type_)
        tp, tr, tf = _prf(n_c, n_p, n_g)
        per_type[type_] = {"precision": tp, "recall": tr, "f1": tf, "support": n_g}
    return {
        "precision": p,
        "recall": r,
        "f1": f,
        "n_gold": len(gold_chunks),
        "n_pred": len(pred_chunks),
        "n_correct": len(correct),
        "per_type": per_type,
    }


def xtreme_pos_f1(
    gold: list[list[str]], pred: list[list[str]], *, seqeval_version: str = "1.2.2"
) -> float:
    """UD-POS "F1" as XTREME computes it: seqeval's ``f1_score`` over raw UPOS tags
    (``third_party/run_tag.py`` and ``evaluate.py``), in [0, 100].

    seqeval reads each UPOS tag as a chunk tag (its first letter) plus a type, so this is
    not a per-word score:

    * a run of one tag is one chunk ("NOUN NOUN" is one chunk, right only if the whole run
      is): a wrong tag inside a run costs the run, a wrong split or merge of runs costs
      both;
    * SCONJ and SYM start with "S", so each of them is a chunk of its own and never
      merges; every other tag continues a chunk while the type stays the same;
    * under seqeval 1.2.2 the type is the tag minus its first letter, so CCONJ and SCONJ
      share the type "CONJ" (conflated), and X has the type "_" of the "O" that separates
      sentences, so an X run that ends a sentence is never closed and never counted;
    * under seqeval 0.0.12 (``seqeval_version="0.0.12"``) the type is the whole tag: runs
      still merge and S-tags still stand alone, but nothing is conflated. XTREME's
      ``install_tools.sh`` runs an unpinned ``pip install seqeval``; 0.0.12 was the
      release from June 2019 to September 2020, when the XTREME paper's numbers were made.

    :func:`token_accuracy` (the fraction of words whose tag is right) is the score the
    tagging literature means by POS accuracy; report it beside this one.
    """
    return span_f1(gold, pred, seqeval_version=seqeval_version)["f1"]


# --------------------------------------------------------------------------- accuracy


def token_accuracy(gold: list[list[str]], pred: list[list[str]]) -> float:
    """The percentage of words whose predicted label equals the gold one, over all words
    of all sentences (micro-averaged)."""
    _check_parallel(gold, pred, "token_accuracy")
    n = sum(len(s) for s in gold)
    if n == 0:
        raise ValueError("token_accuracy: no words to score")
    right = sum(
        g == p for gs, ps in zip(gold, pred, strict=True) for g, p in zip(gs, ps, strict=True)
    )
    return 100.0 * right / n


def accuracy(gold: list[Any], pred: list[Any]) -> float:
    """The percentage of examples whose prediction equals the gold label."""
    if len(gold) != len(pred):
        raise ValueError(f"accuracy: {len(gold)} gold labels but {len(pred)} predictions")
    if not gold:
        raise ValueError("accuracy: no examples to score")
    return 100.0 * sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold)


# --------------------------------------------------------------------------- parsing


def attachment_scores(
    gold_heads: list[list[int]],
    gold_rels: list[list[str]],
    pred_heads: list[list[int]],
    pred_rels: list[list[str]],
    *,
    exclude_punct: bool = False,
    upos: list[list[str]] | None = None,
    strip_subtypes: bool = True,
) -> dict[str, Any]:
    """Unlabelled and labelled attachment scores (UAS, LAS in [0, 100]) over words.

    UAS: the word's predicted head is its gold head; LAS: and the relation is right too.
    The default scores every word, punctuation included, and compares relations without
    their language-specific subtype ("nmod:poss" counts as "nmod"), as the CoNLL 2018
    shared task evaluation (``conll18_ud_eval.py``) does on gold segmentation.
    ``exclude_punct=True`` leaves out words whose gold UPOS (``upos``, per sentence) is
    PUNCT, the older convention of many parsing papers; ``strip_subtypes=False`` compares
    full relation labels. Returns ``uas``, ``las``, ``count`` (words scored) and
    ``excluded`` (punctuation left out).
    """
    _check_parallel(gold_heads, pred_heads, "attachment_scores (heads)")
    _check_parallel(gold_heads, gold_rels, "attachment_scores (gold heads vs relations)")
    _check_parallel(gold_heads, pred_rels, "attachment_scores (gold heads vs predicted relations)")
    if exclude_punct:
        if upos is None:
            raise ValueError("attachment_scores: exclude_punct=True needs the gold UPOS tags")
        _check_parallel(gold_heads, upos, "attachment_scores (heads vs UPOS)")

    def rel(r: str) -> str:
        return r.split(":")[0] if strip_subtypes else r

    count = excluded = head_right = both_right = 0
    for i in range(len(gold_heads)):
        for j in range(len(gold_heads[i])):
            if exclude_punct and upos is not None and upos[i][j] == "PUNCT":
                excluded += 1
                continue
            count += 1
            if gold_heads[i][j] == pred_heads[i][j]:
                head_right += 1
                if rel(gold_rels[i][j]) == rel(pred_rels[i][j]):
                    both_right += 1
    if count == 0:
        raise ValueError("attachment_scores: no words to score")
    return {
        "uas": 100.0 * head_right / count,
        "las": 100.0 * both_right / count,
        "count": count,
        "excluded": excluded,
        "exclude_punct": exclude_punct,
        "strip_subtypes": strip_subtypes,
    }
