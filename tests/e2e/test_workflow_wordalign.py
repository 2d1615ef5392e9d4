"""The word-alignment stage in the workflow: OPUS-100 and WikiMatrix fetched from a
loopback HTTP server plus local files, tokenised, aligned with eflomal, symmetrised,
filtered and read off as a dictionary; bad bitext fails its job and leaves nothing."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest
import yaml
from httpserver import serve
from small_corpora import EN, corpus_text
from snakemake_runner import planned_jobs, snakemake

from xlalign.wordalign.eflomal import read_aligned_pairs

VOCAB = 40


def _bitext(n: int, seed: int) -> list[tuple[str, str]]:
    """English-side words e0..e39, German-side g0..g39 (a bijection), adjacent swaps."""
    rng = random.Random(seed)
    weights = [1 / (k + 1) for k in range(VOCAB)]
    out = []
    for _ in range(n):
        ks = rng.choices(range(VOCAB), weights=weights, k=rng.randint(4, 9))
        tgt = list(ks)
        if rng.random() < 0.5:
            tgt[0], tgt[1] = tgt[1], tgt[0]
        out.append((" ".join(f"e{k}" for k in ks) + " .", " ".join(f"g{k}" for k in tgt) + " ."))
    return out


def _config(work: Path, url: str) -> dict:
    data = work / "data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "en.txt").write_text(corpus_text(EN), encoding="utf-8")
    (data / "de.txt").write_text(corpus_text(EN), encoding="utf-8")
    local = _bitext(60, seed=3)
    (data / "local.en").write_text("".join(e + "\n" for e, _ in local), encoding="utf-8")
    (data / "local.de").write_text("".join(d + "\n" for _, d in local), encoding="utf-8")
    return {
        "name": "wa",
        "languages": ["en", "de"],
        "seeds": [1],
        "corpus": {
            "sources": {
                lang: [{"type": "text", "path": f"data/{lang}.txt"}] for lang in ("en", "de")
            }
        },
        "segment": {"tools": {"en": "icu", "de": "icu"}},
        "parallel": {
            "sources": {
                "en-de": [
                    {"type": "opus100"},
                    {"type": "wikimatrix", "min_score": 1.05},
                    {"type": "files", "paths": {"en": "data/local.en", "de": "data/local.de"}},
                ]
            },
            "max_pairs": 700,
        },
        "wordalign": {"chunk_size": 300, "dictionary": {"min_count": 3}},
        "downloads": {
            "opus100": {"url": url + "/opus-100/{pair}/opus.{pair}-{split}.{lang}"},
            "wikimatrix": {"url": url + "/wm/WikiMatrix.{pair}.tsv.gz"},
        },
    }


def _files(opus_de_lines: int | None = None) -> dict[str, bytes]:
    opus = _bitext(600, seed=1)
    wm = _bitext(200, seed=2)
    de_lines = [d for _, d in opus][:opus_de_lines]
    # WikiMatrix's columns: score, then the pair's languages in alphabetical order (de, en).
    rows = [f"{1.0 + (k % 10) / 100:.2f}\t{d}\t{e}\n" for k, (e, d) in enumerate(wm)]
    return {
        "/opus-100/de-en/opus.de-en-train.en": "".join(e + "\n" for e, _ in opus).encode(),
        "/opus-100/de-en/opus.de-en-train.de": "".join(x + "\n" for x in de_lines).encode(),
        "/wm/WikiMatrix.de-en.tsv.gz": gzip.compress("".join(rows).encode()),
    }


TARGET = "results/wa/dictionaries/alignment/en-de.txt"


@pytest.mark.slow
def test_bitext_sources_to_dictionary(tmp_path: Path) -> None:
    with serve(_files()) as srv:
        cfg = _config(tmp_path, srv.url(""))
        (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
        planned = planned_jobs(snakemake(tmp_path, "--configfile", "c.yaml", "-n", TARGET))
        assert planned == {
            "download_opus100": 2,
            "download_wikimatrix": 1,
            "parallel_corpus": 1,
            "word_align": 1,
            "alignment_dictionary": 1,
        }
        snakemake(tmp_path, "--configfile", "c.yaml", "--cores", "2", TARGET)

    res = tmp_path / "results/wa"
    corpus = json.loads((res / "parallel/en-de/corpus.json").read_text())
    by_name = {s["name"]: s for s in corpus["sources"]}
    assert by_name["opus100-0"]["read"] == 600 and by_name["files-2"]["read"] == 60
    wm = next(s for s in corpus["sources"] if s["kind"] == "wikimatrix")
    assert wm["read"] == 200 and wm["low_score"] == 100  # scores 1.00-1.04 of every ten
    assert corpus["pairs_out"] == 700 and corpus["tokenisers"]["de"]["tool"].startswith("icu")
    lines = (res / "parallel/en-de/corpus.tsv").read_text().splitlines()
    assert lines[0] == "id\tsource\ttarget" and len(lines) == 701
    # Every English side is English (e*), whichever source it came from.
    assert all(row.split("\t")[1].startswith("e") for row in lines[1:])

    stats = json.loads((res / "alignment/en-de/stats.json").read_text())
    assert stats["sentences"] == 700 and stats["chunks"] == 3
    assert stats["options"]["symmetrization"] == "grow-diag-final-and"
    for name in ("forward", "reverse", "symmetrized"):
        assert len((res / f"alignment/en-de/{name}.txt").read_text().splitlines()) == 700
    rows = list(read_aligned_pairs(res / "alignment/en-de/pairs.tsv"))
    assert rows and all(not (s == "." and t == ".") for *_, s, t in rows)  # identical dropped
    correct = sum(s[1:] == t[1:] for *_, s, t in rows)
    assert correct / len(rows) > 0.9

    pairs = [
        tuple(x.split())
        for x in (res / "dictionaries/alignment/en-de.txt").read_text().splitlines()
    ]
    first = {}
    for s, t in pairs:
        first.setdefault(s, t)
    assert len(first) >= 30
    assert sum(t == "g" + s[1:] for s, t in first.items()) / len(first) > 0.9
    assert not (tmp_path / "results/wa/alignment/en-de.checkpoint").exists()
    assert planned_jobs(snakemake(tmp_path, "--configfile", "c.yaml", "-n", TARGET)) == {}


@pytest.mark.slow
def test_misaligned_bitext_fails_and_leaves_no_corpus(tmp_path: Path) -> None:
    with serve(_files(opus_de_lines=599)) as srv:
        cfg = _config(tmp_path, srv.url(""))
        (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
        r = snakemake(tmp_path, "--configfile", "c.yaml", "--cores", "1", TARGET, check=False)
    assert r.returncode != 0
    assert not (tmp_path / "results/wa/parallel/en-de/corpus.tsv").exists()
    log = (tmp_path / "logs/wa/parallel_corpus/en-de.log").read_text()
    assert "600" in log and "599" in log and "opus.de-en-train.de" in log
