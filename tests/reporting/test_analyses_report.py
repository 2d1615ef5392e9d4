"""Issue 17's tables and figures: cells against hand-computed values (means over seeds, Δ,
best layer = argmin AER, Spearman of toy cases), best cells in the right direction, errors
naming the record and key, and non-empty PNG/SVG files from every writer."""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import read_json
from xlalign.reporting import analyses as an

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def derived(run: str, spec: str, seed: int, zs: float, sup: float, align: float | None) -> dict:
    rec: dict[str, Any] = {
        "model": f"{run}.{spec}.s{seed}",
        "spec": spec,
        "seed": seed,
        "tasks": {
            "pos-gold": {
                "metric": "accuracy",
                "zs": zs,
                "sup": sup,
                "delta": sup - zs,
                "natural": 90.0,
            }
        },
        "alignment": {"word_score_by_layer": [10.0, 20.0], "aer_by_layer": {"ot": [0.5, 0.4]}},
    }
    if align is not None:
        rec["alignment"]["embedding_score"] = align
    return rec


# runs x transformations; two seeds of mlm/trans+inv. Δ per seed: sup - zs.
DERIVED = [
    derived("mlm", "trans", 1, 70.0, 80.0, 10.0),  # Δ 10
    derived("mlm", "trans+inv", 1, 40.0, 80.0, 5.0),  # Δ 40
    derived("mlm", "trans+inv", 2, 50.0, 80.0, 7.0),  # Δ 30
    derived("align-mlm", "trans", 1, 78.0, 80.0, 40.0),  # Δ 2
    derived("align-mlm", "trans+inv", 1, 60.0, 81.0, 30.0),  # Δ 21
    derived("align-mlm", "inv", 1, 65.0, 80.0, None),  # Δ 15, no transliteration
]


def test_derived_frame_means_over_seeds_and_delta() -> None:
    t = an.derived_frame(DERIVED, "pos-gold")
    assert list(t.frame.columns) == ["pos-gold SUP", "pos-gold ZS", "pos-gold Δ", "Alignment"]
    row = "mlm, Trans + Inv"
    assert t.values.at[row, "pos-gold ZS"] == pytest.approx(45.0)
    assert t.values.at[row, "pos-gold Δ"] == pytest.approx(35.0)
    assert t.std.at[row, "pos-gold Δ"] == pytest.approx(math.sqrt(50.0))  # stdev(40, 30)
    assert t.values.at[row, "Alignment"] == pytest.approx(6.0)
    assert t.frame.at[row, "pos-gold Δ"] == "35.0 ± 7.1"
    assert t.frame.at["align-mlm, Inv", "Alignment"] == an.MISSING
    assert t.seeds == [1, 2, 1, 1, 1]
    # Δ: lower is better (align-mlm trans, 2.0); ZS, alignment: higher is better
    best = t.best()
    assert ("align-mlm, Trans", "pos-gold Δ") in best
    assert ("align-mlm, Trans", "pos-gold ZS") in best
    assert ("align-mlm, Trans", "Alignment") in best
    assert "**2.0**" in t.to_markdown()
    assert r"\textbf{2.0}" in t.to_latex()


def test_derived_delta_computed_when_absent_and_run_from_field() -> None:
    rec = derived("x", "trans", 1, 60.0, 75.0, 1.0)
    del rec["tasks"]["pos-gold"]["delta"]
    rec["run"], rec["model"] = "xlm", "anything"
    t = an.derived_frame([rec])
    assert t.values.at["xlm, Trans", "pos-gold Δ"] == pytest.approx(15.0)


def test_spearman_perfectly_decreasing() -> None:
    # alignment 1,2,3,4 against Δ 4,3,2,1 -> rho = -1 (more alignment, smaller Δ)
    recs = [
        derived(f"r{i}", "trans", 1, 80.0 - d, 80.0, a)
        for i, (a, d) in enumerate(zip([1.0, 2.0, 3.0, 4.0], [4.0, 3.0, 2.0, 1.0], strict=True))
    ]
    c = an.derived_correlation(recs, "pos-gold")
    assert c["rho"] == pytest.approx(-1.0)
    assert c["p_value"] == pytest.approx(0.0, abs=1e-9)
    assert c["n"] == 4 and c["x"] == "alignment" and c["y"] == "delta"
    # against ZS the sign flips: zs = 80 - Δ rises with alignment
    assert an.derived_correlation(recs, "pos-gold", against="zs")["rho"] == pytest.approx(1.0)


