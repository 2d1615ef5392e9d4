"""Tables and figures of issue 17's experiments: derived languages (001), meta-pretraining
initialisation (004) and the alignment analyses of encoders (001/003/004).

Three groups, each with pure functions from records to tables/figures and one ``write_*``
per workflow rule (Markdown + LaTeX tables, PNG + SVG figures, a summary JSON, every file
written atomically):

* derived languages: :func:`derived_frame` (001 Table 3's shape: SUP, ZS, Δ per task and
  the alignment score), :func:`derived_correlation` (001 Figure 3's Spearman correlation),
  :func:`derived_figures` (001 Figures 2 and 3), :func:`write_derived`;
* meta-pretraining: :func:`meta_frame` (004 Table 5's shape), :func:`meta_figure`
  (retrieval accuracy by layer per variant), :func:`write_meta`;
* encoder analyses: :func:`aer_frame`, :func:`aer_figure` (004 Figure 4),
  :func:`word_score_figure`, :func:`distances_frame`, :func:`distances_figure` (003
  Figure 1), :func:`alignment_transfer_by_layer` (the word alignment score of each layer
  against zero-shot transfer across encoders), :func:`write_analysis`.

Seeds: a cell is the mean over seeds, ``± sample std`` with more than one. A record
lacking a key the table needs is an :class:`InputError` naming the record and the key;
``None`` values are missing (``–`` in tables, gaps in figures), never 0.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import PathLike, atomic_open, write_json
from xlalign.reporting.formats import best_cells, finite_number
from xlalign.reporting.plots import PALETTE, save_figure, style
from xlalign.reporting.tables import MISSING, SOURCE_KEY, Table

Record = Mapping[str, Any]

#: The transfer measures :func:`derived_correlation` can correlate with alignment.
AGAINST = ("delta", "zs", "sup")
#: 004 Table 5's variants in its order, with their display names.
VARIANT_NAMES: dict[str, str] = {
    "none": "None",
    "body": "Body",
    "emb": "Emb",
    "both": "Both",
    "both+dict": "Both+Dict",
}
#: The vocabulary-matching rules whose row counts 004's initialisation records.
INIT_RULES = ("exact", "normalised", "dictionary", "fresh")
#: Markers of the transformations in 001 Figure 3 (in first-seen order).
MARKERS = ("o", "^", "s", "D", "v", "P", "X", "*")
EN_XX = "en->xx"
#: The headings of 001's Tables 1-2 analogues in derived.md.
_SWEEP_TITLES = {
    "parallel": "Parallel sentences for XLM (001 Table 1)",
    "dictionary": "Dictionary size for DICT-MLM and ALIGN-MLM (001 Table 2)",
}


# ---------------------------------------------------------------------------- tables


@dataclass
class AnalysisTable(Table):
    """A :class:`~xlalign.reporting.tables.Table` whose best cells follow each column's
    direction: ``lower_is_better`` columns (Δ, AER) take the minimum, ``not_scores``
    (counts, layers, descriptive statistics) are never bolded, and ``unranked`` rows (by
    display name: figures quoted from a publication, another run and protocol) are shown
    but neither bolded nor compared: the best cell is picked among the other rows."""

    lower_is_better: tuple[str, ...] = ()
    not_scores: tuple[str, ...] = ()
    unranked: tuple[str, ...] = ()

    def best(self) -> set[tuple[object, object]]:
        ranked = self.values.loc[[r not in self.unranked for r in self.values.index]]
        return best_cells(ranked, lower_is_better=self.lower_is_better, skip=self.not_scores)

    def summary(self) -> dict[str, Any]:
        """Caption, notes and every cell (mean, std, seeds) for the summary JSON."""
        cells: dict[str, dict[str, Any]] = {}
        for row_id, row, n in zip(self.spaces, self.values.index, self.seeds, strict=True):
            cells[row_id] = {
                str(col): {
                    "mean": _json_float(self.values.at[row, col]),
                    "std": _json_float(self.std.at[row, col]),
                }
                for col in self.values.columns
            }
            cells[row_id]["seeds"] = n
        return {
            "caption": self.caption,
            "footnotes": list(self.footnotes),
            "rows": [str(r) for r in self.frame.index],
            "columns": [str(c) for c in self.frame.columns],
            "cells": cells,
        }


def _json_float(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _stats(vals: Sequence[float]) -> tuple[float, float]:
    """(mean, sample std) of the seeds' values; NaN for none / std of one."""
    if not vals:
        return math.nan, math.nan
    mean = statistics.fmean(vals)
    return mean, (statistics.stdev(vals) if len(vals) > 1 else math.nan)


def _text(vals: Sequence[float], decimals: int) -> str:
    if not vals:
        return MISSING
    mean, std = _stats(vals)
    if len(vals) == 1:
        return f"{mean:.{decimals}f}"
    return f"{mean:.{decimals}f} ± {std:.{decimals}f}"


def _table(
    name: str,
    caption: str,
    index_name: str,
    rows: Sequence[tuple[str, str]],
    columns: Sequence[str],
    cells: Mapping[tuple[str, str], Sequence[float]],
    *,
    decimals: Mapping[str, int] | int,
    seeds: Sequence[int],
    footnotes: Sequence[str] = (),
    lower_is_better: Sequence[str] = (),
    not_scores: Sequence[str] = (),
    fixed: Mapping[tuple[str, str], str] | None = None,
    unranked: Sequence[str] = (),
) -> AnalysisTable:
    """An :class:`AnalysisTable` from per-seed values: ``rows`` are (id, display name),
    ``cells[(row id, column)]`` the values over seeds; ``fixed`` display texts replace
    the formatted ones (e.g. a layer index); ``unranked`` row ids are never bolded nor
    compared (:class:`AnalysisTable`)."""
    labels = [label for _, label in rows]
    frame = pd.DataFrame(index=pd.Index(labels, name=index_name), columns=list(columns))
    values = pd.DataFrame(np.nan, index=frame.index, columns=list(columns), dtype=float)
    std = values.copy()
    for row_id, label in rows:
        for col in columns:
            vals = list(cells.get((row_id, col), ()))
            dec = decimals if isinstance(decimals, int) else decimals.get(col, 2)
            frame.at[label, col] = _text(vals, dec)
            values.at[label, col], std.at[label, col] = _stats(vals)
            if fixed and (row_id, col) in fixed:
                frame.at[label, col] = fixed[(row_id, col)]
    return AnalysisTable(
        name=name,
        caption=caption,
        spaces=[row_id for row_id, _ in rows],
        frame=frame,
        values=values,
        std=std,
        seeds=list(seeds),
        footnotes=list(footnotes),
        lower_is_better=tuple(lower_is_better),
        not_scores=tuple(not_scores),
        unranked=tuple(label for row_id, label in rows if row_id in set(unranked)),
    )


# ---------------------------------------------------------------------------- checks


def _where(rec: Record, k: int, kind: str) -> str:
    src = rec.get(SOURCE_KEY)
    if src:
        return str(src)
    name = rec.get("model", rec.get("encoder", rec.get("aligner")))
    return f"{kind} record {k}" + (f" ({name!r})" if name is not None else "")


def _get(rec: Any, keys: str, where: str) -> Any:
    """``rec[k1][k2]...`` for the dotted ``keys``; a missing key names the record and key."""
    value = rec
    for key in keys.split("."):
        if not isinstance(value, Mapping) or key not in value:
            raise InputError(f"{where}: missing key {keys!r}")
        value = value[key]
    return value


def _series(values: Any, at: str) -> list[float | None]:
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Sequence):
        raise InputError(f"{at}: expected a list of numbers (one per layer), got {values!r}")
    return [finite_number(v, f"{at}[{i}]") for i, v in enumerate(values)]


def _nan(values: Sequence[float | None]) -> list[float]:
    return [math.nan if v is None else v for v in values]


def _seed_key(rec: Record, where: str) -> int:
    seed = _get(rec, "seed", where)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise InputError(f"{where}: key 'seed': expected an integer, got {seed!r}")
    return seed


def _write_text(path: PathLike, text: str) -> None:
    with atomic_open(path) as fh:
        fh.write(text)


# ---------------------------------------------------------------------------- A. derived


def spec_label(spec: str) -> str:
    """001's name of a composition: ``trans+inv`` -> ``Trans + Inv``."""
    return " + ".join(part.strip().capitalize() for part in spec.split("+"))


def _derived_run(rec: Record, where: str) -> str:
    """The pre-training row: ``run``, else the model id ``<run>.<spec>.s<seed>`` cut."""
    if "run" in rec:
        return str(rec["run"])
    model, spec = str(_get(rec, "model", where)), str(_get(rec, "spec", where))
    suffix = f".{spec}.s{_seed_key(rec, where)}"
    if not model.endswith(suffix):
        raise InputError(f"{where}: missing key 'run' and model {model!r} is not '<run>{suffix}'")
    return model[: -len(suffix)]


@dataclass
class _Derived:
    rows: list[tuple[str, str]]  # (run, spec) in first-seen order
    tasks: list[str]
    metric: dict[str, str]
    # (run, spec) -> measure ("zs", "sup", "delta", "natural", "alignment") per task -> seeds
    values: dict[tuple[str, str], dict[tuple[str, str], list[float]]]
    seeds: dict[tuple[str, str], set[int]]


def _task_scores(res: Any, at: str) -> tuple[float | None, float | None, float | None]:
    """(ZS, SUP, Δ) of one task's result; Δ = SUP − ZS where the record has none."""
    zs = finite_number(_get(res, "zs", at), f"{at}.zs")
    sup = finite_number(_get(res, "sup", at), f"{at}.sup")
    delta = finite_number(res.get("delta"), f"{at}.delta")
    if delta is None and zs is not None and sup is not None:
        delta = sup - zs
    return zs, sup, delta


