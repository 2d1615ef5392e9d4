"""The teacher side of X2Static: each sentence's context vectors, computed once, cached on disk.

X2Static trains a static vector per word against a *context vector* produced by a
contextual encoder. The public code recomputes the encoder on every batch of every epoch;
here each sentence is encoded once (up to layer ``L`` only, see
:mod:`xlalign.encoders.contextual`) and, for every in-vocabulary word occurrence, its context
vector is stored:

* ``context="others"`` (the paper's wording, default): the mean of the pooled vectors of
  the *other* words of the sentence, ``(sum_all - v_target) / (n - 1)``; occurrences in a
  sentence with a single word that has a vector have no context and are skipped (counted).
* ``context="all-words"``: the mean of the pooled vectors of all words, the target
  included, ``sum_all / n``. It follows neither the paper's wording nor the public code
  (named ``all`` before, and wrongly described as the public code's).
* ``context="x2static-code"`` (X2Static's public code, ``learn_from_bert_ver2.py`` /
  ``learn_from_roberta_ver2.py`` of github.com/epfml/X2Static): the mean of the encoder's
  states over *all subword tokens* of the sentence, special tokens included, padding
  excluded (:func:`xlalign.encoders.contextual.sentence_token_means`); every in-vocabulary
  occurrence of the sentence gets it, whatever its own subwords (a word cut off by
  ``max_length`` too, as there). The public code reads the last layer: with ``layer`` set
  to the encoder's depth this is its context exactly; at another layer it is the same
  formula at that layer. Pooling does not enter it.

``n`` counts every word of the sentence that has a vector, in or out of the vocabulary.

Layout of the cache directory (float16 vectors; :class:`TeacherCache` reads the rows it is
asked for with ``os.pread``, so a reader's memory is its batch, not the cache)::

    shard-00000.ctx.npy      float16 [n_occ, dim]   context vector of each occurrence
    shard-00000.ids.npy      int32   [n_occ]        vocabulary id of each occurrence
    shard-00000.stats.json   what the shard skipped and why
    shard-00000.offsets.npy  int64   [n_sent + 1]   CSR offsets of each sentence (written last)
    shard-00000.agg.npz      the aggregation samples' vectors of the shard (while building)
    build.json               the configuration the shards were built with (while building)
    aggregate-seed1.npz      the aggregation baseline's sums of seed 1 (when asked for)
    meta.json                written last: the cache is complete only when it exists

**The aggregation baseline from the same pass.** Given ``aggregation_seeds`` (and
``max_contexts``), the pass also collects the pooled word vectors of each seed's sampled
occurrences (:mod:`xlalign.static.aggregation`: the same corpus, layer, pooling and
truncation) into the shard's ``.agg.npz``, written before its offsets, so it resumes
with the shard; when the shards are complete the sums of each seed go to
``aggregate-seed<seed>.npz`` and the shards' samples are removed. The aggregation job then
reads those sums and runs no encoder. A complete shard without a seed's samples (built
before, without them) is encoded again. ``context="x2static-code"`` pools no word
vectors, so there the aggregation runs the encoder itself; so does it when a complete
cache is reused as is.

**Memory.** The text is read line by line, one shard (``shard_sentences`` lines) at a
time; a shard's sentences go to the encoder in chunks whose word vectors fit ``budget_mb``
(``memory.block_mb``), and the context vectors are appended to the shard's file as they
come (:func:`_build_shard`), so the pass holds the encoder and one chunk, whatever the
corpus. The aggregation samples are three flat arrays (:class:`~xlalign.static.aggregation.
SampledOccurrences`, 16 bytes an occurrence, at most ``V x K``). Measured (peak RSS,
``ru_maxrss``, one 4,096-line shard of ~20 words, width 768, glibc's heap trimming on):
1,153 MB before (the shard's float32 vectors, their contexts, the concatenation and its
float16 copy), 547 MB now at the default 256 MB budget, 465 MB at 32 MB; the model and
imports are ~390 MB of either. Reading a 588 MB cache in a random order: +594 MB RSS
through memory maps before, +5 MB now.

**Why a cache at all, and why it is deleted** (issue 28). One float16 context vector per
in-vocabulary occurrence: ``2 * dim + 4`` bytes (the vector and its int32 id) plus 8 bytes
a sentence of offsets; measured 1,540.7 bytes an occurrence at 768 dims (1,536 of them the
vector), 772.5 at 384. At the paper's scale (1M sentences x ~20 kept occurrences) that is
~30 GB a language and sampling seed, ~1.2 TB for 40 languages. Against it, re-encoding in
every epoch (X2Static's public code) costs the encoder pass ``epochs`` times: measured with
one CPU thread on a random BERT cut at layer 6, whole-word tokens, 20 words a sentence,
``negatives=10`` (``benchmarks/teacher_cache_cost.py``), one teacher pass costs
3.6-3.8 X2S-M epochs read from the cache at width 384 and 6.9 at width 768 (the encoder
grows with ``dim**2``, an epoch with ``dim``; XLM-R's subwords, ~1.4 a word, make it more).
With ``extract.epochs`` = 5 that is 6.9 + 5 = 11.9 epoch-units cached against
5 x (6.9 + 1) = 39.5 re-encoding: caching wins ~3x, and more with more epochs or seeds
sharing a corpus. float16 stays: it halves the bytes of float32 and the trained vectors
differ from float32 contexts only by its rounding (``benchmarks/bench_x2static.py``); no
measurement here favours another precision or layout. So the workflow keeps the cache
only while it is read: it is a ``temp()`` output, deleted once x2static, aggregate and
learning_curve of every seed using it have run, unless ``extract.keep_teacher_cache``
(``snakemake --notemp`` keeps it for one run). The job builds it in ``<dir>.partial/``
(:func:`staged_cache`) and renames it into place when complete, so a killed job resumes
from its shards there (Snakemake deletes a failed job's declared outputs, not the sidecar).

Each shard covers ``shard_sentences`` consecutive lines and every file is written
atomically, so a killed build resumes at the first incomplete shard and yields the same
arrays as an uninterrupted one. The finished shards are the checkpoint: SIGTERM (Slurm
pre-emption, see :mod:`xlalign.core.interrupt`) stops the build at once, losing only the
shard being encoded, and the re-run logs where it resumes. Sentences with no
in-vocabulary word still count (empty rows), so sentence indices equal line numbers
(0-based).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm import tqdm

from xlalign.core import interrupt
from xlalign.core.device import resolve_device, resolve_dtype
from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, atomic_open, file_sha256, iter_lines, read_json, write_json
from xlalign.core.memory import rows_per_block
from xlalign.corpus.vocab import Vocab, tokens_of
from xlalign.encoders.contextual import (
    POOLINGS,
    WordVectorStats,
    forward_record,
    load_truncated_encoder,
    sentence_token_means,
    untokenizable,
    word_vectors,
)

if TYPE_CHECKING:  # aggregation imports this module: its functions are imported where used
    from xlalign.static.aggregation import SampleCollector

log = logging.getLogger(__name__)

FORMAT = "xlalign-teacher-cache"
VERSION = 1
#: others: the paper's wording; x2static-code: X2Static's public code; all-words: neither.
CONTEXTS = ("others", "all-words", "x2static-code")
#: Values no longer accepted, with what to use instead.
RENAMED_CONTEXTS = {
    "all": "'all-words' (the mean of every word's pooled vector, as 'all' was) or "
    "'x2static-code' (the public X2Static code: the mean over all subword tokens, special "
    "tokens included)"
}
META_FILE = "meta.json"
#: The sidecar a workflow job builds the cache in (:func:`staged_cache`).
PARTIAL_SUFFIX = ".partial"
BUILD_FILE = "build.json"
_FP16_MAX = float(np.finfo(np.float16).max)


# --------------------------------------------------------------------------- fingerprints


def encoder_fingerprint(encoder_dir: PathLike) -> dict[str, Any]:
    """The encoder's path, the SHA-256 of its ``config.json`` and the sizes of its weights."""
    d = Path(encoder_dir)
    cfg = d / "config.json"
    weights = {
        p.name: p.stat().st_size
        for pattern in ("*.safetensors", "*.bin")
        for p in sorted(d.glob(pattern))
    }
    return {
        "encoder": str(d.resolve()) if d.exists() else str(encoder_dir),
        "encoder_config_sha256": file_sha256(cfg) if cfg.is_file() else None,
        "encoder_weights": weights,
    }


