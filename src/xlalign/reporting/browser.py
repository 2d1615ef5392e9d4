"""Headless Chromium, to see an HTML report as a reader's browser shows it.

The Snakemake report is a JavaScript application with its results embedded; whether its
tables and images are really there only shows once a browser has run it. These helpers
run Chromium headless on a local file and return the DOM after the scripts ran
(:func:`dump_dom`) or a PNG of the page (:func:`screenshot`).

Chromium is looked up on PATH (Debian's package ``chromium``, which ``make test`` installs
where the user may install packages); another build can be named by ``XLALIGN_CHROMIUM``.
Only the report's browser tests need it: without it they are skipped with
:func:`missing_reason` as the reason, unless ``XLALIGN_REQUIRE_CHROMIUM`` is set (as in
CI), where they fail instead.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from xlalign.core.errors import InputError, ToolError
from xlalign.core.io import PathLike, atomic_path

#: Executable names looked up on PATH, in this order.
CANDIDATES: tuple[str, ...] = ("chromium", "chromium-browser", "google-chrome")
#: The Debian package that provides the first of them.
DEBIAN_PACKAGE = "chromium"
#: Environment variable naming a Chromium executable to use instead of the PATH look-up.
ENV_VAR = "XLALIGN_CHROMIUM"
#: Set (non-empty, not "0") where Chromium must be there: its tests fail instead of skipping.
REQUIRE_VAR = "XLALIGN_REQUIRE_CHROMIUM"
#: Default virtual time (ms) granted to the page's scripts, timers and image loads.
BUDGET_MS = 10_000


def find_chromium(candidates: Sequence[str] = CANDIDATES) -> str:
    """The path of a Chromium executable: ``$XLALIGN_CHROMIUM`` if set, else the first of
    ``candidates`` on PATH.

    Raises :class:`ToolError` naming what was looked for and the Debian package to install.
    """
    override = os.environ.get(ENV_VAR)
    if override:
        found = shutil.which(override)
        if found is None:
            raise ToolError(f"{ENV_VAR}={override!r}: not an executable file")
        return found
    for name in candidates:
        found = shutil.which(name)
        if found:
            return found
    raise ToolError(
        f"no headless Chromium found: looked for {', '.join(candidates)} on PATH (or "
        f"{ENV_VAR}); on Debian install the package '{DEBIAN_PACKAGE}' "
        f"(apt-get install -y {DEBIAN_PACKAGE}, which `make test` runs where the user may), "
        f"elsewhere any Chromium or Chrome build, named by {ENV_VAR}"
    )


def missing_reason() -> str | None:
    """Why the browser tests cannot run here (no Chromium: the finder's message), or
    ``None`` when a Chromium is found or ``$XLALIGN_REQUIRE_CHROMIUM`` asks to fail
    rather than skip."""
    if os.environ.get(REQUIRE_VAR, "") not in ("", "0"):
        return None
    try:
        find_chromium()
    except ToolError as exc:
        return str(exc)
    return None


def _file_url(html_path: PathLike) -> str:
    path = Path(html_path)
    if not path.is_file():
        raise InputError(f"{path}: file not found (the HTML page to open in Chromium)")
    return path.resolve().as_uri()


def _base_args(executable: str, profile: Path, budget_ms: int) -> list[str]:
    """Flags for a quiet, throw-away headless session; ``--no-sandbox`` as root, where
    Chromium refuses to start with its sandbox."""
    args = [
        executable,
        "--headless",
        "--disable-gpu",
        "--hide-scrollbars",
        "--mute-audio",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-extensions",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        f"--virtual-time-budget={int(budget_ms)}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")
    return args


def _run(args: list[str], timeout: float) -> str:
    """Run Chromium, return its stdout; the whole process group dies on a timeout."""
    proc = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise ToolError(f"{args[0]}: no answer within {timeout:g} s ({args[-1]})") from exc
    if proc.returncode != 0:
        tail = "\n".join(err.strip().splitlines()[-15:])
        raise ToolError(f"{args[0]} exited with {proc.returncode} on {args[-1]}:\n{tail}")
    return out


def dump_dom(
    html_path: PathLike,
    *,
    budget_ms: int = BUDGET_MS,
    timeout: float = 180,
    executable: str | None = None,
) -> str:
    """The page's DOM, serialised as HTML, after its scripts ran for ``budget_ms`` of
    virtual time (so a script-built page, like Snakemake's report, shows its content)."""
    url = _file_url(html_path)
    exe = executable or find_chromium()
    with tempfile.TemporaryDirectory(prefix="xlalign-chromium-") as profile:
        return _run([*_base_args(exe, Path(profile), budget_ms), "--dump-dom", url], timeout)


def screenshot(
    html_path: PathLike,
    png_path: PathLike,
    size: tuple[int, int] = (1280, 800),
    *,
    budget_ms: int = BUDGET_MS,
    timeout: float = 180,
    executable: str | None = None,
) -> Path:
    """A PNG of the page's first ``size`` (width, height) pixels, written atomically to
    ``png_path``; returns that path."""
    width, height = size
    if width <= 0 or height <= 0:
        raise ValueError(f"screenshot size must be positive, got {size!r}")
    url = _file_url(html_path)
    exe = executable or find_chromium()
    target = Path(png_path)
    with (
        tempfile.TemporaryDirectory(prefix="xlalign-chromium-") as profile,
        atomic_path(target, suffix=".png") as tmp,
    ):
        tmp.unlink()  # so that a Chromium that wrote nothing is caught below
        args = [
            *_base_args(exe, Path(profile), budget_ms),
            f"--window-size={width},{height}",
            f"--screenshot={tmp}",
            url,
        ]
        _run(args, timeout)
        if not tmp.is_file() or tmp.stat().st_size == 0:
            raise ToolError(f"{exe} wrote no screenshot of {url}")
    return target
