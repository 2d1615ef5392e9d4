"""A language's pair with the hub in VecMap's own output spaces, for BLI, selection, induction.

The workflow writes every language in the hub's space (:func:`xlalign.mapping.vecmap.to_hub`,
``normalize(x) S T^T`` next to the hub's ``normalize(z)``): one English space for all
languages, which is what the later stages consume. VecMap's evaluation
(``eval_translation.py``) scores a pair in the pair's own mapped spaces instead, ``xw =
normalize(x) S`` and ``zw = normalize(z) T``, rows length-normalised. The two give the
same cosines only when ``T`` is orthogonal (the ``orthogonal`` / ``acl2017`` recipes);
with whitening, re-weighting or de-whitening (``supervised``, ``unsupervised``,
``aaai2018`` ...) the rankings differ. So BLI, the selection's validation BLI and
dictionary induction use the pair's spaces, rebuilt from a *pair file*.

A pair file (``<language>.pair.npz``, written beside the hub-space output) holds
``words`` and ``vectors`` (the language's rows in the pair's space, ``xw``) and
``hub_transform`` (``T``, d x k): the hub side is the hub's written, normalised vectors
times ``T``. A language left unmapped, and the hub itself, have their normalised vectors
and the identity, so their pair space is their hub-space output.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, atomic_open, read_json
from xlalign.evaluation.bli import bli_record
from xlalign.static.vectors import Space, load_space

log = logging.getLogger(__name__)

PAIR_KEYS = ("words", "vectors", "hub_transform")


def save_pair(
    path: PathLike, words: Sequence[str], vectors: np.ndarray, hub_transform: np.ndarray
) -> None:
    """Write a pair file (module docstring), atomically."""
    vectors = np.asarray(vectors, dtype=np.float32)
    hub_transform = np.asarray(hub_transform, dtype=np.float64)
    if vectors.ndim != 2 or vectors.shape[0] != len(words):
        raise InputError(f"{path}: {len(words)} words but vectors of shape {vectors.shape}")
    if hub_transform.ndim != 2 or hub_transform.shape[1] != vectors.shape[1]:
        raise InputError(
            f"{path}: hub transform of shape {hub_transform.shape} does not give the "
            f"{vectors.shape[1]} columns of the language's vectors"
        )
    with atomic_open(path, "wb") as fh:
        np.savez(
            fh,
            words=np.asarray(list(words), dtype=str),
            vectors=vectors,
            hub_transform=hub_transform,
        )


def load_pair(path: PathLike) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``(words, vectors, hub_transform)`` of a pair file; :class:`InputError` if malformed."""
    try:
        with np.load(path, allow_pickle=False) as data:
            missing = [k for k in PAIR_KEYS if k not in data.files]
            if missing:
                raise InputError(f"{path}: not a pair file, missing {missing}")
            words = [str(w) for w in data["words"]]
            vectors, transform = data["vectors"], data["hub_transform"]
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not a readable pair file ({exc})") from exc
    if vectors.ndim != 2 or vectors.shape[0] != len(words):
        raise InputError(f"{path}: {len(words)} words but vectors of shape {vectors.shape}")
    if transform.ndim != 2 or transform.shape[1] != vectors.shape[1]:
        raise InputError(f"{path}: hub transform of shape {transform.shape} for {vectors.shape}")
    return words, vectors, transform


def identity_pair(path: PathLike, space: Space) -> None:
    """The pair file of an unmapped language (or the hub): its normalised vectors, identity."""
    words, vecs = space
    save_pair(path, words, vecs, np.eye(np.asarray(vecs).shape[1]))


def is_identity(transform: np.ndarray) -> bool:
    t = np.asarray(transform)
    return t.shape[0] == t.shape[1] and bool(np.array_equal(t, np.eye(t.shape[0])))


