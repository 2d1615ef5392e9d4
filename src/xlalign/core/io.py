"""File I/O at the edges: atomic outputs and strict, compression-aware text reading.

A finished-looking output must never be a partial one, so every writer goes through
:func:`atomic_path`: the data is written to a temporary sibling and renamed into place
only when the writer returns normally.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import hashlib
import io
import json
import lzma
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from xlalign.core.errors import InputError

PathLike = str | os.PathLike[str]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(path: PathLike, *, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` on success.

    On any exception the temporary file (or directory) is removed and ``path`` is left
    untouched, so an interrupted job never leaves a file that looks finished.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=suffix or ".tmp", dir=target.parent
    )
    os.close(fd)
    tmp = Path(tmp_name)
    tmp.chmod(0o666 & ~_umask())  # mkstemp makes it private (0600)
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


@contextlib.contextmanager
def atomic_dir(path: PathLike) -> Iterator[Path]:
    """Yield a temporary directory next to ``path``; rename it onto ``path`` on success."""
    import shutil

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        # mkdtemp makes a private (0700) directory; give the result the usual permissions.
        tmp.chmod(0o777 & ~_umask())
        yield tmp
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


@contextlib.contextmanager
def atomic_open(path: PathLike, mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary sibling of ``path`` for writing; rename it into place on success.

    Text mode defaults to UTF-8 with ``\\n`` newlines. Compression follows the target's
    suffix (``.xz``, ``.gz``, ``.bz2``).
    """
    if "r" in mode:
        raise ValueError("atomic_open is for writing")
    with atomic_path(path) as tmp:
        binary = "b" in mode
        if not binary:
            kwargs.setdefault("encoding", "utf-8")
            kwargs.setdefault("newline", "\n")
        opener = _opener(Path(path))
        fh = opener(tmp, mode if binary else mode.replace("t", "") + "t", **kwargs)
        try:
            yield fh
        finally:
            fh.close()


def write_json(path: PathLike, obj: Any) -> None:
    """Write ``obj`` as pretty, key-sorted JSON atomically."""
    with atomic_open(path) as fh:
        json.dump(obj, fh, indent=2, sort_keys=True, ensure_ascii=False)
        fh.write("\n")


def read_json(path: PathLike) -> Any:
    """Read a JSON file, naming it in the error when it is missing or malformed."""
    p = Path(path)
    try:
        with p.open(encoding="utf-8") as fh:
            return json.load(fh)
    except FileNotFoundError as exc:
        raise InputError(f"{p}: file not found") from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"{p}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc


def file_sha256(path: PathLike) -> str:
    """SHA-256 of a file's bytes, streamed in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _opener(p: Path) -> Any:
    name = p.name
    if name.endswith(".xz"):
        return lzma.open
    if name.endswith(".gz"):
        return gzip.open
    if name.endswith(".bz2"):
        return bz2.open
    return open


def open_binary(path: PathLike) -> IO[bytes]:
    """Open a possibly compressed file for binary reading (decompressing on the fly)."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: file not found")
    return _opener(p)(p, "rb")  # type: ignore[no-any-return]


def iter_lines(path: PathLike, *, language: str | None = None) -> Iterator[str]:
    """Yield the lines of a (possibly ``.xz``/``.gz``/``.bz2``) UTF-8 file, without newlines.

    Streams in constant memory. Invalid UTF-8 and truncated archives raise
    :class:`InputError` naming the file, the language (when given) and the line.
    """
    p = Path(path)
    where = f"{p}" + (f" (language {language!r})" if language else "")
    lineno = 0
    try:
        with open_binary(p) as raw:
            reader = io.BufferedReader(raw, buffer_size=1 << 20)  # type: ignore[arg-type]
            for lineno, bline in enumerate(reader, start=1):
                try:
                    line = bline.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(
                        f"{where}: invalid UTF-8 at line {lineno}, byte {exc.start}: "
                        f"expected UTF-8 text"
                    ) from exc
                yield line.rstrip("\r\n")
    except (EOFError, lzma.LZMAError, gzip.BadGzipFile, OSError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise InputError(f"{where}: file not found") from exc
        raise InputError(
            f"{where}: compressed stream is truncated or corrupt after line {lineno} ({exc})"
        ) from exc


def iter_tsv(
    path: PathLike,
    columns: Sequence[str],
    *,
    language: str | None = None,
    what: str = "TSV",
) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of the rows of a tab-separated file headed by ``columns``.

    A missing or different header, or a row with another number of fields, raises
    :class:`InputError` naming the file (and the language, when given) and the line.
    """
    p = Path(path)
    where = f"{p}" + (f" (language {language!r})" if language else "")
    lines = iter_lines(p, language=language)
    header = next(lines, None)
    if header is None:
        raise InputError(f"{where}: empty file; expected a {what} with header {list(columns)}")
    if header.split("\t") != list(columns):
        expected = "\t".join(columns)
        raise InputError(f"{where}: header {header!r}; expected {expected!r}")
    for lineno, line in enumerate(lines, start=2):
        row = line.split("\t")
        if len(row) != len(columns):
            raise InputError(
                f"{where}: line {lineno}: expected {len(columns)} tab-separated columns, "
                f"got {len(row)}"
            )
        yield lineno, row