def cache_config(
    sentences_path: PathLike,
    vocab: Vocab,
    encoder_dir: PathLike,
    *,
    layer: int,
    pooling: str,
    context: str,
    max_length: int,
    dtype: str,
    shard_sentences: int,
) -> dict[str, Any]:
    """Everything the cached arrays (and their shard layout) depend on; a cache is reused
    or resumed only if this matches."""
    return {
        "format": FORMAT,
        "version": VERSION,
        **encoder_fingerprint(encoder_dir),
        "layer": layer,
        "pooling": pooling,
        "context": context,
        "max_length": max_length,
        "dtype": dtype,
        "shard_sentences": shard_sentences,
        "vocab_sha256": vocab.fingerprint(),
        "sentences_sha256": file_sha256(sentences_path),
    }


# --------------------------------------------------------------------------- shards


def _shard_paths(out: Path, k: int) -> dict[str, Path]:
    stem = f"shard-{k:05d}"
    return {
        "ctx": out / f"{stem}.ctx.npy",
        "ids": out / f"{stem}.ids.npy",
        "stats": out / f"{stem}.stats.json",
        "offsets": out / f"{stem}.offsets.npy",  # written last: marks the shard complete
    }


def _shard_complete(out: Path, k: int) -> bool:
    return all(p.is_file() for p in _shard_paths(out, k).values())


