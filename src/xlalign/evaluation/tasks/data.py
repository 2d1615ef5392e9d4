"""The records of the zero-shot tasks and their one on-disk form (JSON Lines).

Every loader (official XTREME files at full scale, gold data from packages in the
embedded default) writes one of these record types to ``<split>.jsonl``, one record per
line; every task reads them back with :func:`read_records`, which checks each line
against the record's fields and names the file, line and field of anything wrong: a line
that is not a JSON object (or repeats a key), a field missing, unknown or of the wrong type
(``tokens`` a list of strings, ``heads`` a list of integers, an answer exactly ``text`` and
``answer_start``; a string with a lone surrogate escape is not text), a record its
``check`` refuses, invalid UTF-8. Blank lines are skipped.

* :class:`TaggedSentence`: words and one tag per word (NER in IOB2, UPOS).
* :class:`ParsedSentence`: words, UPOS, heads (1-based, 0 = root) and relations (CoNLL-U).
* :class:`PairExample`: two sentences and a label (XNLI, PAWS-X).
* :class:`QAExample`: SQuAD-style context, question and gold answers (character offsets).
* :class:`RetrievalPair`: a sentence and its English translation (Tatoeba, BUCC, UDHR,
  Bible verses).

``silver`` marks records whose labels come from a tagger rather than annotators; it
travels with every result computed from them.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.formats.text import is_text, iter_numbered_lines, json_line
from xlalign.core.io import PathLike, atomic_open


@dataclass
class TaggedSentence:
    id: str
    tokens: list[str]
    tags: list[str]

    def check(self) -> str | None:
        if not self.tokens:
            return "no tokens"
        if len(self.tokens) != len(self.tags):
            return f"{len(self.tokens)} tokens but {len(self.tags)} tags"
        if any(not t for t in self.tokens):
            return "an empty token"
        return None


@dataclass
class ParsedSentence:
    id: str
    tokens: list[str]
    upos: list[str]
    heads: list[int]  # 1-based index of each word's head; 0 = the root
    deprels: list[str]

    def check(self) -> str | None:
        n = len(self.tokens)
        if not n:
            return "no tokens"
        if not (len(self.upos) == len(self.heads) == len(self.deprels) == n):
            return "tokens, upos, heads and deprels differ in length"
        if any(not (0 <= h <= n) for h in self.heads):
            return f"a head outside 0..{n}"
        if any(h == i + 1 for i, h in enumerate(self.heads)):
            return "a word is its own head"
        return None


@dataclass
class PairExample:
    id: str
    sentence1: str
    sentence2: str
    label: str

    def check(self) -> str | None:
        if not self.sentence1.strip() or not self.sentence2.strip():
            return "an empty sentence"
        return None


@dataclass
class QAExample:
    id: str
    context: str
    question: str
    #: gold answers: ``{"text": str, "answer_start": int}`` (character offset in context)
    answers: list[dict[str, Any]] = field(default_factory=list)
    title: str = ""

    def check(self) -> str | None:
        if not self.context or not self.question.strip():
            return "an empty context or question"
        for a in self.answers:
            if not isinstance(a, dict) or "text" not in a or "answer_start" not in a:
                return "an answer without 'text' and 'answer_start'"
        return None


@dataclass
class RetrievalPair:
    id: str
    source: str  # the non-English sentence
    target: str  # its English translation

    def check(self) -> str | None:
        if not self.source.strip() or not self.target.strip():
            return "an empty sentence"
        return None


RECORD_TYPES: dict[str, type] = {
    "tagged": TaggedSentence,
    "parsed": ParsedSentence,
    "pair": PairExample,
    "qa": QAExample,
    "retrieval": RetrievalPair,
}

R = TypeVar("R")

_STR, _STRS, _INTS = "a string", "a list of strings", "a list of integers"
#: The JSON type of every field of every record type.
FIELD_TYPES: dict[type, dict[str, str]] = {
    TaggedSentence: {"id": _STR, "tokens": _STRS, "tags": _STRS},
    ParsedSentence: {"id": _STR, "tokens": _STRS, "upos": _STRS, "heads": _INTS, "deprels": _STRS},
    PairExample: {"id": _STR, "sentence1": _STR, "sentence2": _STR, "label": _STR},
    QAExample: {
        "id": _STR,
        "context": _STR,
        "question": _STR,
        "answers": "a list of {'text': string, 'answer_start': integer}",
        "title": _STR,
    },
    RetrievalPair: {"id": _STR, "source": _STR, "target": _STR},
}


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _has_type(value: Any, kind: str) -> bool:
    if kind == _STR:
        return is_text(value)
    if not isinstance(value, list):
        return False
    if kind == _STRS:
        return all(is_text(v) for v in value)
    if kind == _INTS:
        return all(_is_int(v) for v in value)
    return all(
        isinstance(a, dict)
        and a.keys() == {"text", "answer_start"}
        and is_text(a["text"])
        and _is_int(a["answer_start"])
        for a in value
    )


def write_records(path: PathLike, records: Iterable[Any]) -> int:
    """Write records as JSON Lines, atomically; returns how many were written."""
    n = 0
    with atomic_open(path, "w", encoding="utf-8") as fh:
        for rec in records:
            problem = rec.check()
            if problem:
                raise InputError(f"{path}: record {rec.id!r}: {problem}")
            fh.write(json.dumps(dataclasses.asdict(rec), ensure_ascii=False) + "\n")
            n += 1
    return n


def iter_records(path: PathLike, kind: type[R] | str) -> Iterator[R]:
    """Read records of type ``kind`` (a class or a key of :data:`RECORD_TYPES`)."""
    cls = RECORD_TYPES[kind] if isinstance(kind, str) else kind
    names = {f.name for f in dataclasses.fields(cls)}
    required = {
        f.name
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    types = FIELD_TYPES.get(cls, {})
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such file (expected {cls.__name__} records, one per line)")
    for lineno, line in iter_numbered_lines(p, what=f"{cls.__name__} records (JSON Lines)"):
        if not line.strip():
            continue
        obj = json_line(p, lineno, line, what="a record")
        if not isinstance(obj, dict):
            raise InputError(f"{p}:{lineno}: expected a JSON object")
        missing = required - obj.keys()
        if missing:
            raise InputError(f"{p}:{lineno}: a {cls.__name__} record needs {sorted(missing)}")
        unknown = obj.keys() - names
        if unknown:
            raise InputError(
                f"{p}:{lineno}: a {cls.__name__} record has no field(s) "
                f"{sorted(unknown)[:5]}; expected {sorted(names)}"
            )
        for key, value in obj.items():
            if key in types and not _has_type(value, types[key]):
                raise InputError(
                    f"{p}:{lineno}: field {key!r} is not {types[key]} (found "
                    f"{type(value).__name__}; strings must be valid Unicode)"
                )
        rec = cls(**obj)
        problem = rec.check()
        if problem:
            raise InputError(f"{p}:{lineno}: record {rec.id!r}: {problem}")
        yield rec


def read_records(path: PathLike, kind: type[R] | str) -> list[R]:
    """All records of a file (see :func:`iter_records`)."""
    return list(iter_records(path, kind))


def has_entity(record: TaggedSentence) -> bool:
    """Whether a sentence holds at least one entity (a tag other than ``O``)."""
    return any(tag != "O" for tag in record.tags)


def entity_sample(
    records: Sequence[TaggedSentence], n: int | None, *, entity_share: float, seed: int
) -> tuple[list[TaggedSentence], dict[str, Any]]:
    """``n`` sentences of ``records`` (all of them when ``n`` is None), of which
    ``round(n * entity_share)`` hold an entity (:func:`has_entity`) and the rest none,
    each part drawn at random without replacement with ``numpy.random.default_rng(seed)``
    and the whole kept in file order. When one part has too few sentences, the other
    makes up the difference (what the sample holds is in the returned stats). The same
    records, ``n``, share and seed give the same sample.

    Returns the sample and ``{"method": "entity_share", "entity_share", "seed",
    "examples", "with_entities", "pool", "pool_with_entities"}``.
    """
    if not 0.0 <= entity_share <= 1.0:
        raise ConfigError(f"entity_share must be in [0, 1], got {entity_share}")
    if n is not None and n < 1:
        raise ConfigError(f"entity sample: n must be >= 1, got {n}")
    pools: tuple[list[int], list[int]] = ([], [])  # (with an entity, without)
    for i, rec in enumerate(records):
        pools[0 if has_entity(rec) else 1].append(i)
    size = len(records) if n is None else min(n, len(records))
    want = round(size * entity_share)
    take = [min(want, len(pools[0])), min(size - want, len(pools[1]))]
    short = size - sum(take)
    take[0] += min(short, len(pools[0]) - take[0])  # one part makes up for the other
    take[1] = size - take[0]
    rng = np.random.default_rng(seed)
    chosen: list[int] = []
    for pool, k in zip(pools, take, strict=True):
        chosen.extend(pool[int(j)] for j in rng.choice(len(pool), size=k, replace=False))
    chosen.sort()
    stats = {
        "method": "entity_share",
        "entity_share": entity_share,
        "seed": seed,
        "examples": len(chosen),
        "with_entities": take[0],
        "pool": len(records),
        "pool_with_entities": len(pools[0]),
    }
    return [records[i] for i in chosen], stats
