"""The public word-alignment gold sets (issue 29): fetched through the download rule's job
script from a loopback HTTP server (small files in the published formats, checksummed),
read by the configured spec, the stem reader's fixes, and the analysis table that puts
their AER beside the published figures."""

from __future__ import annotations

import hashlib
import runpy
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from httpserver import Server, serve

from xlalign.analysis import gold as gold_data
from xlalign.analysis.experiment import read_gold_set
from xlalign.core.errors import ConfigError, DownloadError, InputError
from xlalign.reporting.analyses import gold_set_layers_frame, gold_sets_frame
from xlalign.reporting.tables import MISSING

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = REPO / "workflow" / "scripts"

# In the published layouts: awesome-align's 'src ||| tgt' + 1-indexed 'i-j'/'ipj', and
# WPT 2005's '<s snum=N>' texts (CRLF on the Hindi side) + 'snum i j' links.
SERVED = {
    "/awesome/jaen.src-tgt": "天狗 \u3000 くらま ||| tengu - kurama\n".encode(),
    "/awesome/jaen.gold": b"1-1 3-3 2p2\n",
    "/eflomal/test.eng": b"<s snum=26>The law . </s>\n",
    "/eflomal/test.hin": "<s snum=26> कानून  । </s>\r\n".encode(),
    "/eflomal/test.eng.hin.wa": b"26 2 1\n26 3 2\n26 3 3\n",
}


@pytest.fixture
def server() -> Iterator[Server]:
    with serve(SERVED) as srv:
        yield srv


def _sha(path: str) -> str:
    return hashlib.sha256(SERVED[path]).hexdigest()


def _config(srv: Server, *, bad_sum: bool = False) -> dict[str, Any]:
    return {
        "downloads": {
            "retries": 0,
            "timeout": 10,
            "gold": {
                "awesome_align": {
                    "url": srv.url("/awesome/{file}"),
                    "sha256": {
                        "jaen.src-tgt": _sha("/awesome/jaen.src-tgt"),
                        "jaen.gold": "0" * 64 if bad_sum else _sha("/awesome/jaen.gold"),
                    },
                },
                "eflomal_wpt05": {
                    "url": srv.url("/eflomal/{file}"),
                    "sha256": {n: _sha(f"/eflomal/{n}") for n in ("test.eng", "test.hin")},
                },
            },
        },
        "analysis": {
            "gold": {
                "sets": {
                    "kftt-ja-en": {
                        "pair": "ja-en",
                        "format": "awesome",
                        "base": 1,
                        "download": "awesome_align",
                        "files": ["jaen.src-tgt", "jaen.gold"],
                    },
                    "wpt05-en-hi": {
                        "pair": "en-hi",
                        "format": "wpt",
                        "base": 1,
                        "download": "eflomal_wpt05",
                        "files": ["test.eng", "test.hin", "test.eng.hin.wa"],
                        "drop_lines": [3],
                    },
                }
            }
        },
    }


def _fetch(cfg: dict[str, Any], work: Path) -> dict[str, dict[str, Any]]:
    """What the download rule does for every file of the configured sets, under ``work``."""
    sets = gold_data.configured_sets(cfg)
    for spec in sets.values():
        for name, rel in zip(spec["files"], spec["paths"], strict=True):
            out = work / rel
            log = work / "logs" / f"{name}.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            smk = SimpleNamespace(
                params=SimpleNamespace(dl=gold_data.download_spec(cfg, spec["download"], name)),
                output=[str(out)], log=[str(log)], threads=1, rule="download_gold_file",
                wildcards={"gsource": spec["download"], "gfile": name},
            )  # fmt: skip
            runpy.run_path(
                str(SCRIPTS / "download.py"), init_globals={"snakemake": smk}, run_name="__main__"
            )
        spec["paths"] = [str(work / p) for p in spec["paths"]]
    return sets


