"""MLflow mirroring of the files under ``results/`` (which stay the source of truth).

Jobs never talk to MLflow themselves: each writes its params and metrics to a JSON file
beside its outputs. One local job per configuration x seed then mirrors them into the
store: a parent run for the configuration x seed and a child run per job. This keeps a
single writer per store (no sqlite locking under ``--cores 8``, no many-writers-on-NFS on a
cluster), and an exclusive file lock serialises the mirroring jobs of different seeds.
Which jobs a seed's run mirrors is read off the DAG (xlalign.workflow.manifest): every job
whose rule declares an output named ``stats``.

Re-running is idempotent: runs are found again by their tags (config hash, seed, job); a
job whose files did not change is skipped, a changed one replaces its old child run.

What a user of the MLflow UI expects: the experiment is tagged a model-training one
(:data:`EXPERIMENT_KIND_TAG`) and has a saved view of its parents' key metrics, which the
summary's ``ui_path`` opens on the runs table rather than the GenAI traces; each parent
run carries the resolved configuration as params (:func:`config_params`) and its seed's
key results as metrics (:func:`key_metrics`: BLI P@1 per space and language
pair, the zero-shot summary table's cells), read from the same files the tables read, so
that seeds and configurations compare side by side without opening a child.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import re
import subprocess
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlalign.core.io import PathLike, file_lock, read_json, redact_url, write_json

log = logging.getLogger(__name__)

TAG = "xlalign."
_BAD_NAME = re.compile(r"[^A-Za-z0-9_\-. /:]")
MAX_PARAM_LEN = 6000
#: Keys of per-example data in a job's stats, not mirrored (xlalign.evaluation.bli).
_PER_EXAMPLE = re.compile(r"(^|\.)(queries|hits@\d+)$")


@dataclass(frozen=True)
class JobRecord:
    """One finished job: its identity and the files holding its params and metrics."""

    job: str  # unique within a parent, e.g. "sample/en"
    stage: str
    stats: Path
    language: str | None = None
    benchmark: Path | None = None


def git_revision(repo: PathLike) -> str:
    """``<sha>`` of HEAD (``-dirty`` if the tree has changes), or ``unknown``."""
    try:
        sha = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _clean(name: str) -> str:
    return _BAD_NAME.sub("_", name)[:250]


def flatten(d: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Dotted keys of a nested mapping (lists are left whole)."""
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            yield from flatten(v, key + ".")
        else:
            yield key, v


def split_stats(
    stats: Mapping[str, Any],
) -> tuple[dict[str, float], dict[str, str], dict[str, list[float]]]:
    """Numeric leaves become metrics, other scalars params; ``curves`` become histories.
    Per-example data (a BLI direction's ``queries`` and ``hits@k`` marks) stay in the
    file: they are neither."""
    metrics: dict[str, float] = {}
    params: dict[str, str] = {}
    curves: dict[str, list[float]] = {}
    for key, value in flatten({k: v for k, v in stats.items() if k != "curves"}):
        if _PER_EXAMPLE.search(key):
            continue
        if isinstance(value, bool) or value is None or isinstance(value, str):
            params[_clean(key)] = redact_url(str(value))[:MAX_PARAM_LEN]
        elif isinstance(value, int | float):
            if math.isfinite(float(value)):
                metrics[_clean(key)] = float(value)
        else:
            text = json.dumps(value, sort_keys=True, ensure_ascii=False)
            params[_clean(key)] = redact_url(text)[:MAX_PARAM_LEN]
    for name, values in (stats.get("curves") or {}).items():
        curves[_clean(f"curve.{name}")] = [float(v) for v in values]
    return metrics, params, curves


def read_benchmark(path: Path) -> dict[str, float]:
    """Snakemake's benchmark TSV (wall seconds, max RSS ...) as metrics ``bench.*``."""
    lines = path.read_text(encoding="utf-8").strip().splitlines()
    if len(lines) < 2:
        return {}
    header = lines[0].split("\t")
    values = lines[-1].split("\t")
    out: dict[str, float] = {}
    for k, v in zip(header, values, strict=False):
        with contextlib.suppress(ValueError):
            f = float(v)
            if math.isfinite(f):
                out[_clean(f"bench.{k}")] = f
    return out


