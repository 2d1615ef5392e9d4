"""Language codes outside the paper's 40: ISO 639 validation, canonical spelling and the
nearest valid code for a mistyped one (xlalign.core.langtags, xlalign.core.languages)."""

from __future__ import annotations

import pytest

from xlalign.core import langtags
from xlalign.core.errors import ConfigError
from xlalign.core.languages import ICU, LANGUAGES, get_language, tool_allowed


@pytest.mark.parametrize(
    ("code", "name", "script", "tool", "locale"),
    [
        ("uk", "Ukrainian", "Cyrillic", ICU, "uk"),
        ("am", "Amharic", "Ethiopic", ICU, "am"),
        ("pl", "Polish", "Latin", ICU, "pl"),
        ("haw", "Hawaiian", "Latin", ICU, "haw"),  # ISO 639-3 only
        ("sr_Latn", "Serbian", "Latin", ICU, "sr_Latn"),
        ("sr_Cyrl", "Serbian", "Cyrillic", ICU, "sr_Cyrl"),
        ("zh_Hant", "Mandarin", "CJK", "icu+jieba", "zh_Hant"),  # keeps zh's tool
        ("pt_BR", "Portuguese", "Latin", ICU, "pt_BR"),  # UDPipe's models: bare codes
    ],
)
def test_codes_outside_the_table(code: str, name: str, script: str, tool: str, locale: str) -> None:
    lang = get_language(code)
    assert (lang.code, lang.name, lang.script, lang.tool, lang.icu_locale) == (
        code,
        name,
        script,
        tool,
        locale,
    )


def test_paper_languages_unchanged() -> None:
    assert len(LANGUAGES) == 40
    for code, lang in LANGUAGES.items():
        assert get_language(code) is lang
        assert langtags.canonical(code) == code  # tl stays tl (CLDR's alias is fil)


@pytest.mark.parametrize(
    ("bad", "fix"),
    [
        ("deu", "de"),  # ISO 639-2/T: the shortest code
        ("ger", "de"),  # ISO 639-2/B
        ("ukr", "uk"),
        ("tgl", "tl"),  # ICU's list lacks tl and CLDR aliases tgl to fil (Filipino)
        ("iw", "he"),  # withdrawn
        ("ZH", "zh"),
        ("zh-Hant", "zh_Hant"),  # '-' joins the languages of a pair
        ("zh-hant", "zh_Hant"),
        ("sr_latn", "sr_Latn"),
        ("pt-br", "pt_BR"),
        ("uk ", "uk"),
    ],
)
def test_other_spellings_refused_with_the_canonical_one(bad: str, fix: str) -> None:
    assert langtags.canonical(bad) == fix
    with pytest.raises(ConfigError, match=f"write '{fix}'"):
        get_language(bad, key="languages[1]")


@pytest.mark.parametrize(
    ("bad", "near"),
    [
        ("Ukrainian", "uk"),
        ("ukrainian", "uk"),
        ("Ukranian", "uk"),
        ("Amharic", "am"),
        ("ukx", "uk"),
        ("en-GBB", "en_GB"),
        ("sr_Latm", "sr_Latn"),
        ("xx", None),
    ],
)
def test_unknown_code_suggests_the_nearest(bad: str, near: str | None) -> None:
    with pytest.raises(ConfigError) as exc:
        get_language(bad, key="languages[1]")
    msg = str(exc.value)
    assert msg.startswith("languages[1]: ") and repr(bad) in msg
    if near is not None:
        assert f"did you mean {near!r}?" in msg
        assert get_language(near).code == near
    else:
        assert "ISO 639" in msg


def test_tools_limited_to_their_language() -> None:
    assert tool_allowed("icu+jieba", "zh") and tool_allowed("icu+jieba", "zh_Hant")
    assert not tool_allowed("icu+jieba", "uk") and not tool_allowed("icu+fugashi", "zh")
    assert tool_allowed("icu", "uk") and tool_allowed("whitespace", "am")


def test_iso639_3() -> None:
    assert langtags.iso639_3("pl") == "pol" and langtags.iso639_3("sr_Latn") == "srp"
    assert langtags.iso639_3("haw") == "haw"
    # Serbo-Croatian keeps its three letters: ISO 639-1's sh is withdrawn (read sr_Latn)
    assert langtags.canonical("hbs") == "hbs"


def test_every_iso639_3_code_with_pycountry() -> None:
    import pycountry  # a dependency (constraints.txt): it must be there

    code = "bxk"  # Bukusu: in ISO 639-3, not in ICU's or CLDR's tables
    assert pycountry.languages.get(alpha_3=code) is not None
    assert get_language(code).name == "Bukusu"
