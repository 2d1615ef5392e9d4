"""Comparing two result trees: what counts as the same result and what does not."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from xlalign.core.errors import InputError
from xlalign.reporting.compare import TIMING_KEY, compare_trees, main


def _tree(root: Path, *, vec: float = 0.5, bleu: float = 12.25, seconds: float = 1.0) -> Path:
    tree = root / "results" / "embedded"
    (tree / "static").mkdir(parents=True)
    (tree / "benchmarks").mkdir()
    np.save(tree / "static" / "de.npy", np.array([[vec, 1.0], [0.0, -1.0]], dtype=np.float32))
    (tree / "static" / "de.vec").write_text(f"2 2\nhaus {vec:.6f} 1.000000\nbaum 0 -1\n")
    stats = {
        "p_at_1": bleu,
        "seconds": seconds,
        "pairs_per_s": 1000 / seconds,
        "encoder": f"{root}/resources/models/enc",
        "curve": [1.0, 0.5],
    }
    (tree / "static" / "de.json").write_text(json.dumps(stats))
    (tree / "tables.md").write_text(f"| space | P@1 |\n| x2s-m | {bleu:.2f} |\n")
    (tree / "benchmarks" / "x.tsv").write_text(f"s\n{seconds}\n")
    return tree


def test_same_results_despite_timings_paths_and_tiny_float_noise(tmp_path: Path) -> None:
    a = _tree(tmp_path / "run1")
    b = _tree(tmp_path / "run2", vec=0.5 + 4e-7, seconds=7.0)
    result = compare_trees(a, b)
    assert result.same, result.report()
    assert result.compared == 4 and result.ignored == 1  # the benchmark TSV is left out


def test_a_changed_number_a_missing_file_and_a_shape_change_are_reported(tmp_path: Path) -> None:
    a = _tree(tmp_path / "run1")
    b = _tree(tmp_path / "run2", vec=0.5 + 1e-4, bleu=12.5)
    (b / "static" / "extra.txt").write_text("new\n")
    (a / "static" / "gone.txt").write_text("old\n")
    np.save(b / "static" / "de.npy", np.zeros((3, 2), dtype=np.float32))
    result = compare_trees(a, b)
    assert not result.same
    assert result.only_a == ["static/gone.txt"] and result.only_b == ["static/extra.txt"]
    diffs = "\n".join(result.different)
    assert "static/de.npy: shape/dtype (2, 2)" in diffs
    assert "static/de.json: .p_at_1: 12.25 vs 12.5" in diffs
    assert "static/de.vec: line 2" in diffs  # 1e-4 is beyond the default 1e-6
    assert "tables.md: line 2" in diffs
    # a looser tolerance accepts the vector change, not the P@1 one
    loose = compare_trees(a, b, atol=1e-3)
    assert not any(d.startswith("static/de.vec") for d in loose.different)
    assert any(d.startswith("static/de.json") for d in loose.different)


def test_npy_values_beyond_tolerance(tmp_path: Path) -> None:
    a = _tree(tmp_path / "run1")
    b = _tree(tmp_path / "run2", vec=0.5 + 2e-6)
    result = compare_trees(a, b)
    assert [d.split(":")[0] for d in result.different] == ["static/de.npy", "static/de.vec"]


@pytest.mark.parametrize(
    ("key", "timing"),
    [
        ("seconds", True),
        ("seconds_this_run", True),
        ("align_seconds", True),
        ("pairs_per_s", True),
        ("sentences_per_second", True),
        ("p_at_1", False),
        ("max_sentences", False),
        ("sentences_out", False),
        ("truncated_sentences", False),
    ],
)
def test_timing_keys(key: str, timing: bool) -> None:
    assert bool(TIMING_KEY.search(key)) is timing


def test_cli_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _tree(tmp_path / "run1")
    b = _tree(tmp_path / "run2", bleu=30.0)
    assert main([str(a), str(a)]) == 0
    assert main([str(a), str(b)]) == 1
    assert "DIFFERENT" in capsys.readouterr().out
    assert main([str(a), str(tmp_path / "nope")]) == 2
    with pytest.raises(InputError, match="not a directory"):
        compare_trees(a, tmp_path / "nope")
