"""Language codes beyond the paper's 40: validation against ISO 639, normalisation and
suggestions for a mistyped code.

A code is ``lang[_Scrp][_RR]``: an ISO 639-1 (two-letter) or ISO 639-3 (three-letter)
language, optionally an ISO 15924 script and an ISO 3166 region (or UN M.49 area), in the
spelling of ICU and CLDR locale ids (``sr_Latn``, ``zh_Hant``, ``pt_BR``). The subtags are
joined by ``_``, not BCP 47's ``-``, because ``-`` joins the two languages of a pair in every
key and file name of the workflow (``en-de``, ``en-sr_Latn``).

The canonical spelling is the only one accepted (a code names files, wildcards and keys;
two spellings of one language would make two of each): lower-case language, title-case
script, upper-case region, and the shortest language code, as BCP 47 asks (``de``, not
``deu`` or ``ger``; ``he``, not the deprecated ``iw``). Any other spelling is refused with
the canonical one as suggestion.

Data: ICU's ISO 639 table (``icu.Locale.getISOLanguages``: every ISO 639-1 code and the
ISO 639-2/3 codes ICU knows, ~600) and Babel's CLDR data (English names of ~660 languages,
scripts, regions, and CLDR's language aliases), and ``pycountry``'s ISO 639-3 table (every
code, ~7,900; a library install without it accepts ICU's and CLDR's only). Everything is
loaded lazily, on the first code outside the paper's table.
"""

from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass

#: ``lang[_Scrp][_RR]`` in any case, with ``_`` or ``-`` between subtags.
_SHAPE = re.compile(
    r"^(?P<lang>[A-Za-z]{2,3})(?:[_-](?P<script>[A-Za-z]{4}))?"
    r"(?:[_-](?P<region>[A-Za-z]{2}|[0-9]{3}))?$"
)
#: The canonical spelling (what :func:`canonical` returns), for wildcards and schemas.
CODE_PATTERN = r"[a-z]{2,3}(?:_[A-Z][a-z]{3})?(?:_(?:[A-Z]{2}|[0-9]{3}))?"

#: Two-letter codes ISO 639 withdrew (still in ICU's table) and their replacements.
_DEPRECATED = {"in": "id", "iw": "he", "ji": "yi", "jw": "jv", "mo": "ro", "sh": "sr_Latn"}


@dataclass(frozen=True)
class Tag:
    """A parsed, canonical code."""

    code: str  # canonical: ``lang[_Scrp][_RR]``
    language: str
    script: str | None
    region: str | None


@functools.cache
def _icu_languages() -> frozenset[str]:
    import icu

    return frozenset(icu.Locale.getISOLanguages())


@functools.cache
def _babel_names() -> dict[str, str]:
    """CLDR's English language names (code -> name), language subtags only."""
    from babel import Locale

    return {k: v for k, v in Locale("en").languages.items() if re.fullmatch("[a-z]{2,3}", k)}


@functools.cache
def _babel_scripts() -> dict[str, str]:
    from babel import Locale

    return dict(Locale("en").scripts)


@functools.cache
def _babel_regions() -> dict[str, str]:
    from babel import Locale

    return {k: v for k, v in Locale("en").territories.items() if k.isupper() or k.isdigit()}


@functools.cache
def _iso639_3() -> dict[str, str]:
    """Every ISO 639-3 code and its name from ``pycountry``, or {} without it."""
    try:
        import pycountry
    except ImportError:
        return {}
    return {lang.alpha_3: lang.name for lang in pycountry.languages}


@functools.cache
def _to_shortest() -> dict[str, str]:
    """Three-letter (ISO 639-2/T, 639-2/B, CLDR alias) code -> the two-letter code."""
    import icu
    from babel.core import get_global

    out: dict[str, str] = {}
    for code, target in get_global("language_aliases").items():
        if len(code) == 3 and re.fullmatch("[a-z]{2}", target):
            out[code] = target
    for code in _icu_languages():
        if len(code) == 2:
            out[icu.Locale(code).getISO3Language()] = code
    # ISO 639-1 codes that ICU's list leaves out and CLDR aliases to another language
    # (tgl -> tl, where CLDR says fil), except deprecated ones (hbs -> sh)
    try:
        import pycountry
    except ImportError:
        return out
    for lang in pycountry.languages:
        two = getattr(lang, "alpha_2", None)
        if two and two not in _DEPRECATED:
            out.setdefault(lang.alpha_3, two)
    return out


def known_languages() -> frozenset[str]:
    """Every language subtag accepted (two- and three-letter)."""
    return _icu_languages() | frozenset(_babel_names()) | frozenset(_iso639_3())


def language_name(code: str) -> str:
    """English name of a language subtag ('' when no table names it)."""
    lang = code.split("_", 1)[0]
    return _babel_names().get(lang) or _iso639_3().get(lang) or ""


def script_name(script: str) -> str:
    """English name of an ISO 15924 script code (``Cyrl`` -> ``Cyrillic``)."""
    return _babel_scripts().get(script, script)


