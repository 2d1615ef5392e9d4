"""UDPipe: a real model trained from the turkish-treebanks package, and the model table."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlalign.core.errors import InputError, ToolError
from xlalign.corpus.segment import UDPipeSegmenter, make_segmenter
from xlalign.corpus.udpipe import (
    UD25_BASE_URL,
    model_filename,
    model_url,
    read_conllu_blocks,
    train_udpipe_model,
    turkish_treebank_blocks,
    turkish_treebank_path,
)

TURKISH = (
    "Ankara Türkiye'nin başkentidir ve ülkenin en kalabalık ikinci şehridir. "
    "Şehirde birçok üniversite ve müze bulunmaktadır."
)


@pytest.fixture(scope="session")
def tr_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small but complete UDPipe model (tokenizer, tagger, parser), ~15 s to train."""
    blocks = turkish_treebank_blocks(400)
    out = tmp_path_factory.mktemp("udpipe") / "tr-test.udpipe"
    return train_udpipe_model(blocks, out)


def test_read_conllu_blocks_stops_at_max(tmp_path: Path) -> None:
    blocks = read_conllu_blocks(turkish_treebank_path("wiki"), max_sentences=5)
    assert len(blocks) == 5
    assert all(b.startswith("#") and "\n1\t" in b for b in blocks)
    assert all(not b.endswith("\n") for b in blocks)


def test_turkish_blocks_use_ud_v2_tags() -> None:
    raw = read_conllu_blocks(turkish_treebank_path("wiki"), max_sentences=200)
    fixed = turkish_treebank_blocks(200)
    assert len(fixed) == len(raw) == 200

    def upos(blocks: list[str]) -> set[str]:
        return {c[3] for b in blocks for ln in b.split("\n") if len(c := ln.split("\t")) == 10}

    assert {"CONJ", "PRT"} <= upos(raw)
    assert not upos(fixed) & {"CONJ", "PRT", "ONOM", "AFFIX"}
    assert {"CCONJ", "PART", "NOUN", "PUNCT"} <= upos(fixed)


def test_trained_model_splits_and_tokenises_turkish(tr_model: Path) -> None:
    assert tr_model.is_file() and tr_model.stat().st_size > 10_000
    seg = UDPipeSegmenter(tr_model, "tr")
    assert seg.name == "udpipe:tr-test.udpipe"
    sentences = seg.segment(TURKISH)
    assert len(sentences) == 2
    first, second = sentences
    assert first[0] == "Ankara" and first[-1] == "."
    assert second[0] == "Şehirde" and second[-1] == "."
    assert "başkentidir" in first and "ve" in first
    assert all(tok and not any(c.isspace() for c in tok) for s in sentences for tok in s)


def test_fast_path_matches_spacy_udpipe(tr_model: Path) -> None:
    """Skipping the tagger/parser must not change sentences or tokens."""
    seg = UDPipeSegmenter(tr_model, "tr")
    texts = [
        TURKISH,
        "Bu kitap çok güzel, herkese tavsiye ederim! Yazarın diğer kitaplarını da okudum.",
        "1923 yılında Cumhuriyet ilan edildi. Başkent (Ankara) o zaman küçük bir kasabaydı.",
    ]
    for text in texts:
        doc = seg.nlp(text)
        expected = [[t.text for t in sent] for sent in doc.sents]
        assert seg.segment(text) == expected


def test_make_segmenter_uses_trained_model(tr_model: Path) -> None:
    seg, info = make_segmenter("tr", udpipe_model=tr_model)
    assert info == {
        "tool": "udpipe:tr-test.udpipe",
        "requested_tool": "udpipe",
        "fallback_reason": None,
    }
    assert len(seg.segment(TURKISH)) == 2


def test_corrupt_model_falls_back_or_fails(tmp_path: Path) -> None:
    bad = tmp_path / "broken.udpipe"
    bad.write_bytes(b"not a model at all")
    _, info = make_segmenter("tr", udpipe_model=bad, fallback="icu")
    assert info["tool"] == "icu" and info["requested_tool"] == "udpipe"
    assert "broken.udpipe" in info["fallback_reason"]
    with pytest.raises(ToolError, match=r"'tr'.*segment\.udpipe\.models\.tr"):
        make_segmenter("tr", udpipe_model=bad)


def test_train_rejects_bad_conllu(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no sentences"):
        train_udpipe_model([], tmp_path / "m.udpipe")
    with pytest.raises(InputError, match="CoNLL-U"):
        train_udpipe_model(["1\tonly-two-columns"], tmp_path / "m.udpipe")
    bad = tmp_path / "bad.conllu"
    bad.write_bytes(b"# text = \xff\n")
    with pytest.raises(InputError, match=r"bad\.conllu"):
        train_udpipe_model(bad, tmp_path / "m.udpipe")
    assert not (tmp_path / "m.udpipe").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.conllu"]


def test_model_table_entries() -> None:
    assert model_filename("en") == "english-ewt-ud-2.5-191206.udpipe"
    assert model_filename("de") == "german-gsd-ud-2.5-191206.udpipe"
    assert model_filename("ru") == "russian-syntagrus-ud-2.5-191206.udpipe"
    assert model_url("en") == f"{UD25_BASE_URL}/english-ewt-ud-2.5-191206.udpipe"
    assert (
        model_url("de", "http://127.0.0.1:8000/models/")
        == "http://127.0.0.1:8000/models/german-gsd-ud-2.5-191206.udpipe"
    )


def test_base_url_is_spacy_udpipes() -> None:
    from spacy_udpipe.utils import BASE_URL, LANGUAGES

    assert UD25_BASE_URL == BASE_URL
    assert model_filename("tr") == LANGUAGES["tr"]


@pytest.mark.parametrize("lang", ["th", "xx"])
def test_unknown_language_has_no_model(lang: str) -> None:
    with pytest.raises(ToolError, match=repr(lang)):
        model_filename(lang)
    with pytest.raises(ToolError, match=repr(lang)):
        model_url(lang)
