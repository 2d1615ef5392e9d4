"""Regressions from the held-out sweep of malformed files through the CLI (issue 25).

Each case was found by feeding a bad file to a command and is fixed in a reader or a stage
module: the command now refuses the file with one line, ``xlalign <cmd>: error: ...``,
naming the file (and the line where one applies), exit status 1, no traceback and nothing
written; or, where the file is acceptable, reads it right instead of silently mis-scoring.

* a MUSE dictionary saved with a byte-order mark: its first pair was scored as out of
  vocabulary (exit 0, a wrong P@k);
* a malformed eflomal ``--priors`` file: an ``IndexError`` traceback from inside eflomal;
* ``retrieve``: a bad records file was found only after the encoder had loaded, and left
  ``<output>.work`` behind; an empty file or a repeated id did not name the file;
* a ``.vec`` whose header says ``0 <dim>``: refused without naming the file;
* ``map``: an empty seed dictionary, or one with no pair in the vocabularies, was refused
  without naming the dictionary;
* ``derive``: a bad task file was refused only after the derived text had been written;
* ``induce``: a pair whose word holds a no-break space (fastText keeps it in a word) was
  written as a dictionary line that ``bli`` then refused; one whose words were read with
  ``surrogateescape`` (written back as their bytes) was refused by ``map -d`` even with
  ``--encoding-errors surrogateescape``;
* a unit TSV (``parallel``, ``sample``) with a wrong header: the line was not named;
* a result record (``tables``, ``statistics``, ``plots``) with a key repeated: the last
  value was used without a word.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from xlalign.cli import main

ROOT = Path(__file__).resolve().parents[2]
DIM = 5
N = 20


def _vec(path: Path, words: list[bytes], *, seed: int = 0, header: bytes | None = None) -> Path:
    rng = np.random.default_rng(seed)
    rows = [header if header is not None else f"{len(words)} {DIM}\n".encode()]
    for w in words:
        rows.append(w + b" " + " ".join(f"{x:.4f}" for x in rng.normal(size=DIM)).encode() + b"\n")
    path.write_bytes(b"".join(rows))
    return path


def _words(n: int = N) -> list[bytes]:
    return [f"w{i}".encode() for i in range(n)]


@pytest.fixture
def d(tmp_path: Path) -> Path:
    (tmp_path / "out").mkdir()
    _vec(tmp_path / "src.vec", _words(), seed=1)
    _vec(tmp_path / "trg.vec", _words(), seed=2)
    (tmp_path / "dict.txt").write_text("".join(f"w{i} w{i}\n" for i in range(10)))
    (tmp_path / "corpus.tsv").write_text("id\tsource\ttarget\n1\ta b c\tx y z\n2\td e\tu v\n")
    return tmp_path


def _refused(capsys: pytest.CaptureFixture[str], rc: int, cmd: str, *named: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("WARN")]
    assert rc == 1, err
    assert len(lines) == 1, err
    assert lines[0].startswith(f"xlalign {cmd}: error: "), err
    for text in named:
        assert text in lines[0], (text, err)
    return lines[0]


def _left(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.rglob("*"))


def test_muse_dictionary_with_bom_scores_every_pair(d: Path, capsys) -> None:
    dic = d / "bom.txt"
    dic.write_bytes(b"\xef\xbb\xbf" + (d / "dict.txt").read_bytes().replace(b"\n", b"\r\n"))
    rc = main(["-q", "bli", "-d", str(dic), str(d / "src.vec"), str(d / "trg.vec")])
    assert rc == 0
    nn = json.loads(capsys.readouterr().out)["nn"]
    assert nn["pairs_in_vocab"] == nn["pairs_total"] == 10
    assert nn["skipped_src_oov"] == 0


@pytest.mark.parametrize(
    "text, why",
    [
        ("this is not a priors file\n", "line 1: 'this is not"),
        ("LEX\ta\tx\t1\nLEX\ta\tx\n", "line 2: a LEX prior has 4"),
        ("HMMF\tx\t0.5\n", "line 1: field 2 of a HMMF prior"),
        ("LEX\ta\tx\tnan\n", "line 1: alpha 'nan'"),
    ],
)
def test_align_refuses_bad_priors_before_work(d: Path, capsys, text: str, why: str) -> None:
    priors = d / "priors.txt"
    priors.write_text(text)
    out = d / "out" / "al"
    rc = main(["-q", "align", str(d / "corpus.tsv"), "--priors", str(priors), "-o", str(out)])
    _refused(capsys, rc, "align", str(priors), why)
    assert _left(d / "out") == []


def test_align_priors_not_utf8(d: Path, capsys) -> None:
    priors = d / "priors.txt"
    priors.write_bytes(b"LEX\ta\tx\t1\nLEX\t\xff\tx\t1\n")
    rc = main(["-q", "align", str(d / "corpus.tsv"), "--priors", str(priors), "-o", str(d / "o")])
    _refused(capsys, rc, "align", str(priors), "line 2")


@pytest.mark.parametrize(
    "text, why",
    [
        ("", "no sentence pairs"),
        ('{"id": "1", "source": "a", "target": "b"}\n' * 2, "record 2: pair id '1'"),
        ('{"id": "1", "source": "a"}\n', ":1: a RetrievalPair record needs ['target']"),
    ],
)
def test_retrieve_reads_records_before_the_encoder(d: Path, capsys, text: str, why: str) -> None:
    enc = d / "enc"
    enc.mkdir()
    (enc / "config.json").write_text("{}")  # never loaded: the records are refused first
    pairs = d / "de.jsonl"
    pairs.write_text(text)
    out = d / "out" / "r.json"
    rc = main(["-q", "retrieve", "tatoeba", str(enc), f"de={pairs}", "-o", str(out)])
    _refused(capsys, rc, "retrieve", str(pairs), why)
    assert _left(d / "out") == []


def test_vec_with_no_rows_is_named(d: Path, capsys) -> None:
    empty = _vec(d / "empty.vec", [], header=b"0 5\n")
    rc = main(["-q", "bli", "-d", str(d / "dict.txt"), str(empty), str(d / "trg.vec")])
    _refused(capsys, rc, "bli", str(empty), "no word vectors")


@pytest.mark.parametrize(
    "text, why", [("", "seed dictionary is empty"), ("zz0 zz0\nzz1 zz1\n", "none of the 2")]
)
def test_map_names_an_unusable_seed_dictionary(d: Path, capsys, text: str, why: str) -> None:
    dic = d / "seed.txt"
    dic.write_text(text)
    out = d / "out"
    spaces = [str(d / "src.vec"), str(d / "trg.vec"), str(out / "a.vec"), str(out / "b.vec")]
    rc = main(["-q", "map", "--recipe", "supervised", "-d", str(dic), *spaces])
    _refused(capsys, rc, "map", str(dic), why)
    assert _left(out) == []


def test_derive_refuses_a_bad_task_file_before_writing(d: Path, capsys) -> None:
    text = d / "text.txt"
    text.write_text("The cat sat on the mat .\nA dog ran .\n")
    task = d / "train.jsonl"
    task.write_text("{bad\n")
    out = d / "out" / "dv"
    config = ["--config", str(ROOT / "config" / "config.yaml")]
    task_args = ["--task", "panx", str(task), str(task)]
    rc = main(
        ["-q", "derive", *config, "--spec", "inv", "--text", str(text), *task_args, "-o", str(out)]
    )
    _refused(capsys, rc, "derive", str(task), ":1: not JSON")
    assert _left(d / "out") == []


def test_induce_writes_only_pairs_a_dictionary_reads_back(d: Path, capsys) -> None:
    words = _words()
    words[3] = "w3\u00a0x".encode()  # fastText keeps a no-break space inside a word
    space = _vec(d / "odd.vec", words, seed=3)
    out = d / "out" / "induced.txt"
    stats = d / "out" / "induced.json"
    rc = main(["-q", "induce", str(space), str(space), "-o", str(out), "--stats", str(stats)])
    assert rc == 0, capsys.readouterr().err
    assert json.loads(stats.read_text())["unwritable_dropped"] == 1
    assert len(out.read_bytes().splitlines()) == N - 1
    capsys.readouterr()
    rc = main(["-q", "bli", "-d", str(out), str(space), str(space)])
    assert rc == 0, capsys.readouterr().err


def test_map_reads_a_surrogateescape_dictionary_induce_wrote(d: Path, capsys) -> None:
    words = _words()
    words[3] = b"w\xff\xfe3"
    space = _vec(d / "odd.vec", words, seed=3)
    reading = ["--encoding-errors", "surrogateescape"]
    induced = d / "out" / "induced.txt"
    assert main(["-q", "induce", str(space), str(space), "-o", str(induced), *reading]) == 0
    assert b"w\xff\xfe3 w\xff\xfe3\n" in induced.read_bytes()
    outs = [str(d / "out" / "a.vec"), str(d / "out" / "b.vec")]
    argv = ["-q", "map", "--recipe", "supervised", "-d", str(induced), str(space), str(space)]
    assert main([*argv, *outs, *reading]) == 0, capsys.readouterr().err
    capsys.readouterr()
    # read strictly (the default), the same dictionary is refused with its line
    assert main([*argv, *outs, "--encoding-errors", "replace"]) == 1
    _refused(capsys, 1, "map", str(induced), "invalid UTF-8 at line")


def test_unit_tsv_header_names_the_line(d: Path, capsys) -> None:
    hub, other = d / "en.tsv", d / "de.tsv"
    hub.write_text("x\ty\n")
    other.write_text("x\ty\n")
    tools = ["--src-tool", "icu", "--tgt-tool", "icu"]
    source = f"units:{hub},{other}"
    out = str(d / "out" / "c.tsv")
    rc = main(
        ["-q", "parallel", "--src", "en", "--tgt", "de", "--source", source, "-o", out, *tools]
    )
    _refused(capsys, rc, "parallel", "line 1: header 'x\\ty'")
    assert _left(d / "out") == []


def test_a_result_record_with_a_repeated_key_is_refused(d: Path, capsys) -> None:
    from xlalign.evaluation.bli import bli_record

    real = d / "bli.json"
    bli_record(
        space_name="s",
        seed=0,
        language="de",
        hub="en",
        space=d / "src.vec",
        hub_space=d / "trg.vec",
        dictionaries={"en-de": d / "dict.txt", "de-en": d / "dict.txt"},
        out_path=real,
        device="cpu",
    )
    edited = d / "edited.json"
    edited.write_text(real.read_text().rstrip()[:-1] + ', "space": "other"}')
    out = d / "out" / "t"
    rc = main(["-q", "tables", "--bli", str(edited), "-o", str(out)])
    _refused(capsys, rc, "tables", str(edited), "key 'space' repeated")
    assert _left(d / "out") == []
    assert main(["-q", "tables", "--bli", str(real), "-o", str(out)]) == 0


def test_read_dictionary_reads_surrogateescape_bytes_when_asked(tmp_path: Path) -> None:
    """What ``bli -d`` needs to read ``induce``'s output for spaces read with
    ``--encoding-errors surrogateescape`` (the CLI passes it through)."""
    from xlalign.core.errors import InputError
    from xlalign.evaluation.bli import read_dictionary

    dic = tmp_path / "d.txt"
    dic.write_bytes(b"w\xff1 w\xff1\na b\n")
    assert read_dictionary(dic, encoding_errors="surrogateescape") == {
        "w\udcff1": ["w\udcff1"],
        "a": ["b"],
    }
    with pytest.raises(InputError, match=r"d\.txt: invalid UTF-8 at line 1"):
        read_dictionary(dic, encoding_errors="replace")


def test_bli_dictionary_without_a_usable_pair_is_named(d: Path, capsys) -> None:
    (d / "absent.txt").write_text("zz yy\nqq rr\n")
    rc = main(["-q", "bli", "-d", str(d / "absent.txt"), str(d / "src.vec"), str(d / "trg.vec")])
    _refused(capsys, rc, "bli", str(d / "absent.txt"), "no dictionary pair")


def test_bli_reads_a_dictionary_induced_with_surrogateescape(d: Path, capsys) -> None:
    words = [*_words(N - 1), b"caf\xe9"]
    src = _vec(d / "bad.vec", words, seed=3)
    (d / "se.txt").write_bytes(b"".join(w + b" " + w + b"\n" for w in words[-5:]))
    argv = ["-q", "bli", "-d", str(d / "se.txt"), str(src), str(src)]
    rc = main([*argv, "--encoding-errors", "surrogateescape"])
    assert rc == 0, capsys.readouterr().err
    out = json.loads(capsys.readouterr().out)
    assert out["csls"]["coverage"] == pytest.approx(1.0)


def test_wordsim_semeval_archive_without_gold_names_the_archive(d: Path, capsys) -> None:
    import zipfile

    archive = d / "semeval.zip"
    with zipfile.ZipFile(archive, "w") as zf:  # the data file only, no gold key
        zf.writestr("SemEval17-Task2/test/subtask1-monolingual/data/en.test.data.txt", "a\tb\n")
    rc = main(
        ["-q", "wordsim", "--space", f"en={d / 'src.vec'}", "--semeval", str(archive),
         "-o", str(d / "out" / "ws.json")]
    )  # fmt: skip
    _refused(capsys, rc, "wordsim", str(archive), "gold")
    assert _left(d / "out") == []


def test_plots_refused_record_leaves_no_folder(d: Path, capsys) -> None:
    (d / "rec.json").write_text("{not json")
    out = d / "out" / "plots"
    rc = main(["-q", "plots", "--bli", str(d / "rec.json"), "--base-encoder", "x", "-o", str(out)])
    _refused(capsys, rc, "plots", str(d / "rec.json"))
    assert not out.exists()
