"""The learning curve of X2S-M against aggregation: BLI P@1 by corpus size, from one run.

A smaller corpus is a seeded, uniform subset of the run's segmented sentences. The sampled
corpus is not in a random order (the reservoir sampler writes its paragraphs in their
original order, :mod:`xlalign.corpus.sample`), so a prefix would be the first books or
pages: the sizes take the first ``round(f * n)`` lines of one seeded permutation of the
``n`` lines, each size's lines a subset of the next one's (a uniform sample of sentences,
not of paragraphs). The full corpus is the last point: the run's own spaces.

Nothing is encoded again:

* X2S-M at a size trains from a :class:`CacheView` of the run's teacher cache (the size's
  lines, the size's vocabulary: the run's ``extract.vocab`` recipe counted over those
  lines), with the run's training arguments.
* The aggregation baseline at a size is the real baseline on that size (up to ``K``
  sampled occurrences per word among its lines, by seed, as
  :func:`xlalign.static.aggregation.sample_occurrences` samples a file holding only those
  lines); the teacher's pass collects those samples too (:func:`size_collectors`) and
  leaves their sums beside the cache, fingerprinted with the size's line set. When they
  are missing (a cache built before), the aggregation encodes the size's sampled
  sentences itself (:func:`xlalign.static.aggregation.aggregate_vectors`).

Each size and method is scored as the run's tables score the spaces: unmapped (``joint``,
the encoder's shared space, the X2S-M / Aggregation rows) and mapped into the hub with the
run's alignment recipe and the training part of its dictionary split (``mapped``), by BLI
P@1 on the run's test split in both directions, with each configured retrieval (NN,
CSLS), out-of-vocabulary source words counted wrong (``miss``) and skipped (``skip``),
with the coverage. The hub's spaces are the run's (full corpus) at every size.

Each size's scores are written atomically as it finishes (``<work_dir>/<size>.json``,
with the settings they were computed with); a re-run skips the sizes done with the same
settings. The sizes' spaces are scratch, removed after scoring.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, atomic_open, iter_lines, read_json, write_json
from xlalign.corpus.vocab import Vocab, read_vocab, tokens_of, vocab_from_counts
from xlalign.static.teacher import TeacherCache

log = logging.getLogger(__name__)

#: The method ids of the curve (the figure's families, :mod:`xlalign.reporting.plots`).
METHODS = ("x2s-m", "aggregate")
#: Row-key prefix -> what the scores are of.
SPACE_TITLES = {
    "joint": "Unmapped (the encoder's shared space; the X2S-M / Aggregation rows)",
    "mapped": "Mapped into the hub with the run's alignment (the X2S-MA / Aggregation-A candidate)",
}
OOVS = ("miss", "skip")
FULL = "all"


# --------------------------------------------------------------------------- the cache view


class CacheView:
    """The sentences ``lines`` of a teacher cache, for another (smaller) vocabulary.

    ``cache_vocab`` is the vocabulary the cache was built with; every word of ``vocab``
    must be in it. Occurrences of the other words are dropped and ids are remapped, so
    :meth:`batch` returns what a cache built on those sentences with ``vocab`` would (a
    context vector does not depend on the vocabulary: it is the mean of the *other*
    words' vectors, in or out of vocabulary).
    """

    def __init__(
        self, cache: TeacherCache, lines: np.ndarray, cache_vocab: Vocab, vocab: Vocab
    ) -> None:
        self.cache = cache
        self.lines = np.asarray(lines, dtype=np.int64)
        if self.lines.size and (self.lines.min() < 0 or self.lines.max() >= cache.n_sentences):
            raise InputError(f"{cache.path}: view lines outside 0..{cache.n_sentences - 1}")
        if vocab.lowercase != cache_vocab.lowercase:
            raise InputError(f"{cache.path}: view vocabulary lowercasing differs from the cache's")
        self.remap = np.full(len(cache_vocab), -1, dtype=np.int64)
        missing = [w for w in vocab.words if w not in cache_vocab.index]
        if missing:
            raise InputError(
                f"{cache.path}: {len(missing)} word(s) of the view's vocabulary are not in the "
                f"cache's (e.g. {missing[:5]}); build the cache with a smaller min_count"
            )
        for i, w in enumerate(vocab.words):
            self.remap[cache_vocab.index[w]] = i
        self.dim = cache.dim
        self.n_sentences = int(self.lines.size)
        self.path = f"{cache.path}[view of {self.n_sentences} sentences]"
        self.meta = {
            **{k: cache.meta.get(k) for k in ("config", "layer", "pooling", "context", "dim")},
            "view_lines_sha256": lines_sha256(self.lines),
            "view_vocab_sha256": vocab.fingerprint(),
        }

    def batch(self, sentence_indices: np.ndarray | Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        ids, ctx = self.cache.batch(self.lines[np.asarray(sentence_indices, dtype=np.int64)])
        new = self.remap[ids]
        keep = new >= 0
        return new[keep], ctx[keep]

    def occurrence_counts(self, vocab_size: int) -> np.ndarray:
        counts = np.zeros(vocab_size, dtype=np.int64)
        for start in range(0, self.n_sentences, 4096):
            ids, _ = self.batch(np.arange(start, min(start + 4096, self.n_sentences)))
            counts += np.bincount(ids, minlength=vocab_size)[:vocab_size]
        return counts


# --------------------------------------------------------------------------- the sizes


@dataclass(frozen=True)
class CurveSize:
    """One point of the curve: ``fraction`` of the corpus, its sorted 0-based ``lines``."""

    fraction: float
    lines: np.ndarray = field(compare=False, repr=False)

    @property
    def name(self) -> str:
        """Names the size's files (its sums beside the cache, its scores)."""
        return f"lines{self.lines.size}"


def check_fractions(fractions: Sequence[float], where: str = "learning_curve.fractions") -> None:
    """:class:`ConfigError` unless ``fractions`` are increasing numbers in (0, 1)."""
    if not fractions:
        raise ConfigError(f"{where}: expected at least one fraction")
    for f in fractions:
        if isinstance(f, bool) or not isinstance(f, int | float) or not 0 < f < 1:
            raise ConfigError(f"{where}: expected numbers in (0, 1), got {f!r}")
    if any(b <= a for a, b in pairwise(fractions)):
        raise ConfigError(f"{where}: expected increasing fractions, got {list(fractions)}")


def size_lines(n_lines: int, fractions: Sequence[float], seed: int) -> list[CurveSize]:
    """The sizes of a corpus of ``n_lines`` lines: for each fraction ``f``, the first
    ``round(f * n_lines)`` (at least 1) lines of one permutation drawn with ``seed``, sorted;
    each size's lines are a subset of the next one's."""
    check_fractions(fractions)
    if n_lines < 1:
        raise InputError(f"learning curve: a corpus of {n_lines} lines has no sizes")
    order = np.random.default_rng(seed).permutation(n_lines)
    return [
        CurveSize(float(f), np.sort(order[: max(1, round(f * n_lines))]).astype(np.int64))
        for f in fractions
    ]


def count_lines(sentences_path: PathLike, language: str = "?") -> int:
    return sum(1 for _ in iter_lines(sentences_path, language=language))


def lines_sha256(lines: np.ndarray) -> str:
    """SHA-256 of a line set (int64, sorted): what a size's files are keyed by."""
    return hashlib.sha256(np.asarray(lines, dtype=np.int64).tobytes()).hexdigest()


def size_vocab(
    sentences_path: PathLike,
    lines: np.ndarray,
    *,
    min_count: int,
    max_size: int | None,
    lowercase: bool = True,
    language: str = "?",
) -> Vocab:
    """The vocabulary of the corpus's ``lines``, by the run's recipe
    (:func:`xlalign.corpus.vocab.build_vocab` over a file holding only those lines)."""
    keep = frozenset(int(i) for i in lines)
    counter: Counter[str] = Counter()
    for i, line in enumerate(iter_lines(sentences_path, language=language)):
        if i in keep:
            toks = tokens_of(line)
            counter.update([t.lower() for t in toks] if lowercase else toks)
    vocab = vocab_from_counts(counter, min_count=min_count, max_size=max_size, lowercase=lowercase)
    if not len(vocab):
        raise InputError(
            f"{sentences_path} (language {language!r}): {len(keep)} lines hold no token "
            f"occurring min_count={min_count} times; expected a larger learning-curve fraction"
        )
    return vocab


def size_collectors(
    sentences_path: PathLike,
    encoder_dir: PathLike,
    cache_dir: PathLike,
    *,
    seeds: Sequence[int],
    fractions: Sequence[float],
    subset_seed: int,
    vocab_opts: Mapping[str, Any],
    layer: int,
    pooling: str,
    max_length: int,
    max_contexts: int,
    device: Any = None,
    dtype: Any = None,
    language: str = "?",
) -> list[Any]:
    """The teacher pass's collectors of each size's aggregation samples, one per (seed,
    size) whose sums are not beside the cache already (for
    :func:`xlalign.static.teacher.build_teacher_cache`'s ``subset_collectors``)."""
    from xlalign.static.aggregation import SampleCollector, read_teacher_sums, sample_lines

    out = []
    sizes = size_lines(count_lines(sentences_path, language), fractions, subset_seed)
    dtype_name = _dtype_name(device, dtype)
    for size in sizes:
        vocab = size_vocab(sentences_path, size.lines, **_vocab_kw(vocab_opts), language=language)
        for seed in sorted({int(s) for s in seeds}):
            fingerprint = size_sums_fingerprint(
                sentences_path,
                vocab,
                encoder_dir,
                size.lines,
                layer=layer,
                pooling=pooling,
                max_contexts=max_contexts,
                seed=seed,
                max_length=max_length,
                dtype=dtype_name,
            )
            if read_teacher_sums(cache_dir, seed, fingerprint, quiet=True, subset=size.name):
                continue
            wanted = sample_lines(
                sentences_path,
                vocab,
                max_contexts=max_contexts,
                seed=seed,
                language=language,
                lines=size.lines,
            )
            out.append(
                SampleCollector(
                    seed=seed,
                    fingerprint=fingerprint,
                    wanted=wanted,
                    subset=size.name,
                    vocab_size=len(vocab),
                )
            )
    return out


def size_sums_fingerprint(
    sentences_path: PathLike,
    vocab: Vocab,
    encoder_dir: PathLike,
    lines: np.ndarray,
    **kw: Any,
) -> str:
    """:func:`xlalign.static.aggregation.sums_fingerprint` of a size: with its line set."""
    from xlalign.static.aggregation import sums_fingerprint

    return sums_fingerprint(
        sentences_path, vocab, encoder_dir, lines_sha256=lines_sha256(lines), **kw
    )


def _dtype_name(device: Any, dtype: Any) -> str:
    from xlalign.core.device import resolve_device, resolve_dtype

    return str(resolve_dtype(dtype, resolve_device(device))).removeprefix("torch.")


def _vocab_kw(opts: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "min_count": int(opts["min_count"]),
        "max_size": opts.get("max_size"),
        "lowercase": bool(opts.get("lowercase", True)),
    }


# --------------------------------------------------------------------------- the job


@dataclass
class LearningCurveJob:
    """Everything one language's curve reads (the run's files) and its settings."""

    language: str
    hub: str
    #: names the method ids (``x2s-m-<name>``, ``aggregate-<name>``): the configuration
    name: str
    sentences: Path
    cache_dir: Path
    vocab_path: Path
    encoder_dir: Path
    #: method (``x2s-m``, ``aggregate``) -> the run's space of the language / of the hub
    spaces: dict[str, Path]
    hub_spaces: dict[str, Path]
    train_dictionary: Path
    #: direction (``en-de``, ``de-en``) -> test dictionary
    test: dict[str, Path]
    fractions: list[float]
    subset_seed: int
    seed: int
    vocab_opts: dict[str, Any]
    x2static: dict[str, Any]
    #: layer, pooling, max_length, max_contexts, batch_tokens
    aggregation: dict[str, Any]
    #: recipe, options, empty, degenerate
    align: dict[str, Any]
    retrievals: list[str]
    csls_k: int
    work_dir: Path
    threads: int | None = None
    progress: bool = False

    def settings(self) -> dict[str, Any]:
        """What a size's scores depend on besides the files' contents (resume key)."""
        keep = ("hub", "fractions", "subset_seed", "seed", "vocab_opts", "x2static")
        keep += ("aggregation", "align", "retrievals", "csls_k", "name")
        return {k: v for k, v in asdict(self).items() if k in keep}


def job_from_config(
    cfg: Mapping[str, Any],
    *,
    language: str,
    seed: int,
    test: tuple[Path, Path],
    fractions: Sequence[float] | None = None,
    subset_seed: int | None = None,
    **paths: Any,
) -> LearningCurveJob:
    """A job with a validated configuration's settings (``test``: the hub->language and
    language->hub test files; ``paths``: the other :class:`LearningCurveJob` fields)."""
    ext, lc, hub = cfg["extract"], cfg["learning_curve"], cfg["align"]["hub"]
    if language == hub:
        raise ConfigError(f"learning curve: {language!r} is the hub; its corpus stays whole")
    fractions = list(lc["fractions"] if fractions is None else fractions)
    check_fractions(fractions, "fractions")
    return LearningCurveJob(
        language=language,
        hub=hub,
        name=cfg["name"],
        test={f"{hub}-{language}": test[0], f"{language}-{hub}": test[1]},
        fractions=fractions,
        subset_seed=int(lc["seed"] if subset_seed is None else subset_seed),
        seed=seed,
        vocab_opts=dict(ext["vocab"]),
        x2static={
            k: ext[k] for k in ("epochs", "batch_sentences", "negatives", "subsample_t", "lr")
        },
        aggregation={
            "layer": ext["layer"],
            "pooling": ext["pooling"],
            "max_length": ext["max_length"],
            "max_contexts": ext["aggregation"]["max_contexts"],
            "batch_tokens": ext["batch_tokens"],
        },
        align={
            "recipe": cfg["align"]["recipe"],
            "options": cfg["align"]["options"],
            "empty": cfg["align"]["empty_dictionary"],
            "degenerate": cfg["align"]["degenerate_dictionary"],
        },
        retrievals=list(cfg["evaluate"]["retrieval"]),
        csls_k=int(cfg["evaluate"]["csls_k"]),
        **paths,
    )


def _x2static_args(job: LearningCurveJob) -> Any:
    from xlalign.static.x2static import X2StaticArgs

    return X2StaticArgs(seed=job.seed, **job.x2static)


def _bli(
    job: LearningCurveJob, spaces: Mapping[str, tuple[list[str], np.ndarray]]
) -> dict[str, Any]:
    """P@1 and coverage of both test directions, OOV counted wrong and skipped."""
    from xlalign.evaluation.bli import bli_direction

    out: dict[str, Any] = {}
    for direction, dic in job.test.items():
        src, tgt = direction.split("-", 1)
        for oov in OOVS:
            res = bli_direction(
                spaces[src],
                spaces[tgt],
                dic,
                retrievals=job.retrievals,
                csls_k=job.csls_k,
                ks=(1,),
                oov=oov,
                device="cpu",
            )
            if "skipped" in res:
                raise InputError(f"{dic}: no BLI ({res['skipped']})")
            for r in job.retrievals:
                out[f"{direction}/{r}/{oov}"] = res[r]["p@1"]
                out[f"{direction}/coverage"] = res[r]["coverage"]
    return out


def score_space(job: LearningCurveJob, method: str, space: Path, scratch: Path) -> dict[str, Any]:
    """BLI of one language space against the run's hub space of ``method``: unmapped
    (``joint``) and mapped into the hub with the run's alignment (``mapped``)."""
    from xlalign.mapping.hub import map_to_hub
    from xlalign.static.vectors import load_space

    joint = {job.language: load_space(space)[0], job.hub: load_space(job.hub_spaces[method])[0]}
    mapped = {}
    for lang, src in ((job.hub, job.hub_spaces[method]), (job.language, space)):
        stem = scratch / "mapped" / f"{lang}.npy"
        stem.parent.mkdir(parents=True, exist_ok=True)
        map_to_hub(
            language=lang,
            hub=job.hub,
            space=src,
            hub_space=job.hub_spaces[method],
            dictionary=job.train_dictionary if lang != job.hub else None,
            recipe=job.align["recipe"],
            options=job.align.get("options") or {},
            seed=job.seed,
            out_stem=stem,
            stats_path=stem.with_suffix(".json"),
            heldout=job.test if lang != job.hub else {},
            overlap="report",
            empty=job.align.get("empty", "error"),
            degenerate=job.align.get("degenerate"),
            progress=False,
        )
        mapped[lang] = load_space(stem)[0]
    record: dict[str, Any] = {"vocab": len(joint[job.language][0])}
    for kind, spaces in (("joint", joint), ("mapped", mapped)):
        record.update({f"{kind}/{k}": v for k, v in _bli(job, spaces).items()})
    return record


def _x2static_space(
    job: LearningCurveJob, size: CurveSize, vocab: Vocab, scratch: Path
) -> tuple[Path, dict[str, Any]]:
    from xlalign.static.spaces import save_space
    from xlalign.static.x2static import LEFT_OUT_REASON, train_x2static

    cache = TeacherCache(job.cache_dir)
    view = CacheView(cache, size.lines, read_vocab(job.vocab_path), vocab)
    result = train_x2static(
        view, vocab, _x2static_args(job), output_dir=scratch / "x2s-m", progress=job.progress
    )
    stem = scratch / "x2s-m" / f"{job.language}"
    save_space(
        vocab.words,
        result.vectors,
        view.occurrence_counts(len(vocab)) > 0,
        vec_path=stem.with_suffix(".vec"),
        npy_stem=stem,
        stats_path=stem.with_suffix(".json"),
        stats={"final_loss": result.epoch_losses[-1] if result.epoch_losses else None},
        language=job.language,
        reason=LEFT_OUT_REASON,
    )
    return stem.with_suffix(".npy"), {"final_loss": result.epoch_losses[-1]}


def _aggregate_space(
    job: LearningCurveJob, size: CurveSize, vocab: Vocab, scratch: Path
) -> tuple[Path, dict[str, Any]]:
    from xlalign.static.aggregation import (
        aggregate_vectors,
        mean_vectors,
        read_teacher_sums,
        save_aggregated,
    )

    agg = job.aggregation
    kw = {k: agg[k] for k in ("layer", "pooling", "max_contexts", "max_length")}
    fingerprint = size_sums_fingerprint(
        job.sentences,
        vocab,
        job.encoder_dir,
        size.lines,
        seed=job.seed,
        dtype=_dtype_name(None, None),
        **kw,
    )
    found = read_teacher_sums(job.cache_dir, job.seed, fingerprint, subset=size.name)
    where = f"{job.sentences} (language {job.language!r}, {size.name})"
    if found is not None:
        sums, n, dropped = found
        vectors = mean_vectors(
            sums,
            n,
            vocab,
            dropped=dropped,
            max_length=kw["max_length"],
            missing="zero",
            where=where,
        )
        source = "teacher pass"
    else:  # a cache built without this size's samples: encode its sampled sentences
        subset = scratch / f"{job.language}.{size.name}.txt"
        keep = frozenset(int(i) for i in size.lines)
        with atomic_open(subset) as fh:
            for i, line in enumerate(iter_lines(job.sentences, language=job.language)):
                if i in keep:
                    fh.write(line + "\n")
        vectors = aggregate_vectors(
            subset,
            vocab,
            job.encoder_dir,
            seed=job.seed,
            batch_tokens=agg.get("batch_tokens", 8192),
            threads=job.threads,
            progress=job.progress,
            language=job.language,
            missing="zero",
            **kw,
        )
        source = "own encoder pass"
    stem = scratch / "aggregate" / job.language
    stem.parent.mkdir(parents=True, exist_ok=True)
    save_aggregated(
        vocab.words,
        vectors,
        vec_path=stem.with_suffix(".vec"),
        npy_stem=stem,
        stats_path=stem.with_suffix(".json"),
        stats={"sums": source},
        language=job.language,
    )
    return stem.with_suffix(".npy"), {"sums": source}


def _size_record(job: LearningCurveJob, size: CurveSize | None) -> dict[str, Any]:
    """The scores of both methods at one size (None: the full corpus, the run's spaces)."""
    scratch = job.work_dir / "scratch"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    record: dict[str, Any] = {}
    try:
        if size is None:
            sentences = count_lines(job.sentences, job.language)
            spaces = {m: (job.spaces[m], {}) for m in METHODS}
        else:
            sentences = int(size.lines.size)
            vocab = size_vocab(
                job.sentences, size.lines, **_vocab_kw(job.vocab_opts), language=job.language
            )
            spaces = {
                "x2s-m": _x2static_space(job, size, vocab, scratch),
                "aggregate": _aggregate_space(job, size, vocab, scratch),
            }
        for method, (path, info) in spaces.items():
            log.info(
                "learning curve %s: scoring %s at %d sentences", job.language, method, sentences
            )
            record[method] = {**score_space(job, method, path, scratch), **info}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "size": FULL if size is None else size.name,
        "fraction": 1.0 if size is None else size.fraction,
        "sentences": sentences,
        "methods": record,
    }


