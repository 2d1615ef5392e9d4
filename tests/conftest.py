"""Root of the test suite.

Tests mirror the packages of src/xlalign (tests/<package>/test_*.py), with the end-to-end
workflow runs apart in tests/e2e (their fixtures in tests/e2e/conftest.py) and checks of
the repository itself in tests/repo. Test module basenames are unique across directories.

Shared helpers are plain modules next to this file (httpserver.py, tiny_encoder.py,
synthetic_cache.py), imported by name: under pytest's default ``prepend`` import mode this
conftest puts tests/ on sys.path, as each test module's own directory is. Test modules
never import one another across directories.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

_DEFAULT_THREADS: list[int] = []


@pytest.fixture(autouse=True)
def _torch_threads_restored() -> Iterator[None]:
    """Every test ends with torch's intra-op thread count back at torch's default: the
    stages set it for their job's process (``threads=``), and a test that runs one in this
    process would otherwise change the floating-point sums of every later test that
    compares a run in a child process with one in this process (the resume tests)."""
    import torch

    if not _DEFAULT_THREADS:
        _DEFAULT_THREADS.append(torch.get_num_threads())
    yield
    if torch.get_num_threads() != _DEFAULT_THREADS[0]:
        torch.set_num_threads(_DEFAULT_THREADS[0])
