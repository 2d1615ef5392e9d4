"""The one-to-one vocabulary of a transliterated derived language (001 Appendix F: "a copy
of the vocabulary for all the tokens ... other than the special tokens").

The natural tokenizer is a ``tokenizers`` WordPiece with a whitespace pre-tokenizer and no
normaliser (:func:`xlalign.encoders.scratch.train_tokenizer` with
``pre_tokenizer="whitespace"``). :func:`transliterated_vocabulary` adds, after the natural
pieces and in their id order, the image of every non-special piece: the continuation prefix
(``##``) kept, the rest transliterated (:func:`xlalign.derived.transforms.transliterate`).
WordPiece's greedy longest-match then segments a transliterated word into exactly the
images of the natural word's pieces (no natural piece matches a private-use character and
no image matches a natural one), and a natural word's segmentation is unchanged; the
natural ids stay as they were. Pre-tokenizers that split at punctuation or normalisers that
change characters would break this, so they are refused.

One exception: ``tokenizers``' WordPiece matches a word that itself begins with the
continuation prefix (``##ing`` written in the text) against the continuation pieces
literally, so its natural segmentation starts with a ``##`` piece whose image cannot start
a transliterated word; such a word's derived segmentation differs (often ``[UNK]``). Text
words that begin with ``##`` are rare (markup remnants).
"""

from __future__ import annotations

import json
from typing import Any

from xlalign.core.errors import InputError
from xlalign.derived.transforms import is_transliterated, transliterate

_FORMAT_CHECKS = {
    "normalizer": (None,),
    "pre_tokenizer": (None, "WhitespaceSplit"),
}


def _state(tokenizer: Any) -> dict[str, Any]:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise InputError(
            f"tokenizer {getattr(tokenizer, 'name_or_path', '?')!r}: not a fast (tokenizers) "
            "tokenizer; expected a WordPiece tokenizer"
        )
    state = json.loads(backend.to_str())
    if state["model"].get("type") != "WordPiece":
        raise InputError(
            f"tokenizer {getattr(tokenizer, 'name_or_path', '?')!r}: a "
            f"{state['model'].get('type')} model; expected WordPiece"
        )
    return state


def _image(piece: str, prefix: str) -> str:
    if prefix and piece.startswith(prefix) and len(piece) > len(prefix):
        return prefix + transliterate(piece[len(prefix) :])
    return transliterate(piece)


def _special(tokenizer: Any, state: dict[str, Any]) -> set[str]:
    return set(tokenizer.all_special_tokens) | {a["content"] for a in state["added_tokens"]}


def transliterated_vocabulary(tokenizer: Any) -> Any:
    """A new tokenizer over the natural pieces and their transliterated images (module
    docstring); special tokens and natural ids unchanged. A tokenizer with a normaliser, a
    pre-tokenizer other than whitespace splitting, or pieces already transliterated raises
    :class:`InputError`."""
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    state = _state(tokenizer)
    name = getattr(tokenizer, "name_or_path", "?")
    for key, allowed in _FORMAT_CHECKS.items():
        got = state.get(key)
        kind = got.get("type") if isinstance(got, dict) else got
        if kind not in allowed:
            raise InputError(
                f"tokenizer {name!r}: {key} {kind!r}; the one-to-one copy needs one of "
                f"{allowed} (characters must reach WordPiece unchanged, words split only at "
                "whitespace)"
            )
    model = state["model"]
    vocab: dict[str, int] = model["vocab"]
    prefix = str(model.get("continuing_subword_prefix") or "")
    special = _special(tokenizer, state)
    taken = set(vocab.values()) | {int(a["id"]) for a in state["added_tokens"]}
    next_id = max(taken) + 1
    natural = sorted(((i, p) for p, i in vocab.items() if p not in special), key=lambda x: x[0])
    for _, piece in natural:
        body = piece[len(prefix) :] if prefix and piece.startswith(prefix) else piece
        if is_transliterated(body):
            raise InputError(f"tokenizer {name!r}: piece {piece!r} is already transliterated")
    for _, piece in natural:
        image = _image(piece, prefix)
        if image in vocab:
            raise InputError(f"tokenizer {name!r}: the image of {piece!r} is already a piece")
        vocab[image] = next_id
        next_id += 1
    backend = Tokenizer.from_str(json.dumps(state))
    kwargs = {k: v for k, v in tokenizer.special_tokens_map.items() if isinstance(v, str)}
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        model_max_length=tokenizer.model_max_length,
        model_input_names=list(tokenizer.model_input_names),
        **kwargs,
    )


def token_pairs(tokenizer: Any) -> list[tuple[int, int]]:
    """``(natural id, derived id)`` of every non-special natural piece whose image is in
    the vocabulary of ``tokenizer`` (one made by :func:`transliterated_vocabulary`), by
    natural id. No pair at all raises :class:`InputError`."""
    state = _state(tokenizer)
    model = state["model"]
    vocab: dict[str, int] = model["vocab"]
    prefix = str(model.get("continuing_subword_prefix") or "")
    special = _special(tokenizer, state)
    pairs: list[tuple[int, int]] = []
    for piece, i in vocab.items():
        body = piece[len(prefix) :] if prefix and piece.startswith(prefix) else piece
        if piece in special or not body or is_transliterated(body):
            continue
        j = vocab.get(_image(piece, prefix))
        if j is not None:
            pairs.append((int(i), int(j)))
    if not pairs:
        raise InputError(
            f"tokenizer {getattr(tokenizer, 'name_or_path', '?')!r}: no natural piece has a "
            "transliterated copy; expected a tokenizer from transliterated_vocabulary"
        )
    return sorted(pairs)