def test_spearman_hand_computed_with_p_value() -> None:
    # rows of DERIVED with alignment (seed means): x = 10, 6, 40, 30; Δ = 10, 35, 2, 21
    # ranks x: 2,1,4,3; ranks Δ: 2,4,1,3; d² = 0+9+9+0 = 18; rho = 1 - 6*18/(4*15) = -0.8
    c = an.derived_correlation(DERIVED, "pos-gold")
    assert c["n"] == 4
    assert c["rho"] == pytest.approx(-0.8)
    # two-sided p of scipy's t approximation: t = rho*sqrt((n-2)/(1-rho^2)), df = 2
    t = -0.8 * math.sqrt(2 / (1 - 0.64))
    p = 1 - abs(t) / math.sqrt(2 + t * t)  # the t(2) two-sided tail in closed form
    assert c["p_value"] == pytest.approx(p)


def test_spearman_undefined_cases() -> None:
    few = an.derived_correlation(DERIVED[:2], "pos-gold")
    assert few["rho"] is None and few["p_value"] is None and "need 3" in few["reason"]
    const = [derived(f"r{i}", "trans", 1, 70.0 + i, 80.0, 5.0) for i in range(4)]
    out = an.derived_correlation(const, "pos-gold")
    assert out["rho"] is None and "alignment is constant" in out["reason"]
    with pytest.raises(ConfigError, match="against"):
        an.derived_correlation(DERIVED, "pos-gold", against="natural")


def test_derived_bad_record_names_key() -> None:
    bad = copy.deepcopy(DERIVED)
    del bad[2]["tasks"]["pos-gold"]["zs"]
    with pytest.raises(InputError, match=r"derived-language evaluation record 2.*'zs'"):
        an.derived_frame(bad)
    dup = [*DERIVED, DERIVED[0]]
    with pytest.raises(InputError, match="second record"):
        an.derived_frame(dup)


def _check_figures(paths: list[Path], names: set[str]) -> None:
    assert {p.name for p in paths} == names
    for p in paths:
        data = p.read_bytes()
        assert len(data) > 1000
        if p.suffix == ".png":
            assert data.startswith(PNG_MAGIC)
        else:
            assert b"<svg" in data[:1000]


def test_write_derived(tmp_path: Path) -> None:
    summary = an.write_derived(
        DERIVED,
        out_md=tmp_path / "d.md",
        out_tex=tmp_path / "d.tex",
        fig_stem=tmp_path / "fig" / "derived",
        summary_json=tmp_path / "d.json",
    )
    md = (tmp_path / "d.md").read_text()
    assert "| mlm, Trans + Inv" in md and "ρ = -0.80" in md
    assert r"\begin{tabular}" in (tmp_path / "d.tex").read_text()
    on_disk = read_json(tmp_path / "d.json")
    assert on_disk == summary
    assert on_disk["correlations"]["pos-gold"]["rho"] == pytest.approx(-0.8)
    cell = on_disk["table"]["cells"]["mlm.trans+inv"]
    assert cell["pos-gold Δ"]["mean"] == pytest.approx(35.0) and cell["seeds"] == 2
    _check_figures(
        [tmp_path / "fig" / n for n in summary["figures"]],
        {f"derived_{k}.{e}" for k in ("transfer", "alignment") for e in ("png", "svg")},
    )


def sweep(run: str, seed: int, zs: float, sup: float, shares: dict | None = None) -> dict:
    rec = derived(run, "trans+inv", seed, zs, sup, 20.0)
    rec["run"] = run
    if shares is not None:
        rec["shares"] = shares
    return rec


