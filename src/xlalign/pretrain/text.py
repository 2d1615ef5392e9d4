"""Text data for the language-modelling objectives: MLM, DICT-MLM and TLM.

- :class:`TextCorpus`: the MLM corpus (000 Appendix C: "samples from a text dataset ...
  concatenated Wikipedia data of all languages"). Paragraphs are tokenised without special
  tokens and packed into fixed-length sequences **per language**: a sequence never holds text
  of two languages. Hugging Face's ``run_mlm.py`` (``group_texts``) concatenates the whole
  dataset before cutting it into blocks, so its blocks straddle language boundaries wherever
  two languages meet in the concatenation; the issue asks for the per-language packing.
- :class:`ParallelCorpus`: TLM (001 section 3, XLM's translation language modelling,
  Conneau and Lample 2019): MLM over a sentence and its translation concatenated with the
  tokenizer's own pair template, masked by the same collator.
- :class:`MaskingCollator`: BERT's masking (Devlin et al. 2019, the Hugging Face default the
  paper keeps): 15 % of the non-special tokens are predicted, of them 80 % replaced by the
  mask token, 10 % by a random token, 10 % left as they are. Every random choice comes from
  the ``torch.Generator`` passed in.
- :class:`DictMLMCollator`: DICT-MLM (001 section 3, Chaudhary et al. 2020): a token selected
  for prediction is, with probability 0.5, code-switched to one of its dictionary
  translations instead of being corrupted; its label stays the original token.
- :func:`validation_batches`: the held-out text masked once, per sequence, with a generator
  derived from (seed, sequence index), so every checkpoint is judged on the same masked
  tokens whatever the batch size (000 Appendix C: checkpoints selected by validation MLM loss).
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from xlalign.core.errors import InputError
from xlalign.core.formats.parallel import read_parallel
from xlalign.core.io import iter_lines

log = logging.getLogger(__name__)

#: label of a position the loss ignores (``torch.nn.CrossEntropyLoss``'s ignore_index)
IGNORE_INDEX = -100
#: paragraphs (or sentence pairs) handed to the tokenizer per call
_TOKENIZE_CHUNK = 2048


# ------------------------------------------------------------------------------ reading


def read_paragraphs(path: Path, language: str, *, max_paragraphs: int | None = None) -> list[str]:
    """The paragraphs of the sample stage's ``<lang>.txt``: one per non-empty line (the empty
    lines between documents are skipped), stripped, in file order, at most ``max_paragraphs``.

    A missing file or one without a paragraph is an :class:`InputError` naming the file and
    the language.
    """
    if max_paragraphs is not None and max_paragraphs < 1:
        raise ValueError(f"max_paragraphs must be positive or None, got {max_paragraphs}")
    if not Path(path).is_file():
        raise InputError(f"{path} (language {language!r}): file not found")
    out: list[str] = []
    for line in iter_lines(path, language=language):
        text = line.strip()
        if text:
            out.append(text)
            if max_paragraphs is not None and len(out) >= max_paragraphs:
                break
    if not out:
        raise InputError(
            f"{path} (language {language!r}): no paragraph; expected one paragraph per line"
        )
    return out


# ------------------------------------------------------------------------------ tokenizer


def special_template(tokenizer: Any) -> tuple[list[int], list[int]]:
    """The special tokens the tokenizer puts before and after one sequence: ``([cls], [sep])``
    for BERT, ``([<s>], [</s>])`` for XLM-R.

    Read off the tokenizer's own output on a probe text (transformers 5 dropped
    ``build_inputs_with_special_tokens``), and checked against ``num_special_tokens_to_add``.
    """
    for probe in ("a", "the", "x y"):
        bare = tokenizer(probe, add_special_tokens=False)["input_ids"]
        full = tokenizer(probe)["input_ids"]
        if not bare:
            continue
        for start in range(len(full) - len(bare) + 1):
            if full[start : start + len(bare)] == bare:
                prefix, suffix = list(full[:start]), list(full[start + len(bare) :])
                if len(prefix) + len(suffix) == tokenizer.num_special_tokens_to_add(pair=False):
                    return prefix, suffix
    raise InputError(
        f"tokenizer {getattr(tokenizer, 'name_or_path', '?')!r}: cannot tell which special "
        f"tokens it adds around a sequence"
    )


def _tokenize(tokenizer: Any, texts: Sequence[str]) -> list[np.ndarray]:
    """Token ids (int32) of each text, without special tokens, in chunks."""
    out: list[np.ndarray] = []
    for i in range(0, len(texts), _TOKENIZE_CHUNK):
        ids = tokenizer(
            list(texts[i : i + _TOKENIZE_CHUNK]),
            add_special_tokens=False,
            return_attention_mask=False,
            verbose=False,
        )
        out.extend(np.asarray(row, dtype=np.int32) for row in ids["input_ids"])
    return out


def _language_rng(seed: int, name: str) -> np.random.Generator:
    """A generator for one language (or language pair): depends on the seed and the name
    only, so adding a language never changes another's held-out set."""
    return np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(name.encode())]))


