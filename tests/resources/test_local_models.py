"""Local model paths are loaded from disk only: a missing one is an InputError naming it,
and nothing is asked of the network (no fallback to the Hub under the same name)."""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from xlalign.core.errors import InputError
from xlalign.core.io import local_model_dir


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Hub switched on (as a user's shell may have it) and every connection recorded."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    attempts: list[Any] = []

    def connect(self: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise AssertionError(f"network attempt to {address}")

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> None:
        attempts.append(address)
        raise AssertionError(f"network attempt to {address}")

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> None:
        attempts.append(host)
        raise AssertionError(f"name lookup of {host}")

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return attempts


def test_local_model_dir(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=rf"{tmp_path / 'xlm-roberta-base'}: encoder not found"):
        local_model_dir(tmp_path / "xlm-roberta-base", what="encoder")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"empty: not a model directory: config.json"):
        local_model_dir(tmp_path / "empty")
    (tmp_path / "empty" / "config.json").write_text("{}")
    assert local_model_dir(tmp_path / "empty") == str(tmp_path / "empty")


def _contextual(p: Path) -> Any:
    from xlalign.encoders.contextual import load_truncated_encoder

    return load_truncated_encoder(p, 1)


def _classification(p: Path) -> Any:
    from xlalign.evaluation.tasks.classification import PairClassificationTask

    return PairClassificationTask().build_model(p, ["yes", "no"])


def _tagging(p: Path) -> Any:
    from xlalign.evaluation.tasks.tagging import TaggingTask

    return TaggingTask().build_model(p, ["O", "B-PER"])


def _qa(p: Path) -> Any:
    from xlalign.evaluation.tasks.qa import QATask

    return QATask().build_model(p, [])


def _retrieval(p: Path) -> Any:
    from xlalign.evaluation.tasks.retrieval import _load

    return _load(p, "cpu")


def _alignment(p: Path) -> Any:
    from xlalign.analysis.alignment_score import _load_encoder

    return _load_encoder(p, None, "cpu")


@pytest.mark.parametrize(
    "load", [_contextual, _classification, _tagging, _qa, _retrieval, _alignment]
)
def test_missing_local_model_is_refused_without_the_network(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    no_network: list[Any],
    load: Callable[[Path], Any],
) -> None:
    # A relative path that is also a valid Hub repository id: transformers would ask the
    # Hub for it (and could load that model instead).
    monkeypatch.chdir(tmp_path)
    missing = Path("FacebookAI") / "xlm-roberta-base"
    with pytest.raises(InputError) as info:
        load(missing)
    assert str(missing) in str(info.value) and "not found" in str(info.value)
    assert no_network == []


def test_hf_offline_switches_the_hub_off_even_after_import(
    tmp_path: Path, no_network: list[Any]
) -> None:
    import huggingface_hub

    from xlalign.resources.embedded.encoder import hf_offline

    assert huggingface_hub.is_offline_mode() is False  # read at import, HF_HUB_OFFLINE unset
    with hf_offline():
        assert huggingface_hub.is_offline_mode() is True
        with pytest.raises(Exception, match="cache"):
            huggingface_hub.hf_hub_download(
                "FacebookAI/xlm-roberta-base", "config.json", cache_dir=tmp_path
            )
    assert huggingface_hub.is_offline_mode() is False
    assert no_network == []
