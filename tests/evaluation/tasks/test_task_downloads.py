"""The full-scale data path of the zero-shot tasks against a loopback HTTP server: official
files in their real layout (zip, tar, tar.gz, tar.bz2, JSON, plain text) fetched through
the download rule's job script, turned into records on disk by the prepare rule's job
script / :func:`prepare_task`; a checksum mismatch, a missing language, PAN-X's manual
download."""

from __future__ import annotations

import hashlib
import io
import json
import runpy
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from httpserver import Server, serve

from xlalign.core.errors import ConfigError, DownloadError, InputError
from xlalign.evaluation.tasks import official
from xlalign.evaluation.tasks.data import read_records
from xlalign.workflow import paths as wp

FIX = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[3]
SCRIPTS = REPO / "workflow" / "scripts"


def _text(rel: str) -> bytes:
    return (FIX / rel).read_bytes()


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _tar(members: dict[str, bytes], mode: str = "w") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _panx_lang(lang: str) -> bytes:
    splits = {s: _text(f"panx/{lang}/{s}") for s in ("dev", "test")}
    if lang == "en":
        splits["train"] = _text("panx/en/train")
    return _tar(splits, "w:gz")


def _ud_tgz() -> bytes:
    files = {
        f"ud-treebanks-v2.5/{p.relative_to(FIX / 'ud').as_posix()}": p.read_bytes()
        for p in sorted((FIX / "ud").rglob("*.conllu"))
    }
    files["ud-treebanks-v2.5/UD_English-Tiny/LICENSE.txt"] = b"CC BY-SA 4.0\n"
    return _tar(files, "w:gz")


def _bucc(split: str) -> bytes:
    return _tar(
        {
            f"bucc2018/de-en/de-en.{split}.{side}": _text(f"bucc/de-en.sample.{side}")
            for side in ("de", "en", "gold")
        },
        "w:bz2",
    )


def official_files() -> dict[str, dict[str, bytes]]:
    """dataset -> file name -> bytes, each file in its owner's layout."""
    squad = _text("squad.json")
    pawsx = _text("pawsx/dev_2k.tsv")
    return {
        "xnli": {
            "XNLI-1.0.zip": _zip(
                {
                    "XNLI-1.0/xnli.dev.tsv": _text("xnli/xnli.dev.tsv"),
                    "XNLI-1.0/xnli.test.tsv": _text("xnli/xnli.test.tsv"),
                    "__MACOSX/XNLI-1.0/._xnli.dev.tsv": b"\x00\x05",
                }
            ),
            "XNLI-MT-1.0.zip": _zip(
                {"XNLI-MT-1.0/multinli/multinli.train.en.tsv": _text("xnli/multinli.train.en.tsv")}
            ),
        },
        "panx": {
            "panx_dataset.tar": _tar({"en.tar.gz": _panx_lang("en"), "de.tar.gz": _panx_lang("de")})
        },
        "ud25": {"ud-treebanks-v2.5.tgz": _ud_tgz()},
        "pawsx": {
            "x-final.tar.gz": _tar(
                {
                    f"x-final/{lang}/{f}": pawsx
                    for lang in ("en", "de")
                    for f in (
                        "dev_2k.tsv",
                        "test_2k.tsv",
                        "train.tsv" if lang == "en" else "translated_train.tsv",
                    )
                },
                "w:gz",
            )
        },
        "squad": {"train-v1.1.json": squad, "dev-v1.1.json": squad},
        "xquad": {"xquad.en.json": squad, "xquad.de.json": squad},
        "mlqa": {
            "MLQA_V1.zip": _zip(
                {
                    f"MLQA_V1/{s}/{s}-context-{lang}-question-{lang}.json": squad
                    for s in ("dev", "test")
                    for lang in ("en", "de")
                }
            )
        },
        "tydiqa": {
            "tydiqa-goldp-v1.1-train.json": _text("tydiqa-goldp.json"),
            "tydiqa-goldp-v1.1-dev.json": _text("tydiqa-goldp.json"),
        },
        "tatoeba": {
            name: _text(f"tatoeba/{name}")
            for name in (
                "tatoeba.deu-eng.deu",
                "tatoeba.deu-eng.eng",
                "tatoeba.lvs-eng.lvs",
                "tatoeba.lvs-eng.eng",
            )
        },
        "bucc": {
            "bucc2018-de-en.sample-gold.tar.bz2": _bucc("sample"),
            "bucc2018-de-en.training-gold.tar.bz2": _bucc("training"),
        },
    }


