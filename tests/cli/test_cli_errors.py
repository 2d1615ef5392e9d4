"""A user's mistake never shows a traceback: a sweep of bad arguments and bad files through
every command, each refused before any work with one line naming the file or argument.

Exit status 2: a usage error (a bad number, a path that is not there or is the wrong kind);
1: a refused input (a file's contents, outputs that collide with each other or with an
input, an OSError named by its path). Each case runs ``xlalign.cli.main`` in-process;
the signals (Ctrl-C, SIGTERM) run it in a subprocess.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from xlalign.cli import main

ROOT = Path(__file__).resolve().parents[2]
N_WORDS, DIM = 40, 6
_s = str


def _write_vec(path: Path, words: list[str], seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = [f"{w} " + " ".join(f"{x:.4f}" for x in rng.normal(size=DIM)) for w in words]
    path.write_text(f"{len(words)} {DIM}\n" + "\n".join(rows) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def f(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Small good files, bad files, a directory and a regular file to misuse."""
    d = tmp_path_factory.mktemp("sweep")
    src_words = [f"s{i}" for i in range(N_WORDS)]
    trg_words = [f"t{i}" for i in range(N_WORDS)]
    files = {
        "src": d / "src.vec",
        "trg": d / "trg.vec",
        "dic": d / "dic.txt",
        "empty": d / "empty.txt",
        "header_only": d / "header.txt",
        "three_fields": d / "three.txt",
        "oov_dic": d / "oov.txt",
        "sim": d / "sim.txt",
        "oov_sim": d / "oov_sim.txt",
        "pred": d / "pred.txt",
        "gold": d / "gold.txt",
        "short": d / "short.txt",
        "text": d / "text.txt",
        "json": d / "rec.json",
        "bad_json": d / "bad.json",
        "npy_alone": d / "alone.npy",
        "dir": d / "adir",
        "file": d / "afile.txt",
    }
    _write_vec(files["src"], src_words, 1)
    _write_vec(files["trg"], trg_words, 2)
    files["dic"].write_text("".join(f"s{i} t{i}\n" for i in range(20)), encoding="utf-8")
    files["empty"].write_text("", encoding="utf-8")
    files["header_only"].write_text("source target\n", encoding="utf-8")
    files["three_fields"].write_text("s1 t1\ns2 t2 extra\n", encoding="utf-8")
    files["oov_dic"].write_text("x1 y1\nx2 y2\n", encoding="utf-8")
    files["sim"].write_text("s1\ts2\t3.0\ns3\ts4\t1.0\ns5\ts6\t2.0\ns7\ts8\t0.5\n")
    files["oov_sim"].write_text("a1\ta2\t3.0\na3\ta4\t1.0\na5\ta6\t2.0\na7\ta8\t0.5\n")
    files["pred"].write_text("0-0 1-1\n0-0\n", encoding="utf-8")
    files["gold"].write_text("0-0 1-1\n0-0\n", encoding="utf-8")
    files["short"].write_text("0-0\n", encoding="utf-8")
    files["text"].write_text("Ein Satz. Noch ein Satz hier.\n", encoding="utf-8")
    files["json"].write_text(json.dumps({"space": "x"}), encoding="utf-8")
    files["bad_json"].write_text("{not json", encoding="utf-8")
    files["bad_utf8_json"] = d / "bad_utf8.json"
    files["bad_utf8_json"].write_bytes(b'{"space": "\xff"}')
    np.save(files["npy_alone"], np.zeros((2, 3), dtype=np.float32))
    files["dir"].mkdir()
    files["file"].write_text("a regular file\n", encoding="utf-8")
    files["link_to_src"] = d / "link.vec"
    files["link_to_src"].symlink_to(files["src"])
    return files


