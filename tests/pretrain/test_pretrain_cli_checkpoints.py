"""``--checkpoint-minutes`` of the commands that pre-train: the configuration's
``checkpoints.interval_minutes`` by default (10 for ``pretrain``, which reads no
configuration), 0 or ``none`` as in the configuration, a negative number refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlalign.cli import build_parser
from xlalign.cli.common import checkpoint_minutes_of
from xlalign.core.cadence import DEFAULT_INTERVAL_MINUTES


@pytest.fixture
def paths(tmp_path: Path) -> dict[str, str]:
    enc = tmp_path / "enc"
    enc.mkdir()
    text = tmp_path / "en.txt"
    text.write_text("a paragraph\n", encoding="utf-8")
    return {"enc": str(enc), "text": str(text), "out": str(tmp_path / "out")}


@pytest.mark.parametrize(
    ("given", "expected"),
    [([], DEFAULT_INTERVAL_MINUTES), (["0"], 0.0), (["2.5"], 2.5), (["none"], None)],
)
def test_pretrain_option(paths: dict[str, str], given: list[str], expected: float | None) -> None:
    argv = ["pretrain", "mlm", paths["enc"], "-o", paths["out"]]
    argv += ["--checkpoint-minutes", *given] if given else []
    assert build_parser().parse_args(argv).checkpoint_minutes == expected


def test_a_negative_interval_is_a_usage_error(
    paths: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["pretrain", "mlm", paths["enc"], "-o", paths["out"], "--checkpoint-minutes", "-1"]
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(argv)
    assert exc.value.code == 2
    assert "--checkpoint-minutes" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("given", "expected"), [([], 3.0), (["0"], 0.0), (["none"], None)], ids=["config", "0", "none"]
)
def test_configured_commands_default_to_the_configuration(
    paths: dict[str, str], given: list[str], expected: float | None
) -> None:
    config = {"checkpoints": {"interval_minutes": 3.0}}
    argv = ["meta-mono", "--text", paths["text"], "-o", paths["out"]]
    argv += ["--checkpoint-minutes", *given] if given else []
    args = build_parser().parse_args(argv)
    assert checkpoint_minutes_of(args, config) == expected