FILES = official_files()


def _config(srv: Server, *, checksums: bool = True) -> dict[str, Any]:
    tasks: dict[str, Any] = {}
    for ds in official.DATASETS:
        files = FILES.get(ds, {})
        tasks[ds] = {
            "url": srv.url(f"/{ds}/{{file}}"),
            "sha256": {n: hashlib.sha256(b).hexdigest() for n, b in files.items()}
            if checksums
            else {},
        }
    # PAN-X: a fixed URL with a query string, as Dropbox's (the file name drops the query)
    tasks["panx"]["url"] = srv.url("/dropbox/panx_dataset.tar?dl=1")
    return {"downloads": {"retries": 1, "timeout": 10, "tasks": tasks}}


@pytest.fixture
def server() -> Iterator[Server]:
    served = {f"/{ds}/{name}": data for ds, files in FILES.items() for name, data in files.items()}
    served["/dropbox/panx_dataset.tar"] = FILES["panx"]["panx_dataset.tar"]
    with serve(served) as srv:
        yield srv


class _Wildcards(dict):  # type: ignore[type-arg]
    """Snakemake's wildcards: a mapping with attribute access."""

    def __getattr__(self, key: str) -> Any:
        return self[key]


def _run_script(name: str, work: Path, **fields: Any) -> None:
    """Run a job script of workflow/scripts with a stand-in for Snakemake's object."""
    for log in fields["log"]:
        Path(log).parent.mkdir(parents=True, exist_ok=True)  # as Snakemake does
    smk = SimpleNamespace(threads=1, **fields)
    smk.wildcards = _Wildcards(fields["wildcards"])
    runpy.run_path(str(SCRIPTS / name), init_globals={"snakemake": smk}, run_name="__main__")


def fetch_and_prepare(cfg: dict[str, Any], task: str, lang: str, work: Path) -> Path:
    """What the two rules do for one (task, language): each download job, then prepare."""
    inputs = []
    for ds, name in official.source_files(cfg, task, lang):
        dest = work / wp.task_download_file(ds, name)
        log = work / f"logs/download/tasks/{ds}/{name}.log"
        _run_script(
            "download_task.py", work,
            params=SimpleNamespace(dl=official.download_spec(cfg, ds, name)),
            output=[str(dest)], log=[str(log)], rule="download_task_file",
            wildcards={"dataset": ds, "file": name},
        )  # fmt: skip
        inputs.append(str(dest))
    out = work / wp.task_dir(task, lang)
    log = work / f"logs/tasks/prepare/{task}/{lang}.log"
    _run_script(
        "prepare_task.py", work,
        input=inputs, output=SimpleNamespace(dir=str(out)), log=[str(log)], rule="prepare_task",
        params=SimpleNamespace(options=official.prepare_options(task)),
        wildcards={"task": task, "lang": lang},
    )  # fmt: skip
    return out


def _stats(d: Path) -> dict[str, Any]:
    return json.loads((d / "stats.json").read_text(encoding="utf-8"))


def test_xnli_zip_to_records(server: Server, tmp_path: Path) -> None:
    cfg = _config(server)
    de = fetch_and_prepare(cfg, "xnli", "de", tmp_path)
    assert sorted(p.name for p in de.iterdir()) == ["dev.jsonl", "stats.json", "test.jsonl"]
    dev = read_records(de / "dev.jsonl", "pair")
    assert [(r.id, r.label) for r in dev] == [("1", "neutral"), ("2", "contradiction")]
    stats = _stats(de)
    assert stats["splits"]["dev"]["skipped"] == {"empty_sentence": 1, "no_gold_label": 1}
    assert stats["splits"]["dev"]["from"] == "XNLI-1.0.zip:XNLI-1.0/xnli.dev.tsv"
    assert stats["sources"] == [
        {
            "file": "XNLI-1.0.zip",
            "sha256": hashlib.sha256(FILES["xnli"]["XNLI-1.0.zip"]).hexdigest(),
            "dataset": "xnli",
        }
    ]
    assert stats["silver"] is False and "CC BY-NC" in stats["licence"]

    en = fetch_and_prepare(cfg, "xnli", "en", tmp_path)
    train = read_records(en / "train.jsonl", "pair")
    assert [r.label for r in train] == ["neutral", "entailment", "contradiction"]
    assert set(_stats(en)["splits"]) == {"train", "dev", "test"}
    # The jobs logged into their log files; no partial download is left.
    assert "saved to" in (tmp_path / "logs/download/tasks/xnli/XNLI-1.0.zip.log").read_text()
    assert not list((tmp_path / "resources/download/tasks/xnli").glob("*.part"))
    # A second run finds the files in place: no new request.
    before = len(server.requests)
    fetch_and_prepare(cfg, "xnli", "de", tmp_path)
    assert len(server.requests) == before


