"""Working-memory budgets of the jobs whose data grow with the configuration.

The jobs that hold arrays growing with the corpus, the vocabulary or the evaluation data
(teacher and X2Static, aggregation, VecMap's self-learning, CSLS, dictionary induction,
eflomal, retrieval and BUCC mining, the statistics over per-example predictions) process
them in blocks or chunks whose size comes from one budget: the configuration's
``memory.block_mb`` (MB), passed to the library functions as ``budget_mb``. A block is
the largest number of rows whose working arrays fit the budget, never fewer than one row,
so that a job's peak memory is its fixed part (interpreter, model, the inputs it must
hold) plus at most about one budget, whatever the size of the data.
"""

from __future__ import annotations

import math

#: The default budget of one block's working arrays, MB (the schema's ``memory.block_mb``).
DEFAULT_BLOCK_MB = 256
MB = 1 << 20


def budget_bytes(budget_mb: float | None) -> int:
    """``budget_mb`` in bytes (None: :data:`DEFAULT_BLOCK_MB`). Raises ValueError for a
    budget that is not a positive number."""
    mb = DEFAULT_BLOCK_MB if budget_mb is None else budget_mb
    if not isinstance(mb, (int, float)) or isinstance(mb, bool) or not mb > 0 or math.isinf(mb):
        raise ValueError(f"memory budget: expected a positive number of MB, got {budget_mb!r}")
    return int(mb * MB)


def rows_per_block(
    bytes_per_row: float, budget_mb: float | None, *, at_most: int | None = None
) -> int:
    """Rows whose working arrays (``bytes_per_row`` each) fit ``budget_mb``: at least 1, at
    most ``at_most`` (the number of rows there are) when given."""
    if bytes_per_row <= 0:
        raise ValueError(f"memory budget: bytes per row must be positive, got {bytes_per_row!r}")
    rows = max(1, int(budget_bytes(budget_mb) // bytes_per_row))
    return max(1, min(rows, at_most)) if at_most is not None else rows
