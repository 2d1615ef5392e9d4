"""A space's binary form: ``<stem>.npy`` (float32) and ``<stem>.vocab.txt``, committed as one.

The word list (one word per line, in row order, each word as
:func:`xlalign.core.formats.word2vec.word_problem` allows) and the matrix are two files, so
a writer killed between them could pair new words with old vectors of the same shape. They
are committed together through a third file, ``<stem>.manifest.json``, holding the SHA-256
of both files and the shape:

1. both files are written to temporaries beside their targets;
2. the manifest describing them is written (atomically) *before* either is renamed;
3. the matrix, then the word list, are renamed into place.

A kill at any point leaves either the old pair with its old manifest (before 2), or a
manifest that one of the files does not match (after 2, before the end of 3), which
:func:`read_npy` refuses with a clear error, or the new pair. A pair without a manifest
(written before manifests existed, or by hand) is read with its shape checked only.
"""

from __future__ import annotations

import hashlib
import json
import tokenize
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from xlalign.core.errors import InputError
from xlalign.core.formats.word2vec import check_matrix, word_problem
from xlalign.core.io import PathLike, atomic_path, file_sha256, write_json

#: The ``format`` field of a manifest.
MANIFEST_FORMAT = "xlalign-space/1"


def npy_stem(stem: PathLike) -> str:
    """The stem of a binary space: its path without the `.npy` suffix."""
    s = str(stem)
    return s[: -len(".npy")] if s.endswith(".npy") else s


def npy_paths(stem: PathLike) -> tuple[Path, Path]:
    """The two files of the binary form: ``<stem>.npy`` and ``<stem>.vocab.txt``."""
    s = npy_stem(stem)
    return Path(s + ".npy"), Path(s + ".vocab.txt")


def manifest_path(stem: PathLike) -> Path:
    """``<stem>.manifest.json``: the commit record of the pair."""
    return Path(npy_stem(stem) + ".manifest.json")


def vocab_bytes(words: Sequence[str]) -> bytes:
    """The bytes of a ``.vocab.txt``: one word per line (escaped bytes written back)."""
    return "".join(w + "\n" for w in words).encode("utf-8", "surrogateescape")


def parse_vocab(data: bytes, path: PathLike) -> list[str]:
    """The words of a ``.vocab.txt``'s bytes; a bad or repeated word names its line."""
    if data and not data.endswith(b"\n"):
        data += b"\n"
    words = data.decode("utf-8", "surrogateescape").split("\n")[:-1]
    seen: dict[str, int] = {}
    for i, w in enumerate(words, start=1):
        why = word_problem(w)
        if why is not None:
            raise InputError(f"{path}: line {i}: the word {w!r} {why}")
        if w in seen:
            raise InputError(f"{path}: line {i}: duplicate word {w!r} (first on line {seen[w]})")
        seen[w] = i
    return words


def write_npy(words: Sequence[str], matrix: np.ndarray, stem: PathLike) -> None:
    """Write ``<stem>.npy`` (float32), ``<stem>.vocab.txt`` and their manifest as one commit."""
    npy, vocab = npy_paths(stem)
    mat = np.ascontiguousarray(check_matrix(words, matrix, npy))
    text = vocab_bytes(words)
    with atomic_path(vocab) as tmp_vocab, atomic_path(npy) as tmp_npy:
        tmp_vocab.write_bytes(text)
        with open(tmp_npy, "wb") as fh:
            np.save(fh, mat, allow_pickle=False)
        write_json(
            manifest_path(stem),
            {
                "format": MANIFEST_FORMAT,
                "rows": int(mat.shape[0]),
                "dim": int(mat.shape[1]),
                "dtype": "float32",
                "npy": npy.name,
                "npy_sha256": file_sha256(tmp_npy),
                "vocab": vocab.name,
                "vocab_sha256": hashlib.sha256(text).hexdigest(),
            },
        )
    # leaving the blocks renames the matrix, then the words, into place


def _manifest(stem: PathLike) -> dict[str, Any] | None:
    m = manifest_path(stem)
    try:
        data = json.loads(m.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"{m}: not a readable space manifest ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise InputError(f"{m}: not a space manifest (expected format {MANIFEST_FORMAT!r})")
    return data


def read_npy(stem: PathLike, *, mmap: bool = False) -> tuple[list[str], np.ndarray]:
    """Read the binary form written by :func:`write_npy`: (words, float32 matrix).

    The pair is checked against its manifest (both SHA-256 and the shape) when there is
    one: a pair that does not match was left by an interrupted writer and is refused.
    """
    npy, vocab = npy_paths(stem)
    if not vocab.is_file():
        raise InputError(f"{vocab}: file not found")
    if not npy.is_file():
        raise InputError(f"{npy}: file not found")
    text = vocab.read_bytes()
    manifest = _manifest(stem)
    if manifest is not None:
        got = {
            vocab: ("vocab_sha256", hashlib.sha256(text).hexdigest()),
            npy: ("npy_sha256", file_sha256(npy)),
        }
        bad = [str(path) for path, (key, sha) in got.items() if manifest.get(key) != sha]
        if bad:
            raise InputError(
                f"{' and '.join(bad)}: not the file(s) committed in {manifest_path(stem)} "
                "(a writer was interrupted between the two files, or one was replaced); "
                "expected the pair committed together: re-run the job that writes it"
            )
    words = parse_vocab(text, vocab)
    try:
        mat = np.load(npy, mmap_mode="r" if mmap else None, allow_pickle=False)
    except (ValueError, OSError, EOFError, tokenize.TokenError) as exc:
        # numpy parses the header with tokenize: on Python 3.12+ a NUL byte there raises
        # TokenError rather than a ValueError.
        raise InputError(f"{npy}: not a readable .npy file ({exc})") from exc
    if mat.ndim != 2 or mat.shape[0] != len(words):
        raise InputError(
            f"{npy}: matrix of shape {mat.shape} does not match the {len(words)} words of {vocab}"
        )
    if mat.dtype != np.float32:
        raise InputError(f"{npy}: expected float32 values, got {mat.dtype}")
    if manifest is not None and [manifest.get("rows"), manifest.get("dim")] != list(mat.shape):
        raise InputError(
            f"{npy}: shape {mat.shape} differs from {manifest_path(stem)} "
            f"({manifest.get('rows')}, {manifest.get('dim')})"
        )
    return words, mat
