"""Benchmark of continued pre-training (xlalign.pretrain.trainer): training tokens/s with
MLM alone, with each alignment objective added, and of the Hugging Face MLM example on the
same model and data, side by side in one process.

Variants (each ``--steps`` optimiser steps after ``--warmup`` untimed ones, fp32 on the CPU
or bf16 on a GPU, seed 1, no validation and no checkpoints):

* ``hf-example``: what ``examples/pytorch/language-modeling/run_mlm.py`` does: the
  Trainer, ``AutoModelForMaskedLM`` (logits over the whole vocabulary at every position),
  ``DataCollatorForLanguageModeling`` (15 %, 80/10/10), the same packed sequences;
* ``mlm``: our loop with the ``mlm`` objective (logits at the masked positions only);
* ``mlm+<objective>``: ``mlm`` plus one alignment objective with its own batch
  (``--align-batch`` word-vector pairs for mse / gcca / dcca; sentence pairs for l2_align
  and contrastive; every dictionary pair for align_mlm).

Reported per variant: seconds per step, MLM tokens/s (the MLM batch's non-padding tokens
over the step time: the throughput the papers' runs are sized by), and the ratios
``mlm / hf-example`` (goal >= 0.9) and ``(mlm+x) step time / mlm step time`` (goal <= 1.10).
Variants alternate order over ``--repeats`` rounds (a shared machine's load drifts).

Data: the paragraphs of ``--text`` files (LANG=FILE; default the embedded run's samples),
static spaces ``--static`` (LANG=STEM), ``--aligned`` (PAIR=PAIRS_TSV,CORPUS_TSV) and
``--dictionary`` (LANG=FILE); objectives whose data is missing are skipped.

    .venv/bin/python benchmarks/pretrain_speed.py --encoder DIR --text en=... de=... \\
        --static en=... de=... [--aligned en-de=pairs.tsv,corpus.tsv] [--dictionary de=...] \\
        [--batch 8] [--max-length 64] [--align-batch 64] [--layer L] [--steps 10] \\
        [--repeats 2] [--only mlm mlm+gcca ...] [--out benchmarks/out/pretrain_speed.json]
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


def _pairs(items: list[str]) -> dict[str, str]:
    return dict(item.split("=", 1) for item in items)


def _ours(name: str, args: argparse.Namespace, world: dict[str, Any]) -> dict[str, float]:
    import numpy as np
    import torch

    from xlalign.pretrain import trainer
    from xlalign.pretrain.heads import load_masked_lm
    from xlalign.pretrain.objectives import build_objective

    model, _ = load_masked_lm(args.encoder, seed=1)
    dev = trainer.device_for(args.device)
    model.to(dev)
    files = {**world["files"], "train_corpus": world["train"]}
    terms = []
    for obj in name.split("+"):
        settings = {
            "batch_size": args.batch if obj == "mlm" else args.align_batch,
            "k": 10,
            "static": "bench",
            "layer": args.layer,
        }
        o = build_objective(
            obj,
            settings,
            model=model,
            tokenizer=world["tok"],
            files=files,
            seed=1,
            max_length=args.max_length,
        )
        terms.append(trainer.Term(o, 1.0, settings["batch_size"]))
    params = trainer.PretrainParams(
        steps=args.warmup + args.steps,
        max_length=args.max_length,
        eval_every=10**9,
        log_every=10**9,
    )
    times: list[float] = []
    tokens: list[int] = []
    last = [time.perf_counter()]

    def on_step(step: int) -> None:
        now = time.perf_counter()
        if step > args.warmup:
            times.append(now - last[0])
            rng = np.random.default_rng([1, step - 1, 0, 0])
            batch = terms[0].objective.sample(rng, terms[0].batch_size)
            tokens.append(int(batch["attention_mask"].sum()))
        last[0] = now

    with tempfile.TemporaryDirectory() as tmp:
        torch.manual_seed(1)
        trainer.train(
            model,
            terms,
            params=params,
            seed=1,
            work_dir=Path(tmp),
            run_fingerprint={"bench": name},
            device=dev,
            precision="auto" if dev.type == "cuda" else "fp32",
            progress=False,
            on_step=on_step,
        )
    step = statistics.median(times)
    return {"seconds_per_step": step, "mlm_tokens_per_s": statistics.median(tokens) / step}


def _hf_example(args: argparse.Namespace, world: dict[str, Any]) -> dict[str, float]:
    import numpy as np
    import torch
    from transformers import (
        AutoModelForMaskedLM,
        DataCollatorForLanguageModeling,
        Trainer,
        TrainerCallback,
        TrainingArguments,
    )

    tok = world["tok"]
    rng = np.random.default_rng(1)
    n = args.batch * (args.warmup + args.steps)
    seqs = [{"input_ids": s} for s in world["train"].sample(rng, n)]
    model = AutoModelForMaskedLM.from_pretrained(args.encoder)
    times: list[float] = []

    class Timer(TrainerCallback):
        def on_step_begin(self, *a: Any, **k: Any) -> None:
            self.t = time.perf_counter()

        def on_step_end(self, a: Any, state: Any, *rest: Any, **k: Any) -> None:
            if state.global_step > args.warmup:
                times.append(time.perf_counter() - self.t)

    with tempfile.TemporaryDirectory() as tmp:
        targs = TrainingArguments(
            output_dir=tmp,
            per_device_train_batch_size=args.batch,
            max_steps=args.warmup + args.steps,
            learning_rate=5e-5,
            report_to="none",
            save_strategy="no",
            logging_strategy="no",
            use_cpu=not torch.cuda.is_available(),
            seed=1,
            bf16=torch.cuda.is_available(),
            disable_tqdm=True,
        )
        collator = DataCollatorForLanguageModeling(tok, mlm_probability=0.15)
        Trainer(
            model=model, args=targs, train_dataset=seqs, data_collator=collator, callbacks=[Timer()]
        ).train()
    step = statistics.median(times)
    tokens = statistics.median(len(s["input_ids"]) for s in seqs) * args.batch
    return {"seconds_per_step": step, "mlm_tokens_per_s": tokens / step}


def main() -> None:
    from transformers import AutoTokenizer

    from xlalign.pretrain import text

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--encoder", required=True)
    ap.add_argument("--text", nargs="+", required=True)
    ap.add_argument("--static", nargs="+", default=[])
    ap.add_argument("--aligned", nargs="+", default=[])
    ap.add_argument("--dictionary", nargs="+", default=[])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--max-length", type=int, default=64)
    ap.add_argument("--align-batch", type=int, default=64)
    ap.add_argument(
        "--layer", type=int, help="alignment layer (hidden_states index; default the last)"
    )
    ap.add_argument("--only", nargs="+", help="run only these variants (e.g. mlm mlm+gcca)")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--device")
    ap.add_argument("--out", default=str(ROOT / "benchmarks/out/pretrain_speed.json"))
    args = ap.parse_args()

    tok = AutoTokenizer.from_pretrained(args.encoder)
    paras = {lang: text.read_paragraphs(Path(p), lang) for lang, p in _pairs(args.text).items()}
    train, _ = text.TextCorpus.build(
        paras, tok, max_length=args.max_length, validation_paragraphs=1, seed=1
    )
    files: dict[str, Any] = {}
    variants = ["mlm"]
    if args.static:
        files["static"] = _pairs(args.static)
        variants += ["mlm+mse", "mlm+gcca", "mlm+dcca"]
    if args.aligned:
        files["aligned"] = {k: v.split(",") for k, v in _pairs(args.aligned).items()}
        variants += ["mlm+l2_align", "mlm+contrastive"]
    if args.dictionary:
        files["dictionaries"] = _pairs(args.dictionary)
        variants += ["mlm+align_mlm"]
    if args.only:
        variants = [v for v in variants if v in args.only]
    world = {"tok": tok, "train": train, "files": files}
    names = ["hf-example", *variants] if not args.only or "hf-example" in args.only else variants
    rounds: dict[str, list[dict[str, float]]] = {v: [] for v in names}
    for r in range(args.repeats):
        order = list(rounds) if r % 2 == 0 else list(reversed(rounds))
        for name in order:
            try:
                res = _hf_example(args, world) if name == "hf-example" else _ours(name, args, world)
            except Exception as exc:
                res = {"error": f"{type(exc).__name__}: {exc}"}
            rounds[name].append(res)
            print(name, res, file=sys.stderr)
    out: dict[str, Any] = {"machine": platform.platform(), "args": vars(args), "variants": {}}
    for name, results in rounds.items():
        ok = [x for x in results if "error" not in x]
        if not ok:
            out["variants"][name] = results[-1]
            continue
        out["variants"][name] = {k: statistics.median(x[k] for x in ok) for k in ok[0]}
    base = out["variants"].get("mlm", {}).get("seconds_per_step")
    hf = out["variants"].get("hf-example", {}).get("mlm_tokens_per_s")
    for name, v in out["variants"].items():
        if base and "seconds_per_step" in v and name.startswith("mlm+"):
            v["step_time_vs_mlm"] = v["seconds_per_step"] / base
    if hf and "mlm_tokens_per_s" in out["variants"].get("mlm", {}):
        out["mlm_vs_hf_example"] = out["variants"]["mlm"]["mlm_tokens_per_s"] / hf
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
