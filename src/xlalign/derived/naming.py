"""The names of 001's Tables 1-2 runs and files: a pre-training row with its share of the
parallel sentences (``tlm-p10``) or of the dictionary (``dict-mlm-d50``), and the files
of the derived data holding that share (``parallel.p10.tsv``, ``dictionary.d50.txt``).
Plain data on the standard library (the config validation and the Snakefile read it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xlalign.core.errors import ConfigError


def share_name(fraction: float) -> str:
    """The file-name form of a share: 0.5 -> ``"50"``, 0.01 -> ``"1"``, 0.125 ->
    ``"12.5"`` (percent)."""
    f = float(fraction)
    if not 0.0 < f <= 1.0:
        raise ConfigError(f"share {fraction}: expected a number in (0, 1]")
    return f"{round(f * 100, 6):g}"


def dictionary_file(fraction: float | None = None) -> str:
    """``dictionary.txt`` (the base share, ``fraction`` None) or ``dictionary.d<pct>.txt``."""
    return "dictionary.txt" if fraction is None else f"dictionary.d{share_name(fraction)}.txt"


def parallel_file(fraction: float | None = None) -> str:
    """``parallel.tsv`` (every sentence pair, ``fraction`` None) or ``parallel.p<pct>.tsv``."""
    return "parallel.tsv" if fraction is None else f"parallel.p{share_name(fraction)}.tsv"


#: A run of 001's Tables 1-2: a pre-training row with its share of the parallel sentences
#: (``tlm-p10``: 10 % of the MLM sentences) or of the dictionary (``dict-mlm-d50``).
_SWEEP_RUN = re.compile(r"^(?P<row>.+?)-(?P<kind>[pd])(?P<pct>\d+(?:\.\d+)?)$")


def split_run(run: str) -> tuple[str, str | None, float | None]:
    """``(row, "parallel" | "dictionary" | None, share)`` of a derived run name:
    ``tlm-p10`` -> ``("tlm", "parallel", 0.1)``, ``align-mlm`` -> ``("align-mlm", None,
    None)``."""
    m = _SWEEP_RUN.match(run)
    if not m:
        return run, None, None
    kind = "parallel" if m["kind"] == "p" else "dictionary"
    share = float(m["pct"]) / 100
    if not 0.0 < share <= 1.0:
        raise ConfigError(f"derived run {run!r}: share {m['pct']} % outside (0, 100]")
    return m["row"], kind, share


def sweep_runs(
    rows: Sequence[str],
    *,
    parallel: Sequence[float],
    dictionary: Sequence[float],
    base_dictionary: float,
) -> list[str]:
    """The extra runs of 001's Tables 1-2 for pre-training rows ``rows``: each row that
    reads the parallel copy (TLM) at each ``parallel`` share below 1 (the base run uses
    every sentence pair), each row that reads the dictionary (DICT-MLM, ALIGN-MLM) at each
    ``dictionary`` share other than ``base_dictionary``."""
    from xlalign.pretrain.recipes import needs

    out = []
    for row in rows:
        reads = needs({"pretrain": {}}, row)
        if "parallel" in reads:
            out += [f"{row}-p{share_name(f)}" for f in parallel if float(f) < 1.0]
        if "dictionaries" in reads:
            out += [
                f"{row}-d{share_name(f)}"
                for f in dictionary
                if share_name(f) != share_name(base_dictionary)
            ]
    return out
