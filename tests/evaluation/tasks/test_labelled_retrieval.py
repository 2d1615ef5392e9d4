"""Retrieval sets of the embedded default (udhr, held-out Bible verses) and the shared
helpers of xlalign.evaluation.tasks.labelled.common."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.languages import PAPER_LANGUAGES
from xlalign.evaluation.tasks.data import RetrievalPair, TaggedSentence, read_records
from xlalign.evaluation.tasks.labelled.bible import build_bible_pairs
from xlalign.evaluation.tasks.labelled.common import (
    package_file,
    read_token_lines,
    seeded_split,
    write_task,
)
from xlalign.evaluation.tasks.labelled.udhr import UDHR_CODES, build_udhr, read_declaration

FIX = Path(__file__).parent / "fixtures" / "labelled"

# ------------------------------------------------------------------------------ udhr


def test_udhr_declaration_sections() -> None:
    eng = read_declaration(FIX / "udhr" / "package" / "declaration" / "eng.html")
    assert list(eng) == ["preamble", "1", "2", "3"]
    assert eng["2"] == [
        "Everyone has the right to a standard of living & care.",  # entity decoded
        "Motherhood and childhood are entitled to special care.",
    ]


def test_udhr_pairs_by_article_then_paragraph(tmp_path: Path) -> None:
    stats = build_udhr(
        FIX / "udhr", "de", tmp_path / "t.jsonl", tmp_path / "s.json", package="udhr==6.0.0"
    )
    pairs = read_records(tmp_path / "t.jsonl", RetrievalPair)
    assert [p.id for p in pairs] == ["udhr-1-1", "udhr-2-1", "udhr-2-2"]
    assert pairs[1].source == "Jeder hat das Recht auf einen Lebensstandard & Fürsorge."
    assert pairs[1].target == "Everyone has the right to a standard of living & care."
    assert stats["splits"]["test"] == {"pairs": 3}
    assert stats["dropped"] == {
        "paragraphs of a section missing in the language": 1,  # article 3
        "paragraphs of a section with another paragraph count": 2,  # preamble 1 vs 2
    }


def test_udhr_languages_and_errors(tmp_path: Path) -> None:
    assert set(UDHR_CODES) == set(PAPER_LANGUAGES)
    with pytest.raises(ConfigError, match="English is the retrieval target"):
        build_udhr(FIX / "udhr", "en", tmp_path / "t", tmp_path / "s", package="u")
    with pytest.raises(InputError, match=r"declaration/tur\.html not found"):
        build_udhr(FIX / "udhr", "tr", tmp_path / "t", tmp_path / "s", package="u")
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><article><p>x</p></article></body></html>")
    with pytest.raises(InputError, match="article> without data-number"):
        read_declaration(bad)


# ----------------------------------------------------------------------------- bible


def _units(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    lines = ["id\tsplit\tdoc\tpara\ttext"]
    for uid, split, text in rows:
        book, chapter, _ = uid.split(".")
        lines.append(f"{uid}\t{split}\t{book}\t{book}.{chapter}\t{text}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_bible_pairs_heldout_only(tmp_path: Path) -> None:
    en = _units(
        tmp_path / "en.4.tsv",
        [
            ("1.1.1", "train", "In the beginning"),
            ("43.1.1", "heldout", "In the beginning was"),
            ("43.1.2", "heldout", "The same was"),
            ("66.1.1", "heldout", "The Revelation"),
        ],
    )
    de = _units(
        tmp_path / "de.e.tsv",
        [
            ("1.1.1", "train", "Im Anfang"),
            ("43.1.1", "heldout", "Im Anfang war"),
            ("43.1.2", "heldout", "Dieses war"),
        ],
    )
    stats = build_bible_pairs(
        de,
        en,
        "de",
        tmp_path / "t.jsonl",
        tmp_path / "s.json",
        source_translation="e",
        english_translation="4",
    )
    pairs = read_records(tmp_path / "t.jsonl", RetrievalPair)
    assert [(p.id, p.source, p.target) for p in pairs] == [
        ("bible-43.1.1", "Im Anfang war", "In the beginning was"),
        ("bible-43.1.2", "Dieses war", "The same was"),
    ]
    assert stats["dropped"] == {"held-out verse missing in de": 1}
    assert stats["heldout_books"] == [43]
    assert stats["source"]["translations"]["de"]["name"] == "Elberfelder"


def test_bible_max_pairs_draws_lowest_hashes_in_order(tmp_path: Path) -> None:
    ids = [f"43.{c}.{v}" for c in (1, 2) for v in range(1, 6)]
    en = _units(tmp_path / "en.tsv", [(i, "heldout", f"en {i}") for i in ids])
    de = _units(tmp_path / "de.tsv", [(i, "heldout", f"de {i}") for i in ids])
    stats = build_bible_pairs(
        de,
        en,
        "de",
        tmp_path / "t.jsonl",
        tmp_path / "s.json",
        source_translation="e",
        english_translation="4",
        max_pairs=3,
    )
    got = [p.id.removeprefix("bible-") for p in read_records(tmp_path / "t.jsonl", RetrievalPair)]
    lowest = sorted(ids, key=lambda i: hashlib.sha256(i.encode()).hexdigest())[:3]
    assert got == [i for i in ids if i in lowest]
    assert stats["dropped"] == {"beyond max_pairs": 7}


def test_bible_heldout_mismatch_is_an_error(tmp_path: Path) -> None:
    en = _units(tmp_path / "en.tsv", [("43.1.1", "heldout", "a"), ("43.1.2", "train", "b")])
    de = _units(tmp_path / "de.tsv", [("43.1.1", "heldout", "a"), ("43.1.2", "heldout", "b")])
    with pytest.raises(InputError, match=r"verse 43\.1\.2 .* held out in one and training"):
        build_bible_pairs(
            de,
            en,
            "de",
            tmp_path / "t",
            tmp_path / "s",
            source_translation="e",
            english_translation="4",
        )


# ---------------------------------------------------------------------------- common


def test_seeded_split() -> None:
    items = list(range(20))
    train, dev = seeded_split(items, dev_fraction=0.1, seed=3)
    assert len(dev) == 2 and sorted(train + dev) == items
    assert train == sorted(train) and dev == sorted(dev)  # input order kept
    assert seeded_split(items, dev_fraction=0.1, seed=3) == (train, dev)
    assert seeded_split([1, 2], dev_fraction=0.01, seed=0)[1] != []  # at least one
    with pytest.raises(ValueError, match="dev_fraction"):
        seeded_split(items, dev_fraction=1.0, seed=0)


def test_package_file_wheel_and_sdist_layouts(tmp_path: Path) -> None:
    (tmp_path / "w" / "pkg").mkdir(parents=True)
    (tmp_path / "w" / "pkg" / "a.txt").write_text("x")
    (tmp_path / "s" / "pkg-1.0" / "pkg").mkdir(parents=True)
    (tmp_path / "s" / "pkg-1.0" / "pkg" / "a.txt").write_text("y")
    assert package_file(tmp_path / "w", "pkg/a.txt", package="p").read_text() == "x"
    assert package_file(tmp_path / "s", "pkg/a.txt", package="p").read_text() == "y"
    with pytest.raises(InputError, match=r"pkg/b\.txt not found in the unpacked package p"):
        package_file(tmp_path / "s", "pkg/b.txt", package="p")


def test_read_token_lines_drops_bad_sentences(tmp_path: Path) -> None:
    f = tmp_path / "x.txt"
    f.write_text("a\tO\nb\tB-X\n\nc\tO\td\n\n\t\ne\tO\n")
    dropped: Counter[str] = Counter()
    got = list(read_token_lines(f, columns={2}, dropped=dropped))
    assert got == [(1, ["a", "b"], ["O", "B-X"]), (7, ["e"], ["O"])]
    assert sum(dropped.values()) == 1


def test_write_task_refuses_an_empty_split(tmp_path: Path) -> None:
    rec = TaggedSentence(id="a", tokens=["x"], tags=["NOUN"])
    with pytest.raises(InputError, match="no records for split 'dev'"):
        write_task(
            {"train": (tmp_path / "t.jsonl", [rec]), "dev": (tmp_path / "d.jsonl", [])},
            tmp_path / "s.json",
            {"task": "pos-gold", "language": "en"},
        )
    assert not (tmp_path / "s.json").exists()
