"""``xlalign statistics`` and ``xlalign plots`` on files as the workflow writes them."""

from __future__ import annotations

import json
from pathlib import Path

from test_statistics import BASE, _zeroshot

from xlalign.cli import main


def test_statistics_and_plots_commands(tmp_path: Path, capsys) -> None:
    runs, rets = _zeroshot(tmp_path / "zs", {BASE: 0.5, "mlm.s1": 0.9})
    files = ["--runs", *map(str, runs), "--retrieval", *map(str, rets)]
    common = ["--base-encoder", BASE, "--tasks", "pos-gold", "ner-gold"]
    out = tmp_path / "stats"
    rc = main(
        [
            "statistics",
            *files,
            *common,
            "--encoders",
            BASE,
            "mlm.s1",
            "--pretrain-runs",
            "mlm",
            "--retrieval-sets",
            "bible",
            "--iterations",
            "200",
            "-o",
            str(out),
        ]
    )
    assert rc == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["tables"] == ["table3_statistics", "table3_pvalues", "table002_std"]
    tests = json.loads((out / "statistics.json").read_text())["tables"]["table3_statistics"]
    pooled = [t for t in tests["tests"] if t["language"] == "all"]
    assert len(pooled) == 3 and all(t["p_adjusted"] < 0.05 for t in pooled)
    assert main(["plots", *files, *common, "-o", str(tmp_path / "plots")]) == 0
    figures = json.loads(capsys.readouterr().out)["figures"]
    # No layer sweep in these retrieval records, so no retrieval-by-layer figure.
    assert figures == ["zeroshot_deltas_pos-gold", "zeroshot_deltas_ner-gold"]


def test_statistics_command_user_error(tmp_path: Path, capsys) -> None:
    rc = main(["statistics", "--base-encoder", BASE, "--encoders", BASE, "-o", str(tmp_path)])
    assert rc == 1
    assert "no BLI, fine-tuning or retrieval results" in capsys.readouterr().err
