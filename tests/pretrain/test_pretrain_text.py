"""MLM / DICT-MLM / TLM data: packing, hold-out, sampling, masking, validation batches."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_encoder import TINY_VOCAB

from xlalign.core.errors import InputError
from xlalign.pretrain.text import (
    IGNORE_INDEX,
    DictMLMCollator,
    MaskingCollator,
    ParallelCorpus,
    TextCorpus,
    pad_sequences,
    read_paragraphs,
    special_template,
    validation_batches,
)

ID = {w: i for i, w in enumerate(TINY_VOCAB)}
PAD, CLS, SEP, MASK = ID["[PAD]"], ID["[CLS]"], ID["[SEP]"], ID["[MASK]"]
SPECIAL = {PAD, ID["[UNK]"], CLS, SEP, MASK}
#: two "languages" with disjoint words, so every token id tells its language
WORDS = {
    "xx": ["the", "cat", "dog", "sat", "on", "mat", "a"],
    "yy": ["big", "small", "red", "sun", "moon", "run", "ran"],
}
LANG_IDS = {lang: {ID[w] for w in words} for lang, words in WORDS.items()}


@pytest.fixture(scope="module")
def tok():
    from transformers import BertTokenizer

    return BertTokenizer(vocab=dict(ID), do_lower_case=True)


def paragraphs(lang: str, n: int, seed: int) -> list[str]:
    """``n`` random paragraphs of 1-20 words of ``lang``, a few of them repeated."""
    rng = np.random.default_rng(seed)
    words = WORDS[lang]
    out = [" ".join(rng.choice(words, size=rng.integers(1, 21))) for _ in range(n)]
    for i in range(0, n, 10):  # every 10th paragraph repeats an earlier one
        out[i] = out[i // 3]
    return out


def stream(corpus: TextCorpus, lang: str) -> list[int]:
    """The language's text tokens, from its sequences minus the special tokens."""
    out: list[int] = []
    for seq in corpus.sequences[lang]:
        assert seq[0] == CLS and seq[-1] == SEP
        out += seq[1:-1]
    return out


# ------------------------------------------------------------------------------ reading


def test_read_paragraphs_skips_empty_lines_and_caps(tmp_path: Path) -> None:
    p = tmp_path / "de.txt"
    p.write_text("eins zwei\n\n  drei  \n\nvier\n", encoding="utf-8")
    assert read_paragraphs(p, "de") == ["eins zwei", "drei", "vier"]
    assert read_paragraphs(p, "de", max_paragraphs=2) == ["eins zwei", "drei"]


@pytest.mark.parametrize("content", [None, "", "\n\n  \n"])
def test_read_paragraphs_missing_or_empty_names_file_and_language(
    tmp_path: Path, content: str | None
) -> None:
    p = tmp_path / "sw.txt"
    if content is not None:
        p.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=r"sw\.txt.*'sw'"):
        read_paragraphs(p, "sw")


# ------------------------------------------------------------------------------ packing


def test_special_template_of_bert(tok) -> None:
    assert special_template(tok) == ([CLS], [SEP])


def test_packing_never_mixes_languages_and_respects_max_length(tok) -> None:
    texts = {"xx": paragraphs("xx", 60, 1), "yy": paragraphs("yy", 45, 2)}
    train, valid = TextCorpus.build(texts, tok, max_length=16, validation_paragraphs=5, seed=0)
    assert train.languages == ["xx", "yy"] and valid.languages == ["xx", "yy"]
    for corpus in (train, valid):
        for lang in corpus.languages:
            seqs = corpus.sequences[lang]
            assert len(seqs) == corpus.num_sequences(lang) == corpus.stats()[lang]["sequences"]
            # every sequence but the last is exactly max_length; none is longer
            assert all(len(s) == 16 for s in seqs[:-1]) and 3 <= len(seqs[-1]) <= 16
            for s in seqs:
                assert s[0] == CLS and s[-1] == SEP
                assert set(s[1:-1]) <= LANG_IDS[lang]  # one language per sequence
    # the train stream is the held-in paragraphs' tokens, concatenated in file order
    for lang, paras in texts.items():
        idx = train.paragraph_indices[lang]
        expected = [t for i in idx for t in tok(paras[i], add_special_tokens=False)["input_ids"]]
        assert stream(train, lang) == expected
        assert train.stats()[lang]["tokens"] == len(expected)
        assert train.stats()[lang]["paragraphs"] == len(idx)


