"""The task metrics against hand-computed values, the official definitions restated, and
seqeval 1.2.2 (the test dependency the span metrics reproduce)."""

from __future__ import annotations

import random
import warnings

import pytest
from seqeval.metrics import f1_score, precision_score, recall_score
from seqeval.metrics.sequence_labeling import precision_recall_fscore_support

from xlalign.evaluation.tasks.metrics import (
    accuracy,
    attachment_scores,
    get_chunks,
    mlqa_normalize,
    qa_em_f1,
    qa_scores,
    span_f1,
    squad_normalize,
    token_accuracy,
    xtreme_pos_f1,
)

UPOS = "ADJ ADP ADV AUX CCONJ DET INTJ NOUN NUM PART PRON PROPN PUNCT SCONJ SYM VERB X".split()

# ------------------------------------------------------------------ SQuAD v1.1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The  Cat's hat!", "cats hat"),  # lower, ASCII punctuation, article, spaces
        ("an apple\tand a pear", "apple and pear"),
        ("theatre anthem", "theatre anthem"),  # articles only as whole words
        ("a.b", "ab"),  # punctuation removed before articles: "ab" is no article
        ("A-the", "athe"),
        ("«Paris»", "«paris»"),  # non-ASCII punctuation is kept by SQuAD
        ("  ", ""),
    ],
)
def test_squad_normalize(text: str, expected: str) -> None:
    assert squad_normalize(text) == expected


def test_squad_em_f1_hand_computed() -> None:
    # "cat sat" vs "cat sat down": 2 shared, P = 1, R = 2/3, F1 = 0.8
    assert qa_em_f1("the cat sat", ["a cat sat down"]) == pytest.approx((0.0, 80.0))
    # max over gold answers, each of EM and F1 separately
    assert qa_em_f1("Paris", ["London", "paris."]) == (100.0, 100.0)
    em, f1 = qa_em_f1("big red cat", ["red cat", "big dog"])
    assert em == 0.0 and f1 == pytest.approx(80.0)  # red cat: P 2/3, R 1
    # repeated tokens count once each (multiset intersection): P 2/3, R 1
    assert qa_em_f1("x x y", ["x y"])[1] == pytest.approx(80.0)
    # the official quirk: two answers that normalise to "" match exactly with F1 0
    assert qa_em_f1("the", ["a"]) == (100.0, 0.0)


def test_qa_em_f1_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="without gold answers"):
        qa_em_f1("x", [])
    with pytest.raises(ValueError, match="style"):
        qa_em_f1("x", ["x"], style="tydi")
    with pytest.raises(ValueError, match="answer language"):
        qa_em_f1("x", ["x"], style="mlqa")


def test_qa_scores_counts_missing_and_extra() -> None:
    answers = {"q1": ["Paris"], "q2": ["the cat sat"], "q3": []}
    predictions = {"q1": "paris", "q9": "stray"}
    out = qa_scores(predictions, answers, style="squad")
    # q1 right, q2 unanswered (0 in the denominator, as the official scripts), q3 no gold
    assert out["exact_match"] == pytest.approx(50.0)
    assert out["f1"] == pytest.approx(50.0)
    assert (out["count"], out["unanswered"], out["no_gold"], out["extra_predictions"]) == (
        2,
        1,
        1,
        1,
    )


# ------------------------------------------------------------------ MLQA


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("«Paris»", "en", "paris"),  # Unicode punctuation (Pi/Pf) goes
        ("¿Dónde?", "es", "dónde"),
        ("la casa de los padres", "es", "casa de padres"),
        ("Die Katze und das Haus", "de", "katze und haus"),
        ("của tôi", "vi", "tôi"),
        ("the cat", "hi", "the cat"),  # hi: no articles
        ("الكتاب", "ar", "كتاب"),
        ("قال", "ar", "ق"),  # every "ال", inside words too, as the official regex does
        ("costs $5 or 5€", "en", "costs 5 or 5€"),  # $ is ASCII punctuation, € a symbol
        ("北京大学，2019年", "zh", "北 京 大 学 2019 年"),  # one token per Chinese character
        ("Beijing大学 Univ", "zh", "beijing 大 学 univ"),  # other runs split on spaces
        ("the 北京", "zh", "the 北 京"),  # zh: no articles
    ],
)
def test_mlqa_normalize(text: str, lang: str, expected: str) -> None:
    assert mlqa_normalize(text, lang) == expected


def test_mlqa_unknown_language() -> None:
    with pytest.raises(ValueError, match="'fr'"):
        mlqa_normalize("le chat", "fr")


