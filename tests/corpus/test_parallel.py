"""Parallel corpus: unit join, line-aligned files, WikiMatrix, filters, sampling, reading."""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.corpus.parallel import (
    DROP_REASONS,
    PairFilter,
    ParallelSource,
    build_parallel,
    count_pairs,
    pair_priority,
    read_parallel,
    segmenter_tokeniser,
)
from xlalign.corpus.segment import make_segmenter

ROOT = Path(__file__).resolve().parents[2]
BIBLE = ROOT / "resources" / "embedded" / "bible"
HEADER = "id\tsplit\tdoc\tpara\ttext\n"


def split_tokens(text: str) -> list[str]:
    return text.split()


def word_tokens(text: str) -> list[str]:
    """Whitespace tokens without punctuation-only ones, so '...' has no tokens."""
    return [w for w in text.split() if any(c.isalnum() for c in w)]


def write_units(path: Path, rows: Sequence[tuple[str, str, str]]) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        fh.write(HEADER)
        for uid, split, text in rows:
            fh.write(f"{uid}\t{split}\td1\t{uid}\t{text}\n")
    return path


def write_lines(path: Path, lines: Sequence[str]) -> Path:
    data = "".join(f"{line}\n" for line in lines).encode("utf-8")
    if path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return path


def build(
    tmp_path: Path,
    sources: Sequence[ParallelSource],
    *,
    src_lang: str = "en",
    tgt_lang: str = "de",
    tokenise=split_tokens,
    **kwargs,
) -> tuple[dict, list[tuple[str, list[str], list[str]]]]:
    out = tmp_path / "out" / "pairs.tsv"
    stats_path = tmp_path / "out" / "pairs.json"
    stats = build_parallel(
        sources,
        out,
        stats_path,
        src_lang=src_lang,
        tgt_lang=tgt_lang,
        src_tokenise=tokenise,
        tgt_tokenise=tokenise,
        progress=False,
        **kwargs,
    )
    assert json.loads(stats_path.read_text(encoding="utf-8")) == stats
    return stats, list(read_parallel(out))


def assert_balanced(stats: dict) -> None:
    for counts in [*stats["sources"], stats["totals"]]:
        assert counts["read"] == counts["kept"] + sum(counts[r] for r in DROP_REASONS)


# ------------------------------------------------------------------------------ units


def test_units_join_excludes_heldout_and_unmatched(tmp_path: Path) -> None:
    hub = write_units(
        tmp_path / "en.tsv",
        [
            ("1.1.1", "train", "In the beginning."),
            ("1.1.2", "heldout", "Held out here."),
            ("1.1.3", "train", "Held out there."),
            ("1.1.4", "train", "Only in English."),
            ("1.1.5", "train", "Second  verse,\u2003again."),
            ("1.1.6", "train", "Empty on the other side."),
        ],
    )
    other = write_units(
        tmp_path / "de.tsv",
        [
            ("1.1.0", "train", "Nur auf Deutsch."),
            ("1.1.1", "train", "Im Anfang."),
            ("1.1.2", "heldout", "Zurückgehalten hier."),
            ("1.1.3", "heldout", "Zurückgehalten dort."),
            ("1.1.5", "train", "Zweiter Vers, wieder."),
            ("1.1.6", "train", " "),
        ],
    )
    stats, pairs = build(tmp_path, [ParallelSource("units", (str(hub), str(other)))])
    assert pairs == [
        ("1.1.1", ["In", "the", "beginning."], ["Im", "Anfang."]),
        ("1.1.5", ["Second", "verse,", "again."], ["Zweiter", "Vers,", "wieder."]),
    ]
    counts = stats["sources"][0]
    assert counts["read"] == 7  # the union of ids on both sides
    assert counts["kept"] == 2
    assert counts["unmatched"] == 2  # 1.1.4 (English only), 1.1.0 (German only)
    assert counts["heldout"] == 2  # held out on the hub side, and on the other side only
    assert counts["empty_target"] == 1
    assert stats["languages"] == {"source": "en", "target": "de"}
    assert stats["pairs_out"] == 2 and stats["tokens_source"] == 6
    assert stats["mean_tokens_target"] == 2.5
    assert stats["exhausted"] is False
    assert_balanced(stats)


