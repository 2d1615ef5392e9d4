"""X2S-MA's last step: per language, the mapped or the unmapped space, by validation BLI.

:func:`select_space` scores both candidates against the hub on the validation
dictionaries (:func:`xlalign.evaluation.bli.bli_direction`, both directions averaged)
and writes the winner, with the scores and the reason for the choice in its stats. The
mapped candidate is scored in the pair's own mapped spaces (:mod:`xlalign.mapping.pairs`,
VecMap's evaluation), the unmapped one in the normalised spaces; the winner's pair file
is written beside it for the BLI of the selected space.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from xlalign.core.io import PathLike, read_json, write_json
from xlalign.evaluation.bli import bli_direction
from xlalign.mapping import vecmap
from xlalign.mapping.pairs import identity_pair, load_pair, pair_spaces, save_pair
from xlalign.static.vectors import load_space, npy_stem, save_npy_space

log = logging.getLogger(__name__)


def _direction_score(result: Mapping[str, Any], retrieval: str, metric: str) -> float | None:
    r = result.get(retrieval)
    return None if r is None else float(r[metric])


def select_space(
    *,
    language: str,
    hub: str,
    mapped: PathLike,
    mapped_pair: PathLike,
    unmapped: PathLike,
    hub_space: PathLike,
    valid: Mapping[str, PathLike],
    mapped_stats: PathLike | None = None,
    normalize: Sequence[str],
    out_stem: PathLike,
    vec_path: PathLike,
    stats_path: PathLike,
    pair_path: PathLike,
    metric: str = "p@1",
    retrieval: str = "csls",
    csls_k: int = 10,
    min_margin: float = 0.0,
    enabled: bool = True,
    device: str | None = None,
    budget_mb: float | None = None,
) -> dict[str, Any]:
    """Keep the mapped or the unmapped space of one language by validation BLI.

    The mapped candidate is scored in the pair's own spaces (``mapped_pair``, written by
    the mapping step); the unmapped candidate is the language's own vectors with the same
    normalisation as the hub, against the hub's normalised vectors. The score is
    ``metric`` with ``retrieval`` averaged over both directions (the paper's Table 5
    convention); the mapped space is kept when it beats the unmapped one by more than
    ``min_margin``. A language the mapping step left unmapped (``mapped_stats`` says so)
    keeps its unmapped space. The choice and its reason are written to the stats, with
    the mapping's outcome (``mapping``: recipe used, degenerate dictionary); the chosen
    candidate's pair file to ``pair_path``. ``budget_mb``: the validation BLI's memory
    budget (:func:`xlalign.evaluation.bli.evaluate_bli`).
    """
    (mw, mv), _ = load_space(mapped)
    stats: dict[str, Any] = {"language": language, "hub": hub, "metric": metric}
    map_info = read_json(mapped_stats) if mapped_stats is not None else {}
    stats["mapping"] = {
        k: map_info[k]
        for k in ("recipe", "recipe_used", "mapped", "role", "reason", "degenerate")
        if k in map_info
    }
    chosen_pair = None  # the mapped pair file; else the output with the identity
    if language == hub:
        chosen, reason = "hub", "the hub language is never mapped"
        out = (mw, mv)
    elif map_info.get("mapped") is False:
        chosen = "unmapped"
        reason = f"not mapped: {map_info.get('reason', 'see the mapping stats')}"
        out = (mw, mv)  # the mapping step wrote the normalised, unmapped vectors
    else:
        (uw, uv), _ = load_space(unmapped)
        unmapped_sp = (uw, np.asarray(vecmap.normalize(uv, list(normalize)), dtype=np.float32))
        hub_sp, _ = load_space(hub_space)
        pair_lang, pair_hub, _ = pair_spaces(mapped_pair, hub_sp)
        scores: dict[str, dict[str, Any]] = {}
        candidates = (("mapped", pair_lang, pair_hub), ("unmapped", unmapped_sp, hub_sp))
        for name, cand, hub_side in candidates:
            per_dir: dict[str, Any] = {}
            for direction, path in valid.items():
                src = direction.split("-")[0]
                query, target = (hub_side, cand) if src == hub else (cand, hub_side)
                res = bli_direction(
                    query,
                    target,
                    path,
                    retrievals=[retrieval],
                    csls_k=csls_k,
                    ks=(1, 5, 10),
                    oov="skip",
                    device=device,
                    budget_mb=budget_mb,
                )
                per_dir[direction] = _direction_score(res, retrieval, metric)
            values = [v for v in per_dir.values() if v is not None]
            scores[name] = {
                "per_direction": per_dir,
                "mean": float(np.mean(values)) if values else None,
            }
        stats["validation"] = scores
        m, u = scores["mapped"]["mean"], scores["unmapped"]["mean"]
        if not enabled:
            chosen, reason = "mapped", "selection disabled (align.selection.enabled: false)"
        elif m is None or u is None:
            chosen = "mapped"
            reason = "no validation pair in vocabulary: kept the mapped space by default"
        elif m > u + min_margin:
            chosen = "mapped"
            reason = f"validation {metric} ({retrieval}) mapped {m:.4f} > unmapped {u:.4f}"
            if min_margin:
                reason += f" + margin {min_margin}"
        else:
            chosen = "unmapped"
            reason = (
                f"validation {metric} ({retrieval}) mapped {m:.4f} <= unmapped {u:.4f}"
                + (f" + margin {min_margin}" if min_margin else "")
                + ": mapping did not help"
            )
        out = (mw, mv) if chosen == "mapped" else unmapped_sp
        chosen_pair = mapped_pair if chosen == "mapped" else None
    log.info("%s: kept the %s space (%s)", language, chosen, reason)
    stats.update(chosen=chosen, reason=reason, words=len(out[0]))
    save_npy_space(out, npy_stem(out_stem), vec_path=vec_path)
    if chosen_pair is None:
        identity_pair(pair_path, out)
    else:
        save_pair(pair_path, *load_pair(chosen_pair))
    write_json(stats_path, stats)
    return stats