def test_validation_paragraphs_never_in_train(tok) -> None:
    # every paragraph twice (the samples repeat paragraphs): each held-out text has a copy
    texts = {lang: paragraphs(lang, 40, seed) * 2 for lang, seed in [("xx", 3), ("yy", 4)]}
    train, valid = TextCorpus.build(texts, tok, max_length=32, validation_paragraphs=12, seed=7)
    for lang, paras in texts.items():
        held = valid.paragraph_indices[lang]
        kept = train.paragraph_indices[lang]
        assert len(held) == 12 and len({paras[i] for i in held}) == 12  # distinct texts
        assert not set(held) & set(kept)
        # no copy of a held-out text stays in train (the fixture repeats paragraphs)
        assert not {paras[i] for i in held} & {paras[i] for i in kept}
        dropped = train.stats()[lang]["duplicates_dropped"]
        assert dropped >= 12 and len(kept) + len(held) + dropped == len(paras)
        want = [t for i in held for t in tok(paras[i], add_special_tokens=False)["input_ids"]]
        assert stream(valid, lang) == want
    # deterministic by seed and language name; another seed holds out other paragraphs
    _, valid2 = TextCorpus.build(texts, tok, max_length=32, validation_paragraphs=12, seed=7)
    assert all(
        np.array_equal(valid2.paragraph_indices[k], valid.paragraph_indices[k]) for k in texts
    )
    _, other = TextCorpus.build(texts, tok, max_length=32, validation_paragraphs=12, seed=8)
    assert not np.array_equal(other.paragraph_indices["xx"], valid.paragraph_indices["xx"])
    # adding a language leaves the others' hold-out alone
    _, alone = TextCorpus.build(
        {"yy": texts["yy"]}, tok, max_length=32, validation_paragraphs=12, seed=7
    )
    assert np.array_equal(alone.paragraph_indices["yy"], valid.paragraph_indices["yy"])


def test_validation_max_sequences_keeps_each_languages_first_sequences(tok) -> None:
    # xx: long paragraphs (a Bible chapter's share), yy: short ones (a help page's)
    rng = np.random.default_rng(5)
    texts = {
        "xx": [" ".join(rng.choice(WORDS["xx"], size=60)) for _ in range(20)],
        "yy": [" ".join(rng.choice(WORDS["yy"], size=3)) for _ in range(20)],
    }
    kw = dict(max_length=10, validation_paragraphs=4, seed=1)
    train, full = TextCorpus.build(texts, tok, **kw)
    train_c, capped = TextCorpus.build(texts, tok, validation_max_sequences=3, **kw)
    block = 10 - 2
    assert full.num_sequences("xx") > 3 and full.num_sequences("yy") <= 3
    assert capped.num_sequences("xx") == 3 and capped.sequences["xx"] == full.sequences["xx"][:3]
    assert capped.sequences["yy"] == full.sequences["yy"]  # under the cap: all of it
    assert capped.stats()["xx"]["tokens"] == 3 * block
    # the same paragraphs held out, the training corpus untouched
    for lang in texts:
        assert np.array_equal(capped.paragraph_indices[lang], full.paragraph_indices[lang])
        assert train_c.sequences[lang] == train.sequences[lang]
    with pytest.raises(ValueError, match="validation_max_sequences"):
        TextCorpus.build(texts, tok, validation_max_sequences=0, **kw)


