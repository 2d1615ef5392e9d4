"""VecMap self-learning killed part-way (SIGTERM, then SIGKILL) resumes to the same mapping."""

from __future__ import annotations

import json
import logging
import signal
from pathlib import Path

import numpy as np
import pytest
import resume

from xlalign.core import interrupt
from xlalign.mapping import hub, vecmap
from xlalign.mapping.vecmap import map_embeddings, recipe_args

OPTIONS = {
    "seed": 7,
    "max_iterations": 30,
    "unsupervised_vocab": 300,
    "vocabulary_cutoff": 300,
    "stochastic_interval": 3,
}


@pytest.fixture(autouse=True)
def _no_request() -> None:
    interrupt.reset()


def _spaces(n: int = 400, d: int = 16) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    rng = np.random.default_rng(3)
    spectrum = 1.0 / np.sqrt(1.0 + np.arange(d))
    x = rng.standard_normal((n, d)) * spectrum
    rotation, _ = np.linalg.qr(rng.standard_normal((d, d)))
    z = x @ rotation + 0.05 * rng.standard_normal((n, d))
    perm = rng.permutation(n)
    return (
        x.astype(np.float32),
        z[perm].astype(np.float32),
        [f"s{i}" for i in range(n)],
        [f"t{i}" for i in range(n)],
    )


_CHILD = """
import numpy as np
from xlalign.core.io import atomic_open
from xlalign.mapping import vecmap
resume.pause_after(vecmap, "_save_checkpoint", flag=ARGS["flag"], nth=int(ARGS["nth"]))
with np.load(ARGS["spaces"]) as sp:
    x, z = sp["x"], sp["z"]
args = vecmap.recipe_args("unsupervised", **json.loads(ARGS["options"]))
m = vecmap.map_embeddings(x, z, args, src_words=[f"s{i}" for i in range(len(x))],
                          trg_words=[f"t{i}" for i in range(len(z))], progress=False,
                          checkpoint_dir=ARGS["ckpt"], checkpoint_seconds=0)
with atomic_open(ARGS["out"], "wb") as fh:
    np.save(fh, m.src_transform)
"""


def _state(ckpt: Path) -> dict:
    with np.load(ckpt, allow_pickle=False) as z:
        return json.loads(str(z["state"]))


def test_self_learning_resumes_after_sigterm_and_sigkill(tmp_path: Path) -> None:
    x, z, sw, tw = _spaces()
    np.savez(tmp_path / "spaces.npz", x=x, z=z)
    ckpt_dir, out = tmp_path / "map.checkpoint", tmp_path / "map.npy"
    ckpt = ckpt_dir / vecmap.CHECKPOINT_FILE
    args = {
        "spaces": str(tmp_path / "spaces.npz"),
        "ckpt": str(ckpt_dir),
        "out": str(out),
        "options": json.dumps(OPTIONS),
    }
    # SIGTERM while the 3rd checkpoint is written: the checkpoint of the iteration's end is
    # written (again) and the job exits 143.
    stopped = resume.run_and_stop(_CHILD, {**args, "nth": "3"}, tmp_path, signal.SIGTERM)
    assert stopped.returncode == resume.SIGTERM_STATUS, stopped.log
    assert f"stopped by SIGTERM (vecmap, checkpoint {ckpt})" in stopped.log
    assert _state(ckpt)["it"] == 4  # three iterations done
    resume.assert_nothing_finished([out], [ckpt_dir])

    stopped = resume.run_and_stop(_CHILD, {**args, "nth": "2"}, tmp_path, signal.SIGKILL)
    assert stopped.returncode == -signal.SIGKILL
    assert "resuming self-learning at iteration 4" in stopped.log
    assert _state(ckpt)["it"] == 6
    resume.assert_nothing_finished([out], [ckpt_dir])

    a = recipe_args("unsupervised", **OPTIONS)
    kw = {"src_words": sw, "trg_words": tw, "progress": False}
    resumed = map_embeddings(x, z, a, checkpoint_dir=ckpt_dir, **kw)
    assert resumed.stats["resumed_from_iteration"] == 6
    assert not ckpt_dir.exists()
    straight = map_embeddings(x, z, a, **kw)
    assert straight.stats["iterations"] > 8
    np.testing.assert_array_equal(resumed.src_transform, straight.src_transform)
    np.testing.assert_array_equal(resumed.src_indices, straight.src_indices)
    np.testing.assert_array_equal(resumed.trg_indices, straight.trg_indices)
    assert resumed.stats["objective"] == straight.stats["objective"]
    assert resumed.stats["keep_prob"] == straight.stats["keep_prob"]
    same = {k: v for k, v in resumed.stats.items() if "seconds" not in k}
    same.pop("resumed_from_iteration")
    assert json.loads(json.dumps(same)) == json.loads(
        json.dumps({k: v for k, v in straight.stats.items() if "seconds" not in k})
    )


