"""Fixtures of the continued pre-training tests."""

from __future__ import annotations

from typing import Any

import pytest
from pretrain_world import build_world


@pytest.fixture(scope="session")
def pt_world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return build_world(tmp_path_factory.mktemp("pretrain_world"))
