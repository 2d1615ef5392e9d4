"""Continual learning in the fine-tuning loop (003 section 3, eq. 2: L = L_task + alpha *
L_align), with fake objectives on a tiny dropout-free BERT: the weighted alignment loss is
added (checked against the plain run's loss and a by-hand alignment loss), the objective's
own parameters get their gradient and train, the saved model holds the task model alone,
each micro-step draws its own alignment batch from (seed, step, micro-step), a killed run
resumes to the uninterrupted result, runs are deterministic, bad specs fail early, and the
resume fingerprint tells continual from plain runs."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from test_finetune import TRAIN, Kill, toy_sentences
from tiny_encoder import make_tiny_encoder

from xlalign.core.errors import ConfigError
from xlalign.evaluation.tasks.base import TaskParams
from xlalign.evaluation.tasks.continual import (
    BATCH_KEY,
    Continual,
    WithObjective,
    alignment_rng,
    continual_from_spec,
)
from xlalign.evaluation.tasks.finetune import CHECKPOINTS, finetune, fingerprint, last_checkpoint
from xlalign.evaluation.tasks.run import finetune_argv
from xlalign.evaluation.tasks.tagging import TaggingTask
from xlalign.pretrain.base import Objective, encoder_of

# 64 sentences / 16 = 4 steps per epoch, 3 epochs = 12 steps; dev (and checkpoints) at 4, 8, 12
TRAIN_S = TRAIN[:64]
DEV_S = toy_sentences(16, 2, "dv")
TEST_S = toy_sentences(12, 3, "te")
PARAMS = TaskParams(learning_rate=5e-3, epochs=3, batch_size=16, max_length=16, eval_every=4)
STEPS = 12
PAIRS = [("the dog", "a dog"), ("the cat", "this cat"), ("runs quickly", "runs slowly"),
         ("the bird eats", "a bird eats"), ("fly", "the fly"), ("and", "and the")]  # fmt: skip


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny encoder of test_finetune without dropout: every loss is a function of the
    weights and the batch alone, so it can be recomputed by hand."""
    words = [w for r in TRAIN for w in r.tokens]
    path = make_tiny_encoder(tmp_path_factory.mktemp("tiny") / "enc", words)
    config = json.loads((path / "config.json").read_text())
    config.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    (path / "config.json").write_text(json.dumps(config))
    return path


