"""A tokenised parallel corpus (hub language - other language) for word alignment.

Sources, read one after another:

* ``units``: two unit TSVs (``id, split, doc, para, text``; see :mod:`xlalign.corpus.sources`),
  hub side and other side, joined row by row on ``id``. Only ids that are ``train`` on
  *both* sides become pairs: held-out rows are evaluation text and never enter. An id on
  one side only is counted ``unmatched``; one held out on either side ``heldout``. Pairs
  come in the hub file's order; the other side is loaded into memory (embedded files are
  small).
* ``lines``: two line-aligned text files (OPUS-100 ``opus.de-en-train.en`` / ``.de``,
  possibly compressed), read in lockstep. Different line counts are an error, never a
  silently shifted pair.
* ``wikimatrix``: one TSV ``score, sentence_a, sentence_b`` with the two languages in the
  alphabetical order of their codes (``WikiMatrix.de-en.tsv.gz``: German, then English).
  Rows scoring below ``min_score`` (default 1.04, the LASER authors' recommendation) are
  counted ``low_score``.

Pair ids: the unit id, or ``name:lineno`` (1-based) for line-numbered sources. Each side is
normalised (:func:`xlalign.corpus.sources.normalise`) and tokenised as one line (a verse may hold
several sentences). Filters, in this order, each drop counted by reason: ``empty_source``,
``empty_target``, ``no_tokens_source``, ``no_tokens_target``, ``too_short`` and
``too_long`` (either side outside ``[min_tokens, max_tokens]``), ``length_ratio``,
``duplicate`` (the same tokenised pair seen before).

Sampling (``max_pairs``) is a deterministic bottom-k by hash: a pair's priority is a
keyed hash of ``(seed, pair id)``; the ``ceil(max_pairs * oversample)`` pairs with the
smallest priorities that pass the cheap checks (present, train, score, non-empty) are kept
in a heap, then tokenised and filtered in priority order until ``max_pairs`` are kept.
Output keeps corpus order. Same inputs and seed give byte-identical output. Without
``max_pairs`` every pair is streamed straight to the output.

Output: a TSV with header ``id, source, target``, tokens joined by single spaces.
"""

from __future__ import annotations

import hashlib
import heapq
import logging
import math
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tqdm import tqdm

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.formats.parallel import (  # noqa: F401 (the format, re-exported here)
    PARALLEL_COLUMNS,
    count_pairs,
    format_parallel_row,
    parallel_header,
    read_parallel,
)
from xlalign.core.io import PathLike, atomic_open, iter_lines, iter_tsv, write_json
from xlalign.corpus.segment import Segmenter, clean_tokens, make_segmenter
from xlalign.corpus.sources import UNIT_COLUMNS, normalise

log = logging.getLogger(__name__)

PARALLEL_KINDS = ("units", "lines", "wikimatrix")
#: WikiMatrix's recommended margin-score threshold (Schwenk et al., 2019).
DEFAULT_MIN_SCORE = 1.04

#: Every reason a pair can be dropped, in the order they are checked.
DROP_REASONS = (
    "unmatched",
    "heldout",
    "low_score",
    "empty_source",
    "empty_target",
    "no_tokens_source",
    "no_tokens_target",
    "too_short",
    "too_long",
    "length_ratio",
    "duplicate",
    "not_sampled",
)

Tokeniser = Callable[[str], list[str]]

_DEFAULT_NAMES = {"lines": "lines", "wikimatrix": "wikimatrix"}
_BAD_NAME = re.compile(r"\s")


@dataclass(frozen=True)
class ParallelSource:
    """One parallel source: ``units``/``lines`` take ``(hub_path, other_path)``,
    ``wikimatrix`` takes ``(path,)``. ``min_score`` is for ``wikimatrix`` only (default
    :data:`DEFAULT_MIN_SCORE`); ``name`` prefixes the pair ids of line-numbered sources."""

    kind: str
    paths: tuple[str, ...]
    min_score: float | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in PARALLEL_KINDS:
            raise ConfigError(
                f"unknown parallel source kind {self.kind!r}; expected one of {PARALLEL_KINDS}"
            )
        object.__setattr__(self, "paths", tuple(str(p) for p in self.paths))
        want = 1 if self.kind == "wikimatrix" else 2
        if len(self.paths) != want:
            expected = "(path,)" if want == 1 else "(hub_path, other_path)"
            raise ConfigError(
                f"parallel source {self.kind!r}: {len(self.paths)} paths {self.paths}; "
                f"expected {expected}"
            )
        if self.min_score is not None and self.kind != "wikimatrix":
            raise ConfigError(
                f"parallel source {self.kind!r} {self.paths}: min_score is for 'wikimatrix' only"
            )
        if self.name is not None and (not self.name or _BAD_NAME.search(self.name)):
            raise ConfigError(
                f"parallel source {self.kind!r} {self.paths}: name {self.name!r}; expected a "
                f"non-empty name without whitespace"
            )

    @property
    def id_prefix(self) -> str | None:
        """The pair id prefix of a line-numbered source (``None`` for units)."""
        if self.kind == "units":
            return None
        return self.name or _DEFAULT_NAMES[self.kind]