# One case: (name, command line, exit status, what its one line must hold). In the
# command line and the text, {name} is a file of the fixture ``f``, {o} the test's own
# (empty) directory where outputs would go, {config} the repository's default config.
CASES: list[tuple[str, str, int, str]] = [
    # map
    ("map missing src", "map {o}/no.vec {trg} {o}/a.vec {o}/b.vec", 2,
     "argument src: {o}/no.vec: embedding file not found"),
    ("map src is a directory", "map {dir} {trg} {o}/a {o}/b", 2, "{dir}: is a directory"),
    ("map same output twice", "map {src} {trg} {o}/a.vec {o}/a.vec", 1,
     "{o}/a.vec: given for two outputs"),
    ("map output is the source", "map {src} {trg} {src} {o}/b.vec", 1,
     "{src}: output is also an input"),
    ("map output is the target", "map {src} {trg} {o}/a.vec {trg}", 1,
     "{trg}: output is also an input"),
    ("map output is the dictionary", "map {src} {trg} {dic} {o}/b.vec -d {dic}", 1,
     "output is also an input ({dic})"),
    ("map output is a link to the source", "map {src} {trg} {link_to_src} {o}/b.vec", 1,
     "output is also an input ({src})"),
    ("map outputs the same through ..", "map {src} {trg} {o}/a.vec {o}/x/../a.vec", 1,
     "given for two outputs"),
    ("map stats is an output", "map {src} {trg} {o}/a.vec {o}/b.vec --stats {o}/a.vec", 1,
     "given for two outputs"),
    ("map --max-words -5", "map {src} {trg} {o}/a {o}/b --max-words -5", 2,
     "argument --max-words: expected a positive integer, got '-5'"),
    ("map --max-words abc", "map {src} {trg} {o}/a {o}/b --max-words abc", 2,
     "argument --max-words"),
    ("map --seed -1", "map {src} {trg} {o}/a {o}/b --seed -1", 2, "argument --seed"),
    ("map unknown recipe", "map {src} {trg} {o}/a {o}/b --recipe nope", 2,
     "unknown recipe 'nope'"),
    ("map output under a regular file", "map {src} {trg} {file}/a.vec {o}/b", 2,
     "{file} is not a directory"),
    ("map output is a directory", "map {src} {trg} {dir} {o}/b", 2, "argument src_out"),
    ("map missing dictionary", "map {src} {trg} {o}/a {o}/b -d {o}/nodic.txt", 2,
     "argument --dictionary/-d: {o}/nodic.txt: file not found"),
    ("map .npy without its vocabulary", "map {npy_alone} {trg} {o}/a {o}/b", 2,
     "alone.vocab.txt: embedding file not found"),
    ("map --option without =", "map {src} {trg} {o}/a {o}/b --option orthogonal", 1,
     "--option 'orthogonal'"),
    ("map empty source file", "map {empty} {trg} {o}/a {o}/b", 1, "{empty}"),
    # bli
    ("bli --csls-k 0", "bli {src} {trg} -d {dic} --csls-k 0", 2, "argument --csls-k"),
    ("bli --k 0", "bli {src} {trg} -d {dic} --k 1 0", 2, "argument --k"),
    ("bli missing dictionary", "bli {src} {trg} -d {o}/no.txt", 2, "no.txt: file not found"),
    ("bli dictionary is a directory", "bli {src} {trg} -d {dir}", 2, "is a directory"),
    ("bli output is the dictionary", "bli {src} {trg} -d {dic} -o {dic}", 1,
     "output is also an input"),
    ("bli empty dictionary", "bli {src} {trg} -d {empty}", 1, "{empty}"),
    ("bli dictionary of a header only", "bli {src} {trg} -d {header_only}", 1,
     "{header_only}: line 1"),
    ("bli dictionary line of 3 fields", "bli {src} {trg} -d {three_fields}", 1,
     "{three_fields}: line 2"),
    ("bli no pair in vocabulary", "bli {src} {trg} -d {oov_dic}", 1, "vocabular"),
    ("bli missing --pair", "bli {src} {trg} -d {dic} --pair {o}/p.npz", 2, "argument --pair"),
    ("bli src .npy without vocabulary", "bli {npy_alone} {trg} -d {dic}", 2, "vocab.txt"),
    # induce
    ("induce output is the source", "induce {src} {trg} -o {src}", 1, "output is also an input"),
    ("induce --csls-k -1", "induce {src} {trg} -o {o}/i.txt --csls-k -1", 2, "--csls-k"),
    ("induce --max-rank 0", "induce {src} {trg} -o {o}/i.txt --max-rank 0", 2, "--max-rank"),
    # wordsim
    ("wordsim --space without =", "wordsim --space {src} --dataset {sim} -o {o}/w.json", 2,
     "expected LANG=PATH"),
    ("wordsim missing space", "wordsim --space en={o}/no.vec --dataset {sim} -o {o}/w.json", 2,
     "{o}/no.vec: embedding file not found"),
    ("wordsim a language twice", "wordsim --space en={src} --space en={trg} --dataset {sim} "
     "-o {o}/w.json", 2, "argument --space: 'en' given twice"),
    ("wordsim no dataset", "wordsim --space en={src} -o {o}/w.json", 1, "--dataset"),
    ("wordsim missing dataset", "wordsim --space en={src} --dataset {o}/no.txt -o {o}/w.json",
     2, "argument --dataset"),
    ("wordsim nothing covered", "wordsim --space en={src} --dataset {oov_sim} -o {o}/w.json", 1,
     "no pair of {oov_sim} is covered"),
    ("wordsim output is the dataset", "wordsim --space en={src} --dataset {sim} -o {sim}", 1,
     "output is also an input"),
    ("wordsim empty dataset", "wordsim --space en={src} --dataset {empty} -o {o}/w.json", 1,
     "{empty}"),
    ("wordsim missing semeval zip", "wordsim --space en={src} --semeval {o}/s.zip -o {o}/w", 2,
     "argument --semeval"),
    # split-dictionary
    ("split --test-fraction 1.5", "split-dictionary --lang de --dictionary {dic} --hub-vocab "
     "{text} --vocab {text} -o {o} --test-fraction 1.5", 2, "argument --test-fraction"),
    ("split missing vocabulary", "split-dictionary --lang de --dictionary {dic} --hub-vocab "
     "{text} --vocab {o}/v.tsv -o {o}", 2, "argument --vocab"),
    ("split output dir is a file", "split-dictionary --lang de --dictionary {dic} --hub-vocab "
     "{text} --vocab {text} -o {file}", 2, "{file}: exists and is not a directory"),
    # tables
    ("tables missing record", "tables --bli {o}/r.json -o {o}", 2, "argument --bli"),
    ("tables output dir is a file", "tables --bli {json} -o {file}", 2, "not a directory"),
    ("tables record not JSON", "tables --bli {bad_json} -o {o}/t", 1, "{bad_json}"),
    ("tables record not UTF-8", "tables --bli {bad_utf8_json} -o {o}/t", 1,
     "{bad_utf8_json}: invalid UTF-8 at byte 11"),
    ("statistics record not UTF-8", "statistics --base-encoder x --encoders x --bli "
     "{bad_utf8_json} -o {o}", 1, "{bad_utf8_json}: invalid UTF-8"),
    # aer
    ("aer missing prediction", "aer {o}/p.txt {gold}", 2, "argument predicted"),
    ("aer output is the gold", "aer {pred} {gold} -o {gold}", 1, "output is also an input"),
    ("aer gold shorter than prediction", "aer {pred} {short} --format pharaoh", 1, "{short}"),
    ("aer gold is a directory", "aer {pred} {dir}", 2, "argument gold: {dir}: is a directory"),
    # align
    ("align missing --priors", "align --source-text {text} --target-text {text} -o {o}/al "
     "--priors {o}/pri", 2, "argument --priors: {o}/pri: file not found"),
    ("align --threads 0", "align --source-text {text} --target-text {text} -o {o}/al "
     "--threads 0", 2, "argument --threads"),
    ("align --null-prior 2", "align --source-text {text} --target-text {text} -o {o}/al "
     "--null-prior 2", 2, "argument --null-prior"),
    ("align dictionary is the corpus", "align --source-text {text} --target-text {pred} "
     "-o {o}/al --dictionary {text}", 1, "output is also an input"),
    ("align missing --tmpdir", "align --source-text {text} --target-text {text} -o {o}/al "
     "--tmpdir {o}/tmp", 2, "argument --tmpdir: {o}/tmp: directory not found"),
    ("align no corpus", "align -o {o}/al", 2, "--source-text"),
    ("align output dir is a file", "align --source-text {text} --target-text {text} -o {file}",
     2, "argument --output-dir/-o"),
    # corpus
    ("sample missing source", "sample --lang de --source text:{o}/no.txt -o {o}/s.txt", 2,
     "{o}/no.txt: file not found"),
    ("sample unknown source type", "sample --lang de --source oscar:x -o {o}/s.txt", 2,
     "TYPE:PATH"),
    ("sample unknown language", "sample --lang xx --source text:{text} -o {o}/s.txt", 1,
     "unknown ISO 639 language 'xx'"),
    ("sample --max-sentences 0", "sample --lang de --source text:{text} -o {o}/s.txt "
     "--max-sentences 0", 2, "argument --max-sentences"),
    ("sample output is the source", "sample --lang de --source text:{text} -o {text}", 1,
     "output is also an input"),
    ("segment input is a directory", "segment --lang de -i {dir} -o {o}/seg.txt", 2,
     "is a directory"),
    ("segment output is the input", "segment --lang de --tool icu -i {text} -o {text}", 1,
     "output is also an input"),
    ("segment stats is the output", "segment --lang de --tool icu -i {text} -o {o}/seg.txt "
     "--stats {o}/seg.txt", 1, "given for two outputs"),
    ("parallel missing second file", "parallel --src en --tgt de --source "
     "lines:{text},{o}/no.txt -o {o}/c.tsv", 2, "{o}/no.txt: file not found"),
    ("parallel --max-ratio -1", "parallel --src en --tgt de --source lines:{text},{text} "
     "-o {o}/c.tsv --max-ratio -1", 2, "argument --max-ratio"),
    # static
    ("extract missing encoder", "extract --lang de --corpus {text} --encoder {o}/enc -o {o}/x",
     2, "{o}/enc: directory not found"),
    ("extract corpus is a directory", "extract --lang de --corpus {dir} --encoder {dir} "
     "-o {o}/x", 2, "argument --corpus"),
    ("extract --layer -1", "extract --lang de --corpus {text} --encoder {dir} -o {o}/x "
     "--layer -1", 2, "argument --layer"),
    ("x2static missing cache", "x2static {o}/cache {text} --lang de --vec {o}/x.vec", 2,
     "argument cache"),
    ("x2static stats is the vec", "x2static {dir} {text} --lang de --vec {o}/x.vec "
     "--stats {o}/x.vec", 1, "given for two outputs"),
    ("x2static --epochs 0", "x2static {dir} {text} --lang de --vec {o}/x.vec --epochs 0", 2,
     "argument --epochs"),
    # zero-shot, pre-training
    ("finetune missing encoder", "finetune udpos {o}/enc --train {json} --dev {json} -o {o}/ft",
     2, "argument encoder"),
    ("finetune --test without =", "finetune udpos {dir} --train {json} --dev {json} --test de "
     "-o {o}/ft", 2, "expected LANG=PATH"),
    ("finetune train is a directory", "finetune udpos {dir} --train {dir} --dev {json} "
     "-o {o}/ft", 2, "argument --train"),
    ("finetune --continual not an object", "finetune udpos {dir} --train {json} --dev {json} "
     "-o {o}/ft --continual [1]", 2, "argument --continual: expected a JSON object"),
    ("finetune a test language twice", "finetune udpos {dir} --train {json} --dev {json} "
     "--test de={json} de={sim} -o {o}/ft", 2, "argument --test: 'de' given twice"),
    ("retrieve missing pairs", "retrieve tatoeba {dir} de={o}/p.jsonl -o {o}/r.json", 2,
     "{o}/p.jsonl: file not found"),
    ("retrieve --batch-size 0", "retrieve tatoeba {dir} de={json} -o {o}/r.json "
     "--batch-size 0", 2, "argument --batch-size"),
    ("pretrain missing text", "pretrain mlm {dir} -o {o}/pt --text en={o}/en.txt", 2,
     "argument --text"),
    ("pretrain output is the encoder", "pretrain mlm {dir} -o {dir} --text en={text}", 1,
     "holds the input"),
    ("pretrain without run", "pretrain", 1, "RUN, ENCODER and --output-dir"),
    ("pretrain --set steps=abc", "pretrain mlm {dir} -o {o}/pt --text en={text} --set steps=abc",
     2, "argument --set: steps='abc': expected an integer"),
    ("pretrain --set unknown key", "pretrain mlm {dir} -o {o}/pt --text en={text} --set nope=1",
     2, "argument --set: unknown key 'nope'"),
    ("finetune --set epochs=abc", "finetune udpos {dir} --train {json} --dev {json} -o {o}/ft "
     "--set epochs=abc", 2, "argument --set: epochs='abc': expected a number"),
    ("finetune --set batch_size=2.5", "finetune udpos {dir} --train {json} --dev {json} "
     "-o {o}/ft --set batch_size=2.5", 2, "batch_size=2.5: expected an integer"),
    # results
    ("statistics missing record", "statistics --base-encoder x --encoders x --bli {o}/r.json "
     "-o {o}", 2, "argument --bli"),
    ("statistics --alpha 2", "statistics --base-encoder x --encoders x --alpha 2 -o {o}", 2,
     "argument --alpha"),
    ("plots learning curve is a directory", "plots --base-encoder x --learning-curve {dir} "
     "-o {o}", 2, "argument --learning-curve"),
    # analyses
    ("derive missing config", "derive --config {o}/c.yaml --spec trans --text {text} -o {o}/d",
     2, "argument --config"),
    ("derive missing task dev file", "derive --config {config} --spec trans --text {text} "
     "--task udpos {json} {o}/dev.jsonl -o {o}/d", 2, "argument --task: {o}/dev.jsonl"),
    ("derive a task twice", "derive --config {config} --spec trans --text {text} --task udpos "
     "{json} {json} --task udpos {json} {json} -o {o}/d", 2, "argument --task: 'udpos' given"),
    ("meta-cross missing text", "meta-cross --config {config} none --mono {dir} --text de "
     "{o}/de.txt -o {o}/m", 2, "argument --text"),
    ("analyse missing links", "analyse --config {config} --encoder {dir} --distances en-de "
     "{text} {o}/links.txt -o {o}/a.json", 2, "argument --distances"),
    ("eflomal-reference output is the corpus", "eflomal-reference --config {config} "
     "--corpus {text} -o {text}", 1, "output is also an input"),
    # download
    ("download output under a file", "download http://localhost:9/x {file}/x", 2,
     "argument output"),
    ("download --retries -1", "download http://localhost:9/x {o}/x --retries -1", 2,
     "argument --retries"),
    # usage
    ("unknown command", "mapp", 2, "invalid choice: 'mapp'"),
    ("unknown option", "bli {src} {trg} -d {dic} --nope", 2, "unrecognized arguments: --nope"),
]  # fmt: skip


