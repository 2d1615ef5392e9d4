"""GPU rehearsal of the encoder-bound stages at 10x the embedded default's sizes (issue 28).

One process, one device (CUDA when torch sees one, else the CPU), one encoder: a
real-shaped XLM-R built offline with random weights (vocabulary 250,002; ``--arch small``
e5-small-like 384 hidden x 12 layers, ``--arch base`` 768 x 12) or a real checkpoint
(``--encoder DIR``, read offline). On a GPU every encoder computation runs under bf16
autocast. Per stage it reports tokens/s, examples/s, the peak GPU memory
(``torch.cuda.max_memory_allocated``, reset at the start of each stage) and the model FLOP
utilisation (MFU): ``2 x non-embedding parameters`` FLOPs per real (non-padding) token
forward, ``x 3`` when training, times tokens/s, over the device's peak dense bf16 FLOP/s
(:data:`PEAK_TFLOPS`, looked up from ``torch.cuda.get_device_name``; ``--peak-tflops``
overrides; on the CPU MFU is reported only with ``--peak-tflops``, else ``"n/a"``).

Stages (sizes: ``--scale`` (10) times the embedded default's work, config/config.yaml;
each stage stops after ``--budget`` seconds of measurement, so that the whole script fits
8 minutes on one H100/H200):

* ``teacher`` (xlalign.static.teacher, the context-vector pass): the model computation it
  performs, timed directly -- the encoder truncated at ``extract.layer`` (6), forward with
  ``output_hidden_states`` under inference mode, over length-sorted batches of at most
  ``--batch-tokens`` padded tokens; 24,000 sentences x scale.
* ``x2static`` (xlalign.static.x2static): :func:`train_x2static` itself, from an in-memory
  context source (random context vectors of the encoder's width, Zipf word ids over a
  20,000 x scale word vocabulary, capped at 200,000); rates are occurrences/s (tokens) and
  sentences/s; the FLOPs of its loss (``6 (1 + negatives) d`` a kept occurrence).
* ``aggregation`` (xlalign.static.aggregation, ``aggregate_vectors``' own encoder pass, the
  workflow's fallback when the teacher's sums are missing): the same truncated forward over
  the sentences holding a sampled occurrence (83 % of the teacher's at K=3).
* ``pretrain`` (xlalign.pretrain): forward + backward + AdamW steps of the MLM objective
  (15 % masked, logits at the masked positions only, as the library's loop), 40 x scale
  steps of ``--mlm-batch`` (64, the paper's) sequences of 64 tokens.
* ``finetune`` (xlalign.evaluation.tasks.finetune): forward + backward + clip + AdamW
  steps of a token-classification head (17 labels), 16 x scale steps of 32 sentences
  padded to their longest (at most 128).
* ``retrieval`` (xlalign.evaluation.tasks.retrieval, ``pooled_hidden_states``): the full
  encoder's forward with ``output_hidden_states`` in batches of 32, mean pooling of every
  layer, then the nearest-neighbour search of the last layer; 150 x scale pairs x 4
  languages, both sides.

Each stage's first units (two batches or steps; one for retrieval) are warm-up, not
timed. ``--total-budget`` (420 s) lowers the later stages' budgets when the earlier ones
ran long. A stage that fails (e.g. out of memory) is reported as failed, the others still
run, and the exit status is 1.

Without CUDA (or with ``--cpu-smoke``) a tiny model and tiny sizes run the same code: the
smoke mode the tests use. ``--device cpu`` runs the full shapes on the CPU instead (slow;
with a small ``--budget``, a check that the GPU run's code paths work).

Measured 2026-11-28 on the 2-core shared CPU (no GPU here), ``--device cpu --budget 4
--batch-tokens 2048 --mlm-batch 4``: every stage ran at the real shapes (random 384 x 12,
vocabulary 250,002; X2Static vocabulary 200,000), 2 min 19 s, 5.2 GB peak RSS.

    .venv/bin/python benchmarks/gpu_rehearsal.py [--arch base] [--encoder DIR]
        [--scale 10] [--budget 40] [--total-budget 420] [--peak-tflops 989]
        [--stages teacher pretrain ...] [--cpu-smoke | --device cpu]
        [--out benchmarks/out/gpu_rehearsal.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

#: Peak dense bf16 FLOP/s (TFLOP/s, no sparsity) by device name substring, first match wins
#: (A100 before A10, H100 PCIe before H100 SXM). V100 has no bf16: its fp16 tensor-core peak.
PEAK_TFLOPS: list[tuple[str, float]] = [
    ("H200", 989.0),
    ("H100 PCIe", 756.0),
    ("H100", 989.0),
    ("A100", 312.0),
    ("L40S", 362.0),
    ("A10", 125.0),
    ("V100", 125.0),
    ("4090", 165.0),
]

#: The embedded default's work per stage (config/config.yaml), multiplied by --scale.
EMBEDDED = {
    "teacher_sentences": 24_000,  # corpus.max_sentences of en/de
    "x2static_vocab": 20_000,
    "aggregation_fraction": 0.83,  # K=3 samples ~83 % of the sentences (config comment)
    "pretrain_steps": 40,
    "finetune_steps": 16,
    "retrieval_pairs": 150 * 4,  # 150 held-out verses x 4 languages
}
STAGES = ("teacher", "x2static", "aggregation", "pretrain", "finetune", "retrieval")
ARCHS = {
    "small": {"hidden_size": 384, "num_hidden_layers": 12, "num_attention_heads": 12},
    "base": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12},
    "tiny": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2},
}


def peak_tflops(device: torch.device, override: float | None) -> tuple[float | None, str]:
    """The device's peak bf16 TFLOP/s and where it came from."""
    if override:
        return float(override), "--peak-tflops"
    if device.type != "cuda":
        return None, "none (CPU: give --peak-tflops)"
    name = torch.cuda.get_device_name(device)
    value = peak_for_name(name)
    if value is None:
        return None, f"unknown device {name!r} (give --peak-tflops)"
    return value, f"table ({name})"