def _digest(*paths: Path | None) -> str:
    h = hashlib.sha256()
    for p in paths:
        if p is not None and p.exists():
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


def resolve_uri(uri: str, base: PathLike | None = None) -> str:
    """Make a relative ``sqlite:///path`` absolute against ``base`` (default: cwd)."""
    prefix = "sqlite:///"
    if uri.startswith(prefix) and not uri[len(prefix) :].startswith("/"):
        path = Path(base or os.getcwd()) / uri[len(prefix) :]
        path.parent.mkdir(parents=True, exist_ok=True)
        return prefix + str(path.resolve())
    return uri


def _lock_path(uri: str, summary_path: PathLike) -> Path:
    """The store's lock file: beside a sqlite store, else beside the summary."""
    if uri.startswith("sqlite:///"):
        return Path(uri[len("sqlite:///") :]).with_suffix(".lock")
    return Path(summary_path).with_suffix(".lock")


#: The experiment tag MLflow 3 keeps an experiment's kind in, and the value of a
#: model-training experiment ("Machine learning", mlflow/server/js
#: ``ExperimentKind.CUSTOM_MODEL_DEVELOPMENT``): the UIs that read it open the experiment on
#: its runs table, not on the GenAI traces. MLflow 3.17's UI follows its own "GenAI / Model
#: training" switch instead (checked in its bundle and in Chromium), hence UI_RUNS_PATH.
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
EXPERIMENT_KIND = "custom_model_development"
#: The runs table's saved view of the parents' key metrics: an entry of the UI's "Views"
#: menu, kept as the UI keeps its saved views (an experiment tag ``mlflow.sharedViewState.
#: <id>``: name, times and the table's state as JSON); an MLflow without the menu ignores it.
VIEW_TAG_PREFIX = "mlflow.sharedViewState."
VIEW_ID = "xlalign-key-metrics"
VIEW_NAME = "xlalign: key metrics of the parent runs"
#: What the view's columns may take of the tag (MLflow: 20,000 characters an experiment tag).
_MAX_VIEW_STATE = 16000
#: The experiment's runs page in that view. ``workflowType``: the UI's own switch between its
#: GenAI and machine-learning sides, which MLflow 3.17 follows over the experiment's kind
#: (its default, GenAI, would show the traces).
UI_RUNS_PATH = "#/experiments/{id}/runs?workflowType=machine_learning&viewStateShareKey=" + VIEW_ID


def _experiment_id(client: Any, experiment: str, artifact_location: PathLike) -> str:
    """The id of ``experiment``, created (artifacts under ``artifact_location``) if new;
    tagged a model-training experiment either way (an experiment of an older xlalign gets
    the tag on its next mirror, one that has it is left as it is)."""
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        return client.create_experiment(
            experiment,
            artifact_location=Path(artifact_location).resolve().as_uri(),
            tags={EXPERIMENT_KIND_TAG: EXPERIMENT_KIND},
        )
    if exp.tags.get(EXPERIMENT_KIND_TAG) != EXPERIMENT_KIND:
        client.set_experiment_tag(exp.experiment_id, EXPERIMENT_KIND_TAG, EXPERIMENT_KIND)
    return exp.experiment_id


def _column(kind: str, name: str) -> str:
    """A column of the UI's runs table (``metrics.`name```)."""
    return f"{kind}.`{name}`"


