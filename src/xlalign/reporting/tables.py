"""Paper-style result tables from BLI and word-similarity records.

The tables follow the paper: Table 1 (BLI averaged per direction), Table 5 (BLI per
language, averaged over both directions), Table 2 (average SemEval 2017 scores), Table 6
(cross-lingual pairs) and Table 7 (monolingual languages).

Rules, applied the same way everywhere:

* An average over languages or pairs uses only those present in *all* compared models
  (every seed of every model that has any result of that kind); what was averaged and
  what was left out, and why, is stated in a footnote.
* With several seeds, each seed's average is taken first, then the mean over seeds, shown
  as ``mean ± sample std``.
* A missing result is ``–``. A Table 5 cell built from one direction only is marked ``†``;
  a cell resting on fewer seeds than the rest of its row is marked ``‡``.

Every table is a :class:`Table`: the displayed strings, the numbers (for the CSV) and the
caption and footnotes (for the markdown).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, atomic_open, read_json
from xlalign.evaluation.wordsim import COMPOSED_SUFFIX
from xlalign.reporting.formats import best_cells, bold_markdown, required_key, to_latex

Record = Mapping[str, Any]

#: Display names of the usual spaces; ``names=`` entries override these.
DEFAULT_NAMES: dict[str, str] = {
    "x2s-m": "X2S-M",
    "x2s-ma": "X2S-MA",
    "aggregate": "Aggregation",
    "aggregate-a": "Aggregation-A",
    "fasttext-unsup": "fasttext_unsup",
    "x2s-m-unsup": "X2S-M_unsup",
    "aggregate-unsup": "Aggregation_unsup",
    "muse": "MUSE",
    "rcsls": "RCSLS",
}
#: Display names of the gold dictionary sources (``dictionaries.sources``).
DICTIONARY_NAMES: dict[str, str] = {
    "muse": "MUSE",
    "freedict": "FreeDict",
    "cedict": "CC-CEDICT",
    "cldr": "CLDR",
}
DATASET_NAMES: dict[str, str] = {
    "semeval17": "SemEval 2017 Task 2",
    "simlex999": "SimLex-999",
    "wordsim353": "WordSim-353",
    "men": "MEN",
    "rw": "RW (rare words)",
    "rg65": "RG-65",
    "ws353-sim": "WordSim-353 (similarity)",
    "ws353-rel": "WordSim-353 (relatedness)",
    "mturk287": "MTurk-287",
}
MISSING = "–"
ONE_DIRECTION = "†"
FEWER_SEEDS = "‡"
WORDSIM_TASKS = ("monolingual", "cross-lingual")
#: The measure of word-similarity records shown by default: SemEval-2017 Task 2's official
#: score (its scorer over every pair) for the main dataset, Spearman on covered pairs else.
OFFICIAL_MEASURE = "score_all"
COVERED_MEASURE = "spearman_covered"
WORDSIM_MEASURES: dict[str, str] = {
    "score_all": (
        "harmonic mean of Pearson and Spearman over every pair, pairs the space cannot "
        "represent at the scale's midpoint, 0 unless both are positive: SemEval-2017 Task 2 "
        "scorer's rule"
    ),
    "pearson_all": "Pearson's r over every pair, pairs not represented at the scale's midpoint",
    "spearman_all": "Spearman's rho over every pair, pairs not represented at the midpoint",
    "score_covered": (
        "harmonic mean of Pearson and Spearman on the pairs in vocabulary only, 0 unless both "
        "are positive; coverage-restricted, not an official score"
    ),
    "pearson_covered": "Pearson's r on the pairs in vocabulary only, coverage-restricted",
    "spearman_covered": "Spearman's rho on the pairs in vocabulary only, coverage-restricted",
}
SOURCE_KEY = "_source"  # set by load_records: the file a record came from


@dataclass
class Table:
    """One result table: display strings, numbers, caption and footnotes."""

    name: str  # output stem, e.g. "table1"
    caption: str
    spaces: list[str]  # space ids, one per row
    frame: pd.DataFrame  # display strings; index = display names ("Model")
    values: pd.DataFrame  # numeric means, NaN where missing
    std: pd.DataFrame  # sample std over seeds, NaN with fewer than two seeds
    seeds: list[int]  # number of seeds per row
    footnotes: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)  # what was averaged, for stats

    def best(self) -> set[tuple[object, object]]:
        """Each column's best cell (none in coverage tables: counts, not scores)."""
        if self.name.startswith("coverage"):
            return set()
        return best_cells(self.values)

    def to_markdown(self) -> str:
        return to_markdown(bold_markdown(self.frame, self.best()), self.caption, self.footnotes)

    def to_latex(self) -> str:
        return to_latex(
            self.frame, self.caption, self.footnotes, best=self.best(), label=f"tab:{self.name}"
        )

    def csv_frame(self) -> pd.DataFrame:
        """Numbers for the CSV: space id, means (``<col> std`` beside them with seeds > 1)."""
        out = pd.DataFrame(index=self.values.index)
        out["space"] = self.spaces
        with_std = any(n > 1 for n in self.seeds)
        for col in self.values.columns:
            out[col] = self.values[col].astype(float)
            if with_std:
                out[f"{col} std"] = self.std[col].astype(float)
        out["seeds"] = self.seeds
        return out

    def write_csv(self, path: PathLike) -> None:
        with atomic_open(path) as fh:
            self.csv_frame().to_csv(fh, lineterminator="\n")


# ---------------------------------------------------------------------------------------
# Loading and validating records


