"""The held-out review of configuration validation (issue 25, Deliver 1): malformed
configurations written apart from test_config_sweep.py, each one mutation of
config/config.yaml or config/paper.yaml that the first sweep let through (or let through
to a traceback), refused in-process with the key (or file line) named."""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from xlalign.config import load, validate
from xlalign.config.taskdata import WORDSIM_SETS
from xlalign.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
CONFIG_TEXT = (ROOT / "config" / "config.yaml").read_text(encoding="utf-8")
EMBEDDED = yaml.safe_load(CONFIG_TEXT)
PAPER = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text(encoding="utf-8"))
NAN, INF = float("nan"), float("inf")


def _set(cfg: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(cfg)
    node: Any = out
    parts = path.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value
    return out


def _refused(cfg: dict[str, Any], expect: str, base_dir: Path) -> str:
    with pytest.raises(ConfigError) as exc:
        validate(cfg, origin="held-out.yaml", base_dir=base_dir)
    msg = str(exc.value)
    assert expect in msg, msg
    assert "Traceback" not in msg
    return msg


# (case, base, key path, value, what the message must name)
MUTATIONS = [
    # integers written as floats: seeds `1.0` named paths `s1.0` (a traceback in the DAG),
    # `steps: 40.0` reached range() inside a job
    ("float-seed", "E", "seeds", [1.0], "seeds.0"),
    ("float-zeroshot-seeds", "E", "zeroshot.seeds", [1.0, 2.0], "zeroshot.seeds.0"),
    ("float-pretrain-seeds", "E", "pretrain.seeds", [1.0], "pretrain.seeds.0"),
    ("float-steps", "E", "pretrain.steps", 40.0, "pretrain.steps"),
    # NaN passes every range (comparisons are false); infinities pass lower bounds
    ("nan-lr", "E", "extract.lr", NAN, "extract.lr"),
    ("inf-lr", "E", "extract.lr", INF, "extract.lr"),
    ("nan-pretrain-lr", "E", "pretrain.learning_rate", NAN, "pretrain.learning_rate"),
    ("nan-test-fraction", "E", "dictionaries.split.test_fraction", NAN, "test_fraction"),
    ("inf-task-epochs", "E", "zeroshot.tasks.pos-gold.params.epochs", INF, "epochs"),
    ("nan-min-margin", "E", "align.selection.min_margin", NAN, "min_margin"),
    ("inf-max-ratio", "E", "parallel.filter.max_ratio", INF, "max_ratio"),
    ("nan-null-prior", "E", "wordalign.null_prior", NAN, "null_prior"),
    ("nan-language-alpha", "E", "metapretrain.cross.language_alpha", NAN, "language_alpha"),
    ("nan-significance", "E", "results.significance.alpha", NAN, "significance.alpha"),
    ("nan-objective-weight", "E", "pretrain.objectives.mse.weight", NAN, "mse.weight"),
    ("nan-vecmap-option", "E", "align.options", {"stochastic_initial": NAN}, "stochastic_initial"),
    ("nan-timeout", "E", "downloads.timeout", NAN, "downloads.timeout"),
    ("nan-syntax", "E", "derived.syntax.object_verb", NAN, "object_verb"),
    ("inf-subsample", "E", "extract.subsample_t", INF, "subsample_t"),
    (
        "nan-continual-alpha",
        "E",
        "zeroshot.continual.c1",
        {"objective": "mse", "alpha": NAN, "settings": {"static": "x2s-ma"}},
        "zeroshot.continual.c1.alpha",
    ),
    # integers past what numpy / torch take
    ("huge-seed", "E", "seeds", [2**70], "seeds.0"),
    ("seed-over-32-bits", "E", "corpus.seed", 2**40, "corpus.seed"),
    ("huge-vecmap-option", "E", "align.options", {"vocabulary_cutoff": 2**64}, "vocabulary_cutoff"),
    # a repeated list item that would count twice or duplicate a row
    (
        "dup-feature-layers",
        "E",
        "zeroshot.tasks.pos-gold.params.extra.feature_based",
        {"layers": [3, 3]},
        "feature_based",
    ),
    (
        "dup-linear-map-layers",
        "E",
        "pretrain.objectives.linear_map",
        {"layers": [4, 4]},
        "linear_map.layers",
    ),
    ("dup-english-sets", "E", "evaluate.wordsim.english_sets", ["men", "men"], "english_sets"),
    ("dup-sweep-share", "E", "derived.sweeps.parallel", [0.1, 0.1], "derived.sweeps.parallel"),
    ("dup-heldout-books", "E", "embedded.bible_heldout_books", [40, 40], "bible_heldout_books"),
    ("dup-spaces", "E", "evaluate.spaces", ["x2s-m", "x2s-m"], "evaluate.spaces"),
    ("dup-distance-pairs", "E", "analysis.distances.pairs", ["en-de", "en-de"], "distances.pairs"),
    (
        "dup-finetuned",
        "E",
        "analysis.distances.finetuned",
        ["pos-gold", "pos-gold"],
        "distances.finetuned",
    ),
    (
        "dup-meta-tasks",
        "E",
        "metapretrain.evaluate",
        {"tasks": ["pos-gold", "pos-gold"], "retrieval": ["udhr"]},
        "metapretrain.evaluate.tasks",
    ),
    (
        "dup-source",
        "E",
        "corpus.sources.de",
        [{"type": "libreoffice-help"}] * 2,
        "corpus.sources.de",
    ),
    (
        "dup-parallel-source",
        "E",
        "parallel.sources.en-de",
        [{"type": "bible"}] * 2,
        "parallel.sources.en-de",
    ),
    # enabled with nothing to run
    ("no-variants", "E", "metapretrain.variants", [], "metapretrain.variants"),
    (
        "no-derived-runs",
        "E",
        "derived",
        {**EMBEDDED["derived"], "runs": [], "sweeps": {}},
        "derived.runs",
    ),
    # a similarity set the wheel does not have (the job found out)
    ("english-set-typo", "E", "evaluate.wordsim.english_sets", ["mne"], "english_sets[0]"),
    # task data built only for `languages` (the rules' wildcard): MissingInputException
    (
        "udhr-outside-languages",
        "E",
        "zeroshot.retrieval.sets.udhr.languages",
        ["de", "sw"],
        "udhr.languages[1]",
    ),
    (
        "udpos-outside-languages",
        "P",
        "zeroshot.tasks.udpos.languages",
        ["de", "lt"],
        "udpos.languages[1]",
    ),
    # name: a trailing newline matched the pattern's `$`; the tracking store's place
    ("name-newline", "E", "name", "embedded\n", "name"),
    ("name-is-the-store", "E", "name", "mlflow.db", "name"),
    ("name-is-the-artifacts", "E", "name", "mlartifacts", "name"),
    ("tracking-uri-empty", "E", "tracking.uri", "", "tracking.uri"),
    ("tracking-uri-no-file", "E", "tracking.uri", "sqlite:///", "tracking.uri"),
    (
        "tracking-uri-missing-dir",
        "E",
        "tracking.uri",
        "sqlite:////nonexistent/d/m.db",
        "tracking.uri",
    ),
]


@pytest.mark.parametrize(
    ("base", "path", "value", "expect"),
    [m[1:] for m in MUTATIONS],
    ids=[m[0] for m in MUTATIONS],
)
def test_mutation_refused_with_its_key(
    base: str, path: str, value: Any, expect: str, tmp_path: Path
) -> None:
    cfg = _set(EMBEDDED if base == "E" else PAPER, path, value)
    _refused(cfg, expect, tmp_path)


def test_a_surrogate_in_a_value_is_refused_not_a_traceback(tmp_path: Path) -> None:
    # the config hash encodes the validated config as UTF-8
    f = tmp_path / "c.yaml"
    f.write_text(CONFIG_TEXT.replace("name: embedded", 'name: "\\ud800"'))
    with pytest.raises(ConfigError, match=r"name: .*lone surrogate"):
        load(f, base_dir=tmp_path)


# (case, file bytes, what the message must name)
FILES = [
    ("nul-byte", CONFIG_TEXT.encode() + b"\x00", r"line \d+: character U\+0000"),
    (
        "billion-laughs",
        b"a: &a [x,x,x,x,x,x,x,x,x]\n"
        + b"".join(
            f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n".encode()
            for p, n in zip("abcdefg", "bcdefgh", strict=True)
        )
        + b"languages: *h\n",
        "aliases",
    ),
    (
        "recursive-alias",
        CONFIG_TEXT.replace(
            "languages: [en, de, ru, ar, hi, zh, ja, tl, id, tr]", "languages: &l [en, *l]"
        ).encode(),
        r"languages\[1\]: .*recursive",
    ),
    ("int-key", (CONFIG_TEXT + "\n1: x\n").encode(), "key 1 is not a string"),
    (
        "norway-key",
        CONFIG_TEXT.replace(
            "    tr: [{type: libreoffice-help}]\n",
            "    tr: [{type: libreoffice-help}]\n    on: [{type: bible}]\n",
        ).encode(),
        "corpus.sources.True: key True",
    ),
    ("yte-template", ("__use_yte__: true\n" + CONFIG_TEXT).encode(), "__use_yte__"),
]


@pytest.mark.parametrize(("data", "expect"), [f[1:] for f in FILES], ids=[f[0] for f in FILES])
def test_file_refused_with_its_line_or_key(data: bytes, expect: str, tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_bytes(data)
    with pytest.raises(ConfigError) as exc:
        load(f, base_dir=tmp_path)
    assert re.search(expect, str(exc.value)), str(exc.value)
    assert len(str(exc.value)) < 2000  # never the expanded value


def test_the_shipped_configs_stay_valid() -> None:
    load(ROOT / "config" / "config.yaml", base_dir=ROOT)
    load(ROOT / "config" / "paper.yaml", base_dir=ROOT)


def test_wordsim_sets_are_the_wheels_sets() -> None:
    from xlalign.evaluation.wordsim import EMBEDDED_SETS

    for package, names in WORDSIM_SETS.items():
        have = {s.name for s in EMBEDDED_SETS if f"/{package}/" in f"/{s.member}"}
        assert set(names) == have, package


def test_the_snakefile_validates_what_the_strict_reader_reads(tmp_path: Path) -> None:
    """Snakemake's loader expands a YTE template (`__use_yte__`) that check-config refuses;
    the Snakefile validates the strictly read files, so both refuse it."""
    f = tmp_path / "yte.yaml"
    f.write_text("__use_yte__: true\n" + CONFIG_TEXT.replace("name: embedded", 'name: ?"e" + "x"'))
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "HF_HUB_OFFLINE": "1"}
    r = subprocess.run(
        [
            str(bin_dir / "snakemake"),
            "-s",
            str(ROOT / "Snakefile"),
            "--directory",
            str(tmp_path),
            "-n",
            "all",
            "--cores",
            "1",
            "--configfile",
            str(f),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    out = r.stdout + r.stderr
    assert r.returncode != 0
    assert "__use_yte__" in out and "Traceback" not in out, out[-2000:]


def test_credentials_in_a_refused_url_are_masked(tmp_path: Path) -> None:
    """A refused download template is quoted without the password or token typed into it."""
    cfg = yaml.safe_load(Path("config/config.yaml").read_text(encoding="utf-8"))
    cfg.setdefault("downloads", {})["cc100"] = {
        "url": "https://alice:s3cret@example.org/{lang}/{nope}.txt.xz?token=abc123"
    }
    with pytest.raises(ConfigError) as exc:
        validate(cfg, origin="mine.yaml", base_dir=Path.cwd())
    message = str(exc.value)
    assert "downloads.cc100.url" in message
    assert "s3cret" not in message and "abc123" not in message
    assert "alice:***@example.org" in message