# 001 Tables 1-2 on trans+inv: TLM at 10 % and 100 % parallel, DICT/ALIGN at 25 % and 50 %.
SWEEPS = [
    sweep("mlm", 1, 40.0, 80.0),  # reads neither: in no sweep table
    sweep("tlm", 1, 50.0, 80.0, {"parallel": 1.0, "dictionary": None}),  # Δ 30
    sweep("tlm-p10", 1, 30.0, 80.0),  # Δ 50 (share from the name)
    sweep("tlm-p10", 2, 34.0, 80.0),  # Δ 46
    sweep("dict-mlm", 1, 55.0, 80.0, {"parallel": 0.0, "dictionary": 0.25}),  # Δ 25
    sweep("dict-mlm-d50", 1, 70.0, 80.0, {"parallel": 0.0, "dictionary": 0.5}),  # Δ 10
    sweep("align-mlm", 1, 72.0, 80.0, {"parallel": 0.0, "dictionary": 0.25}),  # Δ 8
    sweep("align-mlm-d50", 1, 76.0, 80.0, {"parallel": 0.0, "dictionary": 0.5}),  # Δ 4
]


def test_parallel_sweep_table_is_001_table_1() -> None:
    t = an.derived_parallel_frame(SWEEPS, "trans+inv")
    assert t is not None
    assert list(t.frame.index) == [
        "tlm, 10 % parallel",
        "tlm, 100 % parallel",
        "align-mlm, 0 % (dictionary only)",
    ]
    assert list(t.frame.columns) == ["pos-gold ZS", "pos-gold Δ"]
    assert t.values.at["tlm, 10 % parallel", "pos-gold ZS"] == pytest.approx(32.0)
    assert t.values.at["tlm, 10 % parallel", "pos-gold Δ"] == pytest.approx(48.0)
    assert t.values.at["tlm, 100 % parallel", "pos-gold Δ"] == pytest.approx(30.0)
    assert t.values.at["align-mlm, 0 % (dictionary only)", "pos-gold Δ"] == pytest.approx(8.0)
    # best: highest ZS, lowest Δ, both ALIGN-MLM's here
    assert t.best() == {
        ("align-mlm, 0 % (dictionary only)", "pos-gold ZS"),
        ("align-mlm, 0 % (dictionary only)", "pos-gold Δ"),
    }
    # nothing varied (only the base TLM) -> no table
    assert an.derived_parallel_frame([SWEEPS[1], SWEEPS[6]], "trans+inv") is None
    assert an.derived_parallel_frame(SWEEPS, "trans") is None


def test_dictionary_sweep_table_is_001_table_2() -> None:
    t = an.derived_dictionary_frame(SWEEPS, "trans+inv")
    assert t is not None
    assert list(t.frame.index) == ["25 %", "50 %"]
    assert list(t.frame.columns) == ["pos-gold Δ dict-mlm", "pos-gold Δ align-mlm"]
    assert t.values.at["25 %", "pos-gold Δ dict-mlm"] == pytest.approx(25.0)
    assert t.values.at["50 %", "pos-gold Δ dict-mlm"] == pytest.approx(10.0)
    assert t.values.at["25 %", "pos-gold Δ align-mlm"] == pytest.approx(8.0)
    assert t.values.at["50 %", "pos-gold Δ align-mlm"] == pytest.approx(4.0)
    assert t.best() == {("50 %", "pos-gold Δ dict-mlm"), ("50 %", "pos-gold Δ align-mlm")}
    assert an.derived_dictionary_frame(SWEEPS[:5], "trans+inv") is None  # one share only


def test_write_derived_keeps_sweep_runs_out_of_table_3(tmp_path: Path) -> None:
    summary = an.write_derived(
        SWEEPS,
        out_md=tmp_path / "d.md",
        out_tex=tmp_path / "d.tex",
        fig_stem=tmp_path / "fig" / "derived",
        summary_json=tmp_path / "d.json",
        sweep_spec="trans+inv",
    )
    assert summary["table"]["rows"] == [
        "mlm, Trans + Inv",
        "tlm, Trans + Inv",
        "dict-mlm, Trans + Inv",
        "align-mlm, Trans + Inv",
    ]
    assert summary["correlations"]["pos-gold"]["n"] == 4
    assert set(summary["sweeps"]) == {"parallel", "dictionary"}
    assert summary["sweeps"]["dictionary"]["cells"]["50 %"]["pos-gold Δ align-mlm"]["mean"] == 4.0
    md = (tmp_path / "d.md").read_text()
    assert "(001 Table 1)" in md and "(001 Table 2)" in md and "| tlm, 10 % parallel" in md
    assert (tmp_path / "d.tex").read_text().count(r"\begin{tabular}") == 3


