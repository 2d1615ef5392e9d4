"""001's embedding alignment score and the word alignment score by layer, against
hand-computed values; per-layer word vectors of a tiny encoder against brute force."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tiny_encoder import TINY_LAYERS, make_fixed_vocab_encoder, reference_vectors

from xlalign.analysis.alignment_score import (
    contextual_alignment_score,
    embedding_alignment_score,
    layer_states,
)
from xlalign.core.errors import InputError

# Rows 0-2 natural tokens, rows 3-5 their derived copies (pairs 0-3, 1-4, 2-5), row 6 a
# special token that is no candidate.
E = np.array(
    [
        [1.0, 0.0],  # n0
        [0.0, 1.0],  # n1
        [1.0, 1.0],  # n2
        [2.0, 0.1],  # d0: cos(n0, d0) = 0.9988 > cos(n0, d2) = 0.7071 -> hit
        [1.0, 0.2],  # d1: cos(n1, d1) = 0.196 < cos(n1, d2) = 0.707 -> miss
        [3.0, 3.0],  # d2: cos(n2, d2) = 1 -> hit
        [0.0, 5.0],  # special: cos(n1, special) = 1, but not a candidate
    ]
)
PAIRS = [(0, 3), (1, 4), (2, 5)]


def test_embedding_score_by_hand() -> None:
    assert embedding_alignment_score(E, PAIRS) == pytest.approx(200 / 3)
    # chunking does not change it
    assert embedding_alignment_score(E, PAIRS, chunk_size=1) == pytest.approx(200 / 3)


def test_embedding_score_ties_do_not_count() -> None:
    # every derived row equal: the counterpart ties with the others -> 0, not 100
    e = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 1.0]])
    assert embedding_alignment_score(e, [(0, 2), (1, 3)]) == 0.0
    # zero vectors: cosine 0 with everything -> ties -> 0
    assert embedding_alignment_score(np.zeros((4, 3)), [(0, 2), (1, 3)]) == 0.0
    # a torch tensor works too
    torch = pytest.importorskip("torch")
    assert embedding_alignment_score(torch.tensor(E), PAIRS) == pytest.approx(200 / 3)


def test_embedding_score_errors() -> None:
    with pytest.raises(InputError, match="outside"):
        embedding_alignment_score(E, [(0, 9)])
    with pytest.raises(InputError, match="one-to-one"):
        embedding_alignment_score(E, [(0, 3), (1, 3)])
    with pytest.raises(InputError, match="no"):
        embedding_alignment_score(E, [])


def test_contextual_score_by_hand() -> None:
    # sentence 0: 2 source words, 2 target words; sentence 1: 1 and 2
    src = [np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 1.0]])]
    tgt = [
        np.array([[0.9, 0.1], [0.1, 0.9]]),  # t0, t1
        np.array([[0.0, 1.0], [1.0, 1.1]]),  # t2, t3
    ]
    links = [[(0, 0), (1, 1)], [(0, 1)]]
    # s0 -> nearest of all targets t0 (its counterpart): hit
    # s1 -> nearest t2 (cos 1) over its counterpart t1 (0.994): miss
    # s2 (1, 1) -> nearest t3 (0.9989), its counterpart: hit
    assert contextual_alignment_score(src, tgt, links) == pytest.approx(200 / 3)
    # a source word with two links counts once and scores with its best counterpart
    assert contextual_alignment_score(src, tgt, [[(1, 1), (1, 0)], []]) == 0.0
    links2 = [[(1, 1)], []]
    tgt2 = [np.array([[0.9, 0.1], [0.1, 0.9]]), np.array([[1.0, 0.0], [1.0, 0.0]])]
    assert contextual_alignment_score(src, tgt2, links2) == 100.0


def test_contextual_score_nan_and_empty() -> None:
    src = [np.array([[1.0, 0.0], [np.nan, np.nan]])]
    tgt = [np.array([[np.nan, np.nan], [0.0, 1.0], [1.0, 0.1]])]
    # s1 has no vector: not counted; t0 has none: no candidate. s0 -> t2 (its link): hit
    assert contextual_alignment_score(src, tgt, [[(0, 2), (1, 1)]]) == 100.0
    assert contextual_alignment_score(src, tgt, [[]]) is None
    with pytest.raises(InputError, match="outside"):
        contextual_alignment_score(src, tgt, [[(0, 5)]])


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_fixed_vocab_encoder(tmp_path_factory.mktemp("enc"))


def test_layer_states_match_brute_force(encoder: Path) -> None:
    sentences = [
        ["the", "cat", "sat", "on", "the", "mat", "."],
        ["unbelievable", "dogs"],  # several subwords per word
        [],
        ["a", "big", "red", "sun", "and", "a", "small", "moon"],
    ]
    states = layer_states(encoder, None, sentences, batch_size=2)
    assert [s.shape for s in states] == [(TINY_LAYERS + 1, len(w), 16) for w in sentences]
    for k, words in enumerate(sentences):
        if not words:
            continue
        for layer in (0, 1, TINY_LAYERS):
            ref = reference_vectors(encoder, words, layer)
            np.testing.assert_allclose(states[k][layer], ref, atol=2e-5)
    some = layer_states(encoder, None, sentences[:1], layers=[0, 3])
    np.testing.assert_allclose(some[0], states[0][[0, 3]], atol=1e-6)


def test_layer_states_loaded_model(encoder: Path) -> None:
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(encoder, local_files_only=True)
    model = AutoModel.from_pretrained(encoder, local_files_only=True)
    words = [["the", "dog", "ran", "."]]
    a = layer_states(model, tok, words)
    b = layer_states(encoder, None, words)
    np.testing.assert_allclose(a[0], b[0], atol=1e-6)