@dataclass(frozen=True)
class PairFilter:
    """Token-level filters: both sides within ``[min_tokens, max_tokens]``, the longer side
    at most ``max_ratio`` times the shorter, and (with ``dedupe``) no repeated pair."""

    min_tokens: int = 1
    max_tokens: int = 100
    max_ratio: float = 3.0
    dedupe: bool = True

    def check(self) -> None:
        if self.min_tokens < 1:
            raise ConfigError(f"parallel filter min_tokens must be >= 1, not {self.min_tokens}")
        if self.max_tokens < self.min_tokens:
            raise ConfigError(
                f"parallel filter max_tokens ({self.max_tokens}) must be >= min_tokens "
                f"({self.min_tokens})"
            )
        if not self.max_ratio >= 1.0:
            raise ConfigError(f"parallel filter max_ratio must be >= 1, not {self.max_ratio}")


def segmenter_tokeniser(segmenter: Segmenter) -> Tokeniser:
    """A tokeniser for one line: the cleaned tokens of all its sentences, concatenated."""

    def tokenise(text: str) -> list[str]:
        tokens: list[str] = []
        for sentence in segmenter.segment(text):
            tokens.extend(clean_tokens(sentence)[0])
        return tokens

    return tokenise


# --------------------------------------------------------------------------- reading

# A raw pair: (pair id, normalised hub text, normalised other text), both non-empty.
_Raw = tuple[str, str, str]


def make_tokeniser(
    lang: str,
    *,
    tool: str,
    udpipe_model: PathLike | None = None,
    fallback: str | None = None,
) -> tuple[Tokeniser, dict[str, Any]]:
    """The `segment` stage's tokeniser of ``lang`` as a line tokeniser, and what was used."""
    segmenter, info = make_segmenter(lang, tool=tool, udpipe_model=udpipe_model, fallback=fallback)
    return segmenter_tokeniser(segmenter), dict(info)


def sources_from_specs(specs: Sequence[Mapping[str, Any]]) -> list[ParallelSource]:
    """:class:`ParallelSource` objects from plain mappings (``kind``, ``paths`` ...)."""
    return [
        ParallelSource(
            kind=str(spec["kind"]),
            paths=tuple(str(p) for p in spec["paths"]),
            min_score=spec.get("min_score"),
            name=spec.get("name"),
        )
        for spec in specs
    ]


def _new_counts() -> dict[str, int]:
    return {"read": 0, "kept": 0, **dict.fromkeys(DROP_REASONS, 0)}


def _unit_rows(path: str, lang: str) -> Iterator[tuple[int, str, str, str]]:
    """``(lineno, id, split, text)`` of a unit TSV, header and column count checked."""
    where = f"{path} (language {lang!r})"
    for lineno, row in iter_tsv(path, UNIT_COLUMNS, language=lang, what="unit TSV"):
        uid, split, _doc, _para, text = row
        if not uid:
            raise InputError(f"{where}: line {lineno}: empty id; expected a unit id")
        yield lineno, uid, split, text


def _iter_units(
    source: ParallelSource,
    src_lang: str,
    tgt_lang: str,
    counts: dict[str, int],
    unit_ids: dict[str, str],
    line_id: re.Pattern[str] | None,
) -> Iterator[_Raw]:
    hub_path, other_path = source.paths
    other: dict[str, tuple[str, str]] = {}
    for lineno, uid, split, text in _unit_rows(other_path, tgt_lang):
        if uid in other:
            raise InputError(
                f"{other_path} (language {tgt_lang!r}): line {lineno}: repeated unit id "
                f"{uid!r}; expected unique ids"
            )
        other[uid] = (split, text)
    for lineno, uid, split, text in _unit_rows(hub_path, src_lang):
        where = f"{hub_path} (language {src_lang!r}): line {lineno}"
        if uid in unit_ids:
            raise InputError(
                f"{where}: repeated pair id {uid!r} (first in {unit_ids[uid]}); expected "
                f"unique ids across all parallel sources"
            )
        if line_id is not None and line_id.fullmatch(uid):
            raise InputError(
                f"{where}: unit id {uid!r} repeats the id of a line-numbered source; "
                f"expected unique ids across all parallel sources (rename that source)"
            )
        unit_ids[uid] = hub_path
        counts["read"] += 1
        match = other.pop(uid, None)
        if match is None:
            counts["unmatched"] += 1
            continue
        other_split, other_text = match
        if split != "train" or other_split != "train":
            counts["heldout"] += 1
            continue
        yield uid, normalise(text), normalise(other_text)
    # Ids on the other side only.
    counts["read"] += len(other)
    counts["unmatched"] += len(other)