def _samples_path(out: Path, k: int) -> Path:
    """The aggregation samples of shard ``k`` (see the module docstring)."""
    return out / f"shard-{k:05d}.agg.npz"


def _has_samples(out: Path, k: int, collectors: Sequence[SampleCollector]) -> bool:
    """Whether shard ``k``'s samples file holds every collector's seed and fingerprint."""
    if not collectors:
        return True
    path = _samples_path(out, k)
    if not path.is_file():
        return False
    try:
        with np.load(path, allow_pickle=False) as z:
            seeds = json.loads(str(z["state"])).get("seeds", {})
    except (OSError, ValueError, KeyError):
        return False
    return all(seeds.get(c.key) == c.fingerprint for c in collectors)


def _save_npy(path: Path, arr: np.ndarray) -> None:
    with atomic_open(path, "wb") as fh:
        np.save(fh, arr, allow_pickle=False)


def _clear(out: Path) -> None:
    """Remove every file this module writes in ``out`` (and only those)."""
    patterns = ("shard-*.npy", "shard-*.json", "shard-*.agg.npz", ".shard-*", "aggregate-seed*")
    for pattern in (*patterns, ".aggregate-seed*", META_FILE, BUILD_FILE):
        for p in out.glob(pattern):
            if p.is_file():
                p.unlink()


