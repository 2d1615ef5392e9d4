"""Word-level contextual vectors from a Hugging Face encoder, read at a chosen layer.

Static embeddings distilled from an encoder (X2Static) or aggregated over contexts
(Bommasani et al. 2020) both need, for every word of a sentence, the vector the encoder
gives it at layer ``L``. This module provides that, fast:

* :func:`load_truncated_encoder` keeps only the first ``L`` transformer layers, so a
  forward pass costs ``L/N`` of the full model's, and runs in inference mode on the GPU
  when there is one (bfloat16) or on all the job's CPU threads (float32). Its output is
  exactly ``hidden_states[L]`` of the full model for the architectures of
  :data:`_TRUNCATABLE` (ModernBERT's final norm, which Hugging Face applies to
  ``hidden_states[N]`` only, is skipped below the last layer); any other architecture runs
  whole and reads ``hidden_states[L]``, and :func:`forward_record` names which was done,
  for the job's record.
* :func:`word_vectors` tokenises each sentence as a whole with ``is_split_into_words``
  (so every word is seen in its context), batches sentences by subword length to keep
  padding low, and pools the subword vectors of each word (mean, first or last).
* :func:`sentence_token_means` gives, per sentence, the mean of the layer-``L`` states of
  *all* its subword tokens, special tokens included and padding excluded: the context
  vector of X2Static's public sentence-level code (``learn_from_bert_ver2.py``,
  ``learn_from_roberta_ver2.py``), which reads the last layer.

Truncation policy: a sentence longer than ``max_length`` subwords (special tokens
included) is cut; a word gets a vector only if *all* its subwords fit. Words cut off, and
words the tokenizer maps to no subword at all, get a row of NaN in the output (so rows
stay aligned with the input words) and are counted in :class:`WordVectorStats`.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from xlalign.core.device import resolve_device, resolve_dtype
from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, local_model_dir

log = logging.getLogger(__name__)

POOLINGS = ("mean", "first", "last")

#: Where the list of transformer layers lives in common Hugging Face architectures.
_LAYER_PATHS = (
    "encoder.layer",  # BERT, RoBERTa, XLM-R, ELECTRA, CamemBERT
    "encoder.layers",
    "transformer.layer",  # DistilBERT
    "layers",  # ModernBERT
    "transformer.h",
    "h",
    "model.layers",
)


@dataclass
class WordVectorStats:
    """What :func:`word_vectors` could not give a vector to (accumulated across calls)."""

    sentences: int = 0
    words: int = 0
    #: sentences longer than ``max_length`` subwords (cut)
    truncated_sentences: int = 0
    #: words (partly) beyond ``max_length``: NaN rows
    truncated_words: int = 0
    #: words the tokenizer maps to no subword: NaN rows
    empty_words: int = 0


# --------------------------------------------------------------------------- loading


def encoder_depth(config: Any) -> int:
    """Number of transformer layers of a Hugging Face model config."""
    for key in ("num_hidden_layers", "n_layers", "num_layers", "n_layer"):
        value = getattr(config, key, None)
        if isinstance(value, int):
            return value
    raise ConfigError(f"cannot tell the number of layers of a {type(config).__name__}")


def _find_layers(model: Any, depth: int) -> tuple[Any, str, Any]:
    """(parent module, attribute name, ModuleList) of the model's transformer layers."""
    import torch

    for path in _LAYER_PATHS:
        parent = model
        *heads, last = path.split(".")
        for part in heads:
            parent = getattr(parent, part, None)
            if parent is None:
                break
        layers = getattr(parent, last, None) if parent is not None else None
        if isinstance(layers, torch.nn.ModuleList) and len(layers) == depth:
            return parent, last, layers
    found = [
        (name, mod)
        for name, mod in model.named_modules()
        if isinstance(mod, torch.nn.ModuleList) and len(mod) == depth
    ]
    if len(found) != 1:
        raise ConfigError(
            f"{type(model).__name__}: cannot locate its list of {depth} transformer layers "
            f"(candidates: {[n for n, _ in found]})"
        )
    name = found[0][0]
    parent = model.get_submodule(name.rsplit(".", 1)[0]) if "." in name else model
    return parent, name.rsplit(".", 1)[-1], found[0][1]


