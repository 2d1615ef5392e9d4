"""The transliterated copy of a WordPiece vocabulary: one derived piece per natural piece,
and WordPiece segments a transliterated word into the images of the natural pieces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from xlalign.core.errors import InputError
from xlalign.derived.transforms import transliterate
from xlalign.derived.vocab import token_pairs, transliterated_vocabulary

TEXT = [
    "The old man ate red apples . The young woman ate green apples , she said .",
    "Unbelievable things happen every day ; naïve cafés open at 9:30 a.m. !",
    "Running runners ran quickly through the running streets of New York City .",
    'He said : " don\'t ! " and (quietly) left 😀 ... the end .',
] * 5


@pytest.fixture(scope="module")
def natural() -> Any:
    from xlalign.encoders.scratch import train_tokenizer

    return train_tokenizer(TEXT, vocab_size=150, pre_tokenizer="whitespace", min_frequency=1)


@pytest.fixture(scope="module")
def derived(natural: Any) -> Any:
    return transliterated_vocabulary(natural)


def _words() -> list[str]:
    words = sorted({w for t in TEXT for w in t.split()})
    rng = np.random.default_rng(0)
    alphabet = [*"abcdefghijklmnopqrstuvwxyzTNRU.,;!'é😀#", "##"]
    for _ in range(300):
        n = int(rng.integers(1, 12))
        words.append("".join(rng.choice(alphabet, size=n)))
    # a word written with a leading "##" is WordPiece's exception (module docstring)
    return [w for w in words if not w.startswith("##")] + ["ünknown", "ZZZ", "#", "a##b"]


def test_natural_ids_and_specials_are_unchanged(natural: Any, derived: Any) -> None:
    n = len(natural)
    assert len(derived) == n + (n - 5)  # every non-special piece copied once
    assert derived.all_special_tokens == natural.all_special_tokens
    assert derived.all_special_ids == natural.all_special_ids
    assert derived.model_input_names == natural.model_input_names
    vocab = natural.get_vocab()
    assert {p: derived.get_vocab()[p] for p in vocab} == vocab
    text = " ".join(TEXT[:4])
    assert derived(text)["input_ids"] == natural(text)["input_ids"]


def test_wordpiece_segments_a_transliterated_word_into_the_copied_pieces(
    natural: Any, derived: Any
) -> None:
    image = dict(token_pairs(derived))
    specials = set(natural.all_special_ids)
    unk = natural.unk_token_id
    seen_unk = seen_multi = 0
    for w in _words():
        ids = natural(w, add_special_tokens=False)["input_ids"]
        got = derived(transliterate(w), add_special_tokens=False)["input_ids"]
        want = [i if i in specials else image[i] for i in ids]
        assert got == want, w
        seen_unk += unk in ids
        seen_multi += len(ids) > 1
    assert seen_unk and seen_multi  # the words exercise both cases
    # and in a sentence with the tokenizer's template
    s = "The old man ate red apples ."
    nat = natural(s)["input_ids"]
    assert derived(" ".join(transliterate(w) for w in s.split()))["input_ids"] == [
        i if i in specials else image[i] for i in nat
    ]


def test_token_pairs(natural: Any, derived: Any) -> None:
    pairs = token_pairs(derived)
    assert len(pairs) == len(natural) - 5
    assert [i for i, _ in pairs] == [i for i in range(len(natural)) if i >= 5]
    assert sorted(j for _, j in pairs) == list(range(len(natural), len(derived)))
    inv = {v: k for k, v in derived.get_vocab().items()}
    for i, j in pairs:
        a, b = inv[i], inv[j]
        if a.startswith("##") and len(a) > 2:
            assert b == "##" + transliterate(a[2:])
        else:
            assert b == transliterate(a)
    with pytest.raises(InputError, match="no natural piece has a transliterated copy"):
        token_pairs(natural)


def test_saved_tokenizer_reloads(derived: Any, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    derived.save_pretrained(tmp_path)
    again = AutoTokenizer.from_pretrained(str(tmp_path), local_files_only=True)
    w = transliterate("Unbelievable")
    assert again(w)["input_ids"] == derived(w)["input_ids"]
    assert token_pairs(again) == token_pairs(derived)


def test_refuses_tokenizers_that_break_the_copy(natural: Any, derived: Any) -> None:
    from xlalign.encoders.scratch import train_tokenizer

    bert = train_tokenizer(TEXT, vocab_size=120, pre_tokenizer="bert", min_frequency=1)
    with pytest.raises(InputError, match="normalizer"):
        transliterated_vocabulary(bert)
    with pytest.raises(InputError, match="already transliterated"):
        transliterated_vocabulary(derived)
