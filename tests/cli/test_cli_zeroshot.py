"""``xlalign finetune`` and ``xlalign retrieve`` on a tiny encoder and tiny task files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xlalign.cli import main
from xlalign.evaluation.tasks.data import RetrievalPair, TaggedSentence, write_records

WORDS = {"the": "DET", "a": "DET", "cat": "NOUN", "dog": "NOUN", "sat": "VERB", "ran": "VERB"}


def _sentences(n: int, offset: int = 0) -> list[TaggedSentence]:
    out = []
    for i in range(n):
        det = "the" if (i + offset) % 2 else "a"
        noun = "cat" if (i + offset) % 3 else "dog"
        verb = "sat" if (i + offset) % 5 else "ran"
        toks = [det, noun, verb]
        out.append(TaggedSentence(f"s{i}", toks, [WORDS[t] for t in toks]))
    return out


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    from tiny_encoder import make_tiny_encoder

    enc = make_tiny_encoder(tmp_path / "enc", [" ".join(WORDS)], layers=2)
    out = {"enc": enc}
    for name, recs in (
        ("train", _sentences(64)),
        ("dev", _sentences(16, 1)),
        ("xx", _sentences(8, 2)),
    ):
        out[name] = tmp_path / f"{name}.jsonl"
        write_records(out[name], recs)
    return out


def test_finetune_writes_scores_predictions_and_summary(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    rc = main(
        [
            "-q",
            "finetune",
            "pos-gold",
            str(files["enc"]),
            "--train",
            str(files["train"]),
            "--dev",
            str(files["dev"]),
            "--test",
            f"xx={files['xx']}",
            "-o",
            str(out),
            "--set",
            "epochs=3",
            "learning_rate=0.005",
            "batch_size=16",
            "eval_every=4",
            "--no-model",
        ]
    )
    assert rc == 0
    res = json.loads((tmp_path / "run.json").read_text())
    assert res["task"] == "pos-gold" and res["params"]["learning_rate"] == 0.005
    assert set(res["scores"]) == {"en/dev", "xx"}
    assert res["summary"]["english_split"] == "dev"
    # a toy task the tiny model learns: well above the majority class (1/3)
    assert res["scores"]["en/dev"]["accuracy"] > 60
    assert len((out / "predictions" / "xx.jsonl").read_text().splitlines()) == 8
    assert not (tmp_path / "run.work").exists()
    printed = json.loads(capsys.readouterr().out)
    assert printed["per_language"]["xx"] == res["scores"]["xx"]["accuracy"]


def test_finetune_unknown_task_is_a_clear_error(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(
        ["finetune", "udpos-typo", str(files["enc"]), "--train", str(files["train"]),
         "--dev", str(files["dev"]), "-o", str(tmp_path / "x")]
    )  # fmt: skip
    assert rc == 1
    assert "unknown zero-shot task 'udpos-typo'" in capsys.readouterr().err


def test_retrieve_every_layer_and_the_layer_check(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = tmp_path / "pairs.jsonl"
    write_records(
        pairs,
        [
            RetrievalPair(f"p{i}", s, s)
            for i, s in enumerate(["the cat sat", "a dog ran", "the dog"])
        ],
    )
    out = tmp_path / "ret.json"
    assert (
        main(
            [
                "-q",
                "retrieve",
                "udhr",
                str(files["enc"]),
                f"de={pairs}",
                "-o",
                str(out),
                "--layer",
                "2",
            ]
        )
        == 0
    )
    res = json.loads(out.read_text())
    assert res["layer"] == 2 and res["depth"] == 2
    de = res["languages"]["de"]
    assert len(de["sweep"]["en->xx"]) == 3  # embeddings + 2 layers
    assert de["accuracy"]["en->xx"] == 100.0  # identical sentences retrieve themselves
    # XTREME's default layer (hidden_states[-12:][7]) does not exist in a 2-layer model
    rc = main(["retrieve", "udhr", str(files["enc"]), f"de={pairs}", "-o", str(out)])
    assert rc == 1
    assert "layer" in capsys.readouterr().err


def test_torchrun_argv_reproduces_the_run(tmp_path: Path) -> None:
    """What a multi-GPU job starts under torchrun parses back into the same run."""
    from xlalign.cli import build_parser
    from xlalign.evaluation.tasks.run import finetune_argv

    argv = finetune_argv(
        "udpos",
        encoder=tmp_path / "enc",
        train="train.jsonl",
        dev=None,
        tests={"en": "en.jsonl", "de": "de.jsonl"},
        seed=3,
        output_dir=tmp_path / "out",
        stats_path=tmp_path / "out.json",
        work_dir=tmp_path / "out.work",
        params={"epochs": 2, "extra": {"group_by_length": True}},
        precision="bf16",
        keep_model=False,
        encoder_name="xlm-roberta-base",
    )
    args = build_parser().parse_args(argv)
    assert (args.task, args.seed, args.precision, args.no_model) == ("udpos", 3, "bf16", True)
    assert args.dev == "" and args.test == ["en=en.jsonl", "de=de.jsonl"]
    assert args.encoder_name == "xlm-roberta-base"
    from xlalign.cli.zeroshot import _overrides

    assert _overrides(args.set) == {"epochs": 2, "extra": {"group_by_length": True}}


@pytest.mark.parametrize("minutes", [0.0, 2.5, None, 10.0])
def test_torchrun_argv_carries_the_checkpoint_interval(tmp_path: Path, minutes) -> None:
    """``--checkpoint-minutes`` (``checkpoints.interval_minutes``) reaches the workers:
    minutes, or ``none`` (on SIGTERM only); left out, the default."""
    from xlalign.cli import build_parser
    from xlalign.core.cadence import DEFAULT_INTERVAL_MINUTES
    from xlalign.evaluation.tasks.run import finetune_argv

    common = dict(
        encoder=tmp_path / "enc", train="t.jsonl", dev="d.jsonl", tests={}, seed=1,
        output_dir=tmp_path / "out", stats_path=tmp_path / "o.json", work_dir=tmp_path / "w",
    )  # fmt: skip
    argv = finetune_argv("udpos", **common, checkpoint_minutes=minutes)
    assert build_parser().parse_args(argv).checkpoint_minutes == minutes
    i = argv.index("--checkpoint-minutes")
    plain = argv[:i] + argv[i + 2 :]
    assert build_parser().parse_args(plain).checkpoint_minutes == DEFAULT_INTERVAL_MINUTES
    with pytest.raises(SystemExit):
        build_parser().parse_args([*plain, "--checkpoint-minutes", "-1"])
