"""The learning_curve block: defaults, and the cross-key checks made at parse time."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from xlalign.config import load, validate
from xlalign.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
MINIMAL = {"name": "t", "languages": ["en", "de", "ru"], "seeds": [1]}


def _cfg(**lc: object) -> dict:
    cfg = copy.deepcopy(MINIMAL)
    cfg["learning_curve"] = lc
    return cfg


def _bad(**lc: object) -> str:
    with pytest.raises(ConfigError) as exc:
        validate(_cfg(**lc), origin="my.yaml")
    return str(exc.value)


def test_disabled_by_default_with_two_fractions() -> None:
    cfg = validate(copy.deepcopy(MINIMAL), origin="my.yaml")
    assert cfg["learning_curve"] == {
        "enabled": False,
        "languages": [],
        "fractions": [0.25, 0.5],
        "seed": 0,
    }


def test_a_valid_block_passes() -> None:
    cfg = validate(_cfg(enabled=True, languages=["de", "ru"], fractions=[0.1, 0.3]), origin="x")
    assert cfg["learning_curve"]["languages"] == ["de", "ru"]


@pytest.mark.parametrize(
    ("lc", "needle"),
    [
        ({"languages": ["en"]}, "learning_curve.languages[0]: 'en' is the hub"),
        ({"languages": ["de", "ja"]}, "learning_curve.languages[1]: 'ja' is not in languages"),
        ({"fractions": [0.5, 0.25]}, "learning_curve.fractions: [0.5, 0.25]: expected increasing"),
        ({"fractions": [0.5, 0.5]}, "expected increasing"),
        ({"fractions": [0.0, 0.5]}, "learning_curve.fractions"),
        ({"fractions": [0.5, 1.0]}, "learning_curve.fractions"),
        ({"fractions": []}, "learning_curve.fractions"),
        ({"enabled": True}, "learning_curve.languages: empty while"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_blocks_name_the_key(lc: dict, needle: str) -> None:
    msg = _bad(**lc)
    assert "my.yaml" in msg and needle in msg


def test_the_curve_needs_the_aggregation_baseline() -> None:
    cfg = _cfg(enabled=True, languages=["de"])
    cfg["extract"] = {"aggregation": {"enabled": False}}
    with pytest.raises(ConfigError, match=r"extract\.aggregation\.enabled"):
        validate(cfg, origin="my.yaml")


def test_the_embedded_default_draws_the_curve_of_a_language_with_a_dictionary() -> None:
    cfg = load(ROOT / "config" / "config.yaml")
    lc = cfg["learning_curve"]
    assert lc["enabled"] and lc["languages"] == ["de"]
    assert load(ROOT / "config" / "paper.yaml")["learning_curve"]["enabled"] is False
