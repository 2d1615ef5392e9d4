"""CoNLL-U: the one reader (and writer) of every caller (UD-POS, UD parsing, the embedded
treebanks, UDPipe training).

The checks are those of UD's ``validate.py`` at levels 1 and 2 for what the project uses;
every refusal is an :class:`InputError` naming the file and line.

Refused:

* a line that is neither a comment (``#...``), a blank line nor 10 tab-separated fields;
  an empty field;
* a word ID that is not the next in ``1..n`` (a gap, a repeat, ``01``); a multiword-token
  range ``a-b`` whose ``a`` is not the next word, with ``b <= a``, overlapping the previous
  range or reaching past the sentence's last word; an empty node ``n.m`` whose ``n`` is not
  the word just read or whose ``m`` is not the next in ``1, 2, ...``;
* a word's HEAD that is not ``0..n`` (``n`` the sentence's word count) or ``_``, a word
  that is its own head, a cycle of heads, no root or more than one (once the sentence has
  heads); a HEAD other than ``_`` on a range or an empty node;
* a comment line after the words of its sentence, comment lines with no sentence, a
  sentence with no words (only ranges or empty nodes), a file with no sentence.

Tolerated (UD's validator refuses some of them; they lose nothing and real files have
them): a ``_`` HEAD on every word of a sentence or on some of them (a sentence without its
tree: callers skip it where they need one); UPOS outside UD v2's 17 (the
``turkish-treebanks`` data uses Google's older tags); several blank lines, or lines of
only spaces and tabs, between sentences; no blank line after the last sentence; CRLF line
ends; a byte-order mark at the start; fields with spaces.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from xlalign.core.errors import InputError
from xlalign.core.formats.text import MAX_LINE_BYTES, iter_numbered_lines
from xlalign.core.io import PathLike, atomic_open

FIELDS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")

_WORD_RE = re.compile(r"[1-9][0-9]*")
_RANGE_RE = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")
_EMPTY_RE = re.compile(r"(0|[1-9][0-9]*)\.([1-9][0-9]*)")
_HEAD_RE = re.compile(r"0|[1-9][0-9]*")


@dataclass(frozen=True)
class Token:
    """One token line: its 10 fields and kind (``word``, ``range`` or ``empty``)."""

    cols: tuple[str, ...]
    kind: str
    line: int = field(default=0, compare=False)

    id = property(lambda self: self.cols[0])
    form = property(lambda self: self.cols[1])
    lemma = property(lambda self: self.cols[2])
    upos = property(lambda self: self.cols[3])
    xpos = property(lambda self: self.cols[4])
    feats = property(lambda self: self.cols[5])
    deprel = property(lambda self: self.cols[7])
    deps = property(lambda self: self.cols[8])
    misc = property(lambda self: self.cols[9])

    @property
    def head(self) -> int | None:
        """The HEAD of a word as a number (``None``: ``_``)."""
        return None if self.cols[6] == "_" else int(self.cols[6])


@dataclass
class Sentence:
    """The comment lines (``#`` kept) and token lines of one sentence, in file order."""

    comments: list[str]
    tokens: list[Token]
    #: line of the sentence's first line (a comment or a token)
    line: int = field(default=0, compare=False)

    @property
    def token_line(self) -> int:
        """Line of the first token line."""
        return self.tokens[0].line if self.tokens else self.line

    @property
    def words(self) -> list[Token]:
        """The syntactic words (integer IDs 1..n)."""
        return [t for t in self.tokens if t.kind == "word"]

    @property
    def multiword(self) -> list[tuple[int, int, str]]:
        """Multiword tokens as (first id, last id, surface form)."""
        out = []
        for t in self.tokens:
            if t.kind == "range":
                a, b = t.id.split("-")
                out.append((int(a), int(b), t.form))
        return out

    @property
    def empty_nodes(self) -> int:
        return sum(t.kind == "empty" for t in self.tokens)

    def comment_dict(self) -> dict[str, str]:
        """``# key = value`` comments as ``key -> value`` (the last of a repeated key)."""
        out: dict[str, str] = {}
        for c in self.comments:
            key, sep, value = c[1:].partition("=")
            if sep:
                out[key.strip()] = value.strip()
        return out

    @property
    def sent_id(self) -> str:
        """The ``# sent_id = ...`` comment ("" when none)."""
        return self.comment_dict().get("sent_id", "")


def _check_tree(where: str, words: list[Token], n: int) -> None:
    heads = [w.cols[6] for w in words]
    if any(h == "_" for h in heads):
        return  # no tree (or part of one): tolerated, callers needing a tree skip it
    values = [int(h) for h in heads]
    roots = [i for i, h in enumerate(values) if h == 0]
    if not roots:
        raise InputError(f"{where}:{words[0].line}: the sentence has no root (no HEAD 0)")
    if len(roots) > 1:
        raise InputError(
            f"{where}:{words[roots[1]].line}: a second root (HEAD 0); a UD tree has one"
        )
    reaches_root = [False] * (len(values) + 1)
    reaches_root[0] = True
    for i, w in enumerate(words):
        path: list[int] = []
        on_path: set[int] = set()
        node = i + 1
        while not reaches_root[node]:
            if node in on_path:
                raise InputError(f"{where}:{w.line}: word {i + 1}'s heads form a cycle")
            on_path.add(node)
            path.append(node)
            node = values[node - 1]
        for node in path:
            reaches_root[node] = True


def _finish(where: str, comments: list[str], tokens: list[Token], start: int) -> Sentence:
    words = [t for t in tokens if t.kind == "word"]
    if not words:
        if tokens:
            raise InputError(f"{where}:{tokens[0].line}: a sentence with no syntactic words")
        raise InputError(f"{where}:{start}: comment lines with no sentence after them")
    n = len(words)
    for t in tokens:
        if t.kind == "range" and int(t.id.split("-")[1]) > n:
            raise InputError(
                f"{where}:{t.line}: multiword token {t.id!r} reaches past the sentence's "
                f"last word {n}"
            )
        if t.kind == "word" and t.cols[6] != "_" and int(t.cols[6]) > n:
            raise InputError(
                f"{where}:{t.line}: HEAD {t.cols[6]} outside the sentence (words 1..{n}, 0 = root)"
            )
    _check_tree(where, words, n)
    return Sentence(comments=comments, tokens=tokens, line=start)


def iter_conllu(
    path: PathLike,
    *,
    max_sentences: int | None = None,
    language: str | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[Sentence]:
    """The sentences of a (possibly compressed) CoNLL-U file, checked (see the module
    docstring); stops after ``max_sentences`` when given."""
    where = f"{path}" + (f" (language {language!r})" if language else "")
    comments: list[str] = []
    tokens: list[Token] = []
    start = 0
    n_words = 0
    last_range_end = 0
    empty_seq = (0, 0)  # (word, last decimal) of the last empty node
    count = 0
    for lineno, line in iter_numbered_lines(
        path, language=language, max_line_bytes=max_line_bytes, what="CoNLL-U"
    ):
        if lineno == 1 and line.startswith("\ufeff"):
            line = line[1:]
        if not line.strip(" \t"):
            if comments or tokens:
                yield _finish(where, comments, tokens, start)
                count += 1
                if max_sentences is not None and count >= max_sentences:
                    return
            comments, tokens, start, n_words, last_range_end = [], [], 0, 0, 0
            empty_seq = (0, 0)
            continue
        if not start:
            start = lineno
        if line.startswith("#"):
            if tokens:
                raise InputError(
                    f"{where}:{lineno}: a comment line after the words of its sentence; "
                    "expected comments before the first token line"
                )
            comments.append(line)
            continue
        cols = tuple(line.split("\t"))
        if len(cols) != 10:
            raise InputError(
                f"{where}:{lineno}: {len(cols)} tab-separated columns; expected the 10 of "
                "CoNLL-U (ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC)"
            )
        if "" in cols:
            name = FIELDS[cols.index("")].upper()
            raise InputError(f"{where}:{lineno}: empty {name} field; expected a value or '_'")
        ident, head = cols[0], cols[6]
        if _WORD_RE.fullmatch(ident):
            if int(ident) != n_words + 1:
                raise InputError(
                    f"{where}:{lineno}: word ID {ident} after {n_words} words; expected "
                    f"{n_words + 1} (IDs 1..n without gaps)"
                )
            if head != "_" and not _HEAD_RE.fullmatch(head):
                raise InputError(f"{where}:{lineno}: HEAD {head!r} is neither a number nor '_'")
            if head == ident:
                raise InputError(f"{where}:{lineno}: word {ident} is its own HEAD")
            n_words += 1
            tokens.append(Token(cols, "word", lineno))
            continue
        if (m := _RANGE_RE.fullmatch(ident)) is not None:
            a, b = int(m.group(1)), int(m.group(2))
            if a != n_words + 1 or b <= a or a <= last_range_end:
                raise InputError(
                    f"{where}:{lineno}: multiword token {ident!r} out of sequence; expected "
                    f"{n_words + 1}-b with b > {n_words + 1}, not overlapping another"
                )
            kind = "range"
            last_range_end = b
        elif (m := _EMPTY_RE.fullmatch(ident)) is not None:
            w, d = int(m.group(1)), int(m.group(2))
            expected = empty_seq[1] + 1 if empty_seq[0] == w and empty_seq[1] else 1
            if w != n_words or d != expected:
                raise InputError(
                    f"{where}:{lineno}: empty node {ident!r} out of sequence; expected "
                    f"{n_words}.{expected if w == n_words else 1}"
                )
            kind = "empty"
            empty_seq = (w, d)
        else:
            raise InputError(
                f"{where}:{lineno}: ID {ident!r} is not N, N-M or N.M (N a positive integer)"
            )
        if head != "_":
            raise InputError(f"{where}:{lineno}: HEAD {head!r} of {kind} {ident}; expected '_'")
        tokens.append(Token(cols, kind, lineno))
    if comments or tokens:
        yield _finish(where, comments, tokens, start)
        count += 1
    if count == 0:
        raise InputError(f"{where}: no sentence; expected CoNLL-U text")


def read_conllu(path: PathLike, **kwargs: object) -> list[Sentence]:
    """All sentences of a CoNLL-U file (see :func:`iter_conllu`)."""
    return list(iter_conllu(path, **kwargs))  # type: ignore[arg-type]


def format_sentence(sent: Sentence) -> str:
    """One sentence as CoNLL-U text (comments and token lines), without the blank line."""
    return "\n".join([*sent.comments, *("\t".join(t.cols) for t in sent.tokens)])


def write_conllu(path: PathLike, sentences: Iterable[Sentence]) -> int:
    """Write sentences as CoNLL-U (atomically; a blank line after each); returns how many."""
    n = 0
    with atomic_open(path) as fh:
        for sent in sentences:
            fh.write(format_sentence(sent))
            fh.write("\n\n")
            n += 1
    return n
