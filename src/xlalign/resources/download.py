"""Robust downloads for the workflow's download rules, and safe archive extraction.

Corpora, vectors and models for the full paper run are large (gigabytes) and come from
servers that drop connections, so :func:`download` resumes from the bytes already on disk,
retries transient failures with exponential backoff, verifies checksums and only renames
the file into place once it is complete. :func:`download_huggingface_model` fetches just
the files ``from_pretrained`` needs into a directory that appears atomically, and
:func:`safe_extract` unpacks archives without letting a member escape its directory.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import http.client
import json
import logging
import lzma
import os
import posixpath
import re
import shutil
import tarfile
import time
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, unquote, urlsplit
from urllib.request import url2pathname

import requests
import urllib3
from tqdm import tqdm

from xlalign.core.errors import DownloadError, InputError
from xlalign.core.io import PathLike, atomic_dir, fsync_path, redact_url, write_json

logger = logging.getLogger(__name__)

T = TypeVar("T")

MANIFEST_NAME = "xlalign-download.json"
#: The longest wait between two tries (exponential back-off and ``Retry-After`` alike).
MAX_DELAY = 300.0


class HTTPStatusError(DownloadError):
    """The server answered with an HTTP status that is not worth retrying."""

    def __init__(self, url: str, status: int, reason: str = "") -> None:
        self.url = url = redact_url(url)
        self.status = status
        detail = f" {reason}" if reason else ""
        super().__init__(f"{url}: HTTP {status}{detail}")


class _Transient(Exception):
    """A failure worth retrying (connection error, timeout, 5xx, 429, short read)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


# Errors raised while connecting or reading a body that a retry may cure.
_NETWORK_ERRORS = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
    requests.exceptions.ContentDecodingError,
    urllib3.exceptions.HTTPError,
    http.client.HTTPException,
    ConnectionError,
    TimeoutError,
)


def _retry_after(resp: requests.Response) -> float | None:
    value = resp.headers.get("Retry-After")
    if value is None:
        return None
    try:
        return min(max(float(value), 0.0), MAX_DELAY)
    except ValueError:
        return None


def _check_status(url: str, resp: requests.Response) -> None:
    """Raise :class:`_Transient` for retryable statuses, :class:`HTTPStatusError` for others."""
    status = resp.status_code
    if status in (408, 429) or 500 <= status < 600:
        raise _Transient(f"HTTP {status} {resp.reason or ''}".strip(), _retry_after(resp))
    if status >= 400:
        raise HTTPStatusError(url, status, resp.reason or "")


def backoff_delays(retries: int, backoff: float, max_delay: float = MAX_DELAY) -> list[float]:
    """The waits before each retry: ``backoff`` doubled after every failure, capped."""
    return [min(backoff * (2**n), max_delay) for n in range(max(retries, 0))]


def _with_retries(
    url: str,
    attempt: Callable[[], T],
    *,
    retries: int,
    backoff: float,
    max_delay: float = MAX_DELAY,
) -> T:
    """Call ``attempt`` until it succeeds, retrying :class:`_Transient` failures after
    exponentially growing waits (a server's ``Retry-After`` when longer, both capped at
    ``max_delay``)."""
    shown = redact_url(url)
    delays = backoff_delays(retries, backoff, max_delay)
    for n in range(len(delays) + 1):
        try:
            return attempt()
        except _Transient as exc:
            why = redact_url(str(exc))
            if n >= len(delays):
                raise DownloadError(
                    f"{shown}: giving up after {n + 1} attempt(s); last error: {why}"
                ) from exc
            delay = delays[n]
            if exc.retry_after is not None:
                delay = min(max(delay, exc.retry_after), max_delay)
            logger.warning(
                "%s: %s; retry %d of %d in %.2f s", shown, why, n + 1, len(delays), delay
            )
            time.sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def _digests(path: Path, algorithms: Iterable[str]) -> dict[str, str]:
    """Hex digests of ``path`` for each algorithm, in one pass over the file."""
    hashers = {name: hashlib.new(name) for name in algorithms}
    if not hashers:
        return {}
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            for h in hashers.values():
                h.update(chunk)
    return {name: h.hexdigest() for name, h in hashers.items()}


def _expected(sha256: str | None, md5: str | None) -> dict[str, str]:
    out: dict[str, str] = {}
    if sha256:
        out["sha256"] = sha256.strip().lower()
    if md5:
        out["md5"] = md5.strip().lower()
    return out