def test_build_errors_name_the_language(tok) -> None:
    with pytest.raises(InputError, match="'yy'"):
        TextCorpus.build(
            {"xx": ["the cat"], "yy": []}, tok, max_length=8, validation_paragraphs=0, seed=0
        )
    with pytest.raises(InputError, match=r"'xx'.*hold out 2"):
        TextCorpus.build(
            {"xx": ["the cat", "the cat", "a dog"]},
            tok,
            max_length=8,
            validation_paragraphs=2,
            seed=0,
        )
    with pytest.raises(ValueError, match="max_length"):
        TextCorpus.build({"xx": ["the cat"]}, tok, max_length=2, validation_paragraphs=0, seed=0)
    block = dict(block=4, prefix=[CLS], suffix=[SEP])
    with pytest.raises(InputError, match="'zz'"):
        TextCorpus({"xx": np.array([5, 6]), "zz": np.array([], dtype=np.int32)}, **block)


def test_no_validation_gives_an_empty_corpus(tok) -> None:
    train, valid = TextCorpus.build(
        {"xx": paragraphs("xx", 5, 0)}, tok, max_length=8, validation_paragraphs=0, seed=0
    )
    assert valid.languages == [] and len(valid) == 0 and list(valid.iter_batches(4)) == []
    assert len(train) > 0


# ------------------------------------------------------------------------------ sampling


def test_language_probabilities_by_hand() -> None:
    corpus = TextCorpus({"a": np.ones(4), "b": np.ones(16)}, block=4, prefix=[CLS], suffix=[SEP])
    assert corpus.num_sequences("a") == 1 and corpus.num_sequences("b") == 4
    assert corpus.probabilities(1.0) == pytest.approx({"a": 1 / 5, "b": 4 / 5})
    # alpha 0.5: sqrt(1) : sqrt(4) = 1 : 2
    assert corpus.probabilities(0.5) == pytest.approx({"a": 1 / 3, "b": 2 / 3})
    assert corpus.probabilities(0.0) == pytest.approx({"a": 0.5, "b": 0.5})


@pytest.mark.parametrize("alpha", [1.0, 0.3])
def test_sample_language_frequencies_follow_n_alpha(alpha: float) -> None:
    # language "a" has 10 sequences of token 5, "b" 90 of token 6, "c" 400 of token 7
    counts = {"a": 10, "b": 90, "c": 400}
    block = 3
    streams = {k: np.full(n * block, 5 + i) for i, (k, n) in enumerate(counts.items())}
    corpus = TextCorpus(streams, block=block, prefix=[CLS], suffix=[SEP])
    n = 20_000
    batch = corpus.sample(np.random.default_rng(0), n, alpha=alpha)
    first = np.array([s[1] for s in batch])
    total = sum(c**alpha for c in counts.values())
    for i, (k, c) in enumerate(counts.items()):
        p = c**alpha / total
        freq = np.mean(first == 5 + i)
        assert abs(freq - p) < 4 * np.sqrt(p * (1 - p) / n), (k, freq, p)


