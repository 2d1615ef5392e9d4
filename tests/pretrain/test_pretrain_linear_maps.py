"""Per-layer linear maps (002 eq. 1-2): identity start, mapping, loss, the orthogonality
update, and the files the feature-based evaluation reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from xlalign.core.errors import InputError
from xlalign.pretrain.linear_maps import LINEAR_MAPS_FILE, LINEAR_MAPS_META, LinearMaps


def orthogonality_error(w: torch.Tensor) -> float:
    return float(torch.linalg.matrix_norm(w @ w.T - torch.eye(w.shape[0], dtype=w.dtype)))


def test_maps_start_at_the_identity() -> None:
    maps = LinearMaps(["de", "fr"], [4, 12], 3)
    x = torch.randn(5, 3, generator=torch.Generator().manual_seed(0))
    for lang in ("de", "fr"):
        for layer in (4, 12):
            assert torch.equal(maps.weight(lang, layer).detach(), torch.eye(3))
            assert torch.equal(maps.map(x, lang, layer), x)
    assert len(list(maps.parameters())) == 4


def test_map_is_features_times_w_and_loss_is_the_mean_row_distance() -> None:
    maps = LinearMaps(["de"], [0], 2)
    with torch.no_grad():
        maps.weight("de", 0).copy_(torch.tensor([[0.0, 1.0], [2.0, 0.0]]))
    t = torch.tensor([[1.0, 2.0], [3.0, 0.0]])
    # t W = [[4, 1], [0, 3]]
    assert torch.equal(maps.map(t, "de", 0), torch.tensor([[4.0, 1.0], [0.0, 3.0]]))
    s = torch.tensor([[4.0, 0.0], [1.0, 1.0]])
    # squared row distances 1 and 1 + 4 -> mean 3
    assert maps.loss(s, t, "de", 0).item() == pytest.approx(3.0)
    # a leading batch/sequence shape is kept
    assert maps.map(torch.zeros(2, 7, 2), "de", 0).shape == (2, 7, 2)


def test_hub_and_unknown_languages_and_layers() -> None:
    maps = LinearMaps(["de"], [3], 2, hub="en")
    x = torch.ones(1, 2)
    with pytest.raises(KeyError, match=r"'en' is the hub.*identity_languages"):
        maps.map(x, "en", 3)
    assert maps.map(x, "en", 3, identity_languages={"en"}) is x
    with pytest.raises(KeyError, match=r"no linear map for language 'xx'.*\['de'\]"):
        maps.map(x, "xx", 3)
    with pytest.raises(KeyError, match=r"layer 5.*\[3\]"):
        maps.map(x, "de", 5)
    with pytest.raises(ValueError, match="features of size 3"):
        maps.map(torch.ones(1, 3), "de", 3)
    with pytest.raises(ValueError, match="hub language 'en'"):
        LinearMaps(["en", "de"], [3], 2)


def test_orthogonalize_keeps_an_orthogonal_map() -> None:
    maps = LinearMaps(["de"], [1], 6)
    q, _ = torch.linalg.qr(torch.randn(6, 6, generator=torch.Generator().manual_seed(1)))
    with torch.no_grad():
        maps.weight("de", 1).copy_(q)
    maps.orthogonalize_(0.01)
    assert torch.allclose(maps.weight("de", 1).detach(), q, atol=1e-6)


def test_orthogonalize_hand_computed_and_converges() -> None:
    maps = LinearMaps(["de"], [1], 2)
    with torch.no_grad():
        maps.weight("de", 1).copy_(torch.diag(torch.tensor([1.1, 0.9])))
    maps.orthogonalize_(0.1)
    # s <- 1.1 s - 0.1 s^3: 1.21 - 0.1331 = 1.0769 and 0.99 - 0.0729 = 0.9171
    assert torch.allclose(
        maps.weight("de", 1).detach(), torch.diag(torch.tensor([1.0769, 0.9171])), atol=1e-6
    )

    gen = torch.Generator().manual_seed(2)
    q, _ = torch.linalg.qr(torch.randn(5, 5, generator=gen))
    near = q + 0.05 * torch.randn(5, 5, generator=gen)
    maps = LinearMaps(["de"], [1], 5)
    with torch.no_grad():
        maps.weight("de", 1).copy_(near)
    before = orthogonality_error(near)
    maps.orthogonalize_(0.01)
    after_one = orthogonality_error(maps.weight("de", 1).detach())
    assert after_one < before
    for _ in range(500):
        maps.orthogonalize_(0.01)
    assert orthogonality_error(maps.weight("de", 1).detach()) < 1e-3 * before


def test_training_with_the_update_recovers_a_rotation() -> None:
    """002's procedure on a toy problem: T = S R^T, so the best orthogonal W is R."""
    gen = torch.Generator().manual_seed(3)
    rot, _ = torch.linalg.qr(torch.randn(4, 4, generator=gen))
    s = torch.randn(256, 4, generator=gen)
    t = s @ rot.T
    maps = LinearMaps(["de"], [0], 4)
    opt = torch.optim.SGD(maps.parameters(), lr=0.1)
    first = maps.loss(s, t, "de", 0).item()
    for _ in range(300):
        opt.zero_grad()
        maps.loss(s, t, "de", 0).backward()
        opt.step()
        maps.orthogonalize_(0.01)
    assert maps.loss(s, t, "de", 0).item() < 1e-4 * first
    assert torch.allclose(maps.weight("de", 0).detach(), rot, atol=1e-3)


