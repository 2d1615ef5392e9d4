"""VecMap re-implementation: recovery of a known rotation by every recipe, the mapping
formulas against a direct numpy implementation, the hub transform, errors, determinism."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

from xlalign.core.errors import ConfigError, InputError
from xlalign.mapping.vecmap import (
    RECIPES,
    VecMapArgs,
    apply,
    map_embeddings,
    normalize,
    recipe_args,
    to_hub,
)

N, DIM = 2000, 32
# Self-learning only over the 1000 most frequent words keeps the tests fast (retrieval
# is still evaluated over all 2000 words) and exercises the frequency cut-off.
FAST = {"vocabulary_cutoff": 1000, "stochastic_interval": 5}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def make_spaces(n: int = N, d: int = DIM, noise: float = 0.02, shared: int = 40, seed: int = 0):
    """Clustered source with a decaying spectrum; target = rotated source + noise.

    Target rows are shuffled within windows of 8 (frequency order roughly agrees); the
    words differ on each side except ``shared`` pairs spelt alike, half of them numerals.
    Returns the spaces, the words and ``gold``: the target row of each source row's
    translation.
    """
    rng = np.random.default_rng(seed)
    spectrum = 1.0 / np.sqrt(1.0 + np.arange(d))
    centers = rng.standard_normal((max(10, n // 50), d)) * spectrum
    x = centers[rng.integers(0, len(centers), n)]
    x = x + 0.7 * rng.standard_normal((n, d)) * spectrum
    x *= (1 + 0.5 * rng.random(n))[:, None]
    rotation, _ = np.linalg.qr(rng.standard_normal((d, d)))
    y = x @ rotation + noise * rng.standard_normal((n, d))
    order = np.arange(n)
    for start in range(0, n, 8):
        order[start : start + 8] = rng.permutation(order[start : start + 8])
    z = y[order]  # target row r is the translation of source row order[r]
    gold = np.empty(n, dtype=int)
    gold[order] = np.arange(n)
    src = [f"s{i}" for i in range(n)]
    trg = [f"t{i}" for i in range(n)]
    for k, i in enumerate(rng.choice(n, shared, replace=False)):
        src[i] = trg[gold[i]] = str(i) if k < shared // 2 else f"w{i}"  # half numerals
    return x.astype(np.float32), z.astype(np.float32), src, trg, gold


@pytest.fixture(scope="module")
def spaces():
    return make_spaces()


def precision_at_1(mapping, x, z, gold, queries) -> float:
    """Cosine nearest-neighbour P@1 of ``queries`` (source rows) over all target words."""
    xw = apply(mapping, x, "source")
    zw = apply(mapping, z, "target")
    xw /= np.linalg.norm(xw, axis=1, keepdims=True)
    zw /= np.linalg.norm(zw, axis=1, keepdims=True)
    return float(((xw[queries] @ zw.T).argmax(axis=1) == gold[queries]).mean())


# recipe, seed dictionary size, overrides
MODES = {
    "supervised": (N // 4, {}),
    "semi-supervised": (25, FAST),
    "identical": (0, FAST),
    "unsupervised": (0, {**FAST, "unsupervised_vocab": 1000}),
    "aaai2018": (N // 4, {}),
    "orthogonal": (N // 4, {}),
    "acl2017-seed": (25, {"vocabulary_cutoff": 1000}),
    "acl2017": (0, {"vocabulary_cutoff": 1000}),
}


@pytest.mark.parametrize("recipe", list(MODES))
def test_every_recipe_recovers_a_rotation(spaces, recipe: str) -> None:
    x, z, src, trg, gold = spaces
    size, overrides = MODES[recipe]
    seed_rows = np.random.default_rng(1).permutation(N)[:size]
    dictionary = [(src[i], trg[gold[i]]) for i in seed_rows] or None
    m = map_embeddings(
        x,
        z,
        recipe_args(recipe, **overrides),
        src_words=src,
        trg_words=trg,
        dictionary=dictionary,
        progress=False,
    )
    held_out = np.setdiff1d(np.arange(N), seed_rows)
    assert precision_at_1(m, x, z, gold, held_out) >= 0.95
    seeds = {"identical": 40, "acl2017": 20}  # words spelt alike, numerals among them
    assert m.stats["pairs_in_vocabulary"] == seeds.get(recipe, size)
    assert m.src_transform.shape == m.trg_transform.shape == (DIM, DIM)
    if RECIPES[recipe].get("self_learning"):
        assert m.stats["iterations"] == len(m.stats["objective"]) > 1
        assert m.stats["keep_prob"][-1] == 1.0 and not m.stats["stopped_by_cap"]
        # the final dictionary is the union of both directions over the cut-off
        assert len(m.src_indices) == (1000 if recipe.startswith("acl2017") else 2000)
    else:
        assert m.stats["iterations"] == 0


def test_unsupervised_with_the_real_defaults(spaces) -> None:
    """acl2018 as published (interval 50, keep 0.1 x2, CSLS 10), vocabularies reduced."""
    x, z, src, trg, gold = spaces
    args = recipe_args("acl2018", vocabulary_cutoff=1000, unsupervised_vocab=1000)
    assert (args.stochastic_interval, args.stochastic_initial, args.csls_neighborhood) == (
        50,
        0.1,
        10,
    )
    m = map_embeddings(x, z, args, src_words=src, trg_words=trg, progress=False)
    assert precision_at_1(m, x, z, gold, np.arange(N)) >= 0.95
    keep = m.stats["keep_prob"]
    assert sorted(set(keep)) == [0.1, 0.2, 0.4, 0.8, 1.0] and keep == sorted(keep)
    assert m.stats["iterations"] >= 5 * 50  # each keep probability held >= 50 iterations
    assert keep == _vecmap_schedule(m.stats["objective"], args)
    assert m.stats["recipe"] == "acl2018" and m.stats["pairs_given"] == 0


def _vecmap_schedule(objectives: list[float], a: VecMapArgs) -> list[float]:
    """The keep probabilities VecMap's rule gives for these objectives; checks the end."""
    keep, best, last = a.stochastic_initial, -100.0, 0
    out = []
    for it, objective in enumerate(objectives, start=1):
        if it - last > a.stochastic_interval:
            assert keep < 1.0, f"the run should have ended before iteration {it}"
            keep, last = min(1.0, a.stochastic_multiplier * keep), it
        out.append(keep)
        if objective - best >= a.threshold:
            best, last = objective, it
    assert len(objectives) + 1 - last > a.stochastic_interval and keep >= 1.0
    return out


