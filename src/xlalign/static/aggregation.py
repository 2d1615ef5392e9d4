"""The aggregation baseline (Bommasani et al. 2020): static vectors averaged over contexts.

A word's static vector is the average of its pooled layer-``L`` vectors over up to ``K``
of its occurrences, sampled uniformly without replacement (deterministic by seed).

:func:`sample_occurrences` streams the text once and keeps, per vocabulary word, a
reservoir of ``K`` occurrence positions (Algorithm R on integer positions, Python's
``random.Random(seed)``); the selected occurrences' layer-``L`` vectors are then summed in
line order. Two ways to get those vectors, with the same result:

* **From the teacher's pass** (the workflow): the teacher cache
  (:func:`xlalign.static.teacher.build_teacher_cache`) encodes every sentence of the same
  corpus at the same layer anyway; given the seeds, it collects the sampled occurrences'
  vectors of each shard with :class:`SampleCollector` and writes the sums of each seed
  beside the cache (``aggregate-seed<seed>.npz``, :func:`read_teacher_sums`), so the
  aggregation job runs no encoder. The by-product is keyed by :func:`sums_fingerprint`
  (corpus, vocabulary, encoder, layer, pooling, ``max_length``, ``K``, seed, dtype).
* **On its own** (:func:`aggregate_vectors`, the CLI, and the workflow's fallback when the
  teacher's sums are missing or for other settings): only the sentences that hold a
  selected occurrence are encoded, once each.

The two differ only by the batches the sentences are padded in (float32 noise, ~1e-7
relative on CPU); the sampled occurrences, the pooling, the truncation and the order of
the float64 sums are the same.

A sampled occurrence that gets no vector (cut beyond ``max_length`` subwords) is dropped
from its word's average. Words left without any vector (absent from the corpus, or all
their samples cut) raise :class:`InputError` naming them, or with ``missing="zero"`` keep
a zero row (logged).

**Resuming.** With ``checkpoint_dir`` the running sums are checkpointed at chunk boundaries
(every ``checkpoint_seconds``; ``aggregate.npz``: the float64 sums, the counts and, as
JSON, the chunks done, the counters and a fingerprint of the corpus, vocabulary, encoder
and options). A re-run with the same inputs resumes after the last chunk in it (a
checkpoint of other inputs is ignored with a warning) and ends with the same vectors: the
sample is a function of the corpus and the seed, and the sums are added in the same order.
SIGTERM (see :mod:`xlalign.core.interrupt`) stops the encoding at once and writes the
checkpoint of the chunks finished so far on the way out. The checkpoint is removed when
the vectors are complete.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import random
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from xlalign.core import interrupt
from xlalign.core.device import resolve_device, resolve_dtype
from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, atomic_open, file_sha256, iter_lines
from xlalign.core.memory import rows_per_block
from xlalign.corpus.vocab import Vocab, tokens_of
from xlalign.encoders.contextual import (
    POOLINGS,
    WordVectorStats,
    forward_record,
    load_truncated_encoder,
    word_vectors,
)
from xlalign.static.spaces import save_space
from xlalign.static.teacher import encoder_fingerprint

log = logging.getLogger(__name__)

MISSING_POLICIES = ("error", "zero")


def sample_occurrences(
    sentences_path: PathLike,
    vocab: Vocab,
    *,
    max_contexts: int,
    seed: int,
    language: str = "?",
    lines: Collection[int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Sample up to ``max_contexts`` occurrences per vocabulary word, uniformly.

    Returns ``(lines, positions)``: int64 arrays ``[V, K]`` holding the 0-based line and
    the token position within it of each selected occurrence, ``-1`` where a word has
    fewer than ``K`` occurrences. Same corpus, vocabulary and seed -> same sample.
    ``lines`` (0-based line numbers) restricts the sample to those lines: the same sample
    as of a file holding only them, in order, with line numbers of the whole file.
    """
    if max_contexts < 1:
        raise ConfigError(f"max_contexts: expected a positive number, got {max_contexts}")
    # the subset as a sorted array walked alongside the lines (8 bytes a line, no set)
    keep = (
        None if lines is None else np.unique(np.fromiter(lines, dtype=np.int64, count=len(lines)))
    )
    at = 0
    k = max_contexts
    rng = random.Random(seed)
    seen = [0] * len(vocab)
    lines = np.full((len(vocab), k), -1, dtype=np.int64)
    positions = np.full((len(vocab), k), -1, dtype=np.int64)
    index = vocab.index
    lower = vocab.lowercase
    for i, line in enumerate(iter_lines(sentences_path, language=language)):
        if keep is not None:
            while at < len(keep) and keep[at] < i:
                at += 1
            if at == len(keep) or keep[at] != i:
                continue
        for j, tok in enumerate(tokens_of(line)):
            w = index.get(tok.lower() if lower else tok)
            if w is None:
                continue
            c = seen[w]
            seen[w] = c + 1
            if c < k:
                slot = c
            else:
                slot = rng.randrange(c + 1)
                if slot >= k:
                    continue
            lines[w, slot] = i
            positions[w, slot] = j
    return lines, positions


