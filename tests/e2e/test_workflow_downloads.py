"""Full-scale paths of the workflow against a loopback HTTP server: CC100 through the
download rule into `sample`, a UDPipe model through its download rule into `segment`, and
a Hugging Face encoder through the Hub API into resources/, with an interrupted transfer,
a resumed one and a checksum failure."""

from __future__ import annotations

import hashlib
import json
import lzma
from pathlib import Path

import pytest
import yaml
from httpserver import hf_server_files, serve
from small_corpora import corpus_text, turkish_raw_sentences
from snakemake_runner import snakemake

SW = [
    "Kamati ilikutana Jumanne ili kujadili bajeti mpya ya maktaba ya mji wetu.",
    "Wanachama kadhaa walisema kwamba vyumba vya kusomea vinahitaji saa ndefu zaidi.",
    "Wengine walitaka kutumia pesa hizo kununua vitabu vya kidijitali na kompyuta.",
    "Baada ya mjadala mrefu walikubaliana kugharamia mipango yote miwili kwa miaka miwili.",
    "Mto ulikuwa umefurika sana usiku baada ya siku tatu za mvua kubwa sana.",
]


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """A tiny encoder with its tokenizer, as files a Hub repository would hold."""
    from tiny_encoder import make_tiny_encoder

    texts = [corpus_text(SW), corpus_text(turkish_raw_sentences(30))]
    out = make_tiny_encoder(tmp_path_factory.mktemp("bert"), texts)
    return {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}


@pytest.mark.slow
def test_download_rules_feed_the_stages(tmp_path: Path, tiny_bert: dict[str, bytes]) -> None:
    from xlalign.corpus.udpipe import model_filename, train_udpipe_model, turkish_treebank_blocks

    model = train_udpipe_model(turkish_treebank_blocks(300), tmp_path / "tr.udpipe")
    sw_xz = lzma.compress(corpus_text(SW).encode("utf-8"))
    tr_xz = lzma.compress(corpus_text(turkish_raw_sentences(30)).encode("utf-8"))
    files = {
        "/cc100/sw.txt.xz": sw_xz,
        "/cc100/tr.txt.xz": tr_xz,
        f"/udpipe/{model_filename('tr')}": model.read_bytes(),
        **hf_server_files("org/tiny-bert", tiny_bert),
    }
    faults = {"/cc100/sw.txt.xz": {"truncate_at": len(sw_xz) // 3, "truncate_times": 1}}
    work = tmp_path / "w"
    work.mkdir()
    with serve(files, faults) as srv:
        cfg = {
            "name": "dl",
            "languages": ["sw", "tr"],
            "seeds": [1],
            "encoder": {"source": "huggingface", "name": "org/tiny-bert"},
            "corpus": {"max_sentences": 50},
            "extract": {"layer": 1, "vocab": {"min_count": 2}, "epochs": 1},
            "dictionaries": {"sources": []},
            "align": {"enabled": False},
            "evaluate": {"spaces": []},
            "downloads": {
                "retries": 2,
                "cc100": {
                    "url": srv.url("/cc100/{code}.txt.xz"),
                    "sha256": {"sw.txt.xz": hashlib.sha256(sw_xz).hexdigest()},
                },
                "udpipe": {"url": srv.url("/udpipe/{filename}")},
                "huggingface": {"endpoint": srv.base},
            },
        }
        (work / "c.yaml").write_text(yaml.safe_dump(cfg))
        snakemake(work, "--configfile", "c.yaml", "--cores", "2", "all")

        # The interrupted CC100 transfer resumed where it stopped.
        sw_reqs = srv.requests_for("/cc100/sw.txt.xz")
        assert len(sw_reqs) == 2 and sw_reqs[1].range == f"bytes={len(sw_xz) // 3}-"
        assert (work / "resources/download/cc100/sw.txt.xz").read_bytes() == sw_xz
        assert not list((work / "resources/download/cc100").glob("*.part"))

        seg = work / "results/dl/corpus/s0/segment"
        assert json.loads((seg / "tr.json").read_text())["tool"].startswith("udpipe")
        assert json.loads((seg / "sw.json").read_text())["tool"] == "icu"
        sample = json.loads((work / "results/dl/corpus/s0/sample/sw.json").read_text())
        assert sample["sources"][0]["type"] == "cc100"

        enc = work / "resources/models/huggingface/org--tiny-bert@main"
        manifest = json.loads((enc / "xlalign-download.json").read_text())
        assert manifest["repo"] == "org/tiny-bert"
        from transformers import AutoModel

        loaded = AutoModel.from_pretrained(enc, local_files_only=True)
        assert loaded.config.hidden_size == 32
        assert (work / "results/dl/static/seed1/x2s-m/tr.vec").exists()

        # A corrupted mirror: the checksum fails, nothing that looks finished is left.
        (work / "resources/download/cc100/sw.txt.xz").unlink()
        srv.files["/cc100/sw.txt.xz"] = sw_xz[:-10] + b"0123456789"
        r = snakemake(
            work,
            "--configfile",
            "c.yaml",
            "--cores",
            "1",
            "resources/download/cc100/sw.txt.xz",
            check=False,
        )
        assert r.returncode != 0
        assert not (work / "resources/download/cc100/sw.txt.xz").exists()
        assert not list((work / "resources/download/cc100").glob("sw*.part"))
        log = (work / "logs/download/cc100/sw.log").read_text()
        assert "sha256" in log.lower() and "sw.txt.xz" in log
