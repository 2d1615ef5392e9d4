"""Peak memory of the mapping stage's n x n work: CSLS, VecMap's unsupervised
initialisation and self-learning (issue 28).

One case per process: the inputs are made first, the kernel's peak resident set size is
reset (``/proc/self/clear_refs``), the case runs, and the rise of the peak over the RSS
before it (``VmHWM - VmRSS``, MB) is printed as one JSON line with the seconds it took.
``--src`` puts another checkout's library first on the path (to measure the code before
the memory budget: ``budget_mb`` is then left out of the calls).

* ``csls``: :func:`xlalign.evaluation.bli.mean_topk_similarity` of ``--queries`` rows
  against ``--words`` keys (the peak of the whole r_S pass is that of one block: the
  number of query rows only sets how many blocks there are);
* ``init``: VecMap's unsupervised initialisation over ``--vocab`` words per side;
* ``selflearn``: the ``identical`` recipe's self-learning, ``--cutoff`` words per side,
  one iteration (``--batch-size`` gives VecMap's option; the old default was 10000);
* ``induce``: CSLS dictionary induction (mutual) over ``--max-rank`` words per side.

Example (single thread)::

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/bench_mapping_memory.py csls \\
        --words 50000 --dim 300 --budget-mb 64
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
from typing import Any


def _status(key: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(key)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("case", choices=["csls", "init", "selflearn", "induce"])
    ap.add_argument("--words", type=int, default=50_000)
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--queries", type=int, default=3000)
    ap.add_argument("--vocab", type=int, default=4000)
    ap.add_argument("--cutoff", type=int, default=10_000)
    ap.add_argument("--max-rank", type=int, default=20_000)
    ap.add_argument("--budget-mb", type=float, default=None)
    ap.add_argument("--batch-size", type=int, default=None)
    ap.add_argument("--src", default=None, help="library path to put first (old code)")
    opts = ap.parse_args()
    if opts.src:
        sys.path.insert(0, opts.src)
    import numpy as np
    import torch

    from xlalign.evaluation import bli
    from xlalign.mapping import induction, vecmap

    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    n = {"csls": opts.words, "init": opts.vocab, "selflearn": opts.cutoff}.get(
        opts.case, opts.max_rank
    )
    x = rng.standard_normal((n, opts.dim), dtype=np.float32)
    z = (x + 0.5 * rng.standard_normal((n, opts.dim), dtype=np.float32)).astype(np.float32)

    def budget(fn: Any) -> dict[str, Any]:
        ok = "budget_mb" in inspect.signature(fn).parameters
        return {"budget_mb": opts.budget_mb} if ok and opts.budget_mb else {}

    if opts.case == "csls":
        dev = torch.device("cpu")
        xs, zs = bli.unit_rows(x, dev), bli.unit_rows(z, dev)
        q = xs[: opts.queries]

        def run() -> Any:
            kw = budget(bli.mean_topk_similarity)
            return bli.mean_topk_similarity(q, zs, 10, batch_size=opts.batch_size, **kw)
    elif opts.case == "init":
        args = vecmap.recipe_args("unsupervised", unsupervised_vocab=opts.vocab)
        xt = vecmap._normalize_(torch.tensor(x), args.normalize)
        zt = vecmap._normalize_(torch.tensor(z), args.normalize)

        def run() -> Any:
            extra = [opts.budget_mb] if budget(vecmap._unsupervised_init) else []
            return vecmap._unsupervised_init(xt, zt, args, *extra)
    elif opts.case == "induce":
        words = [f"w{i}" for i in range(n)]

        def run() -> Any:
            return induction.induce_dictionary(
                words,
                x,
                words,
                z,
                max_rank=n,
                batch_size=opts.batch_size,
                **budget(induction.induce_dictionary),
            )
    else:
        over = {"batch_size": opts.batch_size} if opts.batch_size else {}
        args = vecmap.recipe_args("identical", max_iterations=1, **over)
        words = [f"w{i}" for i in range(n)]

        def run() -> Any:
            return vecmap.map_embeddings(
                x,
                z,
                args,
                src_words=words,
                trg_words=words,
                progress=False,
                **budget(vecmap.map_embeddings),
            )

    # Warm-up of what every process maps once (BLAS buffers), outside the measure.
    (torch.ones(8, 8) @ torch.ones(8, 8)).topk(2, dim=1)
    before = _status("VmRSS")
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset the peak RSS (VmHWM) to the current RSS
    start = time.perf_counter()
    run()
    seconds = time.perf_counter() - start
    peak = _status("VmHWM")
    out = {
        "case": opts.case,
        "code": opts.src or "this checkout",
        "budget_mb": opts.budget_mb,
        "batch_size": opts.batch_size,
        "words": n,
        "dim": opts.dim,
        "rss_before_mb": round(before),
        "peak_rise_mb": round(peak - before),
        "seconds": round(seconds, 1),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
