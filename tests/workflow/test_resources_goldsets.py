"""The cost models of the alignment analyses on the public gold sets (issue 29):
eflomal's reference grows with each set's bitext and the number of sets and holds one
chunk, as the alignment stage does; the encoder analysis is sized by the sets' pairs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from xlalign import config as xlconfig
from xlalign.workflow import resources as jobsize

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def paper() -> dict[str, Any]:
    return xlconfig.load(ROOT / "config/paper.yaml")


def _sets(cfg: dict[str, Any], keep: list[str]) -> dict[str, Any]:
    out = copy.deepcopy(cfg)
    sets = out["analysis"]["gold"]["sets"]
    out["analysis"]["gold"]["sets"] = {k: sets[k] for k in keep}
    return out


def test_the_paper_sets_sizes_drive_the_encoder_analysis(paper: dict[str, Any]) -> None:
    assert jobsize.gold_set_pairs(paper) == {
        "wpt03-en-fr": 447, "wpt05-ro-en": 248, "kftt-ja-en": 582,
        "tsinghua-zh-en": 450, "wpt05-en-hi": 90,
    }  # fmt: skip
    one = _sets(paper, ["wpt05-en-hi"])
    big = _sets(paper, ["kftt-ja-en"])
    # memory with the largest set held, time with all sets passed through the encoder
    assert (
        jobsize.estimate("analyse_encoder", big).mem_mb
        > jobsize.estimate("analyse_encoder", one).mem_mb
    )
    no_dist = copy.deepcopy(paper)
    no_dist["analysis"]["distances"]["pairs"] = []
    mem_all = jobsize.estimate("analyse_encoder", no_dist).mem_mb
    assert mem_all == jobsize.estimate("analyse_encoder", _sets(no_dist, ["kftt-ja-en"])).mem_mb


def test_eflomal_reference_grows_with_bitext_and_sets_and_holds_one_chunk(
    paper: dict[str, Any],
) -> None:
    est = lambda cfg, **kw: jobsize.estimate("eflomal_reference", cfg, **kw)  # noqa: E731
    fr = _sets(paper, ["wpt03-en-fr"])
    fr_ro = _sets(paper, ["wpt03-en-fr", "wpt05-ro-en"])  # ro-en: no bitext, its 248 pairs
    three = _sets(paper, ["wpt03-en-fr", "tsinghua-zh-en", "wpt05-en-hi"])
    assert est(fr_ro).runtime >= est(fr).runtime
    assert est(three).runtime > 2 * est(fr).runtime - jobsize.MIN_RUNTIME
    # memory: one of wordalign's chunks, as the alignment stage of one pair
    align = jobsize.estimate("word_align", paper, wildcards={"src": "en", "tgt": "fr"})
    assert est(three).mem_mb == est(fr).mem_mb == align.mem_mb
    assert jobsize.threads("eflomal_reference", paper) == jobsize.threads("word_align", paper)
    # the 1M-pair bitext: its first chunk aligned (beside the priors' sample), not all five
    assert est(fr).runtime < align.runtime
    # a measured bitext, or the configured cap, replaces the 1M-pair bound
    small = est(fr, sizes={"corpora_mb": {"wpt03-en-fr": 2.5}})
    capped = copy.deepcopy(fr)
    capped["analysis"]["eflomal"]["max_pairs"] = 10_000
    assert small.runtime < est(fr).runtime and est(capped).runtime < est(fr).runtime
    assert est(capped).mem_mb < est(fr).mem_mb
