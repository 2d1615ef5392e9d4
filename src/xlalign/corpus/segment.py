"""Sentence segmentation, tokenisation and the sentence filters of the paper's Appendix B.

Input (the ``sample`` stage's output): UTF-8 text, one paragraph per line, an empty line
between documents. Output: one sentence per line, tokens separated by single spaces.

Tools, as in Appendix B (``xlalign.core.languages``): UDPipe (through spacy-udpipe) for 27
languages; ICU sentences + jieba tokens for zh; ICU sentences + fugashi/unidic-lite tokens
for ja; ICU sentences and words for the rest, and for any language outside the paper's
table unless the configuration declares another tool (``whitespace``: ICU sentences,
tokens split at whitespace).

Filters, in this order (both from Appendix B):

1. keep only sentences from paragraphs with at least ``min_paragraph_sentences`` (2)
   sentences, counted as segmented, i.e. *before* the length filter; this drops
   one-sentence paragraphs such as headlines even when the sentence is long;
2. drop sentences with fewer than ``min_tokens`` (7) tokens.
"""

from __future__ import annotations

import itertools
import logging
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from tqdm import tqdm

from xlalign.core.errors import ConfigError, InputError, ToolError
from xlalign.core.io import PathLike, atomic_open, iter_lines, write_json
from xlalign.core.languages import (
    ICU,
    ICU_FUGASHI,
    ICU_JIEBA,
    TOOLS,
    UDPIPE,
    WHITESPACE,
    get_language,
    tool_allowed,
)

log = logging.getLogger(__name__)

#: What replaces a run of whitespace inside one token (e.g. the Vietnamese UDPipe word
#: ``có thể``), so that a space always separates tokens. Underscore joining is the usual
#: convention for multi-syllable words.
TOKEN_SPACE_REPLACEMENT = "_"

_WHITESPACE_RUN = re.compile(r"\s+")
# Characters that only pad a token: whitespace (as ``str.isspace``), zero-width space, BOM.
_PAD = "".join(chr(c) for c in range(0x3001) if chr(c).isspace()) + "\u200b\ufeff"


@runtime_checkable
class Segmenter(Protocol):
    """Splits one paragraph into sentences of tokens."""

    #: The tool actually used, e.g. ``"udpipe:turkish-imst-ud-2.5-191206.udpipe"``.
    name: str

    def segment(self, paragraph: str) -> list[list[str]]:
        """Sentences of ``paragraph``, each a list of tokens (whitespace-only ones dropped;
        a token may still contain inner whitespace, see :func:`clean_tokens`)."""
        ...


# ------------------------------------------------------------------------------ ICU


def _icu_spans(iterator: Any, text: str) -> list[str]:
    """Cut ``text`` at the boundaries of an ICU break iterator.

    ICU counts in UTF-16 code units, Python in code points; they differ only when the
    text has characters outside the BMP (emoji, rare CJK), which are mapped here.
    """
    import icu

    ustr = icu.UnicodeString(text)  # kept alive while the iterator reads it
    iterator.setText(ustr)
    bounds = [0, *iterator]
    if not text.isascii() and max(text) > "\uffff":
        py_index = {}
        u16 = 0
        for i, ch in enumerate(text):
            py_index[u16] = i
            u16 += 2 if ch > "\uffff" else 1
        py_index[u16] = len(text)
        bounds = [py_index[b] for b in bounds]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


class _ICUSentences:
    """ICU sentence boundaries for a locale (shared by the ICU-based segmenters)."""

    def __init__(self, locale: str) -> None:
        import icu

        self.locale = locale
        self._sentences = icu.BreakIterator.createSentenceInstance(icu.Locale(locale))

    def sentences(self, paragraph: str) -> list[str]:
        """Sentence strings of ``paragraph`` (whitespace-only pieces dropped)."""
        if not paragraph.strip():
            return []
        return [s for s in _icu_spans(self._sentences, paragraph) if not s.isspace()]

    def tokens(self, sentence: str) -> list[str]:
        raise NotImplementedError

    def segment(self, paragraph: str) -> list[list[str]]:
        """ICU sentences, each tokenised by the subclass; sentences without tokens dropped."""
        out = []
        for sentence in self.sentences(paragraph):
            tokens = self.tokens(sentence)
            if tokens:
                out.append(tokens)
        return out


