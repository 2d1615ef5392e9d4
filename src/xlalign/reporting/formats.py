"""Table output formats shared by every table of the project: the best value per column
in bold, and LaTeX (booktabs) beside the Markdown and CSV.

A table here is what the writers already hold: a frame of display strings (index = row
names) and a frame of the numbers behind them (same index and columns, NaN where a cell
is missing). The best cell of a column is found on the numbers, never on the strings.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from xlalign.core.errors import InputError

#: Columns where lower is better (XTREME's cross-lingual transfer gap).
LOWER_IS_BETTER = frozenset({"gap"})
#: Columns never bolded (counts and p-values are not scores), by lower-cased name.
NOT_SCORES = frozenset({"n", "seeds", "p", "p_adj", "queries", "pairs"})


def finite_number(value: Any, at: str) -> float | None:
    """A finite float read from a results file, or None for None/NaN (a missing result);
    anything else (a string, a bool, an infinity) is an :class:`InputError` naming ``at``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"{at}: expected a number or None, got {value!r}")
    value = float(value)
    if math.isnan(value):
        return None
    if math.isinf(value):
        raise InputError(f"{at}: expected a finite number, got {value}")
    return value


def required_key(
    rec: Mapping[str, Any], key: str, kind: type | tuple[type, ...], at: str, what: str
) -> Any:
    """``rec[key]`` of a results file; missing, or not of ``kind`` (a bool is no number),
    it is an :class:`InputError` naming ``at`` (the file, and the path inside it), the key
    and ``what`` was expected."""
    if key not in rec:
        raise InputError(f"{at}: missing key {key!r} (expected {what})")
    value = rec[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InputError(f"{at}: key {key!r}: expected {what}, got {value!r:.80}")
    return value


_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_LATEX_SYMBOLS = {
    "±": r"$\pm$",
    "†": r"\textsuperscript{\dag}",
    "‡": r"\textsuperscript{\ddag}",
    "–": "--",
    "→": r"$\rightarrow$",
    "←": r"$\leftarrow$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "Δ": r"$\Delta$",
    "α": r"$\alpha$",
    "×": r"$\times$",
    "·": r"$\cdot$",
    "▲": r"$\blacktriangle$",
    "▼": r"$\blacktriangledown$",
}


def best_cells(
    values: pd.DataFrame, *, lower_is_better: Sequence[str] = (), skip: Sequence[str] = ()
) -> set[tuple[object, object]]:
    """The (row, column) of each column's best number (every row tied for it).

    Higher is better unless the column is in ``lower_is_better`` (or named ``gap``);
    columns in ``skip``, columns whose name says they are counts or p-values, and
    columns with fewer than two numbers or all of them equal (nothing to single out) get
    no best cell.
    """
    lower = set(lower_is_better) | LOWER_IS_BETTER
    best: set[tuple[object, object]] = set()
    for col in values.columns:
        if col in skip or str(col).lower() in NOT_SCORES:
            continue
        nums = pd.to_numeric(values[col], errors="coerce").astype(float)
        present = nums.dropna()
        if len(present) < 2 or present.max() - present.min() <= 1e-12:
            continue  # nothing to compare, or every row tied
        target = present.min() if str(col) in lower else present.max()
        for row, v in present.items():
            if math.isclose(v, target, rel_tol=0.0, abs_tol=1e-12):
                best.add((row, col))
    return best


def bold_markdown(frame: pd.DataFrame, best: set[tuple[object, object]]) -> pd.DataFrame:
    """``frame`` with the cells in ``best`` wrapped in ``**``."""
    out = frame.copy().astype(object)
    for row, col in best:
        if row in out.index and col in out.columns:
            out.loc[row, col] = f"**{out.loc[row, col]}**"
    return out


def latex_escape(text: object) -> str:
    """Text safe inside a LaTeX tabular: specials escaped, the tables' symbols mapped."""
    s = "" if text is None else str(text)
    if s in ("nan", "None"):
        s = "–"
    out = []
    for ch in s:
        if ch in _LATEX_ESCAPES:
            out.append(_LATEX_ESCAPES[ch])
        elif ch in _LATEX_SYMBOLS:
            out.append(_LATEX_SYMBOLS[ch])
        else:
            out.append(ch)
    return "".join(out)


def _strip_markdown_bold(text: str) -> tuple[str, bool]:
    if len(text) > 4 and text.startswith("**") and text.endswith("**"):
        return text[2:-2], True
    return text, False


def to_latex(
    frame: pd.DataFrame,
    caption: str = "",
    footnotes: Sequence[str] = (),
    *,
    best: set[tuple[object, object]] | None = None,
    label: str | None = None,
) -> str:
    """A booktabs ``table``: caption, ``\\toprule``/``\\midrule``/``\\bottomrule``, the
    first column left-aligned and the rest right-aligned, ``best`` cells in ``\\textbf``,
    the footnotes in small type under the tabular. Needs ``\\usepackage{booktabs}``."""
    best = best or set()
    header = [latex_escape(frame.index.name or ""), *(latex_escape(c) for c in frame.columns)]
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        r"\begin{tabular}{l" + "r" * len(frame.columns) + "}",
        r"\toprule",
        " & ".join(header) + r" \\",
        r"\midrule",
    ]
    for row, cells in zip(frame.index, frame.itertuples(index=False, name=None), strict=True):
        out = [latex_escape(row)]
        for col, cell in zip(frame.columns, cells, strict=True):
            text, was_bold = _strip_markdown_bold(str(cell))
            text = latex_escape(text)
            out.append(rf"\textbf{{{text}}}" if was_bold or (row, col) in best else text)
        lines.append(" & ".join(out) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if footnotes:
        notes = r" \\ ".join(latex_escape(_plain(n)) for n in footnotes)
        lines.append(r"\par\smallskip\parbox{\linewidth}{\footnotesize " + notes + "}")
    if caption:
        lines.append(rf"\caption{{{latex_escape(_plain(caption))}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def _plain(text: str) -> str:
    """Markdown emphasis and code marks removed (captions and notes use a little)."""
    return re.sub(r"(\*\*|`)", "", text)


_LEADING_NUMBER = re.compile(r"^\s*\**\s*(-?\d+(?:\.\d+)?)")


def leading_numbers(frame: pd.DataFrame) -> pd.DataFrame:
    """The number each display cell starts with (``"71.97 ± 0.30 (n=3)"`` -> 71.97), NaN
    for a missing cell: the means the writers formatted, for :func:`best_cells`."""

    def parse(cell: object) -> float:
        m = _LEADING_NUMBER.match(str(cell))
        return float(m.group(1)) if m else math.nan

    return frame.apply(lambda col: col.map(parse)).astype(float)
