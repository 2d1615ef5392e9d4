"""Every encoder stage on tiny random models of six Hugging Face architectures (BERT,
XLM-R, DistilBERT, DeBERTa-v2, ELECTRA, ModernBERT: :func:`tiny_encoder.make_arch_encoder`),
each with its own kind of fast tokenizer and special tokens: the layer conventions, the
truncated forward against the full one, word pooling without the special tokens and the
sentence means with them, then the teacher pass, X2Static, aggregation, continued
pre-training with every objective, fine-tuning of every task family, retrieval and the
word-alignment analyses, one step each."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from pretrain_world import EN, build_world, files_for
from tiny_encoder import ARCH_DIM, ARCH_LAYERS, ARCHITECTURES, make_arch_encoder, reference_vectors

from xlalign.corpus.vocab import build_vocab, tokens_of
from xlalign.encoders import contextual
from xlalign.encoders.contextual import (
    forward_record,
    load_truncated_encoder,
    running_layers,
    sentence_token_means,
    word_vectors,
)

SENTENCES = [
    ["The", "cat", "sat", "on", "a", "mat"],
    ["unbelievable", "dogs", "ran", "."],
    ["a", "big", "red", "sun"],
]
CORPUS = [
    "the cat sat on the mat .",
    "the dogs ran and the cats ran",
    "moon",
    "a big red sun , a small moon .",
    "unbelievable cats running on a red mat",
]


@pytest.fixture(scope="session")
def arch_encoders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("architectures")
    return {arch: make_arch_encoder(root / arch, arch) for arch in ARCHITECTURES}


@pytest.fixture(scope="session")
def arch_world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The continued pre-training tests' world (text, static spaces, dictionaries, bitext)."""
    return build_world(tmp_path_factory.mktemp("arch_world"))


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _load(path: Path) -> tuple[Any, Any]:
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    return tok, AutoModel.from_pretrained(path, local_files_only=True).eval()


def _batch(tok: Any) -> dict[str, torch.Tensor]:
    enc = tok(SENTENCES, is_split_into_words=True, padding=True, return_tensors="pt")
    return {k: enc[k] for k in ("input_ids", "attention_mask")}


def _first(x: Any) -> torch.Tensor:
    return x[0] if isinstance(x, tuple | list) else x


