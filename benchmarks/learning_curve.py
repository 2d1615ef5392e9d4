"""Learning curve of X2S-M against aggregation: BLI P@1 by corpus size (issue 13, item 6).

For the hub (en) and one language (de), at several corpus sizes, the workflow's own steps
are run with the embedded default's resources: corpus sampling (``sample_corpus``, the
configured sources and sampling seed, ``max_sentences`` = the size) -> segmentation
(``segment_file``, the configured tool and filters) -> vocabulary (``build_vocab``, per
size and recipe) -> teacher cache (``build_teacher_cache``) -> X2Static
(``train_x2static``, then ``save_space`` as the x2static job does) and aggregation
(``aggregate_vectors`` + ``save_aggregated``, as the aggregate job does) -> VecMap into
English (``map_to_hub``, the orthogonal recipe, the training part of one fixed
dictionary split) -> BLI (``bli_direction``, NN and CSLS, both directions).

Two X2Static recipes (the ``extract:`` values of the configurations):

* ``paper`` (config/paper.yaml, X2Static's): min_count 10, 5 epochs, lr 1e-3,
  subsample t = 5e-6, 128 sentences a batch, 10 negatives;
* ``embedded`` (config/config.yaml): min_count 3, 10 epochs, lr 1e-2, t = 1e-4;
* ``paper-init-agg``, ``embedded-init-agg`` (``--recipes``, not run by default): the same
  with ``extract.init: aggregation``, X2Static started from the same size's aggregation
  vectors of the same vocabulary (``X2StaticArgs(init="vectors")``).

Aggregation has no training recipe; its rows are ``aggregate-embedded`` (the min_count 3
vocabulary) and ``aggregate-paper`` (the same vectors restricted to the min_count 10
vocabulary, so that each X2S-M row has an aggregation row over the same words).

Saving compute, without changing what is computed:

* The samples are nested: the reservoir sampler gives every paragraph a key that does not
  depend on the size, and a sample is the shortest key-ordered prefix within the budget,
  so each size's paragraphs are a subset of the next one's; segmentation is per
  paragraph, so each size's segmented lines are a subsequence of the largest size's
  (checked line by line, an error otherwise).
* The teacher cache is built ONCE per language, on the largest size with the smallest
  ``min_count`` of the recipes; every (size, recipe) trains from a :class:`CacheView`: the
  size's lines of that cache, occurrences of words outside the size's vocabulary dropped
  and word ids remapped. A context vector does not depend on the vocabulary (the mean of
  the *other* words' vectors, in or out of vocabulary), and a prefix's vocabulary with a
  ``min_count`` at least as large is a subset of the cache's, so the view yields exactly
  the arrays a cache built for that size and vocabulary would hold.

Two spaces are scored per cell: the unmapped vectors (``joint``: the encoder's shared
space, what the tables' X2S-M and Aggregation rows score, and where the paper compares
them) and the vectors mapped into English with VecMap (``directions``: the mapped
candidate that X2S-MA / Aggregation-A selection weighs against the unmapped one).

Evaluation: ONE fixed split for every size (default: the embedded default's
``dictionaries/s0/de/{train,test,test.reverse}.txt``), so sizes are comparable. P@1 is
reported over all test source words (``oov: miss``, a word out of the vocabulary counts as
wrong) and over the covered ones (``oov: skip``, MUSE's convention), with the coverage.

Each (language, size, method) space, each mapping and each evaluation is a checkpoint: a
re-run skips what is done. Results: ``<out>/learning_curve.json`` and ``.md``, and the
figure ``.png`` / ``.svg`` (P@1 NN of the unmapped spaces, OOV counted wrong, by segmented
sentences; :func:`xlalign.reporting.plots.learning_curve`), atomically after every cell;
logging to stderr.

``--root`` is a checkout where the embedded default's resources (``make run``) and its
dictionary split are built. Sizes are ``corpus.max_sentences`` values; 4000 to 40000 give
about 2.3k to 22k segmented sentences per language (10000 is the embedded default's own
corpus; ``all``, the whole embedded text, ~45k). On 2 cores shared with other jobs the default
sizes took 71 minutes, the encoder dominating (teacher once on the largest size,
aggregation at every size); the two -init-agg recipes then add about 20.

    .venv/bin/python benchmarks/learning_curve.py --root . --out benchmarks/out/learning_curve
    .venv/bin/python benchmarks/learning_curve.py --root . --out benchmarks/out/learning_curve \\
        --recipes paper embedded paper-init-agg embedded-init-agg   # + extract.init: aggregation
    .venv/bin/python benchmarks/learning_curve.py --root . --sizes 300 600 --max-epochs 1 \\
        --out benchmarks/out/lc-smoke                                         # smoke run
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from xlalign import config as xlconfig
from xlalign.core.errors import InputError
from xlalign.core.io import atomic_open, iter_lines, read_json, write_json
from xlalign.corpus.sample import sample_corpus
from xlalign.corpus.segment import make_segmenter, segment_file
from xlalign.corpus.sources import iter_sources
from xlalign.corpus.vocab import Vocab, build_vocab, read_vocab, write_vocab
from xlalign.evaluation.bli import bli_direction
from xlalign.learning_curve.curve import CacheView
from xlalign.mapping.hub import map_to_hub
from xlalign.reporting.plots import learning_curve, learning_curve_from_summary
from xlalign.static.aggregation import aggregate_vectors, save_aggregated
from xlalign.static.spaces import save_space
from xlalign.static.teacher import TeacherCache, build_teacher_cache
from xlalign.static.vectors import load_space
from xlalign.static.x2static import LEFT_OUT_REASON, X2StaticArgs, train_x2static
from xlalign.workflow import paths as wp

ROOT = Path(__file__).resolve().parents[1]
log = logging.getLogger("learning_curve")

ALL = "all"
ALL_SENTENCES = 10**9  # "all": a budget larger than any embedded text


@dataclass(frozen=True)
class Recipe:
    """One X2Static recipe: its vocabulary threshold and training arguments."""

    name: str
    min_count: int
    epochs: int
    lr: float
    subsample_t: float
    batch_sentences: int = 128
    negatives: int = 10
    init: str = "uniform"  # or "aggregation": extract.init, from the same size's aggregation
    base: str = ""  # the recipe whose vocabulary and aggregation rows it shares

    @property
    def vocab_name(self) -> str:
        return self.base or self.name


_PAPER = Recipe("paper", min_count=10, epochs=5, lr=1e-3, subsample_t=5e-6)
_EMBEDDED = Recipe("embedded", min_count=3, epochs=10, lr=1e-2, subsample_t=1e-4)
RECIPES = {
    r.name: r
    for r in (
        _PAPER,
        _EMBEDDED,
        # extract.init: aggregation (not the paper's): start from the aggregation vectors
        dataclasses.replace(_PAPER, name="paper-init-agg", init="aggregation", base="paper"),
        dataclasses.replace(
            _EMBEDDED, name="embedded-init-agg", init="aggregation", base="embedded"
        ),
    )
}
DEFAULT_RECIPES = ["paper", "embedded"]


# --------------------------------------------------------------------------- the cache view


# CacheView: xlalign.learning_curve.curve (the workflow's learning-curve stage uses it too)


def subsequence_lines(small: Path, large: Path, language: str) -> np.ndarray:
    """Line numbers of ``large`` matching the lines of ``small`` in order (greedy)."""
    big = list(iter_lines(large, language=language))
    out: list[int] = []
    j = 0
    for k, line in enumerate(iter_lines(small, language=language)):
        while j < len(big) and big[j] != line:
            j += 1
        if j == len(big):
            raise InputError(
                f"{small}: line {k + 1} is not found (in order) in {large}; the samples are "
                "not nested"
            )
        out.append(j)
        j += 1
    return np.asarray(out, dtype=np.int64)


# --------------------------------------------------------------------------- steps


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.root = Path(args.root).resolve()
        self.out = Path(args.out).resolve()
        self.cfg = xlconfig.load(ROOT / args.config)
        self.hub = args.hub
        self.langs = [args.hub, args.lang]
        self.sizes: list[str] = [str(s) for s in args.sizes]
        # The teacher cache's corpus: the largest size (or a larger one, to add cells
        # to a finished run without re-encoding).
        self.largest = args.cache_size or self.sizes[-1]
        self.recipes = [RECIPES[r] for r in args.recipes]
        for r in self.recipes:
            if r.base and r.base not in args.recipes:
                raise SystemExit(f"--recipes: {r.name} needs its base recipe {r.base}")
        self.ext = self.cfg["extract"]
        self.encoder = self.root / wp.encoder_dir(self.cfg)
        split = Path(args.split)
        split = split if split.is_absolute() else self.root / split
        self.train_dic = split / args.lang / "train.txt"
        self.test = {
            f"{self.hub}-{args.lang}": split / args.lang / "test.txt",
            f"{args.lang}-{self.hub}": split / args.lang / "test.reverse.txt",
        }
        self.timings: dict[str, float] = {}
        self._teachers: dict[str, tuple[TeacherCache, Vocab]] = {}

    def p(self, *parts: str) -> Path:
        path = self.out.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    # -- corpus
    def corpus(self, size: str, lang: str) -> Path:
        seg = self.p("corpus", size, "segment", f"{lang}.txt")
        seg_stats = seg.with_suffix(".json")
        if seg_stats.is_file():
            return seg
        sample = self.p("corpus", size, "sample", f"{lang}.txt")
        sources = xlconfig.sources_for(self.cfg, lang)
        files = [self.root / wp.source_file(s, lang, self.cfg) for s in sources]
        sample_corpus(
            iter_sources(
                list(zip([s["type"] for s in sources], files, strict=True)), language=lang
            ),
            sample,
            sample.with_suffix(".json"),
            language=lang,
            max_sentences=ALL_SENTENCES if size == ALL else int(size),
            seed=int(self.cfg["corpus"]["seed"]),
            strategy=self.cfg["corpus"]["strategy"],
            max_paragraphs_scanned=self.cfg["corpus"]["max_paragraphs_scanned"],
            sources=[{**s, "path": str(f)} for s, f in zip(sources, files, strict=True)],
            progress=False,
        )
        segmenter, info = make_segmenter(
            lang,
            tool=xlconfig.segment_tool(self.cfg, lang),
            udpipe_model=None,
            fallback=self.cfg["segment"]["udpipe"]["fallback"],
        )
        segment_file(
            sample,
            seg,
            seg_stats,
            lang,
            segmenter,
            info,
            min_tokens=xlconfig.segment_filter(self.cfg, lang, "min_tokens"),
            min_paragraph_sentences=xlconfig.segment_filter(
                self.cfg, lang, "min_paragraph_sentences"
            ),
            max_sentences=self.cfg["segment"]["max_sentences"],
            progress=False,
        )
        return seg

    def vocab(self, size: str, lang: str, min_count: int) -> Vocab:
        path = self.p("vocab", size, f"mc{min_count}", f"{lang}.tsv")
        if path.is_file():
            return read_vocab(path)
        opts = self.ext["vocab"]
        vocab = build_vocab(
            self.corpus(size, lang),
            min_count=min_count,
            max_size=opts["max_size"],
            lowercase=opts["lowercase"],
            language=lang,
        )
        write_vocab(vocab, path)
        return vocab

    # -- teacher
    def cache_min_count(self) -> int:
        return min(r.min_count for r in self.recipes)

    def teacher(self, lang: str) -> tuple[TeacherCache, Vocab]:
        if lang in self._teachers:
            return self._teachers[lang]
        mc = self.cache_min_count()
        vocab = self.vocab(self.largest, lang, mc)
        out = self.out / "cache" / lang
        t0 = time.perf_counter()
        build_teacher_cache(
            self.corpus(self.largest, lang),
            vocab,
            self.encoder,
            out,
            layer=self.ext["layer"],
            pooling=self.ext["pooling"],
            context=self.ext["context"],
            max_length=self.ext["max_length"],
            batch_tokens=self.ext["batch_tokens"],
            threads=self.args.threads,
            language=lang,
            progress=self.args.progress,
        )
        self.timings[f"teacher/{lang}"] = time.perf_counter() - t0
        self._teachers[lang] = (TeacherCache(out), vocab)
        return self._teachers[lang]

    # -- spaces
    def space_path(self, size: str, method: str, lang: str) -> Path:
        return self.p("static", size, method, f"{lang}.npy")

    def x2static(self, size: str, recipe: Recipe, lang: str) -> Path:
        npy = self.space_path(size, f"x2s-m-{recipe.name}", lang)
        stats_path = npy.with_suffix(".json")
        if stats_path.is_file():
            return npy
        cache, cache_vocab = self.teacher(lang)
        vocab = self.vocab(size, lang, recipe.min_count)
        lines = subsequence_lines(
            self.corpus(size, lang), self.corpus(self.largest, lang), language=lang
        )
        view = CacheView(cache, lines, cache_vocab, vocab)
        init_vectors = None
        if recipe.init == "aggregation":
            init_vectors = str(self.aggregate(size, lang)[recipe.vocab_name])
        targs = X2StaticArgs(
            epochs=min(recipe.epochs, self.args.max_epochs or recipe.epochs),
            batch_sentences=recipe.batch_sentences,
            negatives=recipe.negatives,
            subsample_t=recipe.subsample_t,
            lr=recipe.lr,
            seed=self.args.seed,
            checkpoint_every_batches=0,
            init="vectors" if init_vectors else "uniform",
            init_vectors=init_vectors,
        )
        log.info(
            "x2static %s %s %s: %d sentences, %d words",
            size,
            recipe.name,
            lang,
            view.n_sentences,
            len(vocab),
        )
        result = train_x2static(
            view, vocab, targs, output_dir=npy.with_suffix(".ckpt"), progress=self.args.progress
        )
        save_space(
            vocab.words,
            result.vectors,
            view.occurrence_counts(len(vocab)) > 0,
            vec_path=npy.with_suffix(".vec"),
            npy_stem=npy.with_suffix(""),
            stats_path=stats_path,
            stats={**result.stats, "epoch_loss": result.epoch_losses, "teacher": view.meta},
            language=lang,
            reason=LEFT_OUT_REASON,
        )
        return npy

    def aggregate(self, size: str, lang: str) -> dict[str, Path]:
        """The aggregation spaces of one size: one per recipe vocabulary (the larger
        ``min_count`` ones are rows of the smallest one's run)."""
        mcs = sorted({r.min_count for r in self.recipes})
        out = {
            r.name: self.space_path(size, f"aggregate-{r.name}", lang)
            for r in self.recipes
            if not r.base
        }
        if all(p.with_suffix(".json").is_file() for p in out.values()):
            return out
        base_vocab = self.vocab(size, lang, mcs[0])
        raw = self.p("static", size, "aggregate-raw", f"mc{mcs[0]}.{lang}.npy")
        if raw.is_file():
            vectors = np.load(raw)
        else:
            t0 = time.perf_counter()
            vectors = aggregate_vectors(
                self.corpus(size, lang),
                base_vocab,
                self.encoder,
                layer=self.ext["layer"],
                pooling=self.ext["pooling"],
                max_contexts=self.ext["aggregation"]["max_contexts"],
                seed=self.args.seed,
                max_length=self.ext["max_length"],
                batch_tokens=self.ext["batch_tokens"],
                threads=self.args.threads,
                language=lang,
                missing="zero",
                progress=self.args.progress,
            )
            self.timings[f"aggregate/{size}/{lang}"] = time.perf_counter() - t0
            with atomic_open(raw, "wb") as fh:
                np.save(fh, vectors)
        for recipe in (r for r in self.recipes if not r.base):
            vocab = self.vocab(size, lang, recipe.min_count)
            rows = np.asarray([base_vocab.index[w] for w in vocab.words], dtype=np.int64)
            save_aggregated(
                vocab.words,
                vectors[rows],
                vec_path=out[recipe.name].with_suffix(".vec"),
                npy_stem=out[recipe.name].with_suffix(""),
                stats_path=out[recipe.name].with_suffix(".json"),
                stats={
                    "layer": self.ext["layer"],
                    "pooling": self.ext["pooling"],
                    "max_contexts": self.ext["aggregation"]["max_contexts"],
                    "seed": self.args.seed,
                    "rows_of": f"min_count {mcs[0]} run",
                },
                language=lang,
            )
        return out

    # -- mapping and BLI
    def evaluate(self, size: str, method: str, spaces: dict[str, Path]) -> dict[str, Any]:
        """BLI of one cell in two spaces: ``directions``, after mapping every language into
        English with VecMap (the X2S-MA route's mapped candidate), and ``joint``, the
        unmapped vectors (the encoder's shared space: the paper's X2S-M row)."""
        path = self.p("eval", size, f"{method}.json")
        if path.is_file():
            record = read_json(path)
            if "joint" not in record:  # cells evaluated before the joint space was added
                joint = {lang: load_space(spaces[lang])[0] for lang in self.langs}
                record["joint"] = self._bli(joint)
                write_json(path, record)
            return record
        aligned = {}
        for lang in self.langs:
            stem = self.p("aligned", size, method, f"{lang}.npy")
            map_to_hub(
                language=lang,
                hub=self.hub,
                space=spaces[lang],
                hub_space=spaces[self.hub],
                dictionary=self.train_dic if lang != self.hub else None,
                recipe=self.args.align_recipe,
                options={},
                seed=self.args.seed,
                out_stem=stem,
                stats_path=stem.with_suffix(".json"),
                heldout=self.test if lang != self.hub else {},
                overlap="report",
                progress=False,
            )
            aligned[lang], _ = load_space(stem)
        record: dict[str, Any] = {"size": size, "method": method}
        record["directions"] = self._bli(aligned)
        record["joint"] = self._bli({lang: load_space(spaces[lang])[0] for lang in self.langs})
        record["vocab"] = {lang: len(aligned[lang][0]) for lang in self.langs}
        write_json(path, record)
        return record

    def _bli(self, space: dict[str, Any]) -> dict[str, Any]:
        """Both directions of the fixed test split, OOV words skipped and counted as misses."""
        out = {}
        for direction, dic in self.test.items():
            src, tgt = direction.split("-")
            out[direction] = {
                oov: bli_direction(
                    space[src],
                    space[tgt],
                    dic,
                    retrievals=("nn", "csls"),
                    csls_k=int(self.cfg["evaluate"]["csls_k"]),
                    ks=(1, 5, 10),
                    oov=oov,
                    device="cpu",
                )
                for oov in ("skip", "miss")
            }
        return out

    # -- driver
    def run(self) -> None:
        for size in self.sizes:  # cheap: every corpus first (shows the sizes at once)
            for lang in self.langs:
                self.corpus(size, lang)
        self.sentences = {
            size: {
                lang: read_json(self.p("corpus", size, "segment", f"{lang}.json"))["sentences_out"]
                for lang in self.langs
            }
            for size in self.sizes
        }
        log.info("segmented sentences per size: %s", self.sentences)
        for size in self.sizes:
            for recipe in (r for r in self.recipes if r.init == "uniform"):
                spaces = {lang: self.x2static(size, recipe, lang) for lang in self.langs}
                self.record(size, f"x2s-m-{recipe.name}", spaces)
            agg = {lang: self.aggregate(size, lang) for lang in self.langs}
            for name in agg[self.hub]:
                spaces = {lang: agg[lang][name] for lang in self.langs}
                self.record(size, f"aggregate-{name}", spaces)
            for recipe in (r for r in self.recipes if r.init != "uniform"):
                spaces = {lang: self.x2static(size, recipe, lang) for lang in self.langs}
                self.record(size, f"x2s-m-{recipe.name}", spaces)

    def record(self, size: str, method: str, spaces: dict[str, Path]) -> None:
        self.evaluate(size, method, spaces)
        self.write_summary()

    def write_summary(self) -> None:
        """The table of every evaluated cell under ``--out`` (this call's and earlier ones')."""
        rows = []
        found = sorted((p.parent.name, p.stem) for p in (self.out / "eval").glob("*/*.json"))
        order = {name: i for i, name in enumerate(METHOD_ORDER)}
        found.sort(key=lambda sm: (_size_key(sm[0]), order.get(sm[1], len(order)), sm[1]))
        for size, method in found:
            rec = read_json(self.out / "eval" / size / f"{method}.json")
            sentences = {
                lang: read_json(self.out / "corpus" / size / "segment" / f"{lang}.json")[
                    "sentences_out"
                ]
                for lang in self.langs
            }
            row: dict[str, Any] = {
                "size": size,
                "sentences": sentences,
                "method": method,
                "vocab": rec["vocab"],
            }
            for kind, key in SPACE_KINDS.items():
                for direction, per_oov in rec.get(key, {}).items():
                    for oov, res in per_oov.items():
                        for retrieval in ("nn", "csls"):
                            r = res.get(retrieval)
                            if r is None:
                                continue
                            row[f"{kind}/{direction}/{retrieval}/{oov}"] = r["p@1"]
                            row[f"{kind}/{direction}/coverage"] = r["coverage"]
            rows.append(row)
        summary = {
            "command": self.args.command_line,
            "sizes": self.sizes,
            "recipes": {r.name: r.__dict__ for r in self.recipes},
            "split": {k: str(v) for k, v in {"train": self.train_dic, **self.test}.items()},
            "align_recipe": self.args.align_recipe,
            "timings_s": self.timings,
            "rows": rows,
        }
        write_json(self.out / "learning_curve.json", summary)
        with atomic_open(self.out / "learning_curve.md") as fh:
            for kind, title in SPACE_TITLES.items():
                fh.write(f"## {title}\n\n")
                fh.write(markdown_table(rows, list(self.test), self.langs, kind))
                fh.write("\n")
        sizes, curves, xlabel = learning_curve_from_summary(summary)
        learning_curve(sizes, curves, self.out / "learning_curve", xlabel=xlabel)


METHOD_ORDER = [
    "x2s-m-paper",
    "aggregate-paper",
    "x2s-m-paper-init-agg",
    "x2s-m-embedded",
    "aggregate-embedded",
    "x2s-m-embedded-init-agg",
]


#: Row-key prefix -> record key: BLI after VecMap into English, and of the unmapped vectors.
SPACE_KINDS = {"mapped": "directions", "joint": "joint"}
SPACE_TITLES = {
    "joint": "Unmapped (the encoder's shared space; the X2S-M / Aggregation rows)",
    "mapped": "Mapped into English with VecMap (the X2S-MA / Aggregation-A candidate)",
}


def _size_key(size: str) -> int:
    return ALL_SENTENCES if size == ALL else int(size)


def markdown_table(
    rows: list[dict[str, Any]], directions: list[str], langs: list[str], kind: str
) -> str:
    """P@1 (%) over all test words / over covered ones, NN and CSLS, and coverage."""
    pair = "/".join(langs)
    head = ["size", f"sentences {pair}", "method", f"vocab {pair}"]
    for d in directions:
        head += [f"{d} NN all/cov", f"{d} CSLS all/cov", f"{d} cov."]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def pct(v: float | None) -> str:
        return "–" if v is None else f"{100 * v:.1f}"

    for row in rows:
        cells = [
            row["size"],
            "/".join(str(row["sentences"][lang]) for lang in langs),
            row["method"],
            "/".join(str(row["vocab"][lang]) for lang in langs),
        ]
        for d in directions:
            for r in ("nn", "csls"):
                miss, skip = (row.get(f"{kind}/{d}/{r}/{oov}") for oov in ("miss", "skip"))
                cells.append(f"{pct(miss)} / {pct(skip)}")
            cells.append(pct(row.get(f"{kind}/{d}/coverage")))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    import sys

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(ROOT), help="directory holding resources/ (built)")
    ap.add_argument(
        "--config",
        default="config/config.yaml",
        help="sources, segmentation, encoder and extraction settings (relative to the repository)",
    )
    ap.add_argument("--hub", default="en")
    ap.add_argument("--lang", default="de")
    ap.add_argument(
        "--sizes",
        nargs="+",
        default=["4000", "10000", "20000", "40000"],
        help="corpus.max_sentences of each size (estimated sentences before "
        "segmentation), ascending; 'all' = the whole text",
    )
    ap.add_argument(
        "--recipes",
        nargs="+",
        default=DEFAULT_RECIPES,
        choices=list(RECIPES),
        help="X2Static recipes (the -init-agg ones need their base recipe)",
    )
    ap.add_argument(
        "--split",
        default="results/embedded/dictionaries/s0",
        help="directory of the fixed split: <lang>/{train,test,test.reverse}.txt "
        "(relative to --root)",
    )
    ap.add_argument(
        "--cache-size",
        help="the size whose corpus the teacher cache is built on (default: the largest of "
        "--sizes; name a finished run's largest to add cells to it)",
    )
    ap.add_argument("--align-recipe", default="orthogonal")
    ap.add_argument("--seed", type=int, default=1, help="training / aggregation / mapping seed")
    ap.add_argument("--max-epochs", type=int, default=0, help="cap the recipes' epochs (smoke)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--progress", action="store_true", help="progress bars")
    ap.add_argument("--out", default="benchmarks/out/learning_curve")
    args = ap.parse_args()
    args.command_line = " ".join(sys.argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    torch.set_num_threads(args.threads)
    sizes = args.sizes
    if ALL in sizes[:-1]:
        ap.error("--sizes: 'all' must be the last size")
    numeric = [int(s) for s in sizes if s != ALL]
    if numeric != sorted(numeric):
        ap.error("--sizes: expected ascending sizes")
    bench = Bench(args)
    bench.run()
    print((bench.out / "learning_curve.md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
