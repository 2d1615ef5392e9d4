"""Tests for xlalign.resources.registry with locally built wheels and .debs (the Debian
archive itself: tests/resources/test_debian.py)."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from xlalign.core.errors import DownloadError, InputError
from xlalign.resources.registry import extract_deb, extract_wheel, pip_download


def _make_wheel(directory: Path, name: str = "tinypkg", version: str = "0.1") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    wheel = directory / f"{name}-{version}-py3-none-any.whl"
    dist_info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": "VALUE = 42\n",
        f"{name}/data/words.txt": "haus\thouse\n",
        f"{dist_info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: test\n"
        ),
        f"{dist_info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = "".join(f"{path},,\n" for path in files) + f"{dist_info}/RECORD,,\n"
    with zipfile.ZipFile(wheel, "w") as zf:
        for path, text in files.items():
            zf.writestr(path, text)
        zf.writestr(f"{dist_info}/RECORD", record)
    return wheel


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    house = tmp_path_factory.mktemp("wheelhouse")
    _make_wheel(house, version="0.1")
    _make_wheel(house, version="0.2")
    return house


def _local(house: Path) -> list[str]:
    return ["--no-index", "--find-links", str(house)]


def test_pip_download_from_local_index(tmp_path: Path, wheelhouse: Path) -> None:
    dest = tmp_path / "wheels"
    out = pip_download("tinypkg==0.1", dest, index_args=_local(wheelhouse))
    assert out == dest / "tinypkg-0.1-py3-none-any.whl"
    assert out.read_bytes() == (wheelhouse / out.name).read_bytes()
    assert sorted(p.name for p in dest.iterdir()) == [out.name]  # no scratch dir left


def test_pip_download_reuses_exact_pin(tmp_path: Path, wheelhouse: Path) -> None:
    dest = tmp_path / "wheels"
    dest.mkdir()
    marker = dest / "tinypkg-0.1-py3-none-any.whl"
    marker.write_bytes(b"previously downloaded")
    # An index with nothing in it: only the reuse path can succeed.
    empty = tmp_path / "empty"
    empty.mkdir()
    out = pip_download("TinyPkg == 0.1", dest, index_args=_local(empty))
    assert out == marker
    assert out.read_bytes() == b"previously downloaded"
    # Another version is not "exactly that requirement": it is fetched.
    out2 = pip_download("tinypkg==0.2", dest, index_args=_local(wheelhouse))
    assert out2.name == "tinypkg-0.2-py3-none-any.whl"


def test_pip_download_unknown_requirement(tmp_path: Path, wheelhouse: Path) -> None:
    dest = tmp_path / "wheels"
    with pytest.raises(DownloadError) as info:
        pip_download("no-such-pkg-xyz==1.0", dest, index_args=_local(wheelhouse))
    msg = str(info.value)
    assert "no-such-pkg-xyz==1.0" in msg
    assert "No matching distribution" in msg or "Could not find" in msg  # pip's own words
    assert not any(dest.iterdir())


def test_extract_wheel(tmp_path: Path, wheelhouse: Path) -> None:
    out = extract_wheel(wheelhouse / "tinypkg-0.1-py3-none-any.whl", tmp_path / "unpacked")
    assert (out / "tinypkg" / "__init__.py").read_text() == "VALUE = 42\n"
    assert (out / "tinypkg" / "data" / "words.txt").read_text() == "haus\thouse\n"
    assert (out / "tinypkg-0.1.dist-info" / "METADATA").is_file()
    not_wheel = tmp_path / "x.zip"
    not_wheel.write_bytes(b"")
    with pytest.raises(InputError, match="wheel"):
        extract_wheel(not_wheel, tmp_path / "nope")


def test_extract_wheel_rejects_traversal(tmp_path: Path) -> None:
    wheel = tmp_path / "evil-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("../evil.py", "boom")
    with pytest.raises(InputError, match=r"\.\./evil\.py"):
        extract_wheel(wheel, tmp_path / "out")
    assert not (tmp_path / "evil.py").exists()
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- .deb


def _build_deb(tmp_path: Path) -> Path:
    root = tmp_path / "pkgroot"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        "Package: xlalign-tiny\nVersion: 1.0\nArchitecture: all\n"
        "Maintainer: Test <test@example.org>\nDescription: tiny test package\n"
    )
    data = root / "usr" / "share" / "xlalign-tiny"
    data.mkdir(parents=True)
    (data / "hello.txt").write_text("hallo welt\n")
    deb = tmp_path / "xlalign-tiny_1.0_all.deb"
    subprocess.run(
        ["dpkg-deb", "--root-owner-group", "--build", str(root), str(deb)],
        check=True,
        capture_output=True,
    )
    return deb


def test_extract_deb(tmp_path: Path) -> None:
    if shutil.which("dpkg-deb") is None:
        print("dpkg-deb is not installed; cannot build or extract a .deb here")
        pytest.skip("dpkg-deb is not installed")
    deb = _build_deb(tmp_path)
    out = extract_deb(deb, tmp_path / "extracted")
    assert (out / "usr" / "share" / "xlalign-tiny" / "hello.txt").read_text() == "hallo welt\n"
    assert not (out / "DEBIAN").exists()

    broken = tmp_path / "broken.deb"
    broken.write_bytes(deb.read_bytes()[:100])
    with pytest.raises(InputError, match=r"broken\.deb"):
        extract_deb(broken, tmp_path / "never")
    assert not (tmp_path / "never").exists()