def run_learning_curve(job: LearningCurveJob) -> dict[str, Any]:
    """Score every size (the fractions, then the full corpus); returns the summary
    (``rows`` in the form :func:`xlalign.reporting.plots.learning_curve_from_summary`
    reads). Sizes done before with the same settings are read back, not recomputed."""
    import torch

    if job.threads:
        torch.set_num_threads(job.threads)
    check_fractions(job.fractions)
    job.work_dir.mkdir(parents=True, exist_ok=True)
    settings = job.settings()
    n_lines = count_lines(job.sentences, job.language)
    sizes: list[CurveSize | None] = [*size_lines(n_lines, job.fractions, job.subset_seed), None]
    records = []
    for size in sizes:
        part = job.work_dir / f"{FULL if size is None else size.name}.json"
        key = {
            "settings": settings,
            "lines_sha256": None if size is None else lines_sha256(size.lines),
        }
        if part.is_file():
            try:
                done = read_json(part)
            except InputError:
                done = {}
            if done.get("key") == json.loads(json.dumps(key)):
                log.info("learning curve %s: %s done before (%s)", job.language, part.stem, part)
                records.append(done["record"])
                continue
        record = _size_record(job, size)
        write_json(part, {"key": key, "record": record})
        records.append(record)
    return summary(job, records)


