"""Bilingual dictionaries read off word-alignment link counts, and their precision.

Every kept link of :mod:`xlalign.wordalign.eflomal` is one observation of a word pair (s, t). With
c(s, t) the number of links between the two words and c(s) = Σ_t c(s, t) the links of s,
a pair enters the dictionary when

* c(s, t) >= ``min_count`` (rare links are mostly noise),
* c(s, t) / c(s) >= ``min_ratio`` (t is a sizeable share of s's translations: p(t | s)),
* c(s, t) / c(t) >= ``min_reverse_ratio`` (the same from the target side: p(s | t)),
* it is among the ``max_translations`` most linked translations of s,
* with ``letters_only``, both words contain a letter (punctuation and numbers go).

Words are compared lowercased by default (MUSE's dictionaries are lowercase). The output is
MUSE's format, ``source target`` per line, ordered by the source word's link count, then by
the pair's count (ties by string), so a file's head holds the most frequent words.

:func:`evaluate_dictionary` scores an induced dictionary against a gold one over the source
words both contain: pair precision (share of induced pairs that are gold pairs), P@1 (share
of those source words whose most linked translation is a gold translation), and how many
gold source words it covers.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from xlalign.core.errors import ConfigError
from xlalign.core.io import PathLike, write_json
from xlalign.dictionaries.split import read_pairs, write_pairs

log = logging.getLogger(__name__)

Pair = tuple[str, str]


@dataclass(frozen=True)
class LinkDictOptions:
    min_count: int = 3
    min_ratio: float = 0.1
    min_reverse_ratio: float = 0.0
    max_translations: int = 3
    lowercase: bool = True
    letters_only: bool = True

    def __post_init__(self) -> None:
        checks = [
            ("min_count", self.min_count >= 1, "an integer >= 1"),
            ("min_ratio", 0 <= self.min_ratio <= 1, "a number in [0, 1]"),
            ("min_reverse_ratio", 0 <= self.min_reverse_ratio <= 1, "a number in [0, 1]"),
            ("max_translations", self.max_translations >= 1, "an integer >= 1"),
        ]
        for name, ok, expected in checks:
            if not ok:
                raise ConfigError(
                    f"alignment dictionary option {name} = {getattr(self, name)!r}; "
                    f"expected {expected}"
                )

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any]) -> LinkDictOptions:
        return cls(**{k: v for k, v in cfg.items() if k in cls.__dataclass_fields__})


def _has_letter(word: str) -> bool:
    return any(ch.isalpha() for ch in word)


def count_links(pairs: Iterable[Pair], *, lowercase: bool = True) -> Counter[Pair]:
    """c(s, t) over an iterable of linked word pairs."""
    counts: Counter[Pair] = Counter()
    for s, t in pairs:
        counts[(s.lower(), t.lower()) if lowercase else (s, t)] += 1
    return counts


def induce(
    counts: Mapping[Pair, int], options: LinkDictOptions | None = None
) -> tuple[list[Pair], dict[str, Any]]:
    """Dictionary pairs from link counts, in output order, and counts of what was dropped."""
    opt = options or LinkDictOptions()
    by_source: dict[str, int] = defaultdict(int)
    by_target: dict[str, int] = defaultdict(int)
    for (s, t), c in counts.items():
        by_source[s] += c
        by_target[t] += c
    dropped = Counter()
    candidates: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for (s, t), c in counts.items():
        if opt.letters_only and not (_has_letter(s) and _has_letter(t)):
            dropped["not_letters"] += 1
        elif c < opt.min_count:
            dropped["min_count"] += 1
        elif c / by_source[s] < opt.min_ratio:
            dropped["min_ratio"] += 1
        elif c / by_target[t] < opt.min_reverse_ratio:
            dropped["min_reverse_ratio"] += 1
        else:
            candidates[s].append((c, t))
    out: list[Pair] = []
    for s in sorted(candidates, key=lambda w: (-by_source[w], w)):
        ranked = sorted(candidates[s], key=lambda ct: (-ct[0], ct[1]))
        if len(ranked) > opt.max_translations:
            dropped["max_translations"] += len(ranked) - opt.max_translations
        out += [(s, t) for _, t in ranked[: opt.max_translations]]
    stats = {
        "options": asdict(opt),
        "linked_word_pairs": len(counts),
        "links": sum(counts.values()),
        "pairs": len(out),
        "source_words": len({s for s, _ in out}),
        "target_words": len({t for _, t in out}),
        "dropped": dict(sorted(dropped.items())),
    }
    return out, stats


def write_dictionary(pairs: Iterable[Pair], path: PathLike) -> int:
    """MUSE format, in the given order (:func:`xlalign.core.formats.muse.write_pairs`)."""
    return write_pairs(pairs, path, sort=False)


def evaluate_dictionary(
    induced: list[Pair], gold: Iterable[Pair], *, lowercase: bool = True
) -> dict[str, Any]:
    """Precision of ``induced`` (in output order: a source's first pair is its best)
    against ``gold``, over the source words both contain."""
    gold_map: dict[str, set[str]] = defaultdict(set)
    for s, t in gold:
        gold_map[s.lower() if lowercase else s].add(t.lower() if lowercase else t)
    judged = correct = 0
    first: dict[str, str] = {}
    for s, t in induced:
        if lowercase:
            s, t = s.lower(), t.lower()
        if s not in gold_map:
            continue
        first.setdefault(s, t)
        judged += 1
        correct += t in gold_map[s]
    p1 = sum(first[s] in gold_map[s] for s in first)
    return {
        "gold_pairs": sum(len(v) for v in gold_map.values()),
        "gold_source_words": len(gold_map),
        "induced_pairs": len(induced),
        "judged_pairs": judged,
        "correct_pairs": correct,
        "pair_precision": correct / judged if judged else None,
        "judged_source_words": len(first),
        "p_at_1": p1 / len(first) if first else None,
        "gold_source_coverage": len(first) / len(gold_map) if gold_map else None,
    }


def evaluate_files(induced: PathLike, gold: PathLike, *, lowercase: bool = True) -> dict[str, Any]:
    pairs = read_pairs(induced)
    out = evaluate_dictionary(pairs, read_pairs(gold), lowercase=lowercase)
    out.update({"induced": str(induced), "gold": str(gold)})
    return out


def dictionary_from_alignment(
    pairs_table: PathLike,
    out_path: PathLike,
    stats_path: PathLike,
    options: LinkDictOptions | None = None,
) -> dict[str, Any]:
    """Read an aligned word-pairs table (:mod:`xlalign.wordalign.eflomal`), write the dictionary
    (MUSE format) and its stats."""
    from xlalign.core.formats.parallel import read_aligned_pairs

    opt = options or LinkDictOptions()
    counts = count_links(
        ((s, t) for _, _, _, _, s, t in read_aligned_pairs(pairs_table)), lowercase=opt.lowercase
    )
    pairs, stats = induce(counts, opt)
    write_dictionary(pairs, out_path)
    stats.update({"input": str(pairs_table), "output": str(out_path)})
    write_json(stats_path, stats)
    log.info(
        "%s: %d dictionary pairs (%d source words) from %d links",
        out_path,
        stats["pairs"],
        stats["source_words"],
        stats["links"],
    )
    return stats


def evaluate_against(
    induced: PathLike,
    references: Mapping[str, PathLike],
    out_path: PathLike,
    *,
    lowercase: bool = True,
) -> dict[str, Any]:
    """Score ``induced`` against each named gold dictionary; write and return the record."""
    pairs = read_pairs(induced)
    record: dict[str, Any] = {
        "induced": str(induced),
        "induced_pairs": len(pairs),
        "references": {},
    }
    for name, path in references.items():
        scores = evaluate_dictionary(pairs, read_pairs(path), lowercase=lowercase)
        scores["gold"] = str(path)
        record["references"][name] = scores
        log.info(
            "%s vs %s: pair precision %s, P@1 %s over %d source words",
            induced,
            name,
            _pct(scores["pair_precision"]),
            _pct(scores["p_at_1"]),
            scores["judged_source_words"],
        )
    write_json(out_path, record)
    return record


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"
