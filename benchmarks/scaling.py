"""How each stage's time, memory and disk grow with its work, and what that projects for
``config/paper.yaml`` (issue 28).

Each stage runs at three or more sizes of the quantity that drives its cost (sentences,
occurrences x epochs, vocabulary words, bitext pairs, per-example predictions), each point
in a fresh child process with one thread (``OMP_NUM_THREADS=1``, ``torch.set_num_threads(1)``:
the figures are per thread, comparable across machines of one kind). The child builds its
inputs first (seeded synthetic data with the real shapes: Zipf-distributed words, 20-30 of
them a sentence; spaces with a decaying spectrum; bitext with local reordering), then
resets its peak-RSS mark (``/proc/self/clear_refs``) and runs the stage's library function.
Recorded per point:

- ``seconds``: wall time of the stage's call alone;
- ``mem_mb``: the rise of the peak resident set over the resident set before the call
  (``VmHWM`` after minus ``VmRSS`` before), i.e. what the work itself holds;
- ``disk_mb``: the largest size the point's output directory reached (the parent polls it
  every 50 ms) and ``out_mb`` its final size.

For each metric the exponent ``b`` of ``cost = a * size^b`` is fitted by least squares in
log-log space; the projection at ``config/paper.yaml``'s size is the fit evaluated there,
times the stage's width factor where the paper's vectors are wider than the benchmark's
(the encoder-bound costs grow as width^2, the stored vectors as width; each stage says
which). Projections are single-thread CPU figures; the estimates of
:mod:`xlalign.workflow.resources` for the same rule on one CPU thread are put beside them
(``estimate / projection``), flagged when outside [0.5, 2].

Run::

    python benchmarks/scaling.py --stage all --out results/benchmarks/scaling   # ~20 min
    python benchmarks/scaling.py --stage teacher --sizes 100,300,1000 --out /tmp/s
    python benchmarks/scaling.py --quick --out /tmp/s                           # smoke

Writes ``scaling.md`` (one table per stage), ``scaling.json`` (points, fits, projections)
and ``scaling.png`` (log-log, with the fitted lines) under ``--out``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MB = 1 << 20


# ------------------------------------------------------------------------------ fitting


def fit_power(sizes: Sequence[float], values: Sequence[float]) -> tuple[float, float] | None:
    """(a, b) of ``value = a * size^b`` by least squares on the logs; None when fewer than
    two points are positive."""
    pts = [
        (math.log(s), math.log(v)) for s, v in zip(sizes, values, strict=True) if s > 0 and v > 0
    ]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    if sxx == 0:
        return None
    b = sum((x - mx) * (y - my) for x, y in pts) / sxx
    return math.exp(my - b * mx), b


def fit_fixed_power(
    sizes: Sequence[float], values: Sequence[float]
) -> tuple[float, float, float] | None:
    """(c, a, b) of ``value = c + a * size^b`` with ``c, a >= 0``: a fixed part (imports,
    a model loaded, an interpreter's arrays) plus the part that grows with the work. The
    exponent is searched on a grid (0.05 to 3 by 0.01); for each, ``c`` and ``a`` come from
    least squares on the relative errors. None with fewer than two positive points."""
    pts = [(float(x), float(y)) for x, y in zip(sizes, values, strict=True) if x > 0 and y > 0]
    if len(pts) < 2:
        return None
    best: tuple[float, float, float, float] | None = None
    for step in range(5, 301):
        b = step / 100
        # minimise sum(((c + a x^b) - y) / y)^2: weights 1/y^2
        rows = [(1 / y, x**b / y) for x, y in pts]
        s11 = sum(u * u for u, _ in rows)
        s12 = sum(u * v for u, v in rows)
        s22 = sum(v * v for _, v in rows)
        t1 = sum(u for u, _ in rows)  # sum(u * 1): target is y / y = 1
        t2 = sum(v for _, v in rows)
        det = s11 * s22 - s12 * s12
        c, a = ((s22 * t1 - s12 * t2) / det, (s11 * t2 - s12 * t1) / det) if det > 0 else (-1, -1)
        if c < 0 or a < 0:  # the constrained optimum lies on an edge: c = 0
            c, a = 0.0, t2 / s22
        err = sum((((c + a * x**b) - y) / y) ** 2 for x, y in pts)
        if best is None or err < best[0] - 1e-12:
            best = (err, c, a, b)
    assert best is not None
    return best[1], best[2], best[3]


def project(fit: tuple[float, ...] | None, size: float) -> float | None:
    """The fitted cost at ``size`` (a power fit ``(a, b)`` or a fixed + power ``(c, a, b)``)."""
    if fit is None:
        return None
    if len(fit) == 2:
        a, b = fit
        return a * size**b
    c, a, b = fit
    return c + a * size**b


# ------------------------------------------------------------------------------ data


def zipf_corpus(path: Path, sentences: int, *, words: int = 20_000, seed: int = 0) -> Path:
    """``sentences`` lines of 20-30 words drawn from a Zipf(1.0) law over ``words`` types."""
    import numpy as np

    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, words + 1)
    p /= p.sum()
    with path.open("w", encoding="utf-8") as fh:
        for _ in range(sentences):
            ids = rng.choice(words, size=int(rng.integers(20, 31)), p=p)
            fh.write(" ".join(f"w{i}" for i in ids) + "\n")
    return path


#: Synthetic words ``w0`` ... ``w999`` are whole WordPiece tokens, the rarer ones two
#: pieces (``w123`` + ``##45``): 1.3 tokens a word over the Zipf law, ~32 a sentence.
WHOLE_WORDS = 1000
#: Tokens a sentence of the synthetic corpus and of real text (30 words, XLM-R's ~1.4
#: pieces a word): the encoder stages' projections are scaled by their ratio.
BENCH_TOKENS, REAL_TOKENS = 32.5, 42.0


def build_encoder(out: Path, *, dim: int = 384, layers: int = 6) -> Path:
    """A random BERT of e5-small's width (truncated at the paper's layer 6) whose WordPiece
    vocabulary splits the synthetic words as a real one splits words (:data:`WHOLE_WORDS`)."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    out.mkdir(parents=True, exist_ok=True)
    pieces = [f"##{i}" for i in range(10)] + [f"##{i:02d}" for i in range(100)]
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *(f"w{i}" for i in range(WHOLE_WORDS))]
    vocab += pieces
    (out / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tok = BertTokenizerFast(vocab_file=str(out / "vocab.txt"), do_lower_case=True)
    tok.save_pretrained(out)
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(vocab),
        hidden_size=dim,
        num_hidden_layers=layers,
        num_attention_heads=max(1, dim // 64),
        intermediate_size=4 * dim,
        max_position_embeddings=512,
    )
    BertModel(cfg).save_pretrained(out)
    return out


def spaces(n: int, d: int, seed: int = 0):
    """Two n x d float32 spaces, the second a noisy rotation of the first (bench_vecmap's)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_vecmap import make_spaces

    x, z, _ = make_spaces(n, d, seed)
    return x, z


# ------------------------------------------------------------------------------ stages


@dataclass(frozen=True)
class Stage:
    """One benchmarked stage: its driving quantity, sizes, the child's workload, the size
    of a paper job and how to scale a projection to the paper's widths."""

    name: str
    driver: str
    sizes: tuple[int, ...]
    quick: tuple[int, ...]
    rule: str | None
    paper_size: Callable[[Mapping[str, Any]], float]
    #: factors on the projected (seconds, mem, disk) for the paper's widths
    factors: tuple[float, float, float] = (1.0, 1.0, 1.0)
    note: str = ""
    #: how many jobs of this shape one paper run has (languages x seeds ...)
    jobs: Callable[[Mapping[str, Any]], int] = field(default=lambda cfg: 1)
    #: The exponent the algorithm's time (and output) cannot grow slower than: 1 for a
    #: pass over the items, 2 for all-pairs similarities. Projections take the larger of
    #: the fit and the largest point scaled by it (small sizes hide it behind fixed costs).
    time_exponent: float = 1.0
    disk_exponent: float = 0.0
    #: Metrics whose comparison with the estimate is not like for like (says why in note).
    not_compared: tuple[str, ...] = ()


#: Words a sentence, as xlalign.workflow.resources bounds them.
WORDS_PER_SENTENCE = 30


def sample_seeds(cfg: Mapping[str, Any]) -> list[int]:
    from xlalign import config as xlconfig

    return list(xlconfig.sample_seeds(cfg))


def _langs(cfg: Mapping[str, Any]) -> int:
    return len(cfg["languages"])


def _sentences(cfg: Mapping[str, Any]) -> float:
    return float(cfg["corpus"]["max_sentences"])


# Width factors: the benchmark encodes at 384 (e5-small), the paper at 768 (XLM-R base):
# encoder time x4 (d^2), stored vectors x2 (d).
W_TIME, W_VEC = (768 / 384) ** 2, 768 / 384
#: The encoder stages' time: the width's and the tokens' factors.
ENC_TIME = W_TIME * REAL_TOKENS / BENCH_TOKENS


def _prep_teacher(work: Path, size: int, shared: Path) -> dict[str, Any]:
    from xlalign.corpus.vocab import build_vocab

    text = zipf_corpus(work / "in.txt", size)
    vocab = build_vocab(text, min_count=1, max_size=200_000, language="xx")
    return {"text": text, "vocab": vocab, "encoder": shared / "encoder"}


def _run_teacher(prep: dict[str, Any], out: Path) -> None:
    from xlalign.static.teacher import build_teacher_cache

    build_teacher_cache(
        prep["text"], prep["vocab"], prep["encoder"], out / "cache", layer=6, progress=False,
        language="xx", threads=1, aggregation_seeds=(1,), max_contexts=10,
    )  # fmt: skip


def _run_aggregate(prep: dict[str, Any], out: Path) -> None:
    from xlalign.static.aggregation import aggregate_vectors

    aggregate_vectors(
        prep["text"], prep["vocab"], prep["encoder"], layer=6, max_contexts=10, seed=1,
        threads=1, progress=False, language="xx",
    )  # fmt: skip


def _prep_x2static(work: Path, size: int, shared: Path) -> dict[str, Any]:
    """A cache of ``size`` occurrences (25 a sentence) of 200,000 Zipf words (the paper's
    vocabulary size: the sparse updates' cache misses grow with it), 384 dims."""
    import numpy as np

    sys.path.insert(0, str(ROOT / "tests"))
    from synthetic_cache import ArrayCache

    from xlalign.corpus.vocab import Vocab

    rng = np.random.default_rng(0)
    words, dim = 200_000, 384
    n_sent = max(1, size // 25)
    p = 1.0 / np.arange(1, words + 1)
    p /= p.sum()
    offsets = np.arange(n_sent + 1, dtype=np.int64) * 25
    ids = rng.choice(words, size=int(offsets[-1]), p=p)
    hidden = rng.standard_normal((words, dim)).astype(np.float32)
    ctx = (hidden[ids] + rng.standard_normal((len(ids), dim)).astype(np.float32)).astype(np.float16)
    counts = np.bincount(ids, minlength=words)
    keep = counts > 0
    remap = np.cumsum(keep) - 1
    vocab = Vocab([f"w{i}" for i in np.flatnonzero(keep)], counts[keep], lowercase=True)
    return {"cache": ArrayCache(offsets, remap[ids], ctx), "vocab": vocab}


def _run_x2static(prep: dict[str, Any], out: Path) -> None:
    import numpy as np

    from xlalign.static.x2static import X2StaticArgs, train_x2static

    args = X2StaticArgs(epochs=1, seed=1, checkpoint_every_batches=0, checkpoint_minutes=None)
    res = train_x2static(prep["cache"], prep["vocab"], args, output_dir=out / "x2s", progress=False)
    np.save(out / "vectors.npy", res.vectors)


def _prep_spaces(d: int) -> Callable[[Path, int, Path], dict[str, Any]]:
    def prep(work: Path, size: int, shared: Path) -> dict[str, Any]:
        x, z = spaces(size, d)
        return {"x": x, "z": z, "words": [f"w{i}" for i in range(size)]}

    return prep


def _run_selflearn(prep: dict[str, Any], out: Path) -> None:
    """One self-learning iteration over a cut-off of ``size`` words (the supervised recipe's
    seed dictionary: the first 5,000 pairs), then the mapped space written."""
    import numpy as np

    from xlalign.mapping.recipes import recipe_args
    from xlalign.mapping.vecmap import apply, map_embeddings

    n = len(prep["words"])
    args = recipe_args("semi-supervised", vocabulary_cutoff=n, max_iterations=1)
    words = prep["words"]
    pairs = [(w, w) for w in words[: min(5000, n // 2)]]
    m = map_embeddings(
        prep["x"], prep["z"], args, src_words=words, trg_words=words, dictionary=pairs,
        progress=False,
    )  # fmt: skip
    xw = apply(m, prep["x"], "source")
    np.save(out / "mapped.npy", np.asarray(xw, dtype=np.float32))


def _run_csls(prep: dict[str, Any], out: Path) -> None:
    """BLI with CSLS over whole vocabularies (1,500 test queries; the hubness terms of
    every word of both sides)."""
    from xlalign.evaluation.bli import evaluate_bli

    words = prep["words"]
    dictionary = {w: {w} for w in words[:1500]}
    res = evaluate_bli(words, prep["x"], words, prep["z"], dictionary, retrieval="csls")
    (out / "bli.json").write_text(json.dumps(res.as_dict()))


def _run_induction(prep: dict[str, Any], out: Path) -> None:
    from xlalign.mapping.induction import induce_dictionary

    words = prep["words"]
    res = induce_dictionary(words, prep["x"], words, prep["z"], max_rank=len(words))
    (out / "dict.txt").write_text(repr(res)[:1000])


def _prep_bitext(work: Path, size: int, shared: Path) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_wordalign import synthetic_corpus, write_corpus

    src, tgt, _ = synthetic_corpus(size, 5000, seed=0)
    return {"corpus": write_corpus(work / "corpus.tsv", src, tgt)}


def _run_word_align(prep: dict[str, Any], out: Path) -> None:
    from xlalign.wordalign.eflomal import AlignmentPaths, AlignOptions, align_corpus

    align_corpus(
        prep["corpus"], AlignmentPaths.in_dir(out / "align"), AlignOptions(),
        tmpdir=out / "tmp", threads=1, progress=False,
    )  # fmt: skip


def _prep_sentence_states(work: Path, size: int, shared: Path) -> dict[str, Any]:
    x, z = spaces(size, 768)
    return {"x": x, "z": z, "texts": [f"s{i}" for i in range(size)]}


def _run_retrieval(prep: dict[str, Any], out: Path) -> None:
    """Tatoeba-style scoring of ``size`` x ``size`` pooled sentence vectors (both ways)."""
    from xlalign.evaluation.tasks.retrieval import retrieval_accuracy

    res = retrieval_accuracy(prep["x"], prep["z"])
    (out / "acc.json").write_text(json.dumps(res, default=float))


def _run_bucc(prep: dict[str, Any], out: Path) -> None:
    """Margin-based mining (XTREME's BUCC: k=4, ratio margin) over ``size`` sentences a side."""
    from xlalign.evaluation.tasks.retrieval import mine_candidates

    cands = mine_candidates(prep["x"], prep["z"])
    with (out / "candidates.tsv").open("w") as fh:
        for i, j, s in cands:
            fh.write(f"{i}\t{j}\t{s:.6f}\n")


def _prep_predictions(work: Path, size: int, shared: Path) -> dict[str, Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    return {
        "a": (rng.random(size) < 0.6).astype(float),
        "b": (rng.random(size) < 0.58).astype(float),
    }


def _run_statistics(prep: dict[str, Any], out: Path) -> None:
    """The paired bootstrap (1,000 resamples) of per-example scores."""
    from xlalign.reporting.significance import paired_bootstrap

    res = paired_bootstrap(prep["a"], prep["b"], iterations=1000, seed=0)
    (out / "p.json").write_text(json.dumps({"p": float(res.p_value)}))


def _bucc_size(cfg: Mapping[str, Any]) -> float:
    return 400_000.0  # BUCC 2018's test sides: ~400k sentences (de 413,869 / en 399,337)


STAGES: dict[str, Stage] = {
    s.name: s
    for s in (
        Stage("teacher", "sentences", (150, 500, 1500), (20, 60, 200), "teacher", _sentences,
              (ENC_TIME, 1.0, W_VEC),
              "random BERT 384 x 6 (layer 6), 1.3 WordPiece tokens a word; with the "
              "aggregation sums of one seed; paper: XLM-R base (768) over 42 tokens a "
              "sentence: time x5.2, cache x2. Memory and disk not compared: the paper job's "
              "memory is XLM-R's weights and the float64 sums of 3 seeds (V x d each), absent "
              "here; its disk the cache (1,540.7 bytes an occurrence at 768 dims, "
              "xlalign.static.teacher) plus those sums, where the benchmark's small V makes "
              "the sums a large share",
              jobs=lambda cfg: _langs(cfg) * len(sample_seeds(cfg)),
              not_compared=("mem_mb", "disk_mb")),
        Stage("aggregate", "sentences", (150, 500, 1500), (20, 60, 200), "aggregate", _sentences,
              (ENC_TIME, W_VEC, W_VEC),
              "aggregate_vectors running the encoder itself (K=10) over the sentences of its "
              "sample; in the paper run the teacher's pass leaves the sums and this job only "
              "reads them (this is the cost when it does not). Memory and disk not compared: "
              "they are the V x d sums and vectors of the paper's 200k words",
              jobs=lambda cfg: _langs(cfg) * len(cfg["seeds"]),
              not_compared=("mem_mb", "disk_mb")),
        Stage("x2static", "occurrences x epochs", (25_000, 80_000, 250_000), (2_500, 8_000, 25_000),
              "x2static",
              lambda cfg: _sentences(cfg) * WORDS_PER_SENTENCE * int(cfg["extract"]["epochs"]),
              (W_VEC, W_VEC, W_VEC),
              "synthetic cache (in memory) over 200,000 Zipf words, 384 dims, 10 negatives; "
              "paper: 768 dims (x2), 30 occurrences a sentence (the estimate's bound) x 5 epochs. "
              "Memory and disk not compared: they grow with the words seen (V x d matrices), "
              "not with the occurrences",
              jobs=lambda cfg: _langs(cfg) * len(cfg["seeds"]),
              not_compared=("mem_mb", "disk_mb")),
        Stage("vecmap", "vocabulary cut-off (words)", (2_000, 6_000, 20_000), (500, 1_000, 2_000),
              "map_unsupervised", lambda cfg: 20_000.0, (500.0, 1.0, 10.0),
              "the semi-supervised initialisation and one self-learning iteration, 300 dims; "
              "paper: the unsupervised mapping of fastText's 200k words (x10 on disk) with the "
              "20,000-word cut-off, ~500 iterations (x500, the estimate's assumption). Memory "
              "not compared: the paper's spaces have 200k rows, the benchmark's the cut-off's",
              jobs=lambda cfg: _langs(cfg) - 1,
              time_exponent=2.0, disk_exponent=1.0, not_compared=("mem_mb",)),
        Stage("csls", "vocabulary (words a side)", (3_000, 10_000, 30_000), (500, 1_000, 2_000),
              "bli", lambda cfg: float(cfg["extract"]["vocab"]["max_size"]),
              (2 * 768 / 300, 1.0, 1.0),
              "BLI with CSLS (k=10) over whole vocabularies, one direction, 300 dims; paper: "
              "200k x 200k, 768 dims, both directions (time x5.12)",
              jobs=lambda cfg: (_langs(cfg) - 1) * len(cfg["seeds"]) * 4,
              time_exponent=2.0, not_compared=("disk_mb",)),
        Stage("induction", "max_rank (words a side)", (2_000, 6_000, 20_000), (500, 1_000, 2_000),
              "induce_dictionary", lambda cfg: float(cfg["align"]["induce"]["max_rank"]),
              (1.0, 1.0, 1.0),
              "mutual CSLS nearest neighbours, 300 dims (fastText's, as the paper's induction). "
              "Memory and disk not compared: the paper job holds fastText's 200k rows a side",
              jobs=lambda cfg: _langs(cfg) - 1,
              time_exponent=2.0, not_compared=("mem_mb", "disk_mb")),
        Stage("word_align", "bitext pairs", (1_500, 5_000, 15_000), (300, 600, 1_200),
              "word_align", lambda cfg: float(cfg["wordalign"]["chunk_size"]), (9.6, 1.0, 8.3),
              "eflomal (seeded, 3 samplers, automatic iterations) + symmetrisation, 1 thread; "
              "paper: 1M pairs in 5 chunks of 200k with shared priors: one chunk's projection "
              "x5 chunks x1.91 (priors' sample run and slower chunks, bench_wordalign --mode "
              "priors) for time, x5 chunks x1.67 for disk (real pairs take 250 bytes, the "
              "synthetic ones 150); memory is one chunk's",
              jobs=lambda cfg: len(cfg["parallel"]["pairs"]) or 8, disk_exponent=1.0),
        Stage("retrieval", "sentences a side", (2_000, 6_000, 20_000), (300, 600, 1_200), None,
              lambda cfg: 1000.0, (1.0, 1.0, 1.0),
              "scoring of pooled 768-dim vectors both ways, without the encoder pass (the "
              "teacher's rate); paper: Tatoeba's 1,000 pairs a language, 36 languages x 13 "
              "layers per encoder",
              jobs=lambda cfg: 36 * 13, time_exponent=2.0),
        Stage("bucc", "sentences a side", (2_000, 6_000, 20_000), (300, 600, 1_200), None,
              _bucc_size, (1.0, 1.0, 1.0),
              "margin mining (k=4, ratio) over 768-dim vectors; paper: BUCC 2018 test sides "
              "of ~400k sentences", time_exponent=2.0),
        Stage("statistics", "per-example predictions", (10_000, 30_000, 100_000),
              (1_000, 3_000, 10_000), "statistics", lambda cfg: 300_000.0, (1.0, 1.0, 1.0),
              "paired bootstrap, 1,000 resamples; paper: up to a few hundred thousand items. "
              "Not compared with the job's estimate: the job runs one test per comparison",
              not_compared=("seconds", "mem_mb", "disk_mb")),
    )
}  # fmt: skip

PREP: dict[str, Callable[[Path, int, Path], dict[str, Any]]] = {
    "teacher": _prep_teacher,
    "aggregate": _prep_teacher,
    "x2static": _prep_x2static,
    "vecmap": _prep_spaces(300),
    "csls": _prep_spaces(300),
    "induction": _prep_spaces(300),
    "word_align": _prep_bitext,
    "retrieval": _prep_sentence_states,
    "bucc": _prep_sentence_states,
    "statistics": _prep_predictions,
}
RUN: dict[str, Callable[[dict[str, Any], Path], None]] = {
    "teacher": _run_teacher,
    "aggregate": _run_aggregate,
    "x2static": _run_x2static,
    "vecmap": _run_selflearn,
    "csls": _run_csls,
    "induction": _run_induction,
    "word_align": _run_word_align,
    "retrieval": _run_retrieval,
    "bucc": _run_bucc,
    "statistics": _run_statistics,
}
NEEDS_ENCODER = {"teacher", "aggregate"}


# ------------------------------------------------------------------------------ child


def _status_kb(key: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {key} in /proc/self/status")


def child(stage: str, size: int, work: Path, shared: Path, result: Path) -> None:
    """One point: build the inputs, reset the peak-RSS mark, run the stage, record."""
    import torch

    torch.set_num_threads(1)
    work.mkdir(parents=True, exist_ok=True)
    out = work / "out"
    prep = PREP[stage](work, size, shared)
    out.mkdir(exist_ok=True)
    Path(work, "ready").touch()
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset VmHWM to the current RSS
    before = _status_kb("VmRSS")
    t0 = time.perf_counter()
    RUN[stage](prep, out)
    seconds = time.perf_counter() - t0
    peak = _status_kb("VmHWM")
    import resource

    # A stage that runs a program (eflomal): that child's own peak, if larger.
    children_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    peak = max(peak, before + children_kb)
    result.write_text(
        json.dumps({"seconds": seconds, "mem_mb": max(0, peak - before) / 1024,
                    "rss_before_mb": before / 1024, "peak_rss_mb": peak / 1024})
    )  # fmt: skip


# ------------------------------------------------------------------------------ parent


def _tree_bytes(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):  # removed while we look
                total += os.lstat(os.path.join(dirpath, f)).st_blocks * 512
    return total


def measure_point(stage: str, size: int, shared: Path, timeout: float = 1800) -> dict[str, Any]:
    """Run one point in a child; poll its output directory's size while it runs."""
    with tempfile.TemporaryDirectory(prefix=f"scaling-{stage}-", dir=shared) as tmp:
        work, result = Path(tmp, "work"), Path(tmp, "result.json")
        env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
        cmd = [sys.executable, __file__, "--child", stage, str(size), str(work), str(shared),
               str(result)]  # fmt: skip
        proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
        peak_disk, t0 = 0, time.monotonic()
        out = work / "out"
        while proc.poll() is None:
            if out.is_dir():
                peak_disk = max(peak_disk, _tree_bytes(out))
            if time.monotonic() - t0 > timeout:
                proc.kill()
            time.sleep(0.05)
        err = proc.stderr.read() if proc.stderr else ""
        if proc.returncode != 0 or not result.is_file():
            raise RuntimeError(
                f"{stage} at {size}: child failed ({proc.returncode}): {err[-2000:]}"
            )
        final = _tree_bytes(out)
        rec = json.loads(result.read_text())
    rec.update(size=size, disk_mb=max(peak_disk, final) / MB, out_mb=final / MB)
    return rec


def paper_config() -> dict[str, Any]:
    from xlalign import config as xlconfig

    return xlconfig.load(str(ROOT / "config" / "paper.yaml"))


def estimate_need(rule: str | None, cfg: Mapping[str, Any]) -> dict[str, float] | None:
    """The raw need of one paper job of ``rule`` on one CPU thread (no GPU), before margins
    and floors: seconds, mem_mb, disk_mb (:mod:`xlalign.workflow.resources`)."""
    if rule is None:
        return None
    from xlalign.workflow import resources as r

    job = r.Job(
        cfg, threads=1, gpus=0, wildcards={"lang": "de", "method": "x2s-m", "space": "x2s-m"}
    )
    need = r.STAGES[rule](job)
    return {"seconds": need.seconds, "mem_mb": need.mem_mb, "disk_mb": need.disk_mb}


def _scaled_from_largest(
    sizes: Sequence[float], values: Sequence[float], size: float, exponent: float
) -> float | None:
    """The largest point's cost scaled to ``size`` with ``exponent``."""
    if exponent <= 0 or not sizes:
        return None
    n, y = max(zip(sizes, values, strict=True))
    return y * (size / n) ** exponent if n > 0 and y > 0 else None


#: Metrics fitted per stage, and which of a stage's factors scales each.
METRICS = ("seconds", "mem_mb", "peak_rss_mb", "disk_mb")
FACTOR_OF = {"seconds": 0, "mem_mb": 1, "peak_rss_mb": 1, "disk_mb": 2}


def analyse(stage: Stage, points: list[dict[str, Any]], cfg: Mapping[str, Any]) -> dict[str, Any]:
    """Fits, projections at the paper's size and the estimate beside them."""
    sizes = [p["size"] for p in points]
    size = stage.paper_size(cfg)
    fits, proj = {}, {}
    for metric in METRICS:
        values = [p[metric] for p in points]
        loglog, fit = fit_power(sizes, values), fit_fixed_power(sizes, values)
        fits[metric] = None if fit is None else {
            "c": fit[0], "a": fit[1], "b": fit[2], "loglog_b": loglog[1] if loglog else None,
        }  # fmt: skip
        # the paper's widths scale the part that grows with the work, not the fixed part
        factor = stage.factors[FACTOR_OF[metric]]
        proj[metric] = None if fit is None else fit[0] + factor * fit[1] * size ** fit[2]
        floor = {"seconds": stage.time_exponent, "disk_mb": stage.disk_exponent}.get(metric, 0)
        scaled = _scaled_from_largest(sizes, values, size, floor)
        if fit is not None and scaled is not None and factor * scaled > proj[metric]:
            # the fit over small sizes grows slower than the algorithm can (fixed costs,
            # warm-up, linear terms beside a quadratic one): the largest point, scaled
            proj[metric] = factor * scaled
            fits[metric]["projected_by"] = f"largest point x size^{floor:g}"
    est = estimate_need(stage.rule, cfg)
    ratios = {}
    if est:  # the job's memory is its whole peak RSS (interpreter, torch, inputs, work)
        for metric, mine in (
            ("seconds", "seconds"),
            ("mem_mb", "peak_rss_mb"),
            ("disk_mb", "disk_mb"),
        ):
            p = proj.get(mine)
            like = metric not in stage.not_compared
            ratios[metric] = est[metric] / p if p and p > 0 and like else None
    return {
        "stage": stage.name, "driver": stage.driver, "note": stage.note, "rule": stage.rule,
        "points": points, "fits": fits, "paper_size": size, "projection": proj,
        "jobs": stage.jobs(cfg), "estimate": est, "estimate_over_projection": ratios,
    }  # fmt: skip


def _f(x: float | None, spec: str = ".3g") -> str:
    return "-" if x is None else format(x, spec)


def _hours(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds / 3600:.3g} h" if seconds >= 360 else f"{seconds:.3g} s"


def _flag(ratio: float | None) -> str:
    """An estimate / projection ratio, marked when outside [0.5, 2]."""
    if ratio is None:
        return "-"
    return f"{ratio:.2g}" + ("" if 0.5 <= ratio <= 2 else " **!**")


def markdown(results: list[dict[str, Any]]) -> str:
    lines = ["# Scaling of the stages (one CPU thread)", ""]
    for res in results:
        lines += [f"## {res['stage']}", "", f"Driver: {res['driver']}. {res['note']}.", ""]
        lines += ["| size | seconds | memory rise MB | peak RSS MB | peak disk MB | output MB |",
                  "|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        for p in res["points"]:
            lines.append(
                f"| {p['size']:,} | {_f(p['seconds'])} | {_f(p['mem_mb'])} | "
                f"{_f(p['peak_rss_mb'])} | {_f(p['disk_mb'])} | {_f(p['out_mb'])} |"
            )
        fits, proj = res["fits"], res["projection"]
        est, ratio = res["estimate"] or {}, res["estimate_over_projection"] or {}
        lines += ["", "| | time | memory rise | peak RSS | disk |", "|---|---:|---:|---:|---:|"]
        lines.append(
            "| exponent b (log-log) | "
            + " | ".join(_f((fits[m] or {}).get("loglog_b"), ".2f") for m in METRICS)
            + " |"
        )
        lines.append(
            "| fixed + a n^b: fixed, b | "
            + " | ".join(
                "-" if not fits[m] else f"{fits[m]['c']:.3g}, {fits[m]['b']:.2f}" for m in METRICS
            )
            + " |"
        )
        lines.append(
            f"| paper ({res['paper_size']:,.0f}) | {_hours(proj['seconds'])} | "
            f"{_f(proj['mem_mb'])} MB | {_f(proj['peak_rss_mb'])} MB | {_f(proj['disk_mb'])} MB |"
        )
        if est:
            lines.append(
                f"| estimate ({res['rule']}, 1 thread) | {_hours(est['seconds'])} | | "
                f"{_f(est['mem_mb'])} MB | {_f(est['disk_mb'])} MB |"
            )
            lines.append(
                "| estimate / projection | "
                + " | ".join(
                    [
                        _flag(ratio.get("seconds")),
                        "",
                        _flag(ratio.get("mem_mb")),
                        _flag(ratio.get("disk_mb")),
                    ]
                )
                + " |"
            )
        lines += ["", f"Jobs of this shape in one paper run: {res['jobs']:,}.", ""]
    return "\n".join(lines) + "\n"


def figure(results: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(results)
    cols = min(4, n)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.2 * rows), squeeze=False)
    for ax, res in zip(axes.flat, results, strict=False):
        sizes = [p["size"] for p in res["points"]]
        for metric, colour in (("seconds", "C0"), ("mem_mb", "C1"), ("disk_mb", "C2")):
            vals = [p[metric] for p in res["points"]]
            if not any(v > 0 for v in vals):
                continue
            fit = res["fits"][metric]
            label = f"{metric} (b={fit['b']:.2f})" if fit else metric
            ax.loglog(sizes, [max(v, 1e-3) for v in vals], "o", color=colour, label=label)
            if fit:
                lo, hi = min(sizes), max(sizes)
                xs = [lo * (hi / lo) ** (i / 20) for i in range(21)]
                ys = [fit["c"] + fit["a"] * x ** fit["b"] for x in xs]
                ax.loglog(xs, ys, "-", color=colour)
        ax.set_title(res["stage"])
        ax.set_xlabel(res["driver"])
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stage", default="all", help=f"one of {sorted(STAGES)} or all (comma list)")
    ap.add_argument("--sizes", help="comma-separated sizes (one stage)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a smoke run)")
    ap.add_argument("--out", type=Path, help="where scaling.md, .json and .png go")
    ap.add_argument(
        "--from-json",
        type=Path,
        nargs="+",
        help="re-analyse earlier runs' scaling.json (no measuring; a stage in several: the last)",
    )
    ap.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        stage, size, work, shared, result = args.child
        child(stage, int(size), Path(work), Path(shared), Path(result))
        return 0
    if args.out is None:
        ap.error("--out is required")
    names = sorted(STAGES) if args.stage == "all" else args.stage.split(",")
    unknown = [n for n in names if n not in STAGES]
    if unknown:
        ap.error(f"unknown stage(s) {unknown}; expected {sorted(STAGES)} or all")
    if args.sizes and len(names) != 1:
        ap.error("--sizes needs exactly one --stage")
    args.out.mkdir(parents=True, exist_ok=True)
    cfg = paper_config()
    results = []
    if args.from_json:  # a stage in several files: the last file's points
        points = {
            old["stage"]: old["points"]
            for path in args.from_json
            for old in json.loads(path.read_text())
            if old["stage"] in names
        }
        results = [analyse(STAGES[name], pts, cfg) for name, pts in points.items()]
        return write(results, args.out)
    with tempfile.TemporaryDirectory(prefix="scaling-") as tmp:
        shared = Path(tmp)
        if any(n in NEEDS_ENCODER for n in names):
            build_encoder(shared / "encoder", dim=64 if args.quick else 384)
        for name in names:
            stage = STAGES[name]
            sizes = (
                [int(s) for s in args.sizes.split(",")] if args.sizes
                else list(stage.quick if args.quick else stage.sizes)
            )  # fmt: skip
            points = []
            for size in sizes:
                p = measure_point(name, size, shared)
                print(f"{name} {size}: {p['seconds']:.2f} s, +{p['mem_mb']:.0f} MB, "
                      f"disk {p['disk_mb']:.1f} MB", flush=True)  # fmt: skip
                points.append(p)
            results.append(analyse(stage, points, cfg))
    return write(results, args.out)


def write(results: list[dict[str, Any]], out: Path) -> int:
    """scaling.json, scaling.md and scaling.png under ``out``."""
    results = sorted(results, key=lambda r: r["stage"])
    (out / "scaling.json").write_text(json.dumps(results, indent=1, default=str))
    (out / "scaling.md").write_text(markdown(results))
    figure(results, out / "scaling.png")
    print(f"wrote {out}/scaling.md, scaling.json, scaling.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