def test_units_bad_header_names_file_and_language(tmp_path: Path) -> None:
    hub = tmp_path / "en.tsv"
    hub.write_text("id\ttext\n1\thello\n", encoding="utf-8")
    other = write_units(tmp_path / "de.tsv", [("1", "train", "hallo")])
    with pytest.raises(InputError, match=r"en\.tsv \(language 'en'\): line 1: header"):
        build(tmp_path, [ParallelSource("units", (str(hub), str(other)))])
    bad_row = tmp_path / "de2.tsv"
    bad_row.write_text(HEADER + "1\ttrain\thallo\n", encoding="utf-8")
    hub = write_units(tmp_path / "en2.tsv", [("1", "train", "hello")])
    with pytest.raises(InputError, match=r"de2\.tsv \(language 'de'\): line 2: expected 5"):
        build(tmp_path, [ParallelSource("units", (str(hub), str(bad_row)))])


def test_repeated_pair_ids_are_errors(tmp_path: Path) -> None:
    hub = write_units(tmp_path / "en.tsv", [("1", "train", "a b"), ("1", "train", "c d")])
    other = write_units(tmp_path / "de.tsv", [("1", "train", "x y")])
    with pytest.raises(InputError, match=r"en\.tsv.*line 3: repeated pair id '1'"):
        build(tmp_path, [ParallelSource("units", (str(hub), str(other)))])
    # The same ids from two unit sources.
    hub = write_units(tmp_path / "en.tsv", [("1", "train", "a b")])
    src = ParallelSource("units", (str(hub), str(other)))
    with pytest.raises(InputError, match="repeated pair id '1'"):
        build(tmp_path, [src, src])
    assert not (tmp_path / "out" / "pairs.tsv").exists()
    # Two line sources without distinct names would both give 'lines:1'.
    a = write_lines(tmp_path / "a.en", ["a b"])
    b = write_lines(tmp_path / "a.de", ["x y"])
    lines = ParallelSource("lines", (str(a), str(b)))
    with pytest.raises(InputError, match="distinct name"):
        build(tmp_path, [lines, lines])
    named = ParallelSource("lines", (str(a), str(b)), name="x")
    _stats, pairs = build(tmp_path, [lines, named], filters=PairFilter(dedupe=False))
    assert [p[0] for p in pairs] == ["lines:1", "x:1"]
    # A unit id that looks like a line-numbered id.
    hub = write_units(tmp_path / "en.tsv", [("lines:1", "train", "a b")])
    other = write_units(tmp_path / "de.tsv", [("lines:1", "train", "x y")])
    with pytest.raises(InputError, match="line-numbered"):
        build(tmp_path, [lines, ParallelSource("units", (str(hub), str(other)))])


# ------------------------------------------------------------------------------ lines


def test_lines_pairs_in_lockstep_with_gzip(tmp_path: Path) -> None:
    en = write_lines(tmp_path / "opus.de-en-train.en.gz", ["Hello world .", "", "Good day ."])
    de = write_lines(tmp_path / "opus.de-en-train.de.gz", ["Hallo Welt .", "Leer", "Guten Tag ."])
    stats, pairs = build(tmp_path, [ParallelSource("lines", (str(en), str(de)), name="opus")])
    assert pairs == [
        ("opus:1", ["Hello", "world", "."], ["Hallo", "Welt", "."]),
        ("opus:3", ["Good", "day", "."], ["Guten", "Tag", "."]),
    ]
    assert stats["sources"][0]["read"] == 3
    assert stats["sources"][0]["empty_source"] == 1