def test_sample_uniform_within_language_and_deterministic() -> None:
    block = 2
    corpus = TextCorpus({"a": np.arange(100, 100 + 50 * block)}, block=block, prefix=[], suffix=[])
    draws = corpus.sample(np.random.default_rng(1), 25_000)
    first = np.array([s[0] for s in draws])
    hist = np.bincount((first - 100) // block, minlength=50)
    assert hist.min() > 400 and hist.max() < 600  # 500 expected per sequence
    assert corpus.sample(np.random.default_rng(3), 8) == corpus.sample(np.random.default_rng(3), 8)


def test_iter_batches_in_order() -> None:
    corpus = TextCorpus({"a": np.arange(7), "b": np.arange(10, 13)}, block=3, prefix=[], suffix=[])
    batches = list(corpus.iter_batches(2))
    assert batches == [[[0, 1, 2], [3, 4, 5]], [[6], [10, 11, 12]]]


# ------------------------------------------------------------------------------ masking


def random_batch(rng: np.random.Generator, rows: int, length: int) -> list[list[int]]:
    words = sorted(LANG_IDS["xx"] | LANG_IDS["yy"])
    return [[CLS, *rng.choice(words, size=length).tolist(), SEP] for _ in range(rows)]


def test_masking_rates_follow_bert(tok) -> None:
    collator = MaskingCollator(tok)
    batch = random_batch(np.random.default_rng(0), 200, 100)  # 20,000 maskable tokens
    out = collator(batch, torch.Generator().manual_seed(0))
    original = torch.tensor(batch)
    selected = out["labels"] != IGNORE_INDEX
    n_sel = int(selected.sum())
    assert abs(n_sel / 20_000 - 0.15) < 0.01
    assert torch.equal(out["labels"][selected], original[selected])
    got = out["input_ids"][selected]
    orig = original[selected]
    masked = got == MASK
    unchanged = got == orig
    randomised = ~masked & ~unchanged
    # a random replacement is drawn uniformly from the 22 non-special pieces, the original
    # among them: P(unchanged) = 0.1 + 0.1/22, P(changed to another token) = 0.1 * 21/22
    n_real = len(TINY_VOCAB) - len(SPECIAL)
    for frac, p in [
        (masked.float().mean(), 0.8),
        (unchanged.float().mean(), 0.1 + 0.1 / n_real),
        (randomised.float().mean(), 0.1 * (n_real - 1) / n_real),
    ]:
        assert abs(float(frac) - p) < 4 * np.sqrt(p * (1 - p) / n_sel)
    # random replacements are real pieces, never special tokens
    assert set(got[randomised].tolist()) <= set(range(len(TINY_VOCAB))) - SPECIAL
    assert len(set(got[randomised].tolist())) > 15
    # unselected positions are untouched
    assert torch.equal(out["input_ids"][~selected], original[~selected])


def test_special_and_pad_tokens_never_masked(tok) -> None:
    rng = np.random.default_rng(2)
    batch = [[CLS, *rng.choice([5, 6, 7, 1], size=n).tolist(), SEP] for n in (1, 5, 30, 12)]
    collator = MaskingCollator(tok, probability=0.9, pad_to_multiple_of=8)
    for seed in range(20):
        out = collator(batch, torch.Generator().manual_seed(seed))
        ids, labels, att = out["input_ids"], out["labels"], out["attention_mask"]
        assert ids.shape == (4, 32)
        ref, ref_att = pad_sequences(batch, PAD, pad_to_multiple_of=8)
        assert torch.equal(att, ref_att)
        fixed = torch.isin(ref, torch.tensor(sorted(SPECIAL)))  # [CLS] [SEP] [UNK] [PAD]
        assert torch.equal(ids[fixed], ref[fixed])
        assert (labels[fixed] == IGNORE_INDEX).all()
        assert (labels[~fixed] != IGNORE_INDEX).any()


def test_same_generator_same_batch(tok) -> None:
    collator = MaskingCollator(tok)
    batch = random_batch(np.random.default_rng(3), 8, 40)
    a = collator(batch, torch.Generator().manual_seed(11))
    b = collator(batch, torch.Generator().manual_seed(11))
    c = collator(batch, torch.Generator().manual_seed(12))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["labels"], c["labels"])


def test_at_least_one_label_per_batch(tok) -> None:
    collator = MaskingCollator(tok, probability=1e-9)
    batch = [[CLS, 5, 6, SEP], [CLS, 7, SEP]]
    positions = set()
    for seed in range(40):
        out = collator(batch, torch.Generator().manual_seed(seed))
        (rows, cols) = torch.nonzero(out["labels"] != IGNORE_INDEX, as_tuple=True)
        assert len(rows) == 1
        positions.add((int(rows[0]), int(cols[0])))
    assert positions == {(0, 1), (0, 2), (1, 1)}  # uniform over the maskable positions
    with pytest.raises(InputError, match="no maskable token"):
        collator([[CLS, SEP]], torch.Generator().manual_seed(0))


def test_collator_rejects_bad_ratios(tok) -> None:
    with pytest.raises(ValueError):
        MaskingCollator(tok, probability=0.0)
    with pytest.raises(ValueError):
        MaskingCollator(tok, mask_ratio=0.95, random_ratio=0.1)


