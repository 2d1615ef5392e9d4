"""The report's figures: BLI per language, retrieval by layer, pre-training losses,
zero-shot deltas and the X2S-M learning curve, as PNG and SVG.

Every plot has two functions: ``<plot>_figure(data, ...)`` builds and returns the
:class:`~matplotlib.figure.Figure` (what the tests inspect), and ``<plot>(data, stem, ...)``
builds it and writes ``<stem>.png`` and ``<stem>.svg``, each atomically, returning both
paths. The data are plain mappings (helpers ``*_from_*`` extract them from the records the
workflow writes); missing values are ``None`` (or NaN) and are drawn as gaps, never as 0.

The same data give byte-identical files: every figure is drawn under one fixed style
(matplotlib's defaults plus :data:`RC`, whatever the user's ``matplotlibrc``), with a
fixed ``svg.hashsalt`` (SVG element ids), text as paths in the bundled DejaVu Sans, and no
date or software version in the metadata. Figures are built without pyplot, so nothing is
ever shown or kept in pyplot's figure list; the Agg backend is selected at import unless
pyplot is already loaded (a notebook keeps its own backend).

Titles and axis labels name the metric and the protocol (``BLI P@1 (NN)``,
``accuracy@1 en→xx``), so a figure read alone says what it shows.
"""

from __future__ import annotations

import contextlib
import math
import statistics
import sys
from collections.abc import Iterator, Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import matplotlib

if "matplotlib.pyplot" not in sys.modules:
    matplotlib.use("Agg")

import matplotlib.style
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, atomic_path
from xlalign.reporting.formats import finite_number

#: Series colours, in data order (colour-blind-safe Okabe-Ito, then greys).
PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
    "#777777",
    "#BBBBBB",
)
#: The fixed style every figure is drawn and saved under (on top of matplotlib's defaults).
RC: dict[str, Any] = {
    "svg.hashsalt": "xlalign",
    "svg.fonttype": "path",
    "font.family": ["DejaVu Sans"],
    "font.size": 9.0,
    "axes.titlesize": 10.0,
    "axes.labelsize": 9.0,
    "legend.fontsize": 8.0,
    "axes.prop_cycle": cycler(color=list(PALETTE)),
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "figure.dpi": 100.0,
    "savefig.dpi": 150.0,
    "savefig.format": "png",
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.05,
    "figure.constrained_layout.use": True,
    "path.simplify": True,
}
#: Per-format metadata: no date, no software version (byte-identical re-runs).
METADATA: dict[str, dict[str, Any]] = {
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
}
FORMATS = ("png", "svg")
#: Label of the validation MLM loss in loss curves (a series key, not an objective).
VALID_MLM = "valid_mlm"

Value = float | int | None
#: A cell of a bar plot: a mean, ``(mean, std)`` or ``(mean, None)``; None = missing.
Cell = Value | tuple[Value, Value]


@contextlib.contextmanager
def style() -> Iterator[None]:
    """Matplotlib's defaults plus :data:`RC`, ignoring the user's rc settings."""
    with matplotlib.style.context(["default", RC]):
        yield


def save_figure(fig: Figure, stem: PathLike) -> list[Path]:
    """Write ``<stem>.png`` and ``<stem>.svg`` atomically; return their paths.

    The stem's name is kept whole (``bli.nn`` gives ``bli.nn.png``), its folder created.
    """
    stem = Path(stem)
    written = []
    with style():
        for fmt in FORMATS:
            path = stem.parent / f"{stem.name}.{fmt}"
            with atomic_path(path, suffix=f".{fmt}") as tmp:
                fig.savefig(tmp, format=fmt, metadata=METADATA[fmt])
            written.append(path)
    return written


# ---------------------------------------------------------------------------- checks


def _cell(value: Any, at: str) -> tuple[float | None, float | None]:
    """``(mean, std)`` of a bar cell (see :data:`Cell`)."""
    if isinstance(value, tuple | list):
        if len(value) != 2:
            raise InputError(f"{at}: expected (mean, std), got {len(value)} values: {value!r}")
        mean, std = finite_number(value[0], f"{at} mean"), finite_number(value[1], f"{at} std")
    else:
        mean, std = finite_number(value, at), None
    if std is not None and std < 0:
        raise InputError(f"{at}: negative std {std}")
    return mean, (std if mean is not None else None)


