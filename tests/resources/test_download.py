"""Tests for xlalign.resources.download against a loopback HTTP server with injected faults."""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import random
import tarfile
import zipfile
from pathlib import Path

import pytest
from httpserver import HF_SHA as SHA
from httpserver import hf_server_files, serve

from xlalign.resources.download import (
    MANIFEST_NAME,
    HTTPStatusError,
    download,
    download_huggingface_model,
    safe_extract,
    select_hf_files,
)
from xlalign.core.errors import DownloadError, InputError

FAST = {"backoff": 0.01, "timeout": 10, "progress": False}


def _payload(n: int, seed: int = 0) -> bytes:
    return random.Random(seed).randbytes(n)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_plain_download_with_checksums(tmp_path: Path) -> None:
    data = _payload(300_000)
    with serve({"/f.bin": data}) as srv:
        out = download(
            srv.url("/f.bin"),
            tmp_path / "sub" / "f.bin",
            sha256=_sha256(data).upper(),
            md5=hashlib.md5(data).hexdigest(),
            chunk_size=4096,
            **FAST,
        )
    assert out == tmp_path / "sub" / "f.bin"
    assert out.read_bytes() == data
    assert not (tmp_path / "sub" / "f.bin.part").exists()
    assert [r.range for r in srv.requests] == [None]


def test_wrong_checksum_leaves_nothing(tmp_path: Path) -> None:
    data = b"the real content\n"
    dest = tmp_path / "f.txt"
    with serve({"/f.txt": data}) as srv, pytest.raises(DownloadError) as info:
        download(srv.url("/f.txt"), dest, sha256="0" * 64, **FAST)
    msg = str(info.value)
    assert srv.url("/f.txt") in msg
    assert str(dest) in msg
    assert "0" * 64 in msg
    assert _sha256(data) in msg
    assert not dest.exists()
    assert not (tmp_path / "f.txt.part").exists()


def test_interrupted_transfer_resumes_with_range(tmp_path: Path) -> None:
    data = _payload(200_000, seed=1)
    faults = {"/big.bin": {"truncate_at": 70_000}}
    with serve({"/big.bin": data}, faults) as srv:
        out = download(srv.url("/big.bin"), tmp_path / "big.bin", sha256=_sha256(data), **FAST)
    assert out.read_bytes() == data
    reqs = srv.requests_for("/big.bin")
    assert len(reqs) == 2
    assert reqs[0].range is None
    assert reqs[1].range == "bytes=70000-"
    assert reqs[1].status == 206


def test_existing_part_is_resumed(tmp_path: Path) -> None:
    data = _payload(50_000, seed=2)
    dest = tmp_path / "f.bin"
    (tmp_path / "f.bin.part").write_bytes(data[:12_345])
    with serve({"/f.bin": data}) as srv:
        download(srv.url("/f.bin"), dest, sha256=_sha256(data), **FAST)
    assert dest.read_bytes() == data
    assert [r.range for r in srv.requests] == ["bytes=12345-"]


def test_complete_part_answered_416_is_verified(tmp_path: Path) -> None:
    data = _payload(10_000, seed=3)
    dest = tmp_path / "f.bin"
    (tmp_path / "f.bin.part").write_bytes(data)
    with serve({"/f.bin": data}) as srv:
        download(srv.url("/f.bin"), dest, sha256=_sha256(data), **FAST)
    assert dest.read_bytes() == data
    assert [r.status for r in srv.requests] == [416]


def test_oversized_part_is_discarded_after_416(tmp_path: Path) -> None:
    data = _payload(10_000, seed=4)
    dest = tmp_path / "f.bin"
    (tmp_path / "f.bin.part").write_bytes(data + b"garbage")
    with serve({"/f.bin": data}) as srv:
        download(srv.url("/f.bin"), dest, **FAST)
    assert dest.read_bytes() == data
    assert [(r.range, r.status) for r in srv.requests] == [("bytes=10007-", 416), (None, 200)]


def test_server_ignoring_range_restarts_cleanly(tmp_path: Path) -> None:
    data = _payload(80_000, seed=5)
    dest = tmp_path / "f.bin"
    (tmp_path / "f.bin.part").write_bytes(b"X" * 30_000)  # stale bytes that must not survive
    with serve({"/f.bin": data}, {"/f.bin": {"ignore_range": True}}) as srv:
        download(srv.url("/f.bin"), dest, **FAST)
    assert dest.read_bytes() == data
    assert [(r.range, r.status) for r in srv.requests] == [("bytes=30000-", 200)]