@pytest.mark.parametrize(("n_en", "n_de"), [(5, 3), (2, 6)])
def test_lines_different_counts_name_both_files_and_counts(
    tmp_path: Path, n_en: int, n_de: int
) -> None:
    en = write_lines(tmp_path / "train.en", [f"line {i}" for i in range(n_en)])
    de = write_lines(tmp_path / "train.de", [f"Zeile {i}" for i in range(n_de)])
    with pytest.raises(InputError) as exc:
        build(tmp_path, [ParallelSource("lines", (str(en), str(de)))])
    msg = str(exc.value)
    assert str(en) in msg and str(de) in msg
    assert f"has {n_en} lines" in msg and f"has {n_de}" in msg
    assert not (tmp_path / "out" / "pairs.tsv").exists()
    assert not (tmp_path / "out" / "pairs.json").exists()


# ------------------------------------------------------------------------- wikimatrix


def write_wikimatrix(path: Path, rows: Sequence[str]) -> Path:
    path.write_bytes(gzip.compress("".join(f"{r}\n" for r in rows).encode("utf-8")))
    return path


def test_wikimatrix_hub_sorting_first_is_column_two(tmp_path: Path) -> None:
    wm = write_wikimatrix(
        tmp_path / "WikiMatrix.en-fr.tsv.gz",
        ["1.2\tThe cat sleeps .\tLe chat dort .", "1.1\tA dog .\tUn chien ."],
    )
    _stats, pairs = build(
        tmp_path, [ParallelSource("wikimatrix", (str(wm),))], src_lang="en", tgt_lang="fr"
    )
    assert pairs[0] == ("wikimatrix:1", ["The", "cat", "sleeps", "."], ["Le", "chat", "dort", "."])
    assert pairs[1][1] == ["A", "dog", "."]


def test_wikimatrix_hub_sorting_second_is_column_three(tmp_path: Path) -> None:
    wm = write_wikimatrix(
        tmp_path / "WikiMatrix.de-en.tsv.gz",
        ["1.2\tDie Katze schläft .\tThe cat sleeps .", "1.1\tEin Hund .\tA dog ."],
    )
    _stats, pairs = build(
        tmp_path,
        [ParallelSource("wikimatrix", (str(wm),), name="wm")],
        src_lang="en",
        tgt_lang="de",
    )
    assert pairs == [
        ("wm:1", ["The", "cat", "sleeps", "."], ["Die", "Katze", "schläft", "."]),
        ("wm:2", ["A", "dog", "."], ["Ein", "Hund", "."]),
    ]


def test_wikimatrix_score_threshold(tmp_path: Path) -> None:
    wm = write_wikimatrix(
        tmp_path / "WikiMatrix.de-en.tsv.gz",
        ["1.20\ta b\tA B", "1.04\tc d\tC D", "1.0399\te f\tE F", "0.5\tg h\tG H"],
    )
    stats, pairs = build(tmp_path, [ParallelSource("wikimatrix", (str(wm),))])
    assert [p[0] for p in pairs] == ["wikimatrix:1", "wikimatrix:2"]
    assert stats["sources"][0]["low_score"] == 2
    assert stats["sources"][0]["min_score"] == 1.04
    stats, pairs = build(tmp_path, [ParallelSource("wikimatrix", (str(wm),), min_score=0.0)])
    assert len(pairs) == 4 and stats["totals"]["low_score"] == 0
    stats, pairs = build(tmp_path, [ParallelSource("wikimatrix", (str(wm),), min_score=1.1)])
    assert [p[0] for p in pairs] == ["wikimatrix:1"]
    assert_balanced(stats)


@pytest.mark.parametrize(
    ("row", "match"),
    [("1.2\tonly two", "line 2: 2 tab-separated columns"), ("high\ta\tb", "line 2: score 'high'")],
)
def test_wikimatrix_malformed_rows(tmp_path: Path, row: str, match: str) -> None:
    wm = write_wikimatrix(tmp_path / "WikiMatrix.de-en.tsv.gz", ["1.2\ta\tb", row])
    with pytest.raises(InputError, match=match) as exc:
        build(tmp_path, [ParallelSource("wikimatrix", (str(wm),))])
    assert str(wm) in str(exc.value)
    assert not (tmp_path / "out" / "pairs.tsv").exists()