def test_checksum_mismatch_leaves_no_finished_file(server: Server, tmp_path: Path) -> None:
    cfg = _config(server)
    cfg["downloads"]["tasks"]["xnli"]["sha256"]["XNLI-1.0.zip"] = "0" * 64
    with pytest.raises(DownloadError, match="checksum mismatch"):
        fetch_and_prepare(cfg, "xnli", "de", tmp_path)
    d = tmp_path / wp.task_download_dir("xnli")
    assert not (d / "XNLI-1.0.zip").exists() and not list(d.glob("*.part"))
    assert not (tmp_path / wp.task_dir("xnli", "de")).exists()
    log = (tmp_path / "logs/download/tasks/xnli/XNLI-1.0.zip.log").read_text()
    assert "job failed" in log and "sha256" in log


def test_panx_tar_of_tar_gz_and_its_languages(server: Server, tmp_path: Path) -> None:
    cfg = _config(server)
    assert official.source_files(cfg, "panx", "de") == [("panx", "panx_dataset.tar")]
    de = fetch_and_prepare(cfg, "panx", "de", tmp_path)
    test = read_records(de / "test.jsonl", "tagged")
    assert test[0].tokens == ["Angela", "Merkel", "sprach"] and test[0].tags[0] == "B-PER"
    assert not (de / "train.jsonl").exists()  # zero-shot: no training data in a target
    en = fetch_and_prepare(cfg, "panx", "en", tmp_path)
    assert _stats(en)["splits"]["test"]["flagged"] == {"iob2_invalid": 1}
    assert len(read_records(en / "train.jsonl", "tagged")) == 2
    # The Dropbox file was fetched once for both languages.
    assert len(server.requests_for("/dropbox/panx_dataset.tar")) == 1
    with pytest.raises(InputError, match=r"no fr\.tar\.gz; its languages: de, en"):
        official.prepare_task(
            "panx", "fr", [tmp_path / wp.task_download_file("panx", "panx_dataset.tar")],
            tmp_path / "fr",
        )  # fmt: skip


def test_panx_without_a_url_says_how_to_get_it(server: Server, tmp_path: Path) -> None:
    cfg = _config(server)
    cfg["downloads"]["tasks"]["panx"]["url"] = server.url("/gone/panx_dataset.tar?dl=1")
    spec = official.download_spec(cfg, "panx", "panx_dataset.tar")
    with pytest.raises(DownloadError, match="HTTP 404") as exc:
        official.fetch(spec, tmp_path / "panx_dataset.tar")
    assert "AmazonPhotos.zip" in str(exc.value) and "downloads.tasks.panx.url" in str(exc.value)


def test_panx_amazon_zip_saved_by_hand(tmp_path: Path) -> None:
    inner = {f"panx_dataset/{lang}.tar.gz": _panx_lang(lang) for lang in ("en", "de")}
    saved = tmp_path / "AmazonPhotos.zip"
    saved.write_bytes(_zip(inner))
    cfg = {"downloads": {"tasks": {"panx": {"url": saved.as_uri(), "sha256": {}}}}}
    ((_, name),) = official.source_files(cfg, "panx", "de")
    assert name == "AmazonPhotos.zip"
    work = tmp_path / "w"
    fetch_and_prepare(cfg, "panx", "de", work)
    dev = read_records(work / wp.task_split_file("panx", "de", "dev"), "tagged")
    assert dev[0].tokens == ["Berlin", "ist", "groß"]


