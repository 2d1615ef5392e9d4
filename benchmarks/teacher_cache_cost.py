"""Teacher cache: bytes per occurrence, and one teacher pass against one X2S-M epoch read
from the cache (issue 28: does caching beat re-encoding every epoch?).

A random BERT of the embedded encoder's width (384) cut at layer 6, whole-word tokens; a
corpus of the embedded size's sentences (20 words on average, Zipf-distributed words).
One thread each. Prints JSON.

    .venv/bin/python benchmarks/teacher_cache_cost.py --sentences 1000 --dim 384
    .venv/bin/python benchmarks/teacher_cache_cost.py --sentences 500 --dim 768

Measured (2-core shared CPU, issue 28): width 384, 1,000 sentences: 772.5 bytes an
occurrence, teacher pass 4.4-4.8 s, one epoch 1.2-1.3 s (3.6-3.8x); width 768, 500
sentences: 1,540.7 bytes, 7.9 s against 1.1 s (6.9x). See xlalign.static.teacher.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import torch


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--words", type=int, default=3000)
    ap.add_argument("--negatives", type=int, default=10)
    args = ap.parse_args()
    torch.set_num_threads(1)
    from transformers import BertConfig, BertModel, BertTokenizerFast

    from xlalign.corpus.vocab import build_vocab
    from xlalign.static.teacher import TeacherCache, build_teacher_cache
    from xlalign.static.x2static import X2StaticArgs, train_x2static

    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        words = [f"w{i}" for i in range(args.words)]
        p = 1.0 / np.arange(1, args.words + 1)
        lengths = rng.integers(5, 36, size=args.sentences)
        with open(root / "c.txt", "w", encoding="utf-8") as fh:
            for n in lengths:
                fh.write(
                    " ".join(words[i] for i in rng.choice(args.words, n, p=p / p.sum())) + "\n"
                )
        enc = root / "enc"
        enc.mkdir()
        (enc / "vocab.txt").write_text(
            "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n"
        )
        BertTokenizerFast(vocab=str(enc / "vocab.txt"), do_lower_case=True).save_pretrained(enc)
        torch.manual_seed(0)
        cfg = BertConfig(
            vocab_size=args.words + 5,
            hidden_size=args.dim,
            num_hidden_layers=args.layers,
            num_attention_heads=max(1, args.dim // 64),
            intermediate_size=4 * args.dim,
            max_position_embeddings=512,
        )
        BertModel(cfg, add_pooling_layer=False).save_pretrained(enc)
        vocab = build_vocab(root / "c.txt", min_count=3, max_size=None, language="xx")
        t = time.perf_counter()
        build_teacher_cache(
            root / "c.txt",
            vocab,
            enc,
            root / "cache",
            layer=args.layers,
            batch_tokens=2048,
            progress=False,
            device="cpu",
            threads=1,
        )
        teacher_s = time.perf_counter() - t
        cache = TeacherCache(root / "cache")
        disk = sum(f.stat().st_size for f in (root / "cache").iterdir())
        ctx = sum(f.stat().st_size for f in (root / "cache").glob("*.ctx.npy"))
        xargs = X2StaticArgs(
            epochs=1,
            negatives=args.negatives,
            subsample_t=None,
            checkpoint_minutes=None,
            device="cpu",
        )
        t = time.perf_counter()
        train_x2static(cache, vocab, xargs, output_dir=root / "x2s", progress=False)
        epoch_s = time.perf_counter() - t
        out = {
            "sentences": args.sentences,
            "dim": args.dim,
            "layers": args.layers,
            "occurrences": cache.n_occurrences,
            "vocab": len(vocab),
            "cache_bytes": disk,
            "bytes_per_occurrence": round(disk / cache.n_occurrences, 1),
            "ctx_bytes_per_occurrence": round(ctx / cache.n_occurrences, 1),
            "teacher_pass_s": round(teacher_s, 2),
            "x2s_epoch_s": round(epoch_s, 2),
            "teacher_over_epoch": round(teacher_s / epoch_s, 2),
        }
        print(json.dumps(out))


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