def test_gold_sets_are_downloaded_and_read_in_their_formats(server: Server, tmp_path) -> None:
    sets = _fetch(_config(server), tmp_path)
    assert Path(sets["kftt-ja-en"]["paths"][0]).is_file()
    ja = gold_data.load_set(sets["kftt-ja-en"])
    assert ja.src == [["天狗", "\u3000", "くらま"]]  # U+3000 a word of its own
    assert ja.gold == {0: ({(0, 0), (2, 2)}, {(0, 0), (2, 2), (1, 1)})}
    hi = gold_data.load_set(sets["wpt05-en-hi"])
    assert hi.tgt == [["कानून", "।"]]
    assert hi.gold[0][0] == {(1, 0), (2, 1)} and hi.dropped[0][1:] == (3, "26 3 3")
    # a declared size is checked (it sizes the jobs too)
    assert len(gold_data.load_set({**sets["kftt-ja-en"], "pairs": 1}).src) == 1
    with pytest.raises(InputError, match=r"jaen\.src-tgt: 1 sentence pairs; .* declares 582"):
        gold_data.load_set({**sets["kftt-ja-en"], "pairs": 582})


def test_a_checksum_mismatch_fails_the_download(server: Server, tmp_path) -> None:
    with pytest.raises(DownloadError, match=r"(?i)sha256|checksum"):
        _fetch(_config(server, bad_sum=True), tmp_path)


def test_download_spec_and_set_spec_errors(server: Server) -> None:
    cfg = _config(server)
    spec = gold_data.download_spec(cfg, "awesome_align", "jaen.gold")
    assert spec["url"].endswith("/awesome/jaen.gold") and spec["sha256"] == _sha(
        "/awesome/jaen.gold"
    )
    assert gold_data.download_spec(cfg, "eflomal_wpt05", "test.eng.hin.wa")["sha256"] is None
    with pytest.raises(ConfigError, match=r"downloads\.gold\.other"):
        gold_data.download_spec(cfg, "other", "x")
    cfg["analysis"]["gold"]["sets"]["kftt-ja-en"]["download"] = "elsewhere"
    with pytest.raises(ConfigError, match=r"kftt-ja-en\.download: 'elsewhere'"):
        gold_data.configured_sets(cfg)
    cfg["analysis"]["gold"]["sets"]["kftt-ja-en"]["download"] = "awesome_align"
    cfg["analysis"]["gold"]["sets"]["kftt-ja-en"]["files"] = ["jaen.gold"]
    with pytest.raises(ConfigError, match=r"kftt-ja-en\.files: the awesome format reads 2"):
        gold_data.configured_sets(cfg)


def test_paper_config_fetches_the_five_sets_pinned_and_checksummed() -> None:
    import xlalign.config

    cfg = xlalign.config.load(REPO / "config" / "paper.yaml")
    sets = gold_data.configured_sets(cfg)
    assert {k: v["pair"] for k, v in sets.items()} == {
        "wpt03-en-fr": "en-fr",
        "wpt05-ro-en": "ro-en",
        "kftt-ja-en": "ja-en",
        "tsinghua-zh-en": "zh-en",
        "wpt05-en-hi": "en-hi",
    }
    for spec in sets.values():
        for name in spec["files"]:
            dl = gold_data.download_spec(cfg, spec["download"], name)
            assert dl["url"].startswith("https://raw.githubusercontent.com/")
            assert len(dl["sha256"] or "") == 64, name
    assert (
        "/81deb592988664e1beef4b61d016d71fd74c7cee/"
        in gold_data.download_spec(cfg, "eflomal_wpt05", "test.eng")["url"]
    )
    # the embedded default keeps the hand-made set
    assert gold_data.configured_sets(xlalign.config.load(REPO / "config" / "config.yaml")) == {}