def key_metrics_view(
    client: Any, experiment_id: str, metrics: Iterable[str], now_ms: int | None = None
) -> bool:
    """Save (or widen) the runs table's view of the key metrics (:data:`VIEW_ID`): the parent
    runs only, by name, with the columns ``seed``, ``encoder.name``, then the zero-shot and
    BLI metrics: ``metrics`` and those the view already had (another configuration's), as
    many as the tag holds. Returns whether the tag was written (not when nothing changed).
    A change saved over this view in the UI is undone by the next mirror (save it as a view
    of one's own)."""
    key = VIEW_TAG_PREFIX + VIEW_ID
    now = int(time.time() * 1000) if now_ms is None else now_ms
    created, old_state = now, {}
    text = client.get_experiment(experiment_id).tags.get(key)
    if text:
        with contextlib.suppress(ValueError, KeyError, TypeError):
            envelope = json.loads(text)
            old_state = json.loads(envelope["state"])
            created = int(envelope["createdAt"])
    prefix = _column("metrics", "")[:-1]
    names = set(metrics) | {
        c[len(prefix) : -1]
        for c in old_state.get("selectedColumns") or []
        if isinstance(c, str) and c.startswith(prefix)
    }
    zeroshot = sorted(n for n in names if n.startswith("zeroshot."))
    columns = [_column("params", "seed"), _column("params", "encoder.name")]
    # each column is named three times (selected, order, width)
    used = sum(3 * len(c) + 20 for c in columns)
    for name in [*zeroshot, *sorted(names - set(zeroshot))]:
        used += 3 * len(_column("metrics", name)) + 20
        if used > _MAX_VIEW_STATE:
            log.warning("the key-metrics view holds the first %d metrics", len(columns) - 2)
            break
        columns.append(_column("metrics", name))
    state = {
        "searchFilter": f"tags.`{TAG}kind` = 'parent'",
        "orderByKey": _column("tags", "mlflow.runName"),
        "orderByAsc": True,
        "selectedColumns": columns,
        # in this order (MLflow would sort them by name, BLI first), each as wide as its name
        "columnOrder": columns,
        "columnWidths": {c: min(240, max(90, 7 * len(c) - 70)) for c in columns},
    }
    if state == old_state:
        return False
    envelope = {"name": VIEW_NAME, "createdAt": created, "updatedAt": now, "state": ""}
    envelope["state"] = json.dumps(state, ensure_ascii=False)
    client.set_experiment_tag(experiment_id, key, json.dumps(envelope, ensure_ascii=False))
    return True


def _param_value(value: Any) -> str:
    """A param's text: scalars as ``str``, lists and mappings as sorted JSON; URLs'
    credentials masked; cut to MLflow's limit."""
    if isinstance(value, Mapping | list | tuple):
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    else:
        text = str(value)
    return redact_url(text)[:MAX_PARAM_LEN]


def config_params(cfg: Mapping[str, Any]) -> dict[str, str]:
    """The resolved configuration as MLflow params: one per leaf, dotted keys
    (``encoder.name``, ``zeroshot.tasks.pos-gold.languages``), lists as JSON, an empty
    mapping as ``{}``; sorted, so that the same config gives the same params. A key that
    only differs by characters MLflow refuses (made ``_``) keeps its first value."""
    out: dict[str, str] = {}

    def walk(d: Mapping[str, Any], prefix: str) -> None:
        for k in sorted(d, key=str):
            v, key = d[k], f"{prefix}{k}"
            if isinstance(v, Mapping) and v:
                walk(v, key + ".")
                continue
            name = _clean(key)
            if name in out:
                log.warning("config key %r is param %r, already taken; left out", key, name)
                continue
            out[name] = _param_value(v)

    walk(cfg, "")
    return dict(sorted(out.items()))


def _metric_name(*parts: str) -> str:
    return _clean(".".join(parts))


def bli_key_metrics(
    paths: list[Path], metric: str = "p@1", retrieval: str = "csls"
) -> dict[str, float]:
    """A seed's BLI results (xlalign.evaluation.bli records, the files Tables 1 and 5 read)
    as ``bli.<space>.<pair>.<retrieval>.<metric>`` (``bli.x2s-m.en-de.csls.p_1``): each
    direction's score with the tables' retrieval and metric; a direction without a number
    is left out."""
    from xlalign.reporting.tables import load_records

    out: dict[str, float] = {}
    for rec in load_records(paths, "bli"):
        for pair, by_retrieval in sorted(rec["results"].items()):
            scores = by_retrieval.get(retrieval) if isinstance(by_retrieval, Mapping) else None
            value = scores.get(metric) if isinstance(scores, Mapping) else None
            if _finite(value):
                out[_metric_name("bli", rec["space"], pair, retrieval, metric)] = float(value)
    return out


