"""The lexical stage end to end on small configs: dictionary splits, VecMap into the hub,
selection (X2S-MA), BLI, word similarity and the tables; the paper's full-scale route
(fastText + unsupervised VecMap -> induced dictionaries, MUSE, SemEval-2017) against a
loopback HTTP server."""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml
from httpserver import serve
from small_corpora import EN, corpus_text
from snakemake_runner import planned_jobs, snakemake

DE = [
    "Der Ausschuss traf sich am Dienstag um das neue Budget für die Bibliothek zu besprechen.",
    "Mehrere Mitglieder meinten dass die Lesesäle längere Öffnungszeiten brauchten.",
    "Andere wollten das Geld für digitale Bücher und schnellere Computer ausgeben.",
    "Nach einer langen Debatte einigten sie sich beide Pläne in den nächsten zwei Jahren zu "
    "finanzieren.",
    "Der Fluss war in der Nacht nach drei Tagen starken Regens stark gestiegen.",
    "Die Bauern im Tal brachten ihre Tiere vor der Morgendämmerung auf höheres Gelände.",
    "Bis zum Mittag hatte das Wasser die Hauptstraße zwischen den beiden Dörfern bedeckt.",
]

PAIRS = """the der
the die
the das
committee ausschuss
met traf
on am
tuesday dienstag
new neue
budget budget
for für
library bibliothek
several mehrere
members mitglieder
longer längere
needed brauchten
others andere
wanted wollten
money geld
digital digitale
books bücher
and und
faster schnellere
computers computer
after nach
long langen
debate debatte
they sie
both beide
plans pläne
next nächsten
two zwei
years jahren
river fluss
night nacht
three drei
days tagen
heavy starken
rain regens
farmers bauern
valley tal
their ihre
animals tiere
before vor
higher höheres
noon mittag
had hatte
water wasser
between zwischen
villages dörfern
in in
"""


def _pairs() -> list[tuple[str, str]]:
    return [tuple(line.split()) for line in PAIRS.strip().splitlines()]  # type: ignore[misc]


def _base_config(work: Path) -> dict:
    data = work / "data"
    data.mkdir(parents=True)
    (data / "en.txt").write_text(corpus_text(EN), encoding="utf-8")
    (data / "de.txt").write_text(corpus_text(DE), encoding="utf-8")
    from tiny_encoder import make_tiny_encoder

    make_tiny_encoder(work / "encoder", [corpus_text(EN), corpus_text(DE)])
    return {
        "name": "lx",
        "languages": ["en", "de"],
        "seeds": [1, 2],
        "encoder": {"source": "local", "path": str(work / "encoder")},
        "extract": {
            "layer": 1,
            "vocab": {"min_count": 2},
            "epochs": 2,
            "batch_sentences": 8,
            "subsample_t": 1e-3,
            "aggregation": {"enabled": True, "max_contexts": 3},
        },
        "corpus": {
            "max_sentences": 60,
            "sources": {
                lang: [{"type": "text", "path": f"data/{lang}.txt"}] for lang in ("en", "de")
            },
        },
        "segment": {"tools": {"en": "icu", "de": "icu"}},
    }


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("lexical")
    cfg = _base_config(work)
    (work / "data" / "en-de.txt").write_text(PAIRS, encoding="utf-8")
    cfg.update(
        dictionaries={"sources": [], "files": {"de": "data/en-de.txt"}},
        align={"recipe": "orthogonal"},
    )
    (work / "c.yaml").write_text(yaml.safe_dump(cfg))
    snakemake(work, "--configfile", "c.yaml", "--cores", "2", "all")
    return work


