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

Layout of the cache directory (float16 vectors, read with ``mmap`` so memory stays bounded)::

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

Each shard covers ``shard_sentences`` consecutive lines and every file is written
atomically, so a killed build resumes at the first incomplete shard and yields the same
arrays as an uninterrupted one. The finished shards are the checkpoint: SIGTERM (Slurm
pre-emption, see :mod:`xlalign.core.interrupt`) stops the build at once, losing only the
shard being encoded, and the re-run logs where it resumes. Sentences with no
in-vocabulary word still count (empty rows), so sentence indices equal line numbers
(0-based).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm import tqdm

from xlalign.core import interrupt
from xlalign.core.device import resolve_device, resolve_dtype
from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, atomic_open, file_sha256, iter_lines, read_json, write_json
from xlalign.corpus.vocab import Vocab, tokens_of
from xlalign.encoders.contextual import (
    POOLINGS,
    WordVectorStats,
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
) -> dict[str, int]:
    """Encode one shard's sentences and write its files (offsets last); ``collectors``
    take the aggregation samples among them (lines ``first_line`` onwards)."""
    sentences = [tokens_of(line) for line in lines]
    wstats = WordVectorStats()
    counts = {"oov": 0, "no_vector": 0, "single_word": 0}
    all_ids: list[np.ndarray] = []
    all_ctx: list[np.ndarray] = []
    offsets = np.zeros(len(sentences) + 1, dtype=np.int64)
    if context == "x2static-code":
        means = sentence_token_means(
            sentences,
            tokenizer,
            model,
            max_length=max_length,
            batch_tokens=batch_tokens,
            stats=wstats,
        )
        contexts = (
            sentence_context(words, mean, vocab, counts)
            for words, mean in zip(sentences, means, strict=True)
        )
    else:
        vectors = word_vectors(
            sentences,
            tokenizer,
            model,
            pooling=pooling,
            max_length=max_length,
            batch_tokens=batch_tokens,
            stats=wstats,
        )

        def collected(i: int, words: list[str], vec: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            for c in collectors:
                c.add(first_line + i, vec)
            return context_vectors(words, vec, vocab, context, counts)

        contexts = (
            collected(i, words, vec)
            for i, (words, vec) in enumerate(zip(sentences, vectors, strict=True))
        )
    for i, (ids, ctx) in enumerate(contexts):
        all_ids.append(ids)
        all_ctx.append(ctx)
        offsets[i + 1] = offsets[i] + len(ids)
    dim = int(model.config.hidden_size)
    ids_arr = np.concatenate(all_ids) if all_ids else np.zeros(0, np.int32)
    ctx32 = np.concatenate(all_ctx) if all_ctx else np.zeros((0, dim), np.float32)
    if ctx32.size and float(np.abs(ctx32).max()) > _FP16_MAX:
        raise ConfigError(
            f"layer vectors exceed the float16 range ({float(np.abs(ctx32).max()):.3g}); "
            "the teacher cache cannot store them"
        )
    paths = _shard_paths(out, k)
    _save_npy(paths["ctx"], ctx32.astype(np.float16))
    _save_npy(paths["ids"], ids_arr.astype(np.int32))
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
) -> Path:
    """Encode every sentence of ``sentences_path`` once and cache its context vectors
    (and, for each of ``aggregation_seeds``, the aggregation baseline's sums of up to
    ``max_contexts`` sampled occurrences per word: see the module docstring).
    ``subset_collectors`` collect the same over subsets of the lines (the learning curve's
    sizes, :mod:`xlalign.learning_curve.curve`), written as their own sums files.

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
        sampled_by_line,
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
        wanted = sampled_by_line(
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


# --------------------------------------------------------------------------- read


class TeacherCache:
    """Read access to a complete teacher cache (arrays memory-mapped, loaded lazily)."""

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
        self._shards: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = [
            None
        ] * self.n_shards

    def __len__(self) -> int:
        return self.n_sentences

    def _shard(self, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        shard = self._shards[k]
        if shard is None:
            paths = _shard_paths(self.path, k)
            shard = (
                np.load(paths["ids"], mmap_mode="r"),
                np.load(paths["offsets"], mmap_mode="r"),
                np.load(paths["ctx"], mmap_mode="r"),
            )
            self._shards[k] = shard
        return shard

    def _locate(self, i: int) -> tuple[np.ndarray, np.ndarray, int, int]:
        if not 0 <= i < self.n_sentences:
            raise IndexError(f"sentence {i} outside 0..{self.n_sentences - 1} of {self.path}")
        k, local = divmod(int(i), self.shard_sentences)
        ids, offsets, ctx = self._shard(k)
        return ids, ctx, int(offsets[local]), int(offsets[local + 1])

    def sentence(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """(int32 ids, float16 context vectors) of the occurrences in sentence ``i``."""
        ids, ctx, a, b = self._locate(i)
        return np.array(ids[a:b], dtype=np.int32), np.array(ctx[a:b], dtype=np.float16)

    def batch(self, sentence_indices: np.ndarray | Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """(int64 ids, float32 contexts) of all occurrences of the sentences, in the given order."""
        spans = [self._locate(int(i)) for i in np.asarray(sentence_indices).reshape(-1)]
        total = sum(b - a for _, _, a, b in spans)
        out_ids = np.empty(total, dtype=np.int64)
        out_ctx = np.empty((total, self.dim), dtype=np.float32)
        pos = 0
        for ids, ctx, a, b in spans:
            out_ids[pos : pos + b - a] = ids[a:b]
            out_ctx[pos : pos + b - a] = ctx[a:b]
            pos += b - a
        return out_ids, out_ctx

    def occurrence_counts(self, vocab_size: int) -> np.ndarray:
        """How many cached occurrences each vocabulary id has (int64 [vocab_size])."""
        counts = np.zeros(vocab_size, dtype=np.int64)
        for k in range(self.n_shards):
            ids = self._shard(k)[0]
            counts += np.bincount(np.asarray(ids), minlength=vocab_size)[:vocab_size]
        return counts
