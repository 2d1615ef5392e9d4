"""Debian packages without apt, dpkg or root: the archive's signed index read directly and
the ``.deb`` unpacked in Python.

Where the packages come from is one :class:`DebianSource` per archive: the
``embedded.debian`` setting when the config gives it, else the machine's own apt
configuration (``/etc/apt/sources.list`` and ``sources.list.d``, one-line and deb822
formats, with their ``Signed-By`` keyrings, and apt's ``Acquire::http(s)::Proxy``). No
mirror is written into the code. With neither, :func:`debian_sources` raises one
:class:`ConfigError` naming the setting (:data:`SETTING`).

A fetch (:func:`deb_download`) downloads each suite's ``InRelease``, checks its OpenPGP
signature against the source's keyrings (:func:`verify_inrelease`: PySequoia when it is
installed, else ``gpgv``), takes the SHA-256 of the ``Packages`` index from it, and the
SHA-256 of the ``.deb`` from that index. The index files are cached under the
destination's ``_archive/`` directory (private to the workflow) and reused; they are
refreshed once when the package, or the file the index names, is not found.

The version chosen is the pinned one (``name=version``) or, like apt with no pinning, the
highest version of the package in all configured suites (so ``bookworm-updates`` and
``bookworm-security`` override ``bookworm`` when they carry a newer one).
"""

from __future__ import annotations

import bz2
import contextlib
import fnmatch
import gzip
import io
import logging
import lzma
import os
import platform
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

import requests

from xlalign.core.errors import ConfigError, DownloadError, InputError, ToolError
from xlalign.core.io import PathLike, atomic_dir, file_lock, redact_url
from xlalign.resources.download import check_member_name, download, no_match_error

logger = logging.getLogger(__name__)

#: The config key that names a Debian archive where the machine has no apt configuration.
SETTING = "embedded.debian"

#: The message of the :class:`ConfigError` raised when no Debian archive is known.
MISSING_SOURCE = (
    f"the Debian-sourced embedded resources (LibreOffice help, FreeDict dictionaries) need "
    f"a Debian archive, and this machine has no apt configuration (no deb source in "
    f"/etc/apt/sources.list or /etc/apt/sources.list.d): set {SETTING} in the config, e.g. "
    f"{SETTING}: {{mirror: <archive URL>, suites: [bookworm], components: [main], "
    f"keyring: <path to the archive's OpenPGP keyring>}}"
)

APT_ROOT = Path("/etc/apt")
_ARCHES = {
    "x86_64": "amd64",
    "amd64": "amd64",
    "aarch64": "arm64",
    "arm64": "arm64",
    "armv7l": "armhf",
    "i686": "i386",
    "i386": "i386",
    "ppc64le": "ppc64el",
    "s390x": "s390x",
}


@dataclass(frozen=True)
class DebianSource:
    """One archive: its base URI, the suites and components read from it, the keyrings its
    ``InRelease`` must be signed with, and where this description came from."""

    uri: str
    suites: tuple[str, ...]
    components: tuple[str, ...]
    keyrings: tuple[Path, ...]
    origin: str
    architectures: tuple[str, ...] = ()
    proxy: str | None = field(default=None, compare=False)


# --------------------------------------------------------------------------- sources


def _deb822_stanzas(text: str) -> Iterator[dict[str, str]]:
    """The stanzas of a deb822 file (``Key: value`` fields, continuation lines folded in),
    with comments dropped; keys lower-cased."""
    fields: dict[str, str] = {}
    key = None
    for raw in text.splitlines():
        if raw.startswith("#"):
            continue
        if not raw.strip():
            if fields:
                yield fields
            fields, key = {}, None
            continue
        if raw[0] in " \t" and key is not None:
            fields[key] += "\n" + raw.strip()
            continue
        name, sep, value = raw.partition(":")
        if not sep:
            continue
        key = name.strip().lower()
        fields[key] = value.strip()
    if fields:
        yield fields


