"""The tracking manifest is read off the DAG (xlalign.workflow.manifest), not kept by hand.

A toy workflow run with the real Snakemake shows the convention (a job is tracked when its
rule has an output named ``stats``) and that a new rule is picked up without touching the
tracking code; the real workflow's manifest is checked against its own dry-run DAG.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from dry_run import dry_run_jobs, key_values

from xlalign.workflow.manifest import TrackedJob, seed_records

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ENV = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"}

# Training seeds 1 and 2 read the corpus samples 10 and 20 (wildcard sseed), like the
# workflow's corpus.seed: run. Every feature the walk must follow is here: an input
# function, rules.<name>.output, ancient(), a directory output holding its own stats, a
# rule without stats between tracked ones, and two producers of one file (ruleorder).
TOY = """
import functools
import json

from xlalign.workflow import manifest

SEEDS = [1, 2]
SAMPLE = {1: 10, 2: 20}
LANGS = ["de", "en"]
TARGETS = [f"train/seed{s}/{lang}.vec" for s in SEEDS for lang in LANGS]


@functools.cache
def tracked():
    return manifest.tracked_jobs(workflow.rules, TARGETS, skip={"track"})


def records(wildcards):
    seed = int(wildcards.seed)
    return manifest.seed_records(tracked(), seed, SAMPLE[seed])


wildcard_constraints:
    seed="1|2",
    sseed="10|20",


ruleorder: train > train_alt


rule all:
    input:
        lambda wc: TARGETS + [f"track/seed{s}.json" for s in SEEDS],


rule source:
    output:
        txt="src/{name}.txt",
        stats="src/{name}.json",
    benchmark:
        "bench/source/{name}.tsv"
    shell:
        "echo text > {output.txt}; echo '{{\\"n\\": 1}}' > {output.stats}"


rule model:
    output:
        dir=directory("model/{m}"),
        stats="model/{m}/build.json",
    shell:
        "mkdir -p {output.dir}; echo '{{}}' > {output.stats}"


rule sample:
    input:
        ancient("src/corpus.txt"),
    output:
        txt="sample/s{sseed}/{lang}.txt",
        stats="sample/s{sseed}/{lang}.json",
    benchmark:
        "bench/sample/s{sseed}/{lang}.tsv"
    shell:
        "cat {input} > {output.txt}; echo '{{}}' > {output.stats}"


rule plain:
    input:
        rules.sample.output.txt,
    output:
        "plain/s{sseed}/{lang}.txt",
    shell:
        "cp {input} {output}"


rule train:
    input:
        text=lambda wc: f"plain/s{SAMPLE[int(wc.seed)]}/{wc.lang}.txt",
        model="model/m1",
    output:
        vec="train/seed{seed}/{lang}.vec",
        stats="train/seed{seed}/{lang}.json",
    benchmark:
        "bench/train/seed{seed}/{lang}.tsv"
    shell:
        "cp {input.text} {output.vec}; echo '{{}}' > {output.stats}"


rule train_alt:
    output:
        vec="train/seed{seed}/{lang}.vec",
        stats="train/seed{seed}/{lang}.alt.json",
    shell:
        "exit 1"


rule track:
    input:
        lambda wc: [r["stats"] for r in records(wc)],
    output:
        "track/seed{seed}.json",
    params:
        records=records,
    run:
        with open(output[0], "w") as fh:
            json.dump(params.records, fh)
"""

# One more tracked rule, consumed by the targets: nothing else changes.
EXTRA = """

rule score:
    input:
        rules.train.output.vec,
    output:
        stats="score/seed{seed}/{lang}.json",
    shell:
        "echo '{{}}' > {output.stats}"