#: Architectures whose truncated forward is exact: running layers 1..l (and skipping the
#: module named here, applied after the stack, when l < N) gives ``hidden_states[l]`` of the
#: full model. Post-norm stacks (BERT, RoBERTa, XLM-R, ELECTRA, DistilBERT, DeBERTa-v2,
#: whose relative positions depend on the sequence only) end with layer ``N``'s own output
#: (""); ModernBERT is pre-norm and applies ``final_norm`` after its last layer, which
#: Hugging Face puts into ``hidden_states[N]`` (= ``last_hidden_state``) only. Each entry is
#: checked against the full forward in tests/encoders/test_architectures.py.
_TRUNCATABLE: dict[str, str] = {
    "bert": "",
    "roberta": "",
    "xlm-roberta": "",
    "camembert": "",
    "electra": "",
    "distilbert": "",
    "deberta-v2": "",
    "modernbert": "final_norm",
}
#: The fallbacks :func:`running_layers` has logged (once each).
_WARNED: set[str] = set()
#: Attribute of a model from :func:`load_truncated_encoder` saying how it computes layer l.
_FORWARD_ATTR = "xlalign_forward"


def forward_plan(config: Any, layer: int) -> str:
    """How layer ``layer`` of an encoder of ``config`` is computed, for job records:
    ``"truncated"`` (layers 1..``layer`` only, exact: :data:`_TRUNCATABLE`) or
    ``"full (why)"`` (the whole model's ``hidden_states[layer]``)."""
    depth = encoder_depth(config)
    model_type = getattr(config, "model_type", None)
    if layer >= depth:
        return f"full (layer {layer} is the last of {depth})"
    if layer < 1:
        return "full (layer 0 is the embedding output)"
    if model_type not in _TRUNCATABLE:
        return (
            f"full ({model_type!r} has no truncated forward known to give hidden_states"
            f"[{layer}] exactly; truncated ones: {', '.join(sorted(_TRUNCATABLE))})"
        )
    return "truncated"


def forward_record(model: Any) -> str:
    """The :func:`forward_plan` a model from :func:`load_truncated_encoder` runs under."""
    return str(getattr(model, _FORWARD_ATTR, "unknown"))


def _after_stack(model: Any, model_type: str | None) -> tuple[Any, str] | None:
    """(parent, attribute) of the module applied after the layer stack, if any."""
    name = _TRUNCATABLE.get(str(model_type), "")
    if not name:
        return None
    for parent in (model, getattr(model, "base_model", None)):
        if parent is not None and getattr(parent, name, None) is not None:
            return parent, name
    raise ConfigError(
        f"{type(model).__name__} ({model_type}): expected a module {name!r} after its layers"
    )


@contextlib.contextmanager
def running_layers(model: Any, layer: int) -> Iterator[bool]:
    """Within the block, ``model`` (a Hugging Face encoder) runs only its layers
    1..``layer``: its layer list is swapped for a shorter one holding the same modules (and
    a norm after the stack, ModernBERT's, for an identity), so parameters, gradients and
    optimiser state are untouched, and its ``last_hidden_state`` is ``hidden_states[layer]``
    of the full model at ``layer/N`` of the cost.

    Yields True when the stack was shortened; False (nothing changed, read
    ``hidden_states[layer]`` of a full forward) for the last layer and for architectures
    outside :data:`_TRUNCATABLE`.
    """
    import torch

    config = getattr(model, "config", None)
    plan = forward_plan(config, layer) if config is not None else "full (no config)"
    if plan != "truncated":
        if plan.startswith("full ('") and plan not in _WARNED:
            _WARNED.add(plan)
            log.warning("layer %d: %s", layer, plan)
        yield False
        return
    depth = encoder_depth(config)
    parent, attr, layers = _find_layers(model, depth)
    after = _after_stack(model, getattr(config, "model_type", None))
    kept = getattr(after[0], after[1]) if after else None
    setattr(parent, attr, torch.nn.ModuleList(list(layers)[:layer]))
    if after:
        setattr(after[0], after[1], torch.nn.Identity())
    try:
        yield True
    finally:
        setattr(parent, attr, layers)
        if after:
            setattr(after[0], after[1], kept)


