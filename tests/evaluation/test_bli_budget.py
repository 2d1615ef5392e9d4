"""BLI and CSLS over whole vocabularies in blocks of a memory budget (issue 28): the
budget changes the memory, never the numbers; under a capped address space the blocked
retrieval runs where the whole ``vocabulary x vocabulary`` scores do not fit."""

from __future__ import annotations

import capped_targets_mapping as targets
import pytest
import torch
from capped import run_capped

from xlalign.core.errors import ConfigError
from xlalign.evaluation.bli import block_rows, csls_penalties, evaluate_bli, unit_rows


def test_block_rows_batch_size_wins_and_the_budget_sizes_blocks() -> None:
    assert block_rows(50_000, None) == (256 << 20) // (4 * 50_000) == 1342
    assert block_rows(50_000, None, 64) == (64 << 20) // (4 * 50_000)
    assert block_rows(50_000, None, 64, bytes_per_col=5, bytes_per_row=1200) == (64 << 20) // (
        5 * 50_000 + 1200
    )
    assert block_rows(50_000, None, 0.001) == 1  # never fewer than one row
    assert block_rows(50_000, 7, 0.001) == 7  # a given batch_size wins
    with pytest.raises(ConfigError, match="batch_size"):
        block_rows(10, 0)
    with pytest.raises(ValueError, match="memory budget"):
        block_rows(10, None, -1)


def test_csls_and_bli_give_the_same_numbers_for_any_budget() -> None:
    src, x, tgt, z = targets.spaces(900, 16, rotate=False, noise=1.0)
    dic = {f"w{i}": [f"w{i}" if i < 450 else f"t{i}"] for i in range(0, 900, 7)}
    xs, zs = unit_rows(x, torch.device("cpu")), unit_rows(z, torch.device("cpu"))
    ref_t, ref_s = csls_penalties(xs, zs, 10, batch_size=900)  # one block: the whole matrix
    ref = evaluate_bli(src, x, tgt, z, dic, retrieval="csls", batch_size=900)
    assert 0.05 < ref.precision[1] < 0.95
    for budget in (0.01, 0.5, None):  # 0.01 MB: 2 rows per block
        r_t, r_s = csls_penalties(xs, zs, 10, budget_mb=budget)
        torch.testing.assert_close(r_t, ref_t, rtol=0, atol=1e-6)
        torch.testing.assert_close(r_s, ref_s, rtol=0, atol=1e-6)
        res = evaluate_bli(src, x, tgt, z, dic, retrieval="csls", budget_mb=budget)
        assert res.ranks == ref.ranks
        assert res.precision == ref.precision and res.mrr == pytest.approx(ref.mrr)


def test_capped_csls_bli_over_whole_vocabularies() -> None:
    # 8000 words per side: the whole r_S scores would be 256 MB; the cap leaves 100 MB
    # over the child's imports, blocks of 8 MB fit.
    kw = {"n": 8000, "d": 32}
    headroom = 100
    assert headroom << 20 < 8000 * 8000 * 4
    whole = run_capped(
        "capped_targets_mapping:bli_csls", {**kw, "batch_size": 8000}, headroom_mb=headroom
    )
    assert whole.out_of_memory, whole.error
    blocked = run_capped(
        "capped_targets_mapping:bli_csls", {**kw, "budget_mb": 8}, headroom_mb=headroom
    )
    assert blocked.ok, blocked.error
    ref = targets.bli_csls(**kw)
    assert len(ref["ranks"]) > 250 and 0.05 < ref["precision"][1] < 0.95
    assert blocked.value["ranks"] == ref["ranks"]
    assert blocked.value["precision"] == ref["precision"]
