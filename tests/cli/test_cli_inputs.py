"""The CLI on inputs that parse but hold nothing usable, and on fastText-written vectors.

* a corpus with no usable pair (``eflomal-reference``) and malformed result records
  (``statistics``, ``plots``, ``tables``) are refused with the file and the key named,
  exit status 1, nothing written;
* ``induce`` records the CSLS k it used and the k asked, as ``bli`` does;
* ``--encoding-errors`` and ``--duplicates`` on every command that reads a user's
  ``.vec``: a word that is not UTF-8 loads by default with its count in the stats,
  ``strict`` refuses it naming the line, ``surrogateescape`` keeps its bytes (written back
  by the vector and dictionary writers, shown as ``\\xNN`` in JSON);
* a ``.npy`` space's manifest counts among its files for the collision checks.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_cli_errors import _one_line_error as one_line_error

from xlalign.cli import main
from xlalign.cli.common import space_sides
from xlalign.core.io import json_text, read_json, write_json

ROOT = Path(__file__).resolve().parents[2]
DIM = 4


def _one_line_error(err: str, command: str) -> str:
    return one_line_error(err, f" {command}")


def _vec(path: Path, words: list[bytes], seed: int, zero: set[int] = frozenset()) -> Path:
    rng = np.random.default_rng(seed)
    rows = [f"{len(words)} {DIM}\n".encode()]
    for i, w in enumerate(words):
        values = np.zeros(DIM) if i in zero else rng.normal(size=DIM)
        rows.append(w + b" " + " ".join(f"{x:.4f}" for x in values).encode() + b"\n")
    path.write_bytes(b"".join(rows))
    return path


N = 30
BAD = b"caf\xe9"  # Latin-1, not UTF-8: line 5 of src.vec (row 4)


@pytest.fixture
def f(tmp_path: Path) -> dict[str, Path]:
    d = tmp_path / "in"
    d.mkdir()
    src = [f"s{i}".encode() for i in range(N)]
    src[3] = BAD
    files = {
        "src": _vec(d / "src.vec", src, 1),
        "trg": _vec(d / "trg.vec", [f"t{i}".encode() for i in range(N)], 2),
        # the invalid word has a zero row: dropped, and listed in the stats as an example
        "zero": _vec(d / "zero.vec", src, 3, zero={3}),
        "dup": _vec(
            d / "dup.vec", [b"s0", b"s1", b"s0", *(f"s{i}".encode() for i in range(3, N))], 4
        ),
        "dic": d / "dic.txt",
        "sim": d / "sim.txt",
    }
    files["dic"].write_text("".join(f"s{i} t{i}\n" for i in range(12)), encoding="utf-8")
    files["sim"].write_text(
        "s1\ts2\t3.0\ns4\ts5\t1.0\ns5\ts6\t2.0\ns7\ts8\t0.5\n", encoding="utf-8"
    )
    return files


# --------------------------------------------------------------------------- eflomal-reference


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"garbage \x00 not a corpus\nmore garbage\n", "line 1: header"),
        (b"", "line 1: empty file"),
        (b"id\tsource\ttarget\n", "no sentence pair to train eflomal on"),
        (b"id\tsource\ttarget\np1\ta b\n", "line 2: 2 tab-separated columns; expected 3"),
        (b"id\tsource\ttarget\np1\ta  b\tc\n", "line 2: source side: an empty token"),
    ],
    ids=["garbage", "empty", "header-only", "two-columns", "empty-token"],
)
def test_eflomal_reference_refuses_a_corpus_without_usable_pairs(
    content: bytes, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus.tsv"
    corpus.write_bytes(content)
    out = tmp_path / "out" / "ref.json"
    argv = ["eflomal-reference", "--config", str(ROOT / "config" / "config.yaml")]
    rc = main([*argv, "--corpus", str(corpus), "-o", str(out)])
    line = _one_line_error(capsys.readouterr().err, "eflomal-reference")
    assert rc == 1, line
    assert f"{corpus}: " in line and needle in line
    assert not out.parent.exists()


# --------------------------------------------------------------------------- result records

_RUN = {
    "task": "pos-gold",
    "encoder": "x",
    "seed": 1,
    "scores": {},
    "summary": {"english": 90.0, "per_language": {"de": 70.0}},
}
_RET = {"set": "tatoeba", "encoder": "x", "languages": {"de": {"accuracy": {"en->xx": 50.0}}}}
_BLI = {"space": "s", "seed": 0, "language": "de", "hub": "en", "results": {}}


def _without(rec: dict, key: str) -> dict:
    return {k: v for k, v in rec.items() if k != key}


# (name, option, record, what the one line must hold besides the file)
RECORDS = [
    ("run not an object", "--runs", [1, 2], "a JSON list; expected a fine-tuning result"),
    ("run without task", "--runs", _without(_RUN, "task"), "missing key 'task'"),
    ("run without seed", "--runs", _without(_RUN, "seed"), "missing key 'seed'"),
    ("run seed a string", "--runs", {**_RUN, "seed": "1"}, "key 'seed': expected"),
    ("run without summary", "--runs", _without(_RUN, "summary"), "missing key 'summary'"),
    ("run without per_language", "--runs", {**_RUN, "summary": {"english": 1.0}},
     "summary: missing key 'per_language'"),
    ("run per_language a number", "--runs", {**_RUN, "summary": {"per_language": 3}},
     "summary: key 'per_language': expected an object"),
    ("run score a string", "--runs", {**_RUN, "summary": {"per_language": {"de": "70"}}},
     "summary.per_language.de: expected a number"),
    ("run without scores", "--runs", _without(_RUN, "scores"), "missing key 'scores'"),
    ("retrieval without set", "--retrieval", _without(_RET, "set"), "missing key 'set'"),
    ("retrieval without languages", "--retrieval", _without(_RET, "languages"),
     "missing key 'languages'"),
    ("retrieval language a list", "--retrieval", {**_RET, "languages": {"de": [1]}},
     "languages.de: expected an object"),
    ("retrieval accuracy a string", "--retrieval",
     {**_RET, "languages": {"de": {"accuracy": {"en->xx": "high"}}}},
     "languages.de.accuracy.en->xx: expected a number"),
    ("retrieval sweep not a list", "--retrieval",
     {**_RET, "languages": {"de": {"sweep": {"en->xx": 3}}}},
     "languages.de.sweep.en->xx: expected a list"),
    ("retrieval sweep with a null", "--retrieval",
     {**_RET, "languages": {"de": {"sweep": {"en->xx": [50.0, None]}}}},
     "languages.de.sweep.en->xx[1]: expected a number"),
    ("bli without space", "--bli", _without(_BLI, "space"), "missing key 'space'"),
    ("bli a word-similarity record", "--bli", {**_BLI, "results": []},
     "key 'results': expected a mapping"),
    ("bli not an object", "--bli", "text", "expected a JSON object"),
]  # fmt: skip


@pytest.mark.parametrize("command", ["statistics", "plots"])
@pytest.mark.parametrize(
    ("name", "option", "record", "needle"), RECORDS, ids=[r[0] for r in RECORDS]
)
def test_a_malformed_record_is_refused_naming_file_and_key(
    command: str,
    name: str,
    option: str,
    record: object,
    needle: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    out = tmp_path / "out"
    argv = [command, "--base-encoder", "x", "--tasks", "pos-gold", option, str(path)]
    if command == "statistics":
        argv += ["--encoders", "x", "--retrieval-sets", "tatoeba"]
    rc = main([*argv, "-o", str(out)])
    line = _one_line_error(capsys.readouterr().err, command)
    assert rc == 1, line
    assert f"{path}: " in line and needle in line
    assert not out.exists() or not any(out.iterdir())


def test_a_record_unread_without_tasks_is_still_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before, a malformed run given without ``--tasks`` gave an empty table and exit 0."""
    path = tmp_path / "ft1.json"
    path.write_text('{"foo": 1}', encoding="utf-8")
    argv = ["statistics", "--base-encoder", "x", "--encoders", "x", "--runs", str(path)]
    assert main([*argv, "-o", str(tmp_path / "out")]) == 1
    line = _one_line_error(capsys.readouterr().err, "statistics")
    assert f"{path}: missing key 'task'" in line
    assert not (tmp_path / "out" / "statistics.md").exists()