class SampledOccurrences:
    """:func:`sample_occurrences`' selection by line, in three flat arrays (16 bytes an
    occurrence: ``V x K`` of them at most) rather than ``V x K`` Python tuples (~100 bytes
    each): line, token position and word id, ordered by line and within a line as the sums
    take them (by word id, then reservoir slot). Read like ``{line: [(position, word id),
    ...]}`` (:meth:`get`, ``in``, ``len``: the number of lines)."""

    def __init__(self, sel_lines: np.ndarray, sel_pos: np.ndarray) -> None:
        words, slots = np.nonzero(sel_lines >= 0)  # by word id, then slot
        line = sel_lines[words, slots]
        order = np.argsort(line, kind="stable")
        self.line = line[order]
        self.pos = sel_pos[words, slots][order].astype(np.int32)
        self.word = words[order].astype(np.int32)
        self.lines = np.unique(self.line)

    def __len__(self) -> int:
        return int(self.lines.size)

    def __contains__(self, line: object) -> bool:
        if not isinstance(line, (int, np.integer)):
            return False
        at = int(np.searchsorted(self.lines, line))
        return at < self.lines.size and int(self.lines[at]) == line

    def get(self, line: int, default: Any = ()) -> list[tuple[int, int]] | Any:
        """The ``(position, word id)`` of the occurrences selected in ``line``."""
        a, b = np.searchsorted(self.line, [line, line + 1])
        if a == b:
            return default
        return list(zip(self.pos[a:b].tolist(), self.word[a:b].tolist(), strict=True))

    def __getitem__(self, line: int) -> list[tuple[int, int]]:
        found = self.get(line, None)
        if found is None:
            raise KeyError(line)
        return found

    def as_dict(self) -> dict[int, list[tuple[int, int]]]:
        """The whole selection as ``{line: [(position, word id), ...]}`` (small data only)."""
        return {int(i): self[int(i)] for i in self.lines}


def sample_lines(
    sentences_path: PathLike,
    vocab: Vocab,
    *,
    max_contexts: int,
    seed: int,
    language: str = "?",
    lines: Collection[int] | None = None,
) -> SampledOccurrences:
    """:func:`sample_occurrences` by line, compact (:class:`SampledOccurrences`)."""
    return SampledOccurrences(
        *sample_occurrences(
            sentences_path,
            vocab,
            max_contexts=max_contexts,
            seed=seed,
            language=language,
            lines=lines,
        )
    )


def sampled_by_line(
    sentences_path: PathLike,
    vocab: Vocab,
    *,
    max_contexts: int,
    seed: int,
    language: str = "?",
    lines: Collection[int] | None = None,
) -> dict[int, list[tuple[int, int]]]:
    """:func:`sample_occurrences` by line: ``{line: [(token position, word id), ...]}``, each
    line's list in the order the sums take them (by word id, then reservoir slot). A dict
    of Python tuples, for small data and tests; the jobs use :func:`sample_lines`."""
    return sample_lines(
        sentences_path,
        vocab,
        max_contexts=max_contexts,
        seed=seed,
        language=language,
        lines=lines,
    ).as_dict()


