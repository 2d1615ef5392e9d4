"""The one CoNLL-U reader: UD's checks, file:line errors, and the round-trip property."""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzzing import fuzz, quick
from hypothesis import given
from reader_inputs import check_error, inputs

from xlalign.core.errors import InputError
from xlalign.core.formats.conllu import read_conllu, write_conllu
from xlalign.corpus.udpipe import read_conllu_blocks
from xlalign.evaluation.tasks import formats
from xlalign.evaluation.tasks.labelled import conllu as labelled

UD = Path(__file__).parents[1] / "evaluation" / "tasks" / "fixtures" / "ud"


def _w(i: int, form: str, head: str, rel: str = "dep", upos: str = "NOUN") -> str:
    return f"{i}\t{form}\t{form.lower()}\t{upos}\t_\t_\t{head}\t{rel}\t_\t_"


VALID = [
    (
        "# sent_id = a\n# text = I cannot go.\n"
        + "\n".join(
            [
                _w(1, "I", "4", "nsubj"),
                "2-3\tcannot\t_\t_\t_\t_\t_\t_\t_\t_",
                _w(2, "can", "4", "aux"),
                _w(3, "not", "4", "advmod"),
                _w(4, "go", "0", "root", "VERB"),
                "4.1\tgo\tgo\tVERB\t_\t_\t_\t_\t2:conj\t_",
                _w(5, ".", "4", "punct", "PUNCT"),
            ]
        )
        + "\n\n# sent_id = b\n"
        + "\n".join([_w(1, "Yes", "0", "root"), _w(2, "!", "1", "punct")])
        + "\n"
    ).encode(),
    ("\n".join([_w(1, "A", "_", "_"), _w(2, "B", "_", "_")]) + "\n\n").encode(),
    (
        "0.1\tx\tx\tX\t_\t_\t_\t_\t_\t_\n"
        + _w(1, "Z", "0", "root")
        + "\n1.1\ty\t_\t_\t_\t_\t_\t_\t_\t_\n1.2\tz\t_\t_\t_\t_\t_\t_\t_\t_"
    ).encode(),
]


def _file(tmp_path: Path, text: str | bytes, name: str = "x-ud-test.conllu") -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


# ------------------------------------------------------------------------------ regressions


def test_head_outside_the_sentence_is_refused_by_every_caller(tmp_path: Path) -> None:
    p = _file(tmp_path, "# c\n" + _w(1, "A", "0", "root") + "\n" + _w(2, "B", "3") + "\n\n")
    for read in (read_conllu, lambda q: list(formats.iter_conllu(q))):
        with pytest.raises(InputError, match=rf"{p}:3: HEAD 3 outside the sentence"):
            read(p)
    with pytest.raises(InputError, match=rf"{p}:3: HEAD 3 outside"):
        list(labelled.iter_conllu(p))
    with pytest.raises(InputError, match=rf"{p}:3: HEAD 3 outside"):
        read_conllu_blocks(p)


