"""Indonesian POS test data: the hand-tagged training corpus of ``nlp-id`` (kumparan), as UPOS.

``nlp-id`` 0.1.23.0's wheel ships ``nlp_id/data/dataset_postag.txt``: 32,780 sentences of
kumparan news (560k tokens), one ``word<TAB>TAG`` line per token and an empty line
between sentences, in nlp-id's 16-tag set (its README's table). It is the data nlp-id
trains its tagger on, not a tagger's output. The whole file is used (no split is marked).

:data:`NLPID_TABLE` maps the tags to UPOS; the rules of :data:`NLPID_RULES` restore what
UD Indonesian distinguishes and nlp-id's tag set merges: auxiliaries inside ``ADV``,
possessive clitics inside ``DT``, symbols inside ``SYM``. A line with more than two
columns (seven in 0.1.23.0 carry two tags) drops its sentence, counted.
"""

from __future__ import annotations

import logging
import unicodedata
from collections import Counter
from typing import Any

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike
from xlalign.evaluation.tasks.data import TaggedSentence
from xlalign.evaluation.tasks.labelled.common import (
    UPOS,
    LabelTally,
    check_table,
    lookup,
    package_file,
    read_token_lines,
    write_task,
)

log = logging.getLogger(__name__)

NLPID_FILE = "nlp_id/data/dataset_postag.txt"

#: nlp-id tag -> UPOS, before the word rules. ``vb`` is a lower-case ``VB`` (once, in
#: 0.1.23.0).
NLPID_TABLE: dict[str, str] = {
    "ADV": "ADV", "CC": "CCONJ", "DT": "DET", "FW": "X", "IN": "ADP", "JJ": "ADJ",
    "NEG": "PART", "NN": "NOUN", "NNP": "PROPN", "NUM": "NUM", "PR": "PRON", "RP": "PART",
    "SC": "SCONJ", "SYM": "PUNCT", "UH": "INTJ", "VB": "VERB", "vb": "VERB",
}  # fmt: skip

#: Words UD Indonesian tags AUX (its treebanks: akan, sudah, telah, bisa, dapat, harus,
#: adalah; boleh and mesti are modals in nlp-id's own description of ADV).
ID_AUXILIARIES = frozenset("akan sudah telah bisa dapat harus boleh mesti adalah".split())
#: Possessive clitics nlp-id tags DT (UD Indonesian: PRON).
ID_CLITICS = frozenset({"nya", "-nya", "mu", "ku"})
#: Characters that are symbols in UD although Unicode calls them punctuation.
SYMBOL_PUNCTUATION = frozenset("#%&@")

NLPID_RULES: dict[str, str] = {
    "auxiliary": f"ADV {'/'.join(sorted(ID_AUXILIARIES))} -> AUX",
    "possessive_clitic": f"DT {'/'.join(sorted(ID_CLITICS))} -> PRON",
    "symbol": "SYM that is not all punctuation (Unicode P*, except # % & @) -> SYM "
    "(currency Rp, +, =, <, ...); the rest stays PUNCT",
}

check_table(NLPID_TABLE, name="NLPID_TABLE", allowed=UPOS)


def is_punctuation(token: str) -> bool:
    """Every character is Unicode punctuation (P*) and none is a UD symbol (# % & @)."""
    return bool(token) and all(
        unicodedata.category(ch).startswith("P") and ch not in SYMBOL_PUNCTUATION for ch in token
    )


def nlpid_to_upos(word: str, tag: str, *, where: str, tally: LabelTally | None = None) -> str:
    """UPOS of one nlp-id token: :data:`NLPID_TABLE`, then :data:`NLPID_RULES`."""
    base = lookup(NLPID_TABLE, tag, where=where, what="nlp-id tag")
    low = word.lower()
    rule: tuple[str, str] | None = None
    if tag == "ADV" and low in ID_AUXILIARIES:
        rule = ("auxiliary", "AUX")
    elif tag == "DT" and low in ID_CLITICS:
        rule = ("possessive_clitic", "PRON")
    elif tag == "SYM" and not is_punctuation(word):
        rule = ("symbol", "SYM")
    if tally is not None:
        if rule is None:
            tally.table_hit(tag, base)
        else:
            tally.rule_hit(rule[0])
    return base if rule is None else rule[1]


def build_pos_nlpid(
    package_dir: PathLike, test_out: PathLike, stats_out: PathLike, *, package: str
) -> dict[str, Any]:
    """Indonesian ``pos-gold`` test records from the unpacked ``nlp-id`` wheel."""
    path = package_file(package_dir, NLPID_FILE, package=package)
    tally = LabelTally()
    dropped: Counter[str] = Counter()
    records = []
    for start, words, tags in read_token_lines(path, columns={2}, dropped=dropped):
        upos = [
            nlpid_to_upos(w, t, where=f"{path}:{start + i}", tally=tally)
            for i, (w, t) in enumerate(zip(words, tags, strict=True))
        ]
        records.append(TaggedSentence(id=f"id-nlpid-{start}", tokens=words, tags=upos))
    if not records:
        raise InputError(f"{path}: no sentences")
    stats = {
        "task": "pos-gold",
        "language": "id",
        "silver": False,
        "label_scheme": "UPOS",
        "source": {
            "registry": "pypi",
            "package": package,
            "distribution": "wheel",
            "file": NLPID_FILE,
        },
        "licence": "MIT (nlp-id); kumparan news text tagged in house",
        "portion": "all (the package marks no split)",
        "unit": "nlp-id's tokens (clitics such as -nya split off)",
        "label_map": {"from": "nlp-id tags", "table": NLPID_TABLE, "rules": NLPID_RULES},
        "label_map_applied": tally.as_dict(),
        "dropped": dict(sorted(dropped.items())),
    }
    result = write_task({"test": (test_out, records)}, stats_out, stats)
    log.info("pos-gold id: %d sentences, dropped %s", len(records), dict(dropped))
    return result
