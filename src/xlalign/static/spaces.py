"""Writing static spaces: the words a method could actually give a vector, and their files."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, write_json
from xlalign.static.vectors import write_npy, write_vec

log = logging.getLogger(__name__)


def save_space(
    words: Sequence[str],
    vectors: np.ndarray,
    keep: np.ndarray,
    *,
    vec_path: PathLike,
    npy_stem: PathLike,
    stats_path: PathLike,
    stats: dict[str, Any],
    language: str,
    reason: str,
) -> dict[str, Any]:
    """Write the rows of ``vectors`` selected by ``keep`` as ``.vec`` + ``.npy`` and stats.

    Words without a learned vector (``reason``: e.g. never seen with a context) are left
    out rather than written with a random or zero vector, and are listed in the stats.
    """
    keep = np.asarray(keep, dtype=bool)
    if not keep.any():
        raise InputError(f"language {language!r}: no word got a vector ({reason})")
    dropped = [w for w, k in zip(words, keep, strict=True) if not k]
    if dropped:
        log.warning("%s: %d word(s) left out, %s: %s", language, len(dropped), reason, dropped[:20])
    kept_words = [w for w, k in zip(words, keep, strict=True) if k]
    kept = np.ascontiguousarray(vectors[keep], dtype=np.float32)
    write_vec(kept_words, kept, vec_path)
    write_npy(kept_words, kept, npy_stem)
    out = {
        **stats,
        "language": language,
        "words": len(kept_words),
        "dim": int(kept.shape[1]),
        "words_left_out": len(dropped),
        "words_left_out_reason": reason,
        "words_left_out_examples": dropped[:50],
    }
    write_json(stats_path, out)
    return out
