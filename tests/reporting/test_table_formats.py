"""Best cells, bold and LaTeX output of the tables."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from xlalign.reporting.formats import (
    best_cells,
    bold_markdown,
    latex_escape,
    leading_numbers,
    to_latex,
)


def _values() -> pd.DataFrame:
    return pd.DataFrame(
        {"POS": [70.0, 72.5, math.nan], "gap": [5.0, 3.0, 4.0], "n": [3, 9, 1]},
        index=pd.Index(["a", "b", "c"], name="Model"),
    )


def test_best_cells_higher_better_lower_for_gap_and_no_counts() -> None:
    best = best_cells(_values())
    assert best == {("b", "POS"), ("b", "gap")}


def test_best_cells_ties_and_single_value_columns() -> None:
    v = pd.DataFrame({"x": [1.0, 1.0, 0.5], "y": [math.nan, 2.0, math.nan]}, index=list("abc"))
    assert best_cells(v) == {("a", "x"), ("b", "x")}  # y: one number, nothing to compare


def test_bold_markdown_wraps_only_best() -> None:
    frame = pd.DataFrame({"POS": ["70.00", "72.50 ± 0.10", "–"]}, index=["a", "b", "c"])
    out = bold_markdown(frame, {("b", "POS")})
    assert list(out["POS"]) == ["70.00", "**72.50 ± 0.10**", "–"]


def test_leading_numbers_parses_display_cells() -> None:
    frame = pd.DataFrame({"x": ["71.97 ± 0.30 (n=3)", "–", "-2.5", "**4.00**"]})
    got = list(leading_numbers(frame)["x"])
    assert got[0] == 71.97 and math.isnan(got[1]) and got[2] == -2.5 and got[3] == 4.0


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("a_b & 50%", r"a\_b \& 50\%"),
        ("71.9 ± 0.3", r"71.9 $\pm$ 0.3"),
        ("en→xx", r"en$\rightarrow$xx"),
        ("–", "--"),
        ("1.0 ‡", r"1.0 \textsuperscript{\ddag}"),
    ],
)
def test_latex_escape(text: str, want: str) -> None:
    assert latex_escape(text) == want


def test_to_latex_booktabs_bold_and_notes() -> None:
    frame = pd.DataFrame(
        {"POS (acc)": ["70.00", "72.50"], "gap": ["5.00", "3.00"]},
        index=pd.Index(["e5", "x2s_ma"], name="Model"),
    )
    tex = to_latex(frame, "Zero-shot.", ["Means over seeds."], best={("x2s_ma", "POS (acc)")})
    lines = tex.splitlines()
    assert lines[0] == r"\begin{table}[t]"
    assert r"\begin{tabular}{lrr}" in lines
    assert lines.index(r"\toprule") < lines.index(r"\midrule") < lines.index(r"\bottomrule")
    assert r"x2s\_ma & \textbf{72.50} & 3.00 \\" in lines
    assert r"e5 & 70.00 & 5.00 \\" in lines
    assert any("Means over seeds." in line for line in lines)
    assert r"\caption{Zero-shot.}" in lines


def test_to_latex_keeps_markdown_bold() -> None:
    frame = pd.DataFrame({"x": ["**1.00**"]}, index=["a"])
    assert r"a & \textbf{1.00} \\" in to_latex(frame)


def test_best_cells_none_when_every_row_ties() -> None:
    v = pd.DataFrame({"NER": [0.0, 0.0, 0.0]}, index=list("abc"))
    assert best_cells(v) == set()