def test_pad_sequences() -> None:
    ids, att = pad_sequences([[1, 2, 3], [4]], 0, pad_to_multiple_of=4)
    assert ids.tolist() == [[1, 2, 3, 0], [4, 0, 0, 0]]
    assert att.tolist() == [[1, 1, 1, 0], [1, 0, 0, 0]]


# ------------------------------------------------------------------------------ DICT-MLM

#: each xx word translates to the yy word at the same position; "the" has two translations
TRANSLATIONS = {ID[a]: [ID[b]] for a, b in zip(WORDS["xx"], WORDS["yy"], strict=True)}
TRANSLATIONS[ID["the"]] = [ID["big"], ID["sun"]]


def test_dict_mlm_switches_to_a_translation_and_keeps_the_label(tok) -> None:
    collator = DictMLMCollator(tok, TRANSLATIONS, switch_probability=1.0)
    batch = [[CLS, *[ID[w] for w in WORDS["xx"]] * 10, SEP] for _ in range(20)]
    out = collator(batch, torch.Generator().manual_seed(0))
    original = torch.tensor(batch)
    selected = out["labels"] != IGNORE_INDEX
    assert torch.equal(out["labels"][selected], original[selected])
    seen_the = set()
    for got, orig in zip(
        out["input_ids"][selected].tolist(), original[selected].tolist(), strict=True
    ):
        assert got in TRANSLATIONS[orig]  # every selected token has a translation: all switched
        if orig == ID["the"]:
            seen_the.add(got)
    assert seen_the == {ID["big"], ID["sun"]}  # chosen among the translations
    n = int(selected.sum())
    assert collator.last_counts == {"selected": n, "switched": n, "no_translation": 0}


def test_dict_mlm_switch_rate(tok) -> None:
    collator = DictMLMCollator(tok, TRANSLATIONS)  # switch probability 0.5
    batch = [[CLS, *[ID[w] for w in WORDS["xx"]] * 20, SEP] for _ in range(100)]
    collator(batch, torch.Generator().manual_seed(1))
    c = collator.last_counts
    assert abs(c["switched"] / c["selected"] - 0.5) < 4 * np.sqrt(0.25 / c["selected"])


@pytest.mark.parametrize("leak", [False, True])
def test_dict_mlm_token_without_translation(tok, leak: bool) -> None:
    # yy words have no translation; every selected one is chosen for switching
    collator = DictMLMCollator(
        tok,
        TRANSLATIONS,
        switch_probability=1.0,
        reproduce_label_leak=leak,
        mask_ratio=1.0,
        random_ratio=0.0,
    )
    batch = [[CLS, *[ID[w] for w in WORDS["yy"]] * 10, SEP] for _ in range(10)]
    out = collator(batch, torch.Generator().manual_seed(0))
    original = torch.tensor(batch)
    selected = out["labels"] != IGNORE_INDEX
    assert torch.equal(out["labels"][selected], original[selected])  # predicted either way
    if leak:  # the public code: left unchanged, so the label is in the input
        assert torch.equal(out["input_ids"][selected], original[selected])
    else:  # masked as MLM would (mask_ratio 1 here)
        assert (out["input_ids"][selected] == MASK).all()
    n = int(selected.sum())
    assert collator.last_counts == {"selected": n, "switched": 0, "no_translation": n}


def test_dict_mlm_rejects_unusable_dictionaries(tok) -> None:
    with pytest.raises(InputError, match="outside"):
        DictMLMCollator(tok, {5: [len(TINY_VOCAB)]})
    # only a self-translation and a special token: nothing left
    with pytest.raises(InputError, match="no token pair"):
        DictMLMCollator(tok, {5: [5], 6: [MASK], CLS: [7]})


# ------------------------------------------------------------------------------ TLM