def test_normalize_matches_numpy_formulas() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((50, 6)) * 3 + 1
    x[7] = 0
    unit = lambda m: m / np.where((n := np.linalg.norm(m, axis=1)) == 0, 1, n)[:, None]  # noqa: E731
    center = lambda m: m - m.mean(axis=0)  # noqa: E731
    unitdim = lambda m: m / np.linalg.norm(m, axis=0)  # noqa: E731
    centeremb = lambda m: m - m.mean(axis=1, keepdims=True)  # noqa: E731
    np.testing.assert_allclose(normalize(x, ["unit"]), unit(x))
    assert not normalize(x, ["unit"])[7].any()  # a zero row stays zero, as in VecMap
    np.testing.assert_allclose(
        normalize(x, ["unit", "center", "unit"]), unit(center(unit(x))), atol=1e-12
    )
    np.testing.assert_allclose(normalize(x, ["unitdim", "centeremb"]), centeremb(unitdim(x)))
    np.testing.assert_allclose(normalize(x, ["none"]), x)
    np.testing.assert_allclose(normalize(x, []), x)
    t = normalize(torch.tensor(x), ["center"])
    assert isinstance(t, torch.Tensor)
    np.testing.assert_allclose(t.numpy(), center(x), atol=1e-12)
    with pytest.raises(ConfigError, match="'length'"):
        normalize(x, ["unit", "length"])