def summary(job: LearningCurveJob, records: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for rec in records:
        for method in METHODS:
            scores = rec["methods"][method]
            rows.append(
                {
                    "size": rec["size"],
                    "fraction": rec["fraction"],
                    "sentences": {job.language: rec["sentences"]},
                    "method": f"{method}-{job.name}",
                    "vocab": scores["vocab"],
                    **{k: v for k, v in scores.items() if k.count("/") >= 2},
                }
            )
    # for the MLflow mirror: every score a metric, each curve a history (step = size)
    scores = {
        f"{row['size']}.{row['method']}": {k: v for k, v in row.items() if k.count("/") >= 2}
        for row in rows
    }
    curves = {
        f"{method}-{job.name}.joint.{d}.{r}": [
            float(x[f"joint/{d}/{r}/miss"]) for x in rows if x["method"] == f"{method}-{job.name}"
        ]
        for method in METHODS
        for d in job.test
        for r in job.retrievals
    }
    return {
        "scores": scores,
        "curves": curves,
        "language": job.language,
        "hub": job.hub,
        "fractions": job.fractions,
        "subset_seed": job.subset_seed,
        "seed": job.seed,
        "directions": list(job.test),
        "retrievals": job.retrievals,
        "subsets": "seeded uniform subsets of the segmented lines, each inside the next",
        "rows": rows,
    }


def markdown(summary: Mapping[str, Any]) -> str:
    """P@1 (%) over all test words / over covered ones per retrieval, and coverage."""
    lang, hub = summary["language"], summary["hub"]
    out = [
        f"# Learning curve of X2S-M against aggregation: {lang} (hub {hub})\n",
        f"Sizes: {summary['subsets']} (seed {summary['subset_seed']}); the hub's corpus is the "
        "run's whole one. P@1 (%) over all test source words (OOV counted wrong) / over the "
        "covered ones, and coverage.\n",
    ]
    for kind, title in SPACE_TITLES.items():
        head = ["sentences", "method", "vocab"]
        for d in summary["directions"]:
            head += [f"{d} {r.upper()}" for r in summary["retrievals"]] + [f"{d} cov."]
        out += [f"## {title}\n", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for row in summary["rows"]:
            cells = [str(row["sentences"][lang]), row["method"], str(row["vocab"])]
            for d in summary["directions"]:
                for r in summary["retrievals"]:
                    miss, skip = (row.get(f"{kind}/{d}/{r}/{oov}") for oov in OOVS)
                    cells.append(f"{_pct(miss)} / {_pct(skip)}")
                cells.append(_pct(row.get(f"{kind}/{d}/coverage")))
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out) + "\n"


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.1f}"