def _collect_derived(records: Sequence[Record], tasks: Sequence[str] | None) -> _Derived:
    if not records:
        raise InputError("derived languages: no evaluation records")
    data = _Derived([], [], {}, {}, {})
    for k, rec in enumerate(records):
        where = _where(rec, k, "derived-language evaluation")
        run, spec = _derived_run(rec, where), str(_get(rec, "spec", where))
        seed = _seed_key(rec, where)
        key = (run, spec)
        if key not in data.values:
            data.rows.append(key)
            data.values[key], data.seeds[key] = {}, set()
        if seed in data.seeds[key]:
            raise InputError(f"{where}: a second record for run {run!r}, {spec!r}, seed {seed}")
        data.seeds[key].add(seed)
        per_task = _get(rec, "tasks", where)
        if not isinstance(per_task, Mapping):
            raise InputError(f"{where}: key 'tasks': expected a mapping task -> scores")
        for task, res in per_task.items():
            if tasks is not None and task not in tasks:
                continue
            if task not in data.tasks:
                data.tasks.append(task)
            at = f"{where}: tasks.{task}"
            zs, sup, delta = _task_scores(res, at)
            data.metric.setdefault(task, str(res.get("metric", "score")))
            for measure, v in (
                ("zs", zs),
                ("sup", sup),
                ("delta", delta),
                ("natural", finite_number(res.get("natural"), f"{at}.natural")),
            ):
                if v is not None:
                    data.values[key].setdefault((task, measure), []).append(v)
        align = rec.get("alignment") or {}
        score = finite_number(align.get("embedding_score"), f"{where}: alignment.embedding_score")
        if score is not None:
            data.values[key].setdefault(("", "alignment"), []).append(score)
    if tasks is not None:
        missing = [t for t in tasks if t not in data.tasks]
        if missing:
            raise InputError(f"derived languages: no record has task(s) {missing}")
    if not data.tasks:
        raise InputError("derived languages: the records have no task results")
    return data


def _derived_columns(task: str) -> tuple[str, str, str]:
    return f"{task} SUP", f"{task} ZS", f"{task} Δ"


def derived_frame(
    records: Sequence[Record],
    task: str | Sequence[str] | None = None,
    *,
    decimals: int = 1,
) -> AnalysisTable:
    """001 Table 3's shape: one row per pre-training run x transformation, per task
    ``<task> SUP`` (fine-tuned and tested on the derived language), ``<task> ZS``
    (fine-tuned on the natural language, tested on the derived one) and ``<task> Δ`` =
    SUP − ZS (lower = better transfer, bolded as best), and ``Alignment``, 001's
    alignment score of the input embeddings (percent of natural tokens whose most
    cosine-similar derived token is their counterpart; only with transliteration).

    ``task``: one task, several, or None for every task in the records (first-seen
    order). A cell is the mean over seeds (``± sample std`` with more than one); Δ is
    each seed's SUP − ZS, averaged.
    """
    tasks = [task] if isinstance(task, str) else (None if task is None else list(task))
    data = _collect_derived(records, tasks)
    columns = [c for t in data.tasks for c in _derived_columns(t)] + ["Alignment"]
    cells: dict[tuple[str, str], list[float]] = {}
    row_ids = []
    for run, spec in data.rows:
        row_id = f"{run}.{spec}"
        row_ids.append((row_id, f"{run}, {spec_label(spec)}"))
        vals = data.values[(run, spec)]
        for t in data.tasks:
            sup_c, zs_c, d_c = _derived_columns(t)
            for col, measure in ((sup_c, "sup"), (zs_c, "zs"), (d_c, "delta")):
                cells[(row_id, col)] = vals.get((t, measure), [])
        cells[(row_id, "Alignment")] = vals.get(("", "alignment"), [])
    n_seeds = [len(data.seeds[r]) for r in data.rows]
    metrics = ", ".join(f"{t}: {data.metric[t]}" for t in data.tasks)
    notes = [
        "SUP: fine-tuned and tested on the derived language; ZS: fine-tuned on the natural "
        "language, tested on the derived one; Δ = SUP − ZS, each seed's difference "
        f"(lower = better transfer). Metrics ({metrics}) in percent.",
        "Alignment: 001's alignment score of the input embeddings, the percentage of "
        "natural-language tokens whose most cosine-similar derived token is their "
        f"counterpart; {MISSING} for a transformation without transliteration (no "
        "one-to-one vocabulary).",
        _seeds_text(n_seeds),
    ]
    return _table(
        "derived",
        "Derived languages (001 Table 3): supervised, zero-shot and Δ per task, and the "
        "embedding alignment score",
        "Pre-training, transformation",
        row_ids,
        columns,
        cells,
        decimals=decimals,
        seeds=n_seeds,
        footnotes=notes,
        lower_is_better=[_derived_columns(t)[2] for t in data.tasks],
    )


def _seeds_text(n_seeds: Sequence[int]) -> str:
    if not n_seeds or max(n_seeds) <= 1:
        return "One seed per row."
    counts = sorted(set(n_seeds))
    return (
        f"Mean ± sample std over seeds ({'/'.join(map(str, counts))} per row); a row "
        "with one seed has no std."
    )


def derived_correlation(
    records: Sequence[Record], task: str, against: str = "delta"
) -> dict[str, Any]:
    """Spearman's rank correlation between 001's alignment score and transfer on ``task``
    across the table's rows (each run x transformation with an alignment score: the
    points of 001 Figure 3, each the mean over its seeds), two-sided p-value
    (``scipy.stats.spearmanr``).

    ``against``: ``delta`` (Δ = SUP − ZS, 001's measure), ``zs`` or ``sup``. Sign: the
    rho reported is exactly ``spearmanr(alignment, y)``. Against Δ, a *negative* rho
    means "more alignment, smaller Δ, better transfer". 001 (Figure 3, Appendix E)
    quotes this relation as positive (rho_s = 0.73 for XNLI: "better transfer (lower Δ)
    is strongly correlated with better alignment"), i.e. with the sign of
    rho(alignment, −Δ); their 0.73 is −0.73 here. Against ZS the signs agree.

    Returns ``{"task", "x": "alignment", "y", "rho", "p_value", "n", "points"}``;
    ``rho`` and ``p_value`` are None with a ``reason`` when fewer than 3 points or
    either variable is constant (no rank correlation defined).
    """
    if against not in AGAINST:
        raise ConfigError(f"against: expected one of {list(AGAINST)}, got {against!r}")
    data = _collect_derived(records, [task])
    points = []
    for run, spec in data.rows:
        vals = data.values[(run, spec)]
        x, y = vals.get(("", "alignment")), vals.get((task, against))
        if x and y:
            points.append(
                {"run": run, "spec": spec, "x": statistics.fmean(x), "y": statistics.fmean(y)}
            )
    out: dict[str, Any] = {
        "task": task,
        "x": "alignment",
        "y": against,
        "rho": None,
        "p_value": None,
        "n": len(points),
        "points": points,
    }
    xs = [p["x"] for p in points]
    ys = [p["y"] for p in points]
    if len(points) < 3:
        out["reason"] = f"{len(points)} point(s) with both alignment and {against}; need 3"
    elif len(set(xs)) == 1 or len(set(ys)) == 1:
        which = "alignment" if len(set(xs)) == 1 else against
        out["reason"] = f"{which} is constant across the {len(points)} points"
    else:
        from scipy.stats import spearmanr

        res = spearmanr(xs, ys, alternative="two-sided")
        out["rho"], out["p_value"] = float(res.statistic), float(res.pvalue)
    return out


def derived_correlation_by_layer(records: Sequence[Record], task: str) -> list[dict[str, Any]]:
    """Per layer, Spearman's ρ (two-sided p) between the word alignment score of the
    natural-derived test pairs at that layer and Δ on ``task``, across the runs x
    transformations (each the mean over its seeds), the per-layer companion of
    :func:`derived_correlation` (same sign: negative = more alignment, better transfer)."""
    from xlalign.analysis.correlation import spearman

    data = _collect_derived(records, [task])
    layers: dict[tuple[str, str], list[list[float]]] = {}
    for k, rec in enumerate(records):
        where = _where(rec, k, "derived-language evaluation")
        key = (_derived_run(rec, where), str(_get(rec, "spec", where)))
        series = (rec.get("alignment") or {}).get("word_score_by_layer")
        if key in data.values and series:
            vals = _series(series, f"{where}: alignment.word_score_by_layer")
            for layer, v in enumerate(vals):
                slots = layers.setdefault(key, [])
                while len(slots) <= layer:
                    slots.append([])
                if v is not None:
                    slots[layer].append(v)
    keys = [k for k in data.rows if k in layers and data.values[k].get((task, "delta"))]
    depth = max((len(layers[k]) for k in keys), default=0)
    out = []
    for layer in range(depth):
        xs = [
            statistics.fmean(layers[k][layer])
            if layer < len(layers[k]) and layers[k][layer]
            else None
            for k in keys
        ]
        ys = [statistics.fmean(data.values[k][(task, "delta")]) for k in keys]
        out.append({"layer": layer, **spearman(xs, ys)})
    return out


def _y_label(against: str, metric: str) -> str:
    return {
        "delta": f"Δ = SUP − ZS ({metric}, lower = better transfer)",
        "zs": f"ZS ({metric})",
        "sup": f"SUP ({metric})",
    }[against]


def _corr_text(corr: Mapping[str, Any]) -> str:
    if corr.get("rho") is None:
        return f"Spearman ρ: n/a ({corr.get('reason', 'not computed')})"
    return f"Spearman ρ = {corr['rho']:.2f}, p = {corr['p_value']:.2g} (n = {corr['n']})"