def _iter_lines_pairs(
    source: ParallelSource, src_lang: str, tgt_lang: str, counts: dict[str, int]
) -> Iterator[_Raw]:
    hub_path, other_path = source.paths
    prefix = source.id_prefix
    hub = iter_lines(hub_path, language=src_lang)
    oth = iter_lines(other_path, language=tgt_lang)
    lineno = 0
    while True:
        a = next(hub, None)
        b = next(oth, None)
        if a is None or b is None:
            if a is None and b is None:
                return
            n_hub = lineno + (a is not None) + sum(1 for _ in hub)
            n_other = lineno + (b is not None) + sum(1 for _ in oth)
            raise InputError(
                f"line-aligned files differ in length: {hub_path} (language {src_lang!r}) has "
                f"{n_hub} lines, {other_path} (language {tgt_lang!r}) has {n_other}; expected "
                f"the same number of lines"
            )
        lineno += 1
        counts["read"] += 1
        yield f"{prefix}:{lineno}", a, b


def _iter_wikimatrix(
    source: ParallelSource, src_lang: str, tgt_lang: str, counts: dict[str, int]
) -> Iterator[_Raw]:
    (path,) = source.paths
    prefix = source.id_prefix
    min_score = DEFAULT_MIN_SCORE if source.min_score is None else source.min_score
    hub_first = src_lang < tgt_lang  # columns follow the alphabetical order of the codes
    first, second = sorted((src_lang, tgt_lang))
    for lineno, line in enumerate(iter_lines(path), start=1):
        row = line.split("\t")
        if len(row) != 3:
            raise InputError(
                f"{path}: line {lineno}: {len(row)} tab-separated columns; expected 3 "
                f"(score, {first} sentence, {second} sentence)"
            )
        try:
            score = float(row[0])
        except ValueError:
            score = math.nan
        if not math.isfinite(score):
            raise InputError(f"{path}: line {lineno}: score {row[0]!r}; expected a number")
        counts["read"] += 1
        if score < min_score:
            counts["low_score"] += 1
            continue
        a, b = (row[1], row[2]) if hub_first else (row[2], row[1])
        yield f"{prefix}:{lineno}", a, b


def _iter_source(
    source: ParallelSource,
    src_lang: str,
    tgt_lang: str,
    counts: dict[str, int],
    unit_ids: dict[str, str],
    line_id: re.Pattern[str] | None,
) -> Iterator[_Raw]:
    """Raw pairs of one source, normalised and non-empty; cheap drops counted."""
    if source.kind == "units":
        raw = _iter_units(source, src_lang, tgt_lang, counts, unit_ids, line_id)
    elif source.kind == "wikimatrix":
        raw = _iter_wikimatrix(source, src_lang, tgt_lang, counts)
    else:
        raw = _iter_lines_pairs(source, src_lang, tgt_lang, counts)
    for pid, a, b in raw:
        a = normalise(a)
        if not a:
            counts["empty_source"] += 1
            continue
        b = normalise(b)
        if not b:
            counts["empty_target"] += 1
            continue
        yield pid, a, b


def _line_id_pattern(sources: Sequence[ParallelSource]) -> re.Pattern[str] | None:
    """The pattern of line-numbered pair ids (their prefixes checked to be distinct)."""
    prefixes: dict[str, ParallelSource] = {}
    for s in sources:
        prefix = s.id_prefix
        if prefix is None:
            continue
        if prefix in prefixes:
            raise InputError(
                f"parallel sources {prefixes[prefix].paths} and {s.paths} both give pair ids "
                f"'{prefix}:<line>'; expected a distinct name for each"
            )
        prefixes[prefix] = s
    if not prefixes:
        return None
    alternatives = "|".join(re.escape(p) for p in prefixes)
    return re.compile(rf"(?:{alternatives}):[0-9]+")


