"""BLI, selection and induction in the pair's own mapped spaces, as VecMap evaluates.

The reference is a direct NumPy restatement of the public tool: ``map_embeddings.py``'s
supervised recipe (normalise unit-center-unit, whiten, orthogonal mapping, re-weight 0.5,
de-whiten) and ``eval_translation.py``'s NN and CSLS (k=10) retrieval with its coverage.
The spaces are built so that scoring the workflow's hub space (every language in English's
normalised space) ranks differently: the test fails for the old route, which scored the
hub space.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

import numpy as np
import pytest

from xlalign.dictionaries.split import read_pairs, write_pairs
from xlalign.evaluation.bli import bli_record
from xlalign.mapping.hub import map_to_hub
from xlalign.mapping.induction import induce, induce_dictionary
from xlalign.mapping.pairs import bli_pair_record, load_pair
from xlalign.mapping.selection import select_space
from xlalign.static.vectors import read_npy, write_npy

N, DIM, TRAIN = 500, 16, 250

# --------------------------------------------------------------------------- VecMap, restated


def _normalize(m: np.ndarray, steps: list[str]) -> np.ndarray:
    m = m.astype(np.float64).copy()
    for step in steps:
        if step == "unit":
            norms = np.sqrt((m**2).sum(axis=1))
            norms[norms == 0] = 1
            m /= norms[:, None]
        elif step == "center":
            m -= m.mean(axis=0)
    return m


def _vecmap_supervised(x, z, src_indices, trg_indices):
    """map_embeddings.py --supervised: (xw, zw)."""
    x = _normalize(x, ["unit", "center", "unit"])
    z = _normalize(z, ["unit", "center", "unit"])

    def whitening_transformation(m):
        _u, s, vt = np.linalg.svd(m, full_matrices=False)
        return vt.T.dot(np.diag(1 / s)).dot(vt)

    wx1 = whitening_transformation(x[src_indices])
    wz1 = whitening_transformation(z[trg_indices])
    xw, zw = x.dot(wx1), z.dot(wz1)
    wx2, s, wz2_t = np.linalg.svd(xw[src_indices].T.dot(zw[trg_indices]))
    wz2 = wz2_t.T
    xw, zw = xw.dot(wx2), zw.dot(wz2)
    xw *= s**0.5
    zw *= s**0.5
    xw = xw.dot(wx2.T.dot(np.linalg.inv(wx1)).dot(wx2))  # --src_dewhiten src
    zw = zw.dot(wz2.T.dot(np.linalg.inv(wz1)).dot(wz2))  # --trg_dewhiten trg
    return xw, zw


def _eval_translation(x, z, src_words, trg_words, pairs, retrieval, k=10):
    """eval_translation.py: (coverage, accuracy) with --retrieval nn|csls, -k 10."""
    x = _normalize(x, ["unit"])
    z = _normalize(z, ["unit"])
    src_word2ind = {w: i for i, w in enumerate(src_words)}
    trg_word2ind = {w: i for i, w in enumerate(trg_words)}
    src2trg = collections.defaultdict(set)
    oov, vocab = set(), set()
    for src, trg in pairs:
        try:
            src2trg[src_word2ind[src]].add(trg_word2ind[trg])
            vocab.add(src)
        except KeyError:
            oov.add(src)
    src = list(src2trg)
    oov -= vocab
    coverage = len(src2trg) / (len(src2trg) + len(oov))
    sims = x[src].dot(z.T)
    if retrieval == "csls":
        knn_sim_bwd = np.sort(z.dot(x.T), axis=1)[:, -k:].mean(axis=1)
        sims = 2 * sims - knn_sim_bwd
    nn = sims.argmax(axis=1)
    accuracy = np.mean([nn[i] in src2trg[s] for i, s in enumerate(src)])
    return coverage, accuracy


# --------------------------------------------------------------------------- data


def _spaces(tmp_path: Path):
    """English and 'xx' of very unequal variance per dimension, xx a noisy linear image of
    en (not a rotation), so whitening and re-weighting change the cosine rankings."""
    rng = np.random.default_rng(3)
    scale = 1.0 / (1.0 + np.arange(DIM)) ** 1.5
    en = rng.normal(size=(N, DIM)) * scale
    a = rng.normal(size=(DIM, DIM)) + 2 * np.eye(DIM)
    xx = en @ a + 0.35 * rng.normal(size=(N, DIM)) * scale
    en_words = [f"e{i}" for i in range(N)]
    xx_words = [f"x{i}" for i in range(N)]
    write_npy(en_words, en.astype(np.float32), tmp_path / "en")
    write_npy(xx_words, xx.astype(np.float32), tmp_path / "xx")
    return en.astype(np.float32), xx.astype(np.float32), en_words, xx_words


def _map_all(tmp_path: Path, recipe: str) -> Path:
    out = tmp_path / recipe
    write_pairs([(f"e{i}", f"x{i}") for i in range(TRAIN)], tmp_path / "train.txt")
    for lang in ("en", "xx"):
        map_to_hub(
            language=lang,
            hub="en",
            space=tmp_path / f"{lang}.npy",
            hub_space=tmp_path / "en.npy",
            dictionary=tmp_path / "train.txt" if lang != "en" else None,
            recipe=recipe,
            options={},
            seed=1,
            out_stem=out / lang,
            stats_path=out / f"{lang}.json",
            pair_path=out / f"{lang}.pair.npz",
            progress=False,
        )
    return out


def _test_dictionaries(tmp_path: Path) -> dict[str, Path]:
    test = [(f"e{i}", f"x{i}") for i in range(TRAIN, N)]
    write_pairs(test, tmp_path / "test.txt")
    write_pairs([(t, s) for s, t in test], tmp_path / "test.rev.txt")
    return {"en-xx": tmp_path / "test.txt", "xx-en": tmp_path / "test.rev.txt"}


def _record(tmp_path: Path, mapped: Path, dictionaries: dict[str, Path]) -> dict:
    return bli_pair_record(
        space_name="m",
        seed=1,
        language="xx",
        hub="en",
        space=mapped / "xx.npy",
        hub_space=mapped / "en.npy",
        dictionaries=dictionaries,
        out_path=tmp_path / "bli.json",
        pair=mapped / "xx.pair.npz",
        alignment_stats=mapped / "xx.json",
    )


# --------------------------------------------------------------------------- tests


def test_bli_of_a_whitening_recipe_is_vecmaps(tmp_path: Path) -> None:
    en, xx, en_words, xx_words = _spaces(tmp_path)
    dics = _test_dictionaries(tmp_path)
    idx = np.arange(TRAIN)
    xw, zw = _vecmap_supervised(xx, en, idx, idx)
    expected = {
        ("en-xx", r): _eval_translation(zw, xw, en_words, xx_words, read_pairs(dics["en-xx"]), r)
        for r in ("nn", "csls")
    }
    expected |= {
        ("xx-en", r): _eval_translation(xw, zw, xx_words, en_words, read_pairs(dics["xx-en"]), r)
        for r in ("nn", "csls")
    }
    rec = _record(tmp_path, _map_all(tmp_path, "supervised"), dics)
    assert rec["scored_in"].startswith("the pair's mapped spaces")
    hub_route = rec["hub_space_bli"]["results"]
    differs = False
    for (direction, retrieval), (coverage, accuracy) in expected.items():
        got = rec["results"][direction][retrieval]
        assert got["p@1"] == pytest.approx(accuracy, abs=1e-12), (direction, retrieval)
        assert got["coverage"] == pytest.approx(coverage)
        differs |= hub_route[direction][retrieval]["p@1"] != pytest.approx(accuracy)
    # The spaces are such that the hub space (the old route) ranks otherwise.
    assert differs
    assert json.loads((tmp_path / "bli.json").read_text())["results"] == rec["results"]
    assert rec["alignment"]["recipe_used"] == "supervised" and rec["alignment"]["note"] is None


def test_orthogonal_recipe_scores_the_same_in_the_hub_and_the_pair(tmp_path: Path) -> None:
    _spaces(tmp_path)
    mapped = _map_all(tmp_path, "orthogonal")
    dics = _test_dictionaries(tmp_path)
    rec = _record(tmp_path, mapped, dics)
    # Procrustes leaves the hub as it is: the pair spaces are the hub space.
    assert "hub_space_bli" not in rec
    old_route = bli_record(
        space_name="m",
        seed=1,
        language="xx",
        hub="en",
        space=mapped / "xx.npy",
        hub_space=mapped / "en.npy",
        dictionaries=dics,
        out_path=tmp_path / "hub.json",
    )
    assert old_route["results"] == rec["results"]


def test_selection_and_induction_retrieve_in_the_pair_spaces(tmp_path: Path) -> None:
    en, xx, en_words, xx_words = _spaces(tmp_path)
    mapped = _map_all(tmp_path, "supervised")
    idx = np.arange(TRAIN)
    xw, zw = _vecmap_supervised(xx, en, idx, idx)
    # The pair file holds VecMap's xw, and the hub side is the hub file times T = zw (up
    # to the SVD's signs of the basis: compared by their dot products).
    words, vectors, transform = load_pair(mapped / "xx.pair.npz")
    _, hub_written = read_npy(mapped / "en")
    hub_side = hub_written.astype(np.float64) @ transform
    assert words == xx_words
    for got, want in ((vectors, xw), (hub_side, zw)):
        np.testing.assert_allclose(got @ got.T, want @ want.T, atol=1e-4)
    np.testing.assert_allclose(vectors @ hub_side.T, xw @ zw.T, atol=1e-4)

    valid = [(f"e{i}", f"x{i}") for i in range(TRAIN, TRAIN + 100)]
    write_pairs(valid, tmp_path / "valid.txt")
    write_pairs([(t, s) for s, t in valid], tmp_path / "valid.rev.txt")
    sel = select_space(
        language="xx",
        hub="en",
        mapped=mapped / "xx.npy",
        mapped_pair=mapped / "xx.pair.npz",
        unmapped=tmp_path / "xx.npy",
        hub_space=mapped / "en.npy",
        valid={"en-xx": tmp_path / "valid.txt", "xx-en": tmp_path / "valid.rev.txt"},
        mapped_stats=mapped / "xx.json",
        normalize=["unit", "center", "unit"],
        out_stem=tmp_path / "sel" / "xx",
        vec_path=tmp_path / "sel" / "xx.vec",
        stats_path=tmp_path / "sel" / "xx.json",
        pair_path=tmp_path / "sel" / "xx.pair.npz",
    )
    _, fwd = _eval_translation(zw, xw, en_words, xx_words, valid, "csls")
    _, bwd = _eval_translation(xw, zw, xx_words, en_words, [(t, s) for s, t in valid], "csls")
    assert sel["validation"]["mapped"]["mean"] == pytest.approx((fwd + bwd) / 2)
    assert sel["chosen"] == "mapped" and sel["mapping"]["recipe_used"] == "supervised"
    np.testing.assert_array_equal(load_pair(tmp_path / "sel" / "xx.pair.npz")[1], vectors)

    stats = induce(
        language="xx",
        hub="en",
        pair=mapped / "xx.pair.npz",
        hub_space=mapped / "en.npy",
        out_path=tmp_path / "induced.txt",
        stats_path=tmp_path / "induced.json",
        options={"retrieval": "csls", "csls_k": 10, "max_rank": 300, "mode": "mutual"},
        progress=False,
    )
    reference = induce_dictionary(
        en_words, zw.astype(np.float32), xx_words, xw.astype(np.float32), max_rank=300
    )
    assert read_pairs(tmp_path / "induced.txt") == [(p.src, p.tgt) for p in reference]
    assert stats["pairs"] == len(reference)


def test_cli_bli_with_a_pair_file_is_the_records_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from xlalign.cli import main

    _spaces(tmp_path)
    mapped = _map_all(tmp_path, "supervised")
    dics = _test_dictionaries(tmp_path)
    rec = _record(tmp_path, mapped, dics)
    for direction, side, files in (("xx-en", "src", ("xx", "en")), ("en-xx", "trg", ("en", "xx"))):
        capsys.readouterr()
        src, trg = (str(mapped / f"{f}.npy") for f in files)
        pair = ["--pair", str(mapped / "xx.pair.npz"), "--pair-side", side]
        assert main(["bli", src, trg, "-d", str(dics[direction]), *pair]) == 0
        out = json.loads(capsys.readouterr().out)
        for retrieval in ("nn", "csls"):
            assert out[retrieval]["p@1"] == rec["results"][direction][retrieval]["p@1"]
