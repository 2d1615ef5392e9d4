"""xlalign.core.memory: blocks sized by a working-memory budget."""

from pathlib import Path

import pytest
import yaml
from capped import run_capped

from xlalign.core.memory import DEFAULT_BLOCK_MB, budget_bytes, rows_per_block


def test_budget_bytes_default_and_value():
    assert budget_bytes(None) == DEFAULT_BLOCK_MB << 20
    assert budget_bytes(1.5) == int(1.5 * (1 << 20))


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "256"])
def test_budget_bytes_refuses(bad):
    with pytest.raises(ValueError, match="memory budget"):
        budget_bytes(bad)


def test_rows_per_block_fits_budget_at_least_one_row():
    assert rows_per_block(1 << 20, 10) == 10
    assert rows_per_block(1 << 30, 10) == 1  # one row bigger than the budget: still one
    assert rows_per_block(1, 10, at_most=7) == 7
    with pytest.raises(ValueError, match="bytes per row"):
        rows_per_block(0, 10)


def test_schema_default_matches_library():
    schema = yaml.safe_load(
        Path(__file__).parents[2].joinpath("workflow/schemas/config.schema.yaml").read_text()
    )
    assert schema["properties"]["memory"]["properties"]["block_mb"]["default"] == DEFAULT_BLOCK_MB


def test_the_recipes_restatement_matches():
    """xlalign.mapping.recipes restates rows_per_block (it may import no xlalign module)."""
    from xlalign.mapping import recipes

    assert recipes._DEFAULT_BLOCK_MB == DEFAULT_BLOCK_MB
    args = recipes.recipe_args("semi-supervised")
    per_row = recipes.induction_bytes_per_row(args, 20000)
    for budget in (None, 16, 256, 0.001):
        assert recipes.induction_block_rows(args, 20000, budget) == rows_per_block(
            per_row, budget, at_most=20000
        )


def test_the_capped_harness_tells_the_cap_from_other_errors() -> None:
    # the harness of the capped-memory tests (tests/capped.py): an allocation over the cap is
    # out of memory, any other failure is not, and a result under the cap comes back
    over = run_capped("numpy:ones", {"shape": (64 << 20,)}, headroom_mb=64, preload=("numpy",))
    assert not over.ok and over.out_of_memory, over.error
    other = run_capped("json:loads", {"s": "{"}, headroom_mb=64, preload=("numpy",))
    assert not other.ok and not other.out_of_memory and "JSONDecodeError" in other.error
    fits = run_capped("builtins:dict", {"k": 120}, headroom_mb=64, preload=("numpy",))
    assert fits.ok and fits.value == {"k": 120} and fits.cap_mb - fits.base_mb == 64