def mean_vectors(
    sums: np.ndarray,
    n: np.ndarray,
    vocab: Vocab,
    *,
    dropped: int,
    max_length: int,
    missing: str,
    where: str,
) -> np.ndarray:
    """The float32 means ``sums / n``, zero rows (``missing="zero"``, logged) or
    :class:`InputError` (``missing="error"``) for words without any vector."""
    if missing not in MISSING_POLICIES:
        raise ConfigError(f"missing: expected one of {MISSING_POLICIES}, got {missing!r}")
    empty = np.flatnonzero(n == 0)
    log.info(
        "aggregate %s: %d words, %d sampled occurrences without a vector (cut beyond "
        "max_length=%d), %d words without any vector",
        where,
        len(vocab),
        dropped,
        max_length,
        len(empty),
    )
    if len(empty):
        names = ", ".join(repr(vocab.words[w]) for w in empty[:20])
        if missing == "error":
            raise InputError(
                f"{where}: {len(empty)} vocabulary word(s) got no contextual vector "
                f"(absent from the corpus or cut beyond max_length={max_length}): {names}"
            )
        log.warning("%s: %d word(s) without a vector keep a zero row: %s", where, len(empty), names)
    out = np.zeros((len(vocab), sums.shape[1]), dtype=np.float32)
    has = n > 0
    out[has] = (sums[has] / n[has, None]).astype(np.float32)
    return out


# --------------------------------------------------------------------------- from the teacher

#: The sums of one seed that the teacher's pass leaves beside its cache.
TEACHER_SUMS = "aggregate-seed{seed}.npz"
#: The sums of one seed over a subset of the lines (a learning-curve size).
SUBSET_SUMS = "aggregate-seed{seed}-{subset}.npz"


def teacher_sums_path(cache_dir: PathLike, seed: int, subset: str = "") -> Path:
    """Where the teacher's pass leaves the sums of ``seed`` (over ``subset``'s lines)."""
    if subset:
        return Path(cache_dir) / SUBSET_SUMS.format(seed=seed, subset=subset)
    return Path(cache_dir) / TEACHER_SUMS.format(seed=seed)


_SUMS_FORMAT = 1


def sums_fingerprint(
    sentences_path: PathLike,
    vocab: Vocab,
    encoder_dir: PathLike,
    *,
    layer: int,
    pooling: str,
    max_contexts: int,
    seed: int,
    max_length: int,
    dtype: str,
    lines_sha256: str | None = None,
) -> str:
    """SHA-256 of what a seed's sums depend on (not the batching, which changes them only
    by float32 noise): corpus, vocabulary, encoder, layer, pooling, ``max_length``, the
    sample (``max_contexts``, seed) and the encoder's dtype (``float32``, ``bfloat16``);
    for the sums over a subset of the lines, ``lines_sha256`` (the subset's line set)."""
    payload: dict[str, Any] = {
        "format": _SUMS_FORMAT,
        "sentences_sha256": file_sha256(sentences_path),
        "vocab_sha256": vocab.fingerprint(),
        **encoder_fingerprint(encoder_dir),
        "layer": layer,
        "pooling": pooling,
        "max_contexts": max_contexts,
        "seed": seed,
        "max_length": max_length,
        "dtype": dtype.removeprefix("torch."),
    }
    if lines_sha256 is not None:
        payload["lines_sha256"] = lines_sha256
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