# ------------------------------------------------------------------------- filtering


def _dedupe_key(src: list[str], tgt: list[str]) -> int:
    text = " ".join(src) + "\t" + " ".join(tgt)
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def _tokenise_pair(
    a: str,
    b: str,
    src_tokenise: Tokeniser,
    tgt_tokenise: Tokeniser,
    filters: PairFilter,
    seen: set[int],
) -> tuple[str | None, list[str], list[str]]:
    """Tokens of both sides, or the reason the pair is dropped."""
    src = clean_tokens(src_tokenise(a))[0]
    if not src:
        return "no_tokens_source", src, []
    tgt = clean_tokens(tgt_tokenise(b))[0]
    if not tgt:
        return "no_tokens_target", src, tgt
    ns, nt = len(src), len(tgt)
    if ns < filters.min_tokens or nt < filters.min_tokens:
        return "too_short", src, tgt
    if ns > filters.max_tokens or nt > filters.max_tokens:
        return "too_long", src, tgt
    if max(ns, nt) > filters.max_ratio * min(ns, nt):
        return "length_ratio", src, tgt
    if filters.dedupe:
        key = _dedupe_key(src, tgt)
        if key in seen:
            return "duplicate", src, tgt
        seen.add(key)
    return None, src, tgt


def pair_priority(seed: int, pair_id: str) -> int:
    """The sampling priority of a pair: a 64-bit BLAKE2b hash of ``(seed, pair id)``."""
    h = hashlib.blake2b(pair_id.encode("utf-8"), digest_size=8, key=str(seed).encode("ascii"))
    return int.from_bytes(h.digest(), "big")


# ---------------------------------------------------------------------------- build