class CLSPull(Objective, torch.nn.Module):
    """A fake alignment objective: the mean over a batch of pairs of token sequences of
    ||P (h_a - h_b)||^2, h the [CLS] state of the last layer; P a trainable square matrix
    (``projection=True``) or the identity. ``drawn`` records the pair indices of each
    sample() call."""

    name = "cls_pull"

    def __init__(self, encoder_dir: Path, *, projection: bool, seed: int = 0) -> None:
        torch.nn.Module.__init__(self)
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(encoder_dir))
        self.a = tok([a for a, _ in PAIRS], padding="max_length", max_length=8,
                     return_tensors="pt")  # fmt: skip
        self.b = tok([b for _, b in PAIRS], padding="max_length", max_length=8,
                     return_tensors="pt")  # fmt: skip
        dim = json.loads((encoder_dir / "config.json").read_text())["hidden_size"]
        g = torch.Generator().manual_seed(seed)
        self.proj = (
            torch.nn.Parameter(torch.eye(dim) + 0.1 * torch.randn(dim, dim, generator=g))
            if projection
            else None
        )
        self.drawn: list[list[int]] = []

    def sample(self, rng: np.random.Generator, batch_size: int) -> dict[str, Any]:
        idx = rng.integers(0, len(PAIRS), size=batch_size)
        self.drawn.append(idx.tolist())
        t = torch.as_tensor(idx)
        return {
            "a": {k: v[t] for k, v in self.a.items()},
            "b": {k: v[t] for k, v in self.b.items()},
        }

    def cls(self, model: Any, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        return encoder_of(model)(**inputs).last_hidden_state[:, 0]

    def loss(self, model: Any, batch: Any) -> tuple[torch.Tensor, dict[str, float]]:
        diff = self.cls(model, batch["a"]) - self.cls(model, batch["b"])
        if self.proj is not None:
            diff = diff @ self.proj.T
        loss = diff.pow(2).sum(-1).mean()
        return loss, {"cls_pull/norm": float(diff.detach().norm())}

    def state(self) -> dict[str, Any]:
        return {"pairs": len(PAIRS)}


def run(
    encoder: Path,
    root: Path,
    continual: Continual | None,
    *,
    params: TaskParams = PARAMS,
    seed: int = 1,
    **kw: Any,
) -> dict[str, Any]:
    return finetune(
        TaggingTask("pos"),
        encoder=encoder,
        train=TRAIN_S,
        dev=DEV_S,
        tests={"xx": TEST_S},
        params=params,
        seed=seed,
        output_dir=root / "out",
        work_dir=root / "work",
        log_every=1,
        progress=False,
        continual=continual,
        **{"checkpoint_minutes": 0, **kw},  # checkpoints at every evaluation (resume tests)
    )


def cl(encoder: Path, *, projection: bool = True, alpha: float = 0.5, **kw: Any) -> Continual:
    obj = CLSPull(encoder, projection=projection)
    return Continual(objective=obj, name="pull", alpha=alpha, batch_size=4, **kw)


@pytest.fixture(scope="module")
def plain(encoder: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run(encoder, tmp_path_factory.mktemp("plain"), None, keep_model=False)


@pytest.fixture(scope="module")
def reference(encoder: Path, tmp_path_factory: pytest.TempPathFactory):
    """An uninterrupted continual run: its results, its root and its (trained) objective."""
    root = tmp_path_factory.mktemp("continual")
    c = cl(encoder)
    return run(encoder, root, c), root, c


def curve(results: dict[str, Any], key: str) -> list[float]:
    return [p[key] for p in results["learning_curve"]["train"]]


# --------------------------------------------------------------------------- the loss


def test_the_weighted_alignment_loss_is_added_to_the_task_loss(
    encoder: Path, plain, reference
) -> None:
    results, _, _ = reference
    loss, task, align = (curve(results, k) for k in ("loss", "task_loss", "align_loss"))
    assert len(loss) == STEPS
    # eq. 2 at every step (one micro-batch per step: the logged loss is that step's)
    for total, t, a in zip(loss, task, align, strict=True):
        assert total == pytest.approx(t + 0.5 * a, rel=1e-5)
    # step 1 starts from the same weights as the plain run: same task loss ...
    assert task[0] == pytest.approx(curve(plain, "loss")[0], rel=1e-6)
    # ... and the alignment loss of the batch alignment_rng(seed, 0, 0) draws, by hand
    # (the encoder's weights before the first update; the projection's initial value)
    from transformers import AutoModel

    fresh = CLSPull(encoder, projection=True)
    idx = alignment_rng(1, 0, 0).integers(0, len(PAIRS), size=4)
    model = AutoModel.from_pretrained(str(encoder)).eval()
    with torch.no_grad():
        ha = model(**{k: v[idx] for k, v in fresh.a.items()}).last_hidden_state[:, 0].numpy()
        hb = model(**{k: v[idx] for k, v in fresh.b.items()}).last_hidden_state[:, 0].numpy()
    p = fresh.proj.detach().numpy()
    by_hand = np.mean([np.sum((p @ (x - y)) ** 2) for x, y in zip(ha, hb, strict=True)])
    assert align[0] == pytest.approx(float(by_hand), rel=1e-4)
    assert task[1] != pytest.approx(curve(plain, "loss")[1], rel=1e-6)  # it changed training
    # what the results and MLflow's curves record
    assert results["curves"]["train_task_loss"] == task
    assert results["curves"]["train_align_loss"] == align
    assert results["curves"]["train_loss"] == loss
    assert results["continual"] == {
        "name": "pull", "alpha": 0.5, "batch_size": 4, "objective_name": "cls_pull",
        "objective": {"pairs": 6}, "align_loss_first": align[0], "align_loss_last": align[-1],
    }  # fmt: skip
    assert all("cls_pull/norm" in p for p in results["learning_curve"]["train"])
    assert "continual" not in plain and "task_loss" not in plain["learning_curve"]["train"][0]


def test_gradients_reach_the_objective_and_the_encoder(encoder: Path) -> None:
    """d(task + alpha * align)/dP = alpha * d(align)/dP, and the encoder gets both."""
    from transformers import AutoModelForTokenClassification

    torch.manual_seed(0)
    model = AutoModelForTokenClassification.from_pretrained(str(encoder), num_labels=3)
    c = cl(encoder, alpha=0.25)
    both = WithObjective(model, c)
    obj = c.objective
    inputs = {"input_ids": obj.a["input_ids"][:2], "attention_mask": obj.a["attention_mask"][:2],
              "labels": torch.tensor([[0, 1, 2, -100, -100, -100, -100, -100]] * 2)}  # fmt: skip
    batch = obj.sample(np.random.default_rng(0), 3)
    out = both(**inputs, **{BATCH_KEY: batch})
    out.loss.backward()
    task_loss, align, _ = both.last
    assert out.loss.item() == pytest.approx(float(task_loss) + 0.25 * float(align), rel=1e-6)
    align_again, _ = obj.loss(model, batch)
    (g_proj,) = torch.autograd.grad(align_again, [obj.proj])
    torch.testing.assert_close(obj.proj.grad, 0.25 * g_proj)
    assert float(obj.proj.grad.abs().sum()) > 0
    # and without a batch the module is the task model (evaluation, prediction)
    both.zero_grad()
    plain_out = both(**inputs)
    assert plain_out.loss.item() == pytest.approx(float(task_loss), rel=1e-6)


def test_objective_holding_model_tensors_is_refused(encoder: Path) -> None:
    from transformers import AutoModelForTokenClassification

    model = AutoModelForTokenClassification.from_pretrained(str(encoder), num_labels=3)
    c = cl(encoder, projection=False)
    c.objective.emb = model.get_input_embeddings()  # a submodule of the model itself
    held = r"zeroshot\.continual\.pull: .*task model \(emb\.weight\)"
    with pytest.raises(ConfigError, match=held):
        WithObjective(model, c)


def test_the_objective_trains_and_the_saved_model_is_the_task_model(
    encoder: Path, reference
) -> None:
    _, root, c = reference
    start = CLSPull(encoder, projection=True).proj.detach()
    assert not torch.allclose(c.objective.proj.detach(), start)  # optimised with the model
    from safetensors.torch import load_file
    from transformers import AutoModelForTokenClassification

    saved = load_file(root / "out" / "model" / "model.safetensors")
    assert not any("objective" in k or "proj" in k for k in saved)
    model, info = AutoModelForTokenClassification.from_pretrained(
        str(root / "out" / "model"), output_loading_info=True
    )
    assert not any(info.values()), info  # no missing or unexpected keys
    assert set(saved) == set(model.state_dict())
    assert (root / "out" / "model" / "tokenizer.json").is_file()


# --------------------------------------------------------------------------- batches


def test_each_micro_step_draws_the_batch_of_its_step_and_index(encoder: Path, tmp_path) -> None:
    """Gradient accumulation 2: micro-step k of step s draws alignment_rng(seed, s, k)."""
    params = dataclasses.replace(PARAMS, epochs=1, gradient_accumulation=2, selection="final")
    c = cl(encoder)
    res = run(encoder, tmp_path, c, params=params, seed=5, keep_model=False)
    assert res["steps"] == 4
    expected = [
        alignment_rng(5, s, k).integers(0, len(PAIRS), size=4).tolist()
        for s in range(4)
        for k in range(2)
    ]
    assert c.objective.drawn == expected
    # with accumulation the step's loss is the mean of its micro-steps' losses
    for total, t, a in zip(*(curve(res, k) for k in ("loss", "task_loss", "align_loss")),
                           strict=True):  # fmt: skip
        assert total == pytest.approx(t + 0.5 * a, rel=1e-5)


def test_accumulation_does_not_scale_the_loss(encoder: Path, plain, tmp_path) -> None:
    """Two micro-batches of 8 make the step of one batch of 16: the logged loss of the
    first step is a mean over the same examples, not twice it."""
    params = dataclasses.replace(PARAMS, epochs=1, gradient_accumulation=2, selection="final")
    res = run(encoder, tmp_path, None, params=params, keep_model=False)
    assert curve(res, "loss")[0] == pytest.approx(curve(plain, "loss")[0], rel=0.1)


# --------------------------------------------------------------------------- resume


def test_same_seed_same_result(encoder: Path, reference, tmp_path: Path) -> None:
    results, _, c = reference
    again_cl = cl(encoder)
    again = run(encoder, tmp_path, again_cl, keep_model=False)
    for key in ("loss", "task_loss", "align_loss"):
        assert curve(again, key) == curve(results, key)
    assert again["scores"] == results["scores"]
    torch.testing.assert_close(again_cl.objective.proj, c.objective.proj, rtol=0, atol=0)


def test_a_killed_run_resumes_to_the_same_result(encoder: Path, reference, tmp_path: Path) -> None:
    results, root, c = reference
    with pytest.raises(KeyboardInterrupt):
        run(encoder, tmp_path, cl(encoder), callbacks=[Kill(6)])
    ckpt = last_checkpoint(tmp_path / "work" / CHECKPOINTS)
    assert ckpt.name == "checkpoint-4"
    from safetensors.torch import load_file

    assert "objective.proj" in load_file(ckpt / "model.safetensors")  # checkpointed
    resumed_cl = cl(encoder)  # a fresh objective, as a rerun of the job builds it
    resumed = run(encoder, tmp_path, resumed_cl)
    assert resumed["resumed_from_step"] == 4
    for key in ("loss", "task_loss", "align_loss"):
        assert curve(resumed, key) == curve(results, key)
    assert resumed["scores"] == results["scores"]
    assert resumed["selection"] == results["selection"]
    torch.testing.assert_close(resumed_cl.objective.proj, c.objective.proj, rtol=0, atol=0)
    from safetensors.torch import load_file

    a = load_file(tmp_path / "out" / "model" / "model.safetensors")
    b = load_file(root / "out" / "model" / "model.safetensors")
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=0)


def test_a_plain_checkpoint_is_never_resumed_as_continual(
    encoder: Path, plain, tmp_path: Path
) -> None:
    with pytest.raises(KeyboardInterrupt):
        run(encoder, tmp_path, None, keep_model=False, callbacks=[Kill(6)])
    res = run(encoder, tmp_path, cl(encoder, projection=False), keep_model=False)
    assert res["resumed_from_step"] is None
    assert len(curve(res, "align_loss")) == STEPS


def test_fingerprint_holds_the_continual_spec(encoder: Path) -> None:
    common = dict(encoder=encoder, train=TRAIN_S, dev=DEV_S, params=PARAMS, seed=1,
                  labels=["A"], world_size=1, precision="fp32")  # fmt: skip
    task = TaggingTask("pos")
    plain = fingerprint(task, **common)
    assert fingerprint(task, **common, continual=None) == plain
    base = fingerprint(task, **common, continual=cl(encoder))
    assert base != plain
    assert fingerprint(task, **common, continual=cl(encoder)) == base
    assert fingerprint(task, **common, continual=cl(encoder, alpha=0.25)) != base
    other = Continual(objective=CLSPull(encoder, projection=True), name="pull", alpha=0.5,
                      batch_size=8)  # fmt: skip
    assert fingerprint(task, **common, continual=other) != base
    init = Continual(objective=CLSPull(encoder, projection=True, seed=1), name="pull",
                     alpha=0.5, batch_size=4)  # fmt: skip
    assert fingerprint(task, **common, continual=init) != base  # other initial parameters


# --------------------------------------------------------------------------- config


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("alpha", 0.0, r"zeroshot\.continual\.pull\.alpha must be a finite number > 0, got 0"),
        ("alpha", -1e-2, r"zeroshot\.continual\.pull\.alpha"),
        ("alpha", math.nan, r"zeroshot\.continual\.pull\.alpha"),
        ("alpha", "0.1", r"zeroshot\.continual\.pull\.alpha must be a number"),
        ("batch_size", 0, r"zeroshot\.continual\.pull\.batch_size must be >= 1, got 0"),
        ("batch_size", 2.0, r"zeroshot\.continual\.pull\.batch_size must be an integer"),
    ],
)
def test_bad_weights_are_config_errors(encoder: Path, field: str, value: Any, match: str) -> None:
    kw = {"alpha": 0.5, "batch_size": 4, field: value}
    with pytest.raises(ConfigError, match=match):
        Continual(objective=CLSPull(encoder, projection=False), name="pull", **kw)


