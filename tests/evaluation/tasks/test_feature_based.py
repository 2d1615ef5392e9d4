"""002's feature-based task model on a tiny random BERT: the encoder stays frozen (its
weights unchanged by a step, no graph through it, no dropout), the head trains; features
are mapped with the language's linear maps (``features @ W``) and left alone for the hub;
the CRF's Viterbi path comes out of ``TaggingTask.decode``; a short ``finetune`` run with
the option trains, evaluates each language with its maps and writes predictions and a
reloadable model; bad options fail before training."""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path
from typing import Any

import pytest
import torch
from safetensors.torch import load_file
from tiny_encoder import make_tiny_encoder
from transformers import AutoModel, AutoTokenizer

from xlalign.core.errors import ConfigError, InputError
from xlalign.evaluation.tasks.base import TaskParams
from xlalign.evaluation.tasks.classification import PairClassificationTask
from xlalign.evaluation.tasks.data import PairExample, TaggedSentence
from xlalign.evaluation.tasks.feature_based import (
    FeatureBasedModel,
    FeatureSpec,
    build_feature_model,
)
from xlalign.evaluation.tasks.finetune import finetune
from xlalign.evaluation.tasks.tagging import TaggingTask
from xlalign.pretrain.linear_maps import LinearMaps

NAMES = {"PER": ["anna", "bob", "carla"], "LOC": ["paris", "rome", "oslo"]}
FILLER = ["the", "met", "in", "saw", "visited", "and", "today"]
LABELS = ["B-LOC", "B-PER", "I-LOC", "I-PER", "O"]
HIDDEN, LAYERS = 32, 2  # make_tiny_encoder's width and depth


