"""The settings of from-scratch pre-training (xlalign.pretrain.scratch): a stage section
split into the trainer's parameters and the row's objectives."""

from __future__ import annotations

import pytest

from xlalign.core.errors import ConfigError
from xlalign.pretrain.scratch import row_settings, training_params


def test_training_params_keeps_trainer_keys_and_drops_the_head_warmup() -> None:
    section = {
        "steps": 100,
        "learning_rate": 1e-3,
        "max_length": 64,
        "validation_paragraphs": 5,
        "objectives": {"mlm": {"batch_size": 16}},
    }
    assert training_params(section) == {
        "steps": 100,
        "learning_rate": 1e-3,
        "max_length": 64,
        "head_warmup_steps": 0,
    }
    assert training_params(section, steps=7)["steps"] == 7


def test_training_params_names_an_unknown_key() -> None:
    with pytest.raises(ConfigError, match=r"unknown keys \['learning_rat'\]"):
        training_params({"learning_rat": 1e-3})


def test_row_settings_merge_the_section_batch_sizes_over_the_row() -> None:
    objectives = {"mlm": {"batch_size": 16}, "tlm": {"batch_size": 8}}
    tlm = row_settings({"objectives": objectives}, "tlm")
    assert set(tlm) == {"mlm", "tlm"}
    assert tlm["mlm"]["batch_size"] == 16 and tlm["tlm"]["batch_size"] == 8
    align = row_settings({"objectives": objectives}, "align-mlm")
    # ALIGN-MLM: MLM plus 001's alpha-weighted cosine term of the dictionary pairs
    assert set(align) == {"mlm", "align_mlm"} and align["align_mlm"]["weight"] == 10.0
