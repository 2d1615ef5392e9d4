"""Rehearsal of the encoder-bound stages on one CUDA device, at 10x the embedded default's
sizes (issue 28): per stage tokens/s, examples/s, peak GPU memory and the model FLOPs
utilisation (MFU) against the device's peak bf16 dense FLOP/s.

Stages, each the library's own code on synthetic data (the device machine has no internet
and no ``resources/``): the teacher's pass (:func:`xlalign.static.teacher.build_teacher_cache`),
X2Static training from its cache (:func:`xlalign.static.x2static.train_x2static`), the
aggregation baseline's own encoder pass (:func:`xlalign.static.aggregation.aggregate_vectors`),
continued pre-training steps, MLM (:func:`xlalign.pretrain.trainer.train`), POS fine-tuning
steps (:func:`xlalign.evaluation.tasks.finetune.finetune`) and sentence retrieval
(:func:`xlalign.evaluation.tasks.retrieval.evaluate_retrieval`).

Sizes (GPU): the embedded default's (config/config.yaml) times 10 -- corpus 45,000 sentences
(max_sentences 4,500), X2Static 10 epochs, 400 pre-training steps (40), 5,120 fine-tuning
examples (512), 6,000 retrieval pairs (4 Bible languages x 150) -- and the paper's step
shapes (MLM 64 sequences of 128 tokens, fine-tuning batches of 32). Stages that loop
(X2Static, pre-training, fine-tuning) stop at their step count or their time budget,
whichever comes first, and report what they measured: ``--stage-seconds`` (60), or less
when what is left of ``--total-seconds`` (420, from the start of the setup) shared among the
looping stages still to run is less; the one-pass stages (teacher, aggregation, retrieval)
are sized so that the whole script stays under 8 minutes on an H100.

Timing: synchronised around each stage; the teacher's and the aggregation's rates leave out
their encoder loading (timed just before, from the same warm page cache); pre-training
counts its median step after a warm-up step (the last step also holds the run's end),
fine-tuning its steps after two warm-up steps. Peak GPU memory
(``torch.cuda.max_memory_allocated``, reset per stage) includes the weights.
Precision on CUDA: the library's own bf16 where it has one (the teacher and aggregation
load bf16 weights; pre-training and fine-tuning train in bf16), bf16 autocast around the
retrieval pass; X2Static trains in fp32 as the library does.

The workloads of benchmarks/encoder_pass.py, pretrain_speed.py and finetune_speed.py read
the embedded run's outputs (``results/``, ``resources/``), which the device machine lacks;
here every input is synthetic (Zipf-distributed pseudo-words), built in a few seconds.

The encoder: ``--encoder DIR`` (a real checkpoint), else one built offline with random
weights: ``--arch xlmr-base`` (XLM-R base's shape: 12 layers, 768 wide, 3,072 feed-forward,
250,002-piece vocabulary, as a BERT of that shape -- same FLOPs) or ``e5-small``
(multilingual-e5-small's: 12 x 384, 1,536, 250,002), with a WordPiece tokenizer of the same
vocabulary over synthetic words.

MFU: estimated FLOPs per token = 2 x the parameters the stage runs, without the embeddings
(forward), x3 when training (forward and backward), times tokens/s, over the device's peak
(:data:`PEAK_TFLOPS`, matched against ``torch.cuda.get_device_name``; ``--peak-tflops``
overrides). X2Static's FLOPs: 2 x (1 + negatives) x dim per occurrence, x3.

Without CUDA (or with ``--cpu-smoke``) everything runs at tiny sizes on the CPU, fp32, so
that the script itself is tested (tests/benchmarks/test_gpu_rehearsal.py).

    benchmarks/gpu_rehearsal.sh [--out FILE] [--encoder DIR] [--peak-tflops N] [...]
    .venv/bin/python benchmarks/gpu_rehearsal.py --cpu-smoke --peak-tflops 1 --out r.json
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

#: Peak dense bf16 tensor FLOP/s (fp16 for V100), in TFLOP/s, by a substring of the device
#: name; the longest matching key wins ("A100" before "A10", "H100 PCIe" before "H100").
PEAK_TFLOPS: dict[str, float] = {
    "H200": 989.0,
    "H100 NVL": 835.0,
    "H100 PCIe": 756.0,
    "H100": 989.0,  # SXM
    "GH200": 989.0,
    "A100": 312.0,
    "A800": 312.0,
    "L40S": 362.0,
    "L40": 181.0,
    "L4": 121.0,
    "A10G": 70.0,
    "A10": 125.0,
    "A30": 165.0,
    "A6000": 155.0,
    "V100": 125.0,  # fp16 (no bf16)
    "RTX 4090": 165.0,
    "RTX 3090": 71.0,
    "T4": 65.0,  # fp16
}

STAGES = ("teacher", "x2static", "aggregation", "pretrain", "finetune", "retrieval")
#: The stages that stop at a time budget (the others are sized).
LOOPING = ("x2static", "pretrain", "finetune")

#: Encoder shapes built offline (hidden, layers, heads, intermediate, vocabulary).
ARCHS: dict[str, dict[str, int]] = {
    "xlmr-base": {"hidden": 768, "layers": 12, "heads": 12, "intermediate": 3072},
    "e5-small": {"hidden": 384, "layers": 12, "heads": 12, "intermediate": 1536},
    "tiny": {"hidden": 64, "layers": 2, "heads": 2, "intermediate": 128},
}


@dataclasses.dataclass
class Sizes:
    """The work of each stage (GPU: 10x the embedded default's; smoke: tiny)."""

    sentences: int = 45_000  # corpus.max_sentences 4,500 x 10
    vocab: int = 250_002  # tokenizer pieces (XLM-R's)
    layer: int = 6  # extract.layer
    batch_tokens: int = 8192
    x2s_epochs: int = 10  # extract.epochs (the corpus is the 10x)
    max_contexts: int = 3  # extract.aggregation.max_contexts
    pretrain_steps: int = 400  # pretrain.steps 40 x 10
    pretrain_batch: int = 64  # the paper's MLM batch
    pretrain_length: int = 128
    finetune_examples: int = 5120  # pos-gold max_train_examples 512 x 10
    finetune_batch: int = 32
    finetune_length: int = 128
    retrieval_pairs: int = 6000  # 4 Bible languages x 150 pairs x 10
    retrieval_batch: int = 64
    stage_seconds: float = 60.0  # the looping stages stop here at the latest

    @classmethod
    def smoke(cls) -> Sizes:
        return cls(
            sentences=300, vocab=3000, layer=2, batch_tokens=2048, x2s_epochs=1,
            pretrain_steps=4, pretrain_batch=4, pretrain_length=32, finetune_examples=64,
            finetune_batch=16, finetune_length=48, retrieval_pairs=64, retrieval_batch=32,
            stage_seconds=10.0,
        )  # fmt: skip


class BudgetExceeded(Exception):
    """Raised from a step callback when a stage's time budget is spent."""


# --------------------------------------------------------------------------- device and MFU


def peak_tflops(device: torch.device, override: float | None) -> tuple[float | None, str]:
    """(peak dense bf16 TFLOP/s, device name): ``override`` if given, else the table's
    entry for the CUDA device's name (None when unknown or on the CPU)."""
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    if override is not None:
        return float(override), name
    return peak_for_name(name), name


def peak_for_name(name: str) -> float | None:
    """:data:`PEAK_TFLOPS`' entry for a device name (the longest key found in it)."""
    for key in sorted(PEAK_TFLOPS, key=len, reverse=True):
        if key.lower() in name.lower():
            return PEAK_TFLOPS[key]
    return None


def body_params(model: Any) -> int:
    """Parameters of ``model`` outside its embedding tables (an MLM decoder tied to the
    input embeddings counts once, as an embedding)."""
    seen: set[int] = set()
    emb = 0
    for m in model.modules():
        if isinstance(m, torch.nn.Embedding):
            seen.add(id(m.weight))
            emb += m.weight.numel()
    total = 0
    for p in model.parameters():  # parameters() yields a tied tensor once
        if id(p) not in seen:
            total += p.numel()
    return total


def mfu(flops_per_token: float, tokens_per_s: float, peak: float | None) -> float | None:
    """Achieved FLOP/s over ``peak`` TFLOP/s (None without a peak)."""
    if not peak:
        return None
    return flops_per_token * tokens_per_s / (peak * 1e12)


@contextlib.contextmanager
def measured(
    device: torch.device, out: dict[str, Any], *, autocast: bool = False
) -> Iterator[None]:
    """Time the block (synchronised) and record the peak GPU memory it allocated; with
    ``autocast``, run it under bf16 autocast on CUDA (for code that sets no precision of
    its own: the teacher and aggregation load bf16 weights on CUDA, pre-training and
    fine-tuning train in bf16 there, each by the library's own setting)."""
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.synchronize(device)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)
    auto = (
        torch.autocast("cuda", dtype=torch.bfloat16)
        if cuda and autocast
        else contextlib.nullcontext()
    )
    t0 = time.perf_counter()
    with auto:
        yield
    if cuda:
        torch.cuda.synchronize(device)
    out["seconds"] = time.perf_counter() - t0
    out["peak_gpu_mib"] = torch.cuda.max_memory_allocated(device) / 2**20 if cuda else None