def test_mlqa_em_f1_zh_character_level() -> None:
    # 北京 vs 北京大学: characters are the tokens: P 1, R 1/2, F1 2/3
    em, f1 = qa_em_f1("北京", ["北京大学"], lang="zh", style="mlqa")
    assert em == 0.0 and f1 == pytest.approx(200 / 3)
    # under SQuAD rules both are one token each and share nothing
    assert qa_em_f1("北京", ["北京大学"])[1] == 0.0


def test_mlqa_vs_squad_on_unicode_punctuation() -> None:
    assert qa_em_f1("«Paris»", ["Paris"])[0] == 0.0
    assert qa_em_f1("«Paris»", ["Paris"], lang="en", style="mlqa")[0] == 100.0
    scores = qa_scores({"a": "los gatos"}, {"a": ["gatos"]}, lang="es", style="mlqa")
    assert scores["exact_match"] == 100.0


# ------------------------------------------------------------------ span F1 (NER)


def _seqeval(gold: list[list[str]], pred: list[list[str]]) -> tuple[float, float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (
            100 * precision_score(gold, pred),
            100 * recall_score(gold, pred),
            100 * f1_score(gold, pred),
        )


def test_span_f1_hand_computed() -> None:
    gold = [["O", "O", "B-MISC", "I-MISC", "B-MISC", "O", "O"], ["B-PER", "I-PER", "O"]]
    pred = [["O", "O", "B-MISC", "I-MISC", "B-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    out = span_f1(gold, pred)
    # gold MISC(2,3) MISC(4,4) PER(8,9); pred MISC(2,3) MISC(4,5) PER(8,9): 2 of 3
    assert (out["n_gold"], out["n_pred"], out["n_correct"]) == (3, 3, 2)
    assert out["f1"] == pytest.approx(200 / 3)
    assert out["per_type"]["MISC"]["f1"] == pytest.approx(50.0)
    assert out["per_type"]["PER"] == {
        "precision": 100.0,
        "recall": 100.0,
        "f1": 100.0,
        "support": 1,
    }


def test_chunks_iob1_and_sentence_boundaries() -> None:
    # IOB1: I- opens a chunk after O; a sentence boundary closes it
    assert get_chunks([["I-PER", "I-PER", "O", "I-LOC"]]) == [("PER", 0, 1), ("LOC", 3, 3)]
    assert get_chunks([["I-PER"], ["I-PER"]]) == [("PER", 0, 0), ("PER", 2, 2)]
    # a type change inside I- runs splits the chunk; IOBES E/S close chunks
    assert get_chunks([["B-A", "I-B", "E-B", "S-A"]]) == [("A", 0, 0), ("B", 1, 2), ("A", 3, 3)]


def test_span_f1_no_entities_is_zero() -> None:
    out = span_f1([["O", "O"]], [["O", "O"]])
    assert (out["precision"], out["recall"], out["f1"]) == (0.0, 0.0, 0.0)


def test_span_f1_rejects_misaligned_input() -> None:
    with pytest.raises(ValueError, match="sentence 1 has 2 gold labels but 1"):
        span_f1([["O"], ["O", "O"]], [["O"], ["O"]])
    with pytest.raises(ValueError, match="2 gold sentences but 1"):
        span_f1([["O"], ["O"]], [["O"]])
    with pytest.raises(ValueError, match="a string"):
        span_f1(["B-PER"], ["B-PER"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="non-empty string"):
        span_f1([[""]], [["O"]])


NER_TAGS = [
    *(f"{p}-{t}" for p in "BIES" for t in ("PER", "LOC")),
    *["O"] * 6,
    # bad prefixes and odd forms seqeval still reads leniently
    "X-PER", "B", "I", "E", "S", ".", "B-PER-X", "-LOC", "I-", "NOUN", "PER",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(40))
def test_span_f1_matches_seqeval_on_random_sequences(seed: int) -> None:
    rng = random.Random(seed)
    tags = (
        NER_TAGS if seed % 2 else [t for t in NER_TAGS if (t[0] in "BIO" and "-" in t) or t == "O"]
    )
    gold, pred = [], []
    for _ in range(rng.randint(1, 8)):
        n = rng.randint(1, 12)
        gold.append([rng.choice(tags) for _ in range(n)])
        # predictions: mostly the gold tag, so that chunks match often
        pred.append([g if rng.random() < 0.6 else rng.choice(tags) for g in gold[-1]])
    out = span_f1(gold, pred)
    p, r, f = _seqeval(gold, pred)
    assert (out["precision"], out["recall"], out["f1"]) == pytest.approx((p, r, f))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, _, fs, support = precision_recall_fscore_support(gold, pred, average=None)
    for i, type_ in enumerate(sorted(out["per_type"])):
        assert out["per_type"][type_]["f1"] == pytest.approx(100 * fs[i])
        assert out["per_type"][type_]["support"] == support[i]


# ------------------------------------------------------------------ UD-POS "F1"


def test_xtreme_pos_f1_merges_runs() -> None:
    # gold NOUN-run (0,1) + VERB (2,2); pred NOUN (0,0) + VERB-run (1,2): nothing matches
    gold, pred = [["NOUN", "NOUN", "VERB"]], [["NOUN", "VERB", "VERB"]]
    assert xtreme_pos_f1(gold, pred) == 0.0
    assert token_accuracy(gold, pred) == pytest.approx(200 / 3)
    # one wrong tag inside a run of three costs the whole run
    assert xtreme_pos_f1([["NOUN"] * 3], [["NOUN", "ADJ", "NOUN"]]) == 0.0
    # a right run of two is one chunk, so one right chunk: 100
    assert xtreme_pos_f1([["NOUN", "NOUN"]], [["NOUN", "NOUN"]]) == 100.0


def test_xtreme_pos_f1_conflates_cconj_and_sconj() -> None:
    gold, pred = [["CCONJ", "NOUN"]], [["SCONJ", "NOUN"]]
    assert token_accuracy(gold, pred) == 50.0
    # seqeval 1.2.2: both are type "CONJ", so the wrong tag still makes a right chunk
    assert xtreme_pos_f1(gold, pred) == 100.0
    # seqeval 0.0.12: the type is the whole tag: one of two chunks right
    assert xtreme_pos_f1(gold, pred, seqeval_version="0.0.12") == 50.0


def test_xtreme_pos_f1_s_tags_stand_alone_and_x_at_the_end_is_lost() -> None:
    # SYM starts with "S": each SYM is its own chunk, so 1 of 2 chunks right each way
    assert xtreme_pos_f1([["SYM", "SYM"]], [["SYM", "NOUN"]]) == 50.0
    # X has the type "_" of the separating "O": a sentence-final X run is never closed
    assert get_chunks([["NOUN", "X"]]) == [("OUN", 0, 0)]
    assert xtreme_pos_f1([["X"]], [["X"]]) == 0.0
    assert token_accuracy([["X"]], [["X"]]) == 100.0
    assert get_chunks([["NOUN", "X"]], seqeval_version="0.0.12") == [("NOUN", 0, 0), ("X", 1, 1)]


@pytest.mark.parametrize("seed", range(30))
def test_xtreme_pos_f1_matches_seqeval_on_random_upos(seed: int) -> None:
    rng = random.Random(1000 + seed)
    # few distinct tags so that runs, CCONJ/SCONJ pairs and X happen often
    tags = [*rng.sample(UPOS, k=rng.randint(2, 6)), "CCONJ", "SCONJ", "X"]
    gold, pred = [], []
    for _ in range(rng.randint(1, 10)):
        n = rng.randint(1, 15)
        gold.append([rng.choice(tags) for _ in range(n)])
        pred.append([g if rng.random() < 0.7 else rng.choice(tags) for g in gold[-1]])
    assert xtreme_pos_f1(gold, pred) == pytest.approx(_seqeval(gold, pred)[2])


# ------------------------------------------------------------------ accuracy, parsing


def test_accuracies() -> None:
    assert accuracy(["a", "b", "c", "a"], ["a", "b", "a", "a"]) == 75.0
    assert token_accuracy([["A", "B"], ["C"]], [["A", "C"], ["C"]]) == pytest.approx(200 / 3)
    with pytest.raises(ValueError, match="no examples"):
        accuracy([], [])
    with pytest.raises(ValueError, match="2 gold labels but 1"):
        accuracy([1, 2], [1])


def test_attachment_scores_hand_computed() -> None:
    gold_heads, gold_rels = [[2, 0, 2]], [["nsubj", "root", "punct"]]
    pred_heads, pred_rels = [[2, 0, 1]], [["nsubj:pass", "root", "punct"]]
    upos = [["PRON", "VERB", "PUNCT"]]
    # default: all words, subtypes stripped: word 3 has the wrong head
    out = attachment_scores(gold_heads, gold_rels, pred_heads, pred_rels)
    assert (out["uas"], out["las"], out["count"]) == pytest.approx((200 / 3, 200 / 3, 3))
    out = attachment_scores(gold_heads, gold_rels, pred_heads, pred_rels, strip_subtypes=False)
    assert out["las"] == pytest.approx(100 / 3)
    out = attachment_scores(
        gold_heads, gold_rels, pred_heads, pred_rels, exclude_punct=True, upos=upos
    )
    assert (out["uas"], out["las"], out["count"], out["excluded"]) == (100.0, 100.0, 2, 1)
    with pytest.raises(ValueError, match="UPOS"):
        attachment_scores(gold_heads, gold_rels, pred_heads, pred_rels, exclude_punct=True)