@dataclasses.dataclass
class SampleCollector:
    """The sampled occurrences' vectors of one seed, collected while another pass (the
    teacher's) encodes every sentence; taken shard by shard (:meth:`take`)."""

    seed: int
    fingerprint: str
    #: the selection by line (:class:`SampledOccurrences`, or a ``{line: [(token
    #: position, word id)]}`` dict as :func:`sampled_by_line` gives)
    wanted: SampledOccurrences | dict[int, list[tuple[int, int]]]
    ids: list[int] = dataclasses.field(default_factory=list)
    rows: list[np.ndarray] = dataclasses.field(default_factory=list)
    dropped: int = 0
    #: a subset of the lines (a learning-curve size): names its arrays and sums file;
    #: "" for the whole corpus
    subset: str = ""
    #: rows of the sums (the subset's vocabulary); 0: the cache's vocabulary
    vocab_size: int = 0

    @property
    def key(self) -> str:
        """What names the collector's arrays in the shard files."""
        return f"{self.seed}-{self.subset}" if self.subset else str(self.seed)

    def add(self, line: int, vectors: np.ndarray) -> None:
        """Collect the sampled occurrences of sentence ``line`` (0-based) from its word
        vectors (NaN rows: no vector, dropped as in :func:`aggregate_vectors`)."""
        for j, w in self.wanted.get(line, ()):
            row = vectors[j]
            if np.isnan(row[0]):
                self.dropped += 1
            else:
                self.ids.append(w)
                self.rows.append(row)

    def take(self, dim: int) -> dict[str, np.ndarray]:
        """The arrays collected since the last call (int64 ids, float32 rows, dropped)."""
        rows = np.stack(self.rows).astype(np.float32) if self.rows else np.zeros((0, dim))
        out = {
            f"ids_{self.key}": np.asarray(self.ids, dtype=np.int64),
            f"rows_{self.key}": rows.astype(np.float32),
            f"dropped_{self.key}": np.asarray(self.dropped, dtype=np.int64),
        }
        self.ids, self.rows, self.dropped = [], [], 0
        return out


def save_shard_samples(path: PathLike, collectors: Sequence[SampleCollector], dim: int) -> None:
    """Write what ``collectors`` gathered over one shard (atomically) and reset them."""
    arrays: dict[str, np.ndarray] = {}
    for c in collectors:
        arrays.update(c.take(dim))
    state = {"format": _SUMS_FORMAT, "seeds": {c.key: c.fingerprint for c in collectors}}
    with atomic_open(path, "wb") as fh:
        interrupt.save_npz_checkpoint(fh, state, arrays)


def sum_shard_samples(
    paths: Sequence[Path], seed: int | str, fingerprint: str, vocab_size: int, dim: int
) -> tuple[np.ndarray, np.ndarray, int] | None:
    """(float64 sums, int64 counts, dropped) of ``seed`` (a collector's
    :attr:`SampleCollector.key`) over the shard files ``paths`` (in line order, so the sums
    are added in :func:`aggregate_vectors`' order); None when a shard lacks them (missing,
    unreadable, or for another fingerprint)."""
    sums = np.zeros((vocab_size, dim), dtype=np.float64)
    n = np.zeros(vocab_size, dtype=np.int64)
    dropped = 0
    for path in paths:
        try:
            state = interrupt.load_npz_checkpoint(path)
        except (OSError, ValueError, KeyError):
            return None
        if state.get("seeds", {}).get(str(seed)) != fingerprint:
            return None
        ids, rows = state["arrays"][f"ids_{seed}"], state["arrays"][f"rows_{seed}"]
        np.add.at(sums, ids, rows.astype(np.float64))  # in order, one row at a time
        n += np.bincount(ids, minlength=vocab_size)[:vocab_size]
        dropped += int(state["arrays"][f"dropped_{seed}"])
    return sums, n, dropped


def write_teacher_sums(
    cache_dir: PathLike,
    seed: int,
    fingerprint: str,
    sums: np.ndarray,
    n: np.ndarray,
    dropped: int,
    *,
    subset: str = "",
) -> Path:
    """Write one seed's sums (over ``subset``'s lines) beside the teacher cache
    (atomically); returns the path."""
    path = teacher_sums_path(cache_dir, seed, subset)
    state = {"format": _SUMS_FORMAT, "fingerprint": fingerprint, "seed": seed, "dropped": dropped}
    with atomic_open(path, "wb") as fh:
        interrupt.save_npz_checkpoint(fh, state, {"sums": sums, "n": n})
    return path


def read_teacher_sums(
    cache_dir: PathLike, seed: int, fingerprint: str, *, quiet: bool = False, subset: str = ""
) -> tuple[np.ndarray, np.ndarray, int] | None:
    """(float64 sums, int64 counts, dropped) of ``seed`` (over ``subset``'s lines) that the
    teacher's pass wrote beside its cache, or None when there are none for ``fingerprint``
    (logged unless ``quiet``)."""
    path = teacher_sums_path(cache_dir, seed, subset)
    why = None
    state: dict[str, Any] = {}
    if not path.is_file():
        why = "not found"
    else:
        try:
            state = interrupt.load_npz_checkpoint(path)
        except (OSError, ValueError, KeyError) as exc:
            why = f"unreadable ({exc})"
        else:
            if state.get("fingerprint") != fingerprint:
                why = "for other inputs or settings"
    if why is not None:
        if not quiet:
            log.info("%s: %s; the aggregation runs the encoder itself", path, why)
        return None
    return state["arrays"]["sums"], state["arrays"]["n"], int(state["dropped"])


