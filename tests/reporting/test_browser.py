"""Headless Chromium helpers: the finder and the command lines (a fake executable on
PATH), then one real run of the Debian package on a script-built page (skipped, with the
reason, where no Chromium is installed)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image as mpimg

from xlalign.core.errors import InputError, ToolError
from xlalign.reporting import browser

FAKE = """#!/bin/sh
printf '%s\\n' "$@" > "$FAKE_CHROMIUM_ARGS"
for a in "$@"; do
  case "$a" in
    --screenshot=*) printf 'not really a PNG' > "${a#--screenshot=}" ;;
    --dump-dom) echo '<html><body><p id="x">dumped</p></body></html>' ;;
  esac
done
echo "fake failure detail" >&2
exit "${FAKE_CHROMIUM_RC:-0}"
"""


def _fake(bin_dir: Path, name: str) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    exe = bin_dir / name
    exe.write_text(FAKE, encoding="utf-8")
    exe.chmod(0o755)
    return exe


@pytest.fixture
def fake_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty PATH directory (nothing else on PATH) and the args log of the fake."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv(browser.ENV_VAR, raising=False)
    monkeypatch.setenv("FAKE_CHROMIUM_ARGS", str(tmp_path / "args.txt"))
    return bin_dir


def _args(tmp_path: Path) -> list[str]:
    return (tmp_path / "args.txt").read_text(encoding="utf-8").splitlines()


def _page(tmp_path: Path) -> Path:
    page = tmp_path / "page dir" / "report.html"
    page.parent.mkdir(exist_ok=True)
    page.write_text("<html><body>hi</body></html>", encoding="utf-8")
    return page


def test_find_nothing_names_candidates_and_package(fake_path: Path) -> None:
    with pytest.raises(ToolError) as err:
        browser.find_chromium()
    msg = str(err.value)
    for name in ("chromium", "chromium-browser", "google-chrome", "apt-get install -y chromium"):
        assert name in msg


def test_find_takes_candidates_in_order(fake_path: Path) -> None:
    chrome = _fake(fake_path, "google-chrome")
    assert browser.find_chromium() == str(chrome)
    debian = _fake(fake_path, "chromium")
    assert browser.find_chromium() == str(debian)
    (fake_path / "not-executable").write_text("", encoding="utf-8")
    with pytest.raises(ToolError):
        browser.find_chromium(("not-executable",))


def test_find_env_override(
    fake_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake(fake_path, "chromium")
    other = _fake(tmp_path / "elsewhere", "my-chrome")
    monkeypatch.setenv(browser.ENV_VAR, str(other))
    assert browser.find_chromium() == str(other)
    monkeypatch.setenv(browser.ENV_VAR, str(tmp_path / "missing"))
    with pytest.raises(ToolError, match=browser.ENV_VAR):
        browser.find_chromium()


def test_dump_dom_command_line(
    fake_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake(fake_path, "chromium-browser")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    page = _page(tmp_path)
    dom = browser.dump_dom(page, budget_ms=1234)
    assert '<p id="x">dumped</p>' in dom
    args = _args(tmp_path)
    assert args[-1] == page.resolve().as_uri()  # file:// URL, the space quoted
    assert "%20" in args[-1]
    for flag in ("--headless", "--dump-dom", "--virtual-time-budget=1234", "--no-sandbox"):
        assert flag in args
    assert any(a.startswith("--user-data-dir=") for a in args)


def test_no_sandbox_only_as_root(
    fake_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake(fake_path, "chromium")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    browser.dump_dom(_page(tmp_path))
    assert "--no-sandbox" not in _args(tmp_path)


def test_screenshot_command_line(fake_path: Path, tmp_path: Path) -> None:
    _fake(fake_path, "chromium")
    out = tmp_path / "shots" / "first.png"
    assert browser.screenshot(_page(tmp_path), out, (640, 480)) == out
    assert out.read_bytes() == b"not really a PNG"
    args = _args(tmp_path)
    assert "--window-size=640,480" in args
    assert not [p for p in out.parent.iterdir() if p != out]  # no temp file left


def test_failures_are_tool_errors(
    fake_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake(fake_path, "chromium")
    with pytest.raises(InputError, match=r"missing\.html"):
        browser.dump_dom(tmp_path / "missing.html")
    monkeypatch.setenv("FAKE_CHROMIUM_RC", "3")
    with pytest.raises(ToolError, match=r"exited with 3(.|\n)*fake failure detail"):
        browser.dump_dom(_page(tmp_path))
    out = tmp_path / "shot.png"
    with pytest.raises(ToolError):
        browser.screenshot(_page(tmp_path), out)
    assert not out.exists()
    with pytest.raises(ValueError, match="size"):
        browser.screenshot(_page(tmp_path), out, (0, 10))


#: A 2x2 red PNG.
RED_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4"
    "nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg=="
)
# A page whose content only exists once its script ran, with an image (RED_PNG as a data
# URI) whose load is reported into the DOM: what the report test relies on.
SCRIPTED = """<!DOCTYPE html><html><body style="background:#fff">
<div id="root"></div>
<script>
const img = new Image();
img.onload = () => { document.getElementById("root").dataset.width = img.naturalWidth; };
img.src = "data:image/png;base64,RED_PNG";
document.getElementById("root").innerHTML =
  '<h1 style="font-size:80px;color:#b00">Built by script</h1>';
document.getElementById("root").appendChild(img);
</script></body></html>""".replace("RED_PNG", RED_PNG)


def test_missing_reason_skips_unless_required(
    fake_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(browser.REQUIRE_VAR, raising=False)
    reason = browser.missing_reason()
    assert reason and "no headless Chromium found" in reason
    monkeypatch.setenv(browser.REQUIRE_VAR, "0")
    assert browser.missing_reason() == reason
    monkeypatch.setenv(browser.REQUIRE_VAR, "1")
    assert browser.missing_reason() is None  # the test goes on and fails loudly
    monkeypatch.delenv(browser.REQUIRE_VAR)
    _fake(fake_path, "chromium")
    assert browser.missing_reason() is None


def test_real_chromium_runs_scripts_and_shoots(tmp_path: Path) -> None:
    """The Debian package itself (installed by `make test` where the user may); skipped
    without a Chromium unless $XLALIGN_REQUIRE_CHROMIUM is set."""
    if reason := browser.missing_reason():
        pytest.skip(reason)
    page = tmp_path / "scripted.html"
    page.write_text(SCRIPTED, encoding="utf-8")
    dom = browser.dump_dom(page, budget_ms=2000)
    assert "<h1" in dom and "Built by script" in dom
    assert 'data-width="2"' in dom
    png = browser.screenshot(page, tmp_path / "shot.png", (400, 300), budget_ms=2000)
    pixels = mpimg.imread(png)
    assert pixels.shape[:2] == (300, 400)
    assert np.ptp(pixels[..., :3]) > 0.3  # red heading on white, not a blank page
