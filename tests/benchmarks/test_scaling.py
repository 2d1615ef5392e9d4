"""benchmarks/scaling.py: the fits and projections, and one stage measured end to end."""

import json
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import scaling


@pytest.mark.parametrize("b", [0.5, 1.0, 1.37, 2.0])
def test_power_fits_recover_a_known_exponent(b):
    sizes = [100, 300, 1000, 3000]
    values = [0.02 * x**b for x in sizes]
    a_fit, b_fit = scaling.fit_power(sizes, values)
    assert b_fit == pytest.approx(b, abs=1e-9) and a_fit == pytest.approx(0.02, rel=1e-6)
    c, _a, b2 = scaling.fit_fixed_power(sizes, values)
    assert b2 == pytest.approx(b, abs=0.01) and c == pytest.approx(0, abs=1e-6 * values[0])


def test_fixed_part_is_separated_from_the_growth():
    """A constant (a model loaded) plus linear work: log-log sees an exponent below 1 and
    under-projects; the fixed + power fit finds 1 and projects the linear cost."""
    sizes = [100, 300, 1000]
    values = [10 + 0.05 * x for x in sizes]
    assert scaling.fit_power(sizes, values)[1] < 0.8
    fit = scaling.fit_fixed_power(sizes, values)
    assert fit[2] == pytest.approx(1.0, abs=0.01)
    assert scaling.project(fit, 1e6) == pytest.approx(10 + 0.05e6, rel=0.02)
    assert scaling.project(None, 5) is None
    assert scaling.fit_fixed_power([1], [2]) is None  # one point: no fit


def test_ratio_flag():
    assert scaling._flag(1.0) == "1"
    assert scaling._flag(3.0).endswith("**!**") and scaling._flag(0.3).endswith("**!**")
    assert scaling._flag(None) == "-"


def test_every_stage_has_its_workload_and_a_paper_size():
    cfg = scaling.paper_config()
    for name, stage in scaling.STAGES.items():
        assert name in scaling.PREP and name in scaling.RUN
        assert len(stage.sizes) >= 3 and max(stage.sizes) >= 10 * min(stage.sizes)
        assert stage.paper_size(cfg) >= max(stage.sizes) or name == "retrieval"
        est = scaling.estimate_need(stage.rule, cfg)
        assert est is None or est["seconds"] > 0


def test_one_stage_end_to_end(tmp_path):
    """The statistics stage at three small sizes, in child processes: the table, the JSON
    (three points, fits, the projection at the paper's size, the estimate beside it) and
    the figure; then re-analysed from its JSON alone."""
    out = tmp_path / "out"
    rc = scaling.main(["--stage", "statistics", "--sizes", "2000,6000,20000", "--out", str(out)])
    assert rc == 0
    (res,) = json.loads((out / "scaling.json").read_text())
    assert [p["size"] for p in res["points"]] == [2000, 6000, 20000]
    assert all(p["seconds"] > 0 and p["out_mb"] > 0 for p in res["points"])
    assert res["fits"]["seconds"]["b"] > 0 and res["paper_size"] == 300_000
    assert math.isfinite(res["projection"]["seconds"]) and res["projection"]["seconds"] > 0
    # the statistics job runs one test per comparison: its estimate is shown, not compared
    assert res["estimate"]["seconds"] > 0 and res["estimate_over_projection"]["seconds"] is None
    md = (out / "scaling.md").read_text()
    assert "## statistics" in md and "| 20,000 |" in md and "estimate / projection" in md
    assert (out / "scaling.png").stat().st_size > 1000
    again = tmp_path / "again"
    scaling.main(["--from-json", str(out / "scaling.json"), "--out", str(again)])
    assert json.loads((again / "scaling.json").read_text())[0]["fits"] == res["fits"]


def test_unknown_stage_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        scaling.main(["--stage", "nope", "--out", str(tmp_path)])
    assert "unknown stage" in capsys.readouterr().err