@pytest.mark.slow
def test_split_map_select_evaluate(small: Path) -> None:
    res = small / "results/lx"
    d = res / "dictionaries/s0/de"
    parts = {
        p: [tuple(x.split()) for x in (d / f"{p}.txt").read_text().splitlines()]
        for p in ("train", "valid", "test", "test.reverse")
    }
    src = {p: {s for s, _ in v} for p, v in parts.items()}
    assert parts["train"] and parts["test"]
    assert not (src["train"] & src["test"]) and not (src["train"] & src["valid"])
    # Reverse queries never include a German word seen in training.
    assert not src["test.reverse"] & {t for _, t in parts["train"]}
    split = json.loads((d / "split.json").read_text())
    assert split["train"]["pairs"] == len(parts["train"])

    from xlalign.mapping.vecmap import normalize, recipe_args
    from xlalign.static.vectors import read_npy

    hub_words, hub = read_npy(res / "aligned/seed1/x2s-m/en")
    raw_words, raw = read_npy(res / "static/seed1/x2s-m/en")
    assert hub_words == raw_words
    np.testing.assert_allclose(hub, normalize(raw, recipe_args("orthogonal").normalize), atol=1e-5)
    mapped = json.loads((res / "aligned/seed1/x2s-m/de.json").read_text())
    assert mapped["mapped"] is True and mapped["recipe"] == "orthogonal"
    assert mapped["dictionary"]["pairs"] == len(parts["train"])

    for seed in (1, 2):
        for space in ("x2s-ma", "aggregate-a"):
            sel = json.loads((res / f"spaces/seed{seed}/{space}/de.json").read_text())
            assert sel["chosen"] in ("mapped", "unmapped") and "validation" in sel["reason"]
            words, _ = read_npy(res / f"spaces/seed{seed}/{space}/de")
            assert (
                (res / f"spaces/seed{seed}/{space}/de.vec")
                .read_text()
                .startswith(f"{len(words)} 32\n")
            )
        for space in ("x2s-m", "x2s-ma", "aggregate", "aggregate-a"):
            rec = json.loads((res / f"eval/seed{seed}/bli/{space}/de.json").read_text())
            for direction in ("en-de", "de-en"):
                for retrieval in ("nn", "csls"):
                    r = rec["results"][direction][retrieval]
                    assert 0 <= r["p@1"] <= r["p@5"] <= r["p@10"] <= 1
                    assert 0 < r["mrr"] <= 1 and r["evaluated"] > 0

    table1 = (res / "tables/table1.md").read_text()
    for name in ("X2S-M", "X2S-MA", "Aggregation"):
        assert f"| {name} " in table1
    assert "±" in table1  # two seeds
    assert (res / "tables/table5.csv").exists()
    stats = json.loads((res / "tables/tables.json").read_text())
    assert "seed1/x2s-ma/de" in stats["selection"]

    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{small / 'results/mlflow.db'}")
    exp = client.get_experiment_by_name("xlalign/lx")
    runs = client.search_runs([exp.experiment_id], max_results=1000)
    jobs = {(r.data.tags.get("xlalign.job"), r.data.tags.get("xlalign.seed")): r for r in runs}
    bli = jobs[("bli/x2s-ma/de", "2")]
    assert "results.en-de.csls.p_1" in bli.data.metrics
    # the seed's parent carries the key metrics (the same number) and the config as params
    parent = client.get_run(bli.data.tags["mlflow.parentRunId"])
    key = "bli.x2s-ma.en-de.csls.p_1"
    assert parent.data.metrics[key] == bli.data.metrics["results.en-de.csls.p_1"]
    assert parent.data.params["seed"] == "2" and parent.data.params["name"] == "lx"
    assert exp.tags["mlflow.experimentKind"] == "custom_model_development"
    assert ("select_space/x2s-ma/de", "1") in jobs and ("map_space/aggregate/de", "1") in jobs

    assert planned_jobs(snakemake(small, "--configfile", "c.yaml", "-n", "all")) == {}


@pytest.mark.slow
def test_changed_recipe_reruns_mapping_and_evaluation_only(small: Path, tmp_path: Path) -> None:
    cfg = yaml.safe_load((small / "c.yaml").read_text())
    cfg["align"]["recipe"] = "identical"
    (small / "c2.yaml").write_text(yaml.safe_dump(cfg))
    plan = planned_jobs(snakemake(small, "--configfile", "c2.yaml", "-n", "all"))
    assert plan.get("map_space") == 2 * 2 * 2  # seeds x methods x languages
    assert plan.get("bli") and plan.get("tables") == 1
    assert not {"x2static", "teacher", "split_dictionary", "aggregate"} & set(plan)


