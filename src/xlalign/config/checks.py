"""Checks of a configuration that the schema cannot express and that would otherwise fail
only inside a job (or silently do the wrong thing): the encoder's geometry against every
layer and length key, ranges that span several keys, pass-through blocks (keys and
values), files the configuration names, and task x language combinations without data.

Called by :func:`xlalign.config.validate` (the CLI's ``check-config`` and the Snakefile
alike) after the schema; every message names the key and what was expected.
"""

from __future__ import annotations

import difflib
import re
import string
from collections.abc import Callable, Iterable, Mapping
from itertools import pairwise
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import unquote, urlsplit

import jsonschema

import xlalign.evaluation.tasks.registry as registry
import xlalign.pretrain.recipes as recipes
from xlalign.config.encoders import Geometry, encoder_geometry
from xlalign.config.taskdata import (
    EMBEDDED_TEST_LANGUAGES,
    WORDSIM_SETS,
    retrieval_languages,
    task_languages,
)
from xlalign.config.training_args import TRAINING_ARGUMENTS
from xlalign.core.errors import ConfigError

Fail = Callable[[str], NoReturn]

#: Keys of a from-scratch stage's ``pretrain`` block (``derived.pretrain``,
#: ``metapretrain.pretrain``) that go to the trainer, as
#: :data:`xlalign.pretrain.scratch.PARAM_KEYS` (a test keeps the two equal), and the others
#: such a block may hold (:data:`xlalign.pretrain.scratch.OTHER_KEYS`).
SCRATCH_PARAM_KEYS = (
    "steps", "gradient_accumulation", "max_length", "learning_rate", "weight_decay",
    "warmup_steps", "adam_epsilon", "max_grad_norm", "mlm_probability", "eval_every",
    "log_every", "validation_batch_size",
)  # fmt: skip
SCRATCH_OTHER_KEYS = ("objectives", "validation_paragraphs")
#: :class:`xlalign.pretrain.trainer.PretrainParams`' ``max_length``, used when such a block
#: sets none.
SCRATCH_DEFAULT_MAX_LENGTH = 128
#: and its ``steps``
SCRATCH_DEFAULT_STEPS = 7500

#: ``params.extra`` keys the fine-tuning loop reads (xlalign.evaluation.tasks.finetune) and,
#: per task family, the keys its family reads; nothing else is read, so nothing else is
#: accepted (a test reads the sources for ``extra`` keys and compares).
FINETUNE_EXTRA = ("group_by_length", "eval_batch_size", "warmup_ratio")
FAMILY_EXTRA: dict[str, tuple[str, ...]] = {
    "tagging": ("feature_based", "loss", "train_sample"),
    "classification": ("feature_based",),
    "qa": (),
    "parsing": ("decoding", "exclude_punct", "eval_max_length"),
}
_EXTRA_VALUES: dict[str, Any] = {
    "group_by_length": {"type": "boolean"},
    "eval_batch_size": {"type": "integer", "minimum": 1},
    "warmup_ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    "feature_based": {
        "anyOf": [
            {"type": ["boolean", "null"]},
            {
                # xlalign.evaluation.tasks.feature_based.FeatureSpec (a test compares)
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "layers": {
                        "anyOf": [
                            {"const": "all"},
                            {
                                "type": "array",
                                "minItems": 1,
                                "uniqueItems": True,
                                "items": {"type": "integer", "minimum": 0},
                            },
                        ]
                    },
                    "mix": {"enum": ["scalar", "weighted"]},
                    "transformer_layers": {"type": "integer", "minimum": 0},
                    "dropout": {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
                    "crf": {"type": "boolean"},
                    "bio_constraints": {"type": "boolean"},
                    "mapping": {"type": ["string", "null"]},
                    "hub": {"type": "string"},
                },
            },
        ]
    },
    # xlalign.evaluation.tasks.tagging.LossSpec (a test compares)
    "loss": {
        "anyOf": [
            {"enum": ["cross_entropy", "class_weighted"]},
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["name"],
                "properties": {
                    "name": {"enum": ["cross_entropy", "class_weighted"]},
                    "power": {"type": "number", "minimum": 0},
                    "max_weight": {"type": "number", "minimum": 1},
                },
            },
        ]
    },
    # xlalign.evaluation.tasks.tagging.TaggingTask.training_sample
    "train_sample": {
        "type": "object",
        "additionalProperties": False,
        "required": ["entity_share"],
        "properties": {
            "entity_share": {"type": "number", "minimum": 0, "maximum": 1},
            "seed": {"type": "integer", "minimum": 0},
        },
    },
    "decoding": {"enum": ["mst", "argmax"]},
    "exclude_punct": {"type": "boolean"},
    "eval_max_length": {"type": "integer", "minimum": 3},
}

