"""VecMap over files: each language mapped into the hub's space, or a pair of spaces.

:func:`map_to_hub` is the workflow's mapping step. The hub's space is its own vectors
after VecMap's normalisation; every other language is mapped with a training dictionary
(held-out evaluation words kept out of it, see ``heldout``) and expressed in that space
with :func:`xlalign.mapping.vecmap.to_hub`, so its dot products with the hub equal
VecMap's. :func:`map_pair` runs VecMap on two files as the public tool's
``map_embeddings.py`` does (``xlalign map``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, write_json
from xlalign.dictionaries.split import read_pairs
from xlalign.mapping import vecmap
from xlalign.static.vectors import Space, load_space, save_npy_space, write_vec

log = logging.getLogger(__name__)

#: What :func:`map_to_hub` does with a training dictionary without usable pairs.
EMPTY_POLICIES = ("error", "keep-unmapped")


def map_to_hub(
    *,
    language: str,
    hub: str,
    space: PathLike,
    hub_space: PathLike,
    dictionary: PathLike | None,
    recipe: str,
    options: Mapping[str, Any] | None,
    seed: int,
    out_stem: PathLike,
    stats_path: PathLike,
    device: str | None = None,
    max_words: int | None = None,
    lowercase: bool = False,
    progress: bool = True,
    empty: str = "error",
    heldout: Mapping[str, PathLike] | None = None,
    overlap: str = "report",
) -> dict[str, Any]:
    """Map ``language``'s space into the hub's with VecMap and write it in hub coordinates.

    ``dictionary`` holds ``hub-language`` pairs (hub words first, as the split writes
    them); they are turned round because the language is the source of the mapping. The
    hub itself is written as its normalised vectors (the fixed side of every mapping).

    A training dictionary with no pair in the vocabularies is an error (``empty="error"``)
    or, with ``empty="keep-unmapped"``, the language is left unmapped: its normalised
    vectors are written, and the stats say ``mapped: false`` and why (the paper kept
    unaligned vectors where alignment could not help). Never a silent identity map.

    ``heldout`` maps a direction (``en-de``, ``de-en``) to an evaluation dictionary whose
    source words must not be trained on: training pairs sharing such a word are counted
    (``overlap="report"``, for induced dictionaries, which carry no gold information),
    dropped (``"drop"``, for a user-given gold file) or an error (``"error"``).
    """
    if empty not in EMPTY_POLICIES:
        raise ConfigError(f"align.empty_dictionary: {empty!r}: expected one of {EMPTY_POLICIES}")
    args = vecmap.recipe_args(recipe, seed=seed, **dict(options or {}))
    start = time.perf_counter()
    (hw, hv), hub_report = load_space(hub_space, max_words=max_words, lowercase=lowercase)
    stats: dict[str, Any] = {
        "language": language,
        "hub": hub,
        "recipe": recipe,
        "options": dict(options or {}),
        "seed": seed,
        "hub_space": hub_report,
    }
    if language == hub:
        out = (hw, np.asarray(vecmap.normalize(hv, args.normalize), dtype=np.float32))
        stats.update(mapped=False, role="hub", normalize=list(args.normalize))
    else:
        (xw, xv), report = load_space(space, max_words=max_words, lowercase=lowercase)
        stats["space"] = report
        pairs = None
        if dictionary is not None:
            pairs = [(t, s) for s, t in read_pairs(dictionary)]
            pairs, stats["heldout_overlap"] = _heldout_overlap(
                pairs, heldout or {}, hub=hub, policy=overlap, what=str(dictionary)
            )
            src_set, hub_set = set(xw), set(hw)
            usable = sum(a in src_set and b in hub_set for a, b in pairs)
            stats["dictionary"] = {
                "path": str(dictionary),
                "pairs": len(pairs),
                "pairs_in_vocabulary": usable,
            }
            if not usable:
                what = "is empty" if not pairs else "has no pair with both words in vocabulary"
                msg = (
                    f"{dictionary}: the training dictionary of {hub}-{language} {what}; "
                    f"recipe {recipe!r} needs dictionary pairs (see the split stats)"
                )
                if empty == "error":
                    raise InputError(msg + "; or set align.empty_dictionary: keep-unmapped")
                log.warning("%s: left unmapped (align.empty_dictionary: keep-unmapped)", msg)
                out = (xw, np.asarray(vecmap.normalize(xv, args.normalize), dtype=np.float32))
                stats.update(mapped=False, role="unmapped", reason=msg)
                return _finish(out, out_stem, stats_path, stats, start)
        mapping = vecmap.map_embeddings(
            xv,
            hv,
            args,
            src_words=xw,
            trg_words=hw,
            dictionary=pairs,
            device=device,
            progress=progress,
        )
        out = (xw, np.asarray(vecmap.to_hub(mapping, xv), dtype=np.float32))
        stats.update(mapped=True, role="mapped", vecmap=mapping.stats)
        if mapping.stats.get("objective"):
            # Self-learning's objective per iteration: a metric history in MLflow.
            stats["curves"] = {
                "objective": mapping.stats["objective"],
                "keep_prob": mapping.stats["keep_prob"],
            }
    return _finish(out, out_stem, stats_path, stats, start)


OVERLAP_POLICIES = ("report", "drop", "error")


def _heldout_overlap(
    pairs: list[tuple[str, str]],
    heldout: Mapping[str, PathLike],
    *,
    hub: str,
    policy: str,
    what: str,
) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """Training pairs (language word, hub word) against the evaluation words (see map_to_hub)."""
    if policy not in OVERLAP_POLICIES:
        raise ConfigError(f"overlap policy {policy!r}: expected one of {OVERLAP_POLICIES}")
    if not heldout:
        return pairs, {}
    hub_words: set[str] = set()
    lang_words: set[str] = set()
    for direction, path in heldout.items():
        words = {s for s, _ in read_pairs(path)}
        (hub_words if direction.split("-")[0] == hub else lang_words).update(words)
    shared = [(x, h) for x, h in pairs if x in lang_words or h in hub_words]
    report = {"policy": policy, "training_pairs_with_evaluation_words": len(shared)}
    if shared and policy == "error":
        raise InputError(
            f"{what}: {len(shared)} training pair(s) contain evaluation (test) source words, "
            f"e.g. {shared[:3]}; expected disjoint words (or dictionaries.split.overlap: drop)"
        )
    if shared and policy == "drop":
        log.warning("%s: dropped %d training pair(s) with test words", what, len(shared))
        drop = set(shared)
        pairs = [p for p in pairs if p not in drop]
        report["dropped"] = len(shared)
    elif shared:
        log.info("%s: %d training pair(s) share words with the test sets", what, len(shared))
    return pairs, report


def _finish(
    out: Space, out_stem: PathLike, stats_path: PathLike, stats: dict[str, Any], start: float
) -> dict[str, Any]:
    save_npy_space(out, out_stem)
    stats["seconds"] = round(time.perf_counter() - start, 3)
    stats["words"] = len(out[0])
    write_json(stats_path, stats)
    return stats


def map_pair(
    *,
    src: PathLike,
    trg: PathLike,
    src_out: PathLike,
    trg_out: PathLike,
    dictionary: PathLike | None,
    recipe: str,
    options: Mapping[str, Any] | None = None,
    seed: int = 0,
    hub: bool = False,
    max_words: int | None = None,
    stats_path: PathLike | None = None,
    device: str | None = None,
) -> dict[str, Any]:
    """VecMap on two files, as the public tool's ``map_embeddings.py`` (``xlalign map``).

    ``dictionary`` holds ``source target`` pairs. Writes both mapped spaces as word2vec
    text; with ``hub`` the target stays in its own normalised space and the source is
    expressed in it (same cross-lingual dot products, see :func:`xlalign.mapping.vecmap.to_hub`).
    """
    args = vecmap.recipe_args(recipe, seed=seed, **dict(options or {}))
    (sw, sv), s_report = load_space(src, max_words=max_words)
    (tw, tv), t_report = load_space(trg, max_words=max_words)
    pairs = read_pairs(dictionary) if dictionary is not None else None
    mapping = vecmap.map_embeddings(
        sv, tv, args, src_words=sw, trg_words=tw, dictionary=pairs, device=device
    )
    if hub:
        xs = vecmap.to_hub(mapping, sv)
        zs = vecmap.normalize(tv, list(args.normalize))
    else:
        xs = vecmap.apply(mapping, sv, "src")
        zs = vecmap.apply(mapping, tv, "trg")
    write_vec(sw, np.asarray(xs, dtype=np.float32), src_out)
    write_vec(tw, np.asarray(zs, dtype=np.float32), trg_out)
    stats = {
        "recipe": recipe,
        "options": dict(options or {}),
        "seed": seed,
        "hub": hub,
        "source": s_report,
        "target": t_report,
        "vecmap": mapping.stats,
    }
    if stats_path is not None:
        write_json(stats_path, stats)
    return stats
