"""MLflow mirroring: parents and children, idempotent re-runs, concurrent writers."""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path

import pytest

mlflow = pytest.importorskip("mlflow")
from mlflow.tracking import MlflowClient  # noqa: E402

from xlalign.workflow.tracking import JobRecord, mirror, read_benchmark, split_stats  # noqa: E402


def _write(path: Path, obj: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def _mirror(tmp: Path, seed: int, records: list[JobRecord], config_hash: str = "abc123") -> dict:
    return mirror(
        records,
        uri=f"sqlite:///{tmp / 'mlflow.db'}",
        experiment="xlalign/test",
        artifact_location=tmp / "artifacts",
        parent_name=f"test/seed{seed}",
        parent_tags={"config_hash": config_hash, "seed": str(seed), "languages": "en,de"},
        parent_params={"seed": seed, "languages": "en,de"},
        summary_path=tmp / f"summary{seed}.json",
    )


def _runs(tmp: Path) -> list:
    client = MlflowClient(f"sqlite:///{tmp / 'mlflow.db'}")
    exp = client.get_experiment_by_name("xlalign/test")
    return client.search_runs([exp.experiment_id], max_results=1000)


def test_split_stats() -> None:
    metrics, params, curves = split_stats(
        {
            "language": "de",
            "sentences_out": 12,
            "per_filter": {"short": 3, "single": 1},
            "tool": None,
            "ok": True,
            "rate": float("nan"),
            "sources": [{"type": "bible"}],
            "curves": {"loss": [3, 2.5, 2]},
        }
    )
    assert metrics == {"sentences_out": 12.0, "per_filter.short": 3.0, "per_filter.single": 1.0}
    assert params["language"] == "de" and params["ok"] == "True" and params["tool"] == "None"
    assert json.loads(params["sources"]) == [{"type": "bible"}]
    assert curves == {"curve.loss": [3.0, 2.5, 2.0]}


def test_split_stats_leaves_per_example_bli_data_in_the_file() -> None:
    rec = {"results": {"en-de": {"queries": "a b", "csls": {"p@1": 0.5, "hits@1": "10"}}}}
    metrics, params, _ = split_stats(rec)
    assert metrics == {"results.en-de.csls.p_1": 0.5}
    assert params == {}


def test_read_benchmark(tmp_path: Path) -> None:
    b = tmp_path / "b.tsv"
    b.write_text("s\th:m:s\tmax_rss\tmean_load\n1.5\t0:00:01\t120.3\tNA\n", encoding="utf-8")
    assert read_benchmark(b) == {"bench.s": 1.5, "bench.max_rss": 120.3}


def test_parent_children_and_idempotent_rerun(tmp_path: Path) -> None:
    s_en = _write(tmp_path / "sample" / "en.json", {"language": "en", "paragraphs_out": 10})
    s_de = _write(tmp_path / "sample" / "de.json", {"language": "de", "paragraphs_out": 7})
    recs = [
        JobRecord("sample/en", "sample", s_en, "en"),
        JobRecord("sample/de", "sample", s_de, "de"),
    ]
    first = _mirror(tmp_path, 1, recs)
    assert first["parent_created"] is True
    runs = _runs(tmp_path)
    assert len(runs) == 3
    children = [r for r in runs if r.data.tags.get("xlalign.kind") == "job"]
    parent = next(r for r in runs if r.data.tags.get("xlalign.kind") == "parent")
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parent.info.run_id}
    by_job = {c.data.tags["xlalign.job"]: c for c in children}
    assert by_job["sample/de"].data.metrics["paragraphs_out"] == 7
    assert by_job["sample/de"].data.tags["xlalign.language"] == "de"
    assert by_job["sample/de"].data.tags["xlalign.stage"] == "sample"
    assert parent.data.tags["xlalign.seed"] == "1"

    # Same files again: nothing new.
    second = _mirror(tmp_path, 1, recs)
    assert second["parent_created"] is False
    assert {v["action"] for v in second["children"].values()} == {"unchanged"}
    assert len(_runs(tmp_path)) == 3

    # One job re-ran with new numbers: its child is replaced, not duplicated.
    _write(s_de, {"language": "de", "paragraphs_out": 8})
    third = _mirror(tmp_path, 1, recs)
    assert third["children"]["sample/de"]["action"] == "replaced"
    active = _runs(tmp_path)
    assert len(active) == 3
    de = [r for r in active if r.data.tags.get("xlalign.job") == "sample/de"]
    assert len(de) == 1 and de[0].data.metrics["paragraphs_out"] == 8

    # Another config hash is another parent.
    _mirror(tmp_path, 1, recs, config_hash="other")
    assert len(_runs(tmp_path)) == 6