def quiet() -> None:
    """No load reports or progress bars from transformers (the report is the output)."""
    import transformers

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


def load_seconds(w: dict[str, Any]) -> float:
    """Seconds to load the truncated encoder onto the device, as the teacher and the
    aggregation do first (measured just before them, so the page cache is as warm)."""
    from xlalign.encoders.contextual import load_truncated_encoder

    dev = w["device"]
    t0 = time.perf_counter()
    _, model = load_truncated_encoder(w["encoder"], w["sizes"].layer, device=dev)
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    t = time.perf_counter() - t0
    del model
    return t


def stage_budget(w: dict[str, Any]) -> float:
    """A looping stage's seconds: ``--stage-seconds``, or less when the script's total
    budget left, shared with the stages still to run, is smaller."""
    left = w["deadline"] - time.perf_counter()
    return min(w["sizes"].stage_seconds, max(2.0, left / max(1, w["stages_left"])))


# --------------------------------------------------------------------------- synthetic world


def synthetic_words(n: int, seed: int) -> list[str]:
    """``n`` distinct lowercase pseudo-words of 2-12 letters."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    out: dict[str, None] = {}
    while len(out) < n:
        k = n - len(out)
        lengths = rng.integers(2, 13, size=k)
        chars = rng.integers(0, 26, size=(k, 12))
        for row, ln in zip(chars, lengths, strict=True):
            out["".join(letters[row[:ln]])] = None
    return list(out)[:n]


def build_tokenizer(words: list[str], vocab_size: int) -> Any:
    """A BERT-style WordPiece tokenizer of exactly ``vocab_size`` pieces: the specials,
    letters and continuation letters, then whole words (most frequent first)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    from xlalign.encoders.scratch import SPECIAL_TOKENS

    letters = list("abcdefghijklmnopqrstuvwxyz")
    pieces = [*SPECIAL_TOKENS, *letters, *("##" + c for c in letters)]
    pieces += words[: vocab_size - len(pieces)]
    tok = Tokenizer(models.WordPiece({p: i for i, p in enumerate(pieces)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    cls, sep = pieces.index("[CLS]"), pieces.index("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="[PAD]", unk_token="[UNK]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]",
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],
    )  # fmt: skip


def build_encoder(out: Path, arch: str, vocab_size: int, words: list[str]) -> Path:
    """A random-weight BERT masked LM of ``arch``'s shape over ``vocab_size`` pieces, with
    its tokenizer, saved in ``out`` (no network)."""
    from xlalign.encoders.scratch import ScratchArch, init_encoder

    a = ARCHS[arch]
    tok = build_tokenizer(words, vocab_size)
    return init_encoder(
        tok,
        out,
        arch=ScratchArch(
            layers=a["layers"], hidden=a["hidden"], heads=a["heads"],
            intermediate=a["intermediate"], max_position=512,
        ),
        seed=1,
    )  # fmt: skip


def synthetic_sentences(words: list[str], n: int, seed: int, lo: int = 8, hi: int = 40) -> list:
    """``n`` sentences of ``lo``..``hi`` words drawn Zipf-like from ``words`` (a tail of
    them beyond the tokenizer's whole-word pieces splits into letters)."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, len(words) + 1) ** 1.05
    p /= p.sum()
    lengths = rng.integers(lo, hi + 1, size=n)
    draws = rng.choice(len(words), size=int(lengths.sum()), p=p)
    out, k = [], 0
    for ln in lengths:
        out.append([words[i] for i in draws[k : k + ln]])
        k += ln
    return out


def count_tokens(tokenizer: Any, sentences: list[list[str]], max_length: int) -> int:
    """Subword tokens (special tokens included) of the sentences, cut at ``max_length``."""
    enc = tokenizer(sentences, is_split_into_words=True, truncation=True, max_length=max_length)
    return sum(len(ids) for ids in enc["input_ids"])


# --------------------------------------------------------------------------- stages


def stage_teacher(w: dict[str, Any]) -> dict[str, Any]:
    from xlalign.static.teacher import build_teacher_cache

    sz: Sizes = w["sizes"]
    res: dict[str, Any] = {"examples": len(w["sentences"]), "load_seconds": load_seconds(w)}
    with measured(w["device"], res):
        build_teacher_cache(
            w["corpus"], w["vocab"], w["encoder"], w["work"] / "cache", layer=sz.layer,
            batch_tokens=sz.batch_tokens, device=w["device"], progress=False,
            language="xx", aggregation_seeds=[1], max_contexts=sz.max_contexts,
        )  # fmt: skip
    res["tokens"] = w["corpus_tokens"]
    res["flops_per_token"] = 2 * w["body_truncated"]
    res["note"] = f"layers 1-{sz.layer}, forward, cache written; encoder loading excluded"
    return res


class BudgetedSource:
    """The teacher cache as X2Static reads it, counting occurrences, and giving empty
    batches once ``deadline`` has passed (the rest of the epochs then run through fast)."""

    def __init__(self, cache: Any, deadline: float, device: torch.device) -> None:
        self.cache, self.deadline, self.device = cache, deadline, device
        self.dim, self.n_sentences = cache.dim, cache.n_sentences
        self.meta = getattr(cache, "meta", {})
        self.occurrences = self.sentences = 0
        self.stopped_at: float | None = None

    def batch(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if time.perf_counter() >= self.deadline:
            if self.stopped_at is None:
                if self.device.type == "cuda":
                    torch.cuda.synchronize(self.device)
                self.stopped_at = time.perf_counter()
            return np.zeros(0, np.int64), np.zeros((0, self.dim), np.float32)
        ids, ctx = self.cache.batch(idx)
        self.occurrences += len(ids)
        self.sentences += len(idx)
        return ids, ctx


def stage_x2static(w: dict[str, Any]) -> dict[str, Any]:
    from xlalign.static.teacher import TeacherCache
    from xlalign.static.x2static import X2StaticArgs, train_x2static

    sz: Sizes = w["sizes"]
    args = X2StaticArgs(
        epochs=sz.x2s_epochs, lr=1e-2, subsample_t=1e-4, seed=1, checkpoint_every_batches=0,
        checkpoint_minutes=None, device=str(w["device"]),
    )  # fmt: skip
    res: dict[str, Any] = {}
    with measured(w["device"], res):
        t0 = time.perf_counter()
        src = BudgetedSource(TeacherCache(w["work"] / "cache"), t0 + stage_budget(w), w["device"])
        train_x2static(src, w["vocab"], args, output_dir=w["work"] / "x2s", progress=False)
    if src.stopped_at is not None:
        res["seconds"] = src.stopped_at - t0
        res["stopped"] = "time budget"
    res["tokens"] = src.occurrences  # occurrences: the unit X2Static trains on
    res["examples"] = src.sentences
    res["flops_per_token"] = 3 * 2 * (1 + args.negatives) * src.dim
    res["note"] = "tokens = word occurrences; not an encoder stage"
    return res


def stage_aggregation(w: dict[str, Any]) -> dict[str, Any]:
    from xlalign.static.aggregation import aggregate_vectors, sampled_by_line

    sz: Sizes = w["sizes"]
    wanted = sampled_by_line(w["corpus"], w["vocab"], max_contexts=sz.max_contexts, seed=1)
    lines = sorted(wanted)
    res: dict[str, Any] = {"examples": len(lines), "load_seconds": load_seconds(w)}
    with measured(w["device"], res):
        aggregate_vectors(
            w["corpus"], w["vocab"], w["encoder"], layer=sz.layer,
            max_contexts=sz.max_contexts, seed=1, batch_tokens=sz.batch_tokens,
            device=w["device"], progress=False, language="xx", missing="zero",
        )  # fmt: skip
    res["tokens"] = count_tokens(w["tokenizer"], [w["sentences"][i] for i in lines], 200)
    res["flops_per_token"] = 2 * w["body_truncated"]
    res["note"] = f"sampled lines only, layers 1-{sz.layer}; encoder loading excluded"
    return res


def stage_pretrain(w: dict[str, Any]) -> dict[str, Any]:
    from xlalign.pretrain import text, trainer
    from xlalign.pretrain.heads import load_masked_lm
    from xlalign.pretrain.objectives import build_objective

    sz: Sizes = w["sizes"]
    dev: torch.device = w["device"]
    paras = [" ".join(s) for s in w["sentences"]]
    paragraphs = [" ".join(paras[i : i + 4]) for i in range(0, len(paras), 4)]
    train_corpus, _ = text.TextCorpus.build(
        {"xx": paragraphs}, w["tokenizer"], max_length=sz.pretrain_length,
        validation_paragraphs=1, seed=1,
    )  # fmt: skip
    model, _ = load_masked_lm(w["encoder"], seed=1)
    model.to(dev)
    settings = {"batch_size": sz.pretrain_batch}
    obj = build_objective(
        "mlm", settings, model=model, tokenizer=w["tokenizer"],
        files={"train_corpus": train_corpus}, seed=1, max_length=sz.pretrain_length,
    )  # fmt: skip
    params = trainer.PretrainParams(
        steps=sz.pretrain_steps, max_length=sz.pretrain_length, eval_every=10**9,
        log_every=10**9,
    )  # fmt: skip
    warm = 2 if sz.pretrain_steps > 4 else 1
    stamps: list[float] = []
    tokens: list[int] = []
    res: dict[str, Any] = {}
    deadline = [math.inf]

    def on_step(step: int) -> None:
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        stamps.append(time.perf_counter())
        if stamps[-1] >= deadline[0]:
            raise BudgetExceeded

    with measured(dev, res):
        deadline[0] = time.perf_counter() + stage_budget(w)
        with contextlib.suppress(BudgetExceeded):
            trainer.train(
                model, [trainer.Term(obj, 1.0, sz.pretrain_batch)], params=params, seed=1,
                work_dir=w["work"] / "pretrain", run_fingerprint={"rehearsal": 1},
                device=dev, precision="bf16" if dev.type == "cuda" else "fp32",
                progress=False, on_step=on_step, checkpoint_minutes=None,
            )  # fmt: skip
    # the steps after the warm-up, each counted at the median step time (the last step's
    # interval also holds the end of the run: selection, the final checkpoint)
    per = np.diff(stamps[warm - 1 :]) if len(stamps) > warm else np.array([res["seconds"]])
    steps = len(per)
    res["steps"] = len(stamps)
    res["seconds_per_step"] = float(np.median(per))
    res["seconds_per_step_mean"] = float(np.mean(per))
    if len(stamps) < sz.pretrain_steps:
        res["stopped"] = "time budget"
    res["seconds"] = res["seconds_per_step"] * steps
    for step in range(len(stamps) - steps + 1, len(stamps) + 1):  # the timed steps' batches
        rng = np.random.default_rng([1, step - 1, 0, 0])  # the trainer's draw of that step
        tokens.append(int(obj.sample(rng, sz.pretrain_batch)["attention_mask"].sum()))
    res["tokens"] = int(np.median(tokens) * steps)
    res["examples"] = steps * sz.pretrain_batch
    res["flops_per_token"] = 3 * 2 * body_params(model)
    res["note"] = (
        f"MLM, {sz.pretrain_batch} x {sz.pretrain_length}; median step after {warm} warm-up"
    )
    return res


def stage_finetune(w: dict[str, Any]) -> dict[str, Any]:
    from transformers import TrainerCallback

    from xlalign.evaluation.tasks.base import TaskParams
    from xlalign.evaluation.tasks.data import TaggedSentence
    from xlalign.evaluation.tasks.finetune import finetune
    from xlalign.evaluation.tasks.tagging import TaggingTask

    sz: Sizes = w["sizes"]
    dev: torch.device = w["device"]
    tags = ["NOUN", "VERB", "ADJ", "ADP", "DET", "PRON", "ADV", "PUNCT"]
    sents = synthetic_sentences(w["words"], sz.finetune_examples + 64, seed=3, lo=6, hi=30)
    recs = [
        TaggedSentence(f"s{i}", s, [tags[len(t) % len(tags)] for t in s])
        for i, s in enumerate(sents)
    ]
    train, dev_set = recs[: sz.finetune_examples], recs[sz.finetune_examples :]
    stamps: list[float] = []

    class Clock(TrainerCallback):  # type: ignore[misc]
        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if dev.type == "cuda":
                torch.cuda.synchronize(dev)
            stamps.append(time.perf_counter())
            if stamps[-1] >= deadline:
                control.should_training_stop = True

    params = TaskParams(
        learning_rate=5e-4, epochs=1, batch_size=sz.finetune_batch,
        max_length=sz.finetune_length, eval_every=10**9, selection="final",
        extra={"group_by_length": True, "eval_batch_size": sz.finetune_batch},
    )  # fmt: skip
    res: dict[str, Any] = {}
    with measured(dev, res):
        deadline = time.perf_counter() + stage_budget(w)
        finetune(
            TaggingTask("pos"), encoder=w["encoder"], train=train, dev=dev_set, tests={},
            params=params, seed=1, output_dir=w["work"] / "ft", work_dir=w["work"] / "ft-work",
            device=str(dev), precision="auto" if dev.type == "cuda" else "fp32",
            keep_model=False, progress=False, callbacks=[Clock()], checkpoint_minutes=None,
        )  # fmt: skip
    n_steps = len(stamps)
    warm = 2 if n_steps > 4 else 0
    timed = stamps[-1] - stamps[warm - 1] if warm else res["seconds"]
    steps = n_steps - warm
    full_steps = math.ceil(sz.finetune_examples / sz.finetune_batch)
    if n_steps < full_steps:
        res["stopped"] = "time budget"
    mean_tokens = count_tokens(w["tokenizer"], [r.tokens for r in train], sz.finetune_length)
    mean_tokens /= len(train)
    res["steps"] = n_steps
    res["seconds"] = timed
    res["examples"] = steps * sz.finetune_batch
    res["tokens"] = int(res["examples"] * mean_tokens)
    res["flops_per_token"] = 3 * 2 * w["body_full"]
    res["note"] = f"POS, batch {sz.finetune_batch}" + (
        f"; steps after {warm} warm-up" if warm else "; the whole call"
    )
    return res


def stage_retrieval(w: dict[str, Any]) -> dict[str, Any]:
    from transformers import AutoModel

    from xlalign.evaluation.tasks.data import RetrievalPair
    from xlalign.evaluation.tasks.retrieval import evaluate_retrieval

    sz: Sizes = w["sizes"]
    dev: torch.device = w["device"]
    src = synthetic_sentences(w["words"], sz.retrieval_pairs, seed=4)
    tgt = synthetic_sentences(w["words"], sz.retrieval_pairs, seed=5)
    pairs = [
        RetrievalPair(f"p{i}", " ".join(a), " ".join(b))
        for i, (a, b) in enumerate(zip(src, tgt, strict=True))
    ]
    model = AutoModel.from_pretrained(w["encoder"]).to(dev).eval()
    depth = int(model.config.num_hidden_layers)
    res: dict[str, Any] = {"examples": 2 * len(pairs)}
    with measured(dev, res, autocast=True):
        evaluate_retrieval(
            pairs, model, w["tokenizer"], layer=min(8, depth), batch_size=sz.retrieval_batch,
            max_length=512, device=dev,
        )  # fmt: skip
    res["tokens"] = count_tokens(w["tokenizer"], src + tgt, 512)
    res["flops_per_token"] = 2 * body_params(model)
    res["note"] = "both sides, all layers, similarity search included"
    return res


RUNNERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "teacher": stage_teacher,
    "x2static": stage_x2static,
    "aggregation": stage_aggregation,
    "pretrain": stage_pretrain,
    "finetune": stage_finetune,
    "retrieval": stage_retrieval,
}


# --------------------------------------------------------------------------- report


def finish(stage: dict[str, Any], peak: float | None) -> dict[str, Any]:
    """Rates and MFU from a stage's raw measures."""
    s = max(stage["seconds"] - stage.get("load_seconds", 0.0), 1e-9)
    stage["tokens_per_s"] = stage["tokens"] / s
    stage["examples_per_s"] = stage["examples"] / s
    stage["achieved_tflops"] = stage["flops_per_token"] * stage["tokens_per_s"] / 1e12
    stage["mfu"] = mfu(stage["flops_per_token"], stage["tokens_per_s"], peak)
    return stage


def markdown(report: dict[str, Any]) -> str:
    """The report's stages as a Markdown table."""

    def num(x: float | None, fmt: str) -> str:
        return "n/a" if x is None else format(x, fmt)

    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.3g} %"

    rows = [
        f"Device: {report['device_name']} ({report['device']}), peak "
        f"{num(report['peak_tflops'], '.0f')} TFLOP/s bf16 dense; encoder {report['encoder']}"
        f" ({report['body_params'] / 1e6:.1f}M parameters without embeddings); total "
        f"{report['total_seconds']:.1f} s",
        "",
        "| stage | seconds | tokens/s | examples/s | peak GPU MiB | TFLOP/s | MFU | note |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, st in report["stages"].items():
        if "error" in st:
            rows.append(f"| {name} | | | | | | | error: {st['error']} |")
            continue
        unit = " (occurrences)" if name == "x2static" else ""
        rows.append(
            f"| {name} | {st['seconds']:.2f} | {st['tokens_per_s']:,.0f}{unit} | "
            f"{st['examples_per_s']:,.1f} | {num(st['peak_gpu_mib'], ',.0f')} | "
            f"{st['achieved_tflops']:.3g} | "
            f"{pct(st['mfu'])} | "
            f"{st['note']}{'; ' + st['stopped'] if st.get('stopped') else ''} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/out/gpu_rehearsal.json")
    ap.add_argument("--encoder", type=Path, help="a real checkpoint (default: built offline)")
    ap.add_argument(
        "--arch", choices=sorted(ARCHS), help="offline encoder's shape (xlmr-base; smoke: tiny)"
    )
    ap.add_argument("--peak-tflops", type=float, help="the device's peak bf16 dense TFLOP/s")
    ap.add_argument("--cpu-smoke", action="store_true", help="tiny sizes (automatic without CUDA)")
    ap.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES))
    ap.add_argument("--stage-seconds", type=float, help="time budget of a looping stage")
    ap.add_argument(
        "--total-seconds", type=float, default=420.0,
        help="the looping stages share what is left of this (default 420: 7 minutes)",
    )  # fmt: skip
    ap.add_argument("--sentences", type=int, help="corpus sentences (default 45,000)")
    ap.add_argument("--device", help="torch device (default: CUDA when available)")
    ap.add_argument("--workdir", type=Path)
    args = ap.parse_args(argv)

    from xlalign.core.device import resolve_device

    dev = resolve_device(args.device)
    smoke = args.cpu_smoke or dev.type != "cuda"
    sizes = Sizes.smoke() if smoke else Sizes()
    arch = args.arch or ("tiny" if smoke else "xlmr-base")
    if args.stage_seconds is not None:
        sizes.stage_seconds = args.stage_seconds
    if args.sentences is not None:
        sizes.sentences = args.sentences
    peak, dev_name = peak_tflops(dev, args.peak_tflops)
    quiet()
    torch.manual_seed(0)
    t_start = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="gpu-rehearsal-", dir=args.workdir))
    try:
        from transformers import AutoTokenizer

        from xlalign.corpus.vocab import build_vocab

        n_types = max(int(sizes.vocab * 1.6), 1000)  # a tail beyond the whole-word pieces
        words = synthetic_words(n_types, seed=1)
        if args.encoder is not None:
            encoder = args.encoder
        else:
            encoder = build_encoder(work / "encoder", arch, sizes.vocab, words)
        tokenizer = AutoTokenizer.from_pretrained(str(encoder), local_files_only=True)
        from transformers import AutoModel

        from xlalign.encoders.contextual import load_truncated_encoder

        full = AutoModel.from_pretrained(str(encoder), local_files_only=True)
        depth = int(full.config.num_hidden_layers)
        sizes.layer = min(sizes.layer, depth)
        _, truncated = load_truncated_encoder(encoder, sizes.layer, device="cpu")
        body_full, body_truncated = body_params(full), body_params(truncated)
        del full, truncated
        sentences = synthetic_sentences(words, sizes.sentences, seed=2)
        corpus = work / "corpus.txt"
        corpus.write_text("\n".join(" ".join(s) for s in sentences) + "\n", encoding="utf-8")
        vocab = build_vocab(corpus, min_count=3, max_size=200_000, language="xx")
        world = {
            "sizes": sizes, "device": dev, "work": work, "encoder": encoder,
            "tokenizer": tokenizer, "words": words, "sentences": sentences, "corpus": corpus,
            "vocab": vocab, "corpus_tokens": count_tokens(tokenizer, sentences, 200),
            "body_full": body_full, "body_truncated": body_truncated,
            "deadline": t_start + args.total_seconds,
        }  # fmt: skip
        setup_s = time.perf_counter() - t_start
        stages: dict[str, Any] = {}
        todo = [name for name in STAGES if name in args.stages]
        for k, name in enumerate(todo):
            world["stages_left"] = sum(1 for n in todo[k:] if n in LOOPING)
            try:
                stages[name] = finish(RUNNERS[name](world), peak)
            except Exception as exc:  # one stage's failure is reported, the others run
                stages[name] = {"error": f"{type(exc).__name__}: {exc}"}
            print(f"[rehearsal] {name}: {json.dumps(stages[name])}", file=sys.stderr, flush=True)
        report: dict[str, Any] = {
            "device": str(dev),
            "device_name": dev_name,
            "peak_tflops": peak,
            "smoke": smoke,
            "encoder": str(args.encoder) if args.encoder else f"offline random {arch}",
            "vocab_size": len(tokenizer),
            "word_vocab": len(vocab),
            "body_params": body_full,
            "body_params_truncated": body_truncated,
            "torch": torch.__version__,
            "sizes": dataclasses.asdict(sizes),
            "setup_seconds": setup_s,
            "stages": stages,
            "total_seconds": time.perf_counter() - t_start,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(markdown(report))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_name(args.out.name + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    tmp.replace(args.out)
    return report


if __name__ == "__main__":
    main()
