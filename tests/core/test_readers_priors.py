"""eflomal priors: the property that any bytes are either refused naming the file and line,
or read by eflomal's own reader (opened as the aligner opens it) into the same number of
records, which round-trip through eflomal's writer."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import eflomal
import pytest
from fuzzing import fuzz, quick
from hypothesis import given
from reader_inputs import check_error, inputs

from xlalign.core.errors import InputError
from xlalign.core.formats.priors import check_priors

VALID = [
    b"LEX\tdas\tthe\t2\nHMMF\t1\t3.5\nHMMR\t-1\t1\nFERF\thaus\t1\t2\nFERR\thouse\t0\t1\n",
    b"LEX\ta\tb\t1e-3\r\n",
    b"",
]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"LEX\ta\rb\tc\t1\n", r"line 1"),  # eflomal's text file ends a line at the \r
        (b"LEX\ta\tb\t1\r\r\n", r"line 2"),  # ... leaving an empty line it cannot read
        (b"HMMF\tx\t1\n", r"line 1: field 2 of a HMMF prior"),
        (b"LEX\ta\tb\tinf\n", r"line 1: alpha 'inf'"),
        (b"\xff\n", r"line 1"),
    ],
)
def test_what_eflomal_would_not_read_is_refused(tmp_path: Path, data: bytes, message: str):
    p = tmp_path / "priors.txt"
    p.write_bytes(data)
    with pytest.raises(InputError, match=message):
        check_priors(p)


def _property(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "priors.txt"
    p.write_bytes(data)
    try:
        n = check_priors(p)
    except InputError as exc:
        check_error(exc, p)
        return
    with open(p, encoding="utf-8") as fh:  # as xlalign.wordalign.eflomal hands it over
        lex, hmmf, hmmr, ferf, ferr = eflomal.read_priors(fh)
    assert n == len(lex) + len(ferf) + len(ferr) + sum(
        1 for line in data.decode().replace("\r\n", "\n").replace("\r", "\n").splitlines()
        if line.startswith(("HMMF", "HMMR"))
    )  # fmt: skip
    q = tmp_path / "again.txt"
    with open(q, "w", encoding="utf-8") as fh:
        eflomal.write_priors(
            fh, Counter({(s, t): a for s, t, a in lex}), hmmf, hmmr,
            Counter({(w, f): a for w, f, a in ferf}), Counter({(w, f): a for w, f, a in ferr}),
        )  # fmt: skip
    check_priors(q)  # what eflomal writes, we read


@quick
@given(data=inputs(VALID))
def test_priors_refused_or_read_by_eflomal(tmp_path: Path, data: bytes) -> None:
    _property(tmp_path, data)


@pytest.mark.fuzz
@fuzz
@given(data=inputs(VALID))
def test_priors_fuzz(tmp_path: Path, data: bytes) -> None:
    _property(tmp_path, data)
