"""Atomic outputs and strict text reading."""

from __future__ import annotations

import gzip
import hashlib
import os
import stat
from pathlib import Path

import pytest

from xlalign.core.errors import InputError
from xlalign.core.io import atomic_dir, atomic_open, file_sha256, iter_lines, read_json, write_json


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