def derived_bars_figure(records: Sequence[Record], tasks: Sequence[str] | None = None) -> Figure:
    """001 Figure 2: ZS and SUP bars per pre-training run, one panel per transformation
    (columns) and task (rows); error bars: std over seeds where there are several."""
    data = _collect_derived(records, tasks)
    runs = list(dict.fromkeys(r for r, _ in data.rows))
    specs = list(dict.fromkeys(s for _, s in data.rows))
    with style():
        fig = Figure(
            figsize=(0.8 + max(2.6, 0.9 * len(runs)) * len(specs), 0.8 + 2.6 * len(data.tasks))
        )
        axes = fig.subplots(len(data.tasks), len(specs), squeeze=False, sharey="row")
        for r, task in enumerate(data.tasks):
            for c, spec in enumerate(specs):
                ax = axes[r][c]
                for i, (measure, label) in enumerate((("zs", "ZS"), ("sup", "SUP"))):
                    xs, ys, errs = [], [], []
                    for g, run in enumerate(runs):
                        vals = data.values.get((run, spec), {}).get((task, measure), [])
                        if vals:
                            mean, std = _stats(vals)
                            xs.append(g + (i - 0.5) * 0.38)
                            ys.append(mean)
                            errs.append(0.0 if math.isnan(std) else std)
                    ax.bar(xs, ys, width=0.38, color=PALETTE[i], label=label)
                    if any(errs):
                        ax.errorbar(xs, ys, yerr=errs, fmt="none", ecolor="#333333", capsize=2)
                ax.set_xticks(range(len(runs)), runs, rotation=30, ha="right")
                ax.set_xlim(-0.6, len(runs) - 0.4)
                ax.grid(axis="x", visible=False)
                ax.set_title(f"{spec_label(spec)}: {task}")
                if c == 0:
                    ax.set_ylabel(f"{task} {data.metric[task]}, %")
        fig.suptitle(
            "Derived languages: zero-shot (ZS: fine-tuned on natural) and supervised (SUP) "
            "on the derived test set"
        )
        handles, labels = axes[0][0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=2)
    return fig


def derived_scatter_figure(
    records: Sequence[Record], tasks: Sequence[str] | None = None, against: str = "delta"
) -> Figure:
    """001 Figure 3: alignment score against Δ (or ``against``), one panel per task, one
    point per run x transformation (mean over seeds): colour per run, marker per
    transformation, Spearman's ρ and p in each panel's title."""
    data = _collect_derived(records, tasks)
    runs = list(dict.fromkeys(r for r, _ in data.rows))
    specs = list(dict.fromkeys(s for _, s in data.rows))
    with style():
        fig = Figure(figsize=(0.6 + 3.6 * len(data.tasks), 3.8))
        axes = fig.subplots(1, len(data.tasks), squeeze=False)[0]
        for ax, task in zip(axes, data.tasks, strict=True):
            corr = derived_correlation(records, task, against)
            for p in corr["points"]:
                ax.scatter(
                    p["x"],
                    p["y"],
                    color=PALETTE[runs.index(p["run"]) % len(PALETTE)],
                    marker=MARKERS[specs.index(p["spec"]) % len(MARKERS)],
                    s=36,
                )
            ax.set_title(f"{task}\n{_corr_text(corr)}")
            ax.set_xlabel("alignment (001 embedding score), %")
            ax.set_ylabel(_y_label(against, data.metric[task]))
        handles = [
            Line2D([], [], color=PALETTE[i % len(PALETTE)], marker="o", linestyle="", label=r)
            for i, r in enumerate(runs)
        ] + [
            Line2D(
                [],
                [],
                color="#555555",
                marker=MARKERS[i % len(MARKERS)],
                linestyle="",
                label=spec_label(s),
            )
            for i, s in enumerate(specs)
        ]
        fig.suptitle("Alignment and transfer across pre-training runs and transformations")
        fig.legend(handles=handles, loc="outside lower center", ncols=min(6, len(handles)))
    return fig


def _sweep_share(rec: Record, where: str, kind: str) -> float | None:
    """The parallel or dictionary share a derived run trained with: the record's
    ``shares`` (copied from its pre-training record), else what its run name says (a base
    run that reads the parallel copy uses all of it)."""
    from xlalign.derived.naming import split_run
    from xlalign.pretrain.recipes import needs

    shares = rec.get("shares")
    if isinstance(shares, Mapping) and shares.get(kind) is not None:
        return finite_number(shares[kind], f"{where}: shares.{kind}")
    row, run_kind, share = split_run(_derived_run(rec, where))
    if run_kind == kind:
        return share
    reads = needs({"pretrain": {}}, row)
    if kind == "parallel":
        return 1.0 if "parallel" in reads else 0.0
    return None


def _is_sweep(rec: Record, where: str) -> bool:
    from xlalign.derived.naming import split_run

    return split_run(_derived_run(rec, where))[1] is not None


def _pct(share: float) -> str:
    return f"{share * 100:g} %"


def _reads(rec: Record, where: str) -> set[str]:
    from xlalign.derived.naming import split_run
    from xlalign.pretrain.recipes import needs

    return needs({"pretrain": {}}, split_run(_derived_run(rec, where))[0])


def derived_parallel_frame(
    records: Sequence[Record], spec: str, *, decimals: int = 1
) -> AnalysisTable | None:
    """001 Table 1's shape on composition ``spec``: one row per run that reads the
    parallel copy (XLM: MLM + TLM) and its share of parallel sentences relative to the
    MLM sentences, then ALIGN-MLM (0 %, no parallel sentence) when it ran; per task ZS
    (higher = better) and Δ = SUP − ZS (lower = better). None without a run on a share
    below 100 % (nothing is varied)."""
    recs = [(k, r) for k, r in enumerate(records) if str(r.get("spec")) == spec]
    rows: list[tuple[float, str, Record]] = []
    align: list[Record] = []
    for k, rec in recs:
        where = _where(rec, k, "derived-language evaluation")
        reads = _reads(rec, where)
        if "parallel" in reads:
            share = _sweep_share(rec, where, "parallel")
            if share is not None:
                rows.append((share, _derived_run(rec, where), rec))
        elif _derived_run(rec, where) == "align-mlm":
            align.append(rec)
    if not any(share < 1.0 for share, _, _ in rows):
        return None
    runs: dict[str, tuple[float, list[Record]]] = {}
    for share, run, rec in sorted(rows, key=lambda x: (x[0], x[1])):
        runs.setdefault(run, (share, []))[1].append(rec)
    groups = [
        (run, f"{_split_row(run)}, {_pct(share)} parallel", recs_)
        for run, (share, recs_) in runs.items()
    ]
    if align:
        groups.append(("align-mlm", "align-mlm, 0 % (dictionary only)", align))
    return _sweep_table(
        "derived_parallel",
        f"Parallel sentences for XLM/TLM (001 Table 1 analogue), {spec_label(spec)}: ZS and Δ "
        "per task against the share of parallel sentences relative to the MLM sentences",
        "Pre-training, parallel sentences",
        groups,
        measures=(("ZS", "zs"), ("Δ", "delta")),
        decimals=decimals,
    )


def _split_row(run: str) -> str:
    from xlalign.derived.naming import split_run

    return split_run(run)[0]


def derived_dictionary_frame(
    records: Sequence[Record], spec: str, *, decimals: int = 1
) -> AnalysisTable | None:
    """001 Table 2's shape on composition ``spec``: one row per dictionary share (of the
    natural word types), per task the Δ of each run that reads the dictionary (DICT-MLM,
    ALIGN-MLM) side by side (lower = better). None with fewer than two shares."""
    cells: dict[tuple[str, str], list[float]] = {}
    shares: dict[str, float] = {}
    rows_seen: list[str] = []
    tasks: list[str] = []
    seeds: dict[str, set[int]] = {}
    for k, rec in enumerate(records):
        if str(rec.get("spec")) != spec:
            continue
        where = _where(rec, k, "derived-language evaluation")
        if "dictionaries" not in _reads(rec, where):
            continue
        share = _sweep_share(rec, where, "dictionary")
        if share is None:
            continue
        row = _split_row(_derived_run(rec, where))
        if row not in rows_seen:
            rows_seen.append(row)
        sid = _pct(share)
        shares[sid] = share
        seeds.setdefault(sid, set()).add(_seed_key(rec, where))
        for task, res in (_get(rec, "tasks", where) or {}).items():
            if task not in tasks:
                tasks.append(task)
            at = f"{where}: tasks.{task}"
            delta = finite_number(res.get("delta"), f"{at}.delta")
            if delta is not None:
                cells.setdefault((sid, f"{task} Δ {row}"), []).append(delta)
    if len(shares) < 2:
        return None
    order = sorted(shares, key=shares.get)
    columns = [f"{t} Δ {r}" for t in tasks for r in rows_seen]
    return _table(
        "derived_dictionary",
        f"Dictionary size for DICT-MLM and ALIGN-MLM (001 Table 2 analogue), "
        f"{spec_label(spec)}: Δ = SUP − ZS per task and share of the natural word types in "
        "the dictionary",
        "Word types in the dictionary",
        [(sid, sid) for sid in order],
        columns,
        cells,
        decimals=decimals,
        seeds=[len(seeds[sid]) for sid in order],
        footnotes=[
            "Δ = SUP − ZS (lower = better transfer). 001 counts the share of the natural "
            "vocabulary's tokens; here it is the share of the natural word types (the "
            "dictionary pairs words, the tokenizer maps them to its pieces).",
            _seeds_text([len(seeds[sid]) for sid in order]),
        ],
        lower_is_better=columns,
    )


