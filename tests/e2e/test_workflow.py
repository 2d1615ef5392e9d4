"""The workflow end to end on small configs: real Snakemake runs in a temporary directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from small_corpora import EN, JA, TL, ZH, corpus_text, turkish_raw_sentences
from snakemake_runner import planned_jobs, snakemake


@pytest.fixture(scope="module")
def udpipe_tr(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from xlalign.corpus.udpipe import train_udpipe_model, turkish_treebank_blocks

    out = tmp_path_factory.mktemp("udpipe") / "tr.udpipe"
    return train_udpipe_model(turkish_treebank_blocks(400), out)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, udpipe_tr: Path) -> Path:
    work = tmp_path_factory.mktemp("wf")
    data = work / "data"
    data.mkdir()
    for lang, sents in {"en": EN, "zh": ZH, "ja": JA, "tl": TL}.items():
        (data / f"{lang}.txt").write_text(corpus_text(sents), encoding="utf-8")
    (data / "tr.txt").write_text(corpus_text(turkish_raw_sentences(40)), encoding="utf-8")
    from tiny_encoder import make_tiny_encoder

    texts = [(data / f"{lang}.txt").read_text(encoding="utf-8") for lang in LANGS]
    make_tiny_encoder(work / "encoder", texts)
    cfg = {
        "name": "t",
        "languages": ["en", "zh", "ja", "tl", "tr"],
        "seeds": [1, 2],
        "encoder": {"source": "local", "path": str(work / "encoder")},
        "extract": {
            "layer": 1,
            "vocab": {"min_count": 2},
            "epochs": 2,
            "batch_sentences": 8,
            "subsample_t": 1e-3,
            "aggregation": {"enabled": True, "max_contexts": 3},
        },
        "corpus": {
            "max_sentences": 60,
            "sources": {
                lang: [{"type": "text", "path": f"data/{lang}.txt"}]
                for lang in ("en", "zh", "ja", "tl", "tr")
            },
        },
        "segment": {
            "udpipe": {"download": False, "fallback": "icu", "models": {"tr": str(udpipe_tr)}}
        },
        "dictionaries": {"sources": []},
        # The lexical stage has its own tests (test_workflow_lexical.py).
        "align": {"enabled": False},
        "evaluate": {"spaces": []},
    }
    (work / "config.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return work


LANGS = ("en", "zh", "ja", "tl", "tr")


def _targets(seeds=(1, 2), langs=LANGS) -> list[str]:
    return [f"results/t/corpus/s0/segment/{lang}.txt" for lang in langs] + [
        f"results/t/mlflow/seed{s}.json" for s in seeds
    ]


@pytest.mark.slow
def test_run_segment_tools_tracking_and_rerun(project: Path) -> None:
    snakemake(project, "--configfile", "config.yaml", "--cores", "4", *_targets())
    seg = project / "results/t/corpus/s0/segment"
    tools = {
        lang: json.loads((seg / f"{lang}.json").read_text())["tool"]
        for lang in ("en", "zh", "ja", "tl", "tr")
    }
    assert tools["en"] == "icu" and tools["tl"] == "icu"
    assert tools["zh"] == "icu+jieba" and tools["ja"].startswith("icu+fugashi")
    assert tools["tr"].startswith("udpipe")
    en_stats = json.loads((seg / "en.json").read_text())
    assert (
        en_stats["requested_tool"] == "udpipe" and "no UDPipe model" in en_stats["fallback_reason"]
    )
    for lang in ("en", "zh", "ja", "tl", "tr"):
        lines = (seg / f"{lang}.txt").read_text(encoding="utf-8").splitlines()
        assert lines and all(len(line.split(" ")) >= 7 for line in lines), lang
        assert all(line == line.strip() and "  " not in line for line in lines)
    # Each document ends with a one-sentence paragraph: the paragraph filter counts them.
    assert en_stats["dropped_single_sentence_paragraph"] > 0

    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{project / 'results/mlflow.db'}")
    exp = client.get_experiment_by_name("xlalign/t")
    runs = client.search_runs([exp.experiment_id], max_results=1000)
    parents = [r for r in runs if r.data.tags.get("xlalign.kind") == "parent"]
    children = [r for r in runs if r.data.tags.get("xlalign.kind") == "job"]
    assert sorted(r.data.tags["xlalign.seed"] for r in parents) == ["1", "2"]
    # seeds x languages x (sample, segment, vocab, teacher, x2static, aggregate)
    assert len(children) == 2 * 5 * 6
    x2s = next(
        r
        for r in children
        if r.data.tags["xlalign.job"] == "x2static/ja" and r.data.tags["xlalign.seed"] == "2"
    )
    assert len(client.get_metric_history(x2s.info.run_id, "curve.epoch_loss")) == 2
    for seed in (1, 2):
        for method in ("x2s-m", "aggregate"):
            from xlalign.static.vectors import read_vec

            words, vecs = read_vec(project / f"results/t/static/seed{seed}/{method}/en.vec")
            assert vecs.shape[1] == 32 and len(words) > 10
    seg_tr = next(
        r
        for r in children
        if r.data.tags["xlalign.job"] == "segment/tr" and r.data.tags["xlalign.seed"] == "2"
    )
    assert seg_tr.data.params["tool"].startswith("udpipe")
    assert seg_tr.data.metrics["sentences_out"] > 0
    assert "bench.s" in seg_tr.data.metrics
    assert parents[0].data.tags["xlalign.config_hash"]
    assert parents[0].data.tags["xlalign.git_revision"]

    # Nothing to do the second time; forcing the mirror again adds no run.
    assert planned_jobs(snakemake(project, "--configfile", "config.yaml", "-n", *_targets())) == {}
    # (targets first: --forcerun takes every following word as a rule name)
    snakemake(
        project, *_targets(), "--configfile", "config.yaml", "--cores", "4", "--forcerun", "track"
    )
    assert len(client.search_runs([exp.experiment_id], max_results=1000)) == len(runs)

    # One language's segmented file as the target: only its own job re-runs.
    (seg / "zh.txt").unlink()
    plan = planned_jobs(
        snakemake(
            project, "--configfile", "config.yaml", "-n", "results/t/corpus/s0/segment/zh.txt"
        )
    )
    assert plan == {"segment": 1}


@pytest.mark.slow
def test_fresh_target_runs_only_its_chain(project: Path, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "data").symlink_to(project / "data")
    (fresh / "config.yaml").write_text((project / "config.yaml").read_text())
    plan = planned_jobs(
        snakemake(fresh, "--configfile", "config.yaml", "-n", "results/t/corpus/s0/segment/ja.txt")
    )
    assert plan == {"sample": 1, "segment": 1}


@pytest.mark.slow
def test_bad_config_fails_before_any_job(project: Path, tmp_path: Path) -> None:
    bad = yaml.safe_load((project / "config.yaml").read_text())
    bad["languages"].append("xx")
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(bad))
    r = snakemake(tmp_path, "--configfile", "bad.yaml", "--cores", "1", check=False)
    assert r.returncode != 0
    assert "languages[5]" in r.stderr and "'xx'" in r.stderr
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_failed_job_leaves_no_finished_output(project: Path, tmp_path: Path) -> None:
    work = tmp_path / "w"
    (work / "data").mkdir(parents=True)
    (work / "data" / "tl.txt").write_bytes(b"Magandang umaga sa inyong lahat. \xff\xfe sira\n")
    cfg = yaml.safe_load((project / "config.yaml").read_text())
    cfg["languages"] = ["tl"]
    cfg["corpus"]["sources"] = {"tl": [{"type": "text", "path": "data/tl.txt"}]}
    cfg["segment"]["udpipe"]["models"] = {}
    (work / "config.yaml").write_text(yaml.safe_dump(cfg))
    r = snakemake(
        work,
        "--configfile",
        "config.yaml",
        "--cores",
        "1",
        "results/t/corpus/s0/segment/tl.txt",
        check=False,
    )
    assert r.returncode != 0
    assert not (work / "results/t/corpus/s0/sample/tl.txt").exists()
    assert not list((work / "results/t/corpus/s0/sample").glob("*tl*"))  # no temp files either
    log = (work / "logs/t/sample/s0/tl.log").read_text(encoding="utf-8")
    assert "invalid UTF-8" in log and "data/tl.txt" in log and "'tl'" in log
