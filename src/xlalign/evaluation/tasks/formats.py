"""Readers of the official full-scale files of the zero-shot tasks, into :mod:`.data` records.

Each reader takes the file(s) as their owners distribute them and returns a
:class:`Loaded`: the records plus what was skipped (and why) and what was kept but is
worth knowing (an answer whose offset does not point at its text, an IOB2 sequence that
opens with ``I-``). A file in the wrong format raises :class:`InputError` naming the file,
the line (the JSON key path for JSON) and what was expected, so that a bad download stops
the data step, not a fine-tuning run hours later.

Formats, and the conventions of the reference implementations they follow:

* SQuAD v1.1 JSON (SQuAD, XQuAD, MLQA, TyDiQA-GoldP): :func:`read_squad_json`;
  :func:`read_tydiqa` keeps one language of TyDiQA-GoldP's multilingual files (question
  ids start with the language's English name, as XTREME's ``utils_preprocess.py`` splits
  them). Contexts and answers are kept byte for byte (the Hugging Face ``xtreme`` script
  strips contexts, which shifts ``answer_start``).
* PAN-X / WikiANN as Rahimi et al. (2019) split it and XTREME distributes it: lines
  ``<lang>:<token>\\t<TAG>``, a blank line between sentences (:func:`read_panx`), tags IOB2
  as given (the Hugging Face ``xtreme`` and ``wikiann`` configurations keep them as they
  are: ``O``, ``B-/I-`` ``PER``, ``ORG``, ``LOC``).
* UD CoNLL-U (:func:`iter_conllu`, :func:`read_ud_pos`, :func:`read_ud_parse`) and the
  selection of a language's treebanks (:func:`ud_treebank_files`): every treebank whose
  file names start with the language code, merged per split, as XTREME's
  ``download_data.sh`` does.
* XNLI-1.0 TSV (:func:`read_xnli`), XTREME's English training file from XNLI-MT-1.0
  (:func:`read_xnli_mt_train`) and MultiNLI 1.0 itself (:func:`read_multinli`).
* PAWS-X TSV (:func:`read_pawsx`).
* Tatoeba as LASER distributes it (:func:`read_tatoeba`) and BUCC 2018
  (:func:`read_bucc`, :class:`BuccCorpus`).

Every reader has a writer of the same format (``write_*``; BUCC's :func:`write_bucc`)
that the property tests use: what a reader accepts, written back and read again, gives
the same records. Lines are read with a bound on their length
(:mod:`xlalign.core.formats.text`); invalid UTF-8 names the line. Refused beyond what each
reader says: a TSV header in another column order where the reader takes columns by
position (PAWS-X), a JSON document nested too deeply, a JSON string with a lone surrogate
escape (not text), a repeated JSON key in a MultiNLI line, a MultiNLI ``pairID`` that is
not a string or an integer, a SQuAD ``title`` that is not a string.

This module reads plain files; fetching and unpacking the archives is
:mod:`.official`'s job.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from xlalign.core.errors import InputError
from xlalign.core.formats import conllu
from xlalign.core.formats.text import is_text, iter_numbered_lines, json_line
from xlalign.core.io import PathLike, atomic_open
from xlalign.evaluation.tasks import registry as _registry
from xlalign.evaluation.tasks.data import (
    PairExample,
    ParsedSentence,
    QAExample,
    RetrievalPair,
    TaggedSentence,
)

R = TypeVar("R")


@dataclass
class Loaded(Generic[R]):
    """Records read from official files, with what was skipped and what was flagged.

    ``skipped``: reason -> records left out (they are not in ``records``);
    ``flagged``: note -> records kept that carry it (e.g. ``no_answer``).
    """

    records: list[R] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    flagged: Counter[str] = field(default_factory=Counter)

    def extend(self, other: Loaded[R]) -> None:
        self.records.extend(other.records)
        self.skipped.update(other.skipped)
        self.flagged.update(other.flagged)

    def stats(self) -> dict[str, Any]:
        """``records``, ``skipped`` and ``flagged`` as plain JSON."""
        return {
            "records": len(self.records),
            "skipped": dict(sorted(self.skipped.items())),
            "flagged": dict(sorted(self.flagged.items())),
        }


# ------------------------------------------------------------------------------ helpers


def _lines(path: PathLike) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a UTF-8 text file, line endings removed (a line's length
    bounded)."""
    yield from iter_numbered_lines(path)


def _header(path: Path, lines: Iterator[tuple[int, str]], required: Sequence[str]) -> list[str]:
    """The column names of a TSV's first line, checked to contain ``required``."""
    first = next(lines, None)
    if first is None:
        raise InputError(f"{path}: empty file; expected a TSV header with {list(required)}")
    cols = first[1].split("\t")
    missing = [c for c in required if c not in cols]
    if missing:
        raise InputError(
            f"{path}:1: header {cols[:12]} lacks {missing}; expected a TSV header with "
            f"{list(required)}"
        )
    return cols


def _fields(path: Path, lineno: int, line: str, n: int, what: str) -> list[str]:
    row = line.split("\t")
    if len(row) != n:
        raise InputError(f"{path}:{lineno}: {len(row)} tab-separated fields; expected {n} ({what})")
    return row


# ------------------------------------------------------------------------------ QA


#: TyDiQA-GoldP's languages: ISO 639-1 code -> the English name its question ids start with.
TYDIQA_LANGUAGES = {
    "ar": "arabic",
    "bn": "bengali",
    "en": "english",
    "fi": "finnish",
    "id": "indonesian",
    "ko": "korean",
    "ru": "russian",
    "sw": "swahili",
    "te": "telugu",
}