def test_gap_in_word_ids_is_refused_by_every_caller(tmp_path: Path) -> None:
    p = _file(tmp_path, _w(1, "A", "0", "root") + "\n" + _w(3, "B", "1") + "\n")
    for read in (
        read_conllu,
        lambda q: list(formats.iter_conllu(q)),
        lambda q: list(labelled.iter_conllu(q)),
        read_conllu_blocks,
    ):
        with pytest.raises(InputError, match=rf"{p}:2: word ID 3 after 1 words; expected 2"):
            read(p)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_w(1, "A", "0", "root") + "\n" + _w(1, "B", "1"), r":2: word ID 1 after 1 words"),
        (_w(1, "A", "1", "root"), r":1: word 1 is its own HEAD"),
        (_w(1, "A", "2") + "\n" + _w(2, "B", "1"), r":1: the sentence has no root"),
        (_w(1, "A", "0") + "\n" + _w(2, "B", "0"), r":2: a second root"),
        (_w(1, "A", "2") + "\n" + _w(2, "B", "1") + "\n" + _w(3, "C", "0"), r"cycle"),
        (_w(1, "A", "-1"), r":1: HEAD '-1' is neither"),
        (_w(1, "A", "01"), r":1: HEAD '01' is neither"),
        (
            "1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n" + _w(1, "a", "0"),
            r":1: multiword token '1-2' reaches",
        ),
        (
            "1-1\tab\t_\t_\t_\t_\t_\t_\t_\t_\n" + _w(1, "a", "0"),
            r":1: multiword token '1-1' out of",
        ),
        (
            "2-3\tab\t_\t_\t_\t_\t_\t_\t_\t_\n" + _w(1, "a", "0"),
            r":1: multiword token '2-3' out of",
        ),
        (
            "1-2\tab\t_\t_\t_\t_\t0\t_\t_\t_\n" + _w(1, "a", "0") + "\n" + _w(2, "b", "1"),
            r":1: HEAD '0' of range",
        ),
        (_w(1, "a", "0") + "\n1.2\tx\t_\t_\t_\t_\t_\t_\t_\t_", r":2: empty node '1.2' out of"),
        (_w(1, "a", "0") + "\n2.1\tx\t_\t_\t_\t_\t_\t_\t_\t_", r":2: empty node '2.1' out of"),
        ("1.1\tx\t_\t_\t_\t_\t_\t_\t_\t_\n", r":1: empty node '1.1' out of"),
        ("0.1\tx\t_\t_\t_\t_\t_\t_\t_\t_\n", r":1: a sentence with no syntactic words"),
        (_w(1, "a", "0") + "\n# late\n", r":2: a comment line after the words"),
        ("# only a comment\n\n" + _w(1, "a", "0"), r":1: comment lines with no sentence"),
        ("1\tA\t\tNOUN\t_\t_\t0\troot\t_\t_", r":1: empty LEMMA field"),
        ("1\tA\tNOUN\t_\t_\t0\troot\t_\t_", r":1: 9 tab-separated columns"),
        ("١\tA\ta\tNOUN\t_\t_\t0\troot\t_\t_", r":1: ID '١' is not N"),
        ("", r": no sentence; expected CoNLL-U"),
        ("\n\n  \n", r": no sentence; expected CoNLL-U"),
        (b"1\tA\xff\ta\tX\t_\t_\t0\troot\t_\t_", r": invalid UTF-8 at line 1"),
    ],
)
def test_invalid_conllu_is_refused_with_its_line(tmp_path: Path, text, message: str) -> None:
    p = _file(tmp_path, text)
    with pytest.raises(InputError, match=message) as info:
        read_conllu(p)
    assert str(p) in str(info.value)


def test_tolerated_forms_read_as_their_clean_equivalent(tmp_path: Path) -> None:
    clean = read_conllu(_file(tmp_path, VALID[0], "a.conllu"))
    # BOM, CRLF, no blank line at the end, several blank lines and a line of spaces between
    messy = VALID[0].decode().replace("\n\n", "\n\n \t\n\n").replace("\n", "\r\n").rstrip()
    assert read_conllu(_file(tmp_path, "\ufeff" + messy, "b.conllu")) == clean
    s = clean[0]
    assert s.sent_id == "a" and s.line == 1 and s.token_line == 3
    assert [w.form for w in s.words] == ["I", "can", "not", "go", "."]
    assert s.multiword == [(2, 3, "cannot")] and s.empty_nodes == 1
    assert [w.head for w in s.words] == [4, 4, 4, 0, 4]


def test_no_tree_is_tolerated_and_max_sentences(tmp_path: Path) -> None:
    sents = read_conllu(_file(tmp_path, VALID[1]))
    assert [w.head for w in sents[0].words] == [None, None]
    p = _file(tmp_path, VALID[0], "m.conllu")
    assert len(read_conllu(p, max_sentences=1)) == 1


def test_real_treebank_files_parse_and_round_trip(tmp_path: Path) -> None:
    files = sorted(UD.rglob("*.conllu"))
    files += sorted((UD.parent / "labelled").rglob("*.conllu"))
    assert files
    for f in files:
        sents = read_conllu(f)
        write_conllu(tmp_path / "rt.conllu", sents)
        assert read_conllu(tmp_path / "rt.conllu") == sents


# ------------------------------------------------------------------------------ property


def _property(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "in.conllu"
    p.write_bytes(data)
    try:
        sents = read_conllu(p)
    except InputError as exc:
        check_error(exc, p, file_level=("no sentence",))
        return
    q = tmp_path / "out.conllu"
    write_conllu(q, sents)
    assert read_conllu(q) == sents
    assert read_conllu_blocks(q) == read_conllu_blocks(p)


@quick
@given(data=inputs(VALID))
def test_conllu_reader_round_trips_or_names_the_line(tmp_path: Path, data: bytes) -> None:
    _property(tmp_path, data)


@pytest.mark.fuzz
@fuzz
@given(data=inputs(VALID))
def test_conllu_reader_fuzz(tmp_path: Path, data: bytes) -> None:
    _property(tmp_path, data)