def zeroshot_key_metrics(finetune: list[Path], retrieve: list[Path]) -> dict[str, float]:
    """The zero-shot summary table's cells (xlalign.reporting.zeroshot.summary_table, over
    the same fine-tuning results and retrieval summaries) as ``zeroshot.<encoder>.<task>.
    <metric>`` (``zeroshot.e5.pos-gold.accuracy``, ``zeroshot.e5.udhr.acc_1``) and the row's
    average ``zeroshot.<encoder>.avg`` (only when every column has a value)."""
    from xlalign.evaluation.tasks.registry import task_info
    from xlalign.reporting.zeroshot import check_retrieval, load_runs, summary_table

    runs = load_runs(finetune)
    sets: list[dict[str, Any]] = []
    for path in retrieve:
        summary = read_json(path)
        for name, res in sorted((summary.get("sets") or {}).items()):
            check_retrieval(res, f"{path}: sets.{name}")
            sets.append(res)
    encoders = sorted({r["encoder"] for r in runs} | {r["encoder"] for r in sets})
    tasks = sorted({r["task"] for r in runs})
    rsets = sorted({r["set"] for r in sets})
    if not encoders:
        return {}
    _, _, data = summary_table(runs, sets, encoders=encoders, tasks=tasks, retrieval_sets=rsets)
    names = [
        *(f"{t}.{task_info(t).metric}" for t in tasks),
        *(f"{s}.{'f1' if task_info(s).metric == 'f1' else 'acc@1'}" for s in rsets),
        "avg",
    ]
    out: dict[str, float] = {}
    for enc in encoders:
        for name, col in zip(names, data["columns"], strict=True):
            value = data["values"][enc].get(col)
            if _finite(value):
                out[_metric_name("zeroshot", enc, name)] = float(value)
    return out


def key_metrics(
    records: list[JobRecord], metric: str = "p@1", retrieval: str = "csls"
) -> dict[str, float]:
    """A seed's key results for its parent run, from its jobs' files: BLI
    (:func:`bli_key_metrics`, the ``bli`` jobs) and the zero-shot summary
    (:func:`zeroshot_key_metrics`, the ``finetune`` and ``retrieve`` jobs)."""

    def stage(name: str) -> list[Path]:
        return [r.stats for r in records if r.stage == name and r.stats.exists()]

    out = bli_key_metrics(stage("bli"), metric, retrieval)
    out.update(zeroshot_key_metrics(stage("finetune"), stage("retrieve")))
    return dict(sorted(out.items()))


