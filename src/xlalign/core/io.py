"""File I/O at the edges: atomic outputs and strict, compression-aware text reading.

A finished-looking output must never be a partial one, so every writer goes through
:func:`atomic_path`: the data is written to a temporary sibling and renamed into place
only when the writer returns normally.
"""

from __future__ import annotations

import bz2
import contextlib
import fcntl
import gzip
import hashlib
import io
import json
import lzma
import os
import re
import tempfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from xlalign.core.errors import InputError

PathLike = str | os.PathLike[str]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: A temporary sibling of an output ``name``: ``.{name}.XXXXXXXX.tmp`` (with the writer's
#: suffix after it, e.g. ``.tmp.png``, where the writing tool picks its format by suffix).
_TMP_SUFFIX = ".tmp"
_TMP_RANDOM = r"[A-Za-z0-9_]{6,16}"


def _temp_pattern(name: str) -> re.Pattern[str]:
    """What the temporaries of an output called ``name`` look like (no dot in the random
    part, so ``.a.XXXXXXXX.tmp`` of ``a`` is never taken for one of ``a.b``'s)."""
    return re.compile(rf"^\.{re.escape(name)}\.{_TMP_RANDOM}\.tmp(\.[A-Za-z0-9]+)?$")


@contextlib.contextmanager
def file_lock(path: PathLike) -> Iterator[None]:
    """An exclusive advisory lock (``flock``) on the file ``path``, created with its
    directory if missing, held for the ``with`` block: jobs that share one store or cache
    take it around their writes."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def fsync_path(path: PathLike) -> None:
    """Flush a file (or, for a directory, its entries) to stable storage.

    File systems that cannot sync a directory (some network and FUSE mounts) are
    tolerated: there is nothing more a writer can do there.
    """
    p = Path(path)
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if p.is_dir() else 0)
    try:
        fd = os.open(p, flags)
    except IsADirectoryError:  # pragma: no cover - platforms without O_DIRECTORY
        return
    try:
        os.fsync(fd)
    except OSError:
        if not p.is_dir():
            raise
    finally:
        os.close(fd)


def _fsync_tree(root: Path) -> None:
    """fsync every file and directory under ``root`` (the deepest first), then ``root``."""
    if root.is_dir() and not root.is_symlink():
        for dirpath, dirnames, filenames in os.walk(root, topdown=False):
            for name in filenames:
                full = Path(dirpath) / name
                if full.is_file() and not full.is_symlink():
                    fsync_path(full)
            for name in dirnames:
                full = Path(dirpath) / name
                if not full.is_symlink():
                    fsync_path(full)
    if root.exists() and not root.is_symlink():
        fsync_path(root)


def _remove(path: Path) -> None:
    """Remove a file, link or directory tree; a missing one is fine."""
    import shutil

    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _exchange(a: Path, b: Path) -> bool:
    """Swap ``a`` and ``b`` in one step (Linux ``renameat2(RENAME_EXCHANGE)``).

    False where the kernel, the C library or the file system cannot, so that the caller
    falls back to two renames.
    """
    import ctypes
    import errno
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
    renameat2.argtypes += [ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EPERM):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _aside_name(target: Path) -> Path:
    """A free temporary name beside ``target``, of the pattern the cleaner removes."""
    import secrets

    while True:
        aside = target.with_name(f".{target.name}.{secrets.token_hex(4)}{_TMP_SUFFIX}")
        if not os.path.lexists(aside):
            return aside


def _commit(tmp: Path, target: Path) -> None:
    """Put the finished ``tmp`` in place of ``target`` and make both durable.

    The data is synced before the rename and the directory after it, so that after a
    crash ``target`` is either the old version or the complete new one. An existing
    directory (or a file replaced by a directory) is swapped in one step where the
    system allows it, else renamed aside first (a crash between the two renames leaves
    ``target`` absent, never partial, and the old copy under a temporary name that
    :func:`remove_stale_temporaries` removes), and removed afterwards.
    """
    _fsync_tree(tmp)
    parent = target.parent
    if tmp.is_dir() and os.path.lexists(target) and not (target.is_symlink() or target.is_file()):
        if _exchange(tmp, target):
            fsync_path(parent)
            _remove(tmp)  # now the old version
            return
        aside = _aside_name(target)
        os.replace(target, aside)
        try:
            os.replace(tmp, target)
        except BaseException:
            os.replace(aside, target)
            raise
        fsync_path(parent)
        _remove(aside)
        return
    if tmp.is_dir() and os.path.lexists(target):
        target.unlink()  # a file or link where the directory goes
    os.replace(tmp, target)
    fsync_path(parent)


@contextlib.contextmanager
def atomic_path(path: PathLike, *, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` on success.

    The temporary is ``.{name}.XXXXXXXX.tmp`` (plus ``suffix``, for tools that choose
    their format by it). It is synced to disk before the rename, and the directory after
    it. On any exception the temporary file (or directory) is removed and ``path`` is
    left untouched, so an interrupted job never leaves a file that looks finished; one
    killed outright leaves its temporary, which :func:`remove_stale_temporaries` removes
    when the job starts again.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=_TMP_SUFFIX + (suffix or ""), dir=target.parent
    )
    os.close(fd)
    tmp = Path(tmp_name)
    tmp.chmod(0o666 & ~_umask())  # mkstemp makes it private (0600)
    try:
        yield tmp
        _commit(tmp, target)
    except BaseException:
        _remove(tmp)
        raise


@contextlib.contextmanager
def atomic_dir(path: PathLike) -> Iterator[Path]:
    """Yield a temporary directory next to ``path``; put it in place of ``path`` on success.

    The directory is built aside (``.{name}.XXXXXXXX.tmp``), every file in it synced,
    then swapped with an existing ``path`` in one step where the system allows it (see
    :func:`_commit`); the old version is removed only after the new one is in place.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=_TMP_SUFFIX, dir=target.parent))
    try:
        # mkdtemp makes a private (0700) directory; give the result the usual permissions.
        tmp.chmod(0o777 & ~_umask())
        yield tmp
        _commit(tmp, target)
    except BaseException:
        _remove(tmp)
        raise