def _one_line_error(err: str, command: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err
    assert len(lines) == 1, err
    assert lines[0].startswith(f"xlalign{command}: error: "), lines[0]
    return lines[0]


def _fill(text: str, f: dict[str, Path], out: Path) -> str:
    return text.format(**f, o=out, config=ROOT / "config" / "config.yaml")


@pytest.mark.parametrize(("name", "line", "status", "needle"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_no_traceback(
    name: str,
    line: str,
    status: int,
    needle: str,
    f: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = _fill(line, f, tmp_path).split()
    rc = main(argv)
    command = "" if name.startswith("unknown") else f" {argv[0]}"
    error = _one_line_error(capsys.readouterr().err, command)
    assert rc == status, error
    assert _fill(needle, f, tmp_path) in error
    # refused before any work: nothing written where the outputs would go
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_statistics_refuses_to_overwrite_its_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = tmp_path / "statistics.json"
    record.write_text("{}", encoding="utf-8")
    argv = ["statistics", "--base-encoder", "x", "--encoders", "x", "--runs", str(record)]
    assert main([*argv, "-o", str(tmp_path)]) == 1
    line = _one_line_error(capsys.readouterr().err, " statistics")
    assert f"{record}: output is also an input" in line
    assert record.read_text(encoding="utf-8") == "{}"


def test_the_sweep_is_broad() -> None:
    assert len(CASES) >= 60 and len({c[0] for c in CASES}) == len(CASES)
    commands = {c[1].split()[0] for c in CASES}
    assert len(commands) >= 24  # every command that reads or writes a user's file


# --------------------------------------------------------------------------- OSErrors


@pytest.mark.parametrize(
    ("exc", "needle"),
    [
        (OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), "No space left on device"),
        (PermissionError(errno.EACCES, os.strerror(errno.EACCES), "/ro/out.json"), "/ro/out.json"),
        (IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), "/x/out.json"), "/x/out.json"),
        (OSError("No model here.\nCheck the path."), "No model here. Check the path."),
    ],
    ids=["ENOSPC", "EACCES", "EISDIR", "no-errno"],
)
def test_os_error_is_one_line_naming_the_path(
    exc: OSError,
    needle: str,
    f: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import xlalign.cli.wordalign as wa

    def fail(*_a: object, **_k: object) -> None:
        raise exc

    monkeypatch.setattr(wa, "write_json", fail)
    out = tmp_path / "aer.json"
    rc = main(["aer", _s(f["pred"]), _s(f["gold"]), "-o", _s(out)])
    line = _one_line_error(capsys.readouterr().err, " aer")
    assert rc == 1 and needle in line
    # a full disk: the OSError has no path, the outputs are named; not for other errors
    assert (str(out) in line) == (exc.errno == errno.ENOSPC)


def test_device_output_refused_device_input_read(
    f: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """/dev/full as an output is refused before any work (the atomic writer would rename a
    file over it); a device or a pipe as an input is read as a stream."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    rc = main(["aer", _s(f["pred"]), _s(f["gold"]), "-o", "/dev/full"])
    line = _one_line_error(capsys.readouterr().err, " aer")
    assert rc == 2 and "/dev/full: not a regular file" in line
    rc = main(["bli", _s(f["src"]), _s(f["trg"]), "-d", "/dev/null"])
    line = _one_line_error(capsys.readouterr().err, " bli")
    assert rc == 1 and "/dev/null" in line  # read, and found empty


def test_a_message_of_several_lines_is_told_on_one(
    f: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import xlalign.wordalign.aer as aer
    from xlalign.core.errors import InputError

    def refuse(*_a: object, **_k: object) -> None:
        raise InputError("g.txt: invalid links:\n  line 1: bad\n  line 4: worse\n")

    monkeypatch.setattr(aer, "score_files", refuse)
    assert main(["aer", _s(f["pred"]), _s(f["gold"])]) == 1
    line = _one_line_error(capsys.readouterr().err, " aer")
    assert line == "xlalign aer: error: g.txt: invalid links: line 1: bad; line 4: worse"


def test_unexpected_exception_still_shows_a_traceback(
    f: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    import xlalign.wordalign.aer as aer

    def bug(*_a: object, **_k: object) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(aer, "score_files", bug)
    with pytest.raises(ZeroDivisionError):
        main(["aer", _s(f["pred"]), _s(f["gold"])])


# --------------------------------------------------------------------------- bli, wordsim


def test_bli_records_the_csls_k_used_and_refuses_a_header(
    f: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["bli", _s(f["src"]), _s(f["trg"]), "-d", _s(f["dic"]), "--oov", "miss"]
    assert main([*argv, "--csls-k", "1000"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["csls"]["csls_k"] == N_WORDS and out["csls"]["csls_k_asked"] == 1000
    assert out["nn"]["csls_k"] is None and "csls_k_asked" not in out["nn"]
    assert main([*argv, "--csls-k", "10"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert plain["csls"]["csls_k"] == 10 and "csls_k_asked" not in plain["csls"]
    # capping changes the scores exactly as asking for the vocabulary size does
    assert main([*argv, "--csls-k", str(N_WORDS)]) == 0
    same = json.loads(capsys.readouterr().out)
    assert same["csls"]["mrr"] == out["csls"]["mrr"] and "csls_k_asked" not in same["csls"]
    # a header line is not a query: refused with its line, before any score
    dic = tmp_path / "dic.txt"
    dic.write_text("source target\n" + f["dic"].read_text(encoding="utf-8"), encoding="utf-8")
    assert main([*argv[:4], _s(dic)]) == 1
    line = _one_line_error(capsys.readouterr().err, " bli")
    assert f"{dic}: line 1" in line and "header" in line


def test_wordsim_nothing_covered_writes_nothing(
    f: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "w.json"
    argv = ["wordsim", "--space", f"en={f['src']}", "--dataset", _s(f["oov_sim"]), "-o"]
    assert main([*argv, _s(out)]) == 1
    line = _one_line_error(capsys.readouterr().err, " wordsim")
    assert str(f["oov_sim"]) in line and str(f["src"]) in line and not out.exists()
    assert main(["wordsim", "--space", f"en={f['src']}", "--dataset", _s(f["sim"]), "-o",
                 _s(out)]) == 0  # fmt: skip
    assert json.loads(out.read_text())["results"][0]["found"] == 4


# --------------------------------------------------------------------------- signals

_SLOW = """
import sys, time
import xlalign.wordalign.aer as aer
real = aer.score_files
def slow(*a, **k):
    print("started", flush=True)
    time.sleep(60)
    return real(*a, **k)
aer.score_files = slow
from xlalign.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(
    ("sig", "status", "message"),
    [(signal.SIGINT, 130, "xlalign aer: interrupted"),
     (signal.SIGTERM, 143, "xlalign aer: stopped by SIGTERM")],
    ids=["ctrl-c", "sigterm"],
)  # fmt: skip
def test_signal_part_way_exits_cleanly(
    sig: signal.Signals, status: int, message: str, f: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "aer.json"
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW, "aer", str(f["pred"]), str(f["gold"]), "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        # Ctrl-C as a terminal delivers it: a test run started in the background of a
        # non-interactive shell (nohup, CI wrappers) inherits SIGINT ignored, and Python
        # then keeps ignoring it, as a program should.
        preexec_fn=_sigint_default,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "started"
    time.sleep(0.2)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == status, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err and len(lines) == 1 and lines[0].startswith(message)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no output, no temporary


_LOUD = """
import sys
import xlalign.wordalign.aer as aer
real = aer.score_files
def loud(*a, **k):
    for _ in range(10000):
        print("x" * 100)
    return real(*a, **k)
aer.score_files = loud
from xlalign.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_reader_gone_is_not_an_error(f: dict[str, Path], tmp_path: Path) -> None:
    """``xlalign ... | head``: stdout closed early ends the command silently (141)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _LOUD,
         "aer", str(f["pred"]), str(f["gold"])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=30) == 141 and err == ""


def test_interrupt_while_writing_leaves_no_temporary(
    f: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """Ctrl-C inside an atomic write: the temporary is removed, exit 130, one line."""
    import xlalign.core.io as io

    real = io.atomic_path

    def interrupted(path, **kw):
        ctx = real(path, **kw)

        class Wrap:
            def __enter__(self):
                tmp = ctx.__enter__()
                tmp.write_text("partial")
                raise_ = KeyboardInterrupt()
                ctx.__exit__(type(raise_), raise_, None)
                raise raise_

            def __exit__(self, *a):
                return False

        return Wrap()

    monkeypatch.setattr(io, "atomic_path", interrupted)
    out = tmp_path / "aer.json"
    rc = main(["aer", _s(f["pred"]), _s(f["gold"]), "-o", _s(out)])
    err = capsys.readouterr().err
    assert rc == 130 and err.strip() == "xlalign aer: interrupted"
    assert sorted(p.name for p in tmp_path.iterdir()) == []
