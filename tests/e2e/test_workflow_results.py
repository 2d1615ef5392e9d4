"""The results stage of the embedded default end to end (the shrunk run of e2e/conftest.py):
the statistics tables with their tests, the figures, and their MLflow parent run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from snakemake_runner import embedded_config

RES = "results/embedded"
ENCODER = "multilingual-e5-small"


@pytest.fixture(scope="module")
def run(embedded_run: Path) -> Path:
    return embedded_run


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.slow
def test_statistics_tables_and_their_tests(run: Path) -> None:
    cfg = embedded_config()
    stats = _read(run / f"{RES}/tables/statistics.json")
    tables = stats["tables"]
    assert set(tables) == {
        "table1_statistics",
        "table3_statistics",
        "table3_pvalues",
        "table002_std",
    }
    runs = cfg["pretrain"]["runs"]
    assert tables["table3_statistics"]["rows"] == [ENCODER, *runs]
    tests = [t for t in tables["table3_statistics"]["tests"] if t["language"] == "all"]
    columns = tables["table3_statistics"]["columns"][:-1]  # all but avg
    pairs = {(t["model"], t["baseline"], t["column"]) for t in tests}
    # Every checkpoint against the original encoder, the alignment rows against +MLM too.
    want = {(r, ENCODER, c) for r in runs for c in columns}
    want |= {(r, "mlm", c) for r in runs if r != "mlm" for c in columns}
    assert pairs == want
    for t in tables["table3_statistics"]["tests"]:
        assert 0 < t["p"] <= 1 and t["p"] <= t["p_adjusted"] <= 1, t
    names = {t["test"].split(" (")[0] for t in tests}
    assert names == {"paired t-test", "approximate randomisation", "paired bootstrap"}
    # BLI: each space against the aggregation baseline, per direction.
    bli = tables["table1_statistics"]["tests"]
    assert {(t["baseline"], t["column"]) for t in bli if t["language"] == "all"} == {
        ("aggregate", "en→xx"),
        ("aggregate", "xx→en"),
    }
    assert {t["model"] for t in bli} == {"x2s-m", "x2s-ma", "aggregate-a"}
    # The schema's default (config.yaml leaves `results` out).
    assert stats["settings"]["iterations"] == 1000 and "results" not in cfg
    for stem in tables:
        tex = (run / f"{RES}/tables/{stem}.tex").read_text(encoding="utf-8")
        assert "\\toprule" in tex and "\\bottomrule" in tex
    page = (run / f"{RES}/tables/statistics.html").read_text(encoding="utf-8")
    assert "<table" in page and "Holm" in page


@pytest.mark.slow
def test_same_inputs_same_pvalues(run: Path, tmp_path: Path) -> None:
    """The statistics job again on the run's files: the very same p-values (seeded)."""
    from xlalign.reporting.statistics import run_statistics

    cfg = embedded_config()
    res = run / RES
    kw = {
        "runs": sorted(res.glob("zeroshot/*/*-gold/ft*.json")),
        "retrieval": sorted(res.glob("zeroshot/*/retrieval/*.json")),
        "bli": sorted(res.glob("eval/seed*/bli/*/*.json")),
        "encoders": [ENCODER, *(f"{r}.s1" for r in cfg["pretrain"]["runs"])],
        "base_encoder": ENCODER,
        "pretrain_runs": cfg["pretrain"]["runs"],
        "tasks": list(cfg["zeroshot"]["tasks"]),
        "retrieval_sets": cfg["zeroshot"]["retrieval"]["sets"],
        "spaces": ["x2s-m", "x2s-ma", "aggregate", "aggregate-a"],
        "bli_baseline": "aggregate",
    }
    again = run_statistics(md_path=tmp_path / "s.md", summary_path=tmp_path / "s.json", **kw)
    first = _read(res / "tables/statistics.json")
    for name in ("table1_statistics", "table3_statistics"):
        key = lambda t: (t["model"], t["baseline"], t["column"], t["language"])  # noqa: E731
        assert sorted(again["tables"][name]["tests"], key=key) == sorted(
            first["tables"][name]["tests"], key=key
        )


@pytest.mark.slow
def test_figures(run: Path) -> None:
    cfg = embedded_config()
    plots = run / f"{RES}/plots"
    index = _read(plots / "figures.json")
    want = {"bli_per_language", "pretrain_loss_curves"}
    want |= {f"retrieval_layers_{s}" for s in cfg["zeroshot"]["retrieval"]["sets"]}
    want |= {f"zeroshot_deltas_{t}" for t in cfg["zeroshot"]["tasks"]}
    assert set(index) == want
    for name in index:
        assert (plots / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (plots / f"{name}.svg").read_text(encoding="utf-8").lstrip().startswith("<?xml")


@pytest.mark.slow
def test_aggregates_in_mlflow(run: Path) -> None:
    from mlflow.tracking import MlflowClient

    summary = _read(run / f"{RES}/mlflow/aggregates.json")
    client = MlflowClient(f"sqlite:///{run / 'results/mlflow.db'}")
    parent = client.get_run(summary["run_id"])
    assert parent.data.tags["xlalign.seed"] == "all"
    assert parent.data.tags["xlalign.kind"] == "parent"
    metrics = parent.data.metrics
    assert summary["metrics"] == len(metrics) > 0
    key = f"table3_statistics.{ENCODER}.POS _gold_ WSJ _ UD_ _accuracy_.mean"  # MLflow-safe
    zs = _read(run / f"{RES}/tables/zeroshot.json")
    assert metrics[key] == pytest.approx(
        zs["tables"]["summary"]["values"][ENCODER]["POS (gold, WSJ → UD) (accuracy)"]
    )
    folders = {f.path for f in client.list_artifacts(parent.info.run_id)}
    assert folders == {"plots", "tables", "figures"}  # figures: issue 17's analyses
    analyses = {f.path for f in client.list_artifacts(parent.info.run_id, "figures")}
    # issue 26's learning curve beside issue 17's analyses
    assert analyses == {
        "figures/derived",
        "figures/metapretrain",
        "figures/analysis",
        "figures/learning_curve",
    }
    # the analyses' summaries as metrics: 001's correlation, Tables 1-2, ρ by layer
    assert "derived.spearman.pos-gold.n" in metrics
    assert any(k.startswith("derived.dictionary.") for k in metrics)
    assert any(k.startswith("analysis.spearman_layer.pos-gold.") for k in metrics)
    pngs = {f.path for f in client.list_artifacts(parent.info.run_id, "plots")}
    assert "plots/pretrain_loss_curves.png" in pngs


@pytest.mark.slow
def test_learning_curve_scores_each_size_and_the_full_corpus(run: Path) -> None:
    cfg = embedded_config()["learning_curve"]
    seed = embedded_config()["seeds"][0]
    for lang in cfg["languages"]:
        summary = _read(run / f"{RES}/learning_curve/seed{seed}/{lang}.json")
        rows = summary["rows"]
        fractions = sorted({r["fraction"] for r in rows})
        assert fractions == sorted([*cfg["fractions"], 1.0])
        assert {r["method"] for r in rows} == {"x2s-m-embedded", "aggregate-embedded"}
        sizes = [r["sentences"][lang] for r in rows if r["method"] == "x2s-m-embedded"]
        assert sizes == sorted(sizes) and len(set(sizes)) == len(sizes)  # nested, growing
        assert (run / f"{RES}/figures/learning_curve/seed{seed}/{lang}.png").stat().st_size > 0
