"""Shared priors for chunked eflomal: the priors counted from an alignment (eflomal-makepriors'
definition), the chunks all given priors learnt on one seeded sample, resumed with the same
priors, and the same links for the same seed."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from xlalign.core.formats.priors import PriorCounts, check_priors, read_priors, write_priors
from xlalign.wordalign import eflomal as eflomal_mod
from xlalign.wordalign.eflomal import AlignmentPaths, AlignOptions, align_corpus
from xlalign.wordalign.priors import count_priors

# ------------------------------------------------------------------ the definition


def makepriors_restated(
    pairs: list[tuple[str, str, str, str]],
) -> tuple[Counter, Counter, Counter, Counter, Counter]:
    """eflomal-makepriors' counts written out literally: LEX per forward link; HMMF: the
    forward links sorted (stably) by target position, a jump i - last_i each time the
    target position changes, last_i following every link, then len(src) - last_i; HMMR the
    same on the reverse links by source position; FERF/FERR: each linked word's number of
    forward/reverse links."""
    lex, hmmf, hmmr, ferf, ferr = Counter(), Counter(), Counter(), Counter(), Counter()
    for src_line, tgt_line, fline, rline in pairs:
        src, tgt = src_line.split(), tgt_line.split()
        fwd = [(int(a), int(b)) for a, b in (t.split("-") for t in fline.split())]
        rev = [(int(a), int(b)) for a, b in (t.split("-") for t in rline.split())]
        for i, j in fwd:
            lex[(src[i], tgt[j])] += 1
        last_i = last_j = -1
        for i, j in sorted(fwd, key=lambda x: x[1]):
            if j != last_j:
                hmmf[i - last_i] += 1
            last_i, last_j = i, j
        hmmf[len(src) - last_i] += 1
        last_i = last_j = -1
        for i, j in sorted(rev, key=lambda x: x[0]):
            if i != last_i:
                hmmr[j - last_j] += 1
            last_i, last_j = i, j
        hmmr[len(tgt) - last_j] += 1
        for i, n in Counter(i for i, _ in fwd).items():
            ferf[(src[i], n)] += 1
        for j, n in Counter(j for _, j in rev).items():
            ferr[(tgt[j], n)] += 1
    return lex, hmmf, hmmr, ferf, ferr


def _random_pairs(n: int, seed: int) -> list[tuple[str, str, str, str]]:
    """Sentence pairs with arbitrary links: many-to-many, unaligned words, empty lines."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        src = [f"s{rng.randrange(12)}" for _ in range(rng.randint(1, 8))]
        tgt = [f"T{rng.randrange(12)}" for _ in range(rng.randint(1, 8))]

        n_src, n_tgt = len(src), len(tgt)

        def links(n_src: int = n_src, n_tgt: int = n_tgt) -> str:
            k = rng.randint(0, n_src + n_tgt)
            pairs = [(rng.randrange(n_src), rng.randrange(n_tgt)) for _ in range(k)]
            return " ".join(f"{i}-{j}" for i, j in dict.fromkeys(pairs))

        out.append((" ".join(src), " ".join(tgt), links(), links()))
    return out


def test_priors_equal_the_makepriors_definition() -> None:
    pairs = _random_pairs(300, seed=1)
    pairs.append(("a b c", "x y", "", ""))  # no links: the jump to the end only
    pairs.append(("a b c", "x y z", "0-0 2-0 1-2", "0-1 0-0 2-2"))  # one word, two links
    got = count_priors((s.split(), t.split(), f, r) for s, t, f, r in pairs)
    lex, hmmf, hmmr, ferf, ferr = makepriors_restated(pairs)
    assert got.lex == lex and got.hmmf == hmmf and got.hmmr == hmmr
    assert got.ferf == ferf and got.ferr == ferr
    assert got.hmmf[4] >= 1 and got.hmmr[3] >= 1  # the empty pair's jumps to the end


def test_priors_equal_the_installed_eflomal_calculate_priors() -> None:
    eflomal = pytest.importorskip("eflomal")
    pairs = _random_pairs(200, seed=2)
    got = count_priors((s.split(), t.split(), f, r) for s, t, f, r in pairs)
    lex, hmmf, hmmr, ferf, ferr = eflomal.calculate_priors(*zip(*pairs, strict=True))
    assert (got.lex, got.hmmf, got.hmmr, got.ferf, got.ferr) == (lex, hmmf, hmmr, ferf, ferr)