# ---------------------------------------------------------------------------- meta


def meta(variant: str, seed: int, pos: dict, acc: dict, sweep: list, counts: dict | None) -> dict:
    return {
        "model": f"meta-{variant}.s{seed}",
        "seed": seed,
        "tasks": {
            "pos-gold": {"summary": {"metric": "accuracy", "english": 80.0, "per_language": pos}}
        },
        "retrieval": {
            "udhr": {
                "layer": 1,
                "languages": {
                    lang: {
                        "accuracy": {"en->xx": a, "xx->en": 0.0},
                        "sweep": {"en->xx": [s + a for s in sweep], "xx->en": [0.0] * len(sweep)},
                    }
                    for lang, a in acc.items()
                },
            }
        },
        "pretrain": {
            "variant": variant,
            "initialisation": {"counts": counts} if counts is not None else None,
        },
    }


COUNTS = {"exact": 800, "normalised": 120, "dictionary": 0, "fresh": 7080, "total": 8000}
META = [
    meta(
        "both", 1, {"he": 40.0, "id": 50.0, "tr": 30.0}, {"de": 30.0, "fr": 20.0}, [0, 1, 2], COUNTS
    ),
    meta(
        "both", 2, {"he": 44.0, "id": 54.0, "tr": None}, {"de": 32.0, "fr": 22.0}, [0, 1, 2], COUNTS
    ),
    meta(
        "none",
        1,
        {"he": 10.0, "id": 20.0, "tr": 5.0},
        {"de": 5.0, "fr": 1.0},
        [0, 0, 0],
        {"exact": 0, "normalised": 0, "dictionary": 0, "fresh": 8000, "total": 8000},
    ),
]


def test_meta_frame_common_languages_and_order() -> None:
    t = an.meta_frame(META)
    assert list(t.frame.index) == ["None", "Both"]  # Table 5's order, not the records'
    # tr is missing in one record: the mean is over he and id only
    assert t.values.at["Both", "pos-gold zero-shot"] == pytest.approx((45.0 + 49.0) / 2)
    assert t.std.at["Both", "pos-gold zero-shot"] == pytest.approx(math.sqrt(8.0))
    assert t.values.at["None", "pos-gold zero-shot"] == pytest.approx(15.0)
    assert any("left out" in n and "tr" in n for n in t.footnotes)
    assert t.values.at["Both", "udhr en→xx"] == pytest.approx((25.0 + 27.0) / 2)
    assert t.frame.at["Both", "rows: exact"] == "800"
    best = t.best()
    assert ("Both", "udhr en→xx") in best
    assert not any(col.startswith("rows:") for _, col in best)  # counts are not scores


def test_meta_bad_record_names_key(tmp_path: Path) -> None:
    bad = copy.deepcopy(META)
    del bad[1]["tasks"]["pos-gold"]["summary"]["per_language"]
    with pytest.raises(InputError, match=r"meta-both\.s2.*summary\.per_language"):
        an.meta_frame(bad)
    bad = copy.deepcopy(META)
    del bad[0]["retrieval"]["udhr"]["languages"]["de"]["accuracy"]["en->xx"]
    with pytest.raises(InputError, match="en->xx"):
        an.meta_frame(bad)


def test_write_meta(tmp_path: Path) -> None:
    summary = an.write_meta(
        META,
        out_md=tmp_path / "m.md",
        out_tex=tmp_path / "m.tex",
        fig_stem=tmp_path / "metapretrain",
        summary_json=tmp_path / "m.json",
    )
    assert "| None" in (tmp_path / "m.md").read_text()
    assert summary["table"]["cells"]["both"]["seeds"] == 2
    _check_figures(
        [tmp_path / n for n in summary["figures"]],
        {"metapretrain_retrieval.png", "metapretrain_retrieval.svg"},
    )
    # the figure's line: mean over languages, then seeds, at each layer
    fig = an.meta_retrieval_figure(META)
    lines = {
        ln.get_label(): list(ln.get_ydata())
        for ln in fig.axes[0].get_lines()
        if not ln.get_label().startswith("_")
    }
    assert lines["Both"] == pytest.approx([26.0, 27.0, 28.0])


