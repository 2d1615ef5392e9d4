"""Credentials inside URLs never reach the MLflow store (a job's string params)."""

from __future__ import annotations

from xlalign.workflow.tracking import split_stats


def test_split_stats_masks_urls_in_params() -> None:
    _, params, _ = split_stats(
        {
            "source": "https://u:pw1@host/c.xz?token=tok2",
            "files": ["https://h/a?sig=sig3", "https://h/b"],
            "n": 3,
        }
    )
    assert params["source"] == "https://u:***@host/c.xz?token=***"
    assert "sig3" not in params["files"] and "https://h/b" in params["files"]
