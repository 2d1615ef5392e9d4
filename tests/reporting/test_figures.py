"""The run's figures from result files (xlalign.reporting.figures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_statistics import BASE, _zeroshot

from xlalign.core.errors import InputError
from xlalign.reporting.figures import INDEX, write_figures


def _pretrain_record(path: Path, run: str) -> Path:
    curve = [
        {"step": s, "mlm_loss": 9.0 - s / 10, "gcca_loss": -1.0 - s / 100} for s in (10, 20, 30)
    ]
    curve += [{"step": 30, "valid_mlm_loss": 8.5}]
    path.write_text(json.dumps({"row": run, "seed": 1, "learning_curve": curve}))
    return path


def test_figures_of_a_run(tmp_path: Path) -> None:
    runs, rets = _zeroshot(tmp_path / "zs", {BASE: 0.6, "mlm.s1": 0.7})
    for r in rets:  # a layer sweep per language, as the retrieval job writes it
        rec = json.loads(r.read_text())
        for lang in rec["languages"].values():
            lang["sweep"] = {"en->xx": [10.0, 40.0, 55.0], "xx->en": [9.0, 39.0, 50.0]}
        r.write_text(json.dumps(rec))
    pre = _pretrain_record(tmp_path / "s1.json", "x2s-ma-dcca")
    out = tmp_path / "plots"
    index = write_figures(
        out_dir=out,
        runs=runs,
        retrieval=rets,
        pretrain=[pre],
        base_encoder=BASE,
        tasks=["pos-gold", "ner-gold"],
    )
    assert set(index) == {
        "retrieval_layers_bible",
        "pretrain_loss_curves",
        "zeroshot_deltas_pos-gold",
        "zeroshot_deltas_ner-gold",
    }
    for name, entry in index.items():
        assert entry["files"] == [f"{name}.png", f"{name}.svg"]
        assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((out / INDEX).read_text()) == index


def test_no_results_and_missing_learning_curve_are_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no BLI, zero-shot or pre-training results"):
        write_figures(out_dir=tmp_path / "p", base_encoder=BASE)
    with pytest.raises(InputError, match=r"results\.learning_curve"):
        write_figures(
            out_dir=tmp_path / "p",
            base_encoder=BASE,
            learning_curve=tmp_path / "none.json",
        )