def test_checkpoint_of_another_seed_or_dictionary_is_ignored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    x, z, sw, tw = _spaces()
    kw = {"src_words": sw, "trg_words": tw, "progress": False}
    opts = {**OPTIONS, "max_iterations": 4}
    dictionary = [(f"s{i}", f"t{i}") for i in range(40)]
    # an interrupted run of seed 7 leaves its checkpoint ...
    with pytest.raises(interrupt.Preempted):
        interrupt._state["requested"] = signal.SIGTERM
        map_embeddings(x, z, recipe_args("unsupervised", **opts), checkpoint_dir=tmp_path, **kw)
    interrupt.reset()
    assert (tmp_path / vecmap.CHECKPOINT_FILE).exists()
    # ... which a run of seed 8 does not resume
    other = recipe_args("unsupervised", **{**opts, "seed": 8})
    with caplog.at_level(logging.WARNING, logger="xlalign.mapping.vecmap"):
        got = map_embeddings(x, z, other, checkpoint_dir=tmp_path, **kw)
    assert "checkpoint is for other spaces, options or dictionary" in caplog.text
    assert "resumed_from_iteration" not in got.stats
    assert got.stats["objective"] == map_embeddings(x, z, other, **kw).stats["objective"]
    # a semi-supervised run fingerprints its seed dictionary
    semi = recipe_args("semi-supervised", **opts)
    with pytest.raises(interrupt.Preempted):
        interrupt._state["requested"] = signal.SIGTERM
        map_embeddings(x, z, semi, dictionary=dictionary, checkpoint_dir=tmp_path, **kw)
    interrupt.reset()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="xlalign.mapping.vecmap"):
        got = map_embeddings(x, z, semi, dictionary=dictionary[:30], checkpoint_dir=tmp_path, **kw)
    assert "checkpoint is for other" in caplog.text and "resumed_from_iteration" not in got.stats


def test_map_to_hub_passes_its_checkpoint_dir(tmp_path: Path, monkeypatch) -> None:
    seen: dict[str, object] = {}

    def fake(*args, **kwargs):
        seen.update(kwargs)
        raise RuntimeError("stop here")

    monkeypatch.setattr(vecmap, "map_embeddings", fake)
    monkeypatch.setattr(vecmap, "degenerate_dictionary", lambda *a, **k: None)
    space = (["a", "b"], np.eye(2, dtype=np.float32))
    monkeypatch.setattr(hub, "load_space", lambda *a, **k: (space, {}))
    with pytest.raises(RuntimeError, match="stop here"):
        hub.map_to_hub(
            language="de",
            hub="en",
            space="de.npy",
            hub_space="en.npy",
            dictionary=None,
            recipe="unsupervised",
            options=None,
            seed=0,
            out_stem=tmp_path / "out",
            stats_path=tmp_path / "out.json",
            checkpoint_dir=tmp_path / "ckpt",
        )
    assert seen["checkpoint_dir"] == tmp_path / "ckpt"
