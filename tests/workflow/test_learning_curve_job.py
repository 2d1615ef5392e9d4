"""The `learning_curve` rule as a dry run of the embedded default sees it: one job per
configured language and seed in `all`, after the teacher and the run's spaces, its stats
mirrored by the seed's `track` job; none when the block is disabled."""

from __future__ import annotations

from pathlib import Path

from dry_run import dry_run, key_values

from xlalign import config as xlconfig

ROOT = Path(__file__).resolve().parents[2]
RES = "results/embedded"


def test_all_draws_the_configured_curve_and_tracks_it(tmp_path: Path) -> None:
    cfg = xlconfig.load(ROOT / "config/config.yaml")
    langs = cfg["learning_curve"]["languages"]
    jobs = dry_run(tmp_path, "all")
    curve = [f for rule, f in jobs if rule == "learning_curve"]
    assert [key_values(f["wildcards"]) for f in curve] == [
        {"seed": str(s), "lang": lang} for s in cfg["seeds"] for lang in langs
    ]
    job, lang = curve[0], langs[0]
    assert set(job["output"].split(", ")) == {
        f"{RES}/learning_curve/seed1/{lang}.json",
        f"{RES}/learning_curve/seed1/{lang}.md",
        f"{RES}/figures/learning_curve/seed1/{lang}.png",
    }
    assert job["log"] == f"logs/embedded/learning_curve/seed1/{lang}.log"
    assert job["benchmark"] == f"{RES}/benchmarks/learning_curve/seed1/{lang}.tsv"
    # after the teacher and the run's own spaces (no encoder job of its own)
    reason = job["reason"]
    for upstream in (
        f"cache/teacher/s0/{lang}",
        f"static/seed1/x2s-m/{lang}.npy",
        "static/seed1/aggregate/en.npy",
        f"dictionaries/s0/{lang}/test.reverse.txt",
    ):
        assert f"{RES}/{upstream}" in reason, upstream
    (track,) = [f for rule, f in jobs if rule == "track"]
    assert f"{RES}/learning_curve/seed1/{lang}.json" in track["input"]


def test_disabled_curve_plans_no_job(tmp_path: Path) -> None:
    off = tmp_path / "off.yaml"
    off.write_text("learning_curve: {enabled: false}\n", encoding="utf-8")
    jobs = dry_run(tmp_path, "all", "--configfile", str(ROOT / "config/config.yaml"), str(off))
    assert "learning_curve" not in {rule for rule, _ in jobs}
    assert "teacher" in {rule for rule, _ in jobs}
