"""Turkish POS test data: Google's Turkish Web Treebank (``turkish-treebanks``), as UPOS.

``turkish-treebanks`` 1.0.0's wheel ships ``data/web.conllu`` and ``data/wiki.conllu``
(4,851 sentences) in CoNLL-U with Google's older universal tags (CONJ, PRT, ONOM, AFFIX;
no PROPN or AUX) and fine tags in XPOS. Its reader assigns every 10th sentence of a file
(index % 10 == 9) to the test split; that is the default portion here.

Tokens are inflectional groups: a word with derivational suffixes is split into pieces
(``Açık la nma yan`` for *Açıklanmayan*), every piece but the last attached to the next
with the relation ``ig`` and ``SpaceAfter=No``. The pieces are joined back into the
surface word (so the encoder sees real text), which takes the tag of its last piece: the
one that carries the word's relation to the rest of the sentence, whose category is the
word's category after derivation.

:data:`TR_TABLE` maps ``UPOS/XPOS`` (or ``UPOS`` alone, where the fine tag does not
matter) to UD's tags: NNP becomes PROPN, and non-finite verb forms (participles VJ,
verbal nouns VN, converbs CRB) become VERB as in the UD Turkish treebanks. Google's
nominal predicates (NOMP: a noun or adjective carrying the copula, tagged VERB at source)
stay VERB; UD would tag the nominal, so these words differ in convention.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike
from xlalign.evaluation.tasks.data import TaggedSentence
from xlalign.evaluation.tasks.labelled.common import (
    UPOS,
    LabelTally,
    check_table,
    package_file,
    write_task,
)
from xlalign.evaluation.tasks.labelled.conllu import Sentence, Word, iter_conllu

log = logging.getLogger(__name__)

TR_FILES = ("data/web.conllu", "data/wiki.conllu")
PORTIONS = ("test", "dev", "train", "all")

#: Google universal tag (``UPOS/XPOS``, or ``UPOS`` for every fine tag) -> UPOS.
TR_TABLE: dict[str, str] = {
    "ADJ/JJ": "ADJ", "ADJ/VJ": "VERB",
    "ADP": "ADP",
    "ADV/RB": "ADV", "ADV/WRB": "ADV", "ADV/CRB": "VERB",
    "AFFIX": "X",
    "CONJ": "CCONJ",
    "DET": "DET",
    "NOUN/NN": "NOUN", "NOUN/NNP": "PROPN", "NOUN/VN": "VERB", "NOUN/ADD": "X",
    "NUM": "NUM",
    "ONOM": "X",
    "PRON": "PRON",
    "PRT": "PART",
    "PUNCT": "PUNCT",
    "VERB/VB": "VERB", "VERB/NOMP": "VERB",
    "X/SYM": "SYM", "X/NFP": "SYM", "X/UH": "INTJ", "X/GW": "X", "X/LS": "X", "X/FW": "X",
}  # fmt: skip

check_table(TR_TABLE, name="TR_TABLE", allowed=UPOS)


def tr_tag(word: Word, *, where: str, tally: LabelTally | None = None) -> str:
    """UPOS of one (last) inflectional group by :data:`TR_TABLE`."""
    key = f"{word.upos}/{word.xpos}"
    if key not in TR_TABLE:
        key = word.upos
    if key not in TR_TABLE:
        raise InputError(
            f"{where}: tag {word.upos}/{word.xpos} has no mapping; the label map knows: "
            f"{', '.join(sorted(TR_TABLE))}"
        )
    if tally is not None:
        tally.table_hit(key, TR_TABLE[key])
    return TR_TABLE[key]


def merge_groups(
    sent: Sentence, path: PathLike, *, tally: LabelTally | None = None
) -> tuple[list[str], list[str], int]:
    """Words and UPOS of a sentence with its inflectional groups joined; also the number
    of pieces merged away. A group (relation ``ig``) that is not attached to the next
    token without a space is an error."""
    words: list[str] = []
    tags: list[str] = []
    pending: list[Word] = []
    merged = 0
    for w in sent.words:
        if w.deprel == "ig":
            if w.head != str(int(w.id) + 1) or "SpaceAfter=No" not in w.misc:
                raise InputError(
                    f"{path}:{w.lineno}: inflectional group {w.form!r} is not attached to "
                    f"the next token without a space (head {w.head}, MISC {w.misc!r})"
                )
            pending.append(w)
            continue
        words.append("".join(p.form for p in pending) + w.form)
        tags.append(tr_tag(w, where=f"{path}:{w.lineno}", tally=tally))
        merged += len(pending)
        pending = []
    if pending:
        raise InputError(
            f"{path}:{pending[-1].lineno}: sentence ends inside a word (relation 'ig')"
        )
    return words, tags, merged


def _in_portion(index: int, portion: str) -> bool:
    """The package reader's split: index % 10 < 8 train, == 8 dev, == 9 test."""
    if portion == "all":
        return True
    rest = index % 10
    return {"train": rest < 8, "dev": rest == 8, "test": rest == 9}[portion]


def build_pos_turkish(
    package_dir: PathLike,
    test_out: PathLike,
    stats_out: PathLike,
    *,
    package: str,
    portion: str = "test",
) -> dict[str, Any]:
    """Turkish ``pos-gold`` test records from the unpacked ``turkish-treebanks`` wheel."""
    if portion not in PORTIONS:
        raise ValueError(f"portion {portion!r}; expected one of {PORTIONS}")
    tally = LabelTally()
    records = []
    pieces: Counter[str] = Counter()
    for rel in TR_FILES:
        path = package_file(package_dir, rel, package=package)
        for index, sent in enumerate(iter_conllu(path)):
            if not _in_portion(index, portion):
                continue
            words, tags, merged = merge_groups(sent, path, tally=tally)
            pieces["tokens_in_file"] += len(sent.words)
            pieces["inflectional_groups_joined"] += merged
            sid = sent.comments.get("sent_id") or f"{rel}:{sent.lineno}"
            records.append(TaggedSentence(id=sid, tokens=words, tags=tags))
    if not records:
        raise InputError(f"{package_dir}: no sentences in {TR_FILES} for portion {portion!r}")
    stats = {
        "task": "pos-gold",
        "language": "tr",
        "silver": False,
        "label_scheme": "UPOS",
        "source": {
            "registry": "pypi",
            "package": package,
            "distribution": "wheel",
            "file": list(TR_FILES),
        },
        "licence": "Apache-2.0 (turkish-treebanks, Google)",
        "portion": "every 10th sentence of each file (index % 10 == 9), the package reader's "
        "test split"
        if portion == "test"
        else portion,
        "unit": "surface words: inflectional groups (relation ig) joined, tagged by the last",
        "inflectional_groups": dict(pieces),
        "label_map": {
            "from": "Google universal tags UPOS/XPOS (older UD)",
            "table": TR_TABLE,
            "rules": {"last_group": "a joined word takes the tag of its last group"},
        },
        "label_map_applied": tally.as_dict(),
        "dropped": {},
    }
    result = write_task({"test": (test_out, records)}, stats_out, stats)
    log.info("pos-gold tr: %d sentences", len(records))
    return result
