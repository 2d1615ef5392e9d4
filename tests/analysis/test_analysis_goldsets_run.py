"""The analyses on configured public gold sets: every set scored and recorded per set
(a tiny encoder; real eflomal with the pair's bitext given in the other direction)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_analysis_reference import synthetic
from tiny_encoder import TINY_LAYERS, make_fixed_vocab_encoder

from xlalign.analysis import reference
from xlalign.analysis.experiment import _Bitext, run_eflomal_reference, run_encoder_analysis
from xlalign.core.formats.parallel import write_parallel


def _awesome(tmp_path: Path, name: str, src, tgt, links) -> dict:
    text = tmp_path / f"{name}.src-tgt"
    gold = tmp_path / f"{name}.gold"
    text.write_text(
        "".join(f"{' '.join(s)} ||| {' '.join(t)}\n" for s, t in zip(src, tgt, strict=True))
    )
    # 1-indexed as the published files
    gold.write_text(
        "".join(" ".join(f"{i + 1}-{j + 1}" for i, j in sorted(g)) + "\n" for g in links)
    )
    return {"pair": "xx-yy", "format": "awesome", "base": 1, "paths": [str(text), str(gold)]}


def test_eflomal_reference_per_set_with_the_bitext_in_either_direction(tmp_path: Path) -> None:
    pytest.importorskip("eflomal")
    train_src, train_tgt, _ = synthetic(300, 0)
    test_src, test_tgt, truth = synthetic(12, 1)
    corpus = tmp_path / "yy-xx.tsv"  # the pair's bitext, target language first
    write_parallel(
        corpus, [(f"p{k}", t, s) for k, (s, t) in enumerate(zip(train_src, train_tgt, strict=True))]
    )
    sets = {
        "with-bitext": _awesome(tmp_path, "a", test_src, test_tgt, truth),
        "alone": _awesome(tmp_path, "b", test_src, test_tgt, truth),
    }
    out = run_eflomal_reference(
        gold_source="handmade", corpus_tsv=None, output=tmp_path / "ref.json",
        sets=sets, corpora={"with-bitext": (corpus, True)}, seed=0,
    )  # fmt: skip
    per = out["gold_sets"]
    assert per["with-bitext"]["training_pairs"] == 300 and per["alone"]["training_pairs"] == 0
    assert per["with-bitext"]["aer"] < 0.15
    assert out["aer"] == per["with-bitext"]["aer"]  # the first set at the top
    # the bitext is read in the set's direction
    assert list(_Bitext(corpus, None, swap=True)) == list(zip(train_src, train_tgt, strict=True))
    five = _Bitext(corpus, 5)
    assert [s for s, _ in five] == train_tgt[:5] and five.count == 5


def test_eflomal_reference_aligns_in_the_stages_chunks(tmp_path: Path, monkeypatch) -> None:
    # the stage's chunk size and shared priors, not one chunk of the whole bitext; the
    # gold pairs first, so in the first (full) chunk; the bitext capped by max_pairs
    pytest.importorskip("eflomal")
    train_src, train_tgt, _ = synthetic(300, 0)
    test_src, test_tgt, truth = synthetic(12, 1)
    corpus = tmp_path / "xx-yy.tsv"
    pairs = zip(train_src, train_tgt, strict=True)
    write_parallel(corpus, [(f"p{k}", s, t) for k, (s, t) in enumerate(pairs)])
    seen = []
    real = reference.align_corpus

    def spy(path, out, opts, **kw):
        lines = Path(path).read_text().splitlines()[1:]
        seen.append((opts.chunk_size, opts.shared_priors, len(lines), lines[0].split("\t")[0]))
        return real(path, out, opts, **kw)

    monkeypatch.setattr(reference, "align_corpus", spy)
    out = run_eflomal_reference(
        gold_source="handmade", corpus_tsv=None, output=tmp_path / "ref.json",
        sets={"s": _awesome(tmp_path, "s", test_src, test_tgt, truth)},
        corpora={"s": (corpus, False)}, max_pairs=250, seed=0,
        wordalign={"chunk_size": 100, "shared_priors": {"enabled": True, "sample_pairs": 50}},
    )  # fmt: skip
    assert seen == [(100, True, 12 + 250, "test-0")]
    assert out["gold_sets"]["s"]["training_pairs"] == 250
    assert (out["chunk_size"], out["shared_priors"], out["max_pairs"]) == (100, True, 250)
    assert out["aer"] < 0.2


def test_encoder_analysis_records_every_set(tmp_path: Path) -> None:
    enc = make_fixed_vocab_encoder(tmp_path / "enc")
    src = [["the", "cat", "sat"], ["a", "\u3000", "dog", "ran"]]
    tgt = [["the", "cat", "sat"], ["a", "dog", "ran"]]
    links = [{(0, 0), (1, 1), (2, 2)}, {(0, 0), (2, 1), (3, 2)}]
    sets = {
        "one": _awesome(tmp_path, "one", src, tgt, links),
        "two": _awesome(tmp_path, "two", tgt, tgt, [{(0, 0)}, {(1, 1)}]),
    }
    out = run_encoder_analysis(
        encoder=enc, name="tiny", gold_source="handmade", methods=["argmax"], distances={},
        settings={"sentences": 2, "related": 1, "unrelated": 1}, output=tmp_path / "a.json",
        sets=sets, device="cpu",
    )  # fmt: skip
    assert list(out["gold_sets"]) == ["one", "two"]
    one = out["gold_sets"]["one"]
    assert one["sentences"] == 2 and one["pair"] == "xx-yy"
    assert len(one["aer_by_layer"]["argmax"]) == TINY_LAYERS + 1
    assert out["aer_by_layer"] == one["aer_by_layer"]  # the first set at the top
    assert out["gold_sets"]["two"]["aer_by_layer"] != one["aer_by_layer"]
