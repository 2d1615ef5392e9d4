"""The data side of the alignment objectives: what is pulled towards what.

Three kinds of pairs, each loaded and checked once before training, then sampled with an
explicit ``numpy.random.Generator`` (so a resumed run draws what an uninterrupted one draws):

* :class:`StaticPairs` (000 section 4.1, "X2S-MA MSE/DCCA"): word-vector pairs from aligned
  static spaces. "We sample word-vector pairs from our static embeddings, encode the word
  using the contextual model, and mean-pool the contextual representations over the subword
  tokens": each word is tokenised *alone* (``<s> ▁Haus </s>``) and :func:`mean_pool` averages
  an encoder layer's states over its subword tokens (``word_mask``).
* :class:`TokenDictionary` (001 section 3, ALIGN-MLM and DICT-MLM): pairs of *tokens* of the
  tokenizer's vocabulary that translate each other, read off bilingual dictionaries. Both
  words must be single tokens (sentencepiece: the word-initial piece ``▁word``; WordPiece:
  the word itself), which is what the tokenizer makes of the word in running text. The
  dictionary is sampled once by seed and saved with the checkpoint (the public ALIGN-MLM code
  resamples it on every start, so a resumed run aligned other pairs).
* :class:`AlignedPairs` (002 section 2; 003 section 3, Cao et al.'s adjustment): aligned
  word pairs in parallel sentences from the word-alignment stage (``pairs.tsv`` over
  ``corpus.tsv``). Each word is represented by its *first subword* in its sentence (002:
  "we use the representation of the first subword"), gathered by :func:`gather_states`;
  the word's full subword span is kept too, for 003's mean over subwords. Only one-to-one
  links, and (002) "discard any trivial alignment where the source and target words are
  identical".

Everything here runs on the CPU and returns CPU tensors; the objectives move them.
"""

from __future__ import annotations

import logging
import zlib
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.formats.parallel import iter_aligned_pairs, read_parallel
from xlalign.core.io import PathLike, read_json, write_json
from xlalign.dictionaries.split import read_pairs
from xlalign.static.vectors import npy_paths, read_npy

log = logging.getLogger(__name__)

#: Words tokenised per call of the tokenizer (bounds memory on 200k-word spaces).
_CHUNK = 4096


def _pad_id(tokenizer: Any) -> int:
    pad = getattr(tokenizer, "pad_token_id", None)
    if pad is None:
        raise ConfigError(
            f"tokenizer {getattr(tokenizer, 'name_or_path', '')!r} has no padding token; "
            "expected one to pad batches of words and sentences"
        )
    return int(pad)


def _uninformative_ids(tokenizer: Any) -> set[int]:
    """The unknown token and sentencepiece's bare word-start piece ``▁``: a word made of
    only these (``x`` -> ``▁ <unk>``) carries nothing of the word."""
    out = set()
    unk = getattr(tokenizer, "unk_token_id", None)
    if unk is not None:
        out.add(int(unk))
        bare = tokenizer.convert_tokens_to_ids("\u2581")
        if isinstance(bare, int) and bare != unk:
            out.add(bare)
    return out


def _require_fast(tokenizer: Any, what: str) -> None:
    if not getattr(tokenizer, "is_fast", False):
        raise ConfigError(
            f"{what} needs a fast (Rust) tokenizer for word positions; got "
            f"{type(tokenizer).__name__} for {getattr(tokenizer, 'name_or_path', '')!r}"
        )