def peak_for_name(name: str) -> float | None:
    """The table's peak TFLOP/s for a CUDA device name, or None when it is not listed."""
    for key, value in PEAK_TFLOPS:
        if key.lower() in name.lower():
            return value
    return None


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def autocast(device: torch.device, enabled: bool) -> contextlib.AbstractContextManager[Any]:
    if not enabled:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16)


def non_embedding_params(module: torch.nn.Module) -> int:
    """Parameters outside the embeddings (and the tied MLM decoder)."""
    return sum(
        p.numel()
        for name, p in module.named_parameters()
        if "embeddings" not in name and "lm_head.decoder" not in name
    )


def sentence_lengths(n: int, rng: np.random.Generator, *, mean: float, cap: int) -> np.ndarray:
    """Subword lengths (special tokens included) of ``n`` synthetic sentences."""
    raw = rng.lognormal(mean=math.log(mean), sigma=0.5, size=n)
    return np.clip(np.rint(raw), 4, cap).astype(np.int64)


def token_batches(lengths: np.ndarray, batch_tokens: int) -> list[np.ndarray]:
    """Length-sorted batches of at most ``batch_tokens`` padded tokens (the teacher's)."""
    order = np.argsort(-lengths, kind="stable")
    batches: list[np.ndarray] = []
    cur: list[int] = []
    for i in order:
        longest = int(lengths[cur[0]]) if cur else int(lengths[i])
        if cur and longest * (len(cur) + 1) > batch_tokens:
            batches.append(lengths[cur])
            cur = []
        cur.append(int(i))
    if cur:
        batches.append(lengths[cur])
    return batches


def make_inputs(
    lengths: np.ndarray, vocab: int, device: torch.device, gen: torch.Generator
) -> dict[str, torch.Tensor]:
    """Random ids padded to the longest, with the attention mask."""
    width = int(lengths.max())
    ids = torch.randint(5, vocab, (len(lengths), width), generator=gen)
    mask = (torch.arange(width)[None, :] < torch.as_tensor(lengths)[:, None]).long()
    ids = ids * mask + 1 * (1 - mask)  # pad id 1
    return {"input_ids": ids.to(device), "attention_mask": mask.to(device)}


class Meter:
    """Times a stage's units of work until they run out or the budget is spent."""

    def __init__(self, device: torch.device, budget: float, warmup: int) -> None:
        self.device, self.budget, self.warmup = device, budget, warmup
        self.tokens = self.examples = self.units = 0
        self.seconds = 0.0

    def run(self, units: Iterator[Callable[[], tuple[int, int]]]) -> None:
        """Each unit returns (tokens, examples); the first ``warmup`` are not counted."""
        start = None
        for k, unit in enumerate(units):
            if k == self.warmup:
                sync(self.device)
                start = time.perf_counter()
            tokens, examples = unit()
            if start is not None:
                self.tokens += tokens
                self.examples += examples
                self.units += 1
                sync(self.device)
                self.seconds = time.perf_counter() - start
                if self.seconds >= self.budget:
                    break