def pair_spaces(pair: PathLike, hub: Space) -> tuple[Space, Space, bool]:
    """The pair's own spaces ``(language, hub side)`` from a pair file and the hub's
    written (normalised) space, and whether they differ from the hub space (a hub
    transform other than the identity: not an orthogonal mapping, nor an unmapped
    language)."""
    words, vectors, transform = load_pair(pair)
    hw, hv = hub
    if transform.shape[0] != np.asarray(hv).shape[1]:
        raise InputError(
            f"{pair}: hub transform for dimension {transform.shape[0]}, but the hub space "
            f"has dimension {np.asarray(hv).shape[1]}"
        )
    if is_identity(transform):
        return (words, vectors), (hw, hv), False
    hub_side = (np.asarray(hv, dtype=np.float64) @ transform).astype(np.float32)
    return (words, vectors), (hw, hub_side), True


def alignment_summary(stats: Mapping[str, Any]) -> dict[str, Any]:
    """What happened to one language's mapping, from the stats of ``select_space`` (which
    carry the mapping's under ``mapping``) or of ``map_to_hub``; ``note`` is a short
    reason for the tables' footnotes when the language fell back to another recipe or
    stayed unmapped (None otherwise)."""
    mapping = stats.get("mapping", stats)
    out: dict[str, Any] = {
        "recipe": mapping.get("recipe"),
        "recipe_used": mapping.get("recipe_used", mapping.get("recipe")),
        "mapped": mapping.get("mapped"),
        "chosen": stats.get("chosen"),
    }
    deg = mapping.get("degenerate")
    if deg:
        out["degenerate"] = {k: deg.get(k) for k in ("action", "side", "rank", "dimension")}
    why = None
    if deg and deg.get("rank") is not None:
        why = (
            f"degenerate training dictionary ({deg.get('side')} side of rank "
            f"{deg['rank']} < {deg.get('dimension')} dimensions)"
        )
    elif deg:
        why = "degenerate dictionary induced by self-learning"
    note = None
    if mapping.get("role") == "hub" or stats.get("chosen") == "hub":
        pass
    elif mapping.get("mapped") is False:
        note = f"unmapped: {why or 'training dictionary without a pair in vocabulary'}"
    elif out["recipe_used"] != out["recipe"]:
        note = f"mapped with {out['recipe_used']} instead of {out['recipe']}: {why}"
        if stats.get("chosen") == "unmapped":
            note += "; then kept unmapped by validation BLI"
    elif stats.get("chosen") == "unmapped":
        note = "kept unmapped: validation BLI of the mapped space not better"
    out["note"] = note
    return out


def bli_pair_record(
    *,
    space_name: str,
    seed: int,
    language: str,
    hub: str,
    space: PathLike,
    hub_space: PathLike,
    dictionaries: Mapping[str, PathLike],
    out_path: PathLike,
    pair: PathLike | None = None,
    alignment_stats: PathLike | None = None,
    **options: Any,
) -> dict[str, Any]:
    """BLI of one language against the hub, in the pair's own spaces when it was mapped.

    With ``pair`` (aligned spaces), both directions are scored in the pair's mapped spaces
    as VecMap's ``eval_translation.py`` does (the record's ``results``); where those differ
    from the hub space, the BLI of the hub-space outputs is kept as ``hub_space_bli``, a
    separate figure that is not VecMap's protocol. Without ``pair`` (spaces never mapped), the
    given spaces are scored. ``alignment_stats`` (the selection's or the mapping's stats)
    adds what happened to the language's mapping (``alignment``, see
    :func:`alignment_summary`). ``options`` go to :func:`xlalign.evaluation.bli.bli_record`.
    """
    extra: dict[str, Any] = {}
    pair_sp = None
    if pair is not None:
        hub_sp, _ = load_space(hub_space)
        pair_sp = pair_spaces(pair, hub_sp)
        extra["pair"] = str(pair)
    if alignment_stats is not None:
        extra["alignment"] = alignment_summary(read_json(alignment_stats))
    return bli_record(
        space_name=space_name,
        seed=seed,
        language=language,
        hub=hub,
        space=space,
        hub_space=hub_space,
        dictionaries=dictionaries,
        out_path=out_path,
        pair=pair_sp,
        extra=extra,
        **options,
    )