def _json_file(path: PathLike) -> Any:
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: file not found (expected SQuAD-format JSON)")
    raw = p.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(f"{p}:{line}: invalid UTF-8 at byte {exc.start}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{p}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise InputError(f"{p}: top level: JSON nested too deeply for SQuAD format") from None


def _need(path: Path, where: str, obj: Any, key: str, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise InputError(f"{path}: {where}: missing key {key!r} (SQuAD v1.1 format)")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise InputError(f"{path}: {where}.{key}: expected {names}, found {type(value).__name__}")
    if isinstance(value, str) and not is_text(value):
        raise InputError(f"{path}: {where}.{key}: a lone surrogate escape; expected text")
    return value


def read_squad_json(path: PathLike, *, id_prefix: str | None = None) -> Loaded[QAExample]:
    """Questions of a SQuAD v1.1-format file (SQuAD, XQuAD, MLQA, TyDiQA-GoldP).

    ``id_prefix``: keep only questions whose id starts with it (and count the others as
    ``other_language``). Kept but flagged: ``no_answer`` (no gold answer, or SQuAD 2.0's
    ``is_impossible``), ``empty_answer_text`` and ``answer_start_mismatch`` (the context
    at ``answer_start`` is not the answer text: XTREME's ``run_squad`` drops such a
    training example when it cannot find the text). Skipped: ``empty_question``,
    ``empty_context``, ``duplicate_id``.
    """
    p = Path(path)
    data = _need(p, "top level", _json_file(p), "data", list)
    out: Loaded[QAExample] = Loaded()
    seen: set[str] = set()
    for i, article in enumerate(data):
        where_a = f"data[{i}]"
        title = article.get("title", "") if isinstance(article, dict) else ""
        if "title" in (article if isinstance(article, dict) else {}):
            title = _need(p, where_a, article, "title", str)
        paragraphs = _need(p, where_a, article, "paragraphs", list)
        for j, par in enumerate(paragraphs):
            where_p = f"{where_a}.paragraphs[{j}]"
            context = _need(p, where_p, par, "context", str)
            for k, qa in enumerate(_need(p, where_p, par, "qas", list)):
                where = f"{where_p}.qas[{k}]"
                qid = str(_need(p, where, qa, "id", (str, int)))
                question = _need(p, where, qa, "question", str)
                raw_answers = qa.get("answers", []) if isinstance(qa, dict) else []
                if not isinstance(raw_answers, list):
                    raise InputError(f"{p}: {where}.answers: expected a list")
                answers = []
                for m, ans in enumerate(raw_answers):
                    text = _need(p, f"{where}.answers[{m}]", ans, "text", str)
                    start = _need(p, f"{where}.answers[{m}]", ans, "answer_start", int)
                    answers.append({"text": text, "answer_start": start})
                if id_prefix is not None and not qid.startswith(id_prefix):
                    out.skipped["other_language"] += 1
                    continue
                if not question.strip():
                    out.skipped["empty_question"] += 1
                    continue
                if not context:
                    out.skipped["empty_context"] += 1
                    continue
                if qid in seen:
                    out.skipped["duplicate_id"] += 1
                    continue
                seen.add(qid)
                if qa.get("is_impossible"):
                    answers = []
                if not answers:
                    out.flagged["no_answer"] += 1
                if any(not a["text"] for a in answers):
                    out.flagged["empty_answer_text"] += 1
                if any(
                    a["text"]
                    and context[a["answer_start"] : a["answer_start"] + len(a["text"])] != a["text"]
                    for a in answers
                ):
                    out.flagged["answer_start_mismatch"] += 1
                out.records.append(
                    QAExample(
                        id=qid,
                        context=context,
                        question=question,
                        answers=answers,
                        title=str(title),
                    )
                )
    return out


def write_squad_json(path: PathLike, records: Iterable[QAExample]) -> int:
    """Write questions as SQuAD v1.1 JSON, one article and paragraph per question
    (atomically); :func:`read_squad_json` reads them back. Returns how many."""
    data = [
        {
            "title": r.title,
            "paragraphs": [
                {
                    "context": r.context,
                    "qas": [{"id": r.id, "question": r.question, "answers": r.answers}],
                }
            ],
        }
        for r in records
    ]
    with atomic_open(path) as fh:
        json.dump({"version": "1.1", "data": data}, fh, ensure_ascii=False)
    return len(data)


def read_tydiqa(path: PathLike, lang: str) -> Loaded[QAExample]:
    """The questions of one language of a TyDiQA-GoldP file (``tydiqa-goldp-v1.1-train.json``
    or ``-dev.json``, all languages in one file; or XTREME's per-language dev files)."""
    name = TYDIQA_LANGUAGES.get(lang)
    if name is None:
        raise InputError(
            f"{path}: TyDiQA-GoldP has no language {lang!r}; it has {sorted(TYDIQA_LANGUAGES)}"
        )
    out = read_squad_json(path, id_prefix=f"{name}-")
    if not out.records:
        raise InputError(f"{path}: no question of language {lang!r} (ids '{name}-...')")
    return out


def mlqa_file(root: PathLike, split: str, lang: str, question_lang: str | None = None) -> Path:
    """``MLQA_V1/<split>/<split>-context-<c>-question-<q>.json`` under ``root``; zero-shot
    uses context = question = ``lang``."""
    if split not in ("dev", "test"):
        raise InputError(f"MLQA has splits 'dev' and 'test', not {split!r}")
    q = question_lang or lang
    return Path(root) / "MLQA_V1" / split / f"{split}-context-{lang}-question-{q}.json"


# ------------------------------------------------------------------------------ tagging

_TAG_RE = re.compile(r"^(O|[BI]-[A-Za-z]+)$")


def read_panx(
    path: PathLike, *, lang: str | None = None, prefixed: bool = True
) -> Loaded[TaggedSentence]:
    """NER sentences of PAN-X (``<lang>:<token>\\t<TAG>``) or raw WikiANN (``token\\tTAG``).

    A blank line ends a sentence; ``-DOCSTART-`` lines are ignored. With ``prefixed``
    every token must carry a ``<code>:`` prefix (``lang:`` when ``lang`` is given); it is
    removed up to the first colon, as XTREME's ``panx_preprocess`` does. Tags must look
    like IOB2 (``O``, ``B-X``, ``I-X``); they are kept as given, and a sentence where an
    ``I-X`` follows neither ``B-X`` nor ``I-X`` is flagged ``iob2_invalid``.
    """
    p = Path(path)
    out: Loaded[TaggedSentence] = Loaded()
    tokens: list[str] = []
    tags: list[str] = []
    start = 0

    def flush() -> None:
        if not tokens:
            return
        prev = "O"
        for t in tags:
            if t.startswith("I-") and prev[2:] != t[2:]:
                out.flagged["iob2_invalid"] += 1
                break
            prev = t
        out.records.append(
            TaggedSentence(id=f"{p.name}:{start}", tokens=list(tokens), tags=list(tags))
        )
        tokens.clear()
        tags.clear()

    for lineno, line in _lines(p):
        if not line.strip() or line.startswith("-DOCSTART-"):
            flush()
            continue
        row = line.split("\t")
        if len(row) != 2:
            raise InputError(
                f"{p}:{lineno}: {len(row)} tab-separated fields; expected 'token<TAB>TAG'"
                + (" with a '<lang>:' prefix on the token" if prefixed else "")
            )
        token, tag = row[0], row[1].strip()
        if prefixed:
            code, sep, rest = token.partition(":")
            if not sep or (lang is not None and code != lang):
                want = f"{lang}:" if lang else "<lang>:"
                raise InputError(f"{p}:{lineno}: token {token!r} lacks the prefix {want!r}")
            token = rest
        if not token:
            raise InputError(f"{p}:{lineno}: an empty token; expected 'token<TAB>TAG'")
        if not _TAG_RE.match(tag):
            raise InputError(f"{p}:{lineno}: tag {tag!r} is not IOB2 (O, B-X or I-X)")
        if not tokens:
            start = lineno
        tokens.append(token)
        tags.append(tag)
    flush()
    return out


def write_panx(path: PathLike, records: Iterable[TaggedSentence], *, lang: str | None) -> int:
    """Write sentences as PAN-X lines (``<lang>:<token>\\t<TAG>``; raw WikiANN's
    ``token\\tTAG`` when ``lang`` is None), a blank line after each (atomically);
    :func:`read_panx` reads them back. Returns how many."""
    n = 0
    prefix = f"{lang}:" if lang is not None else ""
    with atomic_open(path) as fh:
        for rec in records:
            n += 1
            for token, tag in zip(rec.tokens, rec.tags, strict=True):
                fh.write(f"{prefix}{token}\t{tag}\n")
            fh.write("\n")
    return n


# ------------------------------------------------------------------------------ CoNLL-U


@dataclass
class ConlluWord:
    """One syntactic word of a CoNLL-U sentence (integer ID)."""

    id: int
    form: str
    upos: str
    head: int | None  # None: "_" in the file
    deprel: str


@dataclass
class ConlluSentence:
    """A CoNLL-U sentence: its words, multiword tokens and the count of empty nodes."""

    path: str
    line: int  # the line of its first token
    sent_id: str
    words: list[ConlluWord]
    #: multiword tokens: (first id, last id, surface form)
    multiword: list[tuple[int, int, str]] = field(default_factory=list)
    empty_nodes: int = 0


def iter_conllu(path: PathLike) -> Iterator[ConlluSentence]:
    """Sentences of a CoNLL-U file (UD v2.x), read and checked by the project's one CoNLL-U
    reader (:mod:`xlalign.core.formats.conllu`: 10 columns, word IDs 1..n without gaps,
    heads within the sentence or ``_``). Multiword-token ranges (``1-2``) and empty nodes
    (``1.1``) are kept apart from the words."""
    p = Path(path)
    for n_sent, sent in enumerate(conllu.iter_conllu(p), start=1):
        yield ConlluSentence(
            path=str(p),
            line=sent.token_line,
            sent_id=sent.sent_id or f"{n_sent}",
            words=[ConlluWord(int(w.id), w.form, w.upos, w.head, w.deprel) for w in sent.words],
            multiword=sent.multiword,
            empty_nodes=sent.empty_nodes,
        )


#: Languages of XTREME's UD-POS: UD v2.5 (XTREME) and, for the languages XTREME-R added,
#: UD v2.7 (google-research/xtreme scripts/download_data.sh).
UDPOS_LANGUAGES_V25 = (
    "af ar bg de el en es et eu fa fi fr he hi hu id it ja kk ko mr nl pt ru ta te th tl tr "
    "ur vi yo zh"
).split()
UDPOS_LANGUAGES_V27 = ("lt", "pl", "uk", "wo", "ro")

_UD_SPLIT_RE = re.compile(r"-ud-(train|dev|test)\b")


def ud_treebank_files(
    root: PathLike, lang: str, *, treebanks: Iterable[str] | None = None
) -> dict[str, list[Path]]:
    """A language's CoNLL-U files under ``root`` (an unpacked ``ud-treebanks-v2.x``), per
    split (``train``/``dev``/``test``), sorted by file name.

    The selection is XTREME's: every treebank whose files are named ``<lang>_<treebank>-ud-
    <split>*.conllu`` (so ``lzh_kyoto`` is not Chinese and ``qhe_hiencs`` not Hindi; UD
    German HDT's ``train-a-1`` parts all count as train). ``treebanks`` (directory names
    such as ``UD_English-EWT``) restricts it to those.
    """
    base = Path(root)
    wanted = set(treebanks) if treebanks is not None else None
    out: dict[str, list[Path]] = {"train": [], "dev": [], "test": []}
    for path in sorted(base.rglob("*.conllu"), key=lambda q: (q.name, str(q))):
        if path.name.split("_", 1)[0] != lang:
            continue
        if wanted is not None and path.parent.name not in wanted:
            continue
        m = _UD_SPLIT_RE.search(path.name)
        if m is None:
            continue
        out[m.group(1)].append(path)
    if wanted is not None:
        found = {p.parent.name for files in out.values() for p in files}
        if wanted - found:
            raise InputError(
                f"{base}: no CoNLL-U files of treebank(s) {sorted(wanted - found)} for {lang!r}"
            )
    return {split: files for split, files in out.items() if files}


#: XTREME's conversion (``conllu_to_conll.py --replace_subtokens_with_fused_forms``) keeps
#: of a multiword token the word closest to the root, ties broken by this UPOS order.
FUSED_HEAD_PRECEDENCE = {
    "default": "VERB NOUN PROPN PRON ADJ NUM ADV INTJ AUX ADP DET PART CCONJ SCONJ X PUNCT".split(),
    "es": "VERB AUX PRON ADP DET".split(),
    "fr": "VERB AUX PRON NOUN ADJ ADV ADP DET PART SCONJ CONJ".split(),
    "it": "VERB AUX ADV PRON ADP DET INTJ".split(),
}


def _depth(words: list[ConlluWord], i: int) -> int:
    """Ancestors of word ``i`` (1-based) along the basic heads."""
    n, seen = 0, set()
    h = words[i - 1].head
    while h and h not in seen:
        seen.add(h)
        n += 1
        h = words[h - 1].head if 1 <= h <= len(words) else None
    return n


def _fused(sent: ConlluSentence, lang: str) -> tuple[list[str], list[str]]:
    """Forms and UPOS with each multiword token's words replaced by its surface form,
    tagged with the UPOS of the span's head word."""
    order = FUSED_HEAD_PRECEDENCE.get(lang, FUSED_HEAD_PRECEDENCE["default"])
    forms = [w.form for w in sent.words]
    upos = [w.upos for w in sent.words]
    drop: set[int] = set()
    for a, b, surface in sent.multiword:
        span = list(range(a, min(b, len(sent.words)) + 1))
        depths = {i: _depth(sent.words, i) for i in span}
        best = min(depths.values())
        top = [i for i in span if depths[i] == best]
        head = top[0]
        if len(top) > 1:
            ranked = [i for i in top if sent.words[i - 1].upos in order]
            if ranked:
                head = min(ranked, key=lambda i: order.index(sent.words[i - 1].upos))
        forms[head - 1] = surface
        drop.update(i for i in span if i != head)
    keep = [i for i in range(1, len(forms) + 1) if i not in drop]
    return [forms[i - 1] for i in keep], [upos[i - 1] for i in keep]


def _xtreme_clean(form: str) -> str:
    """XTREME's ``remove_empty_space``: zero-width non-joiners and spaces removed."""
    return "".join(form.replace("\u200c", "").split(" "))


def _textless(forms: list[str]) -> bool:
    """XTREME's rule for treebanks distributed without text: drop a sentence when all of
    its words, or all but one, are ``_``."""
    n = sum(f == "_" for f in forms)
    return n > 0 and n >= len(forms) - 1


def read_ud_pos(
    files: Sequence[PathLike],
    *,
    lang: str = "",
    multiword: str = "words",
    xtreme_clean: bool = True,
) -> Loaded[TaggedSentence]:
    """UPOS-tagged sentences of CoNLL-U files (a language's treebanks of one split, merged).

    ``multiword``: ``"words"`` (default) tags the syntactic words, leaving out multiword-
    token ranges and empty nodes, as the Hugging Face ``xtreme`` ``udpos`` configuration
    does; ``"fused"`` replaces each multiword token's words by its surface form, tagged
    with the UPOS of the word closest to the root (ties: :data:`FUSED_HEAD_PRECEDENCE`),
    following XTREME's own conversion (``conllu_to_conll.py``) over the basic dependency
    tree (XTREME's tool also follows enhanced dependencies; they rarely change the head).
    ``xtreme_clean`` removes zero-width non-joiners and spaces inside words, as XTREME's
    ``udpos_preprocess``. Skipped: ``textless`` (treebanks without word forms, by
    XTREME's rule), ``no_upos``, ``empty_word``. Flagged: ``multiword_tokens``,
    ``empty_nodes`` (sentences that had them).
    """
    if multiword not in ("words", "fused"):
        raise ValueError(f"multiword must be 'words' or 'fused', not {multiword!r}")
    out: Loaded[TaggedSentence] = Loaded()
    for f in files:
        name = Path(f).name
        for sent in iter_conllu(f):
            if sent.multiword:
                out.flagged["multiword_tokens"] += 1
            if sent.empty_nodes:
                out.flagged["empty_nodes"] += 1
            if multiword == "fused" and sent.multiword:
                forms, upos = _fused(sent, lang)
            else:
                forms = [w.form for w in sent.words]
                upos = [w.upos for w in sent.words]
            if _textless(forms):
                out.skipped["textless"] += 1
                continue
            if any(u in ("_", "") for u in upos):
                out.skipped["no_upos"] += 1
                continue
            if xtreme_clean:
                forms = [_xtreme_clean(w) for w in forms]
            if any(not w for w in forms):
                out.skipped["empty_word"] += 1
                continue
            out.records.append(TaggedSentence(id=f"{name}:{sent.sent_id}", tokens=forms, tags=upos))
    return out


def read_ud_parse(
    files: Sequence[PathLike], *, universal_deprels: bool = False
) -> Loaded[ParsedSentence]:
    """Dependency trees of CoNLL-U files over the syntactic words (multiword-token ranges
    and empty nodes left out; the basic tree never points at them).

    ``universal_deprels`` keeps the universal relation only (``nmod:poss`` -> ``nmod``).
    Skipped: ``textless``, ``no_upos``, ``no_heads`` (a ``_`` head), ``invalid_tree``.
    """
    out: Loaded[ParsedSentence] = Loaded()
    for f in files:
        name = Path(f).name
        for sent in iter_conllu(f):
            forms = [w.form for w in sent.words]
            if _textless(forms):
                out.skipped["textless"] += 1
                continue
            if any(w.upos in ("_", "") for w in sent.words):
                out.skipped["no_upos"] += 1
                continue
            if any(w.head is None for w in sent.words):
                out.skipped["no_heads"] += 1
                continue
            rels = [w.deprel for w in sent.words]
            if universal_deprels:
                rels = [r.split(":", 1)[0] for r in rels]
            rec = ParsedSentence(
                id=f"{name}:{sent.sent_id}",
                tokens=forms,
                upos=[w.upos for w in sent.words],
                heads=[int(w.head or 0) for w in sent.words],
                deprels=rels,
            )
            if rec.check() is not None:
                out.skipped["invalid_tree"] += 1
                continue
            out.records.append(rec)
    return out


# ------------------------------------------------------------------------------ pairs

#: XNLI's labels (XNLI-MT's training file says ``contradictory``).
NLI_LABELS = ("entailment", "neutral", "contradiction")


def _nli_label(path: Path, lineno: int, label: str, out: Loaded[PairExample]) -> str | None:
    label = label.strip()
    if label == "contradictory":
        label = "contradiction"
    if label == "-":
        out.skipped["no_gold_label"] += 1
        return None
    if label not in NLI_LABELS:
        raise InputError(
            f"{path}:{lineno}: label {label!r}; expected one of {list(NLI_LABELS)} or '-'"
        )
    return label


def _add_pair(out: Loaded[PairExample], rid: str, s1: str, s2: str, label: str) -> None:
    if not s1.strip() or not s2.strip():
        out.skipped["empty_sentence"] += 1
        return
    out.records.append(PairExample(id=rid, sentence1=s1, sentence2=s2, label=label))


def read_xnli(path: PathLike, *, lang: str) -> Loaded[PairExample]:
    """The pairs of one language of ``xnli.dev.tsv`` / ``xnli.test.tsv`` (XNLI-1.0: one TSV
    for all 15 languages, header ``language gold_label ... sentence1 sentence2 ...``).

    Skipped: ``no_gold_label`` (``-``), ``empty_sentence``. Ids: ``pairID`` (unique within
    a language), else the line.
    """
    p = Path(path)
    lines = _lines(p)
    cols = _header(p, lines, ("language", "gold_label", "sentence1", "sentence2"))
    idx = {c: i for i, c in enumerate(cols)}
    out: Loaded[PairExample] = Loaded()
    found: set[str] = set()
    seen: set[str] = set()
    for lineno, line in lines:
        if not line.strip():
            continue
        row = _fields(p, lineno, line, len(cols), "the header's columns")
        found.add(row[idx["language"]])
        if row[idx["language"]] != lang:
            continue
        label = _nli_label(p, lineno, row[idx["gold_label"]], out)
        if label is None:
            continue
        rid = row[idx["pairID"]] if "pairID" in idx else ""
        if not rid or rid in seen:
            rid = f"{p.name}:{lineno}"
        seen.add(rid)
        _add_pair(out, rid, row[idx["sentence1"]], row[idx["sentence2"]], label)
    if not out.records and not out.skipped:
        raise InputError(f"{p}: no pair of language {lang!r}; the file has {sorted(found)}")
    return out


def read_xnli_mt_train(path: PathLike) -> Loaded[PairExample]:
    """XTREME's English training set: ``XNLI-MT-1.0/multinli/multinli.train.en.tsv``
    (header ``premise hypo label``; MultiNLI's training pairs)."""
    p = Path(path)
    lines = _lines(p)
    cols = _header(p, lines, ("premise", "hypo", "label"))
    idx = {c: i for i, c in enumerate(cols)}
    out: Loaded[PairExample] = Loaded()
    for lineno, line in lines:
        if not line.strip():
            continue
        row = _fields(p, lineno, line, len(cols), "the header's columns")
        s1, s2, raw = row[idx["premise"]], row[idx["hypo"]], row[idx["label"]]
        label = _nli_label(p, lineno, raw, out)
        if label is not None:
            _add_pair(out, f"{p.name}:{lineno}", s1, s2, label)
    return out


def read_multinli(path: PathLike) -> Loaded[PairExample]:
    """MultiNLI 1.0 (``multinli_1.0_train.jsonl`` or ``.txt``): ``gold_label``,
    ``sentence1``, ``sentence2``, ``pairID``. Skipped: ``no_gold_label``, ``empty_sentence``."""
    p = Path(path)
    out: Loaded[PairExample] = Loaded()
    if p.suffix == ".jsonl":
        for lineno, line in _lines(p):
            if not line.strip():
                continue
            obj: Any = json_line(p, lineno, line, what="a MultiNLI line")
            for key in ("gold_label", "sentence1", "sentence2"):
                if not isinstance(obj, dict) or not is_text(obj.get(key)):
                    raise InputError(f"{p}:{lineno}: expected a string {key!r}")
            pid = obj.get("pairID")
            if pid is not None and not (is_text(pid) or type(pid) is int):
                raise InputError(f"{p}:{lineno}: 'pairID' is {type(pid).__name__}; expected text")
            label = _nli_label(p, lineno, obj["gold_label"], out)
            if label is not None:
                rid = str(pid or f"{p.name}:{lineno}")
                _add_pair(out, rid, obj["sentence1"], obj["sentence2"], label)
        return out
    lines = _lines(p)
    cols = _header(p, lines, ("gold_label", "sentence1", "sentence2"))
    idx = {c: i for i, c in enumerate(cols)}
    for lineno, line in lines:
        if not line.strip():
            continue
        row = _fields(p, lineno, line, len(cols), "the header's columns")
        label = _nli_label(p, lineno, row[idx["gold_label"]], out)
        if label is not None:
            rid = row[idx["pairID"]] if "pairID" in idx else f"{p.name}:{lineno}"
            _add_pair(out, rid, row[idx["sentence1"]], row[idx["sentence2"]], label)
    return out


def read_pawsx(path: PathLike) -> Loaded[PairExample]:
    """A PAWS-X file (``x-final/<lang>/{train,translated_train,dev_2k,test_2k}.tsv``:
    ``id sentence1 sentence2 label``, labels ``0``/``1``). Skipped: ``empty_sentence``
    (the machine-translated training sets have some)."""
    p = Path(path)
    lines = _lines(p)
    cols = _header(p, lines, ("id", "sentence1", "sentence2", "label"))
    if cols != ["id", "sentence1", "sentence2", "label"]:
        raise InputError(f"{p}:1: header {cols}; expected id, sentence1, sentence2, label")
    out: Loaded[PairExample] = Loaded()
    for lineno, line in lines:
        if not line.strip():
            continue
        rid, s1, s2, label = _fields(p, lineno, line, 4, "id, sentence1, sentence2, label")
        label = label.strip()
        if label not in ("0", "1"):
            raise InputError(f"{p}:{lineno}: label {label!r}; expected '0' or '1'")
        _add_pair(out, rid, s1, s2, label)
    return out


def _write_tsv(path: PathLike, header: Sequence[str], rows: Iterable[Sequence[str]]) -> int:
    n = 0
    with atomic_open(path) as fh:
        fh.write("\t".join(header) + "\n")
        for row in rows:
            fh.write("\t".join(row) + "\n")
            n += 1
    return n


def write_xnli(path: PathLike, records: Iterable[PairExample], *, lang: str) -> int:
    """Write pairs of one language as XNLI-1.0 TSV (atomically); :func:`read_xnli`."""
    header = ("language", "gold_label", "sentence1", "sentence2", "pairID")
    rows = ((lang, r.label, r.sentence1, r.sentence2, r.id) for r in records)
    return _write_tsv(path, header, rows)


def write_xnli_mt_train(path: PathLike, records: Iterable[PairExample]) -> int:
    """Write pairs as XNLI-MT's training TSV (atomically); :func:`read_xnli_mt_train`."""
    rows = ((r.sentence1, r.sentence2, r.label) for r in records)
    return _write_tsv(path, ("premise", "hypo", "label"), rows)


def write_multinli(path: PathLike, records: Iterable[PairExample]) -> int:
    """Write pairs as MultiNLI JSON Lines (atomically); :func:`read_multinli`."""
    n = 0
    with atomic_open(path) as fh:
        for r in records:
            n += 1
            obj = {
                "gold_label": r.label,
                "sentence1": r.sentence1,
                "sentence2": r.sentence2,
                "pairID": r.id,
            }
            fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
    return n


def write_pawsx(path: PathLike, records: Iterable[PairExample]) -> int:
    """Write pairs as a PAWS-X TSV (atomically); :func:`read_pawsx` reads them back."""
    rows = ((r.id, r.sentence1, r.sentence2, r.label) for r in records)
    return _write_tsv(path, ("id", "sentence1", "sentence2", "label"), rows)


# ------------------------------------------------------------------------------ retrieval

#: Our ISO 639-1 codes -> the ISO 639-3 codes of the Tatoeba files (XTREME's
#: ``tatoeba_preprocess``, including the languages XTREME-R added).
TATOEBA_CODES = {
    "af": "afr", "ar": "ara", "bg": "bul", "bn": "ben", "de": "deu", "el": "ell", "es": "spa",
    "et": "est", "eu": "eus", "fa": "pes", "fi": "fin", "fr": "fra", "he": "heb", "hi": "hin",
    "hu": "hun", "id": "ind", "it": "ita", "ja": "jpn", "jv": "jav", "ka": "kat", "kk": "kaz",
    "ko": "kor", "ml": "mal", "mr": "mar", "nl": "nld", "pt": "por", "ru": "rus", "sw": "swh",
    "ta": "tam", "te": "tel", "th": "tha", "tl": "tgl", "tr": "tur", "ur": "urd", "vi": "vie",
    "zh": "cmn", "az": "aze", "lt": "lit", "pl": "pol", "uk": "ukr", "ro": "ron",
}  # fmt: skip


#: Our codes -> LASER's ISO 639-3 codes for every language of LASER's ``data/tatoeba/v1``
#: (112 languages; MTEB's Tatoeba) but the two in :data:`LASER_TATOEBA_UNNAMED`. XTREME's
#: languages keep their names of :data:`TATOEBA_CODES` (``zh`` for ``cmn``, ``fa`` for
#: ``pes``, ``sw`` for ``swh``, ``tl`` for ``tgl``); every other code is the canonical
#: spelling of LASER's (:func:`xlalign.core.langtags.canonical`: the shortest code, so
#: ``lvs`` -> ``lv``, ``zsm`` -> ``ms``, ``kur`` -> ``ku``). ``tests/evaluation/tasks``
#: recomputes this table from those two rules.
LASER_TATOEBA_CODES = {
    "af": "afr", "am": "amh", "ang": "ang", "ar": "ara", "arq": "arq", "arz": "arz",
    "ast": "ast", "awa": "awa", "az": "aze", "be": "bel", "bg": "bul", "bn": "ben",
    "br": "bre", "bs": "bos", "ca": "cat", "cbk": "cbk", "ceb": "ceb", "ch": "cha",
    "cs": "ces", "csb": "csb", "cy": "cym", "da": "dan", "de": "deu", "dsb": "dsb",
    "dtp": "dtp", "el": "ell", "eo": "epo", "es": "spa", "et": "est", "eu": "eus", "fa": "pes",
    "fi": "fin", "fo": "fao", "fr": "fra", "fy": "fry", "ga": "gle", "gd": "gla", "gl": "glg",
    "gsw": "gsw", "he": "heb", "hi": "hin", "hr": "hrv", "hsb": "hsb", "hu": "hun",
    "hy": "hye", "ia": "ina", "id": "ind", "ie": "ile", "io": "ido", "is": "isl", "it": "ita",
    "ja": "jpn", "jv": "jav", "ka": "kat", "kab": "kab", "kk": "kaz", "km": "khm", "ko": "kor",
    "ku": "kur", "kw": "cor", "la": "lat", "lfn": "lfn", "lt": "lit", "lv": "lvs",
    "max": "max", "mhr": "mhr", "mk": "mkd", "ml": "mal", "mn": "mon", "mr": "mar",
    "ms": "zsm", "nb": "nob", "nds": "nds", "nl": "nld", "nn": "nno", "nov": "nov",
    "oc": "oci", "orv": "orv", "pam": "pam", "pl": "pol", "pms": "pms", "pt": "por",
    "ro": "ron", "ru": "rus", "sk": "slk", "sl": "slv", "sq": "sqi", "sr": "srp", "sv": "swe",
    "sw": "swh", "swg": "swg", "ta": "tam", "te": "tel", "th": "tha", "tk": "tuk", "tl": "tgl",
    "tr": "tur", "tt": "tat", "tzl": "tzl", "ug": "uig", "uk": "ukr", "ur": "urd", "uz": "uzb",
    "vi": "vie", "war": "war", "wuu": "wuu", "xh": "xho", "yi": "yid", "yue": "yue",
    "zh": "cmn",
}  # fmt: skip

#: LASER's Tatoeba languages that no xlalign code names (why: the value), kept in the
#: registry, which configuration validation reads.
LASER_TATOEBA_UNNAMED = _registry.LASER_TATOEBA_UNNAMED

#: Tatoeba set id -> its languages' file codes (``tatoeba``: XTREME's subset;
#: ``tatoeba-laser``: all of LASER's named languages).
TATOEBA_SETS = {"tatoeba": TATOEBA_CODES, "tatoeba-laser": LASER_TATOEBA_CODES}


def tatoeba_files(lang: str, set_id: str = "tatoeba") -> tuple[str, str]:
    """The two file names of a language: ``tatoeba.<xxx>-eng.<xxx>``, ``...eng.eng``
    (``set_id``: ``tatoeba``, XTREME's subset, or ``tatoeba-laser``, all of LASER's)."""
    codes = TATOEBA_SETS.get(set_id)
    if codes is None:
        raise InputError(f"unknown Tatoeba set {set_id!r}; known: {sorted(TATOEBA_SETS)}")
    code = codes.get(lang)
    if code is None:
        why = LASER_TATOEBA_UNNAMED.get(lang)
        if why is not None:
            raise InputError(
                f"Tatoeba: LASER's {lang!r} has no xlalign language code ({why}); "
                "it is left out of the retrieval sets"
            )
        what = "XTREME" if set_id == "tatoeba" else "LASER"
        raise InputError(
            f"Tatoeba ({what}, set {set_id!r}) has no language {lang!r}; it has {sorted(codes)}"
        )
    return f"tatoeba.{code}-eng.{code}", f"tatoeba.{code}-eng.eng"


def read_tatoeba(source: PathLike, english: PathLike) -> Loaded[RetrievalPair]:
    """Line-aligned Tatoeba pairs (LASER's ``tatoeba.<xxx>-eng.<xxx>`` and ``.eng``).

    The id is the 0-based line index (XTREME's gold alignment). Files of different
    lengths raise; a pair with an empty side is skipped (``empty_sentence``).
    """
    src = [line for _, line in _lines(source)]
    eng = [line for _, line in _lines(english)]
    if len(src) != len(eng):
        short = english if len(eng) < len(src) else source
        raise InputError(
            f"{source}: {len(src)} lines but {english} has {len(eng)}; expected line-aligned "
            f"files ({short} ends before line {min(len(src), len(eng)) + 1})"
        )
    out: Loaded[RetrievalPair] = Loaded()
    for i, (s, e) in enumerate(zip(src, eng, strict=True)):
        if not s.strip() or not e.strip():
            out.skipped["empty_sentence"] += 1
            continue
        out.records.append(RetrievalPair(id=str(i), source=s, target=e))
    return out


def write_tatoeba(source: PathLike, english: PathLike, records: Iterable[RetrievalPair]) -> int:
    """Write pairs as line-aligned Tatoeba files (atomically); :func:`read_tatoeba`."""
    recs = list(records)
    with atomic_open(source) as fs:
        fs.writelines(f"{r.source}\n" for r in recs)
    with atomic_open(english) as fe:
        fe.writelines(f"{r.target}\n" for r in recs)
    return len(recs)


#: BUCC 2018's languages (paired with English).
BUCC_LANGUAGES = ("de", "fr", "ru", "zh")
#: BUCC 2018's splits; the gold of ``test`` was never published (XTREME evaluates on
#: ``training``, which it renames test, and selects on ``sample``, which it renames dev).
BUCC_SPLITS = ("sample", "training", "test")


@dataclass
class BuccCorpus:
    """One BUCC 2018 split of one pair: both monolingual corpora and the gold pairs."""

    lang: str
    split: str
    source: dict[str, str]  # id -> sentence in ``lang`` (ids like "de-000000001")
    target: dict[str, str]  # id -> English sentence
    #: (source id, English id); None where the gold is not public (the test split)
    gold: list[tuple[str, str]] | None

    def pairs(self) -> list[RetrievalPair]:
        """The gold pairs as records (id ``<source id>/<English id>``)."""
        return [
            RetrievalPair(id=f"{s}/{t}", source=self.source[s], target=self.target[t])
            for s, t in self.gold or []
        ]


def bucc_files(root: PathLike, lang: str, split: str) -> tuple[Path, Path, Path | None]:
    """``<lang>-en.<split>.<lang>``, ``.en`` and ``.gold`` under ``root`` (an unpacked
    ``bucc2018-<lang>-en.<split>[-gold].tar.bz2``: ``bucc2018/<lang>-en/...``); the gold
    is None for ``test``."""
    if split not in BUCC_SPLITS:
        raise InputError(f"BUCC 2018 has splits {list(BUCC_SPLITS)}, not {split!r}")
    d = Path(root) / "bucc2018" / f"{lang}-en"
    stem = f"{lang}-en.{split}"
    gold = d / f"{stem}.gold" if split != "test" else None
    return d / f"{stem}.{lang}", d / f"{stem}.en", gold


def _bucc_sentences(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for lineno, line in _lines(path):
        if not line:
            continue
        sid, sep, text = line.partition("\t")
        if not sep or not sid:
            raise InputError(f"{path}:{lineno}: expected '<id><TAB><sentence>'")
        if sid in out:
            raise InputError(f"{path}:{lineno}: duplicate id {sid!r}")
        out[sid] = text
    return out


def read_bucc(
    source: PathLike,
    target: PathLike,
    gold: PathLike | None = None,
    *,
    lang: str,
    split: str,
) -> BuccCorpus:
    """A BUCC 2018 split: ``id<TAB>sentence`` files for both sides and, where public, the
    gold ``<source id><TAB><English id>`` pairs (each id must be in its corpus). For the
    test split pass ``gold=None``: its gold pairs were never released."""
    src = _bucc_sentences(Path(source))
    tgt = _bucc_sentences(Path(target))
    pairs: list[tuple[str, str]] | None = None
    if gold is not None:
        pairs = []
        g = Path(gold)
        for lineno, line in _lines(g):
            if not line.strip():
                continue
            row = _fields(g, lineno, line, 2, f"<{lang} id>, <en id>")
            if row[0] not in src or row[1] not in tgt:
                raise InputError(f"{g}:{lineno}: gold pair {row} names an id not in the corpora")
            pairs.append((row[0], row[1]))
    elif split != "test":
        raise InputError(f"{source}: BUCC split {split!r} needs its gold file")
    return BuccCorpus(lang=lang, split=split, source=src, target=tgt, gold=pairs)


def write_bucc(corpus: BuccCorpus, directory: PathLike, split: str) -> dict[str, str]:
    """Write a corpus in BUCC's own format under ``directory`` as ``<split>.<lang>.tsv``,
    ``<split>.en.tsv`` and ``<split>.gold.tsv`` (atomically); returns the file names
    (:func:`read_bucc` reads them back)."""
    d = Path(directory)
    names = {
        "source": f"{split}.{corpus.lang}.tsv",
        "target": f"{split}.en.tsv",
        "gold": f"{split}.gold.tsv",
    }
    for key, sents in (("source", corpus.source), ("target", corpus.target)):
        with atomic_open(d / names[key]) as fh:
            for sid, text in sents.items():
                fh.write(f"{sid}\t{text}\n")
    if corpus.gold is None:
        del names["gold"]
    else:
        with atomic_open(d / names["gold"]) as fh:
            for s, t in corpus.gold:
                fh.write(f"{s}\t{t}\n")
    return names