def _mismatches(path: Path, expected: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(algorithm, expected, actual) for every digest of ``path`` that does not match."""
    actual = _digests(path, expected)
    return [(a, expected[a], actual[a]) for a in expected if actual[a] != expected[a]]


def _parse_content_range(value: str | None) -> tuple[int | None, int | None, int | None]:
    """Parse ``bytes a-b/N`` or ``bytes */N`` into (start, end, total); unknowns are None."""
    if not value:
        return None, None, None
    m = re.match(r"^\s*bytes\s+(?:(\d+)-(\d+)|\*)\s*/\s*(\d+|\*)\s*$", value)
    if not m:
        return None, None, None
    start = int(m.group(1)) if m.group(1) is not None else None
    end = int(m.group(2)) if m.group(2) is not None else None
    total = int(m.group(3)) if m.group(3) != "*" else None
    return start, end, total


def _http_attempt(
    url: str,
    part: Path,
    *,
    session: requests.Session,
    headers: Mapping[str, str],
    timeout: float,
    chunk_size: int,
    progress: bool,
    desc: str,
) -> None:
    """One try at completing ``part``: resume from its size, append the body, check length."""
    offset = part.stat().st_size if part.exists() else 0
    req_headers = {"Accept-Encoding": "identity", **headers}
    if offset:
        req_headers["Range"] = f"bytes={offset}-"
    try:
        with session.get(url, headers=req_headers, stream=True, timeout=timeout) as resp:
            if resp.status_code == 416 and offset:
                _, _, total = _parse_content_range(resp.headers.get("Content-Range"))
                if total is not None and total != offset:
                    part.unlink()
                    raise _Transient(
                        f"partial file has {offset} bytes but the server has {total}; "
                        "restarting from zero"
                    )
                logger.info("%s: already complete in %s (%d bytes)", redact_url(url), part, offset)
                return
            _check_status(url, resp)

            length = resp.headers.get("Content-Length")
            expected = int(length) if length and length.isdigit() else None
            if resp.status_code == 206:
                start, _, total = _parse_content_range(resp.headers.get("Content-Range"))
                if start != offset:
                    part.unlink(missing_ok=True)
                    raise _Transient(
                        f"asked for bytes from {offset} but got Content-Range "
                        f"{resp.headers.get('Content-Range')!r}; restarting from zero"
                    )
                mode = "ab"
            else:
                if offset:
                    logger.warning(
                        "%s: server ignored the Range request (HTTP %d); restarting from zero",
                        redact_url(url),
                        resp.status_code,
                    )
                offset = 0
                total = expected
                mode = "wb"

            received = 0
            with (
                part.open(mode) as out,
                _byte_bar(total, desc, progress, initial=offset) as bar,
            ):
                for chunk in _body_chunks(resp, chunk_size):
                    out.write(chunk)
                    received += len(chunk)
                    bar.update(len(chunk))
            if expected is not None and received < expected:
                raise _Transient(f"short read: got {received} of {expected} bytes")
    except _NETWORK_ERRORS as exc:
        raise _Transient(f"{type(exc).__name__}: {exc}") from exc


def _body_chunks(resp: requests.Response, chunk_size: int) -> Iterator[bytes]:
    """The raw (still compressed) body in pieces of at most ``chunk_size`` bytes, each
    yielded as soon as it arrived, so that a server stalling mid-file loses no byte
    already received (the resumed request starts after it)."""
    read1 = getattr(resp.raw, "read1", None)
    if read1 is None:  # pragma: no cover - urllib3 < 2
        yield from resp.raw.stream(chunk_size, decode_content=False)
        return
    while chunk := read1(chunk_size, decode_content=False):
        yield chunk


def _byte_bar(total: int | None, desc: str, progress: bool, *, initial: int = 0) -> tqdm:
    """A transfer progress bar in bytes (shared by HTTP and file:// copies)."""
    return tqdm(
        total=total,
        initial=initial,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc=desc,
        disable=not progress,
        leave=False,
    )


def _copy_local(url: str, part: Path, *, chunk_size: int, progress: bool, desc: str) -> None:
    """Copy the file behind a ``file://`` URL into ``part``."""
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise DownloadError(f"{redact_url(url)}: file:// URLs must point at this machine")
    source = Path(url2pathname(unquote(parts.path)))
    if not source.is_file():
        raise DownloadError(f"{redact_url(url)}: local file {source} not found")
    size = source.stat().st_size
    with (
        source.open("rb") as src,
        part.open("wb") as out,
        _byte_bar(size, desc, progress) as bar,
    ):
        while chunk := src.read(chunk_size):
            out.write(chunk)
            bar.update(len(chunk))


def download(
    url: str,
    dest: PathLike,
    *,
    sha256: str | None = None,
    md5: str | None = None,
    retries: int = 5,
    timeout: float = 60,
    backoff: float = 1.0,
    max_delay: float = MAX_DELAY,
    chunk_size: int = 1 << 20,
    progress: bool = True,
    session: requests.Session | None = None,
    headers: Mapping[str, str] | None = None,
) -> Path:
    """Fetch ``url`` into ``dest``, resuming, retrying and verifying; return ``dest``.

    The body goes to ``dest`` + ``.part`` and is renamed onto ``dest`` only after the
    optional checksums match (and the bytes are synced to disk), so ``dest`` is either
    absent or complete. A dropped connection or a short body is resumed with a ``Range``
    request; connection errors, timeouts (``timeout`` seconds without a byte), 408, 429
    and 5xx answers are retried ``retries`` times after waits of ``backoff`` seconds,
    doubled each time and capped at ``max_delay`` (a server's ``Retry-After`` when
    longer); other 4xx answers fail at once. A file that fails its checksum is deleted
    (when it was resumed from an earlier ``.part``, it is fetched once more from zero
    first). An existing ``dest`` that matches the checksums (or any existing ``dest``
    when none are given) is returned without a request. ``file://`` URLs are copied with
    the same guarantees. URLs are shown with their credentials masked
    (:func:`xlalign.core.io.redact_url`).
    """
    target = Path(dest)
    shown = redact_url(url)
    expected = _expected(sha256, md5)
    if target.is_file():
        bad = _mismatches(target, expected)
        if not bad:
            logger.info("%s: already present, not downloading", target)
            return target
        logger.warning(
            "%s exists but its %s is %s, not %s; downloading it again",
            target,
            bad[0][0],
            bad[0][2],
            bad[0][1],
        )

    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    desc = target.name
    scheme = urlsplit(url).scheme.lower()

    if scheme not in ("file", "http", "https"):
        raise DownloadError(f"{shown}: unsupported URL scheme {scheme!r}; expected http(s) or file")
    own_session = session is None and scheme != "file"
    sess = requests.Session() if own_session else session

    def fetch() -> None:
        if scheme == "file":
            _copy_local(url, part, chunk_size=chunk_size, progress=progress, desc=desc)
        else:
            assert sess is not None
            _with_retries(
                url,
                lambda: _http_attempt(
                    url,
                    part,
                    session=sess,
                    headers=dict(headers or {}),
                    timeout=timeout,
                    chunk_size=chunk_size,
                    progress=progress,
                    desc=desc,
                ),
                retries=retries,
                backoff=backoff,
                max_delay=max_delay,
            )

    try:
        resumed = part.is_file() and part.stat().st_size > 0
        fetch()
        bad = _mismatches(part, expected)
        if bad and resumed:
            logger.warning(
                "%s: the file resumed from %s fails its %s check; fetching it again from zero",
                shown,
                part,
                bad[0][0],
            )
            part.unlink(missing_ok=True)
            fetch()
            bad = _mismatches(part, expected)
    finally:
        if own_session and sess is not None:
            sess.close()
    if bad:
        part.unlink(missing_ok=True)
        detail = "; ".join(f"expected {a} {exp}, got {act}" for a, exp, act in bad)
        raise DownloadError(f"{shown}: checksum mismatch for {target}: {detail}")
    fsync_path(part)
    os.replace(part, target)
    fsync_path(target.parent)
    logger.info("%s: saved to %s", shown, target)
    return target


# --------------------------------------------------------------------------- Hugging Face

_HF_CONFIG_FILES = frozenset({"config.json"})
_HF_TOKENIZER_FILES = frozenset(
    {
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        "added_tokens.json",
        "sentencepiece.bpe.model",
        "spiece.model",
        "tokenizer.model",
        "source.spm",
        "target.spm",
        "vocab.txt",
        "vocab.json",
        "merges.txt",
        "bpe.codes",
    }
)
_HF_BIN_RE = re.compile(r"^pytorch_model(-\d+-of-\d+)?\.bin$")


def select_hf_files(filenames: Iterable[str], allow_patterns: list[str] | None = None) -> list[str]:
    """Pick the repository files that ``AutoModel``/``AutoTokenizer`` need offline.

    With ``allow_patterns`` the files matching any of them (``fnmatch``) are taken instead.
    Weights: every top-level ``*.safetensors`` (with its shard index), else
    ``pytorch_model.bin`` (or its shards and index); TF, Flax, ONNX and Rust weights and
    files in sub-folders are skipped.
    """
    names = sorted(set(filenames))
    if allow_patterns is not None:
        return [n for n in names if any(fnmatch.fnmatch(n, p) for p in allow_patterns)]
    top = [n for n in names if "/" not in n]
    chosen = [n for n in top if n in _HF_CONFIG_FILES or n in _HF_TOKENIZER_FILES]
    safetensors = [
        n for n in top if n.endswith(".safetensors") or n.endswith(".safetensors.index.json")
    ]
    if any(n.endswith(".safetensors") for n in safetensors):
        chosen += safetensors
    else:
        chosen += [n for n in top if _HF_BIN_RE.match(n) or n == "pytorch_model.bin.index.json"]
    return sorted(chosen)


def _get_json(
    url: str,
    *,
    session: requests.Session,
    headers: Mapping[str, str],
    timeout: float,
    retries: int,
    backoff: float,
    max_delay: float = MAX_DELAY,
) -> Any:
    def attempt() -> Any:
        try:
            with session.get(url, headers=dict(headers), timeout=timeout) as resp:
                _check_status(url, resp)
                return resp.json()
        except _NETWORK_ERRORS as exc:
            raise _Transient(f"{type(exc).__name__}: {exc}") from exc
        except ValueError as exc:  # JSON decoding
            raise DownloadError(f"{redact_url(url)}: expected a JSON answer ({exc})") from exc

    return _with_retries(url, attempt, retries=retries, backoff=backoff, max_delay=max_delay)


def _manifest_is_current(dest: Path, repo_id: str, sha: str, files: list[str]) -> bool:
    manifest = dest / MANIFEST_NAME
    if not manifest.is_file():
        return False
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if data.get("repo") != repo_id or data.get("sha") != sha:
        return False
    recorded = {f.get("path"): f.get("size") for f in data.get("files", [])}
    if sorted(recorded) != files:
        return False
    return all(
        (dest / name).is_file() and (dest / name).stat().st_size == size
        for name, size in recorded.items()
    )


def download_huggingface_model(
    repo_id: str,
    dest_dir: PathLike,
    *,
    revision: str = "main",
    endpoint: str = "https://huggingface.co",
    allow_patterns: list[str] | None = None,
    token: str | None = None,
    **download_kwargs: Any,
) -> Path:
    """Download the files of a Hugging Face model repo that ``from_pretrained`` needs.

    The revision is resolved to a commit sha first so every file comes from the same
    commit. Files are fetched with :func:`download` (resumable: a staging directory next
    to ``dest_dir`` survives an interruption) and the finished directory is renamed into
    place with a manifest, ``xlalign-download.json``. A ``dest_dir`` whose manifest already
    records the same commit and files is kept as is.
    """
    dest = Path(dest_dir)
    base = endpoint.rstrip("/")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    api_url = f"{base}/api/models/{repo_id}/revision/{quote(revision, safe='')}"

    own_session = download_kwargs.get("session") is None
    session: requests.Session = download_kwargs.pop("session", None) or requests.Session()
    try:
        try:
            info = _get_json(
                api_url + "?blobs=true",
                session=session,
                headers=headers,
                timeout=float(download_kwargs.get("timeout", 60)),
                retries=int(download_kwargs.get("retries", 5)),
                backoff=float(download_kwargs.get("backoff", 1.0)),
                max_delay=float(download_kwargs.get("max_delay", MAX_DELAY)),
            )
        except HTTPStatusError as exc:
            if exc.status in (401, 403, 404):
                raise DownloadError(
                    f"Hugging Face model {repo_id!r} (revision {revision!r}) was not found "
                    f"at {redact_url(base)} (HTTP {exc.status}); check the repo id, or pass a "
                    "token for a private or gated model"
                ) from exc
            raise
        if not isinstance(info, dict) or not isinstance(info.get("siblings"), list):
            raise DownloadError(
                f"{redact_url(api_url)}: expected JSON with a 'siblings' list for model {repo_id!r}"
            )
        sha = str(info.get("sha") or revision)
        siblings = {
            s["rfilename"]: s
            for s in info["siblings"]
            if isinstance(s, dict) and isinstance(s.get("rfilename"), str)
        }
        files = select_hf_files(siblings, allow_patterns)
        if allow_patterns is not None and not files:
            raise DownloadError(
                f"Hugging Face model {repo_id!r}: no file matches {allow_patterns} "
                f"(files: {sorted(siblings)})"
            )
        if allow_patterns is None and not any(f.endswith((".safetensors", ".bin")) for f in files):
            raise DownloadError(
                f"Hugging Face model {repo_id!r} at {sha}: no PyTorch weights "
                f"(*.safetensors or pytorch_model.bin) among {sorted(siblings)}"
            )
        for name in files:
            check_member_name(f"{repo_id}@{sha}", name)

        if _manifest_is_current(dest, repo_id, sha, files):
            logger.info("%s: %s at %s already present", dest, repo_id, sha)
            return dest

        staging = dest.with_name(f".{dest.name}.download")
        marker = staging / ".xlalign-sha"
        if staging.exists() and (
            not marker.is_file() or marker.read_text(encoding="utf-8").strip() != sha
        ):
            shutil.rmtree(staging)  # left over from another commit: start afresh
        staging.mkdir(parents=True, exist_ok=True)
        marker.write_text(sha + "\n", encoding="utf-8")
        for name in files:
            lfs = siblings[name].get("lfs") or {}
            download(
                f"{base}/{repo_id}/resolve/{quote(sha, safe='')}/{quote(name, safe='/')}",
                staging / name,
                sha256=lfs.get("sha256") if isinstance(lfs, dict) else None,
                session=session,
                headers=headers,
                **download_kwargs,
            )
    finally:
        if own_session:
            session.close()

    records = []
    for name in files:
        path = staging / name
        records.append(
            {
                "path": name,
                "size": path.stat().st_size,
                "sha256": _digests(path, ["sha256"])["sha256"],
            }
        )
    with atomic_dir(dest) as tmp:
        for name in files:
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / name, tmp / name)
        write_json(
            tmp / MANIFEST_NAME,
            {
                "repo": repo_id,
                "revision": revision,
                "sha": sha,
                "endpoint": redact_url(base),
                "files": records,
            },
        )
    shutil.rmtree(staging, ignore_errors=True)
    logger.info("%s: %d files of %s at %s", dest, len(files), repo_id, sha)
    return dest


# --------------------------------------------------------------------------- archives

_ZIP_SUFFIXES = (".zip", ".whl")
_TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2")


def check_member_name(archive: object, name: str) -> None:
    """Refuse member names that are absolute or climb out of the extraction directory."""
    norm = name.replace("\\", "/")
    if not norm or norm.startswith("/") or re.match(r"^[A-Za-z]:", norm):
        raise InputError(f"{archive}: member {name!r} has an absolute path; refusing to extract")
    if ".." in norm.split("/"):
        raise InputError(f"{archive}: member {name!r} escapes the target directory ('..')")


def _check_tar_member(archive: Path, member: tarfile.TarInfo) -> None:
    check_member_name(archive, member.name)
    if member.issym():
        link = member.linkname.replace("\\", "/")
        if link.startswith("/"):
            raise InputError(
                f"{archive}: member {member.name!r} links to the absolute path {link!r}"
            )
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(member.name), link))
        if resolved == ".." or resolved.startswith("../"):
            raise InputError(
                f"{archive}: member {member.name!r} links to {link!r}, outside the target"
            )
    elif member.islnk():
        check_member_name(archive, member.linkname)
    elif member.ischr() or member.isblk() or member.isfifo():
        raise InputError(f"{archive}: member {member.name!r} is a device or FIFO")


