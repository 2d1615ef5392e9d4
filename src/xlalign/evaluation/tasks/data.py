"""The records of the zero-shot tasks and their one on-disk form (JSON Lines).

Every loader (official XTREME files at full scale, gold data from packages in the
embedded default) writes one of these record types to ``<split>.jsonl``, one record per
line; every task reads them back with :func:`read_records`, which checks each line
against the record's fields and names the file, line and field of anything wrong.

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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from xlalign.core.errors import InputError
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
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such file (expected {cls.__name__} records, one per line)")
    with p.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{p}:{lineno}: not JSON ({exc.msg})") from None
            if not isinstance(obj, dict):
                raise InputError(f"{p}:{lineno}: expected a JSON object")
            missing = required - obj.keys()
            if missing:
                raise InputError(f"{p}:{lineno}: a {cls.__name__} record needs {sorted(missing)}")
            rec = cls(**{k: v for k, v in obj.items() if k in names})
            problem = rec.check()
            if problem:
                raise InputError(f"{p}:{lineno}: record {rec.id!r}: {problem}")
            yield rec


def read_records(path: PathLike, kind: type[R] | str) -> list[R]:
    """All records of a file (see :func:`iter_records`)."""
    return list(iter_records(path, kind))
