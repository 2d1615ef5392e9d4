"""Word vocabulary of a segmented corpus: the words that get a static embedding.

A segmented corpus has one sentence per line, tokens separated by single spaces (see
:mod:`xlalign.corpus.segment`, which guarantees that no token contains whitespace). The
vocabulary keeps the tokens seen at least ``min_count`` times (lowercased when asked, as
X2Static does), at most ``max_size`` of them; ids follow the count, highest first, ties
broken by the word itself, so the same corpus always yields the same ids.

On disk a vocabulary is a UTF-8 TSV: a header line ``# xlalign-vocab lowercase=<true|false>``
then one ``word<TAB>count`` line per word, in id order.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, atomic_open, iter_lines

_HEADER = "# xlalign-vocab"


def tokens_of(line: str) -> list[str]:
    """The tokens of one segmented line (split on single spaces, empty pieces dropped)."""
    return [t for t in line.split(" ") if t]


@dataclass
class Vocab:
    """Words in id order with their corpus counts; ``index`` maps word -> id."""

    words: list[str]
    counts: np.ndarray  # int64, same length as words
    lowercase: bool
    index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.counts = np.asarray(self.counts, dtype=np.int64)
        if self.counts.ndim != 1 or len(self.counts) != len(self.words):
            raise ValueError(
                f"Vocab: {len(self.words)} words but counts of shape {self.counts.shape}"
            )
        self.index = {w: i for i, w in enumerate(self.words)}
        if len(self.index) != len(self.words):
            dup = next(w for w, n in Counter(self.words).items() if n > 1)
            raise ValueError(f"Vocab: duplicate word {dup!r}")

    def __len__(self) -> int:
        return len(self.words)

    def normalise(self, token: str) -> str:
        """The form under which ``token`` is stored (lowercased when the vocabulary is)."""
        return token.lower() if self.lowercase else token

    def lookup(self, token: str) -> int | None:
        """The id of ``token`` (after lowercasing when the vocabulary is lowercased)."""
        return self.index.get(self.normalise(token))

    def fingerprint(self) -> str:
        """SHA-256 (hex) of the words, counts and lowercasing: equal iff the vocabularies are.

        Teacher caches record it (``vocab_sha256``) and X2Static checkpoints match on it.
        """
        h = hashlib.sha256(f"lowercase={self.lowercase}\n".encode())
        for w, c in zip(self.words, self.counts.tolist(), strict=True):
            h.update(f"{w}\t{c}\n".encode())
        return h.hexdigest()

    @property
    def total(self) -> int:
        """Sum of the counts of the kept words."""
        return int(self.counts.sum())


def vocab_from_counts(
    counter: Counter[str] | dict[str, int],
    *,
    min_count: int,
    max_size: int | None,
    lowercase: bool,
) -> Vocab:
    """Keep words with count >= ``min_count``, sort by (count desc, word), cap at ``max_size``."""
    kept = [(w, c) for w, c in counter.items() if c >= min_count]
    kept.sort(key=lambda wc: (-wc[1], wc[0]))
    if max_size is not None:
        kept = kept[:max_size]
    return Vocab(
        words=[w for w, _ in kept],
        counts=np.array([c for _, c in kept], dtype=np.int64),
        lowercase=lowercase,
    )


def build_vocab(
    path: PathLike,
    *,
    min_count: int,
    max_size: int | None,
    lowercase: bool = True,
    language: str | None = None,
) -> Vocab:
    """Count the tokens of a segmented corpus (streamed) and build its vocabulary.

    Raises :class:`InputError` when no token reaches ``min_count``.
    """
    if min_count < 1:
        raise ValueError(f"min_count must be >= 1, got {min_count}")
    if max_size is not None and max_size < 1:
        raise ValueError(f"max_size must be >= 1 or None, got {max_size}")
    counter: Counter[str] = Counter()
    for line in iter_lines(path, language=language):
        toks = tokens_of(line)
        if lowercase:
            toks = [t.lower() for t in toks]
        counter.update(toks)
    vocab = vocab_from_counts(counter, min_count=min_count, max_size=max_size, lowercase=lowercase)
    if not len(vocab):
        top = max(counter.values()) if counter else 0
        raise InputError(
            f"{path} (language {language!r}): empty vocabulary: no token occurs at least "
            f"min_count={min_count} times ({len(counter)} distinct tokens, highest count "
            f"{top}); expected a larger corpus or a lower min_count"
        )
    return vocab


def write_vocab(vocab: Vocab, path: PathLike) -> None:
    """Write ``vocab`` as a TSV (header, then ``word<TAB>count`` in id order), atomically."""
    for w in vocab.words:
        if not w or any(ch in w for ch in "\t\n\r"):
            raise ValueError(f"{path}: cannot write word {w!r} (empty or contains tab/newline)")
    with atomic_open(path) as fh:
        fh.write(f"{_HEADER} lowercase={'true' if vocab.lowercase else 'false'}\n")
        for w, c in zip(vocab.words, vocab.counts.tolist(), strict=True):
            fh.write(f"{w}\t{c}\n")


def read_vocab(path: PathLike) -> Vocab:
    """Read a vocabulary written by :func:`write_vocab`, checking its format line by line."""
    lines = iter_lines(path)
    header = next(lines, None)
    if header is None or not header.startswith(_HEADER + " lowercase="):
        raise InputError(
            f"{path}: line 1: expected header '{_HEADER} lowercase=<true|false>', got {header!r}"
        )
    flag = header.split("=", 1)[1].strip().lower()
    if flag not in ("true", "false"):
        raise InputError(f"{path}: line 1: lowercase must be true or false, got {flag!r}")
    words: list[str] = []
    counts: list[int] = []
    seen: set[str] = set()
    for lineno, line in enumerate(lines, start=2):
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0]:
            raise InputError(f"{path}: line {lineno}: expected 'word<TAB>count', got {line!r}")
        word, count = parts
        try:
            n = int(count)
        except ValueError:
            n = -1
        if n < 0:
            raise InputError(
                f"{path}: line {lineno}: count must be a non-negative integer, got {count!r}"
            )
        if word in seen:
            raise InputError(f"{path}: line {lineno}: duplicate word {word!r}")
        seen.add(word)
        words.append(word)
        counts.append(n)
    return Vocab(words=words, counts=np.array(counts, dtype=np.int64), lowercase=flag == "true")
