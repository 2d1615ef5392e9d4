"""Corpus sources: one reader per source type, all yielding paragraphs with document ids.

Two on-disk layouts cover every source:

* *paragraph text* (CC100, the 2018 plaintext Wikipedia, local text files): one paragraph
  per line, an empty line between documents (CC100's own layout). Wikipedia documents start
  with a title line, which is skipped.
* *unit TSV* (built from registry packages for the embedded default: Bible verses,
  LibreOffice help): ``id, split, doc, para, text``; consecutive rows with the same ``para``
  form one paragraph, and only ``split == train`` rows are training text.

Both are read line by line with a bound on a line's length (:data:`MAX_LINE_BYTES`), so a
corrupt file that is one huge "line" is refused with its line number instead of being read
into memory. Refused, with the file and line: invalid UTF-8, a longer line, a paragraph
text file without any text, a unit TSV without the header or with a row of another width,
an empty ``id``/``doc``/``para`` field or a ``split`` other than ``train``/``heldout``.
:func:`write_paragraphs` (:mod:`.sample`) and :func:`write_unit_tsv` write what these
read back.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from xlalign.core.errors import InputError
from xlalign.core.formats.text import MAX_LINE_BYTES, iter_numbered_lines
from xlalign.core.io import PathLike, atomic_open

SOURCE_TYPES = ("cc100", "wikipedia", "bible", "libreoffice-help", "text")

#: CC100 file names that differ from the ISO 639-1 code.
CC100_CODES = {"zh": "zh-Hans", "my": "my"}

_SPACE = re.compile(r"\s+")
# Unicode category Cc except tab/newline/CR (which are whitespace and collapse to a space).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
UNIT_COLUMNS = ["id", "split", "doc", "para", "text"]
#: The ``split`` values of a unit TSV (:mod:`xlalign.resources.embedded`).
UNIT_SPLITS = ("train", "heldout")
_UNIT_HEADER = "\t".join(UNIT_COLUMNS)


@dataclass(frozen=True)
class Paragraph:
    text: str
    doc: int  # running document number within the stream (0, 1, ...)


def cc100_code(lang: str) -> str:
    """The language code CC100 uses in its file names."""
    return CC100_CODES.get(lang, lang)


def normalise(text: str) -> str:
    """Control characters dropped, NFC, whitespace runs collapsed (in that order, so that
    normalising twice changes nothing: a control character between a letter and its
    combining mark would otherwise leave a non-NFC result)."""
    text = _CONTROL.sub("", text)
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return _SPACE.sub(" ", text).strip()


def iter_paragraph_text(
    path: PathLike,
    *,
    language: str,
    title_lines: bool = False,
    doc_offset: int = 0,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[Paragraph]:
    """Paragraphs of a paragraph-per-line file; an empty line starts a new document.

    With ``title_lines`` the first line of every document (a Wikipedia title) is skipped.
    A file without any text (empty, or only blank lines) raises :class:`InputError`.
    """
    doc = doc_offset
    at_doc_start = True
    seen_text = False
    any_text = False
    for _lineno, line in iter_numbered_lines(
        path, language=language, max_line_bytes=max_line_bytes, what="one paragraph per line"
    ):
        text = normalise(line)
        if not text:
            if seen_text:
                doc += 1
                seen_text = False
            at_doc_start = True
            continue
        any_text = True
        if title_lines and at_doc_start:
            at_doc_start = False
            continue
        at_doc_start = False
        seen_text = True
        yield Paragraph(text, doc)
    if not any_text:
        raise InputError(
            f"{path} (language {language!r}): no text; expected a non-empty corpus, one "
            "paragraph per line"
        )


def _unit_rows(
    path: PathLike, *, language: str, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of a unit TSV's rows, checked (see the module docstring)."""
    where = f"{path} (language {language!r})"
    lines = iter_numbered_lines(
        path, language=language, max_line_bytes=max_line_bytes, what="a unit TSV"
    )
    first = next(lines, None)
    if first is None:
        raise InputError(f"{where}: empty file; expected a unit TSV with header {UNIT_COLUMNS}")
    if first[1].split("\t") != UNIT_COLUMNS:
        raise InputError(f"{where}: line 1: header {first[1][:200]!r}; expected {_UNIT_HEADER!r}")
    for lineno, line in lines:
        row = line.split("\t")
        if len(row) != len(UNIT_COLUMNS):
            raise InputError(
                f"{where}: line {lineno}: expected {len(UNIT_COLUMNS)} tab-separated columns "
                f"({' '.join(UNIT_COLUMNS)}), got {len(row)}"
            )
        for name, value in zip(UNIT_COLUMNS[:4], row[:4], strict=True):
            if not value.strip():
                raise InputError(f"{where}: line {lineno}: empty {name!r} field")
        if row[1] not in UNIT_SPLITS:
            raise InputError(
                f"{where}: line {lineno}: split {row[1][:50]!r}; expected one of {UNIT_SPLITS}"
            )
        yield lineno, row


def iter_unit_tsv(
    path: PathLike,
    *,
    language: str,
    split: str = "train",
    doc_offset: int = 0,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> Iterator[Paragraph]:
    """Paragraphs of a unit TSV (rows of ``split`` only, grouped by their ``para`` column)."""
    doc_ids: dict[str, int] = {}
    cur_para: str | None = None
    cur_doc = doc_offset
    parts: list[str] = []
    for _lineno, row in _unit_rows(path, language=language, max_line_bytes=max_line_bytes):
        _uid, row_split, doc, para, text = row
        if row_split != split:
            continue
        if para != cur_para:
            if parts:
                yield Paragraph(" ".join(parts), cur_doc)
            parts = []
            cur_para = para
            if doc not in doc_ids:
                doc_ids[doc] = doc_offset + len(doc_ids)
            cur_doc = doc_ids[doc]
        text = normalise(text)
        if text:
            parts.append(text)
    if parts:
        yield Paragraph(" ".join(parts), cur_doc)


def write_unit_tsv(paragraphs: Iterator[Paragraph] | list[Paragraph], path: PathLike) -> int:
    """Write paragraphs as a unit TSV, one ``train`` row per paragraph (atomically);
    :func:`iter_unit_tsv` reads them back. Returns the number of rows."""
    n = 0
    with atomic_open(path) as fh:
        fh.write(_UNIT_HEADER + "\n")
        for n, par in enumerate(paragraphs, start=1):
            fh.write(f"p{n}\ttrain\t{par.doc}\tp{n}\t{par.text}\n")
    return n


def iter_source(
    kind: str, path: PathLike, *, language: str, doc_offset: int = 0
) -> Iterator[Paragraph]:
    """Dispatch on the source type."""
    if kind in ("cc100", "text"):
        return iter_paragraph_text(path, language=language, doc_offset=doc_offset)
    if kind == "wikipedia":
        return iter_paragraph_text(path, language=language, title_lines=True, doc_offset=doc_offset)
    if kind in ("bible", "libreoffice-help"):
        return iter_unit_tsv(path, language=language, doc_offset=doc_offset)
    raise InputError(
        f"unknown source type {kind!r} for language {language!r}; expected one of {SOURCE_TYPES}"
    )


def iter_sources(specs: list[tuple[str, PathLike]], *, language: str) -> Iterator[Paragraph]:
    """Paragraphs of several sources one after another, document numbers kept distinct."""
    offset = 0
    for kind, path in specs:
        last = offset - 1
        for par in iter_source(kind, path, language=language, doc_offset=offset):
            last = par.doc
            yield par
        offset = last + 1