@pytest.mark.slow
def test_dictionary_without_pairs_in_vocabulary_fails_clearly(small: Path, tmp_path: Path) -> None:
    work = tmp_path / "bad"
    work.mkdir()
    (work / "data").symlink_to(small / "data")
    (work / "none.txt").write_text("zzzz yyyy\nqqqq wwww\n")
    cfg = yaml.safe_load((small / "c.yaml").read_text())
    cfg["dictionaries"]["files"] = {"de": "none.txt"}
    cfg["align"]["empty_dictionary"] = "error"
    cfg["seeds"] = [1]
    cfg["extract"]["aggregation"]["enabled"] = False
    (work / "c.yaml").write_text(yaml.safe_dump(cfg))
    r = snakemake(
        work,
        "--configfile",
        "c.yaml",
        "--cores",
        "2",
        "results/lx/aligned/seed1/x2s-m/de.npy",
        check=False,
    )
    assert r.returncode != 0
    split = json.loads((work / "results/lx/dictionaries/s0/de/split.json").read_text())
    assert split["pool_pairs_in_vocabulary"] == 0
    log = (work / "logs/lx/map_space/seed1/x2s-m/de.log").read_text()
    assert "training dictionary of en-de is empty" in log
    for name in ("de.npy", "de.vocab.txt", "de.manifest.json"):  # the failed job's outputs
        assert not (work / "results/lx/aligned/seed1/x2s-m" / name).exists(), name


# --------------------------------------------------------------------------------------
# The paper's route against a loopback server
# --------------------------------------------------------------------------------------


def _fasttext_files(rng: np.random.Generator) -> tuple[dict[str, bytes], list[tuple[str, str]]]:
    """cc.en/cc.de .vec.gz: German = English rotated + noise, word for word (1-to-1)."""
    one_to_one: list[tuple[str, str]] = []
    seen_de: set[str] = set()
    for s, t in _pairs():
        if t not in seen_de and s not in {a for a, _ in one_to_one}:
            one_to_one.append((s, t))
            seen_de.add(t)
    one_to_one += [(f"filler{i}", f"füller{i}") for i in range(400)]
    dim = 24
    scale = 1.0 / np.sqrt(1.0 + np.arange(dim))
    centers = rng.normal(size=(12, dim)) * scale
    en = (
        centers[rng.integers(0, 12, len(one_to_one))]
        + 0.6 * rng.normal(size=(len(one_to_one), dim)) * scale
    )
    q, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    de = en @ q + 0.01 * rng.normal(size=en.shape)

    def vec(words: list[str], m: np.ndarray) -> bytes:
        lines = [f"{len(words)} {dim}"] + [
            w + " " + " ".join(f"{x:.5f}" for x in row) for w, row in zip(words, m, strict=True)
        ]
        return gzip.compress(("\n".join(lines) + "\n").encode("utf-8"))

    en_words = [a.capitalize() if i % 7 == 0 else a for i, (a, _) in enumerate(one_to_one)]
    # A rarer lowercase duplicate of "The": reading with lowercase keeps the first row only.
    en_words.append("the")
    en = np.vstack([en, rng.normal(size=(1, dim))])
    files = {
        "/ft/cc.en.300.vec.gz": vec(en_words, en),
        "/ft/cc.de.300.vec.gz": vec([b for _, b in one_to_one], de),
    }
    return files, one_to_one


def _semeval_zip() -> bytes:
    top = "SemEval17-Task2/test"
    mono = {
        "en": [
            ("river", "water", 3.2),
            ("rain", "water", 3.0),
            ("money", "budget", 2.9),
            ("books", "library", 2.7),
            ("night", "tuesday", 0.9),
            ("farmers", "computers", 0.2),
        ],
        "de": [
            ("fluss", "wasser", 3.1),
            ("geld", "budget", 3.0),
            ("bücher", "bibliothek", 2.8),
            ("nacht", "dienstag", 1.0),
            ("bauern", "computer", 0.3),
        ],
    }
    cross = [
        ("river", "wasser", 3.1),
        ("money", "budget", 3.0),
        ("books", "bibliothek", 2.6),
        ("night", "dienstag", 1.0),
        ("farmers", "computer", 0.3),
    ]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for lang, rows in mono.items():
            zf.writestr(
                f"{top}/subtask1-monolingual/data/{lang}.test.data.txt",
                "".join(f"{a}\t{b}\n" for a, b, _ in rows),
            )
            zf.writestr(
                f"{top}/subtask1-monolingual/keys/{lang}.test.gold.txt",
                "".join(f"{g}\n" for *_, g in rows),
            )
        zf.writestr(
            f"{top}/subtask2-crosslingual/data/en-de.test.data.txt",
            "".join(f"{a}\t{b}\n" for a, b, _ in cross),
        )
        zf.writestr(
            f"{top}/subtask2-crosslingual/keys/en-de.test.gold.txt",
            "".join(f"{g}\n" for *_, g in cross),
        )
    return buf.getvalue()