def _keyrings(value: str | None, trusted: tuple[Path, ...], where: str) -> tuple[Path, ...]:
    if not value:
        return trusted
    if "\n" in value.strip() or value.lstrip().startswith("-----BEGIN"):
        raise ConfigError(f"{where}: an inline Signed-By key is not supported; name a keyring file")
    return tuple(Path(p) for p in value.replace(",", " ").split())


def _trusted(root: Path) -> tuple[Path, ...]:
    """apt's global keyrings (``trusted.gpg`` and ``trusted.gpg.d``), for sources without
    ``Signed-By``."""
    found = [root / "trusted.gpg"] if (root / "trusted.gpg").is_file() else []
    parts = root / "trusted.gpg.d"
    if parts.is_dir():
        found += sorted(p for p in parts.iterdir() if p.suffix in (".gpg", ".asc"))
    return tuple(found)


_ONE_LINE = re.compile(
    r"^\s*deb\s+(?:\[(?P<opts>[^\]]*)\]\s+)?(?P<uri>\S+)\s+(?P<suite>\S+)(?P<comps>.*)$"
)


def _one_line_sources(path: Path, trusted: tuple[Path, ...]) -> list[DebianSource]:
    out = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0]
        m = _ONE_LINE.match(line)
        if not m:
            continue
        opts = dict(o.split("=", 1) for o in (m.group("opts") or "").split() if "=" in o)
        where = f"{path}:{lineno}"
        out.append(
            DebianSource(
                uri=m.group("uri"),
                suites=(m.group("suite"),),
                components=tuple(m.group("comps").split()),
                keyrings=_keyrings(opts.get("signed-by"), trusted, where),
                origin=where,
                architectures=tuple(opts["arch"].split(",")) if "arch" in opts else (),
            )
        )
    return out


def _deb822_sources(path: Path, trusted: tuple[Path, ...]) -> list[DebianSource]:
    out = []
    for i, st in enumerate(_deb822_stanzas(path.read_text(encoding="utf-8")), 1):
        if "deb" not in st.get("types", "").split() or st.get("enabled", "yes") == "no":
            continue
        where = f"{path} (stanza {i})"
        for uri in st.get("uris", "").split():
            out.append(
                DebianSource(
                    uri=uri,
                    suites=tuple(st.get("suites", "").split()),
                    components=tuple(st.get("components", "").split()),
                    keyrings=_keyrings(st.get("signed-by"), trusted, where),
                    origin=where,
                    architectures=tuple(st.get("architectures", "").split()),
                )
            )
    return out


def apt_proxy(root: PathLike = APT_ROOT) -> dict[str, str]:
    """apt's ``Acquire::http::Proxy`` / ``Acquire::https::Proxy`` settings (``apt.conf`` and
    ``apt.conf.d``), as a requests ``proxies`` mapping; empty when apt uses none."""
    root = Path(root)
    files = [root / "apt.conf"]
    if (root / "apt.conf.d").is_dir():
        files += sorted((root / "apt.conf.d").iterdir())
    proxies: dict[str, str] = {}
    pat = re.compile(r'Acquire::(https?)::Proxy\s+"([^"]*)"\s*;', re.IGNORECASE)
    for f in files:
        if not f.is_file():
            continue
        try:
            text = f.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for scheme, value in pat.findall(text):
            if value and value.upper() != "DIRECT":
                proxies[scheme.lower()] = value
    return proxies


def apt_sources(root: PathLike = APT_ROOT) -> list[DebianSource]:
    """The ``deb`` sources of the machine's apt configuration under ``root``."""
    root = Path(root)
    trusted = _trusted(root)
    sources: list[DebianSource] = []
    if (root / "sources.list").is_file():
        sources += _one_line_sources(root / "sources.list", trusted)
    parts = root / "sources.list.d"
    if parts.is_dir():
        for path in sorted(parts.iterdir()):
            if path.suffix == ".list":
                sources += _one_line_sources(path, trusted)
            elif path.suffix == ".sources":
                sources += _deb822_sources(path, trusted)
    return [s for s in sources if s.uri.startswith(("http://", "https://", "file:"))]


