"""001's transformations of English into a derived language (Appendix F), on words.

001 (after Deshpande et al. 2021) derives a language L_deriv from English by composing:

* transliteration, T_trans: "a copy of the vocabulary for all the tokens ... other than the
  special tokens". Here at the string level: every character ``c`` of a word becomes
  ``chr(0xF0000 + ord(c))`` (Supplementary Private Use Area-A) for the Basic Multilingual
  Plane and ``chr(0x100000 + ord(c) - 0x10000)`` (Private Use Area-B) for plane 1 (emoji,
  mathematical letters). The map is a bijection on those planes, so a WordPiece vocabulary
  copied piece by piece (:mod:`xlalign.derived.vocab`) segments a transliterated word into
  exactly the copies of the natural pieces. Characters of planes 2-16 (and text already in
  the private-use planes) are an error naming the character.
* inversion, T_inv: "we invert the order of tokens in a sentence. We use the period token to
  decide sentence boundaries": the words between two period tokens (``.``), or between a
  period and either end, are reversed; each period keeps its position.
* syntax, T_syn: see :func:`syntax_order`.

Transformations act on words before subword tokenisation (001 G.2) and return the
permutation ``order`` (derived position -> natural word index), so task tags move with their
words and the natural-derived word alignment is known exactly (:func:`gold_links`).
A composition ``"trans+inv"`` is T_trans ∘ T_inv: the parts apply right to left (inversion
first). Transliteration changes strings only, so it commutes with the re-orderings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xlalign.core.errors import ConfigError, InputError

if TYPE_CHECKING:
    import numpy as np

    from xlalign.derived.parse import Parse

#: The transformation names a composition is made of.
TRANSFORMS = ("trans", "inv", "syn")
#: The token that ends a sentence for inversion (001 Appendix F).
PERIOD = "."
#: Dependency relations of a verb's object (spaCy's English labels; UD's ``obj``).
OBJECT_DEPS = frozenset({"dobj", "obj"})
#: Dependency relation of a noun's adjectival modifier.
ADJECTIVE_DEPS = frozenset({"amod"})

_PUA_A = 0xF0000  # Supplementary Private Use Area-A: images of the BMP
_PUA_B = 0x100000  # Supplementary Private Use Area-B: images of plane 1
_PLANE = 0x10000


# ------------------------------------------------------------------------------ transliteration


def _char_error(word: str, c: str, why: str) -> InputError:
    return InputError(f"word {word!r}: character U+{ord(c):04X} {why}")


def transliterate(word: str) -> str:
    """T_trans of one word: each character moved to its private-use image (module docstring).

    A character outside planes 0-1, or one already in the private-use planes 15-16 (it
    would collide with an image), raises :class:`InputError` naming it.
    """
    out = []
    for c in word:
        o = ord(c)
        if o >= _PUA_A:
            raise _char_error(word, c, "is in the private-use planes used for transliteration")
        if o >= 2 * _PLANE:
            raise _char_error(word, c, "is outside planes 0-1; only those have a one-to-one image")
        out.append(chr(_PUA_A + o) if o < _PLANE else chr(_PUA_B + o - _PLANE))
    return "".join(out)


def untransliterate(word: str) -> str:
    """The inverse of :func:`transliterate`; a character that is not an image raises
    :class:`InputError` naming it."""
    out = []
    for c in word:
        o = ord(c)
        if _PUA_A <= o < _PUA_A + _PLANE:
            out.append(chr(o - _PUA_A))
        elif _PUA_B <= o < _PUA_B + _PLANE:
            out.append(chr(o - _PUA_B + _PLANE))
        else:
            raise _char_error(word, c, "is not a transliterated character")
    return "".join(out)


def is_transliterated(word: str) -> bool:
    """Whether every character of ``word`` is a transliteration image (and it is non-empty)."""
    return bool(word) and all(ord(c) >= _PUA_A for c in word)


# ------------------------------------------------------------------------------ settings


def parse_spec(spec: str, *, key: str = "derived.transformations") -> tuple[str, ...]:
    """The parts of a composition, as written: ``"trans+inv"`` -> ``("trans", "inv")``.

    Each part is one of :data:`TRANSFORMS`, at most once; a bad part raises
    :class:`ConfigError` naming ``key``, the spec and the part.
    """
    if not isinstance(spec, str) or not spec:
        raise ConfigError(f"{key}: {spec!r}; expected names of {TRANSFORMS} joined by '+'")
    parts = tuple(spec.split("+"))
    for part in parts:
        if part not in TRANSFORMS:
            raise ConfigError(
                f"{key}: {spec!r}: unknown transformation {part!r}; expected one of "
                f"{TRANSFORMS} joined by '+' (e.g. 'trans+inv')"
            )
    dup = sorted({p for p in parts if parts.count(p) > 1})
    if dup:
        raise ConfigError(f"{key}: {spec!r}: transformation {dup[0]!r} given more than once")
    return parts


@dataclass(frozen=True)
class SyntaxParams:
    """Probabilities of :func:`syntax_order`'s two moves (config ``derived.syntax``)."""

    #: moving an object of a head before it (SVO -> SOV)
    object_verb: float = 1.0
    #: moving an adjectival modifier of a head after it (AN -> NA)
    noun_adjective: float = 1.0

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if not 0.0 <= float(value) <= 1.0:
                raise ConfigError(f"derived.syntax.{f.name}: {value}; expected a number in [0, 1]")

    @classmethod
    def from_mapping(
        cls, values: Mapping[str, Any] | None, *, key: str = "derived.syntax"
    ) -> SyntaxParams:
        """From config settings; an unknown key raises :class:`ConfigError` naming it."""
        values = dict(values or {})
        known = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ConfigError(f"{key}.{unknown[0]}: unknown setting; expected one of {known}")
        return cls(**{k: float(v) for k, v in values.items()})


