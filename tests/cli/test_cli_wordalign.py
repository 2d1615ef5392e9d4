"""``xlalign parallel``, ``xlalign align`` and ``xlalign aer`` run in-process: outputs,
stats, the JSON report on stdout and the errors (return code 2, message on stderr)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from xlalign.cli import main

# ------------------------------------------------------------------------------ parallel

N_LINES = 30
EMPTY_LINE = 5  # the German side is blank
LONG_LINE = 10  # more than --max-tokens on both sides


def write_lines_corpus(tmp_path: Path) -> tuple[Path, Path]:
    en, de = [], []
    for k in range(1, N_LINES + 1):
        if k == LONG_LINE:
            en.append(" ".join(f"word{n}" for n in range(20)) + ".")
            de.append(" ".join(f"wort{n}" for n in range(20)) + ".")
            continue
        en.append(f"Line {k}: the cat sleeps, the dog runs.")
        de.append("   " if k == EMPTY_LINE else f"Zeile {k}: die Katze schläft, der Hund rennt.")
    en_path, de_path = tmp_path / "en.txt", tmp_path / "de.txt"
    en_path.write_text("\n".join(en) + "\n", encoding="utf-8")
    de_path.write_text("\n".join(de) + "\n", encoding="utf-8")
    return en_path, de_path


def read_tsv(path: Path) -> tuple[str, list[list[str]]]:
    header, *rows = path.read_text(encoding="utf-8").splitlines()
    return header, [row.split("\t") for row in rows]


def parallel_args(out: Path, *sources: str) -> list[str]:
    args = ["parallel", "--src", "en", "--tgt", "de", "--src-tool", "icu", "--tgt-tool", "icu"]
    for source in sources:
        args += ["--source", source]
    return [*args, "--max-tokens", "15", "-o", str(out)]


def test_parallel_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    en, de = write_lines_corpus(tmp_path)
    out = tmp_path / "corpus.tsv"
    assert main(parallel_args(out, f"lines:{en},{de}")) == 0
    header, rows = read_tsv(out)
    assert header == "id\tsource\ttarget"
    assert len(rows) == N_LINES - 2
    assert rows[0] == [
        "lines0:1",
        "Line 1 : the cat sleeps , the dog runs .",
        "Zeile 1 : die Katze schläft , der Hund rennt .",
    ]
    ids = [row[0] for row in rows]
    assert f"lines0:{EMPTY_LINE}" not in ids and f"lines0:{LONG_LINE}" not in ids
    assert ids == sorted(ids, key=lambda i: int(i.split(":")[1]))  # corpus order

    stats = json.loads((tmp_path / "corpus.json").read_text(encoding="utf-8"))
    assert json.loads(capsys.readouterr().out) == stats
    totals = stats["totals"]
    assert totals["read"] == N_LINES and totals["kept"] == N_LINES - 2
    assert totals["empty_target"] == 1 and totals["too_long"] == 1
    assert sum(v for k, v in totals.items() if k not in ("read", "kept")) == 2
    assert stats["pairs_out"] == N_LINES - 2
    assert stats["filters"]["max_tokens"] == 15
    assert stats["tokens_source"] == 11 * (N_LINES - 2)
    assert stats["tokenisers"]["en"]["tool"] == "icu"
    assert stats["tokenisers"]["de"]["tool"] == "icu"


def test_parallel_max_tokens_keeps_the_long_pair_when_raised(tmp_path: Path) -> None:
    en, de = write_lines_corpus(tmp_path)
    out = tmp_path / "corpus.tsv"
    args = parallel_args(out, f"lines:{en},{de}")
    args[args.index("--max-tokens") + 1] = "30"
    assert main(["-q", *args]) == 0
    _, rows = read_tsv(out)
    assert len(rows) == N_LINES - 1
    long = next(row for row in rows if row[0] == f"lines0:{LONG_LINE}")
    assert long[1].split()[-2:] == ["word19", "."]
    assert json.loads((tmp_path / "corpus.json").read_text())["totals"]["too_long"] == 0


UNIT_HEADER = "id\tsplit\tdoc\tpara\ttext\n"


def write_units(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        fh.write(UNIT_HEADER)
        for k, (uid, split, text) in enumerate(rows):
            fh.write(f"{uid}\t{split}\t0\t{k}\t{text}\n")
    return path


def test_parallel_units_excludes_heldout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    en = write_units(
        tmp_path / "en.tsv",
        [
            ("u1", "train", "The house is big."),
            ("u2", "test", "Secret evaluation text."),
            ("u3", "train", "The dog sleeps."),
        ],
    )
    de = write_units(
        tmp_path / "de.tsv",
        [
            ("u3", "train", "Der Hund schläft."),
            ("u1", "train", "Das Haus ist groß."),
            ("u2", "train", "Geheimer Evaluationstext."),
        ],
    )
    out = tmp_path / "units.tsv"
    assert main(parallel_args(out, f"units:{en},{de}")) == 0
    header, rows = read_tsv(out)
    assert header == "id\tsource\ttarget"
    assert rows == [
        ["u1", "The house is big .", "Das Haus ist groß ."],
        ["u3", "The dog sleeps .", "Der Hund schläft ."],
    ]
    assert "Secret" not in out.read_text(encoding="utf-8")
    stats = json.loads((tmp_path / "units.json").read_text(encoding="utf-8"))
    assert json.loads(capsys.readouterr().out)["totals"] == stats["totals"]
    assert stats["totals"]["read"] == 3
    assert stats["totals"]["kept"] == 2
    assert stats["totals"]["heldout"] == 1


def test_parallel_two_sources_and_explicit_stats(tmp_path: Path) -> None:
    en, de = write_lines_corpus(tmp_path)
    units_en = write_units(tmp_path / "en.tsv", [("u1", "train", "The house is big.")])
    units_de = write_units(tmp_path / "de.tsv", [("u1", "train", "Das Haus ist groß.")])
    out, stats_path = tmp_path / "c.tsv", tmp_path / "elsewhere.json"
    args = parallel_args(out, f"units:{units_en},{units_de}", f"lines:{en},{de}")
    assert main(["-q", *args, "--stats", str(stats_path)]) == 0
    _, rows = read_tsv(out)
    assert [row[0] for row in rows[:2]] == ["u1", "lines1:1"]  # source order, name kind+index
    assert len(rows) == 1 + N_LINES - 2
    stats = json.loads(stats_path.read_text(encoding="utf-8"))
    assert [s["kept"] for s in stats["sources"]] == [1, N_LINES - 2]
    assert not (tmp_path / "c.json").exists()


def test_parallel_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    en, de = write_lines_corpus(tmp_path)
    out = tmp_path / "corpus.tsv"
    assert main(parallel_args(out, f"bogus:{en},{de}")) == 2
    assert "--source" in capsys.readouterr().err
    short = tmp_path / "short.txt"
    short.write_text("Nur eine Zeile.\n", encoding="utf-8")
    assert main(parallel_args(out, f"lines:{en},{short}")) == 1
    err = capsys.readouterr().err
    assert str(en) in err and str(short) in err
    assert not out.exists()


# --------------------------------------------------------------------------------- align

N_PAIRS = 400
VOCAB = 40


def synthetic_token_files(tmp_path: Path, seed: int = 7) -> tuple[Path, Path]:
    """Source words s0..s39, targets word by word through sK -> tK with adjacent swaps."""
    rng = random.Random(seed)
    src_lines, tgt_lines = [], []
    for _ in range(N_PAIRS):
        src = [f"s{rng.randrange(VOCAB)}" for _ in range(rng.randint(4, 9))]
        tgt = ["t" + w[1:] for w in src]
        i = 0
        while i < len(tgt) - 1:
            if rng.random() < 0.25:
                tgt[i], tgt[i + 1] = tgt[i + 1], tgt[i]
                i += 2
            else:
                i += 1
        src_lines.append(" ".join(src))
        tgt_lines.append(" ".join(tgt))
    s, t = tmp_path / "src.txt", tmp_path / "tgt.txt"
    s.write_text("\n".join(src_lines) + "\n", encoding="utf-8")
    t.write_text("\n".join(tgt_lines) + "\n", encoding="utf-8")
    return s, t


def test_align_token_files_with_dictionary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src, tgt = synthetic_token_files(tmp_path)
    gold = tmp_path / "gold.txt"
    gold.write_text("".join(f"s{k} t{k}\n" for k in range(VOCAB)), encoding="utf-8")
    out_dir, dictionary = tmp_path / "out", tmp_path / "dict.txt"
    rc = main(
        [
            "align",
            "--source-text",
            str(src),
            "--target-text",
            str(tgt),
            "-o",
            str(out_dir),
            "--dictionary",
            str(dictionary),
            "--gold",
            str(gold),
            "--threads",
            "2",
        ]
    )
    assert rc == 0
    for name in ("forward.txt", "reverse.txt", "symmetrized.txt"):
        lines = (out_dir / name).read_text(encoding="utf-8").splitlines()
        assert len(lines) == N_PAIRS, name
    header, *rows = (out_dir / "pairs.tsv").read_text(encoding="utf-8").splitlines()
    assert header == "pair_id\tsentence\tsource_pos\ttarget_pos\tsource\ttarget"
    assert len(rows) > N_PAIRS  # several kept links per sentence
    right = sum(r.split("\t")[4][1:] == r.split("\t")[5][1:] for r in rows)
    assert right / len(rows) > 0.95

    report = json.loads(capsys.readouterr().out)
    assert report["sentences"] == N_PAIRS
    assert report == {**json.loads((out_dir / "stats.json").read_text()), **report}
    d = report["dictionary"]
    assert d["output"] == str(dictionary) and d["pairs"] >= 1
    assert json.loads((tmp_path / "dict.json").read_text())["pairs"] == d["pairs"]

    pairs = [line.split() for line in dictionary.read_text(encoding="utf-8").splitlines()]
    first: dict[str, str] = {}
    for s, t in pairs:
        first.setdefault(s, t)
    correct = sum(first[s] == "t" + s[1:] for s in first)
    assert len(first) >= 38 and correct >= 38

    evaluation = json.loads((out_dir / "dictionary-eval.json").read_text(encoding="utf-8"))
    assert d["evaluation"] == evaluation
    assert set(evaluation["references"]) == {"gold"}
    assert evaluation["references"]["gold"]["p_at_1"] >= 0.95


def test_align_shared_priors_in_chunks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, tgt = synthetic_token_files(tmp_path)
    runs = []
    for k in range(2):
        out_dir = tmp_path / f"out{k}"
        argv = ["align", "--source-text", str(src), "--target-text", str(tgt), "-o", str(out_dir)]
        argv += ["--chunk-size", "150", "--shared-priors", "--shared-priors-sample", "100"]
        argv += ["--seed", "4", "--iterations", "2", "2", "2"]
        assert main(argv) == 0
        report = json.loads(capsys.readouterr().out)
        runs.append((out_dir / "symmetrized.txt").read_text(encoding="utf-8"))
        assert report["chunks"] == 3
        assert report["options"]["shared_priors"] and report["options"]["seed"] == 4
        assert report["shared_priors"]["sample_pairs"] == 100
    assert runs[0] == runs[1]


def test_align_mismatched_line_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, tgt = tmp_path / "a.txt", tmp_path / "b.txt"
    src.write_text("s1 s2\ns3\ns4 s5\n", encoding="utf-8")
    tgt.write_text("t1 t2\nt3\n", encoding="utf-8")
    out_dir = tmp_path / "out"
    rc = main(["align", "--source-text", str(src), "--target-text", str(tgt), "-o", str(out_dir)])
    assert rc == 1
    captured = capsys.readouterr()
    assert str(src) in captured.err and str(tgt) in captured.err
    assert "xlalign align: error" in captured.err
    assert captured.out == ""
    assert not (out_dir / "forward.txt").exists()


def test_align_corpus_and_token_files_are_exclusive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "c.tsv"
    corpus.write_text("id\tsource\ttarget\n1\ts1\tt1\n", encoding="utf-8")
    src = tmp_path / "a.txt"
    src.write_text("s1\n", encoding="utf-8")
    rc = main(["align", str(corpus), "--source-text", str(src), "-o", str(tmp_path / "o")])
    assert rc == 2
    assert "not both" in capsys.readouterr().err
    assert main(["align", "--source-text", str(src), "-o", str(tmp_path / "o")]) == 2
    assert "--target-text" in capsys.readouterr().err


# ----------------------------------------------------------------------------------- aer

PREDICTED = "0-0 1-1 3-2\n0-1 1-0\n\n"
GOLD = "0-0 1?1 2-3\n0-1 1?0 1-1\n0-0\n"
# A = 5 links, S = 5 sure, P = 7 possible (with S).
# Forward: A∩S = {0-0} + {0-1} = 2, A∩P = {0-0, 1-1} + {0-1, 1-0} = 4:
#   precision 4/5, recall 2/5, AER 1 - 6/10, F1 2*.8*.4/1.2.
# Reversed (3-2 becomes 2-3): A∩S = 3, A∩P = 5: precision 1, recall 3/5, AER 1 - 8/10.


def write_aer_files(tmp_path: Path) -> tuple[Path, Path]:
    pred, gold = tmp_path / "pred.txt", tmp_path / "gold.txt"
    pred.write_text(PREDICTED, encoding="utf-8")
    gold.write_text(GOLD, encoding="utf-8")
    return pred, gold


def test_aer_hand_computed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred, gold = write_aer_files(tmp_path)
    out = tmp_path / "aer.json"
    assert main(["aer", str(pred), str(gold), "--output", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    assert line == (
        "AER 0.4000  precision 0.8000  recall 0.4000  F1 0.5333  "
        "(3 sentences, 5 predicted, 5 sure, 7 possible links)"
    )
    scores = json.loads(out.read_text(encoding="utf-8"))
    assert scores["aer"] == pytest.approx(0.4)
    assert scores["precision"] == pytest.approx(0.8)
    assert scores["recall"] == pytest.approx(0.4)
    assert scores["f1"] == pytest.approx(8 / 15)
    assert (scores["sure_hit"], scores["possible_hit"]) == (2, 4)
    assert (scores["predicted"], scores["sure"], scores["possible"]) == (5, 5, 7)
    assert scores["sentences"] == 3


def test_aer_reverse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred, gold = write_aer_files(tmp_path)
    assert main(["aer", str(pred), str(gold), "--reverse"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("AER 0.2000  precision 1.0000  recall 0.6000  F1 0.7500  ")


def test_aer_quiet_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred, gold = write_aer_files(tmp_path)
    out = tmp_path / "aer.json"
    assert main(["-q", "aer", str(pred), str(gold), "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert json.loads(out.read_text())["aer"] == pytest.approx(0.4)
    short = tmp_path / "short.txt"
    short.write_text("0-0\n", encoding="utf-8")
    assert main(["aer", str(pred), str(short), "--format", "pharaoh"]) == 1
    err = capsys.readouterr().err
    assert "xlalign aer: error" in err and str(short) in err and str(pred) in err
