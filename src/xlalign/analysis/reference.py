"""The reference point of the representation-based AER: eflomal's links for the gold
sentence pairs, as the alignment stage would give them.

An aligner trained on a few dozen test sentences alone knows too little, so the test
pairs are aligned together with a bitext of the same language pair, with the alignment
stage's machinery and settings (:func:`xlalign.wordalign.eflomal.align_corpus`: its
``chunk_size``, its shared priors when ``wordalign.shared_priors`` is on and the corpus
has more than one chunk, both directions, symmetrised with the stage's heuristic,
grow-diag-final-and by default). The test pairs are written first, so they are aligned
in the first chunk, a full one, beside ``chunk_size`` minus their number of bitext
pairs, and that chunk alone is aligned (the later ones would not change its links); the
links of the first ``len(test)`` lines are the test pairs' alignment (before
the one-to-one / identical-word filters, which only select training pairs). The bitext
is streamed into the corpus file and the links are read back streamed, so memory is one
chunk's, as in the alignment stage, however long the bitext is; time grows with it.

A word holding a whitespace character (KFTT ja-en's FULL-WIDTH SPACE U+3000 is a word of
its own) is written for eflomal with each such character as ``<U+XXXX>``: eflomal splits
its input on whitespace, and only the identity of a word matters to it.
"""

from __future__ import annotations

import dataclasses
import itertools
import tempfile
from collections.abc import Iterable, Iterator, Sequence
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


def _check_words(words: Sequence[str], what: str, k: int) -> None:
    if not words:
        raise InputError(f"eflomal reference: {what} sentence {k + 1} is empty")
    for w in words:
        if not w:
            raise InputError(
                f"eflomal reference: {what} sentence {k + 1} has an empty token; "
                "expected non-empty tokens"
            )


def _checked_pairs(
    pairs: Iterable[tuple[Sequence[str], Sequence[str]]], what: str, prefix: str
) -> Iterator[tuple[str, list[str], list[str]]]:
    """``(id, source words, target words)`` rows for eflomal, each pair checked as it
    is written (the bitext is streamed)."""
    for k, (s, t) in enumerate(pairs):
        _check_words(s, f"{what} source", k)
        _check_words(t, f"{what} target", k)
        yield f"{prefix}-{k}", [eflomal_word(w) for w in s], [eflomal_word(w) for w in t]


def eflomal_reference(
    test_src: Sequence[Sequence[str]],
    test_tgt: Sequence[Sequence[str]],
    train_src: Sequence[Sequence[str]] = (),
    train_tgt: Sequence[Sequence[str]] = (),
    *,
    bitext: Iterable[tuple[Sequence[str], Sequence[str]]] | None = None,
    options: AlignOptions | None = None,
    seed: int | None = 0,
    threads: int = 1,
    tmpdir: PathLike | None = None,
) -> list[set[Link]]:
    """Symmetrised eflomal links (one set per test pair) of the test pairs aligned
    together with the training pairs (``train_src``/``train_tgt``, or ``bitext``: an
    iterable of (source words, target words), streamed; not both).

    ``options`` is the stage's :class:`xlalign.wordalign.eflomal.AlignOptions` (default:
    its defaults), used as the stage uses it (its chunk size and shared priors: module
    docstring); ``seed`` replaces its seed (None: eflomal's own randomness). Temporary
    files go under ``tmpdir``.
    """
    if len(test_src) != len(test_tgt) or len(train_src) != len(train_tgt):
        raise InputError(
            f"eflomal reference: {len(test_src)}/{len(test_tgt)} test and "
            f"{len(train_src)}/{len(train_tgt)} training sentences (source/target)"
        )
    if bitext is not None and train_src:
        raise InputError("eflomal reference: training pairs given twice (lists and bitext)")
    if not test_src:
        raise InputError("eflomal reference: no test sentence pairs")
    test_rows = list(_checked_pairs(zip(test_src, test_tgt, strict=True), "test", "test"))
    if bitext is None:
        bitext = zip(train_src, train_tgt, strict=True)
    base = options if options is not None else AlignOptions()
    opts = dataclasses.replace(base, seed=seed)
    n_test = len(test_rows)
    if tmpdir is not None:
        Path(tmpdir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="xlalign-eflomal-ref-", dir=tmpdir) as work:
        w = Path(work)
        corpus = w / "corpus.tsv"
        rows = itertools.chain(test_rows, _checked_pairs(bitext, "training", "train"))
        write_parallel(corpus, rows)
        out = AlignmentPaths.in_dir(w / "out")
        out.stats.parent.mkdir()
        # the first chunk only: it holds the test pairs, and is aligned as in a run over
        # the whole bitext (the shared priors learnt on its sample, the chunk's own seed)
        align_corpus(
            corpus, out, opts, tmpdir=w / "tmp", threads=threads, progress=False, first_chunks=1
        )
        read = read_pharaoh(out.symmetrized)  # the test pairs' lines, then stop
        try:
            links = list(itertools.islice(read, n_test))
        finally:
            read.close()
    if len(links) != n_test:
        raise InputError(f"eflomal reference: {len(links)} link lines for {n_test} test pairs")
    return links
