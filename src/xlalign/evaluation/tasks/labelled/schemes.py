"""Entity tagging schemes: read spans from IOB2 or BIOES (BILOU) tags, map their types,
write them back as IOB2.

Conversion goes through spans, so it is exact for well-formed input: ``S-X`` (``U-X``)
becomes ``B-X``, ``E-X`` (``L-X``) becomes ``I-X``, and adjacent entities of one type
stay apart. Ill-formed sequences are repaired the way span readers (seqeval, conlleval)
read them, and every repair is counted under a name:

* ``inside_without_begin``: ``I-X`` or ``E-X`` not continuing an open ``X`` span starts
  a new span;
* ``begin_not_ended`` (BIOES only): a span opened by ``B-X`` that no ``E-X`` closes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike
from xlalign.evaluation.tasks.data import TaggedSentence
from xlalign.evaluation.tasks.labelled.common import LabelTally, lookup, read_token_lines

SCHEMES = ("iob2", "bioes")
_PREFIXES = {"iob2": frozenset("BI"), "bioes": frozenset("BIESLU")}


@dataclass(frozen=True)
class Span:
    """Tokens ``start`` to ``end`` (exclusive) form one entity of ``type``."""

    start: int
    end: int
    type: str


def _split_tag(tag: str, scheme: str, where: str) -> tuple[str, str]:
    if tag == "O":
        return "O", ""
    prefix, sep, etype = tag.partition("-")
    if not sep or not etype or prefix not in _PREFIXES[scheme]:
        allowed = "/".join(sorted(_PREFIXES[scheme]))
        raise InputError(
            f"{where}: tag {tag!r} is not O or {allowed}-TYPE ({scheme.upper()} expected)"
        )
    return prefix, etype


def check_tag(tag: str, *, scheme: str, type_map: Mapping[str, str | None], where: str) -> None:
    """Refuse a malformed tag or an entity type the map lacks, naming ``where`` (file:line);
    readers call it per token so that the error points at the line."""
    _prefix, etype = _split_tag(tag, scheme, where)
    if etype:
        lookup(type_map, etype, where=where, what="entity type")


def read_spans(
    tags: Sequence[str], *, scheme: str, where: str, repairs: Counter[str] | None = None
) -> list[Span]:
    """The entity spans of one sentence's tags in ``scheme`` ("iob2" or "bioes")."""
    if scheme not in SCHEMES:
        raise ValueError(f"unknown tagging scheme {scheme!r}; expected one of {SCHEMES}")
    repairs = repairs if repairs is not None else Counter()
    spans: list[Span] = []
    open_start: int | None = None
    open_type = ""

    def close(end: int, *, ended: bool) -> None:
        nonlocal open_start
        if open_start is not None:
            spans.append(Span(open_start, end, open_type))
            if scheme == "bioes" and not ended:
                repairs["begin_not_ended"] += 1
        open_start = None

    for i, tag in enumerate(tags):
        prefix, etype = _split_tag(tag, scheme, where)
        if prefix == "O":
            close(i, ended=False)
        elif prefix == "B":
            close(i, ended=False)
            open_start, open_type = i, etype
        elif prefix in "SU":
            close(i, ended=False)
            spans.append(Span(i, i + 1, etype))
        else:  # I, E, L: continue the open span of the same type, else start one
            if open_start is None or open_type != etype:
                close(i, ended=False)
                repairs["inside_without_begin"] += 1
                open_start, open_type = i, etype
            if prefix in "EL":
                close(i + 1, ended=True)
    if scheme == "iob2":
        close(len(tags), ended=True)
    else:
        close(len(tags), ended=False)
    return spans


def write_iob2(n: int, spans: Sequence[Span]) -> list[str]:
    """IOB2 tags of ``n`` tokens with these (non-overlapping) spans."""
    tags = ["O"] * n
    for s in spans:
        tags[s.start] = f"B-{s.type}"
        for i in range(s.start + 1, s.end):
            tags[i] = f"I-{s.type}"
    return tags


def to_iob2(
    tags: Sequence[str],
    *,
    scheme: str,
    type_map: Mapping[str, str | None],
    where: str,
    tally: LabelTally | None = None,
    repairs: Counter[str] | None = None,
) -> list[str]:
    """One sentence's tags in ``scheme`` as IOB2 with entity types mapped by ``type_map``
    (None drops the entity to O). A type the map lacks is an error naming ``where``; the
    tally counts tokens per ``"TYPE -> NEW"`` entry (and ``"O -> O"``)."""
    spans = read_spans(tags, scheme=scheme, where=where, repairs=repairs)
    kept: list[Span] = []
    for s in spans:
        new = lookup(type_map, s.type, where=where, what="entity type")
        if tally is not None:
            tally.table_hit(s.type, new, s.end - s.start)
        if new is not None:
            kept.append(Span(s.start, s.end, new))
    if tally is not None:
        n_outside = len(tags) - sum(s.end - s.start for s in spans)
        if n_outside:
            tally.table_hit("O", "O", n_outside)
    return write_iob2(len(tags), kept)


def read_iob2_columns(
    path: PathLike,
    *,
    columns: set[int],
    type_map: Mapping[str, str | None],
    id_prefix: str,
    tally: LabelTally,
    repairs: Counter[str],
    dropped: Counter[str],
) -> list[TaggedSentence]:
    """Sentences of a one-token-per-line IOB2 file (token first, tag last, ``columns``
    columns) with types mapped by ``type_map``; ids are ``<id_prefix><first line>``. A bad
    tag or unknown type is an error naming its line."""
    records = []
    for start, tokens, tags in read_token_lines(path, columns=columns, dropped=dropped):
        for i, tag in enumerate(tags):
            check_tag(tag, scheme="iob2", type_map=type_map, where=f"{path}:{start + i}")
        iob2 = to_iob2(
            tags,
            scheme="iob2",
            type_map=type_map,
            where=f"{path}:{start}",
            tally=tally,
            repairs=repairs,
        )
        records.append(TaggedSentence(id=f"{id_prefix}{start}", tokens=tokens, tags=iob2))
    if not records:
        raise InputError(f"{path}: no sentences")
    return records
