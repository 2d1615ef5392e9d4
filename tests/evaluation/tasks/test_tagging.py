"""Token classification: chunking at word boundaries, first-subword labels, decoding
across chunks, NER/POS scores, unseen and malformed tags (tiny fixed-vocabulary BERT)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tiny_encoder import TINY_VOCAB, make_fixed_vocab_encoder

from xlalign.core.errors import ConfigError, InputError
from xlalign.evaluation.tasks.base import TaskParams
from xlalign.evaluation.tasks.data import TaggedSentence
from xlalign.evaluation.tasks.tagging import TaggingTask, chunk_words, special_tokens

ID = {w: i for i, w in enumerate(TINY_VOCAB)}
CLS, SEP, PAD = ID["[CLS]"], ID["[SEP]"], ID["[PAD]"]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory):
    from transformers import AutoTokenizer

    path = make_fixed_vocab_encoder(tmp_path_factory.mktemp("enc") / "fixed")
    return AutoTokenizer.from_pretrained(str(path))


def test_chunk_words_packs_greedily_at_word_boundaries() -> None:
    assert chunk_words([2, 3, 1, 4], 5) == [(0, 2), (2, 4)]
    assert chunk_words([1, 1, 1], 5) == [(0, 3)]
    assert chunk_words([7, 1], 5) == [(0, 1), (1, 2)]  # an over-long word stands alone
    assert chunk_words([1, 7], 5) == [(0, 1), (1, 2)]
    assert chunk_words([], 5) == []
    with pytest.raises(ValueError):
        chunk_words([1], 0)


def test_special_tokens_of_a_bert_tokenizer(tokenizer) -> None:
    assert special_tokens(tokenizer) == ([CLS], [SEP])


SENT = TaggedSentence(
    "s1",
    ["the", "unbelievable", "cat", "sat", "on", "the", "mat"],
    ["DET", "ADJ", "NOUN", "VERB", "ADP", "DET", "NOUN"],
)
LABELS = ["ADJ", "ADP", "DET", "NOUN", "VERB"]


def test_long_sentence_is_split_into_chunks_covering_every_word_once(tokenizer) -> None:
    task = TaggingTask("pos")
    # window 6 = [CLS] + 4 subwords + [SEP]; "unbelievable" is un ##believ ##able
    enc = task.encode([SENT], tokenizer, LABELS, TaskParams(max_length=6), split="train")
    ids = [f["input_ids"] for f in enc.features]
    un, believ, able = ID["un"], ID["##believ"], ID["##able"]
    assert ids == [
        [CLS, ID["the"], un, believ, able, SEP],
        [CLS, ID["cat"], ID["sat"], ID["on"], ID["the"], SEP],
        [CLS, ID["mat"], SEP],
    ]
    lab = {name: LABELS.index(name) for name in LABELS}
    assert [f["labels"] for f in enc.features] == [
        [-100, lab["DET"], lab["ADJ"], -100, -100, -100],  # label on the first subword only
        [-100, lab["NOUN"], lab["VERB"], lab["ADP"], lab["DET"], -100],
        [-100, lab["NOUN"], -100],
    ]
    assert enc.feature_example == [0, 0, 0]
    assert enc.extra["words"] == [(0, 2), (2, 6), (6, 7)]
    assert enc.extra["positions"] == [[1, 2], [1, 2, 3, 4], [1]]
    covered = [w for s, e in enc.extra["words"] for w in range(s, e)]
    assert covered == list(range(len(SENT.tokens)))
    assert enc.counts["sentences_split"] == 1 and enc.counts["extra_chunks"] == 2
    assert "words_over_window" not in enc.counts
    # A window that fits the sentence gives one feature, nothing counted.
    one = task.encode([SENT], tokenizer, LABELS, TaskParams(max_length=32), split="train")
    assert len(one.features) == 1 and "sentences_split" not in one.counts
    # the same ids as the tokenizer gives the whole sentence
    whole = tokenizer(SENT.tokens, is_split_into_words=True)["input_ids"]
    assert one.features[0]["input_ids"] == whole and len(whole) == 9 + 2


def test_a_word_longer_than_the_window_is_cut_and_counted(tokenizer) -> None:
    task = TaggingTask("pos")
    sent = TaggedSentence("s", ["unbelievable", "cat"], ["ADJ", "NOUN"])
    enc = task.encode([sent], tokenizer, LABELS, TaskParams(max_length=4), split="test")
    assert [f["input_ids"] for f in enc.features] == [
        [CLS, ID["un"], ID["##believ"], SEP],
        [CLS, ID["cat"], SEP],
    ]
    assert enc.features[0]["labels"] == [-100, LABELS.index("ADJ"), -100, -100]
    assert enc.counts["words_over_window"] == 1
    with pytest.raises(ConfigError, match="no room"):
        task.encode([sent], tokenizer, LABELS, TaskParams(max_length=2), split="test")


def test_a_word_without_subwords_gets_the_unknown_token(tokenizer) -> None:
    task = TaggingTask("pos")
    sent = TaggedSentence("s", ["the", "\u200b", "cat"], ["DET", "X", "NOUN"])
    enc = task.encode([sent], tokenizer, LABELS, TaskParams(max_length=16), split="test")
    assert enc.features[0]["input_ids"] == [CLS, ID["the"], ID["[UNK]"], ID["cat"], SEP]
    assert enc.counts["words_without_subwords"] == 1
    # X never occurred in training: ignored by the loss, counted
    assert enc.features[0]["labels"][2] == -100
    assert enc.counts["unseen_label_words"] == 1 and enc.counts["unseen_label_words[X]"] == 1


def _logits_for(enc, labels_per_feature: list[list[str]], width: int) -> np.ndarray:
    """Logits as the Trainer hands them over: one row per feature, padded with -100;
    the wanted label wins at each first subword, noise elsewhere."""
    rng = np.random.default_rng(0)
    out = np.full((len(enc.features), width, len(LABELS)), -100.0, dtype=np.float32)
    for f, feat in enumerate(enc.features):
        n = len(feat["input_ids"])
        out[f, :n] = rng.normal(size=(n, len(LABELS)))
        for q, tag in zip(enc.extra["positions"][f], labels_per_feature[f], strict=True):
            out[f, q, LABELS.index(tag)] = 10.0
    return out


def test_decode_reassembles_words_across_chunks(tokenizer) -> None:
    task = TaggingTask("pos")
    other = TaggedSentence("s2", ["a", "dog"], ["DET", "NOUN"])
    enc = task.encode([SENT, other], tokenizer, LABELS, TaskParams(max_length=6), split="dev")
    assert enc.feature_example == [0, 0, 0, 1]
    wanted = [["DET", "ADJ"], ["VERB", "VERB", "ADP", "NOUN"], ["ADJ"], ["NOUN", "NOUN"]]
    preds = task.decode(
        (_logits_for(enc, wanted, width=9),), enc, [SENT, other], LABELS, TaskParams()
    )
    assert preds == [
        {
            "id": "s1",
            "prediction": ["DET", "ADJ", "VERB", "VERB", "ADP", "NOUN", "ADJ"],
            "gold": SENT.tags,
        },
        {"id": "s2", "prediction": ["NOUN", "NOUN"], "gold": ["DET", "NOUN"]},
    ]
    with pytest.raises(ValueError, match="shape"):
        task.decode((np.zeros((3, 9, 5)),), enc, [SENT, other], LABELS, TaskParams())


def test_pos_scores_report_xtreme_f1_and_token_accuracy() -> None:
    task = TaggingTask("pos")
    recs = [TaggedSentence("a", ["x", "y", "z"], ["NOUN", "NOUN", "VERB"])]
    preds = [{"id": "a", "prediction": ["NOUN", "NOUN", "NOUN"], "gold": recs[0].tags}]
    s = task.score(preds, recs, lang="xx")
    # two of three words right; seqeval's chunks: gold (NOUN NOUN)(VERB), predicted
    # (NOUN NOUN NOUN): no chunk matches, so XTREME's "F1" is 0
    assert s["accuracy"] == pytest.approx(200 / 3)
    assert s["f1"] == 0.0
    assert s["sentences"] == 1 and s["words"] == 3
    assert task.selection_metric == "f1"


def test_ner_scores_are_span_f1_and_unseen_types_count_as_wrong(tokenizer) -> None:
    task = TaggingTask("ner")
    train = [TaggedSentence("t", ["the", "big", "cat"], ["O", "B-PER", "I-PER"])]
    labels = task.label_list(train)
    assert labels == ["B-PER", "I-PER", "O"]
    test = [TaggedSentence("a", ["the", "cat", "sat", "on", "mat"],
                           ["B-PER", "I-PER", "O", "O", "B-MISC"])]  # fmt: skip
    enc = task.encode(test, tokenizer, labels, TaskParams(max_length=16), split="test")
    assert enc.counts["unseen_label_words"] == 1
    assert enc.counts["unseen_label_words[B-MISC]"] == 1
    preds = [{"id": "a", "prediction": ["B-PER", "I-PER", "O", "O", "O"], "gold": test[0].tags}]
    s = task.score(preds, test, lang="xx")
    # one of two gold entities found, no false positive
    assert (s["precision"], s["recall"]) == (100.0, 50.0)
    assert s["f1"] == pytest.approx(200 / 3)
    assert s["per_type"]["MISC"]["recall"] == 0.0


def test_ner_tags_must_be_iob2() -> None:
    task = TaggingTask("ner")
    with pytest.raises(InputError, match=r"'bad'.*'B_PER'"):
        task.label_list([TaggedSentence("bad", ["a"], ["B_PER"])])
    with pytest.raises(ConfigError):
        TaggingTask("chunk")


def test_collate_pads_to_the_longest_feature(tokenizer) -> None:
    task = TaggingTask("pos")
    enc = task.encode([SENT], tokenizer, LABELS, TaskParams(max_length=6), split="train")
    batch = task.collate(tokenizer)(enc.features[1:])
    assert batch["input_ids"].shape == (2, 6)
    assert batch["input_ids"][1].tolist() == [CLS, ID["mat"], SEP, PAD, PAD, PAD]
    assert batch["attention_mask"][1].tolist() == [1, 1, 1, 0, 0, 0]
    assert batch["labels"][1].tolist()[3:] == [-100, -100, -100]


def test_build_model_has_one_output_per_label(tmp_path: Path) -> None:
    model = TaggingTask("pos").build_model(make_fixed_vocab_encoder(tmp_path / "e"), LABELS)
    assert model.config.num_labels == 5 and model.config.id2label[3] == "NOUN"
