"""Word alignment with eflomal (real binary): quality on a corpus with known links,
chunking, checkpoints and resuming, temporary files, and the errors that must never turn
into a shifted alignment."""

from __future__ import annotations

import errno
import json
import random
import subprocess
from pathlib import Path

import pytest

from xlalign.core.errors import ConfigError, InputError, ToolError
from xlalign.wordalign import eflomal as wordalign
from xlalign.wordalign.aer import read_gold, score
from xlalign.wordalign.eflomal import (
    AlignmentPaths,
    AlignOptions,
    align_corpus,
    corpus_from_token_files,
    read_aligned_pairs,
)
from xlalign.wordalign.linkdict import dictionary_from_alignment, evaluate_dictionary
from xlalign.wordalign.symmetrize import read_pharaoh

VOCAB = 80


def synthetic_corpus(n: int, seed: int = 0) -> tuple[list[list[str]], list[list[str]], list[set]]:
    """Source sentences over words s0..s79 (Zipf-like), targets word by word through the
    bijection sK -> tK with local reordering (adjacent swaps) and an occasional unaligned
    target word; returns the gold links too."""
    rng = random.Random(seed)
    weights = [1 / (k + 1) for k in range(VOCAB)]
    src_out, tgt_out, gold = [], [], []
    for _ in range(n):
        length = rng.randint(4, 10)
        src = [f"s{k}" for k in rng.choices(range(VOCAB), weights=weights, k=length)]
        order = list(range(length))
        i = 0
        while i < length - 1:
            if rng.random() < 0.3:
                order[i], order[i + 1] = order[i + 1], order[i]
                i += 2
            else:
                i += 1
        tgt, links = [], set()
        for src_pos in order:
            if rng.random() < 0.1:
                tgt.append("zz")  # no source word
            links.add((src_pos, len(tgt)))
            tgt.append("t" + src[src_pos][1:])
        src_out.append(src)
        tgt_out.append(tgt)
        gold.append(links)
    return src_out, tgt_out, gold


def write_corpus(path: Path, src: list[list[str]], tgt: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        fh.write("id\tsource\ttarget\n")
        for k, (s, t) in enumerate(zip(src, tgt, strict=True)):
            fh.write(f"p{k}\t{' '.join(s)}\t{' '.join(t)}\n")
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[set], list, list]:
    d = tmp_path_factory.mktemp("wa")
    src, tgt, gold = synthetic_corpus(1500)
    return write_corpus(d / "corpus.tsv", src, tgt), gold, src, tgt


@pytest.fixture(scope="module")
def aligned(corpus, tmp_path_factory: pytest.TempPathFactory) -> tuple[AlignmentPaths, dict]:
    path, *_ = corpus
    out = AlignmentPaths.in_dir(tmp_path_factory.mktemp("out"))
    stats = align_corpus(
        path,
        out,
        AlignOptions(chunk_size=600, one_to_one=False, drop_identical=False),
        threads=2,
        progress=False,
    )
    return out, stats


def test_recovers_known_links(corpus, aligned) -> None:
    _, gold, src, tgt = corpus
    out, stats = aligned
    sym = list(read_pharaoh(out.symmetrized))
    assert len(sym) == len(gold) == stats["sentences"] == 1500
    result = score(sym, {k: (g, g) for k, g in enumerate(gold)})
    assert result.aer < 0.08, result
    # Each direction alone is worse than or equal to grow-diag-final-and in recall.
    fwd = score(list(read_pharaoh(out.forward)), {k: (g, g) for k, g in enumerate(gold)})
    assert fwd.aer < 0.2
    assert stats["chunks"] == 3 and stats["chunks_resumed"] == 0
    assert stats["kept_links"] == stats["symmetrized_links"]  # filters off
    # The pairs table holds exactly the kept links, with words at their positions.
    rows = list(read_aligned_pairs(out.pairs))
    assert len(rows) == stats["kept_links"]
    for pid, sent, i, j, s, t in rows[:500]:
        assert pid == f"p{sent}" and src[sent][i] == s and tgt[sent][j] == t
        assert (i, j) in sym[sent]
    # A dictionary from the link counts recovers the bijection sK -> tK.
    d = out.pairs.parent
    dstats = dictionary_from_alignment(out.pairs, d / "dict.txt", d / "dict.json")
    pairs = [tuple(x.split()) for x in (d / "dict.txt").read_text().splitlines()]
    truth = [(f"s{k}", f"t{k}") for k in range(VOCAB)]
    ev = evaluate_dictionary(pairs, truth)
    assert ev["p_at_1"] > 0.95 and ev["judged_source_words"] >= 60
    assert dstats["pairs"] == len(pairs)


