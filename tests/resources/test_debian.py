"""Tests for xlalign.resources.debian: the .deb reader (against dpkg-deb where present),
the apt configuration reader, Debian version order, and fetching from a signed archive
served on loopback HTTP (signed with a test key made by gpg; skipped without gpg)."""

from __future__ import annotations

import glob
import hashlib
import io
import lzma
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from xlalign.core.errors import ConfigError, DownloadError, InputError
from xlalign.resources import debian
from xlalign.resources.debian import (
    MISSING_SOURCE,
    SETTING,
    DebianSource,
    apt_sources,
    compare_versions,
    deb_download,
    debian_sources,
    extract_deb,
    verify_inrelease,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from httpserver import serve

# --------------------------------------------------------------------------- .deb files


def _ar(members: list[tuple[str, bytes]]) -> bytes:
    out = bytearray(b"!<arch>\n")
    for name, data in members:
        header = f"{name:<16}{0:<12}{0:<6}{0:<6}{100644:<8}{len(data):<10}".encode() + b"`\n"
        out += header + data + (b"\n" if len(data) % 2 else b"")
    return bytes(out)


def make_deb(
    path: Path,
    files: dict[str, bytes],
    *,
    compression: str = "xz",
    links: dict[str, str] | None = None,
) -> Path:
    """A .deb (ar: debian-binary, control.tar.xz, data.tar.<compression>) built in Python;
    ``files`` maps paths (``./usr/...`` or raw names, unchecked) to contents."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tf.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tf.addfile(info)
    raw = buf.getvalue()
    data = {"xz": lzma.compress, "gz": __import__("gzip").compress, "": bytes}[compression](raw)
    ctl = io.BytesIO()
    with tarfile.open(fileobj=ctl, mode="w:xz") as tf:
        body = b"Package: tiny\nVersion: 1.0\nArchitecture: all\n"
        info = tarfile.TarInfo("./control")
        info.size = len(body)
        tf.addfile(info, io.BytesIO(body))
    name = "data.tar" + (f".{compression}" if compression else "")
    path.write_bytes(
        _ar([("debian-binary", b"2.0\n"), ("control.tar.xz", ctl.getvalue()), (name, data)])
    )
    return path


@pytest.mark.parametrize("compression", ["xz", "gz", ""])
def test_extract_deb_in_python(tmp_path: Path, compression: str) -> None:
    deb = make_deb(
        tmp_path / "tiny_1.0_all.deb",
        {
            "./usr/share/tiny/a.txt": b"alpha\n",
            "./usr/share/tiny/sub/b.html": b"<p>b</p>",
            "./usr/share/doc/tiny/copyright": b"public domain\n",
        },
        compression=compression,
        links={"./usr/share/tiny/link": "a.txt"},
    )
    out = extract_deb(deb, tmp_path / "all")
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert files == [
        "usr/share/doc/tiny/copyright",
        "usr/share/tiny/a.txt",
        "usr/share/tiny/sub/b.html",
    ]
    assert not (out / "usr/share/tiny/link").exists()  # regular files only
    part = extract_deb(deb, tmp_path / "part", ["usr/share/tiny/*.html"])
    assert [p.name for p in part.rglob("*") if p.is_file()] == ["b.html"]
    with pytest.raises(InputError, match=r"no member matches 'nothing/\*'"):
        extract_deb(deb, tmp_path / "never", ["nothing/*"])
    assert not (tmp_path / "never").exists()


@pytest.mark.parametrize("evil", ["../evil.txt", "/etc/evil.txt", "./usr/../../evil.txt"])
def test_extract_deb_refuses_paths_outside(tmp_path: Path, evil: str) -> None:
    deb = make_deb(tmp_path / "evil.deb", {"./ok.txt": b"ok", evil: b"boom"})
    with pytest.raises(InputError, match="evil"):
        extract_deb(deb, tmp_path / "out" / "x")
    assert not (tmp_path / "out" / "x").exists()
    assert not (tmp_path / "evil.txt").exists()
    assert not list((tmp_path / "out").glob("*evil*"))


def test_extract_deb_broken(tmp_path: Path) -> None:
    deb = make_deb(tmp_path / "tiny.deb", {"./a.txt": b"a" * 5000})
    broken = tmp_path / "broken.deb"
    broken.write_bytes(deb.read_bytes()[:-200])
    with pytest.raises(InputError, match=r"broken\.deb"):
        extract_deb(broken, tmp_path / "never")
    notdeb = tmp_path / "notdeb.deb"
    notdeb.write_bytes(b"hello")
    with pytest.raises(InputError, match="no ar archive header"):
        extract_deb(notdeb, tmp_path / "never")
    assert not (tmp_path / "never").exists()


def _regular_files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink()
    }


def _real_debs() -> list[Path]:
    """Real Debian packages on this machine (apt's cache), smallest first."""
    found = [Path(p) for p in glob.glob("/var/cache/apt/archives/*.deb")]
    found = [p for p in found if p.stat().st_size > 50_000]  # with files, not only links
    return sorted(found, key=lambda p: p.stat().st_size)[:3]


@pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="dpkg-deb is not installed")
def test_extract_deb_equals_dpkg_deb(tmp_path: Path) -> None:
    """The Python reader writes exactly the regular files `dpkg-deb -x` writes, on real
    packages (apt's cache) and on one dpkg-deb builds with each compressor."""
    root = tmp_path / "pkgroot"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        "Package: xlalign-tiny\nVersion: 1.0\nArchitecture: all\n"
        "Maintainer: Test <test@example.org>\nDescription: tiny test package\n"
    )
    (root / "usr/share/xlalign-tiny/deep").mkdir(parents=True)
    (root / "usr/share/xlalign-tiny/hello.txt").write_text("hallo welt\n")
    (root / "usr/share/xlalign-tiny/deep/data.bin").write_bytes(os.urandom(70000))
    debs = list(_real_debs())
    for comp in ("xz", "gzip", "none"):
        deb = tmp_path / f"xlalign-tiny_{comp}.deb"
        subprocess.run(
            ["dpkg-deb", "--root-owner-group", f"-Z{comp}", "--build", str(root), str(deb)],
            check=True,
            capture_output=True,
        )
        debs.append(deb)
    for deb in debs:
        ref = tmp_path / "ref" / deb.name
        ref.mkdir(parents=True)
        subprocess.run(["dpkg-deb", "-x", str(deb), str(ref)], check=True, capture_output=True)
        ours = extract_deb(deb, tmp_path / "ours" / deb.name)
        assert _regular_files(ours) == _regular_files(ref), deb
        assert _regular_files(ours), deb