_LAYER = {"anyOf": [{"type": "integer", "minimum": 0}, {"const": "last"}, {"type": "null"}]}
_POS_INT = {"type": "integer", "minimum": 1}
_OPT_POS_INT = {"type": ["integer", "null"], "minimum": 1}
_UNIT = {"type": "number", "minimum": 0, "maximum": 1}
_POSITIVE = {"type": "number", "exclusiveMinimum": 0}
_NONNEG = {"type": "number", "minimum": 0}
#: Values of the settings of the continued pre-training objectives
#: (:data:`xlalign.pretrain.recipes.OBJECTIVE_DEFAULTS` names which key each one takes).
OBJECTIVE_VALUES: dict[str, Any] = {
    "batch_size": _POS_INT,
    "weight": _NONNEG,
    "static": {"type": "string", "minLength": 1},
    "language_alpha": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
    "switch_probability": _UNIT,
    "max_pairs": _OPT_POS_INT,
    "reproduce_label_leak": {"type": "boolean"},
    "layer": _LAYER,
    "layers": {
        "type": ["array", "null"],
        "uniqueItems": True,
        "items": {"type": "integer", "minimum": 1},
    },
    "max_subwords": _POS_INT,
    "min_coverage": _UNIT,
    "k": _OPT_POS_INT,
    "centring": {"enum": ["columns", "reference"]},
    "r1": _POSITIVE,
    "r2": _POSITIVE,
    "eps": _POSITIVE,
    "drift": _NONNEG,
    "hidden_regulariser": _NONNEG,
    "reproduce_sqrt_drift": {"type": "boolean"},
    "max_length": {"type": "integer", "minimum": 8},
    "mode": {"enum": ["weak", "strong"]},
    "temperature": _POSITIVE,
    "projection_dim": _POS_INT,
    "beta": _NONNEG,
}


def _is_integer(checker: Any, instance: Any) -> bool:
    """JSON Schema counts 1.0 as an integer; a configuration may not: a seed ``1.0`` names
    paths ``s1.0`` and ``range(40.0)`` fails inside a job."""
    return isinstance(instance, int) and not isinstance(instance, bool)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    """``pattern`` as JSON Schema means it (ECMA-262): ``$`` ends the string. Python's
    ``re`` lets ``$`` match before a final newline, so ``"embedded\\n"`` would match
    ``^[A-Za-z0-9_]...$``; an end-anchored pattern is matched up to the end here."""
    if not isinstance(instance, str):
        return
    anchored = pattern.endswith("$") and not pattern.endswith("\\$")
    found = re.search(pattern[:-1] + r"\Z" if anchored else pattern, instance)
    if found is None:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def strict(validator_class: type) -> type:
    """``validator_class`` with integers that are ints and end-anchored patterns."""
    checker = validator_class.TYPE_CHECKER.redefine("integer", _is_integer)
    return jsonschema.validators.extend(
        validator_class, {"pattern": _pattern}, type_checker=checker
    )


def _schema_errors(value: Any, schema: Mapping[str, Any], key: str, fail: Fail) -> None:
    errors = sorted(
        strict(jsonschema.Draft202012Validator)(schema).iter_errors(value),
        key=lambda e: list(e.absolute_path),
    )
    if errors:
        err = errors[0]
        where = ".".join([key, *map(str, err.absolute_path)])
        fail(f"{where}: got {err.instance!r}: {err.message}")


