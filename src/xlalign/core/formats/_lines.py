"""Byte lines of a (possibly compressed) file, for readers that decode fields themselves.

:func:`xlalign.core.io.iter_lines` decodes every line strictly; the vector readers decode
only the word of a line, with a chosen policy for invalid UTF-8, so they read bytes.
"""

from __future__ import annotations

import gzip
import io
import lzma
import zlib
from collections.abc import Iterator
from pathlib import Path

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, open_binary

#: Exceptions a truncated or corrupt compressed stream raises while it is read.
STREAM_ERRORS = (EOFError, lzma.LZMAError, gzip.BadGzipFile, zlib.error, OSError)


def is_compressed(path: PathLike) -> bool:
    """Whether :func:`xlalign.core.io.open_binary` decompresses ``path`` (by its suffix)."""
    return Path(path).name.endswith((".gz", ".xz", ".bz2"))


def iter_byte_lines(path: PathLike) -> Iterator[tuple[int, bytes]]:
    """``(line number, line without its newline)``; a truncated archive is an InputError."""
    p = Path(path)
    lineno = 0
    try:
        with open_binary(p) as raw:
            reader = io.BufferedReader(raw, buffer_size=1 << 20)  # type: ignore[arg-type]
            for lineno, bline in enumerate(reader, start=1):
                yield lineno, bline[:-1] if bline.endswith(b"\n") else bline
    except STREAM_ERRORS as exc:
        if isinstance(exc, FileNotFoundError):
            raise InputError(f"{p}: file not found") from exc
        raise InputError(
            f"{p}: compressed stream is truncated or corrupt after line {lineno} ({exc})"
        ) from exc