def apt_etc() -> Path:
    """apt's configuration directory: ``Dir::Etc`` of the file ``APT_CONFIG`` names (apt's
    own override), else ``/etc/apt``."""
    conf = os.environ.get("APT_CONFIG")
    if conf and Path(conf).is_file():
        text = Path(conf).read_text(encoding="utf-8", errors="replace")
        m = re.search(r'^\s*Dir::Etc\s+"([^"]*)"\s*;', text, re.M)
        if m:
            return Path(m.group(1))
    return APT_ROOT


def debian_sources(
    setting: Mapping[str, Any] | None, *, apt_root: PathLike | None = None
) -> list[DebianSource]:
    """The archives to fetch Debian packages from: the :data:`SETTING` mapping when given
    (``mirror``, ``suites``, ``components``, ``keyring``, ``architecture``), else the
    machine's apt configuration. Raises :class:`ConfigError` (:data:`MISSING_SOURCE`)
    when neither names one."""
    if setting:
        keyring = Path(str(setting["keyring"])).expanduser()
        if not keyring.is_file():
            raise ConfigError(f"{SETTING}.keyring: {keyring} is not a file")
        arch = setting.get("architecture")
        return [
            DebianSource(
                uri=str(setting["mirror"]),
                suites=tuple(setting.get("suites") or ("bookworm",)),
                components=tuple(setting.get("components") or ("main",)),
                keyrings=(keyring,),
                origin=SETTING,
                architectures=(str(arch),) if arch else (),
            )
        ]
    apt_root = apt_etc() if apt_root is None else Path(apt_root)
    proxies = apt_proxy(apt_root)
    sources = [
        DebianSource(
            uri=s.uri,
            suites=s.suites,
            components=s.components,
            keyrings=s.keyrings,
            origin=s.origin,
            architectures=s.architectures,
            proxy=proxies.get(s.uri.split(":", 1)[0]),
        )
        for s in apt_sources(apt_root)
    ]
    if not sources:
        raise ConfigError(MISSING_SOURCE)
    return sources


def host_architecture() -> str:
    """The Debian name of this machine's architecture (``amd64``, ``arm64``, ...)."""
    machine = platform.machine().lower()
    return _ARCHES.get(machine, machine)


# --------------------------------------------------------------------------- signatures


def _dearmor(data: bytes) -> bytes:
    """The binary packets of an ASCII-armored key block (unchanged when already binary)."""
    if not data.lstrip().startswith(b"-----BEGIN"):
        return data
    out = bytearray()
    import base64

    for block in re.findall(
        rb"-----BEGIN PGP PUBLIC KEY BLOCK-----\r?\n(.*?)-----END PGP PUBLIC KEY BLOCK-----",
        data,
        re.S,
    ):
        body = block.split(b"\n\n", 1)[-1] if b"\n\n" in block else block
        lines = [ln.strip() for ln in body.splitlines() if ln.strip() and not ln.startswith(b"=")]
        out += base64.b64decode(b"".join(lines))
    return bytes(out)


def _verify_sequoia(data: bytes, keyrings: Sequence[Path], where: str) -> bytes:
    import pysequoia  # type: ignore[import-not-found]

    certs = []
    for ring in keyrings:
        certs += pysequoia.Cert.split_bytes(_dearmor(ring.read_bytes()))
    try:
        result = pysequoia.verify(bytes=data, store=lambda _ids: certs)
    except Exception as exc:  # PySequoia raises RuntimeError with a Rust backtrace
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DownloadError(
            f"{where}: the OpenPGP signature does not verify against "
            f"{', '.join(map(str, keyrings))} ({first})"
        ) from None
    if not result.valid_sigs:
        raise DownloadError(f"{where}: no valid signature from {', '.join(map(str, keyrings))}")
    return bytes(result.bytes)