def _unknown(keys: Iterable[str], allowed: Iterable[str], key: str, fail: Fail, what: str) -> None:
    allowed = list(allowed)
    for k in sorted(set(keys) - set(allowed), key=str):
        near = difflib.get_close_matches(str(k), allowed, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        fail(f"{key}.{k}: unknown key{hint}; {what}: {', '.join(allowed) or 'none'}")


def _path(p: str, base_dir: Path) -> Path:
    q = Path(p)
    return q if q.is_absolute() else base_dir / q


def check_blocks(cfg: dict[str, Any], *, schema: Mapping[str, Any], fail: Fail) -> None:
    """Ranges over several keys and the pass-through blocks: before the checks that read
    those blocks, so that a message names the key a user wrote."""
    _pass_through(cfg, schema, fail)
    _ranges(cfg, fail)


def check(cfg: dict[str, Any], *, schema: Mapping[str, Any], base_dir: Path, fail: Fail) -> None:
    """The geometry, files and data checks: after the checks of what each stage reads."""
    try:
        geometry = encoder_geometry(cfg, base_dir)
    except ConfigError as exc:
        fail(str(exc))
    if geometry is not None:
        _encoder_keys(cfg, geometry, fail)
    _scratch_models(cfg, fail)
    _files(cfg, base_dir, fail)
    _downloads(cfg, schema, fail)
    _task_data(cfg, fail)
    _enabled_stages(cfg, fail)
    _wordsim_sets(cfg, fail)
    _tracking(cfg, base_dir, fail)


# --- ranges that span keys ---------------------------------------------------------------


def _ranges(cfg: Mapping[str, Any], fail: Fail) -> None:
    split = cfg["dictionaries"]["split"]
    total = split["test_fraction"] + split["valid_fraction"]
    if total >= 1:
        fail(
            f"dictionaries.split.test_fraction + valid_fraction: {split['test_fraction']} + "
            f"{split['valid_fraction']} = {total:g}; expected less than 1 (the rest is the "
            "training part)"
        )
    ev = cfg["evaluate"]
    metric, retrieval = ev["tables"]["metric"], ev["tables"]["retrieval"]
    if metric.startswith("p@") and int(metric[2:]) not in ev["ks"]:
        fail(
            f"evaluate.tables.metric: {metric!r} needs {metric[2:]} in evaluate.ks "
            f"({ev['ks']}): BLI reports P@k for those k only"
        )
    if retrieval not in ev["retrieval"]:
        fail(
            f"evaluate.tables.retrieval: {retrieval!r} is not in evaluate.retrieval "
            f"({ev['retrieval']}): BLI runs only those"
        )
    _learning_curve(cfg, fail)
    filt = cfg["parallel"]["filter"]
    if filt["min_tokens"] > filt["max_tokens"]:
        fail(
            f"parallel.filter.min_tokens: {filt['min_tokens']} is above "
            f"parallel.filter.max_tokens ({filt['max_tokens']})"
        )
    pre = cfg["pretrain"]
    if pre["runs"] and pre["warmup_steps"] > pre["steps"]:
        fail(
            f"pretrain.warmup_steps: {pre['warmup_steps']} is above pretrain.steps ({pre['steps']})"
        )
    for stage, steps in (
        ("derived", [cfg["derived"]["pretrain"].get("steps", SCRATCH_DEFAULT_STEPS)]),
        (
            "metapretrain",
            [cfg["metapretrain"]["mono"]["steps"], cfg["metapretrain"]["cross"]["steps"]],
        ),
    ):
        warmup = cfg[stage]["pretrain"].get("warmup_steps", 0)
        if (
            cfg[stage]["enabled"]
            and isinstance(warmup, int)
            and all(isinstance(n, int) for n in steps)
            and warmup > min(steps)
        ):
            fail(
                f"{stage}.pretrain.warmup_steps: {warmup} is above the steps of a run "
                f"({min(steps)})"
            )
    for where, tasks in (
        ("zeroshot.tasks", cfg["zeroshot"]["tasks"]),
        ("derived.tasks", cfg["derived"]["tasks"]),
    ):
        for task, spec in tasks.items():
            if task not in registry.TASKS:
                continue
            params = {**registry.task_info(task).protocol, **spec["params"]}
            if (params.get("extra") or {}).get("warmup_ratio") and params.get("warmup_steps"):
                fail(
                    f"{where}.{task}.params.extra.warmup_ratio: set warmup_steps "
                    f"({params['warmup_steps']}, the protocol's unless given) or "
                    "extra.warmup_ratio, not both (set warmup_steps: 0)"
                )


def _learning_curve(cfg: Mapping[str, Any], fail: Fail) -> None:
    lc = cfg["learning_curve"]
    hub = cfg["align"]["hub"]
    for i, lang in enumerate(lc["languages"]):
        if lang == hub:
            fail(
                f"learning_curve.languages[{i}]: {lang!r} is the hub (align.hub): its corpus "
                "stays whole; list the languages mapped into it"
            )
        if lang not in cfg["languages"]:
            fail(
                f"learning_curve.languages[{i}]: {lang!r} is not in languages ({cfg['languages']})"
            )
    fractions = lc["fractions"]
    if any(b <= a for a, b in pairwise(fractions)):
        fail(f"learning_curve.fractions: {fractions}: expected increasing fractions")
    if lc["enabled"] and not lc["languages"]:
        fail(
            "learning_curve.languages: empty while learning_curve.enabled is true; list one or more"
        )
    if lc["enabled"] and not cfg["extract"]["aggregation"]["enabled"]:
        fail(
            "learning_curve.enabled: the curve compares X2S-M with the aggregation baseline; "
            "set extract.aggregation.enabled: true"
        )


# --- pass-through blocks -----------------------------------------------------------------


def objective_settings(name: str, settings: Any, key: str, fail: Fail) -> None:
    """Keys and values of the settings of objective ``name`` at ``key``."""
    if not isinstance(settings, Mapping):
        fail(f"{key}: expected a mapping of settings, got {settings!r}")
    allowed = [*recipes.OBJECTIVE_DEFAULTS[name], "weight", "static"]
    _unknown(settings, allowed, key, fail, f"the keys of objective {name!r}")
    for k, v in settings.items():
        _schema_errors(v, OBJECTIVE_VALUES.get(k, {}), f"{key}.{k}", fail)


def _objectives_block(block: Any, key: str, fail: Fail) -> None:
    if block is None:
        return
    if not isinstance(block, Mapping):
        fail(f"{key}: expected a mapping objective -> settings, got {block!r}")
    _unknown(block, recipes.OBJECTIVE_DEFAULTS, key, fail, "the objectives")
    for name, settings in block.items():
        objective_settings(name, settings or {}, f"{key}.{name}", fail)


def task_params(task: str, params: Mapping[str, Any], key: str, fail: Fail) -> None:
    """``params.extra`` of task ``task`` (the schema checks the other params)."""
    try:
        family = registry.task_info(task).family
    except ConfigError:
        return  # named by the task checks
    extra = params.get("extra") or {}
    allowed = [*FINETUNE_EXTRA, *FAMILY_EXTRA.get(family, ())]
    for k in sorted(extra, key=str):
        if k in allowed:
            _schema_errors(extra[k], _EXTRA_VALUES[k], f"{key}.extra.{k}", fail)
            continue
        near = difflib.get_close_matches(str(k), allowed, n=1)
        if near:
            why = f"did you mean {near[0]!r}?"
        elif k in TRAINING_ARGUMENTS:
            why = (
                "a transformers.TrainingArguments field, which the fine-tuning loop sets "
                "itself and never takes from params.extra"
            )
        else:
            why = "read by nothing"
        fail(f"{key}.extra.{k}: unknown key ({why}); a {family} task reads {', '.join(allowed)}")


def _pass_through(cfg: Mapping[str, Any], schema: Mapping[str, Any], fail: Fail) -> None:
    pre = cfg["pretrain"]
    _objectives_block(pre["objectives"], "pretrain.objectives", fail)
    for row, objectives in pre["recipes"].items():
        _objectives_block(objectives, f"pretrain.recipes.{row}", fail)
    for name, spec in cfg["zeroshot"]["continual"].items():
        objective_settings(
            spec["objective"], spec["settings"], f"zeroshot.continual.{name}.settings", fail
        )
    for task, spec in cfg["zeroshot"]["tasks"].items():
        task_params(task, spec["params"], f"zeroshot.tasks.{task}.params", fail)
    for task, spec in cfg["derived"]["tasks"].items():
        task_params(task, spec["params"], f"derived.tasks.{task}.params", fail)
    # derived.pretrain and metapretrain.pretrain: the trainer's keys of `pretrain`, checked
    # with their schema (no defaults filled: unset keys keep the trainer's defaults).
    props = schema["properties"]["pretrain"]["properties"]
    block = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            **{k: props[k] for k in SCRATCH_PARAM_KEYS},
            "validation_paragraphs": props["text"]["properties"]["validation_paragraphs"],
            "objectives": {"type": ["object", "null"]},
        },
    }
    for stage in ("derived", "metapretrain"):
        section = cfg[stage]["pretrain"]
        key = f"{stage}.pretrain"
        _unknown(
            section, [*SCRATCH_PARAM_KEYS, *SCRATCH_OTHER_KEYS], key, fail, f"the keys of {key}"
        )
        _schema_errors(section, block, key, fail)
        _objectives_block(section.get("objectives"), f"{key}.objectives", fail)