def _sweep_table(
    name: str,
    caption: str,
    index_name: str,
    groups: Sequence[tuple[str, str, Sequence[Record]]],
    *,
    measures: Sequence[tuple[str, str]],
    decimals: int,
) -> AnalysisTable:
    tasks: list[str] = []
    cells: dict[tuple[str, str], list[float]] = {}
    for run, _, recs in groups:
        for k, rec in enumerate(recs):
            where = _where(rec, k, "derived-language evaluation")
            for task, res in (_get(rec, "tasks", where) or {}).items():
                if task not in tasks:
                    tasks.append(task)
                zs, sup, delta = _task_scores(res, f"{where}: tasks.{task}")
                for label, measure in measures:
                    v = {"zs": zs, "sup": sup, "delta": delta}[measure]
                    if v is not None:
                        cells.setdefault((run, f"{task} {label}"), []).append(v)
    columns = [f"{t} {label}" for t in tasks for label, _ in measures]
    n_seeds = [len(recs) for _, _, recs in groups]
    return _table(
        name,
        caption,
        index_name,
        [(run, label) for run, label, _ in groups],
        columns,
        cells,
        decimals=decimals,
        seeds=n_seeds,
        footnotes=[
            "ZS: fine-tuned on the natural language, tested on the derived one; Δ = SUP − "
            "ZS (lower = better transfer). Parallel sentences: share of the MLM text's "
            "sentences whose derived translation TLM sees.",
            _seeds_text(n_seeds),
        ],
        lower_is_better=[c for c in columns if c.endswith(" Δ")],
    )


def derived_figures(
    records: Sequence[Record], stem: PathLike, tasks: Sequence[str] | None = None
) -> list[Path]:
    """Write 001 Figure 2 (``<stem>_transfer``) and, when any row has an alignment
    score, Figure 3 (``<stem>_alignment``), each as PNG and SVG; return the paths."""
    stem = Path(stem)
    paths = save_figure(
        derived_bars_figure(records, tasks), stem.with_name(f"{stem.name}_transfer")
    )
    data = _collect_derived(records, tasks)
    if any(("", "alignment") in v for v in data.values.values()):
        paths += save_figure(
            derived_scatter_figure(records, tasks), stem.with_name(f"{stem.name}_alignment")
        )
    return paths


def write_derived(
    records: Sequence[Record],
    *,
    out_md: PathLike,
    out_tex: PathLike,
    fig_stem: PathLike,
    summary_json: PathLike,
    tasks: Sequence[str] | None = None,
    sweep_spec: str | None = None,
) -> dict[str, Any]:
    """The derived-language table of the base runs (``out_md``, ``out_tex``), the
    alignment/Δ correlation of every task (in the Markdown and the summary), the figures
    of :func:`derived_figures`, 001's Tables 1-2 from the runs of ``sweep_spec`` when
    their shares vary, and ``summary_json``: the tables' cells, the correlations (with
    their points) and the figure file names. The sweep runs (``tlm-p10``,
    ``dict-mlm-d50``) appear in Tables 1-2 only, so Table 3 and the correlation keep
    001's points (each row x composition once)."""
    base = [r for k, r in enumerate(records) if not _is_sweep(r, _where(r, k, "derived"))]
    table = derived_frame(base, tasks)
    task_ids = [c[: -len(" Δ")] for c in table.lower_is_better]
    corrs = {t: derived_correlation(base, t, "delta") for t in task_ids}
    sweeps = {}
    if sweep_spec is not None:
        for kind, frame in (
            ("parallel", derived_parallel_frame(records, sweep_spec)),
            ("dictionary", derived_dictionary_frame(records, sweep_spec)),
        ):
            if frame is not None:
                sweeps[kind] = frame
    by_layer = {t: derived_correlation_by_layer(base, t) for t in task_ids}
    lines = [
        f"- {t}: alignment vs Δ, {_corr_text(c)}; negative = more alignment, better transfer "
        "(001 quotes the opposite sign)"
        for t, c in corrs.items()
    ] + [
        f"- {t}: word alignment score of layer l vs Δ, ρ by layer: "
        + ", ".join(
            f"{r['layer']}: {'–' if r['rho'] is None else format(r['rho'], '.2f')}" for r in rows
        )
        for t, rows in by_layer.items()
        if rows
    ]
    md = "\n".join(
        [
            "# Derived languages (001)",
            "",
            table.to_markdown().rstrip("\n"),
            "",
            "## Alignment and transfer (001 Figure 3)",
            "",
            *lines,
            "",
            *(
                line
                for kind, frame in sweeps.items()
                for line in (
                    f"## {_SWEEP_TITLES[kind]}",
                    "",
                    frame.to_markdown().rstrip("\n"),
                    "",
                )
            ),
        ]
    )
    paths = derived_figures(base, fig_stem, tasks)
    _write_text(out_md, md)
    _write_text(out_tex, "\n".join([table.to_latex(), *(f.to_latex() for f in sweeps.values())]))
    summary = {
        "table": table.summary(),
        "correlations": corrs,
        "correlations_by_layer": by_layer,
        "sweeps": {kind: frame.summary() for kind, frame in sweeps.items()},
        "figures": [p.name for p in paths],
    }
    write_json(summary_json, summary)
    return summary


# ---------------------------------------------------------------------------- B. meta


def _variant(rec: Record, where: str) -> str:
    pre = rec.get("pretrain") or {}
    if pre.get("variant"):
        return str(pre["variant"])
    model = str(_get(rec, "model", where))
    base = model.rsplit(".s", 1)[0]
    if not base.startswith("meta-"):
        raise InputError(f"{where}: missing key 'pretrain.variant' (model {model!r})")
    return base[len("meta-") :]


def _en_xx(acc: Any, at: str) -> float | None:
    if isinstance(acc, Mapping):
        if EN_XX not in acc:
            raise InputError(f"{at}: missing key {EN_XX!r}")
        return finite_number(acc[EN_XX], f"{at}.{EN_XX}")
    return finite_number(acc, at)


@dataclass
class _Meta:
    variants: list[str]
    tasks: list[str]
    sets: list[str]
    seeds: dict[str, list[int]]
    # variant -> seed -> task -> language -> score; retrieval set -> language -> acc / sweep
    scores: dict[str, dict[int, dict[str, dict[str, float]]]]
    acc: dict[str, dict[int, dict[str, dict[str, float]]]]
    sweep: dict[str, dict[int, dict[str, dict[str, list[float | None]]]]]
    layer: dict[str, int | None]
    counts: dict[str, dict[int, dict[str, float]]]


def _collect_meta(records: Sequence[Record]) -> _Meta:
    if not records:
        raise InputError("meta-pretraining: no evaluation records")
    m = _Meta([], [], [], {}, {}, {}, {}, {}, {})
    for k, rec in enumerate(records):
        where = _where(rec, k, "meta-pretraining evaluation")
        variant, seed = _variant(rec, where), _seed_key(rec, where)
        if variant not in m.variants:
            m.variants.append(variant)
            m.seeds[variant] = []
            for d in (m.scores, m.acc, m.sweep, m.counts):
                d[variant] = {}
        if seed in m.seeds[variant]:
            raise InputError(f"{where}: a second record for variant {variant!r}, seed {seed}")
        m.seeds[variant].append(seed)
        m.scores[variant][seed] = {}
        per_task = _get(rec, "tasks", where)
        if not isinstance(per_task, Mapping):
            raise InputError(f"{where}: key 'tasks': expected a mapping task -> results")
        for task, res in per_task.items():
            at = f"{where}: tasks.{task}"
            per_lang = _get(res, "summary.per_language", at)
            if not isinstance(per_lang, Mapping):
                raise InputError(f"{at}: key 'summary.per_language': expected a mapping")
            if task not in m.tasks:
                m.tasks.append(task)
            m.scores[variant][seed][task] = _present(per_lang, f"{at}.summary.per_language")
        m.acc[variant][seed], m.sweep[variant][seed] = {}, {}
        for name, res in (rec.get("retrieval") or {}).items():
            at = f"{where}: retrieval.{name}"
            langs = _get(res, "languages", at)
            if name not in m.sets:
                m.sets.append(name)
                m.layer[name] = res.get("layer")
            accs, sweeps = {}, {}
            for lang, r in langs.items():
                a = _en_xx(_get(r, "accuracy", f"{at}.languages.{lang}"), f"{at}.{lang}.accuracy")
                if a is not None:
                    accs[lang] = a
                sw = r.get("sweep")
                if sw is not None:
                    sw = sw.get(EN_XX) if isinstance(sw, Mapping) else sw
                    if sw is not None:
                        sweeps[lang] = _series(sw, f"{at}.languages.{lang}.sweep.{EN_XX}")
            m.acc[variant][seed][name], m.sweep[variant][seed][name] = accs, sweeps
        counts = (((rec.get("pretrain") or {}).get("initialisation") or {}).get("counts")) or {}
        m.counts[variant][seed] = _present(
            {rule: counts.get(rule) for rule in INIT_RULES},
            f"{where}: pretrain.initialisation.counts",
        )
    order = [v for v in VARIANT_NAMES if v in m.variants]
    m.variants = order + [v for v in m.variants if v not in VARIANT_NAMES]
    return m


def _present(values: Mapping[str, Any], at: str) -> dict[str, float]:
    """The keys of ``values`` with a number (None/NaN dropped), as floats."""
    out = {}
    for key, value in values.items():
        v = finite_number(value, f"{at}.{key}")
        if v is not None:
            out[str(key)] = v
    return out