class _LayerOf:
    """A whole encoder whose ``last_hidden_state`` is its ``hidden_states[layer]`` (one full
    forward): the fallback of :func:`load_truncated_encoder` where truncation is not exact."""

    def __init__(self, model: Any, layer: int) -> None:
        self.model, self.layer, self.config = model, layer, model.config

    def parameters(self) -> Any:
        return self.model.parameters()

    def __call__(self, **inputs: Any) -> Any:
        from types import SimpleNamespace

        states = self.model(**inputs, output_hidden_states=True).hidden_states
        return SimpleNamespace(last_hidden_state=states[self.layer])


def _supports_no_pooler(config: Any) -> bool:
    """Whether the model class for ``config`` takes ``add_pooling_layer`` (BERT family)."""
    import inspect

    from transformers.models.auto.modeling_auto import MODEL_MAPPING

    try:
        cls = MODEL_MAPPING[type(config)]
    except (KeyError, ValueError):
        return False
    return "add_pooling_layer" in inspect.signature(cls.__init__).parameters


def load_truncated_encoder(
    encoder_dir: PathLike,
    layer: int,
    *,
    device: Any = None,
    dtype: Any = None,
    threads: int | None = None,
) -> tuple[Any, Any]:
    """Load (fast tokenizer, model keeping only layers 1..``layer``) offline, in eval mode.

    The model's ``last_hidden_state`` is then the encoder's layer-``layer`` output
    (``hidden_states[layer]`` of the full model). On CPU, ``threads`` sets torch's
    intra-op threads. Raises :class:`InputError` when ``encoder_dir`` cannot be loaded and
    :class:`ConfigError` when ``layer`` is outside ``1..depth``.
    """
    import torch
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    from xlalign.resources.embedded.encoder import hf_offline

    where = local_model_dir(encoder_dir, what="encoder")  # never a Hub id: no network
    if isinstance(layer, bool) or not isinstance(layer, int):
        raise ConfigError(f"layer: expected an integer, got {layer!r}")
    with hf_offline():
        try:
            config = AutoConfig.from_pretrained(where, local_files_only=True)
        except Exception as exc:  # transformers raises OSError, ValueError, KeyError...
            raise InputError(
                f"{where}: cannot load a Hugging Face encoder config offline ({exc})"
            ) from exc
        depth = encoder_depth(config)
        if not 1 <= layer <= depth:
            raise ConfigError(
                f"layer {layer} is outside 1..{depth}: the encoder {where} has {depth} layers"
            )
        dev = resolve_device(device)
        torch_dtype = resolve_dtype(dtype, dev)
        kwargs: dict[str, Any] = {"local_files_only": True, "dtype": torch_dtype}
        if _supports_no_pooler(config):
            kwargs["add_pooling_layer"] = False
        try:
            tokenizer = AutoTokenizer.from_pretrained(where, local_files_only=True)
            model = AutoModel.from_pretrained(where, **kwargs)
        except Exception as exc:
            raise InputError(f"{where}: cannot load the encoder offline ({exc})") from exc
    if not getattr(tokenizer, "is_fast", False):
        raise InputError(
            f"{where}: the tokenizer is not a fast (Rust) tokenizer; word_ids() needs one"
        )
    plan = forward_plan(config, layer)
    if plan == "truncated":
        parent, attr, layers = _find_layers(model, depth)
        setattr(parent, attr, torch.nn.ModuleList(list(layers)[:layer]))
        after = _after_stack(model, config.model_type)
        if after:
            setattr(after[0], after[1], torch.nn.Identity())
        for key in ("num_hidden_layers", "n_layers", "num_layers", "n_layer"):
            if isinstance(getattr(model.config, key, None), int):
                setattr(model.config, key, layer)
    model.config.output_hidden_states = False
    model.to(dev)
    model.eval()
    setattr(model, _FORWARD_ATTR, plan)
    if plan.startswith("full (") and layer < depth:
        log.warning("encoder %s: %s", where, plan)
        wrapped = _LayerOf(model, layer)
        setattr(wrapped, _FORWARD_ATTR, plan)
        model = wrapped
    if dev.type == "cpu" and threads:
        torch.set_num_threads(int(threads))
    log.info(
        "encoder %s: layers 1..%d of %d on %s (%s, %d threads; forward %s)",
        Path(where).name or where,
        layer,
        depth,
        dev,
        str(torch_dtype).removeprefix("torch."),
        torch.get_num_threads(),
        forward_record(model),
    )
    return tokenizer, model


