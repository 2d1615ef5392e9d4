"""Inputs for the readers' property tests (see ``fuzzing.py``): random bytes, and valid
files mutated line- and byte-wise so that the readers' later checks are reached too."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import strategies as st

from xlalign.core.errors import InputError

#: Bytes the mutations insert: the separators and markers the formats give meaning to,
#: and a few that are not UTF-8 or are Unicode whitespace.
_ALPHABET = [
    b"\t",
    b"\n",
    b"\r\n",
    b" ",
    b"#",
    b"-",
    b".",
    b"_",
    b"0",
    b"1",
    b"2",
    b"9",
    b"10",
    b"=",
    b":",
    b",",
    b'"',
    b"{",
    b"}",
    b"[",
    b"]",
    b"\xff",
    b"\xc3",
    b"\xef\xbb\xbf",
    b"\xc2\xa0",
    b"\x00",
    b"\x0b",
    b"\xe2\x80\xa8",
    b"nan",
    b"inf",
    b"1e999",
    b"-1",
    b"O",
    b"B-PER",
    b"I-LOC",
]


@st.composite
def mutated(draw: st.DrawFn, valid: list[bytes]) -> bytes:
    """One of ``valid`` with a few line or byte mutations."""
    data = draw(st.sampled_from(valid))
    for _ in range(draw(st.integers(0, 4))):
        lines = data.split(b"\n")
        op = draw(st.integers(0, 8))
        i = draw(st.integers(0, max(len(lines) - 1, 0)))
        if op == 0 and lines:  # drop a line
            del lines[i]
        elif op == 1 and lines:  # repeat a line
            lines.insert(i, lines[i])
        elif op == 2 and len(lines) > 1:  # swap two lines
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 3:  # insert a made-up line
            lines.insert(i, b"".join(draw(st.lists(st.sampled_from(_ALPHABET), max_size=12))))
        elif op == 4 and lines:  # split a line's fields and replace one
            cols = lines[i].split(b"\t")
            k = draw(st.integers(0, len(cols) - 1))
            cols[k] = draw(
                st.one_of(
                    st.sampled_from(_ALPHABET),
                    st.binary(max_size=4),
                    st.sampled_from([b"", b"3", b"1-2", b"2-1", b"1.1", b"0.1", b"_", b"0"]),
                )
            )
            lines[i] = b"\t".join(cols)
        else:  # byte-level: insert, delete or truncate
            joined = b"\n".join(lines)
            at = draw(st.integers(0, len(joined)))
            kind = draw(st.integers(0, 2))
            if kind == 0:
                joined = joined[:at] + draw(st.sampled_from(_ALPHABET)) + joined[at:]
            elif kind == 1:
                joined = joined[:at] + joined[at + draw(st.integers(1, 6)) :]
            else:
                joined = joined[:at]
            data = joined
            continue
        data = b"\n".join(lines)
    return data


def inputs(valid: list[bytes], *, max_size: int = 400) -> st.SearchStrategy[bytes]:
    """Random bytes, random text, or mutated valid files (most of the draws)."""
    return st.one_of(
        st.binary(max_size=max_size),
        st.text(max_size=max_size).map(lambda s: s.encode("utf-8", "surrogatepass")),
        mutated(valid),
        mutated(valid),
        mutated(valid),
    )


_LINE_RE = re.compile(r"(:\d+\b|\bline \d+\b)")


def check_error(exc: InputError, *paths: Path, file_level: tuple[str, ...] = ()) -> None:
    """The error names one of ``paths`` and a line, or says a whole-file problem (one of
    the phrases in ``file_level``)."""
    msg = str(exc)
    assert any(str(p) in msg for p in paths), f"no file named in {msg!r}"
    rest = msg
    for p in paths:
        rest = rest.replace(str(p), "")
    assert _LINE_RE.search(rest) or any(phrase in msg for phrase in file_level), (
        f"no line named in {msg!r}"
    )