class Rehearsal:
    """Shared settings: device, model shape, sizes, budget."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        auto = "cuda" if torch.cuda.is_available() and not args.cpu_smoke else "cpu"
        self.device = torch.device(args.device or auto)
        self.bf16 = self.device.type == "cuda" and not args.no_bf16
        self.smoke = args.cpu_smoke
        self.scale = args.scale
        self.rng = np.random.default_rng(1)
        self.gen = torch.Generator().manual_seed(1)
        if args.encoder:
            from transformers import AutoConfig

            self.config = AutoConfig.from_pretrained(args.encoder, local_files_only=True)
        else:
            from transformers import XLMRobertaConfig

            shape = ARCHS["tiny" if self.smoke else args.arch]
            self.config = XLMRobertaConfig(
                vocab_size=1000 if self.smoke else 250_002,
                intermediate_size=4 * shape["hidden_size"],
                max_position_embeddings=514,
                type_vocab_size=1,
                pad_token_id=1,
                bos_token_id=0,
                eos_token_id=2,
                **shape,
            )
        self.config.num_labels = 17

    def model(self, kind: str, layers: int | None = None) -> torch.nn.Module:
        """A model of the encoder's shape (random weights unless --encoder), on the device."""
        import copy

        from transformers import (
            AutoModel,
            AutoModelForMaskedLM,
            AutoModelForTokenClassification,
        )

        cls = {
            "base": AutoModel,
            "mlm": AutoModelForMaskedLM,
            "tagging": AutoModelForTokenClassification,
        }[kind]
        config = copy.deepcopy(self.config)
        if layers is not None:
            config.num_hidden_layers = min(layers, config.num_hidden_layers)
        torch.manual_seed(1)
        if self.args.encoder:
            model = cls.from_pretrained(self.args.encoder, config=config, local_files_only=True)
        else:
            model = cls.from_config(config)
        return model.to(self.device)

    def n(self, key: str, smoke: int) -> int:
        return smoke if self.smoke else int(EMBEDDED[key] * self.scale)

    # ------------------------------------------------------------------ stages

    def forward_pass(self, layers: int | None, sentences: int, batch_tokens: int) -> dict:
        model = self.model("base", layers).eval()
        lengths = sentence_lengths(sentences, self.rng, mean=32, cap=200)
        batches = token_batches(lengths, batch_tokens)
        meter = Meter(self.device, self.args.budget, warmup=2)

        def units() -> Iterator[Callable[[], tuple[int, int]]]:
            for lens in batches:

                def unit(lens: np.ndarray = lens) -> tuple[int, int]:
                    inputs = make_inputs(lens, self.config.vocab_size, self.device, self.gen)
                    with torch.inference_mode(), autocast(self.device, self.bf16):
                        out = model(**inputs, output_hidden_states=True)
                        out.hidden_states[-1].float().sum().item()
                    return int(lens.sum()), len(lens)

                yield unit

        meter.run(units())
        return self.result(meter, non_embedding_params(model), 2.0, len(batches))

    @property
    def layers(self) -> int:
        return min(self.args.layer, int(self.config.num_hidden_layers))

    def teacher(self) -> dict:
        r = self.forward_pass(
            self.args.layer, self.n("teacher_sentences", 600), self.args.batch_tokens
        )
        r["what"] = (
            f"timed model computation: layers 1-{self.layers} forward, "
            "output_hidden_states, length-sorted token batches"
        )
        return r

    def aggregation(self) -> dict:
        n = self.n("teacher_sentences", 600)
        r = self.forward_pass(
            self.args.layer, int(n * EMBEDDED["aggregation_fraction"]), self.args.batch_tokens
        )
        r["what"] = (
            f"timed model computation: aggregate_vectors' own pass (layers 1-{self.layers}, "
            "sampled sentences)"
        )
        return r

    def retrieval(self) -> dict:
        model = self.model("base").eval()
        pairs = self.n("retrieval_pairs", 64)
        sides = [sentence_lengths(pairs, self.rng, mean=40, cap=512) for _ in range(2)]
        meter = Meter(self.device, self.args.budget, warmup=1)
        pooled: list[list[torch.Tensor]] = [[], []]
        bs = 32

        def units() -> Iterator[Callable[[], tuple[int, int]]]:
            for side, lengths in enumerate(sides):
                for a in range(0, len(lengths), bs):

                    def unit(lens: np.ndarray = lengths[a : a + bs], side: int = side):
                        inputs = make_inputs(lens, self.config.vocab_size, self.device, self.gen)
                        with torch.inference_mode(), autocast(self.device, self.bf16):
                            out = model(**inputs, output_hidden_states=True)
                            m = inputs["attention_mask"].unsqueeze(-1).float()
                            states = torch.stack([h.float() for h in out.hidden_states])
                            vecs = (states * m).sum(2) / m.sum(1)
                            pooled[side].append(vecs[-1].cpu())
                        return int(lens.sum()), len(lens)

                    yield unit

        meter.run(units())
        # the search, on what was encoded (both sides the same number of rows)
        k = min(sum(len(t) for t in pooled[0]), sum(len(t) for t in pooled[1]))
        if k:
            q = torch.nn.functional.normalize(torch.cat(pooled[0])[:k], dim=1)
            idx = torch.nn.functional.normalize(torch.cat(pooled[1])[:k], dim=1)
            (q @ idx.T).argmax(1)
        r = self.result(meter, non_embedding_params(model), 2.0, 2 * math.ceil(pairs / bs))
        r["what"] = (
            "timed model computation: full forward, output_hidden_states, mean pooling of "
            "every layer (pooled_hidden_states), batches of 32"
        )
        return r

    def train_steps(self, kind: str, steps: int, batch: int, max_len: int) -> dict:
        model = self.model(kind).train()
        fused = self.device.type == "cuda"
        opt = torch.optim.AdamW(model.parameters(), lr=2e-5, eps=1e-8, fused=fused)
        meter = Meter(self.device, self.args.budget, warmup=2)
        vocab = self.config.vocab_size

        def step() -> tuple[int, int]:
            if kind == "mlm":
                lens = np.full(batch, max_len, dtype=np.int64)  # packed sequences
            else:
                lens = sentence_lengths(batch, self.rng, mean=28, cap=max_len)
            inputs = make_inputs(lens, vocab, self.device, self.gen)
            mask = inputs["attention_mask"].bool()
            with autocast(self.device, self.bf16):
                if kind == "mlm":
                    picked = (torch.rand(mask.shape, generator=self.gen) < 0.15).to(self.device)
                    picked &= mask
                    labels = inputs["input_ids"][picked]
                    hidden = model.base_model(**inputs).last_hidden_state
                    head = getattr(model, "lm_head", None) or model.cls  # RoBERTa / BERT
                    logits = head(hidden[picked])  # masked positions only
                    loss = torch.nn.functional.cross_entropy(logits.float(), labels)
                else:
                    labels = torch.randint(0, 17, mask.shape, generator=self.gen).to(self.device)
                    labels[~mask] = -100
                    loss = model(**inputs, labels=labels).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            return int(lens.sum()), batch

        meter.run(step for _ in range(steps + 2))
        params = non_embedding_params(model.base_model)
        return self.result(meter, params, 6.0, steps)

    def pretrain(self) -> dict:
        batch = 4 if self.smoke else self.args.mlm_batch
        r = self.train_steps("mlm", self.n("pretrain_steps", 6), batch, 64)
        r["what"] = (
            f"timed model computation: MLM forward+backward+AdamW, {batch} x 64-token "
            "sequences, logits at masked positions only"
        )
        return r

    def finetune(self) -> dict:
        batch = 8 if self.smoke else 32
        r = self.train_steps("tagging", self.n("finetune_steps", 6), batch, 128)
        r["what"] = (
            f"timed model computation: token classification forward+backward+clip+AdamW, "
            f"{batch} sentences padded to their longest"
        )
        return r

    def x2static(self) -> dict:
        from xlalign.corpus.vocab import Vocab
        from xlalign.static.x2static import X2StaticArgs, train_x2static

        dim = int(self.config.hidden_size)
        n_words = 500 if self.smoke else min(200_000, int(EMBEDDED["x2static_vocab"] * self.scale))
        n_sent = self.n("teacher_sentences", 600)
        per_sentence = 20
        counts = np.maximum(1, (1e6 / np.arange(1, n_words + 1)).astype(np.int64))
        vocab = Vocab(words=[f"w{i}" for i in range(n_words)], counts=counts, lowercase=False)
        source = _ContextSource(dim, n_sent, per_sentence, counts, self.args.budget, self.rng)
        xargs = X2StaticArgs(
            epochs=1,
            batch_sentences=128,
            negatives=10,
            subsample_t=1e-4,
            lr=1e-2,
            seed=1,
            checkpoint_every_batches=0,
            checkpoint_minutes=None,
            device=self.device.type,
        )
        with tempfile.TemporaryDirectory() as tmp:
            res = train_x2static(source, vocab, xargs, output_dir=tmp, progress=False)
        kept = float(res.stats["kept_fraction"])
        # stopped by the budget: up to the end of the last step served; else the whole call
        seconds = source.seconds if source.stopped else float(res.stats["seconds_this_call"])
        meter = Meter(self.device, self.args.budget, warmup=0)
        meter.tokens, meter.examples, meter.seconds = source.occurrences, source.sentences, seconds
        meter.units = source.batches
        # FLOPs of the loss per occurrence: (1 + K) dot products of d, forward and backward
        r = self.result(meter, None, 6.0 * (1 + xargs.negatives) * dim * kept, None)
        r["what"] = (
            "train_x2static itself (library), in-memory random contexts; tokens = occurrences"
        )
        r["kept_fraction"] = kept
        r["stopped_by_budget"] = source.stopped
        return r

    def result(
        self, meter: Meter, params: int | None, flops_factor: float, planned: int | None
    ) -> dict:
        secs = max(meter.seconds, 1e-9)
        tok_s, ex_s = meter.tokens / secs, meter.examples / secs
        flops_per_token = flops_factor * params if params is not None else flops_factor
        peak, _ = peak_tflops(self.device, self.args.peak_tflops)
        mfu: float | str = "n/a"
        if peak:
            mfu = flops_per_token * tok_s / (peak * 1e12)
        peak_mem: float | str = "n/a"
        if self.device.type == "cuda":
            peak_mem = torch.cuda.max_memory_allocated(self.device) / 2**30
        return {
            "tokens_per_s": tok_s,
            "examples_per_s": ex_s,
            "peak_mem_gib": peak_mem,
            "mfu": mfu,
            "flops_per_token": flops_per_token,
            "non_embedding_params": params,
            "seconds": meter.seconds,
            "tokens": meter.tokens,
            "examples": meter.examples,
            "units_timed": meter.units,
            "units_planned": planned,
            "stopped_by_budget": meter.seconds >= self.args.budget,
        }


