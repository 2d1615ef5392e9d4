"""Word-level contextual vectors: truncated encoder, pooling, truncation, length batching.

Everything runs on a tiny random BERT with a hand-written WordPiece vocabulary, built
on the spot (tests/tiny_encoder.py, shared with the teacher and aggregation tests), so the
tests need neither the real encoder nor a network.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_encoder import TINY_DIM, make_fixed_vocab_encoder, reference_vectors

from xlalign.core.errors import ConfigError, InputError
from xlalign.encoders.contextual import (
    WordVectorStats,
    load_truncated_encoder,
    running_layers,
    sentence_token_means,
    tokenize_alone,
    untokenizable,
    word_vectors,
)

#: Words of the tiny vocabulary, for random sentences (some split into several subwords).
SENTENCE_WORDS = [
    "the", "cat", "cats", "dog", "dogs", "sat", "on", "mat", "a", "big", "small", "red",
    "sun", "moon", "running", "ran", "and", "unbelievable", ".", ",", "zebra",
]  # fmt: skip


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_fixed_vocab_encoder(tmp_path_factory.mktemp("enc") / "tiny-bert")


def _full_hidden(encoder_dir: Path, input_ids: list[int], layer: int) -> np.ndarray:
    from transformers import AutoModel

    model = AutoModel.from_pretrained(encoder_dir, local_files_only=True).eval()
    with torch.inference_mode():
        out = model(input_ids=torch.tensor([input_ids]), output_hidden_states=True)
    return out.hidden_states[layer][0].numpy()


@pytest.mark.parametrize("layer", [1, 2, 3])
def test_truncated_encoder_equals_hidden_states_of_full_model(tiny: Path, layer: int) -> None:
    tok, model = load_truncated_encoder(tiny, layer, threads=1)
    assert len(model.encoder.layer) == layer
    assert model.config.num_hidden_layers == layer
    assert not model.training
    ids = tok(["the big cats sat on a red mat ."])["input_ids"][0]
    with torch.inference_mode():
        ours = model(input_ids=torch.tensor([ids])).last_hidden_state[0].numpy()
    np.testing.assert_allclose(ours, _full_hidden(tiny, ids, layer), rtol=1e-5, atol=1e-5)
    assert next(model.parameters()).dtype == torch.float32


@pytest.mark.parametrize("layer", [1, 2])
def test_running_layers_gives_hidden_states_of_full_model_with_gradients(
    tiny: Path, layer: int
) -> None:
    from transformers import AutoModel

    model = AutoModel.from_pretrained(tiny, local_files_only=True)
    model.train(False)
    stack = model.encoder.layer
    ids = torch.tensor([[2, 5, 6, 7, 3], [2, 8, 9, 3, 0]])
    mask = (ids != 0).long()
    full = model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states
    with running_layers(model, layer) as shortened:
        assert shortened and len(model.encoder.layer) == layer
        short = model(input_ids=ids, attention_mask=mask).last_hidden_state
    assert model.encoder.layer is stack and len(stack) == 3  # restored, same modules
    torch.testing.assert_close(short, full[layer], rtol=1e-5, atol=1e-5)
    short.sum().backward()  # gradients reach the shared layers, none the unused ones
    assert stack[layer - 1].output.dense.weight.grad is not None
    assert all(p.grad is None for p in stack[layer].parameters())


def test_running_layers_leaves_last_layer_and_other_stacks_alone(tiny: Path) -> None:
    from transformers import AutoModel

    model = AutoModel.from_pretrained(tiny, local_files_only=True)
    with running_layers(model, 3) as shortened:
        assert not shortened and len(model.encoder.layer) == 3
    model.config.model_type = "t5"  # a stack without a truncated forward known to be exact
    with running_layers(model, 1) as shortened:
        assert not shortened and len(model.encoder.layer) == 3


def test_load_errors_name_path_and_layer(tiny: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-encoder"
    with pytest.raises(InputError, match="no-such-encoder"):
        load_truncated_encoder(missing, 1)
    with pytest.raises(ConfigError, match=r"layer 4 .*1\.\.3.* 3 layers"):
        load_truncated_encoder(tiny, 4)
    with pytest.raises(ConfigError, match="layer 0"):
        load_truncated_encoder(tiny, 0)


# hand-checked WordPiece split of this sentence:
# [CLS] the cat ##s sat un ##believ ##able [UNK] [SEP]
#   0    1   2   3   4   5     6      7      8     9
SPLIT_SENTENCE = ["The", "cats", "sat", "unbelievable", "zebra"]
SPLIT_TOKENS = {0: [1], 1: [2, 3], 2: [4], 3: [5, 6, 7], 4: [8]}


@pytest.mark.parametrize("pooling", ["mean", "first", "last"])
def test_pooling_on_hand_checked_subword_splits(tiny: Path, pooling: str) -> None:
    tok, model = load_truncated_encoder(tiny, 2)
    ids = tok([SPLIT_SENTENCE], is_split_into_words=True)["input_ids"][0]
    assert tok.convert_ids_to_tokens(ids) == [
        "[CLS]", "the", "cat", "##s", "sat", "un", "##believ", "##able", "[UNK]", "[SEP]",
    ]  # fmt: skip
    hidden = _full_hidden(tiny, ids, 2)
    (vec,) = word_vectors([SPLIT_SENTENCE], tok, model, pooling=pooling)
    assert vec.dtype == np.float32 and vec.shape == (5, TINY_DIM)
    for j, rows in SPLIT_TOKENS.items():
        pick = {"mean": rows, "first": rows[:1], "last": rows[-1:]}[pooling]
        np.testing.assert_allclose(vec[j], hidden[pick].mean(axis=0), rtol=1e-5, atol=1e-5)
    if pooling != "mean":  # multi-subword words really differ between first and last
        other = "last" if pooling == "first" else "first"
        (vec2,) = word_vectors([SPLIT_SENTENCE], tok, model, pooling=other)
        assert not np.allclose(vec[3], vec2[3])
        np.testing.assert_allclose(vec[0], vec2[0], atol=1e-6)


def test_word_mapped_to_no_subword_gets_nan_row_and_is_reported(tiny: Path) -> None:
    tok, model = load_truncated_encoder(tiny, 2)
    stats = WordVectorStats()
    (vec,) = word_vectors([["the", "\x07", "cats"]], tok, model, stats=stats)
    assert np.isnan(vec[1]).all()
    assert np.isfinite(vec[[0, 2]]).all()
    assert stats.empty_words == 1 and stats.words == 3
    # the other words' vectors are those of the sentence without the empty word
    np.testing.assert_allclose(vec[[0, 2]], reference_vectors(tiny, ["the", "cats"], 2), atol=1e-5)
    counts = tokenize_alone(["cats", "unbelievable", "\x07", "zebra", "cats"], tok)
    assert counts == {"cats": 2, "unbelievable": 3, "\x07": 0, "zebra": 1}
    assert untokenizable(["the", "\x07", "mat"], tok) == ["\x07"]


def test_truncation_drops_cut_words_and_keeps_the_rest(tiny: Path) -> None:
    tok, model = load_truncated_encoder(tiny, 3)
    words = ["the", "cats", "sat", "unbelievable", "mat"]
    # [CLS] the cat ##s sat un | ##believ ##able mat [SEP]: 7 tokens keep 5 subwords
    stats = WordVectorStats()
    (vec,) = word_vectors([words], tok, model, max_length=7, stats=stats)
    assert np.isfinite(vec[:3]).all()
    assert np.isnan(vec[3:]).all()  # 'unbelievable' is partly cut: no vector either
    assert (stats.truncated_sentences, stats.truncated_words) == (1, 2)
    cut_ids = tok.convert_tokens_to_ids(["[CLS]", "the", "cat", "##s", "sat", "un", "[SEP]"])
    hidden = _full_hidden(tiny, cut_ids, 3)
    expected = np.stack([hidden[1], hidden[2:4].mean(0), hidden[4]])
    np.testing.assert_allclose(vec[:3], expected, rtol=1e-5, atol=1e-5)
    # an untruncated sentence is not reported
    stats2 = WordVectorStats()
    list(word_vectors([words], tok, model, max_length=64, stats=stats2))
    assert stats2.truncated_sentences == 0 and stats2.truncated_words == 0


def _random_sentences(n: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    return [rng.choices(SENTENCE_WORDS, k=rng.choice([0, 1, 2, 5, 9, 17, 30])) for _ in range(n)]


def test_length_batching_restores_order_and_batch_size_does_not_matter(tiny: Path) -> None:
    tok, model = load_truncated_encoder(tiny, 2)
    sentences = _random_sentences(40, seed=3)
    big = list(word_vectors(sentences, tok, model, batch_tokens=8192))
    small = list(word_vectors(sentences, tok, model, batch_tokens=40))
    alone = [next(word_vectors([s], tok, model)) for s in sentences]
    assert len(big) == len(small) == len(sentences)
    for s, a, b, c in zip(sentences, big, small, alone, strict=True):
        assert a.shape == (len(s), TINY_DIM)
        np.testing.assert_allclose(a, c, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(b, c, rtol=1e-4, atol=1e-5)
    # against the full model, for a few sentences with words
    for i in [i for i, s in enumerate(sentences) if s][:3]:
        ref = reference_vectors(tiny, sentences[i], 2)
        np.testing.assert_allclose(big[i], ref, rtol=1e-4, atol=1e-5)


def test_sentence_token_means_average_every_token_special_ones_included(tiny: Path) -> None:
    """X2Static's public context: the mean over all subword positions of the sentence,
    [CLS] and [SEP] included, whatever the padding of the batch it was run in."""
    tok, model = load_truncated_encoder(tiny, 2)
    sentences = _random_sentences(40, seed=5)
    big = list(sentence_token_means(sentences, tok, model, batch_tokens=8192))
    small = list(sentence_token_means(sentences, tok, model, batch_tokens=40))
    assert len(big) == len(small) == len(sentences)
    for words, a, b in zip(sentences, big, small, strict=True):
        assert a.shape == (TINY_DIM,) and a.dtype == np.float32
        if not words:
            assert np.isnan(a).all() and np.isnan(b).all()
            continue
        ids = tok([words], is_split_into_words=True)["input_ids"][0]
        assert ids[0] == tok.cls_token_id and ids[-1] == tok.sep_token_id
        # one sentence alone, no padding: the plain mean over all its positions
        expected = _full_hidden(tiny, ids, 2).mean(axis=0)
        np.testing.assert_allclose(a, expected, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(b, expected, rtol=1e-4, atol=1e-5)
    # not the mean of the word vectors: special tokens count, and a word counts per subword
    words = ["unbelievable", "cats"]
    (mean,) = sentence_token_means([words], tok, model)
    assert not np.allclose(mean, reference_vectors(tiny, words, 2).mean(axis=0), atol=1e-3)


def test_sentence_token_means_keep_the_special_tokens_when_cutting(tiny: Path) -> None:
    tok, model = load_truncated_encoder(tiny, 3)
    words = ["the", "big", "unbelievable", "cats", "ran", "on", "the", "mat"]
    stats = WordVectorStats()
    (mean,) = sentence_token_means([words], tok, model, max_length=6, stats=stats)
    ids = tok([words], is_split_into_words=True)["input_ids"][0]
    kept = ids[:5] + ids[-1:]  # as the public code: the first MAX_LEN - 1 tokens, then [SEP]
    np.testing.assert_allclose(mean, _full_hidden(tiny, kept, 3).mean(axis=0), atol=1e-5)
    assert stats.truncated_sentences == 1


def test_word_vectors_rejects_bad_options(tiny: Path) -> None:
    tok, model = load_truncated_encoder(tiny, 1)
    with pytest.raises(ConfigError, match="pooling"):
        list(word_vectors([["the"]], tok, model, pooling="max"))
    with pytest.raises(ConfigError, match="max_length"):
        list(word_vectors([["the"]], tok, model, max_length=2))
    with pytest.raises(ConfigError, match="max_length"):
        list(sentence_token_means([["the"]], tok, model, max_length=2))


def test_max_length_is_capped_at_the_encoders_limit(tiny: Path) -> None:
    tok, model = load_truncated_encoder(tiny, 1)
    words = ["the"] * 70  # 72 subwords with [CLS] and [SEP]; the tiny encoder takes 64
    stats = WordVectorStats()
    (vec,) = word_vectors([words], tok, model, max_length=500, stats=stats)
    assert np.isfinite(vec[:62]).all() and np.isnan(vec[62:]).all()
    assert stats.truncated_words == 8
