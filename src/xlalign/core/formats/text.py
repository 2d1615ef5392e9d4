"""Line reading with a bound on the length of a line.

:func:`xlalign.core.io.iter_lines` reads a line whole, however long: a corrupt download
that is one 1 GB "line" is pulled into memory before anything can object. The readers
here stop at the first line longer than ``max_line_bytes`` with an :class:`InputError`
naming the file and line, having held at most that many bytes of it.
"""

from __future__ import annotations

import gzip
import io
import json
import lzma
import zlib
from collections.abc import Iterator
from pathlib import Path

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, open_binary

#: Default bound on one line: 64 MiB (a paragraph, a sentence or a CoNLL-U word line is
#: far shorter; a longer "line" is a wrong or corrupt file).
MAX_LINE_BYTES = 64 << 20


def iter_numbered_lines(
    path: PathLike,
    *,
    language: str | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    what: str = "UTF-8 text",
) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a (possibly ``.xz``/``.gz``/``.bz2``) UTF-8 file.

    Lines are split on ``\\n`` only and lose their trailing ``\\r`` and ``\\n`` characters,
    as :func:`xlalign.core.io.iter_lines` does. Invalid UTF-8, a line over
    ``max_line_bytes`` and a truncated archive raise :class:`InputError` naming the file,
    the language (when given) and the line.
    """
    p = Path(path)
    where = f"{p}" + (f" (language {language!r})" if language else "")
    lineno = 0
    try:
        with open_binary(p) as raw:
            reader = io.BufferedReader(raw, buffer_size=1 << 20)  # type: ignore[arg-type]
            while True:
                bline = reader.readline(max_line_bytes + 1)
                if not bline:
                    return
                lineno += 1
                if len(bline) > max_line_bytes and not (
                    len(bline) == max_line_bytes + 1 and bline.endswith(b"\n")
                ):
                    raise InputError(
                        f"{where}: line {lineno} is longer than {max_line_bytes} bytes; "
                        f"expected {what} with shorter lines"
                    )
                try:
                    line = bline.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(
                        f"{where}: invalid UTF-8 at line {lineno}, byte {exc.start}: "
                        f"expected {what}"
                    ) from None
                yield lineno, line.rstrip("\r\n")
    except (EOFError, lzma.LZMAError, gzip.BadGzipFile, zlib.error, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise InputError(f"{where}: file not found") from exc
        raise InputError(
            f"{where}: compressed stream is truncated or corrupt after line {lineno} ({exc})"
        ) from exc


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
