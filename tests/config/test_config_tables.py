"""The plain-data tables configuration validation keeps (so that it imports nothing heavy)
stay equal to what they mirror in the library, the workflow and transformers."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from xlalign.config import checks, load_schema
from xlalign.config.encoders import KNOWN_MODELS, from_hf_config
from xlalign.config.taskdata import EMBEDDED_TEST_LANGUAGES, OFFICIAL_LANGUAGES, UDHR_LANGUAGES
from xlalign.config.training_args import TRAINING_ARGUMENTS, TRANSFORMERS_VERSION

ROOT = Path(__file__).resolve().parents[2]


def test_training_arguments_match_the_installed_transformers() -> None:
    import transformers

    live = tuple(f.name for f in dataclasses.fields(transformers.TrainingArguments))
    assert transformers.__version__ == TRANSFORMERS_VERSION, (
        "transformers changed: regenerate xlalign/config/training_args.py"
    )
    assert live == TRAINING_ARGUMENTS


def test_scratch_keys_match_the_trainer() -> None:
    from xlalign.pretrain import scratch
    from xlalign.pretrain.trainer import PretrainParams

    assert checks.SCRATCH_PARAM_KEYS == scratch.PARAM_KEYS
    assert checks.SCRATCH_OTHER_KEYS == scratch.OTHER_KEYS
    defaults = {f.name: f.default for f in dataclasses.fields(PretrainParams)}
    assert defaults["max_length"] == checks.SCRATCH_DEFAULT_MAX_LENGTH
    assert defaults["steps"] == checks.SCRATCH_DEFAULT_STEPS


def test_task_params_schema_matches_task_params() -> None:
    from xlalign.evaluation.tasks.base import TaskParams

    props = load_schema()["$defs"]["task_params"]["properties"]
    assert set(props) == {f.name for f in dataclasses.fields(TaskParams)}


def test_extra_keys_are_what_the_fine_tuning_code_reads() -> None:
    """Every ``params.extra`` key read under xlalign/evaluation/tasks is accepted, for the
    family that reads it, and nothing else."""
    tasks = ROOT / "src" / "xlalign" / "evaluation" / "tasks"
    pattern = re.compile(r"params\.extra\.get\(\s*\"(\w+)\"|extra\.get\(\s*\"(\w+)\"")
    read: dict[str, set[str]] = {}
    for path in tasks.glob("*.py"):
        keys = {a or b for a, b in pattern.findall(path.read_text(encoding="utf-8"))}
        if keys:
            read[path.stem] = keys
    assert read["finetune"] == set(checks.FINETUNE_EXTRA)
    assert read["parsing"] == set(checks.FAMILY_EXTRA["parsing"])
    assert read["tagging"] == set(checks.FAMILY_EXTRA["tagging"])
    assert read["classification"] == set(checks.FAMILY_EXTRA["classification"])
    assert set(read) <= {"finetune", "parsing", "tagging", "classification"}
    assert set(checks._EXTRA_VALUES) == {k for v in read.values() for k in v}


def test_feature_based_options_match_the_feature_spec() -> None:
    from xlalign.evaluation.tasks.feature_based import FeatureSpec

    schema = checks._EXTRA_VALUES["feature_based"]["anyOf"][1]
    assert set(schema["properties"]) == {f.name for f in dataclasses.fields(FeatureSpec)} - {
        "given"
    }


def test_every_objective_setting_has_a_value_check() -> None:
    from xlalign.pretrain.recipes import OBJECTIVE_DEFAULTS

    keys = {k for d in OBJECTIVE_DEFAULTS.values() for k in d} | {"weight", "static"}
    assert keys == set(checks.OBJECTIVE_VALUES)


def test_task_languages_match_the_loaders() -> None:
    from xlalign.evaluation.tasks import official
    from xlalign.evaluation.tasks.labelled.udhr import UDHR_CODES

    assert {t: set(v) for t, v in OFFICIAL_LANGUAGES.items()} == {
        t: set(v) for t, v in official.LANGUAGES.items()
    }
    assert set(UDHR_LANGUAGES) == set(UDHR_CODES) - {"en"}
    rules = (ROOT / "workflow" / "rules" / "labelled.smk").read_text(encoding="utf-8")
    built = re.findall(r'task_split_file\("([\w-]+)", "(\w+)", "test"\)', rules)
    expected = {(t, lang) for t, langs in EMBEDDED_TEST_LANGUAGES.items() for lang in langs}
    assert set(built) == expected


def test_encoder_geometry_from_config_json() -> None:
    xlmr = {
        "model_type": "xlm-roberta",
        "num_hidden_layers": 12,
        "hidden_size": 768,
        "num_attention_heads": 12,
        "max_position_embeddings": 514,
        "pad_token_id": 1,
    }
    geo = from_hf_config(xlmr, "x")
    assert geo is not None
    assert (geo.depth, geo.hidden, geo.heads, geo.positions) == KNOWN_MODELS["xlm-roberta-base"]
    assert from_hf_config({"model_type": "bert"}, "x") is None


def test_udhr_declarations_of_other_languages() -> None:
    from xlalign.config.taskdata import UDHR_DECLARATIONS, udhr_declaration
    from xlalign.evaluation.tasks.labelled.udhr import UDHR_CODES, declaration_code

    assert set(UDHR_CODES.values()) <= UDHR_DECLARATIONS
    for lang, name in {"pl": "pol", "uk": "ukr", "am": "amh", "sr_Latn": "srp_latn"}.items():
        assert udhr_declaration(lang) == declaration_code(lang) == name
    assert udhr_declaration("kw") is None  # Cornish: no declaration in the package