def _common(per: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """Languages present in every mapping (sorted), and those left out."""
    if not per:
        return [], []
    every = set.union(*(set(p) for p in per))
    common = set.intersection(*(set(p) for p in per))
    return sorted(common), sorted(every - common)


def meta_frame(records: Sequence[Record], *, decimals: int = 1) -> AnalysisTable:
    """004 Table 5's shape: one row per initialisation variant (None, Body, Emb, Both,
    Both+Dict), per task the zero-shot score averaged over the non-English test
    languages, per retrieval set accuracy@1 en→xx at the configured layer averaged over
    its languages, and the number of embedding rows each vocabulary-matching rule
    initialised (counts, never bolded).

    An average over languages uses only the languages every record has (a footnote
    names the others); each seed's average is taken first, then mean ± std over seeds.
    """
    m = _collect_meta(records)
    columns: list[str] = []
    cells: dict[tuple[str, str], list[float]] = {}
    fixed: dict[tuple[str, str], str] = {}
    notes: list[str] = []
    for task in m.tasks:
        col = f"{task} zero-shot"
        columns.append(col)
        per = [m.scores[v][s].get(task, {}) for v in m.variants for s in m.seeds[v]]
        langs, left = _common(per)
        for v in m.variants:
            cells[(v, col)] = [
                statistics.fmean(m.scores[v][s][task][lang] for lang in langs)
                for s in m.seeds[v]
                if langs and task in m.scores[v][s]
            ]
        notes.append(
            f"{col}: mean over {', '.join(langs) or 'no language'} (fine-tuned on English)"
            + (f"; left out (missing in some record): {', '.join(left)}" if left else "")
            + "."
        )
    for name in m.sets:
        col = f"{name} en→xx"
        columns.append(col)
        per = [m.acc[v][s].get(name, {}) for v in m.variants for s in m.seeds[v]]
        langs, left = _common(per)
        for v in m.variants:
            cells[(v, col)] = [
                statistics.fmean(m.acc[v][s][name][lang] for lang in langs)
                for s in m.seeds[v]
                if langs and name in m.acc[v][s]
            ]
        notes.append(
            f"{col}: accuracy@1 with English queries at layer {m.layer.get(name)}, mean over "
            f"{', '.join(langs) or 'no language'}"
            + (f"; left out: {', '.join(left)}" if left else "")
            + "."
        )
    rules = [
        r for r in INIT_RULES if any(r in m.counts[v][s] for v in m.variants for s in m.seeds[v])
    ]
    for rule in rules:
        col = f"rows: {rule}"
        columns.append(col)
        for v in m.variants:
            vals = [m.counts[v][s][rule] for s in m.seeds[v] if rule in m.counts[v][s]]
            cells[(v, col)] = vals
            if vals and len(set(vals)) == 1:  # deterministic matching: the same every seed
                fixed[(v, col)] = f"{vals[0]:.0f}"
    if rules:
        notes.append(
            "rows: embedding rows of the cross-lingual vocabulary initialised by exact match, "
            "normalised match, bilingual dictionary, or left fresh (random)."
        )
    n_seeds = [len(m.seeds[v]) for v in m.variants]
    notes.append(_seeds_text(n_seeds))
    rows = [(v, VARIANT_NAMES.get(v, v)) for v in m.variants]
    count_cols = [f"rows: {r}" for r in rules]
    return _table(
        "metapretrain",
        "Meta-pretraining (004 Table 5): initialising the Transformer body, the embeddings, "
        "both or neither",
        "Initialised",
        rows,
        columns,
        cells,
        decimals={**dict.fromkeys(columns, decimals), **dict.fromkeys(count_cols, 0)},
        seeds=n_seeds,
        footnotes=notes,
        not_scores=count_cols,
        fixed=fixed,
    )


def meta_retrieval_figure(records: Sequence[Record]) -> Figure:
    """Accuracy@1 en→xx by layer per variant (mean over the retrieval set's common
    languages, then over seeds), one panel per retrieval set; the configured layer
    dotted."""
    m = _collect_meta(records)
    sets = [
        s for s in m.sets if any(m.sweep[v][sd].get(s) for v in m.variants for sd in m.seeds[v])
    ]
    if not sets:
        raise InputError("meta-pretraining: no record has a retrieval sweep by layer")
    with style():
        fig = Figure(figsize=(0.6 + 3.8 * len(sets), 3.6))
        axes = fig.subplots(1, len(sets), squeeze=False)[0]
        for ax, name in zip(axes, sets, strict=True):
            per = [m.sweep[v][s].get(name, {}) for v in m.variants for s in m.seeds[v]]
            langs, _ = _common(per)
            for i, v in enumerate(m.variants):
                curves = [
                    _layer_mean([m.sweep[v][s][name][lang] for lang in langs])
                    for s in m.seeds[v]
                    if langs and name in m.sweep[v][s]
                ]
                if not curves:
                    continue
                line = _layer_mean(curves)
                ax.plot(
                    range(len(line)),
                    _nan(line),
                    color=PALETTE[i % len(PALETTE)],
                    marker="o",
                    markersize=3,
                    label=VARIANT_NAMES.get(v, v),
                )
            if m.layer.get(name) is not None:
                ax.axvline(m.layer[name], color="#555555", linestyle=":", linewidth=1.0)
            ax.set_title(f"{name}: mean of {', '.join(langs)}")
            ax.set_xlabel("layer (hidden_states; 0 = embeddings)")
            ax.set_ylabel("accuracy@1 en→xx, %")
            ax.xaxis.get_major_locator().set_params(integer=True)
        fig.suptitle("Meta-pretraining variants: retrieval accuracy@1 en→xx by layer")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=min(5, len(labels) or 1))
    return fig


def _layer_mean(curves: Sequence[Sequence[float | None]]) -> list[float | None]:
    """Mean per layer over curves (None where any curve lacks the layer)."""
    depth = max(len(c) for c in curves)
    out: list[float | None] = []
    for layer in range(depth):
        vals = [c[layer] if layer < len(c) else None for c in curves]
        out.append(None if any(v is None for v in vals) else statistics.fmean(vals))  # type: ignore[arg-type]
    return out


def meta_figure(records: Sequence[Record], stem: PathLike) -> list[Path]:
    """Write :func:`meta_retrieval_figure` as ``<stem>.png`` and ``<stem>.svg``."""
    return save_figure(meta_retrieval_figure(records), stem)


def write_meta(
    records: Sequence[Record],
    *,
    out_md: PathLike,
    out_tex: PathLike,
    fig_stem: PathLike,
    summary_json: PathLike,
) -> dict[str, Any]:
    """The meta-pretraining table (``out_md``, ``out_tex``), the retrieval figure
    (``<fig_stem>_retrieval``, when any record has a sweep) and ``summary_json``: the
    table's cells and the figure file names."""
    table = meta_frame(records)
    m = _collect_meta(records)
    paths: list[Path] = []
    if any(m.sweep[v][s].get(n) for v in m.variants for s in m.seeds[v] for n in m.sets):
        stem = Path(fig_stem)
        paths = meta_figure(records, stem.with_name(f"{stem.name}_retrieval"))
    md = "\n".join(["# Meta-pretraining initialisation (004)", "", table.to_markdown()])
    _write_text(out_md, md)
    _write_text(out_tex, table.to_latex())
    summary = {"table": table.summary(), "figures": [p.name for p in paths]}
    write_json(summary_json, summary)
    return summary


# ---------------------------------------------------------------------------- C. encoders


def _methods(records: Sequence[Record]) -> list[str]:
    seen: list[str] = []
    for k, rec in enumerate(records):
        aer = _get(rec, "aer_by_layer", _where(rec, k, "encoder analysis"))
        if not isinstance(aer, Mapping):
            raise InputError(
                f"{_where(rec, k, 'encoder analysis')}: aer_by_layer: expected a mapping"
            )
        seen += [m for m in aer if m not in seen]
    first = [m for m in ("argmax", "ot") if m in seen]
    return first + [m for m in seen if m not in first]


def best_layer(values: Sequence[float | None]) -> int | None:
    """The layer of the lowest AER (the first one on ties); None when every layer is
    missing."""
    best = None
    for layer, v in enumerate(values):
        if v is not None and (best is None or v < values[best]):  # type: ignore[operator]
            best = layer
    return best