def vectors_from_teacher(
    cache_dir: PathLike,
    sentences_path: PathLike,
    vocab: Vocab,
    encoder_dir: PathLike,
    *,
    layer: int,
    pooling: str = "mean",
    max_contexts: int = 10,
    seed: int = 0,
    max_length: int = 200,
    device: Any = None,
    dtype: Any = None,
    language: str = "?",
    missing: str = "error",
    stats_out: dict[str, Any] | None = None,
) -> np.ndarray | None:
    """:func:`aggregate_vectors`' vectors from the sums the teacher's pass left in
    ``cache_dir``, without running the encoder; None when it left none for these inputs
    and settings (then call :func:`aggregate_vectors`). ``stats_out`` gets the ``forward``
    the teacher's pass ran (its record: ``"truncated"`` or ``"full (why)"``)."""
    fingerprint = sums_fingerprint(
        sentences_path,
        vocab,
        encoder_dir,
        layer=layer,
        pooling=pooling,
        max_contexts=max_contexts,
        seed=seed,
        max_length=max_length,
        dtype=str(resolve_dtype(dtype, resolve_device(device))),
    )
    found = read_teacher_sums(cache_dir, seed, fingerprint)
    if found is None:
        return None
    sums, n, dropped = found
    if sums.shape[0] != len(vocab):
        raise InputError(
            f"{cache_dir}: the teacher's sums of seed {seed} have {sums.shape[0]} rows, the "
            f"vocabulary {len(vocab)}"
        )
    log.info("aggregate %s: the teacher's pass's sums of seed %d (no encoder run)", language, seed)
    if stats_out is not None:
        from xlalign.static.teacher import META_FILE

        meta_file = Path(cache_dir) / META_FILE
        meta = json.loads(meta_file.read_text(encoding="utf-8")) if meta_file.is_file() else {}
        stats_out["forward"] = meta.get("forward", "unknown")
    where = f"{sentences_path} (language {language!r})"
    return mean_vectors(
        sums, n, vocab, dropped=dropped, max_length=max_length, missing=missing, where=where
    )


CHECKPOINT_FILE = "aggregate.npz"
_CHECKPOINT_FORMAT = 1


def _save_checkpoint(path: Path, state: dict[str, Any], sums: np.ndarray, n: np.ndarray) -> None:
    with atomic_open(path, "wb") as fh:
        interrupt.save_npz_checkpoint(fh, state, {"sums": sums, "n": n})