def test_truncated_then_range_ignored(tmp_path: Path) -> None:
    data = _payload(60_000, seed=6)
    faults = {"/f.bin": {"truncate_at": 25_000, "ignore_range": True}}
    with serve({"/f.bin": data}, faults) as srv:
        download(srv.url("/f.bin"), tmp_path / "f.bin", sha256=_sha256(data), **FAST)
    assert (tmp_path / "f.bin").read_bytes() == data
    assert [r.range for r in srv.requests] == [None, "bytes=25000-"]


@pytest.mark.parametrize("status", [500, 503, 429, 408])
def test_transient_status_is_retried(tmp_path: Path, status: int) -> None:
    data = b"eventually\n"
    with serve({"/f": data}, {"/f": {"status": status, "times": 2}}) as srv:
        download(srv.url("/f"), tmp_path / "f", retries=5, **FAST)
    assert (tmp_path / "f").read_bytes() == data
    assert [r.status for r in srv.requests] == [status, status, 200]


def test_retries_are_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with (
        serve({"/f": b"x"}, {"/f": {"status": 500, "times": 1}}) as srv,
        caplog.at_level("WARNING", logger="xlalign.resources.download"),
    ):
        download(srv.url("/f"), tmp_path / "f", **FAST)
    assert any("retry 1 of 5" in r.getMessage() for r in caplog.records)


def test_retries_exhausted(tmp_path: Path) -> None:
    with (
        serve({"/f": b"never"}, {"/f": {"status": 502}}) as srv,
        pytest.raises(DownloadError) as info,
    ):
        download(srv.url("/f"), tmp_path / "f", retries=2, **FAST)
    assert len(srv.requests) == 3
    assert srv.url("/f") in str(info.value)
    assert "502" in str(info.value)
    assert not (tmp_path / "f").exists()


def test_404_fails_fast(tmp_path: Path) -> None:
    with serve({}) as srv, pytest.raises(HTTPStatusError) as info:
        download(srv.url("/missing.txt.xz"), tmp_path / "m.txt.xz", retries=5, **FAST)
    assert len(srv.requests) == 1
    assert info.value.status == 404
    assert srv.url("/missing.txt.xz") in str(info.value)
    assert "404" in str(info.value)
    assert isinstance(info.value, DownloadError)


def test_403_fails_fast(tmp_path: Path) -> None:
    with (
        serve({"/f": b"x"}, {"/f": {"status": 403}}) as srv,
        pytest.raises(DownloadError, match="403"),
    ):
        download(srv.url("/f"), tmp_path / "f", **FAST)
    assert len(srv.requests) == 1


def test_existing_dest_with_good_checksum_is_not_refetched(tmp_path: Path) -> None:
    data = b"already here\n"
    dest = tmp_path / "f"
    dest.write_bytes(data)
    with serve({"/f": b"different content"}) as srv:
        download(srv.url("/f"), dest, sha256=_sha256(data), **FAST)
        download(srv.url("/f"), dest, **FAST)  # no checksum: presence is enough
    assert srv.requests == []
    assert dest.read_bytes() == data


def test_existing_dest_with_bad_checksum_is_replaced(tmp_path: Path) -> None:
    data = b"new content\n"
    dest = tmp_path / "f"
    dest.write_bytes(b"stale")
    with serve({"/f": data}) as srv:
        download(srv.url("/f"), dest, sha256=_sha256(data), **FAST)
    assert dest.read_bytes() == data
    assert len(srv.requests) == 1