def _verify_gpgv(exe: str, data: bytes, keyrings: Sequence[Path], where: str) -> bytes:
    with tempfile.TemporaryDirectory(prefix="xlalign-gpgv-") as tmp:
        home = Path(tmp)
        args = [exe, "--homedir", str(home), "--status-fd", "1"]
        for i, ring in enumerate(keyrings):
            plain = home / f"ring{i}.gpg"
            plain.write_bytes(_dearmor(ring.read_bytes()))
            args += ["--keyring", str(plain)]
        signed = home / "InRelease"
        signed.write_bytes(data)
        content = home / "content"
        proc = subprocess.run(
            [*args, "--output", str(content), str(signed)],
            capture_output=True,
            text=True,
            check=False,
        )
        status = proc.stdout.splitlines()
        good = any(s.startswith("[GNUPG:] VALIDSIG") for s in status)
        bad = any(s.startswith("[GNUPG:] BADSIG") for s in status)
        if not good or bad or not content.is_file():
            detail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
            raise DownloadError(
                f"{where}: the OpenPGP signature does not verify against "
                f"{', '.join(map(str, keyrings))} (gpgv):\n{detail}"
            )
        return content.read_bytes()


def verify_inrelease(data: bytes, keyrings: Sequence[PathLike], where: str) -> bytes:
    """The signed text of an ``InRelease`` file whose OpenPGP signature one of
    ``keyrings`` made; :class:`DownloadError` otherwise. Verified with PySequoia when it
    is installed, else with ``gpgv``; :class:`ToolError` when neither is available."""
    rings = [Path(k) for k in keyrings]
    missing = [str(r) for r in rings if not r.is_file()]
    if not rings or missing:
        raise DownloadError(f"{where}: keyring(s) not found: {', '.join(missing) or '(none)'}")
    try:
        import pysequoia  # noqa: F401
    except ImportError:
        exe = shutil.which("gpgv")
        if exe is None:
            raise ToolError(
                f"{where}: cannot check the archive's OpenPGP signature: install the Python "
                f"package pysequoia, or put gpgv on PATH"
            ) from None
        return _verify_gpgv(exe, data, rings, where)
    return _verify_sequoia(data, rings, where)


# --------------------------------------------------------------------------- versions


def _order(c: str) -> int:
    if c == "~":
        return -1
    if c.isdigit():
        return 0
    if c.isalpha():
        return ord(c)
    return ord(c) + 256


def _compare_part(a: str, b: str) -> int:
    """dpkg's comparison of an upstream version or revision."""
    i = j = 0
    while i < len(a) or j < len(b):
        diff = 0
        while (i < len(a) and not a[i].isdigit()) or (j < len(b) and not b[j].isdigit()):
            ac = _order(a[i]) if i < len(a) and not a[i].isdigit() else 0
            bc = _order(b[j]) if j < len(b) and not b[j].isdigit() else 0
            if ac != bc:
                return -1 if ac < bc else 1
            i += 1
            j += 1
        while i < len(a) and a[i] == "0":
            i += 1
        while j < len(b) and b[j] == "0":
            j += 1
        while i < len(a) and a[i].isdigit() and j < len(b) and b[j].isdigit():
            if not diff:
                diff = (a[i] > b[j]) - (a[i] < b[j])
            i += 1
            j += 1
        if i < len(a) and a[i].isdigit():
            return 1
        if j < len(b) and b[j].isdigit():
            return -1
        if diff:
            return diff
    return 0


def _split_version(v: str) -> tuple[int, str, str]:
    epoch, _, rest = v.rpartition(":") if ":" in v else ("0", "", v)
    upstream, _, revision = rest.rpartition("-") if "-" in rest else (rest, "", "")
    return int(epoch or 0), upstream, revision