def test_curves_become_metric_history(tmp_path: Path) -> None:
    s = _write(tmp_path / "x.json", {"curves": {"loss": [4.0, 3.0, 2.5]}, "epochs": 3})
    summary = _mirror(tmp_path, 1, [JobRecord("extract/en", "extract", s, "en")])
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    rid = summary["children"]["extract/en"]["run_id"]
    hist = client.get_metric_history(rid, "curve.loss")
    assert [(m.step, m.value) for m in sorted(hist, key=lambda m: m.step)] == [
        (0, 4.0),
        (1, 3.0),
        (2, 2.5),
    ]


def _worker(args: tuple[str, int]) -> str:
    tmp, seed = args
    tmp_path = Path(tmp)
    recs = []
    for i in range(15):
        s = _write(tmp_path / f"seed{seed}" / f"job{i}.json", {"value": i * seed, "lang": "en"})
        recs.append(JobRecord(f"job/{i}", "segment", s, "en"))
    return _mirror(tmp_path, seed, recs)["parent_run_id"]


def test_concurrent_writers_do_not_corrupt_or_duplicate(tmp_path: Path) -> None:
    ctx = mp.get_context("spawn")
    with ctx.Pool(4) as pool:
        parents = pool.map(_worker, [(str(tmp_path), s) for s in (1, 2, 3, 4, 1, 2, 3, 4)])
    assert len(set(parents)) == 4  # the same seed found its parent again
    runs = _runs(tmp_path)
    assert len(runs) == 4 + 4 * 15
    for r in runs:
        if r.data.tags.get("xlalign.kind") == "job":
            seed = int(r.data.tags["xlalign.seed"])
            i = int(r.data.tags["xlalign.job"].split("/")[1])
            assert r.data.metrics["value"] == i * seed