def best_aer(records: Sequence[Record]) -> dict[str, dict[str, dict[str, Any]]]:
    """Encoder -> method -> ``{"layer", "aer", "last_layer", "last_layer_aer"}``: the
    argmin of AER over layers (0 = embeddings) and the last layer's AER."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for k, rec in enumerate(records):
        where = _where(rec, k, "encoder analysis")
        enc = str(_get(rec, "encoder", where))
        if enc in out:
            raise InputError(f"{where}: a second record for encoder {enc!r}")
        out[enc] = {}
        for method, vals in _get(rec, "aer_by_layer", where).items():
            aer = _series(vals, f"{where}: aer_by_layer.{method}")
            b = best_layer(aer)
            out[enc][method] = {
                "layer": b,
                "aer": None if b is None else aer[b],
                "last_layer": len(aer) - 1,
                "last_layer_aer": aer[-1] if aer else None,
            }
    return out


def aer_frame(
    records: Sequence[Record], reference: Record | None = None, *, decimals: int = 3
) -> AnalysisTable:
    """One row per encoder x method (004: argmax / optimal transport over layer-l
    similarities): the layer of the lowest AER, that AER, the AER at the last layer,
    and precision / recall at the best layer when recorded; eflomal's symmetrised links
    (``reference``) as a last row. AER (Och & Ney 2003) in [0, 1], lower is better."""
    if not records:
        raise InputError("encoder analyses: no records")
    best = best_aer(records)
    methods = _methods(records)
    columns = ["best layer", "AER (best layer)", "AER (last layer)", "precision", "recall"]
    cells: dict[tuple[str, str], list[float]] = {}
    fixed: dict[tuple[str, str], str] = {}
    rows: list[tuple[str, str]] = []
    for k, rec in enumerate(records):
        where = _where(rec, k, "encoder analysis")
        enc = str(rec["encoder"])
        for method in methods:
            if method not in best[enc]:
                continue
            b = best[enc][method]
            row_id = f"{enc}/{method}"
            rows.append((row_id, f"{enc} ({method})"))
            if b["layer"] is not None:
                cells[(row_id, "best layer")] = [float(b["layer"])]
                fixed[(row_id, "best layer")] = str(b["layer"])
                cells[(row_id, "AER (best layer)")] = [b["aer"]]
            if b["last_layer_aer"] is not None:
                cells[(row_id, "AER (last layer)")] = [b["last_layer_aer"]]
            for col in ("precision", "recall"):
                per_layer = (rec.get(f"{col}_by_layer") or {}).get(method)
                if per_layer is not None and b["layer"] is not None:
                    vals = _series(per_layer, f"{where}: {col}_by_layer.{method}")
                    if b["layer"] < len(vals) and vals[b["layer"]] is not None:
                        cells[(row_id, col)] = [vals[b["layer"]]]
    notes = [
        "AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|) against the gold links (Och & Ney 2003; "
        "lower is better); best layer = the layer of the lowest AER (0 = embeddings), "
        "precision and recall at that layer."
    ]
    golds = {
        str((rec.get("gold") or {}).get("source")): (rec.get("gold") or {}).get("sentences")
        for rec in records
    }
    if reference:
        ref_where = _where(reference, 0, "eflomal reference")
        aer = finite_number(_get(reference, "aer", ref_where), f"{ref_where}: aer")
        rows.append(("reference", str(reference.get("aligner", "eflomal"))))
        fixed[("reference", "best layer")] = MISSING
        if aer is not None:
            cells[("reference", "AER (best layer)")] = [aer]
        for col in ("precision", "recall"):
            v = finite_number(reference.get(col), f"{ref_where}: {col}")
            if v is not None:
                cells[("reference", col)] = [v]
        golds.setdefault(
            str((reference.get("gold") or {}).get("source")),
            (reference.get("gold") or {}).get("sentences"),
        )
        notes.append(
            f"{reference.get('aligner', 'eflomal')}: the alignment stage's statistical "
            "aligner, run on the gold sentences together with "
            f"{reference.get('training_pairs', '?')} training pairs (no layers)."
        )
    gold_text = "; ".join(f"{g} ({n} sentences)" for g, n in golds.items())
    notes.append(
        f"Gold: {gold_text}."
        if len(golds) == 1
        else f"Warning: the rows use different gold sets ({gold_text}); not comparable."
    )
    return _table(
        "aer",
        "Word alignment from representations (004): AER by layer, best layer per encoder "
        "and method",
        "Encoder (method)",
        rows,
        columns,
        cells,
        decimals=decimals,
        seeds=[1] * len(rows),
        footnotes=notes,
        fixed=fixed,
        lower_is_better=["AER (best layer)", "AER (last layer)"],
        not_scores=["best layer"],
    )


def _set_records(records: Sequence[Record]) -> dict[str, dict[str, Any]]:
    """Set id -> {"pair", "sentences", "by_encoder": {encoder: the set's record}} of the
    records' ``gold_sets`` (analysis.gold.sets), in the first record's order."""
    out: dict[str, dict[str, Any]] = {}
    for k, rec in enumerate(records):
        where = _where(rec, k, "encoder analysis")
        sets = rec.get("gold_sets") or {}
        if not isinstance(sets, Mapping):
            raise InputError(f"{where}: gold_sets: expected a mapping")
        for sid, one in sets.items():
            entry = out.setdefault(
                str(sid), {"pair": one.get("pair"), "sentences": one.get("sentences"), "by": {}}
            )
            entry["by"][str(_get(rec, "encoder", where))] = one
    return out


#: The short name of the published figures' source, in their rows' labels.
PUBLISHED_LABEL = "published, awesome-align README"


def languages_outside(records: Sequence[Record], languages: Sequence[str]) -> dict[str, list[str]]:
    """Set id -> the languages of its pair that are not among ``languages`` (the
    configured ones, those the continued pre-training trains on), for the sets that
    have any."""
    out: dict[str, list[str]] = {}
    for sid, v in _set_records(records).items():
        outside = [lang for lang in str(v["pair"]).split("-") if lang not in languages]
        if outside:
            out[sid] = outside
    return out


def gold_sets_frame(
    records: Sequence[Record],
    reference: Record | None = None,
    *,
    languages: Sequence[str] | None = None,
) -> AnalysisTable:
    """AER (percent, best layer) of every encoder x method and of eflomal on each public
    gold set (``gold_sets`` of the records), beside the published figures of
    awesome-align's README for the same test sets
    (:data:`xlalign.analysis.gold.PUBLISHED_AER`): rows labelled with their source and
    never bolded, the best cell of a column being picked among this run's rows only (the
    published ones are another run, with its own tokenisation and training data).

    ``languages`` (the configured ones): a note names each set with a language outside
    them, which the continued pre-training runs did not train on; such sets are kept
    (the published figures are for them too) and said to be so."""
    from xlalign.analysis.gold import PUBLISHED_AER, PUBLISHED_AER_SOURCE, published_key

    sets = _set_records(records)
    if not sets:
        raise InputError("encoder analyses: no record has gold_sets")
    columns = [f"{sid} ({v['pair']})" for sid, v in sets.items()]
    col_of = dict(zip(sets, columns, strict=True))
    cells: dict[tuple[str, str], list[float]] = {}
    fixed: dict[tuple[str, str], str] = {}
    rows: list[tuple[str, str]] = []
    methods = _methods(records)
    for k, rec in enumerate(records):
        enc = str(_get(rec, "encoder", _where(rec, k, "encoder analysis")))
        for method in methods:
            row_id = f"{enc}/{method}"
            rows.append((row_id, f"{enc} ({method}, best layer)"))
            for sid, v in sets.items():
                one = v["by"].get(enc)
                vals = (one or {}).get("aer_by_layer", {}).get(method) if one else None
                if vals is None:
                    continue
                series = _series(vals, f"{enc}: gold_sets.{sid}.aer_by_layer.{method}")
                b = best_layer(series)
                if b is not None:
                    aer = 100 * float(series[b])  # type: ignore[arg-type]
                    cells[(row_id, col_of[sid])] = [aer]
                    fixed[(row_id, col_of[sid])] = f"{aer:.1f} (layer {b})"
    notes = [
        "AER in percent (Och & Ney 2003; lower is better) on each set as published "
        "(sure and possible links, the set's own tokens); encoders at their best layer "
        "(0 = embeddings)."
    ]
    ref_sets = (reference or {}).get("gold_sets") or {}
    if ref_sets:
        rows.append(("eflomal", "eflomal (this run)"))
        trained = []
        for sid, one in ref_sets.items():
            aer = finite_number(one.get("aer"), f"eflomal reference: gold_sets.{sid}.aer")
            if aer is not None and sid in col_of:
                cells[("eflomal", col_of[sid])] = [100 * aer]
            trained.append(f"{sid}: {one.get('training_pairs', '?')}")
        notes.append(
            "eflomal (this run): grow-diag-final-and, trained on the set's sentences with "
            f"the pair's bitext where configured (training pairs: {', '.join(trained)}); "
            "with few or no training pairs it is far below the published figure."
        )
    published = []
    for system, per_pair in PUBLISHED_AER.items():
        row_id = f"published/{system}"
        published.append(row_id)
        rows.append((row_id, f"{system} ({PUBLISHED_LABEL})"))
        for sid, v in sets.items():
            value = per_pair.get(published_key(str(v["pair"])))
            if value is not None:
                cells[(row_id, col_of[sid])] = [value]
    notes.append(
        f"Rows marked '{PUBLISHED_LABEL}': {PUBLISHED_AER_SOURCE}; none is published for "
        "en-hi. They are another run (their own tokenisation, training data and, for "
        "mBERT, extraction), quoted for orientation: never bolded, and the bold best cell "
        "of a column is the best of this run's rows."
    )
    notes.append(
        "Encoders scored: the configured encoder and its continued pre-training and "
        "fine-tuned states; the meta-pretrained (004) and derived-language (001) models are "
        "not scored on these sets (they are trained on other languages and evaluated by "
        "their own stages)."
    )
    if languages is not None:
        outside = languages_outside(records, languages)
        if outside:
            named = "; ".join(f"{sid} ({', '.join(langs)})" for sid, langs in outside.items())
            notes.append(
                f"Languages outside the configured ones: {named}. The continued "
                "pre-training runs saw no text of them (the base encoder's own "
                "pre-training may have): their AER there measures alignment carried over "
                "to an untrained language. Kept, beside the published figures for the "
                "same sets."
            )
    notes.append(
        "Sets: "
        + "; ".join(f"{sid} ({v['sentences']} sentence pairs)" for sid, v in sets.items())
        + "."
    )
    return _table(
        "aer_gold_sets",
        "AER on the public gold sets, best layer, beside the published figures",
        "System",
        rows,
        columns,
        cells,
        decimals=1,
        seeds=[1] * len(rows),
        footnotes=notes,
        fixed=fixed,
        lower_is_better=columns,
        unranked=published,
    )


def gold_set_layers_frame(records: Sequence[Record], set_id: str) -> AnalysisTable:
    """AER (percent) of every encoder x method at every layer of one public gold set."""
    sets = _set_records(records)
    if set_id not in sets:
        raise InputError(f"encoder analyses: no record has gold set {set_id!r}")
    entry = sets[set_id]
    series_of: dict[str, list[float | None]] = {}
    rows: list[tuple[str, str]] = []
    for enc, one in entry["by"].items():
        for method, vals in (one.get("aer_by_layer") or {}).items():
            row_id = f"{enc}/{method}"
            rows.append((row_id, f"{enc} ({method})"))
            series_of[row_id] = _series(vals, f"{enc}: gold_sets.{set_id}.aer_by_layer")
    depth = max((len(v) for v in series_of.values()), default=0)
    columns = [f"layer {i}" for i in range(depth)]
    cells = {
        (row_id, f"layer {i}"): [100 * float(v)]
        for row_id, series in series_of.items()
        for i, v in enumerate(series)
        if v is not None
    }
    return _table(
        f"aer_by_layer_{set_id}",
        f"AER (percent) by layer on {set_id} ({entry['pair']}, {entry['sentences']} pairs)",
        "Encoder (method)",
        rows,
        columns,
        cells,
        decimals=1,
        seeds=[1] * len(rows),
        footnotes=["Layer 0 = the embeddings; lower is better."],
        lower_is_better=columns,
    )


def _plot_by_layer(ax: Any, k: int, values: Sequence[float | None], label: str) -> None:
    """One series over layers 0, 1, ... (the ``k``-th line's colour; None left as a gap)."""
    ax.plot(
        range(len(values)),
        _nan(values),
        color=PALETTE[k % len(PALETTE)],
        marker="o",
        markersize=3,
        label=label,
    )


def aer_by_layer_figure(records: Sequence[Record], reference: Record | None = None) -> Figure:
    """004 Figure 4: AER by layer, one line per encoder, one panel per method (argmax,
    ot); eflomal's AER a dashed horizontal line."""
    methods = _methods(records)
    best_aer(records)  # validates every series
    ref_aer = None
    if reference:
        where = _where(reference, 0, "eflomal reference")
        ref_aer = finite_number(_get(reference, "aer", where), f"{where}: aer")
    with style():
        fig = Figure(figsize=(0.6 + 3.8 * len(methods), 3.6))
        axes = fig.subplots(1, len(methods), squeeze=False, sharey=True)[0]
        for ax, method in zip(axes, methods, strict=True):
            for i, rec in enumerate(records):
                vals = rec["aer_by_layer"].get(method)
                if vals is None:
                    continue
                _plot_by_layer(ax, i, _series(vals, method), str(rec["encoder"]))
            if ref_aer is not None:
                ax.axhline(
                    ref_aer,
                    color="#333333",
                    linestyle="--",
                    linewidth=1.0,
                    label=str(reference.get("aligner", "eflomal")),
                )  # type: ignore[union-attr]
            ax.set_title(f"{method}: AER by layer")
            ax.set_xlabel("layer (hidden_states; 0 = embeddings)")
            ax.xaxis.get_major_locator().set_params(integer=True)
        axes[0].set_ylabel("AER (lower is better)")
        fig.suptitle("Word alignment from representations: alignment error rate by layer")
        _legend(fig, axes)
    return fig


def _legend(fig: Figure, axes: Any) -> None:
    handles: dict[str, Any] = {}
    for ax in np.asarray(axes).flat:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, h)
    if handles:
        fig.legend(
            list(handles.values()),
            list(handles),
            loc="outside lower center",
            ncols=min(4, len(handles)),
        )


def aer_figure(records: Sequence[Record], reference: Record | None, stem: PathLike) -> list[Path]:
    """Write :func:`aer_by_layer_figure` as ``<stem>.png`` and ``<stem>.svg``."""
    return save_figure(aer_by_layer_figure(records, reference), stem)


def word_score_by_layer_figure(records: Sequence[Record]) -> Figure:
    """The word alignment score (percent of gold source words whose nearest target word
    by cosine is a gold counterpart) by layer, one line per encoder."""
    with style():
        fig = Figure(figsize=(5.6, 3.6))
        ax = fig.add_subplot()
        for k, rec in enumerate(records):
            where = _where(rec, k, "encoder analysis")
            vals = _series(_get(rec, "word_score_by_layer", where), f"{where}: word_score_by_layer")
            _plot_by_layer(ax, k, vals, str(_get(rec, "encoder", where)))
        ax.set_title("Word alignment score by layer")
        ax.set_xlabel("layer (hidden_states; 0 = embeddings)")
        ax.set_ylabel("words whose nearest neighbour is gold, %")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def word_score_figure(records: Sequence[Record], stem: PathLike) -> list[Path]:
    """Write :func:`word_score_by_layer_figure` as ``<stem>.png`` and ``<stem>.svg``."""
    return save_figure(word_score_by_layer_figure(records), stem)


@dataclass
class _Dist:
    encoder: str
    pair: str
    entry: Mapping[str, Any]
    where: str
    bins: list[float]
    related: list[float]
    unrelated: list[float]


def _distances(records: Sequence[Record]) -> list[_Dist]:
    """Every (encoder, language pair) distance summary with its histogram: either
    ``histogram: {bins, related, unrelated}`` or ``bins`` with ``related.histogram`` and
    ``unrelated.histogram`` (:func:`xlalign.analysis.distances.summarise`)."""
    out = []
    for k, rec in enumerate(records):
        where = _where(rec, k, "encoder analysis")
        enc = str(_get(rec, "encoder", where))
        for pair, d in (rec.get("distances") or {}).items():
            at = f"{where}: distances.{pair}"
            for side in ("related", "unrelated"):
                _get(d, side, at)
            if isinstance(d.get("histogram"), Mapping):
                h = d["histogram"]
                bins, rel, unrel = (
                    _get(h, key, f"{at}.histogram") for key in ("bins", "related", "unrelated")
                )
            else:
                bins = _get(d, "bins", at)
                rel = _get(d, "related.histogram", at)
                unrel = _get(d, "unrelated.histogram", at)
            edges = [e for e in _series(bins, f"{at}.bins") if e is not None]
            rel_c = [v or 0.0 for v in _series(rel, f"{at} related histogram")]
            unrel_c = [v or 0.0 for v in _series(unrel, f"{at} unrelated histogram")]
            if len(edges) < 2 or len(rel_c) != len(edges) - 1 or len(unrel_c) != len(edges) - 1:
                raise InputError(
                    f"{at}: histogram of {len(rel_c)}/{len(unrel_c)} counts for "
                    f"{len(edges)} bin edges; expected one count per bin"
                )
            out.append(_Dist(enc, str(pair), d, at, edges, rel_c, unrel_c))
    return out


def _separation(d: Mapping[str, Any], at: str) -> dict[str, float | None]:
    """The separation measures a summary holds, by display name."""
    out: dict[str, float | None] = {}
    sep = d.get("separation")
    if isinstance(sep, Mapping) and "value" in sep:
        out[str(sep.get("name", "separation"))] = finite_number(
            sep["value"], f"{at}.separation.value"
        )
    if "mean_difference" in d:
        out["mean unrelated − related"] = finite_number(
            d["mean_difference"], f"{at}.mean_difference"
        )
    if "auc_related_closer" in d:
        out["P(related closer)"] = finite_number(
            d["auc_related_closer"], f"{at}.auc_related_closer"
        )
    return out


def distances_frame(records: Sequence[Record], *, decimals: int = 2) -> AnalysisTable:
    """003 section 5.4's numbers behind Figure 1: per encoder state and language pair,
    the L2 distances of related (word-aligned) and unrelated pairs: mean, median and n
    of each, and whatever separation measures the summary holds (the mean difference,
    P(related closer) = the Mann-Whitney AUC). Descriptive: nothing is bolded."""
    dists = _distances(records)
    if not dists:
        raise InputError("encoder analyses: no record has 'distances'")
    columns = [
        "layer",
        "related mean",
        "related median",
        "unrelated mean",
        "unrelated median",
        "n related",
        "n unrelated",
    ]
    cells: dict[tuple[str, str], list[float]] = {}
    fixed: dict[tuple[str, str], str] = {}
    rows = []
    for d in dists:
        row_id = f"{d.encoder}/{d.pair}"
        rows.append((row_id, f"{d.encoder} ({d.pair})"))
        layer = finite_number(d.entry.get("layer"), f"{d.where}.layer")
        if layer is not None:
            cells[(row_id, "layer")] = [layer]
            fixed[(row_id, "layer")] = str(int(layer))
        for side in ("related", "unrelated"):
            s = d.entry[side]
            for stat in ("mean", "median", "n"):
                v = finite_number(s.get(stat), f"{d.where}.{side}.{stat}")
                col = f"n {side}" if stat == "n" else f"{side} {stat}"
                if v is not None:
                    cells[(row_id, col)] = [v]
                    if stat == "n":
                        fixed[(row_id, col)] = str(int(v))
        for name, v in _separation(d.entry, d.where).items():
            if name not in columns:
                columns.append(name)
            if v is not None:
                cells[(row_id, name)] = [v]
    return _table(
        "distances",
        "L2 distances between contextual vectors of related and unrelated word pairs (003 "
        "section 5.4)",
        "Encoder (pair)",
        rows,
        columns,
        cells,
        decimals=decimals,
        seeds=[1] * len(rows),
        footnotes=[
            "Related: word pairs linked by the word aligner in parallel sentences; unrelated: "
            "words of different sentence pairs. P(related closer): probability that a random "
            "related pair is closer than a random unrelated one (Mann-Whitney AUC; not a "
            "number 003 reports)."
        ],
        fixed=fixed,
        not_scores=columns,
    )


def distances_histogram_figure(records: Sequence[Record]) -> Figure:
    """003 Figure 1: overlaid histograms (densities, so samples of different sizes
    compare) of related and unrelated L2 distances, one panel per encoder state
    (columns) and language pair (rows), shared axes."""
    dists = _distances(records)
    if not dists:
        raise InputError("encoder analyses: no record has 'distances'")
    encoders = list(dict.fromkeys(d.encoder for d in dists))
    pairs = list(dict.fromkeys(d.pair for d in dists))
    lo, hi = math.inf, -math.inf
    for d in dists:
        for counts in (d.related, d.unrelated):
            nz = [i for i, c in enumerate(counts) if c > 0]
            if nz:
                lo, hi = min(lo, d.bins[nz[0]]), max(hi, d.bins[nz[-1] + 1])
    with style():
        fig = Figure(figsize=(0.6 + 3.0 * len(encoders), 0.8 + 2.4 * len(pairs)))
        axes = fig.subplots(len(pairs), len(encoders), squeeze=False, sharex=True, sharey=True)
        for d in dists:
            ax = axes[pairs.index(d.pair)][encoders.index(d.encoder)]
            edges = np.asarray(d.bins)
            widths = np.diff(edges)
            for i, (side, counts) in enumerate(
                (("related", d.related), ("unrelated", d.unrelated))
            ):
                c = np.asarray(counts, dtype=float)
                dens = c / (c.sum() * widths) if c.sum() > 0 else c
                ax.stairs(dens, edges, fill=True, alpha=0.45, color=PALETTE[i], label=side)
            ax.set_title(f"{d.encoder}\n{d.pair}, layer {d.entry.get('layer')}")
        for ax in axes[-1]:
            ax.set_xlabel("L2 distance")
        for ax in axes[:, 0]:
            ax.set_ylabel("density")
        if lo < hi:
            axes[0][0].set_xlim(lo, hi)
        for r in range(len(pairs)):
            for c in range(len(encoders)):
                if not axes[r][c].has_data():
                    axes[r][c].set_visible(False)
        fig.suptitle("L2 distances of related and unrelated word pairs")
        _legend(fig, axes)
    return fig


def distances_figure(records: Sequence[Record], stem: PathLike) -> list[Path]:
    """Write :func:`distances_histogram_figure` as ``<stem>.png`` and ``<stem>.svg``."""
    return save_figure(distances_histogram_figure(records), stem)


def zero_shot_transfer(runs: Sequence[Record]) -> dict[str, dict[str, float]]:
    """Encoder -> task -> zero-shot score of fine-tuning results (the zero-shot stage's
    records: ``encoder``, ``task``, ``summary.per_language``): per seed the mean over the
    target languages (XTREME's average), then the mean over seeds."""
    seeds: dict[tuple[str, str], list[float]] = {}
    for k, rec in enumerate(runs):
        where = _where(rec, k, "fine-tuning result")
        per = _get(rec, "summary.per_language", where)
        if not isinstance(per, Mapping):
            raise InputError(f"{where}: summary.per_language: expected a mapping lang -> score")
        checked = [
            finite_number(v, f"{where}: summary.per_language.{lang}") for lang, v in per.items()
        ]
        vals = [v for v in checked if v is not None]
        if vals:
            key = (str(_get(rec, "encoder", where)), str(_get(rec, "task", where)))
            seeds.setdefault(key, []).append(statistics.fmean(vals))
    out: dict[str, dict[str, float]] = {}
    for (enc, task), vals in seeds.items():
        out.setdefault(enc, {})[task] = statistics.fmean(vals)
    return out


def alignment_transfer_by_layer(
    records: Sequence[Record], transfer: Mapping[str, Mapping[str, float]]
) -> dict[str, list[dict[str, Any]]]:
    """Per task and layer, Spearman's ρ (two-sided p) between the encoders' word alignment
    score at that layer and their zero-shot score (``transfer``: encoder -> task ->
    score, :func:`zero_shot_transfer`), across the encoders that have both: 001's
    alignment/transfer correlation (Figure 3, Appendix E) with the contextual word
    alignment score of each layer in place of the embedding score. Positive ρ: better
    aligned, better transfer."""
    from xlalign.analysis.correlation import spearman

    scores: dict[str, list[float | None]] = {}
    for k, rec in enumerate(records):
        where = _where(rec, k, "encoder analysis")
        enc = str(_get(rec, "encoder", where))
        if enc in transfer and rec.get("word_score_by_layer"):
            scores[enc] = _series(rec["word_score_by_layer"], f"{where}: word_score_by_layer")
    tasks = sorted({t for enc in scores for t in transfer[enc]})
    depth = max((len(v) for v in scores.values()), default=0)
    out: dict[str, list[dict[str, Any]]] = {}
    for task in tasks:
        encs = [e for e in scores if task in transfer[e]]
        out[task] = []
        for layer in range(depth):
            xs = [scores[e][layer] if layer < len(scores[e]) else None for e in encs]
            res = spearman(xs, [transfer[e][task] for e in encs])
            out[task].append({"layer": layer, "encoders": encs, **res})
    return out


def _correlation_lines(by_layer: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    lines = []
    for task, rows in by_layer.items():
        defined = [r for r in rows if r["rho"] is not None]
        if not defined:
            reason = rows[0]["reason"] if rows else "no layer"
            lines.append(f"- {task}: ρ undefined ({reason})")
            continue
        best = max(defined, key=lambda r: r["rho"])
        cells = ", ".join(
            f"{r['layer']}: {r['rho']:.2f}" if r["rho"] is not None else f"{r['layer']}: –"
            for r in rows
        )
        p = best["p_value"]
        p_text = f"p = {p:.2g}" if p >= 1e-3 else "p < 0.001"
        lines.append(
            f"- {task} (n = {best['n']} encoders): highest ρ = {best['rho']:.2f} at layer "
            f"{best['layer']} ({p_text}); by layer {cells}"
        )
    return lines


def correlation_by_layer_figure(by_layer: Mapping[str, Sequence[Mapping[str, Any]]]) -> Figure:
    """Spearman's ρ of alignment and transfer by layer, one line per task."""
    with style():
        fig = Figure(figsize=(5.6, 3.6))
        ax = fig.add_subplot()
        for k, (task, rows) in enumerate(by_layer.items()):
            _plot_by_layer(ax, k, [r["rho"] for r in rows], task)
        ax.axhline(0.0, color="#888888", linewidth=0.8)
        ax.set_ylim(-1.05, 1.05)
        ax.set_title("Alignment and zero-shot transfer across encoders")
        ax.set_xlabel("layer of the word alignment score (0 = embeddings)")
        ax.set_ylabel("Spearman ρ")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def write_analysis(
    records: Sequence[Record],
    reference: Record | None,
    *,
    out_md: PathLike,
    out_tex: PathLike,
    fig_dir: PathLike,
    summary_json: PathLike,
    transfer: Mapping[str, Mapping[str, float]] | None = None,
    languages: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The AER table and, when any record has them, the distances table (``out_md``;
    both in ``out_tex``), the figures in ``fig_dir`` (``aer_by_layer``,
    ``word_score_by_layer`` when every record has scores, ``distances``,
    ``alignment_transfer`` with ``transfer``), and ``summary_json``: the best AER layer
    per encoder and method, eflomal's AER, the tables' cells, the alignment/transfer
    correlation by layer (:func:`alignment_transfer_by_layer`, with ``transfer``: encoder
    -> task -> zero-shot score) and the figure file names. ``languages``: the configured
    ones, for the gold-set table's note on sets outside them (:func:`gold_sets_frame`)."""
    aer = aer_frame(records, reference)
    tables = [aer]
    fig_dir = Path(fig_dir)
    fig_dir.mkdir(parents=True, exist_ok=True)
    paths = aer_figure(records, reference, fig_dir / "aer_by_layer")
    if all(rec.get("word_score_by_layer") for rec in records):
        paths += word_score_figure(records, fig_dir / "word_score_by_layer")
    if any(rec.get("gold_sets") for rec in records):
        tables.append(gold_sets_frame(records, reference, languages=languages))
        tables += [gold_set_layers_frame(records, sid) for sid in _set_records(records)]
    if _distances(records):
        tables.append(distances_frame(records))
        paths += distances_figure(records, fig_dir / "distances")
    best = best_aer(records)
    lines = [
        f"- {enc} ({method}): best layer {b['layer']}, AER {b['aer']:.3f}"
        for enc, per in best.items()
        for method, b in per.items()
        if b["layer"] is not None
    ]
    parts = ["# Alignment analyses", ""]
    for t in tables:
        parts += [t.to_markdown().rstrip("\n"), ""]
    parts += ["## Best AER layer", "", *lines, ""]
    correlation = alignment_transfer_by_layer(records, transfer) if transfer else {}
    if correlation:
        parts += [
            "## Alignment and zero-shot transfer (001 Figure 3, by layer)",
            "",
            "Spearman's ρ across the encoders between the word alignment score of a layer "
            "and the zero-shot score (mean over target languages and seeds); positive = "
            "better aligned, better transfer.",
            "",
            *_correlation_lines(correlation),
            "",
        ]
        paths += save_figure(
            correlation_by_layer_figure(correlation), fig_dir / "alignment_transfer"
        )
    _write_text(out_md, "\n".join(parts))
    _write_text(out_tex, "\n".join(t.to_latex() for t in tables))
    summary: dict[str, Any] = {
        "best_aer": best,
        "reference": (
            {
                k: reference.get(k)
                for k in ("aligner", "aer", "precision", "recall", "training_pairs")
            }
            if reference
            else None
        ),
        "gold_sets": {
            "encoders": {
                sid: {
                    enc: {
                        m: {
                            "layer": best_layer(v),
                            "aer": None if best_layer(v) is None else v[best_layer(v)],
                        }
                        for m, v in (one.get("aer_by_layer") or {}).items()
                    }
                    for enc, one in entry["by"].items()
                }
                for sid, entry in _set_records(records).items()
            },
            "eflomal": (reference or {}).get("gold_sets"),
            "languages_outside": (
                languages_outside(records, languages) if languages is not None else None
            ),
        },
        "tables": {t.name: t.summary() for t in tables},
        "alignment_transfer": correlation,
        "figures": [p.name for p in paths],
    }
    write_json(summary_json, summary)
    return summary
