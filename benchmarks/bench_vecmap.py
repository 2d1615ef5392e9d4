"""Benchmark of VecMap (xlalign.mapping.vecmap) and BLI against the public tools' way, side by side.

Synthetic spaces as in tests/mapping/test_vecmap.py (clustered source with a decaying spectrum;
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

Baseline, VecMap (the self-learning modes; skip with ``--no-baseline``): a plain NumPy
re-statement, in this file, of what the public tool (Artetxe et al., ``map_embeddings.py``)
does per self-learning iteration on the CPU, run in the same process on the same spaces
from the same seed dictionary (computed once by xlalign) for as many iterations as ours
ran: the orthogonal mapping from the SVD of ``z[trg]^T x[src]`` applied to the whole
source space, then the dictionary induction over the ``vocabulary_cutoff`` most frequent
words in row batches of ``batch_size``, in four similarity passes as the tool makes them
(the targets' CSLS term, forward retrieval, the sources' CSLS term, backward retrieval),
with the tool's dropout (NumPy's float64 ``rand`` over each block, similarities zeroed
with probability ``1 - keep_prob``) and the mean of the ``k`` = 10 largest similarities.
That mean uses ``np.argpartition`` by default; the tool itself takes ``k`` successive
row-wise argmaxes (``--baseline-topk argmax``). Reported: seconds per iteration of both
and the ratio baseline/ours (above 1: ours is faster), the peak and rise of RSS of both
(ours over the whole ``map_embeddings`` call, initialisation included; the baseline over
its normalised copies of the spaces and its iterations), and whether both induce the same
dictionary: the share of forward (source -> target) and backward pairs on which they agree
after the run above (whose dropout masks come from different generators, so they differ)
and after ``--check-iterations`` (default: as many as above) more iterations of both with
the keep probability at 1 (no dropout; deterministic, so they should agree up to rounding
and ties). The VecMap baseline runs on the CPU even with ``--device cuda``.

Then BLI (xlalign.evaluation.bli.evaluate_bli) over the whole vocabulary, 200k x 200k by default,
with a 1,500-word test dictionary, for nearest-neighbour and CSLS (k=10) retrieval: time
and peak memory. Baseline, BLI: what MUSE's evaluation (``get_word_translation_accuracy``
with ``nn`` or ``csls_knn_10``) does, in torch on the same device: rows to unit length,
for CSLS the mean similarity of *every* source word to its 10 nearest targets and of every
target word to its 10 nearest sources (two full ``n x n`` passes in blocks of 1,024 query
rows, as MUSE's ``get_nn_avg_dist`` without Faiss; a whole 200k x 200k matrix would be
160 GB, so the baseline is batched too), then the scores of all test words against all
targets in one ``test words x n`` block (as MUSE; 1.2 GB at 200k) and their top 10.
Reported: time, P@1 and peak memory of both, and the ratio of the times baseline/ours.

    .venv/bin/python benchmarks/bench_vecmap.py [--words N] [--dim D] [--modes ...]
        [--device cpu|cuda] [--max-iterations K] [--check-iterations K2]
        [--baseline-topk argpartition|argmax] [--no-baseline] [--no-bli] [--json FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
import resource
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from xlalign.core.device import resolve_device
from xlalign.evaluation.bli import evaluate_bli
from xlalign.mapping.vecmap import (
    VecMapArgs,
    _seed_dictionary,  # the seed both sides start from (private: a benchmark of our own)
    apply,
    map_embeddings,
    normalize,
    recipe_args,
)

MODES = ("supervised", "semi-supervised", "identical", "unsupervised")
TRAIN_PAIRS = {"supervised": 5000, "semi-supervised": 25}
SHARED = 2000  # words spelt alike on both sides (for `identical`)
TEST_WORDS = 1500
MUSE_BATCH = 1024  # query rows per block of MUSE's get_nn_avg_dist
CPU = torch.device("cpu")


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


def release_free_memory() -> None:
    """Return freed heap memory to the system (glibc), so that the RSS rise of a block counts
    its own allocations and not the reuse of what a block measured before it freed."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def timed(fn: Callable[[], Any], device: torch.device) -> tuple[Any, float, dict[str, float]]:
    release_free_memory()
    with PeakMemory(device) as mem:
        t0 = time.perf_counter()
        out = fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        secs = time.perf_counter() - t0
    return out, secs, mem.as_dict()