class ICUSegmenter(_ICUSentences):
    """ICU sentence and word break iterators (Appendix B: bn jv ka kk ml ms my sw th tl yo).

    ICU's word iterator returns every segment between boundaries; its rule status
    separates word-like segments (numbers, letters, kana, ideographs: status >= 100)
    from the rest (status < 100), which is either whitespace, dropped, or punctuation and
    symbols, kept as tokens as UDPipe keeps them. Thai, Lao, Khmer and Burmese words come
    from ICU's dictionaries. A locale like ``en@ss=standard`` switches on ICU's
    abbreviation-aware sentence breaking. Text without sentence-final punctuation (Thai
    separates sentences with spaces only) comes out as one sentence per paragraph, which
    the paragraph filter then drops: that is what the paper's recipe does with plain ICU.
    """

    name = "icu"

    def __init__(self, locale: str) -> None:
        import icu

        super().__init__(locale)
        self._words = icu.BreakIterator.createWordInstance(icu.Locale(locale))

    def tokens(self, sentence: str) -> list[str]:
        """Word and punctuation tokens of one sentence."""
        return [w for w in _icu_spans(self._words, sentence) if not w.isspace()]


class WhitespaceSegmenter(_ICUSentences):
    """ICU sentences (of the language's locale, root rules where ICU has none), tokens
    split at whitespace: for a script ICU's word rules do not suit, or text that is
    already tokenised."""

    name = WHITESPACE

    def tokens(self, sentence: str) -> list[str]:
        return sentence.split()


class ICUJiebaSegmenter(_ICUSentences):
    """ICU sentences, jieba tokens (Appendix B: zh). jieba's default dictionary and HMM
    for unknown words; the dictionary is loaded once per process, jieba's logs silenced."""

    name = "icu+jieba"
    _tokenizer: Any = None

    def __init__(self, locale: str = "zh_Hans") -> None:
        super().__init__(locale)
        if ICUJiebaSegmenter._tokenizer is None:
            import jieba

            jieba.setLogLevel(logging.WARNING)
            tokenizer = jieba.Tokenizer()
            tokenizer.initialize()
            ICUJiebaSegmenter._tokenizer = tokenizer
        self._jieba = ICUJiebaSegmenter._tokenizer

    def tokens(self, sentence: str) -> list[str]:
        return [w for w in self._jieba.lcut(sentence, HMM=True) if w.strip()]


class ICUFugashiSegmenter(_ICUSentences):
    """ICU sentences, fugashi (MeCab) tokens with the unidic-lite dictionary (Appendix B:
    ja). Tokens are the MeCab surfaces; whitespace-only ones (e.g. U+3000) are dropped."""

    name = "icu+fugashi(unidic-lite)"

    def __init__(self, locale: str = "ja") -> None:
        import fugashi
        import unidic_lite

        super().__init__(locale)
        dicdir = Path(unidic_lite.DICDIR)
        self._tagger = fugashi.Tagger(f'-d "{dicdir}" -r "{dicdir / "mecabrc"}"')

    def tokens(self, sentence: str) -> list[str]:
        return [s for node in self._tagger(sentence) if (s := node.surface).strip()]


# --------------------------------------------------------------------------- UDPipe