def _nonempty(data: Any, what: str, expected: str) -> None:
    if not isinstance(data, Mapping):
        raise InputError(f"{what}: expected a mapping {expected}, got {type(data).__name__}")
    if not data:
        raise InputError(f"{what}: no data; expected a mapping {expected}")


def _series(values: Any, at: str) -> list[float | None]:
    """The numbers of a list, tuple, array or Series (None/NaN kept as None)."""
    if isinstance(values, str | bytes | Mapping) or not hasattr(values, "__iter__"):
        raise InputError(f"{at}: expected a sequence of numbers, got {type(values).__name__}")
    return [finite_number(v, f"{at}[{i}]") for i, v in enumerate(values)]


def _number(value: Any, at: str) -> float:
    """A finite number of a results file (None or NaN refused too), naming ``at``."""
    v = finite_number(value, at)
    if v is None:
        raise InputError(f"{at}: expected a number, got {value!r}")
    return v


def _nan(values: Sequence[float | None]) -> list[float]:
    return [math.nan if v is None else v for v in values]


def _arrow(direction: str) -> str:
    return direction.replace("->", "→")


# ---------------------------------------------------------------------------- grouped bars


def _grouped_bars(
    ax: Axes,
    cells: dict[str, dict[str, tuple[float | None, float | None]]],
    groups: Sequence[str],
) -> None:
    """One bar per (series, group) with a value, side by side within each group; missing
    values are left out (a gap), error bars only where a std is given."""
    n = len(cells)
    width = 0.8 / n
    for i, (name, row) in enumerate(cells.items()):
        color = PALETTE[i % len(PALETTE)]
        xs, ys, err_x, err_y, errs = [], [], [], [], []
        for g, group in enumerate(groups):
            mean, std = row.get(group, (None, None))
            if mean is None:
                continue
            x = g + (i - (n - 1) / 2) * width
            xs.append(x)
            ys.append(mean)
            if std is not None:
                err_x.append(x)
                err_y.append(mean)
                errs.append(std)
        ax.bar(xs, ys, width=width, color=color, label=name)
        if errs:
            ax.errorbar(
                err_x, err_y, yerr=errs, fmt="none", ecolor="#333333", elinewidth=0.8, capsize=2
            )
    ax.set_xticks(range(len(groups)), list(groups))
    ax.set_xlim(-0.5, len(groups) - 0.5)
    ax.grid(axis="x", visible=False)


def _bar_cells(
    data: Any, what: str, groups: Sequence[str] | None
) -> tuple[dict[str, dict[str, tuple[float | None, float | None]]], list[str]]:
    _nonempty(data, what, "series -> language -> (mean, std)")
    cells: dict[str, dict[str, tuple[float | None, float | None]]] = {}
    seen: list[str] = []
    for name, row in data.items():
        if not isinstance(row, Mapping):
            raise InputError(
                f"{what}[{name!r}]: expected a mapping language -> (mean, std), "
                f"got {type(row).__name__}"
            )
        cells[str(name)] = {str(g): _cell(v, f"{what}[{name!r}][{g!r}]") for g, v in row.items()}
        seen += [str(g) for g in row if str(g) not in seen]
    if groups is None:
        groups = seen
    else:
        groups = [str(g) for g in groups]
        if not groups:
            raise InputError(f"{what}: languages= is empty")
    if not groups:
        raise InputError(f"{what}: no languages in the data")
    if all(cells[s].get(g, (None, None))[0] is None for s in cells for g in groups):
        raise InputError(f"{what}: every value is missing; nothing to plot")
    return cells, list(groups)


def _std_note(cells: Mapping[str, Mapping[str, tuple[Any, Any]]], over: str) -> str:
    has_std = any(std is not None for row in cells.values() for _, std in row.values())
    return f"; error bars: std over {over}" if has_std else ""


def _bar_figure(n_series: int, n_groups: int) -> tuple[Figure, Axes]:
    width = min(14.0, max(4.5, 1.6 + n_groups * (0.35 + 0.18 * n_series)))
    fig = Figure(figsize=(width, 3.6))
    return fig, fig.add_subplot()


# ---------------------------------------------------------------------------- 1. BLI bars


