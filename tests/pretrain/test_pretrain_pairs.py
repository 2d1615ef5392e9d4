"""The alignment objectives' data: static word-vector pairs, the token dictionary, aligned
word pairs in bitext, and the pooling that reads them off an encoder's states.

Tokenizers are tiny and hand-made, so every subword split below is known: a WordPiece one
over :data:`tiny_encoder.TINY_VOCAB` (``unbelievable`` -> ``un ##believ ##able``, ``cats``
-> ``cat ##s``) and an XLM-R-style sentencepiece one (``Haus`` -> ``▁Haus``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_encoder import TINY_VOCAB

from xlalign.core.errors import InputError
from xlalign.pretrain.pairs import (
    AlignedPairs,
    StaticPairs,
    TokenDictionary,
    gather_states,
    mean_pool,
)
from xlalign.static.vectors import write_npy

ID = {w: i for i, w in enumerate(TINY_VOCAB)}
CLS, SEP, PAD, UNK = ID["[CLS]"], ID["[SEP]"], ID["[PAD]"], ID["[UNK]"]
PIECES = ["<s>", "<pad>", "</s>", "<unk>", "<mask>", "▁", "▁Haus", "▁Katze", "▁the", "▁cat"]
PIECES += ["H", "a", "u", "s", "K", "t", "z", "e", "▁H", "▁K"]


@pytest.fixture(scope="module")
def wordpiece() -> object:
    from transformers import BertTokenizerFast

    return BertTokenizerFast(vocab=dict(ID), do_lower_case=True)


@pytest.fixture(scope="module")
def spm() -> object:
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    scores = [(p, 0.0 if i < 5 else -1.0) for i, p in enumerate(PIECES)]
    tok = Tokenizer(models.Unigram(scores, unk_id=3))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 2)]
    )
    tok.add_special_tokens(["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
    )


def space(tmp_path: Path, name: str, words: list[str], dim: int = 4, start: float = 0.0) -> Path:
    """A static space whose row i is ``start + i`` in every component."""
    stem = tmp_path / name
    mat = (start + np.arange(len(words), dtype=np.float32))[:, None] * np.ones(dim, np.float32)
    write_npy(words, mat, stem)
    return stem


# --------------------------------------------------------------------------- static pairs


def test_each_word_is_tokenised_alone_and_word_mask_covers_its_subwords(
    tmp_path: Path, wordpiece: object
) -> None:
    words = ["the", "unbelievable", "cats", "xyz", "\x07"]
    pairs = StaticPairs.load({"en": space(tmp_path, "en", words)}, wordpiece)
    # "xyz" is one [UNK], "\x07" is removed by BERT's normaliser: 3 of 5 kept
    assert pairs.stats()["en"]["kept"] == 3
    assert pairs.stats()["en"]["dropped"] == {"empty": 1, "unknown": 1, "too_long": 0}
    batch = pairs.batch(np.array([1, 0, 2]))
    assert batch.words == ["unbelievable", "the", "cats"]
    assert batch.input_ids.tolist() == [
        [CLS, ID["un"], ID["##believ"], ID["##able"], SEP],
        [CLS, ID["the"], SEP, PAD, PAD],
        [CLS, ID["cat"], ID["##s"], SEP, PAD],
    ]
    assert batch.attention_mask.tolist() == [[1, 1, 1, 1, 1], [1, 1, 1, 0, 0], [1, 1, 1, 1, 0]]
    assert batch.word_mask.tolist() == [[0, 1, 1, 1, 0], [0, 1, 0, 0, 0], [0, 1, 1, 0, 0]]
    assert batch.word_mask.dtype == torch.float32
    # the vector of each row is its own word's (row i of the space holds i everywhere)
    assert batch.vectors[:, 0].tolist() == [1.0, 0.0, 2.0]
    assert batch.languages == ["en"] * 3


def test_sentencepiece_word_alone_is_bos_piece_eos(tmp_path: Path, spm: object) -> None:
    pairs = StaticPairs.load({"de": space(tmp_path, "de", ["Haus", "Hut", "x"])}, spm)
    # "x" is "▁ <unk>": nothing of the word survives, so it counts as unknown
    assert pairs.stats()["de"]["dropped"]["unknown"] == 1
    batch = pairs.batch(np.array([0, 1]))
    tokens = [spm.convert_ids_to_tokens(row) for row in batch.input_ids.tolist()]
    assert tokens == [["<s>", "▁Haus", "</s>", "<pad>", "<pad>"], ["<s>", "▁H", "u", "t", "</s>"]]
    assert batch.word_mask.tolist() == [[0, 1, 0, 0, 0], [0, 1, 1, 1, 0]]


def test_too_many_subwords_are_dropped(tmp_path: Path, wordpiece: object) -> None:
    stem = space(tmp_path, "en", ["the", "unbelievable", "cats"])
    pairs = StaticPairs.load({"en": stem}, wordpiece, max_subwords=2)
    assert pairs.stats()["en"]["dropped"]["too_long"] == 1
    assert sorted(pairs.batch(np.arange(len(pairs))).words) == ["cats", "the"]


def test_coverage_error_names_file_language_and_share(tmp_path: Path, wordpiece: object) -> None:
    ok = space(tmp_path, "en", ["the", "cat"])
    bad = space(tmp_path, "de", ["haus", "katze", "hund", "baum", "sun"])
    with pytest.raises(InputError) as err:
        StaticPairs.load({"en": ok, "de": bad}, wordpiece)
    msg = str(err.value)
    assert f"{bad}.npy" in msg and "'de'" in msg and "20.0%" in msg
    assert "misses most of the words" in msg
    # the threshold is a parameter
    assert len(StaticPairs.load({"de": bad}, wordpiece, min_coverage=0.2)) == 1


def test_dimension_mismatch_names_both_files(tmp_path: Path, wordpiece: object) -> None:
    a = space(tmp_path, "en", ["the", "cat"], dim=4)
    b = space(tmp_path, "de", ["the", "cat"], dim=3)
    with pytest.raises(InputError, match="different dimensions") as err:
        StaticPairs.load({"en": a, "de": b}, wordpiece)
    assert f"{a}.npy" in str(err.value) and f"{b}.npy" in str(err.value)


def test_max_words_per_language_keeps_the_head(tmp_path: Path, wordpiece: object) -> None:
    stem = space(tmp_path, "en", ["the", "cat", "dog", "sun"])
    pairs = StaticPairs.load({"en": stem}, wordpiece, max_words_per_language=2)
    assert pairs.stats()["en"]["words"] == 2
    assert pairs.batch(np.arange(2)).words == ["the", "cat"]


def test_sampling_is_deterministic_by_rng_and_spans_languages(
    tmp_path: Path, wordpiece: object
) -> None:
    big = ["the", "cat", "dog", "sat", "on", "mat", "a", "big", "small", "red"]
    spaces = {
        "en": space(tmp_path, "en", big, start=0.0),
        "de": space(tmp_path, "de", ["sun", "moon"], start=100.0),
    }
    pairs = StaticPairs.load(spaces, wordpiece)
    assert pairs.dim == 4 and pairs.languages == ["de", "en"]
    one = pairs.sample(np.random.default_rng(7), 2000)
    two = pairs.sample(np.random.default_rng(7), 2000)
    assert torch.equal(one.input_ids, two.input_ids) and one.words == two.words
    assert set(one.languages) == {"de", "en"}
    # union-uniform: a language weighs as its vocabulary (10 of 12 words; 5 sd margin)
    assert abs(one.languages.count("en") / 2000 - 10 / 12) < 0.045
    per_lang = pairs.sample(np.random.default_rng(7), 2000, by_language=True)
    assert abs(per_lang.languages.count("en") / 2000 - 0.5) < 0.06
    # every row's vector is its word's vector in its own language's space
    for word, lang, vec in zip(one.words, one.languages, one.vectors[:, 0].tolist(), strict=True):
        expected = big.index(word) if lang == "en" else 100.0 + ["sun", "moon"].index(word)
        assert vec == expected


# ------------------------------------------------------------------------------- pooling


def test_mean_pool_matches_a_hand_computation() -> None:
    hidden = torch.tensor(
        [[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[10.0, 0.0], [20.0, 2.0], [99.0, 99.0]]]
    )
    mask = torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
    # row 0: mean of (3,4) and (5,6); row 1: (10,0) alone
    assert mean_pool(hidden, mask).tolist() == [[4.0, 5.0], [10.0, 0.0]]
    h64 = torch.randn(2, 3, 2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda h: mean_pool(h, mask.double()), (h64,))


def test_gather_states_first_subword_and_span_mean() -> None:
    hidden = torch.arange(2 * 4 * 2, dtype=torch.float32).reshape(2, 4, 2)
    index = torch.tensor([[0, 1], [1, 2], [1, 0]])
    assert gather_states(hidden, index).tolist() == [[2.0, 3.0], [12.0, 13.0], [8.0, 9.0]]
    end = torch.tensor([3, 3, 4])
    # (row 0, positions 1-2): mean of (2,3), (4,5); (row 1, position 2); (row 1, 0-3)
    expected = [[3.0, 4.0], [12.0, 13.0], [11.0, 12.0]]
    assert gather_states(hidden, index, end).tolist() == expected
    h64 = torch.randn(2, 4, 2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda h: gather_states(h, index, end), (h64,))


# ---------------------------------------------------------------------- token dictionary


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture()
def dict_files(tmp_path: Path) -> dict[str, Path]:
    de = "cat dog\nsun moon\nunbelievable cat\ncat xyz\nmat mat\nCat dog\nred big\n"
    fr = "sun moon\nrun ran\n"
    return {"de": write(tmp_path / "de.txt", de), "fr": write(tmp_path / "fr.txt", fr)}


def test_dictionary_keeps_single_different_tokens(
    dict_files: dict[str, Path], wordpiece: object
) -> None:
    d = TokenDictionary.build(dict_files, wordpiece, max_pairs=None, seed=0)
    assert d.pairs.tolist() == [
        [ID["cat"], ID["dog"]],
        [ID["sun"], ID["moon"]],
        [ID["red"], ID["big"]],
        [ID["run"], ID["ran"]],
    ]
    assert [e.language for e in d.entries] == ["de", "de", "de", "fr"]
    assert d.languages == ["de", "fr"]
    de = d.stats()["languages"]["de"]
    assert de["pairs_read"] == 7 and de["in_vocabulary"] == 3
    # "Cat dog" is cat-dog again after lowercasing; fr's "sun moon" repeats de's
    assert de["dropped"] == {
        "hub_not_single_token": 1,
        "other_not_single_token": 1,
        "same_token": 1,
        "duplicate": 1,
    }
    assert d.stats()["languages"]["fr"]["dropped"]["duplicate"] == 1
    t = d.translations()
    assert t[ID["cat"]] == [ID["dog"]] and t[ID["dog"]] == [ID["cat"]]
    assert t[ID["ran"]] == [ID["run"]]


def test_dictionary_sentencepiece_uses_word_initial_pieces(tmp_path: Path, spm: object) -> None:
    f = write(tmp_path / "de.txt", "cat Katze\nhouse Haus\nthe Hut\n")
    d = TokenDictionary.build({"de": f}, spm, max_pairs=None, seed=0)
    pieces = [spm.convert_ids_to_tokens(row) for row in d.pairs.tolist()]
    assert pieces == [["▁cat", "▁Katze"]]  # "house" is not a piece, "Hut" is ▁H u t


def test_dictionary_is_sampled_once_by_seed(
    tmp_path: Path, dict_files: dict[str, Path], wordpiece: object
) -> None:
    full = TokenDictionary.build(dict_files, wordpiece, max_pairs=None, seed=0).pairs.tolist()
    a = TokenDictionary.build(dict_files, wordpiece, max_pairs=2, seed=3)
    b = TokenDictionary.build(dict_files, wordpiece, max_pairs=2, seed=3)
    assert torch.equal(a.pairs, b.pairs) and len(a) == 2
    # the draw restated: two of the candidates, uniformly without replacement, in file order
    pick = np.sort(np.random.default_rng(3).choice(len(full), size=2, replace=False))
    assert a.pairs.tolist() == [full[k] for k in pick]
    draws = [TokenDictionary.build(dict_files, wordpiece, max_pairs=2, seed=s) for s in range(8)]
    assert len({str(d.pairs.tolist()) for d in draws}) > 1
    path = tmp_path / "ckpt" / "dictionary.json"
    a.save(path)
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert saved["seed"] == 3 and {p["language"] for p in saved["pairs"]} <= {"de", "fr"}
    back = TokenDictionary.load(path)
    assert torch.equal(back.pairs, a.pairs) and back.entries == a.entries
    assert back.stats() == a.stats() and back.translations() == a.translations()
    back.verify(wordpiece)


def test_dictionary_without_in_vocabulary_pair_names_the_files(
    tmp_path: Path, wordpiece: object
) -> None:
    files = {"de": write(tmp_path / "de.txt", "xyz qqq\n"), "fr": write(tmp_path / "fr.txt", "")}
    with pytest.raises(InputError, match="no dictionary pair") as err:
        TokenDictionary.build(files, wordpiece, max_pairs=10, seed=0)
    assert str(files["de"]) in str(err.value) and str(files["fr"]) in str(err.value)


def test_dictionary_malformed_line_names_file_and_line(tmp_path: Path, wordpiece: object) -> None:
    f = write(tmp_path / "de.txt", "cat dog\nsun moon extra\n")
    with pytest.raises(InputError, match=r"de\.txt: line 2"):
        TokenDictionary.build({"de": f}, wordpiece, max_pairs=None, seed=0)


def test_saved_dictionary_checked_against_tokenizer(
    tmp_path: Path, dict_files: dict[str, Path], wordpiece: object, spm: object
) -> None:
    d = TokenDictionary.build(dict_files, wordpiece, max_pairs=None, seed=0)
    with pytest.raises(InputError, match="tokenizer the dictionary was built with"):
        d.verify(spm)
    bad = write(tmp_path / "bad.json", '{"format": "xlalign.token_dictionary/1"}')
    with pytest.raises(InputError, match=r"bad\.json"):
        TokenDictionary.load(bad)


# ------------------------------------------------------------------------- aligned pairs

PAIRS_HEADER = "pair_id\tsentence\tsource_pos\ttarget_pos\tsource\ttarget\n"


def bitext(
    tmp_path: Path, name: str, sentences: list[tuple[str, str]], links: list[tuple[int, int, int]]
) -> tuple[Path, Path]:
    d = tmp_path / name
    d.mkdir(parents=True, exist_ok=True)
    corpus = "id\tsource\ttarget\n" + "".join(
        f"p{k}\t{s}\t{t}\n" for k, (s, t) in enumerate(sentences)
    )
    rows = []
    for k, a, b in links:
        s, t = sentences[k][0].split()[a], sentences[k][1].split()[b]
        rows.append(f"p{k}\t{k}\t{a}\t{b}\t{s}\t{t}\n")
    return write(d / "pairs.tsv", PAIRS_HEADER + "".join(rows)), write(d / "corpus.tsv", corpus)


SENTENCES = [("the unbelievable cat sat", "a cats ran on the mat"), ("a sun", "red moon")]
LINKS = [
    (0, 0, 4),  # the - the: identical
    (0, 1, 0),  # unbelievable - a
    (0, 2, 1),  # cat - cats
    (0, 3, 2),  # sat - ran  } sat has two links:
    (0, 3, 5),  # sat - mat  } not one-to-one
    (1, 1, 1),  # sun - moon
]


def test_links_map_to_first_subwords(tmp_path: Path, wordpiece: object) -> None:
    files = {"en-de": bitext(tmp_path, "en-de", SENTENCES, LINKS)}
    pairs = AlignedPairs.load(files, wordpiece)
    st = pairs.stats()["en-de"]
    assert st["links_read"] == 6 and st["links"] == 3 and st["sentences"] == 2
    assert st["dropped"]["identical"] == 1 and st["dropped"]["not_one_to_one"] == 2
    batch = pairs.batch([("en-de", 0), ("en-de", 1)])
    # source row 0: [CLS] the un ##believ ##able cat sat [SEP]
    # target row 0: [CLS] a cat ##s ran on the mat [SEP]
    assert batch.source_index.tolist() == [[0, 2], [0, 5], [1, 2]]
    assert batch.source_end.tolist() == [5, 6, 3]
    assert batch.target_index.tolist() == [[0, 1], [0, 2], [1, 2]]
    assert batch.target_end.tolist() == [2, 4, 3]
    src = batch.source["input_ids"]
    tgt = batch.target["input_ids"]
    first = [wordpiece.convert_ids_to_tokens(int(src[r, p])) for r, p in batch.source_index]
    assert first == ["un", "cat", "sun"]
    assert [wordpiece.convert_ids_to_tokens(int(tgt[r, p])) for r, p in batch.target_index] == [
        "a",
        "cat",
        "moon",
    ]
    assert batch.source["attention_mask"].tolist() == [[1] * 8, [1] * 4 + [0] * 4]
    assert src[1].tolist() == [CLS, ID["a"], ID["sun"], SEP, PAD, PAD, PAD, PAD]
    # keep identical pairs when asked
    kept = AlignedPairs.load(files, wordpiece, drop_identical=False)
    assert kept.stats()["en-de"]["links"] == 4


def test_truncated_links_are_dropped_and_counted(tmp_path: Path, wordpiece: object) -> None:
    sentences = [("a sun unbelievable moon", "the red dog big")]
    links = [(0, 0, 0), (0, 1, 1), (0, 2, 3), (0, 3, 2)]
    files = {"en-de": bitext(tmp_path, "en-de", sentences, links)}
    # max_length 6 keeps 4 subwords: a sun un ##believ | ##able moon are cut, and
    # "unbelievable" loses a subword, so the whole word goes
    pairs = AlignedPairs.load(files, wordpiece, max_length=6)
    st = pairs.stats()["en-de"]
    assert st["links"] == 2 and st["dropped"]["truncated"] == 2
    assert st["truncated_sentences"] == 1
    batch = pairs.batch([("en-de", 0)])
    assert batch.source["input_ids"].tolist() == [
        [CLS, ID["a"], ID["sun"], ID["un"], ID["##believ"], SEP]
    ]
    assert batch.source_index.tolist() == [[0, 1], [0, 2]]


def test_sampling_spans_language_pairs_and_is_deterministic(
    tmp_path: Path, wordpiece: object
) -> None:
    files = {
        "en-de": bitext(tmp_path, "en-de", SENTENCES, LINKS),
        "en-fr": bitext(tmp_path, "en-fr", [("the dog ran", "a dog sat")], [(0, 2, 2)]),
    }
    pairs = AlignedPairs.load(files, wordpiece)
    for seed in range(5):
        one = pairs.sample(np.random.default_rng(seed), 3)
        two = pairs.sample(np.random.default_rng(seed), 3)
        assert one.languages == two.languages
        assert torch.equal(one.source_index, two.source_index)
        assert set(one.languages) == {"en-de", "en-fr"}
    batch = pairs.sample(np.random.default_rng(0), 4)
    assert sorted(batch.languages) == ["en-de", "en-de", "en-fr", "en-fr"]
    # each link's row is a sentence of the batch; the fr sentence has its one link
    fr_rows = [r for r, lang in enumerate(batch.languages) if lang == "en-fr"]
    for r in fr_rows:
        assert batch.source_index[batch.source_index[:, 0] == r].tolist() == [[r, 3]]
    assert len(batch.source_index) == len(batch.target_index)


def test_empty_or_missing_pairs_file_is_an_error(tmp_path: Path, wordpiece: object) -> None:
    pairs_tsv, corpus_tsv = bitext(tmp_path, "en-de", SENTENCES, [])
    with pytest.raises(InputError, match="no link rows") as err:
        AlignedPairs.load({"en-de": (pairs_tsv, corpus_tsv)}, wordpiece)
    assert str(pairs_tsv) in str(err.value)
    with pytest.raises(InputError, match="file not found"):
        AlignedPairs.load({"en-de": (tmp_path / "none.tsv", corpus_tsv)}, wordpiece)


def test_link_outside_corpus_names_file_and_line(tmp_path: Path, wordpiece: object) -> None:
    pairs_tsv, corpus_tsv = bitext(tmp_path, "en-de", SENTENCES, LINKS[:2])
    good = pairs_tsv.read_text(encoding="utf-8")
    write(pairs_tsv, good + "p9\t2\t0\t0\tthe\ta\n")
    with pytest.raises(InputError, match=r"line 4: sentence 2 is outside") as err:
        AlignedPairs.load({"en-de": (pairs_tsv, corpus_tsv)}, wordpiece)
    assert str(pairs_tsv) in str(err.value) and str(corpus_tsv) in str(err.value)
    write(pairs_tsv, good + "p1\t1\t0\t5\ta\tx\n")
    with pytest.raises(InputError, match=r"line 4: link 0-5 points outside sentence 1"):
        AlignedPairs.load({"en-de": (pairs_tsv, corpus_tsv)}, wordpiece)
    write(pairs_tsv, good + "p1\t1\t0\t0\tthe\tred\n")
    with pytest.raises(InputError, match=r"line 4: words 'the'-'red'"):
        AlignedPairs.load({"en-de": (pairs_tsv, corpus_tsv)}, wordpiece)


def test_max_sentences_draws_by_seed(tmp_path: Path, wordpiece: object) -> None:
    sentences = [("the cat", "a dog"), ("the sun", "a moon"), ("the mat", "a red")]
    files = {"en-de": bitext(tmp_path, "en-de", sentences, [(k, 1, 1) for k in range(3)])}
    a = AlignedPairs.load(files, wordpiece, max_sentences=2, seed=1)
    b = AlignedPairs.load(files, wordpiece, max_sentences=2, seed=1)
    assert len(a) == 2 and a.stats()["en-de"]["dropped"]["unsampled"] == 1
    rows = [("en-de", 0), ("en-de", 1)]
    assert torch.equal(a.batch(rows).source["input_ids"], b.batch(rows).source["input_ids"])


def test_non_finite_static_vector_is_an_error(tmp_path: Path, wordpiece: object) -> None:
    mat = np.ones((3, 4), dtype=np.float32)
    mat[2, 1] = np.nan  # written by hand: write_npy itself refuses NaN
    np.save(tmp_path / "en.npy", mat)
    write(tmp_path / "en.vocab.txt", "the\ncat\ndog\n")
    with pytest.raises(InputError, match=r"en\.npy: language 'en': row 2 \(word 'dog'\)"):
        StaticPairs.load({"en": tmp_path / "en"}, wordpiece)