def test_stem_reader_splits_on_ascii_spaces_and_checks_every_link(tmp_path: Path) -> None:
    stem = tmp_path / "set"
    (tmp_path / "set.src").write_text("a \u3000 b\nc d\n", encoding="utf-8")
    (tmp_path / "set.tgt").write_text("x y\nz\n", encoding="utf-8")
    (tmp_path / "set.gold").write_text("1-1 3-2\n2-1\n", encoding="utf-8")  # 1-indexed
    with pytest.raises(InputError, match=r"set\.gold: line 1: gold link '3-2'"):
        read_gold_set(str(stem))
    src, _tgt, gold, _ = read_gold_set(str(stem), base=1)
    assert src[0] == ["a", "\u3000", "b"]
    assert gold == {0: ({(0, 0), (2, 1)}, {(0, 0), (2, 1)}), 1: ({(1, 0)}, {(1, 0)})}


def _record(enc: str, ja: list[float], hi: list[float]) -> dict[str, Any]:
    one = {"argmax": ja}
    return {
        "encoder": enc,
        "aer_by_layer": one,
        "gold_sets": {
            "kftt-ja-en": {"pair": "ja-en", "sentences": 582, "aer_by_layer": {"argmax": ja}},
            "wpt05-en-hi": {"pair": "en-hi", "sentences": 90, "aer_by_layer": {"argmax": hi}},
        },
    }


def test_table_puts_each_set_beside_the_published_figures() -> None:
    records = [_record("e5", [0.8, 0.624, 0.7], [0.5, 0.4, 0.375])]
    reference = {"gold_sets": {"kftt-ja-en": {"aer": 0.6, "training_pairs": 0}}}
    t = gold_sets_frame(records, reference)
    cols = ["kftt-ja-en (ja-en)", "wpt05-en-hi (en-hi)"]
    assert list(t.frame.columns) == cols
    rows = {label: t.frame.loc[label] for label in t.frame.index}
    assert rows["e5 (argmax, best layer)"][cols[0]] == "62.4 (layer 1)"
    assert rows["e5 (argmax, best layer)"][cols[1]] == "37.5 (layer 2)"
    assert rows["eflomal (this run)"][cols[0]] == "60.0"
    pub = "published, awesome-align README"
    assert rows[f"eflomal ({pub})"][cols[0]] == "47.5"
    assert rows[f"mBERT (softmax, not fine-tuned) ({pub})"][cols[0]] == "45.6"
    assert rows[f"eflomal ({pub})"][cols[1]] == MISSING  # none published for en-hi
    assert any("awesome-align README" in n for n in t.footnotes)
    # the published figures (lower here) are another run: the best is this run's best
    # (en-hi: one measured number, nothing to single out)
    assert t.best() == {("eflomal (this run)", cols[0])}
    assert "**45.6**" not in t.to_markdown() and "**60.0**" in t.to_markdown()
    by_layer = gold_set_layers_frame(records, "kftt-ja-en")
    assert list(by_layer.frame.loc["e5 (argmax)"]) == ["80.0", "62.4", "70.0"]
    assert gold_data.published_key("en-fr") == "fr-en"
    assert gold_data.published_key("zh-en") == "zh-en"


def test_table_says_which_sets_have_a_language_outside_the_configured_ones() -> None:
    records = [_record("e5", [0.8, 0.624, 0.7], [0.5, 0.4, 0.375])]
    t = gold_sets_frame(records, None, languages=["en", "ja"])
    (note,) = [n for n in t.footnotes if "outside the configured" in n]
    assert "wpt05-en-hi (hi)" in note and "kftt" not in note and "Kept" in note
    assert not any("outside" in n for n in gold_sets_frame(records, None).footnotes)


def test_with_gold_sets_the_unused_gold_pair_needs_no_bitext() -> None:
    import yaml

    from xlalign.config import validate

    raw = yaml.safe_load((REPO / "config" / "paper.yaml").read_text(encoding="utf-8"))
    del raw["parallel"]["sources"]["en-de"]
    raw["analysis"]["distances"]["pairs"] = ["en-fr"]
    validate(raw)  # gold.pair (default en-de) is not used by the sets
    del raw["analysis"]["gold"]["sets"]
    with pytest.raises(ConfigError, match=r"analysis\.gold\.pair: analysis: 'en-de'"):
        validate(raw)
