"""004's vocabulary matching: which rows of a cross-lingual model's word embeddings can be
initialised from a monolingual (meta-pretrained) model's.

004 section 3.2: "For each word in the cross-lingual vocabulary, we first directly search
the word in the monolingual vocabulary, and then search the normalized word if the original
one is not found." and, with bilingual dictionaries, "first searching the word translation
in the dictionaries, and then applying the mapping strategy mentioned above" (used for the
pieces the plain matching leaves: "initialize more word embeddings").

:func:`match_vocabularies` applies, to every cross-lingual piece in id order, the first rule
that finds a monolingual piece:

1. ``special``: a special token (``[PAD]``, ``[UNK]``, ...) maps to the same special token
   of the monolingual vocabulary, and to nothing else; no other piece maps to a special.
2. ``exact``: the same string.
3. ``normalised``: a monolingual piece with the same :func:`normalise` key; of several, the
   lowest id (in a merge-learnt vocabulary: the alphabet, then earlier, more frequent
   merges).
4. ``dictionary`` (only with dictionaries): the piece, a whole word (word-initial; its
   marker removed), looked up as a word of each language's dictionary, languages in code
   order, the word as written and then lowercased; its English translations, in that
   order and in dictionary file order, are searched in the monolingual vocabulary as
   word-initial pieces: the first translation found exactly, else the first found by
   :func:`normalise` (lowest id among equals).
5. ``fresh``: no match; the row keeps its random initialisation.

A continuation piece (WordPiece ``##x``; a sentencepiece piece without ``▁``) matches only a
continuation piece, a word-initial piece only a word-initial one. Which marker a vocabulary
uses is read off the vocabulary itself (:func:`marker_scheme`).
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Literal

from xlalign.core.errors import ConfigError
from xlalign.core.io import PathLike

#: Matching rules, in the order they are tried (``fresh``: nothing matched).
RULES: tuple[str, ...] = ("special", "exact", "normalised", "dictionary", "fresh")
#: BERT's and XLM-R's special tokens.
DEFAULT_SPECIALS: frozenset[str] = frozenset(
    {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "<s>", "</s>", "<pad>", "<unk>", "<mask>"}
)
WORDPIECE_PREFIX = "##"
SENTENCEPIECE_MARK = "\u2581"

Scheme = Literal["wordpiece", "sentencepiece"]


def marker_scheme(vocab: Collection[str], specials: Collection[str] = DEFAULT_SPECIALS) -> Scheme:
    """``"sentencepiece"`` when some non-special piece starts with ``▁`` (word-initial
    pieces are marked), else ``"wordpiece"`` (continuation pieces carry ``##``)."""
    for piece in vocab:
        if piece not in specials and piece.startswith(SENTENCEPIECE_MARK):
            return "sentencepiece"
    return "wordpiece"


def split_marker(piece: str, scheme: Scheme) -> tuple[str, bool]:
    """``(body, word_initial)``: the piece without its marker, and whether it starts a
    word."""
    if scheme == "sentencepiece":
        if piece.startswith(SENTENCEPIECE_MARK):
            return piece[len(SENTENCEPIECE_MARK) :], True
        return piece, False
    if piece.startswith(WORDPIECE_PREFIX) and len(piece) > len(WORDPIECE_PREFIX):
        return piece[len(WORDPIECE_PREFIX) :], False
    return piece, True


def normalise(piece: str) -> str:
    """004's "normalized word": the piece without its marker (a leading ``##`` or ``▁``),
    decomposed (Unicode NFKD), combining marks (accents) dropped, lowercased (``str.lower``).

    ``"##Été"`` -> ``"ete"``, ``"▁Straße"`` -> ``"straße"``, ``"ﬁ"`` -> ``"fi"``.
    """
    if piece.startswith(WORDPIECE_PREFIX) and len(piece) > len(WORDPIECE_PREFIX):
        piece = piece[len(WORDPIECE_PREFIX) :]
    elif piece.startswith(SENTENCEPIECE_MARK):
        piece = piece[len(SENTENCEPIECE_MARK) :]
    decomposed = unicodedata.normalize("NFKD", piece)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()


@dataclasses.dataclass
class VocabMatch:
    """The result of :func:`match_vocabularies`.

    ``mapping``: cross-lingual id -> monolingual id of every matched piece; ``rules``: the
    rule of every cross-lingual id (``"fresh"`` when unmatched); ``translations``: for the
    ``dictionary`` rule, cross id -> the English word used.
    """

    mapping: dict[int, int]
    rules: dict[int, str]
    translations: dict[int, str] = dataclasses.field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """Pieces per rule (every rule of :data:`RULES`, zeros included) and ``total``."""
        out = dict.fromkeys(RULES, 0)
        for rule in self.rules.values():
            out[rule] += 1
        out["total"] = len(self.rules)
        return out

    def pairs(self) -> list[tuple[int, int]]:
        """``(cross id, mono id)`` of the matched pieces, by cross id."""
        return sorted(self.mapping.items())


def _index(
    mono: Mapping[str, int], scheme: Scheme, specials: Collection[str]
) -> dict[tuple[str, bool], int]:
    """(normalised key, word-initial) -> the lowest monolingual id with that key."""
    out: dict[tuple[str, bool], int] = {}
    for piece, i in sorted(mono.items(), key=lambda x: x[1]):
        if piece in specials:
            continue
        _, initial = split_marker(piece, scheme)
        key = normalise(piece)
        if key:
            out.setdefault((key, initial), int(i))
    return out


def _as_piece(word: str, scheme: Scheme) -> str:
    """A whole word as a word-initial piece of ``scheme``."""
    return SENTENCEPIECE_MARK + word if scheme == "sentencepiece" else word


def match_vocabularies(
    cross: Mapping[str, int],
    mono: Mapping[str, int],
    *,
    dictionaries: Mapping[str, Mapping[str, list[str]]] | None = None,
    specials: Collection[str] = DEFAULT_SPECIALS,
) -> VocabMatch:
    """Match every piece of ``cross`` (piece -> id) to a piece of ``mono`` by the rules of
    the module docstring. ``dictionaries``: language -> {word of that language: English
    translations in file order} (:func:`read_dictionaries`)."""
    cross_scheme = marker_scheme(cross, specials)
    mono_scheme = marker_scheme(mono, specials)
    mono_ids = {p: int(i) for p, i in mono.items()}
    index = _index(mono, mono_scheme, specials)
    languages = sorted(dictionaries or {})
    mapping: dict[int, int] = {}
    rules: dict[int, str] = {}
    translations: dict[int, str] = {}
    for piece, cid in sorted(cross.items(), key=lambda x: x[1]):
        cid = int(cid)
        rule, target = "fresh", None
        if piece in specials:
            if piece in mono_ids:
                rule, target = "special", mono_ids[piece]
        else:
            body, initial = split_marker(piece, cross_scheme)
            exact = mono_ids.get(piece)
            if exact is not None:
                m_initial = split_marker(piece, mono_scheme)[1]
                if m_initial == initial:
                    rule, target = "exact", exact
            if target is None and (key := normalise(piece)):
                found = index.get((key, initial))
                if found is not None:
                    rule, target = "normalised", found
            if target is None and initial and languages and body:
                found_word = _dictionary_match(
                    body, dictionaries or {}, languages, mono_ids, index, mono_scheme, specials
                )
                if found_word is not None:
                    rule, target = "dictionary", found_word[1]
                    translations[cid] = found_word[0]
        rules[cid] = rule
        if target is not None:
            mapping[cid] = target
    return VocabMatch(mapping=mapping, rules=rules, translations=translations)


def _dictionary_match(
    word: str,
    dictionaries: Mapping[str, Mapping[str, list[str]]],
    languages: list[str],
    mono_ids: Mapping[str, int],
    index: Mapping[tuple[str, bool], int],
    mono_scheme: Scheme,
    specials: Collection[str],
) -> tuple[str, int] | None:
    """(English word, mono id) of the first translation of ``word`` found in the
    monolingual vocabulary (module docstring, rule 4), or None."""
    candidates: list[str] = []
    seen: set[str] = set()
    forms = [word] if word == word.lower() else [word, word.lower()]
    for lang in languages:
        table = dictionaries[lang]
        for form in forms:
            for en in table.get(form, ()):
                if en not in seen:
                    seen.add(en)
                    candidates.append(en)
    for en in candidates:
        piece = _as_piece(en, mono_scheme)
        if piece in mono_ids and piece not in specials:
            return en, mono_ids[piece]
    for en in candidates:
        key = normalise(en)
        if key and (key, True) in index:
            return en, index[(key, True)]
    return None


def read_dictionaries(files: Mapping[str, PathLike]) -> dict[str, dict[str, list[str]]]:
    """Per language, ``xx word -> English translations`` (file order, unique) from the
    project's dictionary files (``en_word xx_word`` per line, one file per language:
    :func:`xlalign.dictionaries.split.read_pairs`)."""
    from xlalign.dictionaries.split import read_pairs

    out: dict[str, dict[str, list[str]]] = {}
    for lang in sorted(files):
        if lang == "en":
            raise ConfigError(
                "dictionaries: a file for 'en'; expected one file per other language "
                "(English words and their translations)"
            )
        table: dict[str, list[str]] = {}
        for en, xx in read_pairs(Path(files[lang])):
            table.setdefault(xx, []).append(en)
        out[lang] = table
    return out
