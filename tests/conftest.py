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

import os
from collections.abc import Iterator

import pytest

#: What a job sets for its process's thread pools (xlalign.workflow.jobscript.job_logging).
_THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@pytest.fixture(autouse=True)
def _threads_restored() -> Iterator[None]:
    """Every test ends with torch's intra-op thread count and the thread variables of the
    environment as they were when it began (a module's own one-thread setting stays): a
    job script run in this process (``job_logging``) or a stage given ``threads=`` sets
    them for its job's process, and every later test that compares
    a run in a child process (which inherits the environment) with one in this process
    (the resume tests) would otherwise sum in other orders on each side."""
    import torch

    threads = torch.get_num_threads()
    env = {var: os.environ.get(var) for var in _THREAD_ENV}
    yield
    for var, value in env.items():
        if value is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = value
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """One intra-op thread for a whole module (``pytestmark =
    pytest.mark.usefixtures("one_torch_thread")``): tiny models and small matrices on a
    shared 2-core machine run several times faster on one thread than on two."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