def _wanted(name: str, members: list[str] | None) -> bool:
    if members is None:
        return True
    stripped = name.rstrip("/")
    return any(
        stripped == m.rstrip("/") or stripped.startswith(m.rstrip("/") + "/") for m in members
    )


def _check_requested(archive: Path, names: list[str], members: list[str] | None) -> None:
    for m in members or []:
        if not any(_wanted(n, [m]) for n in names):
            raise InputError(f"{archive}: member {m!r} is not in the archive")


def _archive_kind(archive: Path) -> str:
    name = archive.name.lower()
    if name.endswith(_ZIP_SUFFIXES):
        return "zip"
    if name.endswith(_TAR_SUFFIXES):
        return "tar"
    if zipfile.is_zipfile(archive):
        return "zip"
    with contextlib.suppress(OSError, tarfile.TarError):
        if tarfile.is_tarfile(archive):
            return "tar"
    raise InputError(
        f"{archive}: unsupported archive type; expected .tar, .tar.gz/.tgz, .tar.xz or .zip"
    )


def select_members(archive: PathLike, files: Sequence[str], patterns: Sequence[str]) -> list[str]:
    """The names among ``files`` (an archive's regular files) that match one of
    ``patterns`` (:func:`fnmatch.fnmatchcase`, ``*`` also matching ``/``; a leading ``./``
    of a name is ignored). Every pattern must match a file: one that matches nothing is an
    :class:`InputError` naming the archive and the pattern."""
    chosen: list[str] = []
    unmatched = []
    for pattern in patterns:
        hits = [f for f in files if fnmatch.fnmatchcase(f.removeprefix("./"), pattern)]
        if not hits:
            unmatched.append(pattern)
        chosen.extend(h for h in hits if h not in chosen)
    if unmatched:
        raise no_match_error(archive, unmatched, len(files))
    return chosen