def likely_script(lang: str) -> str | None:
    """The script CLDR's likely subtags give ``lang`` (``uk`` -> ``Cyrl``), or None."""
    from babel.core import get_global

    likely = get_global("likely_subtags").get(lang)
    if not likely:
        return None
    parts = likely.split("_")
    return next((p for p in parts[1:] if len(p) == 4), None)


def cldr_has_locale(code: str) -> bool:
    """Whether Babel's CLDR data has a locale for ``code`` (the ``cldr`` dictionary source)."""
    from babel import localedata

    return bool(localedata.exists(code))


def iso639_3(code: str) -> str:
    """The ISO 639-3 (639-2/T) code of a canonical code's language (``pl`` -> ``pol``)."""
    import icu

    lang = code.split("_", 1)[0]
    return lang if len(lang) == 3 else icu.Locale(lang).getISO3Language() or lang


def canonical(code: str) -> str:
    """The canonical spelling of ``code`` (case, separators, shortest language code).

    Raises :class:`ValueError` with a suggestion when ``code`` names no known language,
    script or region.
    """
    try:
        return _canonical(code)
    except _Unknown as exc:
        raise ValueError(f"{exc}{_hint(code)}") from None


class _Unknown(ValueError):
    pass


def _canonical(code: str) -> str:
    m = _SHAPE.match(code.strip()) if isinstance(code, str) else None
    if m is None:
        raise _Unknown(f"{code!r} is not a language code")
    lang = m["lang"].lower()
    lang = _DEPRECATED.get(lang, lang)
    if len(lang) == 3:
        lang = _to_shortest().get(lang, lang)
    extra = lang.split("_")[1:]
    lang = lang.split("_")[0]
    if lang not in known_languages():
        raise _Unknown(f"unknown ISO 639 language {m['lang']!r}")
    parts = [lang, *extra]
    if m["script"]:
        script = m["script"].title()
        if script not in _babel_scripts():
            raise _Unknown(f"unknown ISO 15924 script {m['script']!r} in {code!r}")
        parts = [lang, script]
    if m["region"]:
        region = m["region"].upper()
        if region not in _babel_regions():
            raise _Unknown(f"unknown ISO 3166 region {m['region']!r} in {code!r}")
        parts.append(region)
    return "_".join(parts)


def parse(code: str) -> Tag:
    """Parse a code that must already be canonical; :class:`ValueError` names the fix."""
    fixed = canonical(code)
    if fixed != code:
        raise ValueError(f"{code!r} is not the canonical spelling; write {fixed!r}")
    parts = fixed.split("_")
    script = next((p for p in parts[1:] if len(p) == 4), None)
    region = next((p for p in parts[1:] if len(p) != 4), None)
    return Tag(fixed, parts[0], script, region)


def suggest(code: object) -> str | None:
    """The nearest valid code for a mistyped one or a language name ('Ukrainian' -> 'uk')."""
    if not isinstance(code, str) or not code.strip():
        return None
    text = code.strip()
    try:
        return _canonical(text)
    except ValueError:
        pass
    m = re.match(r"^([A-Za-z]{2,3})[_-]([A-Za-z0-9]*)", text)
    if m:  # a known language with a bad subtag: the nearest subtag, else the language alone
        try:
            lang = _canonical(m.group(1))
        except ValueError:
            lang = None
        if lang is not None:
            sub = m.group(2)
            pool = list(_babel_scripts()) if len(sub) >= 4 else list(_babel_regions())
            close = difflib.get_close_matches(
                sub.title() if len(sub) >= 4 else sub.upper(), pool, n=1
            )
            if len(sub) > 4 and not close:
                close = difflib.get_close_matches(sub.upper()[:2], list(_babel_regions()), n=1)
            return f"{lang}_{close[0]}" if close else lang
    names = {**{v.lower(): k for k, v in _iso639_3().items()}}
    names.update({v.lower(): k for k, v in _babel_names().items()})
    low = text.lower()
    if low in names:
        return _shortest(names[low])
    if len(low) >= 4:
        close = difflib.get_close_matches(low, list(names), n=1, cutoff=0.75)
        if close:
            return _shortest(names[close[0]])
    letters = re.sub("[^a-z]", "", low)
    if letters != low and 2 <= len(letters) <= 3:
        try:
            return _canonical(letters)
        except ValueError:
            pass
    key = letters or low
    for prefix in (key[:3], key[:2]) if len(key) > 2 else ():  # a letter too many
        try:
            return _canonical(prefix)
        except ValueError:
            pass
    # Codes of the same length one letter away (ISO 639's special codes left out).
    pool = sorted(c for c in _icu_languages() | frozenset(_babel_names()) if len(c) == len(key))
    pool = [c for c in pool if c not in _SPECIAL and not ("qaa" <= c <= "qtz")]
    close = difflib.get_close_matches(key, pool, n=1, cutoff=0.5)
    return _shortest(close[0]) if close else None


#: ISO 639's codes for no language in particular.
_SPECIAL = frozenset({"mis", "mul", "und", "zxx"})


def _shortest(code: str) -> str:
    try:
        return _canonical(code)
    except ValueError:
        return code


def _hint(code: object) -> str:
    s = suggest(code)
    return f" (did you mean {s!r}?)" if s and s != code else ""
