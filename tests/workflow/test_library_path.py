"""Jobs find the library one way (workflow/rules/common/setup.smk): src/ on PYTHONPATH,
exported by the prefix of every command Snakemake runs, so that it holds inside a rule's
conda env too, where Snakemake drops an inherited PYTHONPATH."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

# conda-forge is unreachable here: a stub front end whose `env create` makes an env whose
# python is the bare interpreter behind the venv (no xlalign installed) and that records
# the PYTHONPATH it is started with.
STUB_CONDA = """#!/bin/bash
case "$*" in
  "info --json") echo '{"conda_prefix": "%(base)s", "platform": "linux-64", "envs_dirs": []}' ;;
  "--version") echo "conda 24.11.0" ;;
  "config --get channel_priority --json") echo '{"get": {"channel_priority": "strict"}}' ;;
  "env create"*)
    while [ $# -gt 0 ]; do [ "$1" = --prefix ] && prefix="$2"; shift; done
    mkdir -p "$prefix/bin"
    printf '#!/bin/sh\\necho "$PYTHONPATH" >> %(probe)s\\nexec %(python)s "$@"\\n' \\
      > "$prefix/bin/python"
    chmod +x "$prefix/bin/python" ;;
  clean*) ;;
  *) echo "stub conda cannot $*" >&2; exit 1 ;;
esac
"""
ACTIVATE = 'export PATH="$1/bin:$PATH"\n'


def test_a_job_in_a_conda_env_imports_the_library_from_src(tmp_path: Path) -> None:
    base = tmp_path / "base"
    (base / "bin").mkdir(parents=True)
    (base / "bin" / "activate").write_text(ACTIVATE, encoding="utf-8")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    probe = tmp_path / "pythonpath.txt"
    conda = bindir / "conda"
    python = os.path.realpath(sys.executable)
    conda.write_text(STUB_CONDA % {"base": base, "probe": probe, "python": python})
    conda.chmod(0o755)
    (tmp_path / "enc").mkdir()
    (tmp_path / "enc" / "config.json").write_text('{"model_type": "bert"}', encoding="utf-8")
    (tmp_path / "enc" / "tokenizer.json").write_text("{}", encoding="utf-8")
    text = "\n\n".join(
        "\n".join(f"Sentence {d} {p} {i} of a small test corpus here." for i in range(3))
        for d in range(10)
        for p in range(2)
    )
    (tmp_path / "en.txt").write_text(text + "\n", encoding="utf-8")
    cfg = {
        "name": "lp",
        "languages": ["en", "de"],
        "seeds": [1],
        "encoder": {"source": "local", "path": "enc"},
        "corpus": {
            "max_sentences": 10,
            "sources": {lang: [{"type": "text", "path": "en.txt"}] for lang in ("en", "de")},
        },
        "dictionaries": {"sources": []},
        "align": {"enabled": False},
        "evaluate": {"spaces": []},
    }
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    env = {
        **os.environ,
        "PATH": f"{bindir}:{BIN}:{os.environ['PATH']}",
        "PYTHONPATH": "/elsewhere",  # dropped by Snakemake inside a conda env
    }
    cmd = [str(BIN / "snakemake"), "-s", str(ROOT / "Snakefile"), "--directory", str(tmp_path)]
    cmd += ["--configfile", "c.yaml", "--sdm", "conda", "--cores", "1"]
    cmd += ["results/lp/corpus/s0/sample/en.txt"]
    r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "results/lp/corpus/s0/sample/en.json").is_file()
    seen = set(probe.read_text(encoding="utf-8").split())
    assert seen == {str(ROOT / "src")}, seen