def context_vectors(
    words: Sequence[str], vectors: np.ndarray, vocab: Vocab, context: str, counts: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """(ids int32, float32 context vectors) of the in-vocabulary occurrences of one sentence,
    for the word-level contexts ``others`` and ``all-words``.

    ``vectors`` holds one row per word, NaN where the word has no vector. ``counts``
    accumulates the occurrences skipped: ``oov``, ``no_vector`` and ``single_word``.
    """
    dim = vectors.shape[1]
    valid = ~np.isnan(vectors[:, 0]) if len(words) else np.zeros(0, dtype=bool)
    # one pass of plain Python over the words (no per-word numpy indexing): this runs for
    # every sentence of the corpus beside the encoder
    index, has_vector = vocab.index, valid.tolist()
    found = [index.get(t) for t in map(vocab.normalise, words)]
    pos = [j for j, v in enumerate(found) if v is not None and has_vector[j]]
    ids = [found[j] for j in pos]
    n_oov = found.count(None)
    counts["oov"] += n_oov
    counts["no_vector"] += len(found) - n_oov - len(pos)
    n = int(valid.sum())
    if not ids:
        return np.zeros(0, np.int32), np.zeros((0, dim), np.float32)
    if context == "others" and n < 2:
        counts["single_word"] += len(ids)
        return np.zeros(0, np.int32), np.zeros((0, dim), np.float32)
    total = vectors[valid].sum(axis=0, dtype=np.float64)
    if context == "all-words":
        ctx = np.broadcast_to(total / n, (len(ids), dim))
    elif context == "others":
        ctx = (total[None, :] - vectors[pos].astype(np.float64)) / (n - 1)
    else:
        raise ConfigError(f"context {context!r}: not a word-level context (others, all-words)")
    return np.asarray(ids, np.int32), ctx.astype(np.float32)


def sentence_context(
    words: Sequence[str], mean: np.ndarray, vocab: Vocab, counts: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """(ids int32, float32 context vectors) of the in-vocabulary occurrences of one sentence
    for ``context="x2static-code"``: each gets the sentence's token mean ``mean``.

    As in the public code, every in-vocabulary occurrence is a target, even one whose
    subwords were cut off by ``max_length``; out-of-vocabulary ones are counted (``oov``).
    """
    ids: list[int] = []
    for w in words:
        v = vocab.lookup(w)
        if v is None:
            counts["oov"] += 1
        else:
            ids.append(v)
    ctx = np.broadcast_to(np.asarray(mean, np.float32), (len(ids), len(mean)))
    return np.asarray(ids, np.int32), np.ascontiguousarray(ctx)


class _RowsWriter:
    """A ``.npy`` file whose rows are appended as they come (no array of the whole file in
    memory): a fixed-size header is reserved first and written, with the final shape, at
    :meth:`finish`. The file reads back as :func:`numpy.save`'s would."""

    HEADER = 128  # bytes: magic, version, length and the padded header dict (a multiple of 64)

    def __init__(self, fh: Any, dtype: str, row_shape: tuple[int, ...]) -> None:
        self.fh, self.dtype, self.row_shape, self.rows = fh, np.dtype(dtype), row_shape, 0
        fh.write(b"\0" * self.HEADER)

    def append(self, rows: np.ndarray) -> None:
        rows = np.ascontiguousarray(rows, dtype=self.dtype)
        if rows.shape[1:] != self.row_shape:
            raise ValueError(f"rows of shape {rows.shape[1:]}, expected {self.row_shape}")
        self.fh.write(rows.tobytes())
        self.rows += len(rows)

    def finish(self) -> None:
        shape = (self.rows, *self.row_shape)
        header = repr(
            {
                "descr": np.lib.format.dtype_to_descr(self.dtype),
                "fortran_order": False,
                "shape": shape,
            }
        ).encode("latin1")
        room = self.HEADER - 10 - 1  # magic (6), version (2), length (2); newline
        if len(header) > room:
            raise ValueError(f".npy header of shape {shape} longer than {room} bytes")
        header = header + b" " * (room - len(header)) + b"\n"
        self.fh.seek(0)
        self.fh.write(b"\x93NUMPY\x01\x00" + (len(header)).to_bytes(2, "little") + header)
        self.fh.seek(0, 2)


def _chunks_by_words(sentences: Sequence[Sequence[str]], max_words: int) -> list[tuple[int, int]]:
    """Consecutive ``[a, b)`` ranges of ``sentences`` holding at most ``max_words`` words each
    (at least one sentence each)."""
    spans, start, words = [], 0, 0
    for i, sent in enumerate(sentences):
        if i > start and words + len(sent) > max_words:
            spans.append((start, i))
            start, words = i, 0
        words += len(sent)
    if start < len(sentences):
        spans.append((start, len(sentences)))
    return spans


#: Working bytes of one word of a chunk per dimension: its float32 pooled vector, held by
#: the encoder's in-order output until its sentence is reached, and its float64 context.
_BYTES_PER_WORD_DIM = 4 + 8


def _build_shard(
    out: Path,
    k: int,
    lines: list[str],
    vocab: Vocab,
    tokenizer: Any,
    model: Any,
    *,
    pooling: str,
    context: str,
    max_length: int,
    batch_tokens: int,
    collectors: Sequence[SampleCollector] = (),
    first_line: int = 0,
    budget_mb: float | None = None,
) -> dict[str, int]:
    """Encode one shard's sentences and write its files (offsets last); ``collectors``
    take the aggregation samples among them (lines ``first_line`` onwards).

    The sentences go to the encoder in chunks whose word vectors fit ``budget_mb``
    (:func:`xlalign.core.memory.rows_per_block`, by words), and the context vectors are
    appended to the shard's file as they come: the shard's working memory is one chunk,
    whatever ``shard_sentences``. A chunk boundary changes only how the sentences are
    padded into batches (float32 noise, ~1e-7 relative), not which vectors are stored."""
    sentences = [tokens_of(line) for line in lines]
    wstats = WordVectorStats()
    counts = {"oov": 0, "no_vector": 0, "single_word": 0}
    offsets = np.zeros(len(sentences) + 1, dtype=np.int64)
    dim = int(model.config.hidden_size)
    max_words = rows_per_block(dim * _BYTES_PER_WORD_DIM, budget_mb)
    paths = _shard_paths(out, k)
    peak = 0.0
    with atomic_open(paths["ctx"], "wb") as ctx_fh, atomic_open(paths["ids"], "wb") as ids_fh:
        ctx_out = _RowsWriter(ctx_fh, "<f2", (dim,))
        ids_out = _RowsWriter(ids_fh, "<i4", ())
        for a, b in _chunks_by_words(sentences, max_words):
            chunk = sentences[a:b]
            if context == "x2static-code":
                means = sentence_token_means(
                    chunk,
                    tokenizer,
                    model,
                    max_length=max_length,
                    batch_tokens=batch_tokens,
                    stats=wstats,
                )
                contexts = (
                    sentence_context(words, mean, vocab, counts)
                    for words, mean in zip(chunk, means, strict=True)
                )
            else:
                vectors = word_vectors(
                    chunk,
                    tokenizer,
                    model,
                    pooling=pooling,
                    max_length=max_length,
                    batch_tokens=batch_tokens,
                    stats=wstats,
                )

                def collected(
                    i: int, words: list[str], vec: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
                    for c in collectors:
                        c.add(first_line + i, vec)
                    return context_vectors(words, vec, vocab, context, counts)

                contexts = (
                    collected(a + i, words, vec)
                    for i, (words, vec) in enumerate(zip(chunk, vectors, strict=True))
                )
            for i, (ids, ctx) in enumerate(contexts, start=a):
                if ctx.size:
                    peak = max(peak, float(np.abs(ctx).max()))
                    if peak > _FP16_MAX:
                        raise ConfigError(
                            f"layer vectors exceed the float16 range ({peak:.3g}); "
                            "the teacher cache cannot store them"
                        )
                ctx_out.append(ctx)
                ids_out.append(ids)
                offsets[i + 1] = offsets[i] + len(ids)
        ctx_out.finish()
        ids_out.finish()
    stats = {
        "sentences": len(sentences),
        "occurrences": int(offsets[-1]),
        "sentences_without_occurrence": int((np.diff(offsets) == 0).sum()),
        "skipped_oov": counts["oov"],
        "skipped_no_vector": counts["no_vector"],
        "skipped_single_word": counts["single_word"],
        "words": wstats.words,
        "truncated_sentences": wstats.truncated_sentences,
        "truncated_words": wstats.truncated_words,
        "empty_words": wstats.empty_words,
    }
    write_json(paths["stats"], stats)
    if collectors:
        from xlalign.static.aggregation import save_shard_samples

        save_shard_samples(_samples_path(out, k), collectors, dim)
    _save_npy(paths["offsets"], offsets)
    return stats


def _scan(path: PathLike, vocab: Vocab, language: str) -> tuple[int, int, int]:
    """(lines, non-empty lines, in-vocabulary occurrences) of a segmented corpus."""
    n = nonempty = inv = 0
    index = vocab.index
    for line in iter_lines(path, language=language):
        n += 1
        toks = tokens_of(line)
        if toks:
            nonempty += 1
            inv += sum(1 for t in toks if vocab.normalise(t) in index)
    return n, nonempty, inv


# --------------------------------------------------------------------------- build


def build_teacher_cache(
    sentences_path: PathLike,
    vocab: Vocab,
    encoder_dir: PathLike,
    out_dir: PathLike,
    *,
    layer: int,
    pooling: str = "mean",
    context: str = "others",
    max_length: int = 200,
    batch_tokens: int = 8192,
    shard_sentences: int = 4096,
    device: Any = None,
    dtype: Any = None,
    progress: bool = True,
    language: str = "?",
    threads: int | None = None,
    aggregation_seeds: Sequence[int] = (),
    max_contexts: int = 10,
    subset_collectors: Sequence[SampleCollector] = (),
    budget_mb: float | None = None,
) -> Path:
    """Encode every sentence of ``sentences_path`` once and cache its context vectors
    (and, for each of ``aggregation_seeds``, the aggregation baseline's sums of up to
    ``max_contexts`` sampled occurrences per word: see the module docstring).
    ``subset_collectors`` collect the same over subsets of the lines (the learning curve's
    sizes, :mod:`xlalign.learning_curve.curve`), written as their own sums files.
    ``budget_mb`` (``memory.block_mb``) bounds the working memory of the sentences encoded
    at once (:func:`_build_shard`); the text is read line by line, one shard at a time.

    Returns ``out_dir``. A complete cache built with the same configuration is reused as
    is; one built with another configuration is removed and rebuilt (with a warning); an
    interrupted build resumes at its first incomplete shard. Raises :class:`InputError`
    for an empty corpus, a corpus without any in-vocabulary word, vocabulary words the
    tokenizer maps to nothing or an encoder that cannot be loaded, and
    :class:`ConfigError` for a bad layer, pooling or context.
    """
    if pooling not in POOLINGS:
        raise ConfigError(f"pooling: expected one of {POOLINGS}, got {pooling!r}")
    if context in RENAMED_CONTEXTS:
        raise ConfigError(f"context {context!r} was renamed: use {RENAMED_CONTEXTS[context]}")
    if context not in CONTEXTS:
        raise ConfigError(f"context: expected one of {CONTEXTS}, got {context!r}")
    if shard_sentences < 1:
        raise ConfigError(f"shard_sentences: expected a positive number, got {shard_sentences}")
    where = f"{sentences_path} (language {language!r})"
    out = Path(out_dir)
    if not Path(sentences_path).is_file():
        raise InputError(f"{where}: file not found")
    dev = resolve_device(device)
    torch_dtype = resolve_dtype(dtype, dev)
    config = cache_config(
        sentences_path,
        vocab,
        encoder_dir,
        layer=layer,
        pooling=pooling,
        context=context,
        max_length=max_length,
        dtype=str(torch_dtype).removeprefix("torch."),
        shard_sentences=shard_sentences,
    )
    meta_path, build_path = out / META_FILE, out / BUILD_FILE
    if meta_path.is_file():
        try:
            meta = read_json(meta_path)
        except InputError:
            meta = {}
        if meta.get("config") == config and all(
            _shard_complete(out, k) for k in range(int(meta.get("n_shards", -1)))
        ):
            log.info("teacher cache %s is up to date (%s)", out, where)
            return out
        log.warning(
            "teacher cache %s was built with another configuration or is damaged; "
            "rebuilding it from scratch",
            out,
        )
        _clear(out)
    elif build_path.is_file():
        try:
            previous = read_json(build_path)
        except InputError:
            previous = None
        if previous != config:
            log.warning(
                "teacher cache %s: unfinished build with another configuration; "
                "rebuilding it from scratch",
                out,
            )
            _clear(out)

    if aggregation_seeds and context == "x2static-code":
        log.info(
            "teacher cache %s: context x2static-code pools no word vectors; the aggregation "
            "baseline runs the encoder itself",
            out,
        )
        aggregation_seeds, subset_collectors = (), ()
    n_lines, nonempty, n_inv = _scan(sentences_path, vocab, language)
    if nonempty == 0:
        raise InputError(f"{where}: empty corpus: expected sentences, one per line")
    if n_inv == 0:
        raise InputError(
            f"{where}: no sentence holds a word of the vocabulary ({len(vocab)} words); "
            "expected the corpus the vocabulary was built from"
        )

    tokenizer, model = load_truncated_encoder(
        encoder_dir, layer, device=dev, dtype=torch_dtype, threads=threads
    )
    empty = untokenizable(vocab.words, tokenizer)
    if empty:
        raise InputError(
            f"{where}: {len(empty)} vocabulary word(s) map to no subword of the encoder "
            f"{encoder_dir}: {', '.join(map(repr, empty[:20]))}"
        )

    collectors = _collectors(
        sentences_path,
        vocab,
        encoder_dir,
        out,
        aggregation_seeds,
        layer=layer,
        pooling=pooling,
        max_length=max_length,
        max_contexts=max_contexts,
        dtype=config["dtype"],
        language=language,
    ) + list(subset_collectors)
    out.mkdir(parents=True, exist_ok=True)
    write_json(build_path, config)
    n_shards = -(-n_lines // shard_sentences)
    first = next(
        (
            k
            for k in range(n_shards)
            if not (_shard_complete(out, k) and _has_samples(out, k, collectors))
        ),
        n_shards,
    )
    if first:
        log.info("teacher cache %s: resuming at shard %d of %d", out, first, n_shards)
    start = time.perf_counter()
    encoded = 0
    bar = tqdm(
        total=n_lines,
        initial=min(first * shard_sentences, n_lines),
        unit="sent",
        desc=f"teacher {language} L{layer}",
        disable=not progress,
        dynamic_ncols=True,
    )

    def encode(k: int, chunk: list[str]) -> None:
        nonlocal encoded
        _build_shard(
            out,
            k,
            chunk,
            vocab,
            tokenizer,
            model,
            pooling=pooling,
            context=context,
            max_length=max_length,
            batch_tokens=batch_tokens,
            collectors=collectors,
            first_line=k * shard_sentences,
            budget_mb=budget_mb,
        )
        encoded += len(chunk)
        bar.update(len(chunk))
        _log_rate(k, n_shards, encoded, start)

    try:
        chunk: list[str] = []
        for lineno, line in enumerate(iter_lines(sentences_path, language=language)):
            if lineno < first * shard_sentences:
                continue
            chunk.append(line)
            if len(chunk) == shard_sentences:
                encode(lineno // shard_sentences, chunk)
                chunk = []
        if chunk:
            encode(n_shards - 1, chunk)
    except interrupt.Preempted:
        done = next((k for k in range(n_shards) if not _shard_complete(out, k)), n_shards)
        log.warning(
            "teacher cache %s: stopped with %d of %d shards complete; a re-run resumes at shard %d",
            out,
            done,
            n_shards,
            done,
        )
        raise
    finally:
        bar.close()
    seconds = time.perf_counter() - start

    totals: dict[str, int] = {}
    for k in range(n_shards):
        for key, value in read_json(_shard_paths(out, k)["stats"]).items():
            totals[key] = totals.get(key, 0) + int(value)
    if totals.get("sentences") != n_lines:
        raise InputError(
            f"{where}: the cache holds {totals.get('sentences')} sentences but the file has "
            f"{n_lines} lines; was it modified during the build?"
        )
    if totals["occurrences"] == 0:
        raise InputError(
            f"{where}: no in-vocabulary word occurrence has a context "
            f"(skipped: {totals['skipped_single_word']} in one-word sentences, "
            f"{totals['skipped_no_vector']} without a vector)"
        )
    from xlalign.static.aggregation import sum_shard_samples, write_teacher_sums

    dim = int(model.config.hidden_size)
    sums_files = {}
    for c in collectors:
        paths = [_samples_path(out, k) for k in range(n_shards)]
        found = sum_shard_samples(paths, c.key, c.fingerprint, c.vocab_size or len(vocab), dim)
        if found is None:  # not expected: every shard was checked or encoded with them
            raise InputError(f"{out}: the aggregation samples of {c.key} are incomplete")
        sums_files[c.key] = write_teacher_sums(
            out, c.seed, c.fingerprint, *found, subset=c.subset
        ).name
    for k in range(n_shards):
        _samples_path(out, k).unlink(missing_ok=True)
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "config": config,
        "language": language,
        "encoder": str(encoder_dir),
        "layer": layer,
        "pooling": pooling,
        "context": context,
        "dtype": config["dtype"],
        "dim": int(model.config.hidden_size),
        # how layer `layer` was computed: "truncated" (layers 1..layer) or "full (why)"
        "forward": forward_record(model),
        "vocab_size": len(vocab),
        "vocab_sha256": config["vocab_sha256"],
        "sentences_sha256": config["sentences_sha256"],
        "n_sentences": n_lines,
        "n_occurrences": totals["occurrences"],
        "n_shards": n_shards,
        "shard_sentences": shard_sentences,
        "counts": totals,
        "seconds_this_run": round(seconds, 3),
        "sentences_encoded_this_run": encoded,
        "sentences_per_second": round(encoded / seconds, 2) if seconds > 0 and encoded else None,
        # the aggregation sums this run wrote, by seed (older ones are kept, fingerprinted)
        "aggregation_sums": sums_files,
    }
    write_json(meta_path, meta)
    build_path.unlink(missing_ok=True)
    log.info(
        "teacher cache %s: %d sentences, %d occurrences (%s skipped as one-word sentences), "
        "%d truncated sentences; %.1f sentences/s",
        out,
        n_lines,
        totals["occurrences"],
        totals["skipped_single_word"],
        totals["truncated_sentences"],
        encoded / seconds if seconds > 0 else 0.0,
    )
    return out


def _collectors(
    sentences_path: PathLike,
    vocab: Vocab,
    encoder_dir: PathLike,
    out: Path,
    seeds: Sequence[int],
    *,
    layer: int,
    pooling: str,
    max_length: int,
    max_contexts: int,
    dtype: str,
    language: str,
) -> list[SampleCollector]:
    """One collector per seed whose sums are not beside the cache already."""
    from xlalign.static.aggregation import (
        SampleCollector,
        read_teacher_sums,
        sample_lines,
        sums_fingerprint,
    )

    collectors = []
    for seed in sorted(set(int(s) for s in seeds)):
        fingerprint = sums_fingerprint(
            sentences_path,
            vocab,
            encoder_dir,
            layer=layer,
            pooling=pooling,
            max_contexts=max_contexts,
            seed=seed,
            max_length=max_length,
            dtype=dtype,
        )
        if read_teacher_sums(out, seed, fingerprint, quiet=True) is not None:
            continue
        wanted = sample_lines(
            sentences_path, vocab, max_contexts=max_contexts, seed=seed, language=language
        )
        collectors.append(SampleCollector(seed=seed, fingerprint=fingerprint, wanted=wanted))
    return collectors


def _log_rate(k: int, n_shards: int, encoded: int, start: float) -> None:
    elapsed = time.perf_counter() - start
    log.info(
        "shard %d/%d done: %d sentences in %.1f s (%.1f sentences/s)",
        k + 1,
        n_shards,
        encoded,
        elapsed,
        encoded / elapsed if elapsed > 0 else 0.0,
    )


@contextlib.contextmanager
def staged_cache(final_dir: PathLike) -> Iterator[Path]:
    """Build a cache in ``<final_dir>.partial`` and rename it to ``final_dir`` on success.

    The workflow declares ``final_dir`` as the teacher job's output (a ``temp()`` directory
    unless ``extract.keep_teacher_cache``): Snakemake deletes a failed job's outputs, but not
    the sidecar, so a killed job's finished shards stay there and the re-run resumes from
    them; ``final_dir`` appears only complete (one rename). A ``final_dir`` already there
    (Snakemake removes it before running the job; a library caller may not) is moved to the
    sidecar first, where :func:`build_teacher_cache` reuses it when up to date.
    """
    final = Path(final_dir)
    partial = final.with_name(final.name + PARTIAL_SUFFIX)
    if final.is_dir():
        if partial.exists():
            shutil.rmtree(final)
        else:
            final.rename(partial)
    partial.mkdir(parents=True, exist_ok=True)
    yield partial
    if not (partial / META_FILE).is_file():
        raise InputError(f"{partial}: the teacher cache build ended without {META_FILE}")
    partial.rename(final)


# --------------------------------------------------------------------------- read


#: Shards whose files a :class:`TeacherCache` keeps open at once (least recently used
#: closed first): the open files do not grow with the corpus.
OPEN_SHARDS = 64


class _NpyFile:
    """Rows of a ``.npy`` file read with ``os.pread``: nothing is mapped, so the reader's
    address space does not grow with the file (a memory map of the whole cache would be
    as large as the cache, ~30 GB a language at the paper's scale)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with open(path, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
            else:
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
            self.offset = fh.tell()
        if fortran:
            raise InputError(f"{path}: a Fortran-ordered array; expected C order")
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.row_bytes = self.dtype.itemsize * int(np.prod(self.shape[1:], dtype=np.int64))
        self.fd = os.open(path, os.O_RDONLY)

    def rows(self, a: int, b: int) -> np.ndarray:
        """Rows ``[a, b)`` as a new array."""
        n = max(0, b - a)
        data = os.pread(self.fd, n * self.row_bytes, self.offset + a * self.row_bytes)
        if len(data) != n * self.row_bytes:
            raise InputError(f"{self.path}: truncated (rows {a}..{b} of {self.shape[0]})")
        return np.frombuffer(data, dtype=self.dtype).reshape((n, *self.shape[1:])).copy()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class _OpenShard:
    """One shard of a cache, its files open (offsets in memory: 8 bytes a sentence)."""

    def __init__(self, paths: dict[str, Path], dim: int) -> None:
        self.offsets = np.load(paths["offsets"], allow_pickle=False)
        self._ids, self._ctx = _NpyFile(paths["ids"]), _NpyFile(paths["ctx"])
        self.n_occurrences = int(self.offsets[-1]) if len(self.offsets) else 0
        if self._ids.shape[:1] != (self.n_occurrences,) or self._ctx.shape != (
            self.n_occurrences,
            dim,
        ):
            raise InputError(
                f"{paths['ctx']}: shard arrays of shapes {self._ids.shape} and "
                f"{self._ctx.shape} do not match its offsets ({self.n_occurrences} occurrences, "
                f"dim {dim})"
            )

    def span(self, local: int) -> tuple[int, int]:
        return int(self.offsets[local]), int(self.offsets[local + 1])

    def ids(self, a: int, b: int) -> np.ndarray:
        return self._ids.rows(a, b)

    def ctx(self, a: int, b: int) -> np.ndarray:
        return self._ctx.rows(a, b)

    def close(self) -> None:
        self._ids.close()
        self._ctx.close()


class TeacherCache:
    """Read access to a complete teacher cache: shards opened lazily (at most
    :data:`OPEN_SHARDS` at a time), rows read from disk as asked for (``os.pread``, no
    memory map), so a reader's memory is its batches, whatever the cache's size."""

    def __init__(self, out_dir: PathLike) -> None:
        self.path = Path(out_dir)
        meta_path = self.path / META_FILE
        if not meta_path.is_file():
            raise InputError(f"{meta_path}: not found; the teacher cache is missing or incomplete")
        meta = read_json(meta_path)
        if meta.get("format") != FORMAT or meta.get("version") != VERSION:
            raise InputError(
                f"{meta_path}: expected format {FORMAT!r} version {VERSION}, got "
                f"{meta.get('format')!r} version {meta.get('version')!r}"
            )
        self.meta: dict[str, Any] = meta
        self.dim = int(meta["dim"])
        self.n_sentences = int(meta["n_sentences"])
        self.n_occurrences = int(meta["n_occurrences"])
        self.shard_sentences = int(meta["shard_sentences"])
        self.n_shards = int(meta["n_shards"])
        for k in range(self.n_shards):
            for p in _shard_paths(self.path, k).values():
                if not p.is_file():
                    raise InputError(f"{p}: missing shard file of the teacher cache {self.path}")
        self._open: OrderedDict[int, _OpenShard] = OrderedDict()

    def __len__(self) -> int:
        return self.n_sentences

    def close(self) -> None:
        """Close the shard files held open (reading opens them again)."""
        while self._open:
            self._open.popitem(last=False)[1].close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()

    def _shard(self, k: int) -> _OpenShard:
        shard = self._open.get(k)
        if shard is None:
            shard = _OpenShard(_shard_paths(self.path, k), self.dim)
            self._open[k] = shard
            if len(self._open) > OPEN_SHARDS:
                self._open.popitem(last=False)[1].close()
        else:
            self._open.move_to_end(k)
        return shard

    def _locate(self, i: int) -> tuple[_OpenShard, int, int]:
        if not 0 <= i < self.n_sentences:
            raise IndexError(f"sentence {i} outside 0..{self.n_sentences - 1} of {self.path}")
        k, local = divmod(int(i), self.shard_sentences)
        shard = self._shard(k)
        a, b = shard.span(local)
        return shard, a, b

    def sentence(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(int32 ids, float16 context vectors) of the occurrences in sentence ``i``."""
        shard, a, b = self._locate(i)
        return shard.ids(a, b).astype(np.int32), shard.ctx(a, b)

    def batch(self, sentence_indices: np.ndarray | Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(int64 ids, float32 contexts) of all occurrences of the sentences, in the given order."""
        spans = [self._locate(int(i)) for i in np.asarray(sentence_indices).reshape(-1)]
        total = sum(b - a for _, a, b in spans)
        out_ids = np.empty(total, dtype=np.int64)
        out_ctx = np.empty((total, self.dim), dtype=np.float32)
        pos = 0
        for shard, a, b in spans:
            out_ids[pos : pos + b - a] = shard.ids(a, b)
            out_ctx[pos : pos + b - a] = shard.ctx(a, b)
            pos += b - a
        return out_ids, out_ctx

    def occurrence_counts(self, vocab_size: int, budget_mb: float | None = None) -> np.ndarray:
        """How many cached occurrences each vocabulary id has (int64 [vocab_size]), reading
        the ids in blocks of ``budget_mb``."""
        counts = np.zeros(vocab_size, dtype=np.int64)
        for k in range(self.n_shards):
            shard = self._shard(k)
            n = shard.n_occurrences
            step = rows_per_block(4 + 8, budget_mb, at_most=max(n, 1))
            for a in range(0, n, step):  # a block of ids at a time
                ids = shard.ids(a, min(a + step, n))
                counts += np.bincount(ids, minlength=vocab_size)[:vocab_size]
        return counts