def test_one_to_one_and_identical_filters(tmp_path: Path) -> None:
    # Identical words (numbers, names) on both sides: linked, then dropped by the filter.
    src, tgt, _ = synthetic_corpus(400, seed=3)
    for s, t in zip(src, tgt, strict=True):
        s.append("2024")
        t.append("2024")
    path = write_corpus(tmp_path / "c.tsv", src, tgt)
    out = AlignmentPaths.in_dir(tmp_path / "o")
    stats = align_corpus(path, out, AlignOptions(), progress=False)
    words = {(s, t) for *_, s, t in read_aligned_pairs(out.pairs)}
    assert ("2024", "2024") not in words
    assert stats["dropped_identical"] >= 300
    # One-to-one: no source or target position appears twice within a sentence.
    seen: set[tuple[int, str, int]] = set()
    for _, sent, i, j, *_ in read_aligned_pairs(out.pairs):
        assert (sent, "s", i) not in seen and (sent, "t", j) not in seen
        seen |= {(sent, "s", i), (sent, "t", j)}


def test_resume_from_checkpoint_after_a_failed_chunk(
    corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, gold, *_ = corpus
    ckpt = tmp_path / "ckpt"
    out = AlignmentPaths.in_dir(tmp_path / "o")
    real = wordalign._align_chunk
    calls = []

    def failing(src, tgt, options, workdir, **kw):
        calls.append(len(src))
        if len(calls) == 2:
            raise ToolError("simulated crash in chunk 2")
        return real(src, tgt, options, workdir, **kw)

    monkeypatch.setattr(wordalign, "_align_chunk", failing)
    opts = AlignOptions(chunk_size=600)
    with pytest.raises(ToolError, match="simulated"):
        align_corpus(path, out, opts, checkpoint_dir=ckpt, progress=False)
    assert not out.forward.exists() and not out.pairs.exists() and not out.stats.exists()
    assert (ckpt / "chunk-00000.fwd").exists() and not (ckpt / "chunk-00001.fwd").exists()

    monkeypatch.setattr(wordalign, "_align_chunk", real)
    stats = align_corpus(path, out, opts, checkpoint_dir=ckpt, progress=False)
    assert stats["chunks_resumed"] == 1 and stats["chunks"] == 3
    assert not ckpt.exists()  # removed after success
    assert sum(1 for _ in read_pharaoh(out.forward)) == len(gold)


def test_checkpoint_of_other_options_is_not_resumed(corpus, tmp_path: Path) -> None:
    path, *_ = corpus
    ckpt = tmp_path / "ckpt"
    out = AlignmentPaths.in_dir(tmp_path / "o")
    align_corpus(
        path,
        out,
        AlignOptions(chunk_size=800),
        checkpoint_dir=ckpt,
        keep_checkpoint=True,
        progress=False,
    )
    stats = align_corpus(
        path,
        out,
        AlignOptions(chunk_size=800, null_prior=0.3),
        checkpoint_dir=ckpt,
        progress=False,
    )
    assert stats["chunks_resumed"] == 0
    kept = align_corpus(
        path,
        out,
        AlignOptions(chunk_size=800, null_prior=0.3),
        checkpoint_dir=ckpt,
        keep_checkpoint=True,
        progress=False,
    )
    assert kept["chunks_resumed"] == 0
    again = align_corpus(
        path,
        out,
        AlignOptions(chunk_size=800, null_prior=0.3, symmetrization="union"),
        checkpoint_dir=ckpt,
        progress=False,
    )
    assert again["chunks_resumed"] == 2  # symmetrisation does not change eflomal's links


def _small_corpus(tmp_path: Path) -> Path:
    src, tgt, _ = synthetic_corpus(50)
    return write_corpus(tmp_path / "c.tsv", src, tgt)


def test_temporary_files_go_to_tmpdir_and_are_removed(tmp_path: Path, monkeypatch) -> None:
    import eflomal

    tmp = tmp_path / "jobtmp"
    seen_dirs = []
    real_align = eflomal.Aligner.align

    def spy(self, src, tgt, **kw):
        import tempfile

        seen_dirs.append(Path(tempfile.gettempdir()))
        assert Path(kw["links_filename_fwd"]).is_relative_to(tmp)
        return real_align(self, src, tgt, **kw)

    monkeypatch.setattr(eflomal.Aligner, "align", spy)
    align_corpus(
        _small_corpus(tmp_path), AlignmentPaths.in_dir(tmp_path / "o"), tmpdir=tmp, progress=False
    )
    assert seen_dirs and all(d.is_relative_to(tmp) for d in seen_dirs)
    assert list(tmp.iterdir()) == []

    def crash(self, src, tgt, **kw):
        raise subprocess.CalledProcessError(-11, ["eflomal"])

    monkeypatch.setattr(eflomal.Aligner, "align", crash)
    out = AlignmentPaths.in_dir(tmp_path / "o2")
    with pytest.raises(ToolError, match="eflomal failed"):
        align_corpus(_small_corpus(tmp_path), out, tmpdir=tmp, progress=False)
    assert list(tmp.iterdir()) == [] and not out.forward.exists()


def test_full_tmpdir_is_reported(tmp_path: Path, monkeypatch) -> None:
    import eflomal

    def full(self, src, tgt, **kw):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(eflomal.Aligner, "align", full)
    with pytest.raises(ToolError, match="no space left in the temporary directory"):
        align_corpus(
            _small_corpus(tmp_path),
            AlignmentPaths.in_dir(tmp_path / "o"),
            tmpdir=tmp_path / "t",
            progress=False,
        )


def test_short_link_file_is_never_shifted(tmp_path: Path, monkeypatch) -> None:
    import eflomal

    def truncated(self, src, tgt, *, links_filename_fwd, links_filename_rev, **kw):
        Path(links_filename_fwd).write_text("0-0\n" * (len(src) - 1))
        Path(links_filename_rev).write_text("0-0\n" * len(src))

    monkeypatch.setattr(eflomal.Aligner, "align", truncated)
    with pytest.raises(ToolError, match="49 lines for 50 sentence pairs"):
        align_corpus(_small_corpus(tmp_path), AlignmentPaths.in_dir(tmp_path / "o"), progress=False)


def test_out_of_range_links_are_an_error(tmp_path: Path, monkeypatch) -> None:
    import eflomal

    def wild(self, src, tgt, *, links_filename_fwd, links_filename_rev, **kw):
        Path(links_filename_fwd).write_text("0-0\n" * (len(src) - 1) + "0-99\n")
        Path(links_filename_rev).write_text("0-0\n" * len(src))

    monkeypatch.setattr(eflomal.Aligner, "align", wild)
    with pytest.raises(InputError, match="p49"):
        align_corpus(_small_corpus(tmp_path), AlignmentPaths.in_dir(tmp_path / "o"), progress=False)


def test_token_files_must_be_line_aligned(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("x y\nz\nw\n")
    b.write_text("X Y\nZ\n")
    with pytest.raises(InputError, match=r"a\.txt has 3 lines but .*b\.txt has 2"):
        corpus_from_token_files(a, b, tmp_path / "c.tsv")
    assert not (tmp_path / "c.tsv").exists()
    b.write_text("X Y\n\nW\n")
    with pytest.raises(InputError, match=r"b\.txt: line 2 is empty"):
        corpus_from_token_files(a, b, tmp_path / "c.tsv")
    b.write_text("X Y\nZ\nW\n")
    assert corpus_from_token_files(a, b, tmp_path / "c.tsv") == 3


def test_bad_options() -> None:
    with pytest.raises(ConfigError, match="symmetrization"):
        AlignOptions(symmetrization="grow-diag-final-or")
    with pytest.raises(ConfigError, match="iterations"):
        AlignOptions(iterations=(1, 2))
    with pytest.raises(ConfigError, match="chunk_size"):
        AlignOptions(chunk_size=0)
    opts = AlignOptions.from_config({"model": 2, "iterations": [1, 2, 3], "dictionary": {}})
    assert opts.model == 2 and opts.iterations == (1, 2, 3)


def test_stats_record_rates(aligned) -> None:
    out, _ = aligned
    saved = json.loads(out.stats.read_text())
    assert saved["sentences_per_s"] > 0 and saved["seeded"] is True
    assert 0.5 < saved["source_coverage"] <= 1 and 0.5 < saved["target_coverage"] <= 1
    assert saved["symmetrized_links_per_sentence"] == pytest.approx(
        saved["symmetrized_links"] / 1500
    )


def test_gold_roundtrip_with_aer_reader(tmp_path: Path, corpus) -> None:
    # The AER tool reads what the aligner writes.
    _, gold, *_ = corpus
    g = tmp_path / "gold.txt"
    g.write_text("\n".join(" ".join(f"{i}-{j}" for i, j in sorted(x)) for x in gold[:20]) + "\n")
    parsed = read_gold(g)
    assert parsed[3][0] == gold[3]


def test_seeded_runs_are_identical_and_seeds_differ(tmp_path: Path) -> None:
    src, tgt, _ = synthetic_corpus(300, seed=5)
    path = write_corpus(tmp_path / "c.tsv", src, tgt)
    texts = {}
    for name, seed, threads in (("a", 7, 2), ("b", 7, 1), ("c", 8, 2)):
        out = AlignmentPaths.in_dir(tmp_path / name)
        stats = align_corpus(
            path, out, AlignOptions(seed=seed, chunk_size=150), threads=threads, progress=False
        )
        assert stats["seeded"] is True
        texts[name] = out.forward.read_text() + out.reverse.read_text()
    assert texts["a"] == texts["b"]  # and independent of the thread count
    assert texts["a"] != texts["c"]
    assert wordalign.chunk_seed(7, 0) != wordalign.chunk_seed(7, 1)


def test_seed_needs_a_compiler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    with pytest.raises(ToolError, match="could not build"):
        wordalign.seed_shim(tmp_path)
    monkeypatch.delenv("CC")
    monkeypatch.setattr(wordalign.shutil, "which", lambda name: None)
    with pytest.raises(ToolError, match=r"set wordalign\.seed: null"):
        wordalign.seed_shim(tmp_path)
