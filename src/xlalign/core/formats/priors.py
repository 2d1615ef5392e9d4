"""eflomal priors files (``eflomal-makepriors`` writes them), checked before eflomal reads them.

One tab-separated record per line, as ``eflomal.read_priors`` accepts them::

    LEX   source-word  target-word  alpha
    HMMF  jump         alpha
    HMMR  jump         alpha
    FERF  source-word  fertility    alpha
    FERR  target-word  fertility    alpha

eflomal itself reports a malformed line with an ``IndexError`` or ``ValueError`` (and a
line number off by one) from inside its aligner, after the corpus was prepared; a file that
is not UTF-8 stops it with a ``UnicodeDecodeError``. :func:`check_priors` reads the file
once, the same way, and refuses the first bad line with an :class:`InputError` naming the
file and line, so that a bad ``--priors`` is refused before any work.

:class:`PriorCounts` holds the five kinds of records in memory; :func:`read_priors` and
:func:`write_priors` read and write them. xlalign writes the counts it computes
(:mod:`xlalign.wordalign.priors`) exactly (integers as integers; ``eflomal-makepriors``
prints them with ``%g``, six significant digits).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from xlalign.core.errors import InputError
from xlalign.core.formats.text import iter_numbered_lines
from xlalign.core.io import PathLike, atomic_open

#: Record kind -> its number of fields (the kind included) and which of them are integers.
KINDS: dict[str, tuple[int, tuple[int, ...]]] = {
    "LEX": (4, ()),
    "HMMF": (3, (1,)),
    "HMMR": (3, (1,)),
    "FERF": (4, (2,)),
    "FERR": (4, (2,)),
}


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def check_priors(path: PathLike) -> int:
    """The number of prior records in ``path``; :class:`InputError` naming the file and line
    for a line eflomal would not read (an unknown kind, another number of fields, an alpha
    that is not a finite number, a jump or fertility that is not an integer, an empty word).
    """
    for _ in iter_numbered_lines(path, what="an eflomal priors file (UTF-8)"):
        pass  # UTF-8 and bounded lines, refused with the line
    n = 0
    # Then the records as eflomal reads them: a text file (universal newlines, so a lone
    # carriage return ends a line too), each line less its "\n" split on tabs.
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            n += _check_record(path, lineno, line.rstrip("\n").split("\t"))
    return n


def _check_record(path: PathLike, lineno: int, fields: list[str]) -> int:
    """1 for a record eflomal reads; :class:`InputError` naming the line otherwise."""
    line = "\t".join(fields)
    kind = fields[0]
    if kind not in KINDS:
        raise InputError(
            f"{path}: line {lineno}: {line[:80]!r} is not an eflomal prior; expected "
            "tab-separated 'LEX src trg alpha', 'HMMF jump alpha', 'HMMR jump alpha', "
            "'FERF src fertility alpha' or 'FERR trg fertility alpha'"
        )
    width, ints = KINDS[kind]
    if len(fields) != width:
        raise InputError(
            f"{path}: line {lineno}: a {kind} prior has {width} tab-separated fields, "
            f"got {len(fields)}"
        )
    try:
        alpha = float(fields[-1])
    except ValueError:
        alpha = math.nan
    if not math.isfinite(alpha):
        raise InputError(f"{path}: line {lineno}: alpha {fields[-1]!r} is not a finite number")
    for i in ints:
        if not _is_int(fields[i]):
            raise InputError(
                f"{path}: line {lineno}: field {i + 1} of a {kind} prior ({fields[i]!r}) "
                "is not an integer"
            )
    if kind in ("LEX", "FERF", "FERR") and not all(fields[1 : width - 1 - len(ints)]):
        raise InputError(f"{path}: line {lineno}: a {kind} prior with an empty word")
    return 1


@dataclass
class PriorCounts:
    """The records of a priors file: pseudo-counts (alphas) keyed as eflomal keys them.

    ``lex[(source_word, target_word)]``, ``hmmf[jump]``, ``hmmr[jump]``,
    ``ferf[(source_word, fertility)]``, ``ferr[(target_word, fertility)]``.
    """

    lex: Counter[tuple[str, str]] = field(default_factory=Counter)
    hmmf: Counter[int] = field(default_factory=Counter)
    hmmr: Counter[int] = field(default_factory=Counter)
    ferf: Counter[tuple[str, int]] = field(default_factory=Counter)
    ferr: Counter[tuple[str, int]] = field(default_factory=Counter)

    def add(self, other: PriorCounts) -> None:
        """Add ``other``'s alphas to these, record by record (a record in both: the sum)."""
        self.lex.update(other.lex)
        self.hmmf.update(other.hmmf)
        self.hmmr.update(other.hmmr)
        self.ferf.update(other.ferf)
        self.ferr.update(other.ferr)

    def __len__(self) -> int:
        return len(self.lex) + len(self.hmmf) + len(self.hmmr) + len(self.ferf) + len(self.ferr)


def _alpha_text(alpha: float) -> str:
    """An alpha as eflomal reads it back exactly: an integer as one, else Python's repr."""
    if float(alpha).is_integer():
        return str(int(alpha))
    return repr(float(alpha))


def read_priors(path: PathLike) -> PriorCounts:
    """The records of a priors file, checked first (:func:`check_priors`). A record that
    occurs twice counts with the sum of its alphas (eflomal itself sums repeated LEX / FERF
    / FERR records and keeps the last of repeated HMMF / HMMR ones)."""
    check_priors(path)
    out = PriorCounts()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            f = line.rstrip("\n").split("\t")
            alpha = float(f[-1])
            if f[0] == "LEX":
                out.lex[(f[1], f[2])] += alpha
            elif f[0] == "HMMF":
                out.hmmf[int(f[1])] += alpha
            elif f[0] == "HMMR":
                out.hmmr[int(f[1])] += alpha
            elif f[0] == "FERF":
                out.ferf[(f[1], int(f[2]))] += alpha
            else:
                out.ferr[(f[1], int(f[2]))] += alpha
    return out


def write_priors(path: PathLike, priors: PriorCounts) -> int:
    """Write ``priors`` (atomically), records sorted within each kind, in eflomal-makepriors'
    order of kinds (LEX, FERF, FERR, HMMF, HMMR). Returns the number of records."""
    n = 0
    with atomic_open(path) as fh:
        for (src, trg), alpha in sorted(priors.lex.items()):
            fh.write(f"LEX\t{src}\t{trg}\t{_alpha_text(alpha)}\n")
        for kind, table in (("FERF", priors.ferf), ("FERR", priors.ferr)):
            for (word, fert), alpha in sorted(table.items()):
                fh.write(f"{kind}\t{word}\t{fert}\t{_alpha_text(alpha)}\n")
        for kind, jumps in (("HMMF", priors.hmmf), ("HMMR", priors.hmmr)):
            for jump, alpha in sorted(jumps.items()):
                fh.write(f"{kind}\t{jump}\t{_alpha_text(alpha)}\n")
        n = len(priors)
    return n
