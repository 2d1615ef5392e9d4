"""A language outside the paper's 40 end to end (issue 27): Polish on package data,
tests/e2e/new-language.yaml. `xlalign check-config` accepts the configuration; the workflow
segments it with ICU (the default outside the paper's table), trains X2S-M, maps it into
English's space, runs BLI on FreeDict's English-Polish dictionary and UDHR retrieval."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from snakemake_runner import BIN, LAPTOP_PROFILE, ROOT, snakemake

CONFIG = Path(__file__).with_name("new-language.yaml")
RES = "results/newlang"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("newlang")
    snakemake(
        work, *LAPTOP_PROFILE, "--cores", "2", "all", "--configfile", str(CONFIG), timeout=1800
    )
    return work


def test_check_config_accepts_it() -> None:
    r = subprocess.run(
        [str(BIN / "xlalign"), "check-config", str(CONFIG)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    assert "valid (2 languages" in r.stdout


@pytest.mark.slow
def test_segmented_with_icu_in_its_script(run: Path) -> None:
    stats = json.loads((run / f"{RES}/corpus/s0/segment/pl.json").read_text())
    assert stats["tool"] == stats["requested_tool"] == "icu" and stats["fallback_reason"] is None
    assert stats["sentences_out"] > 1000
    text = (run / f"{RES}/corpus/s0/segment/pl.txt").read_text(encoding="utf-8")
    # Polish letters, and ICU's tokens: punctuation split off the words.
    assert sum(text.count(ch) for ch in "ąęłńśźżó") > 1000
    assert " ." in text and "." not in text.split()[0][:-1]


@pytest.mark.slow
def test_x2sm_mapped_and_bli(run: Path) -> None:
    from xlalign.static.vectors import read_vec

    words, vecs = read_vec(run / f"{RES}/static/seed1/x2s-m/pl.vec")
    assert vecs.shape[1] == 384 and len(words) > 1000
    assert (run / f"{RES}/spaces/seed1/x2s-ma/pl.pair.npz").stat().st_size > 0
    dic = (run / "resources/embedded/dictionaries/en-pl.freedict.txt").read_text("utf-8")
    assert len(dic.splitlines()) > 5000
    for method in ("x2s-m", "x2s-ma"):
        bli = json.loads((run / f"{RES}/eval/seed1/bli/{method}/pl.json").read_text())
        assert bli["language"] == "pl"
        scores = {d: r["csls"] for d, r in bli["results"].items()}
        assert set(scores) == {"en-pl", "pl-en"}
        for s in scores.values():
            assert s["evaluated"] >= 20 and 0.0 <= s["p@1"] <= s["p@10"] <= 1.0
        # Far above chance (1 in thousands of words) in one direction at least.
        assert max(s["p@10"] for s in scores.values()) > 0.1, scores
    assert json.loads((run / f"{RES}/eval/seed1/bli/x2s-ma/pl.json").read_text())["alignment"][
        "mapped"
    ]
    tables = (run / f"{RES}/tables/tables.md").read_text(encoding="utf-8")
    assert "| en-pl |" in tables


@pytest.mark.slow
def test_udhr_retrieval(run: Path) -> None:
    res = json.loads(
        (run / f"{RES}/zeroshot/multilingual-e5-small/retrieval/udhr.json").read_text()
    )
    pl = res["languages"]["pl"]
    assert pl["data"]["source"]["file"][0] == "declaration/pol.html"
    assert pl["counts"]["evaluated"] >= 40
    # 50 candidates: chance is 2 %; e5 retrieves most of the articles.
    for direction in ("en->xx", "xx->en"):
        assert 50.0 < pl["accuracy"][direction] <= 100.0
