"""Atomic outputs and strict text reading."""

from __future__ import annotations

import gzip
import hashlib
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from xlalign.core import io as xio
from xlalign.core.errors import InputError
from xlalign.core.io import (
    atomic_dir,
    atomic_open,
    atomic_path,
    file_sha256,
    iter_lines,
    read_json,
    remove_stale_temporaries,
    stale_temporaries,
    write_json,
)


def test_atomic_open_success_and_permissions(tmp_path: Path) -> None:
    out = tmp_path / "sub" / "out.txt"
    with atomic_open(out) as fh:
        fh.write("hello\n")
        assert not out.exists()  # only renamed into place at the end
    assert out.read_text() == "hello\n"
    mode = stat.S_IMODE(out.stat().st_mode)
    assert mode & 0o044, oct(mode)  # readable by group/others under a normal umask


def test_atomic_open_failure_leaves_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text("old")
    with pytest.raises(RuntimeError), atomic_open(out) as fh:
        fh.write("partial")
        raise RuntimeError("killed")
    assert out.read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["out.txt"]


def test_atomic_open_compresses_by_suffix(tmp_path: Path) -> None:
    out = tmp_path / "x.txt.gz"
    with atomic_open(out) as fh:
        fh.write("a\nb\n")
    assert gzip.decompress(out.read_bytes()) == b"a\nb\n"
    assert list(iter_lines(out)) == ["a", "b"]


def test_atomic_dir(tmp_path: Path) -> None:
    target = tmp_path / "model"
    with pytest.raises(ValueError), atomic_dir(target) as d:
        (d / "weights").write_text("half")
        raise ValueError
    assert not target.exists() and os.listdir(tmp_path) == []
    with atomic_dir(target) as d:
        (d / "weights").write_text("full")
    assert (target / "weights").read_text() == "full"
    assert stat.S_IMODE(target.stat().st_mode) & 0o055


def test_json_roundtrip_and_errors(tmp_path: Path) -> None:
    p = tmp_path / "s.json"
    write_json(p, {"b": 1, "a": "ü"})
    assert read_json(p) == {"a": "ü", "b": 1}
    p.write_text("{broken", encoding="utf-8")
    with pytest.raises(InputError, match=r"s\.json.*invalid JSON"):
        read_json(p)
    with pytest.raises(InputError, match="not found"):
        read_json(tmp_path / "none.json")


def test_iter_lines_strict_utf8(tmp_path: Path) -> None:
    p = tmp_path / "a.txt"
    p.write_bytes(b"ok\r\nbad \xc3\x28\n")
    with pytest.raises(InputError, match=r"a\.txt \(language 'fr'\): invalid UTF-8 at line 2"):
        list(iter_lines(p, language="fr"))


def test_file_sha256_streams_across_blocks(tmp_path: Path) -> None:
    data = os.urandom((1 << 20) * 2 + 123)  # more than one 1 MiB block, not a multiple
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()
    (tmp_path / "empty").write_bytes(b"")
    assert file_sha256(tmp_path / "empty") == hashlib.sha256(b"").hexdigest()


# --------------------------------------------------------------------------- durability

_WRITER = """
import os, signal, sys, time
from xlalign.core import interrupt
from xlalign.core.io import atomic_open
interrupt.install()
with atomic_open(sys.argv[1]) as fh:
    fh.write("new " * 50_000)
    fh.flush()
    print("inside", flush=True)
    time.sleep(60)
"""