def bli_bars_figure(
    data: Mapping[str, Mapping[str, Cell]],
    *,
    retrieval: str = "nn",
    metric: str = "P@1",
    hub: str = "en",
    languages: Sequence[str] | None = None,
    directions: str = "mean of {hub}→xx and xx→{hub}",
    title: str | None = None,
) -> Figure:
    """Per-language BLI grouped bars: languages on x, one bar per space.

    ``data``: space (display name, e.g. ``X2S-M``) -> language -> ``(mean, std)`` of the
    metric in percent (as the tables print it), ``std`` the std over seeds or None (no
    error bar). A missing language or a None mean leaves a gap. ``directions`` says what a
    value is (Table 5's mean of both directions by default); ``title`` replaces the
    title's first line.
    """
    cells, groups = _bar_cells(data, "bli_bars", languages)
    with style():
        fig, ax = _bar_figure(len(cells), len(groups))
        _grouped_bars(ax, cells, groups)
        label = f"BLI {metric} ({retrieval.upper()})"
        ax.set_title(
            (title or f"{label} per language")
            + f"\n{directions.format(hub=hub)}{_std_note(cells, 'seeds')}"
        )
        ax.set_xlabel(f"language (dictionary pairs with {hub})")
        ax.set_ylabel(f"{label}, %")
        ax.set_ylim(bottom=0)
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def bli_bars(data: Mapping[str, Mapping[str, Cell]], stem: PathLike, **kw: Any) -> list[Path]:
    """Write :func:`bli_bars_figure` as ``<stem>.png`` and ``<stem>.svg``."""
    return save_figure(bli_bars_figure(data, **kw), stem)


def bli_bars_from_table(table: Any) -> dict[str, dict[str, tuple[float | None, float | None]]]:
    """The cells of a :class:`xlalign.reporting.tables.Table` (e.g. ``bli_per_language``):
    row (display name) -> column -> ``(mean, std)``; NaN becomes None (missing, no bar)."""
    values, std = table.values, table.std
    return {
        str(row): {
            str(col): (
                finite_number(_float(values.at[row, col]), f"{table.name}[{row!r}][{col!r}]"),
                finite_number(_float(std.at[row, col]), f"{table.name}[{row!r}][{col!r}] std"),
            )
            for col in values.columns
        }
        for row in values.index
    }


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


# ---------------------------------------------------------------------------- 2. retrieval


