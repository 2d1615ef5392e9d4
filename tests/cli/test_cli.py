"""The `xlalign` command line runs the same stages outside Snakemake."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from xlalign.cli import main

ROOT = Path(__file__).resolve().parents[2]

TEXT = (
    "Der Ausschuss traf sich am Dienstag, um den neuen Haushalt der Bibliothek zu beraten. "
    "Mehrere Mitglieder sagten, die Lesesäle bräuchten deutlich längere Öffnungszeiten.\n"
    "Andere wollten das Geld lieber für digitale Bücher und schnellere Rechner ausgeben. "
    "Nach einer langen Debatte einigten sie sich darauf, beide Pläne zu finanzieren.\n"
    "Überschrift allein\n"
    "\n"
    "Der Fluss war in der Nacht nach drei Tagen mit starkem Regen deutlich gestiegen. "
    "Die Bauern im Tal brachten ihre Tiere noch vor der Morgendämmerung in Sicherheit.\n"
)


def test_sample_then_segment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "de.txt"
    src.write_text(TEXT, encoding="utf-8")
    sample, seg = tmp_path / "s.txt", tmp_path / "seg.txt"
    assert (
        main(
            [
                "-q",
                "sample",
                "--lang",
                "de",
                "--source",
                f"text:{src}",
                "-o",
                str(sample),
                "--max-sentences",
                "100",
                "--seed",
                "3",
            ]
        )
        == 0
    )
    assert json.loads((tmp_path / "s.json").read_text())["paragraphs_out"] == 4
    assert (
        main(["segment", "--lang", "de", "--tool", "icu", "-i", str(sample), "-o", str(seg)]) == 0
    )
    stats = json.loads(capsys.readouterr().out)
    assert stats["tool"] == "icu" and stats["sentences_out"] == 6
    lines = seg.read_text(encoding="utf-8").splitlines()
    assert lines[0].split()[:3] == ["Der", "Ausschuss", "traf"]
    assert lines[0].endswith("beraten .")
    assert not any("Überschrift" in line for line in lines)


def test_segment_udpipe_without_model_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "de.txt"
    src.write_text(TEXT, encoding="utf-8")
    rc = main(["segment", "--lang", "de", "-i", str(src), "-o", str(tmp_path / "o.txt")])
    err = capsys.readouterr().err
    assert rc == 1 and "'de'" in err and "UDPipe model" in err
    assert not (tmp_path / "o.txt").exists()


def test_bad_source_and_language(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["sample", "--lang", "de", "--source", "oscar:x", "-o", str(tmp_path / "o")]) == 2
    assert "TYPE:PATH" in capsys.readouterr().err
    (tmp_path / "a").write_text("x\n")
    assert (
        main(["segment", "--lang", "xx", "-i", str(tmp_path / "a"), "-o", str(tmp_path / "o")]) == 1
    )
    assert "unknown ISO 639 language 'xx'" in capsys.readouterr().err


def test_segment_a_language_outside_the_table(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src = tmp_path / "uk.txt"
    src.write_text(
        "Усі люди народжуються вільними і рівними у своїй гідності та правах. "
        "Вони наділені розумом і совістю і повинні діяти у відношенні один до одного "
        "в дусі братерства.\n",
        encoding="utf-8",
    )
    out = tmp_path / "o.txt"
    assert main(["segment", "--lang", "uk", "-i", str(src), "-o", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and lines[0].startswith("Усі люди народжуються")
    assert json.loads(out.with_suffix(".json").read_text())["tool"] == "icu"
    assert main(["segment", "--lang", "Ukrainian", "-i", str(src), "-o", str(out)]) == 1
    assert "did you mean 'uk'?" in capsys.readouterr().err


def test_check_config_a_language_outside_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = ROOT / "tests" / "e2e" / "new-language.yaml"
    assert main(["check-config", str(cfg)]) == 0
    assert "2 languages" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text(cfg.read_text(encoding="utf-8").replace("[en, pl]", "[en, pol]"))
    assert main(["check-config", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "languages[1]" in err and "'pol'" in err and "write 'pl'" in err
    bad.write_text(cfg.read_text(encoding="utf-8").replace("{pl: icu}", "{pl: icu+jieba}"))
    assert main(["check-config", str(bad)]) == 1
    assert "segment.tools.pl" in capsys.readouterr().err


def test_check_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-config", str(ROOT / "config" / "paper.yaml")]) == 0
    assert "40 languages, 3 seeds" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nlanguages: [en]\nseeds: [1]\ncorpus: {strategy: random}\n")
    assert main(["check-config", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "bad.yaml" in err and "corpus.strategy" in err and "'reservoir'" in err


def test_console_script_installed() -> None:
    exe = Path(sys.executable).parent / "xlalign"
    r = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    for cmd in ("sample", "segment", "check-config", "download"):
        assert cmd in r.stdout


@pytest.mark.parametrize("method", ["x2s-m", "aggregate"])
def test_extract(tmp_path: Path, method: str) -> None:
    from tiny_encoder import make_tiny_encoder

    from xlalign.static.vectors import read_vec

    corpus = tmp_path / "de.tok.txt"
    lines = [
        "der hund läuft schnell über die grüne wiese .",
        "die katze schläft auf dem warmen sofa im haus .",
        "der hund und die katze spielen im garten .",
    ] * 10
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    enc = make_tiny_encoder(tmp_path / "enc", lines)
    out = tmp_path / "out"
    rc = main(
        [
            "-q",
            "extract",
            "--lang",
            "de",
            "--corpus",
            str(corpus),
            "--encoder",
            str(enc),
            "-o",
            str(out),
            "--method",
            method,
            "--layer",
            "1",
            "--min-count",
            "5",
            "--epochs",
            "2",
            "--subsample-t",
            "0",
        ]
    )
    assert rc == 0
    words, vecs = read_vec(out / f"de.{method}.vec")
    assert "hund" in words and "katze" in words and vecs.shape == (len(words), 32)
    stats = json.loads((out / f"de.{method}.json").read_text())
    assert stats["method"] == method and stats["words"] == len(words)
    assert (out / f"de.{method}.npy").exists()


def test_extract_bad_layer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tiny_encoder import make_tiny_encoder

    corpus = tmp_path / "c.txt"
    corpus.write_text("ein satz mit worten hier .\n" * 20, encoding="utf-8")
    enc = make_tiny_encoder(tmp_path / "enc", ["ein satz mit worten hier ."])
    rc = main(
        [
            "extract",
            "--lang",
            "de",
            "--corpus",
            str(corpus),
            "--encoder",
            str(enc),
            "-o",
            str(tmp_path / "o"),
            "--layer",
            "9",
            "--min-count",
            "1",
        ]
    )
    assert rc == 1
    err = capsys.readouterr().err
    assert "layer" in err and "9" in err and "2" in err
    assert not list((tmp_path / "o").glob("*.vec"))


def _rotated_vec_files(tmp_path: Path, n: int = 400, dim: int = 16) -> list[tuple[str, str]]:
    import numpy as np

    from xlalign.static.vectors import write_vec

    rng = np.random.default_rng(0)
    scale = 1.0 / np.sqrt(1.0 + np.arange(dim))
    en = rng.normal(size=(n, dim)) * scale
    q, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    de = en @ q + 0.02 * rng.normal(size=en.shape)
    write_vec([f"e{i}" for i in range(n)], en.astype(np.float32), tmp_path / "en.vec")
    write_vec([f"d{i}" for i in range(n)], de.astype(np.float32), tmp_path / "de.vec")
    return [(f"d{i}", f"e{i}") for i in range(n)]


def test_map_bli_induce_wordsim_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pairs = _rotated_vec_files(tmp_path)
    (tmp_path / "train.txt").write_text("".join(f"{a} {b}\n" for a, b in pairs[:150]))
    (tmp_path / "test.txt").write_text("".join(f"{a} {b}\n" for a, b in pairs[200:300]))
    out = tmp_path / "out"
    args = ["-q", "map", "--recipe", "orthogonal", "-d", str(tmp_path / "train.txt"), "--hub"]
    paths = [tmp_path / "de.vec", tmp_path / "en.vec", out / "de.vec", out / "en.vec"]
    assert main([*args, *map(str, paths), "--stats", str(out / "map.json")]) == 0
    assert json.loads((out / "map.json").read_text())["vecmap"]["pairs_used"] == 150
    capsys.readouterr()
    assert main(["bli", str(out / "de.vec"), str(out / "en.vec"), "-d", str(tmp_path / "test.txt"),
                 "-o", str(out / "bli.json")]) == 0  # fmt: skip
    res = json.loads(capsys.readouterr().out)
    assert res["csls"]["p@1"] > 0.95 and res["nn"]["evaluated"] == 100
    assert json.loads((out / "bli.json").read_text()) == res
    assert main(["-q", "induce", str(out / "de.vec"), str(out / "en.vec"), "-o",
                 str(out / "induced.txt")]) == 0  # fmt: skip
    induced = [tuple(x.split()) for x in (out / "induced.txt").read_text().splitlines()]
    assert len(induced) > 300 and sum(p in set(pairs) for p in induced) / len(induced) > 0.95
    # Unknown recipe: a usage error, exit 2.
    assert main(["map", "--recipe", "nope", *map(str, paths)]) == 2
    assert "nope" in capsys.readouterr().err

    (tmp_path / "sim.txt").write_text("e1\te2\t3.0\ne1\te3\t1.0\ne2\te4\t2.0\ne5\te6\t0.5\n")
    capsys.readouterr()
    assert main(["wordsim", "--space", f"en={out / 'en.vec'}", "--dataset",
                 str(tmp_path / "sim.txt"), "-o", str(out / "ws.json")]) == 0  # fmt: skip
    ws = json.loads(capsys.readouterr().out)
    assert ws["results"][0]["dataset"] == "sim" and ws["results"][0]["found"] == 4

    rec = {"space": "m", "seed": 0, "language": "de", "hub": "en", "split": "test",
           "results": {"de-en": res}}  # fmt: skip
    (out / "rec.json").write_text(json.dumps(rec))
    assert main(["-q", "tables", "--bli", str(out / "rec.json"), "-o", str(out / "t")]) == 0
    assert "| m " in (out / "t" / "table1.md").read_text()


def test_derive_writes_the_sweep_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`xlalign derive` builds what the derived_data job builds, 001 Tables 1-2's shares
    included (here given on the command line)."""
    text = tmp_path / "en.txt"
    text.write_text(
        "The old man ate red apples. He liked them a lot.\n"
        "A small dog chased the big cat. The cat climbed a tall tree!\n",
        encoding="utf-8",
    )
    out = tmp_path / "trans+inv"
    rc = main(
        ["derive", "--spec", "trans+inv", "--text", str(text), "-o", str(out),
         "--parallel-shares", "0.5", "--dictionary-shares", "0.5"]
    )  # fmt: skip
    assert rc == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["text"]["sentences"] == 4 and stats["text"]["parallel_subsets"] == {
        "parallel.p50.tsv": 2
    }
    assert (out / "text" / "dictionary.d50.txt").is_file()
    assert json.loads((tmp_path / "trans+inv.json").read_text())["spec"] == "trans+inv"
