"""From-scratch encoders: the WordPiece vocabulary, the tokenizer and the checkpoint."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from xlalign.core.errors import ConfigError
from xlalign.encoders.scratch import (
    SPECIAL_TOKENS,
    ScratchArch,
    build_scratch_encoder,
    init_encoder,
    learn_wordpiece,
    train_tokenizer,
)

TINY = ScratchArch(layers=2, hidden=16, heads=2, intermediate=32, max_position=32)
TEXTS = [
    "The cat sat on the mat.",
    "Dogs, cats and mice ran!",
    "The dog sat on a log.",
    "A cat, a dog and the mice.",
] * 4


def test_learn_wordpiece_merges_by_count_and_breaks_ties_by_string() -> None:
    # words: "aab" x3, "ab" x2, "b" x1
    # alphabet: a, b, ##a, ##b ; pairs: (a,##a) 3, (##a,##b) 3, (a,##b) 2
    # merge 1: tie 3/3 -> smallest ("##a","##b") < ("a","##a") -> "##ab"; "aab" = a ##ab
    # pairs now: (a,##ab) 3, (a,##b) 2 -> merge 2: "aab"; then (a,##b) 2 -> "ab"
    vocab = learn_wordpiece({"aab": 3, "ab": 2, "b": 1}, vocab_size=20, min_frequency=2)
    assert vocab == [*SPECIAL_TOKENS, "##a", "##b", "a", "b", "##ab", "aab", "ab"]
    # min_frequency 3 stops before the pair seen twice
    assert learn_wordpiece({"aab": 3, "ab": 2, "b": 1}, vocab_size=20, min_frequency=3)[-1] == "aab"
    # vocab_size caps the merges
    assert len(learn_wordpiece({"aab": 3, "ab": 2, "b": 1}, vocab_size=10)) == 10


def test_learn_wordpiece_drops_rarest_symbols_when_the_alphabet_does_not_fit() -> None:
    vocab = learn_wordpiece({"aa": 5, "b": 2, "c": 1}, vocab_size=8)
    # symbols a (5), ##a (5), b (2), c (1): c does not fit
    assert vocab == [*SPECIAL_TOKENS, "##a", "a", "b"]


def test_tokenizer_is_deterministic_with_bert_specials_and_templates() -> None:
    tok = train_tokenizer(TEXTS, vocab_size=60)
    again = train_tokenizer(TEXTS, vocab_size=60)
    assert tok.get_vocab() == again.get_vocab()
    assert [tok.convert_tokens_to_ids(s) for s in SPECIAL_TOKENS] == [0, 1, 2, 3, 4]
    assert (tok.pad_token_id, tok.mask_token_id, tok.unk_token_id) == (0, 4, 1)
    ids = tok("The cat")["input_ids"]
    assert ids[0] == 2 and ids[-1] == 3
    pair = tok("cat", "dog")
    assert pair["input_ids"][0] == 2 and pair["input_ids"].count(3) == 2
    assert pair["token_type_ids"][-1] == 1 and pair["token_type_ids"][0] == 0
    # bert: punctuation split off, NFKC folds full-width letters, CJK ideographs one each
    assert tok.tokenize("cat,") == ["cat", ","]
    assert tok.tokenize("ｃａｔ") == ["cat"]
    assert train_tokenizer(["猫犬 猫犬"], vocab_size=20).tokenize("猫犬") == ["猫", "犬"]


def test_whitespace_tokenizer_keeps_punctuation_attached_and_case() -> None:
    tok = train_tokenizer(TEXTS, vocab_size=200, pre_tokenizer="whitespace", min_frequency=1)
    assert "mat." in tok.get_vocab()  # a word with its full stop, learnt whole
    assert tok.tokenize("mat.") == ["mat."]
    assert "The" in tok.get_vocab() and tok.tokenize("The") == ["The"]
    assert tok.tokenize("cat,") != ["cat", ","]
    with pytest.raises(ConfigError, match="lowercase"):
        train_tokenizer(TEXTS, vocab_size=60, pre_tokenizer="whitespace", lowercase=True)


def test_arch_check_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"arch\.hidden"):
        ScratchArch(hidden=10, heads=3).check()
    with pytest.raises(ConfigError, match=r"arch\.layers"):
        ScratchArch(layers=0).check()
    with pytest.raises(ConfigError, match="vocab_size"):
        train_tokenizer(TEXTS, vocab_size=5)


def test_encoder_round_trip(tmp_path: Path) -> None:
    from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer

    from xlalign.pretrain.heads import load_masked_lm

    out = build_scratch_encoder(TEXTS, tmp_path / "enc", vocab_size=60, arch=TINY, seed=3)
    assert out == tmp_path / "enc" and (out / "config.json").is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["enc"]  # no temporary left
    tok = AutoTokenizer.from_pretrained(str(out), local_files_only=True)
    model = AutoModelForMaskedLM.from_pretrained(str(out), local_files_only=True)
    assert tok.model_max_length == 32 and len(tok) == model.config.vocab_size
    assert model.config.hidden_size == 16 and model.config.num_hidden_layers == 2
    batch = tok(["The cat sat", "dog"], padding=True, return_tensors="pt")
    with torch.no_grad():
        logits = model(**batch).logits
    assert logits.shape == (2, batch["input_ids"].shape[1], len(tok))
    assert torch.isfinite(logits).all()
    # the checkpoint has its own tied MLM head: no head warm-up
    _, info = load_masked_lm(out, seed=0)
    assert info.head == "pretrained" and info.tied and info.missing_keys == []
    assert type(AutoModel.from_pretrained(str(out), local_files_only=True)).__name__ == "BertModel"
    # same seed, same weights; another seed, other weights
    tok2 = train_tokenizer(TEXTS, vocab_size=60)
    same = init_encoder(tok2, tmp_path / "same", arch=TINY, seed=3)
    other = init_encoder(tok2, tmp_path / "other", arch=TINY, seed=4)
    w = {
        p: AutoModelForMaskedLM.from_pretrained(
            str(p), local_files_only=True
        ).bert.embeddings.word_embeddings.weight
        for p in (out, same, other)
    }
    assert torch.equal(w[out], w[same]) and not torch.equal(w[out], w[other])