# ------------------------------------------------------------------------------ re-orderings


def invert_order(words: Sequence[str], order: Sequence[int]) -> list[int]:
    """T_inv of the sequence ``[words[i] for i in order]``: the runs of words between period
    tokens are reversed, the periods stay in place. Returns the new ``order``."""
    out: list[int] = []
    run: list[int] = []
    for i in order:
        if words[i] == PERIOD:
            out += run[::-1]
            out.append(i)
            run = []
        else:
            run.append(i)
    return out + run[::-1]


@dataclass
class _Draws:
    rng: np.random.Generator | None

    def take(self, p: float) -> bool:
        if p >= 1.0:
            return True
        if p <= 0.0:
            return False
        if self.rng is None:
            raise ValueError(f"a move with probability {p} needs a random generator (rng)")
        return bool(self.rng.random() < p)


def syntax_order(
    parse: Parse,
    order: Sequence[int],
    *,
    params: SyntaxParams | None = None,
    rng: np.random.Generator | None = None,
    moved: dict[str, int] | None = None,
) -> list[int]:
    """T_syn: English word order moved towards French's, on a dependency parse.

    001 uses Wang and Eisner's (2016) galactic dependencies: every dependent of a noun or
    verb is re-ordered by a stochastic model of French trained on a treebank. This is a
    simpler, explicit stand-in with the two changes 001 names (its Table 9):

    * SVO -> SOV: an object (relation in :data:`OBJECT_DEPS`) after its head moves, with
      its whole subtree, to just before the head, with probability ``object_verb``;
    * AN -> NA: an adjectival modifier (:data:`ADJECTIVE_DEPS`) before its head moves, with
      its subtree, to just after the head, with probability ``noun_adjective``.

    Every other dependent, punctuation included, keeps its place relative to its head, so
    sentence-final punctuation stays last. The sentence is rebuilt from the tree: each head
    with its dependents' subtrees as blocks, in the current order of their words (``order``,
    derived position -> word index; heads of the natural sentence). A non-projective parse
    comes out projective. Decisions are drawn from ``rng`` in post-order, one per candidate
    (none when a probability is 0 or 1). ``moved`` (optional) counts ``objects`` and
    ``adjectives`` moved. Returns the new ``order``.
    """
    params = params or SyntaxParams()
    n = len(parse.heads)
    if sorted(order) != list(range(n)):
        raise ValueError(f"order {list(order)} is not a permutation of the parse's {n} words")
    pos = [0] * n
    for p, i in enumerate(order):
        pos[i] = p
    children: list[list[int]] = [[] for _ in range(n)]
    roots: list[int] = []
    for i, h in enumerate(parse.heads):
        if h < 0 or h == i:
            roots.append(i)
        elif h >= n:
            raise InputError(
                f"parse of {parse.words!r}: head {h} of word {i} is outside 0..{n - 1}"
            )
        else:
            children[h].append(i)
    draws = _Draws(rng)
    counts = moved if moved is not None else {}
    counts.setdefault("objects", 0)
    counts.setdefault("adjectives", 0)
    blocks: dict[int, list[int]] = {}
    # iterative post-order from each root (a deep chain must not hit the recursion limit)
    for root in sorted(roots, key=pos.__getitem__):
        stack = [(root, False)]
        while stack:
            node, done = stack.pop()
            if not done:
                stack.append((node, True))
                stack += [(c, False) for c in children[node]]
                continue
            deps = sorted(children[node], key=pos.__getitem__)
            seq = sorted([node, *deps], key=pos.__getitem__)
            at = seq.index(node)
            objects = [c for c in seq[at + 1 :] if parse.deps[c] in OBJECT_DEPS]
            objects = [c for c in objects if draws.take(params.object_verb)]
            adjectives = [c for c in seq[:at] if parse.deps[c] in ADJECTIVE_DEPS]
            adjectives = [c for c in adjectives if draws.take(params.noun_adjective)]
            counts["objects"] += len(objects)
            counts["adjectives"] += len(adjectives)
            moving = set(objects) | set(adjectives)
            before = [c for c in seq[:at] if c not in moving] + objects
            after = adjectives + [c for c in seq[at + 1 :] if c not in moving]
            out: list[int] = []
            for c in before:
                out += blocks.pop(c)
            out.append(node)
            for c in after:
                out += blocks.pop(c)
            blocks[node] = out
    result = [i for r in sorted(roots, key=pos.__getitem__) for i in blocks.pop(r)]
    if len(result) != n:
        raise InputError(f"parse of {parse.words!r}: the heads do not form a tree (a cycle)")
    return result