# --- the encoder's geometry --------------------------------------------------------------


def _layer(value: Any, key: str, depth: int, fail: Fail, *, lowest: int, origin: str) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and not lowest <= value <= depth:
        fail(f"{key}: layer {value} is outside {lowest}..{depth} (the depth of {origin})")


def _length(value: Any, key: str, positions: int, fail: Fail, origin: str) -> None:
    if isinstance(value, int) and value > positions:
        fail(f"{key}: {value} subwords is more than the {positions} positions of {origin}")


def _objective_geometry(
    block: Mapping[str, Any] | None, key: str, geo: Geometry, fail: Fail, origin: str
) -> None:
    for name, settings in (block or {}).items():
        settings = settings or {}
        _layer(
            settings.get("layer"), f"{key}.{name}.layer", geo.depth, fail, lowest=0, origin=origin
        )
        for i, layer in enumerate(settings.get("layers") or []):
            _layer(layer, f"{key}.{name}.layers[{i}]", geo.depth, fail, lowest=1, origin=origin)
        _length(settings.get("max_length"), f"{key}.{name}.max_length", geo.positions, fail, origin)


def _task_lengths(
    tasks: Mapping[str, Any],
    names: Iterable[str],
    key: str,
    positions: int,
    fail: Fail,
    origin: str,
) -> None:
    for task in names:
        if task not in tasks or task not in registry.TASKS:
            continue
        params = {**registry.task_info(task).protocol, **(tasks[task].get("params") or {})}
        where = f"{key}.{task}.params.max_length"
        _length(params.get("max_length"), where, positions, fail, origin)


