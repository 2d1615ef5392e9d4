"""VecMap and dictionary induction in blocks of a memory budget (issue 28): the budget
and ``batch_size`` change the memory, never the numbers; under a capped address space
the blocked computation runs where the whole one does not."""

from __future__ import annotations

import capped_targets_mapping as targets
import numpy as np
import pytest
import torch
from capped import run_capped

from xlalign.core.errors import ConfigError
from xlalign.mapping import vecmap
from xlalign.mapping.recipes import (
    RECIPES,
    VecMapArgs,
    induction_block_rows,
    induction_bytes_per_row,
    recipe_args,
    unsupervised_init_bytes,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _whole_init(x: torch.Tensor, z: torch.Tensor, args: VecMapArgs):
    """The unsupervised initialisation as it was before blocks (whole U x U matrices)."""
    n = min(x.shape[0], z.shape[0], args.unsupervised_vocab or x.shape[0])
    sims = []
    for m in (x[:n], z[:n]):
        m64 = m.double()
        evals, evecs = torch.linalg.eigh(m64.T @ m64)
        s = evals.clamp_min(0).sqrt()
        keep = s > 1e-12 * s.max()
        us = m64 @ evecs[:, keep]
        full = (us / s[keep]) @ us.T
        sims.append(vecmap._normalize_(full.to(x.dtype).sort(dim=1).values, args.normalize))
    sim = sims[0] @ sims[1].T
    if args.csls_neighborhood > 0:
        k = args.csls_neighborhood
        knn_fwd = sim.topk(k, dim=1).values.mean(dim=1)
        knn_bwd = sim.topk(k, dim=0).values.mean(dim=0)
        sim -= knn_fwd[:, None] / 2 + knn_bwd[None, :] / 2
    return sim.argmax(dim=1), sim.argmax(dim=0)


@pytest.mark.parametrize("direction", ["union", "forward", "backward"])
@pytest.mark.parametrize("csls", [10, 0])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unsupervised_init_in_blocks_equals_the_whole_matrices(direction, csls, dtype) -> None:
    _, x, _, z = targets.spaces(700, 24)
    args = recipe_args(
        "unsupervised",
        unsupervised_vocab=600,
        direction=direction,
        csls_neighborhood=csls,
        dtype=dtype,
    )
    xt = vecmap._normalize_(torch.tensor(x, dtype=vecmap.DTYPES[dtype]), args.normalize)
    zt = vecmap._normalize_(torch.tensor(z, dtype=vecmap.DTYPES[dtype]), args.normalize)
    fwd, bwd = _whole_init(xt, zt, args)
    ar = torch.arange(600)
    want = {
        "forward": (ar, fwd),
        "backward": (bwd, ar),
        "union": (torch.cat([ar, bwd]), torch.cat([fwd, ar])),
    }[direction]
    assert len(set(fwd.tolist())) > 100  # a real dictionary, not one target for all
    # 0.01 MB: one row per block of the sorted matrices, 2 rows (fewer than k) of the
    # similarities; 1000 MB: one block, as before.
    for budget in (0.01, 0.3, 1000):
        got = vecmap._unsupervised_init(xt, zt, args, budget)
        for a, b in zip(got, want, strict=True):
            assert torch.equal(a, b), budget


def test_the_unsupervised_initialisation_says_what_it_cannot_split() -> None:
    args = recipe_args("unsupervised", unsupervised_vocab=4000)
    assert unsupervised_init_bytes(args, 4000) == 2 * 4 * 4000**2  # 128 MB
    assert unsupervised_init_bytes(recipe_args("unsupervised", dtype="float64"), 20000) == (
        2 * 8 * 20000**2
    )


def test_batch_size_wins_over_the_budget_and_the_budget_sizes_blocks() -> None:
    args = recipe_args("semi-supervised")
    assert args.batch_size is None
    assert all("batch_size" not in r for r in RECIPES.values())  # the tool's were memory only
    per_row = induction_bytes_per_row(args, 20000)
    assert per_row == 20000 * (4 + 4) + 10 * (4 + 8)
    assert induction_bytes_per_row(args, 20000, gpu=True) == per_row + 2 * 20000
    assert induction_block_rows(args, 20000, 256) == (256 << 20) // per_row == 1676
    assert induction_block_rows(args, 20000, 0.001) == 1
    assert induction_block_rows(args, 300, 256) == 300  # never more rows than there are
    explicit = recipe_args("semi-supervised", batch_size=137)
    assert induction_block_rows(explicit, 20000, 0.001) == 137
    assert induction_block_rows(explicit, 100, 256) == 100
    with pytest.raises(ConfigError, match=r"vecmap\.batch_size: expected a value >= 1"):
        VecMapArgs(batch_size=0)


def test_self_learning_gives_the_same_mapping_for_any_budget() -> None:
    runs = {
        name: targets.self_learning(1500, 24, iterations=4, **kw)
        for name, kw in {
            "default": {},
            "tiny budget": {"budget_mb": 0.05},
            "batch_size wins": {"budget_mb": 0.05, "batch_size": 137},
        }.items()
    }
    assert runs["default"]["block_rows"] == 1500
    assert runs["tiny budget"]["block_rows"] == 4  # 0.05 MB / (1500 x 8 + 10 x 12) bytes
    assert runs["batch_size wins"]["block_rows"] == 137
    ref = runs["default"]
    for name, run in runs.items():
        np.testing.assert_array_equal(run["src_indices"], ref["src_indices"], err_msg=name)
        np.testing.assert_array_equal(run["trg_indices"], ref["trg_indices"], err_msg=name)
        np.testing.assert_allclose(run["src_transform"], ref["src_transform"], atol=1e-6)
        assert run["objective"] == pytest.approx(ref["objective"], abs=1e-6)


def test_induction_gives_the_same_dictionary_for_any_budget() -> None:
    whole = targets.induce(600, 16, batch_size=600)  # one block: the whole 600 x 600 scores
    assert len(whole) > 100
    for budget in (0.01, 0.2, None):  # 0.01 MB: 4 rows per block
        got = targets.induce(600, 16, budget_mb=budget)
        assert [p[:2] for p in got] == [p[:2] for p in whole]
        np.testing.assert_allclose([p[2] for p in got], [p[2] for p in whole], atol=1e-6)


# --------------------------------------------------------------------------- capped

# Under a cap of 100 MB over the child's imports: the whole computations need 144 MB
# (self-learning's 6000 x 6000 block and random numbers), 128 MB (the initialisation's
# U = 2000 matrices as the tool holds them, (4 s + 16) U^2) and 256 MB (induction's
# 8000 x 8000 scores); in blocks of 8 MB they fit.
HEADROOM_MB = 100


def test_capped_self_learning() -> None:
    kw = {"n": 6000, "d": 32, "iterations": 2}
    assert HEADROOM_MB << 20 < 6000 * 6000 * (4 + 4)
    whole = run_capped(
        "capped_targets_mapping:self_learning", {**kw, "batch_size": 6000}, headroom_mb=HEADROOM_MB
    )
    assert whole.out_of_memory, whole.error
    blocked = run_capped(
        "capped_targets_mapping:self_learning", {**kw, "budget_mb": 8}, headroom_mb=HEADROOM_MB
    )
    assert blocked.ok, blocked.error
    ref = targets.self_learning(**kw)
    args = recipe_args("identical", vocabulary_cutoff=6000)
    assert blocked.value["block_rows"] == induction_block_rows(args, 6000, 8) == 174
    assert ref["block_rows"] == induction_block_rows(args, 6000, None) == 5578
    np.testing.assert_array_equal(blocked.value["src_indices"], ref["src_indices"])
    np.testing.assert_array_equal(blocked.value["trg_indices"], ref["trg_indices"])
    np.testing.assert_allclose(blocked.value["src_transform"], ref["src_transform"], atol=1e-6)


def test_capped_unsupervised_initialisation() -> None:
    kw = {"n": 2000, "d": 32, "vocab": 2000}
    assert HEADROOM_MB << 20 < (4 * 4 + 16) * 2000**2
    whole = run_capped(
        "capped_targets_mapping:unsupervised_init",
        {**kw, "budget_mb": 10_000},
        headroom_mb=HEADROOM_MB,
    )
    assert whole.out_of_memory, whole.error
    blocked = run_capped(
        "capped_targets_mapping:unsupervised_init", {**kw, "budget_mb": 8}, headroom_mb=HEADROOM_MB
    )
    assert blocked.ok, blocked.error
    for got, want in zip(blocked.value, targets.unsupervised_init(**kw), strict=True):
        np.testing.assert_array_equal(got, want)


def test_capped_unsupervised_initialisation_too_large_says_why() -> None:
    # U = 5000: the two sorted matrices alone (191 MB) exceed the cap, whatever the budget.
    result = run_capped(
        "capped_targets_mapping:unsupervised_init",
        {"n": 5000, "d": 8, "vocab": 5000, "budget_mb": 8},
        headroom_mb=HEADROOM_MB,
    )
    assert result.error is not None and result.error.startswith("MemoryError")
    assert "unsupervised_vocab=5000" in result.error and "needs 191 MB" in result.error


def test_capped_dictionary_induction() -> None:
    kw = {"n": 8000, "d": 32}
    assert HEADROOM_MB << 20 < 8000 * 8000 * 4
    whole = run_capped(
        "capped_targets_mapping:induce", {**kw, "batch_size": 8000}, headroom_mb=HEADROOM_MB
    )
    assert whole.out_of_memory, whole.error
    blocked = run_capped(
        "capped_targets_mapping:induce", {**kw, "budget_mb": 8}, headroom_mb=HEADROOM_MB
    )
    assert blocked.ok, blocked.error
    ref = targets.induce(**kw)
    assert len(ref) > 1000
    assert [p[:2] for p in blocked.value] == [p[:2] for p in ref]
    np.testing.assert_allclose([p[2] for p in blocked.value], [p[2] for p in ref], atol=1e-6)
