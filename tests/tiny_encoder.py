"""A tiny random BERT with a WordPiece tokenizer covering given texts, for workflow tests."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


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
    tok = BertTokenizerFast(vocab_file=str(out_dir / "vocab.txt"), do_lower_case=True)
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
