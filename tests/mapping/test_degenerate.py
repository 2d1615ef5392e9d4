"""Degenerate training dictionaries: found before mapping, handled as configured, recorded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from xlalign.core.errors import ConfigError, InputError
from xlalign.dictionaries.split import write_pairs
from xlalign.mapping import vecmap
from xlalign.mapping.hub import degenerate_action, map_to_hub
from xlalign.mapping.pairs import alignment_summary, load_pair
from xlalign.reporting.tables import bli_per_language
from xlalign.static.vectors import write_npy

N, DIM = 300, 16


def _spaces(tmp_path: Path) -> tuple[Path, Path, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    en = rng.normal(size=(N, DIM)).astype(np.float32)
    q, _ = np.linalg.qr(rng.normal(size=(DIM, DIM)))
    xx = (en @ q + 0.05 * rng.normal(size=en.shape)).astype(np.float32)
    write_npy([f"e{i}" for i in range(N)], en, tmp_path / "en")
    write_npy([f"x{i}" for i in range(N)], xx, tmp_path / "xx")
    return tmp_path / "en.npy", tmp_path / "xx.npy", en, xx


def _words(prefix: str) -> list[str]:
    return [f"{prefix}{i}" for i in range(N)]


def test_the_check_is_vecmaps_own_rank_test(tmp_path: Path) -> None:
    _, _, en, xx = _spaces(tmp_path)
    sup = vecmap.recipe_args("supervised")
    words = {"src_words": _words("x"), "trg_words": _words("e")}

    def check(args, pairs):
        return vecmap.degenerate_dictionary(xx, en, args, dictionary=pairs, **words)

    tiny = [(f"x{i}", f"e{i}") for i in range(DIM - 4)]
    deg = check(sup, tiny)
    assert deg is not None and deg["rank"] == DIM - 4 and deg["dimension"] == DIM
    assert "whitening needs at least d=16" in deg["reason"]
    with pytest.raises(vecmap.DegenerateDictionaryError):  # what the check foresaw
        vecmap.map_embeddings(xx, en, sup, dictionary=tiny, progress=False, **words)
    # Many pairs, few independent ones: 60 pairs over 5 distinct source words.
    repeated = [(f"x{i % 5}", f"e{i}") for i in range(60)]
    assert check(sup, repeated)["side"] == "source"
    enough = [(f"x{i}", f"e{i}") for i in range(3 * DIM)]
    assert check(sup, enough) is None
    vecmap.map_embeddings(xx, en, sup, dictionary=enough, progress=False, **words)
    # Procrustes needs no full rank; unconstrained least squares needs the source side.
    assert check(vecmap.recipe_args("orthogonal"), tiny) is None
    assert check(vecmap.recipe_args("orthogonal", orthogonal=False, unconstrained=True), tiny)
    # Self-learning: its final dictionary holds the vocabulary_cutoff words of each side.
    semi = vecmap.recipe_args("semi-supervised")
    assert check(semi, tiny) is None
    assert check(vecmap.recipe_args("semi-supervised", vocabulary_cutoff=DIM - 6), tiny)
    uns = vecmap.recipe_args("unsupervised", vocabulary_cutoff=DIM - 6)
    assert "vocabulary_cutoff" in check(uns, None)["reason"]


def _map(tmp_path: Path, pairs: list, degenerate: dict | None, **kw) -> dict:
    en, xx, _, _ = _spaces(tmp_path)
    write_pairs(pairs, tmp_path / "train.txt")
    out = tmp_path / "out"
    return map_to_hub(
        language="xx",
        hub="en",
        space=xx,
        hub_space=en,
        dictionary=kw.pop("dictionary", tmp_path / "train.txt"),
        recipe=kw.pop("recipe", "supervised"),
        options=kw.pop("options", {}),
        seed=1,
        out_stem=out / "xx",
        stats_path=out / "xx.json",
        pair_path=out / "xx.pair.npz",
        degenerate=degenerate,
        progress=False,
        **kw,
    )


TINY = [(f"e{i}", f"x{i}") for i in range(10)]  # hub words first; 10 pairs < 16 dims


def test_a_tiny_dictionary_is_an_error_naming_file_language_and_key(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"train\.txt: en-xx.*rank 10.*degenerate_dictionary"):
        _map(tmp_path, TINY, {"action": "error"})
    assert not (tmp_path / "out" / "xx.json").exists()


def test_a_tiny_dictionary_falls_back_to_the_named_recipe(tmp_path: Path) -> None:
    stats = _map(tmp_path, TINY, {"action": "fallback", "fallback_recipe": "orthogonal"})
    assert stats["mapped"] is True and stats["recipe"] == "supervised"
    assert stats["recipe_used"] == "orthogonal"
    assert stats["vecmap"]["args"]["orthogonal"] is True
    assert stats["vecmap"]["args"]["whiten"] is False
    deg = stats["degenerate"]
    assert deg["action"] == "fallback" and deg["fallback_recipe"] == "orthogonal"
    assert deg["rank"] == 10 and deg["dimension"] == DIM and deg["side"] == "source"
    on_disk = json.loads((tmp_path / "out" / "xx.json").read_text())
    assert on_disk["recipe_used"] == "orthogonal" and on_disk["degenerate"]["rank"] == 10
    _, _, transform = load_pair(tmp_path / "out" / "xx.pair.npz")
    np.testing.assert_array_equal(transform, np.eye(DIM))  # Procrustes: hub unchanged
    note = alignment_summary(on_disk)["note"]
    assert note.startswith("mapped with orthogonal instead of supervised: degenerate")


def test_per_language_keep_unmapped_and_the_tables_footnote(tmp_path: Path) -> None:
    policy = {"action": "fallback", "languages": {"xx": "keep-unmapped"}}
    assert degenerate_action(policy, "xx") == ("keep-unmapped", "orthogonal")
    assert degenerate_action(policy, "de") == ("fallback", "orthogonal")
    stats = _map(tmp_path, TINY, policy)
    assert stats["mapped"] is False and stats["role"] == "unmapped"
    assert stats["recipe_used"] is None and "rank 10" in stats["reason"]
    assert stats["degenerate"]["action"] == "keep-unmapped"
    summary = alignment_summary(stats)
    rec = {
        "space": "x2s-ma",
        "seed": 1,
        "language": "xx",
        "hub": "en",
        "results": {"en-xx": {"csls": {"p@1": 0.5}}},
        "alignment": summary,
    }
    table = bli_per_language([rec], spaces=["x2s-ma"])
    (note,) = [n for n in table.footnotes if n.startswith("Alignment")]
    assert "unmapped (degenerate training dictionary (source side of rank 10 < 16" in note
    assert note.endswith("): xx.")


def test_without_a_dictionary_a_dictionary_fallback_keeps_the_language_unmapped(
    tmp_path: Path,
) -> None:
    stats = _map(
        tmp_path,
        [],
        {"action": "fallback"},
        dictionary=None,
        recipe="unsupervised",
        options={"vocabulary_cutoff": 8, "unsupervised_vocab": 100},
    )
    assert stats["mapped"] is False and "needs a dictionary" in stats["reason"]
    assert stats["degenerate"]["action"] == "keep-unmapped"


def test_bad_policies_are_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"align\.degenerate_dictionary.*'supervised'"):
        degenerate_action({"action": "fallback", "fallback_recipe": "supervised"}, "de")
    with pytest.raises(ConfigError, match=r"\(de\): 'ignore'"):
        degenerate_action({"languages": {"de": "ignore"}}, "de")
