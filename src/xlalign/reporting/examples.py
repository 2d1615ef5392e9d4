"""Per-example scores from what the workflow writes, for the paired significance tests.

:mod:`xlalign.reporting.significance` compares two models example by example; this module
reads the examples:

* fine-tuning predictions (``<run>/predictions/<lang>.jsonl``, one ``{"id", "prediction",
  "gold", ...}`` per example, :func:`~xlalign.evaluation.tasks.finetune.finetune`):
  :func:`finetune_examples` scores each example by the task's metric
  (:func:`~xlalign.evaluation.tasks.registry.task_info`): per-sentence token accuracy
  and (correct, total) counts for POS tagging, per-sentence span counts for NER,
  per-question F1 and exact match for QA, per-example correctness for classification;
* retrieval predictions (``<set>/<lang>.json``: the pair ``ids`` and the retrieved id per
  query and direction, :func:`~xlalign.evaluation.tasks.run.run_retrieval`):
  :func:`retrieval_hits`;
* BLI records (:func:`~xlalign.evaluation.bli.bli_record`): :func:`bli_query_hits`.

Scores follow the scale of the number they average to: fine-tuning scores are in
[0, 100] like the results files (the mean of per-question QA F1 is the split's F1; the
mean of per-example classification scores its accuracy); hits are 0/1 (their mean is
BLI's P@k as a fraction, and a retrieval accuracy divided by 100).

Two models are compared on the same examples: :func:`align` orders one model's examples
as the other's and raises :class:`InputError` naming both files when the ids differ;
:func:`paired_means` and :func:`paired_counts` do the same over fine-tuning seeds (003
averages each example over seeds for the t-test, and concatenates the seeds for the
permutation test).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, read_json
from xlalign.evaluation.bli import HITS_NOT_EVALUATED, hits_key
from xlalign.evaluation.tasks.metrics import get_chunks, qa_em_f1
from xlalign.evaluation.tasks.registry import task_info
from xlalign.evaluation.tasks.retrieval import DIRECTIONS

__all__ = [
    "ExampleScores",
    "align",
    "bli_query_hits",
    "finetune_examples",
    "paired_counts",
    "paired_means",
    "predictions_file",
    "read_predictions",
    "retrieval_hits",
    "retrieval_predictions_file",
    "span_counts",
    "token_counts",
]


@dataclass(frozen=True)
class ExampleScores:
    """Per-example scores of one model (one seed) on one evaluation set.

    ``values`` maps a metric name to one score per id (``accuracy``, ``f1``,
    ``exact_match``, ``hits``); ``counts`` holds per-example counts where a micro score
    is pooled from them: POS ``(correct, total)`` words, NER ``(correct, n_pred,
    n_gold)`` chunks. ``left_out`` counts examples of the file that have no score (a
    sentence without words, a question without a gold answer), the same for every
    model on the same data.
    """

    source: str
    kind: str
    ids: tuple[str, ...]
    values: dict[str, np.ndarray] = field(default_factory=dict)
    counts: np.ndarray | None = None
    left_out: int = 0

    def __len__(self) -> int:
        return len(self.ids)

    def metric(self, name: str) -> np.ndarray:
        """The per-example scores of metric ``name`` (an error names those there are)."""
        if name not in self.values:
            raise InputError(
                f"{self.source}: no per-example {name!r} scores for a {self.kind} set; "
                f"there are: {', '.join(sorted(self.values)) or 'none (use the counts)'}"
            )
        return self.values[name]

    def take(self, ids: Sequence[str]) -> ExampleScores:
        """These scores for ``ids`` (each one of this set's ids), in that order."""
        index = {i: k for k, i in enumerate(self.ids)}
        rows = np.asarray([index[i] for i in ids], dtype=np.int64)
        return replace(
            self,
            ids=tuple(ids),
            values={k: v[rows] for k, v in self.values.items()},
            counts=None if self.counts is None else self.counts[rows],
        )


# --------------------------------------------------------------------------- alignment


def align(
    a: ExampleScores, b: ExampleScores, *, common: bool = False
) -> tuple[ExampleScores, ExampleScores]:
    """``a`` and ``b`` on the same examples in ``a``'s order.

    Different id sets raise :class:`InputError` naming both files and some ids on one
    side only; ``common=True`` keeps the ids both have instead (BLI spaces with different
    vocabularies under the "skip" OOV policy), an error only when none is shared.
    """
    if a.kind != b.kind:
        raise InputError(f"{a.source} ({a.kind}) and {b.source} ({b.kind}): not the same task")
    in_b = set(b.ids)
    if common:
        ids = [i for i in a.ids if i in in_b]
        if not ids:
            raise InputError(f"{a.source} and {b.source}: no example id in common")
        return a.take(ids), b.take(ids)
    if set(a.ids) != in_b:
        only_a = [i for i in a.ids if i not in in_b]
        in_a = set(a.ids)
        only_b = [i for i in b.ids if i not in in_a]
        raise InputError(
            f"{a.source} and {b.source}: not the same examples ({len(a.ids)} vs "
            f"{len(b.ids)} ids; {len(only_a)} only in the first, e.g. {only_a[:3]}; "
            f"{len(only_b)} only in the second, e.g. {only_b[:3]}); a paired test needs "
            "both models' predictions on the same examples"
        )
    return a, b.take(a.ids)


def _seeds_aligned(
    runs_a: Sequence[ExampleScores], runs_b: Sequence[ExampleScores]
) -> tuple[list[ExampleScores], list[ExampleScores]]:
    if not runs_a or not runs_b:
        raise InputError("paired comparison: no runs for one of the models")
    ref = runs_a[0]
    return [align(ref, r)[1] for r in runs_a], [align(ref, r)[1] for r in runs_b]


def paired_means(
    runs_a: Sequence[ExampleScores], runs_b: Sequence[ExampleScores], metric: str
) -> tuple[np.ndarray, np.ndarray]:
    """Each example's ``metric`` averaged over the seeds of model A and of model B, in
    the order of A's first run: the inputs of 003's paired t-test. The two models may
    have different numbers of seeds; their examples must be the same."""
    a, b = _seeds_aligned(runs_a, runs_b)
    mean_a = np.mean([r.metric(metric) for r in a], axis=0)
    mean_b = np.mean([r.metric(metric) for r in b], axis=0)
    return mean_a, mean_b


def paired_counts(
    runs_a: Sequence[ExampleScores], runs_b: Sequence[ExampleScores]
) -> tuple[np.ndarray, np.ndarray]:
    """Per-example counts of both models stacked over seeds, ``(seeds, examples, k)``,
    examples in the order of A's first run: seed i of A is paired with seed i of B (the
    runs in the order given), the input of 003's permutation test over concatenated
    per-seed predictions. Raises :class:`InputError` for different numbers of seeds."""
    if len(runs_a) != len(runs_b):
        raise InputError(
            f"paired counts: {len(runs_a)} runs of model A ({runs_a[0].source}, ...) but "
            f"{len(runs_b)} of model B; seed i of one is paired with seed i of the other"
        )
    a, b = _seeds_aligned(runs_a, runs_b)
    return np.stack([_counts_of(r) for r in a]), np.stack([_counts_of(r) for r in b])


def _counts_of(scores: ExampleScores) -> np.ndarray:
    if scores.counts is None:
        raise InputError(f"{scores.source}: a {scores.kind} set has no per-example counts")
    return scores.counts


# --------------------------------------------------------------------------- fine-tuning


def predictions_file(stats_path: PathLike, language: str) -> Path:
    """The predictions file of ``language`` (a test language, or ``"en/dev"``) of a
    fine-tuning run, from the results JSON's ``predictions`` map: relative to the run
    directory, which is ``ft<seed>/`` beside ``ft<seed>.json``, or the directory that holds
    ``results.json``."""
    p = Path(stats_path)
    stats = read_json(p)
    files = stats.get("predictions") if isinstance(stats, Mapping) else None
    if not isinstance(files, Mapping):
        raise InputError(f"{p}: no 'predictions' map; expected a fine-tuning results JSON")
    if language not in files:
        raise InputError(
            f"{p}: no predictions for {language!r}; there are: {', '.join(sorted(files))}"
        )
    base = p.parent if p.name == "results.json" else p.with_suffix("")
    path = base / str(files[language])
    if not path.is_file():
        raise InputError(f"{p}: predictions file {path} for {language!r} does not exist")
    return path


def read_predictions(path: PathLike) -> list[dict[str, Any]]:
    """A predictions JSONL file: one object per line with ``id``, ``prediction`` and
    ``gold``; errors name the file and line, and ids that occur twice."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as err:
                raise InputError(f"{path}: line {lineno}: not JSON ({err.msg})") from None
            if not isinstance(obj, dict) or not {"id", "prediction", "gold"} <= obj.keys():
                raise InputError(
                    f"{path}: line {lineno}: expected an object with 'id', 'prediction' and 'gold'"
                )
            key = str(obj["id"])
            if key in seen:
                raise InputError(f"{path}: line {lineno}: id {key!r} occurs twice")
            seen.add(key)
            out.append(obj)
    if not out:
        raise InputError(f"{path}: no predictions")
    return out


def _labels(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise InputError(f"{where}: expected a list of labels")
    return value


def _tag_pairs(records: Sequence[Mapping[str, Any]], source: str):
    gold, pred = [], []
    for rec in records:
        where = f"{source}: id {rec['id']!r}"
        g = _labels(rec["gold"], f"{where} gold")
        p = _labels(rec["prediction"], f"{where} prediction")
        if len(g) != len(p):
            raise InputError(f"{where}: {len(g)} gold labels but {len(p)} predicted")
        gold.append(g)
        pred.append(p)
    return gold, pred


def token_counts(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> np.ndarray:
    """Per-sentence ``(correct, total)`` words: the terms of
    :func:`~xlalign.evaluation.tasks.metrics.token_accuracy`, whose micro score is
    ``100 * sum(correct) / sum(total)``."""
    return np.asarray(
        [
            (sum(x == y for x, y in zip(g, p, strict=True)), len(g))
            for g, p in zip(gold, pred, strict=True)
        ],
        dtype=np.int64,
    ).reshape(-1, 2)


def span_counts(
    gold: Sequence[Sequence[str]],
    pred: Sequence[Sequence[str]],
    *,
    seqeval_version: str = "1.2.2",
) -> np.ndarray:
    """Per-sentence ``(correct, n_pred, n_gold)`` entity chunks, whose sums are the
    ``n_correct``, ``n_pred`` and ``n_gold`` of
    :func:`~xlalign.evaluation.tasks.metrics.span_f1` on the same sentences.

    The chunks are found as ``span_f1`` finds them (``get_chunks`` over all sentences, an
    "O" after each), and each is counted in the sentence where it starts; a chunk is
    correct when gold has the same type, start and end.
    """
    if len(gold) != len(pred):
        raise ValueError(f"span_counts: {len(gold)} gold sentences but {len(pred)} predicted")
    starts = np.cumsum([0] + [len(s) + 1 for s in gold])  # positions count the "O"s
    gold_chunks = set(get_chunks(gold, seqeval_version=seqeval_version))
    pred_chunks = set(get_chunks(pred, seqeval_version=seqeval_version))
    out = np.zeros((len(gold), 3), dtype=np.int64)
    for column, chunks in ((0, gold_chunks & pred_chunks), (1, pred_chunks), (2, gold_chunks)):
        if chunks:
            first = np.fromiter((c[1] for c in chunks), dtype=np.int64, count=len(chunks))
            sentence = np.searchsorted(starts, first, side="right") - 1
            np.add.at(out[:, column], sentence, 1)
    return out


def _language_of(path: Path) -> str:
    """``he`` from ``he.jsonl``, ``en`` from ``en.dev.jsonl``."""
    return path.name.split(".")[0]


def finetune_examples(path: PathLike, task: str, *, language: str | None = None) -> ExampleScores:
    """Per-example scores of one fine-tuning predictions file of ``task`` (a registry id).

    * tagging, scheme "pos": ``values["accuracy"]`` per sentence (in [0, 100]) and
      ``counts`` ``(correct, total)`` for a word-weighted variant; sentences without
      words are left out;
    * tagging, scheme "ner": ``counts`` ``(correct, n_pred, n_gold)`` chunks per sentence
      (:func:`span_counts`; for the permutation test, since span F1 is not a mean over
      sentences) and no ``values``;
    * QA: ``values["f1"]`` and ``values["exact_match"]`` per question (in [0, 100],
      :func:`~xlalign.evaluation.tasks.metrics.qa_em_f1` with the task's normalisation;
      MLQA's needs the answer ``language``, by default the file name's), questions without
      a non-blank gold answer left out as the task's score does;
    * classification: ``values["accuracy"]``, 100 for a right label, 0 for a wrong one.

    Parsing is not supported (no per-example reader yet).
    """
    p = Path(path)
    info = task_info(task)
    records = read_predictions(p)
    source = str(p)
    ids = [str(r["id"]) for r in records]
    if info.family == "tagging":
        gold, pred = _tag_pairs(records, source)
        if info.scheme == "ner":
            return ExampleScores(source, "span", tuple(ids), counts=span_counts(gold, pred))
        counts = token_counts(gold, pred)
        keep = counts[:, 1] > 0
        return ExampleScores(
            source,
            "token_accuracy",
            tuple(i for i, k in zip(ids, keep, strict=True) if k),
            values={"accuracy": 100.0 * counts[keep, 0] / counts[keep, 1]},
            counts=counts[keep],
            left_out=int((~keep).sum()),
        )
    if info.family == "qa":
        lang = language or _language_of(p)
        kept, em, f1 = [], [], []
        for rec in records:
            golds = rec["gold"]
            if not isinstance(golds, list):
                raise InputError(f"{source}: id {rec['id']!r}: gold must be a list of answers")
            answers = [str(a) for a in golds if str(a).strip()]
            if not answers:
                continue
            e, f = qa_em_f1(str(rec["prediction"]), answers, lang=lang, style=info.scheme)
            kept.append(str(rec["id"]))
            em.append(e)
            f1.append(f)
        return ExampleScores(
            source,
            "qa",
            tuple(kept),
            values={"f1": np.asarray(f1), "exact_match": np.asarray(em)},
            left_out=len(records) - len(kept),
        )
    if info.family == "classification":
        right = [r["prediction"] == r["gold"] for r in records]
        return ExampleScores(
            source,
            "classification",
            tuple(ids),
            values={"accuracy": 100.0 * np.asarray(right, dtype=np.float64)},
        )
    raise ConfigError(
        f"{task}: no per-example scores for the {info.family} family (tagging, qa and "
        "classification have them)"
    )


# --------------------------------------------------------------------------- retrieval


def retrieval_predictions_file(stats_path: PathLike, language: str) -> Path:
    """The retrieval predictions of ``language`` beside a retrieval results JSON:
    ``<set>.json`` -> ``<set>/<language>.json``."""
    p = Path(stats_path)
    path = p.with_suffix("") / f"{language}.json"
    if not path.is_file():
        raise InputError(f"{p}: retrieval predictions {path} for {language!r} do not exist")
    return path


def retrieval_hits(path: PathLike, direction: str) -> ExampleScores:
    """Per-query hits (1 when the retrieved pair is the query's own, else 0) of one
    language's retrieval predictions in ``direction`` ("xx->en" or "en->xx"); the query
    ids are the pair ids. ``100 * mean`` is the results file's ``accuracy[direction]``."""
    if direction not in DIRECTIONS:
        raise ConfigError(f"retrieval direction {direction!r}; expected one of {DIRECTIONS}")
    data = read_json(path)
    if not isinstance(data, Mapping) or "ids" not in data or direction not in data:
        raise InputError(f"{path}: expected 'ids' and {direction!r} (retrieval predictions)")
    ids, pred = [str(i) for i in data["ids"]], [str(i) for i in data[direction]]
    if len(ids) != len(pred):
        raise InputError(f"{path}: {len(ids)} ids but {len(pred)} {direction} predictions")
    if len(set(ids)) != len(ids):
        raise InputError(f"{path}: pair ids occur more than once")
    hits = np.asarray([q == r for q, r in zip(ids, pred, strict=True)], dtype=np.float64)
    return ExampleScores(f"{path} ({direction})", "hits", tuple(ids), values={"hits": hits})


# --------------------------------------------------------------------------- BLI


def bli_query_hits(
    record: Mapping[str, Any], direction: str, retrieval: str, k: int = 1
) -> ExampleScores:
    """Per-query hits at ``k`` (1 when a gold translation is among the ``k`` nearest, else
    0) of one direction and retrieval method of a BLI record
    (:func:`~xlalign.evaluation.bli.bli_record`), over the queries its P@k averages:
    under the "skip" OOV policy the evaluated source words, under "miss" every source
    word of the dictionary (the others as misses). Their mean is the record's ``p@k``.
    The ids are the source words."""
    where = (
        f"BLI record {record.get('space')!r} seed {record.get('seed')} "
        f"language {record.get('language')!r}"
    )
    if record.get("_source"):
        where = f"{record['_source']} ({where})"
    results = record.get("results")
    if not isinstance(results, Mapping) or direction not in results:
        skipped = (record.get("skipped") or {}).get(direction)
        why = f" (skipped: {skipped})" if skipped else ""
        raise InputError(f"{where}: no results for direction {direction!r}{why}")
    res = results[direction]
    at = f"{where}: results.{direction}"
    if not isinstance(res, Mapping):
        raise InputError(f"{at}: expected an object: retrieval -> metrics, got {res!r:.80}")
    if retrieval not in res:
        raise InputError(f"{at}: no {retrieval!r} retrieval")
    scores = res[retrieval]
    if not isinstance(scores, Mapping):
        raise InputError(f"{at}.{retrieval}: expected an object of metrics, got {scores!r:.80}")
    key = hits_key(k)
    if "queries" not in res or key not in scores:
        raise InputError(
            f"{at}.{retrieval}: no per-query {key!r} (records written before per-query "
            "hits were recorded, or k not among the evaluated ks)"
        )
    words = str(res["queries"]).split(" ")
    marks = str(scores[key])
    if len(marks) != len(words):
        raise InputError(f"{at}.{retrieval}.{key}: {len(marks)} marks for {len(words)} queries")
    if scores.get("oov", "skip") == "miss":
        kept = list(range(len(words)))
    else:
        kept = [i for i, m in enumerate(marks) if m != HITS_NOT_EVALUATED]
    hits = np.asarray([marks[i] == "1" for i in kept], dtype=np.float64)
    return ExampleScores(
        f"{where} {direction} {retrieval}",
        "hits",
        tuple(words[i] for i in kept),
        values={"hits": hits},
        left_out=len(words) - len(kept),
    )