def compare_versions(a: str, b: str) -> int:
    """-1, 0 or 1 as Debian version ``a`` sorts before, with or after ``b`` (dpkg's rules:
    epoch, then upstream version, then revision; ``~`` sorts before everything)."""
    ea, ua, ra = _split_version(a)
    eb, ub, rb = _split_version(b)
    if ea != eb:
        return -1 if ea < eb else 1
    return _compare_part(ua, ub) or _compare_part(ra, rb)


# --------------------------------------------------------------------------- indices


@dataclass(frozen=True)
class _Release:
    """What a verified Release text says: ``path -> (sha256, size)`` of its SHA256
    section, whether files may be fetched by hash, and whether ``binary-<arch>`` indices
    list the ``Architecture: all`` packages too."""

    files: dict[str, tuple[str, int]]
    by_hash: bool
    all_in_arch: bool


def _parse_release(text: str, where: str) -> _Release:
    files: dict[str, tuple[str, int]] = {}
    in_sha = False
    for line in text.splitlines():
        if not line.startswith(" "):
            in_sha = line.strip() == "SHA256:"
            continue
        if in_sha:
            parts = line.split()
            if len(parts) == 3:
                files[parts[2]] = (parts[0].lower(), int(parts[1]))
    if not files:
        raise DownloadError(f"{where}: no SHA256 section in the signed Release text")
    head = next(_deb822_stanzas(text), {})
    return _Release(
        files=files,
        by_hash=head.get("acquire-by-hash", "no").lower() == "yes",
        all_in_arch="Packages" in head.get("no-support-for-architecture-all", "").split(),
    )


def _decompress(path: Path) -> bytes:
    opener = {".xz": lzma.open, ".gz": gzip.open, ".bz2": bz2.open}.get(path.suffix)
    if opener is None:
        return path.read_bytes()
    with opener(path, "rb") as fh:
        return fh.read()


def _stanzas_of(index: bytes, package: str) -> list[dict[str, str]]:
    """The stanzas of a Packages index for ``package``."""
    key = f"Package: {package}\n".encode()
    out = []
    pos = 0
    while True:
        hit = index.find(key, pos)
        if hit < 0:
            return out
        pos = hit + len(key)
        if hit and index[hit - 1 : hit] != b"\n":
            continue
        end = index.find(b"\n\n", hit)
        stanza = index[hit : end if end >= 0 else len(index)].decode("utf-8", "replace")
        out.append(next(_deb822_stanzas(stanza)))