# ---------------------------------------------------------------------------- encoders


def encoder(name: str, argmax: list, ot: list, dist: dict | None = None) -> dict:
    return {
        "encoder": name,
        "gold": {"source": "toy", "sentences": 3},
        "layers": len(ot),
        "aer_by_layer": {"argmax": argmax, "ot": ot},
        "precision_by_layer": {"argmax": [0.1 * i for i in range(len(argmax))], "ot": ot},
        "recall_by_layer": {"argmax": argmax, "ot": ot},
        "word_score_by_layer": [10.0 * i for i in range(len(ot))],
        "distances": dist or {},
    }


def dist_new(shift: float) -> dict:  # xlalign.analysis.distances.summarise's shape
    return {
        "en-de": {
            "layer": 2,
            "sentences": 10,
            "bins": [0.0, 1.0, 2.0, 3.0],
            "related": {"n": 4, "mean": 1.0 + shift, "median": 1.5, "histogram": [1, 3, 0]},
            "unrelated": {"n": 4, "mean": 2.5, "median": 2.5, "histogram": [0, 1, 3]},
            "mean_difference": 1.5 - shift,
            "auc_related_closer": 0.9,
        }
    }


def dist_brief() -> dict:  # the shape with a nested histogram and a named separation
    return {
        "en-de": {
            "layer": 2,
            "sentences": 10,
            "related": {"mean": 2.0, "std": 0.1, "median": 2.0, "n": 5},
            "unrelated": {"mean": 2.2, "std": 0.1, "median": 2.2, "n": 5},
            "separation": {"name": "overlap", "value": 0.8},
            "histogram": {
                "bins": [0.0, 1.0, 2.0, 3.0],
                "related": [0, 2, 3],
                "unrelated": [0, 1, 4],
            },
        }
    }


ENCODERS = [
    encoder("e5", [0.6, 0.4, 0.4, 0.5], [0.5, 0.3, 0.2, 0.25], dist_new(0.0)),
    encoder("x2s", [0.7, 0.5, None, 0.45], [0.4, 0.35, 0.3, 0.3], dist_new(0.5)),
    encoder("e5@pos-gold", [0.9, 0.8, 0.7, 0.6], [0.8, 0.7, 0.6, 0.5], dist_brief()),
]
REFERENCE = {
    "aligner": "eflomal (grow-diag-final-and)",
    "aer": 0.31,
    "precision": 0.7,
    "recall": 0.68,
    "gold": {"source": "toy", "sentences": 3},
    "training_pairs": 40,
}


def test_best_layer_is_argmin_first_on_ties() -> None:
    assert an.best_layer([0.6, 0.4, 0.4, 0.5]) == 1
    assert an.best_layer([None, 0.5, None, 0.45]) == 3
    assert an.best_layer([None, None]) is None
    best = an.best_aer(ENCODERS)
    assert best["e5"]["ot"] == {"layer": 2, "aer": 0.2, "last_layer": 3, "last_layer_aer": 0.25}
    assert best["x2s"]["argmax"]["layer"] == 3


def test_aer_frame_cells_and_reference_row() -> None:
    t = an.aer_frame(ENCODERS, REFERENCE)
    assert list(t.frame.index) == [
        "e5 (argmax)",
        "e5 (ot)",
        "x2s (argmax)",
        "x2s (ot)",
        "e5@pos-gold (argmax)",
        "e5@pos-gold (ot)",
        "eflomal (grow-diag-final-and)",
    ]
    assert t.frame.at["e5 (ot)", "best layer"] == "2"
    assert t.values.at["e5 (ot)", "AER (best layer)"] == pytest.approx(0.2)
    assert t.values.at["e5 (ot)", "AER (last layer)"] == pytest.approx(0.25)
    assert t.values.at["e5 (argmax)", "precision"] == pytest.approx(0.1)  # at layer 1
    ref = "eflomal (grow-diag-final-and)"
    assert t.values.at[ref, "AER (best layer)"] == pytest.approx(0.31)
    assert t.frame.at[ref, "best layer"] == an.MISSING
    best = t.best()
    assert ("e5 (ot)", "AER (best layer)") in best  # the minimum, not the maximum
    assert not any(col == "best layer" for _, col in best)


