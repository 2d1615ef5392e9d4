"""A tiny world for continued pre-training tests: a tiny BERT without an MLM head, text in
two languages, static spaces, a dictionary and word-aligned bitext in the stages' formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from tiny_encoder import make_tiny_encoder

EN = [
    "the cat sat on the mat and the dog ran to the house",
    "a big dog saw a small cat near the red house",
    "the sun and the moon are in the sky over the sea",
    "my friend reads a book in the garden every day",
    "the water in the river is cold and clear today",
    "a small bird sings on the tree near the house",
]
DE = [
    "die katze sass auf der matte und der hund lief zum haus",
    "ein grosser hund sah eine kleine katze nahe dem roten haus",
    "die sonne und der mond sind am himmel ueber dem meer",
    "mein freund liest ein buch im garten jeden tag",
    "das wasser im fluss ist kalt und klar heute",
    "ein kleiner vogel singt auf dem baum nahe dem haus",
]
DICT = [
    ("cat", "katze"),
    ("dog", "hund"),
    ("house", "haus"),
    ("sun", "sonne"),
    ("moon", "mond"),
    ("book", "buch"),
    ("garden", "garten"),
    ("water", "wasser"),
    ("river", "fluss"),
    ("bird", "vogel"),
    ("tree", "baum"),
    ("sea", "meer"),
    ("day", "tag"),
    ("friend", "freund"),
]


def _write_space(stem: Path, words: list[str], dim: int, seed: int) -> None:
    from xlalign.static.vectors import write_npy

    rng = np.random.default_rng(seed)
    write_npy(words, rng.standard_normal((len(words), dim)).astype(np.float32), stem)


def build_world(root: Path) -> dict[str, Any]:
    """Write the tiny world into ``root``."""
    enc = make_tiny_encoder(root / "encoder", EN + DE, layers=2)
    text = {}
    for lang, lines in (("en", EN), ("de", DE)):
        path = root / f"{lang}.txt"
        # paragraphs: the sentences repeated with variations (enough for packing + hold-out)
        paras = [" ".join(lines[(i + j) % len(lines)] for j in range(2)) for i in range(30)]
        path.write_text("\n".join(paras) + "\n", encoding="utf-8")
        text[lang] = str(path)
    words = {
        lang: sorted({w for line in lines for w in line.split()})
        for lang, lines in (("en", EN), ("de", DE))
    }
    static32, static7 = {}, {}
    for i, lang in enumerate(("en", "de")):
        _write_space(root / "s32" / lang, words[lang], 32, i)
        _write_space(root / "s7" / lang, words[lang], 7, 10 + i)
        static32[lang] = str(root / "s32" / lang)
        static7[lang] = str(root / "s7" / lang)
    dic = root / "de.dict.txt"
    dic.write_text("".join(f"{a} {b}\n" for a, b in DICT), encoding="utf-8")
    # bitext + 1-to-1 links of identical positions where both words are dictionary pairs
    corpus = root / "corpus.tsv"
    pairs = root / "pairs.tsv"
    trans = dict(DICT)
    rows = ["id\tsource\ttarget"]
    links = ["pair_id\tsentence\tsource_pos\ttarget_pos\tsource\ttarget"]
    for k, (s, t) in enumerate(zip(EN * 4, DE * 4, strict=True)):
        rows.append(f"p{k}\t{s}\t{t}")
        sw, tw = s.split(), t.split()
        for i, w in enumerate(sw):
            if w in trans and trans[w] in tw:
                j = tw.index(trans[w])
                links.append(f"p{k}\t{k}\t{i}\t{j}\t{w}\t{trans[w]}")
    corpus.write_text("\n".join(rows) + "\n", encoding="utf-8")
    pairs.write_text("\n".join(links) + "\n", encoding="utf-8")
    return {
        "root": root,
        "encoder": enc,
        "text": text,
        "static32": static32,
        "static7": static7,
        "dictionaries": {"de": str(dic)},
        "aligned": {"en-de": [str(pairs), str(corpus)]},
        "parallel": {"en-de": str(corpus)},
    }


def files_for(world: dict[str, Any], static: str = "static32") -> dict[str, Any]:
    return {
        "text": world["text"],
        "static": world[static],
        "dictionaries": world["dictionaries"],
        "aligned": world["aligned"],
        "parallel": world["parallel"],
    }


def read_history(stats: Path) -> list[dict[str, Any]]:
    return json.loads(stats.read_text())["learning_curve"]
