"""VecMap in torch: cross-lingual mapping of two static embedding spaces, on CPU or GPU.

A library re-implementation of the public tool's ``map_embeddings.py`` (Artetxe et al.):
the multi-step framework of AAAI 2018 (normalisation, whitening, orthogonal mapping,
re-weighting, de-whitening, dimensionality reduction) and the robust self-learning of
ACL 2018 (unsupervised similarity-distribution initialisation, stochastic dictionary
induction, frequency cut-off, CSLS retrieval, bidirectional induction). The arithmetic
follows the tool step by step; what differs is said where it happens:

* the d x d algebra (Procrustes SVDs, whitening, de-whitening, least squares) runs in
  float64 on the CPU; the n x n similarity work runs in ``dtype`` on ``device``;
* whitening a dictionary matrix of numerical rank below d (fewer than d independent pairs)
  raises :class:`DegenerateDictionaryError` ("whitening needs at least d independent
  dictionary pairs; got n") instead of producing inf/NaN as the tool does; there is no
  silent fallback (no pseudo-inverse, no ridge), since either would be a different method;
  :func:`degenerate_dictionary` tells before mapping (the caller chooses what to do);
* non-finite values and zero vectors raise :class:`InputError` naming the side and the
  first word: in the input (the tool would keep a zero row, which centring turns into
  minus the mean vector, an arbitrary point) and after normalisation;
* ``max_iterations`` caps the self-learning loop (the tool has no cap: it stops only when
  the keep probability has reached 1 and the objective stopped improving);
* the dropout masks come from a CPU ``torch.Generator`` seeded with ``seed``, so a run is
  reproducible, the same for any ``batch_size`` or memory budget, and on CPU or GPU up to
  rounding;
* ``sqrt(X X^T)`` for the unsupervised initialisation comes from the d x d
  eigendecomposition of ``X^T X`` rather than an SVD of X (the same matrix, cheaper);
* the n x n work runs in row blocks sized by a memory budget (``budget_mb``, the
  configuration's ``memory.block_mb``) unless ``batch_size`` is given (it then wins, as
  the tool's option); the unsupervised initialisation holds its two sorted ``U x U``
  similarity matrices whole, and nothing else of size ``U x U`` (the tool: several).

**Resuming.** With ``checkpoint_dir``, self-learning writes its state at iteration
boundaries every ``checkpoint_seconds`` (``vecmap.npz``: the current dictionary, the
dropout generator's state, the iteration, the keep probability, the best objective and
the curves so far, and a fingerprint of both spaces, the words, the options and the seed
dictionary). A re-run with the same inputs resumes there (a checkpoint of other inputs is
ignored with a warning) and ends with the same mapping as an uninterrupted run; SIGTERM
(see :mod:`xlalign.core.interrupt`) writes the checkpoint at the end of the iteration
under way and stops. The checkpoint is removed when the mapping is done.

Kept as in the tool: a dropped similarity is set to 0 (not to minus infinity), and the
final dictionary is the concatenation of both directions (pairs may repeat).

Outputs are transforms, not vectors: ``apply(mapping, x, "source")`` is the tool's mapped
source space and ``to_hub(mapping, x)`` expresses a source space in the target's own,
unmapped space with VecMap's cross-lingual dot products (to map every language into a
hub language that stays fixed).

The options (:class:`VecMapArgs`) and the tool's presets (:data:`RECIPES`,
:func:`recipe_args`) live in :mod:`xlalign.mapping.recipes`, which the configuration
checks use without importing torch; they are re-exported here.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from collections.abc import Mapping as AbcMapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from xlalign.core import interrupt
from xlalign.core.device import resolve_device
from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, atomic_open
from xlalign.core.memory import MB, rows_per_block
from xlalign.mapping.recipes import (
    RECIPES,
    VecMapArgs,
    check_steps,
    induction_block_rows,
    recipe_args,
    unsupervised_init_bytes,
)

log = logging.getLogger(__name__)

DTYPES = {"float32": torch.float32, "float64": torch.float64}
SIDES = {"source": "source", "src": "source", "target": "target", "trg": "target"}

# A dictionary matrix whose smallest singular value is below this fraction of its largest
# is treated as singular: whitening would amplify float32 rounding by more than 1e5.
SINGULAR_RTOL = 1e-5
#: How the errors about an unusable seed dictionary begin (callers that read the
#: dictionary from a file add its path).
SEED_DICTIONARY_ERRORS = ("the seed dictionary", "none of the")


def _normalize_(t: torch.Tensor, steps: Sequence[str]) -> torch.Tensor:
    """Apply ``steps`` to ``t`` in place (as VecMap: a zero norm is left as 1)."""
    for step in steps:
        if step == "unit":
            norms = t.norm(dim=1, keepdim=True)
            t.div_(norms.masked_fill_(norms == 0, 1))
        elif step == "center":
            t.sub_(t.mean(dim=0, keepdim=True))
        elif step == "unitdim":
            norms = t.norm(dim=0, keepdim=True)
            t.div_(norms.masked_fill_(norms == 0, 1))
        elif step == "centeremb":
            t.sub_(t.mean(dim=1, keepdim=True))
    return t


def normalize(x: np.ndarray | torch.Tensor, steps: Sequence[str]) -> Any:
    """VecMap's normalisation ``steps`` applied in order to a copy of ``x`` (same type back).

    ``unit``: rows to unit length; ``center``: subtract the column mean; ``unitdim``:
    columns to unit length; ``centeremb``: subtract each row's mean; ``none``: nothing.
    ``center`` and ``unitdim`` depend on the whole matrix, so normalise the full
    vocabulary the mapping was trained on, not a subset of it.
    """
    steps = check_steps(steps)
    if isinstance(x, torch.Tensor):
        t = x.clone() if x.is_floating_point() else x.float()
        return _normalize_(t, steps)
    t = torch.tensor(np.asarray(x))
    if not t.is_floating_point():
        t = t.float()
    return _normalize_(t, steps).numpy()


@dataclass
class Mapping:
    """A trained VecMap mapping: ``xw = normalize(x) @ src_transform`` (and ``zw`` alike).

    ``src_transform``/``trg_transform`` are float64 ``(d, k)`` matrices; ``src_indices``/
    ``trg_indices`` the final training dictionary (row indices; repeated pairs allowed, as
    VecMap's union of both induction directions has them).
    """

    src_transform: np.ndarray
    trg_transform: np.ndarray
    normalize: tuple[str, ...]
    src_indices: np.ndarray
    trg_indices: np.ndarray
    stats: dict[str, Any] = field(default_factory=dict)


def _side(side: str) -> str:
    if side not in SIDES:
        raise ConfigError(f"side: {side!r} is not one of {list(SIDES)}")
    return SIDES[side]


def _project(
    mapping: Mapping, x: np.ndarray, matrix: np.ndarray, device: Any, dtype: torch.dtype
) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != 2 or x.shape[1] != matrix.shape[0]:
        raise InputError(
            f"expected vectors of dimension {matrix.shape[0]} (the mapping's), got shape {x.shape}"
        )
    dev = resolve_device(device)
    t = _normalize_(torch.tensor(x, dtype=dtype, device=dev), mapping.normalize)
    out = t @ torch.as_tensor(matrix, dtype=dtype, device=dev)
    return out.cpu().numpy()


def apply(
    mapping: Mapping, x: np.ndarray, side: str, *, device: Any = None, dtype: str = "float32"
) -> np.ndarray:
    """VecMap's output vectors for ``x`` on ``side`` (``source`` or ``target``).

    ``x`` must be the whole vocabulary the mapping was trained on (``center`` and
    ``unitdim`` normalise with statistics of the full matrix).
    """
    s = _side(side)
    matrix = mapping.src_transform if s == "source" else mapping.trg_transform
    return _project(mapping, x, matrix, device, DTYPES[dtype])


def to_hub(
    mapping: Mapping, x: np.ndarray, *, device: Any = None, dtype: str = "float32"
) -> np.ndarray:
    """The source space expressed in the target's own space: ``normalize(x) @ S @ T.T``.

    With ``S``/``T`` the source/target transforms, VecMap's cross-lingual dot products are
    ``xw @ zw.T = normalize(x) @ S @ T.T @ normalize(z).T``; grouping the product as
    ``(normalize(x) @ S @ T.T) @ normalize(z).T`` shows that the returned matrix has,
    with the *untransformed* normalised target vectors, exactly VecMap's dot products.
    So the target (the hub, e.g. English) keeps its own space while every other language
    is mapped into it, and all of them are comparable with each other through it.

    Dot products are preserved exactly; cosines only where ``T`` is orthogonal (the
    ``orthogonal``/``acl2017`` recipes). With the re-weighting recipes, cosine retrieval
    against unit-length target rows (normalisation ending in ``unit``) ranks targets as
    VecMap's dot-product retrieval does, not as its cosine retrieval (``zw`` rows are not
    of unit length).
    """
    matrix = mapping.src_transform @ mapping.trg_transform.T
    return _project(mapping, x, matrix, device, DTYPES[dtype])


def _first_bad_row(bad_rows: np.ndarray, words: Sequence[str]) -> str:
    i = int(np.flatnonzero(bad_rows)[0])
    return f"{int(bad_rows.sum())} row(s), the first for word {words[i]!r} (row {i})"


def _check_inputs(
    x: np.ndarray, z: np.ndarray, src_words: Sequence[str], trg_words: Sequence[str]
) -> None:
    for side, m, words in (("source", x, src_words), ("target", z, trg_words)):
        if m.ndim != 2 or m.shape[0] != len(words) or m.shape[0] == 0:
            raise InputError(
                f"{side}: expected a non-empty (words, dim) matrix for {len(words)} words, "
                f"got shape {m.shape}"
            )
    if x.shape[1] != z.shape[1]:
        raise InputError(
            f"spaces of different dimension: source {x.shape[1]}, target {z.shape[1]}; "
            "VecMap maps spaces of the same dimension"
        )
    for side, m, words in (("source", x, src_words), ("target", z, trg_words)):
        finite = np.isfinite(m).all(axis=1)
        if not finite.all():
            raise InputError(
                f"{side}: non-finite values (NaN or inf) in {_first_bad_row(~finite, words)}"
            )
        zero = ~m.any(axis=1)
        if zero.any():
            raise InputError(
                f"{side}: zero vector in {_first_bad_row(zero, words)}; drop words without "
                "a vector before mapping"
            )


def _check_zero_after(
    t: torch.Tensor, words: Sequence[str], side: str, steps: Sequence[str]
) -> None:
    norms = t.norm(dim=1)
    bad = (norms <= 1e-6 * norms.max()).cpu().numpy()
    if bad.any():
        raise InputError(
            f"{side}: the normalisation {list(steps)} leaves a zero vector in "
            f"{_first_bad_row(bad, words)}"
        )


def _seed_pairs(
    dictionary: Iterable[tuple[str, str]] | AbcMapping[str, Iterable[str]],
) -> Iterable[tuple[str, str]]:
    if isinstance(dictionary, AbcMapping):
        return ((s, t) for s, ts in dictionary.items() for t in ts)
    return dictionary


def _topk_mean(m: torch.Tensor, k: int, dim: int = 1) -> torch.Tensor:
    """Mean of the ``k`` largest values along ``dim`` (VecMap's CSLS neighbourhood term)."""
    k = min(k, m.shape[dim])
    return m.topk(k, dim=dim).values.mean(dim=dim)


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """Run the small (d x d) LAPACK calls single-threaded.

    Right after a large parallel kernel, an SVD or eigendecomposition of a d x d matrix
    on the default OpenMP/MKL threads can take 100x longer than on one thread (measured on
    a busy 2-core machine: 20-100 ms vs 0.3 ms at d=48, up to 3.7 s vs 8 ms at d=300), as
    the threads wait on each other; on one thread these calls take milliseconds.
    """
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(n)


def _cross(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a^T b`` accumulated in float64 on the device of ``a``, returned on the CPU."""
    return (a.double().T @ b.double()).cpu()


class DegenerateDictionaryError(InputError):
    """A dictionary matrix of numerical rank below d where the mapping needs full rank."""


def _gram_rank(gram: torch.Tensor) -> tuple[int, torch.Tensor, torch.Tensor]:
    """Numerical rank of ``m`` from ``gram = m^T m`` (float64), with ``m``'s singular values
    ``s`` and right singular vectors: ``s`` below ``SINGULAR_RTOL`` times the largest
    count as zero."""
    with _one_thread():
        evals, evecs = torch.linalg.eigh(gram)
    s = evals.clamp_min(0).sqrt()
    smax = float(s.max())
    rank = int((s > SINGULAR_RTOL * smax).sum()) if smax > 0 else 0
    return rank, s, evecs


def _rank_message(side: str, d: int, n: int, rank: int, need: str = "whitening") -> str:
    return (
        f"{side} side of the dictionary: {need} needs at least d={d} linearly "
        f"independent dictionary pairs; got {n} pairs (numerical rank {rank})"
    )


def _gram_root(gram: torch.Tensor, n: int, side: str) -> tuple[torch.Tensor, torch.Tensor]:
    """VecMap's whitening ``(m^T m)^(-1/2)`` and its inverse ``(m^T m)^(1/2)``, float64.

    With ``m = U S V^T`` (the ``n`` dictionary rows of one side), VecMap whitens with
    ``V S^-1 V^T`` and de-whitens with the inverse ``V S V^T``; both come from the
    eigendecomposition ``m^T m = V S^2 V^T`` (no explicit inverse). A matrix of numerical
    rank below d (fewer than d pairs, or dependent ones: smallest singular value below
    ``SINGULAR_RTOL`` times the largest) would make ``S^-1`` blow up; rather than return
    inf/NaN as the tool does or silently regularise, this raises
    :class:`DegenerateDictionaryError` (an :class:`InputError`); :func:`degenerate_dictionary`
    applies the same test before mapping.
    """
    d = gram.shape[0]
    rank, s, evecs = _gram_rank(gram)
    if rank < d:
        raise DegenerateDictionaryError(
            _rank_message(side, d, n, rank) + ". Use a larger dictionary, self-learning, or "
            "a mapping without whitening (orthogonal); see also degenerate_dictionary"
        )
    return (evecs / s) @ evecs.T, (evecs * s) @ evecs.T


def _procrustes(xs: torch.Tensor, zs: torch.Tensor) -> torch.Tensor:
    """VecMap's orthogonal mapping ``W = V U^T`` with ``zs^T xs = U S V^T`` (CPU float64)."""
    with _one_thread():
        u, _s, vt = torch.linalg.svd(_cross(zs, xs))
    return vt.T @ u.T


def _unconstrained(xs: torch.Tensor, zs: torch.Tensor) -> torch.Tensor:
    """Least squares ``(xs^T xs)^-1 xs^T zs`` (CPU float64); InputError if singular."""
    gram = _cross(xs, xs)
    _gram_root(gram, xs.shape[0], "source")  # the same rank condition and message
    with _one_thread():
        return torch.linalg.solve(gram, _cross(xs, zs))


def _advanced(
    xs: torch.Tensor, zs: torch.Tensor, args: VecMapArgs
) -> tuple[torch.Tensor, torch.Tensor]:
    """The AAAI 2018 multi-step mapping as two (CPU float64) transforms: source, target.

    Only d x d products of the dictionary rows are needed: the whitened cross-covariance
    ``(xs wx1)^T (zs wz1)`` is ``wx1^T (xs^T zs) wz1``.
    """
    d = xs.shape[1]
    cross = _cross(xs, zs)
    eye = torch.eye(d, dtype=torch.float64)
    wx1 = wx1_inv = wz1 = wz1_inv = eye
    if args.whiten:  # STEP 1: whitening
        wx1, wx1_inv = _gram_root(_cross(xs, xs), xs.shape[0], "source")
        wz1, wz1_inv = _gram_root(_cross(zs, zs), zs.shape[0], "target")
    # STEP 2: orthogonal mapping of both (whitened) sides onto a common space
    with _one_thread():
        wx2, s, wz2_t = torch.linalg.svd(wx1.T @ cross @ wz1)
    wz2 = wz2_t.T
    # STEP 3: re-weighting (columns scaled by powers of the singular values)
    src = (wx1 @ wx2) * s**args.src_reweight
    trg = (wz1 @ wz2) * s**args.trg_reweight
    # STEP 4: de-whitening, by either side's whitening expressed in the mapped basis
    dewhite = {"src": wx2.T @ wx1_inv @ wx2, "trg": wz2.T @ wz1_inv @ wz2}
    if args.src_dewhiten:
        src = src @ dewhite[args.src_dewhiten]
    if args.trg_dewhiten:
        trg = trg @ dewhite[args.trg_dewhiten]
    # STEP 5: dimensionality reduction
    if args.dim_reduction > 0:
        src, trg = src[:, : args.dim_reduction], trg[:, : args.dim_reduction]
    return src, trg


def _sorted_sqrt_similarity(
    m: torch.Tensor, out: torch.Tensor, budget_mb: float | None
) -> torch.Tensor:
    """The rows of ``sqrt(m m^T) = U S U^T`` (``m = U S V^T``), each sorted ascending, into
    ``out`` (``U x U``, in its dtype), computed in float64 one row block at a time.

    VecMap takes the SVD of the (n x d) ``m``; here ``U S = m V`` and ``U = m V S^-1``
    come from the eigendecomposition of the d x d ``m^T m = V S^2 V^T``, which is the
    same matrix for a fraction of the cost. Components with ``s`` below 1e-12 of the
    largest add nothing measurable to ``U S U^T`` and are left out, so nothing is
    divided by a near-zero value. A row of ``sqrt(m m^T)`` is ``(U S^-1 S)[i] (U S)^T``
    and is sorted on its own, so blocks of rows give the full matrix's rows (sorting in
    float64, then rounding to ``out``'s dtype, gives the values that rounding first and
    sorting after would: rounding is monotone). Per block row: the float64 row, its sorted
    copy and the sort's int64 indices, ``24 U`` bytes.
    """
    n = m.shape[0]
    m64 = m.double()
    with _one_thread():
        evals, evecs = torch.linalg.eigh((m64.T @ m64).cpu())
    s = evals.clamp_min(0).sqrt()
    keep = s > 1e-12 * s.max()
    us = m64 @ evecs[:, keep].to(m.device)  # U S
    left = us / s[keep].to(m.device)  # U
    rows = rows_per_block(24 * n, budget_mb, at_most=n)
    for i in range(0, n, rows):
        j = min(i + rows, n)
        out[i:j] = (left[i:j] @ us.T).sort(dim=1).values
    return out


def _allocate_init(n: int, dtype: torch.dtype, device: torch.device, args: VecMapArgs) -> Any:
    """The two ``n x n`` sorted similarity matrices, allocated up front: the part of the
    initialisation that no budget bounds (:func:`unsupervised_init_bytes`). Raises
    :class:`MemoryError` saying how much they need and which option sets it."""
    need_mb = unsupervised_init_bytes(args, n) / MB
    log.info(
        "vecmap: unsupervised initialisation over %d words per side: its two sorted "
        "similarity matrices take %.0f MB (2 x %d^2 x %d bytes, not blocked)",
        n,
        need_mb,
        n,
        torch.empty((), dtype=dtype).element_size(),
    )
    try:
        return (
            torch.empty((n, n), dtype=dtype, device=device),
            torch.empty((n, n), dtype=dtype, device=device),
        )
    except (MemoryError, RuntimeError) as exc:  # torch's CPU/GPU allocators raise RuntimeError
        if isinstance(exc, RuntimeError) and "memory" not in str(exc).lower():
            raise
        raise MemoryError(
            f"vecmap: the unsupervised initialisation over unsupervised_vocab={n} words per "
            f"side needs {need_mb:.0f} MB for its two {n} x {n} sorted similarity matrices "
            f"(2 x U^2 x {torch.empty((), dtype=dtype).element_size()} bytes, on {device}), "
            "which could not be allocated; lower the option unsupervised_vocab or run where "
            f"that much memory is free ({exc})"
        ) from None


def _init_csls_blocks(
    xsim: torch.Tensor, zsim: torch.Tensor, args: VecMapArgs, budget_mb: float | None
) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """The dictionary of the initialisation from ``sim = xsim @ zsim.T``, in row blocks.

    ``sim`` (``U x U``) is never held whole unless it fits the budget: a first pass takes
    each row's top-k (the forward CSLS term) and keeps, per column, the top-k over the
    rows seen so far (the backward term: the top-k of a column are the top-k of the
    blocks' top-k); a second pass recomputes each block, subtracts both terms as VecMap
    does (``sim - (knn_fwd / 2 + knn_bwd / 2)``), and takes the row argmax (forward) and
    the running column argmax (backward; the first row wins a tie, as ``argmax`` does).
    One block of all rows keeps its similarities for the second pass. Per block row:
    the block and the penalty term, ``2 U s`` bytes, and the row top-k; besides, the
    columns' running top-k, ``3 k U (s + 8)`` bytes.

    Returns (forward targets or None, backward sources or None) by ``args.direction``.
    """
    n, dev = xsim.shape[0], xsim.device
    s = xsim.element_size()
    k = min(args.csls_neighborhood, n)
    rows = rows_per_block(2 * n * s + k * (s + 8), budget_mb, at_most=n)
    starts = range(0, n, rows)
    kept: torch.Tensor | None = None

    def block(i: int) -> torch.Tensor:
        if kept is not None:
            return kept
        return xsim[i : min(i + rows, n)] @ zsim.T

    knn_fwd = knn_bwd = None
    if k > 0:
        knn_fwd = torch.empty(n, dtype=xsim.dtype, device=dev)
        col_top: torch.Tensor | None = None
        for i in starts:
            sim = block(i)
            knn_fwd[i : i + sim.shape[0]] = _topk_mean(sim, k, dim=1)
            top = sim.topk(min(k, sim.shape[0]), dim=0).values
            if col_top is None:
                col_top = top
            else:
                cand = torch.cat([col_top, top])
                col_top = cand.topk(min(k, cand.shape[0]), dim=0).values
            if rows >= n:
                kept = sim
            del sim, top  # freed before the next block is made, not after
        assert col_top is not None
        knn_bwd = col_top.mean(dim=0)
        del col_top
    fwd = args.direction in ("forward", "union")
    bwd = args.direction in ("backward", "union")
    trg_fwd = torch.empty(n, dtype=torch.long, device=dev) if fwd else None
    best = torch.full((n,), -torch.inf, dtype=xsim.dtype, device=dev)
    src_bwd = torch.zeros(n, dtype=torch.long, device=dev) if bwd else None
    for i in starts:
        sim = block(i)
        if knn_fwd is not None and knn_bwd is not None:
            sim -= knn_fwd[i : i + sim.shape[0], None] / 2 + knn_bwd[None, :] / 2
        if trg_fwd is not None:
            trg_fwd[i : i + sim.shape[0]] = sim.argmax(dim=1)
        if src_bwd is not None:
            values, where = sim.max(dim=0)
            better = values > best
            best = torch.where(better, values, best)
            src_bwd = torch.where(better, where + i, src_bwd)
            del values, where, better
        del sim  # freed before the next block is made, not after
    return trg_fwd, src_bwd


def _unsupervised_init(
    x: torch.Tensor, z: torch.Tensor, args: VecMapArgs, budget_mb: float | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """ACL 2018 initialisation: match words by their sorted similarity distributions.

    ``sqrt(X X^T)`` of the first ``unsupervised_vocab`` words of each side, rows sorted,
    normalised as the embeddings, compared by dot product (CSLS when set), then the
    dictionary of nearest neighbours in ``direction``.

    Memory: the two sorted ``U x U`` matrices (``2 s U^2``, :func:`_allocate_init`; the
    normalisation's column statistics need them whole, and every row of one meets every
    row of the other), everything else in row blocks of ``budget_mb``
    (:func:`_sorted_sqrt_similarity`, :func:`_init_csls_blocks`). The public tool holds
    about ``(4 s + 16) U^2``.
    """
    n = min(x.shape[0], z.shape[0])
    if args.unsupervised_vocab > 0:
        n = min(n, args.unsupervised_vocab)
    xsim, zsim = _allocate_init(n, x.dtype, x.device, args)
    for m, out in ((x[:n], xsim), (z[:n], zsim)):
        _normalize_(_sorted_sqrt_similarity(m, out, budget_mb), args.normalize)
    trg_fwd, src_bwd = _init_csls_blocks(xsim, zsim, args, budget_mb)
    del xsim, zsim
    ar = torch.arange(n, device=x.device)
    if args.direction == "forward":
        assert trg_fwd is not None
        return ar, trg_fwd
    assert src_bwd is not None
    if args.direction == "backward":
        return src_bwd, ar
    assert trg_fwd is not None
    return torch.cat([ar, src_bwd]), torch.cat([trg_fwd, ar])


def _seed_dictionary(
    x: torch.Tensor,
    z: torch.Tensor,
    args: VecMapArgs,
    src_words: Sequence[str],
    trg_words: Sequence[str],
    dictionary: Any,
    stats: dict[str, Any],
    budget_mb: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    dev = x.device
    src_index = {w: i for i, w in enumerate(src_words)}
    trg_index = {w: i for i, w in enumerate(trg_words)}
    src: list[int] = []
    trg: list[int] = []
    if args.init == "unsupervised":
        s, t = _unsupervised_init(x, z, args, budget_mb)
        stats.update(pairs_given=0, pairs_in_vocabulary=0)
        return s, t
    if args.init == "dictionary":
        if dictionary is None:
            raise ConfigError(
                f"vecmap init='dictionary' (recipe {args.recipe!r}) needs a dictionary of "
                "(source word, target word) pairs"
            )
        given = 0
        oov: list[tuple[str, str]] = []
        for pair in _seed_pairs(dictionary):
            given += 1
            if isinstance(pair, str) or len(pair) != 2:
                raise InputError(
                    f"seed dictionary entry {given}: expected a (source, target) pair, got {pair!r}"
                )
            s_word, t_word = pair
            if s_word in src_index and t_word in trg_index:
                src.append(src_index[s_word])
                trg.append(trg_index[t_word])
            else:
                oov.append((s_word, t_word))
        stats.update(pairs_given=given, pairs_in_vocabulary=len(src))
        if not given:
            raise InputError(
                f"{SEED_DICTIONARY_ERRORS[0]} is empty; expected (source, target) pairs"
            )
        if not src:
            raise InputError(
                f"none of the {given} seed dictionary pair(s) has both words in the "
                f"vocabularies (source {len(src_words)} words, target {len(trg_words)}); "
                f"e.g. {oov[:3]}"
            )
        if oov:
            log.warning(
                "vecmap: %d of %d seed dictionary pairs dropped, a word out of vocabulary "
                "(e.g. %s); %d used",
                len(oov),
                given,
                oov[:3],
                len(src),
            )
    else:
        if args.init == "identical":
            shared = [w for w in src_words if w in trg_index]
            what = "identical words"
        else:
            numeral = re.compile(r"^[0-9]+$")
            shared = [w for w in src_words if numeral.match(w) and w in trg_index]
            what = "numerals ([0-9]+) present on both sides"
        if not shared:
            raise InputError(f"vecmap init={args.init!r}: the vocabularies share no {what}")
        src = [src_index[w] for w in shared]
        trg = [trg_index[w] for w in shared]
        stats.update(pairs_given=len(src), pairs_in_vocabulary=len(src))
    as_t = lambda v: torch.as_tensor(v, dtype=torch.long, device=dev)  # noqa: E731
    return as_t(src), as_t(trg)


def degenerate_dictionary(
    x: np.ndarray,
    z: np.ndarray,
    args: VecMapArgs,
    *,
    src_words: Sequence[str],
    trg_words: Sequence[str],
    dictionary: Iterable[tuple[str, str]] | AbcMapping[str, Iterable[str]] | None = None,
    device: Any = None,
    budget_mb: float | None = None,
) -> dict[str, Any] | None:
    """Why the final mapping of ``args`` cannot be computed here, or None when it can.

    Decided before mapping, with the test :func:`map_embeddings` applies (the numerical
    rank of the dictionary rows after normalisation, ``SINGULAR_RTOL``): whitening needs
    both sides of the final training dictionary of rank d, the unconstrained (least
    squares) mapping its source side; the orthogonal mapping works with any non-empty
    dictionary, so it is never degenerate. Which dictionary the final mapping uses:

    * without self-learning, the seed dictionary (``init``: the given pairs, identical
      words or numerals);
    * with self-learning, the dictionary induced at the last iteration, which (with the
      union of both directions, as every recipe that whitens) holds every one of the
      ``vocabulary_cutoff`` most frequent words of each side: the test is then on those
      words. An unsupervised initialisation has no dictionary to test. With one direction
      only, the side induced by retrieval cannot be known before the run; map_embeddings
      raises :class:`DegenerateDictionaryError` if it turns out rank-deficient.

    Returns ``{"reason", "side", "rank", "dimension", "rows"}``.
    """
    if not (args.whiten or args.unconstrained):
        return None
    dev = resolve_device(device)
    dtype = DTYPES[args.dtype]
    x, z = np.asarray(x), np.asarray(z)
    src_words, trg_words = list(src_words), list(trg_words)
    _check_inputs(x, z, src_words, trg_words)
    d = x.shape[1]
    xt = _normalize_(torch.tensor(x, dtype=dtype, device=dev), args.normalize)
    zt = _normalize_(torch.tensor(z, dtype=dtype, device=dev), args.normalize)
    if args.self_learning:
        cut = args.vocabulary_cutoff
        rows = {
            "source": xt[: cut or None] if args.direction in ("union", "forward") else None,
            "target": zt[: cut or None] if args.direction in ("union", "backward") else None,
        }
        what = "the most frequent words (vocabulary_cutoff) of self-learning's final dictionary"
    else:
        src_idx, trg_idx = _seed_dictionary(
            xt, zt, args, src_words, trg_words, dictionary, {}, budget_mb
        )
        rows = {"source": xt[src_idx], "target": zt[trg_idx]}
        what = f"the {args.init} seed dictionary"
    sides = ("source", "target") if args.whiten else ("source",)
    for side in sides:
        m = rows[side]
        if m is None:
            continue
        rank, _, _ = _gram_rank(_cross(m, m))
        if rank < d:
            need = "whitening" if args.whiten else "the unconstrained mapping"
            return {
                "reason": f"{_rank_message(side, d, m.shape[0], rank, need)}, in {what}",
                "side": side,
                "rank": rank,
                "dimension": d,
                "rows": int(m.shape[0]),
            }
    return None


class _Inducer:
    """Batched dictionary induction, VecMap's arithmetic in three passes instead of four.

    VecMap computes ``xw @ zw.T`` twice (the backward CSLS term, then the forward
    retrieval) and ``zw @ xw.T`` twice; here the source pass yields both the forward
    retrieval and the backward CSLS term from the same block, so one pass is saved with
    identical results (same values, same order of random draws). Memory: one
    ``(rows, max(C_src, C_trg))`` similarity block on the device and a float32 block
    of that size on the CPU for the dropout's random numbers (plus a boolean copy on GPU);
    ``rows`` is ``batch_size`` when given, else what fits ``budget_mb``
    (:func:`xlalign.mapping.recipes.induction_block_rows`).
    """

    def __init__(
        self,
        args: VecMapArgs,
        src_size: int,
        trg_size: int,
        dtype: torch.dtype,
        device: torch.device,
        budget_mb: float | None = None,
    ):
        self.args = args
        self.generator = torch.Generator().manual_seed(args.seed)
        cols = max(src_size, trg_size)
        self.rows = induction_block_rows(args, cols, budget_mb, gpu=device.type != "cpu")
        self.block = torch.empty(self.rows * cols, dtype=dtype, device=device)
        self._rand: torch.Tensor | None = None

    def _sims(self, q: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        out = self.block[: q.shape[0] * keys.shape[0]].view(q.shape[0], keys.shape[0])
        return torch.mm(q, keys.T, out=out)

    def _batches(self, n: int) -> Iterator[tuple[int, int]]:
        for i in range(0, n, self.rows):
            yield i, min(i + self.rows, n)

    def _drop(self, sims: torch.Tensor, keep_prob: float) -> None:
        """VecMap's dropout: similarities are zeroed with probability ``1 - keep_prob``."""
        p = 1.0 - keep_prob
        if p <= 0.0:
            return
        n = sims.numel()
        if self._rand is None or self._rand.numel() < n:
            self._rand = torch.empty(n, dtype=torch.float32)
        rand = self._rand[:n].view(sims.shape)
        torch.rand(sims.shape, generator=self.generator, out=rand)
        if sims.device.type == "cpu":
            sims.mul_(rand.ge_(p))  # 1.0 where kept, 0.0 where dropped
        else:
            sims.mul_((rand >= p).to(sims.device))

    def _retrieve(
        self,
        sims: torch.Tensor,
        knn_keys: torch.Tensor,
        keep_prob: float,
        best_sim: torch.Tensor,
        best_ind: torch.Tensor,
    ) -> None:
        torch.amax(sims, dim=1, out=best_sim)
        sims -= knn_keys / 2  # with the query's own (constant) term, VecMap's CSLS for NN
        self._drop(sims, keep_prob)
        torch.argmax(sims, dim=1, out=best_ind)

    def induce(
        self, xw: torch.Tensor, zw: torch.Tensor, keep_prob: float
    ) -> tuple[torch.Tensor | None, ...]:
        """(best forward sims, forward targets, best backward sims, backward sources)."""
        k = self.args.csls_neighborhood
        fwd = self.args.direction in ("forward", "union")
        bwd = self.args.direction in ("backward", "union")
        ns, nt = xw.shape[0], zw.shape[0]
        new = lambda n, dt=xw.dtype: torch.zeros(n, dtype=dt, device=xw.device)  # noqa: E731
        knn_src, knn_trg = new(ns), new(nt)
        fwd_sim = trg_fwd = bwd_sim = src_bwd = None
        if fwd and k > 0:
            for i, j in self._batches(nt):
                knn_trg[i:j] = _topk_mean(self._sims(zw[i:j], xw), k)
        if fwd or k > 0:
            if fwd:
                fwd_sim, trg_fwd = new(ns), new(ns, torch.long)
            for i, j in self._batches(ns):
                sims = self._sims(xw[i:j], zw)
                if bwd and k > 0:
                    knn_src[i:j] = _topk_mean(sims, k)
                if fwd:
                    self._retrieve(sims, knn_trg, keep_prob, fwd_sim[i:j], trg_fwd[i:j])
        if bwd:
            bwd_sim, src_bwd = new(nt), new(nt, torch.long)
            for i, j in self._batches(nt):
                sims = self._sims(zw[i:j], xw)
                self._retrieve(sims, knn_src, keep_prob, bwd_sim[i:j], src_bwd[i:j])
        return fwd_sim, trg_fwd, bwd_sim, src_bwd


def _min_total_iterations(done: int, since: int, keep_prob: float, args: VecMapArgs) -> int:
    """Fewest iterations the run can take from here, if the objective never improves again."""
    stages = 0
    p = keep_prob
    while p < 1.0:
        p = min(1.0, p * args.stochastic_multiplier)
        stages += 1
    total = done + max(args.stochastic_interval - since, 0) + stages * args.stochastic_interval
    return min(total, args.max_iterations) if args.max_iterations else total


CHECKPOINT_FILE = "vecmap.npz"
_CHECKPOINT_FORMAT = 1


def _fingerprint(
    x: np.ndarray,
    z: np.ndarray,
    args: VecMapArgs,
    src_words: Sequence[str],
    trg_words: Sequence[str],
    device: torch.device,
    seed_pairs: tuple[torch.Tensor, torch.Tensor] | None,
) -> str:
    """SHA-256 of what self-learning depends on (not the batch size, which only sets memory)."""
    h = hashlib.sha256()
    options = {k: v for k, v in asdict(args).items() if k != "batch_size"}
    h.update(json.dumps({"format": _CHECKPOINT_FORMAT, "args": options}, sort_keys=True).encode())
    h.update(device.type.encode())
    for words in (src_words, trg_words):
        h.update("\n".join(words).encode() + b"\0")
    for arr in (x, z):
        h.update(str((arr.dtype.str, arr.shape)).encode())
        h.update(np.ascontiguousarray(arr).data)
    if seed_pairs is not None:
        for t in seed_pairs:
            h.update(t.cpu().numpy().astype(np.int64).tobytes() + b"\0")
    return h.hexdigest()


def _save_checkpoint(path: Path, state: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    with interrupt.checkpointable(), atomic_open(path, "wb") as fh:
        interrupt.save_npz_checkpoint(fh, state, arrays)


def remove_checkpoint(checkpoint_dir: PathLike) -> None:
    """Remove :func:`map_embeddings`' checkpoint (and the directory, when left empty)."""
    (Path(checkpoint_dir) / CHECKPOINT_FILE).unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        Path(checkpoint_dir).rmdir()


def _load_checkpoint(path: Path, fingerprint: str) -> Any:
    return interrupt.read_checkpoint(
        path,
        interrupt.load_npz_checkpoint,
        fingerprint=fingerprint,
        what="other spaces, options or dictionary",
    )


def map_embeddings(
    x: np.ndarray,
    z: np.ndarray,
    args: VecMapArgs,
    *,
    src_words: Sequence[str],
    trg_words: Sequence[str],
    dictionary: Iterable[tuple[str, str]] | AbcMapping[str, Iterable[str]] | None = None,
    device: Any = None,
    progress: bool = True,
    checkpoint_dir: PathLike | None = None,
    checkpoint_seconds: float = 60.0,
    keep_checkpoint: bool = False,
    budget_mb: float | None = None,
) -> Mapping:
    """Map source ``x`` and target ``z`` (raw, rows in frequency order) as VecMap does.

    ``checkpoint_dir``: where self-learning keeps its checkpoint (see the module
    docstring; the stats then say ``resumed_from_iteration`` when it resumed); with
    ``keep_checkpoint`` the last one stays (the caller removes it with
    :func:`remove_checkpoint` once its outputs are written).

    ``dictionary``: (source word, target word) pairs, or a word -> translations mapping
    as :func:`xlalign.evaluation.bli.read_dictionary` returns, for ``init="dictionary"``; pairs with
    a word out of vocabulary are dropped (one warning line with the count), none in
    vocabulary raises :class:`InputError`. Raises :class:`InputError` for spaces of
    different dimension, non-finite values or zero vectors (in the input or after
    normalisation), naming the side and the first word, and for a singular whitening.

    Memory, besides the caller's arrays (``s`` bytes per value of ``dtype``, ``n`` words
    per side, ``d`` dims, ``C`` the vocabulary cut-off or ``n``, ``U`` the unsupervised
    vocabulary): the normalised copies of both spaces, ``2 n d s``; during self-learning
    the dictionary rows gathered in ``dtype`` and float64 (``2 * 2C d (s + 8)``), the
    mapped source prefix (``C d s``) and one block of ``B x C`` similarities with the
    dropout's float32 random numbers (``B C (s + 4)``, plus ``2 B C`` bytes of masks on a
    GPU); the unsupervised initialisation ``2 s U^2`` (its two sorted similarity
    matrices, which cannot be split: logged up front, and a :class:`MemoryError` naming
    ``unsupervised_vocab`` when they cannot be allocated) plus blocks. Every block (of
    self-learning and of the initialisation) holds at most ``budget_mb`` MB (None: the
    default of :mod:`xlalign.core.memory`; the configuration's ``memory.block_mb``),
    except that ``args.batch_size``, when set, fixes self-learning's ``B`` as the public
    tool's option does and wins over the budget. Peak for 200k words x 300 dims in float32
    with the recipes' ``C = 20000`` and a 256 MB budget (``B`` = 1676): 0.48 GB of copies
    + 0.29 GB + 0.02 GB + 0.27 GB, about 1.1 GB (2.4 GB with the tool's 10000 rows); with
    ``U = 4000`` the initialisation's fixed part is 0.13 GB (``U = 20000``: 3.2 GB).
    Numbers do not depend on the budget or ``B`` (the dropout's random numbers are drawn
    in the same order).
    """
    t_start = time.perf_counter()
    dev = resolve_device(device)
    dtype = DTYPES[args.dtype]
    x, z = np.asarray(x), np.asarray(z)
    src_words, trg_words = list(src_words), list(trg_words)
    _check_inputs(x, z, src_words, trg_words)
    d = x.shape[1]
    if args.dim_reduction > d:
        raise ConfigError(f"vecmap.dim_reduction: {args.dim_reduction} exceeds the dimension {d}")
    xt = _normalize_(torch.tensor(x, dtype=dtype, device=dev), args.normalize)
    zt = _normalize_(torch.tensor(z, dtype=dtype, device=dev), args.normalize)
    _check_zero_after(xt, src_words, "source", args.normalize)
    _check_zero_after(zt, trg_words, "target", args.normalize)

    stats: dict[str, Any] = {"recipe": args.recipe, "args": asdict(args), "device": str(dev)}
    ckpt = (
        Path(checkpoint_dir) / CHECKPOINT_FILE
        if checkpoint_dir is not None and args.self_learning
        else None
    )
    resume = None
    fingerprint = ""
    if ckpt is not None and args.init == "unsupervised":  # the costly seed: try to skip it
        fingerprint = _fingerprint(x, z, args, src_words, trg_words, dev, None)
        resume = _load_checkpoint(ckpt, fingerprint)
    if resume is None:
        src_idx, trg_idx = _seed_dictionary(
            xt, zt, args, src_words, trg_words, dictionary, stats, budget_mb
        )
        stats["seed_pairs"] = len(src_idx)
        stats["init_seconds"] = time.perf_counter() - t_start
        if ckpt is not None and args.init != "unsupervised":
            seed = (src_idx, trg_idx)
            fingerprint = _fingerprint(x, z, args, src_words, trg_words, dev, seed)
            resume = _load_checkpoint(ckpt, fingerprint)

    src_size = (
        x.shape[0] if args.vocabulary_cutoff <= 0 else min(x.shape[0], args.vocabulary_cutoff)
    )
    trg_size = (
        z.shape[0] if args.vocabulary_cutoff <= 0 else min(z.shape[0], args.vocabulary_cutoff)
    )
    inducer = (
        _Inducer(args, src_size, trg_size, dtype, dev, budget_mb) if args.self_learning else None
    )

    best_objective = -100.0
    it = 1
    last_improvement = 0
    keep_prob = args.stochastic_initial
    end = not args.self_learning
    capped = False
    objectives: list[float] = []
    keep_probs: list[float] = []
    seconds: list[float] = []
    if resume is not None:
        state, arrays = resume, resume["arrays"]
        as_idx = lambda a: torch.as_tensor(a, dtype=torch.long, device=dev)  # noqa: E731
        src_idx, trg_idx = as_idx(arrays["src_idx"]), as_idx(arrays["trg_idx"])
        assert inducer is not None
        inducer.generator.set_state(torch.from_numpy(arrays["generator"]))
        it, last_improvement = int(state["it"]), int(state["last_improvement"])
        keep_prob, best_objective = float(state["keep_prob"]), float(state["best_objective"])
        objectives, keep_probs = list(state["objectives"]), list(state["keep_probs"])
        seconds = list(state["seconds"])
        stats = state["stats"]
        stats["resumed_from_iteration"] = it
        log.info("%s: resuming self-learning at iteration %d", ckpt, it)
    if inducer is not None:
        stats["block_rows"] = inducer.rows  # self-learning's similarity block (memory only)
    last_save = time.monotonic()

    def save() -> None:
        nonlocal last_save
        if ckpt is None:
            return
        assert inducer is not None
        state = {
            "format": _CHECKPOINT_FORMAT,
            "fingerprint": fingerprint,
            "it": it,
            "last_improvement": last_improvement,
            "keep_prob": keep_prob,
            "best_objective": best_objective,
            "objectives": objectives,
            "keep_probs": keep_probs,
            "seconds": seconds,
            "stats": stats,
        }
        arrays = {
            "src_idx": src_idx.cpu().numpy(),
            "trg_idx": trg_idx.cpu().numpy(),
            "generator": inducer.generator.get_state().numpy(),
        }
        _save_checkpoint(ckpt, state, arrays)
        last_save = time.monotonic()
        log.debug("%s: checkpoint before iteration %d", ckpt, it)

    bar = tqdm(
        desc="vecmap self-learning",
        unit="it",
        initial=len(objectives),
        total=max(len(objectives), _min_total_iterations(0, 0, keep_prob, args)),
        disable=not (progress and args.self_learning),
        dynamic_ncols=True,
    )
    # With a checkpoint, SIGTERM is answered at the end of the iteration under way.
    region = interrupt.checkpointable() if ckpt is not None else contextlib.nullcontext()
    region.__enter__()
    try:
        while True:
            t_it = time.perf_counter()
            if it - last_improvement > args.stochastic_interval:
                if keep_prob >= 1.0:
                    end = True
                keep_prob = min(1.0, args.stochastic_multiplier * keep_prob)
                last_improvement = it
            if not end and args.max_iterations and it > args.max_iterations:
                end = capped = True

            # Mapping: orthogonal while self-learning, the chosen mapping at the end.
            if args.orthogonal or not end:
                src_t = _procrustes(xt[src_idx], zt[trg_idx])
                trg_t = torch.eye(d, dtype=torch.float64)
            elif args.unconstrained:
                src_t = _unconstrained(xt[src_idx], zt[trg_idx])
                trg_t = torch.eye(d, dtype=torch.float64)
            else:
                src_t, trg_t = _advanced(xt[src_idx], zt[trg_idx], args)
            if end:
                break

            # Self-learning: induce the dictionary (trg_t is the identity here).
            xw = xt[:src_size] @ src_t.to(dev, dtype)
            zw = zt[:trg_size]
            assert inducer is not None
            fwd_sim, trg_fwd, bwd_sim, src_bwd = inducer.induce(xw, zw, keep_prob)
            ar_src = torch.arange(src_size, device=dev)
            ar_trg = torch.arange(trg_size, device=dev)
            if args.direction == "forward":
                src_idx, trg_idx = ar_src, trg_fwd
                objective = float(fwd_sim.double().mean())
            elif args.direction == "backward":
                src_idx, trg_idx = src_bwd, ar_trg
                objective = float(bwd_sim.double().mean())
            else:
                src_idx = torch.cat([ar_src, src_bwd])
                trg_idx = torch.cat([trg_fwd, ar_trg])
                objective = (float(fwd_sim.double().mean()) + float(bwd_sim.double().mean())) / 2
            if objective - best_objective >= args.threshold:
                last_improvement = it
                best_objective = objective
            objectives.append(objective)
            keep_probs.append(keep_prob)
            seconds.append(time.perf_counter() - t_it)
            bar.total = max(it, _min_total_iterations(it, it - last_improvement, keep_prob, args))
            bar.set_postfix(objective=f"{objective:.4f}", keep=f"{keep_prob:.2f}", refresh=False)
            bar.update(1)
            it += 1
            if ckpt is not None:
                if time.monotonic() - last_save >= checkpoint_seconds:
                    save()
                interrupt.checkpoint_if_requested(save, f"vecmap, checkpoint {ckpt}")
    finally:
        region.__exit__(None, None, None)
        bar.close()
    if ckpt is not None and not keep_checkpoint:
        remove_checkpoint(ckpt.parent)

    if capped:
        log.warning(
            "vecmap: self-learning stopped by max_iterations=%d before convergence "
            "(keep probability %.3g)",
            args.max_iterations,
            keep_prob,
        )
    stats.update(
        pairs_used=len(src_idx),
        iterations=len(objectives),
        objective=objectives,
        keep_prob=keep_probs,
        iteration_seconds=seconds,
        stopped_by_cap=capped,
        seconds=time.perf_counter() - t_start,
    )
    log.info(
        "vecmap %s: %d iteration(s), final dictionary %d pairs, %.1fs on %s",
        args.recipe or "custom",
        stats["iterations"],
        stats["pairs_used"],
        stats["seconds"],
        dev,
    )
    return Mapping(
        src_transform=src_t.cpu().numpy(),
        trg_transform=trg_t.cpu().numpy(),
        normalize=args.normalize,
        src_indices=src_idx.cpu().numpy(),
        trg_indices=trg_idx.cpu().numpy(),
        stats=stats,
    )


__all__ = [
    "RECIPES",
    "DegenerateDictionaryError",
    "Mapping",
    "VecMapArgs",
    "apply",
    "degenerate_dictionary",
    "map_embeddings",
    "normalize",
    "recipe_args",
    "remove_checkpoint",
    "to_hub",
]
