"""The languages xlalign knows: the paper's 40 (its Table 4) with their scripts and the
segmentation/tokenisation tools of its Appendix B."""

from __future__ import annotations

from dataclasses import dataclass

from xlalign.core.errors import ConfigError

#: Segmentation tool names (see :mod:`xlalign.corpus.segment`).
UDPIPE = "udpipe"  # UDPipe (spacy-udpipe) for sentences and tokens
ICU = "icu"  # ICU sentence and word break iterators for both
ICU_JIEBA = "icu+jieba"  # ICU sentences, jieba tokens (zh)
ICU_FUGASHI = "icu+fugashi"  # ICU sentences, fugashi/unidic-lite tokens (ja)
TOOLS = (UDPIPE, ICU, ICU_JIEBA, ICU_FUGASHI)


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
    """Return the :class:`Language` for ``code`` or raise a :class:`ConfigError` naming ``key``."""
    try:
        return LANGUAGES[code]
    except KeyError:
        raise ConfigError(
            f"{key}: unknown language code {code!r}; expected one of "
            f"{', '.join(PAPER_LANGUAGES)} (ISO 639-1 codes of the paper's Table 4)"
        ) from None


def default_tool(code: str) -> str:
    """The Appendix B segmentation tool for ``code``."""
    return get_language(code).tool
