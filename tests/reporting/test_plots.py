"""Report figures: both files written atomically and readable, artists matching the data,
gaps for missing values, byte-identical re-runs, extraction from the real record shapes,
and clear errors for bad input."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.figure import Figure

from xlalign.core.errors import InputError
from xlalign.reporting import plots

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

BLI = {
    "X2S-M": {"de": (40.0, 2.0), "fr": (50.0, None), "ja": None},
    "X2S-MA": {"de": 45.0, "fr": (55.0, 1.5), "ja": (20.0, 3.0)},
    "Aggregation": {"de": (30.0, 1.0), "fr": (35.0, 1.0)},  # no ja at all
}
RETRIEVAL = {
    "mbert": {"de": [10.0, 20.0, 30.0, None, 50.0], "fr": [5.0, 6.0, 7.0, 8.0, 9.0]},
    "x2s-ma": {"de": [11.0, 21.0, 31.0, 41.0, 51.0]},
}
LOSSES = {
    "mlm s1": {"mlm": ([10, 20, 30], [5.0, 4.0, 3.0]), "valid_mlm": ([0, 30], [6.0, 3.5])},
    "gcca s1": {
        "mlm": ([10, 20, 30], [5.1, 4.1, 3.1]),
        "gcca": ([10, 20, 30], [-1.0, -2.0, -3.0]),
        "valid_mlm": ([0, 30], [6.0, 3.6]),
    },
}
DELTAS = {"+MLM": {"de": (1.0, 0.5), "ja": (-2.0, 1.0)}, "X2S-MA": {"de": (2.0, 0.3), "ja": None}}
SIZES = [2400.0, 5700.0, 11000.0]
CURVE = {"x2s-m-paper": [1.0, None, 24.0], "aggregate-paper": [10.0, 18.0, 38.0]}

# name -> (writer, figure builder, positional data, keyword arguments)
PLOTS: dict[str, tuple[Callable[..., Any], Callable[..., Figure], tuple[Any, ...], dict]] = {
    "bli": (plots.bli_bars, plots.bli_bars_figure, (BLI,), {"retrieval": "csls"}),
    "retrieval": (
        plots.retrieval_by_layer,
        plots.retrieval_by_layer_figure,
        (RETRIEVAL,),
        {"set_title": "UDHR retrieval", "layer": 3},
    ),
    "loss": (plots.loss_curves, plots.loss_curves_figure, (LOSSES,), {}),
    "zeroshot": (
        plots.zeroshot_deltas,
        plots.zeroshot_deltas_figure,
        (DELTAS,),
        {"baseline": "mBERT", "metric": "F1", "task": "NER"},
    ),
    "learning_curve": (plots.learning_curve, plots.learning_curve_figure, (SIZES, CURVE), {}),
}


def _write(name: str, stem: Path) -> list[Path]:
    writer, _, args, kw = PLOTS[name]
    return writer(*args, stem, **kw)


def _bars(ax: Any) -> list[BarContainer]:
    return [c for c in ax.containers if isinstance(c, BarContainer)]


def _lines(ax: Any) -> list[Any]:
    """Data lines (labelled), not the zero line or the configured-layer marker."""
    return [line for line in ax.get_lines() if not line.get_label().startswith("_")]


@pytest.mark.parametrize("name", list(PLOTS))
def test_writes_a_png_and_an_svg(name: str, tmp_path: Path) -> None:
    stem = tmp_path / "figs" / f"{name}.nn"  # a dot in the stem is kept
    written = _write(name, stem)
    assert written == [tmp_path / "figs" / f"{name}.nn.png", tmp_path / "figs" / f"{name}.nn.svg"]
    png, svg = written
    data = png.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 1000
    root = ET.parse(svg).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert b"dc:date" not in svg.read_bytes()  # no date: re-runs are identical
    # nothing but the two files: the temporary siblings were renamed into place
    assert sorted(p.name for p in (tmp_path / "figs").iterdir()) == [png.name, svg.name]


@pytest.mark.parametrize("name", ["bli", "retrieval"])
def test_same_data_gives_byte_identical_files_whatever_the_user_style(
    name: str, tmp_path: Path
) -> None:
    first = _write(name, tmp_path / "a")
    user = {"svg.hashsalt": "other", "lines.linewidth": 7.0, "font.size": 20.0}
    with matplotlib.rc_context(user):
        second = _write(name, tmp_path / "b")
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.suffix


def test_bli_bars_one_bar_per_value_and_gaps_for_missing() -> None:
    fig = plots.bli_bars_figure(BLI, retrieval="nn")
    (ax,) = fig.axes
    bars = _bars(ax)
    assert [c.get_label() for c in bars] == ["X2S-M", "X2S-MA", "Aggregation"]
    assert [len(c.patches) for c in bars] == [2, 3, 2]  # ja of X2S-M and Aggregation: gaps
    assert [t.get_text() for t in ax.get_xticklabels()] == ["de", "fr", "ja"]
    heights = sorted(p.get_height() for c in bars for p in c.patches)
    assert heights[0] == pytest.approx(20.0)  # no zero-height bar stands in for a gap
    # around ja (x = 2) only X2S-MA's bar
    near_ja = [p for c in bars for p in c.patches if abs(p.get_x() + p.get_width() / 2 - 2) < 0.5]
    assert len(near_ja) == 1 and near_ja[0].get_height() == pytest.approx(20.0)
    # error bars exactly where a std is given: 1 + 2 + 2
    errs = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert sum(len(c.lines[2][0].get_segments()) for c in errs) == 5
    assert "BLI P@1 (NN)" in ax.get_title() and "std over seeds" in ax.get_title()
    assert "P@1 (NN)" in ax.get_ylabel()


def test_bli_bars_from_table_keeps_missing_cells_missing() -> None:
    idx = pd.Index(["X2S-M", "Aggregation"], name="Model")
    table = SimpleNamespace(
        name="table5",
        values=pd.DataFrame({"de": [40.0, 30.0], "ja": [np.nan, 12.5]}, index=idx),
        std=pd.DataFrame({"de": [2.0, np.nan], "ja": [np.nan, np.nan]}, index=idx),
    )
    data = plots.bli_bars_from_table(table)
    assert data == {
        "X2S-M": {"de": (40.0, 2.0), "ja": (None, None)},
        "Aggregation": {"de": (30.0, None), "ja": (12.5, None)},
    }
    fig = plots.bli_bars_figure(data)
    assert [len(c.patches) for c in _bars(fig.axes[0])] == [1, 2]


def test_retrieval_by_layer_panels_per_language_lines_per_encoder() -> None:
    fig = plots.retrieval_by_layer_figure(RETRIEVAL, set_title="UDHR retrieval", layer=3)
    de, fr = (ax for ax in fig.axes if ax.get_visible())
    assert [line.get_label() for line in _lines(de)] == ["mbert", "x2s-ma"]
    assert [line.get_label() for line in _lines(fr)] == ["mbert"]  # x2s-ma has no fr
    mbert_de = _lines(de)[0]
    assert list(mbert_de.get_xdata()) == [0, 1, 2, 3, 4]
    assert math.isnan(mbert_de.get_ydata()[3])  # a missing layer is a gap, not 0
    # the same encoder has the same colour in every panel
    assert _lines(de)[0].get_color() == _lines(fr)[0].get_color()
    assert "accuracy@1 en→de" in de.get_title()
    assert "en→xx" in fig.get_suptitle() and "configured layer, 3" in fig.get_suptitle()


def test_retrieval_by_layer_from_records() -> None:
    record = {
        "set": "udhr",
        "encoder": "mbert",
        "languages": {
            "de": {"sweep": {"en->xx": [26.0, 56.0, 62.0], "xx->en": [58.0, 62.0, 84.0]}},
            "fr": {"accuracy": {"en->xx": 90.0}},  # no sweep: left out
        },
    }
    out = plots.retrieval_by_layer_from_records([record], direction="xx->en")
    assert out == {"udhr": {"mbert": {"de": [58.0, 62.0, 84.0]}}}
    with pytest.raises(InputError, match="no 'set'"):
        plots.retrieval_by_layer_from_records([{"encoder": "x", "languages": {}}])


def test_loss_curves_one_panel_per_objective_validation_markers_in_mlm() -> None:
    fig = plots.loss_curves_figure(LOSSES)
    mlm, gcca = (ax for ax in fig.axes if ax.get_visible())
    assert mlm.get_title().startswith("mlm") and gcca.get_title().startswith("gcca")
    labels = [line.get_label() for line in _lines(mlm)]
    assert labels == [
        "mlm s1",
        "mlm s1 (validation MLM)",
        "gcca s1",
        "gcca s1 (validation MLM)",
    ]
    assert [line.get_label() for line in _lines(gcca)] == ["gcca s1"]
    valid = _lines(mlm)[1]
    assert valid.get_linestyle() == "None" and list(valid.get_xdata()) == [0, 30]
    assert list(_lines(gcca)[0].get_ydata()) == [-1.0, -2.0, -3.0]


def test_loss_curves_validation_panel_of_its_own_without_mlm() -> None:
    fig = plots.loss_curves_figure(
        {"mse s1": {"mse": ([5, 10], [2.0, 1.0]), "valid_mlm": ([0, 10], [4.0, 4.2])}}
    )
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert titles == ["mse: training loss", "MLM: validation loss (◆)"]


def _pretrain_record() -> dict[str, Any]:
    """The shape run_pretrain writes (history every log_every steps, evaluations)."""
    history = [
        {"step": 0, "valid_mlm_loss": 6.0},
        {"step": 4, "learning_rate": 1e-4, "grad_norm": 1.0, "mlm_loss": 5.0, "gcca_loss": -1.0}
        | {"gcca/corr_1": 0.3},
        {"step": 8, "learning_rate": 1e-4, "grad_norm": 1.0, "mlm_loss": 4.0, "gcca_loss": -2.0}
        | {"gcca/corr_1": 0.5},
        {"step": 8, "valid_mlm_loss": 4.5},
        {"step": 10, "learning_rate": 1e-4, "grad_norm": 1.0, "mlm_loss": 3.5, "gcca_loss": -2.5}
        | {"gcca/corr_1": 0.6},
        {"step": 10, "valid_mlm_loss": 4.4},
    ]
    from xlalign.pretrain.trainer import curves

    return {
        "row": "x2s-ma-gcca",
        "seed": 1,
        "params": {"steps": 10, "log_every": 4, "eval_every": 8},
        "learning_curve": history,
        "curves": curves(history),
    }


EXPECTED_LOSSES = {
    "x2s-ma-gcca s1": {
        "valid_mlm": ([0, 8, 10], [6.0, 4.5, 4.4]),
        "mlm": ([4, 8, 10], [5.0, 4.0, 3.5]),
        "gcca": ([4, 8, 10], [-1.0, -2.0, -2.5]),
    }
}


def test_loss_curves_from_records_history_and_curves_only_agree() -> None:
    record = _pretrain_record()
    assert plots.loss_curves_from_records([record]) == EXPECTED_LOSSES
    only_curves = {k: v for k, v in record.items() if k != "learning_curve"}
    assert plots.loss_curves_from_records([only_curves]) == EXPECTED_LOSSES
    fig = plots.loss_curves_figure(plots.loss_curves_from_records([record]))
    assert len([ax for ax in fig.axes if ax.get_visible()]) == 2  # mlm, gcca: no corr panel


def test_loss_curves_from_records_errors_name_the_problem() -> None:
    record = _pretrain_record()
    del record["learning_curve"]
    record["curves"]["train_mlm_loss"].append(2.0)
    record["_source"] = "results/x/pretrain/x2s-ma-gcca/s1.json"
    with pytest.raises(InputError, match=r"s1\.json: curves\.train_mlm_loss has 4 values"):
        plots.loss_curves_from_records([record])
    with pytest.raises(InputError, match="no 'row'"):
        plots.loss_curves_from_records([{"seed": 1, "learning_curve": []}])
    with pytest.raises(InputError, match="a second record for run 'x2s-ma-gcca s1'"):
        plots.loss_curves_from_records([_pretrain_record(), _pretrain_record()])


def test_zeroshot_deltas_bars_and_zero_line() -> None:
    fig = plots.zeroshot_deltas_figure(DELTAS, baseline="mBERT", metric="F1", task="NER")
    (ax,) = fig.axes
    assert [len(c.patches) for c in _bars(ax)] == [2, 1]
    zero = [line for line in ax.get_lines() if list(line.get_ydata()) == [0.0, 0.0]]
    assert len(zero) == 1
    assert any(p.get_height() < 0 for c in _bars(ax) for p in c.patches)
    assert "model − mBERT" in ax.get_title() and "Δ F1" in ax.get_ylabel()


def test_zeroshot_deltas_from_runs_pairs_seeds() -> None:
    def run(enc: str, seed: int, scores: dict[str, float]) -> dict[str, Any]:
        return {"task": "ner", "encoder": enc, "seed": seed, "summary": {"per_language": scores}}

    runs = [
        run("orig", 1, {"de": 50.0, "ja": 30.0}),
        run("orig", 2, {"de": 52.0, "ja": 31.0}),
        run("mlm", 1, {"de": 53.0, "ja": 29.0}),
        run("mlm", 2, {"de": 54.0}),  # ja of seed 2 missing: one pair only
        run("mlm", 3, {"de": 90.0}),  # no baseline seed 3: not paired, left out
        {**run("orig", 1, {"de": 0.0}), "task": "pos"},  # another task: ignored
    ]
    out = plots.zeroshot_deltas_from_runs(runs, task="ner", baseline="orig")
    (de_mean, de_std), (ja_mean, ja_std) = out["mlm"]["de"], out["mlm"]["ja"]
    assert de_mean == pytest.approx(2.5) and de_std == pytest.approx(math.sqrt(0.5))
    assert ja_mean == pytest.approx(-1.0) and ja_std is None
    with pytest.raises(InputError, match="baseline 'mbert'"):
        plots.zeroshot_deltas_from_runs(runs, task="ner", baseline="mbert")


def test_learning_curve_lines_and_gaps() -> None:
    fig = plots.learning_curve_figure(SIZES, CURVE)
    (ax,) = fig.axes
    x2s, agg = _lines(ax)
    assert (x2s.get_label(), agg.get_label()) == ("X2S-M (paper)", "Aggregation (paper)")
    assert x2s.get_color() == agg.get_color()  # same recipe, same colour
    assert (x2s.get_linestyle(), agg.get_linestyle()) == ("-", "--")
    assert math.isnan(x2s.get_ydata()[1]) and list(x2s.get_xdata()) == SIZES
    assert ax.get_xscale() == "log"
    assert "BLI P@1 (NN)" in ax.get_title()


def test_learning_curve_from_summary() -> None:
    def row(size: str, method: str, sentences: tuple[int, int], **p: float) -> dict[str, Any]:
        values = {f"joint/{d}/nn/miss": v for d, v in p.items()}
        return {
            "size": size,
            "method": method,
            "sentences": {"en": sentences[0], "de": sentences[1]},
            **{k.replace("_", "-"): v for k, v in values.items()},
            "joint/en-de/coverage": 0.5,
        }

    summary = {
        "rows": [
            row("4000", "x2s-m-paper", (2000, 2200), en_de=0.1, de_en=0.3),
            row("4000", "aggregate-paper", (2000, 2200), en_de=0.2),  # de-en missing
            row("10000", "x2s-m-paper", (5000, 5400), en_de=0.4, de_en=0.4),
        ]
    }
    sizes, data, xlabel = plots.learning_curve_from_summary(summary)
    assert sizes == [2100.0, 5200.0]
    assert data["x2s-m-paper"] == pytest.approx([20.0, 40.0])
    assert data["aggregate-paper"] == [None, None]  # one direction only; not evaluated
    assert "de/en" in xlabel
    _, one_way, _ = plots.learning_curve_from_summary(summary, direction="en-de")
    assert one_way["aggregate-paper"][0] == pytest.approx(20.0)
    assert one_way["aggregate-paper"][1] is None  # no row at that size
    with pytest.raises(InputError, match="no 'rows'"):
        plots.learning_curve_from_summary({"rows": []})


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: plots.bli_bars_figure({}), "bli_bars: no data"),
        (lambda: plots.bli_bars_figure({"X2S-M": {}}), "bli_bars: no languages"),
        (lambda: plots.bli_bars_figure({"X2S-M": {"de": None}}), "every value is missing"),
        (
            lambda: plots.bli_bars_figure({"X2S-M": {"de": (1.0, 2.0, 3.0)}}),
            r"bli_bars\['X2S-M'\]\['de'\]: expected \(mean, std\), got 3 values",
        ),
        (
            lambda: plots.bli_bars_figure({"X2S-M": {"de": "40"}}),
            r"\['de'\]: expected a number or None, got '40'",
        ),
        (lambda: plots.bli_bars_figure({"X2S-M": {"de": (4.0, -1.0)}}), "negative std"),
        (lambda: plots.retrieval_by_layer_figure({}, set_title="t"), "retrieval_by_layer: no"),
        (
            lambda: plots.retrieval_by_layer_figure({"m": {"de": []}}, set_title="t"),
            r"\['m'\]\['de'\]: no layers",
        ),
        (lambda: plots.loss_curves_figure({}), "loss_curves: no data"),
        (
            lambda: plots.loss_curves_figure({"r": {"mlm": ([1, 2], [3.0, 2.0, 1.0])}}),
            r"loss_curves\['r'\]\['mlm'\]: 2 steps but 3 losses",
        ),
        (
            lambda: plots.zeroshot_deltas_figure({}, baseline="b", metric="F1", task="t"),
            "zeroshot_deltas: no data",
        ),
        (lambda: plots.learning_curve_figure([], CURVE), "learning_curve: no sizes"),
        (
            lambda: plots.learning_curve_figure([1.0, 2.0], {"x2s-m-paper": [1.0, 2.0, 3.0]}),
            r"learning_curve\['x2s-m-paper'\]: 3 values for 2 sizes",
        ),
        (lambda: plots.learning_curve_figure([2.0, 1.0], {"m": [1, 2]}), "ascending order"),
        (lambda: plots.learning_curve_figure([1.0, 2.0], {}), "learning_curve: no data"),
    ],
)
def test_bad_input_is_a_clear_error(build: Callable[[], Any], match: str) -> None:
    with pytest.raises(InputError, match=match):
        build()


def test_a_failed_write_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fig = plots.bli_bars_figure(BLI)

    def broken(*args: Any, **kw: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(fig, "savefig", broken)
    with pytest.raises(OSError, match="disk full"):
        plots.save_figure(fig, tmp_path / "bli")
    assert list(tmp_path.iterdir()) == []
