"""Root of the test suite.

Tests mirror the packages of src/xlalign (tests/<package>/test_*.py), with the end-to-end
workflow runs apart in tests/e2e (their fixtures in tests/e2e/conftest.py) and checks of
the repository itself in tests/repo. Test module basenames are unique across directories.

Shared helpers are plain modules next to this file (httpserver.py, tiny_encoder.py,
synthetic_cache.py), imported by name: under pytest's default ``prepend`` import mode this
conftest puts tests/ on sys.path, as each test module's own directory is. Test modules
never import one another across directories.
"""