def stale_temporaries(paths: Iterable[PathLike]) -> list[Path]:
    """The temporaries (files or directories) left beside ``paths`` by killed writers of
    :func:`atomic_path`, :func:`atomic_open` and :func:`atomic_dir`."""
    found: list[Path] = []
    for path in paths:
        target = Path(path)
        parent = target.parent
        if not target.name or not parent.is_dir():
            continue
        pattern = _temp_pattern(target.name)
        with os.scandir(parent) as entries:
            found.extend(parent / e.name for e in entries if pattern.match(e.name))
    return sorted(set(found))


def remove_stale_temporaries(paths: Iterable[PathLike]) -> list[Path]:
    """Remove what killed writers of ``paths`` left behind; return what was removed.

    Call it when a job starts, for its own outputs only (Snakemake runs one job per
    output, so no live writer owns these names then).
    """
    removed = stale_temporaries(paths)
    for tmp in removed:
        _remove(tmp)
    return removed


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


def json_text(text: str) -> str:
    """``text`` as JSON written in UTF-8 can hold it: unchanged, unless it holds lone
    surrogates (a word read with ``encoding_errors="surrogateescape"``, whose escaped bytes
    UTF-8 cannot encode); then each escaped byte is written as ``\\xNN`` and any other
    lone surrogate as ``\\uNNNN`` (Python's ``backslashreplace``)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return text.encode("utf-8", "backslashreplace").decode("utf-8")
        return raw.decode("utf-8", "backslashreplace")
    return text


def json_safe(obj: Any) -> Any:
    """``obj`` with every string (keys included) through :func:`json_text`; containers
    are copied, other values kept."""
    if isinstance(obj, str):
        return json_text(obj)
    if isinstance(obj, dict):
        return {json_safe(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    return obj


def write_json(path: PathLike, obj: Any) -> None:
    """Write ``obj`` as pretty, key-sorted JSON atomically.

    A string UTF-8 cannot encode (a word holding bytes escaped by ``surrogateescape``) is
    written as :func:`json_text` shows it, so the file is always valid UTF-8 JSON.
    """
    try:
        with atomic_open(path) as fh:
            json.dump(obj, fh, indent=2, sort_keys=True, ensure_ascii=False)
            fh.write("\n")
    except UnicodeEncodeError:
        with atomic_open(path) as fh:
            json.dump(json_safe(obj), fh, indent=2, sort_keys=True, ensure_ascii=False)
            fh.write("\n")


class _RepeatedKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _RepeatedKey(key)
        out[key] = value
    return out


def read_json(path: PathLike) -> Any:
    """Read a JSON file, naming it in the error when it is missing or malformed.

    A key repeated in an object is refused (:class:`InputError`): Python's parser would keep
    the last value without a word, and no writer of this project repeats one, so a repeated
    key is a hand edit whose intent is unknown."""
    p = Path(path)
    try:
        with p.open(encoding="utf-8") as fh:
            return json.load(fh, object_pairs_hook=_unique_keys)
    except _RepeatedKey as exc:
        raise InputError(
            f"{p}: key {exc.args[0]!r} repeated in a JSON object; expected each key once"
        ) from None
    except FileNotFoundError as exc:
        raise InputError(f"{p}: file not found") from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"{p}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: invalid UTF-8 at byte {exc.start}: expected JSON text") from exc


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
    Invalid UTF-8, a line over
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


def iter_lines(path: PathLike, *, language: str | None = None) -> Iterator[str]:
    """Yield the lines of a (possibly ``.xz``/``.gz``/``.bz2``) UTF-8 file, without newlines.

    Streams in constant memory; errors as :func:`iter_numbered_lines`.
    """
    for _, line in iter_numbered_lines(path, language=language):
        yield line


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
        raise InputError(
            f"{where}: line 1: empty file; expected a {what} with header {list(columns)}"
        )
    if header.split("\t") != list(columns):
        expected = "\t".join(columns)
        raise InputError(f"{where}: line 1: header {header[:200]!r}; expected {expected!r}")
    for lineno, line in enumerate(lines, start=2):
        row = line.split("\t")
        if len(row) != len(columns):
            raise InputError(
                f"{where}: line {lineno}: expected {len(columns)} tab-separated columns, "
                f"got {len(row)}"
            )
        yield lineno, row


def local_model_dir(path: PathLike, *, what: str = "model") -> str:
    """``path`` (as ``from_pretrained`` takes it) once it is known to be a local model.

    Pass the result to ``from_pretrained(..., local_files_only=True)``. Without this check
    transformers takes a missing directory for the id of a Hub repository and, unless the
    Hub is switched off, asks the network for it (and may load a model of the same name
    from there or from its cache). Raises :class:`InputError` naming ``path`` when it is
    not a directory holding ``config.json``.
    """
    p = Path(path)
    if not p.is_dir():
        raise InputError(
            f"{p}: {what} not found: expected a local directory with config.json "
            "(models are loaded from disk only, never fetched at load time)"
        )
    if not (p / "config.json").is_file():
        raise InputError(f"{p}: not a {what} directory: config.json is missing")
    return str(p)


# --------------------------------------------------------------------------- redaction

#: Query or fragment parameters that carry credentials: tokens, keys, passwords and the
#: signatures of pre-signed URLs (S3 ``X-Amz-Signature``/``-Credential``/
#: ``-Security-Token``, GCS ``X-Goog-Signature``, Azure SAS ``sig``).
_SECRET_PARAM = re.compile(
    r"token|secret|passw|pwd|sig$|signature|credential|key|auth|session|code$|sas$",
    re.IGNORECASE,
)
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)(?P<userinfo>[^/?#@\s]+)@")
_PARAM = re.compile(r"(?P<lead>[?&;#])(?P<key>[^=&;#?\s/]+)=(?P<value>[^&;#\s]*)")
REDACTED = "***"


def redact_url(text: str) -> str:
    """``text`` (a URL, a URI, or a message holding some) with its credentials masked.

    A URL's user information becomes ``***`` (``user:***`` where a password follows a
    user name), and the value of every query or fragment parameter whose name says it is
    a secret (``token``, ``key``, ``sig``, ``X-Amz-Signature``, ``password`` ...) becomes
    ``***``. Everything else is kept as written, so the result still says where the file
    came from. Use it wherever a URL or URI is logged or written to a file.
    """

    def userinfo(m: re.Match[str]) -> str:
        user, sep, _password = m["userinfo"].partition(":")
        masked = f"{user}:{REDACTED}" if sep and user else REDACTED
        return f"{m['scheme']}{masked}@"

    def param(m: re.Match[str]) -> str:
        if m["value"] and _SECRET_PARAM.search(m["key"]):
            return f"{m['lead']}{m['key']}={REDACTED}"
        return m.group(0)

    return _PARAM.sub(param, _USERINFO.sub(userinfo, str(text)))
