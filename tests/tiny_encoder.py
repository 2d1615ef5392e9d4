"""Tiny random BERT encoders for tests, built on the spot (no real encoder, no network).

- :func:`make_tiny_encoder`: a WordPiece tokenizer covering given texts (whole words and
  single characters), for workflow and CLI runs on small corpora.
- :func:`make_fixed_vocab_encoder`: a hand-written WordPiece vocabulary (:data:`TINY_VOCAB`)
  whose subword splits are known, with :func:`reference_vectors`, the brute-force word
  vectors of the full model, for the contextual, teacher and aggregation unit tests.
- :func:`make_static_world`: a corpus file, its vocabulary and that encoder, the inputs of
  the teacher, aggregation and learning-curve unit tests.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

#: WordPiece vocabulary of :func:`make_fixed_vocab_encoder` (ids = positions).
TINY_VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
    "the", "cat", "dog", "sat", "on", "mat", "a", "big", "small", "red", "sun",
    "moon", "run", "ran", "and", "un", "##believ", "##able", "##s", "##ing", ".", ",",
]  # fmt: skip
TINY_LAYERS = 3
TINY_DIM = 16


def make_tiny_encoder(out_dir: Path, texts: Iterable[str], *, layers: int = 2) -> Path:
    """Write a loadable checkpoint (config, weights, tokenizer) into ``out_dir``."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    words: set[str] = set()
    chars: set[str] = set()
    for text in texts:
        for w in text.lower().split():
            words.add(w)
            chars.update(w)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces = sorted(chars) + [f"##{c}" for c in sorted(chars)]
    vocab = specials + pieces + sorted(w for w in words if len(w) > 1)[:500]
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    # transformers 5 reads the vocabulary from ``vocab`` (a path or a dict) and silently
    # ignores ``vocab_file``, which left a tokenizer of the five special tokens only
    tok = BertTokenizerFast(vocab=str(out_dir / "vocab.txt"), do_lower_case=True)
    tok.save_pretrained(out_dir)
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=256,
    )
    BertModel(cfg, add_pooling_layer=False).save_pretrained(out_dir)
    return out_dir


def make_fixed_vocab_encoder(path: Path, *, seed: int = 0) -> Path:
    """Write a random 3-layer BertModel and a lowercasing WordPiece tokenizer over
    :data:`TINY_VOCAB` to ``path``."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(TINY_VOCAB),
        hidden_size=TINY_DIM,
        num_hidden_layers=TINY_LAYERS,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    BertModel(config, add_pooling_layer=False).save_pretrained(path)
    tok = BertTokenizer(vocab={w: i for i, w in enumerate(TINY_VOCAB)}, do_lower_case=True)
    tok.model_max_length = 64
    tok.save_pretrained(path)
    return path


def reference_vectors(
    encoder_dir: Path, words: list[str], layer: int, pooling: str = "mean"
) -> np.ndarray:
    """Brute force: the *full* model on one sentence, ``hidden_states[layer]``, pooled by hand."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(encoder_dir, local_files_only=True)
    model = AutoModel.from_pretrained(encoder_dir, local_files_only=True).eval()
    enc = tok([words], is_split_into_words=True, return_tensors="pt")
    with torch.inference_mode():
        hidden = model(**enc, output_hidden_states=True).hidden_states[layer][0].numpy()
    wid = enc.word_ids(0)
    out = np.full((len(words), hidden.shape[1]), np.nan, dtype=np.float32)
    for j in range(len(words)):
        rows = [t for t, w in enumerate(wid) if w == j]
        if rows:
            pick = {"mean": rows, "first": rows[:1], "last": rows[-1:]}[pooling]
            out[j] = hidden[pick].mean(axis=0)
    return out


def make_static_world(out_dir: Path, corpus: list[str]) -> dict[str, Path]:
    """``corpus`` as ``xx.txt`` (a line each), its vocabulary (``build_vocab`` with
    ``min_count=1``) as ``vocab.tsv`` and :func:`make_fixed_vocab_encoder` as ``enc``."""
    from xlalign.corpus.vocab import build_vocab, write_vocab

    txt = out_dir / "xx.txt"
    txt.write_text("".join(line + "\n" for line in corpus), encoding="utf-8")
    vocab = out_dir / "vocab.tsv"
    write_vocab(build_vocab(txt, min_count=1, max_size=None, language="xx"), vocab)
    return {"txt": txt, "vocab": vocab, "enc": make_fixed_vocab_encoder(out_dir / "enc")}
