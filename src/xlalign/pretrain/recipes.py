"""Named runs: the rows of the papers' tables as sets of weighted objectives.

A row of 000's Table 3 (``mlm``, ``fasttext-dcca``, ``x2s-ma-mse``, ``x2s-ma-dcca``) or of
001 / 002 (``align-mlm``, ``dict-mlm``, ``tlm``, ``l2-align``, ``contrastive-weak``,
``contrastive-strong``, ``linear-map``) is a mapping objective -> {weight, and settings
that differ from ``pretrain.objectives.<objective>``}. ``pretrain.recipes`` in config adds
rows or overrides these. This module imports nothing heavy (config validation reads it).

On names: 000 calls its correlation loss "DCCA" and cites Arjmand (2020)'s DeepGCCA, which
computes a generalised-CCA loss; the ``*-dcca`` rows therefore use the ``gcca`` objective,
as the paper's runs did. Andrew et al. (2013)'s DCCA is the ``dcca`` objective (set
``pretrain.recipes.<row>: {dcca: {weight: 1}}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from copy import deepcopy
from typing import Any

from xlalign.core.errors import ConfigError

#: Rows -> objectives -> overrides (``weight`` defaults to 1). ``static`` names the static
#: space of a static objective, as the lexical stage names its spaces: "x2s-ma" (the
#: selected aligned X2Static vectors) or "fasttext-unsup" (fastText aligned with
#: unsupervised VecMap, the paper's fasttext_unsup).
RECIPES: dict[str, dict[str, dict[str, Any]]] = {
    # 000 Table 3
    "mlm": {"mlm": {}},
    "fasttext-dcca": {"mlm": {}, "gcca": {"static": "fasttext-unsup"}},
    "x2s-ma-mse": {"mlm": {}, "mse": {"static": "x2s-ma"}},
    "x2s-ma-dcca": {"mlm": {}, "gcca": {"static": "x2s-ma"}},
    # 001 (alpha = 10 for ALIGN-MLM's cosine term, 001 section 4)
    "align-mlm": {"mlm": {}, "align_mlm": {"weight": 10.0}},
    "dict-mlm": {"dict_mlm": {}},
    "tlm": {"mlm": {}, "tlm": {}},
    # 002 (each with the parameter-drift regulariser, lambda = 1)
    "l2-align": {"l2_align": {}},
    "contrastive-weak": {"contrastive": {"mode": "weak"}},
    "contrastive-strong": {"contrastive": {"mode": "strong"}},
    "linear-map": {"linear_map": {}},
}

#: Defaults of ``pretrain.objectives.<name>`` (000 Appendix C; 001; 002; the references).
OBJECTIVE_DEFAULTS: dict[str, dict[str, Any]] = {
    "mlm": {"batch_size": 64, "language_alpha": 1.0},
    "dict_mlm": {
        "batch_size": 64,
        "switch_probability": 0.5,
        "max_pairs": None,
        "reproduce_label_leak": False,
    },
    "tlm": {"batch_size": 64},
    "mse": {"batch_size": 1024, "layer": None, "max_subwords": 8, "min_coverage": 0.5},
    "gcca": {
        "batch_size": 1024,
        "layer": None,
        "k": 10,
        "centring": "columns",
        "max_subwords": 8,
        "min_coverage": 0.5,
    },
    "dcca": {
        "batch_size": 1024,
        "layer": None,
        "k": 10,
        "r1": 1e-3,
        "r2": 1e-3,
        "eps": 1e-9,
        "max_subwords": 8,
        "min_coverage": 0.5,
    },
    "align_mlm": {"batch_size": 1, "max_pairs": None},
    "l2_align": {
        "batch_size": 128,
        "layer": None,
        "drift": 1.0,
        "hidden_regulariser": 0.0,
        "reproduce_sqrt_drift": False,
        "max_length": 96,
    },
    "contrastive": {
        "batch_size": 128,
        "layer": None,
        "mode": "weak",
        "temperature": 0.1,
        "projection_dim": 128,
        "drift": 1.0,
        "reproduce_sqrt_drift": False,
        "max_length": 96,
    },
    "linear_map": {"batch_size": 128, "layers": None, "beta": 0.01, "max_length": 96},
}

TEXT = ("mlm", "dict_mlm", "tlm")
STATIC = ("mse", "gcca", "dcca")
BITEXT = ("l2_align", "contrastive", "linear_map")
DICTIONARY = ("align_mlm", "dict_mlm")


def row_objectives(cfg: Mapping[str, Any], row: str) -> dict[str, dict[str, Any]]:
    """Objective -> resolved settings (defaults < ``pretrain.objectives`` < the row's own)
    of ``row``, each with ``weight``; a :class:`ConfigError` names an unknown row or key."""
    pre = cfg.get("pretrain", {})
    rows = {**RECIPES, **(pre.get("recipes") or {})}
    if row not in rows:
        raise ConfigError(
            f"pretrain.runs: unknown run {row!r}; expected one of {sorted(rows)} (or define it "
            "in pretrain.recipes)"
        )
    out: dict[str, dict[str, Any]] = {}
    for name, own in rows[row].items():
        if name not in OBJECTIVE_DEFAULTS:
            raise ConfigError(
                f"pretrain.recipes.{row}: unknown objective {name!r}; expected one of "
                f"{sorted(OBJECTIVE_DEFAULTS)}"
            )
        settings = deepcopy(OBJECTIVE_DEFAULTS[name])
        settings.update((pre.get("objectives") or {}).get(name) or {})
        settings.update(own or {})
        settings.setdefault("weight", 1.0)
        if settings.get("layer") is None and name in (*STATIC, *BITEXT[:2]):
            settings["layer"] = pre.get("alignment_layer")
        unknown = set(settings) - set(OBJECTIVE_DEFAULTS[name]) - {"weight", "static"}
        if unknown:
            raise ConfigError(f"pretrain.recipes.{row}.{name}: unknown keys {sorted(unknown)}")
        if name in STATIC and not settings.get("static"):
            raise ConfigError(f"pretrain.recipes.{row}.{name}: needs `static` (a static space)")
        out[name] = settings
    if not out:
        raise ConfigError(f"pretrain.recipes.{row}: no objective")
    return out


def runs(cfg: Mapping[str, Any]) -> list[str]:
    """The rows the configuration runs (checked)."""
    names = list(cfg.get("pretrain", {}).get("runs") or [])
    for row in names:
        row_objectives(cfg, row)
    return names


def needs(cfg: Mapping[str, Any], row: str) -> set[str]:
    """What data ``row`` reads: "text", "static:<space>", "parallel", "aligned",
    "dictionaries"."""
    out: set[str] = set()
    for name, settings in row_objectives(cfg, row).items():
        if name in ("mlm", "dict_mlm"):
            out.add("text")
        if name == "tlm":
            out.add("parallel")
        if name in STATIC:
            out.add(f"static:{settings['static']}")
        if name in BITEXT:
            out.add("aligned")
        if name in DICTIONARY:
            out.add("dictionaries")
    out.add("text")  # the validation text (checkpoint selection) in every run
    return out


def encoder_key(row: str, seed: int) -> str:
    """The name a checkpoint of ``row`` and pre-training seed ``seed`` carries in the
    evaluation stage (and its tables)."""
    return f"{row}.s{seed}"
