"""The zero-shot task formats (:mod:`xlalign.evaluation.tasks.formats`) and the task
records (JSON Lines, :mod:`xlalign.evaluation.tasks.data`): file:line errors and the
round-trip property through each format's writer."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from fuzzing import fuzz, quick
from hypothesis import given
from hypothesis import strategies as st
from reader_inputs import check_error, inputs

from xlalign.core.errors import InputError
from xlalign.evaluation.tasks import formats as F
from xlalign.evaluation.tasks.data import read_records, write_records

FIX = Path(__file__).parents[1] / "evaluation" / "tasks" / "fixtures"

JSON_WHERE = ("top level", "data[")  # SQuAD errors name the JSON key path


def _fixture(*parts: str) -> bytes:
    return FIX.joinpath(*parts).read_bytes()


# ------------------------------------------------------------------ one property per reader


def _pairs(recs) -> list[tuple]:
    return [(r.sentence1, r.sentence2, r.label) for r in recs]


def _panx(prefixed: bool) -> Callable[[Path, Path], None]:
    def prop(p: Path, q: Path) -> None:
        lang = "en" if prefixed else None
        out = F.read_panx(p, lang=lang, prefixed=prefixed)
        F.write_panx(q, out.records, lang=lang)
        again = F.read_panx(q, lang=lang, prefixed=prefixed).records
        assert [(r.tokens, r.tags) for r in again] == [(r.tokens, r.tags) for r in out.records]

    return prop


def _xnli(p: Path, q: Path) -> None:
    out = F.read_xnli(p, lang="de")
    F.write_xnli(q, out.records, lang="de")
    assert F.read_xnli(q, lang="de").records == out.records


def _xnli_mt(p: Path, q: Path) -> None:
    out = F.read_xnli_mt_train(p)
    F.write_xnli_mt_train(q, out.records)
    assert _pairs(F.read_xnli_mt_train(q).records) == _pairs(out.records)


def _multinli_jsonl(p: Path, q: Path) -> None:
    p = p.rename(p.with_suffix(".jsonl"))
    try:
        out = F.read_multinli(p)
    finally:
        p.rename(p.with_suffix(".txt"))
    F.write_multinli(q.with_suffix(".jsonl"), out.records)
    assert F.read_multinli(q.with_suffix(".jsonl")).records == out.records


def _multinli_tsv(p: Path, q: Path) -> None:
    out = F.read_multinli(p)
    F.write_xnli(q, out.records, lang="en")  # XNLI's header holds MultiNLI's columns
    assert F.read_multinli(q).records == out.records


def _pawsx(p: Path, q: Path) -> None:
    out = F.read_pawsx(p)
    F.write_pawsx(q, out.records)
    assert F.read_pawsx(q).records == out.records


def _squad(p: Path, q: Path) -> None:
    out = F.read_squad_json(p)
    F.write_squad_json(q, out.records)
    assert F.read_squad_json(q).records == out.records


_IDENTITY_TYPES = {"PER": "PER", "LOC": "LOC", "ORG": "ORG", "MISC": None}


def _iob2_columns(p: Path, q: Path) -> None:
    """The embedded NER packages' one-token-per-line reader (WNUT-16's layout), whose policy
    is to drop a sentence with a malformed line (counted) and refuse a bad tag (its line)."""
    from collections import Counter

    from xlalign.evaluation.tasks.labelled.common import LabelTally
    from xlalign.evaluation.tasks.labelled.schemes import read_iob2_columns

    def read(path: Path) -> list[tuple[list[str], list[str]]]:
        recs = read_iob2_columns(
            path,
            columns={2},
            type_map=_IDENTITY_TYPES,
            id_prefix="x-",
            tally=LabelTally(),
            repairs=Counter(),
            dropped=Counter(),
        )
        return [(r.tokens, r.tags) for r in recs]

    got = read(p)
    q.write_text(
        "".join("".join(f"{w}\t{t}\n" for w, t in zip(*r, strict=True)) + "\n" for r in got),
        encoding="utf-8",
    )
    assert read(q) == got


RECORD_KINDS = ("tagged", "parsed", "pair", "qa", "retrieval")


def _records(kind: str) -> Callable[[Path, Path], None]:
    def prop(p: Path, q: Path) -> None:
        recs = read_records(p, kind)
        write_records(q, recs)
        assert read_records(q, kind) == recs

    return prop


def _example_records() -> bytes:
    from xlalign.evaluation.tasks.data import RECORD_TYPES

    examples = {
        "tagged": {"id": "s1", "tokens": ["a", "b"], "tags": ["O", "B-PER"]},
        "parsed": {
            "id": "p",
            "tokens": ["a", "b"],
            "upos": ["X", "Y"],
            "heads": [0, 1],
            "deprels": ["root", "dep"],
        },
        "pair": {"id": "x", "sentence1": "a", "sentence2": "b", "label": "1"},
        "qa": {
            "id": "q",
            "context": "ctx",
            "question": "q?",
            "answers": [{"text": "c", "answer_start": 0}],
            "title": "",
        },
        "retrieval": {"id": "0", "source": "a", "target": "b"},
    }
    assert set(examples) == set(RECORD_TYPES)
    return examples


_EXAMPLES = _example_records()


def _json_variants(raw: bytes) -> list[bytes]:
    """A JSON document with, in turn, each key removed and each value replaced by a value
    of another type: near-valid SQuAD files that reach the checks behind the syntax."""
    doc = json.loads(raw)
    out: list[bytes] = []
    replacements = [None, 1, -3, 2.5, True, "x", "", [], {}, "\ud800"]

    def walk(node, rebuild) -> None:
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in list(items):
            if isinstance(node, dict):
                out.append(rebuild({k: v for k, v in node.items() if k != key}))
            for r in replacements:
                copy = dict(node) if isinstance(node, dict) else list(node)
                copy[key] = r
                out.append(rebuild(copy))
            if isinstance(value, dict | list):

                def sub(new, node=node, key=key, rebuild=rebuild):
                    copy = dict(node) if isinstance(node, dict) else list(node)
                    copy[key] = new
                    return rebuild(copy)

                walk(value, sub)

    walk(doc, lambda d: json.dumps(d, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    return out


#: reader name -> (property, valid inputs, phrases of whole-file errors)
READERS: dict[str, tuple[Callable[[Path, Path], None], list[bytes], tuple[str, ...]]] = {
    "panx": (
        _panx(True),
        [_fixture("panx", "en", "train"), b"en:a\tB-PER\nen:b\tI-PER\n\nen:c\tO\n"],
        (),
    ),
    "wikiann": (_panx(False), [_fixture("wikiann-raw.txt"), b"a\tO\n-DOCSTART-\tO\n"], ()),
    "iob2-columns": (
        _iob2_columns,
        [b"Lady\tB-PER\nGaga\tI-PER\nat\tO\nParis\tB-LOC\n\t\nStar\tI-MISC\nX\tB-ORG\n"],
        ("no sentences",),
    ),
    "xnli": (
        _xnli,
        [
            b"language\tgold_label\tsentence1\tsentence2\tpairID\nde\tneutral\tA.\tB.\t1\n"
            b"de\tcontradictory\tC.\tD.\t\nen\t-\tE\tF\t2\nde\tentailment\tG\tH\t1\n"
        ],
        ("empty file", "no pair of language"),
    ),
    "xnli-mt": (
        _xnli_mt,
        [b"premise\thypo\tlabel\nA.\tB.\tcontradictory\nC\tD\tneutral\n"],
        ("empty file",),
    ),
    "multinli-jsonl": (
        _multinli_jsonl,
        [_fixture("multinli_1.0_train.jsonl")],
        (),
    ),
    "multinli-tsv": (
        _multinli_tsv,
        [b"gold_label\tsentence1\tsentence2\tpairID\nneutral\tA\tB\tx1\n-\tC\tD\tx2\n"],
        ("empty file",),
    ),
    "pawsx": (_pawsx, [_fixture("pawsx", "dev_2k.tsv")], ("empty file",)),
    "squad": (
        _squad,
        [
            _fixture("squad.json"),
            _fixture("tydiqa-goldp.json"),
            *_json_variants(_fixture("squad.json")),
        ],
        ("file not found", *JSON_WHERE),
    ),
    **{
        f"records-{kind}": (
            _records(kind),
            [(json.dumps(_EXAMPLES[kind]) + "\n\n" + json.dumps(_EXAMPLES[kind]) + "\n").encode()],
            ("no such file",),
        )
        for kind in RECORD_KINDS
    },
}


def _check(name: str, tmp_path: Path, data: bytes) -> None:
    prop, _valid, file_level = READERS[name]
    p, q = tmp_path / "in.txt", tmp_path / "out.txt"
    p.write_bytes(data)
    try:
        prop(p, q)
    except InputError as exc:
        if q.exists() or q.with_suffix(".jsonl").exists():
            raise  # the writer's output was refused: not a round trip
        check_error(exc, p, p.with_suffix(".jsonl"), file_level=file_level)
    finally:
        for f in (q, q.with_suffix(".jsonl")):
            f.unlink(missing_ok=True)


def _reader_inputs() -> st.SearchStrategy[tuple[str, bytes]]:
    return st.one_of(
        *(st.tuples(st.just(name), inputs(valid)) for name, (_, valid, _) in READERS.items())
    )


def test_every_reader_is_covered() -> None:
    assert len(READERS) == 14


@pytest.mark.parametrize("name", sorted(READERS))
def test_valid_inputs_round_trip(tmp_path: Path, name: str) -> None:
    for data in READERS[name][1]:
        _check(name, tmp_path, data)
        assert not (tmp_path / "out.txt").exists()


# 200 examples for each reader in make test, 5000 each under the fuzz marker.
def _make_tests() -> None:
    def make(name: str) -> Callable[[Path, bytes], None]:
        def test(tmp_path: Path, data: bytes) -> None:
            _check(name, tmp_path, data)

        return test

    for name, (_prop, valid, _where) in READERS.items():
        slug = name.replace("-", "_")
        quick_test, fuzz_test = make(name), make(name)
        quick_test.__name__ = f"test_{slug}_round_trips_or_names_the_line"
        fuzz_test.__name__ = f"test_{slug}_fuzz"
        globals()[quick_test.__name__] = quick(given(data=inputs(valid))(quick_test))
        globals()[fuzz_test.__name__] = pytest.mark.fuzz(fuzz(given(data=inputs(valid))(fuzz_test)))


_make_tests()


# ------------------------------------------------------------------ two-file readers


def _tatoeba_property(tmp_path: Path, src: bytes, eng: bytes) -> None:
    s, e = tmp_path / "t.deu", tmp_path / "t.eng"
    s.write_bytes(src)
    e.write_bytes(eng)
    try:
        out = F.read_tatoeba(s, e)
    except InputError as exc:
        check_error(exc, s, e, file_level=("ends before line",))
        return
    F.write_tatoeba(tmp_path / "o.deu", tmp_path / "o.eng", out.records)
    again = F.read_tatoeba(tmp_path / "o.deu", tmp_path / "o.eng").records
    assert [(r.source, r.target) for r in again] == [(r.source, r.target) for r in out.records]


def _bucc_property(tmp_path: Path, src: bytes, tgt: bytes, gold: bytes) -> None:
    d = tmp_path / "in"
    d.mkdir(exist_ok=True)
    s, t, g = d / "de-en.sample.de", d / "de-en.sample.en", d / "de-en.sample.gold"
    s.write_bytes(src)
    t.write_bytes(tgt)
    g.write_bytes(gold)
    try:
        corpus = F.read_bucc(s, t, g, lang="de", split="sample")
    except InputError as exc:
        check_error(exc, s, t, g)
        return
    names = F.write_bucc(corpus, tmp_path / "out", "sample")
    o = tmp_path / "out"
    again = F.read_bucc(
        o / names["source"], o / names["target"], o / names["gold"], lang="de", split="sample"
    )
    assert dataclasses.astuple(again) == dataclasses.astuple(corpus)


_TATOEBA = st.tuples(
    inputs([_fixture("tatoeba", "tatoeba.deu-eng.deu")]),
    inputs([_fixture("tatoeba", "tatoeba.deu-eng.eng")]),
)
_BUCC = st.tuples(
    inputs([_fixture("bucc", "de-en.sample.de")]),
    inputs([_fixture("bucc", "de-en.sample.en")]),
    inputs([_fixture("bucc", "de-en.sample.gold")]),
)


@quick
@given(files=_TATOEBA)
def test_tatoeba_round_trips_or_names_the_line(tmp_path: Path, files) -> None:
    _tatoeba_property(tmp_path, *files)


@pytest.mark.fuzz
@fuzz
@given(files=_TATOEBA)
def test_tatoeba_fuzz(tmp_path: Path, files) -> None:
    _tatoeba_property(tmp_path, *files)


@quick
@given(files=_BUCC)
def test_bucc_round_trips_or_names_the_line(tmp_path: Path, files) -> None:
    _bucc_property(tmp_path, *files)


@pytest.mark.fuzz
@fuzz
@given(files=_BUCC)
def test_bucc_fuzz(tmp_path: Path, files) -> None:
    _bucc_property(tmp_path, *files)


# ------------------------------------------------------------------ regressions


@pytest.mark.parametrize(
    ("kind", "line", "message"),
    [
        ("tagged", {"id": "a", "tokens": "ab", "tags": ["O", "O"]}, r"'tokens' is not a list"),
        ("tagged", {"id": "a", "tokens": ["a"], "tags": ["O"], "x": 1}, r"no field\(s\) \['x'\]"),
        ("tagged", {"id": 3, "tokens": ["a"], "tags": ["O"]}, r"'id' is not a string"),
        ("parsed", {**_EXAMPLES["parsed"], "heads": [0, True]}, r"'heads' is not a list of int"),
        ("parsed", {**_EXAMPLES["parsed"], "heads": [0, 5]}, r"a head outside 0..2"),
        ("qa", {**_EXAMPLES["qa"], "answers": [{"text": "c"}]}, r"'answers' is not"),
        ("pair", {**_EXAMPLES["pair"], "label": "\ud800"}, r"'label' is not a string"),
    ],
)
def test_bad_records_name_file_line_and_field(
    tmp_path: Path, kind: str, line: dict, message: str
) -> None:
    p = tmp_path / "r.jsonl"
    p.write_text("\n" + json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{p}:2: .*{message}"):
        read_records(p, kind)


def test_records_invalid_utf8_and_repeated_key(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_bytes(b'{"id": "\xff"}\n')
    with pytest.raises(InputError, match=r"r\.jsonl: invalid UTF-8 at line 1"):
        read_records(p, "tagged")
    p.write_text('{"id": "a", "id": "b", "tokens": ["a"], "tags": ["O"]}\n')
    with pytest.raises(InputError, match=r"r\.jsonl:1: not a record \(key 'id' repeated\)"):
        read_records(p, "tagged")


def test_header_order_is_checked_where_columns_are_taken_by_position(tmp_path: Path) -> None:
    p = tmp_path / "dev_2k.tsv"
    p.write_text("label\tid\tsentence1\tsentence2\n1\t2\ta\tb\n")
    with pytest.raises(InputError, match=r"dev_2k\.tsv:1: header"):
        F.read_pawsx(p)
    m = tmp_path / "mt.tsv"
    m.write_text("label\tpremise\thypo\nneutral\tA\tB\n")
    assert _pairs(F.read_xnli_mt_train(m).records) == [("A", "B", "neutral")]


def test_squad_deep_nesting_and_surrogates_are_refused(tmp_path: Path) -> None:
    p = tmp_path / "s.json"
    p.write_text("[" * 100_000)
    with pytest.raises(InputError, match=r"s\.json"):
        F.read_squad_json(p)
    p.write_text('{"data": [{"title": "\\ud800", "paragraphs": []}]}')
    with pytest.raises(InputError, match=r"data\[0\]\.title: a lone surrogate"):
        F.read_squad_json(p)


def test_tatoeba_length_mismatch_names_the_line(tmp_path: Path) -> None:
    s, e = tmp_path / "a.deu", tmp_path / "a.eng"
    s.write_text("a\nb\n")
    e.write_text("x\n")
    with pytest.raises(InputError, match=r"a\.eng ends before line 2"):
        F.read_tatoeba(s, e)
