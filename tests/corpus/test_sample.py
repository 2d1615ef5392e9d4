"""Stage `sample`: budget, determinism, uniformity, streaming and bad input."""

from __future__ import annotations

import lzma
import random
import tracemalloc
from pathlib import Path

import pytest

from xlalign.core.errors import InputError
from xlalign.corpus.sample import estimate_sentences, sample_corpus, sample_paragraphs
from xlalign.corpus.sources import Paragraph, iter_paragraph_text


def _paragraphs(n: int, *, doc_every: int = 5, seed: int = 0) -> list[Paragraph]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        k = rng.randint(1, 6)
        text = " ".join(f"Sentence {j} of paragraph {i} is here." for j in range(k))
        out.append(Paragraph(text, i // doc_every))
    return out


def _reference(pars: list[Paragraph], n: int, seed: int) -> list[Paragraph]:
    """Brute force: all keys, key order, shortest prefix within the budget."""
    rng = random.Random(seed)
    keyed = sorted(((rng.random(), i, p) for i, p in enumerate(pars)), key=lambda e: e[0])
    chosen, total = [], 0
    for _k, i, p in keyed:
        w = estimate_sentences(p.text)
        if total + w > n:
            break
        chosen.append((i, p))
        total += w
    return [p for _i, p in sorted(chosen, key=lambda e: e[0])]


def test_estimate_sentences_across_scripts() -> None:
    assert estimate_sentences("One. Two! Three?") == 3
    assert estimate_sentences("Version 3.5 is out. Really") == 2
    assert estimate_sentences("我爱北京。天安门很大！") == 2
    assert estimate_sentences("هل أنت بخير؟ نعم.") == 2
    assert estimate_sentences("यह एक वाक्य है। यह दूसरा है।") == 2
    assert estimate_sentences("no terminal punctuation at all") == 1


@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("budget", [1, 17, 300, 10_000])
def test_reservoir_equals_bruteforce_reference(seed: int, budget: int) -> None:
    pars = _paragraphs(800, seed=seed)
    got = sample_paragraphs(iter(pars), max_sentences=budget, seed=seed)
    assert got == _reference(pars, budget, seed)
    total = sum(estimate_sentences(p.text) for p in got)
    assert total <= budget
    if budget < sum(estimate_sentences(p.text) for p in pars):
        assert total > budget - 6  # the next paragraph in key order would not fit


def test_deterministic_by_seed_and_seed_matters() -> None:
    pars = _paragraphs(500)
    a = sample_paragraphs(iter(pars), max_sentences=200, seed=3)
    b = sample_paragraphs(iter(pars), max_sentences=200, seed=3)
    c = sample_paragraphs(iter(pars), max_sentences=200, seed=4)
    assert a == b
    assert a != c


def test_reservoir_is_uniform_over_the_stream() -> None:
    pars = [Paragraph(f"Paragraph {i}.", i) for i in range(400)]
    hits = [0] * 4
    for seed in range(300):
        for p in sample_paragraphs(iter(pars), max_sentences=40, seed=seed):
            hits[p.doc // 100] += 1
    # 300 draws x 40 = 12,000 picks; each quarter of the stream expects 3,000.
    assert all(abs(h - 3000) < 300 for h in hits), hits


def test_memory_bounded_by_sample_not_by_stream() -> None:
    def stream():
        for i in range(200_000):
            yield Paragraph(f"Paragraph number {i} has words. " * 4, i // 10)

    tracemalloc.start()
    got = sample_paragraphs(stream(), max_sentences=100, seed=0)
    _cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert sum(estimate_sentences(p.text) for p in got) <= 100
    # The stream holds ~30 MB of text; a bounded reservoir stays far below that.
    assert peak < 3_000_000, peak


def test_head_stops_reading_early() -> None:
    def stream():
        yield from _paragraphs(50)
        raise AssertionError("head strategy read past its budget")

    got = sample_paragraphs(stream(), max_sentences=20, seed=0, strategy="head")
    assert 0 < sum(estimate_sentences(p.text) for p in got) <= 20
    assert got == _paragraphs(50)[: len(got)]


def test_max_paragraphs_scanned() -> None:
    pars = _paragraphs(1000)
    got = sample_paragraphs(iter(pars), max_sentences=10**6, seed=0, max_paragraphs_scanned=100)
    assert got == pars[:100]


def test_sample_corpus_keeps_order_and_document_boundaries(tmp_path: Path) -> None:
    src = tmp_path / "in.txt.xz"
    docs = [[f"Doc {d} paragraph {p}. It has two sentences." for p in range(3)] for d in range(30)]
    with lzma.open(src, "wt", encoding="utf-8") as fh:
        fh.write("\n\n".join("\n".join(doc) for doc in docs) + "\n")
    out, stats_path = tmp_path / "s.txt", tmp_path / "s.json"
    stats = sample_corpus(
        iter_paragraph_text(src, language="en"),
        out,
        stats_path,
        language="en",
        max_sentences=40,
        seed=1,
        progress=False,
    )
    blocks = [b.splitlines() for b in out.read_text(encoding="utf-8").strip().split("\n\n")]
    flat = [line for b in blocks for line in b]
    assert stats["paragraphs_out"] == len(flat) == 20
    assert stats["paragraphs_scanned"] == 90 and stats["documents_scanned"] == 30
    order = [(int(line.split()[1]), int(line.split()[3].rstrip("."))) for line in flat]
    assert order == sorted(order)  # stream order
    for b in blocks:  # one document per block
        assert len({line.split()[1] for line in b}) == 1
    assert stats_path.exists()


def test_truncated_xz_names_file_and_language_and_leaves_no_output(tmp_path: Path) -> None:
    src = tmp_path / "de.txt.xz"
    payload = lzma.compress(("Ein Absatz. Noch ein Satz.\n" * 20000).encode())
    src.write_bytes(payload[: len(payload) // 2])
    out = tmp_path / "out.txt"
    with pytest.raises(InputError, match=r"de\.txt\.xz.*'de'.*truncated"):
        sample_corpus(
            iter_paragraph_text(src, language="de"),
            out,
            tmp_path / "out.json",
            language="de",
            max_sentences=10,
            seed=0,
            progress=False,
        )
    assert not out.exists() and not (tmp_path / "out.json").exists()
    assert list(tmp_path.iterdir()) == [src]  # no temporary file left behind


def test_invalid_utf8_names_line(tmp_path: Path) -> None:
    src = tmp_path / "ru.txt"
    src.write_bytes("Первый абзац.\n".encode() + b"\xff\xfe broken\n")
    with pytest.raises(InputError, match=r"ru\.txt.*'ru'.*line 2"):
        sample_corpus(
            iter_paragraph_text(src, language="ru"),
            tmp_path / "o.txt",
            tmp_path / "o.json",
            language="ru",
            max_sentences=10,
            seed=0,
            progress=False,
        )
    assert not (tmp_path / "o.txt").exists()


@pytest.mark.parametrize("content", ["", "\n\n   \n"])
def test_empty_corpus_is_an_error(tmp_path: Path, content: str) -> None:
    src = tmp_path / "sw.txt"
    src.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=r"'sw'.*non-empty"):
        sample_corpus(
            iter_paragraph_text(src, language="sw"),
            tmp_path / "o.txt",
            tmp_path / "o.json",
            language="sw",
            max_sentences=10,
            seed=0,
            sources=[{"type": "text", "path": str(src)}],
            progress=False,
        )


def test_missing_corpus_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.txt.*not found"):
        list(iter_paragraph_text(tmp_path / "nope.txt", language="en"))