def mirror(
    records: list[JobRecord],
    *,
    uri: str,
    experiment: str,
    artifact_location: PathLike,
    parent_name: str,
    parent_tags: Mapping[str, str],
    parent_params: Mapping[str, Any],
    summary_path: PathLike,
    bli_metric: str = "p@1",
    bli_retrieval: str = "csls",
) -> dict[str, Any]:
    """Mirror ``records`` into MLflow under one parent run; write a summary JSON.

    ``parent_tags`` must identify the parent uniquely (config hash and seed). The parent
    carries ``parent_params`` (e.g. ``seed`` and :func:`config_params`) and the seed's key
    metrics (:func:`key_metrics`, BLI with ``bli_metric`` and ``bli_retrieval``, the
    tables' choice). A found parent gets the params it lacks; one whose params differ (a
    store written by an older xlalign, which formatted them otherwise: MLflow cannot change
    a logged param) is replaced by a new parent holding its children, the old one deleted
    (``parent_replaced`` in the summary). Metrics are logged when their value changed.
    """
    import mlflow
    from mlflow.entities import Metric, Param, RunTag
    from mlflow.tracking import MlflowClient

    uri = resolve_uri(uri)
    wanted = {_clean(k): _param_value(v) for k, v in parent_params.items()}
    parent_metrics = key_metrics(records, bli_metric, bli_retrieval)
    # The summary names the store without the credentials a URI may hold.
    summary: dict[str, Any] = {"uri": redact_url(uri), "experiment": experiment, "children": {}}
    with file_lock(_lock_path(uri, summary_path)):
        mlflow.set_tracking_uri(uri)
        client = MlflowClient(uri)
        exp_id = _experiment_id(client, experiment, artifact_location)
        summary["experiment_id"] = exp_id
        summary["ui_path"] = UI_RUNS_PATH.format(id=exp_id)
        tags = {f"{TAG}{k}": str(v) for k, v in parent_tags.items()}
        key_tags = {k: v for k, v in tags.items() if k in (f"{TAG}config_hash", f"{TAG}seed")}
        filt = " and ".join(f"tags.`{k}` = '{v}'" for k, v in key_tags.items())
        filt += f" and tags.`{TAG}kind` = 'parent'"
        found = client.search_runs([exp_id], filter_string=filt, max_results=2)
        parent = found[0] if found else None
        summary["parent_created"] = parent is None
        todo = wanted
        if parent is not None:
            logged = parent.data.params
            changed = sorted(k for k, v in wanted.items() if k in logged and logged[k] != v)
            todo = {k: v for k, v in wanted.items() if k not in logged}
            if changed:
                log.warning(
                    "MLflow parent run %s holds other values of params %s (written by an "
                    "older xlalign?); a new parent run replaces it",
                    parent.info.run_id,
                    ", ".join(changed[:10]) + (" ..." if len(changed) > 10 else ""),
                )
                summary["parent_replaced"] = {
                    "old_run_id": parent.info.run_id,
                    "changed_params": changed,
                }
        fresh = parent is None or "parent_replaced" in summary
        if fresh:
            parent = client.create_run(
                exp_id, run_name=parent_name, tags={**tags, f"{TAG}kind": "parent"}
            )
            todo = wanted
        parent_id = parent.info.run_id
        items = [Param(k, v) for k, v in sorted(todo.items())]
        for i in range(0, len(items), 100):  # MLflow's limit of params per batch
            client.log_batch(parent_id, params=items[i : i + 100])
        summary["parent_params"] = {"logged": len(items), "total": len(wanted)}
        # Tags that may change between re-runs (git revision) are refreshed.
        client.log_batch(parent_id, tags=[RunTag(k, v) for k, v in tags.items()])
        summary["parent_run_id"] = parent_id
        if "parent_replaced" in summary:
            old_id = summary["parent_replaced"]["old_run_id"]
            for child in client.search_runs(
                [exp_id],
                filter_string=f"tags.`mlflow.parentRunId` = '{old_id}'",
                max_results=50000,
            ):
                client.set_tag(child.info.run_id, "mlflow.parentRunId", parent_id)
            client.delete_run(old_id)

        existing = {
            r.data.tags.get(f"{TAG}job"): r
            for r in client.search_runs(
                [exp_id],
                filter_string=f"tags.`mlflow.parentRunId` = '{parent_id}'",
                max_results=50000,
            )
        }
        for rec in records:
            digest = _digest(rec.stats, rec.benchmark)
            old = existing.get(rec.job)
            if old is not None and old.data.tags.get(f"{TAG}digest") == digest:
                summary["children"][rec.job] = {"run_id": old.info.run_id, "action": "unchanged"}
                continue
            if old is not None:
                client.delete_run(old.info.run_id)
            stats = read_json(rec.stats)
            metrics, params, curves = split_stats(stats)
            if rec.benchmark is not None and rec.benchmark.exists():
                metrics.update(read_benchmark(rec.benchmark))
            child_tags = {
                "mlflow.parentRunId": parent_id,
                f"{TAG}job": rec.job,
                f"{TAG}stage": rec.stage,
                f"{TAG}digest": digest,
                f"{TAG}kind": "job",
                **{k: v for k, v in tags.items() if k != f"{TAG}languages"},
            }
            if rec.language:
                child_tags[f"{TAG}language"] = rec.language
            run = client.create_run(exp_id, run_name=rec.job, tags=child_tags)
            rid = run.info.run_id
            ts = int(rec.stats.stat().st_mtime * 1000)
            metric_list = [Metric(k, v, ts, 0) for k, v in sorted(metrics.items())]
            for name, values in curves.items():
                metric_list.extend(Metric(name, v, ts, step) for step, v in enumerate(values))
            param_list = [Param(k, v) for k, v in sorted(params.items())]
            for i in range(0, len(param_list), 100):
                client.log_batch(rid, params=param_list[i : i + 100])
            for i in range(0, len(metric_list), 1000):
                client.log_batch(rid, metrics=metric_list[i : i + 1000])
            client.log_artifact(rid, str(rec.stats))
            client.set_terminated(rid)
            summary["children"][rec.job] = {
                "run_id": rid,
                "action": "replaced" if old is not None else "created",
            }
        # The seed's key metrics, from the files just mirrored; only new or changed values
        # (a re-run adds no history).
        current = {} if fresh else dict(parent.data.metrics)
        ts = max(
            (int(r.stats.stat().st_mtime * 1000) for r in records if r.stats.exists()),
            default=0,
        )
        items = [
            Metric(k, v, ts, 0)
            for k, v in parent_metrics.items()
            if k not in current or current[k] != v
        ]
        for i in range(0, len(items), 1000):
            client.log_batch(parent_id, metrics=items[i : i + 1000])
        summary["parent_metrics"] = {"logged": len(items), "total": len(parent_metrics)}
        key_metrics_view(client, exp_id, parent_metrics)
        client.set_terminated(parent_id)
    log.info("MLflow UI: <server>/%s (the parents' key metrics)", summary["ui_path"])
    write_json(summary_path, summary)
    return summary


