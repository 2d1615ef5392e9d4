"""Aggregation baseline: brute-force averages, uniform deterministic sampling, missing words."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from tiny_encoder import make_fixed_vocab_encoder, reference_vectors

from xlalign.core.errors import ConfigError, InputError
from xlalign.corpus.vocab import Vocab, build_vocab, tokens_of
from xlalign.static.aggregation import aggregate_vectors, sample_occurrences

CORPUS = [
    "The cat sat on the mat .",
    "the dogs ran and the cats ran",
    "",
    "moon",
    "a big red sun , a small moon .",
    "unbelievable cats running on a red mat",
    "The sun and the moon .",
    "dogs sat",
    "a cat",
    "the big dog ran on the mat and the small cat sat .",
    "red sun red moon",
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_fixed_vocab_encoder(tmp_path_factory.mktemp("enc") / "tiny-bert")


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "xx.txt"
    path.write_text("".join(line + "\n" for line in CORPUS), encoding="utf-8")
    return path


def _brute_force(
    encoder: Path, vocab: Vocab, occurrences: dict[int, list[tuple[int, int]]], layer: int
) -> np.ndarray:
    """Average of reference vectors over the given (line, position) occurrences per word."""
    refs = {i: reference_vectors(encoder, tokens_of(CORPUS[i]), layer) for i in range(len(CORPUS))}
    out = np.zeros((len(vocab), 16))
    for w, occ in occurrences.items():
        out[w] = np.mean([refs[i][j] for i, j in occ], axis=0)
    return out


def test_all_contexts_give_the_brute_force_average(tiny: Path, corpus: Path) -> None:
    vocab = build_vocab(corpus, min_count=1, max_size=None, language="xx")
    vectors = aggregate_vectors(
        corpus, vocab, tiny, layer=2, max_contexts=100, seed=0, progress=False, language="xx"
    )
    assert vectors.shape == (len(vocab), 16) and vectors.dtype == np.float32
    occ: dict[int, list[tuple[int, int]]] = {}
    for i, line in enumerate(CORPUS):
        for j, tok in enumerate(tokens_of(line)):
            occ.setdefault(vocab.lookup(tok), []).append((i, j))
    np.testing.assert_allclose(vectors, _brute_force(tiny, vocab, occ, 2), rtol=1e-4, atol=1e-5)


def test_sampled_contexts_are_deterministic_and_averaged(tiny: Path, corpus: Path) -> None:
    vocab = build_vocab(corpus, min_count=1, max_size=None, language="xx")
    lines, pos = sample_occurrences(corpus, vocab, max_contexts=2, seed=7)
    lines2, pos2 = sample_occurrences(corpus, vocab, max_contexts=2, seed=7)
    np.testing.assert_array_equal(lines, lines2)
    np.testing.assert_array_equal(pos, pos2)
    assert lines.shape == (len(vocab), 2)
    occ: dict[int, list[tuple[int, int]]] = {}
    for w in range(len(vocab)):
        chosen = [(int(i), int(j)) for i, j in zip(lines[w], pos[w], strict=True) if i >= 0]
        assert len(chosen) == min(2, int(vocab.counts[w]))  # as many as there are, up to K
        assert len(set(chosen)) == len(chosen)  # without replacement
        for i, j in chosen:  # each is an occurrence of the word
            assert vocab.lookup(tokens_of(CORPUS[i])[j]) == w
        occ[w] = chosen
    a = aggregate_vectors(corpus, vocab, tiny, layer=1, max_contexts=2, seed=7, progress=False)
    b = aggregate_vectors(corpus, vocab, tiny, layer=1, max_contexts=2, seed=7, progress=False)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, _brute_force(tiny, vocab, occ, 1), rtol=1e-4, atol=1e-5)
    # another seed picks other contexts for a frequent word ('the' occurs 9 times)
    the = vocab.lookup("the")
    picks = {
        tuple(sample_occurrences(corpus, vocab, max_contexts=2, seed=s)[0][the]) for s in range(10)
    }
    assert len(picks) > 1


def test_sampling_is_uniform_over_occurrences(tmp_path: Path) -> None:
    path = tmp_path / "u.txt"
    path.write_text("x y\ny x x\nz\nx\nx y x\n", encoding="utf-8")
    vocab = Vocab(["x", "y"], np.array([6, 3]), lowercase=True)
    chosen = Counter()
    for seed in range(600):
        lines, pos = sample_occurrences(path, vocab, max_contexts=1, seed=seed)
        chosen[(int(lines[0, 0]), int(pos[0, 0]))] += 1
    assert set(chosen) == {(0, 0), (1, 1), (1, 2), (3, 0), (4, 0), (4, 2)}
    assert all(60 <= c <= 140 for c in chosen.values()), chosen  # expected 100 each


def test_words_without_vector_are_named_or_zero(tiny: Path, corpus: Path) -> None:
    vocab = build_vocab(corpus, min_count=1, max_size=None, language="xx")
    extra = Vocab([*vocab.words, "zebra"], np.append(vocab.counts, 5), lowercase=True)
    with pytest.raises(InputError, match=r"xx\.txt \(language 'de'\): 1 vocabulary word.*zebra"):
        aggregate_vectors(corpus, extra, tiny, layer=1, progress=False, language="de")
    vectors = aggregate_vectors(corpus, extra, tiny, layer=1, progress=False, missing="zero")
    assert not vectors[-1].any() and np.abs(vectors[:-1]).sum(axis=1).min() > 0
    with pytest.raises(ConfigError, match="max_contexts"):
        aggregate_vectors(corpus, vocab, tiny, layer=1, max_contexts=0, progress=False)
    with pytest.raises(ConfigError, match="layer 9"):
        aggregate_vectors(corpus, vocab, tiny, layer=9, progress=False)
    with pytest.raises(InputError, match="not found"):
        aggregate_vectors(corpus.with_name("nope.txt"), vocab, tiny, layer=1, progress=False)