def load_records(paths: Iterable[PathLike], kind: str | None = None) -> list[dict[str, Any]]:
    """Read BLI or word-similarity records, validating them; each remembers its file.

    ``kind`` ("bli" or "wordsim") says which records are expected; None: the kind follows
    ``results``, a mapping of directions (BLI) or a list of entries (word similarity).
    Missing or mistyped keys raise :class:`InputError` naming the file and the key.
    """
    checks = {"bli": _check_bli, "wordsim": _check_wordsim}
    if kind is not None and kind not in checks:
        raise ValueError(f"kind={kind!r}: expected one of {sorted(checks)} or None")
    records: list[dict[str, Any]] = []
    for path in paths:
        rec = read_json(path)
        where = str(path)
        if not isinstance(rec, dict):
            raise InputError(f"{where}: expected a JSON object (a result record)")
        rec[SOURCE_KEY] = where
        if kind is not None:
            checks[kind](rec)
        elif isinstance(rec.get("results"), list):
            _check_wordsim(rec)
        else:
            _check_bli(rec)
        records.append(rec)
    return records


def _where(rec: Record) -> str:
    src = rec.get(SOURCE_KEY)
    if src:
        return str(src)
    return f"record (space={rec.get('space')!r}, seed={rec.get('seed')!r})"


def _require(rec: Record, key: str, kind: type | tuple[type, ...], what: str) -> Any:
    return required_key(rec, key, kind, _where(rec), what)


def _check_common(rec: Record) -> None:
    if not isinstance(rec, Mapping):
        raise InputError(f"{rec!r}: expected a result record (a JSON object)")
    _require(rec, "space", str, "the space id, a string")
    _require(rec, "seed", int, "the seed, an integer")


def _check_bli(rec: Record) -> None:
    _check_common(rec)
    lang = _require(rec, "language", str, "the language code, a string")
    hub = _require(rec, "hub", str, "the hub language code, a string")
    results = _require(rec, "results", Mapping, "a mapping direction -> retrieval -> metrics")
    for pair in (f"{hub}-{lang}", f"{lang}-{hub}"):
        if pair in results and not isinstance(results[pair], Mapping):
            raise InputError(
                f"{_where(rec)}: results.{pair}: expected a mapping retrieval -> metrics"
            )


def _check_wordsim(rec: Record) -> None:
    _check_common(rec)
    results = _require(rec, "results", list, "a list of word-similarity entries")
    for i, entry in enumerate(results):
        _entry_key(entry, f"{_where(rec)}: results[{i}]")


def _entry_key(entry: Any, at: str) -> tuple[str, str, str]:
    """``(dataset, task, column)`` of a word-similarity entry, e.g. ``("semeval17",
    "cross-lingual", "de-en")``.

    ``languages`` is a list (or a ``-``-joined string) of one code for a monolingual set
    and two for a cross-lingual one; ``task``, when given, must agree with it.
    """
    if not isinstance(entry, Mapping):
        raise InputError(f"{at}: expected an object with dataset, task, languages")
    for key in ("dataset", "languages"):
        if key not in entry:
            raise InputError(f"{at}: missing key {key!r}")
    dataset, langs = entry["dataset"], entry["languages"]
    if not isinstance(dataset, str) or not dataset:
        raise InputError(f"{at}: dataset: expected a dataset name, got {dataset!r}")
    if isinstance(langs, str):
        langs = langs.split("-")
    if (
        not isinstance(langs, list)
        or len(langs) not in (1, 2)
        or not all(isinstance(x, str) and x for x in langs)
    ):
        raise InputError(f"{at}: languages: expected 1 or 2 language codes, got {langs!r}")
    inferred = WORDSIM_TASKS[len(langs) - 1]
    task = entry.get("task", inferred)
    if task not in WORDSIM_TASKS:
        raise InputError(f"{at}: task: expected one of {WORDSIM_TASKS}, got {task!r}")
    if task != inferred:
        raise InputError(
            f"{at}: languages: expected {1 if task == 'monolingual' else 2} code(s) for a "
            f"{task} entry, got {entry['languages']!r}"
        )
    return dataset, task, "-".join(sorted(langs))