def _killed_writer(target: Path, sig: int) -> int:
    """Run a writer that stops inside ``atomic_open`` and send it ``sig``; its exit status."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(target)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "inside"
        proc.send_signal(sig)
        return proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_sigkilled_writer_leaves_a_temporary_that_the_next_start_removes(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old complete\n")
    assert _killed_writer(target, signal.SIGKILL) == -signal.SIGKILL
    assert target.read_text() == "old complete\n"  # never the partial new one
    left = stale_temporaries([target])
    assert len(left) == 1
    assert left[0].name.startswith(".out.txt.") and left[0].name.endswith(".tmp")
    assert left[0].read_text().startswith("new ")
    assert remove_stale_temporaries([target]) == left
    assert sorted(os.listdir(tmp_path)) == ["out.txt"]
    # a fresh output is only there when complete
    with atomic_open(target) as fh:
        fh.write("new complete\n")
    assert target.read_text() == "new complete\n"


def test_sigtermed_writer_removes_its_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    assert _killed_writer(target, signal.SIGTERM) != 0
    assert os.listdir(tmp_path) == []


def test_stale_temporaries_are_only_those_of_the_named_outputs(tmp_path: Path) -> None:
    names = [
        ".a.abcdefgh.tmp",  # a file of output a
        ".a.x1y2z3_q.tmp",  # a directory of output a
        ".a.abcdefgh.tmp.png",  # a file with the writer's suffix
        ".a.npy.abcdefgh.tmp",  # output a.npy's, perhaps being written right now
        ".ab.abcdefgh.tmp",  # output ab's
        "a.part",  # a download's resumable part
        ".a.download",  # a Hub download's resumable staging
        "a",
    ]
    for name in names:
        if "x1y2" in name or name == ".a.download":
            (tmp_path / name).mkdir()
            (tmp_path / name / "inside").write_text("x")
        else:
            (tmp_path / name).write_text("x")
    removed = remove_stale_temporaries([tmp_path / "a", tmp_path / "missing" / "b"])
    assert sorted(p.name for p in removed) == sorted(names[:3])
    assert sorted(os.listdir(tmp_path)) == sorted(names[3:])


def test_atomic_path_syncs_data_then_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append("fsync " + os.path.basename(os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(a: object, b: object) -> None:
        events.append("rename")
        real_replace(a, b)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    target = tmp_path / "out.txt"
    with atomic_open(target) as fh:
        fh.write("data")
    assert events[-1] == f"fsync {tmp_path.name}"
    assert events[-2] == "rename"
    assert events[-3].startswith("fsync .out.txt.")


@pytest.mark.parametrize("exchange", [True, False])
def test_atomic_dir_replaces_a_directory_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool
) -> None:
    if not exchange:  # the two-rename fallback where renameat2 is not available
        monkeypatch.setattr(xio, "_exchange", lambda a, b: False)
    target = tmp_path / "model"
    with atomic_dir(target) as d:
        (d / "weights").write_text("v1")
        (d / "sub").mkdir()
        (d / "sub" / "x").write_text("v1")
    with pytest.raises(RuntimeError), atomic_dir(target) as d:
        (d / "weights").write_text("half")
        raise RuntimeError("killed")
    assert (target / "weights").read_text() == "v1"
    with atomic_dir(target) as d:
        (d / "weights").write_text("v2")
    assert sorted(os.listdir(target)) == ["weights"]  # nothing of v1 mixed in
    assert (target / "weights").read_text() == "v2"
    assert os.listdir(tmp_path) == ["model"]


def test_atomic_dir_rename_failure_keeps_the_old_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(xio, "_exchange", lambda a, b: False)
    target = tmp_path / "model"
    with atomic_dir(target) as d:
        (d / "weights").write_text("v1")
    real_replace = os.replace

    def replace(a: object, b: object) -> None:
        if Path(str(b)) == target and ".model." in str(a) and "v2" in str(os.listdir(str(a))):
            raise OSError(28, "No space left on device")
        real_replace(a, b)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="No space"), atomic_dir(target) as d:
        (d / "v2").write_text("v2")
    assert os.listdir(target) == ["weights"]
    assert os.listdir(tmp_path) == ["model"]


def test_atomic_path_directory_written_in_place_of_the_file(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.write_text("a file before")
    with atomic_path(target) as tmp:
        tmp.unlink()
        tmp.mkdir()
        (tmp / "f").write_text("x")
    assert (target / "f").read_text() == "x"
    assert os.listdir(tmp_path) == ["out"]
