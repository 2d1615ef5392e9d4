"""The training loop end to end on a tiny BERT: every objective's own loss goes down, the
output is a normal checkpoint, a run killed with SIGKILL resumes to the very weights of an
uninterrupted run, and bad input fails before the first step."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pretrain_world import files_for, read_history

from xlalign.core.errors import ConfigError, InputError
from xlalign.pretrain import recipes
from xlalign.pretrain.run import run_pretrain

SETTINGS = {
    "steps": 24,
    "max_length": 32,
    "learning_rate": 2e-3,
    "eval_every": 8,
    "log_every": 4,
    "head_warmup_steps": 4,
    "head_warmup_learning_rate": 1e-2,
    "validation_batch_size": 4,
}
#: Small batches for the tiny world (the alignment batches must still exceed GCCA's k).
OBJECTIVES = {
    "mlm": {"batch_size": 4},
    "dict_mlm": {"batch_size": 4},
    "tlm": {"batch_size": 4},
    "mse": {"batch_size": 16},
    "gcca": {"batch_size": 24, "k": 3},
    "dcca": {"batch_size": 64, "k": 3},
    "l2_align": {"batch_size": 4},
    "contrastive": {"batch_size": 4},
    "linear_map": {"batch_size": 4},
}


def objectives_for(row: str, **extra: Any) -> dict[str, dict[str, Any]]:
    cfg = {"pretrain": {"objectives": {**OBJECTIVES, **extra}, "alignment_layer": None}}
    if row == "dcca":
        cfg["pretrain"]["recipes"] = {"dcca": {"mlm": {}, "dcca": {"static": "x2s-ma"}}}
    return recipes.row_objectives(cfg, row)


def train_row(
    world: dict[str, Any],
    tmp: Path,
    row: str,
    *,
    static: str = "static32",
    settings: dict[str, Any] | None = None,
    **kw: Any,
) -> dict[str, Any]:
    """``row`` trained on the tiny world into ``tmp/<row>``; resume checkpoints at every
    evaluation unless ``checkpoint_minutes`` says otherwise (the kill-and-resume tests)."""
    out = tmp / row
    kw.setdefault("checkpoint_minutes", 0)
    return run_pretrain(
        row,
        encoder=world["encoder"],
        objectives=kw.pop("objectives", None) or objectives_for(row),
        files=files_for(world, static),
        params={**SETTINGS, **(settings or {})},
        seed=3,
        output_dir=out,
        stats_path=tmp / f"{row}.json",
        work_dir=tmp / f"{row}.work",
        validation_paragraphs=4,
        device="cpu",
        progress=False,
        **kw,
    )


def _mean(history: list[dict[str, Any]], key: str, part: slice) -> float:
    values = [h[key] for h in history if key in h]
    return float(np.mean(values[part]))


@pytest.mark.parametrize(
    ("row", "key", "static"),
    [
        ("mlm", "mlm_loss", "static32"),
        ("x2s-ma-mse", "mse_loss", "static32"),
        ("x2s-ma-dcca", "gcca_loss", "static7"),
        ("dcca", "dcca_loss", "static7"),
        ("align-mlm", "align_mlm_loss", "static32"),
        ("dict-mlm", "dict_mlm_loss", "static32"),
        ("tlm", "tlm_loss", "static32"),
        ("l2-align", "l2_align/l2", "static32"),
        ("contrastive-weak", "contrastive/nce", "static32"),
        ("contrastive-strong", "contrastive/nce", "static32"),
        ("linear-map", "linear_map_loss", "static32"),
    ],
)
def test_each_objective_own_loss_goes_down(
    pt_world: dict[str, Any], tmp_path: Path, row: str, key: str, static: str
) -> None:
    # the correlation losses are bounded ([-k*sqrt(2), -k]) and their gradient is small
    # next to MLM's on a tiny random encoder: a larger learning rate and more steps
    faster = {"learning_rate": 1e-2, "steps": 40} if key in ("gcca_loss", "dcca_loss") else {}
    res = train_row(pt_world, tmp_path, row, static=static, settings=faster)
    history = [h for h in res["learning_curve"] if key in h]
    assert len(history) == res["steps"] // SETTINGS["log_every"]
    first, last = _mean(history, key, slice(0, 3)), _mean(history, key, slice(-3, None))
    assert last < first, (row, key, [h[key] for h in history])
    assert all(np.isfinite(h[key]) for h in history)


def test_output_is_a_checkpoint_with_metadata(pt_world: dict[str, Any], tmp_path: Path) -> None:
    from transformers import AutoModel, AutoModelForTokenClassification

    res = train_row(pt_world, tmp_path, "x2s-ma-dcca", static="static7")
    out = Path(res["checkpoint"])
    meta = json.loads((out / "xlalign-pretrain.json").read_text())
    assert meta["head"]["head"] == "initialised" and meta["head"]["warmup_steps"] == 4
    assert meta["head"]["warmup_loss_last"] < meta["head"]["warmup_loss_first"]
    assert meta["selection"]["mode"] == "validation_mlm_loss"
    assert meta["selection"]["step"] in (8, 16, 24)
    # the evaluation stage loads it as a task model and as an encoder
    AutoModelForTokenClassification.from_pretrained(out, num_labels=3)
    AutoModel.from_pretrained(out)
    # the correlations are logged and mirrored as curves
    assert any(k.startswith("gcca_corr_") for k in res["curves"])
    assert "valid_mlm_loss" in res["curves"] and "train_gcca_loss" in res["curves"]
    assert not (tmp_path / "x2s-ma-dcca.work").exists()


def test_selected_checkpoint_has_the_lowest_validation_loss(
    pt_world: dict[str, Any], tmp_path: Path
) -> None:
    res = train_row(pt_world, tmp_path, "mlm")
    valid = [
        (h["step"], h["valid_mlm_loss"]) for h in res["learning_curve"] if "valid_mlm_loss" in h
    ]
    assert [s for s, _ in valid] == [0, 8, 16, 24]
    best = min(valid[1:], key=lambda x: x[1])
    assert res["selection"]["step"] == best[0]
    assert res["selection"]["valid_mlm_loss"] == pytest.approx(best[1])


def test_align_mlm_dictionary_is_saved_and_reused(pt_world: dict[str, Any], tmp_path: Path) -> None:
    res = train_row(pt_world, tmp_path, "align-mlm", settings={"steps": 4, "eval_every": 4})
    saved = json.loads((Path(res["checkpoint"]) / "token_dictionary.json").read_text())
    assert saved  # the sampled dictionary travels with the checkpoint


_KILL = textwrap.dedent(
    """
    import json, os, signal, sys
    sys.path[:0] = {paths!r}
    from test_pretrain_trainer import train_row
    from pathlib import Path
    world = json.loads(Path({world!r}).read_text())
    def kill(step):
        if step == {kill_at}:
            os.kill(os.getpid(), signal.SIGKILL)
    train_row(world, Path({tmp!r}), {row!r}, static="static7", on_step=kill)
    """
)


# (x2s-ma-dcca: test_pretrain_interrupt.py kills it from outside, SIGKILL and SIGTERM)
@pytest.mark.parametrize("row", ["contrastive-strong"])
def test_resume_after_sigkill_equals_an_uninterrupted_run(
    pt_world: dict[str, Any], tmp_path: Path, row: str
) -> None:
    from safetensors.torch import load_file

    world = {k: (str(v) if isinstance(v, Path) else v) for k, v in pt_world.items()}
    wfile = tmp_path / "world.json"
    wfile.write_text(json.dumps(world))
    killed = tmp_path / "killed"
    killed.mkdir()
    script = _KILL.format(
        paths=[
            str(Path(__file__).parent),
            str(Path(__file__).parents[1]),
            str(Path(__file__).parents[2] / "src"),
        ],
        world=str(wfile),
        kill_at=12,
        tmp=str(killed),
        row=row,
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == -9, proc.stderr[-2000:]
    assert (killed / f"{row}.work" / "checkpoint.pt").is_file()  # step 8's
    assert not (killed / row).exists()  # nothing that looks finished
    resumed = train_row(pt_world, killed, row, static="static7")
    assert resumed["resumed_from_step"] == 8
    straight_dir = tmp_path / "straight"
    straight_dir.mkdir()
    straight = train_row(pt_world, straight_dir, row, static="static7")
    a = load_file(killed / row / "model.safetensors")
    b = load_file(straight_dir / row / "model.safetensors")
    assert a.keys() == b.keys()
    for k in a:
        assert (a[k] == b[k]).all(), k
    assert resumed["selection"] == straight["selection"]
    assert read_history(killed / f"{row}.json") == read_history(straight_dir / f"{row}.json")


# --------------------------------------------------------------------------- bad input


def test_mse_with_mismatched_dimensions_fails_before_training(
    pt_world: dict[str, Any], tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match=r"pretrain\.objectives\.mse.*(7|32)"):
        train_row(pt_world, tmp_path, "x2s-ma-mse", static="static7")
    assert not (tmp_path / "x2s-ma-mse").exists()


def test_correlation_batch_too_small_for_k(pt_world: dict[str, Any], tmp_path: Path) -> None:
    objectives = objectives_for("x2s-ma-dcca", gcca={"batch_size": 8, "k": 3})
    with pytest.raises(ConfigError, match=r"gcca\.batch_size"):
        train_row(pt_world, tmp_path, "x2s-ma-dcca", static="static7", objectives=objectives)


def test_dcca_batch_not_larger_than_the_views(pt_world: dict[str, Any], tmp_path: Path) -> None:
    objectives = objectives_for("dcca", dcca={"batch_size": 48, "k": 3})
    with pytest.raises(ConfigError, match=r"dcca\.batch_size.*64"):
        train_row(pt_world, tmp_path, "dcca", static="static7", objectives=objectives)


def test_empty_parallel_file(pt_world: dict[str, Any], tmp_path: Path) -> None:
    empty = tmp_path / "empty.tsv"
    empty.write_text("id\tsource\ttarget\n")
    world = {**pt_world, "parallel": {"en-de": str(empty)}}
    with pytest.raises(InputError, match=r"empty\.tsv"):
        train_row(world, tmp_path, "tlm")


def test_dictionary_without_pairs_in_vocabulary(pt_world: dict[str, Any], tmp_path: Path) -> None:
    dic = tmp_path / "oov.txt"
    dic.write_text("zzzqx qqqzx\nxxyyq yyxxq\n")
    world = {**pt_world, "dictionaries": {"de": str(dic)}}
    with pytest.raises(InputError, match=r"oov\.txt"):
        train_row(world, tmp_path, "align-mlm")


def test_static_vocabulary_missing_most_words(pt_world: dict[str, Any], tmp_path: Path) -> None:
    from xlalign.static.vectors import write_npy

    stem = tmp_path / "bad" / "de"
    words = [f"qz{i}qz{i}zq" * 3 for i in range(20)]  # never a single known piece
    write_npy(words, np.ones((20, 32), np.float32), stem)
    world = {**pt_world, "static32": {"en": pt_world["static32"]["en"], "de": str(stem)}}
    with pytest.raises(InputError, match="de"):
        train_row(world, tmp_path, "x2s-ma-mse")


def test_checkpoint_of_another_architecture(pt_world: dict[str, Any], tmp_path: Path) -> None:
    from transformers import GPT2Config, GPT2Model

    gpt = tmp_path / "gpt2"
    GPT2Model(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=50)).save_pretrained(gpt)
    for f in Path(pt_world["encoder"]).glob("*token*"):
        (gpt / f.name).write_bytes(f.read_bytes())
    (gpt / "vocab.txt").write_bytes((Path(pt_world["encoder"]) / "vocab.txt").read_bytes())
    world = {**pt_world, "encoder": gpt}
    with pytest.raises(ConfigError, match="gpt2"):
        train_row(world, tmp_path, "mlm")


def test_alignment_below_the_last_layer_runs_a_shorter_stack(pt_world: dict[str, Any]) -> None:
    """The mse loss at layer 1 of the 2-layer BERT, on words of different lengths (encoded
    in length-sorted chunks, layer 2 not run): equal to the loss computed from
    ``hidden_states[1]`` of one full forward over the padded batch, model left whole."""
    import torch
    from transformers import AutoTokenizer

    from xlalign.pretrain.heads import load_masked_lm
    from xlalign.pretrain.objectives import build_objective
    from xlalign.pretrain.pairs import StaticBatch, mean_pool

    model, _ = load_masked_lm(pt_world["encoder"], seed=1)
    tok = AutoTokenizer.from_pretrained(pt_world["encoder"])
    obj = build_objective(
        "mse",
        {"batch_size": 8, "static": "x2s-ma", "layer": 1},
        model=model,
        tokenizer=tok,
        files=files_for(pt_world),
        seed=1,
        max_length=32,
    )
    sampled = obj.sample(np.random.default_rng(0), 8)
    rng = np.random.default_rng(1)
    lengths = [3, 7, 4, 9, 3, 5, 8, 4]  # [CLS] + subwords + [SEP]
    ids = torch.full((8, max(lengths)), tok.pad_token_id)
    for b, n in enumerate(lengths):
        inner = rng.integers(5, tok.vocab_size, size=n - 2).tolist()
        ids[b, :n] = torch.tensor([tok.cls_token_id, *inner, tok.sep_token_id])
    mask = (torch.arange(ids.shape[1])[None] < torch.tensor(lengths)[:, None]).long()
    word = mask.clone().float()
    word[:, 0] = 0
    word[torch.arange(8), torch.tensor(lengths) - 1] = 0
    batch = StaticBatch(ids, mask, word, sampled.vectors, sampled.languages, sampled.words)
    loss, _ = obj.loss(model, batch)
    base = model.base_model
    assert len(base.encoder.layer) == 2
    states = base(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states[1]
    expected = torch.mean((mean_pool(states, word) - sampled.vectors) ** 2)
    torch.testing.assert_close(loss.float(), expected.float(), rtol=1e-5, atol=1e-6)