# ---------------------------------------------------------------------------- filters


def test_every_filter_reason_is_counted(tmp_path: Path) -> None:
    pairs = [
        ("two words", "zwei Wörter"),  # kept
        ("", "leer"),  # empty_source
        ("empty", " \t "),  # empty_target
        ("...", "Punkte"),  # no_tokens_source
        ("dots", "!!"),  # no_tokens_target
        ("one", "zwei Wörter"),  # too_short (min 2)
        ("a b c d e f g", "a b c d e f g"),  # too_long (max 6)
        ("a b", "a b c d e"),  # length_ratio (5 / 2 > 2)
        ("two words", "zwei  Wörter"),  # duplicate (after normalisation)
        ("three more words", "drei weitere Wörter"),  # kept
    ]
    en = write_lines(tmp_path / "x.en", [p[0] for p in pairs])
    de = write_lines(tmp_path / "x.de", [p[1] for p in pairs])
    filters = PairFilter(min_tokens=2, max_tokens=6, max_ratio=2.0)
    stats, out = build(
        tmp_path,
        [ParallelSource("lines", (str(en), str(de)))],
        filters=filters,
        tokenise=word_tokens,
    )
    assert [p[0] for p in out] == ["lines:1", "lines:10"]
    counts = stats["sources"][0]
    for reason in (
        "empty_source",
        "empty_target",
        "no_tokens_source",
        "no_tokens_target",
        "too_short",
        "too_long",
        "length_ratio",
        "duplicate",
    ):
        assert counts[reason] == 1, reason
    assert counts["read"] == 10 and counts["kept"] == 2
    assert stats["filters"] == {"min_tokens": 2, "max_tokens": 6, "max_ratio": 2.0, "dedupe": True}
    assert_balanced(stats)


def test_dedupe_off_keeps_repeats(tmp_path: Path) -> None:
    en = write_lines(tmp_path / "x.en", ["same pair", "same pair", "same pair"])
    de = write_lines(tmp_path / "x.de", ["gleiches Paar", "gleiches Paar", "anderes Paar"])
    src = [ParallelSource("lines", (str(en), str(de)))]
    stats, out = build(tmp_path, src)
    assert [p[0] for p in out] == ["lines:1", "lines:3"]
    assert stats["totals"]["duplicate"] == 1
    stats, out = build(tmp_path, src, filters=PairFilter(dedupe=False))
    assert len(out) == 3 and stats["totals"]["duplicate"] == 0


def test_no_pair_kept_leaves_no_output_and_says_why(tmp_path: Path) -> None:
    en = write_lines(tmp_path / "x.en", ["a b c d e", "", "one"])
    de = write_lines(tmp_path / "x.de", ["a", "x", "eins"])
    out = tmp_path / "out" / "pairs.tsv"
    out.parent.mkdir()
    out.write_text("previous\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        build(
            tmp_path,
            [ParallelSource("lines", (str(en), str(de)))],
            filters=PairFilter(min_tokens=2, max_ratio=10),
        )
    msg = str(exc.value)
    assert "no pair kept" in msg and "too_short: 2" in msg and "empty_source: 1" in msg
    assert out.read_text(encoding="utf-8") == "previous\n"
    assert not (tmp_path / "out" / "pairs.json").exists()
    assert [p.name for p in out.parent.iterdir()] == ["pairs.tsv"]  # no temporary left


