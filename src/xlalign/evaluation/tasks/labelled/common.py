"""What every labelled-data builder shares.

Label tables that refuse an unknown tag (naming the file, line and tag), a tally of how
many tokens each table entry and each word rule labelled (printed in the stats, so that
every label map is visible beside the results), a seeded train/dev split, and the writer
of a task's split files plus its stats JSON.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, iter_lines, write_json
from xlalign.evaluation.tasks.data import RetrievalPair, TaggedSentence, write_records

log = logging.getLogger(__name__)

T = TypeVar("T")

#: The 17 Universal POS tags (UD v2).
UPOS: tuple[str, ...] = (
    "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON",
    "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X",
)  # fmt: skip
UPOS_SET = frozenset(UPOS)

#: The entity types of the NER task (PAN-X's).
NER_TYPES: tuple[str, ...] = ("PER", "LOC", "ORG")


class LabelTally:
    """How many tokens each table entry (``"SRC -> DST"``) and each named rule labelled.

    A token counts once: under the rule that decided its label, or else under the table
    entry it went through.
    """

    def __init__(self) -> None:
        self.table: Counter[str] = Counter()
        self.rules: Counter[str] = Counter()

    def table_hit(self, src: str, dst: str | None, n: int = 1) -> None:
        self.table[f"{src} -> {dst if dst is not None else 'O'}"] += n

    def rule_hit(self, name: str) -> None:
        self.rules[name] += 1

    def as_dict(self) -> dict[str, dict[str, int]]:
        return {
            "table": dict(sorted(self.table.items())),
            "rules": dict(sorted(self.rules.items())),
        }


def lookup(table: Mapping[str, T], tag: str, *, where: str, what: str = "tag") -> T:
    """``table[tag]``, or an :class:`InputError` naming ``where`` (file:line) and the tag."""
    try:
        return table[tag]
    except KeyError:
        known = ", ".join(sorted(table))
        raise InputError(
            f"{where}: {what} {tag!r} has no mapping; the label map knows: {known}"
        ) from None


def check_upos(tags: Iterable[str], *, where: str) -> None:
    """Refuse anything that is not one of the 17 UPOS tags (a label map's own bug)."""
    for tag in tags:
        if tag not in UPOS_SET:
            raise InputError(f"{where}: label {tag!r} is not a UPOS tag; expected one of {UPOS}")


def check_table(table: Mapping[str, str | None], *, name: str, allowed: Iterable[str]) -> None:
    """Every value of a label table is in ``allowed`` (or None for "drop to O")."""
    allowed = set(allowed)
    bad = {k: v for k, v in table.items() if v is not None and v not in allowed}
    if bad:
        raise ValueError(f"label map {name}: targets outside {sorted(allowed)}: {bad}")


def seeded_split(items: Sequence[T], *, dev_fraction: float, seed: int) -> tuple[list[T], list[T]]:
    """A deterministic train/dev split: ``round(n * dev_fraction)`` items drawn by ``seed``
    go to dev (at least one when the fraction is positive); both keep the input order."""
    if not 0 <= dev_fraction < 1:
        raise ValueError(f"dev_fraction must be in [0, 1), got {dev_fraction}")
    n = len(items)
    n_dev = round(n * dev_fraction)
    if dev_fraction > 0 and n > 1:
        n_dev = min(max(n_dev, 1), n - 1)
    order = list(range(n))
    random.Random(seed).shuffle(order)
    dev = set(order[:n_dev])
    return [x for i, x in enumerate(items) if i not in dev], [
        x for i, x in enumerate(items) if i in dev
    ]


def package_file(root: PathLike, relpath: str, *, package: str) -> Path:
    """``relpath`` inside an unpacked package: directly under ``root`` (a wheel) or under
    its one top-level directory (an sdist's ``name-version/``, an npm ``package/``)."""
    base = Path(root)
    direct = base / relpath
    if direct.is_file():
        return direct
    found = sorted(p for p in base.glob(f"*/{relpath}") if p.is_file())
    if len(found) == 1:
        return found[0]
    if not found:
        raise InputError(f"{base}: {relpath} not found in the unpacked package {package}")
    raise InputError(f"{base}: {relpath} found more than once ({found}) in {package}")


def read_token_lines(
    path: PathLike, *, columns: set[int], dropped: Counter[str]
) -> Iterator[tuple[int, list[str], list[str]]]:
    """``(first line, tokens, labels)`` per sentence of a one-token-per-line file (token in
    the first tab-separated column, label in the last, an empty or blank line between
    sentences). A sentence with a line of another number of columns, or an empty token or
    label, is skipped and counted in ``dropped``."""
    tokens: list[str] = []
    labels: list[str] = []
    start = 0
    bad = False
    reason = f"sentence with a line of other than {sorted(columns)} columns"

    def done() -> Iterator[tuple[int, list[str], list[str]]]:
        if bad:
            dropped[reason] += 1
        elif tokens:
            yield start, tokens, labels

    for lineno, line in enumerate(iter_lines(path), 1):
        if not line.strip():
            yield from done()
            tokens, labels, bad = [], [], False
            continue
        if not tokens and not bad:
            start = lineno
        cols = line.split("\t")
        if len(cols) not in columns or not cols[0] or not cols[-1]:
            log.warning("%s:%d: %r has an unexpected shape; sentence dropped", path, lineno, line)
            bad = True
            continue
        tokens.append(cols[0])
        labels.append(cols[-1])
    yield from done()


def entity_counts(tags_per_sentence: Iterable[Sequence[str]]) -> dict[str, int]:
    """Entities per type in IOB2 tags (one per ``B-``)."""
    counts: Counter[str] = Counter()
    for tags in tags_per_sentence:
        counts.update(t[2:] for t in tags if t.startswith("B-"))
    return dict(sorted(counts.items()))


def summarise(records: Sequence[Any], *, scheme: str | None = None) -> dict[str, Any]:
    """Counts of one split: sentences, tokens and labels (entities for IOB2), or pairs."""
    if records and isinstance(records[0], TaggedSentence):
        labels: Counter[str] = Counter()
        for r in records:
            labels.update(r.tags)
        out: dict[str, Any] = {
            "sentences": len(records),
            "tokens": sum(len(r.tokens) for r in records),
            "labels": dict(sorted(labels.items())),
        }
        if scheme == "iob2":
            out["entities"] = entity_counts(r.tags for r in records)
        return out
    if records and isinstance(records[0], RetrievalPair):
        return {"pairs": len(records)}
    return {"records": len(records)}


def write_task(
    splits: Mapping[str, tuple[PathLike, Sequence[Any]]],
    stats_path: PathLike,
    stats: Mapping[str, Any],
    *,
    scheme: str | None = None,
) -> dict[str, Any]:
    """Write each split's records (JSON Lines, atomically), then the stats JSON with the
    counts of every split; returns the stats. An empty split is an error: a task file
    without records would only fail later, in the middle of an evaluation."""
    counts: dict[str, Any] = {}
    for split, (path, records) in splits.items():
        if not records:
            raise InputError(
                f"{path}: no records for split {split!r} of {stats.get('task')}/"
                f"{stats.get('language')}; the source gave nothing to write"
            )
        write_records(path, records)
        counts[split] = summarise(records, scheme=scheme)
    result = {**stats, "splits": counts}
    write_json(stats_path, result)
    return result