def write_learning_curve(
    summary: Mapping[str, Any],
    *,
    json_path: PathLike,
    md_path: PathLike,
    figure_stem: PathLike | None = None,
    retrieval: str = "csls",
) -> None:
    """The summary as JSON and Markdown, and the figure (P@1 of the unmapped spaces, OOV
    counted wrong, mean of both directions) as ``<figure_stem>.png`` / ``.svg``."""
    from xlalign.reporting.plots import learning_curve, learning_curve_from_summary

    write_json(json_path, dict(summary))
    with atomic_open(md_path) as fh:
        fh.write(markdown(summary))
    if figure_stem is not None:
        sizes, curves, _ = learning_curve_from_summary(
            summary, retrieval=retrieval, where=str(json_path)
        )
        xlabel = f"segmented {summary['language']} sentences (hub {summary['hub']}: all)"
        learning_curve(sizes, curves, figure_stem, xlabel=xlabel, retrieval=retrieval)


def mean_p1(summary: Mapping[str, Any], method: str, size: str, retrieval: str) -> float | None:
    """Mean P@1 over the directions of one row (unmapped, OOV wrong), for logs and stats."""
    for row in summary["rows"]:
        if row["method"] == method and row["size"] == size:
            vals = [row.get(f"joint/{d}/{retrieval}/miss") for d in summary["directions"]]
            return statistics.fmean(vals) if all(v is not None for v in vals) else None
    return None


__all__ = [
    "CacheView",
    "CurveSize",
    "LearningCurveJob",
    "check_fractions",
    "run_learning_curve",
    "size_collectors",
    "size_lines",
    "size_vocab",
    "write_learning_curve",
]
