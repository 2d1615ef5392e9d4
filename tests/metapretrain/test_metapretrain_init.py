"""Initialising a cross-lingual model from a monolingual one: 004 Table 5's variants."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from xlalign.core.io import read_json
from xlalign.encoders.scratch import (
    ScratchArch,
    fresh_masked_lm,
    init_encoder,
    save_checkpoint,
    train_tokenizer,
)
from xlalign.metapretrain.init import RECORD, initialise_cross_lingual, variant_name
from xlalign.metapretrain.vocab_match import match_vocabularies

TINY = ScratchArch(layers=2, hidden=16, heads=2, intermediate=32, max_position=32)
EN = ["The house is big.", "The dog sleeps in the house.", "A big dog and a small cat."] * 3
DE = ["Das Haus ist groß.", "Der Hund schläft im Haus.", "Ein großer Hund und eine Katze."] * 3
VOCAB = ("bert.embeddings.word_embeddings.weight", "cls.predictions.bias")


def _load(path: Path) -> tuple[Any, Any]:
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    return (
        AutoModelForMaskedLM.from_pretrained(str(path), local_files_only=True),
        AutoTokenizer.from_pretrained(str(path), local_files_only=True),
    )


@pytest.fixture(scope="module")
def mono_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny English model whose every weight was moved off its initial value (as
    training would), so that copied and fresh weights are told apart."""
    root = tmp_path_factory.mktemp("mono")
    init_encoder(train_tokenizer(EN, vocab_size=60), root / "init", arch=TINY, seed=1)
    model, tok = _load(root / "init")
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=gen))
    return save_checkpoint(model, tok, root / "mono")


@pytest.fixture(scope="module")
def cross_tok() -> Any:
    return train_tokenizer(EN + DE, vocab_size=90)


@pytest.mark.parametrize(
    ("body", "emb", "name"),
    [(False, False, "none"), (True, False, "body"), (False, True, "emb"), (True, True, "both")],
)
def test_variants(
    mono_dir: Path, cross_tok: Any, tmp_path: Path, body: bool, emb: bool, name: str
) -> None:
    record = initialise_cross_lingual(
        mono_dir, cross_tok, tmp_path / "x", body=body, embeddings=emb, seed=7
    )
    mono, mono_tok = _load(mono_dir)
    cross, tok = _load(tmp_path / "x")
    assert tok.get_vocab() == cross_tok.get_vocab() and cross.config.vocab_size == len(tok)
    assert cross.config.hidden_size == 16 and cross.config.num_hidden_layers == 2
    # the fresh draw the non-copied weights must equal
    fresh = fresh_masked_lm(cross.config, seed=7).state_dict()
    ms, cs = mono.state_dict(), cross.state_dict()
    assert cs["cls.predictions.decoder.weight"].data_ptr() == cs[VOCAB[0]].data_ptr()  # tied
    body_names = [k for k in cs if k not in VOCAB and not k.startswith("cls.predictions.decoder")]
    assert "bert.encoder.layer.1.output.dense.weight" in body_names
    assert "bert.embeddings.position_embeddings.weight" in body_names
    assert "cls.predictions.transform.dense.weight" in body_names
    for k in body_names:
        if not cs[k].is_floating_point():
            continue
        if body:
            assert torch.equal(cs[k], ms[k]), k
        else:
            assert torch.equal(cs[k], fresh[k]), k
            assert not torch.equal(cs[k], ms[k]), k
    match = match_vocabularies(tok.get_vocab(), mono_tok.get_vocab())
    pairs = match.pairs()
    assert len(pairs) > 10  # English pieces and the specials
    assert match.rules[tok.convert_tokens_to_ids("house")] == "exact"
    matched = {c for c, _ in pairs}
    unmatched = [i for i in range(len(tok)) if i not in matched]
    assert unmatched  # German pieces
    for k in VOCAB:
        for c, m in pairs:
            if emb:
                assert torch.equal(cs[k][c], ms[k][m]), (k, c)
            else:
                assert torch.equal(cs[k][c], fresh[k][c]), (k, c)
        assert torch.equal(cs[k][unmatched], fresh[k][unmatched]), k
    assert record == read_json(tmp_path / "x" / RECORD)
    assert record["variant"] == name
    assert record["rows_initialised"] == (len(pairs) if emb else 0)
    assert record["vocabulary_match"] == match.counts()
    counts = record["counts"]
    assert counts["total"] == len(tok)
    assert counts["fresh"] == (len(tok) - len(pairs) if emb else len(tok))
    assert record["body_params_copied"] == (len(record["body_params"]) if body else 0)
    if body:
        assert set(record["body_params"]) == set(body_names)
        assert record["body_values_copied"] == sum(cs[k].numel() for k in body_names)


def test_dictionaries_add_rows(mono_dir: Path, cross_tok: Any, tmp_path: Path) -> None:
    dicts = {"de": {"haus": ["house"], "hund": ["dog"]}}
    plain = initialise_cross_lingual(
        mono_dir, cross_tok, tmp_path / "a", body=True, embeddings=True, seed=7
    )
    more = initialise_cross_lingual(
        mono_dir, cross_tok, tmp_path / "b", body=True, embeddings=True, dictionaries=dicts, seed=7
    )
    assert more["variant"] == "both+dict" and more["dictionaries"] == ["de"]
    found = sum(p in cross_tok.get_vocab() for p in ("Haus", "Hund"))
    assert found >= 1
    assert more["counts"]["dictionary"] == found
    assert more["rows_initialised"] == plain["rows_initialised"] + found
    mono, mono_tok = _load(mono_dir)
    cross, _ = _load(tmp_path / "b")
    row = cross.bert.embeddings.word_embeddings.weight[cross_tok.convert_tokens_to_ids("Haus")]
    want = mono.bert.embeddings.word_embeddings.weight[mono_tok.convert_tokens_to_ids("house")]
    assert torch.equal(row, want)


def test_variant_names() -> None:
    assert variant_name(body=False, embeddings=False) == "none"
    assert variant_name(body=True, embeddings=True, dictionaries=True) == "both+dict"
    assert variant_name(body=True, embeddings=False, dictionaries=True) == "body"


def test_initialised_checkpoint_trains_without_head_warmup(
    mono_dir: Path, cross_tok: Any, tmp_path: Path
) -> None:
    from xlalign.pretrain.heads import load_masked_lm

    initialise_cross_lingual(mono_dir, cross_tok, tmp_path / "x", body=True, embeddings=True,
                             seed=7)  # fmt: skip
    _, info = load_masked_lm(tmp_path / "x", seed=0)
    assert info.head == "pretrained" and info.missing_keys == []