def test_priors_file_roundtrip_and_sum(tmp_path: Path) -> None:
    pairs = _random_pairs(50, seed=3)
    priors = count_priors((s.split(), t.split(), f, r) for s, t, f, r in pairs)
    path = tmp_path / "p.txt"
    n = write_priors(path, priors)
    assert check_priors(path) == n == len(priors)
    back = read_priors(path)
    assert back == priors
    user = PriorCounts()
    user.lex[("s1", "T1")] = 2.5
    user.hmmf[1] = 0.5
    back.add(user)
    assert back.lex[("s1", "T1")] == priors.lex[("s1", "T1")] + 2.5
    assert back.hmmf[1] == priors.hmmf[1] + 0.5
    write_priors(path, back)
    assert read_priors(path) == back


def test_links_outside_the_sentence_are_refused() -> None:
    from xlalign.core.errors import InputError

    with pytest.raises(InputError, match="pair 1, forward"):
        count_priors([(["a"], ["x"], "0-1", "")])


# ------------------------------------------------------------------ chunked alignment

CHUNK = 60
N_PAIRS = 180  # three chunks


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


def _options(**kw: object) -> AlignOptions:
    base = {
        "chunk_size": CHUNK,
        "shared_priors": True,
        "shared_priors_sample": 50,
        "seed": 5,
        "samplers": 1,
        "iterations": (2, 2, 2),
    }
    return AlignOptions(**{**base, **kw})  # type: ignore[arg-type]


