"""What the line-based readers share: bounded, numbered lines (from :mod:`xlalign.core.io`,
re-exported here), valid-Unicode checks and strict JSON Lines values."""

from __future__ import annotations

import json

from xlalign.core.errors import InputError
from xlalign.core.io import MAX_LINE_BYTES, iter_numbered_lines

__all__ = ["MAX_LINE_BYTES", "is_text", "iter_numbered_lines", "json_line", "unique_keys"]


def is_text(x: object) -> bool:
    """A string of valid Unicode (JSON's ``\\ud800`` escapes give lone surrogates, which no
    UTF-8 file can hold)."""
    if not isinstance(x, str):
        return False
    try:
        x.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """``object_pairs_hook`` for :func:`json.loads` that refuses a repeated key
    (:class:`ValueError`)."""
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {key!r} repeated")
        out[key] = value
    return out


def json_line(where: object, lineno: int, line: str, *, what: str) -> object:
    """One JSON Lines value, keys unique; :class:`InputError` naming the file and line."""
    try:
        return json.loads(line, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}:{lineno}: not JSON ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{where}:{lineno}: not {what} ({exc})") from None