def build_parallel(
    sources: Sequence[ParallelSource],
    out_path: PathLike,
    stats_path: PathLike,
    *,
    src_lang: str,
    tgt_lang: str,
    src_tokenise: Tokeniser,
    tgt_tokenise: Tokeniser,
    filters: PairFilter = PairFilter(),
    max_pairs: int | None = None,
    seed: int = 0,
    oversample: float = 1.5,
    progress: bool = True,
    info: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Read, tokenise and filter parallel sources; write the pairs and their stats.

    ``info`` (e.g. the tokenisers used) is added to the stats as given.

    ``src_lang`` is the hub side (first path of ``units``/``lines``), ``tgt_lang`` the other.
    Both outputs are written atomically; if no pair survives, :class:`InputError` is raised
    and no output is written. Returns the stats written to ``stats_path``. Stats per source
    and in total satisfy ``read == kept + sum(drops)``; ``not_sampled`` counts the pairs
    that passed the cheap checks but were not drawn.
    """
    sources = list(sources)
    if not sources:
        raise ConfigError(f"parallel {src_lang}-{tgt_lang}: no sources; expected at least one")
    if src_lang == tgt_lang:
        raise ConfigError(f"parallel: source and target language are both {src_lang!r}")
    filters.check()
    if max_pairs is not None and max_pairs < 1:
        raise ConfigError(
            f"parallel {src_lang}-{tgt_lang}: max_pairs must be >= 1, not {max_pairs}"
        )
    if not oversample >= 1.0:
        raise ConfigError(
            f"parallel {src_lang}-{tgt_lang}: oversample must be >= 1, not {oversample}"
        )
    line_id = _line_id_pattern(sources)
    per_source = [_new_counts() for _ in sources]
    unit_ids: dict[str, str] = {}
    seen: set[int] = set()
    tokens_src = tokens_tgt = pairs_out = 0
    candidates = examined = 0
    pool_full = False
    start = time.perf_counter()

    def raw_pairs(bar: tqdm[Any]) -> Iterator[tuple[int, str, str, str]]:
        for si, source in enumerate(sources):
            pairs = _iter_source(source, src_lang, tgt_lang, per_source[si], unit_ids, line_id)
            for pid, a, b in pairs:
                bar.update(1)
                yield si, pid, a, b

    bar = tqdm(
        desc=f"parallel {src_lang}-{tgt_lang}",
        unit=" pair",
        file=sys.stderr,
        disable=not progress,
        mininterval=1.0,
    )
    with bar, atomic_open(out_path) as out:
        out.write(parallel_header())
        if max_pairs is None:
            for si, pid, a, b in raw_pairs(bar):
                reason, src, tgt = _tokenise_pair(a, b, src_tokenise, tgt_tokenise, filters, seen)
                counts = per_source[si]
                if reason is not None:
                    counts[reason] += 1
                    continue
                counts["kept"] += 1
                out.write(format_parallel_row(pid, src, tgt))
                pairs_out += 1
                tokens_src += len(src)
                tokens_tgt += len(tgt)
        else:
            k = math.ceil(max_pairs * oversample)
            # Max-heap of the k smallest (priority, corpus index): entries negated.
            heap: list[tuple[int, int, int, str, str, str]] = []
            eligible = [0] * len(sources)
            for index, (si, pid, a, b) in enumerate(raw_pairs(bar)):
                eligible[si] += 1
                prio = pair_priority(seed, pid)
                entry = (-prio, -index, si, pid, a, b)
                if len(heap) < k:
                    heapq.heappush(heap, entry)
                elif entry > heap[0]:
                    heapq.heapreplace(heap, entry)
                    pool_full = True
                else:
                    pool_full = True
            candidates = len(heap)
            drawn = [0] * len(sources)
            kept: list[tuple[int, str, list[str], list[str]]] = []
            for _neg_prio, neg_index, si, pid, a, b in sorted(heap, reverse=True):
                if len(kept) >= max_pairs:
                    break
                examined += 1
                drawn[si] += 1
                reason, src, tgt = _tokenise_pair(a, b, src_tokenise, tgt_tokenise, filters, seen)
                if reason is not None:
                    per_source[si][reason] += 1
                    continue
                per_source[si]["kept"] += 1
                kept.append((-neg_index, pid, src, tgt))
            del heap
            for si, counts in enumerate(per_source):
                counts["not_sampled"] = eligible[si] - drawn[si]
            kept.sort(key=lambda e: e[0])
            for _index, pid, src, tgt in kept:
                out.write(format_parallel_row(pid, src, tgt))
                tokens_src += len(src)
                tokens_tgt += len(tgt)
            pairs_out = len(kept)
        totals = {key: sum(c[key] for c in per_source) for key in per_source[0]}
        if pairs_out == 0:
            drops = ", ".join(f"{r}: {totals[r]}" for r in DROP_REASONS if totals[r]) or "none"
            raise InputError(
                f"parallel {src_lang}-{tgt_lang}: no pair kept from "
                f"{[s.paths for s in sources]} ({totals['read']} read; dropped by {drops}); "
                f"expected at least one pair passing the filters"
            )
    seconds = time.perf_counter() - start
    exhausted = max_pairs is not None and pairs_out < max_pairs
    stats: dict[str, Any] = {
        "languages": {"source": src_lang, "target": tgt_lang},
        "sources": [
            {
                "kind": s.kind,
                "paths": list(s.paths),
                "name": s.name,
                "min_score": (
                    (DEFAULT_MIN_SCORE if s.min_score is None else s.min_score)
                    if s.kind == "wikimatrix"
                    else None
                ),
                **per_source[i],
            }
            for i, s in enumerate(sources)
        ],
        "totals": totals,
        "filters": {
            "min_tokens": filters.min_tokens,
            "max_tokens": filters.max_tokens,
            "max_ratio": filters.max_ratio,
            "dedupe": filters.dedupe,
        },
        "pairs_out": pairs_out,
        "tokens_source": tokens_src,
        "tokens_target": tokens_tgt,
        "mean_tokens_source": tokens_src / pairs_out,
        "mean_tokens_target": tokens_tgt / pairs_out,
        "sampling": {
            "max_pairs": max_pairs,
            "seed": seed,
            "oversample": oversample,
            "method": "bottom-k by blake2b-64(seed, pair id)" if max_pairs else "all pairs",
            "candidates": candidates if max_pairs else None,
            "candidates_examined": examined if max_pairs else None,
            "candidate_pool_full": pool_full if max_pairs else None,
        },
        "exhausted": exhausted,
        "seconds": seconds,
        "pairs_per_s": totals["read"] / seconds if seconds > 0 else None,
        **dict(info or {}),
    }
    write_json(stats_path, stats)
    if exhausted:
        why = (
            f"raise oversample (now {oversample})"
            if pool_full
            else "the sources hold no more pairs passing the filters"
        )
        log.warning(
            "%s-%s: only %d of %d pairs kept; %s", src_lang, tgt_lang, pairs_out, max_pairs, why
        )
    log.info(
        "%s-%s: %d of %d pairs kept, %.0f pairs/s",
        src_lang,
        tgt_lang,
        pairs_out,
        totals["read"],
        stats["pairs_per_s"] or 0.0,
    )
    return stats
