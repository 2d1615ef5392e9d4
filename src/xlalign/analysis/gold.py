"""The package's hand-made English-German gold word alignments (``data/``, see its
README): the embedded default's test set for the word alignment analyses."""

from __future__ import annotations

from importlib import resources

from xlalign.core.errors import InputError
from xlalign.wordalign.aer import Gold, read_gold

HANDMADE_STEM = "handmade-en-de"


def load_handmade_gold() -> tuple[list[list[str]], list[list[str]], Gold]:
    """(English sentences, German sentences, gold links) of the hand-made set: words
    split on spaces, gold as :func:`xlalign.wordalign.aer.read_gold` (sentence index ->
    (sure, possible)), checked to lie inside the sentences."""
    data = resources.files("xlalign.analysis") / "data"
    src = [line.split() for line in (data / f"{HANDMADE_STEM}.en").read_text("utf-8").splitlines()]
    tgt = [line.split() for line in (data / f"{HANDMADE_STEM}.de").read_text("utf-8").splitlines()]
    with resources.as_file(data / f"{HANDMADE_STEM}.gold") as path:
        gold = read_gold(path, fmt="pharaoh")
    if not len(src) == len(tgt) == len(gold):
        raise InputError(
            f"{HANDMADE_STEM}: {len(src)} English, {len(tgt)} German and {len(gold)} gold lines"
        )
    for k, (sure, possible) in gold.items():
        for i, j in possible | sure:
            if not (i < len(src[k]) and j < len(tgt[k])):
                raise InputError(f"{HANDMADE_STEM}.gold line {k + 1}: link {i}-{j} out of range")
    return src, tgt, gold