@pytest.mark.parametrize(
    ("option", "record", "needle"),
    [
        ("--bli", {**_BLI, "results": []}, "key 'results': expected a mapping"),
        ("--wordsim", {**_BLI, "results": {}}, "key 'results': expected a list"),
        ("--wordsim", {**_BLI, "results": [{"dataset": "x"}]}, "results[0]: missing key"),
    ],
    ids=["bli-given-wordsim", "wordsim-given-bli", "wordsim-entry"],
)
def test_tables_refuses_a_record_of_the_other_kind(
    option: str, record: dict, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "bli.json"
    good.write_text(json.dumps(_BLI), encoding="utf-8")
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    argv = ["tables", "--bli", str(path if option == "--bli" else good)]
    if option == "--wordsim":
        argv += ["--wordsim", str(path)]
    rc = main([*argv, "-o", str(tmp_path / "out")])
    line = _one_line_error(capsys.readouterr().err, "tables")
    assert rc == 1 and f"{path}: " in line and needle in line


@pytest.mark.parametrize(
    ("summary", "needle"),
    [
        ({"rows": [1]}, "rows[0]: expected an object"),
        ({"rows": [{"size": "1k", "method": "m", "sentences": {"de": "many"}}]},
         "rows[0].sentences.de: expected a number"),
        ({"rows": [{"size": "1k", "method": "m", "sentences": {"de": 5},
                    "joint/en-de/nn/miss": "x"}]}, "rows[0].joint/en-de/nn/miss"),
    ],
    ids=["row", "sentences", "value"],
)  # fmt: skip
def test_plots_refuses_a_malformed_learning_curve(
    summary: dict, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "lc.json"
    path.write_text(json.dumps(summary), encoding="utf-8")
    rc = main(["plots", "--base-encoder", "x", "--learning-curve", str(path), "-o", str(tmp_path)])
    line = _one_line_error(capsys.readouterr().err, "plots")
    assert rc == 1 and f"{path}: " in line and needle in line


def test_plots_refuses_a_malformed_pretraining_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s1.json"
    rec = {"row": "mlm", "seed": 1, "learning_curve": [{"step": 1, "mlm_loss": "nan?"}]}
    path.write_text(json.dumps(rec), encoding="utf-8")
    rc = main(["plots", "--base-encoder", "x", "--pretrain", str(path), "-o", str(tmp_path)])
    line = _one_line_error(capsys.readouterr().err, "plots")
    assert rc == 1 and f"{path}: learning_curve[0].mlm_loss: expected a number" in line


# --------------------------------------------------------------------------- induce: CSLS k


def test_induce_records_the_csls_k_used_and_asked(
    f: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, stats = tmp_path / "induced.txt", tmp_path / "induced.json"
    argv = ["induce", str(f["trg"]), str(f["trg"]), "-o", str(out)]
    assert main([*argv, "--csls-k", "1000", "--stats", str(stats)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["csls_k"] == N and printed["csls_k_asked"] == 1000
    assert read_json(stats) == printed
    # a space induced against itself: every word is its own translation
    assert printed["pairs"] == N and printed["identical"] == N
    assert main([*argv, "--csls-k", "5"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert plain["csls_k"] == 5 and "csls_k_asked" not in plain
    # the cap is the candidates' count (--max-rank), not the file's
    assert main([*argv, "--csls-k", "20", "--max-rank", "8"]) == 0
    capped = json.loads(capsys.readouterr().out)
    assert capped["csls_k"] == 8 and capped["csls_k_asked"] == 20 and capped["pairs"] == 8
    assert main([*argv, "--retrieval", "nn", "--csls-k", "1000"]) == 0
    nn = json.loads(capsys.readouterr().out)
    assert nn["csls_k"] is None and "csls_k_asked" not in nn


# --------------------------------------------------------------------------- invalid UTF-8


def test_invalid_utf8_loads_by_default_with_its_count(
    f: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bli.json"
    assert main(["bli", str(f["src"]), str(f["trg"]), "-d", str(f["dic"]), "-o", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    src = read_json(out)["spaces"]["src"]
    assert printed["spaces"]["src"] == src
    assert src["encoding_errors"] == "replace" and src["invalid_utf8_rows"] == 1
    assert src["invalid_utf8_lines"] == [5] and src["rows"] == N
    assert read_json(out)["spaces"]["trg"]["invalid_utf8_rows"] == 0
    # ignore (MUSE's way): the row kept under the word without the byte
    assert main(["bli", str(f["src"]), str(f["trg"]), "-d", str(f["dic"]),
                 "--encoding-errors", "ignore"]) == 0  # fmt: skip
    ignored = json.loads(capsys.readouterr().out)["spaces"]["src"]
    assert ignored["encoding_errors"] == "ignore" and ignored["invalid_utf8_rows"] == 1


@pytest.mark.parametrize(
    "command",
    [
        "bli {src} {trg} -d {dic}",
        "map --recipe orthogonal -d {dic} {src} {trg} {o}/a.vec {o}/b.vec",
        "induce {src} {trg} -o {o}/i.txt",
        "wordsim --space en={src} --dataset {sim} -o {o}/w.json",
    ],
    ids=["bli", "map", "induce", "wordsim"],
)
def test_strict_refuses_naming_the_line(
    command: str, f: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    o = tmp_path / "out"
    o.mkdir()
    argv = command.format(**f, o=o).split()
    rc = main([*argv, "--encoding-errors", "strict"])
    line = _one_line_error(capsys.readouterr().err, argv[0])
    assert rc == 1 and f"{f['src']}: line 5: the word is not valid UTF-8" in line
    assert list(o.iterdir()) == []


@pytest.mark.parametrize(
    ("option", "value"), [("--encoding-errors", "latin-1"), ("--duplicates", "last")]
)
def test_an_unknown_policy_is_a_usage_error(
    option: str, value: str, f: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["bli", str(f["src"]), str(f["trg"]), "-d", str(f["dic"]), option, value])
    line = _one_line_error(capsys.readouterr().err, "bli")
    assert rc == 2 and f"argument {option}: expected one of" in line and repr(value) in line


def test_surrogateescape_keeps_the_bytes_and_json_still_writes(
    f: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    opt = ["--encoding-errors", "surrogateescape"]
    # map: the invalid word's zero row is dropped and listed in the stats
    stats, a, b = tmp_path / "map.json", tmp_path / "a.vec", tmp_path / "b.vec"
    argv = ["map", "--recipe", "orthogonal", "-d", str(f["dic"]), str(f["zero"]), str(f["trg"])]
    assert main([*argv, str(a), str(b), "--stats", str(stats), *opt]) == 0
    text = stats.read_bytes().decode("utf-8")  # valid UTF-8
    src = json.loads(text)["source"]
    assert src["examples"] == ["caf\\xe9"] and src["invalid_utf8_rows"] == 1
    assert json.loads(capsys.readouterr().out)["source"] == src
    # induce: the word's own bytes come back in the dictionary
    out = tmp_path / "induced.txt"
    assert main(["induce", str(f["src"]), str(f["src"]), "-o", str(out), *opt]) == 0
    assert json.loads(capsys.readouterr().out)["source"]["invalid_utf8_rows"] == 1
    assert BAD + b" " + BAD + b"\n" in out.read_bytes()
    # wordsim: what reading did is in the record
    rec = tmp_path / "w.json"
    argv = ["wordsim", "--space", f"en={f['src']}", "--dataset", str(f["sim"]), "-o", str(rec)]
    assert main([*argv, *opt]) == 0
    read = read_json(rec)["spaces_read"]["en"]
    assert read["encoding_errors"] == "surrogateescape" and read["invalid_utf8_lines"] == [5]


def test_duplicates_first_keeps_the_first_row(
    f: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["bli", str(f["dup"]), str(f["trg"]), "-d", str(f["dic"])]
    assert main(argv) == 1
    line = _one_line_error(capsys.readouterr().err, "bli")
    assert f"{f['dup']}: line 4: duplicate word 's0' (first on line 2)" in line
    assert main([*argv, "--duplicates", "first"]) == 0
    src = json.loads(capsys.readouterr().out)["spaces"]["src"]
    assert src["duplicates_dropped"] == 1 and src["rows"] == N - 1


def test_json_text_and_write_json_cope_with_escaped_bytes(tmp_path: Path) -> None:
    word = BAD.decode("utf-8", "surrogateescape")
    assert json_text(word) == "caf\\xe9" and json_text("café") == "café"
    assert json_text("a\ud800") == "a\\ud800"  # a lone surrogate that is no escaped byte
    path = tmp_path / "s.json"
    write_json(path, {word: [word, 1], "n": "ü"})
    assert read_json(path) == {"caf\\xe9": ["caf\\xe9", 1], "n": "ü"}
    assert "ü" in path.read_text(encoding="utf-8")  # the rest as written before


# --------------------------------------------------------------------------- manifests


def test_a_space_manifest_is_one_of_its_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from xlalign.static.vectors import write_npy

    stem = tmp_path / "de"
    words = [f"s{i}" for i in range(N)]
    write_npy(words, np.random.default_rng(0).normal(size=(N, DIM)), stem)
    npy = f"{stem}.npy"
    assert space_sides(npy) == [npy, f"{stem}.vocab.txt", f"{stem}.manifest.json"]
    dic = tmp_path / "dic.txt"
    dic.write_text("s1 s1\ns2 s2\n", encoding="utf-8")
    rc = main(["bli", npy, npy, "-d", str(dic), "-o", f"{stem}.manifest.json"])
    line = _one_line_error(capsys.readouterr().err, "bli")
    assert rc == 1 and f"{stem}.manifest.json: output is also an input" in line
    # a pair without a manifest (written by hand) is still read
    Path(f"{stem}.manifest.json").unlink()
    assert main(["-q", "bli", npy, npy, "-d", str(dic)]) == 0
    assert json.loads(capsys.readouterr().out)["csls"]["p@1"] == 1.0


# --------------------------------------------------------------------------- x2static


def test_x2static_reads_its_init_vectors_with_the_policy(tmp_path: Path) -> None:
    import dataclasses

    from synthetic_cache import synthetic

    from xlalign.cli import build_parser, x2static_job
    from xlalign.core.errors import ConfigError, InputError
    from xlalign.static.x2static import X2StaticArgs, X2StaticJob, train_x2static, x2static_argv

    cache, vocab, _ = synthetic(n_sent=40, dim=DIM)
    words = [w.encode() for w in vocab.words[:6]]
    words[2] = BAD  # line 4
    init = _vec(tmp_path / "init.vec", words, 5)
    args = X2StaticArgs(
        epochs=1, batch_sentences=8, negatives=3, subsample_t=None, lr=1e-12, seed=2,
        checkpoint_every_batches=0, device="cpu", init="vectors", init_vectors=str(init),
    )  # fmt: skip
    res = train_x2static(cache, vocab, args, output_dir=tmp_path / "a", progress=False)
    read = res.stats["init_vectors_read"]
    assert read["encoding_errors"] == "replace" and read["invalid_utf8_lines"] == [4]
    assert res.stats["init_rows_from_vectors"] == 5  # the replaced word is in no vocabulary
    strict = dataclasses.replace(args, encoding_errors="strict")
    with pytest.raises(InputError, match=r"init\.vec: line 4: the word is not valid UTF-8"):
        train_x2static(cache, vocab, strict, output_dir=tmp_path / "b", progress=False)
    with pytest.raises(ConfigError, match=r"x2static\.duplicates"):
        dataclasses.replace(args, duplicates="last").validate()
    # the options travel to the torchrun workers with the others
    job = X2StaticJob(
        cache_dir=tmp_path / "cache",
        vocab_path=tmp_path / "v.tsv",
        vec_path=tmp_path / "o.vec",
        npy_path=tmp_path / "o.npy",
        stats_path=tmp_path / "o.json",
        checkpoint_dir=tmp_path / "o.checkpoint",
        language="de",
        args=dataclasses.replace(strict, duplicates="first"),
    )
    argv = x2static_argv(job)
    assert argv[argv.index("--encoding-errors") + 1] == "strict"
    assert x2static_job(build_parser().parse_args(argv)) == job
