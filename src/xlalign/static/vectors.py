"""Word vectors of the static stages: the readers and writers, and spaces checked for retrieval.

The file formats have one reader and one writer each, in :mod:`xlalign.core.formats`
(re-exported here): word2vec text (``.vec``, what VecMap and MUSE read; 6 significant
digits) and binary (``.bin``) in :mod:`xlalign.core.formats.word2vec`, which says what a
word is and how invalid UTF-8, duplicates and the header are handled; the project's binary
form ``<stem>.npy`` + ``<stem>.vocab.txt``, committed as one through a manifest, in
:mod:`xlalign.core.formats.space`. Every writer is atomic; every reader names the file and
line of any fault.

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
from xlalign.core.formats.space import npy_paths, npy_stem, read_npy, write_npy
from xlalign.core.formats.word2vec import (
    DEFAULT_ENCODING_ERRORS,
    read_bin,
    read_vec,
    write_bin,
    write_vec,
)
from xlalign.core.io import PathLike

__all__ = [
    "Space",
    "check_space",
    "load_space",
    "npy_paths",
    "npy_stem",
    "read_bin",
    "read_npy",
    "read_vec",
    "save_npy_space",
    "write_bin",
    "write_npy",
    "write_vec",
]

log = logging.getLogger(__name__)

#: What :func:`check_space` does with rows of zero norm.
ZERO_POLICIES = ("drop", "error")
#: A space in memory: its words (rows in frequency order) and their vectors.
Space = tuple[list[str], np.ndarray]


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
    encoding_errors: str = DEFAULT_ENCODING_ERRORS,
    duplicates: str = "error",
) -> tuple[Space, dict[str, Any]]:
    """A space from ``.npy`` (with ``.vocab.txt``), word2vec binary (``.bin``) or word2vec
    text (any other name, possibly compressed), checked for retrieval.

    ``max_words`` keeps the most frequent rows (a 2M-word fastText file); ``lowercase``
    folds words to lower case keeping the first (most frequent) row of each form, as
    MUSE's lowercase dictionaries need. The space then goes through :func:`check_space`
    (``where`` = the path): non-finite values and duplicate words raise
    :class:`InputError`; rows of zero norm are dropped with a warning (``zero="drop"``) or
    raise (``zero="error"``). ``encoding_errors`` and ``duplicates`` are passed to the
    word2vec readers (:mod:`xlalign.core.formats.word2vec`); the report then holds their
    counts (``invalid_utf8_rows``, ...). A space with no word left (a ``0 <dim>`` header)
    raises :class:`InputError` naming the path. Returns ``((words, float32 vectors),
    report)``.
    """
    p = Path(path)
    read: dict[str, Any] = {}
    if p.suffix == ".npy":
        words, vecs = read_npy(p)
    else:
        reader = read_bin if p.name.endswith((".bin", ".bin.gz")) else read_vec
        words, vecs = reader(
            p,
            max_words=max_words,
            encoding_errors=encoding_errors,
            duplicates=duplicates,
            report=read,
        )
    report: dict[str, Any] = {"path": str(p), "rows_read": len(words), **read}
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
    if not words:
        raise InputError(
            f"{p}: no word vectors ({report['rows_read']} rows read"
            f"{', none kept' if report['rows_read'] else ''}); expected a non-empty space"
        )
    return (words, vecs), report


def save_npy_space(space: Space, stem: PathLike, *, vec_path: PathLike | None = None) -> None:
    """Write a space as ``<stem>.npy`` + ``.vocab.txt`` (and ``.vec`` when asked)."""
    words, vecs = space
    if vec_path is not None:
        write_vec(words, vecs, vec_path)
    write_npy(words, vecs, stem)