def test_ud_treebanks_per_language(server: Server, tmp_path: Path) -> None:
    cfg = _config(server)
    en = fetch_and_prepare(cfg, "udpos", "en", tmp_path)
    stats = _stats(en)
    assert stats["splits"]["test"]["from"] == "en_other-ud-test.conllu, en_tiny-ud-test.conllu"
    assert stats["splits"]["train"]["skipped"] == {"textless": 1}
    assert "treebanks merged: UD_English-Other, UD_English-Tiny" in stats["notes"]
    assert stats["options"]["multiword"] == "words"
    de = fetch_and_prepare(cfg, "udpos", "de", tmp_path)
    assert sorted(p.name for p in de.iterdir()) == ["stats.json", "test.jsonl"]
    parse = fetch_and_prepare(cfg, "udparse", "en", tmp_path)
    trees = read_records(parse / "train.jsonl", "parsed")
    assert trees[0].heads == [4, 4, 4, 0, 4]
    # Chinese: only Classical Chinese (lzh_) in the archive, which is not zh
    with pytest.raises(InputError, match="no CoNLL-U file of language 'zh'"):
        official.prepare_task(
            "udpos", "zh", [tmp_path / wp.task_download_file("ud25", "ud-treebanks-v2.5.tgz")],
            tmp_path / "zh",
        )  # fmt: skip


def test_qa_tasks(server: Server, tmp_path: Path) -> None:
    cfg = _config(server)
    xquad_en = fetch_and_prepare(cfg, "xquad", "en", tmp_path)
    assert sorted(_stats(xquad_en)["splits"]) == ["dev", "test", "train"]
    assert _stats(xquad_en)["splits"]["train"]["from"] == "train-v1.1.json"
    xquad_de = fetch_and_prepare(cfg, "xquad", "de", tmp_path)
    assert sorted(p.name for p in xquad_de.iterdir()) == ["stats.json", "test.jsonl"]
    mlqa_de = fetch_and_prepare(cfg, "mlqa", "de", tmp_path)
    stats = _stats(mlqa_de)["splits"]
    assert stats["test"]["from"] == "MLQA_V1.zip:MLQA_V1/test/test-context-de-question-de.json"
    assert stats["dev"]["flagged"] == {"answer_start_mismatch": 1, "no_answer": 1}
    ty_en = fetch_and_prepare(cfg, "tydiqa", "en", tmp_path)
    assert [r.id for r in read_records(ty_en / "train.jsonl", "qa")] == [
        "english-300-1",
        "english-301-1",
    ]
    assert sorted(_stats(ty_en)["splits"]) == ["test", "train"]
    ty_fi = fetch_and_prepare(cfg, "tydiqa", "fi", tmp_path)
    assert read_records(ty_fi / "test.jsonl", "qa")[0].answers[0]["text"] == "Helsinki"
    # MLQA: SQuAD's files were fetched once for XQuAD and MLQA together
    fetch_and_prepare(cfg, "mlqa", "en", tmp_path)
    assert len(server.requests_for("/squad/train-v1.1.json")) == 1


def test_pawsx_tatoeba_bucc(server: Server, tmp_path: Path) -> None:
    cfg = _config(server)
    p = fetch_and_prepare(cfg, "pawsx", "en", tmp_path)
    assert _stats(p)["splits"]["train"]["from"] == "x-final.tar.gz:x-final/en/train.tsv"
    t = fetch_and_prepare(cfg, "tatoeba", "de", tmp_path)
    pairs = read_records(t / "test.jsonl", "retrieval")
    assert [r.id for r in pairs] == ["0", "1", "3"]
    b = fetch_and_prepare(cfg, "bucc", "de", tmp_path)
    stats = _stats(b)
    assert stats["splits"]["test"]["from"] == "bucc2018-de-en.training-gold.tar.bz2"
    assert stats["splits"]["test"]["files"] == {
        "source": "test.de.tsv",
        "target": "test.en.tsv",
        "gold": "test.gold.tsv",
    }
    assert (b / "test.gold.tsv").read_text().splitlines()[0] == "de-000000001\ten-000000002"
    assert read_records(b / "dev.jsonl", "retrieval")[0].target == "This is a house."


