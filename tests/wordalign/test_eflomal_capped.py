"""Chunked eflomal alignment under a capped address space (issue 28).

One chunk at a time is held (its sentences, eflomal's arrays and vocabulary), the corpus
and the link files are streamed: the same corpus that cannot be aligned in one chunk under
the cap is aligned in chunks under it, with the links of an uncapped run of the same chunk
size. eflomal's binary runs in a subprocess, which inherits the cap (RLIMIT_AS).
"""

from __future__ import annotations

from pathlib import Path

import capped_targets_wordalign as targets
from capped import run_capped

N_PAIRS = 48_000
CHUNK = 6_000
# Measured: the chunks need 20-28 MB over the imports, one chunk of the whole corpus 40-56.
HEADROOM_MB = 32
PRELOAD = ("numpy", "torch", "eflomal", "xlalign.wordalign.eflomal")


def test_chunks_fit_a_cap_that_one_chunk_exceeds(tmp_path: Path) -> None:
    corpus = targets.write_corpus(str(tmp_path / "corpus.tsv"), N_PAIRS)
    whole = run_capped(
        "capped_targets_wordalign:align",
        {"corpus": corpus, "out_dir": str(tmp_path / "whole"), "chunk_size": N_PAIRS},
        headroom_mb=HEADROOM_MB,
        preload=PRELOAD,
    )
    assert whole.out_of_memory, whole.error
    chunked = run_capped(
        "capped_targets_wordalign:align",
        {"corpus": corpus, "out_dir": str(tmp_path / "chunked"), "chunk_size": CHUNK},
        headroom_mb=HEADROOM_MB,
        preload=PRELOAD,
    )
    assert chunked.ok, chunked.error
    assert chunked.value == targets.align(corpus, str(tmp_path / "reference"), CHUNK)
