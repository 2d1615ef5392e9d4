"""VecMap over files: each language mapped into the hub's space, or a pair of spaces.

:func:`map_to_hub` is the workflow's mapping step. The hub's space is its own vectors
after VecMap's normalisation; every other language is mapped with a training dictionary
(held-out evaluation words kept out of it, see ``heldout``) and expressed in that space
with :func:`xlalign.mapping.vecmap.to_hub`, so its dot products with the hub equal
VecMap's: that hub space is what the later stages consume. Retrieval (BLI, the selection,
induction) is scored in the pair's own mapped spaces instead, as VecMap's evaluation does:
the mapping also writes a pair file (:mod:`xlalign.mapping.pairs`) to rebuild them.
:func:`map_pair` runs VecMap on two files as the public tool's ``map_embeddings.py`` does
(``xlalign map``).
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
from xlalign.mapping.pairs import identity_pair, save_pair
from xlalign.static.vectors import Space, load_space, save_npy_space, write_vec

log = logging.getLogger(__name__)

#: What :func:`map_to_hub` does with a training dictionary without usable pairs.
EMPTY_POLICIES = ("error", "keep-unmapped")
#: What it does with a degenerate one (too few independent pairs for the recipe).
DEGENERATE_ACTIONS = ("error", "fallback", "keep-unmapped")
#: Recipes a degenerate dictionary may fall back to: their final mapping is orthogonal, so
#: any non-empty dictionary (or, for acl2017, the numerals) determines it.
FALLBACK_RECIPES = ("orthogonal", "emnlp2016", "acl2017-seed", "acl2017")


def degenerate_action(policy: Mapping[str, Any] | None, language: str) -> tuple[str, str]:
    """``(action, fallback recipe)`` for ``language`` under ``align.degenerate_dictionary``
    (``action``, ``fallback_recipe``, per-language ``languages`` overrides); None: error."""
    policy = dict(policy or {})
    action = dict(policy.get("languages") or {}).get(language, policy.get("action", "error"))
    fallback = policy.get("fallback_recipe", "orthogonal")
    where = "align.degenerate_dictionary"
    if action not in DEGENERATE_ACTIONS:
        raise ConfigError(f"{where} ({language}): {action!r}: expected one of {DEGENERATE_ACTIONS}")
    if fallback.replace("_", "-") not in FALLBACK_RECIPES:
        raise ConfigError(
            f"{where}.fallback_recipe: {fallback!r}: expected one of {FALLBACK_RECIPES} "
            "(a recipe without whitening)"
        )
    return action, fallback


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
    pair_path: PathLike | None = None,
    device: str | None = None,
    max_words: int | None = None,
    lowercase: bool = False,
    progress: bool = True,
    empty: str = "error",
    degenerate: Mapping[str, Any] | None = None,
    heldout: Mapping[str, PathLike] | None = None,
    overlap: str = "report",
    checkpoint_dir: PathLike | None = None,
    budget_mb: float | None = None,
) -> dict[str, Any]:
    """Map ``language``'s space into the hub's with VecMap and write it in hub coordinates.

    ``checkpoint_dir``: where self-learning keeps its checkpoint, to resume after a kill
    or SIGTERM (see :mod:`xlalign.mapping.vecmap`). ``budget_mb``: the memory budget of
    VecMap's blocks (:func:`xlalign.mapping.vecmap.map_embeddings`).

    ``dictionary`` holds ``hub-language`` pairs (hub words first, as the split writes
    them); they are turned round because the language is the source of the mapping. The
    hub itself is written as its normalised vectors (the fixed side of every mapping).
    With ``pair_path``, the pair's own mapped spaces are written there too
    (:mod:`xlalign.mapping.pairs`: what BLI, selection and induction score in).

    A training dictionary with no pair in the vocabularies is an error (``empty="error"``)
    or, with ``empty="keep-unmapped"``, the language is left unmapped: its normalised
    vectors are written, and the stats say ``mapped: false`` and why (the paper kept
    unaligned vectors where alignment could not help). Never a silent identity map.

    A *degenerate* dictionary, one the recipe's final mapping cannot use (fewer
    independent pairs than dimensions for whitening: see
    :func:`xlalign.mapping.vecmap.degenerate_dictionary`), is found before mapping and
    handled as ``degenerate`` says for this language (:func:`degenerate_action`): an error,
    a ``fallback`` to a named recipe without whitening, or ``keep-unmapped``. The stats
    record ``degenerate`` (reason, rank, action) and ``recipe_used``.

    ``heldout`` maps a direction (``en-de``, ``de-en``) to an evaluation dictionary whose
    source words must not be trained on: training pairs sharing such a word are counted
    (``overlap="report"``, for induced dictionaries, which carry no gold information),
    dropped (``"drop"``, for a user-given gold file) or an error (``"error"``).
    """
    if empty not in EMPTY_POLICIES:
        raise ConfigError(f"align.empty_dictionary: {empty!r}: expected one of {EMPTY_POLICIES}")
    action, fallback = degenerate_action(degenerate, language)
    args = vecmap.recipe_args(recipe, seed=seed, **dict(options or {}))
    start = time.perf_counter()
    (hw, hv), hub_report = load_space(hub_space, max_words=max_words, lowercase=lowercase)
    stats: dict[str, Any] = {
        "language": language,
        "hub": hub,
        "recipe": recipe,
        "recipe_used": recipe,
        "options": dict(options or {}),
        "seed": seed,
        "hub_space": hub_report,
    }
    if language == hub:
        out = (hw, np.asarray(vecmap.normalize(hv, args.normalize), dtype=np.float32))
        stats.update(mapped=False, role="hub", normalize=list(args.normalize), recipe_used=None)
        return _finish(out, None, out_stem, pair_path, stats_path, stats, start)
    (xw, xv), report = load_space(space, max_words=max_words, lowercase=lowercase)
    stats["space"] = report
    unmapped = (xw, np.asarray(vecmap.normalize(xv, args.normalize), dtype=np.float32))
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
            stats.update(mapped=False, role="unmapped", recipe_used=None, reason=msg)
            return _finish(unmapped, None, out_stem, pair_path, stats_path, stats, start)
    where = f"{dictionary or 'no dictionary'}: {hub}-{language}, recipe {recipe!r}"
    kwargs: dict[str, Any] = {
        "src_words": xw,
        "trg_words": hw,
        "dictionary": pairs,
        "budget_mb": budget_mb,
    }
    # The last checkpoint stays until the outputs are written.
    resumable = {"checkpoint_dir": checkpoint_dir, "keep_checkpoint": True}
    deg = vecmap.degenerate_dictionary(xv, hv, args, device=device, **kwargs)
    if deg is not None:
        args = _degenerate(deg, where, action, fallback, pairs is not None, stats, seed)
        if args is None:
            return _finish(unmapped, None, out_stem, pair_path, stats_path, stats, start)
    try:
        mapping = vecmap.map_embeddings(
            xv, hv, args, device=device, progress=progress, **kwargs, **resumable
        )
    except vecmap.DegenerateDictionaryError as exc:
        if not args.self_learning or deg is not None:
            raise
        # Only self-learning's induced dictionary with one induction direction cannot be
        # tested before the run (see vecmap.degenerate_dictionary).
        info = {"reason": f"self-learning's induced dictionary: {exc}", "side": None}
        args = _degenerate(info, where, action, fallback, pairs is not None, stats, seed)
        if args is None:
            return _finish(unmapped, None, out_stem, pair_path, stats_path, stats, start)
        mapping = vecmap.map_embeddings(
            xv, hv, args, device=device, progress=progress, **kwargs, **resumable
        )
    out = (xw, np.asarray(vecmap.to_hub(mapping, xv), dtype=np.float32))
    stats.update(mapped=True, role="mapped", vecmap=mapping.stats)
    if mapping.stats.get("objective"):
        # Self-learning's objective per iteration: a metric history in MLflow.
        stats["curves"] = {
            "objective": mapping.stats["objective"],
            "keep_prob": mapping.stats["keep_prob"],
        }
    pair = (xw, vecmap.apply(mapping, xv, "src", device=device), mapping.trg_transform)
    written = _finish(out, pair, out_stem, pair_path, stats_path, stats, start)
    if checkpoint_dir is not None:
        vecmap.remove_checkpoint(checkpoint_dir)
    return written


def _degenerate(
    info: dict[str, Any],
    where: str,
    action: str,
    fallback: str,
    has_dictionary: bool,
    stats: dict[str, Any],
    seed: int,
) -> vecmap.VecMapArgs | None:
    """Apply ``action`` to a degenerate dictionary: raise, the fallback recipe's options, or
    None (keep the language unmapped); the outcome goes into ``stats``."""
    msg = f"{where}: {info['reason']}"
    stats["degenerate"] = {**info, "action": action}
    if action == "error":
        raise InputError(
            msg + "; or set align.degenerate_dictionary.action: fallback or keep-unmapped"
        )
    fallback_args = vecmap.recipe_args(fallback, seed=seed)
    if action == "fallback" and fallback_args.init == "dictionary" and not has_dictionary:
        action = "keep-unmapped"
        msg += f"; the fallback recipe {fallback!r} needs a dictionary and there is none"
        stats["degenerate"]["action"] = action
    if action == "keep-unmapped":
        log.warning("%s: left unmapped (align.degenerate_dictionary)", msg)
        stats.update(mapped=False, role="unmapped", recipe_used=None, reason=msg)
        return None
    log.warning(
        "%s: mapped with the fallback recipe %r (align.degenerate_dictionary)", msg, fallback
    )
    stats["degenerate"]["fallback_recipe"] = fallback
    stats["recipe_used"] = fallback
    return fallback_args


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
    out: Space,
    pair: tuple[list[str], np.ndarray, np.ndarray] | None,
    out_stem: PathLike,
    pair_path: PathLike | None,
    stats_path: PathLike,
    stats: dict[str, Any],
    start: float,
) -> dict[str, Any]:
    """Write the hub-space output, the pair file (None: the output with the identity, an
    unmapped language or the hub) and the stats."""
    save_npy_space(out, out_stem)
    if pair_path is not None:
        if pair is None:
            identity_pair(pair_path, out)
        else:
            save_pair(pair_path, *pair)
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
    reading: Mapping[str, Any] | None = None,
    budget_mb: float | None = None,
) -> dict[str, Any]:
    """VecMap on two files, as the public tool's ``map_embeddings.py`` (``xlalign map``).

    ``budget_mb``: VecMap's memory budget (:func:`xlalign.mapping.vecmap.map_embeddings`).
    ``reading`` holds :func:`xlalign.static.vectors.load_space`'s ``encoding_errors`` and
    ``duplicates`` for both files; what they did is in the stats (``source``, ``target``).

    ``dictionary`` holds ``source target`` pairs. Writes both mapped spaces as word2vec
    text (what VecMap's ``eval_translation.py`` scores); with ``hub`` the target stays in
    its own normalised space and the source is expressed in it (same cross-lingual dot
    products, see :func:`xlalign.mapping.vecmap.to_hub`): cosine BLI of those is then
    hub-space BLI, equal to VecMap's only for orthogonal recipes.
    """
    args = vecmap.recipe_args(recipe, seed=seed, **dict(options or {}))
    (sw, sv), s_report = load_space(src, max_words=max_words, **dict(reading or {}))
    (tw, tv), t_report = load_space(trg, max_words=max_words, **dict(reading or {}))
    # A dictionary induced from spaces read with surrogateescape holds their words' bytes.
    dict_errors = (
        "surrogateescape"
        if dict(reading or {}).get("encoding_errors") == "surrogateescape"
        else "strict"
    )
    pairs = read_pairs(dictionary, encoding_errors=dict_errors) if dictionary is not None else None
    try:
        mapping = vecmap.map_embeddings(
            sv,
            tv,
            args,
            src_words=sw,
            trg_words=tw,
            dictionary=pairs,
            device=device,
            budget_mb=budget_mb,
        )
    except InputError as exc:
        if dictionary is not None and str(exc).startswith(vecmap.SEED_DICTIONARY_ERRORS):
            raise InputError(f"{dictionary}: {exc}") from None  # name the file
        raise
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