# ------------------------------------------------------------------------------ tags


def _is_iob(tags: Sequence[str]) -> bool:
    return any(t[:2] in ("B-", "I-") for t in tags) and all(
        t == "O" or t[:2] in ("B-", "I-") for t in tags
    )


def repair_iob(tags: Sequence[str]) -> list[str]:
    """IOB2 from a tag sequence alone (001 G.1: "B always comes before" I): an ``I-X`` that
    does not follow ``B-X`` or ``I-X`` becomes ``B-X``; every other tag is kept."""
    out: list[str] = []
    prev = "O"
    for t in tags:
        if t.startswith("I-") and prev[2:] != t[2:]:
            t = "B-" + t[2:]
        out.append(t)
        prev = t
    return out


def _entities(tags: Sequence[str]) -> list[int]:
    """Entity number of each word (-1 for ``O``), reading IOB2 leniently (an ``I-X`` that
    does not continue an ``X`` starts a new entity)."""
    out: list[int] = []
    k = -1
    prev = "O"
    for t in tags:
        if t == "O":
            out.append(-1)
        else:
            if t.startswith("B-") or prev[2:] != t[2:]:
                k += 1
            out.append(k)
        prev = t
    return out


def move_tags(tags: Sequence[str], order: Sequence[int]) -> list[str]:
    """The tags following their words (``order``: derived position -> natural index).

    IOB2 tags (all ``O``, ``B-X`` or ``I-X``) are rewritten so that each contiguous run of
    one natural entity starts with ``B-`` and continues with ``I-`` (an inverted
    ``B-PER I-PER`` stays one entity, ``B-PER I-PER``; an entity split by a move becomes
    several). Other tag sets (POS) are moved unchanged.
    """
    moved = [tags[i] for i in order]
    if not _is_iob(tags):
        return moved
    entity = _entities(tags)
    out: list[str] = []
    prev = -1
    for i in order:
        e = entity[i]
        if e < 0:
            out.append("O")
        else:
            out.append(("I-" if e == prev else "B-") + tags[i][2:])
        prev = e
    return out


# ------------------------------------------------------------------------------ composition


@dataclass(frozen=True)
class Derived:
    """One derived sentence: its words, its tags (when given) and ``order`` (derived
    position -> natural word index); ``moved`` counts the syntax moves."""

    words: list[str]
    tags: list[str] | None
    order: list[int]
    moved: dict[str, int] = field(default_factory=dict)

    def links(self) -> list[tuple[int, int]]:
        """The exact word alignment, ``(natural index, derived index)`` sorted."""
        return gold_links(self.order)


def gold_links(order: Sequence[int]) -> list[tuple[int, int]]:
    """``(natural index i, derived index j)`` for every word, sorted: the Pharaoh ``i-j``
    links of a natural sentence (source) and its derived form (target)."""
    return sorted((int(i), j) for j, i in enumerate(order))


def apply(
    spec: str | Sequence[str],
    words: Sequence[str],
    parse: Parse | None = None,
    tags: Sequence[str] | None = None,
    rng: np.random.Generator | None = None,
    *,
    syntax: SyntaxParams | None = None,
) -> Derived:
    """The composition ``spec`` (``"trans+syn"`` or its parts) applied to one sentence.

    ``parse`` (of exactly ``words``) is needed by ``syn``; ``rng`` by ``syn`` when a move
    probability is strictly between 0 and 1. ``tags`` (one per word) move with their words
    (:func:`move_tags`).
    """
    parts = parse_spec(spec) if isinstance(spec, str) else parse_spec("+".join(spec))
    words = list(words)
    if tags is not None and len(tags) != len(words):
        raise InputError(f"sentence {words!r}: {len(tags)} tags for {len(words)} words")
    order = list(range(len(words)))
    moved: dict[str, int] = {}
    for part in reversed(parts):
        if part == "inv":
            order = invert_order(words, order)
        elif part == "syn":
            if parse is None:
                raise ValueError("the syntax transformation needs the sentence's parse")
            if list(parse.words) != words:
                raise InputError(
                    f"parse of {list(parse.words)!r} does not match the sentence {words!r}"
                )
            order = syntax_order(parse, order, params=syntax, rng=rng, moved=moved)
    out = [words[i] for i in order]
    if "trans" in parts:
        out = [transliterate(w) for w in out]
    return Derived(
        words=out,
        tags=None if tags is None else move_tags(list(tags), order),
        order=order,
        moved=moved,
    )
