"""Corpus sources: one reader per source type, all yielding paragraphs with document ids.

Two on-disk layouts cover every source:

* *paragraph text* (CC100, the 2018 plaintext Wikipedia, local text files): one paragraph
  per line, an empty line between documents (CC100's own layout). Wikipedia documents start
  with a title line, which is skipped.
* *unit TSV* (built from registry packages for the embedded default: Bible verses,
  LibreOffice help): ``id, split, doc, para, text``; consecutive rows with the same ``para``
  form one paragraph, and only ``split == train`` rows are training text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from xlalign.core.errors import InputError
from xlalign.core.io import PathLike, iter_lines, iter_tsv

SOURCE_TYPES = ("cc100", "wikipedia", "bible", "libreoffice-help", "text")

#: CC100 file names that differ from the ISO 639-1 code.
CC100_CODES = {"zh": "zh-Hans", "my": "my"}

_SPACE = re.compile(r"\s+")
# Unicode category Cc except tab/newline/CR (which are whitespace and collapse to a space).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
UNIT_COLUMNS = ["id", "split", "doc", "para", "text"]


@dataclass(frozen=True)
class Paragraph:
    text: str
    doc: int  # running document number within the stream (0, 1, ...)


def cc100_code(lang: str) -> str:
    """The language code CC100 uses in its file names."""
    return CC100_CODES.get(lang, lang)


def normalise(text: str) -> str:
    """NFC, control characters dropped, whitespace runs collapsed."""
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    text = _CONTROL.sub("", text)
    return _SPACE.sub(" ", text).strip()


def iter_paragraph_text(
    path: PathLike, *, language: str, title_lines: bool = False, doc_offset: int = 0
) -> Iterator[Paragraph]:
    """Paragraphs of a paragraph-per-line file; an empty line starts a new document.

    With ``title_lines`` the first line of every document (a Wikipedia title) is skipped.
    """
    doc = doc_offset
    at_doc_start = True
    seen_text = False
    for line in iter_lines(path, language=language):
        text = normalise(line)
        if not text:
            if seen_text:
                doc += 1
                seen_text = False
            at_doc_start = True
            continue
        if title_lines and at_doc_start:
            at_doc_start = False
            continue
        at_doc_start = False
        seen_text = True
        yield Paragraph(text, doc)


def iter_unit_tsv(
    path: PathLike, *, language: str, split: str = "train", doc_offset: int = 0
) -> Iterator[Paragraph]:
    """Paragraphs of a unit TSV (rows of ``split`` only, grouped by their ``para`` column)."""
    doc_ids: dict[str, int] = {}
    cur_para: str | None = None
    cur_doc = doc_offset
    parts: list[str] = []
    for _lineno, row in iter_tsv(path, UNIT_COLUMNS, language=language, what="unit TSV"):
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