def test_aggregates_on_their_own_parent_with_artifacts(tmp_path: Path) -> None:
    from xlalign.workflow.tracking import aggregate_metrics, mirror_aggregates

    stats = _write(
        tmp_path / "statistics.json",
        {
            "tables": {
                "table3_statistics": {
                    "cells": {
                        "mlm": {
                            "POS (accuracy)": {
                                "mean": 71.0,
                                "sd_pretrain": 0.5,
                                "sd_finetune": None,
                                "n_pretrain": 2,
                                "n_finetune": 1,
                            }
                        }
                    },
                    "tests": [
                        {
                            "model": "mlm",
                            "baseline": "e5",
                            "column": "POS (accuracy)",
                            "language": "all",
                            "difference": -1.0,
                            "p": 0.01,
                            "p_adjusted": 0.02,
                        },
                        {  # per-language tests stay in the files
                            "model": "mlm",
                            "baseline": "e5",
                            "column": "POS (accuracy)",
                            "language": "de",
                            "difference": -2.0,
                            "p": 0.2,
                            "p_adjusted": 0.4,
                        },
                    ],
                }
            }
        },
    )
    # MLflow names: characters outside [A-Za-z0-9_-. /:] become "_".
    want = {
        "table3_statistics.mlm.POS _accuracy_.mean": 71.0,
        "table3_statistics.mlm.POS _accuracy_.sd_pretrain": 0.5,
        "table3_statistics.mlm.POS _accuracy_.n_pretrain": 2.0,
        "table3_statistics.mlm.POS _accuracy_.n_finetune": 1.0,
        "test.table3_statistics.mlm_vs_e5.POS _accuracy_.difference": -1.0,
        "test.table3_statistics.mlm_vs_e5.POS _accuracy_.p": 0.01,
        "test.table3_statistics.mlm_vs_e5.POS _accuracy_.p_adj": 0.02,
    }
    assert aggregate_metrics(json.loads(stats.read_text())) == want
    plots = tmp_path / "plots"
    _write(plots / "figures.json", {})
    (plots / "a.png").write_bytes(b"\x89PNG")

    def run() -> dict:
        return mirror_aggregates(
            statistics=stats,
            artifacts={"plots": plots, "tables": stats, "absent": tmp_path / "none"},
            uri=f"sqlite:///{tmp_path / 'mlflow.db'}",
            experiment="xlalign/test",
            artifact_location=tmp_path / "artifacts",
            parent_name="test/all-seeds",
            parent_tags={"config_hash": "abc123", "config_name": "test"},
            summary_path=tmp_path / "aggregates.json",
        )

    first = run()
    assert first["artifacts"] == ["plots", "tables"] and first["metrics"] == len(want)
    _mirror(tmp_path, 1, [])  # a per-seed parent beside it
    second = run()
    assert second["run_id"] == first["run_id"]  # found again, not duplicated
    runs = _runs(tmp_path)
    agg = [r for r in runs if r.data.tags.get("xlalign.seed") == "all"]
    assert len(agg) == 1 and agg[0].data.tags["xlalign.kind"] == "parent"
    assert agg[0].data.metrics["test.table3_statistics.mlm_vs_e5.POS _accuracy_.p_adj"] == 0.02
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    files = {f.path for f in client.list_artifacts(agg[0].info.run_id, "plots")}
    assert files == {"plots/a.png", "plots/figures.json"}


def test_analyses_metrics_from_the_summaries() -> None:
    """Issue 17's summaries as MLflow metrics: table cells, the Spearman correlation of
    alignment and transfer, the best AER layer; missing or non-finite values left out."""
    from xlalign.workflow.tracking import analyses_metrics

    derived = {
        "table": {
            "cells": {
                "align-mlm.trans+inv": {"pos-gold Δ": {"mean": 3.5, "std": None}, "seeds": 1},
                "mlm.trans+inv": {"Alignment": {"mean": None}},
            }
        },
        "correlations": {"pos-gold": {"rho": -0.5, "p_value": 0.2, "n": 8}},
        "sweeps": {"dictionary": {"cells": {"50 %": {"pos-gold Δ align-mlm": {"mean": 1.5}}}}},
    }
    analysis = {
        "best_aer": {"e5": {"ot": {"layer": 6, "aer": 0.037, "last_layer_aer": float("nan")}}},
        "alignment_transfer": {
            "pos-gold": [
                {"layer": 0, "rho": None, "p_value": None, "n": 2},
                {"layer": 1, "rho": 0.4, "p_value": 0.6, "n": 4},
            ]
        },
    }
    got = analyses_metrics({"derived": derived, "analysis": analysis})
    assert got == {
        "derived.align-mlm.trans_inv.pos-gold _.mean": 3.5,
        "derived.dictionary.50 _.pos-gold _ align-mlm.mean": 1.5,
        "derived.spearman.pos-gold.rho": -0.5,
        "derived.spearman.pos-gold.p": 0.2,
        "derived.spearman.pos-gold.n": 8.0,
        "analysis.best_aer.e5.ot.layer": 6.0,
        "analysis.best_aer.e5.ot.aer": 0.037,
        "analysis.spearman_layer.pos-gold.0.n": 2.0,
        "analysis.spearman_layer.pos-gold.1.rho": 0.4,
        "analysis.spearman_layer.pos-gold.1.p": 0.6,
        "analysis.spearman_layer.pos-gold.1.n": 4.0,
    }