def aggregate_vectors(
    sentences_path: PathLike,
    vocab: Vocab,
    encoder_dir: PathLike,
    *,
    layer: int,
    pooling: str = "mean",
    max_contexts: int = 10,
    seed: int = 0,
    max_length: int = 200,
    batch_tokens: int = 8192,
    chunk_sentences: int = 4096,
    device: Any = None,
    dtype: Any = None,
    threads: int | None = None,
    progress: bool = True,
    language: str = "?",
    missing: str = "error",
    checkpoint_dir: PathLike | None = None,
    checkpoint_seconds: float = 600.0,
    keep_checkpoint: bool = False,
    stats_out: dict[str, Any] | None = None,
    budget_mb: float | None = None,
) -> np.ndarray:
    """Static vectors ``[V, dim]`` (float32): each word's mean layer-``layer`` vector over
    up to ``max_contexts`` sampled occurrences (see the module docstring for the policy on
    words without a vector, and for resuming from ``checkpoint_dir``). ``stats_out``, when
    given, receives ``resumed_from_chunk`` (None for a fresh run) and ``chunks``. With
    ``keep_checkpoint`` the complete checkpoint stays (the caller removes it with
    :func:`remove_checkpoint` once the vectors are saved). A chunk holds at most
    ``chunk_sentences`` sentences and no more words than ``budget_mb`` (``memory.block_mb``)
    holds word vectors of (the encoder's in-order output keeps a chunk's vectors): the
    working memory is the ``[V, dim]`` sums plus one chunk."""
    if pooling not in POOLINGS:
        raise ConfigError(f"pooling: expected one of {POOLINGS}, got {pooling!r}")
    if missing not in MISSING_POLICIES:
        raise ConfigError(f"missing: expected one of {MISSING_POLICIES}, got {missing!r}")
    where = f"{sentences_path} (language {language!r})"
    if not Path(sentences_path).is_file():
        raise InputError(f"{where}: file not found")
    if not len(vocab):
        raise InputError(f"{where}: empty vocabulary")
    wanted = sample_lines(
        sentences_path, vocab, max_contexts=max_contexts, seed=seed, language=language
    )
    if not wanted:
        raise InputError(f"{where}: no word of the vocabulary ({len(vocab)} words) occurs")

    tokenizer, model = load_truncated_encoder(
        encoder_dir, layer, device=device, dtype=dtype, threads=threads
    )
    dim = int(model.config.hidden_size)
    max_words = rows_per_block(dim * 4, budget_mb)
    sums = np.zeros((len(vocab), dim), dtype=np.float64)
    n = np.zeros(len(vocab), dtype=np.int64)
    stats = WordVectorStats()
    dropped = 0
    chunks_done = 0  # chunks whose occurrences are in sums and n
    ckpt = Path(checkpoint_dir) / CHECKPOINT_FILE if checkpoint_dir is not None else None
    fingerprint = ""
    resumed_from = None
    if ckpt is not None:
        fingerprint = _fingerprint(
            sentences_path,
            vocab,
            encoder_dir,
            layer=layer,
            pooling=pooling,
            max_contexts=max_contexts,
            seed=seed,
            max_length=max_length,
            batch_tokens=batch_tokens,
            chunk_sentences=chunk_sentences,
            chunk_words=max_words,
            dtype=str(resolve_dtype(dtype, resolve_device(device))),
        )
        what = "another corpus, vocabulary, encoder or options"
        state = interrupt.read_checkpoint(
            ckpt, interrupt.load_npz_checkpoint, fingerprint=fingerprint, what=what
        )
        if state is not None:
            sums, n = state["arrays"]["sums"], state["arrays"]["n"]
            chunks_done, dropped = int(state["chunks_done"]), int(state["dropped"])
            stats = WordVectorStats(**state["word_vector_stats"])
            resumed_from = chunks_done
            log.info("%s: resuming after chunk %d (%s)", ckpt, chunks_done, where)
    n_chunks = _count_chunks(sentences_path, wanted, chunk_sentences, max_words, language)
    last_save = time.monotonic()

    saved = chunks_done  # chunks in the checkpoint on disk

    def save() -> None:
        nonlocal last_save, saved
        if ckpt is None:
            return
        state = {
            "format": _CHECKPOINT_FORMAT,
            "fingerprint": fingerprint,
            "chunks_done": chunks_done,
            "chunks": n_chunks,
            "dropped": dropped,
            "word_vector_stats": dataclasses.asdict(stats),
        }
        with interrupt.checkpointable():  # a first signal waits for the save to finish
            _save_checkpoint(ckpt, state, sums, n)
        last_save, saved = time.monotonic(), chunks_done
        log.info("%s: checkpoint after chunk %d of %d", ckpt, chunks_done, n_chunks)

    def encode(chunk: list[tuple[int, list[str]]]) -> None:
        nonlocal dropped, chunks_done
        vectors = word_vectors(
            [words for _, words in chunk],
            tokenizer,
            model,
            pooling=pooling,
            max_length=max_length,
            batch_tokens=batch_tokens,
            stats=stats,
        )
        with interrupt.checkpointable():  # the sums take a chunk whole or not at all
            for (i, _), vec in zip(chunk, vectors, strict=True):
                for j, w in wanted[i]:
                    row = vec[j]
                    if np.isnan(row[0]):
                        dropped += 1
                        continue
                    sums[w] += row
                    n[w] += 1
            chunks_done += 1
        due = time.monotonic() - last_save >= checkpoint_seconds and chunks_done < n_chunks
        if due or interrupt.requested() is not None:
            save()
        interrupt.raise_if_requested(f"aggregation, checkpoint {ckpt}")

    bar = tqdm(
        total=len(wanted),
        initial=min(chunks_done * chunk_sentences, len(wanted)),
        unit="sent",
        desc=f"aggregate {language} L{layer}",
        disable=not progress,
        dynamic_ncols=True,
    )
    met = 0  # chunks met so far; the first chunks_done of them are in the checkpoint

    def flush(chunk: list[tuple[int, list[str]]]) -> None:
        nonlocal met
        if met >= chunks_done:
            encode(chunk)
            bar.update(len(chunk))
        met += 1

    try:
        chunk: list[tuple[int, list[str]]] = []
        words = 0
        for i, line in enumerate(iter_lines(sentences_path, language=language)):
            if i in wanted:
                toks = tokens_of(line)
                if chunk and words + len(toks) > max_words:
                    flush(chunk)
                    chunk, words = [], 0
                chunk.append((i, toks if met >= chunks_done else []))
                words += len(toks)
                if len(chunk) == chunk_sentences:
                    flush(chunk)
                    chunk, words = [], 0
        if chunk:
            flush(chunk)
    except interrupt.Preempted:
        if saved != chunks_done:
            save()  # the chunks finished so far
        raise
    finally:
        bar.close()
    if stats_out is not None:
        stats_out.update(
            resumed_from_chunk=resumed_from, chunks=n_chunks, forward=forward_record(model)
        )

    log.info("aggregate %s: %d sentences encoded", language, len(wanted))
    out = mean_vectors(
        sums, n, vocab, dropped=dropped, max_length=max_length, missing=missing, where=where
    )
    if ckpt is not None and keep_checkpoint:
        if saved != chunks_done:
            save()
    elif ckpt is not None:
        remove_checkpoint(ckpt.parent)
    return out