class UDPipeSegmenter:
    """UDPipe sentences and tokens (Appendix B: 27 languages), with a model loaded through
    ``spacy_udpipe.load_from_path``.

    Only UDPipe's tokenizer runs: spacy-udpipe's tokenizer would also tag and parse every
    sentence and build a spaCy ``Doc``, which changes neither the sentence boundaries nor
    the tokens but costs most of the time. Tokens are UDPipe's syntactic words, as in
    spacy-udpipe (a multiword token such as German ``zum`` gives ``zu dem``). Feeding
    several paragraphs per call (``nlp.pipe`` or a joined text) was measured and does not
    help: the tokenizer's own work dominates, so each paragraph is one call.
    """

    def __init__(self, model_path: PathLike, lang: str) -> None:
        import spacy_udpipe
        from ufal.udpipe import ProcessingError, Sentence

        path = Path(model_path)
        if not path.is_file():
            raise ToolError(f"language {lang!r}: UDPipe model {path} not found")
        self.lang = lang
        self.name = f"udpipe:{path.name}"
        try:
            self.nlp = spacy_udpipe.load_from_path(lang=lang, path=str(path))
        except (ImportError, ValueError, OSError, RuntimeError) as exc:
            raise ToolError(f"language {lang!r}: spacy-udpipe cannot load {path}: {exc}") from exc
        model = self.nlp.tokenizer.model.model
        if model is None:
            raise ToolError(f"language {lang!r}: {path} is not a UDPipe model (cannot load it)")
        self._tokenizer = model.newTokenizer(model.DEFAULT)
        if self._tokenizer is None:
            raise ToolError(f"language {lang!r}: UDPipe model {path} has no tokenizer")
        self._sentence = Sentence()
        self._error = ProcessingError()

    def segment(self, paragraph: str) -> list[list[str]]:
        if not paragraph.strip():
            return []
        tokenizer, sentence, error = self._tokenizer, self._sentence, self._error
        tokenizer.setText(paragraph)
        out = []
        while tokenizer.nextSentence(sentence, error):
            words = sentence.words
            tokens = [form for i in range(1, len(words)) if (form := words[i].form).strip()]
            if tokens:
                out.append(tokens)
        if error.occurred():
            raise ToolError(f"language {self.lang!r}: UDPipe tokenizer failed: {error.message}")
        return out


# -------------------------------------------------------------------------- factory


def _icu_based(tool: str, lang: str, locale: str) -> Segmenter:
    if not tool_allowed(tool, lang):
        raise ConfigError(
            f"segment.tools.{lang}: tool {tool!r} segments only "
            f"{'Chinese (zh)' if tool == ICU_JIEBA else 'Japanese (ja)'}; expected 'icu' or "
            f"'whitespace' for {lang!r}"
        )
    if tool == WHITESPACE:
        return WhitespaceSegmenter(locale)
    if tool == ICU:
        return ICUSegmenter(locale)
    if tool == ICU_JIEBA:
        return ICUJiebaSegmenter(locale)
    if tool == ICU_FUGASHI:
        return ICUFugashiSegmenter(locale)
    raise ConfigError(
        f"language {lang!r}: unknown segmentation tool {tool!r}; expected one of {', '.join(TOOLS)}"
    )