def test_bad_settings_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="kind"):
        ParallelSource("tmx", ("a",))
    with pytest.raises(ConfigError, match="hub_path, other_path"):
        ParallelSource("lines", ("a",))
    with pytest.raises(ConfigError, match="wikimatrix"):
        ParallelSource("units", ("a", "b"), min_score=1.0)
    with pytest.raises(ConfigError, match="name"):
        ParallelSource("lines", ("a", "b"), name="has space")
    src = [ParallelSource("lines", ("a", "b"))]
    with pytest.raises(ConfigError, match="both 'en'"):
        build(tmp_path, src, src_lang="en", tgt_lang="en")
    with pytest.raises(ConfigError, match="max_pairs"):
        build(tmp_path, src, max_pairs=0)
    with pytest.raises(ConfigError, match="max_ratio"):
        build(tmp_path, src, filters=PairFilter(max_ratio=0.5))
    with pytest.raises(ConfigError, match="oversample"):
        build(tmp_path, src, max_pairs=3, oversample=0.5)


# --------------------------------------------------------------------------- sampling


def sampling_corpus(tmp_path: Path, n: int = 600) -> list[ParallelSource]:
    en, de = [], []
    for i in range(n):
        if i % 7 == 0:
            en.append(f"word {i} " * 8)  # length ratio 16 / 2: dropped
            de.append(f"wort{i} x")
        elif i % 11 == 0:
            en.append("")  # empty: dropped before sampling
            de.append(f"leer {i}")
        else:
            en.append(f"sentence number {i} here")
            de.append(f"Satz Nummer {i} hier")
    return [
        ParallelSource(
            "lines",
            (str(write_lines(tmp_path / "s.en", en)), str(write_lines(tmp_path / "s.de", de))),
        )
    ]


def reference_sample(sources, tmp_path: Path, max_pairs: int, seed: int) -> list[str]:
    """Brute force: every pair, ordered by priority, the first max_pairs that pass."""
    _stats, every = build(tmp_path / "ref", sources, filters=PairFilter(dedupe=False))
    ordered = sorted(every, key=lambda p: pair_priority(seed, p[0]))
    chosen = {p[0] for p in ordered[:max_pairs]}
    return [p[0] for p in every if p[0] in chosen]


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_sampling_is_bottom_k_by_hash_in_corpus_order(tmp_path: Path, seed: int) -> None:
    sources = sampling_corpus(tmp_path)
    stats, pairs = build(tmp_path, sources, max_pairs=100, seed=seed, oversample=2.0)
    ids = [p[0] for p in pairs]
    assert len(ids) == 100
    assert ids == reference_sample(sources, tmp_path, 100, seed)
    linenos = [int(i.split(":")[1]) for i in ids]
    assert linenos == sorted(linenos)  # corpus order
    assert stats["exhausted"] is False
    assert stats["sampling"]["candidates"] == 200
    assert stats["totals"]["empty_source"] == 600 // 11 - 600 // 77  # all, not just the sample
    assert stats["totals"]["kept"] == 100
    assert stats["totals"]["not_sampled"] > 0
    assert_balanced(stats)


def test_sampling_same_seed_same_bytes_other_seed_other_pairs(tmp_path: Path) -> None:
    sources = sampling_corpus(tmp_path)
    out = tmp_path / "out" / "pairs.tsv"
    build(tmp_path, sources, max_pairs=50, seed=3)
    first = out.read_bytes()
    build(tmp_path, sources, max_pairs=50, seed=3)
    assert out.read_bytes() == first
    build(tmp_path, sources, max_pairs=50, seed=4)
    other = out.read_bytes()
    assert other != first
    ids_a = {line.split("\t")[0] for line in first.decode().splitlines()[1:]}
    ids_b = {line.split("\t")[0] for line in other.decode().splitlines()[1:]}
    assert len(ids_a) == len(ids_b) == 50
    assert len(ids_a & ids_b) < 25