#: The tag value of ``seed`` on the parent run that holds a configuration's aggregates.
ALL_SEEDS = "all"


def aggregate_metrics(statistics: Mapping[str, Any]) -> dict[str, float]:
    """MLflow metrics from the statistics summary (xlalign.reporting.statistics): every
    cell's mean and spreads (``<table>.<row>.<column>.mean|sd_pretrain|sd_finetune|
    n_pretrain|n_finetune``) and every pooled test (``test.<table>.<model>_vs_<baseline>.
    <column>.difference|p|p_adjusted``)."""
    out: dict[str, float] = {}
    for table, spec in (statistics.get("tables") or {}).items():
        for row, cols in (spec.get("cells") or {}).items():
            for col, cell in cols.items():
                for key in ("mean", "sd_pretrain", "sd_finetune", "n_pretrain", "n_finetune"):
                    v = cell.get(key)
                    if isinstance(v, int | float) and math.isfinite(float(v)):
                        out[_clean(f"{table}.{row}.{col}.{key}")] = float(v)
        for test in spec.get("tests") or []:
            if test.get("language") != "all":
                continue
            stem = f"test.{table}.{test['model']}_vs_{test['baseline']}.{test['column']}"
            for key, name in (("difference", "difference"), ("p", "p"), ("p_adjusted", "p_adj")):
                v = test.get(key)
                if isinstance(v, int | float) and math.isfinite(float(v)):
                    out[_clean(f"{stem}.{name}")] = float(v)
    return out


