"""Bilingual lexicon induction (BLI): translation retrieval between two embedding spaces.

MUSE's conventions: a test dictionary has one ``source target`` pair per line, several
lines per source word for several gold translations; a source word counts as correct at k
when any of its gold translations is among its k nearest target words.

Retrieval is by cosine (``"nn"``) or by CSLS (``"csls"``, Conneau et al. 2018):
``CSLS(x, y) = 2 cos(x, y) - r_T(x) - r_S(y)``, where ``r_T(x)`` is the mean cosine of the
source word ``x`` to its ``k`` nearest target words and ``r_S(y)`` the mean cosine of the
target word ``y`` to its ``k`` nearest source words, both over the whole vocabularies.
CSLS penalises "hubs", target words that are near many source words.

Ranks are exact: the rank of a query is ``1 +`` the number of target words scoring
strictly higher than its best-scoring gold translation, over the full target vocabulary
(ties count in the query's favour; with float vectors there are none in practice). P@k is
the share of queries of rank at most k; MRR the mean of ``1 / rank``.

Out-of-vocabulary (OOV) policy, ``oov``:

* ``"skip"`` (MUSE): only source words that are in the source vocabulary and have at least
  one gold translation in the target vocabulary are evaluated; P@k and MRR are over those.
  The coverage is reported beside the scores so that numbers over different vocabularies
  are not confused.
* ``"miss"``: the same words are retrieved, but every other dictionary source word counts
  as a miss, so P@k and MRR are over all source words of the dictionary (comparable across
  vocabularies of different sizes).

Retrieval is batched over query rows (and the CSLS penalties over target rows), each block
holding ``rows x vocabulary`` scores and what is derived from them, as many rows as fit a
memory budget (``budget_mb``, the configuration's ``memory.block_mb``; or ``batch_size``
rows when given): the memory is the two spaces plus one budget at any vocabulary size. It
runs on a GPU when there is one.

Over files, :func:`bli_record` evaluates one language against the hub in both directions
(:func:`bli_direction` each) and writes the result record the tables are built from. A
mapped language is scored in the pair's own mapped spaces, as VecMap's
``eval_translation.py`` does (``xlalign.mapping.pairs`` builds them); the hub space,
where all languages share English's normalised space, gives a separately named figure.

Each direction of a record also keeps its queries, so that two spaces can be compared
query by query (a paired bootstrap, :mod:`xlalign.reporting.significance`): ``queries``,
the dictionary's source words in file order joined by single spaces (MUSE words hold no
whitespace), and per retrieval method and k a string ``hits@k`` of one mark per query:
"1" correct at k, "0" not, "-" not evaluated (out of vocabulary). Strings, not lists, to
keep the indented JSON records short; ``xlalign.reporting.examples.bli_query_hits``
reads them back.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from xlalign.core.device import resolve_device
from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, write_json
from xlalign.core.memory import rows_per_block
from xlalign.dictionaries.split import read_pairs
from xlalign.static.vectors import Space, load_space

RETRIEVALS = ("nn", "csls")
OOV_POLICIES = ("skip", "miss")
#: The mark of a query that was not evaluated, in a direction's ``hits@k`` string.
HITS_NOT_EVALUATED = "-"

log = logging.getLogger(__name__)


def read_dictionary(
    path: PathLike, *, lowercase: bool = False, encoding_errors: str = "strict"
) -> dict[str, list[str]]:
    """A MUSE-format dictionary: source word -> gold translations (in file order).

    Read by the one MUSE reader (:func:`xlalign.core.formats.muse.read_pairs`): a line
    without two fields, or a header line, is refused with its line, not counted as a query.
    ``encoding_errors="surrogateescape"`` reads a dictionary induced from spaces read that
    way (their words written back as their bytes); any other value of the spaces'
    ``--encoding-errors`` reads the dictionary strictly.
    """
    errors = "surrogateescape" if encoding_errors == "surrogateescape" else "strict"
    pairs: dict[str, list[str]] = {}
    for src, tgt in read_pairs(path, lowercase=lowercase, encoding_errors=errors):
        pairs.setdefault(src, []).append(tgt)
    if not pairs:
        raise InputError(f"{path}: empty dictionary; expected 'source target' lines")
    return pairs


@dataclass(frozen=True)
class BLIResult:
    """Scores of one BLI run and what they were computed over."""

    precision: dict[int, float]  # k -> P@k
    evaluated: int  # source words retrieved (in vocabulary, some gold in vocabulary)
    total: int  # source words in the dictionary
    retrieval: str  # "nn" or "csls"
    mrr: float = 0.0  # mean reciprocal rank of the best-ranked gold translation
    csls_k: int | None = None  # neighbourhood size CSLS used (None for "nn")
    #: the size asked for, when larger than a vocabulary and so capped to ``csls_k``
    csls_k_asked: int | None = None
    oov: str = "skip"  # OOV policy: "skip" (MUSE) or "miss"
    pairs_total: int = 0  # distinct (source, target) pairs in the dictionary
    pairs_in_vocab: int = 0  # pairs with both words in the vocabularies
    skipped_src_oov: int = 0  # source words not in the source vocabulary
    skipped_gold_oov: int = 0  # source words in vocabulary whose golds are all OOV
    #: rank (1 = correct at 1) of every evaluated source word, in dictionary order
    ranks: dict[str, int] = field(default_factory=dict, repr=False, compare=False)

    @property
    def coverage(self) -> float:
        """Share of dictionary source words that were evaluated."""
        return self.evaluated / self.total if self.total else 0.0

    @property
    def pair_coverage(self) -> float:
        """Share of dictionary pairs with both words in the vocabularies."""
        return self.pairs_in_vocab / self.pairs_total if self.pairs_total else 0.0

    @property
    def denominator(self) -> int:
        """Number of source words P@k and MRR are averaged over (depends on ``oov``)."""
        return self.total if self.oov == "miss" else self.evaluated

    def as_dict(self) -> dict[str, float | int | str | None]:
        out: dict[str, float | int | str | None] = {f"p@{k}": v for k, v in self.precision.items()}
        out.update(
            mrr=self.mrr,
            retrieval=self.retrieval,
            csls_k=self.csls_k,
            **({} if self.csls_k_asked is None else {"csls_k_asked": self.csls_k_asked}),
            oov=self.oov,
            evaluated=self.evaluated,
            total=self.total,
            denominator=self.denominator,
            coverage=self.coverage,
            pairs_total=self.pairs_total,
            pairs_in_vocab=self.pairs_in_vocab,
            pair_coverage=self.pair_coverage,
            skipped_src_oov=self.skipped_src_oov,
            skipped_gold_oov=self.skipped_gold_oov,
        )
        return out


# --------------------------------------------------------------------------- shared helpers


def check_space_pair(
    src_words: Sequence[str],
    src_vecs: np.ndarray,
    tgt_words: Sequence[str],
    tgt_vecs: np.ndarray,
) -> None:
    """Refuse spaces that retrieval cannot use: shapes, dimensions, NaN, duplicate words."""
    for side, words, vecs in (("source", src_words, src_vecs), ("target", tgt_words, tgt_vecs)):
        shape = getattr(vecs, "shape", None)
        if shape is None or len(shape) != 2 or shape[0] != len(words):
            raise InputError(
                f"{side} space: expected a ({len(words)}, dim) matrix for {len(words)} words, "
                f"got shape {shape}"
            )
        if not words:
            raise InputError(f"{side} space: no words; expected a non-empty vocabulary")
        if len(set(words)) != len(words):
            dup = next(w for w, n in Counter(words).items() if n > 1)
            raise InputError(f"{side} space: duplicate word {dup!r}; expected each word once")
        if not np.isfinite(vecs).all():
            raise InputError(
                f"{side} space: non-finite values (NaN or inf); check it with "
                "xlalign.static.vectors.check_space"
            )
    if src_vecs.shape[1] != tgt_vecs.shape[1]:
        raise InputError(
            f"spaces of different dimension: source {src_vecs.shape[1]}, target {tgt_vecs.shape[1]}"
        )


def check_retrieval(retrieval: str, csls_k: int) -> None:
    """Refuse an unknown retrieval method or a CSLS neighbourhood below 1."""
    if retrieval not in RETRIEVALS:
        raise ConfigError(f"retrieval: unknown method {retrieval!r}; expected one of {RETRIEVALS}")
    if retrieval == "csls" and (not isinstance(csls_k, int) or csls_k < 1):
        raise ConfigError(f"csls_k: expected a positive integer, got {csls_k!r}")


def block_rows(
    n_cols: int,
    batch_size: int | None,
    budget_mb: float | None = None,
    *,
    bytes_per_col: int = 4,
    bytes_per_row: int = 0,
) -> int:
    """Rows per block of ``rows x n_cols`` scores: ``batch_size`` when given (it wins over
    the budget), else as many rows as fit ``budget_mb`` (None: the default budget of
    :mod:`xlalign.core.memory`), each row holding ``bytes_per_col`` working bytes per
    score (the float32 score and what is derived from it element by element) and
    ``bytes_per_row`` more (the query's vector, its top-k values and int64 indices)."""
    if batch_size is not None:
        if batch_size < 1:
            raise ConfigError(f"batch_size: expected a positive integer, got {batch_size}")
        return batch_size
    return rows_per_block(bytes_per_col * max(n_cols, 1) + bytes_per_row, budget_mb)


def unit_rows(vecs: np.ndarray, device: torch.device) -> torch.Tensor:
    """Rows scaled to unit length (float32 on ``device``); a zero row stays zero."""
    x = torch.as_tensor(np.asarray(vecs), dtype=torch.float32, device=device)
    return x / x.norm(dim=1, keepdim=True).clamp_min(1e-12)


def mean_topk_similarity(
    queries: torch.Tensor,
    keys: torch.Tensor,
    k: int,
    *,
    batch_size: int | None = None,
    budget_mb: float | None = None,
    progress: bool = False,
    desc: str = "CSLS neighbourhood",
) -> torch.Tensor:
    """For every (unit) query row, the mean cosine to its ``k`` nearest (unit) key rows.

    ``k`` is capped at the number of keys. Batched over query rows: a block holds its
    ``rows x keys`` float32 similarities and their top-k (``k`` float32 values and
    ``k`` int64 indices per row), ``batch_size`` rows or what fits ``budget_mb``.
    """
    k = min(k, keys.shape[0])
    out = torch.empty(queries.shape[0], dtype=torch.float32, device=queries.device)
    rows = block_rows(keys.shape[0], batch_size, budget_mb, bytes_per_row=12 * k)
    for start in tqdm(
        range(0, queries.shape[0], rows), desc=desc, unit="block", disable=not progress
    ):
        sims = queries[start : start + rows] @ keys.T
        out[start : start + rows] = sims.topk(k, dim=1).values.mean(dim=1)
        del sims  # freed before the next block is made, not after
    return out


def csls_penalties(
    src: torch.Tensor,
    tgt: torch.Tensor,
    k: int,
    *,
    src_rows: torch.Tensor | None = None,
    batch_size: int | None = None,
    budget_mb: float | None = None,
    progress: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """CSLS's hubness terms ``(r_T, r_S)`` of two spaces of unit rows.

    ``r_T[i]``: mean cosine of source row ``i`` (of ``src_rows`` when given, else of every
    row) to its ``k`` nearest target rows; ``r_S[j]``: mean cosine of target row ``j`` to
    its ``k`` nearest source rows over *all* of ``src``. Blocks as
    :func:`mean_topk_similarity`'s.
    """
    queries = src if src_rows is None else src[src_rows]
    opts: dict[str, Any] = {"batch_size": batch_size, "budget_mb": budget_mb, "progress": progress}
    r_t = mean_topk_similarity(queries, tgt, k, desc="CSLS r_T", **opts)
    r_s = mean_topk_similarity(tgt, src, k, desc="CSLS r_S", **opts)
    return r_t, r_s


def score_block(
    queries: torch.Tensor,
    keys: torch.Tensor,
    r_queries: torch.Tensor | None = None,
    r_keys: torch.Tensor | None = None,
) -> torch.Tensor:
    """Scores of query rows against all key rows: cosine, or CSLS when penalties are given."""
    scores = queries @ keys.T
    if r_keys is not None:
        scores.mul_(2).sub_(r_keys[None, :])
        if r_queries is not None:
            scores.sub_(r_queries[:, None])
    return scores


# --------------------------------------------------------------------------- evaluation


@dataclass
class _Plan:
    queries: list[int]  # source rows to retrieve
    words: list[str]  # their words
    golds: list[list[int]]  # target rows of their in-vocabulary golds
    pairs_total: int
    pairs_in_vocab: int
    src_oov: int  # source words not in the source vocabulary
    gold_oov: int  # in-vocabulary source words whose golds are all OOV
    tgt_oov_words: int  # distinct gold words not in the target vocabulary


def _plan(
    src_words: Sequence[str], tgt_words: Sequence[str], dictionary: dict[str, list[str]]
) -> _Plan:
    src_index = {w: i for i, w in enumerate(src_words)}
    tgt_index = {w: i for i, w in enumerate(tgt_words)}
    plan = _Plan([], [], [], 0, 0, 0, 0, 0)
    tgt_oov: set[str] = set()
    for src, tgts in dictionary.items():
        unique = list(dict.fromkeys(tgts))
        plan.pairs_total += len(unique)
        tgt_oov.update(t for t in unique if t not in tgt_index)
        gold = sorted({tgt_index[t] for t in unique if t in tgt_index})
        if src not in src_index:
            plan.src_oov += 1
            continue
        if not gold:
            plan.gold_oov += 1
            continue
        plan.pairs_in_vocab += len(gold)
        plan.queries.append(src_index[src])
        plan.words.append(src)
        plan.golds.append(gold)
    plan.tgt_oov_words = len(tgt_oov)
    return plan


def evaluate_bli(
    src_words: Sequence[str],
    src_vecs: np.ndarray,
    tgt_words: Sequence[str],
    tgt_vecs: np.ndarray,
    dictionary: dict[str, list[str]],
    *,
    retrieval: str = "nn",
    csls_k: int = 10,
    ks: Sequence[int] = (1, 5, 10),
    oov: str = "skip",
    batch_size: int | None = None,
    budget_mb: float | None = None,
    device: str | torch.device | None = None,
    progress: bool = False,
) -> BLIResult:
    """P@k and MRR of translation retrieval from the source space into the target space.

    ``dictionary`` maps source words to gold translations (:func:`read_dictionary`).
    ``retrieval`` is ``"nn"`` (cosine) or ``"csls"`` (with ``csls_k`` neighbours); ``oov``
    the OOV policy (module docstring). ``batch_size`` is the number of query rows per block;
    when None (the default), as many as fit ``budget_mb`` MB of working arrays (None: the
    default budget of :mod:`xlalign.core.memory`; the configuration's ``memory.block_mb``).
    Nothing of ``vocabulary x vocabulary`` size is held. Raises :class:`InputError` for spaces of
    different dimensions, an empty dictionary, or one with no pair in the vocabularies.
    """
    check_retrieval(retrieval, csls_k)
    if oov not in OOV_POLICIES:
        raise ConfigError(f"oov: unknown policy {oov!r}; expected one of {OOV_POLICIES}")
    if not ks or any(not isinstance(k, int | np.integer) or k < 1 for k in ks):
        raise ConfigError(f"ks: expected positive integers, got {list(ks)!r}")
    ks = [int(k) for k in ks]
    check_space_pair(src_words, src_vecs, tgt_words, tgt_vecs)
    if not dictionary:
        raise InputError("empty dictionary (0 pairs read); expected source -> gold translations")
    plan = _plan(src_words, tgt_words, dictionary)
    if not plan.queries:
        raise InputError(
            f"no dictionary pair has both words in the vocabularies: {plan.pairs_total} pairs "
            f"read for {len(dictionary)} source words; {plan.src_oov} source words are not in "
            f"the source vocabulary ({len(src_words)} words), {plan.tgt_oov_words} target "
            f"words are not in the target vocabulary ({len(tgt_words)} words)"
        )

    dev = resolve_device(device)
    src = unit_rows(src_vecs, dev)
    tgt = unit_rows(tgt_vecs, dev)
    rows = torch.as_tensor(plan.queries, dtype=torch.long, device=dev)
    r_t = r_s = None
    csls_k_used = min(csls_k, len(src_words), len(tgt_words))
    if retrieval == "csls":
        if csls_k_used < csls_k:
            log.warning(
                "csls_k %d is larger than a vocabulary (%d source, %d target words); "
                "using %d neighbours",
                csls_k,
                len(src_words),
                len(tgt_words),
                csls_k_used,
            )
        r_t, r_s = csls_penalties(
            src,
            tgt,
            csls_k_used,
            src_rows=rows,
            batch_size=batch_size,
            budget_mb=budget_mb,
            progress=progress,
        )
    # Gold rows padded with the first gold (a repeat does not change the best gold score).
    width = max(len(g) for g in plan.golds)
    gold = torch.as_tensor(
        [g + [g[0]] * (width - len(g)) for g in plan.golds], dtype=torch.long, device=dev
    )
    ranks = np.empty(len(plan.queries), dtype=np.int64)
    # Per row: the float32 scores and the boolean comparison with the best gold score,
    # the query's vector and its gold scores (float32) and rows (int64).
    step = block_rows(
        tgt.shape[0],
        batch_size,
        budget_mb,
        bytes_per_col=5,
        bytes_per_row=4 * src.shape[1] + 12 * width,
    )
    for start in tqdm(
        range(0, len(plan.queries), step), desc="BLI", unit="block", disable=not progress
    ):
        block = slice(start, start + step)
        scores = score_block(src[rows[block]], tgt, None if r_t is None else r_t[block], r_s)
        # Gold scores come from the same tensor as the comparison, so the rank is exact.
        best = scores.gather(1, gold[block]).max(dim=1).values
        ranks[block] = (1 + (scores > best[:, None]).sum(dim=1)).cpu().numpy()
        del scores, best  # freed before the next block is made, not after

    denominator = len(dictionary) if oov == "miss" else len(plan.queries)
    precision = {k: int((ranks <= k).sum()) / denominator for k in ks}
    mrr = float((1.0 / ranks).sum() / denominator)
    return BLIResult(
        precision=precision,
        evaluated=len(plan.queries),
        total=len(dictionary),
        retrieval=retrieval,
        mrr=mrr,
        csls_k=csls_k_used if retrieval == "csls" else None,
        csls_k_asked=csls_k if retrieval == "csls" and csls_k_used < csls_k else None,
        oov=oov,
        pairs_total=plan.pairs_total,
        pairs_in_vocab=plan.pairs_in_vocab,
        skipped_src_oov=plan.src_oov,
        skipped_gold_oov=plan.gold_oov,
        ranks=dict(zip(plan.words, ranks.tolist(), strict=True)),
    )


def hits_key(k: int) -> str:
    """The key of the per-query hits at ``k`` in a direction's scores (``"hits@1"``)."""
    return f"hits@{k}"


def query_hits(result: BLIResult, queries: Sequence[str], ks: Sequence[int]) -> dict[str, str]:
    """Per-query marks at each k, one character per word of ``queries`` (the dictionary's
    source words): "1" when a gold translation is among the k nearest, "0" when not,
    :data:`HITS_NOT_EVALUATED` when the word was not evaluated (out of vocabulary)."""
    out = {}
    for k in ks:
        marks = []
        for word in queries:
            rank = result.ranks.get(word)
            marks.append(HITS_NOT_EVALUATED if rank is None else "1" if rank <= k else "0")
        out[hits_key(k)] = "".join(marks)
    return out


def random_baseline(n_targets: int, ks: Sequence[int] = (1, 5, 10), golds: float = 1.0) -> dict:
    """Expected P@k of a random ranking with about ``golds`` gold translations per word."""
    return {f"p@{k}": min(1.0, k * golds / max(n_targets, 1)) for k in ks}


# --------------------------------------------------------------------------- records


def bli_direction(
    query: Space,
    target: Space,
    dictionary: PathLike,
    *,
    retrievals: Sequence[str],
    csls_k: int,
    ks: Sequence[int],
    oov: str,
    device: str | None,
    budget_mb: float | None = None,
) -> dict[str, Any]:
    """BLI from ``query`` into ``target`` on one dictionary file, per retrieval method
    (:func:`evaluate_bli`, in blocks of ``budget_mb``).

    Returns ``dictionary``, ``queries`` (the dictionary's source words, space-joined) and
    per retrieval method its :meth:`BLIResult.as_dict` plus the per-query ``hits@k``
    marks (:func:`query_hits`). An empty dictionary, or one without a pair in the
    vocabularies, gives ``skipped`` and the reason instead of scores (whatever ``oov``).
    """
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
    out: dict[str, Any] = {"dictionary": str(dictionary), "queries": " ".join(dic)}
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
            budget_mb=budget_mb,
        )
        out[retrieval] = {**res.as_dict(), **query_hits(res, list(dic), ks)}
    return out


def _both_directions(
    space_name: str,
    language: str,
    hub: str,
    lang_sp: Space,
    hub_sp: Space,
    dictionaries: Mapping[str, PathLike],
    **opts: Any,
) -> tuple[dict[str, Any], dict[str, str]]:
    results: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    for direction, path in dictionaries.items():
        src, tgt = direction.split("-")
        if {src, tgt} != {hub, language}:
            raise InputError(f"{path}: direction {direction!r} is not {hub}-{language} or back")
        query, target = (hub_sp, lang_sp) if src == hub else (lang_sp, hub_sp)
        res = bli_direction(query, target, path, **opts)
        if "skipped" in res:
            log.warning("%s %s: no BLI result: %s", space_name, direction, res["skipped"])
            skipped[direction] = res["skipped"]
        else:
            results[direction] = res
    return results, skipped


#: What a record's ``results`` were computed in (its ``scored_in``).
PAIR_SPACES = "the pair's mapped spaces, rows length-normalised (VecMap's eval_translation.py)"
GIVEN_SPACES = "the given spaces, rows length-normalised"
HUB_SPACE_NOTE = (
    "hub-space BLI: both languages as written for the later stages (in the hub's own "
    "normalised space); not VecMap's protocol unless the mapping is orthogonal"
)


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
    pair: tuple[Space, Space, bool] | None = None,
    extra: Mapping[str, Any] | None = None,
    budget_mb: float | None = None,
) -> dict[str, Any]:
    """BLI of one language against the hub, both directions, written as one record.

    ``dictionaries`` maps a direction (``en-de``, ``de-en``) to its MUSE file; a direction
    whose file is empty or has no pair in vocabulary is recorded with the reason instead of
    a number (the tables show "–" there).

    ``pair`` = ``(language space, hub side, differs)``: the pair's own mapped spaces
    (:mod:`xlalign.mapping.pairs`), where ``results`` are then computed; when they
    ``differ`` from the hub space, the BLI of the files ``space``/``hub_space`` is
    recorded apart as ``hub_space_bli``.
    ``extra`` is merged into the record. ``budget_mb``: the retrieval's memory budget
    (:func:`evaluate_bli`).
    """
    hub_sp, hub_report = load_space(hub_space)
    lang_sp, lang_report = load_space(space)
    opts: dict[str, Any] = {
        "retrievals": retrievals,
        "csls_k": csls_k,
        "ks": ks,
        "oov": oov,
        "device": device,
        "budget_mb": budget_mb,
    }
    args = (space_name, language, hub)
    record: dict[str, Any] = {
        "space": space_name,
        "seed": seed,
        "language": language,
        "hub": hub,
        "split": split,
        "spaces": {"hub": hub_report, "language": lang_report},
    }
    if pair is None:
        results, skipped = _both_directions(*args, lang_sp, hub_sp, dictionaries, **opts)
        record["scored_in"] = GIVEN_SPACES
    else:
        pair_lang, pair_hub, differs = pair
        results, skipped = _both_directions(*args, pair_lang, pair_hub, dictionaries, **opts)
        record["scored_in"] = PAIR_SPACES
        if differs:
            hub_results, _ = _both_directions(*args, lang_sp, hub_sp, dictionaries, **opts)
            record["hub_space_bli"] = {"note": HUB_SPACE_NOTE, "results": hub_results}
    record.update(results=results, skipped=skipped, **dict(extra or {}))
    write_json(out_path, record)
    return record