class _ContextSource:
    """Random contexts for train_x2static, served until the time budget is spent (then empty
    batches, which the trainer skips at once); counts what it served and when."""

    def __init__(
        self,
        dim: int,
        n_sentences: int,
        per_sentence: int,
        counts: np.ndarray,
        budget: float,
        rng: np.random.Generator,
    ) -> None:
        self._dim, self._n = dim, n_sentences
        self.per_sentence, self.budget = per_sentence, budget
        p = counts / counts.sum()
        self.ids = rng.choice(len(counts), size=1 << 16, p=p).astype(np.int64)
        self.pool = (rng.standard_normal((1 << 14, dim)) / math.sqrt(dim)).astype(np.float32)
        self.start: float | None = None
        self.last = 0.0
        self.stopped = False
        self.occurrences = self.sentences = self.batches = 0
        self.off = 0

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def n_sentences(self) -> int:
        return self._n

    @property
    def seconds(self) -> float:
        return self.last - self.start if self.start is not None else 0.0

    def batch(self, sentence_indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        now = time.perf_counter()
        if self.start is None:
            self.start = now
        elif self.batches:
            self.last = now  # the previous batch's training step ended here
        if now - self.start >= self.budget:
            self.stopped = True
            return np.empty(0, np.int64), np.empty((0, self._dim), np.float32)
        n = len(sentence_indices) * self.per_sentence
        a = self.off % (len(self.ids) - n)
        b = self.off % (len(self.pool) - n)
        self.off += 7919
        self.occurrences += n
        self.sentences += len(sentence_indices)
        self.batches += 1
        return self.ids[a : a + n], self.pool[b : b + n]


def fmt(x: Any, spec: str) -> str:
    return format(x, spec) if isinstance(x, int | float) else str(x)


def table(results: dict[str, dict], meta: dict) -> str:
    lines = [
        f"device: {meta['device']} ({meta['dtype']}), encoder: {meta['encoder']}, "
        f"peak {meta['peak_tflops']} TFLOP/s from {meta['peak_source']}, "
        f"budget {meta['budget_s']} s a stage, scale {meta['scale']}",
        "",
        "| stage | tokens/s | examples/s | peak GPU mem (GiB) | MFU | s timed | what |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, r in results.items():
        if "error" in r:
            lines.append(f"| {name} | failed | | | | | {r['error'][:200]} |")
            continue
        mfu = f"{r['mfu']:.2%}" if isinstance(r["mfu"], float) else r["mfu"]
        lines.append(
            f"| {name} | {fmt(r['tokens_per_s'], ',.0f')} | {fmt(r['examples_per_s'], ',.1f')} "
            f"| {fmt(r['peak_mem_gib'], '.2f')} | {mfu} | {r['seconds']:.1f} | {r['what']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--arch", choices=["small", "base"], default="small")
    ap.add_argument("--encoder", help="a real checkpoint directory (read offline)")
    ap.add_argument("--scale", type=float, default=10.0, help="times the embedded default")
    ap.add_argument("--budget", type=float, default=40.0, help="seconds of measurement a stage")
    ap.add_argument(
        "--total-budget", type=float, default=420.0, help="seconds for the whole run (about)"
    )
    ap.add_argument("--peak-tflops", type=float, default=None)
    ap.add_argument("--layer", type=int, default=6, help="the teacher's layer (extract.layer)")
    ap.add_argument("--batch-tokens", type=int, default=16384, help="teacher/aggregation")
    ap.add_argument("--mlm-batch", type=int, default=64)
    ap.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES))
    ap.add_argument("--cpu-smoke", action="store_true", help="tiny model and sizes, on the CPU")
    ap.add_argument("--no-bf16", action="store_true")
    ap.add_argument(
        "--device", default=None, help="torch device (default: CUDA if any, else the smoke mode)"
    )
    ap.add_argument("--out", type=Path, default=None, help="also write the results as JSON")
    args = ap.parse_args(argv)
    if not torch.cuda.is_available() and not args.cpu_smoke and args.device is None:
        print("gpu_rehearsal: no CUDA device; running the CPU smoke mode", file=sys.stderr)
        args.cpu_smoke = True
    if args.cpu_smoke:
        args.budget = min(args.budget, 2.0)
        args.batch_tokens = min(args.batch_tokens, 2048)
    t0 = time.perf_counter()
    reh = Rehearsal(args)
    peak, source = peak_tflops(reh.device, args.peak_tflops)
    results: dict[str, dict] = {}
    budget = args.budget
    failed = []
    for k, name in enumerate(args.stages):
        # keep the whole run within --total-budget: later stages get a share of what is left
        left = args.total_budget - (time.perf_counter() - t0)
        args.budget = max(1.0, min(budget, 0.7 * left / (len(args.stages) - k)))
        if reh.device.type == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(reh.device)
        started = time.perf_counter()
        try:
            results[name] = getattr(reh, name)()
        except Exception as exc:  # a rehearsal reports a failed stage and goes on (e.g. OOM)
            failed.append(name)
            results[name] = {"error": f"{type(exc).__name__}: {exc}"[:500]}
        results[name]["budget_s"] = args.budget
        results[name]["wall_s"] = time.perf_counter() - started
        print(f"gpu_rehearsal: {name} done in {results[name]['wall_s']:.1f} s", file=sys.stderr)
    args.budget = budget
    meta = {
        "device": torch.cuda.get_device_name(reh.device)
        if reh.device.type == "cuda"
        else str(reh.device),
        "dtype": "bf16 autocast" if reh.bf16 else "fp32",
        "encoder": args.encoder or ("tiny (smoke)" if args.cpu_smoke else f"random {args.arch}"),
        "hidden": int(reh.config.hidden_size),
        "layers": int(reh.config.num_hidden_layers),
        "vocab": int(reh.config.vocab_size),
        "peak_tflops": peak if peak else "n/a",
        "peak_source": source,
        "budget_s": args.budget,
        "scale": 1 if args.cpu_smoke else args.scale,
        "smoke": args.cpu_smoke,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "total_s": time.perf_counter() - t0,
    }
    print(table(results, meta))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.out.with_name(args.out.name + ".partial")
        tmp.write_text(json.dumps({"meta": meta, "stages": results}, indent=2) + "\n")
        tmp.replace(args.out)
    if failed:
        print(f"gpu_rehearsal: failed stages: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
