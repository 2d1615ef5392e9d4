"""Benchmark of VecMap (xlalign.vecmap) and BLI at a realistic vocabulary size.

Synthetic spaces as in tests/test_vecmap.py (clustered source with a decaying spectrum;
target = rotated source + noise, rows shuffled within windows of 8, some words spelt alike)
of ``--words`` words per side (default 200,000, dim 300). Per mode (supervised with 5,000
training pairs, semi-supervised with 25, identical with 2,000 shared strings, unsupervised)
it reports the wall time, the self-learning iterations and seconds per iteration, the peak
memory (CPU: the highest resident set size sampled every 20 ms while the mode runs, and
its rise over the RSS before; GPU: torch.cuda.max_memory_allocated), and P@1 of the
mapped spaces on 1,500 held-out source words (nearest neighbour).

Self-learning over the recipes' 20,000-word cut-off takes seconds per iteration on a CPU
and runs for hundreds of iterations (the keep probability goes 0.1 -> 1 by doubling after
50 iterations without improvement: at least 255 iterations), so ``--max-iterations``
(default 3) caps the loop and the table projects the full run from the seconds per
iteration at that minimum of iterations; real runs take more.

Then BLI (xlalign.bli.evaluate_bli) over the whole vocabulary, 200k x 200k by default,
with a 1,500-word test dictionary, for nearest-neighbour and CSLS (k=10) retrieval: time
and peak memory.

    .venv/bin/python benchmarks/bench_vecmap.py [--words N] [--dim D] [--modes ...]
        [--device cpu|cuda] [--max-iterations K] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import resource
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from xlalign.bli import evaluate_bli
from xlalign.contextual import resolve_device
from xlalign.vecmap import VecMapArgs, apply, map_embeddings, recipe_args

MODES = ("supervised", "semi-supervised", "identical", "unsupervised")
TRAIN_PAIRS = {"supervised": 5000, "semi-supervised": 25}
SHARED = 2000  # words spelt alike on both sides (for `identical`)
TEST_WORDS = 1500


def make_spaces(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source, target, gold): ``gold[i]`` is the target row of source row ``i``."""
    rng = np.random.default_rng(seed)
    spectrum = (1.0 / np.sqrt(1.0 + np.arange(d))).astype(np.float32)
    centers = rng.standard_normal((max(10, n // 50), d), dtype=np.float32) * spectrum
    x = centers[rng.integers(0, len(centers), n)]
    x += 0.7 * rng.standard_normal((n, d), dtype=np.float32) * spectrum
    x *= (1 + 0.5 * rng.random(n, dtype=np.float32))[:, None]
    rotation = np.linalg.qr(rng.standard_normal((d, d)))[0].astype(np.float32)
    z = x @ rotation
    z += 0.02 * rng.standard_normal((n, d), dtype=np.float32)
    order = np.arange(n)
    for start in range(0, n, 8):
        order[start : start + 8] = rng.permutation(order[start : start + 8])
    gold = np.empty(n, dtype=np.int64)
    gold[order] = np.arange(n)
    return x, z[order], gold


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize() / 2**20


class PeakMemory:
    """Peak RSS (sampled) and, on a GPU, peak allocated memory while the block runs."""

    def __init__(self, device: torch.device):
        self.device = device

    def __enter__(self) -> PeakMemory:
        self.start = self.peak = rss_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, rss_mb())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_mb())

    def as_dict(self) -> dict[str, float]:
        out = {"peak_rss_mb": self.peak, "rss_rise_mb": self.peak - self.start}
        if self.device.type == "cuda":
            out["gpu_peak_mb"] = torch.cuda.max_memory_allocated(self.device) / 2**20
        return out


def min_iterations(args: VecMapArgs) -> int:
    """Iterations of VecMap's schedule when the objective improves only at iteration 1."""
    keep, last, it = args.stochastic_initial, 1, 1
    while True:
        it += 1
        if it - last > args.stochastic_interval:
            if keep >= 1.0:
                return it - 1
            keep, last = min(1.0, keep * args.stochastic_multiplier), it


def timed(fn: Callable[[], Any], device: torch.device) -> tuple[Any, float, dict[str, float]]:
    with PeakMemory(device) as mem:
        t0 = time.perf_counter()
        out = fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        secs = time.perf_counter() - t0
    return out, secs, mem.as_dict()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--words", type=int, default=200_000)
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    ap.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    ap.add_argument("--max-iterations", type=int, default=3, help="self-learning cap (0: none)")
    ap.add_argument("--bli-batch-size", type=int, default=None)
    ap.add_argument("--no-bli", action="store_true", help="skip the BLI timings")
    ap.add_argument("--json", default="benchmarks/out/vecmap.json")
    opts = ap.parse_args()
    device = resolve_device(opts.device)
    n, d = opts.words, opts.dim

    t0 = time.perf_counter()
    x, z, gold = make_spaces(n, d)
    rng = np.random.default_rng(1)
    src_words = [f"s{i}" for i in range(n)]
    trg_words = [f"t{i}" for i in range(n)]
    for i in rng.choice(min(n, 20_000), SHARED, replace=False):
        src_words[i] = trg_words[gold[i]] = f"w{i}"
    # test words and (disjoint) training pairs among the 20k most frequent words
    frequent = rng.permutation(min(n, 20_000))
    test_rows, train_rows = frequent[:TEST_WORDS], frequent[TEST_WORDS:]
    test_dict = {src_words[i]: [trg_words[gold[i]]] for i in test_rows}
    print(
        f"{n:,} words x {d} dims per side on {device} "
        f"({torch.get_num_threads()} threads); data in {time.perf_counter() - t0:.1f}s",
        flush=True,
    )

    results: dict[str, Any] = {
        "words": n,
        "dim": d,
        "device": str(device),
        "threads": torch.get_num_threads(),
        "max_iterations": opts.max_iterations,
        "modes": [],
        "bli": [],
    }
    bli_vectors = None
    for mode in opts.modes:
        args = recipe_args(mode, max_iterations=opts.max_iterations)
        size = TRAIN_PAIRS.get(mode, 0)
        pairs = [(src_words[i], trg_words[gold[i]]) for i in train_rows[:size]] or None
        mapping, secs, mem = timed(
            lambda args=args, pairs=pairs: map_embeddings(
                x,
                z,
                args,
                src_words=src_words,
                trg_words=trg_words,
                dictionary=pairs,
                device=device,
            ),
            device,
        )
        xw, zw = (
            apply(mapping, x, "source", device=device),
            apply(mapping, z, "target", device=device),
        )
        p1 = evaluate_bli(src_words, xw, trg_words, zw, test_dict, device=device).precision[1]
        st = mapping.stats
        row: dict[str, Any] = {
            "mode": mode,
            "seconds": secs,
            "init_seconds": st["init_seconds"],
            "iterations": st["iterations"],
            "stopped_by_cap": st["stopped_by_cap"],
            "p@1": p1,
            **mem,
        }
        if st["iterations"]:
            per_it = float(np.mean(st["iteration_seconds"]))
            rest = secs - sum(st["iteration_seconds"])  # init, final mapping, checks
            row.update(
                seconds_per_iteration=per_it,
                projected_iterations=min_iterations(args),
                projected_seconds=rest + per_it * min_iterations(args),
            )
        results["modes"].append(row)
        print(json.dumps(row), flush=True)
        bli_vectors = (xw, zw)
        del mapping

    if bli_vectors is not None and not opts.no_bli:
        xw, zw = bli_vectors
        for retrieval in ("nn", "csls"):
            res, secs, mem = timed(
                lambda retrieval=retrieval: evaluate_bli(
                    src_words,
                    xw,
                    trg_words,
                    zw,
                    test_dict,
                    retrieval=retrieval,
                    csls_k=10,
                    batch_size=opts.bli_batch_size,
                    device=device,
                ),
                device,
            )
            row = {"retrieval": retrieval, "seconds": secs, "p@1": res.precision[1], **mem}
            results["bli"].append(row)
            print(json.dumps(row), flush=True)
    results["process_max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print()
    print(f"VecMap, {n:,} x {d} per side, {device}, self-learning capped at {opts.max_iterations}")
    head = f"{'mode':<17}{'seconds':>9}{'iters':>7}{'s/iter':>8}{'projected':>11}{'P@1':>7}"
    print(
        head + f"{'peak MB':>9}{'rise MB':>9}" + (f"{'GPU MB':>9}" if device.type == "cuda" else "")
    )
    for r in results["modes"]:
        per = f"{r['seconds_per_iteration']:8.2f}" if r["iterations"] else f"{'-':>8}"
        proj = (f"{r['projected_seconds'] / 60:9.1f}m" if r["iterations"] else f"{'-':>10}") + (
            "*" if r["iterations"] else " "
        )
        line = (
            f"{r['mode']:<17}{r['seconds']:9.1f}{r['iterations']:7d}{per}{proj}"
            f"{r['p@1']:7.3f}{r['peak_rss_mb']:9.0f}{r['rss_rise_mb']:9.0f}"
        )
        print(line + (f"{r['gpu_peak_mb']:9.0f}" if "gpu_peak_mb" in r else ""))
    if any(r["iterations"] for r in results["modes"]):
        it_min = next(r["projected_iterations"] for r in results["modes"] if r["iterations"])
        print(
            f"* projected full run: setup + s/iter x {it_min} iterations, the fewest the "
            f"default schedule allows; real runs take more. The loop here stopped after "
            f"{opts.max_iterations} (--max-iterations)."
        )
    if results["bli"]:
        print(f"\nBLI over {n:,} x {n:,} words, {TEST_WORDS} test words")
        print(f"{'retrieval':<11}{'seconds':>9}{'P@1':>7}{'peak MB':>9}{'rise MB':>9}")
        for r in results["bli"]:
            print(
                f"{r['retrieval']:<11}{r['seconds']:9.1f}{r['p@1']:7.3f}"
                f"{r['peak_rss_mb']:9.0f}{r['rss_rise_mb']:9.0f}"
                + (f"{r['gpu_peak_mb']:9.0f}" if "gpu_peak_mb" in r else "")
            )
    print(f"\nprocess peak RSS {results['process_max_rss_mb']:.0f} MB")
    if opts.json:
        Path(opts.json).parent.mkdir(parents=True, exist_ok=True)
        Path(opts.json).write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