TARGETS += [f"score/seed{s}/{lang}.json" for s in SEEDS for lang in LANGS]
"""


def _run_toy(work: Path, snakefile: str) -> dict[int, list[dict]]:
    work.mkdir()
    (work / "Snakefile").write_text(textwrap.dedent(snakefile), encoding="utf-8")
    r = subprocess.run(
        [str(BIN / "snakemake"), "--cores", "1", "--directory", str(work)],
        cwd=work,
        env={**ENV, "PYTHONPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return {
        seed: json.loads((work / f"track/seed{seed}.json").read_text(encoding="utf-8"))
        for seed in (1, 2)
    }


def test_toy_workflow_tracks_the_jobs_with_stats_and_picks_up_a_new_rule(tmp_path: Path) -> None:
    runs = _run_toy(tmp_path / "toy", TOY)
    one = {r["job"]: r for r in runs[1]}
    assert list(one) == [
        "source/corpus",
        "model/m1",
        "sample/de",
        "sample/en",
        "train/de",
        "train/en",
    ]
    # Seed 1's own jobs, those of its sample (10), and those that depend on no seed.
    assert one["sample/de"]["stats"] == "sample/s10/de.json"
    assert one["train/en"] == {
        "job": "train/en",
        "stage": "train",
        "language": "en",
        "stats": "train/seed1/en.json",
        "benchmark": "bench/train/seed1/en.tsv",
    }
    assert one["model/m1"]["stats"] == "model/m1/build.json"
    assert one["model/m1"]["benchmark"] is None and one["model/m1"]["language"] is None
    assert {r["stats"] for r in runs[2]} >= {"sample/s20/en.json", "train/seed2/de.json"}
    assert {r["job"] for r in runs[2]} == set(one)
    # No stats output (plain), or not the producer the ruleorder picks (train_alt): absent.
    stages = {r["stage"] for rs in runs.values() for r in rs}
    assert stages == {"source", "model", "sample", "train"}
    # The track job ran after every job it mirrors.
    for rs in runs.values():
        for r in rs:
            assert (tmp_path / "toy" / r["stats"]).is_file(), r

    more = _run_toy(tmp_path / "more", TOY + EXTRA)
    jobs = [r["job"] for r in more[1]]
    assert jobs == [*one, "score/de", "score/en"]
    assert {r["stats"] for r in more[2] if r["stage"] == "score"} == {
        "score/seed2/de.json",
        "score/seed2/en.json",
    }


def test_job_names_languages_and_seed_filter() -> None:
    pair = TrackedJob("word_align", (("src", "en"), ("tgt", "de")), "a/en-de/stats.json", "b.tsv")
    assert (pair.job, pair.language) == ("word_align/en/de", "de")
    mapped = TrackedJob("map_space", (("seed", "2"), ("method", "x2s-m"), ("lang", "de")), "m.json")
    assert (mapped.job, mapped.language) == ("map_space/x2s-m/de", "de")
    sampled = TrackedJob("sample", (("sseed", "0"), ("lang", "ja")), "s.json")
    jobs = [pair, mapped, sampled]
    assert [r["job"] for r in seed_records(jobs, 1, 0)] == ["word_align/en/de", "sample/ja"]
    assert [r["job"] for r in seed_records(jobs, 2, 0)] == [j.job for j in jobs]
    assert [r["job"] for r in seed_records(jobs, 2, 2)] == [
        "word_align/en/de",
        "map_space/x2s-m/de",
    ]


# Loads the real workflow through Snakemake's API (nothing runs) and prints the records of
# the seed's MLflow run and the rules that have an output named `stats`.
LOAD = """
import json, sys
from pathlib import Path
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, ResourceSettings

snakefile, workdir, seed = sys.argv[1:4]
with SnakemakeApi() as api:
    wf = api.workflow(
        resource_settings=ResourceSettings(),
        config_settings=ConfigSettings(),
        snakefile=Path(snakefile),
        workdir=Path(workdir),
    )._workflow
    print(json.dumps({
        "records": wf.globals["track_records"](int(seed)),
        "stats_rules": sorted(r.name for r in wf.rules if hasattr(r.output, "stats")),
    }))
"""


def _dry_run_jobs(text: str) -> list[tuple[str, list[str], dict[str, str]]]:
    """(rule, outputs, wildcards) of each job a dry run lists."""
    return [
        (rule, f["output"].split(", ") if "output" in f else [], key_values(f.get("wildcards", "")))
        for rule, f in dry_run_jobs(text)
    ]


def test_embedded_default_manifest_covers_every_job_with_stats(tmp_path: Path) -> None:
    """Every job of the embedded default's DAG whose rule has a `stats` output, and that
    belongs to seed 1 (or to no seed), is in seed 1's manifest, and nothing else is."""
    (tmp_path / "load.py").write_text(LOAD, encoding="utf-8")
    r = subprocess.run(
        [sys.executable, str(tmp_path / "load.py"), str(ROOT / "Snakefile"), str(tmp_path), "1"],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    loaded = json.loads(r.stdout.strip().splitlines()[-1])
    records, stats_rules = loaded["records"], set(loaded["stats_rules"])
    assert {"sample", "teacher", "bli", "embedded_encoder"} <= stats_rules
    assert "tables" not in stats_rules and "track" not in stats_rules

    dry = subprocess.run(
        [str(BIN / "snakemake"), "-s", str(ROOT / "Snakefile"), "-n", "all"],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert dry.returncode == 0, dry.stdout + dry.stderr
    jobs = _dry_run_jobs(dry.stdout + dry.stderr)
    assert jobs
    expected = set()
    for rule, outputs, wc in jobs:
        if rule not in stats_rules:
            continue
        if wc.get("seed", "1") != "1" or wc.get("sseed", "0") != "0":
            continue
        (stats,) = [r["stats"] for r in records if r["stats"] in outputs]
        expected.add(stats)
    assert expected == {r["stats"] for r in records}
    assert {r["stage"] for r in records} == stats_rules & {rule for rule, _, _ in jobs}
    # The track job waits for them all.
    (track,) = [outputs for rule, outputs, _ in jobs if rule == "track"]
    assert track == ["results/embedded/mlflow/seed1.json"]
    names = {r["job"] for r in records}
    assert {"sample/ja", "x2static/de", "map_space/x2s-m/de", "bli/x2s-ma/de"} <= names
    assert {"embedded_encoder/multilingual-e5-small", "word_align/en/de"} <= names
    # one retrieval job per encoder, its summary covering every set
    assert "retrieve/multilingual-e5-small" in names
    assert "retrieve/multilingual-e5-small/udhr" not in names