def _encoder_keys(cfg: Mapping[str, Any], geo: Geometry, fail: Fail) -> None:
    origin = f"the encoder {geo.origin}"
    depth = geo.depth
    _layer(cfg["extract"]["layer"], "extract.layer", depth, fail, lowest=1, origin=origin)
    # extract.max_length and zeroshot.retrieval.max_length are capped at the encoder's
    # positions by the code that encodes (xlalign.encoders.contextual, .tasks.retrieval);
    # pre-training and fine-tuning lengths are not, and fail inside the job.
    pre = cfg["pretrain"]
    _layer(pre["alignment_layer"], "pretrain.alignment_layer", depth, fail, lowest=0, origin=origin)
    if pre["runs"] or cfg["zeroshot"]["continual"]:
        _length(pre["max_length"], "pretrain.max_length", geo.positions, fail, origin)
    _objective_geometry(pre["objectives"], "pretrain.objectives", geo, fail, origin)
    for row, block in pre["recipes"].items():
        _objective_geometry(block, f"pretrain.recipes.{row}", geo, fail, origin)
    for name, spec in cfg["zeroshot"]["continual"].items():
        _objective_geometry(
            {"settings": spec["settings"]}, f"zeroshot.continual.{name}", geo, fail, origin
        )
    ret = cfg["zeroshot"]["retrieval"]
    _layer(ret["layer"], "zeroshot.retrieval.layer", depth, fail, lowest=0, origin=origin)
    if ret["layer"] is None and ret["sets"] and depth < 4:
        fail(
            f"zeroshot.retrieval.layer: null means hidden_states[depth - 4], which {origin} "
            f"({depth} layers) does not have; give a layer in 0..{depth}"
        )
    tasks = cfg["zeroshot"]["tasks"]
    _task_lengths(tasks, tasks, "zeroshot.tasks", geo.positions, fail, origin)
    for task, spec in tasks.items():
        fb = (spec["params"].get("extra") or {}).get("feature_based")
        layers = fb.get("layers") if isinstance(fb, Mapping) else None
        for i, layer in enumerate(layers if isinstance(layers, list) else []):
            where = f"zeroshot.tasks.{task}.params.extra.feature_based.layers[{i}]"
            _layer(layer, where, depth, fail, lowest=0, origin=origin)
    an = cfg["analysis"]
    if an["enabled"]:
        layer = an["distances"]["layer"]
        _layer(layer, "analysis.distances.layer", depth, fail, lowest=0, origin=origin)
    if cfg["encoder"]["source"] == "local" and geo.hidden % geo.heads:
        fail(
            f"encoder.path: {geo.origin}: hidden size {geo.hidden} is not a multiple of "
            f"{geo.heads} heads"
        )