def _safe_name(uri: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", redact_url(uri).split("://", 1)[-1]).strip("_")


@dataclass
class _Candidate:
    version: str
    url: str
    sha256: str
    size: int
    where: str
    source: DebianSource


class DebianArchive:
    """The package indices of ``sources``, cached under ``cache_dir``."""

    def __init__(
        self,
        sources: Sequence[DebianSource],
        cache_dir: PathLike,
        *,
        architecture: str | None = None,
        retries: int = 5,
        timeout: float = 60,
        backoff: float = 1.0,
    ) -> None:
        self.sources = list(sources)
        self.cache = Path(cache_dir)
        self.arch = architecture or host_architecture()
        self.kw = {"retries": retries, "timeout": timeout, "backoff": backoff, "progress": False}
        self._releases: dict[tuple[str, str, bool], _Release] = {}

    def _session(self, source: DebianSource) -> requests.Session:
        sess = requests.Session()
        if source.proxy and not any(
            os.environ.get(v) for v in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY")
        ):
            sess.proxies = {"http": source.proxy, "https": source.proxy}
        return sess

    def _suite_dir(self, source: DebianSource, suite: str) -> Path:
        return self.cache / _safe_name(source.uri) / "dists" / suite.replace("/", "_")

    def _release(self, source: DebianSource, suite: str, refresh: bool) -> _Release:
        key = (source.uri, suite, refresh)
        if key in self._releases:
            return self._releases[key]
        base = source.uri.rstrip("/")
        url = f"{base}/dists/{quote(suite)}/InRelease"
        d = self._suite_dir(source, suite)
        raw, verified = d / "InRelease", d / "Release.verified"
        if refresh or not verified.is_file():
            raw.unlink(missing_ok=True)
            download(url, raw, session=self._session(source), **self.kw)
            text = verify_inrelease(raw.read_bytes(), source.keyrings, redact_url(url))
            tmp = verified.with_name(verified.name + ".tmp")
            tmp.write_bytes(text)
            os.replace(tmp, verified)
            logger.info("%s: signature verified (%s)", redact_url(url), source.origin)
        else:
            logger.info("%s: using the verified copy in %s", redact_url(url), d)
        release = _parse_release(verified.read_text(encoding="utf-8"), redact_url(url))
        self._releases[key] = release
        return release

    def _index(
        self, source: DebianSource, suite: str, comp: str, arch: str, refresh: bool
    ) -> bytes | None:
        """The ``Packages`` index of ``suite/comp/binary-arch`` (None when not published),
        fetched by hash where the archive allows it (a mirror between two updates still
        serves the file the signed Release names)."""
        release = self._release(source, suite, refresh)
        if arch == "all" and release.all_in_arch:
            return None
        base = f"{comp}/binary-{arch}/Packages"
        dists = f"{source.uri.rstrip('/')}/dists/{quote(suite)}"
        for ext in (".xz", ".gz", ".bz2", ""):
            if base + ext not in release.files:
                continue
            sha, _size = release.files[base + ext]
            dest = self._suite_dir(source, suite) / f"{comp}_binary-{arch}_Packages{ext}"
            urls = [f"{dists}/{base}{ext}"]
            if release.by_hash:
                urls.insert(0, f"{dists}/{comp}/binary-{arch}/by-hash/SHA256/{sha}")
            for i, url in enumerate(urls):
                try:
                    download(url, dest, sha256=sha, session=self._session(source), **self.kw)
                    break
                except DownloadError:
                    if i == len(urls) - 1:
                        raise
                    logger.info("%s: not available by hash; trying %s", redact_url(url), base)
            return _decompress(dest)
        return None

    def candidates(self, package: str, *, refresh: bool = False) -> list[_Candidate]:
        """Every version of ``package`` the configured suites list, with where to fetch it."""
        found: list[_Candidate] = []
        for source in self.sources:
            arches = [self.arch, "all"]
            if source.architectures and self.arch not in source.architectures:
                arches = ["all"]
            for suite in source.suites:
                # parallel jobs share the index cache
                with file_lock(self._suite_dir(source, suite) / ".lock"):
                    # A fetch or signature failure of InRelease stops here, never skipped.
                    self._release(source, suite, refresh)
                    for comp in source.components:
                        for arch in arches:
                            try:
                                index = self._index(source, suite, comp, arch, refresh)
                            except DownloadError as exc:
                                # As apt does: an index that cannot be fetched or fails its
                                # checksum is left out (with a warning).
                                logger.warning("%s: index left out: %s", source.origin, exc)
                                continue
                            stanzas = _stanzas_of(index, package) if index else []
                            for st in stanzas:
                                if "filename" not in st or "sha256" not in st:
                                    continue
                                found.append(
                                    _Candidate(
                                        version=st.get("version", ""),
                                        url=f"{source.uri.rstrip('/')}/{st['filename']}",
                                        sha256=st["sha256"].lower(),
                                        size=int(st.get("size", "0") or 0),
                                        where=f"{suite}/{comp}/binary-{arch} of {source.origin}",
                                        source=source,
                                    )
                                )
                            if stanzas:
                                # binary-<arch> lists the Architecture: all packages too
                                # (No-Support-for-Architecture-all); binary-all only when not.
                                break
        return found

    def choose(
        self, package: str, version: str | None, *, refresh: bool = False
    ) -> _Candidate | None:
        """The candidate of ``package``: exactly ``version`` when pinned, else the highest
        version in all configured suites (apt's choice without pinning)."""
        best: _Candidate | None = None
        for cand in self.candidates(package, refresh=refresh):
            if version is not None:
                if compare_versions(cand.version, version) == 0:
                    return cand
                continue
            if best is None or compare_versions(cand.version, best.version) > 0:
                best = cand
        return best


def deb_download(
    package: str,
    dest_dir: PathLike,
    sources: Sequence[DebianSource],
    *,
    cache_dir: PathLike | None = None,
    architecture: str | None = None,
    retries: int = 5,
    timeout: float = 60,
    backoff: float = 1.0,
) -> Path:
    """Download the ``.deb`` of ``package`` (``name`` or ``name=version``) into
    ``dest_dir`` from ``sources``, its archive signature and checksums verified; return its
    path. Indices are cached in ``cache_dir`` (default ``dest_dir/../_archive``)."""
    name, _, version = package.partition("=")
    dest = Path(dest_dir)
    archive = DebianArchive(
        sources,
        cache_dir if cache_dir is not None else dest.parent / "_archive",
        architecture=architecture,
        retries=retries,
        timeout=timeout,
        backoff=backoff,
    )
    where = f"Debian package {package!r}"
    shown = ", ".join(f"{s.uri} {' '.join(s.suites)} ({s.origin})" for s in sources)
    last: Exception | None = None
    for refresh in (False, True):
        try:
            cand = archive.choose(name, version or None, refresh=refresh)
        except DownloadError as exc:
            if refresh:
                raise DownloadError(f"{where}: {exc}") from exc
            last = exc
            continue
        if cand is None:
            last = DownloadError(
                f"{where}: not found in {redact_url(shown)}"
                + (f" (no version {version})" if version else "")
            )
            if refresh:
                raise last
            logger.info("%s: not in the cached index; fetching the index again", package)
            continue
        target = dest / Path(cand.url).name
        try:
            download(
                cand.url,
                target,
                sha256=cand.sha256,
                session=archive._session(cand.source),
                retries=retries,
                timeout=timeout,
                backoff=backoff,
                progress=False,
            )
        except DownloadError as exc:
            if refresh:
                raise DownloadError(f"{where} ({cand.where}): {exc}") from exc
            last = exc
            continue
        logger.info("%s: saved %s (version %s, %s)", package, target, cand.version, cand.where)
        return target
    raise DownloadError(f"{where}: {last}")  # pragma: no cover - the loop returns or raises


# --------------------------------------------------------------------------- .deb files


class _Slice(io.RawIOBase):
    """``size`` bytes of ``fh`` from its current position, as a read-only stream."""

    def __init__(self, fh: IO[bytes], size: int) -> None:
        self.fh, self.left = fh, size

    def readable(self) -> bool:
        return True

    def readinto(self, buf: Any) -> int:
        n = min(len(buf), self.left)
        if n <= 0:
            return 0
        data = self.fh.read(n)
        buf[: len(data)] = data
        self.left -= len(data)
        return len(data)


def _data_member(fh: IO[bytes], src: Path) -> tuple[str, int]:
    """Position ``fh`` at the ``data.tar*`` member of the ar archive; its name and size."""
    if fh.read(8) != b"!<arch>\n":
        raise InputError(f"{src}: not a valid .deb (no ar archive header)")
    while True:
        header = fh.read(60)
        if len(header) < 60:
            raise InputError(f"{src}: not a valid .deb (no data.tar member)")
        if header[58:60] != b"`\n":
            raise InputError(f"{src}: not a valid .deb (corrupt ar member header)")
        name = header[:16].decode("ascii", "replace").strip().rstrip("/")
        try:
            size = int(header[48:58].decode("ascii").strip())
        except ValueError:
            raise InputError(f"{src}: not a valid .deb (corrupt ar member size)") from None
        if name.startswith("data.tar"):
            return name, size
        fh.seek(size + (size & 1), os.SEEK_CUR)


@contextlib.contextmanager
def _data_tar(src: Path) -> Iterator[tarfile.TarFile]:
    """The data archive of the ``.deb`` ``src``, as a streaming :class:`tarfile.TarFile`."""
    with open(src, "rb") as fh:
        name, size = _data_member(fh, src)
        raw = io.BufferedReader(_Slice(fh, size), 1 << 20)
        ext = name.removeprefix("data.tar")
        stream: IO[bytes]
        if ext == ".xz" or ext == ".lzma":
            stream = lzma.LZMAFile(raw)  # noqa: SIM115 - closed by the with below
        elif ext == ".gz":
            stream = gzip.GzipFile(fileobj=raw)
        elif ext == ".bz2":
            stream = bz2.BZ2File(raw)
        elif ext == ".zst":
            try:
                import zstandard  # type: ignore[import-not-found]
            except ImportError:
                raise ToolError(
                    f"{src}: its data archive is zstd-compressed ({name}); install the Python "
                    f"package zstandard to read it"
                ) from None
            stream = zstandard.ZstdDecompressor().stream_reader(raw)
        elif ext == "":
            stream = raw
        else:
            raise InputError(f"{src}: unknown data archive compression {name!r}")
        with stream, tarfile.open(fileobj=stream, mode="r|") as tf:
            yield tf


def _safe_member_name(src: Path, name: str) -> str:
    """``name`` without its leading ``./``; absolute names and ``..`` are refused."""
    rel = name.removeprefix("./")
    check_member_name(src, rel)
    return rel


def _write_member(tf: tarfile.TarFile, member: tarfile.TarInfo, path: Path) -> None:
    """A regular file of the data archive at ``path`` (0644, or 0755 when executable):
    written here rather than by tarfile, so no owner, special bit or link is ever set."""
    path.parent.mkdir(parents=True, exist_ok=True)
    src = tf.extractfile(member)
    if src is None:  # pragma: no cover - regular files always have a body
        raise InputError(f"{member.name}: no file data")
    with src, open(path, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
    path.chmod(0o755 if member.mode & 0o111 else 0o644)


def extract_deb(deb: PathLike, dest_dir: PathLike, members: Sequence[str] | None = None) -> Path:
    """Unpack the regular files of a ``.deb`` into ``dest_dir``, in Python, atomically.

    The ``data.tar`` member (xz, gzip, bzip2, uncompressed; zstd with the ``zstandard``
    package) is streamed; only regular files are written (with their directories), never
    links or special files, and a member with an absolute path or ``..`` is refused. With
    ``members`` (patterns as in :func:`xlalign.resources.download.select_members`, on paths
    without the leading ``./``), only the files that match are written; a pattern that
    matches nothing is an :class:`InputError` naming the package and the pattern.
    """
    src = Path(deb)
    if not src.is_file():
        raise InputError(f"{src}: .deb file not found")
    dest = Path(dest_dir)
    patterns = list(members) if members is not None else None
    matched: set[str] = set()
    count = 0
    with atomic_dir(dest) as tmp:
        try:
            with _data_tar(src) as tf:
                for member in tf:
                    if not member.isfile():
                        continue
                    name = _safe_member_name(src, member.name)
                    count += 1
                    if patterns is not None:
                        hits = {p for p in patterns if fnmatch.fnmatchcase(name, p)}
                        if not hits:
                            continue
                        matched |= hits
                    _write_member(tf, member, tmp / name)
        except (tarfile.TarError, OSError, EOFError, lzma.LZMAError, ValueError) as exc:
            raise InputError(f"{src}: not a valid .deb, cannot read its files ({exc})") from exc
        if patterns is not None:
            unmatched = [p for p in patterns if p not in matched]
            if unmatched:
                raise no_match_error(src, unmatched, count)
    logger.info(
        "%s: extracted %d file(s) into %s", src, count if patterns is None else len(matched), dest
    )
    return dest