def _count_chunks(
    sentences_path: PathLike,
    wanted: SampledOccurrences,
    chunk_sentences: int,
    max_words: int,
    language: str,
) -> int:
    """How many chunks :func:`aggregate_vectors` cuts the selected sentences into (a pass
    over the text: the cut depends on their lengths)."""
    n, size, words = 0, 0, 0
    for i, line in enumerate(iter_lines(sentences_path, language=language)):
        if i in wanted:
            length = len(tokens_of(line))
            if size and words + length > max_words:
                n, size, words = n + 1, 0, 0
            size, words = size + 1, words + length
            if size == chunk_sentences:
                n, size, words = n + 1, 0, 0
    return n + (1 if size else 0)


def remove_checkpoint(checkpoint_dir: PathLike) -> None:
    """Remove :func:`aggregate_vectors`' checkpoint (and the directory, when left empty)."""
    (Path(checkpoint_dir) / CHECKPOINT_FILE).unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        Path(checkpoint_dir).rmdir()


def _fingerprint(
    sentences_path: PathLike, vocab: Vocab, encoder_dir: PathLike, **options: Any
) -> str:
    """SHA-256 of what the sums depend on: corpus, vocabulary, encoder and options."""
    payload = {
        "format": _CHECKPOINT_FORMAT,
        "sentences_sha256": file_sha256(sentences_path),
        "vocab_sha256": vocab.fingerprint(),
        **encoder_fingerprint(encoder_dir),
        "options": options,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


#: Why a vocabulary word may get no vector (see :func:`xlalign.static.spaces.save_space`).
LEFT_OUT_REASON = "no occurrence within max_length subwords"


def save_aggregated(
    words: Sequence[str],
    vectors: np.ndarray,
    *,
    vec_path: PathLike,
    npy_stem: PathLike,
    stats_path: PathLike,
    stats: dict[str, Any],
    language: str,
) -> dict[str, Any]:
    """Write :func:`aggregate_vectors`' output as a space (``.vec``, ``.npy``, stats JSON),
    leaving out the words whose row stayed zero (``missing="zero"``); returns the stats."""
    return save_space(
        words,
        vectors,
        np.abs(vectors).sum(axis=1) > 0,
        vec_path=vec_path,
        npy_stem=npy_stem,
        stats_path=stats_path,
        stats=stats,
        language=language,
        reason=LEFT_OUT_REASON,
    )