def _scratch_models(cfg: Mapping[str, Any], fail: Fail) -> None:
    """The small BERTs trained from scratch (derived languages, meta-pretraining)."""
    for stage in ("derived", "metapretrain"):
        sec = cfg[stage]
        arch = sec["arch"]
        if not sec["enabled"]:
            continue
        if arch["hidden"] % arch["heads"]:
            fail(
                f"{stage}.arch.hidden: {arch['hidden']} is not a multiple of {stage}.arch.heads "
                f"({arch['heads']}); expected hidden = heads x head size"
            )
        geo = Geometry(arch["layers"], arch["hidden"], arch["heads"], arch["max_position"], "")
        origin = f"{stage}.arch ({arch['layers']} layers, max_position {arch['max_position']})"
        pre = sec["pretrain"]
        # the trainer's default length when the block sets none
        length = pre.get("max_length", SCRATCH_DEFAULT_MAX_LENGTH)
        _length(length, f"{stage}.pretrain.max_length", geo.positions, fail, origin)
        _objective_geometry(
            pre.get("objectives"), f"{stage}.pretrain.objectives", geo, fail, origin
        )
    dv = cfg["derived"]
    if dv["enabled"]:
        origin = f"derived.arch (max_position {dv['arch']['max_position']})"
        _task_lengths(
            dv["tasks"], dv["tasks"], "derived.tasks", dv["arch"]["max_position"], fail, origin
        )
    mp = cfg["metapretrain"]
    if mp["enabled"]:
        origin = f"metapretrain.arch (max_position {mp['arch']['max_position']})"
        _task_lengths(
            cfg["zeroshot"]["tasks"],
            mp["evaluate"]["tasks"],
            "zeroshot.tasks",
            mp["arch"]["max_position"],
            fail,
            origin,
        )


# --- files the configuration names -------------------------------------------------------


def _template(template: str, key: str, fail: Fail, **fields: str) -> str:
    """``template`` with ``fields`` filled in; unknown or malformed fields named by key."""
    used = _url_fields(template, key, fail)
    unknown = used - set(fields)
    if unknown:
        want = ", ".join("{" + f + "}" for f in sorted(fields))
        fail(f"{key}: unknown field(s) {sorted(unknown)} in {template!r}; expected {want}")
    return template.format(**fields)


def _files(cfg: Mapping[str, Any], base_dir: Path, fail: Fail) -> None:
    langs = cfg["languages"]
    align = cfg["align"]
    dic = align["dictionary"]
    if align["enabled"] and dic["source"] == "file" and dic["path"]:
        for lang in langs:
            if lang == align["hub"]:
                continue
            path = _template(dic["path"], "align.dictionary.path", fail, lang=lang)
            if not _path(path, base_dir).is_file():
                fail(f"align.dictionary.path: file not found for {lang!r}: {path}")
    for name, template in cfg["evaluate"]["extra_spaces"].items():
        for lang in langs:
            path = _template(template, f"evaluate.extra_spaces.{name}", fail, lang=lang)
            if not _path(path, base_dir).is_file():
                fail(f"evaluate.extra_spaces.{name}: file not found for {lang!r}: {path}")
    priors = cfg["wordalign"]["priors"]
    if priors:
        from xlalign.config.validate import parallel_pairs

        for src, tgt in parallel_pairs(cfg):
            path = _template(priors, "wordalign.priors", fail, pair=f"{src}-{tgt}")
            if not _path(path, base_dir).is_file():
                fail(f"wordalign.priors: file not found for {src}-{tgt}: {path}")
    curve = cfg["results"]["learning_curve"]
    if curve is not None and not _path(curve, base_dir).is_file():
        fail(
            f"results.learning_curve: file not found: {curve} (expected the "
            "learning_curve.json of benchmarks/learning_curve.py)"
        )
    an = cfg["analysis"]
    source = an["gold"]["source"]
    if an["enabled"] and source != "handmade":
        missing = [
            ext for ext in (".src", ".tgt", ".gold") if not _path(source + ext, base_dir).is_file()
        ]
        if missing:
            fail(
                f"analysis.gold.source: {source!r} is neither 'handmade' nor a path stem with "
                f"{', '.join(source + e for e in ('.src', '.tgt', '.gold'))}; missing "
                f"{', '.join(source + e for e in missing)}"
            )


