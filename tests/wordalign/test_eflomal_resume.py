"""eflomal word alignment killed part-way (SIGTERM, then SIGKILL) resumes to the same links.

The finished chunks are the checkpoint: SIGTERM stops the job at once (eflomal's own
process is killed with it), the re-run aligns only the missing chunks, and with the seed
the links equal an uninterrupted run's byte for byte.
"""

from __future__ import annotations

import random
import signal
from dataclasses import asdict
from pathlib import Path

import pytest
import resume

from xlalign.core import interrupt
from xlalign.wordalign.eflomal import AlignmentPaths, AlignOptions, align_corpus

CHUNK = 40
N_PAIRS = 200  # five chunks


@pytest.fixture(autouse=True)
def _no_request() -> None:
    interrupt.reset()


def _corpus(path: Path, n: int = N_PAIRS) -> Path:
    rng = random.Random(0)
    with path.open("w", encoding="utf-8") as fh:
        fh.write("id\tsource\ttarget\n")
        for k in range(n):
            src = [f"s{rng.randrange(40)}" for _ in range(rng.randint(4, 9))]
            tgt = ["t" + w[1:] for w in src]
            if len(tgt) > 2 and rng.random() < 0.4:
                tgt[0], tgt[1] = tgt[1], tgt[0]
            fh.write(f"p{k}\t{' '.join(src)}\t{' '.join(tgt)}\n")
    return path


_CHILD = """
from pathlib import Path
from xlalign.wordalign import eflomal
if ARGS.get("pause_at"):
    resume.pause_after(eflomal._ChunkStore, "save", flag=ARGS["flag"],
                       when=lambda store, k, *a: k == int(ARGS["pause_at"]))
eflomal.align_corpus(ARGS["corpus"], eflomal.AlignmentPaths.in_dir(ARGS["out"]),
                     eflomal.AlignOptions(**json.loads(ARGS["options"])),
                     tmpdir=ARGS["tmp"], checkpoint_dir=ARGS["ckpt"], progress=False)
"""


def test_alignment_resumes_after_sigterm_and_sigkill(tmp_path: Path) -> None:
    import json

    corpus = _corpus(tmp_path / "corpus.tsv")
    options = AlignOptions(chunk_size=CHUNK, seed=3)
    out, ckpt, tmp = tmp_path / "out", tmp_path / "out.checkpoint", tmp_path / "tmp"
    paths = AlignmentPaths.in_dir(out)
    outputs = [paths.forward, paths.reverse, paths.symmetrized, paths.pairs, paths.stats]
    args = {
        "corpus": str(corpus),
        "out": str(out),
        "ckpt": str(ckpt),
        "tmp": str(tmp),
        "options": json.dumps(asdict(options)),
    }
    # SIGTERM as soon as chunk 2 is kept: it lands in chunk 3 (in eflomal's process or
    # around it), which is lost; chunks 1 and 2 stay.
    stopped = resume.run_and_stop(
        _CHILD, args, tmp_path, signal.SIGTERM, ready=lambda: (ckpt / "chunk-00001.rev").exists()
    )
    assert stopped.returncode == resume.SIGTERM_STATUS, stopped.log
    assert "stopped by SIGTERM" in stopped.log
    assert "chunks aligned; a re-run resumes there" in stopped.log
    kept = sorted(p.name for p in ckpt.glob("chunk-*"))
    assert kept[:4] == ["chunk-00000.fwd", "chunk-00000.rev", "chunk-00001.fwd", "chunk-00001.rev"]
    assert len(kept) < 10
    resume.assert_nothing_finished(outputs, [ckpt])
    assert not list(tmp.glob("xlalign-eflomal-*"))  # eflomal's files went with it

    stopped = resume.run_and_stop(
        _CHILD, {**args, "pause_at": "3"}, tmp_path, signal.SIGKILL, name="second"
    )
    assert stopped.returncode == -signal.SIGKILL
    assert f"{ckpt}: resuming at chunk {len(kept) // 2 + 1} of 5" in stopped.log
    assert (ckpt / "chunk-00003.rev").exists() and not (ckpt / "chunk-00004.fwd").exists()
    resume.assert_nothing_finished(outputs, [ckpt])

    stats = align_corpus(corpus, paths, options, tmpdir=tmp, checkpoint_dir=ckpt, progress=False)
    assert stats["chunks_resumed"] == 4 and not ckpt.exists()
    straight = AlignmentPaths.in_dir(tmp_path / "straight")
    expected = align_corpus(corpus, straight, options, tmpdir=tmp, progress=False)
    for name in ("forward", "reverse", "symmetrized", "pairs"):
        assert getattr(paths, name).read_bytes() == getattr(straight, name).read_bytes(), name
    assert stats["kept_links"] == expected["kept_links"]