def test_save_load_round_trip(tmp_path: Path) -> None:
    maps = LinearMaps(["de", "zh"], [0, 8], 3, hub="en")
    gen = torch.Generator().manual_seed(4)
    with torch.no_grad():
        for w in maps.parameters():
            w.copy_(torch.randn(3, 3, generator=gen))
    out = tmp_path / "ckpt"
    maps.save(out)
    assert sorted(p.name for p in out.iterdir()) == [LINEAR_MAPS_META, LINEAR_MAPS_FILE]
    assert json.loads((out / LINEAR_MAPS_META).read_text()) == {
        "languages": ["de", "zh"],
        "layers": [0, 8],
        "dim": 3,
        "hub": "en",
        "format": 1,
    }
    tensors = load_file(str(out / LINEAR_MAPS_FILE))
    assert sorted(tensors) == ["de.0", "de.8", "zh.0", "zh.8"]
    assert all(t.dtype == torch.float32 and t.shape == (3, 3) for t in tensors.values())

    back = LinearMaps.load(out)
    assert (back.languages, back.layers, back.dim, back.hub) == (["de", "zh"], [0, 8], 3, "en")
    for lang in ("de", "zh"):
        for layer in (0, 8):
            assert torch.equal(back.weight(lang, layer), maps.weight(lang, layer))


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=LINEAR_MAPS_META.replace(".", r"\.") + ": missing"):
        LinearMaps.load(tmp_path / "nothing")

    good = tmp_path / "good"
    LinearMaps(["de"], [1], 2).save(good)
    meta = json.loads((good / LINEAR_MAPS_META).read_text())

    def broken(name: str, *, meta_text: str | None = None, tensors: dict | None = None) -> Path:
        d = tmp_path / name
        d.mkdir()
        (d / LINEAR_MAPS_META).write_text(json.dumps(meta) if meta_text is None else meta_text)
        if tensors is None:
            (d / LINEAR_MAPS_FILE).write_bytes((good / LINEAR_MAPS_FILE).read_bytes())
        else:
            save_file(tensors, str(d / LINEAR_MAPS_FILE))
        return d

    cases = [
        (broken("json", meta_text="{"), r"linear_maps\.json: invalid JSON"),
        (broken("format", meta_text=json.dumps({**meta, "format": 2})), "format 2"),
        (broken("keys", meta_text=json.dumps({"dim": 2})), "missing key"),
        (broken("langs", meta_text=json.dumps({**meta, "languages": "de"})), "'languages'"),
        (broken("missing", tensors={"fr.1": torch.eye(2)}), r"missing \['de\.1'\]"),
        (broken("shape", tensors={"de.1": torch.eye(3)}), r"'de\.1'.*expected float \[2, 2\]"),
    ]
    for directory, message in cases:
        with pytest.raises(InputError, match=message):
            LinearMaps.load(directory)
    d = broken("garbage")
    (d / LINEAR_MAPS_FILE).write_bytes(b"not safetensors")
    with pytest.raises(InputError, match=r"linear_maps\.safetensors: not a readable"):
        LinearMaps.load(d)