def make_segmenter(
    lang: str,
    *,
    tool: str | None = None,
    udpipe_model: PathLike | None = None,
    fallback: str | None = None,
) -> tuple[Segmenter, dict[str, Any]]:
    """The segmenter for ``lang`` and a record of what was used.

    ``tool`` defaults to the Appendix B tool. UDPipe needs ``udpipe_model`` (a model
    file); without a usable one, ``fallback`` (e.g. ``"icu"``) is used instead with a
    warning and the reason recorded, or, with no fallback, :class:`ToolError` is raised.
    The record has ``tool`` (the segmenter's name), ``requested_tool`` and
    ``fallback_reason`` (``None`` unless the fallback was taken).
    """
    language = get_language(lang, key="segment.languages")
    requested = tool or language.tool
    if requested not in TOOLS:
        raise ConfigError(
            f"language {lang!r}: unknown segmentation tool {requested!r}; expected one of "
            f"{', '.join(TOOLS)}"
        )
    if requested != UDPIPE:
        seg = _icu_based(requested, lang, language.icu_locale)
        return seg, {"tool": seg.name, "requested_tool": requested, "fallback_reason": None}

    problem: str | None = None
    if udpipe_model is None:
        problem = "no model file configured"
    else:
        try:
            seg = UDPipeSegmenter(udpipe_model, lang)
        except ToolError as exc:
            problem = str(exc)
        else:
            return seg, {"tool": seg.name, "requested_tool": UDPIPE, "fallback_reason": None}

    reason = f"no UDPipe model for {lang} ({problem})"
    if fallback is None:
        raise ToolError(
            f"language {lang!r}: {reason}; expected a UDPipe model file at "
            f"segment.udpipe.models.{lang}, or a fallback tool in segment.udpipe.fallback "
            f"(e.g. 'icu')"
        )
    if fallback == UDPIPE:
        raise ConfigError(
            f"language {lang!r}: segment.udpipe.fallback must be another tool than 'udpipe'"
        )
    seg = _icu_based(fallback, lang, language.icu_locale)
    log.warning("%s: %s; using %s instead", lang, reason, seg.name)
    return seg, {"tool": seg.name, "requested_tool": UDPIPE, "fallback_reason": reason}


# --------------------------------------------------------------------------- filters


def clean_tokens(tokens: Sequence[str]) -> tuple[list[str], int]:
    """Tokens safe to join with single spaces, and how many had inner whitespace.

    Padding (whitespace, zero-width space, BOM) is stripped, tokens left empty are
    dropped and runs of inner whitespace become :data:`TOKEN_SPACE_REPLACEMENT`.
    """
    out = []
    fixed = 0
    for token in tokens:
        tok = token.strip(_PAD)
        if not tok:
            continue
        if not tok.isprintable() or " " in tok:
            new = _WHITESPACE_RUN.sub(TOKEN_SPACE_REPLACEMENT, tok)
            if new != tok:
                fixed += 1
                tok = new
        out.append(tok)
    return out, fixed


def filter_paragraph(
    sentences: Sequence[Sequence[str]],
    *,
    min_tokens: int = 7,
    min_paragraph_sentences: int = 2,
) -> tuple[list[list[str]], dict[str, int]]:
    """Apply Appendix B's filters to the sentences of one paragraph.

    First the paragraph filter: a paragraph with fewer than ``min_paragraph_sentences``
    sentences (as segmented, before any length filter) loses all of them. Then each
    remaining sentence with fewer than ``min_tokens`` tokens is dropped. Counts:
    ``sentences_in``, ``dropped_single_sentence_paragraph``, ``dropped_short``,
    ``sentences_out``.
    """
    counts = {
        "sentences_in": len(sentences),
        "dropped_single_sentence_paragraph": 0,
        "dropped_short": 0,
        "sentences_out": 0,
    }
    if len(sentences) < min_paragraph_sentences:
        counts["dropped_single_sentence_paragraph"] = len(sentences)
        return [], counts
    kept = [list(s) for s in sentences if len(s) >= min_tokens]
    counts["dropped_short"] = len(sentences) - len(kept)
    counts["sentences_out"] = len(kept)
    return kept, counts


# ------------------------------------------------------------------------------ file


def _normalise(paragraph: str) -> str:
    """Strip the paragraph and turn any whitespace (tabs, U+2028, ...) into spaces."""
    paragraph = paragraph.strip(_PAD)
    if not paragraph.isprintable():
        paragraph = _WHITESPACE_RUN.sub(" ", paragraph)
    return paragraph