def retrieval_by_layer_figure(
    data: Mapping[str, Mapping[str, Sequence[Value]]],
    *,
    set_title: str,
    direction: str = "en->xx",
    layer: int | None = None,
) -> Figure:
    """Accuracy@1 by layer for one retrieval set: one panel per language, one line per
    encoder (the same colour in every panel).

    ``data``: encoder -> language -> accuracy@1 (percent) at each Hugging Face
    ``hidden_states`` index (0 = the embeddings); None = missing (a gap). One call per
    retrieval set and direction; ``layer`` (the configured layer) is a dotted vertical
    line.
    """
    what = "retrieval_by_layer"
    _nonempty(data, what, "encoder -> language -> accuracy by layer")
    sweeps: dict[str, dict[str, list[float | None]]] = {}
    langs: list[str] = []
    for enc, per_lang in data.items():
        _nonempty(per_lang, f"{what}[{enc!r}]", "language -> accuracy by layer")
        sweeps[enc] = {}
        for lang, values in per_lang.items():
            vals = _series(values, f"{what}[{enc!r}][{lang!r}]")
            if not vals:
                raise InputError(f"{what}[{enc!r}][{lang!r}]: no layers")
            sweeps[enc][lang] = vals
            if lang not in langs:
                langs.append(lang)
    cols = min(4, len(langs))
    rows = math.ceil(len(langs) / cols)
    with style():
        fig = Figure(figsize=(0.6 + 3.0 * cols, 0.6 + 2.6 * rows))
        axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=True)
        arrow = _arrow(direction)
        for k, lang in enumerate(langs):
            ax = axes[k // cols][k % cols]
            for i, enc in enumerate(sweeps):
                vals = sweeps[enc].get(lang)
                if vals is None:
                    continue
                ax.plot(
                    range(len(vals)),
                    _nan(vals),
                    color=PALETTE[i % len(PALETTE)],
                    marker="o",
                    markersize=3,
                    label=enc,
                )
            ax.set_title(f"{lang}: accuracy@1 {arrow.replace('xx', lang)}")
            if layer is not None:
                ax.axvline(layer, color="#555555", linestyle=":", linewidth=1.0)
        for k in range(len(langs), rows * cols):
            axes[k // cols][k % cols].set_visible(False)
        for ax in axes[-1]:
            ax.set_xlabel("layer (hidden_states; 0 = embeddings)")
        for ax in axes[:, 0]:
            ax.set_ylabel(f"accuracy@1 {arrow}, %")
        ax.xaxis.get_major_locator().set_params(integer=True)
        fig.suptitle(
            f"{set_title}: accuracy@1 {arrow} by layer"
            + (f"\n(dotted line: the configured layer, {layer})" if layer is not None else "")
        )
        _figure_legend(fig, axes)
    return fig


def _figure_legend(fig: Figure, axes: Any) -> None:
    """One legend for the figure: the first line of each label found in any panel."""
    handles: dict[str, Any] = {}
    for ax in axes.flat:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, h)
    if handles:
        fig.legend(
            list(handles.values()),
            list(handles),
            loc="outside lower center",
            ncols=min(4, len(handles)),
        )


def retrieval_by_layer(
    data: Mapping[str, Mapping[str, Sequence[Value]]], stem: PathLike, **kw: Any
) -> list[Path]:
    """Write :func:`retrieval_by_layer_figure` as ``<stem>.png`` and ``<stem>.svg``."""
    return save_figure(retrieval_by_layer_figure(data, **kw), stem)


def retrieval_by_layer_from_records(
    records: Sequence[Mapping[str, Any]], *, direction: str = "en->xx"
) -> dict[str, dict[str, dict[str, list[float]]]]:
    """Retrieval set -> encoder -> language -> accuracy@1 sweep, from the retrieval jobs'
    records (``results/<name>/zeroshot/<encoder>/retrieval/<set>.json``). Sets without a
    sweep (BUCC mines at the configured layer only) are left out."""
    from xlalign.reporting.zeroshot import retrieval_sweep

    out: dict[str, dict[str, dict[str, list[float]]]] = {}
    for k, rec in enumerate(records):
        for key in ("set", "encoder", "languages"):
            if key not in rec:
                raise InputError(f"retrieval record {k}: no {key!r}; not a retrieval result")
        for lang, res in rec["languages"].items():
            sweep = retrieval_sweep(res, direction)
            if sweep:
                out.setdefault(rec["set"], {}).setdefault(rec["encoder"], {})[lang] = sweep
    return out


# ---------------------------------------------------------------------------- 3. losses


def loss_curves_figure(
    data: Mapping[str, Mapping[str, tuple[Sequence[Value], Sequence[Value]]]],
    *,
    title: str | None = None,
) -> Figure:
    """Continued pre-training losses: one panel per objective, one line per run.

    ``data``: run label -> series -> ``(steps, losses)``; a series is an objective's
    training loss (the mean over the logging interval, keyed by the objective's name) or
    :data:`VALID_MLM`, the validation MLM loss, drawn as markers in the ``mlm`` panel (or
    a panel of its own when no run trains MLM). The same run has the same colour in every
    panel.
    """
    what = "loss_curves"
    _nonempty(data, what, "run -> objective -> (steps, losses)")
    curves: dict[str, dict[str, tuple[list[float], list[float]]]] = {}
    objectives: list[str] = []
    for run, series in data.items():
        _nonempty(series, f"{what}[{run!r}]", "objective -> (steps, losses)")
        curves[run] = {}
        for name, pair in series.items():
            at = f"{what}[{run!r}][{name!r}]"
            if not isinstance(pair, tuple | list) or len(pair) != 2:
                raise InputError(f"{at}: expected (steps, losses)")
            steps, losses = _series(pair[0], f"{at} steps"), _series(pair[1], f"{at} losses")
            if len(steps) != len(losses):
                raise InputError(
                    f"{at}: {len(steps)} steps but {len(losses)} losses; expected one loss per step"
                )
            if any(s is None for s in steps):
                raise InputError(f"{at}: a step is missing")
            curves[run][name] = ([s for s in steps if s is not None], _nan(losses))
            if name != VALID_MLM and name not in objectives:
                objectives.append(name)
    valid_panel = "mlm" if "mlm" in objectives else VALID_MLM
    if any(VALID_MLM in c for c in curves.values()) and valid_panel == VALID_MLM:
        objectives.append(VALID_MLM)
    if not objectives:
        raise InputError(f"{what}: no loss series in the data")
    cols = min(3, len(objectives))
    rows = math.ceil(len(objectives) / cols)
    with style():
        fig = Figure(figsize=(0.8 + 3.4 * cols, 0.6 + 2.6 * rows))
        axes = fig.subplots(rows, cols, squeeze=False, sharex=True)
        for k, obj in enumerate(objectives):
            ax = axes[k // cols][k % cols]
            for i, (run, series) in enumerate(curves.items()):
                color = PALETTE[i % len(PALETTE)]
                if obj in series:
                    steps, losses = series[obj]
                    ax.plot(steps, losses, color=color, linewidth=1.2, label=run)
                if obj == valid_panel and VALID_MLM in series:
                    steps, losses = series[VALID_MLM]
                    ax.plot(
                        steps,
                        losses,
                        color=color,
                        marker="D",
                        markersize=4,
                        linestyle="none",
                        label=f"{run} (validation MLM)",
                    )
            if obj == VALID_MLM:
                ax.set_title("MLM: validation loss (◆)")
            elif obj == valid_panel:
                ax.set_title(f"{obj}: training loss, validation loss (◆)")
            else:
                ax.set_title(f"{obj}: training loss")
            ax.set_ylabel("loss")
        for k in range(len(objectives), rows * cols):
            axes[k // cols][k % cols].set_visible(False)
        for c in range(cols):
            last = max(r for r in range(rows) if r * cols + c < len(objectives))
            axes[last][c].set_xlabel("optimiser step")
            axes[last][c].xaxis.set_tick_params(labelbottom=True)
        fig.suptitle(
            title
            or "Continued pre-training: loss per objective\n(training: mean over each "
            "logging interval; ◆ validation MLM loss)"
        )
        _figure_legend(fig, axes)
    return fig


def loss_curves(
    data: Mapping[str, Mapping[str, tuple[Sequence[Value], Sequence[Value]]]],
    stem: PathLike,
    **kw: Any,
) -> list[Path]:
    """Write :func:`loss_curves_figure` as ``<stem>.png`` and ``<stem>.svg``."""
    return save_figure(loss_curves_figure(data, **kw), stem)


def loss_curves_from_records(
    records: Sequence[Mapping[str, Any]],
) -> dict[str, dict[str, tuple[list[int], list[float]]]]:
    """Run label (``<row> s<seed>``) -> series -> ``(steps, losses)`` from pre-training
    records (``results/<name>/pretrain/<run>/s<seed>.json``).

    The steps come from ``learning_curve`` (the trainer's history: ``<objective>_loss``
    every ``log_every`` steps, ``valid_mlm_loss`` at every evaluation). A record with only
    ``curves`` (``train_<objective>_loss``, ``valid_mlm_loss``, values without steps) has
    them rebuilt from ``params`` as the trainer logs them; lengths that do not fit are an
    error. Per-objective diagnostics (``gcca/corr_1``, ``l2_align/l2``) are not losses and
    are left out.
    """
    if not records:
        raise InputError("loss_curves_from_records: no records")
    out: dict[str, dict[str, tuple[list[int], list[float]]]] = {}
    for k, rec in enumerate(records):
        where = rec.get("_source", f"pre-training record {k}")
        for key in ("row", "seed"):
            if key not in rec:
                raise InputError(f"{where}: no {key!r}; not a pre-training record")
        label = f"{rec['row']} s{rec['seed']}"
        if label in out:
            raise InputError(f"{where}: a second record for run {label!r}")
        if isinstance(rec.get("learning_curve"), list):
            out[label] = _from_history(rec["learning_curve"], where)
        elif isinstance(rec.get("curves"), Mapping):
            out[label] = _from_curves(rec, where)
        else:
            raise InputError(f"{where}: neither 'learning_curve' nor 'curves'")
        if not out[label]:
            raise InputError(f"{where}: no loss in the record's curves")
    return out


def _from_history(
    history: Sequence[Mapping[str, Any]], where: str
) -> dict[str, tuple[list[int], list[float]]]:
    series: dict[str, tuple[list[int], list[float]]] = {}
    for i, entry in enumerate(history):
        at = f"{where}: learning_curve[{i}]"
        if not isinstance(entry, Mapping):
            raise InputError(f"{at}: expected an object with 'step' and losses, got {entry!r:.80}")
        if "step" not in entry:
            raise InputError(f"{at} has no 'step'")
        step = entry["step"]
        if not isinstance(step, int) or isinstance(step, bool) or step < 0:
            raise InputError(f"{at}.step: expected a non-negative integer, got {step!r:.80}")
        for key, value in entry.items():
            if key == "step" or "/" in key or not key.endswith("_loss"):
                continue
            name = VALID_MLM if key == "valid_mlm_loss" else key[: -len("_loss")]
            steps, losses = series.setdefault(name, ([], []))
            steps.append(step)
            losses.append(_number(value, f"{at}.{key}"))
    return series


def _from_curves(rec: Mapping[str, Any], where: str) -> dict[str, tuple[list[int], list[float]]]:
    params = rec.get("params", {})
    try:
        total, log_every = int(params["steps"]), int(params["log_every"])
        eval_every = int(params["eval_every"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(
            f"{where}: 'curves' without steps needs params.steps, log_every and eval_every"
        ) from exc
    train_steps = sorted({*range(log_every, total + 1, log_every), total})
    valid_steps = sorted({0, *range(eval_every, total + 1, eval_every), total})
    series: dict[str, tuple[list[int], list[float]]] = {}
    for key, values in rec["curves"].items():
        if key == "valid_mlm_loss":
            name, steps = VALID_MLM, valid_steps
        elif key.startswith("train_") and key.endswith("_loss"):
            name, steps = key[len("train_") : -len("_loss")], train_steps
        else:
            continue
        if not isinstance(values, list):
            raise InputError(
                f"{where}: curves.{key}: expected a list of losses, got {values!r:.80}"
            )
        if len(values) != len(steps):
            raise InputError(
                f"{where}: curves.{key} has {len(values)} values; expected {len(steps)} "
                f"(steps {total}, logged every {log_every} / evaluated every {eval_every})"
            )
        losses = [_number(v, f"{where}: curves.{key}[{i}]") for i, v in enumerate(values)]
        series[name] = (list(steps), losses)
    return series


# ---------------------------------------------------------------------------- 4. zero-shot


def zeroshot_deltas_figure(
    data: Mapping[str, Mapping[str, Cell]],
    *,
    baseline: str,
    metric: str,
    task: str,
    languages: Sequence[str] | None = None,
) -> Figure:
    """Per-language zero-shot score differences against a baseline encoder: one group per
    language, one bar per model, a line at zero.

    ``data``: model -> language -> ``(mean, std)`` of ``model - baseline`` in the metric's
    points; :func:`zeroshot_deltas_from_runs` gives the mean and the sample std over
    fine-tuning seeds of the per-seed difference (seeds paired). None leaves a gap.
    """
    cells, groups = _bar_cells(data, "zeroshot_deltas", languages)
    with style():
        fig, ax = _bar_figure(len(cells), len(groups))
        _grouped_bars(ax, cells, groups)
        ax.axhline(0.0, color="#333333", linewidth=0.8)
        note = _std_note(cells, "fine-tuning seeds of the paired difference")
        ax.set_title(f"{task}: zero-shot {metric}, model − {baseline}\n{note[2:]}".strip())
        ax.set_xlabel("test language (fine-tuned on English)")
        ax.set_ylabel(f"Δ {metric} vs {baseline}, points")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def zeroshot_deltas(
    data: Mapping[str, Mapping[str, Cell]], stem: PathLike, **kw: Any
) -> list[Path]:
    """Write :func:`zeroshot_deltas_figure` as ``<stem>.png`` and ``<stem>.svg``."""
    return save_figure(zeroshot_deltas_figure(data, **kw), stem)


def zeroshot_deltas_from_runs(
    runs: Sequence[Mapping[str, Any]], *, task: str, baseline: str
) -> dict[str, dict[str, tuple[float | None, float | None]]]:
    """Model -> language -> ``(mean, std)`` of ``score(model) - score(baseline)`` for one
    task, from fine-tuning results (``zeroshot/<encoder>/<task>/ft<seed>.json``).

    Differences are paired by fine-tuning seed (the same seed fine-tunes both encoders on
    the same batches): the mean and sample std over the seeds both have (std None with
    one). A language without a common seed is missing. Scores are ``summary.per_language``
    (the test languages other than English).
    """
    scores: dict[str, dict[str, dict[int, float]]] = {}
    for k, run in enumerate(runs):
        where = run.get("_source", f"fine-tuning result {k}")
        for key in ("task", "encoder", "seed", "summary"):
            if key not in run:
                raise InputError(f"{where}: no {key!r}; not a fine-tuning result")
        if run["task"] != task:
            continue
        per_lang = run["summary"].get("per_language")
        if not isinstance(per_lang, Mapping):
            raise InputError(f"{where}: summary.per_language is not a mapping")
        enc = scores.setdefault(str(run["encoder"]), {})
        for lang, value in per_lang.items():
            v = finite_number(value, f"{where}: summary.per_language.{lang}")
            if v is not None:
                enc.setdefault(lang, {})[int(run["seed"])] = v
    if baseline not in scores:
        raise InputError(
            f"zeroshot_deltas_from_runs: no {task!r} result of the baseline {baseline!r} "
            f"(encoders with results: {sorted(scores)})"
        )
    base = scores[baseline]
    out: dict[str, dict[str, tuple[float | None, float | None]]] = {}
    for enc, per_lang in scores.items():
        if enc == baseline:
            continue
        out[enc] = {}
        for lang in base:
            seeds = sorted(set(per_lang.get(lang, {})) & set(base[lang]))
            diffs = [per_lang[lang][s] - base[lang][s] for s in seeds]
            out[enc][lang] = (
                statistics.fmean(diffs) if diffs else None,
                statistics.stdev(diffs) if len(diffs) > 1 else None,
            )
    if not out:
        raise InputError(f"zeroshot_deltas_from_runs: {task!r} has no model besides {baseline!r}")
    return out


# ---------------------------------------------------------------------------- 5. learning curve

#: Learning-curve method families (id prefix): display name, line style, marker.
_FAMILIES = {"x2s-m-": ("X2S-M", "-", "o"), "aggregate-": ("Aggregation", "--", "s")}
INIT_AGG = "-init-agg"


def _method_style(method: str) -> tuple[str, str, str, str]:
    """(display name, base recipe, line style, marker) of a learning-curve method id.

    The colour follows the base recipe (its X2S-M and aggregation rows share a
    vocabulary); X2S-M is solid, aggregation dashed, X2S-M started from aggregation dotted.
    """
    for prefix, (family, line, marker) in _FAMILIES.items():
        if method.startswith(prefix):
            recipe = method[len(prefix) :]
            if recipe.endswith(INIT_AGG):
                base = recipe[: -len(INIT_AGG)]
                return f"{family} ({base}, init: aggregation)", base, ":", "^"
            return f"{family} ({recipe})", recipe, line, marker
    return method, method, "-.", "v"


def _size_label(x: float) -> str:
    return f"{x / 1000:.3g}k" if x >= 1000 else f"{x:.3g}"


def learning_curve_figure(
    sizes: Sequence[Value],
    data: Mapping[str, Sequence[Value]],
    *,
    metric: str = "P@1",
    retrieval: str = "nn",
    space: str = "joint",
    direction: str | None = None,
    oov: str = "miss",
    xlabel: str = "segmented sentences per language",
) -> Figure:
    """BLI of X2S-M against aggregation by corpus size: one line per method.

    ``sizes``: the x values (corpus sizes, e.g. segmented sentences), ascending; ``data``:
    method id (``x2s-m-<recipe>``, ``aggregate-<recipe>``, ``x2s-m-<recipe>-init-agg``)
    -> the metric in percent at each size (None = not evaluated: a gap). The x axis is
    logarithmic, ticked at the sizes. ``space``, ``direction`` and ``oov`` only label
    the figure (see :func:`learning_curve_from_summary`).
    """
    what = "learning_curve"
    xs = _series(sizes, f"{what} sizes")
    if not xs:
        raise InputError(f"{what}: no sizes")
    if any(x is None or x <= 0 for x in xs):
        raise InputError(f"{what}: sizes must be positive numbers, got {list(sizes)}")
    xs_f = [float(x) for x in xs if x is not None]
    if any(b < a for a, b in pairwise(xs_f)):
        raise InputError(f"{what}: sizes must be in ascending order, got {list(sizes)}")
    _nonempty(data, what, "method -> value per size")
    recipes: list[str] = []
    lines = {}
    for method, values in data.items():
        vals = _series(values, f"{what}[{method!r}]")
        if len(vals) != len(xs):
            raise InputError(
                f"{what}[{method!r}]: {len(vals)} values for {len(xs)} sizes; expected one "
                "value (or None) per size"
            )
        lines[method] = vals
        recipe = _method_style(method)[1]
        if recipe not in recipes:
            recipes.append(recipe)
    with style():
        fig = Figure(figsize=(6.4, 3.8))
        ax = fig.add_subplot()
        for method, vals in lines.items():
            name, recipe, line, marker = _method_style(method)
            ax.plot(
                xs_f,
                _nan(vals),
                color=PALETTE[recipes.index(recipe) % len(PALETTE)],
                linestyle=line,
                marker=marker,
                markersize=4,
                label=name,
            )
        ax.set_xscale("log")
        ax.set_xticks(xs_f, [_size_label(x) for x in xs_f])
        ax.set_xticks([], minor=True)
        label = f"BLI {metric} ({retrieval.upper()})"
        where = "unmapped (shared) space" if space == "joint" else "mapped into English"
        how = direction if direction else "mean of both directions"
        oov_text = "OOV words counted wrong" if oov == "miss" else "covered words only"
        ax.set_title(f"Learning curve: {label}, X2S-M vs aggregation\n{where}, {how}, {oov_text}")
        ax.set_xlabel(f"{xlabel} (log scale)")
        ax.set_ylabel(f"{label}, %")
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def learning_curve(
    sizes: Sequence[Value], data: Mapping[str, Sequence[Value]], stem: PathLike, **kw: Any
) -> list[Path]:
    """Write :func:`learning_curve_figure` as ``<stem>.png`` and ``<stem>.svg``."""
    return save_figure(learning_curve_figure(sizes, data, **kw), stem)


def learning_curve_from_summary(
    summary: Mapping[str, Any],
    *,
    space: str = "joint",
    retrieval: str = "nn",
    oov: str = "miss",
    direction: str | None = None,
    where: str = "learning_curve.json",
) -> tuple[list[float], dict[str, list[float | None]], str]:
    """``(sizes, method -> P@1 % per size, x label)`` from ``learning_curve.json``
    (benchmarks/learning_curve.py).

    A size's x value is its number of segmented sentences, averaged over the languages
    (their counts differ by a few percent); a method's value is its P@1 in ``space``
    (``joint``: unmapped, ``mapped``: after VecMap), averaged over both directions, or
    the one ``direction`` (``en-de``). A direction without a value leaves the cell None.
    Anything malformed is an :class:`InputError` naming ``where`` (the file) and the key.
    """
    rows = summary.get("rows") if isinstance(summary, Mapping) else None
    if not isinstance(rows, list) or not rows:
        raise InputError(f"{where}: no 'rows'; expected the benchmark's summary")
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise InputError(f"{where}: rows[{i}]: expected an object, got {row!r:.80}")
        for key in ("size", "method", "sentences"):
            if key not in row:
                raise InputError(f"{where}: rows[{i}] has no {key!r}")
        if not isinstance(row["size"], str | int) or isinstance(row["size"], bool):
            raise InputError(f"{where}: rows[{i}].size: expected a size label, got {row['size']!r}")
        if not isinstance(row["method"], str):
            raise InputError(f"{where}: rows[{i}].method: expected a name, got {row['method']!r}")
        sentences = row["sentences"]
        if not isinstance(sentences, Mapping) or not sentences:
            raise InputError(
                f"{where}: rows[{i}].sentences: expected an object language -> sentences, "
                f"got {sentences!r:.80}"
            )
        for lang, n in sentences.items():
            _number(n, f"{where}: rows[{i}].sentences.{lang}")
        for key, value in row.items():
            if isinstance(key, str) and key.count("/") == 3 and value is not None:
                _number(value, f"{where}: rows[{i}].{key}")
    # every direction any row has in this space: a row lacking one has no mean
    directions = (
        [direction]
        if direction is not None
        else sorted(
            {
                k.split("/")[1]
                for row in rows
                for k in row
                if k.startswith(f"{space}/") and k.count("/") == 3
            }
        )
    )
    by_size: dict[str, float] = {}
    cells: dict[str, dict[str, float | None]] = {}
    for row in rows:
        sentences = row["sentences"]
        by_size.setdefault(row["size"], statistics.fmean(float(v) for v in sentences.values()))
        vals = [row.get(f"{space}/{d}/{retrieval}/{oov}") for d in directions]
        value = (
            100.0 * statistics.fmean(vals) if vals and all(v is not None for v in vals) else None
        )
        cells.setdefault(row["method"], {})[row["size"]] = value
    order = sorted(by_size, key=lambda s: by_size[s])
    data = {m: [per.get(s) for s in order] for m, per in cells.items()}
    langs = "/".join(sorted(rows[0]["sentences"]))
    return [by_size[s] for s in order], data, f"segmented sentences per language (mean of {langs})"
