"""The tracking manifest: which jobs the MLflow mirror of a seed collects, read off the DAG.

Convention: a job is tracked when its rule declares an output named ``stats`` (the JSON of
its params and metrics); its ``benchmark:`` file, if the rule has one, comes with it. No
list is kept by hand: :func:`tracked_jobs` walks from the workflow's targets through the
rules that produce each file, as Snakemake does when it builds the DAG, and collects every
job with a ``stats`` output. A new rule is tracked as soon as it declares one.

The rules are Snakemake's ``Rule`` objects (``workflow.rules``), used duck-typed: ``name``,
``output`` (named), ``is_producer(path)``, ``get_wildcards(path)``,
``expand_input(wildcards)`` (input files, their mapping, the rules named through
``rules.<name>.output``, an incomplete flag), ``expand_output(wildcards)``,
``expand_benchmark(wildcards)``, and ``<`` for the ``ruleorder``.

Producers are chosen as Snakemake chooses them, short of its recursion: the rule named
through ``rules.<name>.output`` if the consumer used one, else the rules whose outputs
match, highest ``ruleorder`` first (a rule without wildcards before one with), the first
whose inputs can be expanded. A file that no rule produces is a leaf. A true ambiguity is
Snakemake's own error when it builds the DAG.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: The output name that marks a tracked job.
STATS = "stats"
#: Wildcards that tell a training seed (``seed``) or the sampling seed of a corpus (``sseed``).
SEED = "seed"
SAMPLE_SEED = "sseed"


@dataclass(frozen=True)
class TrackedJob:
    """A job with a ``stats`` output: its rule, wildcards (in the order of the stats
    path), stats file and benchmark file (None when the rule has no benchmark)."""

    rule: str
    wildcards: tuple[tuple[str, str], ...]
    stats: str
    benchmark: str | None = None

    @property
    def wildcards_dict(self) -> dict[str, str]:
        return dict(self.wildcards)

    @property
    def job(self) -> str:
        """The job's name in its seed's run: the rule, then its wildcard values other than
        the seeds, e.g. ``sample/ja``, ``map_space/x2s-m/de``, ``word_align/en/de``."""
        values = [v for k, v in self.wildcards if k not in (SEED, SAMPLE_SEED)]
        return "/".join([self.rule, *values])

    @property
    def language(self) -> str | None:
        """The job's language: its ``lang`` wildcard, else the target of a pair (``tgt``)."""
        wc = self.wildcards_dict
        return wc.get("lang", wc.get("tgt"))

    def in_seed(self, seed: int, sample_seed: int) -> bool:
        """Whether the run of training seed ``seed`` (whose corpus is sample ``sample_seed``)
        mirrors this job: its seed, its sample, or a job that depends on neither."""
        wc = self.wildcards_dict
        if SEED in wc and int(wc[SEED]) != int(seed):
            return False
        return not (SAMPLE_SEED in wc and int(wc[SAMPLE_SEED]) != int(sample_seed))

    def record(self) -> dict[str, Any]:
        """The record the `track` job reads (see workflow/scripts/track.py)."""
        return {
            "job": self.job,
            "stage": self.rule,
            "language": self.language,
            "stats": self.stats,
            "benchmark": self.benchmark,
        }


def _priority(a: Any, b: Any) -> int:
    return -1 if a < b else (1 if b < a else 0)


def _wildcard_order(pattern: str, names: Iterable[str]) -> list[str]:
    """``names`` in the order they first appear in ``pattern`` (which may carry inline
    constraints such as ``{lang,de|en}``)."""

    def first(name: str) -> int:
        m = re.search(r"\{\s*" + re.escape(name) + r"\s*[,}]", pattern)
        return m.start() if m else len(pattern)

    return sorted(names, key=first)


def _producer(
    rules: list[Any], path: str, named: Any | None
) -> tuple[Any, dict[str, str], list[Any], Mapping[Any, Any]] | None:
    """The rule producing ``path`` with its wildcards, expanded inputs and the producers
    its inputs name; None for a leaf."""
    if named is not None:
        candidates = [named]
    else:
        candidates = [r for r in rules if r.is_producer(path)]
        candidates.sort(key=functools.cmp_to_key(_priority), reverse=True)
    for rule in candidates:
        try:
            wildcards = dict(rule.get_wildcards(path) or {})
            inputs, _mapping, depends, _incomplete = rule.expand_input(wildcards)
        except Exception:  # as in Snakemake: then not a producer of this file
            continue
        return rule, wildcards, list(inputs), depends or {}
    return None


def tracked_jobs(
    rules: Iterable[Any],
    targets: Iterable[Any],
    *,
    skip: Collection[str] = (),
    key: str = STATS,
) -> list[TrackedJob]:
    """Every job reachable from ``targets`` whose rule has an output named ``key``, in the
    order of ``rules`` (then by wildcards). Rules named in ``skip`` (the tracking job
    itself) are not followed: their outputs are leaves."""
    rules = [r for r in rules if r.name not in skip]
    rank = {r.name: i for i, r in enumerate(rules)}
    seen_files: set[str] = set()
    seen_jobs: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    found: list[TrackedJob] = []
    stack: list[tuple[str, Any | None]] = [(str(t), None) for t in reversed(list(targets))]
    while stack:
        path, named = stack.pop()
        if path in seen_files:
            continue
        seen_files.add(path)
        if named is not None and named.name in skip:
            continue
        job = _producer(rules, path, named)
        if job is None:
            continue
        rule, wildcards, inputs, depends = job
        ident = (rule.name, tuple(sorted(wildcards.items())))
        if ident in seen_jobs:
            continue
        seen_jobs.add(ident)
        stats_pattern = getattr(rule.output, key, None)
        if stats_pattern is not None:
            output, _ = rule.expand_output(wildcards)
            benchmark = rule.expand_benchmark(wildcards)
            order = _wildcard_order(str(stats_pattern), wildcards)
            found.append(
                TrackedJob(
                    rule=rule.name,
                    wildcards=tuple((k, str(wildcards[k])) for k in order),
                    stats=str(getattr(output, key)),
                    benchmark=str(benchmark) if benchmark else None,
                )
            )
        for f in reversed(inputs):
            stack.append((str(f), depends.get(f)))
    found.sort(key=lambda j: (rank[j.rule], [v for _, v in j.wildcards]))
    return found


def seed_records(jobs: Iterable[TrackedJob], seed: int, sample_seed: int) -> list[dict[str, Any]]:
    """The records of the jobs the run of training seed ``seed`` mirrors."""
    return [j.record() for j in jobs if j.in_seed(seed, sample_seed)]
