"""One retrieval job per encoder over all its sets (run_retrieval_sets): the encoder loaded
once, a side shared by several pair sets encoded once, and every set's results and
predictions byte for byte those of its own job (run_retrieval); killed after a set, the
re-run encodes nothing again for it and writes the uninterrupted outputs."""

from __future__ import annotations

import logging
import signal
from pathlib import Path

import numpy as np
import pytest
import resume
from tiny_encoder import make_tiny_encoder

from xlalign.core.errors import ConfigError, InputError
from xlalign.core.io import read_json
from xlalign.evaluation.tasks import retrieval
from xlalign.evaluation.tasks.data import RetrievalPair, write_records
from xlalign.evaluation.tasks.retrieval import PoolingStats, SharedSides
from xlalign.evaluation.tasks.run import RetrievalSet, run_retrieval, run_retrieval_sets

WORDS = "the a cat dog sun moon red big small sat ran on mat house tree bird sea sky".split()
#: set -> languages; udhr's languages share their English side, as UDHR's articles do
SETS = {"udhr": ("de", "ru", "ja"), "bible": ("de", "tl")}
BATCH = 2


def _sentences(seed: int, n: int = 10) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(3, 9)))) for _ in range(n)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("sets_world")
    enc = make_tiny_encoder(root / "enc", WORDS, layers=2)
    files: dict[str, dict[str, str]] = {}
    for k, (name, langs) in enumerate(SETS.items()):
        english = _sentences(100 + k)
        files[name] = {}
        for j, lang in enumerate(langs):
            # bible: each language has its own English verses
            en = english if name == "udhr" else _sentences(200 + j)
            pairs = [
                RetrievalPair(f"{name}-{lang}-{i}", s, t)
                for i, (s, t) in enumerate(zip(_sentences(10 * k + j), en, strict=True))
            ]
            path = root / name / lang / "test.jsonl"
            path.parent.mkdir(parents=True)
            write_records(path, pairs)
            files[name][lang] = str(path)
    return {"encoder": str(enc), "files": files}


def _specs(world: dict, root: Path) -> list[RetrievalSet]:
    return [
        RetrievalSet(name, world["files"][name], root / f"{name}.json", root / name)
        for name in SETS
    ]


def merged(world: dict, root: Path) -> dict:
    """The job of the workflow: every set, one encoder load, progress under one folder."""
    return run_retrieval_sets(
        _specs(world, root),
        encoder=world["encoder"],
        encoder_name="tiny",
        layer=2,
        batch_size=BATCH,
        device="cpu",
        work_dir=root / "retrieval.work",
        stats_path=root / "retrieval.json",
    )


def _outputs(root: Path) -> list[str]:
    return [f"{name}.json" for name in SETS] + [
        f"{name}/{lang}.json" for name, langs in SETS.items() for lang in langs
    ]