def test_encoder_bad_record_names_key() -> None:
    bad = copy.deepcopy(ENCODERS)
    del bad[1]["aer_by_layer"]
    with pytest.raises(InputError, match=r"encoder analysis record 1 \('x2s'\).*'aer_by_layer'"):
        an.aer_frame(bad, REFERENCE)
    bad = copy.deepcopy(ENCODERS)
    bad[0]["distances"]["en-de"]["related"]["histogram"] = [1, 2]
    with pytest.raises(InputError, match="one count per bin"):
        an.distances_frame(bad)
    with pytest.raises(InputError, match="'aer'"):
        an.aer_frame(ENCODERS, {"aligner": "eflomal"})


def test_distances_frame_both_shapes() -> None:
    t = an.distances_frame(ENCODERS)
    assert t.values.at["e5 (en-de)", "related mean"] == pytest.approx(1.0)
    assert t.values.at["x2s (en-de)", "mean unrelated − related"] == pytest.approx(1.0)
    assert t.values.at["e5@pos-gold (en-de)", "overlap"] == pytest.approx(0.8)
    assert t.frame.at["e5 (en-de)", "n related"] == "4"
    assert t.best() == set()  # descriptive: nothing bolded


def test_figures_lines_match_data() -> None:
    fig = an.aer_by_layer_figure(ENCODERS, REFERENCE)
    ot = fig.axes[1]
    lines = {ln.get_label(): list(ln.get_ydata()) for ln in ot.get_lines()}
    assert lines["e5"] == pytest.approx([0.5, 0.3, 0.2, 0.25])
    assert lines["eflomal (grow-diag-final-and)"] == pytest.approx([0.31, 0.31])
    argmax = {ln.get_label(): ln.get_ydata() for ln in fig.axes[0].get_lines()}
    assert math.isnan(argmax["x2s"][2])  # a missing layer is a gap, not 0


def test_write_analysis(tmp_path: Path) -> None:
    summary = an.write_analysis(
        ENCODERS,
        REFERENCE,
        out_md=tmp_path / "a.md",
        out_tex=tmp_path / "a.tex",
        fig_dir=tmp_path / "figs",
        summary_json=tmp_path / "a.json",
    )
    assert read_json(tmp_path / "a.json") == summary
    assert summary["best_aer"]["e5"]["ot"]["layer"] == 2
    assert summary["reference"]["aer"] == 0.31
    assert set(summary["tables"]) == {"aer", "distances"}
    md = (tmp_path / "a.md").read_text()
    assert "e5 (ot): best layer 2, AER 0.200" in md
    assert (tmp_path / "a.tex").read_text().count(r"\begin{table}") == 2
    _check_figures(
        [tmp_path / "figs" / n for n in summary["figures"]],
        {
            f"{s}.{e}"
            for s in ("aer_by_layer", "word_score_by_layer", "distances")
            for e in ("png", "svg")
        },
    )


def test_write_analysis_without_reference_or_distances(tmp_path: Path) -> None:
    recs = [encoder("e5", [0.6, 0.4], [0.5, 0.3])]
    summary = an.write_analysis(
        recs,
        None,
        out_md=tmp_path / "a.md",
        out_tex=tmp_path / "a.tex",
        fig_dir=tmp_path / "f",
        summary_json=tmp_path / "a.json",
    )
    assert summary["reference"] is None and set(summary["tables"]) == {"aer"}
    assert "distances.png" not in summary["figures"]


# ------------------------------------------------------- alignment and transfer by layer