# --------------------------------------------------------------------------- versions


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        ("1.0", "1.0", 0),
        ("1.0-1", "1.0-2", -1),
        ("1:1.0", "2.0", 1),
        ("1.0~rc1", "1.0", -1),
        ("1.0", "1.0+deb12u1", -1),
        ("4:7.4.7-1+deb12u14", "4:7.4.7-1+deb12u13", 1),
        ("2022.04.21-1", "2022.04.21-1~bpo", 1),
        ("1.10", "1.9", 1),
        ("1.0a", "1.0+", -1),
        ("0:1.0", "1.0", 0),
    ],
)
def test_compare_versions_like_dpkg(a: str, b: str, want: int) -> None:
    assert compare_versions(a, b) == want
    assert compare_versions(b, a) == -want
    if shutil.which("dpkg"):
        ok = subprocess.run(
            ["dpkg", "--compare-versions", a, {-1: "lt", 0: "eq", 1: "gt"}[want], b]
        )
        assert ok.returncode == 0


# --------------------------------------------------------------------------- sources


def test_apt_sources_both_formats_and_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    etc = tmp_path / "apt"
    (etc / "sources.list.d").mkdir(parents=True)
    (etc / "trusted.gpg.d").mkdir()
    (etc / "trusted.gpg.d" / "global.asc").write_text("key")
    (etc / "apt.conf.d").mkdir()
    (etc / "apt.conf.d" / "10proxy").write_text('Acquire::http::Proxy "http://proxy.test:3128";\n')
    (etc / "sources.list").write_text(
        "# comment\n"
        "deb http://mirror.test/debian bookworm main contrib\n"
        "deb-src http://mirror.test/debian bookworm main\n"
        "deb [arch=amd64 signed-by=/k/one.gpg] http://mirror.test/sec bookworm-security main\n"
    )
    (etc / "sources.list.d" / "a.sources").write_text(
        "Types: deb\nURIs: http://mirror.test/debian\n"
        "Suites: bookworm bookworm-updates\nComponents: main\n"
        "Signed-By: /k/archive.gpg\n\n"
        "Types: deb-src\nURIs: http://mirror.test/debian\nSuites: bookworm\nComponents: main\n\n"
        "Enabled: no\nTypes: deb\nURIs: http://off.test/\nSuites: x\nComponents: main\n"
    )
    found = apt_sources(etc)
    assert [(s.uri, s.suites, s.components) for s in found] == [
        ("http://mirror.test/debian", ("bookworm",), ("main", "contrib")),
        ("http://mirror.test/sec", ("bookworm-security",), ("main",)),
        ("http://mirror.test/debian", ("bookworm", "bookworm-updates"), ("main",)),
    ]
    assert found[0].keyrings == (etc / "trusted.gpg.d" / "global.asc",)
    assert found[1].keyrings == (Path("/k/one.gpg"),)
    assert found[1].architectures == ("amd64",)
    assert found[2].keyrings == (Path("/k/archive.gpg"),)
    srcs = debian_sources(None, apt_root=etc)
    assert {s.proxy for s in srcs} == {"http://proxy.test:3128"}
    # APT_CONFIG's Dir::Etc is where apt (and this reader) finds the configuration.
    conf = tmp_path / "apt.conf"
    conf.write_text(f'Dir::Etc "{etc}";\n')
    monkeypatch.setenv("APT_CONFIG", str(conf))
    assert len(debian_sources(None)) == 3