def test_xz_payload_round_trip(tmp_path: Path) -> None:
    text = "".join(f"line {i} ünïcödé 日本語\n" for i in range(5000)).encode()
    data = lzma.compress(text)
    with serve({"/de.txt.xz": data}, {"/de.txt.xz": {"truncate_at": len(data) // 3}}) as srv:
        out = download(srv.url("/de.txt.xz"), tmp_path / "de.txt.xz", **{**FAST, "progress": True})
    assert out.read_bytes() == data
    assert lzma.decompress(out.read_bytes()) == text


def test_gzip_file_is_not_decoded(tmp_path: Path) -> None:
    # Servers often label .gz files Content-Encoding: gzip; the bytes must stay compressed.
    import gzip

    data = gzip.compress(b"1 300\nthe 0.1 0.2\n" * 100)
    faults = {"/cc.de.300.vec.gz": {"headers": {"Content-Encoding": "gzip"}}}
    with serve({"/cc.de.300.vec.gz": data}, faults) as srv:
        out = download(srv.url("/cc.de.300.vec.gz"), tmp_path / "v.gz", **FAST)
    assert out.read_bytes() == data


def test_file_url(tmp_path: Path) -> None:
    src = tmp_path / "mirror dir" / "muse de-en.txt"
    src.parent.mkdir()
    data = b"haus house\n"
    src.write_bytes(data)
    out = download(src.as_uri(), tmp_path / "out" / "de-en.txt", sha256=_sha256(data), **FAST)
    assert out.read_bytes() == data
    with pytest.raises(DownloadError, match="checksum"):
        download(src.as_uri(), tmp_path / "bad.txt", sha256="1" * 64, **FAST)
    assert not (tmp_path / "bad.txt").exists()
    assert not (tmp_path / "bad.txt.part").exists()
    with pytest.raises(DownloadError, match="not found"):
        download((tmp_path / "nope").as_uri(), tmp_path / "x", **FAST)


def test_unsupported_scheme(tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match="ftp"):
        download("ftp://example.org/x", tmp_path / "x", **FAST)


# --------------------------------------------------------------------------- Hugging Face


def _hf_files() -> dict[str, bytes]:
    return {
        "config.json": b'{"model_type": "bert"}',
        "tokenizer.json": b'{"version": "1.0"}',
        "tokenizer_config.json": b"{}",
        "special_tokens_map.json": b"{}",
        "sentencepiece.bpe.model": b"spm",
        "model.safetensors": _payload(40_000, seed=7),
        "pytorch_model.bin": b"torch pickle",
        "tf_model.h5": b"tf",
        "flax_model.msgpack": b"flax",
        "rust_model.ot": b"rust",
        "onnx/model.onnx": b"onnx",
        "README.md": b"# tiny",
    }


def test_select_hf_files_prefers_safetensors_and_handles_shards() -> None:
    sharded = [
        "config.json",
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
        "model.safetensors.index.json",
        "pytorch_model.bin",
        "tf_model.h5",
        "vocab.txt",
    ]
    assert select_hf_files(sharded) == [
        "config.json",
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
        "model.safetensors.index.json",
        "vocab.txt",
    ]
    bins = [
        "config.json",
        "pytorch_model-00001-of-00002.bin",
        "pytorch_model-00002-of-00002.bin",
        "pytorch_model.bin.index.json",
        "flax_model.msgpack",
        "merges.txt",
        "vocab.json",
    ]
    assert select_hf_files(bins) == [
        "config.json",
        "merges.txt",
        "pytorch_model-00001-of-00002.bin",
        "pytorch_model-00002-of-00002.bin",
        "pytorch_model.bin.index.json",
        "vocab.json",
    ]
    assert select_hf_files(bins, ["*.json"]) == [
        "config.json",
        "pytorch_model.bin.index.json",
        "vocab.json",
    ]


def test_hf_model_download(tmp_path: Path) -> None:
    files = _hf_files()
    dest = tmp_path / "models" / "tiny"
    with serve(hf_server_files("org/tiny", files)) as srv:
        out = download_huggingface_model(
            "org/tiny", dest, endpoint=srv.url("/"), token="secret", **FAST
        )
        assert out == dest
        wanted = {
            "config.json",
            "tokenizer.json",
            "tokenizer_config.json",
            "special_tokens_map.json",
            "sentencepiece.bpe.model",
            "model.safetensors",
        }
        on_disk = {str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file()}
        assert on_disk == wanted | {MANIFEST_NAME}
        for name in wanted:
            assert (dest / name).read_bytes() == files[name]
        manifest = json.loads((dest / MANIFEST_NAME).read_text())
        assert manifest["repo"] == "org/tiny"
        assert manifest["revision"] == "main"
        assert manifest["sha"] == SHA
        recorded = {f["path"]: f for f in manifest["files"]}
        assert set(recorded) == wanted
        weights = recorded["model.safetensors"]
        assert weights["size"] == len(files["model.safetensors"])
        assert weights["sha256"] == _sha256(files["model.safetensors"])
        # Every file came from the resolved commit, with the token.
        fetched = [r for r in srv.requests if "/resolve/" in r.path]
        assert {r.path.rsplit("/", 1)[-1] for r in fetched} == wanted
        assert all(f"/resolve/{SHA}/" in r.path for r in fetched)
        assert all(r.headers.get("Authorization") == "Bearer secret" for r in srv.requests)
        # No staging left behind; a second call only asks the API.
        assert [p.name for p in dest.parent.iterdir()] == ["tiny"]
        n_before = len(srv.requests)
        download_huggingface_model("org/tiny", dest, endpoint=srv.url("/"), **FAST)
        assert [r.path for r in srv.requests[n_before:]] == ["/api/models/org/tiny/revision/main"]


def test_hf_allow_patterns_and_corrupt_weights(tmp_path: Path) -> None:
    files = _hf_files()
    served = hf_server_files("org/tiny", files)
    with serve(served) as srv:
        download_huggingface_model(
            "org/tiny", tmp_path / "cfg", endpoint=srv.url(""), allow_patterns=["*.json"], **FAST
        )
        names = sorted(p.name for p in (tmp_path / "cfg").iterdir())
        assert names == sorted(
            [
                "config.json",
                "tokenizer.json",
                "tokenizer_config.json",
                "special_tokens_map.json",
                MANIFEST_NAME,
            ]
        )
        # Weights whose bytes do not match the LFS sha256: error, and no model dir.
        srv.files[f"/org/tiny/resolve/{SHA}/model.safetensors"] = b"corrupted"
        with pytest.raises(DownloadError, match="checksum mismatch"):
            download_huggingface_model("org/tiny", tmp_path / "bad", endpoint=srv.url(""), **FAST)
        assert not (tmp_path / "bad").exists()


def test_hf_resumes_after_failure(tmp_path: Path) -> None:
    files = _hf_files()
    last = f"/org/tiny/resolve/{SHA}/tokenizer_config.json"  # fetched last (sorted)
    dest = tmp_path / "tiny"
    with serve(hf_server_files("org/tiny", files), {last: {"status": 503}}) as srv:
        with pytest.raises(DownloadError, match="503"):
            download_huggingface_model(
                "org/tiny", dest, endpoint=srv.url(""), **{**FAST, "retries": 1}
            )
        assert not dest.exists()
        del srv.faults[last]
        n_before = len(srv.requests)
        download_huggingface_model("org/tiny", dest, endpoint=srv.url(""), **FAST)
        again = [r.path.rsplit("/", 1)[-1] for r in srv.requests[n_before:]]
    # Files finished before the failure are not fetched again.
    assert again == ["main", "tokenizer_config.json"]
    assert (dest / "model.safetensors").read_bytes() == files["model.safetensors"]
    assert [p.name for p in tmp_path.iterdir()] == ["tiny"]


def test_hf_unknown_repo(tmp_path: Path) -> None:
    with serve({}) as srv, pytest.raises(DownloadError) as info:
        download_huggingface_model(
            "org/does-not-exist", tmp_path / "m", endpoint=srv.url(""), **FAST
        )
    assert "org/does-not-exist" in str(info.value)
    assert len(srv.requests) == 1
    assert not (tmp_path / "m").exists()


def test_hf_repo_without_weights(tmp_path: Path) -> None:
    served = hf_server_files("org/tok", {"config.json": b"{}", "tokenizer.json": b"{}"})
    with serve(served) as srv, pytest.raises(DownloadError, match="no PyTorch weights"):
        download_huggingface_model("org/tok", tmp_path / "m", endpoint=srv.url(""), **FAST)


# --------------------------------------------------------------------------- archives


def _tar_with(path: Path, members: dict[str, bytes], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def test_safe_extract_tar_gz_and_members(tmp_path: Path) -> None:
    archive = _tar_with(
        tmp_path / "a.tar.gz", {"pkg/a.txt": b"A", "pkg/sub/b.txt": b"B", "other.txt": b"O"}
    )
    out = safe_extract(archive, tmp_path / "out")
    assert (out / "pkg" / "a.txt").read_bytes() == b"A"
    assert (out / "pkg" / "sub" / "b.txt").read_bytes() == b"B"
    assert (out / "other.txt").read_bytes() == b"O"
    only = safe_extract(archive, tmp_path / "only", members=["pkg/sub"])
    assert sorted(str(p.relative_to(only)) for p in only.rglob("*") if p.is_file()) == [
        "pkg/sub/b.txt"
    ]
    with pytest.raises(InputError, match="nope"):
        safe_extract(archive, tmp_path / "x", members=["nope"])


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_safe_extract_without_tarfile_filters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Debian 12's Python 3.11.2 has no tarfile extraction filters: the members are still
    checked, and extraction still works."""
    monkeypatch.delattr(tarfile, "data_filter", raising=False)
    archive = _tar_with(tmp_path / "a.tar.gz", {"pkg/a.txt": b"A"})
    assert (safe_extract(archive, tmp_path / "out") / "pkg" / "a.txt").read_bytes() == b"A"
    bad = _tar_with(tmp_path / "b.tar.gz", {"ok.txt": b"ok", "../evil": b"pwn"})
    with pytest.raises(InputError, match=r"\.\./evil"):
        safe_extract(bad, tmp_path / "never")
    assert not (tmp_path / "evil").exists()


def test_safe_extract_tar_xz(tmp_path: Path) -> None:
    archive = _tar_with(tmp_path / "m.tar.xz", {"model.udpipe": b"udpipe"}, mode="w:xz")
    out = safe_extract(archive, tmp_path / "out")
    assert (out / "model.udpipe").read_bytes() == b"udpipe"


def test_safe_extract_zip(tmp_path: Path) -> None:
    archive = tmp_path / "d.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("SemEval17/de.txt", "Haus\tHaus\t4.0\n")
    out = safe_extract(archive, tmp_path / "out")
    assert (out / "SemEval17" / "de.txt").read_text() == "Haus\tHaus\t4.0\n"


@pytest.mark.parametrize("bad", ["../evil", "ok/../../evil", "/etc/evil"])
def test_safe_extract_rejects_traversal(tmp_path: Path, bad: str) -> None:
    tar = _tar_with(tmp_path / "t.tar.gz", {"fine.txt": b"ok", bad: b"pwn"})
    zpath = tmp_path / "z.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("fine.txt", "ok")
        zf.writestr(bad, "pwn")
    for archive in (tar, zpath):
        dest = tmp_path / "dest" / archive.name
        with pytest.raises(InputError) as info:
            safe_extract(archive, dest)
        assert str(archive) in str(info.value)
        assert bad in str(info.value)
        assert not dest.exists()
    assert not (tmp_path / "evil").exists()
    assert not (tmp_path / "dest").exists()


def test_safe_extract_rejects_escaping_symlink(tmp_path: Path) -> None:
    archive = tmp_path / "l.tar"
    with tarfile.open(archive, "w") as tf:
        link = tarfile.TarInfo("data/link")
        link.type = tarfile.SYMTYPE
        link.linkname = "../../outside"
        tf.addfile(link)
    with pytest.raises(InputError, match="data/link"):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_safe_extract_allows_internal_symlink(tmp_path: Path) -> None:
    archive = tmp_path / "l.tar"
    with tarfile.open(archive, "w") as tf:
        data = tarfile.TarInfo("data/real.txt")
        data.size = 2
        tf.addfile(data, io.BytesIO(b"hi"))
        link = tarfile.TarInfo("data/link.txt")
        link.type = tarfile.SYMTYPE
        link.linkname = "real.txt"
        tf.addfile(link)
    out = safe_extract(archive, tmp_path / "out")
    assert (out / "data" / "link.txt").read_bytes() == b"hi"


def test_safe_extract_corrupt_and_unknown(tmp_path: Path) -> None:
    good = _tar_with(tmp_path / "g.tar.gz", {"a.txt": b"A" * 10_000})
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(good.read_bytes()[:40])
    with pytest.raises(InputError, match=r"cut\.tar\.gz"):
        safe_extract(cut, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    odd = tmp_path / "file.rar"
    odd.write_bytes(b"not an archive")
    with pytest.raises(InputError, match="unsupported archive"):
        safe_extract(odd, tmp_path / "out")