# --------------------------------------------------------------------------- tokenising


def tokenize_alone(words: Sequence[str], tokenizer: Any) -> dict[str, int]:
    """Number of subwords (no special tokens) of each word tokenised on its own.

    Words are pre-tokenised exactly as inside a sentence (``is_split_into_words``), so
    the count equals the word's share of its sentence's subwords. Words mapping to no
    subword (count 0) are logged; see :func:`untokenizable`.
    """
    uniq = list(dict.fromkeys(words))
    counts: dict[str, int] = {}
    step = 4096
    for s in range(0, len(uniq), step):
        chunk = uniq[s : s + step]
        enc = tokenizer([[w] for w in chunk], is_split_into_words=True, add_special_tokens=False)
        for w, ids in zip(chunk, enc["input_ids"], strict=True):
            counts[w] = len(ids)
    empty = [w for w, n in counts.items() if n == 0]
    if empty:
        log.warning(
            "%d word(s) map to no subword: %s", len(empty), ", ".join(map(repr, empty[:20]))
        )
    return counts


def untokenizable(words: Sequence[str], tokenizer: Any) -> list[str]:
    """The words (in input order, unique) that the tokenizer maps to no subword at all."""
    return [w for w, n in tokenize_alone(words, tokenizer).items() if n == 0]


@dataclass
class _Encoded:
    ids: list[int]
    #: for each token position, the word index or -1 (special token)
    word_of: np.ndarray
    n_words: int


def _encode(
    sentences: Sequence[Sequence[str]], tokenizer: Any, max_length: int, stats: WordVectorStats
) -> list[_Encoded]:
    """Tokenise whole sentences; cut them to ``max_length`` keeping the special tokens."""
    out: list[_Encoded] = []
    nonempty = [i for i, s in enumerate(sentences) if len(s)]
    enc = (
        tokenizer(
            [list(sentences[i]) for i in nonempty],
            is_split_into_words=True,
            add_special_tokens=True,
            truncation=False,
            verbose=False,
        )
        if nonempty
        else None
    )
    row = {i: k for k, i in enumerate(nonempty)}
    for i, words in enumerate(sentences):
        n = len(words)
        stats.sentences += 1
        stats.words += n
        if not n:
            out.append(_Encoded([], np.zeros(0, np.int64), 0))
            continue
        k = row[i]
        ids = list(enc["input_ids"][k])
        wid = np.array([-1 if w is None else w for w in enc.word_ids(k)], dtype=np.int64)
        content = np.flatnonzero(wid >= 0)
        present = np.zeros(n, dtype=bool)
        present[wid[content]] = True
        stats.empty_words += int(n - present.sum())
        budget = max_length - (len(ids) - len(content))
        if len(content) > budget:
            stats.truncated_sentences += 1
            keep = np.ones(len(ids), dtype=bool)
            keep[content[budget:]] = False
            cut = wid[content[budget:]]
            # a word loses its vector if any of its subwords is cut
            lost = np.unique(cut)
            stats.truncated_words += len(lost)
            wid = np.where(np.isin(wid, lost), -1, wid)
            ids = [t for t, k2 in zip(ids, keep, strict=True) if k2]
            wid = wid[keep]
        out.append(_Encoded(ids, wid, n))
    return out


def _max_positions(tokenizer: Any, model: Any) -> int | None:
    """The longest input (in subwords, special tokens included) the encoder accepts."""
    limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(limit, int) and limit < 10**6:
        return limit
    limit = getattr(model.config, "max_position_embeddings", None)
    return limit if isinstance(limit, int) else None