# --------------------------------------------------------------------------- VecMap baseline


def np_normalize_(m: np.ndarray, steps: tuple[str, ...]) -> np.ndarray:
    """The tool's normalisation steps, in place (a zero norm is left as 1)."""
    for step in steps:
        if step in ("unit", "unitdim"):
            norms = np.linalg.norm(m, axis=1 if step == "unit" else 0, keepdims=True)
            norms[norms == 0] = 1
            m /= norms
        elif step == "center":
            m -= m.mean(axis=0, keepdims=True)
        elif step == "centeremb":
            m -= m.mean(axis=1, keepdims=True)
    return m


def topk_mean_argpartition(m: np.ndarray, k: int) -> np.ndarray:
    """Row-wise mean of the ``k`` largest values, selected with ``np.argpartition``."""
    k = min(k, m.shape[1])
    top = np.argpartition(m, m.shape[1] - k, axis=1)[:, m.shape[1] - k :]
    return np.take_along_axis(m, top, axis=1).mean(axis=1)


def topk_mean_argmax(m: np.ndarray, k: int) -> np.ndarray:
    """Row-wise mean of the ``k`` largest values as the tool finds them (overwrites ``m``).

    ``k`` rounds of a row-wise argmax, each found maximum then replaced by the block's
    minimum so that the next round finds the next largest.
    """
    k = min(k, m.shape[1])
    rows = np.arange(m.shape[0])
    total = np.zeros(m.shape[0], dtype=m.dtype)
    low = m.min()
    for _ in range(k):
        cols = m.argmax(axis=1)
        total += m[rows, cols]
        m[rows, cols] = low
    return total / k


TOPK_MEAN = {"argpartition": topk_mean_argpartition, "argmax": topk_mean_argmax}