class _Spy:
    """Records the priors file (and its text) each eflomal run is given."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, fail_at: int | None = None) -> None:
        self.calls: list[tuple[int, str | None]] = []
        self.fail_at = fail_at
        real = eflomal_mod._align_chunk

        def spy(src, tgt, options, workdir, *, priors, **kw):  # type: ignore[no-untyped-def]
            text = Path(priors).read_text(encoding="utf-8") if priors is not None else None
            self.calls.append((len(src), text))
            if self.fail_at is not None and len(self.calls) == self.fail_at:
                raise RuntimeError("crash in this run")
            return real(src, tgt, options, workdir, priors=priors, **kw)

        monkeypatch.setattr(eflomal_mod, "_align_chunk", spy)


def _outputs(out: AlignmentPaths) -> dict[str, str]:
    return {
        name: getattr(out, name).read_text(encoding="utf-8")
        for name in ("forward", "reverse", "symmetrized", "pairs")
    }


def test_every_chunk_gets_the_sample_priors(tmp_path: Path, monkeypatch) -> None:
    corpus = _corpus(tmp_path / "corpus.tsv")
    spy = _Spy(monkeypatch)
    out = AlignmentPaths.in_dir(tmp_path / "out")
    stats = align_corpus(corpus, out, _options(), tmpdir=tmp_path / "tmp", progress=False)
    sizes = [n for n, _ in spy.calls]
    assert sizes == [50, CHUNK, CHUNK, CHUNK]  # the sample, then the three chunks
    assert spy.calls[0][1] is None  # the sample: no priors of its own
    texts = {t for _, t in spy.calls[1:]}
    assert len(texts) == 1 and texts != {None}  # one file, the same for every chunk
    priors_text = texts.pop()
    assert priors_text is not None and "LEX\ts3\tt3\t" in priors_text
    shared = stats["shared_priors"]
    assert shared["sample_pairs"] == 50 and not shared["reused"]
    assert shared["records"] == shared["learnt_records"] == priors_text.count("\n")
    assert stats["chunks"] == 3


def test_one_chunk_corpus_learns_no_priors(tmp_path: Path, monkeypatch) -> None:
    corpus = _corpus(tmp_path / "corpus.tsv", n=40)
    spy = _Spy(monkeypatch)
    out = AlignmentPaths.in_dir(tmp_path / "out")
    stats = align_corpus(corpus, out, _options(), tmpdir=tmp_path / "tmp", progress=False)
    assert spy.calls == [(40, None)] and stats["shared_priors"] is None


def test_user_priors_guide_the_sample_and_add_to_the_learnt(tmp_path: Path, monkeypatch) -> None:
    corpus = _corpus(tmp_path / "corpus.tsv")
    user = tmp_path / "user.priors"
    user.write_text("LEX\ts3\tt3\t7.5\nLEX\tzzz\tyyy\t2\nHMMF\t1\t0.25\n", encoding="utf-8")
    spy = _Spy(monkeypatch)
    out = AlignmentPaths.in_dir(tmp_path / "out")
    align_corpus(corpus, out, _options(), tmpdir=tmp_path / "tmp", priors=user, progress=False)
    assert spy.calls[0][1] == user.read_text(encoding="utf-8")  # the sample's guide
    chunk_text = spy.calls[1][1]
    assert chunk_text is not None
    p = tmp_path / "chunk.priors"
    p.write_text(chunk_text, encoding="utf-8")
    merged = read_priors(p)
    assert merged.lex[("zzz", "yyy")] == 2  # only in the user's
    learnt_s3 = merged.lex[("s3", "t3")] - 7.5
    assert learnt_s3 >= 1 and learnt_s3 == int(learnt_s3)  # counted, plus the user's 7.5
    assert merged.hmmf[1] - 0.25 == int(merged.hmmf[1] - 0.25) >= 1


def test_same_seed_same_links_and_priors(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus.tsv")
    runs = []
    for k, seed in enumerate((5, 5, 6)):
        out = AlignmentPaths.in_dir(tmp_path / f"out{k}")
        ckpt = tmp_path / f"ckpt{k}"
        align_corpus(
            corpus,
            out,
            _options(seed=seed),
            tmpdir=tmp_path / "tmp",
            checkpoint_dir=ckpt,
            keep_checkpoint=True,
            progress=False,
        )
        runs.append((_outputs(out), (ckpt / "shared-priors.txt").read_text(encoding="utf-8")))
    assert runs[0] == runs[1]
    assert runs[0][1] != runs[2][1]  # another seed: another sample, other priors


def test_chunked_run_with_shared_priors_resumes(tmp_path: Path, monkeypatch) -> None:
    corpus = _corpus(tmp_path / "corpus.tsv")
    ref = AlignmentPaths.in_dir(tmp_path / "ref")
    align_corpus(corpus, ref, _options(), tmpdir=tmp_path / "tmp", progress=False)

    out = AlignmentPaths.in_dir(tmp_path / "out")
    ckpt = tmp_path / "out.checkpoint"
    spy = _Spy(monkeypatch, fail_at=3)  # the sample and chunk 1 done, chunk 2 fails
    with pytest.raises(RuntimeError, match="crash"):
        align_corpus(
            corpus, out, _options(), tmpdir=tmp_path / "tmp", checkpoint_dir=ckpt, progress=False
        )
    kept_priors = (ckpt / "shared-priors.txt").read_text(encoding="utf-8")
    manifest = json.loads((ckpt / "manifest.json").read_text(encoding="utf-8"))
    assert "shared_priors" in manifest
    assert sorted(p.name for p in ckpt.glob("chunk-*")) == ["chunk-00000.fwd", "chunk-00000.rev"]

    spy.calls.clear()
    spy.fail_at = None
    stats = align_corpus(
        corpus, out, _options(), tmpdir=tmp_path / "tmp", checkpoint_dir=ckpt, progress=False
    )
    # no new sample run: the kept priors go to the two missing chunks
    assert [n for n, _ in spy.calls] == [CHUNK, CHUNK]
    assert {t for _, t in spy.calls} == {kept_priors}
    assert stats["shared_priors"]["reused"] and stats["chunks_resumed"] == 1
    assert _outputs(out) == _outputs(ref)  # as the uninterrupted run, byte for byte
    assert not ckpt.exists()


def test_tampered_priors_are_learnt_again_and_chunks_redone(tmp_path: Path, monkeypatch) -> None:
    corpus = _corpus(tmp_path / "corpus.tsv")
    out = AlignmentPaths.in_dir(tmp_path / "out")
    ckpt = tmp_path / "ckpt"
    spy = _Spy(monkeypatch, fail_at=3)
    with pytest.raises(RuntimeError):
        align_corpus(
            corpus, out, _options(), tmpdir=tmp_path / "tmp", checkpoint_dir=ckpt, progress=False
        )
    (ckpt / "shared-priors.txt").write_text("LEX\ta\tb\t1\n", encoding="utf-8")
    spy.calls.clear()
    spy.fail_at = None
    stats = align_corpus(
        corpus, out, _options(), tmpdir=tmp_path / "tmp", checkpoint_dir=ckpt, progress=False
    )
    assert [n for n, _ in spy.calls] == [50, CHUNK, CHUNK, CHUNK]
    assert not stats["shared_priors"]["reused"] and stats["chunks_resumed"] == 0


def test_shared_priors_options_are_part_of_the_fingerprint() -> None:
    a = _options().eflomal_fingerprint()
    assert a != _options(shared_priors=False).eflomal_fingerprint()
    assert a != _options(shared_priors_sample=51).eflomal_fingerprint()


def test_from_config_reads_the_nested_section() -> None:
    opts = AlignOptions.from_config({"shared_priors": {"enabled": True, "sample_pairs": 9}})
    assert opts.shared_priors and opts.shared_priors_sample == 9
    assert not AlignOptions.from_config({}).shared_priors