def test_no_archive_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        debian_sources(None, apt_root=tmp_path / "none")
    assert str(info.value) == MISSING_SOURCE
    assert SETTING == "embedded.debian" and SETTING in MISSING_SOURCE
    ring = tmp_path / "ring.gpg"
    ring.write_bytes(b"x")
    (src,) = debian_sources(
        {"mirror": "http://mirror.test/debian", "keyring": str(ring), "suites": ["bookworm"]},
        apt_root=tmp_path / "none",
    )
    assert src == DebianSource(
        "http://mirror.test/debian", ("bookworm",), ("main",), (ring,), SETTING
    )


def test_workflow_stops_before_any_job_without_an_archive(tmp_path: Path) -> None:
    """A dry run that needs a Debian package, on a machine without apt sources and without
    the setting, fails while the DAG is built, with the one message."""
    conf = tmp_path / "apt.conf"
    conf.write_text(f'Dir::Etc "{tmp_path / "none"}";\n')
    root = Path(__file__).resolve().parents[2]
    bindir = Path(sys.executable).parent
    env = {**os.environ, "APT_CONFIG": str(conf), "PATH": f"{bindir}:{os.environ['PATH']}"}
    r = subprocess.run(
        [
            str(bindir / "snakemake"),
            "-s",
            str(root / "Snakefile"),
            "-n",
            "--cores",
            "1",
            "resources/packages/deb/dict-freedict-eng-deu",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert MISSING_SOURCE in out.replace("\n", " ").replace("    ", ""), out
    assert not (tmp_path / "resources").exists()


# --------------------------------------------------------------------------- archive


@pytest.fixture(scope="module")
def signer(tmp_path_factory: pytest.TempPathFactory):
    """(sign(text) -> InRelease bytes, keyring path) from a throw-away gpg key."""
    gpg = shutil.which("gpg")
    if gpg is None:
        pytest.skip("gpg is not installed; cannot sign a test archive")
    if shutil.which("gpgv") is None:
        try:
            import pysequoia  # noqa: F401
        except ImportError:
            pytest.skip("neither pysequoia nor gpgv is available to verify signatures")
    home = Path(tempfile_dir := str(tmp_path_factory.mktemp("gpg")))
    home.chmod(0o700)
    base = [
        gpg,
        "--homedir",
        tempfile_dir,
        "--batch",
        "--pinentry-mode",
        "loopback",
        "--passphrase",
        "",
    ]
    subprocess.run(
        [
            *base,
            "--quick-gen-key",
            "Archive Test <archive@test.invalid>",
            "ed25519",
            "sign",
            "never",
        ],
        check=True,
        capture_output=True,
    )
    ring = home / "archive.gpg"
    ring.write_bytes(subprocess.run([*base, "--export"], check=True, capture_output=True).stdout)

    def sign(text: bytes) -> bytes:
        return subprocess.run(
            [*base, "--clearsign"], input=text, check=True, capture_output=True
        ).stdout

    yield sign, ring
    subprocess.run(["gpgconf", "--homedir", tempfile_dir, "--kill", "all"], capture_output=True)


def _archive(sign, debs: dict[str, list[tuple[str, Path]]]) -> dict[str, bytes]:
    """Files of a tiny archive: ``debs`` maps suite -> [(version, .deb)] of package tiny."""
    files: dict[str, bytes] = {}
    for suite, entries in debs.items():
        stanzas = []
        for version, deb in entries:
            data = deb.read_bytes()
            fn = f"pool/main/t/tiny/tiny_{version}_all.deb"
            files["/" + fn] = data
            stanzas.append(
                f"Package: tiny\nVersion: {version}\nArchitecture: all\nFilename: {fn}\n"
                f"Size: {len(data)}\nSHA256: {hashlib.sha256(data).hexdigest()}\n"
            )
        stanzas.append(
            "Package: other\nVersion: 9\nArchitecture: all\nFilename: pool/o.deb\n"
            "Size: 1\nSHA256: 00\n"
        )
        packages = lzma.compress("\n".join(stanzas).encode())
        files[f"/dists/{suite}/main/binary-amd64/Packages.xz"] = packages
        release = (
            f"Origin: Test\nSuite: {suite}\nCodename: {suite}\n"
            "No-Support-for-Architecture-all: Packages\nSHA256:\n"
            f" {hashlib.sha256(packages).hexdigest()} {len(packages)} "
            "main/binary-amd64/Packages.xz\n"
        ).encode()
        files[f"/dists/{suite}/InRelease"] = sign(release)
    return files


def test_fetch_from_a_signed_archive(tmp_path: Path, signer) -> None:
    sign, ring = signer
    old = make_deb(tmp_path / "old.deb", {"./usr/share/tiny/v.txt": b"1.0\n"})
    new = make_deb(tmp_path / "new.deb", {"./usr/share/tiny/v.txt": b"1.0+u1\n"})
    files = _archive(sign, {"stable": [("1.0", old)], "stable-updates": [("1.0+u1", new)]})
    with serve(files) as srv:
        src = DebianSource(srv.base, ("stable", "stable-updates"), ("main",), (ring,), "test")
        cache = tmp_path / "cache"
        # The candidate: the highest version across the suites, as apt chooses.
        deb = deb_download("tiny", tmp_path / "debs", [src], cache_dir=cache, architecture="amd64")
        assert deb.name == "tiny_1.0+u1_all.deb"
        out = extract_deb(deb, tmp_path / "out", ["usr/share/tiny/*"])
        assert (out / "usr/share/tiny/v.txt").read_bytes() == b"1.0+u1\n"
        # A pin, and the cached indices reused: no InRelease fetched again.
        before = len(srv.requests_for("/dists/stable/InRelease"))
        pinned = deb_download(
            "tiny=1.0", tmp_path / "debs", [src], cache_dir=cache, architecture="amd64"
        )
        assert pinned.read_bytes() == old.read_bytes()
        assert len(srv.requests_for("/dists/stable/InRelease")) == before
        # Not in the cached index: the indices are fetched again once, then a clear error.
        with pytest.raises(DownloadError, match=r"'nothere': not found in"):
            deb_download("nothere", tmp_path / "debs", [src], cache_dir=cache, architecture="amd64")
        assert len(srv.requests_for("/dists/stable/InRelease")) == before + 1


def test_tampered_index_or_package_refused(tmp_path: Path, signer) -> None:
    sign, ring = signer
    deb = make_deb(tmp_path / "a.deb", {"./x": b"x"})
    files = _archive(sign, {"stable": [("1.0", deb)]})
    # A changed signed text: the signature no longer verifies.
    bad = dict(files)
    bad["/dists/stable/InRelease"] = files["/dists/stable/InRelease"].replace(
        b"Origin: Test", b"Origin: Evil"
    )

    def refused(archive: dict[str, bytes], run: str, match: str) -> None:
        with serve(archive) as srv:
            src = DebianSource(srv.base, ("stable",), ("main",), (ring,), "test")
            with pytest.raises(DownloadError, match=match):
                deb_download(
                    "tiny",
                    tmp_path / f"d{run}",
                    [src],
                    cache_dir=tmp_path / f"c{run}",
                    architecture="amd64",
                    retries=0,
                )
        assert not (tmp_path / f"d{run}" / "tiny_1.0_all.deb").exists()

    refused(bad, "1", "signature")
    # A .deb that is not the one the index names.
    bad = dict(files)
    bad["/pool/main/t/tiny/tiny_1.0_all.deb"] = b"not it"
    refused(bad, "2", "sha256")
    # A keyring without the signing key.
    other = tmp_path / "other.gpg"
    other.write_bytes(b"")
    with pytest.raises(DownloadError):
        verify_inrelease(files["/dists/stable/InRelease"], [other], "test")


def test_real_archive_keyring_verifies_real_inrelease() -> None:
    """The machine's own archive, when it has one (skipped elsewhere): a cached InRelease
    is not needed; only that the Debian keyring and verifier agree on a real signature."""
    ring = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
    lists = sorted(glob.glob("/var/lib/apt/lists/*_InRelease"))
    if not ring.is_file() or not lists or not (shutil.which("gpgv") or _has_sequoia()):
        pytest.skip("no Debian keyring, apt lists or verifier on this machine")
    text = verify_inrelease(Path(lists[0]).read_bytes(), [ring], lists[0])
    assert b"SHA256:" in text
    assert debian  # the module is importable without apt or dpkg


def _has_sequoia() -> bool:
    try:
        import pysequoia  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("verifier", ["gpgv", "pysequoia"])
def test_each_verifier(signer, verifier: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """PySequoia when installed, else gpgv: both accept the key's signature and refuse a
    changed text or another key; with neither, one error says what to install."""
    sign, ring = signer
    if verifier == "pysequoia":
        pytest.importorskip("pysequoia")
    else:
        if shutil.which("gpgv") is None:
            pytest.skip("gpgv is not installed")
        monkeypatch.setitem(sys.modules, "pysequoia", None)
    signed = sign(b"Origin: Test\nSHA256:\n 00 1 main/binary-amd64/Packages\n")
    assert verify_inrelease(signed, [ring], "t").startswith(b"Origin: Test\n")
    with pytest.raises(DownloadError, match="does not verify"):
        verify_inrelease(signed.replace(b"Origin: Test", b"Origin: Evil"), [ring], "t")
    if verifier == "gpgv":
        monkeypatch.setenv("PATH", "/nonexistent")
        with pytest.raises(Exception, match="install the Python package pysequoia, or put gpgv"):
            verify_inrelease(signed, [ring], "t")