def vecmap_reference(
    x: np.ndarray,
    z: np.ndarray,
    src_idx: np.ndarray,
    trg_idx: np.ndarray,
    args: VecMapArgs,
    iterations: int,
    *,
    topk: str = "argpartition",
) -> dict[str, Any]:
    """``iterations`` self-learning iterations as the public VecMap tool runs them on a CPU.

    Plain NumPy in float32 (the tool's default precision), from the seed dictionary
    ``(src_idx, trg_idx)``, with the tool's arrays: normalised copies of both spaces, the
    mapped spaces ``xw``/``zw`` in full, and one similarity buffer per direction of
    ``min(batch_size, cut-off) x cut-off``. Per iteration: ``W = V U^T`` from the SVD
    ``z[trg]^T x[src] = U S V^T``, ``xw = x W`` (the whole space) and ``zw = z``, then
    the dictionary induction over the first ``vocabulary_cutoff`` words of each side:

    * forward: the CSLS term of every target row (mean of its ``k`` largest similarities
      to the source rows), then for every source row its best similarity (the objective)
      and the argmax of (similarities minus half the targets' CSLS terms), after the
      dropout (NumPy's global-style ``RandomState``: float64 uniforms over the block,
      kept where ``>= 1 - keep_prob``, the block multiplied by that mask);
    * backward: the same with the sides swapped, in two more passes;

    four batched ``B x C`` similarity passes per iteration, as the tool computes them.
    The keep probability follows the tool's schedule (it stops early, as the tool would,
    if the keep probability is already 1 when it would grow). Only supports the recipes'
    ``orthogonal`` self-learning mapping (the tool's, whatever the final mapping).
    """
    rng = np.random.RandomState(args.seed)
    topk_mean = TOPK_MEAN[topk]
    x = np_normalize_(np.array(x, dtype=np.float32), args.normalize)
    z = np_normalize_(np.array(z, dtype=np.float32), args.normalize)
    xw, zw = np.empty_like(x), np.empty_like(z)
    cut = args.vocabulary_cutoff
    ns = x.shape[0] if cut <= 0 else min(x.shape[0], cut)
    nt = z.shape[0] if cut <= 0 else min(z.shape[0], cut)
    k, bs = args.csls_neighborhood, args.batch_size or 10000  # the tool's default
    fwd = args.direction in ("forward", "union")
    bwd = args.direction in ("backward", "union")
    sim_fwd = np.empty((min(bs, ns), nt), dtype=np.float32)
    sim_bwd = np.empty((min(bs, nt), ns), dtype=np.float32)
    knn_fwd, knn_bwd = np.zeros(ns, np.float32), np.zeros(nt, np.float32)
    best_fwd, trg_fwd = np.zeros(ns, np.float32), np.zeros(ns, np.int64)
    best_bwd, src_bwd = np.zeros(nt, np.float32), np.zeros(nt, np.int64)
    src_idx, trg_idx = np.asarray(src_idx), np.asarray(trg_idx)

    def dropout(m: np.ndarray, p: float) -> np.ndarray:
        return m if p <= 0.0 else m * (rng.rand(*m.shape) >= p)

    def passes(queries: np.ndarray, keys: np.ndarray, buf: np.ndarray):
        for i in range(0, queries.shape[0], buf.shape[0]):
            j = min(i + buf.shape[0], queries.shape[0])
            block = buf[: j - i]
            np.dot(queries[i:j], keys.T, out=block)
            yield i, j, block

    keep_prob, last_improvement, best_objective = args.stochastic_initial, 0, -100.0
    seconds: list[float] = []
    objectives: list[float] = []
    for it in range(1, iterations + 1):
        t0 = time.perf_counter()
        if it - last_improvement > args.stochastic_interval:
            if keep_prob >= 1.0:
                break
            keep_prob = min(1.0, args.stochastic_multiplier * keep_prob)
            last_improvement = it
        u, _s, vt = np.linalg.svd(z[trg_idx].T @ x[src_idx])
        np.dot(x, vt.T @ u.T, out=xw)
        zw[:] = z
        xs, zs = xw[:ns], zw[:nt]
        if fwd:
            if k > 0:
                for i, j, block in passes(zs, xs, sim_bwd):
                    knn_bwd[i:j] = topk_mean(block, k)
            for i, j, block in passes(xs, zs, sim_fwd):
                block.max(axis=1, out=best_fwd[i:j])
                block -= knn_bwd / 2
                trg_fwd[i:j] = dropout(block, 1 - keep_prob).argmax(axis=1)
        if bwd:
            if k > 0:
                for i, j, block in passes(xs, zs, sim_fwd):
                    knn_fwd[i:j] = topk_mean(block, k)
            for i, j, block in passes(zs, xs, sim_bwd):
                block.max(axis=1, out=best_bwd[i:j])
                block -= knn_fwd / 2
                src_bwd[i:j] = dropout(block, 1 - keep_prob).argmax(axis=1)
        if args.direction == "forward":
            src_idx, trg_idx = np.arange(ns), trg_fwd.copy()
            objective = float(best_fwd.mean())
        elif args.direction == "backward":
            src_idx, trg_idx = src_bwd.copy(), np.arange(nt)
            objective = float(best_bwd.mean())
        else:
            src_idx = np.concatenate([np.arange(ns), src_bwd])
            trg_idx = np.concatenate([trg_fwd, np.arange(nt)])
            objective = (float(best_fwd.mean()) + float(best_bwd.mean())) / 2
        if objective - best_objective >= args.threshold:
            last_improvement, best_objective = it, objective
        objectives.append(objective)
        seconds.append(time.perf_counter() - t0)
    return {
        "forward": trg_fwd if fwd else None,
        "backward": src_bwd if bwd else None,
        "iteration_seconds": seconds,
        "objective": objectives,
        "keep_prob": keep_prob,
    }


