"""Benchmark of stage `sample`: sentences/s over a CC100-like stream, against a baseline.

Baseline = the straightforward approach (read every paragraph into memory, shuffle with the
seed, take paragraphs up to the budget). Ours = the one-pass bounded reservoir. Both read
the same `.txt.xz` and plain-text files, side by side; reported: throughput (estimated
sentences scanned per second), the ratio ours/baseline and peak Python memory.

    .venv/bin/python benchmarks/bench_sample.py [--paragraphs N] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import lzma
import random
import time
import tracemalloc
from pathlib import Path

from xlalign.corpus.sample import estimate_sentences, sample_paragraphs
from xlalign.corpus.sources import iter_paragraph_text

WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at "
    "which but have an they you were her she there been one all we their has would when "
    "what will more if no out so said can who about up them some could him into its time"
).split()


def make_corpus(path: Path, paragraphs: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    sentences = 0
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "wt", encoding="utf-8") as fh:
        for i in range(paragraphs):
            k = rng.randint(1, 6)
            sents = [
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 25))).capitalize() + "."
                for _ in range(k)
            ]
            sentences += k
            fh.write(" ".join(sents) + "\n")
            if i % 8 == 7:
                fh.write("\n")
    return sentences


def baseline(path: Path, budget: int, seed: int) -> int:
    pars = list(iter_paragraph_text(path, language="en"))
    random.Random(seed).shuffle(pars)
    total, chosen = 0, []
    for p in pars:
        n = estimate_sentences(p.text)
        if total + n > budget:
            break
        chosen.append(p)
        total += n
    return len(chosen)


def ours(path: Path, budget: int, seed: int) -> int:
    return len(
        sample_paragraphs(iter_paragraph_text(path, language="en"), max_sentences=budget, seed=seed)
    )


def measure(fn, path: Path, budget: int, seed: int) -> dict:
    """Time one run, then measure peak Python memory in a second (tracemalloc is slow)."""
    t0 = time.perf_counter()
    n = fn(path, budget, seed)
    secs = time.perf_counter() - t0
    tracemalloc.start()
    fn(path, budget, seed)
    _cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"seconds": secs, "paragraphs_out": n, "peak_mb": peak / 2**20}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paragraphs", type=int, default=100_000)
    ap.add_argument("--budget", type=int, default=50_000)
    ap.add_argument("--workdir", default="benchmarks/out")
    ap.add_argument("--out", default="benchmarks/out/sample.json")
    args = ap.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    results = {"paragraphs": args.paragraphs, "budget": args.budget, "runs": []}
    for name in ("corpus.txt", "corpus.txt.xz"):
        path = work / name
        sentences = make_corpus(path, args.paragraphs)
        for label, fn in (("baseline", baseline), ("ours", ours)):
            m = measure(fn, path, args.budget, seed=1)
            m.update(
                file=name,
                impl=label,
                sentences_scanned=sentences,
                sentences_per_s=sentences / m["seconds"],
            )
            results["runs"].append(m)
    print(f"{'file':<15}{'impl':<10}{'sent/s':>12}{'seconds':>10}{'peak MB':>10}")
    for r in results["runs"]:
        print(
            f"{r['file']:<15}{r['impl']:<10}{r['sentences_per_s']:>12,.0f}"
            f"{r['seconds']:>10.2f}{r['peak_mb']:>10.1f}"
        )
    for name in ("corpus.txt", "corpus.txt.xz"):
        b, o = (
            next(r for r in results["runs"] if r["file"] == name and r["impl"] == i)
            for i in ("baseline", "ours")
        )
        ratio = b["seconds"] / o["seconds"]
        mem = b["peak_mb"] / max(o["peak_mb"], 1e-9)
        results[f"ratio_{name}"] = {"speed": ratio, "memory": mem}
        print(f"{name}: ours/baseline speed x{ratio:.2f}, baseline uses x{mem:.1f} the memory")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