def _finite(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(float(v))


def analyses_metrics(summaries: Mapping[str, Mapping[str, Any]]) -> dict[str, float]:
    """MLflow metrics from the analyses' summaries (xlalign.reporting.analyses; name ->
    summary): every table cell's mean (``<name>.<row>.<column>.mean``; 001's Tables 1-2
    under ``<name>.<parallel|dictionary>.``), the Spearman correlations of alignment and
    transfer (``<name>.spearman.<task>.rho|p|n``, and by layer
    ``<name>.spearman_layer.<task>.<layer>.rho|p|n``) and the best AER layer per encoder
    and method (``<name>.best_aer.<encoder>.<method>.layer|aer|last_layer_aer``)."""
    out: dict[str, float] = {}
    for name, summary in summaries.items():
        tables = dict(summary.get("tables") or {})
        if "table" in summary:
            tables[""] = summary["table"]
        tables.update(summary.get("sweeps") or {})
        for key in ("correlations_by_layer", "alignment_transfer"):
            for task, rows in (summary.get(key) or {}).items():
                for row in rows:
                    for k, short in (("rho", "rho"), ("p_value", "p"), ("n", "n")):
                        if _finite(row.get(k)):
                            metric = f"{name}.spearman_layer.{task}.{row['layer']}.{short}"
                            out[_clean(metric)] = float(row[k])
        for tname, table in tables.items():
            stem = f"{name}.{tname}." if tname else f"{name}."
            for row, cols in ((table or {}).get("cells") or {}).items():
                for col, cell in cols.items():
                    if isinstance(cell, Mapping) and _finite(cell.get("mean")):
                        out[_clean(f"{stem}{row}.{col}.mean")] = float(cell["mean"])
        for task, corr in (summary.get("correlations") or {}).items():
            for key, short in (("rho", "rho"), ("p_value", "p"), ("n", "n")):
                if _finite(corr.get(key)):
                    out[_clean(f"{name}.spearman.{task}.{short}")] = float(corr[key])
        for enc, methods in (summary.get("best_aer") or {}).items():
            for method, best in methods.items():
                for key in ("layer", "aer", "last_layer_aer"):
                    if _finite(best.get(key)):
                        out[_clean(f"{name}.best_aer.{enc}.{method}.{key}")] = float(best[key])
    return out


def mirror_aggregates(
    *,
    statistics: PathLike,
    artifacts: Mapping[str, PathLike],
    uri: str,
    experiment: str,
    artifact_location: PathLike,
    parent_name: str,
    parent_tags: Mapping[str, str],
    summary_path: PathLike,
    analyses: Mapping[str, PathLike] | None = None,
) -> dict[str, Any]:
    """The configuration's aggregates on its own parent run (tag ``seed`` = ``all``,
    beside the per-seed parents): the statistics' metrics (:func:`aggregate_metrics`), the
    analyses' (:func:`analyses_metrics`; ``analyses``: name -> summary JSON) and the tables
    and figures as artifacts (``artifacts``: artifact folder -> file or folder).
    Re-running replaces the metrics' values and the artifacts."""
    from mlflow.entities import Metric, RunTag
    from mlflow.tracking import MlflowClient

    uri = resolve_uri(uri)
    metrics = aggregate_metrics(read_json(statistics))
    metrics.update(analyses_metrics({k: read_json(v) for k, v in (analyses or {}).items()}))
    with file_lock(_lock_path(uri, summary_path)):
        client = MlflowClient(uri)
        exp_id = _experiment_id(client, experiment, artifact_location)
        tags = {f"{TAG}{k}": str(v) for k, v in {**parent_tags, "seed": ALL_SEEDS}.items()}
        filt = (
            f"tags.`{TAG}config_hash` = '{tags[f'{TAG}config_hash']}' and "
            f"tags.`{TAG}seed` = '{ALL_SEEDS}' and tags.`{TAG}kind` = 'parent'"
        )
        found = client.search_runs([exp_id], filter_string=filt, max_results=1)
        if found:
            run_id = found[0].info.run_id
        else:
            run_id = client.create_run(
                exp_id, run_name=parent_name, tags={**tags, f"{TAG}kind": "parent"}
            ).info.run_id
        client.log_batch(run_id, tags=[RunTag(k, v) for k, v in tags.items()])
        ts = int(Path(statistics).stat().st_mtime * 1000)
        items = [Metric(k, v, ts, 0) for k, v in sorted(metrics.items())]
        for i in range(0, len(items), 1000):
            client.log_batch(run_id, metrics=items[i : i + 1000])
        logged = []
        for folder, path in artifacts.items():
            p = Path(path)
            if p.is_dir():
                client.log_artifacts(run_id, str(p), artifact_path=folder)
            elif p.is_file():
                client.log_artifact(run_id, str(p), artifact_path=folder)
            else:
                continue
            logged.append(folder)
        client.set_terminated(run_id)
    summary = {
        "uri": redact_url(uri),
        "experiment": experiment,
        "run_id": run_id,
        "metrics": len(metrics),
    }
    summary["artifacts"] = logged
    write_json(summary_path, summary)
    return summary