def _numpy_vecmap(x, z, si, ti, a: VecMapArgs):
    """VecMap's advanced mapping written directly with numpy (float64) as a reference."""

    def unit(m):
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    for step in a.normalize:
        x, z = (unit(x), unit(z)) if step == "unit" else (x - x.mean(0), z - z.mean(0))

    def whiten(m):
        _, s, vt = np.linalg.svd(m, full_matrices=False)
        return vt.T @ np.diag(1 / s) @ vt

    wx1, wz1 = whiten(x[si]), whiten(z[ti])
    xw, zw = x @ wx1, z @ wz1
    wx2, s, wz2t = np.linalg.svd(xw[si].T @ zw[ti])
    wz2 = wz2t.T
    xw, zw = xw @ wx2 * s**a.src_reweight, zw @ wz2 * s**a.trg_reweight
    dewhite = {
        "src": wx2.T @ np.linalg.inv(wx1) @ wx2,
        "trg": wz2.T @ np.linalg.inv(wz1) @ wz2,
    }
    xw, zw = xw @ dewhite[a.src_dewhiten], zw @ dewhite[a.trg_dewhiten]
    if a.dim_reduction:
        xw, zw = xw[:, : a.dim_reduction], zw[:, : a.dim_reduction]
    return xw, zw


@pytest.mark.parametrize(
    "options",
    [
        {},  # the supervised recipe
        {"normalize": ["unit", "center"], "src_reweight": 0, "trg_reweight": 1},  # aaai2018
        {"src_dewhiten": "trg", "trg_dewhiten": "src", "src_reweight": 0.3, "dim_reduction": 5},
    ],
)
def test_advanced_mapping_matches_numpy(options: dict) -> None:
    rng = np.random.default_rng(3)
    n, d = 300, 8
    x = rng.standard_normal((n, d)) * np.linspace(2, 0.5, d)
    z = rng.standard_normal((n, d)) + 0.5 * x @ rng.standard_normal((d, d))
    si = rng.integers(0, n, 150)
    ti = np.concatenate([si[:100], rng.integers(0, n, 50)])  # 100 true pairs, 50 noisy
    src, trg = [f"s{i}" for i in range(n)], [f"t{i}" for i in range(n)]
    args = recipe_args("supervised", dtype="float64", **options)
    m = map_embeddings(
        x,
        z,
        args,
        src_words=src,
        trg_words=trg,
        dictionary=[(src[i], trg[j]) for i, j in zip(si, ti, strict=True)],
        progress=False,
    )
    np.testing.assert_array_equal(m.src_indices, si)
    xw = apply(m, x, "source", dtype="float64")
    zw = apply(m, z, "target", dtype="float64")
    ref_x, ref_z = _numpy_vecmap(x, z, si, ti, args)
    assert xw.shape == ref_x.shape == (n, args.dim_reduction or d)
    # Singular vectors are defined up to sign; x's and z's columns share the sign.
    sign = np.sign((xw * ref_x).sum(axis=0))
    np.testing.assert_allclose(xw * sign, ref_x, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(zw * sign, ref_z, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("direction", ["union", "forward", "backward"])
@pytest.mark.parametrize("csls", [0, 10])
def test_one_induction_step_matches_numpy(direction: str, csls: int) -> None:
    """Procrustes on the seed, then CSLS retrieval over the cut-off, as VecMap writes it."""
    rng = np.random.default_rng(7)
    n, d, cutoff = 300, 8, 250
    x = rng.standard_normal((n, d)) * np.linspace(2, 0.5, d)
    z = x @ np.linalg.qr(rng.standard_normal((d, d)))[0] + 0.8 * rng.standard_normal((n, d))
    words = [f"w{i}" for i in range(n)]
    args = VecMapArgs(
        normalize=("unit", "center", "unit"),
        self_learning=True,
        vocabulary_cutoff=cutoff,
        csls_neighborhood=csls,
        direction=direction,
        stochastic_initial=1.0,  # no dropout: the step is deterministic
        max_iterations=1,
        dtype="float64",
        batch_size=64,
    )
    m = map_embeddings(
        x,
        z,
        args,
        src_words=words,
        trg_words=words,
        dictionary=[(w, w) for w in words[:40]],
        progress=False,
    )
    xn, zn = normalize(x, args.normalize), normalize(z, args.normalize)
    u, _, vt = np.linalg.svd(zn[:40].T @ xn[:40])
    xw, zw = (xn @ vt.T @ u.T)[:cutoff], zn[:cutoff]
    sim = xw @ zw.T

    def topk_mean(m):
        return np.sort(m, axis=1)[:, -csls:].mean(axis=1) if csls else np.zeros(len(m))

    fwd = (sim - topk_mean(sim.T) / 2).argmax(axis=1)
    bwd = (sim.T - topk_mean(sim) / 2).argmax(axis=1)
    ar = np.arange(cutoff)
    expected = {
        "forward": (ar, fwd, sim.max(axis=1).mean()),
        "backward": (bwd, ar, sim.max(axis=0).mean()),
        "union": (
            np.concatenate([ar, bwd]),
            np.concatenate([fwd, ar]),
            (sim.max(axis=1).mean() + sim.max(axis=0).mean()) / 2,
        ),
    }[direction]
    assert 0.3 < (fwd == ar).mean() < 0.95  # a noisy space: the retrieval method matters
    np.testing.assert_array_equal(m.src_indices, expected[0])
    np.testing.assert_array_equal(m.trg_indices, expected[1])
    assert m.stats["objective"] == [pytest.approx(expected[2], abs=1e-12)]
    assert m.stats["stopped_by_cap"] and m.stats["keep_prob"] == [1.0]


def test_orthogonal_and_unconstrained_mappings_match_numpy() -> None:
    rng = np.random.default_rng(4)
    x, z = rng.standard_normal((100, 6)), rng.standard_normal((100, 6))
    words = [f"w{i}" for i in range(100)]
    pairs = [(w, w) for w in words[:60]]
    m = map_embeddings(
        x,
        z,
        VecMapArgs(orthogonal=True, dtype="float64"),
        src_words=words,
        trg_words=words,
        dictionary=pairs,
        progress=False,
    )
    u, _, vt = np.linalg.svd(z[:60].T @ x[:60])
    np.testing.assert_allclose(m.src_transform, vt.T @ u.T, atol=1e-10)
    np.testing.assert_allclose(m.trg_transform, np.eye(6))
    m = map_embeddings(
        x,
        z,
        VecMapArgs(unconstrained=True, dtype="float64"),
        src_words=words,
        trg_words=words,
        dictionary=pairs,
        progress=False,
    )
    np.testing.assert_allclose(m.src_transform, np.linalg.lstsq(x[:60], z[:60])[0], atol=1e-10)


def test_to_hub_preserves_vecmaps_cross_lingual_dot_products() -> None:
    rng = np.random.default_rng(6)
    n, d = 400, 8
    x = (rng.standard_normal((n, d)) * np.linspace(2, 0.5, d)).astype(np.float32)
    z = (rng.standard_normal((n, d)) + 0.7 * x @ rng.standard_normal((d, d))).astype(np.float32)
    words = [f"w{i}" for i in range(n)]
    m = map_embeddings(
        x,
        z,
        recipe_args("supervised"),
        src_words=words,
        trg_words=words,
        dictionary=[(w, w) for w in words[:200]],
        progress=False,
    )
    t = m.trg_transform
    assert not np.allclose(t @ t.T, np.eye(d), atol=0.1)  # the target space does move
    hub = to_hub(m, x)
    vecmap_dots = apply(m, x, "source") @ apply(m, z, "target").T
    hub_dots = hub @ normalize(z, m.normalize).T
    np.testing.assert_allclose(hub_dots, vecmap_dots, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(hub_dots.argmax(axis=1), vecmap_dots.argmax(axis=1))
    with pytest.raises(ConfigError, match="'middle'"):
        apply(m, x, "middle")
    with pytest.raises(InputError, match="dimension 8"):
        to_hub(m, x[:, :4])


def test_batch_size_does_not_change_the_result(spaces) -> None:
    x, z, src, trg, gold = spaces
    dictionary = [(src[i], trg[gold[i]]) for i in range(0, 500, 20)]
    runs = [
        map_embeddings(
            x,
            z,
            recipe_args("semi-supervised", batch_size=bs, max_iterations=12, **FAST),
            src_words=src,
            trg_words=trg,
            dictionary=dictionary,
            progress=False,
        )
        for bs in (10000, 137)
    ]
    a, b = runs
    np.testing.assert_array_equal(a.src_indices, b.src_indices)
    np.testing.assert_array_equal(a.trg_indices, b.trg_indices)
    np.testing.assert_allclose(a.src_transform, b.src_transform, atol=1e-6)
    assert a.stats["objective"] == pytest.approx(b.stats["objective"], abs=1e-6)


def test_deterministic_for_a_seed_and_the_seed_matters(spaces) -> None:
    x, z, src, trg, _ = spaces
    runs = [
        map_embeddings(
            x,
            z,
            recipe_args(
                "unsupervised", seed=seed, max_iterations=8, unsupervised_vocab=500, **FAST
            ),
            src_words=src,
            trg_words=trg,
            progress=False,
        )
        for seed in (7, 7, 8)
    ]
    a, b, c = runs
    np.testing.assert_array_equal(a.src_transform, b.src_transform)
    np.testing.assert_array_equal(a.trg_transform, b.trg_transform)
    np.testing.assert_array_equal(a.trg_indices, b.trg_indices)
    assert a.stats["objective"] == b.stats["objective"]
    assert a.stats["objective"] != c.stats["objective"]  # dropout masks come from the seed


def test_max_iterations_caps_self_learning(spaces, caplog) -> None:
    x, z, src, trg, _ = spaces
    with caplog.at_level(logging.WARNING, logger="xlalign.mapping.vecmap"):
        m = map_embeddings(
            x,
            z,
            recipe_args("identical", max_iterations=3, **FAST),
            src_words=src,
            trg_words=trg,
            progress=False,
        )
    assert m.stats["iterations"] == 3 and m.stats["stopped_by_cap"]
    assert "max_iterations=3" in caplog.text


def test_out_of_vocabulary_pairs_are_dropped_and_counted(spaces, caplog) -> None:
    x, z, src, trg, gold = spaces
    pairs = [(src[i], trg[gold[i]]) for i in range(400)] + [("nope", trg[0]), (src[0], "nada")]
    with caplog.at_level(logging.WARNING, logger="xlalign.mapping.vecmap"):
        m = map_embeddings(
            x,
            z,
            recipe_args("orthogonal"),
            src_words=src,
            trg_words=trg,
            dictionary={**{s: [t] for s, t in pairs[:10]}, "nope": ["x"]},
            progress=False,
        )
    assert m.stats["pairs_given"] == 11 and m.stats["pairs_in_vocabulary"] == 10
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "1 of 11" in warnings[0].getMessage()
    m = map_embeddings(
        x,
        z,
        recipe_args("supervised"),
        src_words=src,
        trg_words=trg,
        dictionary=pairs,
        progress=False,
    )
    assert (m.stats["pairs_given"], m.stats["pairs_in_vocabulary"]) == (402, 400)


def _map(x, z, args=None, **kw):
    n = len(x)
    kw.setdefault("src_words", [f"s{i}" for i in range(n)])
    kw.setdefault("trg_words", [f"t{i}" for i in range(len(z))])
    return map_embeddings(x, z, args or recipe_args("orthogonal"), progress=False, **kw)


def test_input_errors_name_the_side_and_the_word() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((40, 8)).astype(np.float32)
    z = rng.standard_normal((40, 8)).astype(np.float32)
    pairs = [(f"s{i}", f"t{i}") for i in range(20)]
    with pytest.raises(InputError, match="different dimension: source 8, target 6"):
        _map(x, z[:, :6], dictionary=pairs)
    bad = x.copy()
    bad[11, 3] = np.nan
    with pytest.raises(InputError, match=r"source: non-finite.*'s11'"):
        _map(bad, z, dictionary=pairs)
    bad = z.copy()
    bad[5] = 0
    with pytest.raises(InputError, match=r"target: zero vector.*'t5'"):
        _map(x, bad, dictionary=pairs)
    bad = x.copy()
    bad[9] = 2.0  # a constant row: centering each embedding leaves zero
    with pytest.raises(InputError, match=r"source: the normalisation.*zero vector.*'s9'"):
        _map(bad, z, VecMapArgs(normalize=("centeremb",), orthogonal=True), dictionary=pairs)
    with pytest.raises(InputError, match="none of the 2 seed dictionary pair"):
        _map(x, z, dictionary=[("a", "t1"), ("s1", "b")])
    with pytest.raises(ConfigError, match="needs a dictionary"):
        _map(x, z)
    with pytest.raises(InputError, match="seed dictionary is empty"):
        _map(x, z, dictionary=[])
    with pytest.raises(InputError, match=r"entry 2: expected a \(source, target\) pair"):
        _map(x, z, dictionary=[("s1", "t1"), ("s2", "t2", "t3")])
    with pytest.raises(InputError, match="share no identical words"):
        _map(x, z, recipe_args("identical"))
    with pytest.raises(InputError, match="share no numerals"):
        _map(x, z, recipe_args("acl2017"))
    # 20 pairs in 8 dims are plenty; 5 cannot whiten 8 dimensions
    _map(x, z, recipe_args("supervised"), dictionary=pairs)
    with pytest.raises(InputError, match=r"whitening needs at least d=8 .* got 5 pairs"):
        _map(x, z, recipe_args("supervised"), dictionary=pairs[:5])
    with pytest.raises(InputError, match=r"got 16 pairs .*rank 4"):
        _map(x, z, recipe_args("supervised"), dictionary=pairs[:4] * 4)
    with pytest.raises(ConfigError, match="dim_reduction: 9 exceeds the dimension 8"):
        _map(x, z, recipe_args("supervised", dim_reduction=9), dictionary=pairs)


def test_config_errors_name_the_option() -> None:
    with pytest.raises(ConfigError, match=r"'semi' is unknown.*'semi-supervised'"):
        recipe_args("semi")
    with pytest.raises(ConfigError, match=r"unknown option\(s\) \['csls'\].*'csls_neighborhood'"):
        recipe_args("unsupervised", csls=10)
    with pytest.raises(ConfigError, match=r"vecmap.direction: 'sideways'.*'union'"):
        VecMapArgs(direction="sideways")
    with pytest.raises(ConfigError, match=r"vecmap.init: 'random'"):
        VecMapArgs(init="random")
    with pytest.raises(ConfigError, match="need whiten=True"):
        VecMapArgs(src_dewhiten="src")
    with pytest.raises(ConfigError, match="exclude each other"):
        VecMapArgs(orthogonal=True, unconstrained=True)
    with pytest.raises(ConfigError, match=r"\['whiten'\] only apply to the advanced"):
        recipe_args(
            "supervised",
            orthogonal=True,
            src_dewhiten=None,
            trg_dewhiten=None,
            src_reweight=0,
            trg_reweight=0,
        )
    with pytest.raises(ConfigError, match=r"vecmap\.batch_size: expected a value >= 1"):
        VecMapArgs(batch_size=0)
    with pytest.raises(ConfigError, match="stochastic_initial"):
        VecMapArgs(stochastic_initial=1.5)
    with pytest.raises(ConfigError, match="'unit2'"):
        VecMapArgs(normalize=["unit2"])


def test_recipes_are_the_public_presets() -> None:
    for name in RECIPES:
        assert recipe_args(name).recipe == name
    assert recipe_args("semi_supervised") == recipe_args("semi-supervised")
    assert RECIPES["acl2018"] == RECIPES["unsupervised"]
    sup = recipe_args("supervised")
    assert sup.normalize == ("unit", "center", "unit") and sup.whiten
    assert (sup.src_reweight, sup.trg_reweight, sup.src_dewhiten, sup.trg_dewhiten) == (
        0.5,
        0.5,
        "src",
        "trg",
    )
    assert not sup.self_learning
    semi = recipe_args("semi-supervised")
    assert (semi.vocabulary_cutoff, semi.csls_neighborhood, semi.self_learning) == (20000, 10, True)
    assert recipe_args("unsupervised").unsupervised_vocab == 4000
    orth = recipe_args("orthogonal")
    assert orth.orthogonal and orth.normalize == ("unit", "center") and not orth.self_learning
    acl17 = recipe_args("acl2017")
    assert (acl17.init, acl17.direction, acl17.stochastic_initial) == ("numerals", "forward", 1)
    assert VecMapArgs().stochastic_interval == 50 and VecMapArgs().threshold == 1e-6
    assert recipe_args("unsupervised", vocabulary_cutoff=5).vocabulary_cutoff == 5
