"""Reading and writing word vectors: word2vec text (``.vec``) and a fast binary form.

The text form is what VecMap and MUSE read: a header ``<words> <dim>``, then one line per
word, the word followed by ``dim`` space-separated floats (6 significant digits). Words may
not contain whitespace (segmented tokens never do). The binary form is ``<stem>.npy``
(float32 matrix) beside ``<stem>.vocab.txt`` (one word per line, in row order). Every writer
is atomic; every reader checks the shape and names the file and line of any fault.

:func:`load_space` is how mapping and evaluation read a space, in either form: checked
for retrieval by :func:`check_space`, optionally cut to its most frequent rows and
lowercased.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, atomic_open, iter_lines

log = logging.getLogger(__name__)

#: What :func:`check_space` does with rows of zero norm.
ZERO_POLICIES = ("drop", "error")
#: A space in memory: its words (rows in frequency order) and their vectors.
Space = tuple[list[str], np.ndarray]


def _check(words: Sequence[str], matrix: np.ndarray, where: PathLike) -> np.ndarray:
    mat = np.asarray(matrix)
    if mat.ndim != 2 or mat.shape[0] != len(words):
        raise ValueError(
            f"{where}: expected a ({len(words)}, dim) matrix for {len(words)} words, "
            f"got shape {mat.shape}"
        )
    if not np.isfinite(mat).all():
        raise ValueError(f"{where}: the matrix has non-finite values (NaN or inf)")
    seen: set[str] = set()
    for w in words:
        if not w or any(ch.isspace() for ch in w):
            raise ValueError(f"{where}: word {w!r} is empty or contains whitespace")
        if w in seen:
            raise ValueError(f"{where}: duplicate word {w!r}")
        seen.add(w)
    return mat


def write_vec(words: Sequence[str], matrix: np.ndarray, path: PathLike) -> None:
    """Write word2vec text format (``V dim`` header, ``%.6g`` floats), atomically."""
    mat = _check(words, matrix, path)
    dim = mat.shape[1]
    row_fmt = " ".join(["%.6g"] * dim)
    with atomic_open(path) as fh:
        fh.write(f"{len(words)} {dim}\n")
        for w, row in zip(words, mat, strict=True):
            fh.write(f"{w} {row_fmt % tuple(row.tolist())}\n")


def read_vec(path: PathLike, *, max_words: int | None = None) -> tuple[list[str], np.ndarray]:
    """Read word2vec text format: (words, float32 matrix), optionally only the first rows.

    Raises :class:`InputError` naming the file and line for a malformed header, a line
    with the wrong number of values, a duplicate word, or a header whose word count
    disagrees with the rows.
    """
    lines = iter_lines(path)
    header = next(lines, None)
    parts = header.split() if header is not None else []
    try:
        n_words, dim = (int(x) for x in parts)
    except ValueError:
        n_words = dim = -1
    if n_words < 0 or dim < 1:
        raise InputError(f"{path}: line 1: expected a header '<words> <dim>', got {header!r}")
    limit = n_words if max_words is None else min(n_words, max_words)
    words: list[str] = []
    index: dict[str, int] = {}
    mat = np.empty((limit, dim), dtype=np.float32)
    lineno = 1
    for lineno, line in enumerate(lines, start=2):
        if len(words) == limit:
            if max_words is not None and len(words) < n_words:
                break  # asked for a prefix only
            raise InputError(
                f"{path}: line {lineno}: more rows than the {n_words} words the header says"
            )
        fields = line.rstrip().split(" ")
        if len(fields) != dim + 1:
            raise InputError(
                f"{path}: line {lineno}: expected a word and {dim} values, "
                f"got {len(fields) - 1} values"
            )
        word = fields[0]
        if word in index:
            raise InputError(
                f"{path}: line {lineno}: duplicate word {word!r} (first on line {index[word] + 2})"
            )
        try:
            mat[len(words)] = np.array(fields[1:], dtype=np.float32)
        except ValueError as exc:
            raise InputError(f"{path}: line {lineno}: a value is not a number ({exc})") from exc
        index[word] = len(words)
        words.append(word)
    if len(words) < limit:
        raise InputError(
            f"{path}: line {lineno}: the header says {n_words} words but the file has "
            f"only {len(words)} rows"
        )
    return words, mat


def npy_stem(stem: PathLike) -> str:
    """The stem of a binary space: its path without the `.npy` suffix."""
    s = str(stem)
    return s[: -len(".npy")] if s.endswith(".npy") else s


def npy_paths(stem: PathLike) -> tuple[Path, Path]:
    """The two files of the binary form: ``<stem>.npy`` and ``<stem>.vocab.txt``."""
    s = npy_stem(stem)
    return Path(s + ".npy"), Path(s + ".vocab.txt")


def write_npy(words: Sequence[str], matrix: np.ndarray, stem: PathLike) -> None:
    """Write ``<stem>.npy`` (float32) and ``<stem>.vocab.txt``, each atomically.

    The word list is written first, the matrix last, and :func:`read_npy` checks that
    they agree, so a crash between the two is detected rather than misread.
    """
    npy, vocab = npy_paths(stem)
    mat = _check(words, matrix, npy).astype(np.float32, copy=False)
    with atomic_open(vocab) as fh:
        for w in words:
            fh.write(w + "\n")
    with atomic_open(npy, "wb") as fh:
        np.save(fh, np.ascontiguousarray(mat), allow_pickle=False)


def read_npy(stem: PathLike, *, mmap: bool = False) -> tuple[list[str], np.ndarray]:
    """Read the binary form written by :func:`write_npy`: (words, float32 matrix)."""
    npy, vocab = npy_paths(stem)
    words = list(iter_lines(vocab))
    if not npy.exists():
        raise InputError(f"{npy}: file not found")
    try:
        mat = np.load(npy, mmap_mode="r" if mmap else None, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise InputError(f"{npy}: not a readable .npy file ({exc})") from exc
    if mat.ndim != 2 or mat.shape[0] != len(words):
        raise InputError(
            f"{npy}: matrix of shape {mat.shape} does not match the {len(words)} words of {vocab}"
        )
    if mat.dtype != np.float32:
        raise InputError(f"{npy}: expected float32 values, got {mat.dtype}")
    seen: dict[str, int] = {}
    for i, w in enumerate(words):
        if w in seen:
            raise InputError(f"{vocab}: line {i + 1}: duplicate word {w!r}")
        seen[w] = i
    return words, mat


def check_space(
    words: Sequence[str], vecs: np.ndarray, *, where: str, zero: str = "drop"
) -> tuple[list[str], np.ndarray, dict[str, Any]]:
    """Check a space before cosine retrieval: (kept words, kept vectors, report).

    Non-finite values and duplicate words raise :class:`InputError` naming ``where``, the
    word and its row (1-based). A row of zero norm has no direction, so cosine is undefined
    for it: with ``zero="drop"`` such rows are removed (one warning for all of them), with
    ``zero="error"`` they raise. The report counts ``rows`` (before), ``kept`` and
    ``zero_rows`` (dropped), with up to five ``examples`` of dropped words; the vectors are
    returned as given (not copied) when nothing is dropped.
    """
    if zero not in ZERO_POLICIES:
        raise ConfigError(f"zero: unknown policy {zero!r}; expected one of {ZERO_POLICIES}")
    mat = np.asarray(vecs)
    if mat.ndim != 2 or mat.shape[0] != len(words):
        raise InputError(
            f"{where}: expected a ({len(words)}, dim) matrix for {len(words)} words, "
            f"got shape {mat.shape}"
        )
    finite = np.isfinite(mat).all(axis=1)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        i = int(bad[0])
        raise InputError(
            f"{where}: word {words[i]!r} (row {i + 1}) has a non-finite value (NaN or inf); "
            f"{len(bad)} of {len(words)} rows do; expected finite floats"
        )
    seen: dict[str, int] = {}
    for i, w in enumerate(words):
        if w in seen:
            raise InputError(
                f"{where}: duplicate word {w!r} at rows {seen[w] + 1} and {i + 1}; "
                "expected each word once"
            )
        seen[w] = i
    zero_rows = np.flatnonzero(~mat.any(axis=1))  # all-zero <=> zero norm
    examples = [words[i] for i in zero_rows[:5]]
    report: dict[str, Any] = {
        "rows": len(words),
        "kept": len(words) - len(zero_rows),
        "zero_rows": len(zero_rows),
        "examples": examples,
    }
    if not len(zero_rows):
        return list(words), mat, report
    if zero == "error":
        raise InputError(
            f"{where}: {len(zero_rows)} of {len(words)} rows have zero norm (e.g. "
            f"{examples[0]!r}, row {zero_rows[0] + 1}); expected non-zero vectors"
        )
    log.warning(
        "%s: dropped %d of %d rows of zero norm (no direction for cosine), e.g. %s",
        where,
        len(zero_rows),
        len(words),
        ", ".join(map(repr, examples)),
    )
    keep = np.ones(len(words), dtype=bool)
    keep[zero_rows] = False
    return [w for w, k in zip(words, keep, strict=True) if k], mat[keep], report


def load_space(
    path: PathLike,
    *,
    max_words: int | None = None,
    lowercase: bool = False,
    zero: str = "drop",
) -> tuple[Space, dict[str, Any]]:
    """A space from ``.npy`` (with ``.vocab.txt``) or word2vec text, checked for retrieval.

    ``max_words`` keeps the most frequent rows (a 2M-word fastText file); ``lowercase``
    folds words to lower case keeping the first (most frequent) row of each form, as
    MUSE's lowercase dictionaries need. The space then goes through :func:`check_space`
    (``where`` = the path): non-finite values and duplicate words raise
    :class:`InputError`; rows of zero norm are dropped with a warning (``zero="drop"``) or
    raise (``zero="error"``). Returns ``((words, float32 vectors), report)``.
    """
    p = Path(path)
    if p.suffix == ".npy":
        words, vecs = read_npy(p)
    else:
        words, vecs = read_vec(p, max_words=max_words)
    report: dict[str, Any] = {"path": str(p), "rows_read": len(words)}
    if max_words is not None and len(words) > max_words:
        words, vecs = words[:max_words], vecs[:max_words]
    if lowercase:
        seen: dict[str, int] = {}
        for i, w in enumerate(words):
            seen.setdefault(w.lower(), i)
        rows = sorted(seen.values())
        report["case_duplicates_dropped"] = len(words) - len(rows)
        words = [words[i].lower() for i in rows]
        vecs = vecs[rows]
    words, vecs, check = check_space(
        words, np.asarray(vecs, dtype=np.float32), where=str(p), zero=zero
    )
    report.update(check)
    report["rows"] = len(words)
    return (words, vecs), report


def save_npy_space(space: Space, stem: PathLike, *, vec_path: PathLike | None = None) -> None:
    """Write a space as ``<stem>.npy`` + ``.vocab.txt`` (and ``.vec`` when asked)."""
    words, vecs = space
    if vec_path is not None:
        write_vec(words, vecs, vec_path)
    write_npy(words, vecs, stem)