def _batches(lengths: np.ndarray, batch_tokens: int) -> Iterator[np.ndarray]:
    """Indices grouped longest first, each group's padded size at most ``batch_tokens``."""
    order = np.lexsort((np.arange(len(lengths)), -lengths))
    start = 0
    while start < len(order):
        longest = int(lengths[order[start]])
        size = max(1, batch_tokens // max(longest, 1))
        yield order[start : start + size]
        start += size


def word_vectors(
    sentences: Sequence[Sequence[str]],
    tokenizer: Any,
    model: Any,
    *,
    pooling: str = "mean",
    max_length: int = 200,
    batch_tokens: int = 8192,
    stats: WordVectorStats | None = None,
) -> Iterator[np.ndarray]:
    """Yield, in input order, a float32 ``(n_words, dim)`` array of word vectors per sentence.

    Each sentence is tokenised as a whole (``is_split_into_words``) and the vectors of a
    word's subwords at the model's output (the truncated encoder's layer ``L``) pooled by
    ``pooling`` (``mean``, ``first`` or ``last``). Sentences are run longest first in
    batches of at most ``batch_tokens`` padded tokens. ``max_length`` (special tokens
    included) is capped at the encoder's maximum input length. Words without a vector
    (beyond ``max_length`` subwords, or mapped to no subword) get NaN rows; ``stats``
    counts them.
    Results are buffered until the next sentence in input order is ready, so pass chunks
    of a corpus, not all of it, to keep memory bounded.
    """
    if pooling not in POOLINGS:
        raise ConfigError(f"pooling: expected one of {POOLINGS}, got {pooling!r}")
    dim = int(model.config.hidden_size)

    def pool(hidden: Any, members: list[_Encoded]) -> list[np.ndarray]:
        flat = hidden.reshape(-1, dim).float()
        pooled = _pool(flat, members, hidden.shape[1], pooling, hidden.device)
        bounds = np.cumsum([0] + [e.n_words for e in members])
        return [pooled[a:b] for a, b in itertools.pairwise(bounds)]

    def empty(e: _Encoded) -> np.ndarray:
        return np.full((e.n_words, dim), np.nan, dtype=np.float32)

    yield from _run_in_order(
        sentences, tokenizer, model, pool, empty, max_length, batch_tokens, stats
    )


def sentence_token_means(
    sentences: Sequence[Sequence[str]],
    tokenizer: Any,
    model: Any,
    *,
    max_length: int = 200,
    batch_tokens: int = 8192,
    stats: WordVectorStats | None = None,
) -> Iterator[np.ndarray]:
    """Yield, in input order, a float32 ``(dim,)`` vector per sentence: the mean of the
    model's output states over *every* subword token of the sentence, special tokens
    (``[CLS]``/``[SEP]``, ``<s>``/``</s>``) included, padding excluded.

    This is the context vector of X2Static's public sentence-level code (Gupta and Jaggi
    2021, ``learn_from_bert_ver2.py`` / ``learn_from_roberta_ver2.py``): the sum of the
    last layer's states masked to the sentence's tokens, divided by its token count; every
    word of the sentence, the target included, contributes all its subwords. Here the
    state is the truncated encoder's output (layer ``L``; the public code's when ``L`` is
    the last layer). Sentences are tokenised and cut to ``max_length`` as in
    :func:`word_vectors` (the special tokens are kept, as the public code keeps the
    closing one); an empty sentence gives a row of NaN. The mean is taken in float32.
    """
    dim = int(model.config.hidden_size)

    def mean(hidden: Any, members: list[_Encoded]) -> list[np.ndarray]:
        import torch

        lengths = torch.tensor([len(e.ids) for e in members], device=hidden.device)
        keep = torch.arange(hidden.shape[1], device=hidden.device)[None, :] < lengths[:, None]
        total = (hidden.float() * keep[:, :, None]).sum(dim=1)
        means = (total / lengths[:, None]).cpu().numpy().astype(np.float32, copy=False)
        return list(means)

    def empty(e: _Encoded) -> np.ndarray:
        return np.full(dim, np.nan, dtype=np.float32)

    yield from _run_in_order(
        sentences, tokenizer, model, mean, empty, max_length, batch_tokens, stats
    )


def _run_in_order(
    sentences: Sequence[Sequence[str]],
    tokenizer: Any,
    model: Any,
    reduce: Any,
    empty: Any,
    max_length: int,
    batch_tokens: int,
    stats: WordVectorStats | None,
) -> Iterator[np.ndarray]:
    """Encode sentences in length-sorted, padded batches and yield ``reduce``'s result per
    sentence in input order (``empty(encoded)`` for a sentence without tokens).

    ``reduce(hidden [B, width, dim], members)`` returns one array per member; padding
    positions of ``hidden`` (beyond ``len(member.ids)``) are masked in attention and must
    be ignored by ``reduce``.
    """
    import torch

    if max_length < 3:
        raise ConfigError(f"max_length: expected at least 3 subwords, got {max_length}")
    limit = _max_positions(tokenizer, model)
    if limit is not None and max_length > limit:
        log.debug("max_length %d capped at the encoder's %d positions", max_length, limit)
        max_length = limit
    if batch_tokens < 1:
        raise ConfigError(f"batch_tokens: expected a positive number, got {batch_tokens}")
    stats = stats if stats is not None else WordVectorStats()
    encoded = _encode(sentences, tokenizer, max_length, stats)
    device = next(model.parameters()).device
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0

    ready: dict[int, np.ndarray] = {}
    next_out = 0
    todo = [i for i, e in enumerate(encoded) if e.ids]
    for i, e in enumerate(encoded):
        if not e.ids:
            ready[i] = empty(e)
    lengths = np.array([len(encoded[i].ids) for i in todo], dtype=np.int64)
    with torch.inference_mode():
        for group in _batches(lengths, batch_tokens):
            members = [todo[g] for g in group]
            width = max(len(encoded[i].ids) for i in members)
            ids = np.full((len(members), width), pad_id, dtype=np.int64)
            mask = np.zeros((len(members), width), dtype=np.int64)
            for r, i in enumerate(members):
                n = len(encoded[i].ids)
                ids[r, :n] = encoded[i].ids
                mask[r, :n] = 1
            hidden = model(
                input_ids=torch.from_numpy(ids).to(device),
                attention_mask=torch.from_numpy(mask).to(device),
            ).last_hidden_state
            results = reduce(hidden, [encoded[i] for i in members])
            for i, result in zip(members, results, strict=True):
                ready[i] = result
            while next_out in ready:
                yield ready.pop(next_out)
                next_out += 1
    while next_out in ready:
        yield ready.pop(next_out)
        next_out += 1


def _pool(flat: Any, members: list[_Encoded], width: int, pooling: str, device: Any) -> np.ndarray:
    """Pool token rows ``flat`` ([B*width, dim]) into word rows, NaN for words without tokens.

    The pooling runs in numpy on contiguous runs of tokens (a word's subwords are adjacent
    and words come in order), so results do not depend on GPU atomics: deterministic.
    """
    import torch

    n_total = sum(e.n_words for e in members)
    dim = flat.shape[1]
    positions: list[np.ndarray] = []
    slots: list[np.ndarray] = []
    base = 0
    for r, e in enumerate(members):
        tok = np.flatnonzero(e.word_of >= 0)
        positions.append(r * width + tok)
        slots.append(base + e.word_of[tok])
        base += e.n_words
    pos = np.concatenate(positions)
    slot = np.concatenate(slots)
    out = np.full((n_total, dim), np.nan, dtype=np.float32)
    if not len(slot):
        return out
    if np.any(np.diff(slot) < 0):  # pragma: no cover - tokenizers keep words in order
        raise ValueError("subwords of a sentence are not in word order")
    # start of each run of equal slots, i.e. of each word's subwords
    starts = np.flatnonzero(np.r_[True, slot[1:] != slot[:-1]])
    words = slot[starts]
    if pooling == "first":
        pos = pos[starts]
    elif pooling == "last":
        pos = pos[np.r_[starts[1:], len(slot)] - 1]
    rows = flat[torch.from_numpy(pos).to(device)].cpu().numpy().astype(np.float32, copy=False)
    if pooling == "mean":
        sizes = np.diff(np.r_[starts, len(slot)]).astype(np.float32)
        out[words] = np.add.reduceat(rows, starts, axis=0) / sizes[:, None]
    else:
        out[words] = rows
    return out
