"""The teacher cache is a temporary output unless ``extract.keep_teacher_cache`` (issue 28):
the workflow marks it so, and the job's build in a ``.partial`` sidecar
(:func:`xlalign.static.teacher.staged_cache`) resumes after a failed run under Snakemake
(which deletes a failed job's outputs) and is deleted once its readers have run."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
CACHE = "results/embedded/cache/teacher/s0/de"


def _snakemake(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": f"{BIN}:{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [str(BIN / "snakemake"), *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def _would_delete(cwd: Path, *config: str) -> str:
    (cwd / CACHE).mkdir(parents=True, exist_ok=True)
    (cwd / CACHE / "meta.json").write_text("{}", encoding="utf-8")
    r = _snakemake(
        cwd,
        *("-s", str(ROOT / "Snakefile"), "--delete-temp-output", "-n"),
        "results/embedded/static/seed1/x2s-m/de.npy",
        *config,
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return r.stdout + r.stderr


def test_the_cache_is_temporary_unless_kept(tmp_path: Path) -> None:
    assert f"Would delete {CACHE}" in _would_delete(tmp_path)
    keep = tmp_path / "keep.yaml"
    keep.write_text("extract:\n  keep_teacher_cache: true\n", encoding="utf-8")
    kept = _would_delete(tmp_path, "--configfile", str(ROOT / "config/config.yaml"), str(keep))
    assert "Would delete" not in kept


SNAKEFILE = """
from pathlib import Path
from xlalign.static.teacher import staged_cache

rule all:
    input: "read.txt"

rule build:
    output: temp(directory("cache"))
    run:
        with staged_cache(output[0]) as out:
            shard = out / "shard-0"
            resumed = shard.is_file()
            shard.write_text("resumed" if resumed else "first", encoding="utf-8")
            if not Path("fail-once").exists():
                Path("fail-once").touch()
                raise RuntimeError("killed after the first shard")
            (out / "meta.json").write_text("{}", encoding="utf-8")

rule read:
    input: "cache"
    output: "read.txt"
    shell: "cat {input}/shard-0 > {output}"
"""


def test_a_failed_build_resumes_from_its_sidecar_and_the_cache_goes_after_its_reader(
    tmp_path: Path,
) -> None:
    (tmp_path / "Snakefile").write_text(textwrap.dedent(SNAKEFILE), encoding="utf-8")
    first = _snakemake(tmp_path, "--cores", "1")
    assert first.returncode != 0
    assert not (tmp_path / "cache").exists()
    assert (tmp_path / "cache.partial" / "shard-0").read_text(encoding="utf-8") == "first"
    second = _snakemake(tmp_path, "--cores", "1")
    assert second.returncode == 0, (second.stdout + second.stderr)[-3000:]
    assert (tmp_path / "read.txt").read_text(encoding="utf-8") == "resumed"
    assert not (tmp_path / "cache").exists(), "the temporary cache outlived its reader"
    assert not (tmp_path / "cache.partial").exists()
    # --notemp keeps it
    (tmp_path / "read.txt").unlink()
    kept = _snakemake(tmp_path, "--cores", "1", "--notemp")
    assert kept.returncode == 0, (kept.stdout + kept.stderr)[-3000:]
    assert (tmp_path / "cache" / "meta.json").is_file()
