"""Readers of the official task formats (xlalign.evaluation.tasks.formats), each on a tiny
fixture in the real format (tests/evaluation/tasks/fixtures) and on broken variants."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xlalign.core.errors import InputError
from xlalign.evaluation.tasks.data import read_records, write_records
from xlalign.evaluation.tasks.formats import (
    TATOEBA_CODES,
    bucc_files,
    iter_conllu,
    mlqa_file,
    read_bucc,
    read_multinli,
    read_panx,
    read_pawsx,
    read_squad_json,
    read_tatoeba,
    read_tydiqa,
    read_ud_parse,
    read_ud_pos,
    read_xnli,
    read_xnli_mt_train,
    tatoeba_files,
    ud_treebank_files,
    write_bucc,
)

FIX = Path(__file__).parent / "fixtures"
UD = FIX / "ud"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# ------------------------------------------------------------------------------ QA


def test_squad_keeps_offsets_and_counts_what_it_skips() -> None:
    out = read_squad_json(FIX / "squad.json")
    ids = [r.id for r in out.records]
    assert ids == ["q1", "q2", "q3", "q5"]  # q4's question is blank
    q1 = out.records[0]
    assert q1.title == "Paris" and q1.question == "What is the capital of France?"
    assert q1.answers == [{"text": "Paris", "answer_start": 0}] * 2
    q5 = out.records[3]
    start = q5.answers[0]["answer_start"]
    assert q5.context[start : start + len("Le Havre")] == "Le Havre"
    assert out.skipped == {"empty_question": 1}
    # q2's offset (3) does not point at "the Seine"; q3 has no answer: kept, flagged
    assert out.flagged == {"answer_start_mismatch": 1, "no_answer": 1}
    assert out.records[2].answers == []


def test_squad_records_round_trip_through_jsonl(tmp_path: Path) -> None:
    out = read_squad_json(FIX / "squad.json")
    write_records(tmp_path / "test.jsonl", out.records)
    assert read_records(tmp_path / "test.jsonl", "qa") == out.records


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"version": "1.1"}, "missing key 'data'"),
        ({"data": [{"paragraphs": [{"qas": []}]}]}, "data[0].paragraphs[0]: missing key 'context'"),
        (
            {"data": [{"paragraphs": [{"context": "c", "qas": [{"id": "a", "question": "q",
             "answers": [{"text": "c", "answer_start": "0"}]}]}]}]},
            "answers[0].answer_start: expected int",
        ),
    ],
)  # fmt: skip
def test_squad_wrong_format_names_the_key(tmp_path: Path, doc: dict, message: str) -> None:
    p = _write(tmp_path / "bad.json", json.dumps(doc))
    with pytest.raises(InputError, match=r"bad\.json") as exc:
        read_squad_json(p)
    assert message in str(exc.value)


def test_squad_not_json_names_the_line(tmp_path: Path) -> None:
    p = _write(tmp_path / "bad.json", '{"data": [\n  {"paragraphs": ]\n}')
    with pytest.raises(InputError, match=r"bad\.json:2: not valid JSON"):
        read_squad_json(p)


def test_tydiqa_keeps_one_language_by_its_id_prefix() -> None:
    en = read_tydiqa(FIX / "tydiqa-goldp.json", "en")
    assert [r.id for r in en.records] == ["english-300-1", "english-301-1"]
    assert en.skipped == {"other_language": 2}
    fi = read_tydiqa(FIX / "tydiqa-goldp.json", "fi")
    assert [r.answers[0]["text"] for r in fi.records] == ["Helsinki"]
    with pytest.raises(InputError, match="no question of language 'ar'"):
        read_tydiqa(FIX / "tydiqa-goldp.json", "ar")
    with pytest.raises(InputError, match="no language 'de'"):
        read_tydiqa(FIX / "tydiqa-goldp.json", "de")


def test_mlqa_file_names() -> None:
    assert mlqa_file("/d", "test", "de").as_posix() == (
        "/d/MLQA_V1/test/test-context-de-question-de.json"
    )
    assert mlqa_file("/d", "dev", "de", "en").name == "dev-context-de-question-en.json"
    with pytest.raises(InputError):
        mlqa_file("/d", "train", "de")


# ------------------------------------------------------------------------------ PAN-X


def test_panx_strips_the_language_prefix_and_keeps_tags() -> None:
    out = read_panx(FIX / "panx/en/train", lang="en")
    assert [r.tokens for r in out.records] == [
        ["Angela", "Merkel", "visited", "Paris", "."],
        ["The", "United", "Nations", "met"],
    ]
    assert out.records[0].tags == ["B-PER", "I-PER", "O", "B-LOC", "O"]
    assert out.records[0].id == "train:1" and out.records[1].id == "train:7"
    assert not out.flagged


def test_panx_prefix_split_at_first_colon_and_iob2_flags() -> None:
    de = read_panx(FIX / "panx/de/test", lang="de")
    assert de.records[1].tokens == ["in", "Köln:Süd"]
    en = read_panx(FIX / "panx/en/test", lang="en")
    # "John I-PER" opens a sentence with I-: kept as given, flagged
    assert en.records[1].tags == ["I-PER", "I-PER"] and en.flagged == {"iob2_invalid": 1}


def test_raw_wikiann_has_no_prefix() -> None:
    out = read_panx(FIX / "wikiann-raw.txt", prefixed=False)
    assert [r.tokens for r in out.records] == [["Paris", "is"], ["New", "York"]]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("en:Paris\tB-LOC\nde:Berlin\tB-LOC\n", r":2: token 'de:Berlin' lacks the prefix 'en:'"),
        ("en:Paris B-LOC\n", r":1: 1 tab-separated fields"),
        ("en:Paris\tLOC\n", r":1: tag 'LOC' is not IOB2"),
        ("en:\tO\n", r":1: an empty token"),
    ],
)
def test_panx_wrong_format(tmp_path: Path, text: str, message: str) -> None:
    p = _write(tmp_path / "train", text)
    with pytest.raises(InputError, match=message):
        read_panx(p, lang="en")


# ------------------------------------------------------------------------------ UD


def test_conllu_separates_words_ranges_and_empty_nodes() -> None:
    sents = list(iter_conllu(UD / "UD_English-Tiny/en_tiny-ud-train.conllu"))
    assert [s.sent_id for s in sents] == ["en-1", "en-2", "en-3"]
    s1, s2, _ = sents
    assert [w.form for w in s1.words] == ["I", "can", "not", "go", "."]
    assert s1.multiword == [(2, 3, "cannot")] and s1.line == 3
    assert s2.empty_nodes == 1 and [w.head for w in s2.words] == [2, 3, 0, 3]


def test_ud_pos_words_mode_skips_ranges_empty_nodes_and_textless() -> None:
    out = read_ud_pos([UD / "UD_English-Tiny/en_tiny-ud-train.conllu"], lang="en")
    assert [r.tokens for r in out.records] == [
        ["I", "can", "not", "go", "."],
        ["My", "dog", "sleeps", "NewYork"],  # XTREME removes spaces inside words
    ]
    assert out.records[0].tags == ["PRON", "AUX", "PART", "VERB", "PUNCT"]
    assert out.records[0].id == "en_tiny-ud-train.conllu:en-1"
    assert out.skipped == {"textless": 1}
    assert out.flagged == {"multiword_tokens": 1, "empty_nodes": 1}
    raw = read_ud_pos([UD / "UD_English-Tiny/en_tiny-ud-train.conllu"], xtreme_clean=False)
    assert raw.records[1].tokens[-1] == "New York"


def test_ud_pos_fused_mode_tags_the_surface_form_with_its_head() -> None:
    files = [UD / "UD_German-Tiny/de_tiny-ud-test.conllu"]
    words = read_ud_pos(files, lang="de")
    assert words.records[0].tokens == ["Er", "geht", "zu", "dem", "Bahnhof", "."]
    fused = read_ud_pos(files, lang="de", multiword="fused")
    # zu (ADP) and dem (DET) both hang off Bahnhof: a tie, broken by XTREME's order
    # (ADP before DET)
    assert fused.records[0].tokens == ["Er", "geht", "zum", "Bahnhof", "."]
    assert fused.records[0].tags == ["PRON", "VERB", "ADP", "NOUN", "PUNCT"]
    en = read_ud_pos([UD / "UD_English-Tiny/en_tiny-ud-train.conllu"], multiword="fused")
    # can (aux of go) and not (advmod of go): a tie, VERB...AUX before PART -> AUX
    assert en.records[0].tokens == ["I", "cannot", "go", "."]
    assert en.records[0].tags == ["PRON", "AUX", "VERB", "PUNCT"]


def test_ud_pos_zero_width_non_joiner_removed_and_empty_word_skipped(tmp_path: Path) -> None:
    p = _write(
        tmp_path / "fa_x-ud-test.conllu",
        "1\tمی\u200cروم\t_\tVERB\t_\t_\t0\troot\t_\t_\n\n"
        "1\t\u200c\t_\tX\t_\t_\t0\troot\t_\t_\n2\tب\t_\tADP\t_\t_\t1\tcase\t_\t_\n\n",
    )
    out = read_ud_pos([p], lang="fa")
    assert out.records[0].tokens == ["میروم"]
    assert out.skipped == {"empty_word": 1}


def test_ud_parse_heads_relations_and_universal_option() -> None:
    f = [UD / "UD_English-Tiny/en_tiny-ud-train.conllu"]
    out = read_ud_parse(f)
    first, second = out.records
    assert first.heads == [4, 4, 4, 0, 4] and first.deprels[:2] == ["nsubj", "aux"]
    assert second.deprels[0] == "nmod:poss" and second.tokens[-1] == "New York"
    assert out.skipped == {"textless": 1}
    assert read_ud_parse(f, universal_deprels=True).records[1].deprels[0] == "nmod"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1\tA\ta\tNOUN\t_\t_\t0\troot\t_\n", r":1: 9 tab-separated columns; expected the 10"),
        (
            "1\tA\ta\tNOUN\t_\t_\t0\troot\t_\t_\n3\tB\tb\tNOUN\t_\t_\t1\tdep\t_\t_\n",
            r":2: word ID 3 after 1 words; expected 2",
        ),
        ("1\tA\ta\tNOUN\t_\t_\tx\troot\t_\t_\n", r":1: HEAD 'x'"),
        ("a\tA\ta\tNOUN\t_\t_\t0\troot\t_\t_\n", r":1: ID 'a'"),
    ],
)
def test_conllu_wrong_format(tmp_path: Path, text: str, message: str) -> None:
    p = _write(tmp_path / "x-ud-test.conllu", text)
    with pytest.raises(InputError, match=message):
        list(iter_conllu(p))


def test_ud_parse_skips_sentences_without_heads(tmp_path: Path) -> None:
    p = _write(tmp_path / "x-ud-test.conllu", "1\tA\ta\tNOUN\t_\t_\t_\t_\t_\t_\n\n")
    out = read_ud_parse([p])
    assert not out.records and out.skipped == {"no_heads": 1}


def test_treebank_selection_is_by_file_prefix_and_merges_per_split() -> None:
    en = ud_treebank_files(UD, "en")
    assert {s: [p.name for p in fs] for s, fs in en.items()} == {
        "train": ["en_tiny-ud-train.conllu"],
        "dev": ["en_tiny-ud-dev.conllu"],
        "test": ["en_other-ud-test.conllu", "en_tiny-ud-test.conllu"],
    }
    # Classical Chinese (lzh_) is not Chinese (zh_): XTREME's rule, unlike a folder glob
    assert ud_treebank_files(UD, "zh") == {}
    only = ud_treebank_files(UD, "en", treebanks=["UD_English-Other"])
    assert list(only) == ["test"]
    with pytest.raises(InputError, match="UD_English-Nope"):
        ud_treebank_files(UD, "en", treebanks=["UD_English-Nope"])


def test_merged_treebanks_keep_distinct_ids() -> None:
    out = read_ud_pos(ud_treebank_files(UD, "en")["test"], lang="en")
    assert [r.id for r in out.records] == [
        "en_other-ud-test.conllu:t1",
        "en_tiny-ud-test.conllu:t2",
    ]


# ------------------------------------------------------------------------------ pairs


def test_xnli_one_language_labels_and_skips() -> None:
    de = read_xnli(FIX / "xnli/xnli.dev.tsv", lang="de")
    assert [(r.id, r.label) for r in de.records] == [("1", "neutral"), ("2", "contradiction")]
    assert de.records[0].sentence1 == "Ein Mann schläft."
    assert de.skipped == {"no_gold_label": 1, "empty_sentence": 1}
    assert len(read_xnli(FIX / "xnli/xnli.dev.tsv", lang="en").records) == 2
    with pytest.raises(InputError, match=r"no pair of language 'ja'; the file has \['de', 'en'\]"):
        read_xnli(FIX / "xnli/xnli.dev.tsv", lang="ja")


def test_xnli_wrong_format(tmp_path: Path) -> None:
    p = _write(tmp_path / "xnli.dev.tsv", "language\tlabel\tsentence1\tsentence2\nen\tx\ta\tb\n")
    with pytest.raises(InputError, match=r"xnli\.dev\.tsv:1: header .* lacks \['gold_label'\]"):
        read_xnli(p, lang="en")
    p = _write(
        tmp_path / "xnli.test.tsv",
        "language\tgold_label\tsentence1\tsentence2\nen\tneutral\ta\n",
    )
    with pytest.raises(InputError, match=r"xnli\.test\.tsv:2: 3 tab-separated fields; expected 4"):
        read_xnli(p, lang="en")
    p = _write(tmp_path / "x.tsv", "language\tgold_label\tsentence1\tsentence2\nen\tyes\ta\tb\n")
    with pytest.raises(InputError, match=r"x\.tsv:2: label 'yes'"):
        read_xnli(p, lang="en")


def test_xnli_mt_training_file_maps_contradictory() -> None:
    out = read_xnli_mt_train(FIX / "xnli/multinli.train.en.tsv")
    assert [r.label for r in out.records] == ["neutral", "entailment", "contradiction"]
    assert out.records[0].sentence2 == "Product and geography are what make cream skimming work ."


def test_multinli_jsonl() -> None:
    out = read_multinli(FIX / "multinli_1.0_train.jsonl")
    assert [(r.id, r.label) for r in out.records] == [("31193n", "neutral")]
    assert out.skipped == {"no_gold_label": 1}


def test_pawsx_counts_empty_sentences_and_checks_labels(tmp_path: Path) -> None:
    out = read_pawsx(FIX / "pawsx/dev_2k.tsv")
    assert [(r.id, r.label) for r in out.records] == [("1", "1"), ("2", "0")]
    assert out.skipped == {"empty_sentence": 1}
    p = _write(tmp_path / "test_2k.tsv", "id\tsentence1\tsentence2\tlabel\n1\ta\tb\t2\n")
    with pytest.raises(InputError, match=r"test_2k\.tsv:2: label '2'; expected '0' or '1'"):
        read_pawsx(p)
    p = _write(tmp_path / "train.tsv", "sentence1\tsentence2\tlabel\n")
    with pytest.raises(InputError, match=r"train\.tsv:1: header .* lacks \['id'\]"):
        read_pawsx(p)


# ------------------------------------------------------------------------------ retrieval


def test_tatoeba_line_aligned_pairs(tmp_path: Path) -> None:
    src, eng = tatoeba_files("de")
    assert (src, eng) == ("tatoeba.deu-eng.deu", "tatoeba.deu-eng.eng")
    assert TATOEBA_CODES["zh"] == "cmn" and TATOEBA_CODES["fa"] == "pes"
    out = read_tatoeba(FIX / "tatoeba" / src, FIX / "tatoeba" / eng)
    assert [(r.id, r.source, r.target) for r in out.records] == [
        ("0", "Ich bin müde.", "I am tired."),
        ("1", "Wo ist Tom?", "Where is Tom?"),
        ("3", "Danke.", "Thank you."),
    ]
    assert out.skipped == {"empty_sentence": 1}
    short = _write(tmp_path / "e.eng", "I am tired.\n")
    with pytest.raises(InputError, match=r"4 lines but .*e\.eng has 1"):
        read_tatoeba(FIX / "tatoeba" / src, short)
    with pytest.raises(InputError, match="no language 'xx'"):
        tatoeba_files("xx")


def test_bucc_corpora_and_gold(tmp_path: Path) -> None:
    d = FIX / "bucc"
    corpus = read_bucc(
        d / "de-en.sample.de", d / "de-en.sample.en", d / "de-en.sample.gold",
        lang="de", split="sample",
    )  # fmt: skip
    assert len(corpus.source) == 3 and len(corpus.target) == 3
    assert corpus.gold == [("de-000000001", "en-000000002"), ("de-000000003", "en-000000001")]
    pairs = corpus.pairs()
    assert (pairs[0].id, pairs[0].source, pairs[0].target) == (
        "de-000000001/en-000000002",
        "Das ist ein Haus.",
        "This is a house.",
    )
    names = write_bucc(corpus, tmp_path, "dev")
    again = read_bucc(
        tmp_path / names["source"], tmp_path / names["target"], tmp_path / names["gold"],
        lang="de", split="sample",
    )  # fmt: skip
    assert again == corpus


def test_bucc_test_split_has_no_public_gold_and_bad_gold_raises(tmp_path: Path) -> None:
    d = FIX / "bucc"
    test = read_bucc(d / "de-en.sample.de", d / "de-en.sample.en", None, lang="de", split="test")
    assert test.gold is None and test.pairs() == []
    with pytest.raises(InputError, match="needs its gold file"):
        read_bucc(d / "de-en.sample.de", d / "de-en.sample.en", None, lang="de", split="sample")
    bad = _write(tmp_path / "g.gold", "de-000000001\ten-000000009\n")
    with pytest.raises(InputError, match=r"g\.gold:1: gold pair .* not in the corpora"):
        read_bucc(d / "de-en.sample.de", d / "de-en.sample.en", bad, lang="de", split="sample")
    dup = _write(tmp_path / "x.de", "de-1\ta\nde-1\tb\n")
    with pytest.raises(InputError, match=r"x\.de:2: duplicate id 'de-1'"):
        read_bucc(dup, d / "de-en.sample.en", None, lang="de", split="test")
    root = tmp_path / "unpacked"
    src, _, gold = bucc_files(root, "de", "training")
    assert src.relative_to(root).as_posix() == "bucc2018/de-en/de-en.training.de"
    assert gold is not None and gold.name == "de-en.training.gold"
    assert bucc_files(root, "de", "test")[2] is None


def test_readers_name_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        read_squad_json(tmp_path / "nope.json")
    with pytest.raises(InputError, match="not found"):
        read_panx(tmp_path / "nope")