def test_tatoeba_laser_reads_the_same_downloads(server: Server, tmp_path: Path) -> None:
    """LASER's full Tatoeba: a language XTREME lacks under its xlalign code (lv for LASER's
    lvs), from the `tatoeba` downloads, which XTREME's subset shares (one request)."""
    cfg = _config(server)
    lv = fetch_and_prepare(cfg, "tatoeba-laser", "lv", tmp_path)
    pairs = read_records(lv / "test.jsonl", "retrieval")
    assert [(r.id, r.source, r.target) for r in pairs] == [
        ("0", "Es esmu noguris.", "I am tired."),
        ("1", "Kur ir Toms?", "Where is Tom?"),
        ("2", "Paldies.", "Thank you."),
    ]
    stats = _stats(lv)
    assert [(s["file"], s["dataset"]) for s in stats["sources"]] == [
        ("tatoeba.lvs-eng.eng", "tatoeba"),
        ("tatoeba.lvs-eng.lvs", "tatoeba"),
    ]
    assert (tmp_path / wp.task_download_file("tatoeba", "tatoeba.lvs-eng.lvs")).is_file()
    fetch_and_prepare(cfg, "tatoeba", "de", tmp_path)
    de = fetch_and_prepare(cfg, "tatoeba-laser", "de", tmp_path)
    assert len(server.requests_for("/tatoeba/tatoeba.deu-eng.deu")) == 1
    assert [r.id for r in read_records(de / "test.jsonl", "retrieval")] == ["0", "1", "3"]
    # XTREME's subset keeps its languages
    with pytest.raises(ConfigError, match="'tatoeba' has no data for language 'lv'"):
        official.source_files(cfg, "tatoeba", "lv")


def test_tatoeba_laser_languages_without_a_code_are_named() -> None:
    from xlalign.evaluation.tasks.formats import tatoeba_files

    with pytest.raises(InputError, match=r"LASER's 'kzj' has no xlalign language code \(Coastal"):
        tatoeba_files("kzj", "tatoeba-laser")
    with pytest.raises(ConfigError, match="'tatoeba-laser' has no data for language 'ber'"):
        official.source_files({}, "tatoeba-laser", "ber")


def test_languages_a_dataset_lacks_fail_before_any_download() -> None:
    cfg = {"downloads": {"tasks": {"panx": {"url": "https://x/panx_dataset.tar"}}}}
    with pytest.raises(ConfigError, match="'xnli' has no data for language 'ja'"):
        official.source_files(cfg, "xnli", "ja")
    with pytest.raises(ConfigError, match="'tatoeba' has no data for language 'en'"):
        official.source_files(cfg, "tatoeba", "en")
    with pytest.raises(ConfigError, match="unknown full-scale task"):
        official.source_files(cfg, "pos-gold", "en")


def test_every_file_has_an_official_url_in_the_default_config() -> None:
    import xlalign.config

    cfg = xlalign.config.load(REPO / "config" / "paper.yaml")
    seen = set()
    for task in official.TASKS:
        for lang in official.task_languages(task):
            for ds, name in official.source_files(cfg, task, lang):
                spec = official.download_spec(cfg, ds, name)
                assert (
                    spec["url"].startswith("https://")
                    and official.download_name(spec["url"]) == name
                )
                seen.add((ds, name))
    with_sha = {n for ds, n in seen if official.download_spec(cfg, ds, n)["sha256"]}
    without = sorted(n for _, n in seen if n not in with_sha)
    assert without == ["XNLI-MT-1.0.zip", "ud-treebanks-v2.7.tgz"]
    spec = official.download_spec(cfg, "xnli", "XNLI-1.0.zip")
    assert spec["url"] == "https://dl.fbaipublicfiles.com/XNLI/XNLI-1.0.zip"
    assert spec["sha256"] == "4ba1d5e1afdb7161f0f23c66dc787802ccfa8a25a3ddd3b165a35e50df346ab1"
    assert official.download_spec(cfg, "panx", "panx_dataset.tar")["url"].endswith("?dl=1")
    with pytest.raises(ConfigError, match=r"not 'other\.tar'"):
        official.download_spec(cfg, "panx", "other.tar")