def _hold_out(
    texts: Sequence[str], k: int, rng: np.random.Generator
) -> tuple[list[int], list[int], int]:
    """Split the indices of ``texts`` into (train, held-out): ``k`` paragraphs of distinct text
    chosen by ``rng`` are held out, and every copy of a held-out text is removed from train
    (the samples repeat paragraphs, up to a third of them in the embedded run: a copy left in
    train would leak validation text). Returns (train, held-out, copies dropped)."""
    if k == 0:
        return list(range(len(texts))), [], 0
    first: dict[str, int] = {}
    for i, t in enumerate(texts):
        first.setdefault(t, i)
    distinct = np.fromiter(first.values(), dtype=np.int64, count=len(first))
    chosen = np.sort(rng.choice(distinct, size=k, replace=False)).tolist()
    held = {texts[i] for i in chosen}
    train = [i for i, t in enumerate(texts) if t not in held]
    dropped = len(texts) - len(train) - k
    return train, chosen, dropped


# ------------------------------------------------------------------------------ corpora


class TextCorpus:
    """Per-language token-id sequences for MLM.

    Each language's paragraphs are concatenated (without special tokens) into one token
    stream; sequence ``i`` of a language is ``prefix + stream[i*block:(i+1)*block] + suffix``
    with ``block = max_length - len(prefix) - len(suffix)``: consecutive paragraphs of the same
    language, never of two. The last, shorter block of a language is kept (``group_texts``
    drops it), so a small language loses no text. Sequences are cut on the fly from the
    stream (int32), so a corpus of 100k paragraphs x 40 languages fits in memory.
    """

    def __init__(
        self,
        streams: Mapping[str, np.ndarray],
        *,
        block: int,
        prefix: Sequence[int],
        suffix: Sequence[int],
        paragraph_indices: Mapping[str, Sequence[int]] | None = None,
        duplicates_dropped: Mapping[str, int] | None = None,
    ) -> None:
        if block < 1:
            raise ValueError(f"block must be positive, got {block}")
        self.block = block
        self.prefix = [int(t) for t in prefix]
        self.suffix = [int(t) for t in suffix]
        self.streams: dict[str, np.ndarray] = {}
        for lang, stream in streams.items():
            arr = np.asarray(stream, dtype=np.int32).ravel()
            if arr.size == 0:
                raise InputError(f"language {lang!r}: no text tokens for MLM")
            self.streams[lang] = arr
        #: the languages, in the order given
        self.languages: list[str] = list(self.streams)
        #: indices (into the texts given to :meth:`build`) of the paragraphs this corpus holds
        self.paragraph_indices: dict[str, np.ndarray] = {
            lang: np.asarray((paragraph_indices or {}).get(lang, []), dtype=np.int64)
            for lang in self.languages
        }
        self._dropped = dict(duplicates_dropped or {})
        self._counts = np.array(
            [-(-len(self.streams[lang]) // block) for lang in self.languages], dtype=np.int64
        )

    @classmethod
    def build(
        cls,
        texts: Mapping[str, Sequence[str]],
        tokenizer: Any,
        *,
        max_length: int,
        validation_paragraphs: int,
        seed: int,
        validation_max_sequences: int | None = None,
    ) -> tuple[TextCorpus, TextCorpus]:
        """(train, validation) corpora from each language's paragraphs.

        ``validation_paragraphs`` paragraphs of distinct text per language are held out
        (chosen by ``seed`` and the language's name); no copy of them is in train. Both
        corpora are packed the same way. With ``validation_paragraphs=0`` the validation
        corpus is empty (no languages). ``validation_max_sequences`` keeps only the first
        that many validation sequences of each language (the rest of the held-out text is
        in neither corpus): a paragraph may be a sentence or a whole Bible chapter, and
        without a cap the languages with the longest paragraphs make up most of the
        validation loss and of its cost.
        """
        prefix, suffix = special_template(tokenizer)
        block = max_length - len(prefix) - len(suffix)
        if block < 1:
            raise ValueError(
                f"max_length {max_length} leaves no room for text beside the "
                f"{len(prefix) + len(suffix)} special tokens"
            )
        if validation_paragraphs < 0:
            raise ValueError(f"validation_paragraphs must be >= 0, got {validation_paragraphs}")
        if validation_max_sequences is not None and validation_max_sequences < 1:
            raise ValueError(
                f"validation_max_sequences must be >= 1 (or None), got {validation_max_sequences}"
            )
        train: dict[str, np.ndarray] = {}
        valid: dict[str, np.ndarray] = {}
        train_idx: dict[str, list[int]] = {}
        valid_idx: dict[str, list[int]] = {}
        dropped: dict[str, int] = {}
        for lang, paragraphs in texts.items():
            paragraphs = list(paragraphs)
            distinct = len(set(paragraphs))
            if not paragraphs:
                raise InputError(f"language {lang!r}: no paragraph for MLM")
            if validation_paragraphs >= distinct:
                raise InputError(
                    f"language {lang!r}: {distinct} distinct paragraphs; cannot hold out "
                    f"{validation_paragraphs} for validation and keep any for training"
                )
            tr, va, dropped[lang] = _hold_out(
                paragraphs, validation_paragraphs, _language_rng(seed, lang)
            )
            tokens = _tokenize(tokenizer, paragraphs)
            train[lang] = np.concatenate([tokens[i] for i in tr])
            train_idx[lang] = tr
            if va:
                held_out = np.concatenate([tokens[i] for i in va])
                if validation_max_sequences is not None:
                    held_out = held_out[: validation_max_sequences * block]
                valid[lang] = held_out
                valid_idx[lang] = va
        common = {"block": block, "prefix": prefix, "suffix": suffix}
        return (
            cls(train, paragraph_indices=train_idx, duplicates_dropped=dropped, **common),
            cls(valid, paragraph_indices=valid_idx, **common),
        )

    # -- access

    def num_sequences(self, language: str) -> int:
        """N_i, the number of sequences of ``language``."""
        return int(self._counts[self.languages.index(language)])

    def __len__(self) -> int:
        return int(self._counts.sum())

    def sequence(self, language: str, index: int) -> list[int]:
        """Sequence ``index`` of ``language``, special tokens included."""
        stream = self.streams[language]
        if not 0 <= index < -(-len(stream) // self.block):
            raise IndexError(f"language {language!r}: no sequence {index}")
        body = stream[index * self.block : (index + 1) * self.block].tolist()
        return self.prefix + body + self.suffix

    @property
    def sequences(self) -> dict[str, list[list[int]]]:
        """Every sequence of every language (built on each access: for small corpora)."""
        return {
            lang: [self.sequence(lang, i) for i in range(self.num_sequences(lang))]
            for lang in self.languages
        }

    def stats(self) -> dict[str, dict[str, int]]:
        """Per language: paragraphs, sequences, text tokens (special tokens not counted) and
        paragraphs dropped from train as copies of a held-out one."""
        return {
            lang: {
                "paragraphs": len(self.paragraph_indices[lang]),
                "sequences": int(n),
                "tokens": len(self.streams[lang]),
                "duplicates_dropped": int(self._dropped.get(lang, 0)),
            }
            for lang, n in zip(self.languages, self._counts, strict=True)
        }

    # -- batches

    def probabilities(self, alpha: float = 1.0) -> dict[str, float]:
        """p_i = N_i^alpha / sum_j N_j^alpha over languages (N_i = sequences of language i).

        alpha = 1 samples sequences uniformly from the concatenated corpus (the paper's
        "concatenated Wikipedia data"); alpha < 1 (XLM-R's 0.3, 004's rebalancing) raises
        the share of small languages.
        """
        if not self.languages:
            raise InputError("the text corpus is empty: no language to sample from")
        weights = self._counts.astype(np.float64) ** alpha
        p = weights / weights.sum()
        return dict(zip(self.languages, p.tolist(), strict=True))

    def sample(
        self, rng: np.random.Generator, batch_size: int, *, alpha: float = 1.0
    ) -> list[list[int]]:
        """``batch_size`` sequences: each one's language drawn with p_i proportional to
        N_i^alpha, then a sequence uniformly within the language (with replacement)."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        p = np.array(list(self.probabilities(alpha).values()))
        langs = rng.choice(len(self.languages), size=batch_size, p=p)
        index = rng.integers(0, self._counts[langs])
        return [
            self.sequence(self.languages[lang], int(i))
            for lang, i in zip(langs, index, strict=True)
        ]

    def iter_sequences(self) -> Iterator[list[int]]:
        """Every sequence, language by language, in order."""
        for lang in self.languages:
            for i in range(self.num_sequences(lang)):
                yield self.sequence(lang, i)

    def iter_batches(self, batch_size: int) -> Iterator[list[list[int]]]:
        """Deterministic in-order batches (the last may be shorter), for validation."""
        yield from _batched(self.iter_sequences(), batch_size)


class ParallelCorpus:
    """TLM examples: each sentence pair of the word-alignment stage's bitext as one input,
    ``tokenizer(source, target)`` with the tokenizer's pair template (XLM-R:
    ``<s> A </s></s> B </s>``), truncated longest-first to ``max_length``.

    XLM (Conneau and Lample 2019) also feeds language embeddings and resets positions at the
    target; the encoders here have neither, so the pair is one sequence of one segment type
    (``token_type_ids`` are not returned; XLM-R has a single type).
    """

    def __init__(
        self,
        examples: Mapping[str, Sequence[Sequence[int]]],
        *,
        row_indices: Mapping[str, Sequence[int]] | None = None,
    ) -> None:
        self.tokens: dict[str, np.ndarray] = {}
        self.offsets: dict[str, np.ndarray] = {}
        for pair, rows in examples.items():
            if len(rows) == 0:
                raise InputError(f"language pair {pair!r}: no sentence pair for TLM")
            lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
            self.offsets[pair] = np.concatenate([[0], np.cumsum(lengths)])
            self.tokens[pair] = np.concatenate([np.asarray(r, dtype=np.int32) for r in rows])
        #: the language pairs ("en-de", ...), in the order given
        self.pairs: list[str] = list(self.tokens)
        #: indices (0-based data rows of each corpus.tsv) of the examples this corpus holds
        self.row_indices: dict[str, np.ndarray] = {
            pair: np.asarray((row_indices or {}).get(pair, []), dtype=np.int64)
            for pair in self.pairs
        }

    @classmethod
    def from_tsv(
        cls,
        files: Mapping[str, Path],
        tokenizer: Any,
        *,
        max_length: int,
        seed: int,
        validation_pairs: int = 0,
    ) -> tuple[ParallelCorpus, ParallelCorpus]:
        """(train, validation) TLM corpora from ``{"en-de": .../parallel/en-de/corpus.tsv}``.

        The files' words are space-tokenised; they are joined back with spaces (the subword
        tokenizer splits them again). ``validation_pairs`` rows per language pair are held
        out, chosen by ``seed`` and the pair's name. A file without a sentence pair is an
        :class:`InputError` naming the file.
        """
        specials = tokenizer.num_special_tokens_to_add(pair=True)
        if max_length < specials + 2:
            raise ValueError(
                f"max_length {max_length} leaves no room for one token per side beside the "
                f"{specials} special tokens of a pair"
            )
        if validation_pairs < 0:
            raise ValueError(f"validation_pairs must be >= 0, got {validation_pairs}")
        train: dict[str, list[np.ndarray]] = {}
        valid: dict[str, list[np.ndarray]] = {}
        train_rows: dict[str, list[int]] = {}
        valid_rows: dict[str, list[int]] = {}
        for pair, path in files.items():
            rows = [(" ".join(src), " ".join(tgt)) for _id, src, tgt in read_parallel(path)]
            if not rows:
                raise InputError(f"{path} (language pair {pair!r}): no sentence pair for TLM")
            if validation_pairs >= len(rows):
                raise InputError(
                    f"{path} (language pair {pair!r}): {len(rows)} sentence pairs; cannot hold "
                    f"out {validation_pairs} for validation and keep any for training"
                )
            held = np.zeros(len(rows), dtype=bool)
            if validation_pairs:
                pick = _language_rng(seed, pair).choice(len(rows), validation_pairs, replace=False)
                held[pick] = True
            encoded: list[np.ndarray] = []
            for i in range(0, len(rows), _TOKENIZE_CHUNK):
                chunk = rows[i : i + _TOKENIZE_CHUNK]
                ids = tokenizer(
                    [s for s, _ in chunk],
                    [t for _, t in chunk],
                    truncation="longest_first",
                    max_length=max_length,
                    return_attention_mask=False,
                    return_token_type_ids=False,
                    verbose=False,
                )["input_ids"]
                encoded.extend(np.asarray(r, dtype=np.int32) for r in ids)
            train_rows[pair] = np.flatnonzero(~held).tolist()
            train[pair] = [encoded[i] for i in train_rows[pair]]
            if validation_pairs:
                valid_rows[pair] = np.flatnonzero(held).tolist()
                valid[pair] = [encoded[i] for i in valid_rows[pair]]
        return cls(train, row_indices=train_rows), cls(valid, row_indices=valid_rows)

    def num_examples(self, pair: str) -> int:
        """The number of examples of language pair ``pair``."""
        return len(self.offsets[pair]) - 1

    def __len__(self) -> int:
        return sum(self.num_examples(p) for p in self.pairs)

    def example(self, pair: str, index: int) -> list[int]:
        """Example ``index`` of ``pair``: the pair's token ids, special tokens included."""
        off = self.offsets[pair]
        if not 0 <= index < len(off) - 1:
            raise IndexError(f"language pair {pair!r}: no example {index}")
        return self.tokens[pair][off[index] : off[index + 1]].tolist()

    @property
    def examples(self) -> dict[str, list[list[int]]]:
        """Every example of every pair (built on each access: for small corpora)."""
        return {p: [self.example(p, i) for i in range(self.num_examples(p))] for p in self.pairs}

    def stats(self) -> dict[str, dict[str, int]]:
        """Per language pair: examples and tokens (special tokens included)."""
        return {
            p: {"examples": self.num_examples(p), "tokens": len(self.tokens[p])} for p in self.pairs
        }

    def sample(self, rng: np.random.Generator, batch_size: int) -> list[list[int]]:
        """``batch_size`` examples: a language pair uniformly, then an example uniformly
        within it (with replacement)."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        if not self.pairs:
            raise InputError("the parallel corpus is empty: no language pair to sample from")
        counts = np.array([self.num_examples(p) for p in self.pairs], dtype=np.int64)
        which = rng.integers(0, len(self.pairs), size=batch_size)
        index = rng.integers(0, counts[which])
        return [self.example(self.pairs[w], int(i)) for w, i in zip(which, index, strict=True)]

    def iter_sequences(self) -> Iterator[list[int]]:
        """Every example, pair by pair, in order."""
        for p in self.pairs:
            for i in range(self.num_examples(p)):
                yield self.example(p, i)

    def iter_batches(self, batch_size: int) -> Iterator[list[list[int]]]:
        """Deterministic in-order batches (the last may be shorter), for validation."""
        yield from _batched(self.iter_sequences(), batch_size)


def _batched(items: Iterator[list[int]], batch_size: int) -> Iterator[list[list[int]]]:
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    batch: list[list[int]] = []
    for item in items:
        batch.append(item)
        if len(batch) == batch_size:
            yield batch
            batch = []
    if batch:
        yield batch


# ------------------------------------------------------------------------------ collators


def pad_sequences(
    sequences: Sequence[Sequence[int]],
    pad_id: int,
    *,
    pad_to_multiple_of: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Right-pad ``sequences`` to the longest (rounded up to ``pad_to_multiple_of``):
    ``(input_ids, attention_mask)``, both int64 of shape (batch, length)."""
    if not sequences:
        raise ValueError("cannot pad an empty batch")
    width = max(len(s) for s in sequences)
    if pad_to_multiple_of:
        width = -(-width // pad_to_multiple_of) * pad_to_multiple_of
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        ids[row, : len(seq)] = torch.as_tensor(list(seq), dtype=torch.long)
        mask[row, : len(seq)] = 1
    return ids, mask


class MaskingCollator:
    """BERT's masked-LM corruption (Devlin et al. 2019; Hugging Face's
    ``DataCollatorForLanguageModeling``, whose defaults the paper keeps).

    Each non-special, non-pad token is selected for prediction with ``probability``; a
    selected token becomes the mask token with probability ``mask_ratio``, a random token with
    ``random_ratio``, and stays itself otherwise. Labels are the original ids at selected
    positions and ``-100`` elsewhere. Random tokens are drawn uniformly from the tokenizer's
    ``len(tokenizer)`` pieces minus its special tokens: never from the embedding matrix's
    rows (e5 has 250,037 rows for 250,002 pieces: the extra rows are no token).

    At least one token per batch is predicted: when the Bernoulli draws select none (a short
    batch; the loss would be 0/0 = NaN), one maskable position is chosen uniformly with the
    same generator and selected. A batch without any maskable token is an error.
    """

    def __init__(
        self,
        tokenizer: Any,
        *,
        probability: float = 0.15,
        mask_ratio: float = 0.8,
        random_ratio: float = 0.1,
        pad_to_multiple_of: int | None = None,
    ) -> None:
        if not 0.0 < probability <= 1.0:
            raise ValueError(f"masking probability must be in (0, 1], got {probability}")
        if mask_ratio < 0 or random_ratio < 0 or mask_ratio + random_ratio > 1.0:
            raise ValueError(
                f"mask_ratio {mask_ratio} and random_ratio {random_ratio} must be >= 0 with a "
                f"sum <= 1"
            )
        if pad_to_multiple_of is not None and pad_to_multiple_of < 1:
            raise ValueError(f"pad_to_multiple_of must be positive, got {pad_to_multiple_of}")
        name = getattr(tokenizer, "name_or_path", "?")
        if tokenizer.mask_token_id is None or tokenizer.pad_token_id is None:
            raise InputError(f"tokenizer {name!r}: masked LM needs a mask and a pad token")
        self.probability = probability
        self.mask_ratio = mask_ratio
        self.random_ratio = random_ratio
        self.pad_to_multiple_of = pad_to_multiple_of
        self.mask_id = int(tokenizer.mask_token_id)
        self.pad_id = int(tokenizer.pad_token_id)
        self.vocab_size = len(tokenizer)
        special = set(tokenizer.all_special_ids) | {self.mask_id, self.pad_id}
        self.special_ids = torch.tensor(sorted(special), dtype=torch.long)
        keep = torch.ones(self.vocab_size, dtype=torch.bool)
        keep[[i for i in special if 0 <= i < self.vocab_size]] = False
        #: the ids a "random" replacement is drawn from
        self.replacement_ids = torch.nonzero(keep).squeeze(1)

    def __call__(self, sequences: list[list[int]], generator: torch.Generator) -> dict[str, Tensor]:
        """Pad ``sequences`` and mask them: ``input_ids``, ``attention_mask``, ``labels``."""
        input_ids, attention_mask = pad_sequences(
            sequences, self.pad_id, pad_to_multiple_of=self.pad_to_multiple_of
        )
        inputs, labels = self.mask(input_ids, attention_mask, generator)
        return {"input_ids": inputs, "attention_mask": attention_mask, "labels": labels}

    def mask(
        self, input_ids: Tensor, attention_mask: Tensor, generator: torch.Generator
    ) -> tuple[Tensor, Tensor]:
        """(corrupted input ids, labels) of a padded batch; ``input_ids`` is not modified."""
        selected = self._select(input_ids, attention_mask, generator)
        labels = torch.where(selected, input_ids, torch.full_like(input_ids, IGNORE_INDEX))
        inputs = input_ids.clone()
        self._corrupt(inputs, selected, generator)
        return inputs, labels

    def _select(
        self, input_ids: Tensor, attention_mask: Tensor, generator: torch.Generator
    ) -> Tensor:
        """The positions to predict: Bernoulli(``probability``) over maskable positions, and
        one uniformly chosen maskable position when the draws select none."""
        maskable = attention_mask.bool() & ~torch.isin(input_ids, self.special_ids)
        probs = maskable.to(torch.float32) * self.probability
        selected = torch.bernoulli(probs, generator=generator).bool() & maskable
        if not selected.any():
            candidates = torch.nonzero(maskable.reshape(-1)).squeeze(1)
            if candidates.numel() == 0:
                raise InputError("masked LM batch holds no maskable token (only special/pad)")
            pick = candidates[torch.randint(candidates.numel(), (1,), generator=generator)]
            selected.view(-1)[pick] = True
        return selected

    def _corrupt(self, inputs: Tensor, positions: Tensor, generator: torch.Generator) -> None:
        """80/10/10 in place at ``positions``: one uniform draw per position decides mask
        (u < mask_ratio), random token (next random_ratio) or unchanged (the rest)."""
        u = torch.rand(inputs.shape, generator=generator)
        to_mask = positions & (u < self.mask_ratio)
        to_random = positions & (u >= self.mask_ratio) & (u < self.mask_ratio + self.random_ratio)
        inputs[to_mask] = self.mask_id
        n = int(to_random.sum())
        if n:
            pick = torch.randint(self.replacement_ids.numel(), (n,), generator=generator)
            inputs[to_random] = self.replacement_ids[pick]


class DictMLMCollator(MaskingCollator):
    """DICT-MLM (001 section 3 and Appendix G.4, after Chaudhary et al. 2020): MLM over
    code-switched text.

    Of the tokens selected for prediction, each is chosen for switching with probability
    ``switch_probability`` (0.5, "DICT-MLM-50"); a chosen token with a dictionary translation
    is replaced by one of its translations (uniformly, by the generator) and keeps its
    original id as label. Every other selected token gets the 80/10/10 corruption, including
    a token chosen for switching that has no translation.

    The public implementation (princeton-nlp/align-mlm, ``DataCollatorForLanguageModelingDictMLM``)
    leaves such a token unchanged in the input yet predicts it: the label is visible in the
    input. ``reproduce_label_leak=True`` does exactly that, for reproducing 001's numbers only.

    ``translations`` maps a token id to its translations' token ids (any mapping). Ids
    outside the tokenizer's vocabulary are an error; special tokens and a token's translation
    to itself are dropped (a switch to itself would show the label, the same leak).
    ``last_counts`` holds, for the last batch: ``selected``, ``switched`` and
    ``no_translation`` (chosen for switching without a translation).
    """

    def __init__(
        self,
        tokenizer: Any,
        translations: Mapping[int, Sequence[int]],
        *,
        switch_probability: float = 0.5,
        reproduce_label_leak: bool = False,
        **masking: Any,
    ) -> None:
        super().__init__(tokenizer, **masking)
        if not 0.0 <= switch_probability <= 1.0:
            raise ValueError(f"switch_probability must be in [0, 1], got {switch_probability}")
        self.switch_probability = switch_probability
        self.reproduce_label_leak = reproduce_label_leak
        special = set(self.special_ids.tolist())
        table: dict[int, list[int]] = {}
        for key, values in translations.items():
            ids = [int(key), *(int(v) for v in values)]
            bad = [i for i in ids if not 0 <= i < self.vocab_size]
            if bad:
                raise InputError(
                    f"DICT-MLM translations: token id {bad[0]} is outside the tokenizer's "
                    f"{self.vocab_size} pieces"
                )
            if int(key) in special:
                continue
            kept = [v for v in dict.fromkeys(ids[1:]) if v != int(key) and v not in special]
            if kept:
                table[int(key)] = kept
        if not table:
            raise InputError(
                "DICT-MLM translations: no token pair inside the tokenizer's vocabulary "
                "(after dropping special tokens and translations of a token to itself)"
            )
        keys = sorted(table)
        #: number of translations of each token id (0: none), over the tokenizer's ids
        self.translation_counts = torch.zeros(self.vocab_size, dtype=torch.long)
        self.translation_offsets = torch.zeros(self.vocab_size, dtype=torch.long)
        flat: list[int] = []
        for k in keys:
            self.translation_offsets[k] = len(flat)
            self.translation_counts[k] = len(table[k])
            flat.extend(table[k])
        self.translation_ids = torch.tensor(flat, dtype=torch.long)
        #: the number of token ids with at least one translation
        self.translated_tokens = len(keys)
        self.last_counts: dict[str, int] = {"selected": 0, "switched": 0, "no_translation": 0}

    def mask(
        self, input_ids: Tensor, attention_mask: Tensor, generator: torch.Generator
    ) -> tuple[Tensor, Tensor]:
        """(code-switched and corrupted input ids, labels); counts in ``last_counts``."""
        selected = self._select(input_ids, attention_mask, generator)
        labels = torch.where(selected, input_ids, torch.full_like(input_ids, IGNORE_INDEX))
        inputs = input_ids.clone()
        chosen = selected & (
            torch.rand(inputs.shape, generator=generator) < self.switch_probability
        )
        in_vocab = input_ids < self.vocab_size
        counts = torch.zeros_like(input_ids)
        counts[in_vocab] = self.translation_counts[input_ids[in_vocab]]
        switch = chosen & (counts > 0)
        n = int(switch.sum())
        if n:
            tokens = input_ids[switch]
            k = self.translation_counts[tokens]
            j = (torch.rand(n, generator=generator, dtype=torch.float64) * k).long()
            j = torch.minimum(j, k - 1)
            inputs[switch] = self.translation_ids[self.translation_offsets[tokens] + j]
        corrupt = selected & ~(chosen if self.reproduce_label_leak else switch)
        self._corrupt(inputs, corrupt, generator)
        self.last_counts = {
            "selected": int(selected.sum()),
            "switched": n,
            "no_translation": int((chosen & ~switch).sum()),
        }
        return inputs, labels


# ------------------------------------------------------------------------------ validation


def validation_batches(
    corpus: TextCorpus | ParallelCorpus,
    collator: MaskingCollator,
    *,
    batch_size: int,
    seed: int,
) -> list[dict[str, Tensor]]:
    """The held-out text masked once: sequence ``i`` (in :meth:`~TextCorpus.iter_sequences`
    order) is masked alone with a ``torch.Generator`` seeded from (``seed``, ``i``), then the
    masked sequences are padded into batches of ``batch_size``.

    The masking of a sequence therefore depends on neither the batch size nor the other
    sequences, and every evaluation of every checkpoint sees the same masked tokens (Hugging
    Face's evaluation re-masks on each pass, and its masks change with the batch size:
    transformers#39241). The caller computes the token-weighted mean loss: the sum of
    per-token losses over all batches divided by the number of labels != -100.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    inputs: list[Tensor] = []
    labels: list[Tensor] = []
    for i, seq in enumerate(corpus.iter_sequences()):
        state = np.random.SeedSequence([seed, i]).generate_state(2, dtype=np.uint32)
        generator = torch.Generator().manual_seed(int(state[0]) << 32 | int(state[1]))
        ids = torch.as_tensor([seq], dtype=torch.long)
        masked, label = collator.mask(ids, torch.ones_like(ids), generator)
        inputs.append(masked[0])
        labels.append(label[0])
    batches: list[dict[str, Tensor]] = []
    for start in range(0, len(inputs), batch_size):
        rows = inputs[start : start + batch_size]
        ids, attention = pad_sequences(
            [r.tolist() for r in rows],
            collator.pad_id,
            pad_to_multiple_of=collator.pad_to_multiple_of,
        )
        lab = torch.full_like(ids, IGNORE_INDEX)
        for row, label in enumerate(labels[start : start + batch_size]):
            lab[row, : len(label)] = label
        batches.append({"input_ids": ids, "attention_mask": attention, "labels": lab})
    return batches
