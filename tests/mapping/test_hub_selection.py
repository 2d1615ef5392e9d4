"""The lexical steps over files: mapping into the hub, selection, BLI records, similarity."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from xlalign.core.errors import InputError
from xlalign.dictionaries.split import write_pairs
from xlalign.evaluation.bli import bli_record
from xlalign.evaluation.wordsim import wordsim_record
from xlalign.mapping.hub import map_to_hub
from xlalign.mapping.selection import select_space
from xlalign.static.vectors import read_npy, write_npy

N, DIM = 600, 24


def _spaces(tmp_path: Path, noise: float = 0.05) -> tuple[Path, Path, list[tuple[str, str]]]:
    """English and 'xx' spaces: xx = en @ rotation + noise, words e<i> <-> x<i>."""
    rng = np.random.default_rng(0)
    scale = 1.0 / np.sqrt(1.0 + np.arange(DIM))
    centers = rng.normal(size=(10, DIM)) * scale
    en = centers[rng.integers(0, 10, N)] + 0.7 * rng.normal(size=(N, DIM)) * scale
    q, _ = np.linalg.qr(rng.normal(size=(DIM, DIM)))
    xx = en @ q + noise * rng.normal(size=en.shape)
    write_npy([f"e{i}" for i in range(N)], en.astype(np.float32), tmp_path / "en")
    write_npy([f"x{i}" for i in range(N)], xx.astype(np.float32), tmp_path / "xx")
    return tmp_path / "en.npy", tmp_path / "xx.npy", [(f"e{i}", f"x{i}") for i in range(N)]


def _map(tmp_path: Path, en: Path, xx: Path, train: list, recipe: str = "orthogonal") -> Path:
    write_pairs(train, tmp_path / "train.txt")
    for lang, space in (("en", en), ("xx", xx)):
        map_to_hub(
            language=lang,
            hub="en",
            space=space,
            hub_space=en,
            dictionary=tmp_path / "train.txt" if lang != "en" else None,
            recipe=recipe,
            options={},
            seed=1,
            out_stem=tmp_path / "mapped" / lang,
            stats_path=tmp_path / "mapped" / f"{lang}.json",
            pair_path=tmp_path / "mapped" / f"{lang}.pair.npz",
            progress=False,
        )
    return tmp_path / "mapped"


def _select(tmp_path: Path, en: Path, xx: Path, mapped: Path, valid: list) -> dict:
    write_pairs(valid, tmp_path / "valid.txt")
    write_pairs([(t, s) for s, t in valid], tmp_path / "valid.rev.txt")
    return select_space(
        language="xx",
        hub="en",
        mapped=mapped / "xx.npy",
        mapped_pair=mapped / "xx.pair.npz",
        unmapped=xx,
        hub_space=mapped / "en.npy",
        valid={"en-xx": tmp_path / "valid.txt", "xx-en": tmp_path / "valid.rev.txt"},
        normalize=["unit", "center"],
        out_stem=tmp_path / "sel" / "xx",
        vec_path=tmp_path / "sel" / "xx.vec",
        stats_path=tmp_path / "sel" / "xx.json",
        pair_path=tmp_path / "sel" / "xx.pair.npz",
    )


def test_mapping_recovers_the_rotation_and_selection_keeps_it(tmp_path: Path) -> None:
    en, xx, pairs = _spaces(tmp_path)
    mapped = _map(tmp_path, en, xx, pairs[:300])
    stats = json.loads((mapped / "xx.json").read_text())
    assert stats["mapped"] is True and stats["dictionary"]["pairs"] == 300
    hub = json.loads((mapped / "en.json").read_text())
    assert hub["role"] == "hub" and hub["mapped"] is False
    rec = bli_record(
        space_name="m",
        seed=1,
        language="xx",
        hub="en",
        space=mapped / "xx.npy",
        hub_space=mapped / "en.npy",
        dictionaries={"en-xx": _write(tmp_path / "t.txt", pairs[400:500])},
        out_path=tmp_path / "bli.json",
    )
    assert rec["results"]["en-xx"]["csls"]["p@1"] > 0.95
    assert rec["results"]["en-xx"]["nn"]["evaluated"] == 100
    sel = _select(tmp_path, en, xx, mapped, pairs[300:400])
    assert sel["chosen"] == "mapped" and "mapped" in sel["reason"]
    assert sel["validation"]["mapped"]["mean"] > 0.9 > sel["validation"]["unmapped"]["mean"]
    _words, vecs = read_npy(tmp_path / "sel" / "xx")
    _, mapped_vecs = read_npy(mapped / "xx")
    np.testing.assert_array_equal(vecs, mapped_vecs)
    assert (tmp_path / "sel" / "xx.vec").read_text().startswith(f"{N} {DIM}\n")


def test_selection_keeps_the_unmapped_space_when_mapping_hurts(tmp_path: Path) -> None:
    en, _, pairs = _spaces(tmp_path)
    # A language already in the hub's space (no rotation) and a wrong training dictionary.
    rng = np.random.default_rng(1)
    _, en_vecs = read_npy(str(en)[:-4])
    write_npy(
        [f"x{i}" for i in range(N)],
        en_vecs + 0.01 * rng.normal(size=en_vecs.shape).astype(np.float32),
        tmp_path / "same",
    )
    same = tmp_path / "same.npy"
    wrong = [(f"e{i}", f"x{(i * 7 + 3) % N}") for i in range(300)]
    mapped = _map(tmp_path, en, same, wrong)
    sel = _select(tmp_path, en, same, mapped, pairs[300:400])
    assert sel["chosen"] == "unmapped" and "did not help" in sel["reason"]


def test_empty_training_dictionary_is_an_error_or_explicitly_unmapped(tmp_path: Path) -> None:
    en, xx, pairs = _spaces(tmp_path)
    with pytest.raises(InputError, match="training dictionary of en-xx is empty"):
        _map(tmp_path, en, xx, [])
    write_pairs([("nope", "nein")], tmp_path / "oov.txt")
    stats = map_to_hub(
        language="xx",
        hub="en",
        space=xx,
        hub_space=en,
        dictionary=tmp_path / "oov.txt",
        recipe="orthogonal",
        options={},
        seed=1,
        out_stem=tmp_path / "m" / "xx",
        stats_path=tmp_path / "m" / "xx.json",
        pair_path=tmp_path / "m" / "xx.pair.npz",
        empty="keep-unmapped",
    )
    assert stats["mapped"] is False and "no pair with both words" in stats["reason"]
    from xlalign.mapping.vecmap import normalize

    _, written = read_npy(tmp_path / "m" / "xx")
    _, raw = read_npy(str(xx)[:-4])
    np.testing.assert_allclose(written, normalize(raw, ["unit", "center"]), atol=1e-6)
    _map(tmp_path, en, xx, pairs[:10])  # the hub file for the selection below
    sel = select_space(
        language="xx",
        hub="en",
        mapped=tmp_path / "m" / "xx.npy",
        mapped_pair=tmp_path / "m" / "xx.pair.npz",
        unmapped=xx,
        hub_space=tmp_path / "mapped" / "en.npy",
        valid={},
        mapped_stats=tmp_path / "m" / "xx.json",
        normalize=["unit", "center"],
        out_stem=tmp_path / "sel" / "xx",
        vec_path=tmp_path / "sel" / "xx.vec",
        stats_path=tmp_path / "sel" / "xx.json",
        pair_path=tmp_path / "sel" / "xx.pair.npz",
    )
    assert sel["chosen"] == "unmapped" and sel["reason"].startswith("not mapped:")


def test_bli_record_skips_a_direction_without_pairs(tmp_path: Path) -> None:
    en, xx, pairs = _spaces(tmp_path)
    rec = bli_record(
        space_name="raw",
        seed=1,
        language="xx",
        hub="en",
        space=xx,
        hub_space=en,
        dictionaries={
            "en-xx": _write(tmp_path / "t.txt", pairs[:50]),
            "xx-en": _write(tmp_path / "empty.txt", []),
        },
        out_path=tmp_path / "bli.json",
    )
    assert "xx-en" not in rec["results"] and "empty" in rec["skipped"]["xx-en"]
    rec = bli_record(
        space_name="raw",
        seed=1,
        language="xx",
        hub="en",
        space=xx,
        hub_space=en,
        dictionaries={"en-xx": _write(tmp_path / "oov.txt", [("zz", "yy"), ("e1", "qq")])},
        out_path=tmp_path / "bli2.json",
    )
    assert rec["results"] == {} and "none of its 2 source words" in rec["skipped"]["en-xx"]
    on_disk = json.loads((tmp_path / "bli.json").read_text())
    assert on_disk["results"]["en-xx"]["nn"]["evaluated"] == 50


def test_wordsim_record(tmp_path: Path) -> None:
    from xlalign.evaluation.wordsim import WordSimDataset

    words = ["cat", "dog", "car", "bus", "tree"]
    vecs = np.array([[1, 0.1], [0.95, 0.1], [0, 1], [0.1, 0.9], [0.7, 0.7]], dtype=np.float32)
    write_npy(words, vecs, tmp_path / "en")
    ds = WordSimDataset(
        "toy",
        ("en",),
        [("cat", "dog", 9.0), ("car", "bus", 8.5), ("cat", "car", 1.0), ("dog", "zzz", 5.0)],
    )
    rec = wordsim_record(
        space_name="s",
        seed=1,
        spaces={"en": tmp_path / "en.npy"},
        datasets=[("toy", ds), ("toy-de", WordSimDataset("t", ("de",), []))],
        out_path=tmp_path / "ws.json",
    )
    (res,) = rec["results"]
    assert res["dataset"] == "toy" and res["found"] == 3 and res["total"] == 4
    assert res["spearman_covered"] == pytest.approx(1.0)
    assert rec["skipped"][0]["dataset"] == "toy-de"


def _write(path: Path, pairs: list) -> Path:
    write_pairs(pairs, path)
    return path


def test_training_pairs_with_test_words_are_reported_dropped_or_refused(tmp_path: Path) -> None:
    en, xx, pairs = _spaces(tmp_path)
    write_pairs(pairs[:100], tmp_path / "train.txt")
    test = _write(tmp_path / "test.txt", pairs[90:95])  # e90..e94 are test words
    rev = _write(tmp_path / "test.rev.txt", [(t, s) for s, t in pairs[95:97]])  # x95, x96

    def run(policy: str) -> dict:
        return map_to_hub(
            language="xx",
            hub="en",
            space=xx,
            hub_space=en,
            dictionary=tmp_path / "train.txt",
            recipe="orthogonal",
            options={},
            seed=1,
            out_stem=tmp_path / policy / "xx",
            stats_path=tmp_path / policy / "xx.json",
            heldout={"en-xx": test, "xx-en": rev},
            overlap=policy,
        )

    assert run("report")["heldout_overlap"]["training_pairs_with_evaluation_words"] == 7
    assert run("report")["vecmap"]["pairs_used"] == 100
    dropped = run("drop")
    assert dropped["heldout_overlap"]["dropped"] == 7 and dropped["vecmap"]["pairs_used"] == 93
    with pytest.raises(InputError, match="7 training pair"):
        run("error")