def seed_indices(
    x: np.ndarray,
    z: np.ndarray,
    args: VecMapArgs,
    src_words: list[str],
    trg_words: list[str],
    pairs: Any,
    device: torch.device,
) -> tuple[np.ndarray, np.ndarray]:
    """The seed dictionary ``map_embeddings`` starts from (the same code, the same input)."""
    xt = torch.as_tensor(normalize(x, args.normalize), device=device)
    zt = torch.as_tensor(normalize(z, args.normalize), device=device)
    s, t = _seed_dictionary(xt, zt, args, src_words, trg_words, pairs, {})
    return s.cpu().numpy(), t.cpu().numpy()


def induced(mapping: Any, args: VecMapArgs, n_src: int) -> tuple[np.ndarray, np.ndarray]:
    """(forward targets, backward sources) of ``map_embeddings``' last induced dictionary."""
    ns = n_src if args.vocabulary_cutoff <= 0 else min(n_src, args.vocabulary_cutoff)
    assert args.direction == "union", "the recipes induce in both directions"
    return mapping.trg_indices[:ns], mapping.src_indices[ns:]


def agreement(ours: tuple[np.ndarray, np.ndarray], base: dict[str, Any]) -> dict[str, float]:
    return {
        "forward": float(np.mean(ours[0] == base["forward"])),
        "backward": float(np.mean(ours[1] == base["backward"])),
    }


# --------------------------------------------------------------------------- BLI baseline


def muse_avg_topk(emb: torch.Tensor, query: torch.Tensor, knn: int) -> torch.Tensor:
    """MUSE's ``get_nn_avg_dist`` without Faiss: mean of each query's ``knn`` best scores."""
    emb_t = emb.transpose(0, 1).contiguous()
    out = []
    for i in range(0, query.shape[0], MUSE_BATCH):
        best = query[i : i + MUSE_BATCH].mm(emb_t).topk(knn, dim=1, largest=True, sorted=True)
        out.append(best.values.mean(1).cpu())
    return torch.cat(out)


def muse_bli(
    xw: np.ndarray,
    zw: np.ndarray,
    queries: np.ndarray,
    golds: np.ndarray,
    method: str,
    device: torch.device,
    knn: int = 10,
) -> dict[str, float]:
    """P@1 and P@10 of retrieval as MUSE's ``get_word_translation_accuracy`` computes it.

    ``queries``/``golds``: source and (one) gold target row per test word. For CSLS the
    penalties cover every source and every target row (two full passes, batched).
    """
    emb1 = torch.as_tensor(xw, device=device)
    emb2 = torch.as_tensor(zw, device=device)
    emb1 = emb1 / emb1.norm(2, 1, keepdim=True).expand_as(emb1)
    emb2 = emb2 / emb2.norm(2, 1, keepdim=True).expand_as(emb2)
    q = torch.as_tensor(queries, device=device)
    scores = emb1[q].mm(emb2.transpose(0, 1))
    if method == "csls":
        avg1 = muse_avg_topk(emb2, emb1, knn).type_as(emb1)  # every source word
        avg2 = muse_avg_topk(emb1, emb2, knn).type_as(emb2)  # every target word
        scores.mul_(2)
        scores.sub_(avg1[q][:, None])
        scores.sub_(avg2[None, :])
    top = scores.topk(10, 1, True).indices.cpu().numpy()
    hit = top == np.asarray(golds)[:, None]
    return {"p@1": float(hit[:, :1].any(1).mean()), "p@10": float(hit.any(1).mean())}


