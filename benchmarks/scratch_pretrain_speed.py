"""Benchmark of from-scratch pre-training at a paper's size (xlalign.pretrain.scratch, as
the derived-language and meta-pretraining stages run it): seconds per optimiser step and
training tokens per second on this machine's device, to size the jobs
(xlalign.workflow.resources) and to tell whether 001's or 004's schedule fits a cluster
job.

Variants (``--variant``, several allowed; each ``--steps`` steps after ``--warmup``
untimed ones, seed 1, no validation until the last step):

* ``001``: 001's Table 10 model (8 layers, 512 hidden, 8 heads, 2,048 intermediate) with
  the ``tlm`` row (XLM: 128 MLM sequences + 32 TLM pairs of 512 tokens per step);
* ``004``: a base model (12 / 768 / 12 / 3,072) with MLM, ``--meta-batch`` sequences of
  512 tokens per step (004: 256; the default 64 fits one GPU's memory, the time scales
  with the sequences);
* ``tiny``: the embedded default's model (2 / 128 / 2 / 256), 16 sequences of 64 tokens.

Each step is timed from the end of the previous one to its own end with the device
synchronised (``on_step``); reported: the median and the mean seconds per step, MLM
sequences per second and tokens per second. The text is synthetic (the hand-made English
gold sentences of xlalign.analysis, shuffled into paragraphs, and their transliterated
copies as the second language), so the vocabulary is small: the MLM head scores masked
positions only, so the vocabulary's size adds little to a step.

    .venv/bin/python benchmarks/scratch_pretrain_speed.py --variant 001 004 \\
        [--steps 20] [--warmup 5] [--device cuda] [--out benchmarks/out/scratch_speed.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

#: variant -> (arch, row, objectives, max_length)
VARIANTS: dict[str, tuple[dict[str, int], str, dict[str, dict[str, int]], int]] = {
    "001": (
        {"layers": 8, "hidden": 512, "heads": 8, "intermediate": 2048, "max_position": 514},
        "tlm",
        {"mlm": {"batch_size": 128}, "tlm": {"batch_size": 32}},
        512,
    ),
    "004": (
        {"layers": 12, "hidden": 768, "heads": 12, "intermediate": 3072, "max_position": 514},
        "mlm",
        {"mlm": {"batch_size": 64}},
        512,
    ),
    "tiny": (
        {"layers": 2, "hidden": 128, "heads": 2, "intermediate": 256, "max_position": 128},
        "mlm",
        {"mlm": {"batch_size": 16}},
        64,
    ),
}


def _texts(work: Path, paragraphs: int) -> dict[str, Any]:
    """English paragraphs (the gold sentences, shuffled), their transliterated copies and
    the sentence pairs; returned as the ``files`` run_pretrain reads."""
    import numpy as np

    from xlalign.analysis.gold import load_handmade_gold
    from xlalign.corpus.parallel import PARALLEL_COLUMNS
    from xlalign.derived.transforms import transliterate

    src, _, _ = load_handmade_gold()
    rng = np.random.default_rng(1)
    en, xx, pairs = [], [], []
    for p in range(paragraphs):
        sents = [src[i] for i in rng.choice(len(src), size=8)]
        en.append(" ".join(w for s in sents for w in s))
        xx.append(" ".join(transliterate(w) for s in sents for w in s))
        for k, s in enumerate(sents):
            pairs.append((f"{p}.{k}", " ".join(s), " ".join(transliterate(w) for w in s)))
    (work / "en.txt").write_text("\n".join(en) + "\n", encoding="utf-8")
    (work / "xx.txt").write_text("\n".join(xx) + "\n", encoding="utf-8")
    with open(work / "parallel.tsv", "w", encoding="utf-8") as fh:
        fh.write("\t".join(PARALLEL_COLUMNS) + "\n")
        fh.writelines("\t".join(r) + "\n" for r in pairs)
    return {
        "text": {"en": str(work / "en.txt"), "xx": str(work / "xx.txt")},
        "parallel": {"en-xx": str(work / "parallel.tsv")},
    }


def run_variant(name: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    import torch

    from xlalign.core.device import resolve_device
    from xlalign.encoders.scratch import ScratchArch, init_encoder, train_tokenizer
    from xlalign.pretrain.run import run_pretrain
    from xlalign.pretrain.scratch import row_settings, training_params

    arch, row, objectives, length = VARIANTS[name]
    if name == "004":
        objectives = {"mlm": {"batch_size": args.meta_batch}}
    files = _texts(work, args.paragraphs)
    texts = [
        line
        for f in files["text"].values()
        for line in Path(f).read_text(encoding="utf-8").splitlines()
    ]
    tok = train_tokenizer(texts, vocab_size=4000, pre_tokenizer="whitespace")
    base = init_encoder(tok, work / "init", arch=ScratchArch(**arch), seed=1)
    dev = resolve_device(args.device)
    stamps: list[float] = []

    def on_step(step: int) -> None:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        stamps.append(time.perf_counter())

    steps = args.warmup + args.steps
    section = {
        "steps": steps,
        "max_length": length,
        "learning_rate": 1e-4,
        "warmup_steps": 0,
        "eval_every": steps,
        "log_every": steps,
        "validation_paragraphs": 4,
        "objectives": objectives,
    }
    # what xlalign.pretrain.scratch.pretrain_scratch runs, with a step callback
    run_pretrain(
        row,
        encoder=base,
        objectives=row_settings(section, row),
        files=files,
        params=training_params(section),
        seed=1,
        output_dir=work / "out",
        stats_path=work / "out.json",
        work_dir=work / "train",
        validation_paragraphs=4,
        device=args.device,
        progress=False,
        on_step=on_step,
    )
    per = [b - a for a, b in zip(stamps[args.warmup :], stamps[args.warmup + 1 :], strict=False)]
    mlm = objectives["mlm"]["batch_size"] + objectives.get("tlm", {}).get("batch_size", 0)
    med = statistics.median(per)
    return {
        "variant": name,
        "arch": arch,
        "row": row,
        "objectives": objectives,
        "max_length": length,
        "timed_steps": len(per),
        "s_per_step_median": med,
        "s_per_step_mean": statistics.fmean(per),
        "sequences_per_s": mlm / med,
        "tokens_per_s": mlm * length / med,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", nargs="+", default=["tiny"], choices=sorted(VARIANTS))
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--meta-batch", type=int, default=64)
    ap.add_argument("--paragraphs", type=int, default=3000)
    ap.add_argument("--device", default=None)
    ap.add_argument("--out", default="benchmarks/out/scratch_pretrain_speed.json")
    args = ap.parse_args()
    import torch

    out: dict[str, Any] = {
        "machine": platform.platform(),
        "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
        "torch": torch.__version__,
        "results": [],
    }
    for name in args.variant:
        with tempfile.TemporaryDirectory() as tmp:
            res = run_variant(name, args, Path(tmp))
        print(json.dumps(res), flush=True)
        out["results"].append(res)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