def _url_fields(url: str, key: str, fail: Fail) -> set[str]:
    try:
        return {f for _, f, _, _ in string.Formatter().parse(url) if f is not None}
    except ValueError as exc:
        fail(f"{key}: {url!r} is not a valid template ({exc})")


def _downloads(cfg: Mapping[str, Any], schema: Mapping[str, Any], fail: Fail) -> None:
    """URL templates use only the fields their rule fills in (those of the default URL; a
    task archive's `{file}` may be left out); a file:// URL without fields names a file
    that must exist."""
    props = schema["properties"]["downloads"]["properties"]
    sections = [(k, v, props.get(k, {})) for k, v in cfg["downloads"].items() if k != "tasks"]
    task_props = props.get("tasks", {}).get("properties", {})
    sections += [
        (f"tasks.{k}", v, task_props.get(k, {})) for k, v in cfg["downloads"]["tasks"].items()
    ]
    for name, spec, sub in sections:
        if not isinstance(spec, Mapping) or not isinstance(spec.get("url"), str):
            continue
        key = f"downloads.{name}.url"
        default = (sub.get("default") or {}).get("url")
        if not isinstance(default, str):
            continue
        allowed = _url_fields(default, key, fail) | (
            {"file"} if name.startswith("tasks.") else set()
        )
        fields = _url_fields(spec["url"], key, fail)
        if fields - allowed:
            bad = ", ".join("{" + f + "}" for f in sorted(fields - allowed))
            want = ", ".join("{" + f + "}" for f in sorted(allowed)) or "none"
            fail(f"{key}: unknown field(s) {bad} in {spec['url']!r}; expected {want}")
        url = spec["url"]
        if url.startswith("file://") and not fields:
            local = Path(unquote(urlsplit(url).path))
            if not local.is_file():
                fail(f"{key}: file not found: {local}")


# --- task x language combinations without data -------------------------------------------


def _task_data(cfg: Mapping[str, Any], fail: Fail) -> None:
    zs = cfg["zeroshot"]
    for i, task in enumerate(cfg["analysis"]["distances"]["finetuned"]):
        if task not in registry.TASKS or not registry.finetuned(task):
            fine = sorted(t for t in registry.TASKS if registry.finetuned(t))
            fail(
                f"analysis.distances.finetuned[{i}]: {task!r} is not a fine-tuned task; "
                f"expected one of {', '.join(fine)} (analysed where zeroshot.tasks has it)"
            )
    for task, spec in zs["tasks"].items():
        have = task_languages(task)
        if have is None:
            continue
        for i, lang in enumerate(spec["languages"]):
            if lang not in have:
                fail(
                    f"zeroshot.tasks.{task}.languages[{i}]: {task!r} has no test data for "
                    f"{lang!r}; it has {', '.join(sorted(have))}"
                )
    _rule_languages(cfg, fail)
    for name, spec in zs["retrieval"]["sets"].items():
        have = retrieval_languages(cfg, name)
        if have is None:
            continue
        for i, lang in enumerate(spec["languages"]):
            if lang not in have:
                hint = ""
                if name == "bible":
                    from xlalign.config.validate import bible_translation

                    side = "en" if bible_translation(cfg, {}, "en") is None else lang
                    hint = (
                        f" ({lang!r} is not in `languages`)"
                        if lang not in cfg["languages"]
                        else f" (no bible source in corpus.sources.{side}, so no translation "
                        f"of {side!r} to pair)"
                    )
                elif name == "tatoeba-laser" and lang in registry.LASER_TATOEBA_UNNAMED:
                    hint = (
                        f" (LASER's {lang!r} has no xlalign language code: "
                        f"{registry.LASER_TATOEBA_UNNAMED[lang]})"
                    )
                fail(
                    f"zeroshot.retrieval.sets.{name}.languages[{i}]: {name!r} has no data for "
                    f"{lang!r}{hint}; it has {', '.join(sorted(have)) or 'none'}"
                )


# --- stages enabled with nothing to run, named sets, the tracking store ------------------