def segment_file(
    in_path: PathLike,
    out_path: PathLike,
    stats_path: PathLike,
    lang: str,
    segmenter: Segmenter,
    info: dict[str, Any],
    *,
    min_tokens: int = 7,
    min_paragraph_sentences: int = 2,
    max_sentences: int | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Segment, tokenise and filter a paragraph-per-line file; write sentences and stats.

    The input is streamed (``.xz``/``.gz``/``.bz2`` read transparently); both outputs are
    written atomically. ``max_sentences`` stops after that many kept sentences. An empty
    input, or one where no sentence survives the filters, is an :class:`InputError`
    and leaves no output. Returns the stats written to ``stats_path``.
    """
    where = f"{in_path} (language {lang!r})"
    if max_sentences is not None and max_sentences < 1:
        raise ConfigError(f"language {lang!r}: max_sentences must be >= 1, not {max_sentences}")
    paragraphs = documents = sentences_in = sentences_out = tokens_out = 0
    dropped_paragraph = dropped_short = fixed = 0
    in_document = stopped_early = False
    start = time.perf_counter()
    with (
        atomic_open(out_path) as out,
        tqdm(
            desc=f"segment {lang}",
            unit=" para",
            file=sys.stderr,
            disable=not progress,
            mininterval=1.0,
        ) as bar,
    ):
        for line in iter_lines(in_path, language=lang):
            paragraph = _normalise(line)
            if not paragraph:
                in_document = False
                continue
            if not in_document:
                documents += 1
                in_document = True
            paragraphs += 1
            bar.update(1)
            sentences = []
            for raw in segmenter.segment(paragraph):
                tokens, n_fixed = clean_tokens(raw)
                if tokens:
                    sentences.append(tokens)
                    fixed += n_fixed
            kept, counts = filter_paragraph(
                sentences, min_tokens=min_tokens, min_paragraph_sentences=min_paragraph_sentences
            )
            sentences_in += counts["sentences_in"]
            dropped_paragraph += counts["dropped_single_sentence_paragraph"]
            dropped_short += counts["dropped_short"]
            if max_sentences is not None and sentences_out + len(kept) >= max_sentences:
                kept = kept[: max_sentences - sentences_out]
                stopped_early = True
            for tokens in kept:
                out.write(" ".join(tokens))
                out.write("\n")
                tokens_out += len(tokens)
            sentences_out += len(kept)
            if stopped_early:
                break
        if paragraphs == 0:
            raise InputError(f"{where}: no paragraphs; expected one paragraph per line")
        if sentences_out == 0:
            raise InputError(
                f"{where}: no sentence survives the filters ({sentences_in} sentences in "
                f"{paragraphs} paragraphs; {dropped_paragraph} in paragraphs with fewer than "
                f"{min_paragraph_sentences} sentences, {dropped_short} with fewer than "
                f"{min_tokens} tokens); expected paragraphs of several full sentences"
            )
    seconds = time.perf_counter() - start
    stats: dict[str, Any] = {
        "language": lang,
        "input": str(in_path),
        "tool": info.get("tool", segmenter.name),
        "requested_tool": info.get("requested_tool"),
        "fallback_reason": info.get("fallback_reason"),
        "min_tokens": min_tokens,
        "min_paragraph_sentences": min_paragraph_sentences,
        "filter_order": "paragraph sentence count (as segmented), then min_tokens",
        "max_sentences": max_sentences,
        "stopped_early": stopped_early,
        "paragraphs_in": paragraphs,
        "documents_in": documents,
        "sentences_in": sentences_in,
        "sentences_out": sentences_out,
        "dropped_short": dropped_short,
        "dropped_single_sentence_paragraph": dropped_paragraph,
        "tokens_out": tokens_out,
        "mean_tokens_per_sentence": tokens_out / sentences_out,
        "tokens_whitespace_fixed": fixed,
        "seconds": seconds,
        "sentences_per_s": sentences_in / seconds if seconds > 0 else None,
    }
    write_json(stats_path, stats)
    log.info(
        "%s: %d of %d sentences kept (%s), %.0f sentences/s",
        lang,
        sentences_out,
        sentences_in,
        stats["tool"],
        stats["sentences_per_s"] or 0.0,
    )
    return stats