def blas_threads() -> dict[str, int]:
    """Threads of each thread pool loaded (numpy's OpenBLAS, torch's OpenMP), if known."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return {}
    return {f"{p['internal_api']}:{p['prefix']}": p["num_threads"] for p in threadpool_info()}


# --------------------------------------------------------------------------- run


def ratio(base: float, ours: float) -> float:
    return base / ours if ours > 0 else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--words", type=int, default=200_000)
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    ap.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    ap.add_argument("--max-iterations", type=int, default=3, help="self-learning cap (0: none)")
    ap.add_argument(
        "--check-iterations",
        type=int,
        default=None,
        help="iterations of the keep-probability-1 agreement check (default: "
        "--max-iterations; 0: no check)",
    )
    ap.add_argument(
        "--baseline-topk",
        default="argpartition",
        choices=sorted(TOPK_MEAN),
        help="the VecMap baseline's top-k mean: np.argpartition, or the tool's k argmaxes",
    )
    ap.add_argument("--no-baseline", action="store_true", help="skip both baselines")
    ap.add_argument("--bli-batch-size", type=int, default=None)
    ap.add_argument("--no-bli", action="store_true", help="skip the BLI timings")
    ap.add_argument("--json", default="benchmarks/out/vecmap.json")
    opts = ap.parse_args()
    device = resolve_device(opts.device)
    n, d = opts.words, opts.dim
    check_its = opts.max_iterations if opts.check_iterations is None else opts.check_iterations

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
        "thread_pools": blas_threads(),
        "max_iterations": opts.max_iterations,
        "baseline": None
        if opts.no_baseline
        else {
            "vecmap": "public VecMap's per-iteration work in NumPy (this file), on the CPU",
            "vecmap_topk": opts.baseline_topk,
            "check_iterations": check_its,
            "bli": "MUSE's get_word_translation_accuracy in torch (this file), "
            f"CSLS penalties in blocks of {MUSE_BATCH} rows",
            "numpy": np.__version__,
        },
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
        if st["iterations"] and not opts.no_baseline:
            seed = seed_indices(x, z, args, src_words, trg_words, pairs, device)
            base, b_secs, b_mem = timed(
                lambda args=args, its=st["iterations"], seed=seed: vecmap_reference(
                    x, z, *seed, args, its, topk=opts.baseline_topk
                ),
                CPU,
            )
            b_per = float(np.mean(base["iteration_seconds"]))
            row["baseline"] = {
                "seconds": b_secs,
                "iterations": len(base["iteration_seconds"]),
                "seconds_per_iteration": b_per,
                "iteration_seconds": base["iteration_seconds"],
                "objective": base["objective"],
                "agreement": agreement(induced(mapping, args, n), base),
                **b_mem,
            }
            row["ratio_seconds_per_iteration"] = ratio(b_per, per_it)
            row["ratio_rss_rise"] = ratio(b_mem["rss_rise_mb"], mem["rss_rise_mb"])
            del base
            if check_its:
                cargs = recipe_args(mode, max_iterations=check_its, stochastic_initial=1.0)
                ours = map_embeddings(
                    x,
                    z,
                    cargs,
                    src_words=src_words,
                    trg_words=trg_words,
                    dictionary=pairs,
                    device=device,
                    progress=False,
                )
                base = vecmap_reference(x, z, *seed, cargs, check_its, topk=opts.baseline_topk)
                o_obj, b_obj = ours.stats["objective"], base["objective"]
                o_per = float(np.mean(ours.stats["iteration_seconds"]))
                b_per = float(np.mean(base["iteration_seconds"]))
                row["check"] = {
                    "keep_prob": 1.0,
                    "iterations": len(o_obj),
                    "ours_seconds_per_iteration": o_per,
                    "baseline_seconds_per_iteration": b_per,
                    "ratio_seconds_per_iteration": ratio(b_per, o_per),
                    "agreement": agreement(induced(ours, cargs, n), base),
                    "objective_ours": o_obj,
                    "objective_baseline": b_obj,
                    "max_objective_difference": float(
                        np.max(np.abs(np.subtract(o_obj, b_obj))) if o_obj else 0.0
                    ),
                }
                del ours, base
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
            if not opts.no_baseline:
                muse, b_secs, b_mem = timed(
                    lambda retrieval=retrieval: muse_bli(
                        xw, zw, test_rows, gold[test_rows], retrieval, device
                    ),
                    device,
                )
                row["baseline"] = {"seconds": b_secs, **muse, **b_mem}
                row["ratio_seconds"] = ratio(b_secs, secs)
                row["ratio_rss_rise"] = ratio(b_mem["rss_rise_mb"], mem["rss_rise_mb"])
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
    compared = [r for r in results["modes"] if "baseline" in r]
    if compared:
        print(
            f"\nSelf-learning, ours vs baseline (public VecMap's iteration in NumPy on the CPU, "
            f"top-k by {opts.baseline_topk}); same seed dictionary, keep probability "
            f"{recipe_args(compared[0]['mode']).stochastic_initial}"
        )
        print(
            f"{'mode':<17}{'iters':>6}{'ours s/it':>10}{'base s/it':>10}{'base/ours':>10}"
            f"{'ours peak/rise MB':>19}{'base peak/rise MB':>19}{'agree fwd/bwd':>15}"
        )
        for r in compared:
            b = r["baseline"]
            print(
                f"{r['mode']:<17}{r['iterations']:6d}{r['seconds_per_iteration']:10.2f}"
                f"{b['seconds_per_iteration']:10.2f}{r['ratio_seconds_per_iteration']:9.2f}x"
                f"{r['peak_rss_mb']:11.0f} /{r['rss_rise_mb']:6.0f}"
                f"{b['peak_rss_mb']:11.0f} /{b['rss_rise_mb']:6.0f}"
                f"{b['agreement']['forward']:9.3f} /{b['agreement']['backward']:.3f}"
            )
        print(
            "agree: share of induced forward/backward pairs that are the same in both after "
            "the run (different dropout generators: not expected to match)."
        )
    checked = [r for r in compared if "check" in r]
    if checked:
        print(
            f"\nAgreement check: keep probability 1 (no dropout), {check_its} iteration(s) "
            "of both from the same seed dictionary"
        )
        print(
            f"{'mode':<17}{'ours s/it':>10}{'base s/it':>10}{'base/ours':>10}"
            f"{'agree fwd':>10}{'agree bwd':>10}{'max |obj diff|':>16}"
        )
        for r in checked:
            c = r["check"]
            print(
                f"{r['mode']:<17}{c['ours_seconds_per_iteration']:10.2f}"
                f"{c['baseline_seconds_per_iteration']:10.2f}"
                f"{c['ratio_seconds_per_iteration']:9.2f}x"
                f"{c['agreement']['forward']:10.4f}{c['agreement']['backward']:10.4f}"
                f"{c['max_objective_difference']:16.2e}"
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
        if any("baseline" in r for r in results["bli"]):
            print(f"\nBLI, ours vs baseline (MUSE's evaluation in torch on {device})")
            print(
                f"{'retrieval':<11}{'ours s':>8}{'MUSE s':>8}{'MUSE/ours':>10}{'ours P@1':>9}"
                f"{'MUSE P@1':>9}{'ours peak/rise MB':>19}{'MUSE peak/rise MB':>19}"
            )
            for r in results["bli"]:
                b = r["baseline"]
                print(
                    f"{r['retrieval']:<11}{r['seconds']:8.1f}{b['seconds']:8.1f}"
                    f"{r['ratio_seconds']:9.2f}x{r['p@1']:9.3f}{b['p@1']:9.3f}"
                    f"{r['peak_rss_mb']:11.0f} /{r['rss_rise_mb']:6.0f}"
                    f"{b['peak_rss_mb']:11.0f} /{b['rss_rise_mb']:6.0f}"
                )
    if results["thread_pools"]:
        pools = ", ".join(f"{k} {v}" for k, v in results["thread_pools"].items())
        print(f"\nthread pools: {pools}")
    print(f"\nprocess peak RSS {results['process_max_rss_mb']:.0f} MB")
    if opts.json:
        Path(opts.json).parent.mkdir(parents=True, exist_ok=True)
        Path(opts.json).write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