def _enabled_stages(cfg: Mapping[str, Any], fail: Fail) -> None:
    """A stage switched on with an empty list of what it runs plans no job and writes no
    table: refused, so that ``enabled: true`` always means results."""
    for key, enabled, items in (
        ("derived.runs", cfg["derived"]["enabled"], cfg["derived"]["runs"]),
        ("derived.transformations", cfg["derived"]["enabled"], cfg["derived"]["transformations"]),
        ("metapretrain.variants", cfg["metapretrain"]["enabled"], cfg["metapretrain"]["variants"]),
    ):
        if enabled and not items:
            stage = key.split(".")[0]
            fail(f"{key}: empty while {stage}.enabled is true; list one or more, or disable it")


def _wordsim_sets(cfg: Mapping[str, Any], fail: Fail) -> None:
    sets = cfg["evaluate"]["wordsim"]["english_sets"]
    package = cfg["embedded"]["similarity_package"].split("==")[0].strip().lower()
    have = WORDSIM_SETS.get(package)
    if have is None:
        return  # another wheel: its job names what it lacks
    for i, name in enumerate(sets):
        if name not in have:
            near = difflib.get_close_matches(str(name), have, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            fail(
                f"evaluate.wordsim.english_sets[{i}]: {name!r} is not a similarity set of "
                f"{package} (embedded.similarity_package){hint}; it has {', '.join(have)}"
            )


def _tracking(cfg: Mapping[str, Any], base_dir: Path, fail: Fail) -> None:
    """The MLflow store: a URI, a sqlite file whose directory exists or is made under the
    working directory, and no clash with ``results/<name>``."""
    tr = cfg["tracking"]
    if not tr["enabled"]:
        return
    uri = tr["uri"]
    if not uri.strip():
        fail("tracking.uri: empty; expected an MLflow tracking URI (sqlite:///results/mlflow.db)")
    prefix = "sqlite:///"
    store = uri[len(prefix) :] if uri.startswith(prefix) else None
    if store is not None:
        if not store or store.endswith("/"):
            fail(f"tracking.uri: {uri!r} names no sqlite file; expected sqlite:///<dir>/<file>.db")
        if Path(store).is_absolute() and not Path(store).parent.is_dir():
            fail(
                f"tracking.uri: the directory {Path(store).parent} of the sqlite store does not "
                "exist (only a relative store's directory is made)"
            )
    name = cfg["name"]
    for key, path in (("tracking.uri", store), ("tracking.artifacts", tr["artifacts"])):
        if path is None:
            continue
        parts = Path(path).parts
        if len(parts) >= 2 and parts[0] == "results" and parts[1] == name:
            fail(
                f"name: {name!r} is where {key} keeps the tracking store (results/{parts[1]}); "
                "expected another name"
            )


def _rule_languages(cfg: Mapping[str, Any], fail: Fail) -> None:
    """The rules that build a task's data per language (``prepare_task``, the UDHR and
    Bible builders) take their ``{lang}`` from `languages` (the workflow's wildcard
    constraint): a test language outside it, or an English training language outside it
    for downloaded data, plans no job that makes the file. Only the embedded gold tasks
    (pos-gold, ner-gold) have rules of their own per language."""
    langs = set(cfg["languages"])
    listed = ", ".join(cfg["languages"])
    zs = cfg["zeroshot"]
    groups = [
        ("zeroshot.tasks", zs["tasks"], True),
        ("zeroshot.retrieval.sets", zs["retrieval"]["sets"], False),
        ("derived.tasks", cfg["derived"]["tasks"] if cfg["derived"]["enabled"] else {}, True),
    ]
    for where, tasks, trains in groups:
        for task, spec in tasks.items():
            if task not in registry.TASKS or task in EMBEDDED_TEST_LANGUAGES:
                continue
            info = registry.task_info(task)
            if trains and info.data == "download" and info.train_language not in langs:
                fail(
                    f"{where}.{task}: its {info.train_language!r} training data are prepared "
                    f"only for a language in `languages` ({listed}); add "
                    f"{info.train_language!r} there"
                )
            if not trains and info.data == "download":
                # `prepare_task` takes any `[a-z]{2,3}` language (its own wildcard
                # constraint): a retrieval set of official files needs no other stage of
                # its languages (LASER's Tatoeba has 110, most without a corpus).
                continue
            for i, lang in enumerate(spec.get("languages", [])):
                if lang not in langs:
                    fail(
                        f"{where}.{task}.languages[{i}]: {lang!r} is not in `languages` "
                        f"({listed}); {task!r} data are built only for those"
                    )