def toy_ner(n: int, seed: int, prefix: str) -> list[TaggedSentence]:
    """Filler words around one- and two-word names ("new york" style: a name twice)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words: list[tuple[str, str]] = []
        for _ in range(rng.randint(2, 4)):
            if rng.random() < 0.5:
                words.append((rng.choice(FILLER), "O"))
            else:
                kind = rng.choice(sorted(NAMES))
                words.append((rng.choice(NAMES[kind]), f"B-{kind}"))
                if rng.random() < 0.3:
                    words.append((rng.choice(NAMES[kind]), f"I-{kind}"))
        out.append(TaggedSentence(f"{prefix}{i}", [w for w, _ in words], [t for _, t in words]))
    return out


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    words = [w for ws in NAMES.values() for w in ws] + FILLER
    return make_tiny_encoder(tmp_path_factory.mktemp("tiny") / "enc", words, layers=LAYERS)


def write_maps(directory: Path, maps: dict[str, dict[int, torch.Tensor]], hub: str = "en"):
    """Maps saved as the pretrain stage saves them."""
    layers = sorted({layer for ws in maps.values() for layer in ws})
    out = LinearMaps(sorted(maps), layers, HIDDEN, hub=hub)
    with torch.no_grad():
        for lang, ws in maps.items():
            for layer in layers:  # a layer not given keeps its identity
                if layer in ws:
                    out.weight(lang, layer).copy_(ws[layer])
    out.save(directory)
    return directory


def batch_of(encoder: Path, records: list[TaggedSentence], task: TaggingTask, params=None):
    tok = AutoTokenizer.from_pretrained(str(encoder))
    params = params or TaskParams(max_length=32)
    enc = task.encode(records, tok, LABELS, params, split="dev")
    return enc, task.collate(tok)(enc.features)


def spec(**kw: Any) -> FeatureSpec:
    out = FeatureSpec.from_extra(kw, head="tagging", scheme="ner")
    assert out is not None
    return out


# --------------------------------------------------------------------------- options


def test_spec_defaults_follow_002_and_bad_options_fail(tmp_path: Path) -> None:
    ner = FeatureSpec.from_extra(True, head="tagging", scheme="ner")
    pos = FeatureSpec.from_extra({}, head="tagging", scheme="pos")
    pair = FeatureSpec.from_extra(True, head="classification")
    assert ner is not None and pos is not None and pair is not None
    assert (ner.layers, ner.mix, ner.transformer_layers, ner.crf) == ("all", "scalar", 4, True)
    assert not pos.crf and not pair.crf and ner.mapping is None and ner.hub == "en"
    assert ner.layer_indices(12) == list(range(13))  # the embedding output and 12 layers
    assert FeatureSpec.from_extra(None, head="tagging") is None
    assert FeatureSpec.from_extra(False, head="tagging") is None
    bad = [
        ({"layer": [1]}, "unknown keys"),
        ({"layers": [1, 1]}, "repeats"),
        ({"layers": "last"}, "layers"),
        ({"mix": "max"}, "mix"),
        ({"transformer_layers": -1}, "transformer_layers"),
        ({"crf": "yes"}, "crf"),
        ({"bio_constraints": True, "crf": False}, "bio_constraints"),
    ]
    for value, match in bad:
        with pytest.raises(ConfigError, match=match):
            FeatureSpec.from_extra(value, head="tagging", scheme="ner")
    with pytest.raises(ConfigError, match="crf"):
        FeatureSpec.from_extra({"crf": True}, head="classification")
    with pytest.raises(InputError, match="linear_maps"):
        FeatureSpec.from_extra({"mapping": str(tmp_path)}, head="tagging")
    with pytest.raises(ConfigError, match=r"outside 0\.\.12"):
        spec(layers=[3, 13]).layer_indices(12)


# --------------------------------------------------------------------------- frozen encoder


def test_a_step_trains_the_head_and_leaves_the_encoder_alone(encoder: Path) -> None:
    torch.manual_seed(0)
    model = build_feature_model(encoder, LABELS, spec(), head="tagging")
    task = TaggingTask("ner")
    _, batch = batch_of(encoder, toy_ner(8, 0, "s"), task)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and not any(n.startswith("encoder.") for n in trainable)
    model.train()
    assert model.transformer is not None and model.transformer.training
    assert not model.encoder.training  # no dropout inside the frozen encoder
    feats = model.features(batch["input_ids"], batch["attention_mask"])
    assert not feats.requires_grad  # computed under no_grad: no activations kept
    out = model(**batch)
    out.loss.backward()
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    opt.step()
    after = model.state_dict()
    for key, value in before.items():
        same = torch.equal(value, after[key])
        if key.startswith("encoder."):
            assert same, key
    for prefix in ("mix.weights", "mix.gamma", "classifier.weight", "crf.transitions"):
        assert not torch.equal(before[prefix], after[prefix]), prefix
    moved = [
        k for k in before if k.startswith("transformer.") and not torch.equal(before[k], after[k])
    ]
    assert len(moved) > 10  # every extra layer's weights


def test_mix_is_the_softmax_weighted_sum_times_gamma(encoder: Path) -> None:
    model = build_feature_model(encoder, LABELS, spec(layers=[0, 2]), head="tagging")
    with torch.no_grad():
        model.mix.weights.copy_(torch.tensor([0.0, 1.0]))
        model.mix.gamma.fill_(2.0)
    states = torch.randn(2, 1, 3, HIDDEN)
    w = torch.softmax(torch.tensor([0.0, 1.0]), 0)
    torch.testing.assert_close(model.mix(states), 2.0 * (w[0] * states[0] + w[1] * states[1]))


# --------------------------------------------------------------------------- maps


def test_features_are_mapped_for_the_language_and_not_for_the_hub(
    encoder: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    gen = torch.Generator().manual_seed(1)
    w_de = {
        0: torch.randn(HIDDEN, HIDDEN, generator=gen),
        2: torch.randn(HIDDEN, HIDDEN, generator=gen),
    }
    maps = write_maps(tmp_path / "maps", {"de": w_de})  # layers 0 and 2 only
    model = build_feature_model(encoder, LABELS, spec(mapping=str(maps)), head="tagging")
    model.eval()
    _, batch = batch_of(encoder, toy_ner(3, 1, "s"), TaggingTask("ner"))
    ids, mask = batch["input_ids"], batch["attention_mask"]
    raw = AutoModel.from_pretrained(str(encoder))(
        input_ids=ids, attention_mask=mask, output_hidden_states=True
    ).hidden_states
    assert len(raw) == LAYERS + 1
    plain = model.features(ids, mask)  # the hub: English at start
    for i in range(LAYERS + 1):
        torch.testing.assert_close(plain[i], raw[i])
    model.set_language("de")
    de = model.features(ids, mask)
    torch.testing.assert_close(de[0], raw[0] @ w_de[0])
    torch.testing.assert_close(de[1], raw[1])  # no map of layer 1 for de
    torch.testing.assert_close(de[2], raw[2] @ w_de[2])
    model.set_language("en")
    torch.testing.assert_close(model.features(ids, mask), plain)
    with caplog.at_level(logging.WARNING):
        model.set_language("sw")  # no maps: unmapped, and said so
    torch.testing.assert_close(model.features(ids, mask), plain)
    assert "no linear maps for 'sw'" in caplog.text
    # maps are inputs, not weights: the state dict holds none
    assert not any(k.startswith("map_") for k in model.state_dict())


def test_maps_of_another_hub_or_width_are_refused(encoder: Path, tmp_path: Path) -> None:
    eye = {0: torch.eye(HIDDEN)}
    other_hub = write_maps(tmp_path / "a", {"de": eye}, hub="fr")
    with pytest.raises(InputError, match="hub"):
        build_feature_model(encoder, LABELS, spec(mapping=str(other_hub)), head="tagging")
    wide = LinearMaps(["de"], [0], 8)
    wide.save(tmp_path / "b")
    with pytest.raises(InputError, match="dimension 8"):
        build_feature_model(encoder, LABELS, spec(mapping=str(tmp_path / "b")), head="tagging")


# --------------------------------------------------------------------------- CRF decoding


def test_crf_path_comes_out_of_tagging_decode(encoder: Path) -> None:
    torch.manual_seed(2)
    task = TaggingTask("ner")
    records = toy_ner(6, 3, "s")
    enc, batch = batch_of(encoder, records, task)
    model = build_feature_model(encoder, LABELS, spec(), head="tagging").eval()
    assert model.crf is not None
    with torch.no_grad():  # transitions strong enough to overrule the emissions
        model.crf.transitions.copy_(
            4.0 * torch.randn(5, 5, generator=torch.Generator().manual_seed(3))
        )
        out = model(**batch)
        emissions = model.classifier(model.hidden(batch["input_ids"], batch["attention_mask"]))
    chain = batch["labels"] != -100
    paths = model.crf.viterbi(emissions, chain)
    preds = task.decode((out.logits.numpy(),), enc, records, LABELS, TaskParams(max_length=32))
    assert [[LABELS[t] for t in p] for p in paths] == [p["prediction"] for p in preds]
    greedy = [
        [LABELS[int(t)] for t in emissions[b, chain[b]].argmax(-1)] for b in range(len(records))
    ]
    assert greedy != [p["prediction"] for p in preds]  # the CRF changed something
    # training mode returns the emissions (no decoding) and the same loss
    model.train()
    model.dropout.p = 0.0
    for layer in model.transformer.layers:
        layer.dropout.p = layer.dropout1.p = layer.dropout2.p = 0.0
        layer.self_attn.dropout = 0.0
    assert torch.allclose(model(**batch).loss, out.loss, atol=1e-5)


def test_pair_classification_reads_the_first_position(encoder: Path) -> None:
    task = PairClassificationTask()
    tok = AutoTokenizer.from_pretrained(str(encoder))
    recs = [PairExample("p0", "anna met bob", "bob met anna", "yes"),
            PairExample("p1", "the rome", "paris today", "no")]  # fmt: skip
    params = TaskParams(max_length=32, extra={"feature_based": {"transformer_layers": 1}})
    enc = task.encode(recs, tok, ["no", "yes"], params, split="train")
    model = task.build_model(encoder, ["no", "yes"])
    assert isinstance(model, FeatureBasedModel) and model.crf is None
    batch = task.collate(tok)(enc.features)
    model.eval()
    out = model(**batch)
    assert out.logits.shape == (2, 2)
    x = model.hidden(batch["input_ids"], batch["attention_mask"], batch.get("token_type_ids"))
    torch.testing.assert_close(out.logits, model.classifier(x[:, 0]))
    torch.testing.assert_close(
        out.loss, torch.nn.functional.cross_entropy(out.logits, batch["labels"])
    )


# --------------------------------------------------------------------------- finetune


def test_finetune_with_the_option_trains_maps_languages_and_saves(
    encoder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gen = torch.Generator().manual_seed(4)
    q, _ = torch.linalg.qr(torch.randn(HIDDEN, HIDDEN, generator=gen))
    maps = write_maps(tmp_path / "maps", {"de": {k: q for k in range(LAYERS + 1)}})
    calls: list[str] = []
    original = FeatureBasedModel.set_language

    def spy(self: FeatureBasedModel, lang: str) -> None:
        calls.append(lang)
        original(self, lang)

    monkeypatch.setattr(FeatureBasedModel, "set_language", spy)
    extra = {"feature_based": {"mapping": str(maps), "transformer_layers": 2, "dropout": 0.1}}
    params = TaskParams(
        learning_rate=1e-2, epochs=6, batch_size=16, max_length=32, eval_every=10, extra=extra
    )
    res = finetune(
        TaggingTask("ner"),
        encoder=encoder,
        train=toy_ner(120, 5, "tr"),
        dev=toy_ner(30, 6, "dv"),
        tests={"de": toy_ner(20, 7, "de"), "xx": toy_ner(20, 8, "xx")},
        params=params,
        seed=1,
        output_dir=tmp_path / "out",
        work_dir=tmp_path / "work",
        log_every=5,
        progress=False,
    )
    losses = res["curves"]["train_loss"]
    assert losses[-1] < 0.4 * losses[0]  # measured: 4.8 -> 1.0
    assert res["scores"]["en/dev"]["f1"] > 50.0
    assert calls[-3:] == ["en", "de", "xx"]  # each split under its own language
    for name in ("de.jsonl", "xx.jsonl", "en.dev.jsonl"):
        lines = (tmp_path / "out" / "predictions" / name).read_text().splitlines()
        assert lines and all("prediction" in json.loads(x) for x in lines)
    # the kept model: a state dict that rebuilds the trained model (frozen encoder as given)
    state = load_file(str(tmp_path / "out" / "model" / "model.safetensors"))
    raw = AutoModel.from_pretrained(str(encoder)).state_dict()
    for key, value in raw.items():
        if f"encoder.{key}" in state:
            torch.testing.assert_close(state[f"encoder.{key}"], value)
    spec_ = FeatureSpec.from_extra(extra["feature_based"], head="tagging", scheme="ner")
    assert spec_ is not None
    again = build_feature_model(encoder, LABELS, spec_, head="tagging")
    missing, unexpected = again.load_state_dict(state, strict=False)
    assert not unexpected and all(k.startswith("encoder.pooler") for k in missing)
    assert res["model"] == "model"