@pytest.fixture(scope="module")
def separate(world: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Today's jobs: one per set, each loading the encoder."""
    root = tmp_path_factory.mktemp("separate")
    for name in SETS:
        run_retrieval(
            name,
            encoder=world["encoder"],
            encoder_name="tiny",
            sets=world["files"][name],
            stats_path=root / f"{name}.json",
            predictions_dir=root / name,
            layer=2,
            batch_size=BATCH,
            device="cpu",
        )
    return root


def test_one_job_writes_each_set_as_its_own_job(
    world: dict, separate: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from transformers import AutoModel

    loads: list[str] = []
    real = AutoModel.from_pretrained

    def counting(*args, **kwargs):
        loads.append(str(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(AutoModel, "from_pretrained", counting)
    encoded: list[int] = []
    pooled = retrieval.pooled_hidden_states

    def counted(encoder, sentences, **kw):
        encoded.append(len(sentences))
        return pooled(encoder, sentences, **kw)

    monkeypatch.setattr(retrieval, "pooled_hidden_states", counted)
    res = merged(world, tmp_path)
    assert len(loads) == 1
    # udhr's English side once for its three languages: 5 pair sets, 2 x 5 - 2 sides
    assert len(encoded) == 2 * 5 - 2
    for name in _outputs(tmp_path):
        assert (tmp_path / name).read_bytes() == (separate / name).read_bytes(), name
    summary = read_json(tmp_path / "retrieval.json")
    assert summary["encoder"] == "tiny" and summary["layer"] == 2
    assert summary["sets"] == {name: read_json(separate / f"{name}.json") for name in SETS}
    assert res == summary["sets"]
    # counts say what encoding the side for that set takes, shared or not
    for lang in SETS["udhr"]:
        counts = summary["sets"]["udhr"]["languages"][lang]["counts"]
        assert counts["forward_passes"] == 2 * (10 // BATCH)
    assert not (tmp_path / "retrieval.work").exists()
    assert not resume.leftover_temporaries(tmp_path)


_CHILD = """
import functools, time
from pathlib import Path
import transformers.models.bert.modeling_bert as bert
from test_retrieval_sets import merged

forward = bert.BertModel.forward

@functools.wraps(forward)
def slow(self, *a, **kw):  # a batch takes a while, as at full scale
    time.sleep(0.1)
    return forward(self, *a, **kw)

bert.BertModel.forward = slow
merged(ARGS["world"], Path(ARGS["root"]))
"""


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_killed_job_keeps_its_finished_sets(
    world: dict,
    separate: Path,
    tmp_path: Path,
    sig: int,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    work = tmp_path / "retrieval.work"
    # udhr done (its outputs written at once), then a few batches into bible's first language
    stopped = resume.run_and_stop(
        _CHILD,
        {"world": world, "root": str(tmp_path)},
        tmp_path,
        sig,
        ready=resume.exists_for(tmp_path / "udhr.json", 0.5),
        paths=[Path(__file__).parent],
        timeout=240,
    )
    assert stopped.returncode == resume.expect_exit(sig), stopped.log[-3000:]
    assert (tmp_path / "udhr.json").read_bytes() == (separate / "udhr.json").read_bytes()
    assert not (tmp_path / "bible.json").exists() and not (tmp_path / "retrieval.json").exists()
    assert not [p for p in resume.leftover_temporaries(tmp_path) if work not in p.parents]
    # Snakemake removes a failed job's outputs: the re-run writes them again from progress
    (tmp_path / "udhr.json").unlink()
    encoded: list[list[str]] = []
    pooled = retrieval.pooled_hidden_states

    def counted(encoder, sentences, **kw):
        encoded.append(list(sentences))
        return pooled(encoder, sentences, **kw)

    monkeypatch.setattr(retrieval, "pooled_hidden_states", counted)
    with caplog.at_level(logging.INFO, logger="xlalign"):
        merged(world, tmp_path)
    udhr = {
        side
        for lang in SETS["udhr"]
        for side in (
            tuple(p.source for p in _pairs(world, lang)),
            tuple(p.target for p in _pairs(world, lang)),
        )
    }
    # nothing of udhr encoded again; its languages read back from the job's progress
    assert encoded and not udhr & {tuple(side) for side in encoded}
    for lang in SETS["udhr"]:
        assert f"{lang} was evaluated before the job was stopped" in caplog.text
    for name in _outputs(tmp_path):
        assert (tmp_path / name).read_bytes() == (separate / name).read_bytes(), name
    assert not work.exists()
    assert not resume.leftover_temporaries(tmp_path)


def _pairs(world: dict, lang: str) -> list[RetrievalPair]:
    from xlalign.evaluation.tasks.data import read_records

    return read_records(world["files"]["udhr"][lang], "retrieval")


def test_a_job_with_every_set_done_loads_no_model(
    world: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after its last set, before the summary: the re-run only writes."""
    from transformers import AutoModel

    import xlalign.evaluation.tasks.run as run_mod

    first = merged(world, tmp_path / "a")
    (tmp_path / "b").mkdir()

    def no_summary(path, data):  # the job is stopped as it writes its summary
        if Path(path).name == "retrieval.json":
            raise KeyboardInterrupt
        return write(path, data)

    write = run_mod.write_json
    monkeypatch.setattr(run_mod, "write_json", no_summary)
    with pytest.raises(KeyboardInterrupt):
        merged(world, tmp_path / "b")
    assert (tmp_path / "b" / "retrieval.work").is_dir()
    monkeypatch.setattr(run_mod, "write_json", write)

    def refuse(*args, **kwargs):
        raise AssertionError("the encoder was loaded")

    monkeypatch.setattr(AutoModel, "from_pretrained", refuse)
    again = merged(world, tmp_path / "b")
    assert again == first
    for name in [*_outputs(tmp_path), "retrieval.json"]:
        assert (tmp_path / "b" / name).read_bytes() == (tmp_path / "a" / name).read_bytes()
    assert not (tmp_path / "b" / "retrieval.work").exists()


def test_sets_are_all_read_before_anything_is_made(world: dict, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("")
    specs = [
        RetrievalSet("udhr", world["files"]["udhr"], tmp_path / "udhr.json"),
        RetrievalSet("bible", {"de": str(bad)}, tmp_path / "bible.json"),
    ]
    with pytest.raises(InputError, match=r"bad\.jsonl"):
        run_retrieval_sets(
            specs, encoder=world["encoder"], encoder_name="tiny", work_dir=tmp_path / "w"
        )
    assert not (tmp_path / "w").exists() and not (tmp_path / "udhr.json").exists()
    with pytest.raises(InputError, match="distinct set names"):
        run_retrieval_sets([specs[0], specs[0]], encoder=world["encoder"], encoder_name="tiny")


def test_shared_sides_keep_a_side_until_its_last_use() -> None:
    a, b = ["x y", "z"], ["x y z"]
    shared = SharedSides([a, b, a, a])
    calls: list[list[str]] = []

    def encode(texts: list[str]):
        def run():
            calls.append(texts)
            st = PoolingStats(sentences=len(texts), batches=1)
            return np.full((2, len(texts), 3), float(len(calls)), np.float32), st

        return run

    settings = {"pooling": "mean"}
    first, st1 = shared.pooled(a, settings, encode(a))
    shared.pooled(b, settings, encode(b))
    second, st2 = shared.pooled(list(a), settings, encode(a))
    np.testing.assert_array_equal(first, second)
    assert calls == [a, b] and shared.reused == 1
    assert st1 == st2 and st1 is not st2  # a copy: a set's stats are its own
    shared.pooled(a, settings, encode(a))  # the last planned use: kept no longer
    shared.pooled(a, settings, encode(a))
    assert calls == [a, b, a] and shared.reused == 2
    # a side's order is part of it; other settings are refused
    shared.pooled(a[::-1], settings, encode(a[::-1]))
    assert len(calls) == 4
    with pytest.raises(ConfigError, match="pooling settings"):
        shared.pooled(a, {"pooling": "cls"}, encode(a))