def test_sampling_exhausted(tmp_path: Path) -> None:
    sources = sampling_corpus(tmp_path, n=60)
    _stats, every = build(tmp_path, sources)
    stats, pairs = build(tmp_path, sources, max_pairs=1000, seed=0)
    assert pairs == every  # every good pair, in corpus order
    assert stats["exhausted"] is True
    assert stats["sampling"]["candidate_pool_full"] is False
    assert stats["totals"]["not_sampled"] == 0
    # The candidate pool (max_pairs * oversample) runs out when too many candidates fail.
    stats, pairs = build(tmp_path, sources, max_pairs=len(every), seed=0, oversample=1.0)
    assert stats["exhausted"] is True and stats["sampling"]["candidate_pool_full"] is True
    assert len(pairs) < len(every)
    assert_balanced(stats)


# ----------------------------------------------------------------------------- reading


def test_read_parallel_and_count(tmp_path: Path) -> None:
    p = tmp_path / "p.tsv"
    p.write_text("id\tsource\ttarget\na\tx y\tu\nb\tz\tv w\n", encoding="utf-8")
    assert list(read_parallel(p)) == [("a", ["x", "y"], ["u"]), ("b", ["z"], ["v", "w"])]
    assert count_pairs(p) == 2


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "empty file"),
        ("id\tsrc\ttgt\n", "line 1: header"),
        ("id\tsource\ttarget\na\tx\tu\nb\tx\n", "line 3: 2 tab-separated columns"),
        ("id\tsource\ttarget\na\t\tu\n", "line 2: source side: no tokens"),
        ("id\tsource\ttarget\n\tx\tu\n", "line 2: the id '' is empty"),
        ("id\tsource\ttarget\na\tx  y\tu\n", "line 2: source side: an empty token"),
        ("id\tsource\ttarget\na\tx\tu\u00a0v\n", r"line 2: target side: whitespace '\\xa0'"),
    ],
)
def test_read_parallel_errors(tmp_path: Path, text: str, match: str) -> None:
    p = tmp_path / "bad.tsv"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=match) as exc:
        count_pairs(p)
    assert str(p) in str(exc.value)


# ------------------------------------------------------------------------ real tools


def test_icu_tokeniser_concatenates_sentences() -> None:
    segmenter, _info = make_segmenter("en", tool="icu")
    tokenise = segmenter_tokeniser(segmenter)
    assert tokenise("Hello, world. It is fine!") == [
        "Hello",
        ",",
        "world",
        ".",
        "It",
        "is",
        "fine",
        "!",
    ]
    assert tokenise("   ") == []


@pytest.mark.skipif(
    not ((BIBLE / "en.4.tsv").is_file() and (BIBLE / "de.e.tsv").is_file()),
    reason="embedded Bible resources/embedded/bible/{en.4,de.e}.tsv not built",
)
def test_embedded_bible_en_de(tmp_path: Path) -> None:
    en_path, de_path = BIBLE / "en.4.tsv", BIBLE / "de.e.tsv"
    en_tok = segmenter_tokeniser(make_segmenter("en", tool="icu")[0])
    de_tok = segmenter_tokeniser(make_segmenter("de", tool="icu")[0])
    out, stats_path = tmp_path / "en-de.tsv", tmp_path / "en-de.json"
    stats = build_parallel(
        [ParallelSource("units", (str(en_path), str(de_path)))],
        out,
        stats_path,
        src_lang="en",
        tgt_lang="de",
        src_tokenise=en_tok,
        tgt_tokenise=de_tok,
        max_pairs=200,
        seed=0,
        progress=False,
    )
    splits = {}
    for path in (en_path, de_path):
        lines = path.read_text(encoding="utf-8").splitlines()[1:]
        splits[path] = dict(line.split("\t")[:2] for line in lines)
    pairs = list(read_parallel(out))
    assert len(pairs) == count_pairs(out) == 200
    for pid, src, tgt in pairs:
        assert splits[en_path][pid] == "train" and splits[de_path][pid] == "train"
        assert src and tgt
    assert stats["totals"]["heldout"] > 0
    assert stats["exhausted"] is False
    assert_balanced(stats)