def _muse_files() -> dict[str, bytes]:
    pairs = _pairs()
    train, test = pairs[:34], pairs[34:]

    def muse(ps: list[tuple[str, str]]) -> bytes:
        return "".join(f"{a} {b}\n" for a, b in ps).encode("utf-8")

    rev = [(b, a) for a, b in pairs]
    return {
        "/muse/en-de.txt": muse(pairs),
        "/muse/en-de.0-5000.txt": muse(train),
        "/muse/en-de.5000-6500.txt": muse(test),
        "/muse/de-en.txt": muse(rev),
        "/muse/de-en.0-5000.txt": muse([(b, a) for a, b in train]),
        "/muse/de-en.5000-6500.txt": muse([(b, a) for a, b in test]),
    }


@pytest.mark.slow
def test_paper_route_fasttext_muse_semeval_over_http(tmp_path: Path) -> None:
    work = tmp_path / "paper"
    cfg = _base_config(work)
    ft, truth = _fasttext_files(np.random.default_rng(0))
    files = {**ft, **_muse_files(), "/semeval/semeval2017-task2.zip": _semeval_zip()}
    with serve(files) as srv:
        cfg.update(
            seeds=[1],
            dictionaries={"sources": ["muse"]},
            align={
                "recipe": "orthogonal",
                "dictionary": {"source": "induced"},
                "induce": {
                    "space": "fasttext",
                    "max_rank": 1000,
                    "options": {"stochastic_interval": 5},
                },
            },
            evaluate={"wordsim": {"semeval": True}},
            downloads={
                "muse": {"url": srv.url("/muse/{src}-{tgt}{split}.txt")},
                "fasttext": {"url": srv.url("/ft/cc.{lang}.300.vec.gz")},
                "semeval2017": {"url": srv.url("/semeval/semeval2017-task2.zip")},
            },
        )
        (work / "c.yaml").write_text(yaml.safe_dump(cfg))
        snakemake(work, "--configfile", "c.yaml", "--cores", "2", "all", timeout=1800)
        assert srv.requests_for("/ft/cc.de.300.vec.gz")

    res = work / "results/lx"
    unsup = json.loads((res / "spaces/seed1/fasttext-unsup/de.json").read_text())
    assert unsup["recipe"] == "unsupervised" and unsup["mapped"] is True
    # Lowercased on reading: "Committee" and "committee" are one word.
    assert unsup["hub_space"]["case_duplicates_dropped"] == 1
    induced = [
        tuple(x.split())
        for x in (res / "dictionaries/induced/seed1/de.txt").read_text().splitlines()
    ]
    correct = set(truth)
    precision = sum(p in correct for p in induced) / len(induced)
    assert len(induced) > 300 and precision > 0.95, (len(induced), precision)
    mapped = json.loads((res / "aligned/seed1/x2s-m/de.json").read_text())
    assert mapped["dictionary"]["path"].endswith("dictionaries/induced/seed1/de.txt")

    split = json.loads((res / "dictionaries/s0/de/split.json").read_text())
    assert split["given"]["test"] and split["given"]["reverse_test"]
    test_pairs = (res / "dictionaries/s0/de/test.txt").read_text().split("\n")
    assert "heavy starken" in test_pairs  # MUSE's .5000-6500 file, as given

    ws = json.loads((res / "eval/seed1/wordsim/x2s-ma.json").read_text())
    kinds = {(r["task"], tuple(r["languages"])) for r in ws["results"]}
    assert ("cross-lingual", ("en", "de")) in kinds and ("monolingual", ("de",)) in kinds
    assert ws["compose"] is False and all(r["dataset"] == "semeval17" for r in ws["results"])
    assert all(r["found"] + r["filled"] == r["total"] for r in ws["results"])
    tables = (res / "tables/tables.md").read_text()
    assert "(official score: harmonic mean of Pearson and Spearman over every pair" in tables
    assert "fasttext_unsup" in tables
    assert (res / "tables/table6.md").exists() and (res / "tables/table7.md").exists()