def _number(value: Any, at: str) -> float | None:
    """A metric value; ``None``/NaN (nothing evaluated) count as a missing result."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"{at}: expected a number, got {value!r}")
    return None if math.isnan(value) else float(value)


# ---------------------------------------------------------------------------------------
# Shared table machinery

# obs[space][seed][item] -> value; every seed a space has a record for is a key.
Obs = dict[str, dict[int, dict[str, float]]]


def bli_test_sets(dictionaries: Sequence[str] | None) -> str:
    """What the BLI test dictionaries are, for captions: ``MUSE`` only when the test sets
    are MUSE's (``muse`` among the sources: its ``.5000-6500`` files are the test sets),
    otherwise the sources named, so a table of package dictionaries never reads as MUSE."""
    if not dictionaries or "muse" in dictionaries:
        return "MUSE"
    return " + ".join(DICTIONARY_NAMES.get(d, d) for d in dictionaries)


def _bli_task(test_sets: str) -> str:
    if test_sets == "MUSE":
        return "MUSE BLI tasks"
    return (
        f"BLI on the test split of {test_sets} (VecMap's evaluation protocol; not MUSE's test sets)"
    )


def display_names(spaces: Sequence[str], names: Mapping[str, str] | None) -> dict[str, str]:
    """Space id -> row label (``names`` over :data:`DEFAULT_NAMES` over the id)."""
    out = {s: (names or {}).get(s) or DEFAULT_NAMES.get(s) or s for s in spaces}
    seen: dict[str, str] = {}
    for s, label in out.items():
        if label in seen:
            raise ConfigError(f"names: spaces {seen[label]!r} and {s!r} share the name {label!r}")
        seen[label] = s
    return out


def _fmt(vals: Sequence[float], decimals: int) -> str:
    if not vals:
        return MISSING
    mean = statistics.fmean(vals)
    if len(vals) == 1:
        return f"{mean:.{decimals}f}"
    return f"{mean:.{decimals}f} ± {statistics.stdev(vals):.{decimals}f}"


@dataclass
class _Average:
    per_space: dict[str, list[float]]  # per-seed averages over the common items
    common: list[str]
    left_out: dict[str, list[tuple[str, int]]]  # item -> (space, seed) lacking it
    absent: list[str]  # compared spaces without any result of this kind


def _common_average(obs: Obs, spaces: Sequence[str]) -> _Average:
    """Per-seed averages over the items present in every seed of every space with results."""
    active = [s for s in spaces if any(obs.get(s, {}).values())]
    absent = [s for s in spaces if s not in active]
    items = sorted({i for s in active for d in obs[s].values() for i in d})
    common: list[str] = []
    left_out: dict[str, list[tuple[str, int]]] = {}
    for item in items:
        lacking = [(s, seed) for s in active for seed in sorted(obs[s]) if item not in obs[s][seed]]
        if lacking:
            left_out[item] = lacking
        else:
            common.append(item)
    per_space = {
        s: [statistics.fmean(obs[s][seed][i] for i in common) for seed in sorted(obs[s])]
        if common
        else []
        for s in active
    }
    return _Average(per_space, common, left_out, absent)


def _lacking_text(
    lacking: list[tuple[str, int]], obs: Obs, label: Mapping[str, str], what: str
) -> str:
    parts = []
    for s in dict.fromkeys(sp for sp, _ in lacking):
        seeds = [seed for sp, seed in lacking if sp == s]
        if len(seeds) == len(obs[s]):
            parts.append(label[s])
        else:
            parts.append(f"{label[s]} seed{'s' if len(seeds) > 1 else ''} {_join(seeds)}")
    return f"no {what} for {', '.join(parts)}"


def _join(items: Iterable[Any]) -> str:
    return ", ".join(str(i) for i in items)


def _average_note(
    avg: _Average,
    obs: Obs,
    label: Mapping[str, str],
    *,
    column: str,
    noun: str,
    what: Any,
) -> str:
    """Footnote: which items an average covers and which were left out, and why.

    ``what`` gives, per left-out item, the name of the missing result (e.g. ``en-es``).
    """
    if not avg.common:
        text = f"{column}: no {noun} present in all models, so no average"
    else:
        n = len(avg.common)
        text = (
            f"{column}: averaged over the {n} {noun if n > 1 else noun.rstrip('s')} present "
            f"in all models ({_join(avg.common)})"
        )
    if avg.left_out:
        reasons = "; ".join(
            f"{item} ({_lacking_text(lacking, obs, label, what(item))})"
            for item, lacking in avg.left_out.items()
        )
        text += f"; left out: {reasons}"
    return text + "."


def _seeds_note(
    spaces: Sequence[str], seeds_of: Mapping[str, Sequence[int]], label: Mapping[str, str]
) -> str | None:
    multi = {s: list(seeds_of[s]) for s in spaces if len(seeds_of.get(s, ())) > 1}
    if not multi:
        return None
    groups: dict[tuple[int, ...], list[str]] = {}
    for s, seeds in multi.items():
        groups.setdefault(tuple(seeds), []).append(label[s])
    if len(groups) == 1 and len(multi) == len([s for s in spaces if seeds_of.get(s)]):
        (seeds, _), *_ = groups.items()
        where = f"over seeds {_join(seeds)}"
    else:
        where = "over seeds " + "; ".join(
            f"{', '.join(rows)}: {_join(seeds)}" for seeds, rows in groups.items()
        )
    return f"Mean ± sample standard deviation {where} (each seed averaged first, then the seeds)."


def _build(
    name: str,
    caption: str,
    spaces: Sequence[str],
    label: Mapping[str, str],
    columns: Sequence[str],
    cells: Mapping[tuple[str, str], Sequence[float]],
    decimals: Mapping[str, int],
    *,
    seeds_of: Mapping[str, Sequence[int]] | None = None,
    markers: Mapping[tuple[str, str], str] | None = None,
    footnotes: Sequence[str] = (),
    meta: dict[str, Any] | None = None,
) -> Table:
    """Assemble a table from per-seed cell values (an empty list is a missing result)."""
    index = pd.Index([label[s] for s in spaces], name="Model")
    text: dict[str, list[str]] = {c: [] for c in columns}
    means: dict[str, list[float]] = {c: [] for c in columns}
    stds: dict[str, list[float]] = {c: [] for c in columns}
    fewer: list[str] = []
    for s in spaces:
        n_seeds = len(seeds_of.get(s, ())) if seeds_of is not None else 0
        for c in columns:
            vals = list(cells.get((s, c), ()))
            cell = _fmt(vals, decimals.get(c, 2)) + (markers or {}).get((s, c), "")
            if vals and len(vals) < n_seeds:
                cell += FEWER_SEEDS
                fewer.append(f"{label[s]} {c} ({len(vals)} of {n_seeds})")
            text[c].append(cell)
            means[c].append(statistics.fmean(vals) if vals else math.nan)
            stds[c].append(statistics.stdev(vals) if len(vals) > 1 else math.nan)
    notes = list(footnotes)
    if fewer:
        notes.append(f"{FEWER_SEEDS} Mean over fewer seeds than the row's: {'; '.join(fewer)}.")
    if seeds_of is not None:
        n_rows = [len(seeds_of.get(s, ())) for s in spaces]
        note = _seeds_note(spaces, seeds_of, label)
        if note:
            notes.append(note)
    else:
        n_rows = [max((len(cells.get((s, c), ())) for c in columns), default=0) for s in spaces]
    return Table(
        name=name,
        caption=caption,
        spaces=list(spaces),
        frame=pd.DataFrame(text, index=index, columns=list(columns), dtype=object),
        values=pd.DataFrame(means, index=index, columns=list(columns), dtype=float),
        std=pd.DataFrame(stds, index=index, columns=list(columns), dtype=float),
        seeds=n_rows,
        footnotes=notes,
        meta=meta or {},
    )


def _absent_note(absent: Sequence[str], label: Mapping[str, str], what: str) -> list[str]:
    if not absent:
        return []
    return [f"No {what} for {', '.join(label[s] for s in absent)} ({MISSING})."]


def _alignment_note(
    records: Iterable[Record], spaces: Sequence[str], label: Mapping[str, str]
) -> list[str]:
    """Which languages of the aligned spaces fell back to another recipe or stayed
    unmapped, and why (the BLI records' ``alignment.note``, see xlalign.mapping.pairs),
    languages with the same outcome listed together."""
    seeds: dict[str, set[Any]] = {}
    notes: dict[str, dict[str, dict[str, set[Any]]]] = {}
    for rec in records:
        seeds.setdefault(rec.get("space"), set()).add(rec.get("seed"))
        note = (rec.get("alignment") or {}).get("note")
        if note and rec.get("space") in spaces:
            by_lang = notes.setdefault(rec["space"], {}).setdefault(note, {})
            by_lang.setdefault(rec["language"], set()).add(rec.get("seed"))
    parts = []
    for s in (s for s in spaces if s in notes):
        items = []
        for note, by_lang in sorted(notes[s].items()):
            outcome, _, why = note.partition(": ")
            langs = ", ".join(
                lang if seen == seeds[s] else f"{lang} (seed {', '.join(map(str, sorted(seen)))})"
                for lang, seen in sorted(by_lang.items())
            )
            items.append(f"{outcome} ({why}): {langs}" if why else f"{outcome}: {langs}")
        parts.append(f"{label[s]}: {'; '.join(items)}")
    return [f"Alignment: {'. '.join(parts)}."] if parts else []


# ---------------------------------------------------------------------------------------
# BLI (Tables 1 and 5)


@dataclass
class _BLI:
    hub: str
    seeds_of: dict[str, list[int]]
    # values[(space, seed, language)][pair] -> metric (only directions with a number)
    values: dict[tuple[str, int, str], dict[str, float]]
    # counts[(space, seed, language)][pair] -> (evaluated, total) where reported
    counts: dict[tuple[str, int, str], dict[str, tuple[int, int]]]
    languages: list[str]


def _collect_bli(
    records: Iterable[Record], spaces: Sequence[str], metric: str, retrieval: str
) -> _BLI:
    wanted = set(spaces)
    hubs: dict[str, str] = {}
    seen: dict[tuple[str, int, str], str] = {}
    seeds_of: dict[str, set[int]] = {s: set() for s in spaces}
    values: dict[tuple[str, int, str], dict[str, float]] = {}
    counts: dict[tuple[str, int, str], dict[str, tuple[int, int]]] = {}
    for rec in records:
        _check_bli(rec)
        space, seed, lang, hub = rec["space"], rec["seed"], rec["language"], rec["hub"]
        if space not in wanted:
            continue
        key = (space, seed, lang)
        if key in seen:
            raise InputError(
                f"{_where(rec)}: duplicate BLI record for space {space!r}, seed {seed}, "
                f"language {lang!r} (also in {seen[key]}); expected one per (space, seed, "
                f"language)"
            )
        seen[key] = _where(rec)
        hubs.setdefault(hub, _where(rec))
        seeds_of[space].add(seed)
        values[key], counts[key] = {}, {}
        for pair in (f"{hub}-{lang}", f"{lang}-{hub}"):
            if pair not in rec["results"]:
                continue
            at = f"{_where(rec)}: results.{pair}"
            by_retrieval = rec["results"][pair]
            if retrieval not in by_retrieval:
                raise InputError(f"{at}: missing key {retrieval!r} (the retrieval asked for)")
            scores = by_retrieval[retrieval]
            if not isinstance(scores, Mapping):
                raise InputError(f"{at}.{retrieval}: expected a mapping metric -> value")
            if metric not in scores:
                raise InputError(f"{at}.{retrieval}: missing key {metric!r}")
            value = _number(scores[metric], f"{at}.{retrieval}.{metric}")
            if value is not None:
                values[key][pair] = value
            if "evaluated" in scores and "total" in scores:
                ev = _number(scores["evaluated"], f"{at}.{retrieval}.evaluated")
                tot = _number(scores["total"], f"{at}.{retrieval}.total")
                if ev is not None and tot is not None:
                    counts[key][pair] = (int(ev), int(tot))
    if len(hubs) > 1:
        raise InputError(
            "BLI records use different hub languages: "
            + "; ".join(f"{h!r} (e.g. {w})" for h, w in hubs.items())
            + "; expected one hub"
        )
    hub = next(iter(hubs), "en")
    languages = sorted({lang for (_, _, lang), d in values.items() if d})
    return _BLI(hub, {s: sorted(v) for s, v in seeds_of.items()}, values, counts, languages)


def _metric_label(metric: str, retrieval: str) -> str:
    scale = "in %" if metric.lower().startswith("p@") else "×100"
    return f"{metric.upper()} ({retrieval.upper()} retrieval) {scale}"


def _spaces_of(records: Iterable[Record], spaces: Sequence[str] | None) -> list[str]:
    if spaces is not None:
        return list(dict.fromkeys(spaces))
    return sorted({str(r.get("space")) for r in records})


def bli_summary(
    records: Sequence[Record],
    *,
    spaces: Sequence[str] | None = None,
    names: Mapping[str, str] | None = None,
    metric: str = "p@1",
    retrieval: str = "csls",
    test_sets: str = "MUSE",
) -> Table:
    """Table 1: per space, ``hub-xx`` and ``xx-hub`` averaged over the shared languages."""
    spaces = _spaces_of(records, spaces)
    label = display_names(spaces, names)
    bli = _collect_bli(records, spaces, metric, retrieval)
    hub = bli.hub
    cells: dict[tuple[str, str], list[float]] = {}
    notes: list[str] = []
    meta: dict[str, Any] = {"metric": metric, "retrieval": retrieval, "hub": hub}
    directions = {f"{hub}-xx": lambda x: f"{hub}-{x}", f"xx-{hub}": lambda x: f"{x}-{hub}"}
    averages: dict[str, tuple[_Average, Obs]] = {}
    for column, pair_of in directions.items():
        obs: Obs = {s: {seed: {} for seed in bli.seeds_of[s]} for s in spaces}
        for (s, seed, lang), vals in bli.values.items():
            if pair_of(lang) in vals:
                obs[s][seed][lang] = 100.0 * vals[pair_of(lang)]
        avg = _common_average(obs, spaces)
        averages[column] = (avg, obs)
        for s, per_seed in avg.per_space.items():
            cells[(s, column)] = per_seed
        meta[column] = {
            "averaged": avg.common,
            "left_out": {i: [f"{s} seed {seed}" for s, seed in v] for i, v in avg.left_out.items()},
        }
    (a1, o1), (a2, _) = averages.values()
    c1, c2 = directions
    if a1.common == a2.common and a1.left_out == a2.left_out:
        notes.append(
            _average_note(
                a1,
                o1,
                label,
                column=f"{c1} and {c2}",
                noun="languages",
                what=lambda x: f"{hub}-{x}/{x}-{hub} result",
            )
        )
    else:
        for column, (avg, obs) in averages.items():
            pair_of = directions[column]
            notes.append(
                _average_note(
                    avg,
                    obs,
                    label,
                    column=column,
                    noun="languages",
                    what=lambda x, p=pair_of: f"{p(x)} result",
                )
            )
    absent = sorted(set(a1.absent) & set(a2.absent), key=list(spaces).index)
    notes += _absent_note(absent, label, "BLI results")
    notes += _alignment_note(records, spaces, label)
    caption = (
        f"Table 1: Results from {_bli_task(test_sets)}, {_metric_label(metric, retrieval)}. "
        "Scores are averaged over those language pairs present in all models."
    )
    return _build(
        "table1",
        caption,
        spaces,
        label,
        list(directions),
        cells,
        {},
        seeds_of=bli.seeds_of,
        footnotes=notes,
        meta=meta,
    )


def bli_per_language(
    records: Sequence[Record],
    *,
    spaces: Sequence[str] | None = None,
    names: Mapping[str, str] | None = None,
    metric: str = "p@1",
    retrieval: str = "csls",
    per_direction: bool = False,
    test_sets: str = "MUSE",
) -> Table:
    """Table 5: per space and language, the metric averaged over both directions.

    With ``per_direction`` the columns are the directions themselves (``en-de``, ``de-en``).
    """
    spaces = _spaces_of(records, spaces)
    label = display_names(spaces, names)
    bli = _collect_bli(records, spaces, metric, retrieval)
    hub = bli.hub
    cells: dict[tuple[str, str], list[float]] = {}
    markers: dict[tuple[str, str], str] = {}
    one_way: dict[tuple[str, str], set[str]] = {}
    columns: list[str] = []
    for lang in bli.languages:
        pairs = [f"{hub}-{lang}", f"{lang}-{hub}"]
        if per_direction:
            columns += [p for p in pairs if any(p in bli.values[k] for k in bli.values)]
        else:
            columns.append(lang)
    for s in spaces:
        for seed in bli.seeds_of[s]:
            for lang in bli.languages:
                vals = bli.values.get((s, seed, lang), {})
                if per_direction:
                    for pair, v in vals.items():
                        cells.setdefault((s, pair), []).append(100.0 * v)
                elif vals:
                    cells.setdefault((s, lang), []).append(100.0 * statistics.fmean(vals.values()))
                    if len(vals) == 1:
                        one_way.setdefault((s, lang), set()).update(vals)
    notes: list[str] = []
    if one_way:
        for key in one_way:
            markers[key] = ONE_DIRECTION
        listed = "; ".join(
            f"{label[s]} {lang} ({'/'.join(sorted(p))} only)" for (s, lang), p in one_way.items()
        )
        notes.append(
            f"{ONE_DIRECTION} One direction only (no dictionary or result for the other): {listed}."
        )
    active = {s for (s, _, _), v in bli.values.items() if v}
    notes += _absent_note([s for s in spaces if s not in active], label, "BLI results")
    notes += _alignment_note(records, spaces, label)
    kind = "per direction" if per_direction else "averaged over both directions"
    caption = (
        f"Table 5{' (per direction)' if per_direction else ''}: Cross-lingual "
        + ("MUSE results" if test_sets == "MUSE" else _bli_task(test_sets))
        + f", per language with {hub}, {kind}; "
        f"{_metric_label(metric, retrieval)}."
    )
    return _build(
        "table5_directions" if per_direction else "table5",
        caption,
        spaces,
        label,
        columns,
        cells,
        {},
        seeds_of=bli.seeds_of,
        markers=markers,
        footnotes=notes,
        meta={"metric": metric, "retrieval": retrieval, "hub": hub, "languages": bli.languages},
    )


def bli_coverage(
    records: Sequence[Record],
    *,
    spaces: Sequence[str] | None = None,
    names: Mapping[str, str] | None = None,
    retrieval: str = "csls",
    metric: str = "p@1",
) -> Table:
    """Per space and language, evaluated / total dictionary entries (both directions), in %."""
    spaces = _spaces_of(records, spaces)
    label = display_names(spaces, names)
    bli = _collect_bli(records, spaces, metric, retrieval)
    pooled: dict[tuple[str, str], list[int]] = {}
    for (s, _, lang), by_pair in bli.counts.items():
        acc = pooled.setdefault((s, lang), [0, 0])
        for ev, tot in by_pair.values():
            acc[0] += ev
            acc[1] += tot
    cells = {k: [100.0 * ev / tot] for k, (ev, tot) in pooled.items() if tot > 0}
    languages = sorted({lang for (_, lang) in cells})
    caption = (
        "BLI coverage: test-dictionary source words evaluated (both words in the vocabularies) "
        f"out of all, in %, both directions and all seeds pooled ({retrieval.upper()} entries)."
    )
    table = _build(
        "coverage_bli", caption, spaces, label, languages, cells, dict.fromkeys(languages, 1)
    )
    table.seeds = [len(bli.seeds_of[s]) for s in spaces]  # pooled over these seeds
    return table


# ---------------------------------------------------------------------------------------
# Word similarity (Tables 2, 6 and 7; other datasets)


@dataclass
class _WordSim:
    seeds_of: dict[str, list[int]]
    # obs[dataset][task][space][seed][item]
    obs: dict[str, dict[str, Obs]]
    # pooled (found, total) per (dataset, space, item)
    counts: dict[tuple[str, str, str], list[int]]
    # the measure shown per dataset, and the (space, seed, item) whose score is 0 by rule
    measures: dict[str, str] = field(default_factory=dict)
    zeroed: dict[str, set[tuple[str, int, str]]] = field(default_factory=dict)


def _default_measure(ds: str, main: str) -> str:
    base = ds.removesuffix(COMPOSED_SUFFIX)
    return OFFICIAL_MEASURE if base == main else COVERED_MEASURE


def _measure_label(ds: str, measure: str, main: str) -> str:
    what = WORDSIM_MEASURES.get(measure, measure)
    if measure == OFFICIAL_MEASURE and ds == main == "semeval17":
        return f"official score: {what}"
    return what


def _collect_wordsim(
    records: Iterable[Record],
    spaces: Sequence[str],
    measure: str | None,
    main: str = "semeval17",
) -> _WordSim:
    """``measure`` None: each dataset's default (:data:`OFFICIAL_MEASURE` for ``main``)."""
    wanted = set(spaces)
    seen: dict[tuple[str, int], str] = {}
    seeds_of: dict[str, set[int]] = {s: set() for s in spaces}
    obs: dict[str, dict[str, Obs]] = {}
    counts: dict[tuple[str, str, str], list[int]] = {}
    kept: list[Record] = []
    for rec in records:
        _check_wordsim(rec)
        space, seed = rec["space"], rec["seed"]
        if space not in wanted:
            continue
        if (space, seed) in seen:
            raise InputError(
                f"{_where(rec)}: duplicate word-similarity record for space {space!r}, seed "
                f"{seed} (also in {seen[(space, seed)]}); expected one per (space, seed)"
            )
        seen[(space, seed)] = _where(rec)
        seeds_of[space].add(seed)
        kept.append(rec)
    datasets = sorted({e["dataset"] for rec in kept for e in rec["results"]})
    measures = {ds: measure or _default_measure(ds, main) for ds in datasets}
    zeroed: dict[str, set[tuple[str, int, str]]] = {ds: set() for ds in datasets}
    for ds in datasets:
        obs[ds] = {
            t: {s: {seed: {} for seed in seeds_of[s]} for s in spaces} for t in WORDSIM_TASKS
        }
    for rec in kept:
        space, seed = rec["space"], rec["seed"]
        for i, entry in enumerate(rec["results"]):
            at = f"{_where(rec)}: results[{i}]"
            ds, task, item = _entry_key(entry, at)
            slot = obs[ds][task][space][seed]
            if item in slot:
                raise InputError(f"{at}: duplicate {ds} {task} entry for {item!r}")
            key = measures[ds]
            if key not in entry:
                raise InputError(f"{at}: missing key {key!r}")
            value = _number(entry[key], f"{at}.{key}")
            if value is not None:
                slot[item] = value
            if entry.get(f"{key}_zeroed") is True:
                zeroed[ds].add((space, seed, item))
            if "found" in entry and "total" in entry:
                found = _number(entry["found"], f"{at}.found")
                total = _number(entry["total"], f"{at}.total")
                if found is not None and total is not None:
                    acc = counts.setdefault((ds, space, item), [0, 0])
                    acc[0] += int(found)
                    acc[1] += int(total)
    return _WordSim({s: sorted(v) for s, v in seeds_of.items()}, obs, counts, measures, zeroed)


def _zeroed_note(ws: _WordSim, ds: str, label: Mapping[str, str]) -> list[str]:
    """A footnote naming the cells that are 0 by the scorer's rule, not by a mean of 0."""
    cells = sorted(ws.zeroed.get(ds, ()))
    if not cells:
        return []
    several = any(len(ws.seeds_of.get(s, ())) > 1 for s, _, _ in cells)
    names = ", ".join(
        f"{label.get(s, s)} {item}" + (f" (seed {seed})" if several else "")
        for s, seed, item in cells
    )
    return [
        f"Scored 0 by the SemEval-2017 Task 2 scorer's rule (Pearson or Spearman not "
        f"positive), not a harmonic mean of 0: {names}."
    ]


def _dataset_name(dataset: str) -> str:
    if dataset.endswith(COMPOSED_SUFFIX):
        base = dataset.removesuffix(COMPOSED_SUFFIX)
        return f"{DATASET_NAMES.get(base, base)}, multiword entries composed from their words"
    return DATASET_NAMES.get(dataset, dataset)


def wordsim_tables(
    records: Sequence[Record],
    *,
    spaces: Sequence[str] | None = None,
    names: Mapping[str, str] | None = None,
    dataset: str = "semeval17",
    measure: str | None = None,
) -> dict[str, Table]:
    """Tables 2, 6 and 7 for ``dataset``; ``wordsim_<name>`` for every other dataset.

    Table 6 (cross-lingual pairs + avg) and Table 7 (monolingual languages) appear only when
    there are entries of that task; Table 2 holds their averages, which use the pairs and
    languages present in all models, like Table 1. ``measure`` None shows the official
    score (``score_all``) for ``dataset`` (and ``<dataset>-composed``) and Spearman on the
    covered pairs for the others; every caption names its measure.
    """
    spaces = _spaces_of(records, spaces)
    label = display_names(spaces, names)
    ws = _collect_wordsim(records, spaces, measure, dataset)
    out: dict[str, Table] = {}
    if dataset in ws.obs:
        out.update(_main_wordsim(ws, dataset, spaces, label, ws.measures[dataset]))
    for ds in ws.obs:
        if ds != dataset:
            out[f"wordsim_{ds}"] = _other_wordsim(ws, ds, spaces, label, ws.measures[ds], dataset)
    return out


_TASK_NOUN = {"monolingual": "languages", "cross-lingual": "pairs"}


def _task_note(
    ws: _WordSim, ds: str, task: str, avg: _Average, label: Mapping[str, str], column: str
) -> str:
    obs = ws.obs[ds][task]
    return _average_note(
        avg, obs, label, column=column, noun=_TASK_NOUN[task], what=lambda _: "result"
    )


def _task_items(ws: _WordSim, ds: str, task: str) -> list[str]:
    obs = ws.obs[ds][task]
    return sorted({i for per_seed in obs.values() for d in per_seed.values() for i in d})


def _item_cells(ws: _WordSim, ds: str, task: str) -> dict[tuple[str, str], list[float]]:
    cells: dict[tuple[str, str], list[float]] = {}
    for s, per_seed in ws.obs[ds][task].items():
        for seed in sorted(per_seed):
            for item, v in per_seed[seed].items():
                cells.setdefault((s, item), []).append(v)
    return cells


def _main_wordsim(
    ws: _WordSim, ds: str, spaces: Sequence[str], label: Mapping[str, str], measure: str
) -> dict[str, Table]:
    name = _dataset_name(ds)
    what = _measure_label(ds, measure, ds)
    tables: dict[str, Table] = {}
    summary_cells: dict[tuple[str, str], list[float]] = {}
    summary_cols: list[str] = []
    summary_notes: list[str] = []
    meta: dict[str, Any] = {"dataset": ds, "measure": measure}
    for task, stem, title in (
        ("cross-lingual", "table6", "Table 6: Full cross-lingual results"),
        ("monolingual", "table7", "Table 7: Full monolingual results"),
    ):
        items = _task_items(ws, ds, task)
        if not items:
            continue
        avg = _common_average(ws.obs[ds][task], spaces)
        cells = _item_cells(ws, ds, task)
        columns = list(items)
        decimals = dict.fromkeys(items, 2)
        notes: list[str] = []
        if task == "cross-lingual":
            columns.append("avg")
            decimals["avg"] = 3
            cells.update({(s, "avg"): v for s, v in avg.per_space.items()})
            notes.append(_task_note(ws, ds, task, avg, label, "avg"))
        notes += _absent_note(avg.absent, label, f"{task} {name} results")
        notes += _zeroed_note(ws, ds, label)
        tables[stem] = _build(
            stem,
            f"{title} on {name} ({what}).",
            spaces,
            label,
            columns,
            cells,
            decimals,
            seeds_of=ws.seeds_of,
            footnotes=notes,
            meta={**meta, "averaged": avg.common, "left_out": sorted(avg.left_out)},
        )
        summary_cols.append(task)
        summary_cells.update({(s, task): v for s, v in avg.per_space.items()})
        summary_notes.append(_task_note(ws, ds, task, avg, label, task))
        meta[task] = {"averaged": avg.common, "left_out": sorted(avg.left_out)}
    tables["table2"] = _build(
        "table2",
        f"Table 2: Average monolingual and cross-lingual scores on {name} ({what}). "
        "See Tables 6 and 7 for detailed results.",
        spaces,
        label,
        summary_cols,
        summary_cells,
        dict.fromkeys(summary_cols, 3),
        seeds_of=ws.seeds_of,
        footnotes=summary_notes,
        meta=meta,
    )
    return {k: tables[k] for k in ("table2", "table6", "table7") if k in tables}


def _other_wordsim(
    ws: _WordSim,
    ds: str,
    spaces: Sequence[str],
    label: Mapping[str, str],
    measure: str,
    main: str = "semeval17",
) -> Table:
    name = _dataset_name(ds)
    tasks = [t for t in WORDSIM_TASKS if _task_items(ws, ds, t)]
    columns: list[str] = []
    cells: dict[tuple[str, str], list[float]] = {}
    decimals: dict[str, int] = {}
    notes: list[str] = []
    meta: dict[str, Any] = {"dataset": ds, "measure": measure}
    absent = set(spaces)
    for task in tasks:
        items = _task_items(ws, ds, task)
        columns += items
        decimals.update(dict.fromkeys(items, 2))
        cells.update(_item_cells(ws, ds, task))
        column = "avg" if len(tasks) == 1 else f"{task} avg"
        avg = _common_average(ws.obs[ds][task], spaces)
        absent &= set(avg.absent)
        meta[task] = {"averaged": avg.common, "left_out": sorted(avg.left_out)}
        if len(items) > 1:
            columns.append(column)
            decimals[column] = 3
            cells.update({(s, column): v for s, v in avg.per_space.items()})
            notes.append(_task_note(ws, ds, task, avg, label, column))
    if not columns:
        # No space has a score (e.g. fewer than 3 pairs in vocabulary): the evaluated
        # items still get a column of "–", so the table says where nothing was measured.
        columns = sorted({item for (d, _, item) in ws.counts if d == ds})
    notes += _absent_note([s for s in spaces if s in absent], label, f"{name} results")
    notes += _zeroed_note(ws, ds, label)
    return _build(
        f"wordsim_{ds}",
        f"Word similarity on {name} ({_measure_label(ds, measure, main)}).",
        spaces,
        label,
        columns,
        cells,
        decimals,
        seeds_of=ws.seeds_of,
        footnotes=notes,
        meta=meta,
    )


def wordsim_coverage(
    records: Sequence[Record],
    *,
    spaces: Sequence[str] | None = None,
    names: Mapping[str, str] | None = None,
    measure: str | None = None,
) -> dict[str, Table]:
    """Per dataset: found / total word pairs per language or pair, in % (seeds pooled)."""
    spaces = _spaces_of(records, spaces)
    label = display_names(spaces, names)
    ws = _collect_wordsim(records, spaces, measure)
    out: dict[str, Table] = {}
    for ds in ws.obs:
        cells = {
            (s, item): [100.0 * f / t]
            for (d, s, item), (f, t) in ws.counts.items()
            if d == ds and t
        }
        if not cells:
            continue
        covered = sorted({c for _, c in cells})
        columns = [i for t in WORDSIM_TASKS for i in _task_items(ws, ds, t) if i in covered]
        # Items without any score (too few pairs in vocabulary) still have a coverage.
        columns += [i for i in covered if i not in columns]
        out[f"coverage_wordsim_{ds}"] = table = _build(
            f"coverage_wordsim_{ds}",
            f"Word-similarity coverage on {_dataset_name(ds)}: pairs with both words in the "
            "vocabulary out of all, in %, seeds pooled.",
            spaces,
            label,
            columns,
            cells,
            dict.fromkeys(columns, 1),
        )
        table.seeds = [len(ws.seeds_of[s]) for s in spaces]  # pooled over these seeds
    return out


# ---------------------------------------------------------------------------------------
# Output


def _cell_text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    return str(value).replace("|", "\\|").replace("\n", " ")


def to_markdown(df: pd.DataFrame, caption: str = "", footnotes: Sequence[str] = ()) -> str:
    """A pipe table: caption, header (index name first), separator, one line per row, notes.

    The first column is left-aligned and the others right-aligned; ``None``/NaN show as
    ``–``. Each footnote is its own paragraph under the table.
    """
    header = [_cell_text(df.index.name or ""), *(_cell_text(c) for c in df.columns)]
    rows = [
        [_cell_text(idx), *(_cell_text(v) for v in row)]
        for idx, row in zip(df.index, df.itertuples(index=False, name=None), strict=True)
    ]
    widths = [max(3, *(len(r[j]) for r in [header, *rows])) for j in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = [
            c.ljust(w) if j == 0 else c.rjust(w)
            for j, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    sep = ["-" * widths[0], *("-" * (w - 1) + ":" for w in widths[1:])]
    lines = [caption, ""] if caption else []
    lines += [line(header), "| " + " | ".join(sep) + " |", *(line(r) for r in rows)]
    for note in footnotes:
        lines += ["", note]
    return "\n".join(lines) + "\n"


def build_tables(
    bli_records: Sequence[Record],
    wordsim_records: Sequence[Record],
    *,
    spaces: Sequence[str] | None = None,
    names: Mapping[str, str] | None = None,
    metric: str = "p@1",
    retrieval: str = "csls",
    dataset: str = "semeval17",
    measure: str | None = None,
    test_sets: str = "MUSE",
) -> list[Table]:
    """All tables in ``tables.md`` order; the same rows everywhere (all compared spaces)."""
    if spaces is None:
        spaces = sorted({str(r.get("space")) for r in [*bli_records, *wordsim_records]})
    opts: dict[str, Any] = {"spaces": spaces, "names": names}
    tables: list[Table] = []
    if bli_records:
        bli_opts = {**opts, "metric": metric, "retrieval": retrieval}
        tables.append(bli_summary(bli_records, test_sets=test_sets, **bli_opts))
        tables.append(bli_per_language(bli_records, test_sets=test_sets, **bli_opts))
        tables.append(
            bli_per_language(bli_records, per_direction=True, test_sets=test_sets, **bli_opts)
        )
        tables.append(bli_coverage(bli_records, **bli_opts))
    if wordsim_records:
        ws = wordsim_tables(wordsim_records, dataset=dataset, measure=measure, **opts)
        tables += list(ws.values())
        tables += list(wordsim_coverage(wordsim_records, measure=measure, **opts).values())
    return tables


def write_tables(
    bli_records: Sequence[Record],
    wordsim_records: Sequence[Record],
    out_dir: PathLike,
    *,
    spaces: Sequence[str] | None = None,
    names: Mapping[str, str] | None = None,
    metric: str = "p@1",
    retrieval: str = "csls",
    dataset: str = "semeval17",
    measure: str | None = None,
    test_sets: str = "MUSE",
) -> dict[str, Any]:
    """Write ``<table>.md``/``.csv``/``.tex`` per table and ``tables.md`` with all,
    atomically; each column's best value is in bold (Markdown and LaTeX).

    Returns a summary for a stats file: the files written and, per table, its rows,
    columns and what its averages cover.
    """
    if not bli_records and not wordsim_records:
        raise InputError(f"{out_dir}: no BLI or word-similarity records to tabulate")
    out = Path(out_dir)
    tables = build_tables(
        bli_records,
        wordsim_records,
        spaces=spaces,
        names=names,
        metric=metric,
        retrieval=retrieval,
        dataset=dataset,
        measure=measure,
        test_sets=test_sets,
    )
    files: list[str] = []
    summary: dict[str, Any] = {}
    parts = [
        "# Result tables",
        "",
        f"BLI: {_metric_label(metric, retrieval)}, test dictionaries: {test_sets}. "
        "Word similarity: "
        + (
            f"{measure}"
            if measure
            else f"the official score (`{OFFICIAL_MEASURE}`) on {_dataset_name(dataset)} "
            f"(Tables 2, 6, 7), Spearman on the pairs in vocabulary (`{COVERED_MEASURE}`) on "
            "the other sets; each caption names its measure"
        )
        + f". {MISSING}: no result.",
    ]
    for table in tables:
        md = table.to_markdown()
        with atomic_open(out / f"{table.name}.md") as fh:
            fh.write(md)
        table.write_csv(out / f"{table.name}.csv")
        with atomic_open(out / f"{table.name}.tex") as fh:
            fh.write(table.to_latex())
        files += [f"{table.name}.md", f"{table.name}.csv", f"{table.name}.tex"]
        parts += ["", md.rstrip("\n")]
        summary[table.name] = {
            "caption": table.caption,
            "rows": list(table.frame.index),
            "columns": list(table.frame.columns),
            "seeds": dict(zip(table.spaces, table.seeds, strict=True)),
            "footnotes": table.footnotes,
            **table.meta,
        }
    with atomic_open(out / "tables.md") as fh:
        fh.write("\n".join(parts) + "\n")
    files.append("tables.md")
    return {"out_dir": str(out), "files": files, "tables": summary}
