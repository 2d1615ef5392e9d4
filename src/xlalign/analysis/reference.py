"""The reference point of the representation-based AER: eflomal's links for the gold
sentence pairs, as the alignment stage would give them.

An aligner trained on a few dozen test sentences alone knows too little, so the test
pairs are appended to a training sample of the same language pair and the whole corpus is
aligned in one eflomal chunk (:func:`xlalign.wordalign.eflomal.align_corpus`, both
directions, symmetrised with the stage's heuristic, grow-diag-final-and by default); the
symmetrised links of the last ``len(test)`` lines are the test pairs' alignment (before
the one-to-one / identical-word filters, which only select training pairs).

A word holding a whitespace character (KFTT ja-en's FULL-WIDTH SPACE U+3000 is a word of
its own) is written for eflomal with each such character as ``<U+XXXX>``: eflomal splits
its input on whitespace, and only the identity of a word matters to it.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Sequence
from pathlib import Path

from xlalign.core.errors import InputError
from xlalign.core.formats.parallel import write_parallel
from xlalign.core.io import PathLike
from xlalign.wordalign.eflomal import AlignmentPaths, AlignOptions, align_corpus
from xlalign.wordalign.symmetrize import Link, read_pharaoh


def eflomal_word(word: str) -> str:
    """``word`` with each whitespace character written ``<U+XXXX>`` (a word eflomal
    reads as one token; distinct words stay distinct)."""
    if not any(c.isspace() for c in word):
        return word
    return "".join(f"<U+{ord(c):04X}>" if c.isspace() else c for c in word)


def _check_side(sentences: Sequence[Sequence[str]], what: str) -> None:
    for k, words in enumerate(sentences):
        if not words:
            raise InputError(f"eflomal reference: {what} sentence {k + 1} is empty")
        for w in words:
            if not w:
                raise InputError(
                    f"eflomal reference: {what} sentence {k + 1} has an empty token; "
                    "expected non-empty tokens"
                )


def eflomal_reference(
    test_src: Sequence[Sequence[str]],
    test_tgt: Sequence[Sequence[str]],
    train_src: Sequence[Sequence[str]] = (),
    train_tgt: Sequence[Sequence[str]] = (),
    *,
    options: AlignOptions | None = None,
    seed: int | None = 0,
    threads: int = 1,
    tmpdir: PathLike | None = None,
) -> list[set[Link]]:
    """Symmetrised eflomal links (one set per test pair) of the test pairs aligned
    together with the training pairs.

    ``options`` is the stage's :class:`xlalign.wordalign.eflomal.AlignOptions` (default:
    its defaults); ``seed`` replaces its seed (None: eflomal's own randomness) and the
    chunk size is raised to hold the whole corpus. Temporary files go under ``tmpdir``.
    """
    if len(test_src) != len(test_tgt) or len(train_src) != len(train_tgt):
        raise InputError(
            f"eflomal reference: {len(test_src)}/{len(test_tgt)} test and "
            f"{len(train_src)}/{len(train_tgt)} training sentences (source/target)"
        )
    if not test_src:
        raise InputError("eflomal reference: no test sentence pairs")
    for sents, what in (
        (test_src, "test source"),
        (test_tgt, "test target"),
        (train_src, "training source"),
        (train_tgt, "training target"),
    ):
        _check_side(sents, what)
    base = options if options is not None else AlignOptions()
    n = len(train_src) + len(test_src)
    opts = dataclasses.replace(base, seed=seed, chunk_size=max(n, 1))
    if tmpdir is not None:
        Path(tmpdir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="xlalign-eflomal-ref-", dir=tmpdir) as work:
        w = Path(work)
        corpus = w / "corpus.tsv"
        train = (
            ([eflomal_word(w) for w in s], [eflomal_word(w) for w in t])
            for s, t in zip(train_src, train_tgt, strict=True)
        )
        test = (
            ([eflomal_word(w) for w in s], [eflomal_word(w) for w in t])
            for s, t in zip(test_src, test_tgt, strict=True)
        )
        write_parallel(
            corpus,
            [
                *((f"train-{k}", s, t) for k, (s, t) in enumerate(train)),
                *((f"test-{k}", s, t) for k, (s, t) in enumerate(test)),
            ],
        )
        out = AlignmentPaths.in_dir(w / "out")
        out.stats.parent.mkdir()
        align_corpus(corpus, out, opts, tmpdir=w / "tmp", threads=threads, progress=False)
        links = list(read_pharaoh(out.symmetrized))
    if len(links) != n:
        raise InputError(f"eflomal reference: {len(links)} link lines for {n} pairs")
    return links[len(train_src) :]
