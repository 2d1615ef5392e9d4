"""word2vec vectors: the text form (``.vec``, fastText's and MUSE's) and the binary form (``.bin``).

Text: a header ``<rows> <dim>``, then one line per word: the word, a space, and ``dim``
floats separated by whitespace (fastText ends each line with a space; MUSE and VecMap read
the values with ``np.fromstring(sep=" ")``, so runs of spaces are tolerated here too).
Binary (word2vec's ``-binary 1``): the same header line, then per word its bytes, a space,
``dim`` little-endian float32 values and, as word2vec writes it, a newline.

Decisions (the reference tools, and the readers and writers agreeing):

* **What a word is.** fastText splits words on ASCII whitespace only (space, tab, newline,
  vertical tab, form feed, carriage return, NUL); MUSE and VecMap split a line at its first
  ASCII space. So a word is any non-empty string without those characters: a word holding
  a no-break space (U+00A0) or another Unicode space is a word (the official ``cc.*.vec``
  files hold such words) and is written back as read. An empty word, or one holding ASCII
  whitespace (a tab after the word, a stray carriage return) is refused with its line, by
  the readers and by the writers alike (:func:`word_problem`).
* **Invalid UTF-8** (fastText writes a word's bytes as they came: its issue #954 reports
  such bytes in ``cc.ko.300.vec``): ``encoding_errors`` is ``"replace"`` by default
  (U+FFFD, the row kept; a researcher loading an official file expects it to load), or
  ``"ignore"`` (MUSE: the bytes dropped), ``"surrogateescape"`` (VecMap: the bytes kept as
  lone surrogates and written back as the same bytes by the vector and ``.vocab.txt``
  writers; JSON cannot hold such words, so stats that list words may fail to write) or
  ``"strict"`` (refused with the line). The count of such rows, and up to five of their
  lines, go into the report the callers write into their stats, with one warning.
* **Duplicate words.** A word on two rows is refused with both lines by default
  (``duplicates="error"``; fastText never writes one, so it means a broken file);
  ``duplicates="first"`` keeps the first row as MUSE does. A row whose word became equal
  to an earlier one, or empty, only because its invalid bytes were replaced or dropped is
  dropped and counted (``invalid_utf8_dropped``) whatever the policy.
* **The header** is checked against the file before anything is allocated: on an
  uncompressed file every row needs at least ``2 * dim + 1`` bytes (``4 * dim + 2`` in
  binary), so a header claiming more rows than the file's size allows is refused at line
  1 at once; a compressed file is read with a matrix that grows with the rows actually
  read. Fewer or more rows than the header says is an error naming the line.
* **Values** must be finite numbers (NaN and infinity are refused with the line).

Every error is an :class:`InputError` naming the file and the line (``record`` for the
binary form).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from xlalign.core.errors import InputError
from xlalign.core.formats._lines import STREAM_ERRORS, is_compressed, iter_byte_lines
from xlalign.core.io import PathLike, atomic_open, open_binary

log = logging.getLogger(__name__)

#: Policies for bytes that are not UTF-8 in a word (see the module docstring).
ENCODING_ERRORS = ("replace", "ignore", "surrogateescape", "strict")
DEFAULT_ENCODING_ERRORS = "replace"
#: Policies for a word on two rows.
DUPLICATE_POLICIES = ("error", "first")
#: Characters that end a word (fastText's readWord: ASCII whitespace and NUL).
WORD_SEPARATORS = frozenset(" \t\n\r\v\f\0")

_HEADER = re.compile(rb"[ \t]*([0-9]{1,18})[ \t]+([0-9]{1,18})[ \t\r]*")
#: Bytes allocated at a time when the file's size does not bound the rows (compressed).
_GROW_BYTES = 64 << 20
#: Longest word of a binary file (bytes) before the record is called corrupt.
_MAX_WORD_BYTES = 1 << 16


def word_problem(word: str) -> str | None:
    """Why ``word`` cannot be a word of a vectors file, or None when it can."""
    if not word:
        return "is empty"
    bad = WORD_SEPARATORS.intersection(word)
    if bad:
        return f"contains {', '.join(sorted(map(repr, bad)))} (ASCII whitespace ends a word)"
    try:
        word.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return "holds a lone surrogate that is not an escaped byte"
    return None


def check_words(words: Sequence[str], where: PathLike) -> None:
    """Refuse (ValueError) a word list a vectors writer cannot write so that it reads back."""
    seen: set[str] = set()
    for i, w in enumerate(words):
        why = word_problem(w)
        if why is not None:
            raise ValueError(f"{where}: word {w!r} (row {i + 1}) {why}")
        if w in seen:
            raise ValueError(f"{where}: duplicate word {w!r} (row {i + 1})")
        seen.add(w)


def check_matrix(words: Sequence[str], matrix: np.ndarray, where: PathLike) -> np.ndarray:
    """The matrix as float32, after checking its shape, values and words (ValueError)."""
    mat = np.asarray(matrix)
    if mat.ndim != 2 or mat.shape[0] != len(words) or mat.shape[1] < 1:
        raise ValueError(
            f"{where}: expected a ({len(words)}, dim) matrix for {len(words)} words, "
            f"got shape {mat.shape}"
        )
    if not np.isfinite(mat).all():
        raise ValueError(f"{where}: the matrix has non-finite values (NaN or inf)")
    check_words(words, where)
    return mat.astype(np.float32, copy=False)


def _check_options(encoding_errors: str, duplicates: str) -> None:
    if encoding_errors not in ENCODING_ERRORS:
        raise ValueError(f"encoding_errors={encoding_errors!r}: expected one of {ENCODING_ERRORS}")
    if duplicates not in DUPLICATE_POLICIES:
        raise ValueError(f"duplicates={duplicates!r}: expected one of {DUPLICATE_POLICIES}")


def _parse_header(path: Path, line: bytes | None) -> tuple[int, int]:
    m = _HEADER.fullmatch(line) if line is not None else None
    if m is None or int(m[2]) < 1:
        got = "nothing" if line is None else repr(line[:80].decode("utf-8", "replace"))
        raise InputError(
            f"{path}: line 1: expected a header '<words> <dim>' (two integers, dim >= 1), got {got}"
        )
    return int(m[1]), int(m[2])


def _check_header_size(
    path: Path, n_words: int, dim: int, header_bytes: int, row_bytes: int, what: str
) -> int | None:
    """The most rows the file can hold (None when compressed); refuses a header above it."""
    if is_compressed(path):
        return None
    size = path.stat().st_size
    most = max(0, size - header_bytes) // row_bytes
    if n_words > most:
        raise InputError(
            f"{path}: line 1: the header says {n_words} words of dim {dim}, but a file of "
            f"{size} bytes holds at most {most} such {what} (each needs at least "
            f"{row_bytes} bytes); expected a header that matches the file"
        )
    return most


class _Rows:
    """A float32 matrix filled row by row. Allocated at the first row (whose values prove
    the header's dim): at once for all rows when the header is bounded by the file size,
    from ``_GROW_BYTES`` and doubling otherwise (a compressed file)."""

    def __init__(self, limit: int, dim: int, bounded: bool) -> None:
        self.limit, self.dim, self.bounded, self.n = limit, dim, bounded, 0
        self.mat = np.empty((0, dim), np.float32)

    def _grow(self) -> None:
        step = max(1, _GROW_BYTES // (4 * self.dim))
        rows = self.limit if self.bounded else min(self.limit, max(2 * self.n, step))
        grown = np.empty((max(rows, self.n + 1), self.dim), np.float32)
        grown[: self.n] = self.mat[: self.n]
        self.mat = grown

    def add(self, row: np.ndarray) -> None:
        if self.n == self.mat.shape[0]:
            self._grow()
        self.mat[self.n] = row
        self.n += 1

    def matrix(self) -> np.ndarray:
        if self.n < self.mat.shape[0]:
            self.mat.resize((self.n, self.dim), refcheck=False)  # shrinks in place
        return self.mat


class _Words:
    """Words as they are read: decoded by the policy, checked, de-duplicated."""

    def __init__(self, path: Path, encoding_errors: str, duplicates: str, unit: str) -> None:
        self.path, self.errors, self.duplicates, self.unit = path, encoding_errors, duplicates, unit
        self.words: list[str] = []
        self.index: dict[str, int] = {}  # word -> its line (or record)
        self.invalid = 0
        self.invalid_at: list[int] = []
        self.invalid_dropped = 0
        self.duplicates_dropped = 0

    def take(self, raw: bytes, at: int) -> str | None:
        """The word of line (record) ``at``, or None when its row is dropped."""
        invalid = False
        try:
            word = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if self.errors == "strict":
                raise InputError(
                    f"{self.path}: {self.unit} {at}: the word is not valid UTF-8 (byte "
                    f"{exc.start}: {raw[exc.start : exc.start + 4]!r}); expected UTF-8, or "
                    "read it with invalid bytes replaced (`--encoding-errors replace`, or "
                    "'ignore', 'surrogateescape'; `encoding_errors=` in Python), as "
                    "fastText-written files may need"
                ) from None
            word = raw.decode("utf-8", self.errors)
            invalid = True
            self.invalid += 1
            if len(self.invalid_at) < 5:
                self.invalid_at.append(at)
        if invalid and (not word or word in self.index):
            self.invalid_dropped += 1
            return None
        why = word_problem(word)
        if why is not None:
            raise InputError(f"{self.path}: {self.unit} {at}: the word {word!r} {why}")
        if word in self.index:
            if self.duplicates == "first":
                self.duplicates_dropped += 1
                return None
            raise InputError(
                f"{self.path}: {self.unit} {at}: duplicate word {word!r} (first on "
                f"{self.unit} {self.index[word]}); expected each word once, or "
                "duplicates='first' to keep the first row as MUSE does"
            )
        self.index[word] = at
        self.words.append(word)
        return word

    def report(self) -> dict[str, Any]:
        if self.invalid:
            log.warning(
                "%s: %d word(s) with invalid UTF-8 read with errors=%r (%s %s)",
                self.path,
                self.invalid,
                self.errors,
                self.unit + "s",
                ", ".join(map(str, self.invalid_at)),
            )
        return {
            "encoding_errors": self.errors,
            "invalid_utf8_rows": self.invalid,
            f"invalid_utf8_{self.unit}s": list(self.invalid_at),
            "invalid_utf8_dropped": self.invalid_dropped,
            "duplicates_dropped": self.duplicates_dropped,
        }


def _values(fields: list[bytes], dim: int, path: Path, lineno: int) -> np.ndarray:
    if len(fields) != dim:
        raise InputError(
            f"{path}: line {lineno}: expected a word and {dim} values, got {len(fields)} values"
        )
    try:
        with np.errstate(over="ignore"):
            row = np.array(fields, dtype=np.float32)
    except ValueError:
        bad = next(f for f in fields if not _is_float(f))
        raise InputError(
            f"{path}: line {lineno}: value {bad[:40].decode('utf-8', 'replace')!r} is not a number"
        ) from None
    if not np.isfinite(row).all():
        raise InputError(
            f"{path}: line {lineno}: a value is not finite (NaN, infinity, or beyond float32); "
            "expected finite numbers"
        )
    return row


def _is_float(b: bytes) -> bool:
    try:
        float(b)
    except ValueError:
        return False
    return True


def read_vec(
    path: PathLike,
    *,
    max_words: int | None = None,
    encoding_errors: str = DEFAULT_ENCODING_ERRORS,
    duplicates: str = "error",
    report: dict[str, Any] | None = None,
) -> tuple[list[str], np.ndarray]:
    """Read word2vec text: (words, float32 matrix), optionally only the first ``max_words``.

    See the module docstring for what is accepted. ``report``, when given, receives the
    counts of rows with invalid UTF-8 and of dropped rows (``encoding_errors``,
    ``invalid_utf8_rows``, ``invalid_utf8_lines``, ``invalid_utf8_dropped``,
    ``duplicates_dropped``).
    """
    _check_options(encoding_errors, duplicates)
    p = Path(path)
    lines = iter_byte_lines(p)
    first = next(lines, None)
    header = first[1] if first is not None else None
    n_words, dim = _parse_header(p, header)
    assert header is not None
    most = _check_header_size(p, n_words, dim, len(header) + 1, 2 * dim + 1, "rows")
    limit = n_words if max_words is None else min(n_words, max(0, max_words))
    rows = _Rows(limit, dim, most is not None)
    words = _Words(p, encoding_errors, duplicates, "line")
    lineno, file_rows = 1, 0
    for lineno, line in lines:
        if rows.n == limit and (max_words is not None and file_rows < n_words):
            break  # a prefix was asked for
        if file_rows == n_words:
            if not line.strip():
                continue  # blank lines at the end
            raise InputError(
                f"{p}: line {lineno}: more rows than the {n_words} words the header says"
            )
        file_rows += 1
        raw, _, rest = line.partition(b" ")
        row = _values(rest.split(), dim, p, lineno)
        if words.take(raw, lineno) is not None:
            rows.add(row)
    if file_rows < n_words and not (max_words is not None and rows.n == limit):
        raise InputError(
            f"{p}: line {lineno}: the header says {n_words} words but the file has only "
            f"{file_rows} rows"
        )
    if report is not None:
        report.update(words.report())
    return words.words, rows.matrix()


def _row_text(word: str, row: Sequence[float], fmt: str) -> str:
    return f"{word} {fmt % tuple(row)}\n"


def write_vec(words: Sequence[str], matrix: np.ndarray, path: PathLike) -> None:
    """Write word2vec text (``V dim`` header, ``%.6g`` floats), atomically.

    Words are checked as the reader checks them (:func:`word_problem`, no duplicates), so
    every file written here reads back; escaped bytes (``surrogateescape``) are written as
    the bytes they stand for.
    """
    mat = check_matrix(words, matrix, path)
    dim = mat.shape[1]
    fmt = " ".join(["%.6g"] * dim)
    with atomic_open(path, errors="surrogateescape") as fh:
        fh.write(f"{len(words)} {dim}\n")
        for w, row in zip(words, mat, strict=True):
            fh.write(_row_text(w, row.tolist(), fmt))


# ------------------------------------------------------------------------------ binary


class _ByteStream:
    """Buffered reads of a binary stream with look-ahead for a delimiter."""

    def __init__(self, fh: IO[bytes]) -> None:
        self.fh, self.buf, self.pos = fh, b"", 0

    def _fill(self) -> bool:
        more = self.fh.read(1 << 20)
        if not more:
            return False
        self.buf = self.buf[self.pos :] + more
        self.pos = 0
        return True

    def until(self, delim: bytes, limit: int) -> bytes | None:
        """Bytes up to ``delim`` (consumed, not returned); None at EOF or past ``limit``."""
        while True:
            k = self.buf.find(delim, self.pos, self.pos + limit + 1)
            if k >= 0:
                out = self.buf[self.pos : k]
                self.pos = k + 1
                return out
            if len(self.buf) - self.pos > limit or not self._fill():
                return None

    def take(self, n: int) -> bytes:
        while len(self.buf) - self.pos < n and self._fill():
            pass
        out = self.buf[self.pos : self.pos + n]
        self.pos += len(out)
        return out

    def skip(self, byte: bytes) -> None:
        if len(self.buf) - self.pos < 1:
            self._fill()
        if self.buf[self.pos : self.pos + 1] == byte:
            self.pos += 1

    def rest(self) -> bytes:
        while self._fill():
            pass
        return self.buf[self.pos :]


def read_bin(
    path: PathLike,
    *,
    max_words: int | None = None,
    encoding_errors: str = DEFAULT_ENCODING_ERRORS,
    duplicates: str = "error",
    report: dict[str, Any] | None = None,
) -> tuple[list[str], np.ndarray]:
    """Read word2vec binary (``-binary 1``): as :func:`read_vec`; errors name the record."""
    _check_options(encoding_errors, duplicates)
    p = Path(path)
    try:
        with open_binary(p) as fh:
            return _read_bin(p, fh, max_words, encoding_errors, duplicates, report)
    except STREAM_ERRORS as exc:
        if isinstance(exc, FileNotFoundError):
            raise InputError(f"{p}: file not found") from exc
        raise InputError(f"{p}: compressed stream is truncated or corrupt ({exc})") from exc


def _read_bin(
    p: Path,
    fh: IO[bytes],
    max_words: int | None,
    encoding_errors: str,
    duplicates: str,
    report: dict[str, Any] | None,
) -> tuple[list[str], np.ndarray]:
    s = _ByteStream(fh)
    header = s.until(b"\n", 80)
    n_words, dim = _parse_header(p, header)
    assert header is not None
    most = _check_header_size(p, n_words, dim, len(header) + 1, 4 * dim + 2, "records")
    limit = n_words if max_words is None else min(n_words, max(0, max_words))
    rows = _Rows(limit, dim, most is not None)
    words = _Words(p, encoding_errors, duplicates, "record")
    for k in range(1, n_words + 1):
        if rows.n == limit:
            break
        raw = s.until(b" ", _MAX_WORD_BYTES)
        if raw is None:
            raise InputError(
                f"{p}: record {k}: expected a word ending with a space (the header says "
                f"{n_words} records of dim {dim}); the file ends or the word exceeds "
                f"{_MAX_WORD_BYTES} bytes"
            )
        raw = raw.lstrip(b"\n")  # the newline word2vec writes after each vector
        data = s.take(4 * dim)
        if len(data) < 4 * dim:
            raise InputError(
                f"{p}: record {k}: truncated: expected {4 * dim} bytes of values, got "
                f"{len(data)} (the header says {n_words} records of dim {dim})"
            )
        row = np.frombuffer(data, dtype="<f4")
        if not np.isfinite(row).all():
            raise InputError(f"{p}: record {k}: a value is not finite (NaN or infinity)")
        if words.take(raw, k) is not None:
            rows.add(row)
        s.skip(b"\n")
    else:
        if s.rest().strip():
            raise InputError(
                f"{p}: record {n_words + 1}: data after the {n_words} records the header says"
            )
    if report is not None:
        report.update(words.report())
    return words.words, rows.matrix()


def write_bin(words: Sequence[str], matrix: np.ndarray, path: PathLike) -> None:
    """Write word2vec binary (header line, then ``word`` + space + float32 LE + newline)."""
    mat = check_matrix(words, matrix, path).astype("<f4", copy=False)
    with atomic_open(path, "wb") as fh:
        fh.write(f"{len(words)} {mat.shape[1]}\n".encode("ascii"))
        for w, row in zip(words, mat, strict=True):
            fh.write(w.encode("utf-8", "surrogateescape") + b" " + row.tobytes() + b"\n")