def ft(encoder: str, task: str, seed: int, per_language: dict) -> dict:
    """The zero-shot stage's fine-tuning result, as far as the correlation reads it."""
    return {
        "encoder": encoder,
        "task": task,
        "seed": seed,
        "summary": {"per_language": per_language},
    }


def test_zero_shot_transfer_is_the_mean_over_languages_then_seeds() -> None:
    runs = [
        ft("e5", "pos-gold", 1, {"de": 60.0, "ru": 40.0}),  # 50
        ft("e5", "pos-gold", 2, {"de": 70.0, "ru": 50.0, "tl": None}),  # 60 (None left out)
        ft("x2s", "pos-gold", 1, {"de": 30.0}),
    ]
    assert an.zero_shot_transfer(runs) == {"e5": {"pos-gold": 55.0}, "x2s": {"pos-gold": 30.0}}
    with pytest.raises(InputError, match=r"summary\.per_language\.de"):
        an.zero_shot_transfer([ft("e5", "pos-gold", 1, {"de": "high"})])


def test_alignment_transfer_by_layer_by_hand() -> None:
    recs = [encoder(f"m{i}", [0.5, 0.5], [0.5, 0.5]) for i in range(5)]
    for rec, scores in zip(recs, [[10, 20], [20, 10], [30, 40], [40, 30], [99, 99]], strict=True):
        rec["word_score_by_layer"] = [float(x) for x in scores]
    transfer = {f"m{i}": {"pos-gold": float(i + 1)} for i in range(4)}  # m4: no transfer
    rows = an.alignment_transfer_by_layer(recs, transfer)["pos-gold"]
    assert [r["n"] for r in rows] == [4, 4] and rows[0]["encoders"] == ["m0", "m1", "m2", "m3"]
    assert rows[0]["rho"] == pytest.approx(1.0)
    # layer 1: ranks 2, 1, 4, 3 against 1, 2, 3, 4: sum d^2 = 4, rho = 1 - 6*4 / (4*15)
    assert rows[1]["rho"] == pytest.approx(0.6)
    assert 0 < rows[1]["p_value"] < 1


def test_derived_correlation_by_layer_by_hand() -> None:
    recs = copy.deepcopy(DERIVED[:5])  # Δ: mlm.trans 10, mlm.trans+inv 35 (two seeds), ...
    for rec, layers in zip(
        recs, [[1.0, 40.0], [2.0, 10.0], [2.0, 20.0], [3.0, 50.0], [4.0, 30.0]], strict=True
    ):
        rec["alignment"]["word_score_by_layer"] = layers
    rows = an.derived_correlation_by_layer(recs, "pos-gold")
    # points (mean over seeds): mlm.trans (1, Δ 10), mlm.trans+inv (2, 35; layer 1: 15),
    # align-mlm.trans (3, 2; 50), align-mlm.trans+inv (4, 21; 30)
    from scipy.stats import spearmanr

    assert rows[0]["rho"] == pytest.approx(spearmanr([1, 2, 3, 4], [10, 35, 2, 21]).statistic)
    assert rows[1]["rho"] == pytest.approx(spearmanr([40, 15, 50, 30], [10, 35, 2, 21]).statistic)
    # by hand: ranks 3, 1, 4, 2 against 2, 4, 1, 3: sum d^2 = 20, rho = 1 - 6*20 / (4*15)
    assert rows[1]["rho"] == pytest.approx(-1.0)


def test_write_analysis_with_transfer(tmp_path: Path) -> None:
    transfer = {"e5": {"pos-gold": 50.0}, "x2s": {"pos-gold": 40.0}}
    summary = an.write_analysis(
        ENCODERS,
        REFERENCE,
        out_md=tmp_path / "a.md",
        out_tex=tmp_path / "a.tex",
        fig_dir=tmp_path / "figs",
        summary_json=tmp_path / "a.json",
        transfer=transfer,
    )
    rows = summary["alignment_transfer"]["pos-gold"]
    assert rows[0]["rho"] is None and "2 pair(s)" in rows[0]["reason"]  # two encoders
    assert "(001 Figure 3, by layer)" in (tmp_path / "a.md").read_text()
    assert {"alignment_transfer.png", "alignment_transfer.svg"} <= set(summary["figures"])