def no_match_error(archive: object, unmatched: Sequence[str], n_files: int) -> InputError:
    """The error for member ``patterns`` of a package that match none of its ``n_files``
    regular files."""
    return InputError(
        f"{archive}: no member matches {', '.join(map(repr, unmatched))} (a file that a "
        f"later job reads from this package; the archive has {n_files} files)"
    )


def safe_extract(
    archive: PathLike,
    dest_dir: PathLike,
    *,
    members: list[str] | None = None,
    patterns: Sequence[str] | None = None,
) -> Path:
    """Extract a tar (plain, gz, xz, bz2) or zip archive into ``dest_dir``, atomically.

    Every member is checked before anything is written: absolute paths, ``..`` components,
    links pointing outside the directory and device files are refused with
    :class:`InputError`. ``members`` restricts extraction to those names (and, for
    directories, their contents); ``patterns`` to the regular files that match them (see
    :func:`select_members`; nothing is extracted when one matches no file). ``dest_dir`` is
    replaced as a whole.
    """
    src = Path(archive)
    dest = Path(dest_dir)
    if not src.is_file():
        raise InputError(f"{src}: archive not found")
    kind = _archive_kind(src)
    try:
        if kind == "zip":
            with zipfile.ZipFile(src) as zf:
                infos = zf.infolist()
                for info in infos:
                    check_member_name(src, info.filename)
                _check_requested(src, [i.filename for i in infos], members)
                if patterns is not None:
                    files = [i.filename for i in infos if not i.is_dir()]
                    members = select_members(src, files, patterns)
                with atomic_dir(dest) as tmp:
                    for info in infos:
                        if _wanted(info.filename, members):
                            zf.extract(info, tmp)
        else:
            with tarfile.open(src, "r:*") as tf:
                tinfos = tf.getmembers()
                for member in tinfos:
                    _check_tar_member(src, member)
                _check_requested(src, [m.name for m in tinfos], members)
                if patterns is not None:
                    members = select_members(src, [m.name for m in tinfos if m.isfile()], patterns)
                chosen = [m for m in tinfos if _wanted(m.name, members)]
                with atomic_dir(dest) as tmp:
                    # Members are checked above; the "data" filter (Python >= 3.11.4, not
                    # Debian 12's 3.11.2) refuses the same and drops special permissions.
                    extra = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
                    tf.extractall(tmp, members=chosen, **extra)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, lzma.LZMAError, zlib.error) as exc:
        raise InputError(
            f"{src}: corrupt or truncated archive ({exc}); nothing was extracted; delete it "
            "to have it downloaded again (and give its sha256 in the config to catch this "
            "at download time)"
        ) from exc
    logger.info("%s: extracted into %s", src, dest)
    return dest