# --------------------------------------------------------------------------- conventions


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_special_tokens_are_the_architectures_own(arch: str, arch_encoders) -> None:
    tok, _ = _load(arch_encoders[arch])
    assert tok.is_fast
    enc = tok([["the", "cat"]], is_split_into_words=True)
    pieces = tok.convert_ids_to_tokens(enc["input_ids"][0])
    first, last = ("<s>", "</s>") if arch == "xlm-roberta" else ("[CLS]", "[SEP]")
    assert pieces[0] == first and pieces[-1] == last
    assert enc.word_ids(0) == [None, 0, 1, None]
    assert ("token_type_ids" in enc) == (arch in ("bert", "electra", "deberta-v2"))


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_layer_conventions_and_truncated_forward(arch: str, arch_encoders) -> None:
    """hidden_states[0] is what enters the first layer (the embeddings), hidden_states[l]
    what layer l gives (the last: after a final norm, where there is one), and the
    truncated forward gives exactly hidden_states[l] at every layer."""
    tok, model = _load(arch_encoders[arch])
    batch = _batch(tok)
    _, _, layers = contextual._find_layers(model, ARCH_LAYERS)
    seen: dict[str, Any] = {}

    def pre(mod: Any, args: tuple, kwargs: dict) -> None:
        seen.setdefault("input", args[0] if args else next(iter(kwargs.values())))

    hooks = [layers[0].register_forward_pre_hook(pre, with_kwargs=True)]
    for i, layer in enumerate(layers):
        hooks.append(layer.register_forward_hook(lambda m, a, out, i=i: seen.__setitem__(i, out)))
    with torch.inference_mode():
        out = model(**batch, output_hidden_states=True)
    for h in hooks:
        h.remove()
    states = out.hidden_states
    assert len(states) == ARCH_LAYERS + 1
    torch.testing.assert_close(states[0], seen["input"], rtol=0, atol=0)
    for layer in range(1, ARCH_LAYERS):
        torch.testing.assert_close(states[layer], _first(seen[layer - 1]), rtol=0, atol=0)
    torch.testing.assert_close(states[-1], out.last_hidden_state, rtol=0, atol=0)
    if arch == "modernbert":  # pre-norm: the last state is the final norm of the last layer's
        with torch.inference_mode():
            normed = model.final_norm(_first(seen[ARCH_LAYERS - 1]))
        torch.testing.assert_close(states[-1], normed)
        assert not torch.allclose(states[-1], _first(seen[ARCH_LAYERS - 1]))
    for layer in range(1, ARCH_LAYERS):
        with torch.inference_mode(), running_layers(model, layer) as shortened:
            short = model(**batch).last_hidden_state
        assert shortened, (arch, layer)
        torch.testing.assert_close(short, states[layer], rtol=1e-6, atol=1e-6)
    assert len(contextual._find_layers(model, ARCH_LAYERS)[2]) == ARCH_LAYERS  # restored
    with running_layers(model, ARCH_LAYERS) as shortened:
        assert not shortened
    for layer in range(1, ARCH_LAYERS + 1):
        _, short_model = load_truncated_encoder(arch_encoders[arch], layer, device="cpu")
        expected = "truncated" if layer < ARCH_LAYERS else "full (layer 3 is the last of 3)"
        assert forward_record(short_model) == expected
        with torch.inference_mode():
            short = short_model(**batch).last_hidden_state
        torch.testing.assert_close(short, states[layer], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_words_pool_without_and_sentences_average_with_special_tokens(
    arch: str, arch_encoders
) -> None:
    enc_dir = arch_encoders[arch]
    tok, model = load_truncated_encoder(enc_dir, 2, device="cpu")
    for pooling in ("mean", "first", "last"):
        got = list(word_vectors(SENTENCES, tok, model, pooling=pooling))
        for words, vec in zip(SENTENCES, got, strict=True):
            expected = reference_vectors(enc_dir, words, 2, pooling)
            np.testing.assert_allclose(vec, expected, rtol=1e-4, atol=1e-5)
    _, full = _load(enc_dir)
    means = list(sentence_token_means(SENTENCES, tok, model))
    for words, mean in zip(SENTENCES, means, strict=True):
        enc = tok([words], is_split_into_words=True, return_tensors="pt")
        with torch.inference_mode():
            states = full(
                input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                output_hidden_states=True,
            ).hidden_states[2][0]  # fmt: skip
        np.testing.assert_allclose(mean, states.mean(0).numpy(), rtol=1e-4, atol=1e-5)


def test_an_architecture_without_an_exact_truncation_runs_whole_and_says_so(
    arch_encoders, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    enc_dir = arch_encoders["bert"]
    monkeypatch.setattr(contextual, "_TRUNCATABLE", {})
    with caplog.at_level(logging.WARNING, logger="xlalign.encoders.contextual"):
        tok, model = load_truncated_encoder(enc_dir, 1, device="cpu")
    record = forward_record(model)
    assert (
        record.startswith("full ('bert' has no truncated forward") and "hidden_states[1]" in record
    )
    assert record in caplog.text
    _, full = _load(enc_dir)
    batch = _batch(tok)
    with torch.inference_mode():
        expected = full(**batch, output_hidden_states=True).hidden_states[1]
        torch.testing.assert_close(model(**batch).last_hidden_state, expected)
    monkeypatch.setattr(contextual, "_WARNED", set())
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="xlalign.encoders.contextual"):
        for _ in range(2):  # training steps: said once
            with running_layers(full, 1) as shortened:
                assert not shortened
    assert caplog.text.count(f"layer 1: {record}") == 1


# --------------------------------------------------------------------------- static stages


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_teacher_x2static_and_aggregation(arch: str, arch_encoders, tmp_path: Path) -> None:
    from xlalign.static.aggregation import aggregate_vectors, vectors_from_teacher
    from xlalign.static.teacher import TeacherCache, build_teacher_cache
    from xlalign.static.x2static import X2StaticArgs, train_x2static

    enc_dir = arch_encoders[arch]
    txt = tmp_path / "xx.txt"
    txt.write_text("".join(line + "\n" for line in CORPUS), encoding="utf-8")
    vocab = build_vocab(txt, min_count=1, max_size=None, language="xx")
    refs = [reference_vectors(enc_dir, tokens_of(line), 2) for line in CORPUS]
    out = build_teacher_cache(
        txt, vocab, enc_dir, tmp_path / "cache", layer=2, context="all-words", progress=False,
        language="xx", aggregation_seeds=[0], max_contexts=100, device="cpu",
    )  # fmt: skip
    cache = TeacherCache(out)
    assert cache.meta["forward"] == "truncated" and cache.dim == ARCH_DIM
    for i, line in enumerate(CORPUS):
        ids, ctx = cache.sentence(i)
        assert len(ids) == len(tokens_of(line))
        np.testing.assert_allclose(ctx[0], refs[i].mean(0), rtol=3e-3, atol=3e-3)
    res = train_x2static(
        cache, vocab, X2StaticArgs(epochs=1, seed=1, device="cpu"), output_dir=tmp_path / "x2s",
        progress=False,
    )  # fmt: skip
    assert res.vectors.shape == (len(vocab), ARCH_DIM) and np.isfinite(res.vectors).all()
    # aggregation: every occurrence's layer-2 word vector (special tokens left out), averaged
    stats: dict[str, Any] = {}
    agg = aggregate_vectors(
        txt, vocab, enc_dir, layer=2, max_contexts=100, seed=0, progress=False, language="xx",
        device="cpu", stats_out=stats,
    )  # fmt: skip
    assert stats["forward"] == "truncated"
    occ: dict[int, list[np.ndarray]] = {}
    for i, line in enumerate(CORPUS):
        for j, w in enumerate(tokens_of(line)):
            occ.setdefault(vocab.lookup(w), []).append(refs[i][j])
    expected = np.stack([np.mean(occ[w], axis=0) for w in range(len(vocab))])
    np.testing.assert_allclose(agg, expected, rtol=1e-4, atol=1e-5)
    record: dict[str, Any] = {}
    from_teacher = vectors_from_teacher(
        out, txt, vocab, enc_dir, layer=2, max_contexts=100, seed=0, device="cpu",
        stats_out=record,
    )  # fmt: skip
    assert from_teacher is not None and record["forward"] == "truncated"
    np.testing.assert_allclose(from_teacher, agg, rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------- pre-training

#: Every objective but linear_map (which freezes the encoder) in one recipe.
_ALL = {
    "mlm": {"batch_size": 2},
    "dict_mlm": {"batch_size": 2},
    "tlm": {"batch_size": 2},
    "mse": {"batch_size": 8, "static": "x2s-ma"},
    "gcca": {"batch_size": 12, "k": 3, "static": "x2s-ma"},
    "dcca": {"batch_size": 64, "k": 3, "static": "x2s-ma"},
    "align_mlm": {},
    "l2_align": {"batch_size": 2},
    "contrastive": {"batch_size": 2},
}


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_continued_pretraining_with_every_objective(
    arch: str, arch_encoders, arch_world: dict[str, Any], tmp_path: Path
) -> None:
    from xlalign.pretrain import recipes
    from xlalign.pretrain.run import run_pretrain

    cfg = {
        "pretrain": {
            "alignment_layer": 2,
            "recipes": {"all": _ALL, "maps": {"linear_map": {"batch_size": 2}}},
        }
    }
    params = {
        "steps": 1, "max_length": 32, "learning_rate": 1e-3, "eval_every": 1, "log_every": 1,
        "head_warmup_steps": 1, "head_warmup_learning_rate": 1e-3, "validation_batch_size": 4,
    }  # fmt: skip
    for row in ("all", "maps"):
        res = run_pretrain(
            row, encoder=arch_encoders[arch], objectives=recipes.row_objectives(cfg, row),
            files=files_for(arch_world), params=params, seed=1, output_dir=tmp_path / row,
            stats_path=tmp_path / f"{row}.json", work_dir=tmp_path / f"{row}.work",
            validation_paragraphs=2, device="cpu", progress=False, checkpoint_minutes=None,
        )  # fmt: skip
        losses = {k: v for h in res["learning_curve"] for k, v in h.items() if "loss" in k}
        names = [n for n in recipes.row_objectives(cfg, row) if n != "linear_map"]
        for name in names:
            assert any(k.startswith(name) for k in losses), (arch, name, sorted(losses))
        assert all(np.isfinite(v) for v in losses.values() if isinstance(v, float)), losses
        assert res["steps"] == 1
        # the objectives that read the alignment layer run layers 1..2 only, and say so
        layered = {"mse", "gcca", "dcca", "l2_align", "contrastive"} & set(names)
        assert layered <= set(res["forward"]), (arch, res["forward"])
        assert set(res["forward"].values()) <= {"truncated"}, (arch, res["forward"])
    assert res["head"]["model_type"] == arch and res["head"]["head"] == "initialised"


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_mlm_logits_are_the_models_own(arch: str, arch_encoders) -> None:
    """The head continued pre-training applies at the masked positions is the one the
    masked-LM model's own forward applies (DistilBERT's transform, activation and norm before
    its projector; ELECTRA's generator head; ModernBERT's head and decoder)."""
    from xlalign.pretrain.heads import head_parameters, load_masked_lm, mlm_logits

    model, info = load_masked_lm(arch_encoders[arch], seed=1)
    model.eval()
    tok, _ = _load(arch_encoders[arch])
    batch = _batch(tok)
    positions = batch["attention_mask"].bool()
    with torch.inference_mode():
        own = model(**batch).logits[positions]
        hidden = model.base_model(**batch).last_hidden_state
        ours = mlm_logits(model, hidden, positions)
    torch.testing.assert_close(ours, own, rtol=1e-5, atol=1e-5)
    heads = {id(p) for p in head_parameters(model)}
    body = {id(p) for p in model.base_model.parameters()}
    assert heads and not heads & body, info
    if arch == "deberta-v2":  # its non-legacy head takes the input embeddings as well
        from transformers import DebertaV2ForMaskedLM

        torch.manual_seed(0)
        config = model.config.__class__(**{**model.config.to_dict(), "legacy": False})
        other = DebertaV2ForMaskedLM(config).eval()
        assert hasattr(other, "lm_predictions")
        with torch.inference_mode():
            own = other(**batch).logits[positions]
            ours = mlm_logits(other, other.base_model(**batch).last_hidden_state, positions)
        torch.testing.assert_close(ours, own, rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------- fine-tuning


def _task_data() -> dict[str, tuple[Any, list]]:
    from xlalign.evaluation.tasks.classification import PairClassificationTask
    from xlalign.evaluation.tasks.data import (
        PairExample,
        ParsedSentence,
        QAExample,
        TaggedSentence,
    )
    from xlalign.evaluation.tasks.parsing import ParsingTask
    from xlalign.evaluation.tasks.qa import QATask
    from xlalign.evaluation.tasks.tagging import TaggingTask

    words = "the cat sat on the mat".split()
    tags = ["DET", "NOUN", "VERB", "ADP", "DET", "NOUN"]
    ctx = "the cat sat on the mat and the dog ran"
    return {
        "tagging": (TaggingTask("pos"), [TaggedSentence(f"t{i}", words, tags) for i in range(4)]),
        "classification": (
            PairClassificationTask(),
            [
                PairExample(f"c{i}", EN[i], EN[i + 1], ["entailment", "neutral"][i % 2])
                for i in range(4)
            ],
        ),
        "qa": (
            QATask(),
            [
                QAExample(
                    f"q{i}", ctx, "where did the cat sit", [{"text": "mat", "answer_start": 19}]
                )
                for i in range(4)
            ],
        ),
        "parsing": (
            ParsingTask(arc_dim=16, label_dim=8),
            [
                ParsedSentence(
                    f"p{i}",
                    words,
                    tags,
                    [2, 3, 0, 6, 6, 3],
                    ["det", "nsubj", "root", "case", "det", "obl"],
                )
                for i in range(4)
            ],
        ),
        "tagging-feature-based": (
            TaggingTask("pos"),
            [TaggedSentence(f"f{i}", words, tags) for i in range(4)],
        ),
    }


@pytest.mark.parametrize("family", ["tagging", "classification", "qa", "parsing",
                                    "tagging-feature-based"])  # fmt: skip
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_finetuning_each_task_family(arch: str, family: str, arch_encoders, tmp_path: Path) -> None:
    from xlalign.evaluation.tasks.base import TaskParams
    from xlalign.evaluation.tasks.finetune import finetune

    task, recs = _task_data()[family]
    extra = {"feature_based": {"transformer_layers": 1}} if "feature" in family else {}
    params = TaskParams(
        learning_rate=1e-3, epochs=1, batch_size=4, max_length=24, doc_stride=6,
        max_query_length=8, selection="final", extra=extra,
    )  # fmt: skip
    res = finetune(
        task, encoder=arch_encoders[arch], train=recs, dev=recs[:2], tests={"xx": recs[:2]},
        params=params, seed=1, output_dir=tmp_path / "out", work_dir=tmp_path / "work",
        keep_model=False, progress=False, device="cpu", checkpoint_minutes=None,
    )  # fmt: skip
    assert res["steps"] == 1 and res["scores"]["xx"] and res["scores"]["en/dev"]
    lines = (tmp_path / "out" / res["predictions"]["xx"]).read_text().splitlines()
    assert len(lines) == 2


# --------------------------------------------------------------------------- retrieval


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_retrieval_pools_by_the_conventions(arch: str, arch_encoders) -> None:
    from xlalign.evaluation.tasks.data import RetrievalPair
    from xlalign.evaluation.tasks.retrieval import evaluate_retrieval, pooled_hidden_states

    tok, model = _load(arch_encoders[arch])
    texts = [" ".join(s) for s in SENTENCES]
    for include_special in (True, False):
        for pooling in ("mean", "cls"):
            got = pooled_hidden_states(
                (model, tok), texts, pooling=pooling, include_special=include_special,
                device="cpu",
            )  # fmt: skip
            assert got.shape == (ARCH_LAYERS + 1, len(texts), ARCH_DIM)
            for i, text in enumerate(texts):
                enc = tok([text], return_tensors="pt", return_special_tokens_mask=True)
                with torch.inference_mode():
                    states = model(
                        input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                        output_hidden_states=True,
                    ).hidden_states  # fmt: skip
                keep = torch.ones_like(enc["input_ids"][0], dtype=torch.bool)
                if not include_special:
                    keep = enc["special_tokens_mask"][0] == 0
                    assert int(keep.sum()) == len(enc["input_ids"][0]) - 2
                for layer in range(ARCH_LAYERS + 1):
                    h = states[layer][0]
                    want = h[0] if pooling == "cls" else h[keep].mean(0)
                    np.testing.assert_allclose(got[layer, i], want.numpy(), rtol=1e-4, atol=1e-5)
    pairs = [RetrievalPair(f"r{i}", t, t) for i, t in enumerate(texts)]
    res = evaluate_retrieval(pairs, model, tok, layer=2, device="cpu")
    assert res["forward"].startswith("full (") and len(res["sweep"]["en->xx"]) == 4
    assert res["accuracy"]["en->xx"] == 100.0  # identical sentences find each other


# --------------------------------------------------------------------------- analyses


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_word_alignment_analyses(arch: str, arch_encoders) -> None:
    from xlalign.analysis.alignment_score import contextual_alignment_score, layer_states
    from xlalign.analysis.repr_align import aer_by_layer

    enc_dir = arch_encoders[arch]
    states = layer_states(enc_dir, None, SENTENCES, batch_size=2)
    for words, st in zip(SENTENCES, states, strict=True):
        assert st.shape == (ARCH_LAYERS + 1, len(words), ARCH_DIM)
        for layer in range(ARCH_LAYERS + 1):
            np.testing.assert_allclose(
                st[layer], reference_vectors(enc_dir, words, layer), rtol=1e-4, atol=1e-5
            )
    # the same sentences on both sides: the diagonal is the alignment at every layer
    gold = {i: ({(j, j) for j in range(len(w))}, set()) for i, w in enumerate(SENTENCES)}
    aer = aer_by_layer(states, states, gold)
    assert all(len(v) == ARCH_LAYERS + 1 for v in aer.values())
    assert all(r.aer == 0.0 for v in aer.values() for r in v)
    at2 = [st[2] for st in states]
    links = [sorted(gold[i][0]) for i in range(len(SENTENCES))]
    assert contextual_alignment_score(at2, at2, links) == 100.0


# --------------------------------------------------------------------------- parse time


def _validate_local(path: Path, tmp_path: Path) -> None:
    from xlalign.config import validate

    cfg = {
        "name": "t", "languages": ["en", "de"], "seeds": [1],
        "encoder": {"source": "local", "path": str(path)}, "extract": {"layer": 2},
        "pretrain": {"alignment_layer": 2, "max_length": 64},
        "zeroshot": {"retrieval": {"layer": 2}},
    }  # fmt: skip
    validate(cfg, origin="my.yaml", base_dir=tmp_path)


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_each_architecture_passes_validation(arch: str, arch_encoders, tmp_path: Path) -> None:
    _validate_local(arch_encoders[arch], tmp_path)


def _checkpoint(path: Path, config: Any, tokenizer_from: Path | None) -> Path:
    """A checkpoint directory of ``config`` (no weights: validation reads config.json only),
    with the tokenizer files of ``tokenizer_from``."""
    path.mkdir(parents=True)
    config.to_json_file(path / "config.json")
    if tokenizer_from is not None:
        for f in tokenizer_from.glob("tokenizer*"):
            (path / f.name).write_bytes(f.read_bytes())
    return path


def test_models_the_stages_cannot_run_are_refused_at_parse_time(
    arch_encoders, tmp_path: Path
) -> None:
    import json

    from transformers import GPT2Config, MPNetConfig, T5Config

    from xlalign.core.errors import ConfigError

    tok = arch_encoders["xlm-roberta"]
    gpt2 = GPT2Config(n_layer=2, n_embd=16, n_head=2)
    gpt2.architectures = ["GPT2LMHeadModel"]
    t5_encoder = T5Config(num_layers=2, d_model=16, num_heads=2)
    t5_encoder.architectures = ["T5EncoderModel"]
    mpnet = MPNetConfig(num_hidden_layers=3, hidden_size=32, num_attention_heads=2)
    cases = {
        "gpt2": (gpt2, "a decoder-only (causal) model"),
        "t5": (t5_encoder, "an encoder-decoder model: transformers loads it whole"),
        "mpnet": (mpnet, "an architecture the stages are not tested on"),
    }
    for name, (config, why) in cases.items():
        path = _checkpoint(tmp_path / name, config, tok)
        with pytest.raises(ConfigError) as exc:
            _validate_local(path, tmp_path)
        msg = str(exc.value)
        assert f"{path}/config.json is a {config.model_type!r} model" in msg, msg
        assert why in msg and "supported encoder model types: bert, camembert" in msg, msg
    # a supported architecture without a fast tokenizer's files
    bare = tmp_path / "no-tokenizer"
    bare.mkdir()
    (bare / "config.json").write_bytes((arch_encoders["bert"] / "config.json").read_bytes())
    with pytest.raises(ConfigError, match=r"no-tokenizer holds no fast tokenizer \(tokenizer.json"):
        _validate_local(bare, tmp_path)
    # a config.json without a model type
    (bare / "config.json").write_text(json.dumps({"hidden_size": 32}), encoding="utf-8")
    with pytest.raises(ConfigError, match="names no model_type"):
        _validate_local(bare, tmp_path)


def test_hub_names_of_models_that_are_not_encoders_are_refused(tmp_path: Path) -> None:
    from xlalign.config import validate
    from xlalign.core.errors import ConfigError

    base = {"name": "t", "languages": ["en", "de"], "seeds": [1]}
    cases = [
        ("openai-community/gpt2", "decoder-only"),
        ("google/mt5-base", "encoder-decoder"),
        ("facebook/mbart-large-50", "encoder-decoder"),
    ]
    for name, why in cases:
        enc = {"source": "huggingface", "name": name, "revision": "main"}
        with pytest.raises(ConfigError, match=f"encoder.name: '{name}' is an? {why}"):
            validate({**base, "encoder": enc}, origin="my.yaml", base_dir=tmp_path)
