"""``xlalign analyse`` and ``eflomal-reference`` on public word-alignment gold sets given
on the command line (issue 29): a set's id, pair, format, index base and files, its
errata lines, and for eflomal each set's bitext in either column order; a wrong spec is
a usage error naming the option, a wrong index base an input error naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli_errors import _one_line_error

from xlalign.cli import main
from xlalign.core.formats.parallel import write_parallel
from xlalign.core.io import read_json

ROOT = Path(__file__).resolve().parents[2]
CONFIG = str(ROOT / "config" / "config.yaml")
# 'src ||| tgt' + 1-indexed links, 'p' for a possible link, as awesome-align ships them
TEXT = "the cat sat ||| le chat assis\na dog ran ||| un chien courait\n"
LINKS = "1-1 2-2 3p3\n1-1 2-2 3-3\n"


def _set(tmp_path: Path) -> tuple[Path, Path]:
    text, links = tmp_path / "xxen.src-tgt", tmp_path / "xxen.gold"
    text.write_text(TEXT, encoding="utf-8")
    links.write_text(LINKS, encoding="utf-8")
    return text, links


def test_eflomal_reference_takes_the_sets_and_their_bitexts(tmp_path: Path, capsys) -> None:
    pytest.importorskip("eflomal")
    text, links = _set(tmp_path)
    bitext = tmp_path / "fr-en.tsv"  # the set is en-fr: the corpus's columns reversed
    rows = [("le chat assis", "the cat sat"), ("un chien courait", "a dog ran")] * 20
    write_parallel(bitext, [(f"p{k}", t.split(), s.split()) for k, (t, s) in enumerate(rows)])
    out = tmp_path / "ref.json"
    argv = ["-q", "eflomal-reference", "--config", CONFIG, "-o", str(out)]
    sets = ["--gold-set", "a", "en-fr", "awesome", "1", str(text), str(links)]
    sets += ["--gold-set", "b", "en-fr", "awesome", "1", str(text), str(links)]
    rc = main([*argv, *sets, "--bitext", "a", "fr-en", str(bitext), "--max-pairs", "30"])
    assert rc == 0, capsys.readouterr().err
    per = read_json(out)["gold_sets"]
    assert (per["a"]["training_pairs"], per["b"]["training_pairs"]) == (30, 0)
    assert per["a"]["sentences"] == 2 and per["a"]["pair"] == "en-fr"
    assert per["a"]["aer"] < 0.5  # read in the set's direction


SET = "--gold-set a en-fr awesome 1 {text} {links}"
ERRORS = [
    ("base", "--gold-set a en-fr awesome 2 {text} {links}", 2, "index base '2'"),
    ("format", "--gold-set a en-fr naacl 1 {text} {links}", 2, "format 'naacl'"),
    ("files", "--gold-set a en-fr awesome 1 {text}", 2, "reads 2 files"),
    ("pair", "--gold-set a enfr awesome 1 {text} {links}", 2, "pair 'enfr'"),
    ("drop-lines", f"{SET} --drop-lines b 3", 2, "'b' is not a --gold-set"),
    ("bitext-pair", f"{SET} --bitext a de-en {{links}}", 2, "pair 'de-en'; the set is en-fr"),
    ("corpus", f"--corpus {{links}} {SET}", 2, "with gold sets, give each set's bitext"),
    # 1-indexed links read as 0-indexed: 'sat' (3) has no word 4 -> the file is named
    (
        "index-base",
        "--gold-set a en-fr awesome 0 {text} {links} --max-pairs 0",
        1,
        "xxen.gold line 1: link '3p3' is outside",
    ),
]


@pytest.mark.parametrize(
    ("extra", "status", "needle"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS]
)
def test_gold_set_errors(extra: str, status: int, needle: str, tmp_path: Path, capsys) -> None:
    text, links = _set(tmp_path)
    out = tmp_path / "out" / "ref.json"
    args = extra.format(text=text, links=links).split()
    rc = main(["eflomal-reference", "--config", CONFIG, "-o", str(out), *args])
    line = _one_line_error(capsys.readouterr().err, " eflomal-reference")
    assert rc == status and needle in line, line
    assert not out.exists()


def test_analyse_scores_each_given_set(tmp_path: Path, capsys) -> None:
    from tiny_encoder import make_fixed_vocab_encoder

    enc = make_fixed_vocab_encoder(tmp_path / "enc")
    text, links = _set(tmp_path)
    out = tmp_path / "an.json"
    argv = ["-q", "analyse", "--config", CONFIG, "--encoder", str(enc), "-o", str(out)]
    argv += ["--device", "cpu", "--gold-set", "s", "en-fr", "awesome", "1", str(text), str(links)]
    assert main(argv) == 0, capsys.readouterr().err
    rec = read_json(out)
    assert list(rec["gold_sets"]) == ["s"] and rec["gold"]["sentences"] == 2
    assert rec["gold_sets"]["s"]["pair"] == "en-fr"
