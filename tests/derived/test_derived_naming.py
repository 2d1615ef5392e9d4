"""Names of 001's Tables 1-2 runs (a row with its parallel or dictionary share)."""

from __future__ import annotations

import pytest

from xlalign.core.errors import ConfigError
from xlalign.derived.naming import split_run, sweep_runs


def test_split_run() -> None:
    assert split_run("tlm-p10") == ("tlm", "parallel", 0.1)
    assert split_run("dict-mlm-d50") == ("dict-mlm", "dictionary", 0.5)
    assert split_run("align-mlm-d12.5") == ("align-mlm", "dictionary", 0.125)
    assert split_run("align-mlm") == ("align-mlm", None, None)
    assert split_run("mlm") == ("mlm", None, None)
    with pytest.raises(ConfigError, match="'tlm-p150'"):
        split_run("tlm-p150")


def test_sweep_runs_follow_what_each_row_reads() -> None:
    rows = ["mlm", "tlm", "dict-mlm", "align-mlm"]
    runs = sweep_runs(rows, parallel=[0.01, 0.1, 1.0], dictionary=[0.25, 0.5], base_dictionary=0.25)
    # TLM reads the parallel copy, DICT-MLM and ALIGN-MLM the dictionary; MLM neither; the
    # base run already covers 100 % parallel and the base dictionary share.
    assert runs == ["tlm-p1", "tlm-p10", "dict-mlm-d50", "align-mlm-d50"]
    assert all(split_run(r)[0] in rows for r in runs)
    assert sweep_runs(["mlm"], parallel=[0.1], dictionary=[0.5], base_dictionary=0.25) == []