def write_tsv(path: Path, rows: list[tuple[str, str]]) -> Path:
    lines = ["id\tsource\ttarget"] + [f"{i}\t{s}\t{t}" for i, (s, t) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_tlm_examples_use_the_pair_template(tok, tmp_path: Path) -> None:
    rows = [("the cat sat", "big red sun"), ("a dog", "moon"), ("the mat", "run ran")] * 4
    f = write_tsv(tmp_path / "corpus.tsv", rows)
    train, valid = ParallelCorpus.from_tsv(
        {"xx-yy": f}, tok, max_length=8, seed=0, validation_pairs=2
    )
    assert train.pairs == ["xx-yy"] and len(train) == 10 and len(valid) == 2
    assert not set(train.row_indices["xx-yy"]) & set(valid.row_indices["xx-yy"])
    ex = train.examples["xx-yy"]
    for row, got in zip(train.row_indices["xx-yy"], ex, strict=True):
        src, tgt = rows[row]
        assert got == tok(src, tgt, truncation="longest_first", max_length=8)["input_ids"]
    # [CLS] the cat sat [SEP] big red sun [SEP] cut longest-first to 8 (a tie: the source)
    first = train.examples["xx-yy"][train.row_indices["xx-yy"].tolist().index(0)]
    assert len(first) == 8 and first[0] == CLS and first[-1] == SEP and first.count(SEP) == 2
    cut = first.index(SEP)
    assert set(first[1:cut]) <= LANG_IDS["xx"] and set(first[cut + 1 : -1]) <= LANG_IDS["yy"]
    assert first[1:cut] == [ID["the"], ID["cat"]] and first[cut + 1 : -1] == [
        ID["big"],
        ID["red"],
        ID["sun"],
    ]
    # the same collator masks both sides
    collator = MaskingCollator(tok, probability=0.5)
    sides = set()
    for seed in range(10):
        batch = train.sample(np.random.default_rng(seed), 4)
        out = collator(batch, torch.Generator().manual_seed(seed))
        for r, seq in enumerate(batch):
            cut = seq.index(SEP)
            for c in torch.nonzero(out["labels"][r] != IGNORE_INDEX).squeeze(1).tolist():
                sides.add("src" if c < cut else "tgt")
    assert sides == {"src", "tgt"}


def test_tlm_empty_file_names_the_file(tok, tmp_path: Path) -> None:
    good = write_tsv(tmp_path / "good.tsv", [("the cat", "big sun")])
    empty = write_tsv(tmp_path / "en-sw.tsv", [])
    with pytest.raises(InputError, match=r"en-sw\.tsv"):
        ParallelCorpus.from_tsv({"xx-yy": good, "en-sw": empty}, tok, max_length=16, seed=0)


# ------------------------------------------------------------------------------ validation


def test_validation_batches_fixed_across_calls_and_batch_sizes(tok) -> None:
    texts = {"xx": paragraphs("xx", 40, 5), "yy": paragraphs("yy", 40, 6)}
    _, valid = TextCorpus.build(texts, tok, max_length=12, validation_paragraphs=10, seed=0)
    collator = MaskingCollator(tok)
    a = validation_batches(valid, collator, batch_size=4, seed=3)
    b = validation_batches(valid, collator, batch_size=4, seed=3)
    assert len(a) == -(-len(valid) // 4)
    assert all(torch.equal(x[k], y[k]) for x, y in zip(a, b, strict=True) for k in x)

    def per_sequence(batches):
        out = []
        for batch in batches:
            for ids, att, lab in zip(
                batch["input_ids"], batch["attention_mask"], batch["labels"], strict=True
            ):
                n = int(att.sum())
                assert (lab[n:] == IGNORE_INDEX).all() and (ids[n:] == PAD).all()
                out.append((ids[:n].tolist(), lab[:n].tolist()))
        return out

    small = per_sequence(a)
    big = per_sequence(validation_batches(valid, collator, batch_size=7, seed=3))
    assert small == big  # the same masked tokens whatever the batch size
    assert all(any(t != IGNORE_INDEX for t in lab) for _, lab in small)  # each sequence predicts
    originals = list(valid.iter_sequences())
    for (_ids, lab), seq in zip(small, originals, strict=True):
        assert [o if t == IGNORE_INDEX else t for o, t in zip(seq, lab, strict=True)] == seq
    other = per_sequence(validation_batches(valid, collator, batch_size=4, seed=4))
    assert other != small
