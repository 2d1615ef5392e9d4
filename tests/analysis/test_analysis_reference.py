"""eflomal's reference links for test pairs aligned with a training sample (real eflomal
on a tiny synthetic corpus)."""

from __future__ import annotations

import random

import pytest

from xlalign.analysis.reference import eflomal_reference, eflomal_word
from xlalign.core.errors import InputError
from xlalign.wordalign.aer import score

pytest.importorskip("eflomal")


def synthetic(n: int, seed: int) -> tuple[list[list[str]], list[list[str]], list[set]]:
    """Source words s0..s29, target tK for sK, with adjacent swaps; the true links."""
    rng = random.Random(seed)
    src_out, tgt_out, gold = [], [], []
    for _ in range(n):
        src = [f"s{rng.randrange(30)}" for _ in range(rng.randint(3, 7))]
        order = list(range(len(src)))
        if len(src) > 3 and rng.random() < 0.5:
            order[1], order[2] = order[2], order[1]
        src_out.append(src)
        tgt_out.append(["t" + src[p][1:] for p in order])
        gold.append({(p, q) for q, p in enumerate(order)})
    return src_out, tgt_out, gold


def test_eflomal_reference_aligns_the_test_pairs(tmp_path) -> None:
    train_src, train_tgt, _ = synthetic(300, 0)
    test_src, test_tgt, truth = synthetic(12, 1)
    links = eflomal_reference(test_src, test_tgt, train_src, train_tgt, seed=0, tmpdir=tmp_path)
    assert len(links) == 12
    for k, ls in enumerate(links):
        assert all(i < len(test_src[k]) and j < len(test_tgt[k]) for i, j in ls)
    res = score(links, {k: (g, g) for k, g in enumerate(truth)})
    assert res.aer < 0.15, res
    # seeded: the same links again
    assert eflomal_reference(test_src, test_tgt, train_src, train_tgt, seed=0) == links


def test_eflomal_reference_errors() -> None:
    with pytest.raises(InputError, match="test"):
        eflomal_reference([["a"]], [], [], [])
    with pytest.raises(InputError, match="empty"):
        eflomal_reference([["a"]], [[]])
    with pytest.raises(InputError, match="empty token"):
        eflomal_reference([["a", ""]], [["c"]])


def test_eflomal_word_keeps_a_full_width_space_a_word_of_its_own() -> None:
    # KFTT ja-en writes U+3000 as a word: eflomal (which splits on whitespace) gets a
    # visible stand-in, so the later words keep their positions
    assert eflomal_word("\u3000") == "<U+3000>"
    assert eflomal_word("a\tb") == "a<U+0009>b"
    assert eflomal_word("word") == "word"


def test_only_the_first_chunk_is_aligned_and_its_links_are_the_whole_runs(tmp_path) -> None:
    """The test pairs sit in the first chunk: the later chunks are not aligned, and the
    links are those of a run over the whole corpus (priors learnt on the whole corpus's
    sample, the first chunk's seed)."""
    from xlalign.core.formats.parallel import write_parallel
    from xlalign.wordalign.eflomal import AlignmentPaths, AlignOptions, align_corpus
    from xlalign.wordalign.symmetrize import read_pharaoh

    train_src, train_tgt, _ = synthetic(330, 0)
    test_src, test_tgt, _ = synthetic(12, 1)
    opts = AlignOptions(chunk_size=100, shared_priors=True, shared_priors_sample=60, seed=0)
    corpus = tmp_path / "corpus.tsv"
    pairs = [*zip(test_src, test_tgt, strict=True), *zip(train_src, train_tgt, strict=True)]
    write_parallel(corpus, [(f"p{k}", s, t) for k, (s, t) in enumerate(pairs)])
    runs = {}
    for name, first in (("whole", None), ("first", 1)):
        out = AlignmentPaths.in_dir(tmp_path / name)
        out.stats.parent.mkdir()
        stats = align_corpus(corpus, out, opts, progress=False, first_chunks=first)
        runs[name] = (stats, list(read_pharaoh(out.symmetrized)))
    whole, first = runs["whole"], runs["first"]
    assert (whole[0]["chunks"], whole[0]["chunks_aligned"], whole[0]["sentences"]) == (4, 4, 342)
    assert (first[0]["chunks"], first[0]["chunks_aligned"], first[0]["sentences"]) == (4, 1, 100)
    learnt = [
        {k: v for k, v in r[0]["shared_priors"].items() if k != "seconds"} for r in runs.values()
    ]
    assert learnt[0] == learnt[1] and learnt[0]["sample_pairs"] == 60
    assert first[1] == whole[1][:100]
    links = eflomal_reference(
        test_src, test_tgt, train_src, train_tgt, options=opts, seed=0, tmpdir=tmp_path
    )
    assert links == whole[1][:12]