def _pad(rows: Sequence[np.ndarray], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ``input_ids`` and ``attention_mask`` (LongTensor ``[B, L]``)."""
    width = max((len(r) for r in rows), default=0)
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for k, r in enumerate(rows):
        ids[k, : len(r)] = r
        mask[k, : len(r)] = 1
    return torch.from_numpy(ids), torch.from_numpy(mask)


# ------------------------------------------------------------------------------ pooling


def mean_pool(hidden: torch.Tensor, word_mask: torch.Tensor) -> torch.Tensor:
    """The mean of each row's states over its word's subword tokens (000 section 4.1).

    ``hidden`` is ``[B, L, H]`` (an encoder layer's states), ``word_mask`` ``[B, L]`` with 1
    on the word's subwords and 0 on special tokens and padding: row ``b`` of the result is
    ``sum_l m[b,l] h[b,l] / sum_l m[b,l]``. A row with an empty mask gives zeros (never a
    NaN); :class:`StaticPairs` never produces one.
    """
    if hidden.dim() != 3 or word_mask.shape != hidden.shape[:2]:
        raise ValueError(
            f"mean_pool: hidden {tuple(hidden.shape)} and word_mask {tuple(word_mask.shape)}; "
            "expected [B, L, H] and [B, L]"
        )
    m = word_mask.to(hidden.dtype)
    total = torch.einsum("blh,bl->bh", hidden, m)
    return total / m.sum(dim=1, keepdim=True).clamp_min(1.0)


def gather_states(
    hidden: torch.Tensor, index: torch.Tensor, end: torch.Tensor | None = None
) -> torch.Tensor:
    """The states of aligned words: ``[B, L, H]`` and ``[N, 2]`` (row, position) -> ``[N, H]``.

    Without ``end``, row ``n`` is ``hidden[index[n, 0], index[n, 1]]``, the word's first
    subword (002 section 2). With ``end`` (``[N]``, exclusive), it is the mean of the states
    at positions ``index[n, 1] .. end[n] - 1`` of that row: the mean over the word's
    subwords that 003 (section 3, footnote 4) uses. Differentiable in ``hidden``.
    """
    if hidden.dim() != 3 or index.dim() != 2 or index.shape[1] != 2:
        raise ValueError(
            f"gather_states: hidden {tuple(hidden.shape)} and index {tuple(index.shape)}; "
            "expected [B, L, H] and [N, 2]"
        )
    index = index.to(hidden.device)
    rows, start = index[:, 0], index[:, 1]
    if end is None:
        return hidden[rows, start]
    end = end.to(hidden.device)
    span = end - start
    if bool((span < 1).any()):
        raise ValueError("gather_states: every span needs end > start")
    # one entry per (link, subword): gather them, then sum per link
    link = torch.repeat_interleave(torch.arange(len(span), device=hidden.device), span)
    offset = torch.arange(len(link), device=hidden.device) - torch.repeat_interleave(
        torch.cumsum(span, 0) - span, span
    )
    states = hidden[rows[link], start[link] + offset]
    out = hidden.new_zeros((len(span), hidden.shape[2])).index_add(0, link, states)
    return out / span.to(hidden.dtype).unsqueeze(1)


# ------------------------------------------------------------------------ static pairs


@dataclass
class StaticBatch:
    """Words encoded alone, with their static vectors (one row per sampled pair).

    ``input_ids`` / ``attention_mask``: LongTensor ``[B, L]``, right-padded;
    ``word_mask``: FloatTensor ``[B, L]``, 1 on the word's subword tokens, 0 on special
    tokens and padding (the argument of :func:`mean_pool`); ``vectors``: FloatTensor
    ``[B, D]``, the static vectors; ``languages`` and ``words`` per row.
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    word_mask: torch.Tensor
    vectors: torch.Tensor
    languages: list[str]
    words: list[str]


#: Why a static word is not used (keys of ``stats()[lang]["dropped"]``).
STATIC_DROP_REASONS = ("empty", "unknown", "too_long")


class StaticPairs:
    """Word-vector pairs of several languages' aligned static spaces (000 section 4.1).

    Build with :meth:`load`. Words are held tokenised (special tokens included), ready to be
    padded into a :class:`StaticBatch` by :meth:`sample`.
    """

    def __init__(
        self,
        *,
        languages: list[str],
        words: list[str],
        token_ids: np.ndarray,
        content: np.ndarray,
        offsets: np.ndarray,
        vectors: np.ndarray,
        lang_offsets: np.ndarray,
        pad_id: int,
        stats: dict[str, Any],
    ) -> None:
        self.languages = languages
        self.dim = int(vectors.shape[1])
        self._words = words
        self._ids = token_ids
        self._content = content
        self._offsets = offsets
        self._vectors = vectors
        self._lang_offsets = lang_offsets
        self._pad_id = pad_id
        self._stats = stats

    def __len__(self) -> int:
        return len(self._words)

    @classmethod
    def load(
        cls,
        spaces: Mapping[str, PathLike],
        tokenizer: Any,
        *,
        max_subwords: int = 8,
        min_coverage: float = 0.5,
        max_words_per_language: int | None = None,
    ) -> StaticPairs:
        """Read each language's static space (``xlalign.static.vectors.read_npy`` stem) and
        tokenise its words alone.

        A word is dropped (and counted) when its tokenisation has no subword (``empty``),
        only unknown tokens (``unknown``; sentencepiece's bare ``▁`` beside them counts as
        unknown too), or more than ``max_subwords`` subwords
        (``too_long``). With ``max_words_per_language``, only the first words of each space
        (the most frequent ones) are considered. A language keeping less than
        ``min_coverage`` of its words, spaces of different dimensions, non-finite vectors or
        an empty space raise :class:`InputError` naming the files. Languages are held in
        sorted order, so sampling does not depend on the mapping's order.
        """
        if not spaces:
            raise ConfigError("StaticPairs.load: no static space given; expected at least one")
        if max_subwords < 1:
            raise ConfigError(f"max_subwords = {max_subwords}; expected an integer >= 1")
        if not 0.0 <= min_coverage <= 1.0:
            raise ConfigError(f"min_coverage = {min_coverage}; expected a number in [0, 1]")
        if max_words_per_language is not None and max_words_per_language < 1:
            raise ConfigError(
                f"max_words_per_language = {max_words_per_language}; expected >= 1 or None"
            )
        pad_id = _pad_id(tokenizer)
        unknown = _uninformative_ids(tokenizer)
        languages = sorted(spaces)
        loaded: dict[str, tuple[list[str], np.ndarray, Path]] = {}
        for lang in languages:
            words, mat = read_npy(spaces[lang], mmap=True)
            npy = npy_paths(spaces[lang])[0]
            if not words:
                raise InputError(f"{npy}: language {lang!r}: the static space has no word")
            if max_words_per_language is not None:
                words, mat = words[:max_words_per_language], mat[:max_words_per_language]
            loaded[lang] = (words, mat, npy)
        dims = {lang: int(m.shape[1]) for lang, (_, m, _) in loaded.items()}
        if len(set(dims.values())) > 1:
            listing = ", ".join(f"{loaded[lang][2]} ({lang}): {d}" for lang, d in dims.items())
            raise InputError(
                f"static spaces of different dimensions: {listing}; expected one dimension "
                "for all languages"
            )

        all_words: list[str] = []
        ids_parts: list[np.ndarray] = []
        content_parts: list[np.ndarray] = []
        lengths: list[int] = []
        vec_parts: list[np.ndarray] = []
        lang_offsets = [0]
        stats: dict[str, Any] = {}
        for lang in languages:
            words, mat, npy = loaded[lang]
            keep: list[int] = []
            dropped = dict.fromkeys(STATIC_DROP_REASONS, 0)
            for s in range(0, len(words), _CHUNK):
                chunk = words[s : s + _CHUNK]
                enc = tokenizer(
                    [[w] for w in chunk],
                    is_split_into_words=True,
                    add_special_tokens=True,
                    return_special_tokens_mask=True,
                    verbose=False,
                )
                for k, (ids, special) in enumerate(
                    zip(enc["input_ids"], enc["special_tokens_mask"], strict=True)
                ):
                    sub = [t for t, sp in zip(ids, special, strict=True) if not sp]
                    if not sub:
                        dropped["empty"] += 1
                    elif all(t in unknown for t in sub):
                        dropped["unknown"] += 1
                    elif len(sub) > max_subwords:
                        dropped["too_long"] += 1
                    else:
                        keep.append(s + k)
                        ids_parts.append(np.asarray(ids, dtype=np.int64))
                        content_parts.append(~np.asarray(special, dtype=bool))
                        lengths.append(len(ids))
            share = len(keep) / len(words)
            stats[lang] = {
                "space": str(npy),
                "words": len(words),
                "kept": len(keep),
                "coverage": share,
                "dropped": dropped,
            }
            if not keep or share < min_coverage:
                raise InputError(
                    f"{npy}: language {lang!r}: only {len(keep)} of {len(words)} words "
                    f"({share:.1%}) are usable with tokenizer "
                    f"{getattr(tokenizer, 'name_or_path', '')!r} (dropped: "
                    + ", ".join(f"{n} {r}" for r, n in dropped.items())
                    + f"); expected at least {min_coverage:.0%} (min_coverage): static vectors "
                    "whose vocabulary misses most of the words belong to another tokenizer "
                    "or script"
                )
            vecs = np.asarray(mat[np.asarray(keep)], dtype=np.float32)
            bad = np.flatnonzero(~np.isfinite(vecs).all(axis=1))
            if len(bad):
                row = keep[int(bad[0])]
                raise InputError(
                    f"{npy}: language {lang!r}: row {row} (word {words[row]!r}) holds a "
                    f"non-finite value ({len(bad)} such rows); expected finite vectors"
                )
            vec_parts.append(vecs)
            all_words.extend(words[i] for i in keep)
            lang_offsets.append(lang_offsets[-1] + len(keep))
            log.info(
                "static pairs %s: %d of %d words kept (%.1f%%), dropped %s",
                lang,
                len(keep),
                len(words),
                100 * share,
                dropped,
            )
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return cls(
            languages=languages,
            words=all_words,
            token_ids=np.concatenate(ids_parts),
            content=np.concatenate(content_parts),
            offsets=offsets,
            vectors=np.concatenate(vec_parts),
            lang_offsets=np.asarray(lang_offsets, dtype=np.int64),
            pad_id=pad_id,
            stats=stats,
        )

    def stats(self) -> dict[str, Any]:
        """Per language: the space file, words considered, kept, coverage, dropped by reason."""
        return {lang: dict(v, dropped=dict(v["dropped"])) for lang, v in self._stats.items()}

    def sample(
        self, rng: np.random.Generator, batch_size: int, *, by_language: bool = False
    ) -> StaticBatch:
        """``batch_size`` word-vector pairs drawn with replacement using ``rng`` only.

        By default uniformly over the union of all languages' words (000 Appendix C:
        pairs "drawn from the static space of all languages", so a language weighs as much
        as its vocabulary); with ``by_language``, a language uniformly first, then a word.
        """
        if batch_size < 1:
            raise ConfigError(f"batch_size = {batch_size}; expected an integer >= 1")
        if by_language:
            lang = rng.integers(0, len(self.languages), size=batch_size)
            lo, hi = self._lang_offsets[lang], self._lang_offsets[lang + 1]
            pick = lo + rng.integers(0, hi - lo)
        else:
            pick = rng.integers(0, len(self._words), size=batch_size)
        return self.batch(pick)

    def batch(self, rows: np.ndarray) -> StaticBatch:
        """The :class:`StaticBatch` of the given pair indices (0 .. ``len(self) - 1``)."""
        rows = np.asarray(rows, dtype=np.int64)
        starts = self._offsets[rows]
        lens = self._offsets[rows + 1] - starts
        width = int(lens.max())
        col = np.arange(width)
        valid = col[None, :] < lens[:, None]
        flat = np.minimum(starts[:, None] + col[None, :], len(self._ids) - 1)
        ids = np.where(valid, self._ids[flat], self._pad_id)
        word = valid & self._content[flat]
        lang_of = np.searchsorted(self._lang_offsets, rows, side="right") - 1
        return StaticBatch(
            input_ids=torch.from_numpy(ids.astype(np.int64)),
            attention_mask=torch.from_numpy(valid.astype(np.int64)),
            word_mask=torch.from_numpy(word.astype(np.float32)),
            vectors=torch.from_numpy(self._vectors[rows]),
            languages=[self.languages[k] for k in lang_of],
            words=[self._words[k] for k in rows],
        )


# ---------------------------------------------------------------------- token dictionary


_DICT_FORMAT = "xlalign.token_dictionary/1"
#: Why a dictionary pair is not used (keys of ``stats()["languages"][lang]["dropped"]``).
DICT_DROP_REASONS = ("hub_not_single_token", "other_not_single_token", "same_token", "duplicate")


def single_token_ids(words: Sequence[str], tokenizer: Any) -> dict[str, int | None]:
    """For each word, the id of the one token the tokenizer makes of it in running text
    (no special tokens), or None when it makes zero, several, or only the unknown token."""
    unk = getattr(tokenizer, "unk_token_id", None)
    uniq = list(dict.fromkeys(words))
    out: dict[str, int | None] = {}
    for s in range(0, len(uniq), _CHUNK):
        chunk = uniq[s : s + _CHUNK]
        enc = tokenizer(
            [[w] for w in chunk], is_split_into_words=True, add_special_tokens=False, verbose=False
        )
        for w, ids in zip(chunk, enc["input_ids"], strict=True):
            out[w] = int(ids[0]) if len(ids) == 1 and ids[0] != unk else None
    return out


@dataclass(frozen=True)
class DictionaryPair:
    """One entry of a :class:`TokenDictionary`: a hub token and its translation token."""

    hub_word: str
    other_word: str
    hub_id: int
    other_id: int
    language: str


class TokenDictionary:
    """Translation pairs of single tokens (001 section 3): ALIGN-MLM's ``B``.

    ``pairs`` is the LongTensor ``[P, 2]`` of (hub token id, other token id); ``entries``
    the same with words and languages. Build with :meth:`build`, keep with :meth:`save` /
    :meth:`load` (or :meth:`to_json` / :meth:`from_json` inside a checkpoint's state).
    """

    def __init__(
        self,
        entries: Sequence[DictionaryPair],
        *,
        hub: str,
        seed: int,
        max_pairs: int | None,
        stats: dict[str, Any],
    ) -> None:
        self.entries = list(entries)
        self.hub = hub
        self.seed = seed
        self.max_pairs = max_pairs
        self.languages = sorted(
            {e.language for e in self.entries} | set(stats.get("languages", {}))
        )
        self._stats = stats

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def pairs(self) -> torch.Tensor:
        """LongTensor ``[P, 2]``: (hub token id, other token id) per pair."""
        arr = np.array([(e.hub_id, e.other_id) for e in self.entries], dtype=np.int64)
        return torch.from_numpy(arr.reshape(-1, 2))

    @classmethod
    def build(
        cls,
        files: Mapping[str, PathLike],
        tokenizer: Any,
        *,
        max_pairs: int | None,
        seed: int,
        hub: str = "en",
    ) -> TokenDictionary:
        """Read bilingual dictionaries (``hub_word other_word`` per line, one file per
        other language) and keep the pairs whose two words are single, different tokens.

        Pairs repeated (same two ids, in any language) count once. At most ``max_pairs``
        of the kept pairs are drawn, without replacement and uniformly over all languages'
        pairs, with ``np.random.default_rng(seed)``; their file order is kept. An empty
        file gives no pair (and a warning); no pair at all, or a malformed line, raise
        :class:`InputError` naming the files (and line).
        """
        if not files:
            raise ConfigError("TokenDictionary.build: no dictionary file given")
        if hub in files:
            raise ConfigError(
                f"dictionary files name the hub language {hub!r}; expected only the other "
                "languages (each file holds hub-language words and their translations)"
            )
        if max_pairs is not None and max_pairs < 1:
            raise ConfigError(f"max_pairs = {max_pairs}; expected an integer >= 1 or None")
        languages = sorted(files)
        read = {lang: read_pairs(files[lang]) for lang in languages}
        ids = single_token_ids(
            [w for lang in languages for pair in read[lang] for w in pair], tokenizer
        )
        candidates: list[DictionaryPair] = []
        seen: set[tuple[int, int]] = set()
        per_lang: dict[str, Any] = {}
        for lang in languages:
            dropped = dict.fromkeys(DICT_DROP_REASONS, 0)
            kept = 0
            for h, o in read[lang]:
                hid, oid = ids[h], ids[o]
                if hid is None:
                    dropped["hub_not_single_token"] += 1
                elif oid is None:
                    dropped["other_not_single_token"] += 1
                elif hid == oid:
                    dropped["same_token"] += 1
                elif (hid, oid) in seen:
                    dropped["duplicate"] += 1
                else:
                    seen.add((hid, oid))
                    candidates.append(DictionaryPair(h, o, hid, oid, lang))
                    kept += 1
            per_lang[lang] = {
                "file": str(files[lang]),
                "pairs_read": len(read[lang]),
                "in_vocabulary": kept,
                "dropped": dropped,
            }
            if not read[lang]:
                log.warning("dictionary %s (%s) is empty: no pair for %s", files[lang], lang, lang)
        if not candidates:
            listing = ", ".join(f"{files[lang]} ({lang})" for lang in languages)
            raise InputError(
                f"{listing}: no dictionary pair whose two words are single, different tokens "
                f"of tokenizer {getattr(tokenizer, 'name_or_path', '')!r}; expected "
                "dictionaries in the tokenizer's languages and scripts"
            )
        chosen = candidates
        if max_pairs is not None and max_pairs < len(candidates):
            pick = np.sort(
                np.random.default_rng(seed).choice(len(candidates), size=max_pairs, replace=False)
            )
            chosen = [candidates[int(k)] for k in pick]
        count = Counter(e.language for e in chosen)
        for lang in languages:
            per_lang[lang]["sampled"] = count.get(lang, 0)
        stats = {
            "hub": hub,
            "seed": seed,
            "max_pairs": max_pairs,
            "candidates": len(candidates),
            "pairs": len(chosen),
            "languages": per_lang,
        }
        log.info(
            "token dictionary: %d of %d in-vocabulary pairs (seed %d): %s",
            len(chosen),
            len(candidates),
            seed,
            {lang: count.get(lang, 0) for lang in languages},
        )
        return cls(chosen, hub=hub, seed=seed, max_pairs=max_pairs, stats=stats)

    def stats(self) -> dict[str, Any]:
        """Pairs read, in the vocabulary, dropped by reason and sampled, per language."""
        return _plain(self._stats)

    def translations(self) -> dict[int, list[int]]:
        """Token id -> its translations' ids, both directions (hub -> others and back), for
        DICT-MLM's code-switching; lists sorted, without repeats."""
        out: dict[int, set[int]] = defaultdict(set)
        for e in self.entries:
            out[e.hub_id].add(e.other_id)
            out[e.other_id].add(e.hub_id)
        return {k: sorted(v) for k, v in sorted(out.items())}

    def verify(self, tokenizer: Any, *, where: str = "token dictionary") -> None:
        """Check that ``tokenizer`` still makes the saved token of every word (a dictionary
        saved with one tokenizer must not be used with another); InputError otherwise."""
        words = [w for e in self.entries for w in (e.hub_word, e.other_word)]
        ids = single_token_ids(words, tokenizer)
        for e in self.entries:
            for w, saved in ((e.hub_word, e.hub_id), (e.other_word, e.other_id)):
                if ids[w] != saved:
                    raise InputError(
                        f"{where}: word {w!r} ({e.language} pair) was token {saved}, the "
                        f"tokenizer {getattr(tokenizer, 'name_or_path', '')!r} makes it "
                        f"{ids[w]}; expected the tokenizer the dictionary was built with"
                    )

    def to_json(self) -> dict[str, Any]:
        """The dictionary as JSON-able data (pairs with words and languages, seed, counts)."""
        return {
            "format": _DICT_FORMAT,
            "hub": self.hub,
            "seed": self.seed,
            "max_pairs": self.max_pairs,
            "pairs": [
                {
                    "hub": e.hub_word,
                    "other": e.other_word,
                    "hub_id": e.hub_id,
                    "other_id": e.other_id,
                    "language": e.language,
                }
                for e in self.entries
            ],
            "stats": self.stats(),
        }

    @classmethod
    def from_json(cls, obj: Any, *, where: str = "token dictionary") -> TokenDictionary:
        """Inverse of :meth:`to_json`; malformed data raise InputError naming ``where``."""
        try:
            if obj["format"] != _DICT_FORMAT:
                raise InputError(f"{where}: format {obj['format']!r}; expected {_DICT_FORMAT!r}")
            entries = [
                DictionaryPair(
                    str(p["hub"]),
                    str(p["other"]),
                    int(p["hub_id"]),
                    int(p["other_id"]),
                    str(p["language"]),
                )
                for p in obj["pairs"]
            ]
            hub, seed, max_pairs, stats = obj["hub"], obj["seed"], obj["max_pairs"], obj["stats"]
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(
                f"{where}: not a saved token dictionary (missing or bad field: {exc})"
            ) from exc
        if not entries:
            raise InputError(f"{where}: the saved token dictionary holds no pair")
        return cls(entries, hub=str(hub), seed=int(seed), max_pairs=max_pairs, stats=stats)

    def save(self, path: PathLike) -> None:
        """Write :meth:`to_json` atomically (saved with the checkpoint: resuming reloads it
        instead of sampling anew)."""
        write_json(path, self.to_json())

    @classmethod
    def load(cls, path: PathLike) -> TokenDictionary:
        """Read a dictionary written by :meth:`save`."""
        return cls.from_json(read_json(path), where=str(path))


def _plain(obj: Any) -> Any:
    """A deep copy of nested dicts and lists (stats handed out must not alias state)."""
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    return obj


# ------------------------------------------------------------------------ aligned pairs


@dataclass
class AlignedBatch:
    """Parallel sentences and the links between their words.

    ``source`` / ``target``: ``{"input_ids", "attention_mask"}`` LongTensors ``[B, L]``
    (each side padded to its own length); ``source_index`` / ``target_index``: LongTensor
    ``[N, 2]``, (row, position of the word's first subword) of each link, row ``n`` of
    one aligned to row ``n`` of the other; ``source_end`` / ``target_end``: LongTensor
    ``[N]``, one past the word's last subword (for a mean over subwords); ``languages``:
    the language pair (``"en-de"``) of each sentence row.
    """

    source: dict[str, torch.Tensor]
    target: dict[str, torch.Tensor]
    source_index: torch.Tensor
    target_index: torch.Tensor
    source_end: torch.Tensor
    target_end: torch.Tensor
    languages: list[str]


#: Why a link is not used (keys of ``stats()[pair]["dropped"]``).
LINK_DROP_REASONS = ("identical", "not_one_to_one", "empty_word", "truncated", "unsampled")


def _word_spans(
    word_ids: Sequence[int | None], ids: Sequence[int], n_words: int, max_length: int
) -> tuple[list[int], list[int], np.ndarray, set[int]]:
    """Cut a tokenised sentence to ``max_length`` tokens (special tokens kept).

    Returns, per word, its first subword position and one past its last (-1 when the word
    has no subword or lost any subword to the cut: a word is used whole or not at all, as
    in :mod:`xlalign.encoders.contextual`), the kept ids, and the words lost to the cut.
    """
    n_special = sum(w is None for w in word_ids)
    budget = max_length - n_special
    if budget < 1:
        raise ConfigError(
            f"max_length = {max_length} leaves no room for a word after {n_special} special tokens"
        )
    wids = list(word_ids)
    kept_ids = list(ids)
    lost: set[int] = set()
    if len(wids) - n_special > budget:
        seen = 0
        keep = []
        for p, w in enumerate(wids):
            if w is not None:
                seen += 1
                if seen > budget:
                    lost.add(w)
                    continue
            keep.append(p)
        # a word loses all its subwords when any is cut
        wids = [None if wids[p] in lost else wids[p] for p in keep]
        kept_ids = [kept_ids[p] for p in keep]
    first = [-1] * n_words
    end = [-1] * n_words
    for p, w in enumerate(wids):
        if w is not None:
            if first[w] < 0:
                first[w] = p
            end[w] = p + 1
    ids_arr = np.asarray(kept_ids, dtype=np.int64)
    return first, end, ids_arr, lost


class AlignedPairs:
    """One-to-one word links in parallel sentences, per language pair (002 section 2).

    Build with :meth:`load`; :meth:`sample` draws :class:`AlignedBatch` es.
    """

    def __init__(
        self,
        *,
        pairs: list[str],
        source_ids: dict[str, list[np.ndarray]],
        target_ids: dict[str, list[np.ndarray]],
        links: dict[str, list[np.ndarray]],
        pad_id: int,
        stats: dict[str, Any],
    ) -> None:
        self.languages = pairs
        self._src = source_ids
        self._tgt = target_ids
        self._links = links
        self._pad_id = pad_id
        self._stats = stats

    def __len__(self) -> int:
        return sum(len(v) for v in self._links.values())

    @classmethod
    def load(
        cls,
        files: Mapping[str, tuple[PathLike, PathLike]],
        tokenizer: Any,
        *,
        max_length: int = 96,
        drop_identical: bool = True,
        max_sentences: int | None = None,
        seed: int = 0,
    ) -> AlignedPairs:
        """Read each language pair's ``(pairs.tsv, corpus.tsv)`` of the word-alignment stage.

        ``pairs.tsv`` rows (pair_id, sentence, source_pos, target_pos, source, target) link
        word ``source_pos`` of the source side of data row ``sentence`` (0-based) of
        ``corpus.tsv`` to word ``target_pos`` of its target side. Links are kept when both
        words are linked only to each other in their sentence (one-to-one), are not
        identical strings (with ``drop_identical``, 002), and both words keep all their
        subwords after the sentence is tokenised (``is_split_into_words``, special tokens)
        and cut to ``max_length`` tokens; the rest are counted by reason. With
        ``max_sentences``, that many sentences of each pair are drawn (seeded by ``seed``
        and the pair's name). A missing or empty file, a link outside its sentence, a
        sentence index outside ``corpus.tsv`` or a word that differs from the corpus's
        raise :class:`InputError` naming the file and line.
        """
        if not files:
            raise ConfigError("AlignedPairs.load: no language pair given")
        if max_sentences is not None and max_sentences < 1:
            raise ConfigError(f"max_sentences = {max_sentences}; expected >= 1 or None")
        _require_fast(tokenizer, "AlignedPairs")
        pad_id = _pad_id(tokenizer)
        names = sorted(files)
        src_all: dict[str, list[np.ndarray]] = {}
        tgt_all: dict[str, list[np.ndarray]] = {}
        links_all: dict[str, list[np.ndarray]] = {}
        stats: dict[str, Any] = {}
        for name in names:
            pairs_path, corpus_path = (Path(p) for p in files[name])
            corpus = [(s, t) for _, s, t in read_parallel(corpus_path)]
            if not corpus:
                raise InputError(f"{corpus_path} ({name}): no sentence pair; expected rows")
            by_sentence, counts = _read_links(pairs_path, corpus_path, corpus, name, drop_identical)
            sentences = sorted(by_sentence)
            if max_sentences is not None and len(sentences) > max_sentences:
                rng = np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])
                pick = np.sort(rng.choice(len(sentences), size=max_sentences, replace=False))
                chosen = [sentences[int(k)] for k in pick]
                counts["unsampled"] = sum(len(by_sentence[s]) for s in sentences) - sum(
                    len(by_sentence[s]) for s in chosen
                )
                sentences = chosen
            src_ids, tgt_ids, links, trunc = _tokenise_links(
                tokenizer, corpus, sentences, by_sentence, max_length, counts
            )
            if not links:
                raise InputError(
                    f"{pairs_path} ({name}): no link left after dropping "
                    + ", ".join(f"{n} {r}" for r, n in counts.items() if n)
                    + "; expected one-to-one links between different words"
                )
            src_all[name], tgt_all[name], links_all[name] = src_ids, tgt_ids, links
            n_links = int(sum(len(x) for x in links))
            stats[name] = {
                "pairs_file": str(pairs_path),
                "corpus_file": str(corpus_path),
                "corpus_sentences": len(corpus),
                "links_read": counts.pop("read"),
                "links": n_links,
                "sentences": len(links),
                "truncated_sentences": trunc,
                "dropped": {r: counts[r] for r in LINK_DROP_REASONS},
            }
            log.info(
                "aligned pairs %s: %d links in %d sentences (of %d rows read), dropped %s",
                name,
                n_links,
                len(links),
                stats[name]["links_read"],
                stats[name]["dropped"],
            )
        return cls(
            pairs=names,
            source_ids=src_all,
            target_ids=tgt_all,
            links=links_all,
            pad_id=pad_id,
            stats=stats,
        )

    def stats(self) -> dict[str, Any]:
        """Per language pair: files, rows read, links and sentences kept, drops by reason."""
        return _plain(self._stats)

    def sample(self, rng: np.random.Generator, batch_size: int) -> AlignedBatch:
        """``batch_size`` sentence pairs drawn with ``rng`` only: the language pairs share
        the rows as evenly as possible (``batch_size // n`` each, the remainder to pairs drawn
        without replacement), so every batch holds every target language once it has as
        many rows as there are pairs (002 trains multilingually); sentences uniformly with
        replacement within their pair. Rows are grouped by language pair, in sorted order."""
        if batch_size < 1:
            raise ConfigError(f"batch_size = {batch_size}; expected an integer >= 1")
        n = len(self.languages)
        per = np.full(n, batch_size // n, dtype=np.int64)
        per[rng.choice(n, size=batch_size % n, replace=False)] += 1
        chosen: list[tuple[str, int]] = []
        for name, k in zip(self.languages, per, strict=True):
            if k:
                rows = rng.integers(0, len(self._links[name]), size=int(k))
                chosen.extend((name, int(r)) for r in rows)
        return self.batch(chosen)

    def batch(self, rows: Sequence[tuple[str, int]]) -> AlignedBatch:
        """The :class:`AlignedBatch` of the given (language pair, sentence number) rows."""
        src_ids, src_mask = _pad([self._src[name][k] for name, k in rows], self._pad_id)
        tgt_ids, tgt_mask = _pad([self._tgt[name][k] for name, k in rows], self._pad_id)
        parts = []
        for r, (name, k) in enumerate(rows):
            lk = self._links[name][k]
            parts.append(np.column_stack([np.full(len(lk), r, dtype=np.int64), lk]))
        lk = torch.from_numpy(np.concatenate(parts))
        return AlignedBatch(
            source={"input_ids": src_ids, "attention_mask": src_mask},
            target={"input_ids": tgt_ids, "attention_mask": tgt_mask},
            source_index=lk[:, [0, 1]].contiguous(),
            target_index=lk[:, [0, 3]].contiguous(),
            source_end=lk[:, 2].contiguous(),
            target_end=lk[:, 4].contiguous(),
            languages=[name for name, _ in rows],
        )


def _read_links(
    pairs_path: Path,
    corpus_path: Path,
    corpus: list[tuple[list[str], list[str]]],
    name: str,
    drop_identical: bool,
) -> tuple[dict[int, list[tuple[int, int]]], dict[str, int]]:
    """Validated links of one ``pairs.tsv``, grouped by sentence, one-to-one only."""
    counts = dict.fromkeys(("read", *LINK_DROP_REASONS), 0)
    raw: dict[int, list[tuple[int, int]]] = defaultdict(list)
    where = f"{pairs_path} ({name})"
    for lineno, (_, k, a, b, s, t) in iter_aligned_pairs(pairs_path):
        counts["read"] += 1
        if not 0 <= k < len(corpus):
            raise InputError(
                f"{where}: line {lineno}: sentence {k} is outside {corpus_path}, which has "
                f"{len(corpus)} data rows (0-based)"
            )
        src, tgt = corpus[k]
        if not (0 <= a < len(src) and 0 <= b < len(tgt)):
            raise InputError(
                f"{where}: line {lineno}: link {a}-{b} points outside sentence {k} of "
                f"{corpus_path} ({len(src)} source and {len(tgt)} target words)"
            )
        if src[a] != s or tgt[b] != t:
            raise InputError(
                f"{where}: line {lineno}: words {s!r}-{t!r}, but sentence {k} of "
                f"{corpus_path} has {src[a]!r}-{tgt[b]!r} there; expected the corpus the "
                "links were made on"
            )
        if drop_identical and s == t:
            counts["identical"] += 1
            continue
        raw[k].append((a, b))
    if counts["read"] == 0:
        raise InputError(f"{where}: no link rows; expected a non-empty word-pairs table")
    out: dict[int, list[tuple[int, int]]] = {}
    for k, links in raw.items():
        ns = Counter(a for a, _ in links)
        nt = Counter(b for _, b in links)
        one = [(a, b) for a, b in dict.fromkeys(links) if ns[a] == 1 and nt[b] == 1]
        counts["not_one_to_one"] += len(links) - len(one)
        if one:
            out[k] = one
    return out, counts


def _tokenise_links(
    tokenizer: Any,
    corpus: list[tuple[list[str], list[str]]],
    sentences: list[int],
    by_sentence: dict[int, list[tuple[int, int]]],
    max_length: int,
    counts: dict[str, int],
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray], int]:
    """Token ids of both sides and ``[n, 4]`` (source first, source end, target first,
    target end) per kept sentence; returns the number of sentences cut."""
    src_out: list[np.ndarray] = []
    tgt_out: list[np.ndarray] = []
    link_out: list[np.ndarray] = []
    truncated = 0
    step = 1024
    for s0 in range(0, len(sentences), step):
        chunk = sentences[s0 : s0 + step]
        sides = []
        for side in (0, 1):
            enc = tokenizer(
                [corpus[k][side] for k in chunk],
                is_split_into_words=True,
                add_special_tokens=True,
                truncation=False,
                verbose=False,
            )
            sides.append(enc)
        for row, k in enumerate(chunk):
            spans = []
            for side, enc in enumerate(sides):
                spans.append(
                    _word_spans(
                        enc.word_ids(row), enc["input_ids"][row], len(corpus[k][side]), max_length
                    )
                )
            (sf, se, sids, slost), (tf, te, tids, tlost) = spans
            truncated += bool(slost or tlost)
            kept = []
            for a, b in by_sentence[k]:
                if sf[a] >= 0 and tf[b] >= 0:
                    kept.append((sf[a], se[a], tf[b], te[b]))
                elif a in slost or b in tlost:
                    counts["truncated"] += 1
                else:
                    counts["empty_word"] += 1
            if kept:
                src_out.append(sids)
                tgt_out.append(tids)
                link_out.append(np.asarray(kept, dtype=np.int64))
    return src_out, tgt_out, link_out, truncated
