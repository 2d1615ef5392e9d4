"""A sweep of malformed configurations: each a small change to config/config.yaml, each
refused by validation with a ConfigError naming the key (and the file), never a traceback;
a few also through `snakemake -n` and `xlalign check-config`, which must refuse them the
same way ("valid" from one means the other plans the run).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from xlalign.config import load, validate
from xlalign.config.yamlio import parse_config_text
from xlalign.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
BASE: dict[str, Any] = yaml.safe_load((ROOT / "config" / "config.yaml").read_text("utf-8"))
DELETE = object()

#: id -> ({dotted key: new value (DELETE removes it)}, the key the message must name).
#: Dotted keys never contain dots themselves; list items are whole values.
BAD: dict[str, tuple[dict[str, Any], str]] = {
    # the name: results/<name> must stay a directory of results/
    "name-dotdot": ({"name": ".."}, "name"),
    "name-dot": ({"name": "."}, "name"),
    "name-empty": ({"name": ""}, "name"),
    "name-slash": ({"name": "a/b"}, "name"),
    "name-backslash": ({"name": "a\\b"}, "name"),
    "name-dash": ({"name": "-x"}, "name"),
    "name-hidden": ({"name": ".x"}, "name"),
    "name-space": ({"name": "a b"}, "name"),
    "name-int": ({"name": 5}, "name"),
    "name-missing": ({"name": DELETE}, "'name' is a required property"),
    # top level
    "unknown-top": ({"seed": [1]}, "'seed' was unexpected"),
    "seeds-dup": ({"seeds": [1, 1]}, "seeds"),
    "seeds-empty": ({"seeds": []}, "seeds"),
    "seeds-negative": ({"seeds": [-1]}, "seeds.0"),
    "languages-dup": ({"languages": ["en", "de", "de"]}, "languages"),
    "languages-unknown": ({"languages": ["en", "xx"]}, "languages[1]"),
    # the encoder
    "encoder-source": ({"encoder.source": "hub"}, "encoder.source"),
    "encoder-unknown-key": ({"encoder.nam": "x"}, "'nam' was unexpected"),
    "encoder-local-missing": ({"encoder": {"source": "local", "path": "nope"}}, "encoder.path"),
    "encoder-hf-empty": ({"encoder": {"source": "huggingface", "name": " "}}, "encoder.name"),
    # its geometry (multilingual-e5-small: 12 layers, 512 positions)
    "extract-layer-deep": ({"extract.layer": 13}, "extract.layer"),
    "extract-layer-zero": ({"extract.layer": 0}, "extract.layer"),
    "alignment-layer-deep": ({"pretrain.alignment_layer": 13}, "pretrain.alignment_layer"),
    "pretrain-max-length": ({"pretrain.max_length": 600}, "pretrain.max_length"),
    "retrieval-layer-deep": ({"zeroshot.retrieval.layer": 20}, "zeroshot.retrieval.layer"),
    "distances-layer-deep": ({"analysis.distances.layer": 13}, "analysis.distances.layer"),
    "distances-layer-negative": ({"analysis.distances.layer": -1}, "analysis.distances.layer"),
    "objective-layer-deep": (
        {"pretrain.objectives.mse": {"batch_size": 64, "layer": 14}},
        "pretrain.objectives.mse.layer",
    ),
    "recipe-layer-deep": (
        {"pretrain.recipes": {"x": {"mlm": {}, "contrastive": {"layer": 99}}}},
        "pretrain.recipes.x.contrastive.layer",
    ),
    "linear-map-layers": (
        {"pretrain.objectives.linear_map": {"layers": [3, 13]}},
        "pretrain.objectives.linear_map.layers[1]",
    ),
    "task-max-length": (
        {"zeroshot.tasks.pos-gold.params.max_length": 1024},
        "zeroshot.tasks.pos-gold.params.max_length",
    ),
    "xlmr-layer-deep": (
        {"encoder": {"source": "huggingface", "name": "xlm-roberta-base"}, "extract.layer": 13},
        "extract.layer",
    ),
    "xlmr-large-alias-length": (
        {
            "encoder": {"source": "huggingface", "name": "FacebookAI/xlm-roberta-large"},
            "pretrain.max_length": 514,
        },
        "pretrain.max_length",
    ),
    "xlmr-large-alias-layer": (
        {
            "encoder": {"source": "huggingface", "name": "FacebookAI/xlm-roberta-large"},
            "pretrain.alignment_layer": 25,
        },
        "pretrain.alignment_layer",
    ),
    # the models trained from scratch
    "derived-heads": ({"derived.arch.heads": 3}, "derived.arch.hidden"),
    "meta-heads": (
        {"metapretrain.arch.hidden": 130, "metapretrain.arch.heads": 4},
        "metapretrain.arch.hidden",
    ),
    "derived-max-length": ({"derived.pretrain.max_length": 256}, "derived.pretrain.max_length"),
    "meta-max-length": (
        {"metapretrain.pretrain.max_length": 200},
        "metapretrain.pretrain.max_length",
    ),
    "derived-default-length": (
        {"derived.arch.max_position": 64, "derived.pretrain.max_length": DELETE},
        "derived.pretrain.max_length",
    ),
    "derived-task-length": (
        {"derived.tasks.pos-gold.params.max_length": 256},
        "derived.tasks.pos-gold.params.max_length",
    ),
    "meta-task-length": (
        {"metapretrain.arch.max_position": 64, "metapretrain.pretrain.max_length": 32},
        "zeroshot.tasks.pos-gold.params.max_length",
    ),
    "derived-max-position": ({"derived.arch.max_position": 8}, "derived.arch.max_position"),
    "derived-objective-layer": (
        {"derived.pretrain.objectives.mse": {"layer": 3}},
        "derived.pretrain.objectives.mse.layer",
    ),
    # ranges over several keys and single values
    "split-fractions": (
        {"dictionaries.split.test_fraction": 0.6, "dictionaries.split.valid_fraction": 0.5},
        "dictionaries.split.test_fraction + valid_fraction",
    ),
    "split-fractions-one": (
        {"dictionaries.split.test_fraction": 0.9, "dictionaries.split.valid_fraction": 0.1},
        "dictionaries.split.test_fraction + valid_fraction",
    ),
    "split-negative": (
        {"dictionaries.split.test_fraction": -0.1},
        "dictionaries.split.test_fraction",
    ),
    "task-lr-negative": (
        {"zeroshot.tasks.pos-gold.params.learning_rate": -1e-5},
        "zeroshot.tasks.pos-gold.params.learning_rate",
    ),
    "task-lr-zero": (
        {"zeroshot.tasks.ner-gold.params.learning_rate": 0},
        "zeroshot.tasks.ner-gold.params.learning_rate",
    ),
    "task-batch-zero": (
        {"zeroshot.tasks.pos-gold.params.batch_size": 0},
        "zeroshot.tasks.pos-gold.params.batch_size",
    ),
    "task-epochs-zero": (
        {"zeroshot.tasks.pos-gold.params.epochs": 0},
        "zeroshot.tasks.pos-gold.params.epochs",
    ),
    "task-selection": (
        {"zeroshot.tasks.pos-gold.params.selection": "best"},
        "zeroshot.tasks.pos-gold.params.selection",
    ),
    "task-examples-zero": (
        {"zeroshot.tasks.pos-gold.params.max_train_examples": 0},
        "zeroshot.tasks.pos-gold.params.max_train_examples",
    ),
    "task-unknown-param": (
        {"zeroshot.tasks.pos-gold.params.lerning_rate": 1e-3},
        "'lerning_rate' was unexpected",
    ),
    "extra-typo": (
        {"zeroshot.tasks.pos-gold.params.extra.group_by_lenght": True},
        "zeroshot.tasks.pos-gold.params.extra.group_by_lenght",
    ),
    "extra-training-argument": (
        {"zeroshot.tasks.pos-gold.params.extra.lr_scheduler_type": "cosine"},
        "zeroshot.tasks.pos-gold.params.extra.lr_scheduler_type",
    ),
    "extra-warmup-ratio": (
        {"zeroshot.tasks.pos-gold.params.extra.warmup_ratio": 1.5},
        "zeroshot.tasks.pos-gold.params.extra.warmup_ratio",
    ),
    "extra-other-family": (
        {"zeroshot.tasks.ner-gold.params.extra.decoding": "mst"},
        "zeroshot.tasks.ner-gold.params.extra.decoding",
    ),
    "extra-loss-name": (
        {"zeroshot.tasks.ner-gold.params.extra.loss": "focal"},
        "zeroshot.tasks.ner-gold.params.extra.loss",
    ),
    "extra-loss-max-weight": (
        {
            "zeroshot.tasks.ner-gold.params.extra.loss": {
                "name": "class_weighted",
                "max_weight": 0.5,
            }
        },
        "zeroshot.tasks.ner-gold.params.extra.loss",
    ),
    "extra-loss-other-family": (
        {
            "zeroshot.tasks.xquad": {
                "languages": ["de"],
                "params": {"extra": {"loss": "class_weighted"}},
            }
        },
        "zeroshot.tasks.xquad.params.extra.loss",
    ),
    "extra-sample-share": (
        {"zeroshot.tasks.ner-gold.params.extra.train_sample": {"entity_share": 1.5}},
        "zeroshot.tasks.ner-gold.params.extra.train_sample",
    ),
    "extra-sample-key": (
        {"zeroshot.tasks.ner-gold.params.extra.train_sample": {"share": 0.5}},
        "zeroshot.tasks.ner-gold.params.extra.train_sample",
    ),
    "extra-type": (
        {"zeroshot.tasks.pos-gold.params.extra.group_by_length": "yes"},
        "zeroshot.tasks.pos-gold.params.extra.group_by_length",
    ),
    "derived-task-extra": (
        {"derived.tasks.pos-gold.params.extra": {"foo": 1}},
        "derived.tasks.pos-gold.params.extra.foo",
    ),
    "derived-task-param": ({"derived.tasks.pos-gold.params.epoch": 2}, "'epoch' was unexpected"),
    "objective-batch-zero": (
        {"pretrain.objectives.mlm.batch_size": 0},
        "pretrain.objectives.mlm.batch_size",
    ),
    "objective-unknown-key": (
        {"pretrain.objectives.mse": {"batch_sise": 8}},
        "pretrain.objectives.mse.batch_sise",
    ),
    "objective-unknown": ({"pretrain.objectives.foo": {}}, "'foo' was unexpected"),
    "objective-unused-key": (
        {"pretrain.objectives.tlm": {"batch_size": 8, "layer": 3}},
        "pretrain.objectives.tlm.layer",
    ),
    "recipe-unknown-objective": (
        {"pretrain.recipes": {"x": {"mlmm": {}}}},
        "pretrain.recipes.x.mlmm",
    ),
    "pretrain-lr": ({"pretrain.learning_rate": -1}, "pretrain.learning_rate"),
    "pretrain-steps": ({"pretrain.steps": 0}, "pretrain.steps"),
    "pretrain-mlm-probability": ({"pretrain.mlm_probability": 1.0}, "pretrain.mlm_probability"),
    "pretrain-warmup": ({"pretrain.warmup_steps": 100}, "pretrain.warmup_steps"),
    "derived-warmup": ({"derived.pretrain.warmup_steps": 200}, "derived.pretrain.warmup_steps"),
    "meta-warmup": (
        {"metapretrain.pretrain.warmup_steps": 100},
        "metapretrain.pretrain.warmup_steps",
    ),
    "warmup-both": (
        {
            "zeroshot.tasks.pos-gold.params.warmup_steps": 10,
            "zeroshot.tasks.pos-gold.params.extra.warmup_ratio": 0.1,
        },
        "zeroshot.tasks.pos-gold.params.extra.warmup_ratio",
    ),
    "warmup-protocol": (
        {"zeroshot.tasks.xquad": {"languages": ["de"], "params": {"extra": {"warmup_ratio": 0.1}}}},
        "zeroshot.tasks.xquad.params.extra.warmup_ratio",
    ),
    "pretrain-runs-dup": ({"pretrain.runs": ["mlm", "mlm"]}, "pretrain.runs"),
    "pretrain-runs-unknown": ({"pretrain.runs": ["mlmm"]}, "pretrain.runs"),
    # seed lists that would count one run twice in the statistics
    "pretrain-seeds-dup": ({"pretrain.seeds": [1, 1]}, "pretrain.seeds"),
    "zeroshot-seeds-dup": ({"zeroshot.seeds": [1, 1]}, "zeroshot.seeds"),
    "derived-seeds-dup": ({"derived.seeds": [1, 1]}, "derived.seeds"),
    "meta-seeds-dup": ({"metapretrain.seeds": [2, 2]}, "metapretrain.seeds"),
    # pass-through blocks of the from-scratch stages
    "derived-pretrain-typo": (
        {"derived.pretrain.learnin_rate": 1e-3},
        "derived.pretrain.learnin_rate",
    ),
    "meta-pretrain-unknown": ({"metapretrain.pretrain.foo": 1}, "metapretrain.pretrain.foo"),
    "derived-pretrain-lr": (
        {"derived.pretrain.learning_rate": -1},
        "derived.pretrain.learning_rate",
    ),
    "derived-pretrain-steps": ({"derived.pretrain.steps": 0}, "derived.pretrain.steps"),
    "derived-objective-batch": (
        {"derived.pretrain.objectives.mlm.batch_size": 0},
        "derived.pretrain.objectives.mlm.batch_size",
    ),
    "meta-objective-typo": (
        {"metapretrain.pretrain.objectives.mlm": {"batchsize": 16}},
        "metapretrain.pretrain.objectives.mlm.batchsize",
    ),
    "meta-objective-unknown": (
        {"metapretrain.pretrain.objectives.mlmm": {}},
        "metapretrain.pretrain.objectives.mlmm",
    ),
    "continual-layer": (
        {
            "zeroshot.continual.c": {
                "objective": "mse",
                "settings": {"static": "x2s-ma", "layer": 50},
            }
        },
        "zeroshot.continual.c.settings.layer",
    ),
    "continual-unknown-setting": (
        {"zeroshot.continual.c": {"objective": "gcca", "settings": {"static": "x2s-ma", "kk": 3}}},
        "zeroshot.continual.c.settings.kk",
    ),
    "continual-alpha": (
        {"zeroshot.continual.c": {"objective": "mse", "alpha": 0}},
        "zeroshot.continual.c.alpha",
    ),
    # files the configuration names (none of them exists in the empty base directory)
    "dictionary-file": (
        {"align.dictionary": {"source": "file", "path": "dics/{lang}.txt"}},
        "align.dictionary.path",
    ),
    "extra-space-file": (
        {"evaluate.extra_spaces.ft": "vec/{lang}.vec"},
        "evaluate.extra_spaces.ft",
    ),
    "priors-file": ({"wordalign.priors": "priors/{pair}.priors"}, "wordalign.priors"),
    "learning-curve-file": ({"results.learning_curve": "lc.json"}, "results.learning_curve"),
    "gold-source-file": ({"analysis.gold.source": "gold/en-de"}, "analysis.gold.source"),
    "gold-dictionary-file": ({"dictionaries.files.de": "x.txt"}, "dictionaries.files.de"),
    "udpipe-model-file": ({"segment.udpipe.models.de": "m.udpipe"}, "segment.udpipe.models.de"),
    "text-source-file": (
        {"corpus.sources.de": [{"type": "text", "path": "nope.txt"}]},
        "corpus.sources.de[0].path",
    ),
    "pretrain-text-source": (
        {"pretrain.text.sources.en": [{"type": "texx"}]},
        "pretrain.text.sources.en.0.type",
    ),
    "pretrain-text-file": (
        {"pretrain.text.sources.en": [{"type": "text", "path": "nope.txt"}]},
        "pretrain.text.sources.en[0].path",
    ),
    "parallel-files": (
        {"parallel.sources.en-de": [{"type": "files", "paths": {"en": "a.txt", "de": "b.txt"}}]},
        "parallel.sources.en-de[0].paths.en",
    ),
    "download-url-field": (
        {"downloads.cc100.url": "https://x/{cod}.txt.xz"},
        "downloads.cc100.url",
    ),
    "download-url-template": (
        {"downloads.tasks.xnli.url": "http://x/{file"},
        "downloads.tasks.xnli.url",
    ),
    "download-file-url": (
        {"downloads.tasks.panx.url": "file:///nope/panx.tar"},
        "downloads.tasks.panx.url",
    ),
    # task x language and retrieval set x language without data
    "pos-gold-language": (
        {"zeroshot.tasks.pos-gold.languages": ["he", "de"]},
        "zeroshot.tasks.pos-gold.languages[1]",
    ),
    "ner-gold-language": (
        {"zeroshot.tasks.ner-gold.languages": ["fr"]},
        "zeroshot.tasks.ner-gold.languages[0]",
    ),
    "task-language-dup": (
        {"zeroshot.tasks.pos-gold.languages": ["he", "he"]},
        "zeroshot.tasks.pos-gold.languages",
    ),
    "task-english": (
        {"zeroshot.tasks.pos-gold.languages": ["en"]},
        "zeroshot.tasks.pos-gold.languages",
    ),
    "udpos-language": (
        {"zeroshot.tasks.udpos": {"languages": ["sw"]}},
        "zeroshot.tasks.udpos.languages[0]",
    ),
    "xnli-language": (
        {"zeroshot.tasks.xnli": {"languages": ["ja"]}},
        "zeroshot.tasks.xnli.languages[0]",
    ),
    "unknown-task": ({"zeroshot.tasks.foo": {"languages": ["de"]}}, "zeroshot.tasks.foo"),
    "bible-language": (
        {"zeroshot.retrieval.sets.bible.languages": ["de", "hi"]},
        "zeroshot.retrieval.sets.bible.languages[1]",
    ),
    "bible-english": (
        {
            "corpus.sources.en": [{"type": "libreoffice-help"}],
            "parallel.sources": {"en-de": [{"type": "libreoffice-help"}]},
        },
        "zeroshot.retrieval.sets.bible.languages[0]",
    ),
    "bible-english-parallel": (
        {
            "corpus.sources.en": [{"type": "libreoffice-help"}],
            "zeroshot.retrieval.sets": {"udhr": {"languages": ["de"]}},
        },
        "parallel.sources.en-de[0]",
    ),
    "udhr-language": (
        {"zeroshot.retrieval.sets.udhr.languages": ["de", "qu"]},
        "zeroshot.retrieval.sets.udhr.languages[1]",
    ),
    "udhr-english": (
        {"zeroshot.retrieval.sets.udhr.languages": ["en"]},
        "zeroshot.retrieval.sets.udhr.languages[0]",
    ),
    "tatoeba-language": (
        {"zeroshot.retrieval.sets.tatoeba": {"languages": ["yo"]}},
        "zeroshot.retrieval.sets.tatoeba.languages[0]",
    ),
    "bucc-language": (
        {"zeroshot.retrieval.sets.bucc": {"languages": ["ja"]}},
        "zeroshot.retrieval.sets.bucc.languages[0]",
    ),
    "finetuned-unknown": (
        {"analysis.distances.finetuned": ["pos-gld"]},
        "analysis.distances.finetuned[0]",
    ),
    "finetuned-retrieval": (
        {"analysis.distances.finetuned": ["udhr"]},
        "analysis.distances.finetuned[0]",
    ),
    "distances-pair": ({"analysis.distances.pairs": ["en-fr"]}, "analysis.distances.pairs[0]"),
    "gold-pair": ({"analysis.gold.pair": "ende"}, "analysis.gold.pair"),
    "dictionary-template": (
        {"align.dictionary": {"source": "file", "path": "d/{lang}{x}"}},
        "align.dictionary.path",
    ),
    "extra-space-template": (
        {"evaluate.extra_spaces.ft": "v/{lang}{x}.vec"},
        "evaluate.extra_spaces.ft",
    ),
    "feature-based-unknown": (
        {"zeroshot.tasks.pos-gold.params.extra.feature_based": {"layer": [6]}},
        "zeroshot.tasks.pos-gold.params.extra.feature_based",
    ),
    "feature-based-layers": (
        {"zeroshot.tasks.pos-gold.params.extra.feature_based": {"layers": [6, 13]}},
        "zeroshot.tasks.pos-gold.params.extra.feature_based.layers[1]",
    ),
    "tables-metric": (
        {"evaluate.tables.metric": "p@5", "evaluate.ks": [1, 10]},
        "evaluate.tables.metric",
    ),
    "tables-retrieval": ({"evaluate.retrieval": ["nn"]}, "evaluate.tables.retrieval"),
    "retrieval-max-pairs": ({"zeroshot.retrieval.sets.udhr.max_pairs": 0}, "max_pairs"),
    # single values the schema bounds
    "corpus-max-sentences": ({"corpus.max_sentences": 0}, "corpus.max_sentences"),
    "extract-lr-zero": ({"extract.lr": 0}, "extract.lr"),
    "extract-lr-negative": ({"extract.lr": -0.1}, "extract.lr"),
    "extract-epochs": ({"extract.epochs": 0}, "extract.epochs"),
    "extract-batch-tokens": ({"extract.batch_tokens": 10}, "extract.batch_tokens"),
    "vocab-min-count": ({"extract.vocab.min_count": 0}, "extract.vocab.min_count"),
    "align-hub": ({"align.hub": "fr"}, "align.hub"),
    "align-recipe": ({"align.recipe": "procrustes"}, "align.recipe"),
    "align-options": ({"align.options": {"foo": 1}}, "align.options"),
    "evaluate-retrieval-dup": ({"evaluate.retrieval": ["nn", "nn"]}, "evaluate.retrieval"),
    "evaluate-ks-dup": ({"evaluate.ks": [1, 1]}, "evaluate.ks"),
    "null-prior": ({"wordalign.null_prior": 1.0}, "wordalign.null_prior"),
    "filter-tokens": (
        {"parallel.filter": {"min_tokens": 50, "max_tokens": 10}},
        "parallel.filter.min_tokens",
    ),
    "significance-alpha": ({"results.significance.alpha": 1.5}, "results.significance.alpha"),
    "tracking-enabled": ({"tracking.enabled": "yes"}, "tracking.enabled"),
    "derived-transformations-dup": (
        {"derived.transformations": ["trans", "trans"]},
        "derived.transformations",
    ),
    "meta-variants-dup": ({"metapretrain.variants": ["body", "body"]}, "metapretrain.variants"),
    "zeroshot-device": ({"zeroshot.device": "gpu"}, "zeroshot.device"),
    "pretrain-device": ({"pretrain.device": "cuda:x"}, "pretrain.device"),
    "analysis-device": ({"analysis.device": ""}, "analysis.device"),
    "zeroshot-precision": ({"zeroshot.precision": "fp8"}, "zeroshot.precision"),
    "dictionary-fraction": ({"derived.dictionary_fraction": 0}, "derived.dictionary_fraction"),
    "per-language-typo": ({"segment.per_language.de": {"min_token": 3}}, "segment.per_language.de"),
    "heldout-books": ({"embedded.bible_heldout_books": [0]}, "embedded.bible_heldout_books.0"),
    "analysis-methods-dup": ({"analysis.methods": ["ot", "ot"]}, "analysis.methods"),
}


def mutate(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    cfg = copy.deepcopy(base)
    for dotted, value in changes.items():
        node = cfg
        *parents, last = dotted.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        if value is DELETE:
            node.pop(last, None)
        else:
            node[last] = copy.deepcopy(value)
    return cfg


def refusal(cfg: dict[str, Any], base_dir: Path) -> str:
    with pytest.raises(ConfigError) as exc:
        validate(cfg, origin="bad.yaml", base_dir=base_dir)
    return str(exc.value)


def test_the_sweep_is_large() -> None:
    assert len(BAD) >= 90


@pytest.mark.parametrize("case", sorted(BAD))
def test_refused_with_its_key(case: str, tmp_path: Path) -> None:
    changes, key = BAD[case]
    msg = refusal(mutate(BASE, changes), tmp_path)
    assert msg.startswith("bad.yaml: "), msg
    assert key in msg, msg
    assert "Traceback" not in msg


def test_the_base_and_every_config_the_tests_use_are_valid(tmp_path: Path) -> None:
    validate(BASE, base_dir=tmp_path)
    load(ROOT / "config" / "paper.yaml")
    small = yaml.safe_load((ROOT / "tests" / "e2e" / "embedded-small.yaml").read_text("utf-8"))
    merged = copy.deepcopy(BASE)

    def merge(a: dict[str, Any], b: dict[str, Any]) -> None:
        for k, v in b.items():
            if isinstance(v, dict) and isinstance(a.get(k), dict):
                merge(a[k], v)
            else:
                a[k] = v

    merge(merged, small)
    validate(merged, base_dir=tmp_path)


def test_a_known_encoder_with_an_unknown_name_skips_the_geometry() -> None:
    cfg = mutate(BASE, {"encoder": {"source": "huggingface", "name": "org/tiny-bert"},
                        "extract.layer": 40})  # fmt: skip
    assert validate(cfg)["extract"]["layer"] == 40


def test_a_local_encoder_is_read_from_its_config_json(tmp_path: Path) -> None:
    enc = tmp_path / "enc"
    enc.mkdir()
    hf = {"model_type": "bert", "num_hidden_layers": 4, "hidden_size": 64,
          "num_attention_heads": 4, "max_position_embeddings": 128}  # fmt: skip
    (enc / "config.json").write_text(json.dumps(hf), encoding="utf-8")
    (enc / "tokenizer.json").write_text("{}", encoding="utf-8")
    local = {"encoder": {"source": "local", "path": "enc"}, "extract.layer": 4,
             "pretrain.alignment_layer": 4, "pretrain.max_length": 64,
             "zeroshot.retrieval.layer": 4}  # fmt: skip
    validate(mutate(BASE, local), base_dir=tmp_path)
    for key, value in (
        ("extract.layer", 5),
        ("pretrain.alignment_layer", 5),
        ("zeroshot.tasks.pos-gold.params.max_length", 129),
        ("pretrain.max_length", 256),
        ("zeroshot.retrieval.layer", 6),
    ):
        msg = refusal(mutate(BASE, {**local, key: value}), tmp_path)
        assert key in msg and "enc/config.json" in msg, msg
    # XLM-R style: 514 position embeddings, 512 usable (padding index 1)
    hf.update(model_type="xlm-roberta", max_position_embeddings=130, pad_token_id=1)
    (enc / "config.json").write_text(json.dumps(hf), encoding="utf-8")
    msg = refusal(mutate(BASE, {**local, "pretrain.max_length": 129}), tmp_path)
    assert "128 positions" in msg
    # lengths the encoding code caps at the encoder's positions are not refused
    validate(mutate(BASE, {**local, "extract.max_length": 1000}), base_dir=tmp_path)
    hf.update(hidden_size=66)
    (enc / "config.json").write_text(json.dumps(hf), encoding="utf-8")
    assert "encoder.path" in refusal(mutate(BASE, local), tmp_path)
    (enc / "config.json").write_text("{not json", encoding="utf-8")
    assert "encoder.path" in refusal(mutate(BASE, local), tmp_path)


def test_files_that_exist_are_accepted(tmp_path: Path) -> None:
    (tmp_path / "lc.json").write_text("{}", encoding="utf-8")
    for ext in (".src", ".tgt", ".gold"):
        (tmp_path / f"gold{ext}").write_text("", encoding="utf-8")
    pairs = [f"en-{lang}" for lang in BASE["languages"] if lang != "en"]
    (tmp_path / "priors").mkdir()
    for pair in pairs:
        (tmp_path / "priors" / f"{pair}.priors").write_text("", encoding="utf-8")
    cfg = mutate(
        BASE,
        {
            "results.learning_curve": "lc.json",
            "analysis.gold.source": "gold",
            "wordalign.priors": "priors/{pair}.priors",
        },
    )
    validate(cfg, base_dir=tmp_path)
    (tmp_path / "priors" / f"{pairs[-1]}.priors").unlink()
    msg = refusal(cfg, tmp_path)
    assert "wordalign.priors" in msg and pairs[-1] in msg


# --- the files themselves: the strict reader ---------------------------------------------


def _file_cases(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    text = (ROOT / "config" / "config.yaml").read_bytes()
    cases = {
        "duplicate-top": (text + b"\nseeds: [2]\n", "'seeds' given twice"),
        "duplicate-nested": (
            text.replace(b"  steps: 40\n", b"  steps: 40\n  steps: 41\n", 1),
            "'steps' given twice",
        ),
        "invalid-utf8": (text + b"\n# caf\xe9\n", "invalid UTF-8"),
        "not-a-mapping": (b"- a\n- b\n", "expected a mapping"),
        "bad-yaml": (b"name: [\n", "invalid YAML"),
    }
    out = {}
    for name, (data, expected) in cases.items():
        p = tmp_path / f"{name}.yaml"
        p.write_bytes(data)
        out[name] = (p, expected)
    return out


def test_the_strict_reader_names_file_and_line(tmp_path: Path) -> None:
    cases = _file_cases(tmp_path)
    msgs = {}
    for name, (path, expected) in cases.items():
        with pytest.raises(ConfigError) as exc:
            load(path)
        msgs[name] = str(exc.value)
        assert msgs[name].startswith(str(path)) and expected in msgs[name], (name, msgs[name])
    dup = msgs["duplicate-top"]
    assert "first on line 11" in dup and "line " in dup.split("given twice")[0]
    utf = msgs["invalid-utf8"]
    n_lines = (ROOT / "config" / "config.yaml").read_bytes().count(b"\n")
    assert f"line {n_lines + 2}" in utf and "byte" in utf
    with pytest.raises(ConfigError, match="is a directory"):
        load(tmp_path)
    with pytest.raises(ConfigError, match="not found"):
        load(tmp_path / "none.yaml")
    # merge keys may override what they merge: not a repeated key
    merged = parse_config_text("a: &a {x: 1, y: 2}\nb:\n  <<: *a\n  x: 3\n", origin="m.yaml")
    assert merged["b"] == {"x": 3, "y": 2}


# --- the same refusals from the CLI and from Snakemake ------------------------------------

#: Sweep cases also run through `snakemake -n` (a few seconds each): a name, a layer, a
#: retrieval language and a file that used to get through, or fail with a traceback or a
#: MissingInputException.
THROUGH_SNAKEMAKE = ("name-dotdot", "extract-layer-deep", "bible-language", "learning-curve-file")
#: and through `xlalign check-config` (in-process)
THROUGH_CLI = (
    *THROUGH_SNAKEMAKE,
    "derived-pretrain-typo",
    "pos-gold-language",
    "zeroshot-seeds-dup",
)


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "HF_HUB_OFFLINE": "1"}
    return subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def _dry_run(configfile: Path, cwd: Path) -> subprocess.CompletedProcess:
    cmd = [str(BIN / "snakemake"), "-s", str(ROOT / "Snakefile"), "--directory", str(cwd)]
    return _run([*cmd, "-n", "all", "--configfile", str(configfile)], cwd)


def _check_config(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from xlalign.cli import main

    capsys.readouterr()
    code = main(["check-config", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_check_config_and_snakemake_refuse_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # the files a config names resolve here, as for snakemake
    for case in THROUGH_CLI:
        changes, key = BAD[case]
        path = tmp_path / f"{case}.yaml"
        path.write_text(yaml.safe_dump(mutate(BASE, changes)), encoding="utf-8")
        # the line naming the key (the CLI may join a schema error's lines into one)
        expected = refusal(mutate(BASE, changes), tmp_path).splitlines()[-1].strip()
        expected = expected.removeprefix("bad.yaml: ")
        code, _, err = _check_config([str(path)], capsys)
        assert code != 0 and key in err and expected in err, (case, err)
        assert "Traceback" not in err
        if case in THROUGH_SNAKEMAKE:
            dry = _dry_run(path, tmp_path)
            out = dry.stdout + dry.stderr
            assert dry.returncode != 0 and expected in out, (case, out[-3000:])
    # a repeated key, which Snakemake's own loader would keep silently
    dup = _file_cases(tmp_path)["duplicate-nested"][0]
    code, _, err = _check_config([str(dup)], capsys)
    assert code != 0 and "'steps' given twice" in err
    dry = _dry_run(dup, tmp_path)
    assert dry.returncode != 0 and "'steps' given twice" in dry.stdout + dry.stderr


def test_check_config_errors_on_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    utf = _file_cases(tmp_path)["invalid-utf8"][0]
    for target, expected in (
        (tmp_path, "is a directory"),
        (tmp_path / "no.yaml", "not found"),
        (utf, "invalid UTF-8"),
    ):
        code, _, err = _check_config([str(target)], capsys)
        assert code != 0 and expected in err and "Traceback" not in err, err
    # and as a command (the console script), no traceback either
    r = _run([str(BIN / "xlalign"), "check-config", str(tmp_path)], tmp_path)
    assert r.returncode != 0 and "is a directory" in r.stderr and "Traceback" not in r.stderr


def test_check_config_resolves_files_against_the_given_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "lc.json").write_text("{}", encoding="utf-8")
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(mutate(BASE, {"results.learning_curve": "lc.json"})), "utf-8")
    assert load(path, base_dir=work)["results"]["learning_curve"] == "lc.json"
    with pytest.raises(ConfigError, match=r"results\.learning_curve"):
        load(path, base_dir=tmp_path)
    with pytest.raises(ConfigError, match="not a directory"):
        load(path, base_dir=tmp_path / "none")
    code, out, err = _check_config([str(path), "-d", str(work)], capsys)
    assert code == 0 and "valid" in out, err
