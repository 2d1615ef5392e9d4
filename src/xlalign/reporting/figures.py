"""The run's figures from its result files (the `plots` job): what :mod:`.plots` draws,
fed from the records the workflow writes.

* ``bli_per_language``: Table 5's cells (each language's BLI metric averaged over both
  directions, mean ± std over seeds) as grouped bars, one bar per space;
* ``retrieval_layers_<set>``: accuracy@1 en→xx by layer for each encoder;
* ``pretrain_loss_curves``: per-objective training losses and the validation MLM loss of
  every continued-pre-training run;
* ``zeroshot_deltas_<task>``: each model's per-language score minus the original
  encoder's, paired by fine-tuning seed;
* ``learning_curve``: X2S-M against aggregation by corpus size, when
  ``results.learning_curve`` names benchmarks/learning_curve.py's summary.

Each figure is a PNG and an SVG in ``out_dir``; ``figures.json`` lists them with their
titles (the report's labels come from the file names).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, read_json, write_json
from xlalign.evaluation.tasks.registry import task_info
from xlalign.reporting import plots
from xlalign.reporting.tables import bli_per_language, load_records
from xlalign.reporting.zeroshot import load_retrieval, load_runs

log = logging.getLogger(__name__)

INDEX = "figures.json"


def _with_source(paths: Sequence[PathLike], what: str) -> list[dict[str, Any]]:
    """JSON objects, each remembering its file (``_source``) for the errors that name it."""
    out = []
    for p in paths:
        rec = read_json(p)
        if not isinstance(rec, dict):
            raise InputError(f"{p}: a JSON {type(rec).__name__}; expected a {what} (an object)")
        out.append({**rec, "_source": str(p)})
    return out


def write_figures(
    *,
    out_dir: PathLike,
    bli: Sequence[PathLike] = (),
    runs: Sequence[PathLike] = (),
    retrieval: Sequence[PathLike] = (),
    pretrain: Sequence[PathLike] = (),
    learning_curve: PathLike | None = None,
    spaces: Sequence[str] | None = None,
    base_encoder: str,
    tasks: Sequence[str] = (),
    metric: str = "p@1",
    bli_retrieval: str = "csls",
) -> dict[str, Any]:
    """Every figure the inputs allow; returns (and writes as ``figures.json``) the index."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    index: dict[str, Any] = {}

    def done(name: str, what: str, paths: Sequence[Path]) -> None:
        index[name] = {"title": what, "files": [p.name for p in paths]}
        log.info("%s: %s", name, ", ".join(p.name for p in paths))

    if bli:
        table = bli_per_language(
            load_records(bli, kind="bli"), spaces=spaces, metric=metric, retrieval=bli_retrieval
        )
        data = plots.bli_bars_from_table(table)
        label = metric.upper()
        paths = plots.bli_bars(
            data, out / "bli_per_language", retrieval=bli_retrieval, metric=label
        )
        done("bli_per_language", f"BLI {label} ({bli_retrieval.upper()}) per language", paths)

    if retrieval:
        records = load_retrieval(retrieval)
        layers = {r["set"]: r.get("layer") for r in records}
        for rset, data in plots.retrieval_by_layer_from_records(records).items():
            title = task_info(rset).title
            paths = plots.retrieval_by_layer(
                data, out / f"retrieval_layers_{rset}", set_title=title, layer=layers.get(rset)
            )
            done(f"retrieval_layers_{rset}", f"{title}: accuracy@1 en→xx by layer", paths)

    if pretrain:
        curves = plots.loss_curves_from_records(_with_source(pretrain, "pre-training record"))
        paths = plots.loss_curves(curves, out / "pretrain_loss_curves")
        done("pretrain_loss_curves", "Continued pre-training: losses by step", paths)

    if runs:
        run_recs = load_runs(runs)
        for task in tasks:
            mine = [r for r in run_recs if r.get("task") == task]
            if not any(r.get("encoder") == base_encoder for r in mine):
                log.info("zero-shot deltas of %s: no %s runs to compare with", task, base_encoder)
                continue
            deltas = plots.zeroshot_deltas_from_runs(mine, task=task, baseline=base_encoder)
            deltas = {m: v for m, v in deltas.items() if m != base_encoder}
            if not deltas:
                continue
            info = task_info(task)
            paths = plots.zeroshot_deltas(
                deltas,
                out / f"zeroshot_deltas_{task}",
                baseline=base_encoder,
                metric=info.metric,
                task=info.title,
            )
            done(f"zeroshot_deltas_{task}", f"{info.title}: difference to {base_encoder}", paths)

    if learning_curve:
        path = Path(learning_curve)
        if not path.is_file():
            raise InputError(
                f"results.learning_curve: {path} does not exist (the summary "
                "benchmarks/learning_curve.py writes, learning_curve.json)"
            )
        sizes, data, xlabel = plots.learning_curve_from_summary(read_json(path), where=str(path))
        paths = plots.learning_curve(sizes, data, out / "learning_curve", xlabel=xlabel)
        done("learning_curve", "X2S-M against aggregation by corpus size", paths)

    if not index:
        raise InputError(f"{out}: no BLI, zero-shot or pre-training results to plot")
    write_json(out / INDEX, index)
    return index
