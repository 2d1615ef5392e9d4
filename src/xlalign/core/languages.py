"""The languages xlalign knows: the paper's 40 (its Table 4) with their scripts and the
segmentation/tokenisation tools of its Appendix B, and any other ISO 639 language
(:mod:`xlalign.core.langtags` validates the code), segmented by ICU unless the
configuration declares another tool (``segment.tools``)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from xlalign.core.errors import ConfigError

#: Segmentation tool names (see :mod:`xlalign.corpus.segment`).
UDPIPE = "udpipe"  # UDPipe (spacy-udpipe) for sentences and tokens
ICU = "icu"  # ICU sentence and word break iterators for both
ICU_JIEBA = "icu+jieba"  # ICU sentences, jieba tokens (zh)
ICU_FUGASHI = "icu+fugashi"  # ICU sentences, fugashi/unidic-lite tokens (ja)
WHITESPACE = "whitespace"  # ICU sentences, tokens split at whitespace
TOOLS = (UDPIPE, ICU, ICU_JIEBA, ICU_FUGASHI, WHITESPACE)
#: The base language a tool is limited to (other tools serve any language).
TOOL_LANGUAGE = {ICU_JIEBA: "zh", ICU_FUGASHI: "ja"}


@dataclass(frozen=True)
class Language:
    code: str
    name: str
    family: str
    script: str
    tool: str  # Appendix B tool
    icu_locale: str


def _l(code: str, name: str, family: str, script: str, tool: str, locale: str = "") -> Language:
    return Language(code, name, family, script, tool, locale or code)


#: Table 4 of the paper, with the tool of its Appendix B.
LANGUAGES: dict[str, Language] = {
    lang.code: lang
    for lang in [
        _l("af", "Afrikaans", "IE: Germanic", "Latin", UDPIPE),
        _l("ar", "Arabic", "Semitic", "Arabic", UDPIPE),
        _l("bg", "Bulgarian", "IE: Slavic", "Cyrillic", UDPIPE),
        _l("bn", "Bengali", "IE: Indo-Aryan", "Bengali", ICU),
        _l("de", "German", "IE: Germanic", "Latin", UDPIPE),
        _l("el", "Greek", "IE: Greek", "Greek", UDPIPE),
        _l("en", "English", "IE: Germanic", "Latin", UDPIPE),
        _l("es", "Spanish", "IE: Romance", "Latin", UDPIPE),
        _l("et", "Estonian", "Uralic", "Latin", UDPIPE),
        _l("eu", "Basque", "Isolate", "Latin", UDPIPE),
        _l("fa", "Farsi", "IE: Iranian", "Arabic", UDPIPE),
        _l("fi", "Finnish", "Uralic", "Latin", UDPIPE),
        _l("fr", "French", "IE: Romance", "Latin", UDPIPE),
        _l("he", "Hebrew", "Semitic", "Hebrew", UDPIPE),
        _l("hi", "Hindi", "IE: Indo-Aryan", "Devanagari", UDPIPE),
        _l("hu", "Hungarian", "Uralic", "Latin", UDPIPE),
        _l("id", "Indonesian", "Malayo-Polynesian", "Latin", UDPIPE),
        _l("it", "Italian", "IE: Romance", "Latin", UDPIPE),
        _l("ja", "Japanese", "Japonic", "CJK", ICU_FUGASHI),
        _l("jv", "Javanese", "Malayo-Polynesian", "Latin", ICU),
        _l("ka", "Georgian", "Kartvelian", "Georgian", ICU),
        _l("kk", "Kazakh", "Turkic", "Cyrillic", ICU),
        _l("ko", "Korean", "Koreanic", "Hangul", UDPIPE),
        _l("ml", "Malayalam", "Dravidian", "Malayalam", ICU),
        _l("mr", "Marathi", "IE: Indo-Aryan", "Devanagari", UDPIPE),
        _l("ms", "Malay", "Malayo-Polynesian", "Latin", ICU),
        _l("my", "Burmese", "Sino-Tibetan", "Myanmar", ICU),
        _l("nl", "Dutch", "IE: Germanic", "Latin", UDPIPE),
        _l("pt", "Portuguese", "IE: Romance", "Latin", UDPIPE),
        _l("ru", "Russian", "IE: Slavic", "Cyrillic", UDPIPE),
        _l("sw", "Swahili", "Niger-Congo", "Latin", ICU),
        _l("ta", "Tamil", "Dravidian", "Tamil", UDPIPE),
        _l("te", "Telugu", "Dravidian", "Telugu", UDPIPE),
        _l("th", "Thai", "Kra-Dai", "Thai", ICU),
        _l("tl", "Tagalog", "Malayo-Polynesian", "Latin", ICU, "fil"),
        _l("tr", "Turkish", "Turkic", "Latin", UDPIPE),
        _l("ur", "Urdu", "IE: Indo-Aryan", "Arabic", UDPIPE),
        _l("vi", "Vietnamese", "Mon-Khmer", "Latin", UDPIPE),
        _l("yo", "Yoruba", "Niger-Congo", "Latin", ICU),
        _l("zh", "Mandarin", "Sino-Tibetan", "CJK", ICU_JIEBA, "zh_Hans"),
    ]
}

PAPER_LANGUAGES: tuple[str, ...] = tuple(sorted(LANGUAGES))


def get_language(code: str, *, key: str = "languages") -> Language:
    """The :class:`Language` for ``code`` or a :class:`ConfigError` naming ``key``.

    One of the paper's 40 as its Table 4 has it; any other ISO 639 code in canonical
    spelling (:func:`xlalign.core.langtags.parse`) gets its English name, its script (the
    subtag, else CLDR's likely script) and ICU, with ``code`` as the ICU locale. A paper
    language with a script or region subtag keeps its jieba or fugashi tool (``zh_Hant``)
    and gets ICU for UDPipe (``pt_BR``).
    """
    lang = LANGUAGES.get(code)
    if lang is not None:
        return lang
    return _other_language(code, key)


@functools.cache
def _other_language(code: str, key: str) -> Language:
    from xlalign.core import langtags

    try:
        tag = langtags.parse(code)
    except ValueError as exc:
        raise ConfigError(
            f"{key}: {exc} (ISO 639-1/639-3 code, e.g. 'uk', 'haw', 'sr_Latn')"
        ) from None
    base = LANGUAGES.get(tag.language)
    script = tag.script or langtags.likely_script(tag.language)
    if base is not None:
        # jieba and fugashi serve every variant; UDPipe's models are keyed by the bare code
        # (segment.udpipe.models.<code> can name one), so a variant defaults to ICU.
        tool = ICU if base.tool == UDPIPE else base.tool
        name = _script_name(tag.script) if tag.script else base.script
        return Language(tag.code, base.name, base.family, name, tool, tag.code)
    return Language(
        tag.code,
        langtags.language_name(tag.code) or tag.code,
        "",
        _script_name(script) if script else "",
        ICU,
        tag.code,
    )


#: ISO 15924 codes whose name in :data:`LANGUAGES` is not CLDR's English name.
_SCRIPT_NAMES = {"Hans": "CJK", "Hant": "CJK", "Hani": "CJK", "Jpan": "CJK", "Kore": "Hangul"}


def _script_name(script: str) -> str:
    from xlalign.core import langtags

    return _SCRIPT_NAMES.get(script) or langtags.script_name(script)


def is_paper_language(code: str) -> bool:
    """One of the paper's 40 (Table 4)."""
    return code in LANGUAGES


def tool_allowed(tool: str, code: str) -> bool:
    """Whether ``tool`` can segment ``code`` (jieba only Chinese, fugashi only Japanese)."""
    base = TOOL_LANGUAGE.get(tool)
    return base is None or code.split("_", 1)[0] == base


def udpipe_model_languages() -> frozenset[str] | None:
    """The language codes spacy-udpipe has a UD 2.5 model for (its ``languages.json``, read
    without importing spaCy), or None when spacy-udpipe is not installed."""
    import importlib.util
    import json
    from pathlib import Path

    spec = importlib.util.find_spec("spacy_udpipe")
    if spec is None or not spec.submodule_search_locations:
        return None
    table = Path(next(iter(spec.submodule_search_locations))) / "languages.json"
    try:
        return frozenset(json.loads(table.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None


def default_tool(code: str) -> str:
    """The Appendix B segmentation tool for ``code`` (ICU for a language outside it)."""
    return get_language(code).tool
