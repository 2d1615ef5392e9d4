"""Alignment error rate (AER), precision and recall of word alignments against gold links.

Gold alignments (Och & Ney 2003) mark each link *sure* (``S``: annotators agree) or
*possible* (``P``: ambiguous, e.g. inside idioms). Sure links are also possible: this
module enforces ``S ⊆ P`` by taking ``P := P ∪ S``. For a predicted alignment ``A``, with
every count summed over the corpus (micro-averaged, not a mean of per-sentence scores)::

    precision = |A ∩ P| / |A|
    recall    = |A ∩ S| / |S|
    AER       = 1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|)
    F1        = 2 precision recall / (precision + recall)

A ratio whose denominator is 0 is 0.0 (precision of an empty prediction, recall against a
gold without sure links, F1 when both are 0), and the AER is then 1.0.

Predicted alignments are Pharaoh files (:mod:`xlalign.wordalign.symmetrize`): one line per
sentence, 0-based ``i-j`` links (source index, target index). The predicted file fixes the
number of sentences. Gold formats (``fmt``; ``"auto"`` detects them from the first
non-blank line):

* ``"pharaoh"``: one line per sentence, 0-based unless declared 1-based (``base=1``, as
  awesome-align's gold sets ship); ``i-j`` is a sure link and ``i?j`` or ``ipj`` a
  possible one (``0-0 1?2 2p1``). It must have as many lines as the predicted file.
* ``"naacl"``: the format of the WPT 2003/2005 shared tasks (the en-fr Hansards, ro-en and
  de-en gold sets): one link per line, ``sentence_id source_pos target_pos [S|P]
  [confidence]``, all 1-based; a missing ``S``/``P`` means ``S``; the confidence is
  ignored. Sentences without a line have no gold links. Position 0 stands for NULL in
  some of these sets, so a link with source or target position 0 is skipped. A sentence
  id beyond the predicted file's line count is an error.

Auto-detection takes a line of 3 to 5 fields whose first three are integers (and whose
fourth, if any, is ``S`` or ``P``) as NAACL, anything else as Pharaoh; it never guesses
an index base. Given the sentences (``sentences=(source words, target words)``),
:func:`read_gold` and :func:`score` refuse every link outside its sentence pair with the
file, line and link (a wrong index base is then an error, never a number): a 1-indexed
file read as 0-indexed points past the last word on nearly every line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.formats.pharaoh import parse_gold_pharaoh
from xlalign.core.io import PathLike, iter_lines
from xlalign.wordalign.symmetrize import Link, read_pharaoh

FORMATS = ("auto", "pharaoh", "naacl")

Gold = dict[int, tuple[set[Link], set[Link]]]

_INT = re.compile(r"[0-9]{1,18}")


@dataclass(frozen=True)
class AERResult:
    """Corpus-level scores and the counts they are computed from."""

    aer: float
    precision: float
    recall: float
    f1: float
    predicted: int  # |A|
    sure: int  # |S|
    possible: int  # |P| (with S ⊆ P)
    sure_hit: int  # |A ∩ S|
    possible_hit: int  # |A ∩ P|
    sentences: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _GoldFile:
    links: Gold
    fmt: str
    n_lines: int
    #: 0-based sentence index -> first line of the file that mentions it
    line_of: dict[int, int] = field(default_factory=dict)


def _is_naacl(fields: Sequence[str]) -> bool:
    return (
        3 <= len(fields) <= 5
        and all(_INT.fullmatch(f) for f in fields[:3])
        and (len(fields) < 4 or fields[3].upper() in ("S", "P"))
    )


def detect_format(path: PathLike) -> str:
    """``"naacl"`` or ``"pharaoh"``, from the first non-blank line (Pharaoh if none)."""
    for line in iter_lines(path):
        fields = line.split()
        if fields:
            return "naacl" if _is_naacl(fields) else "pharaoh"
    return "pharaoh"


Lengths = Sequence[tuple[int, int]]


def _lengths(
    sentences: tuple[Sequence[Sequence[str]], Sequence[Sequence[str]]] | None,
) -> Lengths | None:
    if sentences is None:
        return None
    src, tgt = sentences
    if len(src) != len(tgt):
        raise InputError(f"gold sentences: {len(src)} source and {len(tgt)} target sentences")
    return [(len(s), len(t)) for s, t in zip(src, tgt, strict=True)]


def _read_pharaoh_gold(path: PathLike, base: int, lengths: Lengths | None) -> _GoldFile:
    gold: Gold = {}
    lineno = 0
    for lineno, line in enumerate(iter_lines(path), start=1):
        n_src = n_tgt = None
        if lengths is not None:
            if lineno > len(lengths):
                raise InputError(
                    f"{path} line {lineno}: more gold lines than the {len(lengths)} "
                    "sentence pair(s)"
                )
            n_src, n_tgt = lengths[lineno - 1]
        sure, possible = parse_gold_pharaoh(
            line, where=f"{path}: line {lineno}", base=base, n_src=n_src, n_tgt=n_tgt
        )
        gold[lineno - 1] = (sure, possible | sure)
    return _GoldFile(gold, "pharaoh", lineno, {k: k + 1 for k in gold})


def _read_naacl_gold(path: PathLike, lengths: Lengths | None) -> _GoldFile:
    gold: Gold = {}
    line_of: dict[int, int] = {}
    lineno = 0
    for lineno, line in enumerate(iter_lines(path), start=1):
        fields = line.split()
        if not fields:
            continue
        if not _is_naacl(fields):
            raise InputError(
                f"{path} line {lineno}: expected 'sentence_id source_pos target_pos [S|P] "
                f"[confidence]' with 1-based integers (NAACL format), got {line.strip()!r}"
            )
        sid, i, j = (int(f) for f in fields[:3])
        if len(fields) == 5:
            try:
                float(fields[4])
            except ValueError:
                raise InputError(
                    f"{path} line {lineno}: confidence {fields[4]!r} is not a number"
                ) from None
        if sid < 1:
            raise InputError(f"{path} line {lineno}: sentence ids are 1-based, got {sid}")
        k = sid - 1
        line_of.setdefault(k, lineno)
        sure, possible = gold.setdefault(k, (set(), set()))
        if i == 0 or j == 0:  # NULL
            continue
        link = (i - 1, j - 1)
        if lengths is not None:
            if k >= len(lengths):
                raise InputError(
                    f"{path} line {lineno}: sentence id {sid} is beyond the {len(lengths)} "
                    "sentence pair(s)"
                )
            n_src, n_tgt = lengths[k]
            if i > n_src or j > n_tgt:
                side, pos, n = ("source", i, n_src) if i > n_src else ("target", j, n_tgt)
                raise InputError(
                    f"{path} line {lineno}: link {' '.join(fields[:3])!r} is outside its "
                    f"sentence pair: {side} position {pos} (1-indexed) of a sentence of {n} "
                    "word(s)"
                )
        possible.add(link)
        if len(fields) < 4 or fields[3].upper() == "S":
            sure.add(link)
    return _GoldFile(gold, "naacl", lineno, line_of)


def _read_gold(
    path: PathLike, fmt: str, base: int | None = None, lengths: Lengths | None = None
) -> _GoldFile:
    if fmt not in FORMATS:
        raise ConfigError(f"gold alignment format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt == "naacl":
        if base not in (None, 1):
            raise ConfigError(f"{path}: NAACL gold links are 1-based; index base {base} given")
        return _read_naacl_gold(path, lengths)
    return _read_pharaoh_gold(path, 0 if base is None else base, lengths)


def read_gold(
    path: PathLike,
    fmt: str = "auto",
    *,
    base: int | None = None,
    sentences: tuple[Sequence[Sequence[str]], Sequence[Sequence[str]]] | None = None,
) -> Gold:
    """Gold links: 0-based sentence index -> ``(sure, possible)``, with ``sure ⊆ possible``.

    ``fmt`` is ``"pharaoh"``, ``"naacl"`` or ``"auto"`` (see the module docstring);
    ``base`` the index base a Pharaoh file is written in (None: 0; NAACL is always 1).
    With ``sentences`` (source and target words of every pair), every link is checked to
    lie inside its sentence pair, and a file longer than the sentences is refused. A
    Pharaoh gold file has an entry for every line; a NAACL one for every sentence id that
    occurs in it.
    """
    return _read_gold(path, fmt, base, _lengths(sentences)).links


def _ratio(num: int, den: int) -> float:
    return num / den if den else 0.0


def _check_inside(links: set[Link], n_src: int, n_tgt: int, what: str, k: int) -> None:
    bad = sorted((i, j) for i, j in links if not (0 <= i < n_src and 0 <= j < n_tgt))
    if bad:
        i, j = bad[0]
        raise InputError(
            f"{what} link {i}-{j} (0-based) of sentence {k + 1} is outside its sentence pair "
            f"of {n_src} source and {n_tgt} target word(s)"
        )


def score(
    predicted: Sequence[set[Link]],
    gold: Mapping[int, tuple[set[Link], set[Link]]],
    *,
    sentences: tuple[Sequence[Sequence[str]], Sequence[Sequence[str]]] | None = None,
) -> AERResult:
    """Corpus AER, precision, recall and F1 of ``predicted`` (one link set per sentence).

    ``gold`` maps 0-based sentence indices to ``(sure, possible)``; a sentence missing
    from it has no gold links, and ``possible`` is taken with the sure links added. A
    gold sentence index beyond ``predicted`` raises :class:`InputError`; so does, given
    the ``sentences`` (source and target words), a gold or predicted link outside its
    sentence pair.
    """
    n = len(predicted)
    lengths = _lengths(sentences)
    if lengths is not None:
        if len(lengths) != n:
            raise InputError(f"{n} predicted link set(s) for {len(lengths)} sentence pair(s)")
        for k, (n_src, n_tgt) in enumerate(lengths):
            sure, possible = gold.get(k, (set(), set()))
            _check_inside(set(sure) | set(possible), n_src, n_tgt, "gold", k)
            _check_inside(set(predicted[k]), n_src, n_tgt, "predicted", k)
    beyond = sorted(k for k in gold if not 0 <= k < n)
    if beyond:
        raise InputError(
            f"gold alignment has links for sentence {beyond[0] + 1} (1-based) but there are "
            f"only {n} predicted sentence(s)"
        )
    n_a = n_s = n_p = sure_hit = possible_hit = 0
    empty: tuple[set[Link], set[Link]] = (set(), set())
    for k, links in enumerate(predicted):
        sure, possible = gold.get(k, empty)
        possible = possible | sure
        a = set(links)
        n_a += len(a)
        n_s += len(sure)
        n_p += len(possible)
        sure_hit += len(a & sure)
        possible_hit += len(a & possible)
    precision = _ratio(possible_hit, n_a)
    recall = _ratio(sure_hit, n_s)
    aer = 1.0 - (sure_hit + possible_hit) / (n_a + n_s) if n_a + n_s else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return AERResult(
        aer=aer,
        precision=precision,
        recall=recall,
        f1=f1,
        predicted=n_a,
        sure=n_s,
        possible=n_p,
        sure_hit=sure_hit,
        possible_hit=possible_hit,
        sentences=n,
    )


def score_files(
    pred_path: PathLike, gold_path: PathLike, fmt: str = "auto", *, reverse: bool = False
) -> AERResult:
    """:func:`score` a predicted Pharaoh file against a gold file.

    ``reverse`` swaps the predicted links to ``(j, i)``, for a gold set annotated in the
    other direction. A Pharaoh gold file must have as many lines as the predicted file; a
    NAACL sentence id beyond them raises :class:`InputError` naming the gold line.
    """
    predicted = list(read_pharaoh(pred_path))
    if reverse:
        predicted = [{(j, i) for i, j in links} for links in predicted]
    g = _read_gold(gold_path, fmt)
    n = len(predicted)
    if g.fmt == "pharaoh" and g.n_lines != n:
        raise InputError(
            f"{gold_path} has {g.n_lines} sentence line(s) but {pred_path} has {n}: "
            f"a Pharaoh gold file needs one line per predicted sentence"
        )
    beyond = sorted((line, k) for k, line in g.line_of.items() if k >= n)
    if beyond:
        line, k = beyond[0]
        raise InputError(
            f"{gold_path} line {line}: sentence id {k + 1} is beyond the {n} sentence(s) "
            f"of {pred_path}"
        )
    return score(predicted, g.links)
