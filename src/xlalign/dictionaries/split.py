"""Gold and training dictionaries for mapping and BLI: splits with disjoint source words.

A bilingual dictionary serves three purposes that must not leak into each other: the
*training* dictionary a supervised mapping is fitted on, the *validation* dictionary that
decides between the mapped and the unmapped space (the paper kept unaligned vectors for
some languages), and the *test* dictionary the tables report. MUSE ships its test split
(``.5000-6500``: source words ranked 5000-6500) disjoint by source word from its training
split (``.0-5000``); the embedded default's package dictionaries (FreeDict, CC-CEDICT,
CLDR) have no split, so :func:`split_dictionary` makes one.

Conventions, for the hub language ``en`` and another language ``xx``:

* forward files are ``en-xx`` (English source words), reverse files ``xx-en``;
* a split is made over *source words*: all translations of a source word go to the same
  part, so no test query was seen in training;
* the reverse test/validation dictionaries the project makes are the inverted forward
  ones minus every ``xx`` word that occurs in the training dictionary: the mapping is
  fitted on the training pairs in both directions, so such a word would be a seen query
  (the *overlap policy*, ``dictionaries.split.overlap``: dropped and counted, or an error
  with ``overlap="error"``);
* given (official) test or validation files, such as MUSE's ``en-xx.5000-6500`` and
  ``xx-en.5000-6500``, are used exactly as given, in both directions, so that scores stay
  comparable with MUSE's and the papers': the overlap policy does not apply to them. Their
  overlap with the training dictionary (query words that are training words on the same
  side, and pairs that are training pairs) is counted and reported in the split's stats
  (``training_overlap``), never removed. MUSE's ``en-xx`` files are disjoint by source
  word (ranks 0-5000 against 5000-6500), but the targets of ``en-xx.0-5000`` may be
  queries of ``xx-en.5000-6500``;
* only pairs with both words in the vocabularies take part in a split of a package
  dictionary (otherwise most test words would be out of vocabulary on a small corpus);
  given test files (MUSE) are used as they are, and evaluation reports their coverage.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.formats.muse import Pair, read_pairs, write_pairs  # the MUSE format
from xlalign.core.io import PathLike, write_json
from xlalign.corpus.vocab import read_vocab

log = logging.getLogger(__name__)

OVERLAP_POLICIES = ("drop", "error")


def invert(pairs: Iterable[Pair]) -> list[Pair]:
    """The reverse-direction dictionary (target, source), sorted and unique."""
    return sorted({(t, s) for s, t in pairs})


def source_words(pairs: Iterable[Pair]) -> set[str]:
    return {s for s, _ in pairs}


def target_words(pairs: Iterable[Pair]) -> set[str]:
    return {t for _, t in pairs}


def drop_seen_sources(
    pairs: Sequence[Pair], seen: Collection[str], *, what: str, policy: str = "drop"
) -> tuple[list[Pair], int]:
    """Remove the pairs whose source word is in ``seen`` (words a mapping was trained on).

    Returns the kept pairs and the number of source words removed. ``policy="error"``
    raises :class:`InputError` instead when there is any overlap.
    """
    if policy not in OVERLAP_POLICIES:
        raise ConfigError(f"overlap policy {policy!r}: expected one of {OVERLAP_POLICIES}")
    leaked = sorted({s for s, _ in pairs if s in seen})
    if leaked and policy == "error":
        raise InputError(
            f"{what}: {len(leaked)} source word(s) also occur in the training dictionary "
            f"(e.g. {leaked[:5]}); evaluation must use unseen words"
        )
    if leaked:
        log.warning(
            "%s: dropped %d source word(s) seen in training (e.g. %s)",
            what,
            len(leaked),
            leaked[:5],
        )
    leaked_set = set(leaked)
    return [p for p in pairs if p[0] not in leaked_set], len(leaked)


def training_overlap(pairs: Iterable[Pair], train: Iterable[Pair], *, reverse: bool) -> dict:
    """How much of an evaluation dictionary the training dictionary already holds.

    ``source_words``: query words of ``pairs`` that occur on the same language's side of
    ``train``; ``pairs``: pairs of ``pairs`` that are training pairs. ``reverse``: ``pairs``
    run ``xx-en`` while ``train`` runs ``en-xx``.
    """
    train = list(train)
    seen_words = target_words(train) if reverse else source_words(train)
    seen_pairs = set(invert(train)) if reverse else set(train)
    unique = set(pairs)
    return {
        "source_words": len(source_words(unique) & seen_words),
        "pairs": sum(p in seen_pairs for p in unique),
    }


@dataclass(frozen=True)
class SplitSizes:
    """How many source words go to test and validation (the rest is training).

    Each part takes ``fraction`` of the candidate source words, capped at ``max_words``
    (MUSE's test sets have 1,500 source words) and at least ``min_words`` when there are
    enough candidates for a non-empty training part.
    """

    test_fraction: float = 0.25
    test_max_words: int = 1500
    valid_fraction: float = 0.1
    valid_max_words: int = 500
    min_words: int = 5

    def __post_init__(self) -> None:
        if not 0 <= self.test_fraction < 1 or not 0 <= self.valid_fraction < 1:
            raise ConfigError("dictionary split: fractions must lie in [0, 1)")
        if self.test_fraction + self.valid_fraction >= 1:
            raise ConfigError(
                "dictionary split: test_fraction + valid_fraction must be < 1 "
                "(training needs words too)"
            )

    def part(self, fraction: float, cap: int, n: int) -> int:
        if fraction == 0 or n == 0:
            return 0
        k = min(cap, round(fraction * n))
        return max(k, min(self.min_words, n // 3))


@dataclass
class DictionarySplit:
    """Forward (``en-xx``) train/valid/test and reverse (``xx-en``) valid/test pairs."""

    train: list[Pair]
    valid: list[Pair]
    test: list[Pair]
    reverse_valid: list[Pair]
    reverse_test: list[Pair]
    stats: dict[str, Any] = field(default_factory=dict)


def _restrict(
    pairs: Sequence[Pair], src_vocab: Collection[str] | None, tgt_vocab: Collection[str] | None
) -> tuple[list[Pair], dict[str, int]]:
    kept: list[Pair] = []
    counts = {"source_oov": 0, "target_oov": 0}
    for s, t in pairs:
        if src_vocab is not None and s not in src_vocab:
            counts["source_oov"] += 1
        elif tgt_vocab is not None and t not in tgt_vocab:
            counts["target_oov"] += 1
        else:
            kept.append((s, t))
    return kept, counts


def split_dictionary(
    pool: Sequence[Pair],
    *,
    src_vocab: Sequence[str] | None = None,
    tgt_vocab: Collection[str] | None = None,
    max_rank: int | None = None,
    test: Sequence[Pair] | None = None,
    valid: Sequence[Pair] | None = None,
    reverse_test: Sequence[Pair] | None = None,
    reverse_valid: Sequence[Pair] | None = None,
    sizes: SplitSizes | None = None,
    seed: int = 0,
    overlap: str = "drop",
    name: str = "dictionary",
) -> DictionarySplit:
    """Split ``pool`` (forward pairs) into train/valid/test with disjoint source words.

    ``src_vocab`` (in frequency order; ``max_rank`` keeps its most frequent words) and
    ``tgt_vocab`` restrict the pool to pairs both of whose words have vectors. Given
    ``test``/``valid``/``reverse_test``/``reverse_valid`` pairs (MUSE's files) are used
    exactly as given, and the source words of the given forward parts are removed from the
    pool; missing parts are drawn from the pool by a seeded shuffle of its source words.
    Reverse parts default to the inverted forward ones. In the parts made here, every query
    word seen in training (for a reverse part: a target word of the training part) is
    dropped, or raises with ``overlap="error"``; in given parts it is only counted
    (``stats["training_overlap"]``).
    """
    sizes = sizes or SplitSizes()
    vocab = src_vocab[:max_rank] if (src_vocab is not None and max_rank) else src_vocab
    src_set = set(vocab) if vocab is not None else None
    restricted, oov = _restrict(list(dict.fromkeys(pool)), src_set, tgt_vocab)
    given_sources = source_words(test or []) | source_words(valid or [])
    pool_pairs = [p for p in restricted if p[0] not in given_sources]
    removed_given = len(restricted) - len(pool_pairs)

    candidates = sorted(source_words(pool_pairs))
    random.Random(seed).shuffle(candidates)
    n = len(candidates)
    n_test = 0 if test is not None else sizes.part(sizes.test_fraction, sizes.test_max_words, n)
    n_valid = 0 if valid is not None else sizes.part(sizes.valid_fraction, sizes.valid_max_words, n)
    if n_test + n_valid >= n and n:
        # Too few words for three parts: keep at least one training word per part drawn.
        n_test = min(n_test, max(0, (n - 1) // 2))
        n_valid = min(n_valid, max(0, n - 1 - n_test))
    test_words = set(candidates[:n_test])
    valid_words = set(candidates[n_test : n_test + n_valid])
    train = sorted(p for p in pool_pairs if p[0] not in test_words | valid_words)
    test_pairs = sorted(test if test is not None else [p for p in pool_pairs if p[0] in test_words])
    valid_pairs = sorted(
        valid if valid is not None else [p for p in pool_pairs if p[0] in valid_words]
    )

    rev_test = sorted(set(reverse_test)) if reverse_test is not None else invert(test_pairs)
    rev_valid = sorted(set(reverse_valid)) if reverse_valid is not None else invert(valid_pairs)
    parts = {
        "test": test_pairs,
        "valid": valid_pairs,
        "reverse_test": rev_test,
        "reverse_valid": rev_valid,
    }
    given = {
        "test": test is not None,
        "valid": valid is not None,
        "reverse_test": reverse_test is not None,
        "reverse_valid": reverse_valid is not None,
    }
    hub_side, _, other_side = name.partition("-")
    overlap_stats: dict[str, dict[str, Any]] = {}
    dropped: dict[str, int] = {}
    for part, pairs in parts.items():
        reverse = part.startswith("reverse_")
        counts = training_overlap(pairs, train, reverse=reverse)
        if given[part]:
            # An official test set is used as given: the overlap is counted, never removed.
            action, dropped[part] = "kept (given)", 0
            if counts["source_words"]:
                log.info(
                    "%s (%s, given): %d query word(s) also occur in the training dictionary; "
                    "kept as given",
                    name,
                    part,
                    counts["source_words"],
                )
        else:
            # A part made here: the overlap policy. The forward parts are disjoint from
            # training by construction (split over source words).
            seen = target_words(train) if reverse else source_words(train)
            what = f"{name} ({part.replace('_', ' ').replace('valid', 'validation')})"
            parts[part], dropped[part] = drop_seen_sources(pairs, seen, what=what, policy=overlap)
            action = "dropped" if dropped[part] else "none"
        if not reverse:
            direction = name
        else:
            direction = f"{other_side}-{hub_side}" if other_side else f"{name} (reverse)"
        overlap_stats[part] = {"direction": direction, "given": given[part], **counts}
        overlap_stats[part]["action"] = action
    test_pairs, valid_pairs = parts["test"], parts["valid"]
    rev_test, rev_valid = parts["reverse_test"], parts["reverse_valid"]
    stats: dict[str, Any] = {
        "pool_pairs": len(pool),
        "pool_pairs_in_vocabulary": len(restricted),
        "pool_dropped": oov,
        "pool_pairs_removed_as_given_test_or_valid": removed_given,
        "max_rank": max_rank,
        "seed": seed,
        "sizes": {
            "test_fraction": sizes.test_fraction,
            "test_max_words": sizes.test_max_words,
            "valid_fraction": sizes.valid_fraction,
            "valid_max_words": sizes.valid_max_words,
        },
        "given": given,
        # Applies to the parts made here only; given parts are kept as given.
        "overlap_policy": overlap,
        "overlap_dropped_source_words": dropped,
        # Per part (direction): query words / pairs that also occur in the training part,
        # counted before any drop.
        "training_overlap": overlap_stats,
    }
    for part, pairs in (
        ("train", train),
        ("valid", valid_pairs),
        ("test", test_pairs),
        ("reverse_valid", rev_valid),
        ("reverse_test", rev_test),
    ):
        stats[part] = {"pairs": len(pairs), "source_words": len(source_words(pairs))}
    return DictionarySplit(train, valid_pairs, test_pairs, rev_valid, rev_test, stats)


def check_disjoint(train: Iterable[Pair], evaluation: Iterable[Pair], *, what: str) -> None:
    """Raise :class:`InputError` when an evaluation dictionary shares source words with
    the training one (used on user-given files, where no split made them disjoint)."""
    shared = source_words(train) & source_words(evaluation)
    if shared:
        raise InputError(
            f"{what}: {len(shared)} source word(s) are in both the training and the "
            f"evaluation dictionary (e.g. {sorted(shared)[:5]}); expected disjoint source words"
        )


# --------------------------------------------------------------------------------------
# Dictionary split
# --------------------------------------------------------------------------------------


def build_split(
    *,
    language: str,
    hub: str,
    pool: Sequence[PathLike],
    hub_vocab: PathLike,
    vocab: PathLike,
    outputs: Mapping[str, PathLike],
    stats_path: PathLike,
    test: PathLike | None = None,
    reverse_test: PathLike | None = None,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Split the gold dictionaries of one language (see :func:`split_dictionary`).

    ``pool``: forward (``hub-language``) MUSE files whose union is split; ``test`` /
    ``reverse_test``: given test files (MUSE's ``.5000-6500``), used as they are.
    ``outputs`` maps train, valid, test, reverse_valid, reverse_test to file paths.
    """
    opts = dict(options or {})
    pairs: list[tuple[str, str]] = []
    per_file: dict[str, int] = {}
    for path in pool:
        got = read_pairs(path)
        per_file[str(path)] = len(got)
        pairs += got
    sizes = SplitSizes(
        test_fraction=opts.get("test_fraction", 0.25),
        test_max_words=opts.get("test_max_words", 1500),
        valid_fraction=opts.get("valid_fraction", 0.1),
        valid_max_words=opts.get("valid_max_words", 500),
    )
    split: DictionarySplit = split_dictionary(
        pairs,
        src_vocab=read_vocab(hub_vocab).words,
        tgt_vocab=set(read_vocab(vocab).words),
        max_rank=opts.get("max_rank"),
        test=read_pairs(test) if test else None,
        reverse_test=read_pairs(reverse_test) if reverse_test else None,
        sizes=sizes,
        seed=opts.get("seed", 0),
        overlap=opts.get("overlap", "drop"),
        name=f"{hub}-{language}",
    )
    for part in ("train", "valid", "test", "reverse_valid", "reverse_test"):
        write_pairs(getattr(split, part), outputs[part])
    stats = {
        "language": language,
        "hub": hub,
        "pool_files": per_file,
        "given_test": str(test) if test else None,
        "given_reverse_test": str(reverse_test) if reverse_test else None,
        **split.stats,
    }
    if not split.test:
        log.warning("%s-%s: the test dictionary is empty; BLI will report no result", hub, language)
    write_json(stats_path, stats)
    return stats
