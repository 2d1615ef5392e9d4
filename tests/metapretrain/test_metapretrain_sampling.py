"""004's rebalanced language sampling, p_i = N_i^alpha / sum_j N_j^alpha (alpha = 0.7),
is the MLM objective's ``language_alpha`` over :meth:`TextCorpus.probabilities`."""

from __future__ import annotations

import numpy as np
import pytest

from xlalign.encoders.scratch import train_tokenizer
from xlalign.pretrain.objectives import build_objective
from xlalign.pretrain.text import TextCorpus


def _corpus() -> TextCorpus:
    # block 2: en 16 tokens -> 8 sequences, de 4 -> 2, hi 2 -> 1; each language its own ids
    streams = {"en": np.arange(16) + 10, "de": np.arange(4) + 30, "hi": np.arange(2) + 40}
    return TextCorpus(streams, block=2, prefix=[2], suffix=[3])


def test_probabilities_are_004s_formula() -> None:
    corpus = _corpus()
    assert [corpus.num_sequences(x) for x in ("en", "de", "hi")] == [8, 2, 1]
    # 8^0.7 = 4.28709, 2^0.7 = 1.62450, 1^0.7 = 1; sum 6.91160
    p = corpus.probabilities(0.7)
    assert p["en"] == pytest.approx(0.620275, abs=1e-6)
    assert p["de"] == pytest.approx(0.235040, abs=1e-6)
    assert p["hi"] == pytest.approx(0.144684, abs=1e-6)
    assert corpus.probabilities(1.0)["en"] == pytest.approx(8 / 11)


def test_mlm_objective_samples_languages_with_language_alpha() -> None:
    from types import SimpleNamespace

    tok = train_tokenizer(["a b c d e f g h i j k l m n o p"] * 2, vocab_size=60)
    corpus = _corpus()
    model = SimpleNamespace(config=SimpleNamespace(num_hidden_layers=2))
    obj = build_objective(
        "mlm",
        {"language_alpha": 0.7, "batch_size": 4},
        model=model,
        tokenizer=tok,
        files={"train_corpus": corpus},
        seed=0,
    )
    assert obj.alpha == 0.7
    seqs = corpus.sample(np.random.default_rng(0), 40000, alpha=obj.alpha)
    first = np.array([s[1] for s in seqs])
    share = [np.mean(first < 30), np.mean((first >= 30) & (first < 40)), np.mean(first >= 40)]
    assert share == pytest.approx([0.620275, 0.235040, 0.144684], abs=0.01)