def test_defaults_are_003s(encoder: Path) -> None:
    c = Continual(objective=CLSPull(encoder, projection=False), name="pull")
    assert (c.alpha, c.batch_size) == (1e-2, 16)


def test_spec_builds_the_objective_through_the_builder(encoder: Path) -> None:
    calls: list[dict[str, Any]] = []

    def builder(name: str, settings: Any, **kw: Any) -> Objective:
        calls.append({"name": name, "settings": settings, **kw})
        return CLSPull(encoder, projection=bool(settings["projection"]))

    spec = {"name": "x2s-mse", "objective": "mse", "settings": {"projection": True},
            "alpha": 0.1, "batch_size": 2, "files": {"static": {"de": "/s/de"}},
            "hub": "en"}  # fmt: skip
    c = continual_from_spec(spec, encoder=encoder, seed=3, builder=builder)
    assert (c.name, c.alpha, c.batch_size) == ("x2s-mse", 0.1, 2)
    assert isinstance(c.objective, CLSPull) and c.objective.proj is not None
    (call,) = calls
    assert call["name"] == "mse" and call["seed"] == 3 and call["hub"] == "en"
    assert call["files"] == {"static": {"de": "/s/de"}}
    assert call["model"].config.hidden_size == 32 and call["tokenizer"] is not None
    with pytest.raises(ConfigError, match=r"zeroshot\.continual\.x2s-mse\.alpha"):
        continual_from_spec({**spec, "alpha": 0}, encoder=encoder, seed=3, builder=builder)
    with pytest.raises(ConfigError, match=r"zeroshot\.continual\.x2s-mse: unknown keys \['lr'\]"):
        continual_from_spec({**spec, "lr": 1}, encoder=encoder, seed=3, builder=builder)
    with pytest.raises(ConfigError, match=r"zeroshot\.continual\.x2s-mse\.objective"):
        continual_from_spec({**spec, "objective": ""}, encoder=encoder, seed=3, builder=builder)
    assert len(calls) == 1  # the bad specs failed before building anything


def test_torchrun_workers_get_the_spec() -> None:
    spec = {"name": "pull", "objective": "mse", "alpha": 0.1, "batch_size": 2,
            "settings": {"layer": 8}, "files": {"static": {"de": Path("/s/de")}}}  # fmt: skip
    argv = finetune_argv(
        "udpos", encoder="enc", train="t.jsonl", dev=None, tests={}, seed=1,
        output_dir="o", stats_path="o.json", work_dir="w", continual=spec,
    )  # fmt: skip
    i = argv.index("--continual")
    assert json.loads(argv[i + 1]) == {**spec, "files": {"static": {"de": "/s/de"}}}
    assert "--continual" not in finetune_argv(
        "udpos", encoder="enc", train="t.jsonl", dev=None, tests={}, seed=1,
        output_dir="o", stats_path="o.json", work_dir="w",
    )  # fmt: skip
