"""Credentials never reach a log or a JSON file: xlalign.core.io.redact_url."""

from __future__ import annotations

import pytest

from xlalign.core.io import redact_url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://user:s3cr3t@host.org/f.xz", "https://user:***@host.org/f.xz"),
        ("https://ghp_TOKEN@github.com/o/r.git", "https://***@github.com/o/r.git"),
        ("https://u:p%40ss:w@h/x", "https://u:***@h/x"),
        ("postgresql://ml:pw@db:5432/mlflow", "postgresql://ml:***@db:5432/mlflow"),
        ("http://admin:pw@127.0.0.1:5000", "http://admin:***@127.0.0.1:5000"),
        ("https://h/f?token=abc&lang=de", "https://h/f?token=***&lang=de"),
        ("https://h/f?lang=de&access_token=abc", "https://h/f?lang=de&access_token=***"),
        ("https://h/f?api_key=abc#frag", "https://h/f?api_key=***#frag"),
        (
            "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4&X-Amz-Credential=AKIA%2F1"
            "&X-Amz-Signature=dead&X-Amz-Security-Token=tok&X-Amz-Expires=60",
            "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4&X-Amz-Credential=***"
            "&X-Amz-Signature=***&X-Amz-Security-Token=***&X-Amz-Expires=60",
        ),
        (
            "https://a.blob.core.windows.net/c/f?sv=2020&sig=abc%3D",
            "https://a.blob.core.windows.net/c/f?sv=2020&sig=***",
        ),
        (
            "https://storage.googleapis.com/b/o?X-Goog-Signature=ff",
            "https://storage.googleapis.com/b/o?X-Goog-Signature=***",
        ),
        ("https://h/cb#access_token=abc&state=1", "https://h/cb#access_token=***&state=1"),
        ("https://h/f?password=pw", "https://h/f?password=***"),
    ],
)
def test_credentials_are_masked(url: str, expected: str) -> None:
    assert redact_url(url) == expected
    assert redact_url(expected) == expected  # idempotent


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:///results/mlruns.db",
        "file:///data/mlruns",
        "mlruns",
        "https://huggingface.co/api/models/org/m/revision/main?blobs=true",
        "https://dl.fbaipublicfiles.com/arrival/dictionaries/de-en.txt",
        "https://h/f?token=",
        "user@example.org wrote https://h/x",
    ],
)
def test_nothing_else_changes(url: str) -> None:
    assert redact_url(url) == url


def test_urls_inside_messages() -> None:
    msg = (
        "HTTPSConnectionPool(host='h', port=443): Max retries exceeded with url: "
        "/f?sig=abc&sv=1 (from https://u:pw@h/f?sig=abc&sv=1)"
    )
    out = redact_url(msg)
    assert "abc" not in out and ":pw@" not in out
    assert out.endswith("(from https://u:***@h/f?sig=***&sv=1)")
