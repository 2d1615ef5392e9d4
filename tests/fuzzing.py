"""Shared settings of the readers' property tests (hypothesis).

Every reader has two runs of the same property: a quick one in `make test` (a few hundred
examples, derandomised so CI is reproducible) and a long one behind the ``fuzz`` marker
(thousands of examples, random), run with ``pytest -m fuzz``.

The property is the same for every reader: any byte string either parses to records that
round-trip through the matching writer, or raises :class:`xlalign.core.errors.InputError`
whose message names the file and the line.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

#: Examples per reader in `make test`.
QUICK_EXAMPLES = 200
#: Examples per reader under the ``fuzz`` marker.
FUZZ_EXAMPLES = 5000

_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
}

#: Decorator for the quick run: ``@quick`` above ``@given``.
quick = settings(max_examples=QUICK_EXAMPLES, derandomize=True, database=None, **_COMMON)
#: Decorator for the long run (add ``@pytest.mark.fuzz`` too).
fuzz = settings(max_examples=FUZZ_EXAMPLES, database=None, **_COMMON)
