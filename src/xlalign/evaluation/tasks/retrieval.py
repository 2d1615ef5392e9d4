"""Sentence retrieval without fine-tuning: Tatoeba-style accuracy@1 and BUCC bitext mining.

XTREME evaluates an encoder's cross-lingual sentence representations with no training at
all (``third_party/run_retrieval.py`` and ``utils_retrieve.py`` of google-research/xtreme,
2020): every sentence is encoded, its hidden states at one layer are mean-pooled over the
attention mask (the special tokens ``[CLS]``/``<s>`` and ``[SEP]``/``</s>`` included), and
sentences are compared by cosine similarity.

* :func:`pooled_hidden_states`: one forward pass per batch gives the pooled vector of
  every sentence at *every* layer, so the layer sweep costs no more than one layer.
* :func:`retrieval_accuracy`, :func:`layer_sweep`, :func:`evaluate_retrieval`:
  accuracy@1 in both directions, at a configured layer and at every layer.
* :func:`xtreme_layer_to_hf`: XTREME's layer numbers as Hugging Face ``hidden_states``
  indices.
* :func:`mteb_nearest`, :func:`mteb_bitext_scores`, :func:`evaluate_mteb`: bitext mining
  as MTEB scores it (``BitextMiningEvaluator`` of embeddings-benchmark/mteb): the model's
  own sentence embedding (its prompt, its pooling of the last layer), each non-English
  sentence a query over all English ones (xx->en), cosine, top-1, and accuracy with
  scikit-learn's *weighted* precision, recall and F1 over the retrieved indices (F1 is
  MTEB's main score).
* :func:`mine_candidates`, :func:`bucc_candidates`, :func:`bucc_optimize_threshold`,
  :func:`bucc_prf`, :func:`bucc_evaluate`: BUCC 2018 bitext mining as XTREME scores it.

Layers are always named by their Hugging Face ``hidden_states`` index: 0 is the embedding
output, ``depth`` the last transformer layer.

Sharing (:class:`SharedSides`): the languages of a parallel set often share their English
side (UDHR's articles); a job that evaluates several languages or sets encodes each such
side once and hands its pooled states to every pair set that has it: what encoding it again
would give (the same sentences, batches and settings).

Resuming (:class:`BatchCheckpoint`): given a checkpoint, :func:`pooled_hidden_states`
saves the pooled rows of the batches done so far every few minutes and, on SIGTERM
(:mod:`xlalign.core.interrupt`), at the end of the batch in progress before raising
:class:`~xlalign.core.interrupt.Preempted`; a re-run with the same sentences and settings
skips those batches (a forward pass per batch in eval mode: the rows are what they were).

Directions: "xx->en" means each non-English sentence is a query and retrieves among all
English sentences; "en->xx" the reverse. XTREME's Tatoeba number is "en->xx" (its
``similarity_search`` indexes the non-English side and queries it with the English
sentences); both are reported. The gold of query ``i`` is the sentence with the same index
(XTREME, and LASER's xSIM by default): a sentence that occurs twice in a set therefore
counts as an error when the other copy is retrieved. The accuracy that forgives that (a
retrieved sentence string-identical to the gold one counts as correct, as LASER's xSIM does
when given the texts) is reported beside it as ``accuracy_text``.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from xlalign.core import interrupt
from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import local_model_dir
from xlalign.core.memory import rows_per_block
from xlalign.evaluation.tasks.data import RetrievalPair

log = logging.getLogger(__name__)

POOLINGS = ("mean", "cls")
DIRECTIONS = ("xx->en", "en->xx")
MARGINS = ("ratio", "distance", "absolute")

#: XTREME's Tatoeba layer (``run_tatoeba.sh``: ``--specific_layer 7 --num_layers 12`` for
#: mBERT and XLM; for XLM-R it sets 13 of the last 24 states).
XTREME_TATOEBA_LAYER = 7
XTREME_NUM_LAYERS = 12


# --------------------------------------------------------------------------- layers


def xtreme_layer_to_hf(layer: int, depth: int, *, num_layers: int = XTREME_NUM_LAYERS) -> int:
    """The Hugging Face ``hidden_states`` index of XTREME's retrieval layer ``layer``.

    XTREME's retrieval code keeps ``hidden_states[-num_layers:]`` (``num_layers`` is its
    ``--num_layers``, 12 unless the script says otherwise) and reads element ``layer`` of
    that slice. For a 12-layer model (13 states) the slice drops the embeddings, so its
    "layer 7" is ``hidden_states[8]``; for a 24-layer model with ``num_layers=12`` it is
    ``hidden_states[20]``. ``run_tatoeba.sh`` runs XLM-R with ``num_layers=24`` and layer
    13, which is ``hidden_states[14]`` of XLM-R large (xtreme PR #104 reports that the
    paper's XLM-R large numbers are only reproduced with layer 10, ``hidden_states[11]``);
    for xlm-roberta-base (12 layers) the same settings slice all 13 states, embeddings
    included, and layer 13 does not exist (with its 1024-dimensional buffers the script
    fails there, xtreme#97). Raises :class:`ConfigError` where XTREME's index would not
    exist.
    """
    if depth < 1:
        raise ConfigError(f"an encoder depth must be at least 1, not {depth}")
    if num_layers < 1:
        raise ConfigError(f"num_layers must be at least 1, not {num_layers}")
    kept = list(range(depth + 1))[-num_layers:]
    if not 0 <= layer < len(kept):
        raise ConfigError(
            f"XTREME layer {layer} does not exist for a {depth}-layer encoder: "
            f"hidden_states[-{num_layers}:] keeps {len(kept)} states (indices 0..{len(kept) - 1})"
        )
    return kept[layer]


# --------------------------------------------------------------------------- pooling


@dataclass
class PoolingStats:
    """What :func:`pooled_hidden_states` did to the sentences of one call."""

    sentences: int = 0
    #: sentences longer than ``max_length`` subwords (special tokens included): cut
    truncated: int = 0
    #: sentences with no subword besides the special tokens (NaN rows when the pooling
    #: has nothing to average)
    empty: int = 0
    #: the longest sentence in subwords, special tokens included, before cutting
    longest: int = 0
    #: the length sentences were cut to (``max_length``, lowered to what the model's
    #: position embeddings allow)
    max_length: int = 0
    #: forward passes run (one per batch)
    batches: int = 0
    #: per sentence (input order): whether it was cut / had no content subword
    truncated_mask: list[bool] = field(default_factory=list)
    empty_mask: list[bool] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        d = asdict(self)
        return {k: v for k, v in d.items() if not k.endswith("_mask")}


class BatchCheckpoint:
    """The pooled rows of the batches :func:`pooled_hidden_states` has done, in one ``.npz``
    file (written atomically, read without pickle) with the key of the call it belongs to;
    saved every ``every_s`` seconds and when SIGTERM asks the job to stop."""

    def __init__(self, path: Path, every_s: float = 300.0) -> None:
        self.path = Path(path)
        self.every_s = float(every_s)
        #: batches skipped by the last call that resumed from this file
        self.resumed_batches = 0

    def load(self, key: str) -> tuple[int, np.ndarray] | None:
        """(batches done, their rows ``[layers, rows, hidden]``) of the call with ``key``;
        None when there is no such file or it belongs to another call."""
        if not self.path.is_file():
            return None
        try:
            with np.load(self.path, allow_pickle=False) as data:
                saved = bytes(data["key"]).decode()
                batches, rows = int(data["batches"]), np.array(data["rows"])
        except (OSError, ValueError, KeyError) as exc:
            raise InputError(f"{self.path}: not a retrieval checkpoint ({exc})") from exc
        if saved != key:
            log.warning("%s: a checkpoint of other sentences or settings; ignored", self.path)
            return None
        return batches, rows

    def save(self, key: str, batches: int, rows: np.ndarray) -> None:
        from xlalign.core.io import atomic_path

        self.path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(self.path) as tmp, open(tmp, "wb") as fh:
            np.savez(
                fh,
                key=np.frombuffer(key.encode(), dtype=np.uint8),
                batches=np.int64(batches),
                rows=rows,
            )


class SharedSides:
    """Pooled states of the sentence lists a job encodes more than once (the English side
    shared by the languages of a parallel set), each kept from its first encoding until
    its last use.

    ``planned`` lists every side the job will encode, in any order, repeats included; a
    side planned once is never kept. The states hold for one model and one set of pooling
    settings: :meth:`pooled` refuses other settings."""

    def __init__(self, planned: Iterable[Sequence[str]]) -> None:
        self._uses = Counter(_side_key(side) for side in planned)
        self._kept: dict[str, tuple[np.ndarray, PoolingStats]] = {}
        self._settings: str | None = None
        #: sides handed out again instead of encoded
        self.reused = 0

    def pooled(
        self,
        texts: Sequence[str],
        settings: Mapping[str, Any],
        encode: Callable[[], tuple[np.ndarray, PoolingStats]],
    ) -> tuple[np.ndarray, PoolingStats]:
        """The pooled states and pooling stats of ``texts``: kept ones, else ``encode()``'s
        (kept while the side is planned again)."""
        text = json.dumps(dict(settings), sort_keys=True, default=str)
        if self._settings is None:
            self._settings = text
        elif text != self._settings:
            raise ConfigError(
                f"shared sides: pooling settings {text} differ from the job's {self._settings}"
            )
        key = _side_key(texts)
        kept = self._kept.get(key)
        if kept is not None:
            self.reused += 1
            states, stats = kept
        else:
            states, stats = encode()
        self._uses[key] -= 1
        if self._uses[key] > 0:
            self._kept[key] = (states, stats)
        else:
            self._kept.pop(key, None)
        return states, copy.deepcopy(stats)


def _side_key(texts: Sequence[str]) -> str:
    """A digest of a list of sentences (order and boundaries included)."""
    return hashlib.sha256(json.dumps(list(texts), ensure_ascii=False).encode()).hexdigest()


def _model_max_length(model: Any, tokenizer: Any) -> int | None:
    """The longest input the model's position embeddings take, where it can be told."""
    limits = []
    tok_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < 1_000_000:
        limits.append(tok_max)
    cfg = getattr(model, "config", None)
    pos = getattr(cfg, "max_position_embeddings", None)
    if isinstance(pos, int) and pos > 0:
        # RoBERTa-style models number positions from padding_idx + 1
        if "roberta" in str(getattr(cfg, "model_type", "")) or "camembert" in str(
            getattr(cfg, "model_type", "")
        ):
            pos -= int(getattr(cfg, "pad_token_id", 1) or 0) + 1
        limits.append(pos)
    return min(limits) if limits else None


def _depth(model: Any) -> int:
    """The number of transformer layers (``hidden_states`` has one more entry)."""
    depth = getattr(getattr(model, "config", None), "num_hidden_layers", None)
    if not isinstance(depth, int) or depth < 1:
        raise ConfigError(f"{type(model).__name__}: cannot tell its number of layers")
    return depth


def _load(encoder: Any, device: Any) -> tuple[Any, Any, Any]:
    """(model, tokenizer, torch device) from a directory or a ``(model, tokenizer)`` pair."""
    import torch

    from xlalign.core.device import resolve_device

    if isinstance(encoder, tuple | list):
        if len(encoder) != 2:
            raise ConfigError("encoder: expected a directory or a (model, tokenizer) pair")
        model, tokenizer = encoder
        if device is not None:
            dev = resolve_device(device)
        else:
            first = next(iter(model.parameters()), None)
            dev = first.device if first is not None else torch.device("cpu")
        if any(p.device != dev for p in model.parameters()):
            model.to(dev)
        return model, tokenizer, dev
    from transformers import AutoModel, AutoTokenizer

    where = Path(local_model_dir(encoder, what="encoder"))
    dev = resolve_device(device)
    try:
        tokenizer = AutoTokenizer.from_pretrained(where, local_files_only=True)
        model = AutoModel.from_pretrained(where, local_files_only=True, dtype=torch.float32)
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError...
        raise InputError(f"{where}: cannot load a Hugging Face encoder offline ({exc})") from exc
    model.to(dev)
    model.eval()
    return model, tokenizer, dev


def pooled_hidden_states(
    encoder: Any,
    sentences: Sequence[str],
    *,
    pooling: str = "mean",
    include_special: bool = True,
    batch_size: int = 32,
    max_length: int = 512,
    device: Any = None,
    layers: Sequence[int] | None = None,
    stats: PoolingStats | None = None,
    checkpoint: BatchCheckpoint | None = None,
) -> np.ndarray:
    """Pooled sentence vectors at every layer, float32 ``[len(layers), n, hidden]``
    (``layers`` default: all ``depth + 1`` ``hidden_states``, 0 = embeddings).

    ``encoder`` is an encoder directory (loaded offline, float32) or a ``(model,
    tokenizer)`` pair. Each batch runs *one* forward pass with ``output_hidden_states``;
    every requested layer is pooled from it. ``pooling``: "mean" averages the states over
    the attention mask (``include_special``: with the special tokens, as XTREME does, or
    without them, XTREME's ``--pool_skip_special_token``); "cls" takes the first token's
    state (``include_special`` does not apply). Sentences are sorted by length to batch
    them with little padding (longest first, so memory runs out at once if it does) and
    returned in input order. A sentence longer than ``max_length`` subwords (special
    tokens included; lowered to what the model's position embeddings allow) is cut by
    the tokenizer and counted in ``stats``; a sentence with no subword besides the special
    tokens is counted as empty, and its row is NaN where the pooling has nothing to
    average. ``device``: a torch device (default: the pair's model's, or
    :func:`xlalign.core.device.resolve_device`). ``checkpoint``: resume from and save to
    it (see the module docstring).
    """
    import torch

    if pooling not in POOLINGS:
        raise ConfigError(f"pooling must be one of {', '.join(POOLINGS)}, not {pooling!r}")
    if batch_size < 1 or max_length < 3:
        raise ConfigError(f"batch_size {batch_size} / max_length {max_length}: too small")
    model, tokenizer, dev = _load(encoder, device)
    depth = _depth(model)
    wanted = list(range(depth + 1)) if layers is None else [int(x) for x in layers]
    bad = [x for x in wanted if not 0 <= x <= depth]
    if bad or not wanted:
        raise ConfigError(f"layers {bad or wanted} outside 0..{depth} (a {depth}-layer encoder)")
    st = stats if stats is not None else PoolingStats()
    limit = _model_max_length(model, tokenizer)
    eff_max = min(max_length, limit) if limit else max_length
    if eff_max < max_length:
        log.info("max_length %d lowered to %d (the model's limit)", max_length, eff_max)
    st.max_length = eff_max
    n = len(sentences)
    hidden = int(getattr(model.config, "hidden_size", 0) or 0)
    if n == 0:
        return np.zeros((len(wanted), 0, hidden), dtype=np.float32)

    texts = list(sentences)
    enc = tokenizer(
        texts,
        add_special_tokens=True,
        truncation=False,
        return_special_tokens_mask=True,
        return_attention_mask=True,
        verbose=False,
    )
    features = [{k: enc[k][i] for k in enc} for i in range(n)]
    lengths = [len(f["input_ids"]) for f in features]
    content = [len(f["special_tokens_mask"]) - sum(f["special_tokens_mask"]) for f in features]
    long_ids = [i for i in range(n) if lengths[i] > eff_max]
    if long_ids:
        cut = tokenizer(
            [texts[i] for i in long_ids],
            add_special_tokens=True,
            truncation=True,
            max_length=eff_max,
            return_special_tokens_mask=True,
            return_attention_mask=True,
        )
        for k, i in enumerate(long_ids):
            features[i] = {key: cut[key][k] for key in cut}
    truncated = [lengths[i] > eff_max for i in range(n)]
    empty = [c == 0 for c in content]
    st.sentences += n
    st.truncated += sum(truncated)
    st.empty += sum(empty)
    st.longest = max(st.longest, max(lengths))
    st.truncated_mask.extend(truncated)
    st.empty_mask.extend(empty)
    if any(truncated):
        log.info(
            "%d of %d sentence(s) longer than %d subwords were cut", sum(truncated), n, eff_max
        )

    order = sorted(range(n), key=lambda i: -len(features[i]["input_ids"]))
    out: np.ndarray | None = None
    model_inputs = _forward_keys(model)
    starts = list(range(0, n, batch_size))
    done = 0
    key = ""
    if checkpoint is not None:
        digest = hashlib.sha256("\n".join(texts).encode()).hexdigest()
        settings = [n, wanted, pooling, include_special, batch_size, eff_max, hidden, digest]
        key = json.dumps(settings)
        saved = checkpoint.load(key)
        if saved is not None:
            done, rows = saved
            out = np.empty((len(wanted), n, rows.shape[-1]), dtype=np.float32)
            out[:, order[: rows.shape[1]], :] = rows
            st.batches += done
            log.info("%s: resuming after %d of %d batches", checkpoint.path, done, len(starts))
        checkpoint.resumed_batches = done
    last_save = time.monotonic()

    def rows_done(k: int) -> np.ndarray:
        assert out is not None
        return out[:, order[: min(n, k * batch_size)], :]

    # SIGTERM: a request polled after each batch when there is a checkpoint to write
    stoppable = interrupt.checkpointable() if checkpoint is not None else contextlib.nullcontext()
    with torch.inference_mode(), stoppable:
        for b in range(done, len(starts)):
            s = starts[b]
            idx = order[s : s + batch_size]
            batch = tokenizer.pad([features[i] for i in idx], padding=True, return_tensors="pt")
            special = batch.pop("special_tokens_mask")
            inputs = {k: v.to(dev) for k, v in batch.items() if k in model_inputs}
            outputs = model(**inputs, output_hidden_states=True)
            st.batches += 1
            states = outputs.hidden_states
            if states is None or len(states) != depth + 1:
                got = None if states is None else len(states)
                raise ConfigError(
                    f"{type(model).__name__}: expected {depth + 1} hidden_states, got {got}"
                )
            if pooling == "mean":
                mask = batch["attention_mask"].to(dev)
                if not include_special:
                    mask = mask * (1 - special.to(dev))
                m = mask.float()[:, :, None]  # [B, T, 1]
                denom = m.sum(dim=1)  # [B, 1]; 0 for an empty sentence: NaN rows
            for row, x in enumerate(wanted):  # layer by layer: no [L, B, T, H] copy
                h = states[x].float()
                pooled = h[:, 0, :] if pooling == "cls" else (h * m).sum(dim=1) / denom
                if out is None:
                    out = np.empty((len(wanted), n, pooled.shape[-1]), dtype=np.float32)
                out[row, idx, :] = pooled.cpu().numpy()
            if checkpoint is not None and b + 1 < len(starts):
                if interrupt.requested() is not None:
                    checkpoint.save(key, b + 1, rows_done(b + 1))
                    interrupt.raise_if_requested(f"{checkpoint.path}: {b + 1} batches saved")
                if time.monotonic() - last_save >= checkpoint.every_s:
                    checkpoint.save(key, b + 1, rows_done(b + 1))
                    last_save = time.monotonic()
    assert out is not None
    return out


def _forward_keys(model: Any) -> set[str]:
    """The tokenizer outputs the model's forward accepts."""
    import inspect

    params = inspect.signature(model.forward).parameters
    keys = {"input_ids", "attention_mask", "token_type_ids", "position_ids"}
    return {k for k in keys if k in params} or {"input_ids", "attention_mask"}


# --------------------------------------------------------------------------- accuracy


def _normalize(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows kept), in a new float64 array: divided in
    place, so that no second ``n x dim`` float64 copy is made (BUCC: 400k x 768 a side)."""
    x = np.array(x, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    x /= np.where(norms > 0, norms, 1.0)
    return x


#: Bytes per query row of :func:`_nearest`'s block, per index row: its float64 cosines.
NEAREST_BYTES_PER_CELL = 8
#: Bytes per query row of :func:`_topk`'s block, per index row: the float64 cosines
#: (negated in place) and the int64 order of ``argpartition``.
TOPK_BYTES_PER_CELL = 16


def _nearest(queries: np.ndarray, index: np.ndarray, budget_mb: float | None = None) -> np.ndarray:
    """For each (unit) query row, the index row of highest cosine (ties: the lowest).

    The queries go in blocks of rows whose ``rows x len(index)`` cosines fit
    ``budget_mb`` (:func:`xlalign.core.memory.rows_per_block`): never the whole ``n x m``
    matrix; the block changes the memory, not the answer."""
    best = np.empty(len(queries), dtype=np.int64)
    block = rows_per_block(
        NEAREST_BYTES_PER_CELL * max(len(index), 1), budget_mb, at_most=max(len(queries), 1)
    )
    for s in range(0, len(queries), block):
        best[s : s + block] = np.argmax(queries[s : s + block] @ index.T, axis=1)
    return best


def retrieval_accuracy(
    src: np.ndarray,
    tgt: np.ndarray,
    *,
    src_texts: Sequence[str] | None = None,
    tgt_texts: Sequence[str] | None = None,
    budget_mb: float | None = None,
) -> dict[str, Any]:
    """Accuracy@1 (0-100) by cosine similarity, in both directions; the gold of row ``i``
    is row ``i`` of the other side. The cosines are computed in blocks of query rows
    within ``budget_mb`` (``memory.block_mb``; default
    :data:`xlalign.core.memory.DEFAULT_BLOCK_MB`), never as one ``n x n`` matrix.

    "xx->en": each row of ``src`` (the non-English sentences) retrieves among all rows of
    ``tgt`` (English); "en->xx": each row of ``tgt`` among all of ``src``. Returns
    ``accuracy`` per direction, ``n``, the predicted row per query (``predictions``) and,
    given the texts, ``accuracy_text`` (a retrieved sentence string-identical to the gold
    one counts as correct). Ties go to the lowest index.
    """
    if src.ndim != 2 or src.shape != tgt.shape:
        raise InputError(
            f"retrieval: source {src.shape} and target {tgt.shape} must be [n, dim] alike"
        )
    if not len(src):
        raise InputError("retrieval: no sentence pairs to evaluate")
    if not (np.isfinite(src).all() and np.isfinite(tgt).all()):
        raise InputError("retrieval: NaN or infinite vectors (empty sentences must be dropped)")
    s, t = _normalize(src), _normalize(tgt)
    n = len(s)
    gold = np.arange(n)
    pred = {"xx->en": _nearest(s, t, budget_mb), "en->xx": _nearest(t, s, budget_mb)}
    out: dict[str, Any] = {
        "accuracy": {d: 100.0 * float(np.mean(pred[d] == gold)) for d in DIRECTIONS},
        "n": n,
        "predictions": {d: pred[d].tolist() for d in DIRECTIONS},
    }
    if src_texts is not None and tgt_texts is not None:
        if len(src_texts) != n or len(tgt_texts) != n:
            raise InputError(f"retrieval: {n} vectors but {len(src_texts)}/{len(tgt_texts)} texts")
        hits = {
            "xx->en": [tgt_texts[p] == tgt_texts[i] for i, p in enumerate(pred["xx->en"])],
            "en->xx": [src_texts[p] == src_texts[i] for i, p in enumerate(pred["en->xx"])],
        }
        out["accuracy_text"] = {d: 100.0 * float(np.mean(hits[d])) for d in DIRECTIONS}
    return out


def layer_sweep(
    src_states: np.ndarray, tgt_states: np.ndarray, *, budget_mb: float | None = None
) -> dict[str, list[float]]:
    """Accuracy@1 per direction at every layer of ``[layers, n, hidden]`` pooled states
    (from one :func:`pooled_hidden_states` pass per side): ``{direction: [acc per layer]}``.
    One layer's cosines at a time, in blocks of ``budget_mb``."""
    if src_states.ndim != 3 or src_states.shape != tgt_states.shape:
        raise InputError(
            f"layer sweep: states {src_states.shape} and {tgt_states.shape} must be "
            "[layers, n, hidden] alike"
        )
    sweep: dict[str, list[float]] = {d: [] for d in DIRECTIONS}
    for layer in range(src_states.shape[0]):
        acc = retrieval_accuracy(src_states[layer], tgt_states[layer], budget_mb=budget_mb)[
            "accuracy"
        ]
        for d in DIRECTIONS:
            sweep[d].append(acc[d])
    return sweep


def _duplicates(texts: Sequence[str]) -> int:
    """How many sentences share their exact text with another one of the same side."""
    counts = Counter(texts)
    return sum(c for c in counts.values() if c > 1)


def evaluate_retrieval(
    pairs: Sequence[RetrievalPair],
    model: Any,
    tokenizer: Any,
    *,
    layer: int,
    pooling: str = "mean",
    include_special: bool = True,
    batch_size: int = 32,
    max_length: int = 512,
    device: Any = None,
    checkpoints: Mapping[str, BatchCheckpoint] | None = None,
    shared: SharedSides | None = None,
    budget_mb: float | None = None,
) -> dict[str, Any]:
    """Retrieval of a set of sentence pairs at ``layer`` (a Hugging Face ``hidden_states``
    index) and at every layer, from one forward pass per batch and side.

    Returns ``accuracy`` (per direction, at ``layer``), ``accuracy_text`` (string-identical
    retrievals forgiven), ``sweep`` (per direction, a list indexed by ``hidden_states``
    index, 0 = embeddings), ``counts`` (pairs, evaluated, skipped_empty: pairs with a side
    that has no subword besides the special tokens, truncated_source / truncated_target,
    duplicate_source / duplicate_target: sentences whose exact text occurs more than once
    on their side), ``predictions`` (per evaluated query, in pair order: ``ids`` and the id
    of the retrieved pair per direction) and the conventions used (``layer_convention``,
    ``layer``, ``depth``, ``pooling``, ``include_special``, ``max_length``, ``similarity``,
    ``xtreme_direction``). ``checkpoints``: a :class:`BatchCheckpoint` per side
    (``"source"``, ``"target"``) to resume from and save to. ``shared``: the job's
    :class:`SharedSides` (a side encoded before for another pair set is not encoded again;
    the results, counts included, are those of encoding it here). ``budget_mb``
    (``memory.block_mb``): the working memory of each block of cosines.
    """
    if not pairs:
        raise InputError("retrieval: no sentence pairs")
    ids = [p.id for p in pairs]
    dup_ids = [i for i, c in Counter(ids).items() if c > 1]
    if dup_ids:
        raise InputError(f"retrieval: pair ids occur more than once: {dup_ids[:5]}")
    depth = _depth(model)
    if not 0 <= layer <= depth:
        raise ConfigError(
            f"retrieval layer {layer} is outside 0..{depth} (hidden_states index of a "
            f"{depth}-layer encoder; 0 = embeddings)"
        )
    src_texts = [p.source for p in pairs]
    tgt_texts = [p.target for p in pairs]
    kw: dict[str, Any] = {
        "pooling": pooling,
        "include_special": include_special,
        "batch_size": batch_size,
        "max_length": max_length,
        "device": device,
    }
    ck = checkpoints or {}

    def side(texts: list[str], name: str) -> tuple[np.ndarray, PoolingStats]:
        def encode() -> tuple[np.ndarray, PoolingStats]:
            st = PoolingStats()
            states = pooled_hidden_states(
                (model, tokenizer), texts, stats=st, checkpoint=ck.get(name), **kw
            )
            return states, st

        if shared is None:
            return encode()
        settings = {k: v for k, v in kw.items() if k != "device"}
        return shared.pooled(texts, settings, encode)

    src_states, src_stats = side(src_texts, "source")
    tgt_states, tgt_stats = side(tgt_texts, "target")
    keep = [
        i for i in range(len(pairs)) if not (src_stats.empty_mask[i] or tgt_stats.empty_mask[i])
    ]
    counts = {
        "pairs": len(pairs),
        "evaluated": len(keep),
        "skipped_empty": len(pairs) - len(keep),
        "truncated_source": src_stats.truncated,
        "truncated_target": tgt_stats.truncated,
        "duplicate_source": _duplicates(src_texts),
        "duplicate_target": _duplicates(tgt_texts),
        "forward_passes": src_stats.batches + tgt_stats.batches,
    }
    if not keep:
        raise InputError("retrieval: every pair has an empty side (no subword to pool)")
    src_states, tgt_states = src_states[:, keep], tgt_states[:, keep]
    kept_src = [src_texts[i] for i in keep]
    kept_tgt = [tgt_texts[i] for i in keep]
    at_layer = retrieval_accuracy(
        src_states[layer],
        tgt_states[layer],
        src_texts=kept_src,
        tgt_texts=kept_tgt,
        budget_mb=budget_mb,
    )
    kept_ids = [ids[i] for i in keep]
    preds = {d: [kept_ids[j] for j in at_layer["predictions"][d]] for d in DIRECTIONS}
    return {
        "accuracy": at_layer["accuracy"],
        "accuracy_text": at_layer["accuracy_text"],
        "sweep": layer_sweep(src_states, tgt_states, budget_mb=budget_mb),
        "counts": counts,
        "predictions": {"ids": kept_ids, **preds},
        "layer": layer,
        "depth": depth,
        "layer_convention": "hf_hidden_states",
        # every layer of the sweep from one pass of the whole model: no truncated forward
        "forward": "full (one pass gives every layer of the sweep)",
        "pooling": pooling,
        "include_special": include_special,
        "max_length": src_stats.max_length,
        "similarity": "cosine",
        "xtreme_direction": "en->xx",
    }


# --------------------------------------------------------------------------- MTEB

#: MTEB's main score of its bitext-mining tasks (Tatoeba's ``main_score``).
MTEB_MAIN_SCORE = "f1"
#: MTEB's ``_similarity_search`` chunks: queries and corpus rows compared at a time.
MTEB_QUERY_CHUNK = 100
MTEB_CORPUS_CHUNK = 500_000


def mteb_nearest(queries: np.ndarray, corpus: np.ndarray) -> np.ndarray:
    """The corpus row each query retrieves as MTEB's ``BitextMiningEvaluator`` does: float32
    cosine (rows L2-normalised as ``torch.nn.functional.normalize`` does), the top-1 of
    each corpus chunk by ``torch.topk(k=1, sorted=False)`` on the CPU, and across chunks the
    highest score, the earlier chunk on a tie (a stable sort).

    Ties within a chunk (duplicate sentences, hence identical vectors) go where
    ``torch.topk`` puts them: torch documents no order, and on the CPU it is not always
    the lowest index; calling it is what reproduces MTEB's choice.
    """
    import torch

    q = torch.nn.functional.normalize(
        torch.from_numpy(np.ascontiguousarray(queries, dtype=np.float32)), p=2, dim=1
    )
    c = torch.nn.functional.normalize(
        torch.from_numpy(np.ascontiguousarray(corpus, dtype=np.float32)), p=2, dim=1
    )
    best = np.empty(len(q), dtype=np.int64)
    with torch.inference_mode():
        for qs in range(0, len(q), MTEB_QUERY_CHUNK):
            top_val: torch.Tensor | None = None
            top_idx: torch.Tensor | None = None
            for cs in range(0, len(c), MTEB_CORPUS_CHUNK):
                sims = q[qs : qs + MTEB_QUERY_CHUNK] @ c[cs : cs + MTEB_CORPUS_CHUNK].T
                val, idx = torch.topk(sims, 1, dim=1, largest=True, sorted=False)
                val, idx = val[:, 0], idx[:, 0] + cs
                if top_val is None or top_idx is None:
                    top_val, top_idx = val, idx
                else:
                    better = val > top_val  # a tie keeps the earlier chunk
                    top_val = torch.where(better, val, top_val)
                    top_idx = torch.where(better, idx, top_idx)
            assert top_idx is not None
            best[qs : qs + MTEB_QUERY_CHUNK] = top_idx.numpy()
    return best


def mteb_bitext_scores(queries: np.ndarray, corpus: np.ndarray) -> dict[str, Any]:
    """MTEB's bitext-mining scores (0-100; MTEB stores fractions) of sentence vectors whose
    gold is the row with the same index: each row of ``queries`` (the non-English side,
    MTEB's ``sentence1``) retrieves one row of ``corpus`` (English, ``sentence2``) by
    :func:`mteb_nearest`.

    The labels are the gold rows, the predictions the retrieved rows, and the scores
    scikit-learn's ``accuracy_score`` and ``precision_score`` / ``recall_score`` /
    ``f1_score`` with ``average="weighted"`` and ``zero_division=0``, as MTEB calls them.
    Every gold row occurs once, so the weighted average is the mean over queries of each
    gold row's per-label score (rows only ever predicted weigh nothing): recall is the
    accuracy; a correct query whose row ``c`` queries retrieved has precision ``1 / c`` and
    F1 ``2 / (1 + c)``; a wrong one 0. Two queries that retrieve the same row (a duplicate
    English sentence) therefore cost F1 even for the one that is right.
    """
    if queries.ndim != 2 or queries.shape != corpus.shape:
        raise InputError(
            f"MTEB scoring: queries {queries.shape} and corpus {corpus.shape} must be "
            "[n, dim] alike (one English sentence per query)"
        )
    if not len(queries):
        raise InputError("MTEB scoring: no sentence pairs")
    if not (np.isfinite(queries).all() and np.isfinite(corpus).all()):
        raise InputError("MTEB scoring: NaN or infinite sentence vectors")
    pred = mteb_nearest(queries, corpus)
    n = len(pred)
    gold = np.arange(n)
    correct = pred == gold
    times = np.bincount(pred, minlength=n)  # how often each row was retrieved
    precision = np.where(correct, 1.0 / np.maximum(times[gold], 1), 0.0)
    f1 = np.where(correct, 2.0 * precision / (precision + 1.0), 0.0)
    return {
        "accuracy": 100.0 * float(correct.mean()),
        "precision": 100.0 * float(precision.mean()),
        "recall": 100.0 * float(correct.mean()),
        "f1": 100.0 * float(f1.mean()),
        "main_score": MTEB_MAIN_SCORE,
        "n": n,
        "predictions": pred.tolist(),
    }


def evaluate_mteb(
    pairs: Sequence[RetrievalPair],
    model: Any,
    tokenizer: Any,
    *,
    prompt: str = "",
    pooling: str = "mean",
    include_special: bool = True,
    batch_size: int = 32,
    max_length: int = 512,
    device: Any = None,
) -> dict[str, Any]:
    """Bitext mining of a set of pairs as MTEB scores it (:func:`mteb_bitext_scores`),
    with the model's own sentence embedding: ``prompt`` prefixed to every sentence of both
    sides (e5's ``"query: "``; MTEB's e5 runs prefix it for every task but retrieval) and
    the last layer's states pooled by ``pooling`` (``mean`` over the attention mask,
    special tokens included unless ``include_special`` is false: sentence-transformers'
    mean pooling; ``cls``: the first token's state). No pair is dropped: a query keeps
    its index, the gold of MTEB's Tatoeba. Returns the scores, the retrieved pair id per
    query (``predictions``), the encoding settings and counts (truncated sentences)."""
    if not pairs:
        raise InputError("MTEB scoring: no sentence pairs")
    depth = _depth(model)
    stats = {"source": PoolingStats(), "target": PoolingStats()}
    kw: dict[str, Any] = {
        "pooling": pooling,
        "include_special": include_special,
        "batch_size": batch_size,
        "max_length": max_length,
        "device": device,
        "layers": [depth],
    }
    src = pooled_hidden_states(
        (model, tokenizer), [prompt + p.source for p in pairs], stats=stats["source"], **kw
    )[0]
    tgt = pooled_hidden_states(
        (model, tokenizer), [prompt + p.target for p in pairs], stats=stats["target"], **kw
    )[0]
    scores = mteb_bitext_scores(src, tgt)
    ids = [p.id for p in pairs]
    scores["predictions"] = {"ids": ids, "xx->en": [ids[j] for j in scores["predictions"]]}
    return {
        **scores,
        "direction": "xx->en",
        "similarity": "cosine",
        "prompt": prompt,
        "pooling": pooling,
        "include_special": include_special,
        "layer": depth,
        "max_length": stats["source"].max_length,
        "counts": {
            "pairs": len(pairs),
            "truncated_source": stats["source"].truncated,
            "truncated_target": stats["target"].truncated,
            "duplicate_target": _duplicates([p.target for p in pairs]),
        },
    }


# --------------------------------------------------------------------------- BUCC


def _topk(queries: np.ndarray, index: np.ndarray, k: int, budget_mb: float | None = None):
    """The ``k`` highest cosines of each query row and their index rows, best first.

    The queries go in blocks of rows whose cosines with every index row (and their
    ``argpartition`` order, :data:`TOPK_BYTES_PER_CELL` bytes a cell) fit ``budget_mb``;
    each block keeps only its rows' ``k`` best, so the working memory is one block plus
    ``n x k``, never ``n x m`` (BUCC 2018: ~400k sentences a side)."""
    sims = np.empty((len(queries), k), dtype=np.float64)
    inds = np.empty((len(queries), k), dtype=np.int64)
    block = rows_per_block(
        TOPK_BYTES_PER_CELL * max(len(index), 1), budget_mb, at_most=max(len(queries), 1)
    )
    for s in range(0, len(queries), block):
        neg = queries[s : s + block] @ index.T
        np.negative(neg, out=neg)  # in place: -cosine, ascending = best first
        if k < neg.shape[1]:
            part = np.argpartition(neg, k - 1, axis=1)[:, :k]
        else:
            part = np.broadcast_to(np.arange(neg.shape[1]), neg.shape)
        top = np.take_along_axis(neg, part, axis=1)
        order = np.argsort(top, axis=1, kind="stable")
        inds[s : s + block] = np.take_along_axis(part, order, axis=1)
        sims[s : s + block] = -np.take_along_axis(top, order, axis=1)
        del neg, part  # freed before the next block is allocated
    return sims, inds


def mine_candidates(
    src: np.ndarray,
    tgt: np.ndarray,
    *,
    k: int = 4,
    margin: str = "ratio",
    budget_mb: float | None = None,
) -> list[tuple[int, int, float]]:
    """Candidate translation pairs ``(src row, tgt row, score)``, mined as XTREME's
    ``mine_bitext`` does with its defaults (LASER's margin-based mining, Artetxe & Schwenk
    2019; mode "mine", retrieval "max", cosine).

    Rows are L2-normalised. Each side's ``k`` nearest neighbours on the other side give
    the mean similarity of every sentence to its neighbourhood; a pair's score is its
    cosine ``a`` against ``b``, the mean of the two sentences' neighbourhood means:
    "ratio" ``a / b`` (XTREME's default), "distance" ``a - b``, "absolute" ``a`` (plain
    cosine). Each source sentence proposes its best-scoring target among its ``k``
    neighbours, and each target its best source; all proposals are sorted by score
    (stable, so ties keep the source proposals first) and accepted greedily when neither
    sentence is taken yet, and kept when their score is above 0.

    The neighbours are found in blocks of rows within ``budget_mb`` (``memory.block_mb``,
    :func:`_topk`): the memory is the two sides' vectors, ``n x k`` neighbours and one
    block, never the ``n x m`` similarities.
    """
    if margin not in MARGINS:
        raise ConfigError(f"margin must be one of {', '.join(MARGINS)}, not {margin!r}")
    if k < 1:
        raise ConfigError(f"k must be at least 1, not {k}")
    x, y = _normalize(src), _normalize(tgt)
    if not len(x) or not len(y):
        return []
    x2y_sim, x2y_ind = _topk(x, y, min(len(y), k), budget_mb)
    y2x_sim, y2x_ind = _topk(y, x, min(len(x), k), budget_mb)
    x_mean, y_mean = x2y_sim.mean(axis=1), y2x_sim.mean(axis=1)

    def scored(sim: np.ndarray, own: np.ndarray, other: np.ndarray, ind: np.ndarray):
        b = (own[:, None] + other[ind]) / 2
        if margin == "ratio":
            return sim / b
        if margin == "distance":
            return sim - b
        return sim

    fwd = scored(x2y_sim, x_mean, y_mean, x2y_ind)
    bwd = scored(y2x_sim, y_mean, x_mean, y2x_ind)
    fwd_best = x2y_ind[np.arange(len(x)), fwd.argmax(axis=1)]
    bwd_best = y2x_ind[np.arange(len(y)), bwd.argmax(axis=1)]
    pair_src = np.concatenate([np.arange(len(x)), bwd_best])
    pair_tgt = np.concatenate([fwd_best, np.arange(len(y))])
    scores = np.concatenate([fwd.max(axis=1), bwd.max(axis=1)])
    seen_src: set[int] = set()
    seen_tgt: set[int] = set()
    out: list[tuple[int, int, float]] = []
    for i in np.argsort(-scores, kind="stable"):
        s, t = int(pair_src[i]), int(pair_tgt[i])
        if s in seen_src or t in seen_tgt:
            continue
        seen_src.add(s)
        seen_tgt.add(t)
        if scores[i] > 0:
            out.append((s, t, float(scores[i])))
    return out


def _unique_rows(texts: Sequence[str]) -> tuple[list[str], list[int]]:
    """Unique texts (first-occurrence order) and, for each, the row of its last
    occurrence (XTREME's ``text_load_unify`` + ``unique_embeddings``)."""
    last: dict[str, int] = {}
    for i, t in enumerate(texts):
        last[t] = i
    uniq = list(dict.fromkeys(texts))
    return uniq, [last[t] for t in uniq]


def bucc_candidates(
    src: np.ndarray,
    tgt: np.ndarray,
    src_texts: Sequence[str],
    tgt_texts: Sequence[str],
    src_ids: Sequence[str],
    tgt_ids: Sequence[str],
    *,
    k: int = 4,
    margin: str = "ratio",
    budget_mb: float | None = None,
) -> dict[tuple[str, str], float]:
    """Scored candidate id pairs of one BUCC split, as XTREME builds them.

    The sentences are de-duplicated by text before mining (:func:`mine_candidates`), and
    the mined text pairs are mapped back to ids through the texts, where a text that
    occurs more than once on its side maps to no id at all (XTREME's ``read_sent2id``), so
    such sentences are never predicted; a pair of ids keeps its highest score.
    """
    for name, a, b in (
        ("source", src_texts, src_ids),
        ("target", tgt_texts, tgt_ids),
    ):
        if len(a) != len(b):
            raise InputError(f"BUCC {name}: {len(a)} sentences but {len(b)} ids")
    if len(src) != len(src_texts) or len(tgt) != len(tgt_texts):
        raise InputError("BUCC: one vector per sentence expected on each side")
    src_u, src_rows = _unique_rows([t.strip() for t in src_texts])
    tgt_u, tgt_rows = _unique_rows([t.strip() for t in tgt_texts])
    mined = mine_candidates(src[src_rows], tgt[tgt_rows], k=k, margin=margin, budget_mb=budget_mb)

    def sent2id(texts: Sequence[str], ids: Sequence[str]) -> dict[str, str]:
        counts = Counter(t.strip() for t in texts)
        out: dict[str, str] = {}
        for t, i in zip(texts, ids, strict=True):
            t = t.strip()
            if counts[t] == 1:
                out[t] = i
        return out

    s2i, t2i = sent2id(src_texts, src_ids), sent2id(tgt_texts, tgt_ids)
    cands: dict[tuple[str, str], float] = {}
    for s, t, score in mined:
        a, b = src_u[s], tgt_u[t]
        if a in s2i and b in t2i:
            key = (s2i[a], t2i[b])
            cands[key] = max(score, cands.get(key, score))
    return cands


def bucc_optimize_threshold(
    candidates: Mapping[tuple[str, str], float], gold: Iterable[tuple[str, str]]
) -> float:
    """The score threshold that maximises F1 against ``gold`` (XTREME's
    ``bucc_optimize``): walk the candidates from the highest score down; where the F1 of
    the candidates so far beats the best, the threshold becomes the midpoint between this
    score and the next one (this score itself at the last candidate, where XTREME's code
    would index past the end). 0 when no candidate is gold."""
    gold_set = set(gold)
    items = sorted(candidates.items(), key=lambda kv: -kv[1])
    threshold, best_f1 = 0.0, 0.0
    n_correct = 0
    for i, (pair, score) in enumerate(items):
        n_correct += pair in gold_set
        if n_correct == 0:
            continue
        p, r = n_correct / (i + 1), n_correct / len(gold_set)
        f1 = 2 * p * r / (p + r)
        if f1 > best_f1:
            best_f1 = f1
            threshold = (score + items[i + 1][1]) / 2 if i + 1 < len(items) else score
    return threshold


def bucc_prf(
    candidates: Mapping[tuple[str, str], float],
    gold: Iterable[tuple[str, str]],
    threshold: float,
) -> dict[str, Any]:
    """Precision, recall, F1 (0-100) of the candidates scoring at least ``threshold``
    against the gold pairs (XTREME's ``bucc_extract`` + ``bucc_f1``)."""
    gold_set = set(gold)
    extracted = {pair for pair, score in candidates.items() if score >= threshold}
    correct = len(extracted & gold_set)
    p = correct / len(extracted) if correct else 0.0
    r = correct / len(gold_set) if correct else 0.0
    f1 = 2 * p * r / (p + r) if correct else 0.0
    return {
        "precision": 100.0 * p,
        "recall": 100.0 * r,
        "f1": 100.0 * f1,
        "threshold": threshold,
        "extracted": len(extracted),
        "gold": len(gold_set),
        "correct": correct,
    }


def bucc_evaluate(
    dev: Mapping[str, Any],
    test: Mapping[str, Any],
    *,
    k: int = 4,
    margin: str = "ratio",
    budget_mb: float | None = None,
) -> dict[str, Any]:
    """BUCC F1 (XTREME protocol): the threshold that maximises F1 on the ``dev`` split's
    gold (BUCC's "sample" set, XTREME's dev) is applied to the ``test`` split (BUCC's
    "training" set, XTREME's test).

    Each split is a mapping with ``src`` and ``tgt`` (pooled vectors, one row per
    sentence), ``src_texts``, ``tgt_texts``, ``src_ids``, ``tgt_ids`` and ``gold`` (pairs
    of ids). XTREME's 2020 code pooled by mean over the mask at its layer 7 for BUCC (its
    ``--pool_type cls`` was not passed on until 2021; xtreme PR #104). Returns the test
    scores, the dev scores at the dev-optimal threshold (an oracle number) and the
    candidate counts. ``budget_mb``: the mining's block memory (:func:`mine_candidates`).
    """

    def cands(split: Mapping[str, Any]) -> dict[tuple[str, str], float]:
        return bucc_candidates(
            split["src"],
            split["tgt"],
            split["src_texts"],
            split["tgt_texts"],
            split["src_ids"],
            split["tgt_ids"],
            k=k,
            margin=margin,
            budget_mb=budget_mb,
        )

    dev_gold = [tuple(p) for p in dev["gold"]]
    test_gold = [tuple(p) for p in test["gold"]]
    if not dev_gold or not test_gold:
        raise InputError("BUCC: the dev and test splits both need gold pairs")
    dev_c, test_c = cands(dev), cands(test)
    threshold = bucc_optimize_threshold(dev_c, dev_gold)
    return {
        "test": bucc_prf(test_c, test_gold, threshold),
        "dev": bucc_prf(dev_c, dev_gold, threshold),
        "threshold": threshold,
        "candidates": {"dev": len(dev_c), "test": len(test_c)},
        "protocol": (
            "BUCC F1 (XTREME protocol)"
            if (k, margin) == (4, "ratio")
            else f"BUCC F1 (margin mining, k={k}, {margin} margin; not XTREME's settings)"
        ),
    }


__all__ = [
    "DIRECTIONS",
    "BatchCheckpoint",
    "PoolingStats",
    "SharedSides",
    "bucc_candidates",
    "bucc_evaluate",
    "bucc_optimize_threshold",
    "bucc_prf",
    "evaluate_mteb",
    "evaluate_retrieval",
    "layer_sweep",
    "mine_candidates",
    "mteb_bitext_scores",
    "mteb_nearest",
    "pooled_hidden_states",
    "retrieval_accuracy",
    "xtreme_layer_to_hf",
]
