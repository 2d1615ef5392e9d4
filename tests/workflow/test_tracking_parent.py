"""MLflow as its users expect (issue 27): the experiment is a model-training one, and each
parent run carries its seed's key metrics and the configuration as params."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

mlflow = pytest.importorskip("mlflow")
from mlflow.tracking import MlflowClient  # noqa: E402

from xlalign.workflow.tracking import (  # noqa: E402
    EXPERIMENT_KIND,
    EXPERIMENT_KIND_TAG,
    JobRecord,
    config_params,
    key_metrics,
    mirror,
    mirror_aggregates,
)

SPACES = ("x2s-m", "aggregate")
LANGS = ("de", "ru")
ENCODERS = ("e5", "mlm.s1")


def _write(path: Path, obj: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def _p1(seed: int, space: str, lang: str, direction: int) -> float:
    """A made-up P@1 that differs by seed, space, language and direction."""
    return round(0.2 + 0.05 * seed + 0.1 * SPACES.index(space) + 0.03 * LANGS.index(lang)
                 + 0.01 * direction, 4)  # fmt: skip


def results_tree(root: Path, seed: int) -> list[JobRecord]:
    """The files of one seed's BLI, fine-tuning and retrieval jobs, shaped as the jobs
    write them (xlalign.evaluation.bli, xlalign.evaluation.tasks.run), and their records."""
    recs = []
    for space in SPACES:
        for lang in LANGS:
            results = {
                pair: {
                    r: {"p@1": _p1(seed, space, lang, i) - (r == "nn") * 0.05, "p@5": 0.9}
                    for r in ("nn", "csls")
                }
                for i, pair in enumerate((f"en-{lang}", f"{lang}-en"))
            }
            rec = {"space": space, "seed": seed, "language": lang, "hub": "en", "results": results}
            path = _write(root / f"eval/seed{seed}/bli/{space}/{lang}.json", rec)
            recs.append(JobRecord(f"bli/{space}/{lang}", "bli", path, lang))
    for enc in ENCODERS:
        for task, per in (("pos-gold", {"he": 60.0, "tr": 70.0}), ("ner-gold", {"he": 20.0})):
            shift = 5.0 * ENCODERS.index(enc)
            per = {k: v + shift for k, v in per.items()}
            rec = {
                "task": task,
                "encoder": enc,
                "seed": 1,
                "scores": {k: {"accuracy": v} for k, v in per.items()},
                "summary": {"metric": "accuracy", "english": 90.0, "per_language": per},
            }
            path = _write(root / f"zeroshot/{enc}/{task}/ft1.json", rec)
            recs.append(JobRecord(f"finetune/{enc}/{task}/1", "finetune", path))
        udhr = {
            "set": "udhr",
            "encoder": enc,
            "layer": 8,
            "languages": {
                "de": {"accuracy": {"en->xx": 90.0, "xx->en": 80.0}},
                "tr": {"accuracy": {"en->xx": 70.0 - shift, "xx->en": 60.0}},
            },
        }
        path = _write(
            root / f"zeroshot/{enc}/retrieval.json", {"encoder": enc, "sets": {"udhr": udhr}}
        )
        recs.append(JobRecord(f"retrieve/{enc}", "retrieve", path))
    # a job whose stats are no key result: a child only
    path = _write(root / "corpus/s1/sample/de.json", {"language": "de", "paragraphs_out": 7})
    recs.append(JobRecord("sample/de", "sample", path, "de"))
    return recs


CONFIG = {
    "name": "test",
    "languages": ["en", "de", "ru"],
    "encoder": {"name": "e5", "source": "embedded"},
    "corpus": {"per_language": {}, "max_sentences": 1000, "url": "https://u:secret@h/x"},
    "evaluate": {"tables": {"metric": "p@1", "retrieval": "csls"}},
    "zeroshot": {"tasks": {"pos-gold": {"languages": ["he", "tr"]}}},
    "long": ["w" * 50] * 200,
    **{f"k{i:03d}": i for i in range(120)},  # more than 100 params: batched
}


def _mirror(
    tmp: Path,
    seed: int,
    config: dict | None = None,
    records: list[JobRecord] | None = None,
    **kw: Any,
) -> dict:
    return mirror(
        records if records is not None else results_tree(tmp / "results", seed),
        uri=f"sqlite:///{tmp / 'mlflow.db'}",
        experiment="xlalign/test",
        artifact_location=tmp / "artifacts",
        parent_name=f"test/seed{seed}",
        parent_tags={"config_hash": kw.pop("config_hash", "abc123"), "seed": str(seed)},
        parent_params={"seed": seed, **config_params(config or CONFIG)},
        summary_path=tmp / f"summary{seed}.json",
        **kw,
    )


def _client(tmp: Path) -> MlflowClient:
    return MlflowClient(f"sqlite:///{tmp / 'mlflow.db'}")


def _parents(tmp: Path) -> list:
    client = _client(tmp)
    exp = client.get_experiment_by_name("xlalign/test")
    return client.search_runs(
        [exp.experiment_id], filter_string="tags.`xlalign.kind` = 'parent'", max_results=100
    )


def test_config_params_flat_sorted_limited_and_masked() -> None:
    params = config_params(CONFIG)
    assert list(params) == sorted(params)
    assert params["encoder.name"] == "e5"
    assert params["languages"] == '["en", "de", "ru"]'
    assert params["zeroshot.tasks.pos-gold.languages"] == '["he", "tr"]'
    assert params["corpus.per_language"] == "{}"
    assert params["corpus.url"] == "https://u:***@h/x"
    assert len(params["long"]) == 6000
    assert params == config_params(json.loads(json.dumps(CONFIG)))  # deterministic


def test_key_metrics_from_the_files_the_tables_read(tmp_path: Path) -> None:
    got = key_metrics(results_tree(tmp_path, 2))
    bli = {k: v for k, v in got.items() if k.startswith("bli.")}
    # spaces x languages x both directions, the tables' retrieval (CSLS) only
    assert len(bli) == 2 * 2 * 2
    assert bli["bli.x2s-m.en-de.csls.p_1"] == pytest.approx(0.3)
    assert bli["bli.aggregate.ru-en.csls.p_1"] == pytest.approx(0.2 + 0.1 + 0.1 + 0.03 + 0.01)
    zs = {k: v for k, v in got.items() if k.startswith("zeroshot.")}
    # the summary table's cells: mean over test languages; retrieval en->xx; the average
    assert zs == {
        "zeroshot.e5.ner-gold.f1": 20.0,
        "zeroshot.e5.pos-gold.accuracy": 65.0,
        "zeroshot.e5.udhr.acc_1": 80.0,
        "zeroshot.e5.avg": pytest.approx((20 + 65 + 80) / 3),
        "zeroshot.mlm.s1.ner-gold.f1": 25.0,
        "zeroshot.mlm.s1.pos-gold.accuracy": 70.0,
        "zeroshot.mlm.s1.udhr.acc_1": 77.5,
        "zeroshot.mlm.s1.avg": pytest.approx((25 + 70 + 77.5) / 3),
    }
    other = key_metrics(results_tree(tmp_path, 2), retrieval="nn")
    assert other["bli.x2s-m.en-de.nn.p_1"] == pytest.approx(0.25)


def test_new_experiment_is_a_training_one_and_parents_carry_metrics_and_params(
    tmp_path: Path,
) -> None:
    n_params = len(config_params(CONFIG)) + 1  # and the seed
    assert n_params > 100  # over MLflow's limit of params in one batch
    for seed in (1, 2):
        summary = _mirror(tmp_path, seed)
        assert summary["parent_created"] is True
        assert summary["parent_params"] == {"logged": n_params, "total": n_params}
    exp = _client(tmp_path).get_experiment_by_name("xlalign/test")
    assert exp.tags[EXPERIMENT_KIND_TAG] == EXPERIMENT_KIND == "custom_model_development"
    parents = {p.data.tags["xlalign.seed"]: p for p in _parents(tmp_path)}
    assert set(parents) == {"1", "2"}
    want = key_metrics(results_tree(tmp_path / "again", 2))
    assert parents["2"].data.metrics == want
    assert parents["1"].data.metrics["bli.x2s-m.en-de.csls.p_1"] == pytest.approx(0.25)
    assert parents["2"].data.params == {"seed": "2", **config_params(CONFIG)}


def test_existing_experiment_gets_the_kind_tag(tmp_path: Path) -> None:
    client = _client(tmp_path)
    old = client.create_experiment("xlalign/test", artifact_location=tmp_path.as_uri())
    assert EXPERIMENT_KIND_TAG not in client.get_experiment(old).tags  # an older xlalign's
    _mirror(tmp_path, 1)
    assert client.get_experiment(old).tags[EXPERIMENT_KIND_TAG] == EXPERIMENT_KIND
    # the aggregates' run tags it too, and a user's other tags stay
    client.delete_experiment_tag(old, EXPERIMENT_KIND_TAG)
    client.set_experiment_tag(old, "team", "nlp")
    stats = _write(tmp_path / "statistics.json", {"tables": {}})
    mirror_aggregates(
        statistics=stats,
        artifacts={},
        uri=f"sqlite:///{tmp_path / 'mlflow.db'}",
        experiment="xlalign/test",
        artifact_location=tmp_path / "artifacts",
        parent_name="test/all-seeds",
        parent_tags={"config_hash": "abc123"},
        summary_path=tmp_path / "aggregates.json",
    )
    tags = client.get_experiment(old).tags
    assert tags[EXPERIMENT_KIND_TAG] == EXPERIMENT_KIND and tags["team"] == "nlp"


def test_rerun_is_idempotent(tmp_path: Path) -> None:
    recs = results_tree(tmp_path / "results", 1)
    first = _mirror(tmp_path, 1, records=recs)
    client = _client(tmp_path)
    second = _mirror(tmp_path, 1, records=recs)
    assert second["parent_run_id"] == first["parent_run_id"]
    assert second["parent_created"] is False and "parent_replaced" not in second
    assert second["parent_params"]["logged"] == 0
    assert second["parent_metrics"] == {"logged": 0, "total": first["parent_metrics"]["total"]}
    assert {c["action"] for c in second["children"].values()} == {"unchanged"}
    # no second value in any metric's history
    hist = client.get_metric_history(first["parent_run_id"], "bli.x2s-m.en-de.csls.p_1")
    assert len(hist) == 1
    assert len(_parents(tmp_path)) == 1

    # a job re-ran with a new number: the parent's metric follows the file
    path = tmp_path / "results/eval/seed1/bli/x2s-m/de.json"
    rec = json.loads(path.read_text())
    rec["results"]["en-de"]["csls"]["p@1"] = 0.5
    _write(path, rec)
    third = _mirror(tmp_path, 1, records=recs)
    assert third["parent_metrics"]["logged"] == 1
    assert third["children"]["bli/x2s-m/de"]["action"] == "replaced"
    [parent] = _parents(tmp_path)
    assert parent.data.metrics["bli.x2s-m.en-de.csls.p_1"] == 0.5


def test_params_the_parent_lacks_are_added(tmp_path: Path) -> None:
    small = {"name": "test", "encoder": {"name": "e5"}}
    _mirror(tmp_path, 1, config=small)
    summary = _mirror(tmp_path, 1, config={**small, "added": {"key": 3}})
    assert "parent_replaced" not in summary and summary["parent_params"]["logged"] == 1
    [parent] = _parents(tmp_path)
    assert parent.data.params["added.key"] == "3"


def test_parent_with_other_param_values_is_replaced_with_its_children(tmp_path: Path) -> None:
    """A store of an older xlalign (``languages`` was ``en,de,ru``), or any parent whose
    logged params differ: MLflow cannot change a param, so a new parent takes the children
    and the old one is deleted (recoverable in the UI's deleted runs)."""
    old = _mirror(tmp_path, 1, config={**CONFIG, "languages": "en,de,ru"})
    new = _mirror(tmp_path, 1)
    assert new["parent_replaced"] == {
        "old_run_id": old["parent_run_id"],
        "changed_params": ["languages"],
    }
    assert new["parent_run_id"] != old["parent_run_id"]
    client = _client(tmp_path)
    assert client.get_run(old["parent_run_id"]).info.lifecycle_stage == "deleted"
    [parent] = _parents(tmp_path)
    assert parent.info.run_id == new["parent_run_id"]
    assert parent.data.params["languages"] == '["en", "de", "ru"]'
    assert parent.data.metrics == key_metrics(results_tree(tmp_path / "again", 1))
    children = client.search_runs(
        [parent.info.experiment_id], filter_string="tags.`xlalign.kind` = 'job'"
    )
    assert len(children) == len(results_tree(tmp_path / "again", 1))
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {new["parent_run_id"]}
    # the children were kept, not mirrored again
    assert {c["action"] for c in new["children"].values()} == {"unchanged"}
    # and the next run finds the new parent
    assert "parent_replaced" not in _mirror(tmp_path, 1)


def test_key_metrics_view_of_the_runs_table(tmp_path: Path) -> None:
    """The saved view the UI's "Views" menu lists (and ``summary["ui_path"]`` opens): the
    parents, their seed and encoder, then the key metrics, zero-shot first."""
    from xlalign.workflow.tracking import VIEW_ID, VIEW_TAG_PREFIX, key_metrics_view

    summary = _mirror(tmp_path, 1)
    assert summary["ui_path"] == (
        f"#/experiments/{summary['experiment_id']}/runs?workflowType=machine_learning"
        f"&viewStateShareKey={VIEW_ID}"
    )
    client = _client(tmp_path)
    exp_id = summary["experiment_id"]
    envelope = json.loads(client.get_experiment(exp_id).tags[VIEW_TAG_PREFIX + VIEW_ID])
    assert isinstance(envelope["name"], str) and isinstance(envelope["createdAt"], int)
    state = json.loads(envelope["state"])
    assert state["searchFilter"] == "tags.`xlalign.kind` = 'parent'"
    cols = state["selectedColumns"]
    metrics = key_metrics(results_tree(tmp_path / "again", 1))
    assert cols[:3] == ["params.`seed`", "params.`encoder.name`", "metrics.`zeroshot.e5.avg`"]
    assert sorted(cols[2:]) == sorted(f"metrics.`{m}`" for m in metrics)
    assert state["columnOrder"] == cols and set(state["columnWidths"]) == set(cols)
    # unchanged metrics: the tag is not written again; another configuration's widen it
    assert key_metrics_view(client, exp_id, metrics) is False
    assert key_metrics_view(client, exp_id, ["bli.other.en-xx.csls.p_1"]) is True
    state = json.loads(
        json.loads(client.get_experiment(exp_id).tags[VIEW_TAG_PREFIX + VIEW_ID])["state"]
    )
    assert "metrics.`bli.other.en-xx.csls.p_1`" in state["selectedColumns"]
    assert set(cols) < set(state["selectedColumns"])
    # a view too long for the tag keeps its first columns
    many = [f"bli.space{i:04d}.en-de.csls.p_1" for i in range(400)]
    key_metrics_view(client, exp_id, many)
    text = client.get_experiment(exp_id).tags[VIEW_TAG_PREFIX + VIEW_ID]
    assert len(text) <= 20000
    state = json.loads(json.loads(text)["state"])
    assert state["selectedColumns"][2] == "metrics.`zeroshot.e5.avg`"
